"""scripts/scan_model.py: what it records from a model, and the round trip scan -> validate -> run for every
shipped model (which must also reproduce the shipped manifests/<model>.yaml)."""
import json
import os
import pathlib
import subprocess
import sys
import textwrap

import pytest
import yaml

HERE = pathlib.Path(__file__).resolve().parent
SOURCE_DIR = pathlib.Path(os.environ.get("OPCHECK_SOURCE_DIR", HERE.parents[1]))
BIN = pathlib.Path(os.environ.get("OPCHECK_BIN", SOURCE_DIR / "build" / "opcheck"))
SCANNER = SOURCE_DIR / "scripts" / "scan_model.py"
PYTHON = os.environ.get("OPCHECK_PYTHON", sys.executable)
SHIPPED = ["convnet", "gpt_oss", "granite"]
OPCHECK_SIDE = {"INVALID_CASE", "FAILED_INPUT", "FAILED_REFERENCE"}


def scan(*args, cwd):
    r = subprocess.run([PYTHON, str(SCANNER), *map(str, args)], capture_output=True, text=True, cwd=cwd, timeout=600)
    assert r.returncode == 0, r.stderr
    return r


def opcheck(*args, cwd):
    env = dict(os.environ, NO_COLOR="1")
    env.pop("OPCHECK_MANIFESTS", None)
    return subprocess.run([str(BIN), *map(str, args)], capture_output=True, text=True, cwd=cwd, env=env, timeout=900)


def run_cases(manifest, device, tmp_path):
    metrics = tmp_path / f"{manifest.stem}-{device}.json"
    r = opcheck("run", "--manifests", manifest, "--device", device, "-j", "2", "--metrics-json", metrics,
                "--artifact-dir", tmp_path / f"art-{device}", cwd=tmp_path)
    assert metrics.is_file(), r.stdout + r.stderr
    return r, json.loads(metrics.read_text())["cases"]


# ---- Round trip for the shipped models ---------------------------------------------------------------------------

@pytest.fixture(scope="module")
def scanned(tmp_path_factory):
    out = tmp_path_factory.mktemp("scanned")
    scan("--all", "-o", out, cwd=out)
    return out


@pytest.mark.parametrize("model", SHIPPED)
def test_shipped_manifest_is_the_scanner_output(scanned, model):
    shipped = SOURCE_DIR / "manifests" / f"{model}.yaml"
    assert shipped.read_text() == (scanned / f"{model}.yaml").read_text(), (
        f"manifests/{model}.yaml differs from what scripts/models/{model}.py scans to; regenerate it with "
        f"python3 scripts/scan_model.py {model} -o manifests/{model}.yaml")


def test_scanned_manifests_validate_strictly(scanned):
    r = opcheck("validate", "--strict-markers", scanned, cwd=scanned)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "0 errors, 0 warnings" in r.stdout, r.stdout


@pytest.mark.parametrize("model", SHIPPED)
def test_every_scanned_case_passes_on_cpu(scanned, model, tmp_path):
    r, cases = run_cases(scanned / f"{model}.yaml", "cpu", tmp_path)
    assert len(cases) > 10
    failed = [(c["id"], c["stage"], c["message"]) for c in cases if c["outcome"] != "passed"]
    assert not failed, failed
    assert r.returncode == 0, r.stdout + r.stderr


@pytest.mark.parametrize("model", SHIPPED)
def test_scanned_cases_pass_on_loopback(scanned, model, tmp_path):
    r, cases = run_cases(scanned / f"{model}.yaml", "loopback", tmp_path)
    bad = [(c["id"], c["stage"], c["message"]) for c in cases if c["stage"] in OPCHECK_SIDE]
    assert not bad, bad
    failed = [(c["id"], c["stage"], c["message"]) for c in cases if c["outcome"] != "passed"]
    assert not failed, failed


# ---- What the scanner records ------------------------------------------------------------------------------------

PROBE = '''
    """A probe model for the scanner's tests."""
    import torch
    import torch.nn.functional as F
    from torch import nn

    MODEL = "probe"
    DESCRIPTION = "scanner probe"
    DTYPE = torch.float32
    SEED = 5


    class Block(nn.Module):
        opcheck_marks = ("attention",)

        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(40, 8)
            self.norm = nn.LayerNorm(8)
            self.proj = nn.Linear(8, 8)

        def forward(self, ids, positions):
            x = self.emb(ids)
            x = self.norm(x)
            y = self.proj(x).view(2, 3, 2, 4).transpose(1, 2)
            rows = x.reshape(-1, 8)[positions]
            gathered = torch.gather(x, 1, positions[None, :, None].expand(2, -1, 8))
            z = F.silu(y) * 2 + F.silu(y) * 2
            masked = x[:, positions]
            return z.sum() + rows.sum() + gathered.sum() + masked.sum() + (positions + 1).sum()


    def build():
        return Block()


    def inputs():
        return torch.tensor([[1, 5, 39], [0, 7, 3]]), torch.tensor([2, 0, 1, 2])
'''


