#include "select/select.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "common/edit_distance.h"
#include "common/text.h"
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
std::optional<std::size_t> match_class(const std::string& pat, std::size_t p, char ch, bool& matched,
                                       char (*fold_char)(char)) {
  std::size_t i = p + 1;
  bool negate = false;
  if (i < pat.size() && (pat[i] == '!' || pat[i] == '^')) {
    negate = true;
    ++i;
  }
  const std::size_t first = i;
  bool hit = false;
  const char c = fold_char(ch);
  for (; i < pat.size(); ++i) {
    if (pat[i] == ']' && i > first) {
      matched = hit != negate;
      return i + 1;
    }
    if (i + 2 < pat.size() && pat[i + 1] == '-' && pat[i + 2] != ']') {
      if (fold_char(pat[i]) <= c && c <= fold_char(pat[i + 2])) hit = true;
      i += 2;
    } else if (fold_char(pat[i]) == c) {
      hit = true;
    }
  }
  return std::nullopt;
}

char same(char c) { return c; }

// fnmatch-style glob; `fold` says which characters compare alike (model names fold, case names do not).
bool glob_match(const std::string& pat, const std::string& str, char (*fold_char)(char) = fold) {
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
      std::optional<std::size_t> after = c == '[' ? match_class(pat, p, str[s], matched, fold_char) : std::nullopt;
      if (after) {
        if (matched) {
          p = *after;
          ++s;
          continue;
        }
      } else if (fold_char(c) == fold_char(str[s])) {
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

SourceLoc cli_loc() { return {}; }

// Parses a -m/-k option; on failure records a usage error naming the column.
std::optional<MatchExpr> parse_option(const char* flag, const std::string& source, Selected& out) {
  MatchExprError err;
  std::optional<MatchExpr> e = MatchExpr::parse(source, err);
  if (!e) {
    out.usage_error = true;
    out.diagnostics.error(cli_loc(),
                          std::string("wrong expression passed to '") + flag + "': " + clipped(source) + ": at column " +
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

namespace {

// "model::case" split at the first "::"; false when either part is missing.
bool split_case_id(const std::string& id, std::string& model, std::string& name) {
  const auto sep = id.find("::");
  if (sep == std::string::npos || sep == 0 || sep + 2 >= id.size()) return false;
  model = id.substr(0, sep);
  name = id.substr(sep + 2);
  return true;
}

bool id_reaches_model(const std::string& pattern, const Manifest& m) {
  std::string model, name;
  if (!split_case_id(pattern, model, name)) return false;
  // A template is reached only by its exact name, as with --model.
  if (m.is_template && is_model_glob(model)) return false;
  return model == m.model || model_matches(model, m.model);
}

}  // namespace

bool case_id_matches(const std::string& pattern, const Case& c) {
  if (pattern == c.id) return true;
  std::string model, name;
  if (!split_case_id(pattern, model, name)) return false;
  if (model != c.model && !model_matches(model, c.model)) return false;
  return name == c.name || (is_model_glob(name) && glob_match(name, c.name, same));
}

std::string exact_case_id(const std::string& model, const std::string& name) {
  std::string out = model + "::";
  for (char ch : name) {
    if (ch == '*' || ch == '?' || ch == '[') out += std::string("[") + ch + "]";
    else out += ch;
  }
  return out;
}

std::vector<std::string> suggest_models(const std::string& wanted, const std::vector<std::string>& known,
                                        std::size_t limit) {
  if (wanted.size() > kMaxSpelledNameLength) return {};
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

namespace {

// Every model and variant the loaded set knows, for validation and suggestions.
struct KnownModels {
  std::vector<std::string> models;
  std::set<std::string> variants;
};

KnownModels known_models(const ManifestSet& set) {
  KnownModels known;
  for (const auto& m : set.manifests) {
    if (std::find(known.models.begin(), known.models.end(), m.model) == known.models.end())
      known.models.push_back(m.model);
    if (!m.variant.empty()) known.variants.insert(m.variant);
  }
  return known;
}

void check_variant(const Selection& sel, const KnownModels& known, Selected& out) {
  if (sel.variant.empty() || sel.variant == "all" || sel.variant == "spyre" || known.variants.count(sel.variant))
    return;
  std::vector<std::string> names{"spyre", "all"};
  for (const auto& v : known.variants)
    if (v != "spyre") names.insert(names.end() - 1, v);
  out.usage_error = true;
  out.diagnostics.error(cli_loc(), "unknown variant '" + clipped(sel.variant) + "'", {},
                        "use --variant " + join(names, " or --variant ") + ", or leave it out for the base files");
}

// Case ids must name a model and a case; ill-formed ones are usage errors before anything is chosen.
void check_id_shapes(const ManifestSet& set, const Selection& sel, Selected& out) {
  for (const auto* list : {&sel.ids, &sel.deselect}) {
    for (const auto& id : *list) {
      std::string model, name;
      if (split_case_id(id, model, name)) continue;
      out.usage_error = true;
      std::vector<std::string> near;
      for (const auto& m : set.manifests)
        for (const auto& c : m.cases)
          if (c.name == id) near.push_back(c.id);
      out.diagnostics.error(cli_loc(),
                            std::string(list == &sel.ids ? "case id '" : "--deselect '") + clipped(id) +
                                "' is not MODEL::CASE" +
                                (near.empty() ? std::string() : " (did you mean " + join(near, " or ") + "?)"),
                            {},
                            "write ids as `opcheck list-cases` prints them, e.g. gpt_oss::torch.add.2; globs are "
                            "allowed in either part ('gpt_oss::torch.add.*', '*::torch.mul.1')");
    }
  }
}

// A --model argument that reaches no manifest: what it may have meant.
void report_unknown_model(const std::string& pattern, const KnownModels& known, Selected& out) {
  out.usage_error = true;
  if (pattern.empty()) {
    out.diagnostics.error(
        cli_loc(), "--model was given an empty name", {},
        "name a model, e.g. --model " + (known.models.empty() ? std::string("gpt-oss-20b") : known.models.front()));
    return;
  }
  const bool glob = is_model_glob(pattern);
  std::string message = glob ? "--model '" + clipped(pattern) + "' matches no model" : "unknown model '" + clipped(pattern) + "'";
  std::string fix;
  if (!glob) {
    std::vector<std::string> near = suggest_models(pattern, known.models);
    if (!near.empty()) message += " (did you mean " + join(near, " or ") + "?)";
    // `gpt-oss-20b_spyre` names a file, not a model: the variant is chosen with --variant.
    for (const auto& v : known.variants) {
      const std::string suffix = "-" + folded(v);
      const std::string f = folded(pattern);
      if (f.size() > suffix.size() && f.compare(f.size() - suffix.size(), suffix.size(), suffix) == 0) {
        fix = "variant files are chosen with --variant " + v + " (the model name has no '_" + v + "' suffix)";
      }
    }
  }
  if (fix.empty())
    fix = known.models.empty() ? "no manifest was loaded; check the manifest paths"
                               : "known models: " + join(known.models, ", ");
  out.diagnostics.error(cli_loc(), message, {}, fix);
}

// Model choice: which manifests the --model arguments reach (each argument that reaches none is reported). Without
// --model, positional ids choose the files their model parts name.
std::vector<bool> choose_models(const ManifestSet& set, const Selection& sel, const KnownModels& known, Selected& out) {
  std::vector<bool> chosen(set.manifests.size(), false);
  if (sel.models.empty()) {
    for (std::size_t i = 0; i < set.manifests.size(); ++i) {
      const Manifest& m = set.manifests[i];
      if (sel.ids.empty()) {
        chosen[i] = !m.is_template;
        continue;
      }
      for (const auto& id : sel.ids) chosen[i] = chosen[i] || id_reaches_model(id, m);
    }
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
    if (!reached) report_unknown_model(pattern, known, out);
  }
  return chosen;
}

// Variant choice, per model: with --variant V a model's V files replace its base files where it has any.
void choose_variants(const ManifestSet& set, const Selection& sel, std::vector<bool>& chosen, Selected& out) {
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
}

// -m identifiers that no case carries and no registry knows are almost always typos that silently select nothing.
void warn_unknown_marks(const ManifestSet& set, const Selection& sel, const MatchExpr& mark_expr, Selected& out) {
  std::set<std::string> known(sel.registered_markers.begin(), sel.registered_markers.end());
  for (const auto& m : set.manifests)
    for (const auto& c : m.cases) {
      known.insert(c.marks.begin(), c.marks.end());
      for (auto& d : derived_marks(c)) known.insert(std::move(d));
    }
  std::set<std::string> reported;
  for (const auto& ident : mark_expr.identifiers()) {
    if (known.count(ident) || !reported.insert(ident).second) continue;
    std::vector<std::string> pool(known.begin(), known.end());
    std::vector<std::string> near = suggest_models(ident, pool, 2);
    std::vector<std::string> listed(pool.begin(),
                                    pool.begin() + static_cast<std::ptrdiff_t>(std::min<std::size_t>(pool.size(), 12)));
    std::string fix = "check the spelling; the marks cases have or markers.yaml declares: " +
                      (listed.empty() ? std::string("none") : join(listed, ", ")) +
                      (pool.size() > listed.size() ? ", ... (" + std::to_string(pool.size()) + " in all)" : "") +
                      "; `opcheck validate -m EXPR` checks an expression the same way";
    out.diagnostics.warning(cli_loc(),
                            "-m names mark '" + clipped(ident) + "', which no case has and no registry declares" +
                                (near.empty() ? std::string() : " (did you mean " + join(near, " or ") + "?)"),
                            {}, fix);
  }
}

bool keyword_selects(const MatchExpr& keyword_expr, const Case& c) {
  std::vector<std::string> names{lower(c.model), lower(c.name), lower(c.op)};
  for (const auto& mark : c.marks) names.push_back(lower(mark));
  return keyword_expr.evaluate([&](const std::string& ident) {
    const std::string needle = lower(ident);
    for (const auto& n : names)
      if (n.find(needle) != std::string::npos) return true;
    return false;
  });
}

bool marks_select(const MatchExpr& mark_expr, const Case& c) {
  return mark_expr.evaluate([&](const std::string& ident) {
    if (std::find(c.marks.begin(), c.marks.end(), ident) != c.marks.end()) return true;
    const auto derived = derived_marks(c);
    return std::find(derived.begin(), derived.end(), ident) != derived.end();
  });
}

// The cases of the chosen files, one at a time through ids, --deselect, marker checks, -m and -k.
class CaseFilter {
 public:
  CaseFilter(const Selection& sel, const std::optional<MatchExpr>& mark_expr,
             const std::optional<MatchExpr>& keyword_expr, Selected& out)
      : sel_(sel),
        mark_expr_(mark_expr),
        keyword_expr_(keyword_expr),
        out_(out),
        registered_(sel.registered_markers.begin(), sel.registered_markers.end()),
        id_hit_(sel.ids.size(), false),
        deselect_hit_(sel.deselect.size(), false) {}

  void take(const Case& c) {
    if (!sel_.ids.empty() && !matches_any(sel_.ids, id_hit_, c)) return;
    if (!sel_.deselect.empty() && matches_any(sel_.deselect, deselect_hit_, c)) {
      ++out_.deselected;
      return;
    }
    check_marks_registered(c);
    if ((mark_expr_ && !marks_select(*mark_expr_, c)) || (keyword_expr_ && !keyword_selects(*keyword_expr_, c))) {
      ++out_.deselected;
      return;
    }
    out_.cases.push_back(&c);
  }

  // After every case: the unregistered marks, and the ids that matched nothing.
  void finish(const ManifestSet& set) {
    warn_unregistered();
    // An id that matches nothing is a typo or a stale id, never "nothing to do".
    std::vector<std::string> all_ids;
    for (const auto& m : set.manifests)
      for (const auto& c : m.cases) all_ids.push_back(c.id);
    report_unmatched(sel_.ids, id_hit_, "case id", all_ids);
    report_unmatched(sel_.deselect, deselect_hit_, "--deselect", all_ids);
  }

 private:
  static bool matches_any(const std::vector<std::string>& ids, std::vector<bool>& hit, const Case& c) {
    bool any = false;
    for (std::size_t k = 0; k < ids.size(); ++k)
      if (case_id_matches(ids[k], c)) any = hit[k] = true;
    return any;
  }

  void check_marks_registered(const Case& c) {
    if (!sel_.strict_markers) {
      if (registered_.empty()) return;
      for (const auto& mark : c.marks)
        if (!registered_.count(mark))
          ++unregistered_.emplace(mark, std::make_pair(&c, std::size_t{0})).first->second.second;
      return;
    }
    for (const auto& mark : c.marks) {
      if (registered_.count(mark) || is_derived_mark(mark)) continue;
      std::vector<std::string> near = suggest_models(mark, sel_.registered_markers, 2);
      out_.diagnostics.error(c.loc,
                             "'" + mark + "' not found in `markers` configuration option" +
                                 (near.empty() ? std::string() : " (did you mean " + join(near, " or ") + "?)"),
                             c.id,
                             "register it in manifests/markers.yaml (`" + mark +
                                 ": one-line description`) or fix the spelling in the manifest");
    }
  }

  void warn_unregistered() {
    for (const auto& [mark, first] : unregistered_) {
      std::vector<std::string> near = suggest_models(mark, sel_.registered_markers, 2);
      const std::size_t n = first.second;
      out_.diagnostics.warning(
          first.first->loc,
          "mark '" + mark + "' is not registered in markers.yaml" +
              (near.empty() ? std::string() : " (did you mean " + join(near, " or ") + "?)") + "; " +
              std::to_string(n) + (n == 1 ? " case uses" : " cases use") + " it, the first here",
          first.first->id,
          "register it in manifests/markers.yaml (`" + mark +
              ": one-line description`) or fix the spelling; --strict-markers makes this an error");
    }
  }

  void report_unmatched(const std::vector<std::string>& ids, const std::vector<bool>& hit, const char* what,
                        const std::vector<std::string>& all_ids) {
    for (std::size_t k = 0; k < ids.size(); ++k) {
      if (hit[k]) continue;
      out_.usage_error = true;
      const std::vector<std::string> near = suggest_models(ids[k], all_ids, 3);
      out_.diagnostics.error(cli_loc(),
                             std::string(what) + " '" + clipped(ids[k]) + "' matches no selected case" +
                                 (near.empty() ? std::string() : " (did you mean " + join(near, " or ") + "?)"),
                             {},
                             "ids are model::case as `opcheck list-cases` prints them; `opcheck list-cases --model "
                             "MODEL` lists a model's cases");
    }
  }

  const Selection& sel_;
  const std::optional<MatchExpr>& mark_expr_;
  const std::optional<MatchExpr>& keyword_expr_;
  Selected& out_;
  const std::set<std::string> registered_;
  std::vector<bool> id_hit_, deselect_hit_;
  // Without --strict-markers an unregistered mark is pytest's PytestUnknownMarkWarning: said once per mark, at the
  // first case that uses it, with how many do.
  std::map<std::string, std::pair<const Case*, std::size_t>> unregistered_;
};

}  // namespace

Selected select_cases(const ManifestSet& set, const Selection& sel) {
  Selected out;
  const KnownModels known = known_models(set);
  check_variant(sel, known, out);
  std::optional<MatchExpr> mark_expr, keyword_expr;
  if (!sel.mark_expr.empty()) mark_expr = parse_option("-m", sel.mark_expr, out);
  if (!sel.keyword_expr.empty()) keyword_expr = parse_option("-k", sel.keyword_expr, out);
  check_id_shapes(set, sel, out);
  std::vector<bool> chosen = choose_models(set, sel, known, out);
  choose_variants(set, sel, chosen, out);
  if (mark_expr) warn_unknown_marks(set, sel, *mark_expr, out);
  if (out.usage_error) return out;

  CaseFilter filter(sel, mark_expr, keyword_expr, out);
  for (std::size_t i = 0; i < set.manifests.size(); ++i)
    if (chosen[i])
      for (const Case& c : set.manifests[i].cases) filter.take(c);
  filter.finish(set);
  if (out.usage_error) {
    out.cases.clear();
    out.deselected = 0;
  }
  return out;
}

}  // namespace opcheck
