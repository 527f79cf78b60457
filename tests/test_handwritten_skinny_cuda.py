"""The skinny-M streaming kernels (csrc/handwritten/gemm_skinny_m_sm80.cu), each forced with
kernel= and checked against a float64 reference, relative to torch.mm's own error. The cases
cover an M sweep across the kernel's row chunks (1, 2, 4 and 8 rows, then several chunks), N
and K from one vector to long, K long enough to split into many slabs, padded leading dims,
storage offsets and a padded output, with A row-major and, for the 32- and 64-bit builds,
column-major too (the float64 builds sum in float64 and are held to torch.mm's float64 error).
Two runs of a split-K shape must agree bit for bit. The `_a1` and `_a1_elementwise` builds
(every operand at alignment 1, up to 16 rows) run the same cases on shapes, leading dims and
offsets of any element count."""

import pytest
import torch

import cutlass_ops
from mm_testing import (aligned_shape, assert_matches_reference, check_forced, check_forced_padded_out, forced_operands,
                        forced_precision)

pytestmark = pytest.mark.gpu

NAMES = {f"handwritten_sm80_{dtype}_{layouts}_skinny_m{suffix}" for dtype in ("f32", "tf32", "3xtf32", "bf16", "f16", "f64")
         for layouts in ("rr", "rc", "cr", "cc") if dtype in ("f32", "tf32", "3xtf32", "f64") or layouts[0] == "r"
         for suffix in ("", "_a1", "_a1_elementwise")}

# M on both sides of each row-chunk size (1, 2, 4, 8) and of several chunks of 8.
M_SWEEP = [1, 2, 3, 7, 8, 15, 16, 17, 33, 130]
# N: one vector, one column block or less, and several blocks with a ragged one. K likewise;
# 4096 splits into several K slabs, LONG_K into many. The aligned builds round N and K up to
# their vector (aligned_shape); the `_a1` builds take them as they are.
N_SIZES = [4, 8, 1000, 4096, 3, 7, 1001, 4099]
K_SIZES = [4, 8, 1000, 4096, 3, 1001, 4097]
LONG_K = 65536


def skinny_kernels():
    if not torch.cuda.is_available():
        return []
    return [k for k in cutlass_ops.list_kernels(torch.cuda.get_device_capability()) if k.name in NAMES]


@pytest.fixture
def kernel_precision(tf32_matmul):
    """Sets torch's TF32 flag to the kernel's precision, so torch.mm's error (the yardstick)
    is TF32's for the tf32 kernels and IEEE fp32's for the f32 ones."""
    return lambda kernel: tf32_matmul(kernel.dtype == "tf32")


def test_all_skinny_kernels_are_registered():
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA device")
    kernels = skinny_kernels()
    assert {k.name for k in kernels} == NAMES
    for k in kernels:
        assert k.family == "handwritten" and k.config == "skinny_m_streaming", k
        assert k.layouts == k.name.split("_")[3], k
        assert k.decompositions == ("data-parallel",), k  # K is split inside the kernel
        assert k.min_capability == (8, 0) and k.max_capability is None, k
        if "_a1" in k.name:
            assert k.alignment == (1, 1, 1) and k.max_m == 16, k
        else:
            assert k.alignment[1] == 16 // KERNEL_BYTES[k.dtype] and k.max_m is None, k


KERNEL_BYTES = {"f32": 4, "tf32": 4, "3xtf32": 4, "bf16": 2, "f16": 2, "f64": 8}


def rows_it_takes(kernel, m):
    if kernel.max_m is not None and m > kernel.max_m:
        pytest.skip(f"{kernel.name} takes at most {kernel.max_m} rows")


@pytest.mark.parametrize("kernel", skinny_kernels(), ids=lambda k: k.name)
@pytest.mark.parametrize("m", M_SWEEP)
def test_m_sweep_over_n_and_k(kernel, m, kernel_precision):
    rows_it_takes(kernel, m)
    kernel_precision(kernel)
    for n in N_SIZES:
        for k in K_SIZES:
            check_forced(kernel, *aligned_shape(kernel, m, n, k))


@pytest.mark.parametrize("kernel", skinny_kernels(), ids=lambda k: k.name)
@pytest.mark.parametrize("n", N_SIZES)
def test_long_k_in_many_slabs(kernel, n, kernel_precision):
    kernel_precision(kernel)
    check_forced(kernel, *aligned_shape(kernel, 1, n, LONG_K))


@pytest.mark.parametrize("kernel", skinny_kernels(), ids=lambda k: k.name)
@pytest.mark.parametrize("m", [1, 7, 17])
def test_padded_leading_dims(kernel, m, kernel_precision):
    """Leading dims larger than the rows, by a multiple of the alignment: the kernel must use
    lda and ldb, not the sizes."""
    rows_it_takes(kernel, m)
    kernel_precision(kernel)
    align = max(kernel.alignment)
    check_forced(kernel, *aligned_shape(kernel, m, 1000, 1000), ld_pad=3 * align)


@pytest.mark.parametrize("kernel", skinny_kernels(), ids=lambda k: k.name)
@pytest.mark.parametrize("m", [1, 7, 17])
def test_storage_offset(kernel, m, kernel_precision):
    """An offset of the kernel's alignment keeps every pointer aligned; the kernel must read
    from the view's start, not the storage's."""
    rows_it_takes(kernel, m)
    kernel_precision(kernel)
    align = max(kernel.alignment)
    check_forced(kernel, *aligned_shape(kernel, m, 1000, 4096), offset=align)


@pytest.mark.parametrize("kernel", skinny_kernels(), ids=lambda k: k.name)
def test_padded_output_is_written_only_inside(kernel, kernel_precision):
    """out= a view with a padded leading dim and an offset: the kernel must use ldd, and the
    padding must keep its NaNs (single-slab and split-K shapes)."""
    kernel_precision(kernel)
    for m, n, k in [(7, 1000, 64), (7, 1000, 8192)]:
        check_forced_padded_out(kernel, *aligned_shape(kernel, m, n, k), max(kernel.alignment))


@pytest.mark.parametrize("kernel", skinny_kernels(), ids=lambda k: k.name)
def test_split_k_is_deterministic(kernel, kernel_precision):
    """K split into many slabs and summed in a fixed order: two runs agree bit for bit."""
    kernel_precision(kernel)
    m, n, k = aligned_shape(kernel, 1, 256, LONG_K)
    a, b = forced_operands(kernel, m, n, k)
    first = cutlass_ops.mm(a, b, kernel=kernel.name)
    second = cutlass_ops.mm(a, b, kernel=kernel.name)
    assert_matches_reference(first, a, b, forced_precision(kernel), context=f"{kernel.name} {m}x{n}x{k}")
    assert torch.equal(first, second), f"{kernel.name} {m}x{n}x{k}: two runs differ"


@pytest.mark.parametrize("kernel", [k for k in skinny_kernels() if "_a1" in k.name], ids=lambda k: k.name)
def test_every_misalignment(kernel, kernel_precision):
    """The any-alignment builds on operands whose rows all start the same number of elements (0 to 7)
    past a 16-byte boundary: every shift of the realignment, with leading dims that keep it
    for each row, and with the matrix ending inside a vector."""
    kernel_precision(kernel)
    for offset in range(8):
        for m, n, k in [(1, 1000, 1024), (5, 1024, 1000), (16, 264, 4101)]:
            # A column-major A of one row is a row-major one to the planner (aligned_shape).
            m = max(m, 2) if kernel.layouts[0] == "c" else m
            check_forced(kernel, m, n, k, offset=offset)
