"""One tally through every report: a run on the loopback whose cases end in every outcome (passed, failed, not
supported, skipped, xfailed, xpassed, errors, not run, passed without the device) and in every stage the loopback can
produce, then `merge` and `report` of its metrics. The console's summary and progress lines, the metrics, JUnit, the
HTML page's sections and the merged reports count the same occurrences, and the case line, the metrics, JUnit, the
HTML row and the failure group name the same stage for each case."""
import json
import pathlib
import re
import xml.etree.ElementTree as ET

import pytest

from conftest import SOURCE_DIR, opcheck, opcheck_on_a_terminal

# One op per fault, so each fault reaches exactly the cases meant for it.
FAULTS = ";".join([
    "aten::add.Tensor=bias:1",         # INCORRECT_RESULT (and the xfailed case)
    "aten::mul.Tensor=notimpl:Float",  # NOT_SUPPORTED
    "aten::exp=nondet",                # NONDETERMINISTIC
    "aten::sigmoid=throw",             # FAILED_RUNTIME
    "aten::sin=segv",                  # CRASHED
    "aten::cos=hang",                  # TIMEOUT (the case's own timeout: 1 s)
    "aten::_copy_from=contiguous_only",  # FAILED_TRANSFER: only the transposed input is not contiguous
])

ALWAYS = "{expr: \"dtype_str == 'fp32'\", reason: on purpose}"


def tensor(shape, extra=""):
    return f"      - tensor: {{shape: {shape}{extra}}}"


# (name, outcome, stage, the case's YAML lines after its name), in the order -j 1 runs them. --maxfail stops the run
# at the last failing one, so the cases of TAIL are not run.
CASES = [
    ("pass", "passed", "PASSED", ["op: torch.neg", "inputs:", tensor([3, 5])]),
    ("pass_again", "passed", "PASSED", ["op: torch.neg", "inputs:", tensor([3, 5])]),  # deduplicated
    ("skip", "skipped", "SKIPPED", ["op: torch.neg", f"skip_if: {ALWAYS}", "inputs:", tensor([3, 6])]),
    ("xfail", "xfailed", "INCORRECT_RESULT", ["op: torch.add", f"xfail_if: {ALWAYS}", "inputs:", tensor([3, 7]),
                                              tensor([3, 7])]),
    ("sym_sum", "no_device_op", "NO_DEVICE_OP", ["op: torch.sym_sum", "inputs:", "      - value: [1, 2, 3]"]),
    ("host_only", "no_device_op", "NO_DEVICE_OP", ["op: torch.neg", "inputs:", tensor([2, 9], ", device: cpu")]),
    ("wrong", "failed", "INCORRECT_RESULT", ["op: torch.add", "inputs:", tensor([4, 4]), tensor([4, 4])]),
    ("no_kernel", "not_supported", "NOT_SUPPORTED", ["op: torch.mul", "inputs:", tensor([4, 5]), tensor([4, 5])]),
    ("xpass", "xpassed", "PASSED", ["op: torch.neg", f"xfail_if: {ALWAYS}", "inputs:", tensor([3, 8])]),
    ("bad_call", "error", "INVALID_CASE", ["op: torch.neg", "inputs:", tensor([2, 2]), tensor([2, 2])]),
    ("no_raise", "error", "FAILED_REFERENCE", ["op: torch.neg", "expects_error: {type: RuntimeError, match: never}",
                                                "inputs:", tensor([3, 9])]),
    # 2 TiB of inputs: the allocation fails (FAILED_INPUT) where the kernel does not overcommit memory.
    ("too_big", "error", "FAILED_INPUT", ["op: torch.neg", "inputs:", tensor([524288, 1048576])]),
    ("varies", "failed", "NONDETERMINISTIC", ["op: torch.exp", "inputs:", tensor([8, 32])]),
    ("raises", "failed", "FAILED_RUNTIME", ["op: torch.sigmoid", "inputs:", tensor([4, 6])]),
    ("crashes", "failed", "CRASHED", ["op: torch.sin", "inputs:", tensor([4, 7])]),
    ("hangs", "failed", "TIMEOUT", ["op: torch.cos", "timeout: 1", "inputs:", tensor([4, 8])]),
    ("transfer", "failed", "FAILED_TRANSFER",
     ["op: torch.tanh", "inputs:", tensor([4, 9], ", preset: transpose_view, preset_args: {dim0: 0, dim1: 1}")]),
    # Not run, but for what was already in flight when --maxfail stopped the run (passed then). A worker has up to 64
    # cases queued when its cases are quick (WorkerPool's depth), so 64 cases follow the last failing one: at least
    # one is never sent, however fast this machine runs the others.
]
TAIL = [f"late_{k}" for k in range(64)]
CASES += [(n, "skipped", "SKIPPED", ["op: torch.neg", "inputs:", tensor([5, 5 + k])]) for k, n in enumerate(TAIL)]
if pathlib.Path("/proc/sys/vm/overcommit_memory").read_text().strip() == "1":  # the allocation would succeed
    CASES = [c for c in CASES if c[0] != "too_big"]
