#!/usr/bin/env python3
"""Open scanner: run a PyTorch model's forward once and write every torch call it makes as an opcheck manifest.

    python3 scripts/scan_model.py gpt_oss -o manifests/gpt_oss.yaml
    python3 scripts/scan_model.py --all -o manifests/          # every model in scripts/models/
    python3 scripts/scan_model.py path/to/my_model.py          # to stdout

A model is a Python file (scripts/models/<name>.py holds the shipped ones) defining
    MODEL         the manifest's model name
    DESCRIPTION   one line for the manifest's `description`
    DTYPE         the dtype the model runs in (the manifest's default dtype)
    SEED          the manifest's default seed (optional, 123)
    build()       -> torch.nn.Module, weights initialized
    inputs()      -> tuple of forward arguments
Submodule classes may carry `opcheck_marks = ("attention", ...)`: calls made inside them get those marks.

The scanner records each call through a torch function mode (torch.overrides.TorchFunctionMode): op name as
real manifests spell it (torch.nn.functional.linear, torch.getitem, torch.Tensor.view, torch.mul, ...), every
tensor's shape/stride/storage_offset/dtype, the other positional arguments as `value`/`py` inputs, keyword
arguments as `kwmap`, and the calling source line as `description`. Identical calls are written once. Integer
tensors that index another tensor get `randint` below the indexed size; other integer tensors draw from the range
the model actually used; matrix-product operands get xavier values.
"""
import os

# Must precede the first torch import: a oneDNN that uses AMX for bf16 matmuls without asking Linux for it kills
# the process on such CPUs; capping the ISA keeps bf16 models runnable there.
os.environ.setdefault("ONEDNN_MAX_CPU_ISA", "AVX512_CORE_BF16")

import argparse  # noqa: E402
import importlib.util  # noqa: E402
import inspect  # noqa: E402
import linecache  # noqa: E402
import math  # noqa: E402
import pathlib  # noqa: E402
import sys  # noqa: E402

import torch  # noqa: E402
from torch.overrides import TorchFunctionMode, handle_torch_function, has_torch_function  # noqa: E402

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent
MODELS_DIR = HERE / "models"
TORCH_DIR = pathlib.Path(torch.__file__).resolve().parent

# ---- How calls are named ---------------------------------------------------------------------------------------

# Tensor operators -> the name real manifests use (operator.X as torch.X; reflected forms where they differ).
OPERATOR_NAMES = {
    "__getitem__": "torch.getitem", "__matmul__": "torch.matmul", "__rmatmul__": "torch.__rmatmul__",
    "__add__": "torch.add", "__radd__": "torch.add", "__iadd__": "torch.iadd",
    "__sub__": "torch.sub", "__rsub__": "torch.__rsub__", "__isub__": "torch.isub",
    "__mul__": "torch.mul", "__rmul__": "torch.mul", "__imul__": "torch.imul",
    "__truediv__": "torch.truediv", "__div__": "torch.truediv", "__rtruediv__": "torch.__rtruediv__",
    "__rdiv__": "torch.__rtruediv__", "__itruediv__": "torch.itruediv",
    "__floordiv__": "torch.floordiv", "__rfloordiv__": "torch.__rfloordiv__",
    "__mod__": "torch.mod", "__pow__": "torch.pow", "__rpow__": "torch.__rpow__",
    "__and__": "torch.and_", "__or__": "torch.or_", "__xor__": "torch.xor", "__invert__": "torch.invert",
    "__neg__": "torch.neg", "__abs__": "torch.abs",
    "__eq__": "torch.__eq__", "__ne__": "torch.ne", "__lt__": "torch.lt", "__le__": "torch.le",
    "__gt__": "torch.gt", "__ge__": "torch.ge",
}
# Tensor methods real manifests spell torch.Tensor.X (the rest are torch.X).
TENSOR_QUALIFIED = {"view", "expand", "contiguous", "copy_"}
# Calls that never produce an op worth checking (attribute reads, logging).
IGNORED = {"__get__", "__set__", "_log_api_usage_once", "__format__", "__repr__", "__len__", "__iter__"}

