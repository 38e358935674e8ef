#include "manifest/normalize.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <regex>
#include <unordered_map>

#include "common/init_recipes.h"
#include "common/spelling.h"
#include "common/text.h"
#include "manifest/pt_file.h"
#include "manifest/py_literal.h"
#include "manifest/tensor_file.h"
#include "manifest/tensor_layout.h"

namespace fs = std::filesystem;

namespace opcheck {
namespace {

using yaml::NodeKind;
using yaml::NodeRef;
using yaml::ScalarStyle;
using Keys = std::vector<std::string_view>;

const Keys kTopKeys{"model", "description", "defaults", "default", "marks", "mark", "cases"};
const Keys kSettingKeys{"dtype", "seed", "rtol", "atol", "compare", "pcc_min", "equal_nan", "timeout"};
const Keys kCaseKeys{"name",
                     "op",
                     "inputs",
                     "description",
                     "marks",
                     "mark",
                     "attrs",
                     "kwmap",
                     "dtype",
                     "seed",
                     "rtol",
                     "atol",
                     "compare",
                     "pcc_min",
                     "equal_nan",
                     "timeout",
                     "nondeterministic",
                     "expects_error",
                     "skip_if",
                     "xfail_if"};
const Keys kInputKeys{"tensor", "tensor_list", "value", "py", "file"};
const Keys kTensorKeys{"shape", "stride",    "storage_offset", "dtype", "device", "contiguous",
                       "init",  "init_args", "data",           "file",  "preset", "preset_args"};
const Keys kExpectsErrorKeys{"type", "match"};
const Keys kConditionKeys{"expr", "reason"};
const Keys kCompareNames{"allclose", "pcc", "exact"};
const Keys& kAcceleratorNames = accelerator_names();

// The init kinds, their names and the init_args each takes: the one table the exec layer and repro scripts use too.
using InitInfo = InitRecipe;
const std::vector<InitRecipe>& kInits = init_recipes();

struct PresetInfo {
  std::string_view name;
  Keys args;
};
const std::vector<PresetInfo> kPresets{
    {"noncontig_slice", {"dim", "step"}},
    {"transpose_view", {"dim0", "dim1"}},
    {"expand_view", {"base_shape"}},
};

Keys names_of_inits() {
  Keys k;
  for (const auto& i : kInits) k.push_back(i.name);
  return k;
}
Keys names_of_presets() {
  Keys k;
  for (const auto& p : kPresets) k.push_back(p.name);
  return k;
}

bool contains(const Keys& keys, std::string_view k) { return std::find(keys.begin(), keys.end(), k) != keys.end(); }

bool is_identifier(std::string_view s) {
  if (s.empty()) return false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    if (!(alpha || (i > 0 && c >= '0' && c <= '9'))) return false;
  }
  return true;
}

bool is_op_spelling(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
          c == ':'))
      return false;
  return true;
}

/// Why torch.full could not fill a `dtype` tensor with `v` (it refuses values that overflow the dtype), or "".
std::string fill_value_problem(const PyValue& v, DType dtype) {
  const double d = v.as_double();
  double lo = 0, hi = 0;
  switch (dtype) {
    case DType::Int8: lo = -128; hi = 127; break;
    case DType::Int16: lo = -32768; hi = 32767; break;
    case DType::Int32: lo = -2147483648.0; hi = 2147483647.0; break;
    case DType::UInt8: lo = 0; hi = 255; break;
    case DType::Int64:
      if (v.kind == PyValue::Kind::Float && !(std::abs(d) < 9.2233720368547758e18))
        return "does not fit in int64";
      return {};
    case DType::Float16: case DType::Complex32: lo = -65504; hi = 65504; break;
    case DType::BFloat16: lo = -3.3895313892515355e38; hi = 3.3895313892515355e38; break;
    case DType::Float32: case DType::Complex64: lo = -3.4028234663852886e38; hi = 3.4028234663852886e38; break;
    default: return {};
  }
  const bool integral = dtype == DType::Int8 || dtype == DType::Int16 || dtype == DType::Int32 || dtype == DType::UInt8;
  if (std::isnan(d) || std::isinf(d))
    return integral ? std::string("is not finite, which an integer dtype cannot hold") : std::string();
  if (d < lo || d > hi) return "overflows " + std::string(torch_dtype_name(dtype));
  return {};
}

/// Case-level settings that `defaults:` may also give; a case's own value wins.
struct Settings {
  std::optional<DType> dtype;
  std::string dtype_spelling;
  std::optional<std::int64_t> seed;
  std::optional<double> rtol, atol, pcc_min, timeout;
  std::optional<Comparator> compare;
  std::optional<bool> equal_nan;

  void override_with(const Settings& o) {
    if (o.dtype) {
      dtype = o.dtype;
      dtype_spelling = o.dtype_spelling;
    }
    if (o.seed) seed = o.seed;
    if (o.rtol) rtol = o.rtol;
    if (o.atol) atol = o.atol;
    if (o.pcc_min) pcc_min = o.pcc_min;
    if (o.timeout) timeout = o.timeout;
    if (o.compare) compare = o.compare;
    if (o.equal_nan) equal_nan = o.equal_nan;
  }
};

/// The keys of one tensor mapping; a handle is null when its key is absent.
struct TensorFields {
  NodeRef shape, stride, offset, dtype, device, contiguous, init, init_args, data, file, preset, preset_args;
};
TensorFields tensor_fields(NodeRef t);

/// A tensor file named by init_args (path, key), torch-spyre's spelling of `file:`.
struct TensorFileName {
  NodeRef path;
  std::string key;
};

class Normalizer {
 public:
  Normalizer(const std::string& path, DiagnosticList& diags) : path_(path), diags_(diags) {}
  bool run(const yaml::Tree& tree, Manifest& out);

  // The readers below are also what CallReader (normalize.h) hands to other dialects.
  void set_case_id(std::string id) { case_id_ = std::move(id); }
  // ---- diagnostics
  SourceLoc loc(NodeRef n) const { return SourceLoc{path_, n.line(), n.col()}; }
  void error(NodeRef n, std::string message, std::string fix = {}) {
    diags_.error(loc(n), std::move(message), case_id_, std::move(fix));
  }
  void error_at(SourceLoc l, std::string message, std::string fix = {}) {
    diags_.error(std::move(l), std::move(message), case_id_, std::move(fix));
  }
  // Where column `col` (1-based) of a scalar's text sits in the file, for single-line scalars.
  SourceLoc text_loc(NodeRef n, int col) const {
    SourceLoc l = loc(n);
    if (!n.is_scalar() || col <= 0 || n.text().find('\n') != std::string_view::npos) return l;
    if (n.style() == ScalarStyle::Plain)
      l.col += col - 1;
    else if (n.style() == ScalarStyle::Quoted)
      l.col += col;
    return l;
  }
  static std::string q(std::string_view s) { return "'" + std::string(s.substr(0, 120)) + "'"; }

  bool check_keys(NodeRef map, const Keys& allowed, const std::string& where, const Keys* elsewhere = nullptr,
                  const char* elsewhere_fix = nullptr);
  bool want_mapping(NodeRef n, std::string_view key);

  // ---- typed scalars
  bool read_string(NodeRef n, std::string_view key, std::string& out);
  bool read_int(NodeRef n, std::string_view key, std::int64_t& out);
  bool read_number(NodeRef n, std::string_view key, double& out);
  bool read_bool(NodeRef n, std::string_view key, bool& out);
  bool read_int_list(NodeRef n, std::string_view key, std::vector<std::int64_t>& out);
  bool read_value(NodeRef n, std::string_view key, PyValue& out);
  bool read_kwargs(NodeRef n, std::string_view key, KwArgs& out);
  bool read_dtype(NodeRef n, std::string_view key, DType& out, std::string& spelling);
  bool read_marks(NodeRef map, std::vector<std::string>& out);

