// Reading the status config: YAML -> StatusConfig, every problem a located diagnostic.
#include "config/status_config.h"

#include <fstream>
#include <map>
#include <sstream>
#include <tuple>

#include "common/regular_file.h"
#include "common/spelling.h"
#include "common/text.h"
#include "common/yaml_tree.h"

namespace opcheck {

const char* triage_status_name(TriageStatus s) {
  switch (s) {
    case TriageStatus::Unset: return "";
    case TriageStatus::ExpectedPassing: return "expected_passing";
    case TriageStatus::Xfail: return "xfail";
    case TriageStatus::Skip: return "skip";
    case TriageStatus::Exclude: return "exclude";
  }
  return "";
}

namespace {
constexpr TriageStatus kSpelledStatuses[]{TriageStatus::ExpectedPassing, TriageStatus::Xfail, TriageStatus::Skip,
                                          TriageStatus::Exclude};
}  // namespace

std::optional<TriageStatus> parse_triage_status(std::string_view s) {
  for (TriageStatus t : kSpelledStatuses)
    if (s == triage_status_name(t)) return t;
  return std::nullopt;
}

const std::vector<std::string>& all_triage_status_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (TriageStatus t : kSpelledStatuses) out.emplace_back(triage_status_name(t));
    return out;
  }();
  return names;
}

bool RuleSettings::empty() const { return status == TriageStatus::Unset && !reason && !strict && !has_any(); }

namespace {

const char* const kShape = "write `rules:` followed by a list of entries such as `- {id: \"model::case.*\", status: xfail, "
                           "reason: <issue link>}`";

// Keys an entry may hold besides the settings keys, and the settings keys themselves (also allowed per device).
const std::vector<std::string>& selector_keys() {
  static const std::vector<std::string> k{"id", "op", "dtype", "device_overrides"};
  return k;
}
const std::vector<std::string>& settings_keys() {
  static const std::vector<std::string> k = [] {
    std::vector<std::string> keys{"status", "reason", "strict"};
    for (const CaseField& f : kCaseFields)
      if (f.config_key) keys.emplace_back(f.config_key);
    return keys;
  }();
  return k;
}

// Reads one config file. An entry with any error is left out.
class ConfigReader {
 public:
  ConfigReader(const std::string& path, DiagnosticList& diags)
      : diags_(diags), r_(path, diags, YamlVoice::StatusConfig) {}

  void read(const yaml::NodeRef& top, StatusConfig& out) {
    if (!top.is_mapping()) {
      r_.error(top, "the status config must be a mapping with the key `rules`, not " + top.describe(), kShape);
      return;
    }
    yaml::NodeRef rules;
    for (std::size_t i = 0; i < top.size(); ++i) {
      const yaml::NodeRef key = top.key(i);
      if (key.text() == "rules") {
        rules = top.value(i);
        continue;
      }
      const std::string k(key.text());
      std::string fix;
      const std::string hint = did_you_mean(k, std::vector<std::string>{"rules"});
      if (hint.empty() && (k == "id" || k == "status" || k == "device_overrides"))
        fix = "entries go in a list under `rules:`, e.g. `rules: [{id: \"model::case\", status: skip}]`";
      r_.error(key, "unknown key `" + k + "` at the top of the status config" + hint + " (the only key is `rules`)",
               fix);
    }
    if (!rules) {
      r_.error(top, "the status config has no `rules` key", kShape);
      return;
    }
    if (rules.is_scalar() && rules.style() == yaml::ScalarStyle::Plain && yaml::is_core_null(rules.text()))
      return;  // `rules:` with nothing under it: a config that says nothing yet
    if (!rules.is_sequence()) {
      r_.error(rules, "`rules` must be a list of entries, not " + rules.describe(), kShape);
      return;
    }
    std::map<std::tuple<std::string, std::string, std::string>, int> seen;  // selector -> line of first entry
    for (std::size_t i = 0; i < rules.size(); ++i) {
      ConfigRule rule;
      if (!read_rule(rules.item(i), rule)) continue;
      auto selector = std::make_tuple(rule.pattern, rule.op, rule.dtype);
      auto [it, fresh] = seen.emplace(selector, rule.loc.line);
      if (!fresh) {
        diags_.error(rule.loc,
                     "this entry selects the same cases as the entry at line " + std::to_string(it->second) +
                         " (id `" + rule.pattern + "`" + (rule.op.empty() ? "" : ", op `" + rule.op + "`") +
                         (rule.dtype.empty() ? "" : ", dtype " + rule.dtype) + ")",
                     {}, "merge the two entries into one");
        continue;
      }
      rule.index = out.rules.size();
      out.rules.push_back(std::move(rule));
    }
  }

