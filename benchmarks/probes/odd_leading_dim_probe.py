"""16-bit problems whose operands break 4-byte alignment (odd K or N, so odd leading dims):
the three ways cutlass_ops can run them, against torch.mm (RESULTS.md at 824ebc1, 2026-11-23, "a two-stage tensor-op kernel").

- "2-stage": CUTLASS 2.x's register-staged tensor-op kernel (configs.h,
  Sm80_128x128x32_64x64x32_2s), which takes any alignment, K divided by stream-K; "2s DP" the
  same kernel data-parallel (a tuning-table entry; only where auto's plan is not staged);
- "simt": the SIMT kernel, the only one that took these operands before it;
- "staged": zero-padded 16-byte aligned copies of A and B, an SM90 kernel on them, and the
  result copied out (what the planner does for large problems; done here in Python the way
  csrc/ops/mm.cpp does it, so it is about the same cost);
- "auto": whatever the planner picks (its kernel is printed).

Forced kernels run with the heuristic's decomposition for them (stream-K where split-K
would have split). Times in us: the benchmark harness's timing (warm-up, L2 flushed before
each repetition, median). Needs a GPU.

    python benchmarks/probes/odd_leading_dim_probe.py [--dtype bf16,f16]
"""

import argparse

import torch

import cutlass_ops
from cutlass_ops.bench.timing import median_ms
from cutlass_ops.testing import matrix

# (M, N, K): tiny, mid-size and large; every K odd, so A's leading dim is odd.
SHAPES = [(7, 2, 911), (33, 65, 3001), (130, 70, 12001), (300, 500, 2001), (1702, 430, 511), (127, 8191, 1021),
          (1000, 999, 1001), (777, 1234, 4321), (2047, 2049, 2051), (4095, 4097, 4093)]
_C = cutlass_ops._extension._C
DTYPES = {"bf16": torch.bfloat16, "f16": torch.float16}


def median_us(fn):
    return 1e3 * median_ms(fn, rep_ms=20.0)


def padded(src, rows, cols):
    """src copied into the top-left corner of a zeroed rows x cols contiguous buffer."""
    dst = torch.empty(rows, cols, dtype=src.dtype, device=src.device)
    dst[: src.shape[0], : src.shape[1]].copy_(src)
    dst[: src.shape[0], src.shape[1]:].zero_()
    dst[src.shape[0]:].zero_()
    return dst


def staged(a, b):
    m, k = a.shape
    n = b.shape[1]
    k8, n8 = -(-k // 8) * 8, -(-n // 8) * 8
    d = cutlass_ops.mm(padded(a, m, k8), padded(b, k8, n8))
    return d[:, :n].contiguous()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dtype", default="bf16,f16")
    args = parser.parse_args()
    cutlass_ops.tuning.clear()  # the heuristic's plans
    columns = ("torch", "auto", "2-stage", "2s DP", "simt", "staged")
    print(f"{'dtype':5} {'layout':6} {'shape':16} " + " ".join(f"{c:>8}" for c in columns) + "  auto's kernel")
    for name in args.dtype.split(","):
        dtype = DTYPES[name]
        for layout in ("nn", "nt"):
            for m, n, k in SHAPES:
                a = matrix(m, k, dtype)
                b = matrix(k, n, dtype) if layout == "nn" else matrix(n, k, dtype).t()
                lb = "r" if layout == "nn" else "c"
                plan = cutlass_ops.explain(a, b)
                times = {"torch": median_us(lambda: torch.mm(a, b)), "auto": median_us(lambda: cutlass_ops.mm(a, b))}
                for label, config in (("2-stage", "128x128x32_2s_a1"), ("simt", "simt_128x128x8_2s_a1")):
                    kernel = f"cutlass2x_sm80_{name}_r{lb}_{config}"
                    times[label] = median_us(lambda: cutlass_ops.mm(a, b, kernel=kernel))
                times["2s DP"] = float("nan")
                if not plan.staged:
                    _C.tuning_insert({"precision": name, "layout_a": plan.a.layout, "layout_b": plan.b.layout,
                                      "align": [plan.a.align, plan.b.align, plan.out.align],
                                      "cc": plan.device.capability[0] * 10 + plan.device.capability[1],
                                      "sm_count": plan.device.sm_count, "mnk": list(plan.problem),
                                      "kernel": f"cutlass2x_sm80_{name}_{plan.a.layout[0]}{plan.b.layout[0]}_128x128x32_2s_a1",
                                      "decomposition": "data-parallel", "splits": 1})
                    assert cutlass_ops.explain(a, b).decomposition == "data-parallel"
                    times["2s DP"] = median_us(lambda: cutlass_ops.mm(a, b))
                    cutlass_ops.tuning.clear()
                times["staged"] = median_us(lambda: staged(a, b))
                ref = torch.mm(a.double(), b.double())
                err = (cutlass_ops.mm(a, b).double() - ref).abs().max().item() / ref.abs().max().item()
                cells = " ".join(f"{times[c]:8.1f}" for c in columns)
                print(f"{name:5} {layout:6} {m}x{n}x{k:<6} {cells}  {plan.kernel} "
                      f"({'staged, ' if plan.staged else ''}{plan.decomposition}); "
                      f"x torch {times['torch'] / times['auto']:.2f}, max err {err:.1e}", flush=True)


if __name__ == "__main__":
    main()
