// The worker pool's supervision: spawning workers (forked, or from a start-up process), handing them cases,
// reading their frames, timeouts, deaths and restarts, and --no-isolation's run in this process. The wire is in
// worker_protocol.h, a worker's own side in worker_process.h.

#include "runner/worker_pool.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <deque>
#include <optional>
#include <string>

#include "runner/result_wire.h"
#include "runner/worker_process.h"
#include "runner/worker_protocol.h"

namespace opcheck {
namespace {

using Clock = std::chrono::steady_clock;

using workers::doing_in;
using workers::failure;
using workers::FrameHeader;
using workers::FrameKind;
using workers::make_capture_file;
using workers::read_capture;
using workers::run_guarded;
using workers::start_worker;
using workers::startup_worker_main;
using workers::WorkerStart;
using workers::worker_main;
using workers::write_all;

/// The result of a case whose worker died (not a timeout): lost while opcheck built its inputs or computed its
/// reference, it is opcheck's failure of that phase, not a crash of the device. A SIGKILL nobody here sent is most
/// often the out-of-memory killer (the kernel's, or a cgroup's limit), and the message says so.
Result lost_worker_result(const Case& c, const std::string& how, bool killed_from_outside, CasePhase phase,
                          std::string captured) {
  const Stage stage = phase == CasePhase::Inputs      ? Stage::FAILED_INPUT
                      : phase == CasePhase::Reference ? Stage::FAILED_REFERENCE
                                                      : Stage::CRASHED;
  std::string message = "worker " + how + " while " + doing_in(phase) + " " + c.id;
  if (killed_from_outside && stage != Stage::CRASHED)
    message += ": killed: out of memory? Fix: give the run more memory, or skip cases this large with "
               "--max-case-bytes";
  Result r = failure(c, stage, std::move(message), std::move(captured));
  r.phase = phase;
  return r;
}

int thread_count() {
  DIR* d = ::opendir("/proc/self/task");
  if (d == nullptr) return 0;
  int n = 0;
  while (const dirent* e = ::readdir(d))
    if (e->d_name[0] != '.') ++n;
  ::closedir(d);
  return n;
}

std::string describe_exit(int status, bool killed_for_timeout) {
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    std::string why = "died with " + signal_name(sig);
    if (sig == SIGKILL && !killed_for_timeout) why += " (killed from outside; often the kernel's out-of-memory killer)";
    if (sig == SIGABRT) why += " (abort: a failed assertion or std::terminate)";
    return why;
  }
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  return "ended (wait status " + std::to_string(status) + ")";
}

/// One worker process and what it has been sent.
struct Worker {
  pid_t pid = -1;
  int request_fd = -1;   // parent writes case positions
  int result_fd = -1;    // parent reads frames (non-blocking)
  int capture_fd = -1;   // the worker's stdout/stderr file, read here after a crash
  int device_index = -1;
  std::deque<std::size_t> outstanding;  // sent, no result yet; the front one is running
  Clock::time_point front_started;
  Clock::time_point spawned;
  bool ready = false;          // sent its Ready frame: prepare_worker is done and cases run
  CaseClock* clock = nullptr;  // shared with the worker process: its own (not the device's) time per case
  int clock_fd = -1;           // the clock's memory, for workers from a start-up process (they map it themselves)
  std::vector<std::uint8_t> inbox;
  bool alive() const { return pid > 0; }
};

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

/// Keeps SIGPIPE ignored (a write to a dead worker must fail, not kill us) and SIGCHLD reapable while a run lasts.
class SignalScope {
 public:
  SignalScope() {
    struct sigaction ign {};
    ign.sa_handler = SIG_IGN;
    sigemptyset(&ign.sa_mask);
    ::sigaction(SIGPIPE, &ign, &old_pipe_);
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    ::sigaction(SIGCHLD, &dfl, &old_chld_);
  }
  ~SignalScope() {
    ::sigaction(SIGPIPE, &old_pipe_, nullptr);
    ::sigaction(SIGCHLD, &old_chld_, nullptr);
  }

