"""v2 configs' init kinds eye, full and file, torch-spyre's derived marks and unlisted_test_mode, through the real
binary. Every input's values are checked against what its kind promises (eye is the identity, full the value, file
the file's tensor bit for bit) by the input digests opcheck records, and by the output of `torch.clone` that the
repro script computes from the same recipe; tensor files are written here by torch, NumPy and by hand."""
import hashlib
import json
import os
import platform
import re
import subprocess
import sys

import numpy
import pytest
import torch

from conftest import OWN_SPYRE, opcheck
from tensor_files import raw, write_safetensors


def digest(t):
    return hashlib.sha256(raw(t)).hexdigest()


def tensor(shape, dtype, init, **init_args):
    extra = f", init_args: {json.dumps(init_args)}" if init_args else ""
    return f"{{shape: {shape}, dtype: torch.{dtype}, device: cuda:0, init: {init}{extra}}}"


def entry(name, spec, op="torch.clone"):
    return f"""                - name: {op}
                  tags: [{op}.{name}]
                  sample_inputs_func:
                    args:
                      - tensor: {spec}
"""


def config(*entries, unlisted="skip"):
    return f"""test_suite_config:
  global:
    supported_dtypes: [float32, float16, bfloat16, int64, bool]
    input_config: {{seed: 11}}
  files:
    - path: ${{TORCH_DEVICE_ROOT}}/tests/models/test_model_ops_v2.py
      unlisted_test_mode: {unlisted}
      tests:
        - names: [TestSpyreModelOps::test_model_ops_db]
          mode: mandatory_success
          tags: [model__inits]
          edits:
            ops:
              include:
{"".join(entries)}cases: []
"""


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """Tensor files under a fake torch-spyre checkout (TORCH_DEVICE_ROOT), and what each holds."""
    root = tmp_path_factory.mktemp("spyre-root")
    (root / "fixtures").mkdir()
    torch.manual_seed(3)
    want = {}
    want["pt"] = torch.randn(4, 6)
    torch.save(want["pt"], root / "fixtures" / "w.pt")
    want["pt_dict"] = torch.randn(3, 2, dtype=torch.float16)
    torch.save({"a": torch.zeros(1), "b": want["pt_dict"]}, root / "fixtures" / "d.pt")
    want["npy"] = torch.from_numpy(numpy.random.default_rng(5).standard_normal((3, 5)).astype(numpy.float32))
    numpy.save(root / "fixtures" / "x.npy", want["npy"].numpy())
    want["npy_fortran"] = torch.arange(12, dtype=torch.int64).reshape(3, 4)
    numpy.save(root / "fixtures" / "f.npy", numpy.asfortranarray(want["npy_fortran"].numpy()))
    want["st"] = torch.randn(2, 8, dtype=torch.bfloat16)
    write_safetensors(root / "fixtures" / "m.safetensors", {"other": torch.ones(3, dtype=torch.float16),
                                                            "layer.weight": want["st"]})
    return root, want


INIT_ENTRIES = {
    "eye": (tensor([5, 5], "float32", "eye"), torch.eye(5)),
    "eye_bf16": (tensor([3, 3], "bfloat16", "eye"), torch.eye(3, dtype=torch.bfloat16)),
    "full": (tensor([3, 4], "float16", "full", fill_value=0.5), torch.full([3, 4], 0.5, dtype=torch.float16)),
    "full_int": (tensor([6], "int64", "full", fill_value=-1), torch.full([6], -1, dtype=torch.int64)),
    "full_bool": (tensor([2, 3], "bool", "full", fill_value=True), torch.ones(2, 3, dtype=torch.bool)),
}
FILE_ENTRIES = {
    "pt": ([4, 6], "float32", {"path": "${TORCH_DEVICE_ROOT}/fixtures/w.pt"}),
    "pt_dict": ([3, 2], "float16", {"path": "${TORCH_DEVICE_ROOT}/fixtures/d.pt", "key": "b"}),
    "npy": ([3, 5], "float32", {"path": "${TORCH_DEVICE_ROOT}/fixtures/x.npy"}),
    "npy_fortran": ([3, 4], "int64", {"path": "${TORCH_DEVICE_ROOT}/fixtures/f.npy"}),
    "st": ([2, 8], "bfloat16", {"path": "${TORCH_DEVICE_ROOT}/fixtures/m.safetensors", "key": "layer.weight"}),
}