  // ---- sections
  bool read_setting(std::string_view key, NodeRef v, Settings& s);
  bool read_conditions(NodeRef n, std::string_view key, std::vector<Condition>& out);
  bool read_expects_error(NodeRef n, ExpectedError& out);
  bool read_case(NodeRef c, const Settings& defaults, const std::vector<std::string>& file_marks, Case& out);
  bool read_input(NodeRef item, const Case& c, Input& out);
  bool read_tensor(NodeRef t, const Case& c, TensorSpec& out);
  // ---- a tensor's parts, one job each, in the order read_tensor reads them
  void read_placement(NodeRef device, TensorSpec& out);
  const InitInfo* read_init_kind(const TensorFields& f, bool has_path, TensorSpec& out);  // null when unusable
  bool read_shape(NodeRef t, const TensorFields& f, bool has_path, TensorSpec& out);     // true when usable
  void read_init_args(const TensorFields& f, const InitInfo& init, TensorSpec& out, TensorFileName& file);
  void check_init_args(NodeRef t, const TensorFields& f, bool have_shape, const TensorSpec& out);
  void read_layout(NodeRef t, const TensorFields& f, bool have_shape, TensorSpec& out);
  void read_stride(const TensorFields& f, bool claims_contiguous, TensorSpec& out);
  void read_preset(const TensorFields& f, TensorSpec& out);
  bool read_data(NodeRef n, const std::vector<std::int64_t>& shape, std::size_t dim, PyValue& out);
  bool resolve_file(NodeRef n, const std::string& key, bool dtype_given, TensorSpec& out);
  void use_v2_file_paths() { v2_paths_ = true; }

 private:
  bool v2_paths_ = false;    // v2 configs: ${TORCH_ROOT}/${TORCH_DEVICE_ROOT} expanded, any folder allowed
  const std::string& path_;
  DiagnosticList& diags_;
  std::string model_;
  std::string case_id_;
  fs::path root_;            // absolute folder of the manifest, for file: inputs
  fs::path root_canonical_;  // ... with symlinks resolved (computed on first use)
};

// ------------------------------------------------------------------------------------------------------------------
// Generic checks

bool Normalizer::check_keys(NodeRef map, const Keys& allowed, const std::string& where, const Keys* elsewhere,
                            const char* elsewhere_fix) {
  bool ok = true;
  for (std::size_t i = 0; i < map.size(); ++i) {
    NodeRef k = map.key(i);
    std::string_view name = k.text();
    if (contains(allowed, name)) continue;
    ok = false;
    std::string guess = closest_spelling(name, allowed);
    std::string message = "unknown key " + q(name) + " " + where;
    if (!guess.empty()) {
      error(k, message + " (did you mean '" + guess + "'?)", "rename " + q(name) + " to '" + guess + "'");
    } else if (elsewhere && contains(*elsewhere, name)) {
      error(k, message, elsewhere_fix);
    } else {
      error(k, message, "remove " + q(name) + "; allowed keys here: " + join(allowed));
    }
  }
  return ok;
}

bool Normalizer::want_mapping(NodeRef n, std::string_view key) {
  if (n.is_mapping()) return true;
  error(n, "expected a mapping for " + q(key) + ", got " + n.describe());
  return false;
}

bool Normalizer::read_string(NodeRef n, std::string_view key, std::string& out) {
  if (!n.is_scalar() || (n.style() == ScalarStyle::Plain && yaml::is_core_null(n.text()))) {
    error(n, "expected a string for " + q(key) + ", got " + n.describe());
    return false;
  }
  out.assign(n.text());
  return true;
}

bool Normalizer::read_int(NodeRef n, std::string_view key, std::int64_t& out) {
  bool overflow = false;
  if (n.is_scalar() && n.style() == ScalarStyle::Plain && yaml::parse_core_int(n.text(), out, overflow)) {
    if (!overflow) return true;
    error(n, "integer " + std::string(n.text().substr(0, 40)) + " for " + q(key) + " does not fit in 64 bits");
    return false;
  }
  error(n, "expected an integer for " + q(key) + ", got " + n.describe());
  return false;
}

bool Normalizer::read_number(NodeRef n, std::string_view key, double& out) {
  std::int64_t i;
  bool overflow;
  if (n.is_scalar() && n.style() == ScalarStyle::Plain) {
    if (yaml::parse_core_int(n.text(), i, overflow) && !overflow) {
      out = static_cast<double>(i);
      return true;
    }
    if (yaml::parse_core_float(n.text(), out)) return true;
  }
  error(n, "expected a number for " + q(key) + ", got " + n.describe());
  return false;
}

bool Normalizer::read_bool(NodeRef n, std::string_view key, bool& out) {
  if (n.is_scalar() && n.style() == ScalarStyle::Plain && yaml::parse_core_bool(n.text(), out)) return true;
  error(n, "expected true or false for " + q(key) + ", got " + n.describe());
  return false;
}

bool Normalizer::read_int_list(NodeRef n, std::string_view key, std::vector<std::int64_t>& out) {
  if (!n.is_sequence()) {
    error(n, "expected a list of integers for " + q(key) + ", got " + n.describe(),
          n.is_scalar() ? "write it as a YAML list, e.g. " + std::string(key) + ": [2, 3]" : std::string());
    return false;
  }
  out.resize(n.size());
  for (std::size_t i = 0; i < n.size(); ++i) {
    NodeRef item = n.item(i);
    bool overflow = false;
    if (!(item.is_scalar() && item.style() == ScalarStyle::Plain &&
          yaml::parse_core_int(item.text(), out[i], overflow))) {
      error(item,
            "expected a list of integers for " + q(key) + ", but item " + std::to_string(i) + " is " + item.describe());
      return false;
    }
    if (overflow) {
      error(item, "entry " + std::string(item.text().substr(0, 40)) + " of " + q(key) + " does not fit in 64 bits");
      return false;
    }
  }
  return true;
}

bool Normalizer::read_value(NodeRef n, std::string_view key, PyValue& out) {
  if (n.is_mapping()) {
    error(n, "a mapping is not a value (in " + q(key) + ")",
          "write lists as YAML lists and tuples as strings such as \"(1, 2)\"");
    return false;
  }
  if (n.is_sequence()) {
    std::vector<PyValue> items(n.size());
    for (std::size_t i = 0; i < n.size(); ++i)
      if (!read_value(n.item(i), key, items[i])) return false;
    out = PyValue::sequence(PyValue::Kind::List, std::move(items));
    return true;
  }
  std::string_view s = n.text();
  if (n.style() == ScalarStyle::Plain) {
    bool b;
    std::int64_t i;
    bool overflow;
    double f;
    if (yaml::is_core_null(s)) {
      out = PyValue::none();
      return true;
    }
    if (yaml::parse_core_bool(s, b)) {
      out = PyValue::boolean(b);
      return true;
    }
    if (yaml::parse_core_int(s, i, overflow)) {
      if (overflow) {
        error(n, "integer " + std::string(s.substr(0, 40)) + " in " + q(key) + " does not fit in 64 bits");
        return false;
      }
      out = PyValue::integer(i);
      return true;
    }
    if (yaml::parse_core_float(s, f)) {
      out = PyValue::real(f);
      return true;
    }
  }
  std::string err;
  int col = 0;
  if (!classify_string(s, out, err, col)) {
    error_at(text_loc(n, col), "invalid Python literal " + q(s) + " in " + q(key) + ": " + err,
             "a string starting with '(' or '[' must be a Python literal such as (1, -1) or [2, 3]; quote it "
             "inside the literal ('\"(text\"') if it is meant as text");
    return false;
  }
  return true;
}

