#!/usr/bin/env python3
"""The OpInfo benchmark: `opcheck import-opinfo` over the whole op_db at fp32, fp16 and bf16, then one
`opcheck run --device cpu -j 2` (isolation on, the default) over what it wrote. Prints and writes
OUT/bench-opinfo.json with the figures and a PASS/MISS row per target (docs/opinfo.md lists the last measured ones).

Targets: at least 650 entries and 47,900 samples written, at most 5% of the samples not written, the import under
2 minutes, `validate` with 0 errors, a verdict on at least 99% of the cases with 0 FAILED_INPUT, FAILED_REFERENCE
and INVALID_CASE, the run under 10 minutes. --subset N runs N cases drawn at random (seeded) instead of all of them,
for a machine without the time; the table says so."""
import argparse
import json
import os
import pathlib
import random
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]


def load():
    try:
        return os.getloadavg()[0]
    except OSError:
        return float("nan")


def timed(cmd, **kw):
    t = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True, **kw)
    return p, time.monotonic() - t


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build-dir", default=str(ROOT / "build"))
    ap.add_argument("--out", default=str(ROOT / "bench-results"))
    ap.add_argument("--work", help="folder for the manifests (default: a temporary one, removed after)")
    ap.add_argument("--dtypes", default="fp32,fp16,bf16")
    ap.add_argument("--subset", type=int, default=0, help="run only N cases drawn at random (seed 0)")
    ap.add_argument("--device", default="cpu")
    a = ap.parse_args()
    opcheck = str(pathlib.Path(a.build_dir) / "opcheck")
    work = pathlib.Path(a.work or tempfile.mkdtemp(prefix="opcheck-opinfo-"))
    out_dir = work / "opinfo"
    rows, figures = [], {"load_before": load(), "cores": os.cpu_count()}

    p, t_import = timed([opcheck, "import-opinfo", "-o", str(out_dir), "--dtypes", a.dtypes, "-q", "--json"])
    if p.returncode != 0:
        sys.exit("import-opinfo failed (%d):\n%s\n%s" % (p.returncode, p.stdout[-3000:], p.stderr[-3000:]))
    summary = json.loads(p.stdout.strip().splitlines()[-1])
    report = json.loads((out_dir / "opinfo-report.json").read_text())
    entries_written = sum(1 for e in report["entries"] if e["written"] > 0)
    figures.update(import_s=round(t_import, 1), entries=len(report["entries"]), entries_written=entries_written,
                   samples=summary["samples"], written=summary["written"], not_written=summary["not_written"],
                   cases=summary["cases"], as_calls=summary["as_calls"],
                   by_reason=summary["by_reason"], importer_seconds=summary.get("seconds"))
    share = summary["not_written"] / max(summary["samples"], 1)
    rows += [("entries with cases >= 650", entries_written >= 650, entries_written),
             ("samples written >= 47,900", summary["written"] >= 47900, summary["written"]),
             ("not written <= 5%", share <= 0.05, "%.2f%%" % (100 * share)),
             ("import < 120 s", t_import < 120, "%.1f s" % t_import)]

    v, t_validate = timed([opcheck, "validate", str(out_dir)])
    last = [l for l in v.stdout.splitlines() if l.strip()][-1:]
    rows.append(("validate: 0 errors", v.returncode == 0, (last[0] if last else v.stderr[-200:])))
    figures["validate_s"] = round(t_validate, 1)

    metrics = work / "metrics.json"
    cmd = [opcheck, "run", "--manifests", str(out_dir), "--device", a.device, "-j", "2", "-q", "--tb", "no",
           "--metrics-json", str(metrics)]
    if a.subset:
        ids = []
        for line in subprocess.run([opcheck, "list-cases", "--manifests", str(out_dir)], capture_output=True,
                                   text=True).stdout.splitlines():
            if "::" in line:
                ids.append(line.split()[0])
        random.Random(0).shuffle(ids)
        cmd += sorted(ids[:a.subset])
    r, t_run = timed(cmd)
    figures["run_s"] = round(t_run, 1)
    figures["run_summary"] = ([l for l in r.stdout.splitlines() if l.strip()] or [""])[-1]
    stages, total = {}, 0
    if metrics.exists():
        m = json.loads(metrics.read_text())
        stages = {k: n for k, n in m["stages"].items() if n}
        total = m["totals"]["total"]
        figures["totals"] = m["totals"]
    figures["stages"] = stages
    figures["cases_run"] = total
    bad = {k: stages.get(k, 0) for k in ("FAILED_INPUT", "FAILED_REFERENCE", "INVALID_CASE")}
    no_verdict = sum(n for k, n in stages.items() if k in ("FAILED_INPUT", "FAILED_REFERENCE", "INVALID_CASE",
                                                            "CRASHED", "TIMEOUT", "FAILED_SETUP", "SKIPPED"))
    verdict = 1 - no_verdict / max(total, 1)
    rows += [("verdict on >= 99%", verdict >= 0.99, "%.2f%% of %d" % (100 * verdict, total)),
             ("0 FAILED_INPUT/FAILED_REFERENCE/INVALID_CASE", not any(bad.values()), bad),
             ("run < 600 s" + (" (subset of %d)" % a.subset if a.subset else ""), t_run < 600, "%.1f s" % t_run)]
    figures["load_after"] = load()

    width = max(len(r[0]) for r in rows)
    print("OpInfo benchmark (%d cores, load %.1f before, %.1f after)" % (
        figures["cores"], figures["load_before"], figures["load_after"]))
    for name, ok, value in rows:
        print("  %-*s  %-4s  %s" % (width, name, "PASS" if ok else "MISS", value))
    os.makedirs(a.out, exist_ok=True)
    pathlib.Path(a.out, "bench-opinfo.json").write_text(json.dumps(
        {"figures": figures, "targets": [{"target": n, "met": ok, "value": str(v)} for n, ok, v in rows]},
        indent=1) + "\n")
    sys.exit(0 if all(ok for _, ok, _ in rows) else 1)


if __name__ == "__main__":
    main()