 private:
  struct sigaction old_pipe_ {};
  struct sigaction old_chld_ {};
};

class Pool {
 public:
  Pool(Executor& ex, const std::vector<const Case*>& cases, const PoolOptions& opts,
       const std::function<void(std::size_t, Result)>& on_result, const std::function<bool()>& should_stop)
      : ex_(ex), cases_(cases), opts_(opts), on_result_(on_result), should_stop_(should_stop) {}
  Pool(const Pool&) = delete;
  Pool& operator=(const Pool&) = delete;
  // Reached with live workers only when on_result threw: no worker may outlive the run.
  ~Pool() {
    for (auto& w : workers_) kill_worker(w);
    for (auto& w : workers_) {
      if (w.clock) ::munmap(w.clock, sizeof(CaseClock));
      close_fd(w.clock_fd);
    }
  }

  PoolStats run() {
    for (std::size_t i = 0; i < cases_.size(); ++i) pending_.push_back(i);
    const std::size_t n_devices = opts_.device_indices.size();
    std::size_t n = static_cast<std::size_t>(std::max(1, opts_.workers));
    n = std::max(n, n_devices);
    n = std::min(n, std::max<std::size_t>(1, cases_.size()));
    workers_.resize(n);
    from_startup_ = ex_.starts_workers();
    for (std::size_t w = 0; w < n; ++w) {
      workers_[w].device_index = n_devices ? opts_.device_indices[w % n_devices] : -1;
      make_clock(workers_[w]);
    }
    if (cases_.empty()) return stats_;
    stats_.parent_threads = thread_count();
    if (stats_.parent_threads > 1)
      // An OpenMP pool that ran in this process leaves its children hanging at their first parallel region.
      std::fprintf(stderr,
                   "opcheck: warning: forking workers from a process with %d threads; a worker may hang in a thread "
                   "pool it inherited without its threads (it would end as TIMEOUT)\n",
                   stats_.parent_threads);
    for (auto& w : workers_) spawn(w);
    if (!start_error_.empty()) fail_everything_left();  // no worker started: every case says why

    while (busy()) {
      if (!stopping_ && should_stop_ && should_stop_()) stopping_ = true;
      if (stopping_ && opts_.abort_running && opts_.abort_running()) {
        // Cases cut short say nothing about the device: they get no result, and the run reports them as not run.
        for (auto& w : workers_) {
          w.outstanding.clear();
          kill_worker(w);
        }
        break;
      }
      if (!stopping_ && start_error_.empty()) dispatch();
      if (!busy()) break;
      wait_and_collect();
      enforce_timeouts();
      if (!start_error_.empty()) fail_everything_left();
      if (opts_.after_results) opts_.after_results();
    }
    for (auto& w : workers_) retire(w);
    if (first_ready_ && last_result_ > *first_ready_)
      stats_.cases_wall_s = std::chrono::duration<double>(last_result_ - *first_ready_).count();
    return stats_;
  }

 private:
  bool busy() const {
    for (const auto& w : workers_)
      if (!w.outstanding.empty()) return true;
    return !stopping_ && start_error_.empty() && !pending_.empty();
  }

  double timeout_for(std::size_t position) const {
    const Case& c = *cases_[position];
    return c.timeout_s ? *c.timeout_s : opts_.default_timeout_s;
  }

  /// Seconds of the worker's running case charged to its timeout: the time since it started, less opcheck's own work
  /// the worker reported (inputs, digests, comparison), which is bounded by the bytes it handles. At most 9 times the
  /// limit is excused, so a case ends within 10 times its timeout whatever happens.
  double charged_s(const Worker& w, Clock::time_point now, double limit) const {
    if (!w.ready) return 0;  // still starting: enforce_timeouts gives the start its own budget
    const double elapsed = std::chrono::duration<double>(now - w.front_started).count();
    if (!w.clock || w.clock->case_tag.load(std::memory_order_acquire) != w.outstanding.front() + 1) return elapsed;
    std::int64_t own = w.clock->own_ns.load(std::memory_order_acquire);
    const std::int64_t since = w.clock->own_since_ns.load(std::memory_order_acquire);
    const std::int64_t now_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(now.time_since_epoch()).count();
    if (since > 0 && now_ns > since) own += now_ns - since;
    return elapsed - std::min(static_cast<double>(own) * 1e-9, 9 * limit);
  }

