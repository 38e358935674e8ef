"""Dedupe: the plan's counts against a count made straight from the YAML, without opcheck."""
import re

import pytest
import yaml

from conftest import OWN_SPYRE, SPYRE, opcheck

# (folder, model, its base and _spyre files, cases per file): the repository's fixtures, and the real corpus.
PAIRS = [pytest.param(OWN_SPYRE, "tiny-gpt", 34, id="own"),
         pytest.param(SPYRE, "gpt-oss-20b", 229, id="corpus", marks=pytest.mark.corpus)]

# What makes two spellings one op, stated here independently of opcheck's own table (src/common/op_names.cpp): a
# Tensor method is the function of the same name, `F.` is `torch.nn.functional.`, and the operator-module and true-
# division spellings are the torch functions. These are the spellings the tests below use; a fixture that brings
# a new one fails the check against a plain count, and the rule is added here.
PREFIX_RULES = [("torch.nn.functional.", "torch.nn.functional."), ("torch._C._nn.", "torch.nn.functional."),
                ("F.", "torch.nn.functional."), ("torch.Tensor.", "torch."), ("Tensor.", "torch."),
                ("operator.", "torch.")]
ALIASES = {"torch.truediv": "torch.div", "torch.__truediv__": "torch.div", "torch.and_": "torch.__and__"}


def canonical_op(op):
    """The op's one spelling: the first matching prefix rule, then the aliases."""
    for written, canonical in PREFIX_RULES:
        if op.startswith(written):
            op = canonical + op[len(written):]
            break
    return ALIASES.get(op, op)


def independent_keys(path):
    """The same call = the same op spelling (prefix rules and aliases of opcheck's op-name table), dtype, seed,
    tolerances, inputs (tensor fields with the dtype and init defaults applied) and keyword arguments (attrs, kwmap
    over them)."""
    doc = yaml.safe_load(open(path))
    defaults = doc.get("defaults") or doc.get("default") or {}
    keys = []
    for case in doc["cases"]:
        op = canonical_op(case["op"])
        dtype = case.get("dtype", defaults.get("dtype"))
        seed = case.get("seed", defaults.get("seed"))
        tol = (case.get("rtol", defaults.get("rtol")), case.get("atol", defaults.get("atol")))
        inputs = []
        for item in case.get("inputs") or []:
            if "tensor" in item:
                t = dict(item["tensor"])
                t.setdefault("dtype", dtype)
                t["dtype"] = str(t["dtype"]).replace("torch.", "").replace("float16", "fp16").replace(
                    "bfloat16", "bf16").replace("float32", "fp32")
                t.setdefault("init", "rand")
                t.pop("device", None) if t.get("device", "").startswith("cuda") else None
                inputs.append(("T", repr(sorted(t.items()))))
            else:
                inputs.append(repr(sorted(item.items())))
        kw = dict(case.get("attrs") or {})
        kw.update(case.get("kwmap") or {})
        keys.append(repr((op, dtype, seed, tol, inputs, sorted(kw.items()))))
    return keys


def plan_counts(*args):
    r = opcheck("run", "--collect-only", *args)
    assert r.rc == 0, r
    m = re.search(r"^(\d+) cases, (\d+) unique, (\d+) duplicates? served$", r.out, re.M)
    assert m, r
    return tuple(int(g) for g in m.groups()), r


@pytest.mark.parametrize("folder,model,n", PAIRS)
def test_base_and_spyre_pair_dedupe_counts_match_independent_count(folder, model, n):
    files = [folder / f"{model}.yaml", folder / f"{model}_spyre.yaml"]
    keys = independent_keys(files[0]) + independent_keys(files[1])
    (cases, unique, served), r = plan_counts("--manifests", *files, "--variant", "all")
    assert cases == len(keys) == 2 * n
    assert unique == len(set(keys)), r
    assert served == cases - unique
    assert served > 0


@pytest.mark.parametrize("folder,names", [
    pytest.param(OWN_SPYRE, ["tiny-llama.yaml", "tiny-gpt.yaml"], id="own"),
    pytest.param(SPYRE, ["Meta-Llama-3.1-8B-Instruct.yaml", "gpt-oss-20b.yaml"], id="corpus", marks=pytest.mark.corpus)])
