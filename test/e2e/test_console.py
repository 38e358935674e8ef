"""What a person at the console sees, through the real binary: the failures section and pytest's -r short summary,
--tb, the pytest habits (--lf, did-you-mean, mark warnings), fault injection into the overloads opcheck reports, and
the smaller console defects."""
import json
import os
import re
import shlex
import subprocess
import xml.etree.ElementTree as ET

import pytest

from conftest import opcheck, opcheck_on_a_terminal, write_manifest


def case(name, op, inputs, extra=()):
    lines = [f"  - name: {name}", f"    op: {op}", "    inputs:"]
    lines += [f"      - {i}" for i in inputs]
    return lines + [f"    {e}" for e in extra]


def tensor(*shape):
    return f"tensor: {{shape: {list(shape)}}}"


def line_of(path, text):
    return next(n for n, l in enumerate(path.read_text().splitlines(), 1) if text in l)


def section(out, title):
    """The lines of the section titled `title`, up to the next rule line."""
    lines = out.splitlines()
    start = lines.index(rule(title))
    end = next((i for i in range(start + 1, len(lines)) if re.fullmatch(r"=+ .* =+", lines[i])), len(lines))
    return lines[start + 1:end]


def rule(title, sep="=", width=80):
    """pytest's rule line: the title centred in `sep` characters."""
    n = max((width - len(title) - 2) // 2, 1)
    line = f"{sep * n} {title} {sep * n}"
    return line + sep if len(line) + 1 <= width else line


SUMMARY_WORDS = ("FAILED ", "ERROR ", "SKIPPED ", "XFAIL ", "XPASS ", "PASSED ")


def short_summary(out):
    """The lines of pytest's short test summary (between its rule line and the summary line)."""
    lines = out.splitlines()
    if rule("short test summary info") not in lines:
        return []
    start = lines.index(rule("short test summary info"))
    return [l for l in lines[start + 1:] if l.startswith(SUMMARY_WORDS)]


ADD_BIAS = {"OPCHECK_LOOPBACK_FAULTS": "aten::add.Tensor=bias:1e-2;aten::mul_.Tensor=bias:1e-2"}


@pytest.fixture(scope="module")
def failing_run(tmp_path_factory):
    """A loopback run with a wrong add, an in-place mul (the mutated argument is wrong), a softmax called with an
    argument no overload takes, a call deduplicated from the failing add, and two passing cases."""
    d = tmp_path_factory.mktemp("console")
    m = write_manifest(d / "mine.yaml", "mine", [
        case("add.1", "torch.add", [tensor(4, 3), tensor(4, 3)]),
        case("mul_inplace", "torch.Tensor.mul_", [tensor(8), tensor(8)]),
        case("softmax.bad", "torch.softmax", [tensor(4, 5)], ["attrs: {dimm: 1}"]),
        case("add.again", "torch.add", [tensor(4, 3), tensor(4, 3)]),
        case("neg.1", "torch.neg", [tensor(4)]),
        case("abs.1", "torch.abs", [tensor(3)]),
    ])
    r = opcheck("run", "--manifests", m, "--device", "loopback", "-j", "1", "--metrics-json", d / "m.json",
                "--artifact-dir", d / "art", env=ADD_BIAS)
    return d, m, r


def entry(lines, case_id):
    """One entry of a failures section: the lines after its title, up to the next title."""
    start = lines.index(rule(case_id, "_"))
    end = next((i for i in range(start + 1, len(lines)) if re.fullmatch(r"_+ \S+ _+", lines[i])), len(lines))
    return "\n".join(lines[start + 1:end])


def test_failures_section_shows_location_overload_figures_and_repro(failing_run):
    d, m, r = failing_run
    assert r.rc == 1, r
    failures = section(r.out, "FAILURES")
    errors = section(r.out, "ERRORS")
    # One entry per occurrence that fails the run, titled with its id as pytest titles a test; errors first.
    assert [l for l in failures if l.startswith("_")] == [rule(i, "_") for i in
                                                         ["mine::add.1", "mine::mul_inplace", "mine::add.again"]], r.out
    assert [l for l in errors if l.startswith("_")] == [rule("mine::softmax.bad", "_")], r.out
    assert r.out.index(rule("ERRORS")) < r.out.index(rule("FAILURES")), r.out
    add = entry(failures, "mine::add.1")
    # The case's file:line, the op and the overload it resolved to, the stage and dtype.
    assert f"{m}:{line_of(m, 'name: add.1')}: torch.add -> aten::add.Tensor [INCORRECT_RESULT] fp32" in add, add
    # The figures: mismatched elements, greatest differences and what was allowed.
    assert "Mismatched elements: 12 / 12 (100.0%)" in add, add
    assert re.search(r"Greatest absolute difference: 0\.0\d+ at index \(\d+, \d+\) \(up to 1e-05 allowed\)", add), add
    assert re.search(r"Greatest relative difference: .* \(up to 1\.3e-06 allowed\)", add), add
    # The mutated argument of the in-place mul is named.
    inplace = entry(failures, "mine::mul_inplace")
    assert "torch.Tensor.mul_ -> aten::mul_.Tensor [INCORRECT_RESULT]" in inplace and "mutated argument (" in inplace, \
        inplace
    # The binding error keeps the per-overload reasons after its colon, in the section and in the short summary.
    softmax = entry(errors, "mine::softmax.bad")
    assert "do not bind to any overload of aten::softmax:\n  aten::softmax.int: got an unexpected keyword argument " \
           "'dimm'" in softmax, softmax
    [bind] = [l for l in short_summary(r.out) if "mine::softmax.bad" in l]
    assert re.search(r"aten::softmax: aten::softmax\.int: got an unexpected keyword argument 'dimm'", bind), bind
    # A deduplicated occurrence points at the one shown instead of repeating it.
    assert "the same call as mine::add.1: its failure is shown above" in entry(failures, "mine::add.again")
    # The repro command reruns the case: it names the case, the run's manifests, device and device faults, and works.
    [rerun] = [l for l in add.splitlines() if l.startswith("rerun: ")]
    words = shlex.split(rerun[len("rerun: "):])
    assert words[0] == "OPCHECK_LOOPBACK_FAULTS=" + ADD_BIAS["OPCHECK_LOOPBACK_FAULTS"], words
    words = words[1:]
    assert words[1:3] == ["repro", "mine::add.1"] and words[3:5] == ["--manifests", str(m)], words
    assert words[-2:] == ["--device", "loopback"], words
    rp = subprocess.run(["sh", "-c", rerun[len("rerun: "):]], capture_output=True, text=True)
    assert rp.returncode == 0 and "mine::add.1" in rp.stdout and "run --manifests" in rp.stdout, (rp.stdout, rp.stderr)
    # What it prints, run as printed (in a shell without the fault setting), fails the way the run did.
    [command] = [l for l in rp.stdout.splitlines() if not l.startswith("#")]
    assert command.startswith("OPCHECK_LOOPBACK_FAULTS="), command
    env = {k: v for k, v in os.environ.items() if k != "OPCHECK_LOOPBACK_FAULTS"}
    again = subprocess.run(["sh", "-c", command + " --artifact-dir " + shlex.quote(str(d / "rerun"))],
                           capture_output=True, text=True, env=env)
    assert again.returncode == 1 and "FAILED mine::add.1 [INCORRECT_RESULT]" in again.stdout, (again.stdout,
                                                                                                again.stderr)


def test_short_summary_is_pytests_fE_by_default_and_last_before_the_summary_line(failing_run):
    _, _, r = failing_run
    lines = [l for l in r.out.splitlines() if l.strip()]
    summary = short_summary(r.out)
    assert lines[-len(summary) - 2:-1] == [rule("short test summary info")] + summary, r.out
    assert [l.split()[:2] for l in summary] == [["FAILED", "mine::add.1"], ["FAILED", "mine::mul_inplace"],
                                               ["FAILED", "mine::add.again"], ["ERROR", "mine::softmax.bad"]], summary
    assert summary[0] == "FAILED mine::add.1 [INCORRECT_RESULT] - output: Tensor-likes are not close!", summary
    assert summary[2].endswith("(same as mine::add.1)"), summary
    assert re.fullmatch(r"3 failed, 2 passed, 1 error in \d+\.\d\ds", lines[-1]), lines[-1]
    # The failures section comes before the short summary, as in pytest.
    assert r.out.index(rule("FAILURES")) < r.out.index(rule("short test summary info"))


@pytest.mark.parametrize("flags, words", [
    (["-rA"], ["PASSED", "PASSED", "ERROR", "FAILED", "FAILED", "FAILED"]),
    (["-rp"], ["PASSED", "PASSED"]),
    (["-ra"], ["ERROR", "FAILED", "FAILED", "FAILED"]),
    (["-rfEN"], []),
    (["-r", "Ef"], ["ERROR", "FAILED", "FAILED", "FAILED"]),
])
def test_report_chars_choose_the_short_summary_lines(failing_run, tmp_path, flags, words):
    d, m, _ = failing_run
    r = opcheck("run", "--manifests", m, "--device", "loopback", "-j", "1", "--tb=no", *flags, "--artifact-dir",
                tmp_path / "a", env=ADD_BIAS)
    assert r.rc == 1, r
    assert rule("FAILURES") not in r.out and rule("ERRORS") not in r.out, r
    assert [l.split()[0] for l in short_summary(r.out)] == words, r.out
    if not words:
        assert "short test summary info" not in r.out, r


def test_report_chars_for_skips_and_expected_failures(tmp_path):
    m = write_manifest(tmp_path / "s.yaml", "s", [
        case("neg.skip", "torch.neg", [tensor(4)], ["skip_if: {expr: \"op == 'torch.neg'\", reason: not on this device}"]),
        case("add.xfail", "torch.add", [tensor(4), tensor(4)], ["xfail_if: {expr: \"op == 'torch.add'\", reason: known add bug}"]),
        case("abs.1", "torch.abs", [tensor(3)]),
    ])
    r = opcheck("run", "--manifests", m, "--device", "loopback", "-rsxp", "--artifact-dir", tmp_path / "a", env=ADD_BIAS)
    assert r.rc == 0, r
    assert short_summary(r.out) == [
        "SKIPPED s::neg.skip - not on this device", "XFAIL s::add.xfail - expected failure: known add bug", "PASSED s::abs.1"], r.out


def test_tb_long_shows_everything_and_tb_short_cuts_long_messages(tmp_path):
    # An op with no CPU kernel: the reference fails with the dispatcher's account of every backend (~50 lines).
    m = write_manifest(tmp_path / "g.yaml", "g", [case("grid.1", "aten.cudnn_grid_sampler.default",
                                                       [tensor(1, 1, 4, 4), tensor(1, 4, 4, 2)])])
    long = opcheck("run", "--manifests", m, "--device", "loopback", "--tb=long", "--artifact-dir", tmp_path / "a")
    short = opcheck("run", "--manifests", m, "--device", "loopback", "--artifact-dir", tmp_path / "b")
    assert long.rc == 1 and short.rc == 1, (long, short)
    long_entry = section(long.out, "ERRORS")
    short_entry = section(short.out, "ERRORS")
    assert any(l.startswith("times: materialize ") for l in long_entry), long.out
    assert any(re.match(r"dedupe key: k[0-9]+:", l) for l in long_entry), long.out
    assert not any(l.startswith(("times: ", "dedupe key: ")) for l in short_entry), short.out
    assert any(l.startswith("AutogradPrivateUse1: ") for l in long_entry), long.out  # the end of the account
    more = [l for l in short_entry if l.startswith("... ")]
    assert len(more) == 1 and re.fullmatch(r"\.\.\. \d+ more lines \(--tb=long shows them\)", more[0]), short.out
    assert short_entry[2].startswith("call: aten.cudnn_grid_sampler.default(fp32[1,1,4,4], fp32[1,4,4,2])"), short.out
    shown = short_entry.index(more[0]) - 3  # less the title, the location line and the call line
    assert shown == 15, short.out
    # The short summary line is cut, the section has the message whole.
    [line] = short_summary(short.out)
    assert line.startswith("ERROR g::grid.1 [FAILED_REFERENCE] - the CPU reference raised NotImplementedError") and \
        line.endswith(" ...") and len(line) < 500, line
    no = opcheck("run", "--manifests", m, "--device", "loopback", "--tb=no", "--artifact-dir", tmp_path / "c")
    assert no.rc == 1 and rule("ERRORS") not in no.out and short_summary(no.out)[0].startswith("ERROR g::grid.1"), no


def test_bad_tb_and_report_chars_are_usage_errors(tmp_path):
    tb = opcheck("run", "--tb=medium", "--artifact-dir", tmp_path / "a")
    assert tb.rc == 4 and "--tb" in tb.err and "medium" in tb.err, tb
    rc = opcheck("run", "-rZ", "--artifact-dir", tmp_path / "a")
    assert rc.rc == 4 and "unknown report char 'Z'" in rc.err and "Fix:" in rc.err, rc


def test_load_errors_are_listed_in_the_errors_section(tmp_path):
    m = write_manifest(tmp_path / "l.yaml", "l", [case("listed_op", "[torch.add, torch.sub]", [tensor(2)]),
                                                  case("abs.1", "torch.abs", [tensor(3)])])
    r = opcheck("run", "--manifests", m, "--device", "cpu", "--artifact-dir", tmp_path / "a")
    assert r.rc == 2, r
    errors = "\n".join(section(r.out, "ERRORS"))
    assert rule("l::listed_op", "_") in errors and f"{m}:{line_of(m, 'op: [torch.add')}: [INVALID_CASE]" in errors, r.out
    assert "rerun:" not in errors, r.out  # a case that does not load has nothing to rerun
    assert any(l.startswith("ERROR l::listed_op [INVALID_CASE]") for l in short_summary(r.out)), r.out


# ---------------------------------------------------------------- pytest habits


def test_lf_is_last_failed(tmp_path):
    m = write_manifest(tmp_path / "p.yaml", "p", [case("add.1", "torch.add", [tensor(4), tensor(4)]),
                                                  case("abs.1", "torch.abs", [tensor(3)])])
    art = tmp_path / "a"
    first = opcheck("run", "--manifests", m, "--device", "loopback", "--artifact-dir", art, env=ADD_BIAS)
    assert first.rc == 1, first
    lf = opcheck("run", "--manifests", m, "--device", "loopback", "--lf", "--artifact-dir", art, env=ADD_BIAS)
    assert lf.rc == 1 and re.fullmatch(r"1 failed in .*", lf.last_line), lf
    # Nothing failed: pytest's "no previously failed tests": everything selected runs.
    fixed = opcheck("run", "--manifests", m, "--device", "loopback", "--artifact-dir", art)
    assert fixed.rc == 0
    again = opcheck("run", "--manifests", m, "--device", "loopback", "--lf", "--artifact-dir", art)
    assert again.rc == 0 and again.last_line.startswith("2 passed"), again
    assert "nothing failed in the previous run" in again.err, again


@pytest.mark.parametrize("args, wrong, meant", [
    (["run", "--deadlin", "1h"], "--deadlin", "--deadline"),
    (["run", "--last-faild"], "--last-faild", "--last-failed"),
    (["list-cases", "--modle", "x"], "--modle", "--model"),
    (["validate", "--strict-marker"], "--strict-marker", "--strict-markers"),
    (["list-models", "--manifest", "x"], "--manifest", "--manifests"),
    (["merge", "a.json", "--junit-xm", "o.xml"], "--junit-xm", "--junit-xml"),
    (["report", "a.json", "--histroy", "d"], "--histroy", "--history"),
    (["repro", "x::y", "--pyhton"], "--pyhton", "--python"),
    (["import-traces", "x", "--ouptut", "d"], "--ouptut", "--output"),
])
def test_unknown_flags_get_a_did_you_mean_in_every_subcommand(args, wrong, meant):
    r = opcheck(*args)
    assert r.rc == 4, r
    assert f"opcheck: {wrong}: did you mean {meant}?" in r.err, r


def test_unknown_mark_in_m_warns_naming_it_and_validate_says_the_same(tmp_path):
    m = write_manifest(tmp_path / "k.yaml", "k", [case("abs.1", "torch.abs", [tensor(3)], ["marks: [constant]"])])
    r = opcheck("list-cases", "--manifests", m, "-m", "not constnt")
    assert r.rc == 0, r
    [warning] = [l for l in r.err.splitlines() if "warning:" in l]
    assert "-m names mark 'constnt', which no case has and no registry declares (did you mean constant?)" in warning, r
    assert "`opcheck validate` lists them" not in r.err, r  # the warning itself is shown, not a pointer
    assert "opcheck validate -m EXPR" in r.err, r
    v = opcheck("validate", m, "-m", "not constnt")
    assert v.rc == 0 and warning in v.err, v
    run = opcheck("run", "--manifests", m, "--device", "cpu", "-m", "not constnt", "--artifact-dir", tmp_path / "a")
    assert run.rc == 0 and warning in run.err, run


def test_unregistered_mark_warns_once_per_mark(tmp_path):
    cases = [case(f"abs.{i}", "torch.abs", [tensor(3)], ["marks: [unregistered_here, constant]"]) for i in range(4)]
    m = write_manifest(tmp_path / "u.yaml", "u", cases)
    v = opcheck("validate", m)
    assert v.rc == 0, v
    warnings = [l for l in v.err.splitlines() if "warning:" in l]
    assert len(warnings) == 1, v
    assert warnings[0].startswith(f"{m}:{line_of(m, 'name: abs.0')}:5: warning: mark 'unregistered_here' is not "
                                  "registered in markers.yaml; 4 cases use it, the first here [case u::abs.0]"), warnings
    assert "--strict-markers makes this an error" in v.err, v
    assert v.last_line.endswith(": 0 errors, 1 warning"), v
    # run: counted once on the console, listed once in the reports, and the cases still run.
    r = opcheck("run", "--manifests", m, "--device", "cpu", "--metrics-json", tmp_path / "r.json", "--artifact-dir",
                tmp_path / "a")
    assert r.rc == 0 and r.last_line.startswith("4 passed"), r
    assert "1 warning about the manifests; `opcheck validate` lists them" in r.err, r
    listed = [w for w in json.loads((tmp_path / "r.json").read_text())["run"]["warnings"] if "unregistered_here" in w]
    assert len(listed) == 1, listed


# ---------------------------------------------------------------- fault injection


SOFTMAX = [case("softmax.1", "torch.softmax", [tensor(4, 5)], ["attrs: {dim: 1}"]),
           case("abs.1", "torch.abs", [tensor(3)])]


@pytest.mark.parametrize("fault", ["aten::softmax.int", "aten::softmax"])
def test_a_fault_on_the_overload_opcheck_reports_is_injected(tmp_path, fault):
    m = write_manifest(tmp_path / "f.yaml", "f", SOFTMAX)
    r = opcheck("run", "--manifests", m, "--device", "loopback", "--metrics-json", tmp_path / "r.json",
                "--artifact-dir", tmp_path / "a", env={"OPCHECK_LOOPBACK_FAULTS": f"{fault}=bias:1e-2"})
    assert r.rc == 1, r
    cases = {c["id"]: c for c in json.loads((tmp_path / "r.json").read_text())["cases"]}
    sm = cases["f::softmax.1"]
    assert sm["stage"] == "INCORRECT_RESULT" and sm["resolved_op"] == "aten::softmax.int", sm
    assert cases["f::abs.1"]["outcome"] == "passed"


def test_an_unknown_op_in_the_fault_spec_is_a_clear_error(tmp_path):
    m = write_manifest(tmp_path / "f.yaml", "f", SOFTMAX)
    r = opcheck("run", "--manifests", m, "--device", "loopback", "--artifact-dir", tmp_path / "a",
                env={"OPCHECK_LOOPBACK_FAULTS": "aten::sofmax.int=bias:1e-2"})
    assert r.rc == 4, r
    assert "unknown operator 'aten::sofmax.int' (did you mean aten::softmax" in r.err and "Fix:" in r.err, r
    assert len(r.err) < 2000, r
    overload = opcheck("run", "--manifests", m, "--device", "loopback", "--artifact-dir", tmp_path / "b",
                       env={"OPCHECK_LOOPBACK_FAULTS": "aten::softmax.intt=bias:1e-2"})
    assert overload.rc == 4 and "aten::softmax has overloads " in overload.err and "int" in overload.err, overload


def test_a_mistyped_fault_under_the_default_device_names_the_loopback_that_did_not_start(tmp_path):
    # No --device: `auto` chose the loopback, and the error record says which device failed, not "auto".
    m = write_manifest(tmp_path / "f.yaml", "f", SOFTMAX)
    r = opcheck("run", "--manifests", m, "--artifact-dir", tmp_path / "a", "--metrics-json", tmp_path / "r.json",
                env={"OPCHECK_LOOPBACK_FAULTS": "aten::sofmax.int=bias:1e-2"})
    assert r.rc == 4, r
    assert "ERROR device::loopback [FAILED_SETUP] - the device loopback did not start" in r.out, r
    assert "device::auto" not in r.out + r.err, r
    assert [c["id"] for c in json.loads((tmp_path / "r.json").read_text())["cases"]][0] == "device::loopback"


def test_a_device_that_does_not_start_lists_every_case_as_not_run_in_every_report(tmp_path):
    # The cases did not choose to skip: the device never started. Console, metrics and JUnit all say "not run".
    m = write_manifest(tmp_path / "f.yaml", "f", SOFTMAX)
    r = opcheck("run", "--manifests", m, "--device", "loopback", "--artifact-dir", tmp_path / "a",
                "--metrics-json", tmp_path / "r.json", "--junit-xml", tmp_path / "r.xml",
                env={"OPCHECK_LOOPBACK_FAULTS": "aten::sofmax.int=bias:1e-2"})
    assert r.rc == 4, r
    assert r.out.splitlines()[-1].startswith("1 error, 2 not run (the device did not start) in "), r
    assert "skipped" not in r.out.splitlines()[-1], r
    run = json.loads((tmp_path / "r.json").read_text())["run"]
    assert run["not_run"] == 2 and run["stopped_by"] == "device", run
    props = {p.get("name"): p.get("value") for p in ET.parse(tmp_path / "r.xml").getroot().iter("property")}
    assert props["not_run"] == "2 (the device did not start)", props


def test_a_mistyped_subcommand_gets_a_did_you_mean():
    r = opcheck("lst-cases")
    assert r.rc == 4, r
    assert "opcheck: 'lst-cases' is not a subcommand; did you mean list-cases?" in r.err, r
    assert "Fix: run `opcheck --help`" in r.err, r


PYLOOP = ["--device-import", "opcheck_pyloop", "--device", "pyloop", "-j", "1"]


@pytest.mark.parametrize("fault", ["aten::softmax.int", "aten::softmax"])
def test_the_python_device_injects_into_the_reported_overload_too(tmp_path, fault):
    m = write_manifest(tmp_path / "f.yaml", "f", SOFTMAX)
    r = opcheck("run", "--manifests", m, *PYLOOP, "--metrics-json", tmp_path / "r.json", "--artifact-dir",
                tmp_path / "a", env={"OPCHECK_PYLOOP_FAULTS": f"{fault}=bias:1e-2"})
    assert r.rc == 1, r
    cases = {c["id"]: c for c in json.loads((tmp_path / "r.json").read_text())["cases"]}
    assert cases["f::softmax.1"]["stage"] == "INCORRECT_RESULT", cases
    assert cases["f::abs.1"]["outcome"] == "passed", cases


def test_the_python_device_refuses_an_unknown_op_clearly(tmp_path):
    m = write_manifest(tmp_path / "f.yaml", "f", SOFTMAX)
    r = opcheck("run", "--manifests", m, *PYLOOP, "--artifact-dir", tmp_path / "a",
                env={"OPCHECK_PYLOOP_FAULTS": "aten::sofmax.int=bias:1e-2"})
    assert r.rc == 4, r
    assert "unknown operator 'aten::sofmax.int' (did you mean aten::softmax" in r.err and "Fix:" in r.err, r


def test_fault_kinds_are_documented_in_run_help_and_the_devices_page():
    from conftest import SOURCE_DIR

    h = opcheck("run", "--help")
    readme = (SOURCE_DIR / "docs" / "devices.md").read_text()
    for kind in ["bias:X", "ulp", "zeros", "nondet", "segv", "abort", "hang", "oom", "throw", "notimpl"]:
        assert re.search(rf"(^|\s){re.escape(kind)}(\[:DTYPE\])?\s+\S", h.out, re.M), (kind, h.out)
        assert f"`{kind}`" in readme, kind
    # The overload the reports name is what to write: the help says so.
    assert "aten::softmax.int" in h.out, h.out


# ---------------------------------------------------------------- smaller defects


def test_smaller_console_defects(tmp_path):
    m = write_manifest(tmp_path / "one.yaml", "one", [case("neg", "torch.neg", [tensor(3)])])
    r = opcheck("run", "--manifests", m, "--device", "loopback", "--metrics-json", tmp_path / "m.json",
                "--artifact-dir", tmp_path / "a")
    assert r.rc == 0, r
    device_lines = [l for l in r.err.splitlines() if "device" in l and l.startswith("opcheck:")]
    assert len(device_lines) == 1 and device_lines[0].endswith("; 1 case, 1 unique"), r.err
    assert "1 cases" not in r.out + r.err, r
    b = opcheck("run", "--manifests", m, "--device", "loopback", "--baseline", tmp_path / "m.json", "--artifact-dir",
                tmp_path / "b")
    lines = [l for l in b.out.splitlines() if l.strip()]
    assert b.rc == 0 and lines[-1].startswith("1 passed in ") and "opcheck diff:" in b.out, b
    assert b.out.index("opcheck diff:") < b.out.index(lines[-1]), b
    e = opcheck("merge", tmp_path / "missing.json")
    assert e.rc == 2 and e.err.count("error:") == 1, e
    hist = tmp_path / "hist"
    hist.mkdir()
    (hist / "same.json").write_text((tmp_path / "m.json").read_text())
    h = opcheck("report", tmp_path / "m.json", "--history", hist, "--html", tmp_path / "r.html")
    assert h.rc == 0 and "no earlier metrics files" in h.out, h  # the copy of this run is not an earlier run


# Two faults of different outcomes: mul has no Float kernel (NOT_SUPPORTED), add is wrong by 1 (INCORRECT_RESULT).
TWO_OUTCOMES = {"OPCHECK_LOOPBACK_FAULTS": "aten::mul.Tensor=notimpl:Float;aten::add.Tensor=bias:1"}


def counts(text):
    """{"failed": 6, "not supported": 4, ...} of a summary line's (or the progress line's) counts."""
    return {word: int(n) for n, word in re.findall(r"(\d+) ([a-z ]+?)(?=,|;| in |$)", text)}


@pytest.fixture(scope="module")
def two_outcomes_on_a_terminal(tmp_path_factory):
    """`run --model gpt_oss` on the loopback with TWO_OUTCOMES, stderr on a pseudo-terminal (the progress line is
    drawn for a person at a terminal only), stdout to a file, and its HTML page."""
    tmp = tmp_path_factory.mktemp("progress")
    rc, stdout, drawn = opcheck_on_a_terminal("run", "--model", "gpt_oss", "--device", "loopback", "--html",
                                              tmp / "page.html", "--artifact-dir", tmp / "art", env=TWO_OUTCOMES)
    assert rc == 1
    return drawn, stdout, (tmp / "page.html").read_text()


def test_the_last_progress_line_counts_each_outcome_as_the_summary_line_does(two_outcomes_on_a_terminal):
    err, out, _ = two_outcomes_on_a_terminal
    progress = [p.splitlines()[0] for p in err.split("\r\x1b[K") if re.match(r"\d+/\d+ done", p)]
    assert progress, err
    last = re.fullmatch(r"(\d+)/(\d+) done: (.*); ETA .*", progress[-1].strip())
    assert last and last.group(1) == last.group(2), progress[-1]
    summary = [l for l in out.splitlines() if l.strip()][-1]
    assert counts(summary) == counts(last.group(3)), (progress[-1], summary)
    assert counts(summary)["failed"] == 6 and counts(summary)["not supported"] == 4, summary
    assert sum(counts(summary).values()) == int(last.group(2)), (progress[-1], summary)


def test_the_html_pages_sections_count_as_its_header_does(two_outcomes_on_a_terminal):
    _, out, page = two_outcomes_on_a_terminal
    header = re.search(r'<div class="summary" id="summary-line">([^<]*)</div>', page).group(1)
    said = counts(header)
    assert said["failed"] == 6 and said["not supported"] == 4, header
    kpis = {k.replace("_", " "): int(v) for k, v in re.findall(r'data-kpi="(passed|failed|not_supported|error|xpassed|'
                                                                r'xfailed|skipped)" data-value="(\d+)"', page)}
    assert {k: n for k, n in kpis.items() if n} == said, (kpis, header)
    failures = re.search(r'<h2>Failures <span class="count">(\d+)</span> <span class="sub" id="failure-counts">'
                         r'([^<]*)</span></h2>', page)
    assert failures, page[page.find('id="failures"'):][:400]
    assert counts(failures.group(2)) == {"failed": 6, "not supported": 4}, failures.group(0)
    assert int(failures.group(1)) == 6 + 4
    rows = re.findall(r'<tr data-id="[^"]+" data-model="[^"]*" data-outcome="([a-z_]+)"', page)
    assert sorted(rows) == sorted(["failed"] * 6 + ["not_supported"] * 4), rows
