"""opcheck's module cases in the Python host (docs/modules.md): builds a module from its class and constructor
arguments, runs one forward on the CPU, on the device under test and in float64, and, when the C++ judge asks,
records the ATen calls of the CPU run and replays each alone on the device. The C++ side (src/exec/module_case.cpp)
builds the inputs and judges every output with the rule op cases have; this module only computes."""
import copy
import importlib
import inspect
import json
import math
import os
import time
import traceback

import _opcheck_accumulation as _accumulation

_built = None  # (build key, built modules): the invocations of one module share its build
_traced = None  # (request text, the CPU run's calls): the last trace, for write_calls

_VALUES = {"inf": math.inf, "nan": math.nan, "slice": slice, "Ellipsis": Ellipsis, "True": True, "False": False,
           "None": None}


class CaseError(Exception):
    """Ends the case with a stage and a message (the C++ side maps the stage name to its Stage)."""

    def __init__(self, stage, message):
        super().__init__(message)
        self.stage = stage


def _literal(text):
    import torch
    return eval(text, {"__builtins__": {}, "torch": torch}, _VALUES)  # a literal opcheck formatted (PyValue::repr)


def _import_class(path, what):
    allowed = ["transformers", "torch"] + [p for p in os.environ.get("OPCHECK_MODULE_PACKAGES", "").split(",") if p]
    if path.split(".")[0] not in allowed:  # the loader refuses these too; no other package is ever imported
        raise CaseError("INVALID_CASE", what + " " + path + " is not in a package module cases may import (" +
                        ", ".join(allowed) + "). Fix: add the package to OPCHECK_MODULE_PACKAGES")
    module_name, _, name = path.rpartition(".")
    try:
        module = importlib.import_module(module_name)
    except ImportError as e:
        package = module_name.split(".")[0]
        try:
            version = importlib.metadata.version(package)
            have = package + " " + version + " is installed, which has no module " + module_name
        except Exception:  # noqa: BLE001 - not installed at all
            have = package + " is not installed in this interpreter"
        raise CaseError("INVALID_CASE", what + " " + path + " cannot be imported: " + str(e) + " (" + have +
                        "). Fix: install the version that has it (scripts/requirements-modules.txt pins the one "
                        "opcheck is tested with), or name an interpreter that has it in OPCHECK_PYTHON") from e
    cls = getattr(module, name, None)
    if cls is None:
        raise CaseError("INVALID_CASE", what + " " + path + ": module " + module_name + " has no " + name +
                        ". Fix: check the class name against the installed version")
    if not isinstance(cls, type):  # a function (os.system) is no module or config: it is never called
        raise CaseError("INVALID_CASE", what + " " + path + " is a " + type(cls).__name__ + ", not a class")
    return cls


def _hidden_of(request, tensors):
    """The hidden size the forward inputs fix: the last dimension of the hidden states (the first tensor argument,
    or `hidden_states`)."""
    for name, item in request["kwargs"].items():
        if name == "hidden_states" and item[0] == "t":
            return tensors[item[1]].shape[-1]
    for item in request["args"]:
        if item[0] == "t" and tensors[item[1]].dim() >= 1 and tensors[item[1]].is_floating_point():
            return tensors[item[1]].shape[-1]
    return None


def _head_dim_of(request, tensors):
    """The head dimension the rotary embedding's cos and sin (`position_embeddings`) fix: their last dimension."""
    item = request["kwargs"].get("position_embeddings")
    if item and item[0] == "l" and item[1]:
        return tensors[item[1][0]].shape[-1]
    return None


