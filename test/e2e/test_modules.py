"""Module cases (docs/modules.md): torch-spyre's module_tests configs read unmodified, each module x forward invocation a
case built from real transformers classes, judged by the op rule, and a failing module traced to the op inside it.
The configs are the repository's own (test/fixtures/torch-spyre-modules, written by make_fixtures.py in torch-spyre's
dialect at tiny sizes); the real Granite 3.3 config is a corpus test."""
import json
import re
import subprocess
import xml.etree.ElementTree as ET

import pytest

from conftest import FIXTURES, OWN, opcheck

MODULES = OWN / "torch-spyre-modules"
REAL = FIXTURES / "torch-spyre-modules"
KINDS = ("RotaryEmbedding", "DecoderLayer", "RMSNorm", "Attention", "MLP", "SiLUActivation")


def kind_of(case_id):
    return next(k for k in KINDS if k in case_id.split("::")[1])


def run_modules(tmp_path, *args, env=None, name="m"):
    metrics = tmp_path / f"{name}.json"
    r = opcheck("run", MODULES, "--variant", "all", "--tb", "no", "--metrics-json", metrics, *args, env=env, cwd=tmp_path)
    assert metrics.is_file(), r
    return r, json.loads(metrics.read_text())


def by_id(m):
    return {c["id"]: c for c in m["cases"]}


def test_module_configs_validate_as_one_case_per_module_and_invocation():
    r = opcheck("validate", MODULES)
    assert r.rc == 0, r
    assert "4 manifests, 51 cases: 0 errors" in r.out + r.err, r
    listed = opcheck("list-cases", MODULES, "--variant", "all", "--json")
    ids = {c["id"] for c in json.loads(listed.out)}
    # Each entry's invocations, numbered; the entries listed again under test_modules_custom.py (by YAML anchor) are
    # the same cases, not more.
    for family, model in (("Llama", "tiny_llama"), ("Granite", "tiny_granite"), ("Mistral", "tiny_mistral")):
        for name in (f"{family}MLP_tiny", f"{family}DecoderLayer_layer0", f"{family}RMSNorm_64",
                     f"{family}Attention_layer0", f"{family}RotaryEmbedding_tiny", "SiLUActivation_tiny"):
            assert {f"{model}::{name}.0", f"{model}::{name}.1"} <= ids, (name, listed.out)
            assert f"{model}::{name}.2" not in ids
    assert "tiny_mistral::MistralModel_whole.0" in ids
    assert len(ids) == 51, sorted(ids)


def test_cos_and_sin_drawn_as_integers_are_warned_about_and_realistic_ones_are_not():
    r = opcheck("validate", MODULES)
    warned = re.findall(r"(\S+\.yaml):\d+:\d+: warning: position_embeddings .*drawn as integers", r.out + r.err)
    assert warned, r
    assert {w.rsplit("/", 1)[-1] for w in warned} == {"tiny_llama_spyre.yaml", "tiny_granite.yaml", "tiny_mistral.yaml"}


@pytest.mark.parametrize("device", ["loopback", "cpu"])
def test_every_module_case_gets_a_verdict_and_passes_on_a_correct_device(tmp_path, device):
    r, m = run_modules(tmp_path, "--device", device)
    assert r.rc == 0, r
    cases = m["cases"]
    assert len(cases) == 51
    skipped = [c for c in cases if c["outcome"] != "passed"]
    # The whole model at its class's default sizes (7.1 B parameters) is not run for memory, with the figures.
    assert [c["id"] for c in skipped] == ["tiny_mistral::MistralModel_whole.0"], skipped
    assert skipped[0]["outcome"] == "skipped"
    assert re.search(r"not run for memory: .*MistralModel has 7\.\d+ B parameters.*budget of", skipped[0]["message"])


