"""Reports a nightly CI can trust (issue 15), through the real binary: every problem is in the reports, one notion of
failure, early stops say what did not run, flags are checked."""
import json
import re
import xml.etree.ElementTree as ET

import pytest

from conftest import case, metrics, opcheck, write_manifest


def junit_cases(path):
    root = ET.parse(path).getroot()
    return root, {f"{tc.get('classname')}::{tc.get('name')}": tc for tc in root.iter("testcase")}


def props(elem):
    return {p.get("name"): p.get("value") for p in elem.find("properties").findall("property")}


GOOD = [case("add.1", "torch.add", [[4], [4]]), case("neg.1", "torch.neg", [[4]]), case("abs.1", "torch.abs", [[3]])]


def test_load_errors_are_error_testcases_counted_everywhere(tmp_path):
    d = tmp_path / "m"
    d.mkdir()
    bad = case("listed_op", "[torch.add, torch.sub]", [[4], [4]])
    write_manifest(d / "mine.yaml", "mine", GOOD + [bad])
    r = opcheck("run", "--manifests", d, "--device", "cpu", "-m", "not no_such_mark", "--junit-xml",
                tmp_path / "r.xml", "--metrics-json", tmp_path / "r.json", "--artifact-dir", tmp_path / "art")
    assert r.rc == 2, r  # invalid input
    assert r.last_line.startswith("3 passed, 1 error in "), r
    m = metrics(tmp_path / "r.json")
    assert m["totals"]["errors"] == 1 and m["totals"]["passed"] == 3 and m["totals"]["total"] == 4, m["totals"]
    assert m["stages"]["INVALID_CASE"] == 1
    [err] = [c for c in m["cases"] if c["outcome"] == "error"]
    assert err["id"] == "mine::listed_op" and err["model"] == "mine" and err["stage"] == "INVALID_CASE", err
    assert err["verdict_kind"] == "not_loaded", err  # a manifest problem, told from a call the exec layer refused
    assert err["file"].endswith("mine.yaml") and err["line"] > 0, err
    assert f"mine.yaml:{err['line']}" in err["message"], err
    # Warnings are listed, not counted.
    assert any("no_such_mark" in w for w in m["run"]["warnings"]), m["run"]
    root, tcs = junit_cases(tmp_path / "r.xml")
    [suite] = root.findall("testsuite")
    assert suite.get("errors") == "1" and suite.get("tests") == "4", suite.attrib
    tc = tcs["mine::listed_op"]
    assert tc.find("error").get("type") == "INVALID_CASE"
    p = props(tc)
    assert p["stage"] == "INVALID_CASE" and p["location"] == f"{err['file']}:{err['line']}", p
    assert any("no_such_mark" in v for k, v in props(suite).items() if k == "warning") or \
        any(p.get("name") == "warning" and "no_such_mark" in p.get("value") for p in suite.iter("property"))


def test_a_folder_of_only_rejected_cases_still_writes_reports(tmp_path):
    write_manifest(tmp_path / "only.yaml", "only", [case("bad", "[torch.add]", [[2]])])
    r = opcheck("run", "--manifests", tmp_path / "only.yaml", "--device", "cpu", "--metrics-json", tmp_path / "r.json",
                "--junit-xml", tmp_path / "r.xml", "--artifact-dir", tmp_path / "art")
    assert r.rc == 2, r
    assert r.last_line.startswith("1 error in "), r
    assert metrics(tmp_path / "r.json")["totals"]["errors"] == 1
    assert ET.parse(tmp_path / "r.xml").getroot().find("testsuite").get("errors") == "1"


XPASS = case("neg.x", "torch.neg", [[4]], ["xfail_if: {expr: \"op == 'torch.neg'\", reason: known gap}"])


@pytest.mark.parametrize("xpass_ok", [False, True], ids=["strict", "xpass-ok"])
def test_one_notion_of_failure_for_an_unexpected_pass(tmp_path, xpass_ok):
    """Exit code, console, JUnit, HTML, --maxfail and diff agree on whether an XPASS fails the run."""
    write_manifest(tmp_path / "x.yaml", "x", [XPASS] + [case(f"add.{i}", "torch.add", [[4 + i], [4 + i]])
                                                       for i in range(12)])
    flags = ["--xpass-ok"] if xpass_ok else []
    r = opcheck("run", "--manifests", tmp_path / "x.yaml", "--device", "cpu", "-j", "1", "--maxfail", "1", *flags,
                "--junit-xml", tmp_path / "r.xml", "--metrics-json", tmp_path / "r.json", "--html",
                tmp_path / "r.html", "--artifact-dir", tmp_path / "art")
    m = metrics(tmp_path / "r.json")
    assert m["run"]["xpass_ok"] is xpass_ok
    root, tcs = junit_cases(tmp_path / "r.xml")
    html = (tmp_path / "r.html").read_text()
    n_failures = int(re.search(r'id="failures"><h2>Failures <span class="count">(\d+)', html).group(1))
    if xpass_ok:
        assert r.rc == 0, r
        assert "XPASS" not in r.out, r
        # A forgiven XPASS is a bare testcase that torch-spyre's ingest still reads as xpass: the suite's `failures`
        # counts it (docs/formats.md, "JUnit for torch-spyre's ingest"); a generic reader sees no failure element.
        assert root.find("testsuite").get("failures") == "1"
        assert tcs["x::neg.x"].find("failure") is None
        assert n_failures == 0
        # the forgiven xpass does not count toward --maxfail 1
        assert m["totals"]["total"] == 13 and m["run"]["stopped_by"] == "", m["run"]
    else:
        assert r.rc == 1, r
        assert "XPASS x::neg.x" in r.out, r
        assert root.find("testsuite").get("failures") == "1"
        assert tcs["x::neg.x"].find("failure").get("type") == "xfail_strict"
        assert n_failures == 1
        assert m["run"]["stopped_by"] == "maxfail" and m["run"]["not_run"] > 0, m["run"]
    # diff judges the run's verdicts as the run did: a new XPASS the run forgave is not a regression.
    base = json.loads((tmp_path / "r.json").read_text())
    for c in base["cases"]:
        c["outcome"], c["stage"] = ("xfailed", "INCORRECT_RESULT") if c["id"] == "x::neg.x" else (c["outcome"], c["stage"])
    (tmp_path / "old.json").write_text(json.dumps(base))
    d = opcheck("diff", tmp_path / "old.json", tmp_path / "r.json")
    assert d.rc == (0 if xpass_ok else 1), d


