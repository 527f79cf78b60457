"""Which tile order suits a persistent SM90 kernel on large problems: CUTLASS's heuristic raster,
or a raster along M or N in bands of 2, 4 or 8 tiles (max_swizzle_size)?

Each order is put in the tuning table for the problem, so the probe runs exactly what a tuned
entry would: the kernel the planner picks (or --kernel). CUDA events, a 256 MB write to flush
the L2 before every call, torch.mm and the orders alternated in rounds; the median over all
rounds. Needs an SM90 GPU.

    python benchmarks/probes/tile_order_probe.py --dtype bf16 --layout rc 8191x14336x4096 4097x10240x8192
    python benchmarks/probes/tile_order_probe.py --dtype 3xtf32 4096x4096x4096 8192x14336x4096
"""

import argparse
import statistics

import torch

import cutlass_ops
from cutlass_ops import _C, tuning

from probe_timing import flushed_event_us

ORDERS = [("heuristic", 1), ("along-m", 1), ("along-n", 1), ("along-m", 2), ("along-n", 2), ("along-m", 4),
          ("along-n", 4), ("along-m", 8), ("along-n", 8)]
DTYPES = {"bf16": torch.bfloat16, "f16": torch.float16, "tf32": torch.float32, "3xtf32": torch.float32}


def operand(rows: int, cols: int, major: str, dtype: torch.dtype) -> torch.Tensor:
    """A rows x cols matrix, row-major ("r") or a transposed view of a row-major one ("c")."""
    if major == "r":
        return torch.randn(rows, cols, device="cuda", dtype=dtype)
    return torch.randn(cols, rows, device="cuda", dtype=dtype).t()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("shapes", nargs="+", help="MxNxK")
    ap.add_argument("--dtype", default="bf16", choices=sorted(DTYPES))
    ap.add_argument("--layout", default="rc", help="A then B: r = row-major, c = column-major (default rc: F.linear)")
    ap.add_argument("--kernel", default=None, help="a kernel name (default: the planner's pick)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--reps", type=int, default=5, help="calls per implementation and round")
    args = ap.parse_args()
    if args.dtype == "3xtf32":
        cutlass_ops.set_fp32_mode("3xtf32")  # float32 with TF32 off
    torch.backends.cuda.matmul.allow_tf32 = args.dtype == "tf32"
    dtype = DTYPES[args.dtype]
    flush = torch.empty(256 * 1024 * 1024 // 4, device="cuda")
    orders_tiles = {kernel.name: kernel.orders_tiles for kernel in cutlass_ops.list_kernels()}
    print(torch.cuda.get_device_name(), args.dtype, args.layout, flush=True)
    for shape in args.shapes:
        m, n, k = (int(x) for x in shape.split("x"))
        a, b = operand(m, k, args.layout[0], dtype), operand(k, n, args.layout[1], dtype)
        out = torch.empty(m, n, device="cuda", dtype=dtype)
        if args.kernel:
            tuning.pin(a, b, args.kernel, out=out)
        plan = cutlass_ops.explain(a, b, out=out)
        tuning.clear()
        if not orders_tiles.get(plan.kernel, False):
            print(f"{m}x{n}x{k} {plan.kernel}: takes no tile order (not a persistent SM90 kernel)", flush=True)
            continue
        key = {**plan.tuning_key, "align": list(plan.tuning_key["align"]), "mnk": list(plan.tuning_key["mnk"]),
               "kernel": plan.kernel, "decomposition": plan.decomposition, "splits": plan.splits,
               "variant": plan.variant}
        impls = [("torch", None)] + [(f"{r}/{s}", (r, s)) for r, s in ORDERS]
        times = {name: [] for name, _ in impls}
        try:
            for _ in range(args.rounds):
                for name, order in impls:
                    if order is None:
                        fn = lambda: torch.mm(a, b, out=out)  # noqa: E731
                    else:
                        _C.tuning_insert({**key, "raster": order[0], "swizzle": order[1]})
                        fn = lambda: cutlass_ops.mm(a, b, out=out)  # noqa: E731
                    fn()
                    times[name] += [flushed_event_us(fn, flush) for _ in range(args.reps)]
        finally:
            tuning.clear()
        med = {name: statistics.median(t) for name, t in times.items()}
        theirs = med.pop("torch")
        base = med["heuristic/1"]
        best = min(med, key=med.get)
        cells = " ".join(f"{name} {t:.0f} ({theirs / t:.3f}x)" for name, t in med.items())
        print(f"{m}x{n}x{k} {plan.kernel} {plan.decomposition}: torch {theirs:.0f} us | {cells} | "
              f"best {best}: {base / med[best]:.3f}x the heuristic's speed", flush=True)
        del a, b, out
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