# Integer tensors that index another tensor: op -> (index argument, indexed argument, dim). dim is an int, or
# ("arg", k, "kwname") when argument k (or keyword kwname) holds it, or "classes" for loss targets (dim 1).
INDEX_RULES = {
    "torch.nn.functional.embedding": [(0, 1, 0)],
    "torch.embedding": [(1, 0, 0)],
    "torch.getitem": [(1, 0, 0)],
    "torch.gather": [(2, 0, ("arg", 1, "dim"))],
    "torch.take_along_dim": [(1, 0, ("arg", 2, "dim"))],
    "torch.index_select": [(2, 0, ("arg", 1, "dim"))],
    "torch.nn.functional.cross_entropy": [(1, 0, "classes")],
    "torch.nn.functional.nll_loss": [(1, 0, "classes")],
}
for _name in ("index_copy", "index_add", "index_fill", "index_reduce", "scatter", "scatter_add", "scatter_reduce"):
    for _spelling in ("torch." + _name, "torch." + _name + "_"):
        INDEX_RULES[_spelling] = [(2, 0, ("arg", 1, "dim"))]

# Matrix-product operands get xavier values (as torch-spyre's manifests do).
PRODUCT_OPERANDS = {
    "torch.nn.functional.linear": (0, 1), "torch.matmul": (0, 1), "torch.mm": (0, 1), "torch.bmm": (0, 1),
    "torch.baddbmm": (1, 2), "torch.addmm": (1, 2), "torch.conv1d": (0, 1), "torch.conv2d": (0, 1),
    "torch.nn.functional.conv1d": (0, 1), "torch.nn.functional.conv2d": (0, 1),
}

DTYPE_MARKS = {torch.float32: "fp32operation", torch.bfloat16: "bf16operation", torch.float16: "fp16operation"}
DTYPE_NAMES = {torch.float16: "fp16", torch.bfloat16: "bf16", torch.float32: "fp32", torch.float64: "fp64",
               torch.int8: "int8", torch.int16: "int16", torch.int32: "int32", torch.int64: "int64",
               torch.uint8: "uint8", torch.bool: "bool", torch.complex64: "complex64", torch.complex128: "complex128"}


class ScanError(Exception):
    """A call the scanner cannot write as a manifest case."""


def op_name(func):
    name = getattr(func, "__name__", None) or ""
    qual = getattr(func, "__qualname__", "") or ""
    module = getattr(func, "__module__", None) or ""
    if qual.startswith(("_TensorBase.", "Tensor.", "TensorBase.")):
        if name in OPERATOR_NAMES:
            return OPERATOR_NAMES[name]
        return ("torch.Tensor." if name in TENSOR_QUALIFIED else "torch.") + name
    if module in ("torch.nn.functional", "torch._C._nn"):
        return "torch.nn.functional." + name
    if module in ("torch", "torch.functional") or qual.startswith("_VariableFunctionsClass."):
        return "torch." + name
    if module.startswith("torch.") and module.split(".")[1] in ("special", "linalg", "fft"):
        return module + "." + name
    return (module + "." if module else "") + name


# ---- What a call's arguments were ---------------------------------------------------------------------------------

class TensorArg:
    """A tensor argument as the manifest describes it, plus the integer values the model used."""

    def __init__(self, t):
        self.shape = list(t.shape)
        self.stride = list(t.stride())
        self.storage_offset = t.storage_offset()
        self.dtype = t.dtype
        self.observed = None
        if not (t.is_floating_point() or t.is_complex() or t.dtype == torch.bool) and t.numel() > 0:
            self.observed = (int(t.min()), int(t.max()))

    def numel(self):
        return math.prod(self.shape)


def capture(value):
    """Python argument -> ('tensor', TensorArg) | ('list', [TensorArg]) | ('value', python value)."""
    if isinstance(value, torch.Tensor):
        return ("tensor", TensorArg(value))
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, torch.Tensor) for v in value):
        return ("list", [TensorArg(v) for v in value])
    return ("value", plain(value))


