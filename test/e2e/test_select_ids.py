"""Selection by case id, validate --ops, and what --resume and the results cache check before reusing a result, through
the real binary."""
import json
import re
import shlex

import pytest

from conftest import SOURCE_DIR, case, opcheck, write_manifest


def line_of(path, text):
    """1-based line of the first line of `path` holding `text`."""
    return next(i for i, l in enumerate(path.read_text().splitlines(), 1) if text in l)


def selected_ids(result):
    """The ids a `list-cases` run printed, in order."""
    return [l.split()[0] for l in result.out.splitlines() if "::" in l]


# Two models; torch.mul.1 and torch.mul.10 are the pair a -k expression could not tell apart.
def two_models(d):
    d.mkdir(exist_ok=True)
    write_manifest(d / "gpt_oss.yaml", "gpt_oss", [
        case("torch.add.1", "torch.add", [[4], [4]]),
        case("torch.add.2", "torch.add", [[5], [5]]),
        case("torch.mul.1", "torch.mul", [[3], [3]]),
        case("torch.mul.10", "torch.mul", [[6], [6]]),
    ])
    write_manifest(d / "granite.yaml", "granite", [
        case("torch.mul.1", "torch.mul", [[2], [2]]),
        case("torch.neg.1", "torch.neg", [[7]]),
    ])
    return d


# ---- selection by id ---------------------------------------------------------------------------------------------


def test_positional_ids_select_like_pytest_node_ids(tmp_path):
    d = two_models(tmp_path / "m")
    one = opcheck("run", "--manifests", d, "--device", "cpu", "gpt_oss::torch.add.2", "--metrics-json",
                  tmp_path / "one.json", "--artifact-dir", tmp_path / "a1")
    assert one.rc == 0, one
    assert one.last_line.startswith("1 passed in "), one
    assert [c["id"] for c in json.loads((tmp_path / "one.json").read_text())["cases"]] == ["gpt_oss::torch.add.2"]

    # Globs in either part, repeatable, in file order.
    r = opcheck("list-cases", "--manifests", d, "gpt_oss::torch.add.*", "*::torch.mul.1")
    assert r.rc == 0, r
    assert selected_ids(r) == ["gpt_oss::torch.add.1", "gpt_oss::torch.add.2", "gpt_oss::torch.mul.1",
                               "granite::torch.mul.1"], r
    # The model part is spelled as --model takes it: case-insensitive, '-' and '_' alike.
    r = opcheck("list-cases", "--manifests", d, "GPT-OSS::torch.mul.10")
    assert r.rc == 0 and selected_ids(r) == ["gpt_oss::torch.mul.10"], r
    # Ids narrow what --model chose.
    r = opcheck("list-cases", "--manifests", d, "--model", "granite", "*::torch.mul.1")
    assert r.rc == 0 and selected_ids(r) == ["granite::torch.mul.1"], r


def test_deselect_leaves_out_cases_by_id(tmp_path):
    d = two_models(tmp_path / "m")
    r = opcheck("list-cases", "--manifests", d, "--deselect", "gpt_oss::torch.mul.*", "--deselect", "granite::*.1")
    assert r.rc == 0, r
    assert selected_ids(r) == ["gpt_oss::torch.add.1", "gpt_oss::torch.add.2"], r
    run = opcheck("run", "--manifests", d, "--device", "cpu", "gpt_oss::*", "--deselect", "gpt-oss::torch.add.1",
                  "--metrics-json", tmp_path / "r.json", "--artifact-dir", tmp_path / "a")
    assert run.rc == 0, run
    assert run.last_line.startswith("3 passed, 1 deselected in "), run
    assert json.loads((tmp_path / "r.json").read_text())["run"]["deselected"] == 1


