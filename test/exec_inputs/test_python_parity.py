"""Python parity of opcheck's input building.

`reference_tensor` below is the Python definition of every init recipe (README.md in this folder states them).
The tests run the C++ builder (dump_inputs) and compare its bytes with what Debian's torch produces here, bit for
bit, and check layouts, file inputs, errors and cross-process determinism.
"""
import hashlib
import json
import math
import os
import sys
import subprocess

import pytest
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
from tensor_files import raw, read_safetensors, write_safetensors  # noqa: E402

BUILD_DIR = os.environ.get("OPCHECK_BUILD_DIR", "")
DUMP = os.path.join(BUILD_DIR, "dump_inputs")

DTYPES = {
    "fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float32, "fp64": torch.float64,
    "int8": torch.int8, "int16": torch.int16, "int32": torch.int32, "int64": torch.int64, "uint8": torch.uint8,
    "bool": torch.bool, "complex32": torch.complex32, "complex64": torch.complex64, "complex128": torch.complex128,
}
REAL_OF = {torch.complex32: torch.float16, torch.complex64: torch.float32, torch.complex128: torch.float64}
INTEGRAL = (torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8)


def _scaled_unit(r, args):
    """rand/uniform with low/high: make_tensor's `high * r + low * (1 - r)`, clamped to finfo like make_tensor."""
    if "low" not in args and "high" not in args:
        return r
    fi = torch.finfo(r.dtype)
    low = min(max(args.get("low", 0), fi.min), fi.max)
    high = min(max(args.get("high", 1), fi.min), fi.max)
    return high * r + low * (1 - r)


def _distinct(low, high, shape, args, dtype):
    """An index drawn without repeats: `distinct: true` (no two values equal) or `distinct_along: d` (no two equal along
    d). Per line of k values: k sorted draws from [0, high - low - k + 1), each shifted up by its rank (0..k-1) so no
    two are equal, then put in the order of a stable argsort of torch.rand over the line."""
    if "distinct_along" not in args or not shape:
        n = 1
        for size in shape:
            n *= size
        return _distinct(low, high, [n], {"distinct_along": 0}, dtype).reshape(shape)
    d = args["distinct_along"] % len(shape)
    k = shape[d]
    ranks = torch.arange(k).reshape([k if i == d else 1 for i in range(len(shape))])
    sorted_draws = torch.randint(0, high - low - k + 1, shape).sort(dim=d).values
    order = torch.rand(shape).argsort(dim=d, stable=True)
    return (torch.gather(sorted_draws + ranks, d, order) + low).to(dtype)


def _softmax(t, args):
    """A (log_)softmax backward's `output`: softmax_along / log_softmax_along: d passes the draw through it."""
    if "softmax_along" in args:
        return torch.softmax(t, args["softmax_along"])
    if "log_softmax_along" in args:
        return torch.log_softmax(t, args["log_softmax_along"])
    return t


def values(shape, dtype, init, args, data=None, file=None):
    """The logical values of one tensor spec over `shape` (torch.manual_seed already called)."""
    if init in ("rand", "uniform"):
        if dtype is torch.bool:
            m = torch.randint(0, 2, shape, dtype=torch.bool)
            if "max_true" in args:  # the first max_true true values kept (a masked_scatter mask within its source)
                m = m & (m.reshape(-1).cumsum(0) <= args["max_true"]).reshape(m.shape)
            return m
        if dtype in INTEGRAL:
            ii = torch.iinfo(dtype)
            low = min(max(args.get("low", 0), ii.min), ii.max)
            high = min(max(args.get("high", 1), ii.min), ii.max)
            if args.get("distinct") or "distinct_along" in args:
                return _distinct(math.floor(low), math.ceil(high), shape, args, dtype)
            return torch.randint(math.floor(low), math.ceil(high), shape, dtype=dtype)
        if dtype.is_complex:
            real = _scaled_unit(torch.rand(shape, dtype=REAL_OF[dtype]), args)
            imag = _scaled_unit(torch.rand(shape, dtype=REAL_OF[dtype]), args)
            return torch.complex(real, imag)
        return _softmax(_scaled_unit(torch.rand(shape, dtype=dtype), args), args)
    if init == "randn":
        t = torch.randn(shape, dtype=dtype)
        if "std" in args:
            t = t * args["std"]
        if "mean" in args:
            t = t + args["mean"]
        return _softmax(t, args)
    if init == "randint":
        if dtype.is_complex:
            return torch.randint(args.get("low", 0), args["high"], shape).to(dtype)
        if args.get("distinct") or "distinct_along" in args:
            return _distinct(args.get("low", 0), args["high"], shape, args, dtype)
        return torch.randint(args.get("low", 0), args["high"], shape, dtype=dtype)
    if init == "zeros":
        return torch.zeros(shape, dtype=dtype)
    if init == "ones":
        return torch.ones(shape, dtype=dtype)
    if init == "arange":
        return torch.arange(math.prod(shape)).reshape(shape).to(dtype)
    if init == "xavier":
        return torch.nn.init.xavier_uniform_(torch.empty(shape, dtype=dtype), gain=args.get("gain", 1.0))
    if init == "data":
        return torch.tensor(data, dtype=dtype)
    if init == "eye":
        return torch.eye(shape[0], dtype=dtype)
    if init == "full":
        return torch.full(shape, args["fill_value"], dtype=dtype)
    if init == "file":
        return load_tensor_file(file, args.get("key"))
    raise ValueError(init)


