#include "settings/device_choice.h"

#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#ifndef OPCHECK_BUILD_PYTHON
#define OPCHECK_BUILD_PYTHON "python3"
#endif

namespace opcheck {
namespace {

// Lists torch's `torch.backends` entry points as torch's autoload sees them (importlib.metadata over sys.path), one
// "name = value (distribution version)" line each. importlib.metadata alone costs more than Python's start, so it is
// imported only when some installed distribution's entry_points.txt mentions the group.
constexpr const char* kListEntryPoints = R"PY(
import os, sys
def declared():
    for d in sys.path:
        try:
            names = os.listdir(d or ".")
        except OSError:
            continue
        for n in names:
            if n.endswith((".dist-info", ".egg-info")):
                try:
                    with open(os.path.join(d or ".", n, "entry_points.txt"), encoding="utf-8") as f:
                        if "torch.backends" in f.read():
                            return True
                except OSError:
                    pass
    return False
if declared():
    from importlib.metadata import entry_points
    for e in entry_points(group="torch.backends"):
        dist = getattr(e, "dist", None)
        where = f" ({dist.name} {dist.version})" if dist is not None else ""
        print(f"{e.name} = {e.value}{where}")
)PY";

bool executable(const std::string& p) { return !p.empty() && ::access(p.c_str(), X_OK) == 0; }

// Runs `python -c script`, its stdout into `out`; false with `error` when it cannot be run or fails.
bool run_python(const std::string& python, const char* script, std::string& out, std::string& error) {
  int fds[2];
  if (::pipe(fds) != 0) {
    error = std::string("pipe failed: ") + std::strerror(errno);
    return false;
  }
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    error = std::string("fork failed: ") + std::strerror(errno);
    return false;
  }
  if (pid == 0) {
    ::dup2(fds[1], STDOUT_FILENO);
    ::close(fds[0]);
    ::close(fds[1]);
    const char* argv[] = {python.c_str(), "-c", script, nullptr};
    ::execv(python.c_str(), const_cast<char* const*>(argv));
    ::_exit(127);
  }
  ::close(fds[1]);
  // A Python that hangs at start must not hang the run: a minute is far beyond a listing's few milliseconds.
  const bool timed_out = !read_child_answer(fds[0], std::chrono::minutes(1), out);
  ::close(fds[0]);
  if (timed_out) ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (timed_out || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    error = python + " could not list its torch.backends entry points (" +
            (timed_out ? std::string("no answer within a minute")
                       : WIFEXITED(status) ? "exit status " + std::to_string(WEXITSTATUS(status))
                                           : "signal " + std::to_string(WTERMSIG(status))) +
            ")";
    return false;
  }
  return true;
}

}  // namespace

bool read_child_answer(int fd, std::chrono::milliseconds budget, std::string& out) {
  const auto deadline = std::chrono::steady_clock::now() + budget;
  char buf[65536];
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0) return false;
    pollfd p{fd, POLLIN, 0};
    const int r = ::poll(&p, 1, static_cast<int>(std::min<long long>(left, 1000)));
    if (r <= 0) continue;  // EINTR or a second without news: the deadline decides
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return true;
    out.append(buf, static_cast<std::size_t>(n));
  }
}

std::string resolve_auto_device(const std::string& device, const std::string& device_lib, bool device_imports,
                                std::string* why, const std::vector<std::string>& installed) {
  if (why) why->clear();
  if (!device.empty() && device != "auto") return device;
  if (device_imports) {
    if (why) *why = "auto: the device the imported modules register";
    return "privateuseone";
  }
  if (!device_lib.empty()) {
    if (why) *why = "auto: device library configured";
    return "privateuseone";
  }
  if (!installed.empty()) {
    if (why) *why = "auto: the installed torch.backends entry point " + installed.front();
    return "privateuseone";
  }
  if (why) *why = "auto: no device library configured, using the loopback stand-in";
  return "loopback";
}

