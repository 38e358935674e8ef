# opcheck import-opinfo: PyTorch's OpInfo samples (torch.testing._internal.common_methods_invocations.op_db) as
# opcheck manifests. `opcheck import-opinfo` runs this file in the Python of the torch opcheck was built against and
# then checks what it wrote (every case loads, its op resolves and its arguments bind); see docs/opinfo.md.
#
# Writes into OUT:
#   opinfo_<entry>.yaml            one manifest per OpInfo entry, one case per sample and dtype (one per ATen call
#                                  of a sample whose own call cannot be written)
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


def install_fix(packages):
    """The Fix for packages this interpreter lacks: install them into it, or name another with OPCHECK_PYTHON (the
    interpreter opcheck hosts; without it, the active virtual environment's, else the one opcheck was built with)."""
    chosen = os.environ.get("OPCHECK_PYTHON")
    how = "OPCHECK_PYTHON=%s" % chosen if chosen else "not set, so opcheck took %s" % sys.executable
    return ("%s -m pip install %s; or set OPCHECK_PYTHON to an interpreter that has them and the torch opcheck was "
            "built against (OPCHECK_PYTHON is %s)" % (sys.executable, packages, how))


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


class StagedTensors:
    """Tensors bound for a TensorFile once every call of a sample is known to be writable (commit), else dropped."""

    def __init__(self, tf):
        self.rel_path = tf.rel_path
        self.pending = []

    def add(self, key, t, torch):
        self.pending.append((key, t))

    def commit(self, tf, torch):
        for key, t in self.pending:
            tf.add(key, t, torch)


# Tensor arguments PyTorch requires on the CPU whatever the device (its samples keep them there): op -> position.
HOST_ARGUMENTS = {"tensor_split": 1}


def op_base_name(op):
    """tensor_split of torch.tensor_split, torch.Tensor.tensor_split and aten::tensor_split.tensor_indices_or_sections."""
    if op.startswith("aten::"):
        return op[6:].split(".")[0]
    return op.rsplit(".", 1)[-1]


def tensor_yaml(t, key, tf, torch, host=False):
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
    if host:
        fields.append("device: cpu")
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
    if isinstance(v, (torch.memory_format, torch.layout)):
        return "value: " + str(v).replace("torch.", "")  # opcheck's binder reads contiguous_format, strided
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
        def __init__(self, record_all=False):
            super().__init__()
            self.ops = []
            self.random = False
            self.calls = 0
            self.first = None  # (op, positional, keywords) of the first call, its tensors copied before it ran
            self.all = [] if record_all else None  # every call so, in order

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            name = str(func.name()) if hasattr(func, "name") else str(func)
            if name not in self.ops:
                self.ops.append(name)
            self.calls += 1
            if self.calls == 1 or self.all is not None:
                call = (func, clone_args(tuple(args), torch), clone_args(dict(kwargs or {}), torch))
                if self.calls == 1:
                    self.first = call
                if self.all is not None:
                    self.all.append(call)
            if torch.Tag.nondeterministic_seeded in getattr(func, "tags", ()):
                self.random = True
            return func(*args, **(kwargs or {}))

    return Recorder


def judgeable(out, torch, depth=0):
    if out is None or isinstance(out, (bool, int, float)):
        return None
    if isinstance(out, torch.Tensor):
        if out.layout not in (torch.strided, torch.sparse_coo, torch.sparse_csr, torch.sparse_csc, torch.sparse_bsr,
                              torch.sparse_bsc):
            return "a %s output" % out.layout
        if out.dtype not in (torch.float32, torch.float16, torch.bfloat16, torch.float64, torch.int8, torch.int16,
                             torch.int32, torch.int64, torch.uint8, torch.uint16, torch.uint32, torch.uint64,
                             torch.bool, torch.complex32, torch.complex64, torch.complex128):
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
    """The same values in the same sizes, strides and storage offset (as opcheck builds it from the manifest; a dim of
    stride 0, an expanded one, is filled from its first index)."""
    t = t.detach()
    if t.layout != torch.strided:
        return t.clone()  # sparse: no strides to keep (tensor_yaml then says no manifest holds it)
    extent = t.storage_offset() + sum((s - 1) * st for s, st in zip(t.shape, t.stride()) if s > 0) + 1 \
        if t.numel() else t.storage_offset()
    base = torch.zeros(max(extent, 0), dtype=t.dtype)
    out = torch.as_strided(base, t.shape, t.stride(), t.storage_offset())
    dst, src = out, t
    for d, (size, stride) in enumerate(zip(t.shape, t.stride())):
        if stride == 0 and size > 1:
            dst, src = dst.narrow(d, 0, 1), src.narrow(d, 0, 1)
    try:
        dst.copy_(src)
    except RuntimeError:
        # Distinct indices that share memory (other than stride 0), a layout no manifest holds: the values, contiguous.
        return t.clone(memory_format=torch.contiguous_format)
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

