"""The status config through the real binary: known failures become xfail, a passing xfail is a strict XPASS, device
overrides apply only to their device, stale entries fail `validate --config` with a suggestion."""
import json
import xml.etree.ElementTree as ET

import pytest

from conftest import opcheck
from synth import generate

FAULT = {"OPCHECK_LOOPBACK_FAULTS": "aten::exp=bias:1e-2"}


@pytest.fixture(scope="module")
def manifests(tmp_path_factory):
    d = tmp_path_factory.mktemp("triage")
    generate(d, models=2, cases=30, dup=0.3, seed=3)
    return d


def write_config(tmp_path, text):
    p = tmp_path / "opcheck.yaml"
    p.write_text(text)
    return p


XFAIL_EXP = """rules:
  - id: "*"
    op: torch.exp
    status: xfail
    reason: https://example.org/issues/7
"""


def run(manifests, tmp_path, *args, env=None):
    return opcheck("run", "--manifests", manifests, "--metrics-json", tmp_path / "m.json", "--junit-xml",
                   tmp_path / "j.xml", "--artifact-dir", tmp_path / "art", *args, env=env)


def cases(tmp_path):
    return json.loads((tmp_path / "m.json").read_text())["cases"]


def test_known_failure_becomes_xfail_and_the_run_passes(manifests, tmp_path):
    cfg = write_config(tmp_path, XFAIL_EXP)
    without = run(manifests, tmp_path, "--device", "loopback", env=FAULT)
    assert without.rc == 1, without
    r = run(manifests, tmp_path, "--device", "loopback", "--config", cfg, env=FAULT)
    assert r.rc == 0, r
    exp = [c for c in cases(tmp_path) if c["op"] == "torch.exp"]
    assert exp and all(c["outcome"] == "xfailed" and c["status"] == "xfail" for c in exp)
    assert all(c["status_reason"] == "https://example.org/issues/7" for c in exp)
    assert all(c["outcome"] == "passed" for c in cases(tmp_path) if c["op"] != "torch.exp")
    props = {p.get("name"): p.get("value") for tc in ET.parse(tmp_path / "j.xml").getroot().iter("testcase")
             if tc.get("name").startswith("exp.") for p in tc.iter("property")}
    assert props.get("status") == "xfail", props


def test_passing_xfail_is_a_strict_xpass_with_a_hint(manifests, tmp_path):
    cfg = write_config(tmp_path, XFAIL_EXP)
    r = run(manifests, tmp_path, "--device", "loopback", "--config", cfg)
    assert r.rc == 1, r
    exp = [c for c in cases(tmp_path) if c["op"] == "torch.exp"]
    assert exp and all(c["outcome"] == "xpassed" for c in exp)
    assert "remove the xfail entry" in exp[0]["message"]
    assert "xpassed" in r.last_line, r
    relaxed = run(manifests, tmp_path, "--device", "loopback", "--config", cfg, "--xpass-ok")
    assert relaxed.rc == 0, relaxed


def test_device_overrides_apply_only_to_their_device(manifests, tmp_path):
    cfg = write_config(tmp_path, """rules:
  - id: "*"
    op: torch.exp
    reason: exp needs a kernel fix on loopback
    device_overrides:
      loopback: {status: skip}
""")
    on_loopback = run(manifests, tmp_path, "--device", "loopback", "--config", cfg, env=FAULT)
    assert on_loopback.rc == 0, on_loopback
    exp = [c for c in cases(tmp_path) if c["op"] == "torch.exp"]
    assert exp and all(c["outcome"] == "skipped" for c in exp)
    on_cpu = run(manifests, tmp_path, "--device", "cpu", "--config", cfg)
    assert on_cpu.rc == 0, on_cpu
    assert all(c["outcome"] == "passed" for c in cases(tmp_path) if c["op"] == "torch.exp")


def test_config_beside_the_manifests_is_found_without_flags(manifests, tmp_path):
    d = tmp_path / "m"
    d.mkdir()
    for f in manifests.iterdir():
        (d / f.name).write_text(f.read_text())
    (d / "opcheck.yaml").write_text(XFAIL_EXP)
    r = opcheck("run", "--manifests", d, "--device", "loopback", "--artifact-dir", tmp_path / "art", env=FAULT)
    assert r.rc == 0 and "xfailed" in r.last_line, r


def test_stale_entry_is_a_validate_error_with_a_suggestion(manifests, tmp_path):
    cfg = write_config(tmp_path, """rules:
  - id: "synth_0::exp.00"
    status: skip
    reason: gone after a regeneration
""")
    r = opcheck("validate", "--config", cfg, manifests)
    assert r.rc == 2, r
    assert "entry matches no case" in r.err and "closest case id: synth_0::exp.0\n" in r.err, r
    assert f"{cfg}:2:" in r.err, r
    fresh = write_config(tmp_path, XFAIL_EXP)
    assert opcheck("validate", "--config", fresh, manifests).rc == 0


def test_a_known_bugs_issue_is_one_click_away_in_every_report(tmp_path):
    """`issue:` (a case field of kCaseFields), from the manifest and from the status config, reaches the console's
    failure line, the metrics record, the JUnit testcase property and the HTML row; a case without one shows none."""
    from conftest import case, write_manifest
    m = write_manifest(tmp_path / "bugs.yaml", "bugs", [
        case("exp.1", "torch.exp", [[4, 8]], ["issue: https://tracker.example/ISSUE-1"]),
        case("exp.2", "torch.exp", [[5, 3]]),
        case("add.1", "torch.add", [[4, 8], [4, 8]]),
    ])
    cfg = write_config(tmp_path, 'rules:\n  - id: "bugs::exp.2"\n    issue: https://tracker.example/ISSUE-2\n')
    r = opcheck("run", "--manifests", m, "--device", "loopback", "--config", cfg, "--metrics-json",
                tmp_path / "m.json", "--junit-xml", tmp_path / "j.xml", "--html", tmp_path / "r.html",
                "--artifact-dir", tmp_path / "art", env=FAULT)
    assert r.rc == 1, r
    want = {"bugs::exp.1": "https://tracker.example/ISSUE-1", "bugs::exp.2": "https://tracker.example/ISSUE-2"}
    by_id = {c["id"]: c for c in cases(tmp_path)}
    assert {i: c.get("issue") for i, c in by_id.items()} == {**want, "bugs::add.1": None}
    assert all(by_id[i]["outcome"] == "failed" for i in want), by_id
    props = {tc.get("name"): {p.get("name"): p.get("value") for p in tc.iter("property")}
             for tc in ET.parse(tmp_path / "j.xml").getroot().iter("testcase")}
    assert props["exp.1"].get("issue") == want["bugs::exp.1"] and props["exp.2"].get("issue") == want["bugs::exp.2"]
    assert "issue" not in props["add.1"], props["add.1"]
    for url in want.values():
        assert f"issue: {url}" in r.out, r  # the failure's own lines on the console
        assert f'<a href="{url}">{url}</a>' in (tmp_path / "r.html").read_text()
    assert r.out.count("issue: ") == 2, r
