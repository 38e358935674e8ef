"""Verdicts a device team can act on (issue 22, the reports' side), through the real binary: a missing kernel is
"not supported", apart from a wrong result, in every report and in the exit code; failures carry the call and the
repro command; warnings are counted on the console and `validate` lists the same ones a run records."""
import json
import re
import xml.etree.ElementTree as ET

import pytest

from conftest import OWN_SPYRE, OWN_V2, opcheck, write_manifest

GPT_OSS = OWN_SPYRE / "tiny-gpt.yaml"  # torch-spyre's dialect, the repository's own fixture
NOTIMPL = {"OPCHECK_LOOPBACK_FAULTS": "aten::mul.Tensor=notimpl"}


def props(tc):
    return {p.get("name"): p.get("value") for p in tc.iter("property") if p.get("name") != "tag"}


def run_gpt_oss(tmp_path, name, *flags):
    out = tmp_path / name
    r = opcheck("run", "--manifests", GPT_OSS, "--device", "loopback", "--junit-xml", out / "r.xml",
                "--metrics-json", out / "r.json", "--artifact-dir", out / "art", *flags, env=NOTIMPL, timeout=1200)
    return r, json.loads((out / "r.json").read_text()), ET.parse(out / "r.xml").getroot()


@pytest.fixture(scope="module")
def notimpl(tmp_path_factory):
    return run_gpt_oss(tmp_path_factory.mktemp("notimpl"), "default")


def test_a_missing_kernel_is_not_supported_not_failed_and_fails_the_run(notimpl):
    r, m, root = notimpl
    unsupported = [c for c in m["cases"] if c["stage"] == "NOT_SUPPORTED"]
    assert unsupported, r
    assert all(c["outcome"] == "not_supported" for c in unsupported), unsupported[0]
    n = len(unsupported)
    # The summary line says "not supported" and never files those cases as failed.
    assert f"{n} not supported" in r.last_line and "failed" not in r.last_line, r
    assert m["totals"]["not_supported"] == n and m["totals"]["failed"] == 0, m["totals"]
    assert sum(c["not_supported"] for c in m["pass_rate"]["per_model"].values()) == n
    assert m["run"]["not_supported_ok"] is False
    # Reports never look greener than the run: it fails (exit 1), and JUnit says failure, as pytest's readers count.
    assert r.rc == 1, r
    failures = [tc for tc in root.iter("testcase") if tc.find("failure") is not None]
    assert len(failures) == n
    for tc in failures:
        f = tc.find("failure")
        assert f.get("type") == "NOT_SUPPORTED" and props(tc)["outcome"] == "not_supported"
        # The message starts with the real error, then the call, then how to rerun it.
        lines = f.get("message").split("\n")
        assert lines[0] == (f.text or "").split("\n")[0], lines
        assert lines[1].startswith("call: torch.mul("), lines
        assert lines[-1] == f"repro: opcheck repro {tc.get('classname')}::{tc.get('name')}", lines
    suite = root.find("testsuite")
    assert int(suite.get("failures")) == n


def test_tb_short_shows_the_first_line_of_a_not_supported_message_and_the_call(notimpl):
    r, m, _ = notimpl
    case = next(c for c in m["cases"] if c["outcome"] == "not_supported" and not c["deduplicated_from"])
    block = r.out[r.out.index(f"_ {case['id']} _"):]
    block = block[:block.index("rerun: ")]
    lines = case["message"].splitlines()
    # Only the first line (the op, the dispatch key, the error's first line) is shown; the rest (the whole error after
    # a blank line, a real dispatcher's account) is cut.
    assert len(lines) > 1 and lines[0] in block and all(l not in block for l in lines[1:] if l.strip()), block
    assert re.search(r"^call: torch\.mul\(\w+\[", block, re.M), block
    assert f"NOT_SUPPORTED {case['id']} - {lines[0]}" in r.out, r


def test_not_supported_ok_forgives_it_and_junit_writes_a_skip(tmp_path):
    r, m, root = run_gpt_oss(tmp_path, "ok", "--not-supported-ok", "-k", "mul")  # the calls of mul (and matmul)
    n = m["totals"]["not_supported"]
    assert n > 0 and m["run"]["not_supported_ok"] is True
    assert r.rc == 0, r
    assert f"{n} not supported" in r.last_line and "failed" not in r.last_line, r
    skipped = [tc for tc in root.iter("testcase") if tc.find("skipped") is not None]
    assert len(skipped) >= n
    ns = [tc for tc in skipped if tc.find("skipped").get("type") == "NOT_SUPPORTED"]
    assert len(ns) == n
    assert all(tc.find("skipped").get("message").startswith("not supported: ") for tc in ns)
    assert all(props(tc)["outcome"] == "not_supported" for tc in ns)
    assert root.find("testsuite").get("failures") == "0"


