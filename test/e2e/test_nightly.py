"""Nightly-scale behaviour on small synthetic manifests: reports, shards + merge, kill + resume, last-failed, diff."""
import json
import os
import re
import pathlib
import signal
import subprocess
import time
import xml.etree.ElementTree as ET

import pytest

from conftest import BIN, case, opcheck, write_manifest
from synth import generate

OUTCOMES = ["passed", "failed", "skipped", "xfailed", "xpassed", "errors"]


@pytest.fixture(scope="module")
def manifests(tmp_path_factory):
    d = tmp_path_factory.mktemp("synth")
    generate(d, models=3, cases=40, dup=0.3, seed=11)
    return d


def outcomes(metrics_path):
    m = json.loads(pathlib.Path(metrics_path).read_text())
    return {c["id"]: (c["outcome"], c["stage"]) for c in m["cases"]}, m


def test_reports_agree_with_each_other_and_the_summary(manifests, tmp_path):
    r = opcheck("run", "--manifests", manifests, "--device", "cpu", "--junit-xml", tmp_path / "r.xml",
                "--metrics-json", tmp_path / "r.json", "--artifact-dir", tmp_path / "art")
    assert r.rc == 0, r
    by_id, m = outcomes(tmp_path / "r.json")
    assert len(by_id) == 120
    assert m["totals"]["passed"] == 120
    assert r.last_line.startswith("120 passed in "), r
    root = ET.parse(tmp_path / "r.xml").getroot()
    suites = root.findall("testsuite")
    assert [s.get("name") for s in suites] == ["opcheck"]
    assert sorted({tc.get("classname") for tc in root.iter("testcase")}) == ["synth_0", "synth_1", "synth_2"]
    assert int(suites[0].get("tests")) == 120
    dedup = [tc for tc in root.iter("testcase")
             if any(p.get("name") == "deduplicated_from" and p.get("value") for p in tc.iter("property"))]
    assert len(dedup) == m["dedupe"]["duplicates_served"] > 0
    journal = (tmp_path / "art" / "journal.jsonl").read_text().splitlines()
    assert len(journal) >= 120


def test_three_shards_merged_equal_the_unsharded_run(manifests, tmp_path):
    whole = opcheck("run", "--manifests", manifests, "--device", "cpu", "--metrics-json", tmp_path / "whole.json",
                    "--artifact-dir", tmp_path / "a")
    assert whole.rc == 0, whole
    shard_files = []
    for i in range(3):
        p = tmp_path / f"shard{i}.json"
        r = opcheck("run", "--manifests", manifests, "--device", "cpu", "--shard", f"{i}/3", "--metrics-json", p,
                    "--artifact-dir", tmp_path / f"s{i}")
        assert r.rc == 0, r
        shard_files.append(p)
    m = opcheck("merge", *shard_files, "--metrics-json", tmp_path / "merged.json", "--junit-xml", tmp_path / "m.xml")
    assert m.rc == 0, m
    a, ma = outcomes(tmp_path / "whole.json")
    b, mb = outcomes(tmp_path / "merged.json")
    assert a == b
    assert ma["totals"] == mb["totals"]
    assert ma["dedupe"]["unique"] == mb["dedupe"]["unique"]


def test_merged_shards_write_the_html_page_of_the_whole_run(tmp_path):
    """merge --html writes the page one run of every case writes: its summary, and each case of each shard."""
    cases = [case(f"neg.{i}", "torch.neg", [[i + 1]]) for i in range(8)]
    cases += [case(f"abs.{i}", "torch.abs", [[i + 1]]) for i in range(4)]
    manifest = write_manifest(tmp_path / "m.yaml", "m", cases)
    faults = {"OPCHECK_LOOPBACK_FAULTS": "aten::neg=bias:1"}  # every neg case fails, so the page lists it
    shards = []
    for i in range(2):
        shards.append(tmp_path / f"shard-{i}.json")
        r = opcheck("run", "--manifests", manifest, "--device", "loopback", "--shard", f"{i}/2", "--metrics-json",
                    shards[-1], "--artifact-dir", tmp_path / f"art{i}", env=faults)
        assert r.rc == 1, r
    per_shard = [{c["id"] for c in json.loads(s.read_text())["cases"]} for s in shards]
    assert all(per_shard) and not (per_shard[0] & per_shard[1]), per_shard  # each shard ran some, none twice
    page = tmp_path / "merged" / "nightly.html"  # its folder is made, as run makes it
    m = opcheck("merge", *shards, "--html", page, "--junit-dir", tmp_path / "junit")
    assert m.rc == 1, m  # as the unsharded run would exit
    assert m.last_line.startswith("8 failed, 4 passed in "), m
    html = page.read_text()
    summary = re.search(r'<div class="summary" id="summary-line">([^<]*)</div>', html)
    assert summary and summary.group(1) == m.last_line, (summary and summary.group(1), m.last_line)
    failing = set(re.findall(r'<tr data-id="([^"]+)" data-model="m" data-outcome="failed"', html))
    assert failing == {f"m::neg.{i}" for i in range(8)}, failing
    assert re.search(r'data-kpi="passed" data-value="4"', html), html[:3000]
    assert (tmp_path / "junit" / "m.xml").exists()  # every report a run writes: --junit-dir too


