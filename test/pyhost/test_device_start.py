"""A Python-hosted device starts once per run: one start-up process imports torch and the device modules (the
run's device probe), and every worker, the first ones and those replacing a crashed one, is forked from it. Its
start has a budget (--start-timeout) and stops at once on SIGINT/SIGTERM, with reports and no process left behind."""
import json
import os
import pathlib
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "e2e"))
from conftest import BIN, opcheck  # noqa: E402
from test_python_devices import KINDS, PYLOOP, run_json  # noqa: E402


@pytest.fixture(scope="module")
def kinds(tmp_path_factory):
    d = tmp_path_factory.mktemp("kinds")
    (d / "kinds.yaml").write_text(KINDS)
    return d


def device_module(folder, name, body):
    """A module for --device-import whose import runs `body` (it may name LOG: a file in `folder`)."""
    folder.mkdir(exist_ok=True)
    (folder / f"{name}.py").write_text(f"import os, time\nLOG = {str(folder / (name + '.log'))!r}\n{body}\n")
    return folder / f"{name}.log"


def alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_pyloop_imports_torch_once_per_run_with_two_workers_and_a_crash_restart(tmp_path, kinds):
    # Every process that imports the device modules appends its pid: the start-up process only, not the two
    # workers, not those that replace the workers the segv in aten::add.Tensor kills (the first case is one of them,
    # so a replacement is always needed).
    log = device_module(tmp_path / "mods", "count_imports",
                        "with open(LOG, 'a') as f:\n    f.write(str(os.getpid()) + '\\n')")
    r, m = run_json(tmp_path, "--manifests", kinds, *PYLOOP, "--device-import", "count_imports", "-j", "2",
                    env={"PYTHONPATH": str(tmp_path / "mods"), "OPCHECK_PYLOOP_FAULTS": "aten::add.Tensor=segv"})
    assert m is not None, r
    assert m["run"]["workers_started"] >= 3, m["run"]
    importers = log.read_text().split()
    assert len(importers) == 1, importers
    # The verdicts are those of a run whose workers each imported: the adds crashed, the rest passed.
    crashed = sorted(c["name"] for c in m["cases"] if c["stage"] == "CRASHED")
    assert crashed == ["add", "aten.add"], [(c["name"], c["stage"], c["message"][:80]) for c in m["cases"]]
    assert all("SIGSEGV" in c["message"] for c in m["cases"] if c["stage"] == "CRASHED")
    assert m["totals"]["passed"] == 7, m["totals"]


# To opcheck alone (a CI runner's SIGTERM, kill PID), or Ctrl-C in a terminal, which reaches the whole process group.
@pytest.mark.parametrize("sig,group", [(signal.SIGINT, False), (signal.SIGTERM, False), (signal.SIGINT, True)],
                         ids=["SIGINT", "SIGTERM", "SIGINT to the process group"])
def test_a_signal_during_a_slow_import_stops_the_run_within_2_s_with_reports_and_no_orphan(tmp_path, kinds, sig,
                                                                                           group):
    pid_file = device_module(tmp_path / "mods", "slow_import",
                             "open(LOG, 'w').write(str(os.getpid()))\ntime.sleep(120)")
    env = dict(os.environ, PYTHONPATH=str(tmp_path / "mods"), NO_COLOR="1")
    env.pop("OPCHECK_MANIFESTS", None)
    proc = subprocess.Popen([str(BIN), "run", "--manifests", str(kinds), *PYLOOP, "--device-import", "slow_import",
                             "--metrics-json", str(tmp_path / "m.json"), "--junit-xml", str(tmp_path / "r.xml"),
                             "--artifact-dir", str(tmp_path / "art")],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            start_new_session=group)
    try:
        deadline = time.monotonic() + 600
        while not (pid_file.exists() and pid_file.read_text()) and time.monotonic() < deadline:
            assert proc.poll() is None, proc.communicate()
            time.sleep(0.05)
        importer = int(pid_file.read_text())
        sent = time.monotonic()
        if group:
            os.killpg(proc.pid, sig)
        else:
            proc.send_signal(sig)
        out, err = proc.communicate(timeout=30)
        took = time.monotonic() - sent
    finally:
        if proc.poll() is None:
            proc.kill()
    assert took <= 2.0, f"opcheck took {took:.1f} s to stop\n{err}"
    assert not alive(importer), "the start-up process outlived the run"
    assert proc.returncode == 2, (proc.returncode, err)  # interrupted
    # A stop by the signal, not a device that failed to start: no FAILED_SETUP record, every case not run.
    m = json.loads((tmp_path / "m.json").read_text())
    assert [c for c in m["cases"] if c["outcome"] == "error"] == [], m["cases"]
    assert m["run"]["stopped_by"] == "signal", m["run"]
    assert m["run"]["not_run"] == len(m["cases"]) > 0, (m["run"]["not_run"], m["cases"])
    assert all(c["outcome"] == "skipped" and c["message"] == "not run: the run stopped (interrupted)"
               for c in m["cases"]), m["cases"]
    assert f"{len(m['cases'])} not run (signal)" in out.splitlines()[-1], out
    suite = ET.parse(tmp_path / "r.xml").getroot()
    suite = suite if suite.tag == "testsuite" else suite.find("testsuite")
    assert suite.get("errors") == "0", suite.attrib


def test_a_child_the_device_import_forks_is_ended_with_the_run(tmp_path, kinds):
    # The module forks a helper while it is imported (in the start-up process); the helper sleeps far past the run.
    pid_file = device_module(tmp_path / "mods", "forks_a_helper",
                             "if os.fork() == 0:\n    open(LOG, 'w').write(str(os.getpid()))\n    time.sleep(120)\n"
                             "    os._exit(0)\nwhile not os.path.exists(LOG):\n    time.sleep(0.01)")
    t0 = time.monotonic()
    r, m = run_json(tmp_path, "--manifests", kinds, *PYLOOP, "--device-import", "forks_a_helper", "-j", "1",
                    env={"PYTHONPATH": str(tmp_path / "mods")})
    took = time.monotonic() - t0
    helper = int(pid_file.read_text())
    try:
        assert m is not None and m["totals"]["total"] > 0, r
        # The helper holds the start-up's report pipe open: the start ends at the report's last line, not its EOF.
        assert took < 90, f"the run waited {took:.0f} s for the helper"
        assert not alive(helper), "the helper the device's import forked outlived the run"
    finally:
        if alive(helper):
            os.kill(helper, signal.SIGKILL)


def test_an_import_that_hangs_is_stopped_at_the_start_timeout_naming_the_module(tmp_path, kinds):
    pid_file = device_module(tmp_path / "mods", "hangs_forever",
                             "open(LOG, 'w').write(str(os.getpid()))\nwhile True:\n    time.sleep(1)")
    r, m = run_json(tmp_path, "--manifests", kinds, *PYLOOP, "--device-import", "hangs_forever",
                    "--start-timeout", "30", env={"PYTHONPATH": str(tmp_path / "mods")})
    assert r.rc == 4, r
    assert "did not finish `import hangs_forever` within 30 s (--start-timeout)" in r.err, r
    assert "Fix:" in r.err, r
    assert not alive(int(pid_file.read_text())), "the start-up process outlived the run"
    error = [c for c in m["cases"] if c["outcome"] == "error"]
    assert [c["id"] for c in error] == ["device::pyloop"] and "hangs_forever" in error[0]["message"], error