def test_maxfail_stops_with_exit_1_and_says_what_did_not_run(tmp_path):
    cases = [case(f"exp.{i}", "torch.exp", [[4 + i]]) for i in range(12)]
    write_manifest(tmp_path / "f.yaml", "f", cases)
    r = opcheck("run", "--manifests", tmp_path / "f.yaml", "--device", "loopback", "-j", "1", "--maxfail", "2",
                "--metrics-json", tmp_path / "r.json", "--junit-xml", tmp_path / "r.xml", "--artifact-dir",
                tmp_path / "art", env={"OPCHECK_LOOPBACK_FAULTS": "aten::exp=bias:1e-2"})
    assert r.rc == 1, r
    m = metrics(tmp_path / "r.json")
    assert m["totals"]["failed"] >= 2 and m["run"]["not_run"] > 0, m["run"]
    # Every selected case is in the reports: those not run as skipped, saying why.
    assert m["totals"]["total"] == 12, m["totals"]
    not_run = [c for c in m["cases"] if c["message"] == "not run: the run stopped (maxfail reached (2))"]
    assert len(not_run) == m["run"]["not_run"] and all(c["outcome"] == "skipped" for c in not_run), m["cases"]
    assert m["run"]["stopped_by"] == "maxfail"
    assert re.search(rf"{m['run']['not_run']} not run \(maxfail\) in ", r.last_line), r
    assert "skipped" not in r.last_line, r  # the cases not run are counted once, as not run
    suite = ET.parse(tmp_path / "r.xml").getroot().find("testsuite")
    assert props(suite)["not_run"] == f"{m['run']['not_run']} (maxfail)"
    assert suite.get("tests") == "12" and suite.get("skipped") == str(len(not_run)), suite.attrib
    skipped = [tc.find("skipped").get("message") for tc in suite.iter("testcase") if tc.find("skipped") is not None]
    assert skipped == ["not run: the run stopped (maxfail reached (2))"] * len(not_run), skipped


def test_deadline_stop_exits_2_and_says_what_did_not_run(tmp_path):
    write_manifest(tmp_path / "d.yaml", "d", [case(f"neg.{i}", "torch.neg", [[2 + i]]) for i in range(40)])
    r = opcheck("run", "--manifests", tmp_path / "d.yaml", "--device", "cpu", "--deadline", "0.000001s",
                "--metrics-json", tmp_path / "r.json", "--artifact-dir", tmp_path / "art")
    assert r.rc == 2, r
    m = metrics(tmp_path / "r.json")
    assert m["run"]["stopped_by"] == "deadline" and m["run"]["not_run"] > 0, m["run"]
    assert m["totals"]["total"] == 40 and m["totals"]["skipped"] == m["run"]["not_run"], m["totals"]
    assert sum(c["message"] == "not run: the run stopped (deadline reached)" for c in m["cases"]) == m["run"]["not_run"]
    assert re.search(rf"{m['run']['not_run']} not run \(deadline\) in ", r.last_line), r


@pytest.mark.parametrize("flags", [["--timeout", "nan"], ["--timeout", "0"], ["--timeout", "-1"], ["--timeout", "inf"],
                                   ["-j", "0"], ["-j", "-1"], ["--max-case-bytes", "-5"], ["--max-case-bytes", "0"],
                                   ["--start-timeout", "0"], ["--start-timeout", "nan"]],
                         ids=lambda f: " ".join(f))
def test_meaningless_flag_values_are_usage_errors(tmp_path, flags):
    write_manifest(tmp_path / "u.yaml", "u", GOOD)
    r = opcheck("run", "--manifests", tmp_path / "u.yaml", "--device", "cpu", *flags, "--artifact-dir", tmp_path / "a")
    assert r.rc == 4, r
    assert flags[0] in r.err and "greater than 0" in r.err, r


def test_a_report_that_cannot_be_written_stops_the_run_before_any_case(tmp_path):
    write_manifest(tmp_path / "s.yaml", "s", [case("neg.0", "torch.neg", [[2]])])
    (tmp_path / "a-file").write_text("x")
    for flag, path, why in [("--junit-xml", tmp_path / "a-file" / "r.xml", "a-file is not a folder"),
                            ("--metrics-json", tmp_path, "is a folder"),
                            ("--junit-dir", tmp_path / "a-file", "is not a folder")]:
        r = opcheck("run", "--manifests", tmp_path / "s.yaml", "--device", "cpu", flag, path,
                    "--artifact-dir", tmp_path / "art")
        assert r.rc == 4, r
        assert f"{flag} {path}: cannot write the report" in r.err and why in r.err and "Fix:" in r.err, r
        assert "passed" not in r.out, r  # stopped before the first case
    # A folder that does not exist yet is made, as the writers make it.
    made = opcheck("run", "--manifests", tmp_path / "s.yaml", "--device", "cpu", "--junit-xml",
                   tmp_path / "new" / "deeper" / "r.xml", "--artifact-dir", tmp_path / "art")
    assert made.rc == 0 and (tmp_path / "new" / "deeper" / "r.xml").exists(), made


