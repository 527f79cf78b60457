"""What one cutlass_ops.mm call puts on the stream, and what it costs: for each shape (bf16,
row-major operands) the planned kernel, the median time between two CUDA events around the
call after a 256 MB L2 flush, the call's median host time, and the CUDA activities (kernels,
memsets) torch.profiler sees for one call.

    python benchmarks/probes/launch_activities_probe.py [MxNxK,...]
"""
import statistics
import sys
import time

import torch
from torch.profiler import ProfilerActivity, profile

import cutlass_ops

shapes = [tuple(int(x) for x in s.split("x")) for s in (sys.argv[1] if len(sys.argv) > 1 else
          "15776x8x8,8x96x15936,256x256x256,4736x8x336").split(",")]
flush = torch.empty(64 * 1024 * 1024, dtype=torch.float32, device="cuda")  # 256 MB
REPS = 30
for m, n, k in shapes:
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
    plan = cutlass_ops.explain(a, b)
    for _ in range(10):
        cutlass_ops.mm(a, b)
    events, host = [], []
    for _ in range(REPS):
        flush.zero_()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        t = time.perf_counter()
        cutlass_ops.mm(a, b)
        host.append((time.perf_counter() - t) * 1e6)
        end.record()
        events.append((start, end))
    torch.cuda.synchronize()
    event_us = statistics.median(s.elapsed_time(e) * 1000 for s, e in events)
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        flush.zero_()
        torch.cuda.synchronize()
        cutlass_ops.mm(a, b)
        torch.cuda.synchronize()
    activities = [f"{ev.name[:60]} ({ev.device_time:.1f} us)" for ev in prof.events()
                  if ev.device_type.name == "CUDA" and "FillFunctor" not in ev.name]
    print(f"{m}x{n}x{k}: {plan.kernel} ({plan.decomposition}); event {event_us:.2f} us, "
          f"host {statistics.median(host):.1f} us; " + " + ".join(activities))
