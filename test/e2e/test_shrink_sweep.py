"""`opcheck shrink` and `opcheck sweep` on a real fixture case with a fault injected into the loopback device: shrink
finds a smaller call that `opcheck run` still fails the same way, sweep shows where failing starts and stops, and
both honour their bounds."""
import json
import re
import xml.etree.ElementTree as ET

import os
import subprocess
import sys

from conftest import BIN, OWN_SPYRE, opcheck, write_manifest

MANIFEST = OWN_SPYRE / "tiny-gpt.yaml"
CASE = "tiny-gpt::torch.mul.3"  # bf16[32] * fp32[1,11,32]
FAULT = {"OPCHECK_LOOPBACK_FAULTS": "aten::mul.Tensor=bias:1e-1"}


def shrink(tmp_path, *extra, env=FAULT, case=CASE):
    out = tmp_path / "shrunk"
    r = opcheck("shrink", case, "--manifests", MANIFEST, "--device", "loopback", "-j", "2", "-o", out, *extra,
                env=env)
    return r, out


def test_shrink_writes_a_smaller_call_that_run_fails_the_same_way(tmp_path):
    r, out = shrink(tmp_path)
    assert r.rc == 0, r
    facts = json.loads((out / "shrink.json").read_text())
    original, minimal = facts["original"], facts["minimal"]
    assert original["input_elements"] == 32 + 11 * 32, facts
    assert minimal["input_elements"] < original["input_elements"], facts
    assert original["signature"].startswith("INCORRECT_RESULT"), facts
    assert minimal["signature"] == original["signature"], facts
    # Side by side on stdout: both calls and both element counts.
    call_row = next(l for l in r.out.splitlines() if l.startswith("call"))
    assert original["call"] in call_row and minimal["call"] in call_row, r
    elements_row = next(l for l in r.out.splitlines() if l.startswith("elements"))
    assert elements_row.split()[1:] == [str(original["input_elements"]), str(minimal["input_elements"])], r
    # The minimal manifest, run by `opcheck run` with the same fault, fails the same way (stage and op).
    rerun = opcheck("run", "--manifests", out / "minimal.yaml", "--device", "loopback", "--metrics-json",
                    tmp_path / "m.json", "--artifact-dir", tmp_path / "art", env=FAULT)
    assert rerun.rc == 1, rerun
    cases = json.loads((tmp_path / "m.json").read_text())["cases"]
    assert [c["id"] for c in cases] == [CASE + ".min"], cases
    assert cases[0]["stage"] == "INCORRECT_RESULT", cases
    assert original["signature"].split(" | ")[1].startswith(cases[0]["resolved_op"]), (facts, cases)
    # ... and passes without it: the failure is the device's, not the shrunk call's.
    clean = opcheck("run", "--manifests", out / "minimal.yaml", "--device", "loopback", "--artifact-dir",
                    tmp_path / "art2")
    assert clean.rc == 0, clean
    script = (out / "repro.py").read_text()
    assert "aten::mul.Tensor=bias:1e-1" in script and "torch" in script


def test_shrink_keeps_only_calls_that_fail_the_same_way(tmp_path):
    """Shrinking one side of a matmul alone makes a smaller call that raises (the inner dims no longer match): it fails,
    but not the way the case fails, so the shrink must not keep it."""
    manifest = write_manifest(tmp_path / "mm.yaml", "mm", [
        ["  - name: matmul.1", "    op: torch.matmul", "    inputs:",
         "      - tensor: {shape: [4, 8], init: randn}", "      - tensor: {shape: [8, 3], init: randn}"]])
    fault = {"OPCHECK_LOOPBACK_FAULTS": "aten::mm=bias:1e-1"}
    out = tmp_path / "shrunk"
    r = opcheck("shrink", "mm::matmul.1", "--manifests", manifest, "--device", "loopback", "-j", "2", "-o", out,
                env=fault)
    assert r.rc == 0, r
    facts = json.loads((out / "shrink.json").read_text())
    assert facts["original"]["signature"].startswith("INCORRECT_RESULT | aten::matmul"), facts
    assert facts["minimal"]["signature"] == facts["original"]["signature"], facts
    assert facts["minimal"]["input_elements"] < 4 * 8 + 8 * 3, facts
    rerun = opcheck("run", "--manifests", out / "minimal.yaml", "--device", "loopback", "--metrics-json",
                    tmp_path / "m.json", "--artifact-dir", tmp_path / "art", env=fault)
    assert rerun.rc == 1, rerun
    case = json.loads((tmp_path / "m.json").read_text())["cases"][0]
    assert case["stage"] == "INCORRECT_RESULT", case


def test_shrink_of_a_passing_case_exits_1_and_writes_no_manifest(tmp_path):
    r, out = shrink(tmp_path, env={})
    assert r.rc == 1, r
    assert "does not fail" in r.out, r
    assert not (out / "minimal.yaml").exists()


