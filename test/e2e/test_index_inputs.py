"""Random inputs the op accepts (issue 23), through the real binary: a random index, count or mask is drawn within what
the other arguments allow, so the CPU reference never raises on values the manifest left to chance; each narrowing is
a warning at the tensor's line naming the case, the argument and the bound; pinned values are kept, and when they make
the reference raise its error names the argument and the bound; an input that needed no narrowing keeps its bytes."""
import json
import os
import subprocess

import pytest

from conftest import FIXTURES, opcheck, write_manifest

PYTHON = os.environ.get("OPCHECK_PYTHON", "python3")


def tensor(shape, dtype, init, args=None, indent="      "):
    lines = [f"{indent}- tensor:", f"{indent}    shape: {shape}", f"{indent}    dtype: {dtype}", f"{indent}    init: {init}"]
    if args:
        lines.append(f"{indent}    init_args: {args}")
    return lines


def case(name, op, *inputs, kwargs=None):
    lines = [f"  - name: {name}", f"    op: {op}", "    inputs:"]
    for i in inputs:
        lines += i
    if kwargs:
        lines.append(f"    kwargs: {kwargs}")
    return lines


def value(v):
    return [f"      - value: {v}"]


CASES = [
    case("getitem_random", "torch.getitem", tensor("[11, 4]", "fp32", "rand"),
         tensor("[6]", "int64", "randint", "{high: 1000}")),
    case("gather_random", "torch.gather", tensor("[3, 5]", "fp32", "rand"), value(1),
         tensor("[3, 4]", "int64", "randint", "{high: 100}")),
    case("index_select_random", "torch.index_select", tensor("[7, 3]", "fp32", "rand"), value(0),
         tensor("[4]", "int64", "randint", "{low: -5, high: 50}")),
    case("embedding_random", "torch.nn.functional.embedding", tensor("[2, 3]", "int64", "randint", "{high: 1000}"),
         tensor("[10, 4]", "fp32", "rand")),
    case("masked_scatter_random", "torch.masked_scatter", tensor("[4, 4]", "fp32", "rand"),
         tensor("[4, 4]", "bool", "rand"), tensor("[5]", "fp32", "rand")),
    case("take_negative", "torch.take", tensor("[2, 3]", "fp32", "rand"),
         tensor("[8]", "int64", "randint", "{low: -100, high: 100}")),
    case("getitem_within", "torch.getitem", tensor("[11, 4]", "fp32", "rand"),
         tensor("[5]", "int64", "randint", "{high: 11}")),
    case("getitem_written_narrow", "torch.getitem", tensor("[11, 4]", "fp32", "rand"),
         tensor("[6]", "int64", "randint", "{high: 11}")),
    case("index_select_pinned", "torch.index_select", tensor("[7, 3]", "fp32", "rand"), value(0),
         ["      - tensor:", "          shape: [2]", "          dtype: int64", "          init: data",
          "          data: [0, 12]"]),
    case("masked_scatter_pinned", "torch.masked_scatter", tensor("[2, 2]", "fp32", "rand"),
         ["      - tensor:", "          shape: [2, 2]", "          dtype: bool", "          init: data",
          "          data: [[true, true], [true, false]]"], tensor("[2]", "fp32", "rand")),
    case("masked_scatter_pinned_broadcast", "torch.masked_scatter", tensor("[2, 3]", "fp32", "rand"),
         ["      - tensor:", "          shape: [1, 3]", "          dtype: bool", "          init: data",
          "          data: [[true, true, false]]"], tensor("[3]", "fp32", "rand")),
]
NARROWED = ["getitem_random", "gather_random", "index_select_random", "embedding_random", "masked_scatter_random",
            "take_negative"]


def line_of(path, text, after):
    """1-based line of the first line containing `text` after the line containing `after`."""
    lines = path.read_text().splitlines()
    start = next(i for i, l in enumerate(lines) if after in l)
    return next(i for i in range(start, len(lines)) if text in lines[i]) + 1


@pytest.fixture(scope="module")
def manifest(tmp_path_factory):
    return write_manifest(tmp_path_factory.mktemp("m") / "idx.yaml", "idx", CASES)


