"""Helpers shared by the test files; the accuracy rules themselves live in cutlass_ops.testing,
which the fuzzer uses too."""

from __future__ import annotations

import math

import torch

import cutlass_ops
from cutlass_ops import precisions
from cutlass_ops.testing import ERROR_FLOOR, matrix, poison_allocator, reference_error  # noqa: F401

# The dtype sweep: (name, dtype, allow_tf32). "tf32" is float32 with TF32 matmuls allowed.
PRECISIONS = [
    ("f16", torch.float16, False),
    ("bf16", torch.bfloat16, False),
    ("tf32", torch.float32, True),
    ("f32", torch.float32, False),
    ("f64", torch.float64, False),
]

# Layout pairs for (A, B): r = row-major (contiguous), c = column-major (transpose of a
# contiguous tensor).
LAYOUT_PAIRS = ["rr", "rc", "cr", "cc"]

# Every size from the foundation issue appears in every position of some (M, N, K).
EDGE_SIZES = [1, 7, 8, 15, 64, 127, 128, 129, 1000, 1023, 4096]
EDGE_SHAPES = [(EDGE_SIZES[i], EDGE_SIZES[(i + 3) % 11], EDGE_SIZES[(i + 7) % 11]) for i in range(11)]
# Large enough for the SM90 cooperative 128x256 kernel (>= 132 tiles) and its cluster edges.
LARGE_SHAPES = [(2048, 4096, 1000), (4096, 4096, 513)]


def capability(cap=None):
    """`cap`, else this GPU's compute capability, else None: what the GPU tests' kernel lists are
    drawn for (tests/test_kernel_lists.py draws them for an SM90 and an SM80 without a GPU)."""
    if cap is None and torch.cuda.is_available():
        cap = torch.cuda.get_device_capability()
    return cap


def round_up(x: int, to: int) -> int:
    return (x + to - 1) // to * to


def aligned_shape(kernel, m, n, k):
    """(m, n, k) with N and K rounded up to what a forced kernel declares. Contiguous extents: K
    for A and for a column-major B, N for a row-major B and for the output, M for a column-major
    A (the only case where M is rounded). N, K and a column-major A's M of 1 become 2: a matrix of
    one row or column is a vector, whose layout the planner reads as it likes (a 1 x K
    column-major A is a row-major one; an M x 1 output turns the problem around), so a kernel of
    one layout is not forced on it."""
    align_a, align_b, align_d = kernel.alignment
    col_major_a, col_major_b = kernel.layouts[0] == "c", kernel.layouts[1] == "c"
    align_k = max(align_a, align_b if col_major_b else 1)
    align_n = max(align_d, 1 if col_major_b else align_b)
    m = max(round_up(m, align_a), 2) if col_major_a else m
    return m, max(round_up(n, align_n), 2), max(round_up(k, align_k), 2)


def assert_matches_reference(ours: torch.Tensor, a: torch.Tensor, b: torch.Tensor, precision: str,
                             theirs: torch.Tensor | None = None, context: str = "") -> None:
    """ours must be as accurate as torch.mm, judged against float64 on the same inputs."""
    if theirs is None:
        theirs = torch.mm(a, b)
    assert torch.isfinite(ours).all() or not torch.isfinite(theirs).all(), f"{context}: non-finite values"
    why = reference_error(ours, theirs, a, b, precision)
    assert why is None, f"{context}: {why}"


def assert_close_to_reference(ours, theirs, reference, context="", k=1):
    """ours is as accurate as torch's result, both judged against the float64 reference: its
    largest error at most twice torch's plus four units in the last place of the largest value
    (for float64, whose reference is torch's own result, sqrt(K) units: two float64 sums of K
    products differ by about that)."""
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape, context
    assert torch.isfinite(ours).all() or not torch.isfinite(theirs).all(), f"{context}: non-finite values"
    ref = reference.double()
    scale = ref.abs().max().item() or 1.0
    ours_err = (ours.double() - ref).abs().max().item()
    torch_err = (theirs.double() - ref).abs().max().item()
    units = max(4.0, k ** 0.5) if ours.dtype == torch.float64 else 4.0
    allowed = 2 * torch_err + units * torch.finfo(ours.dtype).eps * scale
    assert ours_err <= allowed, f"{context}: error {ours_err:.3g}, torch's {torch_err:.3g} (allowed {allowed:.3g})"


def capture_error(fn):
    """(exception type, message) raised by fn(), or (None, None)."""
    try:
        fn()
    except Exception as error:  # noqa: BLE001 - we compare whatever torch raises
        return type(error), str(error).split("\n")[0]
    return None, None


