"""What ran on the device, per case (issues 22 and 23), through the real binary on the loopback device: every case
records the ATen ops that reached the device and how (its kernel, its fallback, a decomposition); enabled-ops
coverage counts them; an injected fault whose op no case reached is a warning; a failure whose op ran as a
decomposition or on the fallback says which ops ran instead."""
import json
import re

import pytest

from conftest import opcheck

VIAS = {"kernel", "fallback", "composite"}


def binary(name, op, shape):
    """A case calling `op` on two fp32 tensors of `shape`, as manifest lines."""
    tensor = f"      - tensor: {{shape: {shape}, dtype: fp32}}"
    return "\n".join([f"  - name: {name}", f"    op: {op}", "    inputs:", tensor, tensor]) + "\n"


MANIFEST = """\
model: dops
cases:
  - name: layer_norm
    op: torch.nn.functional.layer_norm
    dtype: bf16
    inputs:
      - tensor: {shape: [2, 7, 64], dtype: bf16, init: randn}
      - value: [64]
      - tensor: {shape: [64], dtype: bf16, init: randn}
      - tensor: {shape: [64], dtype: bf16, init: randn}
  - name: linear
    op: torch.nn.functional.linear
    inputs:
      - tensor: {shape: [3, 8], dtype: fp32}
      - tensor: {shape: [5, 8], dtype: fp32}
  - name: skipped
    op: torch.mul
    skip_if: {expr: "True", reason: not this one}
    inputs:
      - tensor: {shape: [3], dtype: fp32}
  - name: unknown_op
    op: torch.nn.functional.layernorm
    inputs:
      - tensor: {shape: [3], dtype: fp32}
""" + binary("add", "torch.add", [4, 8]) + binary("add_again", "torch.add", [4, 8])

# Passes on the loopback: a fault on an op none of these reach must not change that.
PASSING = "model: passing\ncases:\n" + binary("add", "torch.add", [4, 8]) + binary("mul", "torch.mul", [4, 8])


def run(tmp_path, manifest_text, *args, env=None):
    (tmp_path / "m.yaml").write_text(manifest_text)
    r = opcheck("run", "--manifests", tmp_path / "m.yaml", "--device", "loopback", "--metrics-json",
                tmp_path / "m.json", "--artifact-dir", tmp_path / "art", *args, env=env)
    metrics = json.loads((tmp_path / "m.json").read_text()) if (tmp_path / "m.json").exists() else None
    return r, metrics


@pytest.fixture(scope="module")
def mixed(tmp_path_factory):
    d = tmp_path_factory.mktemp("dops")
    r, m = run(d, MANIFEST, "--tb", "long")
    assert m is not None, r
    return r, {c["name"]: c for c in m["cases"]}, m


def ops_of(case):
    return {d["op"]: d for d in case["device_ops"]}


def test_every_case_that_ran_records_the_ops_that_reached_the_device(mixed):
    _, cases, _ = mixed
    for name in ("layer_norm", "add", "linear"):
        c = cases[name]
        assert c["device_ops"], c
        for d in c["device_ops"]:
            assert d["via"] in VIAS and d["calls"] >= 1 and isinstance(d["in_call"], bool), d
        names = [d["op"] for d in c["device_ops"]]
        assert len(names) == len(set(names)), names  # each op once per case
        ops = ops_of(c)
        # The inputs moved there through the loopback's own copy kernel, outside the op's call.
        assert ops["aten::_copy_from"]["via"] == "kernel", c
        # The case's own op, called on the device (resolved_op spells it as device_ops does).
        assert ops[c["resolved_op"]]["in_call"], c
    # loopback has no kernel of its own for add: the dispatcher's composite calls add.out, which the fallback serves.
    add = ops_of(cases["add"])
    assert add["aten::add.out"]["via"] == "fallback" and add["aten::add.out"]["in_call"]
    # linear decomposes (composite) into a transpose and a matrix product; their inner ops are listed too.
    linear = ops_of(cases["linear"])
    assert linear["aten::linear"]["via"] == "composite"
    assert "aten::t" in linear and {"aten::mm", "aten::matmul"} & set(linear), sorted(linear)


