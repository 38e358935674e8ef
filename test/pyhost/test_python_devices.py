"""Devices registered from Python (--device-import) and compiled device runs (--compile-backend), through the real
binary: pyloop registers its transfers and compute kernels from Python like torch-spyre, each worker hosts a real
interpreter with the real torch, and every failure mode a Python kernel can have is caught with the right stage."""
import json
import os
import pathlib
import sys
import textwrap
import xml.etree.ElementTree as ET

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "e2e"))
from conftest import SOURCE_DIR, opcheck  # noqa: E402

PYLOOP = ["--device-import", "opcheck_pyloop", "--device", "pyloop"]

# One case per kind of op a compiled run meets: elementwise, reduction, matmul, a functional with keywords, a view,
# an in-place op, an aten overload named directly, indexing, a tuple-returning op.
KINDS = textwrap.dedent("""\
    model: kinds
    cases:
      - name: add
        op: torch.add
        inputs:
          - tensor: {shape: [4, 8]}
          - tensor: {shape: [4, 8]}
      - name: sum.dim
        op: torch.sum
        inputs:
          - tensor: {shape: [4, 8]}
          - value: 1
      - name: matmul
        op: torch.matmul
        inputs:
          - tensor: {shape: [4, 8]}
          - tensor: {shape: [8, 3]}
      - name: softmax
        op: torch.nn.functional.softmax
        kwmap: {dim: -1}
        inputs:
          - tensor: {shape: [2, 5], init: randn}
      - name: expand
        op: torch.Tensor.expand
        inputs:
          - tensor: {shape: [1, 4]}
          - value: "(3, 4)"
      - name: mul_
        op: torch.Tensor.mul_
        inputs:
          - tensor: {shape: [3, 3]}
          - value: 2.0
      - name: aten.add
        op: aten::add.Tensor
        inputs:
          - tensor: {shape: [5]}
          - tensor: {shape: [5]}
      - name: getitem
        op: torch.getitem
        inputs:
          - tensor: {shape: [4, 6]}
          - value: "(slice(None, None, None), slice(1, 3, None))"
      - name: topk
        op: torch.topk
        inputs:
          - tensor: {shape: [10], init: randn}
          - value: 3
    """)


@pytest.fixture(scope="module")
def kinds(tmp_path_factory):
    d = tmp_path_factory.mktemp("kinds")
    (d / "kinds.yaml").write_text(KINDS)
    return d


def run_json(tmp_path, *args, env=None, timeout=1200):
    r = opcheck("run", *args, "--metrics-json", tmp_path / "m.json", "--junit-xml", tmp_path / "r.xml",
                "--artifact-dir", tmp_path / "art", env=env, timeout=timeout)
    m = json.loads((tmp_path / "m.json").read_text()) if (tmp_path / "m.json").exists() else None
    return r, m


def test_pyloop_runs_the_gpt_oss_manifest(tmp_path):
    r, m = run_json(tmp_path, "--model", "gpt_oss", *PYLOOP)
    assert r.rc == 0, r
    assert "registered from Python by opcheck_pyloop" in r.err, r
    assert m["run"]["device_name"] == "pyloop" and m["run"]["device"] == "pyloop:0", m["run"]
    assert any(x.startswith("opcheck_pyloop ") for x in m["run"]["python_modules"]), m["run"]
    assert m["totals"]["passed"] == m["totals"]["total"] > 0, m["totals"]
    # pyloop's Python kernels are the device's own kernels in the coverage report.
    assert "aten::_copy_from" in m["run"]["enabled_ops"] and "aten::mm" in m["run"]["enabled_ops"], m["run"]


def test_pyloop_with_aot_eager_records_compile_time(tmp_path):
    r, m = run_json(tmp_path, "--model", "gpt_oss", *PYLOOP, "--compile-backend", "aot_eager")
    assert r.rc == 0, r
    assert m["run"]["compile_backend"] == "aot_eager"
    ran = [c for c in m["cases"] if not c.get("deduplicated_from")]
    assert ran and all(c["outcome"] == "passed" for c in m["cases"]), [c for c in m["cases"] if c["outcome"] != "passed"]
    assert all(c["timings"]["compile_ms"] > 0 for c in ran), [c["timings"] for c in ran][:5]
    assert m["time"]["totals"]["compile_ms"] > 0
    props = [p for p in ET.parse(tmp_path / "r.xml").getroot().iter("property") if p.get("name") == "compile_ms"]
    assert props, "JUnit lacks compile_ms"


