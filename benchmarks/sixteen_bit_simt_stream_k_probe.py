"""16-bit problems with odd leading dims on CUTLASS 2.x's SIMT kernel: K divided by stream-K
(auto dispatch) against data-parallel (forced by a tuning-table entry), and torch.mm (sixteenth
session).

These problems are too small for staging into aligned buffers to pay, and the SIMT kernel is
the one that takes 2-byte alignment. Serial split-K, which ran them before, rounded every K
slice's partial sum to 16 bits; stream-K sums partial tiles in float32. What it showed (H100,
benchmarks/RESULTS.md): stream-K 23-71 us where torch.mm takes 13-52, data-parallel 5-25x
slower than stream-K. Needs a GPU.

    python benchmarks/sixteen_bit_simt_stream_k_probe.py
"""

import torch

import cutlass_ops
from cutlass_ops.bench.timing import median_ms
from cutlass_ops.testing import matrix

_C = cutlass_ops._extension._C
SHAPES = [(7, 2, 911), (7, 2, 4001), (33, 65, 3001), (130, 70, 12001), (300, 500, 2001)]


def median_us(fn):
    """The benchmark harness's timing: warm-up, L2 flushed before each repetition, median."""
    return 1e3 * median_ms(fn, rep_ms=20.0)


def main():
    _C.tuning_clear()  # the heuristic's plan, not the shipped table's
    for dtype, name in ((torch.float16, "f16"), (torch.bfloat16, "bf16")):
        for m, n, k in SHAPES:
            a, b = matrix(m, k, dtype), matrix(n, k, dtype).t()  # odd leading dims, B column-major
            plan = cutlass_ops.explain(a, b)
            row = (f"{name} {m}x{n}x{k} {plan.kernel} {plan.decomposition}: "
                   f"torch {median_us(lambda: torch.mm(a, b)):.1f} us, "
                   f"auto {median_us(lambda: cutlass_ops.mm(a, b)):.1f}")
            if plan.kernel.startswith("cutlass2x"):
                _C.tuning_insert({"precision": name, "layout_a": plan.a.layout, "layout_b": plan.b.layout,
                                  "align": [plan.a.align, plan.b.align, plan.out.align],
                                  "cc": plan.device.capability[0] * 10 + plan.device.capability[1],
                                  "sm_count": plan.device.sm_count, "mnk": list(plan.problem), "kernel": plan.kernel,
                                  "decomposition": "data-parallel", "splits": 1})
                assert cutlass_ops.explain(a, b).decomposition == "data-parallel"
                row += f", data-parallel {median_us(lambda: cutlass_ops.mm(a, b)):.1f}"
                _C.tuning_clear()
            print(row, flush=True)


if __name__ == "__main__":
    main()
