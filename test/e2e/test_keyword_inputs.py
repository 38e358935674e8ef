"""Tensor keyword arguments: an input with `keyword: NAME` is passed by that name (searchsorted's keyword-only
`sorter`). It binds, runs on the device, takes part in the dedupe key and the call shown in reports, is written back
by bundles, and the repro script passes it by name."""
import os
import subprocess

from conftest import SOURCE_DIR, metrics, opcheck, write_manifest

PYTHON = os.environ.get("OPCHECK_PYTHON", str(SOURCE_DIR / ".venv" / "bin" / "python"))

SORTER = "{keyword: sorter, tensor: {shape: [6], dtype: int64, init: file, init_args: {path: sorter.pt}}}"


def manifest(tmp_path):
    import torch
    torch.save(torch.tensor([5, 4, 3, 2, 1, 0]), tmp_path / "sorter.pt")
    torch.save(torch.tensor([9.0, 7.0, 5.0, 3.0, 1.0, 0.5]), tmp_path / "seq.pt")
    seq = "{shape: [6], init: file, init_args: {path: seq.pt}}"
    return write_manifest(tmp_path / "kw.yaml", "kw", [
        ["  - name: with_sorter", "    op: torch.searchsorted", "    inputs:", f"      - tensor: {seq}",
         "      - tensor: {shape: [4], init: arange}", f"      - {SORTER}"],
        # The same tensors with no sorter: another call, another result, never deduplicated with the first.
        ["  - name: without_sorter", "    op: torch.searchsorted", "    inputs:", f"      - tensor: {seq}",
         "      - tensor: {shape: [4], init: arange}"],
        ["  - name: aten_form", "    op: aten::searchsorted.Tensor", "    inputs:", f"      - tensor: {seq}",
         "      - tensor: {shape: [4], init: arange}", f"      - {SORTER}"],
    ])


def test_a_keyword_tensor_is_passed_by_name_and_judged(tmp_path):
    m = manifest(tmp_path)
    r = opcheck("list-cases", "--manifests", m)
    assert r.rc == 0, r
    r = opcheck("run", "--manifests", m, "--device", "loopback", "-q", "--metrics-json", tmp_path / "m.json")
    assert r.rc == 0 and "3 passed" in r.last_line, r
    cases = {c["id"]: c for c in metrics(tmp_path / "m.json")["cases"]}
    assert "sorter=" in cases["kw::with_sorter"]["signature"], cases["kw::with_sorter"]
    assert "sorter=" not in cases["kw::without_sorter"]["signature"]
    assert cases["kw::with_sorter"]["key"] != cases["kw::without_sorter"]["key"]
    assert cases["kw::with_sorter"]["deduplicated_from"] == "" and cases["kw::without_sorter"]["deduplicated_from"] == ""
    # A wrong searchsorted fails the cases that call it; the sorter changes which indices come out.
    r = opcheck("run", "--manifests", m, "--device", "loopback", "-q", env={"OPCHECK_LOOPBACK_FAULTS":
                                                                            "aten::searchsorted=off:1e-2"})
    assert r.rc == 1 and "3 failed" in r.last_line, r


def test_the_validator_binds_it_and_the_repro_script_passes_it_by_name(tmp_path):
    m = manifest(tmp_path)
    v = opcheck("validate", "--ops", m)
    assert v.rc == 0 and ": 0 errors" in v.last_line, v
    r = opcheck("repro", "kw::with_sorter", "--manifests", m, "--device", "loopback", "--python")
    assert r.rc == 0, r
    assert "sorter=" in r.out, r.out
    script = tmp_path / "repro.py"
    script.write_text(r.out)
    ran = subprocess.run([PYTHON, str(script)], capture_output=True, text=True, cwd=tmp_path, timeout=600,
                         env=dict(os.environ))
    assert ran.returncode == 0, ran.stdout + ran.stderr
    # The bundle of a failure writes the keyword back: its case.yaml loads and runs the same call.
    bundles = tmp_path / "b"
    r = opcheck("run", "--manifests", m, "--device", "loopback", "-q", "-k", "with_sorter", "--save-failures", bundles,
                env={"OPCHECK_LOOPBACK_FAULTS": "aten::searchsorted=off:1e-2"})
    assert r.rc == 1, r
    (bundle,) = list(bundles.iterdir())
    text = (bundle / "case.yaml").read_text()
    assert "keyword: sorter" in text, text
    again = opcheck("run", "--manifests", bundle / "case.yaml", "--device", "loopback", "-q")
    assert again.rc == 0 and "1 passed" in again.last_line, again