def test_shrink_stops_at_budget_steps(tmp_path):
    r, out = shrink(tmp_path, "--budget-steps", "3")
    assert r.rc == 0, r
    facts = json.loads((out / "shrink.json").read_text())
    assert facts["calls_tried"] == 3 and facts["stopped_by"] == "steps", facts
    assert "--budget-steps 3 reached" in r.out, r


def test_shrink_stops_at_budget_seconds(tmp_path):
    r, out = shrink(tmp_path, "--budget-s", "0.001")
    assert r.rc == 0, r
    facts = json.loads((out / "shrink.json").read_text())
    assert facts["calls_tried"] == 0 and facts["stopped_by"] == "time", facts
    assert facts["minimal"]["input_elements"] == facts["original"]["input_elements"], facts


def table_rows(out):
    lines = out.splitlines()
    start = next(i for i, l in enumerate(lines) if l.split()[:4] == ["dtype", "layout", "shape", "verdict"])
    rows = []
    for line in lines[start + 1:]:
        m = re.match(r"(\S+)\s+(as written|contiguous|transposed|sliced|offset)\s+(.*?)\s+(PASSED|FAILED|ERROR|"
                     r"SKIPPED|NOT_SUPPORTED|XFAILED|XPASSED)(?:\s|$)", line)
        if not m:
            break
        rows.append(m.groups())
    return rows


def test_sweep_prints_a_verdict_per_dtype_and_layout_and_reports_each_variant(tmp_path):
    junit, metrics = tmp_path / "sweep.xml", tmp_path / "sweep.json"
    r = opcheck("sweep", CASE, "--manifests", MANIFEST, "--device", "loopback", "-j", "2", "--max-variants", "25",
                "--junit-xml", junit, "--metrics-json", metrics, env=FAULT)
    assert r.rc == 1, r
    rows = table_rows(r.out)
    assert len(rows) == 25, r
    assert rows[0][:3] == ("bf16+fp32", "as written", "[32] [1,11,32]"), r  # the call as the manifest writes it
    verdict = {(d, l): v for d, l, s, v in rows if s == "[32] [1,11,32]"}
    for dtype in ("fp32", "fp16", "bf16"):
        for layout in ("contiguous", "transposed", "offset"):
            assert verdict.get((dtype, layout)) == "FAILED", (dtype, layout, r)
    # The fault biases float outputs only: the integer variants pass, which the table shows.
    assert verdict.get(("int32", "contiguous")) == "PASSED", r
    cases = json.loads(metrics.read_text())["cases"]
    assert len(cases) == 25 and len({c["id"] for c in cases}) == 25, cases
    assert all(c["id"].startswith(CASE + "[") for c in cases), cases
    by_id = {c["id"]: c for c in cases}
    offset = by_id[CASE + "[bf16,offset,[32];[1,11,32]]"]
    assert offset["outcome"] == "failed", offset
    # Each variant runs the layout its row names: the reports' call shows it.
    assert offset["call"] == "torch.mul(bf16[32]{offset 3}, bf16[1,11,32]{offset 3})", offset
    transposed = by_id[CASE + "[fp32,transposed,[32];[1,11,32]]"]
    assert transposed["call"] == "torch.mul(fp32[32], fp32[1,11,32]{stride 352,1,11})", transposed
    testcases = ET.parse(junit).getroot().iter("testcase")
    assert len(list(testcases)) == 25


def test_sweep_runs_at_most_max_variants(tmp_path):
    r = opcheck("sweep", CASE, "--manifests", MANIFEST, "--device", "loopback", "-j", "2", "--max-variants", "4",
                env=FAULT)
    assert r.rc == 1, r
    assert len(table_rows(r.out)) == 4, r
    assert re.search(r"\d+ more left out by --max-variants 4", r.err), r


def help_examples(command):
    """The example command lines of `opcheck COMMAND --help`, as a person would copy them."""
    text = opcheck(command, "--help").out
    lines = text[text.index("Examples"):].splitlines()[1:]
    examples = []
    for line in lines:
        if not line.startswith("  "):
            break
        examples.append(line.split("   #")[0].strip())
    return examples


def test_help_examples_work_as_written(tmp_path):
    """Every example of shrink's and sweep's --help, run by a shell in an empty folder with opcheck and a Python with
    torch on PATH, does what it says: no error, the files it names written."""
    env = {"PATH": f"{BIN.parent}:{os.path.dirname(sys.executable)}:{os.environ['PATH']}"}
    examples = help_examples("shrink") + help_examples("sweep")
    assert len(examples) == 5, examples
    for line in examples:
        r = opcheck_shell(line, tmp_path, env)
        # shrink 0; a run, a repro script or a sweep of a failing call 1 (the fault); 0 without it.
        assert r.returncode in (0, 1) and "error" not in r.stderr, (line, r.returncode, r.stdout[-2000:], r.stderr[-2000:])
        if "python3" in line:
            assert "DIFFERS" in r.stdout, (line, r.stdout)
    for written in ("shrunk/minimal.yaml", "shrunk/repro.py", "shrunk/shrink.json", "sweep.xml", "sweep.json"):
        assert (tmp_path / written).is_file(), written