def plain(value):
    """A non-tensor value with sizes as tuples and every device as the device under test: the scan runs on the
    host in place of the accelerator, so `x.to(x.device)` means the device under test."""
    if isinstance(value, torch.Tensor):
        raise ScanError("a tensor nested inside a non-tensor argument (e.g. x[:, idx]) cannot be written in a "
                        "manifest: py literals hold no tensors")
    if isinstance(value, torch.device):
        return "cuda:0"
    if isinstance(value, torch.Size):
        return tuple(int(v) for v in value)
    if isinstance(value, (list, tuple)):
        return type(value)(plain(v) for v in value)
    if isinstance(value, slice):
        return slice(plain(value.start), plain(value.stop), plain(value.step))
    if isinstance(value, torch.memory_format):
        return str(value)
    if value is None or value is Ellipsis or isinstance(value, (bool, int, float, str, torch.dtype)):
        return value
    raise ScanError(f"an argument of type {type(value).__name__} has no manifest spelling")


def contains_tensor(value):
    if isinstance(value, torch.Tensor):
        return True
    if isinstance(value, (list, tuple)):
        return any(contains_tensor(v) for v in value)
    if isinstance(value, dict):
        return any(contains_tensor(v) for v in value.values())
    return False


def python_signature(func):
    """The Python signature of an op, or None for builtins. Functions torch builds with boolean_dispatch
    (F.max_pool2d: the result type depends on return_indices) have a (*args, **kwargs) wrapper; their real
    signature is the one of the branch taken by default."""
    try:
        from torch._jit_internal import boolean_dispatched
        branches = boolean_dispatched.get(func)
    except (ImportError, TypeError):
        branches = None
    if branches:
        func = branches["if_true"] if branches.get("default") else branches["if_false"]
    try:
        return inspect.signature(func)
    except (TypeError, ValueError):
        return None


def positional_form(func, args, kwargs):
    """Moves tensor keyword arguments into positional ones (kwmap holds values only) and drops keyword arguments
    equal to the Python signature's defaults (F.softmax's _stacklevel=3, silu's inplace=False, ...)."""
    sig = python_signature(func)
    tensor_kw = [k for k, v in kwargs.items() if contains_tensor(v)]
    if sig is None:
        if tensor_kw:
            raise ScanError(f"keyword argument {tensor_kw[0]!r} holds a tensor and the op's signature is unknown")
        return list(args), dict(kwargs)
    params = list(sig.parameters.values())
    args, kwargs = list(args), dict(kwargs)
    if tensor_kw:
        last = max(i for i, p in enumerate(params) if p.name in tensor_kw)
        for i in range(len(args), last + 1):
            p = params[i]
            if p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
                raise ScanError(f"keyword-only tensor argument {p.name!r} cannot be made positional")
            if p.name in kwargs:
                args.append(kwargs.pop(p.name))
            elif p.default is not p.empty:
                args.append(p.default)
            else:
                raise ScanError(f"argument {p.name!r} is missing")
    defaults = {p.name: p.default for p in params if p.default is not p.empty}
    for k in list(kwargs):
        if k in defaults and same_value(kwargs[k], defaults[k]):
            del kwargs[k]
    return args, kwargs


def same_value(a, b):
    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        return False
    try:
        return type(a) is type(b) and a == b
    except Exception:  # noqa: BLE001 - exotic defaults compare unequal
        return False


class Call:
    """One recorded call, ready to become a case."""

    def __init__(self, op, inputs, kwargs, marks, where):
        self.op, self.inputs, self.kwargs, self.marks, self.where = op, inputs, kwargs, marks, where


# ---- Recording -------------------------------------------------------------------------------------------------

