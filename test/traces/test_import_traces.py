"""`opcheck import-traces` and `opcheck run --traces` end to end: every trace line is converted or reported, the
manifests validate, and the converted cases run on cpu without opcheck-side errors."""
import json
import os
import pathlib
import re
import subprocess

import pytest

HERE = pathlib.Path(__file__).resolve().parent
SOURCE_DIR = pathlib.Path(os.environ.get("OPCHECK_SOURCE_DIR", HERE.parents[1]))
BIN = pathlib.Path(os.environ.get("OPCHECK_BIN", SOURCE_DIR / "build" / "opcheck"))
# The repository's own trace (test/fixtures/make_fixtures.py writes it).
SAMPLE = SOURCE_DIR / "test" / "fixtures" / "op-traces" / "sample_training.txt"
FEATURES = HERE / "real_features.txt"

# Stages that mean opcheck itself failed the case (bad manifest, unbuildable input, reference that cannot run).
OPCHECK_SIDE = {"INVALID_CASE", "FAILED_INPUT", "FAILED_REFERENCE"}
REPORTED = re.compile(r"^(?P<file>.+?):(?P<line>\d+)(:\d+)?: warning: (?P<why>.+)$")


def opcheck(*args, cwd):
    env = dict(os.environ, NO_COLOR="1")
    env.pop("OPCHECK_MANIFESTS", None)
    return subprocess.run([str(BIN), *map(str, args)], capture_output=True, text=True, cwd=cwd, env=env, timeout=900)


def call_lines(path):
    return [n for n, line in enumerate(path.read_text().splitlines(), 1) if line.strip().startswith("cnt:")]


def reported_lines(stderr, path):
    out = {}
    for line in stderr.splitlines():
        m = REPORTED.match(line)
        if m and pathlib.Path(m["file"]) == path:
            out[int(m["line"])] = m["why"]
    return out


def converted_lines(manifest, path):
    """Trace line of each case, read back from the description the importer writes."""
    text = manifest.read_text()
    return [int(n) for n in re.findall(re.escape(str(path)) + r":(\d+): aten\.", text)]


