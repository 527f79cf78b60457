"""Which test-split problems does a calibration dispatch differently from an earlier one, and are
its picks faster there when timed again on this GPU?

A refit is judged on the stored sweep (`python -m cutlass_ops evaluate`); this probe checks the
problems where the two calibrations' picks differ on the hardware: both picks and torch.mm timed
side by side as the sweep times them (`_C.sweep_problem` over the two kernels: L2 flushed before
every repetition, candidates alternated over passes), on fresh operands of the row's shape and
layout. Without a GPU, `--list` prints the changed picks with their stored timings. Single
products only (the batched rows are left out). Both calibrations rank today's candidates: a
candidate the earlier one never timed ranks after its measured ones, so its picks are those the
earlier calibration would make in this build, not necessarily what its own commit ran.

    git show <commit>:cutlass_ops/calibration/data/sm90_132sm_nvidia_h200.json.gz > /tmp/old.json.gz
    python benchmarks/probes/calibration_ab_probe.py /tmp/old.json.gz [--new NEW.json.gz]
        [--sweep benchmarks/sweep/sm90_132sm_nvidia_h200] [--list]

The new calibration is the shipped one for the sweep's device unless --new names another.
docs/findings.md, "Split-K in the TMA + WGMMA step", holds figures.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

from cutlass_ops import _extension
from cutlass_ops.calibration import store
from cutlass_ops.calibration.evaluate import judge

ROOT = Path(__file__).resolve().parents[2]
SWEEP = ROOT / "benchmarks" / "sweep" / "sm90_132sm_nvidia_h200"


def picks(calibration: Path, sweep: Path) -> dict:
    """{(dtype, row id): Judged} for the test split, dispatched by `calibration` alone."""
    _extension._C.clear_calibrations()
    store.install(store.load(calibration), str(calibration))
    judged, _ = judge(sweep)
    return {(j.dtype, j.id): j for j in judged}


def changed_picks(old: Path, new: Path, sweep: Path) -> list[tuple]:
    """(before, after) Judged pairs of the test problems whose pick differs."""
    try:
        before, after = picks(old, sweep), picks(new, sweep)
    finally:
        store.install_shipped()
    return [(before[key], after[key]) for key in before
            if key in after and before[key].pick != after[key].pick and before[key].shape.count("x") == 2]


def retime(before, after, reps: int) -> tuple[float, float, float]:
    """torch.mm's time and both picks' on fresh operands of the row's problem (us), timed as the
    sweep times a row (sweep.measure over the two picks' kernels)."""
    import torch

    from cutlass_ops import precisions
    from cutlass_ops.calibration.problems import Problem
    from cutlass_ops.calibration.sweep import measure

    mnk, layout = before.shape.split()
    m, n, k = (int(v) for v in mnk.split("x"))
    generator = torch.Generator(device="cuda").manual_seed(7)
    with precisions.computing_in(before.dtype):
        row = measure(Problem(before.id, before.dtype, m, n, k, layout, before.group), reps, generator, passes=3,
                      only={before.pick[1], after.pick[1]})
    times = {tuple(c[:4]): c[4] for c in row["c"] if c[4]}
    return row["torch_us"], times.get(tuple(before.pick), math.nan), times.get(tuple(after.pick), math.nan)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("old", type=Path, help="the earlier calibration file")
    parser.add_argument("--new", type=Path, help="the later one (default: the shipped one for the sweep's device)")
    parser.add_argument("--sweep", type=Path, default=SWEEP, help="the device's sweep folder (its test split)")
    parser.add_argument("--list", action="store_true", help="only list the changed picks (no GPU)")
    parser.add_argument("--reps", type=int, default=10)
    args = parser.parse_args()
    new = args.new or store.DATA_DIR / (args.sweep.name + store.SUFFIX)
    pairs = changed_picks(args.old, new, args.sweep)
    print(f"{len(pairs)} test problems dispatched differently ({args.old.name} -> {new.name})")
    logs = []
    for before, after in pairs:
        label = f"{before.dtype:5} {before.shape:26}"
        pick = f"{after.pick[1]} ({after.pick[2]}" + (f" x{after.pick[3]})" if after.pick[2] == "split-k" else ")")
        if args.list:
            print(f"{label} stored: {before.vs_torch:.3f}x -> {after.vs_torch:.3f}x torch.mm  {pick}")
            continue
        torch_us, before_us, after_us = retime(before, after, args.reps)
        print(f"{label} torch.mm {torch_us:8.1f} us  {torch_us / before_us:.3f}x -> {torch_us / after_us:.3f}x  {pick}",
              flush=True)
        if before_us == before_us and after_us == after_us:  # both timed
            logs.append((math.log(torch_us / before_us), math.log(torch_us / after_us)))
    if logs:
        def geomean(values):
            return math.exp(sum(values) / len(values))
        print(f"{len(logs)} problems: geomean {geomean([b for b, _ in logs]):.3f}x -> "
              f"{geomean([a for _, a in logs]):.3f}x torch.mm")


if __name__ == "__main__":
    main()