def all_entries():
    out = [entry(name, spec) for name, (spec, _) in INIT_ENTRIES.items()]
    out += [entry(name, tensor(shape, dtype, "file", **args)) for name, (shape, dtype, args) in FILE_ENTRIES.items()]
    return out


def expected(files, name):
    return INIT_ENTRIES[name][1] if name in INIT_ENTRIES else files[1][name]


@pytest.fixture(scope="module")
def inits_config(files, tmp_path_factory):
    d = tmp_path_factory.mktemp("v2-inits")
    (d / "inits.yaml").write_text(config(*all_entries()))
    return d / "inits.yaml", {"TORCH_DEVICE_ROOT": str(files[0])}


def test_every_init_kind_validates(inits_config):
    path, env = inits_config
    r = opcheck("validate", path, env=env)
    assert r.rc == 0, r
    assert r.last_line == f"1 manifest, {len(INIT_ENTRIES) + len(FILE_ENTRIES)} cases: 0 errors, 0 warnings", r


@pytest.mark.parametrize("device", ["cpu", "loopback"])
def test_every_init_kind_runs_with_the_values_it_promises(inits_config, files, tmp_path, device):
    path, env = inits_config
    metrics = tmp_path / "m.json"
    r = opcheck("run", "--manifests", path, "--device", device, "--metrics-json", metrics, "--artifact-dir",
                tmp_path / "art", env=env)
    assert r.rc == 0, r
    cases = {c["name"]: c for c in json.loads(metrics.read_text())["cases"]}
    names = list(INIT_ENTRIES) + list(FILE_ENTRIES)
    assert sorted(cases) == sorted(f"torch.clone.{n}" for n in names)
    for name in names:
        c = cases[f"torch.clone.{name}"]
        assert c["outcome"] == "passed", c
        assert c["input_digests"] == [digest(expected(files, name))], name


def test_repro_scripts_build_the_same_inputs(inits_config, files, tmp_path):
    """The repro script's recipe for each kind (torch.eye, torch.full, the file loaders) rebuilds the input bit for
    bit: torch.clone's cpu output is the input."""
    path, env = inits_config
    for name in list(INIT_ENTRIES) + list(FILE_ENTRIES):
        made = opcheck("repro", f"inits::torch.clone.{name}", "--manifests", path, "--python", "--device", "cpu",
                       env=env)
        assert made.rc == 0, made
        script = tmp_path / f"{name}.py"
        script.write_text(made.out)
        out = tmp_path / f"{name}-out"
        run = subprocess.run([sys.executable, str(script), "--out", str(out)], capture_output=True, text=True,
                             timeout=600)
        assert run.returncode == 0, run.stdout + run.stderr
        got = torch.load(out / "cpu.pt")
        want = expected(files, name)
        assert got.dtype == want.dtype and raw(got) == raw(want), name


