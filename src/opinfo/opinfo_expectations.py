# opcheck import-opinfo: PyTorch's own judgement of an OpInfo entry, carried over (docs/opinfo.md, "PyTorch's own
# judgement, carried over"): the tolerances of its toleranceOverride/precisionOverride decorators, and its skips and
# xfails (DecorateInfo(unittest.skip(...)), DecorateInfo(unittest.expectedFailure)) as status rules, each with its
# source. `opcheck import-opinfo` carries this file in the binary and runs it ahead of import_opinfo.py, in one
# namespace; opcheck then runs the cases of every expectation it can check on the CPU against itself and drops those
# that pass (src/opinfo/expectation_check.cpp).
import re
import unittest


def entry_name(op):
    return op.name + ("." + op.variant_test_name if op.variant_test_name else "")


def decorator_kind(dec):
    """('skip', reason) | ('xfail', None) | ('tolerance', {dtype: (atol, rtol)}) | None."""
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


def expectation_source(op, info, kind):
    """Where an imported skip or xfail comes from: the OpInfo entry (name and variant), the test it decorates (class
    and name, `*` for every one), the decorator, and the device type and dtypes it applies to."""
    return {"opinfo": op.name, "variant": op.variant_test_name or "",
            "test": "%s.%s" % (info.cls_name or "*", info.test_name or "*"),
            "decorator": ("unittest.expectedFailure" if kind[0] == "xfail" else "unittest.skip(%r)" % kind[1]),
            "device_type": info.device_type or "any",
            "dtypes": sorted(str(d).replace("torch.", "") for d in info.dtypes) if info.dtypes else "all"}


def source_text(name, source, status):
    """The rule's reason: `OpInfo as_strided.partial_views: xfail (unittest.expectedFailure) for
    TestCommon.test_compare_cpu on any device, all dtypes`."""
    dev = "any device" if source["device_type"] == "any" else source["device_type"]
    dts = "all dtypes" if source["dtypes"] == "all" else ", ".join(source["dtypes"])
    return "OpInfo %s: %s (%s) for %s on %s, %s" % (name, status, source["decorator"], source["test"], dev, dts)


def judgement(op, dtype):
    """(tolerance or None, [cpu expectations], [hints for other devices]) of the entry's decorators at `dtype`. An
    expectation is {status: skip | xfail, reason, source, skip_reason}."""
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
                source = expectation_source(op, info, kind)
                statuses.append({"status": kind[0], "reason": source_text(entry_name(op), source, kind[0]),
                                 "source": source, "skip_reason": kind[1] if kind[0] == "skip" else ""})
            elif info.device_type not in (None, "cpu") and applies_to_compare_cpu(info, info.device_type, dtype):
                hints.append("%s on %s" % (kind[0], info.device_type))
    return tolerance, statuses, hints


def about_values(expectation):
    """Why a check of the CPU against itself cannot decide an expectation, or None when it can. A skip that says the
    op's output is undefined or non-deterministic (`Overflow when downcasting signed type is undefined`) is about
    values another device may compute otherwise and still be right: the CPU's agreement with itself shows nothing."""
    if expectation["status"] == "skip" and re.search(r"undefined|non-?deterministic", expectation["skip_reason"]):
        return "the skip says the output is undefined or non-deterministic, which no run of the CPU can disprove"
    return None


def case_expectations(ctx, case_id, kept):
    """The expectations `kept` (of ctx's) of one case, as rules of DIR/opcheck.yaml and records of the report.
    `check` says whether opcheck decides it by running the case on the CPU against itself (`run`), else why not."""
    res = ctx["res"]
    for e in kept:
        res["rules"].append((e["status"], case_id, e["reason"]))
        untestable = about_values(e)
        res["expectations"].append({"case": case_id, "status": e["status"], "reason": e["reason"],
                                    "source": e["source"], "check": "run" if untestable is None else untestable})