def argument_lines(positional, keywords, index, tf, torch, op=""):
    """(input lines, kwmap lines, noncontiguous?) of a call of `op`, or NotWritable."""
    lines, noncontig = [], False
    staged = []
    host_position = HOST_ARGUMENTS.get(op_base_name(op)) if op else None
    for a, v in enumerate(positional):
        if isinstance(v, torch.Tensor):
            text, nc = tensor_yaml(v, "%s.%d" % (index, a), tf, torch, host=a == host_position)
            staged.append(("tensor", text, ("%s.%d" % (index, a), v)))
            noncontig |= nc
        elif isinstance(v, (list, tuple)) and v and all(isinstance(x, torch.Tensor) for x in v):
            items = []
            for j, x in enumerate(v):
                text, nc = tensor_yaml(x, "%s.%d.%d" % (index, a, j), tf, torch)
                items.append(("%s.%d.%d" % (index, a, j), x))
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
        if isinstance(v, torch.Tensor):
            # A tensor keyword argument (searchsorted's sorter): an input passed by name.
            key = "%s.%s" % (index, k)
            text, nc = tensor_yaml(v, key, tf, torch)
            staged.append(("keyword tensor", text, (key, v, k)))
            noncontig |= nc
            continue
        if isinstance(v, (list, tuple)) and any(isinstance(x, torch.Tensor) for x in v):
            raise NotWritable("unsupported_input", "a list of tensors as keyword argument (%s)" % k)
        kw.append("      %s: %s" % (k, kwarg_yaml(v, torch)))
    # Everything is expressible: now the tensors go into the file.
    pending_items = []
    for kind, text, payload in staged:
        if kind == "tensor":
            tf.add(payload[0], payload[1], torch)
            lines.append("      - tensor: " + text)
        elif kind == "keyword tensor":
            tf.add(payload[0], payload[1], torch)
            lines.append("      - keyword: " + payload[2])
            lines.append("        tensor: " + text)
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
        fail_usage("--config needs PyYAML in %s" % sys.executable, install_fix("pyyaml"))
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
                     "as_calls": 0, "cases": 0, "dtypes": []},
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
        ctx = {"res": res, "tf": tf, "model": model, "name": name, "dtype": dtype_name, "op_mark": op_mark,
               "variant": variant, "tolerance": tolerance, "statuses": statuses, "hints": hints, "torch": torch}
        for i, sample in enumerate(samples):
            res["entry"]["samples"] += 1
            case_name = "%s.%s.%d" % (name, dtype_name, i)
            unnamed = "op %s" % getattr(op.op, "__qualname__", type(op.op).__name__)
            calls = {}
            sparse = sparse_input(sample, torch)
            if sparse:
                skip("unsupported_input", "a %s tensor" % sparse, i)  # what tensor_yaml would say, before the runs
                continue
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
                why = NotWritable("no_callable_name", "op %s gives other values than %s" % (op.op.__qualname__, pyname))
                try:
                    write_aten_calls(op.op, sample, i, why, ctx)
                except NotWritable as e2:
                    skip(e2.reason, e2.detail, i)
                continue
            why = judgeable(out, torch)
            if why is None and not only_fresh_memory(ops) and (any(is_allocation(o) for o in ops)
                                                               or isinstance(out, (tuple, list))):
                # Uninitialised memory: the only outputs whose values two CPU runs of one call may disagree on (an
                # empty op's, or a kernel's own buffer returned beside the result: ctc_loss's log_alpha).
                try:
                    if not stable_output(out, lambda: run_sample(fn, sample, torch, Recorder)[2], torch):
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
                if pyname in STATE["unresolvable"]:
                    raise NotWritable("unbound_call", "opcheck does not resolve %s" % pyname)
                unbound = STATE["as_calls"].get(name, {}).get(dtype_name, {}).get(str(i))
                if unbound is not None:
                    raise NotWritable("unbound_call", "opcheck cannot bind the call as written (%s)" % unbound)
                case_op, keywords = python_level_keywords(pyname, sample.kwargs)
                inputs, kwargs, noncontig = argument_lines([sample.input, *sample.args], keywords, i, tf, torch,
                                                           case_op)
            except NotWritable as e:
                # The one ATen op the sample reached, called with the arguments it got, when the Python call
                # cannot be written (or is a Python function whose keywords no ATen op takes: max_pool's
                # return_indices): the same computation on the same tensors.
                try:
                    reached_none = pyname is None and calls.get("count", 0) == 0
                    outer = outer_torch_call(fn, sample, out, torch) if reached_none else None
                    if outer:
                        # A lambda that reached no ATen op (dropout with training off returns its input): the one
                        # torch function it called, with the arguments it passed.
                        case_op, how = outer[0], "the torch function it called"
                        inputs, kwargs, noncontig = argument_lines(outer[1], outer[2], i, tf, torch, case_op)
                    elif not aten:
                        if calls.get("count", 0) > 1:
                            write_aten_calls(fn, sample, i, e, ctx)
                            continue
                        raise e
                    else:
                        case_op, how = aten[0], "the ATen op it reached"
                        check_aten_output(calls["first"], torch)
                        inputs, kwargs, noncontig = argument_lines(aten[1], aten[2], i, tf, torch, case_op)
                except NotWritable as e2:
                    skip(e2.reason, e2.detail, i)
                    continue
            desc = "OpInfo %s sample %d at %s (%s)" % (name, i, dtype_name, how_called(how, variant, case_op))
            add_case(ctx, case_name, case_op, desc, sample, ops, inputs, kwargs, noncontig,
                     deterministic=deterministic_sample(ops))
            res["entry"]["written"] += 1
        if tf.header:
            tf.write(out_dir)
            res["files"].append(tf.rel_path)
    if res["cases"]:
        res["marks"][op_mark] = "cases of OpInfo entry %s" % name
    res["entry"]["cases"] = len(res["cases"])
    return res


