"""The in-place square product: ``mm_(A, W)`` computes ``A <- A @ W`` (or ``A @ W.T``).

A GEMM cannot write its output over an input it is still reading, so ``A @ W`` needs a result
the size of A. ``mm_`` needs only a scratch block of rows: it multiplies A in row blocks, each
block's product going to one reused scratch buffer (through ``cutlass_ops.mm``, so the block
runs on the same kernels as any other call) and then back over the block. A block's rows are
read only by its own product, so overwriting them afterwards is safe, for any row count and
any width.

Extra memory: one block of ``min(M, max(256, M / 8))`` rows, further capped at 64 MiB (but never
below 256 rows): for a 65536 x 4096 bf16 A (512 MiB), 16384 rows (64 MiB) instead of 512 MiB.
"""

from __future__ import annotations

import torch

from .ops import mm

__all__ = ["mm_", "scratch_rows"]

_SCRATCH_CAP_BYTES = 64 << 20
_MIN_BLOCK_ROWS = 256  # below this a block's GEMM is too small to run at speed


def scratch_rows(rows: int, cols: int, element_size: int) -> int:
    """Rows per block (and in the scratch buffer) that ``mm_`` uses for a rows x cols A."""
    if rows <= _MIN_BLOCK_ROWS:
        return rows
    by_fraction = rows // 8
    by_cap = _SCRATCH_CAP_BYTES // max(1, cols * element_size)
    return max(_MIN_BLOCK_ROWS, min(by_fraction, by_cap, rows))


def _byte_range(t: torch.Tensor) -> tuple[int, int]:
    if t.numel() == 0:
        return (0, 0)
    start = t.data_ptr()
    extent = sum((size - 1) * stride for size, stride in zip(t.shape, t.stride())) + 1
    return (start, start + extent * t.element_size())


def mm_(input: torch.Tensor, weight: torch.Tensor, *, transpose: bool = False) -> torch.Tensor:
    """``input <- input @ weight`` (``transpose=True``: ``input @ weight.T``) in place; returns ``input``.

    ``weight`` is square (``input.size(1)`` x ``input.size(1)``); float32, float16, bfloat16 (and
    float64) CUDA tensors of one dtype; float32 follows torch's TF32 setting like ``torch.mm``.
    ``input`` may be any 2-D view (strided, transposed). Raises like torch's in-place ops for
    tensors that need grad, and for a ``weight`` that shares memory with ``input``.
    """
    if not isinstance(input, torch.Tensor) or not isinstance(weight, torch.Tensor):
        bad = input if not isinstance(input, torch.Tensor) else weight
        raise TypeError(f"mm_(): input and weight must be Tensors, not {type(bad).__name__}")
    if input.dim() != 2 or weight.dim() != 2:
        raise RuntimeError(f"mm_: input and weight must be matrices, got {input.dim()}-D and {weight.dim()}-D tensors")
    n = input.shape[1]
    if tuple(weight.shape) != (n, n):
        raise RuntimeError(f"mm_: weight must be square with the width of input ({n}x{n}) for an in-place product; "
                           f"got input {tuple(input.shape)} and weight {tuple(weight.shape)}")
    if input.dtype != weight.dtype:
        raise RuntimeError(f"mm_: expected input and weight to have the same dtype, but got: {input.dtype} != "
                           f"{weight.dtype}")
    if torch.is_grad_enabled() and (input.requires_grad or weight.requires_grad):
        raise RuntimeError("mm_: an in-place product overwrites input, which autograd would need to compute "
                           "the gradient of weight; use input @ weight (or run under torch.no_grad())")
    (a0, a1), (w0, w1) = _byte_range(input), _byte_range(weight)
    if a0 < w1 and w0 < a1:
        raise RuntimeError("unsupported operation: some elements of the input tensor and the written-to tensor "
                           "refer to a single memory location. Please clone() the tensor before performing the "
                           "operation.")
    rows = input.shape[0]
    if rows == 0 or n == 0:
        return input
    w = weight.t() if transpose else weight
    block = scratch_rows(rows, n, input.element_size())
    scratch = torch.empty((block, n), dtype=input.dtype, device=input.device)
    for start in range(0, rows, block):
        stop = min(rows, start + block)
        out = scratch[: stop - start]
        mm(input[start:stop], w, out=out)
        input[start:stop].copy_(out)
    return input