def load_tensor_file(path, key=None):
    """The tensor of a .pt (a dict's entry by key), .npy or .safetensors file, read by the formats' own libraries."""
    path = str(path)
    if path.endswith(".npy"):
        import numpy
        return torch.from_numpy(numpy.load(path)).contiguous()
    if path.endswith(".safetensors"):
        return read_safetensors(path)[key] if key else next(iter(read_safetensors(path).values()))
    obj = torch.load(path)
    return obj[key] if isinstance(obj, dict) else obj


def reference_tensor(spec):
    """(logical tensor, storage tensor) exactly as opcheck builds them."""
    shape = spec["shape"]
    dtype = DTYPES[spec.get("dtype", "fp32")]
    stride = spec.get("stride") or list(torch.empty(shape).stride())
    offset = spec.get("storage_offset", 0)
    # Expanded (stride-0) dims are generated with size 1, then expanded.
    value_shape = [1 if st == 0 and n > 1 else n for n, st in zip(shape, stride)]
    torch.manual_seed(spec.get("seed", 0))
    v = values(value_shape, dtype, spec.get("init", "rand"), spec.get("init_args", {}), spec.get("data"), spec.get("file"))
    if v.numel() == 0:
        extent = offset
    else:
        extent = offset + 1 + sum((n - 1) * st for n, st in zip(value_shape, stride))
    storage = torch.zeros(extent, dtype=dtype)
    storage.as_strided(value_shape, stride, offset).copy_(v)
    return storage.as_strided(shape, stride, offset), storage


C10_NAMES = {torch.float32: "Float", torch.float64: "Double", torch.float16: "Half", torch.bfloat16: "BFloat16",
             torch.int64: "Long", torch.int32: "Int", torch.int16: "Short", torch.int8: "Char", torch.uint8: "Byte",
             torch.bool: "Bool", torch.complex64: "ComplexFloat", torch.complex128: "ComplexDouble"}


def digest(t):
    """opcheck's tensor_digest: sha256 of the logical bytes; for a view that repeats its storage (stride-0 dims), of
    its layout line and the storage span it reaches, so the work is bounded by the bytes behind the view."""
    extent = 1 + sum((n - 1) * st for n, st in zip(t.shape, t.stride()))
    if t.numel() > 0 and not t.is_contiguous() and extent < t.numel():
        layout = f"layout {C10_NAMES[t.dtype]} sizes" + "".join(f" {n}" for n in t.shape) + " strides" + \
            "".join(f" {s}" for s in t.stride()) + "\n"
        span = t.as_strided([extent], [1], t.storage_offset())
        return hashlib.sha256(layout.encode() + raw(span)).hexdigest()
    return hashlib.sha256(raw(t)).hexdigest()