def sparse_input(sample, torch):
    """The layout of the sample's first sparse tensor (no manifest holds one), else None."""
    for v in (sample.input, *sample.args, *sample.kwargs.values()):
        for t in (v if isinstance(v, (list, tuple)) else (v,)):
            if isinstance(t, torch.Tensor) and t.layout != torch.strided:
                return t.layout
    return None


def how_called(how, variant, case_op):
    if how == variant:
        return variant + " variant"
    if how == "the torch function it called":
        return "called as %s, the one torch function the entry's Python function called" % case_op
    return "called as %s, the one ATen op its %s variant reached" % (case_op, variant)


def outer_torch_call(fn, sample, out, torch):
    """(Python name, positional, keywords) of the one torch function a call of `fn` made at the top (seen by a
    TorchFunctionMode, attribute reads aside), when its result is what `fn` returned (`out`, compared by value) and
    opcheck can name it; else None."""
    from torch.overrides import TorchFunctionMode

    class Outer(TorchFunctionMode):
        def __init__(self):
            super().__init__()
            self.calls, self.depth = [], 0

        def __torch_function__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            top = self.depth == 0 and getattr(func, "__name__", "") != "__get__"
            if top:
                self.calls.append([func, clone_args(tuple(args), torch), clone_args(dict(kwargs), torch), None])
            self.depth += 1
            try:
                result = func(*args, **kwargs)
            finally:
                self.depth -= 1
            if top:
                self.calls[-1][3] = result
            return result

    inp, args, kwargs = clone_args((sample.input, sample.args, sample.kwargs), torch)
    mode = Outer()
    try:
        with torch.no_grad(), mode:
            fn(inp, *args, **kwargs)
    except Exception:  # noqa: BLE001 (the sample ran once already; a second run that raises names nothing)
        return None
    if len(mode.calls) != 1 or not same_output(mode.calls[0][3], out, torch):
        return None
    func, positional, keywords, _ = mode.calls[0]
    name = getattr(func, "__name__", "")
    for prefix, namespace in (("torch.nn.functional.", torch.nn.functional), ("torch.", torch)):
        if name and getattr(namespace, name, None) is func:
            return prefix + name, positional, keywords
    return None


