// `opcheck validate [PATH]...`: load everything, report every problem, exit 2 on any error.
#include <iostream>
#include <optional>

#include "cli/cli.h"
#include "cli/exec_library.h"
#include "config/status_config.h"
#include "runner/op_check.h"
#include "runner/run_settings.h"

namespace opcheck::cli {

int cmd_validate(ManifestFlags f, const ValidateFlags& v) {
  if (!v.ops && !v.device_imports.empty()) {
    std::cerr << "opcheck: error: --device-import is used by --ops only\n  Fix: add --ops, or drop --device-import\n";
    return kUsageError;
  }
  // libtorch loads on another thread while the manifests are read.
  std::optional<ExecLibrary> exec_library;
  if (v.ops) exec_library.emplace();
  if (!v.paths.empty()) f.manifests.insert(f.manifests.end(), v.paths.begin(), v.paths.end());
  // Validation covers every file, templates and variants included.
  f.models.clear();
  f.variant = "all";
  Loaded l = load_and_select(f);
  // The status config is checked against every loaded case: an entry matching none is stale.
  const std::string config_path =
      !v.config.empty() ? v.config : default_status_config_path(manifest_paths(f), l.diagnostics);
  std::vector<const Case*> all;
  for (const auto& m : l.set.manifests)
    for (const auto& c : m.cases) all.push_back(&c);
  if (!config_path.empty()) {
    StatusConfig cfg;
    if (load_status_config(config_path, cfg, l.diagnostics)) check_status_config(cfg, all, l.diagnostics);
  }
  if (v.ops) {
    // The CPU reference's dispatcher knows every aten op; --device-import (or OPCHECK_DEVICE_IMPORT, as `run` reads
    // it) sets up the device its modules register, with the interpreter `run` would host (OPCHECK_PYTHON).
    PythonDeviceSettings py;
    std::string error;
    if (!resolve_python_device(v.device_imports, "none", process_environment(), py, error)) {
      std::cerr << "opcheck: error: " << error << "\n";
      return kUsageError;
    }
    ExecOptions opts;
    opts.device = py.imports.empty() ? "cpu" : "auto";
    opts.device_imports = py.imports;
    if (!py.python.empty()) opts.python = py.python;
    bool setup_failed = false;
    std::unique_ptr<Executor> ex = exec_library->create(opts, error, setup_failed);
    if (!ex) {
      std::cerr << "opcheck: error: validate --ops: " << error << "\n";
      return setup_failed ? kUsageError : kInternalError;
    }
    check_case_ops(*ex, all, l.diagnostics);
  }
  print_diagnostics(l.diagnostics);
  const std::size_t cases = all.size();
  const std::size_t errors = l.diagnostics.error_count();
  const std::size_t warnings = l.diagnostics.items.size() - errors;
  std::cout << l.set.manifests.size() << " manifest" << (l.set.manifests.size() == 1 ? "" : "s") << ", " << cases
            << " case" << (cases == 1 ? "" : "s") << (v.ops ? " (ops resolved and bound)" : "") << ": " << errors
            << " error" << (errors == 1 ? "" : "s") << ", " << warnings << " warning" << (warnings == 1 ? "" : "s")
            << "\n";
  if (l.selected.usage_error) return kUsageError;
  return errors ? kInterrupted : kOk;
}

}  // namespace opcheck::cli
