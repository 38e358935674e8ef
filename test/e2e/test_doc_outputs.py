"""What the docs show a command printing is what it prints: every fenced block of README.md and docs/*.md whose first
line is a `$ ` command runs here, line by line in one empty folder (`opcheck` first on PATH, as the README's set-up
puts it), and each output line the block shows must be printed, in order, by its command. Times, digests, core counts
and paths are masked (they differ from machine to machine); a shown `...` line stands for any lines. A block that
cannot run here is listed in NOT_RUN_HERE with the reason."""
import os
import pathlib
import re
import subprocess

import pytest

from conftest import BIN, SOURCE_DIR

# (doc, the block's first command) -> why it does not run here. Keep this short.
NOT_RUN_HERE = {
    ("docs/design.md", "$ opcheck validate m.yaml"): "its manifests (m.yaml, f.yaml, edited shards) are the page's own",
    ("docs/manifests.md", "$ opcheck validate --manifests moe.yaml"): "moe.yaml is the page's own manifest",
}
# (doc, a command) -> why that command alone does not run here (the block's others do).
STEP_NOT_RUN_HERE = {
    ("docs/nightly.md", "opcheck diff older-loopback.json last-night.json | head -3"):
        "older-loopback.json is last-night.json edited by hand, as its comment says",
}


def console_blocks():
    """(where, first command, [(command, [shown output lines])]) per block that starts with `$ `."""
    out = []
    for doc in [SOURCE_DIR / "README.md", *sorted((SOURCE_DIR / "docs").glob("*.md"))]:
        text = doc.read_text()
        for m in re.finditer(r"^```\w*\n(.*?)^```", text, re.M | re.S):
            lines = m.group(1).splitlines()
            if not lines or not lines[0].startswith("$ "):
                continue
            steps = []
            for line in lines:
                if line.startswith("$ "):
                    steps.append((line[2:], []))
                else:
                    steps[-1][1].append(line)
            where = f"{doc.relative_to(SOURCE_DIR)}:{text[:m.start()].count(chr(10)) + 1}"
            out.append((where, str(doc.relative_to(SOURCE_DIR)), lines[0], steps))
    return out


BLOCKS = console_blocks()


def masked(line):
    """The line without what differs between machines and runs."""
    line = re.sub(r"\S*/(?=[\w.+-]+(\s|$|[,;:)]))", "", line)  # paths: their last part only
    line = re.sub(r"\b\d+(\.\d+)?\s?s\b", "T", line)  # times: 0.58s, 1.6 s
    line = re.sub(r"\(\d+:\d\d:\d\d\)", "", line)
    line = re.sub(r"\b[0-9a-f]{12,64}\b", "H", line)  # digests
    line = re.sub(r"-j \d+", "-j N", line)
    return line.rstrip()


def counts_masked(line):
    """A line of a split by past times: how many cases each shard gets depends on the times measured."""
    return re.sub(r"\b\d+\b", "N", masked(line))


def shown_in(shown, stdout, stderr, mask=masked):
    """Whether every shown line is printed, in order within its stream (a terminal interleaves the two as they come;
    `...` matches any lines); the first one that is not."""
    streams = [[mask(l) for l in stdout.splitlines()], [mask(l) for l in stderr.splitlines()]]
    at = [0, 0]
    for want in shown:
        if want.strip() in ("", "..."):
            continue
        want = mask(want)
        for k, lines in enumerate(streams):
            found = next((i for i in range(at[k], len(lines)) if lines[i] == want), None)
            if found is not None:
                at[k] = found + 1
                break
        else:
            return want
    return None


def test_the_docs_show_console_blocks():
    assert len(BLOCKS) >= 7, [b[0] for b in BLOCKS]


@pytest.mark.parametrize("where,doc,first,steps", BLOCKS, ids=[b[0] for b in BLOCKS])
def test_a_shown_output_is_what_the_command_prints(where, doc, first, steps, tmp_path):
    if (doc, first) in NOT_RUN_HERE:
        pytest.skip(NOT_RUN_HERE[(doc, first)])
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "opcheck").symlink_to(BIN)
    work = tmp_path / "work"
    work.mkdir()
    env = dict(os.environ, PATH=f"{bindir}:{os.environ['PATH']}", NO_COLOR="1", COLUMNS="80")
    env.pop("OPCHECK_MANIFESTS", None)
    for command, shown in steps:
        run = re.sub(r"\s+#.*$", "", command)
        if (doc, run) in STEP_NOT_RUN_HERE:
            continue
        r = subprocess.run(["bash", "-c", run], cwd=work, env=env, capture_output=True, text=True, timeout=600)
        missing = shown_in(shown, r.stdout, r.stderr, counts_masked if "--durations-from" in run else masked)
        assert missing is None, (f"{where}: `{command}` does not print the line\n  {missing}\n--- it printed\n"
                                 f"{r.stdout[-4000:]}{r.stderr[-4000:]}")