def test_an_id_that_matches_nothing_is_a_usage_error_with_did_you_mean(tmp_path):
    d = two_models(tmp_path / "m")
    r = opcheck("run", "--manifests", d, "--device", "cpu", "gpt_oss::torch.add.3", "--artifact-dir", tmp_path / "a")
    assert r.rc == 4, r
    assert "case id 'gpt_oss::torch.add.3' matches no selected case" in r.err, r
    assert "did you mean gpt_oss::torch.add.1" in r.err or "did you mean gpt_oss::torch.add.2" in r.err, r
    assert "Fix:" in r.err, r
    r = opcheck("list-cases", "--manifests", d, "--deselect", "granite::torch.neg.2")
    assert r.rc == 4 and "--deselect 'granite::torch.neg.2' matches no selected case" in r.err, r
    assert "did you mean granite::torch.neg.1" in r.err, r
    # A bare case name is not an id; the ids that end in it are suggested.
    r = opcheck("list-cases", "--manifests", d, "torch.neg.1")
    assert r.rc == 4 and "case id 'torch.neg.1' is not MODEL::CASE (did you mean granite::torch.neg.1?)" in r.err, r


def test_repro_prints_a_command_that_runs_the_case_by_its_id(tmp_path):
    d = two_models(tmp_path / "m")
    r = opcheck("repro", "--manifests", d, "gpt-oss::torch.mul.1")
    assert r.rc == 0, r
    command = r.last_line
    assert " -k " not in command and "# note" not in r.out, r
    words = shlex.split(command)
    assert "gpt_oss::torch.mul.1" in words, command
    run = opcheck(*words[1:], "--metrics-json", tmp_path / "r.json", "--artifact-dir", tmp_path / "a")
    assert run.rc == 0, run
    assert [c["id"] for c in json.loads((tmp_path / "r.json").read_text())["cases"]] == ["gpt_oss::torch.mul.1"]


def test_repro_of_a_name_with_glob_characters_selects_that_case_alone(tmp_path):
    d = tmp_path / "m"
    d.mkdir()
    write_manifest(d / "g.yaml", "g", [case("add[1]", "torch.add", [[2], [2]]), case("add1", "torch.add", [[3], [3]])])
    r = opcheck("repro", "--manifests", d, "g::add[1]", "--device", "cpu")
    assert r.rc == 0 and "# note" not in r.out, r
    words = shlex.split(r.last_line)
    run = opcheck(*words[1:], "--metrics-json", tmp_path / "r.json", "--artifact-dir", tmp_path / "a")
    assert run.rc == 0, run
    assert [c["id"] for c in json.loads((tmp_path / "r.json").read_text())["cases"]] == ["g::add[1]"]


def test_the_template_header_commands_run(tmp_path):
    header = (SOURCE_DIR / "manifests" / "template.yaml").read_text().splitlines()[:4]
    commands = [c for l in header for c in re.findall(r"`opcheck ([^`]+)`", l)]
    assert len(commands) >= 2, header  # by --model and by id
    for command in commands:
        t = opcheck(*shlex.split(command), "--device", "cpu", "--artifact-dir", tmp_path / "a", cwd=tmp_path)
        assert t.rc == 0, (command, t)
        assert re.match(r"\d+ passed in ", t.last_line), (command, t)


# ---- validate --ops ------------------------------------------------------------------------------------------------


def bad_ops(path):
    return write_manifest(path, "typos", [
        case("layernorm.1", "torch.nn.functional.layernorm", [[2, 4]], ["attrs: {normalized_shape: [4]}"]),
        case("sum.1", "torch.sum", [[2, 4]], ["attrs: {dimm: 1}"]),
        case("matmul.1", "torch.matmul", [[2, 2], [2, 2], [2, 2]]),
        case("add.1", "torch.add", [[4], [4]]),
    ])


