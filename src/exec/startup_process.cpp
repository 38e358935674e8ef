#include "exec/startup_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>

#include <c10/core/Allocator.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <torch/version.h>
#include <nlohmann/json.hpp>

#include "exec/device.h"
#include "exec/python_device.h"
#include "common/child_processes.h"
#include "common/stop_request.h"
#include "common/text_escape.h"

namespace opcheck::exec {
namespace {

using Clock = std::chrono::steady_clock;

/// The start-up process as the process that forked it knows it.
struct Startup {
  int pid = -1;
  int socket = -1;  // SOCK_SEQPACKET: worker requests (with their channels' descriptors) and the answers
  PythonHostFacts facts;
  std::vector<std::string> enabled_ops;
  std::string error;  // a failed start is not retried
};
Startup g_startup;
bool g_in_startup = false;  // this process is the start-up process

/// A request for a worker: what to run, with what. The descriptors travel beside it (SCM_RIGHTS).
struct WorkerRequest {
  WorkerEntry entry;  // code of the process that forked the start-up process, at the same address here
  WorkerChannels channels;
};
constexpr int kChannelFds = 4;

bool write_all(int fd, const std::string& s) {
  std::size_t done = 0;
  while (done < s.size()) {
    const ssize_t n = ::write(fd, s.data() + done, s.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

int reap(int pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

/// What this process's interpreter reports: its facts and the PrivateUse1 kernels the imports registered.
nlohmann::json own_facts(const ExecOptions& opts) {
  nlohmann::json j;
  PythonHostFacts f;
  std::string err;
  if (python_host(python_host_config(opts), f, err) == nullptr) {
    j["error"] = err;
    return j;
  }
  j["python_version"] = f.python_version;
  j["torch_version"] = f.torch_version;
  j["torch_path"] = f.torch_path;
  j["modules"] = f.module_versions;
  j["privateuse1_name"] = f.privateuse1_name;
  j["privateuse1_inductor_codegen"] = f.privateuse1_inductor_codegen;
  j["module_entry_points"] = f.module_entry_points;
  j["autoloaded_imports"] = f.autoloaded_imports;
  // What PrivateUse1 holds after the imports (and the torch.backends entry points torch's import loaded), renamed or
  // not: a backend may register its kernels, guard and allocator and leave the renaming to its entry point.
  j["enabled_ops"] = ops_with_kernel_for(c10::DispatchKey::PrivateUse1);
  j["privateuse1_guard"] = c10::impl::hasDeviceGuardImpl(c10::DeviceType::PrivateUse1);
  bool allocator = false;
  try {
    allocator = c10::GetAllocator(c10::DeviceType::PrivateUse1) != nullptr;
  } catch (const std::exception&) {
    allocator = false;  // a debug build asserts that one is set
  }
  j["privateuse1_allocator"] = allocator;
  return j;
}

bool take_facts(const nlohmann::json& j, PythonHostFacts& facts, std::vector<std::string>& enabled_ops,
                std::string& error) {
  if (j.contains("error")) {
    error = j["error"].get<std::string>();
    return false;
  }
  facts.python_version = j.value("python_version", "");
  facts.torch_version = j.value("torch_version", "");
  facts.torch_path = j.value("torch_path", "");
  facts.privateuse1_name = j.value("privateuse1_name", "");
  facts.privateuse1_inductor_codegen = j.value("privateuse1_inductor_codegen", true);
  facts.module_versions = j.value("modules", std::map<std::string, std::string>{});
  facts.module_entry_points = j.value("module_entry_points", std::map<std::string, std::vector<std::string>>{});
  facts.autoloaded_imports = j.value("autoloaded_imports", std::map<std::string, std::string>{});
  facts.privateuse1_guard = j.value("privateuse1_guard", false);
  facts.privateuse1_allocator = j.value("privateuse1_allocator", false);
  enabled_ops = j.value("enabled_ops", std::vector<std::string>{});
  return true;
}

/// In the start-up process: a worker, forked twice so that it becomes the child of the process that asked (its
/// reaper) once the middle process has ended. Returns the worker's pid, or -1.
int fork_worker(Executor& ex, WorkerRequest request, const int fds[kChannelFds], int own_socket, std::string& why) {
  int pid_pipe[2];
  if (::pipe2(pid_pipe, O_CLOEXEC) != 0) {
    why = std::string("pipe failed: ") + std::strerror(errno);
    return -1;
  }
  const int middle = python_host_if_started()->fork_process();
  if (middle == 0) {
    ::close(pid_pipe[0]);
    const pid_t worker = ::fork();
    if (worker == 0) {
      ::close(pid_pipe[1]);
      ::close(own_socket);
      request.channels.request_fd = fds[0];
      request.channels.result_fd = fds[1];
      request.channels.capture_fd = fds[2];
      request.channels.clock_fd = request.channels.clock_fd >= 0 ? fds[3] : -1;
      request.entry(ex, request.channels);
      ::_exit(0);
    }
    const int sent = static_cast<int>(worker);
    (void)!::write(pid_pipe[1], &sent, sizeof sent);
    ::_exit(0);
  }
  ::close(pid_pipe[1]);
  int worker = -1;
  if (middle < 0 || ::read(pid_pipe[0], &worker, sizeof worker) != static_cast<ssize_t>(sizeof worker)) worker = -1;
  ::close(pid_pipe[0]);
  if (middle > 0) reap(middle);  // from here the worker is the asking process's child
  if (worker < 0) why = std::string("fork failed: ") + std::strerror(errno);
  return worker;
}

/// Serves worker requests until the process that forked this one closes its socket (or dies: PR_SET_PDEATHSIG).
[[noreturn]] void serve(Executor* ex, const std::string& ex_error, int sock) {
  for (;;) {
    WorkerRequest request{};
    int fds[kChannelFds] = {-1, -1, -1, -1};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof fds)];
    iovec io{&request, sizeof request};
    msghdr msg{};
    msg.msg_iov = &io;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    const ssize_t n = ::recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) ::_exit(0);
    for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c))
      if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
        std::memcpy(fds, CMSG_DATA(c), std::min<std::size_t>(sizeof fds, c->cmsg_len - CMSG_LEN(0)));
    std::string why = ex_error;
    int pid = -1;
    if (n != static_cast<ssize_t>(sizeof request))
      why = "a worker request of " + std::to_string(n) + " bytes";
    else if (ex != nullptr)
      pid = fork_worker(*ex, request, fds, sock, why);
    for (int fd : fds)
      if (fd >= 0) ::close(fd);
    std::string answer(reinterpret_cast<const char*>(&pid), sizeof pid);
    if (pid < 0) answer += why;
    (void)!::send(sock, answer.data(), answer.size(), MSG_NOSIGNAL);
  }
}

/// The start-up process: the interpreter, the imports, the report on `report_fd` (the steps it takes, then its
/// facts), then workers on request.
[[noreturn]] void startup_main(const ExecOptions& opts, int report_fd, int sock, pid_t parent) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(1);
  ::prctl(PR_SET_NAME, "opcheck-startup");
  // Ctrl-C (sent to the process group) ends an import at once; the run's handlers stay the run's.
  for (const int sig : kStopSignals) ::signal(sig, SIG_DFL);
  g_in_startup = true;
  ::setenv("OPCHECK_START_STEP_FD", std::to_string(report_fd).c_str(), 1);
  const nlohmann::json facts = own_facts(opts);
  ::unsetenv("OPCHECK_START_STEP_FD");
  write_all(report_fd, "facts " + facts.dump() + "\n");
  ::close(report_fd);
  if (facts.contains("error")) ::_exit(0);
  // The executor the workers run, set up from this process's own facts as the asking process set up its own.
  std::string error;
  Executor* ex = opcheck_create_executor(&opts, &error);
  serve(ex, error, sock);
}