def test_compile_backend_from_the_environment_and_none(tmp_path, kinds):
    r, m = run_json(tmp_path, "--manifests", kinds, "--device", "cpu", env={"TEST_COMPILE_BACKEND": "aot_eager"})
    assert r.rc == 0, r
    assert m["run"]["compile_backend"] == "aot_eager"
    r, m = run_json(tmp_path, "--manifests", kinds, "--device", "cpu", "--compile-backend", "none",
                    env={"TEST_COMPILE_BACKEND": "aot_eager"})
    assert r.rc == 0, r
    assert m["run"]["compile_backend"] == ""
    assert all(c["timings"]["compile_ms"] == 0 for c in m["cases"])


def test_inductor_on_cpu_compiles_every_kind_of_op(tmp_path, kinds):
    """Inductor's CPU code generator, for real, on one case of each op kind."""
    r, m = run_json(tmp_path, "--manifests", kinds, "--device", "cpu", "--compile-backend", "inductor", "-v")
    assert r.rc == 0, r
    assert m["totals"]["passed"] == 9, m["totals"]
    assert all(c["timings"]["compile_ms"] > 0 for c in m["cases"]), [c["timings"] for c in m["cases"]]
    # Inductor's caches are kept with the run's artifacts.
    assert (tmp_path / "art" / "inductor-cache").is_dir()


def test_an_unknown_compile_backend_stops_the_run_before_any_case(tmp_path, kinds):
    # A backend torch.compile does not know is the user's mistake, not every case's FAILED_COMPILE.
    r = opcheck("run", "--manifests", kinds, "--device", "cpu", "--compile-backend", "no_such_backend",
                "--artifact-dir", tmp_path / "art")
    assert r.rc == 4, r
    assert "'no_such_backend' is not a torch.compile backend" in r.out + r.err, r
    assert "FAILED_COMPILE" not in r.out, r


FAULTS = [
    # (fault on aten::add.Tensor, expected stage, a message fragment)
    ("bias:1e-2", "INCORRECT_RESULT", "Mismatched elements"),
    # the result not uploaded: both devices named
    ("host", "INCORRECT_RESULT", "output: device mismatch: expected a tensor on pyloop:0 (the device under test), "
                                 "got one on cpu"),
    ("raise", "FAILED_RUNTIME", "ValueError"),
    ("segv", "CRASHED", "SIGSEGV"),
    ("hang", "TIMEOUT", ""),
]


@pytest.mark.parametrize("fault,stage,fragment", FAULTS, ids=[f[0] for f in FAULTS])
def test_python_kernel_faults_are_isolated(tmp_path, kinds, fault, stage, fragment):
    r, m = run_json(tmp_path, "--manifests", kinds, *PYLOOP, "--timeout", "20",
                    env={"OPCHECK_PYLOOP_FAULTS": f"aten::add.Tensor={fault}"})
    assert r.rc == 1, r
    by_id = {c["id"]: c for c in m["cases"]}
    for cid in ("kinds::add", "kinds::aten.add"):
        assert by_id[cid]["stage"] == stage, by_id[cid]
        assert fragment in by_id[cid]["message"], by_id[cid]["message"]
    others = [c for c in m["cases"] if c["id"] not in ("kinds::add", "kinds::aten.add")]
    assert others and all(c["outcome"] == "passed" for c in others), [(c["id"], c["stage"]) for c in others]
    if fault == "raise":
        # The Python traceback reaches the case's message: the kernel's file and the raise.
        assert "opcheck_pyloop" in by_id["kinds::add"]["message"], by_id["kinds::add"]["message"]


def test_a_fault_in_an_op_pyloop_leaves_to_the_fallback(tmp_path, kinds):
    r, m = run_json(tmp_path, "--manifests", kinds, *PYLOOP, env={"OPCHECK_PYLOOP_FAULTS": "aten::sum.dim_IntList=raise"})
    assert r.rc == 1, r
    by_id = {c["id"]: c for c in m["cases"]}
    assert by_id["kinds::sum.dim"]["stage"] == "FAILED_RUNTIME", by_id["kinds::sum.dim"]
    assert sum(c["outcome"] == "passed" for c in m["cases"]) == 8


@pytest.mark.parametrize("python_flags", [["--device-import", "json"], ["--device", "cpu", "--compile-backend", "eager"]],
                         ids=["device-import", "compile-backend"])
