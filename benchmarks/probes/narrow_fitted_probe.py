"""Do narrower N-fitted builds of the hand-written TMA + WGMMA step (tiles of 128 rows by 128,
144, 160 or 176 columns) beat the wider ones and the planner's pick on F.linear products of a
few hundred to a few thousand rows, where 128 x 192-256 tiles leave SMs idle (500 x 4608: 96 tiles
of 128x192 for 132 SMs, 128 of 128x144)?

F.linear's layout ("rc", x @ W.t()), bf16: every step-6 N-fitted build forced, the best of the
narrow ones (128-176) and of the wide ones (192-256) against torch.mm, and the planner's pick,
alternated over rounds with the bench's timing (L2 flushed before every repetition). Each narrow
result is checked against a float32 product.

    python benchmarks/probes/narrow_fitted_probe.py [--shapes 500x4608x3584,...]

docs/findings.md, "Narrow N-fitted tiles", holds the figures.
"""

from __future__ import annotations

import argparse

import torch

import cutlass_ops
from cutlass_ops.bench.timing import time_alternating

# Test-split F.linear products of the H200 sweep where the best built kernel was below torch.mm,
# and a few neighbours (rows x output features x input features).
SHAPES = ((500, 4608, 3584), (500, 4672, 4544), (500, 4544, 4544), (500, 3072, 1024), (500, 4096, 1024),
          (500, 3584, 3584), (777, 3072, 1024), (1000, 4096, 1024), (1000, 4608, 3584), (1500, 1024, 1024),
          (1500, 3072, 1024), (1500, 3584, 3584), (2049, 1024, 1024), (257, 4096, 1024), (4096, 4096, 4096))
STEP6 = "handwritten_sm90_bf16_rc_6_wgmma_tma"
NARROW = tuple(f"{STEP6}_n{n}" for n in (128, 144, 160, 176))
WIDE = (*(f"{STEP6}_n{n}" for n in (192, 208, 224, 240)), STEP6)


def short(name: str) -> str:
    return name[len(STEP6) + 1:] or "n256"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shapes", help="M x N x K list, comma-separated (default: the probe's fifteen)")
    args = parser.parse_args()
    shapes = SHAPES if not args.shapes else [tuple(int(v) for v in s.split("x")) for s in args.shapes.split(",")]
    built = {k.name for k in cutlass_ops.list_kernels(torch.cuda.get_device_capability())}
    narrow = [b for b in NARROW if b in built]
    wide = [b for b in WIDE if b in built]
    if not narrow or not wide:
        raise SystemExit("this build lacks the step-6 N-fitted builds (hand-written kernels, sm_90a)")
    print("M x N x K                torch.mm us   torch/ours: best narrow      best wide        pick "
          "(pick's kernel)  max rel err narrow")
    for m, n, k in shapes:
        x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        w = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
        reference = torch.mm(x.float(), w.float().t())
        error = max(((cutlass_ops.mm(x, w.t(), kernel=b).float() - reference).abs().max()
                     / reference.abs().max()).item() for b in narrow)
        builds = narrow + wide
        fns = [lambda: torch.mm(x, w.t()), lambda: cutlass_ops.mm(x, w.t())]
        fns += [lambda b=b: cutlass_ops.mm(x, w.t(), kernel=b) for b in builds]
        t = [r.median_ms for r in time_alternating(fns, rounds=3, rep_ms=40)]
        ratio = {b: t[0] / ti for b, ti in zip(builds, t[2:])}
        best_narrow = max(narrow, key=ratio.get)
        best_wide = max(wide, key=ratio.get)
        pick = cutlass_ops.explain(x, w.t()).kernel
        print(f"{m:>5} x {n:>5} x {k:>5}  {t[0] * 1e3:11.1f}  {short(best_narrow):>12} {ratio[best_narrow]:.3f}  "
              f"{short(best_wide):>12} {ratio[best_wide]:.3f}  {t[0] / t[1]:.3f} ({pick})  {error:.1e}  "
              + " ".join(f"{short(b)}={ratio[b]:.3f}" for b in builds), flush=True)


if __name__ == "__main__":
    main()