  /// How many cases a worker may have queued: deep for tiny cases (one pipe round trip per case would dominate),
  /// shallow for slow ones (so the last cases do not wait behind a busy worker while another idles).
  std::size_t depth() const {
    if (mean_case_us_ < 0) return 2;
    if (mean_case_us_ < 200) return 64;
    if (mean_case_us_ < 5000) return 4;
    return 1;
  }

  void spawn(Worker& w) {
    int req[2], res[2];
    if (::pipe2(req, O_CLOEXEC) != 0) return spawn_failed(w, "pipe");
    if (::pipe2(res, O_CLOEXEC) != 0) {
      ::close(req[0]);
      ::close(req[1]);
      return spawn_failed(w, "pipe");
    }
    const int cap = make_capture_file();
    if (from_startup_) return spawn_from_startup(w, req, res, cap);
    // Unflushed output of this process would otherwise be written again by the child.
    std::fflush(stdout);
    std::fflush(stderr);
    const pid_t parent = ::getpid();
    const pid_t pid = ::fork();
    if (pid < 0) {
      for (int fd : {req[0], req[1], res[0], res[1], cap}) if (fd >= 0) ::close(fd);
      return spawn_failed(w, "fork");
    }
    if (pid == 0) {
      // Another worker's pipe held open here would hide that worker's death (no EOF) and its exit (no EOF on
      // its request pipe).
      for (auto& other : workers_) {
        if (other.request_fd >= 0) ::close(other.request_fd);
        if (other.result_fd >= 0) ::close(other.result_fd);
        if (other.capture_fd >= 0) ::close(other.capture_fd);
      }
      ::close(req[1]);
      ::close(res[0]);
      worker_main(ex_, &cases_, req[0], res[1], cap, w.device_index, opts_.max_stderr_bytes, parent, w.clock);
    }
    adopt(w, pid, req, res, cap);
  }

  /// One clock per worker slot, shared with every process that fills the slot; without it all time is charged. A
  /// worker from a start-up process was not forked from here, so it maps the clock from a descriptor.
  void make_clock(Worker& w) {
    int fd = -1;
    if (from_startup_) {
      fd = ::memfd_create("opcheck-case-clock", MFD_CLOEXEC);
      if (fd < 0 || ::ftruncate(fd, sizeof(CaseClock)) != 0) return close_fd(fd);
    }
    void* shared = ::mmap(nullptr, sizeof(CaseClock), PROT_READ | PROT_WRITE,
                          fd >= 0 ? MAP_SHARED : MAP_SHARED | MAP_ANONYMOUS, fd, 0);
    if (shared == MAP_FAILED) return close_fd(fd);
    w.clock = new (shared) CaseClock();
    w.clock_fd = fd;
  }

  /// Asks the start-up process (Executor::start_worker) for a worker, handing it its ends of the pipes.
  void spawn_from_startup(Worker& w, int req[2], int res[2], int cap) {
    // Cases travel in full on the request pipe: a larger pipe lets more of them wait for the worker (dispatch).
    ::fcntl(req[1], F_SETPIPE_SZ, 1 << 20);
    const int size = ::fcntl(req[1], F_GETPIPE_SZ);
    request_pipe_bytes_ = size > 0 ? static_cast<std::size_t>(size) : 65536;
    WorkerChannels ch;
    ch.request_fd = req[0];
    ch.result_fd = res[1];
    ch.capture_fd = cap;
    ch.clock_fd = w.clock_fd;
    ch.device_index = w.device_index;
    ch.max_output = opts_.max_stderr_bytes;
    ch.parent = static_cast<int>(::getpid());
    std::string error;
    const int pid = ex_.start_worker(&startup_worker_main, ch, &error);
    if (pid < 0) {
      for (int fd : {req[0], req[1], res[0], res[1], cap}) ::close(fd);
      start_error_ = "cannot start a worker from the device's start-up process: " + error;
      return;
    }
    adopt(w, pid, req, res, cap);
  }

