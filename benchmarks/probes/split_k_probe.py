"""Does split-K on the hand-written TMA + WGMMA kernel (its slices running at once, the last K
slice of a tile adding the others' float32 partials to its own) beat its data-parallel builds and
the rest of the candidates on problems of fewer tiles than SMs (777 x 1024: 56 tiles of 128x128
for 132 SMs)?

Every candidate of each problem timed as the sweep times them (`_C.sweep_problem`: L2 flushed
before every repetition, candidates alternated over passes, torch.mm in the same run), 16-bit,
F.linear's layout ("rc", x @ W.t()) unless a shape says "rr". Printed per problem: torch.mm, and
torch.mm's time over the best hand-written data-parallel candidate, the best hand-written split-K
one (its slices), and the best of every other kernel. Each split-K build is also checked against
a float32 product.

    python benchmarks/probes/split_k_probe.py [--shapes 777x1024x4096,257x4096x1024rr,...] [--dtype f16]

docs/findings.md, "Split-K in the TMA + WGMMA step", holds the figures.
"""

from __future__ import annotations

import argparse

import torch

import cutlass_ops
from cutlass_ops import _extension

# Test-split model products of the H200 sweep where the best built kernel was below torch.mm with
# fewer 128x128 tiles than SMs, and a few neighbours (rows x output features x input features).
SHAPES = ("777x1024x4096", "1000x1024x4096", "100x1024x4096", "1500x1024x4096", "257x3584x3584",
          "257x4608x3584", "257x4096x1024", "100x4544x4544", "500x3072x1024", "777x1024x1024",
          "257x4544x4544rr", "1000x1024x3072rr", "257x1024x4096rr", "64x4096x1024")
HANDWRITTEN = "handwritten_sm90_"


def parse(shape: str) -> tuple[int, int, int, str]:
    layout = "rr" if shape.endswith("rr") else "rc"
    m, n, k = (int(v) for v in shape.removesuffix("rr").removesuffix("rc").split("x"))
    return m, n, k, layout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shapes", help="M x N x K list, comma-separated, each optionally ending in rr "
                                         "(default: the probe's fourteen)")
    parser.add_argument("--dtype", default="bf16", choices=("bf16", "f16"))
    parser.add_argument("--reps", type=int, default=10)
    args = parser.parse_args()
    dtype = torch.bfloat16 if args.dtype == "bf16" else torch.float16
    shapes = [parse(s) for s in (args.shapes.split(",") if args.shapes else SHAPES)]
    print("M x N x K     layout  torch.mm us   torch/ours: hand-written DP     hand-written split-K      "
          "best other                 max rel err split-K")
    for m, n, k, layout in shapes:
        x = torch.randn(m, k, device="cuda", dtype=dtype)
        b = torch.randn(n, k, device="cuda", dtype=dtype).t() if layout == "rc" else \
            torch.randn(k, n, device="cuda", dtype=dtype)
        out = torch.empty(m, n, device="cuda", dtype=dtype)
        r = _extension._C.sweep_problem(x, b, out, args.reps, passes=3)
        timed = [(tuple(c), us) for c, us, _ in r["candidates"] if us is not None]
        ratio = lambda us: r["torch_us"] / us  # noqa: E731

        def best(keep):
            chosen = [(c, us) for c, us in timed if keep(c)]
            return min(chosen, key=lambda t: t[1]) if chosen else None

        dp = best(lambda c: c[1].startswith(HANDWRITTEN) and "wgmma" in c[1] and c[2] == "data-parallel")
        split = best(lambda c: c[1].startswith(HANDWRITTEN) and c[2] == "split-k")
        other = best(lambda c: not (c[1].startswith(HANDWRITTEN) and "wgmma" in c[1]))
        error = 0.0
        reference = torch.mm(x.float(), b.float())
        for c, _ in timed:
            if c[1].startswith(HANDWRITTEN) and c[2] == "split-k":
                with cutlass_ops.tuning.pinned(x, b, c[1], c[2], c[3], c[0]):
                    got = cutlass_ops.mm(x, b).float()
                error = max(error, ((got - reference).abs().max() / reference.abs().max()).item())

        def show(t):
            if t is None:
                return f"{'-':>30}"
            (_, kernel, decomposition, splits), us = t
            name = kernel.removeprefix(HANDWRITTEN + args.dtype + "_").removeprefix("cutlass3x_sm90_" + args.dtype + "_")
            label = f"{name}" + (f" x{splits}" if decomposition == "split-k" else "")
            return f"{ratio(us):.3f} {label[:24]:>24}"

        print(f"{m:>5} x {n:>5} x {k:>5} {layout}  {r['torch_us']:9.1f}  {show(dp)}  {show(split)}  {show(other)}  "
              f"{error:.1e}", flush=True)


if __name__ == "__main__":
    main()
