"""Root-cause groups (issue 23) through the real binary on the loopback device over the real torch-spyre manifests:
with two faults injected (a biased aten::mul.Tensor, a throwing aten::rsqrt) the console leads with exactly two
groups and their counts, the metrics carry them, merged shards regroup to the same two, and `diff` against a run
with one fault says the other group is gone. The cases are those of mul, rsqrt and scaled_dot_product_attention
(whose math decomposition runs aten::mul.Tensor on the device and still passes: softmax does not see a shift), a
few seconds' worth of the fixture."""
import json
import re

import pytest

from conftest import SPYRE, opcheck

# The counts are the real corpus's (a corpus test); the grouping itself is also covered without it by
# test/report/failure_groups_test.cpp.
pytestmark = pytest.mark.corpus

SELECTION = ["--manifests", SPYRE, "--device", "loopback", "-k",
             "torch.mul or torch.rsqrt or scaled_dot_product_attention", "-r", "N"]
BOTH = {"OPCHECK_LOOPBACK_FAULTS": "aten::mul.Tensor=bias:1e-1;aten::rsqrt=throw"}
MUL_ONLY = {"OPCHECK_LOOPBACK_FAULTS": "aten::mul.Tensor=bias:1e-1"}
MUL_SIGNATURE = "INCORRECT_RESULT | aten::mul.Tensor | output: Tensor-likes are not close!"
RSQRT_SIGNATURE = ("FAILED_RUNTIME | aten::rsqrt | the device raised RuntimeError: loopback: injected device failure "
                   "in aten::rsqrt")


def run(tmp_path, name, env, *extra):
    tb = [] if "--tb" in extra else ["--tb", "no"]
    r = opcheck("run", *SELECTION, *tb, "--metrics-json", tmp_path / f"{name}.json", "--artifact-dir", tmp_path / name,
                *extra, env=env)
    assert r.rc == 1, r
    return r, json.loads((tmp_path / f"{name}.json").read_text())