def is_allocation(op):
    """An op whose output is memory it leaves unwritten (empty, empty_like, new_empty, ...)."""
    return op.startswith(("aten::empty", "aten::new_empty"))


def deterministic_sample(ops):
    """Whether a sample's values cannot vary from run to run: it reached no random op (those are not written at all)
    and no allocation whose memory it may return unwritten."""
    return not any(is_allocation(o) for o in ops)


def judged_ops(name):
    """ATen ops (without overload) of one of the judge's tables, as opcheck hands them over
    (common/backend_freedoms_table.cpp); none when the importer runs on its own."""
    return frozenset(filter(None, os.environ.get(name, "").split(",")))


# The ops whose outputs opcheck compares by shape, dtype and strides only (empty and its kin), and the unique ops
# whose values it takes in the device's order: read once, opcheck sets them before the importer starts.
UNINITIALISED_OPS = judged_ops("OPCHECK_OPINFO_UNINITIALISED_OPS")
UNORDERED_OPS = judged_ops("OPCHECK_OPINFO_UNORDERED_OPS")


def only_fresh_memory(ops):
    """Whether a sample reached nothing but ops whose output opcheck compares without its values."""
    return bool(ops) and all(o.split(".")[0] in UNINITIALISED_OPS for o in ops)


def skip_answered(reason, case_op, ops):
    """How opcheck's judge answers what an OpInfo skip is about itself (docs/judgement.md), in words for the case's
    description; None when it does not: the skip is written."""
    if "Output order is undefined when sorted=False" in reason and case_op.split(".")[0] in UNORDERED_OPS:
        return "opcheck takes the values in the device's order"
    if re.search(r"non-?deterministic", reason) and only_fresh_memory(ops):
        return "opcheck compares the uninitialised output's shape, dtype and strides only"
    return None


def add_case(ctx, case_name, case_op, desc, sample, ops, inputs, kwargs, noncontig, extra_marks=(),
             deterministic=False):
    """Appends one case block (and its status rules and marks) to the entry's result. A skip that OpInfo gives
    because the output is non-deterministic (dropout inside multi_head_attention_forward) is not written for a
    `deterministic` sample: the importer checked what the skip is about, and the sample reached no random op."""
    res = ctx["res"]
    aten_marks = []
    for o in ops:
        m = "aten__" + ident(o.replace("aten::", ""))
        aten_marks.append(m)
        res["marks"][m] = "cases whose OpInfo sample reached %s on the CPU" % o
        res["reached"].add(o)
    if getattr(sample, "name", ""):
        desc += ": " + sample.name
    if ctx["hints"]:
        desc += "; PyTorch's tests also record " + ", ".join(sorted(set(ctx["hints"])))
    answered = {reason: skip_answered(reason, case_op, ops) for kind, reason in ctx["statuses"] if kind == "skip"}
    if any(answered.values()):
        desc += "; OpInfo's CPU skip is not applied: " + "; ".join(sorted({a for a in answered.values() if a}))
    lines = ["  - name: " + case_name, "    op: " + case_op, "    dtype: " + ctx["dtype"],
             "    description: " + yaml_str(desc)]
    case_marks = ["opinfo", ctx["op_mark"]] + aten_marks + list(extra_marks) + (["noncontiguous"] if noncontig else [])
    lines.append("    marks: [%s]" % ", ".join(case_marks))
    if ctx["tolerance"] is not None:
        atol, rtol = ctx["tolerance"]
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
    for kind, reason in ctx["statuses"]:
        if kind == "skip" and deterministic and re.search(r"non-?deterministic", reason):
            continue
        if kind == "skip" and answered[reason]:
            continue
        res["rules"].append((kind, "%s::%s" % (ctx["model"], case_name), reason))


