"""A backend as it registers: a module whose import registers kernels, a device guard and an allocator on PrivateUse1
without renaming it (the renaming is its torch.backends entry point's, as torch-opencl's `_autoload` does), built here
from the build's pyloop device and placed only in throwaway folders (a PYTHONPATH folder, a throwaway virtual
environment), never in the project's environment. Also: rerun lines carry the environment that decided where the
device came from, and run as printed from a fresh shell."""
import json
import os
import pathlib
import re
import shlex
import subprocess
import sys
import textwrap

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "e2e"))
from conftest import BIN, BUILD_DIR, opcheck  # noqa: E402

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from test_installed_devices import CASES, make_env, site_packages_of  # noqa: E402

MODULE = "plainloop"  # pyloop, registered on PrivateUse1 without renaming it
RENAMED = "plainloop"  # the name its entry point's _autoload gives the device


def plain_package(folder):
    """Writes package `plainloop` into `folder`: pyloop whose import leaves PrivateUse1 named `privateuseone`, and whose
    `_autoload()` renames it and registers its device module, as a torch.backends entry point does."""
    package = folder / MODULE
    package.mkdir(parents=True)
    source = (BUILD_DIR / "python" / "opcheck_pyloop" / "__init__.py").read_text()
    for expected in ('NAME = "pyloop"', "torch.utils.rename_privateuse1_backend(NAME)\n",
                     "torch._register_device_module(NAME, _module())\n",
                     "torch.utils.generate_methods_for_privateuse1_backend(for_tensor=True, for_module=True, "
                     "for_storage=True)\n"):
        assert expected in source, expected
    source = source.replace('NAME = "pyloop"', 'NAME = "privateuseone"')
    # Its device module stays registered (as torch.privateuseone): Python's factories ask it for lazy init.
    for registration in ("torch.utils.rename_privateuse1_backend(NAME)\n",
                         "torch.utils.generate_methods_for_privateuse1_backend(for_tensor=True, for_module=True, "
                         "for_storage=True)\n"):
        source = source.replace(registration, "")
    source += textwrap.dedent(f"""

        def _autoload():
            global NAME
            NAME = "{RENAMED}"
            torch.utils.rename_privateuse1_backend(NAME)
            torch._register_device_module(NAME, _module())
        """)
    (package / "__init__.py").write_text(source)
    for ext in (BUILD_DIR / "python" / "opcheck_pyloop").glob("_C*.so"):
        (package / ext.name).symlink_to(ext)
    return folder


@pytest.fixture(scope="module")
def cases(tmp_path_factory):
    d = tmp_path_factory.mktemp("cases")
    (d / "inst.yaml").write_text(CASES)
    return d


@pytest.fixture(scope="module")
def modules(tmp_path_factory):
    """A PYTHONPATH folder holding plainloop, and only that."""
    return plain_package(tmp_path_factory.mktemp("mods"))


def run_json(tmp_path, *args, env=None):
    r = opcheck("run", *args, "--metrics-json", tmp_path / "m.json", "--artifact-dir", tmp_path / "art", env=env,
                timeout=900)
    m = json.loads((tmp_path / "m.json").read_text()) if (tmp_path / "m.json").exists() else None
    return r, m


def test_the_variant_really_leaves_privateuseone_unrenamed(modules):
    """What the tests below rely on: importing plainloop registers pyloop's kernels under PrivateUse1's own name."""
    python = os.environ.get("OPCHECK_PYTHON", sys.executable)
    out = subprocess.run(
        [python, "-c", "import torch, plainloop; print(torch._C._get_privateuse1_backend_name()); "
                       "print(torch.ones(2, device='privateuseone').add(1).cpu().tolist())"],
        capture_output=True, text=True, timeout=300, env=dict(os.environ, PYTHONPATH=str(modules)))
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["privateuseone", "[2.0,", "2.0]"], out.stdout


@pytest.mark.parametrize("device", [[], ["--device", "privateuseone"]], ids=["auto", "privateuseone"])
def test_a_backend_that_keeps_privateuseone_is_taken_as_privateuseone(tmp_path, cases, modules, device):
    r, m = run_json(tmp_path, "--manifests", cases, "--device-import", MODULE, *device,
                    env={"PYTHONPATH": str(modules)})
    assert r.rc == 0, r
    assert m["totals"]["passed"] == m["totals"]["total"] == 3, m["totals"]
    assert m["run"]["device"] == "privateuseone:0" and m["run"]["device_name"] == "privateuseone", m["run"]
    assert "aten::_copy_from" in m["run"]["enabled_ops"], m["run"]
    assert ("PrivateUse1 keeps its name 'privateuseone': plainloop registered kernels, a device guard and an "
            "allocator without renaming it, so the device is taken as privateuseone") in r.err, r
    assert "registered no device" not in r.err, r


def test_a_module_that_registers_no_guard_or_allocator_is_refused_naming_what_is_missing(tmp_path, cases):
    mods = tmp_path / "mods"
    mods.mkdir()
    (mods / "kernels_only.py").write_text(textwrap.dedent("""\
        import torch
        _lib = torch.library.Library("aten", "IMPL")
        _lib.impl("add.Tensor", lambda a, b, alpha=1: a, "PrivateUse1")
        """))
    r, m = run_json(tmp_path, "--manifests", cases, "--device-import", "kernels_only", env={"PYTHONPATH": str(mods)})
    assert r.rc == 4, r
    assert ("importing kernels_only registered no device: PrivateUse1 keeps its name 'privateuseone' and has no "
            "device guard") in r.err, r
    assert "Fix:" in r.err, r


