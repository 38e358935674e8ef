// The boxed fallback: every op without a loopback kernel runs on the CPU.
//
// Loopback memory is host memory, so arguments the op only reads are handed to the CPU kernel as CPU aliases of
// the same bytes (no copy: real manifests carry 1 GB embedding tables). Arguments the op writes are copied and the
// result written back (resizing the device tensor first when the kernel resized its copy), because a CPU alias
// over device memory cannot be resized. Fresh results are copied to the device of the first device argument; a
// result that views an argument becomes a loopback view of that argument. Tensors inside `Tensor?[]` lists (index)
// and `Device` arguments are moved to the CPU too, which libtorch's own cpu_fallback does not do.
//
// Low precision: a device under test computes fp16/bf16 natively, but some CPU kernels lack Half (and some
// BFloat16) ... The approach taken is "try, then upcast": the op
// first runs as is; only when the CPU kernel throws "not implemented for 'Half'" / "'BFloat16'" does it run again
// with every Half/BFloat16 tensor (and dtype argument) widened to float32, and the results are rounded back to the
// dtype the op would have produced (asked from the Meta kernel when there is one, else: float32 results become
// the low dtype). So ops that do have low-precision CPU kernels keep their exact CPU behaviour, and the others
// behave like a device that computes in float32 internally and rounds once.
//
// OPCHECK_LOOPBACK_MODE changes that (modes.cpp): under precise every floating op computes in float64 and rounds
// once; under stats_fp32 the norm ops compute in float32 and keep their statistics there; any_writer and
// shuffle_accumulate reorder the writes in the host arguments before the kernel runs (mode_ops.cpp).
#include <set>

#include <ATen/ops/as_strided_native.h>
#include <torch/library.h>

#include "loopback.h"

