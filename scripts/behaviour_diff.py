#!/usr/bin/env python3
"""The behaviour of two opcheck builds side by side: the same runs with each, and what differs in their verdicts,
failure groups and report bytes once the figures that vary by themselves (times, dates, the artifact folder, the
build's own path) are masked. A restructuring that changes nothing shows "identical" for every run.

    scripts/behaviour_diff.py --before OLD_BUILD_DIR --after NEW_BUILD_DIR --out DIR [--fixtures DIR]
    scripts/behaviour_diff.py --after NEW_BUILD_DIR --out DIR --only-after   (reuse DIR/before from an earlier call)
    --runs bundled,opinfo picks runs; --timeout S gives every case S seconds (a loaded machine)

The runs (each in DIR/<before|after>/<run>/, with --metrics-json, --junit-xml, --html and the console):
  bundled      `opcheck run` over the shipped manifests on the loopback
  spyre        the torch-spyre RFC manifests of --fixtures (torch-spyre/)
  spyre_v2     the torch-spyre v2 test_suite_configs of --fixtures (torch-spyre-v2/)
  opinfo       `import-opinfo --ops OPS`, its files, then a loopback run over them
Exit 0 when every run is identical, 1 when one differs (the diff is printed and kept in DIR/diff.txt), 2 on a run that
could not be made.
"""
import argparse
import difflib
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys

OPINFO_OPS = "add,mul,sum,index_add,nn.functional.embedding,softmax,matmul"
# Figures that differ between two runs of one build: masked before the comparison.
TIME_KEYS = re.compile(r"(_ms|_s|_us|_ns|seconds|time|timestamp|started|finished|date|elapsed|duration|"
                       r"load_average|peak_rss.*|rss.*|pid|hostname)$")
# The HTML page's figures of time: its slowest-cases section (an order set by timing), the time KPIs' values, a
# table cell's time.
HTML_MASKS = [
    (re.compile(r'<section id="slowest">.*?</section>', re.S), '<section id="slowest"><masked></section>'),
    (re.compile(r'(data-kpi="[a-z-]*(time|ms|speedup)[a-z-]*" data-value=")[^"]*"'), r'\1<time>"'),
    (re.compile(r'(data-kpi="speedup".*?kpi-value">)[^<]*'), r'\1<time>'),
    (re.compile(r'(data-col="[a-z_]*_ms" data-sort=")[^"]*">[^<]*'), r'\1<time>"><time>'),
]
# The build's own files and their digests (two builds live in two folders, and their libraries differ in bytes).
BUILD_KEYS = ("device_lib_sha256", "exec_lib_sha256", "opcheck_commit")
MASKS = [
    (re.compile(r"[^\s\"'(]*/(libopcheck_[a-z_]+\.so|opcheck_floor|python/)"), r"<build>/\1"),
    (re.compile(r"\b\d+(\.\d+)?\s?(ms|s|us|µs|min)\b"), "<time>"),
    (re.compile(r"\b\d{4}-\d\d-\d\d[T ]\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:?\d\d)?"), "<date>"),
    (re.compile(r'time="[^"]*"'), 'time="<time>"'),
    (re.compile(r'timestamp="[^"]*"'), 'timestamp="<date>"'),
    (re.compile(r'hostname="[^"]*"'), 'hostname="<host>"'),
    (re.compile(r'(<property name="[a-z_]*_(ms|s)" value=")[^"]*"'), r'\1<time>"'),
    (re.compile(r"ETA [^;,)\n]*"), "ETA <time>"),
    (re.compile(r"(ETA <time>(, last|; last)) \S+"), r"\1 <case>"),  # the progress line's last case: -j 2's order
]


def run(cmd, cwd, log, env=None, ok=(0, 1)):
    with open(log, "w") as f:
        p = subprocess.run([str(c) for c in cmd], cwd=cwd, stdout=f, stderr=subprocess.STDOUT,
                           env={**os.environ, **(env or {})})
    if p.returncode not in ok:
        print(f"behaviour_diff: {' '.join(map(str, cmd))} exited {p.returncode}; see {log}", file=sys.stderr)
        sys.exit(2)
    return p.returncode


RUNS = ("bundled", "spyre", "spyre_v2", "opinfo")


