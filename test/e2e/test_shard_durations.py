"""--durations-from: shards split by the case times an earlier run recorded (lit's shard-by-time), cases the file does
not know estimated from their size, each shard's expected wall time, the file's digest in the identity (merge refuses
shards split by different files), and a bad file refused before any case runs."""
import hashlib
import json
import re

import pytest

from conftest import opcheck, write_manifest
from synth import case_lines

# Twelve calls whose recorded times run against their sizes: the biggest tensors are the quickest. A split by size
# spreads the big ones and piles the slow small ones together; a split by time must not.
SIZES = [4096, 2048, 1024, 512, 256, 128, 64, 32, 16, 8, 4, 2]
TIMES_MS = [5, 5, 10, 10, 20, 40, 80, 300, 500, 700, 900, 1200]


def sized_cases(sizes, seed0=1):
    return [case_lines(f"c{i}", "torch.exp", [n, 64], seed0 + i) for i, n in enumerate(sizes)]


def recorded_run(tmp_path, manifests, times_ms, name="recorded.json"):
    """A real run's metrics file whose per-case times are set to `times_ms` (by case name), the rest as they came."""
    out = tmp_path / name
    r = opcheck("run", "--manifests", manifests, "--device", "loopback", "-q", "--metrics-json", out,
                "--artifact-dir", tmp_path / ("art-" + name))
    assert r.rc == 0, r
    m = json.loads(out.read_text())
    for c in m["cases"]:
        if c["name"] in times_ms:
            t = c["timings"]
            for k in t:
                t[k] = 0.0
            t["device_ms"] = float(times_ms[c["name"]])
    out.write_text(json.dumps(m, indent=1) + "\n")
    return out


def collected(manifests, *args):
    """The case names --collect-only lists for one shard, and stderr."""
    r = opcheck("run", "--manifests", manifests, "--collect-only", *args)
    assert r.rc == 0, r
    names = [l.split()[0].split("::")[1] for l in r.out.splitlines() if "::" in l and not l.startswith(" ")]
    return names, r.err


def expected_line(err):
    m = re.search(r"expected wall time of the cases (?:per shard )?at -j (\d+) \(start-up not counted\):(.*)", err)
    assert m, err
    return [float(s) for s in re.findall(r"([0-9.]+)s\b", m.group(2))]


@pytest.fixture(scope="module")
def timed(tmp_path_factory):
    """The twelve calls' manifest folder, a recorded run of them (metrics file) with TIMES_MS, and the times by name."""
    tmp = tmp_path_factory.mktemp("timed")
    d = tmp / "m"
    d.mkdir()
    write_manifest(d / "timed.yaml", "timed", sized_cases(SIZES))
    times = {f"c{i}": t for i, t in enumerate(TIMES_MS)}
    return d, recorded_run(tmp, d, times), times


def test_split_by_recorded_times_evens_the_shards_where_a_split_by_size_does_not(timed):
    manifests, durations, times = timed
    spreads = {}
    for how, extra in (("size", []), ("time", ["--durations-from", durations])):
        shards = [collected(manifests, "--shard", f"{i}/3", *extra)[0] for i in range(3)]
        every = sorted(n for s in shards for n in s)
        assert every == sorted(times), (how, shards)  # every case in exactly one shard
        loads = [sum(times[n] for n in s) for s in shards]
        spreads[how] = max(loads) - min(loads)
    # Greedy longest-first over these times ends 35 ms apart (1280, 1245, 1245 ms); by size, seconds apart.
    assert spreads["time"] <= 40, spreads
    assert spreads["size"] > 10 * spreads["time"], spreads


def test_each_shard_prints_every_shards_expected_wall_time(timed):
    manifests, durations, times = timed
    _, err = collected(manifests, "--shard", "1/3", "--durations-from", durations, "-j", "2")
    assert "12 of 12 unique cases timed, 0 estimated from their size" in err, err
    loads = expected_line(err)
    assert len(loads) == 3, err
    # Summed over the shards, the expected times are the recorded ones, shared over the two workers.
    assert sum(loads) == pytest.approx(sum(times.values()) / 1000 / 2, abs=0.02), err
    assert "1/3 (this)" in err, err


