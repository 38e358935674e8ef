"""Containment (issue 24), through the real binary: a stop ends the run within 2 s and writes its reports, whenever it
comes and however opcheck was started; a worker lost while opcheck builds a case's inputs or its reference is
opcheck's failure of that phase, not a crash of the device."""
import json
import os
import pathlib
import signal
import stat
import subprocess
import time
import xml.etree.ElementTree as ET

import pytest

from conftest import BIN, case, metrics, opcheck, write_manifest


def start(args, tmp_path, env=None, shell_prefix=None):
    """opcheck run in its own session; with shell_prefix, exec'd by a shell that first runs it (e.g. trap '' INT)."""
    cmd = [str(BIN), "run", *map(str, args), "--metrics-json", str(tmp_path / "m.json"), "--junit-xml",
           str(tmp_path / "j.xml"), "--artifact-dir", str(tmp_path / "art")]
    if shell_prefix:
        cmd = ["bash", "-c", shell_prefix + '; exec "$@"', "bash", *cmd]
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
                            env=dict(os.environ, NO_COLOR="1", **(env or {})))


def wait_for_journal_lines(proc, journal, n, limit_s=120):
    deadline = time.time() + limit_s
    while time.time() < deadline and proc.poll() is None:
        if journal.exists() and len(journal.read_text().splitlines()) >= n:
            return
        time.sleep(0.01)
    out, err = proc.communicate(timeout=60) if proc.poll() is not None else ("", "")
    pytest.fail(f"the journal never had {n} lines (rc={proc.returncode})\n{out}\n{err}")


def stop_and_time(proc, sig, whole_group=True):
    sent = time.time()
    if whole_group:
        os.killpg(proc.pid, sig)
    else:
        os.kill(proc.pid, sig)
    out, err = proc.communicate(timeout=60)
    return time.time() - sent, out, err


def hung_after_five(tmp_path):
    """Five quick cases, then one whose kernel hangs on the loopback device (run with -j 1, in that order)."""
    return write_manifest(tmp_path / "h.yaml", "h", [case(f"neg.{i}", "torch.neg", [[2 + i]]) for i in range(5)] +
                          [case("exp.hangs", "torch.exp", [[4]])])


HANG = {"OPCHECK_LOOPBACK_FAULTS": "aten::exp=hang"}


def assert_stopped_with_the_hung_case_not_run(tmp_path, rc, took, out, err):
    assert rc == 2, (out, err)
    assert took < 2, (took, err)
    m = metrics(tmp_path / "m.json")
    assert m["run"]["stopped_by"] == "signal", m["run"]
    ids = [c["id"] for c in m["cases"]]
    # The case in flight was killed: it did not run, and nothing says the device failed it; it is in the reports as
    # a skipped case that says so.
    assert ids == [f"h::neg.{i}" for i in range(5)] + ["h::exp.hangs"], ids
    hung = m["cases"][-1]
    assert (hung["outcome"], hung["stage"]) == ("skipped", "SKIPPED"), hung
    assert hung["message"].startswith("not run: the run stopped"), hung
    assert m["run"]["not_run"] == 1, m["run"]
    assert out.splitlines()[-1].startswith("5 passed, 1 not run (signal) in "), out
    assert (tmp_path / "j.xml").exists()


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_stop_with_a_case_in_flight_ends_the_run_within_2_s_and_the_case_counts_as_not_run(tmp_path, sig):
    proc = start(["--manifests", hung_after_five(tmp_path), "--device", "loopback", "-j", "1", "--timeout", "120"],
                 tmp_path, env=HANG)
    wait_for_journal_lines(proc, tmp_path / "art" / "journal.jsonl", 6)  # the header and the five quick cases
    time.sleep(0.5)  # the worker is inside the hung kernel
    took, out, err = stop_and_time(proc, sig)
    assert_stopped_with_the_hung_case_not_run(tmp_path, proc.returncode, took, out, err)
    assert "stopping: ending the cases still running (they count as not run)" in err, err


