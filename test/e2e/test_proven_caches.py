"""Caches that prove their entries, through the real binary: a --reference-cache entry is opened only as a regular
file of the folder (a FIFO or a link put in its place is refused, never waited on), a --results-cache entry carries a
digest of its record and the run identity and one that fails it is run again, and what a run served from the
results cache says so in the metrics and the JUnit."""
import json
import os
import re
import xml.etree.ElementTree as ET

import jsonschema

from conftest import SOURCE_DIR, case, metrics, opcheck, write_manifest

EXP_FAULT = {"OPCHECK_LOOPBACK_FAULTS": "aten::exp=bias:1e-2"}


def two_cases(tmp_path):
    return write_manifest(tmp_path / "m.yaml", "m", [case("exp.1", "torch.exp", [[8]]), case("neg.1", "torch.neg", [[8]])])


def test_a_fifo_or_a_link_in_the_reference_cache_is_refused_and_the_reference_computed(tmp_path):
    manifest = two_cases(tmp_path)
    refs = tmp_path / "refs"
    first = opcheck("run", "--manifests", manifest, "--device", "cpu", "--reference-cache", refs,
                    "--artifact-dir", tmp_path / "a")
    assert first.rc == 0, first
    entries = sorted(refs.glob("*.ref"))
    assert len(entries) == 2, entries
    outside = tmp_path / "outside.ref"
    outside.write_bytes(entries[1].read_bytes())
    entries[0].unlink()
    os.mkfifo(entries[0])  # a read of it would wait for a writer forever
    entries[1].unlink()
    entries[1].symlink_to(outside)  # a link out of the folder, even to a valid entry
    again = opcheck("run", "--manifests", manifest, "--device", "cpu", "--reference-cache", refs, "--timeout", "5",
                    "--metrics-json", tmp_path / "m.json", "--artifact-dir", tmp_path / "b", timeout=300)
    m = metrics(tmp_path / "m.json")
    # Both cases pass on a recomputed reference: opcheck's cache read is never the case's TIMEOUT.
    assert again.rc == 0, again
    assert [(c["id"], c["stage"]) for c in m["cases"]] == [("m::exp.1", "PASSED"), ("m::neg.1", "PASSED")], m["cases"]
    assert m["reference_cache"]["from_cache"] == 0 and m["reference_cache"]["rejected"] == 2, m["reference_cache"]
    warnings = "\n".join(m["run"]["warnings"])
    assert "is a FIFO (named pipe), not a regular file; the reference was computed again" in warnings, warnings
    assert "is a symbolic link, not a regular file; the reference was computed again" in warnings, warnings


def test_an_edited_results_cache_entry_is_run_again_and_served_results_are_marked(tmp_path):
    manifest = two_cases(tmp_path)
    cache = tmp_path / "cache.jsonl"
    first = opcheck("run", "--manifests", manifest, "--device", "loopback", "--results-cache", cache,
                    "--artifact-dir", tmp_path / "a", env=EXP_FAULT)
    assert first.rc == 1, first
    text = cache.read_text()
    assert text.count('"outcome":"failed"') == 1, text
    cache.write_text(text.replace('"outcome":"failed"', '"outcome":"passed"'))  # the failure edited away

    again = opcheck("run", "--manifests", manifest, "--device", "loopback", "--results-cache", cache,
                    "--reuse-results", "--metrics-json", tmp_path / "m.json", "--junit-xml", tmp_path / "j.xml",
                    "--artifact-dir", tmp_path / "b", env=EXP_FAULT)
    assert again.rc == 1, again  # the edited entry failed its check: the case ran again, and failed again
    m = metrics(tmp_path / "m.json")
    by_id = {c["id"]: c for c in m["cases"]}
    assert by_id["m::exp.1"]["outcome"] == "failed" and "result_from_cache" not in by_id["m::exp.1"], by_id
    assert by_id["m::neg.1"]["outcome"] == "passed" and by_id["m::neg.1"]["result_from_cache"] is True, by_id
    assert m["results_from_cache"] == 1, m["results_from_cache"]
    [warning] = [w for w in m["run"]["warnings"] if "--results-cache" in w]
    assert re.search(r"1 entry failed their check \(first at line \d+: edited", warning), warning
    assert "opcheck: warning: --results-cache" in again.err, again
    props = {tc.get("name"): {p.get("name"): p.get("value") for p in tc.iter("property")}
             for tc in ET.parse(tmp_path / "j.xml").getroot().iter("testcase")}
    assert props["neg.1"]["result_from_cache"].startswith("true"), props["neg.1"]
    assert "result_from_cache" not in props["exp.1"], props["exp.1"]
    schema = json.loads((SOURCE_DIR / "schemas" / "metrics.schema.json").read_text())
    jsonschema.Draft202012Validator(schema).validate(m)


def test_a_results_cache_that_is_a_fifo_is_opchecks_error_not_a_hang(tmp_path):
    manifest = two_cases(tmp_path)
    cache = tmp_path / "cache.jsonl"
    os.mkfifo(cache)
    run = opcheck("run", "--manifests", manifest, "--device", "cpu", "--results-cache", cache, "--reuse-results",
                  "--artifact-dir", tmp_path / "a", timeout=120)
    assert run.rc == 4, run  # the --results-cache given cannot be one: a usage error, before any case
    assert f"{cache}: error: cannot read report: is a FIFO (named pipe), not a regular file" in run.err, run