bool Normalizer::read_kwargs(NodeRef n, std::string_view key, KwArgs& out) {
  if (!want_mapping(n, key)) return false;
  bool ok = true;
  out.reserve(out.size() + n.size());
  for (std::size_t i = 0; i < n.size(); ++i) {
    NodeRef k = n.key(i);
    if (!is_identifier(k.text())) {
      error(k, "keyword " + q(k.text()) + " in " + q(key) + " is not a Python identifier");
      ok = false;
      continue;
    }
    PyValue v;
    if (!read_value(n.value(i), k.text(), v)) {
      ok = false;
      continue;
    }
    std::string name(k.text());
    auto it = std::find_if(out.begin(), out.end(), [&](const auto& kv) { return kv.first == name; });
    if (it != out.end())
      it->second = std::move(v);  // kwmap over attrs: keep the attrs position, take the kwmap value
    else
      out.emplace_back(std::move(name), std::move(v));
  }
  return ok;
}

bool Normalizer::read_dtype(NodeRef n, std::string_view key, DType& out, std::string& spelling) {
  if (!n.is_scalar() || (n.style() == ScalarStyle::Plain && yaml::is_core_null(n.text()))) {
    error(n, "expected a dtype name for " + q(key) + ", got " + n.describe(), "e.g. fp16, bf16, fp32, torch.int64");
    return false;
  }
  std::string_view s = n.text();
  if (auto t = parse_dtype(s)) {
    out = *t;
    spelling.assign(s);
    return true;
  }
  error(n, "unknown dtype " + q(s) + did_you_mean(s, all_dtype_names()),
        "use one of fp16, bf16, fp32, fp64, int8, int16, int32, int64, uint8, bool, complex32, complex64, "
        "complex128 (or torch.float16 style names)");
  return false;
}