def test_the_deadline_ends_hung_cases_in_flight_and_reports_them_not_run(tmp_path):
    """--deadline bounds the run: at the deadline the cases in flight (hung in aten::add.Tensor) are ended, their
    workers killed, and reported as `not run (deadline)` in the console, the metrics and JUnit, as a signal stop
    reports them; not left to run to their --timeout, and not called a fault that never fired."""
    sent = time.time()
    r = opcheck("run", "--model", "gpt_oss", "--device", "loopback", "--deadline", "3s", "--timeout", "120",
                "--metrics-json", tmp_path / "m.json", "--junit-xml", tmp_path / "j.xml",
                "--artifact-dir", tmp_path / "art", env={"OPCHECK_LOOPBACK_FAULTS": "aten::add.Tensor=hang"},
                timeout=600)
    took = time.time() - sent
    assert r.rc == 2, r
    # Not a timing test: a run that waited for the hung cases would take their --timeout, 120 s.
    assert took < 100, (took, r)
    m = metrics(tmp_path / "m.json")
    assert m["run"]["stopped_by"] == "deadline", m["run"]
    assert "deadline reached: ending the cases still running (they count as not run)" in r.err, r
    not_run = [c for c in m["cases"] if c["message"] == "not run: the run stopped (deadline reached)"]
    assert any(c["op"] == "torch.add" for c in not_run), [c["id"] for c in not_run]
    assert m["run"]["not_run"] == len(not_run) > 0, m["run"]
    assert not [c["id"] for c in m["cases"] if c["stage"] == "TIMEOUT"], r
    assert f"{len(not_run)} not run (deadline) in " in r.last_line, r
    assert "never fired" not in r.out + r.err, r
    skipped = [tc for tc in ET.parse(tmp_path / "j.xml").getroot().iter("testcase")
               if tc.find("skipped") is not None and "deadline reached" in tc.find("skipped").get("message")]
    assert len(skipped) == len(not_run), r


def test_a_stop_reaches_opcheck_started_with_sigint_ignored(tmp_path):
    # A shell's background job, or `trap '' INT`, hands opcheck SIGINT ignored; Ctrl-C sent to it must still stop it.
    proc = start(["--manifests", hung_after_five(tmp_path), "--device", "loopback", "-j", "1", "--timeout", "120"],
                 tmp_path, env=HANG, shell_prefix="trap '' INT")
    wait_for_journal_lines(proc, tmp_path / "art" / "journal.jsonl", 6)
    time.sleep(0.5)
    took, out, err = stop_and_time(proc, signal.SIGINT, whole_group=False)
    assert_stopped_with_the_hung_case_not_run(tmp_path, proc.returncode, took, out, err)


def big_manifest(tmp_path, n):
    lines = ["model: big", "defaults: {dtype: fp32}", "cases:"]
    for i in range(n):
        lines += [f"  - name: neg.{i}", "    op: torch.neg", "    inputs:", f"      - tensor: {{shape: [{i % 7 + 1}]}}"]
    path = tmp_path / "big.yaml"
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize("shell_prefix", [None, "trap '' INT"], ids=["default", "sigint-ignored"])
def test_a_stop_while_loading_ends_within_2_s_with_reports_of_nothing_run(tmp_path, shell_prefix):
    manifest = big_manifest(tmp_path, 40000)
    proc = start(["--manifests", manifest, "--device", "cpu"], tmp_path, shell_prefix=shell_prefix)
    time.sleep(0.3)  # loading 40000 cases takes seconds
    assert proc.poll() is None, proc.communicate()
    took, out, err = stop_and_time(proc, signal.SIGINT, whole_group=False)
    assert proc.returncode == 2, (out, err)
    assert took < 2, (took, err)
    m = metrics(tmp_path / "m.json")
    assert m["run"]["stopped_by"] == "signal" and m["run"]["interrupted"] is True, m["run"]
    assert m["cases"] == [], m["cases"][:3]
    assert "stopped early: interrupted before the first case" in out, out
    assert (tmp_path / "j.xml").exists()


def memory_cgroup():
    """A fresh memory cgroup beneath this process's own (v2 or v1), or pytest.fail saying what is needed."""
    lines = pathlib.Path("/proc/self/cgroup").read_text().splitlines()
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if controllers == "" and pathlib.Path("/sys/fs/cgroup/cgroup.controllers").exists():
            base, limit = pathlib.Path("/sys/fs/cgroup") / path.lstrip("/"), "memory.max"
            break
        if "memory" in controllers.split(","):
            base, limit = pathlib.Path("/sys/fs/cgroup/memory") / path.lstrip("/"), "memory.limit_in_bytes"
            break
    else:
        pytest.fail("no memory cgroup controller in /proc/self/cgroup; this test needs one (run it as root in a "
                    "container or machine with cgroups mounted at /sys/fs/cgroup)")
    group = base / f"opcheck-test-{os.getpid()}-{time.time_ns()}"
    try:
        group.mkdir()
    except OSError as e:
        pytest.fail(f"cannot create a memory cgroup under {base} ({e}); this test needs root and a writable cgroup "
                    "hierarchy")
    return group, limit


