"""Every batched kernel the planner offers for attention-shaped bmm calls, timed, against the
cost model's pick: how much the model leaves on the table for batches (regret), with and
without its residual correction (fitted on single products).

    python benchmarks/probes/bmm_candidates_probe.py [--json FILE]

Each candidate runs through _C.bmm_with_kernel; times are cutlass_ops.bench.timing medians (L2
flushed), torch.bmm timed alongside."""

import argparse
import json
import math

import torch

import cutlass_ops
from bmm_attention_probe import attention_products
from cutlass_ops.bench.timing import median_ms

_C = cutlass_ops._extension._C


def bench(fn):
    return median_ms(fn, warmup_ms=5, rep_ms=25)


def gm(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--json")
    args = parser.parse_args()
    rows = []
    for name, bh, s, d, a, b in attention_products():
        plan = cutlass_ops.explain(a, b)
        cands = [c for c in plan.candidates if c.decomposition == "data-parallel" and c.variant == "in-place"]
        times = {}
        for c in cands:
            times[c.kernel] = bench(lambda: _C.bmm_with_kernel(a, b, c.kernel))
        torch_ms = bench(lambda: torch.bmm(a, b))
        best = min(times, key=times.get)
        by_model = min(cands, key=lambda c: c.predicted_us).kernel
        by_raw = min(cands, key=lambda c: c.kernel_us + c.copy_us).kernel
        row = {"op": name, "batch": bh, "s": s, "d": d, "torch_ms": torch_ms, "times": times, "best": best,
               "model": by_model, "raw": by_raw, "regret_model": times[by_model] / times[best],
               "regret_raw": times[by_raw] / times[best], "best_vs_torch": torch_ms / times[best],
               "model_vs_torch": torch_ms / times[by_model],
               "predicted": {c.kernel: [c.predicted_us, c.kernel_us + c.copy_us] for c in cands}}
        rows.append(row)
        print(f"{name:6s} {bh:4d}x{s:5d}x{d:4d} torch {torch_ms * 1e3:7.1f} best {times[best] * 1e3:7.1f} "
              f"{best}  model x{row['regret_model']:.2f} ({by_model})  raw x{row['regret_raw']:.2f} ({by_raw})",
              flush=True)
    print(f"regret geomean: model {gm([r['regret_model'] for r in rows]):.3f} (max {max(r['regret_model'] for r in rows):.3f}), "
          f"raw {gm([r['regret_raw'] for r in rows]):.3f} (max {max(r['regret_raw'] for r in rows):.3f}); "
          f"vs torch: model {gm([r['model_vs_torch'] for r in rows]):.3f}, best {gm([r['best_vs_torch'] for r in rows]):.3f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(), "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
