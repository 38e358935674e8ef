"""Nothing opcheck writes replaces what it reads or another of its outputs; what a run needs at its end is found
before its first case; a merge takes the shards of one run's manifests and selection, each holding the case list it
planned; messages echo at most 120 bytes of what they quote and name what a path is (docs/design.md: Reliability)."""
import json
import os

import numpy as np
import pytest

from conftest import case, metrics, opcheck, write_manifest

CASES = [case("neg.1", "torch.neg", [[4]]), case("abs.1", "torch.abs", [[3]])]


def nothing_ran(r, art):
    """The run stopped before its first case: no journal, no summary of cases."""
    return not (art / "journal.jsonl").exists() and "passed" not in r.out


@pytest.mark.parametrize("flag", ["--junit-xml", "--metrics-json", "--html", "--results-cache"])
def test_no_report_or_cache_replaces_the_manifest(tmp_path, flag):
    m = write_manifest(tmp_path / "m.yaml", "m", CASES)
    before = m.read_bytes()
    (tmp_path / "sub").mkdir()
    spelt = tmp_path / "sub" / ".." / "m.yaml"  # the same file, spelt another way
    art = tmp_path / "art"
    r = opcheck("run", "--manifests", m, "--device", "cpu", flag, spelt, "--artifact-dir", art)
    assert r.rc == 4, r
    assert f"opcheck: error: {flag} {spelt} would replace the manifest {m}, which opcheck reads\n  Fix:" in r.err, r
    assert m.read_bytes() == before and nothing_ran(r, art), r


def test_no_output_replaces_the_config_a_tensor_file_the_journal_or_another_output(tmp_path):
    np.save(tmp_path / "t.npy", np.ones(4, dtype=np.float32))
    m = write_manifest(tmp_path / "m.yaml", "m", [["  - name: neg.1", "    op: torch.neg", "    inputs:",
                                                   "      - file: t.npy"]])
    config = tmp_path / "opcheck.yaml"
    config.write_text("rules: []\n")
    kept = {p: p.read_bytes() for p in (m, config, tmp_path / "t.npy")}
    art = tmp_path / "art"
    journal = art / "journal.jsonl"
    r = opcheck("run", "--manifests", m, "--device", "cpu", "--artifact-dir", art, "--metrics-json", config,
                "--html", tmp_path / "t.npy", "--junit-xml", journal)
    assert r.rc == 4, r
    assert f"--metrics-json {config} would replace the status config {config}, which opcheck reads" in r.err, r
    assert f"--html {tmp_path / 't.npy'} would replace the tensor file of case m::neg.1 {tmp_path / 't.npy'}" in r.err, r
    assert f"the journal of --artifact-dir {journal} and --junit-xml {journal} are one file" in r.err, r
    assert all(p.read_bytes() == b for p, b in kept.items()) and not journal.exists(), r
    # Two reports on one file, and a report on the file --junit-dir writes for a model: each clash names both.
    both = tmp_path / "j" / "m.xml"
    r = opcheck("run", "--manifests", m, "--device", "cpu", "--artifact-dir", art, "--junit-xml", both,
                "--metrics-json", both, "--junit-dir", tmp_path / "j")
    assert r.rc == 4, r
    assert f"--metrics-json {both} and --junit-xml {both} are one file: one would replace the other" in r.err, r
    assert f"--junit-dir's file for model 'm' {both} and --junit-xml {both} are one file" in r.err, r
    assert nothing_ran(r, art) and not both.exists(), r