class Recorder(TorchFunctionMode):
    """Records each torch call made while active (nested calls inside an op are not seen: the mode is off while
    an op runs its own Python)."""

    def __init__(self, skip_files):
        super().__init__()
        self.calls = []
        self.problems = []
        self.mark_stack = []
        self.skip_files = {str(pathlib.Path(f).resolve()) for f in skip_files}

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        name = op_name(func)
        record = getattr(func, "__name__", "") not in IGNORED
        call = problem = None
        if record:
            # Described before the op runs: an in-place op changes its inputs.
            where = self.source_line()
            try:
                call = self.describe(func, name, args, kwargs, where)
            except ScanError as e:
                problem = f"{where[0]}: {name}: not recorded: {e}"
        result = func(*args, **kwargs)
        if record and contains_tensor(result):  # size(), dim(), item() and the like are no ops to check
            if call is not None:
                self.calls.append(call)
            else:
                self.problems.append(problem)
        return result

    def describe(self, func, name, args, kwargs, where):
        args, kwargs = positional_form(func, args, kwargs)
        inputs = [capture(a) for a in args]
        kw = {k: plain(v) for k, v in kwargs.items()}
        marks = []
        for level in self.mark_stack:
            marks.extend(m for m in level if m not in marks)
        return Call(name, inputs, kw, marks, where)

    def source_line(self):
        """(file:line, function, code) of the innermost frame outside torch, this scanner and _ops.py."""
        frame = sys._getframe(2)
        while frame is not None:
            path = pathlib.Path(frame.f_code.co_filename).resolve()
            if TORCH_DIR not in path.parents and str(path) not in self.skip_files:
                break
            frame = frame.f_back
        if frame is None:
            return ("<unknown>", "?", "")
        path = pathlib.Path(frame.f_code.co_filename).resolve()
        shown = path.relative_to(ROOT) if ROOT in path.parents else path
        code = linecache.getline(str(path), frame.f_lineno).strip()
        return (f"{shown}:{frame.f_lineno}", frame.f_code.co_name, code)


class IndexingReported:
    """While active, `x[i]` reaches torch function modes for every index: torch's C indexing reports only some
    index kinds (tuples), so `h[token]` with a tensor index would go unrecorded."""

    def __enter__(self):
        self.original = torch.Tensor.__getitem__
        original = self.original

        def __getitem__(self, index):
            if has_torch_function((self,)):
                return handle_torch_function(__getitem__, (self,), self, index)
            return original(self, index)

        __getitem__.__qualname__ = "_TensorBase.__getitem__"
        torch.Tensor.__getitem__ = __getitem__
        return self

    def __exit__(self, *exc):
        torch.Tensor.__getitem__ = self.original


def attach_marks(model, recorder):
    """Forward hooks that keep the marks of the modules being run on the recorder's stack."""
    for module in model.modules():
        marks = tuple(getattr(type(module), "opcheck_marks", ()))
        if not marks:
            continue
        # Hooks must return None: a value returned would replace the module's input or output.
        module.register_forward_pre_hook(lambda m, a, marks=marks: recorder.mark_stack.append(marks) and None)
        module.register_forward_hook(lambda m, a, r: recorder.mark_stack.pop() and None)


# ---- Calls -> cases ----------------------------------------------------------------------------------------------

def index_bounds(call):
    """{(input, list item or None): (low, high, why)} for integer tensors that index another tensor."""
    out = {}
    for index_arg, source_arg, dim in INDEX_RULES.get(call.op, ()):
        if index_arg >= len(call.inputs) or source_arg >= len(call.inputs):
            continue
        kind, spec = call.inputs[index_arg]
        src_kind, src = call.inputs[source_arg]
        if kind != "tensor" or src_kind != "tensor" or spec.dtype in (torch.bool, torch.uint8) or spec.observed is None:
            continue
        if isinstance(dim, tuple):
            _, k, kwname = dim
            value = call.inputs[k][1] if k < len(call.inputs) and call.inputs[k][0] == "value" else call.kwargs.get(kwname)
            if not isinstance(value, int):
                continue
            dim = value
        elif dim == "classes":
            dim = 1 if len(src.shape) >= 2 else 0
        rank = len(src.shape)
        dim = dim + rank if dim < 0 else dim
        if not 0 <= dim < max(rank, 1):
            continue
        size = src.shape[dim] if rank else 1
        out[(index_arg, None)] = (0, size, f"indices into dim {dim} of input {source_arg} (size {size})")
    return out