def test_validate_ops_finds_wrong_op_names_and_arguments(tmp_path):
    m = bad_ops(tmp_path / "typos.yaml")
    plain = opcheck("validate", m)
    assert plain.rc == 0 and "0 errors" in plain.last_line, plain  # the spelling of the file is fine
    r = opcheck("validate", "--ops", m)
    assert r.rc == 2, r
    assert r.last_line == "1 manifest, 4 cases (ops resolved and bound): 3 errors, 0 warnings", r
    # One block per error: its first line is located, the case id ends its message, a Fix: line follows.
    errors = re.split(r"\n(?=\S+: error: )", r.err.strip())
    assert len(errors) == 3, r
    expect = {
        "layernorm.1": "layer_norm",  # did-you-mean
        "sum.1": "dimm",
        "matmul.1": "matmul",
    }
    for name, word in expect.items():
        [block] = [b for b in errors if f"[case typos::{name}]" in b]
        assert block.startswith(f"{m}:{line_of(m, 'name: ' + name)}:"), block
        assert word in block and "\n  Fix: " in block, block
    assert "did you mean torch.nn.functional.layer_norm" in r.err, r
    assert "unexpected keyword argument 'dimm' (did you mean dim?)" in r.err, r
    assert "takes 2 positional arguments but 3 were given" in r.err, r
    # Each kind of error its own Fix, by the kind the exec layer gives it (unknown_op, arguments_do_not_bind).
    fixes = {name: next(b for b in errors if f"[case typos::{name}]" in b).split("\n  Fix: ", 1)[1] for name in expect}
    assert fixes["layernorm.1"].startswith("write the op as PyTorch names it"), fixes
    assert fixes["sum.1"].startswith("give the case the arguments one of the op's overloads takes"), fixes
    assert fixes["matmul.1"].startswith("give the case the arguments one of the op's overloads takes"), fixes


def test_validate_ops_passes_a_good_manifest(tmp_path):
    good = write_manifest(tmp_path / "good.yaml", "good", [case("add.1", "torch.add", [[4], [4]]),
                                                             case("silu.1", "torch.nn.functional.silu", [[3]])])
    r = opcheck("validate", "--ops", good)
    assert r.rc == 0 and r.last_line.endswith(": 0 errors, 0 warnings"), r


def test_run_locates_its_invalid_cases(tmp_path):
    """What validate --ops finds, a run reports as INVALID_CASE errors whose message points at the case."""
    m = bad_ops(tmp_path / "typos.yaml")
    run = opcheck("run", "--manifests", m, "--device", "cpu", "--metrics-json", tmp_path / "r.json",
                  "--artifact-dir", tmp_path / "a")
    assert run.rc == 1, run
    cases = {c["id"]: c for c in json.loads((tmp_path / "r.json").read_text())["cases"]}
    for name in ("layernorm.1", "sum.1", "matmul.1"):
        c = cases[f"typos::{name}"]
        assert c["stage"] == "INVALID_CASE", c
        assert c["message"].startswith(f"{m}:{line_of(m, 'name: ' + name)}: "), c
    # The kind the exec layer gave each, through the worker and into the metrics; a case that ran has none.
    assert {n: cases[f"typos::{n}"].get("verdict_kind") for n in ("layernorm.1", "sum.1", "matmul.1", "add.1")} == {
        "layernorm.1": "unknown_op", "sum.1": "arguments_do_not_bind", "matmul.1": "arguments_do_not_bind",
        "add.1": None}, cases


def test_validate_ops_without_ops_rejects_device_import(tmp_path):
    good = write_manifest(tmp_path / "good.yaml", "good", [case("add.1", "torch.add", [[4], [4]])])
    r = opcheck("validate", "--device-import", "opcheck_pyloop", good)
    assert r.rc == 4 and "--device-import is used by --ops only" in r.err, r


# ---- resume and the results cache: one identity ------------------------------------------------------------------


def exp_cases(n):
    return [case(f"exp.{i}", "torch.exp", [[4 + i]]) for i in range(n)]


FAULT = {"OPCHECK_LOOPBACK_FAULTS": "aten::exp=bias:1e-2"}


