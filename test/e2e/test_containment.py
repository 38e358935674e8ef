"""Containment (issue 24), through the real binary: ops that would touch the machine are refused where they are
written (manifest, v2 config, trace) with the reason, and no file is read, created or changed."""
import json
import os
import xml.etree.ElementTree as ET

import pytest

from conftest import opcheck, write_manifest


def add_case():
    return ["  - name: add.1", "    op: torch.add", "    inputs:", "      - tensor: {shape: [4]}",
            "      - tensor: {shape: [4]}"]


def call_case(name, op, values):
    return [f"  - name: {name}", f"    op: {op}", "    inputs:"] + [f"      - value: {v}" for v in values]


def from_file_case(name, path):
    # torch.from_file(path, shared=True, size=64) creates the file, or extends a shorter one to 64 bytes.
    return call_case(name, "torch.from_file", [json.dumps(str(path)), "true", "64"])


class Untouched:
    """A file that exists (shorter than from_file's size, so from_file would extend it) and one that does not."""

    def __init__(self, tmp_path):
        self.existing = tmp_path / "victim.bin"
        self.existing.write_bytes(b"12345678")
        os.utime(self.existing, (1_000_000_000, 1_000_000_000))
        self.absent = tmp_path / "created.bin"

    def check(self):
        st = self.existing.stat()
        assert self.existing.read_bytes() == b"12345678" and st.st_size == 8, "the existing file was changed"
        assert st.st_mtime == 1_000_000_000, "the existing file was written"
        assert st.st_atime == 1_000_000_000, "the existing file was read"
        assert not self.absent.exists(), "a file was created"


# Every kind of refusal, as a manifest may spell it: file ops, Python file calls, global setters, a Storage file
# read, collectives and profiler state (namespaces), an op torch only has in its JIT registry.
REFUSED = [
    ("torch.from_file", "reads a file"),
    ("aten::from_file.out", "reads a file"),
    ("torch.ops.aten.from_file.default", "reads a file"),
    ("torch.Tensor.from_file", "reads a file"),
    ("torch.save", "writes a file"),
    ("torch.load", "reads and unpickles a file"),
    ("aten::save", "writes a file"),
    ("torch.UntypedStorage.from_file", "reaches outside the call"),
    ("torch.manual_seed", "reseeds the global random generators"),
    ("torch.set_default_dtype", "changes the process's default dtype"),
    ("torch.set_num_threads", "changes the process's thread count"),
    ("profiler::_record_function_enter", "profiler state"),
    ("c10d::barrier", "talks to other processes"),
]


@pytest.mark.parametrize("op,why", REFUSED, ids=[o for o, _ in REFUSED])
def test_validate_refuses_an_op_that_touches_the_machine_with_its_line_and_reason(tmp_path, op, why):
    m = write_manifest(tmp_path / "m.yaml", "m", [add_case(), call_case("bad.1", op, ['"/tmp/x.bin"', "true", "64"])])
    r = opcheck("validate", m)
    assert r.rc == 2, r
    assert f"{m}:10" in r.err and f"'{op}' is refused: it" in r.err and why in r.err, r
    assert "docs/design.md: Reliability" in r.err, r


def test_ops_that_compute_are_not_refused(tmp_path):
    m = write_manifest(tmp_path / "m.yaml", "m", [add_case(), [
        "  - name: set.1", "    op: torch.Tensor.set_", "    inputs:", "      - tensor: {shape: [4]}",
        "      - tensor: {shape: [4]}"], [
        "  - name: einsum.1", "    op: torch.einsum", "    inputs:", "      - value: \"i,i->\"",
        "      - tensor_list: [{shape: [3]}, {shape: [3]}]"]])
    r = opcheck("validate", m)
    assert r.rc == 0 and "refused" not in r.err, r


def junit(path):
    return {f"{tc.get('classname')}::{tc.get('name')}": tc for tc in ET.parse(path).getroot().iter("testcase")}