def tensor_entry(spec, init, init_args):
    entry = {"shape": spec.shape, "stride": spec.stride, "storage_offset": spec.storage_offset,
             "dtype": str(spec.dtype), "device": "cuda:0", "init": init}
    if init_args:
        entry["init_args"] = init_args
    return entry


def overlaps(spec):
    dims = sorted((d for d in range(len(spec.shape)) if spec.shape[d] > 1 and spec.stride[d] != 0),
                  key=lambda d: spec.stride[d])
    span = 0
    for d in dims:
        if spec.stride[d] <= span:
            return True
        span += spec.stride[d] * (spec.shape[d] - 1)
    return False


def recipe(call, pos, spec, bounds):
    """(init, init_args) for the tensor at input `pos`."""
    if spec.dtype == torch.bool:
        return "rand", None
    if spec.dtype.is_floating_point or spec.dtype.is_complex:
        operands = PRODUCT_OPERANDS.get(call.op, ())
        if pos in operands and len(spec.shape) >= 2 and spec.dtype.is_floating_point:
            return "xavier", None
        return "rand", None
    if spec.numel() == 0 or spec.observed is None:
        return "zeros", None
    if (pos, None) in bounds:
        low, high, _ = bounds[(pos, None)]
        return "randint", {"high": high} if low == 0 else {"low": low, "high": high}
    low, high = spec.observed[0], spec.observed[1] + 1
    return "randint", {"high": high} if low == 0 else {"low": low, "high": high}


def case_of(call):
    """The manifest case of a call, as a dict in the manifest's key order; raises ScanError when impossible."""
    bounds = index_bounds(call)
    inputs, marks, dtypes, notes = [], [], [], []
    any_value = noncontiguous = False
    for pos, (kind, item) in enumerate(call.inputs):
        specs = [item] if kind == "tensor" else item if kind == "list" else []
        entries = []
        for spec in specs:
            if overlaps(spec):
                # A layout whose elements alias (unfold, as_strided) cannot be built from a spec: keep the values'
                # shape and say so.
                notes.append(f"input {pos}: overlapping layout {spec.stride} written contiguous")
                spec.stride = [int(s) for s in torch.empty(spec.shape).stride()]
                spec.storage_offset = 0
            init, init_args = recipe(call, pos, spec, bounds)
            entries.append(tensor_entry(spec, init, init_args))
            if spec.dtype in DTYPE_MARKS and spec.dtype not in dtypes:
                dtypes.append(spec.dtype)
            contiguous_stride = list(torch.empty(spec.shape).stride()) if spec.shape else []
            if spec.storage_offset or any(s > 1 and a != b for s, a, b in zip(spec.shape, spec.stride, contiguous_stride)):
                noncontiguous = True
        if kind == "tensor":
            inputs.append({"tensor": entries[0]})
        elif kind == "list":
            inputs.append({"tensor_list": entries})
        else:
            any_value = True
            inputs.append(value_input(item))
    for dt in sorted(dtypes, key=lambda d: list(DTYPE_MARKS).index(d)):
        marks.append(DTYPE_MARKS[dt])
    if any_value:
        marks.append("constant")
    if noncontiguous:
        marks.append("noncontiguous")
    marks.extend(m for m in call.marks if m not in marks)
    where, func, code = call.where
    description = f"{where} in {func}, code: {code}"
    if notes:
        description += " (" + "; ".join(notes) + ")"
    case = {"op": call.op, "inputs": inputs, "description": description}
    if dtypes:
        case["dtype"] = DTYPE_NAMES[dtypes[0]]
    case["marks"] = marks
    if call.kwargs:
        case["kwmap"] = dict(call.kwargs)
    return case


def value_input(v):
    if v is None or isinstance(v, (bool, int, float, torch.dtype)):
        return {"value": v}
    if isinstance(v, str) and v in ("cuda:0", "cpu"):
        return {"value": v}
    if isinstance(v, (list, tuple)) and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in v):
        return {"value": v}  # written as the string '(1, 11, -1, 16)', as real manifests do
    return {"py": py_repr(v)}


