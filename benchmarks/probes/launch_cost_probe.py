"""Products of a few microseconds take the library's CUTLASS 2.x, CUTLASS 3.x and TMA + WGMMA
kernels about 0.5 us more than cuBLAS's, whatever the tile (docs/findings.md, "Products of a
few microseconds"), where the streaming kernels run level with it: what in a launch costs that?

Times, beside torch.mm, kernels that do almost nothing (each thread copies 16 bytes of A to D,
launch_cost_probe.cu) launched with a GEMM kernel's dynamic shared memory, threads, CTAs,
1 KiB parameter block, cluster and shared-memory carve-out preference, and the library's
kernels forced on one small product. For each: torch.profiler's kernel duration (median) and
the time between CUDA events around the call, after a 256 MB write that flushes the L2 and,
with --no-flush, after the same kernel (back to back).

    python benchmarks/probes/launch_cost_probe.py [--shape MxNxK] [--kernels NAME,...]
"""

from __future__ import annotations

import argparse
import ctypes
import json
import statistics
import subprocess
import tempfile
from pathlib import Path

import torch
from torch.profiler import ProfilerActivity, profile

import cutlass_ops

REPS = 40
SOURCE = Path(__file__).with_suffix(".cu")


def build(workdir: Path) -> ctypes.CDLL:
    so = workdir / "launch_cost.so"
    subprocess.run(["nvcc", "-std=c++17", "-O3", "-shared", "-Xcompiler", "-fPIC", "-gencode=arch=compute_90a,code=sm_90a",
                    str(SOURCE), "-o", str(so)], check=True)
    lib = ctypes.CDLL(str(so))
    lib.probe_touch.restype = ctypes.c_int
    lib.probe_touch.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                                ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_void_p]
    return lib


def kernel_durations(fn, before) -> tuple[float, float, str]:
    """(median kernel duration, median event time, kernel name) over REPS calls, each after `before`."""
    for _ in range(5):
        before()
        fn()
    events = []
    for _ in range(REPS):
        before()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda._sleep(20000)  # the call queued behind a spin: its host time stays outside the events
        start.record()
        fn()
        end.record()
        events.append((start, end))
    torch.cuda.synchronize()
    event_us = statistics.median(s.elapsed_time(e) * 1e3 for s, e in events)
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(REPS):
            before()
            fn()
        torch.cuda.synchronize()
    with tempfile.TemporaryDirectory() as folder:
        path = f"{folder}/trace.json"
        prof.export_chrome_trace(path)
        trace = json.load(open(path))["traceEvents"]
    kernels = [e for e in trace if e.get("cat") == "kernel" and "sleep" not in e["name"].lower()
               and "fill" not in e["name"].lower() and "FillFunctor" not in e["name"]]
    by_name = {}
    for e in kernels:
        by_name.setdefault(e["name"], []).append(e["dur"])
    name, durs = max(by_name.items(), key=lambda kv: len(kv[1]))
    return statistics.median(durs), event_us, name


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--shape", default="128x128x64")
    parser.add_argument("--kernels", default="")
    parser.add_argument("--no-flush", action="store_true")
    args = parser.parse_args()
    m, n, k = (int(x) for x in args.shape.split("x"))
    flush = torch.empty(64 * 1024 * 1024, dtype=torch.float32, device="cuda")
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(n, k, device="cuda", dtype=torch.bfloat16).t()  # F.linear's layout ("rc")
    src = torch.randn(1 << 20, device="cuda")
    dst = torch.empty_like(src)
    stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
    with tempfile.TemporaryDirectory() as folder:
        lib = build(Path(folder))
        cases = [("torch.mm", lambda: torch.mm(a, b))]
        names = [x for x in args.kernels.split(",") if x]
        for name in names:
            try:
                cutlass_ops.mm(a, b, kernel=name)
            except (ValueError, RuntimeError) as error:
                print(f"{name}: {error}")
                continue
            cases.append((name, lambda name=name: cutlass_ops.mm(a, b, kernel=name)))
        # (CTAs, threads, dynamic smem, 1 KiB params, cluster, carve-out preference (-1: none))
        touches = [
            (1, 128, 0, 0, 0, -1), (4, 384, 0, 0, 0, -1), (4, 384, 16 << 10, 0, 0, -1), (4, 384, 48 << 10, 0, 0, -1),
            (4, 384, 100 << 10, 0, 0, -1), (4, 384, 160 << 10, 0, 0, -1), (4, 384, 227 << 10, 0, 0, -1),
            (4, 384, 227 << 10, 0, 0, 100), (4, 384, 0, 0, 0, 100), (4, 384, 0, 1, 0, -1), (4, 384, 227 << 10, 1, 0, -1),
            (8, 384, 227 << 10, 0, 2, -1), (8, 384, 227 << 10, 0, 8, -1), (132, 384, 227 << 10, 0, 0, -1),
            (132, 128, 0, 0, 0, -1),
        ]
        for ctas, threads, smem, big, cluster, carve in touches:
            def call(ctas=ctas, threads=threads, smem=smem, big=big, cluster=cluster, carve=carve):
                status = lib.probe_touch(src.data_ptr(), dst.data_ptr(), src.numel() // 4, ctas, threads, smem, big,
                                         cluster, carve, stream)
                assert status == 0, status
            label = f"touch ctas={ctas} thr={threads} smem={smem >> 10}K params={'1K' if big else 'small'} cluster={cluster} carve={carve}"
            cases.append((label, call))
        for before_name, before in [("flushed", lambda: flush.zero_())] + ([] if not args.no_flush else [("back to back", lambda: None)]):
            print(f"\n{args.shape} bf16 rc, {before_name}: kernel duration (torch.profiler) and event time, median of {REPS}")
            rounds = {label: [] for label, _ in cases}
            for _ in range(3):  # alternated rounds
                for label, fn in cases:
                    rounds[label].append(kernel_durations(fn, before))
            for label, _ in cases:
                kern = statistics.median(r[0] for r in rounds[label])
                ev = statistics.median(r[1] for r in rounds[label])
                print(f"{kern:7.2f} us kernel {ev:7.2f} us events  {label}  [{rounds[label][0][2][:70]}]", flush=True)


if __name__ == "__main__":
    main()
