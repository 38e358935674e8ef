"""The real torch-spyre manifests, once each on cpu and on loopback, through the real binary (the slow test CI runs
once): every case reaches a verdict with no opcheck-side error, and the loopback device agrees with cpu."""
import json

import pytest

from conftest import SPYRE, opcheck

pytestmark = pytest.mark.corpus

FILES = [SPYRE / "gpt-oss-20b.yaml", SPYRE / "Meta-Llama-3.1-8B-Instruct.yaml"]
OPCHECK_SIDE = {"INVALID_CASE", "FAILED_INPUT", "FAILED_REFERENCE"}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    out = {}
    for device in ("cpu", "loopback"):
        d = tmp_path_factory.mktemp(device)
        r = opcheck("run", "--manifests", *FILES, "--device", device, "--metrics-json", d / "m.json",
                    "--junit-xml", d / "j.xml", "--artifact-dir", d / "art", timeout=3000)
        out[device] = (r, json.loads((d / "m.json").read_text()))
    return out


def test_cpu_run_has_no_opcheck_side_errors(runs):
    r, m = runs["cpu"]
    assert len(m["cases"]) == 229 + 113
    assert m["totals"]["errors"] == 0, r
    assert not [c for c in m["cases"] if c["stage"] in OPCHECK_SIDE]
    # Anything not passed says why.
    for c in m["cases"]:
        if c["outcome"] != "passed":
            assert c["message"], c
    assert " error" not in r.last_line, r


def test_loopback_agrees_with_cpu_case_by_case(runs):
    _, cpu = runs["cpu"]
    r, loop = runs["loopback"]
    assert loop["run"]["device_name"] == "loopback"
    by_id = {c["id"]: c for c in cpu["cases"]}
    assert set(by_id) == {c["id"] for c in loop["cases"]}
    for c in loop["cases"]:
        ref = by_id[c["id"]]
        # A call that ran no op on the loopback (a list's __getitem__) passes there without the device.
        assert c["outcome"] == "passed" or (c["outcome"], c["stage"]) == (ref["outcome"], ref["stage"]) or \
            (c["outcome"] == "no_device_op" and ref["outcome"] == "passed"), (c, ref)
    assert loop["totals"]["errors"] == 0, r
