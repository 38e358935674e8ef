// pyloop's one C++ operator beyond the loopback device core: opcheck_pyloop::host_alias(t), a CPU tensor over the
// same bytes as a pyloop tensor (pyloop memory is host memory). The Python kernels (opcheck_pyloop/__init__.py)
// compute on these aliases, as a real backend's Python kernels would hand buffers to its runtime.
#include <torch/library.h>

#include "../loopback/loopback.h"

namespace {

at::Tensor host_alias_op(const at::Tensor& t) { return opcheck::loopback::host_alias(t); }

}  // namespace

TORCH_LIBRARY(opcheck_pyloop, m) { m.def("host_alias(Tensor(a) self) -> Tensor(a)"); }

TORCH_LIBRARY_IMPL(opcheck_pyloop, PrivateUse1, m) { m.impl("host_alias", TORCH_FN(host_alias_op)); }
TORCH_LIBRARY_IMPL(opcheck_pyloop, CPU, m) { m.impl("host_alias", TORCH_FN(host_alias_op)); }
