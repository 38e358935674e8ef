#include "repro/script.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <set>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string_view>

#include "common/init_recipes.h"
#include "common/text_escape.h"
#include "judge/backend_freedoms_table.h"
#include "manifest/tensor_file.h"
#include "repro/script_assets.h"
#include "settings/device_choice.h"

namespace opcheck::repro {
namespace {

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

// ---- Python text ---------------------------------------------------------------------------------------------

std::string py_str(const std::string& s) { return PyValue::string(s).repr(); }

std::string py_shape(const std::vector<std::int64_t>& v) {
  std::string out = "[";
  for (std::size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + std::to_string(v[i]);
  return out + "]";
}

std::string py_dtype(DType t) { return PyValue::of_dtype(t).repr(); }

/// How a literal is written: in the call (dtype arguments follow the reference's upcast, device arguments mean the
/// run's device) or as plain data.
enum class LiteralUse { Call, Data };

std::string py_literal(const PyValue& v, LiteralUse use) {
  switch (v.kind) {
    case PyValue::Kind::Float:
      if (std::isnan(v.f)) return "math.nan";
      if (std::isinf(v.f)) return v.f > 0 ? "math.inf" : "-math.inf";
      return v.repr();
    case PyValue::Kind::DType:
      if (use == LiteralUse::Call && (v.dtype == DType::Float16 || v.dtype == DType::BFloat16 || v.dtype == DType::Float32))
        return "lowp(" + v.repr() + ")";
      return v.repr();
    case PyValue::Kind::Device:
      if (use == LiteralUse::Data) return v.repr();
      return v.is_host_device() ? "'cpu'" : "device";
    case PyValue::Kind::Slice:
      return "slice(" + py_literal(v.items.at(0), use) + ", " + py_literal(v.items.at(1), use) + ", " +
             py_literal(v.items.at(2), use) + ")";
    case PyValue::Kind::Tuple:
    case PyValue::Kind::List: {
      const bool tuple = v.kind == PyValue::Kind::Tuple;
      std::string out = tuple ? "(" : "[";
      for (std::size_t i = 0; i < v.items.size(); ++i) out += (i ? ", " : "") + py_literal(v.items[i], use);
      if (tuple && v.items.size() == 1) out += ",";
      return out + (tuple ? ")" : "]");
    }
    default: return v.repr();
  }
}

/// The script assets the input recipes' Python calls.
struct RecipeHelpers {
  bool scaled = false, distinct = false, loader = false;
};

/// The Python of the input recipes (common/init_recipes.h), written as the text of a script. A spec opcheck refuses
/// is still written as far as its recipe goes: the run reports the refusal.
struct PythonValues {
  using Values = std::string;
  using Shape = std::vector<std::int64_t>;
  RecipeHelpers& uses;

  static std::string lit(const PyValue& v) { return py_literal(v, LiteralUse::Data); }
  static std::string made(const char* fn, const Shape& shape, DType d) {
    return std::string(fn) + "(" + py_shape(shape) + ", dtype=" + py_dtype(d) + ")";
  }

  void fail(const std::string&, const std::string&) {}
  std::string rand(const Shape& shape, DType d) { return made("torch.rand", shape, d); }
  std::string randint(std::int64_t lo, std::int64_t hi, const Shape& shape, DType d) {
    return "torch.randint(" + std::to_string(lo) + ", " + std::to_string(hi) + ", " + py_shape(shape) +
           ", dtype=" + py_dtype(d) + ")";
  }
  std::string randint_cast(std::int64_t lo, std::int64_t hi, const Shape& shape, DType d) {
    return "torch.randint(" + std::to_string(lo) + ", " + std::to_string(hi) + ", " + py_shape(shape) + ").to(" +
           py_dtype(d) + ")";
  }
  std::string at_most_true(std::string m, std::int64_t n) {
    return "(lambda m: m & (m.reshape(-1).cumsum(0) <= " + std::to_string(n) + ").reshape(m.shape))(" + m + ")";
  }
  std::string distinct(std::int64_t lo, std::int64_t hi, const Shape& shape, std::int64_t dim, DType d) {
    uses.distinct = true;
    return "distinct(" + std::to_string(lo) + ", " + std::to_string(hi) + ", " + py_shape(shape) + ", " +
           (dim == recipe_detail::kAllElements ? std::string("None") : std::to_string(dim)) + ", " + py_dtype(d) + ")";
  }
  std::string softmax(std::string v, std::int64_t dim, bool log) {
    return std::string(log ? "torch.log_softmax(" : "torch.softmax(") + v + ", " + std::to_string(dim) + ")";
  }
  std::string scaled(std::string r, const PyValue& lo, const PyValue& hi) {
    uses.scaled = true;
    return "scaled(" + r + ", " + lit(lo) + ", " + lit(hi) + ")";
  }
  std::string complex(std::string re, std::string im) { return "torch.complex(" + re + ", " + im + ")"; }
  std::string randn(const Shape& shape, DType d) { return made("torch.randn", shape, d); }
  std::string times(std::string v, const PyValue& s) { return v + " * " + lit(s); }
  std::string plus(std::string v, const PyValue& s) { return v + " + " + lit(s); }
  std::string zeros(const Shape& shape, DType d) { return made("torch.zeros", shape, d); }
  std::string ones(const Shape& shape, DType d) { return made("torch.ones", shape, d); }
  std::string arange(std::int64_t n, const Shape& shape, DType d) {
    return "torch.arange(" + std::to_string(n) + ").reshape(" + py_shape(shape) + ").to(" + py_dtype(d) + ")";
  }
  std::string xavier(const Shape& shape, DType d, double gain) {
    return "torch.nn.init.xavier_uniform_(" + made("torch.empty", shape, d) + ", gain=" + lit(PyValue::real(gain)) +
           ")";
  }
  std::string full(const Shape& shape, const PyValue* fill, DType d) {
    return "torch.full(" + py_shape(shape) + ", " + (fill ? lit(*fill) : std::string("None")) +
           ", dtype=" + py_dtype(d) + ")";
  }
  std::string data(const PyValue& values, DType d) {
    return "torch.tensor(" + lit(values) + ", dtype=" + py_dtype(d) + ")";
  }
  std::string file(const std::string& path, const PyValue* key) {
    if (!key && tensor_file_format(path) == TensorFileFormat::Pt)
      return "torch.load(" + py_str(path) + ", weights_only=True).contiguous()";
    uses.loader = true;
    return "load_tensor_file(" + py_str(path) + (key ? ", " + py_str(key->s) : std::string()) + ")";
  }
  std::string eye(std::int64_t n, DType d) { return "torch.eye(" + std::to_string(n) + ", dtype=" + py_dtype(d) + ")"; }
};

/// The Python of a tensor's logical values over `value_shape` (torch.manual_seed already called).
std::string values_expr(const TensorSpec& t, const std::vector<std::int64_t>& value_shape, RecipeHelpers& uses) {
  PythonValues b{uses};
  return init_values(t, value_shape, b);
}

/// `text` (a script asset) with each @NAME@ replaced by its value, which is not scanned again. Values in code are
/// Python already (every string from a manifest there went through py_str); the docstring's are its prose.
std::string filled(std::string_view text, const std::map<std::string, std::string>& values) {
  std::string out;
  std::size_t at = 0;
  for (std::size_t open; (open = text.find('@', at)) != std::string_view::npos;) {
    const std::size_t close = text.find('@', open + 1);
    const std::string name(text.substr(open + 1, close == std::string_view::npos ? 0 : close - open - 1));
    const auto value = values.find(name);
    if (value == values.end()) throw std::logic_error("repro script asset: no value for @" + name + "@");
    out.append(text.substr(at, open - at)).append(value->second);
    at = close + 1;
  }
  return out.append(text.substr(at));
}

std::string py_list(const std::vector<std::string>& items) {
  std::string out = "[";
  for (std::size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + items[i];
  return out + "]";
}

std::string py_str_or_none(const std::string& s) { return s.empty() ? "None" : py_str(s); }

/// Text from a manifest, a bundle or a device inside the script's docstring: every backslash and quote escaped, so
/// nothing (`"""`, a trailing backslash) can end the docstring early and turn the rest into code; control
/// characters as \xNN.
std::string docstring_text(std::string_view text) {
  std::string quoted;
  for (const char ch : text) {
    if (ch == '\\' || ch == '"') quoted += '\\';
    quoted += ch;
  }
  return printable_text(quoted);
}

/// The values of head.py: the docstring's account of the case, the device under test and the case's comparison.
std::map<std::string, std::string> head_values(const Case& c, const ScriptDevice& device, const ScriptBundle& bundle) {
  std::string environment;
  for (const auto& [k, v] : device.environment)
    environment += "os.environ.setdefault(" + py_str(k) + ", " + py_str(v) + ")  # the run's device faults\n";
  if (device.autoload)
    environment += "os.environ.setdefault(\"TORCH_DEVICE_BACKEND_AUTOLOAD\", " + py_str(*device.autoload) +
                   ")  # the run's autoload switch\n";
  const std::string python = device.python.empty() ? hosting_python("") : device.python;
  std::vector<std::string> imports, written;
  for (const auto& m : device.imports) imports.push_back(py_str(m));
  std::vector<std::string> module_paths;
  for (const auto& p : device.module_paths) module_paths.push_back(py_str(p));
  for (std::size_t k : bundle.written_slots) written.push_back(std::to_string(k));
  const auto real_or_none = [](const std::optional<double>& v) {
    return v ? py_literal(PyValue::real(*v), LiteralUse::Data) : "None";
  };
  std::map<std::string, std::string> values{
      {"PYTHON", python},
      {"PYTHON_STR", py_str(python)},
      {"RUN_PYTHON", py_str_or_none(device.python)},
      {"CASE_ID", docstring_text(c.id)},
      {"CASE_OP", docstring_text(c.op)},
      {"CASE_LOCATION", docstring_text(c.loc.file + ":" + std::to_string(c.loc.line))},
      {"INPUTS_FROM", bundle.folder.empty()
                          ? "Inputs: built from the manifest's recipes, as opcheck builds them (bit for bit)"
                          : "Inputs: the exact tensors of the failing run, saved in " + docstring_text(bundle.folder)},
      {"FAILURE_RECORDED", bundle.failure.empty() ? "" : "Failure recorded: " + docstring_text(bundle.failure) + "\n"},
      {"DEVICE_ENVIRONMENT", environment},
      {"DEVICE", py_str(device.device)},
      {"DEVICE_LIB", py_str_or_none(device.library)},
      {"DEVICE_IMPORTS", py_list(imports)},
      {"PYTHON_PATH", py_str_or_none(device.python_path)},
      {"DEVICE_PATHS", py_list(module_paths)},
      {"COMPILE_BACKEND", py_str_or_none(device.compile_backend)},
      {"BUNDLE", py_str_or_none(bundle.folder)},
      {"WRITTEN", py_list(written)},
  };
  // The case fields the script reads (kCaseFields' script_name), each as a Python literal of its type.
  for (const CaseField& f : kCaseFields) {
    if (!f.script_name) continue;
    values[f.script_name] = std::visit(
        [&](auto m) -> std::string {
          using T = std::decay_t<decltype(c.*m)>;
          const T& v = c.*m;
          if constexpr (std::is_same_v<T, bool>) return v ? "True" : "False";
          else if constexpr (std::is_same_v<T, std::int64_t>) return std::to_string(v);
          else if constexpr (std::is_same_v<T, double>) return PyValue::real(v).repr();
          else if constexpr (std::is_same_v<T, std::optional<double>>) return real_or_none(v);
          else if constexpr (std::is_same_v<T, Comparator>) return py_str(comparator_name(v));
          else if constexpr (std::is_same_v<T, std::string>) return py_str(v);
          else if constexpr (std::is_same_v<T, std::optional<ExpectedError>>)
            return v ? "(" + py_str(v->type) + ", " + py_str(v->match) + ")  # both runs must raise this (type, regex)"
                     : "None  # (type, regex) when both runs must raise";
          else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
            std::vector<std::string> items;
            for (const auto& x : v) items.push_back(py_str(x));
            return py_list(items);
          } else {
            static_assert(std::is_same_v<T, std::vector<PyValue>> || std::is_same_v<T, KwArgs>,
                          "the repro script spells every case field type");
            return "None";  // no case setting holds Python values
          }
        },
        f.member);
  }
  return values;
}

/// What the script's inputs() needs: the lines that build each tensor, the call's positional arguments, and which
/// helpers the lines use.
struct ScriptInputs {
  std::string build;               // the body of inputs() before its return
  std::vector<std::string> args;   // positional argument expressions
  std::vector<bool> host_slot;     // per tensor slot: placed on the host
  RecipeHelpers uses;
  bool uses_place = false;
};

/// Whether a tensor is its values laid out plainly (row-major, no offset, no expanded dims); else `value_shape` is
/// the shape its values have (one value along each expanded dim).
bool plain_layout(const TensorSpec& t, std::vector<std::int64_t>& value_shape) {
  value_shape = t.shape;
  bool expanded = false;
  for (std::size_t d = 0; d < value_shape.size() && d < t.stride.size(); ++d)
    if (t.stride[d] == 0 && value_shape[d] > 1) {
      value_shape[d] = 1;
      expanded = true;
    }
  bool plain = t.storage_offset == 0 && !expanded;
  std::int64_t expect = 1;
  for (std::size_t d = t.shape.size(); d-- > 0 && plain;) {
    plain = t.shape[d] == 1 || (d < t.stride.size() && t.stride[d] == expect);
    expect *= t.shape[d];
  }
  return plain;
}

/// The lines of inputs() that build tensor slot `var` (input i, element j of a list).
void tensor_lines(const Case& c, const TensorSpec& t, std::size_t i, std::optional<std::size_t> j,
                  const std::string& var, ScriptInputs& in) {
  std::ostringstream py;
  py << "    # input " << i << (j ? "[" + std::to_string(*j) + "]" : std::string()) << ": " << dtype_name(t.dtype)
     << " " << py_shape(t.shape);
  if (!t.shape_from_file) py << " stride " << py_shape(t.stride) << " offset " << t.storage_offset;
  py << (t.placement == Placement::Host ? ", stays on the host" : "") << "\n";
  if (t.shape_from_file) {
    py << "    " << var << " = " << values_expr(t, t.shape, in.uses) << "\n";
    in.build += py.str();
    return;
  }
  std::vector<std::int64_t> value_shape;
  const bool plain = plain_layout(t, value_shape);
  // Data and file values come over the full shape; place() keeps one value along expanded dims.
  const bool full = init_recipe(t.init).full_shape;
  if (init_recipe(t.init).seeded) {
    const std::int64_t seed = c.seed + 1000 * static_cast<std::int64_t>(i) + static_cast<std::int64_t>(j.value_or(0));
    // opcheck seeds a fresh generator with the value as unsigned 64 bits, which is what manual_seed takes.
    py << "    torch.manual_seed("
       << (seed < 0 ? std::to_string(static_cast<std::uint64_t>(seed)) : std::to_string(seed)) << ")  # seed " << c.seed
       << " + 1000 * " << i << (j ? " + " + std::to_string(*j) : std::string()) << "\n";
  }
  const std::string values = values_expr(t, full ? t.shape : value_shape, in.uses);
  if (plain) {
    py << "    " << var << " = " << values << "\n";
  } else {
    in.uses_place = true;
    py << "    " << var << " = place(" << values << ", " << py_shape(t.shape) << ", " << py_shape(t.stride) << ", "
       << t.storage_offset << ")\n";
  }
  in.build += py.str();
}

ScriptInputs script_inputs(const Case& c) {
  ScriptInputs in;
  std::size_t slot = 0;
  for (std::size_t i = 0; i < c.inputs.size(); ++i) {
    const Input& input = c.inputs[i];
    if (input.kind == Input::Kind::Value) {
      in.args.push_back(py_literal(input.value, LiteralUse::Call));
      continue;
    }
    const bool list = input.kind == Input::Kind::TensorList;
    const std::size_t n = list ? input.list.size() : 1;
    std::string arg = list ? "[" : "";
    for (std::size_t j = 0; j < n; ++j, ++slot) {
      const TensorSpec& t = list ? input.list[j] : input.tensor;
      in.host_slot.push_back(t.placement == Placement::Host);
      tensor_lines(c, t, i, list ? std::optional<std::size_t>(j) : std::nullopt, "t" + std::to_string(slot), in);
      arg += (list && j ? ", " : "") + std::string("t[") + std::to_string(slot) + "]";
    }
    in.args.push_back((input.keyword.empty() ? "" : input.keyword + "=") + (list ? arg + "]" : arg));
  }
  return in;
}

/// The arguments of the op call: positional, then keywords (those that are Python reserved words, as aten's `from`
/// of uniform_/random_, can only be passed unpacked).
std::string call_arguments(const Case& c, const std::vector<std::string>& args) {
  static const std::set<std::string> reserved{"False", "None", "True", "and", "as", "assert", "async", "await",
                                              "break", "class", "continue", "def", "del", "elif", "else", "except",
                                              "finally", "for", "from", "global", "if", "import", "in", "is",
                                              "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try",
                                              "while", "with", "yield"};
  std::string call_args;
  for (const auto& a : args) call_args += (call_args.empty() ? "" : ", ") + a;
  std::string unpacked;
  for (const auto& [k, v] : c.kwargs) {
    if (reserved.count(k))
      unpacked += (unpacked.empty() ? "" : ", ") + py_str(k) + ": " + py_literal(v, LiteralUse::Call);
    else
      call_args += (call_args.empty() ? "" : ", ") + k + "=" + py_literal(v, LiteralUse::Call);
  }
  if (!unpacked.empty()) call_args += (call_args.empty() ? "" : ", ") + std::string("**{") + unpacked + "}";
  return call_args;
}

/// call(): the op as the manifest names it. Ops older torch lacks run through opcheck's decompositions
/// (src/exec/decompositions.cpp), the same ATen ops in the same order, so the script computes what opcheck computes
/// on any torch.
/// `helpers` gets the definitions the call uses (available() and opcheck's decomposition), which the script puts
/// after the part a reader reads first.
std::string call_text(const Case& c, const std::vector<std::string>& args, std::string& helpers) {
  const bool sdpa = c.op.find("scaled_dot_product_attention") != std::string::npos;
  const bool rms_norm = !sdpa && c.op.find("rms_norm") != std::string::npos;
  std::string op = "    op = " + python_op_expression(c.op);
  if (sdpa || rms_norm) {
    helpers = std::string(repro_script_available()) +
              std::string(sdpa ? repro_script_sdpa_reference() : repro_script_rms_norm_reference());
    op = "    # opcheck's decomposition where this torch lacks the op (it arrived in a later torch)\n"
         "    op = available(lambda: " + python_op_expression(c.op) + ", " +
         (sdpa ? "sdpa_reference" : "rms_norm_reference") + ")";
  }
  return filled(repro_script_call(), {{"OP", op}, {"CALL_ARGS", call_arguments(c, args)}});
}

/// PEP 8's blank lines for the generated text: two before every top-level def and statement block that follows one,
/// never more than two anywhere.
std::string pep8_spacing(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  std::string out;
  int blanks = 0;
  bool in_def = false;
  for (const auto& line : lines) {
    if (line.empty()) {
      ++blanks;
      continue;
    }
    const bool top = line[0] != ' ' && line[0] != '#' && line[0] != ')' && line[0] != ']' && line[0] != '"';
    const bool starts_def = line.rfind("def ", 0) == 0;
    int want = std::min(blanks, 2);
    if (!out.empty() && top && (starts_def || in_def)) want = 2;
    for (int k = 0; k < want && !out.empty(); ++k) out += "\n";
    out += line + "\n";
    blanks = 0;
    if (top) in_def = starts_def;
  }
  return out;
}


}  // namespace

std::string python_op_expression(const std::string& op) {
  static const char* const operator_names[] = {"and_", "or_", "xor", "lshift", "rshift", "invert", "inv",
                                               "truediv", "floordiv", "mod", "pos", "getitem", "setitem",
                                               "iadd", "isub", "imul", "itruediv"};
  std::string aten;
  if (starts_with(op, "aten::")) aten = op.substr(6);
  else if (starts_with(op, "torch.ops.aten.")) aten = op.substr(15);
  else if (starts_with(op, "aten.")) aten = op.substr(5);
  if (!aten.empty()) return "torch.ops.aten." + aten;  // X.overload: that overload; X alone: the packet picks one
  if (starts_with(op, "F.")) return "torch.nn.functional." + op.substr(2);
  if (!starts_with(op, "torch.")) return op;  // operator.X and other spellings Python reads as written
  const std::string name = op.substr(6);
  if (name.find('.') != std::string::npos) return op;  // torch.nn.functional.X, torch.Tensor.X, torch.linalg.X, ...
  for (const char* o : operator_names)
    if (name == o) return "operator." + name;
  if (starts_with(name, "__")) return "torch.Tensor." + name;
  if (name == "sym_sum") return "getattr(torch, \"sym_sum\", sum)";
  // Manifests write Tensor methods as torch.X (torch.float, torch.to, torch.repeat): the torch function where torch
  // has one, else the method, as opcheck reads them.
  return "(torch." + name + " if callable(getattr(torch, \"" + name + "\", None)) else torch.Tensor." + name + ")";
}

// The comparators' table for the script: name: (bitwise, float64 judge).
static std::string comparators_table() {
  std::string out = "{";
  for (const ComparatorSpec& c : kComparators)
    out += py_str(c.name) + ": (" + (c.bitwise ? "True" : "False") + ", " + (c.float64_judge ? "True" : "False") +
           "), ";
  return out + "}";
}

// Each comparator's Python verdict as a function, and VERDICTS naming them by comparator.
static std::string comparator_verdicts() {
  std::string defs, table = "VERDICTS = {";
  for (const ComparatorSpec& c : kComparators) {
    const std::string fn = std::string("verdict_") + c.name;
    defs += "\n\ndef " + fn + "(e, a, mismatched, path):\n";
    std::istringstream body(c.python_verdict);
    for (std::string line; std::getline(body, line);) defs += line.empty() ? "\n" : "    " + line + "\n";
    table += py_str(c.name) + ": " + fn + ", ";
  }
  return defs + "\n\n" + table + "}";
}

/// The judgement's Python twin with opcheck's tables written in: backend freedoms and the accumulation bound's ops
/// (judge/backend_freedoms_table.h) and comparators (opcheck/comparators.h).
std::string judge_text() {
  std::string widened = "{", nondeterministic = "{";
  for (const WidenedOutputRule& w : widened_output_rules())
    widened += py_str(w.op) + ": (" + std::to_string(w.outputs[0]) + ", " + std::to_string(w.outputs[1]) + "), ";
  std::string writes = "(", ties = "{";
  for (const RepeatedWriteRule& w : repeated_write_rules()) writes += py_str(w.op) + ", ";
  for (const TiedIndexRule& t : tied_index_rules())
    ties += py_str(t.op) + ": (" + std::to_string(t.output) + ", " + (t.reduced ? "True" : "False") + "), ";
  for (const NondeterministicRule& n : nondeterministic_rules())
    nondeterministic += py_str(n.op) + ": (" + (n.only_with ? py_str(n.only_with) : "None") + ", " + py_str(n.doc) + "), ";
  std::string accumulation = "[";  // (op, condition, in float32 at least, a mean, counted with, a product)
  const auto py_bool = [](bool b) { return std::string(b ? "True" : "False"); };
  const auto py_text = [](const char* s) { return s ? py_str(s) : std::string("None"); };
  for (const AccumulationRule& a : accumulation_rules())
    accumulation += "(" + py_str(a.op) + ", " + py_text(a.only_with) + ", " +
                    py_bool(a.in == AccumulatesIn::Float32AtLeast) + ", " + py_bool(a.mean) + ", " +
                    py_text(a.counted_with) + ", " + py_bool(a.product) + "), ";
  return filled(repro_script_judge(), {{"JUDGE_MULTIPLE", PyValue::real(kReferenceErrorMultiple).repr()},
                                       {"WIDENED_OUTPUTS", widened + "}"},
                                       {"NONDETERMINISTIC", nondeterministic + "}"},
                                       {"COMPARATORS", comparators_table()},
                                       {"WRITES", writes + ")"},
                                       {"TIES", ties + "}"},
                                       {"COMPARATOR_VERDICTS", comparator_verdicts()}}) +
         filled(repro_script_accumulation(),
                {{"ACCUMULATION", accumulation + "]"},
                 {"ACCUMULATION_MULTIPLE", PyValue::real(kAccumulationBoundMultiple).repr()}});
}

std::string python_repro_script(const Case& c, const ScriptDevice& device, const ScriptBundle& bundle) {
  // What a kernel developer reads comes first: the call, its inputs and the check; then how the script sets up the
  // device, the helpers the inputs and the call use, and opcheck's judgement.
  const ScriptInputs in = script_inputs(c);
  const std::map<std::string, std::string> values = head_values(c, device, bundle);
  std::string py = filled(repro_script_head(), values), helpers;
  py += call_text(c, in.args, helpers);
  std::string names, host;
  for (std::size_t s = 0; s < in.host_slot.size(); ++s) {
    names += (s ? ", t" : "t") + std::to_string(s);
    host += std::string(s ? ", " : "") + (in.host_slot[s] ? "True" : "False");
  }
  py += filled(repro_script_inputs(),
               {{"BUILD_INPUTS", in.build}, {"INPUT_NAMES", names}, {"HOST_INPUTS", "[" + host + "]"}});
  py += filled(repro_script_setup(), values);
  if (in.uses.loader) py += repro_script_load_tensor_file();
  if (in.uses.scaled) py += repro_script_scaled();
  if (in.uses.distinct) py += repro_script_distinct();
  if (in.uses_place) py += repro_script_place();
  py += helpers;
  std::optional<DType> kwarg_low;
  for (const auto& [k, v] : c.kwargs)
    if (v.kind == PyValue::Kind::DType && (v.dtype == DType::Float16 || v.dtype == DType::BFloat16))
      kwarg_low = v.dtype;
  py += judge_text();
  py += filled(repro_script_main(), {{"KWARG_LOW_DTYPE", kwarg_low ? py_dtype(*kwarg_low) : "None"}});
  return pep8_spacing(py);
}

}  // namespace opcheck::repro
