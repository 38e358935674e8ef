#include "exec/binder.h"

#include <algorithm>
#include <regex>
#include <stdexcept>

#include "exec/inputs.h"
#include "common/spelling.h"

namespace opcheck::exec {
namespace {

using Kind = PyValue::Kind;

// Conversion costs, lowest first. Exact matches cost nothing; the costs order the implicit conversions PyTorch's
// Python parser allows, so that `torch.clamp(t, 0, 31)` picks Scalar? over Tensor? and `sum(t, 1)` int[1] over nothing.
constexpr int kExact = 0;
constexpr int kWidening = 1;      // int -> float, number -> Scalar, str -> Device/Dimname, int -> int[N]
constexpr int kLoose = 2;         // int -> unsized int[], 0-dim tensor -> number
constexpr int kWrappedNumber = 3; // Python number -> Tensor (a wrapped-number tensor)
constexpr int kReject = -1;

c10::TypePtr unwrap_optional(const c10::TypePtr& t, bool& optional) {
  optional = false;
  if (auto o = t->cast<c10::OptionalType>()) {
    optional = true;
    return o->getElementType();
  }
  return t;
}

bool is_int_kind(c10::TypeKind k) { return k == c10::TypeKind::IntType || k == c10::TypeKind::SymIntType; }
bool is_float_kind(c10::TypeKind k) { return k == c10::TypeKind::FloatType || k == c10::TypeKind::SymFloatType; }

bool all_items(const PyValue& v, bool (*pred)(const PyValue&)) {
  return std::all_of(v.items.begin(), v.items.end(), pred);
}
bool is_int_value(const PyValue& v) { return v.kind == Kind::Int; }
bool is_real_value(const PyValue& v) { return v.kind == Kind::Int || v.kind == Kind::Float; }
bool is_bool_value(const PyValue& v) { return v.kind == Kind::Bool; }
bool is_number_value(const PyValue& v) { return v.is_number(); }
bool is_str_value(const PyValue& v) { return v.kind == Kind::String; }
bool is_none_value(const PyValue& v) { return v.kind == Kind::None; }
bool is_sequence(const PyValue& v) { return v.kind == Kind::List || v.kind == Kind::Tuple; }

std::string strip_torch(std::string s) {
  if (s.rfind("torch.", 0) == 0) s.erase(0, 6);
  return s;
}

std::optional<at::MemoryFormat> memory_format_of(const PyValue& v) {
  if (v.kind != Kind::String) return std::nullopt;
  const std::string s = strip_torch(v.s);
  if (s == "contiguous_format") return at::MemoryFormat::Contiguous;
  if (s == "preserve_format") return at::MemoryFormat::Preserve;
  if (s == "channels_last") return at::MemoryFormat::ChannelsLast;
  if (s == "channels_last_3d") return at::MemoryFormat::ChannelsLast3d;
  return std::nullopt;
}

std::optional<at::Layout> layout_of(const PyValue& v) {
  if (v.kind != Kind::String) return std::nullopt;
  const std::string s = strip_torch(v.s);
  if (s == "strided") return at::kStrided;
  if (s == "sparse_coo") return at::kSparse;
  if (s == "sparse_csr") return at::kSparseCsr;
  return std::nullopt;
}

/// A device spelling in a str value: `cuda:0`, `cpu`, `torch.device('cpu')` (op traces write that).
std::optional<std::string> device_spelling(const PyValue& v) {
  if (v.kind == Kind::Device) return v.s;
  if (v.kind != Kind::String) return std::nullopt;
  static const std::regex re(R"(^(?:torch\.device\(['"])?((cpu|cuda|spyre|aiu|privateuseone|xpu|mps|hpu|loopback)(:\d+)?)(?:['"]\))?$)");
  std::smatch m;
  if (!std::regex_match(v.s, m, re)) return std::nullopt;
  return m[1].str();
}

/// 0-dim tensors may stand for numbers (PyTorch's parser accepts them for int/float/Scalar parameters).
bool is_zero_dim(const ArgRef& a, const std::vector<TensorSlot>& slots) {
  return a.kind == ArgRef::Kind::Tensor && slots.at(a.slots.at(0)).spec->shape.empty();
}

/// The cost of passing `a` for a parameter of `type` (a real type, possibly Optional), or kReject.
int arg_cost(const ArgRef& a, const c10::TypePtr& type, c10::optional<int32_t> n, const std::vector<TensorSlot>& slots) {
  bool optional = false;
  const c10::TypePtr t = unwrap_optional(type, optional);
  const c10::TypeKind k = t->kind();

  if (a.kind == ArgRef::Kind::Tensor) {
    if (k == c10::TypeKind::TensorType) return kExact;
    if ((k == c10::TypeKind::NumberType || is_int_kind(k) || is_float_kind(k)) && is_zero_dim(a, slots)) return kLoose;
    return kReject;
  }
  if (a.kind == ArgRef::Kind::TensorList) {
    auto list = t->cast<c10::ListType>();
    if (!list) return kReject;
    bool elem_optional = false;
    const auto elem = unwrap_optional(list->getElementType(), elem_optional);
    if (elem->kind() != c10::TypeKind::TensorType) return kReject;
    return elem_optional ? kWidening : kExact;
  }

  const PyValue& v = a.value;
  if (v.kind == Kind::None) return optional ? kExact : kReject;
  switch (k) {
    case c10::TypeKind::TensorType:
      return v.is_number() ? kWrappedNumber : kReject;
    case c10::TypeKind::IntType:
    case c10::TypeKind::SymIntType:
      return v.kind == Kind::Int ? kExact : kReject;  // Python's parser refuses bool for int
    case c10::TypeKind::FloatType:
    case c10::TypeKind::SymFloatType:
      return v.kind == Kind::Float ? kExact : v.kind == Kind::Int ? kWidening : kReject;
    case c10::TypeKind::NumberType:
      return v.is_number() ? kWidening : kReject;
    case c10::TypeKind::ComplexType:
      return is_real_value(v) ? kWidening : kReject;
    case c10::TypeKind::BoolType:
      return v.kind == Kind::Bool ? kExact : kReject;
    case c10::TypeKind::StringType:
      return v.kind == Kind::String ? kExact : kReject;
    case c10::TypeKind::ScalarTypeType:
      return v.kind == Kind::DType ? kExact : kReject;
    case c10::TypeKind::LayoutType:
      return layout_of(v) ? kExact : kReject;
    case c10::TypeKind::MemoryFormatType:
      return memory_format_of(v) ? kExact : kReject;
    case c10::TypeKind::DeviceObjType:
      return v.kind == Kind::Device ? kExact : device_spelling(v) ? kWidening : kReject;
    case c10::TypeKind::ListType: {
      bool elem_optional = false;
      const auto elem = unwrap_optional(t->castRaw<c10::ListType>()->getElementType(), elem_optional);
      const auto ek = elem->kind();
      if (v.kind == Kind::Int && is_int_kind(ek)) return n ? kWidening : kLoose;  // `sum(t, 1)`: int[1] from one int
      if (v.kind == Kind::Float && is_float_kind(ek) && n) return kWidening;
      if (!is_sequence(v)) return kReject;
      if (is_int_kind(ek)) return all_items(v, is_int_value) ? kExact : kReject;
      if (is_float_kind(ek)) return all_items(v, is_real_value) ? kExact : kReject;
      if (ek == c10::TypeKind::BoolType) return all_items(v, is_bool_value) ? kExact : kReject;
      if (ek == c10::TypeKind::NumberType) return all_items(v, is_number_value) ? kExact : kReject;
      if (ek == c10::TypeKind::StringType) return all_items(v, is_str_value) ? kExact : kReject;
      if (ek == c10::TypeKind::TensorType && elem_optional) return all_items(v, is_none_value) ? kWidening : kReject;
      return kReject;
    }
    default:
      return kReject;
  }
}

bool is_int_list_type(const c10::TypePtr& type) {
  bool optional = false;
  auto t = unwrap_optional(type, optional);
  auto list = t->cast<c10::ListType>();
  return list && is_int_kind(list->getElementType()->kind());
}

bool is_tensor_list_type(const c10::TypePtr& type) {
  bool optional = false;
  auto t = unwrap_optional(type, optional);
  auto list = t->cast<c10::ListType>();
  return list && list->getElementType()->kind() == c10::TypeKind::TensorType;
}

int find_argument(const c10::FunctionSchema& schema, const std::string& name) {
  const auto& args = schema.arguments();
  auto find = [&](const std::string& n) -> int {
    for (std::size_t i = 0; i < args.size(); ++i)
      if (args[i].name() == n) return static_cast<int>(i);
    return -1;
  };
  int i = find(name);
  // Python spells the first tensor `input` (torch.X) or `tensor` (torch.split) where schemas say `self`.
  if (i < 0 && (name == "input" || name == "tensor")) i = find("self");
  if (i < 0 && name == "self") i = find("input");
  return i;
}

std::string type_text(const c10::Argument& a) { return a.real_type()->str(); }

/// Packs trailing positional arguments the way Python's varargs signatures do (`t.view(2, 3)`, `torch.zeros(2, 3)`,
/// `torch.meshgrid(a, b)`). Returns false when nothing packs.
bool pack_varargs(const c10::FunctionSchema& schema, std::size_t n_pos, std::vector<ArgRef>& positional) {
  const auto& args = schema.arguments();
  for (std::size_t k = 0; k < n_pos && k < positional.size(); ++k) {
    bool later_required = false;
    for (std::size_t j = k + 1; j < n_pos; ++j) later_required |= !args[j].default_value().has_value();
    if (later_required) continue;
    if (is_int_list_type(args[k].real_type())) {
      bool all_ints = true;
      for (std::size_t j = k; j < positional.size(); ++j)
        all_ints &= positional[j].kind == ArgRef::Kind::Value && positional[j].value.kind == Kind::Int;
      if (!all_ints) continue;
      std::vector<PyValue> items;
      for (std::size_t j = k; j < positional.size(); ++j) items.push_back(positional[j].value);
      positional.resize(k);
      positional.push_back(ArgRef::of_value(PyValue::sequence(Kind::List, std::move(items))));
      return true;
    }
    if (is_tensor_list_type(args[k].real_type())) {
      bool all_tensors = true;
      for (std::size_t j = k; j < positional.size(); ++j) all_tensors &= positional[j].kind == ArgRef::Kind::Tensor;
      if (!all_tensors) continue;
      std::vector<std::size_t> packed;
      for (std::size_t j = k; j < positional.size(); ++j) packed.push_back(positional[j].slots.at(0));
      positional.resize(k);
      positional.push_back(ArgRef::of_list(std::move(packed)));
      return true;
    }
  }
  return false;
}

at::Tensor tensor_at(const std::vector<at::Tensor>& tensors, std::size_t slot) {
  if (slot >= tensors.size() || !tensors[slot].defined())
    throw std::runtime_error("internal: tensor slot " + std::to_string(slot) + " is not materialized");
  return tensors[slot];
}

at::ScalarType run_dtype(DType d, const RunContext& ctx) {
  const at::ScalarType st = to_scalar_type(d);
  if (ctx.compute_dtype && at::isFloatingType(st) &&
      c10::elementSize(st) < c10::elementSize(*ctx.compute_dtype))
    return *ctx.compute_dtype;
  if (ctx.compute_dtype && at::isFloatingType(st) && st != *ctx.compute_dtype &&
      c10::elementSize(st) == c10::elementSize(*ctx.compute_dtype))
    return *ctx.compute_dtype;  // bf16 <-> fp16 of the same width: both run in the compute type
  return st;
}

std::vector<std::int64_t> int_list(const PyValue& v, c10::optional<int32_t> n) {
  if (v.kind == Kind::Int) return std::vector<std::int64_t>(n ? static_cast<std::size_t>(*n) : 1, v.i);
  std::vector<std::int64_t> out;
  for (const auto& it : v.items) out.push_back(it.i);
  return out;
}

/// Flattens a nested list of numbers/bools into `flat`, recording the shape; false when ragged.
bool flatten_nested(const PyValue& v, std::size_t depth, std::vector<std::int64_t>& shape, std::vector<PyValue>& flat) {
  if (!is_sequence(v)) {
    if (depth != shape.size()) return false;
    flat.push_back(v);
    return true;
  }
  if (depth == shape.size()) shape.push_back(static_cast<std::int64_t>(v.items.size()));
  else if (depth > shape.size() || shape[depth] != static_cast<std::int64_t>(v.items.size())) return false;
  for (const auto& it : v.items)
    if (!flatten_nested(it, depth + 1, shape, flat)) return false;
  return true;
}

}  // namespace

at::Tensor tensor_of_literal(const PyValue& v, std::optional<at::ScalarType> dtype) {
  std::vector<std::int64_t> shape;
  std::vector<PyValue> flat;
  if (!flatten_nested(v, 0, shape, flat)) throw std::invalid_argument("ragged nested sequence " + v.repr());
  // Python infers bool < int64 < default float (float32) from the elements.
  bool any_float = false, all_bool = !flat.empty();
  for (const auto& x : flat) {
    if (!x.is_number()) throw std::invalid_argument("tensor data must be numbers or bools, got " + x.repr());
    any_float |= x.kind == Kind::Float;
    all_bool &= x.kind == Kind::Bool;
  }
  const at::ScalarType inferred = any_float ? at::kFloat : all_bool ? at::kBool : at::kLong;
  std::vector<double> values;
  for (const auto& x : flat) values.push_back(x.as_double());
  at::Tensor t = at::tensor(values, at::kDouble).reshape(shape);
  return t.to(dtype.value_or(inferred));
}

namespace {
at::Tensor index_tensor_of_value(const PyValue& v, const at::Device& device) {
  at::Tensor t = tensor_of_literal(v, std::nullopt);
  if (t.scalar_type() != at::kBool && t.scalar_type() != at::kLong)
    throw std::invalid_argument("a list used as an index must hold ints or bools, got " + v.repr());
  return t.to(device);
}
}  // namespace

std::string ArgRef::describe() const {
  if (kind == Kind::Tensor) return "Tensor";
  if (kind == Kind::TensorList) return "list[Tensor]";
  switch (value.kind) {
    case PyValue::Kind::None: return "None";
    case PyValue::Kind::Bool: return "bool";
    case PyValue::Kind::Int: return "int";
    case PyValue::Kind::Float: return "float";
    case PyValue::Kind::String: return "str";
    case PyValue::Kind::Ellipsis: return "ellipsis";
    case PyValue::Kind::Slice: return "slice";
    case PyValue::Kind::DType: return "dtype";
    case PyValue::Kind::Device: return "device";
    case PyValue::Kind::Tuple:
    case PyValue::Kind::List: {
      std::string out = value.kind == PyValue::Kind::Tuple ? "tuple" : "list";
      if (!value.items.empty()) out += "[" + ArgRef::of_value(value.items[0]).describe() + ", ...]";
      return out;
    }
  }
  return "?";
}

std::string CallArgs::describe() const {
  std::string out = "(";
  bool first = true;
  for (const auto& a : positional) {
    out += (first ? "" : ", ") + a.describe();
    first = false;
  }
  for (const auto& [name, a] : keywords) {
    out += (first ? "" : ", ") + name + "=" + a.describe();
    first = false;
  }
  return out + ")";
}

CaseCall case_call(const Case& c) {
  CaseCall out;
  for (std::size_t i = 0; i < c.inputs.size(); ++i) {
    const Input& in = c.inputs[i];
    // A keyword input (`keyword: sorter`) is passed by that name, after the positional arguments.
    auto pass = [&](ArgRef a) {
      if (in.keyword.empty()) out.args.positional.push_back(std::move(a));
      else out.args.keywords.emplace_back(in.keyword, std::move(a));
    };
    switch (in.kind) {
      case Input::Kind::Tensor:
        out.slots.push_back({i, 0, &in.tensor});
        pass(ArgRef::of_tensor(out.slots.size() - 1));
        break;
      case Input::Kind::TensorList: {
        std::vector<std::size_t> ids;
        for (std::size_t j = 0; j < in.list.size(); ++j) {
          out.slots.push_back({i, j, &in.list[j]});
          ids.push_back(out.slots.size() - 1);
        }
        pass(ArgRef::of_list(std::move(ids)));
        break;
      }
      case Input::Kind::Value:
        out.args.positional.push_back(ArgRef::of_value(in.value));
        break;
    }
  }
  for (const auto& [name, value] : c.kwargs) out.args.keywords.emplace_back(name, ArgRef::of_value(value));
  return out;
}

/// torch.nn.functional's losses take `reduction` as a string and hand ATen its enum (torch.nn._reduction.get_enum:
/// 'none' 0, 'mean' 1, 'sum' 2): such a string given for an int `reduction` binds as that enum.
static std::optional<ArgRef> reduction_enum(const c10::Argument& arg, const ArgRef& a) {
  if (arg.name() != "reduction" || a.kind != ArgRef::Kind::Value || a.value.kind != Kind::String) return std::nullopt;
  bool optional = false;
  if (!is_int_kind(unwrap_optional(arg.real_type(), optional)->kind())) return std::nullopt;
  static const std::pair<const char*, std::int64_t> kEnum[] = {{"none", 0}, {"mean", 1}, {"sum", 2}};
  for (const auto& [name, value] : kEnum) {
    if (a.value.s != name) continue;
    ArgRef r = a;
    r.value = PyValue::integer(value);
    return r;
  }
  return std::nullopt;
}

std::optional<Binding> bind_to_schema(const c10::FunctionSchema& schema, const CallArgs& call,
                                      const std::vector<TensorSlot>& slots, std::string& why) {
  const auto& args = schema.arguments();
  std::size_t n_pos = 0;
  while (n_pos < args.size() && !args[n_pos].kwarg_only()) ++n_pos;

  std::vector<ArgRef> positional = call.positional;
  if (positional.size() > n_pos && !pack_varargs(schema, n_pos, positional)) {
    why = "takes " + std::to_string(n_pos) + " positional argument" + (n_pos == 1 ? "" : "s") + " but " +
          std::to_string(call.positional.size()) + " were given";
    return std::nullopt;
  }
  if (positional.size() > n_pos) {
    why = "too many positional arguments";
    return std::nullopt;
  }

  Binding b;
  b.args.resize(args.size());
  std::vector<bool> given(args.size(), false);
  auto place = [&](std::size_t i, const ArgRef& given_arg) -> bool {
    const auto& arg = args[i];
    const std::optional<ArgRef> as_enum = reduction_enum(arg, given_arg);
    const ArgRef& a = as_enum ? *as_enum : given_arg;
    bool optional = false;
    unwrap_optional(arg.real_type(), optional);
    if (call.none_means_default && a.kind == ArgRef::Kind::Value && a.value.kind == Kind::None && !optional &&
        arg.default_value()) {
      given[i] = true;  // the schema default applies
      return true;
    }
    const int cost = arg_cost(a, arg.real_type(), arg.N(), slots);
    if (cost == kReject) {
      why = "argument '" + arg.name() + "' must be " + type_text(arg) + ", not " + a.describe();
      return false;
    }
    b.cost += cost;
    b.args[i] = a;
    given[i] = true;
    return true;
  };

  for (std::size_t i = 0; i < positional.size(); ++i)
    if (!place(i, positional[i])) return std::nullopt;
  for (const auto& [name, a] : call.keywords) {
    const int i = find_argument(schema, name);
    if (i < 0) {
      why = "got an unexpected keyword argument '" + name + "'";
      std::vector<std::string> names;
      for (const auto& arg : args) names.push_back(arg.name());
      if (const std::string near = closest_spelling(name, names); !near.empty()) why += " (did you mean " + near + "?)";
      return std::nullopt;
    }
    if (given[static_cast<std::size_t>(i)]) {
      why = "got multiple values for argument '" + args[static_cast<std::size_t>(i)].name() + "'";
      return std::nullopt;
    }
    if (!place(static_cast<std::size_t>(i), a)) return std::nullopt;
  }
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (!given[i] && !args[i].default_value()) {
      why = "missing required argument '" + args[i].name() + "' (" + type_text(args[i]) + ")";
      return std::nullopt;
    }
  }
  return b;
}

at::Tensor wrapped_number(const PyValue& v) {
  at::Tensor t;
  switch (v.kind) {
    case Kind::Bool: t = at::scalar_tensor(at::Scalar(v.b), at::TensorOptions().dtype(at::kBool)); break;
    case Kind::Int: t = at::scalar_tensor(at::Scalar(v.i), at::TensorOptions().dtype(at::kLong)); break;
    case Kind::Float: t = at::scalar_tensor(at::Scalar(v.f), at::TensorOptions().dtype(at::kDouble)); break;
    default: throw std::runtime_error("a " + ArgRef::of_value(v).describe() + " cannot stand for a tensor");
  }
  t.unsafeGetTensorImpl()->set_wrapped_number(true);
  return t;
}

std::optional<at::Device> device_of(const PyValue& v, const RunContext& ctx) {
  auto spelling = device_spelling(v);
  if (!spelling) return std::nullopt;
  if (*spelling == "cpu" || spelling->rfind("cpu:", 0) == 0) return at::Device(at::kCPU);
  return ctx.device;
}

c10::IValue to_ivalue(const ArgRef& a, const c10::TypePtr& type, c10::optional<int32_t> n,
                      const std::vector<at::Tensor>& tensors, const RunContext& ctx) {
  bool optional = false;
  const c10::TypePtr t = unwrap_optional(type, optional);
  const c10::TypeKind k = t->kind();

  if (a.kind == ArgRef::Kind::Tensor) {
    at::Tensor x = tensor_at(tensors, a.slots.at(0));
    if (k == c10::TypeKind::TensorType) return x;
    const at::Scalar s = x.item();
    if (is_int_kind(k)) return s.toLong();
    if (is_float_kind(k)) return s.toDouble();
    return s;
  }
  if (a.kind == ArgRef::Kind::TensorList) {
    bool elem_optional = false;
    unwrap_optional(t->castRaw<c10::ListType>()->getElementType(), elem_optional);
    if (elem_optional) {
      c10::List<c10::optional<at::Tensor>> list;
      for (auto s : a.slots) list.push_back(tensor_at(tensors, s));
      return list;
    }
    std::vector<at::Tensor> list;
    for (auto s : a.slots) list.push_back(tensor_at(tensors, s));
    return list;
  }

  const PyValue& v = a.value;
  if (v.kind == Kind::None) return c10::IValue();
  switch (k) {
    case c10::TypeKind::TensorType: return wrapped_number(v);
    case c10::TypeKind::IntType:
    case c10::TypeKind::SymIntType: return v.i;
    case c10::TypeKind::FloatType:
    case c10::TypeKind::SymFloatType: return v.as_double();
    case c10::TypeKind::NumberType:
      if (v.kind == Kind::Bool) return at::Scalar(v.b);
      if (v.kind == Kind::Int) return at::Scalar(v.i);
      return at::Scalar(v.f);
    case c10::TypeKind::ComplexType: return c10::complex<double>(v.as_double(), 0.0);
    case c10::TypeKind::BoolType: return v.b;
    case c10::TypeKind::StringType: return v.s;
    case c10::TypeKind::ScalarTypeType: return run_dtype(v.dtype, ctx);
    case c10::TypeKind::LayoutType: return *layout_of(v);
    case c10::TypeKind::MemoryFormatType: return *memory_format_of(v);
    case c10::TypeKind::DeviceObjType: {
      auto d = device_of(v, ctx);
      if (!d) throw std::runtime_error("not a device: " + v.repr());
      return *d;
    }
    case c10::TypeKind::ListType: {
      bool elem_optional = false;
      const auto ek = unwrap_optional(t->castRaw<c10::ListType>()->getElementType(), elem_optional)->kind();
      if (is_int_kind(ek)) return int_list(v, n);
      if (is_float_kind(ek)) {
        if (v.kind == Kind::Float) return std::vector<double>(n ? static_cast<std::size_t>(*n) : 1, v.f);
        std::vector<double> out;
        for (const auto& it : v.items) out.push_back(it.as_double());
        return out;
      }
      if (ek == c10::TypeKind::BoolType) {
        c10::List<bool> out;
        for (const auto& it : v.items) out.push_back(it.b);
        return out;
      }
      if (ek == c10::TypeKind::NumberType) {
        c10::List<at::Scalar> out;
        for (const auto& it : v.items)
          out.push_back(it.kind == Kind::Float ? at::Scalar(it.f) : it.kind == Kind::Int ? at::Scalar(it.i) : at::Scalar(it.b));
        return out;
      }
      if (ek == c10::TypeKind::StringType) {
        std::vector<std::string> out;
        for (const auto& it : v.items) out.push_back(it.s);
        return out;
      }
      if (ek == c10::TypeKind::TensorType && elem_optional) {
        c10::List<c10::optional<at::Tensor>> out;
        for (std::size_t i = 0; i < v.items.size(); ++i) out.push_back(c10::nullopt);
        return out;
      }
      break;
    }
    default: break;
  }
  throw std::runtime_error("cannot pass " + a.describe() + " for a parameter of type " + type->str());
}

c10::Stack make_stack(const c10::FunctionSchema& schema, const Binding& binding, const std::vector<at::Tensor>& tensors,
                      const RunContext& ctx) {
  const auto& args = schema.arguments();
  c10::Stack stack;
  stack.reserve(args.size());
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (binding.args[i]) {
      stack.push_back(to_ivalue(*binding.args[i], args[i].real_type(), args[i].N(), tensors, ctx));
    } else {
      c10::IValue d = *args[i].default_value();
      // A dtype default (rare) follows the upcast like a given dtype would.
      if (ctx.compute_dtype && d.isInt() && args[i].real_type()->kind() == c10::TypeKind::ScalarTypeType) {
        const auto st = static_cast<at::ScalarType>(d.toInt());
        if (at::isFloatingType(st) && c10::elementSize(st) <= c10::elementSize(*ctx.compute_dtype)) d = *ctx.compute_dtype;
      }
      stack.push_back(std::move(d));
    }
    // A half-to-float conversion (_softmax, _log_softmax) asks for float16 input: in a wider run the input is no
    // longer float16, and the output's float32 is reached by the cast back (the meta run says float32).
    if (ctx.compute_dtype && args[i].name() == "half_to_float" && stack.back().isBool()) stack.back() = false;
  }
  return stack;
}

