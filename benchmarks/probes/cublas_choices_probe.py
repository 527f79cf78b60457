"""What cuBLAS runs where our best built kernel loses: for the sweep rows where the fastest
built candidate is slowest against torch.mm, the kernel torch.mm launches (torch.profiler),
its tile and cluster as its name gives them, beside the kernel cutlass_ops dispatches.

    python benchmarks/probes/cublas_choices_probe.py [--dtype bf16] [--below 0.92] [--limit 60] [--group model]
                                                     [--min-us T] [--json OUT]

Rows come from the stored sweep (benchmarks/sweep/<device>/<dtype>.jsonl.gz, both splits, single
products, or those of one problem group with `--group`: "model", "random"; with `--min-us`, those
where torch.mm took at least T us): those whose best built candidate is below `--below` x
torch.mm's time, the worst first, one per (layout, M, N, K) class of rounded log2 sizes. Each is run on fresh random
operands in its layout; both libraries are called once under the profiler after a warm-up, and
the longest GPU activity of each call is its GEMM kernel. Times are the profiler's kernel
durations (no L2 flush: this probe names kernels, the sweep times them).
"""
import argparse
import gzip
import json
import math
import re
import tempfile
from pathlib import Path

import torch
from torch.profiler import ProfilerActivity, profile

import cutlass_ops
from cutlass_ops.calibration import problems as problem_sets
from cutlass_ops.calibration import sweep as sweep_files

ROOT = Path(__file__).resolve().parents[2]
DTYPES = {"bf16": torch.bfloat16, "f16": torch.float16}


def losing_rows(path: Path, below: float, limit: int, group: str = "", min_us: float = 0) -> list[dict]:
    rows = []
    with gzip.open(path, "rt") as f:
        for line in f:
            row = json.loads(line)
            if "id" not in row or row.get("batch", 1) > 1 or (group and row["group"] != group):
                continue
            if row["torch_us"] < min_us:
                continue
            times = [c[4] for c in row["c"] if c[4]]
            if times and row["torch_us"] / min(times) < below:
                rows.append((row["torch_us"] / min(times), row))
    rows.sort(key=lambda x: x[0])
    chosen, seen = [], set()
    for ratio, row in rows:
        key = (row["layout"], *(round(math.log2(max(1, v))) for v in (row["m"], row["n"], row["k"])))
        if key in seen:
            continue
        seen.add(key)
        best = min((c for c in row["c"] if c[4]), key=lambda c: c[4])
        chosen.append({**{k: row[k] for k in ("id", "m", "n", "k", "layout", "torch_us")},
                       "best_ratio": round(ratio, 3), "best": best[1], "best_us": best[4]})
        if len(chosen) == limit:
            break
    return chosen


def gemm_kernel(fn) -> tuple[str, float]:
    """The longest GPU activity of one call of fn: (name, duration in us)."""
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    with tempfile.TemporaryDirectory() as folder:
        prof.export_chrome_trace(f"{folder}/trace.json")
        trace = json.load(open(f"{folder}/trace.json"))["traceEvents"]
    kernels = [e for e in trace if e.get("cat") == "kernel"]
    longest = max(kernels, key=lambda e: e["dur"])
    return longest["name"], float(longest["dur"])


def nvjet_shape(name: str) -> str:
    """Tile and cluster from a cuBLAS nvjet kernel name, in rows x columns of torch's output.
    cuBLAS computes D^T (column-major), so its names give the columns first:
    nvjet_sm90_tst_64x136_64x8_4x2_... is a tile of 136 rows x 64 columns with a cluster of 2 tile
    rows x 4 tile columns (and a K tile of 64, 8 stages)."""
    m = re.search(r"nvjet_\w+?_(\d+)x(\d+)_(\d+)x(\d+)_(\d+)x(\d+)", name)
    if not m:
        return name[:60]
    cols, rows, _, stages, cluster_cols, cluster_rows = m.groups()
    return f"tile {rows}x{cols}, cluster {cluster_rows}x{cluster_cols} (rows x columns), {stages} stages"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dtype", default="bf16", choices=sorted(DTYPES))
    ap.add_argument("--below", type=float, default=0.92)
    ap.add_argument("--limit", type=int, default=60)
    ap.add_argument("--group", default="", help="only the sweep's rows of this problem group (model, random)")
    ap.add_argument("--min-us", type=float, default=0, help="only rows where torch.mm took at least this long")
    ap.add_argument("--json")
    args = ap.parse_args()
    index = torch.cuda.current_device()
    cc, sms = torch.cuda.get_device_capability(index), torch.cuda.get_device_properties(index).multi_processor_count
    folder = ROOT / "benchmarks" / "sweep" / sweep_files.device_key(torch.cuda.get_device_name(index), cc, sms)
    dtype = DTYPES[args.dtype]
    out = []
    print(f"{'problem':>22} {'best/torch':>10} {'torch us':>8} {'ours us':>8}  cuBLAS kernel / ours")
    for row in losing_rows(folder / f"{args.dtype}.jsonl.gz", args.below, args.limit, args.group, args.min_us):
        a, b = sweep_files.make_operands(problem_sets.Problem(row["id"], args.dtype, row["m"], row["n"], row["k"],
                                                              row["layout"], "probe"), dtype, None)
        theirs, theirs_us = gemm_kernel(lambda: torch.mm(a, b))
        ours, ours_us = gemm_kernel(lambda: cutlass_ops.mm(a, b))
        row.update(cublas=theirs, cublas_shape=nvjet_shape(theirs), cublas_us=theirs_us, ours=ours, ours_us=ours_us)
        out.append(row)
        problem = f"{row['m']}x{row['n']}x{row['k']} {row['layout']}"
        print(f"{problem:>22} {row['best_ratio']:>10.3f} {theirs_us:>8.1f} {ours_us:>8.1f}  {row['cublas_shape']} / "
              f"best built {row['best']}", flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
