"""Judging the cost model on sweep rows it was not fitted on (the test split), from the
stored timings alone: no GPU.

    python -m cutlass_ops evaluate benchmarks/sweep/sm90_132sm_nvidia_h100_80gb_hbm3 [--plot fig.png]

For every row the model ranks the candidates (``_C.rank_problem``, the planner's own code, with
the calibrations loaded) and its pick is looked up among the row's measured candidates:

* regret: the pick's measured time over the fastest measured candidate's (1.0 is perfect);
* vs torch: torch.mm's time over the pick's (above 1: faster than cuBLAS);
* best vs torch: the same for the fastest candidate, what a perfect choice would reach;
* before: the rule-tree planner the cost model replaced, for comparison: its pick for each
  problem, which the first sweep recorded (``rule_tree_picks.json.gz`` in the device folder),
  at the time the sweep measured for that candidate.
"""

from __future__ import annotations

import gzip
import json
import math
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Optional

from .. import _extension
from . import sweep as sweep_files
from .fit import geomean
from .sweep import built_candidates, device_of

_C = _extension._C


@dataclass(frozen=True)
class Judged:
    id: str
    dtype: str
    group: str
    model: str
    split: str
    shape: str
    pick: tuple            # the model's candidate
    predicted_us: float
    pick_us: float         # measured
    best_us: float         # fastest measured candidate
    best: tuple
    torch_us: float
    before_us: Optional[float]  # the recorded planner's pick, measured

    @property
    def regret(self) -> float:
        return self.pick_us / self.best_us

    @property
    def vs_torch(self) -> float:
        return self.torch_us / self.pick_us

    @property
    def best_vs_torch(self) -> float:
        return self.torch_us / self.best_us


def shape_of(row: dict) -> str:
    """M x N x K, with the batch in front for a batched row (B x M x N x K)."""
    batch = row.get("batch", 1)
    return (f"{batch}x" if batch > 1 else "") + f"{row['m']}x{row['n']}x{row['k']}"


def problem_key(row: dict) -> tuple:
    return row["precision"], row["layouts"], tuple(row["problem"]), tuple(row["align"]), row.get("batch", 1)


def judge(folder: Path, splits: Iterable[str] = ("test",), unseen_by: Optional[Path] = None
          ) -> tuple[list[Judged], list[str]]:
    """The model's pick on every row of `splits`; also the ids of rows whose pick was never
    timed (an enumeration that changed since the sweep: a defect to fix by sweeping again).
    With `unseen_by` (another sweep folder, the one the model was fitted on), only problems
    that sweep does not hold: a re-measurement on shapes the fit never saw in any split."""
    splits = set(splits)
    seen = {problem_key(row) for _, row in sweep_files.iter_rows(unseen_by)} if unseen_by else set()
    judged, untimed = [], []
    baseline = {}
    picks = Path(folder) / "rule_tree_picks.json.gz"
    if picks.exists():
        with gzip.open(picks, "rt") as f:
            baseline = {k: tuple(v) for k, v in json.load(f)["picks"].items()}
    for head, row in sweep_files.iter_rows(folder):
        if row["split"] not in splits or problem_key(row) in seen:
            continue
        # The best candidate is the best this build has (sweep.built_candidates).
        measured = {tuple(c[:4]): c[4] for c in built_candidates(row)}
        if not measured:
            continue
        ranked = _C.rank_problem(row["precision"], row["layouts"], row["problem"], row["align"], device_of(head),
                                 row.get("batch", 1))
        if not ranked:
            continue
        pick, predicted = tuple(ranked[0][0]), ranked[0][1]
        if pick not in measured:
            untimed.append(row["id"])
            continue
        best = min(measured, key=measured.get)
        before = measured.get(baseline.get(row["id"]))
        judged.append(Judged(row["id"], head["dtype"], row["group"], row["model"], row["split"],
                             f"{shape_of(row)} {row['layout']}", pick, predicted, measured[pick],
                             measured[best], best, row["torch_us"], before))
    return judged, untimed


def summary(judged: list[Judged]) -> dict:
    regrets = sorted(j.regret for j in judged)
    before = sorted(j.before_us / j.best_us for j in judged if j.before_us)
    if not regrets:
        return {"problems": 0}

    def pct(values, q):
        return values[min(len(values) - 1, int(q * len(values)))]

    return {
        "problems": len(judged),
        "regret_geomean": geomean(regrets),
        "regret_p95": pct(regrets, 0.95),
        "regret_max": regrets[-1],
        "vs_torch_geomean": geomean(j.vs_torch for j in judged),
        "vs_torch_min": min(j.vs_torch for j in judged),
        "best_vs_torch_geomean": geomean(j.best_vs_torch for j in judged),
        "before_regret_geomean": geomean(before) if before else float("nan"),
        "before_regret_p95": pct(before, 0.95) if before else float("nan"),
        "before_regret_max": before[-1] if before else float("nan"),
        "before_vs_torch_geomean": geomean(j.torch_us / j.before_us for j in judged if j.before_us),
    }


