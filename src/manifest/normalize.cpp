#include "manifest/normalize.h"

#include <algorithm>
#include <filesystem>
#include <regex>
#include <set>
#include <unordered_map>

#include "common/stop_request.h"
#include "common/text.h"
#include "common/text_escape.h"
#include "manifest/input_reader.h"

namespace fs = std::filesystem;

namespace opcheck {
namespace {

using yaml::NodeRef;
using yaml::ScalarStyle;
using Keys = std::vector<std::string_view>;

const Keys kTopKeys{"model", "description", "defaults", "default", "marks", "mark", "cases"};
// `defaults:` holds dtype and the case fields the table lets it hold (in_defaults).
const Keys& setting_keys() {
  static const Keys keys = [] {
    Keys k{"dtype"};
    for (const CaseField& f : kCaseFields)
      if (f.manifest_key && f.in_defaults) k.emplace_back(f.manifest_key);
    return k;
  }();
  return keys;
}
// A case's keys: its call, then every case field with a v1 key (kCaseFields), then its conditions.
const Keys& case_keys() {
  static const Keys keys = [] {
    Keys k{"name", "op", "inputs", "description", "marks", "mark", "attrs", "kwmap", "dtype"};
    for (const CaseField& f : kCaseFields)
      if (f.manifest_key && std::find(k.begin(), k.end(), f.manifest_key) == k.end()) k.emplace_back(f.manifest_key);
    k.insert(k.end(), {"skip_if", "xfail_if"});
    return k;
  }();
  return keys;
}
// "defaults only hold dtype, seed, rtol, atol, compare, pcc_min, equal_nan and timeout".
const std::string& defaults_fix() {
  static const std::string fix = [] {
    const Keys& k = setting_keys();
    std::string out = "defaults only hold ";
    for (std::size_t i = 0; i < k.size(); ++i)
      out += std::string(i == 0 ? "" : i + 1 == k.size() ? " and " : ", ") + std::string(k[i]);
    return out;
  }();
  return fix;
}
const Keys kExpectsErrorKeys{"type", "match"};
const Keys kConditionKeys{"expr", "reason"};

/// Case-level settings: the file's `defaults:`, then the case's own keys over them (a case's own value wins). The
/// dtype is not a table field: it labels the case and is the default of its tensors' dtypes (input_reader).
struct Settings : SettingsLayer {
  std::optional<DType> dtype;
  std::string dtype_spelling;
};

/// Walks one v1 manifest document: the file's keys, its defaults and marks, then each case.
class Normalizer {
 public:
  Normalizer(const std::string& path, DiagnosticList& diags) : path_(path), r_(path, diags) {}
  bool run(const yaml::Tree& tree, Manifest& out);

 private:
  bool read_marks(NodeRef map, std::vector<std::string>& out);
  bool read_setting(NodeRef key, NodeRef v, Settings& s);
  bool read_conditions(NodeRef n, std::string_view key, std::vector<Condition>& out);
  bool read_expects_error(NodeRef n, ExpectedError& out);
  bool read_case(NodeRef c, const Settings& defaults, const std::vector<std::string>& file_marks, Case& out);

