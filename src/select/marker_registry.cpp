#include "select/marker_registry.h"

#include "common/regular_file.h"
#include "common/yaml_tree.h"

#include <fstream>
#include <set>
#include <sstream>

namespace opcheck {
namespace {

bool is_python_identifier(const std::string& s) {
  if (s.empty()) return false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    bool digit = c >= '0' && c <= '9';
    if (!(alpha || (i > 0 && digit))) return false;
  }
  return true;
}

SourceLoc loc_of(const std::string& path, const yaml::NodeRef& n) { return {path, n.line(), n.col()}; }

const char* const kShape = "write `markers: {name: description, ...}`";

}  // namespace

bool load_marker_registry_text(const std::string& path, const std::string& text, MarkerRegistry& out,
                               DiagnosticList& diags) {
  const std::size_t errors_before = diags.error_count();
  yaml::Tree tree;
  yaml::ParseError perr;
  if (!yaml::parse_yaml(text, tree, perr)) {
    if (!yaml::has_content(text)) {  // the reader's own wording for an empty stream speaks of manifests
      diags.error({path, 0, 0}, "the marker registry is empty", {}, kShape);
      return false;
    }
    diags.error({path, perr.line, perr.col}, perr.message, {}, perr.fix.empty() ? kShape : perr.fix);
    return false;
  }
  const yaml::NodeRef top = tree.root();
  if (!top.is_mapping()) {
    diags.error(loc_of(path, top), "the marker registry must be a mapping with the key `markers`, not " + top.describe(),
                {}, kShape);
    return false;
  }
  yaml::NodeRef map;
  for (std::size_t i = 0; i < top.size(); ++i) {
    const yaml::NodeRef key = top.key(i);
    if (key.text() == "markers")
      map = top.value(i);
    else
      diags.error(loc_of(path, key),
                  "unknown key `" + std::string(key.text()) + "` in the marker registry (the only key is `markers`)");
  }
  if (!map) {
    diags.error(loc_of(path, top), "the marker registry has no `markers` key", {}, kShape);
    return false;
  }
  if (!map.is_mapping()) {
    diags.error(loc_of(path, map), "`markers` must be a mapping of marker name to description, not " + map.describe(),
                {}, kShape);
    return false;
  }
  // Registries of several folders may declare the same marker: the first description stands. Within one file a
  // second entry is a mistake (the YAML reader already rejects a duplicate key).
  std::set<std::string> earlier;
  for (const auto& entry : out) earlier.insert(entry.first);
  for (std::size_t i = 0; i < map.size(); ++i) {
    const yaml::NodeRef key = map.key(i);
    const yaml::NodeRef value = map.value(i);
    const std::string name(key.text());
    if (!is_python_identifier(name)) {
      diags.error(loc_of(path, key), "marker name `" + name + "` is not a Python identifier", {},
                  "use letters, digits and underscores, not starting with a digit");
      continue;
    }
    if (!value.is_scalar()) {
      diags.error(loc_of(path, value), "the description of marker `" + name + "` must be a string, not " +
                                           value.describe());
      continue;
    }
    const std::string description(value.text());
    if (description.find_first_not_of(" \t\r\n") == std::string::npos) {
      diags.error(loc_of(path, key), "marker `" + name + "` has no description", {},
                  "add a one-line description: `" + name + ": what the mark means`");
      continue;
    }
    if (earlier.count(name)) continue;
    out.emplace_back(name, description);
  }
  return diags.error_count() == errors_before;
}

bool load_marker_registry(const std::string& path, MarkerRegistry& out, DiagnosticList& diags) {
  std::string text, why;
  if (!read_regular_file(path, text, why)) {
    diags.error({path, 0, 0}, "cannot read the marker registry: " + why, {}, "check the path given to --markers");
    return false;
  }
  return load_marker_registry_text(path, text, out, diags);
}

std::vector<std::string> marker_names(const MarkerRegistry& registry) {
  std::vector<std::string> names;
  names.reserve(registry.size());
  for (const auto& entry : registry) names.push_back(entry.first);
  return names;
}

}  // namespace opcheck