@pytest.fixture(scope="module")
def installed_plain(tmp_path_factory):
    """A throwaway environment where plainloop is an installed distribution with a torch.backends entry point."""
    root = tmp_path_factory.mktemp("plainenv")
    python = make_env(root / "venv", [])
    site = pathlib.Path(site_packages_of(python))
    plain_package(site)
    info = site / f"{MODULE}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {MODULE}\nVersion: 0.1\n")
    (info / "top_level.txt").write_text(f"{MODULE}\n")
    (info / "RECORD").write_text(f"{MODULE}/__init__.py,,\n")
    (info / "entry_points.txt").write_text(f"[torch.backends]\n{RENAMED} = {MODULE}:_autoload\n")
    return python


def test_the_entry_point_of_an_unrenamed_module_is_named_and_callable(tmp_path, cases, installed_plain):
    # Autoload off: `import torch` does not call the entry point, so importing the module leaves PrivateUse1 unrenamed,
    # and opcheck says which entry point renames it and how to call it.
    off = {"OPCHECK_PYTHON": installed_plain, "TORCH_DEVICE_BACKEND_AUTOLOAD": "0"}
    r, m = run_json(tmp_path / "plain", "--manifests", cases, "--device-import", MODULE, env=off)
    assert r.rc == 0 and m["run"]["device_name"] == "privateuseone", r
    assert (f"plainloop's distribution declares the torch.backends entry point {RENAMED} = {MODULE}:_autoload "
            f"({MODULE} 0.1): use it with --device-import {MODULE}:_autoload") in r.err, r
    # MODULE:FUNCTION calls it after the import: the device has the name its team gives it.
    r, m = run_json(tmp_path / "called", "--manifests", cases, "--device-import", f"{MODULE}:_autoload", "--device",
                    RENAMED, env=off)
    assert r.rc == 0, r
    assert m["run"]["device"] == f"{RENAMED}:0" and m["totals"]["passed"] == 3, (m["run"], m["totals"])
    assert "keeps its name" not in r.err, r


def rerun_of(out):
    lines = [l[len("rerun: "):] for l in out.splitlines() if l.startswith("rerun: ")]
    assert lines, out
    return lines[0]


def fresh_shell(line, cwd):
    """`line` run by bash from an empty environment but PATH and HOME, as a person pastes it into a new terminal."""
    return subprocess.run(["env", "-i", f"PATH={os.environ['PATH']}", f"HOME={os.environ.get('HOME', '/')}", "bash",
                           "-c", line], capture_output=True, text=True, timeout=900, cwd=cwd)


def test_the_rerun_line_carries_the_pythonpath_and_faults_and_reproduces_from_a_fresh_shell(tmp_path, cases, modules):
    other = tmp_path / "unrelated"
    other.mkdir()
    env = {"PYTHONPATH": f"{other}:{modules}", "OPCHECK_PYLOOP_FAULTS": "aten::add.Tensor=bias:1e-2"}
    r, m = run_json(tmp_path, "--manifests", cases, "--device-import", MODULE, env=env)
    assert r.rc == 1, r
    assert [c["stage"] for c in m["cases"] if c["outcome"] == "failed"] == ["INCORRECT_RESULT"], m["cases"]
    line = rerun_of(r.out)
    # Only the entry that found the device module, with the fault, quoted for the shell.
    words = shlex.split(line)
    assert words[:2] == ["OPCHECK_PYLOOP_FAULTS=aten::add.Tensor=bias:1e-2", f"PYTHONPATH={modules}"], line
    assert str(other) not in line, line
    repro = fresh_shell(line, tmp_path)
    assert repro.returncode == 0, repro.stderr
    rerun = fresh_shell(repro.stdout.strip().splitlines()[-1], tmp_path)
    assert rerun.returncode == 1, rerun.stdout[-3000:] + rerun.stderr[-3000:]
    assert re.search(r"^FAILED inst::add .*INCORRECT_RESULT", rerun.stdout, re.M), rerun.stdout[-3000:]
    assert "1 failed" in rerun.stdout.strip().splitlines()[-1], rerun.stdout[-3000:]


def test_the_rerun_line_names_the_interpreter_of_an_installed_backend(tmp_path, cases):
    """A backend installed in a virtual environment, found through OPCHECK_PYTHON: the rerun names that interpreter,
    so a fresh shell (no OPCHECK_PYTHON, no active environment) finds the same backend."""
    from test_installed_devices import PYLOOP_BACKEND
    python = make_env(tmp_path / "venv", [PYLOOP_BACKEND])
    r, m = run_json(tmp_path, "--manifests", cases, "--device", "pyloop",
                    env={"OPCHECK_PYTHON": python, "OPCHECK_PYLOOP_FAULTS": "aten::mm=bias:1e-1"})
    assert r.rc == 1 and m["run"]["device"] == "pyloop:0", r
    line = rerun_of(r.out)
    assert f"OPCHECK_PYTHON={python}" in shlex.split(line), line
    repro = fresh_shell(line, tmp_path)
    assert repro.returncode == 0, repro.stderr
    rerun = fresh_shell(repro.stdout.strip().splitlines()[-1], tmp_path)
    assert rerun.returncode == 1, rerun.stdout[-3000:] + rerun.stderr[-3000:]
    assert re.search(r"^FAILED inst::mm .*INCORRECT_RESULT", rerun.stdout, re.M), rerun.stdout[-3000:]
