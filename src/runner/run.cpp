#include "runner/run.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <optional>
#include <set>

#include "common/call_signature.h"
#include "common/fault_kinds.h"
#include "common/regular_file.h"
#include "common/sha256.h"
#include "common/text.h"
#include "common/text_escape.h"
#include "config/status_config.h"
#include "plan/plan.h"
#include "report/diff.h"
#include "report/merge.h"
#include "report/metrics.h"
#include "report/progress.h"
#include "repro/bundle_layout.h"
#include "repro/reproduction.h"
#include "report/failure_groups.h"
#include "runner/case_probe.h"
#include "runner/plan_execution.h"
#include "runner/recorded_durations.h"
#include "runner/shrink.h"
#include "runner/run_outputs.h"
#include "settings/device_choice.h"
#include "settings/run_identity.h"

namespace opcheck {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

void note_to(std::ostream& err, const std::string& line) { err << "opcheck: " << line << "\n"; }

// Says each report that could not be written; kInternalError when one could not, else 0.
int say_report_errors(const std::vector<std::string>& errors, std::ostream& err) {
  for (const auto& e : errors) err << error_text(std::runtime_error(e), "writing reports: ");
  return errors.empty() ? 0 : kInternalError;
}

// Writes the reports asked for of a run that ended before its first case (no case event reached them).
int write_reports(const RunReport& report, const RunRequest& r, std::ostream& err) {
  return say_report_errors(write_report_files(report, r.reports), err);
}

// Nothing runnable, but what was rejected while loading is still the run's result: the reports say so.
int report_rejected_only(const Loaded& l, const RunRequest& r, Clock::time_point t0, RunHost& host) {
  RunReport report;
  report.info = describe_run(r.argv, r.policy, l.set);
  add_load_problems(l.diagnostics, l.set, report);
  report.info.duration_s = seconds_since(t0);
  const int report_failure = write_reports(report, r, host.err);
  host.out << failure_details(report, r.failures) << short_summary(report, r.report_chars)
           << warnings_summary(report.info) << summary_line(report, r.color) << "\n";
  return report_failure ? report_failure : kInterrupted;
}

// --save-failures: its folder exists before the first case fails. False after saying why.
bool make_failures_folder(const RunRequest& r, std::ostream& err) {
  const std::string& dir = r.settings.save_failures_dir;
  if (dir.empty() || r.collect_only) return true;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (!ec && fs::is_directory(dir, ec)) return true;
  err << "opcheck: error: cannot create the --save-failures folder " << dir << ": "
      << (ec ? ec.message() : std::string("not a folder")) << "\n  Fix: pass a writable folder\n";
  return false;
}

// The cases and facts a run carries from selection to its reports.
struct Prepared {
  Loaded loaded;
  bool invalid_input = false;
  std::vector<const Case*> cases;
  KnownKeys known_keys;
  std::unique_ptr<Executor> executor;
  StatusConfig config;
  TriagedSelection triaged;
  Plan plan;
  std::size_t all_unique = 0;
  std::size_t all_occurrences = 0;   // before --shard: what a merge of every shard holds
  ExpectedTimes expected;            // with --durations-from: every unique case's expected seconds
  std::vector<double> expected_shard_s;  // each shard's expected wall time at this run's -j
  std::optional<RunReport> baseline;     // --baseline, read before the first case
  std::string selection_sha256;          // the whole selection's occurrence ids, before --shard (report/merge.h)
};

std::string occurrences_sha256(const Plan& plan) {
  std::vector<std::string> ids;
  ids.reserve(plan.occurrences.size());
  for (const Case* c : plan.occurrences) ids.push_back(c->id);
  return case_list_sha256(std::move(ids));
}

// load -> select, then the cases the session runs (--last-failed). nullopt-like: returns an exit code >= 0 to stop.
int select_cases_to_run(RunRequest& r, RunSession& session, Prepared& p, RunHost& host) {
  p.loaded = load_and_select(r.selection, r.shipped_manifests);
  host.err << diagnostics_text(p.loaded.diagnostics, /*errors_only=*/true);
  if (p.loaded.selected.usage_error) return kUsageError;
  std::string error;
  if (!resolve_run_settings(r.settings, process_environment(), r.session.artifact_dir, error, !r.collect_only)) {
    host.err << "opcheck: error: " << error << "\n";
    return kUsageError;
  }
  // A file that cannot split the run is found before any case runs, not by the shards' merge.
  r.settings.durations = {};
  if (!r.settings.durations_from.empty() &&
      !read_recorded_durations(r.settings.durations_from, r.settings.timeout_s, r.settings.durations, error)) {
    host.err << "opcheck: error: " << error << "\n";
    return kUsageError;
  }
  p.invalid_input = p.loaded.diagnostics.has_errors();
  try {
    host.err << diagnostics_text(session.read_previous_run());
  } catch (const std::exception& e) {
    host.err << error_text(e, "cannot read " + session.journal_path() + ": ");
    return kUsageError;
  }
  p.cases = session.select(p.loaded.selected.cases, r.policy);
  // --strict-markers is pytest's: a problem found while collecting stops the run before any case runs.
  if (r.selection.strict_markers && p.invalid_input) {
    host.err << "opcheck: --strict-markers: errors while loading the manifests; no case runs\n";
    p.cases.clear();
  }
  return -1;
}

// Every selected case of a run that ended before its first case, as a skipped record saying why it did not run.
void add_not_run(const std::vector<const Case*>& cases, const std::string& why, RunReport& report) {
  int index = 0;
  for (const Case* c : cases) {
    CaseRecord rec = record_for(*c, std::string(), std::string());
    rec.index = index++;
    rec.outcome = Outcome::Skipped;
    rec.result.case_id = rec.id;
    rec.result.stage = Stage::SKIPPED;
    rec.result.outcome = Outcome::Skipped;
    rec.result.message = why;
    report.cases.push_back(std::move(rec));
  }
}

// A device that could not start is the run's result, not an absence of one: the reports hold one error record
// naming the device and what went wrong, and every selected case not run, as a stop before the first case lists them
// (stopped_by "device"), never as skips a nightly would count as cases that chose not to run. Returns the exit code: 4 when
// the device (the user's flags or backend) could not be set up, 3 when opcheck's own exec layer is missing.
int report_device_not_started(const RunRequest& r, const Prepared& p, const std::string& error, bool setup_failed,
                              RunHost& host) {
  const auto t0 = Clock::now();
  RunReport report;
  report.info = describe_run(r.argv, r.policy, p.loaded.set);
  report.info.device = r.settings.device;
  // `auto` names no device: the one it chose did not start (the loopback, for a mistyped fault).
  report.info.device_name = !r.settings.device_name.empty()
                                ? r.settings.device_name
                                : resolve_auto_device(r.settings.device, r.settings.device_lib,
                                                      !r.settings.device_imports.empty(), nullptr,
                                                      r.settings.installed_backends);
  report.info.device_lib = r.settings.device_lib;
  report.info.device_choice = device_choice_of(r.settings);
  report.info.device_choice.chosen = report.info.device_name;
  report.info.compile_backend = r.settings.compile_backend;
  for (const auto& [name, value] : r.settings.device_environment) report.info.device_environment.push_back(name + "=" + value);
  report.info.interrupted = true;
  report.info.stop_reason = "the device did not start";
  report.info.stopped_by = "device";
  report.info.not_run = static_cast<std::int64_t>(p.cases.size());
  CaseRecord failed;
  failed.model = "device";
  failed.name = report.info.device_name;
  failed.id = failed.model + "::" + failed.name;
  failed.op = "device setup";
  failed.outcome = Outcome::Error;
  failed.result.case_id = failed.id;
  failed.result.stage = Stage::FAILED_SETUP;
  failed.result.outcome = Outcome::Error;
  failed.result.message = (setup_failed ? "the device " + failed.name + " did not start: " : "opcheck could not run: ") + error;
  report.cases.push_back(std::move(failed));
  add_not_run(p.cases, "not run: the device did not start", report);
  add_load_problems(p.loaded.diagnostics, p.loaded.set, report);
  report.info.duration_s = seconds_since(t0);
  const int report_failure = write_reports(report, r, host.err);
  host.out << short_summary(report, r.report_chars) << warnings_summary(report.info)
           << summary_line(report, r.color) << "\n";
  if (report_failure) return report_failure;
  if (StopSignals::received()) return kInterrupted;
  return setup_failed ? kUsageError : kInternalError;
}

// --durations-from: the split by recorded times, each shard's expected wall time, and the line that says both.
void shard_by_recorded_times(const RunRequest& r, Prepared& p, RunHost& host) {
  const RunSettings& s = r.settings;
  p.expected = expected_times(p.plan, s.durations.seconds);
  std::vector<double> loads;
  p.plan = shard_plan(p.plan, s.shard_index, s.shard_total, p.expected.seconds, &loads);
  if (p.expected.in_seconds)
    for (double load : loads) p.expected_shard_s.push_back(load / std::max(1, s.jobs));
  if (!r.quiet)
    host.err << describe_expected_shards(s.durations, p.expected.recorded, p.expected.estimated, p.expected.in_seconds,
                                         p.expected_shard_s, s.shard_index, s.jobs);
}

// A stop signal before the first case (while loading, or while the device started): the reports say the run was
// interrupted and that every selected case did not run.
int report_stopped_before_cases(const RunRequest& r, const Prepared& p, bool loaded, Clock::time_point t0,
                                RunHost& host) {
  RunReport report;
  report.info = describe_run(r.argv, r.policy, p.loaded.set);
  report.info.interrupted = true;
  report.info.stop_reason = "interrupted";
  report.info.stopped_by = "signal";
  report.info.not_run = static_cast<std::int64_t>(p.cases.size());
  // Once every manifest was read, the selection is whole and each case is in the reports; a stop while loading left
  // it partial, and the reports list none rather than a part that looks like all.
  if (loaded) add_not_run(p.cases, "not run: the run stopped (interrupted)", report);
  add_load_problems(p.loaded.diagnostics, p.loaded.set, report);
  report.info.duration_s = seconds_since(t0);
  const int report_failure = write_reports(report, r, host.err);
  host.out << "stopped early: " << report.info.stop_reason << " before the first case"
           << (p.cases.empty() ? std::string(", while loading the manifests")
                               : "; " + std::to_string(report.info.not_run) + " not run")
           << "\n"
           << short_summary(report, r.report_chars) << summary_line(report, r.color) << "\n";
  return report_failure ? report_failure : kInterrupted;
}

// Everything a run needs before its end is found before its first case: a report that cannot be written, an output
// that would replace an input or another output, a --baseline that cannot be read. False after saying why.
bool check_before_cases(const RunRequest& r, const RunSession& session, Prepared& p, RunHost& host) {
  std::vector<std::string> errors = check_report_paths(r.reports);
  for (auto& e : run_path_clashes(r, p.loaded, p.cases, p.config.path, session.journal_path()))
    errors.push_back(std::move(e));
  for (const auto& e : errors) host.err << "opcheck: error: " << e << "\n";
  if (!errors.empty()) return false;
  if (r.baseline.empty()) return true;
  try {
    p.baseline = read_metrics(r.baseline);
  } catch (const std::exception& e) {
    host.err << error_text(e, "baseline " + r.baseline + ": ") << "opcheck: error: --baseline "
             << printable_text(r.baseline) << " cannot be read, so no case runs\n  Fix: pass the metrics file of an "
             << "earlier run (its --metrics-json), or leave --baseline out\n";
    return false;
  }
  return true;
}

// The device under test, then triage -> plan -> shard. An exit code >= 0 stops the run.
int plan_run(RunRequest& r, const RunSession& session, Prepared& p, RunHost& host) {
  DiagnosticList config_problems;
  const bool config_ok = load_status_config_for(
      r.config, manifest_paths(r.selection, r.shipped_manifests), p.config, config_problems);
  host.err << diagnostics_text(config_problems, /*errors_only=*/config_ok);
  if (!config_ok) return kUsageError;
  if (!r.collect_only && !check_before_cases(r, session, p, host)) return kUsageError;
  if (!make_failures_folder(r, host.err)) return kUsageError;
  const WorkerLayout workers = layout_workers(r.settings.jobs, r.settings.intra_op_threads, r.settings.devices.size(),
                                              r.settings.isolation, host.cores);
  r.settings.jobs = workers.jobs;
  r.settings.intra_op_threads = workers.intra_op_threads;
  // The dedupe keys (a SHA-256 per case) are computed while libtorch is still loading.
  if (!r.collect_only)
    for (const Case* c : p.cases) p.known_keys.emplace(c, dedupe_key(*c));
  if (!r.collect_only) {
    std::string error;
    bool setup_failed = false;
    // A Ctrl-C or SIGTERM while a Python device imports ends its start-up process; the reports still say so.
    StopSignals::install();
    ExecOptions options = exec_options(r.settings);
    options.stop_requested = StopSignals::flag();
    p.executor = host.create_executor(options, error, setup_failed);
    if (!p.executor) {
      // A stop signal during the start ended it: the run was stopped, the device did not fail (run_request reports
      // every case not run, stopped by the signal).
      if (StopSignals::received()) return -1;
      // The device's own output may be in it: its control bytes are shown, never run by the terminal.
      host.err << "opcheck: error: " << xml_visible(error) << "\n";
      return report_device_not_started(r, p, error, setup_failed, host);
    }
  }
  // The name skip_if expressions and the status config's device overrides see.
  const std::string device_name = p.executor                      ? p.executor->info().device_name
                                  : !r.settings.device_name.empty() ? r.settings.device_name
                                                                    : r.settings.device;
  p.triaged = triage_selection(p.config, p.cases, device_name);
  p.plan = make_plan(p.triaged.cases, !r.no_dedupe, &p.known_keys);
  p.all_unique = p.plan.unique.size();
  p.all_occurrences = p.plan.occurrences.size();
  if (!r.collect_only) p.selection_sha256 = occurrences_sha256(p.plan);
  // Sharding follows dedupe: shards split unique calls, so no call runs on two machines.
  if (!r.settings.durations_from.empty()) shard_by_recorded_times(r, p, host);
  else if (r.settings.shard_total > 1) p.plan = shard_plan(p.plan, r.settings.shard_index, r.settings.shard_total);
  if (r.collect_only) {
    host.out << describe_plan(p.plan);
    return p.invalid_input ? kInterrupted : kOk;
  }
  return -1;
}

// The run's account of itself before any case runs, its identity included.
RunInfo describe(const RunRequest& r, const Prepared& p) {
  RunInfo info = describe_run(r.argv, r.policy, p.loaded.set);
  describe_executor(p.executor->info(), info);
  info.device_choice = device_choice_of(r.settings);
  info.device_choice.chosen = info.device_name;  // the name the device registered, not only "privateuseone"
  for (const auto& [name, value] : r.settings.device_environment) info.device_environment.push_back(name + "=" + value);
  if (!p.config.path.empty()) info.status_config_sha256 = sha256_file(p.config.path);
  info.identity = run_identity(r.settings, p.executor->info(), info.status_config_sha256);
  info.deselected = static_cast<std::int64_t>(p.loaded.selected.deselected + p.triaged.excluded);
  if (r.settings.shard_total > 1)
    info.shard = std::to_string(r.settings.shard_index) + "/" + std::to_string(r.settings.shard_total);
  if (!info.shard.empty()) info.selection_occurrences = static_cast<std::int64_t>(p.all_occurrences);
  info.selection_sha256 = p.selection_sha256;
  info.cases_sha256 = occurrences_sha256(p.plan);
  info.durations_from = r.settings.durations_from;
  info.durations_sha256 = r.settings.durations.sha256;
  info.durations_recorded = static_cast<std::int64_t>(p.expected.recorded);
  info.durations_estimated = static_cast<std::int64_t>(p.expected.estimated);
  info.expected_shard_s = p.expected_shard_s;
  return info;
}

// execute: the session serves earlier results, runs the rest in the worker pool, and stops as asked. Each record
// goes to the run's event list: the report formats, the journal (once the session opened it), the console's case
// lines last.
int execute(const RunRequest& r, Prepared& p, RunSession& session, RunReport& report, ReportEvents& events,
            RunHost& host) {
  PlanExecutionOptions run;
  run.device_name = p.executor->info().device_name;
  run.triage = triage_lookup(p.triaged);
  run.policy = r.policy;
  run.maxfail = r.maxfail;
  run.deadline_s = r.settings.deadline_s;
  run.interrupted = StopSignals::flag();
  PoolOptions pool;
  pool.workers = r.settings.jobs;
  pool.device_indices = r.settings.devices;
  pool.default_timeout_s = r.settings.timeout_s;
  pool.min_start_budget_s = r.settings.start_timeout_s;
  pool.isolation = r.settings.isolation;
  std::ostream& err = host.err;
  pool.abort_running =
      StopSignals::abort_running(report, [&err](const std::string& line) { note_to(err, line); });
  std::string error;
  try {
    if (!session.open(report.info, error)) {
      host.err << "opcheck: error: " << error << "\n";
      return kUsageError;
    }
  } catch (const std::exception& e) {
    host.err << error_text(e, "cannot read the results cache: ");
    return kUsageError;
  }
  events.add(session.journal_listener());
  auto console = std::make_unique<ConsoleCases>(host.out, host.err, p.plan.occurrences.size(),
                                                ConsoleCases::Options{r.verbose, r.quiet, r.color, r.progress});
  ConsoleCases& cases = *console;
  events.add(std::move(console));
  session.execute(p.plan, *p.executor, pool, run, report,
                  [&events](const CaseRecord& rec) { events.case_finished(rec); });
  host.err << cases.end_of_cases() << std::flush;
  return -1;
}

// An injected fault whose op no case reached on the device proves nothing, and a run that passes with it must not
// read as a device that survived it. A fault that kills or hangs the worker takes the case's record of what it
// reached along (CRASHED, TIMEOUT), so with such cases in the run it may have fired unseen, and nothing is said. So
// does a stop (a signal, the deadline) that ended the cases still running: a hung case ended there has no record.
std::vector<std::string> unfired_fault_warnings(const RunSettings& settings, const RunReport& report) {
  std::vector<std::string> warnings;
  std::set<std::string> reached;
  bool worker_lost = report.info.stopped_by == "signal" || report.info.stopped_by == "deadline";
  for (const auto& rec : report.cases) {
    for (const auto& d : rec.result.device_ops) reached.insert(d.op);
    worker_lost = worker_lost || rec.result.stage == Stage::CRASHED || rec.result.stage == Stage::TIMEOUT;
  }
  for (const auto& [name, value] : settings.device_environment) {
    if (name != "OPCHECK_LOOPBACK_FAULTS" && name != "OPCHECK_PYLOOP_FAULTS") continue;
    for (const auto& item : split_list(value, ';')) {
      const auto eq = item.find('=');
      if (eq == std::string::npos) continue;  // the device rejected the variable already if it meant anything
      const std::string op(trim_blanks(item.substr(0, eq))), kind(trim_blanks(item.substr(eq + 1)));
      // pyloop's segv and hang are named as the loopback's are, and end the worker as they do.
      const FaultKindInfo* info = fault_kind_named(kind.substr(0, kind.find(':')));
      if (worker_lost && info != nullptr && info->ends_worker) continue;
      if (std::any_of(reached.begin(), reached.end(), [&](const std::string& r) { return fault_op_matches(op, r); }))
        continue;
      warnings.push_back(name + ": fault " + op + "=" + kind + " never fired: no case reached " + op +
                         " on the device" +
                         (report.info.not_run > 0 ? " in the cases that ran (" + std::to_string(report.info.not_run) +
                                                        " did not run: " + report.info.stop_reason + ")"
                                                  : std::string()));
    }
  }
  return warnings;
}

// --reference-cache: an entry that failed its check, or a folder that could not be written, is said once per case
// that met it (the case's verdict stands: its reference was computed).
std::vector<std::string> reference_cache_warnings(const RunReport& report) {
  std::vector<std::string> warnings;
  for (const auto& rec : report.cases)
    if (rec.deduplicated_from.empty() && !rec.result.reference_cache_warning.empty())
      warnings.push_back(rec.id + ": " + rec.result.reference_cache_warning);
  return warnings;
}

// report: written whatever happened, interrupted runs included (partial but valid), with the manifests' problems:
// errors as ERROR cases, warnings listed. Returns the run's exit code.
int report_run(const RunRequest& r, const Prepared& p, const RunSession& session, RunReport& report,
               ReportEvents& events, RunHost& host) {
  const std::size_t earlier_warnings = report.info.warnings.size();
  add_load_problems(p.loaded.diagnostics, p.loaded.set, report);
  const std::size_t about_inputs = report.info.warnings.size() - earlier_warnings;
  if (!session.journal_error().empty())
    report.info.warnings.push_back("the journal is incomplete (--resume cannot use it): " + session.journal_error());
  std::vector<std::string> warnings = unfired_fault_warnings(r.settings, report);
  for (auto& w : reference_cache_warnings(report)) warnings.push_back(std::move(w));
  for (const auto& w : session.cache_warnings()) warnings.push_back(w);
  for (const auto& w : warnings) {
    host.err << "opcheck: warning: " << w << "\n";
    report.info.warnings.push_back(w);
  }
  RunEnd end;
  end.invalid_input = p.invalid_input;
  end.all_excluded = p.triaged.cases.empty() && p.triaged.excluded > 0;
  end.report_failure = say_report_errors(events.run_finished(report), host.err);
  if (!session.journal_error().empty()) {
    host.err << "opcheck: error: " << session.journal_error()
             << "\n  Fix: free space where --artifact-dir is, or pass another one; the reports hold every result\n";
    end.report_failure = kInternalError;
  }
  const std::string& bundles = r.settings.save_failures_dir;
  if (!bundles.empty() && !r.quiet && std::any_of(report.cases.begin(), report.cases.end(), [](const CaseRecord& c) {
        return c.outcome == Outcome::Failed || c.outcome == Outcome::Error || c.outcome == Outcome::NotSupported;
      }))
    host.err << "opcheck: failure bundles in " << absolute_path(bundles)
             << " (README.md in each says how to rerun the case; `opcheck repro --bundle DIR` prints it)\n";
  if (r.failure_groups) host.out << failure_groups_section(report, r.failures.width);
  host.out << failure_details(report, r.failures);
  if (report.info.interrupted)
    host.out << "stopped early: " << report.info.stop_reason << "; " << report.info.not_run << " not run\n";
  if (r.durations >= 0) host.out << durations_section(report, r.durations);
  // The comparison with --baseline comes before the summary line, which is always the last line (pytest's).
  int rc = -1;
  if (p.baseline) {
    try {
      DiffResult d = diff_reports(*p.baseline, report);
      // A baseline may be of another selection, but not of another device unless asked.
      const DiffAllowed allowed{/*different_cases=*/true, r.allow_device_change};
      host.out << render_diff(d, allowed);
      end.regressions = d.has_regressions();
      end.baseline_refused = diff_exit_code(d, allowed) == kInterrupted;
    } catch (const std::exception& e) {
      host.err << error_text(e, "baseline " + r.baseline + ": ");
      rc = kUsageError;
    }
  }
  host.out << short_summary(report, r.report_chars) << warnings_summary(report.info, 3, about_inputs)
           << summary_line(report, r.color) << "\n";
  end.signalled = StopSignals::received();
  return rc >= 0 ? rc : run_exit_code(report, end);
}

// --shrink: each failure group's example shrunk to the smallest call that fails the same way, on the run's device
// and settings; the group's metrics carry the call. Not after a stop: the run was asked to end.
void shrink_groups(const RunRequest& r, const Prepared& p, RunReport& report, RunHost& host) {
  if (!r.shrink || report.info.interrupted) return;
  const std::size_t batch = std::max<std::size_t>(4, 2 * static_cast<std::size_t>(r.settings.jobs));
  for (const FailureGroup& g : group_failures(report)) {
    const auto rec = std::find_if(report.cases.begin(), report.cases.end(),
                                  [&](const CaseRecord& c) { return c.id == g.example; });
    const auto c = std::find_if(p.plan.occurrences.begin(), p.plan.occurrences.end(),
                                [&](const Case* c) { return c->id == g.example; });
    if (rec == report.cases.end() || c == p.plan.occurrences.end() || rec->key.empty()) continue;
    Case call = **c;
    call.xfail_if.clear();
    RunInfo scratch;  // a stop inside the shrink (its time budget) is not the run's
    const CallRunner run = [&](const std::vector<Case>& calls, double deadline_s) {
      return run_calls(*p.executor, r.settings, calls, scratch, deadline_s);
    };
    const ShrinkOutcome s = shrink_call(call, *rec, run, kRunShrinkSteps, kRunShrinkSeconds, batch);
    report.info.shrunk[g.example] = call_signature(s.minimal);
    if (!r.quiet)
      host.err << "opcheck: --shrink: " << g.example << ": " << rec->call << " -> " << call_signature(s.minimal)
               << " (" << s.tried << " calls tried)\n";
  }
}

}  // namespace

