"""The skinny-N kernels (csrc/handwritten/gemm_skinny_m_mma_sm80.cu, skinny_n_info): the
tensor-core streaming kernel run on D^T = B^T A^T for outputs of up to 256 columns, storing its
result transposed. Each is forced with kernel= and checked against a float64 reference, relative
to torch.mm's own error: N across the kernel's block rows of D^T (up to 64 columns in one, and two
to four), M from one row to many 32-row blocks with a ragged last one, K from one chunk to long;
few rows, so that K is also split over blocks (the workspace slabs, laid out as D); padded leading
dims, storage offsets and a padded output. More columns than the limit are refused by name.
The `_a1` builds (any alignment) run the same cases on shapes as they are and on views starting
at every element offset; every build runs batches (bmm)."""

import pytest
import torch

import cutlass_ops
from mm_testing import aligned_shape, assert_matches_reference, check_forced, check_forced_padded_out, forced_operands
from test_handwritten_skinny_mma_cuda import check_batch

pytestmark = pytest.mark.gpu

NAMES = {f"handwritten_sm80_{dtype}_{layouts}_skinny_n_mma{suffix}" for dtype in ("bf16", "f16")
         for layouts in ("rr", "rc", "cr", "cc") for suffix in ("", "_a1")}

# Columns: one pair, both sides of the 16-, 32- and 64-row instances of D^T, and several block rows.
N_SWEEP = [2, 16, 18, 32, 40, 64, 66, 130, 256]
M_SIZES = [1, 40, 1000, 4096]
K_SIZES = [8, 24, 1000, 4096]


def skinny_n_kernels():
    if not torch.cuda.is_available():
        return []
    return [k for k in cutlass_ops.list_kernels(torch.cuda.get_device_capability()) if k.name in NAMES]


def test_all_skinny_n_kernels_are_registered():
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA device")
    kernels = skinny_n_kernels()
    assert {k.name for k in kernels} == NAMES
    for k in kernels:
        assert k.family == "handwritten" and k.config == "skinny_n_mma_streaming", k
        assert k.layouts == k.name.split("_")[3], k
        assert k.alignment == ((1, 1, 1) if k.name.endswith("_a1") else (8, 8, 2)), k
        assert k.max_n == 256 and k.max_m is None, k
        assert k.decompositions == ("data-parallel",), k


@pytest.mark.parametrize("kernel", skinny_n_kernels(), ids=lambda k: k.name)
@pytest.mark.parametrize("n", N_SWEEP)
def test_n_sweep_over_m_and_k(kernel, n):
    for m in M_SIZES:
        for k in K_SIZES:
            check_forced(kernel, *aligned_shape(kernel, m, n, k))


@pytest.mark.parametrize("kernel", skinny_n_kernels(), ids=lambda k: k.name)
@pytest.mark.parametrize("m,n,k", [(64, 2, 65536), (1000, 16, 16384), (256, 64, 8192), (4096, 16, 14336),
                                   (256, 200, 16384)], ids=str)
def test_long_k(kernel, m, n, k):
    """Few rows and a long K split over many blocks (workspace, sum of slabs), and a long K
    inside one block per row block."""
    check_forced(kernel, *aligned_shape(kernel, m, n, k))


@pytest.mark.parametrize("kernel", skinny_n_kernels(), ids=lambda k: k.name)
@pytest.mark.parametrize("n", [2, 40, 200])
def test_padded_leading_dims_and_offset(kernel, n):
    """The kernel must use lda, ldb and ldd and read from the views' starts."""
    check_forced(kernel, *aligned_shape(kernel, 1000, n, 1000), ld_pad=3 * 8)
    check_forced(kernel, *aligned_shape(kernel, 1000, n, 4096), offset=8)


@pytest.mark.parametrize("kernel", skinny_n_kernels(), ids=lambda k: k.name)
def test_padded_output_is_written_only_inside(kernel):
    """out= a view with a padded leading dim and an offset: D is stored transposed, down its
    rows; the padding must keep its NaNs (one slab per block, and K split over blocks)."""
    for m, n, k in [(1000, 8, 64), (100, 8, 8192), (4096, 50, 512), (40, 130, 8192)]:
        check_forced_padded_out(kernel, *aligned_shape(kernel, m, n, k), 2)


@pytest.mark.parametrize("kernel", skinny_n_kernels(), ids=lambda k: k.name)
def test_split_k_is_deterministic(kernel):
    """K split over blocks and warps, summed in a fixed order: two runs agree bit for bit."""
    for columns in (16, 150):
        m, n, k = aligned_shape(kernel, 256, columns, 65536)
        a, b = forced_operands(kernel, m, n, k)
        first = cutlass_ops.mm(a, b, kernel=kernel.name)
        second = cutlass_ops.mm(a, b, kernel=kernel.name)
        assert_matches_reference(first, a, b, kernel.dtype, context=f"{kernel.name} {m}x{n}x{k}")
        assert torch.equal(first, second), f"{kernel.name} {m}x{n}x{k}: two runs differ"


@pytest.mark.parametrize("kernel", skinny_n_kernels(), ids=lambda k: k.name)
def test_more_columns_than_the_limit_are_refused_by_name(kernel):
    columns = kernel.max_n
    a, b = forced_operands(kernel, 256, columns + 8, 256)
    with pytest.raises(ValueError, match=rf"takes at most {columns} columns \(N\), the problem has N = {columns + 8}"):
        cutlass_ops.mm(a, b, kernel=kernel.name)
    check_forced(kernel, 256, columns, 256)  # and the limit runs


@pytest.mark.parametrize("kernel", [k for k in skinny_n_kernels() if k.name.endswith("_a1")], ids=lambda k: k.name)
def test_every_misalignment(kernel):
    """The any-alignment builds on views starting 0 to 7 elements past a 16-byte boundary, with
    odd sizes: odd column counts (the last pair of a transposed store is one element), one
    block row of D^T and several, K inside one block and split over blocks."""
    for offset in range(8):
        for m, n, k in [(1001, 3, 1023), (40, 5, 4101), (263, 33, 777), (31, 250, 2049)]:
            check_forced(kernel, *aligned_shape(kernel, m, n, k), offset=offset)


@pytest.mark.parametrize("kernel", skinny_n_kernels(), ids=lambda k: k.name)
@pytest.mark.parametrize("shared", ["", "a", "b"])
def test_batches(kernel, shared):
    """Batches of few-column products: K split over blocks per matrix, and batches that fill the GPU."""
    for batch, m, n, k in [(3, 40, 5, 8192), (7, 264, 16, 1000), (2, 72, 100, 4096), (40, 8, 3, 24)]:
        check_batch(kernel, batch, m, n, k, shared)


@pytest.mark.parametrize("kernel", [k for k in skinny_n_kernels() if k.name.endswith("_a1")], ids=lambda k: k.name)
def test_output_at_any_alignment(kernel):
    """out= a view at an odd offset with an odd leading dim: the any-alignment builds store D
    element by element (one slab, and K split over blocks); the padding keeps its NaNs."""
    for m, n, k in [(1001, 7, 64), (1001, 7, 8191), (263, 33, 777), (31, 250, 2049)]:
        check_forced_padded_out(kernel, m, n, k, 1)

