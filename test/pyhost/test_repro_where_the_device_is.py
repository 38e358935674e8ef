"""Repro scripts and bundles run where the device is: a device registered from Python by a module on PYTHONPATH
(pyloop renamed `opencl`, as a team's torch-opencl is), a failure bundle's standalone script run as the bundle's
README says, from a fresh shell that has none of the run's environment, and the one line a script prints when the
device is not registered where it runs. Also: --device-import of a backend torch's autoload already registered is a
no-op with a note, not "already registered"."""
import os
import pathlib
import re
import shutil
import subprocess
import sys
import textwrap

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "e2e"))
from conftest import BUILD_DIR, opcheck  # noqa: E402
from test_installed_devices import make_env, run_json  # noqa: E402

CASES = textwrap.dedent("""\
    model: where
    cases:
      - name: add
        op: aten::add.Tensor
        inputs:
          - tensor: {shape: [4, 8]}
          - tensor: {shape: [4, 8]}
    """)


def renamed_pyloop(folder, name):
    """pyloop's package copied to `folder` as `<name>_loop`, registering PrivateUse1 as `name`."""
    package = folder / f"{name}_loop"
    package.mkdir(parents=True)
    source = (BUILD_DIR / "python" / "opcheck_pyloop" / "__init__.py").read_text()
    assert 'NAME = "pyloop"' in source
    (package / "__init__.py").write_text(source.replace('NAME = "pyloop"', f'NAME = "{name}"'))
    for ext in (BUILD_DIR / "python" / "opcheck_pyloop").glob("_C*.so"):
        (package / ext.name).symlink_to(ext)
    return package


def fresh_shell(command, cwd):
    """`command` under sh from a shell with none of the run's variables (no PYTHONPATH, no faults)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPCHECK_") and k != "PYTHONPATH"}
    env["PATH"] = f"{pathlib.Path(sys.executable).parent}:{env.get('PATH', '')}"  # a python3 with torch
    return subprocess.run(["sh", "-c", command], capture_output=True, text=True, cwd=cwd, env=env, timeout=600)


@pytest.fixture(scope="module")
def failed_bundle(tmp_path_factory):
    """A failure bundle of a wrong add on `opencl`, a device whose module only the run's PYTHONPATH holds."""
    root = tmp_path_factory.mktemp("where")
    (root / "where.yaml").write_text(CASES)
    renamed_pyloop(root / "mods", "opencl")
    r = opcheck("run", "--manifests", root / "where.yaml", "--device-import", "opencl_loop", "--device", "opencl",
                "--save-failures", root / "failures", "--artifact-dir", root / "art",
                env={"PYTHONPATH": str(root / "mods"), "OPCHECK_PYLOOP_FAULTS": "aten::add.Tensor=bias:0.5"})
    assert r.rc == 1, r
    return root, root / "failures" / "where__add"


def readme_command(bundle, which):
    """The command under the README's `which` heading ("A standalone PyTorch script" or "This case alone")."""
    text = (bundle / "README.md").read_text()
    block = re.search(re.escape(which) + r".*?```sh\n(.*?)\n```", text, re.S)
    assert block, text
    return block.group(1)


def test_the_bundle_script_run_as_its_readme_says_reproduces_the_failure(failed_bundle, tmp_path):
    root, bundle = failed_bundle
    command = readme_command(bundle, "A standalone PyTorch script")
    assert "repro --bundle" in command and "python3 repro.py" in command, command
    r = fresh_shell(command, tmp_path)
    assert r.returncode == 1, r.stdout + r.stderr  # the device differs from the cpu, as in the run
    assert "device (opencl) DIFFERS from the cpu reference" in r.stdout, r.stdout + r.stderr
    assert "device.pt: reproduced bit for bit" in r.stdout, r.stdout + r.stderr
    script = (tmp_path / "repro.py").read_text()
    # The set-up it carries is stated: the module, the folder that holds it, the faults.
    assert "DEVICE_IMPORTS = ['opencl_loop']" in script, script[:3000]
    assert f"DEVICE_PATHS = [{str(root / 'mods')!r}]" in script, script[:3000]
    assert "'OPCHECK_PYLOOP_FAULTS', 'aten::add.Tensor=bias:0.5'" in script, script[:3000]


def test_the_call_its_inputs_and_the_check_come_first(failed_bundle):
    _, bundle = failed_bundle
    made = opcheck("repro", "--bundle", bundle, "--python")
    assert made.rc == 0, made
    head = "\n".join(made.out.splitlines()[:40])
    assert "def call(t, device):" in head and "torch.ops.aten.add.Tensor" in head, head
    assert "def inputs():" in head and "return [t0, t1]" in head, head
    assert "COMPARE = 'allclose'" in head, head
    assert len(made.out.splitlines()) > 200  # the rule follows, as long as it is


