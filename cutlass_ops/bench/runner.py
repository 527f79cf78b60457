"""Run benchmark cases: every implementation checked for correctness, then timed against
torch.mm (cuBLAS) in the same run, on the same tensors."""

from __future__ import annotations

import fnmatch
import math
from dataclasses import asdict, dataclass
from typing import Iterable, Optional, Sequence, Union

import torch

from .. import ops, precisions
from ..testing import ERROR_FLOOR, PRECISIONS
from .suites import QUICK, SUITES, Case
from .timing import host_latency_us, time_alternating

# The bench's precisions are the package's (cutlass_ops.precisions: f16, bf16, tf32, f32,
# 3xtf32, f64), each with the torch dtype and TF32 setting of cutlass_ops.testing's table and
# the error floor a correct kernel may show even when torch.mm's own error on the sampled rows
# is smaller. "3xtf32": float32 with TF32 off, cutlass_ops in its 3xTF32 fp32 mode against
# torch.mm's IEEE fp32, judged by fp32's error floor.
DTYPES = {name: PRECISIONS[precisions.accuracy_of(name)] for name in precisions.TORCH_DTYPE}  # -> (dtype, TF32 allowed)


def bench_name(name: str) -> str:
    """The bench's name (its JSON's) of any precision name or alias: f16, float16 and fp16 are
    all f16. ValueError naming the choices for anything else."""
    return precisions.canonical(name)


# Dense datasheet peaks, TFLOP/s (no sparsity). H100 SXM5 and H200 share the compute.
DATASHEET_PEAK = {
    "H100": {"bf16": 989.4, "f16": 989.4, "tf32": 494.7, "f32": 66.9, "3xtf32": 66.9, "f64": 66.9},
    "H200": {"bf16": 989.4, "f16": 989.4, "tf32": 494.7, "f32": 66.9, "3xtf32": 66.9, "f64": 66.9},
}


@dataclass
class Row:
    suite: str
    shape: str
    m: int
    n: int
    k: int
    layout: str
    offset: bool
    dtype: str
    impl: str  # "auto", "torch" or a kernel name
    kernel: str  # the kernel that ran ("cuBLAS" for torch)
    median_ms: Optional[float] = None
    spread: Optional[float] = None
    tflops: Optional[float] = None
    ratio_to_torch: Optional[float] = None  # torch time / this time: > 1 is faster than torch.mm
    pct_peak: Optional[float] = None
    rel_error: Optional[float] = None
    ok: bool = True
    note: str = ""

    def as_dict(self) -> dict:
        return asdict(self)


def device_peak(dtype: str) -> Optional[float]:
    name = torch.cuda.get_device_name()
    for key, peaks in DATASHEET_PEAK.items():
        if key in name:
            return peaks[dtype]
    return None


def make_operands(case: Case, dtype: torch.dtype, generator: torch.Generator):
    """Random N(0, 1) operands in the case's layout (never zeros: zeros run faster and hide bugs)."""
    def make(rows, cols, letter):
        shape = (rows, cols) if letter == "n" else (cols, rows)
        numel = shape[0] * shape[1] + (1 if case.offset else 0)
        storage = torch.randn(numel, dtype=dtype, device="cuda", generator=generator)
        t = storage[1:] if case.offset else storage
        t = t.view(shape)
        return t if letter == "n" else t.t()
    return make(case.m, case.k, case.layout[0]), make(case.k, case.n, case.layout[1])


def resolve_impls(patterns: Sequence[str]) -> list[str]:
    """'auto', 'torch', kernel names and globs (fnmatch) -> implementation list, torch included."""
    capability = torch.cuda.get_device_capability()
    names = [k.name for k in ops.list_kernels(capability)]
    impls: list[str] = []
    for pattern in patterns:
        matches = [pattern] if pattern in ("auto", "torch") else fnmatch.filter(names, pattern)
        if not matches:
            raise ValueError(f"--kernels: {pattern!r} matches no kernel that runs on this GPU; "
                             f"see `python -m cutlass_ops list --capability {capability[0]}.{capability[1]}`")
        impls += [m for m in matches if m not in impls]
    if "torch" not in impls:
        impls.append("torch")  # ratios need the baseline in the same run
    return impls


def _sampled_error(out: torch.Tensor, rows: torch.Tensor, ref: torch.Tensor) -> float:
    den = ref.norm().item()
    return (out[rows].double() - ref).norm().item() / (den if den > 0 else 1.0)


