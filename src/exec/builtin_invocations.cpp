#include "exec/builtin_invocations.h"

#include <algorithm>

#include "exec/decompositions.h"
#include "exec/inputs.h"

namespace opcheck::exec {
namespace {

using Kind = PyValue::Kind;

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

Resolution resolve_builtin(Builtin builtin, const std::string& python, CaseCall call) {
  Resolution r;
  const CallArgs& a = call.args;
  auto fail = [&](const std::string& why) {
    r.error = python + a.describe() + ": " + why;
    r.kind = VerdictKind::ArgumentsDoNotBind;
    return std::move(r);
  };
  switch (builtin) {
    case Builtin::NotATensorOp:
      r.skip_reason = python + " is not a tensor op (it only records API usage); nothing to compare";
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
      bool copy = python == "torch.tensor";
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

}  // namespace opcheck::exec
