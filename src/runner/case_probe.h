// What `opcheck shrink` and `opcheck sweep` share with `opcheck run`: one case chosen by id through run's selection,
// the run's settings resolved from flags and environment, the device under test started, and batches of calls run
// as run runs them (each in a worker process of the pool, so a crash or hang is that call's verdict).
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "opcheck/exec_api.h"
#include "opcheck/report.h"
#include "runner/run.h"
#include "settings/run_settings.h"
#include "runner/selection.h"

namespace opcheck {

/// The part of a request shrink and sweep share: which case, from which manifests, on which device.
struct ProbeRequest {
  SelectionRequest selection;     // run's selection flags; `case_id` is added to its ids
  std::string case_id;            // MODEL::CASE
  std::string shipped_manifests;  // the installation's manifests
  std::string config;             // --config (default: opcheck.yaml in a manifest folder)
  RunSettings settings;           // as the flags gave them
  std::vector<std::string> argv;
  std::string binary;             // opcheck's path, for the commands printed
};

/// Runs `calls` on `executor` as `opcheck run` runs unique cases (the pool `settings` ask for: workers, device indices,
/// timeout, isolation; skip_if/xfail_if as `device_name` sees them): one record per call that got a verdict, its
/// `index` the call's position in `calls`. No call starts after `deadline_s` seconds (0: none) or a Ctrl-C; those get
/// no record, or with `with_not_run` the skipped record that says so (as run reports them). The batch's facts
/// (workers, a stop, how many did not run) go to `info`.
std::vector<CaseRecord> run_calls(Executor& executor, const RunSettings& settings, const std::vector<Case>& calls,
                                  RunInfo& info, double deadline_s = 0, bool with_not_run = false);

/// The case and the started device; runs calls against it.
class CaseProbe {
 public:
  /// Loads and selects, finds the case, resolves the settings and starts the device. Returns -1 when ready, else
  /// the exit code to end with (the reason said on host.err).
  int start(ProbeRequest& request, RunHost& host);

  /// The case as the run would run it (the status config's tolerances applied).
  const Case& original() const { return original_; }
  const RunSettings& settings() const { return settings_; }
  const Executor& executor() const { return *executor_; }
  /// The manifest file the case came from.
  const std::string& manifest_path() const { return manifest_path_; }

  /// run_calls on the started device.
  std::vector<CaseRecord> run(const std::vector<Case>& calls, RunInfo& info, double deadline_s = 0,
                              bool with_not_run = false) {
    return run_calls(*executor_, settings_, calls, info, deadline_s, with_not_run);
  }

  /// The run's account of itself as `opcheck run` writes it (the reports' header).
  RunInfo describe(const ProbeRequest& request) const;

 private:
  Loaded loaded_;
  Case original_;
  std::string manifest_path_;
  RunSettings settings_;
  std::string config_sha256_;  // the status config's digest ("" = none), part of the reports' identity
  std::unique_ptr<Executor> executor_;
};

}  // namespace opcheck