def test_run_refuses_from_file_and_no_file_is_read_created_or_changed(tmp_path):
    files = Untouched(tmp_path)
    m = write_manifest(tmp_path / "m.yaml", "m", [add_case(), from_file_case("grow.1", files.existing),
                                              from_file_case("create.1", files.absent)])
    r = opcheck("run", "--manifests", m, "--device", "loopback", "--junit-xml", tmp_path / "r.xml",
                "--metrics-json", tmp_path / "r.json", "--artifact-dir", tmp_path / "art")
    files.check()
    assert r.rc == 2, r  # invalid input
    assert r.last_line.startswith("1 passed, 2 errors in "), r
    tcs = junit(tmp_path / "r.xml")
    assert tcs["m::add.1"].find("error") is None
    for name in ("m::grow.1", "m::create.1"):
        err = tcs[name].find("error")
        assert err is not None and err.get("type") == "INVALID_CASE", name
        assert "'torch.from_file' is refused: it reads a file" in err.get("message"), err.attrib
    m = json.loads((tmp_path / "r.json").read_text())
    assert m["totals"]["errors"] == 2 and m["totals"]["passed"] == 1, m["totals"]


@pytest.mark.parametrize("op,target", [("torch.save", "absent"), ("aten::save", "existing"), ("torch.load", "existing"),
                                       ("torch.Tensor.from_file", "existing")])
def test_run_refuses_file_calls_and_touches_no_file(tmp_path, op, target):
    files = Untouched(tmp_path)
    path = json.dumps(str(getattr(files, target)))
    inputs = ["      - tensor: {shape: [4]}", f"      - value: {path}"] if "save" in op else \
        [f"      - value: {path}", "      - value: true", "      - value: 64"]
    m = write_manifest(tmp_path / "m.yaml", "m", [add_case(), ["  - name: io.1", f"    op: {op}", "    inputs:"] + inputs])
    r = opcheck("run", "--manifests", m, "--device", "loopback", "--junit-xml", tmp_path / "r.xml",
                "--artifact-dir", tmp_path / "art")
    files.check()
    assert r.rc == 2 and r.last_line.startswith("1 passed, 1 error in "), r
    err = junit(tmp_path / "r.xml")["m::io.1"].find("error")
    assert err is not None and f"'{op}' is refused: it" in err.get("message"), r


V2 = """test_suite_config:
  global:
    supported_dtypes:
      - {{name: float32, precision: {{atol: 0.005, rtol: 0.005}}}}
  files:
    - path: ${{TORCH_DEVICE_ROOT}}/tests/models/test_model_ops_v2.py
      tests:
        - names: [TestSpyreModelOps::test_model_ops_db]
          mode: mandatory_success
          tags: [model__tiny]
          edits:
            ops:
              include:
                - name: torch.neg
                  sample_inputs_func:
                    args:
                      - tensor: {{shape: [4], stride: [1], dtype: torch.float32, device: cuda:0}}
                - name: torch.from_file
                  sample_inputs_func:
                    args:
                      - value: "{path}"
                      - value: true
                      - value: 64
cases: []
"""


def test_a_v2_config_naming_from_file_is_refused_by_validate_and_run(tmp_path):
    files = Untouched(tmp_path)
    cfg = tmp_path / "tiny.yaml"
    cfg.write_text(V2.format(path=files.absent))
    r = opcheck("validate", cfg)
    assert r.rc == 2 and f"{cfg}:18" in r.err and "'torch.from_file' is refused: it reads a file" in r.err, r
    r = opcheck("run", "--manifests", cfg, "--device", "loopback", "--junit-xml", tmp_path / "r.xml",
                "--artifact-dir", tmp_path / "art")
    files.check()
    assert r.rc == 2 and r.last_line.startswith("1 passed, 1 error in "), r
    errors = [tc for tc in junit(tmp_path / "r.xml").values() if tc.find("error") is not None]
    assert len(errors) == 1 and "'torch.from_file' is refused" in errors[0].find("error").get("message"), r