@pytest.fixture(scope="module")
def both(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("both")
    return (tmp, *run(tmp, "both", BOTH))


def failing_ids(metrics, op):
    return [c["id"] for c in metrics["cases"] if c["op"] == op and c["outcome"] in ("failed", "error")]


def test_two_faults_are_two_groups_with_their_counts(both):
    tmp, r, m = both
    mul, rsqrt = failing_ids(m, "torch.mul"), failing_ids(m, "torch.rsqrt")
    assert len(mul) == 40 and len(rsqrt) == 4, (mul, rsqrt)
    # Everything that failed is in one of the two groups; the passing SDPA cases ran mul and are in none.
    assert sorted(mul + rsqrt) == sorted(c["id"] for c in m["cases"] if c["outcome"] == "failed")
    sdpa = [c for c in m["cases"] if "scaled_dot_product_attention" in c["id"]]
    assert sdpa and all(c["outcome"] == "passed" for c in sdpa), sdpa
    assert all(any(d["op"] == "aten::mul.Tensor" for d in c["device_ops"]) for c in sdpa), sdpa

    groups = re.findall(r"^#\d+ .*$", r.out, re.M)
    assert " 2 failure groups " in r.out, r
    assert groups == [
        "#1 40 occurrences (40 unique) INCORRECT_RESULT in aten::mul.Tensor: output: Tensor-likes are not close!",
        "#2 4 occurrences (3 unique) FAILED_RUNTIME in aten::rsqrt: the device raised RuntimeError: loopback: "
        "injected device failure in aten::rsqrt",
    ], r

    g = m["failure_groups"]
    assert [(x["signature"], x["stage"], x["op"], x["count"], x["unique"]) for x in g] == [
        (MUL_SIGNATURE, "INCORRECT_RESULT", "aten::mul.Tensor", 40, 40),
        (RSQRT_SIGNATURE, "FAILED_RUNTIME", "aten::rsqrt", 4, 3),
    ], g
    assert g[0]["cases"] == mul and g[1]["cases"] == rsqrt
    assert g[0]["ops"] == ["torch.mul"] and g[1]["ops"] == ["torch.rsqrt"]
    assert g[0]["models"] == ["Meta-Llama-3.1-8B-Instruct", "gpt-oss-20b"]
    assert g[0]["example"] in mul and g[1]["example"] in rsqrt
    assert all(x["minimal"] is None for x in g)


def test_no_groups_leaves_the_console_per_case(tmp_path):
    r, m = run(tmp_path, "quiet", BOTH, "--no-groups", "--tb", "short")
    assert "failure group" not in r.out and not re.search(r"^#\d+ ", r.out, re.M), r
    assert "FAILURES" in r.out, r
    assert [x["count"] for x in m["failure_groups"]] == [40, 4]  # the metrics keep them


def test_merged_shards_regroup_to_the_same_groups(both, tmp_path):
    _, _, whole = both
    shards = [run(tmp_path, f"s{i}", BOTH, "--shard", f"{i}/2")[1] for i in range(2)]
    # Each shard alone has only its part of each group.
    assert all(sum(x["count"] for x in s["failure_groups"]) < 44 for s in shards)
    r = opcheck("merge", tmp_path / "s0.json", tmp_path / "s1.json", "--metrics-json", tmp_path / "all.json")
    assert r.rc == 1, r
    merged = json.loads((tmp_path / "all.json").read_text())["failure_groups"]
    strip = lambda gs: [{k: v for k, v in x.items() if k != "cases"} | {"cases": sorted(x["cases"])} for x in gs]
    assert strip(merged) == strip(whole["failure_groups"])


def test_diff_against_one_fault_says_the_rsqrt_group_is_gone(both, tmp_path):
    tmp, _, _ = both
    run(tmp_path, "one", MUL_ONLY)
    r = opcheck("diff", tmp / "both.json", tmp_path / "one.json")
    assert "Failure groups gone (1):\n  group " + RSQRT_SIGNATURE + " gone (4 occurrences, example " in r.out, r
    assert "New failure groups" not in r.out, r
    back = opcheck("diff", tmp_path / "one.json", tmp / "both.json")
    assert "New failure groups (1):\n  group " + RSQRT_SIGNATURE + " new (4 occurrences" in back.out, back
    assert "gone" not in back.out, back


DECOMPOSED = """\
model: dec
defaults: {dtype: fp32}
cases:
  - name: rms_norm
    op: torch.nn.functional.rms_norm
    inputs:
      - tensor: {shape: [4, 64], init: randn}
      - value: [64]
  - name: mul
    op: torch.mul
    inputs: [{tensor: {shape: [4, 8]}}, {tensor: {shape: [4, 8]}}]
  - name: mul_big
    op: torch.mul
    inputs: [{tensor: {shape: [16, 64]}}, {tensor: {shape: [16, 64]}}]
  - name: add
    op: torch.add
    inputs: [{tensor: {shape: [4, 8]}}, {tensor: {shape: [4, 8]}}]
  - name: mean
    op: torch.mean
    inputs: [{tensor: {shape: [4, 8]}}]
"""


def test_a_decomposition_that_runs_the_faulty_op_groups_with_it(tmp_path):
    """rms_norm decomposes on the loopback into pow, mean, add, rsqrt and the biased mul (and copies its output back,
    as the mul cases do): it is blamed on mul and joins the mul cases' group, not a group of its own."""
    manifest = tmp_path / "dec.yaml"
    manifest.write_text(DECOMPOSED)
    r = opcheck("run", "--manifests", manifest, "--device", "loopback", "--tb", "no", "-r", "N", "--metrics-json",
                tmp_path / "m.json", "--artifact-dir", tmp_path / "a", env=MUL_ONLY)
    assert r.rc == 1, r
    m = json.loads((tmp_path / "m.json").read_text())
    norm = next(c for c in m["cases"] if c["id"] == "dec::rms_norm")
    assert norm["stage"] == "INCORRECT_RESULT", norm
    assert {"aten::mul.Tensor": "kernel", "aten::rms_norm": "composite"}.items() <= {
        d["op"]: d["via"] for d in norm["device_ops"] if d["in_call"]}.items(), norm["device_ops"]
    assert [(g["signature"], g["cases"]) for g in m["failure_groups"]] == [
        (MUL_SIGNATURE, ["dec::rms_norm", "dec::mul", "dec::mul_big"])], m["failure_groups"]
    assert re.findall(r"^#\d+ .*$", r.out, re.M) == [
        "#1 3 occurrences (3 unique) INCORRECT_RESULT in aten::mul.Tensor: output: Tensor-likes are not close!"], r
