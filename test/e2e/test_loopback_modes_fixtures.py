"""The real torch-spyre manifests on the loopback in each of its modes (OPCHECK_LOOPBACK_MODE, issue 29), with
isolated workers: a device that computes more precisely, widens norm statistics, lets another writer of a repeated
index win, breaks ties the other way or accumulates in another order passes every case, as a correct accelerator
must (fork_sensitive is on throughout, so the run's own process never touches the device)."""
import pytest

from conftest import SPYRE, metrics, opcheck

FILES = [SPYRE / "gpt-oss-20b.yaml", SPYRE / "Meta-Llama-3.1-8B-Instruct.yaml"]
NOT_A_TENSOR_OP = "torch._C._log_api_usage_once"  # reported skipped on every device
pytestmark = pytest.mark.corpus


# Two runs, not four: precise changes every floating result, and the three freedoms touch disjoint ops, so one run
# with all three proves each (a run of the corpus takes minutes of CI's two cores).
@pytest.mark.parametrize("mode", ["precise", "stats_fp32,any_writer,shuffle_accumulate"])
def test_every_fixture_case_passes_in_each_mode(tmp_path, mode):
    missing = [str(f) for f in FILES if not f.exists()]
    assert not missing, f"fixtures missing: {missing}. Fix: check out the shared fixtures beside the repository " \
                        "(../shared/fixtures) or point OPCHECK_FIXTURES at them"
    out = tmp_path / "m.json"
    r = opcheck("run", "--manifests", *FILES, "--device", "loopback", "-j", "2", "--metrics-json", out,
                "--artifact-dir", tmp_path / "art", env={"OPCHECK_LOOPBACK_MODE": f"{mode},fork_sensitive"},
                timeout=2400)
    assert out.exists(), r
    cases = metrics(out)["cases"]
    assert len(cases) == 229 + 113, r
    failed = [(c["id"], c["stage"], (c.get("message") or "")[:300]) for c in cases
              if c["outcome"] not in ("passed", "no_device_op") and c["op"] != NOT_A_TENSOR_OP]
    assert not failed, failed