  /// The pool's side of a started worker.
  void adopt(Worker& w, int pid, int req[2], int res[2], int cap) {
    ::close(req[0]);
    ::close(res[1]);
    ::fcntl(res[0], F_SETFL, ::fcntl(res[0], F_GETFL) | O_NONBLOCK);
    w.pid = pid;
    w.request_fd = req[1];
    w.result_fd = res[0];
    w.capture_fd = cap;
    w.inbox.clear();
    w.outstanding.clear();
    w.ready = false;
    w.spawned = Clock::now();
    ++stats_.workers_started;
  }

  void spawn_failed(Worker& w, const char* what) {
    start_error_ = std::string("cannot start a worker process (") + what + ": " + std::strerror(errno) + ")";
  }

  void dispatch() {
    const std::size_t limit = depth();
    for (auto& w : workers_) {
      if (!w.alive() || pending_.empty() || w.outstanding.size() >= limit) continue;
      std::vector<std::uint8_t> batch;
      while (!pending_.empty() && w.outstanding.size() < limit) {
        const std::size_t p = pending_.front();
        if (from_startup_ && !fits_request_pipe(w, p)) break;
        pending_.pop_front();
        if (w.outstanding.empty()) w.front_started = Clock::now();
        w.outstanding.push_back(p);
        append_request(p, batch);
      }
      // A failed write means the worker is gone; poll reports its end and the cases are handed on then.
      write_all(w.request_fd, batch.data(), batch.size());
    }
  }

  /// A request: the case's position, and for a worker from a start-up process the case itself.
  void append_request(std::size_t p, std::vector<std::uint8_t>& out) {
    const auto position = static_cast<std::uint64_t>(p);
    const std::size_t start = out.size();
    out.resize(start + sizeof position);
    std::memcpy(out.data() + start, &position, sizeof position);
    if (!from_startup_) return;
    const std::size_t at = out.size();
    std::uint32_t length = 0;
    out.resize(at + sizeof length);
    encode_case(*cases_[p], out);
    length = static_cast<std::uint32_t>(out.size() - at - sizeof length);
    std::memcpy(out.data() + at, &length, sizeof length);
    if (request_bytes_.size() < cases_.size()) request_bytes_.resize(cases_.size(), 0);
    request_bytes_[p] = out.size() - at + sizeof position;
  }

  /// Whether case p's request may join the ones `w` has not run yet without filling its pipe: a write that blocks
  /// while the worker waits to hand back a result would hang both. A worker with nothing queued reads at once.
  bool fits_request_pipe(const Worker& w, std::size_t p) {
    if (w.outstanding.empty()) return true;
    std::size_t queued = 0;
    for (std::size_t q : w.outstanding) queued += q < request_bytes_.size() ? request_bytes_[q] : 0;
    std::vector<std::uint8_t> probe;
    append_request(p, probe);
    return queued + probe.size() <= request_pipe_bytes_ / 2;
  }

  void wait_and_collect() {
    std::vector<pollfd> fds;
    std::vector<Worker*> owners;
    for (auto& w : workers_) {
      if (!w.alive() || w.outstanding.empty()) continue;
      fds.push_back({w.result_fd, POLLIN, 0});
      owners.push_back(&w);
    }
    if (fds.empty()) return;
    int timeout_ms = -1;
    const auto now = Clock::now();
    for (auto* w : owners) {
      const double limit = timeout_for(w->outstanding.front());
      if (limit <= 0) continue;
      const double left_s = w->ready ? limit - charged_s(*w, now, limit) : start_budget_s(limit) - starting_s(*w, now);
      const auto left = static_cast<long long>(left_s * 1000) + 1;
      timeout_ms = timeout_ms < 0 ? static_cast<int>(std::max<long long>(0, left))
                                  : std::min(timeout_ms, static_cast<int>(std::max<long long>(0, left)));
    }
    // Notice a stop request, and while stopping a request to end the running cases, within 200 ms.
    if ((should_stop_ && !stopping_) || (stopping_ && opts_.abort_running))
      timeout_ms = timeout_ms < 0 ? 200 : std::min(timeout_ms, 200);
    const int ready = ::poll(fds.data(), fds.size(), timeout_ms);
    if (ready <= 0) return;  // timeout or EINTR (a signal: the loop asks should_stop again)
    for (std::size_t k = 0; k < fds.size(); ++k)
      if (fds[k].revents != 0) drain(*owners[k]);
  }