def _config(path, request, tensors, record):
    """The config class built with the module's sizes: opcheck's `sizes:` first, then the size file, then what the
    forward inputs fix, then the class defaults; record["sizes"] says which came from where."""
    cls = _import_class(path, "config class")
    defaults = cls()
    chosen = {}
    for key, text in request["sizes"].items():
        chosen[key] = (_literal(text), "sizes")
    if request["sizes_file"]:
        with open(request["sizes_file"], encoding="utf-8") as f:
            for key, value in json.load(f).items():
                if hasattr(defaults, key) and key not in chosen:
                    chosen[key] = (value, "size file")
    hidden = _hidden_of(request, tensors)
    if hidden is not None and "hidden_size" not in chosen and hasattr(defaults, "hidden_size"):
        chosen["hidden_size"] = (int(hidden), "inputs")
    head_dim = _head_dim_of(request, tensors)
    if head_dim is not None and "head_dim" not in chosen:
        chosen["head_dim"] = (int(head_dim), "inputs")
    config = cls(**{k: v for k, (v, _) in chosen.items() if k != "head_dim"})
    if "head_dim" in chosen:
        config.head_dim = chosen["head_dim"][0]
    # Built outside from_pretrained, a config has no attention implementation: set it explicitly.
    config._attn_implementation = request["attn_implementation"]
    sizes = record.setdefault("sizes", [])
    for key in ("hidden_size", "intermediate_size", "num_attention_heads", "num_key_value_heads", "head_dim",
                "num_hidden_layers", "vocab_size"):
        if key in chosen:
            sizes.append({"name": key, "value": chosen[key][0], "source": chosen[key][1]})
        elif hasattr(config, key) and getattr(config, key) is not None:
            sizes.append({"name": key, "value": getattr(config, key), "source": "class default"})
    for key, (value, source) in chosen.items():
        if not any(s["name"] == key for s in sizes):
            sizes.append({"name": key, "value": value, "source": source})
    return config


def _ctor_arguments(request, tensors, record):
    def value(text):
        v = _literal(text)
        if isinstance(v, str) and v.startswith("<config:") and v.endswith(">"):
            return _config(v[len("<config:"):-1], request, tensors, record)
        return v
    return [value(a) for a in request["ctor_args"]], {k: value(v) for k, v in request["ctor_kwargs"].items()}


def _float_dtype(request, tensors):
    import torch
    for item in list(request["args"]) + list(request["kwargs"].values()):
        slots = [item[1]] if item[0] == "t" else item[1] if item[0] == "l" else []
        for s in slots:
            if tensors[s].is_floating_point():
                return tensors[s].dtype
    return torch.float32


def _ensure_device_module(device):
    """A PrivateUse1 device registered from C++ alone (opcheck's loopback, a device library) has no torch.<name>
    Python module, which torch's Python side asks for when it moves a module's parameters there: a minimal one is
    registered, saying what the C++ side knows (one device, available)."""
    import sys
    import types
    import torch
    name = torch.device(device).type
    if name in ("cpu", "cuda", "meta") or hasattr(torch, name):
        return
    stub = types.ModuleType("torch." + name)
    stub.is_available = lambda: True
    stub.device_count = lambda: 1
    stub.current_device = lambda: 0
    stub.set_device = lambda index: None
    stub._is_in_bad_fork = lambda: False
    stub.manual_seed_all = lambda seed: None
    stub.get_amp_supported_dtype = lambda: [torch.float16, torch.bfloat16]
    stub.is_autocast_enabled = lambda: False
    torch._register_device_module(name, stub)
    sys.modules.setdefault("torch." + name, stub)


