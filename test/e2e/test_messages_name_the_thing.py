"""Messages that name the thing, through the real binary: a fault spec that overflows, a trace header in the op
object's own spelling, and run-time warnings introduced as run-time warnings."""
from conftest import case, metrics, opcheck, write_manifest


def test_a_loopback_bias_that_overflows_says_so(tmp_path):
    manifest = write_manifest(tmp_path / "m.yaml", "m", [case("exp.1", "torch.exp", [[4]])])
    r = opcheck("run", "--manifests", manifest, "--device", "loopback", "--artifact-dir", tmp_path / "a",
                env={"OPCHECK_LOOPBACK_FAULTS": "aten::exp=bias:1e999"})
    assert r.rc == 4, r
    assert "OPCHECK_LOOPBACK_FAULTS" in r.err and "'bias:1e999' overflows a double" in r.err, r
    assert "needs a number" not in r.err, r


def test_a_trace_header_in_torch_ops_spelling_converts_to_the_aten_op(tmp_path):
    trace = tmp_path / "t.txt"
    trace.write_text("Operator: torch.ops.aten.add.Tensor\ncnt: 1, ((T([4], f32), T([4], f32)), {})\n")
    r = opcheck("import-traces", trace, "-o", tmp_path / "out")
    assert r.rc == 0, r
    manifest = (tmp_path / "out" / "t.yaml").read_text()
    assert "op: aten::add.Tensor" in manifest and "torch::ops" not in manifest, manifest
    ran = opcheck("run", "--traces", trace, "--device", "cpu", "--artifact-dir", tmp_path / "a")
    assert ran.rc == 0 and ran.last_line.startswith("1 passed"), ran


def test_run_time_warnings_are_introduced_as_run_time_warnings(tmp_path):
    manifest = write_manifest(tmp_path / "m.yaml", "m", [case("neg.1", "torch.neg", [[4]])])
    r = opcheck("run", "--manifests", manifest, "--device", "loopback", "--metrics-json", tmp_path / "m.json",
                "--artifact-dir", tmp_path / "a", env={"OPCHECK_LOOPBACK_FAULTS": "aten::exp=bias:1e-2"})
    assert r.rc == 0, r
    [warning] = metrics(tmp_path / "m.json")["run"]["warnings"]
    assert "never fired" in warning, warning
    lines = r.out.splitlines()
    head = lines.index("1 run-time warning (the metrics' run.warnings hold them):")
    assert "never fired" in lines[head + 1], r
    assert "opcheck validate" not in r.out, r