def test_resume_refuses_a_journal_written_with_other_fault_settings(tmp_path):
    m = write_manifest(tmp_path / "f.yaml", "f", exp_cases(3))
    art = tmp_path / "art"
    first = opcheck("run", "--manifests", m, "--device", "loopback", "--artifact-dir", art, env=FAULT)
    assert first.rc == 1, first
    again = opcheck("run", "--manifests", m, "--device", "loopback", "--resume", "--artifact-dir", art)
    assert again.rc == 4, again
    assert "written by a different run" in again.err, again
    assert "fault settings: 'OPCHECK_LOOPBACK_FAULTS=aten::exp=bias:1e-2' -> none" in again.err, again
    assert "without --resume" in again.err and "--artifact-dir" in again.err, again
    # The run: a faulty loopback journal resumed on the cpu says both what changed.
    cpu = opcheck("run", "--manifests", m, "--device", "cpu", "--resume", "--artifact-dir", art)
    assert cpu.rc == 4 and "  device: 'privateuseone:0' -> 'cpu'" in cpu.err and "fault settings" in cpu.err, cpu


def test_resume_refuses_a_journal_written_under_another_status_config(tmp_path):
    m = write_manifest(tmp_path / "f.yaml", "f", exp_cases(2))
    config = tmp_path / "c.yaml"
    config.write_text('rules:\n  - id: "f::exp.0"\n    atol: 1.0e-3\n')
    art = tmp_path / "art"
    first = opcheck("run", "--manifests", m, "--device", "cpu", "--config", config, "--artifact-dir", art)
    assert first.rc == 0, first
    same = opcheck("run", "--manifests", m, "--device", "cpu", "--config", config, "--resume", "--artifact-dir", art)
    assert same.rc == 0 and "2 results reused" in same.err, same
    config.write_text('rules:\n  - id: "f::exp.0"\n    atol: 1.0\n')
    other = opcheck("run", "--manifests", m, "--device", "cpu", "--config", config, "--resume", "--artifact-dir", art)
    assert other.rc == 4 and "status config digest:" in other.err, other


@pytest.mark.parametrize("flag,value,part", [
    ("--repeat", "1", "repeat: none -> '1'"),
    ("--reference-dtype", "float64", "reference dtype: none -> 'float64'"),
    ("--timeout", "77", "timeout: none -> '77'"),
    ("--max-case-bytes", "1000000", "max case bytes: none -> '1000000'"),
])
def test_resume_refuses_a_journal_written_under_another_verdict_setting(tmp_path, flag, value, part):
    m = write_manifest(tmp_path / "f.yaml", "f", exp_cases(2))
    art = tmp_path / "art"
    first = opcheck("run", "--manifests", m, "--device", "loopback", "--artifact-dir", art)
    assert first.rc == 0, first
    again = opcheck("run", "--manifests", m, "--device", "loopback", flag, value, "--resume", "--artifact-dir", art)
    assert again.rc == 4, again
    assert "written by a different run" in again.err and part in again.err, again
    # The same setting on both sides resumes.
    fresh = tmp_path / "art2"
    assert opcheck("run", "--manifests", m, "--device", "loopback", flag, value, "--artifact-dir", fresh).rc == 0
    same = opcheck("run", "--manifests", m, "--device", "loopback", flag, value, "--resume", "--artifact-dir", fresh)
    assert same.rc == 0 and "2 results reused" in same.err, same


def test_the_rerun_line_carries_the_settings_that_decide_a_verdict(tmp_path):
    m = write_manifest(tmp_path / "f.yaml", "f", exp_cases(1))
    r = opcheck("run", "--manifests", m, "--device", "loopback", "--repeat", "3", "--reference-dtype", "float64",
                "--timeout", "50", "--artifact-dir", tmp_path / "art", env=FAULT)
    assert r.rc == 1, r
    rerun = [l for l in r.out.splitlines() if "repro f::exp.0" in l]
    assert rerun, r
    line = rerun[0]
    assert "OPCHECK_LOOPBACK_FAULTS=" in line, line
    for words in ("--device loopback", "--reference-dtype float64", "--repeat 3", "--timeout 50"):
        assert words in line, line
    # repro prints a run command with the same settings.
    words = shlex.split(line[line.index("OPCHECK_LOOPBACK_FAULTS="):])
    assert words[0].startswith("OPCHECK_LOOPBACK_FAULTS=") and words[2] == "repro", words
    printed = opcheck(*words[2:], env=FAULT)
    assert printed.rc == 0, printed
    for words in ("--device loopback", "--reference-dtype float64", "--repeat 3", "--timeout 50"):
        assert words in printed.out, printed