def test_cases_the_file_does_not_know_are_estimated_from_their_size(tmp_path):
    d = tmp_path / "m"
    d.mkdir()
    write_manifest(d / "same.yaml", "same", sized_cases([256, 256, 256]))
    durations = recorded_run(tmp_path, d, {"c0": 400, "c1": 400, "c2": 400})
    # A fourth call of the same size the recorded run never saw (another seed: another dedupe key).
    write_manifest(d / "same.yaml", "same", sized_cases([256, 256, 256]) + [case_lines("new", "torch.exp", [256, 64], 99)])
    shards = []
    for i in range(2):
        names, err = collected(d, "--shard", f"{i}/2", "--durations-from", durations, "-j", "1")
        assert "3 of 4 unique cases timed, 1 estimated from their size" in err, err
        # Estimated at the recorded cases' seconds per byte: as long as each of them, so the shards come out even.
        assert expected_line(err) == [0.8, 0.8], err
        shards.append(names)
    assert sorted(shards[0] + shards[1]) == ["c0", "c1", "c2", "new"], shards
    assert [len(s) for s in shards] == [2, 2], shards


def test_a_file_that_knows_none_of_the_cases_splits_by_size_and_says_so(timed, tmp_path):
    manifests, durations, _ = timed
    other = tmp_path / "other"
    other.mkdir()
    write_manifest(other / "other.yaml", "other", sized_cases(SIZES, seed0=500))
    by_size = [collected(other, "--shard", f"{i}/3")[0] for i in range(3)]
    by_file = []
    for i in range(3):
        names, err = collected(other, "--shard", f"{i}/3", "--durations-from", durations)
        assert "0 of 12 unique cases timed, 12 estimated from their size; none of them is in the file" in err, err
        by_file.append(names)
    assert by_file == by_size


def shard_run(tmp_path, manifests, i, n, *extra):
    out = tmp_path / f"shard{i}-{len(list(tmp_path.iterdir()))}.json"
    r = opcheck("run", "--manifests", manifests, "--device", "loopback", "-q", "--shard", f"{i}/{n}",
                "--metrics-json", out, "--artifact-dir", tmp_path / f"art{out.stem}", *extra)
    assert r.rc == 0, r
    return out


def test_the_files_digest_is_recorded_and_merge_refuses_shards_split_by_another_file(timed, tmp_path):
    manifests, durations, times = timed
    digest = hashlib.sha256(durations.read_bytes()).hexdigest()
    runs = tmp_path / "runs"
    runs.mkdir()
    s0 = shard_run(runs, manifests, 0, 2, "--durations-from", durations, "-j", "1")
    s1 = shard_run(runs, manifests, 1, 2, "--durations-from", durations, "-j", "1")
    for s in (s0, s1):
        run = json.loads(s.read_text())["run"]
        assert run["durations_sha256"] == digest
        assert run["identity"]["durations file digest"] == digest
        assert run["durations_from"] == str(durations)
        assert (run["durations_recorded"], run["durations_estimated"]) == (12, 0)
        assert run["expected_shard_s"] == pytest.approx([sum(times.values()) / 2000] * 2, abs=0.02)
    merged = opcheck("merge", s0, s1, "--metrics-json", tmp_path / "merged.json")
    assert merged.rc == 0, merged
    assert json.loads((tmp_path / "merged.json").read_text())["run"]["durations_sha256"] == digest

    # The same times in another file (one case slower): another split, so shard 1 of it does not go with shard 0.
    m = json.loads(durations.read_text())
    m["cases"][0]["timings"]["device_ms"] += 1
    other = tmp_path / "other.json"
    other.write_text(json.dumps(m))
    s1_other = shard_run(runs, manifests, 1, 2, "--durations-from", other, "-j", "1")
    s1_none = shard_run(runs, manifests, 1, 2, "-j", "1")
    for bad, then in ((s1_other, hashlib.sha256(other.read_bytes()).hexdigest()), (s1_none, "")):
        r = opcheck("merge", s0, bad, "--metrics-json", tmp_path / "refused.json")
        assert r.rc == 2, r
        assert f'shard 2 ran with durations file digest "{then}" but shard 1 with "{digest}"' in r.err, r
        assert not (tmp_path / "refused.json").exists()


