"""Do the test split's worst picks reproduce when their two candidates are timed again?

`evaluate` judges the model on the sweep's stored times: a pick's regret is its stored time over
the fastest stored candidate's. Where that regret is high, either the model erred or one of the
two stored times did (a pass slowed by the clocks, say). This probe times the pick's and the
best's kernels again on fresh operands, as the sweep times a row but with more repetitions and
passes (`sweep.measure` over the two kernels), for

* the tail: every test-split problem whose stored regret is above `--above`;
* a control: as many problems drawn (seeded) from those at or below it, so that a re-timing's
  own spread shows both ways: how many of them rise above the threshold on their own.

    python benchmarks/probes/tail_retime_probe.py [--sweep benchmarks/sweep/sm90_132sm_nvidia_h200]
        [--above 1.2] [--reps 7] [--passes 3] [--list]

The calibration is the shipped one for the sweep's device. docs/findings.md, "The worst picks
measured again, and two rankings aimed at them", holds figures.
"""

from __future__ import annotations

import argparse
import math
import random
from pathlib import Path

from cutlass_ops.calibration import store
from cutlass_ops.calibration.evaluate import Judged, judge
from cutlass_ops.calibration.fit import geomean

ROOT = Path(__file__).resolve().parents[2]
SWEEP = ROOT / "benchmarks" / "sweep" / "sm90_132sm_nvidia_h200"


def problem_of(j: Judged):
    """The sweep problem a judged row was measured on (its shape, layout and batch)."""
    from cutlass_ops.calibration.problems import Problem

    dims, layout = j.shape.split()
    extents = [int(v) for v in dims.split("x")]
    batch, (m, n, k) = (extents[0], extents[1:]) if len(extents) == 4 else (1, extents)
    return Problem(j.id, j.dtype, m, n, k, layout, j.group, j.model, j.split, batch)


def retime(j: Judged, reps: int, passes: int) -> tuple[float, float]:
    """The pick's and the best candidate's times (us) timed again side by side."""
    import torch

    from cutlass_ops.calibration import sweep

    generator = torch.Generator(device="cuda").manual_seed(11)
    with sweep._settings(j.dtype):
        row = sweep.measure(problem_of(j), reps, generator, passes=passes, only={j.pick[1], j.best[1]})
    times = {tuple(c[:4]): c[4] for c in row["c"] if c[4]}
    return times.get(tuple(j.pick), math.nan), times.get(tuple(j.best), math.nan)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sweep", type=Path, default=SWEEP, help="the device's sweep folder (its test split)")
    parser.add_argument("--above", type=float, default=1.2, help="the tail: stored regret above this")
    parser.add_argument("--reps", type=int, default=7)
    parser.add_argument("--passes", type=int, default=3)
    parser.add_argument("--list", action="store_true", help="only list the problems (no GPU)")
    args = parser.parse_args()
    store.install_shipped()
    judged, _ = judge(args.sweep)
    tail = sorted((j for j in judged if j.regret > args.above), key=lambda j: -j.regret)
    rest = [j for j in judged if j.regret <= args.above and j.pick != j.best]
    control = random.Random(0).sample(rest, min(len(tail), len(rest)))
    print(f"{len(judged)} test problems; {len(tail)} above regret {args.above}, {len(control)} drawn below it "
          f"(of {len(rest)} whose pick is not the fastest)")
    summary = {}
    for label, rows in (("tail", tail), ("control", control)):
        again = []
        for j in rows:
            line = f"{label:7} {j.dtype:6} {j.shape:28} stored {j.regret:5.2f} ({j.pick_us:8.1f} / {j.best_us:8.1f} us)"
            if args.list:
                print(f"{line}  {j.pick[1]} / {j.best[1]}")
                continue
            pick_us, best_us = retime(j, args.reps, args.passes)
            regret = pick_us / best_us
            print(f"{line}  again {regret:5.2f} ({pick_us:8.1f} / {best_us:8.1f} us)  {j.pick[1]} / {j.best[1]}",
                  flush=True)
            if not math.isnan(regret):
                again.append((j.regret, regret))
        summary[label] = again
    for label, pairs in summary.items():
        if not pairs:
            continue
        stored = [s for s, _ in pairs]
        timed = [a for _, a in pairs]
        print(f"{label}: {len(pairs)} problems, stored regret geomean {geomean(stored):.3f} "
              f"(above 1.25: {sum(s > 1.25 for s in stored)}), timed again {geomean(timed):.3f} "
              f"(above 1.25: {sum(a > 1.25 for a in timed)}, above {args.above}: {sum(a > args.above for a in timed)}, "
              f"below 1.0: {sum(a < 1.0 for a in timed)})")


if __name__ == "__main__":
    main()
