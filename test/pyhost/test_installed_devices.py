"""Backends as their teams install them: a distribution that declares a `torch.backends` entry point, which `import
torch` loads (torch's autoload), as torch-spyre does. Each test builds a throwaway virtual environment (never the
project's own: torch would load a stray backend in every run) whose site-packages reach the project's torch and the
build's opcheck_pyloop through a .pth file, plus hand-written installed distributions, and runs the real binary with
OPCHECK_PYTHON naming that environment's interpreter. Also: a device that fails to start says its first real error
first, and inductor without a code generator for the device is said once and costs no compile."""
import json
import os
import pathlib
import subprocess
import sys
import textwrap

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "e2e"))
from conftest import BUILD_DIR, SOURCE_DIR, opcheck  # noqa: E402

PROJECT_PYTHON = os.environ.get("OPCHECK_PYTHON", sys.executable)

CASES = textwrap.dedent("""\
    model: inst
    cases:
      - name: add
        op: torch.add
        inputs:
          - tensor: {shape: [4, 8]}
          - tensor: {shape: [4, 8]}
      - name: mm
        op: torch.mm
        inputs:
          - tensor: {shape: [4, 8]}
          - tensor: {shape: [8, 3]}
      - name: sum.dim
        op: torch.sum
        inputs:
          - tensor: {shape: [4, 8]}
          - value: 1
    """)


def site_packages_of(python):
    return subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()


def make_env(root, backends):
    """A virtual environment under `root` holding one installed distribution per (distribution, entry point name,
    module source) in `backends`; returns its interpreter."""
    subprocess.run([PROJECT_PYTHON, "-m", "venv", "--without-pip", str(root)], check=True)
    python = str(root / "bin" / "python")
    site = pathlib.Path(site_packages_of(python))
    (site / "opcheck_test_paths.pth").write_text(f"{site_packages_of(PROJECT_PYTHON)}\n{BUILD_DIR / 'python'}\n")
    for dist, entry, source in backends:
        module = dist.replace("-", "_")
        (site / f"{module}.py").write_text(textwrap.dedent(source))
        info = site / f"{module}-0.1.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.1\n")
        (info / "entry_points.txt").write_text(f"[torch.backends]\n{entry} = {module}:_autoload\n")
    return python


PYLOOP_BACKEND = ("opcheck-test-backend", "x", """\
    def _autoload():
        import opcheck_pyloop  # registers the device `pyloop`, as torch-spyre's entry point registers `spyre`
    """)


@pytest.fixture(scope="module")
def cases(tmp_path_factory):
    d = tmp_path_factory.mktemp("cases")
    (d / "inst.yaml").write_text(CASES)
    return d


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """The interpreter of an environment where pyloop is installed as a torch.backends entry point."""
    return make_env(tmp_path_factory.mktemp("env") / "venv", [PYLOOP_BACKEND])


def run_json(tmp_path, python, *args, env=None):
    full = {"OPCHECK_PYTHON": python}
    full.update(env or {})
    r = opcheck("run", *args, "--metrics-json", tmp_path / "m.json", "--artifact-dir", tmp_path / "art", env=full,
                timeout=900)
    m = json.loads((tmp_path / "m.json").read_text()) if (tmp_path / "m.json").exists() else None
    return r, m


def test_importlib_metadata_sees_the_installed_entry_point(installed):
    """What torch's autoload reads: the test's hand-written distribution is really installed."""
    out = subprocess.run([installed, "-c", "import importlib.metadata as m; "
                          "print([(e.name, e.value) for e in m.entry_points(group='torch.backends')])"],
                         capture_output=True, text=True, check=True).stdout
    assert "('x', 'opcheck_test_backend:_autoload')" in out, out