@pytest.mark.parametrize("trace", [SAMPLE, FEATURES], ids=["sample", "real_features"])
def test_every_call_line_is_converted_or_reported(tmp_path, trace):
    r = opcheck("import-traces", trace, "-o", tmp_path / "out", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    manifest = tmp_path / "out" / (trace.stem + ".yaml")
    assert manifest.is_file()
    converted = converted_lines(manifest, trace)
    reported = reported_lines(r.stderr, trace)
    calls = call_lines(trace)
    assert sorted(converted + [n for n in reported if n in calls]) == calls, (converted, reported)
    assert not set(converted) & set(reported)
    m = re.search(r"(\d+) call lines?, (\d+) converted, (\d+) reported", r.stdout)
    assert m and int(m[1]) == len(calls) and int(m[2]) == len(converted), r.stdout


def test_sample_reports_only_the_impossible_view(tmp_path):
    r = opcheck("import-traces", SAMPLE, "-o", tmp_path, cwd=tmp_path)
    reported = reported_lines(r.stderr, SAMPLE)
    assert len(reported) == 1, r.stderr
    (line, why), = reported.items()
    assert "stride=(512, 8, 32, 1)" in SAMPLE.read_text().splitlines()[line - 1]
    assert "aten.view.default not converted" in why and "cannot be viewed as [2, 4, 128]" in why


def test_converted_manifests_validate_with_strict_markers(tmp_path):
    assert opcheck("import-traces", SAMPLE, FEATURES, "-o", tmp_path / "m", cwd=tmp_path).returncode == 0
    r = opcheck("validate", "--strict-markers", tmp_path / "m", cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert re.search(r"2 manifests, \d+ cases: 0 errors, 0 warnings", r.stdout), r.stdout


def run_traces(tmp_path, *traces):
    metrics = tmp_path / "metrics.json"
    r = opcheck("run", "--traces", *traces, "--device", "cpu", "-j", "2", "--metrics-json", metrics,
                "--artifact-dir", tmp_path / "art", cwd=tmp_path)
    assert metrics.is_file(), r.stdout + r.stderr
    return r, json.loads(metrics.read_text())["cases"]


def test_sample_runs_on_cpu_without_opcheck_side_errors(tmp_path):
    r, cases = run_traces(tmp_path, SAMPLE)
    # The one line import-traces reports (an impossible view) is the run's one error, in its reports: the run fails.
    [view] = [c for c in cases if c["stage"] == "INVALID_CASE"]
    assert view["file"] == str(SAMPLE) and "aten.view.default not converted" in view["message"], view
    assert r.returncode == 2, r.stdout + r.stderr
    cases = [c for c in cases if c is not view]
    assert len(cases) == 24, r.stdout
    bad = [(c["id"], c["stage"], c["message"]) for c in cases if c["stage"] in OPCHECK_SIDE]
    assert not bad, bad
    # fp32 and integer cases have CPU kernels: they must pass outright (fp16 ones may be NOT_SUPPORTED on cpu).
    for c in cases:
        if c["dtype"] != "fp16":
            assert c["outcome"] == "passed", (c["id"], c["stage"], c["message"])
    assert (tmp_path / "art" / "traces" / "sample_training.yaml").is_file()


def test_real_trace_features_run_and_index_inputs_are_valid(tmp_path):
    r, cases = run_traces(tmp_path, FEATURES)
    by_op = {c["op"] for c in cases}
    for op in ("aten::embedding.default", "aten::gather.default", "aten::index.Tensor", "aten::nll_loss_forward.default",
               "aten::max_pool2d_with_indices_backward.default", "aten::sum.dim_IntList"):
        assert op in by_op, by_op
    # The three lines import-traces reports are the run's errors (lines it could not convert fail the run).
    errors = sorted(c["line"] for c in cases if c["stage"] == "INVALID_CASE")
    assert errors == [11, 44, 45], errors
    failed = [(c["id"], c["stage"], c["message"]) for c in cases
              if c["outcome"] != "passed" and c["stage"] != "INVALID_CASE"]
    assert not failed, failed
    manifest = (tmp_path / "art" / "traces" / "real_features.yaml").read_text()
    assert "holds embedding rows into dim 0 of input 0 (size 512): randint in [0, 512)" in manifest
    assert "holds embedding rows (num_weights) below input 2 (512)" in manifest
    assert "cnt: 0 (synthetic input" in manifest


def test_run_traces_with_manifests_runs_both(tmp_path):
    r = opcheck("run", "--traces", FEATURES, "--manifests", SOURCE_DIR / "manifests" / "template.yaml",
                "--model", "real_features", "--model", "template", "--device", "cpu", "--collect-only",
                "--artifact-dir", tmp_path / "art", cwd=tmp_path)
    # real_features.txt holds three lines that cannot be converted: input errors, so exit 2, yet every case is listed.
    assert r.returncode == 2, r.stdout + r.stderr
    assert "real_features.txt:44: error: aten.bernoulli_.float not converted" in r.stderr
    assert "real_features::aten.gather.default.1" in r.stdout
    assert "template::" in r.stdout


def test_unreadable_input_is_the_only_failure(tmp_path):
    r = opcheck("import-traces", tmp_path / "missing.txt", SAMPLE, "-o", tmp_path / "o", cwd=tmp_path)
    assert r.returncode == 2, r.stderr
    assert "missing.txt: error: no such file or folder" in r.stderr
    assert (tmp_path / "o" / "sample_training.yaml").is_file()  # the readable input still converts

    garbage = tmp_path / "garbage.txt"
    garbage.write_bytes(b"\x00\xff not a trace\ncnt: 1, ((\n")
    r = opcheck("import-traces", garbage, "-o", tmp_path / "g", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert set(reported_lines(r.stderr, garbage)) == {1, 2}, r.stderr

    assert opcheck("import-traces", "-o", tmp_path / "x", cwd=tmp_path).returncode == 4
    r = opcheck("run", "--traces", tmp_path / "missing.txt", "--device", "cpu", cwd=tmp_path)
    assert r.returncode == 2, r.stderr


# Python reprs of strings as a trace holds them, each escape spelled as Python spells it.
ESCAPED_STRINGS = [r"'A\x41B'", r"'\u0041\0\r\t\n'", r"'\\\'\"'", r'"q\"\x1b]0;p\x07"', r"'\U0001F600\101\7'"]


def test_import_traces_keeps_every_string_escape_as_python_reads_it(tmp_path):
    import ast
    import yaml
    trace = tmp_path / "esc.txt"
    trace.write_text("Operator: aten.div.Tensor_mode\n" + "".join(
        f"cnt: 1, ((T([4], f32), T([4], f32)), {{'rounding_mode': {s}}})\n" for s in ESCAPED_STRINGS))
    r = opcheck("import-traces", trace, "-o", tmp_path / "out", cwd=tmp_path)
    assert r.returncode == 0 and "5 call lines, 5 converted, 0 reported" in r.stdout, r.stdout + r.stderr
    cases = yaml.safe_load((tmp_path / "out" / "esc.yaml").read_text())["cases"]
    got = [c["kwmap"]["rounding_mode"] for c in cases]
    assert got == [ast.literal_eval(s) for s in ESCAPED_STRINGS], got
    # And opcheck reads its own output back to the same strings: the manifest validates.
    v = opcheck("validate", tmp_path / "out" / "esc.yaml", cwd=tmp_path)
    assert v.returncode == 0, v.stdout + v.stderr
