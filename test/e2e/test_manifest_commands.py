"""list-models, list-cases, validate and --version, as a user runs them."""
import json
import os
import pathlib
import re

import pytest
import torch

from conftest import BIN, SOURCE_DIR, SPYRE, opcheck

BAD_DIR = SOURCE_DIR / "test" / "manifest" / "bad"


def test_version_names_opcheck_and_libtorch():
    r = opcheck("--version")
    assert r.rc == 0, r
    m = re.match(r"opcheck \d+\.\d+\.\d+ \(built against libtorch (\d+\.\d+)\S* from (/\S+)\)", r.out)
    assert m, r
    # The torch named is the one the tests run under (the build's Python), and its folder exists.
    assert m.group(1) == ".".join(torch.__version__.split(".")[:2]), r
    assert os.path.samefile(m.group(2), os.path.dirname(torch.__file__)), r


def test_list_models_shows_bundled_gpt_oss():
    r = opcheck("list-models")
    assert r.rc == 0, r
    rows = [l.split() for l in r.out.splitlines()]
    gpt = [row for row in rows if row[0] == "gpt_oss"]
    assert gpt, r
    assert int(gpt[0][2]) > 0 and gpt[0][3] == "cases"


def test_list_models_on_fixtures_marks_variants_and_templates():
    r = opcheck("list-models", "--manifests", SPYRE)
    assert r.rc == 0, r
    by_file = {pathlib.Path(l.split()[1]).name: l for l in r.out.splitlines()}
    assert "variant spyre" in by_file["gpt-oss-20b_spyre.yaml"]
    assert "229 cases" in by_file["gpt-oss-20b.yaml"]
    assert "template" in by_file["template.yaml"]


def test_list_cases_gpt_oss_20b_prints_229_cases():
    r = opcheck("list-cases", "--manifests", SPYRE, "--model", "gpt-oss-20b")
    assert r.rc == 0, r
    lines = r.out.splitlines()
    assert len(lines) == 229
    first = lines[0].split()
    assert first[0] == "gpt-oss-20b::torch.nn.functional.embedding.1"
    assert first[1] == "torch.nn.functional.embedding"
    assert re.fullmatch(r"\(.*gpt-oss-20b\.yaml:\d+\)", first[2])


def test_list_cases_model_matching_is_case_and_dash_insensitive():
    a = opcheck("list-cases", "--manifests", SPYRE, "--model", "GPT_OSS_20B")
    assert a.rc == 0 and len(a.out.splitlines()) == 229, a


def test_list_cases_json_and_filters():
    r = opcheck("list-cases", "--manifests", SPYRE, "--model", "gpt-oss-20b", "-m", "bf16operation and not constant",
                "-k", "linear", "--json")
    assert r.rc == 0, r
    cases = json.loads(r.out)
    assert len(cases) == 8, r
    for c in cases:
        assert "bf16operation" in c["marks"] and "constant" not in c["marks"]
        assert "linear" in (c["id"] + c["op"]).lower()
    # Every selected case is one the unfiltered listing has too, at the same place.
    everything = {c["id"]: c for c in json.loads(opcheck("list-cases", "--manifests", SPYRE, "--model", "gpt-oss-20b",
                                                         "--json").out)}
    assert all(everything[c["id"]] == c for c in cases)


def test_unknown_model_is_a_usage_error_with_suggestion():
    r = opcheck("list-cases", "--manifests", SPYRE, "--model", "gpt-os-20b")
    assert r.rc == 4, r
    assert "gpt-oss-20b" in r.err


def test_nothing_selected_exits_5():
    r = opcheck("list-cases", "--manifests", SPYRE, "--model", "gpt-oss-20b", "-k", "no_such_case_anywhere")
    assert r.rc == 5, r


def test_validate_real_fixtures_has_zero_errors():
    r = opcheck("validate", SPYRE)
    assert r.rc == 0, r
    assert re.search(r": 0 errors", r.out), r


def test_validate_shipped_manifests_strictly():
    r = opcheck("validate", "--strict-markers", SOURCE_DIR / "manifests")
    assert r.rc == 0, r


def bad_manifests():
    # No fallback to an empty list: a missing folder is a collection error, never an empty parameter set that pytest
    # would report as one skipped test. How many there must be (35 or more) is checked by the gtest
    # BadManifests.ThereAreEnoughOfThem (test/manifest/bad_manifests_test.cpp), which also checks each file's message.
    return sorted(p for p in BAD_DIR.iterdir() if p.is_file() and p.name != "EXPECT.txt")


@pytest.mark.parametrize("path", bad_manifests(), ids=lambda p: p.name)
def test_validate_rejects_each_bad_manifest_with_a_located_error(path):
    r = opcheck("validate", path, timeout=60)
    assert r.rc == 2, r
    assert "error:" in r.err, r
    # Every error names the file; all but the empty file also name a line.
    assert str(path) in r.err or path.name in r.err, r
    if path.stat().st_size > 0:
        assert re.search(re.escape(path.name) + r":\d+", r.err), r