@pytest.mark.parametrize("phase,stage,op,shapes", [
    ("inputs", "FAILED_INPUT", "torch.neg", [[16384, 16384]]),       # a 1 GiB input
    ("reference", "FAILED_REFERENCE", "torch.outer", [[16384], [16384]]),  # tiny inputs, a 1 GiB output
], ids=["inputs", "reference"])
def test_a_worker_the_oom_killer_ends_outside_the_device_is_an_error_of_that_phase(tmp_path, phase, stage, op,
                                                                                    shapes):
    manifest = write_manifest(tmp_path / "o.yaml", "o", [case("small", "torch.neg", [[4]]), case("huge", op, shapes)])
    group, limit = memory_cgroup()
    try:
        (group / limit).write_text(str(600 * 1024 * 1024))
        swap = group / "memory.memsw.limit_in_bytes"
        if swap.exists():
            swap.write_text(str(600 * 1024 * 1024))
        proc = subprocess.run(
            [str(BIN), "run", "--manifests", str(manifest), "--device", "cpu", "-j", "1", "--metrics-json",
             str(tmp_path / "m.json"), "--artifact-dir", str(tmp_path / "art")],
            capture_output=True, text=True, env=dict(os.environ, NO_COLOR="1"), timeout=300,
            preexec_fn=lambda: (group / "cgroup.procs").write_text(str(os.getpid())))
    finally:
        for _ in range(50):
            try:
                group.rmdir()
                break
            except OSError:
                time.sleep(0.1)
    assert proc.returncode == 1, (proc.stdout, proc.stderr)
    by_id = {c["id"]: c for c in metrics(tmp_path / "m.json")["cases"]}
    assert by_id["o::small"]["outcome"] == "passed", by_id
    huge = by_id["o::huge"]
    assert (huge["stage"], huge["outcome"], huge.get("phase")) == (stage, "error", phase), huge
    doing = {"inputs": "building the inputs of", "reference": "computing the CPU reference of"}[phase]
    assert f"worker died with SIGKILL (killed from outside; often the kernel's out-of-memory killer) while {doing} " \
           f"o::huge: killed: out of memory?" in huge["message"], huge["message"]
    # The journal says the same.
    journal = [json.loads(l) for l in (tmp_path / "art" / "journal.jsonl").read_text().splitlines()[1:]]
    assert {j["id"]: j.get("phase") for j in journal}["o::huge"] == phase, journal


def test_every_case_record_names_the_phase_it_ended_in(tmp_path):
    manifest = write_manifest(tmp_path / "p.yaml", "p", [
        case("passes", "torch.neg", [[4]]),
        case("wrong", "torch.exp", [[4]]),
        case("bad_reference", "torch.mm", [[2, 3], [2, 3]]),
    ])
    r = opcheck("run", "--manifests", manifest, "--device", "loopback", "--metrics-json", tmp_path / "m.json",
                "--artifact-dir", tmp_path / "art", env={"OPCHECK_LOOPBACK_FAULTS": "aten::exp=zeros"})
    assert r.rc == 1, r
    phases = {c["id"]: (c["stage"], c.get("phase")) for c in metrics(tmp_path / "m.json")["cases"]}
    assert phases == {"p::passes": ("PASSED", "compare"), "p::wrong": ("INCORRECT_RESULT", "compare"),
                      "p::bad_reference": ("FAILED_REFERENCE", "reference")}, phases


PYLOOP = ["--device-import", "opcheck_pyloop", "--device", "pyloop", "-j", "1"]


