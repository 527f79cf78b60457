"""Does my model run faster on cutlass_ops? ``profile(model, *inputs)`` answers per matrix product.

It runs the model once (forward, and with ``backward=True`` a backward pass of its first output's
sum) under a ``TorchDispatchMode`` that records every matrix product PyTorch makes (aten ``mm``,
``addmm``, ``_addmm_activation``, ``bmm``, ``baddbmm``: what ``nn.Linear``, ``@``, attention's
batched products and their gradients come down to), with its operands' shapes, strides and
dtypes. Each distinct product is then rebuilt on fresh random operands of the same layout and
timed as PyTorch runs it and as cutlass_ops does in dispatcher mode (the same aten op with
cutlass_ops as its CUDA kernel), in alternating rounds with L2 flushed (``bench.timing``).

The report lists each product with its call count, FLOPs, both times, the ratio, its share of
the model's GEMM time on PyTorch, and what ran it on cutlass_ops (a kernel, or torch and why),
and ends with the expected speed-up of the model's GEMM time: sum(calls x torch) over
sum(calls x cutlass_ops). Elementwise work, attention kernels (SDPA) and everything else the
model does are outside it.

    report = cutlass_ops.profile(model, x)              # inside torch.autocast(...) to profile bf16
    print(report)
    report.to_json("profile.json"); report.plot("profile.png")

    python -m cutlass_ops profile examples/llama_training.py:profile_target --backward
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field
from typing import Optional

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from . import patch
from .bench import timing

aten = torch.ops.aten

# The aten products a model's matrix multiplications come down to, by overload packet.
_PRODUCTS = {"mm": 2, "addmm": 3, "_addmm_activation": 3, "bmm": 2, "baddbmm": 3}  # op -> tensor args


@dataclass(frozen=True)
class _Operand:
    shape: tuple[int, ...]
    stride: tuple[int, ...]
    offset: int  # storage offset in elements, modulo 16 bytes' worth (what alignment sees)
    dtype: torch.dtype


@dataclass
class GemmRecord:
    """One distinct matrix product the model made, and how it fares on each side."""

    op: str                      # aten op: mm, addmm, _addmm_activation, bmm, baddbmm
    shape: str                   # "B x M x N x K" or "M x N x K"
    layouts: str                 # the products' operand layouts, "rc" etc. ("?" if neither)
    dtype: str
    calls: int
    flop: float                  # per call
    torch_us: float = math.nan
    cutlass_us: float = math.nan
    ran_on: str = ""             # the kernel(s) cutlass_ops ran, or "torch (reason)"
    spread: float = 0.0          # the larger of the two timings' spread between rounds

    @property
    def ratio(self) -> float:
        """PyTorch's time over cutlass_ops' (> 1: faster on cutlass_ops)."""
        return self.torch_us / self.cutlass_us if self.cutlass_us > 0 else math.nan


@dataclass
class ProfileReport:
    gemms: list[GemmRecord] = field(default_factory=list)
    device: str = ""

    @property
    def torch_gemm_us(self) -> float:
        return sum(g.calls * g.torch_us for g in self.gemms)

    @property
    def cutlass_gemm_us(self) -> float:
        return sum(g.calls * g.cutlass_us for g in self.gemms)

    @property
    def speedup(self) -> float:
        """The model's GEMM time on PyTorch over its GEMM time on cutlass_ops."""
        return self.torch_gemm_us / self.cutlass_gemm_us if self.cutlass_gemm_us > 0 else math.nan

    @property
    def calls(self) -> int:
        return sum(g.calls for g in self.gemms)

    def table(self) -> str:
        head = (f"{'op':18s} {'shape':22s} {'lay':3s} {'dtype':8s} {'calls':>5s} {'GFLOP':>8s} "
                f"{'torch us':>9s} {'ours us':>9s} {'xtorch':>6s} {'share':>6s}  ran on")
        lines = [head, "-" * len(head)]
        total = self.torch_gemm_us or 1.0
        for g in sorted(self.gemms, key=lambda g: -g.calls * g.torch_us):
            lines.append(f"{g.op:18s} {g.shape:22s} {g.layouts:3s} {g.dtype:8s} {g.calls:5d} {g.flop / 1e9:8.2f} "
                         f"{g.torch_us:9.1f} {g.cutlass_us:9.1f} {g.ratio:6.2f} {100 * g.calls * g.torch_us / total:5.1f}%"
                         f"  {g.ran_on}")
        lines.append(f"{self.calls} matrix products in {len(self.gemms)} distinct shapes; GEMM time {self.torch_gemm_us:.0f} us "
                     f"on PyTorch, {self.cutlass_gemm_us:.0f} us on cutlass_ops: expected GEMM speed-up "
                     f"{self.speedup:.3f}x ({self.device})")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.table()

    def to_json(self, path: Optional[str] = None) -> dict:
        data = {"device": self.device, "speedup": self.speedup, "torch_gemm_us": self.torch_gemm_us,
                "cutlass_gemm_us": self.cutlass_gemm_us,
                "gemms": [{**asdict(g), "ratio": g.ratio} for g in self.gemms]}
        if path is not None:
            with open(path, "w") as f:
                json.dump(data, f, indent=1)
        return data

    def plot(self, path: str) -> None:
        """Each distinct product's ratio against its share of GEMM time (needs matplotlib)."""
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        total = self.torch_gemm_us or 1.0
        fig, ax = plt.subplots(figsize=(7, 4))
        shares = [100 * g.calls * g.torch_us / total for g in self.gemms]
        ax.scatter(shares, [g.ratio for g in self.gemms], s=20)
        ax.axhline(1.0, color="gray", lw=0.8)
        ax.set_xlabel("share of the model's GEMM time on PyTorch (%)")
        ax.set_ylabel("PyTorch time / cutlass_ops time")
        ax.set_title(f"{self.calls} products, expected GEMM speed-up {self.speedup:.3f}x")
        fig.tight_layout()
        fig.savefig(path, dpi=120)
        plt.close(fig)


