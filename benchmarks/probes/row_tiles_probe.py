"""Row counts just past a multiple of 128: the swapped 144-row tiles with the cluster along M
(B multicast to both tile rows) against the best of the other 16-bit kernels, and torch.mm.

Every candidate of the named kernels (each K decomposition and slice count the planner would
consider) is timed with the sweep's method (`_C.sweep_problem`: clock warm-up, an L2 flush
before each timing, median of 5, two alternating passes), torch.mm in the same call.

    python benchmarks/probes/row_tiles_probe.py [--dtype bf16] [--layouts rc]
"""

from __future__ import annotations

import argparse

import torch

import cutlass_ops
from cutlass_ops import _extension, precisions

SHAPES = [(257, 28672, 8192), (257, 8192, 28672), (257, 14336, 4096), (257, 13824, 5120), (257, 4096, 4096),
          (257, 8192, 8192), (777, 8192, 28672), (777, 4096, 14336), (2049, 4096, 14336), (1000, 4096, 4096),
          (3000, 4096, 4096), (4097, 5120, 13824)]
NEW = ("144x128x64_2x1x1_coop_swapab", "144x256x64_2x1x1_coop_swapab", "144x128x64_2x1x1_coop_streamk_swapab")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--dtype", default="bf16", choices=("bf16", "f16"))
    parser.add_argument("--layouts", default="rc", choices=("rr", "rc"))
    args = parser.parse_args()
    p, lay = args.dtype, args.layouts
    kernels = [k.name for k in cutlass_ops.list_kernels() if k.dtype == p and k.layouts == lay
               and k.family in ("cutlass3x", "handwritten") and not k.name.endswith("bias_act")]
    dtype = precisions.torch_dtype(p)
    print(f"{'problem':>18} {'torch us':>9} | best other kernel {'':>40} | best swapped 144-row tile")
    for m, n, k in SHAPES:
        a = torch.randn(m, k, device="cuda", dtype=dtype)
        b = torch.randn(n, k, device="cuda", dtype=dtype).t() if lay == "rc" else \
            torch.randn(k, n, device="cuda", dtype=dtype)
        out = torch.empty(m, n, device="cuda", dtype=dtype)
        r = _extension._C.sweep_problem(a, b, out, 5, passes=2, only=kernels)
        torch_us = r["torch_us"]
        timed = [(us, cand) for cand, us, _ in r["candidates"] if us is not None]
        new = [t for t in timed if t[1][1].endswith(NEW)]
        old = [t for t in timed if not t[1][1].endswith(NEW)]

        def show(best):
            if not best:
                return "-"
            us, cand = min(best, key=lambda t: t[0])
            dec = cand[2] + ("" if cand[3] == 1 else f" x{cand[3]}")
            return f"{us:7.1f} us {torch_us / us:5.3f}x {cand[1].split('_', 4)[-1]} ({dec})"

        print(f"{m:>6}x{n}x{k} {torch_us:9.1f} | {show(old):<58} | {show(new)}", flush=True)


if __name__ == "__main__":
    main()
