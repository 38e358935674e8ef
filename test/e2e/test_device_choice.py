"""`--device auto` never falls back in silence: the summary line, the metrics' run.device_choice and the JUnit
properties say which device it took and why, `--require-backend` refuses the loopback stand-in (exit 4, naming where
it looked), and a rerun line carries the device library a run had from OPCHECK_DEVICE_LIB, so it runs from a fresh
shell."""
import json
import os
import shlex
import subprocess
import xml.etree.ElementTree as ET

from conftest import BIN, BUILD_DIR, case, opcheck, write_manifest

# No device library from the caller's environment: `auto` has only the entry points (none here) and the loopback.
NO_LIB = {"OPCHECK_DEVICE_LIB": ""}
LOOPBACK_LIB = (BUILD_DIR / "libopcheck_loopback.so").resolve()


def manifest(tmp_path):
    return write_manifest(tmp_path / "m.yaml", "m", [case("add.1", "torch.add", [[4, 8], [4, 8]]),
                                                     case("exp.1", "torch.exp", [[5]])])


def test_auto_on_the_loopback_says_so_in_the_summary_metrics_and_junit(tmp_path):
    r = opcheck("run", "--manifests", manifest(tmp_path), "--artifact-dir", tmp_path / "a", "--metrics-json",
                tmp_path / "m.json", "--junit-xml", tmp_path / "r.xml", env=NO_LIB)
    assert r.rc == 0, r
    assert r.last_line.endswith(" (--device auto chose loopback: opcheck's stand-in, as no backend was found)"), r
    choice = json.loads((tmp_path / "m.json").read_text())["run"]["device_choice"]
    assert choice["asked"] == "auto" and choice["chosen"] == "loopback" and choice["stand_in"] is True, choice
    assert choice["searched"][0] == "device library (--device-lib, OPCHECK_DEVICE_LIB): none", choice
    assert choice["searched"][1] == "modules that register a device (--device-import, OPCHECK_DEVICE_IMPORT): none"
    assert choice["searched"][2].startswith("torch.backends entry points of "), choice
    props = {p.get("name"): p.get("value") for p in ET.parse(tmp_path / "r.xml").getroot().iter("property")}
    assert props["device_choice"] == "auto -> loopback: opcheck's stand-in, as no backend was found", props


def test_a_device_named_by_flag_adds_nothing_to_the_summary_line(tmp_path):
    r = opcheck("run", "--manifests", manifest(tmp_path), "--device", "loopback", "--artifact-dir", tmp_path / "a",
                "--metrics-json", tmp_path / "m.json")
    assert r.rc == 0 and r.last_line.startswith("2 passed in ") and "(--device auto" not in r.last_line, r
    choice = json.loads((tmp_path / "m.json").read_text())["run"]["device_choice"]
    assert choice == {"asked": "loopback", "chosen": "loopback", "why": "named by --device", "stand_in": False,
                      "searched": []}, choice


def test_require_backend_refuses_the_loopback_naming_where_it_looked(tmp_path):
    r = opcheck("run", "--manifests", manifest(tmp_path), "--require-backend", "--artifact-dir", tmp_path / "a",
                "--metrics-json", tmp_path / "m.json", env=NO_LIB)
    assert r.rc == 4, r
    assert "--device auto --require-backend: no backend found, and only opcheck's loopback stand-in is left" in r.err, r
    for place in ("device library (--device-lib, OPCHECK_DEVICE_LIB): none",
                  "modules that register a device (--device-import, OPCHECK_DEVICE_IMPORT): none",
                  "torch.backends entry points of "):
        assert place in r.err, (place, r)
    assert "Fix: " in r.err and "passed" not in r.out, r


