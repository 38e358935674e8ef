"""Synthetic manifests for fault, shard, resume and benchmark runs: many tiny cases over several models, a chosen
fraction of them the same call in two models (so dedupe has work to do).

    python3 test/e2e/synth.py OUT_DIR --models 4 --cases 2500 --dup 0.3
"""
import argparse
import pathlib
import random

# (op, inputs builder) over small fp32 tensors; each returns the YAML lines of `inputs:`.
UNARY = ["torch.exp", "torch.neg", "torch.sin", "torch.cos", "torch.sigmoid", "torch.abs", "torch.tanh"]
BINARY = ["torch.add", "torch.mul", "torch.sub", "torch.maximum"]


def tensor(shape, init="rand", extra=""):
    return f"      - tensor: {{shape: {list(shape)}, init: {init}{extra}}}"


def case_lines(name, op, shape, seed, second=None):
    lines = [f"  - name: {name}", f"    op: {op}", f"    seed: {seed}", "    inputs:", tensor(shape)]
    if second is not None:
        lines.append(second)
    return lines


def make_case(rng, i, ops):
    shape = [rng.choice([1, 2, 3, 4, 8]), rng.choice([4, 8, 16, 32])]
    op = ops[i % len(ops)]
    seed = rng.randrange(1 << 20)
    if op in BINARY:
        return op, shape, seed, tensor(shape)
    if op == "torch.nn.functional.softmax":
        return op, shape, seed, "      - value: -1"
    return op, shape, seed, None


def generate(out, models=4, cases=50, dup=0.3, ops=None, seed=1, compare=None):
    """Writes OUT/model_<m>.yaml files; returns {model: [case names]} and the list of shared calls."""
    rng = random.Random(seed)
    ops = ops or UNARY + BINARY + ["torch.nn.functional.softmax"]
    out = pathlib.Path(out)
    out.mkdir(parents=True, exist_ok=True)
    shared_pool = [make_case(rng, i, ops) for i in range(max(1, int(cases * dup)))]
    written = {}
    for m in range(models):
        name = f"synth_{m}"
        lines = [f"model: {name}", "defaults:", "  dtype: fp32", "  seed: 7"]
        if compare:
            lines.append(f"  compare: {compare}")
        lines.append("cases:")
        names = []
        for i in range(cases):
            # The first `dup` fraction of every model is the same calls in every model: cross-model duplicates.
            op, shape, s, second = shared_pool[i] if i < len(shared_pool) else make_case(rng, i + 1000 * m, ops)
            case_name = f"{op.split('.')[-1]}.{i}"
            names.append(case_name)
            lines += case_lines(case_name, op, shape, s, second)
        (out / f"{name}.yaml").write_text("\n".join(lines) + "\n")
        written[name] = names
    return written


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--models", type=int, default=4)
    ap.add_argument("--cases", type=int, default=2500, help="cases per model")
    ap.add_argument("--dup", type=float, default=0.3)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    generate(a.out, a.models, a.cases, a.dup, seed=a.seed)
