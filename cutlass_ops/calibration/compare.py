"""Two devices' sweeps side by side: the timings one of them contradicts.

    python -m cutlass_ops compare benchmarks/sweep/sm90_132sm_nvidia_h100_80gb_hbm3 \\
        benchmarks/sweep/sm90_132sm_nvidia_h200

Both sweeps hold the same problems (by dtype and row id, with the same shapes) and time the same
(variant, kernel, decomposition, slices) candidates. Between two GPUs of one architecture a
candidate's time moves by a few percent (the H100 against the H200: median 1.013); one that
differs by more than `factor` either way was most likely timed wrongly on one of them, or on
code that has changed since. Those are the timings to take again before the next fit (`sweep
--retime-contradicted OTHER` on the first sweep's GPU), and a fit or an evaluation that leans
on them leans on a timing the other device does not confirm. From the stored files alone: no
GPU.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from . import sweep as sweep_files
from .evaluate import problem_key, shape_of

FACTOR = 2.0  # a timing this many times slower or faster than the other device's is contradicted


@dataclass(frozen=True)
class Contradiction:
    dtype: str
    row: str            # the row id, the same in both sweeps
    shape: str          # evaluate.shape_of (the batch in front) and layouts
    split: str          # the first sweep's split (train or test)
    candidate: tuple    # (variant, kernel, decomposition, slices)
    first_us: float
    second_us: float
    near_fastest: bool  # within 1.5x of the second sweep's fastest candidate of the row

    @property
    def ratio(self) -> float:
        return self.first_us / self.second_us


@dataclass(frozen=True)
class Comparison:
    problems: int            # problems both sweeps hold
    timings: int             # candidates both timed
    median_ratio: float      # the first sweep's time over the second's
    slower: list             # Contradictions: the first sweep's time over factor x the second's
    faster: list             # ... under 1 / factor of it
    factor: float


def _rows(folder: Path) -> dict:
    if not any(Path(folder).glob("*.jsonl.gz")):
        raise ValueError(f"{folder}: no sweep files (*.jsonl.gz)")
    return {(head["dtype"], row["id"]): row for head, row in sweep_files.iter_rows(folder)}


def compare(first: Path, second: Path, factor: float = FACTOR) -> Comparison:
    a, b = _rows(Path(first)), _rows(Path(second))
    ratios, slower, faster, problems = [], [], [], 0
    for key in sorted(a.keys() & b.keys()):
        ra, rb = a[key], b[key]
        if problem_key(ra) != problem_key(rb):  # shape, batch, layouts and alignment
            raise ValueError(f"{key[1]}: {shape_of(ra)} {ra['layout']} in {first}, "
                             f"{shape_of(rb)} {rb['layout']} in {second}: not the same problem")
        problems += 1
        ta = {tuple(c[:4]): c[4] for c in ra["c"] if c[4]}
        tb = {tuple(c[:4]): c[4] for c in rb["c"] if c[4]}
        if not tb:
            continue
        fastest = min(tb.values())
        for cand in sorted(ta.keys() & tb.keys()):
            ratio = ta[cand] / tb[cand]
            ratios.append(ratio)
            if ratio > factor or ratio < 1 / factor:
                c = Contradiction(key[0], key[1], f"{shape_of(ra)} {ra['layout']}", ra["split"], cand, ta[cand],
                                  tb[cand], tb[cand] < 1.5 * fastest)
                (slower if ratio > factor else faster).append(c)
    ratios.sort()
    median = ratios[len(ratios) // 2] if ratios else math.nan
    return Comparison(problems, len(ratios), median, slower, faster, factor)


def retime_targets(result: Comparison) -> dict:
    """{(dtype, row id): {candidate, ...}}: the first sweep's contradicted timings, both ways, as
    ``sweep.extend(targets=...)`` times them again (`sweep --retime-contradicted`)."""
    targets: dict = {}
    for c in result.slower + result.faster:
        targets.setdefault((c.dtype, c.row), set()).add(tuple(c.candidate))
    return targets


def report(result: Comparison, first: str, second: str, most: int = 8) -> str:
    lines = [f"{result.problems} problems, {result.timings} candidates timed in both; {first}'s time over "
             f"{second}'s: median {result.median_ratio:.3f}"]
    for name, found in (("slower", result.slower), ("faster", result.faster)):
        by_variant = Counter(c.candidate[0] for c in found)
        rows = len({(c.dtype, c.row) for c in found})
        near = sum(c.near_fastest for c in found)
        lines.append(f"{len(found)} timings over {result.factor:g}x {name} in {first} ({rows} problems; by variant "
                     f"{dict(sorted(by_variant.items()))}; {near} within 1.5x of their row's fastest in {second})")
        for c in sorted(found, key=lambda c: -abs(math.log(c.ratio)))[:most]:
            variant, kernel, decomposition, slices = c.candidate
            lines.append(f"  {c.ratio:7.2f}  {c.dtype} {c.row} {c.shape} ({c.split}): {variant} {kernel} {decomposition}"
                         f" x{slices}: {c.first_us:.1f} us against {c.second_us:.1f}")
    return "\n".join(lines)