def test_env_sharding_like_googletest(manifests, tmp_path):
    ids = set()
    for i in range(2):
        r = opcheck("run", "--manifests", manifests, "--device", "cpu", "--metrics-json", tmp_path / f"e{i}.json",
                    "--artifact-dir", tmp_path / f"e{i}", env={"OPCHECK_SHARD_INDEX": str(i), "OPCHECK_TOTAL_SHARDS": "2"})
        assert r.rc == 0, r
        got, _ = outcomes(tmp_path / f"e{i}.json")
        assert not (ids & set(got))
        ids |= set(got)
    assert len(ids) == 120


def test_killed_run_resumes_to_the_same_result(manifests, tmp_path):
    # Slow cases (fp64 matmuls) keep the run busy long enough to be killed halfway on any machine.
    d = tmp_path / "m"
    d.mkdir()
    for f in manifests.iterdir():
        (d / f.name).write_text(f.read_text())
    heavy = ["model: heavy", "defaults: {dtype: fp64}", "cases:"]
    for i in range(40):
        heavy += [f"  - name: matmul.{i}", "    op: torch.matmul", f"    seed: {i}", "    inputs:",
                  "      - tensor: {shape: [400, 400]}", "      - tensor: {shape: [400, 400]}"]
    # Loaded last (files load in name order): the fast cases are done before the kill.
    (d / "zz_heavy.yaml").write_text("\n".join(heavy) + "\n")
    total = 120 + 40

    full = opcheck("run", "--manifests", d, "--device", "cpu", "--metrics-json", tmp_path / "full.json",
                   "--artifact-dir", tmp_path / "full")
    assert full.rc == 0, full
    art = tmp_path / "killed"
    env = dict(os.environ, NO_COLOR="1")
    proc = subprocess.Popen([str(BIN), "run", "--manifests", str(d), "--device", "cpu", "-j", "1",
                             "--artifact-dir", str(art)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    journal = art / "journal.jsonl"
    deadline = time.time() + 300
    while time.time() < deadline and proc.poll() is None:
        if journal.exists() and len(journal.read_text().splitlines()) > 125:
            break
        time.sleep(0.005)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    done_before = len(journal.read_text().splitlines()) - 1  # the first line is the run header
    assert 0 < done_before < total, "the run finished before it could be killed"
    r = opcheck("run", "--manifests", d, "--device", "cpu", "--resume", "--artifact-dir", art,
                "--metrics-json", tmp_path / "resumed.json")
    assert r.rc == 0, r
    assert "results reused" in r.err, r
    a, _ = outcomes(tmp_path / "full.json")
    b, _ = outcomes(tmp_path / "resumed.json")
    assert a == b and len(a) == total


def not_run_of(last_line, why):
    m = re.search(r"(\d+) not run \(" + why + r"\)", last_line)
    return int(m.group(1)) if m else None


def test_deadline_stops_cleanly_with_valid_reports(manifests, tmp_path):
    r = opcheck("run", "--manifests", manifests, "--device", "cpu", "--deadline", "0.001s", "--metrics-json",
                tmp_path / "d.json", "--artifact-dir", tmp_path / "d")
    assert "stopped early: deadline reached" in r.out, r
    assert r.rc == 2, r  # pytest's "interrupted"
    by_id, m = outcomes(tmp_path / "d.json")
    not_run = not_run_of(r.last_line, "deadline")
    assert not_run and not_run > 0, r
    assert m["run"]["not_run"] == not_run and m["run"]["stopped_by"] == "deadline"
    assert len(by_id) == 120, r  # every selected case is reported, those not run as skipped
    assert sum(c["message"] == "not run: the run stopped (deadline reached)" for c in m["cases"]) == not_run


def test_maxfail_stops_after_n_failures_and_exits_1(manifests, tmp_path):
    # Every exp case fails on the loopback device; one worker, so the stop comes right after the second failure.
    r = opcheck("run", "--manifests", manifests, "--device", "loopback", "-j", "1", "--maxfail", "2",
                "--metrics-json", tmp_path / "m.json", "--artifact-dir", tmp_path / "m",
                env={"OPCHECK_LOOPBACK_FAULTS": "aten::exp=bias:1"})
    assert "stopped early: maxfail reached (2)" in r.out, r
    assert r.rc == 1, r  # pytest's exit code after --maxfail: tests failed
    by_id, m = outcomes(tmp_path / "m.json")
    failed = [i for i, (o, _) in by_id.items() if o == "failed"]
    # The unique case whose failure reached the limit fails every occurrence it stands for (so 2 or a few more), and
    # the run stopped before every exp case had failed.
    exp_total = sum(f.read_text().count("op: torch.exp") for f in pathlib.Path(manifests).glob("*.yaml"))
    assert 2 <= len(failed) < exp_total, (len(failed), exp_total, r)
    assert all(stage == "INCORRECT_RESULT" for o, stage in by_id.values() if o == "failed")
    not_run = not_run_of(r.last_line, "maxfail")
    assert not_run and not_run > 0, r
    assert m["run"]["not_run"] == not_run and m["run"]["stopped_by"] == "maxfail"
    assert len(by_id) == 120, r  # every selected case is reported, those not run as skipped
    assert sum(c["message"] == "not run: the run stopped (maxfail reached (2))" for c in m["cases"]) == not_run
    assert f"{len(failed)} failed" in r.last_line, r


def test_diff_flags_regressions(manifests, tmp_path):
    base = tmp_path / "base.json"
    assert opcheck("run", "--manifests", manifests, "--device", "cpu", "--metrics-json", base,
                   "--artifact-dir", tmp_path / "b").rc == 0
    same = opcheck("diff", base, base)
    assert same.rc == 0, same
    m = json.loads(base.read_text())
    m["cases"][0]["outcome"] = "failed"
    m["cases"][0]["stage"] = "INCORRECT_RESULT"
    worse = tmp_path / "worse.json"
    worse.write_text(json.dumps(m))
    d = opcheck("diff", base, worse)
    assert d.rc == 1, d
    assert m["cases"][0]["id"] in d.out


@pytest.fixture(scope="module")
def gpt_oss_nights(tmp_path_factory):
    """The bundled gpt_oss manifests, one night on the loopback and one on the CPU: every case passes on both."""
    d = tmp_path_factory.mktemp("nights")
    nights = {}
    for device in ("loopback", "cpu"):
        nights[device] = d / f"{device}.json"
        r = opcheck("run", "--model", "gpt_oss", "--device", device, "-q", "--metrics-json", nights[device],
                    "--artifact-dir", d / device)
        assert r.rc == 0, r
    return nights


DEVICE_CHANGED = ("opcheck diff: the device changed: loopback (privateuseone:0) in the old run, cpu in the new; "
                  "the verdicts below are of different devices")


def test_diff_of_nights_on_different_devices_is_refused_naming_both(gpt_oss_nights):
    refused = opcheck("diff", gpt_oss_nights["loopback"], gpt_oss_nights["cpu"])
    assert refused.rc == 2, refused
    lines = refused.out.splitlines()
    assert lines[0] == DEVICE_CHANGED, refused
    assert lines[1] == "  Fix: compare runs on one device, or pass --allow-device-change to compare them anyway"
    allowed = opcheck("diff", gpt_oss_nights["loopback"], gpt_oss_nights["cpu"], "--allow-device-change")
    assert allowed.rc == 0, allowed  # every case passed on both: no regression
    lines = allowed.out.splitlines()
    assert lines[0] == DEVICE_CHANGED, allowed
    assert lines[1].startswith("opcheck diff: 0 regressions, "), allowed


def test_baseline_of_another_device_is_refused_unless_allowed(gpt_oss_nights, tmp_path):
    args = ("run", "--model", "gpt_oss", "--device", "cpu", "-q", "--baseline", gpt_oss_nights["loopback"])
    refused = opcheck(*args, "--artifact-dir", tmp_path / "a")
    assert refused.rc == 2, refused
    assert DEVICE_CHANGED + "\n  Fix: compare runs on one device" in refused.out, refused
    assert re.match(r"\d+ passed in ", refused.last_line), refused  # the summary line stays last
    allowed = opcheck(*args, "--allow-device-change", "--artifact-dir", tmp_path / "b")
    assert allowed.rc == 0, allowed
    assert DEVICE_CHANGED + "\nopcheck diff: 0 regressions" in allowed.out, allowed


def test_diff_notes_a_new_libtorch_and_device_library_without_refusing(gpt_oss_nights, tmp_path):
    m = json.loads(gpt_oss_nights["loopback"].read_text())
    old_torch, old_digest = m["run"]["torch_version"], m["run"]["device_lib_sha256"]
    assert old_torch and old_digest, m["run"]
    m["run"]["torch_version"] = "0.0.1"
    m["run"]["device_lib_sha256"] = "ab" * 32
    older = tmp_path / "older.json"
    older.write_text(json.dumps(m))
    d = opcheck("diff", older, gpt_oss_nights["loopback"])
    assert d.rc == 0, d
    assert d.out.splitlines()[:3] == [
        f"opcheck diff: note: device library digest changed: abababababab -> {old_digest[:12]}",
        f"opcheck diff: note: libtorch version changed: 0.0.1 -> {old_torch}",
        "opcheck diff: 0 regressions, 0 fixed, 0 added, 0 removed, 0 other changes "
        f"({len(m['cases'])} -> {len(m['cases'])} cases)"], d


def test_results_cache_serves_unchanged_cases_only_for_the_same_device(manifests, tmp_path):
    cache = tmp_path / "cache.jsonl"
    first = opcheck("run", "--manifests", manifests, "--device", "cpu", "--results-cache", cache,
                    "--metrics-json", tmp_path / "1.json", "--artifact-dir", tmp_path / "a")
    assert first.rc == 0, first
    again = opcheck("run", "--manifests", manifests, "--device", "cpu", "--results-cache", cache, "--reuse-results",
                    "--metrics-json", tmp_path / "2.json", "--artifact-dir", tmp_path / "b")
    assert again.rc == 0, again
    _, m1 = outcomes(tmp_path / "1.json")
    _, m2 = outcomes(tmp_path / "2.json")
    assert f"{m1['dedupe']['unique']} unchanged cases served" in again.err, again
    assert outcomes(tmp_path / "1.json")[0] == outcomes(tmp_path / "2.json")[0]
    # Without --reuse-results the cache is only written; on another device it is not used.
    other = opcheck("run", "--manifests", manifests, "--device", "loopback", "--results-cache", cache,
                    "--reuse-results", "--artifact-dir", tmp_path / "c")
    assert other.rc == 0, other
    assert "unchanged cases served" not in other.err and "not reused" in other.err, other


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_interrupted_run_writes_partial_valid_reports_and_exits_2(tmp_path, sig):
    heavy = ["model: heavy", "defaults: {dtype: fp64}", "cases:"]
    for i in range(200):
        heavy += [f"  - name: matmul.{i}", "    op: torch.matmul", f"    seed: {i}", "    inputs:",
                  "      - tensor: {shape: [400, 400]}", "      - tensor: {shape: [400, 400]}"]
    (tmp_path / "heavy.yaml").write_text("\n".join(heavy) + "\n")
    art = tmp_path / "art"
    # Its own process group, signalled as a whole, as a CI runner cancelling a job does.
    proc = subprocess.Popen([str(BIN), "run", "--manifests", str(tmp_path / "heavy.yaml"), "--device", "cpu",
                             "--metrics-json", str(tmp_path / "m.json"), "--junit-xml", str(tmp_path / "j.xml"),
                             "--artifact-dir", str(art)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=dict(os.environ, NO_COLOR="1"), start_new_session=True)
    journal = art / "journal.jsonl"
    deadline = time.time() + 120
    while time.time() < deadline and proc.poll() is None:
        if journal.exists() and len(journal.read_text().splitlines()) > 3:
            break
        time.sleep(0.005)
    os.killpg(proc.pid, sig)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 2, (out, err)
    assert "stopped early: interrupted" in out
    by_id, m = outcomes(tmp_path / "m.json")
    # Every selected case is reported: what ran as it was, the rest skipped as not run.
    assert len(by_id) == 200 and 0 < m["run"]["not_run"] < 200, m["run"]
    assert m["run"]["interrupted"] is True
    not_run = {c["id"] for c in m["cases"] if c["message"] == "not run: the run stopped (interrupted)"}
    assert len(not_run) == m["run"]["not_run"]
    # What ran is reported as it was: an interrupted worker is not a crash of the device.
    assert all(o == ("passed", "PASSED") for i, o in by_id.items() if i not in not_run), by_id
    root = ET.parse(tmp_path / "j.xml").getroot()
    assert sum(int(s.get("tests")) for s in root.findall("testsuite")) == len(by_id)
