#include "exec/python_host.h"

#include "exec/device.h"

#include <dlfcn.h>

#include <filesystem>
#include <mutex>

namespace opcheck::exec {
namespace {

constexpr const char* kPyhostLibName = "libopcheck_pyhost.so";
using CreateHostFn = PythonHost* (*)();

std::mutex g_mutex;
PythonHost* g_host = nullptr;
PythonHostFacts g_facts;
std::string g_error;  // a failed start is not retried: the interpreter cannot be started twice

/// Beside the exec library (build tree, or <prefix>/<libdir>/opcheck when installed).
std::filesystem::path pyhost_path() {
  const std::string self = this_library_path();
  if (self.empty()) return {};
  return std::filesystem::path(self).parent_path() / kPyhostLibName;
}

}  // namespace

bool python_host_available(std::string& why) {
  const auto path = pyhost_path();
  std::error_code ec;
  if (!path.empty() && std::filesystem::exists(path, ec)) return true;
  // Appends, not a chain of operator+: gcc 12 warns on the inlined chain (-Warray-bounds, a false positive).
  why = "this opcheck was built without its Python device host (";
  why.append(kPyhostLibName)
      .append(" is not beside the exec layer): CMake found no Python development files (libpython) for the "
              "interpreter it was configured with. Fix: install them (Debian: python3-dev) and rebuild");
  return false;
}

PythonHost* python_host_if_started() {
  std::lock_guard<std::mutex> lock(g_mutex);
  return g_host;
}

PythonHost* python_host(const PythonHostConfig& config, PythonHostFacts& facts, std::string& error) {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (g_host != nullptr) {
    facts = g_facts;
    return g_host;
  }
  if (!g_error.empty()) {
    error = g_error;
    return nullptr;
  }
  std::string why;
  if (!python_host_available(why)) {
    error = g_error = why;
    return nullptr;
  }
  const auto path = pyhost_path();
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (handle == nullptr) {
    error = g_error = "cannot load the Python device host: " + std::string(dlerror());
    return nullptr;
  }
  auto create = reinterpret_cast<CreateHostFn>(dlsym(handle, "opcheck_create_python_host"));
  if (create == nullptr) {
    error = g_error = path.string() + " does not export opcheck_create_python_host";
    return nullptr;
  }
  PythonHost* host = create();
  if (!host->start(config, g_facts, why)) {
    error = g_error = why;
    return nullptr;
  }
  g_host = host;
  facts = g_facts;
  return g_host;
}

}  // namespace opcheck::exec
