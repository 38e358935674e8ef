# opcheck import-opinfo: PyTorch's OpInfo samples (torch.testing._internal.common_methods_invocations.op_db) as
# opcheck manifests. `opcheck import-opinfo` runs this file in the Python of the torch opcheck was built against and
# then checks what it wrote (every case loads, its op resolves and its arguments bind); see docs/opinfo.md.
#
# Writes into OUT:
#   opinfo_<entry>.yaml            one manifest per OpInfo entry, one case per sample and dtype
#   tensors/<model>.<dtype>.safetensors  every tensor of those samples, bit for bit, keyed "<sample>.<argument>"
#   opcheck.yaml                   the status config: the entry's skips/xfails that apply to the CPU
#   markers.yaml                   the marks the cases carry (opinfo, opinfo__<entry>, aten__<op>_<overload>)
#   opinfo-report.json             every sample: written (case id) or not written (reason), and the counts
import argparse
import fnmatch
import json
import math
import os
import re
import struct
import sys
import time

# The closed list of reasons a sample is not written (docs/opinfo.md explains each).
REASONS = {
    "raises_on_cpu": "the sample raises on the CPU",
    "random_op": "the sample reaches a random op (an ATen op tagged nondeterministic_seeded)",
    "unsupported_input": "an input no manifest can hold",
    "unjudgeable_output": "an output no comparator can judge",
    "no_callable_name": "the OpInfo's op is a Python function opcheck cannot name (a lambda or a wrapper)",
    "unbound_call": "opcheck cannot resolve the op or bind the sample's arguments to it",
}

DTYPE_FLAGS = {
    "fp32": "float32", "float32": "float32", "float": "float32", "f32": "float32",
    "fp16": "float16", "float16": "float16", "half": "float16", "f16": "float16",
    "bf16": "bfloat16", "bfloat16": "bfloat16",
    "fp64": "float64", "float64": "float64", "double": "float64", "f64": "float64",
    "int8": "int8", "int16": "int16", "int32": "int32", "int64": "int64", "uint8": "uint8", "bool": "bool",
    "i8": "int8", "i16": "int16", "i32": "int32", "i64": "int64", "u8": "uint8",
}
DEFAULT_DTYPES = ["float32", "float16", "bfloat16", "float64", "int8", "int16", "int32", "int64", "uint8"]
SAFETENSORS_DTYPE = {
    "float32": "F32", "float16": "F16", "bfloat16": "BF16", "float64": "F64", "int8": "I8", "int16": "I16",
    "int32": "I32", "int64": "I64", "uint8": "U8", "bool": "BOOL",
}


class NotWritable(Exception):
    def __init__(self, reason, detail):
        super().__init__(detail)
        self.reason = reason
        self.detail = detail


def fail_usage(message, fix):
    sys.stderr.write("opcheck: error: %s\n  Fix: %s\n" % (message, fix))
    sys.exit(4)


def ident(text):
    return re.sub(r"[^0-9A-Za-z]", "_", text)


def entry_name(op):
    return op.name + ("." + op.variant_test_name if op.variant_test_name else "")


# ---- YAML text (the writer's own, so that two imports give the same bytes) -----------------------------------------

def yaml_str(s):
    return json.dumps(s, ensure_ascii=False)


def yaml_float(x):
    if math.isnan(x):
        return '"nan"'
    if math.isinf(x):
        return '"inf"' if x > 0 else '"-inf"'
    r = repr(x)
    return r if ("." in r or "e" in r or "n" in r) else r + ".0"


