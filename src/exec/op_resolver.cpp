#include "exec/op_resolver.h"

#include <algorithm>
#include <cctype>
#include <climits>
#include <mutex>
#include <set>
#include <sstream>

#include <torch/csrc/jit/frontend/function_schema_parser.h>

#include "common/edit_distance.h"
#include "common/op_names.h"
#include "exec/decompositions.h"
#include "exec/inputs.h"

namespace opcheck::exec {
namespace {

using Kind = PyValue::Kind;

// ---------------------------------------------------------------------------------------------------------------
// The Python-name table. Only names whose Python signature differs from the aten schema are here; every other
// torch.X / torch.Tensor.X / torch.nn.functional.X is aten::X with `input` bound as `self`.
// ---------------------------------------------------------------------------------------------------------------
const std::vector<PythonOpRow>& table_rows() {
  static const std::vector<PythonOpRow> rows = {
      // Conversions: Tensor.float() and friends are to(dtype).
      {"torch.float", "float(Tensor self, *, MemoryFormat? memory_format=None)", "aten::to.dtype", "", "", "", "dtype=torch.float32", false, Builtin::None},
      {"torch.double", "double(Tensor self, *, MemoryFormat? memory_format=None)", "aten::to.dtype", "", "", "", "dtype=torch.float64", false, Builtin::None},
      {"torch.half", "half(Tensor self, *, MemoryFormat? memory_format=None)", "aten::to.dtype", "", "", "", "dtype=torch.float16", false, Builtin::None},
      {"torch.bfloat16", "bfloat16(Tensor self, *, MemoryFormat? memory_format=None)", "aten::to.dtype", "", "", "", "dtype=torch.bfloat16", false, Builtin::None},
      {"torch.long", "long(Tensor self, *, MemoryFormat? memory_format=None)", "aten::to.dtype", "", "", "", "dtype=torch.int64", false, Builtin::None},
      {"torch.int", "int(Tensor self, *, MemoryFormat? memory_format=None)", "aten::to.dtype", "", "", "", "dtype=torch.int32", false, Builtin::None},
      {"torch.short", "short(Tensor self, *, MemoryFormat? memory_format=None)", "aten::to.dtype", "", "", "", "dtype=torch.int16", false, Builtin::None},
      {"torch.char", "char(Tensor self, *, MemoryFormat? memory_format=None)", "aten::to.dtype", "", "", "", "dtype=torch.int8", false, Builtin::None},
      {"torch.byte", "byte(Tensor self, *, MemoryFormat? memory_format=None)", "aten::to.dtype", "", "", "", "dtype=torch.uint8", false, Builtin::None},
      {"torch.bool", "bool(Tensor self, *, MemoryFormat? memory_format=None)", "aten::to.dtype", "", "", "", "dtype=torch.bool", false, Builtin::None},
      {"torch.cfloat", "cfloat(Tensor self, *, MemoryFormat? memory_format=None)", "aten::to.dtype", "", "", "", "dtype=torch.complex64", false, Builtin::None},
      {"torch.cdouble", "cdouble(Tensor self, *, MemoryFormat? memory_format=None)", "aten::to.dtype", "", "", "", "dtype=torch.complex128", false, Builtin::None},
      // Tensor.to's three Python signatures.
      {"torch.to", "to(Tensor self, Device? device=None, ScalarType? dtype=None, bool non_blocking=False, bool copy=False, *, MemoryFormat? memory_format=None)", "aten::to.dtype_layout", "", "", "", "", false, Builtin::None},
      {"torch.to", "to(Tensor self, ScalarType dtype, bool non_blocking=False, bool copy=False, *, MemoryFormat? memory_format=None)", "aten::to.dtype", "", "", "", "", false, Builtin::None},
      {"torch.to", "to(Tensor self, Tensor other, bool non_blocking=False, bool copy=False, *, MemoryFormat? memory_format=None)", "aten::to.other", "", "", "", "", false, Builtin::None},
      // torch.nn.functional names whose signature differs from the schema.
      {"torch.nn.functional.embedding", "embedding(Tensor input, Tensor weight, int? padding_idx=None, float? max_norm=None, float norm_type=2.0, bool scale_grad_by_freq=False, bool sparse=False)", "aten::embedding", "input:indices", "norm_type", "max_norm", "", false, Builtin::None},
      // F.batch_norm puts the running statistics before weight and bias; aten::batch_norm has them after.
      {"torch.nn.functional.batch_norm", "batch_norm(Tensor input, Tensor? running_mean, Tensor? running_var, Tensor? weight=None, Tensor? bias=None, bool training=False, float momentum=0.1, float eps=1e-05)", "aten::batch_norm", "", "", "", "cudnn_enabled=True", false, Builtin::None},
      {"torch.nn.functional.softmax", "softmax(Tensor input, int? dim=None, int _stacklevel=3, ScalarType? dtype=None)", "aten::softmax.int", "input:self", "_stacklevel", "", "", false, Builtin::None},
      {"torch.nn.functional.log_softmax", "log_softmax(Tensor input, int? dim=None, int _stacklevel=3, ScalarType? dtype=None)", "aten::log_softmax.int", "input:self", "_stacklevel", "", "", false, Builtin::None},
      {"torch.nn.functional.softmin", "softmin(Tensor input, int? dim=None, int _stacklevel=3, ScalarType? dtype=None)", "aten::softmax.int", "input:self", "_stacklevel", "", "", false, Builtin::None},
      // Dropout runs with training off: results must be deterministic to be compared.
      {"torch.nn.functional.dropout", "dropout(Tensor input, float p=0.5, bool training=True, bool inplace=False)", "aten::dropout", "", "training,inplace", "", "train=False", false, Builtin::None},
      {"torch.nn.functional.dropout1d", "dropout1d(Tensor input, float p=0.5, bool training=True, bool inplace=False)", "aten::feature_dropout", "", "training,inplace", "", "train=False", false, Builtin::None},
      {"torch.nn.functional.dropout2d", "dropout2d(Tensor input, float p=0.5, bool training=True, bool inplace=False)", "aten::feature_dropout", "", "training,inplace", "", "train=False", false, Builtin::None},
      {"torch.nn.functional.dropout3d", "dropout3d(Tensor input, float p=0.5, bool training=True, bool inplace=False)", "aten::feature_dropout", "", "training,inplace", "", "train=False", false, Builtin::None},
      {"torch.nn.functional.alpha_dropout", "alpha_dropout(Tensor input, float p=0.5, bool training=False, bool inplace=False)", "aten::alpha_dropout", "", "training,inplace", "", "train=False", false, Builtin::None},
      // torch.split(tensor, split_size_or_sections, dim): one Python name for split.Tensor and split.sizes.
      {"torch.split", "", "aten::split", "split_size_or_sections:split_size", "", "", "", false, Builtin::None},
      // Reflected operators (x.__radd__(y) is y + x); the other operator and dunder spellings are aliases
      // (common/op_names.cpp) of the torch function they call.
      {"torch.__radd__", "", "aten::add", "", "", "", "", true, Builtin::None},
      {"torch.__rmul__", "", "aten::mul", "", "", "", "", true, Builtin::None},
      {"torch.__rtruediv__", "", "aten::div", "", "", "", "", true, Builtin::None},
      {"torch.__rfloordiv__", "", "aten::floor_divide", "", "", "", "", true, Builtin::None},
      {"torch.__rmod__", "", "aten::remainder", "", "", "", "", true, Builtin::None},
      {"torch.__rpow__", "", "aten::pow", "", "", "", "", true, Builtin::None},
      {"torch.__rmatmul__", "", "aten::matmul", "", "", "", "", true, Builtin::None},
      // Builtins that are not dispatcher ops.
      {"torch.getitem", "", "", "", "", "", "", false, Builtin::GetItem},
      {"torch.setitem", "", "", "", "", "", "", false, Builtin::SetItem},
      {"torch.sym_sum", "", "", "", "", "", "", false, Builtin::SymSum},
      {"torch.tensor", "", "", "", "", "", "", false, Builtin::TensorLiteral},
      {"torch.as_tensor", "", "", "", "", "", "", false, Builtin::TensorLiteral},
      {"torch._C._log_api_usage_once", "", "", "", "", "", "", false, Builtin::NotATensorOp},
  };
  return rows;
}

// Python binds a number passed to add/sub/mul/div as a wrapped-number tensor: their .Scalar overloads have no
// Python binding (PyTorch's codegen skips them), so a Python-name call never picks them.
const std::set<std::string>& python_hidden_overloads() {
  static const std::set<std::string> hidden = {"aten::add.Scalar", "aten::sub.Scalar", "aten::mul.Scalar",
                                               "aten::div.Scalar", "aten::add_.Scalar", "aten::sub_.Scalar",
                                               "aten::mul_.Scalar", "aten::div_.Scalar"};
  return hidden;
}

std::vector<std::string> split_list(const char* text) {
  std::vector<std::string> out;
  std::string item;
  std::istringstream in(text ? text : "");
  while (std::getline(in, item, ',')) {
    item.erase(0, item.find_first_not_of(' '));
    item.erase(item.find_last_not_of(' ') + 1);
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

/// The small literal language of table cells: True/False/None, ints, floats, torch.<dtype>, else a string.
PyValue parse_cell_literal(const std::string& s) {
  if (s == "True") return PyValue::boolean(true);
  if (s == "False") return PyValue::boolean(false);
  if (s == "None") return PyValue::none();
  if (auto d = parse_dtype(s); d && s.rfind("torch.", 0) == 0) return PyValue::of_dtype(*d);
  char* end = nullptr;
  const long long i = std::strtoll(s.c_str(), &end, 10);
  if (end && *end == '\0' && !s.empty()) return PyValue::integer(i);
  const double f = std::strtod(s.c_str(), &end);
  if (end && *end == '\0' && !s.empty()) return PyValue::real(f);
  return PyValue::string(s);
}

std::vector<std::pair<std::string, PyValue>> parse_assignments(const char* text) {
  std::vector<std::pair<std::string, PyValue>> out;
  for (const auto& item : split_list(text)) {
    const auto eq = item.find('=');
    out.emplace_back(item.substr(0, eq), parse_cell_literal(item.substr(eq + 1)));
  }
  return out;
}

const c10::FunctionSchema& row_signature(const PythonOpRow& row) {
  static std::mutex mu;
  static std::map<const PythonOpRow*, c10::FunctionSchema> parsed;
  std::lock_guard<std::mutex> lock(mu);
  auto it = parsed.find(&row);
  if (it == parsed.end()) {
    std::string text = row.signature;
    if (text.find("->") == std::string::npos) text += " -> Tensor";
    it = parsed.emplace(&row, torch::jit::parseSchema(text)).first;
  }
  return it->second;
}

std::string overload_name(const c10::OperatorHandle& op) {
  const auto& n = op.operator_name();
  return n.overload_name.empty() ? n.name : n.name + "." + n.overload_name;
}

void set_keyword(CallArgs& call, const std::string& name, ArgRef value) {
  for (auto& kw : call.keywords)
    if (kw.first == name) {
      kw.second = std::move(value);
      return;
    }
  call.keywords.emplace_back(name, std::move(value));
}

bool remove_keyword(CallArgs& call, const std::string& name, ArgRef* removed = nullptr) {
  for (auto it = call.keywords.begin(); it != call.keywords.end(); ++it)
    if (it->first == name) {
      if (removed) *removed = it->second;
      call.keywords.erase(it);
      return true;
    }
  return false;
}

std::vector<std::size_t> written_slots_of(const c10::FunctionSchema& schema, const Binding& b) {
  std::vector<std::size_t> out;
  const auto& args = schema.arguments();
  for (std::size_t i = 0; i < args.size(); ++i) {
    const auto* alias = args[i].alias_info();
    if (!alias || !alias->isWrite() || !b.args[i]) continue;
    for (auto s : b.args[i]->slots) out.push_back(s);
  }
  return out;
}

c10::IValue outputs_of(c10::Stack& stack, std::size_t n_returns) {
  if (n_returns == 0) return c10::IValue();
  if (n_returns == 1) return std::move(stack.at(0));
  std::vector<c10::IValue> items(stack.begin(), stack.begin() + static_cast<std::ptrdiff_t>(n_returns));
  return c10::ivalue::Tuple::create(std::move(items));
}

// ---------------------------------------------------------------------------------------------------------------
// Invocations
// ---------------------------------------------------------------------------------------------------------------

/// A dispatcher op called through its boxed interface.
class DispatcherCall final : public Invocation {
 public:
  DispatcherCall(c10::OperatorHandle op, Binding binding) : op_(std::move(op)), binding_(std::move(binding)) {
    resolved_op = overload_name(op_);
    written_slots = written_slots_of(op_.schema(), binding_);
  }
  c10::IValue run(const std::vector<at::Tensor>& tensors, const RunContext& ctx) const override {
    c10::Stack stack = make_stack(op_.schema(), binding_, tensors, ctx);
    op_.callBoxed(&stack);
    return outputs_of(stack, op_.schema().returns().size());
  }

 private:
  c10::OperatorHandle op_;
  Binding binding_;
};

/// A reference decomposition bound to the native op's schema.
class DecomposedCall final : public Invocation {
 public:
  DecomposedCall(const Decomposition& d, Binding binding) : d_(d), binding_(std::move(binding)) {
    resolved_op = d.uses;
    decomposed = true;
  }
  c10::IValue run(const std::vector<at::Tensor>& tensors, const RunContext& ctx) const override {
    c10::Stack stack = make_stack(decomposition_schema(d_), binding_, tensors, ctx);
    return d_.run(stack);
  }

 private:
  const Decomposition& d_;
  Binding binding_;
};

/// `tensor[index]` through at::indexing, or `list[index]` on a tensor_list.
class GetItemCall final : public Invocation {
 public:
  GetItemCall(ArgRef target, ArgRef index) : target_(std::move(target)), index_(std::move(index)) {
    resolved_op = target_.kind == ArgRef::Kind::TensorList ? "list.__getitem__" : "at::indexing (Tensor.__getitem__)";
  }
  c10::IValue run(const std::vector<at::Tensor>& tensors, const RunContext& ctx) const override {
    if (target_.kind == ArgRef::Kind::TensorList) return list_item(tensors);
    const at::Tensor& self = tensors.at(target_.slots.at(0));
    return self.index(subscript_of(index_, tensors, self.device()));
  }

 private:
  c10::IValue list_item(const std::vector<at::Tensor>& tensors) const {
    const auto n = static_cast<std::int64_t>(target_.slots.size());
    const PyValue& v = index_.value;
    if (v.kind == Kind::Int) {
      const std::int64_t i = v.i < 0 ? v.i + n : v.i;
      if (i < 0 || i >= n)
        throw c10::IndexError({__func__, __FILE__, static_cast<uint32_t>(__LINE__)}, "list index out of range");
      return tensors.at(target_.slots[static_cast<std::size_t>(i)]);
    }
    // A slice of the list: Python's slice.indices semantics.
    auto get = [](const PyValue& b, std::int64_t dflt) { return b.kind == Kind::Int ? b.i : dflt; };
    const std::int64_t step = get(v.items.at(2), 1);
    if (step == 0) throw c10::ValueError({__func__, __FILE__, static_cast<uint32_t>(__LINE__)}, "slice step cannot be zero");
    auto clamp = [&](std::int64_t x, std::int64_t lo, std::int64_t hi) {
      if (x < 0) x += n;
      return std::min(std::max(x, lo), hi);
    };
    std::int64_t start = v.items[0].kind == Kind::Int ? clamp(v.items[0].i, step > 0 ? 0 : -1, step > 0 ? n : n - 1)
                                                      : (step > 0 ? 0 : n - 1);
    std::int64_t stop = v.items[1].kind == Kind::Int ? clamp(v.items[1].i, step > 0 ? 0 : -1, step > 0 ? n : n - 1)
                                                     : (step > 0 ? n : -1);
    std::vector<at::Tensor> out;
    for (std::int64_t i = start; step > 0 ? i < stop : i > stop; i += step)
      out.push_back(tensors.at(target_.slots[static_cast<std::size_t>(i)]));
    return out;
  }

  ArgRef target_, index_;
};

/// `tensor[index] = value` through at::indexing; returns None like Python's setitem, the tensor is compared.
class SetItemCall final : public Invocation {
 public:
  SetItemCall(ArgRef target, ArgRef index, ArgRef value)
      : target_(std::move(target)), index_(std::move(index)), value_(std::move(value)) {
    resolved_op = "at::indexing (Tensor.__setitem__)";
    written_slots = target_.slots;
  }
  c10::IValue run(const std::vector<at::Tensor>& tensors, const RunContext& ctx) const override {
    at::Tensor self = tensors.at(target_.slots.at(0));
    const auto indices = subscript_of(index_, tensors, self.device());
    if (value_.kind == ArgRef::Kind::Tensor) {
      self.index_put_(indices, tensors.at(value_.slots.at(0)));
    } else {
      const PyValue& v = value_.value;
      self.index_put_(indices, v.kind == Kind::Float ? at::Scalar(v.f)
                               : v.kind == Kind::Int ? at::Scalar(v.i)
                                                     : at::Scalar(v.b));
    }
    return c10::IValue();
  }

 private:
  ArgRef target_, index_, value_;
};

class SymSumCall final : public Invocation {
 public:
  explicit SymSumCall(std::vector<PyValue> terms) : terms_(std::move(terms)) {
    resolved_op = "torch.sym_sum (sum of Python numbers)";
    decomposed = true;
  }
  c10::IValue run(const std::vector<at::Tensor>&, const RunContext&) const override { return sym_sum(terms_); }

 private:
  std::vector<PyValue> terms_;
};

/// torch.tensor / torch.as_tensor from a literal (or a tensor, which is copied / converted).
class TensorLiteralCall final : public Invocation {
 public:
  TensorLiteralCall(ArgRef data, std::optional<PyValue> dtype, std::optional<PyValue> device, bool copy)
      : data_(std::move(data)), dtype_(std::move(dtype)), device_(std::move(device)), copy_(copy) {
    resolved_op = "torch.tensor (from a Python literal)";
  }
  c10::IValue run(const std::vector<at::Tensor>& tensors, const RunContext& ctx) const override {
    std::optional<at::ScalarType> st;
    if (dtype_ && dtype_->kind == Kind::DType) {
      st = to_scalar_type(dtype_->dtype);
      if (ctx.compute_dtype && at::isFloatingType(*st) && c10::elementSize(*st) < c10::elementSize(*ctx.compute_dtype))
        st = ctx.compute_dtype;
    }
    at::Device dev(at::kCPU);
    if (device_) {
      auto d = device_of(*device_, ctx);
      if (!d) throw c10::TypeError({__func__, __FILE__, static_cast<uint32_t>(__LINE__)}, "not a device: " + device_->repr());
      dev = *d;
    }
    if (data_.kind == ArgRef::Kind::Tensor) {
      const at::Tensor& t = tensors.at(data_.slots.at(0));
      at::Tensor out = t.to(device_ ? dev : t.device(), st.value_or(t.scalar_type()));
      return copy_ && out.is_same(t) ? out.clone() : out;
    }
    return tensor_of_literal(data_.value, st).to(dev);
  }

 private:
  ArgRef data_;
  std::optional<PyValue> dtype_, device_;
  bool copy_;
};

// ---------------------------------------------------------------------------------------------------------------
// Suggestions
// ---------------------------------------------------------------------------------------------------------------

std::string closest(const std::string& word, const std::vector<std::string>& candidates) {
  const std::size_t limit = std::max<std::size_t>(1, std::min<std::size_t>(3, word.size() / 3));
  std::string best;
  std::size_t best_d = limit + 1;
  for (const auto& c : candidates) {
    if (c == word) continue;
    const std::size_t d = edit_distance(word, c);
    // Ties go to public names, then the shorter, then the alphabetically first: stable across runs.
    const bool better = d < best_d || (d == best_d && !best.empty() &&
                                       std::make_tuple(c[0] == '_', c.size(), c) <
                                           std::make_tuple(best[0] == '_', best.size(), best));
    if (better) {
      best = c;
      best_d = d;
    }
  }
  return best;
}

/// The number of a Value as a positional list element for sym_sum: numbers, or a sequence of them.
bool collect_terms(const PyValue& v, std::vector<PyValue>& out) {
  if (v.is_number()) {
    out.push_back(v);
    return true;
  }
  if (v.kind == Kind::List || v.kind == Kind::Tuple) {
    for (const auto& it : v.items)
      if (!collect_terms(it, out)) return false;
    return true;
  }
  return false;
}

}  // namespace

OpName normalize_op_name(const std::string& written) {
  // Names the table knows verbatim (torch._C._log_api_usage_once) win over the spelling rules.
  for (const auto& row : table_rows())
    if (written == row.python) {
      OpName out;
      out.form = OpName::Form::Python;
      out.python = written;
      out.written_prefix = written.substr(0, written.rfind('.') + 1);
      return out;
    }
  return parse_op_name(written);
}

OpResolver::OpResolver() {
  for (const auto& name : c10::Dispatcher::singleton().getAllOpNames()) {
    auto op = c10::Dispatcher::singleton().findOp(name);
    if (op) ops_[name.name].push_back(*op);
  }
  for (auto& [name, list] : ops_)
    std::sort(list.begin(), list.end(), [](const c10::OperatorHandle& a, const c10::OperatorHandle& b) {
      return a.operator_name().overload_name < b.operator_name().overload_name;
    });
}

std::vector<c10::OperatorHandle> OpResolver::overloads(const std::string& qualified) const {
  auto it = ops_.find(qualified);
  return it == ops_.end() ? std::vector<c10::OperatorHandle>{} : it->second;
}

Resolution OpResolver::resolve(const Case& c) const { return resolve(c.op, case_call(c)); }

Resolution OpResolver::resolve(const std::string& op, CaseCall call) const {
  const OpName name = normalize_op_name(op);
  if (name.form == OpName::Form::Invalid) {
    Resolution r;
    r.error = name.error;
    r.call = std::move(call);
    return r;
  }
  return name.form == OpName::Form::Schema ? resolve_schema_form(name, std::move(call))
                                           : resolve_python_form(name, std::move(call));
}

Resolution OpResolver::resolve_overloads(const std::string& qualified, const std::optional<std::string>& overload,
                                         CaseCall call, bool hide_python_scalar) const {
  Resolution r;
  auto it = ops_.find(qualified);
  if (it == ops_.end()) {
    r.error = "internal: " + qualified + " vanished from the dispatcher";
    r.call = std::move(call);
    return r;
  }
  std::optional<Binding> best;
  const c10::OperatorHandle* best_op = nullptr;
  std::string reasons;
  bool overload_found = false;
  for (const auto& op : it->second) {
    const std::string& ov = op.operator_name().overload_name;
    if (overload && ov != *overload) continue;
    if (!overload && hide_python_scalar && python_hidden_overloads().count(overload_name(op))) continue;
    overload_found = true;
    std::string why;
    auto b = bind_to_schema(op.schema(), call.args, call.slots, why);
    if (!b) {
      reasons += "\n  " + overload_name(op) + ": " + why;
      continue;
    }
    if (!best || b->cost < best->cost) {
      best = std::move(b);
      best_op = &op;
    }
  }
  if (overload && !overload_found) {
    std::vector<std::string> names;
    std::string list;
    for (const auto& op : it->second) {
      names.push_back(op.operator_name().overload_name);
      list += (list.empty() ? "" : ", ") + (names.back().empty() ? std::string("default") : names.back());
    }
    r.error = qualified + " has no overload '" + *overload + "'";
    const std::string near = closest(*overload, names);
    if (!near.empty()) r.error += " (did you mean " + qualified + "." + near + "?)";
    r.error += "; its overloads: " + list;
    r.call = std::move(call);
    return r;
  }
  if (!best) {
    r.error = "arguments " + call.args.describe() + " do not bind to " +
              (overload ? qualified + (overload->empty() ? "" : "." + *overload) : "any overload of " + qualified) + ":" +
              reasons;
    r.call = std::move(call);
    return r;
  }
  r.invocation = std::make_unique<DispatcherCall>(*best_op, std::move(*best));
  r.call = std::move(call);
  return r;
}

namespace {
Resolution decomposed(const Decomposition& d, CaseCall call) {
  Resolution r;
  const auto& schema = decomposition_schema(d);
  std::string why;
  auto b = bind_to_schema(schema, call.args, call.slots, why);
  if (!b) {
    r.error = "arguments " + call.args.describe() + " do not bind to " + schema.name() + ": " + why;
    r.call = std::move(call);
    return r;
  }
  for (const auto& [name, value] : parse_assignments(d.only)) {
    for (std::size_t i = 0; i < schema.arguments().size(); ++i) {
      if (schema.arguments()[i].name() != name || !b->args[i]) continue;
      const ArgRef& given = *b->args[i];
      const bool same = given.kind == ArgRef::Kind::Value &&
                        (given.value == value || (given.value.is_number() && value.is_number() &&
                                                  given.value.as_double() == value.as_double()));
      if (!same) {
        r.error = std::string(d.qualified) + " is not in this libtorch; its reference decomposition supports only " +
                  name + "=" + value.repr() + ", got " + (given.kind == ArgRef::Kind::Value ? given.value.repr() : given.describe()) +
                  ". Fix: set " + name + "=" + value.repr() + " in the case";
        r.call = std::move(call);
        return r;
      }
    }
  }
  r.invocation = std::make_unique<DecomposedCall>(d, std::move(*b));
  r.call = std::move(call);
  return r;
}
/// An older native op whose schema lacks newer arguments (sdpa's `scale` before 2.1, `enable_gqa` before 2.5):
/// the decomposition, which has the newest schema, runs the call instead when it binds there.
Resolution with_decomposition_fallback(const std::string& qualified, Resolution native, CaseCall call) {
  const Decomposition* d = find_decomposition(qualified);
  if (!d) return native;
  Resolution r = decomposed(*d, std::move(call));
  return r.invocation ? std::move(r) : std::move(native);
}
}  // namespace

Resolution OpResolver::resolve_schema_form(const OpName& name, CaseCall call) const {
  if (ops_.count(name.qualified)) {
    Resolution native = resolve_overloads(name.qualified, name.overload, call, false);
    return native.invocation ? std::move(native) : with_decomposition_fallback(name.qualified, std::move(native), std::move(call));
  }
  if (const Decomposition* d = find_decomposition(name.qualified); d && (!name.overload || name.overload->empty()))
    return decomposed(*d, std::move(call));
  Resolution r;
  const std::string written = name.written_prefix + name.qualified.substr(name.qualified.find("::") + 2) +
                              (name.overload && !name.overload->empty() ? "." + *name.overload : "");
  r.error = "unknown op '" + written + "'";
  const std::string near = suggest(name);
  if (!near.empty()) r.error += " (did you mean " + near + "?)";
  r.call = std::move(call);
  return r;
}

Resolution OpResolver::resolve_python_form(const OpName& name, CaseCall call) const {
  std::vector<const PythonOpRow*> rows;
  for (const auto& row : table_rows())
    if (name.python == row.python) rows.push_back(&row);

  if (!rows.empty() && rows.front()->builtin != Builtin::None) {
    Resolution r;
    const CallArgs& a = call.args;
    auto fail = [&](const std::string& why) {
      r.error = name.python + a.describe() + ": " + why;
      return std::move(r);
    };
    switch (rows.front()->builtin) {
      case Builtin::NotATensorOp:
        r.skip_reason = name.python + " is not a tensor op (it only records API usage); nothing to compare";
        r.call = std::move(call);
        return r;
      case Builtin::GetItem: {
        if (a.positional.size() != 2 || !a.keywords.empty()) return fail("getitem takes a tensor (or tensor list) and an index");
        const ArgRef& target = a.positional[0];
        const ArgRef& index = a.positional[1];
        if (target.kind == ArgRef::Kind::Value) return fail("getitem needs a tensor or a tensor list to index");
        if (target.kind == ArgRef::Kind::TensorList &&
            !(index.kind == ArgRef::Kind::Value && (index.value.kind == Kind::Int || index.value.kind == Kind::Slice)))
          return fail("a tensor list is indexed by an int or a slice, not " + index.describe());
        r.invocation = std::make_unique<GetItemCall>(target, index);
        break;
      }
      case Builtin::SetItem: {
        if (a.positional.size() != 3 || !a.keywords.empty()) return fail("setitem takes a tensor, an index and a value");
        if (a.positional[0].kind != ArgRef::Kind::Tensor) return fail("setitem needs a tensor to assign into");
        const ArgRef& value = a.positional[2];
        if (value.kind == ArgRef::Kind::TensorList || (value.kind == ArgRef::Kind::Value && !value.value.is_number()))
          return fail("the assigned value must be a tensor or a number, not " + value.describe());
        r.invocation = std::make_unique<SetItemCall>(a.positional[0], a.positional[1], value);
        break;
      }
      case Builtin::SymSum: {
        std::vector<PyValue> terms;
        for (const auto& p : a.positional)
          if (p.kind != ArgRef::Kind::Value || !collect_terms(p.value, terms))
            return fail("sym_sum adds Python numbers: give a list of ints/floats");
        if (!a.keywords.empty()) return fail("sym_sum takes no keyword arguments");
        r.invocation = std::make_unique<SymSumCall>(std::move(terms));
        break;
      }
      case Builtin::TensorLiteral: {
        if (a.positional.size() != 1) return fail("takes exactly one positional argument (the data)");
        std::optional<PyValue> dtype, device;
        bool copy = name.python == "torch.tensor";
        for (const auto& [k, v] : a.keywords) {
          if (k == "dtype" && (v.value.kind == Kind::DType || v.value.kind == Kind::None)) {
            if (v.value.kind == Kind::DType) dtype = v.value;
          } else if (k == "device" && v.kind == ArgRef::Kind::Value) {
            if (v.value.kind != Kind::None) device = v.value;
          } else if (k == "requires_grad" || k == "pin_memory") {
            // Gradients and pinned host memory do not change values.
          } else {
            return fail("unexpected keyword argument '" + k + "'");
          }
        }
        if (a.positional[0].kind == ArgRef::Kind::TensorList) return fail("data must be a literal or a tensor");
        r.invocation = std::make_unique<TensorLiteralCall>(a.positional[0], dtype, device, copy);
        break;
      }
      case Builtin::None: break;
    }
    r.call = std::move(call);
    return r;
  }

  if (!rows.empty()) {
    // Rows are alternatives (Python overloads): the one whose signature and target bind cheapest wins.
    Resolution best;
    int best_cost = INT_MAX;
    std::string errors;
    for (const PythonOpRow* row : rows) {
      CaseCall mapped = call;
      CallArgs& args = mapped.args;
      if (row->swap_operands && args.positional.size() >= 2) std::swap(args.positional[0], args.positional[1]);
      int cost = 0;
      std::map<std::string, PyValue> python_defaults;
      if (*row->signature) {
        const auto& sig = row_signature(*row);
        std::string why;
        auto b = bind_to_schema(sig, args, mapped.slots, why);
        if (!b) {
          errors += "\n  " + std::string(row->signature) + ": " + why;
          continue;
        }
        cost = b->cost;
        CallArgs named;
        named.none_means_default = true;
        for (std::size_t i = 0; i < sig.arguments().size(); ++i) {
          const auto& arg = sig.arguments()[i];
          std::optional<PyValue> dflt;
          if (arg.default_value()) dflt = pyvalue_of(*arg.default_value(), arg.real_type());
          if (dflt) python_defaults[arg.name()] = *dflt;
          if (b->args[i]) named.keywords.emplace_back(arg.name(), *b->args[i]);
          else if (dflt) named.keywords.emplace_back(arg.name(), ArgRef::of_value(*dflt));
        }
        args = std::move(named);
      }
      std::string unsupported;
      for (const auto& m : split_list(row->must_default)) {
        ArgRef given;
        if (!remove_keyword(args, m, &given)) continue;
        const PyValue dflt = python_defaults.count(m) ? python_defaults[m] : PyValue::none();
        if (given.kind != ArgRef::Kind::Value || given.value != dflt)
          unsupported = m + "=" + (given.kind == ArgRef::Kind::Value ? given.value.repr() : given.describe()) +
                        " is not supported (opcheck runs " + name.python + " with " + m + "=" + dflt.repr() + ")";
      }
      if (!unsupported.empty()) {
        errors += "\n  " + unsupported;
        continue;
      }
      for (const auto& d : split_list(row->dropped)) remove_keyword(args, d);
      for (const auto& rn : split_list(row->renames)) {
        const auto colon = rn.find(':');
        for (auto& kw : args.keywords)
          if (kw.first == rn.substr(0, colon)) kw.first = rn.substr(colon + 1);
      }
      for (const auto& [k, v] : parse_assignments(row->fixed)) set_keyword(args, k, ArgRef::of_value(v));

      const std::string target = row->aten;
      const auto dot = target.find('.', target.find("::"));
      const std::string qualified = target.substr(0, dot);
      std::optional<std::string> overload;
      if (dot != std::string::npos) overload = target.substr(dot + 1);
      Resolution r;
      if (ops_.count(qualified)) {
        r = resolve_overloads(qualified, overload, std::move(mapped), true);
      } else if (const Decomposition* d = find_decomposition(qualified)) {
        r = decomposed(*d, std::move(mapped));
      } else {
        errors += "\n  " + target + " is not in this libtorch";
        continue;
      }
      if (!r.invocation) {
        errors += "\n  " + r.error;
        continue;
      }
      if (cost < best_cost) {
        best = std::move(r);
        best_cost = cost;
      }
    }
    if (best.invocation) {
      best.call = std::move(call);  // the call as written, not as mapped onto the aten schema
      return best;
    }
    Resolution r;
    r.error = "arguments " + call.args.describe() + " do not fit " + name.python + ":" + errors;
    r.call = std::move(call);
    return r;
  }

  // The default rule: torch.X is aten::X, with `input` bound as `self`.
  std::string qualified = name.qualified;
  CaseCall mapped = call;
  if (name.python.rfind("torch.nn.functional.", 0) == 0) {
    // F.relu(x, inplace=True) is aten::relu_.
    ArgRef inplace;
    if (remove_keyword(mapped.args, "inplace", &inplace) && inplace.kind == ArgRef::Kind::Value &&
        inplace.value.kind == Kind::Bool && inplace.value.b)
      qualified += "_";
  }
  Resolution found;
  if (ops_.count(qualified)) {
    found = resolve_overloads(qualified, std::nullopt, mapped, true);
    if (!found.invocation) found = with_decomposition_fallback(qualified, std::move(found), std::move(mapped));
  }
  else if (const Decomposition* d = find_decomposition(qualified)) found = decomposed(*d, std::move(mapped));
  if (found.invocation || !found.error.empty()) {
    found.call = std::move(call);
    return found;
  }
  Resolution r;
  r.error = "unknown op '" + name.written_prefix + name.python.substr(name.python.rfind('.') + 1) + "'";
  const std::string near = suggest(name);
  if (!near.empty()) r.error += " (did you mean " + near + "?)";
  r.call = std::move(call);
  return r;
}

std::string OpResolver::suggest(const OpName& name) const {
  std::vector<std::string> tails;
  std::string word;
  if (name.form == OpName::Form::Schema) {
    const auto colons = name.qualified.find("::");
    const std::string ns = name.qualified.substr(0, colons + 2);
    word = name.qualified.substr(colons + 2);
    for (const auto& [q, list] : ops_)
      if (q.rfind(ns, 0) == 0) tails.push_back(q.substr(ns.size()));
    for (const auto& d : decompositions()) {
      const std::string q = d.qualified;
      if (q.rfind(ns, 0) == 0) tails.push_back(q.substr(ns.size()));
    }
  } else if (name.form == OpName::Form::Python) {
    const std::string canonical_prefix = name.python.substr(0, name.python.rfind('.') + 1);
    word = name.python.substr(canonical_prefix.size());
    if (name.qualified.size() < 6 + word.size()) return "";  // a verbatim table name: always known
    // The default rule's aten prefix for this namespace (special_, linalg_, fft_ or none).
    const std::string aten_prefix = name.qualified.substr(6, name.qualified.size() - 6 - word.size());
    for (const auto& [q, list] : ops_) {
      if (q.rfind("aten::", 0) != 0) continue;
      const std::string base = q.substr(6);
      if (base.rfind(aten_prefix, 0) == 0) tails.push_back(base.substr(aten_prefix.size()));
    }
    for (const auto& d : decompositions()) tails.push_back(std::string(d.qualified).substr(6));
    for (const auto& row : table_rows()) {
      const std::string p = row.python;
      if (p.rfind(canonical_prefix, 0) == 0 && p.find('.', canonical_prefix.size()) == std::string::npos)
        tails.push_back(p.substr(canonical_prefix.size()));
    }
  }
  if (word.empty()) return "";
  const std::string best = closest(word, tails);
  return best.empty() ? "" : name.written_prefix + best;
}

}  // namespace opcheck::exec
