// Using the status config: which rules match a case, in what order they apply, and what `validate` says about them.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <tuple>

#include "config/status_config.h"

#include "common/text.h"

namespace opcheck {

bool ConfigRule::matches(const Case& c) const {
  if (dtype_filter && c.dtype != *dtype_filter) return false;
  if (!op.empty() && !op_glob.matches(c.op)) return false;
  return id_glob.matches(c.id);
}

RuleSpecificity RuleSpecificity::of(const ConfigRule& r) {
  RuleSpecificity s;
  s.id_literals = r.id_glob.literal_count();
  s.filters = (r.op.empty() ? 0 : 1) + (r.dtype_filter ? 1 : 0);
  s.op_literals = r.op.empty() ? 0 : r.op_glob.literal_count();
  return s;
}

bool RuleSpecificity::operator<(const RuleSpecificity& o) const {
  return std::tie(id_literals, filters, op_literals) < std::tie(o.id_literals, o.filters, o.op_literals);
}

bool RuleSpecificity::operator==(const RuleSpecificity& o) const {
  return std::tie(id_literals, filters, op_literals) == std::tie(o.id_literals, o.filters, o.op_literals);
}

namespace {

// Matching rules, broad to specific; ties keep file order so the later entry applies last and wins.
std::vector<const ConfigRule*> matching_rules(const StatusConfig& cfg, const Case& c) {
  std::vector<const ConfigRule*> out;
  for (const auto& r : cfg.rules)
    if (r.matches(c)) out.push_back(&r);
  std::stable_sort(out.begin(), out.end(), [](const ConfigRule* a, const ConfigRule* b) {
    return RuleSpecificity::of(*a) < RuleSpecificity::of(*b);
  });
  return out;
}

const RuleSettings* override_for(const ConfigRule& r, const std::string& device_name) {
  if (r.device_overrides.empty() || device_name.empty()) return nullptr;
  auto it = r.device_overrides.find(device_name);
  if (it != r.device_overrides.end()) return &it->second;
  // `cuda:1` is still a cuda device: fall back to the overrides written for the bare name.
  const auto colon = device_name.find(':');
  if (colon == std::string::npos) return nullptr;
  it = r.device_overrides.find(device_name.substr(0, colon));
  return it == r.device_overrides.end() ? nullptr : &it->second;
}

// Folds layers into the case and the verdict, lowest precedence first.
struct Resolution {
  Case& c;
  CaseStatus& out;
  std::optional<std::string> note;  // reason of a layer that set no status

