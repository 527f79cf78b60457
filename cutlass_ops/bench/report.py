"""Benchmark output: the compact table, summary lines, JSON/CSV, and the figure."""

from __future__ import annotations

import csv
import datetime
import json
import math
import platform
from collections import defaultdict
from typing import Optional, Sequence

import torch

from .. import precisions
from .runner import Row


def environment() -> dict:
    import cutlass_ops
    from .. import _build_info

    env = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "cutlass_ops": cutlass_ops.__version__,
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "cutlass": _build_info.CUTLASS_VERSION,
        "python": platform.python_version(),
        "fp16_reduced_precision_reduction": torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction,
        "bf16_reduced_precision_reduction": torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction,
        "timing": "CUDA events, L2 flushed (256 MB write) before each repetition, median; "
                  "implementations alternate in rounds, median over rounds",
    }
    if torch.cuda.is_available():
        env["device"] = torch.cuda.get_device_name()
        env["capability"] = ".".join(map(str, torch.cuda.get_device_capability()))
    return env


def _fmt(value: Optional[float], spec: str, missing: str = "-") -> str:
    return missing if value is None else format(value, spec)


def _short(kernel: str) -> str:
    return kernel.replace("cutlass3x_", "3x_").replace("cutlass2x_", "2x_")


def table(rows: Sequence[Row]) -> str:
    header = f"{'shape':<22} {'dtype':<5} {'impl':<8} {'kernel':<44} {'ms':>9} {'TFLOP/s':>8} {'xtorch':>7} " \
             f"{'spread':>6} {'%peak':>6} {'rel.err':>8}  note"
    lines = [header, "-" * len(header)]
    for r in rows:
        impl = r.impl if r.impl in ("auto", "torch") else "forced"
        lines.append(
            f"{r.shape:<22} {r.dtype:<5} {impl:<8} {_short(r.kernel)[:44]:<44} {_fmt(r.median_ms, '9.4f'):>9} "
            f"{_fmt(r.tflops, '8.1f'):>8} {_fmt(r.ratio_to_torch, '7.3f'):>7} "
            f"{_fmt(None if r.spread is None else 100 * r.spread, '5.1f'):>6} {_fmt(r.pct_peak, '6.1f'):>6} "
            f"{_fmt(r.rel_error, '8.1e'):>8}  {r.note}")
    return "\n".join(lines)


def summary(rows: Sequence[Row]) -> list[str]:
    """Per dtype and implementation: geomean and worst ratio to torch.mm, and wrong results."""
    groups = defaultdict(list)
    for r in rows:
        if r.impl != "torch":
            groups[(r.dtype, r.impl)].append(r)
    lines = []
    for (dtype, impl), rs in sorted(groups.items()):
        ratios = [(r.ratio_to_torch, r) for r in rs if r.ratio_to_torch]
        wrong = [r for r in rs if not r.ok]
        if ratios:
            geo = math.exp(sum(math.log(x) for x, _ in ratios) / len(ratios))
            worst_ratio, worst = min(ratios, key=lambda t: t[0])
            best_tflops = max((r.tflops for r in rs if r.tflops), default=0.0)
            lines.append(f"{dtype} {impl}: geomean {geo:.3f}x torch.mm over {len(ratios)} shapes, "
                         f"worst {worst_ratio:.3f}x at {worst.shape}, best {best_tflops:.1f} TFLOP/s, "
                         f"{len(wrong)} wrong")
        elif wrong:
            lines.append(f"{dtype} {impl}: {len(wrong)} wrong, none timed")
    return lines


def latency_table(results: Sequence[dict]) -> str:
    lines = [f"{'shape':<14} {'dtype':<5} {'cutlass_ops us':>15} {'torch.mm us':>12} {'ratio':>6}"]
    for r in results:
        lines.append(f"{r['shape']:<14} {r['dtype']:<5} {r['cutlass_ops_us']:>15.2f} {r['torch_us']:>12.2f} "
                     f"{r['ratio']:>6.3f}")
    return "\n".join(lines)


def write_json(path: str, rows: Sequence[Row], latency: Sequence[dict] = (), meta: Optional[dict] = None) -> None:
    payload = {"environment": environment(), "meta": meta or {}, "rows": [r.as_dict() for r in rows],
               "latency": list(latency), "summary": summary(rows)}
    with open(path, "w") as f:
        json.dump(payload, f, indent=1)


def read_json(path: str) -> tuple[list[Row], dict]:
    """Rows and the rest of a file written by write_json. Precisions are named as the package
    names them (files written before the bench did so say fp16, fp32, fp64)."""
    with open(path) as f:
        payload = json.load(f)
    rows = [Row(**r) for r in payload.pop("rows")]
    for r in rows:
        r.dtype = precisions.canonical(r.dtype)
    return rows, payload