def _build(request, tensors, device, record):
    """The module on the CPU in the case's floating dtype, seeded; its copy on the device (the same bits) and in
    float64. Counted on the meta device first: a module past the memory budget is not built."""
    import torch
    global _built
    key = json.dumps([request["build"], str(_float_dtype(request, tensors)), device])
    if _built is not None and _built[0] == key:
        record.update(_built[2])
        return _built[1]
    _built = None
    _ensure_device_module(device)
    cls = _import_class(request["module_path"], "module")
    if not issubclass(cls, torch.nn.Module):
        raise CaseError("INVALID_CASE", "module " + request["module_path"] + " is not a torch.nn.Module. Fix: name "
                        "the layer's class (a torch.nn.Module subclass)")
    args, kwargs = _ctor_arguments(request, tensors, record)
    dtype = _float_dtype(request, tensors)
    try:
        with torch.device("meta"):
            meta = cls(*args, **kwargs)
    except Exception as e:  # noqa: BLE001 - a constructor that refuses its arguments is the case's error
        raise CaseError("INVALID_CASE", "building " + request["module_path"] + " failed: " + _headline(e) +
                        ". Fix: check constructor_inputs (and the sizes) against the class") from e
    numel = sum(p.numel() for p in meta.parameters()) + sum(b.numel() for b in meta.buffers())
    del meta
    # The float32 build, the case-dtype copy, its device copy and the float64 copy, and the activations beside them.
    need = numel * (4 + 2 * torch.tensor([], dtype=dtype).element_size() + 8)
    record["parameters"] = numel
    record["bytes_needed"] = need
    budget = request["memory_budget"]
    if budget > 0 and need > budget:
        raise CaseError("SKIPPED", "not run for memory: " + request["module_path"] + " has " + _count(numel) +
                        " parameters and buffers, about " + _bytes(need) + " in its CPU, device and float64 copies, "
                        "more than the module memory budget of " + _bytes(budget) +
                        ". Fix: --module-memory-budget BYTES raises it, or give smaller sizes (a size file or sizes:)")
    torch.manual_seed(request["seed"])
    with torch.no_grad():
        cpu = cls(*args, **kwargs)
        generator = torch.Generator().manual_seed(request["seed"])
        for p in cpu.parameters():  # memory a constructor left unwritten would make every run differ
            if p.is_floating_point() and not torch.isfinite(p).all():
                p.copy_(torch.randn(p.shape, generator=generator) * 0.02)
    cpu = cpu.eval().to(dtype)
    wide = copy.deepcopy(cpu).to(torch.float64)
    on_device = copy.deepcopy(cpu).to(device)
    record["module_dtype"] = str(dtype)
    _built = (key, (cpu, on_device, wide), {k: record[k] for k in ("sizes", "parameters", "bytes_needed",
                                                                    "module_dtype") if k in record})
    return cpu, on_device, wide


def _count(n):
    return f"{n / 1e9:.2f} B" if n >= 1e9 else f"{n / 1e6:.1f} M" if n >= 1e6 else str(n)


def _bytes(n):
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n} B"


def _headline(e):
    message = str(e).strip()
    return type(e).__name__ + (": " + message.splitlines()[0] if message else "")


def _error_text(e):
    return _headline(e) + "\n\n" + "".join(traceback.format_exception(type(e), e, e.__traceback__)).rstrip()


def _not_supported(e):
    return isinstance(e, NotImplementedError) or "Could not run '" in str(e)


def to_device(t, device):
    """A copy on `device` with the tensor's strides and storage offset (its whole storage is copied)."""
    import torch
    if t.device == torch.device(device):
        return t
    if t.is_contiguous() and t.storage_offset() == 0:
        return t.to(device)
    n = t.untyped_storage().nbytes() // t.element_size()
    whole = torch.as_strided(t, (n,), (1,), 0).to(device)
    return whole.as_strided(t.shape, t.stride(), t.storage_offset())


def _arguments(request, tensors, convert):
    def one(item):
        kind, payload = item
        if kind == "t":
            return convert(tensors[payload])
        if kind == "l":
            return [convert(tensors[s]) for s in payload]
        return _literal(payload)
    return [one(a) for a in request["args"]], {k: one(v) for k, v in request["kwargs"].items()}


def _fill_dropped(module, args, kwargs, record):
    """Arguments the forward requires that the configs dropped (GraniteAttention's attention_mask) are passed as
    None, as the traced run had them."""
    try:
        params = list(inspect.signature(module.forward).parameters.values())
    except (TypeError, ValueError):
        return
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    for p in positional[len(args):]:
        if p.default is inspect.Parameter.empty and p.name not in kwargs:
            kwargs[p.name] = None
            record.setdefault("dropped", []).append(p.name)


def _leaves(out):
    """The output's tensors with their pytree paths ("" for a lone tensor, "[0]", "[1][0]", ...)."""
    import torch
    from torch.utils import _pytree as pytree
    found = []
    for path, leaf in pytree.tree_flatten_with_path(out)[0]:
        if isinstance(leaf, torch.Tensor):
            found.append((pytree.keystr(path), leaf))
    return found


def _host(t):
    import torch
    return t.detach().to("cpu") if t.device.type != "cpu" else t.detach()


def _wide(t):
    import torch
    if t.is_floating_point():
        return t.to(torch.float64)
    if t.is_complex():
        return t.to(torch.complex128)
    return t


def _forward(module, args, kwargs, compile_backend=None):
    import torch
    with torch.no_grad():
        if compile_backend:
            return torch.compile(module, backend=compile_backend)(*args, **kwargs)
        return module(*args, **kwargs)


