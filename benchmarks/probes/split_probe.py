"""Time chosen (kernel, K decomposition, slice count) choices on given shapes, against torch.mm.

Each choice is put in the tuning table for the problem (as the autotuner would record it), so
the call runs exactly that plan; the table is cleared between choices. Timings: triton's
do_bench median with L2 flushed, random N(0, 1) row-major operands, torch.mm timed first on
the same operands; results are checked against float64 before they are timed. This is how the
split-K rules of 2026-11-22 were read off (benchmarks/RESULTS.md at 824ebc1).

    python benchmarks/probes/split_probe.py --dtype fp32 --shapes 64x4096x4096,32x32768x32768 \\
        --kernels 'cutlass2x_sm80_f32_rr_simt_*' --splits 1,2,4,8
    python benchmarks/probes/split_probe.py --dtype bf16 --shapes 256x256x131072 \\
        --kernels '*_bf16_rr_*splitk_sum,*_bf16_rr_128x128x64_1x1x1_coop_streamk' --splits 8,16,32,64

A slice count of 1 means data-parallel; stream-K is `--splits 0`. Needs a GPU.
"""

from __future__ import annotations

import argparse
import fnmatch
import json

import torch

import cutlass_ops
from cutlass_ops import _extension
from cutlass_ops.bench.suites import parse_shapes
from cutlass_ops.bench.timing import median_ms
from cutlass_ops.testing import matrix

_C = _extension._C
DTYPES = {"bf16": (torch.bfloat16, "bf16"), "fp16": (torch.float16, "f16"), "fp32": (torch.float32, "f32"),
          "tf32": (torch.float32, "tf32"), "fp64": (torch.float64, "f64")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dtype", default="bf16", choices=sorted(DTYPES))
    parser.add_argument("--shapes", required=True, help="comma list of MxNxK (row-major A and B)")
    parser.add_argument("--kernels", required=True, help="comma list of kernel names or globs")
    parser.add_argument("--splits", default="1,2,4,8",
                        help="comma list of slice counts (1: data-parallel, 0: stream-K)")
    parser.add_argument("--rep-ms", type=float, default=20.0)
    parser.add_argument("--json", help="write the rows here")
    args = parser.parse_args()

    dtype, precision = DTYPES[args.dtype]
    # tf32: both torch.mm and cutlass_ops run float32 as TF32; fp32: both in IEEE fp32.
    torch.backends.cuda.matmul.allow_tf32 = args.dtype == "tf32"
    cutlass_ops.set_fp32_mode("ieee")
    patterns = [p.strip() for p in args.kernels.split(",") if p.strip()]
    names = [k.name for k in cutlass_ops.list_kernels(torch.cuda.get_device_capability())
             if k.dtype == precision and any(fnmatch.fnmatch(k.name, p) for p in patterns)]
    splits = [int(s) for s in args.splits.split(",")]
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    loaded = _C.tuning_entries()
    rows = []
    for case in parse_shapes(args.shapes):
        m, n, k = case.m, case.n, case.k
        a, b = matrix(m, k, dtype, "r", device="cuda"), matrix(k, n, dtype, "r", device="cuda")
        ref = a.double() @ b.double()
        torch_ms = median_ms(lambda: torch.mm(a, b), rep_ms=args.rep_ms)
        # Auto dispatch as loaded at import (the shipped table and your cache), then the
        # heuristic alone.
        _C.tuning_clear()
        for entry in loaded:
            _C.tuning_insert(entry)
        tuned = cutlass_ops.explain(a, b)
        ms = median_ms(lambda: cutlass_ops.mm(a, b), rep_ms=args.rep_ms)
        rows.append({"shape": case.label, "dtype": args.dtype, "kernel": "auto", "plan": tuned.kernel,
                     "decomposition": tuned.decomposition, "splits": tuned.splits, "us": 1e3 * ms,
                     "torch_us": 1e3 * torch_ms, "xtorch": torch_ms / ms})
        print(f"   auto: {tuned.kernel} {tuned.decomposition} x{tuned.splits} {1e3 * ms:.1f} us  "
              f"{torch_ms / ms:.3f}x", flush=True)
        _C.tuning_clear()
        auto = cutlass_ops.explain(a, b)
        print(f"{case.label} {args.dtype}: torch.mm {1e3 * torch_ms:.1f} us; heuristic: {auto.kernel} "
              f"{auto.decomposition} x{auto.splits}", flush=True)
        for name in names:
            for s in splits:
                decomposition = "stream-k" if s == 0 else ("data-parallel" if s == 1 else "split-k")
                entry = {"precision": precision, "layout_a": "row", "layout_b": "row",
                         "align": [auto.a.align, auto.b.align, auto.out.align],
                         "cc": auto.device.capability[0] * 10 + auto.device.capability[1], "sm_count": sms,
                         "mnk": list(auto.problem), "kernel": name, "decomposition": decomposition, "splits": max(s, 1)}
                _C.tuning_clear()
                try:
                    _C.tuning_insert(entry)
                    plan = cutlass_ops.explain(a, b)
                    if not plan.tuned or plan.kernel != name:
                        continue  # the kernel does not take this problem (alignment, rows)
                    out = cutlass_ops.mm(a, b)
                    err = ((out.double() - ref).norm() / ref.norm()).item()
                    ms = median_ms(lambda: cutlass_ops.mm(a, b), rep_ms=args.rep_ms)
                except (RuntimeError, ValueError) as error:
                    print(f"   {name} {decomposition} x{s}: refused ({str(error)[:100]})")
                    continue
                rows.append({"shape": case.label, "dtype": args.dtype, "kernel": name, "decomposition": decomposition,
                             "splits": max(s, 1), "us": 1e3 * ms, "torch_us": 1e3 * torch_ms,
                             "xtorch": torch_ms / ms, "rel_err": err})
                print(f"   {name:64s} {decomposition:13s} x{max(s, 1):<3d} {1e3 * ms:9.1f} us  "
                      f"{torch_ms / ms:.3f}x  err {err:.1e}", flush=True)
        _C.tuning_clear()
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
