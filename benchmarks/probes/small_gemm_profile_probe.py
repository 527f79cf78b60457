"""Where the time between two CUDA events goes for a small GEMM, torch.mm against
cutlass_ops.mm (bf16 unless --dtype says, "rr" unless --layout says: "rc" is F.linear's
weight; L2 flushed by a 256 MB write before every call).

    python benchmarks/probes/small_gemm_profile_probe.py [MxNxK,...] [--dtype f32] [--layout rc]

Columns: the events' median (us); from torch.profiler's trace, the gap from the flush's end
to the first GEMM activity, the longest activity (the GEMM kernel), and the span from the
flush's end to the last activity's end; then the activities of the middle call.
"""
import argparse
import json
import statistics
import tempfile

import torch
from torch.profiler import ProfilerActivity, profile

import cutlass_ops

parser = argparse.ArgumentParser()
parser.add_argument("shapes", nargs="?", default="256x256x256,512x512x512,1024x1024x1024,2048x2048x2048,128x4096x4096")
parser.add_argument("--dtype", default="bf16", choices=["bf16", "f16", "f32"])  # f32: IEEE (TF32 off)
parser.add_argument("--layout", default="rr", choices=["rr", "rc", "cr", "cc"])
args = parser.parse_args()
dtype = {"bf16": torch.bfloat16, "f16": torch.float16, "f32": torch.float32}[args.dtype]
shapes = [tuple(int(x) for x in s.split("x")) for s in args.shapes.split(",")]


def operand(rows, cols, letter):
    """rows x cols, row-major ("r") or the transpose of a contiguous cols x rows ("c")."""
    if letter == "r":
        return torch.randn(rows, cols, device="cuda", dtype=dtype)
    return torch.randn(cols, rows, device="cuda", dtype=dtype).t()


flush = torch.empty(64 * 1024 * 1024, dtype=torch.float32, device="cuda")  # 256 MB
REPS = 30
print(f"{'shape':>16} {'impl':>6} {'event us':>9} {'gap us':>7} {'kern us':>8} {'span us':>8}  activities")
for m, n, k in shapes:
    a, b = operand(m, k, args.layout[0]), operand(k, n, args.layout[1])
    for name, fn in [("torch", torch.mm), ("ours", cutlass_ops.mm)]:
        for _ in range(10):
            fn(a, b)
        ts = []
        for _ in range(REPS):
            flush.zero_()
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn(a, b)
            end.record()
            ts.append((start, end))
        torch.cuda.synchronize()
        ev = statistics.median(start.elapsed_time(end) * 1000 for start, end in ts)
        with profile(activities=[ProfilerActivity.CUDA, ProfilerActivity.CPU]) as prof:
            for _ in range(REPS):
                flush.zero_()
                fn(a, b)
            torch.cuda.synchronize()
        with tempfile.TemporaryDirectory() as folder:
            path = f"{folder}/trace.json"
            prof.export_chrome_trace(path)
            with open(path) as f:
                trace = json.load(f)["traceEvents"]
        gpu = sorted((e for e in trace if e.get("cat") in ("kernel", "gpu_memset", "gpu_memcpy")), key=lambda e: e["ts"])
        groups, cur = [], None
        for e in gpu:
            if "fill" in e["name"].lower() or "FillFunctor" in e["name"]:
                cur = {"flush_end": e["ts"] + e["dur"], "acts": []}
                groups.append(cur)
            elif cur is not None:
                cur["acts"].append(e)
        groups = [g for g in groups if g["acts"]][2:]  # the first two calls warm the profiler up
        gap = statistics.median(g["acts"][0]["ts"] - g["flush_end"] for g in groups)
        kern = statistics.median(max(x["dur"] for x in g["acts"]) for g in groups)
        span = statistics.median(g["acts"][-1]["ts"] + g["acts"][-1]["dur"] - g["flush_end"] for g in groups)
        names = " + ".join(f"{x['name'][:60]}({x['dur']:.1f})" for x in groups[len(groups)//2]["acts"])
        print(f"{m}x{n}x{k:>6} {name:>6} {ev:9.2f} {gap:7.2f} {kern:8.2f} {span:8.2f}  {names}", flush=True)
