#!/usr/bin/env python3
"""Writes schemas/manifest.schema.json, the JSON Schema of opcheck manifests.

The schema's patterns are grammars (Python literals, skip_if conditions) unrolled to a bounded depth, and its
per-rank rules are enumerated: far too long to keep by hand, so this script is the source and the JSON its output.
Usage: gen_schema.py [--check]   (--check: fail when the committed schema differs from what this script writes)
"""
import json
import os
import re
import sys

def read_comparators():
    """(name, rule) of each entry of kComparators in include/opcheck/comparators.h, the comparators' one home."""
    header = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "include", "opcheck", "comparators.h")
    with open(header) as f:
        text = f.read()
    table = text[text.index("kComparators[] = {"):]
    found = re.findall(r'\{Comparator::\w+,\s*"([a-z_0-9]+)",\s*"([^"]*)"', table)
    if not found:
        sys.exit(f"{header}: no entry of kComparators found")
    return found


def comparators_described():
    """"allclose (rtol/atol), pcc (Pearson correlation >= pcc_min) or exact": each name with its rule."""
    words = [f"{name} ({rule})" if rule else name for name, rule in COMPARATORS]
    return ", ".join(words[:-1]) + " or " + words[-1] if len(words) > 1 else words[0]


def read_described_case_fields():
    """(key, JSON type, description) of each entry of kCaseFields in include/opcheck/case_fields.h that has a v1 key
    (`.manifest(`) and a description (`.described("...")`): the case fields this script does not describe itself."""
    header = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "include", "opcheck",
                          "case_fields.h")
    with open(header) as f:
        text = f.read()
    members = dict((name, ctype) for ctype, name in
                   re.findall(r"^  (bool|std::int64_t|double|std::optional<double>|std::string) (\w+)(?: = [^;]*)?;",
                              text[text.index("struct CaseSettings {"):], re.M))
    types = {"bool": "boolean", "std::int64_t": "integer", "double": "number", "std::optional<double>": "number",
             "std::string": "string"}
    table = text[text.index("kCaseFields[] = {"):]
    out = []
    for entry in re.split(r"\n    CaseField\(", table)[1:]:
        m = re.match(r'"(\w+)", &CaseSettings::(\w+)\)', entry)
        doc = re.search(r'\.described\(((?:\s*"(?:[^"\\]|\\.)*")+)\)', entry)
        if not m or not doc or ".manifest(" not in entry:
            continue
        if m.group(2) not in members:
            sys.exit(f"{header}: case field {m.group(1)}: its member's type is not one the schema knows")
        out.append((m.group(1), types[members[m.group(2)]], "".join(re.findall(r'"((?:[^"\\]|\\.)*)"',
                                                                              doc.group(1)))))
    return out


COMPARATORS = read_comparators()
DESCRIBED_CASE_FIELDS = read_described_case_fields()
# Every dtype spelling the loader accepts (src/common/dtype.cpp), each also with a `torch.` prefix.
sp = ["fp16","float16","half","f16","bf16","bfloat16","fp32","float32","float","f32","fp64","float64","double","f64",
      "int8","i8","int16","short","i16","int32","int","i32","int64","long","i64","uint8","u8","bool","b8",
      "complex32","chalf","c32","complex64","cfloat","c64","complex128","cdouble","c128"]