def test_device_name_finds_the_installed_backend_without_device_import(tmp_path, cases, installed):
    r, m = run_json(tmp_path, installed, "--manifests", cases, "--device", "pyloop")
    assert r.rc == 0, r
    assert m["totals"]["passed"] == m["totals"]["total"] == 3, m["totals"]
    assert m["run"]["device"] == "pyloop:0", m["run"]
    assert "installed as torch.backends entry point x = opcheck_test_backend:_autoload" in r.err, r
    assert any(p.startswith("x = opcheck_test_backend:_autoload") for p in m["run"]["python_modules"]), m["run"]
    # The backend's own kernels are the device's, as with --device-import.
    assert "aten::_copy_from" in m["run"]["enabled_ops"], m["run"]


def test_auto_takes_the_one_installed_backend_and_says_so(tmp_path, cases, installed):
    r, m = run_json(tmp_path, installed, "--manifests", cases, "--device", "auto")
    assert r.rc == 0, r
    assert m["run"]["device"] == "pyloop:0", m["run"]
    assert "auto: the one installed torch.backends entry point" in r.err, r


def test_autoload_off_makes_the_installed_name_unknown(tmp_path, cases, installed):
    r, _ = run_json(tmp_path, installed, "--manifests", cases, "--device", "pyloop",
                    env={"TORCH_DEVICE_BACKEND_AUTOLOAD": "0"})
    assert r.rc != 0, r
    assert "unknown device 'pyloop'" in r.err, r
    assert "TORCH_DEVICE_BACKEND_AUTOLOAD=0: torch loads no torch.backends entry point" in r.err, r
    assert "--device-import" in r.err, r
    assert "opcheck_test_backend" not in r.err, r
    # auto no longer sees it either: the loopback.
    r, m = run_json(tmp_path, installed, "--manifests", cases, env={"TORCH_DEVICE_BACKEND_AUTOLOAD": "0"})
    assert r.rc == 0 and m["run"]["device_name"] == "loopback", r


def test_a_name_that_is_also_a_builtin_device_type_is_the_installed_backend(tmp_path, cases):
    """opencl is one of libtorch's own device types (OPENCL); a backend installed under that name is the device."""
    python = make_env(tmp_path / "venv", [("opencl-backend", "opencl", """\
        def _autoload():
            import opencl_loop  # pyloop, renamed: it registers PrivateUse1 as `opencl`
        """)])
    package = pathlib.Path(site_packages_of(python)) / "opencl_loop"
    package.mkdir()
    source = (BUILD_DIR / "python" / "opcheck_pyloop" / "__init__.py").read_text()
    assert 'NAME = "pyloop"' in source
    (package / "__init__.py").write_text(source.replace('NAME = "pyloop"', 'NAME = "opencl"'))
    for ext in (BUILD_DIR / "python" / "opcheck_pyloop").glob("_C*.so"):
        (package / ext.name).symlink_to(ext)
    r, m = run_json(tmp_path, python, "--manifests", cases, "--device", "opencl")
    assert r.rc == 0, r
    assert m["run"]["device"] == "opencl:0" and m["totals"]["passed"] == 3, (m["run"], m["totals"])
    assert "entry point opencl = opencl_backend:_autoload" in r.err, r


def test_an_unknown_name_lists_the_installed_backends(tmp_path, cases, installed):
    r, _ = run_json(tmp_path, installed, "--manifests", cases, "--device", "warpdrive")
    assert r.rc != 0, r
    assert "unknown device 'warpdrive'" in r.err, r
    assert "x = opcheck_test_backend:_autoload (opcheck-test-backend 0.1)" in r.err, r
    assert "register 'pyloop' (--device pyloop)" in r.err and "--device-import" in r.err, r


def test_auto_with_several_installed_backends_is_a_usage_error_listing_them(tmp_path, cases):
    other = ("other-backend", "y", "def _autoload():\n    pass\n")
    python = make_env(tmp_path / "venv", [PYLOOP_BACKEND, other])
    r, _ = run_json(tmp_path, python, "--manifests", cases)
    assert r.rc == 4, r
    assert "2 backends are installed as torch.backends entry points" in r.err, r
    assert "x = opcheck_test_backend:_autoload" in r.err and "y = other_backend:_autoload" in r.err, r
    assert "Fix:" in r.err, r