def run_dump(specs, tmp_path, name="run"):
    out = tmp_path / name
    out.mkdir()
    spec_file = tmp_path / f"{name}.json"
    spec_file.write_text(json.dumps(specs))
    proc = subprocess.run([DUMP, str(spec_file), str(out)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    assert len(lines) == len(specs)
    return out, lines


PARITY_SPECS = [
    {"shape": [4, 33], "dtype": "fp32", "init": "rand", "seed": 123},
    {"shape": [3, 5, 7], "dtype": "fp16", "init": "rand", "seed": 1123},
    {"shape": [64, 40], "dtype": "bf16", "init": "rand", "seed": 2123},
    {"shape": [1, 64], "dtype": "fp16", "init": "uniform", "init_args": {"low": -1.0, "high": 1.0}, "seed": 5},
    {"shape": [1, 64], "dtype": "bf16", "init": "rand", "init_args": {"low": -1.0, "high": 1.0}, "seed": 6},
    {"shape": [9, 9], "dtype": "fp32", "init": "uniform", "init_args": {"low": 0.1, "high": 0.7}, "seed": 7},
    {"shape": [9, 9], "dtype": "fp16", "init": "uniform", "init_args": {"low": -3}, "seed": 8},
    {"shape": [7], "dtype": "fp64", "init": "uniform", "init_args": {"high": 1e6}, "seed": 9},
    {"shape": [11, 6], "dtype": "fp32", "init": "randn", "seed": 10},
    {"shape": [5], "dtype": "fp32", "init": "randn", "seed": 11},  # < 16 elements: the scalar normal path
    {"shape": [40, 3], "dtype": "fp16", "init": "randn", "seed": 12},
    {"shape": [40, 3], "dtype": "bf16", "init": "randn", "init_args": {"mean": 2.0, "std": 0.5}, "seed": 13},
    {"shape": [11, 6], "dtype": "int64", "init": "randint", "init_args": {"high": 100}, "seed": 14},
    {"shape": [1, 64], "dtype": "int64", "init": "randint", "init_args": {"low": 1, "high": 100}, "seed": 15},
    {"shape": [1, 64], "dtype": "int32", "init": "rand", "init_args": {"low": -5, "high": 5}, "seed": 16},
    {"shape": [8, 8], "dtype": "uint8", "init": "rand", "init_args": {"low": 0, "high": 255.5}, "seed": 17},
    {"shape": [11, 6], "dtype": "bool", "init": "rand", "seed": 18},
    {"shape": [11, 6], "dtype": "bool", "init": "rand", "init_args": {"max_true": 7}, "seed": 36},
    {"shape": [4, 6], "stride": [0, 1], "dtype": "bool", "init": "uniform", "init_args": {"max_true": 2}, "seed": 37},
    # Index values drawn without repeats (index_copy, index_put, put, scatter), and softmax-backward outputs.
    {"shape": [12], "dtype": "int64", "init": "randint", "init_args": {"high": 16, "distinct": True}, "seed": 38},
    {"shape": [3, 4], "dtype": "int64", "init": "randint", "init_args": {"low": -20, "high": 0, "distinct": True},
     "seed": 39},
    {"shape": [4, 8], "dtype": "int64", "init": "randint", "init_args": {"high": 10, "distinct_along": 1}, "seed": 40},
    {"shape": [7, 3], "dtype": "int32", "init": "rand", "init_args": {"low": 0, "high": 10, "distinct_along": -2},
     "seed": 41},
    {"shape": [2, 5], "dtype": "int64", "init": "randint", "init_args": {"high": 5, "distinct_along": 1}, "seed": 42},
    {"shape": [], "dtype": "int64", "init": "randint", "init_args": {"high": 3, "distinct": True}, "seed": 43},
    {"shape": [4, 33], "dtype": "fp16", "init": "rand", "init_args": {"softmax_along": 1}, "seed": 44},
    {"shape": [4, 33], "dtype": "bf16", "init": "randn", "init_args": {"std": 8, "log_softmax_along": -1}, "seed": 45},
    {"shape": [6, 5], "dtype": "fp32", "init": "uniform", "init_args": {"low": -3, "high": 3, "softmax_along": 0},
     "seed": 46},
    {"shape": [2, 4, 8], "dtype": "fp16", "init": "arange", "seed": 19},
    {"shape": [3, 4], "dtype": "bool", "init": "arange", "seed": 19},
    {"shape": [64, 48], "dtype": "bf16", "init": "xavier", "seed": 20},
    {"shape": [8, 4, 3, 3], "dtype": "fp32", "init": "xavier", "init_args": {"gain": 2.0}, "seed": 21},
    {"shape": [1, 1, 11], "dtype": "fp16", "init": "xavier", "seed": 22},
    {"shape": [3, 4], "dtype": "complex64", "init": "rand", "init_args": {"low": -2, "high": 2}, "seed": 23},
    {"shape": [3, 4], "dtype": "complex128", "init": "randn", "seed": 24},
    {"shape": [3, 4], "dtype": "complex32", "init": "rand", "seed": 35},
    {"shape": [6], "dtype": "complex64", "init": "randint", "init_args": {"high": 9}, "seed": 25},
    {"shape": [2, 3], "dtype": "fp16", "init": "data", "data": [[0.1, -2, 3.5], [1e-8, 65504, 7]]},
    {"shape": [3], "dtype": "int64", "init": "data", "data": [1152921504606846977, -3, 0]},
    {"shape": [], "dtype": "fp32", "init": "data", "data": 2.5},
    {"shape": [2, 2], "dtype": "fp32", "init": "zeros"},
    {"shape": [5, 5], "dtype": "fp32", "init": "eye"},
    {"shape": [3, 3], "dtype": "bf16", "init": "eye"},
    {"shape": [4, 4], "stride": [1, 4], "dtype": "int64", "init": "eye"},
    {"shape": [3, 4], "dtype": "fp16", "init": "full", "init_args": {"fill_value": 0.1}},
    {"shape": [3, 4], "dtype": "bf16", "init": "full", "init_args": {"fill_value": -2}},
    {"shape": [6], "dtype": "int64", "init": "full", "init_args": {"fill_value": 1152921504606846977}},
    {"shape": [2, 2], "dtype": "bool", "init": "full", "init_args": {"fill_value": True}},
    {"shape": [4, 6], "stride": [0, 1], "dtype": "fp32", "init": "full", "init_args": {"fill_value": 7.5}},
    {"shape": [2, 2], "dtype": "bf16", "init": "ones"},
    {"shape": [], "dtype": "fp32", "init": "rand", "seed": 26},
    {"shape": [0, 5], "dtype": "fp16", "init": "rand", "seed": 27},
    # Layouts from real manifests: permuted, offset, gaps and expanded dims.
    {"shape": [2, 32, 12, 128], "stride": [49152, 128, 4096, 1], "dtype": "bf16", "init": "rand", "seed": 28},
    {"shape": [4, 5], "stride": [5, 1], "storage_offset": 7, "dtype": "fp32", "init": "randn", "seed": 29},
    {"shape": [3, 4], "stride": [8, 2], "storage_offset": 3, "dtype": "fp16", "init": "rand", "seed": 30},
    {"shape": [1, 8, 8, 16, 4], "stride": [512, 64, 0, 4, 1], "dtype": "bf16", "init": "rand", "seed": 31},
    {"shape": [11, 4], "stride": [1, 0], "dtype": "int64", "init": "randint", "init_args": {"high": 1000}, "seed": 32},
    {"shape": [4, 6], "stride": [1, 4], "dtype": "fp32", "init": "xavier", "seed": 33},
    {"shape": [0, 3], "stride": [3, 1], "storage_offset": 2, "dtype": "fp32", "init": "rand", "seed": 34},
]


@pytest.fixture(scope="module")
def parity_run(tmp_path_factory):
    return run_dump(PARITY_SPECS, tmp_path_factory.mktemp("parity"))


@pytest.mark.parametrize("i", range(len(PARITY_SPECS)), ids=[
    f"{s['dtype']}-{s['init']}-{'x'.join(map(str, s['shape'])) or 'scalar'}-{n}" for n, s in enumerate(PARITY_SPECS)])
def test_bytes_match_python(parity_run, i):
    out, lines = parity_run
    spec = PARITY_SPECS[i]
    line = lines[i]
    assert "error" not in line, line.get("error")
    logical, storage = reference_tensor(spec)
    assert list(line["shape"]) == list(logical.shape)
    assert list(line["stride"]) == list(logical.stride()), "the kernel must see the manifest's strides"
    assert line["storage_offset"] == logical.storage_offset()
    got = (out / f"{i}.bin").read_bytes()
    assert got == raw(logical), f"logical bytes differ from Python's recipe for {spec}"
    assert line["digest"] == digest(logical)
    assert line["storage_elements"] == storage.numel()
    assert (out / f"{i}.storage").read_bytes() == raw(storage), "storage bytes (layout) differ"


def test_two_processes_build_identical_bytes(tmp_path):
    specs = PARITY_SPECS[:6] + PARITY_SPECS[-6:]
    out1, lines1 = run_dump(specs, tmp_path, "first")
    out2, lines2 = run_dump(specs, tmp_path, "second")
    for i, (a, b) in enumerate(zip(lines1, lines2)):
        assert a["digest"] == b["digest"]
        assert (out1 / f"{i}.bin").read_bytes() == (out2 / f"{i}.bin").read_bytes()


def test_seed_changes_values(tmp_path):
    base = {"shape": [16], "dtype": "fp32", "init": "rand"}
    _, lines = run_dump([dict(base, seed=1), dict(base, seed=2), dict(base, seed=1)], tmp_path)
    assert lines[0]["digest"] != lines[1]["digest"]
    assert lines[0]["digest"] == lines[2]["digest"]


def test_file_written_by_python_reads_back(tmp_path):
    pt = tmp_path / "weights.pt"
    # Written by a separate Python process, exactly as a user would produce it.
    code = ("import torch; torch.manual_seed(3); "
            f"torch.save(torch.randn(5, 7, dtype=torch.float16).t(), {str(pt)!r})")
    subprocess.run([sys.executable, "-c", code], check=True)
    spec = {"shape": [7, 5], "dtype": "fp16", "init": "file", "file": str(pt)}
    strided = dict(spec, stride=[1, 8], storage_offset=2)
    out, lines = run_dump([spec, strided], tmp_path)
    expected = torch.load(pt)
    assert "error" not in lines[0], lines[0]
    assert (out / "0.bin").read_bytes() == raw(expected)
    assert lines[1]["stride"] == [1, 8] and lines[1]["storage_offset"] == 2
    assert (out / "1.bin").read_bytes() == raw(expected)


def test_file_dtype_or_shape_mismatch_is_reported(tmp_path):
    pt = tmp_path / "t.pt"
    torch.save(torch.zeros(2, 3, dtype=torch.float16), pt)
    _, lines = run_dump([
        {"shape": [2, 3], "dtype": "fp32", "init": "file", "file": str(pt)},
        {"shape": [3, 2], "dtype": "fp16", "init": "file", "file": str(pt)},
        {"shape": [2, 3], "dtype": "fp16", "init": "file", "file": str(tmp_path / "missing.pt")},
    ], tmp_path)
    assert "Half" in lines[0]["error"] and "fp32" in lines[0]["error"]
    assert "[2, 3]" in lines[1]["error"] and "[3, 2]" in lines[1]["error"]
    assert "cannot read file" in lines[2]["error"] and "missing.pt" in lines[2]["error"]


def test_file_holding_a_dict_is_a_clear_error(tmp_path):
    pt = tmp_path / "d.pt"
    torch.save({"w": torch.zeros(2)}, pt)
    _, lines = run_dump([{"shape": [2], "dtype": "fp32", "init": "file", "file": str(pt)}], tmp_path)
    assert "torch.save" in lines[0]["error"] and "Fix:" in lines[0]["error"]


def test_bad_specs_are_errors_not_crashes(tmp_path):
    _, lines = run_dump([
        {"shape": [4], "dtype": "int64", "init": "randint"},
        {"shape": [4], "dtype": "fp32", "init": "rand", "init_args": {"lo": 1}},
        {"shape": [4], "dtype": "fp32", "init": "xavier"},
        {"shape": [2, 2], "dtype": "fp32", "init": "data", "data": [[1, 2], [3]]},
        {"shape": [2, 2], "stride": [1, 1], "dtype": "fp32", "init": "rand"},
        {"shape": [3], "dtype": "int32", "init": "randn"},
        {"shape": [9], "dtype": "int64", "init": "randint", "init_args": {"high": 8, "distinct": True}},
        {"shape": [3], "dtype": "fp32", "init": "rand", "init_args": {"softmax_along": 1}},
    ], tmp_path)
    assert "high" in lines[0]["error"]
    assert "unknown init_args key 'lo'" in lines[1]["error"]
    assert "2 dimensions" in lines[2]["error"]
    assert "ragged" in lines[3]["error"]
    assert "share storage" in lines[4]["error"]
    assert "randn" in lines[5]["error"]
    assert "cannot draw 9 distinct values from [0, 8)" in lines[6]["error"] and "Fix:" in lines[6]["error"]
    assert "init_args.softmax_along must be a dim of the tensor's 1 dims, got 1" in lines[7]["error"]


def test_npy_and_safetensors_files_read_back_exactly(tmp_path):
    import numpy
    torch.manual_seed(4)
    a = torch.randn(3, 5)
    numpy.save(tmp_path / "a.npy", a.numpy())
    numpy.save(tmp_path / "f.npy", numpy.asfortranarray(a.numpy()))  # column-major data
    numpy.save(tmp_path / "i.npy", numpy.arange(12, dtype=numpy.int64).reshape(4, 3))
    numpy.save(tmp_path / "b.npy", numpy.array([[True, False], [False, True]]))
    h, b = torch.randn(2, 7, dtype=torch.float16), torch.randn(7, 2, dtype=torch.bfloat16)
    write_safetensors(tmp_path / "two.safetensors", {"h": h, "b": b})
    write_safetensors(tmp_path / "one.safetensors", {"only": h})
    torch.save({"x": a, "y": h}, tmp_path / "d.pt")
    specs = [
        {"shape": [3, 5], "dtype": "fp32", "init": "file", "file": str(tmp_path / "a.npy")},
        {"shape": [3, 5], "dtype": "fp32", "init": "file", "file": str(tmp_path / "f.npy")},
        {"shape": [4, 3], "dtype": "int64", "init": "file", "file": str(tmp_path / "i.npy")},
        {"shape": [2, 2], "dtype": "bool", "init": "file", "file": str(tmp_path / "b.npy")},
        {"shape": [7, 2], "dtype": "bf16", "init": "file", "file": str(tmp_path / "two.safetensors"),
         "init_args": {"key": "b"}},
        {"shape": [2, 7], "dtype": "fp16", "init": "file", "file": str(tmp_path / "one.safetensors")},
        {"shape": [2, 7], "dtype": "fp16", "init": "file", "file": str(tmp_path / "d.pt"), "init_args": {"key": "y"}},
        {"shape": [3, 5], "stride": [1, 3], "dtype": "fp32", "init": "file", "file": str(tmp_path / "a.npy")},
    ]
    out, lines = run_dump(specs, tmp_path)
    for i, spec in enumerate(specs):
        assert "error" not in lines[i], lines[i]
        expected = load_tensor_file(spec["file"], spec.get("init_args", {}).get("key"))
        assert (out / f"{i}.bin").read_bytes() == raw(expected), spec
        assert lines[i]["digest"] == digest(expected.contiguous())
    assert lines[7]["stride"] == [1, 3]


def test_damaged_npy_and_safetensors_are_errors_not_reads(tmp_path):
    import numpy
    numpy.save(tmp_path / "a.npy", numpy.zeros((64, 64), dtype=numpy.float32))
    whole = (tmp_path / "a.npy").read_bytes()
    (tmp_path / "cut.npy").write_bytes(whole[:len(whole) // 2])
    (tmp_path / "junk.safetensors").write_bytes(b"\xff" * 64)
    write_safetensors(tmp_path / "two.safetensors", {"h": torch.zeros(2), "b": torch.ones(2)})
    _, lines = run_dump([
        {"shape": [64, 64], "dtype": "fp32", "init": "file", "file": str(tmp_path / "cut.npy")},
        {"shape": [2], "dtype": "fp32", "init": "file", "file": str(tmp_path / "junk.safetensors")},
        {"shape": [2], "dtype": "fp32", "init": "file", "file": str(tmp_path / "two.safetensors")},
        {"shape": [2], "dtype": "fp32", "init": "file", "file": str(tmp_path / "two.safetensors"),
         "init_args": {"key": "zz"}},
    ], tmp_path)
    assert "truncated" in lines[0]["error"]
    assert "header claims" in lines[1]["error"]
    assert "init_args.key" in lines[2]["error"]
    assert "has no tensor 'zz'" in lines[3]["error"] and "'h'" in lines[3]["error"]
