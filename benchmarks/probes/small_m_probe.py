"""Where the time goes for small-M bf16 GEMMs: each candidate kernel and K decomposition forced
through the tuning table, timed two ways:

* CUDA events around one call after an L2 flush (a 256 MB write) and a busy-wait, as the
  benchmarks time it (median of 30);
* torch.profiler's kernel times over five back-to-back calls (warm L2), split by kernel
  (main kernel, split-K reduction, workspace memset).

    CUTLASS_OPS_NO_TUNING_TABLE=1 python benchmarks/probes/small_m_probe.py   # on a GPU, cutlass_ops built

Figures from it are in benchmarks/RESULTS.md at 824ebc1 ("Small M against cuBLAS").
"""

from __future__ import annotations

import statistics

import torch
from torch.profiler import ProfilerActivity, profile

import cutlass_ops
from cutlass_ops import tuning

from probe_timing import flushed_event_us

_C = cutlass_ops._extension._C  # tuning_insert: adds the entry a saved tuning file would hold

SHAPES = [(1, 4096, 4096), (16, 4096, 4096), (64, 4096, 4096), (128, 4096, 4096), (1, 4096, 14336),
          (16, 6144, 4096), (256, 256, 256), (1024, 1024, 1024)]
SWAP_AB = "cutlass3x_sm90_bf16_rr_32x128x128_1x1x1_coop_streamk_swapab"
CANDIDATES = [
    ("handwritten_sm80_bf16_rr_skinny_m", "data-parallel", 1),
    *[("cutlass2x_sm80_bf16_rr_64x64x64_5s_a8", "split-k" if s > 1 else "data-parallel", s) for s in (1, 2, 4, 8)],
    *[(SWAP_AB, "split-k" if s > 1 else "data-parallel", s) for s in (1, 2, 4)],
    (SWAP_AB, "stream-k", 1),
    ("handwritten_sm80_bf16_rr_5_mma_sync", "data-parallel", 1),
]

_flush = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")


def flushed_us(fn, reps: int = 30) -> float:
    """Median event time of one call, each after an L2 flush, with the GPU busy while it is queued."""
    for _ in range(3):
        fn()
    return statistics.median(flushed_event_us(fn, _flush, spin_cycles=100000) for _ in range(reps))


def warm_kernels(fn) -> str:
    """Each CUDA kernel's time per call over five back-to-back calls (warm L2)."""
    fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(5):
            fn()
        torch.cuda.synchronize()
    per_call = {}
    for event in prof.key_averages():
        if event.device_type.name == "CUDA" and event.count:
            per_call[event.key[:60]] = event.device_time_total / 5
    ranked = sorted(per_call.items(), key=lambda item: -item[1])
    return ", ".join(f"{name}={us:.1f}" for name, us in ranked if us > 0.3)


def table_entry(a, b, kernel: str, decomposition: str, splits: int) -> dict:
    p = cutlass_ops.explain(a, b)
    return {"precision": p.dtype, "layout_a": p.a.layout, "layout_b": p.b.layout,
            "align": [p.a.align, p.b.align, p.out.align],
            "cc": p.device.capability[0] * 10 + p.device.capability[1], "sm_count": p.device.sm_count,
            "mnk": list(p.problem), "kernel": kernel, "decomposition": decomposition, "splits": splits}


def main() -> None:
    torch.manual_seed(0)
    for m, n, k in SHAPES:
        a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
        t_torch = flushed_us(lambda: torch.mm(a, b))
        print(f"== {m}x{n}x{k}: torch {t_torch:.1f} us  [{warm_kernels(lambda: torch.mm(a, b))}]")
        t_auto = flushed_us(lambda: cutlass_ops.mm(a, b))
        print(f"   auto {t_auto:.1f} us ({t_torch / t_auto:.2f}x) {cutlass_ops.explain(a, b).kernel}")
        for kernel, decomposition, splits in CANDIDATES:
            tuning.clear()
            _C.tuning_insert(table_entry(a, b, kernel, decomposition, splits))
            if cutlass_ops.explain(a, b).kernel != kernel:
                print(f"   {kernel} does not take this problem")
                continue
            t = flushed_us(lambda: cutlass_ops.mm(a, b))
            print(f"   {t:7.1f} us {t_torch / t:5.2f}x {kernel[-40:]} {decomposition} x{splits}"
                  f"  [{warm_kernels(lambda: cutlass_ops.mm(a, b))}]")
        tuning.clear()


if __name__ == "__main__":
    main()
