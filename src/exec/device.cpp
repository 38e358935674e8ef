#include "exec/device.h"
#include "exec/python_device.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <mutex>
#include <sys/stat.h>

#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <torch/version.h>

#include "common/regular_file.h"
#include "common/sha256.h"
#include "exec/op_error.h"
#include "settings/device_choice.h"

namespace opcheck::exec {

std::string this_library_path() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&this_library_path), &info) != 0 && info.dli_fname != nullptr)
    return info.dli_fname;
  return {};
}

namespace {

constexpr const char* kLoopbackLibName = "libopcheck_loopback.so";

bool file_exists(const std::string& p) {
  struct stat st {};
  return !p.empty() && ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string dir_of(const std::string& p) {
  auto slash = p.rfind('/');
  return slash == std::string::npos ? std::string(".") : p.substr(0, slash);
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char ch) { return std::tolower(ch); });
  return s;
}

std::string find_loopback_library(const ExecOptions& opts, std::string& error) {
  if (!opts.loopback_lib.empty()) {
    const std::string why = why_not_regular_file(opts.loopback_lib);
    if (why.empty()) return opts.loopback_lib;
    error = "loopback library '" + opts.loopback_lib + "' " + why + ". Fix: pass the path of " + kLoopbackLibName;
    return {};
  }
  std::vector<std::string> tried;
  const std::string self = this_library_path();
  if (!self.empty()) {
    const std::string dir = dir_of(self);
    tried.push_back(dir + "/" + kLoopbackLibName);
    tried.push_back(dir + "/../" OPCHECK_INSTALL_LIBDIR "/opcheck/" + kLoopbackLibName);
  }
  char exe[4096];
  ssize_t n = ::readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  if (n > 0) {
    exe[n] = '\0';
    const std::string dir = dir_of(exe);
    tried.push_back(dir + "/" + kLoopbackLibName);
    tried.push_back(dir + "/../" OPCHECK_INSTALL_LIBDIR "/opcheck/" + kLoopbackLibName);
  }
  for (const auto& p : tried)
    if (file_exists(p)) return p;
  error = "cannot find " + std::string(kLoopbackLibName) + " (looked in:";
  for (const auto& p : tried) error += " " + p;
  error += "). Fix: build the opcheck_loopback target, or pass its path with --loopback-lib";
  return {};
}

/// The name the PrivateUse1 backend gave itself (a backend may rename the key), else "privateuseone".
std::string privateuse1_name() { return c10::get_privateuse1_backend(/*lower_case=*/true); }

/// Libraries this process has dlopen'ed as a PrivateUse1 backend. Only one fits: a second one would register a
/// second boxed fallback for the same key, which libtorch refuses by throwing from a static initializer.
std::mutex g_loaded_mutex;
std::string g_loaded_privateuse1_lib;
std::string g_loaded_privateuse1_error;  // what was wrong with it, repeated to every later setup_device

bool load_privateuse1_library_once(const std::string& path, const std::string& canonical, std::string& error);

bool load_privateuse1_library(const std::string& path, std::string& error) {
  std::lock_guard<std::mutex> lock(g_loaded_mutex);
  char resolved[PATH_MAX];
  std::string canonical = ::realpath(path.c_str(), resolved) ? std::string(resolved) : path;
  if (const std::string why = why_not_regular_file(path); !why.empty()) {
    error = "device library '" + path + "' " + why + ". Fix: check --device-lib / OPCHECK_DEVICE_LIB";
    return false;
  }
  if (!g_loaded_privateuse1_lib.empty()) {
    if (g_loaded_privateuse1_lib == canonical) {  // dlopen again would only bump a refcount
      error = g_loaded_privateuse1_error;
      return error.empty();
    }
    error = "cannot load PrivateUse1 backend '" + path + "': '" + g_loaded_privateuse1_lib +
            "' is already loaded in this process and only one PrivateUse1 backend fits in a process";
    return false;
  }
  if (load_privateuse1_library_once(path, canonical, error)) return true;
  if (!g_loaded_privateuse1_lib.empty()) g_loaded_privateuse1_error = error;
  return false;
}

