"""Split-K deeper than the planner offers, on long reductions over few output tiles: the
alignment-1 CUTLASS 2.x kernels pinned (`cutlass_ops.tuning.pin`) at split counts up to 512,
against torch.mm and the planner's own choice.

    python benchmarks/probes/deep_split_probe.py [MxNxK:layout,...] [--kernels 64x64x32_2s_a1,...] [--splits 16,32,...]

Where the planner's candidates stop (64 slices, csrc/dispatch/candidates.cpp kSplitCounts),
torch.mm still ran these problems about 2x faster (benchmarks/probes/cublas_choices_probe.py:
cuBLAS runs CUTLASS 2.x SM75 alignment-1 kernels and a split-K reduction there). A slice of
64 x 64 x 32 per main-loop step waits on global memory at every step; more slices put more
of them in flight. Times: `triton.testing.do_bench` medians (L2 flushed), torch.mm and each
candidate alternated over three rounds, best round kept; each result is checked against a
float64 product.
"""
import torch
import triton.testing

import cutlass_ops
from cutlass_ops import tuning

DEFAULT = ("18x17x228957:rr,72x123x155346:rc,2113x103x11947:cr,279x331x36840:cr,369x255x17591:rr,"
           "19x23x69968:cc,1146x72x42719:cc,330x139x126701:cc,25x149x124869:rc,1304x19x23931:rr,"
           "165x127x56146:cc,157x550x19662:rc")
SPLITS = (16, 32, 64, 96, 128, 192, 256, 384, 512)
KERNELS = ("64x64x32_2s_a1", "128x128x32_2s_a1")


def operand(rows, cols, letter, pad):
    # unaligned: a leading dimension one larger than the row, so no alignment above 1 holds
    if letter == "r":
        return torch.randn(rows, cols + pad, dtype=torch.bfloat16, device="cuda")[:, :cols]
    return torch.randn(cols, rows + pad, dtype=torch.bfloat16, device="cuda")[:, :rows].t()


def bench(fn):
    return triton.testing.do_bench(fn, warmup=10, rep=40, return_mode="median") * 1000


def main():
    import argparse
    global SPLITS, KERNELS
    ap = argparse.ArgumentParser()
    ap.add_argument("problems", nargs="?", default=DEFAULT)
    ap.add_argument("--kernels", default=",".join(KERNELS), help="config names after cutlass2x_sm80_bf16_<layout>_")
    ap.add_argument("--splits", default=",".join(map(str, SPLITS)))
    args = ap.parse_args()
    spec, KERNELS, SPLITS = args.problems, tuple(args.kernels.split(",")), tuple(int(s) for s in args.splits.split(","))
    print(f"{'problem':>22} {'torch':>7} {'planner':>8}  " + " ".join(f"{s:>6}" for s in SPLITS) + "   (us; best kernel per split)")
    for item in spec.split(","):
        dims, layout = item.split(":")
        m, n, k = (int(x) for x in dims.split("x"))
        a, b = operand(m, k, layout[0], 1), operand(k, n, layout[1], 1)
        ref = (a.double() @ b.double())
        tuning.clear()
        planner = cutlass_ops.explain(a, b)
        rows = {"torch": [], "planner": []}
        cands = {}
        for s in SPLITS:
            for kern in KERNELS:
                name = f"cutlass2x_sm80_bf16_{layout}_{kern}"
                tuning.clear()
                try:
                    tuning.pin(a, b, name, "split-k", s)
                except ValueError:
                    continue
                out = cutlass_ops.mm(a, b)
                err = ((out.double() - ref).abs().max() / ref.abs().max()).item()
                if err > 2e-2:
                    print(f"  {name} x{s}: max error {err:.2e}")
                    continue
                cands[(s, kern)] = []
        for _ in range(3):
            tuning.clear()
            rows["torch"].append(bench(lambda: torch.mm(a, b)))
            rows["planner"].append(bench(lambda: cutlass_ops.mm(a, b)))
            for (s, kern) in cands:
                tuning.clear()
                tuning.pin(a, b, f"cutlass2x_sm80_bf16_{layout}_{kern}", "split-k", s)
                cands[(s, kern)].append(bench(lambda: cutlass_ops.mm(a, b)))
        tuning.clear()
        best = {s: min((min(v), kern) for (ss, kern), v in cands.items() if ss == s) for s in SPLITS
                if any(ss == s for ss, _ in cands)}
        cells = " ".join(f"{best[s][0]:>6.1f}" if s in best else f"{'-':>6}" for s in SPLITS)
        print(f"{m}x{n}x{k} {layout:>2}".rjust(22) + f" {min(rows['torch']):>7.1f} {min(rows['planner']):>8.1f}  {cells}"
              f"   planner: {planner.kernel} {planner.decomposition} x{planner.splits}", flush=True)


if __name__ == "__main__":
    main()
