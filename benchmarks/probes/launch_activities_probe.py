"""What one cutlass_ops.mm call puts on the stream, and what it costs: for each shape (bf16)
the planned kernel, the median time between two CUDA events around the call after a 256 MB
L2 flush, the call's median host time, and the CUDA activities (kernels, memsets)
torch.profiler sees for one call; torch.mm's event and host times beside them.

    python benchmarks/probes/launch_activities_probe.py [MxNxK,...] [--layout rr|rc] [--cpu]

`--layout rc` takes B as the transpose of a row-major (N, K) weight, F.linear's layout.
`--cpu` also lists the host-side operators of one call with their CPU times.
"""
import argparse
import statistics
import time

import torch
from torch.profiler import ProfilerActivity, profile

import cutlass_ops

parser = argparse.ArgumentParser()
parser.add_argument("shapes", nargs="?", default="15776x8x8,8x96x15936,256x256x256,4736x8x336")
parser.add_argument("--layout", choices=("rr", "rc"), default="rr")
parser.add_argument("--cpu", action="store_true")
args = parser.parse_args()
shapes = [tuple(int(x) for x in s.split("x")) for s in args.shapes.split(",")]
flush = torch.empty(64 * 1024 * 1024, dtype=torch.float32, device="cuda")  # 256 MB
REPS = 30


def event_and_host_us(fn):
    for _ in range(10):
        fn()
    events, host = [], []
    for _ in range(REPS):
        flush.zero_()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        t = time.perf_counter()
        fn()
        host.append((time.perf_counter() - t) * 1e6)
        end.record()
        events.append((start, end))
    torch.cuda.synchronize()
    return statistics.median(s.elapsed_time(e) * 1000 for s, e in events), statistics.median(host)


for m, n, k in shapes:
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    b = (torch.randn(n, k, device="cuda", dtype=torch.bfloat16).t() if args.layout == "rc"
         else torch.randn(k, n, device="cuda", dtype=torch.bfloat16))
    plan = cutlass_ops.explain(a, b)
    event_us, host_us = event_and_host_us(lambda: cutlass_ops.mm(a, b))
    torch_event_us, torch_host_us = event_and_host_us(lambda: torch.mm(a, b))
    activities = [ProfilerActivity.CUDA] + ([ProfilerActivity.CPU] if args.cpu else [])
    flush.zero_()
    torch.cuda.synchronize()
    with profile(activities=activities) as prof:
        cutlass_ops.mm(a, b)
        torch.cuda.synchronize()
    gpu = [f"{ev.name[:60]} ({ev.device_time:.1f} us)" for ev in prof.events() if ev.device_type.name == "CUDA"]
    print(f"{m}x{n}x{k} {args.layout}: {plan.kernel} ({plan.decomposition}{', staged' if plan.staged else ''}); "
          f"event {event_us:.2f} us, host {host_us:.1f} us; torch.mm event {torch_event_us:.2f} us, "
          f"host {torch_host_us:.1f} us; " + " + ".join(gpu))
    if args.cpu:
        cpu = [ev for ev in prof.events() if ev.device_type.name == "CPU"]
        for ev in cpu:
            print(f"    cpu {ev.name[:70]:70s} {ev.cpu_time_total:8.1f} us")