@pytest.fixture(scope="module")
def probe(tmp_path_factory):
    d = tmp_path_factory.mktemp("probe")
    (d / "probe.py").write_text(textwrap.dedent(PROBE))
    r = scan(d / "probe.py", "-o", d / "probe.yaml", cwd=d)
    manifest = yaml.safe_load((d / "probe.yaml").read_text())
    return d, manifest, {c["name"]: c for c in manifest["cases"]}, r.stderr


def tensor(case, i):
    return case["inputs"][i]["tensor"]


def test_probe_op_names_follow_real_manifests(probe):
    _, manifest, cases, _ = probe
    ops = [c["op"] for c in manifest["cases"]]
    for op in ("torch.nn.functional.embedding", "torch.nn.functional.layer_norm", "torch.nn.functional.linear",
               "torch.Tensor.view", "torch.transpose", "torch.reshape", "torch.getitem", "torch.gather",
               "torch.nn.functional.silu", "torch.mul", "torch.add", "torch.sum"):
        assert op in ops, ops
    assert manifest["model"] == "probe" and manifest["defaults"] == {"dtype": "fp32", "seed": 5}


def test_probe_index_tensors_get_valid_ranges(probe):
    _, _, cases, _ = probe
    emb = cases["torch.nn.functional.embedding.1"]
    assert tensor(emb, 0)["init"] == "randint" and tensor(emb, 0)["init_args"] == {"high": 40}
    getitem = [c for c in cases.values() if c["op"] == "torch.getitem" and "tensor" in c["inputs"][1]]
    assert len(getitem) == 1, getitem
    assert tensor(getitem[0], 1)["init_args"] == {"high": 6}       # rows of the [6, 8] reshape
    gather = cases["torch.gather.1"]
    assert tensor(gather, 2)["init_args"] == {"high": 3}           # dim 1 of the [2, 3, 8] input
    # Integers that index nothing draw from the range the model used (positions are 0..2).
    add = [c for c in cases.values() if c["op"] == "torch.add" and tensor(c, 0)["dtype"] == "torch.int64"]
    assert tensor(add[0], 0)["init_args"] == {"high": 3}


def test_probe_layouts_kwargs_marks_and_descriptions(probe):
    d, manifest, cases, _ = probe
    view = cases["torch.Tensor.view.1"]
    assert [i.get("value") for i in view["inputs"][1:]] == [2, 3, 2, 4]
    transpose = cases["torch.transpose.1"]
    assert tensor(transpose, 0)["shape"] == [2, 3, 2, 4]
    silu = cases["torch.nn.functional.silu.1"]
    assert tensor(silu, 0)["stride"] == [24, 4, 8, 1] and "noncontiguous" in silu["marks"]
    assert "kwmap" not in silu  # inplace=False is silu's default: not written
    norm = cases["torch.nn.functional.layer_norm.1"]
    # F.layer_norm passes weight and bias as keywords: tensors move to positions, eps (the default) is dropped.
    assert [list(i) for i in norm["inputs"]] == [["tensor"], ["value"], ["tensor"], ["tensor"]]
    assert "kwmap" not in norm
    linear = cases["torch.nn.functional.linear.1"]
    assert tensor(linear, 0)["init"] == "xavier" and tensor(linear, 1)["init"] == "xavier"
    assert tensor(linear, 2)["init"] == "rand"
    assert linear["marks"][0] == "fp32operation" and "attention" in linear["marks"]
    assert linear["description"].startswith(str(d / "probe.py") + ":")
    assert " in forward, code: y = self.proj(x).view(2, 3, 2, 4).transpose(1, 2)" in linear["description"]
    # The same call twice is one case.
    assert len([c for c in manifest["cases"] if c["op"] == "torch.nn.functional.silu"]) == 1


def test_probe_unwritable_call_is_reported_not_dropped_silently(probe):
    _, _, cases, stderr = probe
    assert "code: masked = x[:, positions]" not in str(cases)
    assert "probe.py:" in stderr and "torch.getitem: not recorded" in stderr and "py literals hold no tensors" in stderr


def test_probe_round_trip_runs(probe, tmp_path):
    d, _, _, _ = probe
    assert opcheck("validate", "--strict-markers", d / "probe.yaml", cwd=tmp_path).returncode == 0
    r, cases = run_cases(d / "probe.yaml", "cpu", tmp_path)
    assert cases and all(c["outcome"] == "passed" for c in cases), [(c["id"], c["message"]) for c in cases]


def test_unknown_model_is_a_clear_error(tmp_path):
    r = subprocess.run([PYTHON, str(SCANNER), "no_such_model"], capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode != 0
    assert "no model 'no_such_model'" in r.stderr and "gpt_oss" in r.stderr
