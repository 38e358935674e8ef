"""What ran on a Python-registered device, per case: pyloop's kernels are registered from Python with torch.library,
still dispatcher kernels, so each case's device_ops names them (via kernel), eagerly and when the device side runs
as compiled code (--compile-backend aot_eager); a fault on an op no case reaches is a warning."""
import json
import pathlib
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "e2e"))
from conftest import opcheck  # noqa: E402

PYLOOP = ["--device-import", "opcheck_pyloop", "--device", "pyloop"]

# A 3-D matmul reaches bmm, never mm.
MANIFEST = """\
model: pl
cases:
  - name: add
    op: torch.add
    inputs:
      - tensor: {shape: [4, 8], dtype: fp32}
      - tensor: {shape: [4, 8], dtype: fp32}
  - name: matmul3d
    op: torch.matmul
    inputs:
      - tensor: {shape: [2, 4, 8], dtype: fp32}
      - tensor: {shape: [2, 8, 3], dtype: fp32}
"""

UNFIRED = "fault aten::mm=bias:1e-2 never fired: no case reached aten::mm on the device"


def run(tmp_path, *args, faults):
    (tmp_path / "pl.yaml").write_text(MANIFEST)
    r = opcheck("run", "--manifests", tmp_path / "pl.yaml", *PYLOOP, *args, "--metrics-json", tmp_path / "m.json",
                "--artifact-dir", tmp_path / "art", env={"OPCHECK_PYLOOP_FAULTS": faults}, timeout=1200)
    m = json.loads((tmp_path / "m.json").read_text())
    return r, m, {c["name"]: {d["op"]: d for d in c["device_ops"]} for c in m["cases"]}


@pytest.mark.parametrize("compile_backend", ["none", "aot_eager"])
def test_python_kernels_are_recorded_and_an_unreached_fault_is_a_warning(tmp_path, compile_backend):
    r, m, ops = run(tmp_path, "--compile-backend", compile_backend, faults="aten::mm=bias:1e-2")
    assert r.rc == 0, r  # the fault never fired, so every case passes
    assert UNFIRED in r.err, r
    assert any(UNFIRED in w for w in m["run"]["warnings"]), m["run"]["warnings"]
    # pyloop's Python kernels: the copies and add; the 3-D matmul reached bmm's, never mm.
    assert ops["add"]["aten::_copy_from"]["via"] == "kernel"
    assert ops["add"]["aten::add.Tensor"]["via"] == "kernel" and ops["add"]["aten::add.Tensor"]["in_call"]
    assert ops["matmul3d"]["aten::bmm"]["via"] == "kernel"
    assert not [op for op in ops["matmul3d"] if op.startswith("aten::mm")]
    assert "aten::_copy_from" in m["coverage"]["enabled_ops"]["exercised_ops"]


def test_a_failure_on_the_device_s_own_kernel_names_no_decomposition(tmp_path):
    r, m, ops = run(tmp_path, faults="aten::add.Tensor=bias:1e-2;aten::bmm=bias:1e-2")
    assert r.rc == 1, r
    assert "never fired" not in r.err, r
    cases = {c["name"]: c for c in m["cases"]}
    assert cases["add"]["stage"] == "INCORRECT_RESULT", cases["add"]
    # add ran on pyloop's own add kernel: nothing to point at.
    assert "on the device:" not in cases["add"]["message"]
    # matmul has no kernel of its own: the failure says which ops computed it.
    assert cases["matmul3d"]["stage"] == "INCORRECT_RESULT", cases["matmul3d"]
    assert "on the device: aten::matmul (composite)" in cases["matmul3d"]["message"]
    assert "aten::bmm (kernel)" in cases["matmul3d"]["message"]