def run(cases: Union[str, Iterable[Case]] = "quick", dtypes: Sequence[str] = ("bf16",),
        kernels: Sequence[str] = ("auto", "torch"), rounds: int = 3, rep_ms: float = 100.0, progress: bool = True,
        seed: int = 0) -> list[Row]:
    """Benchmark `cases` (a suite name, "quick", or Case objects) for each dtype and
    implementation; returns one Row per (case, dtype, implementation)."""
    if isinstance(cases, str):
        cases = QUICK if cases == "quick" else SUITES[cases]
    cases = list(cases)
    dtypes = [bench_name(d) for d in dtypes]  # aliases (fp16, float32, ...) taken; ValueError for others
    impls = resolve_impls(kernels)
    generator = torch.Generator(device="cuda").manual_seed(seed)
    rows: list[Row] = []
    bar = _progress(len(cases) * len(dtypes), progress)
    try:
        for dtype_name in dtypes:
            dtype = DTYPES[dtype_name][0]
            with precisions.computing_in(dtype_name):
                for case in cases:
                    bar.set_description(f"{dtype_name} {case.label}")
                    try:
                        rows += _run_case(case, dtype_name, dtype, impls, rounds, rep_ms, generator)
                    except torch.cuda.OutOfMemoryError:
                        rows.append(Row(case.suite, case.label, case.m, case.n, case.k, case.layout, case.offset,
                                        dtype_name, "-", "-", ok=False, note="out of memory"))
                        torch.cuda.empty_cache()
                    bar.update(1)
    finally:
        bar.close()
    return rows


def _run_case(case: Case, dtype_name: str, dtype: torch.dtype, impls: list[str], rounds: int, rep_ms: float,
              generator: torch.Generator) -> list[Row]:
    a, b = make_operands(case, dtype, generator)
    sample = torch.randperm(case.m, device="cuda", generator=generator)[:256].sort().values
    ref = a[sample].double() @ b.double()

    def base_row(impl: str, kernel: str) -> Row:
        return Row(case.suite, case.label, case.m, case.n, case.k, case.layout, case.offset, dtype_name, impl, kernel)

    torch_error = _sampled_error(torch.mm(a, b), sample, ref)
    bound = max(4 * torch_error, ERROR_FLOOR[precisions.accuracy_of(dtype_name)])
    timed, fns, rows = [], [], []
    for impl in impls:
        if impl == "torch":
            fn, kernel = (lambda: torch.mm(a, b)), "cuBLAS"
        else:
            name = None if impl == "auto" else impl
            try:
                plan = ops.explain(a, b, kernel=name)
            except ValueError as refusal:
                rows.append(_skipped(base_row(impl, impl), str(refusal)))
                continue
            kernel = plan.kernel or plan.action
            fn = (lambda: ops.mm(a, b)) if name is None else (lambda name=name: ops.mm(a, b, kernel=name))
        row = base_row(impl, kernel)
        row.rel_error = _sampled_error(fn(), sample, ref)
        row.ok = math.isfinite(row.rel_error) and row.rel_error <= bound
        if not row.ok:
            row.note = f"WRONG: error {row.rel_error:.2e} > {bound:.2e}"
            rows.append(row)
            continue
        timed.append(row)
        fns.append(fn)
    for row, timing in zip(timed, time_alternating(fns, rounds=rounds, rep_ms=rep_ms)):
        row.median_ms, row.spread = timing.median_ms, timing.spread
        row.tflops = case.flops / (timing.median_ms * 1e-3) / 1e12
        peak = device_peak(dtype_name)
        row.pct_peak = 100 * row.tflops / peak if peak else None
    mark_ratios(timed)
    return rows + timed


def mark_ratios(rows: Sequence[Row]) -> None:
    """Ratios to the torch row of the same case, and a note where the difference from torch
    is inside the timing spread (noise, not a result)."""
    baseline = next((r for r in rows if r.impl == "torch"), None)
    for row in rows:
        if baseline is None or not (baseline.median_ms and row.median_ms):
            continue
        row.ratio_to_torch = baseline.median_ms / row.median_ms
        if row is not baseline and abs(row.ratio_to_torch - 1.0) < max(row.spread or 0.0, baseline.spread or 0.0):
            row.note = (row.note + " " if row.note else "") + "within noise"


def _skipped(row: Row, why: str) -> Row:
    row.ok = True
    row.note = "skipped: " + why.split(": it ", 1)[-1]
    row.kernel = "-"
    return row


def latency(sizes: Sequence[int] = (64, 128), dtype_name: str = "bf16", calls: int = 2000) -> list[dict]:
    """Per-call wall time of cutlass_ops.mm and torch.mm on tiny problems: the host path."""
    dtype = DTYPES[dtype_name][0]
    results = []
    with precisions.computing_in(dtype_name):
        for s in sizes:
            a = torch.randn(s, s, dtype=dtype, device="cuda")
            b = torch.randn(s, s, dtype=dtype, device="cuda")
            ours = host_latency_us(lambda: ops.mm(a, b), calls)
            theirs = host_latency_us(lambda: torch.mm(a, b), calls)
            results.append({"shape": f"{s}x{s}x{s}", "dtype": dtype_name, "cutlass_ops_us": ours, "torch_us": theirs,
                            "ratio": ours / theirs})
    return results


class _NoBar:
    def update(self, n):
        pass

    def set_description(self, text):
        pass

    def close(self):
        pass


def _progress(total: int, enabled: bool):
    if not enabled:
        return _NoBar()
    try:
        from tqdm import tqdm
    except ImportError:
        return _NoBar()
    return tqdm(total=total, unit="case", leave=False)
