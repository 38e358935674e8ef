#include "runner/run_session.h"

#include <unistd.h>

#include <csignal>
#include <ctime>
#include <filesystem>

#include "common/stop_request.h"
#include "plan/plan.h"
#include "report/journal.h"

namespace opcheck {
namespace {

volatile bool g_interrupted = false;
volatile std::sig_atomic_t g_signals = 0;  // stop signals (kStopSignals) received so far

extern "C" void on_stop_signal(int) {
  g_interrupted = true;
  stop_request_flag() = 1;
  g_signals = g_signals + 1;
}

std::string host_name() {
  char buf[256] = {0};
  gethostname(buf, sizeof buf - 1);
  return buf;
}

// A listener that hands each finished record to `on_record`.
class RecordListener : public ReportListener {
 public:
  explicit RecordListener(std::function<void(const CaseRecord&)> on_record) : on_record_(std::move(on_record)) {}
  void case_finished(const CaseRecord& record) override { on_record_(record); }

 private:
  std::function<void(const CaseRecord&)> on_record_;
};

std::string iso_now() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

}  // namespace

RunInfo describe_run(const std::vector<std::string>& argv, const RunPolicy& policy, const ManifestSet& manifests) {
  RunInfo info;
  info.opcheck_version = OPCHECK_VERSION;
  info.host = host_name();
  info.started_at = iso_now();
  info.argv = argv;
  info.policy = policy;
  info.dedupe_key_version = kDedupeKeyVersion;
  for (const auto& m : manifests.manifests) info.manifests[m.path] = m.sha256;
  return info;
}

void describe_executor(const ExecInfo& executor, RunInfo& info) {
  info.torch_version = executor.torch_version;
  info.device = executor.device;
  info.device_name = executor.device_name;
  info.device_lib = executor.device_lib;
  info.device_lib_sha256 = executor.device_lib_sha256;
  info.torch_path = executor.torch_path;
  info.python_modules = executor.python_modules;
  info.compile_backend = executor.compile_backend;
  info.enabled_ops = executor.enabled_ops;
}

void StopSignals::install() {
  struct sigaction on_stop {};
  on_stop.sa_handler = on_stop_signal;
  sigemptyset(&on_stop.sa_mask);
  // Reads in progress go on (SA_RESTART); the run looks at the flag between its steps and, with cases running,
  // every 200 ms.
  on_stop.sa_flags = SA_RESTART;
  for (const int sig : kStopSignals) ::sigaction(sig, &on_stop, nullptr);
}

const volatile bool* StopSignals::flag() { return &g_interrupted; }

bool StopSignals::received() { return g_interrupted; }

std::function<bool()> StopSignals::abort_running(const RunReport& report, NoteSink note) {
  auto said = std::make_shared<bool>(false);
  return [said, &report, note = std::move(note)] {
    // A deadline is a bound on the run's wall time: a hung case must not hold the run past it until its --timeout.
    const bool deadline = report.info.stopped_by == "deadline";
    if (g_signals == 0 && !deadline) return false;
    if (note && !*said)
      note(std::string(deadline ? "deadline reached" : "stopping") +
           ": ending the cases still running (they count as not run)");
    *said = true;
    return true;
  };
}

RunSession::RunSession(RunSessionOptions options) : opts_(std::move(options)) {}

RunSession::~RunSession() = default;

std::string RunSession::journal_path() const {
  return (std::filesystem::path(opts_.artifact_dir) / "journal.jsonl").string();
}

DiagnosticList RunSession::read_previous_run() {
  if (!opts_.resume && !opts_.last_failed) return {};
  const std::string path = journal_path();
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return {};
  Journal j = read_journal(path);
  previous_found_ = true;
  previous_ = std::move(j.records);
  previous_unbound_ = std::move(j.unbound_lines);
  previous_info_ = j.info;
  return std::move(j.diagnostics);
}

std::vector<const Case*> RunSession::select(const std::vector<const Case*>& selected, const RunPolicy& policy) {
  if (!opts_.last_failed) return selected;
  if (!previous_found_) {
    if (opts_.note) opts_.note("no previous run in " + opts_.artifact_dir + "; running everything selected");
    return selected;
  }
  if (previous_.empty()) return selected;
  bool nothing_failed = false;
  std::vector<const Case*> kept = last_failed_cases(selected, previous_, policy, nothing_failed);
  // pytest's --lf: with nothing failed last time, everything selected runs.
  if (nothing_failed && opts_.note)
    opts_.note("nothing failed in the previous run (" + journal_path() + "); running everything selected");
  // What --last-failed read chose the cases; it is not served again.
  previous_.clear();
  return kept;
}

bool RunSession::open(const RunInfo& info, std::string& error) {
  // Earlier results are served only under this run's identity: what computed them must be what would compute them
  // now.
  if (opts_.resume &&
      !earlier_.adopt_journal(std::move(previous_), previous_unbound_, previous_info_, info, journal_path(), error))
    return false;
  previous_.clear();
  if (!opts_.results_cache.empty()) {
    std::string note;
    earlier_.adopt_cache(opts_.results_cache, info, opts_.reuse_results, note);
    if (!note.empty() && !opts_.quiet && opts_.note) opts_.note(note.substr(0, note.find_last_not_of('\n') + 1));
  }
  // One run per artifact folder: a second one would unlink the journal the first is writing.
  std::string holder = "pid " + std::to_string(::getpid()) + " on " + host_name() + " since " + iso_now() + ":";
  for (const auto& a : opts_.argv) holder += " " + a;
  if (!lock_.acquire(opts_.artifact_dir, holder, error)) return false;
  namespace fs = std::filesystem;
  try {
    fs::create_directories(opts_.artifact_dir);
    if (!opts_.resume) fs::remove(journal_path());
    journal_ = std::make_unique<JournalWriter>(journal_path(), &info);
  } catch (const std::exception& e) {
    error = "cannot write the journal in " + opts_.artifact_dir + ": " + e.what() +
            "\n  Fix: pass a writable --artifact-dir";
    return false;
  }
  return true;
}

void RunSession::execute(const Plan& plan, Executor& executor, PoolOptions pool, const PlanExecutionOptions& execution,
                         RunReport& report, const RecordSink& sink) {
  pool.after_results = [this] { on_journal([this] { journal_->flush(); }); };
  BatchRunner runner = [&](const std::vector<const Case*>& batch, const std::function<void(std::size_t, Result)>& done,
                           const std::function<bool()>& stop) {
    std::vector<const Case*> todo;
    std::vector<std::size_t> todo_index;
    std::size_t resumed = 0, cached = 0;
    for (std::size_t i = 0; i < batch.size(); ++i) {
      // Only a resumed run or a reused cache has results to serve; otherwise hashing every case again would cost a
      // SHA-256 per case for nothing.
      if (earlier_.can_serve()) {
        EarlierResults::Source from{};
        if (const Result* r = earlier_.find(batch[i]->id, dedupe_key(*batch[i]), from)) {
          Result served = *r;
          served.result_from_cache = r->result_from_cache || from == EarlierResults::Source::Cache;
          served.result_from_journal = from == EarlierResults::Source::Journal;
          done(i, std::move(served));
          ++(from == EarlierResults::Source::Journal ? resumed : cached);
          continue;
        }
      }
      todo.push_back(batch[i]);
      todo_index.push_back(i);
    }
    if (resumed && !opts_.quiet && opts_.note)
      opts_.note("resuming: " + std::to_string(resumed) + " results reused from " + journal_path());
    if (cached && !opts_.quiet && opts_.note)
      opts_.note(std::to_string(cached) + " unchanged cases served from " + opts_.results_cache);
    const PoolStats stats = run_cases(
        executor, todo, pool, [&](std::size_t k, Result r) { done(todo_index[k], std::move(r)); }, stop);
    note_worker_starts(report.info, stats.worker_start_s);
    report.info.cases_wall_s += stats.cases_wall_s;
  };
  execute_plan(plan, execution, runner, report, sink);
}

std::unique_ptr<ReportListener> RunSession::journal_listener() {
  return std::make_unique<RecordListener>([this](const CaseRecord& r) {
    // A resumed run appends only new results: what the journal holds already stays as it is.
    if (!earlier_.journaled(r)) on_journal([&] { journal_->append(r); });
  });
}

void RunSession::on_journal(const std::function<void()>& write) {
  if (!journal_) return;
  try {
    write();
  } catch (const std::exception& e) {
    // A full disk: the run goes on without its journal (its results stay whole in memory, for the reports), and
    // says so now and at its end.
    journal_error_ = e.what();
    journal_.reset();
    if (opts_.note) opts_.note("error: " + journal_error_ + "; the run goes on without its journal");
  }
}

void RunSession::close(const RunReport& report) {
  on_journal([this] { journal_->close(); });
  if (!opts_.results_cache.empty()) earlier_.write_cache(opts_.results_cache, report.info, report.cases);
}

std::function<Triage(const Case&)> triage_lookup(const TriagedSelection& triaged) {
  if (triaged.statuses.empty()) return {};
  return [&triaged](const Case& c) {
    auto it = triaged.statuses.find(&c);
    if (it == triaged.statuses.end()) return Triage{};
    return Triage{it->second.status, it->second.reason, it->second.strict};
  };
}

int run_exit_code(const RunReport& report, const RunEnd& end) {
  if (end.report_failure) return end.report_failure;
  // pytest's: a signal or a deadline interrupts (2), --maxfail is a run with failures (1); a --baseline of another
  // device cannot be compared (2), as opcheck diff refuses it.
  if (end.signalled || end.invalid_input || end.baseline_refused || report.info.stopped_by == "signal" ||
      report.info.stopped_by == "deadline")
    return kInterrupted;
  if (end.all_excluded) return kNoTests;
  if (end.regressions) return kTestsFailed;
  for (const auto& r : report.cases)
    if (fails_run(r, report.info)) return kTestsFailed;
  return kOk;
}

}  // namespace opcheck
