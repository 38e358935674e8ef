"""Every failure mode of a device under test, injected into one op of the loopback device, is caught, isolated and
reported with the right stage; every other case still passes and the reports stay complete and valid."""
import json
import xml.etree.ElementTree as ET

import pytest

from conftest import OWN_SPYRE, SOURCE_DIR, opcheck, write_manifest
from synth import generate

CASES_PER_MODEL = 70  # 3 models: 210 cases


@pytest.fixture(scope="module")
def manifests(tmp_path_factory):
    d = tmp_path_factory.mktemp("faults")
    # exact comparison: loopback runs the CPU's own kernels, so anything but identical bits is the fault.
    generate(d, models=3, cases=CASES_PER_MODEL, dup=0.3, seed=5, compare="exact")
    return d


def first_lines(metrics_path):
    """{case id: (stage, first line of the message)} from a metrics file."""
    cases = json.loads(metrics_path.read_text())["cases"]
    return {c["id"]: (c["stage"], (c.get("message") or "").split("\n")[0]) for c in cases}


def tensor_case(name, op, shapes, extra=()):
    lines = [f"  - name: {name}", f"    op: {op}", "    inputs:"]
    lines += [f"      - tensor: {{shape: {list(s)}, init: randn}}" for s in shapes]
    return lines + [f"    {e}" for e in extra]


# Cases that run before the faulted one in the same worker: their allocations are what an uninitialised output
# would read, which once made the verdict depend on them.
BEFORE = [tensor_case(f"before.{i}", op, [[4, 16 + i]] * (2 if op in ("torch.add", "torch.mul") else 1))
          for i, op in enumerate(["torch.neg", "torch.add", "torch.sin", "torch.mul", "torch.cos", "torch.tanh"] * 2)]


@pytest.mark.parametrize("fault,stage,first_line", [
    ("garbage", "INCORRECT_RESULT", "output: Tensor-likes are not close! (also differs between runs)"),
    ("nondet", "NONDETERMINISTIC", "device run 2 differs bitwise from run 1: output: "),
])
def test_judgement_is_the_same_alone_after_other_cases_and_at_any_j(tmp_path, fault, stage, first_line):
    """A wrong and varying output is INCORRECT_RESULT (saying it also varies), a right but varying one
    NONDETERMINISTIC, whichever cases ran before it in the worker and whatever -j is."""
    manifest = write_manifest(tmp_path / "order.yaml", "order", BEFORE + [tensor_case("exp.target", "torch.exp",
                                                                                       [[8, 32]])])
    env = {"OPCHECK_LOOPBACK_FAULTS": f"aten::exp={fault}"}
    seen = {}
    for label, args in [("alone", ["order::exp.target", "-j", "1"]), ("after others -j 1", ["-j", "1"]),
                        ("after others -j 2", ["-j", "2"])]:
        out = tmp_path / label.replace(" ", "_")
        r = opcheck("run", "--manifests", manifest, *args, "--device", "loopback", "--metrics-json", out / "m.json",
                    "--artifact-dir", out / "art", env=env)
        assert r.rc == 1, r
        cases = first_lines(out / "m.json")
        seen[label] = cases.pop("order::exp.target")
        assert all(s == "PASSED" for s, _ in cases.values()), cases
    for label, (got_stage, got_line) in seen.items():
        assert got_stage == stage and got_line.startswith(first_line), (label, seen)
    if fault == "nondet":  # every run within tolerance: the hint to mark it nondeterministic is right here
        m = json.loads((tmp_path / "alone" / "m.json").read_text())["cases"][0]["message"]
        assert "every run is within tolerance of the reference" in m and "nondeterministic: true" in m, m
    else:
        m = json.loads((tmp_path / "alone" / "m.json").read_text())["cases"][0]["message"]
        assert "nondeterministic: true" not in m and "Also differs between runs: device run 2 differs" in m, m


CONVOLUTION_BACKWARD = tensor_case(
    "convolution_backward.masked", "torch.ops.aten.convolution_backward.default",
    [[2, 4, 6, 6], [2, 3, 8, 8], [4, 3, 3, 3]],  # grad_output, input, weight
    ["attrs: {bias_sizes: [4], stride: [1, 1], padding: [0, 0], dilation: [1, 1], transposed: false, "
     "output_padding: [0, 0], groups: 1, output_mask: [true, true, false]}"])