def aten_name(func):
    overload = func._overloadname
    return func._schema.name + ("" if overload == "default" else "." + overload)


class filling_uninitialised:
    """PyTorch's deterministic mode with fill_uninitialized_memory: every tensor the CPU allocates starts as NaN (or
    the largest integer), so an output element no kernel wrote differs from the first run's, whatever the allocator
    hands back (two plain runs may get the same stale bytes). warn_only: no op raises for lacking a deterministic
    variant."""

    def __init__(self, torch):
        self.torch = torch

    def __enter__(self):
        t = self.torch
        self.saved = (t.are_deterministic_algorithms_enabled(), t.is_deterministic_algorithms_warn_only_enabled(),
                      t.utils.deterministic.fill_uninitialized_memory)
        t.use_deterministic_algorithms(True, warn_only=True)
        t.utils.deterministic.fill_uninitialized_memory = True

    def __exit__(self, *exc):
        t = self.torch
        t.use_deterministic_algorithms(self.saved[0], warn_only=self.saved[1])
        t.utils.deterministic.fill_uninitialized_memory = self.saved[2]
        return False


def stable_output(first, run, torch):
    """Whether `first`, an output of run(), holds no memory its op left unwritten: compared with a run with
    uninitialised memory filled (NaN, the largest integer), and with a plain run while both earlier outputs are held
    (so that it gets other memory than the first: a plain run may get back the filled run's NaN, and look written).
    Only a difference at an element one of the runs holds the fill value at counts: an op whose results vary in their
    last bits from run to run (linalg.lstsq's gelsy) writes every element, and the run judges that variation."""
    with filling_uninitialised(torch):
        filled = run()
    scrub(filled, torch)
    second = run()
    return not unwritten_difference(first, filled, torch) and not unwritten_difference(first, second, torch)


def unwritten_difference(a, b, torch):
    """Whether outputs a and b differ at an element where one of them holds what fill_uninitialized_memory writes
    (NaN for floating and complex, the largest value for integers; any difference for bool), or in their structure."""
    if isinstance(a, torch.Tensor):
        if not isinstance(b, torch.Tensor) or a.shape != b.shape or a.dtype != b.dtype:
            return True
        a, b = a.detach(), b.detach()
        if a.dtype == torch.bool:
            return not torch.equal(a, b)
        if a.dtype.is_floating_point or a.dtype.is_complex:
            if a.dtype.is_complex:
                a, b = torch.view_as_real(a.resolve_conj()), torch.view_as_real(b.resolve_conj())
            a, b = a.double(), b.double()  # complex32's real view is float16: isnan and comparisons on its float64 form
            filled = a.isnan() | b.isnan()
            differ = (a != b) & ~(a.isnan() & b.isnan())
        else:
            top = torch.iinfo(a.dtype).max
            filled = (a == top) | (b == top)
            differ = a != b
        return bool((filled & differ).any())
    if isinstance(a, (tuple, list)):
        return (not isinstance(b, (tuple, list)) or len(a) != len(b)
                or any(unwritten_difference(x, y, torch) for x, y in zip(a, b)))
    return not same_output(a, b, torch)


def scrub(out, torch):
    """After a filled run: memory of the sizes its outputs have, written with zeros and freed, so that the next plain
    run's unwritten buffers (the allocator hands back the block freed last) hold zeros, not this run's NaN filling,
    which would make them look written."""
    tensors = [out] if isinstance(out, torch.Tensor) else [t for t in (out if isinstance(out, (tuple, list)) else ())
                                                           if isinstance(t, torch.Tensor)]
    for t in tensors:
        if t.layout == torch.strided and t.numel():
            torch.zeros(t.untyped_storage().nbytes(), dtype=torch.uint8)


def replay(func, args, kwargs, torch):
    a, k = clone_args((args, kwargs), torch)
    with torch.no_grad():
        return func(*a, **k)