@pytest.mark.parametrize("fault,stage,expected", [
    ("hang", "TIMEOUT", r"(Current thread|Thread) 0x[0-9a-f]+ \(most recent call first\)"),
    ("segv", "CRASHED", r"Fatal Python error: Segmentation fault"),
], ids=["timeout", "crash"])
def test_a_python_hosted_worker_that_dies_leaves_every_threads_python_stack_in_its_record(tmp_path, fault, stage,
                                                                                           expected):
    import re

    manifest = write_manifest(tmp_path / "py.yaml", "py", [case("exp", "torch.exp", [[4]])])
    r = opcheck("run", "--manifests", manifest, *PYLOOP, "--timeout", "5", "--metrics-json", tmp_path / "m.json",
                "--artifact-dir", tmp_path / "art", env={"OPCHECK_PYLOOP_FAULTS": f"aten::exp={fault}"})
    assert r.rc == 1, r
    (rec,) = metrics(tmp_path / "m.json")["cases"]
    assert (rec["stage"], rec.get("phase")) == (stage, "device"), rec
    stack = rec["captured_stderr"]
    assert re.search(expected, stack), stack
    # Every thread's stack, down to the device module's frame that was running.
    assert re.search(r'File ".*opcheck_pyloop/__init__.py", line \d+ in ', stack), stack


def test_hostile_name_lengths_are_refused_at_their_line_with_bounded_reports(tmp_path):
    long_op = "torch." + "a" * (1 << 20)
    long_name = "n" * (1 << 20)
    (tmp_path / "long.yaml").write_text("\n".join([
        "model: long", "defaults: {dtype: fp32}", "cases:",
        "  - name: fine", "    op: torch.neg", "    inputs:", "      - tensor: {shape: [4]}",
        "  - name: long_op", f"    op: {long_op}", "    inputs:", "      - tensor: {shape: [4]}",
        f"  - name: {long_name}", "    op: torch.neg", "    inputs:", "      - tensor: {shape: [4]}",
    ]) + "\n")
    r = opcheck("run", "--manifests", tmp_path / "long.yaml", "--device", "cpu", "--metrics-json", tmp_path / "m.json",
                "--junit-xml", tmp_path / "j.xml", "--html", tmp_path / "r.html", "--artifact-dir", tmp_path / "art",
                timeout=60)
    assert r.rc == 2, r
    f = str(tmp_path / "long.yaml")
    assert f"{f}:9:9: error: op 'torch.{'a' * 114}...' ({len(long_op)} bytes) is longer than 256 bytes" in r.err, \
        r.err[:2000]
    assert f"{f}:12:11: error: case name '{'n' * 120}...' ({len(long_name)} bytes) is longer than 256 bytes" in r.err, \
        r.err[:2000]
    # No report echoes a name of a megabyte: each stays within a few kilobytes.
    for report in ("m.json", "j.xml", "r.html"):
        assert (tmp_path / report).stat().st_size < 200_000, report
    assert len(r.out) + len(r.err) < 20_000, (len(r.out), len(r.err))
    by_id = {c["id"]: c for c in metrics(tmp_path / "m.json")["cases"]}
    assert by_id["long::fine"]["outcome"] == "passed", by_id.keys()


@pytest.mark.parametrize("where,text", [
    ("rtol", "    rtol: 1e999999"),
    ("literal", "    attrs: {alpha: 1e999999}"),
    ("python", "    attrs: {alpha: '[1e999999]'}"),
], ids=["setting", "yaml-number", "python-literal"])
def test_a_number_too_large_for_a_double_is_a_located_error(tmp_path, where, text):
    write_manifest(tmp_path / "n.yaml", "n", [case("ok", "torch.neg", [[4]]),
                                              case("huge", "torch.add", [[4], [4]], [text.strip()])])
    r = opcheck("validate", "--manifests", tmp_path / "n.yaml")
    assert r.rc != 0, r
    assert f"{tmp_path / 'n.yaml'}:13:" in r.err and "too large for a 64-bit float" in r.err, r.err


@pytest.mark.parametrize("kind", ["file", "parent-is-a-file", "read-only"])
def test_an_unusable_artifact_dir_is_a_usage_error_with_the_right_fix(tmp_path, kind):
    write_manifest(tmp_path / "a.yaml", "a", [case("neg", "torch.neg", [[4]])])
    (tmp_path / "plain").write_text("x")
    art = {"file": tmp_path / "plain", "parent-is-a-file": tmp_path / "plain" / "art",
           "read-only": pathlib.Path("/proc/self/opcheck-art")}[kind]
    r = opcheck("run", "--manifests", tmp_path / "a.yaml", "--device", "cpu", "--artifact-dir", art)
    assert r.rc == 4, r
    assert "wait for that run to end" not in r.err, r.err
    want = {"file": f"--artifact-dir {art} is not a folder",
            "parent-is-a-file": f"--artifact-dir {art} cannot be created: ",
            "read-only": f"--artifact-dir {art} cannot be created: "}[kind]
    assert want in r.err, r.err
    assert "Fix: pass a folder opcheck can create and write" in r.err, r.err


