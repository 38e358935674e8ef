"""The loopback device's modes (OPCHECK_LOOPBACK_MODE, issue 29) through the real binary: a bad mode is a usage
error; in fork_sensitive mode, where a process forked after using the device fails as CUDA's does, a run with
isolated workers passes every bundled case (so the run's own process never touched the device); in every mode the
off:X fault fails exactly the cases that reached the faulted op, and a real accelerator's freedoms pass."""
import pytest

from conftest import metrics, opcheck, write_manifest

MODES = ["fork_sensitive", "precise", "stats_fp32", "any_writer", "shuffle_accumulate"]
FAULTED_OP = "aten::mm"


def bundled_run(tmp_path, env, *args):
    """The bundled manifests on the loopback with two isolated workers; (run, metrics)."""
    out = tmp_path / "metrics.json"
    r = opcheck("run", "--device", "loopback", "-j", "2", "--metrics-json", out, "--artifact-dir", tmp_path / "art",
                *args, env=env, timeout=1200)
    return r, metrics(out) if out.exists() else None


def reached(case, op):
    """Whether `op` (every overload of it) reached the device in `case`."""
    return any(d["op"] == op or d["op"].startswith(op + ".") for d in case.get("device_ops", []))


def test_an_unknown_mode_is_a_usage_error_naming_the_variable_the_word_and_the_modes(tmp_path):
    manifest = write_manifest(tmp_path / "m.yaml", "m", [["  - name: add", "    op: torch.add", "    inputs:",
                                                          "      - tensor: {shape: [2]}", "      - tensor: {shape: [2]}"]])
    r = opcheck("run", "--manifests", manifest, "--device", "loopback",
                env={"OPCHECK_LOOPBACK_MODE": "precise,fork_sensitiv"})
    assert r.rc == 4, r
    assert "OPCHECK_LOOPBACK_MODE: unknown mode 'fork_sensitiv' (did you mean 'fork_sensitive'?)" in r.err, r
    assert "Fix: use one or more of fork_sensitive, precise, stats_fp32, any_writer, shuffle_accumulate" in r.err, r


def test_fork_sensitive_with_isolated_workers_passes_every_bundled_case(tmp_path):
    """Were the device touched by the process that forks the workers, every case would fail with the loopback's
    "initialization error" (the loopback unit tests show that a child forked after use fails)."""
    r, m = bundled_run(tmp_path, {"OPCHECK_LOOPBACK_MODE": "fork_sensitive"})
    assert m is not None, r
    failed = [(c["id"], c["stage"], (c.get("message") or "")[:200]) for c in m["cases"] if c["outcome"] != "passed"]
    assert r.rc == 0 and not failed, (failed[:5], r)
    assert len(m["cases"]) > 100 and m["totals"]["passed"] == len(m["cases"])
    assert "OPCHECK_LOOPBACK_MODE=fork_sensitive" in m["run"]["device_environment"]


def test_fork_sensitive_spreads_workers_over_devices(tmp_path):
    manifest = write_manifest(tmp_path / "m.yaml", "m", [
        [f"  - name: add{i}", "    op: torch.add", "    inputs:", f"      - tensor: {{shape: [2, {i + 1}]}}",
         f"      - tensor: {{shape: [2, {i + 1}]}}"] for i in range(6)])
    out = tmp_path / "m.json"
    r = opcheck("run", "--manifests", manifest, "--device", "loopback", "--devices", "0,1", "--metrics-json", out,
                env={"OPCHECK_LOOPBACK_MODE": "fork_sensitive"})
    assert r.rc == 0, r
    assert metrics(out)["totals"]["passed"] == 6


@pytest.mark.parametrize("mode", MODES)
def test_every_bundled_case_passes_in_each_mode(tmp_path, mode):
    r, m = bundled_run(tmp_path, {"OPCHECK_LOOPBACK_MODE": mode})
    assert m is not None, r
    failed = [(c["id"], c["stage"], (c.get("message") or "")[:300]) for c in m["cases"] if c["outcome"] != "passed"]
    assert not failed, failed
    assert r.rc == 0, r


@pytest.mark.parametrize("mode", [""] + MODES)
def test_off_fails_exactly_the_cases_whose_device_ops_include_the_op(tmp_path, mode):
    r, m = bundled_run(tmp_path, {"OPCHECK_LOOPBACK_MODE": mode, "OPCHECK_LOOPBACK_FAULTS": f"{FAULTED_OP}=off:1e-2"})
    assert m is not None, r
    hit = {c["id"] for c in m["cases"] if reached(c, FAULTED_OP)}
    failed = {c["id"] for c in m["cases"] if c["outcome"] != "passed"}
    assert hit, "no bundled case reaches " + FAULTED_OP
    assert failed == hit, {"failed, not reaching the op": sorted(failed - hit)[:10],
                           "reaching the op, passed": sorted(hit - failed)[:10]}
    for c in m["cases"]:
        if c["id"] in hit:
            assert c["stage"] == "INCORRECT_RESULT", c