 private:
  // A non-blank string. Other plain scalars are taken as their text (`op: 1` is then simply a name matching nothing).
  bool read_text(const yaml::NodeRef& key, const yaml::NodeRef& v, std::string& out) {
    return r_.read_string(v, key.text(), out, key);
  }

  // Whether the entry being read has had no error so far.
  bool entry_ok() const { return diags_.error_count() == entry_errors_; }

  void read_setting(const yaml::NodeRef& key, const yaml::NodeRef& v, RuleSettings& s) {
    const std::string k(key.text());
    if (k == "status") {
      std::string text;
      if (!read_text(key, v, text)) return;
      if (auto st = parse_triage_status(text)) {
        s.status = *st;
        return;
      }
      std::string fix = "use one of expected_passing, xfail, skip, exclude";
      if (text == "xfailed" || text == "expected_failure" || text == "known_failure" || text == "fail")
        fix = "a known failure is `status: xfail`";
      else if (text == "pass" || text == "passed" || text == "passing" || text == "ok")
        fix = "a case that must pass is `status: expected_passing`";
      else if (text == "skipped" || text == "deselect" || text == "deselected")
        fix = "`skip` runs nothing and reports the case skipped; `exclude` leaves it out of the run and the reports";
      r_.error(v, "unknown status `" + text + "`" + did_you_mean(text, all_triage_status_names()), fix);
    } else if (k == "reason") {
      std::string text;
      if (!v.is_scalar()) {
        r_.error(v, "`reason` must be a string, not " + v.describe(), "write free text, usually an issue link");
        return;
      }
      if (read_text(key, v, text)) s.reason = text;
    } else if (k == "strict") {
      bool b = false;
      if (r_.read_bool(v, k, b)) s.strict = b;
    } else if (const int field = case_field_for_key(k, /*manifest=*/false); field >= 0) {
      read_case_field(r_, static_cast<std::size_t>(field), key, v, s);
    }
  }

  void unknown_key(const yaml::NodeRef& key, const std::string& where, bool in_override) {
    const std::string k(key.text());
    std::vector<std::string> allowed = settings_keys();
    if (!in_override) allowed.insert(allowed.end(), selector_keys().begin(), selector_keys().end());
    std::string fix;
    std::string hint = did_you_mean(k, allowed);
    if (in_override && (k == "id" || k == "op" || k == "dtype" || k == "device_overrides")) {
      r_.error(key, "`" + k + "` cannot be set per device (in " + where + ")",
               "a device override may set only " + join(settings_keys()));
      return;
    }
    if (parse_triage_status(k)) {
      fix = "write `status: " + k + "`";
    } else if (k == "arch_overrides" || k == "devices" || k == "device" || k == "overrides") {
      fix = "per-device settings go under `device_overrides: {<device name>: {...}}`";
      hint.clear();
    } else if (k == "name" || k == "case" || k == "test") {
      fix = "`id:` takes the case id `model::name`, or a glob such as `\"*::" + std::string("torch.mul.*") + "\"`";
    } else if (k == "model") {
      fix = "match the model in the id: `id: \"<model>::*\"`";
    } else if (k == "xfail_if" || k == "skip_if") {
      fix = "conditions belong in the manifest; the config sets `status:` for the cases it matches";
    } else if (hint.empty()) {
      fix = "allowed keys: " + join(allowed);
    }
    r_.error(key, "unknown key `" + k + "` in " + where + hint, fix);
  }

