"""Bandwidth of the K-major copy of B (mm.cpp's kmajor_copy: csrc/ops/pad_copy.cu's tile kernel),
read off torch.profiler.

Row-major x row-major TF32 products this large copy B K-major before the GEMM where the cost
model says it pays (Plan::copy_b_kmajor); this profiles a few such calls (L2 flushed before each) and prints
the transpose kernel's median time and its read + write bandwidth. Needs a Hopper GPU.

    python benchmarks/probes/kmajor_copy_bandwidth.py
"""

from __future__ import annotations

import torch
from torch.profiler import ProfilerActivity, profile

import cutlass_ops
from cutlass_ops.bench.timing import L2_FLUSH_BYTES

# The copy's kernel as the profiler names it: pad_copy's tile kernel (or, in builds before it
# took the K-major copy, kmajor_copy.cu's transpose_kernel).
KERNEL_NAMES = ("tile_kernel", "transpose_kernel")
SHAPES = [(8192, 4096, 4096), (8192, 14336, 4096), (8192, 4096, 14336), (16384, 16384, 16384), (8192, 128256, 4096)]


def main() -> None:
    torch.backends.cuda.matmul.allow_tf32 = True
    flush = torch.empty(L2_FLUSH_BYTES // 4, dtype=torch.int32, device="cuda")  # the harness's L2 flush
    for m, n, k in SHAPES:
        a, b = torch.randn(m, k, device="cuda"), torch.randn(k, n, device="cuda")
        assert cutlass_ops.explain(a, b).copy_b_kmajor, "this build does not copy B K-major here"
        for _ in range(3):
            cutlass_ops.mm(a, b)
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            for _ in range(5):
                flush.zero_()
                cutlass_ops.mm(a, b)
            torch.cuda.synchronize()
        us = sorted(e.device_time for e in prof.events() if e.device_type.name == "CUDA" and any(n in e.name for n in KERNEL_NAMES))
        median = us[len(us) // 2]
        print(f"{m}x{n}x{k}: transpose of B ({k} x {n}) {median:.1f} us median of {len(us)}, "
              f"{2 * 4 * k * n / median / 1e6:.2f} TB/s read + write", flush=True)
        del a, b


if __name__ == "__main__":
    main()
