"""Module cases' cost (docs/modules.md, docs/performance.md): on the real-size Granite 3.3 8B decoder layer (hidden
4096, intermediate 12800, 32 heads, 8 key/value heads, a bf16 prefill of 128 tokens; 0.2 B parameters),

- overhead: `opcheck run` of the module case on --device cpu against a floor, a plain Python script that does the
  work no runner avoids (import transformers, build the seeded module, copy it to the device and to float64, build
  the inputs, run the three forwards), each as a whole process, median of --reps runs; goal <= 1.3x;
- trace: the extra time of the same case when it fails (a loopback fault on aten::silu, so the trace runs) over the
  case's own time when it passes, on the loopback; goal <= 3x.

Writes bench-results/bench_modules.json and prints a PASS/MISS table. Not part of CI."""
import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]

CONFIG = """test_suite_config:
  files:
    - path: ${TORCH_ROOT}/test/test_modules.py
      tests:
        - names: ['*TestModule*::test_forward']
          tags: [model__bench_granite]
          edits:
            modules:
              include:
                - name: GraniteDecoderLayer_layer0
                  module_path: transformers.models.granite.modeling_granite.GraniteDecoderLayer
                  constructor_inputs:
                    args: [{value: '<config:transformers.models.granite.configuration_granite.GraniteConfig>'}]
                    kwargs: {layer_idx: 0}
                  sizes: {hidden_size: 4096, intermediate_size: 12800, num_attention_heads: 32, num_key_value_heads: 8}
                  forward_inputs:
                    - args: [{tensor: {shape: [1, 128, 4096], dtype: torch.bfloat16, init: randn}}]
                      kwargs:
                        position_ids: {tensor: {shape: [1, 128], dtype: torch.int64, init: arange}}
                        position_embeddings:
                          tensor_list:
                            - {shape: [1, 128, 128], dtype: torch.bfloat16, init: uniform, init_args: {low: -1, high: 1}}
                            - {shape: [1, 128, 128], dtype: torch.bfloat16, init: uniform, init_args: {low: -1, high: 1}}
  global:
    supported_dtypes:
      - {name: float16, precision: {atol: 0.005, rtol: 0.005}}
    input_config: {seed: 123}
"""

FLOOR = r"""
import copy, torch
from transformers.models.granite.configuration_granite import GraniteConfig
from transformers.models.granite.modeling_granite import GraniteDecoderLayer
config = GraniteConfig(hidden_size=4096, intermediate_size=12800, num_attention_heads=32, num_key_value_heads=8)
config.head_dim = 128
config._attn_implementation = "eager"
torch.manual_seed(123)
cpu = GraniteDecoderLayer(config, layer_idx=0).eval().to(torch.bfloat16)
wide = copy.deepcopy(cpu).to(torch.float64)
dev = copy.deepcopy(cpu)
x = torch.randn(1, 128, 4096, dtype=torch.bfloat16)
pos = torch.arange(128).unsqueeze(0)
cos = torch.rand(1, 128, 128, dtype=torch.bfloat16) * 2 - 1
sin = torch.rand(1, 128, 128, dtype=torch.bfloat16) * 2 - 1
with torch.no_grad():
    cpu(x, position_ids=pos, position_embeddings=(cos, sin))
    dev(x, position_ids=pos, position_embeddings=(cos, sin))
    wide(x.double(), position_ids=pos, position_embeddings=(cos.double(), sin.double()))
"""


def timed(cmd, env=None):
    t0 = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, **(env or {})})
    return time.perf_counter() - t0, r


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build-dir", default=str(ROOT / "build"))
    ap.add_argument("--out", default=str(ROOT / "bench-results"))
    ap.add_argument("--reps", type=int, default=3)
    args, _ = ap.parse_known_args()
    opcheck = pathlib.Path(args.build_dir) / "opcheck"
    python = os.environ.get("OPCHECK_PYTHON", sys.executable)
    work = pathlib.Path(tempfile.mkdtemp(prefix="opcheck-bench-modules."))
    (work / "granite.yaml").write_text(CONFIG)
    (work / "floor.py").write_text(FLOOR)
    run = [str(opcheck), "run", "--manifests", str(work / "granite.yaml"), "--tb", "no", "-j", "1"]
    floor, own, passing, failing, case_ms = [], [], [], [], []
    for _ in range(args.reps):
        t, r = timed([python, str(work / "floor.py")])
        assert r.returncode == 0, r.stderr[-2000:]
        floor.append(t)
        t, r = timed(run + ["--device", "cpu"])
        assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
        own.append(t)
        t, r = timed(run + ["--device", "loopback", "--metrics-json", str(work / "pass.json")])
        assert r.returncode == 0, r.stdout[-2000:]
        passing.append(t)
        timings = json.loads((work / "pass.json").read_text())["cases"][0]["timings"]
        case_ms.append(sum(timings[k] for k in ("materialize_ms", "reference_ms", "device_ms", "compare_ms",
                                                "golden_ms")))
        t, r = timed(run + ["--device", "loopback"], env={"OPCHECK_LOOPBACK_FAULTS": "aten::silu=bias:1e-1"})
        assert r.returncode == 1 and "aten::silu is wrong with right inputs" in r.stdout, r.stdout[-2000:]
        failing.append(t)
    med = statistics.median
    overhead = med(own) / med(floor)
    case_s = med(case_ms) / 1000.0
    trace = (med(failing) - med(passing)) / case_s
    rows = [("module case overhead: opcheck run --device cpu / floor script", overhead, 1.3),
            ("trace: extra time of the failing case / the case's own time (loopback)", trace, 3.0)]
    result = {"floor_s": floor, "opcheck_cpu_s": own, "loopback_pass_s": passing, "loopback_fail_s": failing,
              "case_ms": case_ms, "overhead": overhead, "trace": trace, "load": os.getloadavg()}
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "bench_modules.json").write_text(json.dumps(result, indent=1))
    print(f"real-size GraniteDecoderLayer (load {os.getloadavg()[0]:.2f}), median of {args.reps}:")
    print(f"  floor {med(floor):.2f} s, opcheck --device cpu {med(own):.2f} s; loopback pass {med(passing):.2f} s "
          f"(case {case_s:.2f} s), fail with trace {med(failing):.2f} s")
    ok = True
    for what, value, goal in rows:
        verdict = "PASS" if value <= goal else "MISS"
        ok = ok and verdict == "PASS"
        print(f"  {verdict}  {what}: {value:.2f}x (goal <= {goal}x)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