def py_repr(v):
    """Python literal text in the grammar of opcheck's `py:` inputs."""
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, tuple):
        inner = ", ".join(py_repr(x) for x in v)
        return f"({inner},)" if len(v) == 1 else f"({inner})"
    if isinstance(v, list):
        return "[" + ", ".join(py_repr(x) for x in v) + "]"
    if isinstance(v, slice):
        return f"slice({py_repr(v.start)}, {py_repr(v.stop)}, {py_repr(v.step)})"
    if isinstance(v, torch.dtype):
        return str(v)
    return repr(v)


def dedupe_key(case):
    return repr((case["op"], case["inputs"], sorted(case.get("kwmap", {}).items(), key=lambda kv: kv[0])))


# ---- Manifest text ---------------------------------------------------------------------------------------------

# Strings the manifest loader gives a meaning (see the manifest rules: value strings).
LOADER_WORDS = {"None", "True", "False", "inf", "+inf", "-inf", "nan"}


def yaml_str(s):
    return "'" + str(s).replace("'", "''").replace("\n", " ") + "'"


def yaml_value(v):
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "'nan'"
        if math.isinf(v):
            return "'inf'" if v > 0 else "'-inf'"
        text = repr(v)
        if "." not in text and "e" in text:
            text = text.replace("e", ".0e", 1)  # YAML 1.1 readers need the dot to see a float
        return text
    if isinstance(v, torch.dtype):
        return str(v)
    if isinstance(v, str) and v in ("cuda:0", "cpu"):
        return v
    if isinstance(v, (list, tuple)):
        return yaml_str(py_repr(v))
    if isinstance(v, str) and (v in LOADER_WORDS or v[:1] in "([" or v.startswith("torch.")):
        return yaml_str(f"({v!r})")  # the loader would read these as values; a parenthesized literal stays a str
    return yaml_str(v)


def flow(ints):
    return "[" + ", ".join(str(i) for i in ints) + "]"


def tensor_lines(t, indent):
    pad = " " * indent
    out = [f"{pad}shape: {flow(t['shape'])}", f"{pad}stride: {flow(t['stride'])}",
           f"{pad}storage_offset: {t['storage_offset']}", f"{pad}dtype: {t['dtype']}", f"{pad}device: {t['device']}",
           f"{pad}init: {t['init']}"]
    if "init_args" in t:
        out.append(f"{pad}init_args:")
        out.extend(f"{pad}  {k}: {yaml_value(v)}" for k, v in t["init_args"].items())
    return out


def manifest_text(spec, cases, header):
    lines = [f"# {line}".rstrip() for line in header.splitlines()]
    lines += [f"model: {spec['model']}", f"description: {yaml_str(spec['description'])}", "defaults:",
              f"  dtype: {spec['dtype']}", f"  seed: {spec['seed']}", "cases:"]
    for case in cases:
        lines.append(f"  - name: {case['name']}")
        lines.append(f"    op: {case['op']}")
        lines.append("    inputs:" if case["inputs"] else "    inputs: []")
        for item in case["inputs"]:
            if "tensor" in item:
                lines.append("      - tensor:")
                lines += tensor_lines(item["tensor"], 10)
            elif "tensor_list" in item:
                lines.append("      - tensor_list:")
                for t in item["tensor_list"]:
                    body = tensor_lines(t, 12)
                    lines.append("          - " + body[0].lstrip())
                    lines += body[1:]
            elif "value" in item:
                lines.append(f"      - value: {yaml_value(item['value'])}")
            else:
                lines.append(f"      - py: {yaml_str(item['py'])}")
        lines.append(f"    description: {yaml_str(case['description'])}")
        if case.get("dtype") and case["dtype"] != spec["dtype"]:
            lines.append(f"    dtype: {case['dtype']}")
        for key in ("rtol", "atol"):
            if key in case:
                lines.append(f"    {key}: {yaml_value(case[key])}")
        if case["marks"]:
            lines.append("    marks:")
            lines += [f"      - {m}" for m in case["marks"]]
        if case.get("kwmap"):
            lines.append("    kwmap:")
            lines += [f"      {k}: {yaml_value(v)}" for k, v in case["kwmap"].items()]
    return "\n".join(lines) + "\n"