def test_the_case_record_says_which_sizes_came_from_where(tmp_path):
    r, m = run_modules(tmp_path, "-k", "MistralDecoderLayer", "--junit-xml", tmp_path / "j.xml")
    assert r.rc == 0, r
    cases = by_id(m)
    plain = json.loads(cases["tiny_mistral::MistralDecoderLayer_layer0.0"]["module"])
    sizes = {s["name"]: (s["value"], s["source"]) for s in plain["sizes"]}
    assert sizes["hidden_size"] == (64, "inputs")  # the hidden states' last dimension
    assert sizes["head_dim"] == (16, "inputs")  # the cos/sin's last dimension
    assert sizes["intermediate_size"] == (14336, "class default")
    sized = json.loads(cases["tiny_mistral_sized::MistralDecoderLayer_sized.0"]["module"])
    sizes = {s["name"]: (s["value"], s["source"]) for s in sized["sizes"]}
    assert sizes["intermediate_size"] == (96, "sizes")  # opcheck's own dialect
    assert sizes["num_key_value_heads"] == (2, "sizes")
    assert sized["module_dtype"] == "torch.bfloat16"
    junit = ET.parse(tmp_path / "j.xml").getroot()
    props = {p.get("name"): p.get("value") for tc in junit.iter("testcase")
             if tc.get("name", "").endswith("MistralDecoderLayer_layer0.0") for p in tc.iter("property")}
    assert json.loads(props["module"])["sizes"][0]["name"] == "hidden_size"
    assert props["upstream_test"] == "TestModule::test_forward[MistralDecoderLayer_layer0.0]"


def test_an_argument_the_config_dropped_is_passed_as_none_and_said(tmp_path):
    # MistralAttention's forward requires attention_mask, which torch-spyre's configs omit.
    r, m = run_modules(tmp_path, "-k", "MistralAttention_layer0")
    assert r.rc == 0, r
    for c in m["cases"]:
        assert any("attention_mask" in n and "None" in n for n in c["judge_notes"]), c["judge_notes"]


# A fault on one op fails exactly the modules whose forward runs it, and the trace names that op and no other.
# silu is inside the MLP (and the decoder layer), softmax inside eager attention (and the decoder layer).
MLP_RUNS = {"SiLUActivation", "MLP", "DecoderLayer"}
ATTENTION_RUNS = {"Attention", "DecoderLayer"}


@pytest.mark.parametrize("fault, op, kinds, stage, configs", [
    ("aten::silu=bias:1e-1", "aten::silu", MLP_RUNS, "INCORRECT_RESULT", None),
    ("aten::silu=throw", "aten::silu", MLP_RUNS, "FAILED_RUNTIME", None),
    # One element off: diluted past the tolerance in the default-sized MLPs, so the sized config (intermediate 96).
    ("aten::silu=off:0.5", "aten::silu", MLP_RUNS, "INCORRECT_RESULT", "tiny_mistral_sized"),
    ("aten::_softmax=bias:1e-1", "aten::_softmax", ATTENTION_RUNS, "INCORRECT_RESULT", None),
    ("aten::_softmax=off:0.5", "aten::_softmax", ATTENTION_RUNS, "INCORRECT_RESULT", None),
    ("aten::_softmax=throw", "aten::_softmax", ATTENTION_RUNS, "FAILED_RUNTIME", None),
])
def test_a_fault_fails_exactly_the_modules_that_run_its_op_and_the_trace_names_it(tmp_path, fault, op, kinds, stage,
                                                                                  configs):
    args = ["-k", configs] if configs else []
    r, m = run_modules(tmp_path, *args, env={"OPCHECK_LOOPBACK_FAULTS": fault})
    assert r.rc == 1, r
    ran = [c for c in m["cases"] if c["outcome"] != "skipped"]
    assert ran
    for c in ran:
        sdpa = "sdpa" in c["id"]
        expected_fail = kind_of(c["id"]) in kinds
        assert (c["outcome"] == "failed") == expected_fail, (fault, c["id"], c["outcome"], c["message"][:300])
        if not expected_fail:
            continue
        assert c["stage"] == stage, (c["id"], c["message"][:300])
        head = c["message"].splitlines()[0]
        named = set(re.findall(r"(aten::\w+(?:\.\w+)?) (?:is wrong|raises|raised)", head))
        # A wrong softmax reaches sdpa's output through the device's own _safe_softmax call (its kernel choice);
        # a raising one is the op running on the device when it threw.
        want = {"aten::_safe_softmax"} if sdpa and fault == "aten::_softmax=bias:1e-1" or \
            sdpa and fault == "aten::_softmax=off:0.5" else {op}
        assert named == want, (c["id"], head)
        assert c["traced_op"] == next(iter(want)), c["id"]
        assert head.startswith("inside it, "), head