  void drain(Worker& w) {
    std::uint8_t buf[65536];
    bool eof = false;
    for (;;) {
      ssize_t r = ::read(w.result_fd, buf, sizeof buf);
      if (r > 0) {
        w.inbox.insert(w.inbox.end(), buf, buf + r);
        continue;
      }
      if (r < 0 && errno == EINTR) continue;
      eof = r == 0;
      break;
    }
    std::size_t off = 0;
    while (w.inbox.size() - off >= sizeof(FrameHeader)) {
      FrameHeader h;
      std::memcpy(&h, w.inbox.data() + off, sizeof h);
      if (w.inbox.size() - off - sizeof h < h.length) break;
      const std::uint8_t* payload = w.inbox.data() + off + sizeof h;
      off += sizeof h + h.length;
      if (!take_frame(w, h, payload)) {
        w.inbox.clear();
        return;  // the worker was replaced
      }
    }
    w.inbox.erase(w.inbox.begin(), w.inbox.begin() + static_cast<std::ptrdiff_t>(off));
    if (eof) worker_ended(w, /*timed_out=*/false);
  }

  /// Returns false when the frame ended the worker.
  bool take_frame(Worker& w, const FrameHeader& h, const std::uint8_t* payload) {
    if (h.kind == FrameKind::StartFailed) {
      start_error_ = "worker could not start: " + std::string(reinterpret_cast<const char*>(payload), h.length);
      kill_worker(w);
      return false;
    }
    if (h.kind == FrameKind::Ready) {
      double start_s = 0;
      if (h.length != sizeof start_s) return protocol_error(w, "worker sent an unreadable start-up frame");
      std::memcpy(&start_s, payload, sizeof start_s);
      stats_.worker_start_s.push_back(start_s);
      w.ready = true;
      w.front_started = Clock::now();
      if (!first_ready_) first_ready_ = w.front_started;
      return true;
    }
    if (w.outstanding.empty() || w.outstanding.front() != h.position) {
      return protocol_error(w, "worker answered case " + std::to_string(h.position) + " out of turn");
    }
    Result r;
    std::string error;
    if (!decode_result(payload, h.length, r, error))
      return protocol_error(w, "worker sent an unreadable result: " + error);
    const auto now = Clock::now();
    const double us = std::chrono::duration<double, std::micro>(now - w.front_started).count();
    mean_case_us_ = mean_case_us_ < 0 ? us : 0.8 * mean_case_us_ + 0.2 * us;
    w.outstanding.pop_front();
    w.front_started = now;
    last_result_ = now;
    ++stats_.cases_run;
    on_result_(h.position, std::move(r));
    if (stopping_ && !w.outstanding.empty()) {
      // Queued cases have not started: drop them with the worker rather than waiting for them.
      w.outstanding.clear();
      kill_worker(w);
      return false;
    }
    return true;
  }

  bool protocol_error(Worker& w, const std::string& why) {
    if (!w.outstanding.empty()) {
      const std::size_t p = w.outstanding.front();
      w.outstanding.pop_front();
      report(p, failure(*cases_[p], Stage::CRASHED, why + " while running " + cases_[p]->id,
                        read_capture(w.capture_fd, opts_.max_stderr_bytes)));
    }
    requeue(w);
    kill_worker(w);
    respawn_if_needed(w);
    return false;
  }

  /// How long a worker may take to start when cases time out after case_limit_s (PoolOptions::min_start_budget_s).
  double start_budget_s(double case_limit_s) const { return std::max(case_limit_s, opts_.min_start_budget_s); }

  /// Seconds a worker has spent starting (prepare_worker), before its Ready frame.
  double starting_s(const Worker& w, Clock::time_point now) const {
    return std::chrono::duration<double>(now - w.spawned).count();
  }

