"""A case's dtypes are those of its own inputs and outputs, through the real binary on the loopback: a conversion the
transfer check names is one the case makes (never one of the check's own probes), and a factory's `dtype=` keyword
is the dtype the case is listed under, in the console's groups, the metrics, JUnit, HTML and list-cases."""
import json
import re
import xml.etree.ElementTree as ET

from conftest import opcheck


def test_a_transfer_check_names_a_conversion_the_case_makes(tmp_path):
    """A bf16 tensor converted to fp32 on a device whose copy ignores the dtype: the message names bfloat16 converted
    to float32, not a conversion of bool or int64 the case never makes."""
    m = tmp_path / "m.yaml"
    m.write_text("model: conv\ncases:\n"
                 "  - name: bf16_to_fp32\n    op: torch.Tensor.to\n"
                 "    inputs:\n      - tensor: {shape: [4, 4], dtype: bf16}\n    kwmap: {dtype: torch.float32}\n")
    r = opcheck("run", "--manifests", m, "--device", "loopback", "--tb", "short", "--metrics-json", tmp_path / "j.json",
                "--artifact-dir", tmp_path / "a", env={"OPCHECK_LOOPBACK_FAULTS": "aten::_copy_from=ignore_dtype"})
    assert r.rc == 1, r
    [rec] = json.loads((tmp_path / "j.json").read_text())["cases"]
    lead, named = rec["message"].split("\n")[:2]
    assert lead == "the device's aten::_copy_from changes values: a copy round trip differs", rec["message"]
    assert re.match(r"bfloat16 converted to float32 on \S+: ", named), rec["message"]
    assert not re.search(r"\b(bool|int64)\b", rec["message"]), rec["message"]
    assert rec["dtype"] == "bf16", rec


def test_a_factory_is_listed_under_its_dtype_keyword(tmp_path):
    """full(..., dtype=torch.bfloat16) in a manifest whose default dtype is fp16 is a bf16 case everywhere a case's
    dtype is shown."""
    m = tmp_path / "m.yaml"
    m.write_text("model: fac\ndefaults: {dtype: fp16}\ncases:\n"
                 "  - name: full_bf16\n    op: torch.full\n"
                 "    inputs:\n      - py: \"(2, 3)\"\n      - value: 1.5\n    kwmap: {dtype: torch.bfloat16, device: privateuseone}\n")
    listed = opcheck("list-cases", "--manifests", m, "--json")
    assert listed.rc == 0, listed
    assert [c["dtype"] for c in json.loads(listed.out)] == ["bf16"], listed.out
    for mark, selected in (("dtype__bfloat16", 1), ("dtype__float16", 0)):  # the mark -m selects on says the same
        chosen = opcheck("list-cases", "--manifests", m, "-m", mark, "--json")
        assert len(json.loads(chosen.out or "[]")) == selected, (mark, chosen)
    out = tmp_path / "o"
    r = opcheck("run", "--manifests", m, "--device", "loopback", "--tb", "short", "--metrics-json", out / "j.json",
                "--junit-xml", out / "j.xml", "--html", out / "r.html", "--artifact-dir", out / "a",
                env={"OPCHECK_LOOPBACK_FAULTS": "aten::fill_.Scalar=bias:1e-1"})
    assert r.rc == 1, r
    assert re.search(r"dtypes: bf16\b", r.out) and "fp16" not in r.out, r
    metrics = json.loads((out / "j.json").read_text())
    assert [c["dtype"] for c in metrics["cases"]] == ["bf16"], metrics["cases"]
    assert [g["dtypes"] for g in metrics["failure_groups"]] == [["bf16"]], metrics["failure_groups"]
    props = {p.get("name"): p.get("value") for p in ET.parse(out / "j.xml").iter("property")}
    assert props.get("dtype") == "bf16" and "dtype__bfloat16" in [p.get("value") for p in ET.parse(out / "j.xml").iter(
        "property") if p.get("name") == "tag"], props
    page = (out / "r.html").read_text()
    assert "torch.full · bf16" in page and "torch.full · fp16" not in page, re.findall(r".{60}fp16.{20}", page)[:3]
