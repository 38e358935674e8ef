"""opcheck's side of its Python device host: libopcheck_pyhost.so imports this module in each worker that hosts an
interpreter (--device-import, --compile-backend), calls start() once, then call() for every compiled device run."""
import faulthandler
import importlib
import importlib.metadata
import json
import math
import operator
import os
import signal
import sys
import traceback
import warnings

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


def _torch_location():
    """torch's version and folder without importing it (its import may be what failed)."""
    import importlib.util
    try:
        spec = importlib.util.find_spec("torch")
    except (ImportError, ValueError):
        spec = None
    if spec is None or not spec.submodule_search_locations:
        return "", ""
    folder = os.path.realpath(list(spec.submodule_search_locations)[0])
    try:
        with open(os.path.join(folder, "version.py"), encoding="utf-8") as f:
            for line in f:
                if line.startswith("__version__"):
                    return line.split("=", 1)[1].strip().strip("'\""), folder
    except OSError:
        pass
    return "", folder


def _start_error(e, step):
    """Why the device could not start, its first real error apart from the context a person needs to act on it."""
    version, folder = _torch_location()
    whole = "".join(traceback.format_exception(type(e), e, e.__traceback__)).rstrip()
    autoload = step == "import torch" and str(e).startswith("Failed to load the backend extension")
    if autoload:  # torch's message names the entry point: "Failed to load the backend extension: NAME. You can ..."
        step += " (its autoload of the torch.backends entry point '" + str(e).split(": ", 1)[1].split(". ")[0] + "')"
    return {"first": _headline(_root_cause(e)), "step": step, "autoload": autoload, "traceback": whole,
            "python": sys.executable, "python_version": sys.version.split()[0], "torch_version": version,
            "torch_path": folder}


def _inductor_codegen(device_type):
    """Whether inductor has a code generator for the device type (its registry, filled for the built-in devices on
    first use; a backend registers its own with register_backend_for_device)."""
    try:
        from torch._inductor.codegen.common import get_scheduling_for_device, init_backend_registration
        init_backend_registration()
        return get_scheduling_for_device(device_type) is not None
    except Exception:  # noqa: BLE001 - a registry that cannot be asked is no finding: let the compile say
        return True


def _entry_points_of(imports):
    """Per imported module, the torch.backends entry points its installed distribution declares ("name = value
    (distribution version)"): what renames and registers the device, as torch's autoload would call it."""
    try:
        from importlib.metadata import distribution, packages_distributions
        owners = packages_distributions()
    except Exception:  # noqa: BLE001 - an environment that cannot say is no finding
        return {}
    found = {}
    for name in imports:
        top = name.partition(":")[0].split(".")[0]
        for dist_name in owners.get(top, []):
            try:
                dist = distribution(dist_name)
            except Exception:  # noqa: BLE001
                continue
            for e in dist.entry_points:
                if e.group == "torch.backends":
                    found.setdefault(name, []).append(f"{e.name} = {e.value} ({dist.metadata['Name']} {dist.version})")
    return found


def _autoloaded_entry_points():
    """The torch.backends entry points torch's autoload called on `import torch`, as {"module:attr": "name = value"}
    (none when TORCH_DEVICE_BACKEND_AUTOLOAD switches it off)."""
    if os.environ.get("TORCH_DEVICE_BACKEND_AUTOLOAD", "1") != "1":
        return {}
    try:
        return {e.value: f"{e.name} = {e.value}" for e in importlib.metadata.entry_points(group="torch.backends")}
    except Exception:  # noqa: BLE001 - an environment that cannot say is no finding
        return {}


class UnknownBackend(Exception):
    """A --compile-backend (or TEST_COMPILE_BACKEND) that names no torch.compile backend."""


def _check_backend(name):
    """Raises UnknownBackend unless torch.compile knows `name`: a built-in backend, one the imports registered, or a
    torch_dynamo_backends entry point (torch._dynamo's own lookup, as torch.compile(backend=name) does it)."""
    try:
        from torch._dynamo.backends.registry import list_backends, lookup_backend
    except ImportError:
        return  # a torch without dynamo: its version check, or the compile itself, says what is wrong
    try:
        lookup_backend(name)
    except Exception:  # noqa: BLE001 - InvalidBackend, or whatever the lookup raised for the name
        known = ", ".join(sorted(list_backends(exclude_tags=())))
        raise UnknownBackend("--compile-backend %r is not a torch.compile backend (this torch knows: %s). Fix: name "
                             "one of them or a backend a --device-import module registers (--compile-backend, else "
                             "TEST_COMPILE_BACKEND), or none for eager calls" % (name, known)) from None


def _say_step(step):
    """Tells the process waiting for this start what it is doing (OPCHECK_START_STEP_FD): an import that never ends is
    named in the error that stops it."""
    fd = os.environ.get("OPCHECK_START_STEP_FD")
    if fd:
        try:
            os.write(int(fd), ("step " + step + "\n").encode())
        except (OSError, ValueError):
            pass