  void enforce_timeouts() {
    const auto now = Clock::now();
    for (auto& w : workers_) {
      if (!w.alive() || w.outstanding.empty()) continue;
      const double limit = timeout_for(w.outstanding.front());
      if (limit <= 0) continue;
      if (!w.ready) {
        // A start gets its own budget: one that overruns it would overrun it again in a fresh worker, so no case
        // can run.
        const double budget = start_budget_s(limit);
        if (starting_s(w, now) < budget) continue;
        char text[32];
        std::snprintf(text, sizeof text, "%g", budget);
        start_error_ = std::string("a worker did not finish starting (device set-up and imports) within ") + text +
                       " s; killed with SIGKILL. Fix: find where the device's start hangs with --no-isolation, or "
                       "raise --timeout (a start may take as long as a case)";
        requeue(w);
        kill_worker(w);
        continue;
      }
      if (charged_s(w, now, limit) < limit) continue;
      worker_ended(w, /*timed_out=*/true);
    }
  }

  /// The worker died or overran: its running case gets a result, its queued ones go back to the queue.
  void worker_ended(Worker& w, bool timed_out) {
    if (timed_out) {
      // A Python-hosted worker writes every thread's stack to its captured output first (faulthandler).
      ::kill(w.pid, SIGUSR2);
      ::usleep(300 * 1000);
      ::kill(w.pid, SIGKILL);
    }
    int status = 0;
    pid_t r;
    do r = ::waitpid(w.pid, &status, 0);
    while (r < 0 && errno == EINTR);
    const std::string how = r == w.pid ? describe_exit(status, timed_out) : "ended (exit status unavailable)";
    if (!w.outstanding.empty()) {
      const std::size_t p = w.outstanding.front();
      w.outstanding.pop_front();
      const Case& c = *cases_[p];
      std::string captured = read_capture(w.capture_fd, opts_.max_stderr_bytes);
      const CasePhase phase = phase_of(w, p);
      if (timed_out) {
        ++stats_.timeouts;
        char limit[32];
        std::snprintf(limit, sizeof limit, "%g", timeout_for(p));
        Result res = failure(c, Stage::TIMEOUT,
                           std::string("case exceeded its timeout of ") + limit + " s; worker killed with SIGKILL" +
                               (phase == CasePhase::None ? "" : std::string(" while ") + doing_in(phase) + " the case"),
                           std::move(captured));
        res.phase = phase;
        report(p, std::move(res));
      } else {
        ++stats_.crashes;
        const bool from_outside = r == w.pid && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
        report(p, lost_worker_result(c, how, from_outside, phase, std::move(captured)));
      }
    }
    requeue(w);
    release(w);
    respawn_if_needed(w);
  }

  /// The phase the worker's clock says case `position` was in (None when the worker had not started it).
  CasePhase phase_of(const Worker& w, std::size_t position) const {
    if (!w.clock || w.clock->case_tag.load(std::memory_order_acquire) != position + 1) return CasePhase::None;
    const int phase = w.clock->phase.load(std::memory_order_acquire);
    return phase >= 0 && phase <= static_cast<int>(kLastCasePhase) ? static_cast<CasePhase>(phase) : CasePhase::None;
  }

  void report(std::size_t position, Result r) {
    last_result_ = Clock::now();
    ++stats_.cases_run;
    on_result_(position, std::move(r));
  }

  void requeue(Worker& w) {
    // Cases queued behind the one that was running never started; they keep their place at the head of the line.
    for (auto it = w.outstanding.rbegin(); it != w.outstanding.rend(); ++it) pending_.push_front(*it);
    w.outstanding.clear();
  }

  void respawn_if_needed(Worker& w) {
    if (!stopping_ && start_error_.empty() && !pending_.empty()) spawn(w);
  }

  void kill_worker(Worker& w) {
    if (!w.alive()) return;
    ::kill(w.pid, SIGKILL);
    int status;
    while (::waitpid(w.pid, &status, 0) < 0 && errno == EINTR) {
    }
    release(w);
  }

  void release(Worker& w) {
    close_fd(w.request_fd);
    close_fd(w.result_fd);
    close_fd(w.capture_fd);
    w.pid = -1;
    w.inbox.clear();
  }