dtypes = sp + ["torch." + s for s in sp]
torch_dtype_alt = "|".join(sorted(sp, key=lambda s: -len(s)))
# Python literals, as a grammar bounded to PY_DEPTH levels of brackets (the loader allows 64; real manifests use 2).
# Every number and name ends at a non-word character and every list element is followed by `,` or the closing
# bracket, so no text can be split two ways: the patterns match in linear time.
PY_DEPTH = 8
END = r"(?![0-9A-Za-z_.])"
num = r"[-+]?\s*(?:0[xX][0-9a-fA-F_]+|0[oO][0-7_]+|0[bB][01_]+|[0-9][0-9_]*(?:\.[0-9_]*)?(?:[eE][-+]?[0-9]+)?|\.[0-9]+(?:[eE][-+]?[0-9]+)?)" + END
special = r"[-+]?\s*(?:inf|nan|math\.inf|math\.nan)" + END
names = r"(?:None|True|False|Ellipsis|torch\.(?:" + torch_dtype_alt + r"))" + END
strs = r"'[^'\\\n]*(?:\\.[^'\\\n]*)*'|" + r'"[^"\\\n]*(?:\\.[^"\\\n]*)*"'
atom = "(?:" + "|".join([num, special, names, strs, r"\.\.\."]) + ")"
slice_arg = r"(?:[-+]?\s*[0-9][0-9_]*" + END + "|None" + END + ")"
calls = (r"(?:slice\s*\(\s*" + slice_arg + r"(?:\s*,\s*" + slice_arg + r"){0,2}\s*,?\s*\)" +
         r"|float\s*\(\s*(?:" + num + "|" + strs + r")\s*\))")
py_value = "(?:" + atom + "|" + calls + ")"
for _ in range(PY_DEPTH):
    py_value = ("(?:" + atom + "|" + calls + r"|[(\[]\s*(?:" + py_value + r"\s*(?:,\s*|(?=[)\]])))*[)\]])")
py_pattern = r"^\s*" + py_value + r"\s*$"
ident = r"^[A-Za-z_][A-Za-z0-9_]*$"
# Conditions, as a grammar bounded to COND_DEPTH levels of parentheses. `and`/`or` are both accepted between any two
# terms (precedence does not change validity); an operator must be followed by another term.
COND_DEPTH = 3
WORD_END = r"(?![A-Za-z0-9_.])"
cond_name = (r"(?:device|dtype|op|model|cfg\.test_device\.type|cfg\.ref_device\.type|dtype_str|op_name"
             r"|env\.[A-Za-z_][A-Za-z0-9_]*)" + WORD_END)
cond_lit = ("(?:" + r"-?\s*(?:[0-9][0-9_]*(?:\.[0-9_]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?(?![0-9A-Za-z_.])" + "|" +
            r"(?:True|False|None)" + WORD_END + "|" + r"'[^'\\]*(?:\\.[^'\\]*)*'|" + r'"[^"\\]*(?:\\.[^"\\]*)*"' + ")")
cond_list = r"[(\[]\s*(?:" + cond_lit + r"\s*(?:,\s*|(?=[)\]])))*[)\]]"
cond_operand = "(?:" + cond_name + "|" + cond_lit + "|" + cond_list + ")"
cond_cmp = r"(?:==|!=|<=|>=|<|>|not\s+in" + WORD_END + "|in" + WORD_END + ")"
cond_comparison = cond_operand + r"(?:\s*" + cond_cmp + r"\s*" + cond_operand + ")?"
cond_disj = None
for _ in range(COND_DEPTH + 1):
    term = "(?:" + cond_comparison + ("" if cond_disj is None else r"|\(\s*" + cond_disj + r"\s*\)") + ")"
    neg = r"(?:not" + WORD_END + r"\s*)*" + term
    cond_disj = ("(?:" + neg + r"\s*(?:(?:and|or)" + WORD_END + r"\s*(?=[^\s)])|(?=\)|$)))+")
cond_pattern = r"^\s*" + cond_disj + r"\s*$"
MAXDIM = 1099511627776  # 2^40: the loader's numel bound, so no single dimension can exceed it either
MAX_RANK = 16  # dims per tensor; real manifests use at most 5

def d(title, desc, **kw):
    out = {"title": title, "description": desc}
    out.update(kw)
    return out

defs = {}
defs["dtype"] = d("dtype", "Element type. Every spelling opcheck accepts: short names (fp16, bf16, fp32, ...), "
                  "torch names (float16, bfloat16, half, long, ...) and each with a `torch.` prefix.",
                  type="string", enum=dtypes)