  void apply(const RuleSettings& s, const std::optional<std::string>& rule_reason) {
    s.apply_to(c);
    if (s.strict) out.strict = *s.strict;
    if (s.status != TriageStatus::Unset) {
      out.status = s.status;
      out.reason = s.reason ? *s.reason : rule_reason ? *rule_reason : std::string();
      out.status_loc = s.loc;
    } else if (s.reason) {
      note = s.reason;
    }
  }
};

std::string number_text(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", x);
  // The shortest form that reads back the same, so 0.01 prints as 0.01.
  for (int prec = 1; prec <= 17; ++prec) {
    char b[32];
    std::snprintf(b, sizeof b, "%.*g", prec, x);
    if (std::strtod(b, nullptr) == x) return b;
  }
  return buf;
}

// A field's value as a conflict message shows it: 0.01, pcc, true, the text (a status-config key is never a list).
std::string setting_text(const CaseSettings& s, const CaseField& f) {
  return std::visit(
      [&](auto m) -> std::string {
        using T = std::decay_t<decltype(s.*m)>;
        const T& v = s.*m;
        if constexpr (std::is_same_v<T, bool>) return v ? "true" : "false";
        else if constexpr (std::is_same_v<T, std::int64_t>) return std::to_string(v);
        else if constexpr (std::is_same_v<T, double>) return number_text(v);
        else if constexpr (std::is_same_v<T, std::optional<double>>) return v ? number_text(*v) : "unset";
        else if constexpr (std::is_same_v<T, std::string>) return "'" + v + "'";
        else if constexpr (std::is_same_v<T, Comparator>) return comparator_name(v);
        else return "another value";  // lists and expects_error have no status-config key
      },
      f.member);
}

// Fields both layers set to different values, as "status (xfail vs skip)".
std::vector<std::string> conflicts(const RuleSettings& a, const RuleSettings& b) {
  std::vector<std::string> out;
  if (a.status != TriageStatus::Unset && b.status != TriageStatus::Unset && a.status != b.status)
    out.push_back(std::string("status (") + triage_status_name(a.status) + " vs " + triage_status_name(b.status) + ")");
  if (a.reason && b.reason && *a.reason != *b.reason) out.push_back("reason");
  if (a.strict && b.strict && *a.strict != *b.strict)
    out.push_back(std::string("strict (") + (*a.strict ? "true" : "false") + " vs " + (*b.strict ? "true" : "false") +
                  ")");
  for (std::size_t i = 0; i < kCaseFieldCount; ++i) {
    const CaseField& f = kCaseFields[i];
    if (!f.config_key || !a.has(i) || !b.has(i) || field_equal(a.values, b.values, f)) continue;
    out.push_back(std::string(f.config_key) + " (" + setting_text(a.values, f) + " vs " + setting_text(b.values, f) +
                  ")");
  }
  return out;
}

// Base settings, then the overrides of every device both rules name.
std::vector<std::string> rule_conflicts(const ConfigRule& a, const ConfigRule& b) {
  std::vector<std::string> out = conflicts(a.settings, b.settings);
  for (const auto& [device, sa] : a.device_overrides) {
    auto it = b.device_overrides.find(device);
    if (it == b.device_overrides.end()) continue;
    for (auto& c : conflicts(sa, it->second)) out.push_back(c + " on " + device);
  }
  return out;
}

// The candidates closest to `glob` by glob edit distance, at most `limit`, all within `max_distance`.
std::vector<std::string> closest(const Glob& glob, const std::set<std::string>& candidates, int max_distance,
                                 std::size_t limit = 3) {
  std::vector<std::pair<int, std::string>> ranked;
  for (const auto& cand : candidates) {
    // Length alone bounds the distance from below; skip what cannot qualify without running the DP.
    if (!glob.has_wildcards() &&
        std::abs(static_cast<int>(cand.size()) - static_cast<int>(glob.pattern().size())) > max_distance)
      continue;
    int d = glob.distance(cand);
    if (d <= max_distance) ranked.emplace_back(d, cand);
  }
  std::sort(ranked.begin(), ranked.end());
  std::vector<std::string> out;
  for (const auto& [d, cand] : ranked) {
    if (out.size() == limit || d > ranked.front().first) break;
    out.push_back(cand);
  }
  return out;
}

int suggestion_budget(const Glob& g) { return std::clamp(g.literal_count() / 4, 2, 8); }

// Why `r` matches none of `cases`, with the nearest things that do exist. An error: an entry that matches nothing
// after a manifest regeneration silently stops doing its job, which is what `validate --config` is there to catch.
void report_stale(const ConfigRule& r, const std::vector<const Case*>& cases, DiagnosticList& diags) {
  const std::string fix = "update the entry to the current case ids, or delete it if the case is gone";
  std::vector<const Case*> by_id;
  for (const Case* c : cases)
    if (r.id_glob.matches(c->id)) by_id.push_back(c);

  if (by_id.empty()) {
    std::string message = "entry matches no case: no case id matches `" + r.pattern + "`";
    // A wrong model name is the usual cause after a rename; say so rather than list far-off case ids.
    const auto sep = r.pattern.find("::");
    Glob model_glob;
    std::string err;
    if (sep != std::string::npos && Glob::compile(r.pattern.substr(0, sep), model_glob, err)) {
      std::set<std::string> models;
      bool model_exists = false;
      for (const Case* c : cases) {
        models.insert(c->model);
        model_exists = model_exists || model_glob.matches(c->model);
      }
      if (!model_exists) {
        message += " (no model `" + r.pattern.substr(0, sep) + "`";
        auto near = closest(model_glob, models, std::clamp(model_glob.literal_count() / 3, 1, 4));
        message += near.empty() ? ")" : "; did you mean " + join(near, " or ") + "?)";
        diags.error(r.loc, message, {}, fix);
        return;
      }
    }
    std::set<std::string> ids;
    for (const Case* c : cases) ids.insert(c->id);
    auto near = closest(r.id_glob, ids, suggestion_budget(r.id_glob));
    if (!near.empty()) message += "; closest case id" + std::string(near.size() > 1 ? "s: " : ": ") + join(near);
    diags.error(r.loc, message, {}, fix);
    return;
  }

  std::vector<const Case*> by_op;
  for (const Case* c : by_id)
    if (r.op.empty() || r.op_glob.matches(c->op)) by_op.push_back(c);
  const std::string counted = std::to_string(by_id.size()) + " case" + (by_id.size() == 1 ? "" : "s");
  if (by_op.empty()) {
    std::set<std::string> ops;
    for (const Case* c : by_id) ops.insert(c->op);
    std::string message = "entry matches no case: its id matches " + counted + ", none with op `" + r.op + "`";
    auto near = closest(r.op_glob, ops, suggestion_budget(r.op_glob));
    if (!near.empty()) message += "; did you mean " + join(near, " or ") + "?";
    diags.error(r.loc, message, {}, fix);
    return;
  }
  std::set<std::string> dtypes;
  for (const Case* c : by_op) dtypes.insert(dtype_name(c->dtype));
  diags.error(r.loc,
                "entry matches no case: " + std::to_string(by_op.size()) + " case" +
                    (by_op.size() == 1 ? "" : "s") + " match its id" + (r.op.empty() ? "" : " and op") +
                    ", none with dtype " + r.dtype + " (they have " + join(dtypes) + ")",
                {}, fix);
}

}  // namespace

CaseStatus apply_status_config(const StatusConfig& cfg, Case& c, const std::string& device_name) {
  CaseStatus out;
  out.matched = matching_rules(cfg, c);
  Resolution res{c, out, std::nullopt};
  for (const ConfigRule* r : out.matched) res.apply(r->settings, std::nullopt);
  for (const ConfigRule* r : out.matched)
    if (const RuleSettings* s = override_for(*r, device_name)) res.apply(*s, r->settings.reason);
  if (out.status == TriageStatus::Unset && res.note) out.reason = *res.note;
  return out;
}

void check_status_config(const StatusConfig& cfg, const std::vector<const Case*>& cases, DiagnosticList& diags) {
  std::vector<std::size_t> hits(cfg.rules.size(), 0);
  struct Ambiguity {
    std::size_t cases = 0;
    std::string example;
    std::vector<std::string> fields;
  };
  std::map<std::pair<std::size_t, std::size_t>, Ambiguity> ambiguous;  // (earlier, later) rule index

  for (const Case* c : cases) {
    const auto matched = matching_rules(cfg, *c);
    for (const ConfigRule* r : matched) ++hits[r->index];
    // `matched` is sorted by specificity, so equal ranks sit next to each other.
    for (std::size_t i = 0; i < matched.size(); ++i) {
      for (std::size_t j = i + 1; j < matched.size(); ++j) {
        if (!(RuleSpecificity::of(*matched[i]) == RuleSpecificity::of(*matched[j]))) break;
        const ConfigRule* a = matched[i]->index < matched[j]->index ? matched[i] : matched[j];
        const ConfigRule* b = a == matched[i] ? matched[j] : matched[i];
        auto key = std::make_pair(a->index, b->index);
        auto found = ambiguous.find(key);
        // Pairs without a conflict are remembered too, so each pair is compared once.
        if (found == ambiguous.end()) found = ambiguous.emplace(key, Ambiguity{0, c->id, rule_conflicts(*a, *b)}).first;
        ++found->second.cases;
      }
    }
  }

  for (const auto& r : cfg.rules)
    if (hits[r.index] == 0) report_stale(r, cases, diags);

  for (const auto& [key, amb] : ambiguous) {
    if (amb.fields.empty()) continue;
    const ConfigRule& a = cfg.rules[key.first];
    const ConfigRule& b = cfg.rules[key.second];
    diags.error(b.loc,
                "this entry and the entry at line " + std::to_string(a.loc.line) + " both match " +
                    std::to_string(amb.cases) + " case" + (amb.cases == 1 ? "" : "s") +
                    " with the same specificity but set different " + join(amb.fields),
                amb.example,
                "make one of them more specific (a longer id, or an `op`/`dtype` filter) or merge them; "
                "until then the later entry wins");
  }
}

std::string default_status_config_path(const std::vector<std::string>& manifest_paths, DiagnosticList& diags) {
  namespace fs = std::filesystem;
  std::vector<std::string> found;
  for (const auto& p : manifest_paths) {
    std::error_code ec;
    fs::path dir = fs::is_directory(p, ec) ? fs::path(p) : fs::path(p).parent_path();
    if (dir.empty()) dir = ".";
    const fs::path candidate = dir / "opcheck.yaml";
    if (!fs::is_regular_file(candidate, ec)) continue;
    const std::string canonical = fs::weakly_canonical(candidate, ec).string();
    const std::string shown = ec ? candidate.string() : canonical;
    if (std::find(found.begin(), found.end(), shown) == found.end()) found.push_back(shown);
  }
  if (found.size() > 1) {
    diags.error({found[1], 0, 0}, "several status configs apply: " + join(found) + "", {},
                "pass the one to use with --config, or merge them into one file");
    return {};
  }
  return found.empty() ? std::string() : found.front();
}

TriagedSelection triage_selection(const StatusConfig& cfg, const std::vector<const Case*>& selected,
                                  const std::string& device_name) {
  TriagedSelection out;
  if (cfg.rules.empty()) {
    out.cases = selected;
    return out;
  }
  for (const Case* c : selected) {
    out.configured.push_back(*c);
    CaseStatus st = apply_status_config(cfg, out.configured.back(), device_name);
    if (st.status == TriageStatus::Exclude) {
      out.configured.pop_back();
      ++out.excluded;
      continue;
    }
    out.cases.push_back(&out.configured.back());
    out.statuses.emplace(out.cases.back(), std::move(st));
  }
  return out;
}

}  // namespace opcheck