namespace opcheck::loopback {
namespace {

bool is_low(at::ScalarType t) { return t == at::kHalf || t == at::kBFloat16; }

/// Applies `fn` to every defined tensor in a value, rebuilding lists; other values pass through.
template <class Fn>
c10::IValue map_tensors(const c10::IValue& v, Fn fn) {
  if (v.isTensor()) return v.toTensor().defined() ? c10::IValue(fn(v.toTensor())) : v;
  if (v.isTensorList()) {
    c10::List<at::Tensor> out;
    for (const at::Tensor& t : v.toTensorVector()) out.push_back(t.defined() ? fn(t) : t);
    return out;
  }
  if (v.isOptionalTensorList()) {
    c10::List<c10::optional<at::Tensor>> out;
    for (const auto& t : v.toOptionalTensorVector())
      out.push_back(t && t->defined() ? c10::optional<at::Tensor>(fn(*t)) : t);
    return out;
  }
  return v;
}

template <class Fn>
void for_each_tensor(const c10::IValue& v, Fn fn) {
  map_tensors(v, [&](const at::Tensor& t) {
    fn(t);
    return t;
  });
}

/// First Half/BFloat16 tensor among the arguments (its dtype is what results are rounded back to).
c10::optional<at::ScalarType> low_precision_dtype(const std::vector<c10::IValue>& args) {
  c10::optional<at::ScalarType> low;
  for (const auto& a : args)
    for_each_tensor(a, [&](const at::Tensor& t) {
      if (!low && is_low(t.scalar_type())) low = t.scalar_type();
    });
  return low;
}

bool missing_low_precision_kernel(const c10::Error& e) {
  const std::string& m = e.msg();
  return m.find("not implemented for 'Half'") != std::string::npos ||
         m.find("not implemented for 'BFloat16'") != std::string::npos;
}

bool is_dtype_argument(const c10::Argument& arg) {
  auto type = arg.type();
  if (auto opt = type->cast<c10::OptionalType>()) type = opt->getElementType();
  return type->kind() == c10::TypeKind::ScalarTypeType;
}

bool writes(const c10::Argument& a) { return a.alias_info() != nullptr && a.alias_info()->isWrite(); }

/// The dtypes the op would return for these arguments, from its Meta kernel; empty when there is none.
std::vector<c10::optional<at::ScalarType>> result_dtypes_from_meta(const c10::OperatorHandle& op,
                                                                  const std::vector<c10::IValue>& args) {
  std::vector<c10::optional<at::ScalarType>> dtypes;
  try {
    torch::jit::Stack meta;
    for (const auto& a : args)
      meta.push_back(map_tensors(a, [](const at::Tensor& t) {
        // CPU 0-dim tensors (wrapped Python numbers) may mix with any device; keep them so type promotion matches.
        if (t.is_cpu() && t.dim() == 0) return t;
        return at::empty_strided(t.sizes(), t.strides(), t.options().device(c10::kMeta));
      }));
    op.callBoxed(&meta);
    for (const auto& r : meta)
      dtypes.push_back(r.isTensor() && r.toTensor().defined() ? c10::optional<at::ScalarType>(r.toTensor().scalar_type())
                                                              : c10::nullopt);
  } catch (const std::exception&) {
    dtypes.clear();
  }
  return dtypes;
}

/// A loopback view of `base` matching the CPU view `v` of base's memory, or an undefined tensor if `v` lies elsewhere.
at::Tensor device_view(const at::Tensor& base, const at::Tensor& v) {
  if (base.is_cpu() || v.scalar_type() != base.scalar_type() || !base.has_storage()) return {};
  const auto* storage_begin = static_cast<const char*>(base.storage().data());
  const auto* p = static_cast<const char*>(v.data_ptr());
  const auto item = static_cast<std::ptrdiff_t>(base.element_size());
  if (storage_begin == nullptr || p < storage_begin || (p - storage_begin) % item != 0) return {};
  return at::native::as_strided_tensorimpl(base, v.sizes(), v.strides(), (p - storage_begin) / item);
}

/// How the op computes: in its own dtypes, or with floating tensors widened to `compute` and fresh results rounded
/// once to `results` (per return), else from the compute dtype to `narrow_to`.
struct Widening {
  c10::optional<at::ScalarType> compute;  // kFloat: Half/BFloat16 widened; kDouble: every floating dtype (precise)
  std::vector<c10::optional<at::ScalarType>> results;
  at::ScalarType narrow_to = at::kFloat;
};

at::ScalarType widened(at::ScalarType t, at::ScalarType compute) {
  if (compute == at::kDouble) return at::isComplexType(t) ? at::kComplexDouble : at::isFloatingType(t) ? at::kDouble : t;
  return is_low(t) ? at::kFloat : t == at::kComplexHalf ? at::kComplexFloat : t;
}

at::ScalarType rounded(const Widening& w, std::size_t j, at::ScalarType got) {
  if (!w.compute) return got;
  if (j < w.results.size() && w.results[j]) return *w.results[j];
  if (got == *w.compute) return w.narrow_to;
  if (got == at::toComplexType(*w.compute)) return at::toComplexType(w.narrow_to);
  return got;
}

bool is_half_to_float(const c10::Argument& a) { return a.name() == "half_to_float"; }

/// Host versions of `args`: CPU aliases of what the op only reads, copies of what it writes, widened as `w` says.
torch::jit::Stack host_arguments(const c10::OperatorHandle& op, const std::vector<c10::IValue>& args,
                                 const Widening& w, c10::optional<c10::Device>& device) {
  const auto& params = op.schema().arguments();
  torch::jit::Stack host;
  host.reserve(args.size());
  for (std::size_t i = 0; i < args.size(); ++i) {
    const bool written = writes(params[i]);
    const c10::IValue& a = args[i];
    if (a.isDevice() && a.toDevice().type() == c10::DeviceType::PrivateUse1) {
      if (!device) device = a.toDevice();
      host.emplace_back(c10::Device(c10::kCPU));
      continue;
    }
    host.push_back(map_tensors(a, [&](const at::Tensor& t) {
      if (!t.is_cpu() && !device) device = t.device();
      at::Tensor h = host_alias(t);
      if (w.compute && widened(h.scalar_type(), *w.compute) != h.scalar_type())
        return h.to(widened(h.scalar_type(), *w.compute));
      // A written argument may be resized by the kernel, which an alias over device memory cannot be.
      if (written && !t.is_cpu()) return h.clone(at::MemoryFormat::Preserve);
      return h;
    }));
    if (!w.compute) continue;
    if (is_dtype_argument(params[i]) && host.back().isInt()) {
      // dtype=half would bring the missing kernel (or the rounding) straight back
      const auto dtype = static_cast<at::ScalarType>(host.back().toInt());
      host.back() = static_cast<int64_t>(widened(dtype, *w.compute));
    } else if (is_half_to_float(params[i]) && host.back().isBool()) {
      host.back() = false;  // the input is widened already; the result dtype is rounded to float32 after
    }
  }
  return host;
}

/// Runs the op's CPU kernel on host versions of `args` and leaves its returns on `stack`, computing as `w` says,
/// with the writes ordered as the active modes say (reorder_writes).
void run_on_host(const c10::OperatorHandle& op, const std::vector<c10::IValue>& args, torch::jit::Stack* stack,
                 const Widening& w) {
  const auto& schema = op.schema();
  const auto& params = schema.arguments();
  c10::optional<c10::Device> device;
  torch::jit::Stack host = host_arguments(op, args, w, device);
  const auto map_back = reorder_writes(op, host);
  const std::vector<c10::IValue> host_args = host;  // the kernel consumes the stack; written copies stay here
  op.redispatchBoxed(c10::DispatchKeySet(c10::DispatchKey::CPU), &host);
  if (map_back) map_back(host);

  // Written arguments: copy the host results back into the caller's tensors (same memory for unwidened CPU ones).
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (!writes(params[i])) continue;
    std::vector<at::Tensor> dst, src;
    for_each_tensor(args[i], [&](const at::Tensor& t) { dst.push_back(t); });
    for_each_tensor(host_args[i], [&](const at::Tensor& t) { src.push_back(t); });
    for (std::size_t k = 0; k < dst.size() && k < src.size(); ++k) {
      if (dst[k].is_same(src[k])) continue;
      if (dst[k].sizes() != src[k].sizes()) dst[k].resize_(src[k].sizes());
      host_alias(dst[k]).copy_(src[k]);
    }
  }

