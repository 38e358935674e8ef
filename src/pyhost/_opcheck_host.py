"""opcheck's side of its Python device host: libopcheck_pyhost.so imports this module in each worker that hosts an
interpreter (--device-import, --compile-backend), calls start() once, then call() for every compiled device run."""
import importlib
import importlib.metadata
import json
import math
import operator
import os
import sys
import traceback

_backend = None  # torch.compile backend of device runs; None = eager
_compiled = None  # the current case's compiled module: every run of one case reuses it, no other case does


def _version_of(name, module):
    version = getattr(module, "__version__", None)
    if version:
        return str(version)
    try:
        return importlib.metadata.version(name.split(".")[0])
    except importlib.metadata.PackageNotFoundError:
        return ""


def start(imports, compile_backend, cache_dir):
    """Imports torch and the device modules; returns facts as JSON, or raises."""
    global _backend
    if cache_dir and not os.environ.get("TORCHINDUCTOR_CACHE_DIR"):
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = cache_dir
    import torch
    facts = {
        "python_version": sys.version.split()[0],
        "torch_version": torch.__version__,
        "torch_path": os.path.dirname(os.path.realpath(torch.__file__)),
        "modules": {},
    }
    for name in imports:
        facts["modules"][name] = _version_of(name, importlib.import_module(name))
    _backend = compile_backend or None
    facts["privateuse1_name"] = torch._C._get_privateuse1_backend_name()
    return json.dumps(facts)


# Tensor methods whose Python form takes sizes as varargs (x.reshape(2, 3)), which manifests name torch.X.
_VARARGS_METHODS = {"reshape", "view", "permute", "expand", "repeat", "tile", "flip"}


def _callable(op):
    """The Python callable of an op named as opcheck's canonical_op spells it (common/op_names.h): ns::name.overload
    is torch.ops.ns.name.overload; torch.X is the function, or where torch has none (or only a dtype, or a function
    whose sizes are not varargs) the Tensor method, else the Python operator (torch.getitem, torch.floordiv). The
    aliases were folded in C++; what is left is where Python keeps each name."""
    import torch
    if "::" in op:
        namespace, _, rest = op.partition("::")
        base, _, overload = rest.partition(".")
        return getattr(getattr(getattr(torch.ops, namespace), base), overload or "default")
    parts = op.split(".")
    if len(parts) == 2 and parts[0] == "torch":
        name = parts[1]
        function = getattr(torch, name, None)
        if name in _VARARGS_METHODS or not callable(function):
            if hasattr(torch.Tensor, name):
                return getattr(torch.Tensor, name)
            if hasattr(operator, name):
                return getattr(operator, name)
    if len(parts) == 4 and parts[:3] == ["torch", "nn", "functional"] and not hasattr(torch.nn.functional, parts[3]):
        return getattr(torch._C._nn, parts[3])  # the C binding torch._C._nn.X that F does not re-export
    obj = importlib.import_module(parts[0])
    for part in parts[1:]:
        obj = getattr(obj, part)
    return obj


def _module(fn, kwargs):
    import torch

    class OpCall(torch.nn.Module):
        """The op call as a module, as torch-spyre's runner compiles it."""

        def forward(self, *args):
            return fn(*args, **kwargs)

    return OpCall()


_VALUES = {"inf": math.inf, "nan": math.nan, "slice": slice, "Ellipsis": Ellipsis, "True": True, "False": False,
           "None": None}


def _decode(item, device):
    """An argument; a device it names (cuda:0 in a manifest) is the device under test, as in eager runs."""
    kind, payload = item
    if kind != "v":
        return payload
    import torch
    value = eval(payload, {"__builtins__": {}, "torch": torch}, _VALUES)  # a literal opcheck formatted
    if isinstance(value, (str, torch.device)):
        try:
            named = torch.device(value)
        except (RuntimeError, ValueError, TypeError):
            return value
        return value if named.type == "cpu" else torch.device(device)
    return value


def _error_text(e):
    return "".join(traceback.format_exception(type(e), e, e.__traceback__)).rstrip()


_configured = False


def _configure_compile():
    global _configured
    if not _configured:
        import torch._inductor.config
        # One compile thread: the workers are the parallelism (-j), and inductor's pool would start sys.executable.
        torch._inductor.config.compile_threads = 1
        _configured = True


def call(op, args, kwargs, device):
    """One device run: ("ok", output) | ("compile", message) | ("error", type name, message with traceback)."""
    global _compiled
    import torch
    from torch._dynamo import exc
    args = [_decode(a, device) for a in args]
    kwargs = {k: _decode(v, device) for k, v in kwargs.items()}
    try:
        if _compiled is None:
            _configure_compile()
            _compiled = torch.compile(_module(_callable(op), kwargs), backend=_backend)
        with torch.no_grad():
            return ("ok", _compiled(*args))
    except Exception as e:  # noqa: BLE001 - every error is a result
        if isinstance(e, exc.TorchRuntimeError) and e.__cause__ is not None:
            e = e.__cause__  # the op itself raised while being traced: its own error, as eager would raise it
        elif isinstance(e, exc.TorchDynamoException):
            # Tracing, an unknown backend, or the backend's code generation: the compiled code never ran.
            return ("compile", _error_text(e))
        return ("error", type(e).__name__, _error_text(e))


def end_case():
    global _compiled
    _compiled = None
    if _backend is not None:
        import torch._dynamo
        torch._dynamo.reset()
