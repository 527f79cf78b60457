"""How the few-row streaming kernels' time depends on the row count (bf16, rr).

    python benchmarks/probes/skinny_rows_probe.py
"""
import torch
from triton.testing import do_bench

import cutlass_ops

KERNELS = ["handwritten_sm80_bf16_rr_skinny_m", "handwritten_sm80_bf16_rr_skinny_m_a1",
           "handwritten_sm80_bf16_rr_skinny_m_a1_elementwise"]


def main() -> None:
    for n, k in ((8, 672), (1072, 392), (4096, 4096)):
        for m in (1, 2, 4, 5, 8, 9, 16):
            a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
            b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
            ref = a.double() @ b.double()
            row = [f"{m:>3}x{n:>5}x{k:>5}"]
            for name in KERNELS:
                try:
                    out = cutlass_ops.mm(a, b, kernel=name)
                    err = (out.double() - ref).abs().max().item()
                    us = 1e3 * do_bench(lambda: cutlass_ops.mm(a, b, kernel=name), warmup=20, rep=50)
                    row.append(f"{name[-14:]:>14} {us:7.1f} us (err {err:.1e})")
                except Exception as e:  # noqa: BLE001
                    row.append(f"{name[-14:]:>14} {type(e).__name__}")
            us = 1e3 * do_bench(lambda: torch.mm(a, b), warmup=20, rep=50)
            row.append(f"torch {us:6.1f} us")
            print("  ".join(row), flush=True)


if __name__ == "__main__":
    main()
