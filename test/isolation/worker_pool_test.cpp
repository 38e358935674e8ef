// The worker pool with a fake Executor whose cases crash, abort, hang, sleep, print or throw on purpose: each problem
// must stay with its own case, and every other case must still get its result.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "runner/worker_pool.h"

// Under AddressSanitizer a SIGSEGV would be turned into a report and exit status 1; these tests need the signal
// itself to reach the pool, as it does from a real device crash.
extern "C" const char* __asan_default_options() { return "handle_segv=0:handle_abort=0"; }

namespace opcheck {
namespace {

/// Behaves as the case name says: "ok", "segv", "abort", "hang", "sleep:SECONDS", "stderr:TEXT", "stdout:TEXT",
/// "say-then-segv:TEXT", "spew:BYTES", "throw:TEXT", "badalloc", "exit:CODE", "device" (reports its device index).
class FakeExecutor : public Executor {
 public:
  const ExecInfo& info() const override { return info_; }

  bool prepare_worker(int device_index, std::string* error) override {
    if (refuse_start) {
      std::fprintf(stderr, "fake device init failed\n");
      *error = "device " + std::to_string(device_index) + " is unavailable";
      return false;
    }
    device_index_ = device_index;
    ++prepared_;
    if (start_seconds > 0) std::this_thread::sleep_for(std::chrono::duration<double>(start_seconds));
    return true;
  }

  Result run(const Case& c) override {
    const auto colon = c.name.find(':');
    const std::string kind = c.name.substr(0, colon);
    const std::string arg = colon == std::string::npos ? "" : c.name.substr(colon + 1);
    Result r;
    r.case_id = c.id;
    r.stage = Stage::PASSED;
    r.outcome = Outcome::Passed;
    if (kind == "segv") std::raise(SIGSEGV);
    if (kind == "abort") std::abort();
    if (kind == "hang") for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
    if (kind == "sleep") std::this_thread::sleep_for(std::chrono::duration<double>(std::stod(arg)));
    if (kind == "stderr") std::fprintf(stderr, "%s\n", arg.c_str());
    if (kind == "stdout") std::printf("%s\n", arg.c_str());  // buffered: the pool must flush it into the capture
    if (kind == "say-then-segv") {
      std::fprintf(stderr, "%s\n", arg.c_str());
      std::raise(SIGSEGV);
    }
    if (kind == "spew") {
      std::string chunk(1000, 'x');
      chunk[0] = '<';
      for (int i = 0, n = std::stoi(arg) / 1000; i < n; ++i) std::fwrite(chunk.data(), 1, chunk.size(), stderr);
      std::fprintf(stderr, "THE-END");
    }
    if (kind == "throw") throw std::runtime_error(arg);
    if (kind == "badalloc") throw std::bad_alloc();
    if (kind == "exit") std::_Exit(std::stoi(arg));
    if (kind == "device") r.message = "device " + std::to_string(device_index_) + " prepared " + std::to_string(prepared_);
    return r;
  }

  bool refuse_start = false;
  double start_seconds = 0;  // how long prepare_worker takes

 private:
  ExecInfo info_;
  int device_index_ = -99;
  int prepared_ = 0;
};

struct PoolRun {
  std::vector<Case> cases;
  std::map<std::size_t, Result> results;
  std::vector<std::size_t> arrival;  // case positions in the order their results came
  std::size_t duplicates = 0;
  PoolStats stats;
  double seconds = 0;

  explicit PoolRun(const std::vector<std::string>& names) {
    for (std::size_t i = 0; i < names.size(); ++i) {
      Case c;
      c.model = "fake";
      c.name = names[i];
      c.id = "fake::" + std::to_string(i) + "_" + names[i].substr(0, names[i].find(':'));
      cases.push_back(std::move(c));
    }
  }

