#include "runner/case_probe.h"

#include <set>

#include "common/sha256.h"
#include "config/status_config.h"
#include "plan/plan.h"
#include "repro/reproduction.h"
#include "runner/plan_execution.h"
#include "settings/run_identity.h"
#include "runner/worker_pool.h"

namespace opcheck {

int CaseProbe::start(ProbeRequest& r, RunHost& host) {
  if (r.case_id.empty()) {
    host.err << "opcheck: error: name the case: CASE_ID as `opcheck list-cases` prints it (model::case)\n";
    return kUsageError;
  }
  r.selection.ids.push_back(r.case_id);
  loaded_ = load_and_select(r.selection, r.shipped_manifests);
  host.err << diagnostics_text(loaded_.diagnostics, /*errors_only=*/true);
  if (loaded_.selected.usage_error) return kUsageError;
  std::string error;
  const Case* found = repro::find_case(loaded_.set, loaded_.selected.cases, r.case_id, error);
  if (!found) {
    host.err << "opcheck: error: " << error << "\n";
    return kUsageError;
  }
  if (found->is_module()) {  // shrink and sweep vary an op call's inputs; a module's failure is its traced calls'
    host.err << "opcheck: error: " << r.case_id << " is a module case: shrink and sweep take op cases. Fix: run it with "
             << "--save-failures DIR, which writes the calls inside it that are wrong with right inputs as op cases "
             << "(DIR/<case>/calls.yaml), and shrink or sweep those (docs/modules.md)\n";
    return kUsageError;
  }
  original_ = *found;
  if (const Manifest* m = repro::manifest_of(loaded_.set, *found)) manifest_path_ = m->path;
  settings_ = r.settings;
  if (!resolve_run_settings(settings_, process_environment(), "opcheck-out", error)) {
    host.err << "opcheck: error: " << error << "\n";
    return kUsageError;
  }
  StatusConfig config;
  DiagnosticList config_problems;
  const bool config_ok = load_status_config_for(
      r.config, manifest_paths(r.selection, r.shipped_manifests), config, config_problems);
  host.err << diagnostics_text(config_problems, /*errors_only=*/config_ok);
  if (!config_ok) return kUsageError;
  if (!config.path.empty()) config_sha256_ = sha256_file(config.path);
  repro::BundleFacts facts;
  repro::as_the_run_would(config, settings_, repro::device_args({}, settings_, facts), original_, facts);
  const WorkerLayout workers = layout_workers(settings_.jobs, settings_.intra_op_threads, settings_.devices.size(),
                                              settings_.isolation, host.cores);
  settings_.jobs = workers.jobs;
  settings_.intra_op_threads = workers.intra_op_threads;
  bool setup_failed = false;
  executor_ = host.create_executor(exec_options(settings_), error, setup_failed);
  if (!executor_) {
    host.err << "opcheck: error: " << error << "\n";
    return setup_failed ? kUsageError : kInternalError;
  }
  StopSignals::install();
  return -1;
}

std::vector<CaseRecord> run_calls(Executor& executor, const RunSettings& settings, const std::vector<Case>& calls,
                                  RunInfo& info, double deadline_s, bool with_not_run) {
  std::vector<const Case*> selected;
  for (const Case& c : calls) selected.push_back(&c);
  const Plan plan = make_plan(selected, /*dedupe=*/false);
  PlanExecutionOptions execution;
  execution.device_name = executor.info().device_name;
  execution.interrupted = StopSignals::flag();
  execution.deadline_s = deadline_s;
  PoolOptions pool;
  pool.workers = settings.jobs;
  pool.device_indices = settings.devices;
  pool.default_timeout_s = settings.timeout_s;
  pool.isolation = settings.isolation;
  RunReport report;
  // A call handed to the pool that never finished was not run (the run stopped): its record only says so.
  std::set<const Case*> started, finished;
  const BatchRunner runner = [&](const std::vector<const Case*>& batch,
                                 const std::function<void(std::size_t, Result)>& done,
                                 const std::function<bool()>& stop) {
    started.insert(batch.begin(), batch.end());
    const auto mark = [&](std::size_t b, Result r) {
      finished.insert(batch[b]);
      done(b, std::move(r));
    };
    const PoolStats stats = run_cases(executor, batch, pool, mark, stop);
    note_worker_starts(info, stats.worker_start_s);
    info.cases_wall_s += stats.cases_wall_s;
  };
  execute_plan(plan, execution, runner, report);
  if (report.info.interrupted) {
    info.interrupted = true;
    info.stop_reason = report.info.stop_reason;
    info.stopped_by = report.info.stopped_by;
  }
  info.not_run += report.info.not_run;
  std::vector<CaseRecord> records;
  for (CaseRecord& rec : report.cases) {
    const Case* c = selected[static_cast<std::size_t>(rec.index)];
    if (with_not_run || !started.count(c) || finished.count(c)) records.push_back(std::move(rec));
  }
  return records;
}

RunInfo CaseProbe::describe(const ProbeRequest& r) const {
  RunInfo info = describe_run(r.argv, RunPolicy{}, loaded_.set);
  describe_executor(executor_->info(), info);
  for (const auto& [name, value] : settings_.device_environment) info.device_environment.push_back(name + "=" + value);
  info.status_config_sha256 = config_sha256_;
  info.identity = run_identity(settings_, executor_->info(), info.status_config_sha256);
  return info;
}

}  // namespace opcheck