def test_another_torch_in_the_interpreter_stops_before_any_case(tmp_path, kinds, python_flags):
    """The interpreter imports a torch that is not the libtorch opcheck was built with: a usage error naming both."""
    fake = tmp_path / "site"
    (fake / "torch").mkdir(parents=True)
    (fake / "torch" / "__init__.py").write_text(
        "import types\n__version__ = '2.7.1'\nutils = None\n"
        "_C = types.SimpleNamespace(_get_privateuse1_backend_name=lambda: 'privateuseone')\n")
    r = opcheck("run", "--manifests", kinds, *python_flags, "--artifact-dir", tmp_path / "art",
                env={"PYTHONPATH": str(fake)})
    assert r.rc == 4, r
    assert "2.7.1" in r.err and str(fake / "torch") in r.err, r
    assert "built against libtorch 2." in r.err and "Fix:" in r.err, r
    assert "passed" not in r.out, r


def test_a_module_that_fails_to_import_is_a_usage_error_with_its_traceback(tmp_path, kinds):
    mod = tmp_path / "mods"
    mod.mkdir()
    (mod / "broken_backend.py").write_text("raise ImportError('the device runtime is missing')\n")
    r = opcheck("run", "--manifests", kinds, "--device-import", "broken_backend", "--artifact-dir", tmp_path / "art",
                env={"PYTHONPATH": str(mod)})
    assert r.rc == 4, r
    assert "the device runtime is missing" in r.err and "broken_backend.py" in r.err, r


@pytest.mark.parametrize("spec,says", [
    ("aten::add.Tensor=bias:abc", "'bias' needs a number, not 'abc'"),
    ("aten::add.Tensor=bias:1e999", "'bias:1e999' is not a finite number (it overflows a double"),
])
def test_a_bad_pyloop_fault_spec_names_the_variable_and_keeps_its_own_fix(tmp_path, kinds, spec, says):
    r = opcheck("run", "--manifests", kinds, *PYLOOP, "--artifact-dir", tmp_path / "art",
                env={"OPCHECK_PYLOOP_FAULTS": spec})
    assert r.rc == 4, r
    assert f"OPCHECK_PYLOOP_FAULTS: '{spec}': {says}" in r.err, r
    fixes = [line.strip() for line in r.err.splitlines() if line.strip().startswith("Fix:")]
    assert fixes and ("bias:1e-2" in fixes[0] or "bias:1e3" in fixes[0]), r
    assert "import torch" not in fixes[0], r


def test_a_device_that_does_not_start_is_a_result_in_every_report(tmp_path, kinds):
    r, m = run_json(tmp_path, "--manifests", kinds, "--device-import", "no_such_module")
    assert r.rc == 4, r
    assert "no_such_module" in r.err, r
    # The nightly sees "the device failed", not "no results": one error naming the device, every case not run.
    assert m is not None, r
    assert m["totals"]["errors"] == 1, m["totals"]
    assert m["totals"]["skipped"] == m["totals"]["total"] - 1 > 0, m["totals"]
    error = [c for c in m["cases"] if c["outcome"] == "error"]
    assert len(error) == 1 and error[0]["stage"] == "FAILED_SETUP", error
    assert "did not start" in error[0]["message"] and "no_such_module" in error[0]["message"], error
    assert all(c["message"] == "not run: the device did not start" for c in m["cases"] if c["outcome"] == "skipped")
    suite = ET.parse(tmp_path / "r.xml").getroot()
    suite = suite if suite.tag == "testsuite" else suite.find("testsuite")
    assert suite.get("errors") == "1" and int(suite.get("skipped")) == m["totals"]["skipped"], suite.attrib
    assert r.last_line.startswith(f"1 error, {m['totals']['total'] - 1} not run (the device did not start) in "), r
    assert m["run"]["not_run"] == m["totals"]["total"] - 1 and m["run"]["stopped_by"] == "device", m["run"]


def test_a_slow_device_start_is_reported_and_not_charged_to_the_first_case(tmp_path, kinds):
    # A device whose import takes 4 s, with cases allowed 2 s each: the start is the run's start-up process's, once,
    # not the first case's, and not each worker's.
    mod = tmp_path / "mods"
    mod.mkdir()
    (mod / "slow_runtime.py").write_text("import time\ntime.sleep(4)\n")
    r, m = run_json(tmp_path, "--manifests", kinds, *PYLOOP, "--device-import", "slow_runtime", "--timeout", "2",
                    "-j", "2", env={"PYTHONPATH": str(mod)})
    assert r.rc == 0, r
    assert m["totals"]["passed"] == m["totals"]["total"] == 9, m["totals"]
    run = m["run"]
    assert run["workers_started"] == 2, run
    assert run["worker_start_max_s"] < 4.0, run
    # The cases' own wall time starts when a worker is ready: the 4 s start is not in it.
    assert 0 < run["cases_wall_s"] <= run["duration_s"] - 4.0, run