def aten_keywords(func, kwargs, torch):
    """The call's keywords without those that say what the schema's default says (layout=torch.strided,
    pin_memory=False: values no manifest needs), the device as the device under test."""
    defaults = {a.name: a.default_value for a in func._schema.arguments if a.has_default_value()}
    out = {}
    for k, v in kwargs.items():
        if k == "layout" and v == torch.strided:
            continue
        if k == "pin_memory" and v is False:
            continue
        if k in defaults and not isinstance(v, torch.Tensor) and type(v) is type(defaults[k]) and v == defaults[k]:
            continue
        out[k] = privateuse_device(v, torch) if k == "device" else v
    return out


def write_aten_calls(fn, sample, index, why, ctx):
    """A sample whose Python call cannot be written (`why`), written as the ATen calls it made on the CPU, each a case
    `<entry>.<dtype>.<sample>.call<k>` with the tensors that call got, copied before it ran: the same kernels on the
    same values. Calls whose output two runs of the same arguments disagree on (allocations: empty, new_empty) are
    left out. NotWritable when a call cannot be written (nothing of the sample is written then)."""
    torch = ctx["torch"]
    rec = STATE["recorder"](record_all=True)
    inp, args, kwargs = clone_args((sample.input, sample.args, sample.kwargs), torch)
    try:
        # Filled: a call that takes an allocation's memory (an out= buffer) gets the same bytes in every import.
        with torch.no_grad(), filling_uninitialised(torch), rec:
            fn(inp, *args, **kwargs)
    except Exception as e:  # noqa: BLE001
        raise NotWritable(why.reason, why.detail + "; its ATen calls raise when recorded: %s" % first_line(e))
    staged = StagedTensors(ctx["tf"])
    blocks, left_out = [], 0
    for k, (func, cargs, ckwargs) in enumerate(rec.all):
        op_name = aten_name(func)
        if not op_name.startswith("aten::"):
            raise NotWritable("unbound_call", "%s; its call %d reaches %s, which is no ATen op" % (why.detail, k, op_name))
        problem = call_output_problem(func, cargs, ckwargs, torch)
        if problem:
            reason, what, unstable = problem
            if unstable and is_allocation(op_name):
                left_out += 1  # an allocation's uninitialised memory: the calls that fill it are the cases
                continue
            raise NotWritable(reason, "%s; its call %d (%s) %s" % (why.detail, k, op_name, what))
        try:
            inputs, kws, noncontig = argument_lines(list(cargs), aten_keywords(func, ckwargs, torch),
                                                    "%d.call%d" % (index, k), staged, torch, op_name)
        except NotWritable as e:
            raise NotWritable(e.reason, "%s; its call %d (%s): %s" % (why.detail, k, op_name, e.detail))
        blocks.append((k, op_name, inputs, kws, noncontig))
    if not blocks:
        raise NotWritable("unjudgeable_output", why.detail + "; every ATen call it makes allocates memory it leaves "
                          "uninitialised")
    staged.commit(ctx["tf"], torch)
    res = ctx["res"]
    res["marks"]["opinfo_call"] = ("cases that are one ATen call of an OpInfo sample whose Python call cannot be "
                                   "written (docs/opinfo.md)")
    for k, op_name, inputs, kws, noncontig in blocks:
        desc = ("OpInfo %s sample %d at %s: ATen call %d of %d its %s variant made (%s), written as calls since %s"
                % (ctx["name"], index, ctx["dtype"], k, len(rec.all), ctx["variant"], op_name, why.detail))
        if left_out:
            desc += " (%d allocation%s left out)" % (left_out, "" if left_out == 1 else "s")
        add_case(ctx, "%s.%s.%d.call%d" % (ctx["name"], ctx["dtype"], index, k), op_name, desc, sample, [op_name],
                 inputs, kws, noncontig, extra_marks=["opinfo_call"], deterministic=deterministic_sample(rec.ops))
    res["entry"]["written"] += 1
    res["entry"]["as_calls"] += 1


def python_level_keywords(pyname, kwargs):
    """(op, keywords) with the keywords that only a Python function takes turned into the op that does the same:
    F.max_poolNd's return_indices (False: the op itself; True: F.max_poolNd_with_indices)."""
    if pyname.startswith("torch.nn.functional.max_pool") and "return_indices" in kwargs:
        kwargs = dict(kwargs)
        if kwargs.pop("return_indices"):
            pyname += "_with_indices"
    return pyname, kwargs