def test_a_script_where_the_device_is_not_registered_says_what_to_set(failed_bundle, tmp_path):
    root, bundle = failed_bundle
    # From the manifest, naming the device only: nothing in this shell registers `opencl`.
    made = fresh_shell(f"{opcheck_bin()} repro where::add --manifests {root / 'where.yaml'} --python "
                       f"--device opencl > repro.py", tmp_path)
    assert made.returncode == 0, made.stderr
    r = fresh_shell("python3 repro.py", tmp_path)
    assert r.returncode == 3, r.stdout + r.stderr
    lines = [l for l in r.stderr.splitlines() if l.strip()]
    assert len(lines) == 1, r.stderr
    assert "device 'opencl' is not registered in this Python" in lines[0], lines
    assert "PYTHONPATH" in lines[0] and "--device-import" in lines[0], lines
    assert "INTERNAL ASSERT" not in r.stdout + r.stderr
    # The bundle's script, where the folder holding the module is gone.
    shutil.copytree(root / "mods", tmp_path / "kept", symlinks=True)
    shutil.rmtree(root / "mods")
    try:
        made = fresh_shell(f"{opcheck_bin()} repro --bundle {bundle} --python > gone.py", tmp_path)
        r = fresh_shell("python3 gone.py", tmp_path)
    finally:
        shutil.copytree(tmp_path / "kept", root / "mods", symlinks=True)
    assert r.returncode == 3, r.stdout + r.stderr
    lines = [l for l in r.stderr.splitlines() if l.strip()]
    assert len(lines) == 1, r.stderr
    assert "cannot import opencl_loop" in lines[0] and f"PYTHONPATH={root / 'mods'}" in lines[0], lines


def opcheck_bin():
    return os.environ.get("OPCHECK_BIN", str(BUILD_DIR / "opcheck"))


TWICE_BACKEND = ("opcheck-twice-backend", "twice", """\
    _CALLS = []


    def _autoload():
        # As torch-opencl's entry point, which registers the device's runtime module: a second call raises torch's
        # own error (torch._register_device_module's words).
        import opcheck_pyloop  # noqa: F401  registers the device `pyloop`
        _CALLS.append(1)
        if len(_CALLS) > 1:
            raise RuntimeError("The runtime module of 'pyloop' has already been registered with 'torch.pyloop'")


    _again = _autoload  # the same registration under another name: no entry point torch called
    """)


def test_device_import_of_a_backend_autoload_registered_is_a_no_op_with_a_note(tmp_path):
    (tmp_path / "c.yaml").write_text(CASES)
    python = make_env(tmp_path / "venv", [TWICE_BACKEND])
    r, m = run_json(tmp_path, python, "--manifests", tmp_path / "c.yaml", "--device-import",
                    "opcheck_twice_backend:_autoload", "--device", "pyloop")
    assert r.rc == 0, r
    assert "already been registered" not in r.err, r
    assert m["totals"]["passed"] == 1, m["totals"]
    assert ("--device-import opcheck_twice_backend:_autoload: torch's autoload already ran it (torch.backends entry "
            "point twice = opcheck_twice_backend:_autoload); not run again") in r.err, r
    # The same registration named otherwise runs, and its Fix leads with what most likely registered it first.
    r, _ = run_json(tmp_path, python, "--manifests", tmp_path / "c.yaml", "--device-import",
                    "opcheck_twice_backend:_again", "--device", "pyloop")
    assert r.rc == 4 and "has already been registered" in r.err, r
    fix = r.err.split("Fix: ", 1)[1]
    assert fix.startswith("the device was registered before this step, most likely by torch's autoload"), fix


def test_a_python_host_without_numpy_says_nothing_about_numpy(tmp_path):
    """torch warns "Failed to initialize NumPy" on import where NumPy is missing: a Python device run does not pass
    that on (here NumPy is hidden by a package of that name that fails to import, as a missing one does)."""
    (tmp_path / "c.yaml").write_text(CASES)
    hidden = tmp_path / "no_numpy" / "numpy"
    hidden.mkdir(parents=True)
    (hidden / "__init__.py").write_text("raise ModuleNotFoundError(\"No module named 'numpy'\", name='numpy')\n")
    r = opcheck("run", "--manifests", tmp_path / "c.yaml", "--device-import", "opcheck_pyloop", "--device", "pyloop",
                "--artifact-dir", tmp_path / "art", env={"PYTHONPATH": str(tmp_path / "no_numpy")})
    assert r.rc == 0, r
    assert "NumPy" not in r.out + r.err and "numpy" not in r.out + r.err, r