std::string rerun_line(const CaseRecord& rec, const RunRequest& r) {
  if (rec.key.empty()) return {};
  std::vector<std::string> words{r.binary, "repro", rec.id};
  if (!r.settings.save_failures_dir.empty() && rec.deduplicated_from.empty()) {
    words.insert(words.end(), {"--bundle", absolute_path(r.settings.save_failures_dir)});
    return repro::join_words(words);
  }
  for (auto& w : repro::input_words(r.selection.manifests, r.config)) words.push_back(std::move(w));
  const RerunArguments rerun = rerun_arguments(r.settings);
  words.insert(words.end(), rerun.args.begin(), rerun.args.end());
  // The device faults of the run come along, so that the rerun computes what the run computed.
  return repro::environment_prefix(rerun.environment) + repro::join_words(words);
}

int run_request(RunRequest r, RunHost& host) {
  const auto t0 = Clock::now();
  StopSignals::install();
  r.failures.repro_command = [&r](const CaseRecord& rec) { return rerun_line(rec, r); };
  r.session.note = [&host](const std::string& line) { note_to(host.err, line); };
  r.session.quiet = r.quiet;
  r.session.argv = r.argv;
  RunSession session(r.session);
  Prepared p;
  if (int rc = select_cases_to_run(r, session, p, host); rc >= 0) return rc;
  if (StopSignals::received()) return report_stopped_before_cases(r, p, false, t0, host);
  if (p.cases.empty()) {
    if (!p.invalid_input) {
      host.out << "no tests ran in 0.00s\n";
      return kNoTests;
    }
    return report_rejected_only(p.loaded, r, t0, host);
  }
  if (int rc = plan_run(r, session, p, host); rc >= 0) return rc;
  if (StopSignals::received()) return report_stopped_before_cases(r, p, true, t0, host);
  const ExecInfo& info = p.executor->info();
  if (!r.quiet)
    host.err << run_banner(info, p.plan.occurrences.size(), p.plan.unique.size(), r.settings.shard_index,
                           r.settings.shard_total, p.all_unique);
  RunReport report;
  report.info = describe(r, p);
  // The run's event list: the report formats asked for, then the journal and the console's case lines (execute adds
  // them once the session is open).
  ReportEvents events = report_listeners(r.reports);
  events.run_started(report.info);
  if (int rc = execute(r, p, session, report, events, host); rc >= 0) return rc;
  shrink_groups(r, p, report, host);
  report.info.duration_s = seconds_since(t0);
  try {
    session.close(report);
  } catch (const std::exception& e) {
    host.err << error_text(e, "cannot write the results cache: ");
  }
  const int rc = report_run(r, p, session, report, events, host);
  if (host.end) host.end(rc);
  return rc;
}

}  // namespace opcheck