def trace_text(path):
    return ("Operator: aten.add.Tensor\n"
            "cnt: 1, ((T([4], f32), T([4], f32)), {})\n"
            "Operator: aten.from_file.default\n"
            f"cnt: 1, (('{path}', True, 64), {{}})\n")


def test_import_traces_refuses_a_from_file_line_and_writes_no_case_for_it(tmp_path):
    files = Untouched(tmp_path)
    trace = tmp_path / "t.txt"
    trace.write_text(trace_text(files.existing))
    r = opcheck("import-traces", trace, "-o", tmp_path / "out")
    assert r.rc == 2, r
    assert f"{trace}:4" in r.err and "aten.from_file.default is refused: it reads a file" in r.err, r
    manifest = (tmp_path / "out" / "t.yaml").read_text()
    assert "from_file" not in manifest and "aten::add" in manifest, manifest
    files.check()


def test_import_traces_refuses_a_save_line_and_run_traces_writes_no_file(tmp_path):
    files = Untouched(tmp_path)
    trace = tmp_path / "t.txt"
    trace.write_text("Operator: aten.save.default\n"
                     f"cnt: 1, ((T([4], f32), '{files.absent}'), {{}})\n")
    r = opcheck("import-traces", trace, "-o", tmp_path / "out")
    assert r.rc == 2 and f"{trace}:2: error: aten.save.default is refused: it writes a file" in r.err, r
    r = opcheck("run", "--traces", trace, "--device", "loopback", "--artifact-dir", tmp_path / "art")
    files.check()
    assert r.rc == 2 and r.last_line.startswith("1 error in "), r


def test_run_traces_reports_a_refused_line_as_an_error_and_runs_the_rest(tmp_path):
    files = Untouched(tmp_path)
    trace = tmp_path / "t.txt"
    trace.write_text(trace_text(files.absent))
    r = opcheck("run", "--traces", trace, "--device", "loopback", "--junit-xml", tmp_path / "r.xml",
                "--metrics-json", tmp_path / "r.json", "--artifact-dir", tmp_path / "art")
    files.check()
    assert r.rc == 2 and r.last_line.startswith("1 passed, 1 error in "), r
    m = json.loads((tmp_path / "r.json").read_text())
    [err] = [c for c in m["cases"] if c["outcome"] == "error"]
    assert err["file"] == str(trace) and err["line"] == 4, err
    assert "aten.from_file.default is refused: it reads a file" in err["message"], err


# Every selected case in every report: input that is wrong fails the run where it is wrong and still writes JUnit and
# metrics; input opcheck does not run is reported skipped with the reason; nothing vanishes.

def run_with_reports(tmp_path, *args, **kw):
    return opcheck("run", *args, "--junit-xml", tmp_path / "r.xml", "--metrics-json", tmp_path / "r.json",
                   "--artifact-dir", tmp_path / "art", **kw)


def reported(tmp_path):
    m = json.loads((tmp_path / "r.json").read_text())
    suite = ET.parse(tmp_path / "r.xml").getroot().find("testsuite")
    return m, suite


def v2_config(names, entry_op="torch.neg"):
    return f"""test_suite_config:
  files:
    - path: ${{TORCH_DEVICE_ROOT}}/tests/models/test_model_ops_v2.py
      tests:
        - names: {names}
          mode: mandatory_success
          tags: [model__tiny]
          edits:
            ops:
              include:
                - name: {entry_op}
                  sample_inputs_func:
                    args:
                      - tensor: {{shape: [4], stride: [1], dtype: torch.float32, device: cuda:0}}
cases: []
"""


