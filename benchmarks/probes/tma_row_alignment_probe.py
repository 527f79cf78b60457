"""Does the hand-written TMA + WGMMA step lose speed when its operands' rows are off 128-byte
boundaries?

F.linear problems ("rc", bf16) whose K is 8 mod 16 (each row of A and of B starts only 16-byte
aligned, so every 128-byte box row the TMA loads straddles two lines) and aligned controls; the
step-6 kernel forced (the n256 and n240 builds) against torch.mm, alternated over rounds with the
bench's timing (L2 flushed before every repetition).

    python benchmarks/probes/tma_row_alignment_probe.py [LABEL]

The L2 promotion the kernel asks of its tensor maps is picked per operand
(csrc/handwritten/gemm_6_wgmma_tma_sm90.cu, l2_promotion); rebuilding with one setting forced
compares them (docs/findings.md, "Rows off 128-byte boundaries").
"""

from __future__ import annotations

import sys

import torch

import cutlass_ops
from cutlass_ops.bench.timing import time_alternating

SHAPES = ((3288, 14136, 920), (1600, 8656, 3032), (15120, 11408, 4328), (6232, 968, 8664), (1896, 8392, 792),
          (3000, 14336, 4096), (4096, 4096, 4096), (1000, 14336, 4096), (3000, 14336, 4104))
BUILDS = ("handwritten_sm90_bf16_rc_6_wgmma_tma", "handwritten_sm90_bf16_rc_6_wgmma_tma_n240")


def main() -> None:
    label = sys.argv[1] if len(sys.argv) > 1 else ""
    print(f"{label} M x N x K            K % 64  torch.mm us  torch/ours: " + "  ".join(b[31:] or "n256" for b in BUILDS))
    for m, n, k in SHAPES:
        x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        w = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
        fns = [lambda: torch.mm(x, w.t())] + [lambda b=b: cutlass_ops.mm(x, w.t(), kernel=b) for b in BUILDS]
        t = [r.median_ms for r in time_alternating(fns, rounds=3, rep_ms=50)]
        print(f"{label} {m:>5} x {n:>5} x {k:>5}  {k % 64:6}  {t[0] * 1e3:11.1f}  "
              + "  ".join(f"{t[0] / ti:.3f}" for ti in t[1:]), flush=True)


if __name__ == "__main__":
    main()
