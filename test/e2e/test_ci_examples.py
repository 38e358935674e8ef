"""The shipped nightly examples (scripts/ci): each passes its ecosystem's own validator (check-jsonschema's GitHub
workflow schema, kubernetes-validate), and the shard and merge commands they hold, taken from the files as they are and
run here for every index on the bundled manifests and the loopback device, merge into what one unsharded run reports,
with and without --durations-from."""
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest
import yaml

from conftest import BIN, SOURCE_DIR, opcheck

CI = SOURCE_DIR / "scripts" / "ci"
WORKFLOW = CI / "github-actions-nightly.yml"
INDEXED_JOB = CI / "kubernetes-indexed-job.yaml"
MERGE_JOB = CI / "kubernetes-merge-job.yaml"
# Some cases fail on purpose, so that "exits as the merged run would" is an exit code that says something.
FAULTS = {"OPCHECK_LOOPBACK_FAULTS": "aten::mul.Tensor=bias:1"}


def tool(name):
    """A validator installed beside the interpreter running the tests (scripts/requirements-test.txt)."""
    path = pathlib.Path(sys.executable).parent / name
    assert path.exists(), (f"{name} is not installed beside {sys.executable}: "
                           f"`{sys.executable} -m pip install -r scripts/requirements-test.txt` (scripts/test.sh does)")
    return str(path)


def validate(kind, *files):
    cmd = ([tool("check-jsonschema"), "--builtin-schema", "vendor.github-workflows"] if kind == "workflow"
           else [tool("kubernetes-validate"), "--strict"])
    return subprocess.run(cmd + [str(f) for f in files], capture_output=True, text=True, timeout=300)


def test_the_shipped_examples_pass_their_ecosystems_validators():
    r = validate("workflow", WORKFLOW)
    assert r.returncode == 0, r.stdout + r.stderr
    r = validate("kubernetes", INDEXED_JOB, MERGE_JOB)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.count("passed for resource") == 3, r.stdout


@pytest.mark.parametrize("kind, source, good, bad", [
    ("workflow", WORKFLOW, "runs-on:", "run-on:"),
    ("kubernetes", INDEXED_JOB, "completionMode:", "completionMod:"),
    ("kubernetes", MERGE_JOB, "restartPolicy:", "restartPolicyy:"),
])
def test_the_validators_reject_an_example_with_a_misspelled_key(tmp_path, kind, source, good, bad):
    text = source.read_text()
    assert good in text
    broken = tmp_path / source.name
    broken.write_text(text.replace(good, bad, 1))
    r = validate(kind, broken)
    assert r.returncode != 0, r.stdout + r.stderr
    assert bad.rstrip(":") in r.stdout + r.stderr, r.stdout + r.stderr


def step_with(job, needle):
    steps = [s for s in job["steps"] if needle in s.get("run", "")]
    assert len(steps) == 1, [s.get("name") for s in job["steps"]]
    return steps[0]["run"]


def workflow():
    w = yaml.safe_load(WORKFLOW.read_text())
    jobs = w["jobs"]
    indexes = jobs["shard"]["strategy"]["matrix"]["index"]
    assert int(w["env"]["SHARDS"]) == len(indexes) == len(set(indexes)), "SHARDS must count the matrix's indexes"
    assert jobs["merge"]["needs"] == "shard" and jobs["merge"]["if"] == "always()"
    return w, indexes


def run_script(script, cwd, env, shell=("bash", "-e", "-c")):
    full = dict(os.environ)
    full.pop("OPCHECK_MANIFESTS", None)
    full.update(env)
    full["NO_COLOR"] = "1"
    return subprocess.run([*shell, script], cwd=cwd, env=full, capture_output=True, text=True, timeout=900)


def expand(script, values):
    """The script with GitHub's ${{ ... }} expressions the test can give filled in; any other is a test error."""
    out = re.sub(r"\$\{\{\s*([\w.]+)\s*\}\}", lambda m: str(values[m.group(1)]), script)
    assert "${{" not in out, out
    return out


@pytest.fixture(scope="module")
def unsharded(tmp_path_factory):
    """One machine, every case: the run the merged shards must equal (its exit code and metrics)."""
    tmp = tmp_path_factory.mktemp("whole")
    whole = tmp / "whole.json"
    r = opcheck("run", "--manifests", SOURCE_DIR / "manifests", "--device", "loopback", "-q",
                "--metrics-json", whole, "--artifact-dir", tmp / "whole-art", env=FAULTS)
    assert r.rc == 1, r  # the fault makes some cases fail
    return r.rc, json.loads(whole.read_text())


def verdicts(metrics):
    return {c["id"]: (c["outcome"], c["stage"], c["deduplicated_from"] != "") for c in metrics["cases"]}