  void go(Executor& ex, const PoolOptions& opts, const std::function<bool()>& stop = {}) {
    std::vector<const Case*> ptrs;
    for (const auto& c : cases) ptrs.push_back(&c);
    const auto t0 = std::chrono::steady_clock::now();
    stats = run_cases(ex, ptrs, opts, [&](std::size_t i, Result r) {
      arrival.push_back(i);
      if (!results.emplace(i, std::move(r)).second) ++duplicates;
    }, stop);
    seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  const Result& at(std::size_t i) const { return results.at(i); }
};

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

TEST(WorkerPool, EveryCaseGetsExactlyOneResult) {
  FakeExecutor ex;
  PoolRun run(std::vector<std::string>(200, "ok"));
  PoolOptions opts;
  opts.workers = 2;
  run.go(ex, opts);
  ASSERT_EQ(run.results.size(), 200u);
  EXPECT_EQ(run.duplicates, 0u);
  for (std::size_t i = 0; i < 200; ++i) {
    EXPECT_EQ(run.at(i).case_id, run.cases[i].id);
    EXPECT_EQ(run.at(i).stage, Stage::PASSED);
  }
  EXPECT_EQ(run.stats.workers_started, 2u);
  EXPECT_EQ(run.stats.crashes, 0u);
  EXPECT_EQ(run.stats.parent_threads, 1);  // nothing here started threads that forked workers would miss
}

TEST(WorkerPool, AWorkersStartIsMeasuredAndNotChargedToItsFirstCase) {
  FakeExecutor ex;
  ex.start_seconds = 1.5;
  PoolRun run({"ok", "ok", "ok", "ok"});
  PoolOptions opts;
  opts.workers = 2;
  opts.default_timeout_s = 1;  // shorter than the start: charged to the first case, it would time out
  run.go(ex, opts);
  ASSERT_EQ(run.results.size(), 4u);
  for (std::size_t i = 0; i < 4; ++i) EXPECT_EQ(run.at(i).stage, Stage::PASSED) << run.at(i).message;
  ASSERT_EQ(run.stats.worker_start_s.size(), 2u);
  for (double s : run.stats.worker_start_s) EXPECT_GE(s, 1.5);
}

TEST(WorkerPool, AStartThatOverrunsItsBudgetEndsTheCasesWithAnError) {
  FakeExecutor ex;
  ex.start_seconds = 30;
  PoolRun run({"ok", "ok", "ok"});
  PoolOptions opts;
  opts.workers = 1;
  opts.default_timeout_s = 0.5;
  opts.min_start_budget_s = 1;
  run.go(ex, opts);
  ASSERT_EQ(run.results.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(run.at(i).stage, Stage::CRASHED);
    EXPECT_TRUE(has(run.at(i).message, "did not finish starting")) << run.at(i).message;
  }
  EXPECT_TRUE(run.stats.worker_start_s.empty());
  EXPECT_LT(run.seconds, 20);  // killed at its budget, not waited for
}

TEST(WorkerPool, CrashesStayWithTheirCaseAndLaterCasesStillRun) {
  FakeExecutor ex;
  PoolRun run({"ok", "segv", "ok", "ok", "abort", "ok", "exit:7", "ok", "ok"});
  PoolOptions opts;
  run.go(ex, opts);
  ASSERT_EQ(run.results.size(), run.cases.size());
  for (std::size_t i : {0, 2, 3, 5, 7, 8}) EXPECT_EQ(run.at(i).stage, Stage::PASSED) << i;
  EXPECT_EQ(run.at(1).stage, Stage::CRASHED);
  EXPECT_EQ(run.at(1).outcome, Outcome::Failed);
  EXPECT_EQ(run.at(1).message, "worker died with SIGSEGV while running fake::1_segv");
  EXPECT_EQ(run.at(4).stage, Stage::CRASHED);
  EXPECT_TRUE(has(run.at(4).message, "SIGABRT")) << run.at(4).message;
  EXPECT_TRUE(has(run.at(4).message, "fake::4_abort")) << run.at(4).message;
  EXPECT_EQ(run.at(6).stage, Stage::CRASHED);
  EXPECT_TRUE(has(run.at(6).message, "exited with status 7")) << run.at(6).message;
  EXPECT_EQ(run.stats.crashes, 3u);
  EXPECT_EQ(run.stats.workers_started, 4u);  // the first one and a replacement after each death
}

TEST(WorkerPool, HangsTimeOutAndTheRunGoesOn) {
  FakeExecutor ex;
  PoolRun run({"ok", "hang", "ok", "sleep:0.05", "ok"});
  run.cases[1].timeout_s = 0.4;
  PoolOptions opts;
  opts.workers = 2;
  run.go(ex, opts);
  ASSERT_EQ(run.results.size(), 5u);
  EXPECT_EQ(run.at(1).stage, Stage::TIMEOUT);
  EXPECT_EQ(run.at(1).outcome, Outcome::Failed);
  EXPECT_TRUE(has(run.at(1).message, "timeout of 0.4 s")) << run.at(1).message;
  for (std::size_t i : {0, 2, 3, 4}) EXPECT_EQ(run.at(i).stage, Stage::PASSED) << i;
  EXPECT_EQ(run.stats.timeouts, 1u);
  EXPECT_LT(run.seconds, 10.0);
}

TEST(WorkerPool, DefaultTimeoutAppliesWhenTheCaseHasNone) {
  FakeExecutor ex;
  PoolRun run({"sleep:5", "ok"});
  PoolOptions opts;
  opts.default_timeout_s = 0.3;
  run.go(ex, opts);
  EXPECT_EQ(run.at(0).stage, Stage::TIMEOUT);
  EXPECT_EQ(run.at(1).stage, Stage::PASSED);
  EXPECT_LT(run.seconds, 4.0);
}

TEST(WorkerPool, OutputIsCapturedPerCase) {
  FakeExecutor ex;
  PoolRun run({"stderr:alpha", "ok", "stdout:beta", "stderr:gamma", "say-then-segv:last words", "ok"});
  PoolOptions opts;
  run.go(ex, opts);
  ASSERT_EQ(run.results.size(), 6u);
  EXPECT_EQ(run.at(0).captured_stderr, "alpha\n");
  EXPECT_EQ(run.at(1).captured_stderr, "");
  EXPECT_EQ(run.at(2).captured_stderr, "beta\n");
  EXPECT_EQ(run.at(3).captured_stderr, "gamma\n");
  EXPECT_EQ(run.at(4).stage, Stage::CRASHED);
  EXPECT_EQ(run.at(4).captured_stderr, "last words\n");  // what a dying backend said is kept
  EXPECT_EQ(run.at(5).captured_stderr, "");
}

TEST(WorkerPool, LongOutputKeepsHeadAndTailWithinTheBound) {
  FakeExecutor ex;
  PoolRun run({"spew:1000000", "stderr:small"});
  PoolOptions opts;
  opts.max_stderr_bytes = 4096;
  run.go(ex, opts);
  const std::string& out = run.at(0).captured_stderr;
  EXPECT_LE(out.size(), 4096u + 100u);
  EXPECT_EQ(out.front(), '<');
  EXPECT_TRUE(has(out, "bytes of output omitted")) << out.substr(0, 200);
  EXPECT_EQ(out.substr(out.size() - 7), "THE-END");
  EXPECT_EQ(run.at(1).captured_stderr, "small\n");
}

TEST(WorkerPool, EscapedExceptionsBecomeCrashResults) {
  FakeExecutor ex;
  PoolRun run({"throw:kaboom", "badalloc", "ok"});
  PoolOptions opts;
  run.go(ex, opts);
  EXPECT_EQ(run.at(0).stage, Stage::CRASHED);
  EXPECT_TRUE(has(run.at(0).message, "kaboom")) << run.at(0).message;
  EXPECT_TRUE(has(run.at(1).message, "out of memory")) << run.at(1).message;
  EXPECT_EQ(run.at(2).stage, Stage::PASSED);
  EXPECT_EQ(run.stats.workers_started, 1u);  // caught in the worker: no process was lost
}

TEST(WorkerPool, StopRequestLeavesUnstartedCasesWithoutResults) {
  FakeExecutor ex;
  PoolRun run(std::vector<std::string>(400, "sleep:0.002"));
  PoolOptions opts;
  opts.workers = 2;
  run.go(ex, opts, [&] { return run.results.size() >= 10; });
  EXPECT_GE(run.results.size(), 10u);
  EXPECT_LT(run.results.size(), 400u);
  EXPECT_EQ(run.duplicates, 0u);
  for (const auto& [i, r] : run.results) EXPECT_EQ(r.stage, Stage::PASSED) << i;
}

TEST(WorkerPool, EachWorkerDrivesItsDeviceIndex) {
  FakeExecutor ex;
  PoolRun run(std::vector<std::string>(40, "device"));
  for (auto& c : run.cases) c.name = "device";
  PoolOptions opts;
  opts.workers = 1;
  opts.device_indices = {0, 1};
  run.go(ex, opts);
  ASSERT_EQ(run.results.size(), 40u);
  std::set<std::string> seen;
  for (const auto& [i, r] : run.results) seen.insert(r.message);
  // Two workers (one per index), each prepared exactly once in its own process.
  EXPECT_EQ(seen, (std::set<std::string>{"device 0 prepared 1", "device 1 prepared 1"}));
}

TEST(WorkerPool, AWorkerThatCannotStartFailsTheCasesClearly) {
  FakeExecutor ex;
  ex.refuse_start = true;
  PoolRun run({"ok", "ok", "ok"});
  PoolOptions opts;
  opts.device_indices = {3};
  run.go(ex, opts);
  ASSERT_EQ(run.results.size(), 3u);
  for (const auto& [i, r] : run.results) {
    EXPECT_EQ(r.stage, Stage::CRASHED);
    EXPECT_TRUE(has(r.message, "worker could not start: device 3 is unavailable")) << r.message;
    EXPECT_TRUE(has(r.message, "fake device init failed")) << r.message;
  }
  EXPECT_EQ(run.stats.workers_started, 1u);  // no respawn loop
}

TEST(WorkerPool, NoIsolationRunsInThisProcessInOrder) {
  FakeExecutor ex;
  PoolRun run({"device", "stderr:visible", "device"});
  PoolOptions opts;
  opts.isolation = false;
  opts.device_indices = {2};
  run.go(ex, opts);
  ASSERT_EQ(run.results.size(), 3u);
  EXPECT_EQ(run.at(0).message, "device 2 prepared 1");
  EXPECT_EQ(run.at(2).message, "device 2 prepared 1");
  EXPECT_EQ(run.stats.workers_started, 0u);
}

TEST(WorkerPool, AThrowingResultSinkLeavesNoWorkerBehind) {
  FakeExecutor ex;
  PoolRun run(std::vector<std::string>(50, "ok"));
  std::vector<const Case*> ptrs;
  for (const auto& c : run.cases) ptrs.push_back(&c);
  PoolOptions opts;
  opts.workers = 2;
  EXPECT_THROW(run_cases(ex, ptrs, opts, [](std::size_t, Result) { throw std::runtime_error("disk full"); }),
               std::runtime_error);
  // Every worker was reaped: there is no child left to wait for.
  EXPECT_EQ(waitpid(-1, nullptr, WNOHANG), -1);
  EXPECT_EQ(errno, ECHILD);
}

TEST(WorkerPool, ParentSignalDispositionsAreRestored) {
  struct sigaction before {};
  sigaction(SIGPIPE, nullptr, &before);
  FakeExecutor ex;
  PoolRun run({"ok"});
  run.go(ex, PoolOptions{});
  struct sigaction after {};
  sigaction(SIGPIPE, nullptr, &after);
  EXPECT_EQ(before.sa_handler, after.sa_handler);
}

TEST(WorkerPool, AfterResultsFollowsEveryBatchOfResults) {
  for (bool isolation : {true, false}) {
    FakeExecutor ex;
    PoolRun run({"ok", "ok", "segv", "ok", "sleep:0.05", "ok", "ok"});
    std::vector<const Case*> ptrs;
    for (const auto& c : run.cases) ptrs.push_back(&c);
    PoolOptions opts;
    opts.workers = 2;
    opts.isolation = isolation;
    std::size_t results = 0, results_at_last_call = 0, calls = 0;
    std::vector<std::size_t> seen;  // results delivered at each call: never fewer than at the one before
    opts.after_results = [&] {
      ++calls;
      seen.push_back(results);
      results_at_last_call = results;
    };
    if (!isolation) {
      run.cases[2].name = "ok";  // a crash in this process would end the test
    }
    run_cases(ex, ptrs, opts, [&](std::size_t, Result) { ++results; });
    EXPECT_EQ(results, 7u);
    EXPECT_GE(calls, 1u);
    // The hook runs after the last result too: nothing recorded is left waiting for a call that never comes.
    EXPECT_EQ(results_at_last_call, 7u) << "isolation " << isolation;
    EXPECT_TRUE(std::is_sorted(seen.begin(), seen.end()));
    if (!isolation) {
      EXPECT_EQ(calls, 7u);  // one batch per case in this process
    }
  }
}

// How fast tiny cases go is scripts/bench.sh's to measure (a timed unit test would fail on a busy machine); what a
// test can hold is that thousands of them are served by the workers started at first, one result each.
TEST(WorkerPool, ManyTinyCasesGetOneResultEachFromTheWorkersStartedFirst) {
  for (int workers : {1, 2}) {
    FakeExecutor ex;
    const std::size_t n = 20000;
    PoolRun run(std::vector<std::string>(n, "ok"));
    PoolOptions opts;
    opts.workers = workers;
    run.go(ex, opts);
    ASSERT_EQ(run.results.size(), n) << workers << " worker(s)";
    EXPECT_EQ(run.duplicates, 0u);
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < n; ++i)
      if (run.at(i).case_id != run.cases[i].id || run.at(i).stage != Stage::PASSED) ++wrong;
    EXPECT_EQ(wrong, 0u) << "results not for their own case, or not passed";
    if (workers == 1) {  // one worker runs the cases in the order they were given
      std::vector<std::size_t> given(n);
      for (std::size_t i = 0; i < n; ++i) given[i] = i;
      EXPECT_TRUE(run.arrival == given);
    }
    EXPECT_EQ(run.stats.cases_run, n);
    EXPECT_EQ(run.stats.workers_started, static_cast<std::size_t>(workers));
    EXPECT_EQ(run.stats.worker_start_s.size(), static_cast<std::size_t>(workers));
  }
}

}  // namespace
}  // namespace opcheck
