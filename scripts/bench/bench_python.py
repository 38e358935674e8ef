"""opcheck's benchmark of Python-hosted devices and compiled device runs.

    python3 scripts/bench/bench_python.py --build-dir BUILD [--out bench-results] [--quick] [--reps N]

scripts/bench.sh runs it after bench.py (or alone with --python-only). Three targets, each a ratio of two runs made
one after the other in this process, so that both see the same machine:

- per-case overhead of a Python-hosted eager device: pyloop with its compile-wrapped kernels run eagerly
  (OPCHECK_PYLOOP_EAGER=1) against the C++ loopback on the synthetic tiny set (10,000 cases; --quick 1,000), both
  with one worker and one intra-op thread, five runs of each (--quick: two), the two devices alternating. The per-case
  figure is the run's cases wall time (run.cases_wall_s in its metrics: from the worker ready to the last result) /
  unique cases, so that what both pay once (process start, libtorch, the Python device's probe and the worker's
  interpreter and imports) is left out of it; of each device's runs, the least disturbed (the lowest) counts. The
  worker's start is reported from the run's metrics (run.worker_start_mean_s), and each case's time is split into the
  device's own (device_ms: its kernels and copies, Python ones for pyloop) and opcheck's around it.
- inductor's caches: `--device cpu --compile-backend inductor -j 1` over the bundled manifests, a first run with an
  empty artifact folder (inductor's caches live in ARTIFACT_DIR/inductor-cache) against a second run on it.
- parallel compiles: the same first run at -j 2 (an empty artifact folder again) against -j 1.
- a Python device's start (it is paid once per run, by its start-up process; --start-only runs only these three):
  a one-case pyloop run (eager kernels, as above) against `python -c 'import torch'` (best of --reps each,
  alternating), <= 1.5x, with the compile-wrapped pyloop run and `import torch, opcheck_pyloop` (the device's own
  import, its floor) beside it; the bundled manifests on pyloop at -j 2 against -j 1 end to end, never slower; and a
  worker restart after a crash: a two-case pyloop run whose first case segfaults its worker (OPCHECK_PYLOOP_FAULTS)
  against the same run without the fault, their cases' wall times (run.cases_wall_s, which leaves out the imports
  both pay) differing by the crash and the replacement worker's start, <= 0.3 s.

Writes OUT/bench-python.json and OUT/bench-python.md.
"""
import argparse
import json
import os
import pathlib
import shutil
import sys
import tempfile
import time

import bench  # noqa: E402  (the same directory: measure, best_of, tiny_set, machine, log)
from bench import ROOT, best_of, log, measure, run_facts  # noqa: E402

FULL = dict(models=4, cases=2500, dup=0.3, reps=5, compile_models=[])    # [] = every bundled manifest
QUICK = dict(models=2, cases=500, dup=0.3, reps=2, compile_models=["convnet"])