@pytest.fixture(scope="module")
def run(manifest, tmp_path_factory):
    out = tmp_path_factory.mktemp("run")
    r = opcheck("run", "--manifests", manifest, "--device", "cpu", "--metrics-json", out / "m.json",
                "--artifact-dir", out / "art", "--results-cache", out / "cache.jsonl", "-j", "1")
    metrics = json.loads((out / "m.json").read_text())
    return r, metrics, {c["name"]: c for c in metrics["cases"]}, out


@pytest.mark.parametrize("name", NARROWED)
def test_random_indices_and_masks_reach_a_verdict_on_the_cpu(run, name):
    r, _, cases, _ = run
    assert cases[name]["stage"] == "PASSED", (cases[name], r)


def test_the_warning_names_file_line_case_argument_and_bound(manifest):
    r = opcheck("validate", "--manifests", manifest)
    # The index tensor's line: its first key, as every located problem of a tensor is.
    expected = f"{manifest}:{line_of(manifest, 'shape: [4]', 'index_select_random')}"
    warnings = [l for l in r.err.splitlines() if ": warning: " in l]
    sel = [w for w in warnings if "[case idx::index_select_random]" in w]
    assert len(sel) == 1, r
    assert sel[0].startswith(expected + ":"), (sel[0], expected)
    assert sel[0].split(": warning: ")[1] == (
        "index: randint low -5 narrowed to 0, high 50 narrowed to 7, the size of dim 0 of input "
        "[case idx::index_select_random]"), sel[0]
    by_case = {w.split("[case ")[1].rstrip("]"): w.split(": warning: ")[1].split(" [case")[0] for w in warnings}
    assert by_case == {
        "idx::getitem_random": "index: randint high 1000 narrowed to 11, the size of dim 0 of self",
        "idx::gather_random": "index: randint high 100 narrowed to 5, the size of dim 1 of input",
        "idx::index_select_random":
            "index: randint low -5 narrowed to 0, high 50 narrowed to 7, the size of dim 0 of input",
        "idx::embedding_random": "input: randint high 1000 narrowed to 10, the size of dim 0 of weight",
        "idx::masked_scatter_random": "mask: rand may draw 16 true values; max_true narrowed to 5, "
                                      "the 5 elements of source",
        "idx::take_negative": "index: randint low -100 narrowed to -6, high 100 narrowed to 6, the 6 elements of input",
    }, by_case


def test_a_run_records_the_narrowing_warnings(run):
    _, metrics, _, _ = run
    text = "\n".join(metrics["run"]["warnings"])
    for name in NARROWED:
        assert f"[case idx::{name}]" in text, text


def test_a_narrowed_case_shares_its_key_with_the_same_call_written_narrow(run):
    # The key is that of the range drawn: the call written with high 11 is the same call and runs once.
    _, _, cases, _ = run
    assert cases["getitem_random"]["key"] == cases["getitem_written_narrow"]["key"], cases
    assert cases["getitem_written_narrow"]["deduplicated_from"] == "idx::getitem_random", cases["getitem_written_narrow"]


def test_pinned_indices_are_kept_and_the_reference_error_names_the_bound(run):
    _, _, cases, _ = run
    c = cases["index_select_pinned"]
    assert c["stage"] == "FAILED_REFERENCE", c
    assert "index holds 12, outside [0, 7), the size of dim 0 of input" in c["message"], c["message"]


def test_a_pinned_mask_is_kept_and_the_reference_error_names_the_source_size(run):
    _, _, cases, _ = run
    c = cases["masked_scatter_pinned"]
    assert c["stage"] == "FAILED_REFERENCE", c
    assert "mask holds 3 true values, more than 2 (the 2 elements of source)" in c["message"], c["message"]
    # A mask that broadcasts over self gives each true value once per row it repeats along.
    c = cases["masked_scatter_pinned_broadcast"]
    assert c["stage"] == "FAILED_REFERENCE", c
    assert ("mask holds 4 true values as broadcast, more than 3 (the 3 elements of source, each true value taking 2 "
            "as the mask broadcasts)") in c["message"], c["message"]


