"""The README fits on a screen or two, and every relative link of README.md, CONTRIBUTING.md and docs/*.md leads
somewhere: to a file of the repository, and for a `#anchor` to a heading of that Markdown file, as GitHub makes its
anchors. A page moved or a heading renamed without its links fails here with each broken link's file and line."""
import re

from conftest import SOURCE_DIR

README_MAX_LINES = 250
DOCS = [SOURCE_DIR / "README.md", SOURCE_DIR / "CONTRIBUTING.md", *sorted((SOURCE_DIR / "docs").glob("*.md"))]
LINK = re.compile(r"!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
FENCE = re.compile(r"^\s*(```|~~~)")


def prose_lines(text, code_spans=False):
    """(line number, line) outside fenced code blocks, with inline code spans blanked out unless `code_spans` (a
    heading's code spans are part of its anchor; a link written inside one is no link)."""
    inside = None
    for number, line in enumerate(text.splitlines(), 1):
        m = FENCE.match(line)
        if m:
            inside = None if inside == m.group(1) else (inside or m.group(1))
        elif inside is None:
            yield number, line if code_spans else re.sub(r"(`+)(?:(?!\1).)+\1", lambda s: " " * len(s.group(0)), line)


def slug(heading):
    """GitHub's anchor for a heading's text: markup dropped, lower case, punctuation but `-` and `_` removed, each
    space a `-`."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link's text stays, its target goes
    text = re.sub(r"[`*]", "", text).strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(path):
    """Every heading anchor of a Markdown file, a repeated one with GitHub's -1, -2 suffixes."""
    seen, out = {}, set()
    for _, line in prose_lines(path.read_text(), code_spans=True):
        m = re.match(r"^(#{1,6})\s+(.*?)\s*#*\s*$", line)
        if not m:
            continue
        base = slug(m.group(2))
        n = seen.get(base, 0)
        seen[base] = n + 1
        out.add(base if n == 0 else f"{base}-{n}")
    return out


def relative_links(path):
    """(line, target) of every link in the file's prose that is not a URL with a scheme."""
    for number, line in prose_lines(path.read_text()):
        for m in LINK.finditer(line):
            target = m.group(1)
            if not re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target):
                yield number, target


def broken(path):
    """What is wrong with each relative link of one file, as `file:line: target: why`."""
    out = []
    for number, target in relative_links(path):
        where = f"{path.relative_to(SOURCE_DIR)}:{number}: {target}"
        file_part, _, anchor = target.partition("#")
        dest = (path.parent / file_part).resolve() if file_part else path
        if not dest.exists():
            out.append(f"{where}: no file {dest}")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            out.append(f"{where}: {dest.name} has no heading with the anchor #{anchor}")
        elif anchor and dest.suffix != ".md":
            out.append(f"{where}: an anchor into {dest.name}, which is not Markdown")
    return out


def test_the_readme_fits_on_a_screen_or_two():
    lines = (SOURCE_DIR / "README.md").read_text().count("\n")
    assert lines <= README_MAX_LINES, (f"README.md has {lines} lines, more than {README_MAX_LINES}: it holds what "
                                       "opcheck is, the two commands, the tour and links; move the rest to docs/")


def test_anchors_are_githubs():
    assert slug("torch-spyre's v2 configs (`test_suite_config`)") == "torch-spyres-v2-configs-test_suite_config"
    assert slug("Reliability: what is refused, what is reported") == "reliability-what-is-refused-what-is-reported"
    assert slug("The loopback device: faults and modes") == "the-loopback-device-faults-and-modes"
    assert slug("1. The reference") == "1-the-reference"


def test_every_relative_link_resolves():
    links = sum(len(list(relative_links(p))) for p in DOCS)
    assert links >= 20, f"only {links} relative links found in {[p.name for p in DOCS]}: the link reader is broken"
    problems = [p for doc in DOCS for p in broken(doc)]
    assert not problems, "broken links (fix the link, or the heading it names):\n" + "\n".join(problems)
