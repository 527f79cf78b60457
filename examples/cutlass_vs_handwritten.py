"""CUTLASS kernels beside the hand-written ones and cuBLAS, on your own shapes.

    python examples/cutlass_vs_handwritten.py [--shapes 1024x1024x1024,4096x4096x4096] [--dtype bf16]

Every hand-written kernel that accepts a shape (the teaching ladder, steps 1-6 in
csrc/ladder/ and csrc/handwritten/, and the few-row streaming kernels), the planner's pick
among all kernels (`auto`, mostly CUTLASS) and torch.mm (cuBLAS) run on the same random
operands: each is checked against a float64 reference first, then timed with CUDA events, L2
flushed before every repetition, the implementations alternated in rounds. The table gives
each one's TFLOP/s and its speed against torch.mm. The same comparison from the command line:

    python -m cutlass_ops bench --shapes 4096x4096x4096 --dtype bf16 --kernels 'handwritten*,auto,torch'

A kernel of your own joins the comparison once it is registered (docs/kernels.md); name it in
`--kernels`, or a glob that matches it.
"""

from __future__ import annotations

import argparse
import sys

import torch

from cutlass_ops import bench


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shapes", default="1024x1024x1024,4096x4096x4096,16x4096x4096",
                        help="comma list of MxNxK (default: a square, a large square and a decode step)")
    parser.add_argument("--dtype", default="bf16", help="bf16, f16, tf32, f32, f64 (or another spelling)")
    parser.add_argument("--kernels", default="handwritten*,auto,torch",
                        help="what runs: kernel names or globs, auto (the planner), torch (cuBLAS)")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--rep-ms", type=float, default=50.0)
    args = parser.parse_args(argv)
    if not torch.cuda.is_available():
        print("this example needs a CUDA device", file=sys.stderr)
        return 2
    rows = bench.run(bench.parse_shapes(args.shapes), dtypes=[args.dtype], kernels=args.kernels.split(","),
                     rounds=args.rounds, rep_ms=args.rep_ms, progress=False)
    print(bench.table(rows))
    print()
    for line in bench.summary(rows):
        print(line)
    return 0 if all(r.ok for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
