// `opcheck run`: its flags, and the stages in order: load -> select -> triage -> plan -> execute (the run session:
// earlier results, journal, stop policy) -> report.
#include <unistd.h>
#include <CLI/CLI.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <optional>
#include <stdexcept>
#include <thread>

#include "cli/cli.h"
#include "cli/cmd_run.h"
#include "cli/exec_library.h"
#include "common/sha256.h"
#include "config/status_config.h"
#include "opcheck/device_environment.h"
#include "plan/plan.h"
#include "report/console.h"
#include "report/diff.h"
#include "report/junit.h"
#include "report/merge.h"
#include "report/metrics.h"
#include "report/outputs.h"
#include "report/progress.h"
#include "repro/reproduction.h"
#include "runner/run_session.h"
#include "runner/run_settings.h"

namespace opcheck::cli {
namespace {

// The end of a run that got as far as its reports: output is flushed and the process ends here, without freeing
// every record and manifest and without libtorch's static destructors (together ~80 ms for 10,000 cases). Every
// file the run wrote is complete and closed by now; the workers have exited.
[[noreturn]] void end_process(int rc) {
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  std::_Exit(rc);
}

// A count or a limit that must be a finite number greater than zero: "nan", "inf", 0 and negatives are usage errors
// (a nan timeout would fail every case as TIMEOUT; -j 0 or a negative byte limit would mean nothing).
CLI::Validator positive_finite(const char* what) {
  return CLI::Validator(
      [what](std::string& text) -> std::string {
        double v = 0;
        std::size_t used = 0;
        try {
          v = std::stod(text, &used);
        } catch (const std::exception&) {
          used = 0;
        }
        if (used != text.size() || used == 0) return std::string(what) + " must be a number, got '" + text + "'";
        if (!std::isfinite(v) || v <= 0)
          return std::string(what) + " must be a finite number greater than 0, got '" + text + "'";
        return {};
      },
      "> 0");
}

// The command that reruns one failed case alone: `opcheck repro ID` with the run's manifests, device flags and device
// faults (its bundle with --save-failures, which records the faults). None for a case rejected while loading (it has
// no dedupe key): there is nothing to rerun.
std::string repro_command(const CaseRecord& r, const RunFlags& f) {
  if (r.key.empty()) return {};
  namespace fs = std::filesystem;
  auto absolute = [](const std::string& p) {
    std::error_code ec;
    const fs::path a = fs::absolute(p, ec);
    return ec ? p : a.lexically_normal().string();
  };
  std::vector<std::string> words{opcheck_binary(), "repro", r.id};
  if (!f.exec.save_failures_dir.empty() && r.deduplicated_from.empty()) {
    words.insert(words.end(), {"--bundle", absolute(f.exec.save_failures_dir)});
    return repro::join_words(words);
  }
  for (const auto& m : f.manifest.manifests) words.insert(words.end(), {"--manifests", absolute(m)});
  if (!f.config.empty()) words.insert(words.end(), {"--config", absolute(f.config)});
  words.insert(words.end(), {"--device", f.exec.device.empty() ? "auto" : f.exec.device});
  if (!f.exec.device_lib.empty()) words.insert(words.end(), {"--device-lib", absolute(f.exec.device_lib)});
  if (!f.exec.device_name.empty()) words.insert(words.end(), {"--device-name", f.exec.device_name});
  for (const auto& m : f.exec.device_imports) words.insert(words.end(), {"--device-import", m});
  if (!f.exec.compile_backend.empty()) words.insert(words.end(), {"--compile-backend", f.exec.compile_backend});
  // The device faults of the run come along, so that the rerun computes what the run computed.
  return repro::environment_prefix(device_environment_set()) + repro::join_words(words);
}

// Colour only for a person at a terminal, and never when NO_COLOR is set (no-color.org).
bool color_stdout() { return isatty(STDOUT_FILENO) && !std::getenv("NO_COLOR"); }

void note(const std::string& line) { std::cerr << "opcheck: " << line << "\n"; }

// Writes the reports asked for; kInternalError when one could not be written, else 0.
int write_reports(const RunReport& report, const RunFlags& f) {
  const std::vector<std::string> errors = write_report_files(report, f.reports);
  for (const auto& e : errors) print_error(std::runtime_error(e), "writing reports: ");
  return errors.empty() ? 0 : kInternalError;
}

ReferenceDtype reference_dtype(const std::string& flag) {
  if (flag == "same") return ReferenceDtype::Same;
  if (flag == "float64") return ReferenceDtype::Float64;
  if (flag == "float32") return ReferenceDtype::Float32;
  return ReferenceDtype{};
}

// The flags that come with the environment's defaults (the Python device, the device library) into the exec
// options, and the --save-failures folder made. False after printing a usage error.
bool exec_settings(RunFlags& f) {
  if (!f.reference_dtype.empty()) f.exec.reference_dtype = reference_dtype(f.reference_dtype);
  PythonDeviceSettings py;
  std::string error;
  if (!resolve_python_device(f.exec.device_imports, f.compile_backend, process_environment(), py, error)) {
    std::cerr << "opcheck: error: " << error << "\n";
    return false;
  }
  f.exec.device_imports = py.imports;
  f.exec.compile_backend = py.compile_backend;
  if (!py.python.empty()) f.exec.python = py.python;
  // Inductor's on-disk caches live with the run's artifacts, so a second run compiles from them.
  if (!py.compile_backend.empty()) {
    std::error_code ec;
    f.exec.inductor_cache_dir =
        std::filesystem::absolute(std::filesystem::path(f.session.artifact_dir) / "inductor-cache", ec).string();
  }
  // A configured library is the default device, unless Python modules register it (one backend per process).
  if (f.exec.device_lib.empty() && f.exec.device_imports.empty())
    if (const char* lib = std::getenv("OPCHECK_DEVICE_LIB")) f.exec.device_lib = lib;
  if (!f.exec.save_failures_dir.empty() && !f.collect_only) {
    std::error_code ec;
    std::filesystem::create_directories(f.exec.save_failures_dir, ec);
    if (ec || !std::filesystem::is_directory(f.exec.save_failures_dir, ec)) {
      std::cerr << "opcheck: error: cannot create the --save-failures folder " << f.exec.save_failures_dir << ": "
                << (ec ? ec.message() : std::string("not a folder")) << "\n  Fix: pass a writable folder\n";
      return false;
    }
  }
  return true;
}

// Nothing runnable, but what was rejected while loading is still the run's result: the reports say so.
int report_rejected_only(const Loaded& l, const RunFlags& f, const FailureReportOptions& failures,
                         const std::string& report_chars, std::chrono::steady_clock::time_point t0) {
  RunReport report;
  report.info = describe_run(f.argv, RunPolicy{f.xpass_ok}, l.set);
  add_load_problems(l.diagnostics, l.set, report);
  report.info.duration_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const int report_failure = write_reports(report, f);
  std::cout << failure_details(report, failures) << short_summary(report, report_chars)
            << summary_line(report, color_stdout()) << "\n";
  return report_failure ? report_failure : kInterrupted;
}

}  // namespace

void add_run_flags(CLI::App& app, RunFlags& f) {
  add_manifest_flags(app, f.manifest, true);
  add_case_id_args(app, f.manifest);
  app.add_option("--device", f.exec.device,
                 "Device under test: auto (a configured device library, else loopback), cpu (self-check), loopback, "
                 "privateuseone, a backend's registered name, cuda, xpu, mps")
      ->capture_default_str();
  app.add_option("--device-lib", f.exec.device_lib,
                 "PrivateUse1 backend library to load before any case runs (also OPCHECK_DEVICE_LIB)")
      ->type_name("PATH");
  app.add_option("--device-import", f.exec.device_imports,
                 "Python module whose import registers the device under test (repeatable; also "
                 "OPCHECK_DEVICE_IMPORT, comma-separated): each worker hosts a Python interpreter, e.g. "
                 "--device-import torch_spyre --device spyre")
      ->type_name("MODULE")
      ->allow_extra_args(false);
  app.add_option("--compile-backend", f.compile_backend,
                 "Run the device side of every case as torch.compile(backend=NAME) of the op's Python callable: "
                 "inductor, aot_eager, eager, any registered backend, or none (eager, the default; also "
                 "TEST_COMPILE_BACKEND)")
      ->type_name("NAME");
  app.add_option("--device-name", f.exec.device_name,
                 "Name skip_if expressions and reports see for the device (e.g. spyre)");
  app.add_option("--reference-dtype", f.reference_dtype,
                 "Reference compute dtype: same, float32, float64 (default: the case's dtype, float32 where the "
                 "CPU lacks a kernel)")
      ->check(CLI::IsMember({"same", "float32", "float64"}));
  app.add_option("--repeat", f.exec.repeat, "Device runs per case to detect nondeterminism (default 2, 1 on cpu)");
  app.add_option("--max-case-bytes", f.exec.max_case_bytes, "Skip cases whose tensors need more bytes than this")
      ->check(positive_finite("--max-case-bytes"));
  app.add_flag("--no-dedupe", f.no_dedupe, "Run every occurrence, even when the same call appears again");
  app.add_flag("--collect-only,--co", f.collect_only,
               "Print the plan (unique cases and what each dedupes) without running anything or loading libtorch");
  app.add_option("--shard", f.shard,
                 "Run shard I of N of the unique cases (0-based), e.g. 1/3; also OPCHECK_SHARD_INDEX/"
                 "OPCHECK_TOTAL_SHARDS or JOB_COMPLETION_INDEX")
      ->type_name("I/N");
  app.add_option("--maxfail", f.maxfail, "Stop after N failures or errors")->type_name("N");
  app.add_flag("-x,--exitfirst", f.exitfirst, "Stop after the first failure or error (--maxfail 1)");
  app.add_option("--durations", f.durations, "Show the N slowest cases before the summary (0: all)")
      ->type_name("N")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--deadline", f.deadline, "Stop starting new cases after this long, e.g. 90m, 2h")
      ->type_name("DURATION");
  app.add_option("--junit-xml", f.reports.junit_xml,
                 "Write JUnit XML (pytest's xunit2 shape, one testsuite for the run)")
      ->type_name("PATH");
  app.add_option("--junit-dir", f.reports.junit_dir,
                 "Write one JUnit XML file per model, DIR/<model>.xml (one testsuite each)")
      ->type_name("DIR");
  app.add_option("--metrics-json", f.reports.metrics_json, "Write the JSON metrics file (schemas/metrics.schema.json)")
      ->type_name("PATH");
  app.add_option("--html", f.reports.html, "Write the self-contained HTML dashboard of this run")->type_name("PATH");
  app.add_option("--artifact-dir", f.session.artifact_dir, "Where the journal of results (journal.jsonl) is kept")
      ->capture_default_str();
  app.add_option("--results-cache", f.session.results_cache,
                 "Keep verdicts by dedupe key in FILE (valid for the same opcheck, libtorch and device library)")
      ->type_name("FILE");
  app.add_flag("--reuse-results", f.session.reuse_results,
               "Serve unchanged cases from --results-cache instead of running them (off by default)");
  app.add_flag("--resume", f.session.resume, "Continue a killed run: reuse the results in the artifact dir's journal");
  app.add_flag("--last-failed,--lf", f.session.last_failed,
               "Run only what failed or errored in the previous run (its journal); everything when nothing did");
  app.add_option("--baseline", f.baseline, "Compare with an earlier metrics file at the end; exit 1 on regressions")
      ->type_name("OLD.json");
  app.add_option("-j,--jobs", f.jobs, "Worker processes (default: one per core, one intra-op thread each)")
      ->check(positive_finite("-j"));
  app.add_option("--intra-op-threads", f.exec.intra_op_threads,
                 "libtorch intra-op threads per worker (default: cores / jobs)")
      ->type_name("N")
      ->check(CLI::PositiveNumber);
  app.add_option("--timeout", f.timeout_s, "Seconds a case may take before its worker is killed (TIMEOUT); > 0")
      ->capture_default_str()
      ->check(positive_finite("--timeout"));
  app.add_flag("--no-isolation", f.no_isolation, "Run cases in this process (debugging; a crash ends the run)");
  app.add_option("--devices", f.devices, "Device indices of one backend, one worker per index, e.g. 0,1")
      ->delimiter(',')
      ->allow_extra_args(false);
  app.add_option("--config", f.config,
                 "Status config (known failures, skips, tolerances per device); default: opcheck.yaml in a "
                 "manifest folder")
      ->type_name("FILE");
  app.add_option("--save-failures", f.exec.save_failures_dir,
                 "Write a folder per failed or errored case into DIR: the case alone as a manifest of its exact input "
                 "tensors, the device and reference outputs, and a README with the commands that rerun it")
      ->type_name("DIR");
  app.add_flag("--xpass-ok", f.xpass_ok, "A case expected to fail that passes (XPASS) does not fail the run");
  app.add_option("--tb", f.tb,
                 "Failures section after the run, as pytest's --tb: short (file:line, op and overload, the message "
                 "with its figures, the repro command), long (everything the reports carry, captured stderr "
                 "included), no (none)")
      ->capture_default_str()
      ->check(CLI::IsMember({"short", "long", "no"}));
  app.add_option("-r", f.report_chars,
                 "Short summary, as pytest's -r: f failed, E error, s skipped, x xfailed, X xpassed, p passed, "
                 "a all but passed, A all, N none (e.g. -rA, -rfE)")
      ->type_name("CHARS")
      ->capture_default_str();
  app.add_flag("-v,--verbose", f.verbose, "A line per case");
  app.add_flag("-q,--quiet", f.quiet, "Only failures and the summary line");
}

int cmd_run(RunFlags& f) {
  const auto t0 = std::chrono::steady_clock::now();
  // libtorch loads on another thread while the manifests are read and planned.
  std::optional<ExecLibrary> exec_library;
  if (!f.collect_only) exec_library.emplace();
  std::string error;
  FailureReportOptions failure_report;
  std::string report_chars;
  if (!parse_traceback_style(f.tb, failure_report.style) || !parse_report_chars(f.report_chars, report_chars, error)) {
    std::cerr << "opcheck: error: " << (error.empty() ? "--tb must be short, long or no" : error) << "\n";
    return kUsageError;
  }
  failure_report.repro_command = [&f](const CaseRecord& r) { return repro_command(r, f); };
  // load -> select
  Loaded l = load_and_select(f.manifest);
  print_diagnostics(l.diagnostics, /*errors_only=*/true);
  if (l.selected.usage_error) return kUsageError;
  int shard_index = 0, shard_total = 1;
  if (!resolve_shard(f.shard, process_environment(), shard_index, shard_total, error)) {
    std::cerr << "opcheck: error: " << error << "\n";
    return kUsageError;
  }
  double deadline_s = 0;
  if (!f.deadline.empty() && !parse_duration(f.deadline, deadline_s)) {
    std::cerr << "opcheck: error: invalid --deadline '" << f.deadline
              << "'\n  Fix: use seconds or a unit, e.g. 90s, 45m, 2h\n";
    return kUsageError;
  }
  const bool invalid_input = l.diagnostics.has_errors();
  const RunPolicy policy{f.xpass_ok};

  f.session.quiet = f.quiet;
  f.session.argv = f.argv;
  f.session.note = note;
  RunSession session(f.session);
  try {
    print_diagnostics(session.read_previous_run());
  } catch (const std::exception& e) {
    print_error(e, "cannot read " + session.journal_path() + ": ");
    return kUsageError;
  }
  std::vector<const Case*> cases = session.select(l.selected.cases, policy);
  // --strict-markers is pytest's: a problem found while collecting stops the run before any case runs.
  if (f.manifest.strict_markers && invalid_input) {
    std::cerr << "opcheck: --strict-markers: errors while loading the manifests; no case runs\n";
    cases.clear();
  }
  if (cases.empty()) {
    if (!invalid_input) {
      std::cout << "no tests ran in 0.00s\n";
      return kNoTests;
    }
    return report_rejected_only(l, f, failure_report, report_chars, t0);
  }

  if (!exec_settings(f)) return kUsageError;
  const WorkerLayout workers = layout_workers(f.jobs, f.exec.intra_op_threads, f.devices.size(), !f.no_isolation,
                                              static_cast<int>(std::thread::hardware_concurrency()));
  f.exec.intra_op_threads = workers.intra_op_threads;
  // The dedupe keys (a SHA-256 per case) are computed while libtorch is still loading.
  KnownKeys known_keys;
  if (exec_library)
    for (const Case* c : cases) known_keys.emplace(c, dedupe_key(*c));
  std::unique_ptr<Executor> ex;
  if (!f.collect_only) {
    bool setup_failed = false;
    ex = exec_library->create(f.exec, error, setup_failed);
    if (!ex) {
      std::cerr << "opcheck: error: " << error << "\n";
      return setup_failed ? kUsageError : kInternalError;
    }
  }
  // The name skip_if expressions and the status config's device overrides see.
  const std::string device_name = ex                            ? ex->info().device_name
                                  : !f.exec.device_name.empty() ? f.exec.device_name
                                                                : f.exec.device;

  // triage -> plan
  StatusConfig config;
  if (!load_command_config(f.config, f.manifest, config)) return kUsageError;
  const TriagedSelection triaged = triage_selection(config, cases, device_name);
  Plan plan = make_plan(triaged.cases, !f.no_dedupe, &known_keys);
  const std::size_t all_unique = plan.unique.size();
  if (shard_total > 1) plan = shard_plan(plan, shard_index, shard_total);
  if (f.collect_only) {
    std::cout << describe_plan(plan);
    return invalid_input ? kInterrupted : kOk;
  }

  const ExecInfo& info = ex->info();
  if (!f.quiet)
    std::cerr << run_banner(info, plan.occurrences.size(), plan.unique.size(), shard_index, shard_total, all_unique);
  RunReport report;
  report.info = describe_run(f.argv, policy, l.set);
  describe_executor(info, report.info);
  if (!config.path.empty()) report.info.status_config_sha256 = sha256_file(config.path);
  report.info.deselected = static_cast<std::int64_t>(l.selected.deselected + triaged.excluded);
  if (shard_total > 1) report.info.shard = std::to_string(shard_index) + "/" + std::to_string(shard_total);

  // execute
  StopSignals::install();
  PlanExecutionOptions run;
  run.device_name = info.device_name;
  run.triage = triage_lookup(triaged);
  run.policy = policy;
  run.maxfail = f.exitfirst ? 1 : f.maxfail;
  run.deadline_s = deadline_s;
  run.interrupted = StopSignals::flag();
  PoolOptions pool;
  pool.workers = workers.jobs;
  pool.device_indices = f.devices;
  pool.default_timeout_s = f.timeout_s;
  pool.isolation = !f.no_isolation;
  pool.abort_running = StopSignals::abort_running(note);
  try {
    if (!session.open(report.info, error)) {
      std::cerr << "opcheck: error: " << error << "\n";
      return kUsageError;
    }
  } catch (const std::exception& e) {
    print_error(e, "cannot read the results cache: ");
    return kUsageError;
  }
  ProgressLine progress(plan.occurrences.size(), isatty(STDERR_FILENO) && !f.verbose && !f.quiet);
  const bool tty = color_stdout();
  session.execute(plan, *ex, pool, run, report, [&](const CaseRecord& r) {
    // Failures are listed together at the end; -v shows every case as it finishes.
    if (f.verbose) std::cout << case_line(r, tty) << std::flush;
    if (f.verbose || f.quiet) return;
    const std::string line = progress.on_record(r, fails_run(r, report.info));
    if (!line.empty()) std::cerr << line << std::flush;
  });
  std::cerr << progress.clear() << std::flush;
  report.info.duration_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  try {
    session.close(report);
  } catch (const std::exception& e) {
    print_error(e, "cannot write the results cache: ");
  }

  // report: written whatever happened, interrupted runs included (partial but valid), with the manifests' problems:
  // errors as ERROR cases, warnings listed.
  add_load_problems(l.diagnostics, l.set, report);
  RunEnd end;
  end.invalid_input = invalid_input;
  end.report_failure = write_reports(report, f);
  if (!f.exec.save_failures_dir.empty() && !f.quiet) {
    const bool any = std::any_of(report.cases.begin(), report.cases.end(), [](const CaseRecord& r) {
      return r.outcome == Outcome::Failed || r.outcome == Outcome::Error;
    });
    if (any)
      std::cerr << "opcheck: failure bundles in " << std::filesystem::absolute(f.exec.save_failures_dir).string()
                << " (README.md in each says how to rerun the case; `opcheck repro --bundle DIR` prints it)\n";
  }
  std::cout << failure_details(report, failure_report);
  if (report.info.interrupted)
    std::cout << "stopped early: " << report.info.stop_reason << "; " << report.info.not_run << " not run\n";
  if (f.durations >= 0) std::cout << durations_section(report, f.durations);
  // The comparison with --baseline comes before the summary line, which is always the last line (pytest's).
  if (!f.baseline.empty()) {
    try {
      DiffResult d = diff_reports(read_metrics(f.baseline), report);
      std::cout << render_diff(d);
      end.regressions = d.has_regressions();
    } catch (const std::exception& e) {
      print_error(e, "baseline " + f.baseline + ": ");
      std::cout << short_summary(report, report_chars) << summary_line(report, tty) << "\n";
      end_process(kUsageError);
    }
  }
  std::cout << short_summary(report, report_chars) << summary_line(report, tty) << "\n";
  end.signalled = StopSignals::received();
  end_process(run_exit_code(report, end));
}

}  // namespace opcheck::cli

