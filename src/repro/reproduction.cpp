#include "repro/reproduction.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "common/regular_file.h"
#include "common/text.h"
#include "common/text_escape.h"
#include "common/typed_yaml.h"
#include "opcheck/device_environment.h"
#include "repro/bundle_layout.h"
#include "select/select.h"
#include "settings/device_choice.h"

namespace fs = std::filesystem;

namespace opcheck::repro {
namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  return s;
}

std::string json_string(const nlohmann::json& j, const char* key) {
  if (!j.is_object() || !j.contains(key) || !j[key].is_string()) return {};
  return j[key].get<std::string>();
}

/// The first of `name` in `library_dirs`, made canonical; "" when none exists.
std::string first_existing(const std::vector<std::string>& library_dirs, const std::string& name, bool directory) {
  for (const auto& dir : library_dirs) {
    const fs::path p = fs::path(dir) / name;
    std::error_code ec;
    if (directory ? fs::is_directory(p, ec) : fs::exists(p, ec)) return fs::weakly_canonical(p, ec).string();
  }
  return {};
}

}  // namespace

std::string find_bundle_folder(const std::string& bundle, const std::string& case_id, std::string& error) {
  std::error_code ec;
  const fs::path dir = absolute_path(bundle);
  if (fs::exists(dir / kBundleManifest, ec)) return dir.string();
  if (!fs::is_directory(dir, ec)) {
    error = "bundle folder " + dir.string() + " does not exist. Fix: pass a folder written by run --save-failures";
    return {};
  }
  if (case_id.empty()) {
    error = dir.string() + " holds no " + kBundleManifest +
            ". Fix: name the case (opcheck repro CASE_ID --bundle DIR) or pass the bundle's own folder";
    return {};
  }
  const fs::path inside = dir / bundle_folder_name(case_id);
  if (fs::exists(inside / kBundleManifest, ec)) return inside.string();
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (fs::exists(e.path() / kBundleManifest)) names.push_back(e.path().filename().string());
  const auto near = suggest_models(bundle_folder_name(case_id), names, 3);
  error = "no bundle of " + case_id + " in " + dir.string() + " (looked for " + inside.filename().string() + ")";
  if (!near.empty()) {
    error += "; bundles there that look alike:";
    for (const auto& n : near) error += " " + n;
  }
  error += ". Fix: rerun with --save-failures, or repro the case from its manifest (drop --bundle)";
  return {};
}

namespace {

/// The bundle's environment map, each name checked: the rerun line writes a name bare in front of the command, so a
/// name that is not a variable (`A;touch PWNED;B`), or not one a run records, would be a command. "" when all are
/// fine, else the located error.
std::string read_environment(const nlohmann::json& map, const std::string& file,
                             std::vector<std::pair<std::string, std::string>>& out) {
  std::string allowed;
  for (const char* name : kDeviceEnvironment) allowed += std::string(allowed.empty() ? "" : ", ") + name;
  for (const char* name : kOriginEnvironment) allowed += std::string(", ") + name;
  const std::string fix = "\n  Fix: the file was edited or was not written by `opcheck run --save-failures`: remove the "
                          "entry, or save the bundle again with --save-failures";
  for (const auto& [name, value] : map.items()) {
    const std::string where = printable_text(file) + ": error: /environment: ";
    if (!is_environment_name(name))
      return where + printable_text(in_quotes(name)) +
             " is not an environment variable name ([A-Za-z_][A-Za-z0-9_]*); the rerun command would run it" + fix;
    if (!is_rerun_environment_name(name))
      return where + in_quotes(name) + " is not a variable opcheck records for a rerun (" + allowed + ")" + fix;
    if (!value.is_string())
      return where + in_quotes(name) + " must be a string, got " + std::string(value.type_name()) + fix;
    out.emplace_back(name, value.get<std::string>());
  }
  return {};
}

}  // namespace

BundleFacts read_bundle_facts(const std::string& folder, std::string& warning, std::string& error) {
  BundleFacts out;
  std::ifstream in(fs::path(folder) / kBundleFacts);
  if (!in) return out;
  nlohmann::json facts;
  try {
    in >> facts;
  } catch (const std::exception& e) {
    warning = folder + "/" + kBundleFacts + " is not readable JSON: " + e.what();
    return out;
  }
  if (!facts.is_object()) return out;
  out.stage = json_string(facts, "stage");
  out.message = json_string(facts, "message");
  if (facts.contains("rerun_device_args") && facts["rerun_device_args"].is_array())
    for (const auto& a : facts["rerun_device_args"])
      if (a.is_string()) out.rerun_device_args.push_back(a.get<std::string>());
  if (facts.contains("environment") && facts["environment"].is_object())
    error = read_environment(facts["environment"], (fs::path(folder) / kBundleFacts).string(), out.environment);
  if (facts.contains("written_slots") && facts["written_slots"].is_array())
    for (const auto& k : facts["written_slots"])
      if (k.is_number_unsigned()) out.written_slots.push_back(k.get<std::size_t>());
  return out;
}