def run_shards(tmp_path, op, shard_args, rc, env=None):
    """One run per entry of `shard_args` (the extra arguments of shard i of len(shard_args)), each expected to exit
    `rc`; returns their metrics files."""
    name = op.split(".")[-1]
    write_manifest(tmp_path / "s.yaml", "s", [case(f"{name}.{i}", op, [[2 + i]]) for i in range(4)])
    files = []
    for i, extra in enumerate(shard_args):
        files.append(tmp_path / f"shard{i}.json")
        r = opcheck("run", "--manifests", tmp_path / "s.yaml", "--device", "loopback", "--shard",
                    f"{i}/{len(shard_args)}", *extra, "--metrics-json", files[-1], "--artifact-dir", tmp_path / f"a{i}",
                    env=env)
        assert r.rc == rc, r
    return files


def test_merge_exits_as_the_merged_run_would(tmp_path):
    files = run_shards(tmp_path, "torch.exp", [[], []], 1, env={"OPCHECK_LOOPBACK_FAULTS": "aten::exp=bias:1e-1"})
    merged = opcheck("merge", *files, "--metrics-json", tmp_path / "all.json")
    assert merged.rc == 1, merged
    assert merged.last_line.startswith("4 failed"), merged


def test_merge_refuses_shards_of_another_identity_naming_the_part(tmp_path):
    files = run_shards(tmp_path, "torch.neg", [["--repeat", "2"], ["--repeat", "3"]], 0)
    mixed = opcheck("merge", *files, "--metrics-json", tmp_path / "all.json")
    assert mixed.rc == 2, mixed
    assert 'shard 2 ran with repeat "3" but shard 1 with "2"' in mixed.err, mixed
    assert not (tmp_path / "all.json").exists()


def test_merge_refuses_an_incomplete_shard_set_and_reports_longest_and_summed_time(tmp_path):
    write_manifest(tmp_path / "s.yaml", "s", [case(f"neg.{i}", "torch.neg", [[2 + i]]) for i in range(9)])
    files = []
    for i in range(3):
        files.append(tmp_path / f"shard{i}.json")
        r = opcheck("run", "--manifests", tmp_path / "s.yaml", "--device", "cpu", "--shard", f"{i}/3",
                    "--metrics-json", files[-1], "--artifact-dir", tmp_path / f"a{i}")
        assert r.rc == 0, r
    two = opcheck("merge", files[0], files[1], "--metrics-json", tmp_path / "two.json")
    assert two.rc == 2, two
    assert "incomplete shard set: 2 of 3 shards (0/3, 1/3); missing 2/3" in two.err, two
    assert not (tmp_path / "two.json").exists()
    partial = opcheck("merge", files[0], files[1], "--allow-partial", "--metrics-json", tmp_path / "two.json")
    assert partial.rc == 0, partial
    assert "missing 2/3" in partial.err, partial
    assert metrics(tmp_path / "two.json")["run"]["shard"] == "0/3,1/3"
    mixed = opcheck("merge", files[0], files[0], files[2], "--allow-partial")
    assert mixed.rc == 2 and "is in shard 1 and in shard 2" in mixed.err, mixed
    whole = opcheck("merge", *files, "--metrics-json", tmp_path / "all.json")
    assert whole.rc == 0, whole
    run = metrics(tmp_path / "all.json")["run"]
    assert run["shard"] == "" and run["shard_count"] == 3, run
    times = [metrics(f)["run"]["duration_s"] for f in files]
    assert run["shard_longest_s"] == pytest.approx(max(times)) and run["shard_sum_s"] == pytest.approx(sum(times))
    assert re.search(r"^shards: 3, longest \d+\.\d\ds, summed \d+\.\d\ds$", whole.out, re.M), whole
    assert whole.last_line.startswith("9 passed"), whole


