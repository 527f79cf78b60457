"""Which builds the sweep says pay: a greedy set cover of its problems by kernel groups.

    python -m cutlass_ops cover benchmarks/sweep/sm90_132sm_nvidia_h100_80gb_hbm3 [--tolerance 0.02]

A *group* is one config's kernels for one precision (and alignment) in every operand layout
it is built for: a kernel name without its layouts (``cutlass3x_sm90_bf16_128x256x64_2x1x1_coop``,
``cutlass2x_sm80_f16_64x64x32_4s_a2``; the hand-written kernels likewise, by precision and
build). It is the generator's ``KernelGroup`` (csrc/generate_kernels.py): dropping one from
the kernel table drops its kernels, in every layout, from the file that holds it.

On every sweep row (single products and batches), a group's time is the fastest of its
measured candidates (any K decomposition, slice count or variant). A row is *covered* by a set
of groups when one of them comes within the tolerance of the fastest group of all. The cover
is chosen greedily on the training split only (the group covering the most rows still
uncovered, ties by name), as vLLM's ``select_kernels.py`` does for its fp8 kernels; the test
split then shows what the chosen set loses on problems it was not chosen on. No GPU: the
stored timings alone.

A sweep speaks for its own GPU only: a group built for an older architecture (an sm80 build,
timed here on an SM90 GPU) is also what the GPUs before it run, and the report marks such
groups among those the cover does not need.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from . import sweep as sweep_files

# A row is covered within this much of the fastest group (the kernel-set issue's 2%).
TOLERANCE = 0.02


def group_of(kernel: str) -> str:
    """The kernel group a kernel belongs to: its name without the operand layouts."""
    parts = kernel.split("_")
    return "_".join(parts[:3] + parts[4:])


def arch_of(group: str) -> int:
    """The compute capability a group is built for, x10: 80, 90 (the name's second word)."""
    return int(group.split("_")[1][2:])


def sweep_arch(folder: Path) -> int | None:
    """The compute capability (x10) of the GPU a sweep timed, from its files' header."""
    for path in sorted(Path(folder).glob("*.jsonl.gz")):
        capability = sweep_files.read(path, rows=False)[0].get("capability")
        if capability:
            return 10 * capability[0] + capability[1]
    return None


@dataclass
class Row:
    id: str
    split: str
    precision: str
    times: dict  # group -> fastest measured us

    @property
    def best(self) -> float:
        return min(self.times.values())


def rows_of(folder: Path) -> list[Row]:
    """Every sweep row with at least one measured candidate, as group -> fastest time."""
    rows = []
    for _, row in sweep_files.iter_rows(folder):
        times: dict[str, float] = {}
        for cand in row["c"]:
            us = cand[4]
            if us is None:
                continue
            group = group_of(cand[1])
            times[group] = min(us, times.get(group, math.inf))
        if times:
            rows.append(Row(row["id"], row["split"], row["precision"], times))
    return rows


@dataclass
class Cover:
    tolerance: float
    chosen: list[tuple[str, int]]  # (group, training rows it newly covered), in the order chosen
    unneeded: list[str]            # groups of the sweep the cover did not choose
    train_rows: int
    arch: int | None = None        # the swept GPU's compute capability, x10
    # on the test split: the chosen set's fastest over the fastest of all, per row
    test_loss: list[float] = field(default_factory=list)

    @property
    def unneeded_older(self) -> list[str]:
        """Unneeded groups built for an older architecture than the swept GPU's: the GPUs of
        that architecture run them, and this sweep does not speak for those."""
        return [g for g in self.unneeded if self.arch and arch_of(g) < self.arch]

    @property
    def test_loss_geomean(self) -> float:
        return math.exp(sum(math.log(x) for x in self.test_loss) / len(self.test_loss)) if self.test_loss else 1.0

    @property
    def test_beyond_tolerance(self) -> int:
        return sum(1 for x in self.test_loss if x > 1 + self.tolerance)


def cover(folder: Path, tolerance: float = TOLERANCE) -> Cover:
    """The greedy cover of the training rows; its loss on the test rows."""
    rows = rows_of(Path(folder))
    train = [r for r in rows if r.split == "train"]
    covers: dict[str, set[int]] = defaultdict(set)
    for i, r in enumerate(train):
        bound = (1 + tolerance) * r.best
        for group, us in r.times.items():
            if us <= bound:
                covers[group].add(i)
    uncovered = set(range(len(train)))
    chosen: list[tuple[str, int]] = []
    while uncovered:
        group = min(covers, key=lambda g: (-len(covers[g] & uncovered), g))
        gained = covers[group] & uncovered
        chosen.append((group, len(gained)))
        uncovered -= gained
    picked = {g for g, _ in chosen}
    all_groups = {g for r in rows for g in r.times}
    result = Cover(tolerance, chosen, sorted(all_groups - picked), len(train), sweep_arch(Path(folder)))
    for r in rows:
        if r.split != "test":
            continue
        mine = [us for group, us in r.times.items() if group in picked]
        result.test_loss.append((min(mine) if mine else math.inf) / r.best)
    return result


def report(result: Cover) -> str:
    lines = [f"{len(result.chosen)} kernel groups cover the {result.train_rows} training rows within "
             f"{100 * result.tolerance:g}% of the fastest group (greedy, in the order chosen: rows newly covered):"]
    lines += [f"  {group:<64} {gained:5d}" for group, gained in result.chosen]
    older = set(result.unneeded_older)
    lines.append(f"{len(result.unneeded)} groups the cover does not need"
                 + (f" on sm{result.arch} ({len(older)} of them, marked *, are built for older GPUs too, which "
                    f"this sweep does not time)" if older else "") + ":")
    lines += [f"  {group}{' *' if group in older else ''}" for group in result.unneeded]
    if result.test_loss:
        worst = max(result.test_loss)
        lines.append(f"test split ({len(result.test_loss)} rows), the chosen groups' fastest over all groups' fastest: "
                     f"geomean {result.test_loss_geomean:.4f}, {result.test_beyond_tolerance} rows beyond "
                     f"{100 * result.tolerance:g}%, worst {worst:.3f}")
    return "\n".join(lines)
