"""Do the swapped builds of the hand-written TMA + WGMMA step (D^T = W @ x^T, tiles of 192-256
rows of x) beat its N-fitted builds (128 rows of x by 192-256 columns) on F.linear problems whose
row count is not a multiple of 128?

F.linear's layout ("rc", x @ W.t()), bf16: every plain step-6 build and every swapped build
forced, the best of each family against torch.mm, and the planner's pick, alternated over rounds
with the bench's timing (L2 flushed before every repetition). Each swapped result is also checked
against a float32 product.

    python benchmarks/probes/swapped_rows_probe.py

docs/findings.md, "Rows of x as the wide side of the tile", holds the figures.
"""

from __future__ import annotations

import torch

import cutlass_ops
from cutlass_ops.bench.timing import time_alternating

SHAPES = ((777, 8192, 8192), (1500, 4096, 4096), (2049, 8192, 8192), (500, 4096, 11008), (1000, 4096, 4096),
          (3000, 4096, 11008), (257, 8192, 28672), (1000, 14336, 4096), (777, 2048, 2048), (2049, 1024, 4096))
STEP6 = "handwritten_sm90_bf16_rc_6_wgmma_tma"
PLAIN = (STEP6, *(f"{STEP6}_n{n}" for n in (192, 208, 224, 240)))
SWAPPED = tuple(f"{STEP6}_swapab_m{m}" for m in (192, 208, 224, 240, 256))


def short(name: str) -> str:
    return name[len(STEP6) + 1:] or "n256"


def main() -> None:
    built = {k.name for k in cutlass_ops.list_kernels(torch.cuda.get_device_capability())}
    plain = [b for b in PLAIN if b in built]
    swapped = [b for b in SWAPPED if b in built]
    if not plain or not swapped:
        raise SystemExit("this build lacks the step-6 builds (hand-written kernels, sm_90a)")
    print("M x N x K                torch.mm us   torch/ours: best plain      best swapped      pick "
          "(pick's kernel)  max rel err swapped")
    for m, n, k in SHAPES:
        x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        w = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
        reference = torch.mm(x.float(), w.float().t())
        error = max(((cutlass_ops.mm(x, w.t(), kernel=b).float() - reference).abs().max()
                     / reference.abs().max()).item() for b in swapped)
        builds = plain + swapped
        fns = [lambda: torch.mm(x, w.t()), lambda: cutlass_ops.mm(x, w.t())]
        fns += [lambda b=b: cutlass_ops.mm(x, w.t(), kernel=b) for b in builds]
        t = [r.median_ms for r in time_alternating(fns, rounds=3, rep_ms=40)]
        ratio = {b: t[0] / ti for b, ti in zip(builds, t[2:])}
        best_plain = max(plain, key=ratio.get)
        best_swapped = max(swapped, key=ratio.get)
        pick = cutlass_ops.explain(x, w.t()).kernel
        print(f"{m:>5} x {n:>5} x {k:>5}  {t[0] * 1e3:11.1f}  {short(best_plain):>12} {ratio[best_plain]:.3f}  "
              f"{short(best_swapped):>12} {ratio[best_swapped]:.3f}  {t[0] / t[1]:.3f} ({pick})  {error:.1e}",
              flush=True)


if __name__ == "__main__":
    main()
