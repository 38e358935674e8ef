"""The judge's fixtures (test/fixtures/judge, issue 29): they load, the manifest converted from the committed op trace
is what `opcheck import-traces` writes from it today, and on `--device cpu`, where the device runs the CPU's own
kernels, every case the CPU computes passes. How the mixed-precision calls the CPU refuses are judged is the judge's
business (their tests use these fixtures)."""
import json

from conftest import SOURCE_DIR, opcheck

JUDGE = SOURCE_DIR / "test" / "fixtures" / "judge"
MANIFESTS = [JUDGE]  # judge.yaml and from_traces/, with the marks the folder's markers.yaml registers


def test_the_judge_fixtures_validate_with_strict_markers():
    r = opcheck("validate", "--strict-markers", "--manifests", *MANIFESTS)
    assert r.rc == 0, r
    assert "2 manifests, 22 cases: 0 errors" in r.out + r.err, r


def test_the_committed_trace_manifest_is_what_import_traces_writes(tmp_path):
    r = opcheck("import-traces", "traces/mixed_precision_training.txt", "-o", tmp_path, cwd=JUDGE)
    assert r.rc == 0, r
    written = (tmp_path / "mixed_precision_training.yaml").read_text()
    assert written == (JUDGE / "from_traces" / "mixed_precision_training.yaml").read_text(), (
        "convert it again: cd test/fixtures/judge && opcheck import-traces traces/mixed_precision_training.txt "
        "-o from_traces")


def test_on_the_cpu_every_case_the_cpu_computes_passes(tmp_path):
    r = opcheck("run", "--manifests", *MANIFESTS, "--device", "cpu", "-j", "1", "--metrics-json", tmp_path / "m.json",
                "--artifact-dir", tmp_path / "art")
    cases = json.loads((tmp_path / "m.json").read_text())["cases"]
    assert len(cases) == 22, r
    # The trace's cases carry the converter's dtype marks: its one call the CPU computes is native_layer_norm.
    computed = [c for c in cases if "mixed_precision" not in c["marks"] and
                (c["model"] == "judge" or c["name"].startswith("aten.native_layer_norm.default"))]
    assert len(computed) == 13, [c["id"] for c in computed]
    assert {c["id"]: c["stage"] for c in computed} == {c["id"]: "PASSED" for c in computed}, r