@pytest.mark.parametrize("names,message", [
    ("[TestSpyreModelOps::test_model_ops_dbb]",
     "test 'TestSpyreModelOps::test_model_ops_dbb' is not TestSpyreModelOps::test_model_ops_db (did you mean "
     "'TestSpyreModelOps::test_model_ops_db'?)"),
    ("42", "'names' must be a list of test names, got an integer"),
    ("[]", "'names' lists no test, so none of this test's entries would run"),
], ids=["misspelled", "integer", "empty"])
def test_a_wrong_v2_test_name_is_an_error_that_fails_the_run_with_reports(tmp_path, names, message):
    cfg = tmp_path / "tiny.yaml"
    cfg.write_text(v2_config(names))
    v = opcheck("validate", cfg)
    assert v.rc == 2 and f"{cfg}:5:" in v.err and message in v.err, v
    r = run_with_reports(tmp_path, "--manifests", cfg, "--device", "cpu")
    assert r.rc == 2 and r.last_line.startswith("1 error in "), r  # never 5, "nothing selected"
    m, suite = reported(tmp_path)
    [err] = m["cases"]
    assert err["outcome"] == "error" and err["file"] == str(cfg) and err["line"] == 5 and message in err["message"], err
    assert suite.get("errors") == "1" and suite.get("tests") == "1", suite.attrib


def test_v2_entries_under_another_test_are_reported_skipped_with_the_reason(tmp_path):
    cfg = tmp_path / "tiny.yaml"
    cfg.write_text(v2_config("[TestOps::test_something_else]"))
    v = opcheck("validate", cfg)
    assert v.rc == 0 and "is not TestSpyreModelOps::test_model_ops_db; opcheck runs nothing under it" in v.err, v
    r = run_with_reports(tmp_path, "--manifests", cfg, "--device", "cpu")
    assert r.rc == 0 and r.last_line.startswith("1 skipped in "), r
    m, suite = reported(tmp_path)
    [skipped] = m["cases"]
    why = "not run: test 'TestOps::test_something_else' is not TestSpyreModelOps::test_model_ops_db (tiny.yaml:11)"
    assert skipped["outcome"] == "skipped" and skipped["op"] == "torch.neg", skipped
    assert skipped["message"] == why, skipped
    [tc] = suite.iter("testcase")
    assert tc.find("skipped").get("message") == why


def test_trace_lines_not_converted_are_errors_in_junit_and_metrics(tmp_path):
    trace = tmp_path / "t.txt"
    trace.write_text("Operator: aten.add.Tensor\n"
                     "cnt: 1, ((T([4], f32), T([4], f32)), {})\n"
                     "Operator: nonamespace\n"
                     "cnt: 1, ((T([4], f32),), {})\n"
                     "Operator: aten.neg.default\n"
                     "cnt: 1, ((T([4], f32), ((( garbage\n")
    r = run_with_reports(tmp_path, "--traces", trace, "--device", "cpu")
    # import-traces reports three lines: the bad header, the call under it, the malformed call.
    assert r.rc == 2 and r.last_line.startswith("1 passed, 3 errors in "), r
    m, suite = reported(tmp_path)
    errors = sorted((c["line"], c["file"]) for c in m["cases"] if c["outcome"] == "error")
    assert errors == [(3, str(trace)), (4, str(trace)), (6, str(trace))], m["cases"]
    assert "malformed call line" in [c for c in m["cases"] if c["line"] == 6][0]["message"]
    assert suite.get("errors") == "3" and suite.get("tests") == "4", suite.attrib


@pytest.mark.parametrize("kind", ["dangling", "fifo"])
def test_a_folder_whose_only_manifest_cannot_be_read_fails_with_reports(tmp_path, kind):
    d = tmp_path / "m"
    d.mkdir()
    if kind == "fifo":
        os.mkfifo(d / "only.yaml")
    else:
        (d / "only.yaml").symlink_to(tmp_path / "gone.yaml")
    r = run_with_reports(tmp_path, "--manifests", d, "--device", "cpu", timeout=60)
    assert r.rc == 2 and r.last_line.startswith("1 error in "), r  # never 5, "nothing selected"
    m, suite = reported(tmp_path)
    [err] = m["cases"]
    assert err["file"] == str(d / "only.yaml") and "cannot load" in err["message"], err
    assert suite.get("errors") == "1"

