// `opcheck validate [PATH]...`: load everything, report every problem, exit 2 on any error.
#include <algorithm>
#include <iostream>
#include <memory>
#include <optional>
#include <unordered_set>

#include <CLI/CLI.hpp>

#include "cli/cli.h"
#include "cli/exec_library.h"
#include "repro/bundle_layout.h"
#include "config/status_config.h"
#include "runner/op_check.h"
#include "settings/run_settings.h"
#include "runner/selection.h"

namespace opcheck::cli {
namespace {

/// What `validate` checks beyond the manifests themselves.
struct ValidateFlags {
  std::vector<std::string> paths;           // manifest files or folders
  std::string config;                       // --config
  bool ops = false;                         // --ops: resolve every op and bind its arguments (loads the exec layer)
  std::vector<std::string> device_imports;  // --device-import, with --ops
};

int cmd_validate(ManifestFlags f, const ValidateFlags& v) {
  if (!v.ops && !v.device_imports.empty()) {
    std::cerr << "opcheck: error: --device-import is used by --ops only\n  Fix: add --ops, or drop --device-import\n";
    return kUsageError;
  }
  // libtorch loads on another thread while the manifests are read.
  std::optional<ExecLibrary> exec_library;
  if (v.ops) exec_library.emplace();
  if (!v.paths.empty()) f.manifests.insert(f.manifests.end(), v.paths.begin(), v.paths.end());
  const ManifestFlags as_run = f;
  // Validation covers every file, templates and variants included.
  f.models.clear();
  f.variant = "all";
  Loaded l = load_and_select(f);
  // ... and says what `run` would say of the same inputs: the selection's warnings (a model that exists only as a
  // variant, so none of its cases run) come from selecting as run does.
  // Each text once, looked up in a set: a warning per distinct mark makes thousands (linear, not quadratic).
  std::unordered_set<std::string> known;
  for (const auto& e : l.diagnostics.items) known.insert(e.format());
  for (const auto& d : select_loaded(l.set, as_run, l.registered_marks).diagnostics.items)
    if (d.severity == Diagnostic::Severity::Warning && known.insert(d.format()).second) l.diagnostics.items.push_back(d);
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

}  // namespace

void add_validate_command(CLI::App& app, Commands& commands) {
  auto f = std::make_shared<ManifestFlags>();
  auto v = std::make_shared<ValidateFlags>();
  auto* validate =
      app.add_subcommand("validate", "Check manifests and report every problem with file:line (exit 2 on errors)");
  validate->footer("Example: opcheck validate   # the manifests shipped with opcheck; PATH... checks yours\n"
                   "         opcheck validate --config " +
                   repro::shell_word(shipped_manifest_dir() + "/opcheck.example.yaml") + "   # a status config, too\n"
                   "         opcheck validate --ops   # also resolve every op and bind its arguments");
  add_manifest_flags(*validate, *f, false);
  validate->add_flag("--strict-markers", f->strict_markers, "A mark not registered in markers.yaml is an error");
  validate
      ->add_option("-m", f->mark_expr,
                   "Check a marker expression (as run -m takes it) against the marks the manifests use and "
                   "markers.yaml declares")
      ->type_name("EXPR");
  validate
      ->add_option("--config", v->config,
                   "Status config to check against the manifests (stale and ambiguous entries); default: "
                   "opcheck.yaml in a manifest folder")
      ->type_name("FILE");
  validate->add_flag("--ops", v->ops,
                     "Also resolve every case's op and bind its arguments against the op schemas, as a run would "
                     "(loads libtorch; nothing runs)");
  validate
      ->add_option("--device-import", v->device_imports,
                   "With --ops: Python module to import first, so the ops it registers resolve (repeatable)")
      ->type_name("MODULE")
      ->allow_extra_args(false);
  validate->add_option("paths", v->paths, "Manifest files or folders (default: as --manifests)");
  commands.add(validate, [f, v] { return cmd_validate(*f, *v); });
}

}  // namespace opcheck::cli