def test_a_traced_module_failure_joins_the_group_of_the_op_that_broke_it(tmp_path):
    # The bundled granite manifest has an op case of silu: the modules that fail through silu are in its group.
    metrics = tmp_path / "g.json"
    r = opcheck("run", MODULES / "tiny_granite.yaml", OWN.parent.parent / "manifests" / "granite.yaml", "--tb", "no",
                "--metrics-json", metrics, env={"OPCHECK_LOOPBACK_FAULTS": "aten::silu=bias:1e-1"}, cwd=tmp_path)
    assert r.rc == 1, r
    groups = json.loads(metrics.read_text())["failure_groups"]
    assert len(groups) == 1, [g["signature"] for g in groups]
    g = groups[0]
    assert g["op"] == "aten::silu"
    assert "granite::torch.nn.functional.silu.1" in g["cases"]
    assert {"tiny_granite::GraniteMLP_tiny.0", "tiny_granite::GraniteDecoderLayer_layer0.1",
            "tiny_granite::SiLUActivation_tiny.0"} <= set(g["cases"]), g["cases"]


def test_an_error_that_accumulates_is_said_with_where_the_run_first_leaves_the_float64_bound(tmp_path):
    # 0.003 added to every mm output: within the tolerance (0.005) of each mm alone, so no op is wrong with right
    # inputs, but the decoder layer's output drifts past it.
    r, m = run_modules(tmp_path, "-k", "LlamaDecoderLayer", env={"OPCHECK_LOOPBACK_FAULTS": "aten::mm=bias:3e-3"})
    assert r.rc == 1, r
    for c in m["cases"]:
        head = c["message"].splitlines()[0]
        assert re.match(r"inside it, every one of its (\d+) ATen calls passes alone with right inputs: the error "
                        r"accumulated; the device's run first leaves the float64 bound at call \d+ of \1: aten::", head), head
        assert c.get("traced_op", "") == ""
        trace = json.loads(c["module"])["trace"]
        assert all(v["verdict"] != "failed" for v in trace)
        assert any(v["op"] == "aten::mm" for v in trace)


@pytest.mark.parametrize("mode", ["precise", "stats_fp32"])
def test_the_loopbacks_freer_modes_pass_every_module(tmp_path, mode):
    r, m = run_modules(tmp_path, env={"OPCHECK_LOOPBACK_MODE": mode})
    assert r.rc == 0, r
    assert sum(c["outcome"] == "passed" for c in m["cases"]) == 50


def test_compile_backend_inductor_on_the_cpu_reaches_a_verdict_for_every_case(tmp_path):
    metrics = tmp_path / "c.json"
    r = opcheck("run", MODULES / "opcheck_dialect.yaml", "--device", "cpu", "--compile-backend", "inductor",
                "--tb", "no", "--metrics-json", metrics, "-j", "2", timeout=1800, cwd=tmp_path)
    assert r.rc == 0, r
    cases = json.loads(metrics.read_text())["cases"]
    assert len(cases) == 14
    assert all(c["outcome"] == "passed" for c in cases), [(c["id"], c["message"][:200]) for c in cases]
    assert all(c["timings"]["device_ms"] > 0 for c in cases)


def write_config(path, module_path, ctor="[]", forward="[{tensor: {shape: [2, 8], dtype: float32}}]", extra=""):
    path.write_text(f"""test_suite_config:
  files:
    - path: ${{TORCH_ROOT}}/test/test_modules.py
      tests:
        - names: ['*TestModule*::test_forward']
          tags: [model__bad]
          edits:
            modules:
              include:
                - name: M_1
                  module_path: {module_path}
                  constructor_inputs: {{args: {ctor}, kwargs: {{}}}}
                  forward_inputs: [{{args: {forward}, kwargs: {{}}}}]
{extra}""")
    return path


