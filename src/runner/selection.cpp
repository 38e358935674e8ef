#include "runner/selection.h"

#include <cstdlib>
#include <filesystem>

#include "select/marker_registry.h"

namespace fs = std::filesystem;

namespace opcheck {

std::vector<std::string> manifest_paths(const SelectionRequest& r, const std::string& shipped) {
  if (!r.manifests.empty()) return r.manifests;
  std::vector<std::string> out{shipped};
  if (const char* extra = std::getenv("OPCHECK_MANIFESTS")) {
    const std::string s = extra;
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

Loaded load_and_select(const SelectionRequest& r, const std::string& shipped) {
  Loaded out;
  const auto paths = manifest_paths(r, shipped);
  out.set = load_manifests(paths);
  out.diagnostics.append(r.input_problems);
  out.diagnostics.append(out.set.diagnostics);

  // The registry: the shipped one, plus a markers.yaml at the top of any folder given.
  MarkerRegistry registry;
  std::vector<std::string> registries{shipped + "/markers.yaml"};
  for (const auto& p : paths) {
    std::error_code ec;
    if (fs::is_directory(p, ec)) registries.push_back((fs::path(p) / "markers.yaml").string());
  }
  for (const auto& file : registries) {
    std::error_code ec;
    if (fs::exists(file, ec)) load_marker_registry(file, registry, out.diagnostics);
  }

  out.registered_marks = marker_names(registry);
  out.selected = select_loaded(out.set, r, out.registered_marks);
  out.diagnostics.append(out.selected.diagnostics);
  return out;
}

Selected select_loaded(const ManifestSet& set, const SelectionRequest& r,
                       const std::vector<std::string>& registered_marks) {
  Selection sel;
  sel.models = r.models;
  sel.variant = r.variant;
  sel.mark_expr = r.mark_expr;
  sel.keyword_expr = r.keyword_expr;
  sel.strict_markers = r.strict_markers;
  sel.ids = r.ids;
  sel.deselect = r.deselect;
  sel.registered_markers = registered_marks;
  return select_cases(set, sel);
}

bool load_status_config_for(const std::string& flag, const std::vector<std::string>& manifest_paths, StatusConfig& out,
                            DiagnosticList& diagnostics) {
  const std::string path = !flag.empty() ? flag : default_status_config_path(manifest_paths, diagnostics);
  return path.empty() || load_status_config(path, out, diagnostics);
}

}  // namespace opcheck
