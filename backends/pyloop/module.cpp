// opcheck_pyloop._C: pyloop's C++ part as a Python extension module, as torch-spyre's is torch_spyre._C. Importing
// it registers the loopback core (allocator, device guard, empty/empty_strided, resize_, the view ops, the boxed CPU
// fallback); its functions are the device's "runtime" as the Python kernels (opcheck_pyloop/__init__.py) see it:
// - host_alias(t): a CPU tensor over the same bytes as a pyloop tensor (pyloop memory is host memory), or `t` itself
//   when it is already a CPU tensor. The Python kernels compute on these aliases, as a real backend's Python kernels
//   hand buffers to its runtime.
// - copy_bytes(dst, src): copies between pyloop and CPU tensors of the same shape in one runtime call, as a backend's
//   Python _copy_from hands a transfer to its runtime's DMA. Returns dst. The GIL is released while bytes move.
// - upload(result, like): a fresh pyloop tensor on like's device with result's sizes, strides, dtype and values, as a
//   backend's kernel puts what its runtime computed into device memory (one allocation and one transfer).
// All three are plain CPython functions (no dispatcher on the way): the kernel that calls them is what torch
// dispatches to.
#include <Python.h>

#include <torch/csrc/Exceptions.h>
#include <torch/csrc/autograd/python_variable.h>

#include "../loopback/loopback.h"

namespace {

at::Tensor host_view(const at::Tensor& t) {
  return t.device().is_privateuseone() ? opcheck::loopback::host_alias(t) : t;
}

bool unpack_tensor(PyObject* o, const char* fn, const char* arg, at::Tensor& out) {
  if (!THPVariable_Check(o)) {
    PyErr_Format(PyExc_TypeError, "opcheck_pyloop._C.%s: %s must be a torch.Tensor, not %s", fn, arg,
                 Py_TYPE(o)->tp_name);
    return false;
  }
  out = THPVariable_Unpack(o);
  return true;
}

/// The two tensor arguments of fn(a, b), or false with a Python TypeError set.
bool unpack_two(PyObject* const* args, Py_ssize_t nargs, const char* fn, const char* a, const char* b, at::Tensor& x,
                at::Tensor& y) {
  if (nargs != 2) {
    PyErr_Format(PyExc_TypeError, "opcheck_pyloop._C.%s(%s, %s) takes 2 arguments, %zd given", fn, a, b, nargs);
    return false;
  }
  return unpack_tensor(args[0], fn, a, x) && unpack_tensor(args[1], fn, b, y);
}

PyObject* host_alias(PyObject* /*module*/, PyObject* t) {
  HANDLE_TH_ERRORS
  at::Tensor tensor;
  if (!unpack_tensor(t, "host_alias", "t", tensor)) return nullptr;
  return THPVariable_Wrap(host_view(tensor));
  END_HANDLE_TH_ERRORS
}

PyObject* copy_bytes(PyObject* /*module*/, PyObject* const* args, Py_ssize_t nargs) {
  HANDLE_TH_ERRORS
  at::Tensor dst, src;
  if (!unpack_two(args, nargs, "copy_bytes", "dst", "src", dst, src)) return nullptr;
  if (src.numel() > 0 || dst.numel() > 0) {
    pybind11::gil_scoped_release no_gil;
    host_view(dst).copy_(host_view(src));
  }
  Py_INCREF(args[0]);
  return args[0];
  END_HANDLE_TH_ERRORS
}

PyObject* upload(PyObject* /*module*/, PyObject* const* args, Py_ssize_t nargs) {
  HANDLE_TH_ERRORS
  at::Tensor result, like;
  if (!unpack_two(args, nargs, "upload", "result", "like", result, like)) return nullptr;
  at::Tensor out;
  {
    pybind11::gil_scoped_release no_gil;
    out = at::empty_strided(result.sizes(), result.strides(), result.options().device(like.device()));
    if (result.numel() > 0) host_view(out).copy_(result);
  }
  return THPVariable_Wrap(std::move(out));
  END_HANDLE_TH_ERRORS
}

PyCFunction fastcall(PyObject* (*fn)(PyObject*, PyObject* const*, Py_ssize_t)) {
  return reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(fn));
}

PyMethodDef methods[] = {
    {"host_alias", host_alias, METH_O, "host_alias(t): a CPU tensor over the bytes of pyloop tensor t"},
    {"copy_bytes", fastcall(copy_bytes), METH_FASTCALL,
     "copy_bytes(dst, src): copies src's values into dst (pyloop or CPU tensors); returns dst"},
    {"upload", fastcall(upload), METH_FASTCALL,
     "upload(result, like): a fresh pyloop tensor on like's device holding CPU tensor result"},
    {nullptr, nullptr, 0, nullptr}};

PyModuleDef module_def = {PyModuleDef_HEAD_INIT, "opcheck_pyloop._C", "pyloop's C++ runtime", -1, methods,
                          nullptr, nullptr, nullptr, nullptr};

}  // namespace

PyMODINIT_FUNC PyInit__C() { return PyModule_Create(&module_def); }
