#include "cli/cmd_repro.h"

#include <CLI/CLI.hpp>

#include <filesystem>
#include <iostream>
#include <memory>

#include "common/text_escape.h"
#include "config/status_config.h"
#include "repro/bundle_layout.h"
#include "repro/reproduction.h"
#include "repro/script.h"

namespace fs = std::filesystem;

namespace opcheck::cli {

std::string opcheck_binary() {
  const fs::path here = fs::path(exe_dir()) / "opcheck";
  std::error_code ec;
  return fs::exists(here, ec) ? here.string() : std::string("opcheck");
}

void add_repro_command(CLI::App& app, Commands& commands) {
  auto flags = std::make_shared<ReproFlags>();
  ReproFlags& f = *flags;
  auto* cmd = app.add_subcommand(
      "repro", "Print a standalone reproduction of one case: the opcheck command that runs it alone, or (--python) "
               "a PyTorch script that builds the same inputs and calls the op on cpu and on the device");
  cmd->footer(
      "Examples:\n"
      "  opcheck repro gpt_oss::torch.mul.3 --device loopback\n"
      "  opcheck repro gpt_oss::torch.mul.3 --python > repro.py && python3 repro.py\n"
      "  OPCHECK_LOOPBACK_FAULTS='aten::mul.Tensor=bias:1e-1' opcheck run gpt_oss::torch.mul.3 --device loopback "
      "--save-failures failures\n"
      "  opcheck repro --bundle failures/gpt_oss__torch.mul.3 --python > repro.py   # the bundle that run saved\n"
      "A script runs under the Python opcheck was built against (its torch) whatever python3 starts it.\n"
      "The settings flags (--device ... --timeout) are run's; without any, a bundle's recorded ones are used.\n"
      "Exit codes: 0 printed, 2 a manifest does not load, 4 unknown case or bundle.");
  cmd->add_option("case", f.case_id, "Case id (model::case), as reports and list-cases print it");
  cmd->add_option("--bundle", f.bundle,
                  "A failure bundle folder (from run --save-failures), or the --save-failures folder holding the "
                  "case's bundle: its exact tensors and device flags are used")
      ->type_name("DIR");
  cmd->add_flag("--python", f.python, "Print the PyTorch script instead of the opcheck command");
  add_settings_flags(*cmd, f.settings);
  cmd->add_option("--config", f.config, "Status config (default: opcheck.yaml in a manifest folder)")
      ->type_name("FILE");
  add_manifest_flags(*cmd, f.manifest, true);
  commands.add(cmd, [flags, cmd] {
    flags->given_settings = given_setting_flags(*cmd);
    return cmd_repro(*flags);
  });
}

namespace {

/// The case `repro` reproduces, with the manifests that hold it and its bundle's facts.
struct Found {
  ManifestSet set;  // owns the case
  const Case* c = nullptr;
  std::string bundle;  // absolute bundle folder, or ""
  repro::BundleFacts facts;
};

int find_case(const ReproFlags& f, Found& out) {
  std::string error;
  if (!f.bundle.empty()) {
    out.bundle = repro::find_bundle_folder(f.bundle, f.case_id, error);
    if (out.bundle.empty()) {
      std::cerr << "opcheck: error: " << printable_lines(error) << "\n";
      return kUsageError;
    }
    const std::string manifest = (fs::path(out.bundle) / repro::kBundleManifest).string();
    out.set = load_manifests({manifest});
    print_diagnostics(out.set.diagnostics, /*errors_only=*/true);
    if (out.set.diagnostics.has_errors() || out.set.manifests.size() != 1 || out.set.manifests[0].cases.size() != 1) {
      std::cerr << "opcheck: error: " << printable_text(manifest) << " does not hold one loadable case\n";
      return kInterrupted;
    }
    out.c = &out.set.manifests[0].cases[0];
    if (!f.case_id.empty() && f.case_id != out.c->id)
      std::cerr << "opcheck: note: the bundle holds " << printable_text(out.c->id) << " (asked for "
                << printable_text(f.case_id) << ")\n";
    std::string warning;
    out.facts = repro::read_bundle_facts(out.bundle, warning, error);
    if (!warning.empty()) std::cerr << "opcheck: warning: " << printable_lines(warning) << "\n";
    if (!error.empty()) {
      std::cerr << error << "\n";
      return kInterrupted;
    }
    return kOk;
  }
  if (f.case_id.empty()) {
    std::cerr << "opcheck: error: name the case: opcheck repro CASE_ID (ids as list-cases prints them), or pass "
                 "--bundle DIR\n";
    return kUsageError;
  }
  Loaded l = load_and_select(f.manifest);
  print_diagnostics(l.diagnostics, /*errors_only=*/true);
  if (l.selected.usage_error) return kUsageError;
  out.c = repro::find_case(l.set, l.selected.cases, f.case_id, error);
  if (!out.c) {
    std::cerr << "opcheck: error: " << printable_lines(error) << "\n";
    return kUsageError;
  }
  out.set = std::move(l.set);  // the case points into the manifests, which move along with their vectors
  return kOk;
}

/// How many cases the rerun command's selection runs, loaded and selected as `run` will; "" when just this one.
std::string selection_note(const Case& c, const std::string& manifest) {
  ManifestFlags check;
  check.manifests = {manifest};
  check.variant = c.variant;
  check.ids = {exact_case_id(c.model, c.name)};
  Loaded l = load_and_select(check);
  const bool alone = l.selected.cases.size() == 1 && l.selected.cases[0]->name == c.name &&
                     l.selected.cases[0]->loc.line == c.loc.line;
  return alone ? std::string()
               : "this selection runs " + std::to_string(l.selected.cases.size()) + " cases, not this one alone";
}

}  // namespace

int cmd_repro(const ReproFlags& f) {
  Found found;
  if (int rc = find_case(f, found); rc != kOk) return rc;
  Case c = *found.c;

  RunSettings settings = f.settings;
  std::string error;
  if (!resolve_run_settings(settings, process_environment(), "opcheck-out", error)) {
    std::cerr << "opcheck: error: " << printable_lines(error) << "\n";
    return kUsageError;
  }
  const std::vector<std::string> args = repro::device_args(f.given_settings, settings, found.facts);
  if (found.bundle.empty()) {
    StatusConfig config;
    if (!load_command_config(f.config, f.manifest, config)) return kUsageError;
    repro::as_the_run_would(config, settings, args, c, found.facts);
  }

  if (f.python && c.is_module()) {
    std::cerr << "opcheck: error: " << printable_text(c.id) << " is a module case, which has no standalone script. "
              << "Fix: run it with --save-failures DIR: the calls inside it that are wrong with right inputs are "
              << "written as op cases (DIR/<case>/calls.yaml), each with a script of its own (docs/modules.md)\n";
    return kUsageError;
  }
  if (f.python) {
    repro::ScriptDevice device;
    if (!repro::script_device(args, library_dirs(), device, error)) {
      std::cerr << "opcheck: error: " << printable_lines(error) << "\n";
      return kUsageError;
    }
    if (device.device.rfind("privateuseone", 0) == 0 && device.library.empty())
      std::cerr << "opcheck: note: the script runs on " << device.device
                << " without loading a backend library; pass --device-lib PATH if Python needs one\n";
    repro::ScriptBundle bundle;
    if (found.bundle.empty()) repro::carry_environment(found.facts.environment, device);
    else bundle = repro::script_bundle(found.bundle, found.facts, device);
    std::cout << repro::python_repro_script(c, device, bundle);
    return kOk;
  }

  repro::RerunSource source;
  source.bundle = found.bundle;
  if (found.bundle.empty()) {
    source.manifest = repro::manifest_of(found.set, *found.c)->path;
    source.config = f.config;
  }
  const std::vector<std::string> words = repro::rerun_words(opcheck_binary(), c, source, args);
  const std::string note = found.bundle.empty() ? selection_note(c, words[3]) : std::string();
  std::cout << repro::rerun_text(c, found.bundle, found.facts, words, note);
  return kOk;
}

}  // namespace opcheck::cli