@pytest.mark.parametrize("module_path, ctor, says", [
    ("transformers.models.nosuch.modeling_nosuch.NoSuchMLP", "[]",
     r"cannot be imported: No module named 'transformers\.models\.nosuch'.*transformers \d[\d.]* is installed"),
    ("transformers.models.llama.modeling_llama.NoSuchMLP", "[]", r"modeling_llama has no NoSuchMLP"),
    ("torch.nn.Linear", "[{value: 3}, {value: 4}]", r"building torch\.nn\.Linear failed|mat1 and mat2"),
    ("transformers.models.llama.modeling_llama.LlamaMLP",
     "[{value: '<config:transformers.models.llama.configuration_llama.NoSuchConfig>'}]", r"has no NoSuchConfig"),
    ("torch.nn.functional.relu", "[]", r"torch\.nn\.functional\.relu is a function, not a class"),
    ("transformers.models.llama.modeling_llama.LlamaMLP", "[{value: '<config:os.environ>'}]",
     r"config class os\.environ is not in a package module cases may import \(transformers, torch\)"),
])
def test_a_module_that_cannot_be_built_is_an_error_of_its_case_and_the_others_still_run(tmp_path, module_path, ctor,
                                                                                         says):
    bad = write_config(tmp_path / "bad.yaml", module_path, ctor)
    good = write_config(tmp_path / "good.yaml", "torch.nn.Linear", "[{value: 8}, {value: 4}]")
    good.write_text(good.read_text().replace("model__bad", "model__good"))
    metrics = tmp_path / "m.json"
    r = opcheck("run", bad, good, "--tb", "no", "--metrics-json", metrics, cwd=tmp_path)
    cases = by_id(json.loads(metrics.read_text()))
    assert cases["good::M_1.0"]["outcome"] == "passed", cases["good::M_1.0"]["message"]
    c = cases["bad::M_1.0"]
    assert c["outcome"] in ("error", "failed"), c
    assert re.search(says, c["message"], re.S), c["message"][:600]
    assert r.rc == 1, r


def test_a_module_path_outside_the_allowed_packages_is_never_imported(tmp_path):
    marker = tmp_path / "imported"
    (tmp_path / "evil.py").write_text(f"open({str(marker)!r}, 'w').close()\nclass M: pass\n")
    cfg = write_config(tmp_path / "c.yaml", "evil.M")
    r = opcheck("validate", cfg)
    assert r.rc == 2, r
    assert re.search(r"c\.yaml:\d+:\d+: error: module_path 'evil\.M' is not in a package module cases may import "
                     r"\(transformers, torch\)", r.out + r.err), r
    r = opcheck("run", cfg, cwd=tmp_path, env={"PYTHONPATH": str(tmp_path)})
    assert r.rc == 2 and not marker.exists(), r


def test_a_module_entry_without_module_path_or_forward_inputs_is_a_located_error(tmp_path):
    cfg = write_config(tmp_path / "c.yaml", "nodots")
    r = opcheck("validate", cfg)
    assert r.rc == 2, r
    assert re.search(r"c\.yaml:\d+:\d+: error: module entry needs 'module_path'.*\[case bad::M_1\]", r.out + r.err), r
    cfg = write_config(tmp_path / "d.yaml", "torch.nn.Identity", forward="[]").read_text()
    (tmp_path / "d.yaml").write_text(cfg.replace("forward_inputs: [{args: [], kwargs: {}}]", "forward_inputs: []"))
    r = opcheck("validate", tmp_path / "d.yaml")
    assert r.rc == 2, r
    assert "module entry has no forward_inputs" in r.out + r.err, r


@pytest.mark.corpus
def test_the_real_granite_config_is_twelve_cases_with_a_verdict_each_on_the_cpu_and_the_loopback(tmp_path):
    r = opcheck("validate", REAL)
    assert r.rc == 0, r
    assert "1 manifest, 12 cases: 0 errors" in r.out + r.err, r
    for device in ("cpu", "loopback"):
        metrics = tmp_path / f"{device}.json"
        r = opcheck("run", REAL, "--variant", "spyre", "--device", device, "--tb", "no", "--metrics-json", metrics,
                    timeout=1800, cwd=tmp_path)
        cases = json.loads(metrics.read_text())["cases"]
        assert len(cases) == 12
        assert all(c["outcome"] == "passed" for c in cases), (device, [(c["id"], c["message"][:300]) for c in cases])
        assert r.rc == 0, r


