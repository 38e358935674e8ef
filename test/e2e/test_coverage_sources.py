"""Coverage by source through the real binary on the loopback: each enabled op the cases reached lists how many
occurrences reached it from v1 manifests, v2 configs, op traces (run --traces) and OpInfo samples (the mark
`opinfo`), and their pass rate; a fault on one op shows as that op's lower rate; shards merged add up to the whole."""
import re

import pytest

from conftest import case, metrics, opcheck, write_manifest

SOURCES = ["manifests", "v2_configs", "traces", "opinfo"]
FAULT = {"OPCHECK_LOOPBACK_FAULTS": "aten::neg=bias:1"}

TRACE = """Operator: aten.add.Tensor
cnt: 1, ((T([4, 8], f32), T([4, 8], f32)), {})
Operator: aten.neg.default
cnt: 1, ((T([4, 8], f32),), {})
cnt: 1, ((T([3, 5], f32),), {})
"""

V2 = """test_suite_config:
  global:
    supported_dtypes:
      - {name: float32}
    input_config: {seed: 5}
  files:
    - path: ${TORCH_DEVICE_ROOT}/tests/models/test_model_ops_v2.py
      unlisted_test_mode: skip
      tests:
        - names: [TestSpyreModelOps::test_model_ops_db]
          mode: mandatory_success
          tags: [model__tiny]
          edits:
            ops:
              include:
                - name: torch.add
                  sample_inputs_func:
                    args:
                      - tensor: {shape: [2, 3], stride: [3, 1], dtype: torch.float32, device: cuda:0}
                      - value: 2.0
cases: []
"""


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    d = tmp_path_factory.mktemp("sources")
    write_manifest(d / "model.yaml", "model", [case("add", "torch.add", [[4, 8], [4, 8]]),
                                               case("add_again", "torch.add", [[4, 8], [4, 8]]),
                                               case("neg", "torch.neg", [[6, 2]])])
    write_manifest(d / "opinfo_add.yaml", "opinfo_add", [
        case("add.float32.0", "torch.add", [[5], [5]], ["marks: [opinfo]"]),
        case("neg.float32.0", "torch.neg", [[7]], ["marks: [opinfo]"])])
    (d / "tiny.yaml").write_text(V2)
    (d / "train.txt").write_text(TRACE)
    return d


def run(inputs, out, *extra):
    r = opcheck("run", "--manifests", inputs / "model.yaml", inputs / "opinfo_add.yaml", inputs / "tiny.yaml",
                "--traces", inputs / "train.txt", "--device", "loopback", "--metrics-json", out / "m.json",
                "--artifact-dir", out / "art", *extra, env=FAULT)
    assert r.rc == 1, r  # the neg cases fail
    return r, metrics(out / "m.json")


@pytest.fixture(scope="module")
def whole(inputs, tmp_path_factory):
    out = tmp_path_factory.mktemp("whole")
    return run(inputs, out, "--html", out / "report.html") + (out,)


def per_op(m):
    return m["coverage"]["enabled_ops"]["per_op"]


def test_each_enabled_op_counts_the_cases_that_reached_it_by_source(whole):
    _, m, _ = whole
    ops = per_op(m)
    by_source = {c["id"]: c for c in m["cases"]}
    assert len(by_source) == 9, sorted(by_source)
    assert m["coverage"]["sources"] == {"manifests": 3, "v2_configs": 1, "traces": 3, "opinfo": 2}
    # The loopback enables neg (the fault makes all four of its cases fail) and no add kernel: add has no row.
    assert ops["aten::neg"]["sources"] == {"manifests": 1, "v2_configs": 0, "traces": 2, "opinfo": 1}, ops
    assert ops["aten::neg"]["cases"] == 4 and ops["aten::neg"]["outcomes"]["failed"] == 4, ops["aten::neg"]
    assert ops["aten::neg"]["pass_rate"] == 0.0
    assert not [k for k in ops if "add" in k], sorted(ops)
    # Every case moves its tensors with _copy_from: it is reached by all nine, the five add cases passed.
    copy = ops["aten::_copy_from"]
    assert copy["cases"] == 9 and copy["sources"] == m["coverage"]["sources"], copy
    assert copy["pass_rate"] == pytest.approx(5 / 9), copy
    for op, t in ops.items():
        assert sum(t["sources"].values()) == t["cases"] == t["outcomes"]["total"], (op, t)
    assert set(ops) == set(m["coverage"]["enabled_ops"]["exercised_ops"])


def test_the_trace_cases_carry_the_trace_mark(whole):
    _, m, _ = whole
    traced = [c for c in m["cases"] if c["file"].endswith("train.yaml")]
    assert len(traced) == 3 and all("trace" in c["marks"] for c in traced), traced
    assert not [c for c in m["cases"] if "trace" in c["marks"] and not c["file"].endswith("train.yaml")]


def test_the_html_shows_each_enabled_op_with_its_sources_and_pass_rate(whole):
    _, m, out = whole
    page = (out / "report.html").read_text()
    table = page[page.index('id="enabled-op-table"'):]
    table = table[:table.index("</table>")]
    rows = dict(re.findall(r'<tr data-op="([^"]+)">(.*?)</tr>', table))
    assert set(rows) == set(per_op(m)), sorted(rows)
    for op, t in per_op(m).items():
        cells = dict(re.findall(r'data-col="([a-z_0-9]+)" data-sort="([^"]*)"', rows[op]))
        assert int(cells["cases"]) == t["cases"], (op, cells)
        for s in SOURCES:
            assert int(cells[s]) == t["sources"][s], (op, s, cells)
        assert float(cells["pass_rate"]) == pytest.approx(t["pass_rate"]), (op, cells)


def test_merged_shards_add_up_to_the_whole_run(inputs, whole, tmp_path):
    _, m, _ = whole
    files = []
    for i in range(2):
        out = tmp_path / f"shard{i}"
        r = opcheck("run", "--manifests", inputs / "model.yaml", inputs / "opinfo_add.yaml", inputs / "tiny.yaml",
                    "--traces", inputs / "train.txt", "--device", "loopback", "--shard", f"{i}/2",
                    "--metrics-json", out / "m.json", "--artifact-dir", out / "art", env=FAULT)
        assert r.rc in (0, 1), r
        files.append(out / "m.json")
    assert all(metrics(f)["totals"]["total"] < 9 for f in files)
    r = opcheck("merge", *files, "--metrics-json", tmp_path / "merged.json")
    assert r.rc in (0, 1), r
    merged = metrics(tmp_path / "merged.json")
    assert per_op(merged) == per_op(m)
    assert merged["coverage"]["sources"] == m["coverage"]["sources"]