namespace opcheck::cli {

int cmd_merge(const std::vector<std::string>& inputs, const std::string& junit_xml, const std::string& metrics_json,
              bool allow_partial) {
  std::vector<RunReport> shards;
  try {
    for (const auto& p : inputs) shards.push_back(read_metrics(p));
    std::string partial;
    RunReport merged = merge_reports(shards, allow_partial, &partial);
    if (!partial.empty()) std::cerr << "opcheck merge: warning: " << partial << "\n";
    if (!junit_xml.empty()) write_junit_xml(merged, junit_xml);
    if (!metrics_json.empty()) write_metrics_json(merged, metrics_json);
    std::cout << "shards: " << merged.info.shard_count << ", longest "
              << format_session_duration(merged.info.shard_longest_s) << ", summed "
              << format_session_duration(merged.info.shard_sum_s) << "\n";
    std::cout << summary_line(merged) << "\n";
  } catch (const std::exception& e) {
    print_error(e);
    return kInterrupted;
  }
  return kOk;
}

int cmd_diff(const std::string& old_path, const std::string& new_path) {
  try {
    DiffResult d = diff_reports(read_metrics(old_path), read_metrics(new_path));
    std::cout << render_diff(d);
    return diff_exit_code(d);
  } catch (const std::exception& e) {
    print_error(e);
    return kInterrupted;
  }
}

}  // namespace opcheck::cli
