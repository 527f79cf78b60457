"""The tensor-core skinny-M streaming kernels (csrc/handwritten/gemm_skinny_m_mma_sm80.cu), each
forced with kernel= and checked against a float64 reference, relative to torch.mm's own error.
The cases sweep M across the kernel's row instances (16, 32 and 64 rows of A), take N from one
column pair to many 32-column blocks with a ragged last one, and K from one 8-element chunk to
long; N small enough that K is also split over blocks (workspace and sum of slabs); padded
leading dims, storage offsets and a padded output. The 16-bit kernels take at most 256 rows (64 to a
block row) and the TF32 ones 16: forcing one on more is a ValueError naming the limit. With a column-major A
("cr", "cc"), M is A's contiguous extent and is rounded up to the alignment (aligned_shape).
The `_a1` builds (16-bit, any alignment: element-pair loads, 32 rows to a block row) run the same
cases on shapes as they are, and on operands starting at every element offset. Every build runs
batches (bmm): matrices at padded batch strides or shared, K split over blocks per matrix."""

import pytest
import torch

import cutlass_ops
from mm_testing import (KERNEL_DTYPES, aligned_shape, assert_batch_matches_reference, assert_matches_reference, batch_of,
                        check_forced, check_forced_padded_out, forced_operands, poison_allocator)

pytestmark = pytest.mark.gpu

# 16-bit in every layout (a column-major A goes through ldmatrix.trans); TF32 with a row-major A.
NAMES = ({f"handwritten_sm80_{dtype}_{layouts}_skinny_m_mma{suffix}" for dtype in ("bf16", "f16")
          for layouts in ("rr", "rc", "cr", "cc") for suffix in ("", "_a1")}
         | {f"handwritten_sm80_tf32_{layouts}_skinny_m_mma" for layouts in ("rr", "rc")})
MAX_ROWS = {"bf16": 256, "f16": 256, "tf32": 16}

# Both sides of each instance's row count (16, 32, 64; TF32 has the 16-row one), M = 1, and
# several block rows of 64 (16-bit): two, a ragged third, four.
M_SWEEP = [1, 2, 15, 16, 17, 31, 32, 33, 63, 64, 65, 128, 136, 256]
# N: one column pair (rc; rr rounds up to 8), less than a block of 32, a ragged block, and
# 4096 (128 blocks: K is not split over blocks on a large GPU). 40 and 1000 leave most SMs idle,
# so K is split over blocks when it is long enough.
N_SIZES = [2, 40, 1000, 4096]
# K: one chunk, less than a stage of 32, ragged, and long (many stages per warp).
K_SIZES = [8, 24, 1000, 4096]


def mma_kernels():
    if not torch.cuda.is_available():
        return []
    return [k for k in cutlass_ops.list_kernels(torch.cuda.get_device_capability()) if k.name in NAMES]


def test_all_mma_kernels_are_registered():
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA device")
    kernels = mma_kernels()
    assert {k.name for k in kernels} == NAMES
    for k in kernels:
        assert k.family == "handwritten" and k.config == "skinny_m_mma_streaming", k
        assert k.layouts == k.name.split("_")[3], k
        expected = (1, 1, 1) if k.name.endswith("_a1") else (4, 4, 2) if k.dtype == "tf32" else (8, 8, 2)
        assert k.alignment == expected, k
        assert k.max_m == MAX_ROWS[k.dtype], k
        assert k.decompositions == ("data-parallel",), k  # K is split inside the kernel
        assert k.min_capability == (8, 0) and k.max_capability is None, k


@pytest.mark.parametrize("kernel", mma_kernels(), ids=lambda k: k.name)
@pytest.mark.parametrize("m", M_SWEEP)
def test_m_sweep_over_n_and_k(kernel, m):
    if m > kernel.max_m:
        pytest.skip(f"{kernel.name} takes at most {kernel.max_m} rows")
    for n in N_SIZES:
        for k in K_SIZES:
            check_forced(kernel, *aligned_shape(kernel, m, n, k))


@pytest.mark.parametrize("kernel", mma_kernels(), ids=lambda k: k.name)
@pytest.mark.parametrize("m,n,k", [(1, 64, 65536), (16, 1000, 16384), (64, 256, 8192), (16, 4096, 14336),
                                   (200, 256, 16384)], ids=str)
def test_long_k(kernel, m, n, k):
    """Few columns and a long K split over many blocks (workspace, sum of slabs), and a long K
    inside one block per column block."""
    check_forced(kernel, *aligned_shape(kernel, min(m, kernel.max_m), n, k))


@pytest.mark.parametrize("kernel", mma_kernels(), ids=lambda k: k.name)
@pytest.mark.parametrize("m", [1, 17, 40, 200])
def test_padded_leading_dims(kernel, m):
    """Leading dims larger than the rows, by a multiple of the alignment: the kernel must use
    lda and ldb, not the sizes."""
    check_forced(kernel, *aligned_shape(kernel, min(m, kernel.max_m), 1000, 1000), ld_pad=3 * 8)