def run(request_text, tensors):
    """One forward on the CPU, on the device and in float64: (record as JSON, CPU leaves + device leaves (on the
    host) + float64 leaves). The record's "stage" is set when the case ended before a judgement."""
    import torch
    request = json.loads(request_text)
    device = request["device"]
    record = {}
    clock = [time.perf_counter()]

    def lap(name):
        now = time.perf_counter()
        record[name] = record.get(name, 0.0) + 1000.0 * (now - clock[0])
        clock[0] = now
    try:
        cpu, on_device, wide = _build(request, tensors, device, record)
        lap("build_ms")
        args, kwargs = _arguments(request, tensors, lambda t: t)
        _fill_dropped(cpu, args, kwargs, record)
        try:
            expected = _leaves(_forward(cpu, args, kwargs))
            lap("reference_ms")
        except Exception as e:  # noqa: BLE001 - the module refused its inputs on the CPU
            raise CaseError("FAILED_REFERENCE", "the CPU run of " + request["module_path"] + " raised " +
                            _error_text(e)) from e
        wargs, wkwargs = _arguments(request, tensors, _wide)
        _fill_dropped(wide, wargs, wkwargs, {})
        try:
            golden = _leaves(_forward(wide, wargs, wkwargs))
        except Exception as e:  # noqa: BLE001 - judged by the tolerance alone, as op cases are
            golden = None
            record["golden_error"] = _headline(e)
        lap("golden_ms")
        try:
            dargs, dkwargs = _arguments(request, tensors, lambda t: to_device(t, device))
        except Exception as e:  # noqa: BLE001
            raise CaseError("FAILED_TRANSFER", "moving the inputs to " + device + " raised " + _error_text(e)) from e
        _fill_dropped(on_device, dargs, dkwargs, {})
        try:
            actual = _leaves(_forward(on_device, dargs, dkwargs, request.get("compile_backend") or None))
        except Exception as e:  # noqa: BLE001 - the device's error is the verdict
            stage = "NOT_SUPPORTED" if _not_supported(e) else "FAILED_RUNTIME"
            if request.get("compile_backend") and type(e).__module__.startswith("torch._dynamo"):
                stage = "FAILED_COMPILE"
            raise CaseError(stage, "the device run of " + request["module_path"] + " raised " + _error_text(e)) from e
        lap("device_ms")
        if [p for p, _ in actual] != [p for p, _ in expected]:
            raise CaseError("INCORRECT_RESULT", "the device's outputs are " + str([p for p, _ in actual]) +
                            ", the CPU's " + str([p for p, _ in expected]))
        record["leaves"] = [p for p, _ in expected]
        record["golden"] = golden is not None and [p for p, _ in golden] == record["leaves"]
        out = [t.detach() for _, t in expected] + [_host(t) for _, t in actual]
        if record["golden"]:
            out += [t.detach() for _, t in golden]
        return json.dumps(record), out
    except CaseError as e:
        record["stage"] = e.stage
        record["message"] = str(e)
        return json.dumps(record), []
    except Exception as e:  # noqa: BLE001 - opcheck's own failure, said as such
        record["stage"] = "CRASHED"
        record["message"] = "opcheck's module host failed: " + _error_text(e)
        return json.dumps(record), []