def test_a_full_disk_under_the_journal_is_an_error_after_the_summary_of_what_ran(tmp_path):
    write_manifest(tmp_path / "d.yaml", "d", [case(f"neg.{i}", "torch.neg", [[4]]) for i in range(200)])
    mount = tmp_path / "small"
    mount.mkdir()
    made = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mount)], capture_output=True,
                          text=True)
    if made.returncode != 0:
        pytest.fail(f"this test mounts a 64 KiB tmpfs and needs root for it: {made.stderr}")
    try:
        r = opcheck("run", "--manifests", tmp_path / "d.yaml", "--device", "cpu", "--metrics-json",
                    tmp_path / "m.json", "--artifact-dir", mount / "art")
    finally:
        subprocess.run(["umount", str(mount)], check=True)
    assert r.rc == 3, r
    assert f"opcheck: error: {mount / 'art' / 'journal.jsonl'}: error: journal: cannot append: No space left on " \
           "device" in r.err, r.err
    assert "Fix: free space where --artifact-dir is, or pass another one" in r.err, r.err
    # Every result is in the summary and the reports, the journal's loss said in both.
    assert r.last_line.startswith("200 passed"), r
    m = metrics(tmp_path / "m.json")
    assert m["totals"]["passed"] == 200, m["totals"]
    assert any("the journal is incomplete" in w for w in m["run"]["warnings"]), m["run"]["warnings"]


def test_control_bytes_a_device_module_prints_are_escaped_on_the_console(tmp_path):
    # A device module that fails to start with a terminal escape (retitle, clear screen), a bell and a NUL in its
    # error, which opcheck prints.
    (tmp_path / "hostile_device.py").write_text('raise RuntimeError("\\x1b]0;pwned\\x07\\x1b[2Jcleared\\x00 by the module")\n')
    write_manifest(tmp_path / "c.yaml", "c", [case("neg", "torch.neg", [[4]])])
    r = opcheck("run", "--manifests", tmp_path / "c.yaml", "--device-import", "hostile_device", "--artifact-dir",
                tmp_path / "art", env={"PYTHONPATH": str(tmp_path)})
    assert r.rc == 4, r
    assert "by the module" in r.err, r
    for raw in ("\x1b", "\x00", "\x07"):
        assert raw not in r.err and raw not in r.out, repr(r.err)
    assert "\\x1b]0;pwned\\x07\\x1b[2Jcleared\\x00 by the module" in r.err, r.err


# The C++ loopback's workers are forked from the run; pyloop's from its start-up process, which gets each case
# whole over a pipe: both must read the descriptor checked at load.
@pytest.mark.parametrize("device", ["loopback", "pyloop"])
def test_a_tensor_file_swapped_for_a_symlink_after_loading_is_never_read(tmp_path, device):
    import torch

    folder = tmp_path / "m"
    folder.mkdir()
    torch.save(torch.ones(4), folder / "x.pt")
    # Outside the manifest's folder, with another dtype and shape: a case that read it would fail.
    torch.save(torch.ones(5, dtype=torch.float64), tmp_path / "outside.pt")
    manifest = write_manifest(folder / "f.yaml", "f", [
        case("exp.hangs", "torch.exp", [[4]]),
        ["  - name: from_file", "    op: torch.neg", "    inputs:", "      - file: x.pt"],
    ])
    # -j 1: the hung case holds the only worker for 3 s, after the manifest was loaded and checked.
    device_args, hang = (["--device", "loopback", "-j", "1"], HANG) if device == "loopback" else \
        (PYLOOP, {"OPCHECK_PYLOOP_FAULTS": "aten::exp=hang"})
    proc = start(["--manifests", manifest, *device_args, "--timeout", "3"], tmp_path, env=hang)
    wait_for_journal_lines(proc, tmp_path / "art" / "journal.jsonl", 1)  # the header: loaded and planned
    (folder / "x.pt").unlink()
    (folder / "x.pt").symlink_to(tmp_path / "outside.pt")
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 1, (out, err)
    by_id = {c["id"]: c for c in metrics(tmp_path / "m.json")["cases"]}
    assert by_id["f::exp.hangs"]["stage"] == "TIMEOUT", by_id["f::exp.hangs"]
    # The worker read the file that was checked, not what the path names now.
    assert (by_id["f::from_file"]["stage"], by_id["f::from_file"]["outcome"]) == ("PASSED", "passed"), \
        by_id["f::from_file"]
    assert "outside" not in by_id["f::from_file"]["message"]