# merge: the shards are of one run, each is whole, no case twice; the error names the file and what is wrong.

def shard_runs(tmp_path, env_of=lambda i: {}, config_of=lambda i: None):
    write_manifest(tmp_path / "s.yaml", "s", [[f"  - name: neg.{i}", "    op: torch.neg", "    inputs:",
                                              f"      - tensor: {{shape: [{i + 2}]}}"] for i in range(4)])
    files = []
    for i in range(2):
        cfg = ["--config", config_of(i)] if config_of(i) else []
        out = tmp_path / f"shard{i}.json"
        r = opcheck("run", "--manifests", tmp_path / "s.yaml", "--device", "loopback", "--shard", f"{i}/2", *cfg,
                    "--metrics-json", out, "--artifact-dir", tmp_path / f"a{i}", env=env_of(i))
        assert r.rc == 0, r
        files.append(out)
    return files


def test_merge_refuses_a_shard_whose_case_list_contradicts_its_totals(tmp_path):
    a, b = shard_runs(tmp_path)
    doc = json.loads(b.read_text())
    doc["cases"] = []
    b.write_text(json.dumps(doc))
    r = opcheck("merge", a, b, "--metrics-json", tmp_path / "m.json")
    assert r.rc == 2 and f"{b}" in r.err and "/totals/total" in r.err, r
    assert "the totals say 2 total but the case list holds 0" in r.err, r
    assert not (tmp_path / "m.json").exists()


def test_merge_refuses_a_case_id_twice_in_one_shard(tmp_path):
    a, b = shard_runs(tmp_path)
    doc = json.loads(b.read_text())
    doc["cases"].append(doc["cases"][0])
    doc["totals"]["total"] += 1
    doc["totals"][doc["cases"][0]["outcome"]] += 1
    b.write_text(json.dumps(doc))
    r = opcheck("merge", a, b, "--metrics-json", tmp_path / "m.json")
    assert r.rc == 2 and f"case s::neg.1 appears twice in shard 2\n  shard 2: {b}\n" in r.err, r


@pytest.mark.parametrize("part", ["fault settings", "status config digest", "dedupe-key version"])
def test_merge_refuses_shards_of_another_run_naming_the_file_and_the_part(tmp_path, part):
    if part == "fault settings":
        a, b = shard_runs(tmp_path, env_of=lambda i: {"OPCHECK_LOOPBACK_FAULTS": "aten::exp=bias:1"} if i else {})
    elif part == "status config digest":
        for i in range(2):
            (tmp_path / f"c{i}.yaml").write_text(f"# config {i}\nrules: []\n")
        a, b = shard_runs(tmp_path, config_of=lambda i: tmp_path / f"c{i}.yaml")
    else:
        a, b = shard_runs(tmp_path)
        doc = json.loads(b.read_text())
        doc["run"]["identity"]["dedupe-key version"] = "k0"  # a shard of an opcheck that keyed cases otherwise
        b.write_text(json.dumps(doc))
    r = opcheck("merge", a, b, "--metrics-json", tmp_path / "m.json")
    assert r.rc == 2 and f"shard 2 ran with {part} " in r.err, r
    assert f"\n  shard 2: {b}\n  shard 1: {a}\n" in r.err, r


# Hostile sizes and numbers in every input format, not only v1 manifests: a generated megabyte op name is refused
# where it is written and never echoed whole; a number past a 64-bit float is an error, never a silent infinity.