@pytest.mark.parametrize("kernel", mma_kernels(), ids=lambda k: k.name)
@pytest.mark.parametrize("m", [1, 17, 40, 200])
def test_storage_offset(kernel, m):
    """An offset of the alignment keeps every pointer aligned; the kernel must read from the
    view's start, not the storage's."""
    check_forced(kernel, *aligned_shape(kernel, min(m, kernel.max_m), 1000, 4096), offset=8)


@pytest.mark.parametrize("kernel", mma_kernels(), ids=lambda k: k.name)
def test_padded_output_is_written_only_inside(kernel):
    """out= a view with a padded leading dim and an offset: the kernel must use ldd, and the
    padding must keep its NaNs (one slab per block, and K split over blocks)."""
    for m, n, k in [(7, 1000, 64), (7, 1000, 8192), (min(50, kernel.max_m), 4096, 512), (min(130, kernel.max_m), 40, 8192)]:
        check_forced_padded_out(kernel, *aligned_shape(kernel, m, n, k), 2)


@pytest.mark.parametrize("kernel", mma_kernels(), ids=lambda k: k.name)
def test_split_k_is_deterministic(kernel):
    """K split over blocks and warps, summed in a fixed order: two runs agree bit for bit."""
    for rows in sorted({16, min(150, kernel.max_m)}):  # one block row, and three (16-bit)
        m, n, k = aligned_shape(kernel, rows, 256, 65536)
        a, b = forced_operands(kernel, m, n, k)
        first = cutlass_ops.mm(a, b, kernel=kernel.name)
        second = cutlass_ops.mm(a, b, kernel=kernel.name)
        assert_matches_reference(first, a, b, kernel.dtype, context=f"{kernel.name} {m}x{n}x{k}")
        assert torch.equal(first, second), f"{kernel.name} {m}x{n}x{k}: two runs differ"


@pytest.mark.parametrize("kernel", mma_kernels(), ids=lambda k: k.name)
def test_more_rows_than_the_limit_are_refused_by_name(kernel):
    rows = kernel.max_m
    a, b = forced_operands(kernel, rows + 1, 256, 256)
    with pytest.raises(ValueError, match=rf"takes at most {rows} rows \(M\), the problem has M = {rows + 1}"):
        cutlass_ops.mm(a, b, kernel=kernel.name)
    check_forced(kernel, rows, 256, 256)  # and the limit runs


@pytest.mark.parametrize("kernel", [k for k in mma_kernels() if k.name.endswith("_a1")], ids=lambda k: k.name)
def test_every_misalignment(kernel):
    """The any-alignment builds on views starting 0 to 7 elements past a 16-byte boundary, with
    odd sizes (leading dims that keep the shift changing from row to row): one block row and
    several, K inside one block and split over blocks."""
    for offset in range(8):
        for m, n, k in [(1, 1001, 1023), (5, 40, 4101), (33, 263, 777), (250, 31, 2049)]:
            check_forced(kernel, *aligned_shape(kernel, m, n, k), offset=offset)


def check_batch(kernel, batch, m, n, k, shared=""):
    """kernel forced on a bmm of `batch` matrices (one of A, B shared if named), every matrix
    against the reference."""
    m, n, k = aligned_shape(kernel, m, n, k)
    dtype = KERNEL_DTYPES[kernel.dtype]
    pad = 1 if kernel.name.endswith("_a1") else 8 * max(kernel.alignment)
    a = batch_of(batch, m, k, dtype, kernel.layouts[0], pad, shared == "a")
    b = batch_of(batch, k, n, dtype, kernel.layouts[1], 3 * pad, shared == "b")
    poison_allocator(batch * m * n, dtype)
    out = cutlass_ops._extension._C.bmm_with_kernel(a, b, kernel.name)
    assert out.shape == (batch, m, n)
    assert_batch_matches_reference(out, a, b, kernel, context=f"{kernel.name} {batch}x{m}x{n}x{k}, shared {shared!r}")


@pytest.mark.parametrize("kernel", mma_kernels(), ids=lambda k: k.name)
@pytest.mark.parametrize("shared", ["", "a", "b"])
def test_batches(kernel, shared):
    """Batches whose blocks leave most SMs idle (K split over blocks, a workspace slab set per
    matrix) and batches that fill the GPU (no split), with several block rows."""
    for batch, m, n, k in [(3, 5, 40, 8192), (7, 16, 264, 1000), (2, min(100, kernel.max_m), 72, 4096), (40, 1, 8, 24)]:
        check_batch(kernel, batch, m, n, k, shared)


@pytest.mark.parametrize("kernel", [k for k in mma_kernels() if k.name.endswith("_a1")], ids=lambda k: k.name)
def test_output_at_any_alignment(kernel):
    """out= a view at an odd offset with an odd leading dim: the any-alignment builds store D
    element by element (one slab, and K split over blocks); the padding keeps its NaNs."""
    for m, n, k in [(7, 1001, 64), (7, 1001, 8191), (33, 263, 777), (250, 31, 2049)]:
        check_forced_padded_out(kernel, m, n, k, 1)

