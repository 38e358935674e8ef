"""Every example runs as written: the lines starting `opcheck ` or `scripts/` (after any VAR=value assignments) in the
fenced `sh` blocks of README.md and docs/*.md, and the `Example:` lines of every subcommand's --help, each run by bash
against this build, on shipped files only, in an empty folder of one's own after the README's set-up (build/ on PATH;
a `scripts/` line runs the checkout's script: a copy elsewhere would take that folder for the checkout and configure
a build there).

An example that needs a failure, a device or a file says how in its own text (`OPCHECK_LOOPBACK_FAULTS=...`, an
earlier example line that writes the file), and runs exactly so: a block's (or a subcommand's) lines run in order in
one folder, so that the files one line writes are there for the next. `python3 ...` lines of a --help (the repro
scripts) run too, under the machine's python3, which need not have torch.

An example runs when it exits 0, or 1 where that is its verdict (failures found, a regression): never 2 (invalid
input), 3 (internal error), 4 (usage error) or 5 (nothing selected). The count of examples found may grow, never
drop below MIN_EXAMPLES: an example deleted instead of fixed fails here."""
import os
import pathlib
import re
import shutil
import subprocess
import sys

import pytest

from conftest import BIN, SOURCE_DIR

# Found when this test was written (2 in the README's sh block, 31 in the --help texts), then 39 once the README's
# tour added 6; raise it when examples are added.
MIN_EXAMPLES = 39
# Examples that cannot run inside the test suite, each with the reason. Keep this short.
NOT_RUN_HERE = {
    "scripts/test.sh": "it runs the suite this test is part of",
}
COMMAND = re.compile(r"^((?:[A-Z_][A-Z0-9_]*=(?:'[^']*'|\"[^\"]*\"|\S*)\s+)*)(opcheck |scripts/|python3 )")


def doc_examples():
    """(where, [lines]) per fenced sh block of README.md and docs/*.md, the lines an example runner runs."""
    docs = [SOURCE_DIR / "README.md", *sorted((SOURCE_DIR / "docs").glob("*.md"))]
    out = []
    for doc in docs:
        text = doc.read_text()
        for m in re.finditer(r"^```sh\n(.*?)^```", text, re.M | re.S):
            line = text[:m.start()].count("\n") + 2
            body = m.group(1).replace("\\\n", " ")
            cmds = [re.sub(r"\s+#.*$", "", l.strip()) for l in body.splitlines()
                    if COMMAND.match(l.strip()) and not l.strip().startswith("python3 ")]
            if cmds:
                out.append((f"{doc.relative_to(SOURCE_DIR)}:{line}", cmds))
    return out


def subcommands():
    r = subprocess.run([str(BIN), "--help"], capture_output=True, text=True, timeout=60)
    section = r.stdout[r.stdout.lower().index("subcommands:"):].split("\n\n")[0]
    return re.findall(r"^  (\S+)\s", section, re.M)


def help_examples():
    """(where, [lines]) per --help: the command lines of its Example(s) section, the top-level help's included."""
    out = []
    for sub in [None, *subcommands()]:
        args = [str(BIN), "--help"] if sub is None else [str(BIN), sub, "--help"]
        text = subprocess.run(args, capture_output=True, text=True, timeout=60).stdout
        cmds, inside = [], False
        for raw in text.splitlines():
            line = raw.strip()
            if line.startswith("Example"):
                inside = True
                line = line.split(":", 1)[1].strip() if line.split(":", 1)[1:] else ""
            elif not raw.startswith(" "):
                inside = False
            if inside and COMMAND.match(line):
                cmds.append(re.sub(r"\s+#.*$", "", line))
        if cmds:
            out.append((f"opcheck {sub or ''} --help".replace("  ", " "), cmds))
    return out


EXAMPLES = doc_examples() + help_examples()


def test_no_example_was_dropped():
    found = sum(len(cmds) for _, cmds in EXAMPLES)
    assert found >= MIN_EXAMPLES, (f"{found} examples found, fewer than the {MIN_EXAMPLES} there were: an example was "
                                   f"removed rather than fixed. Fix: restore it, or lower MIN_EXAMPLES in {__file__} "
                                   "saying why in the commit")


# The README's set-up, after which every example runs as written: `opcheck` is build/opcheck, on PATH.
README_SETUP = 'export PATH="$PWD/build:$PATH"'


def test_the_readme_sets_up_what_the_examples_run_after():
    readme = (SOURCE_DIR / "README.md").read_text()
    setup = re.search(r"^```sh\n(scripts/run.sh --version.*?)^```", readme, re.M | re.S)
    assert setup and README_SETUP in setup.group(1), "README.md: no set-up block putting build/ on PATH"


@pytest.fixture
def workdir(tmp_path):
    """An empty folder of one's own, after the README's set-up: the build's folder (where `opcheck` is) first on
    PATH, nothing of the repository's beside it."""
    build = pathlib.Path(BIN).parent
    env = dict(os.environ, PATH=f"{build}:{os.environ['PATH']}", NO_COLOR="1", OPCHECK_BUILD_DIR=str(build))
    env.pop("OPCHECK_MANIFESTS", None)
    # scripts/ lines bootstrap: without OPCHECK_PYTHON (pytest run by hand) they would make and fill a .venv.
    env.setdefault("OPCHECK_PYTHON", sys.executable)
    return tmp_path, env


@pytest.mark.parametrize("where,cmds", EXAMPLES, ids=[w for w, _ in EXAMPLES])
def test_example_runs_as_written(where, cmds, workdir):
    cwd, env = workdir
    for cmd in cmds:
        if cmd in NOT_RUN_HERE:
            continue
        # A scripts/ line runs the checkout's own script (it finds the checkout from its own path), here.
        run = re.sub(r"(^|\s)scripts/", rf"\1{SOURCE_DIR}/scripts/", cmd, count=1) if " opcheck " not in f" {cmd}" else cmd
        r = subprocess.run(["bash", "-c", run], cwd=cwd, env=env, capture_output=True, text=True, timeout=900)
        assert r.returncode in (0, 1), (f"{where}: `{cmd}` exited {r.returncode}\n--- stdout\n{r.stdout[-3000:]}\n"
                                        f"--- stderr\n{r.stderr[-3000:]}")
        assert "No module named" not in r.stderr and "command not found" not in r.stderr, f"{where}: `{cmd}`\n{r.stderr}"