std::vector<at::indexing::TensorIndex> subscript_of(const ArgRef& index, const std::vector<at::Tensor>& tensors,
                                                    const at::Device& device) {
  using at::indexing::TensorIndex;
  std::vector<TensorIndex> out;
  if (index.kind == ArgRef::Kind::Tensor) {
    out.emplace_back(tensor_at(tensors, index.slots.at(0)));
    return out;
  }
  if (index.kind == ArgRef::Kind::TensorList) {
    for (auto s : index.slots) out.emplace_back(tensor_at(tensors, s));
    return out;
  }
  auto one = [&](const PyValue& v) -> TensorIndex {
    switch (v.kind) {
      case Kind::None: return TensorIndex(at::indexing::None);
      case Kind::Ellipsis: return TensorIndex(at::indexing::Ellipsis);
      case Kind::Bool: return TensorIndex(v.b);
      case Kind::Int: return TensorIndex(v.i);
      case Kind::Slice: {
        auto bound = [&](const PyValue& b) -> c10::optional<std::int64_t> {
          if (b.kind == Kind::None) return c10::nullopt;
          if (b.kind != Kind::Int) throw std::invalid_argument("slice bounds must be ints or None, got " + v.repr());
          return b.i;
        };
        return TensorIndex(at::indexing::Slice(bound(v.items.at(0)), bound(v.items.at(1)), bound(v.items.at(2))));
      }
      case Kind::List:
      case Kind::Tuple: return TensorIndex(index_tensor_of_value(v, device));
      default: throw std::invalid_argument("cannot index a tensor with " + v.repr());
    }
  };
  const PyValue& v = index.value;
  if (v.kind == Kind::Tuple) {
    for (const auto& it : v.items) out.push_back(one(it));
  } else {
    out.push_back(one(v));
  }
  return out;
}