bool Normalizer::read_marks(NodeRef map, std::vector<std::string>& out) {
  NodeRef marks = map.find("marks"), mark = map.find("mark");
  if (marks && mark) {
    error(mark, "both 'marks' and 'mark' are given", "merge them into one 'marks' list");
    return false;
  }
  NodeRef n = marks ? marks : mark;
  if (!n) return true;
  const char* key = marks ? "marks" : "mark";
  auto add = [&](NodeRef m) {
    if (!m.is_scalar() || (m.style() == ScalarStyle::Plain && yaml::is_core_null(m.text()))) {
      error(m, "expected a mark name in " + q(key) + ", got " + m.describe());
      return false;
    }
    if (!is_identifier(m.text())) {
      error(m, "mark " + q(m.text()) + " is not a valid marker name",
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
  error(n, "expected a mark name or a list of them for " + q(key) + ", got " + n.describe());
  return false;
}

// ------------------------------------------------------------------------------------------------------------------
// Sections

bool Normalizer::read_setting(std::string_view key, NodeRef v, Settings& s) {
  if (key == "dtype") {
    DType t;
    if (!read_dtype(v, key, t, s.dtype_spelling)) return false;
    s.dtype = t;
    return true;
  }
  if (key == "seed") {
    std::int64_t x;
    if (!read_int(v, key, x)) return false;
    if (x < 0) {
      error(v, "seed must be >= 0, got " + std::to_string(x));
      return false;
    }
    s.seed = x;
    return true;
  }
  if (key == "rtol" || key == "atol" || key == "timeout" || key == "pcc_min") {
    double x;
    if (!read_number(v, key, x)) return false;
    if (key == "pcc_min") {
      if (!(x >= -1.0 && x <= 1.0)) {
        error(v, "pcc_min must be between -1 and 1, got " + std::string(v.text()));
        return false;
      }
      s.pcc_min = x;
    } else if (key == "timeout") {
      if (!(x > 0) || std::isinf(x)) {
        error(v, "timeout must be a positive number of seconds, got " + std::string(v.text()));
        return false;
      }
      s.timeout = x;
    } else {
      if (!(x >= 0) || std::isinf(x)) {
        error(v, std::string(key) + " must be a finite number >= 0, got " + std::string(v.text()));
        return false;
      }
      (key == "rtol" ? s.rtol : s.atol) = x;
    }
    return true;
  }
  if (key == "compare") {
    std::string name;
    if (!read_string(v, key, name)) return false;
    if (name == "allclose")
      s.compare = Comparator::AllClose;
    else if (name == "pcc")
      s.compare = Comparator::Pcc;
    else if (name == "exact")
      s.compare = Comparator::Exact;
    else {
      error(v, "unknown compare kind " + q(name) + did_you_mean(name, kCompareNames), "use allclose, pcc or exact");
      return false;
    }
    return true;
  }
  if (key == "equal_nan") {
    bool b;
    if (!read_bool(v, key, b)) return false;
    s.equal_nan = b;
    return true;
  }
  return false;
}

bool Normalizer::read_conditions(NodeRef n, std::string_view key, std::vector<Condition>& out) {
  auto one = [&](NodeRef m) {
    if (!m.is_mapping()) {
      error(m, "expected a mapping {expr, reason} in " + q(key) + ", got " + m.describe(),
            "write `" + std::string(key) + ": {expr: \"device == 'spyre'\", reason: why}`");
      return false;
    }
    if (!check_keys(m, kConditionKeys, "in a " + std::string(key) + " condition")) return false;
    Condition c;
    c.loc = loc(m);
    NodeRef expr = m.find("expr");
    if (!expr) {
      error(m, q(key) + " condition has no 'expr'", "add `expr: <condition>`, e.g. expr: device == 'spyre'");
      return false;
    }
    if (!expr.is_scalar() || (expr.style() == ScalarStyle::Plain && yaml::is_core_null(expr.text()))) {
      error(expr, "expected a condition string for 'expr', got " + expr.describe());
      return false;
    }
    c.expr.assign(expr.text());
    if (NodeRef r = m.find("reason"))
      if (!read_string(r, "reason", c.reason)) return false;
    std::string err;
    int col = 0;
    c.ast = parse_cond_expr(c.expr, err, col);
    if (!c.ast) {
      error_at(text_loc(expr, col), "invalid " + std::string(key) + " expression " + q(c.expr) + ": " + err,
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
  if (!want_mapping(n, "expects_error")) return false;
  if (!check_keys(n, kExpectsErrorKeys, "in expects_error")) return false;
  NodeRef type = n.find("type");
  if (!type) {
    error(n, "expects_error has no 'type'", "add the Python exception type, e.g. type: RuntimeError");
    return false;
  }
  if (!read_string(type, "type", out.type)) return false;
  std::string_view t = out.type;
  bool dotted_ident = !t.empty();
  for (std::size_t start = 0; dotted_ident && start <= t.size();) {
    std::size_t dot = t.find('.', start);
    if (dot == std::string_view::npos) dot = t.size();
    dotted_ident = is_identifier(t.substr(start, dot - start));
    start = dot + 1;
  }
  if (!dotted_ident) {
    error(type, "expects_error type " + q(t) + " is not a Python exception name", "e.g. RuntimeError, ValueError");
    return false;
  }
  if (NodeRef m = n.find("match")) {
    if (!m.is_scalar()) {
      error(m, "expected a regular expression string for 'match', got " + m.describe());
      return false;
    }
    out.match.assign(m.text());
    // libstdc++ compiles regexes recursively; a bound keeps hostile patterns from exhausting the stack.
    if (out.match.size() > 1000) {
      error(m, "expects_error.match is longer than 1000 characters", "match on a shorter, distinctive part");
      return false;
    }
    try {
      std::regex re(out.match, std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
      error(m,
            "expects_error.match " + q(out.match) + " is not a valid ECMAScript regular expression (" + e.what() + ")",
            "escape regex metacharacters such as ( [ * + ? with a backslash");
      return false;
    }
  }
  return true;
}

// The first byte of a C0 control (tab and line breaks included), DEL, or a UTF-8 encoded C1 control; npos if none.
std::size_t control_character(const std::string& s) {
  for (std::size_t i = 0; i < s.size(); ++i) {
    const auto b = static_cast<unsigned char>(s[i]);
    if (b < 0x20 || b == 0x7f) return i;
    if (b == 0xc2 && i + 1 < s.size() && static_cast<unsigned char>(s[i + 1]) >= 0x80 &&
        static_cast<unsigned char>(s[i + 1]) <= 0x9f)
      return i;
  }
  return std::string::npos;
}

// `s` with every control byte as \xNN, so a message quoting it is safe to print.
std::string escaped_controls(const std::string& s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const auto b = static_cast<unsigned char>(s[i]);
    const bool c1 = b == 0xc2 && i + 1 < s.size() && static_cast<unsigned char>(s[i + 1]) >= 0x80 &&
                    static_cast<unsigned char>(s[i + 1]) <= 0x9f;
    if (b < 0x20 || b == 0x7f || c1) {
      static const char* hex = "0123456789abcdef";
      out += "\\x";
      out += hex[b >> 4];
      out += hex[b & 15];
      if (c1) {
        ++i;
        out += "\\x";
        out += hex[static_cast<unsigned char>(s[i]) >> 4];
        out += hex[static_cast<unsigned char>(s[i]) & 15];
      }
    } else {
      out += s[i];
    }
  }
  return out;
}

bool Normalizer::resolve_file(NodeRef n, const std::string& key, bool dtype_given, TensorSpec& out) {
  std::string raw;
  if (!read_string(n, "file", raw)) return false;
  std::string rel = raw;
  if (v2_paths_) {
    if (const std::string problem = expand_path_tokens(raw, rel); !problem.empty()) {
      error(n, "path " + q(raw) + " " + problem,
            "export TORCH_DEVICE_ROOT (the torch-spyre checkout) and TORCH_ROOT (the PyTorch checkout) before "
            "running opcheck, or write the path without ${...}");
      return false;
    }
  }
  fs::path p(rel);
  if (p.is_absolute() && !v2_paths_) {
    error(n, "absolute path " + q(rel) + " for 'file' is not allowed",
          "give the path relative to the manifest's folder");
    return false;
  }
  fs::path norm = p.lexically_normal();
  if (norm.empty() || (!v2_paths_ && *norm.begin() == "..")) {
    error(n, "'file' path " + q(rel) + " escapes the manifest's folder",
          "keep tensor files in the manifest's folder or below it");
    return false;
  }
  if (!tensor_file_format(norm.string())) {
    error(n, "a tensor file must be a .pt, .npy or .safetensors file, got " + q(rel),
          "save the tensor with torch.save(t, 'name.pt'), numpy.save('name.npy', a) or safetensors' save_file");
    return false;
  }
  std::error_code ec;
  if (root_.empty()) root_ = fs::absolute(fs::path(path_), ec).parent_path().lexically_normal();
  fs::path full = norm.is_absolute() ? norm : root_ / norm;
  if (!fs::exists(full, ec)) {
    error(n, "file " + q(rel) + " does not exist (looked for " + full.string() + ")",
          v2_paths_ ? "fix the path (a relative one starts at the config's folder) or the environment variable"
                    : "put the file next to the manifest or fix the path");
    return false;
  }
  if (root_canonical_.empty()) root_canonical_ = fs::canonical(root_, ec);
  fs::path real = fs::canonical(full, ec);
  if (ec || root_canonical_.empty()) {
    error(n, "cannot resolve file " + q(rel) + ": " + ec.message());
    return false;
  }
  if (!v2_paths_) {
    auto rel_to_root = real.lexically_relative(root_canonical_);
    if (rel_to_root.empty() || *rel_to_root.begin() == "..") {
      error(n, "file " + q(rel) + " resolves through a symlink to " + real.string() + ", outside the manifest's folder",
            "copy the file into the manifest's folder");
      return false;
    }
  }
  if (!fs::is_regular_file(real, ec)) {
    error(n, "file " + q(rel) + " is not a regular file");
    return false;
  }
  // The file is data from anywhere: a damaged or crafted one is reported here, located, before anything reads it.
  TensorFileEntry saved;
  std::string note;
  if (const std::string problem = check_tensor_file(real.string(), key, saved, note); !problem.empty()) {
    const char* fix = saved.format == TensorFileFormat::Npy ? "save the array again with numpy.save(path, a)"
                      : saved.format == TensorFileFormat::Safetensors
                          ? "save the tensors again with safetensors' save_file({name: t}, path), or set init_args.key"
                          : "save the tensor again with torch.save(t.contiguous().clone(), path), or set init_args.key "
                            "for a dict";
    error(n, "file " + q(rel) + " " + problem, fix);
    return false;
  }
  if (!note.empty())
    diags_.warning(loc(n), "file " + q(rel) + " " + note, case_id_, "remove init_args.key");
  // Shape and dtype must be the entry's: a mismatch is found here, not when the case runs.
  const std::string found = saved.dtype ? std::string(torch_dtype_name(*saved.dtype)) : saved.dtype_text;
  bool ok = true;
  // A tensor that writes no dtype of its own (a bare `- file:` input) takes the file's, as it takes its shape.
  if (!dtype_given && saved.dtype) {
    out.dtype = *saved.dtype;
    out.dtype_spelling = found;
  }
  if (!saved.dtype || *saved.dtype != out.dtype) {
    error(n, "file " + q(rel) + " holds " + found + " data (" + saved.dtype_text + ") but the tensor's dtype is " +
                 torch_dtype_name(out.dtype),
          "make the tensor's dtype " + found + ", or save the file in " + torch_dtype_name(out.dtype));
    ok = false;
  }
  if (!out.shape_from_file && saved.shape != out.shape) {
    error(n, "file " + q(rel) + " holds a tensor of shape " + shape_text(saved.shape) + " but the tensor's shape is " +
                 shape_text(out.shape),
          "make the shape " + shape_text(saved.shape) + ", or save a tensor of shape " + shape_text(out.shape));
    ok = false;
  }
  out.file = real.string();
  return ok;
}

bool Normalizer::read_data(NodeRef n, const std::vector<std::int64_t>& shape, std::size_t dim, PyValue& out) {
  if (dim == shape.size()) {
    if (!n.is_scalar() || !read_value(n, "data", out)) {
      if (!n.is_scalar())
        error(n,
              "'data' nests deeper than shape " + shape_text(shape) + ": expected a number here, got " + n.describe());
      return false;
    }
    if (!out.is_number()) {
      error(n, "'data' holds " + out.repr() + "; expected numbers or booleans");
      return false;
    }
    return true;
  }
  if (!n.is_sequence()) {
    error(n, "'data' does not match shape " + shape_text(shape) + ": expected a list of " + std::to_string(shape[dim]) +
                 " items at depth " + std::to_string(dim + 1) + ", got " + n.describe());
    return false;
  }
  if (static_cast<std::int64_t>(n.size()) != shape[dim]) {
    error(n, "'data' does not match shape " + shape_text(shape) + ": expected " + std::to_string(shape[dim]) +
                 " items at depth " + std::to_string(dim + 1) + ", got " + std::to_string(n.size()));
    return false;
  }
  std::vector<PyValue> items(n.size());
  for (std::size_t i = 0; i < n.size(); ++i)
    if (!read_data(n.item(i), shape, dim + 1, items[i])) return false;
  out = PyValue::sequence(PyValue::Kind::List, std::move(items));
  return true;
}

TensorFields tensor_fields(NodeRef t) {
  TensorFields f;
  for (std::size_t i = 0; i < t.size(); ++i) {
    std::string_view k = t.key(i).text();
    NodeRef v = t.value(i);
    if (k == "shape")
      f.shape = v;
    else if (k == "stride")
      f.stride = v;
    else if (k == "storage_offset")
      f.offset = v;
    else if (k == "dtype")
      f.dtype = v;
    else if (k == "device")
      f.device = v;
    else if (k == "contiguous")
      f.contiguous = v;
    else if (k == "init")
      f.init = v;
    else if (k == "init_args")
      f.init_args = v;
    else if (k == "data")
      f.data = v;
    else if (k == "file")
      f.file = v;
    else if (k == "preset")
      f.preset = v;
    else if (k == "preset_args")
      f.preset_args = v;
  }
  return f;
}

bool Normalizer::read_tensor(NodeRef t, const Case& c, TensorSpec& out) {
  out.loc = loc(t);
  out.dtype = c.dtype;
  out.dtype_spelling = c.dtype_spelling;
  if (!t.is_mapping()) {
    error(t, "expected a tensor mapping (shape, dtype, ...), got " + t.describe(),
          "write `tensor: {shape: [2, 3], dtype: fp16}`");
    return false;
  }
  std::size_t errors_before = diags_.error_count();
  check_keys(t, kTensorKeys, "in a tensor");
  const TensorFields f = tensor_fields(t);

  // Each reader below reports its own problems; the order is the order of the messages.
  if (f.dtype) read_dtype(f.dtype, "dtype", out.dtype, out.dtype_spelling);
  if (f.device) read_placement(f.device, out);
  // A tensor file is named by `file:` or by init_args.path (torch-spyre's spelling).
  const bool has_path = f.init_args && f.init_args.is_mapping() && f.init_args.find("path");
  const InitInfo* init = read_init_kind(f, has_path, out);
  const bool have_shape = read_shape(t, f, has_path, out);
  TensorFileName file;
  if (init) {
    if (f.init_args) read_init_args(f, *init, out, file);
    check_init_args(t, f, have_shape, out);
  }
  if (!file.key.empty() && !f.file && !file.path)
    error(f.init_args, "init_args.key names a tensor in a file, but no file is given", "add init_args.path");

  if (f.data && have_shape && out.init == InitKind::Data) read_data(f.data, out.shape, 0, out.data);

  if ((f.file || file.path) && (have_shape || out.shape_from_file))
    resolve_file(f.file ? f.file : file.path, file.key, /*dtype_given=*/static_cast<bool>(f.dtype), out);

  // The layout last: a preset's strides depend on the shape, and the storage extent on everything.
  read_layout(t, f, have_shape, out);
  return diags_.error_count() == errors_before;
}

void Normalizer::read_placement(NodeRef device, TensorSpec& out) {
  std::string d;
  if (!read_string(device, "device", d)) return;
  switch (classify_device(d)) {
    case DeviceKind::Host: out.placement = Placement::Host; break;
    case DeviceKind::DeviceUnderTest: out.placement = Placement::DeviceUnderTest; break;
    case DeviceKind::NotADevice: {
      Keys names{"cpu"};
      names.insert(names.end(), kAcceleratorNames.begin(), kAcceleratorNames.end());
      // "gpu" is one edit from "cpu", but suggesting the host for a device typo would mislead.
      std::string guess = closest_spelling(d, names);
      if (guess == "cpu" && d != "CPU" && d != "Cpu") guess.clear();
      error(device, "unknown device " + q(d) + (guess.empty() ? std::string() : " (did you mean '" + guess + "'?)"),
            "use cpu (stays on the host) or cuda, cuda:0, spyre, aiu, privateuseone, xpu, mps, hpu, loopback "
            "(the device under test)");
    }
  }
}

const InitInfo* Normalizer::read_init_kind(const TensorFields& f, bool has_path, TensorSpec& out) {
  // init: explicit, or implied by data:/file:, else rand.
  const InitInfo* init_info = &kInits[0];
  if (f.init) {
    std::string name;
    if (read_string(f.init, "init", name)) {
      auto it = std::find_if(kInits.begin(), kInits.end(), [&](const InitInfo& i) { return i.name == name; });
      if (it == kInits.end()) {
        error(f.init, "unknown init " + q(name) + did_you_mean(name, names_of_inits()),
              "use one of " + join(names_of_inits()));
        init_info = nullptr;
      } else {
        init_info = &*it;
      }
    } else {
      init_info = nullptr;
    }
  } else if (f.data || f.file) {
    const InitKind implied = f.data ? InitKind::Data : InitKind::File;
    init_info = &*std::find_if(kInits.begin(), kInits.end(), [&](const InitInfo& i) { return i.kind == implied; });
  }
  if (init_info) {
    out.init = init_info->kind;
    if (f.data && out.init != InitKind::Data)
      error(f.data, "'data' is given but init is " + q(init_info->name), "drop 'init' or write init: data");
    if (f.file && out.init != InitKind::File)
      error(f.file, "'file' is given but init is " + q(init_info->name), "drop 'init' or write init: file");
    if (out.init == InitKind::Data && !f.data) error(f.init, "init: data needs a 'data' list", "add data: [[...], ...]");
    if (out.init == InitKind::File && !f.file && !has_path)
      error(f.init, "init: file needs a file path", "add init_args: {path: name.pt} (or file: name.pt)");
    if (f.file && has_path)
      error(f.file, "'file' and init_args.path name the tensor file twice", "keep one of them");
  }
  return init_info;
}

bool Normalizer::read_shape(NodeRef t, const TensorFields& f, bool has_path, TensorSpec& out) {
  // A file tensor may leave its shape to the file.
  if (!f.shape) {
    if (!f.file && !has_path)
      error(t, "tensor has no 'shape'", "add shape: [sizes...] (use [] for a 0-dim tensor)");
    else
      out.shape_from_file = true;
    return false;
  }
  if (!read_int_list(f.shape, "shape", out.shape)) return false;
  bool have_shape = true;
  for (std::size_t i = 0; i < out.shape.size(); ++i)
    if (out.shape[i] < 0) {
      error(f.shape.item(i), "negative size " + std::to_string(out.shape[i]) + " in shape " + shape_text(out.shape),
            "sizes are >= 0");
      have_shape = false;
    }
  if (!have_shape) return false;
  std::int64_t extent = shape_extent(out.shape);
  if (extent < 0 || extent > kMaxElements) {
    const bool empty = std::find(out.shape.begin(), out.shape.end(), 0) != out.shape.end();
    // An empty shape holds no elements, but its other sizes still make its strides and storage extent.
    error(f.shape,
          empty ? "shape " + shape_text(out.shape) + " has 0 elements, but its other sizes are absurdly large (" +
                      (extent < 0 ? std::string("their product overflows int64")
                                  : "their product is " + std::to_string(extent)) +
                      ", which its strides would reach; the limit is 2^40)"
                : "shape " + shape_text(out.shape) + " is absurdly large (" +
                      (extent < 0 ? std::string("overflows int64") : std::to_string(extent) + " elements") +
                      "; the limit is 2^40 elements)",
          "check the sizes; opcheck builds every input in memory");
    return false;
  }
  return true;
}

void Normalizer::read_init_args(const TensorFields& f, const InitInfo& init, TensorSpec& out, TensorFileName& file) {
  NodeRef init_args = f.init_args;
  if (!want_mapping(init_args, "init_args")) return;
  for (std::size_t i = 0; i < init_args.size(); ++i) {
    NodeRef k = init_args.key(i);
    if (!contains(init.args, k.text())) {
      std::string msg = "unknown init_args key " + q(k.text()) + " for init " + q(init.name);
      if (init.args.empty())
        error(k, msg + " (it takes no arguments)", "remove init_args");
      else
        error(k, msg + did_you_mean(k.text(), init.args), "init " + std::string(init.name) + " takes: " + join(init.args));
      continue;
    }
    // path and key name the tensor file; resolve_file reads them.
    if (k.text() == "path") {
      file.path = init_args.value(i);
      continue;
    }
    if (k.text() == "key") {
      if (read_string(init_args.value(i), "key", file.key)) {
        if (file.key.empty())
          error(init_args.value(i), "init_args.key is empty", "name the tensor to take from the file");
        else
          out.init_args.emplace_back("key", PyValue::string(file.key));
      }
      continue;
    }
    PyValue v;
    if (!read_value(init_args.value(i), k.text(), v)) continue;
    const bool bool_ok = k.text() == "fill_value";  // torch.full(shape, True, dtype=torch.bool)
    if (!v.is_number() || (v.kind == PyValue::Kind::Bool && !bool_ok)) {
      error(init_args.value(i), "init_args " + q(k.text()) + " must be a number, got " + v.repr());
      continue;
    }
    if (k.text() == "fill_value") {
      if (const std::string problem = fill_value_problem(v, out.dtype); !problem.empty()) {
        error(init_args.value(i), "init_args.fill_value " + v.repr() + " " + problem, "give a value the dtype can hold");
        continue;
      }
    }
    if (out.init == InitKind::Randint && v.kind != PyValue::Kind::Int) {
      error(init_args.value(i), "randint bound " + q(k.text()) + " must be an integer, got " + v.repr());
      continue;
    }
    out.init_args.emplace_back(std::string(k.text()), std::move(v));
  }
  std::sort(out.init_args.begin(), out.init_args.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
}

void Normalizer::check_init_args(NodeRef t, const TensorFields& f, bool have_shape, const TensorSpec& out) {
  // What each init needs of its arguments and its shape, as the torch call it stands for would refuse otherwise.
  auto arg = [&](const char* name) -> const PyValue* {
    for (const auto& kv : out.init_args)
      if (kv.first == name) return &kv.second;
    return nullptr;
  };
  const PyValue *low = arg("low"), *high = arg("high");
  NodeRef where = f.init_args ? f.init_args : (f.init ? f.init : t);
  if (out.init == InitKind::Randint) {
    if (!high && !(f.init_args && f.init_args.find("high"))) {
      error(where, "init: randint needs init_args.high (the exclusive upper bound)", "add init_args: {high: 100}");
    } else if (high && high->kind == PyValue::Kind::Int) {
      std::int64_t lo = low && low->kind == PyValue::Kind::Int ? low->i : 0;
      if (!(lo < high->i))
        error(where, "randint needs low < high, got low " + std::to_string(lo) + " and high " + std::to_string(high->i));
    }
  } else if (low && high && low->is_number() && high->is_number() && !(low->as_double() < high->as_double())) {
    error(where, "init_args needs low < high, got low " + low->repr() + " and high " + high->repr());
  }

  if (out.init == InitKind::Full && !(f.init_args && f.init_args.is_mapping() && f.init_args.find("fill_value")))
    error(where, "init: full needs init_args.fill_value", "add init_args: {fill_value: 0.5}");
  if (out.init == InitKind::Eye && have_shape && (out.shape.size() != 2 || out.shape[0] != out.shape[1]))
    error(f.shape, "init: eye needs a square 2-D shape, got " + shape_text(out.shape),
          "give shape [n, n] (torch.eye(n) is the identity)");
}

void Normalizer::read_layout(NodeRef t, const TensorFields& f, bool have_shape, TensorSpec& out) {
  // Layout: explicit stride, a preset, column-major for contiguous: false, else row-major.
  bool contiguous_flag = true, have_contiguous = false;
  if (f.contiguous) have_contiguous = read_bool(f.contiguous, "contiguous", contiguous_flag);
  if (f.offset) {
    if (read_int(f.offset, "storage_offset", out.storage_offset) && out.storage_offset < 0) {
      error(f.offset, "storage_offset must be >= 0, got " + std::to_string(out.storage_offset));
    }
  }
  if (f.preset && f.stride) error(f.preset, "'preset' and 'stride' cannot both be given", "keep one of them");
  if (f.preset && f.contiguous) error(f.contiguous, "'contiguous' and 'preset' cannot both be given", "keep one of them");
  if (f.preset_args && !f.preset) error(f.preset_args, "'preset_args' without a 'preset'", "add preset: <name>");

  if (have_shape && f.stride)
    read_stride(f, /*claims_contiguous=*/have_contiguous && contiguous_flag, out);
  else if (have_shape && f.preset)
    read_preset(f, out);
  else if (have_shape)
    out.stride = (have_contiguous && !contiguous_flag) ? column_major_strides(out.shape) : contiguous_strides(out.shape);

  if (have_shape && out.stride.size() == out.shape.size()) {
    std::int64_t extent = storage_extent(out.shape, out.stride, out.storage_offset);
    if (extent < 0 || extent > kMaxElements)
      error(f.stride ? f.stride : t,
            "the storage this layout needs is absurdly large (" +
                (extent < 0 ? std::string("overflows int64") : std::to_string(extent) + " elements") +
                "; the limit is 2^40 elements)");
  }
}

void Normalizer::read_stride(const TensorFields& f, bool claims_contiguous, TensorSpec& out) {
  if (!read_int_list(f.stride, "stride", out.stride)) return;
  if (out.stride.size() != out.shape.size()) {
    error(f.stride,
          "stride " + shape_text(out.stride) + " has " + std::to_string(out.stride.size()) + " entries but shape " +
              shape_text(out.shape) + " has " + std::to_string(out.shape.size()) + " dims",
          "give one stride per dim");
    return;
  }
  for (std::size_t i = 0; i < out.stride.size(); ++i)
    if (out.stride[i] < 0) {
      error(f.stride.item(i), "negative stride " + std::to_string(out.stride[i]), "strides are >= 0");
      return;
    }
  if (claims_contiguous) {
    TensorSpec probe;
    probe.shape = out.shape;
    probe.stride = out.stride;
    if (!probe.is_contiguous())
      error(f.contiguous,
            "contiguous: true but stride " + shape_text(out.stride) + " is not contiguous for shape " +
                shape_text(out.shape),
            "drop 'contiguous' or the stride");
  }
}

void Normalizer::read_preset(const TensorFields& f, TensorSpec& out) {
  // A preset names a common non-contiguous layout; its strides come from tensor_layout.h, as torch would make them.
  std::string name;
  if (!read_string(f.preset, "preset", name)) return;
  auto it = std::find_if(kPresets.begin(), kPresets.end(), [&](const PresetInfo& p) { return p.name == name; });
  if (it == kPresets.end()) {
    error(f.preset, "unknown preset " + q(name) + did_you_mean(name, names_of_presets()),
          "use one of " + join(names_of_presets()));
    return;
  }
  NodeRef preset_args = f.preset_args;
  if (!preset_args) {
    error(f.preset, "preset " + q(name) + " needs preset_args {" + join(it->args) + "}",
          "add preset_args: {" + join(it->args) + "}");
    return;
  }
  if (!want_mapping(preset_args, "preset_args") || !check_keys(preset_args, it->args, "in preset_args of " + name))
    return;
  out.preset = name;
  bool ok = true;
  std::vector<std::int64_t> ints;
  std::vector<std::int64_t> base_shape;
  for (auto a : it->args) {
    NodeRef v = preset_args.find(a);
    if (!v) {
      error(preset_args, "preset_args of " + name + " is missing " + q(a), "add " + std::string(a) + ": ...");
      ok = false;
      continue;
    }
    if (a == "base_shape") {
      ok = read_int_list(v, a, base_shape) && ok;
      for (std::size_t i = 0; ok && i < base_shape.size(); ++i)
        if (base_shape[i] < 0) {
          error(v.item(i), "negative size in base_shape");
          ok = false;
        }
      if (ok) out.preset_args.emplace_back(std::string(a), PyValue::none());
      if (ok) {
        std::vector<PyValue> items;
        for (auto d : base_shape) items.push_back(PyValue::integer(d));
        out.preset_args.back().second = PyValue::sequence(PyValue::Kind::List, std::move(items));
      }
    } else {
      std::int64_t x = 0;
      if (read_int(v, a, x)) {
        ints.push_back(x);
        out.preset_args.emplace_back(std::string(a), PyValue::integer(x));
      } else {
        ok = false;
      }
    }
  }
  if (!ok) return;
  std::string err;
  bool made = false;
  if (name == "noncontig_slice")
    made = noncontig_slice_strides(out.shape, ints[0], ints[1], out.stride, err);
  else if (name == "transpose_view")
    made = transpose_view_strides(out.shape, ints[0], ints[1], out.stride, err);
  else
    made = expand_view_strides(out.shape, base_shape, out.stride, err);
  if (!made) error(preset_args, err);
}

bool Normalizer::read_input(NodeRef item, const Case& c, Input& out) {
  out.loc = loc(item);
  if (!item.is_mapping()) {
    error(item, "expected an input mapping (tensor, tensor_list, value, py or file), got " + item.describe(),
          "write `- value: 3` or `- tensor: {shape: [2, 3]}`");
    return false;
  }
  if (!check_keys(item, kInputKeys, "in an input", &kTensorKeys,
                  "tensor fields belong inside `tensor:`, e.g. `- tensor: {shape: [2], dtype: fp16}`"))
    return false;
  if (item.size() != 1) {
    std::string keys;
    for (std::size_t i = 0; i < item.size(); ++i) keys += (i ? " and " : "") + q(item.key(i).text());
    error(item, item.size() == 0 ? "empty input" : "an input has " + keys + "; give exactly one of them",
          "one list item per argument: - tensor: ..., - value: ..., - py: ..., - tensor_list: ..., - file: ...");
    return false;
  }
  std::string_view kind = item.key(0).text();
  NodeRef v = item.value(0);
  if (kind == "tensor") {
    out.kind = Input::Kind::Tensor;
    return read_tensor(v, c, out.tensor);
  }
  if (kind == "tensor_list") {
    out.kind = Input::Kind::TensorList;
    if (!v.is_sequence()) {
      error(v, "expected a list of tensors for 'tensor_list', got " + v.describe(),
            "write `tensor_list: [{shape: [2]}, {shape: [3]}]`");
      return false;
    }
    out.list.resize(v.size());
    bool ok = true;
    for (std::size_t i = 0; i < v.size(); ++i) ok = read_tensor(v.item(i), c, out.list[i]) && ok;
    return ok;
  }
  if (kind == "value") {
    out.kind = Input::Kind::Value;
    return read_value(v, "value", out.value);
  }
  if (kind == "py") {
    out.kind = Input::Kind::Value;
    if (!v.is_scalar() || (v.style() == ScalarStyle::Plain && yaml::is_core_null(v.text()))) {
      error(v, "expected a string holding a Python literal for 'py', got " + v.describe(),
            "e.g. py: (Ellipsis, slice(None, 2, None))");
      return false;
    }
    std::string err;
    int col = 0;
    if (!parse_py_literal(v.text(), out.value, err, col)) {
      error_at(text_loc(v, col), "invalid Python literal in 'py': " + err,
               "py: takes literals only: numbers, strings, True/False/None, Ellipsis, slice(...), tuples, lists, "
               "torch dtypes");
      return false;
    }
    return true;
  }
  // A bare `file: x.pt` input is a tensor loaded from that file.
  out.kind = Input::Kind::Tensor;
  out.tensor.loc = loc(item);
  out.tensor.dtype = c.dtype;
  out.tensor.dtype_spelling = c.dtype_spelling;
  out.tensor.init = InitKind::File;
  out.tensor.shape_from_file = true;
  return resolve_file(v, {}, /*dtype_given=*/false, out.tensor);
}

bool Normalizer::read_case(NodeRef c, const Settings& defaults, const std::vector<std::string>& file_marks, Case& out) {
  std::size_t errors_before = diags_.error_count();
  out.loc = loc(c);
  out.model = model_;
  check_keys(c, kCaseKeys, "in a case");

  NodeRef op = c.find("op");
  if (!op)
    error(c, "case has no 'op'", "add op: torch.<name>, e.g. op: torch.add");
  else if (read_string(op, "op", out.op) && !is_op_spelling(out.op))
    error(op, "op " + q(out.op) + " is not an op name", "e.g. torch.add, torch.Tensor.view, aten::add.Tensor");

  Settings s = defaults;
  Settings own;
  NodeRef inputs, attrs, kwmap;
  for (std::size_t i = 0; i < c.size(); ++i) {
    std::string_view k = c.key(i).text();
    NodeRef v = c.value(i);
    if (contains(kSettingKeys, k)) {
      read_setting(k, v, own);
    } else if (k == "inputs") {
      inputs = v;
    } else if (k == "attrs") {
      attrs = v;
    } else if (k == "kwmap") {
      kwmap = v;
    } else if (k == "description") {
      if (!v.is_scalar())
        error(v, "expected a string for 'description', got " + v.describe());
      else
        out.description.assign(v.text());
    } else if (k == "nondeterministic") {
      read_bool(v, k, out.nondeterministic_ok);
    } else if (k == "expects_error") {
      ExpectedError e;
      if (read_expects_error(v, e)) out.expects_error = std::move(e);
    } else if (k == "skip_if") {
      read_conditions(v, k, out.skip_if);
    } else if (k == "xfail_if") {
      read_conditions(v, k, out.xfail_if);
    }
  }
  s.override_with(own);
  out.dtype = s.dtype.value_or(DType::Float32);
  out.dtype_spelling = s.dtype ? s.dtype_spelling : "fp32";
  out.seed = s.seed.value_or(0);
  out.rtol = s.rtol;
  out.atol = s.atol;
  out.compare = s.compare.value_or(Comparator::AllClose);
  if (s.pcc_min) out.pcc_min = *s.pcc_min;
  if (s.equal_nan) out.equal_nan = *s.equal_nan;
  out.timeout_s = s.timeout;

  read_marks(c, out.marks);
  for (const auto& m : file_marks)
    if (std::find(out.marks.begin(), out.marks.end(), m) == out.marks.end()) out.marks.push_back(m);

  if (attrs) read_kwargs(attrs, "attrs", out.kwargs);
  if (kwmap) read_kwargs(kwmap, "kwmap", out.kwargs);

  if (inputs && !(inputs.is_scalar() && inputs.style() == ScalarStyle::Plain && yaml::is_core_null(inputs.text()))) {
    if (!inputs.is_sequence()) {
      error(inputs, "expected a list for 'inputs', got " + inputs.describe(),
            "write each positional argument as a list item: - tensor: ... / - value: ...");
    } else {
      out.inputs.resize(inputs.size());
      for (std::size_t i = 0; i < inputs.size(); ++i) read_input(inputs.item(i), out, out.inputs[i]);
    }
  }
  return diags_.error_count() == errors_before;
}

bool Normalizer::run(const yaml::Tree& tree, Manifest& out) {
  NodeRef top = tree.root();
  std::string stem = fs::path(path_).stem().string();
  if (top.is_scalar() && top.style() == ScalarStyle::Plain && yaml::is_core_null(top.text())) {
    diags_.error(loc(top), "empty manifest", {}, "a manifest needs at least `model:` and `cases:`");
    return false;
  }
  if (!top.is_mapping()) {
    diags_.error(loc(top), "expected a mapping at the top of the manifest, got " + top.describe(), {},
                 "start the file with `model: <name>` and `cases:`");
    return false;
  }
  std::size_t errors_before = diags_.error_count();
  check_keys(top, kTopKeys, "at the top level of the manifest", &kCaseKeys,
             "case fields belong inside a list item of `cases:`");

  NodeRef model = top.find("model");
  if (!model) {
    diags_.error(loc(top), "manifest has no 'model'", {}, "add `model: <model name>` at the top");
  } else if (read_string(model, "model", out.model)) {
    if (out.model.empty())
      error(model, "model name is empty", "write the model's name, e.g. model: gpt-oss-20b");
    else if (out.model.find("::") != std::string::npos || out.model.find('/') != std::string::npos)
      error(model, "model name " + q(out.model) + " may not contain '::' or '/'", "these separate parts of case ids");
  }
  model_ = out.model.empty() ? stem : out.model;

  if (NodeRef d = top.find("description")) {
    // Documentation only: the Manifest does not carry it, but its type is still checked.
    if (!d.is_scalar()) error(d, "expected a string for 'description', got " + d.describe());
  }

  NodeRef defaults = top.find("defaults"), default_ = top.find("default");
  Settings settings;
  if (defaults && default_) {
    error(default_, "both 'defaults' and 'default' are given", "keep one 'defaults' mapping");
  } else if (NodeRef d = defaults ? defaults : default_) {
    if (want_mapping(d, defaults ? "defaults" : "default") &&
        check_keys(d, kSettingKeys, defaults ? "in defaults" : "in default", &kCaseKeys,
                   "defaults only hold dtype, seed, rtol, atol, compare, pcc_min, equal_nan and timeout")) {
      for (std::size_t i = 0; i < d.size(); ++i) read_setting(d.key(i).text(), d.value(i), settings);
    }
  }
  std::vector<std::string> file_marks;
  read_marks(top, file_marks);

  NodeRef cases = top.find("cases");
  if (!cases) {
    diags_.error(loc(top), "manifest has no 'cases'", {}, "add `cases:` with a list of cases");
  } else if (!cases.is_sequence()) {
    error(cases, "expected a list for 'cases', got " + cases.describe(),
          "write `cases:` followed by `- name: ...` items");
  }
  const bool file_ok = diags_.error_count() == errors_before;

  if (cases && cases.is_sequence()) {
    out.cases.reserve(cases.size());
    std::unordered_map<std::string, int> seen;  // case name -> line of its first definition
    seen.reserve(cases.size() * 2);
    for (std::size_t i = 0; i < cases.size(); ++i) {
      NodeRef c = cases.item(i);
      case_id_ = model_ + "::#" + std::to_string(i + 1);
      if (!c.is_mapping()) {
        error(c, "expected a case mapping (name, op, inputs, ...), got " + c.describe());
        continue;
      }
      std::string name;
      NodeRef name_node = c.find("name");
      bool named = false;
      if (!name_node) {
        error(c, "case has no 'name'", "add name: <unique name within the file>");
      } else if (read_string(name_node, "name", name)) {
        if (name.empty()) {
          error(name_node, "case name is empty", "give the case a name unique within the file");
        } else if (const std::size_t bad = control_character(name); bad != std::string::npos) {
          // The id reaches terminals and reports: an escape sequence in it would be run by the terminal.
          error(name_node,
                "case name " + q(escaped_controls(name)) + " contains a control character (" +
                    escaped_controls(name.substr(bad, name[bad] == '\xc2' ? 2 : 1)) + " at byte " +
                    std::to_string(bad) + ")",
                "use printable characters only; case names become ids in terminals and reports");
        } else {
          named = true;
          case_id_ = model_ + "::" + name;
        }
      }
      bool unique = true;
      if (named) {
        auto [it, inserted] = seen.emplace(name, name_node.line());
        if (!inserted) {
          error(name_node,
                "duplicate case name " + q(name) + " (first defined at line " + std::to_string(it->second) +
                    "); this one is dropped",
                "give every case in a file its own name");
          unique = false;
        }
      }
      Case cs;
      cs.name = name;
      cs.id = case_id_;
      bool ok = read_case(c, settings, file_marks, cs);
      if (ok && named && unique) out.cases.push_back(std::move(cs));
    }
  }
  case_id_.clear();
  return file_ok;
}

}  // namespace

// ------------------------------------------------------------------------------------------------------------------

const std::vector<std::string_view>& manifest_top_keys() { return kTopKeys; }
const std::vector<std::string_view>& manifest_case_keys() { return kCaseKeys; }
const std::vector<std::string_view>& manifest_tensor_keys() { return kTensorKeys; }

struct CallReader::Impl {
  Impl(const std::string& path, DiagnosticList& diags) : path(path), n(this->path, diags) {}
  std::string path;
  Normalizer n;
};

CallReader::CallReader(const std::string& path, DiagnosticList& diags) : impl_(std::make_unique<Impl>(path, diags)) {}
CallReader::~CallReader() = default;
void CallReader::use_v2_file_paths() { impl_->n.use_v2_file_paths(); }
void CallReader::set_case_id(std::string id) { impl_->n.set_case_id(std::move(id)); }
bool CallReader::check_keys(NodeRef map, const std::vector<std::string_view>& allowed, const std::string& where) {
  return impl_->n.check_keys(map, allowed, where);
}
bool CallReader::want_mapping(NodeRef n, std::string_view key) { return impl_->n.want_mapping(n, key); }
bool CallReader::read_string(NodeRef n, std::string_view key, std::string& out) {
  return impl_->n.read_string(n, key, out);
}
bool CallReader::read_int(NodeRef n, std::string_view key, std::int64_t& out) { return impl_->n.read_int(n, key, out); }
bool CallReader::read_number(NodeRef n, std::string_view key, double& out) {
  return impl_->n.read_number(n, key, out);
}
bool CallReader::read_bool(NodeRef n, std::string_view key, bool& out) { return impl_->n.read_bool(n, key, out); }
bool CallReader::read_kwargs(NodeRef n, std::string_view key, KwArgs& out) {
  return impl_->n.read_kwargs(n, key, out);
}
bool CallReader::read_input(NodeRef item, const Case& c, Input& out) { return impl_->n.read_input(item, c, out); }
bool CallReader::read_tensor(NodeRef t, const Case& c, TensorSpec& out) { return impl_->n.read_tensor(t, c, out); }
bool CallReader::is_op_name(std::string_view s) { return is_op_spelling(s); }
bool CallReader::is_mark_name(std::string_view s) { return is_identifier(s); }

bool normalize_manifest(const yaml::Tree& tree, const std::string& path, Manifest& out, DiagnosticList& diags) {
  Normalizer n(path, diags);
  return n.run(tree, out);
}

}  // namespace opcheck
