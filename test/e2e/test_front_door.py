"""The front door (scripts/bootstrap.sh, scripts/run.sh): a build folder is configured anew only for another torch or
another checkout, never for the same one reached by another path; run.sh builds what `run` needs, not the tests.

The real scripts run here; only `cmake` is a stand-in (first on PATH), so that nothing is configured or compiled."""
import os
import re
import shutil
import subprocess
import sysconfig

from conftest import BUILD_DIR, SOURCE_DIR

STUB_CMAKE = r"""#!/usr/bin/env bash
# Stands in for cmake when bootstrap.sh configures: records the arguments and writes a cache, runs nothing.
echo "$*" >> "$STUB_LOG"
while [ $# -gt 0 ]; do [ "$1" = -B ] && { mkdir -p "$2"; echo stub > "$2/CMakeCache.txt"; }; shift; done
"""


def write_cache(build, torch_prefix, home):
    (build / "CMakeFiles").mkdir(parents=True)
    (build / "CMakeFiles" / "kept").write_text("an earlier configure's file\n")
    cache = (f"OPCHECK_TORCH_CMAKE_PREFIX:PATH={torch_prefix}\n"
             f"CMAKE_HOME_DIRECTORY:INTERNAL={home}\n")
    (build / "CMakeCache.txt").write_text(cache)
    return cache


def configure(tmp_path, checkout, build, torch_prefix):
    """Sources `checkout`/scripts/bootstrap.sh and calls opcheck_configure on `build` for `torch_prefix`. Returns
    (OPCHECK_ROOT as bootstrap.sh set it, the cmake calls made, the script's stderr)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    (bin_dir / "cmake").write_text(STUB_CMAKE)
    (bin_dir / "cmake").chmod(0o755)
    log = tmp_path / "cmake-calls.txt"
    log.write_text("")
    script = ('source "$CHECKOUT/scripts/bootstrap.sh"\n'
              'OPCHECK_TORCH_CMAKE_PREFIX="$TORCH"\n'
              'opcheck_configure "$BUILD" || exit 1\n'
              'echo "$OPCHECK_ROOT"\n')
    env = dict(os.environ, PATH=f"{bin_dir}:{os.environ['PATH']}", STUB_LOG=str(log), CHECKOUT=str(checkout),
               TORCH=str(torch_prefix), BUILD=str(build), OPCHECK_PYTHON="/no/python/needed")
    env.pop("OPCHECK_BUILD_DIR", None)
    p = subprocess.run(["bash", "-c", script], capture_output=True, text=True, env=env, timeout=60)
    assert p.returncode == 0, p.stderr
    return p.stdout.strip(), log.read_text().splitlines(), p.stderr


def torch_dirs(tmp_path):
    """A torch prefix folder, a symlink to it, and another torch's prefix folder."""
    real = tmp_path / "venv" / "torch" / "share" / "cmake"
    real.mkdir(parents=True)
    (tmp_path / "venv-link").symlink_to(tmp_path / "venv")
    other = tmp_path / "other-venv" / "torch" / "share" / "cmake"
    other.mkdir(parents=True)
    return real, tmp_path / "venv-link" / "torch" / "share" / "cmake", other


def test_a_checkout_reached_through_a_symlink_configures_against_its_real_path(tmp_path):
    link = tmp_path / "checkout-link"
    link.symlink_to(SOURCE_DIR)
    root, _, _ = configure(tmp_path, link, tmp_path / "build", tmp_path)
    assert root == os.path.realpath(SOURCE_DIR)


def test_the_same_torch_reached_through_a_symlink_keeps_the_build_folder(tmp_path):
    real, via_link, _ = torch_dirs(tmp_path)
    root = os.path.realpath(SOURCE_DIR)
    # Cached through the link, found through the real path, and the other way round.
    for i, (cached, current) in enumerate([(via_link, real), (real, via_link)]):
        build = tmp_path / f"build-{i}"
        cache = write_cache(build, cached, root)
        _, calls, err = configure(tmp_path, SOURCE_DIR, build, current)
        assert calls == [], err
        assert (build / "CMakeCache.txt").read_text() == cache, err
        assert (build / "CMakeFiles" / "kept").exists(), err
        assert "configuring it anew" not in err


def test_a_cache_made_through_a_symlinked_checkout_keeps_the_build_folder(tmp_path):
    # A build folder configured by an earlier bootstrap that reached the checkout through a link.
    link = tmp_path / "checkout-link"
    link.symlink_to(SOURCE_DIR)
    real, _, _ = torch_dirs(tmp_path)
    build = tmp_path / "build"
    cache = write_cache(build, real, link)
    _, calls, err = configure(tmp_path, SOURCE_DIR, build, real)
    assert calls == [], err
    assert (build / "CMakeCache.txt").read_text() == cache, err
    assert (build / "CMakeFiles" / "kept").exists(), err


def test_another_torch_is_configured_anew(tmp_path):
    real, _, other = torch_dirs(tmp_path)
    build = tmp_path / "build"
    write_cache(build, real, os.path.realpath(SOURCE_DIR))
    _, calls, err = configure(tmp_path, SOURCE_DIR, build, other)
    assert f"{build} was configured for another torch ({real}); configuring it anew" in err
    assert not (build / "CMakeFiles" / "kept").exists(), err
    assert len(calls) == 1, calls
    assert f"-DOPCHECK_TORCH_CMAKE_PREFIX={other}" in calls[0].split(), calls
    assert (build / "CMakeCache.txt").read_text() == "stub\n"