def assert_merged_equals(merged_path, junit_path, whole):
    """The merged metrics and JUnit equal the unsharded run's, and the merged HTML page beside them lists each of its
    failures."""
    merged = json.loads(pathlib.Path(merged_path).read_text())
    assert verdicts(merged) == verdicts(whole)
    assert [c["id"] for c in merged["cases"]] == [c["id"] for c in whole["cases"]]
    assert merged["totals"] == whole["totals"]
    assert merged["run"]["shard"] == ""
    root = ET.parse(junit_path).getroot()
    assert sum(1 for _ in root.iter("testcase")) == len(whole["cases"])
    page = (pathlib.Path(merged_path).parent / "report.html").read_text()
    failed = {c["id"] for c in whole["cases"] if c["outcome"] == "failed"}
    assert failed and set(re.findall(r'<tr data-id="([^"]+)" data-model="[^"]*" data-outcome="failed"', page)) == failed
    return merged


def github_round(ws, w, indexes, env):
    shard_step = step_with(w["jobs"]["shard"], "--shard")
    for i in indexes:
        r = run_script(expand(shard_step, {"matrix.index": i}), ws, env)
        assert r.returncode == 0, r.stdout + r.stderr  # case failures are the merge's to report
    r = run_script(expand(step_with(w["jobs"]["merge"], " merge "), {}), ws, env)
    return r


def test_shards_made_by_the_workflows_commands_merge_into_the_unsharded_run(tmp_path, unsharded):
    w, indexes = workflow()
    rc_whole, whole = unsharded
    ws = tmp_path / "workspace"  # the checkout the jobs run in: the bundled manifests at MANIFESTS
    ws.mkdir()
    (ws / w["env"]["MANIFESTS"]).symlink_to(SOURCE_DIR / "manifests")
    env = {**{k: str(v) for k, v in w["env"].items()}, "OPCHECK": str(BIN), **FAULTS}

    merge = github_round(ws, w, indexes, env)
    assert merge.returncode == rc_whole, merge.stdout + merge.stderr
    first = assert_merged_equals(ws / "merged" / "metrics.json", ws / "merged" / "junit.xml", whole)
    assert "durations_sha256" not in first["run"]

    # The next night: the merge job's own step keeps the merged metrics, and the shards split by them.
    keep = step_with(w["jobs"]["merge"], "durations/metrics.json")
    r = run_script(expand(keep, {}), ws, env)
    assert r.returncode == 0, r.stderr
    for stale in ws.glob("reports/*"):
        shutil.rmtree(stale) if stale.is_dir() else stale.unlink()
    merge = github_round(ws, w, indexes, env)
    assert merge.returncode == rc_whole, merge.stdout + merge.stderr
    second = assert_merged_equals(ws / "merged" / "metrics.json", ws / "merged" / "junit.xml", whole)
    assert second["run"]["durations_recorded"] > 0 and second["run"]["durations_estimated"] == 0
    assert len(second["run"]["expected_shard_s"]) == len(indexes)
    shards = [json.loads((ws / "reports" / f"shard-{i}.json").read_text()) for i in indexes]
    assert len({s["run"]["durations_sha256"] for s in shards}) == 1
    # The metrics files with the new fields are what schemas/metrics.schema.json allows.
    r = subprocess.run([tool("check-jsonschema"), "--schemafile", str(SOURCE_DIR / "schemas" / "metrics.schema.json"),
                        str(ws / "merged" / "metrics.json"), str(ws / "reports" / "shard-0.json")],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr


def container(doc):
    (c,) = doc["spec"]["template"]["spec"]["containers"]
    assert c["command"][:2] == ["/bin/sh", "-c"]
    return c["command"][2], {e["name"]: e["value"] for e in c["env"]}


def test_shards_made_by_the_indexed_jobs_commands_merge_into_the_unsharded_run(tmp_path, unsharded):
    (job,) = [d for d in yaml.safe_load_all(INDEXED_JOB.read_text()) if d["kind"] == "Job"]
    (merge_job,) = list(yaml.safe_load_all(MERGE_JOB.read_text()))
    spec = job["spec"]
    assert spec["completionMode"] == "Indexed"
    shard_script, shard_env = container(job)
    merge_script, merge_env = container(merge_job)
    n = int(shard_env["OPCHECK_TOTAL_SHARDS"])
    assert n == spec["completions"] == spec["parallelism"], "OPCHECK_TOTAL_SHARDS must be the Job's completions"
    rc_whole, whole = unsharded
    reports = tmp_path / "volume"  # the shared volume
    reports.mkdir()
    here = {"OPCHECK": str(BIN), "MANIFESTS": str(SOURCE_DIR / "manifests"), "REPORTS": str(reports), **FAULTS}

    for night in (1, 2):
        for i in range(n):
            # What Kubernetes gives each pod of an Indexed Job.
            r = run_script(shard_script, tmp_path, {**shard_env, **here, "JOB_COMPLETION_INDEX": str(i)},
                           shell=("/bin/sh", "-c"))
            assert r.returncode == 0, r.stdout + r.stderr
        r = run_script(merge_script, tmp_path, {**merge_env, **here}, shell=("/bin/sh", "-c"))
        assert r.returncode == rc_whole, r.stdout + r.stderr
        merged = assert_merged_equals(reports / "merged" / "metrics.json", reports / "merged" / "junit.xml", whole)
        # The first night splits by size and leaves the times the second night splits by.
        assert ("durations_sha256" in merged["run"]) == (night == 2)
        assert (reports / "durations.json").read_bytes() == (reports / "merged" / "metrics.json").read_bytes()