def tensor(shape, dtype, init="randn", extra=""):
    return f"      - tensor: {{shape: {shape}, dtype: {dtype}, init: {init}{extra}}}"


def pinned(shape, dtype, data):
    return [f"      - tensor:", f"          shape: {shape}", f"          dtype: {dtype}", "          init: data",
            f"          data: {data}"]


def freedom_case(name, op, *inputs):
    lines = [f"  - name: {name}", f"    op: {op}", "    inputs:"]
    for i in inputs:
        lines += i if isinstance(i, list) else [i]
    return lines


# What each mode's device does that PyTorch allows a backend (issue 29's calls), as cases a real accelerator gives.
FREEDOMS = {
    "precise": [
        freedom_case("mm_fp16", "torch.mm", tensor("[2, 1024]", "fp16"), tensor("[1024, 4096]", "fp16")),
        freedom_case("embedding_dense_backward_fp16", "torch.ops.aten.embedding_dense_backward.default",
                     tensor("[2, 512, 128]", "fp16"), tensor("[2, 512]", "int64", "randint", ", init_args: {high: 2}"),
                     "      - value: 2", "      - value: -1", "      - value: false"),
        freedom_case("softmax_half_to_float", "torch.ops.aten._softmax.default", tensor("[4, 8]", "fp16"),
                     "      - value: -1", "      - value: true"),
        freedom_case("softmax_backward_fp32_for_fp16", "torch.ops.aten._softmax_backward_data.default",
                     tensor("[4, 8]", "fp32"), tensor("[4, 8]", "fp32", "rand"), "      - value: -1",
                     "      - value: torch.float16"),
        freedom_case("layer_norm_backward_fp32_stats", "torch.ops.aten.native_layer_norm_backward.default",
                     tensor("[4, 8]", "fp16"), tensor("[4, 8]", "fp16"), "      - value: [8]",
                     tensor("[4, 1]", "fp32"), tensor("[4, 1]", "fp32", "rand"), tensor("[8]", "fp16"),
                     tensor("[8]", "fp16"), "      - value: [true, true, true]"),
    ],
    "stats_fp32": [
        freedom_case("native_layer_norm_fp16", "torch.ops.aten.native_layer_norm.default", tensor("[4, 8]", "fp16"),
                     "      - value: [8]", tensor("[8]", "fp16"), tensor("[8]", "fp16"), "      - value: 1.0e-5"),
    ],
    "any_writer": [
        freedom_case("index_put_repeated", "torch.Tensor.index_put_", tensor("[4]", "fp32"),
                     ["      - tensor_list:", "          - {shape: [3], dtype: int64, init: data, data: [1, 1, 1]}"],
                     tensor("[3]", "fp32")),
        freedom_case("topk_ties_bf16", "torch.topk", tensor("[11, 32]", "bf16", "randint", ", init_args: {high: 4}"),
                     "      - value: 4"),
    ],
    "shuffle_accumulate": [
        freedom_case("index_add_fp16", "torch.index_add", tensor("[8, 16]", "fp16"), "      - value: 0",
                     tensor("[512]", "int64", "randint", ", init_args: {high: 8}"), tensor("[512, 16]", "fp16")),
    ],
}


@pytest.mark.parametrize("mode", sorted(FREEDOMS))
def test_a_freedom_a_real_accelerator_takes_passes_in_its_mode(tmp_path, mode):
    manifest = tmp_path / "freedoms.yaml"
    manifest.write_text("\n".join(["model: freedoms", "cases:"] + sum(FREEDOMS[mode], [])) + "\n")
    out = tmp_path / "m.json"
    r = opcheck("run", "--manifests", manifest, "--device", "loopback", "-j", "2", "--metrics-json", out,
                env={"OPCHECK_LOOPBACK_MODE": mode})
    assert out.exists(), r
    failed = [(c["name"], c["stage"], (c.get("message") or "")[:300]) for c in metrics(out)["cases"]
              if c["outcome"] != "passed"]
    assert not failed, failed
    assert r.rc == 0, r


def test_fork_sensitive_workers_that_replace_crashed_ones_start_too(tmp_path):
    """A worker that crashed is replaced by a fresh fork of the run's process, which must still be clean."""
    r, m = bundled_run(tmp_path, {"OPCHECK_LOOPBACK_MODE": "fork_sensitive",
                                  "OPCHECK_LOOPBACK_FAULTS": f"{FAULTED_OP}=segv"})
    assert m is not None, r
    crashed = [c for c in m["cases"] if c["stage"] == "CRASHED"]
    assert crashed, r
    for c in crashed:
        assert "SIGSEGV" in c["message"], c
    # A crashed case records no device_ops (its worker died): every other case ran in a replacement and passed.
    assert m["totals"]["passed"] == len(m["cases"]) - len(crashed), r