void stop_child(int pid) {
  ::kill(pid, SIGKILL);
  reap(pid);
}

std::string seconds_text(double s) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", s);
  return text;
}

bool stopped(const ExecOptions& opts) { return opts.stop_requested != nullptr && *opts.stop_requested; }

std::string stopped_text(const std::string& python, const std::string& step) {
  return "stopped by a signal while " + python + " ran `" + step + "` (the device's start); its start-up process " +
         "was ended";
}

/// Reads the start-up process's report until it ends (its facts line), it dies, the budget runs out or the run is
/// asked to stop. The last step it announced names what it was doing.
bool read_report(const ExecOptions& opts, int fd, int pid, std::string& out, std::string& step, std::string& error) {
  const std::string python = "Python (" + python_host_config(opts).python + ")";
  const auto deadline = Clock::now() + std::chrono::duration<double>(opts.start_timeout_s);
  char buf[65536];
  for (;;) {
    for (auto at = out.find("step "); at != std::string::npos; at = out.find("step ", at + 1)) {
      const auto end = out.find('\n', at);
      if (end != std::string::npos && (at == 0 || out[at - 1] == '\n')) step = out.substr(at + 5, end - at - 5);
    }
    if (stopped(opts)) {
      stop_child(pid);
      error = stopped_text(python, step);
      return false;
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) {
      stop_child(pid);
      // Before its first step the interpreter itself was starting: `import torch` is the first thing to try.
      const std::string command = step.rfind("import ", 0) != 0 || step == "import torch" ? "import torch"
                                                                                        : "import torch; " + step;
      error = python + " did not finish `" + step + "` within " + seconds_text(opts.start_timeout_s) +
              " s (--start-timeout); its start-up process was ended with SIGKILL. Fix: find what `" +
              python_host_config(opts).python + " -c '" + command + "'` waits for, or give the start longer " +
              "with --start-timeout SECONDS";
      return false;
    }
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(std::min<long long>(left, 100))) <= 0) continue;  // EINTR: the flag decides
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return true;
    out.append(buf, static_cast<std::size_t>(n));
    // The facts line ends the report: a child a device module forked holds the pipe open, so its end is no EOF.
    const auto facts = out.rfind("facts ");
    if (facts != std::string::npos && (facts == 0 || out[facts - 1] == '\n') && out.back() == '\n') return true;
  }
}