FAILING = [n for n, o, _, _ in CASES if o in ("failed", "not_supported", "error", "xpassed")]


def not_run(m):
    """The cases of TAIL the stop left unrun (the others ran, and passed): at least one, and the last ones."""
    left = [c["name"] for c in m["cases"] if c["name"] in TAIL and c["message"].startswith("not run:")]
    assert left and left == TAIL[len(TAIL) - len(left):], left
    return set(left)


# Stages no case of this run can end in, and why; every other stage of the binary's Stage enum must be produced above.
NOT_PRODUCED = {
    **({} if any(c[0] == "too_big" for c in CASES) else
       {"FAILED_INPUT": "this kernel overcommits memory (vm.overcommit_memory 1): a 2 TiB input would be built"}),
    "FAILED_COMPILE": "needs --compile-backend, a Python host and a compiler: a run of its own (test_modules.py)",
    "FAILED_SETUP": "the device did not start, so no case runs beside it (test_console.py: a device that does not "
                    "start)",
}

# The summary line's words for each outcome (metrics key -> words); skipped counts only the skips that ran.
WORDS = {"failed": "failed", "not_supported": "not supported", "passed": "passed",
         "no_device_op": "passed without the device", "skipped": "skipped", "xfailed": "xfailed",
         "xpassed": "xpassed", "errors": "errors"}


def manifest(folder):
    lines = ["model: tally", "defaults: {dtype: fp32}", "cases:"]
    for name, _, _, body in CASES:
        lines.append(f"  - name: {name}")
        lines += [("    " + b) if not b.startswith("      ") else b for b in body]
    path = folder / "tally.yaml"
    path.write_text("\n".join(lines) + "\n")
    return path


def counts(text):
    """{"failed": 2, "not run (maxfail)": 2, ...}: the counts of a summary line, a progress line or a heading."""
    text = re.sub(r" in [0-9.]+s.*$", "", text.strip())
    out = {}
    for part in text.split(", "):
        m = re.fullmatch(r"(\d+) (.+)", part)
        assert m, (part, text)
        out[m.group(2)] = int(m.group(1))
    return out


def said(totals, stopped):
    """What the summary line must say for these metrics totals and `stopped` cases not run."""
    want = {WORDS[k]: totals[k] for k in WORDS if totals[k]}
    want["errors" if totals["errors"] != 1 else "error"] = want.pop("errors", None)
    want = {k: v for k, v in want.items() if v}
    want["skipped"] = totals["skipped"] - stopped
    if not want["skipped"]:
        del want["skipped"]
    want["not run (maxfail)"] = stopped
    return want


@pytest.fixture(scope="module")
def tally(tmp_path_factory):
    """The run (stderr on a pseudo-terminal, where the progress line is drawn), then merge and report of it."""
    tmp = tmp_path_factory.mktemp("tally")
    m = manifest(tmp)
    rc, stdout, drawn = opcheck_on_a_terminal(
        "run", "--manifests", m, "--device", "loopback", "-j", "1", "--maxfail", len(FAILING), "--metrics-json",
        tmp / "m.json", "--junit-xml", tmp / "j.xml", "--html", tmp / "page.html", "--artifact-dir", tmp / "art",
        env={"OPCHECK_LOOPBACK_FAULTS": FAULTS}, timeout=300)
    assert rc == 1, (rc, stdout[-3000:], drawn[-3000:])
    merged = opcheck("merge", tmp / "m.json", "--metrics-json", tmp / "merged.json", "--junit-xml",
                     tmp / "merged.xml", "--html", tmp / "merged.html")
    assert merged.rc == 1, merged
    report = opcheck("report", tmp / "m.json", "--html", tmp / "report.html")
    assert report.rc == 0, report
    # The case lines: -v prints one per case instead of the progress line (a run of its own, the same verdicts).
    verbose = opcheck("run", "--manifests", m, "--device", "loopback", "-j", "1", "-v", "--maxfail", len(FAILING),
                      "--metrics-json", tmp / "v.json", "--artifact-dir", tmp / "art-v",
                      env={"OPCHECK_LOOPBACK_FAULTS": FAULTS})
    assert verbose.rc == 1, verbose
    return {"dir": tmp, "stdout": stdout, "stderr": drawn, "merge": merged, "verbose": verbose.out}