ERRORS = [
    # (name, tensor spec, environment, what the message says)
    ("eye_not_square", tensor([3, 4], "float32", "eye"), {}, "init: eye needs a square 2-D shape, got [3, 4]"),
    ("eye_3d", tensor([2, 2, 2], "float32", "eye"), {}, "init: eye needs a square 2-D shape"),
    ("full_no_value", tensor([3], "float32", "full"), {}, "init: full needs init_args.fill_value"),
    ("full_overflow", tensor([3], "int8", "full", fill_value=300), {}, "fill_value 300 overflows int8"),
    ("unset_root", tensor([4, 6], "float32", "file", path="${TORCH_DEVICE_ROOT}/fixtures/w.pt"), "unset",
     "the environment variable TORCH_DEVICE_ROOT is not set"),
    ("unset_torch_root", tensor([4, 6], "float32", "file", path="${TORCH_ROOT}/w.pt"), {},
     "the environment variable TORCH_ROOT is not set"),
    ("unknown_token", tensor([4, 6], "float32", "file", path="${HOME}/w.pt"), {}, "which is not a path token"),
    ("missing", tensor([4, 6], "float32", "file", path="${TORCH_DEVICE_ROOT}/nope.pt"), {}, "does not exist"),
    ("extension", tensor([4, 6], "float32", "file", path="${TORCH_DEVICE_ROOT}/fixtures/w.txt"), {},
     "must be a .pt, .npy or .safetensors file"),
    ("no_path", tensor([4, 6], "float32", "file"), {}, "init: file needs a file path"),
    ("shape", tensor([6, 4], "float32", "file", path="${TORCH_DEVICE_ROOT}/fixtures/w.pt"), {},
     "holds a tensor of shape [4, 6] but the tensor's shape is [6, 4]"),
    ("dtype", tensor([3, 5], "float16", "file", path="${TORCH_DEVICE_ROOT}/fixtures/x.npy"), {},
     "holds float32 data (<f4) but the tensor's dtype is float16"),
    ("st_no_key", tensor([2, 8], "bfloat16", "file", path="${TORCH_DEVICE_ROOT}/fixtures/m.safetensors"), {},
     "holds 2 tensors ('other', 'layer.weight'); name one with init_args.key"),
    ("st_bad_key", tensor([2, 8], "bfloat16", "file", path="${TORCH_DEVICE_ROOT}/fixtures/m.safetensors", key="lw"),
     {}, "has no tensor 'lw' (its tensors: 'other', 'layer.weight')"),
    ("pt_dict_no_key", tensor([3, 2], "float16", "file", path="${TORCH_DEVICE_ROOT}/fixtures/d.pt"), {},
     "holds a dict of 2 entries ('a', 'b'), not a single tensor"),
    ("pt_bad_key", tensor([3, 2], "float16", "file", path="${TORCH_DEVICE_ROOT}/fixtures/d.pt", key="c"), {},
     "has no entry 'c' (its keys: 'a', 'b')"),
    ("npy_truncated", tensor([64, 64], "float32", "file", path="${TORCH_DEVICE_ROOT}/bad/cut.npy"), {},
     "is truncated: shape [64, 64] of '<f4' needs 16384 bytes of data"),
    ("npy_garbage", tensor([2], "float32", "file", path="${TORCH_DEVICE_ROOT}/bad/junk.npy"), {},
     "is not a NumPy .npy file"),
    ("st_truncated", tensor([64], "float32", "file", path="${TORCH_DEVICE_ROOT}/bad/cut.safetensors"), {},
     "is truncated: tensor 'w' ends at byte"),
    ("st_garbage", tensor([2], "float32", "file", path="${TORCH_DEVICE_ROOT}/bad/junk.safetensors"), {},
     "its header claims"),
    ("pt_truncated", tensor([4, 6], "float32", "file", path="${TORCH_DEVICE_ROOT}/bad/cut.pt"), {}, "truncated"),
    ("pt_state_dict", tensor([2, 3], "float32", "file", path="${TORCH_DEVICE_ROOT}/bad/sd.pt", key="weight"), {},
     "holds an OrderedDict (a state_dict), which libtorch cannot read"),
]


