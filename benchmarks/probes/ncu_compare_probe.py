"""One problem, torch.mm's kernel beside a forced cutlass_ops kernel, for Nsight Compute: warm-up
calls outside the profiled range, then one call of each inside it (cudaProfilerStart/Stop).

    ncu --profile-from-start off --set full --clock-control none \\
        python benchmarks/probes/ncu_compare_probe.py 1000x1024x4096 rr KERNEL_NAME

The layout is "rr" (A and B row-major) or "rc" (B stored as its transpose, F.linear's weight).
"""
import sys

import torch

import cutlass_ops

shape, layout, kernel = sys.argv[1], sys.argv[2], sys.argv[3]
m, n, k = (int(v) for v in shape.split("x"))
a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16) if layout == "rr" else \
    torch.randn(n, k, device="cuda", dtype=torch.bfloat16).t()
out = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
for _ in range(5):
    torch.mm(a, b, out=out)
    cutlass_ops.mm(a, b, out=out, kernel=kernel)
torch.cuda.synchronize()
torch.cuda.profiler.start()
torch.mm(a, b, out=out)
cutlass_ops.mm(a, b, out=out, kernel=kernel)
torch.cuda.synchronize()
torch.cuda.profiler.stop()