bool load_privateuse1_library_once(const std::string& path, const std::string& canonical, std::string& error) {
  if (c10::impl::hasDeviceGuardImpl(c10::DeviceType::PrivateUse1) ||
      c10::Dispatcher::singleton().hasBackendFallbackForDispatchKey(c10::DispatchKey::PrivateUse1)) {
    error = "cannot load PrivateUse1 backend '" + path +
            "': another PrivateUse1 backend is already registered in this process (linked in or loaded earlier)";
    return false;
  }
  // RTLD_GLOBAL: the backend's kernels may be looked up by symbol from other libraries; RTLD_NOW: an unresolved
  // symbol is an error here, with the library's name, rather than a crash in the middle of a case.
  void* handle = ::dlopen(canonical.c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (handle == nullptr) {
    const char* why = ::dlerror();
    error = "cannot load device library '" + path + "': " + (why ? why : "unknown dlopen error") +
            ". Fix: build it against the same libtorch as opcheck (" + TORCH_VERSION + ")";
    return false;
  }
  g_loaded_privateuse1_lib = canonical;
  // A backend may report a configuration problem found while loading (it must not throw from a static
  // initializer, which would end the process inside dlopen).
  using LoadErrorFn = const char* (*)();
  if (auto fn = reinterpret_cast<LoadErrorFn>(::dlsym(handle, "opcheck_backend_load_error")); fn != nullptr) {
    if (const char* why = fn(); why != nullptr && *why != '\0') {
      error = "device library '" + path + "' reported an error while loading: " + why;
      return false;
    }
  }
  if (!c10::impl::hasDeviceGuardImpl(c10::DeviceType::PrivateUse1)) {
    error = "device library '" + path +
            "' loaded but registered no PrivateUse1 device guard. Fix: the backend must use "
            "C10_REGISTER_GUARD_IMPL(PrivateUse1, ...) in a static initializer";
    return false;
  }
  return true;
}

/// Parses "type" or "type:index" as a device spelling; index -1 when absent.
void split_index(const std::string& spec, std::string& type, int& index) {
  type = spec;
  index = -1;
  auto colon = spec.rfind(':');
  if (colon == std::string::npos) return;
  const std::string tail = spec.substr(colon + 1);
  if (tail.empty() || !std::all_of(tail.begin(), tail.end(), [](unsigned char ch) { return std::isdigit(ch); })) return;
  type = spec.substr(0, colon);
  index = std::atoi(tail.c_str());
}

c10::DispatchKey dispatch_key_for(c10::DeviceType t) {
  switch (t) {
    case c10::DeviceType::CPU: return c10::DispatchKey::CPU;
    case c10::DeviceType::CUDA: return c10::DispatchKey::CUDA;
    case c10::DeviceType::XPU: return c10::DispatchKey::XPU;
    case c10::DeviceType::MPS: return c10::DispatchKey::MPS;
    case c10::DeviceType::PrivateUse1: return c10::DispatchKey::PrivateUse1;
    default: return c10::DispatchKey::Undefined;
  }
}

bool device_type_present(c10::DeviceType t) {
  switch (t) {
    case c10::DeviceType::CPU: return true;
    case c10::DeviceType::CUDA: return at::hasCUDA();
    case c10::DeviceType::MPS: return at::hasMPS();
    default:
      // XPU, HPU, ...: compiled in when its guard is registered, present when it reports a device.
      return c10::impl::hasDeviceGuardImpl(t) && c10::impl::getDeviceGuardImpl(t)->deviceCount() > 0;
  }
}

/// What a forked child found out about a device type: whether it is present and how many devices it has.
struct DeviceProbe {
  bool present = false;
  int count = -1;  // -1: the backend has no guard to ask
};

/// Asks for the device's presence and count in a forked child, which then ends: most device runtimes (CUDA's among
/// them) do not survive fork, and this process forks the workers that use the device. False and `error` when the
/// child dies, overruns `budget_s` or cannot be started.
bool probe_in_child(const std::string& what, c10::DeviceType t, double budget_s, DeviceProbe& out,
                    std::string& error) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    error = "probing device '" + what + "' failed: pipe: " + std::strerror(errno);
    return false;
  }
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t pid = ::fork();
  if (pid < 0) {
    error = "probing device '" + what + "' failed: fork: " + std::strerror(errno);
    ::close(fds[0]);
    ::close(fds[1]);
    return false;
  }
  if (pid == 0) {
    ::close(fds[0]);
    int answer[2] = {0, -1};
    try {
      answer[0] = device_type_present(t) ? 1 : 0;
      if (answer[0] != 0 && c10::impl::hasDeviceGuardImpl(t)) answer[1] = c10::impl::getDeviceGuardImpl(t)->deviceCount();
    } catch (...) {
      answer[0] = 0;
    }
    (void)!::write(fds[1], answer, sizeof answer);
    ::_exit(0);  // no atexit handlers, no static destructors: they belong to the parent
  }
  ::close(fds[1]);
  int answer[2] = {0, -1};
  std::size_t got = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(budget_s);
  while (got < sizeof answer) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    pollfd p{fds[0], POLLIN, 0};
    const int ready = left.count() > 0 ? ::poll(&p, 1, static_cast<int>(std::min<long long>(left.count(), 1000))) : 0;
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0 && left.count() > 0) continue;
    const ssize_t n = ready > 0 ? ::read(fds[0], reinterpret_cast<char*>(answer) + got, sizeof answer - got) : 0;
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  ::close(fds[0]);
  if (got < sizeof answer) ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (got < sizeof answer) {
    error = "probing device '" + what + "' in a child process failed: " +
            (WIFSIGNALED(status) && WTERMSIG(status) != SIGKILL
                 ? "it died with signal " + std::to_string(WTERMSIG(status)) + " (" + strsignal(WTERMSIG(status)) + ")"
                 : "no answer within " + std::to_string(static_cast<int>(budget_s)) + " s (--start-timeout)") +
            ". Fix: check that the device's runtime starts (its driver, its library)";
    return false;
  }
  out.present = answer[0] != 0;
  out.count = answer[1];
  return true;
}

