"""Reports a nightly CI can trust (issue 15), through the real binary: every problem is in the reports, one notion of
failure, early stops say what did not run, flags are checked."""
import json
import re
import xml.etree.ElementTree as ET

import pytest

from conftest import opcheck


def case(name, op, shapes, extra=()):
    lines = [f"  - name: {name}", f"    op: {op}", "    inputs:"]
    lines += [f"      - tensor: {{shape: {list(s)}}}" for s in shapes]
    return lines + [f"    {e}" for e in extra]


def write_manifest(path, model, cases):
    lines = [f"model: {model}", "defaults: {dtype: fp32}", "cases:"]
    for c in cases:
        lines += c
    path.write_text("\n".join(lines) + "\n")
    return path


def metrics(path):
    return json.loads(path.read_text())


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
        assert root.find("testsuite").get("failures") == "0"
        assert tcs["x::neg.x"].find("failure") is None
        assert n_failures == 0
        # the forgiven xpass does not count toward --maxfail 1
        assert m["totals"]["total"] == 13 and m["run"]["stopped_by"] == "", m["run"]
    else:
        assert r.rc == 1, r
        assert "XPASS x::neg.x" in r.out, r
        assert root.find("testsuite").get("failures") == "1"
        assert tcs["x::neg.x"].find("failure").get("type") == "XPASS"
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
    assert m["totals"]["total"] + m["run"]["not_run"] == 12
    assert m["run"]["stopped_by"] == "maxfail"
    assert re.search(rf"{m['run']['not_run']} not run \(maxfail\) in ", r.last_line), r
    suite = ET.parse(tmp_path / "r.xml").getroot().find("testsuite")
    assert props(suite)["not_run"] == f"{m['run']['not_run']} (maxfail)"


def test_deadline_stop_exits_2_and_says_what_did_not_run(tmp_path):
    write_manifest(tmp_path / "d.yaml", "d", [case(f"neg.{i}", "torch.neg", [[2 + i]]) for i in range(40)])
    r = opcheck("run", "--manifests", tmp_path / "d.yaml", "--device", "cpu", "--deadline", "0.000001s",
                "--metrics-json", tmp_path / "r.json", "--artifact-dir", tmp_path / "art")
    assert r.rc == 2, r
    m = metrics(tmp_path / "r.json")
    assert m["run"]["stopped_by"] == "deadline" and m["run"]["not_run"] > 0, m["run"]
    assert m["totals"]["total"] + m["run"]["not_run"] == 40
    assert re.search(rf"{m['run']['not_run']} not run \(deadline\) in ", r.last_line), r


@pytest.mark.parametrize("flags", [["--timeout", "nan"], ["--timeout", "0"], ["--timeout", "-1"], ["--timeout", "inf"],
                                   ["-j", "0"], ["-j", "-1"], ["--max-case-bytes", "-5"], ["--max-case-bytes", "0"]],
                         ids=lambda f: " ".join(f))
def test_meaningless_flag_values_are_usage_errors(tmp_path, flags):
    write_manifest(tmp_path / "u.yaml", "u", GOOD)
    r = opcheck("run", "--manifests", tmp_path / "u.yaml", "--device", "cpu", *flags, "--artifact-dir", tmp_path / "a")
    assert r.rc == 4, r
    assert flags[0] in r.err and "greater than 0" in r.err, r


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


@pytest.mark.parametrize("signals", [1, 2], ids=["one-signal-grace", "second-signal"])
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
    assert took < (12 if signals == 1 else 4), (took, err)
    assert ("grace period over" if signals == 1 else "second signal") in err, err
    m = metrics(tmp_path / "r.json")
    assert m["run"]["stopped_by"] == "signal" and m["run"]["not_run"] == 6 - m["totals"]["total"], m["run"]
    assert all(c["stage"] != "TIMEOUT" and c["stage"] != "CRASHED" for c in m["cases"]), m["cases"]
    assert re.search(r"\d+ not run \(signal\) in ", out.splitlines()[-1]), out
    assert ET.parse(tmp_path / "r.xml").getroot().find("testsuite") is not None


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