def test_require_backend_lets_a_configured_backend_run_and_the_rerun_carries_its_library(tmp_path):
    env = {"OPCHECK_DEVICE_LIB": str(LOOPBACK_LIB), "OPCHECK_LOOPBACK_FAULTS": "aten::add.Tensor=bias:1e-2"}
    r = opcheck("run", "--manifests", manifest(tmp_path), "--require-backend", "--artifact-dir", tmp_path / "a",
                "--metrics-json", tmp_path / "m.json", env=env)
    assert r.rc == 1, r
    choice = json.loads((tmp_path / "m.json").read_text())["run"]["device_choice"]
    assert choice["stand_in"] is False and choice["why"] == "the device library OPCHECK_DEVICE_LIB names", choice
    assert choice["searched"][0] == f"device library (OPCHECK_DEVICE_LIB): {LOOPBACK_LIB}", choice
    line = next(l[len("rerun: "):] for l in r.out.splitlines() if l.startswith("rerun: "))
    words = shlex.split(line)
    assert words[words.index("--device-lib") + 1] == str(LOOPBACK_LIB), words
    # From a fresh shell (no OPCHECK_DEVICE_LIB, no fault variable set): the same verdict.
    clean = ["env", "-i", f"PATH={os.environ['PATH']}", f"HOME={os.environ.get('HOME', '/')}", "bash", "-c"]
    repro = subprocess.run(clean + [line], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert repro.returncode == 0, repro.stderr
    rerun = subprocess.run(clean + [repro.stdout.strip().splitlines()[-1]], capture_output=True, text=True,
                           timeout=300, cwd=tmp_path)
    assert rerun.returncode == 1, rerun.stdout[-3000:] + rerun.stderr[-3000:]
    assert "FAILED m::add.1 [INCORRECT_RESULT]" in rerun.stdout, rerun.stdout[-3000:]


def fix_of(err):
    """The text after the first `Fix: ` of an error, up to its end of line."""
    assert "Fix: " in err, err
    return err.split("Fix: ", 1)[1].splitlines()[0]


def test_a_device_no_backend_registers_leads_its_fix_with_the_backend(tmp_path):
    """opencl is a name libtorch knows with no kernels of its own: the likely remedy is its backend, not the
    loopback."""
    r = opcheck("run", "--manifests", manifest(tmp_path), "--device", "opencl", "--artifact-dir", tmp_path / "a",
                env=NO_LIB)
    assert r.rc == 4, r
    assert "device 'opencl' is not available: no backend registers 'opencl' in this process" in r.err, r
    fix = fix_of(r.err)
    assert fix.startswith("install the backend that registers 'opencl' (a torch.backends entry point in "), fix
    assert fix.index("--device-import MODULE") < fix.index("--device loopback or cpu"), fix


def test_collect_only_chooses_no_device_so_it_starts_no_python(tmp_path):
    """Listing the cases needs no device: `auto` lists no torch.backends entry points, which costs a Python start
    (a third of listing 10,000 cases). The interpreter here records that it was started; a run of the same cases
    starts it, so the record is one the test can see."""
    started = tmp_path / "python-started"
    fake = tmp_path / "python"
    fake.write_text(f"#!/bin/sh\necho \"$@\" >> {started}\nexit 0\n")
    fake.chmod(0o755)
    env = {**NO_LIB, "OPCHECK_PYTHON": str(fake)}
    listed = opcheck("run", "--manifests", manifest(tmp_path), "--collect-only", "--artifact-dir", tmp_path / "a",
                     env=env)
    assert listed.rc == 0 and "m::add.1" in listed.out and "m::exp.1" in listed.out, listed
    assert not started.exists(), started.read_text()
    # With --require-backend too: a listing is no run, so nothing is refused.
    listed = opcheck("run", "--manifests", manifest(tmp_path), "--collect-only", "--require-backend",
                     "--artifact-dir", tmp_path / "a", env=env)
    assert listed.rc == 0 and "m::add.1" in listed.out and not started.exists(), listed
    ran = opcheck("run", "--manifests", manifest(tmp_path), "--artifact-dir", tmp_path / "b", env=env)
    assert ran.rc == 0 and started.exists(), ran