class _Recorder:
    """Every ATen call of a forward, in order: the op, its arguments (copied before the call: in-place ops change
    them) and its outputs."""

    def __init__(self, keep_inputs):
        from torch.utils._python_dispatch import TorchDispatchMode
        from torch.utils import _pytree as pytree
        import torch
        recorder = self
        self.calls = []

        def copied(x):
            return x.detach().clone() if isinstance(x, torch.Tensor) else x

        class Mode(TorchDispatchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                kwargs = kwargs or {}
                saved = pytree.tree_map(copied, (args, kwargs)) if keep_inputs else None
                out = func(*args, **kwargs)
                recorder.calls.append((func, saved, pytree.tree_map(lambda x: _host(x).clone()
                                                                    if isinstance(x, torch.Tensor) else x, out)))
                return out

        self.mode = Mode()


def _op_name(func):
    name = func.name()
    return name[:-len(".default")] if name.endswith(".default") else name


def _on_device(x, device):
    import torch
    if isinstance(x, torch.Tensor):
        return to_device(x, device)
    if isinstance(x, torch.device) and x.type == "cpu":
        return torch.device(device)
    return x


def _to_host_value(x):
    import torch
    if isinstance(x, torch.Tensor):
        return _host(x).clone()
    if isinstance(x, torch.device) and x.type != "cpu":
        return torch.device("cpu")
    return x


def _tensor_leaves(out):
    import torch
    from torch.utils import _pytree as pytree
    return [t for t in pytree.tree_leaves(out) if isinstance(t, torch.Tensor)]


def _reported(what):
    """A trace step whose failure is a record's "error" (the case's own CaseError, else opcheck's, with where)."""
    def wrap(step):
        def run(request_text, tensors):
            try:
                return step(request_text, tensors)
            except CaseError as e:
                return json.dumps({"error": str(e)}), []
            except Exception as e:  # noqa: BLE001 - opcheck's own failure, said as such
                return json.dumps({"error": "opcheck's module host failed while " + what + ": " + _error_text(e)}), []
        run.__doc__ = step.__doc__
        return run
    return wrap


@_reported("tracing")
def trace(request_text, tensors):
    """The failing module's ATen calls: recorded in its CPU run with their inputs, each replayed alone on the device
    with exactly those inputs and in float64; and the device's and float64 runs of the whole module recorded too, to
    find where the device's run first leaves the float64 bound. Returns (record, tensors): per call, its CPU outputs,
    its device outputs alone, its float64 outputs alone, then (when the three runs' op sequences agree up to it)
    the device run's and the float64 run's outputs of that call."""
    import torch
    from torch.utils import _pytree as pytree
    request = json.loads(request_text)
    device = request["device"]
    record = {"calls": []}
    out = []
    cpu, on_device, wide = _build(request, tensors, device, {})
    args, kwargs = _arguments(request, tensors, lambda t: t)
    _fill_dropped(cpu, args, kwargs, {})
    cpu_rec = _Recorder(keep_inputs=True)
    with cpu_rec.mode:
        _forward(cpu, args, kwargs)
    global _traced
    _traced = (request_text, cpu_rec.calls)
    dev_rec = _Recorder(keep_inputs=False)
    dargs, dkwargs = _arguments(request, tensors, lambda t: to_device(t, device))
    _fill_dropped(on_device, dargs, dkwargs, {})
    try:
        with dev_rec.mode:
            _forward(on_device, dargs, dkwargs)
    except Exception as e:  # noqa: BLE001 - the calls before it still say where the run went wrong
        record["device_run_error"] = _headline(e)
    wide_rec = _Recorder(keep_inputs=False)
    wargs, wkwargs = _arguments(request, tensors, _wide)
    _fill_dropped(wide, wargs, wkwargs, {})
    try:
        with wide_rec.mode:
            _forward(wide, wargs, wkwargs)
    except Exception as e:  # noqa: BLE001
        record["golden_run_error"] = _headline(e)
    aligned = True
    for i, (func, saved, expected) in enumerate(cpu_rec.calls):
        call = {"op": _op_name(func)}
        exp = [t.detach() for t in _tensor_leaves(expected)]
        call["outputs"] = len(exp)
        call["signature"] = _signature(func, saved)
        dargs_i, dkwargs_i = pytree.tree_map(lambda x: _on_device(x, device), saved)
        try:
            with torch.no_grad():
                alone = [_host(t) for t in _tensor_leaves(func(*dargs_i, **dkwargs_i))]
        except Exception as e:  # noqa: BLE001 - the device refused the call alone
            call["alone_error"] = _headline(e)
            call["alone_not_supported"] = _not_supported(e)
            alone = []
        # The float64 result only where the judge needs it: a device output with the CPU's very bits passes.
        golden = _golden(func, saved) if alone and not _bitwise_same(alone, exp) else []
        aligned = aligned and i < len(dev_rec.calls) and i < len(wide_rec.calls) and \
            dev_rec.calls[i][0] is func and wide_rec.calls[i][0] is func
        chain = [t for t in _tensor_leaves(dev_rec.calls[i][2])] if aligned else []
        chain_golden = [t for t in _tensor_leaves(wide_rec.calls[i][2])] if aligned else []
        if chain and _bitwise_same(chain, exp):
            chain, chain_golden = [], []
        call["alone"] = len(alone) == len(exp)
        call["golden"] = len(golden) == len(exp)
        call["chain"] = bool(chain) and len(chain) == len(exp) and len(chain_golden) == len(exp)
        bound = _accumulation.runs(func, saved, len(exp), request) if call["golden"] or call["chain"] else None
        if bound is not None:
            call["accumulation"], call["accumulation_rule"], call["input_numel"] = True, bound[0], bound[1]
        out += exp
        if call["alone"]:
            out += alone
        if call["golden"]:
            out += golden
        if call["chain"]:
            out += chain + chain_golden
        if bound is not None:
            out += bound[2]
        record["calls"].append(call)
    return json.dumps(record), out


def _bitwise_same(a, b):
    """Whether two lists of tensors hold the same shapes, dtypes and bits."""
    import torch
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        if x.shape != y.shape or x.dtype != y.dtype or x.layout != torch.strided or y.layout != torch.strided:
            return False
        if not torch.equal(x.contiguous().reshape(-1).view(torch.uint8), y.contiguous().reshape(-1).view(torch.uint8)):
            return False
    return True


def _golden(func, saved):
    """The call's outputs in float64 (complex128) on the CPU, or [] where it cannot be made so."""
    import torch
    from torch.utils import _pytree as pytree
    wargs_i, wkwargs_i = pytree.tree_map(lambda x: _wide(x) if isinstance(x, torch.Tensor) else x, saved)
    try:
        with torch.no_grad():
            return [t.detach() for t in _tensor_leaves(func(*wargs_i, **wkwargs_i))]
    except Exception:  # noqa: BLE001 - a call float64 cannot make (an integer op) has no float64 result
        return []


@_reported("tracing the device's calls")
def trace_device(request_text, tensors):
    """The device's own calls (its kernels may take another path than the CPU's, as sdpa does), recorded in its run
    of the module, each rerun on the CPU with the very inputs the device got: asked for when every CPU call passes
    alone on the device. Only calls whose CPU rerun differs in any bit are returned, with their float64 result."""
    import torch
    from torch.utils import _pytree as pytree
    request = json.loads(request_text)
    device = request["device"]
    record = {"device_calls": []}
    out = []
    _, on_device, _ = _build(request, tensors, device, {})
    dev_rec = _Recorder(keep_inputs=True)
    dargs, dkwargs = _arguments(request, tensors, lambda t: to_device(t, device))
    _fill_dropped(on_device, dargs, dkwargs, {})
    try:
        with dev_rec.mode:
            _forward(on_device, dargs, dkwargs)
    except Exception as e:  # noqa: BLE001 - the calls before it are still judged
        record["device_run_error"] = _headline(e)
    for func, saved, produced in dev_rec.calls:
        got = [t for t in _tensor_leaves(produced)]
        call = {"op": _op_name(func), "outputs": len(got), "signature": _signature(func, saved)}
        host = pytree.tree_map(_to_host_value, saved)
        try:
            with torch.no_grad():
                replay = [t.detach() for t in _tensor_leaves(func(*host[0], **host[1]))]
        except Exception as e:  # noqa: BLE001 - a device-only op, or one the CPU refuses: not judged
            call["replay_error"] = _headline(e)
            replay = []
        call["replay"] = len(replay) == len(got) and not _bitwise_same(replay, got)
        if call["replay"]:
            golden = _golden(func, host)
            call["golden"] = len(golden) == len(got)
            bound = _accumulation.runs(func, host, len(got), request) if call["golden"] else None
            if bound is not None:
                call["accumulation"], call["accumulation_rule"], call["input_numel"] = True, bound[0], bound[1]
            out += replay + got + (golden if call["golden"] else []) + (bound[2] if bound is not None else [])
        record["device_calls"].append(call)
    return json.dumps(record), out


def _signature(func, saved):
    """The call as op(dtype[dims], value, ...), as op cases are printed."""
    import torch
    short = {torch.float16: "fp16", torch.bfloat16: "bf16", torch.float32: "fp32", torch.float64: "fp64",
             torch.int64: "i64", torch.int32: "i32", torch.bool: "bool", torch.int8: "i8", torch.uint8: "u8"}

    def one(x):
        if isinstance(x, torch.Tensor):
            return short.get(x.dtype, str(x.dtype)) + "[" + ", ".join(str(d) for d in x.shape) + "]"
        if isinstance(x, (list, tuple)):
            return "[" + ", ".join(one(v) for v in x) + "]"
        return repr(x)
    args, kwargs = saved
    parts = [one(a) for a in args] + [k + "=" + one(v) for k, v in kwargs.items()]
    return _op_name(func) + "(" + ", ".join(parts) + ")"


# ---- traced calls as op cases ----------------------------------------------------------------------------------

def _yaml_str(text):
    return json.dumps(text)  # a JSON string is a YAML string, with every control character escaped


def _yaml_float(x):
    if math.isnan(x):
        return '"nan"'
    if math.isinf(x):
        return '"inf"' if x > 0 else '"-inf"'
    r = repr(x)
    return r if ("." in r or "e" in r or "n" in r) else r + ".0"


def _value_yaml(v):
    import torch
    if v is None:
        return "value: null"
    if isinstance(v, bool):
        return "value: " + ("true" if v else "false")
    if isinstance(v, int):
        return "value: %d" % v
    if isinstance(v, float):
        return "value: " + _yaml_float(v)
    if isinstance(v, torch.dtype):
        return "value: " + str(v)
    if isinstance(v, torch.device):
        return "value: privateuseone"  # the call's device: the device under test
    if isinstance(v, (torch.memory_format, torch.layout)):
        return "value: " + str(v).replace("torch.", "")
    if isinstance(v, str):
        return "py: " + _yaml_str(repr(v))
    if isinstance(v, (list, tuple)) and all(isinstance(x, (int, float, bool)) for x in v):
        return "py: " + _yaml_str(repr(list(v) if isinstance(v, list) else tuple(v)))
    raise ValueError("an argument opcheck's manifests cannot hold: " + type(v).__name__)


def _tensor_yaml(t, key, file_name, saved):
    import torch
    if t.layout != torch.strided or t.is_conj() or t.is_neg():
        raise ValueError("a tensor opcheck's manifests cannot hold")
    saved[key] = t.detach().contiguous()
    fields = ["shape: [%s]" % ", ".join(str(d) for d in t.shape), "dtype: " + str(t.dtype).replace("torch.", ""),
              "init: file", "init_args: {path: %s, key: %s}" % (_yaml_str(file_name), _yaml_str(key))]
    if not (t.is_contiguous() and t.storage_offset() == 0):
        fields.append("stride: [%s]" % ", ".join(str(s) for s in t.stride()))
        if t.storage_offset():
            fields.append("storage_offset: %d" % t.storage_offset())
    return "{" + ", ".join(fields) + "}"


def _call_lines(index, func, saved_args, name, file_name, saved):
    import torch
    args, kwargs = saved_args
    lines = ["  - name: " + _yaml_str(name), "    op: " + _op_name(func), "    inputs:"]
    for a, v in enumerate(args):
        key = "%d.%d" % (index, a)
        if isinstance(v, torch.Tensor):
            lines.append("      - tensor: " + _tensor_yaml(v, key, file_name, saved))
        elif isinstance(v, (list, tuple)) and v and all(isinstance(x, torch.Tensor) for x in v):
            lines.append("      - tensor_list:")
            lines += ["          - " + _tensor_yaml(x, "%s.%d" % (key, j), file_name, saved) for j, x in enumerate(v)]
        else:
            lines.append("      - " + _value_yaml(v))
    kw = []
    for k, v in kwargs.items():
        if isinstance(v, torch.Tensor):
            lines += ["      - keyword: " + k, "        tensor: " + _tensor_yaml(v, "%d.%s" % (index, k), file_name, saved)]
        else:
            kw.append("      %s: %s" % (k, _value_yaml(v).split(": ", 1)[1]))
    if len(lines) == 3:
        lines[-1] = "    inputs: []"
    if kw:
        lines += ["    kwmap:"] + kw
    return lines


def _calls_manifest(calls, indices, request, file_name, saved, why):
    """The YAML lines of the calls `indices` of a recording, each named after the module case and its call number,
    their tensors into `saved` (to be written as `file_name`); the names written."""
    lines, written = [], []
    for i in indices:
        func, saved_args, _ = calls[i]
        name = request["name"] + ".call%d" % (i + 1)
        try:
            block = _call_lines(i, func, saved_args, name, file_name, saved)
        except ValueError as e:
            lines.append("  # call %d (%s) is not written: %s" % (i + 1, _op_name(func), e))
            continue
        block.insert(2, "    description: " + _yaml_str("call %d of %s's CPU run (%s)" % (i + 1, request["case_id"], why)))
        lines += block
        written.append(name)
    return lines, written


def _write_manifest(folder, stem, comment, model, lines, saved):
    from safetensors.torch import save_file
    save_file(saved, os.path.join(folder, stem + ".safetensors"))
    path = os.path.join(folder, stem + ".yaml")
    with open(path, "w", encoding="utf-8") as f:
        f.write(comment + "model: " + model + "\ndefaults: {seed: 0}\ncases:\n" + "\n".join(lines) + "\n")
    return path


def write_calls(request_text, tensors):
    """The calls `request["calls"]` (indices) of the last trace, as a one-file op manifest with their very inputs
    (`request["dir"]`/calls.yaml and calls.safetensors): each reruns, shrinks and sweeps as an op case."""
    request = json.loads(request_text)
    if _traced is None:
        return json.dumps({"error": "no trace to write"}), []
    folder = request["dir"]
    os.makedirs(folder, exist_ok=True)
    saved = {}
    lines, written = _calls_manifest(_traced[1], request["calls"], request, "calls.safetensors", saved,
                                     "traced by opcheck, docs/modules.md")
    comment = ("# Written by opcheck: the ATen calls inside module case %s that are wrong on the device with right "
               "inputs,\n# each with the inputs it got in the module's CPU run. `opcheck run --manifests %s` reruns "
               "them.\n" % (request["case_id"], folder))
    _write_manifest(folder, "calls", comment, request["model"], lines, saved)
    return json.dumps({"written": written}), []


def _claim(folder, signature):
    """True for the first process of the run to claim this call (an O_EXCL marker file): each call once."""
    import hashlib
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, hashlib.sha256(signature.encode()).hexdigest()[:32])
    try:
        os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644))
        return True
    except FileExistsError:
        return False


