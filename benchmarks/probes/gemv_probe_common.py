"""What the GEMV probes (benchmarks/probes/gemv_*_probe.py) share: compiling a
probe's CUDA source, timing after a flush that leaves L2 dirty (as the benchmarks' 256 MB write
does) or clean (a read-only pass), and the sweep of kernel variants and K splits on 1-row
problems against torch.mm. Needs a GPU and nvcc."""

from __future__ import annotations

import itertools
import json
import os
import statistics

import torch
from torch.utils.cpp_extension import load_inline

from cutlass_ops.bench.timing import L2_FLUSH_BYTES

SHAPES = [(4096, 4096), (6144, 4096), (4096, 14336), (14336, 4096)]  # (N, K) of 1 x N x K


def compile_probe(name: str, cuda_source: str, run_signature: str):
    """The probe's extension, exposing `run` (declared by run_signature), built for sm_90a."""
    return load_inline(
        name,
        cpp_sources=run_signature + ";",
        cuda_sources=cuda_source,
        functions=["run"],
        extra_cuda_cflags=["-O3", "-gencode=arch=compute_90a,code=sm_90a"],
    )


_flush = None


def time_us(fn, flush: str = "dirty", reps: int = 40) -> float:
    """Median microseconds of fn() between CUDA events, each after an L2 flush: "dirty" writes
    the flush buffer (L2 left full of dirty lines), "clean" reads it."""
    global _flush
    if _flush is None:
        _flush = torch.zeros(L2_FLUSH_BYTES // 4, dtype=torch.int32, device="cuda")
    for _ in range(5):
        fn()
    times = []
    for _ in range(reps):
        if flush == "dirty":
            _flush.zero_()
        else:
            _flush.sum()
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) * 1e3)
    return statistics.median(times)


def save_rows(rows: list[dict], out_name: str) -> None:
    """A probe's rows as JSON in $OUT (default .)."""
    with open(os.path.join(os.environ.get("OUT", "."), out_name), "w") as f:
        json.dump(rows, f, indent=1)


def best_split(run, y: torch.Tensor, ref: torch.Tensor, splits, row: dict, name: str, atol: float = 2e-1):
    """(dirty-flush us, splits) of the fastest of run(s) over `splits`, each checked first: y
    against ref; a run that returns False does not take the split, a wrong one is marked in
    `row` as "<name>_s<splits>": "WRONG". None if no split ran right."""
    best = None
    for s in splits:
        if run(s) is False:
            continue
        torch.cuda.synchronize()
        if not torch.allclose(y, ref, rtol=2e-2, atol=atol):
            row[f"{name}_s{s}"] = "WRONG"
            continue
        t = time_us(lambda: run(s), reps=25)
        if best is None or t < best[0]:
            best = (round(t, 1), s)
    return best


def sweep_variants(ext, names: list[str], splits: tuple[int, ...], out_name: str) -> None:
    """For each 1 x N x K problem (fp32 and bf16): torch.mm after each flush, then each variant
    `v` of ext.run(a, b, y, v, splits) at its fastest K split (after a dirty flush; a run that
    returns False does not take the split), checked against float64 first. Rows printed as JSON
    and written to $OUT/out_name."""
    rows = []
    for (n, k), dtype in itertools.product(SHAPES, (torch.float32, torch.bfloat16)):
        a, b = torch.randn(1, k, device="cuda", dtype=dtype), torch.randn(k, n, device="cuda", dtype=dtype)
        ref = (a.double() @ b.double()).float()[0]
        y = torch.empty(n, device="cuda")
        torch.backends.cuda.matmul.allow_tf32 = True
        row = {
            "shape": f"1x{n}x{k}",
            "dtype": str(dtype)[6:],
            "torch": round(time_us(lambda: torch.mm(a, b)), 1),
            "torch_clean": round(time_us(lambda: torch.mm(a, b), "clean"), 1),
        }
        for v, name in enumerate(names):
            best = best_split(lambda s: ext.run(a, b, y, v, s), y, ref, splits, row, name)
            if best:  # (dirty us, splits, clean us)
                best += (round(time_us(lambda: ext.run(a, b, y, v, best[1]), "clean", 25), 1),)
            row[name] = best
        rows.append(row)
        print(json.dumps(row), flush=True)
    save_rows(rows, out_name)
