#include "exec/python_device.h"

#include <dlfcn.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include <torch/version.h>
#include <nlohmann/json.hpp>

#include "common/device_choice.h"
#include "exec/device.h"

namespace opcheck::exec {
namespace {

namespace fs = std::filesystem;

std::string real_path(const std::string& p) {
  std::error_code ec;
  const fs::path r = fs::canonical(p, ec);
  return ec ? p : r.string();
}

std::string base_version(const std::string& v) { return v.substr(0, v.find('+')); }

/// Folder of this exec library: opcheck's Python packages live in its python/ subfolder.
fs::path exec_dir() { return fs::path(this_library_path()).parent_path(); }

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

}  // namespace

bool wants_python_host(const ExecOptions& opts) {
  return !opts.device_imports.empty() || !opts.compile_backend.empty();
}

PythonHostConfig python_host_config(const ExecOptions& opts) {
  PythonHostConfig c;
  // The one the run's settings listed the torch.backends entry points of.
  c.python = hosting_python(opts.python);
  c.imports = opts.device_imports;
  c.extra_paths = {(exec_dir() / "python").string()};
  c.compile_backend = opts.compile_backend;
  c.inductor_cache_dir = opts.inductor_cache_dir;
  return c;
}

bool probe_python_device(const ExecOptions& opts, PythonHostFacts& facts, std::vector<std::string>& enabled_ops,
                         std::string& error) {
  std::string why;
  if (!python_host_available(why)) {
    error = why;
    return false;
  }
  const PythonHostConfig config = python_host_config(opts);
  const std::string what = opts.device_imports.empty() ? "torch" : "torch and the --device-import modules";
  int fds[2];
  if (::pipe(fds) != 0) {
    error = std::string("pipe failed: ") + std::strerror(errno);
    return false;
  }
  const pid_t pid = ::fork();
  if (pid < 0) {
    error = std::string("fork failed: ") + std::strerror(errno);
    return false;
  }
  if (pid == 0) {
    // The child: start Python, import, report, and end without running anything else of this process.
    ::close(fds[0]);
    nlohmann::json j;
    PythonHostFacts f;
    std::string err;
    if (python_host(config, f, err) == nullptr) {
      j["error"] = err;
    } else {
      j["python_version"] = f.python_version;
      j["torch_version"] = f.torch_version;
      j["torch_path"] = f.torch_path;
      j["modules"] = f.module_versions;
      j["privateuse1_name"] = f.privateuse1_name;
      j["privateuse1_inductor_codegen"] = f.privateuse1_inductor_codegen;
      // A device was registered (by the imports, or by the torch.backends entry points torch's import loaded).
      if (!opts.device_imports.empty() || f.privateuse1_name != "privateuseone")
        j["enabled_ops"] = ops_with_kernel_for(c10::DispatchKey::PrivateUse1);
    }
    write_all(fds[1], j.dump());
    ::close(fds[1]);
    std::_Exit(0);
  }
  ::close(fds[1]);
  std::string out;
  const bool timed_out = !read_child_answer(fds[0], std::chrono::minutes(10), out);
  ::close(fds[0]);
  if (timed_out) ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  const std::string python = "Python (" + config.python + ")";
  if (timed_out) {
    error = python + " did not finish importing " + what + " within 10 minutes";
    return false;
  }
  if (WIFSIGNALED(status)) {
    error = python + " died with signal " + std::to_string(WTERMSIG(status)) + " (" + strsignal(WTERMSIG(status)) +
            ") while importing " + what + ". Fix: check that its torch is the one opcheck was built against (" +
            TORCH_VERSION + " from " + OPCHECK_TORCH_PREFIX + ")";
    return false;
  }
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(out);
  } catch (const std::exception&) {
    error = python + " ended without reporting (exit status " + std::to_string(WEXITSTATUS(status)) +
            ") while importing " + what;
    return false;
  }
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
  enabled_ops = j.value("enabled_ops", std::vector<std::string>{});

  // The interpreter's torch must be the libtorch opcheck runs: both live in one process.
  const std::string built = real_path(OPCHECK_TORCH_PREFIX);
  if (base_version(facts.torch_version) != base_version(TORCH_VERSION) || real_path(facts.torch_path) != built) {
    error = python + " imports torch " + facts.torch_version + " from " + facts.torch_path +
            ", but opcheck was built against libtorch " + TORCH_VERSION + " from " + built +
            ". Fix: rebuild opcheck against that torch (activate its environment, then scripts/run.sh --version, "
            "which reconfigures build/), or run with the interpreter opcheck was built with: OPCHECK_PYTHON=" +
            OPCHECK_BUILD_PYTHON;
    return false;
  }
  return true;
}

}  // namespace opcheck::exec
