"""`opcheck run` end to end: verdicts, summary line, exit codes, dedupe."""
import re

import pytest

from conftest import SOURCE_DIR, opcheck

# pytest's summary line; `--device auto` (the default) ends it with the device it chose and why.
SUMMARY = re.compile(r"^(\d+ (passed|failed|skipped|xfailed|xpassed|errors?|deselected)(, )?)+ in \d+\.\d+s"
                     r"( \(--device auto chose \w+: [^)]*\))?$")


def counts(summary):
    return {word.rstrip("s") if word.startswith("error") else word: int(n)
            for n, word in re.findall(r"(\d+) (\w+)", summary.split(" in ")[0])}


def test_run_bundled_gpt_oss_on_cpu_passes():
    r = opcheck("run", "--model", "gpt_oss", "--device", "cpu")
    assert SUMMARY.match(r.last_line), r
    c = counts(r.last_line)
    assert c.get("passed", 0) > 0, r
    assert c.get("failed", 0) == 0 and c.get("error", 0) == 0, r
    assert r.rc == 0, r


def test_run_template_on_cpu_has_no_errors():
    r = opcheck("run", "--model", "template", "--device", "cpu", "-v")
    assert SUMMARY.match(r.last_line), r
    assert counts(r.last_line).get("error", 0) == 0, r


# One case per outcome on the loopback device; sub and exp get a wrong-result fault.
OUTCOMES_MANIFEST = """model: outcomes
cases:
  - name: passes
    op: torch.add
    inputs: [{tensor: {shape: [4]}}, {tensor: {shape: [4]}}]
  - name: fails
    op: torch.sub
    compare: exact
    inputs: [{tensor: {shape: [4]}}, {tensor: {shape: [4]}}]
  - name: skipped
    op: torch.mul
    skip_if: {expr: "True", reason: skipped on purpose}
    inputs: [{tensor: {shape: [4]}}, {tensor: {shape: [4]}}]
  - name: xfails
    op: torch.exp
    compare: exact
    xfail_if: {expr: "True", reason: exp is known wrong}
    inputs: [{tensor: {shape: [4]}}]
  - name: xpasses
    op: torch.neg
    xfail_if: {expr: "True", reason: neg was known wrong}
    inputs: [{tensor: {shape: [4]}}]
  - name: errors
    op: torch.no_such_op
    inputs: [{tensor: {shape: [4]}}]
"""
FAULTS = {"OPCHECK_LOOPBACK_FAULTS": "aten::sub.Tensor=bias:1;aten::exp=bias:1"}


@pytest.fixture
def outcomes(tmp_path):
    (tmp_path / "outcomes.yaml").write_text(OUTCOMES_MANIFEST)
    return tmp_path / "outcomes.yaml"


def run_outcomes(path, tmp_path, *args):
    return opcheck("run", "--manifests", path, "--device", "loopback", "--artifact-dir", tmp_path / "art",
                   "-v", *args, env=FAULTS)


def test_run_covers_every_outcome_path(outcomes, tmp_path):
    r = run_outcomes(outcomes, tmp_path)
    assert SUMMARY.match(r.last_line), r
    assert counts(r.last_line) == {"passed": 1, "failed": 1, "skipped": 1, "xfailed": 1, "xpassed": 1, "error": 1}, r
    assert r.rc == 1, r
    # The short summary names exactly what fails the run: the failure, the error and the strict XPASS.
    assert re.search(r"^FAILED outcomes::fails \[INCORRECT_RESULT\]", r.out, re.M), r
    assert re.search(r"^ERROR outcomes::errors \[INVALID_CASE\]", r.out, re.M), r
    assert re.search(r"^XPASS outcomes::xpasses .*neg was known wrong", r.out, re.M), r
    assert not re.search(r"^(FAILED|ERROR|XPASS) outcomes::(passes|skipped|xfails)", r.out, re.M), r


@pytest.mark.parametrize("keyword,summary,rc", [
    ("passes and not xpasses or skipped or xfails", {"passed": 1, "skipped": 1, "xfailed": 1}, 0),
    ("xpasses", {"xpassed": 1}, 1),
    ("fails and not xfails", {"failed": 1}, 1),
    ("errors", {"error": 1}, 1),
], ids=["pass-skip-xfail-exit-0", "strict-xpass-exits-1", "failure-exits-1", "error-exits-1"])
def test_each_outcome_sets_the_exit_code(outcomes, tmp_path, keyword, summary, rc):
    r = run_outcomes(outcomes, tmp_path, "-k", keyword)
    assert counts(r.last_line) == {**summary, "deselected": 6 - sum(summary.values())}, r
    assert r.rc == rc, r


def test_xpass_ok_forgives_only_the_xpass(outcomes, tmp_path):
    r = run_outcomes(outcomes, tmp_path, "-k", "xpasses", "--xpass-ok")
    assert counts(r.last_line) == {"xpassed": 1, "deselected": 5}, r
    assert r.rc == 0, r


def test_usage_errors_exit_4():
    assert opcheck("run", "--shard", "3/3").rc == 4
    assert opcheck("run", "--deadline", "soon").rc == 4
    assert opcheck("run", "--no-such-flag").rc == 4


def test_nothing_selected_exits_5():
    r = opcheck("run", "--model", "gpt_oss", "-k", "no_such_case_anywhere", "--device", "cpu")
    assert r.rc == 5, r