  const auto& returns = schema.returns();
  for (std::size_t j = 0; j < returns.size() && j < host.size(); ++j) {
    const auto* alias = returns[j].alias_info();
    if (alias != nullptr) {
      // Returns an argument (add_ returns self, out= variants return out) or a view of one.
      std::size_t owner = args.size();
      for (std::size_t i = 0; i < args.size() && owner == args.size(); ++i)
        if (params[i].alias_info() != nullptr && params[i].alias_info()->beforeSets() == alias->beforeSets()) owner = i;
      if (owner < args.size() && alias->isWrite()) {
        stack->push_back(args[owner]);
        continue;
      }
      if (owner < args.size() && args[owner].isTensor() && host[j].isTensor()) {
        at::Tensor view = device_view(args[owner].toTensor(), host[j].toTensor());
        if (view.defined()) {
          stack->push_back(view);
          continue;
        }
      }
    }
    stack->push_back(map_tensors(host[j], [&](const at::Tensor& t) {
      const at::ScalarType dtype = rounded(w, j, t.scalar_type());
      return device ? t.to(*device, dtype) : t.to(dtype);
    }));
  }
}

/// The dtypes the CPU kernel gives this call's returns, from a run in the call's own dtypes (for ops without a Meta
/// kernel); empty when the CPU refuses the call.
std::vector<c10::optional<at::ScalarType>> result_dtypes_from_cpu(const c10::OperatorHandle& op,
                                                                 const std::vector<c10::IValue>& args) {
  std::vector<c10::optional<at::ScalarType>> dtypes;
  try {
    c10::optional<c10::Device> device;
    torch::jit::Stack host = host_arguments(op, args, Widening{}, device);
    op.redispatchBoxed(c10::DispatchKeySet(c10::DispatchKey::CPU), &host);
    for (const auto& r : host) {
      c10::optional<at::ScalarType> dtype;
      for_each_tensor(r, [&](const at::Tensor& t) {
        if (!dtype) dtype = t.scalar_type();
      });
      dtypes.push_back(dtype);
    }
  } catch (const std::exception&) {
    dtypes.clear();
  }
  return dtypes;
}

/// Ops that only select, move or pad elements: exact in any dtype, so precise runs them as given (in float64 a
/// gather from a 1 GB bf16 table would take 4 GB more for nothing).
bool moves_elements_only(const c10::FunctionSchema& schema) {
  static const std::set<std::string> kMoving = {
      "aten::index",     "aten::index_select", "aten::gather",         "aten::take",         "aten::embedding",
      "aten::cat",       "aten::stack",        "aten::clone",          "aten::copy_",        "aten::_to_copy",
      "aten::flip",      "aten::roll",         "aten::repeat",         "aten::masked_select", "aten::narrow_copy",
      "aten::constant_pad_nd", "aten::index_copy", "aten::index_copy_", "aten::tril",        "aten::triu",
      "aten::masked_scatter", "aten::masked_scatter_", "aten::masked_fill", "aten::masked_fill_"};
  const std::string& overload = schema.overload_name();
  if (schema.name() == "aten::scatter" || schema.name() == "aten::scatter_")
    return overload.find("reduce") == std::string::npos;  // scatter with reduce= computes
  return kMoving.count(schema.name()) != 0;
}

/// Ops whose result depends on more than the precision of their dtype (its limits, its spacing, the random stream
/// drawn for it, bits reinterpreted): computing them in float64 would change what they mean.
bool keeps_its_dtype_under_precise(const c10::FunctionSchema& schema) {
  const std::string& name = schema.name();
  if (name == "aten::nextafter" || name == "aten::nan_to_num" || name == "aten::nan_to_num_" ||
      name == "aten::native_dropout" || name == "aten::dropout" || name == "aten::rrelu_with_noise" ||
      name == "aten::_fused_dropout" || name == "aten::frexp" || name == "aten::fill_" || name == "aten::fill")
    return true;
  for (const auto& a : schema.arguments()) {
    auto type = a.type();
    if (auto opt = type->cast<c10::OptionalType>()) type = opt->getElementType();
    if (type->kind() == c10::TypeKind::GeneratorType) return true;
  }
  for (const auto& r : schema.returns())
    if (r.alias_info() != nullptr && !r.alias_info()->isWrite()) return true;  // a view aliases its input's bits
  return false;
}

/// precise: floating tensors (and floating dtype arguments) in float64 / complex128, results rounded once to the
/// dtype the CPU op gives them (its Meta kernel, else a run in the call's own dtypes, else the first floating
/// argument's dtype). Nullopt when the op has nothing floating, or must keep its dtype.
c10::optional<Widening> precise_widening(const c10::OperatorHandle& op, const std::vector<c10::IValue>& args) {
  const auto& params = op.schema().arguments();
  if (keeps_its_dtype_under_precise(op.schema()) || moves_elements_only(op.schema())) return c10::nullopt;
  c10::optional<at::ScalarType> first;
  for (std::size_t i = 0; i < args.size(); ++i) {
    for_each_tensor(args[i], [&](const at::Tensor& t) {
      if (!first && (at::isFloatingType(t.scalar_type()) || at::isComplexType(t.scalar_type()))) first = t.scalar_type();
    });
    if (!first && is_dtype_argument(params[i]) && args[i].isInt()) {
      const auto dtype = static_cast<at::ScalarType>(args[i].toInt());
      if (at::isFloatingType(dtype) || at::isComplexType(dtype)) first = dtype;
    }
  }
  if (!first) return c10::nullopt;
  Widening w;
  w.compute = at::kDouble;
  w.narrow_to = at::isComplexType(*first) ? at::toRealValueType(*first) : *first;
  w.results = result_dtypes_from_meta(op, args);
  bool fresh = false;  // a return that is no argument: its dtype must be known
  for (const auto& r : op.schema().returns()) fresh = fresh || r.alias_info() == nullptr;
  if (w.results.empty() && fresh) w.results = result_dtypes_from_cpu(op, args);
  return w;
}

/// The plain run, or the fp16/bf16 one widened to float32 where the CPU lacks the low-precision kernel.
void run_in_own_dtypes(const c10::OperatorHandle& op, const std::vector<c10::IValue>& args, torch::jit::Stack* stack) {
  const auto low = low_precision_dtype(args);
  if (!low) return run_on_host(op, args, stack, Widening{});
  const auto base = stack->size();
  try {
    run_on_host(op, args, stack, Widening{});
  } catch (const c10::Error& e) {
    if (!missing_low_precision_kernel(e)) throw;
    // The dispatch macros throw before any element is touched, and written arguments were copies: running again
    // is safe.
    stack->resize(base);
    Widening w;
    w.compute = at::kFloat;
    w.results = result_dtypes_from_meta(op, args);
    w.narrow_to = *low;
    run_on_host(op, args, stack, w);
  }
}

}  // namespace

