"""Time Hopper's 3xTF32 presplit kernel under each tile order, against torch's IEEE fp32.

The order (raster along M or N, swizzle 1/4/8) is put in the tuning table for the problem,
so the probe runs exactly what a tuned entry would. CUDA events, a 256 MB write to flush the
L2 before every repetition, median of the repetitions. Needs an SM90 GPU and a build with the
presplit kernels; the figures are in benchmarks/RESULTS.md at 824ebc1 (2026-11-22, "an accurate WGMMA 3xTF32").

    python benchmarks/probes/presplit_tile_order_probe.py
"""

import torch

import cutlass_ops
from cutlass_ops import _C, tuning

ORDERS = [("heuristic", 1), ("along-m", 1), ("along-n", 1), ("heuristic", 4), ("heuristic", 8),
          ("along-m", 8), ("along-n", 8), ("along-m", 4), ("along-n", 4)]
SHAPES = [(4096, 4096, 4096), (8192, 8192, 8192), (8192, 14336, 4096), (16384, 16384, 16384), (8192, 128256, 4096)]


def median_ms(fn, reps: int, flush: torch.Tensor) -> float:
    times = []
    for _ in range(reps):
        flush.zero_()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end))
    return sorted(times)[len(times) // 2]


def main() -> None:
    cutlass_ops.set_fp32_mode("3xtf32")
    torch.backends.cuda.matmul.allow_tf32 = False
    flush = torch.empty(256 * 1024 * 1024 // 4, device="cuda")
    for m, n, k in SHAPES:
        a, b = torch.randn(m, k, device="cuda"), torch.randn(k, n, device="cuda")
        plan = cutlass_ops.explain(a, b)
        key = {"precision": "3xtf32", "layout_a": plan.a.layout, "layout_b": plan.b.layout,
               "align": [plan.a.align, plan.b.align, plan.out.align],
               "cc": plan.device.capability[0] * 10 + plan.device.capability[1], "sm_count": plan.device.sm_count,
               "mnk": list(plan.problem), "kernel": plan.kernel, "decomposition": "data-parallel", "splits": 1}
        reps = 3 if m * n * k > 2e11 else 10
        out = torch.empty(m, n, device="cuda")
        ours = []
        try:
            for raster, swizzle in ORDERS:
                _C.tuning_insert({**key, "raster": raster, "swizzle": swizzle})
                cutlass_ops.mm(a, b, out=out)  # warm-up
                ours.append(median_ms(lambda: cutlass_ops.mm(a, b, out=out), reps, flush))
        finally:
            tuning.clear()
        torch.mm(a, b, out=out)
        theirs = median_ms(lambda: torch.mm(a, b, out=out), reps, flush)
        cells = " ".join(f"{r}/{s}: {t:.3f} ({theirs / t:.2f}x)" for (r, s), t in zip(ORDERS, ours))
        print(f"{m}x{n}x{k} {plan.kernel}: torch {theirs:.3f} ms | {cells}", flush=True)
        del a, b, out
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