def start(imports, compile_backend, cache_dir):
    """Imports torch (which loads the torch.backends entry points) and the device modules; returns facts as JSON, or
    {"error": ...} with the first real error apart (_start_error)."""
    global _backend
    # A worker that crashes or hangs leaves every thread's Python stack in its captured output, the file the parent
    # reads into the case's record: on a fatal signal, and on SIGUSR2, which the parent sends a worker that overran
    # its timeout before it kills it.
    faulthandler.enable(all_threads=True)
    faulthandler.register(signal.SIGUSR2, all_threads=True)
    if cache_dir and not os.environ.get("TORCHINDUCTOR_CACHE_DIR"):
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = cache_dir
    # torch warns on import where NumPy is not installed; opcheck needs no NumPy, so that is no news to its reader.
    warnings.filterwarnings("ignore", message="Failed to initialize NumPy", category=UserWarning)
    step = "import torch"
    try:
        _say_step(step)
        import torch
        facts = {
            "python_version": sys.version.split()[0],
            "torch_version": torch.__version__,
            "torch_path": os.path.dirname(os.path.realpath(torch.__file__)),
            "modules": {},
        }
        autoloaded = _autoloaded_entry_points()
        for name in imports:
            # MODULE, or MODULE:FUNCTION: the function is called after the import, as torch calls an entry point's.
            module_name, _, function = name.partition(":")
            step = "import " + module_name
            _say_step(step)
            module = importlib.import_module(module_name)
            if function and name in autoloaded:
                # torch's autoload called it already on `import torch`: a second call would register the backend
                # twice ("... has already been registered").
                facts.setdefault("autoloaded_imports", {})[name] = autoloaded[name]
            elif function:
                step = name + "()"
                _say_step(step)
                getattr(module, function)()
            facts["modules"][name] = _version_of(module_name, module)
    except Exception as e:  # noqa: BLE001 - every failure to start is reported, first error first
        return json.dumps({"error": _start_error(e, step)})
    if compile_backend:
        step = "torch._dynamo.lookup_backend(%r)" % compile_backend
        try:
            _check_backend(compile_backend)
        except Exception as e:  # noqa: BLE001 - an unknown backend is the run's usage error, before any case
            return json.dumps({"error": _start_error(e, step)})
    _backend = compile_backend or None
    facts["privateuse1_name"] = torch._C._get_privateuse1_backend_name()
    if facts["privateuse1_name"] == "privateuseone":
        facts["module_entry_points"] = _entry_points_of(imports)
    if compile_backend == "inductor":
        facts["privateuse1_inductor_codegen"] = _inductor_codegen(facts["privateuse1_name"])
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


def _root_cause(e):
    """The error the chain started from: a compile error wraps the backend's own error (inner_exception), which
    wraps what raised it (__cause__, else the context it was raised in)."""
    seen = set()
    while id(e) not in seen:
        seen.add(id(e))
        inner = getattr(e, "inner_exception", None) or e.__cause__
        if inner is None and not e.__suppress_context__:
            inner = e.__context__
        if not isinstance(inner, BaseException):
            return e
        e = inner
    return e


def _headline(e):
    """`Type: first line of the message`, as the last line of a traceback says it."""
    message = str(e).strip()
    return type(e).__name__ + (": " + message.splitlines()[0] if message else "")


def _error_text(e, shown_type=None):
    """The real error first (the root of the chain; its type unless the report names it as `shown_type` already),
    then the whole traceback: a report cut after a few lines still says what went wrong."""
    whole = "".join(traceback.format_exception(type(e), e, e.__traceback__)).rstrip()
    root = _root_cause(e)
    first = _headline(root)
    if type(root).__name__ == shown_type and first != shown_type:
        first = first[len(shown_type) + 2:]
    return first + "\n\n" + whole


def _not_supported(e):
    """Whether the chain holds a missing kernel: a NotImplementedError, or the dispatcher's "Could not run"."""
    seen = set()
    while isinstance(e, BaseException) and id(e) not in seen:
        seen.add(id(e))
        if isinstance(e, NotImplementedError) or "Could not run '" in str(e):
            return True
        e = getattr(e, "inner_exception", None) or e.__cause__ or e.__context__
    return False


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
            # A kernel the device lacks, met anywhere while compiling, is a missing kernel, not a compiler failure.
            if _not_supported(e):
                return ("error", "NotImplementedError", _error_text(e, "NotImplementedError"))
            # Tracing, an unknown backend, or the backend's code generation: the compiled code never ran.
            return ("compile", _error_text(e))
        return ("error", type(e).__name__, _error_text(e, type(e).__name__))


def end_case():
    global _compiled
    _compiled = None
    if _backend is not None:
        import torch._dynamo
        torch._dynamo.reset()