def py_literal(v, torch):
    """A Python literal opcheck's `py:` parser reads back as the same value, or NotWritable."""
    if v is None:
        return "None"
    if v is Ellipsis:
        return "Ellipsis"
    if isinstance(v, bool):
        return "True" if v else "False"
    if isinstance(v, int):
        return repr(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    if isinstance(v, str):
        return repr(v)
    if isinstance(v, slice):
        return "slice(%s, %s, %s)" % (py_literal(v.start, torch), py_literal(v.stop, torch), py_literal(v.step, torch))
    if isinstance(v, torch.dtype):
        return str(v)
    if isinstance(v, (tuple, list)):
        items = [py_literal(x, torch) for x in v]
        if isinstance(v, list):
            return "[" + ", ".join(items) + "]"
        return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
    raise NotWritable("unsupported_input", "a %s argument" % type(v).__name__)


# ---- tensors ----------------------------------------------------------------------------------------------------

class TensorFile:
    """One .safetensors file: the tensors of one entry at one dtype, in the order they were added."""

    def __init__(self, rel_path):
        self.rel_path = rel_path
        self.header = {}
        self.chunks = []
        self.size = 0

    def add(self, key, t, torch):
        dtype = str(t.dtype).replace("torch.", "")
        c = t.detach().contiguous()
        data = c.reshape(-1).view(torch.uint8).numpy().tobytes() if c.numel() else b""
        self.header[key] = {"dtype": SAFETENSORS_DTYPE[dtype], "shape": list(c.shape),
                            "data_offsets": [self.size, self.size + len(data)]}
        self.chunks.append(data)
        self.size += len(data)

    def write(self, out_dir):
        head = json.dumps(self.header, sort_keys=True, separators=(",", ":")).encode()
        head += b" " * (-len(head) % 8)
        path = os.path.join(out_dir, self.rel_path)
        with open(path, "wb") as f:
            f.write(struct.pack("<Q", len(head)))
            f.write(head)
            for c in self.chunks:
                f.write(c)


def tensor_yaml(t, key, tf, torch):
    dtype = str(t.dtype).replace("torch.", "")
    if dtype not in SAFETENSORS_DTYPE:
        raise NotWritable("unsupported_input", "a %s tensor" % dtype)
    if t.layout != torch.strided:
        raise NotWritable("unsupported_input", "a %s tensor" % t.layout)
    if t.is_conj() or t.is_neg():
        raise NotWritable("unsupported_input", "a tensor with its conjugate or negative bit set")
    if t.device.type != "cpu":
        raise NotWritable("unsupported_input", "a tensor on %s" % t.device)
    fields = ["shape: [%s]" % ", ".join(str(s) for s in t.shape), "dtype: " + dtype,
              "init: file", "init_args: {path: %s, key: %s}" % (yaml_str(tf.rel_path), yaml_str(key))]
    contiguous_layout = t.is_contiguous() and t.storage_offset() == 0
    if not contiguous_layout:
        fields.append("stride: [%s]" % ", ".join(str(s) for s in t.stride()))
        if t.storage_offset():
            fields.append("storage_offset: %d" % t.storage_offset())
    return "{" + ", ".join(fields) + "}", not contiguous_layout


def value_yaml(v, torch):
    """`value: ...` or `py: ...` text for a non-tensor argument."""
    if v is None:
        return "value: null"
    if isinstance(v, bool):
        return "value: " + ("true" if v else "false")
    if isinstance(v, int):
        return "value: %d" % v
    if isinstance(v, float):
        return "value: " + yaml_float(v)
    if isinstance(v, torch.dtype):
        return "value: " + str(v)
    if isinstance(v, str):
        if plain_string(v):
            return "value: " + yaml_str(v)
        return "py: " + yaml_str(repr(v))
    if isinstance(v, torch.device):
        if v.type == "cpu":
            return "value: privateuseone"  # the samples' device: the device under test
        raise NotWritable("unsupported_input", "a torch.device argument")
    return "py: " + yaml_str(py_literal(v, torch))


SPECIAL_STRINGS = {"None", "True", "False", "inf", "+inf", "-inf", "nan"}


def plain_string(s):
    """Whether a YAML string value reads back as this very string (not None, a number, a literal, a dtype or a
    device: src/manifest/string_values.cpp)."""
    if s in SPECIAL_STRINGS or s[:1] in ("(", "[") or s.startswith("torch."):
        return False
    return re.fullmatch(r"(cpu|cuda|meta|privateuseone|spyre|aiu|loopback|mps|xpu|hpu)(:\d+)?", s) is None


def kwarg_yaml(v, torch):
    """A keyword argument's YAML value (kwargs hold values; a Python literal is a string starting with ( or [)."""
    if v == "privateuseone" or (isinstance(v, torch.device) and v.type == "cpu"):
        return "privateuseone"
    if isinstance(v, str) and not plain_string(v):
        raise NotWritable("unsupported_input", "a keyword string %r that reads as another value" % v)
    text = value_yaml(v, torch)
    kind, _, rest = text.partition(": ")
    if kind == "py" and not json.loads(rest)[:1] in ("(", "["):
        raise NotWritable("unsupported_input", "a keyword argument %s that only a py: literal can hold" % rest)
    return rest


# ---- OpInfo's judgement -------------------------------------------------------------------------------------------

def decorator_kind(dec):
    """('skip', reason) | ('xfail', None) | ('tolerance', {dtype: (atol, rtol)}) | None."""
    import unittest
    from torch.testing._internal.common_device_type import precisionOverride, toleranceOverride
    if dec is unittest.expectedFailure or getattr(dec, "__name__", "") == "expectedFailure":
        return ("xfail", "expectedFailure")
    if isinstance(dec, toleranceOverride):
        return ("tolerance", {k: (v.atol, v.rtol) for k, v in dec.d.items()})
    if isinstance(dec, precisionOverride):
        return ("tolerance", {k: (v, None) for k, v in dec.d.items()})
    qual = getattr(dec, "__qualname__", "")
    if qual.startswith("skip.") and dec.__closure__:
        for cell in dec.__closure__:
            if isinstance(cell.cell_contents, str):
                return ("skip", cell.cell_contents)
        return ("skip", "skipped")
    return None


def applies_to_compare_cpu(info, device_type, dtype):
    if info.cls_name is not None and info.cls_name != "TestCommon":
        return False
    if info.test_name is not None and info.test_name != "test_compare_cpu":
        return False
    if info.device_type is not None and info.device_type != device_type:
        return False
    if info.dtypes is not None and dtype not in info.dtypes:
        return False
    return info.active_if


def describe_decorator(info, kind):
    where = "%s.%s" % (info.cls_name or "*", info.test_name or "*")
    dev = info.device_type or "any device"
    dts = ", ".join(str(d).replace("torch.", "") for d in info.dtypes) if info.dtypes else "all dtypes"
    return "%s for %s on %s, %s" % (kind, where, dev, dts)


def judgement(op, dtype):
    """(tolerance or None, [cpu statuses], [hints for other devices]) of the entry's decorators at `dtype`."""
    tolerance, statuses, hints = None, [], []
    for info in op.decorators:
        if not hasattr(info, "decorators"):
            continue
        for dec in info.decorators:
            kind = decorator_kind(dec)
            if kind is None:
                continue
            if kind[0] == "tolerance":
                if dtype in kind[1] and applies_to_compare_cpu(info, "cpu", dtype):
                    atol, rtol = kind[1][dtype]
                    tolerance = (atol, rtol)
                continue
            if applies_to_compare_cpu(info, "cpu", dtype):
                statuses.append((kind[0], "OpInfo %s: %s%s" % (
                    entry_name(op), describe_decorator(info, kind[0]),
                    (" (" + kind[1] + ")") if kind[0] == "skip" else "")))
            elif info.device_type not in (None, "cpu") and applies_to_compare_cpu(info, info.device_type, dtype):
                hints.append("%s on %s" % (kind[0], info.device_type))
    return tolerance, statuses, hints


# ---- naming the op --------------------------------------------------------------------------------------------------

def python_name(op, torch):
    """(name opcheck resolves, variant word) for the entry's function, else its method; None when neither has one."""
    f = op.op
    candidates = ["torch." + op.name]
    mod = getattr(f, "__module__", None) or ""
    fname = getattr(f, "__name__", "")
    if fname and fname != "<lambda>":
        if mod.startswith("torch._C._"):
            sub = {"_linalg": "linalg", "_special": "special", "_fft": "fft", "_nn": "nn.functional",
                   "_sparse": "sparse"}.get(mod[len("torch._C."):])
            if sub:
                candidates.append("torch.%s.%s" % (sub, fname))
        elif mod.startswith("torch") and "._" not in mod and not mod.startswith("torch.testing"):
            candidates.append("torch." + fname)
            candidates.append(mod.replace("torch.functional", "torch") + "." + fname)
    if isinstance(f, torch._ops.OpOverloadPacket):
        return "aten::" + f._qualified_op_name.split("::")[-1], "function"
    if isinstance(f, torch._ops.OpOverload):
        return "aten::%s.%s" % (f._schema.name.split("::")[-1], f._overloadname), "function"
    for c in candidates:
        obj = torch
        try:
            for part in c.split(".")[1:]:
                obj = getattr(obj, part)
        except AttributeError:
            continue
        if obj is f:
            return c, "function"
    m = op.method_variant
    if m is not None and getattr(m, "__name__", None) and getattr(torch.Tensor, m.__name__, None) is m:
        return "torch.Tensor." + m.__name__, "method"
    if fname == "<lambda>" and callable(getattr(torch.Tensor, op.name, None)):
        # A lambda around the method of the entry's name (item, resize_): the method, checked per sample to give
        # what the lambda gives (run_sample on both).
        return "torch.Tensor." + op.name, "method by name"
    return None, None


def call_variant(op, variant):
    if variant == "method by name":
        return getattr(__import__("torch").Tensor, op.name)
    return op.op if variant == "function" else op.method_variant


# ---- running a sample on the CPU ----------------------------------------------------------------------------------

def make_recorder(torch):
    from torch.utils._python_dispatch import TorchDispatchMode

    class Recorder(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.ops = []
            self.random = False
            self.calls = 0
            self.first = None  # (op, positional, keywords) of the first call, its tensors copied before it ran

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            name = str(func.name()) if hasattr(func, "name") else str(func)
            if name not in self.ops:
                self.ops.append(name)
            self.calls += 1
            if self.calls == 1:
                self.first = (func, clone_args(tuple(args), torch), clone_args(dict(kwargs or {}), torch))
            if torch.Tag.nondeterministic_seeded in getattr(func, "tags", ()):
                self.random = True
            return func(*args, **(kwargs or {}))

    return Recorder


def judgeable(out, torch, depth=0):
    if out is None or isinstance(out, (bool, int, float)):
        return None
    if isinstance(out, torch.Tensor):
        if out.layout != torch.strided:
            return "a %s output" % out.layout
        if out.dtype not in (torch.float32, torch.float16, torch.bfloat16, torch.float64, torch.int8, torch.int16,
                             torch.int32, torch.int64, torch.uint8, torch.bool, torch.complex64, torch.complex128):
            return "a %s output" % out.dtype
        return None
    if isinstance(out, (tuple, list)) and depth < 3:
        for o in out:
            why = judgeable(o, torch, depth + 1)
            if why:
                return why
        return None
    return "a %s output" % type(out).__name__


def same_output(a, b, torch):
    if isinstance(a, torch.Tensor):
        if not isinstance(b, torch.Tensor) or a.shape != b.shape or a.dtype != b.dtype:
            return False
        if a.dtype.is_floating_point or a.dtype.is_complex:
            return bool(torch.equal(torch.nan_to_num(a.detach(), 0.0, 1.0, -1.0),
                                    torch.nan_to_num(b.detach(), 0.0, 1.0, -1.0)) and
                        torch.equal(a.detach().isnan(), b.detach().isnan()))
        return bool(torch.equal(a, b))
    if isinstance(a, (tuple, list)):
        return isinstance(b, (tuple, list)) and len(a) == len(b) and all(same_output(x, y, torch) for x, y in zip(a, b))
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return a == b


def clone_args(v, torch):
    if isinstance(v, torch.Tensor):
        return _strided_copy(v, torch)
    if isinstance(v, tuple):
        return tuple(clone_args(x, torch) for x in v)
    if isinstance(v, list):
        return [clone_args(x, torch) for x in v]
    if isinstance(v, dict):
        return {k: clone_args(x, torch) for k, x in v.items()}
    return v


def _strided_copy(t, torch):
    """The same values in the same sizes, strides and storage offset (as opcheck builds it from the manifest)."""
    t = t.detach()
    extent = t.storage_offset() + sum((s - 1) * st for s, st in zip(t.shape, t.stride()) if s > 0) + 1 \
        if t.numel() else t.storage_offset()
    base = torch.zeros(max(extent, 0), dtype=t.dtype)
    out = torch.as_strided(base, t.shape, t.stride(), t.storage_offset())
    out.copy_(t)
    return out


def run_sample(fn, sample, torch, Recorder, calls=None):
    """(ops reached, random?, output) of one call on copies of the sample's tensors; raises what the op raises.
    `calls`, a dict, receives the number of ATen calls and the first one."""
    inp, args, kwargs = clone_args((sample.input, sample.args, sample.kwargs), torch)
    rec = Recorder()
    with torch.no_grad(), rec:
        out = fn(inp, *args, **kwargs)
    if calls is not None:
        calls.update(count=rec.calls, first=rec.first)
    return rec.ops, rec.random, out


# ---- one sample as a case -----------------------------------------------------------------------------------------

def argument_lines(positional, keywords, index, tf, torch):
    """(input lines, kwmap lines, noncontiguous?) of a call, or NotWritable."""
    lines, noncontig = [], False
    staged = []
    for a, v in enumerate(positional):
        if isinstance(v, torch.Tensor):
            text, nc = tensor_yaml(v, "%d.%d" % (index, a), tf, torch)
            staged.append(("tensor", text, ("%d.%d" % (index, a), v)))
            noncontig |= nc
        elif isinstance(v, (list, tuple)) and v and all(isinstance(x, torch.Tensor) for x in v):
            items = []
            for j, x in enumerate(v):
                text, nc = tensor_yaml(x, "%d.%d.%d" % (index, a, j), tf, torch)
                items.append(("%d.%d.%d" % (index, a, j), x))
                noncontig |= nc
                staged.append(("item", text, items[-1]))
            staged.append(("list", len(v), None))
        elif isinstance(v, (list, tuple)) and any(isinstance(x, torch.Tensor) for x in v):
            raise NotWritable("unsupported_input", "a list mixing tensors and other values (argument %d)" % a)
        else:
            staged.append(("value", value_yaml(v, torch), None))
    kw = []
    for k in sorted(keywords):
        v = keywords[k]
        if k == "requires_grad" and v is False:
            continue  # the default; no ATen op takes it, and the values do not depend on it
        if k == "device" and (v == "cpu" or (isinstance(v, torch.device) and v.type == "cpu")):
            kw.append("      %s: privateuseone" % k)  # the device of the call: the device under test
            continue
        if isinstance(v, torch.Tensor) or (isinstance(v, (list, tuple)) and any(isinstance(x, torch.Tensor) for x in v)):
            raise NotWritable("unsupported_input", "a tensor keyword argument (%s)" % k)
        kw.append("      %s: %s" % (k, kwarg_yaml(v, torch)))
    # Everything is expressible: now the tensors go into the file.
    pending_items = []
    for kind, text, payload in staged:
        if kind == "tensor":
            tf.add(payload[0], payload[1], torch)
            lines.append("      - tensor: " + text)
        elif kind == "item":
            tf.add(payload[0], payload[1], torch)
            pending_items.append(text)
        elif kind == "list":
            lines.append("      - tensor_list:")
            lines.extend("          - " + t for t in pending_items)
            pending_items = []
        else:
            lines.append("      - " + text)
    return lines, kw, noncontig


# ---- selection ----------------------------------------------------------------------------------------------------

def read_config(path):
    """{op name: {dtype: (atol, rtol) or None}}, {dtype: (atol, rtol) or None} from a torch-spyre v2 config."""
    try:
        import yaml
    except ImportError:
        fail_usage("--config needs PyYAML in %s" % sys.executable, "%s -m pip install pyyaml" % sys.executable)
    try:
        with open(path) as f:
            doc = yaml.safe_load(f)
    except (OSError, yaml.YAMLError) as e:
        fail_usage("cannot read --config %s: %s" % (path, e), "name a torch-spyre test_suite_config file")
    g = ((doc or {}).get("test_suite_config") or {}).get("global") if isinstance(doc, dict) else None
    if not isinstance(g, dict) or not g.get("supported_ops"):
        fail_usage("%s: no test_suite_config.global.supported_ops" % path,
                   "list the ops to import: global: {supported_ops: [{name: torch.add, dtypes: [{name: float16}]}]}")

    def prec(entry):
        p = entry.get("precision") if isinstance(entry, dict) else None
        return (p.get("atol"), p.get("rtol")) if isinstance(p, dict) else None

    def dname(n):
        n = str(n).replace("torch.", "")
        if n not in DTYPE_FLAGS:
            fail_usage("%s: unknown dtype %r" % (path, n), "use one of " + ", ".join(sorted(set(DTYPE_FLAGS.values()))))
        return DTYPE_FLAGS[n]

    global_dtypes = {}
    for e in g.get("supported_dtypes") or []:
        global_dtypes[dname(e["name"] if isinstance(e, dict) else e)] = prec(e)
    ops = {}
    for e in g["supported_ops"]:
        name = e["name"] if isinstance(e, dict) else str(e)
        dts = {}
        for d in (e.get("dtypes") or []) if isinstance(e, dict) else []:
            dts[dname(d["name"] if isinstance(d, dict) else d)] = prec(d)
        ops[name] = dts
    return ops, global_dtypes


def op_matches(op, patterns, pyname):
    names = {entry_name(op), op.name, "torch." + op.name, op.aten_name or "", "aten::" + (op.aten_name or "")}
    if pyname:
        names.add(pyname)
    return any(fnmatch.fnmatchcase(n, p) for p in patterns for n in names if n)


def device_enabled_ops(imports, libs, torch):
    import importlib
    for lib in libs:
        torch.ops.load_library(lib)
    for m in imports:
        importlib.import_module(m)
    enabled = set()
    for name in torch._C._dispatch_get_all_op_names():
        if name.startswith("aten::") and torch._C._dispatch_has_kernel_for_dispatch_key(name, "PrivateUse1"):
            enabled.add(name)
    return enabled


# ---- one entry ----------------------------------------------------------------------------------------------------

# What the forked workers share: set by main before the pool starts.
STATE = {}


def wanted_dtypes(op, pyname):
    """[(dtype name, tolerance from a torch-spyre config or None)] of an entry."""
    dtypes, config_ops, config_dtypes = STATE["dtypes"], STATE["config_ops"], STATE["config_dtypes"]
    supported = {str(d).replace("torch.", "") for d in op.supported_dtypes("cpu")}
    if config_ops is None:
        return [(d, None) for d in (dtypes or DEFAULT_DTYPES) if d in supported]
    want = {}
    for k in config_keys(op, pyname):
        want.update(config_ops[k] or {})
    if not want:  # an op listed without dtypes takes the config's supported_dtypes
        want = dict(config_dtypes or {})
    order = dtypes or list(want)
    out = []
    for d in order:
        if d not in want or d not in supported:
            continue
        out.append((d, want[d] or (config_dtypes or {}).get(d)))
    return out


def config_keys(op, pyname):
    return [k for k in STATE["config_ops"] if k in ("torch." + op.name, op.name, entry_name(op), pyname,
                                                     "aten::" + (op.aten_name or ""))]


def import_entry(index):
    """Everything one OpInfo entry gives, as plain data (written by the main process in entry order)."""
    import torch
    op, pyname, variant = STATE["selected"][index]
    variant = variant or "function"
    name = entry_name(op)
    model = "opinfo_" + ident(name)
    op_mark = "opinfo__" + ident(name)
    out_dir = STATE["out_dir"]
    Recorder = STATE["recorder"]
    res = {"entry": {"name": name, "model": model, "op": pyname, "variant": variant, "samples": 0, "written": 0,
                     "dtypes": []},
           "cases": [], "not_written": [], "rules": [], "marks": {}, "reached": set(), "files": []}
    for dtype_name, config_tolerance in wanted_dtypes(op, pyname):
        res["entry"]["dtypes"].append(dtype_name)
        dtype = getattr(torch, dtype_name)
        tf = TensorFile("tensors/%s.%s.safetensors" % (model, dtype_name))

        def skip(reason, detail, i):
            res["not_written"].append({"entry": name, "dtype": dtype_name, "sample": i, "reason": reason,
                                       "detail": detail})

        try:
            torch.manual_seed(0)  # the same samples whichever process draws them, in whatever order
            samples = list(op.sample_inputs("cpu", dtype))
        except Exception as e:  # noqa: BLE001 (whatever the sample function raises is reported)
            res["entry"]["samples"] += 1
            skip("raises_on_cpu", "sample_inputs raised %s: %s" % (type(e).__name__, first_line(e)), None)
            continue
        tolerance, statuses, hints = judgement(op, dtype)
        if config_tolerance:
            tolerance = config_tolerance
        # Without a name, the entry's own function runs: its one ATen op may still be written.
        fn = call_variant(op, variant) if pyname else op.op
        for i, sample in enumerate(samples):
            res["entry"]["samples"] += 1
            case_name = "%s.%s.%d" % (name, dtype_name, i)
            unnamed = "op %s" % getattr(op.op, "__qualname__", type(op.op).__name__)
            calls = {}
            try:
                ops, random_op, out = run_sample(fn, sample, torch, Recorder, calls)
            except Exception as e:  # noqa: BLE001
                if pyname is None:
                    skip("no_callable_name", unnamed + " (and it raises on the CPU)", i)
                else:
                    skip("raises_on_cpu", "%s: %s" % (type(e).__name__, first_line(e)), i)
                continue
            if random_op:
                skip("random_op", "reaches " + ", ".join(ops), i)
                continue
            if variant == "method by name" and not lambda_agrees(op, sample, out, torch):
                skip("no_callable_name", "op %s gives other values than %s" % (op.op.__qualname__, pyname), i)
                continue
            why = judgeable(out, torch)
            if why is None and any(o.startswith(("aten::empty", "aten::new_empty")) for o in ops):
                # Uninitialised memory: the only outputs whose values two CPU runs of one call may disagree on.
                try:
                    _, _, again = run_sample(fn, sample, torch, Recorder)
                    if not same_output(out, again, torch):
                        why = "an output that differs between two CPU runs of the same call (uninitialised memory)"
                except Exception as e:  # noqa: BLE001
                    why = "the second CPU run raised %s" % type(e).__name__
            if why:
                skip("unjudgeable_output", why, i)
                continue
            case_op, how = pyname, variant
            aten = aten_call(calls, torch)
            try:
                if pyname is None:
                    raise NotWritable("no_callable_name", unnamed + (" (it reached %d ATen calls)" % calls["count"]))
                if aten and prefer_aten(fn):
                    raise NotWritable("unsupported_input", "a Python-level function")
                case_op, keywords = python_level_keywords(pyname, sample.kwargs)
                inputs, kwargs, noncontig = argument_lines([sample.input, *sample.args], keywords, i, tf, torch)
            except NotWritable as e:
                # The one ATen op the sample reached, called with the arguments it got, when the Python call
                # cannot be written (or is a Python function whose keywords no ATen op takes: max_pool's
                # return_indices): the same computation on the same tensors.
                try:
                    if not aten:
                        raise e
                    case_op, how = aten[0], "the ATen op it reached"
                    inputs, kwargs, noncontig = argument_lines(aten[1], aten[2], i, tf, torch)
                except NotWritable as e2:
                    skip(e2.reason, e2.detail, i)
                    continue
            aten_marks = []
            for o in ops:
                m = "aten__" + ident(o.replace("aten::", ""))
                aten_marks.append(m)
                res["marks"][m] = "cases whose OpInfo sample reached %s on the CPU" % o
                res["reached"].add(o)
            desc = "OpInfo %s sample %d at %s (%s)" % (name, i, dtype_name,
                                                    variant + " variant" if how == variant else "called as " + case_op
                                                    + ", the one ATen op its " + variant + " variant reached")
            if getattr(sample, "name", ""):
                desc += ": " + sample.name
            if hints:
                desc += "; PyTorch's tests also record " + ", ".join(sorted(set(hints)))
            lines = ["  - name: " + case_name, "    op: " + case_op, "    dtype: " + dtype_name,
                     "    description: " + yaml_str(desc)]
            case_marks = ["opinfo", op_mark] + aten_marks + (["noncontiguous"] if noncontig else [])
            lines.append("    marks: [%s]" % ", ".join(case_marks))
            if tolerance is not None:
                atol, rtol = tolerance
                if atol is not None:
                    lines.append("    atol: " + yaml_float(float(atol)))
                if rtol is not None:
                    lines.append("    rtol: " + yaml_float(float(rtol)))
            if inputs:
                lines.append("    inputs:")
                lines.extend(inputs)
            else:
                lines.append("    inputs: []")
            if kwargs:
                lines.append("    kwmap:")
                lines.extend(kwargs)
            res["cases"].append("\n".join(lines))
            res["entry"]["written"] += 1
            for kind, reason in statuses:
                res["rules"].append((kind, "%s::%s" % (model, case_name), reason))
        if tf.header:
            tf.write(out_dir)
            res["files"].append(tf.rel_path)
    if res["cases"]:
        res["marks"][op_mark] = "cases of OpInfo entry %s" % name
    return res


def python_level_keywords(pyname, kwargs):
    """(op, keywords) with the keywords that only a Python function takes turned into the op that does the same:
    F.max_poolNd's return_indices (False: the op itself; True: F.max_poolNd_with_indices)."""
    if pyname.startswith("torch.nn.functional.max_pool") and "return_indices" in kwargs:
        kwargs = dict(kwargs)
        if kwargs.pop("return_indices"):
            pyname += "_with_indices"
    return pyname, kwargs


def aten_call(calls, torch):
    """(op name, positional, keywords) of the sample's only ATen call, or None."""
    if calls.get("count") != 1 or calls.get("first") is None:
        return None
    func, args, kwargs = calls["first"]
    schema_name = func._schema.name
    overload = func._overloadname
    name = schema_name + ("" if overload == "default" else "." + overload)
    if not name.startswith("aten::"):
        return None
    return name, list(args), {k: (privateuse_device(v, torch) if k == "device" else v) for k, v in kwargs.items()}


def prefer_aten(fn):
    """A function written in Python (F.max_pool2d, torch.unique): its keywords need not be those of any ATen op."""
    import inspect
    return inspect.isfunction(fn)


def privateuse_device(v, torch):
    return "privateuseone" if isinstance(v, torch.device) and v.type == "cpu" else v


def lambda_agrees(op, sample, out, torch):
    try:
        _, _, theirs = run_sample(op.op, sample, torch, STATE["recorder"])
    except Exception:  # noqa: BLE001
        return False
    return same_output(out, theirs, torch)


def first_line(e):
    return str(e).strip().split("\n")[0][:200]


# ---- main ---------------------------------------------------------------------------------------------------------

def parse_args():
    p = argparse.ArgumentParser(prog="opcheck import-opinfo")
    p.add_argument("-o", "--output", required=True)
    p.add_argument("--ops", default="")
    p.add_argument("--dtypes", default="")
    p.add_argument("--config", default="")
    p.add_argument("--device-ops", action="store_true")
    p.add_argument("--device-import", action="append", default=[])
    p.add_argument("--device-lib", action="append", default=[])
    p.add_argument("-j", "--jobs", type=int, default=0)
    p.add_argument("--quiet", action="store_true")
    return p.parse_args()


def select_entries(op_db, patterns, torch):
    selected = []
    for op in op_db:
        pyname, variant = python_name(op, torch)
        if patterns and not op_matches(op, patterns, pyname):
            continue
        if STATE["config_ops"] is not None and not config_keys(op, pyname):
            continue
        selected.append((op, pyname, variant))
    return selected


def main():
    a = parse_args()
    try:
        import numpy  # noqa: F401  (torch.testing._internal imports it)
        import expecttest  # noqa: F401
    except ImportError as e:
        fail_usage("import-opinfo needs %s in %s (torch.testing._internal imports it)" % (e.name, sys.executable),
                   "scripts/test.sh installs it (scripts/requirements-test.txt), or: %s -m pip install numpy "
                   "expecttest==0.3.0" % sys.executable)
    t0 = time.time()
    import torch
    from torch.testing._internal.common_methods_invocations import op_db
    t_import = time.time() - t0

    dtypes = None
    if a.dtypes:
        dtypes = []
        for d in a.dtypes.split(","):
            d = d.strip().replace("torch.", "")
            if d not in DTYPE_FLAGS:
                fail_usage("unknown dtype %r in --dtypes" % d, "use " + ", ".join(sorted(DTYPE_FLAGS)))
            dtypes.append(DTYPE_FLAGS[d])
    STATE.update(dtypes=dtypes, config_ops=None, config_dtypes=None, out_dir=a.output, recorder=make_recorder(torch))
    if a.config:
        STATE["config_ops"], STATE["config_dtypes"] = read_config(a.config)
    enabled = None
    if a.device_ops:
        if not a.device_import and not a.device_lib:
            fail_usage("--device-ops needs the device: --device-import MODULE or --device-lib LIB",
                       "name the Python module (or library) that registers the device under test")
        try:
            enabled = device_enabled_ops(a.device_import, a.device_lib, torch)
        except Exception as e:  # noqa: BLE001 (the module's own error, whatever it is)
            fail_usage("setting up the device for --device-ops: %s: %s" % (type(e).__name__, first_line(e)),
                       "check that the module imports in %s" % sys.executable)
    patterns = [x.strip() for x in a.ops.split(",") if x.strip()]
    STATE["selected"] = select_entries(op_db, patterns, torch)
    if not STATE["selected"]:
        fail_usage("no OpInfo entry matches the selection", "check --ops/--config; names are OpInfo names (add, "
                   "nn.functional.relu) or ATen ops (aten::add), globs allowed")
    os.makedirs(os.path.join(a.output, "tensors"), exist_ok=True)

    import warnings
    warnings.simplefilter("ignore")  # the ops' own warnings on odd samples (std of one element, ...) say nothing here
    jobs = a.jobs if a.jobs > 0 else min(2, os.cpu_count() or 1)
    t_start = time.time()
    n_sel = len(STATE["selected"])
    if jobs > 1:
        import multiprocessing
        torch.set_num_threads(1)
        pool = multiprocessing.get_context("fork").Pool(jobs)
        results = pool.imap(import_entry, range(n_sel), chunksize=1)
    else:
        pool = None
        results = (import_entry(i) for i in range(n_sel))
    report = {"torch": torch.__version__, "entries": [], "not_written": [], "reasons": REASONS}
    rules, marks = [], {"opinfo": "cases imported from PyTorch's OpInfo database (opcheck import-opinfo)"}
    for n, res in enumerate(results, 1):
        e = res["entry"]
        if not a.quiet:
            sys.stderr.write("opinfo: op %d of %d: %s (%d samples, %d written)\n"
                             % (n, n_sel, e["name"], e["samples"], e["written"]))
            sys.stderr.flush()
        if enabled is not None and not (res["reached"] & enabled):
            for f in res["files"]:
                os.remove(os.path.join(a.output, f))
            continue  # no kernel of the device: not one of its ops
        report["entries"].append(e)
        report["not_written"].extend(res["not_written"])
        rules.extend(res["rules"])
        marks.update(res["marks"])
        if res["cases"]:
            head = ["# Written by `opcheck import-opinfo` from torch %s's OpInfo entry %s: one case per sample and "
                    "dtype." % (torch.__version__, e["name"]),
                    "model: " + e["model"],
                    "description: " + yaml_str("PyTorch OpInfo %s (%s), the samples of sample_inputs on the CPU"
                                               % (e["name"], e["op"])),
                    "cases:"]
            with open(os.path.join(a.output, e["model"] + ".yaml"), "w") as f:
                f.write("\n".join(head + res["cases"]) + "\n")
    if pool is not None:
        pool.close()
        pool.join()

    counts = {"ops": len(report["entries"]), "samples": sum(e["samples"] for e in report["entries"]),
              "written": sum(e["written"] for e in report["entries"]), "not_written": len(report["not_written"]),
              "by_reason": {k: 0 for k in REASONS}}
    for x in report["not_written"]:
        counts["by_reason"][x["reason"]] += 1
    report["counts"] = counts
    report["seconds"] = {"import": round(t_import, 1), "samples": round(time.time() - t_start, 1)}
    write_status_config(a.output, rules)
    with open(os.path.join(a.output, "markers.yaml"), "w") as f:
        f.write("# Written by `opcheck import-opinfo`: the marks of the cases beside this file.\nmarkers:\n")
        for m in sorted(marks):
            f.write("  %s: %s\n" % (m, yaml_str(marks[m])))
    with open(os.path.join(a.output, "opinfo-report.json"), "w") as f:
        json.dump(report, f, indent=1, sort_keys=True)
        f.write("\n")


def write_status_config(out_dir, rules):
    with open(os.path.join(out_dir, "opcheck.yaml"), "w") as f:
        f.write("# Written by `opcheck import-opinfo`: the skips and xfails of PyTorch's OpInfo entries that apply to "
                "the CPU\n# (device type cpu or none) in TestCommon.test_compare_cpu. An xfail is not strict: opcheck "
                "compares the device\n# with the CPU itself, so a failure PyTorch expects of the CPU need not show.\n")
        f.write("rules:\n" if rules else "rules: []\n")
        for kind, case_id, reason in rules:
            f.write("  - id: %s\n" % yaml_str(re.sub(r"([*?\[\]\\])", r"\\\1", case_id)))
            f.write("    status: %s\n" % ("xfail" if kind == "xfail" else "skip"))
            if kind == "xfail":
                f.write("    strict: false\n")
            f.write("    reason: %s\n" % yaml_str(reason))


if __name__ == "__main__":
    main()
