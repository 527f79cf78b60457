"""What the tests, the fuzzer and the benchmarks agree on: operands of every layout, and
accuracy judged against a float64 reference relative to torch.mm's own error on the same
inputs."""

from __future__ import annotations

import math
from typing import Optional

import torch

from .precisions import TORCH_DTYPE

# Relative-error floor per precision: what a correct result may show when torch's own error
# happens to be tiny. A wrong tile or a missed K block shows errors of 1e-2 to 1, far above.
ERROR_FLOOR = {"f16": 1e-3, "bf16": 8e-3, "tf32": 2e-3, "f32": 1e-5, "f64": 1e-12}

# name -> (dtype, TF32 allowed): the precisions torch.mm itself computes in (3xTF32 is ours)
PRECISIONS = {p: (TORCH_DTYPE[p], p == "tf32") for p in ("f16", "bf16", "tf32", "f32", "f64")}


def matrix(rows: int, cols: int, dtype: torch.dtype, layout: str = "r", *, ld_pad: int = 0, offset: int = 0,
           device="cuda", generator: Optional[torch.Generator] = None) -> torch.Tensor:
    """A rows x cols view of N(0, 1) values.

    layout "r": row-major with leading dim cols + ld_pad; "c": column-major with leading dim
    rows + ld_pad. `offset` elements precede it in its storage (an offset of 1 breaks every
    alignment above one element).
    """
    if layout == "r":
        ld = max(cols, 1) + ld_pad
        size, stride, storage = (rows, cols), (ld, 1), offset + rows * ld
    else:
        ld = max(rows, 1) + ld_pad
        size, stride, storage = (rows, cols), (1, ld), offset + cols * ld
    base = torch.randn(max(storage, 1), dtype=dtype, device=device, generator=generator)
    return base.as_strided(size, stride, offset)


def rel_error(x: torch.Tensor, ref: torch.Tensor) -> float:
    den = ref.norm().item()
    return (x.double() - ref).norm().item() / (den if den > 0 else 1.0)


def product_magnitude(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """sqrt(sum_k a_ik^2 b_kj^2) for each output, in float64: the size of the sum that a
    rounding error in each product adds up to. For zero-mean data its square has the same
    expectation as the product's, but it does not cancel: a few outputs whose sums happen to
    land near zero do not make a rounding error look large."""
    a64, b64 = a.double(), b.double()
    return ((a64 * a64) @ (b64 * b64)).sqrt()


def reference_error(ours: torch.Tensor, theirs: torch.Tensor, a: torch.Tensor, b: torch.Tensor,
                    precision: str, *, ref: Optional[torch.Tensor] = None,
                    magnitude: Optional[torch.Tensor] = None) -> Optional[str]:
    """Why `ours` is less accurate than torch.mm's `theirs` as an A @ B, or None.

    For a product with an epilogue (addmm's beta * input, linear's bias and activation) pass its
    float64 result as `ref` and the size of what rounds in it as `magnitude` (both default to
    A @ B's); `theirs` is then torch's own op on the same inputs.

    Errors are measured against the float64 product, relative to its size or, where its
    outputs cancel below it, to the products' (product_magnitude): a 2x2 TF32 result whose
    four sums came out small showed a 3.6e-3 error against the 2e-3 floor, from rounding
    alone. Norm-wise `ours` must stay within twice torch.mm's error (or the precision's
    floor), and element-wise within four times, so a handful of wrong elements cannot hide in
    the norm.
    """
    if ours.shape != theirs.shape:
        return f"shape {tuple(ours.shape)} != torch.mm's {tuple(theirs.shape)}"
    if ours.dtype != theirs.dtype:
        return f"dtype {ours.dtype} != torch.mm's {theirs.dtype}"
    if ours.numel() == 0:
        return None
    if not torch.isfinite(ours).all() and torch.isfinite(theirs).all():
        return "non-finite values where torch.mm has none (unwritten output?)"
    floor = ERROR_FLOOR[precision]
    ref = a.double() @ b.double() if ref is None else ref
    magnitude = product_magnitude(a, b) if magnitude is None else magnitude
    den = max(ref.norm().item(), magnitude.norm().item())
    if den == 0:
        return None if torch.equal(ours.double(), ref) else "nonzero result where the product is zero"
    e_ours = (ours.double() - ref).norm().item() / den
    e_torch = (theirs.double() - ref).norm().item() / den
    if not e_ours <= max(2 * e_torch, floor):
        return f"relative error {e_ours:.3e} vs torch.mm's {e_torch:.3e} (floor {floor:.0e})"
    scale = max(ref.abs().max().item(), magnitude.max().item())
    m_ours = (ours.double() - ref).abs().max().item() / scale
    m_torch = (theirs.double() - ref).abs().max().item() / scale
    if not m_ours <= max(4 * m_torch, 4 * floor):
        return f"worst element error {m_ours:.3e} vs torch.mm's {m_torch:.3e}"
    return None


def poison_allocator(numel: int, dtype: torch.dtype, device="cuda") -> None:
    """Leave NaNs in the caching allocator's next block of this size, so an output element
    that a kernel forgets to write shows up as NaN instead of as a stale plausible value."""
    if dtype.is_floating_point:
        torch.full((max(numel, 1),), math.nan, dtype=dtype, device=device)
