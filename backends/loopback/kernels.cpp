// The kernels a device must own: allocation, transfers, resizing, views and reading a scalar. Everything else
// reaches the boxed CPU fallback (fallback.cpp). Each kernel honours the fault configured for its operator.
#include <cstring>

#include <ATen/EmptyTensor.h>
#include <ATen/ops/_local_scalar_dense_native.h>
#include <ATen/ops/_reshape_alias_native.h>
#include <ATen/ops/as_strided_native.h>
#include <ATen/ops/unfold_native.h>
#include <ATen/ops/view_as_complex_native.h>
#include <ATen/ops/view_as_real_native.h>
#include <ATen/ops/view_native.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include "loopback.h"

namespace opcheck::loopback {
namespace {

const c10::DispatchKeySet kLoopbackKeys{c10::DispatchKey::PrivateUse1};

/// Factories allocate on the device they name, not only on the current one.
c10::optional<c10::Device> target(c10::optional<c10::Device> device) {
  if (device && device->type() == c10::DeviceType::PrivateUse1 && device->has_index()) return device;
  return c10::nullopt;
}

at::Tensor empty_memory_format(at::IntArrayRef size, c10::optional<at::ScalarType> dtype,
                               c10::optional<at::Layout> layout, c10::optional<at::Device> device,
                               c10::optional<bool> pin_memory, c10::optional<at::MemoryFormat> memory_format) {
  FaultScope fault("aten::empty", "memory_format");
  TORCH_CHECK(!layout || *layout == at::kStrided, "loopback supports only strided tensors, got layout ", *layout);
  c10::OptionalDeviceGuard guard(target(device));
  at::Tensor t = at::detail::empty_generic(size, allocator(), kLoopbackKeys,
                                           dtype.value_or(c10::get_default_dtype_as_scalartype()), memory_format);
  return fault.result(t);
}

at::Tensor empty_strided(at::IntArrayRef size, at::IntArrayRef stride, c10::optional<at::ScalarType> dtype,
                         c10::optional<at::Layout> layout, c10::optional<at::Device> device,
                         c10::optional<bool> pin_memory) {
  FaultScope fault("aten::empty_strided", "");
  TORCH_CHECK(!layout || *layout == at::kStrided, "loopback supports only strided tensors, got layout ", *layout);
  c10::OptionalDeviceGuard guard(target(device));
  at::Tensor t = at::detail::empty_strided_generic(size, stride, allocator(), kLoopbackKeys,
                                                   dtype.value_or(c10::get_default_dtype_as_scalartype()));
  return fault.result(t);
}

/// Host -> device, device -> host and device -> device: all of it is host memory, so a CPU copy over aliases does
/// the work, including dtype conversion, broadcasting and any strides.
at::Tensor copy_from(const at::Tensor& self, const at::Tensor& dst, bool non_blocking) {
  FaultScope fault("aten::_copy_from", "");
  fault.check({self, dst});
  if (fault.is(FaultKind::IgnoreDtype) && self.scalar_type() != dst.scalar_type() && self.numel() > 0 &&
      dst.numel() > 0) {
    // The bytes as they are, read as the destination's dtype (as far as they go; the rest zero).
    at::Tensor src_bytes = host_alias(self).contiguous().view({-1}).view(at::kByte);
    at::Tensor as_dst = at::zeros({dst.numel()}, dst.options().device(at::kCPU));
    at::Tensor dst_bytes = as_dst.view(at::kByte);
    const auto n = std::min(src_bytes.numel(), dst_bytes.numel());
    dst_bytes.narrow(0, 0, n).copy_(src_bytes.narrow(0, 0, n));
    if (dst.scalar_type() == at::kBool) dst_bytes.bitwise_and_(1);  // a bool byte holds 0 or 1
    host_alias(dst).copy_(as_dst.view(dst.sizes()).expand_as(host_alias(dst)));
  } else if (self.numel() > 0 || dst.numel() > 0) {
    host_alias(dst).copy_(host_alias(self));
  }
  fault.after(dst);
  return dst;
}

const at::Tensor& resize(const at::Tensor& self, at::IntArrayRef size, c10::optional<at::MemoryFormat> format);

at::Tensor copy_from_and_resize(const at::Tensor& self, const at::Tensor& dst) {
  FaultScope fault("aten::_copy_from_and_resize", "");
  dst.resize_(self.sizes());  // dispatches: dst may be a CPU tensor or a loopback one
  if (self.numel() > 0) host_alias(dst).copy_(host_alias(self));
  fault.after(dst);
  return dst;
}

const at::Tensor& resize(const at::Tensor& self, at::IntArrayRef size, c10::optional<at::MemoryFormat> format) {
  FaultScope fault("aten::resize_", "");
  auto* impl = self.unsafeGetTensorImpl();
  const auto itemsize = self.dtype().itemsize();
  const std::size_t needed = at::detail::computeStorageNbytesContiguous(size, itemsize, self.storage_offset());
  impl->set_sizes_contiguous(size);
  if (self.numel() > 0) {
    const at::Storage& storage = self.storage();
    if (needed > storage.nbytes()) {
      TORCH_CHECK(storage.resizable(), "loopback: trying to resize storage that is not resizable");
      c10::DeviceGuard guard(self.device());
      c10::DataPtr grown = allocator()->allocate(needed);
      if (storage.nbytes() > 0) std::memcpy(grown.get(), storage.data(), storage.nbytes());
      storage.unsafeGetStorageImpl()->set_data_ptr_noswap(std::move(grown));
      storage.unsafeGetStorageImpl()->set_nbytes(needed);
    }
  }
  if (format && *format != at::MemoryFormat::Preserve) impl->empty_tensor_restride(*format);
  fault.after(self);
  return self;
}

// View ops build a new TensorImpl over the same storage; libtorch's generic implementations do exactly that for
// any device, and a view can never go through the CPU fallback (the result would alias a temporary CPU copy).
at::Tensor as_strided(const at::Tensor& self, at::IntArrayRef size, at::IntArrayRef stride,
                      c10::optional<int64_t> storage_offset) {
  FaultScope fault("aten::as_strided", "");
  at::Tensor t = at::native::as_strided_tensorimpl(self, size, stride, storage_offset);
  return fault.result(t);
}

at::Tensor view(const at::Tensor& self, at::IntArrayRef size) {
  FaultScope fault("aten::view", "");
  at::Tensor t = at::native::view(self, size);
  return fault.result(t);
}

at::Tensor reshape_alias(const at::Tensor& self, at::IntArrayRef size, at::IntArrayRef stride) {
  FaultScope fault("aten::_reshape_alias", "");
  at::Tensor t = at::native::_reshape_alias(self, size, stride);
  return fault.result(t);
}

at::Tensor unfold(const at::Tensor& self, int64_t dimension, int64_t size, int64_t step) {
  FaultScope fault("aten::unfold", "");
  at::Tensor t = at::native::unfold(self, dimension, size, step);
  return fault.result(t);
}

at::Tensor view_as_real(const at::Tensor& self) {
  FaultScope fault("aten::view_as_real", "");
  at::Tensor t = at::native::view_as_real(self);
  return fault.result(t);
}

at::Tensor view_as_complex(const at::Tensor& self) {
  FaultScope fault("aten::view_as_complex", "");
  at::Tensor t = at::native::view_as_complex(self);
  return fault.result(t);
}

at::Scalar local_scalar_dense(const at::Tensor& self) {
  FaultScope fault("aten::_local_scalar_dense", "");
  if (self.numel() == 1 && self.defined()) {
    // A value fault corrupts what the host reads, as a faulty transfer would; the tensor itself stays intact.
    at::Tensor copy = host_alias(self).clone();
    fault.after(copy);
    return at::native::_local_scalar_dense_cpu(copy);
  }
  fault.after(at::Tensor());
  return at::native::_local_scalar_dense_cpu(host_alias(self));  // reports the wrong numel like the CPU does
}

// A convolution on a PrivateUse1 device reaches aten::convolution_overrideable, whose one kernel (for every backend)
// throws "not implemented": the boxed fallback never sees it. Its arguments are aten::convolution's, so the call is
// handed to the fallback as aten::convolution, which then runs on the CPU like any other op (fp16 widened where the
// CPU lacks a kernel). Faults keyed by either name apply.
void convolution_overrideable(const c10::OperatorHandle&, torch::jit::Stack* stack) {
  static const c10::OperatorHandle convolution = c10::Dispatcher::singleton().findSchemaOrThrow("aten::convolution", "");
  FaultScope fault("aten::convolution_overrideable", "");
  cpu_fallback_with_faults(convolution, stack);
  fault.after(*stack, 1);
}

// Every op registered in the TORCH_LIBRARY_IMPL block below (the fault table needs to know them while the
// library is still loading, before the dispatcher can be asked).
constexpr const char* kOwnKernels[] = {
    "aten::empty.memory_format", "aten::empty_strided", "aten::resize_",        "aten::as_strided",
    "aten::view",                "aten::_reshape_alias", "aten::unfold",        "aten::view_as_real",
    "aten::view_as_complex",     "aten::convolution_overrideable",
#ifndef OPCHECK_PYLOOP
    "aten::_copy_from",          "aten::_copy_from_and_resize", "aten::_local_scalar_dense",
#endif
};

}  // namespace

bool has_own_kernel(const std::string& op) {
  for (const char* k : kOwnKernels)
    if (op == k) return true;
  return false;
}

}  // namespace opcheck::loopback

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  using namespace opcheck::loopback;
  m.impl("empty.memory_format", TORCH_FN(empty_memory_format));
  m.impl("empty_strided", TORCH_FN(empty_strided));