def test_a_second_run_on_a_busy_artifact_dir_is_refused_naming_the_holder(tmp_path):
    import os
    import subprocess
    import time

    from conftest import BIN

    write_manifest(tmp_path / "h.yaml", "h", [case(f"mm.{i}", "torch.matmul", [[300, 300], [300, 300]],
                                                   ["dtype: fp64", f"seed: {i}"]) for i in range(150)])
    art = tmp_path / "art"
    first = subprocess.Popen([str(BIN), "run", "--manifests", str(tmp_path / "h.yaml"), "--device", "cpu", "-j", "1",
                              "--artifact-dir", str(art)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env=dict(os.environ, NO_COLOR="1"))
    journal = art / "journal.jsonl"
    deadline = time.time() + 120
    while time.time() < deadline and first.poll() is None and not (journal.exists() and journal.stat().st_size):
        time.sleep(0.01)
    assert first.poll() is None, "the first run ended before the second could start"
    second = opcheck("run", "--manifests", tmp_path / "h.yaml", "--device", "cpu", "--artifact-dir", art)
    out, err = first.communicate(timeout=600)
    assert second.rc == 4, second
    assert f"{art} is in use by another opcheck run (pid {first.pid} on " in second.err, second
    assert "Fix: wait for that run to end, or give this one its own --artifact-dir" in second.err, second
    assert first.returncode == 0, (out, err)
    # The first run's journal is whole: its header and a line per case.
    assert len(journal.read_text().splitlines()) == 151
    # Once it has ended, the folder is free again.
    again = opcheck("run", "--manifests", tmp_path / "h.yaml", "--device", "cpu", "-k", "mm.1", "--artifact-dir", art)
    assert again.rc == 0, again


@pytest.mark.parametrize("signals", [1, 2], ids=["one-signal", "second-signal"])
def test_signals_end_a_hung_case_promptly_with_partial_reports(tmp_path, signals):
    import os
    import signal
    import subprocess
    import time

    from conftest import BIN

    write_manifest(tmp_path / "h.yaml", "h", [case("exp.hangs", "torch.exp", [[4]])] +
                   [case(f"neg.{i}", "torch.neg", [[2 + i]]) for i in range(5)])
    proc = subprocess.Popen([str(BIN), "run", "--manifests", str(tmp_path / "h.yaml"), "--device", "loopback", "-j",
                             "1", "--timeout", "120", "--metrics-json", str(tmp_path / "r.json"), "--junit-xml",
                             str(tmp_path / "r.xml"), "--artifact-dir", str(tmp_path / "a")],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
                            env=dict(os.environ, NO_COLOR="1", OPCHECK_LOOPBACK_FAULTS="aten::exp=hang"))
    time.sleep(3)  # the worker is inside the hung kernel by now
    assert proc.poll() is None
    sent = time.time()
    for _ in range(signals):
        os.killpg(proc.pid, signal.SIGTERM if signals == 1 else signal.SIGINT)
        time.sleep(0.3)
    out, err = proc.communicate(timeout=60)
    took = time.time() - sent
    assert proc.returncode == 2, (out, err)
    assert took < 4, (took, err)
    assert "stopping: ending the cases still running" in err, err
    m = metrics(tmp_path / "r.json")
    assert m["run"]["stopped_by"] == "signal" and m["totals"]["total"] == 6, m
    assert sum(c["message"] == "not run: the run stopped (interrupted)" for c in m["cases"]) == m["run"]["not_run"] > 0
    suite = ET.parse(tmp_path / "r.xml").getroot().find("testsuite")
    assert suite.get("tests") == "6" and int(suite.get("skipped")) == m["run"]["not_run"], suite.attrib
    assert all(c["stage"] != "TIMEOUT" and c["stage"] != "CRASHED" for c in m["cases"]), m["cases"]
    assert re.search(r"\d+ not run \(signal\) in ", out.splitlines()[-1]), out
    assert ET.parse(tmp_path / "r.xml").getroot().find("testsuite") is not None


@pytest.mark.parametrize("signame", ["SIGHUP", "SIGQUIT", "SIGUSR1"])
def test_a_closed_terminal_or_ctrl_backslash_stops_a_run_as_ctrl_c_does_with_every_report(tmp_path, signame):
    import os
    import signal
    import subprocess
    import time

    from conftest import BIN

    write_manifest(tmp_path / "h.yaml", "h", [case("exp.hangs", "torch.exp", [[4]])] +
                   [case(f"neg.{i}", "torch.neg", [[2 + i]]) for i in range(5)])
    proc = subprocess.Popen([str(BIN), "run", "--manifests", str(tmp_path / "h.yaml"), "--device", "loopback", "-j",
                             "1", "--timeout", "120", "--metrics-json", str(tmp_path / "r.json"), "--junit-xml",
                             str(tmp_path / "r.xml"), "--html", str(tmp_path / "r.html"), "--artifact-dir",
                             str(tmp_path / "a")],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
                            env=dict(os.environ, NO_COLOR="1", OPCHECK_LOOPBACK_FAULTS="aten::exp=hang"))
    time.sleep(3)  # the worker is inside the hung kernel by now
    assert proc.poll() is None
    os.killpg(proc.pid, getattr(signal, signame))  # as the terminal sends it: to the whole process group
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 2, (proc.returncode, out, err)  # interrupted, as with SIGINT; not killed by the signal
    assert "stopping: ending the cases still running" in err, err
    m = metrics(tmp_path / "r.json")
    assert m["run"]["stopped_by"] == "signal" and m["totals"]["total"] == 6, m
    assert sum(c["message"] == "not run: the run stopped (interrupted)" for c in m["cases"]) == m["run"]["not_run"] > 0
    suite = ET.parse(tmp_path / "r.xml").getroot().find("testsuite")
    assert suite.get("tests") == "6" and int(suite.get("skipped")) == m["run"]["not_run"], suite.attrib
    assert "h::exp.hangs" in (tmp_path / "r.html").read_text()
    assert re.search(r"\d+ not run \(signal\) in ", out.splitlines()[-1]), out
    assert not list(tmp_path.glob("core*")), "a core dump was left"


def test_small_defects(tmp_path):
    import shutil

    write_manifest(tmp_path / "one.yaml", "one", [case("neg", "torch.neg", [[3]])])
    r = opcheck("run", "--manifests", tmp_path / "one.yaml", "--device", "loopback", "--metrics-json",
                tmp_path / "m.json", "--artifact-dir", tmp_path / "a")
    assert r.rc == 0, r
    # The device is named once, and one case is "1 case".
    device_lines = [l for l in r.err.splitlines() if l.startswith("opcheck: device")]
    assert len(device_lines) == 1 and device_lines[0].endswith("; 1 case, 1 unique"), r.err
    # --baseline: the comparison comes first, the summary line last.
    b = opcheck("run", "--manifests", tmp_path / "one.yaml", "--device", "loopback", "--baseline", tmp_path / "m.json",
                "--artifact-dir", tmp_path / "b")
    assert b.rc == 0 and "opcheck diff: 0 regressions" in b.out and b.last_line.startswith("1 passed in "), b
    assert "(1 -> 1 case)" in b.out, b
    # A located error is printed once, with one "error:".
    e = opcheck("merge", tmp_path / "missing.json")
    assert e.rc == 2 and e.err.count("error:") == 1 and e.err.startswith(f"{tmp_path / 'missing.json'}: error:"), e
    # report --history: a copy of the current run in the history folder is not a second run.
    hist = tmp_path / "hist"
    hist.mkdir()
    shutil.copy(tmp_path / "m.json", hist / "latest.json")
    assert opcheck("run", "--manifests", tmp_path / "one.yaml", "--device", "cpu", "--metrics-json",
                   hist / "earlier.json", "--artifact-dir", tmp_path / "c").rc == 0
    h = opcheck("report", tmp_path / "m.json", "--history", hist, "--html", tmp_path / "r.html")
    assert h.rc == 0 and "; trend over 2 runs" in h.out, h


EMPTY_OPS = [
    ["  - name: new_empty", "    op: torch.Tensor.new_empty", "    inputs:", "      - tensor: {shape: [8, 16]}",
     "      - value: [512, 1536]"],
    ["  - name: new_empty_strided", "    op: aten.new_empty_strided.default", "    inputs:",
     "      - tensor: {shape: [8, 16]}", "      - value: [384, 1024]", "      - value: [1, 384]"],
    ["  - name: empty_like", "    op: torch.empty_like", "    inputs:", "      - tensor: {shape: [256, 1024]}"],
    ["  - name: empty", "    op: torch.empty", "    inputs:", "      - value: [300, 700]"],
    ["  - name: empty_strided", "    op: torch.empty_strided", "    inputs:", "      - value: [64, 300]",
     "      - value: [1, 64]"],
]


@pytest.mark.parametrize("device", ["cpu", "loopback"])
def test_uninitialised_outputs_compare_layout_not_values(tmp_path, device):
    write_manifest(tmp_path / "e.yaml", "e", EMPTY_OPS)
    r = opcheck("run", "--manifests", tmp_path / "e.yaml", "--device", device, "--junit-xml", tmp_path / "r.xml",
                "--metrics-json", tmp_path / "r.json", "--artifact-dir", tmp_path / "art")
    assert r.rc == 0, r
    m = metrics(tmp_path / "r.json")
    # A factory given no tensor and no device= makes its tensor on the host: on a device, it passed without it.
    on_host = {"empty", "empty_strided"} if device != "cpu" else set()
    assert {c["name"]: c["outcome"] for c in m["cases"]} == {
        n: "no_device_op" if n in on_host else "passed" for n in
        ["new_empty", "new_empty_strided", "empty_like", "empty", "empty_strided"]}, r
    for c in m["cases"]:
        assert c["values_compared"] is False, c
        assert c["figures"]["total"] == 0, c  # no element was compared
    _, tcs = junit_cases(tmp_path / "r.xml")
    for name in ["new_empty", "new_empty_strided", "empty_like", "empty", "empty_strided"]:
        assert props(tcs[f"e::{name}"])["values_compared"].startswith("false"), name



def saved_tensor_files(d):
    """A good .pt and damaged ones: out-of-bounds sizes, strides and offset; truncated; garbage; not a tensor."""
    import zipfile

    import torch

    torch.save(torch.arange(6.0).reshape(2, 3), d / "good.pt")
    torch.save({"a": torch.ones(2)}, d / "dict.pt")
    good = (d / "good.pt").read_bytes()
    (d / "truncated.pt").write_bytes(good[: len(good) // 2])
    (d / "garbage.pt").write_bytes(b"not a tensor at all\n" * 8)

    def rewrite(name, old, new):  # the same archive with its tensor record edited
        zin = zipfile.ZipFile(d / "good.pt")
        with zipfile.ZipFile(d / name, "w", zipfile.ZIP_STORED) as zout:
            for info in zin.infolist():
                data = zin.read(info.filename)
                if info.filename.endswith("data.pkl"):
                    assert old in data
                    data = data.replace(old, new, 1)
                zout.writestr(info, data)

    rewrite("big_sizes.pt", b"K\x02K\x03\x86", b"K\x09K\x03\x86")
    rewrite("big_strides.pt", b"K\x03K\x01\x86", b"K\x03K\x05\x86")
    rewrite("big_offset.pt", b"QK\x00", b"QK\x07")


DAMAGED = {
    "big_sizes": "sizes [9, 3] with strides [3, 1] and offset 0 reach element 26 of a storage of 6 elements",
    "big_strides": "sizes [2, 3] with strides [3, 5] and offset 0 reach element 13 of a storage of 6 elements",
    "big_offset": "sizes [2, 3] with strides [3, 1] and offset 7 reach element 12 of a storage of 6 elements",
    "truncated": "no end-of-archive record",
    "garbage": "is not a tensor file written by torch.save",
    "dict": "holds a dict of 1 entry ('a'), not a single tensor; name one with init_args.key",
}


def test_damaged_tensor_files_are_located_errors_in_validate_and_run(tmp_path):
    saved_tensor_files(tmp_path)
    cases = [["  - name: good", "    op: torch.neg", "    inputs:", "      - file: good.pt"]]
    for stem in DAMAGED:
        cases.append([f"  - name: {stem}", "    op: torch.neg", "    inputs:", f"      - file: {stem}.pt"])
    manifest = write_manifest(tmp_path / "files.yaml", "files", cases)
    lines = manifest.read_text().splitlines()
    v = opcheck("validate", manifest)
    assert v.rc == 2, v
    for stem, what in DAMAGED.items():
        line = next(i for i, l in enumerate(lines, 1) if l.strip() == f"- file: {stem}.pt")
        located = [l for l in v.err.splitlines() if l.startswith(f"{manifest}:{line}:")]
        assert located and what in located[0] and f"[case files::{stem}]" in located[0], (stem, v)
    assert "error: " not in "".join(l for l in v.err.splitlines() if "good.pt" in l), v
    # The run never reads them: each is an ERROR (INVALID_CASE) of its own, the good case passes, nothing crashes.
    for isolation in [[], ["--no-isolation"]]:
        r = opcheck("run", "--manifests", manifest, "--device", "loopback", *isolation, "--metrics-json",
                    tmp_path / "r.json", "--artifact-dir", tmp_path / "art")
        assert r.rc == 2, r
        by_id = {c["id"]: (c["outcome"], c["stage"]) for c in metrics(tmp_path / "r.json")["cases"]}
        assert by_id.pop("files::good") == ("passed", "PASSED"), by_id
        assert by_id == {f"files::{s}": ("error", "INVALID_CASE") for s in DAMAGED}, by_id


def test_an_expanded_view_costs_what_is_materialised_not_its_logical_size(tmp_path):
    """A [100000, 100000] expand_view of a [1, 100000] base: 4e10 logical bytes behind 400 KB of storage. Its digest
    and everything else opcheck does are bounded by the 400 KB, so it passes well within a 20 s timeout."""
    write_manifest(tmp_path / "x.yaml", "x", [[
        "  - name: expanded.size", "    op: torch.Tensor.size", "    inputs:",
        "      - tensor: {shape: [100000, 100000], preset: expand_view, preset_args: {base_shape: [1, 100000]}}",
        "      - value: 1"]])
    r = opcheck("run", "--manifests", tmp_path / "x.yaml", "--device", "loopback", "--timeout", "20",
                "--max-case-bytes", "1000000", "--metrics-json", tmp_path / "r.json", "--artifact-dir", tmp_path / "a")
    assert r.rc == 0, r
    [c] = metrics(tmp_path / "r.json")["cases"]
    # Tensor.size reads the view's metadata: no op of the call runs on the device, so it passed without it.
    assert (c["outcome"], c["stage"]) == ("no_device_op", "NO_DEVICE_OP"), c
    assert c["timings"]["materialize_ms"] < 5000, c
    assert len(c["input_digests"]) == 1 and len(c["input_digests"][0]) == 64, c


def test_opcheck_own_work_is_not_charged_to_the_device_timeout(tmp_path):
    """Building and hashing a 256 MB host input takes opcheck longer than the 0.25 s the op is given; the op itself
    (Tensor.size) takes microseconds. Only the op's time counts against --timeout."""
    write_manifest(tmp_path / "t.yaml", "t", [[
        "  - name: big.size", "    op: torch.Tensor.size", "    inputs:",
        "      - tensor: {shape: [8192, 8192], device: cpu}", "      - value: 0"]])
    r = opcheck("run", "--manifests", tmp_path / "t.yaml", "--device", "loopback", "--timeout", "0.25",
                "--metrics-json", tmp_path / "r.json", "--artifact-dir", tmp_path / "a")
    [c] = metrics(tmp_path / "r.json")["cases"]
    # Not TIMEOUT: the call ran within its time (on the host input, so without the device).
    assert (c["outcome"], c["stage"]) == ("no_device_op", "NO_DEVICE_OP"), (c, r)
    assert r.rc == 0, r


def test_special_files_are_never_opened_and_never_skipped_silently(tmp_path):
    import os

    d = tmp_path / "m"
    d.mkdir()
    write_manifest(d / "good.yaml", "good", GOOD)
    os.mkfifo(d / "pipe.yaml")
    (d / "dangling.yaml").symlink_to(tmp_path / "nowhere.yaml")
    # Named directly, a FIFO is an error at once (it would block a read forever).
    for cmd in (["validate", d / "pipe.yaml"], ["list-cases", "--manifests", d / "pipe.yaml"],
                ["run", "--manifests", d / "pipe.yaml", "--device", "cpu", "--artifact-dir", tmp_path / "a"]):
        r = opcheck(*cmd, timeout=60)
        assert r.rc in (2, 4, 5) and r.rc != 0, (cmd, r)
        assert f"{d / 'pipe.yaml'}: error: is a FIFO (named pipe), not a manifest file" in r.err, (cmd, r)
    # Found in a folder, each is an error naming it (its cases are missing from the run); the good manifest still
    # loads and runs, and the reports hold one error per file that could not be loaded.
    v = opcheck("validate", d, timeout=60)
    assert f"{d / 'pipe.yaml'}: error: cannot load: a FIFO (named pipe), not a regular file" in v.err, v
    assert f"{d / 'dangling.yaml'}: error: cannot load: a symbolic link to {tmp_path / 'nowhere.yaml'}, which does not exist" in v.err, v
    assert v.rc == 2, v
    r = opcheck("run", "--manifests", d, "--device", "cpu", "--metrics-json", tmp_path / "r.json",
                "--junit-xml", tmp_path / "r.xml", "--artifact-dir", tmp_path / "b", timeout=60)
    assert r.rc == 2 and r.last_line.startswith("3 passed, 2 errors"), r
    errors = {c["file"]: c for c in metrics(tmp_path / "r.json")["cases"] if c["outcome"] == "error"}
    assert set(errors) == {str(d / "pipe.yaml"), str(d / "dangling.yaml")}, errors
    assert ET.parse(tmp_path / "r.xml").getroot().find("testsuite").get("errors") == "2"
    # A status config that is a FIFO is refused the same way.
    os.mkfifo(tmp_path / "cfg.yaml")
    c = opcheck("run", "--manifests", d / "good.yaml", "--device", "cpu", "--config", tmp_path / "cfg.yaml",
                "--artifact-dir", tmp_path / "c", timeout=60)
    assert c.rc == 4 and "is a FIFO (named pipe), not a regular file" in c.err, c


def test_messages_say_what_is_there(tmp_path):
    # A shape with a 0 size has 0 elements, whatever the other sizes.
    write_manifest(tmp_path / "s.yaml", "s", [case("huge_empty", "torch.neg", [[0, 9223372036854775807]])])
    v = opcheck("validate", tmp_path / "s.yaml")
    assert v.rc == 2, v
    assert "has 0 elements, but its other sizes are absurdly large" in v.err, v
    assert "(9223372036854775807 elements)" not in v.err, v
    # A UTF-16 surrogate encoded in UTF-8 is named, with the bytes as they are in the file.
    (tmp_path / "u.yaml").write_bytes(b"model: u\ncases:\n  - name: \xed\xa0\x80x\n    op: torch.neg\n")
    v = opcheck("validate", tmp_path / "u.yaml")
    assert v.rc == 2, v
    assert "U+D800, a UTF-16 surrogate; bytes 0xED 0xA0 0x80" in v.err, v
    assert "byte 0x00" not in v.err, v
    # A case name holding an escape sequence is refused, and nothing raw reaches the terminal.
    (tmp_path / "c.yaml").write_text("model: c\ncases:\n  - name: \"red\\e[31mcase\"\n    op: torch.neg\n"
                                     "    inputs:\n      - tensor: {shape: [2]}\n")
    v = opcheck("validate", tmp_path / "c.yaml")
    assert v.rc == 2, v
    assert "contains a control character (\\x1b at byte 3)" in v.err, v
    r = opcheck("run", "--manifests", tmp_path / "c.yaml", "--device", "cpu", "-v", "--artifact-dir", tmp_path / "a")
    assert "\x1b" not in r.out and "\x1b" not in r.err, r


def test_temporary_report_files_of_a_killed_run_are_removed_by_the_next(tmp_path):
    import os
    import time

    write_manifest(tmp_path / "g.yaml", "g", GOOD)
    out = tmp_path / "out"
    out.mkdir()
    dead = out / "r.json.tmp.4194399.Ab12Cd"  # above Linux's largest pid: no such process
    legacy = out / "r.xml.tmp.Zz98Yy"  # an earlier release's name, hours old
    live = out / f"r.json.tmp.{os.getpid()}.Qq11Ww"  # a writer that is still running
    other = out / "notes.json.tmp.4194399.Ab12Cd"  # beside another file: not this run's business
    for p in (dead, legacy, live, other):
        p.write_text("partial")
    old = time.time() - 7200
    os.utime(legacy, (old, old))
    r = opcheck("run", "--manifests", tmp_path / "g.yaml", "--device", "cpu", "--metrics-json", out / "r.json",
                "--junit-xml", out / "r.xml", "--artifact-dir", tmp_path / "a")
    assert r.rc == 0, r
    assert not dead.exists() and not legacy.exists(), sorted(os.listdir(out))
    assert live.exists() and other.exists(), sorted(os.listdir(out))
    assert sorted(p.name for p in out.iterdir() if ".tmp." not in p.name) == ["r.json", "r.xml"]


def test_pytest_habits(tmp_path):
    write_manifest(tmp_path / "p.yaml", "p", GOOD)
    # list-cases with no match says so.
    ls = opcheck("list-cases", "--manifests", tmp_path / "p.yaml", "-k", "nothing_matches_this")
    assert ls.rc == 5 and ls.out == "0 selected (3 deselected)\n", ls
    # --last-failed after a run where nothing failed runs everything (pytest's --lf), instead of exiting 5.
    art = tmp_path / "a"
    assert opcheck("run", "--manifests", tmp_path / "p.yaml", "--device", "cpu", "--artifact-dir", art).rc == 0
    lf = opcheck("run", "--manifests", tmp_path / "p.yaml", "--device", "cpu", "--last-failed", "--artifact-dir", art)
    assert lf.rc == 0 and lf.last_line.startswith("3 passed"), lf
    assert "nothing failed in the previous run" in lf.err, lf
    # --co is --collect-only; --durations=N lists the slowest cases before the summary line.
    co = opcheck("run", "--manifests", tmp_path / "p.yaml", "--co")
    assert co.rc == 0 and "3 cases, 3 unique" in co.out, co
    d = opcheck("run", "--manifests", tmp_path / "p.yaml", "--device", "cpu", "--durations=2", "--artifact-dir",
                tmp_path / "b")
    lines = d.out.splitlines()
    i = next(n for n, l in enumerate(lines) if "slowest 2 durations" in l)
    assert all(re.match(r"^\d+\.\d\ds p::", l) for l in lines[i + 1:i + 3]) and lines[i + 3] == lines[-1], d
    # -x stops at the first failure, as --maxfail 1.
    write_manifest(tmp_path / "f.yaml", "f", [case(f"exp.{i}", "torch.exp", [[4 + i]]) for i in range(12)])
    x = opcheck("run", "--manifests", tmp_path / "f.yaml", "--device", "loopback", "-j", "1", "-x", "--metrics-json",
                tmp_path / "x.json", "--artifact-dir", tmp_path / "c",
                env={"OPCHECK_LOOPBACK_FAULTS": "aten::exp=bias:1e-2"})
    assert x.rc == 1 and metrics(tmp_path / "x.json")["run"]["stopped_by"] == "maxfail", x


def test_run_help_documents_every_fault_kind():
    h = opcheck("run", "--help")
    assert h.rc == 0, h
    assert "OPCHECK_LOOPBACK_FAULTS='OP=KIND[;OP=KIND...]'" in h.out, h
    for kind, stage in [("bias:X", "INCORRECT_RESULT"), ("ulp", "INCORRECT_RESULT"), ("zeros", "INCORRECT_RESULT"),
                        ("nondet", "NONDETERMINISTIC"), ("segv", "CRASHED"), ("abort", "CRASHED"), ("hang", "TIMEOUT"),
                        ("oom", "allocation"), ("throw", "FAILED_RUNTIME"), ("notimpl", "NOT_SUPPORTED")]:
        assert re.search(rf"\b{re.escape(kind)}\b.*{stage}", h.out), (kind, h.out)


def test_an_unknown_flag_gets_a_did_you_mean():
    r = opcheck("run", "--maxfial", "3")
    assert r.rc == 4, r
    assert "opcheck: --maxfial: did you mean --maxfail?" in r.err, r


def test_strict_markers_stops_before_running_anything(tmp_path):
    marked = case("marked", "torch.neg", [[2]], ["marks: [not_registered_anywhere]"])
    write_manifest(tmp_path / "s.yaml", "s", GOOD[:2] + [marked])
    r = opcheck("run", "--manifests", tmp_path / "s.yaml", "--device", "cpu", "--strict-markers", "--metrics-json",
                tmp_path / "r.json", "--artifact-dir", tmp_path / "a")
    assert r.rc == 2, r
    assert "'not_registered_anywhere' not found in `markers` configuration option" in r.err, r
    m = metrics(tmp_path / "r.json")
    assert m["totals"] == {**m["totals"], "passed": 0, "errors": 1}, m["totals"]
    assert r.last_line.startswith("1 error in "), r


def test_ids_accept_the_model_spelling_of_model_and_the_template_command_works(tmp_path):
    r = opcheck("repro", "GPT-OSS::torch.getitem.1")
    assert r.rc == 0 and "torch.getitem.1" in r.out, r
    # The command the template's header comment shows runs (here on the cpu device, in a scratch folder).
    from conftest import SOURCE_DIR

    header = (SOURCE_DIR / "manifests" / "template.yaml").read_text().splitlines()[1]
    command = re.search(r"`opcheck ([^`]+)`", header).group(1).split()
    t = opcheck(*command, "--device", "cpu", "--artifact-dir", tmp_path / "a", cwd=tmp_path)
    assert t.rc == 0, t


def test_a_bundle_environment_name_that_is_a_command_is_refused_and_no_command_is_printed(tmp_path):
    import subprocess
    write_manifest(tmp_path / "m.yaml", "m", [case("neg.1", "torch.neg", [[4]])])
    r = opcheck("run", "--manifests", tmp_path / "m.yaml", "--device", "loopback", "--save-failures",
                tmp_path / "b", "--artifact-dir", tmp_path / "art",
                env={"OPCHECK_LOOPBACK_FAULTS": "aten::neg=bias:1e-1"})
    assert r.rc == 1, r
    [bundle] = [p for p in (tmp_path / "b").iterdir() if p.is_dir()]
    facts_file = bundle / "failure.json"
    facts = json.loads(facts_file.read_text())
    assert facts["environment"] == {"OPCHECK_LOOPBACK_FAULTS": "aten::neg=bias:1e-1"}, facts
    # The recorded value, with shell syntax in it, stays one quoted word.
    facts["environment"]["OPCHECK_LOOPBACK_FAULTS"] = "aten::neg=bias:1e-1;$(touch PWNED_VALUE)"
    facts_file.write_text(json.dumps(facts))
    r = opcheck("repro", "m::neg.1", "--bundle", tmp_path / "b")
    assert r.rc == 0, r
    assert "OPCHECK_LOOPBACK_FAULTS='aten::neg=bias:1e-1;$(touch PWNED_VALUE)' " in r.out, r
    for hostile, says in (("A;touch PWNED;B", "'A;touch PWNED;B' is not an environment variable name"),
                          ("BASH_ENV", "'BASH_ENV' is not a variable opcheck records for a rerun")):
        facts["environment"] = {hostile: "x", "OPCHECK_LOOPBACK_FAULTS": "aten::neg=bias:1e-1"}
        facts_file.write_text(json.dumps(facts))
        r = opcheck("repro", "m::neg.1", "--bundle", tmp_path / "b", cwd=tmp_path)
        # What was printed, run by a shell as a user pasting it would, creates nothing.
        subprocess.run(["sh", "-c", r.out], cwd=tmp_path, timeout=300, capture_output=True)
        assert not (tmp_path / "PWNED").exists(), r
        assert r.rc == 2, r
        assert f"{facts_file}: error: /environment: {says}" in r.err, r
        assert "Fix: " in r.err, r
        assert r.out == "", r  # no command to paste
        r = opcheck("repro", "m::neg.1", "--bundle", tmp_path / "b", "--python")
        assert r.rc == 2 and f"{facts_file}: error: /environment: {says}" in r.err, r


def test_a_status_config_that_excludes_every_case_exits_5_as_an_empty_selection_does(tmp_path):
    write_manifest(tmp_path / "p.yaml", "p", GOOD)
    common = ("run", "--manifests", tmp_path / "p.yaml", "--device", "cpu", "--artifact-dir", tmp_path / "a")
    k = opcheck(*common, "-k", "nothing_matches_this")
    assert k.rc == 5, k
    (tmp_path / "all.yaml").write_text('rules:\n  - id: "*"\n    status: exclude\n')
    r = opcheck(*common, "--config", tmp_path / "all.yaml", "--metrics-json", tmp_path / "m.json")
    assert r.rc == 5, r  # as -k above: nothing ran
    assert r.last_line.startswith("3 deselected in "), r
    assert metrics(tmp_path / "m.json")["totals"]["total"] == 0
    # A config that leaves one case runs it: exit 0.
    (tmp_path / "two.yaml").write_text('rules:\n  - id: "p::add.*"\n    status: exclude\n'
                                       '  - id: "p::neg.*"\n    status: exclude\n')
    r = opcheck(*common, "--config", tmp_path / "two.yaml")
    assert r.rc == 0 and r.last_line.startswith("1 passed, 2 deselected in "), r