def test_every_torch_spyre_config_kind_is_read_or_named():
    # model_ops_tests and module_tests are read (cases); the kinds that run test files of PyTorch or torch-spyre are
    # named, with what opcheck offers instead, never misread as op entries (upstream's `{name: add}` has no
    # sample_inputs_func: an OpInfo entry, not an op call).
    kinds = OWN / "torch-spyre-kinds"
    r = opcheck("validate", kinds, OWN / "torch-spyre-v2", MODULES)
    assert r.rc == 0, r
    text = r.out + r.err
    assert re.search(r"\d+ manifests, \d+ cases: 0 errors", text), r
    said = {}
    for m in re.finditer(r"torch-spyre-kinds/(\w+)/\S+\.yaml:\d+:\d+: warning: (.*)\n  Fix: (.*)", text):
        said.setdefault(m.group(1), []).append(m.group(2) + " | " + m.group(3))
    assert set(said) == {"upstream_tests", "upstream_tests_beta", "torch_spyre_tests", "distributed_tests",
                         "example_test_config"}, said
    assert all(len(v) == 1 for v in said.values()), said  # one warning each, naming the kind
    assert "PyTorch's own test file test_binary_ufuncs.py on 3 OpInfo entries (add,sub,mul)" in said["upstream_tests"][0]
    assert "opcheck import-opinfo --ops add,sub,mul -o opinfo" in said["upstream_tests"][0]
    assert "opcheck import-opinfo --ops exp -o opinfo" in said["upstream_tests_beta"][0]
    assert "torch-spyre's own test file test_spyre_ops.py" in said["torch_spyre_tests"][0]
    assert "a distributed test file (test_allreduce.py)" in said["distributed_tests"][0]
    listed = json.loads(opcheck("list-cases", kinds, "--variant", "all", "--json").out or "[]")
    assert listed == []


def test_a_traced_call_saved_by_save_failures_fails_alone_and_shrinks(tmp_path):
    fault = {"OPCHECK_LOOPBACK_FAULTS": "aten::silu=bias:1e-1"}
    saved = tmp_path / "failures"
    r, m = run_modules(tmp_path, "-k", "GraniteMLP_tiny", "--save-failures", saved, env=fault)
    assert r.rc == 1, r
    folder = saved / "tiny_granite__GraniteMLP_tiny.0"
    assert (folder / "calls.yaml").is_file() and (folder / "calls.safetensors").is_file(), list(saved.rglob("*"))
    note = [n for n in by_id(m)["tiny_granite::GraniteMLP_tiny.0"]["judge_notes"] if n.startswith("traced calls")]
    assert note and str(folder / "calls.yaml") in note[0], note
    # The traced call is an ordinary op case: it fails alone under the fault, passes without it, and shrinks.
    alone = tmp_path / "alone.json"
    r = opcheck("run", "--manifests", folder, "--tb", "no", "--metrics-json", alone, env=fault, cwd=tmp_path)
    assert r.rc == 1, r
    cases = json.loads(alone.read_text())["cases"]
    assert [(c["id"], c["op"], c["stage"]) for c in cases] == [
        ("tiny_granite_traced::GraniteMLP_tiny.0.call5", "aten::silu", "INCORRECT_RESULT")]
    assert opcheck("run", "--manifests", folder, cwd=tmp_path).rc == 0
    r = opcheck("shrink", "tiny_granite_traced::GraniteMLP_tiny.0.call5", "--manifests", folder, "-o",
                tmp_path / "shrunk", env=fault, cwd=tmp_path)
    assert r.rc in (0, 1), r
    assert (tmp_path / "shrunk" / "minimal.yaml").is_file(), r
    r = opcheck("run", "--manifests", tmp_path / "shrunk" / "minimal.yaml", "--tb", "no", env=fault, cwd=tmp_path)
    assert r.rc == 1, r


