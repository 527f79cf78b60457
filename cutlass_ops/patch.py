"""Running existing code on cutlass_ops, two ways.

1. **Patching** (`patch_torch`, `unpatch_torch`, `patched`): `torch.mm` and `Tensor.mm` (and,
   with ``matmul=True``, `torch.matmul`, `Tensor.matmul` and `@`; with ``bmm=True``,
   `torch.bmm`, `Tensor.bmm`, `torch.baddbmm` and `Tensor.baddbmm`; with ``linear=True``,
   `torch.addmm`, `Tensor.addmm` and `F.linear`) are replaced by Python wrappers that send
   CUDA float16/bfloat16/float32/float64 tensors to cutlass_ops and everything else (CPU,
   sparse, integer, complex, mismatched devices, tensor subclasses) to the original function,
   so a patched model never breaks. The patched matmul runs matrices and the N-D by 2-D
   products torch.matmul folds into one mm on `cutlass_ops.mm`, the other products with a
   3-D or larger operand (batched by batched, broadcast batches) on `cutlass_ops.matmul`;
   products of vectors alone (dot, matrix-vector) stay with torch.
2. **Dispatcher mode** (`enable`, `disable`, `use_cutlass`): cutlass_ops becomes the CUDA
   kernel of `aten::mm`, `aten::addmm`, `aten::_addmm_activation`, `aten::bmm` and
   `aten::baddbmm` (and their out= overloads), so `@`, `torch.matmul` (batched too),
   `torch.bmm`, `torch.addmm`, `F.linear` and `nn.Linear` (with or without bias), attention's
   `q @ k.transpose(-1, -2)`, and C++ callers reach it too, with autograd and autocast still
   handled by PyTorch above it. Calls it does not take run torch's own CUDA kernel.

`stats()` counts what ran where, so you can prove a model really ran on CUTLASS.
"""

from __future__ import annotations

import contextlib
import logging
import math
import sys
import threading
import warnings
from typing import Iterator

import torch
from torch.overrides import has_torch_function_variadic

from . import _extension
from .ops import addmm as _cutlass_addmm
from .ops import baddbmm as _cutlass_baddbmm
from .ops import bmm as _cutlass_bmm
from .ops import linear as _cutlass_linear
from .ops import matmul as _cutlass_matmul
from .ops import mm as _cutlass_mm

_C = _extension._C

_lock = threading.RLock()
# Target name -> the object patching replaced. Entries outlive unpatching, so a call already
# inside a wrapper when another thread unpatches still finds its original.
_saved: dict[str, object] = {}
_active: set[str] = set()  # what is patched now
_fallbacks = 0  # patched calls handed back to the original function

_ELIGIBLE_DTYPES = (torch.float16, torch.bfloat16, torch.float32, torch.float64)


def _on_one_cuda_device(first, *others) -> bool:
    """`first` a CUDA tensor of a dtype cutlass_ops computes, and `others` (None entries are
    skipped) tensors on its device, all strided, and no tensor subclass among them that
    overrides torch functions (nn.Parameter does not). Ranks are the caller's to check."""
    tensors = (first,) + tuple(t for t in others if t is not None)
    return (
        all(isinstance(t, torch.Tensor) for t in tensors)
        and not has_torch_function_variadic(*tensors)
        and first.is_cuda and first.dtype in _ELIGIBLE_DTYPES
        and all(t.layout == torch.strided and t.device == first.device for t in tensors)
    )


def _eligible(a, b, out=None) -> bool:
    """Two CUDA matrices that cutlass_ops.mm takes (see _on_one_cuda_device)."""
    return _on_one_cuda_device(a, b, out) and a.dim() == 2 and b.dim() == 2


def _count_fallback() -> None:
    global _fallbacks
    _fallbacks += 1  # approximate under threads (a Python int); the C++ counters are exact


def _call_original(name: str, *args, out=None, **kwargs):
    _count_fallback()
    original = _saved[name]
    return original(*args, **kwargs) if out is None else original(*args, out=out, **kwargs)


def _route(name: str, a, b, out=None):
    """cutlass_ops.mm for eligible operands, else the original function saved under `name`."""
    if _eligible(a, b, out):
        return _cutlass_mm(a, b, out=out)
    return _call_original(name, a, b, out=out)


