"""Failure groups name the op that failed, not the allocations, views and copies around it, through the real binary
on the loopback over the bundled manifests: one injected device bug is one group naming its op (a dtype-blind copy, a
copy that refuses non-contiguous tensors, a kernel missing for one dtype, a biased copy); a signature holds nothing
that changes from run to run, so the same run twice diffs as no change; and a group's dtypes are its calls' own."""
import json
import re
import xml.etree.ElementTree as ET

import pytest

from conftest import OWN_SPYRE, SOURCE_DIR, opcheck, write_manifest

BUNDLED = SOURCE_DIR / "manifests"


def run(tmp_path, name, faults, *extra, manifests=BUNDLED):
    out = tmp_path / name
    env = {"OPCHECK_LOOPBACK_FAULTS": faults} if faults else {}
    tb = [] if "--tb" in extra else ["--tb", "no"]
    report = [] if "-r" in extra else ["-r", "N"]
    r = opcheck("run", "--manifests", manifests, "--device", "loopback", *tb, *report,
                "--metrics-json", out / "m.json", "--artifact-dir", out / "art", *extra, env=env)
    assert r.rc in (0, 1), r
    return r, json.loads((out / "m.json").read_text())


def failing(m):
    return [c for c in m["cases"] if c["outcome"] in ("failed", "error", "not_supported")]


@pytest.mark.parametrize("fault,stage,op", [
    # The copy converts no dtype: torch.to and torch.float come back as reinterpreted bytes.
    ("aten::_copy_from=ignore_dtype", "INCORRECT_RESULT", "aten::_copy_from"),
    # The copy refuses a non-contiguous tensor: moving a strided input, a transposed output, or .contiguous() in the
    # call is the one bug, though the cases fail at two stages.
    ("aten::_copy_from=contiguous_only", "FAILED_TRANSFER", "aten::_copy_from"),
    # fill_ lacks a kernel (for bool, which the causal mask of scaled_dot_product_attention fills): the missing
    # kernel is named, not the op the case called.
    ("aten::fill_.Scalar=notimpl:Bool", "NOT_SUPPORTED", "aten::fill_.Scalar for Bool"),
    ("aten::fill_.Scalar=notimpl", "NOT_SUPPORTED", "aten::fill_.Scalar"),
    # Every transfer adds 0.1: every case with a floating tensor fails, whatever its op; the copy is to blame.
    ("aten::_copy_from=bias:1e-1", "INCORRECT_RESULT", "aten::_copy_from"),
])
def test_one_device_bug_is_one_group_naming_its_op(tmp_path, fault, stage, op):
    r, m = run(tmp_path, "run", fault)
    bad = failing(m)
    groups = m["failure_groups"]
    assert len(bad) > 1 and r.rc == 1, r
    assert [(g["stage"], g["op"], g["count"]) for g in groups] == [(stage, op, len(bad))], groups
    headers = re.findall(r"^#\d+ .*$", r.out, re.M)
    if stage == "NOT_SUPPORTED":  # the missing kernel, its dtype and the device, as the example's message says
        assert len(headers) == 1 and f" {stage} [" in headers[0] and f"]: {op} has no kernel for " in headers[0], \
            headers
    else:
        assert len(headers) == 1 and f" {stage} in {op}: " in headers[0], headers


SHORT = {"float16": "fp16", "bfloat16": "bf16", "float32": "fp32", "float64": "fp64", "int64": "int64", "int32": "int32",
         "bool": "bool"}


# The conversion methods, by the dtype they give (torch.float(x) is x converted to float32).
METHODS = {"float": "float32", "half": "float16", "bfloat16": "bfloat16", "double": "float64", "long": "int64",
           "int": "int32", "bool": "bool"}


def own_dtype(name, call):
    """Whether a dtype is one of a call's own: a tensor's, a dtype argument's, or what its conversion method gives."""
    op = call.split("(")[0].rsplit(".", 1)[-1]
    return SHORT[name] + "[" in call or "torch." + name in call or METHODS.get(op) == name