const Case* find_case(const ManifestSet& set, const std::vector<const Case*>& selected, const std::string& id,
                      std::string& error) {
  for (const Case* c : selected)
    if (c->id == id) return c;
  std::vector<std::string> ids;
  const Case* found = nullptr;
  for (const auto& m : set.manifests)
    for (const auto& c : m.cases) {
      if (!found && c.id == id) found = &c;
      ids.push_back(c.id);
    }
  // The model part matches as --model does (case-insensitive, '-' and '_' alike), so `repro gpt-oss::x` finds what
  // `--model gpt-oss` selects.
  if (const auto sep = id.find("::"); !found && sep != std::string::npos) {
    const std::string model = id.substr(0, sep), rest = id.substr(sep + 2);
    for (const auto& m : set.manifests)
      for (const auto& c : m.cases)
        if (!found && model_matches(model, c.model) && c.id.compare(c.model.size() + 2, std::string::npos, rest) == 0)
          found = &c;
  }
  if (found) return found;
  error = "no case " + id + " in the manifests";
  const auto near = suggest_models(id, ids, 3);
  if (!near.empty()) {
    error += " (did you mean";
    for (std::size_t i = 0; i < near.size(); ++i) error += (i ? " or " : " ") + near[i];
    error += "?)";
  }
  error += "\n  Fix: ids are model::case as `opcheck list-cases` prints them; add --manifests PATH for manifests "
           "outside the default set";
  return nullptr;
}

const Manifest* manifest_of(const ManifestSet& set, const Case& c) {
  for (const auto& m : set.manifests)
    for (const auto& x : m.cases)
      if (&x == &c) return &m;
  return nullptr;
}

std::vector<std::string> device_args(const std::vector<std::string>& given, const RunSettings& settings,
                                     const BundleFacts& facts) {
  const std::vector<std::string> mine = rerun_arguments(settings).args;  // flag, value pairs in the table's order
  if (facts.rerun_device_args.empty()) return mine;
  const auto was_given = [&given](const std::string& flag) {
    return std::find(given.begin(), given.end(), flag) != given.end();
  };
  // The bundle's device flags stay unless the user gave the same flag: `--reference-cache D` alone keeps the device.
  std::vector<std::string> out;
  const std::vector<std::string>& recorded = facts.rerun_device_args;
  for (std::size_t i = 0; i + 1 < recorded.size(); i += 2)
    if (!was_given(recorded[i])) out.insert(out.end(), {recorded[i], recorded[i + 1]});
  for (std::size_t i = 0; i + 1 < mine.size(); i += 2)
    if (was_given(mine[i])) out.insert(out.end(), {mine[i], mine[i + 1]});
  return out;
}

void as_the_run_would(const StatusConfig& config, const RunSettings& settings, const std::vector<std::string>& args,
                      Case& c, BundleFacts& facts) {
  const std::string device_name = !settings.device_name.empty() ? settings.device_name : arg_value(args, "--device");
  if (!config.rules.empty()) apply_status_config(config, c, device_name);
  facts.environment = rerun_arguments(settings).environment;
}

std::string arg_value(const std::vector<std::string>& args, const char* flag) {
  for (std::size_t i = 0; i + 1 < args.size(); ++i)
    if (args[i] == flag) return args[i + 1];
  return {};
}

