"""Row-major x row-major TF32: the swap-AB kernel against a K-major copy of B plus the "rc" kernel.

Times, on each shape (random N(0, 1) row-major float32 operands, TF32 on, L2 flushed, best of
two rounds): torch.mm; cutlass_ops.mm as dispatched; cutlass_ops.mm on a B already copied
K-major (the "rc" kernel alone); torch's transposing copy (b.t().contiguous()); and a plain
copy (b.clone()), the bandwidth a transposing copy can approach. This is how the rule to
copy B from 8192 rows was read off (benchmarks/RESULTS.md at 824ebc1, 2026-11-23, "row-major x row-major
TF32"); the cost model now prices the copy (the kmajor-b variant) against the swapped kernels.
Needs a GPU.

    python benchmarks/probes/kmajor_copy_probe.py --shapes 16384x16384x16384,8192x4096x14336,4096x4096x4096
"""

from __future__ import annotations

import argparse

import torch

import cutlass_ops
from cutlass_ops.bench.suites import parse_shapes
from cutlass_ops.bench.timing import median_ms
from cutlass_ops.testing import matrix


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--shapes", required=True, help="comma list of MxNxK")
    args = parser.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = True
    print(f"{'shape':20s} {'torch':>8s} {'auto':>8s} {'rc':>8s} {'T.copy':>8s} {'clone':>8s}  (us)  "
          "xtorch: auto, rc + torch's transpose, rc + clone, rc alone")
    for case in parse_shapes(args.shapes):
        m, n, k = case.m, case.n, case.k
        a, b = matrix(m, k, torch.float32), matrix(k, n, torch.float32)
        bt = b.t().contiguous().t()  # K x N, column-major
        rep = 60 if m * n * k > 2**36 else 20
        runs = {"torch": lambda: torch.mm(a, b), "auto": lambda: cutlass_ops.mm(a, b),
                "rc": lambda: cutlass_ops.mm(a, bt), "tcopy": lambda: b.t().contiguous(), "clone": lambda: b.clone()}
        times = {name: [] for name in runs}
        for _ in range(2):  # two rounds, each timing all five in turn
            for name, fn in runs.items():
                times[name].append(median_ms(fn, rep_ms=rep))
        best = {name: min(t) for name, t in times.items()}
        t = best["torch"]
        us = " ".join(f"{1e3 * best[name]:8.1f}" for name in runs)
        print(f"{case.label:20s} {us}        {t / best['auto']:.3f}  {t / (best['rc'] + best['tcopy']):.3f}  "
              f"{t / (best['rc'] + best['clone']):.3f}  {t / best['rc']:.3f}  ({cutlass_ops.explain(a, bt).kernel})",
              flush=True)


if __name__ == "__main__":
    main()