def test_a_transfer_that_changes_values_says_so(tmp_path):
    """The copy named is one between the case's own dtypes (in its call: a tensor's, or its dtype= keyword's);
    a conversion the call makes inside it (scaled_dot_product_attention's bf16 made float32), to a dtype that is not
    the case's, is said without naming it."""
    r, m = run(tmp_path, "run", "aten::_copy_from=ignore_dtype", "--tb", "short")
    unnamed = {"a dtype the call makes inside", "another dtype"}
    for c in failing(m):
        first, second = c["message"].split("\n")[:2]
        assert first == "the device's aten::_copy_from changes values: a copy round trip differs", c
        names = re.match(r"(.+?) converted to (.+?) on \S+: ", second)
        assert names, c
        for n in names.groups():
            assert n in unnamed or own_dtype(n, c["call"]), (n, c["call"], second)
    assert any("converted to another dtype" in c["message"] for c in failing(m)), [c["message"] for c in failing(m)]
    assert "the device's aten::_copy_from changes values: a copy round trip differs" in r.out, r


def test_the_op_that_raised_is_marked_in_the_record(tmp_path):
    _, m = run(tmp_path, "run", "aten::_copy_from=contiguous_only")
    for c in failing(m):
        assert "injected fault" in c["message"] and "_copy_from" not in c["message"].split("\n")[0], c
        assert [d["op"] for d in c["device_ops"] if d.get("raised")] == ["aten::_copy_from"], c


def test_the_same_run_twice_has_the_same_signatures_and_diff_reports_no_change(tmp_path):
    fault = "aten::mul.Tensor=garbage;aten::add.Tensor=garbage"
    r1, m1 = run(tmp_path, "first", fault, "-j", "2")
    r2, m2 = run(tmp_path, "second", fault, "-j", "2")
    sigs1 = [(g["signature"], g["count"]) for g in m1["failure_groups"]]
    assert sigs1 and sigs1 == [(g["signature"], g["count"]) for g in m2["failure_groups"]], (sigs1, m2["failure_groups"])
    assert all("also differs" not in s for s, _ in sigs1), sigs1
    d = opcheck("diff", tmp_path / "first" / "m.json", tmp_path / "second" / "m.json")
    assert d.rc == 0, d
    assert "New failure groups" not in d.out and "Failure groups gone" not in d.out, d
    assert d.out.startswith("opcheck diff: 0 regressions, 0 fixed, 0 added, 0 removed, 0 other changes"), d


def test_whether_the_runs_also_differed_is_a_detail_not_the_signature(tmp_path):
    # Garbage differs between the two device runs of a case; with one run nothing can differ. The bug is the same.
    fault = "aten::mul.Tensor=garbage"
    _, two = run(tmp_path, "two", fault)
    _, one = run(tmp_path, "one", fault, "--repeat", "1")
    assert any("(also differs between runs)" in c["message"] for c in failing(two))
    assert not any("(also differs between runs)" in c["message"] for c in failing(one))
    assert [g["signature"] for g in two["failure_groups"]] == [g["signature"] for g in one["failure_groups"]]
    differed = sum("(also differs between runs)" in c["message"] for c in failing(two))
    assert sum(g["differs_between_runs"] for g in two["failure_groups"]) == differed > 0, two["failure_groups"]
    assert sum(g["differs_between_runs"] for g in one["failure_groups"]) == 0


