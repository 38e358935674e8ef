"""An installed opcheck finds its manifests, exec layer and loopback device without flags, from any directory, and
its Python device host finds the installed pyloop package."""
import os
import subprocess

import pytest

from conftest import BUILD_DIR


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """The build installed into a fresh prefix (each test runs it from its own tmp_path, outside prefix and source)."""
    tmp = tmp_path_factory.mktemp("install")
    prefix = tmp / "prefix"
    inst = subprocess.run(["cmake", "--install", str(BUILD_DIR), "--prefix", str(prefix)], capture_output=True,
                          text=True)
    assert inst.returncode == 0, inst.stderr
    assert (prefix / "bin" / "opcheck").exists()
    return prefix


def run_installed(prefix, cwd, *args):
    env = dict(os.environ, NO_COLOR="1")
    env.pop("OPCHECK_MANIFESTS", None)
    return subprocess.run([str(prefix / "bin" / "opcheck"), *args], cwd=cwd, capture_output=True, text=True, env=env,
                          timeout=900)


def test_installed_opcheck_runs_gpt_oss_from_another_directory(installed, tmp_path):
    assert (installed / "share" / "opcheck" / "manifests" / "gpt_oss.yaml").exists()
    assert (installed / "share" / "opcheck" / "schemas" / "manifest.schema.json").exists()
    listing = run_installed(installed, tmp_path, "list-models")
    assert listing.returncode == 0, listing.stderr
    assert str(installed / "share" / "opcheck" / "manifests") in listing.stdout
    run = run_installed(installed, tmp_path, "run", "--model", "gpt_oss")
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    # The default device is loopback, found beside the installed exec layer.
    assert "device: loopback" in run.stderr, run.stderr
    assert run.stdout.strip().splitlines()[-1].split()[1] == "passed", run.stdout[-2000:]
    assert (tmp_path / "opcheck-out" / "journal.jsonl").exists()


def test_installed_opcheck_runs_the_installed_pyloop(installed, tmp_path):
    package = list(installed.glob("lib*/opcheck/python/opcheck_pyloop"))
    assert len(package) == 1, list(installed.rglob("opcheck_pyloop*"))
    assert list(package[0].glob("_C*.so")), list(package[0].iterdir())  # the extension module, not only __init__.py
    run = run_installed(installed, tmp_path, "run", "--model", "gpt_oss", "--device-import", "opcheck_pyloop",
                        "--device", "pyloop", "-j", "1")
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert "registered from Python by opcheck_pyloop" in run.stderr, run.stderr
    assert run.stdout.strip().splitlines()[-1].split()[1] == "passed", run.stdout[-2000:]