// What the interpreter and the device's modules printed while they were imported (they write to a file, not to the
// terminal), relayed to stderr line by line with every control byte escaped: a module's terminal escapes cannot
// retitle, clear or corrupt the console the run prints to.
void relay_startup_output(int fd) {
  constexpr std::size_t kMaxRelayed = 64 * 1024;
  struct stat st {};
  if (fd < 0 || ::fstat(fd, &st) != 0 || st.st_size <= 0) return;
  std::string text(std::min<std::size_t>(static_cast<std::size_t>(st.st_size), kMaxRelayed), '\0');
  const ssize_t n = ::pread(fd, text.data(), text.size(), 0);
  if (n <= 0) return;
  text.resize(static_cast<std::size_t>(n));
  std::string out;
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t end = std::min(text.find('\n', at), text.size());
    out += "opcheck: device output: " + printable_text(std::string_view(text).substr(at, end - at)) + "\n";
    at = end + 1;
  }
  if (static_cast<std::size_t>(st.st_size) > text.size())
    out += "opcheck: device output: (" + std::to_string(st.st_size - static_cast<off_t>(text.size())) +
           " more bytes not shown)\n";
  std::fwrite(out.data(), 1, out.size(), stderr);
}

pid_t g_reaper_pid = 0;  // the process that started the start-up process (and reaps what it leaves)

/// At exit (`opcheck run` ends its process itself, and does the same): the start-up process, then every process left
/// as this process's child. This process is the reaper
/// (PR_SET_CHILD_SUBREAPER) of all the start-up process started: a child a --device-import module forked while it
/// was imported (a helper, a daemon that forked twice) becomes this process's child when its parent ends, and is
/// ended here, with whatever it started in turn (round by round: each kill hands its children over).
void end_what_the_start_left() {
  if (::getpid() != g_reaper_pid) return;  // a forked worker that exits normally ends nothing of its parent's
  stop_startup_process();
  end_child_processes();
}

}  // namespace

