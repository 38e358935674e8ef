// One `opcheck run` around the executor: the results it keeps from earlier runs (--resume's journal, the results
// cache) and serves instead of running a case again, the journal it writes, when it stops (Ctrl-C/SIGTERM, --maxfail,
// --deadline), and the exit code it ends with.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "config/status_config.h"
#include "opcheck/exec_api.h"
#include "opcheck/exit_code.h"
#include "opcheck/report.h"
#include "plan/plan.h"
#include "report/report_format.h"
#include "runner/artifact_lock.h"
#include "runner/earlier_results.h"
#include "runner/plan_execution.h"
#include "runner/worker_pool.h"

namespace opcheck {

class JournalWriter;

/// Lines for the person watching the run (stderr in `opcheck run`).
using NoteSink = std::function<void(const std::string&)>;

struct RunSessionOptions {
  std::string artifact_dir = "opcheck-out";  // holds journal.jsonl
  bool resume = false;                       // --resume: serve the journal's results, append to it
  bool last_failed = false;                  // --last-failed: run what failed in the journal
  std::string results_cache;                 // --results-cache FILE ("" = none)
  bool reuse_results = false;                // --reuse-results: serve the cache's results
  std::vector<std::string> argv;             // the command, named in the artifact folder's lock
  bool quiet = false;                        // no notes about served results (resumed, from the cache)
  NoteSink note;                             // what the person watching should know; none = nothing is said
};

/// SIGINT/SIGTERM from the start of a run (loading included): the first stops starting cases and ends the running
/// ones at once (their workers are killed; they count as not run). --deadline ends them the same way. Reports are
/// written either way.
class StopSignals {
 public:
  /// Installs the handlers (for the rest of the process), whatever disposition opcheck inherited: a shell that ran
  /// it in the background, or under `trap '' INT`, leaves SIGINT ignored, and a stop must still stop it.
  static void install();
  /// The flag the handlers set (for PlanExecutionOptions::interrupted).
  static const volatile bool* flag();
  static bool received();
  /// For PoolOptions::abort_running: true once running cases must end now (a stop signal came, or `report` says the
  /// deadline stopped the run); says why through `note`.
  static std::function<bool()> abort_running(const RunReport& report, NoteSink note);
};

class RunSession {
 public:
  explicit RunSession(RunSessionOptions options);
  ~RunSession();
  RunSession(const RunSession&) = delete;
  RunSession& operator=(const RunSession&) = delete;

  std::string journal_path() const;

  /// Reads the artifact folder's journal for --resume and --last-failed (nothing otherwise); returns the problems
  /// of lines that could not be read (their records are lost). Throws ReportError when it exists but cannot be read.
  DiagnosticList read_previous_run();

  /// --last-failed: the cases of `selected` that failed in the previous run (all when none did, or when there is
  /// no previous run; a note says so). `selected` as it is without --last-failed.
  std::vector<const Case*> select(const std::vector<const Case*>& selected, const RunPolicy& policy);

  /// Takes the artifact folder (one run at a time), adopts the earlier results that `info` (this run's identity)
  /// may serve, and opens the journal (a fresh one, or the resumed one to append to). False, with a usage `error`
  /// and its Fix, when another run holds the folder, the resumed journal was written under another identity, or the
  /// journal cannot be written. Throws ReportError when the results cache cannot be read.
  bool open(const RunInfo& info, std::string& error);

  /// The journal's listener on the run's event list (report/report_format.h), for after open(): case_finished
  /// appends each record the run did not serve from the resumed journal (a resumed journal only gets new records).
  /// A write failure is said through the note, and the run goes on without the journal (journal_error). Opening the
  /// journal (open), flushing it after each batch of worker results (execute) and closing it (close) stay the
  /// session's: they are no events of the list.
  std::unique_ptr<ReportListener> journal_listener();

  /// Runs the plan: each unique case is served from the earlier results when they hold it, else run by `executor`
  /// in the worker pool. Every record goes to `sink` (the run's event list, the journal's listener on it), and the
  /// journal is flushed after each batch of results.
  void execute(const Plan& plan, Executor& executor, PoolOptions pool, const PlanExecutionOptions& execution,
               RunReport& report, const RecordSink& sink);

  /// Closes the journal, then writes the results cache. Throws when the cache cannot be written (the journal and
  /// the reports are still complete).
  void close(const RunReport& report);

  /// Why the journal could not be written (a full disk), when it could not; "" when it was. The run went on
  /// without it: --resume cannot use it, the reports still hold every result.
  const std::string& journal_error() const { return journal_error_; }
  /// What reading --results-cache found wrong (entries that failed their check): run-time warnings.
  const std::vector<std::string>& cache_warnings() const { return earlier_.warnings(); }

 private:
  RunSessionOptions opts_;
  bool previous_found_ = false;
  std::vector<CaseRecord> previous_;
  std::vector<int> previous_unbound_;  // lines of journal records whose binding failed
  std::optional<RunInfo> previous_info_;
  EarlierResults earlier_;
  ArtifactLock lock_;
  std::unique_ptr<JournalWriter> journal_;
  std::string journal_error_;
  void on_journal(const std::function<void()>& write);
};

/// A run's account of itself before any case runs: opcheck's version, the host, the start time, the command line,
/// the policy and the manifests' digests.
RunInfo describe_run(const std::vector<std::string>& argv, const RunPolicy& policy, const ManifestSet& manifests);
/// Adds what the executor says about the device under test, torch and the Python device.
void describe_executor(const ExecInfo& executor, RunInfo& info);

/// PlanExecutionOptions::triage for the statuses the status config gave (none when it gave none).
std::function<Triage(const Case&)> triage_lookup(const TriagedSelection& triaged);

/// What ended a run, besides its records.
struct RunEnd {
  bool signalled = false;      // SIGINT/SIGTERM arrived (StopSignals::received())
  bool invalid_input = false;  // the manifests had errors (their cases are ERROR records)
  bool regressions = false;    // --baseline found regressions
  bool baseline_refused = false;  // --baseline ran on another device (without --allow-device-change)
  int report_failure = 0;      // kInternalError when a report could not be written
  bool all_excluded = false;   // the status config excluded every selected case: nothing ran
};

/// pytest's exit code for a finished run: a report that could not be written (3); a signal, a deadline, invalid
/// input or a --baseline of another device interrupts (2); nothing run because the status config excluded every case
/// (5, as for a -k that matches nothing); regressions or an occurrence that fails the run under its policy (1,
/// --maxfail included); else 0.
int run_exit_code(const RunReport& report, const RunEnd& end);

}  // namespace opcheck