def test_a_deduplicated_occurrence_carries_its_case_s_list_and_a_case_that_never_ran_has_none(mixed):
    _, cases, _ = mixed
    assert cases["add_again"]["deduplicated_from"] == "dops::add"
    assert cases["add_again"]["device_ops"] == cases["add"]["device_ops"]
    assert cases["skipped"]["stage"] == "SKIPPED" and cases["skipped"]["device_ops"] == []
    assert cases["unknown_op"]["stage"] == "INVALID_CASE" and cases["unknown_op"]["device_ops"] == []


def test_enabled_ops_coverage_counts_what_reached_the_device(mixed):
    _, _, m = mixed
    enabled = m["coverage"]["enabled_ops"]
    # No case names _copy_from, every case's transfers use it.
    assert "aten::_copy_from" in enabled["exercised_ops"], enabled
    assert "aten::_copy_from" not in enabled["untouched_ops"], enabled
    assert "aten::_copy_from" in m["coverage"]["device_ops"]


def test_a_decomposed_failure_names_the_ops_that_ran_on_the_device(mixed):
    r, cases, _ = mixed
    ln = cases["layer_norm"]
    # bf16 layer_norm on the loopback: no kernel of its own, so native_batch_norm and addcmul compute it.
    assert ln["stage"] == "INCORRECT_RESULT", ln
    note = [l for l in ln["message"].splitlines() if l.startswith("on the device: ")]
    assert len(note) == 1, ln["message"]
    assert "aten::layer_norm (composite)" in note[0]
    assert "aten::native_batch_norm (fallback)" in note[0] and "aten::addcmul" in note[0]
    assert "_copy_from" not in note[0]  # moving tensors is not what computed
    assert note[0] in r.out  # the console's failure block shows it
    # --tb long lists every op that reached the device, transfers marked.
    block = r.out[r.out.index("dops::layer_norm"):]
    assert re.search(r"device ops: .*aten::_copy_from \(kernel, \d+ calls\)", block), r


def test_a_fault_that_never_fires_is_a_warning_and_the_verdicts_stand(tmp_path):
    r, m = run(tmp_path, PASSING, env={"OPCHECK_LOOPBACK_FAULTS": "aten::exp=segv"})
    assert r.rc == 0, r
    assert "2 passed" in r.last_line, r
    want = "fault aten::exp=segv never fired: no case reached aten::exp on the device"
    assert want in r.err, r
    assert any(want in w for w in m["run"]["warnings"]), m["run"]["warnings"]


def test_a_fault_that_fires_is_not_called_unfired(tmp_path):
    # A bare name means every overload: aten::add fires on add.out, which the fallback ran.
    r, m = run(tmp_path, PASSING, env={"OPCHECK_LOOPBACK_FAULTS": "aten::add=zeros;aten::mul.Tensor=bias:1e-2"})
    assert r.rc == 1, r
    assert "never fired" not in r.err, r
    assert not [w for w in m["run"]["warnings"] if "never fired" in w]
    assert {c["name"]: c["stage"] for c in m["cases"]} == {"add": "INCORRECT_RESULT", "mul": "INCORRECT_RESULT"}


def test_the_run_help_fault_example_fires_both_faults_on_gpt_oss(tmp_path):
    help_text = opcheck("run", "--help").out
    example = re.search(r"e\.g\. OPCHECK_LOOPBACK_FAULTS='([^']+)' opcheck run --model (\w+)", help_text)
    assert example, help_text
    faults, model = example.group(1), example.group(2)
    r = opcheck("run", "--model", model, "--device", "loopback", "--metrics-json", tmp_path / "m.json",
                "--artifact-dir", tmp_path / "art", "--timeout", "20", env={"OPCHECK_LOOPBACK_FAULTS": faults})
    assert r.rc == 1, r
    assert "never fired" not in r.err, r
    m = json.loads((tmp_path / "m.json").read_text())
    for entry in faults.split(";"):
        op, kind = entry.split("=")
        base = op.split("::")[1].split(".")[0]
        # A case whose worker crashed has no resolved op in its record: its manifest op names it.
        hit = [c for c in m["cases"]
               if c["resolved_op"] == op or c["resolved_op"].startswith(op + ".") or c["op"] == "torch." + base]
        assert hit, f"no case of {model} resolves to {op}"
        want = {"segv": "CRASHED"}.get(kind.split(":")[0], "INCORRECT_RESULT")
        assert any(c["stage"] == want for c in hit), [(c["id"], c["stage"]) for c in hit]
