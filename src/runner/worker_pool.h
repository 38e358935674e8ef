// Crash and hang isolation: cases run in persistent worker processes forked from the process that holds the Executor.
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

#include "opcheck/case.h"
#include "opcheck/exec_api.h"
#include "opcheck/result.h"

namespace opcheck {

/// How cases are spread over worker processes.
struct PoolOptions {
  int workers = 1;                   // worker processes; raised to device_indices.size() when that is larger
  std::vector<int> device_indices;   // worker w drives device_indices[w % size]; empty = the configured device
  double default_timeout_s = 300;    // per case unless Case::timeout_s says otherwise; <= 0 = no limit
  /// A worker's start (Executor::prepare_worker: device set-up, a Python device's interpreter and imports) is not
  /// charged to a case: it may take the case timeout, and never less than this. One that overruns it ends the run's
  /// cases with an error, since a fresh worker would overrun it again.
  double min_start_budget_s = 300;
  bool isolation = true;             // false: run in this process (debugging; no timeout, no stderr capture)
  std::size_t max_stderr_bytes = 64 * 1024;  // per case; longer output keeps its head and tail
  /// Called after each batch of on_result calls (the results one read from the workers brought): where the
  /// caller makes what it recorded durable, once per batch rather than once per case.
  std::function<void()> after_results;
  /// Asked while the pool is stopping (should_stop() turned true): true ends the cases still running at once (their
  /// workers are killed; those cases get no result, like cases never started). A stop signal says so; without it
  /// running cases finish or reach their timeout.
  std::function<bool()> abort_running;
};

/// Figures about one run_cases call, for logs and the overhead benchmark.
struct PoolStats {
  std::size_t cases_run = 0;
  std::size_t workers_started = 0;   // including replacements
  std::size_t crashes = 0;
  std::size_t timeouts = 0;
  int parent_threads = 0;            // threads of this process when it first forked; > 1 risks hung workers
  std::vector<double> worker_start_s;  // each started worker's prepare_worker time (device set-up, Python imports)
  double cases_wall_s = 0;  // from the first worker ready to the last result: the cases' own wall time
};

/// Runs cases[i] for each i, calling on_result(i, Result) in this process as results arrive (any order).
///
/// With isolation the Executor is used only in forked workers: each worker inherits `ex` (and libtorch) from this
/// process, calls ex.prepare_worker(device index) once, then runs the case indices it is sent. A worker that dies
/// (signal, abort, exit, out of memory) or exceeds the case's timeout (it is killed with SIGKILL) yields a CRASHED
/// or TIMEOUT result for the case it was running; a fresh worker takes over the rest. Each case's stderr (and
/// stdout) is captured into Result::captured_stderr. This process must not have started thread pools (OpenMP,
/// libtorch intra-op) before calling: a forked child inherits none of their threads.
///
/// When should_stop() turns true no new case starts; cases already running finish and are reported, cases not
/// started get no result.
PoolStats run_cases(Executor& ex, const std::vector<const Case*>& cases, const PoolOptions& opts,
                    const std::function<void(std::size_t, Result)>& on_result,
                    const std::function<bool()>& should_stop = {});

/// The name of a signal for messages ("SIGSEGV"), or "signal N".
std::string signal_name(int sig);

}  // namespace opcheck
