"""Bandwidth of the K-major copy of B (csrc/ops/kmajor_copy_kernels.cu), read off torch.profiler.

A row-major x row-major TF32 product can copy B K-major before the GEMM (Plan::copy_b_kmajor,
where the cost model says it pays); this pins each shape's cheapest such candidate
(cutlass_ops.tuning.pin), profiles a few calls (L2 flushed before each) and prints the copy
kernel's median time and its read + write bandwidth, beside torch's b.t().contiguous(). Needs a
Hopper GPU.

    python benchmarks/probes/kmajor_copy_bandwidth.py
"""

from __future__ import annotations

import torch
from torch.profiler import ProfilerActivity, profile

import cutlass_ops
from cutlass_ops.bench.timing import L2_FLUSH_BYTES

# The copy's kernel as the profiler names it (kmajor_copy_kernels.cu).
KERNEL_NAMES = ("transpose_kernel",)
SHAPES = [(8192, 4096, 4096), (8192, 14336, 4096), (8192, 4096, 14336), (16384, 16384, 16384), (8192, 128256, 4096)]


def copy_us(call, flush: torch.Tensor, names) -> float:
    """The median time of the profiled kernels named by `names` (a substring each) in `call`."""
    for _ in range(3):
        call()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(5):
            flush.zero_()
            call()
        torch.cuda.synchronize()
    us = sorted(e.device_time for e in prof.events()
                if e.device_type.name == "CUDA" and any(n in e.name for n in names) and "zero" not in e.name.lower()
                and "fill" not in e.name.lower())
    return us[len(us) // 2]


def main() -> None:
    torch.backends.cuda.matmul.allow_tf32 = True
    flush = torch.empty(L2_FLUSH_BYTES // 4, dtype=torch.int32, device="cuda")  # the harness's L2 flush
    for m, n, k in SHAPES:
        a, b = torch.randn(m, k, device="cuda"), torch.randn(k, n, device="cuda")
        candidates = [c for c in cutlass_ops.explain(a, b).candidates if c.variant == "kmajor-b"]
        assert candidates, "this build has no K-major candidate here"
        cutlass_ops.tuning.pin(a, b, candidates[0])
        ours = copy_us(lambda: cutlass_ops.mm(a, b), flush, KERNEL_NAMES)
        torch_us = copy_us(lambda: b.t().contiguous(), flush, ("",))
        cutlass_ops.tuning.clear()
        print(f"{m}x{n}x{k}: K-major copy of B ({k} x {n}) {ours:.1f} us median, "
              f"{2 * 4 * k * n / ours / 1e6:.2f} TB/s read + write; torch's b.t().contiguous() {torch_us:.1f} us",
              flush=True)
        del a, b


if __name__ == "__main__":
    main()
