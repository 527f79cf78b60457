"""How the few-row streaming kernels' time depends on the row count (bf16, rr).

    python benchmarks/probes/skinny_rows_probe.py
"""
import torch

import cutlass_ops
from cutlass_ops.bench.timing import time_alternating

KERNELS = ["handwritten_sm80_bf16_rr_skinny_m", "handwritten_sm80_bf16_rr_skinny_m_a1",
           "handwritten_sm80_bf16_rr_skinny_m_a1_elementwise"]


def main() -> None:
    for n, k in ((8, 672), (1072, 392), (4096, 4096)):
        for m in (1, 2, 4, 5, 8, 9, 16):
            a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
            b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
            ref = a.double() @ b.double()
            row = [f"{m:>3}x{n:>5}x{k:>5}"]
            fns, names = [], []
            for name in KERNELS:
                out = cutlass_ops.mm(a, b, kernel=name)
                err = (out.double() - ref).abs().max().item()
                fns.append(lambda name=name: cutlass_ops.mm(a, b, kernel=name))
                names.append(f"{name[-14:]:>14} %7.1f us (err {err:.1e})")
            fns.append(lambda: torch.mm(a, b))
            names.append("torch %6.1f us")
            # the bench's timing: L2 flushed before each repetition, medians, implementations alternated
            for label, timing in zip(names, time_alternating(fns, rounds=3, rep_ms=50)):
                row.append(label % (1e3 * timing.median_ms))
            print("  ".join(row), flush=True)


if __name__ == "__main__":
    main()
