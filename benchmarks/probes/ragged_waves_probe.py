"""Ragged last waves of large tiles: does the 128x256 tile on the stream-K scheduler beat the
whole-tile kernels (128x256 and 128x192 persistent), and torch.mm?

Every candidate of the named kernels (each K decomposition and slice count the planner would
consider) is timed with the sweep's method (`_C.sweep_problem`: clock warm-up, an L2 flush
before each timing, median of 5, two alternating passes), torch.mm in the same call.

    python benchmarks/probes/ragged_waves_probe.py [--dtype bf16]
"""

from __future__ import annotations

import argparse

import torch

import cutlass_ops  # noqa: F401  (loads the kernels)
from cutlass_ops import _extension, precisions

SHAPES = [(2049, 4096, 14336), (2049, 4608, 3584), (2049, 1280, 5120), (777, 4096, 4096), (3000, 4608, 3584),
          (4097, 5120, 13824), (1500, 14336, 4096), (257, 4096, 4096)]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--dtype", default="bf16", choices=("bf16", "f16"))
    parser.add_argument("--layouts", default="rc", choices=("rr", "rc"))
    args = parser.parse_args()
    p = args.dtype
    kernels = [f"cutlass3x_sm90_{p}_{args.layouts}_128x256x64_2x1x1_coop_streamk",
               f"cutlass3x_sm90_{p}_{args.layouts}_128x256x64_2x1x1_coop",
               f"cutlass3x_sm90_{p}_{args.layouts}_128x192x64_2x1x1_coop"]
    dtype = precisions.torch_dtype(p)
    for m, n, k in SHAPES:
        a = torch.randn(m, k, device="cuda", dtype=dtype)
        b = torch.randn(n, k, device="cuda", dtype=dtype).t() if args.layouts == "rc" else \
            torch.randn(k, n, device="cuda", dtype=dtype)
        out = torch.empty(m, n, device="cuda", dtype=dtype)
        r = _extension._C.sweep_problem(a, b, out, 5, passes=2, only=kernels)
        torch_us = r["torch_us"]
        timed = sorted(((us, cand) for cand, us, _ in r["candidates"] if us is not None), key=lambda t: t[0])
        best = {}
        for us, cand in timed:
            key = cand[1].split("_", 4)[-1]  # the config: tile, cluster, schedule
            best.setdefault(key, (us, cand))
        parts = [f"{key[:24]} {us:7.1f} ({cand[2]}{'' if cand[3] == 1 else ' x%d' % cand[3]}, {torch_us / us:.3f}x)"
                 for key, (us, cand) in best.items()]
        print(f"{m}x{n}x{k} {args.layouts}: torch {torch_us:7.1f} us | " + " | ".join(parts), flush=True)


if __name__ == "__main__":
    main()