  const std::string& path_;
  InputReader r_;
  std::string model_;
};

bool Normalizer::read_marks(NodeRef map, std::vector<std::string>& out) {
  NodeRef marks = map.find("marks"), mark = map.find("mark");
  if (marks && mark) {
    r_.error(mark, "both 'marks' and 'mark' are given", "merge them into one 'marks' list");
    return false;
  }
  NodeRef n = marks ? marks : mark;
  if (!n) return true;
  const char* key = marks ? "marks" : "mark";
  auto add = [&](NodeRef m) {
    if (!m.is_scalar() || (m.style() == ScalarStyle::Plain && yaml::is_core_null(m.text()))) {
      r_.error(m, "expected a mark name in " + in_quotes(key) + ", got " + m.describe());
      return false;
    }
    if (!is_python_identifier(m.text())) {
      r_.error(m, "mark " + in_quotes(m.text()) + " is not a valid marker name",
               "marks are Python identifiers: letters, digits and '_', not starting with a digit");
      return false;
    }
    std::string s(m.text());
    if (std::find(out.begin(), out.end(), s) == out.end()) out.push_back(std::move(s));
    return true;
  };
  if (n.is_sequence()) {
    bool ok = true;
    for (std::size_t i = 0; i < n.size(); ++i) ok = add(n.item(i)) && ok;
    return ok;
  }
  if (n.is_scalar()) return add(n);
  r_.error(n, "expected a mark name or a list of them for " + in_quotes(key) + ", got " + n.describe());
  return false;
}

// ------------------------------------------------------------------------------------------------------------------
// Sections

bool Normalizer::read_setting(NodeRef key, NodeRef v, Settings& s) {
  const std::string_view k = key.text();
  if (k == "dtype") {
    DType t;
    if (!r_.read_dtype(v, k, t, s.dtype_spelling)) return false;
    s.dtype = t;
    return true;
  }
  const int field = case_field_for_key(k, /*manifest=*/true);
  return field >= 0 && read_case_field(r_, static_cast<std::size_t>(field), key, v, s);
}

bool Normalizer::read_conditions(NodeRef n, std::string_view key, std::vector<Condition>& out) {
  auto one = [&](NodeRef m) {
    if (!m.is_mapping()) {
      r_.error(m, "expected a mapping {expr, reason} in " + in_quotes(key) + ", got " + m.describe(),
               "write `" + std::string(key) + ": {expr: \"device == 'spyre'\", reason: why}`");
      return false;
    }
    if (!r_.check_keys(m, kConditionKeys, "in a " + std::string(key) + " condition")) return false;
    Condition c;
    c.loc = r_.loc(m);
    NodeRef expr = m.find("expr");
    if (!expr) {
      r_.error(m, in_quotes(key) + " condition has no 'expr'", "add `expr: <condition>`, e.g. expr: device == 'spyre'");
      return false;
    }
    if (!expr.is_scalar() || (expr.style() == ScalarStyle::Plain && yaml::is_core_null(expr.text()))) {
      r_.error(expr, "expected a condition string for 'expr', got " + expr.describe());
      return false;
    }
    c.expr.assign(expr.text());
    if (NodeRef r = m.find("reason"))
      if (!r_.read_string(r, "reason", c.reason)) return false;
    std::string err;
    int col = 0;
    c.ast = parse_cond_expr(c.expr, err, col);
    if (!c.ast) {
      r_.error_at(r_.text_loc(expr, col),
                  "invalid " + std::string(key) + " expression " + in_quotes(c.expr) + ": " + err,
                  "names: device, dtype, op, model, env.NAME, cfg.test_device.type, cfg.ref_device.type, dtype_str, "
                  "op_name; operators: == != < <= > >= in, not in, and, or, not");
      return false;
    }
    out.push_back(std::move(c));
    return true;
  };
  if (n.is_sequence()) {
    bool ok = true;
    for (std::size_t i = 0; i < n.size(); ++i) ok = one(n.item(i)) && ok;
    return ok;
  }
  return one(n);
}

bool Normalizer::read_expects_error(NodeRef n, ExpectedError& out) {
  if (!r_.want_mapping(n, "expects_error")) return false;
  if (!r_.check_keys(n, kExpectsErrorKeys, "in expects_error")) return false;
  NodeRef type = n.find("type");
  if (!type) {
    r_.error(n, "expects_error has no 'type'", "add the Python exception type, e.g. type: RuntimeError");
    return false;
  }
  if (!r_.read_string(type, "type", out.type)) return false;
  std::string_view t = out.type;
  bool dotted_ident = !t.empty();
  for (std::size_t start = 0; dotted_ident && start <= t.size();) {
    std::size_t dot = t.find('.', start);
    if (dot == std::string_view::npos) dot = t.size();
    dotted_ident = is_python_identifier(t.substr(start, dot - start));
    start = dot + 1;
  }
  if (!dotted_ident) {
    r_.error(type, "expects_error type " + in_quotes(t) + " is not a Python exception name",
             "e.g. RuntimeError, ValueError");
    return false;
  }
  if (NodeRef m = n.find("match")) {
    if (!m.is_scalar()) {
      r_.error(m, "expected a regular expression string for 'match', got " + m.describe());
      return false;
    }
    out.match.assign(m.text());
    // libstdc++ compiles regexes recursively; a bound keeps hostile patterns from exhausting the stack.
    if (out.match.size() > 1000) {
      r_.error(m, "expects_error.match is longer than 1000 characters", "match on a shorter, distinctive part");
      return false;
    }
    try {
      std::regex re(out.match, std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
      r_.error(m,
               "expects_error.match " + in_quotes(out.match) + " is not a valid ECMAScript regular expression (" +
                   e.what() + ")",
               "escape regex metacharacters such as ( [ * + ? with a backslash");
      return false;
    }
  }
  return true;
}

bool Normalizer::read_case(NodeRef c, const Settings& defaults, const std::vector<std::string>& file_marks, Case& out) {
  std::size_t errors_before = r_.diagnostics().error_count();
  out.loc = r_.loc(c);
  out.model = model_;
  r_.check_keys(c, case_keys(), "in a case");

  NodeRef op = c.find("op");
  if (!op) {
    r_.error(c, "case has no 'op'", "add op: torch.<name>, e.g. op: torch.add");
  } else if (r_.read_string(op, "op", out.op)) {
    if (out.op.size() > kMaxNameBytes)
      r_.error(op, too_long("op", out.op), "name the op as torch writes it, e.g. torch.add or aten::add.Tensor");
    else if (r_.refuse_control_characters(op, "op", out.op) && !refuse_machine_op(r_, op, out.op) &&
             !is_op_spelling(out.op))
      r_.error(op, "op " + in_quotes(out.op) + " is not an op name",
               "e.g. torch.add, torch.Tensor.view, aten::add.Tensor");
  }

  Settings own;
  NodeRef inputs, attrs, kwmap;
  for (std::size_t i = 0; i < c.size(); ++i) {
    std::string_view k = c.key(i).text();
    NodeRef v = c.value(i);
    const int field = case_field_for_key(k, /*manifest=*/true);
    if (k == "dtype" || (field >= 0 && !kCaseFields[field].own_reader)) {
      read_setting(c.key(i), v, own);
    } else if (k == "inputs") {
      inputs = v;
    } else if (k == "attrs") {
      attrs = v;
    } else if (k == "kwmap") {
      kwmap = v;
    } else if (k == "expects_error") {  // own_reader: a {type, match} mapping with its regex checked
      ExpectedError e;
      if (read_expects_error(v, e)) out.expects_error = std::move(e);
    } else if (k == "skip_if") {
      read_conditions(v, k, out.skip_if);
    } else if (k == "xfail_if") {
      read_conditions(v, k, out.xfail_if);
    }
  }
  // The file's defaults, then the case's own keys over them, straight into the case (no merged copy per case).
  const Settings& d = own.dtype ? own : defaults;
  out.dtype = d.dtype.value_or(DType::Float32);
  out.dtype_spelling = d.dtype ? d.dtype_spelling : "fp32";
  defaults.apply_to(out);
  own.apply_to(out);

  read_marks(c, out.marks);  // own_reader: `marks` or `mark`, the file's marks merged in
  for (const auto& m : file_marks)
    if (std::find(out.marks.begin(), out.marks.end(), m) == out.marks.end()) out.marks.push_back(m);

  if (attrs) r_.read_kwargs(attrs, "attrs", out.kwargs);
  if (kwmap) r_.read_kwargs(kwmap, "kwmap", out.kwargs);

  if (inputs && !(inputs.is_scalar() && inputs.style() == ScalarStyle::Plain && yaml::is_core_null(inputs.text()))) {
    if (!inputs.is_sequence()) {
      r_.error(inputs, "expected a list for 'inputs', got " + inputs.describe(),
               "write each positional argument as a list item: - tensor: ... / - value: ...");
    } else {
      out.inputs.resize(inputs.size());
      std::set<std::string> keywords;
      std::string last_keyword;
      for (std::size_t i = 0; i < inputs.size(); ++i) {
        if (!r_.read_input(inputs.item(i), out, out.inputs[i])) continue;
        const std::string& k = out.inputs[i].keyword;
        const bool named = std::any_of(out.kwargs.begin(), out.kwargs.end(), [&](const auto& kv) { return kv.first == k; });
        if (k.empty() && !last_keyword.empty())
          r_.error(inputs.item(i), "a positional input follows the keyword input '" + last_keyword + "'",
                   "list the positional arguments first, then the inputs with `keyword:`");
        else if (!k.empty() && (!keywords.insert(k).second || named))
          r_.error(inputs.item(i), "keyword '" + k + "' is given twice", "give each keyword argument once");
        if (!k.empty()) last_keyword = k;
      }
    }
  }
  return r_.diagnostics().error_count() == errors_before;
}

bool Normalizer::run(const yaml::Tree& tree, Manifest& out) {
  NodeRef top = tree.root();
  std::string stem = fs::path(path_).stem().string();
  if (top.is_scalar() && top.style() == ScalarStyle::Plain && yaml::is_core_null(top.text())) {
    r_.diagnostics().error(r_.loc(top), "empty manifest", {}, "a manifest needs at least `model:` and `cases:`");
    return false;
  }
  if (!top.is_mapping()) {
    r_.diagnostics().error(r_.loc(top), "expected a mapping at the top of the manifest, got " + top.describe(), {},
                           "start the file with `model: <name>` and `cases:`");
    return false;
  }
  std::size_t errors_before = r_.diagnostics().error_count();
  r_.check_keys(top, kTopKeys, "at the top level of the manifest", &case_keys(),
                "case fields belong inside a list item of `cases:`");

  NodeRef model = top.find("model");
  if (!model) {
    r_.diagnostics().error(r_.loc(top), "manifest has no 'model'", {}, "add `model: <model name>` at the top");
  } else if (r_.read_string(model, "model", out.model)) {
    if (out.model.empty())
      r_.error(model, "model name is empty", "write the model's name, e.g. model: gpt-oss-20b");
    else if (out.model.size() > kMaxNameBytes)
      r_.error(model, too_long("model name", out.model), "write the model's name, e.g. model: gpt-oss-20b");
    else if (!r_.refuse_control_characters(model, "model name", out.model))
      out.model.clear();  // the file's stem names the cases that are still checked
    else if (out.model.find("::") != std::string::npos || out.model.find('/') != std::string::npos)
      r_.error(model, "model name " + in_quotes(out.model) + " may not contain '::' or '/'",
               "these separate parts of case ids");
  }
  model_ = out.model.empty() || out.model.size() > kMaxNameBytes ? stem : out.model;

  if (NodeRef d = top.find("description")) {
    // Documentation only: the Manifest does not carry it, but its type is still checked.
    if (!d.is_scalar()) r_.error(d, "expected a string for 'description', got " + d.describe());
  }

  NodeRef defaults = top.find("defaults"), default_ = top.find("default");
  Settings settings;
  if (defaults && default_) {
    r_.error(default_, "both 'defaults' and 'default' are given", "keep one 'defaults' mapping");
  } else if (NodeRef d = defaults ? defaults : default_) {
    if (r_.want_mapping(d, defaults ? "defaults" : "default") &&
        r_.check_keys(d, setting_keys(), defaults ? "in defaults" : "in default", &case_keys(),
                      defaults_fix().c_str())) {
      for (std::size_t i = 0; i < d.size(); ++i) read_setting(d.key(i), d.value(i), settings);
    }
  }
  std::vector<std::string> file_marks;
  read_marks(top, file_marks);

  NodeRef cases = top.find("cases");
  if (!cases) {
    r_.diagnostics().error(r_.loc(top), "manifest has no 'cases'", {}, "add `cases:` with a list of cases");
  } else if (!cases.is_sequence()) {
    r_.error(cases, "expected a list for 'cases', got " + cases.describe(),
             "write `cases:` followed by `- name: ...` items");
  }
  const bool file_ok = r_.diagnostics().error_count() == errors_before;

  if (cases && cases.is_sequence()) {
    out.cases.reserve(cases.size());
    std::unordered_map<std::string, int> seen;  // case name -> line of its first definition
    seen.reserve(cases.size() * 2);
    for (std::size_t i = 0; i < cases.size() && !stop_requested(); ++i) {
      NodeRef c = cases.item(i);
      r_.set_case_id(model_ + "::#" + std::to_string(i + 1));
      if (!c.is_mapping()) {
        r_.error(c, "expected a case mapping (name, op, inputs, ...), got " + c.describe());
        continue;
      }
      std::string name;
      NodeRef name_node = c.find("name");
      bool named = false;
      if (!name_node) {
        r_.error(c, "case has no 'name'", "add name: <unique name within the file>");
      } else if (r_.read_string(name_node, "name", name)) {
        if (name.empty()) {
          r_.error(name_node, "case name is empty", "give the case a name unique within the file");
        } else if (name.size() > kMaxNameBytes) {
          r_.error(name_node, too_long("case name", name), "give the case a shorter name; it becomes the case's id");
        } else if (!r_.refuse_control_characters(name_node, "case name", name)) {
          // reported: the id reaches terminals and reports, where an escape sequence in it would be run
        } else {
          named = true;
          r_.set_case_id(model_ + "::" + name);
        }
      }
      bool unique = true;
      if (named) {
        auto [it, inserted] = seen.emplace(name, name_node.line());
        if (!inserted) {
          r_.error(name_node,
                   "duplicate case name " + in_quotes(name) + " (first defined at line " + std::to_string(it->second) +
                       "); this one is dropped",
                   "give every case in a file its own name");
          unique = false;
        }
      }
      Case cs;
      cs.name = name;
      cs.id = r_.case_id();
      bool ok = read_case(c, settings, file_marks, cs);
      if (ok && named && unique) out.cases.push_back(std::move(cs));
    }
  }
  r_.set_case_id({});
  return file_ok;
}

}  // namespace

bool normalize_manifest(const yaml::Tree& tree, const std::string& path, Manifest& out, DiagnosticList& diags) {
  Normalizer n(path, diags);
  return n.run(tree, out);
}

}  // namespace opcheck
