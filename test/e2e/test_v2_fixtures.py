"""The real torch-spyre v2 configs with the v1 manifest of gpt-oss-20b, once on cpu and once on loopback (slow, like
test_fixtures.py): every entry reported once per occurrence with no opcheck-side error, v1 and v2 calls run once,
and the JUnit read by torch-spyre's ingest rules (test_v2.ingest) says what the metrics say."""
import json

import pytest

from conftest import SPYRE, opcheck

pytestmark = pytest.mark.corpus
from test_v2 import V2, ingest, v1_keys, v2_keys

FILES = [SPYRE / "gpt-oss-20b.yaml", V2 / "gpt-oss-20b.yaml", V2 / "Meta-Llama-3.1-8B-Instruct_spyre.yaml"]
OPCHECK_SIDE = {"INVALID_CASE", "FAILED_INPUT", "FAILED_REFERENCE"}
INGEST_STATUS = {"passed": "passed", "failed": "failed", "error": "error", "skipped": "skipped", "xfailed": "xfail",
                 "xpassed": "xpass", "no_device_op": "skipped"}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    out = {}
    for device in ("cpu", "loopback"):
        d = tmp_path_factory.mktemp(device)
        r = opcheck("run", "--manifests", *FILES, "--variant", "all", "--device", device, "--metrics-json",
                    d / "m.json", "--junit-xml", d / "j.xml", "--junit-dir", d / "per-model", "--artifact-dir",
                    d / "art", timeout=3000)
        out[device] = (r, json.loads((d / "m.json").read_text()), d)
    return out


@pytest.mark.parametrize("device", ["cpu", "loopback"])
def test_every_entry_is_reported_once_without_opcheck_side_errors(runs, device):
    r, m, _ = runs[device]
    assert r.rc == 0, r  # the v2 entries are `mode: xfail`: non-strict, and the v1 cases pass
    cases = m["cases"]
    assert len(cases) == 229 + 243 + 54
    assert len({c["id"] for c in cases}) == len(cases)
    assert not [c for c in cases if c["stage"] in OPCHECK_SIDE]
    assert m["totals"]["errors"] == 0 and m["totals"]["failed"] == 0, r
    v2 = [c for c in cases if c.get("upstream_test")]
    assert len(v2) == 243 + 54
    # A call that runs no op on the device (a list's __getitem__) passed without it, xfail or not; never on the cpu.
    allowed = ("xpassed", "xfailed") + (("no_device_op",) if device != "cpu" else ())
    assert all(c["outcome"] in allowed and c["xfail_strict"] is False for c in v2), \
        [(c["id"], c["outcome"]) for c in v2 if c["outcome"] not in allowed or c["xfail_strict"] is not False]
    assert device == "cpu" or 0 < sum(c["outcome"] == "no_device_op" for c in v2) < 30


def test_v1_and_v2_calls_run_once(runs):
    _, m, _ = runs["cpu"]
    want = len(set(v1_keys(FILES[0])) | set(v2_keys(FILES[1]))) + len(set(v2_keys(FILES[2])))
    ran = [c for c in m["cases"] if not c["deduplicated_from"]]
    assert len(ran) == m["dedupe"]["unique"] == want, m["dedupe"]
    # 227 of the 243 v2 entries of gpt-oss-20b are calls of the v1 manifest (listed first): run by it, reported for both.
    served_v2 = [c for c in m["cases"] if c.get("upstream_test") and c["model"] == "gpt-oss-20b" and
                 c["deduplicated_from"]]
    assert len(served_v2) == 227
    assert all(c["deduplicated_from"].startswith("gpt-oss-20b::torch-spyre/gpt-oss-20b/") for c in served_v2)


@pytest.mark.parametrize("device", ["cpu", "loopback"])
def test_the_ingest_reads_what_the_metrics_say(runs, device):
    _, m, d = runs[device]
    suite, rows = ingest(d / "j.xml")
    assert int(suite.get("tests")) == len(rows) == len(m["cases"])
    by_id = {c["id"]: c for c in m["cases"]}
    assert len({(r["classname"], r["name"]) for r in rows}) == len(rows)  # testcases are told apart
    for row in rows:
        c = by_id[row["classname"] + "::" + row["name"]]
        assert row["status"] == INGEST_STATUS[c["outcome"]], (row["name"], row["status"], c["outcome"])
        assert row["model"] == c["model"]
        assert row["op_name"] and row["dtype"], row
    per_model = {p.name: ingest(p)[1] for p in (d / "per-model").iterdir()}
    assert sorted(per_model) == ["Meta-Llama-3.1-8B-Instruct.xml", "gpt-oss-20b.xml"]
    assert len(per_model["gpt-oss-20b.xml"]) == 229 + 243
    assert [r["status"] for r in per_model["Meta-Llama-3.1-8B-Instruct.xml"]].count("xpass") + \
        [r["status"] for r in per_model["Meta-Llama-3.1-8B-Instruct.xml"]].count("xfail") == 54


def test_loopback_agrees_with_cpu_case_by_case(runs):
    _, cpu, _ = runs["cpu"]
    _, loop, _ = runs["loopback"]
    by_id = {c["id"]: c for c in cpu["cases"]}
    assert set(by_id) == {c["id"] for c in loop["cases"]}
    for c in loop["cases"]:
        ref = by_id[c["id"]]
        assert c["outcome"] in ("passed", "xpassed") or (c["outcome"], c["stage"]) == (ref["outcome"], ref["stage"]) \
            or (c["outcome"] == "no_device_op" and ref["outcome"] in ("passed", "xpassed"))