DeviceChoice describe_device_choice(const DeviceSearch& search) {
  DeviceChoice c;
  c.asked = search.device.empty() ? "auto" : search.device;
  c.chosen = resolve_auto_device(c.asked, search.device_lib, !search.imports.empty(), nullptr, search.installed);
  const auto joined = [](const std::vector<std::string>& items) {
    std::string out;
    for (const auto& i : items) out += (out.empty() ? "" : "; ") + i;
    return out;
  };
  if (c.asked != "auto") {
    c.why = "named by --device";
    return c;
  }
  c.searched.push_back(search.device_lib.empty()
                           ? std::string("device library (--device-lib, OPCHECK_DEVICE_LIB): none")
                           : std::string(search.device_lib_from_environment ? "device library (OPCHECK_DEVICE_LIB): "
                                                                            : "device library (--device-lib): ") +
                                 search.device_lib);
  c.searched.push_back(search.imports.empty()
                           ? std::string("modules that register a device (--device-import, OPCHECK_DEVICE_IMPORT): none")
                           : "modules that register a device (--device-import): " + joined(search.imports));
  const std::string where = "torch.backends entry points" + (search.python.empty() ? "" : " of " + search.python);
  c.searched.push_back(!search.installed.empty() ? where + ": " + joined(search.installed)
                       : !search.installed_note.empty() ? where + ": none used (" + search.installed_note + ")"
                                                        : where + ": none installed");
  if (!search.imports.empty()) c.why = "the device the --device-import modules register";
  else if (!search.device_lib.empty())
    c.why = std::string("the device library ") + (search.device_lib_from_environment ? "OPCHECK_DEVICE_LIB" : "--device-lib") +
            " names";
  else if (!search.installed.empty()) c.why = "the one installed torch.backends entry point " + search.installed.front();
  else {
    c.why = "opcheck's stand-in, as no backend was found";
    c.stand_in = true;
  }
  return c;
}

std::string hosting_python(const std::string& configured) {
  if (!configured.empty()) return configured;
  const char* venv = std::getenv("VIRTUAL_ENV");
  if (venv != nullptr && *venv != '\0' && executable(std::string(venv) + "/bin/python"))
    return std::string(venv) + "/bin/python";
  return OPCHECK_BUILD_PYTHON;
}

bool hosting_python_is_the_builds(const std::string& configured) {
  return hosting_python(configured) == OPCHECK_BUILD_PYTHON;
}

std::string top_level_module(const std::string& spec) {
  std::string value = spec;
  if (const auto eq = value.find(" = "); eq != std::string::npos) value = value.substr(eq + 3);
  return value.substr(0, value.find_first_of(":. "));
}

std::vector<std::string> python_path_entries_holding(const std::string& python_path,
                                                     const std::vector<std::string>& modules, bool entry_points) {
  namespace fs = std::filesystem;
  std::vector<std::string> out;
  std::stringstream entries(python_path);
  for (std::string entry; std::getline(entries, entry, ':');) {
    std::error_code ec;
    const fs::path dir = fs::absolute(entry.empty() ? fs::path(".") : fs::path(entry), ec).lexically_normal();
    if (ec || !fs::is_directory(dir, ec)) continue;
    bool holds = false;
    for (const auto& m : modules) {
      if (m.empty()) continue;
      holds = holds || fs::is_directory(dir / m, ec) || fs::is_regular_file(dir / (m + ".py"), ec);
    }
    for (fs::directory_iterator it(dir, ec), end; !holds && !ec && it != end; it.increment(ec)) {
      const std::string name = it->path().filename().string();
      for (const auto& m : modules)
        if (!m.empty() && name.rfind(m + ".", 0) == 0 && name.size() > 3 && name.compare(name.size() - 3, 3, ".so") == 0)
          holds = true;
      if (entry_points && name.size() > 10 && name.compare(name.size() - 10, 10, ".dist-info") == 0) {
        std::ifstream in(it->path() / "entry_points.txt");
        const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        holds = holds || text.find("[torch.backends]") != std::string::npos;
      }
    }
    const std::string abs = dir.string();
    if (holds && std::find(out.begin(), out.end(), abs) == out.end()) out.push_back(abs);
  }
  return out;
}

bool may_be_installed_backend(const std::string& device, const std::string& device_lib, bool device_imports) {
  if (device_imports || !device_lib.empty()) return false;
  std::string type = device.substr(0, device.find(':'));
  for (auto& ch : type) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return type != "cpu" && type != "loopback";
}

bool backend_autoload_off(const char* value) { return value != nullptr && std::string(value) != "1"; }

InstalledBackends list_installed_backends(const std::string& python, bool autoload_off) {
  InstalledBackends found;
  if (autoload_off) {
    found.note = "TORCH_DEVICE_BACKEND_AUTOLOAD=0: torch loads no torch.backends entry point, so none is used";
    return found;
  }
  std::string out, error;
  if (!executable(python)) {
    found.note = "no torch.backends entry point is used: the interpreter " + python + " does not exist";
    return found;
  }
  if (!run_python(python, kListEntryPoints, out, error)) {
    found.note = error;
    return found;
  }
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);)
    if (!line.empty()) found.entry_points.push_back(line);
  return found;
}

}  // namespace opcheck