defs["device"] = d("device", "Where the tensor lives when the op runs: `cpu` (or cpu:N) keeps it on the host; any "
                   "accelerator spelling (cuda, cuda:0, spyre, aiu, privateuseone, xpu, mps, hpu, loopback, "
                   "optionally with :N) means the device under test.",
                   type="string", pattern=r"^(?:cpu|cuda|spyre|aiu|privateuseone|xpu|mps|hpu|loopback)(?::[0-9]{1,9})?$")
defs["size"] = d("size", "A non-negative element count (at most 2^40).", type="integer", minimum=0, maximum=MAXDIM)
defs["relative_path"] = d("relative path", "A .pt (or .pth) file saved with torch.save, relative to the "
                          "manifest's folder: not absolute, no `..` segment, forward slashes only.",
                          type="string", minLength=1,
                          pattern=r"^(?!/)(?![A-Za-z]:)(?!(?:.*/)?\.\.(?:/|$))[^\\\u0000]*\.pth?$")
defs["py_literal"] = d("Python literal", "A restricted Python literal, never code: ints, floats, inf, -inf, nan, "
                       "True/False/None, Ellipsis or `...`, slice(a, b, c), tuples, lists, quoted strings, "
                       "torch.<dtype>. Example: `(Ellipsis, None, slice(None, None, None))`.",
                       type="string", pattern=py_pattern)
VALUE_DEPTH = 4  # lists inside lists; deeper values are rejected as absurd (the loader's limit is 64)
INT64 = {"if": {"type": "integer"}, "then": {"minimum": -9223372036854775808, "maximum": 9223372036854775807}}
def value_level(depth):
    v = {"type": ["null", "boolean", "number", "string", "array"],
         "allOf": [INT64, {"if": {"type": "string", "pattern": r"^[(\[]"}, "then": {"$ref": "#/$defs/py_literal"}}]}
    if depth == 0:
        v["type"] = ["null", "boolean", "number", "string"]
    else:
        v["items"] = value_level(depth - 1)
    return v
defs["value"] = d("value", "A YAML scalar (null, bool, int, float, string) or a list of them (nested at most "
                  f"{VALUE_DEPTH} deep). Strings `None`, `True`, `False`, `inf`, `-inf`, `nan` mean those values; "
                  "strings starting with `(` or `[` are Python literals such as `(1, -1)`; `torch.float16` is a "
                  "dtype; `cuda:0`/`cpu` are devices. Integers must fit in 64 bits.", **value_level(VALUE_DEPTH))
defs["kwargs"] = d("keyword arguments", "Keyword arguments of the op call, by parameter name.",
                   type="object", propertyNames={"pattern": ident},
                   additionalProperties={"$ref": "#/$defs/value"})
defs["mark_name"] = d("mark", "A pytest-style mark (a Python identifier); register it in manifests/markers.yaml.",
                      type="string", pattern=ident)
defs["marks"] = d("marks", "One mark or a list of marks, selectable with `-m`.",
                  oneOf=[{"$ref": "#/$defs/mark_name"},
                         {"type": "array", "items": {"$ref": "#/$defs/mark_name"}}])
defs["tolerance"] = d("tolerance", "A finite, non-negative tolerance (torch.testing.assert_close semantics).",
                      type="number", minimum=0, maximum=1e300)
defs["compare"] = d("compare", "How outputs are compared: " + comparators_described() + ".", type="string",
                    enum=[name for name, _ in COMPARATORS])
defs["settings"] = {"$comment": "Settings shared by `defaults` and by each case.",
                    "properties": {
                        "dtype": {"$ref": "#/$defs/dtype"},
                        "seed": d("seed", "Random seed for input generation.", type="integer", minimum=0,
                                  maximum=9223372036854775807),
                        "rtol": {"$ref": "#/$defs/tolerance"},
                        "atol": {"$ref": "#/$defs/tolerance"},
                        "compare": {"$ref": "#/$defs/compare"},
                        "pcc_min": d("pcc_min", "Smallest Pearson correlation accepted with `compare: pcc`.",
                                     type="number", minimum=-1, maximum=1),
                        "equal_nan": d("equal_nan", "Whether NaN equals NaN in comparisons.", type="boolean"),
                        "timeout": d("timeout", "Seconds one run of the case may take.", type="number",
                                     exclusiveMinimum=0, maximum=1e300),
                    }}