def test_device_import_needs_a_module_name_and_one_backend(tmp_path, kinds):
    r = opcheck("run", "--manifests", kinds, "--device-import", "not a module")
    assert r.rc == 4 and "is not a Python module name" in r.err, r
    r = opcheck("run", "--manifests", kinds, *PYLOOP, "--device-lib", SOURCE_DIR / "nothing.so",
                "--artifact-dir", tmp_path / "art")
    assert r.rc == 4 and "one PrivateUse1 backend" in r.err, r
    r = opcheck("run", "--manifests", kinds, "--device-import", "opcheck_pyloop", "--device", "loopback",
                "--artifact-dir", tmp_path / "art")
    assert r.rc == 4 and "--device pyloop" in r.err, r


def test_processes_without_python_do_not_load_libpython(tmp_path, kinds):
    """The worker of a plain loopback run never maps libpython (its /proc/self/maps, read by a case)."""
    probe = tmp_path / "maps"
    r = opcheck("run", "--manifests", kinds, "--device", "loopback", "-k", "add", "--artifact-dir", tmp_path / "art",
                env={"LD_DEBUG": "libs", "LD_DEBUG_OUTPUT": str(probe)})
    assert r.rc == 0, r
    logs = "".join(p.read_text(errors="replace") for p in tmp_path.glob("maps*"))
    assert "libtorch_cpu" in logs, "LD_DEBUG wrote nothing"
    assert "libpython" not in logs


def test_bundles_and_repro_scripts_carry_the_imports_and_the_compile_backend(tmp_path, kinds):
    """A pyloop failure's bundle reruns with the same imports and backend, and its Python script imports the module,
    compiles the call with the same backend and reproduces the device's wrong output bit for bit."""
    bundles = tmp_path / "failures"
    r, m = run_json(tmp_path, "--manifests", kinds, *PYLOOP, "--compile-backend", "aot_eager", "-k", "aten.add",
                    "--save-failures", bundles, env={"OPCHECK_PYLOOP_FAULTS": "aten::add.Tensor=bias:0.5"})
    assert r.rc == 1, r
    folder = bundles / "kinds__aten.add"
    facts = json.loads((folder / "failure.json").read_text())
    args = facts["rerun_device_args"]
    assert args[args.index("--device-import") + 1] == "opcheck_pyloop", args
    assert args[args.index("--compile-backend") + 1] == "aot_eager", args
    assert facts["environment"] == {"OPCHECK_PYLOOP_FAULTS": "aten::add.Tensor=bias:0.5"}, facts
    made = opcheck("repro", "--bundle", folder, "--python")
    assert made.rc == 0, made
    assert "DEVICE_IMPORTS = ['opcheck_pyloop']" in made.out and "COMPILE_BACKEND = 'aot_eager'" in made.out, made.out
    script = tmp_path / "repro.py"
    script.write_text(made.out)
    import subprocess
    run = subprocess.run([os.environ.get("OPCHECK_PYTHON", sys.executable), str(script)], capture_output=True,
                         text=True, timeout=600)
    assert run.returncode == 1, run.stdout + run.stderr  # the device differs from the cpu, as in the failing run
    assert "device.pt: reproduced bit for bit" in run.stdout, run.stdout + run.stderr


def test_resume_refuses_a_journal_of_another_device(tmp_path, kinds):
    r, _ = run_json(tmp_path, "--manifests", kinds, "--device", "loopback")
    assert r.rc == 0, r
    r, _ = run_json(tmp_path, "--manifests", kinds, *PYLOOP, "--resume")
    assert r.rc == 4, r
    assert "written by a different run" in r.err and "device" in r.err and "Python modules" in r.err, r


def test_validate_ops_sets_up_the_device_its_modules_register(kinds):
    ok = opcheck("validate", "--ops", "--device-import", "opcheck_pyloop", kinds)
    assert ok.rc == 0, ok
    assert ok.last_line.endswith("(ops resolved and bound): 0 errors, 0 warnings"), ok
    missing = opcheck("validate", "--ops", "--device-import", "opcheck_no_such_module", kinds)
    assert missing.rc == 4, missing
    assert "validate --ops: " in missing.err and "opcheck_no_such_module" in missing.err, missing
    # The run's settings: OPCHECK_DEVICE_IMPORT names the modules when no flag does, and a name that cannot be a
    # module is the run's usage error.
    from_env = opcheck("validate", "--ops", kinds, env={"OPCHECK_DEVICE_IMPORT": "opcheck_no_such_module"})
    assert from_env.rc == 4 and "opcheck_no_such_module" in from_env.err, from_env
    bad = opcheck("validate", "--ops", "--device-import", "no such", kinds)
    assert bad.rc == 4 and "is not a Python module name" in bad.err and "Fix:" in bad.err, bad