std::optional<PyValue> pyvalue_of(const c10::IValue& v, const c10::TypePtr& type) {
  bool optional = false;
  const auto t = unwrap_optional(type, optional);
  if (v.isNone()) return PyValue::none();
  if (v.isBool()) return PyValue::boolean(v.toBool());
  if (v.isInt()) {
    if (t->kind() == c10::TypeKind::ScalarTypeType) {
      const auto st = static_cast<at::ScalarType>(v.toInt());
      for (int d = 0; d <= static_cast<int>(DType::Complex128); ++d)
        if (to_scalar_type(static_cast<DType>(d)) == st) return PyValue::of_dtype(static_cast<DType>(d));
      return std::nullopt;
    }
    return PyValue::integer(v.toInt());
  }
  if (v.isDouble()) return PyValue::real(v.toDouble());
  if (v.isString()) return PyValue::string(v.toStringRef());
  if (v.isIntList()) {
    std::vector<PyValue> items;
    for (auto x : v.toIntVector()) items.push_back(PyValue::integer(x));
    return PyValue::sequence(Kind::List, std::move(items));
  }
  if (v.isDoubleList()) {
    std::vector<PyValue> items;
    for (auto x : v.toDoubleVector()) items.push_back(PyValue::real(x));
    return PyValue::sequence(Kind::List, std::move(items));
  }
  return std::nullopt;
}

}  // namespace opcheck::exec
