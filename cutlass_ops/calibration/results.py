"""`python -m cutlass_ops results [--check]`: the tables of README.md and benchmarks/RESULTS.md
that state how the dispatched kernels compare with torch.mm, regenerated from the evaluation
files the sweep folders hold; the test split's worst problems (the planner's own ranking, so it
needs the built extension), the set cover of the sweep by kernel groups (calibration/cover.py)
and the quick benchmark (benchmarks/quick_h100.json), from the stored files. The evaluation
files are written by

    python -m cutlass_ops evaluate benchmarks/sweep/<device> --json benchmarks/sweep/<device>/evaluation.json
        (for the H100's folder and the H200's)
    python -m cutlass_ops evaluate benchmarks/sweep/recheck_seed7/<device> --split all \\
        --unseen-by benchmarks/sweep/<device> --json benchmarks/sweep/recheck_seed7/evaluation.json

(from stored timings, no GPU), so a refit followed by those two commands and this one leaves no
table stale. Each table sits between an opening marker ``<!-- results:NAME -->`` and a closing
``<!-- /results:NAME -->``; the text around the markers is written by hand. ``--check``
changes nothing and fails if a table differs from what the files give (a CPU test runs it).
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parents[2]
DEVICE = "sm90_132sm_nvidia_h100_80gb_hbm3"
TEST_SPLIT = ROOT / "benchmarks" / "sweep" / DEVICE / "evaluation.json"
# The H200's own sweep and calibration, judged on its own test split.
H200_TEST_SPLIT = ROOT / "benchmarks" / "sweep" / "sm90_132sm_nvidia_h200" / "evaluation.json"
RECHECK = ROOT / "benchmarks" / "sweep" / "recheck_seed7" / "evaluation.json"

# README's rows: precision -> how the table names it
VERDICT_ROWS = {
    "bf16": "bfloat16",
    "f16": "float16",
    "tf32": "float32, TF32 allowed",
    "f32": "float32, IEEE",
    "3xtf32": "float32, 3xTF32 mode (vs torch's IEEE fp32)",
    "f64": "float64",
}


def _load(path: Path) -> dict:
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no evaluation file (write it with `python -m cutlass_ops evaluate ... --json`)")
    return json.loads(path.read_text())


def single_products(groups: dict, precision: str) -> dict:
    """A precision's single products (its families but batches): count, geomean of torch's time
    over the pick's, the least of it, and the best kernel's geomean. Geomeans of disjoint groups
    combine exactly, weighted by their counts."""
    from .evaluate import SINGLE_PRODUCT_FAMILIES

    parts = [groups[f"{precision} {family}"] for family in SINGLE_PRODUCT_FAMILIES if f"{precision} {family}" in groups]
    n = sum(p["problems"] for p in parts)

    def combined(key: str) -> float:
        return math.exp(sum(p["problems"] * math.log(p[key]) for p in parts) / n)

    return {"problems": n, "vs_torch_geomean": combined("vs_torch_geomean"),
            "vs_torch_min": min(p["vs_torch_min"] for p in parts),
            "best_vs_torch_geomean": combined("best_vs_torch_geomean")}


def verdict_table(groups: dict) -> str:
    """README's table: per precision, cutlass_ops's speed against torch.mm on the test split."""
    lines = ["| dtype | problems | speed vs torch.mm, geomean | worst | the best kernel we build, geomean |",
             "| --- | --- | --- | --- | --- |"]
    for precision, label in VERDICT_ROWS.items():
        s = single_products(groups, precision)
        speed = f"{s['vs_torch_geomean']:.2f}x"
        if s["vs_torch_geomean"] >= 1.0:
            speed = f"**{speed}**"
        lines.append(f"| {label} | {s['problems']} | {speed} | {s['vs_torch_min']:.2f}x | "
                     f"{s['best_vs_torch_geomean']:.2f}x |")
    return "\n".join(lines)


def test_split_table(groups: dict, rule_tree: bool = True) -> str:
    """RESULTS.md's table of every group of the test split (evaluate --markdown's columns; the
    rule tree's only where its picks were recorded, on the H100)."""
    from .evaluate import COLUMNS, table

    columns = [c for c in COLUMNS if rule_tree or not c.startswith("before_")]
    return table(groups, markdown=True, columns=columns)


def recheck_table(groups: dict) -> str:
    """RESULTS.md's table of the re-measurement on unseen shapes (no rule-tree columns: it has none)."""
    from .evaluate import table

    shown = {}
    for name, s in groups.items():
        parent = groups.get(name.split(" ")[0])
        if " " in name and parent is not None and parent["problems"] == s["problems"]:
            continue  # a precision's only family: the same row again
        shown[name] = s
    return table(shown, markdown=True, columns=("problems", "regret_geomean", "regret_p95", "regret_max",
                                                "vs_torch_geomean", "best_vs_torch_geomean"))


def cover_table() -> str:
    """RESULTS.md's set cover of the sweep by kernel groups (calibration/cover.py)."""
    from . import cover

    result = cover.cover(SWEEP, cover.TOLERANCE)
    groups = len(result.chosen) + len(result.unneeded)
    lines = ["| tolerance | kernel groups timed | groups the cover chooses | not needed | test split: chosen groups' "
             "fastest over all groups' fastest (geomean; rows beyond the tolerance; worst) |",
             "| --- | --- | --- | --- | --- |",
             f"| {100 * result.tolerance:g}% | {groups} | {len(result.chosen)} | {len(result.unneeded)} | "
             f"{result.test_loss_geomean:.4f}; {result.test_beyond_tolerance} of {len(result.test_loss)}; "
             f"{max(result.test_loss):.3f} |",
             "",
             "Not needed: " + ", ".join(f"`{group}`" for group in result.unneeded) + "."]
    return "\n".join(lines)