/// Index must exist on the device; -1 (not given) becomes 0. The device is asked in a forked child (probe_in_child):
/// this process never initialises it. `known`: what a probe of the caller's already found.
bool check_index(const std::string& what, c10::DeviceType t, int& index, double budget_s, std::string& error,
                 const DeviceProbe* known = nullptr) {
  if (index < 0) index = 0;
  if (t == c10::DeviceType::CPU) {
    if (index != 0) {
      error = "device '" + what + "': cpu has only index 0";
      return false;
    }
    return true;
  }
  if (!c10::impl::hasDeviceGuardImpl(t)) return true;  // nothing to ask; the first op will tell
  DeviceProbe probe;
  if (known != nullptr) probe = *known;
  else if (!probe_in_child(what, t, budget_s, probe, error)) return false;
  if (index >= probe.count) {
    error = "device '" + what + "': index " + std::to_string(index) + " does not exist (the backend reports " +
            std::to_string(std::max(probe.count, 0)) + " device(s))";
    return false;
  }
  return true;
}

}  // namespace

std::vector<std::string> ops_with_kernel_for(c10::DispatchKey key) {
  std::vector<std::string> ops;
  if (key == c10::DispatchKey::Undefined) return ops;
  auto& dispatcher = c10::Dispatcher::singleton();
  for (const auto& name : dispatcher.getAllOpNames()) {
    if (name.name.rfind("aten::", 0) != 0) continue;
    auto handle = dispatcher.findOp(name);
    if (!handle || !handle->hasSchema()) continue;
    // A kernel registered for exactly this key; the backend's boxed fallback does not count (it is no kernel the
    // backend wrote for the op), nor do CompositeImplicitAutograd decompositions that run on every device.
    if (handle->hasKernelForDispatchKey(key))
      ops.push_back(name.overload_name.empty() ? name.name : name.name + "." + name.overload_name);
  }
  std::sort(ops.begin(), ops.end());
  return ops;
}

bool use_device_index(DeviceSetup& dev, int index, std::string& error) {
  if (index < 0) return true;
  const at::DeviceType type = dev.device.type();
  if (type == at::kCPU) {
    error = "device cpu has no device indices; drop --devices or choose an accelerator";
    return false;
  }
  try {
    const auto* guard = c10::impl::getDeviceGuardImpl(type);
    const int count = guard->deviceCount();
    if (index >= count) {
      error = "device index " + std::to_string(index) + " is out of range: " + dev.device.str() + "'s backend has " +
              std::to_string(count) + " device(s)";
      return false;
    }
    dev.device = at::Device(type, static_cast<c10::DeviceIndex>(index));
    guard->setDevice(dev.device);
    return true;
  } catch (...) {
    error = "selecting device index " + std::to_string(index) + " failed: " + op_error_of(std::current_exception()).text();
    return false;
  }
}