def test_undefined_outputs_compare_as_no_result(tmp_path):
    """convolution_backward with output_mask [true, true, false] returns an undefined third gradient: it passes on
    the cpu, and on the loopback it is never a failure about undefined tensors."""
    manifest = write_manifest(tmp_path / "bw.yaml", "bw", [CONVOLUTION_BACKWARD])
    cpu = opcheck("run", "--manifests", manifest, "--device", "cpu", "--metrics-json", tmp_path / "cpu.json",
                  "--artifact-dir", tmp_path / "a")
    assert cpu.rc == 0 and cpu.last_line.startswith("1 passed"), cpu
    loop = opcheck("run", "--manifests", manifest, "--device", "loopback", "--metrics-json", tmp_path / "loop.json",
                   "--artifact-dir", tmp_path / "b")
    stage, line = first_lines(tmp_path / "loop.json")["bw::convolution_backward.masked"]
    assert stage in ("PASSED", "NOT_SUPPORTED"), (stage, line, loop)
    assert "undefined" not in line and "does not have a device" not in loop.out, loop


def test_an_output_left_on_the_host_fails_naming_both_devices(tmp_path):
    """A device kernel that returns a CPU tensor (the host fault) fails, naming both devices, on the torch-spyre
    fixture; the cases that never call mul still pass."""
    r = opcheck("run", "--manifests", OWN_SPYRE, "--model", "tiny-gpt", "-k", "torch.mul or torch.matmul",
                "--device", "loopback", "--metrics-json", tmp_path / "m.json", "--artifact-dir", tmp_path / "a",
                env={"OPCHECK_LOOPBACK_FAULTS": "aten::mul.Tensor=host"})
    assert r.rc == 1, r
    cases = first_lines(tmp_path / "m.json")
    mul = {i: v for i, v in cases.items() if "::torch.mul." in i}
    assert mul, cases
    for stage, line in mul.values():
        assert stage == "INCORRECT_RESULT", mul
        assert line == ("output: device mismatch: expected a tensor on privateuseone:0 (the device under test), "
                        "got one on cpu"), mul
    assert all(s == "PASSED" for i, (s, _) in cases.items() if i not in mul), cases


def test_not_supported_leads_with_the_op_the_dispatch_key_and_the_error(tmp_path):
    """NOT_SUPPORTED's first line is the op, the dispatch key and the error's first line; the whole error follows
    after a blank line."""
    manifest = write_manifest(tmp_path / "ns.yaml", "ns", [tensor_case("mul.1", "torch.mul", [[4, 8], [4, 8]])])
    r = opcheck("run", "--manifests", manifest, "--device", "loopback", "--metrics-json", tmp_path / "m.json",
                "--artifact-dir", tmp_path / "a", env={"OPCHECK_LOOPBACK_FAULTS": "aten::mul.Tensor=notimpl"})
    case = json.loads((tmp_path / "m.json").read_text())["cases"][0]
    assert case["stage"] == "NOT_SUPPORTED", r
    first, blank, rest = case["message"].split("\n", 2)
    assert first == ("aten::mul.Tensor has no kernel for PrivateUse1 (loopback): loopback: aten::mul.Tensor is not "
                     "implemented on this device (injected fault)"), case["message"]
    assert blank == "" and rest.startswith("the device raised NotImplementedError: loopback: aten::mul.Tensor"), rest


def test_ulp_passes_default_float_tolerances_as_documented(tmp_path):
    """`ulp` flips one lowest bit: exact comparison catches it (the fault table), default float tolerances do not."""
    manifest = write_manifest(tmp_path / "u.yaml", "u", [tensor_case("exp.1", "torch.exp", [[4, 8]])])
    r = opcheck("run", "--manifests", manifest, "--device", "loopback", "--artifact-dir", tmp_path / "a",
                env={"OPCHECK_LOOPBACK_FAULTS": "aten::exp=ulp"})
    assert r.rc == 0 and r.last_line.startswith("1 passed"), r