def init_args_of(keys, integer=False):
    return {"type": "object", "additionalProperties": False,
            "properties": {k: {"type": "integer" if integer else "number"} for k in keys}}
DISTINCT_ARGS = {"distinct": {"type": "boolean"}, "distinct_along": {"type": "integer"}}
SOFTMAX_ARGS = {"softmax_along": {"type": "integer"}, "log_softmax_along": {"type": "integer"}}
defs["init_args"] = d("init_args", "Parameters of the init kind: low/high for rand and uniform (max_true for a bool "
                      "tensor: at most that many true values, the first ones drawn), low/high "
                      "(integers; high required and exclusive) for randint, mean/std for randn, gain for xavier, "
                      "distinct (no two values equal) or distinct_along (no two equal along that dim) for an integer "
                      "rand, uniform or randint, softmax_along or log_softmax_along (the values passed through it "
                      "along that dim) for a floating rand, uniform or randn, "
                      "fill_value (required) for full, path (instead of `file`) and key (a dict's entry or a "
                      "safetensors name) for file; zeros, ones, arange, eye and data take none. low must be below high.",
                      type="object",
                      properties={**{k: {"type": "number"} for k in ["low", "high", "mean", "std", "gain"]},
                                  "fill_value": {"type": ["number", "boolean"]},
                                  "max_true": {"type": "integer", "minimum": 0},
                                  **DISTINCT_ARGS, **SOFTMAX_ARGS,
                                  "path": {"type": "string", "minLength": 1},
                                  "key": {"type": "string", "minLength": 1}})
RAND_ARGS = init_args_of(["low", "high"])
RAND_ARGS["properties"]["max_true"] = {"type": "integer", "minimum": 0}
RAND_ARGS["properties"].update(DISTINCT_ARGS)
RAND_ARGS["properties"].update(SOFTMAX_ARGS)
RANDN_ARGS = init_args_of(["mean", "std"])
RANDN_ARGS["properties"].update(SOFTMAX_ARGS)
RANDINT_ARGS = dict(init_args_of(["low", "high"], integer=True), required=["high"])
RANDINT_ARGS["properties"].update(DISTINCT_ARGS)
FILE_ARGS = {"type": "object", "additionalProperties": False,
             "properties": {"path": {"type": "string", "minLength": 1}, "key": {"type": "string", "minLength": 1}}}
HAS_PATH = {"required": ["init_args"], "properties": {"init_args": {"type": "object", "required": ["path"]}}}
nested_data = {"$comment": "nested lists of numbers/bools matching shape",
               "type": ["number", "boolean", "array"], "items": {"$ref": "#/$defs/data"}}
