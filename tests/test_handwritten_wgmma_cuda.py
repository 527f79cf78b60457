"""Step 6 of the hand-written ladder (csrc/handwritten/gemm_6_wgmma_tma_sm90.cu): TMA + wgmma,
warp-specialised and persistent, forced with kernel= on shapes that stress its edges; its
N-fitted builds (128 x 192-240 tiles), whose last box of D is narrower; and its swapped builds
(192-256 x 128 tiles), in every layout whose MN-major operands fill their 64-element boxes; and
split-K on the builds that offer it, whose last K slice of a tile sums the others' partials.

TMA zero-fills the parts of a box outside the matrix and the epilogue clips at M and N, so
every size is legal as long as the 8-element (16-byte) alignment holds: K % 8 for a row-major
A, M % 8 for a column-major A, N % 8 for a row-major B and for D, K % 8 for a column-major B.
Runs only on an SM90 GPU with the kernels built."""

import pytest
import torch

import cutlass_ops
from mm_testing import (KERNEL_DTYPES, assert_close_to_reference, assert_matches_reference, check_forced,
                        check_forced_padded_out, forced_operands, matrix, planned)

pytestmark = pytest.mark.gpu

# Builds the kernel table's set cover leaves out (csrc/handwritten/gemm_6_wgmma_tma_sm90.cu): f16's
# 208-column and swapped 256-row tiles, and both precisions' swapped 176-row ones.
NOT_BUILT = ("_f16_rc_6_wgmma_tma_n208", "_f16_cc_6_wgmma_tma_n208", "_6_wgmma_tma_swapab_m176",
             "_f16_rc_6_wgmma_tma_swapab_m256", "_f16_rr_6_wgmma_tma_swapab_m256", "_f16_cr_6_wgmma_tma_swapab_m256",
             "_f16_cc_6_wgmma_tma_swapab_m256")


def _built_only(names):
    return [name for name in names if not name.endswith(NOT_BUILT)]


NAMES = [f"handwritten_sm90_{p}_{l}_6_wgmma_tma" for p in ("f16", "bf16") for l in ("rr", "rc")]
FITTED = _built_only([f"handwritten_sm90_{p}_rc_6_wgmma_tma_n{n}" for p in ("f16", "bf16")
                      for n in (128, 144, 160, 176, 192, 208, 224, 240)])
# A row-major B is loaded in 64-column boxes: of the fitted widths, 128 and 192.
FITTED += [f"handwritten_sm90_{p}_rr_6_wgmma_tma_n{n}" for p in ("f16", "bf16") for n in (128, 192)]
# The swapped builds: D^T = B^T A^T on tiles of 192-256 rows (in "rr" 144-160 too) by 128 columns, D
# stored transposed; in "rr" the kernel's A (the problem's B) is MN-major, loaded in two 64-column
# boxes.
SWAPPED = _built_only([f"handwritten_sm90_{p}_{l}_6_wgmma_tma_swapab_m{m}" for p in ("f16", "bf16")
                       for l, rows in (("rc", (192, 208, 224, 240, 256)), ("rr", (144, 160, 192, 208, 224, 240, 256)))
                       for m in rows])
NAMES += FITTED + SWAPPED
# Column-major A ("cr", the weight gradient's layout, and "cc"): A MN-major for wgmma, loaded in
# two 64-row boxes. TMA needs its leading dimension (M) a multiple of 8.
COL_A = [f"handwritten_sm90_{p}_{l}_6_wgmma_tma" for p in ("f16", "bf16") for l in ("cr", "cc")]
# Their fitted and swapped tiles whose MN-major operands are whole 64-element boxes: "cr" (B
# row-major) at 128 and 192 columns, "cc" at 192-240; swapped (A, MN-major, is the kernel's B) at
# 192 and 256 rows, in both.
COL_A_FITTED = _built_only([f"handwritten_sm90_{p}_{l}_6_wgmma_tma_n{n}" for p in ("f16", "bf16")
                            for l, widths in (("cr", (128, 192)), ("cc", (192, 208, 224, 240))) for n in widths])
COL_A_FITTED += _built_only([f"handwritten_sm90_{p}_{l}_6_wgmma_tma_swapab_m{m}"
                             for p in ("f16", "bf16") for l in ("cr", "cc") for m in (192, 256)])
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


# Split-K (SliceSum::kLastSlice): the 128 x 256 step, the 128 x 128 tile and the swapped 256-row
# tile, in every layout they are built in.
SPLIT_K = _built_only([f"handwritten_sm90_{p}_{l}_6_wgmma_tma{tile}" for p in ("f16", "bf16")
                       for tile, layouts in (("", ("rr", "rc", "cr", "cc")), ("_n128", ("rc", "rr", "cr")),
                                             ("_swapab_m256", ("rc", "rr", "cr", "cc")))
                       for l in layouts])


