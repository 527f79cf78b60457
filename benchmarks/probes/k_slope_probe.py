"""Where a tile loses to cuBLAS on mid-size problems: in its fixed cost or in each step of K?
GPU time per call (torch.profiler: a call's kernels and memsets summed; a 256 MB L2 flush and a
GPU spin before each call; median of three alternating rounds of 5) of torch.mm and four CUTLASS
tiles on M x N x K, bf16 "rr", K from 256 to 16384: the slope is the cost per 1024 of K, the
intercept the fixed cost. The last column: the most launches a call made.

    python benchmarks/probes/k_slope_probe.py
"""
import statistics
import torch
from torch.profiler import ProfilerActivity, profile
import cutlass_ops
print(torch.cuda.get_device_name())
flush = torch.empty(64 * 1024 * 1024, dtype=torch.float32, device="cuda")
names = ["cutlass3x_sm90_bf16_rr_64x128x64_1x1x1_pingpong", "cutlass3x_sm90_bf16_rr_128x64x64_1x2x1_coop",
         "cutlass3x_sm90_bf16_rr_128x128x64_1x1x1_pingpong", "cutlass3x_sm90_bf16_rr_64x64x64_1x1x1_pingpong"]
short = ["torch"] + [n.split("_rr_")[1].replace("x64_1x1x1", "").replace("_1x2x1", "c12")[:14] for n in names]
print("problem              " + " ".join(f"{s:>14s}" for s in short) + "   kernels seen")
def kernel_us(f, reps):
    """Each call's GPU time: the durations of the kernels and memsets it launched, summed (the
    flush's kernel, which precedes every call, starts a new one), and the most it launched."""
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(reps):
            flush.zero_(); torch.cuda._sleep(100000); f()
        torch.cuda.synchronize()
    kernels = sorted((e for e in prof.events() if e.device_type.name == "CUDA"), key=lambda e: e.time_range.start)
    calls = []
    for e in kernels:
        if "elementwise" in e.name:
            calls.append([])
        elif calls and "sleep" not in e.name.lower() and "spin" not in e.name.lower():
            calls[-1].append(e.device_time)
    return [sum(c) for c in calls], max(len(c) for c in calls)
for m, n in [(1000, 1024), (2000, 1024), (1000, 2048)]:
  for K in [256, 1024, 2048, 4096, 8192, 16384]:
    a = torch.randn(m, K, device="cuda", dtype=torch.bfloat16); b = torch.randn(K, n, device="cuda", dtype=torch.bfloat16)
    out = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
    impls = [lambda: torch.mm(a, b, out=out)] + [(lambda nm=nm: cutlass_ops.mm(a, b, out=out, kernel=nm)) for nm in names]
    for f in impls:
        for _ in range(3): f()
    torch.cuda.synchronize()
    got, per_call = [[] for _ in impls], set()
    for rnd in range(3):
        order = range(len(impls)) if rnd % 2 == 0 else reversed(range(len(impls)))
        for i in order:
            times, launched = kernel_us(impls[i], 5)
            got[i] += times
            per_call.add(launched)
    print(f"{m}x{n}x{K:<6d}      " + " ".join(f"{statistics.median(g):14.2f}" for g in got) + f"   {sorted(per_call)}", flush=True)