defs["data"] = d("data", "The tensor's values as nested lists (of numbers or bools) matching its shape.", **nested_data)
preset_rules = [
    {"if": {"required": ["preset"], "properties": {"preset": {"const": "noncontig_slice"}}},
     "then": {"properties": {"preset_args": {"type": "object", "additionalProperties": False,
                                             "required": ["dim", "step"],
                                             "properties": {"dim": {"type": "integer"},
                                                            "step": {"type": "integer", "minimum": 1}}}}}},
    {"if": {"required": ["preset"], "properties": {"preset": {"const": "transpose_view"}}},
     "then": {"properties": {"preset_args": {"type": "object", "additionalProperties": False,
                                             "required": ["dim0", "dim1"],
                                             "properties": {"dim0": {"type": "integer"},
                                                            "dim1": {"type": "integer"}}}}}},
    {"if": {"required": ["preset"], "properties": {"preset": {"const": "expand_view"}}},
     "then": {"properties": {"preset_args": {"type": "object", "additionalProperties": False,
                                             "required": ["base_shape"],
                                             "properties": {"base_shape": {"type": "array",
                                                                           "items": {"$ref": "#/$defs/size"}}}}}}},
    {"if": {"required": ["preset_args"]}, "then": {"required": ["preset"]}},
    # Per rank r: r strides, preset dims in [-r, r-1], base_shape of at most r dims.
    *[{"if": {"required": ["shape"], "properties": {"shape": {"type": "array", "minItems": r, "maxItems": r}}},
       "then": {"properties": {
           "stride": {"type": "array", "minItems": r, "maxItems": r},
           "preset_args": {"type": "object", "properties": {
               **{k: {"type": "integer", "minimum": -r, "maximum": r - 1} for k in ("dim", "dim0", "dim1")},
               "base_shape": {"type": "array", "maxItems": r}}}}}}
      for r in range(0, MAX_RANK + 1)],

    {"if": {"required": ["preset"]}, "then": {"required": ["preset_args"],
                                              "not": {"anyOf": [{"required": ["stride"]},
                                                                {"required": ["contiguous"]}]}}},
    {"if": {"not": {"anyOf": [{"required": ["file"]}, HAS_PATH]}}, "then": {"required": ["shape"]}},
    # Which init_args each init understands (no init = rand, unless data/file imply theirs).
    {"if": {"anyOf": [{"required": ["init"], "properties": {"init": {"enum": ["rand", "uniform"]}}},
                      {"not": {"anyOf": [{"required": ["init"]}, {"required": ["data"]}, {"required": ["file"]}]}}]},
     "then": {"properties": {"init_args": RAND_ARGS}}},
    {"if": {"required": ["init"], "properties": {"init": {"const": "randn"}}},
     "then": {"properties": {"init_args": RANDN_ARGS}}},
    {"if": {"required": ["init"], "properties": {"init": {"const": "xavier"}}},
     "then": {"properties": {"init_args": init_args_of(["gain"])}}},
    {"if": {"anyOf": [{"required": ["init"], "properties": {"init": {"enum": ["zeros", "ones", "arange", "eye", "data"]}}},
                      {"not": {"required": ["init"]}, "required": ["data"]}]},
     "then": {"properties": {"init_args": init_args_of([])}}},
    {"if": {"anyOf": [{"required": ["init"], "properties": {"init": {"const": "file"}}},
                      {"not": {"required": ["init"]}, "required": ["file"]}]},
     "then": {"properties": {"init_args": FILE_ARGS}}},
    {"if": {"required": ["init"], "properties": {"init": {"const": "full"}}},
     "then": {"required": ["init_args"],
              "properties": {"init_args": {"type": "object", "additionalProperties": False, "required": ["fill_value"],
                                           "properties": {"fill_value": {"type": ["number", "boolean"]}}}}}},
    {"if": {"required": ["init"], "properties": {"init": {"const": "randint"}}},
     "then": {"required": ["init_args"],
              "properties": {"init_args": RANDINT_ARGS}}},
    {"if": {"required": ["init"], "properties": {"init": {"const": "data"}}}, "then": {"required": ["data"]}},
    {"if": {"required": ["init"], "properties": {"init": {"const": "file"}}},
     "then": {"anyOf": [{"required": ["file"]}, HAS_PATH]}},
    {"if": {"required": ["data"]}, "then": {"properties": {"init": {"const": "data"}}}},
    {"if": {"required": ["file"]}, "then": {"properties": {"init": {"const": "file"}}}},
]
defs["tensor"] = d("tensor", "One tensor input: its layout, dtype, device and how its values are produced.",
                   type="object", additionalProperties=False,
                   properties={
                       "shape": d("shape", "Sizes of each dimension (required unless `file` gives the tensor). At most 2^40 "
                                  "elements in all.", type="array", maxItems=MAX_RANK,
                                  items={"$ref": "#/$defs/size"}),
                       "stride": d("stride", "Strides in elements, one per dimension (0 = broadcast). Default: "
                                   "contiguous.", type="array", maxItems=MAX_RANK, items={"$ref": "#/$defs/size"}),
                       "storage_offset": d("storage_offset", "Offset of the first element in the storage.",
                                           **{"$ref": "#/$defs/size"}),
                       "dtype": {"$ref": "#/$defs/dtype"},
                       "device": {"$ref": "#/$defs/device"},
                       "contiguous": d("contiguous", "false: lay the tensor out column-major instead of row-major; true: "
                                       "the given stride must be contiguous. Not with `preset`.", type="boolean"),
                       "init": d("init", "How values are produced (default rand; data and file are implied by `data:` / "
                                 "`file:`).", type="string",
                                 enum=["rand", "randn", "zeros", "ones", "arange", "randint", "uniform", "data",
                                       "xavier", "file", "eye", "full"]),
                       "init_args": {"$ref": "#/$defs/init_args"},
                       "data": {"$ref": "#/$defs/data"},
                       "file": d("file", "A .pt, .npy or .safetensors file relative to the manifest's folder.",
                                 **{"$ref": "#/$defs/relative_path"}),
                       "preset": d("preset", "A non-contiguous layout built from the shape: noncontig_slice "
                                   "{dim, step}, transpose_view {dim0, dim1}, expand_view {base_shape}. Needs "
                                   "preset_args; not with stride or contiguous.",
                                   type="string", enum=["noncontig_slice", "transpose_view", "expand_view"]),
                       "preset_args": d("preset_args", "Arguments of the preset.", type="object"),
                   },
                   allOf=preset_rules)