@pytest.mark.parametrize("name", SPLIT_K)
@pytest.mark.parametrize("m,n,k,slices", [
    (776, 1024, 4096, 2),   # fewer tiles than SMs: the case split-K is for
    (104, 1024, 4096, 16),  # one tile row, 4 K tiles a slice
    (136, 264, 1000, 3),    # partial tiles everywhere, K off the 64-wide K tile: slices of 5, 5 and 6 K tiles
    (200, 520, 136, 3),     # one K tile a slice, the last one partial
    (264, 136, 6144, 64),   # 64 slices of 1-2 K tiles: more work units than SMs (the persistent loop)
])
def test_split_k_slices_sum_to_the_reference(name, m, n, k, slices):
    """Each slice count pinned: the partials meet in float32, as accurate as torch.mm, and the
    same bits on every run; a second B of the same shape (the workspace's arrival counts zeroed
    again: stale ones would let the last slice read the first call's partials) is right too."""
    kernel = built(name)
    assert "split-k" in kernel.decompositions, kernel
    a, b = forced_operands(kernel, m, n, k)
    with planned(a, b, name, "split-k", slices):
        plan = cutlass_ops.explain(a, b)
        assert (plan.kernel, plan.decomposition, plan.splits) == (name, "split-k", slices), plan
        out = cutlass_ops.mm(a, b)
        assert_matches_reference(out, a, b, kernel.dtype, context=f"{name} {m}x{n}x{k} in {slices} slices")
        for _ in range(3):
            assert torch.equal(out, cutlass_ops.mm(a, b)), f"{name} {m}x{n}x{k}: differs from run to run"
        b2 = forced_operands(kernel, m, n, k)[1]
        assert_matches_reference(cutlass_ops.mm(a, b2), a, b2, kernel.dtype, context=f"{name} {m}x{n}x{k} second B")


@pytest.mark.parametrize("name", [n for n in SPLIT_K if "_bf16_" in n])
def test_split_k_writes_only_the_output(name):
    """out= a view of padded rows (the padding NaN): only the last slice of a tile stores it, and
    only its M x N."""
    kernel = built(name)
    m, n, k = 136, 264, 2048
    a, b = forced_operands(kernel, m, n, k)
    base = torch.full((8 + m * (n + 24),), float("nan"), dtype=a.dtype, device="cuda")
    out = base.as_strided((m, n), (n + 24, 1), 8)
    with planned(a, b, name, "split-k", 4, out=out):
        plan = cutlass_ops.explain(a, b, out=out)
        assert (plan.kernel, plan.decomposition, plan.splits) == (name, "split-k", 4), plan
        cutlass_ops.mm(a, b, out=out)
    assert_matches_reference(out, a, b, kernel.dtype, context=f"{name} padded out")
    written = torch.zeros_like(base, dtype=torch.bool)
    written.as_strided((m, n), (n + 24, 1), 8).fill_(True)
    assert base[~written].isnan().all(), f"{name}: wrote outside the output"


@pytest.mark.parametrize("dtype", ["f16", "bf16"])
@pytest.mark.parametrize("tile", ["", "_n128"])
def test_split_k_fused_epilogue(dtype, tile):
    """The fused builds (linear's bias and activation) in split-K: the last slice applies the
    epilogue to the sum, once. One or two tiles and a long K: named, the build runs its cheapest
    decomposition, split-K (as its plain twin's plan shows; a call with an epilogue takes no
    tuning entry, so the slice count is the model's)."""
    import torch.nn.functional as F

    from cutlass_ops import _extension

    plain = f"handwritten_sm90_{dtype}_rc_6_wgmma_tma{tile}"
    name = plain + "_bias_act"
    kernel = built(name)
    assert "split-k" in kernel.decompositions, kernel
    m, n, k = 200, 136, 16000
    x, w = matrix(m, k, KERNEL_DTYPES[dtype]), matrix(n, k, KERNEL_DTYPES[dtype])
    bias = torch.randn(n, device="cuda", dtype=KERNEL_DTYPES[dtype])
    plan = cutlass_ops.explain(x, w.t(), kernel=plain)
    assert plan.decomposition == "split-k" and plan.splits > 1, plan
    cutlass_ops.reset_stats()
    got = _extension._C.mm_epilogue(x, w.t(), bias, 0.5, "gelu", name)
    assert cutlass_ops.stats()["kernels"] == {name: 1}, cutlass_ops.stats()["kernels"]
    z = 0.5 * (x.double() @ w.double().t()) + bias.double()
    assert_close_to_reference(got, F.gelu(torch.addmm(bias, x, w.t(), alpha=0.5)), F.gelu(z), f"{name} {plan.splits}")
    assert torch.equal(got, _extension._C.mm_epilogue(x, w.t(), bias, 0.5, "gelu", name))
