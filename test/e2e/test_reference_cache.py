"""--reference-cache DIR (issue 25): CPU references kept across runs, through the real binary on the loopback device.
A second run reads every unchanged case's reference instead of computing it, with the verdicts of a run without the
cache; a changed case, a corrupt or a truncated entry is computed again (the latter two with a warning); the folder
keeps under its cap, least recently used out first, keeps no entry above the entry limit, and stays whole when two
shards write it at once."""
import json
import os
import subprocess

from conftest import BIN, SOURCE_DIR, opcheck, write_manifest

TEMPLATE = SOURCE_DIR / "manifests" / "template.yaml"
# Wrong results on the device for two ops, so the verdicts compared are not all "passed".
FAULTS = {"OPCHECK_LOOPBACK_FAULTS": "aten::add.Tensor=bias:1e-2;aten::neg=zeros"}
NEG_WRONG = {"OPCHECK_LOOPBACK_FAULTS": "aten::neg=zeros"}  # for CASES: their wrong_on_device case

# Cases of every output shape a reference can have: one tensor, a tuple, a list of tensors, a tensor written in
# place (add_ returns it, aliased), a file input, and one case the device gets wrong.
CASES = [
    ["  - name: mm", "    op: torch.matmul", "    inputs:", "      - tensor: {shape: [16, 8]}",
     "      - tensor: {shape: [8, 4]}"],
    ["  - name: max_dim", "    op: torch.max", "    inputs:", "      - tensor: {shape: [4, 6], init: randn}",
     "      - value: 1"],
    ["  - name: split", "    op: torch.split", "    inputs:", "      - tensor: {shape: [6, 4]}", "      - value: 2"],
    ["  - name: add_inplace", "    op: torch.Tensor.add_", "    inputs:", "      - tensor: {shape: [3, 5]}",
     "      - tensor: {shape: [3, 5]}"],
    ["  - name: wrong_on_device", "    op: torch.neg", "    inputs:", "      - tensor: {shape: [7]}"],
]


def run(tmp_path, name, manifests, cache, *flags, env=NEG_WRONG, model=None):
    out = tmp_path / name
    args = ["run", "--device", "loopback", "--metrics-json", out / "m.json", "--artifact-dir", out / "art", "-j", "2"]
    for m in manifests:
        args += ["--manifests", m]
    if model:
        args += ["--model", model]
    if cache is not None:
        args += ["--reference-cache", cache]
    r = opcheck(*args, *flags, env=env, timeout=600)
    assert (out / "m.json").exists(), r
    return r, json.loads((out / "m.json").read_text())


def verdicts(m):
    """Per case: what a user reads of its verdict (stage, outcome, message, figures)."""
    return {c["id"]: (c["stage"], c["outcome"], c["message"], json.dumps(c["figures"], sort_keys=True))
            for c in m["cases"]}


def sources(m):
    return {c["id"]: c.get("reference_cache", {}).get("source") for c in m["cases"]}


def cache_warnings(m):
    return [w for w in m["run"]["warnings"] if "reference cache" in w]


def entries(cache):
    return sorted(p.name for p in cache.iterdir() if p.name.endswith(".ref"))


def own_manifest(tmp_path, cases=CASES):
    return write_manifest(tmp_path / "cached.yaml", "cached", cases)


def test_second_run_reads_every_reference_from_the_cache_with_the_verdicts_of_a_run_without_it(tmp_path):
    cache = tmp_path / "refs"
    _, plain = run(tmp_path, "plain", [TEMPLATE], None, env=FAULTS, model="template")
    _, first = run(tmp_path, "first", [TEMPLATE], cache, env=FAULTS, model="template")
    _, second = run(tmp_path, "second", [TEMPLATE], cache, env=FAULTS, model="template")
    assert any(v[0] == "INCORRECT_RESULT" for v in verdicts(plain).values()), verdicts(plain)
    assert verdicts(first) == verdicts(plain)
    assert verdicts(second) == verdicts(plain)
    c1, c2 = first["reference_cache"], second["reference_cache"]
    assert c1["from_cache"] == 0 and c1["stored"] > 10, c1
    # Everything stored by the first run is read by the second; only what is never kept is computed again.
    assert c2["from_cache"] == c1["stored"] and c2["computed"] == c2["not_cacheable"] == c1["not_cacheable"], (c1, c2)
    for case in second["cases"]:
        if sources(second)[case["id"]] == "cache":
            assert case["timings"]["reference_ms"] == 0, case
    assert second["time"]["totals"]["reference_cache_ms"] > 0


