"""list-models, list-cases, validate and --version, as a user runs them."""
import json
import os
import pathlib
import re

import pytest
import torch

from conftest import BIN, OWN_SPYRE, SOURCE_DIR, SPYRE, opcheck

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
    r = opcheck("list-models", "--manifests", OWN_SPYRE)
    assert r.rc == 0, r
    by_file = {pathlib.Path(l.split()[1]).name: l for l in r.out.splitlines()}
    assert "variant spyre" in by_file["tiny-gpt_spyre.yaml"]
    assert "34 cases" in by_file["tiny-gpt.yaml"]
    assert "template" in by_file["template.yaml"]


def test_list_cases_tiny_gpt_prints_its_34_cases():
    r = opcheck("list-cases", "--manifests", OWN_SPYRE, "--model", "tiny-gpt")
    assert r.rc == 0, r
    lines = r.out.splitlines()
    assert len(lines) == 34
    first = lines[0].split()
    assert first[0] == "tiny-gpt::torch.nn.functional.embedding.1"
    assert first[1] == "torch.nn.functional.embedding"
    assert re.fullmatch(r"\(.*tiny-gpt\.yaml:\d+\)", first[2])


def test_list_cases_model_matching_is_case_and_dash_insensitive():
    a = opcheck("list-cases", "--manifests", OWN_SPYRE, "--model", "TINY_GPT")
    assert a.rc == 0 and len(a.out.splitlines()) == 34, a


def test_list_cases_json_and_filters():
    r = opcheck("list-cases", "--manifests", OWN_SPYRE, "--model", "tiny-gpt", "-m", "bf16operation and not constant",
                "-k", "linear or matmul", "--json")
    assert r.rc == 0, r
    cases = json.loads(r.out)
    assert [c["id"] for c in cases] == ["tiny-gpt::torch.nn.functional.linear.1", "tiny-gpt::torch.matmul.2",
                                        "tiny-gpt::torch.matmul.3"], r
    for c in cases:
        assert "bf16operation" in c["marks"] and "constant" not in c["marks"]
        assert "linear" in c["id"] or "matmul" in c["id"]
    # Every selected case is one the unfiltered listing has too, at the same place.
    everything = {c["id"]: c for c in json.loads(opcheck("list-cases", "--manifests", OWN_SPYRE, "--model", "tiny-gpt",
                                                         "--json").out)}
    assert all(everything[c["id"]] == c for c in cases)


def test_unknown_model_is_a_usage_error_with_suggestion():
    r = opcheck("list-cases", "--manifests", OWN_SPYRE, "--model", "tiny-gtp")
    assert r.rc == 4, r
    assert "tiny-gpt" in r.err


def test_nothing_selected_exits_5():
    r = opcheck("list-cases", "--manifests", OWN_SPYRE, "--model", "tiny-gpt", "-k", "no_such_case_anywhere")
    assert r.rc == 5, r


@pytest.mark.parametrize("folder", [OWN_SPYRE, pytest.param(SPYRE, marks=pytest.mark.corpus)], ids=["own", "corpus"])
def test_validate_torch_spyre_manifests_has_zero_errors(folder):
    r = opcheck("validate", folder)
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
