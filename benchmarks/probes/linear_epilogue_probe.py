"""Does a bias (and an activation) cost anything in cutlass_ops.linear, against torch?

For model projections in F.linear's layout (x @ W.T + b) it times, side by side and alternated:

* torch ``F.linear(x, W, b)`` (cuBLASLt with its bias epilogue) against ``cutlass_ops.linear(x, W, b)``;
* torch ``F.gelu(F.linear(x, W, b))`` (two kernels) against ``cutlass_ops.linear(..., activation="gelu")``;
* ``cutlass_ops.mm`` without bias, for the price of the epilogue itself.

Timing: the bench's own (cutlass_ops.bench.timing: L2 flushed before each repetition, medians,
the implementations alternated over rounds); the table reports the ratio torch / ours of the
medians (above 1: ours faster) and the kernel the planner ran.

    python benchmarks/probes/linear_epilogue_probe.py [--dtype bf16] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import math
import statistics

import torch
import torch.nn.functional as F
import cutlass_ops
from cutlass_ops.bench.timing import time_alternating

# (tokens, in_features, out_features): Llama-style projections at row counts nobody tunes for.
SHAPES = [(m, k, n) for m in (257, 1000, 3000, 4096) for (k, n) in ((4096, 4096), (4096, 14336), (14336, 4096))]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--dtype", default="bf16", choices=("bf16", "f16"))
    parser.add_argument("--json")
    args = parser.parse_args()
    dtype = {"bf16": torch.bfloat16, "f16": torch.float16}[args.dtype]
    rows = []
    print(f"{'shape (M x K -> N)':22} {'bias: torch/ours':>16} {'gelu: torch/ours':>17} {'bias cost':>10}  kernel")
    for m, k, n in SHAPES:
        x = torch.randn(m, k, device="cuda", dtype=dtype)
        w = torch.randn(n, k, device="cuda", dtype=dtype) / math.sqrt(k)
        b = torch.randn(n, device="cuda", dtype=dtype)
        fns = {
            "torch_bias": lambda: F.linear(x, w, b),
            "ours_bias": lambda: cutlass_ops.linear(x, w, b),
            "torch_gelu": lambda: F.gelu(F.linear(x, w, b)),
            "ours_gelu": lambda: cutlass_ops.linear(x, w, b, activation="gelu"),
            "ours_plain": lambda: cutlass_ops.mm(x, w.t()),
        }
        t = {name: timing.median_ms for name, timing in zip(fns, time_alternating(list(fns.values()), rounds=3))}
        cutlass_ops.reset_stats()
        cutlass_ops.linear(x, w, b, activation="gelu")
        kernel = next(iter(cutlass_ops.stats()["kernels"]), "?")
        row = {"m": m, "k": k, "n": n, "dtype": args.dtype, "kernel": kernel, **{f"{k_}_ms": v for k_, v in t.items()},
               "bias_ratio": t["torch_bias"] / t["ours_bias"], "gelu_ratio": t["torch_gelu"] / t["ours_gelu"],
               "bias_cost": t["ours_bias"] / t["ours_plain"]}
        rows.append(row)
        print(f"{m:>5} x {k:>5} -> {n:<6}   {row['bias_ratio']:16.3f} {row['gelu_ratio']:17.3f} "
              f"{row['bias_cost']:10.3f}  {kernel}")
    gm = lambda key: math.exp(statistics.fmean(math.log(r[key]) for r in rows))  # noqa: E731
    print(f"geomean: bias {gm('bias_ratio'):.3f}x torch, gelu {gm('gelu_ratio'):.3f}x torch (linear then gelu), "
          f"bias costs {gm('bias_cost'):.3f}x the plain product; {torch.cuda.get_device_name()}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(), "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