# The families the evaluation reports a problem group under (problems.py names the groups:
# random-aligned, random-any, long-k-aligned, long-k-any, model, batched-...); the first three
# are single products.
SINGLE_PRODUCT_FAMILIES = ("model", "random", "long-k")
FAMILIES = SINGLE_PRODUCT_FAMILIES + ("batched",)


def family_of(group: str) -> str:
    """The family a problem group is reported under."""
    for family in FAMILIES:
        if group == family or group.startswith(family + "-"):
            return family
    raise ValueError(f"unknown problem group {group!r}; the families are {', '.join(FAMILIES)}")


def grouped(judged: list[Judged]) -> dict[str, dict]:
    """summary() per precision, and per precision and problem family."""
    groups = defaultdict(list)
    for j in judged:
        groups[j.dtype].append(j)
        groups[f"{j.dtype} {family_of(j.group)}"].append(j)
    return {name: summary(rows) for name, rows in sorted(groups.items())}


# summary()'s figures, and the heads the tables give them.
COLUMNS = {"problems": "n", "regret_geomean": "regret gm", "regret_p95": "p95", "regret_max": "max",
           "vs_torch_geomean": "vs torch gm", "vs_torch_min": "min", "best_vs_torch_geomean": "best vs torch",
           "before_regret_geomean": "before: regret gm", "before_vs_torch_geomean": "before: vs torch"}


def table(groups: dict[str, dict], markdown: bool = False, columns=tuple(COLUMNS)) -> str:
    """One row per group, of the `columns` of COLUMNS: plain text, or markdown."""
    cols = list(columns)
    heads = ["set"] + [COLUMNS[c] for c in cols]

    def fmt(v):
        return str(v) if isinstance(v, int) else ("-" if v is None or v != v else f"{v:.3f}")

    lines = []
    if markdown:
        lines.append("| " + " | ".join(heads) + " |")
        lines.append("|" + "---|" * len(heads))
        for name, s in groups.items():
            lines.append("| " + " | ".join([name] + [fmt(s.get(c, float("nan"))) for c in cols]) + " |")
    else:
        lines.append(f"{heads[0]:18}" + "".join(f"{h:>14}" for h in heads[1:]))
        for name, s in groups.items():
            lines.append(f"{name:18}" + "".join(f"{fmt(s.get(c, float('nan'))):>14}" for c in cols))
    return "\n".join(lines)


def worst(judged: list[Judged], count: int = 10) -> list[Judged]:
    return sorted(judged, key=lambda j: -j.regret)[:count]


def plot(path: str, judged: list[Judged], title: str = "") -> None:
    """Predicted against measured time of the model's pick, and regret against problem size."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(12, 5))
    colors = {"bf16": "tab:blue", "f16": "tab:cyan", "tf32": "tab:green", "f32": "tab:red", "f64": "tab:purple",
              "3xtf32": "tab:orange"}
    ax = axes[0]
    for dtype in colors:
        rows = [j for j in judged if j.dtype == dtype]
        if rows:
            ax.scatter([j.pick_us for j in rows], [j.predicted_us for j in rows], s=6, alpha=0.6, label=dtype,
                       color=colors[dtype])
    lo = min(min(j.pick_us, j.predicted_us) for j in judged)
    hi = max(max(j.pick_us, j.predicted_us) for j in judged)
    ax.plot([lo, hi], [lo, hi], "k--", lw=0.8)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("measured time of the model's pick (us)")
    ax.set_ylabel("predicted time (us)")
    ax.set_title("cost model on the test split")
    ax.legend(markerscale=3, fontsize=8)
    ax = axes[1]
    for dtype in colors:
        rows = [j for j in judged if j.dtype == dtype]
        if rows:
            ax.scatter([j.best_us for j in rows], [j.regret for j in rows], s=6, alpha=0.6, color=colors[dtype],
                       label=dtype)
    ax.set_xscale("log")
    ax.set_xlabel("fastest candidate (us)")
    ax.set_ylabel("regret (pick / fastest)")
    ax.axhline(1.0, color="k", lw=0.8)
    ax.set_title("regret of the model's pick")
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def describe(j: Judged) -> str:
    pick = f"{j.pick[1]} ({j.pick[0]}, {j.pick[2]}" + (f" x{j.pick[3]}" if j.pick[2] == "split-k" else "") + ")"
    best = f"{j.best[1]} ({j.best[0]}, {j.best[2]}" + (f" x{j.best[3]}" if j.best[2] == "split-k" else "") + ")"
    return (f"{j.dtype:6} {j.shape:26} regret {j.regret:5.2f}  pick {j.pick_us:9.1f} us {pick}; "
            f"best {j.best_us:9.1f} us {best}")


def nan_to_none(d: dict) -> dict:
    return {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in d.items()}