def test_a_megabyte_op_name_in_a_v2_config_is_refused_at_its_line_with_bounded_reports(tmp_path):
    cfg = tmp_path / "tiny.yaml"
    cfg.write_text(v2_config("[TestSpyreModelOps::test_model_ops_db]", entry_op="torch." + "a" * (1 << 20)))
    r = run_with_reports(tmp_path, "--manifests", cfg, "--device", "cpu")
    assert r.rc == 2, r
    assert f"{cfg}:11:" in r.err and "(1048582 bytes) is longer than 256 bytes" in r.err, r.err[:2000]
    for report in ("r.xml", "r.json"):
        assert (tmp_path / report).stat().st_size < 200_000, report  # the name alone is 1 MB
    assert len(r.err) < 20000


def test_a_megabyte_operator_header_in_a_trace_is_reported_with_bounded_reports(tmp_path):
    trace = tmp_path / "t.txt"
    trace.write_text("Operator: aten." + "a" * (1 << 20) + ".default\n"
                     "cnt: 1, ((T([4], f32),), {})\n"
                     "Operator: aten.neg.default\n"
                     "cnt: 1, ((T([4], f32),), {})\n")
    r = run_with_reports(tmp_path, "--traces", trace, "--device", "cpu")
    assert r.rc == 2 and r.last_line.startswith("1 passed, 2 errors in "), r
    assert "(1048589 bytes) is longer than 256 bytes; its calls are not converted" in r.err, r.err[:2000]
    for report in ("r.xml", "r.json"):
        assert (tmp_path / report).stat().st_size < 200_000, report  # the name alone is 1 MB


def test_a_number_past_a_64_bit_float_in_a_trace_call_is_an_error_not_infinity(tmp_path):
    trace = tmp_path / "t.txt"
    trace.write_text("Operator: aten.add.Tensor\n"
                     "cnt: 1, ((T([4], f32), 1e999999), {})\n")
    r = opcheck("import-traces", trace, "-o", tmp_path / "out")
    assert f"{trace}:2" in r.err and "'1e999999' is too large for a 64-bit float" in r.err, r
    assert not list((tmp_path / "out").glob("*.yaml")) or "inf" not in "".join(
        p.read_text() for p in (tmp_path / "out").glob("*.yaml"))


def test_a_number_past_a_64_bit_float_in_a_condition_is_an_error(tmp_path):
    m = write_manifest(tmp_path / "c.yaml", "c", [
        ["  - name: neg", "    op: torch.neg", "    inputs:", "      - tensor: {shape: [4]}",
         "    skip_if: [{expr: \"1e999999 > 0\", reason: big}]"]])
    r = opcheck("validate", m)
    assert r.rc == 2 and "number '1e999999' is too large for a 64-bit float" in r.err, r


@pytest.mark.parametrize("dtype,values,bad", [("int8", "[1, 300, 2]", "300 overflows int8"),
                                              ("uint8", "[-1, 0, 1]", "-1 overflows uint8"),
                                              ("int16", "[0, 40000, 0]", "40000 overflows int16")])
def test_data_a_dtype_cannot_hold_is_an_error_at_its_line_not_a_wrapped_value(tmp_path, dtype, values, bad):
    m = write_manifest(tmp_path / "d.yaml", "d", [
        ["  - name: neg", "    op: torch.neg", "    inputs:",
         f"      - tensor: {{shape: [3], dtype: {dtype}, data: {values}}}"],
        ["  - name: ok", "    op: torch.neg", "    inputs:", "      - tensor: {shape: [2], dtype: int8, data: [-128, 127]}"]])
    v = opcheck("validate", m)
    assert v.rc == 2 and f"{m}:7:" in v.err and f"'data' value {bad} [case d::neg]" in v.err, v
    assert ": 1 error, 0 warnings" in v.out, v
    r = run_with_reports(tmp_path, "--manifests", m, "--device", "cpu")
    assert r.rc == 2 and r.last_line.startswith("1 passed, 1 error in "), r
    mt, _ = reported(tmp_path)
    [err] = [c for c in mt["cases"] if c["outcome"] == "error"]
    assert err["id"] == "d::neg" and err["stage"] == "INVALID_CASE" and bad in err["message"], err
