"""The probes' timing of one call (benchmarks/probes/*_probe.py): CUDA events around the call
alone, after a write that flushes L2. Needs a GPU."""

from __future__ import annotations

import torch


def flushed_event_us(fn, flush: torch.Tensor, spin_cycles: int = 0) -> float:
    """One call of fn in microseconds, after zeroing `flush` (larger than L2). With spin_cycles,
    the GPU first spins that many cycles, so that the call is queued before the GPU reaches it
    and the host's launch time stays outside the events."""
    flush.zero_()
    if spin_cycles:
        torch.cuda._sleep(spin_cycles)
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    fn()
    end.record()
    end.synchronize()
    return start.elapsed_time(end) * 1e3