namespace {

std::string joined(const std::vector<std::string>& items, const char* separator) {
  std::string out;
  for (const auto& i : items) out += (out.empty() ? "" : separator) + i;
  return out;
}

/// The device a Python host registered, set up as the device under test.
void take_python_device(const ExecOptions& opts, const std::string& registered, int index,
                        const PythonHostFacts& facts, DeviceSetup& out) {
  out.device = at::Device(c10::DeviceType::PrivateUse1, static_cast<c10::DeviceIndex>(std::max(index, 0)));
  out.name = opts.device_name.empty() ? registered : opts.device_name;
  out.python_device = registered + ":" + std::to_string(std::max(index, 0));
  out.python_modules.push_back("torch " + facts.torch_version);
}

/// Inductor generates code only for devices with a code generator registered (torch._inductor.codegen.common), and a
/// PrivateUse1 backend registers its own or has none: without one every case would fail its compile the same way, so
/// the run says it once and no case pays for a compile.
void note_compile_support(const ExecOptions& opts, const PythonHostFacts& facts, DeviceSetup& out) {
  if (opts.compile_backend != "inductor" || out.device.type() != c10::DeviceType::PrivateUse1 ||
      facts.privateuse1_inductor_codegen)
    return;
  // The name inductor was asked about: the one the interpreter's PrivateUse1 had (this process never imports).
  const std::string type = facts.privateuse1_name.empty() ? "privateuseone" : lower(facts.privateuse1_name);
  out.compile_unsupported = "inductor has no code generator for device '" + type +
                            "' (torch._inductor.codegen.common.get_scheduling_for_device('" + type +
                            "') is None): the backend registers none. Fix: register one "
                            "(register_backend_for_device), or compile with another backend (--compile-backend "
                            "aot_eager)";
  out.log_line.insert(out.log_line.size() - 1, "; inductor has no code generator for '" + type +
                                                   "': every case is NOT_SUPPORTED without compiling");
}

/// What a backend that left PrivateUse1 unrenamed did not register of what a device needs ("no device guard and no
/// allocator"), "" when it registered kernels, a guard and an allocator: such a backend is a device under its key's
/// own name.
std::string unregistered_parts(const PythonHostFacts& facts, const std::vector<std::string>& enabled_ops) {
  std::vector<std::string> missing;
  if (enabled_ops.empty()) missing.push_back("no kernels");
  if (!facts.privateuse1_guard) missing.push_back("no device guard");
  if (!facts.privateuse1_allocator) missing.push_back("no allocator");
  std::string out;
  for (std::size_t i = 0; i < missing.size(); ++i)
    out += (i == 0 ? "" : i + 1 == missing.size() ? " and " : ", ") + missing[i];
  return out;
}

/// The torch.backends entry points the imported modules' distributions declare, as a clause that says to use them:
/// the backend's team renames and registers the device there (torch's autoload calls it on `import torch`); "" when
/// none declares one.
std::string entry_point_hint(const PythonHostFacts& facts) {
  std::string out;
  for (const auto& [module, entries] : facts.module_entry_points)
    for (const auto& e : entries) {
      // "name = module:attr (distribution version)": the call is module:attr.
      const auto eq = e.find(" = ");
      const std::string value = eq == std::string::npos ? e : e.substr(eq + 3, e.find(' ', eq + 3) - eq - 3);
      out += "; " + module + "'s distribution declares the torch.backends entry point " + e + ": use it with " +
             "--device-import " + value + " (opcheck imports the module, then calls " + value.substr(value.find(':') + 1) +
             "()), or let torch load it (install the distribution, leave TORCH_DEVICE_BACKEND_AUTOLOAD unset and drop "
             "--device-import)";
    }
  return out;
}

/// What the torch.backends entry points came to, for a device name that is none of theirs ("" when they were not
/// listed: a library or modules name the device).
std::string installed_hint(const ExecOptions& opts, const std::string& registered) {
  if (!may_be_installed_backend(opts.device, opts.device_lib, !opts.device_imports.empty())) return {};
  const std::string python = python_host_config(opts).python;
  std::string hint;
  if (!opts.installed_backends_note.empty()) {
    hint = "; " + opts.installed_backends_note;
  } else if (opts.installed_backends.empty()) {
    hint = "; no backend is installed as a torch.backends entry point in " + python;
  } else {
    hint = "; the backends installed as torch.backends entry points in " + python + " (" +
           joined(opts.installed_backends, "; ") + ") register " +
           (registered.empty() || registered == "privateuseone" ? std::string("no device")
                                                                : "'" + registered + "' (--device " + registered + ")");
  }
  return hint + "; a backend registered from Python that torch does not load on its own needs --device-import MODULE";
}

/// Why a device type libtorch knows is not there, with the most likely remedy first: for a type libtorch supports
/// itself (cuda, xpu, mps, hip), a machine and a libtorch with that support; for any other (opencl, vulkan, ...), the
/// backend that registers it, since libtorch's own enum value is only a name.
std::string unavailable_device_text(const ExecOptions& opts, const std::string& type, const std::string& registered) {
  const std::string head = "device '" + opts.device + "' is not available: ";
  if (type == "cuda" || type == "xpu" || type == "mps" || type == "hip")
    return head + "the linked libtorch (" + TORCH_VERSION + ") has no working " + type +
           " support on this machine. Fix: run on a machine with that device and a libtorch built with " + type +
           " support; --device loopback or cpu runs opcheck without it" + installed_hint(opts, registered);
  return head + "no backend registers '" + type + "' in this process (libtorch " + TORCH_VERSION +
         " knows the name but has no " + type + " kernels of its own). Fix: install the backend that registers '" +
         type + "' (a torch.backends entry point in " + python_host_config(opts).python +
         "), or load it with --device-import MODULE (a Python module) or --device-lib PATH (a C++ library); "
         "--device loopback or cpu runs opcheck without it" + installed_hint(opts, registered);
}

}  // namespace

