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
#   opinfo-report.json             every sample: written (case id) or not written (reason), the counts, and every
#                                  imported skip/xfail with its source
#
# opcheck runs it as one program: opinfo_expectations.py (PyTorch's skips, xfails and tolerances), opinfo_writing.py
# (manifest text and tensor files) and opinfo_running.py (running a sample on the CPU) ahead of this file, in one
# namespace.
import argparse
import fnmatch
import json
import os
import re
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
           "cases": [], "not_written": [], "rules": [], "expectations": [], "marks": {}, "reached": set(), "files": []}
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
    """An op whose output is memory it leaves unwritten (empty, empty_like, new_empty, ...): opcheck's one table of op
    categories names them (judge/op_categories.cpp), handed over as OPCHECK_OPINFO_UNINITIALISED_OPS."""
    return op.split(".")[0] in UNINITIALISED_OPS


def deterministic_sample(ops):
    """Whether a sample's values cannot vary from run to run: it reached no random op (those are not written at all)
    and no allocation whose memory it may return unwritten."""
    return not any(is_allocation(o) for o in ops)


def judged_ops(name):
    """ATen ops (without overload) of one of the judge's tables, as opcheck hands them over (judge/op_categories.cpp,
    judge/backend_freedoms_table.cpp); none when the importer runs on its own."""
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
    answered = {e["reason"]: skip_answered(e["reason"], case_op, ops) for e in ctx["statuses"] if e["status"] == "skip"}
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
    kept = [e for e in ctx["statuses"] if e["status"] != "skip" or not (
        answered[e["reason"]] or (deterministic and re.search(r"non-?deterministic", e["reason"])))]
    case_expectations(ctx, "%s::%s" % (ctx["model"], case_name), kept)


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
    report = {"torch": torch.__version__, "entries": [], "not_written": [], "reasons": REASONS, "expectations": []}
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
        report["expectations"].extend(res["expectations"])
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


if __name__ == "__main__":
    main()
