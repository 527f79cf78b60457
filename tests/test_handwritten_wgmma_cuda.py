"""Step 6 of the hand-written ladder (csrc/handwritten/gemm_6_wgmma_tma_sm90.cu): TMA + wgmma,
warp-specialised and persistent, forced with kernel= on shapes that stress its edges; its
N-fitted builds (128 x 192-240 tiles), whose last box of D is narrower; and its swapped builds
(192-256 x 128 tiles), in every layout whose MN-major operands fill their 64-element boxes.

TMA zero-fills the parts of a box outside the matrix and the epilogue clips at M and N, so
every size is legal as long as the 8-element (16-byte) alignment holds: K % 8 for a row-major
A, M % 8 for a column-major A, N % 8 for a row-major B and for D, K % 8 for a column-major B.
Runs only on an SM90 GPU with the kernels built."""

import pytest
import torch

import cutlass_ops
from mm_testing import KERNEL_DTYPES, assert_matches_reference, check_forced, check_forced_padded_out, matrix

pytestmark = pytest.mark.gpu

NAMES = [f"handwritten_sm90_{p}_{l}_6_wgmma_tma" for p in ("f16", "bf16") for l in ("rr", "rc")]
FITTED = [f"handwritten_sm90_{p}_rc_6_wgmma_tma_n{n}" for p in ("f16", "bf16")
          for n in (128, 144, 160, 176, 192, 208, 224, 240)]
# A row-major B is loaded in 64-column boxes: of the fitted widths, 128 and 192.
FITTED += [f"handwritten_sm90_{p}_rr_6_wgmma_tma_n{n}" for p in ("f16", "bf16") for n in (128, 192)]
# The swapped builds: D^T = B^T A^T on tiles of 192-256 rows (in "rr" 144-256) by 128 columns, D
# stored transposed; in "rr" the kernel's A (the problem's B) is MN-major, loaded in two 64-column
# boxes.
SWAPPED = [f"handwritten_sm90_{p}_{l}_6_wgmma_tma_swapab_m{m}" for p in ("f16", "bf16")
           for l, rows in (("rc", (192, 208, 224, 240, 256)), ("rr", (144, 160, 176, 192, 208, 224, 240, 256)))
           for m in rows]
NAMES += FITTED + SWAPPED
# Column-major A ("cr", the weight gradient's layout, and "cc"): A MN-major for wgmma, loaded in
# two 64-row boxes. TMA needs its leading dimension (M) a multiple of 8.
COL_A = [f"handwritten_sm90_{p}_{l}_6_wgmma_tma" for p in ("f16", "bf16") for l in ("cr", "cc")]
# Their fitted and swapped tiles whose MN-major operands are whole 64-element boxes: "cr" (B
# row-major) at 128 and 192 columns, "cc" at 192-240; swapped (A, MN-major, is the kernel's B) at
# 192 and 256 rows, in both.
COL_A_FITTED = [f"handwritten_sm90_{p}_{l}_6_wgmma_tma_n{n}" for p in ("f16", "bf16")
                for l, widths in (("cr", (128, 192)), ("cc", (192, 208, 224, 240))) for n in widths]
COL_A_FITTED += [f"handwritten_sm90_{p}_{l}_6_wgmma_tma_swapab_m{m}"
                 for p in ("f16", "bf16") for l in ("cr", "cc") for m in (192, 256)]
COL_A += COL_A_FITTED

# (M, N, K): tiny, single tile, partial tiles in every dimension, M = 1, K below one k-tile,
# K not a multiple of the 64-wide k-tile, and more tiles than SMs (the persistent loop).
SHAPES = [(8, 8, 8), (1, 8, 64), (1, 264, 1000), (136, 8, 1000), (129, 264, 72), (97, 88, 8), (200, 520, 8),
          (128, 256, 64), (1000, 1000, 4096), (4104, 4112, 4120),
          # N ending inside, at and past the narrower last box of each fitted width; a wave and more
          (130, 200, 136), (130, 216, 136), (130, 232, 136), (130, 248, 136), (257, 440, 520), (777, 8192, 256),
          # the swapped builds' M the same way, and their persistent loop
          (200, 136, 136), (216, 136, 136), (232, 136, 136), (248, 136, 136), (2049, 776, 264)]


# M a multiple of 8 (A's leading dimension): below one box, inside the second box, partial tiles,
# K off the 64-wide k-tile and below it, and more tiles than SMs.
COL_A_SHAPES = [(8, 8, 8), (8, 264, 1000), (136, 8, 1000), (136, 264, 72), (96, 88, 8), (200, 520, 8),
                (128, 256, 64), (264, 440, 520), (776, 8192, 256), (1000, 1000, 4096), (4104, 4112, 4120),
                # N ending inside, at and past the narrower last box of each fitted width; M past
                # one and two swapped tiles; the swapped builds' persistent loop
                (136, 200, 136), (136, 216, 136), (136, 232, 136), (136, 248, 136), (200, 136, 136),
                (264, 136, 136), (2056, 776, 264)]


def built(name):
    """The KernelInfo of `name`, or a skip where it is not built or does not run on this GPU."""
    kernels = cutlass_ops.list_kernels(torch.cuda.get_device_capability()) if torch.cuda.is_available() else []
    kernel = next((k for k in kernels if k.name == name), None)
    if kernel is None:
        pytest.skip(f"{name} is not built or does not run on this GPU")
    return kernel


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("m,n,k", SHAPES)
def test_wgmma_kernel_matches_reference(name, m, n, k):
    check_forced(built(name), m, n, k)


@pytest.mark.parametrize("name", COL_A)
@pytest.mark.parametrize("m,n,k", COL_A_SHAPES)
def test_column_major_a_builds_match_reference(name, m, n, k):
    check_forced(built(name), m, n, k)


@pytest.mark.parametrize("name", NAMES + COL_A)
def test_wgmma_kernel_padded_leading_dims(name):
    """Leading dimensions larger than the extent (still 16-byte multiples) reach the tensor maps."""
    kernel = built(name)
    dtype = KERNEL_DTYPES[kernel.dtype]
    a = matrix(296, 264, dtype, kernel.layouts[0], ld_pad=8)
    b = matrix(264, 520, dtype, kernel.layouts[1], ld_pad=16)
    out = cutlass_ops.mm(a, b, kernel=name)
    assert_matches_reference(out, a, b, kernel.dtype, context=name)


@pytest.mark.parametrize("name", FITTED + SWAPPED + COL_A_FITTED)
@pytest.mark.parametrize("m,n", [(300, 440), (129, 1000), (64, 232), (232, 64), (440, 296)])
def test_fitted_builds_write_only_the_output(name, m, n):
    """out= a view whose rows are padded (the padding NaN): the last, narrower box of every tile
    is clipped at N (at M for the swapped builds, whose boxes are rows of D) and writes none of
    it. (A column-major A needs M a multiple of 8: there 300 and 129 rows become 304 and 136.)"""
    kernel = built(name)
    if kernel.layouts[0] == "c" and m % 8:
        m += 8 - m % 8
    check_forced_padded_out(kernel, m, n, 264, 8)
