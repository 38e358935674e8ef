#include "exec/python_device.h"

#include <filesystem>

#include <torch/version.h>

#include "exec/device.h"
#include "exec/startup_process.h"
#include "settings/device_choice.h"

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
  if (!start_startup_process(opts, facts, enabled_ops, error)) return false;
  const std::string python = "Python (" + python_host_config(opts).python + ")";

  // The interpreter's torch must be the libtorch opcheck runs: both live in one process.
  const std::string built = real_path(OPCHECK_TORCH_PREFIX);
  if (base_version(facts.torch_version) != base_version(TORCH_VERSION) || real_path(facts.torch_path) != built) {
    error = python + " imports torch " + facts.torch_version + " from " + facts.torch_path +
            ", but opcheck was built against libtorch " + TORCH_VERSION + " from " + built +
            ". Fix: rebuild opcheck against that torch (activate its environment, then scripts/run.sh --version, "
            "which reconfigures build/), or run with the interpreter opcheck was built with: OPCHECK_PYTHON=" +
            OPCHECK_BUILD_PYTHON;
    stop_startup_process();
    return false;
  }
  return true;
}

}  // namespace opcheck::exec