def test_a_failure_bundle_folder_never_holds_an_input(tmp_path):
    # A bundle's folder is removed before it is written: --save-failures B would have removed B/m__neg.1/m.yaml.
    d = tmp_path / "b" / "m__neg.1"
    d.mkdir(parents=True)
    m = write_manifest(d / "m.yaml", "m", CASES)
    art = tmp_path / "art"
    r = opcheck("run", "--manifests", m, "--device", "loopback", "--save-failures", tmp_path / "b",
                "--artifact-dir", art, env={"OPCHECK_LOOPBACK_FAULTS": "aten::neg=bias:1"})
    assert r.rc == 4, r
    assert (f"the manifest {m} is inside --save-failures's folder for case m::neg.1 {d}, which is removed before it "
            "is written") in r.err, r
    assert m.exists() and nothing_ran(r, art), r


@pytest.mark.parametrize("baseline", ["missing.json", "not-json.json"])
def test_an_unreadable_baseline_stops_the_run_before_its_first_case(tmp_path, baseline):
    m = write_manifest(tmp_path / "m.yaml", "m", CASES)
    (tmp_path / "not-json.json").write_text("{")
    art = tmp_path / "art"
    r = opcheck("run", "--manifests", m, "--device", "cpu", "--baseline", tmp_path / baseline, "--artifact-dir", art)
    assert r.rc == 4 and f"--baseline {tmp_path / baseline} cannot be read, so no case runs" in r.err, r
    assert nothing_ran(r, art), r


def test_junit_dir_gives_models_whose_names_map_alike_files_of_their_own(tmp_path):
    # `*` and `~` both become `_`: each file takes a digest of its model, and the run reports both.
    for i, model in enumerate(["'*'", "'~'", "plain"]):
        write_manifest(tmp_path / f"m{i}.yaml", model, [case("neg.1", "torch.neg", [[4]])])
    r = opcheck("run", "--manifests", tmp_path / "m0.yaml", tmp_path / "m1.yaml", tmp_path / "m2.yaml", "--device",
                "cpu", "--junit-dir", tmp_path / "j", "--artifact-dir", tmp_path / "art")
    assert r.rc == 0, r
    files = sorted(os.listdir(tmp_path / "j"))
    assert len(files) == 3 and "plain.xml" in files, files
    assert all(f == "plain.xml" or (f.startswith("_-") and len(f) == len("_-12345678.xml")) for f in files), files
    suites = sorted((tmp_path / "j" / f).read_text().split('<testsuite name="')[1].split('"')[0] for f in files)
    assert suites == ["*", "plain", "~"], suites


def shards(tmp_path, manifests=("s.yaml", "s.yaml"), extra=((), ())):
    """Shard i of 2 of a run on tmp_path/manifests[i] with extra[i]; their metrics files."""
    write_manifest(tmp_path / "s.yaml", "s", [case(f"neg.{i}", "torch.neg", [[2 + i]]) for i in range(4)])
    write_manifest(tmp_path / "t.yaml", "s", [case(f"neg.{i}", "torch.neg", [[3 + i]]) for i in range(4)])
    files = []
    for i in range(2):
        files.append(tmp_path / f"shard{i}.json")
        r = opcheck("run", "--manifests", tmp_path / manifests[i], "--device", "cpu", "--shard", f"{i}/2", *extra[i],
                    "--metrics-json", files[-1], "--artifact-dir", tmp_path / f"a{i}")
        assert r.rc == 0, r
    return files


def edit(path, change):
    doc = json.loads(path.read_text())
    change(doc)
    path.write_text(json.dumps(doc))


