"""An installed opcheck finds its manifests, exec layer and loopback device without flags, from any directory, and
its Python device host finds the installed pyloop package."""
import os
import subprocess

from conftest import BUILD_DIR


def test_installed_opcheck_runs_gpt_oss_from_another_directory(tmp_path):
    prefix = tmp_path / "prefix"
    inst = subprocess.run(["cmake", "--install", str(BUILD_DIR), "--prefix", str(prefix)], capture_output=True,
                          text=True)
    assert inst.returncode == 0, inst.stderr
    binary = prefix / "bin" / "opcheck"
    assert binary.exists()
    assert (prefix / "share" / "opcheck" / "manifests" / "gpt_oss.yaml").exists()
    assert (prefix / "share" / "opcheck" / "schemas" / "manifest.schema.json").exists()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = dict(os.environ, NO_COLOR="1")
    env.pop("OPCHECK_MANIFESTS", None)
    listing = subprocess.run([str(binary), "list-models"], cwd=elsewhere, capture_output=True, text=True, env=env)
    assert listing.returncode == 0, listing.stderr
    assert str(prefix / "share" / "opcheck" / "manifests") in listing.stdout
    run = subprocess.run([str(binary), "run", "--model", "gpt_oss"], cwd=elsewhere, capture_output=True, text=True,
                         env=env, timeout=900)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    # The default device is loopback, found beside the installed exec layer.
    assert "device: loopback" in run.stderr, run.stderr
    assert run.stdout.strip().splitlines()[-1].split()[1] == "passed", run.stdout[-2000:]
    assert (elsewhere / "opcheck-out" / "journal.jsonl").exists()


def test_installed_opcheck_runs_the_installed_pyloop(tmp_path):
    prefix = tmp_path / "prefix"
    inst = subprocess.run(["cmake", "--install", str(BUILD_DIR), "--prefix", str(prefix)], capture_output=True,
                          text=True)
    assert inst.returncode == 0, inst.stderr
    package = list(prefix.glob("lib*/opcheck/python/opcheck_pyloop"))
    assert len(package) == 1, list(prefix.rglob("opcheck_pyloop*"))
    assert list(package[0].glob("_C*.so")), list(package[0].iterdir())  # the extension module, not only __init__.py
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = dict(os.environ, NO_COLOR="1")
    env.pop("OPCHECK_MANIFESTS", None)
    run = subprocess.run([str(prefix / "bin" / "opcheck"), "run", "--model", "gpt_oss", "--device-import",
                          "opcheck_pyloop", "--device", "pyloop", "-j", "1"], cwd=elsewhere, capture_output=True,
                         text=True, env=env, timeout=900)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert "registered from Python by opcheck_pyloop" in run.stderr, run.stderr
    assert run.stdout.strip().splitlines()[-1].split()[1] == "passed", run.stdout[-2000:]