def test_every_model_dedupes_like_the_independent_count(folder, names):
    for name in names:
        keys = independent_keys(folder / name)
        (cases, unique, _), r = plan_counts("--manifests", folder / name)
        assert (cases, unique) == (len(keys), len(set(keys))), (name, r)


def test_no_dedupe_runs_every_occurrence():
    (cases, unique, served), _ = plan_counts("--manifests", OWN_SPYRE / "tiny-gpt.yaml", "--no-dedupe")
    assert cases == unique == 34 and served == 0


@pytest.mark.parametrize("folder,model,n", PAIRS)
def test_duplicates_name_their_first_occurrence(folder, model, n):
    # The base file and its backend variant share calls (same op, shapes and dtypes under different names). The
    # listing names each unique case (its first occurrence in load order, base file first), then `also ID` for each
    # later occurrence it serves.
    files = [folder / f"{model}.yaml", folder / f"{model}_spyre.yaml"]
    names = {path: [case["name"] for case in yaml.safe_load(open(path))["cases"]] for path in files}
    # A case name both files use is told apart by its file's stem (docs/running.md, "Choosing cases").
    shared = set(names[files[0]]) & set(names[files[1]])
    expected, first_of_key = {}, {}
    for path in files:
        for name, key in zip(names[path], independent_keys(path)):
            case_id = f"{model}::{path.stem}/{name}" if name in shared else f"{model}::{name}"
            if key in first_of_key:
                expected[case_id] = first_of_key[key]
            else:
                first_of_key[key] = case_id
    r = opcheck("run", "--collect-only", "--manifests", *files, "--variant", "all")
    assert r.rc == 0, r
    named, first = {}, None
    for line in r.out.splitlines():
        if line.startswith("    also "):
            named[line[len("    also "):]] = first
        elif "::" in line and not line.startswith(" "):
            first = line.split()[0]
    # Within the base file and across the pair (a _spyre case served by a base case).
    assert any(dup.endswith("_spyre") and not first.endswith("_spyre") for dup, first in expected.items())
    assert named == expected, r


def test_shards_partition_the_unique_cases():
    files = ["--manifests", OWN_SPYRE / "tiny-gpt.yaml"]
    (_, unique, _), _ = plan_counts(*files)
    seen = []
    for i in range(3):
        r = opcheck("run", "--collect-only", *files, "--shard", f"{i}/3")
        assert r.rc == 0, r
        seen += [l.split()[0] for l in r.out.splitlines() if l and not l.startswith(" ") and "::" in l]
    assert len(seen) == unique == len(set(seen))


def test_spellings_of_one_function_share_one_key(tmp_path):
    # F.silu and torch.nn.functional.silu resolve to the same op, so they are one call; so are an operator spelling
    # and the function it calls.
    spellings = [["F.silu", "torch.nn.functional.silu", "torch._C._nn.silu"],
                 ["operator.truediv", "torch.Tensor.__truediv__", "torch.div"],
                 ["torch.Tensor.__and__", "operator.and_", "torch.and_"]]
    lines = ["model: spellings", "defaults: {dtype: fp32, seed: 3}", "cases:"]
    for group, ops in enumerate(spellings):
        for i, op in enumerate(ops):
            dtype = "bool" if "and" in op else "fp32"
            lines += [f"  - name: g{group}_{i}", f"    op: {op}",
                      f"    inputs: [{{tensor: {{shape: [4], dtype: {dtype}}}}}"
                      + ("]" if group == 0 else f", {{tensor: {{shape: [4], dtype: {dtype}}}}}]")]
    (tmp_path / "spellings.yaml").write_text("\n".join(lines) + "\n")
    (cases, unique, served), r = plan_counts("--manifests", tmp_path / "spellings.yaml")
    assert (cases, unique, served) == (9, 3, 6), r
    keys = [repr((canonical_op(op),)) for ops in spellings for op in ops]
    assert len(set(keys)) == 3
    # And they run as one call each: every occurrence passes on cpu.
    r = opcheck("run", "--manifests", tmp_path / "spellings.yaml", "--device", "cpu", "--artifact-dir", tmp_path / "a")
    assert r.rc == 0 and "9 passed" in r.last_line, r