FAULTS = [
    ("bias:1e-2", "INCORRECT_RESULT", "failed"),
    ("ulp", "INCORRECT_RESULT", "failed"),
    ("zeros", "INCORRECT_RESULT", "failed"),
    ("garbage", "INCORRECT_RESULT", "failed"),  # wrong, and also differs between runs
    ("host", "INCORRECT_RESULT", "failed"),  # the output left on the host: a device mismatch
    ("segv", "CRASHED", "failed"),
    ("abort", "CRASHED", "failed"),
    ("hang", "TIMEOUT", "failed"),
    ("nondet", "INCORRECT_RESULT", "failed"),  # exact comparison: a flipped bit is beyond it (see test_judgement_*)
    ("oom", None, "failed"),  # allocation failure: CRASHED or FAILED_RUNTIME depending on how it surfaces
    ("throw", "FAILED_RUNTIME", "failed"),
    ("notimpl", "NOT_SUPPORTED", "not_supported"),  # its own outcome: no kernel is not a wrong result
]


@pytest.mark.parametrize("fault,stage,outcome", FAULTS, ids=[f[0] for f in FAULTS])
def test_fault_is_caught_for_exactly_the_cases_using_the_op(manifests, tmp_path, fault, stage, outcome):
    r = opcheck("run", "--manifests", manifests, "--device", "loopback", "--timeout", "3",
                "--junit-xml", tmp_path / "r.xml", "--metrics-json", tmp_path / "r.json",
                "--artifact-dir", tmp_path / "art", env={"OPCHECK_LOOPBACK_FAULTS": f"aten::exp={fault}"},
                timeout=600)
    assert r.rc == 1, r
    m = json.loads((tmp_path / "r.json").read_text())
    cases = m["cases"]
    assert len(cases) == 3 * CASES_PER_MODEL, r
    exp_cases = [c for c in cases if c["op"] == "torch.exp"]
    others = [c for c in cases if c["op"] != "torch.exp"]
    assert exp_cases and others
    for c in exp_cases:
        assert c["outcome"] == outcome, c
        if stage:
            assert c["stage"] == stage, c
        else:
            assert c["stage"] in ("CRASHED", "FAILED_RUNTIME"), c
    for c in others:
        assert c["outcome"] == "passed", c
    assert m["totals"][outcome] == len(exp_cases)
    assert m["totals"]["passed"] == len(others)
    # JUnit agrees: one failure element per failing occurrence, duplicates included.
    root = ET.parse(tmp_path / "r.xml").getroot()
    failures = [tc for tc in root.iter("testcase") if tc.find("failure") is not None]
    assert len(failures) == len(exp_cases)
    word = outcome.replace("_", " ")  # the summary line's words: "failed", "not supported"
    assert f"{len(exp_cases)} {word}" in r.last_line and f"{len(others)} passed" in r.last_line, r


def test_a_case_the_device_cannot_run_pays_for_no_cpu_reference(tmp_path):
    # mul lacks its float32 kernel: those cases are NOT_SUPPORTED without a reference or a float64 result; every
    # other case ends as it does without the fault.
    def run(name, env):
        out = tmp_path / name / "m.json"
        r = opcheck("run", "--manifests", SOURCE_DIR / "manifests", "--model", "gpt_oss", "--device", "loopback",
                    "--metrics-json", out, "--artifact-dir", tmp_path / name / "art", env=env)
        assert out.exists(), r
        return {c["id"]: c for c in json.loads(out.read_text())["cases"]}

    clean = run("clean", {})
    faulty = run("faulty", {"OPCHECK_LOOPBACK_FAULTS": "aten::mul.Tensor=notimpl:Float"})
    unsupported = {i for i, c in faulty.items() if c["stage"] == "NOT_SUPPORTED"}
    assert unsupported, {i: c["stage"] for i, c in faulty.items()}
    for i in unsupported:
        c = faulty[i]
        assert c["message"].startswith("aten::mul.Tensor for Float has no kernel for "), c["message"]
        assert (c["timings"]["reference_ms"], c["timings"].get("golden_ms", 0)) == (0, 0), (i, c["timings"])
        assert clean[i]["timings"]["reference_ms"] > 0, clean[i]["timings"]  # what the case paid before
    assert {i: c["stage"] for i, c in faulty.items() if i not in unsupported} == \
        {i: c["stage"] for i, c in clean.items() if i not in unsupported}
