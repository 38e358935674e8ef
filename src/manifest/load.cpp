// The load stage's entry points: find manifest files, parse and normalize each, then make case ids unique.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>
#include <unordered_map>

#include "common/sha256.h"
#include "common/regular_file.h"
#include "common/stop_request.h"
#include "common/text_escape.h"
#include "manifest/narrow_inputs.h"
#include "manifest/normalize.h"
#include "manifest/v2_config.h"
#include "common/yaml_tree.h"
#include "opcheck/case.h"

namespace fs = std::filesystem;

namespace opcheck {
namespace {

constexpr std::uintmax_t kMaxManifestBytes = std::uintmax_t(256) << 20;

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

bool is_manifest_name(const fs::path& p) {
  const std::string ext = p.extension().string();
  if (ext != ".yaml" && ext != ".yml") return false;
  // Manifest folders may also hold the marker registry and status configs (opcheck.yaml, opcheck.<anything>.yaml
  // such as the shipped example); those are not manifests.
  const std::string name = p.filename().string();
  return name != "markers.yaml" && name.rfind("opcheck.", 0) != 0;
}

std::string variant_of(const std::string& path) {
  const std::string stem = fs::path(path).stem().string();
  return ends_with(stem, "_spyre") || ends_with(stem, "-spyre") ? "spyre" : "";
}

bool is_template_name(const std::string& path) {
  const std::string name = fs::path(path).filename().string();
  return ends_with(name, "template.yaml") || ends_with(name, "template.yml");
}

// Parses and normalizes one file's text; appends the manifest when the file as a whole is usable.
// `tree` is scratch space reused across files: its buffers keep their capacity, which spares the page faults of
// fresh allocations for every file.
void load_text(const std::string& path, const std::string& text, yaml::Tree& tree, ManifestSet& set) {
  yaml::ParseError perr;
  if (!yaml::parse_yaml(text, tree, perr)) {
    set.diagnostics.error(SourceLoc{path, perr.line, perr.col}, perr.message, {}, perr.fix);
    return;
  }
  if (is_v2_config(tree)) {
    // torch-spyre's v2 dialect: one Manifest per model its tests name, variant decided by the loader.
    std::vector<Manifest> ms;
    if (!normalize_v2_config(tree, path, ms, set.diagnostics)) return;
    const std::string digest = sha256_hex(text);
    for (auto& m : ms) {
      m.path = path;
      m.is_template = is_template_name(path);
      m.sha256 = digest;
      set.manifests.push_back(std::move(m));
    }
    return;
  }
  Manifest m;
  if (!normalize_manifest(tree, path, m, set.diagnostics)) return;
  m.path = path;
  m.variant = variant_of(path);
  m.is_template = is_template_name(path);
  m.sha256 = sha256_hex(text);
  for (auto& c : m.cases) c.variant = m.variant;
  set.manifests.push_back(std::move(m));
}

bool read_file(const std::string& path, std::string& out, DiagnosticList& diags) {
  // The path names every case's location and goes into the commands opcheck prints: held to the case-name rule.
  if (const std::size_t bad = first_control_character(path); bad != std::string::npos) {
    diags.error(SourceLoc{printable_text(path), 0, 0},  // every report and console line shows it escaped
                "the manifest's path contains a control character (at byte " + std::to_string(bad) + "); not loaded",
                {}, "rename the file (or its folder) to printable characters only");
    return false;
  }
  std::string why;
  if (read_regular_file(path, out, why, kMaxManifestBytes)) return true;
  if (why.rfind("is larger", 0) == 0)
    diags.error(SourceLoc{path, 0, 0}, "manifest is larger than 256 MB", {}, "split it into several files");
  else if (why.rfind("is ", 0) == 0)
    diags.error(SourceLoc{path, 0, 0}, why, {}, "name a regular *.yaml file or a folder of them");
  else
    diags.error(SourceLoc{path, 0, 0}, "cannot read the manifest: " + why, {}, "check that the file exists and is readable");
  return false;
}

// What a path that is neither a regular file nor a folder is, for messages.
std::string special_kind(const fs::file_status& st) {
  switch (st.type()) {
    case fs::file_type::fifo: return "FIFO (named pipe)";
    case fs::file_type::socket: return "socket";
    case fs::file_type::block: return "block device";
    case fs::file_type::character: return "character device";
    case fs::file_type::not_found: return "missing file";
    default: return "special file";
  }
}

// Every manifest file under `paths`, each once, folders expanded in sorted order.
std::vector<std::string> manifest_files(const std::vector<std::string>& paths, DiagnosticList& diags) {
  std::vector<std::string> files;
  std::set<std::string> seen;
  auto add = [&](const std::string& file) {
    std::error_code ec;
    fs::path key = fs::weakly_canonical(file, ec);
    if (seen.insert(ec ? file : key.string()).second) files.push_back(file);
  };
  for (const auto& p : paths) {
    std::error_code ec;
    fs::file_status st = fs::status(p, ec);
    if (ec || !fs::exists(st)) {
      diags.error(SourceLoc{p, 0, 0}, "no such manifest file or folder", {}, "check the path");
      continue;
    }
    if (!fs::is_directory(st)) {
      // Named explicitly: loaded whatever its name, but never opened unless it is a regular file (a FIFO would
      // block the read forever, a device would never end).
      if (!fs::is_regular_file(st))
        diags.error(SourceLoc{p, 0, 0}, "is a " + special_kind(st) + ", not a manifest file", {},
                    "name a regular *.yaml file or a folder of them");
      else
        add(p);
      continue;
    }
    std::vector<std::string> found;
    fs::recursive_directory_iterator it(p, fs::directory_options::skip_permission_denied, ec), end;
    for (; !ec && it != end; it.increment(ec)) {
      if (!is_manifest_name(it->path())) continue;
      std::error_code ec2;
      const fs::file_status target = it->status(ec2);  // follows links
      if (fs::is_regular_file(target)) {
        found.push_back(it->path().string());
      } else if (!fs::is_directory(target)) {
        // Named like a manifest but not one: its cases are missing from the run, which is an error of the input
        // (the run fails and its reports say which file), never a console warning only.
        const bool dangling = it->is_symlink(ec2) && !fs::exists(target);
        diags.error(SourceLoc{it->path().string(), 0, 0},
                    dangling ? "cannot load: a symbolic link to " + fs::read_symlink(it->path(), ec2).string() +
                                   ", which does not exist"
                             : "cannot load: a " + special_kind(target) + ", not a regular file",
                    {}, dangling ? "fix or remove the link" : "replace it with a regular file or remove it");
      }
    }
    if (ec) diags.error(SourceLoc{p, 0, 0}, "cannot list the folder: " + ec.message());
    std::sort(found.begin(), found.end());
    if (found.empty() && !ec) diags.warning(SourceLoc{p, 0, 0}, "no manifests (*.yaml, *.yml) in this folder");
    for (const auto& f : found) add(f);
  }
  return files;
}

// The stem of manifest `m`, or `folder/stem` when another of the clashing files `where` has the same stem (a v1
// manifest and a v2 config of one model are often both `<model>.yaml`).
std::string file_qualifier(const ManifestSet& set, const std::vector<std::pair<std::size_t, std::size_t>>& where,
                           std::size_t m) {
  const fs::path p(set.manifests[m].path);
  const std::string stem = p.stem().string();
  for (const auto& [other, c] : where) {
    (void)c;
    if (other == m || set.manifests[other].path == set.manifests[m].path) continue;
    if (fs::path(set.manifests[other].path).stem() == stem)
      return p.parent_path().filename().string() + "/" + stem;
  }
  return stem;
}

// Several files may declare one model; where their case ids clash, every clashing id gets its file stem.
void qualify_colliding_ids(ManifestSet& set) {
  std::unordered_map<std::string, std::vector<std::pair<std::size_t, std::size_t>>> by_id;
  for (std::size_t m = 0; m < set.manifests.size(); ++m)
    for (std::size_t c = 0; c < set.manifests[m].cases.size(); ++c)
      by_id[set.manifests[m].cases[c].id].emplace_back(m, c);
  // Walk the files in load order so the warnings come out in a stable order. A v1 manifest and a v2 config of one
  // model clash on nearly every id: a few warnings per set of files, then one that counts the rest.
  constexpr std::size_t kWarningsPerFiles = 3;
  std::map<std::string, std::pair<std::size_t, const Case*>> per_files;  // files -> clashes, last case not warned
  bool renamed = false;
  for (std::size_t m = 0; m < set.manifests.size(); ++m)
    for (std::size_t c = 0; c < set.manifests[m].cases.size(); ++c) {
      Case& cs = set.manifests[m].cases[c];
      const std::string id = cs.model + "::" + cs.name;
      auto it = by_id.find(id);
      if (it == by_id.end() || it->second.size() < 2) continue;
      const auto& where = it->second;
      std::string files;
      for (std::size_t k = 0; k < where.size(); ++k)
        files += (k ? ", " : "") + fs::path(set.manifests[where[k].first].path).filename().string();
      cs.id = cs.model + "::" + file_qualifier(set, where, m) + "/" + cs.name;
      renamed = true;
      auto& [clashes, last] = per_files[files];
      if (++clashes > kWarningsPerFiles) {
        last = &cs;
        continue;
      }
      set.diagnostics.warning(cs.loc,
                              "case id '" + id + "' is declared in " + std::to_string(where.size()) + " files (" +
                                  files + "); this one is '" + cs.id + "'",
                              cs.id, "give the cases distinct names if they are different calls");
    }
  for (const auto& [files, count] : per_files)
    if (count.first > kWarningsPerFiles)
      set.diagnostics.warning(count.second->loc,
                              std::to_string(count.first - kWarningsPerFiles) +
                                  " more cases have ids that are also declared in " + files +
                                  "; each is qualified with its file, as above",
                              {}, "give the cases distinct names if they are different calls");
  if (!renamed) return;
  // Files with the same stem in different folders still clash after qualifying: keep the first, drop the rest.
  std::unordered_map<std::string, const Case*> first;
  std::vector<std::vector<bool>> drop(set.manifests.size());
  for (std::size_t m = 0; m < set.manifests.size(); ++m) drop[m].assign(set.manifests[m].cases.size(), false);
  for (std::size_t m = 0; m < set.manifests.size(); ++m)
    for (std::size_t c = 0; c < set.manifests[m].cases.size(); ++c) {
      const Case& cs = set.manifests[m].cases[c];
      auto [it, inserted] = first.emplace(cs.id, &cs);
      if (!inserted) {
        set.diagnostics.error(cs.loc,
                              "case id '" + cs.id + "' is still not unique (also at " + it->second->loc.file + ":" +
                                  std::to_string(it->second->loc.line) + "); this case is dropped",
                              cs.id, "rename the case or the file");
        drop[m][c] = true;
      }
    }
  for (std::size_t m = 0; m < set.manifests.size(); ++m) {
    auto& cases = set.manifests[m].cases;
    std::size_t kept = 0;
    for (std::size_t c = 0; c < cases.size(); ++c)
      if (!drop[m][c]) {
        if (kept != c) cases[kept] = std::move(cases[c]);
        ++kept;
      }
    cases.resize(kept);
  }
}

}  // namespace

ManifestSet load_manifests(const std::vector<std::string>& paths) {
  ManifestSet set;
  std::string text;
  yaml::Tree tree;
  for (const auto& file : manifest_files(paths, set.diagnostics)) {
    if (stop_requested()) break;  // the run stops: what loaded so far is not run either
    if (!read_file(file, text, set.diagnostics)) continue;
    load_text(file, text, tree, set);
  }
  qualify_colliding_ids(set);
  narrow_random_inputs(set);
  return set;
}

ManifestSet load_manifest_text(const std::string& path, const std::string& text) {
  ManifestSet set;
  yaml::Tree tree;
  load_text(path, text, tree, set);
  narrow_random_inputs(set);
  return set;
}

}  // namespace opcheck