def metrics_of(path):
    return json.loads(pathlib.Path(path).read_text())


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build-dir", required=True, help="holds opcheck, its libraries and python/opcheck_pyloop")
    ap.add_argument("--out", default=str(ROOT / "bench-results"))
    ap.add_argument("--quick", action="store_true", help="1,000 tiny cases and one model compiled: a smoke test")
    ap.add_argument("--reps", type=int, help="runs per eager figure (default 5, 2 with --quick); compiled runs: 1")
    ap.add_argument("--keep", action="store_true", help="keep the generated manifests and reports (printed path)")
    ap.add_argument("--start-only", action="store_true", help="only the Python device's start targets")
    a, _ = ap.parse_known_args()
    cfg = dict(QUICK if a.quick else FULL)
    reps = a.reps or cfg["reps"]
    build = pathlib.Path(a.build_dir).resolve()
    opcheck = build / "opcheck"
    if not (build / "python" / "opcheck_pyloop").is_dir():
        raise SystemExit(f"bench: {build}/python/opcheck_pyloop is missing; build the opcheck_pyloop targets first "
                         "(scripts/bench.sh does)")
    out = pathlib.Path(a.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    bench.WORK = tempfile.mkdtemp(prefix="opcheck-bench-python-")
    try:
        return run(a, cfg, reps, opcheck, out)
    finally:
        if a.keep:
            log(f"bench: inputs and reports kept in {bench.WORK}")
        else:
            shutil.rmtree(bench.WORK, ignore_errors=True)


def run(a, cfg, reps, opcheck, out):
    work = pathlib.Path(bench.WORK)
    load_start = os.getloadavg()
    started = time.time()
    log(f"bench-python: {'quick' if a.quick else 'full'} mode, load average {load_start[0]:.2f}")
    if load_start[0] > 0.5:
        log("bench-python: warning: the machine is busy (load > 0.5); timings will be noisy")
    # Inductor's caches must be the ones under each run's artifact folder, not a folder the environment names.
    env = {k: v for k, v in os.environ.items() if k not in ("TORCHINDUCTOR_CACHE_DIR", "TEST_COMPILE_BACKEND")}
    os.environ.clear()
    os.environ.update(env)

    results = {}

    def run_cmd(manifests, art, *extra):
        return [str(opcheck), "run", "--manifests", manifests, "-q", "--artifact-dir", str(art),
                "--metrics-json", str(art / "metrics.json")] + list(extra)

    start_rows = device_start_targets(work, run_cmd, reps, results)
    if a.start_only:
        return report(a, reps, load_start, started, out, start_rows, results, {})
    big = bench.tiny_set("tiny-python", cfg["models"], cfg["cases"], cfg["dup"])

    # -- a Python-hosted eager device against the C++ loopback ------------------------------------------------------
    pyloop = ["--device-import", "opcheck_pyloop", "--device", "pyloop"]
    eager = {"OPCHECK_PYLOOP_EAGER": "1"}
    art = work / "art-eager"
    runs = {}
    # One worker with one thread: the cases' wall time (run.cases_wall_s: from the worker ready to the last result) is
    # then the worker's time per case, and the device's own kernel time (device_ms in the metrics) can be told apart
    # from what opcheck adds around it. What a run pays once (process start, libtorch, the Python device's probe, the
    # worker's interpreter and imports) is outside cases_wall_s and reported beside it.
    one_worker = ["-j", "1", "--intra-op-threads", "1"]
    # The two devices' runs alternate, so that a busy spell of a shared machine falls on both alike.
    devices = (("loopback", ["--device", "loopback"] + one_worker, None), ("pyloop", pyloop + one_worker, eager))
    samples = {label: [] for label, _, _ in devices}
    for rep in range(reps):
        for label, flags, extra_env in devices:
            log(f"bench-python: {label}, the tiny set ({rep + 1} of {reps})")
            r = measure(run_cmd(big["dir"], art, *flags), env=extra_env)
            m = metrics_of(art / "metrics.json")
            if m["totals"]["passed"] != m["totals"]["total"]:
                raise SystemExit(f"bench-python: {label} did not pass every case: {m['totals']}")
            r.update(cases_wall_s=m["run"]["cases_wall_s"], workers_started=m["run"].get("workers_started"),
                     worker_start_mean_s=m["run"].get("worker_start_mean_s"), unique=m["dedupe"]["unique"],
                     time_totals_ms=m["time"]["totals"])
            samples[label].append(r)
    for label, runs_of_label in samples.items():
        best = min(runs_of_label, key=lambda s: s["cases_wall_s"])  # the least disturbed by other load
        walls = sorted(s["cases_wall_s"] for s in runs_of_label)
        best["cases_wall_median_s"] = walls[len(walls) // 2]
        log(f"  {label}: cases {best['cases_wall_s']:.3f} s (median {best['cases_wall_median_s']:.3f} s), whole run "
            f"{best['wall_s']:.3f} s, worker start {best['worker_start_mean_s']:.2f} s ({reps} runs)")
        best["cases_wall_samples_s"] = [s["cases_wall_s"] for s in runs_of_label]
        runs[label] = best
    unique = runs["loopback"]["unique"]
    per_case = {label: runs[label]["cases_wall_s"] / unique for label in runs}
    # The device's own time per case (its kernels and copies, timed in the worker) and the rest: what opcheck adds.
    device_per_case = {label: runs[label]["time_totals_ms"]["device_ms"] / 1e3 / unique for label in runs}
    around = {label: per_case[label] - device_per_case[label] for label in per_case}
    results["eager"] = dict(runs)
    results["eager"]["per_case_us"] = {k: v * 1e6 for k, v in per_case.items()}
    results["eager"]["device_per_case_us"] = {k: v * 1e6 for k, v in device_per_case.items()}
    results["eager"]["around_device_per_case_us"] = {k: v * 1e6 for k, v in around.items()}

    # -- inductor: first run, second run on its caches, and -j 2 ----------------------------------------------------
    manifests = str(ROOT / "manifests")
    models = sum((["--model", m] for m in cfg["compile_models"]), [])
    compiled = ["--device", "cpu", "--compile-backend", "inductor", "--intra-op-threads", "1"] + models

    def compiled_run(art, jobs, label):
        log(f"bench-python: {label}")
        r = measure(run_cmd(manifests, art, *compiled, "-j", str(jobs)))
        m = metrics_of(art / "metrics.json")
        if m["totals"]["passed"] != m["totals"]["total"]:
            raise SystemExit(f"bench-python: {label}: not every case passed: {m['totals']}")
        ran = [c for c in m["cases"] if not c.get("deduplicated_from")]
        compile_ms = sorted(c["timings"]["compile_ms"] for c in ran if c["timings"].get("compile_ms") is not None)
        figures = {"wall_s": r["wall_s"], "cpu_s": r["cpu_s"], "rss_mb": r["rss_mb"], "cases": len(ran),
                   "compile_ms_total": sum(compile_ms),
                   "compile_ms_per_case_mean": sum(compile_ms) / len(compile_ms) if compile_ms else None,
                   "compile_ms_per_case_median": compile_ms[len(compile_ms) // 2] if compile_ms else None,
                   "compile_ms_per_case_max": compile_ms[-1] if compile_ms else None,
                   "worker_start_mean_s": m["run"].get("worker_start_mean_s")}
        log(f"  {label}: {r['wall_s']:.1f} s wall, {len(ran)} cases, compile "
            f"{figures['compile_ms_total'] / 1e3:.1f} s in all, median {figures['compile_ms_per_case_median']} ms")
        return figures

    cold_art, j2_art = work / "art-inductor", work / "art-inductor-j2"
    results["inductor_first"] = compiled_run(cold_art, 1, "inductor, -j 1, empty caches")
    results["inductor_second"] = compiled_run(cold_art, 1, "inductor, -j 1, caches of the first run")
    results["inductor_j2"] = compiled_run(j2_art, 2, "inductor, -j 2, empty caches")

    eager_ratio = per_case["pyloop"] / per_case["loopback"]
    wall_ratio = runs["pyloop"]["wall_s"] / runs["loopback"]["wall_s"]
    cache_ratio = results["inductor_first"]["wall_s"] / results["inductor_second"]["wall_s"]
    jobs_ratio = results["inductor_first"]["wall_s"] / results["inductor_j2"]["wall_s"]
    ws = runs["pyloop"]
    us = lambda d: f"{d['pyloop'] * 1e6:.0f} us vs {d['loopback'] * 1e6:.0f} us"  # noqa: E731
    targets = [
        ("python_eager", f"{big['occurrences']:,} tiny cases, -j 1: per-case pyloop eager / loopback", eager_ratio,
         "<=", 1.5, "x", f"{us(per_case)} per case; whole runs {ws['wall_s']:.2f} s vs "
         f"{runs['loopback']['wall_s']:.2f} s ({wall_ratio:.2f}x); the pyloop worker's start "
         f"{ws['worker_start_mean_s']:.2f} s; of each case, the device's own time (kernels, copies) "
         f"{us(device_per_case)}, opcheck's around it {us(around)} ({around['pyloop'] / around['loopback']:.2f}x); "
         f"the medians of the {reps} runs give "
         f"{runs['pyloop']['cases_wall_median_s'] / runs['loopback']['cases_wall_median_s']:.2f}x"),
        ("compile_cache", "inductor: first run / second run (warm caches)", cache_ratio, ">=", 3.0, "x",
         f"{results['inductor_first']['wall_s']:.1f} s vs {results['inductor_second']['wall_s']:.1f} s over "
         f"{results['inductor_first']['cases']} cases; compile per case (median) "
         f"{results['inductor_first']['compile_ms_per_case_median']:.0f} ms vs "
         f"{results['inductor_second']['compile_ms_per_case_median']:.0f} ms"),
        ("compile_jobs", "inductor, empty caches: -j 1 / -j 2", jobs_ratio, ">=", 1.6, "x",
         f"{results['inductor_first']['wall_s']:.1f} s vs {results['inductor_j2']['wall_s']:.1f} s"),
    ]
    # A per-case figure at or below zero means the runs' fixed costs varied by more than all the cases cost: the
    # machine was too busy for the ratio to mean anything.
    noisy = {"python_eager": min(per_case.values()) <= 0}
    return report(a, reps, load_start, started, out, start_rows + targets, results, noisy,
                  {"tiny": {k: big[k] for k in ("occurrences", "unique")},
                   "compiled": {"manifests": manifests, "models": cfg["compile_models"] or "all"}})


def report(a, reps, load_start, started, out, targets, results, noisy, inputs=None):
    load_end = os.getloadavg()
    rows = []
    for key, what, value, op, limit, unit, detail in targets:
        ok = {"<=": value <= limit, ">=": value >= limit}[op]
        status = "NOISY" if noisy.get(key) else "PASS" if ok else "MISS"
        rows.append({"key": key, "target": what, "measured": round(value, 4), "limit": f"{op} {limit}", "unit": unit,
                     "status": status, "detail": detail})
    doc = {
        **run_facts(a.quick, reps, load_start, load_end, started),
        "inputs": inputs or {},
        "targets": rows,
        "measurements": results,
    }
    (out / "bench-python.json").write_text(json.dumps(doc, indent=2) + "\n")
    m = doc["machine"]
    md = [f"Measured {doc['when']} ({doc['mode']} mode): {m.get('cpu', '?')}, {m['cores']} cores; load average "
          f"{doc['load_average']['start'][0]} at the start, {doc['load_average']['end'][0]} at the end.", "",
          "| target | measured | limit | status | detail |", "|---|---|---|---|---|"]
    md += [f"| {r['target']} | {r['measured']:.3g} {r['unit']} | {r['limit']} {r['unit']} | {r['status']} | "
           f"{r['detail']} |" for r in rows]
    (out / "bench-python.md").write_text("\n".join(md) + "\n")
    print(f"\nopcheck benchmark, Python devices and compiled runs ({doc['mode']}; load {load_start[0]:.2f} at start, "
          f"{load_end[0]:.2f} at end)\n")
    print(f"{'target':<52} {'measured':>10} {'limit':>9}  status  detail")
    for r in rows:
        print(f"{r['target']:<52} {r['measured']:>8.3g}{r['unit']:<2} {r['limit'] + r['unit']:>9}  {r['status']:<6}  "
              f"{r['detail']}")
    print(f"\nwrote {out / 'bench-python.json'}")
    return 0 if all(r["status"] == "PASS" for r in rows) else 1


ONE_CASE = "model: one\ncases:\n  - name: add\n    op: torch.add\n    inputs:\n      - tensor: {shape: [4, 8]}\n" \
    "      - tensor: {shape: [4, 8]}\n"
TWO_CASES = ONE_CASE.replace("model: one", "model: two") + "  - name: mul\n    op: torch.mul\n    inputs:\n" \
    "      - tensor: {shape: [4, 8]}\n      - tensor: {shape: [4, 8]}\n"


def device_start_targets(work, run_cmd, reps, results):
    """A Python device's start, paid once per run by its start-up process (module docstring)."""
    pyloop = ["--device-import", "opcheck_pyloop", "--device", "pyloop"]
    one, two = work / "one-case", work / "two-cases"
    one.mkdir(exist_ok=True)
    two.mkdir(exist_ok=True)
    (one / "one.yaml").write_text(ONE_CASE)
    (two / "two.yaml").write_text(TWO_CASES)
    import_torch = [sys.executable, "-c", "import torch"]
    # The floor: what the device's own import costs on top of torch's (pyloop's compile-wrapped kernels import dynamo).
    import_device = [sys.executable, "-c", "import torch, opcheck_pyloop"]
    art = work / "art-start"
    device_path = {"PYTHONPATH": str(pathlib.Path(run_cmd("", art)[0]).parent / "python")}
    kinds = {"import torch": (import_torch, None), "import torch, opcheck_pyloop": (import_device, device_path),
             "one case, eager kernels": (run_cmd(str(one), art, *pyloop, "-j", "1"), {"OPCHECK_PYLOOP_EAGER": "1"}),
             "one case": (run_cmd(str(one), art, *pyloop, "-j", "1"), None)}
    samples = {k: [] for k in kinds}
    for rep in range(reps):
        for label, (cmd, env) in kinds.items():
            log(f"bench-python: {label} ({rep + 1} of {reps})")
            samples[label].append(measure(cmd, env=env)["wall_s"])
    best = {k: min(v) for k, v in samples.items()}
    torch_s, one_s = best["import torch"], best["one case, eager kernels"]
    jobs = {}
    for n in (1, 2):
        log(f"bench-python: the bundled manifests on pyloop, -j {n}")
        walls = [measure(run_cmd(str(ROOT / "manifests"), art, *pyloop, "-j", str(n)), ok_codes=(0, 1))["wall_s"]
                 for _ in range(max(1, reps // 2))]
        jobs[n] = {"wall_s": min(walls), "samples_s": walls, **metrics_of(art / "metrics.json")["run"]}
    crash = {}
    for label, env in (("without a crash", None), ("with a crash", {"OPCHECK_PYLOOP_FAULTS": "aten::add.Tensor=segv"})):
        walls, cases = [], []
        for rep in range(reps):
            log(f"bench-python: two pyloop cases, {label} ({rep + 1} of {reps})")
            walls.append(measure(run_cmd(str(two), art, *pyloop, "-j", "1"), env=env, ok_codes=(0, 1))["wall_s"])
            cases.append(metrics_of(art / "metrics.json")["run"]["cases_wall_s"])
        crash[label] = {"wall_s": min(walls), "samples_s": walls, "cases_wall_s": min(cases),
                        "cases_wall_samples_s": cases, **metrics_of(art / "metrics.json")["run"]}
        crash[label]["cases_wall_s"] = min(cases)
    # From the first worker ready to the last result (run.cases_wall_s): the start-up process's imports, the same in
    # both runs and most of their noise, are left out; what is left over is the crash and the replacement's start.
    restart = crash["with a crash"]["cases_wall_s"] - crash["without a crash"]["cases_wall_s"]
    results["device_start"] = {"samples_s": samples, "bundled_pyloop": jobs, "restart": crash}
    return [
        ("start_once", "one-case pyloop run (eager kernels) / python -c 'import torch'", one_s / torch_s, "<=", 1.5,
         "x", f"{one_s:.2f} s vs {torch_s:.2f} s (best of {reps} each); with pyloop's compile-wrapped kernels "
         f"{best['one case']:.2f} s, against `import torch, opcheck_pyloop` "
         f"{best['import torch, opcheck_pyloop']:.2f} s"),
        ("start_jobs", "bundled manifests on pyloop: -j 2 / -j 1 end to end", jobs[2]["wall_s"] / jobs[1]["wall_s"],
         "<=", 1.0, "x", f"{jobs[2]['wall_s']:.2f} s vs {jobs[1]['wall_s']:.2f} s; workers' start (mean) "
         f"{jobs[2].get('worker_start_mean_s', 0):.3f} s vs {jobs[1].get('worker_start_mean_s', 0):.3f} s"),
        ("start_restart", "pyloop worker restart after a crash (cases wall, with - without)", restart, "<=", 0.3, "s",
         f"cases {crash['with a crash']['cases_wall_s']:.3f} s vs {crash['without a crash']['cases_wall_s']:.3f} s, "
         f"whole runs {crash['with a crash']['wall_s']:.2f} s vs {crash['without a crash']['wall_s']:.2f} s; "
         f"workers started {crash['with a crash'].get('workers_started')}; their start (max) "
         f"{crash['with a crash'].get('worker_start_max_s', 0):.3f} s"),
    ]


if __name__ == "__main__":
    sys.exit(main())