def summary_of(stdout):
    return [line for line in stdout.splitlines() if line.strip()][-1]


def test_every_outcome_and_the_expected_stage_per_case(tally):
    m = json.loads((tally["dir"] / "m.json").read_text())
    got = {c["name"]: (c["outcome"], c["stage"]) for c in m["cases"]}
    left = not_run(m)
    want = {n: (o, s) if n not in TAIL or n in left else ("passed", "PASSED") for n, o, s, _ in CASES}
    assert got == want, {n: (got.get(n), w) for n, w in want.items() if got.get(n) != w}
    for c in m["cases"]:
        if c["name"] in left:
            assert c["message"].startswith("not run: the run stopped (maxfail"), c
    kinds = {o for o, _ in got.values()} | {"not run"}
    assert kinds == {"passed", "failed", "not_supported", "skipped", "xfailed", "xpassed", "error", "not run",
                     "no_device_op"}
    nd = [c for c in m["cases"] if c["outcome"] == "no_device_op"]
    assert all(c["message"].startswith("passed without the device: no op of the call ran on loopback")
               for c in nd), nd
    # A case the device cannot run pays for no reference.
    ns = [c for c in m["cases"] if c["stage"] == "NOT_SUPPORTED"]
    assert ns and all(c["timings"]["reference_ms"] == 0 for c in ns), ns


def test_summary_progress_metrics_and_merge_count_one_tally(tally):
    m = json.loads((tally["dir"] / "m.json").read_text())
    totals, stopped = m["totals"], m["run"]["not_run"]
    assert stopped == len(not_run(m))
    by_outcome = {}
    for c in m["cases"]:
        by_outcome[c["outcome"]] = by_outcome.get(c["outcome"], 0) + 1
    assert {k: v for k, v in totals.items() if k != "total" and v} == \
        {("errors" if k == "error" else k): v for k, v in by_outcome.items()}
    assert totals["total"] == len(CASES) == len(m["cases"])
    stages = {}
    for c in m["cases"]:
        stages[c["stage"]] = stages.get(c["stage"], 0) + 1
    assert {k: v for k, v in m["stages"].items() if v} == stages
    # Not in the pass rate: (passed + non-strict xpassed) / (passed + failed + errors + xpassed + not_supported).
    counted = totals["passed"] + totals["failed"] + totals["errors"] + totals["xpassed"] + totals["not_supported"]
    assert m["pass_rate"]["overall"] == pytest.approx(totals["passed"] / counted)
    assert m["pass_rate"]["per_model"]["tally"]["no_device_op"] == 2

    summary = summary_of(tally["stdout"])
    assert counts(summary) == said(totals, stopped), summary

    progress = [p.splitlines()[0] for p in tally["stderr"].split("\r\x1b[K") if re.match(r"\d+/\d+ done", p)]
    assert progress, tally["stderr"][-2000:]
    last = re.fullmatch(r"(\d+)/(\d+) done: (.*?)(; ETA .*)?", progress[-1].strip())
    assert last, progress[-1]
    # The progress line counts the occurrences that ran; the not-run ones are listed by the summary alone.
    ran = said(totals, stopped)
    del ran["not run (maxfail)"]
    assert counts(last.group(3)) == ran, (progress[-1], summary)

    merged = json.loads((tally["dir"] / "merged.json").read_text())
    assert merged["totals"] == totals and merged["stages"] == m["stages"]
    assert merged["pass_rate"] == m["pass_rate"]
    assert merged["cases"] == m["cases"]
    assert counts(summary_of(tally["merge"].out)) == counts(summary), tally["merge"]
    # diff reads every outcome back: the run against its merge changes nothing.
    diff = opcheck("diff", tally["dir"] / "m.json", tally["dir"] / "merged.json")
    assert diff.rc == 0 and "0 regressions" in diff.out, diff


@pytest.mark.parametrize("which", ["m.json", "merged.json"])
def test_the_metrics_of_every_outcome_are_what_the_schema_allows(tally, which):
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((SOURCE_DIR / "schemas" / "metrics.schema.json").read_text())
    jsonschema.Draft202012Validator(schema).validate(json.loads((tally["dir"] / which).read_text()))


