"""pyloop: opcheck's Python-registered PrivateUse1 device, built the way torch-spyre is.

A small C++ part, the extension module opcheck_pyloop._C as torch-spyre's is torch_spyre._C (allocator, device guard,
empty/empty_strided, resize_, the view ops and a boxed CPU fallback, plus the runtime functions host_alias, copy_bytes
and upload), is imported here; everything a Python backend registers from Python is registered below through
torch.library: the host<->device copy (_copy_from, _copy_from_and_resize), the scalar read
(_local_scalar_dense), and compute kernels (add, mul, mm, bmm, softmax), some of them wrapped in
torch.compile(backend="aot_eager") as torch-spyre wraps its eager kernels in its own compiler. The device is named
`pyloop` (torch.utils.rename_privateuse1_backend).

OPCHECK_PYLOOP_FAULTS="aten::add.Tensor=bias:1e-2;aten::mul.Tensor=raise;aten::mm=segv;aten::exp=hang" injects
faults into the named ops' Python kernels (an op without a pyloop kernel gets one that runs it on the CPU). OP is
an aten overload as the reports' resolved op names it (aten::softmax.int), or a bare name for all its overloads;
an unknown operator or overload raises ValueError, so the import fails and the run stops:
  bias:X   adds X to every floating output element (a wrong value)
  host     returns the outputs on the host instead of the device (a kernel that forgot to upload its result)
  raise    raises ValueError from the kernel (a Python exception)
  segv     dereferences a null pointer (the worker dies with SIGSEGV)
  hang     sleeps until the run's timeout kills the worker
OPCHECK_PYLOOP_EAGER=1 runs the compile-wrapped kernels eagerly.
"""
import ctypes
import difflib
import math
import os
import time
import types

import torch

__version__ = "0.1.0"
NAME = "pyloop"

from . import _C  # noqa: E402  (registers the C++ part with the dispatcher; needs torch imported first)

torch.utils.rename_privateuse1_backend(NAME)


def _module():
    """torch.pyloop: what torch asks of a backend's Python module."""
    m = types.ModuleType(f"torch.{NAME}")
    m.is_available = lambda: True
    m.device_count = lambda: int(os.environ.get("OPCHECK_LOOPBACK_DEVICES", "4"))
    m.current_device = lambda: 0
    m._is_in_bad_fork = lambda: False
    m.manual_seed_all = lambda seed: None
    m.get_amp_supported_dtype = lambda: [torch.float16, torch.bfloat16]
    return m


torch._register_device_module(NAME, _module())
torch.utils.generate_methods_for_privateuse1_backend(for_tensor=True, for_module=True, for_storage=True)

_host = _C.host_alias
_copy_bytes = _C.copy_bytes  # one runtime call per transfer, as a backend's DMA
_lib = torch.library.Library("aten", "IMPL")
_EAGER = os.environ.get("OPCHECK_PYLOOP_EAGER", "") not in ("", "0")


def host(t):
    """The CPU view of a pyloop tensor's bytes (a CPU tensor as it is)."""
    return _host(t) if isinstance(t, torch.Tensor) and t.device.type == NAME else t


to_device = _C.upload  # to_device(result, like): a fresh pyloop tensor holding CPU tensor `result`, on like's device


def _fault_ops(op):
    """The overloads a fault's operator means, as "aten::name.overload": the one named, or every overload of a bare
    name (as the C++ loopback reads it) except views, which must alias their input and get no CPU kernel."""
    ns, sep, rest = op.partition("::")
    name, _, overload = rest.partition(".")
    if not sep or ns != "aten" or not name:
        raise ValueError(f"OPCHECK_PYLOOP_FAULTS: operator '{op}' is not an aten operator. "
                         "Fix: write it as the reports' resolved op names it, e.g. aten::softmax.int or aten::mm")
    packet = getattr(torch.ops.aten, name, None)
    if packet is None:
        known = sorted({n.split("::", 1)[1].split(".")[0] for n in torch._C._dispatch_get_all_op_names()
                        if n.startswith("aten::")})
        near = difflib.get_close_matches(name, known, n=3)
        hint = f" (did you mean {' or '.join('aten::' + n for n in near)}?)" if near else ""
        raise ValueError(f"OPCHECK_PYLOOP_FAULTS: unknown operator '{op}'{hint}. "
                         "Fix: write it as the reports' resolved op names it, e.g. aten::softmax.int")
    overloads = packet.overloads()
    if overload:
        if overload not in overloads:
            raise ValueError(f"OPCHECK_PYLOOP_FAULTS: aten::{name} has no overload '{overload}' (it has "
                             f"{', '.join(sorted(overloads))}). Fix: name one of them, or none for all")
        return [f"aten::{name}.{overload}"]

    def is_view(ov):
        return any(r.alias_info is not None and not r.alias_info.is_write
                   for r in getattr(packet, ov)._schema.returns)

    chosen = [f"aten::{name}.{ov}" for ov in overloads if not is_view(ov)]
    if not chosen:
        raise ValueError(f"OPCHECK_PYLOOP_FAULTS: every overload of aten::{name} is a view op. "
                         "Fix: put the fault on an op that computes values")
    return chosen


# Kernels whose result is the tensor they were given (or a number): it cannot be returned on the host instead.
_RETURNS_ITS_ARGUMENT = {"aten::_copy_from.default", "aten::_copy_from_and_resize.default",
                         "aten::_local_scalar_dense.default", "aten::resize_.default"}