# ---- Driver -----------------------------------------------------------------------------------------------------

def load_model(name_or_path):
    path = pathlib.Path(name_or_path)
    if not path.suffix:
        path = MODELS_DIR / f"{name_or_path}.py"
    if not path.is_file():
        known = ", ".join(shipped_models())
        raise SystemExit(f"scan_model.py: no model {name_or_path!r} (shipped: {known}; or give a .py path)")
    sys.path.insert(0, str(path.resolve().parent))
    sys.path.insert(0, str(MODELS_DIR))
    spec = importlib.util.spec_from_file_location(f"opcheck_model_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    for attr in ("MODEL", "DESCRIPTION", "DTYPE", "build", "inputs"):
        if not hasattr(module, attr):
            raise SystemExit(f"scan_model.py: {path} defines no {attr} (see this script's docstring)")
    return module, path


def shipped_models():
    return sorted(p.stem for p in MODELS_DIR.glob("*.py") if not p.stem.startswith("_"))


def scan(module, path):
    """(manifest text, problems) for one model definition."""
    torch.manual_seed(getattr(module, "SEED", 123))
    model = module.build().eval()
    inputs = module.inputs()
    recorder = Recorder([__file__, MODELS_DIR / "_ops.py"])
    attach_marks(model, recorder)
    with torch.no_grad(), IndexingReported(), recorder:
        model(*inputs)

    cases, seen, per_op = [], {}, {}
    problems = list(recorder.problems)
    tolerances = getattr(module, "TOLERANCES", {})
    for call in recorder.calls:
        try:
            case = case_of(call)
        except ScanError as e:
            problems.append(f"{call.where[0]}: {call.op}: not written: {e}")
            continue
        key = dedupe_key(case)
        if key in seen:
            continue
        per_op[call.op] = per_op.get(call.op, 0) + 1
        case = {"name": f"{call.op}.{per_op[call.op]}", **case}
        if call.op in tolerances:
            case.update(tolerances[call.op])
        seen[key] = case
        cases.append(case)

    shown = path.resolve().relative_to(ROOT) if ROOT in path.resolve().parents else path
    doc = (module.__doc__ or "").strip()
    header = (f"Generated by scripts/scan_model.py from {shown}; do not edit by hand. Regenerate with:\n"
              f"  python3 scripts/scan_model.py {path.stem if shown != path else path} -o <this file>\n"
              f"{len(recorder.calls)} recorded calls, {len(cases)} distinct cases.\n\n{doc}\n")
    spec = {"model": module.MODEL, "description": module.DESCRIPTION, "dtype": DTYPE_NAMES[module.DTYPE],
            "seed": getattr(module, "SEED", 123)}
    return manifest_text(spec, cases, header), problems


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("models", nargs="*", help="model names in scripts/models/, or paths to model .py files")
    ap.add_argument("--all", action="store_true", help="every model in scripts/models/")
    ap.add_argument("-o", "--output", help="output file (one model) or folder (written as <MODEL>.yaml)")
    ap.add_argument("--list", action="store_true", help="list the shipped models and exit")
    args = ap.parse_args(argv)
    if args.list:
        print("\n".join(shipped_models()))
        return 0
    names = shipped_models() if args.all else args.models
    if not names:
        ap.error("name a model (or --all)")
    out = pathlib.Path(args.output) if args.output else None
    to_folder = out is not None and (len(names) > 1 or out.is_dir() or args.output.endswith("/"))
    for name in names:
        module, path = load_model(name)
        text, problems = scan(module, path)
        for p in problems:
            print(f"scan_model.py: warning: {p}", file=sys.stderr)
        if out is None:
            sys.stdout.write(text)
            continue
        target = out / f"{module.MODEL}.yaml" if to_folder else out
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
        print(f"{target}: {text.count(chr(10) + '  - name: ')} cases from {path.name}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