def test_another_checkout_is_configured_anew(tmp_path):
    # cmake would refuse the cache, and `cmake --build` on it would build the other checkout's sources.
    real, _, _ = torch_dirs(tmp_path)
    other_checkout = tmp_path / "other-checkout"
    other_checkout.mkdir()
    build = tmp_path / "build"
    write_cache(build, real, other_checkout)
    _, calls, err = configure(tmp_path, SOURCE_DIR, build, real)
    assert f"{build} was configured for another checkout ({other_checkout}); configuring it anew" in err
    assert not (build / "CMakeFiles" / "kept").exists(), err
    assert len(calls) == 1 and f"-S {os.path.realpath(SOURCE_DIR)} " in calls[0], calls


# Stands in for cmake under scripts/run.sh: `cmake --build DIR [--target T...]` prints, through ninja, every command
# that building those targets runs (up to date or not); anything else (a configure) is refused.
STUB_BUILD = r"""#!/usr/bin/env bash
[ "$1" = --build ] || { echo "run.sh configured: cmake $*" >&2; exit 97; }
dir="$2"; shift 2; targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --target) shift; while [ $# -gt 0 ] && [[ "$1" != -* ]]; do targets+=("$1"); shift; done ;;
    *) shift ;;
  esac
done
ninja -C "$dir" -t commands "${targets[@]}" > "$STUB_LOG"
"""


def test_run_sh_builds_the_binary_and_the_libraries_run_loads_and_no_test(tmp_path):
    # A copy of this build's ninja files (never the build itself), with its binary.
    build = tmp_path / "build"
    (build / "CMakeFiles").mkdir(parents=True)
    for name in ["build.ninja", "CMakeCache.txt"]:
        shutil.copy(BUILD_DIR / name, build / name)
    for f in (BUILD_DIR / "CMakeFiles").glob("*.ninja"):
        shutil.copy(f, build / "CMakeFiles" / f.name)
    (build / "opcheck").symlink_to(BUILD_DIR / "opcheck")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "cmake").write_text(STUB_BUILD)
    (bin_dir / "cmake").chmod(0o755)
    log = tmp_path / "commands.txt"
    env = dict(os.environ, PATH=f"{bin_dir}:{os.environ['PATH']}", STUB_LOG=str(log), OPCHECK_BUILD_DIR=str(build))
    p = subprocess.run([str(SOURCE_DIR / "scripts" / "run.sh"), "--version"], capture_output=True, text=True,
                       env=env, timeout=120)
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith("opcheck "), p.stdout
    commands = log.read_text()
    linked = {o for o in re.findall(r" -o (\S+)", commands) if not o.endswith((".o", ".gch", ".pch"))}
    pyloop = "python/opcheck_pyloop/_C" + (sysconfig.get_config_var("EXT_SUFFIX") or ".so")
    expected = {"opcheck", "libopcheck_exec.so", "libopcheck_loopback.so", "libopcheck_pyhost.so", pyloop}
    assert linked == expected, f"run.sh also builds {sorted(linked - expected)}; misses {sorted(expected - linked)}"
    # The Python files the host and pyloop load are copied into build/python/ too.
    assert "python/_opcheck_host.py" in commands and "python/opcheck_pyloop/__init__.py" in commands


STUB_PYTHON = r"""#!/usr/bin/env bash
# Stands in for the project's interpreter: records its arguments; NumPy and expecttest are not importable.
echo "$*" >> "$STUB_LOG"
[ "$1" = -c ] && exit 1
exit 0
"""


def command_requirements(tmp_path, command, python_is_the_projects):
    """Sources scripts/bootstrap.sh and asks what `command` needs of Python; returns (rc, the interpreter's calls,
    stderr)."""
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    stub = venv / "bin" / "python"
    stub.write_text(STUB_PYTHON)
    stub.chmod(0o755)
    log = tmp_path / "python-calls.txt"
    log.write_text("")
    python = stub if python_is_the_projects else tmp_path / "own-python"
    if not python_is_the_projects:
        shutil.copy(stub, python)
    script = f'source "{SOURCE_DIR}/scripts/bootstrap.sh"; OPCHECK_PYTHON="{python}"; opcheck_command_requirements {command}'
    env = dict(os.environ, STUB_LOG=str(log), OPCHECK_VENV=str(venv))
    p = subprocess.run(["bash", "-c", script], capture_output=True, text=True, env=env, timeout=60)
    return p.returncode, log.read_text().splitlines(), p.stderr


def test_run_sh_import_opinfo_installs_numpy_and_expecttest_into_the_projects_environment(tmp_path):
    rc, calls, err = command_requirements(tmp_path, "import-opinfo", True)
    assert rc == 0, err
    assert calls == ["-c import numpy, expecttest",
                     f"-m pip install -q -r {SOURCE_DIR}/scripts/requirements-opinfo.txt"], calls
    pins = (SOURCE_DIR / "scripts" / "requirements-opinfo.txt").read_text()
    assert "numpy==" in pins and "expecttest==" in pins, pins
    # Another environment is the user's: the pip line, nothing installed, and run.sh stops.
    rc, calls, err = command_requirements(tmp_path / "own", "import-opinfo", False)
    assert rc == 1 and calls == ["-c import numpy, expecttest"], (calls, err)
    assert "Fix: " in err and "-m pip install -r " in err and "requirements-opinfo.txt" in err, err
    # Other commands need nothing more.
    rc, calls, _ = command_requirements(tmp_path / "run", "run", True)
    assert rc == 0 and calls == [], calls
    assert 'opcheck_command_requirements "${1:-}"' in (SOURCE_DIR / "scripts" / "run.sh").read_text()