def python_digest(code):
    out = subprocess.run([PYTHON, "-c", "import hashlib, torch\n" + code +
                          "\nprint(hashlib.sha256(t.contiguous().numpy().tobytes()).hexdigest())"],
                         capture_output=True, text=True, check=True)
    return out.stdout.strip()


def test_an_input_within_the_bound_keeps_its_bytes(run):
    _, _, cases, _ = run
    # Input 1 of a case with seed 0: torch.manual_seed(0 + 1000 * 1), then the recipe as written.
    want = python_digest("torch.manual_seed(1000); t = torch.randint(0, 11, [5], dtype=torch.int64)")
    assert cases["getitem_within"]["input_digests"][1] == want, cases["getitem_within"]


def test_a_narrowed_input_is_drawn_from_the_narrowed_range(run):
    _, _, cases, _ = run
    want = python_digest("torch.manual_seed(1000); t = torch.randint(0, 11, [6], dtype=torch.int64)")
    assert cases["getitem_random"]["input_digests"][1] == want, cases["getitem_random"]


def test_a_capped_mask_keeps_its_first_true_values(run):
    _, _, cases, _ = run
    mask = python_digest("torch.manual_seed(1000); m = torch.randint(0, 2, [4, 4], dtype=torch.bool)\n"
                         "t = m & (m.reshape(-1).cumsum(0) <= 5).reshape(m.shape)")
    assert cases["masked_scatter_random"]["input_digests"][1] == mask, cases["masked_scatter_random"]


def reuse(manifest, cache, folder):
    r = opcheck("run", "--manifests", manifest, "--device", "cpu", "--artifact-dir", folder, "--results-cache", cache,
                "--reuse-results", "-j", "1")
    return r.out + r.err


def test_keys_carry_the_new_version_and_an_older_cache_is_not_served(run, manifest, tmp_path):
    _, _, cases, out = run
    assert all(c["key"].startswith("k4:") for c in cases.values()), [c["key"] for c in cases.values()]
    # The cache this version wrote is served, so not being served below is the key version's doing.
    assert "unchanged cases served from" in reuse(manifest, out / "cache.jsonl", tmp_path / "a")
    # A results cache filed under the previous key version, as an older opcheck wrote it: never served.
    old = tmp_path / "old.jsonl"
    old.write_text((out / "cache.jsonl").read_text().replace("k4:", "k3:").replace('"k4"', '"k3"'))
    text = reuse(manifest, old, tmp_path / "b")
    assert "unchanged cases served from" not in text, text


@pytest.mark.corpus
def test_a_real_v2_config_with_an_index_drawn_past_its_dim_reaches_a_verdict(tmp_path):
    # torch-spyre's gpt-oss config indexes hidden_states [11, 2880] with token_idx; real manifests write high 1000 for
    # such an index (issue 23), as this copy does.
    text = (FIXTURES / "torch-spyre-v2" / "gpt-oss-20b.yaml").read_text()
    entry = text.index("- torch.getitem.9")
    at = text.rindex("high: 11", 0, entry)
    config = tmp_path / "gpt-oss-20b.yaml"
    config.write_text(text[:at] + "high: 1000" + text[at + len("high: 11"):])
    index_line = text[:text.rindex("shape: [44]", 0, at)].count("\n") + 1
    r = opcheck("run", "--manifests", config, "--device", "cpu", "gpt-oss-20b::torch.getitem.9",
                "--metrics-json", tmp_path / "m.json", "--artifact-dir", tmp_path / "art", "-j", "1")
    m = json.loads((tmp_path / "m.json").read_text())
    assert [(c["id"], c["stage"]) for c in m["cases"]] == [("gpt-oss-20b::torch.getitem.9", "PASSED")], r
    want = (f"{config}:{index_line}:27: warning: index: randint high 1000 narrowed to 11, the size of dim 0 of self "
            "[case gpt-oss-20b::torch.getitem.9]\n  Fix: ")
    assert any(w.startswith(want) for w in m["run"]["warnings"]), m["run"]["warnings"]