/// --device-import: the device exists only in processes that ran the imports, so a child reports what they
/// registered; the workers start their own interpreters (Engine::prepare_worker).
bool setup_python_device(const ExecOptions& opts, const std::string& type, int index, DeviceSetup& out,
                         std::string& error) {
  if (!opts.device_lib.empty()) {
    error = "--device-import and --device-lib both name the device under test; a process holds one PrivateUse1 "
            "backend. Fix: drop one of them";
    return false;
  }
  PythonHostFacts facts;
  if (!probe_python_device(opts, facts, out.enabled_ops, error)) return false;
  std::string modules;
  for (const auto& m : opts.device_imports) modules += (modules.empty() ? "" : ", ") + m;
  const std::string registered = lower(facts.privateuse1_name);
  std::string unrenamed;  // for the log line: a backend taken under PrivateUse1's own name, and its entry point
  if (registered == "privateuseone") {
    const std::string missing = unregistered_parts(facts, out.enabled_ops);
    const std::string entry = entry_point_hint(facts);
    if (!missing.empty()) {
      error = "importing " + modules + " registered no device: PrivateUse1 keeps its name 'privateuseone' and has " +
              missing + entry + ". Fix: " +
              (entry.empty() ? "import the module that registers the backend's kernels, device guard and allocator "
                               "(and renames it: torch.utils.rename_privateuse1_backend)"
                             : "call the entry point as torch's autoload does (--device-import MODULE:FUNCTION, as "
                               "named above), or install the distribution and drop --device-import");
      return false;
    }
    unrenamed = "; PrivateUse1 keeps its name 'privateuseone': " + modules +
                " registered kernels, a device guard and an allocator without renaming it, so the device is taken "
                "as privateuseone" + entry;
  }
  if (type != "auto" && type != "privateuseone" && type != "privateuse1" && type != registered) {
    error = "--device " + opts.device + " is not the device that importing " + modules + " registers ('" +
            registered + "'). Fix: use --device " + registered + " (or auto)";
    return false;
  }
  take_python_device(opts, registered, index, facts, out);
  for (const auto& [m, v] : facts.module_versions) out.python_modules.push_back(m + (v.empty() ? "" : " " + v));
  std::string autoloaded;  // an import that is an entry point torch's autoload called already: not called twice
  for (const auto& [spec, entry] : facts.autoloaded_imports)
    autoloaded += "; --device-import " + spec + ": torch's autoload already ran it (torch.backends entry point " +
                  entry + "); not run again";
  out.log_line = "device: " + out.name + " (" + registered + ":" + std::to_string(std::max(index, 0)) +
                 ", registered from Python by " + modules + " with torch " + facts.torch_version + ", " +
                 std::to_string(out.enabled_ops.size()) + " ops with own kernels" + unrenamed + autoloaded + ")";
  note_compile_support(opts, facts, out);
  return true;
}


