"""Helpers shared by the test files: operands of every layout, and accuracy judged
against a float64 reference relative to torch.mm's own error on the same inputs."""

from __future__ import annotations

import math

import torch

# The dtype sweep: (name, dtype, allow_tf32). "tf32" is float32 with TF32 matmuls allowed.
PRECISIONS = [
    ("f16", torch.float16, False),
    ("bf16", torch.bfloat16, False),
    ("tf32", torch.float32, True),
    ("f32", torch.float32, False),
    ("f64", torch.float64, False),
]

# Relative-error floor per precision: what a correct result may show when torch's own error
# happens to be tiny. A wrong tile or a missed K block shows errors of 1e-2 to 1, far above.
ERROR_FLOOR = {"f16": 1e-3, "bf16": 8e-3, "tf32": 2e-3, "f32": 1e-5, "f64": 1e-12}

# Layout pairs for (A, B): r = row-major (contiguous), c = column-major (transpose of a
# contiguous tensor).
LAYOUT_PAIRS = ["rr", "rc", "cr", "cc"]

# Every size from the foundation issue appears in every position of some (M, N, K).
EDGE_SIZES = [1, 7, 8, 15, 64, 127, 128, 129, 1000, 1023, 4096]
EDGE_SHAPES = [(EDGE_SIZES[i], EDGE_SIZES[(i + 3) % 11], EDGE_SIZES[(i + 7) % 11]) for i in range(11)]
# Large enough for the SM90 cooperative 128x256 kernel (>= 132 tiles) and its cluster edges.
LARGE_SHAPES = [(2048, 4096, 1000), (4096, 4096, 513)]


def matrix(rows: int, cols: int, dtype: torch.dtype, layout: str = "r", *, ld_pad: int = 0, offset: int = 0,
           device="cuda", generator=None) -> torch.Tensor:
    """A rows x cols view filled with N(0, 1) values.

    layout "r": row-major with leading dim cols + ld_pad; "c": column-major with leading dim
    rows + ld_pad. `offset` elements precede it in its storage (an offset of 1 breaks every
    alignment above one element).
    """
    if layout == "r":
        ld = max(cols, 1) + ld_pad
        size, stride = (rows, cols), (ld, 1)
        storage = offset + rows * ld
    else:
        ld = max(rows, 1) + ld_pad
        size, stride = (rows, cols), (1, ld)
        storage = offset + cols * ld
    base = torch.randn(max(storage, 1), dtype=dtype, device=device, generator=generator)
    return base.as_strided(size, stride, offset)


def rel_error(x: torch.Tensor, ref: torch.Tensor) -> float:
    den = ref.norm().item()
    return (x.double() - ref).norm().item() / (den if den > 0 else 1.0)


def assert_matches_reference(ours: torch.Tensor, a: torch.Tensor, b: torch.Tensor, precision: str,
                             theirs: torch.Tensor | None = None, context: str = "") -> None:
    """ours must be as accurate as torch.mm, judged against float64 on the same inputs."""
    if theirs is None:
        theirs = torch.mm(a, b)
    assert ours.shape == theirs.shape, f"{context}: shape {tuple(ours.shape)} != torch.mm's {tuple(theirs.shape)}"
    assert ours.dtype == theirs.dtype, f"{context}: dtype {ours.dtype} != torch.mm's {theirs.dtype}"
    if ours.numel() == 0:
        return
    ref = a.double() @ b.double()
    assert torch.isfinite(ours).all(), f"{context}: non-finite values (unwritten output?)"
    floor = ERROR_FLOOR[precision]
    e_ours, e_torch = rel_error(ours, ref), rel_error(theirs, ref)
    assert e_ours <= max(2 * e_torch, floor), (
        f"{context}: relative error {e_ours:.3e} vs torch.mm's {e_torch:.3e} (floor {floor:.0e})")
    # Element-wise, so a handful of wrong elements cannot hide in the norm.
    scale = max(ref.abs().max().item(), 1e-300)
    m_ours = (ours.double() - ref).abs().max().item() / scale
    m_torch = (theirs.double() - ref).abs().max().item() / scale
    assert m_ours <= max(4 * m_torch, 4 * floor), (
        f"{context}: worst element error {m_ours:.3e} vs torch.mm's {m_torch:.3e}")


def poison_allocator(numel: int, dtype: torch.dtype, device="cuda") -> None:
    """Leave NaNs in the caching allocator's next block of this size, so an output element
    that a kernel forgets to write shows up as NaN instead of as a stale plausible value."""
    if dtype.is_floating_point:
        torch.full((max(numel, 1),), math.nan, dtype=dtype, device=device)


def capture_error(fn):
    """(exception type, message) raised by fn(), or (None, None)."""
    try:
        fn()
    except Exception as error:  # noqa: BLE001 - we compare whatever torch raises
        return type(error), str(error).split("\n")[0]
    return None, None