def single(key, sub, title, desc):
    return d(title, desc, type="object", required=[key], additionalProperties=False, properties={key: sub})
defs["input"] = d("input", "One argument of the op call: exactly one of tensor, tensor_list, value, py or file; "
                  "with keyword beside tensor or tensor_list, that tensor is passed by name (after the positional "
                  "inputs).",
                  type="object", minProperties=1, maxProperties=2, additionalProperties=False,
                  **{"if": {"required": ["keyword"]},
                     "then": {"minProperties": 2, "oneOf": [{"required": ["tensor"]}, {"required": ["tensor_list"]}]},
                     "else": {"maxProperties": 1}},
                  properties={
                      "keyword": d("keyword", "The keyword the tensor is passed as (a keyword-only tensor parameter, "
                                   "as searchsorted's sorter).", type="string",
                                   pattern=r"^[A-Za-z_][A-Za-z0-9_]*$"),
                      "tensor": d("tensor input", "A tensor argument.", **{"$ref": "#/$defs/tensor"}),
                      "tensor_list": d("tensor list input", "A list of tensors (e.g. for torch.cat).",
                                       type="array", items={"$ref": "#/$defs/tensor"}),
                      "value": d("value input", "A non-tensor argument written as YAML.", **{"$ref": "#/$defs/value"}),
                      "py": d("py input", "A non-tensor argument written as a Python literal.",
                              **{"$ref": "#/$defs/py_literal"}),
                      "file": d("file input", "A tensor loaded from a .pt file relative to the manifest's folder.",
                                **{"$ref": "#/$defs/relative_path"}),
                  })
defs["condition"] = d("condition", "A condition on the run: expr in opcheck's condition language (or/and/not, "
                      "==, !=, <, <=, >, >=, in, not in over device, dtype, dtype_str, op, op_name, model, env.NAME, "
                      "cfg.test_device.type, cfg.ref_device.type) and the reason shown in reports.",
                      type="object", required=["expr"], additionalProperties=False,
                      properties={"expr": {"type": "string", "minLength": 1, "pattern": cond_pattern},
                                  "reason": {"type": "string"}})
defs["conditions"] = d("conditions", "One condition or a list of them.",
                       oneOf=[{"$ref": "#/$defs/condition"},
                              {"type": "array", "items": {"$ref": "#/$defs/condition"}}])
