// A worker's side of the worker pool: its start, its loop over requests, each case run guarded.

#include "runner/worker_process.h"

#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <new>
#include <string>

#include "common/stop_request.h"
#include "runner/result_wire.h"
#include "runner/worker_protocol.h"

namespace opcheck::workers {

using Clock = std::chrono::steady_clock;

Result failure(const Case& c, Stage stage, std::string message, std::string captured) {
  Result r;
  r.case_id = c.id;
  r.stage = stage;
  r.outcome = stage_outcome(stage);
  r.message = std::move(message);
  r.captured_stderr = std::move(captured);
  return r;
}

/// What a case was doing in `phase`, for the message of a worker lost in it.
const char* doing_in(CasePhase phase) {
  switch (phase) {
    case CasePhase::Inputs: return "building the inputs of";
    case CasePhase::Reference: return "computing the CPU reference of";
    case CasePhase::Compare: return "comparing the outputs of";
    default: return "running";
  }
}

/// Runs one case in the current process; an exception the Executor let escape becomes a CRASHED result.
Result run_guarded(Executor& ex, const Case& c) {
  try {
    Result r = ex.run(c);
    if (r.case_id.empty()) r.case_id = c.id;
    return r;
  } catch (const std::bad_alloc&) {
    return failure(c, Stage::CRASHED, "out of memory (std::bad_alloc escaped the executor) while running " + c.id);
  } catch (const std::exception& e) {
    return failure(c, Stage::CRASHED, std::string("uncaught exception while running ") + c.id + ": " + e.what());
  } catch (...) {
    return failure(c, Stage::CRASHED, "uncaught non-standard exception while running " + c.id);
  }
}

/// A worker's start, in a forked worker or in this process (--no-isolation) alike.
WorkerStart start_worker(Executor& ex, int device_index) {
  WorkerStart start;
  const auto t0 = Clock::now();
  try {
    start.ready = ex.prepare_worker(device_index, &start.error);
  } catch (const std::exception& e) {
    start.error = e.what();
  }
  start.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  return start;
}

/// The body of a worker process (cases == nullptr: they come in full with each request). Never returns.
[[noreturn]] void worker_main(Executor& ex, const std::vector<const Case*>* cases, int request_fd, int result_fd,
                              int capture_fd, int device_index, std::size_t max_output, pid_t parent,
                              CaseClock* clock) {
  // Die with the parent, and leave Ctrl-C and a CI runner's SIGTERM (sent to the whole process group) to it: the
  // parent stops handing out cases and lets the running ones finish, so an interrupted run reports what it ran
  // truthfully instead of calling the device crashed.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(1);
  ::prctl(PR_SET_NAME, "opcheck-worker");
  for (const int sig : kStopSignals) ::signal(sig, SIG_IGN);
  // A Python host's faulthandler takes SIGUSR2 (its stacks before a timeout's SIGKILL); a worker forked from a
  // Python device's start-up process has it already, any other ignores it until its host registers it.
  struct sigaction usr2 {};
  if (::sigaction(SIGUSR2, nullptr, &usr2) != 0 || usr2.sa_handler == SIG_DFL) ::signal(SIGUSR2, SIG_IGN);
  ::signal(SIGPIPE, SIG_DFL);
  ::signal(SIGCHLD, SIG_DFL);
  // Out of memory, the kernel ends a worker (one case, reported) rather than the run that holds the reports.
  if (FILE* adj = std::fopen("/proc/self/oom_score_adj", "w")) {
    std::fputs("1000", adj);
    std::fclose(adj);
  }
  ::dup2(capture_fd, STDOUT_FILENO);
  ::dup2(capture_fd, STDERR_FILENO);

  std::vector<std::uint8_t> out;
  out.reserve(4096);

  reset_capture(capture_fd);
  WorkerStart start = start_worker(ex, device_index);
  const std::string start_output = take_capture(capture_fd, max_output);
  if (!start.ready) {
    if (!start_output.empty()) start.error += "\n" + start_output;
    send_frame(result_fd, out, FrameKind::StartFailed, 0,
               [&](std::vector<std::uint8_t>& b) { b.insert(b.end(), start.error.begin(), start.error.end()); });
    ::_exit(3);
  }
  // The parent starts the first case's clock on this frame: a worker's own start (a Python device's interpreter and
  // imports) is not charged to the case it runs first.
  if (!send_frame(result_fd, out, FrameKind::Ready, 0, [&](std::vector<std::uint8_t>& b) {
        const auto* p = reinterpret_cast<const std::uint8_t*>(&start.seconds);
        b.insert(b.end(), p, p + sizeof start.seconds);
      }))
    ::_exit(1);

  if (clock) ex.set_case_clock(clock);

  RequestReader requests(cases);
  for (;;) {
    const Case* c = nullptr;
    std::uint64_t position = 0;
    if (!requests.next(request_fd, c, position)) ::_exit(requests.malformed ? 2 : 0);  // closed pipe: no more work
    if (clock) {
      clock->own_since_ns.store(0, std::memory_order_relaxed);
      clock->own_ns.store(0, std::memory_order_relaxed);
      clock->phase.store(0, std::memory_order_relaxed);
      clock->case_tag.store(position + 1, std::memory_order_release);
    }
    Result result = run_guarded(ex, *c);
    result.captured_stderr += take_capture(capture_fd, max_output);
    if (!send_frame(result_fd, out, FrameKind::Result, position,
                    [&](std::vector<std::uint8_t>& b) { encode_result(result, b); }))
      ::_exit(1);  // the parent is gone
  }
}

/// A worker from a Python device's start-up process (Executor::start_worker): it shares no memory with the pool,
/// so cases come in full and its case clock is mapped from a descriptor.
[[noreturn]] void startup_worker_main(Executor& ex, const WorkerChannels& ch) {
  // Until the start-up process's middle process has ended, this one is not yet the pool's child.
  for (int waited_ms = 0; ::getppid() != ch.parent && waited_ms < 5000; ++waited_ms) ::usleep(1000);
  CaseClock* clock = nullptr;
  if (ch.clock_fd >= 0) {
    void* shared = ::mmap(nullptr, sizeof(CaseClock), PROT_READ | PROT_WRITE, MAP_SHARED, ch.clock_fd, 0);
    if (shared != MAP_FAILED) clock = static_cast<CaseClock*>(shared);
  }
  worker_main(ex, nullptr, ch.request_fd, ch.result_fd, ch.capture_fd, ch.device_index,
              static_cast<std::size_t>(ch.max_output), ch.parent, clock);
}

}  // namespace opcheck::workers