def _layout_signature(func, saved):
    """The call with every tensor's strides and offset too: two calls alike here are one op case."""
    import torch
    from torch.utils import _pytree as pytree
    layouts = [str((tuple(t.stride()), t.storage_offset())) for t in pytree.tree_leaves(saved)
               if isinstance(t, torch.Tensor)]
    return _signature(func, saved) + " " + " ".join(layouts)


def record_ops(request_text, tensors):
    """--module-ops: the module's CPU-run ATen calls, each distinct call (op, dtypes, shapes, strides, values) once
    across the run, written as an op manifest with the inputs the call got (OPS_DIR/<case>.yaml)."""
    request = json.loads(request_text)
    try:
        cpu, _, _ = _build(request, tensors, request["device"], {})
        args, kwargs = _arguments(request, tensors, lambda t: t)
        _fill_dropped(cpu, args, kwargs, {})
        rec = _Recorder(keep_inputs=True)
        with rec.mode:
            _forward(cpu, args, kwargs)
    except Exception as e:  # noqa: BLE001 - the verdict says why the module did not run
        return json.dumps({"error": _headline(e)}), []
    folder = request["ops_dir"]
    fresh = [i for i, (func, saved_args, _) in enumerate(rec.calls)
             if _claim(os.path.join(folder, ".calls"), _layout_signature(func, saved_args))]
    saved = {}
    lines, written = _calls_manifest(rec.calls, fresh, request, request["file_stem"] + ".safetensors", saved,
                                     "opcheck run --module-ops")
    out = {"calls": len(rec.calls), "written": len(written)}
    if written:
        comment = ("# Written by opcheck run --module-ops: the ATen calls of module case %s's CPU run that no\n"
                   "# earlier case of the run wrote, each with the inputs it got.\n" % request["case_id"])
        out["file"] = _write_manifest(folder, request["file_stem"], comment, request["model"], lines, saved)
    return json.dumps(out), []