SWEEP = ROOT / "benchmarks" / "sweep" / DEVICE
WORST = 8  # problems of the highest regret RESULTS.md lists


def worst_list() -> str:
    """RESULTS.md's list of the test split's problems of highest regret under the shipped
    calibration (`evaluate --worst`; the planner's own code, so this one needs the extension)."""
    from . import evaluate

    judged, _ = evaluate.judge(SWEEP)
    return "```\n" + "\n".join(evaluate.describe(j) for j in evaluate.worst(judged, WORST)) + "\n```"
QUICK = ROOT / "benchmarks" / "quick_h100.json"  # python -m cutlass_ops bench --quick --latency --json ... --note ...


def _quick():
    from ..bench.report import read_json

    if not QUICK.is_file():
        raise FileNotFoundError(f"{QUICK}: no bench file (write it with `python -m cutlass_ops bench --quick --json`)")
    return read_json(str(QUICK))


def _provenance(payload: dict) -> str:
    env, meta = payload["environment"], payload["meta"]
    note = f", {meta['note']}" if meta.get("note") else ""
    return f"`{meta['command']}` on the {env.get('device', '?')}, {env.get('date', '?')[:10]}{note}"


def quick_sentence() -> str:
    """README's sentence on the quick benchmark: per precision, the geomean and range against torch.mm."""
    rows, payload = _quick()
    parts = []
    for precision in dict.fromkeys(r.dtype for r in rows):
        ratios = [(r.ratio_to_torch, r.shape) for r in rows if r.dtype == precision and r.impl == "auto" and r.ratio_to_torch]
        wrong = sum(1 for r in rows if r.dtype == precision and r.impl == "auto" and not r.ok)
        if not ratios:
            continue
        geomean = math.exp(sum(math.log(x) for x, _ in ratios) / len(ratios))
        (low, low_shape), (high, high_shape) = min(ratios), max(ratios)
        speed = f"{geomean:.2f}x"
        parts.append(f"{precision} is at {f'**{speed}**' if geomean >= 1 else speed} torch.mm (geomean over "
                     f"{len(ratios)} shapes, from {low:.2f}x at {low_shape} to {high:.2f}x at {high_shape}; "
                     f"{wrong} wrong)")
    return ("On the quick benchmark of common shapes, " + "; ".join(parts) + ": " + _provenance(payload)
            + ", which also drew the figure.")


def quick_table() -> str:
    """RESULTS.md's quick benchmark: every shape, and the host time of a tiny call."""
    from ..bench.report import markdown

    rows, payload = _quick()
    lines = [_provenance(payload) + ":", "", markdown(rows)]
    if payload.get("latency"):
        lines += ["", "| host time per call | cutlass_ops | torch.mm |", "| --- | ---: | ---: |"]
        lines += [f"| {r['shape']} {r['dtype']} | {r['cutlass_ops_us']:.2f} us | {r['torch_us']:.2f} us |"
                  for r in payload["latency"]]
    return "\n".join(lines)

# (file, block name, what renders it)
BLOCKS: list[tuple[Path, str, Callable[[], str]]] = [
    (ROOT / "README.md", "verdict", lambda: verdict_table(_load(TEST_SPLIT))),
    (ROOT / "benchmarks" / "RESULTS.md", "test-split", lambda: test_split_table(_load(TEST_SPLIT))),
    (ROOT / "benchmarks" / "RESULTS.md", "test-split-h200", lambda: test_split_table(_load(H200_TEST_SPLIT), False)),
    (ROOT / "benchmarks" / "RESULTS.md", "recheck", lambda: recheck_table(_load(RECHECK))),
    (ROOT / "benchmarks" / "RESULTS.md", "worst", worst_list),
    (ROOT / "benchmarks" / "RESULTS.md", "cover", cover_table),
    (ROOT / "README.md", "quick", quick_sentence),
    (ROOT / "benchmarks" / "RESULTS.md", "quick", quick_table),
]


def replace_block(text: str, name: str, body: str, where: str = "") -> str:
    pattern = re.compile(rf"(<!-- results:{re.escape(name)} -->\n).*?(<!-- /results:{re.escape(name)} -->)", re.S)
    if not pattern.search(text):
        raise ValueError(f"{where}: no block <!-- results:{name} --> ... <!-- /results:{name} -->")
    return pattern.sub(lambda m: m.group(1) + body + "\n" + m.group(2), text, count=1)


def update(check: bool = False) -> list[str]:
    """Rewrite every block (or, with check, only report them); the blocks that were stale."""
    stale = []
    texts: dict[Path, str] = {}
    for path, name, render in BLOCKS:
        text = texts.get(path) or path.read_text()
        new = replace_block(text, name, render(), str(path))
        if new != text:
            stale.append(f"{path.relative_to(ROOT)}: {name}")
        texts[path] = new
    if not check:
        for path, text in texts.items():
            if text != path.read_text():
                path.write_text(text)
    return stale


def main(args) -> int:
    try:
        stale = update(check=args.check)
    except (FileNotFoundError, ValueError) as error:
        print(f"results: {error}")
        return 2
    if args.check:
        for block in stale:
            print(f"stale: {block} (run python -m cutlass_ops results)")
        return 1 if stale else 0
    for block in stale:
        print(f"updated {block}")
    if not stale:
        print("every table is current")
    return 0