void cpu_fallback_with_faults(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  const auto& schema = op.schema();
  FaultScope fault(schema.operator_name());
  const auto num_args = schema.arguments().size();
  const std::vector<c10::IValue> args = torch::jit::pop(*stack, num_args);
  fault.check(args);
  Widening stats;
  if (stats_fp32_dtypes(op, args, stats.results)) {
    stats.compute = mode_on(Mode::Precise) ? at::kDouble : at::kFloat;
    run_on_host(op, args, stack, stats);
  } else if (auto precise = mode_on(Mode::Precise) ? precise_widening(op, args) : c10::nullopt) {
    const auto base = stack->size();
    try {
      run_on_host(op, args, stack, *precise);
    } catch (const c10::Error&) {
      // No float64 kernel on the CPU (or none for the mix): this device computes such an op as it is given.
      // Written arguments were copies, and nothing was returned yet: running again is safe.
      stack->resize(base);
      run_in_own_dtypes(op, args, stack);
    }
  } else {
    run_in_own_dtypes(op, args, stack);
  }
  fault.after(*stack, schema.returns().size());
}

}  // namespace opcheck::loopback

TORCH_LIBRARY_IMPL(_, PrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFromBoxedFunction<&opcheck::loopback::cpu_fallback_with_faults>());
}