def make_runs(build, out, fixtures, repo, runs=RUNS, timeout=None):
    """Runs the workloads `runs` with the opcheck of `build`, into `out` (each run's folder made anew); returns
    {run: exit code}."""
    opcheck = pathlib.Path(build).resolve() / "opcheck"
    if not opcheck.exists():
        print(f"behaviour_diff: no opcheck in {build}", file=sys.stderr)
        sys.exit(2)
    out.mkdir(parents=True, exist_ok=True)
    codes = {}

    def opcheck_run(name, *manifests):
        if name not in runs:
            return
        d = out / name
        if d.exists():
            shutil.rmtree(d)
        d.mkdir()
        cmd = [opcheck, "run", "--device", "loopback", "-j", "2", "--artifact-dir", d / "art",
               "--metrics-json", d / "metrics.json", "--junit-xml", d / "junit.xml", "--html", d / "report.html"]
        if timeout:
            cmd += ["--timeout", timeout]
        if manifests:
            cmd += ["--manifests", *manifests, "--variant", "all"]
        codes[name] = run(cmd, repo, d / "console.txt")

    opcheck_run("bundled")
    if fixtures:
        opcheck_run("spyre", fixtures / "torch-spyre")
        opcheck_run("spyre_v2", fixtures / "torch-spyre-v2")
    if "opinfo" in runs:
        imported = out / "opinfo-files"
        if imported.exists():
            shutil.rmtree(imported)
        run([opcheck, "import-opinfo", "--ops", OPINFO_OPS, "--dtypes", "fp32,fp16", "-q", "-o", imported], repo,
            out / "import-opinfo.txt", ok=(0,))
        opcheck_run("opinfo", imported)
    return codes


def mask_text(text, out):
    text = text.replace(str(out.resolve()), "<out>").replace(str(out), "<out>")
    for pattern, repl in MASKS:
        text = pattern.sub(repl, text)
    return text


def mask_json(value):
    if isinstance(value, dict):
        # "time" holds the run's timings and its slowest cases (an order set by timing); a timeout is a setting.
        return {k: ("<masked>" if k in ("time", "timings") + BUILD_KEYS or (TIME_KEYS.search(k) and "timeout" not in k and
                                                              not isinstance(v, (dict, list))) else mask_json(v))
                for k, v in value.items()}
    if isinstance(value, list):
        return [mask_json(v) for v in value]
    return value


def normalised(path, out):
    """The file's text with what varies between runs masked; JSON reformatted with its figures masked."""
    text = path.read_text(errors="replace")
    if path.suffix == ".html":
        for pattern, repl in HTML_MASKS:
            text = pattern.sub(repl, text)
    if path.suffix == ".json":
        text = json.dumps(mask_json(json.loads(text)), indent=1, sort_keys=False)
    return mask_text(text, out).splitlines(keepends=True)


def verdicts(metrics):
    return {c["id"]: (c["outcome"], c["stage"]) for c in metrics.get("cases", [])}


def compare(before, after):
    """(report lines, identical?) for every run both sides made."""
    lines, same = [], True
    for run_dir in sorted(p for p in before.iterdir() if p.is_dir() and (p / "metrics.json").exists()):
        name, other = run_dir.name, after / run_dir.name
        if not other.exists():
            lines.append(f"{name}: missing in {after}\n")
            same = False
            continue
        mb, ma = (json.loads((d / "metrics.json").read_text()) for d in (run_dir, other))
        vb, va = verdicts(mb), verdicts(ma)
        changed = sorted(k for k in vb.keys() | va.keys() if vb.get(k) != va.get(k))
        diffs = []
        for f in ("metrics.json", "junit.xml", "report.html", "console.txt"):
            a, b = normalised(run_dir / f, before), normalised(other / f, after)
            diffs += list(difflib.unified_diff(a, b, f"before/{name}/{f}", f"after/{name}/{f}", n=1))
        cases = len(va)
        if not changed and not diffs:
            lines.append(f"{name}: identical ({cases} cases; {mb['totals']}; metrics, JUnit, HTML and console "
                         f"bytes equal with times masked)\n")
            continue
        same = False
        lines.append(f"{name}: {len(changed)} verdicts differ of {cases}; {len(diffs)} diff lines\n")
        lines += [f"  {k}: {vb.get(k)} -> {va.get(k)}\n" for k in changed[:50]]
        lines += diffs[:400]
    return lines, same


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--before", help="the build folder of the earlier commit (holds opcheck)")
    ap.add_argument("--after", required=True, help="the build folder of the later commit")
    ap.add_argument("--out", required=True, type=pathlib.Path)
    ap.add_argument("--fixtures", type=pathlib.Path, help="the torch-spyre fixtures (torch-spyre/, torch-spyre-v2/)")
    ap.add_argument("--only-after", action="store_true", help="keep OUT/before from an earlier call")
    ap.add_argument("--runs", default=",".join(RUNS), help=f"which runs to make (default: {','.join(RUNS)})")
    ap.add_argument("--timeout", help="run's --timeout for every case (a loaded machine: the big linear cases)")
    a = ap.parse_args()
    repo = pathlib.Path(__file__).resolve().parent.parent
    runs = a.runs.split(",")
    if set(runs) - set(RUNS):
        ap.error(f"--runs: {','.join(sorted(set(runs) - set(RUNS)))} is none of {','.join(RUNS)}")
    if not a.only_after:
        if not a.before:
            ap.error("--before is needed unless --only-after")
        make_runs(a.before, a.out / "before", a.fixtures, repo, runs, a.timeout)
    make_runs(a.after, a.out / "after", a.fixtures, repo, runs, a.timeout)
    lines, same = compare(a.out / "before", a.out / "after")
    (a.out / "diff.txt").write_text("".join(lines))
    sys.stdout.writelines(lines)
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