def call_output_problem(func, args, kwargs, torch):
    """None when an ATen call's own output (the op may return more than the Python function gave: _ctc_loss's
    log_alpha) is judgeable and what every run gives (stable_output), else (reason, what is wrong, unstable?)."""
    try:
        first = replay(func, args, kwargs, torch)
        stable = only_fresh_memory([aten_name(func)]) or stable_output(
            first, lambda: replay(func, args, kwargs, torch), torch)
    except Exception as e:  # noqa: BLE001
        return "raises_on_cpu", "raises when run again: %s" % first_line(e), False
    bad = judgeable(first, torch)
    if bad:
        return "unjudgeable_output", "gives %s" % bad, False
    if not stable:
        return ("unjudgeable_output", "gives an output that differs between two CPU runs of the same arguments "
                "(uninitialised memory)", True)
    return None


def check_aten_output(call, torch):
    """NotWritable when the sample's one ATen call has a call_output_problem."""
    func, args, kwargs = call
    problem = call_output_problem(func, args, kwargs, torch)
    if problem:
        raise NotWritable(problem[0], "its ATen call %s %s" % (aten_name(func), problem[1]))


def aten_call(calls, torch):
    """(op name, positional, keywords) of the sample's only ATen call, or None."""
    if calls.get("count") != 1 or calls.get("first") is None:
        return None
    func, args, kwargs = calls["first"]
    name = aten_name(func)
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
    # opcheck's second pass: {entry: {dtype: {sample: why}}} of samples whose call did not bind, written as ATen calls.
    p.add_argument("--as-calls", default="")
    return p.parse_args()


def unresolvable_names(names):
    """The op names opcheck's resolver does not know, asked of the opcheck that runs this importer (one JSON line each
    way over the pipes of OPCHECK_OPINFO_RESOLVE_FDS); none when run otherwise."""
    fds = os.environ.get("OPCHECK_OPINFO_RESOLVE_FDS", "")
    if not fds:
        return set()
    w, r = (int(x) for x in fds.split(","))
    with os.fdopen(w, "w") as out:
        out.write(json.dumps(names) + "\n")
    with os.fdopen(r) as answer:
        return set(json.loads(answer.readline() or "[]"))


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
                   "scripts/run.sh import-opinfo installs it (scripts/requirements-opinfo.txt), or: " +
                   install_fix("numpy expecttest==0.3.0"))
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
                       "check that the module imports in %s, the interpreter opcheck hosts (OPCHECK_PYTHON)"
                       % sys.executable)
    patterns = [x.strip() for x in a.ops.split(",") if x.strip()]
    STATE["selected"] = select_entries(op_db, patterns, torch)
    if not STATE["selected"]:
        fail_usage("no OpInfo entry matches the selection", "check --ops/--config; names are OpInfo names (add, "
                   "nn.functional.relu) or ATen ops (aten::add), globs allowed")
    STATE["as_calls"] = {}
    if a.as_calls:
        with open(a.as_calls) as f:
            STATE["as_calls"] = json.load(f)
    STATE["unresolvable"] = unresolvable_names(sorted({p for _, p, _ in STATE["selected"] if p}))
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
                    "dtype, or one per ATen call of a sample whose call cannot be written (.call<k>)."
                    % (torch.__version__, e["name"]),
                    "model: " + e["model"],
                    "description: " + yaml_str("PyTorch OpInfo %s (%s), the samples of sample_inputs on the CPU"
                                               % (e["name"], e["op"] or "a function opcheck cannot name: its "
                                                  "samples written as the ATen calls they make")),
                    "cases:"]
            with open(os.path.join(a.output, e["model"] + ".yaml"), "w") as f:
                f.write("\n".join(head + res["cases"]) + "\n")
    if pool is not None:
        pool.close()
        pool.join()

    counts = {"ops": len(report["entries"]), "samples": sum(e["samples"] for e in report["entries"]),
              "written": sum(e["written"] for e in report["entries"]),
              "as_calls": sum(e["as_calls"] for e in report["entries"]),
              "cases": sum(e["cases"] for e in report["entries"]), "not_written": len(report["not_written"]),
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