#ifndef OPCHECK_PYLOOP  // pyloop registers transfers and scalar reads from Python, as torch-spyre does
  m.impl("_copy_from", TORCH_FN(copy_from));
  m.impl("_copy_from_and_resize", TORCH_FN(copy_from_and_resize));
  m.impl("_local_scalar_dense", TORCH_FN(local_scalar_dense));
#endif
  m.impl("resize_", TORCH_FN(resize));
  m.impl("as_strided", TORCH_FN(as_strided));
  m.impl("view", TORCH_FN(view));
  m.impl("_reshape_alias", TORCH_FN(reshape_alias));
  m.impl("unfold", TORCH_FN(unfold));
  m.impl("view_as_real", TORCH_FN(view_as_real));
  m.impl("view_as_complex", TORCH_FN(view_as_complex));
  m.impl("convolution_overrideable", torch::CppFunction::makeFromBoxedFunction<&convolution_overrideable>());
}

// A copy of a conjugate or negative view reaches the device's transfer with its bit set: the transfer resolves it
// (host_alias keeps the bit). Without these, the math-bit fallback resolves the view by cloning it on the device,
// which copies it with _copy_from again, without end (fft outputs are such views). pyloop's transfers are Python's.
#ifndef OPCHECK_PYLOOP
TORCH_LIBRARY_IMPL(aten, Conjugate, m) {
  m.impl("_copy_from", torch::CppFunction::makeFallthrough());
  m.impl("_copy_from_and_resize", torch::CppFunction::makeFallthrough());
}
TORCH_LIBRARY_IMPL(aten, Negative, m) {
  m.impl("_copy_from", torch::CppFunction::makeFallthrough());
  m.impl("_copy_from_and_resize", torch::CppFunction::makeFallthrough());
}
#endif