def test_last_failed_reruns_not_supported_cases(tmp_path):
    r, m, _ = run_gpt_oss(tmp_path, "lf", "-k", "mul")
    n = m["totals"]["not_supported"]
    assert n > 0 and m["totals"]["passed"] > 0, r
    again = opcheck("run", "--manifests", GPT_OSS, "--device", "loopback", "--lf", "-k", "mul", "--metrics-json",
                    tmp_path / "again.json", "--artifact-dir", tmp_path / "lf" / "art", env=NOTIMPL, timeout=1200)
    cases = json.loads((tmp_path / "again.json").read_text())["cases"]
    assert len(cases) == n and all(c["outcome"] == "not_supported" for c in cases), again


def test_diff_calls_passed_to_not_supported_a_regression(tmp_path):
    m = write_manifest(tmp_path / "d.yaml", "d", [
        ["  - name: mul", "    op: torch.mul", "    inputs:", "      - tensor: {shape: [3]}",
         "      - tensor: {shape: [3]}"]])
    ok = opcheck("run", "--manifests", m, "--device", "loopback", "--metrics-json", tmp_path / "old.json",
                 "--artifact-dir", tmp_path / "a")
    assert ok.rc == 0, ok
    bad = opcheck("run", "--manifests", m, "--device", "loopback", "--not-supported-ok", "--metrics-json",
                  tmp_path / "new.json", "--artifact-dir", tmp_path / "b", env=NOTIMPL)
    assert bad.rc == 0 and "1 not supported" in bad.last_line, bad
    d = opcheck("diff", tmp_path / "old.json", tmp_path / "new.json")
    assert d.rc == 1, d
    assert "d::mul: passed -> not_supported" in d.out, d


def test_an_xfail_on_a_missing_kernel_is_xfailed(tmp_path):
    m = write_manifest(tmp_path / "x.yaml", "x", [
        ["  - name: mul", "    op: torch.mul", "    xfail_if: {expr: \"op_name == 'torch.mul'\", reason: no mul kernel yet}",
         "    inputs:", "      - tensor: {shape: [3]}", "      - tensor: {shape: [3]}"]])
    r = opcheck("run", "--manifests", m, "--device", "loopback", "--artifact-dir", tmp_path / "a", env=NOTIMPL)
    assert r.rc == 0 and r.last_line.startswith("1 xfailed"), r


# ---------------------------------------------------------------- failures carry the call


def test_junit_failure_message_carries_the_error_the_call_and_the_repro_command(tmp_path):
    m = write_manifest(tmp_path / "c.yaml", "c", [
        ["  - name: add", "    op: torch.add", "    inputs:", "      - tensor: {shape: [4, 8], stride: [1, 4]}",
         "      - tensor: {shape: [4, 8]}", "    attrs: {alpha: 2}"]])
    r = opcheck("run", "--manifests", m, "--device", "loopback", "--junit-xml", tmp_path / "r.xml",
                "--artifact-dir", tmp_path / "a", env={"OPCHECK_LOOPBACK_FAULTS": "aten::add.Tensor=bias:1e-1"})
    assert r.rc == 1, r
    f = ET.parse(tmp_path / "r.xml").getroot().find(".//failure")
    lines = f.get("message").split("\n")
    assert lines[0] == f.text.split("\n")[0] != "", lines
    assert lines[1] == "call: torch.add(fp32[4,8]{stride 1,4}, fp32[4,8], alpha=2)", lines
    assert lines[-1] == "repro: opcheck repro c::add", lines
    # The console's failure block shows the same call.
    assert "\ncall: torch.add(fp32[4,8]{stride 1,4}, fp32[4,8], alpha=2)\n" in r.out, r


# ---------------------------------------------------------------- warnings


def test_warnings_are_counted_before_the_summary_line_and_validate_lists_the_same(tmp_path):
    # torch-spyre's v2 folder holds a model only as a `_spyre` variant: a run leaves it out and warns.
    r = opcheck("run", "--manifests", OWN_V2 / "tiny-llama_spyre.yaml", "--manifests", GPT_OSS,
                "--device", "cpu", "-k", "mul", "--metrics-json", tmp_path / "m.json",
                "--artifact-dir", tmp_path / "b")
    m = json.loads((tmp_path / "m.json").read_text())
    warnings = m["run"]["warnings"]
    assert warnings and m["run"]["warning_count"] == len(warnings), m["run"]
    assert any("tiny-llama" in w and "none of its cases will run" in w for w in warnings), warnings
    lines = [l for l in r.out.splitlines() if l.strip()]
    head = f"{len(warnings)} warning{'s' if len(warnings) != 1 else ''} (opcheck validate lists them):"
    assert head in lines, r
    assert lines.index(head) < len(lines) - 1, r  # before the summary line, which stays last
    assert any("tiny-llama" in l for l in lines[lines.index(head):]), r

    v = opcheck("validate", OWN_V2 / "tiny-llama_spyre.yaml", GPT_OSS)
    listed = [l for l in v.err.splitlines() if ": warning: " in l]
    assert sorted(w.splitlines()[0] for w in warnings) == sorted(listed), (warnings, v.err)
    assert f", {len(listed)} warning" in v.out, v
