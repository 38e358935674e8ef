#include <CLI/CLI.hpp>
#include <filesystem>
#include <iostream>
#include <unistd.h>

#include "cli/cli.h"
#include "select/marker_registry.h"

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

std::vector<std::string> manifest_paths(const ManifestFlags& f) {
  if (!f.manifests.empty()) return f.manifests;
  std::vector<std::string> out{shipped_manifest_dir()};
  if (const char* extra = std::getenv("OPCHECK_MANIFESTS")) {
    std::string s = extra;
    std::size_t start = 0;
    while (start <= s.size()) {
      auto end = s.find(':', start);
      if (end == std::string::npos) end = s.size();
      if (end > start) out.push_back(s.substr(start, end - start));
      start = end + 1;
    }
  }
  return out;
}

Loaded load_and_select(const ManifestFlags& f) {
  Loaded out;
  const auto paths = manifest_paths(f);
  out.set = load_manifests(paths);
  out.diagnostics.append(out.set.diagnostics);

  // The registry: the shipped one, plus a markers.yaml at the top of any folder given.
  MarkerRegistry registry;
  std::vector<std::string> registries{shipped_manifest_dir() + "/markers.yaml"};
  for (const auto& p : paths) {
    std::error_code ec;
    if (fs::is_directory(p, ec)) registries.push_back((fs::path(p) / "markers.yaml").string());
  }
  for (const auto& r : registries) {
    std::error_code ec;
    if (fs::exists(r, ec)) load_marker_registry(r, registry, out.diagnostics);
  }

  Selection sel;
  sel.models = f.models;
  sel.variant = f.variant;
  sel.mark_expr = f.mark_expr;
  sel.keyword_expr = f.keyword_expr;
  sel.strict_markers = f.strict_markers;
  sel.ids = f.ids;
  sel.deselect = f.deselect;
  sel.registered_markers = marker_names(registry);
  out.selected = select_cases(out.set, sel);
  out.diagnostics.append(out.selected.diagnostics);
  return out;
}

bool load_command_config(const std::string& flag, const ManifestFlags& f, StatusConfig& out) {
  DiagnosticList diags;
  const std::string path = !flag.empty() ? flag : default_status_config_path(manifest_paths(f), diags);
  if (!path.empty() && !load_status_config(path, out, diags)) {
    print_diagnostics(diags);
    return false;
  }
  print_diagnostics(diags, /*errors_only=*/true);
  return true;
}

void print_error(const std::exception& e, const std::string& context) {
  const std::string what = e.what();
  if (what.find(": error: ") != std::string::npos) std::cerr << what << "\n";
  else std::cerr << "opcheck: error: " << context << what << "\n";
}

void print_diagnostics(const DiagnosticList& d, bool errors_only) {
  std::size_t hidden = 0;
  for (const auto& item : d.items) {
    // A warning about the command line itself (an -m mark nothing has) is about what the user just typed: always
    // shown. Warnings about the manifests are counted and left to `opcheck validate`.
    if (errors_only && item.severity == Diagnostic::Severity::Warning && !item.loc.file.empty()) {
      ++hidden;
      continue;
    }
    std::cerr << item.format() << "\n";
  }
  if (hidden)
    std::cerr << "opcheck: " << hidden << " warning" << (hidden == 1 ? "" : "s")
              << " about the manifests; `opcheck validate` lists them\n";
}

}  // namespace opcheck::cli
