"""Report formats through the real binary, walking their table (src/report/report_formats.cpp, printed by
`report_sample formats`): each format's flag is in the --help of exactly the commands the table says take it, each
writes a file its reader takes, and the Markdown summary that run, merge and report write counts as the metrics file
does and renders (markdown-it) as a table of text, whatever the run's strings hold."""
import html.parser
import json
import os
import re
import subprocess
import xml.etree.ElementTree as ET

import jsonschema
import pytest
from markdown_it import MarkdownIt

from conftest import SOURCE_DIR, case, metrics, opcheck, write_manifest

FAULT = {"OPCHECK_LOOPBACK_FAULTS": "aten::add.Tensor=bias:1"}
SAMPLE = os.environ.get("OPCHECK_REPORT_SAMPLE", "")
COMMANDS = ("run", "sweep", "merge", "report")


def formats():
    assert SAMPLE, "OPCHECK_REPORT_SAMPLE names no report_sample binary (ctest sets it; build report_sample)"
    out = subprocess.run([SAMPLE, "formats"], capture_output=True, text=True, check=True).stdout
    table = [json.loads(line) for line in out.splitlines()]
    assert len(table) >= 5, table
    return table


def help_flags(command):
    r = opcheck(command, "--help")
    assert r.rc == 0, r
    return set(re.findall(r"^\s+(?:-\w, ?)?(--[a-z][a-z-]*)", r.out, re.M))


def test_each_format_is_a_flag_of_exactly_the_commands_its_table_entry_names():
    table = formats()
    every = {f["flag"] for f in table}
    for command in COMMANDS:
        expected = {f["flag"] for f in table if command in f["commands"]}
        assert help_flags(command) & every == expected, command
    assert {"run", "merge", "report"} <= set(next(f for f in table if f["flag"] == "--summary-md")["commands"])


def rendered_tables(text):
    """The Markdown's tables as markdown-it renders them: a list of rows of cell texts, per table."""
    tokens = MarkdownIt("commonmark").enable("table").parse(text)
    tables, row, cell = [], None, None
    for t in tokens:
        if t.type == "table_open":
            tables.append([])
        elif t.type == "tr_open":
            row = []
        elif t.type in ("th_open", "td_open"):
            cell = ""
        elif t.type == "inline" and cell is not None:
            assert all(c.type == "text" for c in t.children or []), [c.type for c in t.children]
            cell = "".join(c.content for c in t.children or [])
        elif t.type in ("th_close", "td_close"):
            row.append(cell)
            cell = None
        elif t.type == "tr_close":
            tables[-1].append(row)
    return tables


def check_summary(path, m):
    """The summary at `path` says the metrics `m`'s totals, its pass rate and its failure groups."""
    text = path.read_text()
    counts, *groups = rendered_tables(text)
    assert counts[0] == ["outcome", "occurrences"], counts
    said = {name: int(n) for name, n in counts[1:]}
    assert said == {k: m["totals"][k] for k in said}, (said, m["totals"])
    assert set(said) == set(m["totals"]), set(m["totals"]) ^ set(said)
    rate = m["pass_rate"]["overall"]
    assert f"Pass rate: {100 * rate:.2f}%" in text
    wanted = [[str(i + 1), str(g["count"]), str(g["unique"]), g["stage"], g["op"], g["example"]]
              for i, g in enumerate(m["failure_groups"])]
    assert [row[:6] for row in groups[0][1:]] == wanted if wanted else not groups, (groups, wanted)
    return text, groups


class _Title(html.parser.HTMLParser):
    title, _in = "", False

    def handle_starttag(self, tag, attrs):
        self._in = tag == "title"

    def handle_data(self, data):
        if self._in:
            self.title += data


def read_back(fmt, path, m):
    """Reads what `fmt` wrote at `path` as its consumer does, and checks it against the metrics `m`."""
    flag = fmt["flag"]
    total = m["totals"]["total"]
    if flag in ("--junit-xml", "--junit-dir"):
        files = sorted(path.glob("*.xml")) if fmt["folder"] else [path]
        assert files, path
        cases = sum(len(ET.parse(f).getroot().findall(".//testcase")) for f in files)
        assert cases == total, (flag, cases, total)
    elif flag == "--metrics-json":
        schema = json.loads((SOURCE_DIR / "schemas" / "metrics.schema.json").read_text())
        jsonschema.validate(json.loads(path.read_text()), schema)
    elif flag == "--html":
        t = _Title()
        t.feed(path.read_text())
        assert t.title.startswith("opcheck report"), t.title
    elif flag == "--summary-md":
        check_summary(path, m)
    else:
        pytest.fail(f"{flag} has no reader in this test: read its file back here as its consumer would")


