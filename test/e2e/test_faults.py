"""Every failure mode of a device under test, injected into one op of the loopback device, is caught, isolated and
reported with the right stage; every other case still passes and the reports stay complete and valid."""
import json
import xml.etree.ElementTree as ET

import pytest

from conftest import opcheck
from synth import generate

CASES_PER_MODEL = 70  # 3 models: 210 cases


@pytest.fixture(scope="module")
def manifests(tmp_path_factory):
    d = tmp_path_factory.mktemp("faults")
    # exact comparison: loopback runs the CPU's own kernels, so anything but identical bits is the fault.
    generate(d, models=3, cases=CASES_PER_MODEL, dup=0.3, seed=5, compare="exact")
    return d


FAULTS = [
    ("bias:1e-2", "INCORRECT_RESULT", "failed"),
    ("ulp", "INCORRECT_RESULT", "failed"),
    ("zeros", "INCORRECT_RESULT", "failed"),
    ("segv", "CRASHED", "failed"),
    ("abort", "CRASHED", "failed"),
    ("hang", "TIMEOUT", "failed"),
    ("nondet", "NONDETERMINISTIC", "failed"),
    ("oom", None, "failed"),  # allocation failure: CRASHED or FAILED_RUNTIME depending on how it surfaces
    ("throw", "FAILED_RUNTIME", "failed"),
    ("notimpl", "NOT_SUPPORTED", "not_supported"),  # its own outcome: no kernel is not a wrong result
]


@pytest.mark.parametrize("fault,stage,outcome", FAULTS, ids=[f[0] for f in FAULTS])
def test_fault_is_caught_for_exactly_the_cases_using_the_op(manifests, tmp_path, fault, stage, outcome):
    r = opcheck("run", "--manifests", manifests, "--device", "loopback", "--timeout", "3",
                "--junit-xml", tmp_path / "r.xml", "--metrics-json", tmp_path / "r.json",
                "--artifact-dir", tmp_path / "art", env={"OPCHECK_LOOPBACK_FAULTS": f"aten::exp={fault}"},
                timeout=600)
    assert r.rc == 1, r
    m = json.loads((tmp_path / "r.json").read_text())
    cases = m["cases"]
    assert len(cases) == 3 * CASES_PER_MODEL, r
    exp_cases = [c for c in cases if c["op"] == "torch.exp"]
    others = [c for c in cases if c["op"] != "torch.exp"]
    assert exp_cases and others
    for c in exp_cases:
        assert c["outcome"] == outcome, c
        if stage:
            assert c["stage"] == stage, c
        else:
            assert c["stage"] in ("CRASHED", "FAILED_RUNTIME"), c
    for c in others:
        assert c["outcome"] == "passed", c
    assert m["totals"][outcome] == len(exp_cases)
    assert m["totals"]["passed"] == len(others)
    # JUnit agrees: one failure element per failing occurrence, duplicates included.
    root = ET.parse(tmp_path / "r.xml").getroot()
    failures = [tc for tc in root.iter("testcase") if tc.find("failure") is not None]
    assert len(failures) == len(exp_cases)
    word = outcome.replace("_", " ")  # the summary line's words: "failed", "not supported"
    assert f"{len(exp_cases)} {word}" in r.last_line and f"{len(others)} passed" in r.last_line, r