def _parse_faults(spec):
    faults = {}
    for item in filter(None, (s.strip() for s in spec.split(";"))):
        op, _, what = item.partition("=")
        kind, _, arg = what.partition(":")
        if kind not in ("bias", "host", "raise", "segv", "hang") or (kind == "bias") != bool(arg):
            raise ValueError(f"OPCHECK_PYLOOP_FAULTS: '{item}' is not OP=bias:X|host|raise|segv|hang. "
                             "Fix: e.g. aten::add.Tensor=bias:1e-2")
        for full in _fault_ops(op.strip()):
            if kind == "host" and full in _RETURNS_ITS_ARGUMENT:
                raise ValueError(f"OPCHECK_PYLOOP_FAULTS: cannot inject 'host' into '{full}': its kernel returns the "
                                 "tensor it was given (or a number). Fix: put it on an op that returns a new tensor")
            faults[full] = (kind, _bias(item, arg) if arg else 0.0)
    return faults


def _bias(item, arg):
    """bias:X's number, or a ValueError that names the variable and the entry."""
    try:
        value = float(arg)
    except ValueError:
        raise ValueError(f"OPCHECK_PYLOOP_FAULTS: '{item}': 'bias' needs a number, not '{arg}'. "
                         "Fix: write e.g. aten::add.Tensor=bias:1e-2") from None
    if not math.isfinite(value):
        raise ValueError(f"OPCHECK_PYLOOP_FAULTS: '{item}': 'bias:{arg}' is not a finite number (it overflows a "
                         "double, or is inf or nan). Fix: write a finite number, e.g. bias:1e3")
    return value


FAULTS = _parse_faults(os.environ.get("OPCHECK_PYLOOP_FAULTS", ""))


def _fault_before(op):
    """The faults that strike before the kernel computes: a Python exception, a crash, a hang."""
    kind = FAULTS.get(op, ("", 0.0))[0]
    if kind == "raise":
        raise ValueError(f"pyloop: injected fault in {op}")
    if kind == "segv":
        ctypes.string_at(0)
    if kind == "hang":
        while True:
            time.sleep(3600)


def _fault_after(op, result):
    """A wrong value (the bias added to a floating result), or the result left on the host (`host`)."""
    kind, bias = FAULTS.get(op, ("", 0.0))
    if kind == "bias" and isinstance(result, torch.Tensor) and result.is_floating_point():
        host(result).add_(bias)
    if kind == "host":
        def on_host(r):
            return host(r).clone() if isinstance(r, torch.Tensor) else r
        return type(result)(map(on_host, result)) if isinstance(result, (tuple, list)) else on_host(result)
    return result


def _register(op, fn):
    """Registers `fn` as the pyloop kernel of aten op `op` ("add.Tensor", "mm"), with its fault (if any) around it."""
    full = "aten::" + (op if "." in op else op + ".default")
    if full not in FAULTS:  # no fault to inject: the kernel itself, as a backend registers it
        _lib.impl(op, fn, "PrivateUse1")
        return

    def kernel(*args, **kwargs):
        _fault_before(full)
        return _fault_after(full, fn(*args, **kwargs))

    _lib.impl(op, kernel, "PrivateUse1")


# Transfers and scalar reads: registered from Python, as torch-spyre registers them.
def _copy_from(src, dst, non_blocking=False):
    return _copy_bytes(dst, src)


def _copy_from_and_resize(src, dst):
    dst.resize_(src.shape)
    return _copy_from(src, dst)


_register("_copy_from", _copy_from)
_register("_copy_from_and_resize", _copy_from_and_resize)
_register("_local_scalar_dense", lambda t: host(t).item())


# Compute kernels: the CPU computes on host views; results become fresh pyloop tensors.
def _compiled(fn):
    return fn if _EAGER else torch.compile(fn, backend="aot_eager", dynamic=False)


_mm = _compiled(lambda a, b: torch.mm(a, b))
_bmm = _compiled(lambda a, b: torch.bmm(a, b))

_register("add.Tensor", lambda a, b, alpha=1: to_device(torch.add(host(a), host(b), alpha=alpha), a))
_register("mul.Tensor", lambda a, b: to_device(torch.mul(host(a), host(b)), a))
_register("mm", lambda a, b: to_device(_mm(host(a), host(b)), a))
_register("bmm", lambda a, b: to_device(_bmm(host(a), host(b)), a))
_register("_softmax", lambda a, dim, half_to_float: to_device(torch._softmax(host(a), dim, half_to_float), a))

_OWN = {"aten::_copy_from.default", "aten::_copy_from_and_resize.default", "aten::_local_scalar_dense.default",
        "aten::add.Tensor", "aten::mul.Tensor", "aten::mm.default", "aten::bmm.default", "aten::_softmax.default"}


def _cpu_kernel(op):
    """A Python kernel for an op pyloop leaves to the C++ fallback, so a fault can be injected into it."""
    name, _, overload = op[len("aten::"):].partition(".")
    packet = getattr(getattr(torch.ops.aten, name), overload)

    def run(*args, **kwargs):
        device_args = [a for a in args if isinstance(a, torch.Tensor) and a.device.type == NAME]
        result = packet(*[host(a) for a in args], **{k: host(v) for k, v in kwargs.items()})
        if isinstance(result, torch.Tensor) and device_args:
            for a in device_args:
                if result.data_ptr() == a.data_ptr() and result.shape == a.shape:
                    return a  # an in-place op returns its (now written) argument
            return to_device(result, device_args[0])
        return result

    return run


for _op in FAULTS:
    if _op not in _OWN:
        _register(_op[len("aten::"):].removesuffix(".default"), _cpu_kernel(_op))