def test_every_format_writes_a_file_its_reader_takes_from_one_run_with_a_fault(tmp_path):
    table = [f for f in formats() if "run" in f["commands"]]
    args = ["run", "--model", "gpt_oss", "-k", "torch.add or torch.mul", "--device", "loopback",
            "--artifact-dir", tmp_path / "a"]
    paths = {}
    for f in table:
        paths[f["flag"]] = tmp_path / ("folder" if f["folder"] else "report" + f["flag"][2:])
        args += [f["flag"], paths[f["flag"]]]
    if "--metrics-json" not in paths:
        args += ["--metrics-json", tmp_path / "m.json"]
    r = opcheck(*args, env=FAULT)
    assert r.rc == 1, r
    m = metrics(paths.get("--metrics-json", tmp_path / "m.json"))
    assert m["totals"]["failed"] > 0 and m["failure_groups"], m["totals"]
    for f in table:
        read_back(f, paths[f["flag"]], m)


def test_run_merge_and_report_write_a_summary_whose_counts_are_the_metrics_totals(tmp_path):
    common = ["--model", "gpt_oss", "--device", "loopback"]
    r = opcheck("run", *common, "--metrics-json", tmp_path / "run.json", "--summary-md", tmp_path / "run.md",
                "--artifact-dir", tmp_path / "a", env=FAULT)
    assert r.rc == 1, r
    m = metrics(tmp_path / "run.json")
    text, _ = check_summary(tmp_path / "run.md", m)
    # The heading is the console's summary line: one count everywhere.
    assert r.last_line in text.replace("\\", ""), (r.last_line, text)
    for i in (0, 1):
        s = opcheck("run", *common, "--shard", f"{i}/2", "--metrics-json", tmp_path / f"s{i}.json",
                    "--artifact-dir", tmp_path / f"a{i}", env=FAULT)
        assert s.rc in (0, 1), s
    merged = opcheck("merge", tmp_path / "s0.json", tmp_path / "s1.json", "--metrics-json", tmp_path / "m.json",
                     "--summary-md", tmp_path / "m.md")
    assert merged.rc == 1, merged
    check_summary(tmp_path / "m.md", metrics(tmp_path / "m.json"))
    assert metrics(tmp_path / "m.json")["totals"] == m["totals"]
    reported = opcheck("report", tmp_path / "run.json", "--summary-md", tmp_path / "r.md")
    assert reported.rc == 0, reported
    assert reported.out.startswith(f"wrote {tmp_path / 'r.md'}: "), reported
    check_summary(tmp_path / "r.md", m)


def test_the_summary_shows_markdown_in_a_message_as_text(tmp_path):
    r = opcheck("run", "--model", "gpt_oss", "-k", "torch.add", "--device", "loopback", "--metrics-json",
                tmp_path / "run.json", "--artifact-dir", tmp_path / "a", env=FAULT)
    assert r.rc == 1, r
    m = json.loads((tmp_path / "run.json").read_text())
    hostile = "a | b **bold** [x](http://e) <script>alert(1)</script> `c` $m$ &amp; _i_"
    for c in m["cases"]:
        if c["outcome"] == "failed":
            c["message"] = hostile + "\nsecond line"
    (tmp_path / "edited.json").write_text(json.dumps(m))
    reported = opcheck("report", tmp_path / "edited.json", "--summary-md", tmp_path / "s.md")
    assert reported.rc == 0, reported
    text = (tmp_path / "s.md").read_text()
    _, groups = check_summary(tmp_path / "s.md", metrics(tmp_path / "edited.json"))
    assert [row[6] for row in groups[0][1:]] == [hostile], groups
    page = MarkdownIt("commonmark").enable("table").render(text)
    assert "<script>" not in page and "<strong>" not in page and "<a " not in page and "<code>" not in page, page
    assert "second line" not in text


def test_a_groups_occurrences_and_unique_cases_are_counted_apart(tmp_path):
    # Two models with the same add call: one unique case, two occurrences, one group.
    for model in ("a", "b"):
        write_manifest(tmp_path / f"{model}.yaml", model, [case("add.1", "torch.add", [[4], [4]])])
    r = opcheck("run", "--manifests", tmp_path / "a.yaml", tmp_path / "b.yaml", "--device", "loopback",
                "--metrics-json", tmp_path / "m.json", "--summary-md", tmp_path / "s.md",
                "--artifact-dir", tmp_path / "art", env=FAULT)
    assert r.rc == 1, r
    m = metrics(tmp_path / "m.json")
    assert [(g["count"], g["unique"]) for g in m["failure_groups"]] == [(2, 1)], m["failure_groups"]
    check_summary(tmp_path / "s.md", m)