# ---- one forced kernel against the reference -----------------------------------------------

KERNEL_DTYPES = precisions.TORCH_DTYPE  # a kernel's precision -> its tensors' dtype

# The shapes tests/test_kernels_cuda.py forces every kernel on: inside the tiles' edges, odd,
# few rows with a long K, few columns, and 200 rows (within the 256 rows of the few-row kernels
# that take a column-major A, which needs M a multiple of 8). Every kernel takes at least one
# (tests/test_planner.py checks it without a GPU).
FORCED_SHAPES = [(296, 264, 136), (97, 83, 71), (2, 520, 1000), (1000, 8, 24), (200, 264, 136)]


def forced_precision(kernel) -> str:
    """The accuracy a forced kernel is held to: its own, but 3xTF32's is IEEE fp32's."""
    return precisions.accuracy_of(kernel.dtype)


def forced_operands(kernel, m, n, k, **layout):
    """Fresh random A (m x k) and B (k x n) in the kernel's dtype and layouts."""
    dtype = KERNEL_DTYPES[kernel.dtype]
    return matrix(m, k, dtype, kernel.layouts[0], **layout), matrix(k, n, dtype, kernel.layouts[1], **layout)


def check_forced(kernel, m, n, k, **layout):
    """Runs `kernel` with kernel= over a NaN-poisoned output block (an element the kernel
    forgets shows up) and checks the result against the reference."""
    a, b = forced_operands(kernel, m, n, k, **layout)
    poison_allocator(m * n, a.dtype)
    out = cutlass_ops.mm(a, b, kernel=kernel.name)
    assert_matches_reference(out, a, b, forced_precision(kernel), context=f"{kernel.name} {m}x{n}x{k} {layout}")


def check_forced_padded_out(kernel, m, n, k, align):
    """out= a view with a leading dim padded by 3 * align and an offset of align: the kernel must
    use ldd, and the padding must keep its NaNs."""
    a, b = forced_operands(kernel, m, n, k)
    base = torch.full((align + m * (n + 3 * align),), math.nan, dtype=a.dtype, device="cuda")
    out = base.as_strided((m, n), (n + 3 * align, 1), align)
    cutlass_ops.mm(a, b, out=out, kernel=kernel.name)
    assert_matches_reference(out, a, b, forced_precision(kernel), context=f"{kernel.name} {m}x{n}x{k} padded out")
    written = torch.zeros_like(base, dtype=torch.bool)
    written.as_strided((m, n), (n + 3 * align, 1), align).fill_(True)
    assert base[~written].isnan().all(), f"{kernel.name} {m}x{n}x{k}: wrote outside the output"


def planned(a: torch.Tensor, b: torch.Tensor, kernel, decomposition: str = "data-parallel", splits: int = 1,
            variant: str = "in-place", out: torch.Tensor | None = None):
    """Within the block, calls shaped like mm(a, b, out=out) run `kernel` with `decomposition`,
    `splits` and `variant` (cutlass_ops.tuning.pinned: a tuning-table entry, the one way to name
    a decomposition or a variant; kernel= takes the cost model's cheapest for the kernel). The
    table is restored after."""
    return cutlass_ops.tuning.pinned(a, b, kernel, decomposition, splits, variant, out=out)


# ---- batches (bmm) ------------------------------------------------------------------------------

def batch_of(batch, rows, cols, dtype, layout, pad, shared=False):
    """A (batch, rows, cols) view whose matrices are `layout` ('r' or 'c') and `pad` elements
    further apart than packed (or all one matrix: batch stride 0)."""
    size = rows * cols
    stride_batch = 0 if shared else size + pad
    storage = size + (batch - 1) * stride_batch
    base = torch.randn(storage, dtype=dtype, device="cuda")
    strides = (stride_batch, cols, 1) if layout == "r" else (stride_batch, 1, rows)
    return base.as_strided((batch, rows, cols), strides)


def assert_batch_matches_reference(out, a, b, kernel, context="", matrices=None):
    """Every matrix of a forced kernel's batch (or those numbered in `matrices`) against the
    reference (torch's own product with TF32 allowed for a TF32 kernel)."""
    previous = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = kernel.dtype == "tf32"
    try:
        for i in range(out.shape[0]) if matrices is None else matrices:
            assert_matches_reference(out[i], a[i], b[i], forced_precision(kernel), context=f"{context}, matrix {i}")
    finally:
        torch.backends.cuda.matmul.allow_tf32 = previous