def junit_tally(path):
    root = ET.parse(path).getroot()
    (suite,) = root.iter("testsuite")
    per = {}
    for tc in suite.iter("testcase"):
        props = {p.get("name"): p.get("value") for p in tc.iter("property")}
        kind = next((el.tag + ":" + (el.get("type") or "") for el in tc
                     if el.tag in ("failure", "error", "skipped")), "pass")
        per[tc.get("name")] = (props["outcome"], props["stage"], kind, tc)
    return suite, per


@pytest.mark.parametrize("which", ["j.xml", "merged.xml"])
def test_junit_counts_and_elements_agree_with_the_metrics(tally, which):
    m = json.loads((tally["dir"] / "m.json").read_text())
    t = m["totals"]
    suite, per = junit_tally(tally["dir"] / which)
    assert int(suite.get("tests")) == t["total"]
    assert int(suite.get("failures")) == t["failed"] + t["not_supported"] + t["xpassed"]  # the xpass is strict
    assert int(suite.get("errors")) == t["errors"]
    assert int(suite.get("skipped")) == t["skipped"] + t["xfailed"] + t["no_device_op"]
    element = {"passed": "pass", "failed": "failure:", "not_supported": "failure:NOT_SUPPORTED",
               "xpassed": "failure:xfail_strict", "error": "error:", "skipped": "skipped:pytest.skip",
               "xfailed": "skipped:pytest.xfail", "no_device_op": "skipped:NO_DEVICE_OP"}
    for c in m["cases"]:
        outcome, stage, kind, tc = per[c["name"]]
        assert (outcome, stage) == (c["outcome"], c["stage"]), c["id"]
        want = element[outcome]
        assert kind == want or (want.endswith(":") and kind == want + stage), (c["id"], kind)
        if outcome == "no_device_op":
            assert tc.find("skipped").get("message").startswith("passed without the device"), c["id"]


def html_counts(page):
    kpis = {k: int(v) for k, v in re.findall(r'data-kpi="([a-z_]+)" data-value="(\d+)"', page)}
    model_row = re.search(r'<table class="sortable" id="model-table">.*?</thead><tbody>(.*?)</tbody>', page, re.S)
    cells = {k: int(v) for k, v in re.findall(r'data-col="([a-z_]+)" data-sort="(\d+)"', model_row.group(1))}
    ops = re.search(r'<table class="sortable" id="op-table">.*?</thead><tbody>(.*?)</tbody>', page, re.S).group(1)
    per_op = {}
    for k, v in re.findall(r'data-col="([a-z_]+)" data-sort="(\d+)"', ops):
        per_op[k] = per_op.get(k, 0) + int(v)
    strip = re.search(r'id="outcome-chart"(.*?)</svg>', page, re.S).group(1)
    chart = {k: int(v) for k, v in re.findall(r"<title>([a-z_]+): (\d+)</title>", strip)}
    chips = {k: int(v) for k, v in re.findall(r'data-stage="([A-Z_]+)">[A-Z_]+<b>(\d+)</b>', page)}
    failures = re.search(r'<h2>Failures <span class="count">(\d+)</span> <span class="sub" id="failure-counts">'
                         r'([^<]*)</span></h2>', page)
    rows = re.findall(r'<tr data-id="([^"]+)" data-model="[^"]*" data-outcome="([a-z_]+)" data-stage="([A-Z_]+)"',
                      page)
    header = re.search(r'<div class="summary" id="summary-line">([^<]*)</div>', page).group(1)
    return kpis, cells, per_op, chart, chips, failures, rows, header


@pytest.mark.parametrize("which", ["page.html", "merged.html", "report.html"])
def test_every_html_section_counts_as_the_metrics(tally, which):
    m = json.loads((tally["dir"] / "m.json").read_text())
    t = m["totals"]
    css = {"passed": "passed", "failed": "failed", "error": "errors", "skipped": "skipped", "xfailed": "xfailed",
           "xpassed": "xpassed", "not_supported": "not_supported", "no_device_op": "no_device_op"}
    page = (tally["dir"] / which).read_text()
    kpis, cells, per_op, chart, chips, failures, rows, header = html_counts(page)
    for name, key in css.items():
        assert kpis[name] == t[key], (name, kpis)
        assert cells[name] == t[key], (name, cells)
        assert per_op[name] == t[key], (name, per_op)
        assert chart.get(name, 0) == t[key], (name, chart)
    assert kpis["total"] == cells["total"] == t["total"]
    assert counts(header) == said(t, m["run"]["not_run"]), header
    assert chips == {s: n for s, n in m["stages"].items() if n and s not in ("PASSED", "SKIPPED")}, chips
    failing = [c for c in m["cases"] if c["outcome"] in ("failed", "error", "not_supported", "xpassed")]
    assert failures and int(failures.group(1)) == len(failing) == len(rows), failures
    heading = counts(failures.group(2))
    assert heading == {w: n for w, n in [("failed", t["failed"]), ("not supported", t["not_supported"]),
                                         ("xpassed", t["xpassed"]), ("errors", t["errors"])] if n}, heading
    assert sorted((i, o, s) for i, o, s in rows) == sorted((c["id"], c["outcome"], c["stage"]) for c in failing)


