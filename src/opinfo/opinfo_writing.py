# opcheck import-opinfo: writing what a sample gives as manifest text and tensor files, byte for byte the same in
# every import. `opcheck import-opinfo` carries this file in the binary and runs it ahead of import_opinfo.py, in
# one namespace (docs/opinfo.md).
import json
import math
import os
import re
import struct


SAFETENSORS_DTYPE = {
    "float32": "F32", "float16": "F16", "bfloat16": "BF16", "float64": "F64", "int8": "I8", "int16": "I16",
    "int32": "I32", "int64": "I64", "uint8": "U8", "bool": "BOOL",
}


class NotWritable(Exception):
    def __init__(self, reason, detail):
        super().__init__(detail)
        self.reason = reason
        self.detail = detail


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