@pytest.fixture(scope="module")
def bad_files(files):
    root = files[0]
    (root / "bad").mkdir(exist_ok=True)
    numpy.save(root / "bad" / "whole.npy", numpy.zeros((64, 64), dtype=numpy.float32))
    whole = (root / "bad" / "whole.npy").read_bytes()
    (root / "bad" / "cut.npy").write_bytes(whole[: len(whole) // 2])
    (root / "bad" / "junk.npy").write_bytes(os.urandom(100))
    write_safetensors(root / "bad" / "whole.safetensors", {"w": torch.zeros(64)})
    st = (root / "bad" / "whole.safetensors").read_bytes()
    (root / "bad" / "cut.safetensors").write_bytes(st[:-40])
    (root / "bad" / "junk.safetensors").write_bytes(b"\xff" * 64)
    pt = (root / "fixtures" / "w.pt").read_bytes()
    (root / "bad" / "cut.pt").write_bytes(pt[: len(pt) // 2])
    (root / "fixtures" / "w.txt").write_text("not a tensor")
    torch.save(torch.nn.Linear(3, 2).state_dict(), root / "bad" / "sd.pt")
    return root


@pytest.mark.parametrize("name,spec,env,message", ERRORS, ids=[e[0] for e in ERRORS])
def test_bad_inits_are_located_errors_with_a_fix(bad_files, tmp_path, name, spec, env, message):
    path = tmp_path / "bad.yaml"
    path.write_text(config(entry(name, spec)))
    environment = {"TORCH_DEVICE_ROOT": str(bad_files)} if env != "unset" else {"TORCH_DEVICE_ROOT": ""}
    environment["TORCH_ROOT"] = ""
    r = opcheck("validate", path, env=environment)
    assert r.rc == 2, r
    text = r.out + r.err
    line = config(entry(name, spec)).splitlines().index("                      - tensor: " + spec) + 1
    located = [l for l in text.splitlines() if re.match(rf"{re.escape(str(path))}:{line}:\d+: error: ", l)]
    assert located and message in located[0], text
    assert "[case inits::torch.clone." + name + "]" in located[0], text
    fix = text[text.index(located[0]) + len(located[0]):].lstrip().splitlines()[0]
    assert fix.startswith("Fix: "), text
    # run reports the same error as an INVALID_CASE result, never a crash.
    run = opcheck("run", "--manifests", path, "--device", "cpu", "--artifact-dir", tmp_path / "art", env=environment)
    assert run.rc == 2 and message in run.out + run.err, run


def test_a_key_for_a_single_tensor_file_is_a_warning_and_the_tensor_is_used(files, tmp_path):
    path = tmp_path / "k.yaml"
    path.write_text(config(entry("pt", tensor([4, 6], "float32", "file", path="${TORCH_DEVICE_ROOT}/fixtures/w.pt",
                                              key="w"))))
    env = {"TORCH_DEVICE_ROOT": str(files[0])}
    r = opcheck("validate", path, env=env)
    assert r.rc == 0 and "holds a single tensor, not a dict: init_args.key 'w' is not needed" in r.out + r.err, r
    metrics = tmp_path / "m.json"
    run = opcheck("run", "--manifests", path, "--device", "cpu", "--metrics-json", metrics, "--artifact-dir",
                  tmp_path / "art", env=env)
    assert run.rc == 0, run
    assert json.loads(metrics.read_text())["cases"][0]["input_digests"] == [digest(files[1]["pt"])]


def test_derived_marks_select_v2_and_v1_cases_without_strict_marker_errors(inits_config):
    path, env = inits_config
    arch = platform.machine()
    bf16 = opcheck("list-cases", "--manifests", path, "-m", "dtype__bfloat16", "--strict-markers", env=env)
    assert bf16.rc == 0, bf16
    assert sorted(re.findall(r"inits::\S+", bf16.out)) == ["inits::torch.clone.eye_bf16", "inits::torch.clone.st"]
    clone = opcheck("list-cases", "--manifests", path, "-m", f"op__torch_clone and platform__{arch}",
                    "--strict-markers", env=env)
    assert clone.rc == 0 and len(re.findall(r"inits::\S+", clone.out)) == len(INIT_ENTRIES) + len(FILE_ENTRIES), clone
    other = opcheck("list-cases", "--manifests", path, "-m", "platform__no_such_arch", env=env)
    assert other.rc == 5 and "0 selected" in other.out, other
    # One warning, about the mark no case has (the config itself loads without warnings).
    assert other.err.count("warning:") == 1 and "-m names mark 'platform__no_such_arch'" in other.err, other
    # v1: a torch-spyre manifest's linear calls, by torch-spyre's op__ spelling of the op.
    v1 = OWN_SPYRE / "tiny-gpt.yaml"
    linear = opcheck("list-cases", "--manifests", v1, "--model", "tiny-gpt", "-m",
                     "op__torch_nn_functional_linear", "--strict-markers")
    assert linear.rc == 0, linear
    ids = re.findall(r"tiny-gpt::\S+", linear.out)
    want = len(re.findall(r"^\s+op: torch\.nn\.functional\.linear\s*$", v1.read_text(), re.M))
    assert want > 0 and len(ids) == want, linear
    assert "not found in `markers`" not in linear.out + linear.err


def test_unlisted_test_mode_other_than_skip_is_said_to_run_nothing(tmp_path):
    for mode, warned in (("skip", False), ("xfail", True), ("mandatory_success", True)):
        path = tmp_path / f"{mode}.yaml"
        path.write_text(config(entry("z", tensor([2], "float32", "zeros")), unlisted=mode))
        r = opcheck("validate", path)
        assert r.rc == 0, r
        said = f"unlisted_test_mode: {mode} applies to tests of this file that no entry names" in r.out + r.err
        assert said == warned, r
        if warned:
            assert "Fix: " in r.out + r.err


def test_v1_manifests_take_the_same_kinds(tmp_path):
    """eye, full and .npy/.safetensors/dict files are v1 inputs too (a file relative to the manifest's folder)."""
    torch.manual_seed(9)
    npy = torch.randn(2, 3)
    numpy.save(tmp_path / "a.npy", npy.numpy())
    st = torch.randn(4, dtype=torch.float16)
    write_safetensors(tmp_path / "t.safetensors", {"x": torch.zeros(1), "y": st})
    pt = torch.randn(5)
    torch.save({"p": pt}, tmp_path / "d.pt")
    (tmp_path / "v1.yaml").write_text("""model: v1inits
cases:
  - name: eye
    op: torch.clone
    inputs:
      - tensor: {shape: [4, 4], dtype: bf16, init: eye}
  - name: full
    op: torch.clone
    inputs:
      - tensor: {shape: [2, 5], dtype: int32, init: full, init_args: {fill_value: 7}}
  - name: npy
    op: torch.clone
    inputs:
      - tensor: {dtype: fp32, file: a.npy}
  - name: safetensors
    op: torch.clone
    inputs:
      - tensor: {shape: [4], dtype: fp16, init: file, init_args: {path: t.safetensors, key: y}}
  - name: dict
    op: torch.clone
    inputs:
      - tensor: {shape: [5], dtype: fp32, file: d.pt, init_args: {key: p}}
""")
    metrics = tmp_path / "m.json"
    r = opcheck("run", "--manifests", tmp_path / "v1.yaml", "--model", "v1inits", "--device", "loopback",
                "--metrics-json", metrics, "--artifact-dir", tmp_path / "art")
    assert r.rc == 0, r
    cases = {c["name"]: c for c in json.loads(metrics.read_text())["cases"]}
    want = {"eye": torch.eye(4, dtype=torch.bfloat16), "full": torch.full([2, 5], 7, dtype=torch.int32), "npy": npy,
            "safetensors": st, "dict": pt}
    for name, t in want.items():
        assert cases[name]["outcome"] == "passed", cases[name]
        assert cases[name]["input_digests"] == [digest(t)], name