def opcheck_shell(line, cwd, env):
    full_env = dict(os.environ)
    full_env.pop("OPCHECK_MANIFESTS", None)
    full_env.update(env)
    return subprocess.run(["sh", "-c", line], cwd=cwd, env=full_env, capture_output=True, text=True, timeout=600)


def test_run_shrink_puts_each_groups_minimal_call_into_the_metrics(tmp_path):
    """`run --shrink`: every failure group's example is shrunk as `opcheck shrink` shrinks it, and the metrics'
    failure_groups[].minimal hold that call; without --shrink it stays null."""
    cases = ["tiny-gpt::torch.mul.2", CASE, "tiny-gpt::torch.sin.1"]
    metrics = tmp_path / "m.json"
    r = opcheck("run", *cases, "--manifests", MANIFEST, "--device", "loopback", "-j", "2", "--shrink",
                "--metrics-json", metrics, "--artifact-dir", tmp_path / "art", env=FAULT)
    assert r.rc == 1, r
    groups = json.loads(metrics.read_text())["failure_groups"]
    assert len(groups) == 1 and groups[0]["count"] == 2, groups
    example = groups[0]["example"]
    alone, out = shrink(tmp_path, case=example)
    assert alone.rc == 0, alone
    assert groups[0]["minimal"] == json.loads((out / "shrink.json").read_text())["minimal"]["call"], groups
    plain = opcheck("run", *cases, "--manifests", MANIFEST, "--device", "loopback", "-j", "2", "--metrics-json",
                    tmp_path / "plain.json", "--artifact-dir", tmp_path / "art2", env=FAULT)
    assert plain.rc == 1, plain
    assert json.loads((tmp_path / "plain.json").read_text())["failure_groups"][0]["minimal"] is None


def test_shrink_of_an_unknown_case_or_to_an_unwritable_folder_is_a_usage_error(tmp_path):
    r, out = shrink(tmp_path, case="tiny-gpt::torch.nope.1")
    assert r.rc == 4 and "torch.nope.1" in r.err and "Fix:" in r.err, r
    assert not out.exists(), "the -o folder is made only for a case that exists"
    blocker = tmp_path / "file"
    blocker.write_text("")
    r = opcheck("shrink", CASE, "--manifests", MANIFEST, "--device", "loopback", "-o", blocker / "sub", env=FAULT)
    assert r.rc == 4 and "cannot create the -o folder" in r.err and "Fix:" in r.err, r


def test_shrink_and_sweep_judge_with_the_status_configs_tolerances(tmp_path):
    """A status config that loosens the case's tolerances past the fault's bias makes it pass, for shrink and sweep as
    for run: shrink has nothing to shrink (exit 1), every variant of the sweep passes."""
    config = tmp_path / "opcheck.yaml"
    config.write_text('rules:\n  - id: "tiny-gpt::torch.mul.3"\n    rtol: 1.0\n    atol: 1.0\n'
                      '    reason: the bias stays within these\n')
    r, out = shrink(tmp_path, "--config", config)
    assert r.rc == 1 and "does not fail" in r.out, r
    r = opcheck("sweep", CASE, "--manifests", MANIFEST, "--device", "loopback", "-j", "2", "--max-variants", "4",
                "--config", config, env=FAULT)
    assert r.rc == 0, r
    assert [row[3] for row in table_rows(r.out)] == ["PASSED"] * 4, r


def test_merge_keeps_the_minimal_calls_run_shrink_found_in_each_shard(tmp_path):
    """Shards run with --shrink each shrink their own groups' examples; the merged metrics regroup the cases and keep
    a minimal call for the group (the merged example's, else one a member's shard found)."""
    cases = ["tiny-gpt::torch.mul.2", CASE, "tiny-gpt::torch.sin.1"]
    found = []
    for k in (0, 1):
        shard = tmp_path / f"s{k}.json"
        r = opcheck("run", *cases, "--manifests", MANIFEST, "--device", "loopback", "--shard", f"{k}/2", "--shrink",
                    "--metrics-json", shard, "--artifact-dir", tmp_path / f"art{k}", env=FAULT)
        assert r.rc in (0, 1), r
        found += [g["minimal"] for g in json.loads(shard.read_text())["failure_groups"]]
    assert found and all(found), found
    merged = tmp_path / "merged.json"
    m = opcheck("merge", tmp_path / "s0.json", tmp_path / "s1.json", "--metrics-json", merged)
    assert m.rc == 1, m
    [group] = json.loads(merged.read_text())["failure_groups"]
    assert group["count"] == 2 and group["minimal"] in found, group