@pytest.mark.parametrize("command", [["repro", "--python"], ["shrink", "-o", "shrunk"], ["sweep"]])
def test_commands_for_op_calls_refuse_a_module_case_and_point_at_its_traced_calls(tmp_path, command):
    r = opcheck(command[0], "tiny_granite::GraniteMLP_tiny.0", "--manifests", MODULES, *command[1:], cwd=tmp_path)
    assert r.rc == 4, r
    assert "is a module case" in r.err and "--save-failures DIR" in r.err, r


def test_the_rerun_line_of_a_module_case_reruns_it_alone(tmp_path):
    r = opcheck("repro", "tiny_granite::GraniteMLP_tiny.0", "--manifests", MODULES)
    assert r.rc == 0, r
    line = r.out.strip().splitlines()[-1]
    assert "run --manifests" in line and "tiny_granite::GraniteMLP_tiny.0" in line, line
    rerun = subprocess.run(line, shell=True, capture_output=True, text=True, cwd=tmp_path, timeout=600)
    assert rerun.returncode == 0, rerun.stdout[-2000:]
    assert "1 passed" in rerun.stdout, rerun.stdout[-2000:]


def test_module_ops_writes_each_distinct_call_of_the_layers_once_as_op_cases(tmp_path):
    ops = tmp_path / "ops"
    r, m = run_modules(tmp_path, "-k", "tiny_granite and (MLP or DecoderLayer)", "--module-ops", ops)
    assert r.rc == 0, r
    notes = [n for c in m["cases"] for n in c["judge_notes"] if n.startswith("--module-ops")]
    assert len(notes) == 4, notes
    written = sum(int(re.match(r"--module-ops: (\d+) of its (\d+)", n).group(1)) for n in notes)
    # The decoder layer's MLP calls are the MLP case's: the second of them writes none of those again.
    total = sum(int(re.match(r"--module-ops: (\d+) of its (\d+)", n).group(2)) for n in notes)
    assert 0 < written < total, notes
    r = opcheck("validate", ops)
    assert r.rc == 0, r
    listed = json.loads(opcheck("list-cases", ops, "--json").out)
    assert len(listed) == written
    assert {"aten::silu", "aten::mm", "aten::_softmax", "aten::rsqrt"} <= {c["op"] for c in listed}
    # Each is an op case with the inputs it got: they pass on a correct device, and silu's fail under its fault.
    assert opcheck("run", "--manifests", ops, "--tb", "no", cwd=tmp_path).rc == 0
    metrics = tmp_path / "ops.json"
    r = opcheck("run", "--manifests", ops, "--tb", "no", "--metrics-json", metrics,
                env={"OPCHECK_LOOPBACK_FAULTS": "aten::silu=bias:1e-1"}, cwd=tmp_path)
    assert r.rc == 1, r
    failed = {c["op"] for c in json.loads(metrics.read_text())["cases"] if c["outcome"] == "failed"}
    assert failed == {"aten::silu"}, failed


def test_module_cases_run_on_a_python_registered_device_and_its_faults_are_traced(tmp_path):
    # pyloop registers itself from Python as torch-spyre does (--device-import): its workers come from a start-up
    # process, so the module cases cross the case wire.
    device = ["--device-import", "opcheck_pyloop", "--device", "pyloop"]
    r, m = run_modules(tmp_path, "-k", "GraniteMLP_tiny or GraniteRMSNorm_64", *device)
    assert r.rc == 0, r
    assert len(m["cases"]) == 4 and all(c["outcome"] == "passed" for c in m["cases"])
    r, m = run_modules(tmp_path, "-k", "GraniteMLP_tiny or GraniteRMSNorm_64", *device,
                       env={"OPCHECK_PYLOOP_FAULTS": "aten::mm=bias:1e-1"}, name="f")
    assert r.rc == 1, r
    cases = by_id(m)
    assert cases["tiny_granite::GraniteRMSNorm_64.0"]["outcome"] == "passed"
    mlp = cases["tiny_granite::GraniteMLP_tiny.0"]
    assert mlp["traced_op"] == "aten::mm", mlp["message"][:300]
