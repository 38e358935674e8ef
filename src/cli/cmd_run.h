// Flags and entry point of `opcheck run`.
#pragma once

#include <string>
#include <vector>

#include "cli/cli.h"
#include "opcheck/exec_api.h"
#include "report/outputs.h"
#include "runner/run_session.h"

namespace opcheck::cli {

struct RunFlags {
  ManifestFlags manifest;
  ExecOptions exec;
  std::string reference_dtype;
  std::string compile_backend;  // --compile-backend as given ("" = TEST_COMPILE_BACKEND, else none)
  bool no_dedupe = false;
  bool collect_only = false;
  std::string shard;
  std::size_t maxfail = 0;
  bool exitfirst = false;  // -x: --maxfail 1
  int durations = -1;      // --durations=N: the N slowest cases (0: all); -1: not asked
  std::string deadline;
  ReportFiles reports;        // --junit-xml, --junit-dir, --metrics-json, --html
  RunSessionOptions session;  // --artifact-dir, --resume, --last-failed, --results-cache, --reuse-results
  std::string baseline;
  int jobs = 0;  // worker processes; 0 = one per core
  double timeout_s = 300;
  bool no_isolation = false;
  std::vector<int> devices;
  std::string config;  // --config (default: opcheck.yaml in a manifest folder)
  bool xpass_ok = false;
  bool verbose = false;
  bool quiet = false;
  std::string tb = "short";         // --tb: short, long or no failures section
  std::string report_chars = "fE";  // -r: pytest's short summary chars
  std::vector<std::string> argv;
};

void add_run_flags(CLI::App& app, RunFlags& f);
/// Returns an exit code when the run stops early (bad flags, nothing to run, --collect-only); a run that gets as
/// far as its reports ends the process itself with its exit code once everything is written.
int cmd_run(RunFlags& f);
int cmd_merge(const std::vector<std::string>& inputs, const std::string& junit_xml, const std::string& metrics_json,
              bool allow_partial);
int cmd_diff(const std::string& old_path, const std::string& new_path);

}  // namespace opcheck::cli