def test_unchanged_cases_compute_no_reference_and_a_changed_case_is_recomputed(tmp_path):
    cache = tmp_path / "refs"
    manifest = own_manifest(tmp_path)
    _, first = run(tmp_path, "first", [manifest], cache)
    _, second = run(tmp_path, "second", [manifest], cache)
    unique = len(CASES)
    assert first["reference_cache"]["computed"] == unique and first["reference_cache"]["stored"] == unique, first
    assert second["reference_cache"]["computed"] == 0, second["reference_cache"]
    assert second["reference_cache"]["from_cache"] == unique, second["reference_cache"]
    assert set(sources(second).values()) == {"cache"}
    assert verdicts(second) == verdicts(first)
    assert verdicts(first)["cached::wrong_on_device"][0] == "INCORRECT_RESULT"
    # One case changed (its input's shape): that one is computed again, the others still come from the cache.
    changed = [list(c) for c in CASES]
    changed[0][3] = "      - tensor: {shape: [16, 8], init: randn}"
    own_manifest(tmp_path, changed)
    _, third = run(tmp_path, "third", [manifest], cache)
    assert sources(third) == {**sources(second), "cached::mm": "computed"}, sources(third)
    assert third["reference_cache"]["computed"] == 1 and third["reference_cache"]["from_cache"] == unique - 1


def test_a_corrupt_and_a_truncated_entry_are_recomputed_with_a_warning_and_the_same_verdicts(tmp_path):
    cache = tmp_path / "refs"
    manifest = own_manifest(tmp_path)
    _, first = run(tmp_path, "first", [manifest], cache)
    names = entries(cache)
    assert len(names) == len(CASES), names
    corrupt, truncated = cache / names[0], cache / names[1]
    data = bytearray(corrupt.read_bytes())
    data[-20] ^= 0x01  # one bit of the payload
    corrupt.write_bytes(bytes(data))
    truncated.write_bytes(truncated.read_bytes()[:-100])
    r, second = run(tmp_path, "second", [manifest], cache)
    assert verdicts(second) == verdicts(first)
    recomputed = [i for i, s in sources(second).items() if s == "recomputed"]
    assert len(recomputed) == 2 and second["reference_cache"]["rejected"] == 2, sources(second)
    assert second["reference_cache"]["from_cache"] == len(CASES) - 2
    warnings = second["run"]["warnings"]
    for entry, how in ((corrupt, "does not match its digest"), (truncated, "is truncated")):
        hits = [w for w in warnings if str(entry) in w and how in w]
        assert len(hits) == 1, warnings
        assert hits[0] in r.err, r  # on the console too
    # The recomputed references were stored again: a third run reads every one.
    _, third = run(tmp_path, "third", [manifest], cache)
    assert third["reference_cache"]["from_cache"] == len(CASES) and not cache_warnings(third), third["run"]


def test_an_entry_copied_under_another_key_is_recomputed_not_served(tmp_path):
    cache = tmp_path / "refs"
    manifest = own_manifest(tmp_path)
    _, first = run(tmp_path, "first", [manifest], cache)
    names = entries(cache)
    # One case's entry copied under another's file name, its key line edited to the name it now has: every byte a
    # reader compares with its file name agrees, and only the digest's binding to the key tells them apart.
    source, target = cache / names[0], cache / names[1]
    data = source.read_bytes()
    old_key, new_key = names[0][: -len(".ref")], names[1][: -len(".ref")]
    assert data.count(("key " + old_key).encode()) == 1
    target.write_bytes(data.replace(("key " + old_key).encode(), ("key " + new_key).encode(), 1))
    r, second = run(tmp_path, "second", [manifest], cache)
    assert verdicts(second) == verdicts(first)
    assert second["reference_cache"]["rejected"] == 1 and second["reference_cache"]["from_cache"] == len(CASES) - 1
    hits = [w for w in second["run"]["warnings"] if str(target) in w and "does not match its digest" in w]
    assert len(hits) == 1 and hits[0] in r.err, second["run"]["warnings"]


SQUARE = [  # three cases whose entries are the same size (a 64x64 fp32 output: 16 KiB and a header)
    ["  - name: a", "    op: torch.neg", "    inputs:", "      - tensor: {shape: [64, 64]}"],
    ["  - name: b", "    op: torch.exp", "    inputs:", "      - tensor: {shape: [64, 64]}"],
    ["  - name: c", "    op: torch.sin", "    inputs:", "      - tensor: {shape: [64, 64]}"],
]


def test_the_cap_evicts_the_least_recently_used_entries(tmp_path):
    cache = tmp_path / "refs"
    manifest = own_manifest(tmp_path, SQUARE)
    cap = ["--reference-cache-size", "40K"]  # two entries fit, three do not

    def one(case, step):
        before = set(entries(cache)) if cache.exists() else set()
        r, m = run(tmp_path, step, [manifest], cache, *cap, "cached::" + case, env=None)
        assert r.rc == 0, r
        return m, set(entries(cache)) - before

    _, (entry_a,) = one("a", "a1")
    _, (entry_b,) = one("b", "b1")
    m, new = one("a", "a2")  # read: a is now the most recently used
    assert not new and sources(m) == {"cached::a": "cache"}
    m, (entry_c,) = one("c", "c1")
    assert set(entries(cache)) == {entry_a, entry_c}, (entries(cache), entry_b)
    assert m["reference_cache"]["evicted"] == 1 and m["cases"][0]["reference_cache"]["evicted"] == 1, m["cases"]


