"""Two families of the hand-written TMA + WGMMA step's builds on F.linear products, side by side
(benchmarks/probes/narrow_fitted_probe.py, swapped_rows_probe.py): every build of both forced,
the best of each family against torch.mm, and the planner's pick, alternated over rounds with
the bench's timing (L2 flushed before every repetition). The first family's results are also
checked against a float32 product. Needs an SM90 GPU and the sm_90a build."""

from __future__ import annotations

import torch

import cutlass_ops
from cutlass_ops.bench.timing import time_alternating

STEP6 = "handwritten_sm90_bf16_rc_6_wgmma_tma"


def short(name: str) -> str:
    """A build's name after the step's: n192, swapab_m208; the 128 x 256 step itself n256."""
    return name[len(STEP6) + 1:] or "n256"


def compare(shapes, first: tuple[str, ...], second: tuple[str, ...], labels: tuple[str, str],
            every_build: bool = False) -> None:
    """One line per M x N x K of `shapes` ("rc", bf16): torch.mm's time, the best build of each
    family and its speed against torch.mm, the planner's against torch.mm (its kernel), the
    first family's largest relative error and, with every_build, each build's speed."""
    built = {k.name for k in cutlass_ops.list_kernels(torch.cuda.get_device_capability())}
    first, second = [b for b in first if b in built], [b for b in second if b in built]
    if not first or not second:
        raise SystemExit(f"this build lacks the step-6 {labels[0]} or {labels[1]} builds (hand-written kernels, sm_90a)")
    print(f"M x N x K                torch.mm us   torch/ours: best {labels[0]:<12} best {labels[1]:<12} pick "
          f"(pick's kernel)  max rel err {labels[0]}")
    for m, n, k in shapes:
        x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        w = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
        reference = torch.mm(x.float(), w.float().t())
        error = max(((cutlass_ops.mm(x, w.t(), kernel=b).float() - reference).abs().max()
                     / reference.abs().max()).item() for b in first)
        builds = first + second
        fns = [lambda: torch.mm(x, w.t()), lambda: cutlass_ops.mm(x, w.t())]
        fns += [lambda b=b: cutlass_ops.mm(x, w.t(), kernel=b) for b in builds]
        t = [r.median_ms for r in time_alternating(fns, rounds=3, rep_ms=40)]
        ratio = {b: t[0] / ti for b, ti in zip(builds, t[2:])}
        best_first, best_second = max(first, key=ratio.get), max(second, key=ratio.get)
        pick = cutlass_ops.explain(x, w.t()).kernel
        line = (f"{m:>5} x {n:>5} x {k:>5}  {t[0] * 1e3:11.1f}  {short(best_first):>12} {ratio[best_first]:.3f}  "
                f"{short(best_second):>12} {ratio[best_second]:.3f}  {t[0] / t[1]:.3f} ({pick})  {error:.1e}")
        if every_build:
            line += "  " + " ".join(f"{short(b)}={ratio[b]:.3f}" for b in builds)
        print(line, flush=True)