def markdown(rows: Sequence[Row]) -> str:
    """One markdown table: a row per (shape, dtype), auto against torch.mm, plus forced kernels."""
    lines = ["| suite | shape | dtype | kernel (auto) | auto TFLOP/s | torch.mm TFLOP/s | auto / torch.mm | spread | rel. err |",
             "| --- | --- | --- | --- | ---: | ---: | ---: | ---: | ---: |"]
    by_case = defaultdict(dict)
    for r in rows:
        by_case[(r.suite, r.shape, r.dtype)][r.impl] = r
    for (suite, shape, dtype), impls in by_case.items():
        torch_row = impls.get("torch")
        for impl, r in impls.items():
            if impl == "torch" or torch_row is None:
                continue
            name = r.kernel if impl == "auto" else f"{r.kernel} (forced)"
            ratio = "WRONG" if not r.ok else _fmt(r.ratio_to_torch, ".3f") + ("~" if "noise" in r.note else "")
            lines.append(f"| {suite} | {shape} | {dtype} | {name} | {_fmt(r.tflops, '.1f')} | "
                         f"{_fmt(torch_row.tflops, '.1f')} | {ratio} | "
                         f"{_fmt(None if r.spread is None else 100 * max(r.spread, torch_row.spread or 0), '.1f')}% | "
                         f"{_fmt(r.rel_error, '.1e')} |")
    return "\n".join(lines)


def write_csv(path: str, rows: Sequence[Row]) -> None:
    if not rows:
        return
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0].as_dict()))
        writer.writeheader()
        for r in rows:
            writer.writerow(r.as_dict())


def plot(path: str, rows: Sequence[Row], env: Optional[dict] = None) -> None:
    """Per dtype, two panels: TFLOP/s per shape per implementation (log scale, torch.mm in
    black) and speed relative to torch.mm. Cases keep their run order, suites are separated."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    dtypes = list(dict.fromkeys(r.dtype for r in rows if r.tflops))
    if not dtypes:
        return
    cases = list(dict.fromkeys((r.suite, r.shape) for r in rows if r.tflops))
    x = {c: i for i, c in enumerate(cases)}
    fig, axes = plt.subplots(2 * len(dtypes), 1, figsize=(max(10, 0.2 * len(cases) + 3), 5.5 * len(dtypes)),
                             squeeze=False)
    for d, dtype in enumerate(dtypes):
        top, bottom = axes[2 * d][0], axes[2 * d + 1][0]
        rs = [r for r in rows if r.dtype == dtype and r.tflops]
        for impl in dict.fromkeys(r.impl for r in rs):
            pts = [(x[(r.suite, r.shape)], r.tflops, r.ratio_to_torch) for r in rs if r.impl == impl]
            xs, ys, ratios = zip(*pts)
            if impl == "torch":
                top.scatter(xs, ys, marker="s", color="black", s=18, label="torch.mm (cuBLAS)", zorder=3)
            else:
                top.scatter(xs, ys, marker="o", s=14, label=impl, zorder=2)
                bottom.scatter(xs, ratios, marker="o", s=14, label=impl)
        bottom.axhline(1.0, color="black", linewidth=1.5, label="torch.mm")
        top.set_yscale("log")
        top.set_ylabel("TFLOP/s")
        bottom.set_ylabel("x torch.mm")
        top.set_title(f"{dtype}: TFLOP/s per shape")
        bottom.set_title(f"{dtype}: speed relative to torch.mm (> 1 is faster)")
        for ax in (top, bottom):
            ax.set_xticks(range(len(cases)))
            ax.set_xticklabels([shape for _, shape in cases], rotation=90, fontsize=6)
            ax.grid(alpha=0.3)
            ax.set_xlim(-1, len(cases))
            previous = None
            for i, (suite, _) in enumerate(cases):
                if suite != previous:
                    ax.axvline(i - 0.5, color="grey", linewidth=0.6)
                    ax.text(i - 0.4, 1.0, suite, transform=ax.get_xaxis_transform(), fontsize=7, va="bottom")
                    previous = suite
        top.legend(fontsize=7, loc="lower right")
    env = env or environment()
    fig.suptitle(f"cutlass_ops vs torch.mm on {env.get('device', '?')} "
                 f"(torch {env.get('torch', '?')}, CUTLASS {env.get('cutlass', '?')})")
    fig.tight_layout(rect=(0, 0, 1, 0.985))
    fig.savefig(path, dpi=110)
    plt.close(fig)