class _Recorder(TorchDispatchMode):
    """Records the matrix products a region makes (keyed by op, operands and scalars)."""

    def __init__(self):
        super().__init__()
        self.seen: dict[tuple, int] = {}

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        name = func.overloadpacket.__name__
        if name in _PRODUCTS and func._overloadname == "default":
            tensors = args[:_PRODUCTS[name]]
            if all(isinstance(t, torch.Tensor) and t.is_cuda for t in tensors):
                operands = tuple(_Operand(tuple(t.shape), tuple(t.stride()),
                                          t.storage_offset() % max(1, 16 // t.element_size()), t.dtype)
                                 for t in tensors)
                scalars = (tuple(args[_PRODUCTS[name]:]), tuple(sorted(kwargs.items())))
                key = (name, operands, scalars)
                self.seen[key] = self.seen.get(key, 0) + 1
        return func(*args, **kwargs)


def _rebuild(op: _Operand) -> torch.Tensor:
    """Fresh N(0, 1) values in a tensor of the recorded shape, strides and offset."""
    span = 1 + sum((s - 1) * st for s, st in zip(op.shape, op.stride) if s > 0) if all(op.shape) else 0
    base = torch.randn(op.offset + max(span, 1), device="cuda").to(op.dtype)
    return base.as_strided(op.shape, op.stride, op.offset)


def _describe(name: str, operands: tuple[_Operand, ...]) -> tuple[str, str, float]:
    a, b = operands[-2], operands[-1]
    m, k, n = a.shape[-2], a.shape[-1], b.shape[-1]
    batch = a.shape[0] if len(a.shape) == 3 else 1

    def layout(o: _Operand) -> str:
        if o.stride[-1] == 1:
            return "r"
        return "c" if o.stride[-2] == 1 else "?"

    shape = (f"{batch}x" if len(a.shape) == 3 else "") + f"{m}x{n}x{k}"
    return shape, layout(a) + layout(b), 2.0 * batch * m * n * k


def _first_tensor(out) -> Optional[torch.Tensor]:
    """The first tensor in a model's output (a tensor, or nested tuples, lists and dicts)."""
    if isinstance(out, torch.Tensor):
        return out
    items = out.values() if isinstance(out, dict) else out if isinstance(out, (list, tuple)) else ()
    for item in items:
        found = _first_tensor(item)
        if found is not None:
            return found
    return None


def _ran_on(fn) -> str:
    """What cutlass_ops ran for fn() in dispatcher mode: its kernels, or torch and why."""
    patch.reset_stats()
    fn()
    torch.cuda.synchronize()
    s = patch.stats()
    if s["kernels"]:
        return ", ".join(sorted(s["kernels"]))
    if s["torch_mm"]["complex"]:
        return "torch (complex dtype)"
    if s["torch_mm"]["no_kernel"]:
        return "torch (no kernel accepts the problem; explain() says why)"
    if s["no_work"]:
        return "nothing (an empty product)"
    return "torch (the op is not overridden)"


def profile(model, *inputs, backward: bool = False, rounds: int = 3, rep_ms: float = 40.0, **kwargs) -> ProfileReport:
    """Run ``model(*inputs, **kwargs)`` once, record its matrix products, and time each distinct
    one on PyTorch and on cutlass_ops (dispatcher mode), alternating ``rounds`` times. With
    ``backward=True`` the backward pass of the first output's sum is recorded too. Autocast,
    no_grad and the like apply as around any call: run ``profile`` inside them."""
    if not torch.cuda.is_available():
        raise RuntimeError("cutlass_ops.profile needs a CUDA device")
    recorder = _Recorder()
    was_enabled = patch.enabled()
    if was_enabled:
        patch.disable()  # record PyTorch's own products, not ours
    try:
        with recorder:
            out = model(*inputs, **kwargs)
            if backward:
                first = _first_tensor(out)
                if first is None or not first.requires_grad:
                    raise ValueError("profile(backward=True): the model's output has no tensor that requires grad")
                first.float().sum().backward()
        torch.cuda.synchronize()
        report = ProfileReport(device=torch.cuda.get_device_name())
        with torch.autocast("cuda", enabled=False), torch.no_grad():
            for (name, operands, scalars), calls in recorder.seen.items():
                tensors = [_rebuild(o) for o in operands]
                op = getattr(aten, name).default
                positional, keywords = scalars
                fn = (lambda op=op, tensors=tensors, positional=positional, keywords=dict(keywords):
                      op(*tensors, *positional, **keywords))
                shape, layouts, flop = _describe(name, operands)
                record = GemmRecord(name, shape, layouts, str(operands[-1].dtype).replace("torch.", ""), calls, flop)
                torch_ms, ours_ms = [], []
                for r in range(rounds):
                    for side in ((0, 1) if r % 2 == 0 else (1, 0)):
                        if side == 0:
                            patch.disable()
                            torch_ms.append(timing.median_ms(fn, rep_ms=rep_ms))
                        else:
                            patch.enable()
                            ours_ms.append(timing.median_ms(fn, rep_ms=rep_ms))
                patch.enable()
                record.ran_on = _ran_on(fn)
                patch.disable()
                med = lambda v: sorted(v)[len(v) // 2]  # noqa: E731
                record.torch_us, record.cutlass_us = 1e3 * med(torch_ms), 1e3 * med(ours_ms)
                record.spread = max((max(v) - min(v)) / med(v) for v in (torch_ms, ours_ms) if med(v) > 0)
                report.gemms.append(record)
    finally:
        if was_enabled:
            patch.enable()
        else:
            patch.disable()
    return report
