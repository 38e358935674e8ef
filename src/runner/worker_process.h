// A worker's side of the worker pool (worker_pool.cpp): its start, its loop over the cases it is sent, one case
// run with what it lets escape caught, and the result of a case that could not run.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <string>
#include <vector>

#include "opcheck/case.h"
#include "opcheck/exec_api.h"
#include "opcheck/result.h"

namespace opcheck::workers {

/// A result of `stage` for a case that ran no further, with `message` and what it printed.
Result failure(const Case& c, Stage stage, std::string message, std::string captured = {});
/// What a case was doing in `phase`, for the message of a worker lost in it.
const char* doing_in(CasePhase phase);

/// Runs one case in the current process; an exception the Executor let escape becomes a CRASHED result.
Result run_guarded(Executor& ex, const Case& c);

/// How a worker's start (Executor::prepare_worker: device set-up, a Python device's interpreter and imports) went.
struct WorkerStart {
  bool ready = false;
  std::string error;   // why it is not ready
  double seconds = 0;  // what it took
};

/// A worker's start, in a forked worker or in this process (--no-isolation) alike.
WorkerStart start_worker(Executor& ex, int device_index);

/// The body of a worker process (cases == nullptr: they come in full with each request). Never returns.
[[noreturn]] void worker_main(Executor& ex, const std::vector<const Case*>* cases, int request_fd, int result_fd,
                              int capture_fd, int device_index, std::size_t max_output, pid_t parent,
                              CaseClock* clock);

/// A worker from a Python device's start-up process (Executor::start_worker): it shares no memory with the pool,
/// so cases come in full and its case clock is mapped from a descriptor.
[[noreturn]] void startup_worker_main(Executor& ex, const WorkerChannels& ch);

}  // namespace opcheck::workers
