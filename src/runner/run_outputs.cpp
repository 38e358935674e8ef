#include "runner/run_outputs.h"

#include <filesystem>
#include <set>

#include "common/text_escape.h"
#include "repro/bundle_layout.h"
#include "runner/artifact_lock.h"

namespace opcheck {
namespace {

namespace fs = std::filesystem;

void add_tensor_files(const Case& c, std::vector<NamedPath>& inputs) {
  const auto add = [&](const TensorSpec& t) {
    if (!t.file.empty()) inputs.push_back({"the tensor file of case " + printable_text(c.id), t.file});
  };
  for (const Input& in : c.inputs) {
    if (in.kind == Input::Kind::Tensor) add(in.tensor);
    for (const TensorSpec& t : in.list) add(t);
  }
  if (c.module && !c.module->sizes_file.empty())
    inputs.push_back({"the size file of case " + printable_text(c.id), c.module->sizes_file});
}

std::vector<NamedPath> run_inputs(const RunRequest& r, const Loaded& loaded, const std::string& config_path) {
  std::vector<NamedPath> inputs;
  for (const auto& path : manifest_paths(r.selection, r.shipped_manifests)) {
    std::error_code ec;
    if (!fs::is_directory(path, ec)) inputs.push_back({"the manifest", path});
  }
  for (const Manifest& m : loaded.set.manifests) {
    inputs.push_back({"the manifest", m.path});
    for (const Case& c : m.cases) add_tensor_files(c, inputs);
  }
  // A manifest that did not load is still the user's file: its problems name it.
  std::set<std::string> named;
  for (const Diagnostic& d : loaded.diagnostics.items)
    if (!d.loc.file.empty() && named.insert(d.loc.file).second) inputs.push_back({"the manifest", d.loc.file});
  if (!config_path.empty()) inputs.push_back({"the status config", config_path});
  if (!r.baseline.empty()) inputs.push_back({"--baseline", r.baseline});
  if (!r.settings.durations_from.empty()) inputs.push_back({"--durations-from", r.settings.durations_from});
  return inputs;
}

}  // namespace

std::vector<std::string> run_path_clashes(const RunRequest& r, const Loaded& loaded,
                                          const std::vector<const Case*>& cases, const std::string& config_path,
                                          const std::string& journal_path) {
  std::vector<std::string> models;
  for (const Manifest& m : loaded.set.manifests)
    for (const Case& c : m.cases) models.push_back(c.model);
  for (const Case* c : cases) models.push_back(c->model);
  std::vector<NamedPath> outputs = report_outputs(r.reports, models);
  if (!r.session.results_cache.empty()) outputs.push_back({"--results-cache", r.session.results_cache});
  outputs.push_back({"the journal of --artifact-dir", journal_path});
  outputs.push_back({"the lock of --artifact-dir", ArtifactLock::file_in(r.session.artifact_dir)});
  std::vector<NamedPath> bundles;
  if (!r.settings.save_failures_dir.empty())
    for (const Case* c : cases)
      bundles.push_back({"--save-failures's folder for case " + printable_text(c->id),
                         (fs::path(r.settings.save_failures_dir) / repro::bundle_folder_name(c->id)).string()});
  return path_clashes(outputs, run_inputs(r, loaded, config_path), bundles);
}

}  // namespace opcheck