def test_each_case_has_one_stage_in_every_report(tally):
    """The case line (-v), the metrics, JUnit, the HTML row and the failure group agree on each case's stage, for
    every stage the loopback can produce; the stages it cannot are named with the reason."""
    d = tally["dir"]
    m = json.loads((d / "m.json").read_text())
    every_stage = set(m["stages"])  # the binary's whole Stage enum, zero counts included
    produced = {s for _, _, s, _ in CASES}
    assert every_stage == produced | set(NOT_PRODUCED), (every_stage - produced - set(NOT_PRODUCED),
                                                         produced - every_stage)
    assert not produced & set(NOT_PRODUCED)
    _, junit = junit_tally(d / "j.xml")
    left = not_run(m)
    rows = {i: s for i, _, s in html_counts((d / "page.html").read_text())[6]}
    group_of = {}
    for g in m["failure_groups"]:
        for case_id in g["cases"]:
            group_of[case_id] = g["stage"]
    lines = {}
    ran_verbose = {c["id"]: c["stage"] for c in json.loads((d / "v.json").read_text())["cases"]
                   if not c["message"].startswith("not run:")}
    for line in tally["verbose"].split("\n=")[0].splitlines():  # the case lines, before the sections that follow
        hit = re.match(r"(PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS|NOT_SUPPORTED|NO_DEVICE) (tally::\S+)"
                       r"(?: \[([A-Z_]+)\])?", line)
        if hit:
            lines[hit.group(2)] = (hit.group(1), hit.group(3) or "PASSED")
    for c in m["cases"]:
        stage = c["stage"]
        if c["id"] not in ran_verbose:
            assert c["id"] not in lines  # a case not run has no case line
        elif c["name"] not in left:
            assert ran_verbose[c["id"]] == stage and lines[c["id"]][1] == stage, (c["id"], lines.get(c["id"]))
        assert junit[c["name"]][1] == stage, c["id"]
        if c["outcome"] in ("failed", "error", "not_supported"):
            assert group_of[c["id"]] == stage, (c["id"], group_of.get(c["id"]))
        else:
            assert c["id"] not in group_of, c["id"]
        if c["outcome"] in ("failed", "error", "not_supported", "xpassed"):
            assert rows[c["id"]] == stage, c["id"]
    assert lines["tally::sym_sum"][0] == "NO_DEVICE" and lines["tally::host_only"][0] == "NO_DEVICE"


@pytest.mark.parametrize("device,args,expected", [
    ("pyloop", ["--device-import", "opcheck_pyloop", "--device", "pyloop"], "no_device_op"),
    # The CPU is the device under test and the host: whatever the call computed, it computed on the device.
    ("cpu", ["--device", "cpu"], "passed"),
])
def test_a_pass_without_the_device_on_a_python_device_and_none_on_the_cpu(tmp_path, device, args, expected):
    m = manifest(tmp_path)
    r = opcheck("run", "--manifests", m, "tally::sym_sum", "tally::host_only", "tally::pass", *args, "-j", "1",
                "--metrics-json", tmp_path / "m.json", "--junit-xml", tmp_path / "j.xml",
                "--artifact-dir", tmp_path / "art")
    assert r.rc == 0, r
    cases = {c["name"]: c for c in json.loads((tmp_path / "m.json").read_text())["cases"]}
    assert {n: c["outcome"] for n, c in cases.items()} == {"sym_sum": expected, "host_only": expected,
                                                           "pass": "passed"}, cases
    _, junit = junit_tally(tmp_path / "j.xml")
    assert {n: j[2] for n, j in junit.items()} == {
        "sym_sum": "skipped:NO_DEVICE_OP" if expected == "no_device_op" else "pass",
        "host_only": "skipped:NO_DEVICE_OP" if expected == "no_device_op" else "pass", "pass": "pass"}
    if expected == "no_device_op":
        assert cases["sym_sum"]["message"].startswith(f"passed without the device: no op of the call ran on {device}")
        assert r.last_line.startswith("1 passed, 2 passed without the device in "), r
    else:
        assert r.last_line.startswith("3 passed in "), r
