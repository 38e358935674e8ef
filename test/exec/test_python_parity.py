"""Python parity of opcheck's op resolution and argument binding.

dump_calls resolves every case of a manifest the way opcheck does (Python-name table, overload choice from the
schema, varargs, wrapped numbers, indexing) and runs it on the CPU. Here the same call goes through torch's own Python
API (torch.X, torch.Tensor.X, torch.nn.functional.X, operator.X, torch.ops.aten.X) with the very same input tensors,
and the outputs must agree exactly: same structure, dtypes, shapes and values, or the same error class.
"""
import json
import math
import operator
import os
import subprocess

import pytest
import torch
import torch.nn.functional as F

SOURCE_DIR = os.environ.get("OPCHECK_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
BUILD_DIR = os.environ.get("OPCHECK_BUILD_DIR", os.path.join(SOURCE_DIR, "build"))
DUMP = os.path.join(BUILD_DIR, "dump_calls")
FIXTURES = os.environ.get("OPCHECK_FIXTURES", os.path.join(SOURCE_DIR, "..", "shared", "fixtures"))
MAX_INPUT_BYTES = 64 << 20  # the 1 GB embedding weights are left to exec_fixture_tests

OPERATOR_NAMES = {"and_", "or_", "xor", "lshift", "rshift", "invert", "inv", "truediv", "floordiv", "mod", "pos",
                  "getitem", "setitem", "iadd", "isub", "imul", "itruediv"}


def python_callable(op):
    """The Python object a manifest op name calls, or None when this torch has no such Python name."""
    if op.startswith("aten::") or op.startswith("aten.") or op.startswith("torch.ops.aten."):
        name = op.split("::", 1)[1] if "::" in op else op[len("torch.ops.aten."):] if op.startswith("torch.ops.") else op[5:]
        base, _, overload = name.partition(".")
        packet = getattr(torch.ops.aten, base)
        return getattr(packet, overload or "default") if overload else packet
    for prefix, holder in (("torch.nn.functional.", F), ("torch.Tensor.", torch.Tensor), ("operator.", operator),
                           ("torch.functional.", torch.functional)):
        if op.startswith(prefix):
            return getattr(holder, op[len(prefix):], None)
    name = op[len("torch."):]
    if name in OPERATOR_NAMES:
        return getattr(operator, name)
    if name.startswith("__"):
        return getattr(torch.Tensor, name)
    if name == "sym_sum" and not hasattr(torch, "sym_sum"):
        return lambda terms: sum(terms)
    f = getattr(torch, name, None)
    if callable(f) and not isinstance(f, torch.dtype):
        return f
    return getattr(torch.Tensor, name, None)


def value(arg, tensors):
    if "tensor" in arg:
        return tensors[arg["tensor"]]
    if "tensors" in arg:
        return [tensors[i] for i in arg["tensors"]]
    return eval(arg["py"], {"torch": torch, "slice": slice, "Ellipsis": Ellipsis, "inf": math.inf, "nan": math.nan})


def same(expected, actual, path="output"):
    if isinstance(expected, torch.Tensor):
        assert isinstance(actual, torch.Tensor), f"{path}: python gave {type(actual).__name__}"
        assert actual.dtype == expected.dtype, f"{path}: dtype {actual.dtype} (python) vs {expected.dtype}"
        assert actual.shape == expected.shape, f"{path}: shape {tuple(actual.shape)} (python) vs {tuple(expected.shape)}"
        assert torch.equal(actual.isnan(), expected.isnan()) if actual.is_floating_point() else True, path
        if actual.is_floating_point() or actual.is_complex():
            ok = torch.equal(torch.nan_to_num(actual), torch.nan_to_num(expected))
        else:
            ok = torch.equal(actual, expected)
        assert ok, f"{path}: values differ (max |diff| {(actual.double() - expected.double()).abs().max().item()})"
    elif isinstance(expected, (list, tuple)):
        assert isinstance(actual, (list, tuple)), f"{path}: python gave {type(actual).__name__}"
        assert len(actual) == len(expected), f"{path}: {len(actual)} items (python) vs {len(expected)}"
        for i, (e, a) in enumerate(zip(expected, actual)):
            same(e, a, f"{path}[{i}]")
    elif isinstance(expected, float):
        assert (math.isnan(expected) and math.isnan(actual)) or actual == expected, f"{path}: {actual} vs {expected}"
    else:
        assert actual == expected, f"{path}: {actual!r} (python) vs {expected!r}"


def dump(tmp_path, manifests):
    out = subprocess.run([DUMP, str(tmp_path), str(MAX_INPUT_BYTES)] + manifests, capture_output=True, text=True,
                         timeout=900)
    assert out.returncode == 0, out.stderr
    return [json.loads(line) for line in out.stdout.splitlines()]


@pytest.fixture(autouse=True)
def dump_calls_built():
    # Run outside ctest too: a missing binary is a failure that says what to build, never a quiet skip.
    if not os.path.exists(DUMP):
        pytest.fail(f"{DUMP} does not exist. Fix: build it (ninja -C build dump_calls), or set OPCHECK_BUILD_DIR "
                    "to the build folder that has it", pytrace=False)


def check(tmp_path, manifests, min_compared):
    compared, problems = 0, []
    for call in dump(tmp_path, manifests):
        status = call["status"]
        if status in ("skipped", "too_big"):
            continue
        if status == "unresolved":
            problems.append(f"{call['id']} ({call['op']}): unresolved: {call['message']}")
            continue
        if call["decomposed"] and python_callable(call["op"]) is None:
            continue  # an op this torch lacks: checked against hand computations in exec_tests
        fn = python_callable(call["op"])
        if fn is None:
            problems.append(f"{call['id']}: no Python callable for {call['op']}")
            continue
        inputs, expected, written_after = torch.load(os.path.join(tmp_path, f"{call['n']}.pt"))
        tensors = [t.clone() if i in call["written"] else t for i, t in enumerate(inputs)]
        args = [value(a, tensors) for a in call["args"]]
        kwargs = {k: value(a, tensors) for k, a in call["kwargs"].items()}
        try:
            got = fn(*args, **kwargs)
            raised = None
        except Exception as e:  # noqa: BLE001 - any class is compared below
            got, raised = None, e
        try:
            if status == "raised":
                assert raised is not None, f"opcheck raised {call['error_type']}: {call['message']}; python did not"
                assert type(raised).__name__ == call["error_type"] or isinstance(raised, RuntimeError) and \
                    call["error_type"] == "RuntimeError", f"{type(raised).__name__} (python) vs {call['error_type']}"
            else:
                assert raised is None, f"python raised {type(raised).__name__}: {raised}"
                same(expected, got)
                for k, slot in enumerate(call["written"]):
                    same(written_after[k], tensors[slot], f"mutated input {slot}")
            compared += 1
        except AssertionError as e:
            problems.append(f"{call['id']} ({call['op']} -> {call.get('resolved_op')}): {e}")
    assert not problems, "\n".join(problems)
    assert compared >= min_compared


def test_torch_spyre_manifests_bind_like_python(tmp_path):
    # The repository's own manifests in torch-spyre's dialect (test/fixtures/make_fixtures.py).
    base = os.path.join(SOURCE_DIR, "test", "fixtures", "torch-spyre")
    check(tmp_path, [os.path.join(base, n) for n in sorted(os.listdir(base)) if n.endswith(".yaml")], min_compared=80)


@pytest.mark.corpus
def test_real_manifests_bind_like_python(tmp_path):
    base = os.path.join(FIXTURES, "torch-spyre")
    names = ["Meta-Llama-3.1-8B-Instruct.yaml", "gpt-oss-20b.yaml", "Meta-Llama-3.1-8B-Instruct_spyre.yaml",
             "gpt-oss-20b_spyre.yaml", "template.yaml", "rfc-branch-template.yaml"]
    check(tmp_path, [os.path.join(base, n) for n in names], min_compared=600)


def test_real_op_names_bind_like_python(tmp_path):
    check(tmp_path, [os.path.join(os.path.dirname(os.path.abspath(__file__)), "python_names.yaml")], min_compared=85)


def test_aten_ops_manifest_binds_like_torch_ops(tmp_path):
    check(tmp_path, [os.path.join(os.path.dirname(os.path.abspath(__file__)), "aten_ops.yaml")], min_compared=300)