  void read_settings_map(const yaml::NodeRef& map, RuleSettings& s, const std::string& where) {
    for (std::size_t i = 0; i < map.size(); ++i) {
      const yaml::NodeRef key = map.key(i);
      const std::string k(key.text());
      bool known = false;
      for (const auto& sk : settings_keys()) known = known || sk == k;
      if (known)
        read_setting(key, map.value(i), s);
      else
        unknown_key(key, where, true);
    }
  }

  void warn_reasonless(const RuleSettings& s, const std::optional<std::string>& rule_reason, const std::string& what) {
    if (s.status == TriageStatus::Unset || s.status == TriageStatus::ExpectedPassing || s.reason || rule_reason)
      return;
    diags_.warning(s.loc, what + " sets `status: " + triage_status_name(s.status) + "` without a `reason`", {},
                   "add `reason:` with the tracking issue, so reports say why");
  }

  bool read_rule(const yaml::NodeRef& entry, ConfigRule& rule) {
    entry_errors_ = diags_.error_count();
    rule.loc = r_.loc(entry);
    rule.settings.loc = rule.loc;
    if (!entry.is_mapping()) {
      r_.error(entry, "a config entry must be a mapping, not " + entry.describe(),
               "write `- {id: \"model::case\", status: xfail, reason: ...}`");
      return false;
    }
    if (entry.size() > 0) rule.loc = r_.loc(entry.key(0));
    rule.settings.loc = rule.loc;
    const std::string where = "a config entry";
    yaml::NodeRef id_node, op_node, dtype_node, overrides;
    for (std::size_t i = 0; i < entry.size(); ++i) {
      const yaml::NodeRef key = entry.key(i);
      const yaml::NodeRef v = entry.value(i);
      const std::string k(key.text());
      if (k == "id") {
        id_node = key;
        if (read_text(key, v, rule.pattern)) compile_id(v, rule);
      } else if (k == "op") {
        op_node = key;
        if (read_text(key, v, rule.op)) {
          std::string err;
          if (!Glob::compile(rule.op, rule.op_glob, err)) r_.error(v, "bad `op` pattern `" + rule.op + "`: " + err);
        }
      } else if (k == "dtype") {
        dtype_node = key;
        std::string text;
        if (read_text(key, v, text)) {
          if (auto dt = parse_dtype(text)) {
            rule.dtype_filter = *dt;
            rule.dtype = dtype_name(*dt);
          } else {
            r_.error(v, "unknown dtype `" + text + "`" + did_you_mean(text, all_dtype_names()),
                     "use a dtype name such as fp16, bf16, fp32 or torch.float16");
          }
        }
      } else if (k == "device_overrides") {
        overrides = v;
      } else {
        bool known = false;
        for (const auto& sk : settings_keys()) known = known || sk == k;
        if (known)
          read_setting(key, v, rule.settings);
        else
          unknown_key(key, where, false);
      }
    }
    if (!id_node) {
      rule.pattern = "*";
      std::string err;
      Glob::compile(rule.pattern, rule.id_glob, err);
      if (!op_node && !dtype_node && entry_ok())
        r_.error(
            entry, "this entry has no `id`, `op` or `dtype`, so it would apply to every case",
            "write `id: \"*\"` if every case is meant, else the case id or a glob such as `\"model::torch.mul.*\"`");
    }
    if (overrides) read_overrides(overrides, rule);
    if (rule.settings.strict && rule.settings.status != TriageStatus::Unset &&
        rule.settings.status != TriageStatus::Xfail)
      r_.error(entry,
               std::string("`strict` applies to `status: xfail`, and this entry sets `status: ") +
                   triage_status_name(rule.settings.status) + "`",
               "remove `strict`, or make the entry `status: xfail`");
    if (entry_ok() && rule.settings.empty() && rule.device_overrides.empty())
      r_.error(entry, "this entry sets nothing",
               "add `status:` (expected_passing, xfail, skip, exclude) or a tolerance/comparator setting");
    if (!entry_ok()) return false;
    warn_reasonless(rule.settings, std::nullopt, "this entry");
    for (const auto& [device, s] : rule.device_overrides)
      warn_reasonless(s, rule.settings.reason, "the `" + device + "` override");
    return true;
  }