def test_merge_refuses_an_emptied_shard_and_a_negative_count_naming_the_file(tmp_path):
    a, b = shards(tmp_path)
    merged = tmp_path / "m.json"
    # No report of merge or report replaces the file it reads.
    kept = a.read_bytes()
    r = opcheck("merge", a, b, "--metrics-json", a)
    assert r.rc == 4 and f"--metrics-json {a} would replace the shard {a}, which opcheck reads" in r.err, r
    r = opcheck("report", a, "--html", a)
    assert r.rc == 4 and f"--html {a} would replace the metrics file {a}, which opcheck reads" in r.err, r
    assert a.read_bytes() == kept
    assert opcheck("merge", a, b, "--metrics-json", merged).rc == 0

    def empty(doc):
        doc["cases"] = []
        for k, v in doc["totals"].items():
            if isinstance(v, int):
                doc["totals"][k] = 0
    edit(b, empty)
    r = opcheck("merge", a, b, "--metrics-json", merged)
    assert r.rc == 2, r
    assert f"{b}: error: /cases: the case list (0 occurrences) is not the one the run planned" in r.err, r
    a, b = shards(tmp_path)
    edit(b, lambda doc: doc["run"].update(not_run=-5))
    r = opcheck("merge", a, b, "--metrics-json", merged)
    assert r.rc == 2 and "skipped" not in r.out, r
    assert f"{b}: error: /run/not_run: a count cannot be negative, found -5" in r.err, r


def test_merge_refuses_shards_of_other_manifests_or_another_selection(tmp_path):
    a, b = shards(tmp_path, manifests=("s.yaml", "t.yaml"))
    r = opcheck("merge", a, b, "--metrics-json", tmp_path / "m.json")
    assert r.rc == 2, r
    assert f"{b}: error: /run/manifests: shard 2 read {tmp_path / 't.yaml'}, which shard 1 did not" in r.err, r
    assert f"\n  shard 2: {b}\n  shard 1: {a}\n" in r.err and not (tmp_path / "m.json").exists(), r
    a, b = shards(tmp_path, extra=((), ("-k", "not neg.3")))
    r = opcheck("merge", a, b, "--metrics-json", tmp_path / "m.json")
    assert r.rc == 2, r
    assert f"{b}: error: /run/selection_sha256: shard 2 ran another selection of cases than shard 1" in r.err, r


def test_messages_echo_at_most_120_bytes_of_a_huge_value(tmp_path):
    m = write_manifest(tmp_path / "m.yaml", "m", CASES)
    huge = "x " * 60000 + ")"
    for flags, said in [(["-k", huge], "wrong expression passed to '-k': " + huge[:120] + "... (120001 bytes)"),
                        (["-m", "y" * 120000], "-m names mark '" + "y" * 120 + "... (120000 bytes)'"),
                        (["--model", "z" * 120000], "unknown model '" + "z" * 120 + "... (120000 bytes)'")]:
        r = opcheck("list-cases", "--manifests", m, *flags)
        assert said in r.err and len(r.err) < 4000, (flags[0], len(r.err), r.err[:600])


@pytest.mark.parametrize("kind", ["symlink loop", "FIFO"])
def test_a_device_library_that_is_a_symlink_loop_or_a_fifo_is_named_as_such(tmp_path, kind):
    m = write_manifest(tmp_path / "m.yaml", "m", CASES)
    lib = tmp_path / "libdev.so"
    if kind == "FIFO":
        os.mkfifo(lib)
    else:
        os.symlink(lib, lib)
    r = opcheck("run", "--manifests", m, "--device-lib", lib, "--artifact-dir", tmp_path / "art")
    said = "is a symbolic link loop" if kind != "FIFO" else "is a FIFO (named pipe), not a regular file"
    assert r.rc == 4 and f"device library '{lib}' {said}" in r.err, r
    assert "does not exist" not in r.err, r


def test_repro_agrees_with_validate_on_data_a_dtype_cannot_hold(tmp_path):
    # validate and run refuse `data: [300]` as int8 at its line (test_containment.py); repro --python writes no
    # script that would raise or wrap it, it says the same located error.
    m = write_manifest(tmp_path / "d.yaml", "d", [["  - name: neg", "    op: torch.neg", "    inputs:",
                                                   "      - tensor: {shape: [1], dtype: int8, data: [300]}"]])
    r = opcheck("repro", "d::neg", "--python", "--manifests", m)
    assert r.rc == 4 and f"{m}:7:" in r.err and "'data' value 300 overflows int8 [case d::neg]" in r.err, r
    assert "torch" not in r.out, r
