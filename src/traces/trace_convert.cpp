#include "traces/trace_convert.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <map>
#include <optional>

#include "common/refused_ops.h"
#include "common/text_escape.h"
#include "manifest/manifest_writer.h"
#include "manifest/string_values.h"
#include "manifest/tensor_layout.h"
#include "opcheck/value.h"

namespace opcheck::traces {
namespace {

using Kind = TraceValue::Kind;

// ---- Tables: what the trace format leaves out, per op (data, no per-op code) --------------------------------------

/// Where the valid range of an integer index tensor comes from.
enum class Bound {
  DimOfSource,       // below source.size(dim), dim fixed or read from dim_arg
  ClassDimOfSource,  // below source.size(1) (source.size(0) for a 1-d source): class targets of nll_loss
  ValueArg,          // below the int value at source_arg (one_hot's num_classes, embedding backward's num_weights)
  TrailingNumel,     // below the product of source's last `fixed` sizes (flat spatial indices of max pooling)
  NumelOfSource,     // below source.numel() (take)
  PerPosition,       // index_arg is a list; tensor j indexes source dim j (advanced indexing)
};

struct IndexRule {
  const char* op;   // aten base name (no overload): every overload shares the rule
  int index_arg;    // positional argument holding the indices
  Bound bound;
  int source_arg;   // the indexed tensor (or the value giving the bound)
  int dim_arg;      // argument holding the indexed dim, -1 when `fixed` is the dim
  int fixed;        // fixed dim, or the count of trailing dims for TrailingNumel
  const char* role; // what the indices are, for the description
};

constexpr IndexRule kIndexRules[] = {
    {"embedding", 1, Bound::DimOfSource, 0, -1, 0, "embedding rows"},
    {"embedding_dense_backward", 1, Bound::ValueArg, 2, -1, 0, "embedding rows (num_weights)"},
    {"gather", 2, Bound::DimOfSource, 0, 1, 0, "gather indices"},
    {"take_along_dim", 1, Bound::DimOfSource, 0, 2, 0, "take_along_dim indices"},
    {"scatter", 2, Bound::DimOfSource, 0, 1, 0, "scatter indices"},
    {"scatter_", 2, Bound::DimOfSource, 0, 1, 0, "scatter indices"},
    {"scatter_add", 2, Bound::DimOfSource, 0, 1, 0, "scatter indices"},
    {"scatter_add_", 2, Bound::DimOfSource, 0, 1, 0, "scatter indices"},
    {"scatter_reduce", 2, Bound::DimOfSource, 0, 1, 0, "scatter indices"},
    {"scatter_reduce_", 2, Bound::DimOfSource, 0, 1, 0, "scatter indices"},
    {"index_select", 2, Bound::DimOfSource, 0, 1, 0, "index_select indices"},
    {"index_add", 2, Bound::DimOfSource, 0, 1, 0, "index_add indices"},
    {"index_add_", 2, Bound::DimOfSource, 0, 1, 0, "index_add indices"},
    {"index_copy", 2, Bound::DimOfSource, 0, 1, 0, "index_copy indices"},
    {"index_copy_", 2, Bound::DimOfSource, 0, 1, 0, "index_copy indices"},
    {"index_fill", 2, Bound::DimOfSource, 0, 1, 0, "index_fill indices"},
    {"index_fill_", 2, Bound::DimOfSource, 0, 1, 0, "index_fill indices"},
    {"index_reduce", 2, Bound::DimOfSource, 0, 1, 0, "index_reduce indices"},
    {"index", 1, Bound::PerPosition, 0, -1, 0, "advanced indices"},
    {"_unsafe_index", 1, Bound::PerPosition, 0, -1, 0, "advanced indices"},
    {"index_put", 1, Bound::PerPosition, 0, -1, 0, "advanced indices"},
    {"index_put_", 1, Bound::PerPosition, 0, -1, 0, "advanced indices"},
    {"_index_put_impl_", 1, Bound::PerPosition, 0, -1, 0, "advanced indices"},
    {"nll_loss", 1, Bound::ClassDimOfSource, 0, -1, 0, "class targets"},
    {"nll_loss_forward", 1, Bound::ClassDimOfSource, 0, -1, 0, "class targets"},
    {"nll_loss2d_forward", 1, Bound::ClassDimOfSource, 0, -1, 0, "class targets"},
    {"nll_loss_backward", 2, Bound::ClassDimOfSource, 1, -1, 0, "class targets"},
    {"nll_loss2d_backward", 2, Bound::ClassDimOfSource, 1, -1, 0, "class targets"},
    {"one_hot", 0, Bound::ValueArg, 1, -1, 0, "classes (num_classes)"},
    {"take", 1, Bound::NumelOfSource, 0, -1, 0, "flat indices"},
    {"max_pool2d_with_indices_backward", 7, Bound::TrailingNumel, 1, -1, 2, "flat spatial indices of the maxima"},
    {"max_pool3d_with_indices_backward", 7, Bound::TrailingNumel, 1, -1, 3, "flat spatial indices of the maxima"},
};

/// Integer tensors from argument 1 on divide: a zero would raise (ZeroDivisionError) on the reference.
constexpr const char* kIntegerDivisionOps[] = {"div", "div_", "floor_divide", "floor_divide_", "remainder",
                                               "remainder_", "fmod", "fmod_"};

/// Matrix-product operands get xavier values (as torch-spyre's manifests do), keeping sums of long products in the
/// range where low-precision results stay comparable.
struct Operands {
  const char* op;
  int a, b;
};
constexpr Operands kProductOperands[] = {
    {"mm", 0, 1},     {"bmm", 0, 1},         {"matmul", 0, 1},      {"linear", 0, 1},  {"addmm", 1, 2},
    {"baddbmm", 1, 2}, {"addbmm", 1, 2},     {"convolution", 0, 1}, {"_convolution", 0, 1},
    {"conv2d", 0, 1}, {"conv1d", 0, 1},      {"addmv", 1, 2},
};

/// Ops whose result is random: the device and the reference draw different numbers, so nothing can be compared.
constexpr const char* kRandomOps[] = {"bernoulli", "bernoulli_", "rand_like", "randn_like", "randint_like", "normal",
                                      "normal_", "uniform_", "exponential_", "geometric_", "cauchy_", "log_normal_",
                                      "multinomial", "randperm", "rrelu_with_noise", "random_", "rand", "randn",
                                      "randint"};

/// Trace-only overload names -> the overload of the schema that PyTorch recorded them for.
struct OverloadAlias {
  const char* name;
  const char* written;
  const char* schema;
};
constexpr OverloadAlias kOverloadAliases[] = {
    {"sum", "SymInt", "dim_IntList"},
};

template <typename T, std::size_t N>
const T* find_row(const T (&rows)[N], const std::string& op) {
  for (const auto& r : rows)
    if (op == r.op) return &r;
  return nullptr;
}

template <std::size_t N>
bool listed(const char* const (&names)[N], const std::string& op) {
  return std::any_of(std::begin(names), std::end(names), [&](const char* n) { return op == n; });
}

// ---- Text helpers -------------------------------------------------------------------------------------------------

bool is_identifier(const std::string& s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

/// A trace string as a manifest value: a dtype or device spelling keeps its meaning, anything else stays exactly
/// that string (the writer protects strings the loader would read as something else).
PyValue text_value(const std::string& s) {
  PyValue read;
  std::string error;
  int col = 0;
  if (classify_string(s, read, error, col) && (read.kind == PyValue::Kind::DType || read.kind == PyValue::Kind::Device))
    return read;
  return PyValue::string(s);
}

std::string torch_dtype(DType t) { return PyValue::of_dtype(t).repr(); }

std::int64_t numel(const std::vector<std::int64_t>& shape) {
  std::int64_t n = 1;
  for (auto s : shape) n = s == 0 ? 0 : (n > std::numeric_limits<std::int64_t>::max() / s ? -1 : n * s);
  return n;
}

std::vector<std::int64_t> contiguous_stride(const std::vector<std::int64_t>& shape) {
  std::vector<std::int64_t> stride(shape.size(), 1);
  for (std::size_t d = shape.size(); d-- > 1;) stride[d - 1] = stride[d] * std::max<std::int64_t>(shape[d], 1);
  return stride;
}

bool is_contiguous(const TraceTensor& t) {
  if (!t.stride) return true;
  const auto c = contiguous_stride(t.shape);
  for (std::size_t d = 0; d < t.shape.size(); ++d)
    if (t.shape[d] > 1 && (*t.stride)[d] != c[d]) return false;
  return true;
}

/// Two logical indices that share an element (other than through a 0 stride) make a layout no tensor can be built
/// with: sorted by stride, each stride must exceed the span of the smaller ones.
bool overlaps(const TraceTensor& t) {
  if (!t.stride) return false;
  std::vector<std::size_t> dims;
  for (std::size_t d = 0; d < t.shape.size(); ++d)
    if (t.shape[d] > 1 && (*t.stride)[d] != 0) dims.push_back(d);
  std::sort(dims.begin(), dims.end(), [&](std::size_t a, std::size_t b) { return (*t.stride)[a] < (*t.stride)[b]; });
  std::int64_t span = 0;
  for (std::size_t d : dims) {
    if ((*t.stride)[d] <= span) return true;
    span += (*t.stride)[d] * (t.shape[d] - 1);
  }
  return false;
}

std::optional<PyValue> to_py(const TraceValue& v) {
  switch (v.kind) {
    case Kind::None: return PyValue::none();
    case Kind::Bool: return PyValue::boolean(v.b);
    case Kind::Int: return PyValue::integer(v.i);
    case Kind::Float: return PyValue::real(v.f);
    case Kind::String: return PyValue::string(v.text);
    case Kind::DType: return PyValue::of_dtype(v.dtype);
    case Kind::Symbol: return PyValue::string(v.text);
    case Kind::Device: return PyValue::string(v.text);
    case Kind::List:
    case Kind::Tuple: {
      std::vector<PyValue> items;
      for (const auto& item : v.items) {
        auto p = to_py(item);
        if (!p) return std::nullopt;
        items.push_back(std::move(*p));
      }
      return PyValue::sequence(v.kind == Kind::List ? PyValue::Kind::List : PyValue::Kind::Tuple, std::move(items));
    }
    case Kind::Tensor:
    case Kind::Dict: return std::nullopt;
  }
  return std::nullopt;
}

/// A scalar as a YAML value, or nullopt when it needs `py:` (or a quoted string) instead.
std::optional<std::string> yaml_scalar(const TraceValue& v) {
  switch (v.kind) {
    case Kind::None:
    case Kind::Bool:
    case Kind::Int:
    case Kind::Float:
    case Kind::DType: return manifest_text::value(*to_py(v));
    default: return std::nullopt;
  }
}

bool contains_tensor(const TraceValue& v) {
  if (v.kind == Kind::Tensor) return true;
  for (const auto& i : v.items)
    if (contains_tensor(i)) return true;
  for (const auto& e : v.entries)
    if (contains_tensor(e.second)) return true;
  return false;
}

/// "aten.add.Tensor" -> {"aten", "add", "Tensor"}.
struct OpParts {
  std::string ns, name, overload;
};
OpParts split_op(const std::string& op) {
  OpParts p;
  const auto first = op.find('.');
  if (first == std::string::npos) return p;
  p.ns = op.substr(0, first);
  const auto second = op.find('.', first + 1);
  p.name = op.substr(first + 1, second == std::string::npos ? std::string::npos : second - first - 1);
  if (second != std::string::npos) p.overload = op.substr(second + 1);
  return p;
}

// ---- One call -> one case -----------------------------------------------------------------------------------------

/// Why a call is not converted: the message and the column of the argument at fault (0 = the line).
struct Refusal {
  std::string message;
  int col = 0;
};

/// A tensor's values: the init recipe and the sentence that explains a non-default one.
struct Recipe {
  std::string init = "rand";
  std::optional<std::int64_t> low, high;
  std::string note;
};

/// The tensor or tensors at one positional argument, by list position (0 for a plain tensor).
struct TensorRef {
  int arg = 0;
  int item = -1;  // -1: the argument itself is the tensor
};

class CallConverter {
 public:
  CallConverter(const TraceEntry& e, const std::string& path) : e_(e), path_(path), parts_(split_op(e.op)) {}

  std::optional<Refusal> convert(std::string& out_case, const std::string& case_name, DType default_dtype,
                                 DType& case_dtype) {
    const auto& args = e_.call.args;
    if (listed(kRandomOps, parts_.name))
      return Refusal{e_.op + " draws random numbers: the device and the reference draw different ones, so there is "
                     "nothing to compare"};
    for (const auto& kw : e_.call.kwargs)
      if (contains_tensor(kw.second))
        return Refusal{"keyword argument '" + kw.first + "' holds a tensor; manifests keep tensors positional "
                       "(kwmap holds values only)", kw.second.col};
    if (auto r = check_view()) return r;

    // Inputs.
    std::vector<std::string> inputs;
    bool any_value = false, noncontiguous = false;
    std::vector<DType> float_dtypes;
    std::optional<DType> first_tensor_dtype;
    auto note_dtype = [&](const TraceTensor& t) {
      if (!first_tensor_dtype) first_tensor_dtype = t.dtype;
      if (dtype_is_floating(t.dtype) && std::find(float_dtypes.begin(), float_dtypes.end(), t.dtype) == float_dtypes.end())
        float_dtypes.push_back(t.dtype);
      if (!is_contiguous(t)) noncontiguous = true;
    };
    for (std::size_t k = 0; k < args.size(); ++k) {
      const TraceValue& a = args[k];
      if (a.kind == Kind::Tensor) {
        std::string text;
        if (auto r = tensor_yaml(a, {static_cast<int>(k), -1}, "          ", text)) return r;
        inputs.push_back("      - tensor:\n" + text);
        note_dtype(a.tensor);
        continue;
      }
      if ((a.kind == Kind::List || a.kind == Kind::Tuple) && contains_tensor(a)) {
        std::string text = "      - tensor_list:\n";
        for (std::size_t j = 0; j < a.items.size(); ++j) {
          const TraceValue& item = a.items[j];
          if (item.kind != Kind::Tensor)
            return Refusal{"argument " + std::to_string(k) + " mixes tensors with " + item.describe() +
                           "; a manifest tensor_list holds tensors only (Tensor?[] with None cannot be written)",
                           item.col};
          std::string t;
          if (auto r = tensor_yaml(item, {static_cast<int>(k), static_cast<int>(j)}, "            ", t)) return r;
          t[10] = '-';  // the first key line starts the list item
          text += t;
          note_dtype(item.tensor);
        }
        inputs.push_back(text);
        continue;
      }
      if (a.kind == Kind::Dict) return Refusal{"argument " + std::to_string(k) + " is a dict", a.col};
      any_value = true;
      if (auto s = yaml_scalar(a)) {
        inputs.push_back("      - value: " + *s + "\n");
      } else {
        auto p = to_py(a);
        if (!p) return Refusal{"argument " + std::to_string(k) + " cannot be written as a Python literal", a.col};
        inputs.push_back("      - py: " + manifest_text::quoted(p->repr()) + "\n");
      }
    }

    // Keyword arguments.
    std::string kwmap;
    for (const auto& [key, v] : e_.call.kwargs) {
      if (!is_identifier(key)) return Refusal{"keyword '" + key + "' is not a Python identifier", v.col};
      std::string text;
      if (auto s = yaml_scalar(v)) {
        text = *s;
      } else if (v.kind == Kind::String || v.kind == Kind::Symbol || v.kind == Kind::Device) {
        text = manifest_text::value(text_value(v.text));
      } else if (auto p = to_py(v)) {
        text = manifest_text::quoted(p->repr());
      } else {
        return Refusal{"keyword argument '" + key + "' cannot be written as a value", v.col};
      }
      kwmap += "      " + manifest_text::key(key) + ": " + text + "\n";
    }

    case_dtype = !float_dtypes.empty() ? float_dtypes.front() : first_tensor_dtype.value_or(default_dtype);
    // `trace` says where the case came from: coverage counts the cases of each source (docs/results.md).
    std::vector<std::string> marks{"trace"};
    for (DType t : float_dtypes) {
      if (t == DType::Float16) marks.push_back("fp16operation");
      if (t == DType::BFloat16) marks.push_back("bf16operation");
      if (t == DType::Float32) marks.push_back("fp32operation");
    }
    if (any_value) marks.push_back("constant");
    if (noncontiguous) marks.push_back("noncontiguous");

    std::string description = path_ + ":" + std::to_string(e_.line) + ": " + e_.op + ", cnt: " +
                              std::to_string(e_.call.count) +
                              (e_.call.count == 0 ? " (synthetic input, not a call the model made)" : "");
    for (const auto& n : notes_) description += "; " + n;

    out_case = "  - name: " + manifest_text::quoted(case_name) + "\n";
    out_case += "    op: " + schema_op_name(e_.op) + "\n";
    if (inputs.empty()) {
      out_case += "    inputs: []\n";
    } else {
      out_case += "    inputs:\n";
      for (const auto& i : inputs) out_case += i;
    }
    out_case += "    description: " + manifest_text::quoted(description) + "\n";
    if (case_dtype != default_dtype) out_case += "    dtype: " + std::string(dtype_name(case_dtype)) + "\n";
    out_case += "    marks:\n";
    for (const auto& m : marks) out_case += "      - " + m + "\n";
    if (!kwmap.empty()) out_case += "    kwmap:\n" + kwmap;
    return std::nullopt;
  }

 private:
  const TraceValue* arg(int k) const {
    return k >= 0 && static_cast<std::size_t>(k) < e_.call.args.size() ? &e_.call.args[static_cast<std::size_t>(k)]
                                                                       : nullptr;
  }

  /// view/_unsafe_view raise unless the strides allow the new shape: such a line cannot be a call that succeeded.
  std::optional<Refusal> check_view() const {
    if (parts_.name != "view" && parts_.name != "_unsafe_view" && parts_.name != "view_copy") return std::nullopt;
    const TraceValue* self = arg(0);
    const TraceValue* size = arg(1);
    if (!self || !size || self->kind != Kind::Tensor || (size->kind != Kind::List && size->kind != Kind::Tuple))
      return std::nullopt;  // view.dtype and other forms: nothing to check
    std::vector<std::int64_t> target;
    for (const auto& s : size->items) {
      if (s.kind != Kind::Int) return std::nullopt;
      target.push_back(s.i);
    }
    const auto& t = self->tensor;
    std::string why;
    if (view_possible(t.shape, t.stride ? *t.stride : contiguous_stride(t.shape), target, why)) return std::nullopt;
    return Refusal{"the call cannot succeed: " + why + " (PyTorch raises for such a view; the trace line does not "
                   "describe a call that ran)", size->col};
  }

  /// The index rule that covers tensor `ref`, if any, and the exclusive bound it gives.
  std::optional<Refusal> index_bound(const TensorRef& ref, const TraceTensor& t, std::optional<std::int64_t>& bound,
                                     std::string& note) const {
    const IndexRule* rule = find_row(kIndexRules, parts_.name);
    if (!rule || rule->index_arg != ref.arg) return std::nullopt;
    if ((rule->bound == Bound::PerPosition) != (ref.item >= 0)) return std::nullopt;
    const TraceValue* src = arg(rule->source_arg);
    const std::string who = "input " + std::to_string(rule->source_arg);
    auto need_tensor = [&]() -> std::optional<Refusal> {
      if (!src || src->kind != Kind::Tensor)
        return Refusal{"cannot infer the range of the " + std::string(rule->role) + " at input " +
                       std::to_string(ref.arg) + ": " + who + " is not a tensor"};
      return std::nullopt;
    };
    switch (rule->bound) {
      case Bound::DimOfSource:
      case Bound::PerPosition:
      case Bound::ClassDimOfSource: {
        if (auto r = need_tensor()) return r;
        const auto& shape = src->tensor.shape;
        const auto rank = static_cast<std::int64_t>(shape.size());
        std::int64_t dim = rule->fixed;
        if (rule->bound == Bound::PerPosition) dim = ref.item;
        if (rule->bound == Bound::ClassDimOfSource) dim = rank >= 2 ? 1 : 0;
        if (rule->dim_arg >= 0) {
          const TraceValue* d = arg(rule->dim_arg);
          if (!d || d->kind != Kind::Int)
            return Refusal{"cannot infer the range of the " + std::string(rule->role) + ": input " +
                           std::to_string(rule->dim_arg) + " should be the dim"};
          dim = d->i;
        }
        const std::int64_t wrapped = dim < 0 ? dim + std::max<std::int64_t>(rank, 1) : dim;
        if (rank == 0 && (wrapped == 0)) {
          bound = 1;  // a 0-dim source indexes like a 1-element vector
        } else if (wrapped < 0 || wrapped >= rank) {
          return Refusal{"dim " + std::to_string(dim) + " is out of range for " + who + " of rank " +
                         std::to_string(rank)};
        } else {
          bound = shape[static_cast<std::size_t>(wrapped)];
        }
        note = "input " + std::to_string(ref.arg) + (ref.item >= 0 ? "[" + std::to_string(ref.item) + "]" : "") +
               " holds " + rule->role + " into dim " + std::to_string(wrapped) + " of " + who + " (size " +
               std::to_string(*bound) + ")";
        break;
      }
      case Bound::ValueArg: {
        if (!src || src->kind != Kind::Int || src->i <= 0) {
          if (src && src->kind == Kind::Int && src->i < 0) return std::nullopt;  // one_hot(-1): any class count
          return Refusal{"cannot infer the range of the " + std::string(rule->role) + ": input " +
                         std::to_string(rule->source_arg) + " should be a positive int"};
        }
        bound = src->i;
        note = "input " + std::to_string(ref.arg) + " holds " + rule->role + " below input " +
               std::to_string(rule->source_arg) + " (" + std::to_string(src->i) + ")";
        break;
      }
      case Bound::TrailingNumel:
      case Bound::NumelOfSource: {
        if (auto r = need_tensor()) return r;
        const auto& shape = src->tensor.shape;
        std::size_t from = 0;
        if (rule->bound == Bound::TrailingNumel) {
          if (shape.size() < static_cast<std::size_t>(rule->fixed))
            return Refusal{who + " has fewer than " + std::to_string(rule->fixed) + " dims"};
          from = shape.size() - static_cast<std::size_t>(rule->fixed);
        }
        bound = numel({shape.begin() + static_cast<std::ptrdiff_t>(from), shape.end()});
        note = "input " + std::to_string(ref.arg) + " holds " + rule->role + " below " + std::to_string(*bound) +
               " (elements of " + who + (rule->bound == Bound::TrailingNumel ? "'s trailing dims" : "") + ")";
        break;
      }
    }
    (void)t;
    return std::nullopt;
  }

  std::optional<Refusal> recipe_for(const TensorRef& ref, const TraceTensor& t, int col, Recipe& r) {
    if (t.dtype == DType::Bool) return std::nullopt;  // rand: half true
    if (dtype_is_floating(t.dtype) || dtype_is_complex(t.dtype)) {
      if (const Operands* o = find_row(kProductOperands, parts_.name))
        if ((ref.arg == o->a || ref.arg == o->b) && ref.item < 0 && t.shape.size() >= 2 && dtype_is_floating(t.dtype))
          r.init = "xavier";
      return std::nullopt;
    }
    // Integers: indices need values valid for the op; other integers a modest range.
    std::optional<std::int64_t> bound;
    std::string note;
    if (auto refusal = index_bound(ref, t, bound, note)) {
      refusal->col = col;
      return refusal;
    }
    const std::string where = "input " + std::to_string(ref.arg) + (ref.item >= 0 ? "[" + std::to_string(ref.item) + "]" : "");
    if (bound) {
      if (*bound <= 0) {
        if (numel(t.shape) == 0) {
          r.init = "zeros";
          return std::nullopt;
        }
        return Refusal{"the call cannot succeed: " + note + ", an empty range, yet " + where + " holds " +
                       std::to_string(numel(t.shape)) + " indices", col};
      }
      r.init = "randint";
      r.low = 0;
      r.high = *bound;
      r.note = note + ": randint in [0, " + std::to_string(*bound) + ")";
      return std::nullopt;
    }
    std::int64_t high = 1000;
    if (t.dtype == DType::Int8) high = 128;
    if (t.dtype == DType::UInt8) high = 256;
    const bool divisor = ref.arg >= 1 && listed(kIntegerDivisionOps, parts_.name);
    r.init = "randint";
    r.low = divisor ? 1 : 0;
    r.high = high;
    if (divisor)
      r.note = where + " divides: randint in [1, " + std::to_string(high) + ") so no division by zero";
    return std::nullopt;
  }

  std::optional<Refusal> tensor_yaml(const TraceValue& v, const TensorRef& ref, const std::string& indent,
                                     std::string& out) {
    const TraceTensor& t = v.tensor;
    if (numel(t.shape) < 0 || numel(t.shape) > (std::int64_t{1} << 40))
      return Refusal{"tensor " + v.describe() + " is too large for a manifest (more than 2^40 elements)", v.col};
    if (overlaps(t))
      return Refusal{"tensor " + v.describe() + " has strides that make distinct indices share memory; opcheck "
                     "cannot build such an input", v.col};
    if (t.stride) {
      // The loader's own bound on the storage a layout reaches (manifest/tensor_layout.h), told at the trace line.
      if (std::any_of(t.stride->begin(), t.stride->end(), [](std::int64_t d) { return d < 0; }))
        return Refusal{"tensor " + v.describe() + " has a negative stride; opcheck builds inputs with strides >= 0",
                       v.col};
      const std::int64_t extent = storage_extent(t.shape, *t.stride, 0);
      if (extent < 0 || extent > kMaxElements)
        return Refusal{"tensor " + v.describe() + " has strides whose storage is absurdly large (" +
                           (extent < 0 ? std::string("overflows int64") : std::to_string(extent) + " elements") +
                           "; the limit is 2^40 elements)",
                       v.col};
    }
    Recipe r;
    if (auto refusal = recipe_for(ref, t, v.col, r)) return refusal;
    if (!r.note.empty()) notes_.push_back(r.note);
    out += indent + "shape: " + manifest_text::ints(t.shape) + "\n";
    out += indent + "stride: " + manifest_text::ints(t.stride ? *t.stride : contiguous_stride(t.shape)) + "\n";
    out += indent + "storage_offset: 0\n";
    out += indent + "dtype: " + torch_dtype(t.dtype) + "\n";
    out += indent + "device: cuda:0\n";
    out += indent + "init: " + r.init + "\n";
    if (r.high) {
      out += indent + "init_args:\n";
      if (r.low && *r.low != 0) out += indent + "  low: " + std::to_string(*r.low) + "\n";
      out += indent + "  high: " + std::to_string(*r.high) + "\n";
    }
    return std::nullopt;
  }

  const TraceEntry& e_;
  const std::string& path_;
  OpParts parts_;
  std::vector<std::string> notes_;
};

std::string base_file_name(const std::string& path) {
  const auto slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

std::string schema_op_name(const std::string& trace_op) {
  OpParts p = split_op(trace_op);
  if (p.ns.empty() || p.name.empty()) return {};
  for (const auto& a : kOverloadAliases)
    if (p.name == a.name && p.overload == a.written) p.overload = a.schema;
  return p.ns + "::" + p.name + (p.overload.empty() ? "" : "." + p.overload);
}

bool view_possible(const std::vector<std::int64_t>& shape, const std::vector<std::int64_t>& stride,
                   std::vector<std::int64_t> target, std::string& why) {
  const std::int64_t n = numel(shape);
  // Infer the one -1 from the element count, as view does.
  std::int64_t known = 1;
  int infer = -1;
  for (std::size_t d = 0; d < target.size(); ++d) {
    if (target[d] == -1) {
      if (infer >= 0) {
        why = "only one dimension can be -1 in " + manifest_text::ints(target);
        return false;
      }
      infer = static_cast<int>(d);
    } else if (target[d] < 0) {
      why = "invalid size " + std::to_string(target[d]) + " in " + manifest_text::ints(target);
      return false;
    } else {
      known *= target[d];
    }
  }
  if (infer >= 0) {
    if (known == 0 || n % known != 0) {
      why = "shape " + manifest_text::ints(target) + " is invalid for a tensor of " + std::to_string(n) + " elements";
      return false;
    }
    target[static_cast<std::size_t>(infer)] = n / known;
  }
  if (numel(target) != n) {
    why = "shape " + manifest_text::ints(target) + " is invalid for a tensor of " + std::to_string(n) + " elements";
    return false;
  }
  if (n == 0 || shape.empty()) return true;
  // Walk the old dims from the innermost, grouping runs that are contiguous with each other; each run must be
  // covered exactly by a run of new dims.
  const auto describe = [&] {
    return "a " + manifest_text::ints(shape) + " tensor with stride " + manifest_text::ints(stride) +
           " cannot be viewed as " +
           manifest_text::ints(target) + " (view size is not compatible with the input's size and stride)";
  };
  std::int64_t view_d = static_cast<std::int64_t>(target.size()) - 1;
  std::int64_t chunk_base_stride = stride.back();
  std::int64_t tensor_numel = 1, view_numel = 1;
  for (std::int64_t d = static_cast<std::int64_t>(shape.size()) - 1; d >= 0; --d) {
    const auto ud = static_cast<std::size_t>(d);
    tensor_numel *= shape[ud];
    const bool chunk_ends = d == 0 || (shape[ud - 1] != 1 && stride[ud - 1] != tensor_numel * chunk_base_stride);
    if (!chunk_ends) continue;
    while (view_d >= 0 && (view_numel < tensor_numel || target[static_cast<std::size_t>(view_d)] == 1)) {
      view_numel *= target[static_cast<std::size_t>(view_d)];
      --view_d;
    }
    if (view_numel != tensor_numel) {
      why = describe();
      return false;
    }
    if (d > 0) {
      chunk_base_stride = stride[ud - 1];
      tensor_numel = 1;
      view_numel = 1;
    }
  }
  if (view_d != -1) {
    why = describe();
    return false;
  }
  return true;
}

ConvertedTrace convert_trace(const TraceFile& file, const std::string& model) {
  ConvertedTrace out;
  out.path = file.path;
  out.model = model;
  out.line_count = file.line_count;
  out.call_lines = file.call_lines;
  out.reported = file.problems;

  // The manifest's default dtype: the floating dtype most calls use.
  std::map<DType, int> float_use;
  for (const auto& e : file.entries)
    for (const auto& a : e.call.args)
      if (a.kind == Kind::Tensor && dtype_is_floating(a.tensor.dtype)) {
        ++float_use[a.tensor.dtype];
        break;
      }
  DType default_dtype = DType::Float32;
  int best = 0;
  for (const auto& [t, n] : float_use)
    if (n > best) best = n, default_dtype = t;

  std::string cases;
  std::map<std::string, int> per_op;
  for (const auto& e : file.entries) {
    const std::string op = schema_op_name(e.op);
    if (op.empty()) {
      out.reported.warning({file.path, e.line, 0}, "operator '" + e.op + "' has no namespace (expected aten.<name>)");
      continue;
    }
    if (const auto why = refused_op_reason(op)) {
      out.reported.error({file.path, e.line, 0}, e.op + " is refused: it " + *why, {},
                         "opcheck runs only ops that compute on their arguments (docs/design.md: Reliability)");
      continue;
    }
    const std::string name = e.op + "." + std::to_string(per_op[e.op] + 1);
    std::string text;
    DType case_dtype = default_dtype;
    CallConverter converter(e, file.path);
    if (auto refusal = converter.convert(text, name, default_dtype, case_dtype)) {
      out.reported.warning({file.path, e.line, refusal->col}, e.op + " not converted: " + refusal->message);
      continue;
    }
    ++per_op[e.op];
    ++out.converted;
    cases += text;
  }
  // Parse problems first, conversion refusals after: list them by line for the reader.
  std::stable_sort(out.reported.items.begin(), out.reported.items.end(),
                   [](const Diagnostic& a, const Diagnostic& b) { return a.loc.line < b.loc.line; });

  std::string y;
  y += "# Converted by `opcheck import-traces` from " + printable_text(file.path) + ": " +
       std::to_string(file.call_lines) +
       " call lines, " + std::to_string(out.converted) + " converted, " + std::to_string(out.reported.items.size()) +
       " lines reported.\n";
  y += "# Each case is one `cnt:` line; its description names the trace line. Integer index inputs draw values\n";
  y += "# valid for the op (the range and why are in the description); other inputs use opcheck's default init.\n";
  y += "model: " + manifest_text::quoted(model) + "\n";
  y += "description: " +
       manifest_text::quoted("Op trace " + base_file_name(file.path) + " (PyTorch operator-trace format)") + "\n";
  y += "defaults:\n";
  y += "  dtype: " + std::string(dtype_name(default_dtype)) + "\n";
  y += "  seed: 0\n";
  y += cases.empty() ? "cases: []\n" : "cases:\n" + cases;
  out.yaml = std::move(y);
  return out;
}

}  // namespace opcheck::traces