/// A backend installed as a torch.backends entry point: `import torch` loads it, in a child now and in every worker
/// later, with no --device-import. `taken` says whether `type` is the device it registers (or auto/privateuseone);
/// when not, the caller goes on with the built-in devices and `registered` names what the backends registered.
bool setup_installed_device(const ExecOptions& opts, const std::string& type, int index, DeviceSetup& out,
                            bool& taken, std::string& registered, std::string& error) {
  taken = false;
  PythonHostFacts facts;
  std::vector<std::string> enabled_ops;
  if (!probe_python_device(opts, facts, enabled_ops, error)) return false;
  registered = lower(facts.privateuse1_name);
  const bool generic = type == "auto" || type == "privateuseone" || type == "privateuse1";
  std::string unrenamed;
  if (registered == "privateuseone") {
    if (!generic) return true;
    const std::string missing = unregistered_parts(facts, enabled_ops);
    if (!missing.empty()) {
      error = "the backends installed as torch.backends entry points in " + python_host_config(opts).python + " (" +
              joined(opts.installed_backends, "; ") + ") registered no device when `import torch` loaded them " +
              "(PrivateUse1 keeps its name 'privateuseone' and has " + missing +
              "). Fix: check that the backend renames and registers PrivateUse1 in its entry point, or pass " +
              "--device-lib PATH or --device-import MODULE";
      return false;
    }
    unrenamed = "; PrivateUse1 keeps its name 'privateuseone': the backend registered kernels, a device guard and an "
                "allocator without renaming it, so the device is taken as privateuseone";
  }
  if (!generic && type != registered) return true;
  taken = true;
  take_python_device(opts, registered, index, facts, out);
  out.enabled_ops = std::move(enabled_ops);
  for (const auto& e : opts.installed_backends) out.python_modules.push_back(e);
  out.log_line = "device: " + out.name + " (" + out.python_device + ", the backend installed as torch.backends " +
                 "entry point " + joined(opts.installed_backends, "; ") + ", loaded by import torch, torch " +
                 facts.torch_version + ", " + std::to_string(out.enabled_ops.size()) + " ops with own kernels" +
                 (type == "auto" ? "; auto: the one installed torch.backends entry point" : "") + unrenamed + ")";
  note_compile_support(opts, facts, out);
  return true;
}

