#include "select/select.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "select/match_expr.h"

namespace opcheck {
namespace {

// Model names compare case-insensitively with `-` and `_` alike: `gpt_oss_20B` names gpt-oss-20b.
char fold(char c) {
  if (c == '_') return '-';
  if (c >= 'A' && c <= 'Z') return static_cast<char>(c - 'A' + 'a');
  return c;
}

std::string folded(const std::string& s) {
  std::string out = s;
  for (char& c : out) c = fold(c);
  return out;
}

std::string lower(const std::string& s) {
  std::string out = s;
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

// Matches one `[...]` class at pat[p] against `ch`. Returns the position after the class, or nullopt when the
// bracket is not closed (then `[` is an ordinary character, as in Python's fnmatch).
std::optional<std::size_t> match_class(const std::string& pat, std::size_t p, char ch, bool& matched) {
  std::size_t i = p + 1;
  bool negate = false;
  if (i < pat.size() && (pat[i] == '!' || pat[i] == '^')) {
    negate = true;
    ++i;
  }
  const std::size_t first = i;
  bool hit = false;
  const char c = fold(ch);
  for (; i < pat.size(); ++i) {
    if (pat[i] == ']' && i > first) {
      matched = hit != negate;
      return i + 1;
    }
    if (i + 2 < pat.size() && pat[i + 1] == '-' && pat[i + 2] != ']') {
      if (fold(pat[i]) <= c && c <= fold(pat[i + 2])) hit = true;
      i += 2;
    } else if (fold(pat[i]) == c) {
      hit = true;
    }
  }
  return std::nullopt;
}

bool glob_match(const std::string& pat, const std::string& str) {
  std::size_t p = 0, s = 0;
  std::size_t star_p = std::string::npos, star_s = 0;
  while (s < str.size()) {
    if (p < pat.size()) {
      const char c = pat[p];
      if (c == '*') {
        star_p = p++;
        star_s = s;
        continue;
      }
      if (c == '?') {
        ++p;
        ++s;
        continue;
      }
      bool matched = false;
      std::optional<std::size_t> after = c == '[' ? match_class(pat, p, str[s], matched) : std::nullopt;
      if (after) {
        if (matched) {
          p = *after;
          ++s;
          continue;
        }
      } else if (fold(c) == fold(str[s])) {
        ++p;
        ++s;
        continue;
      }
    }
    if (star_p == std::string::npos) return false;
    p = star_p + 1;  // let the last `*` swallow one more character
    s = ++star_s;
  }
  while (p < pat.size() && pat[p] == '*') ++p;
  return p == pat.size();
}

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

std::string join(const std::vector<std::string>& items, const char* sep) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) out += (i ? sep : "") + items[i];
  return out;
}

SourceLoc cli_loc() { return {}; }

// Parses a -m/-k option; on failure records a usage error naming the column.
std::optional<MatchExpr> parse_option(const char* flag, const std::string& source, Selected& out) {
  MatchExprError err;
  std::optional<MatchExpr> e = MatchExpr::parse(source, err);
  if (!e) {
    out.usage_error = true;
    out.diagnostics.error(cli_loc(),
                          std::string("wrong expression passed to '") + flag + "': " + source + ": at column " +
                              std::to_string(err.column) + ": " + err.message,
                          {},
                          std::string("write identifiers joined by and/or/not with balanced parentheses, e.g. ") +
                              flag + " \"bf16operation and not constant\"");
  }
  return e;
}

}  // namespace

bool is_model_glob(const std::string& name) { return name.find_first_of("*?[") != std::string::npos; }

bool model_matches(const std::string& pattern, const std::string& model) {
  if (is_model_glob(pattern)) return glob_match(pattern, model);
  return folded(pattern) == folded(model);
}