  void compile_id(const yaml::NodeRef& v, ConfigRule& rule) {
    std::string err;
    if (!Glob::compile(rule.pattern, rule.id_glob, err)) {
      r_.error(v, "bad `id` pattern `" + rule.pattern + "`: " + err,
               "use `*`, `?` and `[...]`; write `\\[` for a literal bracket");
      return;
    }
    // Every case id holds `model::`, so a pattern with neither a star nor a colon can match nothing at all.
    if (rule.pattern.find('*') == std::string::npos && rule.pattern.find(':') == std::string::npos)
      r_.error(v, "`id` pattern `" + rule.pattern + "` can never match: case ids are `model::name`",
               "write `\"*::" + rule.pattern + "\"` for that case name in every model, or `\"<model>::" + rule.pattern +
                   "\"`");
  }

  void read_overrides(const yaml::NodeRef& v, ConfigRule& rule) {
    if (!v.is_mapping()) {
      r_.error(v, "`device_overrides` must be a mapping of device name to settings, not " + v.describe(),
               "write `device_overrides: {spyre: {atol: 5.0e-2}}`");
      return;
    }
    for (std::size_t i = 0; i < v.size(); ++i) {
      const yaml::NodeRef key = v.key(i);
      const yaml::NodeRef value = v.value(i);
      const std::string device(key.text());
      if (device.empty() || device.find_first_of(" \t:*?[") != std::string::npos) {
        r_.error(key, "`" + device + "` is not a device name",
                 "use the name of the device under test as `opcheck run` prints it, e.g. spyre or loopback");
        continue;
      }
      if (!value.is_mapping()) {
        r_.error(value, "the `" + device + "` override must be a mapping of settings, not " + value.describe(),
                 "write `" + device + ": {atol: 5.0e-2}`");
        continue;
      }
      RuleSettings s;
      s.loc = r_.loc(value);
      read_settings_map(value, s, "the `" + device + "` device override");
      if (s.empty() && value.size() == 0)
        r_.error(value, "the `" + device + "` override sets nothing", "remove it, or add the settings for " + device);
      rule.device_overrides[device] = std::move(s);
    }
  }

  DiagnosticList& diags_;
  TypedYaml r_;                   // the status config's wording; its diagnostics name no case
  std::size_t entry_errors_ = 0;  // errors before the entry being read
};

}  // namespace

bool load_status_config_text(const std::string& path, const std::string& text, StatusConfig& out,
                             DiagnosticList& diags) {
  const std::size_t errors_before = diags.error_count();
  out.path = path;
  yaml::Tree tree;
  yaml::ParseError perr;
  if (!yaml::parse_yaml(text, tree, perr)) {
    if (!yaml::has_content(text)) {
      diags.error({path, 0, 0}, "the status config is empty", {}, kShape);
      return false;
    }
    // The reader words its messages for manifests; this file is not one.
    auto reword = [](std::string s) {
      for (std::size_t at; (at = s.find("manifest")) != std::string::npos;) s.replace(at, 8, "status config");
      return s;
    };
    std::string fix = reword(perr.fix);
    // A plain scalar that starts with `*` reads as a YAML alias: the most likely slip in a file full of globs.
    if (perr.message.find("alias") != std::string::npos)
      fix = "quote patterns that start with `*`: `id: \"*::torch.mul.*\"`";
    diags.error({path, perr.line, perr.col}, reword(perr.message), {}, fix);
    return false;
  }
  ConfigReader(path, diags).read(tree.root(), out);
  return diags.error_count() == errors_before;
}

bool load_status_config(const std::string& path, StatusConfig& out, DiagnosticList& diags) {
  std::string text, why;
  if (!read_regular_file(path, text, why)) {
    out.path = path;
    diags.error({path, 0, 0}, "cannot read the status config: " + why, {}, "check the path given to --config");
    return false;
  }
  return load_status_config_text(path, text, out, diags);
}

}  // namespace opcheck
