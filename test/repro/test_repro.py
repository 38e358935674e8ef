"""Failure bundles (`opcheck run --save-failures DIR`) and `opcheck repro`, through the real binary.

A loopback fault fails a case; its bundle must hold the exact tensors (torch.load-able, with their layout), rerun
to the same stage and the same figures, and its `repro --python` script must reproduce the saved outputs bit for bit
under Debian's python3-torch. Recipe scripts (no bundle) must rebuild the inputs and the CPU reference exactly as
opcheck does.
"""
import ast
import json
import os
import sys
import pathlib
import re
import shlex
import subprocess

import pytest
import torch

SOURCE_DIR = pathlib.Path(os.environ.get("OPCHECK_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))
BUILD_DIR = pathlib.Path(os.environ.get("OPCHECK_BUILD_DIR", SOURCE_DIR / "build"))
BIN = pathlib.Path(os.environ.get("OPCHECK_BIN", BUILD_DIR / "opcheck"))
PYTHON = os.environ.get("OPCHECK_PYTHON", sys.executable)
TEMPLATE = SOURCE_DIR / "manifests" / "template.yaml"

EXP_FAULT = {"OPCHECK_LOOPBACK_FAULTS": "aten::exp=bias:1e-2"}
# A device whose every input transfer fails: each case fails after its CPU reference ran, so its bundle keeps the
# reference output opcheck computed.
NO_TRANSFER = {"OPCHECK_LOOPBACK_FAULTS": "aten::_copy_from=throw"}

FAULT_MANIFEST = """\
model: repro-demo
defaults: {seed: 7}
cases:
  - name: exp.strided
    op: torch.exp
    inputs:
      - tensor: {shape: [3, 4], stride: [1, 5], storage_offset: 2, init: randn}
  - name: exp.half
    op: torch.exp
    dtype: fp16
    inputs:
      - tensor: {shape: [2, 8], init: uniform, init_args: {low: -2, high: 2}}
  - name: add.ok
    op: torch.add
    inputs:
      - tensor: {shape: [4, 8]}
      - tensor: {shape: [8]}
    kwmap: {alpha: 2}
"""

# Cases the template lacks: a CPU kernel without fp16 (reference upcast), a dtype keyword, bf16 matmul (the oneDNN
# AMX guard), in-place writes, an expanded input and a transposed host tensor, ops run through opcheck's
# decompositions, aten:: names and a keyword that is a Python reserved word.
EXTRA_MANIFEST = """\
model: repro-extra
defaults: {seed: 3}
cases:
  - name: softmax.half.to.float
    op: torch.nn.functional.softmax
    dtype: fp16
    kwmap: {dim: -1, dtype: torch.float32}
    inputs:
      - tensor: {shape: [3, 16], init: randn}
  - name: silu.half
    op: torch.nn.functional.silu
    dtype: fp16
    inputs:
      - tensor: {shape: [4, 5], stride: [1, 4], init: randn}
  - name: linear.bf16
    op: torch.nn.functional.linear
    dtype: bf16
    inputs:
      - tensor: {shape: [11, 64], init: randn}
      - tensor: {shape: [32, 64], init: xavier}
      - tensor: {shape: [32], init: zeros}
  - name: index_copy.inplace
    op: torch.index_copy_
    inputs:
      - tensor: {shape: [5, 3], init: zeros}
      - value: 0
      - tensor: {shape: [2], dtype: int64, data: [4, 1]}
      - tensor: {shape: [2, 3], init: arange}
  - name: index_copy.random
    op: torch.index_copy_
    inputs:
      - tensor: {shape: [9, 3], init: zeros}
      - value: 0
      - tensor: {shape: [7], dtype: int64, init: randint, init_args: {high: 1000}}
      - tensor: {shape: [7, 3], init: arange}
  - name: scatter.random
    op: torch.Tensor.scatter_
    inputs:
      - tensor: {shape: [3, 8], init: zeros}
      - value: 1
      - tensor: {shape: [3, 6], dtype: int64, init: randint, init_args: {high: 8}}
      - tensor: {shape: [3, 6], init: arange}
  - name: put.random
    op: torch.Tensor.put_
    inputs:
      - tensor: {shape: [4, 5], init: zeros}
      - tensor: {shape: [3, 4], dtype: int64, init: randint, init_args: {low: -20, high: 20}}
      - tensor: {shape: [12], init: arange}
  - name: log_softmax_backward.half
    op: aten::_log_softmax_backward_data
    inputs:
      - tensor: {shape: [4, 12], dtype: fp16, init: randn}
      - tensor: {shape: [4, 12], dtype: fp16, init: randn}
      - value: 1
      - value: torch.float16
  - name: mul.expanded
    op: torch.mul
    inputs:
      - tensor: {shape: [4, 6], stride: [0, 1], init: rand, init_args: {low: 1, high: 3}}
      - tensor: {shape: [4, 6], stride: [1, 4], device: cpu, init: randint, init_args: {low: -3, high: 4}, dtype: int32}
  - name: sdpa.gqa.causal
    op: torch.nn.functional.scaled_dot_product_attention
    dtype: bf16
    kwmap: {is_causal: true, enable_gqa: true}
    inputs:
      - tensor: {shape: [1, 4, 6, 8], init: randn}
      - tensor: {shape: [1, 2, 6, 8], init: randn}
      - tensor: {shape: [1, 2, 6, 8], init: randn}
  - name: rms_norm.half
    op: torch.rms_norm
    dtype: fp16
    kwmap: {eps: 1.0e-06}
    inputs:
      - tensor: {shape: [3, 16], init: randn}
      - value: "(16,)"
      - tensor: {shape: [16], init: uniform, init_args: {low: 0.5, high: 1.5}}
  - name: uniform.from.keyword
    op: aten::uniform_
    kwmap: {from: 0.5, to: 0.5}
    inputs:
      - tensor: {shape: [3, 2]}
  - name: aten.add
    op: aten::add.Tensor
    inputs:
      - tensor: {shape: [2, 3], dtype: fp64, init: randn, init_args: {mean: 1.5, std: 0.25}}
      - tensor: {shape: [2, 3], dtype: fp64}
    kwmap: {alpha: -0.5}
"""


def opcheck(*args, env=None, cwd=None, timeout=600):
    full_env = dict(os.environ)
    full_env.pop("OPCHECK_MANIFESTS", None)
    full_env.pop("OPCHECK_LOOPBACK_FAULTS", None)
    full_env["NO_COLOR"] = "1"
    full_env.update(env or {})
    return subprocess.run([str(BIN), *map(str, args)], capture_output=True, text=True, env=full_env, cwd=cwd,
                          timeout=timeout)


def shell(command, cwd=None, timeout=600):
    env = dict(os.environ)
    env.pop("OPCHECK_LOOPBACK_FAULTS", None)
    env["NO_COLOR"] = "1"
    return subprocess.run(["bash", "-c", command], capture_output=True, text=True, env=env, cwd=cwd, timeout=timeout)


def python_script(path, *args, timeout=600):
    env = dict(os.environ)
    env.pop("OPCHECK_LOOPBACK_FAULTS", None)
    return subprocess.run([PYTHON, str(path), *map(str, args)], capture_output=True, text=True, env=env,
                          timeout=timeout)


def metrics_cases(path):
    return {c["id"]: c for c in json.loads(pathlib.Path(path).read_text())["cases"]}


def same_bits(a, b):
    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        if not (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)):
            return False
        if a.dtype != b.dtype or a.shape != b.shape:
            return False
        x, y = a.contiguous().reshape(-1), b.contiguous().reshape(-1)
        if x.is_complex():
            x, y = torch.view_as_real(x).reshape(-1), torch.view_as_real(y).reshape(-1)
        return torch.equal(x.view(torch.uint8), y.view(torch.uint8))
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(same_bits(x, y) for x, y in zip(a, b))
    return a == b


def readme_commands(folder):
    """The shell commands of a bundle README's ```sh blocks, in order."""
    text = (folder / "README.md").read_text()
    return [line for block in re.findall(r"```sh\n(.*?)```", text, re.S) for line in block.splitlines() if line]


@pytest.fixture(scope="module")
def fault_run(tmp_path_factory):
    """The fault manifest run once with aten::exp biased on the loopback device."""
    tmp = tmp_path_factory.mktemp("fault")
    manifest = tmp / "demo.yaml"
    manifest.write_text(FAULT_MANIFEST)
    bundles = tmp / "bundles"
    run = opcheck("run", "--manifests", manifest, "--device", "loopback", "--save-failures", bundles,
                  "--artifact-dir", tmp / "out", "--metrics-json", tmp / "metrics.json", env=EXP_FAULT)
    assert run.returncode == 1, run.stdout + run.stderr
    return tmp, bundles, metrics_cases(tmp / "metrics.json"), run


def test_failed_cases_get_a_bundle_and_passing_ones_none(fault_run):
    tmp, bundles, cases, run = fault_run
    assert sorted(p.name for p in bundles.iterdir()) == ["repro-demo__exp.half", "repro-demo__exp.strided"]
    assert f"failure bundles in {bundles}" in run.stderr
    for name in ("repro-demo__exp.half", "repro-demo__exp.strided"):
        folder = bundles / name
        assert {p.name for p in folder.iterdir()} >= {"case.yaml", "README.md", "failure.json", "reference.pt",
                                                       "device.pt", "inputs"}
        facts = json.loads((folder / "failure.json").read_text())
        original = cases[facts["case_id"]]
        assert facts["stage"] == original["stage"] == "INCORRECT_RESULT"
        assert facts["figures"] == original["figures"]
        assert facts["environment"] == EXP_FAULT
        readme = (folder / "README.md").read_text()
        assert facts["case_id"] in readme and "INCORRECT_RESULT" in readme
        assert "Mismatched elements" in readme
        assert f"bundle of {facts['case_id']}: {folder}" in original["captured_stderr"]


def test_bundle_tensors_load_in_python_with_their_layout(fault_run):
    tmp, bundles, cases, _ = fault_run
    folder = bundles / "repro-demo__exp.strided"
    x = torch.load(folder / "inputs" / "0.pt")
    assert (x.dtype, list(x.shape), x.stride(), x.storage_offset()) == (torch.float32, [3, 4], (1, 5), 2)
    # The reference output is the CPU's exp of exactly these values; the device's is biased by the fault.
    reference, device = torch.load(folder / "reference.pt"), torch.load(folder / "device.pt")
    assert same_bits(reference, torch.exp(x))
    assert torch.allclose(device - reference, torch.full_like(reference, 1e-2), atol=1e-5)
    # opcheck's digest of the input is the sha256 of these logical bytes.
    import hashlib
    digest = hashlib.sha256(x.contiguous().reshape(-1).view(torch.uint8).numpy().tobytes()).hexdigest()
    assert cases["repro-demo::exp.strided"]["input_digests"] == [digest]

    # fp16 exp: the reference is computed in float32 and cast back.
    half = bundles / "repro-demo__exp.half"
    h = torch.load(half / "inputs" / "0.pt")
    assert h.dtype == torch.float16
    assert same_bits(torch.load(half / "reference.pt"), torch.exp(h.float()).half())

    manifest = (folder / "case.yaml").read_text()
    assert "{shape: [3, 4], stride: [1, 5], storage_offset: 2, dtype: fp32, init: file, file: \"inputs/0.pt\"}" in manifest


@pytest.mark.parametrize("name", ["repro-demo__exp.strided", "repro-demo__exp.half"])
def test_rerunning_a_bundle_gives_the_same_stage_and_figures(fault_run, name):
    tmp, bundles, cases, _ = fault_run
    folder = bundles / name
    commands = readme_commands(folder)
    rerun = commands[0]
    assert rerun.startswith("OPCHECK_LOOPBACK_FAULTS=")
    assert f"run --manifests {folder / 'case.yaml'} --device loopback" in rerun
    out = tmp / f"rerun-{name}"
    proc = shell(f"{rerun} --metrics-json {out}.json --artifact-dir {out}")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    again = metrics_cases(f"{out}.json")
    facts = json.loads((folder / "failure.json").read_text())
    assert list(again) == [facts["case_id"]], "the bundle runs its one case, under its original id"
    case, original = again[facts["case_id"]], cases[facts["case_id"]]
    assert case["stage"] == original["stage"]
    assert case["figures"] == original["figures"]
    assert case["input_digests"] == original["input_digests"]
    assert case["message"] == original["message"]

    # `opcheck repro --bundle` prints the same command.
    printed = opcheck("repro", "--bundle", folder)
    assert printed.returncode == 0, printed.stderr
    assert printed.stdout.splitlines()[-1] == rerun
    # ... and finds the bundle in the --save-failures folder by case id.
    by_id = opcheck("repro", facts["case_id"], "--bundle", bundles)
    assert by_id.stdout.splitlines()[-1] == rerun


@pytest.mark.parametrize("name", ["repro-demo__exp.strided", "repro-demo__exp.half"])
def test_python_repro_of_a_bundle_reproduces_both_outputs(fault_run, name):
    tmp, bundles, cases, _ = fault_run
    folder = bundles / name
    facts = json.loads((folder / "failure.json").read_text())
    made = opcheck("repro", "--bundle", folder, "--python")
    assert made.returncode == 0, made.stderr
    script = made.stdout
    # The AMX guard must come before torch is imported.
    assert script.index('os.environ.setdefault("ONEDNN_MAX_CPU_ISA", "AVX512_CORE_BF16")') < script.index("import torch")
    assert "torch.exp" in script
    path = tmp / f"{name}.py"
    path.write_text(script)
    run = python_script(path, "--out", tmp / f"{name}-out")
    # 1: the device differs from the cpu, as in the failing run (the script injects the run's fault into loopback).
    assert run.returncode == 1, run.stdout + run.stderr
    assert "reference.pt: reproduced bit for bit" in run.stdout, run.stdout
    assert "device.pt: reproduced bit for bit" in run.stdout, run.stdout
    assert f"max_abs_diff {facts['figures']['max_abs_diff']!r}" in run.stdout, run.stdout
    assert same_bits(torch.load(tmp / f"{name}-out" / "cpu.pt"), torch.load(folder / "reference.pt"))

    # The same script on a healthy device: the loopback without the fault agrees with the cpu.
    clean = script.replace("os.environ.setdefault('OPCHECK_LOOPBACK_FAULTS', 'aten::exp=bias:1e-2')", "")
    assert clean != script
    path.write_text(clean)
    healthy = python_script(path)
    assert "device (privateuseone:0) agrees with the cpu reference" in healthy.stdout, healthy.stdout + healthy.stderr
    assert "device.pt: NOT reproduced" in healthy.stdout and healthy.returncode == 2


@pytest.fixture(scope="module")
def reference_bundles(tmp_path_factory):
    """Every template case and the extra cases, run on a loopback device that cannot take inputs: each case fails
    after its CPU reference, so each bundle holds opcheck's reference output."""
    tmp = tmp_path_factory.mktemp("references")
    extra = tmp / "extra.yaml"
    extra.write_text(EXTRA_MANIFEST)
    bundles = tmp / "bundles"
    for manifest, model in ((TEMPLATE, "template"), (extra, "repro-extra")):
        run = opcheck("run", "--manifests", manifest, "--model", model, "--device", "loopback", "--save-failures",
                      bundles, "--artifact-dir", tmp / "out", env=NO_TRANSFER)
        assert run.returncode == 1, run.stdout + run.stderr
    return tmp, bundles, {TEMPLATE: "template", extra: "repro-extra"}


def template_ids():
    names = re.findall(r"^  - name: (\S+)", TEMPLATE.read_text(), re.M)
    return [f"template::{n}" for n in names]


def extra_ids():
    return [f"repro-extra::{n}" for n in re.findall(r"^  - name: (\S+)", EXTRA_MANIFEST, re.M)]


@pytest.mark.parametrize("case_id", template_ids() + extra_ids())
def test_recipe_script_on_cpu_rebuilds_opcheck_reference(reference_bundles, case_id):
    """`opcheck repro ID --python --device cpu` (no bundle: inputs from the manifest's recipes) computes the very
    output opcheck's reference computed, bit for bit, and the same in-place writes."""
    tmp, bundles, manifests = reference_bundles
    manifest = next(m for m, model in manifests.items() if case_id.startswith(model + "::"))
    folder = bundles / case_id.replace("::", "__")
    assert (folder / "failure.json").exists(), f"no bundle for {case_id}"
    facts = json.loads((folder / "failure.json").read_text())
    made = opcheck("repro", case_id, "--manifests", manifest, "--python", "--device", "cpu")
    assert made.returncode == 0, made.stderr
    assert "BUNDLE = None" in made.stdout
    path = tmp / (folder.name + ".py")
    path.write_text(made.stdout)
    out = tmp / (folder.name + "-out")
    run = python_script(path, "--out", out)
    if not (folder / "reference.pt").exists():  # expects_error: the reference raised as the case expects
        assert "reference (cpu): raised the expected" in run.stdout, run.stdout + run.stderr
        assert run.returncode == 0
        return
    # As a device, the cpu lacks some float16 kernels (opcheck's reference computes those in float32).
    device_lacks_dtype = "device (cpu) raised RuntimeError" in run.stdout and "not implemented for 'Half'" in run.stdout
    assert run.returncode == (1 if device_lacks_dtype else 0), run.stdout + run.stderr
    assert device_lacks_dtype or "device (cpu) agrees with the cpu reference" in run.stdout
    assert same_bits(torch.load(out / "cpu.pt"), torch.load(folder / "reference.pt")), run.stdout
    if facts["written_slots"]:
        after = torch.load(out / "cpu_inputs_after.pt")
        assert same_bits([after[k] for k in facts["written_slots"]], torch.load(folder / "reference_written.pt"))

    # The bundle's own script (its saved tensors) agrees too and checks that itself.
    from_bundle = opcheck("repro", "--bundle", folder, "--python", "--device", "cpu")
    path.write_text(from_bundle.stdout)
    run = python_script(path)
    assert "reference.pt: reproduced bit for bit" in run.stdout, run.stdout + run.stderr
    assert run.returncode == (1 if device_lacks_dtype else 0)


def test_crashed_case_leaves_its_staged_bundle_which_crashes_again(tmp_path):
    manifest = tmp_path / "demo.yaml"
    manifest.write_text(FAULT_MANIFEST)
    bundles = tmp_path / "bundles"
    segv = {"OPCHECK_LOOPBACK_FAULTS": "aten::exp=segv"}
    run = opcheck("run", "--manifests", manifest, "--device", "loopback", "--save-failures", bundles,
                  "--artifact-dir", tmp_path / "out", "--metrics-json", tmp_path / "m.json", "-k", "exp.strided",
                  env=segv)
    assert run.returncode == 1, run.stdout + run.stderr
    assert metrics_cases(tmp_path / "m.json")["repro-demo::exp.strided"]["stage"] == "CRASHED"
    folder = bundles / "repro-demo__exp.strided"
    facts = json.loads((folder / "failure.json").read_text())
    assert facts["finished"] is False and facts["stage"] is None
    assert "did not finish" in (folder / "README.md").read_text()
    assert "init: randn" in (folder / "case.yaml").read_text(), "a crash keeps the recipe, which rebuilds the inputs"
    rerun = readme_commands(folder)[0]
    proc = shell(f"{rerun} --metrics-json {tmp_path}/again.json --artifact-dir {tmp_path}/again")
    assert metrics_cases(tmp_path / "again.json")["repro-demo::exp.strided"]["stage"] == "CRASHED", proc.stdout


def test_nondeterministic_bundle_keeps_the_run_that_differed(tmp_path):
    manifest = tmp_path / "demo.yaml"
    manifest.write_text(FAULT_MANIFEST)
    bundles = tmp_path / "bundles"
    run = opcheck("run", "--manifests", manifest, "--device", "loopback", "--save-failures", bundles, "-k",
                  "exp.strided", "--artifact-dir", tmp_path / "out", env={"OPCHECK_LOOPBACK_FAULTS": "aten::exp=nondet"})
    assert run.returncode == 1, run.stdout + run.stderr
    folder = bundles / "repro-demo__exp.strided"
    assert json.loads((folder / "failure.json").read_text())["stage"] == "NONDETERMINISTIC"
    assert not same_bits(torch.load(folder / "device.pt"), torch.load(folder / "device_run2.pt"))


def test_repro_command_runs_the_one_case(tmp_path):
    manifest = tmp_path / "names.yaml"
    manifest.write_text("model: names\ncases:\n" + "".join(
        f"  - name: {n}\n    op: torch.neg\n    inputs:\n      - tensor: {{shape: [3]}}\n"
        for n in ("neg.1", "neg.11", "neg.12", "neg.2")))
    printed = opcheck("repro", "names::neg.1", "--manifests", manifest, "--device", "cpu")
    assert printed.returncode == 0, printed.stderr
    command = printed.stdout.splitlines()[-1]
    # The case by its id, as pytest reruns a node id; no -k expression that other names could also match.
    assert command.split()[-4:] == ["names::neg.1", "--device", "cpu", "-v"], command
    assert " -k " not in command, command
    assert "# note" not in printed.stdout
    ran = shell(command + f" --artifact-dir {tmp_path}/out", cwd=tmp_path)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "PASSED names::neg.1" in ran.stdout
    assert ran.stdout.splitlines()[-1].startswith("1 passed")

    # A template case is found by id although templates are not selected by default.
    template = opcheck("repro", "template::init_arange", "--manifests", TEMPLATE, "--device", "cpu")
    ran = shell(template.stdout.splitlines()[-1] + f" --artifact-dir {tmp_path}/out2")
    assert ran.stdout.splitlines()[-1].startswith("1 passed"), ran.stdout + ran.stderr


def test_python_repro_without_a_bundle_keeps_the_environments_loopback_faults(tmp_path):
    manifest = tmp_path / "faulty.yaml"
    manifest.write_text("model: faulty\ncases:\n  - name: exp.1\n    op: torch.exp\n    inputs:\n"
                        "      - tensor: {shape: [4]}\n")
    fault = "os.environ.setdefault('OPCHECK_LOOPBACK_FAULTS', 'aten::exp=bias:1e-2')"
    made = opcheck("repro", "faulty::exp.1", "--manifests", manifest, "--device", "loopback", "--python",
                   env=EXP_FAULT)
    assert made.returncode == 0, made.stderr
    assert fault in made.stdout, made.stdout
    path = tmp_path / "exp.py"
    path.write_text(made.stdout)
    run = python_script(path)  # without the fault in its own environment: the script carries it
    assert run.returncode == 1, run.stdout + run.stderr
    assert "device (privateuseone:0) DIFFERS from the cpu reference" in run.stdout, run.stdout
    # The script carries what the rerun line carries (one allow-list, opcheck/device_environment.h), on any device:
    # on the cpu nothing reads the loopback's faults, and the two never disagree about the run's environment.
    on_cpu = opcheck("repro", "faulty::exp.1", "--manifests", manifest, "--device", "cpu", "--python", env=EXP_FAULT)
    assert on_cpu.returncode == 0, on_cpu.stderr
    rerun = opcheck("repro", "faulty::exp.1", "--manifests", manifest, "--device", "cpu", env=EXP_FAULT)
    assert "OPCHECK_LOOPBACK_FAULTS=aten::exp=bias:1e-2 " in rerun.stdout, rerun.stdout
    assert fault in on_cpu.stdout, on_cpu.stdout


def test_python_repro_judges_a_sparse_output_by_layout_then_dense_values_and_bundles_keep_it(tmp_path):
    manifest = tmp_path / "sparse.yaml"
    manifest.write_text("model: sparse\ncases:\n  - name: to_sparse.1\n    op: torch.Tensor.to_sparse\n    inputs:\n"
                        "      - tensor: {shape: [4, 6], init: randint, init_args: {low: 0, high: 2}}\n")
    made = opcheck("repro", "sparse::to_sparse.1", "--manifests", manifest, "--device", "cpu", "--python")
    assert made.returncode == 0, made.stderr
    script = tmp_path / "sparse_repro.py"
    script.write_text(made.stdout)
    run = python_script(script)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "agrees with the cpu reference" in run.stdout, run.stdout
    # The script's own comparison, given device results a backend could return.
    probe = tmp_path / "probe.py"
    probe.write_text(f"""import runpy, torch
compare = runpy.run_path({str(script)!r}, run_name="repro")["compare"]
d = torch.tensor([[0.0, 1.5, 0.0], [-2.0, 0.0, 3.0]])
c = d.to_sparse()
twice = torch.cat([c.indices(), c.indices()], 1)
uncoalesced = torch.sparse_coo_tensor(twice, torch.cat([c.values() / 2] * 2), c.shape)
w = d.clone()
w[1, 2] = 3.5
print("RESULTS", compare(c, uncoalesced), compare(c, d), compare(c, w.to_sparse()))
""")
    judged = python_script(probe)
    assert judged.returncode == 0, judged.stdout + judged.stderr
    assert "RESULTS True False False" in judged.stdout, judged.stdout
    assert "layout mismatch: the cpu gives torch.sparse_coo, the device torch.strided" in judged.stdout
    assert "1 / 6 mismatched" in judged.stdout, judged.stdout

    # A bundle of a sparse output on the loopback, which has no sparse kernels: NOT_SUPPORTED, decided before any CPU
    # reference is computed (docs/judgement.md), so the bundle holds its inputs and no reference, and its script
    # computes the CPU's result itself.
    bundles = tmp_path / "bundles"
    failed = opcheck("run", "--manifests", manifest, "--device", "loopback", "--save-failures", bundles,
                     "--artifact-dir", tmp_path / "out")
    assert failed.returncode == 1 and "1 not supported" in failed.stdout, failed.stdout + failed.stderr
    folder = bundles / "sparse__to_sparse.1"
    assert (folder / "inputs" / "0.pt").is_file() and not (folder / "reference.pt").exists(), list(folder.rglob("*"))
    made = opcheck("repro", "--bundle", folder, "--python")
    assert made.returncode == 0, made.stderr
    script.write_text(made.stdout)
    run = python_script(script)
    assert "reference.pt" not in run.stdout and run.returncode == 1, run.stdout + run.stderr


HOSTILE_NAMES = ['x"""+__import__("os").system("touch PWNED")+"""', "x\\", 'q"', "x'''y", "a$(touch PWNED)b"]


@pytest.mark.parametrize("name", HOSTILE_NAMES)
def test_python_repro_of_a_hostile_case_name_runs_no_code(tmp_path, name):
    manifest = tmp_path / "hostile.yaml"
    quoted = name.replace("\\", "\\\\").replace('"', '\\"')
    manifest.write_text(f'model: hostile\ncases:\n  - name: "{quoted}"\n    op: torch.neg\n    inputs:\n'
                        "      - tensor: {shape: [4]}\n")
    made = opcheck("repro", f"hostile::{name}", "--manifests", manifest, "--device", "cpu", "--python")
    assert made.returncode == 0, made.stderr
    tree = ast.parse(made.stdout)  # one docstring, then code: the name ended nothing early
    assert f"hostile::{name}" in ast.get_docstring(tree), made.stdout[:400]
    path = tmp_path / "hostile.py"
    path.write_text(made.stdout)
    run = subprocess.run([PYTHON, str(path)], capture_output=True, text=True, cwd=tmp_path, timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr
    assert not (tmp_path / "PWNED").exists()


WRITER_NAMES = HOSTILE_NAMES + ["</script><img src=x onerror=alert(1)>", "a&b<c>'d"]


@pytest.mark.parametrize("name", WRITER_NAMES)
def test_every_writer_keeps_a_hostile_case_name_exact_and_inert(tmp_path, name):
    """A failing case with a hostile name through every writer: the reports read back hold the name exactly, the
    HTML never carries it as markup, the failure bundle's case.yaml loads back with it, and the shell command `repro`
    prints, the rerun line and the bundle README's commands run as written execute nothing of it."""
    every_writer_keeps_names_exact_and_inert(tmp_path, "hostile.yaml", "hostile", name)


# Model and file names that mean something to a shell, Python or HTML (control characters are refused at load; the
# test below covers those).
HOSTILE_MODELS = ['m$(touch PWNED)', "m'q\"x", 'm"""+__import__("os").system("touch PWNED")+"""', "m`touch PWNED`",
                  "<img src=x onerror=alert(1)>"]
HOSTILE_FILES = ["a$(touch PWNED)b.yaml", "f'q`touch PWNED`.yaml", "s p;touch PWNED;.yaml", "-x.yaml"]


@pytest.mark.parametrize("model", HOSTILE_MODELS)
def test_every_writer_keeps_a_hostile_model_name_exact_and_inert(tmp_path, model):
    every_writer_keeps_names_exact_and_inert(tmp_path, "hostile.yaml", model, "exp.1")


@pytest.mark.parametrize("file_name", HOSTILE_FILES)
def test_every_writer_keeps_a_hostile_file_name_exact_and_inert(tmp_path, file_name):
    every_writer_keeps_names_exact_and_inert(tmp_path, file_name, "hostile", "exp.1")


def every_writer_keeps_names_exact_and_inert(tmp_path, file_name, model, name):
    import xml.etree.ElementTree as ET

    manifest = tmp_path / file_name
    quote = lambda s: s.replace("\\", "\\\\").replace('"', '\\"')
    manifest.write_text(f'model: "{quote(model)}"\ncases:\n  - name: "{quote(name)}"\n    op: torch.exp\n    inputs:\n'
                        "      - tensor: {shape: [4]}\n")
    case_id = f"{model}::{name}"
    ran = opcheck("run", "--manifests", manifest, "--device", "loopback", "--junit-xml", tmp_path / "j.xml",
                  "--metrics-json", tmp_path / "m.json", "--html", tmp_path / "r.html", "--save-failures",
                  tmp_path / "bundles", "--artifact-dir", tmp_path / "art", env=EXP_FAULT, cwd=tmp_path)
    assert ran.returncode == 1, ran.stdout + ran.stderr
    [rec] = json.loads((tmp_path / "m.json").read_text())["cases"]
    assert rec["id"] == case_id and rec["outcome"] == "failed", rec
    [tc] = ET.parse(tmp_path / "j.xml").getroot().iter("testcase")
    assert name in tc.get("name"), tc.attrib
    html = (tmp_path / "r.html").read_text()
    assert "<img src=x" not in html and "</script><img" not in html
    # The bundle's one-case manifest (the YAML writer) loads back with the same id.
    [bundle] = [p for p in (tmp_path / "bundles").iterdir() if p.is_dir()]
    listed = opcheck("list-cases", "--manifests", bundle / "case.yaml", "--json")
    assert listed.returncode == 0, listed.stderr
    assert [c["id"] for c in json.loads(listed.stdout)] == [case_id], listed.stdout[:400]

    # The shell writers, each run by bash as printed: the console's rerun line (an `opcheck repro` command), then the
    # `opcheck run` command it prints, which reruns just this case; then the bundle README's rerun command.
    def bash(line):
        done = subprocess.run(["bash", "-c", line], capture_output=True, text=True, cwd=tmp_path, timeout=600)
        assert not (tmp_path / "PWNED").exists(), line
        return done

    rerun = [line.split("rerun: ", 1)[1] for line in ran.stdout.splitlines() if line.startswith("rerun: ")]
    assert len(rerun) == 1, ran.stdout
    printed = bash(rerun[0])
    assert printed.returncode == 0, (rerun[0], printed.stdout, printed.stderr)
    run_line = printed.stdout.strip().splitlines()[-1]
    again = bash(run_line + " --artifact-dir " + shlex.quote(str(tmp_path / "again")))
    assert again.returncode == 1 and again.stdout.strip().splitlines()[-1].startswith("1 failed"), \
        (run_line, again.stdout, again.stderr)
    assert case_id in again.stdout, again.stdout
    readme = (bundle / "README.md").read_text()
    [readme_run] = [block.split("\n")[1] for block in readme.split("```sh")[1:] if " run --manifests " in block]
    from_readme = bash(readme_run + " --artifact-dir " + shlex.quote(str(tmp_path / "from_readme")))
    assert from_readme.returncode == 1 and case_id in from_readme.stdout, (readme_run, from_readme.stdout)


V2_CONFIG = """test_suite_config:
  global:
    supported_dtypes:
      - {{name: float32, precision: {{atol: 0.005, rtol: 0.005}}}}
  files:
    - path: ${{TORCH_DEVICE_ROOT}}/tests/models/test_model_ops_v2.py
      unlisted_test_mode: skip
      tests:
        - names: [TestSpyreModelOps::test_model_ops_db]
          mode: mandatory_success
          tags: ["{model_tag}"]
          edits:
            ops:
              include:
                - name: torch.exp
                  sample_inputs_func:
                    args:
                      - tensor: {{shape: [4], stride: [1], dtype: torch.float32, device: cuda:0}}
                  tags: ["{case_tag}"]
cases: []
"""
V1_MANIFEST = 'model: "{model}"\ncases:\n  - name: "ok"\n    op: "{op}"\n    inputs:\n      - tensor: {{shape: [4]}}\n'

# Names holding control characters, as YAML escapes write them: a line break that would end `repro`'s `# <id>`
# comment and make the rest a command, an OSC that retitles the terminal, an erase-screen sequence. Each is refused
# where the file names it; nothing opcheck prints carries the bytes, and nothing `repro` prints runs anything.
CONTROL_NAMES = {
    "model-newline": ("model name", "m.yaml", V1_MANIFEST.format(model="mm\\r\\ntouch PWNED #", op="torch.exp"),
                      "mm\r\ntouch PWNED #::ok"),
    "model-osc": ("model name", "m.yaml", V1_MANIFEST.format(model="m\\u001b]0;pwned\\u0007", op="torch.exp"),
                  "m\x1b]0;pwned\x07::ok"),
    "op-erase": ("op", "m.yaml", V1_MANIFEST.format(model="m", op="torch.exp\\u001b[2J"), "m::ok"),
    "model-tag": ("tag", "v2.yaml", V2_CONFIG.format(model_tag="model__m\\r\\ntouch PWNED #", case_tag="torch.exp.1"),
                  "m\r\ntouch PWNED #::torch.exp.1"),
    "case-tag": ("tag", "v2.yaml", V2_CONFIG.format(model_tag="model__m", case_tag="torch.exp.\\u001b[2J\\ntouch PWNED"),
                 "m::torch.exp.\x1b[2J\ntouch PWNED"),
}


def raw(*args, cwd):
    """opcheck's output as bytes: text mode would turn a planted CR LF into a plain line break."""
    env = dict(os.environ, NO_COLOR="1")
    env.pop("OPCHECK_MANIFESTS", None)
    return subprocess.run([str(BIN), *map(str, args)], capture_output=True, env=env, cwd=cwd, timeout=600)


def assert_no_control_bytes(done, what):
    out = done.stdout + done.stderr
    for byte in (b"\x1b", b"\x07", b"\r", b"touch PWNED\n"):
        assert byte not in out, (what, byte, out[:2000])


@pytest.mark.parametrize("key", sorted(CONTROL_NAMES))
def test_control_characters_in_model_op_and_tag_names_are_refused_and_never_printed(tmp_path, key):
    what, file_name, text, planted_id = CONTROL_NAMES[key]
    manifest = tmp_path / file_name
    manifest.write_text(text)
    v = raw("validate", manifest, cwd=tmp_path)
    assert v.returncode == 2, v.stdout + v.stderr
    assert_no_control_bytes(v, "validate")
    err = v.stderr.decode()
    assert re.search(rf"{re.escape(str(manifest))}:\d+:\d+: error: {what} '[^']*' contains a control character", err), err
    assert "Fix: use printable characters only" in err, err
    for args in (["list-cases"], ["list-models"], ["run", "--device", "loopback", "--artifact-dir", tmp_path / "out"]):
        done = raw(*args, "--manifests", manifest, cwd=tmp_path)
        assert done.returncode != 0, (args, done.stdout + done.stderr)
        assert_no_control_bytes(done, args[0])
    # `repro` of the id the name would have made, piped to bash as a user would: nothing planted runs.
    printed = raw("repro", planted_id, "--manifests", manifest, "--device", "loopback", cwd=tmp_path)
    subprocess.run(["bash"], input=printed.stdout, capture_output=True, cwd=tmp_path, timeout=600)
    assert not (tmp_path / "PWNED").exists(), printed.stdout
    assert_no_control_bytes(printed, "repro")


def test_a_manifest_path_with_a_control_character_is_refused_and_shown_escaped(tmp_path):
    folder = tmp_path / "manifests"
    folder.mkdir()
    (folder / "f\ntouch PWNED\n.yaml").write_text(V1_MANIFEST.format(model="m", op="torch.exp"))
    (folder / "good.yaml").write_text(V1_MANIFEST.format(model="g", op="torch.exp"))
    for args in (["validate", folder], ["list-cases", "--manifests", folder],
                 ["run", "--manifests", folder, "--device", "cpu", "--artifact-dir", tmp_path / "out"]):
        done = raw(*args, cwd=tmp_path)
        assert done.returncode == 2, (args, done.stdout + done.stderr)
        assert_no_control_bytes(done, args[0])
        assert (b"f\\x0atouch PWNED\\x0a.yaml: error: the manifest's path contains a control character"
                in done.stderr), (args, done.stderr)
    listed = opcheck("list-cases", "--manifests", folder, "--json")
    assert [c["id"] for c in json.loads(listed.stdout)] == ["g::ok"], listed.stdout


def test_repro_reports_unknown_cases_and_bundles(tmp_path):
    unknown = opcheck("repro", "template::init_arang", "--manifests", TEMPLATE)
    assert unknown.returncode == 4
    assert "no case template::init_arang" in unknown.stderr and "template::init_arange" in unknown.stderr
    missing = opcheck("repro", "template::init_arange", "--bundle", tmp_path)
    assert missing.returncode == 4
    assert "no bundle of template::init_arange" in missing.stderr and "Fix:" in missing.stderr
    nothing = opcheck("repro")
    assert nothing.returncode == 4 and "name the case" in nothing.stderr


def test_an_unusable_save_failures_folder_is_a_usage_error(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    run = opcheck("run", "--manifests", TEMPLATE, "--model", "template", "--device", "cpu", "--save-failures",
                  blocker / "bundles", "--artifact-dir", tmp_path / "out")
    assert run.returncode == 4, run.stdout + run.stderr
    assert "cannot create the --save-failures folder" in run.stderr and "Fix:" in run.stderr


class _TouchesAFile:
    """What a hostile .pt holds: unpickling it (torch.load without weights_only) runs a command."""

    def __init__(self, path):
        self.path = str(path)

    def __reduce__(self):
        return (os.system, (f"touch {shlex.quote(self.path)}",))


def test_python_repro_loads_tensor_files_as_weights_only_and_never_unpickles_code(tmp_path):
    """Every tensor file a repro script reads (a bundle's input, its reference.pt, a `file:` input with a key) is read
    with torch.load(weights_only=True): a .pt swapped for a pickle that runs a command is refused, even where torch's
    own default is not weights-only (torch before 2.6, or TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD set)."""
    torch.save({"x": torch.arange(4.0)}, tmp_path / "d.pt")
    manifest = tmp_path / "m.yaml"
    manifest.write_text("model: m\ncases:\n  - name: exp.1\n    op: torch.exp\n    inputs:\n"
                        "      - tensor: {shape: [4]}\n"
                        "  - name: exp.keyed\n    op: torch.exp\n    inputs:\n"
                        "      - tensor: {shape: [4], init: file, init_args: {path: d.pt, key: x}}\n")
    run = opcheck("run", "--manifests", manifest, "--device", "loopback", "--save-failures", tmp_path / "b",
                  "--artifact-dir", tmp_path / "out", env=EXP_FAULT)
    assert run.returncode == 1, run.stdout + run.stderr
    bundle = tmp_path / "b" / "m__exp.1"
    [swapped_input] = [p for p in (bundle / "inputs").iterdir() if p.suffix == ".pt"]
    scripts = {}
    for what, args in (("bundle", ["--bundle", bundle]), ("keyed", ["m::exp.keyed", "--manifests", manifest])):
        made = opcheck("repro", *args, "--device", "loopback", "--python", env=EXP_FAULT)
        assert made.returncode == 0, made.stderr
        assert "torch.load(" in made.stdout, made.stdout
        scripts[what] = tmp_path / f"{what}.py"
        scripts[what].write_text(made.stdout)
    no_default = dict(os.environ, TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD="1")
    no_default.pop("OPCHECK_LOOPBACK_FAULTS", None)
    # Each file the scripts read, swapped after the script was written (the script reads it when it runs).
    for script, target in ((scripts["bundle"], swapped_input), (scripts["bundle"], bundle / "reference.pt"),
                           (scripts["keyed"], tmp_path / "d.pt")):
        kept = target.read_bytes()
        pwned = tmp_path / f"PWNED_{target.name}"
        torch.save(_TouchesAFile(pwned), target)
        ran = subprocess.run([PYTHON, str(script)], capture_output=True, text=True, env=no_default, cwd=tmp_path,
                             timeout=600)
        target.write_bytes(kept)
        assert not pwned.exists(), f"{script.name} unpickled code from {target.name}\n{ran.stdout}{ran.stderr}"
        assert ran.returncode != 0 and "weights_only" in ran.stdout + ran.stderr, ran.stdout + ran.stderr


def test_strings_of_a_manifest_are_escapes_in_the_python_repro_never_raw_control_bytes(tmp_path):
    """A manifest's strings (a `value:`, a keyword, inside `py:`) are written into the script as escapes: a terminal
    escape cannot retitle the console that shows the script, and a NUL does not make it a SyntaxError."""
    manifest = tmp_path / "ctl.yaml"
    manifest.write_text('model: ctl\ncases:\n  - name: gelu.1\n    op: torch.nn.functional.gelu\n'
                        '    kwmap: {approximate: "\\e]0;pwned\\a"}\n    inputs:\n      - tensor: {shape: [4]}\n'
                        '  - name: div.1\n    op: torch.div\n    inputs:\n      - tensor: {shape: [4]}\n'
                        '      - tensor: {shape: [4]}\n      - value: "\\e[2J\\r\\t\\x7f\\u0085"\n'
                        '      - py: "[\'a\\\\x00b\', \'c\\x00d\']"\n')
    expected = {"gelu.1": ["\x1b]0;pwned\x07"], "div.1": ["\x1b[2J\r\t\x7f\x85", "a\x00b", "c\x00d"]}
    for name, strings in expected.items():
        made = subprocess.run([str(BIN), "repro", f"ctl::{name}", "--manifests", str(manifest), "--device", "cpu",
                               "--python"], capture_output=True, timeout=600)
        assert made.returncode == 0, made.stderr
        raw = [hex(b) for b in set(made.stdout) if (b < 0x20 and b != 0x0A) or b == 0x7F]
        assert raw == [], f"raw control bytes {raw} in the script of {name}"
        assert b"\xc2\x85" not in made.stdout  # U+0085, a C1 control, is an escape too
        tree = ast.parse(made.stdout.decode())  # not a SyntaxError
        constants = {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)}
        for s in strings:
            assert s in constants, f"{s!r} is not a string of the script of {name}"