def test_a_resumed_expected_failure_is_explained_once(tmp_path):
    m = write_manifest(tmp_path / "f.yaml", "f", [case("exp.0", "torch.exp", [[4]],
                                                       ['xfail_if: {expr: "True", reason: exp is known wrong}'])])
    art = tmp_path / "art"
    first = opcheck("run", "--manifests", m, "--device", "loopback", "--artifact-dir", art, env=FAULT)
    assert first.rc == 0, first
    again = opcheck("run", "--manifests", m, "--device", "loopback", "--resume", "--artifact-dir", art,
                    "--metrics-json", tmp_path / "m.json", env=FAULT)
    assert again.rc == 0 and "1 results reused" in again.err, again
    message = json.loads((tmp_path / "m.json").read_text())["cases"][0]["message"]
    assert message.startswith("expected failure: exp is known wrong\n"), message
    assert message.count("expected failure:") == 1, message


def test_results_cache_checks_the_same_identity_as_resume(tmp_path):
    m = write_manifest(tmp_path / "f.yaml", "f", exp_cases(3))
    cache = tmp_path / "cache.jsonl"
    faulty = opcheck("run", "--manifests", m, "--device", "loopback", "--results-cache", cache, "--artifact-dir",
                     tmp_path / "a", env=FAULT)
    assert faulty.rc == 1, faulty
    clean = opcheck("run", "--manifests", m, "--device", "loopback", "--results-cache", cache, "--reuse-results",
                    "--artifact-dir", tmp_path / "b")
    assert clean.rc == 0, clean  # the faulty verdicts are not served to a run without the fault
    assert "unchanged cases served" not in clean.err, clean
    assert "fault settings: 'OPCHECK_LOOPBACK_FAULTS=aten::exp=bias:1e-2' -> none" in clean.err, clean
    served = opcheck("run", "--manifests", m, "--device", "loopback", "--results-cache", cache, "--reuse-results",
                     "--artifact-dir", tmp_path / "c")
    assert served.rc == 0 and "3 unchanged cases served" in served.err, served


def test_a_resumed_run_appends_only_new_results(tmp_path):
    m = write_manifest(tmp_path / "f.yaml", "f", exp_cases(3))
    art = tmp_path / "art"
    journal = art / "journal.jsonl"
    first = opcheck("run", "--manifests", m, "--device", "cpu", "--artifact-dir", art)
    assert first.rc == 0, first
    assert len(journal.read_text().splitlines()) == 4  # header + 3 results
    for _ in range(3):
        r = opcheck("run", "--manifests", m, "--device", "cpu", "--resume", "--artifact-dir", art,
                    "--metrics-json", tmp_path / "r.json")
        assert r.rc == 0 and "3 results reused" in r.err, r
        assert r.last_line.startswith("3 passed in "), r
    assert len(journal.read_text().splitlines()) == 4, journal.read_text()
    # Two new cases: only their results are added.
    write_manifest(m, "f", exp_cases(5))
    r = opcheck("run", "--manifests", m, "--device", "cpu", "--resume", "--artifact-dir", art)
    assert r.rc == 0 and r.last_line.startswith("5 passed in "), r
    lines = journal.read_text().splitlines()
    assert len(lines) == 6, lines
    assert [json.loads(l)["id"] for l in lines[4:]] == ["f::exp.3", "f::exp.4"]
