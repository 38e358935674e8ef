// pyloop's C++ operators beyond the loopback device core, its "runtime" as the Python kernels see it:
// - opcheck_pyloop::host_alias(t): a CPU tensor over the same bytes as a pyloop tensor (pyloop memory is host
//   memory). The Python kernels (opcheck_pyloop/__init__.py) compute on these aliases, as a real backend's Python
//   kernels would hand buffers to its runtime.
// - opcheck_pyloop::copy_bytes(dst, src): copies between pyloop and CPU tensors in one runtime call, as a backend's
//   Python _copy_from hands a transfer to its runtime's DMA.
#include <torch/library.h>

#include "../loopback/loopback.h"

namespace {

at::Tensor host_alias_op(const at::Tensor& t) { return opcheck::loopback::host_alias(t); }

at::Tensor host_view(const at::Tensor& t) {
  return t.device().is_privateuseone() ? opcheck::loopback::host_alias(t) : t;
}

at::Tensor& copy_bytes_op(at::Tensor& dst, const at::Tensor& src) {
  if (src.numel() > 0 || dst.numel() > 0) host_view(dst).copy_(host_view(src));
  return dst;
}

}  // namespace

TORCH_LIBRARY(opcheck_pyloop, m) {
  m.def("host_alias(Tensor(a) self) -> Tensor(a)");
  m.def("copy_bytes(Tensor(a!) dst, Tensor src) -> Tensor(a!)");
}

TORCH_LIBRARY_IMPL(opcheck_pyloop, PrivateUse1, m) {
  m.impl("host_alias", TORCH_FN(host_alias_op));
  m.impl("copy_bytes", TORCH_FN(copy_bytes_op));
}
TORCH_LIBRARY_IMPL(opcheck_pyloop, CPU, m) {
  m.impl("host_alias", TORCH_FN(host_alias_op));
  m.impl("copy_bytes", TORCH_FN(copy_bytes_op));
}