def _folds_into_mm(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Whether torch.matmul runs this product as one mm on the rows of `a`: an N-D (N >= 3)
    `a` by a matrix `b`, when `a`'s batch dims merge into rows without a copy, or when `b`
    needs a gradient (then even with a copy, so that backward makes no batch of weight
    gradients). ATen's `should_fold` (aten/src/ATen/native/LinearAlgebra.cpp), for this case."""
    if a.dim() < 3 or b.dim() != 2:
        return False
    if b.requires_grad or a.numel() == 0:
        return True
    sizes, strides = a.shape, a.stride()
    return all(strides[i] == strides[i + 1] * sizes[i + 1] for i in range(a.dim() - 2))


def _matmul_path(a, b, out=None) -> str:
    """How the patched torch.matmul runs a call:

    - "mm": two matrices, on cutlass_ops.mm (out= too);
    - "fold": an N-D by 2-D product that torch.matmul folds into one mm (a transformer's
      (batch, tokens, features) @ weight), one cutlass_ops.mm on the folded rows;
    - "matmul": any other product with a 3-D or larger operand (batched by batched, broadcast
      batches, 2-D or 1-D by N-D, N-D by 1-D), on cutlass_ops.matmul, which follows
      torch.matmul's algorithm over cutlass_ops.mm and cutlass_ops.bmm;
    - "original": torch.matmul itself: products of vectors and matrices alone (dot and
      matrix-vector products, which torch runs on gemv), out= with a batched operand
      (cutlass_ops.matmul has no out=), 0-D operands (torch's error), and operands
      cutlass_ops does not take (CPU, other dtypes, mixed devices, subclasses).
    """
    if not _on_one_cuda_device(a, b, out):
        return "original"
    if a.dim() == 2 and b.dim() == 2:
        return "mm"
    if out is not None or min(a.dim(), b.dim()) < 1 or max(a.dim(), b.dim()) < 3:
        return "original"
    return "fold" if _folds_into_mm(a, b) else "matmul"


def _route_matmul(name: str, a, b, out=None):
    """torch.matmul and @, by _matmul_path."""
    path = _matmul_path(a, b, out)
    if path == "mm":
        return _cutlass_mm(a, b, out=out)
    if path == "fold":
        rows = a.reshape(math.prod(a.shape[:-1]), a.shape[-1])
        return _cutlass_mm(rows, b).view(*a.shape[:-1], b.shape[-1])
    if path == "matmul":
        return _cutlass_matmul(a, b)
    return _call_original(name, a, b, out=out)


def _route_bmm(name: str, a, b, out=None):
    """cutlass_ops.bmm for two CUDA batches of matrices, else the original."""
    if _on_one_cuda_device(a, b, out) and a.dim() == 3 and b.dim() == 3:
        return _cutlass_bmm(a, b, out=out)
    return _call_original(name, a, b, out=out)


def _route_baddbmm(name: str, input, batch1, batch2, beta=1, alpha=1, out=None):
    """cutlass_ops.baddbmm for CUDA batches and an input of at most 3 dims on their device
    (what broadcasts to the product is the op's to check), else the original."""
    if (_on_one_cuda_device(batch1, batch2, input, out) and batch1.dim() == 3 and batch2.dim() == 3
            and input.dim() <= 3):
        return _cutlass_baddbmm(input, batch1, batch2, beta=beta, alpha=alpha, out=out)
    return _call_original(name, input, batch1, batch2, out=out, beta=beta, alpha=alpha)


def _addmm_eligible(input, mat1, mat2, out) -> bool:
    return (_eligible(mat1, mat2, out) and isinstance(input, torch.Tensor) and not has_torch_function_variadic(input)
            and input.device == mat1.device and input.layout == torch.strided and input.dim() <= 2)


def _route_addmm(name: str, input, mat1, mat2, beta=1, alpha=1, out=None):
    if _addmm_eligible(input, mat1, mat2, out):
        return _cutlass_addmm(input, mat1, mat2, beta=beta, alpha=alpha, out=out)
    return _call_original(name, input, mat1, mat2, out=out, beta=beta, alpha=alpha)


def _patched_linear(input, weight, bias=None):
    if (isinstance(input, torch.Tensor) and isinstance(weight, torch.Tensor) and input.dim() >= 1
            and weight.dim() == 2 and (bias is None or isinstance(bias, torch.Tensor))
            and not has_torch_function_variadic(input, weight, *(() if bias is None else (bias,)))
            and input.is_cuda and input.layout == torch.strided and weight.layout == torch.strided
            and input.dtype in _ELIGIBLE_DTYPES and input.device == weight.device
            and (bias is None or (bias.device == input.device and bias.layout == torch.strided))):
        return _cutlass_linear(input, weight, bias)
    _count_fallback()
    return _saved["F.linear"](input, weight, bias)


# The replacements keep the originals' parameter names, so keyword calls still work.
def _patched_addmm(input, mat1, mat2, *, beta=1, alpha=1, out=None):
    return _route_addmm("torch.addmm", input, mat1, mat2, beta, alpha, out)


def _patched_tensor_addmm(self, mat1, mat2, *, beta=1, alpha=1):
    return _route_addmm("Tensor.addmm", self, mat1, mat2, beta, alpha)


def _patched_mm(input, mat2, *, out=None):
    return _route("torch.mm", input, mat2, out)


def _patched_matmul(input, other, *, out=None):
    return _route_matmul("torch.matmul", input, other, out)


def _patched_tensor_mm(self, mat2):
    return _route("Tensor.mm", self, mat2)


def _patched_tensor_matmul(self, other):
    return _route_matmul("Tensor.matmul", self, other)


def _patched_tensor_dunder_matmul(self, other):
    return _route_matmul("Tensor.__matmul__", self, other)


def _patched_bmm(input, mat2, *, out=None):
    return _route_bmm("torch.bmm", input, mat2, out)


def _patched_tensor_bmm(self, mat2):
    return _route_bmm("Tensor.bmm", self, mat2)


def _patched_baddbmm(input, batch1, batch2, *, beta=1, alpha=1, out=None):
    return _route_baddbmm("torch.baddbmm", input, batch1, batch2, beta, alpha, out)


def _patched_tensor_baddbmm(self, batch1, batch2, *, beta=1, alpha=1):
    return _route_baddbmm("Tensor.baddbmm", self, batch1, batch2, beta, alpha)


# name -> (owner, attribute, replacement)
_TARGETS = {
    "torch.mm": (torch, "mm", _patched_mm),
    "Tensor.mm": (torch.Tensor, "mm", _patched_tensor_mm),
    "torch.matmul": (torch, "matmul", _patched_matmul),
    "Tensor.matmul": (torch.Tensor, "matmul", _patched_tensor_matmul),
    "Tensor.__matmul__": (torch.Tensor, "__matmul__", _patched_tensor_dunder_matmul),
    "torch.addmm": (torch, "addmm", _patched_addmm),
    "Tensor.addmm": (torch.Tensor, "addmm", _patched_tensor_addmm),
    "F.linear": (torch.nn.functional, "linear", _patched_linear),
    "torch.bmm": (torch, "bmm", _patched_bmm),
    "Tensor.bmm": (torch.Tensor, "bmm", _patched_tensor_bmm),
    "torch.baddbmm": (torch, "baddbmm", _patched_baddbmm),
    "Tensor.baddbmm": (torch.Tensor, "baddbmm", _patched_tensor_baddbmm),
}
_MM_TARGETS = ("torch.mm", "Tensor.mm")
_MATMUL_TARGETS = ("torch.matmul", "Tensor.matmul", "Tensor.__matmul__")
_LINEAR_TARGETS = ("torch.addmm", "Tensor.addmm", "F.linear")
_BMM_TARGETS = ("torch.bmm", "Tensor.bmm", "torch.baddbmm", "Tensor.baddbmm")


def _apply(wanted: set[str]) -> None:
    """Make exactly `wanted` patched (caller holds the lock)."""
    for name, (owner, attribute, replacement) in _TARGETS.items():
        if name in wanted and name not in _active:
            _saved[name] = getattr(owner, attribute)
            setattr(owner, attribute, replacement)
            _active.add(name)
        elif name not in wanted and name in _active:
            setattr(owner, attribute, _saved[name])
            _active.discard(name)


def patched_targets() -> frozenset[str]:
    """What is patched now, e.g. {"torch.mm", "Tensor.mm"}."""
    with _lock:
        return frozenset(_active)


def patch_torch(matmul: bool = False, linear: bool = False, bmm: bool = False) -> None:
    """Route torch.mm and Tensor.mm to cutlass_ops; with ``matmul=True`` also torch.matmul,
    Tensor.matmul and ``@`` (matrices, and products with a 3-D or larger operand: batched,
    broadcast, folded; not products of vectors and matrices alone); with ``linear=True`` also
    torch.addmm, Tensor.addmm and torch.nn.functional.linear, which nn.Linear calls; with
    ``bmm=True`` also torch.bmm, Tensor.bmm, torch.baddbmm and Tensor.baddbmm. Adds to what
    is patched already; idempotent; `unpatch_torch()` restores the originals."""
    with _lock:
        _apply(_active | set(_MM_TARGETS) | (set(_MATMUL_TARGETS) if matmul else set())
               | (set(_LINEAR_TARGETS) if linear else set()) | (set(_BMM_TARGETS) if bmm else set()))


def unpatch_torch() -> None:
    """Restore the exact original objects."""
    with _lock:
        _apply(set())


@contextlib.contextmanager
def patched(matmul: bool = False, linear: bool = False, bmm: bool = False) -> Iterator[None]:
    """Patch for the duration of a block; nested blocks restore what the outer one set."""
    with _lock:
        before = set(_active)
        patch_torch(matmul, linear, bmm)
    try:
        yield
    finally:
        with _lock:
            _apply(before)


# ---- dispatcher mode --------------------------------------------------------------------


def _set_override(enabled: bool) -> None:
    with warnings.catch_warnings():
        # The dispatcher warns that a kernel is being overridden: that is the point.
        warnings.filterwarnings("ignore", message=r"(?s).*overriding a previously registered kernel")
        _C.set_aten_override(enabled)


def enable() -> None:
    """Make cutlass_ops the CUDA kernel of aten::mm, aten::addmm, aten::_addmm_activation,
    aten::bmm and aten::baddbmm (and their out= overloads). Idempotent."""
    with _lock:
        _set_override(True)


def disable() -> None:
    """Give aten::mm, aten::addmm, aten::_addmm_activation, aten::bmm and aten::baddbmm back to
    torch's own CUDA kernels."""
    with _lock:
        _set_override(False)


def enabled() -> bool:
    return bool(_C.aten_override_enabled())


@contextlib.contextmanager
def use_cutlass() -> Iterator[None]:
    """Dispatcher mode for the duration of a block; nested blocks leave it as they found it."""
    with _lock:
        was_enabled = enabled()
        enable()
    try:
        yield
    finally:
        with _lock:
            if not was_enabled:
                _set_override(False)


# ---- counters -----------------------------------------------------------------------------


def stats() -> dict:
    """Calls since import (or `reset_stats()`): per op, per kernel, handed to torch, no work, and
    patched calls that fell back to the original function.

    ``{"cutlass": total kernel calls, "kernels": {name: calls}, "ops": {"mm": n, "addmm": n,
    "linear": n, "bmm": n, "baddbmm": n}, "torch_mm": {"complex": n, "no_kernel": n},
    "no_work": n, "patch_fallbacks": n}``. An op counts each call of its CUDA kernel once
    (`matmul` as the mm or bmm it runs); a kernel, each launch of it; "torch_mm" counts the calls
    handed to torch's own kernel, by reason (`explain()` says which problems and why).
    """
    raw = _C.stats()
    return {
        "cutlass": sum(raw["kernels"].values()),
        "kernels": dict(raw["kernels"]),
        "ops": dict(raw["ops"]),
        "torch_mm": {"complex": raw["torch_complex"], "no_kernel": raw["torch_no_kernel"]},
        "no_work": raw["no_work"],
        "patch_fallbacks": _fallbacks,
    }


def reset_stats() -> None:
    global _fallbacks
    _C.reset_stats()
    _fallbacks = 0


LOGGER = logging.getLogger("cutlass_ops")


class _StderrHandler(logging.StreamHandler):
    """Writes to whatever ``sys.stderr`` is when a line is logged, as logging's last-resort
    handler does (a test's or a notebook's capture included)."""

    def __init__(self) -> None:
        super().__init__()
        self.setFormatter(logging.Formatter("[cutlass_ops] %(message)s"))

    @property
    def stream(self):
        return sys.stderr

    @stream.setter
    def stream(self, value) -> None:
        pass


def set_logging(enabled: bool) -> None:
    """Log each call's shape, dtype and kernel (also: CUTLASS_OPS_LOG=1) to the ``cutlass_ops``
    logger of Python's :mod:`logging`, at INFO, from the thread that ran the call. Turning it on
    sets the logger's level to INFO if it has none, and where no handler would receive the lines
    (none on it or on the root logger) adds one that writes ``[cutlass_ops] <line>`` to stderr;
    configure ``logging.getLogger("cutlass_ops")`` to send them elsewhere."""
    if enabled:
        if LOGGER.level == logging.NOTSET:
            LOGGER.setLevel(logging.INFO)
        if not LOGGER.hasHandlers():
            LOGGER.addHandler(_StderrHandler())
    _C.set_logging(bool(enabled))


if _C.logging():  # CUTLASS_OPS_LOG=1, which the extension read at load: set up the logger for it
    set_logging(True)