def test_one_missing_half_kernel_reached_by_three_ops_is_one_group(tmp_path):
    manifest = write_manifest(tmp_path / "half.yaml", "half", [
        ["  - name: ones", "    op: torch.ones", "    inputs: [{value: [2, 3]}]",
         "    kwmap: {dtype: torch.float16, device: cuda}"],
        ["  - name: full", "    op: torch.full", "    inputs: [{value: [4]}, {value: 1.5}]",
         "    kwmap: {dtype: torch.float16, device: cuda}"],
        ["  - name: new_ones", "    op: torch.Tensor.new_ones", "    dtype: fp16",
         "    inputs: [{tensor: {shape: [3, 4]}}, {value: [2, 2]}]"],
        ["  - name: add", "    op: torch.add", "    inputs: [{tensor: {shape: [3, 4]}}, {tensor: {shape: [3, 4]}}]"],
    ])
    r, m = run(tmp_path, "half", "aten::fill_.Scalar=notimpl:Half", manifests=manifest)
    assert [(c["id"], c["outcome"]) for c in m["cases"]] == [
        ("half::ones", "not_supported"), ("half::full", "not_supported"), ("half::new_ones", "not_supported"),
        ("half::add", "passed")], r
    assert [(g["op"], g["count"], g["ops"]) for g in m["failure_groups"]] == [
        ("aten::fill_.Scalar for Half", 3, ["torch.Tensor.new_ones", "torch.full", "torch.ones"])], m["failure_groups"]
    for c in failing(m):
        assert c["message"].startswith("aten::fill_.Scalar for Half has no kernel for PrivateUse1 (loopback): "), c


def test_groups_and_headers_name_the_dtype_of_the_call(tmp_path):
    # The torch-spyre dialect's cases default to fp16; lt's call is about an int64 tensor, embedding's about its bf16
    # weight (the floating input), index_copy_'s about fp32.
    r, m = run(tmp_path, "spyre", "aten::lt=throw;aten::embedding=throw;aten::index_copy_=throw", "--tb", "short",
               manifests=OWN_SPYRE)
    groups = {g["op"]: g["dtypes"] for g in m["failure_groups"]}
    assert groups == {"aten::lt.Scalar": ["int64"], "aten::embedding": ["bf16"], "aten::index_copy_": ["fp32"]}, groups
    assert re.search(r"torch\.lt -> aten::lt\.Scalar \[FAILED_RUNTIME\] int64\ncall: torch\.lt\(int64\[1,11\]", r.out), r
    # The record names the same dtype as the group: the case's own (its tensors'), not the dialect's default.
    assert {(c["op"], c["dtype"]) for c in failing(m)} == {
        ("torch.lt", "int64"), ("torch.nn.functional.embedding", "bf16"), ("torch.index_copy_", "fp32")}, [
        (c["op"], c["dtype"]) for c in failing(m)]


def test_a_copy_that_raises_in_the_call_is_a_failed_transfer_in_the_records_as_in_its_group(tmp_path):
    # A copy that refuses a non-contiguous tensor fails moving an input and inside the call (.contiguous(), a
    # transposed matmul): the case line, metrics, JUnit and the group all say FAILED_TRANSFER, read from the case.
    r, m = run(tmp_path, "run", "aten::_copy_from=contiguous_only", "--junit-xml", tmp_path / "j.xml",
                "-r", "fE")
    bad = failing(m)
    group_of = {i: g["stage"] for g in m["failure_groups"] for i in g["cases"]}
    assert bad and {c["id"]: c["stage"] for c in bad} == {c["id"]: group_of[c["id"]] for c in bad}, \
        [(c["id"], c["stage"], group_of.get(c["id"])) for c in bad if c["stage"] != group_of.get(c["id"])]
    grouped = sum(g["count"] for g in m["failure_groups"] if g["stage"] == "FAILED_TRANSFER")
    assert m["stages"].get("FAILED_TRANSFER") == grouped, (m["stages"], grouped)
    junit = [e.get("type") for e in ET.parse(tmp_path / "j.xml").iter() if e.tag in ("failure", "error")]
    assert junit.count("FAILED_TRANSFER") == grouped and "FAILED_RUNTIME" not in junit, junit
    lines = re.findall(r"^(?:FAILED|ERROR) \S+ \[([A-Z_]+)\]", r.out, re.M)
    assert lines.count("FAILED_TRANSFER") == grouped and "FAILED_RUNTIME" not in lines, lines
