"""bmm against torch.bmm on attention-shaped batches: q @ k^T (B*H, S, D) @ (B*H, D, S) and
att @ v (B*H, S, S) @ (B*H, S, D), bf16, with k^T a transposed view as attention makes it.

    python benchmarks/probes/bmm_attention_probe.py [--json FILE]

Medians of cutlass_ops.bench.timing.median_ms (L2 flushed between runs), torch and cutlass_ops alternated
three times per shape; the ratio is torch's time over ours (> 1: ours is faster)."""

import argparse
import json
import math

import torch

import cutlass_ops
from cutlass_ops.bench.timing import median_ms

SHAPES = [(bh, s, d) for bh in (32, 128) for s in (128, 512, 1024, 2048) for d in (64, 128)]


def bench(fn):
    return median_ms(fn, warmup_ms=10, rep_ms=40)


def attention_products():
    """(name, batch, s, d, a, b) for each shape: q @ k^T (k^T a transposed view) and att @ v."""
    for bh, s, d in SHAPES:
        q = torch.randn(bh, s, d, dtype=torch.bfloat16, device="cuda")
        k = torch.randn(bh, s, d, dtype=torch.bfloat16, device="cuda")
        att = torch.randn(bh, s, s, dtype=torch.bfloat16, device="cuda")
        yield "q@k^T", bh, s, d, q, k.transpose(1, 2)
        yield "att@v", bh, s, d, att, k


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--json")
    args = parser.parse_args()
    rows = []
    for name, bh, s, d, a, b in attention_products():
        ours, theirs = [], []
        for _ in range(3):
            theirs.append(bench(lambda: torch.bmm(a, b)))
            ours.append(bench(lambda: cutlass_ops.bmm(a, b)))
        t, o = sorted(theirs)[1], sorted(ours)[1]
        ref = torch.bmm(a.double(), b.double())
        err = (cutlass_ops.bmm(a, b).double() - ref).norm() / ref.norm()
        plan = cutlass_ops.explain(a, b)
        rows.append({"op": name, "batch": bh, "s": s, "d": d, "torch_ms": t, "ours_ms": o, "ratio": t / o,
                     "rel_err": err.item(), "kernel": plan.kernel})
        print(f"{name:6s} {bh:4d}x{s:5d}x{d:4d}  torch {t * 1e3:8.1f} us  ours {o * 1e3:8.1f} us  "
              f"x{t / o:5.2f}  err {err:.1e}  {plan.kernel}", flush=True)
    gm = math.exp(sum(math.log(r["ratio"]) for r in rows) / len(rows))
    worst = min(rows, key=lambda r: r["ratio"])
    print(f"geomean x{gm:.3f}, worst x{worst['ratio']:.3f} ({worst['op']} {worst['batch']}x{worst['s']}x{worst['d']})")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(), "rows": rows, "geomean": gm}, f, indent=1)


if __name__ == "__main__":
    main()
