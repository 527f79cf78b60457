"""GPU timing: CUDA events around the call only, warm-up, L2 flushed before every
repetition, median of many repetitions; and alternating rounds across implementations.

Large GEMMs run an H100 into its 700 W power cap (measured: clocks fell to 1335 MHz, 10-19%
drift within one run), so the implementations of one shape are timed in rounds, in reversed
order every other round, and each gets the median over rounds plus the spread between them.
A ratio difference smaller than the spread is noise.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass
from typing import Callable, Sequence

import torch

try:  # triton's do_bench flushes L2 and times with events; the fallback below does the same
    from triton.testing import do_bench as _triton_do_bench
except ImportError:  # pragma: no cover - triton ships with CUDA builds of torch
    _triton_do_bench = None

L2_FLUSH_BYTES = 256 * 1024 * 1024  # larger than any current GPU's L2 (H100: 50 MB)


def median_ms(fn: Callable[[], object], warmup_ms: float = 25.0, rep_ms: float = 100.0) -> float:
    """Median time of fn() in milliseconds, L2 flushed before each repetition."""
    if _triton_do_bench is not None:
        return float(_triton_do_bench(fn, warmup=warmup_ms, rep=rep_ms, return_mode="median"))
    return _events_median_ms(fn, warmup_ms, rep_ms)


def _events_median_ms(fn, warmup_ms: float, rep_ms: float) -> float:
    flush = torch.empty(L2_FLUSH_BYTES // 4, dtype=torch.int32, device="cuda")
    fn()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(5):
        flush.zero_()
        fn()
    end.record()
    torch.cuda.synchronize()
    estimate = max(start.elapsed_time(end) / 5, 1e-3)
    for _ in range(max(1, int(warmup_ms / estimate))):
        fn()
    reps = max(10, int(rep_ms / estimate))
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    for s, e in zip(starts, ends):
        flush.zero_()
        s.record()
        fn()
        e.record()
    torch.cuda.synchronize()
    return statistics.median(s.elapsed_time(e) for s, e in zip(starts, ends))


@dataclass(frozen=True)
class Timing:
    median_ms: float
    spread: float  # (max - min) / median over rounds
    rounds: tuple[float, ...]


def time_alternating(fns: Sequence[Callable[[], object]], rounds: int = 3, warmup_ms: float = 25.0,
                     rep_ms: float = 100.0) -> list[Timing]:
    """Time several implementations of one problem in alternating rounds."""
    per_fn: list[list[float]] = [[] for _ in fns]
    order = list(range(len(fns)))
    for r in range(rounds):
        for i in (order if r % 2 == 0 else order[::-1]):
            per_fn[i].append(median_ms(fns[i], warmup_ms, rep_ms))
    timings = []
    for values in per_fn:
        med = statistics.median(values)
        timings.append(Timing(med, (max(values) - min(values)) / med if med > 0 else 0.0, tuple(values)))
    return timings


def host_latency_us(fn: Callable[[], object], calls: int = 2000, warmup: int = 200) -> float:
    """Wall time per call of fn() over many back-to-back calls: for tiny problems this is the
    host path (Python, dispatcher, planning, launch), since the GPU keeps up."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    samples = []
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(calls // 5):
            fn()
        torch.cuda.synchronize()
        samples.append((time.perf_counter() - start) / (calls // 5) * 1e6)
    return statistics.median(samples)