case_props = {
    "name": d("name", "The case name, unique within the manifest (no tab or line break).", type="string",
              minLength=1, pattern=r"^[^\t\n\r]+$"),
    "op": d("op", "The op called: a Python path (torch.add, torch.nn.functional.linear, torch.Tensor.view, "
            "torch.ops.aten.view) or an ATen name (aten::add.Tensor).",
            type="string", pattern=r"^[A-Za-z_][A-Za-z0-9_]*(?:(?:\.|::)[A-Za-z_][A-Za-z0-9_]*)*$"),
    "inputs": d("inputs", "Positional arguments in order (null or absent: none).", type=["array", "null"],
                items={"$ref": "#/$defs/input"}),
    "description": d("description", "Where the call comes from (model file, line, code).", type="string"),
    "marks": {"$ref": "#/$defs/marks"},
    "mark": {"$ref": "#/$defs/marks"},
    "attrs": {"$ref": "#/$defs/kwargs"},
    "kwmap": {"$ref": "#/$defs/kwargs"},
    "nondeterministic": d("nondeterministic", "Repeated device runs may differ (no determinism check).",
                          type="boolean"),
    "expects_error": d("expects_error", "Both the device and the reference must raise this Python error type, "
                       "with a message matching `match` (an ECMAScript regex, searched).",
                       type="object", required=["type"], additionalProperties=False,
                       properties={"type": {"type": "string",
                                            "pattern": r"^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*$"},
                                   "match": {"type": "string", "format": "regex", "maxLength": 1000}}),
    "skip_if": {"$ref": "#/$defs/conditions"},
    "xfail_if": {"$ref": "#/$defs/conditions"},
}
for key, json_type, doc in DESCRIBED_CASE_FIELDS:  # the case fields kCaseFields describes (issue, ...)
    case_props.setdefault(key, d(key, doc, type=json_type))
settings = defs["settings"]["properties"]
for k in settings:
    case_props[k] = {"$ref": "#/$defs/settings/properties/" + k}
defs["case"] = d("case", "One op call.", type="object", required=["name", "op"], additionalProperties=False,
                 properties=case_props, **{"not": {"required": ["mark", "marks"]}})
defs["defaults"] = d("defaults", "Settings every case inherits unless it sets its own.", type="object",
                     additionalProperties=False,
                     properties={k: {"$ref": "#/$defs/settings/properties/" + k} for k in settings})
schema = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": "https://opcheck.invalid/schemas/manifest.schema.json",
    "title": "opcheck manifest",
    "description": "Per-model list of torch op calls that opcheck runs on a device under test and on the CPU "
                   "reference. Accepts the torch-spyre dialect (`defaults`, `marks`, `kwmap`, torch.* dtypes, "
                   "per-tensor stride/storage_offset/device) and the RFC spelling (`default`, `mark`, `attrs`).",
    "type": "object",
    "required": ["model", "cases"],
    "additionalProperties": False,
    "properties": {
        "model": d("model", "The model's name, as selected with --model (no '::' or '/').", type="string",
                   minLength=1, pattern=r"^(?!.*::)[^/]+$"),
        "description": d("description", "What this manifest covers.", type="string"),
        "defaults": {"$ref": "#/$defs/defaults"},
        "default": {"$ref": "#/$defs/defaults"},
        "marks": d("marks", "Marks applied to every case.", **{"$ref": "#/$defs/marks"}),
        "mark": d("mark", "Marks applied to every case (RFC spelling of `marks`).", **{"$ref": "#/$defs/marks"}),
        "cases": d("cases", "The op calls.", type="array", items={"$ref": "#/$defs/case"}),
    },
    "allOf": [{"not": {"required": ["default", "defaults"]}}, {"not": {"required": ["mark", "marks"]}}],
    "$defs": defs,
}

def main():
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "schemas", "manifest.schema.json")
    text = json.dumps(schema, indent=2) + "\n"
    if "--check" in sys.argv[1:]:
        with open(path) as f:
            if f.read() != text:
                print("schemas/manifest.schema.json is not what test/schema/gen_schema.py writes: run the script")
                return 1
        print("1 passed, 0 failed")
        return 0
    with open(path, "w") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