bool start_startup_process(const ExecOptions& opts, PythonHostFacts& facts, std::vector<std::string>& enabled_ops,
                           std::string& error) {
  if (g_in_startup) return take_facts(own_facts(opts), facts, enabled_ops, error);
  if (g_startup.pid > 0) {
    facts = g_startup.facts;
    enabled_ops = g_startup.enabled_ops;
    return true;
  }
  if (!g_startup.error.empty()) {
    error = g_startup.error;
    return false;
  }
  int report[2] = {-1, -1}, sock[2] = {-1, -1};
  auto close_all = [&] {
    for (int fd : {report[0], report[1], sock[0], sock[1]})
      if (fd >= 0) ::close(fd);
  };
  if (::pipe2(report, O_CLOEXEC) != 0 || ::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sock) != 0) {
    error = std::string("cannot start the device's start-up process: ") + std::strerror(errno);
    close_all();
    return false;
  }
  // Workers the start-up process forks twice become children of this process: it reaps them and reads how they end,
  // and at exit ends every other process the start-up left behind.
  ::prctl(PR_SET_CHILD_SUBREAPER, 1);
  if (g_reaper_pid == 0) {
    g_reaper_pid = ::getpid();
    std::atexit(end_what_the_start_left);
  }
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t parent = ::getpid();
  const int output = ::memfd_create("opcheck-startup-output", MFD_CLOEXEC);
  const pid_t pid = ::fork();
  if (pid < 0) {
    if (output >= 0) ::close(output);
    error = std::string("cannot start the device's start-up process: fork failed: ") + std::strerror(errno);
    close_all();
    return false;
  }
  if (pid == 0) {
    ::close(report[0]);
    ::close(sock[0]);
    if (output >= 0) {
      ::dup2(output, STDOUT_FILENO);
      ::dup2(output, STDERR_FILENO);
    }
    startup_main(opts, report[1], sock[1], parent);
  }
  ::close(report[1]);
  ::close(sock[1]);
  std::string out, step = "start";
  const bool answered = read_report(opts, report[0], pid, out, step, error);
  ::close(report[0]);
  relay_startup_output(output);
  if (output >= 0) ::close(output);
  if (!answered) {
    ::close(sock[0]);
    g_startup.error = error;
    return false;
  }
  const auto at = out.rfind("facts ");
  nlohmann::json j;
  bool parsed = at != std::string::npos && (at == 0 || out[at - 1] == '\n');
  if (parsed) {
    try {
      j = nlohmann::json::parse(out.substr(at + 6));
    } catch (const std::exception&) {
      parsed = false;
    }
  }
  const std::string what = opts.device_imports.empty() ? "torch" : "torch and the --device-import modules";
  const std::string python = "Python (" + python_host_config(opts).python + ")";
  if (!parsed || j.contains("error")) {
    ::close(sock[0]);
    ::kill(pid, SIGKILL);
    const int status = reap(pid);
    if (parsed)
      error = j["error"].get<std::string>();
    else if (stopped(opts) || (WIFSIGNALED(status) && std::find(std::begin(kStopSignals), std::end(kStopSignals),
                                                           WTERMSIG(status)) != std::end(kStopSignals)))
      error = stopped_text(python, step);  // Ctrl-C reached the whole process group
    else if (WIFSIGNALED(status) && WTERMSIG(status) != SIGKILL)
      error = python + " died with signal " + std::to_string(WTERMSIG(status)) + " (" + strsignal(WTERMSIG(status)) +
              ") while importing " + what + ". Fix: check that its torch is the one opcheck was built against (" +
              TORCH_VERSION + " from " + OPCHECK_TORCH_PREFIX + ")";
    else
      error = python + " ended without reporting while importing " + what;
    g_startup.error = error;
    return false;
  }
  take_facts(j, facts, enabled_ops, error);
  g_startup = Startup{pid, sock[0], facts, enabled_ops, ""};
  return true;
}

bool startup_process_running() { return g_startup.pid > 0; }

void stop_startup_process() {
  if (g_startup.pid <= 0) return;
  ::close(g_startup.socket);
  stop_child(g_startup.pid);
  g_startup.pid = -1;
  g_startup.socket = -1;
}

int start_worker_from_startup(WorkerEntry entry, const WorkerChannels& channels, std::string& error) {
  if (g_startup.pid <= 0) {
    error = "the device's start-up process is not running";
    return -1;
  }
  WorkerRequest request{entry, channels};
  const int fds[kChannelFds] = {channels.request_fd, channels.result_fd, channels.capture_fd,
                                channels.clock_fd >= 0 ? channels.clock_fd : channels.capture_fd};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof fds)] = {};
  iovec io{&request, sizeof request};
  msghdr msg{};
  msg.msg_iov = &io;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  cmsghdr* c = CMSG_FIRSTHDR(&msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof fds);
  std::memcpy(CMSG_DATA(c), fds, sizeof fds);
  ssize_t sent;
  do sent = ::sendmsg(g_startup.socket, &msg, MSG_NOSIGNAL);
  while (sent < 0 && errno == EINTR);
  char answer[4096];
  ssize_t got = -1;
  if (sent == static_cast<ssize_t>(sizeof request)) {
    pollfd p{g_startup.socket, POLLIN, 0};
    for (int waited = 0; got < 0 && waited < 100; ++waited) {  // a fork takes milliseconds: 10 s means it is gone
      if (::poll(&p, 1, 100) > 0) got = ::recv(g_startup.socket, answer, sizeof answer, 0);
    }
  }
  int pid = -1;
  if (got >= static_cast<ssize_t>(sizeof pid)) std::memcpy(&pid, answer, sizeof pid);
  if (pid > 0) return pid;
  error = got > static_cast<ssize_t>(sizeof pid) ? std::string(answer + sizeof pid, answer + got)
                                                   : "the device's start-up process has ended (a signal, or it died)";
  return -1;
}

}  // namespace opcheck::exec