std::vector<std::string> suggest_models(const std::string& wanted, const std::vector<std::string>& known,
                                        std::size_t limit) {
  const std::string w = folded(wanted);
  std::vector<std::pair<std::size_t, std::string>> scored;
  std::set<std::string> seen;
  for (const auto& name : known) {
    if (!seen.insert(name).second) continue;
    const std::string k = folded(name);
    const std::size_t d = edit_distance(w, k);
    const bool close = d <= std::max<std::size_t>(2, w.size() / 3);
    // A prefix or fragment of a long model name ("gpt-oss", "llama") is the commonest way to get it wrong.
    const bool fragment = w.size() >= 3 && (k.find(w) != std::string::npos || w.find(k) != std::string::npos);
    if (close || fragment) scored.emplace_back(fragment ? std::min(d, w.size()) : d, name);
  }
  std::stable_sort(scored.begin(), scored.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::string> out;
  for (std::size_t i = 0; i < scored.size() && i < limit; ++i) out.push_back(scored[i].second);
  return out;
}

Selected select_cases(const ManifestSet& set, const Selection& sel) {
  Selected out;

  // Every model and variant the set knows, for validation and suggestions.
  std::vector<std::string> all_models;
  std::set<std::string> variants_present;
  for (const auto& m : set.manifests) {
    if (std::find(all_models.begin(), all_models.end(), m.model) == all_models.end()) all_models.push_back(m.model);
    if (!m.variant.empty()) variants_present.insert(m.variant);
  }

  if (!sel.variant.empty() && sel.variant != "all" && sel.variant != "spyre" && !variants_present.count(sel.variant)) {
    std::vector<std::string> known{"spyre", "all"};
    for (const auto& v : variants_present)
      if (v != "spyre") known.insert(known.end() - 1, v);
    out.usage_error = true;
    out.diagnostics.error(cli_loc(), "unknown variant '" + sel.variant + "'", {},
                          "use --variant " + join(known, " or --variant ") + ", or leave it out for the base files");
  }

  std::optional<MatchExpr> mark_expr, keyword_expr;
  if (!sel.mark_expr.empty()) mark_expr = parse_option("-m", sel.mark_expr, out);
  if (!sel.keyword_expr.empty()) keyword_expr = parse_option("-k", sel.keyword_expr, out);

  // Model choice: which manifests the --model arguments reach, and which arguments reach nothing.
  std::vector<bool> chosen(set.manifests.size(), false);
  if (sel.models.empty()) {
    for (std::size_t i = 0; i < set.manifests.size(); ++i) chosen[i] = !set.manifests[i].is_template;
  }
  for (const auto& pattern : sel.models) {
    const bool glob = is_model_glob(pattern);
    bool reached = false;
    for (std::size_t i = 0; i < set.manifests.size(); ++i) {
      const Manifest& m = set.manifests[i];
      // A template runs only when asked for by its exact name: a glob such as `*` means "the real models".
      if (m.is_template && glob) continue;
      if (model_matches(pattern, m.model)) {
        chosen[i] = true;
        reached = true;
      }
    }
    if (reached) continue;
    out.usage_error = true;
    if (pattern.empty()) {
      out.diagnostics.error(cli_loc(), "--model was given an empty name", {}, "name a model, e.g. --model " +
                                                                                 (all_models.empty() ? std::string("gpt-oss-20b") : all_models.front()));
      continue;
    }
    std::string message = glob ? "--model '" + pattern + "' matches no model" : "unknown model '" + pattern + "'";
    std::string fix;
    if (!glob) {
      std::vector<std::string> near = suggest_models(pattern, all_models);
      if (!near.empty()) message += " (did you mean " + join(near, " or ") + "?)";
      // `gpt-oss-20b_spyre` names a file, not a model: the variant is chosen with --variant.
      for (const auto& v : variants_present) {
        const std::string suffix = "-" + folded(v);
        const std::string f = folded(pattern);
        if (f.size() > suffix.size() && f.compare(f.size() - suffix.size(), suffix.size(), suffix) == 0) {
          fix = "variant files are chosen with --variant " + v + " (the model name has no '_" + v + "' suffix)";
        }
      }
    }
    if (fix.empty()) fix = all_models.empty() ? "no manifest was loaded; check the manifest paths"
                                              : "known models: " + join(all_models, ", ");
    out.diagnostics.error(cli_loc(), message, {}, fix);
  }

  // Variant choice, per model: with --variant V a model's V files replace its base files where it has any.
  std::map<std::string, bool> model_has_variant;  // folded model -> has a chosen file of sel.variant
  std::map<std::string, bool> model_has_base;
  for (std::size_t i = 0; i < set.manifests.size(); ++i) {
    if (!chosen[i]) continue;
    const Manifest& m = set.manifests[i];
    if (m.variant.empty()) model_has_base[folded(m.model)] = true;
    if (!sel.variant.empty() && m.variant == sel.variant) model_has_variant[folded(m.model)] = true;
  }
  std::set<std::string> warned;
  for (std::size_t i = 0; i < set.manifests.size(); ++i) {
    if (!chosen[i]) continue;
    const Manifest& m = set.manifests[i];
    const std::string key = folded(m.model);
    bool keep;
    if (sel.variant == "all")
      keep = true;
    else if (sel.variant.empty())
      keep = m.variant.empty();
    else
      keep = model_has_variant[key] ? m.variant == sel.variant : m.variant.empty();
    if (!keep && !m.variant.empty() && !model_has_base[key] && !model_has_variant[key] && warned.insert(key).second) {
      out.diagnostics.warning({m.path, 0, 0},
                              "model '" + m.model + "' has only '" + m.variant +
                                  "' variant files, which are not selected by default; none of its cases will run",
                              {}, "pass --variant " + m.variant + " (or --variant all) to run them");
    }
    chosen[i] = keep;
  }

  // -m identifiers that no case carries and no registry knows are almost always typos that silently select nothing.
  if (mark_expr) {
    std::set<std::string> known(sel.registered_markers.begin(), sel.registered_markers.end());
    for (const auto& m : set.manifests)
      for (const auto& c : m.cases) {
        known.insert(c.marks.begin(), c.marks.end());
        for (auto& d : derived_marks(c)) known.insert(std::move(d));
      }
    std::set<std::string> reported;
    for (const auto& ident : mark_expr->identifiers()) {
      if (known.count(ident) || !reported.insert(ident).second) continue;
      std::vector<std::string> pool(known.begin(), known.end());
      std::vector<std::string> near = suggest_models(ident, pool, 2);
      out.diagnostics.warning(cli_loc(),
                              "-m names mark '" + ident + "', which no case has and no registry declares" +
                                  (near.empty() ? std::string() : " (did you mean " + join(near, " or ") + "?)"));
    }
  }

  if (out.usage_error) return out;

  const std::set<std::string> registered(sel.registered_markers.begin(), sel.registered_markers.end());
  for (std::size_t i = 0; i < set.manifests.size(); ++i) {
    if (!chosen[i]) continue;
    for (const Case& c : set.manifests[i].cases) {
      if (sel.strict_markers) {
        for (const auto& mark : c.marks) {
          if (registered.count(mark) || is_derived_mark(mark)) continue;
          std::vector<std::string> near = suggest_models(mark, sel.registered_markers, 2);
          out.diagnostics.error(c.loc,
                                "'" + mark + "' not found in `markers` configuration option" +
                                    (near.empty() ? std::string() : " (did you mean " + join(near, " or ") + "?)"),
                                c.id, "register it in manifests/markers.yaml (`" + mark +
                                          ": one-line description`) or fix the spelling in the manifest");
        }
      }
      if (mark_expr && !mark_expr->evaluate([&](const std::string& ident) {
            if (std::find(c.marks.begin(), c.marks.end(), ident) != c.marks.end()) return true;
            const auto derived = derived_marks(c);
            return std::find(derived.begin(), derived.end(), ident) != derived.end();
          })) {
        ++out.deselected;
        continue;
      }
      if (keyword_expr) {
        std::vector<std::string> names{lower(c.model), lower(c.name), lower(c.op)};
        for (const auto& mark : c.marks) names.push_back(lower(mark));
        const bool hit = keyword_expr->evaluate([&](const std::string& ident) {
          const std::string needle = lower(ident);
          for (const auto& n : names)
            if (n.find(needle) != std::string::npos) return true;
          return false;
        });
        if (!hit) {
          ++out.deselected;
          continue;
        }
      }
      out.cases.push_back(&c);
    }
  }
  return out;
}

}  // namespace opcheck