bool script_device(const std::vector<std::string>& args, const std::vector<std::string>& library_dirs,
                   ScriptDevice& out, std::string& error) {
  for (std::size_t i = 0; i + 1 < args.size(); ++i) {
    if (args[i] == "--device-import") out.imports.push_back(args[i + 1]);
    if (args[i] == "--compile-backend") out.compile_backend = args[i + 1];
  }
  std::string device = lower(arg_value(args, "--device"));
  if (!out.imports.empty()) {
    // The imports register and name the device; the script uses the name the run used.
    const std::string chosen = resolve_auto_device(device, "", true);
    out.device = chosen == device ? device : chosen + ":0";
    out.python_path = first_existing(library_dirs, "python", true);
    return true;
  }
  const std::string lib = arg_value(args, "--device-lib");
  device = resolve_auto_device(device, lib, false);
  std::string type = device, index = "0";
  if (auto colon = device.find(':'); colon != std::string::npos) {
    type = device.substr(0, colon);
    index = device.substr(colon + 1);
  }
  if (type == "cpu") {
    out.device = "cpu";
    return true;
  }
  if (type == "loopback") {
    // opcheck's stand-in device, loadable into Python's torch (the same libtorch).
    out.library = first_existing(library_dirs, "libopcheck_loopback.so", false);
    if (out.library.empty()) {
      std::string looked;
      for (const auto& d : library_dirs) looked += (looked.empty() ? "" : ", ") + d;
      error = "cannot find libopcheck_loopback.so (looked in " + looked +
              "). Fix: build the opcheck_loopback target, or pass --device cpu or --device-lib PATH";
      return false;
    }
    out.device = "privateuseone:" + index;
    return true;
  }
  out.library = lib.empty() ? std::string() : absolute_path(lib);
  if (type == "privateuseone" || type == "privateuse1") out.device = "privateuseone:" + index;
  else out.device = device;  // cuda, cuda:1, xpu, or the name a backend registered
  return true;
}

void carry_environment(const std::vector<std::pair<std::string, std::string>>& environment, ScriptDevice& device) {
  device.environment.clear();
  device.module_paths.clear();
  device.python.clear();
  device.autoload.reset();
  // The one allow-list a rerun line carries (opcheck/device_environment.h), each name where a script takes it.
  for (const auto& [name, value] : environment) {
    if (!is_rerun_environment_name(name)) continue;
    if (name == "PYTHONPATH") device.module_paths = split_list(value, ':');  // on sys.path before torch loads
    else if (name == "OPCHECK_PYTHON") device.python = value;                // the interpreter the script runs under
    else if (name == "TORCH_DEVICE_BACKEND_AUTOLOAD") device.autoload = value;
    else device.environment.emplace_back(name, value);  // the faults and modes: set before the device loads
  }
}

ScriptBundle script_bundle(const std::string& folder, const BundleFacts& facts, ScriptDevice& device) {
  ScriptBundle bundle;
  bundle.folder = folder;
  bundle.written_slots = facts.written_slots;
  if (!facts.stage.empty())
    bundle.failure =
        facts.stage + (facts.message.empty() ? "" : ": " + facts.message.substr(0, facts.message.find('\n')));
  carry_environment(facts.environment, device);
  return bundle;
}

std::vector<std::string> rerun_words(const std::string& binary, const Case& c, const RerunSource& source,
                                     const std::vector<std::string>& device_args) {
  std::vector<std::string> words{binary, "run"};
  if (!source.bundle.empty()) {
    for (auto& w : input_words({(fs::path(source.bundle) / kBundleManifest).string()})) words.push_back(std::move(w));
  } else {
    for (auto& w : input_words({source.manifest}, source.config)) words.push_back(std::move(w));
    if (!c.variant.empty()) words.insert(words.end(), {"--variant", c.variant});
    words.push_back(exact_case_id(c.model, c.name));
  }
  words.insert(words.end(), device_args.begin(), device_args.end());
  words.push_back("-v");
  return words;
}

std::string rerun_text(const Case& c, const std::string& bundle, const BundleFacts& facts,
                       const std::vector<std::string>& words, const std::string& note) {
  // Comments hold names and paths with their control characters made visible: a line break would end the comment
  // and make the rest of the name a command.
  std::string out = "# " + printable_text(c.id) + ": " + printable_text(c.op) + " (" +
                    printable_text(absolute_path(c.loc.file)) + ":" + std::to_string(c.loc.line) + ")\n";
  if (!bundle.empty())
    out += "# bundle " + printable_text(bundle) + (facts.stage.empty() ? "" : ", recorded " + facts.stage) + "\n";
  if (!note.empty()) out += "# note: " + printable_text(note) + "\n";
  return out + environment_prefix(facts.environment) + join_words(words) + "\n";
}

std::string environment_prefix(const std::vector<std::pair<std::string, std::string>>& environment) {
  std::string out;
  for (const auto& [name, value] : environment) out += name + "=" + shell_word(value) + " ";
  return out;
}

std::string join_words(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : " ") + shell_word(w);
  return out;
}

}  // namespace opcheck::repro
