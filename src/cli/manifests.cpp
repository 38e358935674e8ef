#include <CLI/CLI.hpp>
#include <filesystem>
#include <iostream>
#include <unistd.h>

#include "cli/cli.h"
#include "report/console.h"

namespace fs = std::filesystem;

namespace opcheck::cli {

void add_manifest_flags(CLI::App& app, ManifestFlags& f, bool with_selection) {
  app.add_option("--manifests", f.manifests,
                 "Manifest file or folder (searched recursively for *.yaml/*.yml); repeatable. "
                 "Default: the manifests shipped with opcheck plus OPCHECK_MANIFESTS")
      ->type_name("PATH")
      ->allow_extra_args(false);
  if (!with_selection) return;
  app.add_option("--model", f.models,
                 "Model to select (case-insensitive, '-' and '_' alike, or a glob); repeatable. Default: all")
      ->type_name("NAME")
      ->allow_extra_args(false);
  app.add_option("--variant", f.variant,
                 "Backend variant: 'spyre' uses <model>_spyre.yaml instead of the base file where one exists; "
                 "'all' selects base and variant files")
      ->type_name("NAME");
  app.add_option("-m", f.mark_expr, "Select by marks with pytest's marker expression, e.g. \"not bf16operation\"")
      ->type_name("EXPR");
  app.add_option("-k", f.keyword_expr,
                 "Select by pytest's keyword expression over model, case name, op and marks, e.g. \"torch.add\"")
      ->type_name("EXPR");
  app.add_flag("--strict-markers", f.strict_markers, "A mark not registered in markers.yaml is an error");
}

void add_case_id_args(CLI::App& app, ManifestFlags& f) {
  app.add_option("--deselect", f.deselect,
                 "Leave out the cases of this id (MODEL::CASE, globs allowed, as the positional ids); repeatable")
      ->type_name("ID")
      ->allow_extra_args(false);
  // Positional arguments are pytest's: a case id (it holds "::"), or a manifest file or folder to read.
  app.add_option_function<std::vector<std::string>>(
         "ids",
         [&f](const std::vector<std::string>& args) {
           for (const auto& a : args) {
             std::error_code ec;
             if (a.find("::") == std::string::npos && fs::exists(a, ec)) f.manifests.push_back(a);
             else f.ids.push_back(a);
           }
         },
         "Case ids as list-cases prints them, like pytest's node ids: gpt_oss::torch.add.2; globs allowed "
         "('gpt_oss::torch.add.*', '*::torch.mul.1'); the model part is spelled as --model takes it. A manifest "
         "file or folder given here is read as with --manifests")
      ->type_name("ID|PATH");
}

std::string exe_dir() {
  std::error_code ec;
  auto p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string(".") : p.parent_path().string();
}

std::string shipped_manifest_dir() {
  std::error_code ec;
  const fs::path installed = fs::path(exe_dir()) / ".." / "share" / "opcheck" / "manifests";
  if (fs::is_directory(installed, ec)) return fs::weakly_canonical(installed, ec).string();
  if (fs::is_directory(OPCHECK_SOURCE_MANIFESTS, ec)) return OPCHECK_SOURCE_MANIFESTS;
  return std::string(OPCHECK_INSTALL_DATADIR) + "/manifests";
}

std::vector<std::string> manifest_paths(const ManifestFlags& f) { return opcheck::manifest_paths(f, shipped_manifest_dir()); }

Loaded load_and_select(const ManifestFlags& f) { return opcheck::load_and_select(f, shipped_manifest_dir()); }

bool load_command_config(const std::string& flag, const ManifestFlags& f, StatusConfig& out) {
  DiagnosticList diags;
  if (!load_status_config_for(flag, manifest_paths(f), out, diags)) {
    print_diagnostics(diags);
    return false;
  }
  print_diagnostics(diags, /*errors_only=*/true);
  return true;
}

void print_error(const std::exception& e, const std::string& context) { std::cerr << error_text(e, context); }

void print_diagnostics(const DiagnosticList& d, bool errors_only) { std::cerr << diagnostics_text(d, errors_only); }

}  // namespace opcheck::cli