def test_an_entry_above_the_entry_limit_is_not_stored(tmp_path):
    cache = tmp_path / "refs"
    small = ["  - name: small", "    op: torch.neg", "    inputs:", "      - tensor: {shape: [2, 3]}"]
    manifest = own_manifest(tmp_path, [SQUARE[0], small])
    r, m = run(tmp_path, "limited", [manifest], cache, "--reference-cache-max-entry", "4K", env=None)
    assert r.rc == 0, r
    by_id = {c["id"]: c["reference_cache"] for c in m["cases"]}
    assert by_id["cached::small"]["stored"] is True
    assert by_id["cached::a"]["stored"] is False and "--reference-cache-max-entry" in by_id["cached::a"]["note"]
    assert m["reference_cache"]["stored"] == 1 and len(entries(cache)) == 1
    # Asked to keep any size (0), it is kept.
    _, m = run(tmp_path, "any", [manifest], cache, "--reference-cache-max-entry", "0", env=None)
    assert m["reference_cache"]["stored"] == 1 and m["reference_cache"]["from_cache"] == 1 and len(entries(cache)) == 2


def test_two_shards_writing_one_folder_at_once_finish_with_correct_verdicts_and_a_whole_folder(tmp_path):
    cache = tmp_path / "refs"
    # The template's variety, and entries of a MiB each, whose writes take long enough to overlap between processes.
    big = write_manifest(tmp_path / "big.yaml", "big", [
        [f"  - name: exp{i}", "    op: torch.exp", f"    seed: {i}", "    inputs:", "      - tensor: {shape: [512, 512]}"]
        for i in range(16)])
    select = ["--manifests", TEMPLATE, "--manifests", big, "--model", "template", "--model", "big"]
    _, plain = run(tmp_path, "plain", [], None, *select, env=FAULTS)

    def start(name, *flags):
        out = tmp_path / name
        args = [BIN, "run", "--device", "loopback", *select, "-j", "2", "--reference-cache", cache,
                "--metrics-json", out / "m.json", "--artifact-dir", out / "art", *flags]
        env = {**os.environ, **FAULTS, "NO_COLOR": "1"}
        return subprocess.Popen(list(map(str, args)), env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True), out

    # Two shards at once (different entries), then two whole runs at once (the same entries, written by both).
    for pair in ((("s0", "--shard", "0/2"), ("s1", "--shard", "1/2")), (("w0",), ("w1",))):
        procs = [start(*p) for p in pair]
        merged = {}
        for proc, out in procs:
            _, err = proc.communicate(timeout=600)
            m = json.loads((out / "m.json").read_text())
            assert not cache_warnings(m), (err, m["run"]["warnings"])
            merged.update(verdicts(m))
        assert merged == verdicts(plain)
    assert not [p.name for p in cache.iterdir() if not p.name.endswith(".ref")]  # no temporary file left
    # Every entry is whole: a last run reads each one back, checked.
    _, last = run(tmp_path, "last", [], cache, *select, env=FAULTS)
    assert last["reference_cache"]["rejected"] == 0 and last["reference_cache"]["computed"] == \
        last["reference_cache"]["not_cacheable"], last["reference_cache"]
    assert len(entries(cache)) == last["reference_cache"]["from_cache"]
    assert verdicts(last) == verdicts(plain)


def test_random_ops_and_references_that_raise_are_never_kept(tmp_path):
    cache = tmp_path / "refs"
    manifest = own_manifest(tmp_path, [
        ["  - name: dropout", "    op: torch.nn.functional.dropout", "    inputs:", "      - tensor: {shape: [8, 8]}",
         "    kwmap: {p: 0.5, training: true}", "    compare: pcc"],
        ["  - name: raises", "    op: torch.add", "    inputs:", "      - tensor: {shape: [2, 3]}",
         "      - tensor: {shape: [4, 5]}"],
        CASES[0]])
    runs = [run(tmp_path, f"run{i}", [manifest], cache, env=None)[1] for i in range(2)]
    for m in runs:
        by_id = {c["id"]: c for c in m["cases"]}
        assert by_id["cached::raises"]["stage"] == "FAILED_REFERENCE"
        notes = {i: by_id[i]["reference_cache"].get("note", "") for i in ("cached::dropout", "cached::raises")}
        assert "draws random numbers" in notes["cached::dropout"], notes
        assert "the CPU reference failed" in notes["cached::raises"], notes
        assert {i: by_id[i]["reference_cache"]["source"] for i in notes} == dict.fromkeys(notes, "not_cacheable")
    assert runs[1]["reference_cache"]["from_cache"] == 1 and len(entries(cache)) == 1  # only the matmul's
    steady = ("cached::raises", "cached::mm")  # dropout's figures are random by nature
    assert [verdicts(runs[0])[i] for i in steady] == [verdicts(runs[1])[i] for i in steady]
