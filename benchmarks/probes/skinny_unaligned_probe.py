"""Few-row products whose operands are not 16-byte aligned (odd leading dims, odd offsets):
the alignment-1 streaming kernels (``handwritten_sm80_*_skinny_m_a1``, realigned 16-byte loads,
and ``..._a1_elementwise``, single-element loads) forced, against the planner's pick (auto)
and torch.mm, timed by the benchmarks' own method (``cutlass_ops.bench.timing``: L2 flushed
before every repetition, medians, implementations in alternating rounds).

    python benchmarks/probes/skinny_unaligned_probe.py [--dtype bf16]   # on a GPU, cutlass_ops built

(The figures in docs/findings.md, at 70bc644, came from this probe's earlier loop of its own: one
call per timing after a 256 MB flush, alternating, median of 15.)

Shapes: the sweep's losing class (up to 16 rows, odd N or K) in the row-major (rr) and F.linear
(rc) layouts, from a GEMV through a weight of a few hundred MB to a few KB.
"""

from __future__ import annotations

import argparse
import math

import torch

import cutlass_ops
from cutlass_ops.bench.timing import time_alternating
from cutlass_ops.testing import matrix

SHAPES = [(1, 13629, 6921), (1, 10984, 14263), (3, 9995, 15428), (7, 4097, 4097), (16, 4099, 11001),
          (1, 1001, 1001), (5, 295, 13012), (12, 27, 14705), (1, 22, 223), (2, 10317, 2995)]
DTYPES = {"bf16": torch.bfloat16, "f16": torch.float16, "f32": torch.float32}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dtype", default="bf16", choices=sorted(DTYPES))
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds over the implementations")
    args = parser.parse_args()
    dtype = DTYPES[args.dtype]
    ratios = {"a1": [], "a1_elementwise": [], "auto": []}
    print(f"{'shape':>20} {'layout':>6} {'torch us':>9} {'a1 us':>8} {'elem us':>8} {'auto us':>8} {'a1 x':>6} "
          f"{'elem x':>6} {'auto x':>6}  auto's kernel")
    for m, n, k in SHAPES:
        for layout in ("rr", "rc"):
            a = matrix(m, k, dtype, "r", offset=1)
            b = matrix(k, n, dtype, layout[1], offset=1)
            name = f"handwritten_sm80_{args.dtype}_{layout}_skinny_m_a1"
            calls = {"torch": lambda: torch.mm(a, b), "a1": lambda: cutlass_ops.mm(a, b, kernel=name),
                     "a1_elementwise": lambda: cutlass_ops.mm(a, b, kernel=name + "_elementwise"),
                     "auto": lambda: cutlass_ops.mm(a, b)}
            timings = time_alternating(list(calls.values()), rounds=args.rounds)
            t = {key: timing.median_ms * 1000 for key, timing in zip(calls, timings)}
            for key in ratios:
                ratios[key].append(t["torch"] / t[key])
            pick = cutlass_ops.explain(a, b).kernel
            print(f"{f'{m}x{n}x{k}':>20} {layout:>6} {t['torch']:9.1f} {t['a1']:8.1f} {t['a1_elementwise']:8.1f} "
                  f"{t['auto']:8.1f} {t['torch'] / t['a1']:6.2f} {t['torch'] / t['a1_elementwise']:6.2f} "
                  f"{t['torch'] / t['auto']:6.2f}  {pick}")
    for key, v in ratios.items():
        print(f"{key}: geomean {math.exp(sum(map(math.log, v)) / len(v)):.3f}x torch.mm, worst {min(v):.3f}x "
              f"over {len(v)} problems ({args.dtype}, {torch.cuda.get_device_name()})")


if __name__ == "__main__":
    main()