BROKEN_BACKEND = ("broken-backend", "broken", """\
    def _autoload():
        raise ImportError("/opt/broken/_C.so: undefined symbol: _ZN3c106detail14torchCheckFailEPKcS2_jRKSs")
    """)


def first_error_line(err):
    lines = [l for l in err.splitlines() if l.startswith("opcheck: error: ")]
    assert lines, err
    return lines[0][len("opcheck: error: "):]


def test_a_backend_whose_autoload_fails_says_the_real_error_first(tmp_path, cases):
    python = make_env(tmp_path / "venv", [BROKEN_BACKEND])
    r, _ = run_json(tmp_path, python, "--manifests", cases, "--device", "auto")
    assert r.rc != 0, r
    assert first_error_line(r.err) == (
        "ImportError: /opt/broken/_C.so: undefined symbol: _ZN3c106detail14torchCheckFailEPKcS2_jRKSs"), r
    assert "demangled: c10::detail::torchCheckFail(char const*, char const*, unsigned int, " in r.err, r
    assert f"interpreter: {python}" in r.err, r
    assert "torch: 2." in r.err and "site-packages/torch" in r.err, r
    assert "while: import torch (its autoload of the torch.backends entry point 'broken')" in r.err, r
    assert "Fix:" in r.err and "TORCH_DEVICE_BACKEND_AUTOLOAD=0 runs without that backend" in r.err, r
    # The whole traceback follows, after the context.
    assert r.err.index("Fix:") < r.err.index("Traceback (most recent call last)"), r


def test_a_device_import_that_fails_says_the_real_error_first(tmp_path, cases):
    mods = tmp_path / "mods"
    mods.mkdir()
    (mods / "broken_ext.py").write_text(
        "import torch\nraise ImportError('/opt/x/_C.so: undefined symbol: _ZN3c1010TensorImpl18set_storage_offsetEl')\n")
    r = opcheck("run", "--manifests", cases, "--device-import", "broken_ext", "--artifact-dir", tmp_path / "art",
                env={"PYTHONPATH": str(mods)})
    assert r.rc != 0, r
    assert first_error_line(r.err) == (
        "ImportError: /opt/x/_C.so: undefined symbol: _ZN3c1010TensorImpl18set_storage_offsetEl"), r
    assert "demangled: c10::TensorImpl::set_storage_offset(long)" in r.err, r
    assert "while: import broken_ext" in r.err and "interpreter: " in r.err and "Fix:" in r.err, r
    assert "broken_ext.py" in r.err, r  # the traceback is still there, last


def test_bootstrap_reports_the_backend_error_not_a_missing_torch(tmp_path):
    python = make_env(tmp_path / "venv", [BROKEN_BACKEND])
    script = f"source {SOURCE_DIR / 'scripts' / 'bootstrap.sh'}; opcheck_python_env 0; echo rc=$?"
    r = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=300,
                       env=dict(os.environ, OPCHECK_PYTHON=python))
    assert "rc=0" in r.stdout, r.stdout + r.stderr
    assert "install torch there" not in r.stderr, r.stderr
    assert "undefined symbol: _ZN3c106detail14torchCheckFailEPKcS2_jRKSs" in r.stderr, r.stderr
    assert "torch.backends entry point" in r.stderr, r.stderr


def test_inductor_without_a_code_generator_for_the_device_is_said_once(tmp_path, cases, installed):
    r, m = run_json(tmp_path, installed, "--manifests", cases, "--device", "pyloop", "--compile-backend", "inductor")
    assert r.err.count("inductor has no code generator for 'pyloop'") == 1, r
    assert {c["stage"] for c in m["cases"]} == {"NOT_SUPPORTED"}, [(c["id"], c["stage"]) for c in m["cases"]]
    assert all(c["message"].startswith("inductor has no code generator for device 'pyloop'") for c in m["cases"]), m
    assert all(c["timings"]["compile_ms"] == 0 for c in m["cases"]), [c["timings"] for c in m["cases"]]
