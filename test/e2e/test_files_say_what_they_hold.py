"""Files that say what they hold, through the real binary: a partial merge writes its missing shards into the
metrics and the JUnit, `diff` of runs with different case sets says so first and fails unless told otherwise, and
`report --history` skips what cannot be a run of the trend with a warning each, never following a link out of the
folder nor quoting the bytes of a file it could not parse."""
import os
import xml.etree.ElementTree as ET

from conftest import case, metrics, opcheck, write_manifest


def six_cases(tmp_path):
    return write_manifest(tmp_path / "m.yaml", "m", [case(f"neg.{i}", "torch.neg", [[i + 1]]) for i in range(6)])


def shard(manifest, tmp_path, i, n):
    out = tmp_path / f"s{i}.json"
    run = opcheck("run", "--manifests", manifest, "--device", "cpu", "--shard", f"{i}/{n}", "--metrics-json", out,
                  "--artifact-dir", tmp_path / f"art{i}")
    assert run.rc == 0, run
    return out


def test_a_partial_merge_writes_its_missing_shards_into_the_metrics_and_the_junit(tmp_path):
    s0 = shard(six_cases(tmp_path), tmp_path, 0, 3)
    merged = opcheck("merge", s0, "--allow-partial", "--metrics-json", tmp_path / "part.json", "--junit-xml",
                     tmp_path / "part.xml")
    assert merged.rc == 0, merged
    m = metrics(tmp_path / "part.json")
    held = len(m["cases"])
    assert 0 < held < 6, m["cases"]
    note = (f"partial merge: 1 of 3 shards (0/3); missing 1/3, 2/3, whose {6 - held} occurrences are not run and not "
            "in these reports")
    assert m["run"]["warnings"] == [note], m["run"]["warnings"]
    assert m["run"]["not_run"] == 6 - held, m["run"]
    suite = ET.parse(tmp_path / "part.xml").getroot().find("testsuite")
    props = [(p.get("name"), p.get("value")) for p in suite.find("properties")]
    assert ("warning", note) in props, props
    assert any(n == "not_run" and v.startswith(f"{6 - held} ") for n, v in props), props
    assert note in merged.err, merged


def test_diff_of_runs_with_different_case_sets_says_so_first_and_fails(tmp_path):
    manifest = six_cases(tmp_path)
    s0, s1 = shard(manifest, tmp_path, 0, 2), shard(manifest, tmp_path, 1, 2)
    n0, n1 = len(metrics(s0)["cases"]), len(metrics(s1)["cases"])
    d = opcheck("diff", s0, s1)
    assert d.rc == 2, d
    first = d.out.splitlines()[0]
    assert first == (f"opcheck diff: the runs hold different case sets: {n0} only in the old run, {n1} only in the "
                     "new, 0 in both; the pass rates below compare different cases"), d.out
    assert "Fix: diff runs of one selection" in d.out, d.out
    allowed = opcheck("diff", s0, s1, "--allow-different-cases")
    assert allowed.rc == 0 and allowed.out.splitlines()[0] == first and "Fix:" not in allowed.out, allowed
    same = opcheck("diff", s0, s0)
    assert same.rc == 0 and "different case sets" not in same.out, same


def test_report_history_skips_what_is_not_a_run_of_the_folder_and_quotes_no_bytes(tmp_path):
    manifest = six_cases(tmp_path)
    current = tmp_path / "current.json"
    assert opcheck("run", "--manifests", manifest, "--device", "cpu", "--metrics-json", current,
                   "--artifact-dir", tmp_path / "art_c").rc == 0
    hist = tmp_path / "hist"
    hist.mkdir()
    earlier = opcheck("run", "--manifests", manifest, "--device", "cpu", "--metrics-json", hist / "earlier.json",
                      "--artifact-dir", tmp_path / "art_e")
    assert earlier.rc == 0, earlier
    secret = tmp_path / "secret.txt"
    secret.write_text("rootsecret:x:0:0\n")
    (hist / "passwd.json").symlink_to(secret)  # a link out of the folder
    (hist / "gone.json").symlink_to(tmp_path / "nothing.json")  # a dangling link
    os.mkfifo(hist / "pipe.json")  # would block a read forever
    (hist / "bad.json").write_text("rsecretbytes{")
    rep = opcheck("report", current, "--history", hist, "--html", tmp_path / "r.html", timeout=120)
    assert rep.rc == 0, rep
    prefix = "opcheck report: warning: skipped "
    skipped = dict(line[len(prefix):].split(": ", 1) for line in rep.err.splitlines() if line.startswith(prefix))
    assert skipped == {
        str(hist / "bad.json"): "not a readable metrics file: not a valid JSON file (syntax error at byte 1)",
        str(hist / "gone.json"): "a symbolic link whose target does not exist",
        str(hist / "passwd.json"): "a symbolic link out of the folder (not followed)",
        str(hist / "pipe.json"): "a FIFO (named pipe), not a regular file",
    }, rep.err
    assert "secret" not in rep.out + rep.err, rep
    assert "trend over 2 runs (4 files of" in rep.out, rep