bool setup_device(const ExecOptions& opts, DeviceSetup& out, std::string& error) {
  out = DeviceSetup{};
  // The run's settings took the library from OPCHECK_DEVICE_LIB when no flag gave one (settings/run_settings.h).
  std::string device_lib = opts.device_lib;

  std::string type;
  int index = -1;
  split_index(lower(opts.device.empty() ? std::string("auto") : opts.device), type, index);
  if (!opts.device_imports.empty()) return setup_python_device(opts, type, index, out, error);
  std::string registered;  // by the installed torch.backends entry points, when they were asked
  if (!opts.installed_backends.empty() && device_lib.empty() && type != "cpu" && type != "loopback") {
    bool taken = false;
    if (!setup_installed_device(opts, type, index, out, taken, registered, error)) return false;
    if (taken) return true;
  }
  PythonHostFacts facts;  // of the interpreter compiled runs start
  if (!opts.compile_backend.empty()) {
    // Compiled runs start Python in every worker: its torch is checked once, before any case runs.
    std::vector<std::string> unused;
    if (!probe_python_device(opts, facts, unused, error)) return false;
    out.python_modules.push_back("torch " + facts.torch_version);
  }
  std::string why;  // for the log line: how "auto" decided
  type = resolve_auto_device(type, device_lib, false, &why);

  // A device library only serves a PrivateUse1 device. It is not an error to have one configured (callers merge
  // OPCHECK_DEVICE_LIB into opts), but the log line says it was not loaded.
  auto library_unused = [&](const std::string& device) {
    if (!device_lib.empty()) why = "device library " + device_lib + " not loaded: --device " + device + " uses none";
    return false;
  };

  if (type == "cpu") {
    if (library_unused("cpu")) return false;
    if (!check_index(opts.device, c10::DeviceType::CPU, index, opts.start_timeout_s, error)) return false;
    out.device = at::Device(at::kCPU);
    out.name = opts.device_name.empty() ? "cpu" : opts.device_name;
  } else if (type == "loopback") {
    if (library_unused("loopback")) return false;
    std::string lib = find_loopback_library(opts, error);
    if (lib.empty()) return false;
    if (!load_privateuse1_library(lib, error)) return false;
    if (!check_index(opts.device, c10::DeviceType::PrivateUse1, index, opts.start_timeout_s, error)) return false;
    out.device = at::Device(c10::DeviceType::PrivateUse1, static_cast<c10::DeviceIndex>(index));
    out.lib = g_loaded_privateuse1_lib;
    out.name = opts.device_name.empty() ? "loopback" : opts.device_name;
  } else if (type == "privateuseone" || type == "privateuse1" || type == lower(privateuse1_name()) ||
             (!device_lib.empty() && type != "cuda" && type != "xpu" && type != "mps" && type != "meta")) {
    // A library is loaded first so that a backend which renames PrivateUse1 (libtorch >= 2.1) has done so before
    // the requested name is compared with the registered one.
    if (!device_lib.empty()) {
      if (!load_privateuse1_library(device_lib, error)) return false;
      out.lib = g_loaded_privateuse1_lib;
    } else if (!c10::impl::hasDeviceGuardImpl(c10::DeviceType::PrivateUse1)) {
      error = "device '" + opts.device +
              "' needs a PrivateUse1 backend, and none is registered. Fix: pass --device-lib PATH (or set "
              "OPCHECK_DEVICE_LIB), or use --device loopback";
      return false;
    }
    const std::string registered = lower(privateuse1_name());
    if (type != "privateuseone" && type != "privateuse1" && type != registered) {
      error = "device '" + opts.device + "' is not the name the loaded backend registered ('" + registered +
              "'). Fix: use --device " + registered + " or --device privateuseone";
      return false;
    }
    if (!check_index(opts.device, c10::DeviceType::PrivateUse1, index, opts.start_timeout_s, error)) return false;
    out.device = at::Device(c10::DeviceType::PrivateUse1, static_cast<c10::DeviceIndex>(index));
    out.name = opts.device_name.empty() ? registered : opts.device_name;
  } else {
    c10::DeviceType t;
    try {
      t = c10::Device(type).type();
    } catch (const c10::Error&) {
      error = "unknown device '" + opts.device +
              "'. Fix: use auto, cpu, loopback, privateuseone (with --device-lib), or a device type libtorch knows "
              "(cuda, xpu, mps)" + installed_hint(opts, registered);
      return false;
    }
    if (library_unused(type)) return false;
    DeviceProbe probe;
    if (!probe_in_child(opts.device, t, opts.start_timeout_s, probe, error)) return false;
    if (!probe.present) {
      error = unavailable_device_text(opts, type, registered);
      return false;
    }
    if (!check_index(opts.device, t, index, opts.start_timeout_s, error, &probe)) return false;
    out.device = at::Device(t, static_cast<c10::DeviceIndex>(index));
    out.name = opts.device_name.empty() ? type : opts.device_name;
  }

  if (!out.lib.empty()) out.lib_sha256 = sha256_file(out.lib);
  out.enabled_ops = ops_with_kernel_for(dispatch_key_for(out.device.type()));

  out.log_line = "device: " + out.name + " (" + out.device.str();
  if (!out.lib.empty()) out.log_line += ", " + out.lib;
  out.log_line += ", " + std::to_string(out.enabled_ops.size()) + " ops with own kernels";
  if (!why.empty()) out.log_line += "; " + why;
  out.log_line += ")";
  note_compile_support(opts, facts, out);
  return true;
}

}  // namespace opcheck::exec