def test_a_journal_splits_as_its_metrics_file_does(timed, tmp_path):
    manifests, durations, _ = timed
    art = tmp_path / "art"
    r = opcheck("run", "--manifests", manifests, "--device", "loopback", "-q", "--artifact-dir", art,
                "--metrics-json", tmp_path / "m.json")
    assert r.rc == 0, r
    journal = art / "journal.jsonl"
    names_j, err = collected(manifests, "--shard", "0/3", "--durations-from", journal)
    assert "12 of 12 unique cases timed" in err, err
    names_m, _ = collected(manifests, "--shard", "0/3", "--durations-from", tmp_path / "m.json")
    assert names_j == names_m


def corrupt_journal(tmp_path, manifests):
    art = tmp_path / "art"
    r = opcheck("run", "--manifests", manifests, "--device", "loopback", "-q", "--artifact-dir", art)
    assert r.rc == 0, r
    lines = (art / "journal.jsonl").read_text().splitlines()
    lines[2] = lines[2][: len(lines[2]) // 2]
    bad = tmp_path / "journal.jsonl"
    bad.write_text("\n".join(lines) + "\n")
    return bad


@pytest.mark.parametrize("kind, says", [
    ("missing", r"--durations-from {path}: cannot read it: No such file or directory"),
    ("folder", r"--durations-from {path}: cannot read it: .*"),
    ("not json", r"{path}: error: not a valid JSON file"),
    ("other json", r'{path}: error: /format: not an opcheck metrics file'),
    ("bad case", r"{path}: error: /cases/0/timings: missing field \"device_ms\""),
    ("bad journal line", r"--durations-from: {path}:3: error: journal line is not valid JSON"),
])
def test_a_bad_durations_file_stops_the_run_before_any_case_with_where_and_a_fix(timed, tmp_path, kind, says):
    manifests, durations, _ = timed
    path = tmp_path / "bad.json"
    if kind == "folder":
        path.mkdir()
    elif kind == "not json":
        path.write_text('{"format": "opcheck-metrics", "version": 1,\n')
    elif kind == "other json":
        path.write_text('{"cases": []}\n')
    elif kind == "bad case":
        m = json.loads(durations.read_text())
        del m["cases"][0]["timings"]["device_ms"]
        path.write_text(json.dumps(m))
    elif kind == "bad journal line":
        path = corrupt_journal(tmp_path, manifests)
    art = tmp_path / "run-art"
    r = opcheck("run", "--manifests", manifests, "--device", "loopback", "--shard", "0/2", "--durations-from", path,
                "--metrics-json", tmp_path / "out.json", "--artifact-dir", art)
    assert r.rc == 4, r
    assert re.search(says.format(path=re.escape(str(path))), r.err), r
    assert "Fix: pass" in r.err, r
    # Before any case: no results, no reports.
    assert not (art / "journal.jsonl").exists()
    assert not (tmp_path / "out.json").exists()


def test_the_results_cache_serves_across_another_durations_file(timed, tmp_path):
    """The split is no part of what a case computes: a nightly's cache by dedupe key outlives each night's file."""
    manifests, durations, _ = timed
    m = json.loads(durations.read_text())
    m["cases"][0]["timings"]["device_ms"] += 1
    other = tmp_path / "other.json"
    other.write_text(json.dumps(m))
    cache = tmp_path / "cache.jsonl"
    for i, f in enumerate((durations, other)):
        r = opcheck("run", "--manifests", manifests, "--device", "loopback", "--durations-from", f,
                    "--results-cache", cache, "--reuse-results", "--artifact-dir", tmp_path / f"art{i}")
        assert r.rc == 0, r
    assert "12 unchanged cases served from" in r.err, r
    assert "not reused" not in r.err, r


def test_cases_recorded_as_taking_no_time_still_spread_over_the_shards(timed, tmp_path):
    manifests, durations, _ = timed
    m = json.loads(durations.read_text())
    for c in m["cases"]:
        c["timings"] = {k: 0.0 for k in c["timings"]}
    zero = tmp_path / "zero.json"
    zero.write_text(json.dumps(m))
    shards = [collected(manifests, "--shard", f"{i}/3", "--durations-from", zero)[0] for i in range(3)]
    assert [len(s) for s in shards] == [4, 4, 4], shards
