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

/// Runs the op's CPU kernel on host versions of `args` and leaves its returns on `stack`. `widen` = upcast
/// Half/BFloat16 to float32 and round results back to `low`.
void run_on_host(const c10::OperatorHandle& op, const std::vector<c10::IValue>& args, torch::jit::Stack* stack,
                 bool widen, at::ScalarType low) {
  const auto& schema = op.schema();
  const auto& params = schema.arguments();
  c10::optional<c10::Device> device;
  const auto expected = widen ? result_dtypes_from_meta(op, args) : std::vector<c10::optional<at::ScalarType>>{};

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
      if (widen && is_low(h.scalar_type())) return h.to(at::kFloat);
      // A written argument may be resized by the kernel, which an alias over device memory cannot be.
      if (written && !t.is_cpu()) return h.clone(at::MemoryFormat::Preserve);
      return h;
    }));
    if (widen && is_dtype_argument(params[i]) && host.back().isInt() &&
        is_low(static_cast<at::ScalarType>(host.back().toInt())))
      host.back() = static_cast<int64_t>(at::kFloat);  // dtype=half would bring the missing kernel straight back
  }
  const std::vector<c10::IValue> host_args = host;  // the kernel consumes the stack; written copies stay here
  op.redispatchBoxed(c10::DispatchKeySet(c10::DispatchKey::CPU), &host);

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
    // A plain ScalarType, not an optional one: gcc 12 reads an optional captured here as maybe uninitialized once
    // Tensor::to is inlined (-Wmaybe-uninitialized in TensorBody.h).
    const bool has_want = j < expected.size() && expected[j].has_value();
    const at::ScalarType want = has_want ? *expected[j] : at::ScalarType::Undefined;
    stack->push_back(map_tensors(host[j], [&](const at::Tensor& t) {
      at::ScalarType dtype = t.scalar_type();
      if (widen) dtype = has_want ? want : (dtype == at::kFloat ? low : dtype);
      return device ? t.to(*device, dtype) : t.to(dtype);
    }));
  }
}

}  // namespace

void cpu_fallback_with_faults(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  const auto& schema = op.schema();
  FaultScope fault(schema.operator_name());
  const auto num_args = schema.arguments().size();
  const std::vector<c10::IValue> args = torch::jit::pop(*stack, num_args);
  const auto low = low_precision_dtype(args);
  if (!low) {
    run_on_host(op, args, stack, /*widen=*/false, at::kFloat);
  } else {
    const auto base = stack->size();
    try {
      run_on_host(op, args, stack, /*widen=*/false, *low);
    } catch (const c10::Error& e) {
      if (!missing_low_precision_kernel(e)) throw;
      // The dispatch macros throw before any element is touched, and written arguments were copies: running again
      // is safe.
      stack->resize(base);
      run_on_host(op, args, stack, /*widen=*/true, *low);
    }
  }
  fault.after(*stack, schema.returns().size());
}

}  // namespace opcheck::loopback

TORCH_LIBRARY_IMPL(_, PrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFromBoxedFunction<&opcheck::loopback::cpu_fallback_with_faults>());
}