  /// Ends an idle worker: closing its request pipe makes it exit; one that does not within 2 s is killed.
  void retire(Worker& w) {
    if (!w.alive()) return;
    close_fd(w.request_fd);
    // The worker's end of the result pipe closes when it exits: wait for that rather than polling waitpid.
    const auto deadline = Clock::now() + std::chrono::seconds(2);
    for (;;) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      pollfd p{w.result_fd, POLLIN, 0};
      const int ready = left > 0 ? ::poll(&p, 1, static_cast<int>(left)) : 0;
      if (ready < 0 && errno == EINTR) continue;
      if (ready <= 0) return kill_worker(w);
      char buf[4096];
      const ssize_t n = ::read(w.result_fd, buf, sizeof buf);
      if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) break;
    }
    int status;
    while (::waitpid(w.pid, &status, 0) < 0 && errno == EINTR) {
    }
    release(w);
  }

  void fail_everything_left() {
    for (auto& w : workers_) {
      requeue(w);
      kill_worker(w);
    }
    while (!pending_.empty()) {
      const std::size_t p = pending_.front();
      pending_.pop_front();
      report(p, failure(*cases_[p], Stage::CRASHED, start_error_));
    }
  }

  Executor& ex_;
  const std::vector<const Case*>& cases_;
  const PoolOptions& opts_;
  const std::function<void(std::size_t, Result)>& on_result_;
  const std::function<bool()>& should_stop_;
  std::vector<Worker> workers_;
  std::deque<std::size_t> pending_;
  bool stopping_ = false;
  bool from_startup_ = false;                // workers come from the executor's start-up process (cases in full)
  std::vector<std::size_t> request_bytes_;   // with from_startup_: each sent case's request size
  std::size_t request_pipe_bytes_ = 65536;
  std::string start_error_;
  double mean_case_us_ = -1;
  PoolStats stats_;
  std::optional<Clock::time_point> first_ready_;  // the first worker's Ready frame: the cases' clock starts
  Clock::time_point last_result_{};
  SignalScope signals_;
};

PoolStats run_in_process(Executor& ex, const std::vector<const Case*>& cases, const PoolOptions& opts,
                         const std::function<void(std::size_t, Result)>& on_result,
                         const std::function<bool()>& should_stop) {
  PoolStats stats;
  if (cases.empty()) return stats;
  const WorkerStart start = start_worker(ex, opts.device_indices.empty() ? -1 : opts.device_indices.front());
  const auto cases_start = Clock::now();
  if (start.ready) stats.worker_start_s.push_back(start.seconds);
  for (std::size_t i = 0; i < cases.size(); ++i) {
    if (should_stop && should_stop()) break;
    ++stats.cases_run;
    on_result(i, start.ready ? run_guarded(ex, *cases[i])
                             : failure(*cases[i], Stage::CRASHED, "cannot run cases: " + start.error));
    if (opts.after_results) opts.after_results();
  }
  if (start.ready) stats.cases_wall_s = std::chrono::duration<double>(Clock::now() - cases_start).count();
  return stats;
}

}  // namespace

std::string signal_name(int sig) {
  switch (sig) {
    case SIGSEGV: return "SIGSEGV";
    case SIGABRT: return "SIGABRT";
    case SIGBUS: return "SIGBUS";
    case SIGFPE: return "SIGFPE";
    case SIGILL: return "SIGILL";
    case SIGKILL: return "SIGKILL";
    case SIGTERM: return "SIGTERM";
    case SIGINT: return "SIGINT";
    case SIGPIPE: return "SIGPIPE";
    case SIGTRAP: return "SIGTRAP";
    case SIGSYS: return "SIGSYS";
    case SIGXCPU: return "SIGXCPU";
    case SIGQUIT: return "SIGQUIT";
    case SIGHUP: return "SIGHUP";
    case SIGUSR1: return "SIGUSR1";
    case SIGUSR2: return "SIGUSR2";
    default: return "signal " + std::to_string(sig);
  }
}

PoolStats run_cases(Executor& ex, const std::vector<const Case*>& cases, const PoolOptions& opts,
                    const std::function<void(std::size_t, Result)>& on_result,
                    const std::function<bool()>& should_stop) {
  if (!opts.isolation) return run_in_process(ex, cases, opts, on_result, should_stop);
  Pool pool(ex, cases, opts, on_result, should_stop);
  return pool.run();
}

}  // namespace opcheck
