"""Shared fixtures for the end-to-end tests: they run the real opcheck binary and read what it writes."""
import json
import os
import pathlib
import subprocess
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
from corpus_plugin import pytest_configure, pytest_runtest_setup  # noqa: E402,F401  the `corpus` mark

SOURCE_DIR = pathlib.Path(os.environ.get("OPCHECK_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))
BUILD_DIR = pathlib.Path(os.environ.get("OPCHECK_BUILD_DIR", SOURCE_DIR / "build"))
BIN = pathlib.Path(os.environ.get("OPCHECK_BIN", BUILD_DIR / "opcheck"))
# The real torch-spyre corpus, read only by tests marked `corpus` (skipped with the reason when it is absent).
FIXTURES = pathlib.Path(os.environ.get("OPCHECK_FIXTURES", SOURCE_DIR.parent / "shared" / "fixtures"))
SPYRE = FIXTURES / "torch-spyre"
# The repository's own fixtures in torch-spyre's dialects (written by test/fixtures/make_fixtures.py).
OWN = SOURCE_DIR / "test" / "fixtures"
OWN_SPYRE = OWN / "torch-spyre"
OWN_V2 = OWN / "torch-spyre-v2"


class Run:
    def __init__(self, proc):
        self.rc = proc.returncode
        self.out = proc.stdout
        self.err = proc.stderr

    @property
    def last_line(self):
        lines = [l for l in self.out.splitlines() if l.strip()]
        return lines[-1] if lines else ""

    def __repr__(self):
        return f"rc={self.rc}\n--- stdout\n{self.out[-4000:]}\n--- stderr\n{self.err[-4000:]}"


def opcheck(*args, env=None, timeout=900, cwd=None):
    full_env = dict(os.environ)
    full_env.pop("OPCHECK_MANIFESTS", None)
    full_env["NO_COLOR"] = "1"
    if env:
        full_env.update(env)
    proc = subprocess.run([str(BIN), *map(str, args)], capture_output=True, text=True, env=full_env,
                          timeout=timeout, cwd=cwd)
    return Run(proc)


def opcheck_on_a_terminal(*args, env=None, timeout=600):
    """Runs opcheck with stderr on a pseudo-terminal (the progress line is drawn for a person at a terminal only) and
    stdout to a pipe: (exit code, stdout, what the terminal was sent)."""
    import pty
    import tempfile
    full_env = dict(os.environ, NO_COLOR="1", **(env or {}))
    full_env.pop("OPCHECK_MANIFESTS", None)
    master, terminal = pty.openpty()
    with tempfile.TemporaryFile("w+") as out:
        proc = subprocess.Popen([str(BIN), *map(str, args)], stdout=out, stderr=terminal, env=full_env)
        os.close(terminal)
        drawn = b""
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: every writer of the terminal has closed it
                break
            if not chunk:
                break
            drawn += chunk
        os.close(master)
        rc = proc.wait(timeout=timeout)
        out.seek(0)
        return rc, out.read(), drawn.decode(errors="replace")


def write_manifest(path, model, cases):
    """A v1 manifest of `model` with fp32 cases, each case a list of its YAML lines."""
    lines = [f"model: {model}", "defaults: {dtype: fp32}", "cases:"]
    for c in cases:
        lines += c
    path.write_text("\n".join(lines) + "\n")
    return path


def case(name, op, shapes, extra=()):
    """The YAML lines of one case of write_manifest: `op` on random tensors of `shapes`, plus `extra` lines."""
    lines = [f"  - name: {name}", f"    op: {op}", "    inputs:"]
    lines += [f"      - tensor: {{shape: {list(s)}}}" for s in shapes]
    return lines + [f"    {e}" for e in extra]


def metrics(path):
    return json.loads(path.read_text())


@pytest.fixture
def run_opcheck():
    return opcheck
