// `opcheck run` as one request: the stages in their order (load -> select -> triage -> plan -> shard -> execute ->
// report) and the run's policies between them. The CLI builds the request from flags and hands over its console.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "opcheck/exec_api.h"
#include "report/console.h"
#include "report/outputs.h"
#include "runner/run_session.h"
#include "settings/run_settings.h"
#include "runner/selection.h"

namespace opcheck {

/// Everything one run is asked to do.
struct RunRequest {
  SelectionRequest selection;
  std::string shipped_manifests;  // the installation's manifests (default set, markers.yaml)
  RunSettings settings;           // as the flags gave them; the run completes them from the environment
  std::string config;             // --config (default: opcheck.yaml in a manifest folder)
  ReportFiles reports;
  RunSessionOptions session;  // --artifact-dir, --resume, --last-failed, --results-cache, --reuse-results
  bool no_dedupe = false;
  bool collect_only = false;
  RunPolicy policy;         // --xpass-ok, --not-supported-ok: what does not fail the run
  std::size_t maxfail = 0;  // -x is 1
  std::string baseline;     // --baseline OLD.json
  bool allow_device_change = false;  // --allow-device-change: a baseline of another device is compared anyway
  int durations = -1;       // --durations N (0: all); -1: not asked
  bool shrink = false;      // --shrink: each failure group's example shrunk (runner/shrink.h), its minimal call kept
  bool failure_groups = true;  // the console's failure groups before the failures (--no-groups: per case only)
  bool verbose = false;
  bool quiet = false;
  FailureReportOptions failures;  // --tb (its repro command is the run's rerun line)
  std::string report_chars;       // -r, expanded
  bool color = false;             // colour on stdout
  bool progress = false;          // a progress line on stderr
  std::string binary;             // opcheck's path, for the commands the run prints
  std::vector<std::string> argv;
};

/// What the run borrows from the process that hosts it.
struct RunHost {
  std::ostream& out;  // results: failures, summary line
  std::ostream& err;  // progress, notes, errors
  /// Creates the executor (libtorch is loaded by then); nullptr with `error` set, and `setup_failed` when the device
  /// could not be set up (the user's flags or backend) rather than the exec layer missing.
  std::function<std::unique_ptr<Executor>(const ExecOptions&, std::string& error, bool& setup_failed)> create_executor;
  /// Ends the process once every report is written (skips freeing what the run built); returns only in tests.
  std::function<void(int exit_code)> end;
  int cores = 1;
};

/// Runs the request; returns pytest's exit code (opcheck/exit_code.h). A run that got as far as its reports hands
/// its exit code to host.end first.
int run_request(RunRequest request, RunHost& host);

/// The command that reruns one case alone under the run's settings: `opcheck repro ID` with the run's manifests,
/// status config and settings (its bundle with --save-failures), the device faults in front. "" for a case rejected
/// while loading (it has no dedupe key: there is nothing to rerun).
std::string rerun_line(const CaseRecord& r, const RunRequest& request);

}  // namespace opcheck