@pytest.mark.parametrize("command", ["run", "merge"])
def test_a_report_is_never_renamed_over_a_fifo_or_device(tmp_path, command):
    # As root, a report renamed into place over /dev/full replaced the device with a file; a FIFO stands in for it.
    write_manifest(tmp_path / "r.yaml", "r", [case("neg", "torch.neg", [[4]])])
    fifo = tmp_path / "report.xml"
    os.mkfifo(fifo)
    if command == "run":
        r = opcheck("run", "--manifests", tmp_path / "r.yaml", "--device", "cpu", "--junit-xml", fifo,
                    "--artifact-dir", tmp_path / "art")
        assert r.rc == 4, r
        assert "passed" not in r.out, r  # refused before the first case
        want = f"--junit-xml {fifo}: cannot write the report there: {fifo} is a FIFO (named pipe)"
    else:
        ran = opcheck("run", "--manifests", tmp_path / "r.yaml", "--device", "cpu", "--metrics-json",
                      tmp_path / "m.json", "--artifact-dir", tmp_path / "art")
        assert ran.rc == 0, ran
        r = opcheck("merge", tmp_path / "m.json", "--junit-xml", fifo)
        assert r.rc == 4, r  # refused as run refuses it, before the shards are read
        assert "passed" not in r.out, r
        want = f"--junit-xml {fifo}: cannot write the report there: {fifo} is a FIFO (named pipe)"
    assert want in r.err and "Fix: name a regular file" in r.err, r.err
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode), "the FIFO was replaced"


def test_a_full_disk_under_a_report_is_a_located_error_after_the_summary(tmp_path):
    write_manifest(tmp_path / "r.yaml", "r", [case(f"neg.{i}", "torch.neg", [[4]]) for i in range(50)])
    mount = tmp_path / "small"
    mount.mkdir()
    made = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4k", "tmpfs", str(mount)], capture_output=True,
                          text=True)
    if made.returncode != 0:
        pytest.fail(f"this test mounts a 4 KiB tmpfs and needs root for it: {made.stderr}")
    try:
        r = opcheck("run", "--manifests", tmp_path / "r.yaml", "--device", "cpu", "--junit-xml", mount / "j.xml",
                    "--metrics-json", tmp_path / "m.json", "--artifact-dir", tmp_path / "art")
    finally:
        subprocess.run(["umount", str(mount)], check=True)
    assert r.rc == 3, r
    assert f"{mount / 'j.xml'}: error: cannot write report: writing: No space left on device" in r.err, r.err
    assert "Fix: free space on that file system, or write the report elsewhere" in r.err, r.err
    assert r.last_line.startswith("50 passed"), r
    assert metrics(tmp_path / "m.json")["totals"]["passed"] == 50


def test_control_bytes_a_device_module_prints_while_it_imports_are_escaped_on_the_console(tmp_path):
    # A device module that starts fine but prints a terminal escape (retitle, clear screen), a bell and a NUL to its
    # stderr and stdout while it is imported, in the start-up process.
    (tmp_path / "noisy_device.py").write_text(
        'import sys\n'
        'sys.stderr.write("\\x1b]0;pwned\\x07 loud module\\x00\\n")\n'
        'print("\\x1b[2J from stdout")\n'
        'import opcheck_pyloop\n')
    write_manifest(tmp_path / "c.yaml", "c", [case("neg", "torch.neg", [[4]])])
    r = opcheck("run", "--manifests", tmp_path / "c.yaml", "--device-import", "noisy_device", "--device", "pyloop",
                "--artifact-dir", tmp_path / "art", env={"PYTHONPATH": str(tmp_path)})
    assert r.rc == 0 and r.last_line.startswith("1 passed"), r
    for raw in ("\x1b", "\x00", "\x07"):
        assert raw not in r.err and raw not in r.out, repr(r.err)
    assert "opcheck: device output: \\x1b]0;pwned\\x07 loud module\\x00\n" in r.err, r.err
    assert "opcheck: device output: \\x1b[2J from stdout\n" in r.err, r.err
