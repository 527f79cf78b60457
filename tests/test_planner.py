"""Dispatch decisions through the planning API (explain() on meta tensors): no GPU needed.

Meta tensors carry sizes, strides and storage offsets, so every layout, copy and alignment
decision the CUDA path makes can be checked here for any device preset.
"""

import pytest
import torch

import cutlass_ops
from cutlass_ops import DEVICE_PRESETS, DeviceSpec


def meta(rows, cols, dtype=torch.bfloat16, layout="r", ld=None, offset=0):
    """A rows x cols meta view; layout 'r' row-major, 'c' column-major; ld defaults to packed."""
    if layout == "r":
        ld = ld or max(cols, 1)
        return torch.empty(offset + rows * ld, dtype=dtype, device="meta").as_strided((rows, cols), (ld, 1), offset)
    ld = ld or max(rows, 1)
    return torch.empty(offset + cols * ld, dtype=dtype, device="meta").as_strided((rows, cols), (1, ld), offset)


def plan(a, b, out=None, device="h100", kernel=None):
    return cutlass_ops.explain(a, b, out=out, device=device, kernel=kernel)


def has_sm90():
    return any(k.family == "cutlass3x" for k in cutlass_ops.list_kernels())


needs_sm90 = pytest.mark.skipif(not has_sm90(), reason="built without the sm90a kernels")


def is_sm90_tma(kernel, dtype_layouts):
    """A TMA + WGMMA kernel for e.g. "bf16_rr": CUTLASS 3.x, or the hand-written ladder step 6."""
    return kernel.startswith(f"cutlass3x_sm90_{dtype_layouts}_") or kernel == f"handwritten_sm90_{dtype_layouts}_6_wgmma_tma"


def has_kernel(name):
    return any(k.name == name for k in cutlass_ops.list_kernels())


needs_ladder = pytest.mark.skipif(not has_kernel("handwritten_sm90_bf16_rr_6_wgmma_tma"),
                                  reason="built without the hand-written kernels")


@needs_sm90
@needs_ladder
@pytest.mark.parametrize("la,lb,expected", [
    # The hand-written TMA + WGMMA kernel (ladder step 6) takes row-major A...
    ("r", "r", "handwritten_sm90_bf16_rr_6_wgmma_tma"),
    ("r", "c", "handwritten_sm90_bf16_rc_6_wgmma_tma"),
    # ...CUTLASS's cooperative 128x256 kernel the other layouts.
    ("c", "r", "cutlass3x_sm90_bf16_cr_128x256x64_2x1x1_coop"),
    ("c", "c", "cutlass3x_sm90_bf16_cc_128x256x64_2x1x1_coop"),
])
def test_large_bf16_uses_the_128x256_wgmma_kernels(la, lb, expected):
    p = plan(meta(8192, 8192, layout=la), meta(8192, 8192, layout=lb))
    assert p.action == "kernel"
    assert p.kernel == expected, p
    assert not (p.copy_input or p.copy_mat2 or p.out_via_temp or p.transposed or p.staged or p.copy_b_kmajor)
    assert (p.a.align, p.b.align, p.out.align) == (8, 8, 8)


@needs_sm90
@pytest.mark.parametrize("m,n,expected,decomposition", [
    # 128x256 tiles: ceil(M/128) * ceil(N/256) against 132 SMs.
    ((2048, 2048, "pingpong", ("data-parallel", 1))),      # 16 * 8 = 128 tiles of 128x256; 256 of 128x128
    ((2048, 2304, "6_wgmma_tma", ("data-parallel", 1))),   # 16 * 9 = 144 tiles
    # 128x128 tiles: ceil(M/128) * ceil(N/128) against a quarter of the SMs (33).
    ((384, 1408, "pingpong", ("data-parallel", 1))),       # 3 * 11 = 33 tiles
    ((384, 1280, "coop_streamk", ("split-k", 3))),         # 3 * 10 = 30 tiles: K = 4096 is split 3 ways
    ((4096, 16, "coop_streamk", ("split-k", 3))),
    # Swap-AB 32x128 tiles: M <= 32 where the streaming kernel does not take it (see below).
    ((17, 8448, "swapab", ("data-parallel", 1))),          # 66 tiles: round(132 / 66 / 1.5) = 1
    ((32, 65536, "swapab", ("data-parallel", 1))),         # 512 tiles
    # 33-128 rows: the 64-row ping-pong tile whose width gives the most tiles within one wave,
    # from a quarter of a wave (33 tiles) or a K too short to split.
    ((33, 4096, "64x64x64_1x1x1_pingpong", ("data-parallel", 1))),    # 64 tiles
    ((128, 4096, "64x64x64_1x1x1_pingpong", ("data-parallel", 1))),   # 2 * 64 = 128 tiles
    ((128, 4224, "64x64x64_1x1x1_pingpong", ("data-parallel", 1))),   # 2 * 66 = 132 tiles
    ((128, 4352, "64x128x64_1x1x1_pingpong", ("data-parallel", 1))),  # 2 * 68 = 136 of 64x64: 2 * 34 of 64x128
    ((128, 8448, "64x128x64_1x1x1_pingpong", ("data-parallel", 1))),  # 2 * 66 = 132 of 64x128
    ((128, 8576, "64x256x64_1x1x1_pingpong", ("data-parallel", 1))),  # 2 * 67 = 134 of 64x128: 2 * 34 of 64x256
    ((64, 16896, "64x128x64_1x1x1_pingpong", ("data-parallel", 1))),  # 132 tiles of 64x128
    ((64, 32768, "64x256x64_1x1x1_pingpong", ("data-parallel", 1))),  # 256 of 64x128: 128 of 64x256
    ((128, 16896, "64x256x64_1x1x1_pingpong", ("data-parallel", 1))),  # 2 * 66 = 132 of 64x256
    ((128, 17152, "128x128x64_1x1x1_pingpong", ("data-parallel", 1))),  # 2 * 67 of 64x256: past a wave
    ((64, 2112, "64x64x64_1x1x1_pingpong", ("data-parallel", 1))),   # 33 tiles: a quarter of a wave
    ((64, 2048, "swapab", ("split-k", 3))),                # 32 tiles, under a quarter: swap-AB, K split
    ((129, 4096, "pingpong", ("data-parallel", 1))),       # M > 128: 2 * 32 = 64 tiles of 128x128
])
def test_heuristic_thresholds_16bit_sm90(m, n, expected, decomposition):
    if expected == "6_wgmma_tma" and not has_kernel("handwritten_sm90_bf16_rr_6_wgmma_tma"):
        expected = "2x1x1_coop"  # a build without the hand-written kernels: CUTLASS's 128x256
    p = plan(meta(m, 4096), meta(4096, n))
    assert p.kernel.endswith(expected), p
    assert (p.decomposition, p.splits) == decomposition, p


@pytest.mark.skipif(not has_kernel("handwritten_sm80_bf16_rr_skinny_m_mma"), reason="built without the hand-written kernels")
@pytest.mark.parametrize("m,n,k,streams", [
    # M <= 16, K >= 1024, and N / 32 column blocks within [132 / 2, 2 * 132] = [66, 264];
    # M <= 32 within [66, 132].
    (1, 4096, 4096, True),
    (16, 4096, 4096, True),
    (17, 4096, 4096, True),
    (32, 4224, 4096, True),    # 132 blocks
    (32, 4256, 4096, False),   # 133 blocks: past one per SM at 32 rows
    (33, 4096, 4096, False),   # M > 32: swap-AB
    (16, 2112, 4096, True),    # 66 blocks
    (16, 2080, 4096, False),   # 65 blocks: under half a wave
    (16, 8448, 4096, True),    # 264 blocks
    (16, 8480, 4096, False),   # 265 blocks: past two per SM
    (16, 4096, 1024, True),
    (16, 4096, 1016, False),   # K < 1024
])
@pytest.mark.parametrize("lb", ["r", "c"])
def test_few_16bit_rows_stream_b_on_the_mma_kernel(m, n, k, streams, lb):
    p = plan(meta(m, k), meta(k, n, layout=lb))
    assert p.action == "kernel" and not p.transposed, p
    if streams:
        assert p.kernel == f"handwritten_sm80_bf16_r{lb}_skinny_m_mma", p
        assert "streaming" in p.reason and (p.decomposition, p.splits) == ("data-parallel", 1), p
    else:
        assert "skinny" not in p.kernel, p
    assert not (p.copy_input or p.copy_mat2 or p.out_via_temp or p.staged or p.copy_b_kmajor), p


@pytest.mark.skipif(not has_kernel("handwritten_sm80_bf16_rr_skinny_m_mma"), reason="built without the hand-written kernels")
def test_the_mma_streaming_kernel_takes_at_most_64_rows():
    """Its KernelInfo says so (max_m), so the planner refuses it by name above that, forced or
    from a tuning table, instead of the kernel failing at launch."""
    (k,) = [k for k in cutlass_ops.list_kernels() if k.name == "handwritten_sm80_bf16_rr_skinny_m_mma"]
    assert k.max_m == 64
    assert plan(meta(64, 256), meta(256, 256), kernel=k.name).kernel == k.name
    with pytest.raises(ValueError, match=r"takes at most 64 rows \(M\), the problem has M = 65"):
        plan(meta(65, 256), meta(256, 256), kernel=k.name)
    assert all(x.max_m is None for x in cutlass_ops.list_kernels() if "skinny_m_mma" not in x.name)


@needs_sm90
def test_swap_ab_is_not_a_copy():
    """Swap-AB computes D^T = B^T A^T inside the kernel: the plan reads the operands in place."""
    # (N = 8192: 256 blocks of 32 columns, more than the streaming kernel takes at 24 rows.)
    p = plan(meta(24, 4096), meta(4096, 8192, layout="c"))
    assert p.kernel == "cutlass3x_sm90_bf16_rc_32x128x128_1x1x1_coop_streamk_swapab", p
    assert not (p.copy_input or p.copy_mat2 or p.out_via_temp or p.transposed or p.staged or p.copy_b_kmajor)
    assert p.problem == (24, 8192, 4096)
    # Column-major A has no swap-AB kernel: the ladder below it decides (32 tiles of 128x128
    # and a long K: the split-K cooperative 128x128 kernel).
    q = plan(meta(8, 4096, layout="c"), meta(4096, 4096))
    assert q.kernel == "cutlass3x_sm90_bf16_cr_128x128x64_1x1x1_coop_streamk", q
    assert "swap-AB" not in q.reason and "split-K" in q.reason, q


@needs_sm90
@pytest.mark.parametrize("k,kernel,splits", [
    (960, "pingpong", 1),        # 15 K tiles of 64: too short to split, so ping-pong
    (1024, "coop_streamk", 2),   # 16 K tiles: 2 slices of 8
    (8192, "coop_streamk", 16),  # 4 tiles on 132 SMs: round(132 / 4 / 1.5) = 22, capped at 16
])
def test_split_k_needs_a_long_k(k, kernel, splits):
    # (K <= 512 would be a tiny problem: the SM80 64x64 kernel, tested below.)
    p = plan(meta(256, k), meta(k, 256))
    assert p.kernel.endswith(kernel), p
    assert p.splits == splits and p.decomposition == ("split-k" if splits > 1 else "data-parallel"), p


@needs_sm90
@pytest.mark.parametrize("m,n,k,expected", [
    # F.linear's layout below a wave of 128x128 tiles (132 SMs): over 128 rows with three
    # quarters of a wave (99 tiles), cooperative 128x128; else, from 33 rows, the 64-row
    # ping-pong width with the most tiles in one wave, from a quarter of a wave (33) or a K too
    # short to split; else the SM80 kernel with split-K.
    (128, 4096, 4096, "cutlass3x_sm90_tf32_rc_64x64x32_1x1x1_pingpong"),     # 128 tiles of 64x64
    (128, 6144, 4096, "cutlass3x_sm90_tf32_rc_64x128x32_1x1x1_pingpong"),    # 96 of 64x128
    (128, 14336, 4096, "cutlass3x_sm90_tf32_rc_64x256x32_1x1x1_pingpong"),   # 112 of 64x256
    (33, 4096, 4096, "cutlass3x_sm90_tf32_rc_64x64x32_1x1x1_pingpong"),      # 64 tiles
    (1024, 1024, 1024, "cutlass3x_sm90_tf32_rc_64x128x32_1x1x1_pingpong"),   # 64 of 128x128: 128 of 64x128
    (512, 4096, 4096, "cutlass3x_sm90_tf32_rc_128x128x32_1x1x1_coop"),       # 128 of 128x128
    (768, 2176, 4096, "cutlass3x_sm90_tf32_rc_128x128x32_1x1x1_coop"),       # 6 * 17 = 102 of 128x128
    (768, 2048, 4096, "cutlass3x_sm90_tf32_rc_64x256x32_1x1x1_pingpong"),    # 96 of 128x128: 96 of 64x256
    (32, 4096, 4096, "cutlass2x_sm80_tf32_rc_128x128x32_3s_a4"),             # 32 rows
    (64, 2048, 4096, "cutlass2x_sm80_tf32_rc_128x128x32_3s_a4"),             # 32 tiles and a long K
])
def test_tf32_rc_below_a_wave(m, n, k, expected, tf32_matmul):
    tf32_matmul(True)
    p = plan(meta(m, k, torch.float32), meta(k, n, torch.float32, layout="c"))
    assert p.kernel == expected, p
    assert not (p.copy_b_kmajor or p.staged or p.copy_input or p.copy_mat2 or p.out_via_temp), p


@needs_sm90
def test_tf32_below_a_wave_uses_sm80_split_k():
    previous = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = True
    try:
        # Few tiles with a long K: the SM80 kernel with split-K.
        p = plan(meta(64, 4096, torch.float32), meta(4096, 2048, torch.float32, layout="c"))
        assert p.kernel == "cutlass2x_sm80_tf32_rc_128x128x32_3s_a4" and p.decomposition == "split-k", p
        # A wave of 128x128 tiles (16 * 16 = 256) but not of 128x256 (16 * 8 = 128): 128x128x32.
        p = plan(meta(2048, 4096, torch.float32), meta(4096, 2048, torch.float32, layout="c"))
        assert p.kernel == "cutlass3x_sm90_tf32_rc_128x128x32_1x1x1_coop", p
        p = plan(meta(4096, 4096, torch.float32), meta(4096, 4096, torch.float32, layout="c"))
        assert p.kernel == "cutlass3x_sm90_tf32_rc_128x256x32_2x1x1_coop", p
        assert not (p.copy_b_kmajor or p.staged or p.copy_mat2), p
    finally:
        torch.backends.cuda.matmul.allow_tf32 = previous


@needs_sm90
def test_large_row_major_tf32_runs_swapped(tf32_matmul):
    """TF32 WGMMA reads K-major operands only, and a row-major B is N-major: row-major x
    row-major TF32 runs the swap-AB kernels (D^T = B^T A^T), which read B as it lies."""
    tf32_matmul(True)
    f32 = torch.float32
    # 16 x 16 = 256 tiles of 256x128 (>= 132): the 256x128 swap-AB tile.
    p = plan(meta(4096, 4096, f32), meta(4096, 4096, f32))
    assert p.kernel == "cutlass3x_sm90_tf32_rr_256x128x32_1x2x1_coop_swapab", p
    assert not (p.copy_b_kmajor or p.staged or p.copy_input or p.copy_mat2 or p.out_via_temp or p.transposed), p
    assert "swap-AB" in p.reason, p
    # The 256x128 tile from half a wave of its tiles: 1024 x 2176 is 4 x 17 = 68 tiles (>= 66),
    # 1024 x 2048 is 4 x 16 = 64. Below that, over 128 rows with K >= 4096, the same tile on the
    # stream-K scheduler, K split to fill a wave of CTAs (64 tiles: 2 slices; 32: 4); with a
    # shorter K, or up to 128 rows, the 128x128 stream-K tile, split-K for few tiles.
    assert plan(meta(1024, 4096, f32), meta(4096, 2176, f32)).kernel.endswith("tf32_rr_256x128x32_1x2x1_coop_swapab")
    wide = "cutlass3x_sm90_tf32_rr_256x128x32_1x1x1_coop_streamk_swapab"
    narrow = "cutlass3x_sm90_tf32_rr_128x128x32_1x1x1_coop_streamk_swapab"
    for m, n, k, kernel, decomposition in [
        (1024, 2048, 4096, wide, ("split-k", 2)),
        (512, 4096, 4096, wide, ("split-k", 2)),
        (512, 4096, 14336, wide, ("split-k", 2)),
        (256, 4096, 4096, wide, ("split-k", 4)),
        (129, 4096, 4096, wide, ("split-k", 4)),
        (1024, 2048, 2048, narrow, ("data-parallel", 1)),  # K below 4096
        (511, 1024, 1024, narrow, ("split-k", 3)),  # under 512 rows B is not copied; 32 tiles: 3 slices
        (128, 4096, 4096, narrow, ("split-k", 3)),  # 32 tiles of 128x128: 3 K slices
    ]:
        p = plan(meta(m, k, f32), meta(k, n, f32))
        assert p.kernel == kernel and (p.decomposition, p.splits) == decomposition, (m, n, k, p)
        assert not p.copy_b_kmajor, p
    # 33-64 rows with a quarter to one wave of 64x64 tiles (33-132 of them): the swapped 64x64
    # ping-pong tile, whole K.
    for m, n, swap_64 in [(64, 4096, True), (33, 8448, True), (64, 2112, True), (32, 4096, False),
                          (65, 4096, False), (64, 8512, False), (64, 2048, False)]:
        p = plan(meta(m, 4096, f32), meta(4096, n, f32))
        assert (p.kernel == "cutlass3x_sm90_tf32_rr_64x64x32_1x1x1_pingpong_swapab") == swap_64, (m, n, p)
    # Before Hopper: the SM80 TF32 kernel reads B in place.
    a100 = plan(meta(4096, 4096, f32), meta(4096, 4096, f32), device="a100")
    assert not a100.copy_b_kmajor and a100.kernel.startswith("cutlass2x_sm80_tf32_rr_"), a100


@needs_sm90
def test_row_major_tf32_from_8192_rows_copies_b_kmajor(tf32_matmul):
    """From 8192 rows the K-major copy of B (K x N moved, against M x N x K of work) costs less
    than the swap-AB kernels lose to the "rc" ones: B is copied for the SM90 "rc" kernel."""
    tf32_matmul(True)
    f32 = torch.float32
    p = plan(meta(8192, 4096, f32), meta(4096, 4096, f32))
    assert p.copy_b_kmajor and p.kernel == "cutlass3x_sm90_tf32_rc_128x256x32_2x1x1_coop", p
    assert not (p.staged or p.copy_input or p.copy_mat2 or p.transposed or p.out_via_temp), p
    assert "8192 rows" in p.reason, p
    p = plan(meta(8191, 4096, f32), meta(4096, 4096, f32))
    assert not p.copy_b_kmajor and p.kernel == "cutlass3x_sm90_tf32_rr_256x128x32_1x2x1_coop_swapab", p
    # A column-major out turns the problem around (D^T = B^T A^T): the kernel's B is A^T,
    # already K-major, so nothing is copied.
    out = meta(4096, 8192, f32).t()
    p = plan(meta(8192, 4096, f32), meta(4096, 4096, f32), out=out)
    assert p.transposed and not p.copy_b_kmajor, p
    # Not before Hopper (SM80's TF32 kernel reads a row-major B) nor without TF32.
    a100 = plan(meta(8192, 4096, f32), meta(4096, 4096, f32), device="a100")
    assert not a100.copy_b_kmajor and a100.kernel.startswith("cutlass2x_sm80_tf32_rr_"), a100
    tf32_matmul(False)
    assert not plan(meta(8192, 4096, f32), meta(4096, 4096, f32)).copy_b_kmajor


@needs_sm90
def test_small_row_major_tf32_copies_b_kmajor(tf32_matmul):
    """Small row-major x row-major TF32 problems are latency-bound: from 512 rows, with a B of
    at most 2^20 elements (4 MiB), the K-major copy costs a few microseconds and the "rc"
    kernels beat the swap-AB ones by more (512^3, 1024^3 on an H100)."""
    tf32_matmul(True)
    f32 = torch.float32
    for m, n, k, copied in [(512, 512, 512, True), (1024, 1024, 1024, True), (4096, 1024, 1024, True),
                            (512, 4096, 256, True), (511, 512, 512, False), (1024, 1024, 1032, False),
                            (1024, 1028, 1024, False), (2048, 2048, 2048, False)]:
        p = plan(meta(m, k, f32), meta(k, n, f32))
        assert p.copy_b_kmajor == copied, (m, n, k, p)
        if copied:
            assert p.kernel.startswith("cutlass3x_sm90_tf32_rc_") and "4 MiB" in p.reason, (m, n, k, p)
            assert not (p.staged or p.copy_input or p.copy_mat2 or p.transposed or p.out_via_temp), p
        else:
            assert p.kernel.startswith("cutlass3x_sm90_tf32_rr_") and p.kernel.endswith("swapab"), (m, n, k, p)
    # Column-major A ("cr") is not covered by the rule (not measured there), nor other precisions.
    assert not plan(meta(1024, 1024, f32, layout="c"), meta(1024, 1024, f32)).copy_b_kmajor
    assert not plan(meta(1024, 1024, torch.bfloat16), meta(1024, 1024, torch.bfloat16)).copy_b_kmajor
    tf32_matmul(False)
    assert not plan(meta(1024, 1024, f32), meta(1024, 1024, f32)).copy_b_kmajor


@needs_sm90
def test_column_major_a_row_major_b_tf32_copies_b_for_the_cc_kernel(tf32_matmul):
    """No SM90 "cr" TF32 kernel is built (CUTLASS's in-smem transpose of B made it slower than
    the copy): a large one copies B K-major for the "cc" kernel, a small one runs SM80's."""
    tf32_matmul(True)
    f32 = torch.float32
    p = plan(meta(4096, 4096, f32, layout="c"), meta(4096, 4096, f32))
    assert p.copy_b_kmajor and p.kernel == "cutlass3x_sm90_tf32_cc_128x256x32_2x1x1_coop", p
    assert not (p.staged or p.copy_input or p.copy_mat2 or p.transposed), p
    small = plan(meta(128, 4096, f32, layout="c"), meta(4096, 4096, f32))
    assert not small.copy_b_kmajor and small.kernel.startswith("cutlass2x_sm80_tf32_cr_"), small
    # Both sides of the copy's break-even, measured (H100): 2048^3, whose copy would feed the
    # slower 128x128 kernel, ran 131 us with the copy against 101 on SM80's kernel; 3072^3,
    # on the 128x256 one, 297 against 364.
    mid = plan(meta(2048, 2048, f32, layout="c"), meta(2048, 2048, f32))
    assert not mid.copy_b_kmajor and mid.kernel.startswith("cutlass2x_sm80_tf32_cr_"), mid
    large = plan(meta(3072, 3072, f32, layout="c"), meta(3072, 3072, f32))
    assert large.copy_b_kmajor and large.kernel == "cutlass3x_sm90_tf32_cc_128x256x32_2x1x1_coop", large
    assert not any(k.name.startswith("cutlass3x_sm90_tf32_cr_") for k in cutlass_ops.list_kernels())


@needs_sm90
def test_misaligned_row_major_tf32_b_is_copied_k_major(tf32_matmul):
    """A row-major B whose leading dim breaks TMA's 16-byte rule keeps every SM90 kernel out;
    one K-major copy of B fixes both its alignment and its layout for the SM90 "rc" kernel,
    while A and out are used in place."""
    tf32_matmul(True)
    b = meta(4096, 4096, torch.float32, ld=4097)
    p = plan(meta(4096, 4096, torch.float32), b)
    assert p.copy_b_kmajor and p.kernel == "cutlass3x_sm90_tf32_rc_128x256x32_2x1x1_coop", p
    assert not (p.staged or p.copy_input or p.copy_mat2 or p.out_via_temp or p.transposed), p
    assert (p.b.layout, p.b.ld, p.a.layout, p.a.ld) == ("col", 4096, "row", 4096)
    assert "K-major" in str(p)
    # Too small for the copy to pay: the SM80 TF32 kernel with 1-element alignment in place.
    small = plan(meta(128, 4096, torch.float32), meta(4096, 4096, torch.float32, ld=4097))
    assert not small.copy_b_kmajor and small.kernel.startswith("cutlass2x_sm80_tf32_rr_"), small


@pytest.mark.parametrize("m,n,k", [(0, 64, 64), (64, 0, 64), (64, 64, 0), (0, 0, 0)])
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float32, torch.float64])
def test_empty_problems_plan_without_dividing_by_zero(m, n, k, dtype):
    assert plan(meta(m, k, dtype), meta(k, n, dtype)).action in ("empty", "zeros")


def test_split_k_for_long_k_on_the_simt_kernel():
    # IEEE fp32 off Hopper: 2 x 2 tiles of 128x128 on 108 SMs, 16384 K tiles of 8: 16 slices (the cap).
    p = plan(meta(256, 131072, torch.float32), meta(131072, 256, torch.float32), device="a100")
    assert p.kernel.startswith("cutlass2x_sm80_f32_"), p
    assert (p.decomposition, p.splits) == ("split-k", 16), p
    # A full wave of tiles: no split.
    p = plan(meta(4096, 4096, torch.float32), meta(4096, 4096, torch.float32), device="a100")
    assert (p.decomposition, p.splits) == ("data-parallel", 1), p


@pytest.mark.skipif(not has_kernel("handwritten_sm80_f32_rr_3_register_blocked"),
                    reason="built without the hand-written kernels")
@pytest.mark.parametrize("device", ["h100", "a100"])
def test_large_ieee_fp32_uses_ladder_step_3_where_it_applies(device):
    """A wave of 128x128 tiles, row-major, 4-aligned: the hand-written register-blocked kernel
    (measured faster than CUTLASS's SIMT kernel there); anything else: CUTLASS SIMT. K = 64:
    under the K from which Hopper runs float32 on DMMA (the tests below)."""
    sms = DEVICE_PRESETS[device].sm_count
    side = 128 * (int(sms ** 0.5) + 1)  # a square with at least one tile per SM
    p = plan(meta(side, 64, torch.float32), meta(64, side, torch.float32), device=device)
    assert p.kernel == "handwritten_sm80_f32_rr_3_register_blocked" and p.decomposition == "data-parallel", p
    for a, b in [
        (meta(side, 64, torch.float32), meta(64, side, torch.float32, layout="c")),  # B column-major
        (meta(side, 63, torch.float32), meta(63, side, torch.float32)),              # K not a multiple of 4
        (meta(256, 64, torch.float32), meta(64, 256, torch.float32)),                # 4 tiles
    ]:
        q = plan(a, b, device=device)
        assert q.kernel.startswith("cutlass2x_sm80_f32_") and "simt" in q.kernel, q


DMMA_128, DMMA_64, DMMA_32 = ("dmma16x8x8_128x128x32_3s_streamk_a4", "dmma16x8x8_64x64x32_4s_streamk_a4",
                              "dmma16x8x8_32x64x32_5s_streamk_a4")


@pytest.mark.skipif(not has_kernel(f"cutlass2x_sm90_f32_rr_{DMMA_128}"), reason="built without the sm90a kernels")
@pytest.mark.parametrize("m,n,k,expected", [
    # heuristic.cpp, kF32: from K = 128, 16-byte aligned operands widen in registers; 128x128
    # over 64 rows and columns with K >= 2048 or 3/4 of a wave of its tiles (99 of 132), else
    # 64x64 for 33-64 rows, <= 64 columns or 3/4 of a wave of 64x64 tiles, else 32x64; the
    # streaming kernel up to 4 rows. All on the stream-K kernel; operands off 16 bytes (A's
    # leading dim K + 1 or M + 1) on the same tile's 4-byte-copy kernel.
    (2048, 2048, 4096, DMMA_128),
    (128, 4096, 4096, DMMA_128),        # 32 tiles, but K >= 2048
    (4096, 4096, 512, DMMA_128),        # 1024 tiles
    (1024, 1024, 1024, DMMA_64),        # 64 tiles of 128x128, 256 of 64x64
    (64, 4096, 4096, DMMA_64),
    (16384, 16, 16384, DMMA_64),        # 16 columns
    (33, 14336, 4096, DMMA_64),
    (512, 512, 512, DMMA_32),           # 64 tiles of 64x64
    (32, 4096, 4096, DMMA_32),
    (5, 4096, 4096, DMMA_32),
    (4, 4096, 4096, "skinny_m"),
    (4096, 4096, 64, None),             # K = 64: the CUDA cores
])
@pytest.mark.parametrize("layouts", ["rr", "rc", "cr", "cc"])
@pytest.mark.parametrize("aligned", [True, False])
def test_ieee_fp32_widens_in_registers_on_hopper(m, n, k, expected, layouts, aligned):
    f32 = torch.float32
    a = meta(m, k, f32, layout=layouts[0], ld=None if aligned else (k if layouts[0] == "r" else m) + 1)
    p = plan(a, meta(k, n, f32, layout=layouts[1]))
    if expected == "skinny_m" and layouts[0] == "c":
        expected = DMMA_32  # the streaming kernel reads a row-major A only
    if expected is None:
        assert "dmma" not in p.kernel, p
    elif expected == "skinny_m":
        assert p.kernel.startswith("handwritten_sm80_f32_") and p.kernel.endswith("skinny_m"), p
    else:
        # A column-major A of 33 or 5 rows has a leading dim off 16 bytes whatever the padding.
        copies = 4 if aligned and (layouts[0] == "r" or m % 4 == 0) else 1
        assert p.kernel == f"cutlass2x_sm90_f32_{layouts}_{expected[:-1]}{copies}", p
        assert p.decomposition == "stream-k" and not (p.staged or p.copy_input or p.copy_mat2), p
    # Not on an A100: the kernels are built for sm_90a only.
    assert "dmma" not in plan(a, meta(k, n, f32), device="a100").kernel


@pytest.mark.skipif(not has_kernel("handwritten_sm80_f32_rr_skinny_m"), reason="built without the hand-written kernels")
@pytest.mark.parametrize("tf32", [False, True])
@pytest.mark.parametrize("device", ["h100", "a100"])
def test_few_row_float32_streams_b_on_the_skinny_kernel(tf32, device, tf32_matmul):
    tf32_matmul(tf32)
    dtype = "tf32" if tf32 else "f32"
    # TF32 on Hopper takes the tensor-core streaming kernel (test below) where it was measured.
    streaming = "skinny_m_mma" if tf32 and device == "h100" and has_kernel("handwritten_sm80_tf32_rr_skinny_m_mma") \
        else "skinny_m"
    # IEEE float32 on Hopper: up to 4 rows (then DMMA, test_ieee_fp32_widens_in_registers_on_hopper).
    most = 4 if dtype == "f32" and device == "h100" and has_kernel(f"cutlass2x_sm90_f32_rr_{DMMA_32}") else 16
    for m, lb in [(1, "r"), (most, "r"), (1, "c"), (most, "c")]:
        p = plan(meta(m, 4096, torch.float32), meta(4096, 4096, torch.float32, layout=lb), device=device)
        assert p.kernel == f"handwritten_sm80_{dtype}_r{lb}_{streaming}", p
    p = plan(meta(most + 1, 4096, torch.float32), meta(4096, 4096, torch.float32), device=device)
    assert "skinny" not in p.kernel, p


@pytest.mark.skipif(not has_kernel("handwritten_sm80_tf32_rr_skinny_m_mma"), reason="built without the hand-written kernels")
@pytest.mark.parametrize("m,n,k,mma", [
    # M <= 16, K >= 1024, and N / 32 column blocks within [132 / 2, 4 * 132] = [66, 528].
    (1, 4096, 4096, True),
    (16, 4096, 4096, True),
    (16, 2112, 4096, True),     # 66 blocks
    (16, 2080, 4096, False),    # 65: under half a wave
    (16, 16896, 4096, True),    # 528 blocks
    (16, 16928, 4096, False),   # 529: past four per SM
    (16, 4096, 1024, True),
    (16, 4096, 1020, False),    # K < 1024
])
@pytest.mark.parametrize("lb", ["r", "c"])
def test_few_tf32_rows_stream_b_on_the_mma_kernel(m, n, k, mma, lb, tf32_matmul):
    """On Hopper, TF32 with up to 16 rows streams B through the tensor-core kernel where it was
    measured faster (long K, half a wave to four waves of its blocks); elsewhere, and before
    Hopper, the CUDA-core streaming kernel; from 17 rows neither."""
    tf32_matmul(True)
    f32 = torch.float32
    p = plan(meta(m, k, f32), meta(k, n, f32, layout=lb))
    assert p.action == "kernel" and not p.transposed, p
    expected = "skinny_m_mma" if mma else "skinny_m"
    assert p.kernel == f"handwritten_sm80_tf32_r{lb}_{expected}", p
    assert (p.decomposition, p.splits) == ("data-parallel", 1), p
    assert not (p.copy_input or p.copy_mat2 or p.out_via_temp or p.staged or p.copy_b_kmajor), p
    a100 = plan(meta(m, k, f32), meta(k, n, f32, layout=lb), device="a100")
    assert a100.kernel == f"handwritten_sm80_tf32_r{lb}_skinny_m", a100
    assert "skinny" not in plan(meta(17, k, f32), meta(k, n, f32, layout=lb)).kernel


@pytest.mark.skipif(not has_kernel("handwritten_sm80_3xtf32_rr_skinny_m"), reason="built without the hand-written kernels")
def test_few_row_3xtf32_streams_b_on_the_skinny_kernel():
    a, b = meta(8, 4096, torch.float32), meta(4096, 4096, torch.float32)
    cutlass_ops.set_fp32_mode("3xtf32")
    try:
        assert plan(meta(4, 4096, torch.float32), b).kernel == "handwritten_sm80_3xtf32_rr_skinny_m"
        assert plan(a, b, device="a100").kernel == "handwritten_sm80_3xtf32_rr_skinny_m"
        if has_kernel("cutlass2x_sm90_f32_rr_dmma16x8x8_32x64x32_5s_streamk_a4"):
            # From 5 rows on Hopper, IEEE fp32 on DMMA (faster and more accurate).
            p = plan(a, b)
            assert p.dtype == "f32" and "dmma16x8x8" in p.kernel, p
        # Past 16 rows the tile kernels: SM80's 3xTF32 one; on Hopper, at 64 rows, IEEE fp32
        # (the presplit kernel needs 256, and IEEE was faster than SM80's kernel there).
        a100 = plan(meta(64, 4096, torch.float32), b, device="a100")
        assert a100.kernel == "cutlass2x_sm80_3xtf32_rr_128x128x32_3s_a4", a100
        if has_sm90():
            p = plan(meta(64, 4096, torch.float32), b)
            assert p.dtype == "f32" and "_f32_" in p.kernel, p
    finally:
        cutlass_ops.set_fp32_mode("ieee")


@needs_sm90
@pytest.mark.parametrize("m,n,tile", [
    # float64 on Hopper: the largest DMMA tile with three quarters of a wave of tiles (99 of
    # 132 SMs): 128x128 (over 64 rows), 64x64 (over 32 rows; at most this up to 64 rows), else
    # 32x64; 32x64 up to 32 rows.
    (1, 4096, "32x64x16"),
    (32, 128256, "32x64x16"),
    (33, 4096, "64x64x16"),
    (64, 128256, "64x64x16"),
    (65, 128256, "128x128x16"),    # 1002 tiles of 128x128
    (128, 4096, "64x64x16"),       # 32 tiles of 128x128, 128 of 64x64
    (1152, 1408, "128x128x16"),    # 9 * 11 = 99 tiles of 128x128
    (1152, 1280, "64x64x16"),      # 90 tiles of 128x128
    (640, 640, "64x64x16"),        # 100 tiles of 64x64
    (576, 640, "32x64x16"),        # 90 tiles of 64x64
    (256, 256, "32x64x16"),
])
def test_float64_tiles_on_hopper(m, n, tile):
    p = plan(meta(m, 1024, torch.float64), meta(1024, n, torch.float64))
    assert p.kernel.startswith("cutlass2x_sm90_f64_rr_dmma16x8x4_" + tile), p


@needs_sm90
@pytest.mark.parametrize("m,n,k,splits", [
    # float64's small DMMA tiles split K below one tile per SM (132), by waves of two CTAs per
    # SM (heuristic.cpp, wave_split_k_slices): the fewest of 2, 4, 8, 16 slices that minimise
    # waves x K per slice, each at least 512 deep.
    (1, 4096, 4096, 4),        # 64 tiles of 32x64: 4 slices, 256 CTAs (8 would take two waves)
    (128, 4096, 4096, 2),      # 128 tiles of 64x64: 2 slices, 256 CTAs
    (16, 8448, 4096, 1),       # 132 tiles: no split
    (16, 4096, 1024, 2),       # 64 tiles, slices of 512
    (16, 4096, 1023, 1),       # slices of 511: too shallow
])
def test_float64_small_tiles_split_k_by_waves(m, n, k, splits):
    p = plan(meta(m, k, torch.float64), meta(k, n, torch.float64))
    assert "_f64_" in p.kernel and p.splits == splits, p
    assert p.decomposition == ("split-k" if splits > 1 else "data-parallel"), p


@needs_sm90
@pytest.mark.parametrize("m,n,k,stream_k", [
    # float64 on Hopper, over 64 rows and K >= 2048: 128x128 on the stream-K kernel where whole
    # tiles leave the last wave under 90% full.
    (128, 14336, 4096, True),     # 112 tiles of 128x128: 85% of 132 SMs
    (512, 6144, 4096, True),      # 192 tiles: 1.45 waves
    (128, 6144, 4096, True),      # 48 tiles (>= 33), and 64x64's 192 run 1.45 waves
    (2048, 2048, 2048, False),    # 256 tiles: 97%
    (128, 14336, 1024, False),    # K too short
    (64, 14336, 4096, False),     # 64 rows: 64x64
    (128, 4096, 4096, False),     # 32 tiles: under a quarter of a wave, 64x64's 128 fill one
    (1024, 1024, 4096, False),    # 64 tiles of 128x128; 64x64's 256 fill 97% of two waves
])
def test_float64_stream_k_on_ragged_waves(m, n, k, stream_k):
    p = plan(meta(m, k, torch.float64), meta(k, n, torch.float64))
    if stream_k:
        assert p.kernel == "cutlass2x_sm90_f64_rr_dmma16x8x4_128x128x16_3s_streamk_a1", p
        assert p.decomposition == "stream-k", p
    else:
        assert "_streamk_" not in p.kernel and p.decomposition != "stream-k", p


# An SM80-class GPU with the H100's 132 SMs: float64 keeps its 128x128 DMMA tile there, so the
# split rule is checked on one tile size (Hopper takes smaller tiles below a wave).
SM80_132 = DeviceSpec("an SM80 GPU with 132 SMs", (8, 0), 132, 166912)


@pytest.mark.parametrize("m,k,splits", [
    # splits = min(round(SMs / tiles / 1.5), K tiles / 8, 16), at least 2, else no split.
    # float64's DMMA kernel, 128x128x16 tiles, n = 256.
    (256, 511, 4),      # 4 tiles, 32 K tiles: limited by slice depth
    (256, 256, 2),      # 16 K tiles: 2 slices of 8...
    (256, 240, 1),      # ...15 K tiles: no split
    (1024, 4096, 6),    # 16 tiles, 256 K tiles: limited by SMs, round(132 / 16 / 1.5)
    (2048, 16384, 3),   # 32 tiles: round(132 / 32 / 1.5)
])
def test_split_k_counts(m, k, splits):
    p = plan(meta(m, k, torch.float64), meta(k, 256, torch.float64), device=SM80_132)
    assert p.kernel.startswith("cutlass2x_sm80_f64_rr_128x128x16") and p.splits == splits, p
    assert p.decomposition == ("split-k" if splits > 1 else "data-parallel"), p


@pytest.mark.parametrize("m,n,k,tile,splits", [
    # CUDA-core float32 off Hopper (heuristic.cpp: wave_split_k_slices): below two waves of
    # tiles (a wave: one CTA per SM for 64x128 and 128x128, four for 32x128 and 128x32), the
    # fewest slices (2, 4, 8, 16) minimising waves x K per slice, each slice at least 512 deep.
    # An A100's 108 SMs.
    (32, 4096, 4096, "32x128", 8),       # 32 tiles: 256 CTAs still one wave of 432
    (32, 32768, 32768, "32x128", 8),     # 256 tiles: 5 waves of 4096 deep beat 2 of 16384, 3 of 8192
    (64, 4096, 4096, "64x128", 8),       # 32 tiles: 3 waves of 512 deep beat 2 of 1024
    (64, 14336, 4096, "64x128", 8),      # 112 tiles: 9 waves of 512 beat 2 of 4096
    (64, 128256, 4096, "64x128", 1),     # 1002 tiles: no split
    (16384, 16, 16384, "128x32", 16),    # 128 tiles of 128x32: 5 waves of 1024 deep
    (128, 4096, 4096, "128x128", 8),
    (1024, 1024, 1024, "128x128", 1),    # 64 tiles: two slices would take two waves of 512
    (512, 512, 512, "128x128", 1),       # two slices would be 256 deep
])
def test_simt_float32_tiles_and_split_k_counts(m, n, k, tile, splits):
    p = plan(meta(m, k, torch.float32), meta(k, n, torch.float32), device="a100")
    assert f"_f32_rr_simt_{tile}x8_" in p.kernel and p.splits == splits, p
    assert p.decomposition == ("split-k" if splits > 1 else "data-parallel"), p


def test_few_rows_or_columns_take_a_float32_simt_tile_that_fits():
    """IEEE fp32 off Hopper: 17-32 rows on 32x128 tiles, 33-64 on 64x128, 16-64 columns (over
    64 rows) on 128x32, even where 128x128 tiles would fill the SMs (ladder step 3's territory)."""
    f32 = torch.float32
    for (m, n), tile in [((17, 4096), "32x128"), ((32, 32768), "32x128"), ((33, 4096), "64x128"),
                         ((64, 128256), "64x128"), ((65, 64), "128x32"), ((32768, 32), "128x32"),
                         ((65, 4096), "128x128")]:
        for lb in "rc":
            p = plan(meta(m, 4096, f32), meta(4096, n, f32, layout=lb), device="a100")
            assert f"_f32_r{lb}_simt_{tile}x8_" in p.kernel, (m, n, lb, p)


@needs_sm90
def test_float64_uses_hopper_dmma_on_sm90_and_sm80_dmma_elsewhere():
    a, b = meta(512, 512, torch.float64), meta(512, 512, torch.float64)
    assert plan(a, b, device="h100").kernel.startswith("cutlass2x_sm90_f64_"), plan(a, b)
    assert plan(a, b, device="a100").kernel.startswith("cutlass2x_sm80_f64_")


def test_fp32_mode_3xtf32_and_its_fallback():
    a, b = meta(512, 512, torch.float32), meta(512, 512, torch.float32)
    assert cutlass_ops.fp32_mode() == "ieee"
    try:
        cutlass_ops.set_fp32_mode("3xtf32")
        p = plan(a, b, device="a100")
        assert (p.dtype, p.kernel) == ("3xtf32", "cutlass2x_sm80_3xtf32_rr_128x128x32_3s_a4"), p
        # One-element offset: no SM80 3xTF32 kernel takes it; IEEE fp32 (more accurate) runs.
        p = plan(meta(512, 512, torch.float32, offset=1), b, device="a100")
        assert p.dtype == "f32" and p.kernel.startswith("cutlass2x_sm80_f32_"), p
        if has_sm90():
            # Hopper presplits the operands (from 1024 rows and columns and more than 1024^3 of
            # work), which reads them at any alignment; only the output must suit TMA (4
            # floats), or IEEE fp32 runs. Below that, IEEE fp32 too (faster there).
            a2, b2 = meta(1024, 2048, torch.float32), meta(2048, 1024, torch.float32)
            presplit = "cutlass3x_sm90_3xtf32_rr_128x128x32_1x1x1_coop_streamk_presplit"
            assert plan(a2, b2).kernel == presplit
            assert plan(meta(1024, 2048, torch.float32, offset=1), b2).kernel == presplit
            out = torch.empty(1024 * 1024 + 1, device="meta")[1:].view(1024, 1024)
            p = plan(a2, b2, out=out)
            assert p.dtype == "f32" and "_f32_" in p.kernel, p
            p = plan(a, b)  # 512^3
            assert p.dtype == "f32" and "_f32_" in p.kernel, p
        # With TF32 on, float32 is TF32 whatever the mode.
        previous = torch.backends.cuda.matmul.allow_tf32
        torch.backends.cuda.matmul.allow_tf32 = True
        try:
            assert plan(a, b).dtype == "tf32"
        finally:
            torch.backends.cuda.matmul.allow_tf32 = previous
    finally:
        cutlass_ops.set_fp32_mode("ieee")
    assert plan(a, b).dtype == "f32"
    with pytest.raises(ValueError, match="'ieee' or '3xtf32', got 'fast'"):
        cutlass_ops.set_fp32_mode("fast")


@needs_sm90
@pytest.mark.parametrize("la,lb", [("r", "r"), ("r", "c"), ("c", "r"), ("c", "c")])
def test_3xtf32_presplits_on_hopper_where_the_split_pays(la, lb):
    """Hopper's 3xTF32 splits the operands into TF32 parts and runs one TF32 WGMMA GEMM over
    3K: the 2x1-cluster 128x128 kernel from a wave of tiles (132 on an H100), the stream-K
    kernel below. Only from 1024 rows and columns and more than 1024^3 of work: below, the split
    passes cost more than IEEE fp32 (on DMMA) takes, which runs instead; and only from K = 256, below
    which torch's fp32 error is under 3xTF32's floor. Every layout: the split pass
    reads the operands as they lie, so nothing is staged or copied. Elsewhere, SM80's kernel."""
    f32 = torch.float32
    cutlass_ops.set_fp32_mode("3xtf32")
    try:
        big = plan(meta(1536, 4096, f32, layout=la), meta(4096, 1408, f32, layout=lb))  # 12 x 11 = 132 tiles
        assert big.kernel == f"cutlass3x_sm90_3xtf32_{la}{lb}_128x128x32_2x1x1_coop_presplit", big
        assert not (big.staged or big.copy_b_kmajor or big.copy_input or big.copy_mat2), big
        assert "TF32 parts" in big.reason, big
        assert (big.raster, big.swizzle) == ("heuristic", 1), big  # M > N: CUTLASS's rule
        # From 4096 rows with N >= M, tiles walked along N; fewer rows, CUTLASS's rule.
        wide = plan(meta(4096, 4096, f32, layout=la), meta(4096, 4096, f32, layout=lb))
        assert wide.kernel.endswith("_2x1x1_coop_presplit") and (wide.raster, wide.swizzle) == ("along-n", 1), wide
        assert not wide.tuned, wide
        fewer = plan(meta(4095, 4096, f32, layout=la), meta(4096, 4096, f32, layout=lb))
        assert fewer.kernel == wide.kernel and (fewer.raster, fewer.swizzle) == ("heuristic", 1), fewer
        under = plan(meta(1536, 4096, f32, layout=la), meta(4096, 1280, f32, layout=lb))  # 12 x 10 = 120 tiles
        assert under.kernel == f"cutlass3x_sm90_3xtf32_{la}{lb}_128x128x32_1x1x1_coop_streamk_presplit", under
        for m, n, k, presplit in [(1024, 1024, 1025, True), (1024, 1024, 1024, False),    # work
                                  (1024, 4096, 4096, True), (1023, 4096, 4096, False),   # rows
                                  (4096, 1024, 4096, True), (4096, 1023, 4096, False),   # columns
                                  (4096, 2048, 256, True), (4096, 2048, 252, False),     # K
                                  (16384, 16384, 32, False)]:
            p = plan(meta(m, k, f32, layout=la), meta(k, n, f32, layout=lb))
            if presplit:
                assert p.dtype == "3xtf32" and p.kernel.endswith("_presplit"), (m, n, k, p)
            else:
                assert p.dtype == "f32" and "_f32_" in p.kernel, (m, n, k, p)
        a100 = plan(meta(4096, 4096, f32, layout=la), meta(4096, 4096, f32, layout=lb), device="a100")
        assert a100.kernel.startswith("cutlass2x_sm80_3xtf32_"), a100
        a100 = plan(meta(128, 4096, f32, layout=la), meta(4096, 4096, f32, layout=lb), device="a100")
        assert a100.kernel.startswith("cutlass2x_sm80_3xtf32_"), a100
    finally:
        cutlass_ops.set_fp32_mode("ieee")


def test_tuning_table_entry_overrides_the_heuristic():
    a, b = meta(256, 4096), meta(4096, 256)
    before = plan(a, b)
    assert not before.tuned
    name = "cutlass2x_sm80_bf16_rr_128x128x32_3s_a2"
    entry = {"precision": "bf16", "layout_a": "row", "layout_b": "row",
             "align": [before.a.align, before.b.align, before.out.align], "cc": 90, "sm_count": 132,
             "mnk": list(before.problem), "kernel": name, "decomposition": "stream-k", "splits": 1}
    try:
        cutlass_ops._extension._C.tuning_insert(entry)
        after = plan(a, b)
        assert (after.kernel, after.decomposition, after.splits, after.tuned) == (name, "stream-k", 1, True), after
        # The key is exact: another device or shape keeps the heuristic.
        assert not plan(a, b, device="a100").tuned
        assert not plan(meta(256, 4096), meta(4096, 264)).tuned
        assert cutlass_ops.tuning.entries()[0]["kernel"] == name
    finally:
        cutlass_ops.tuning.clear()
    assert not plan(a, b).tuned


@needs_sm90
def test_tuning_table_tile_order_reaches_the_plan():
    a, b = meta(4096, 4096), meta(4096, 4096)
    before = plan(a, b)
    assert (before.raster, before.swizzle) == ("heuristic", 1)
    name = "cutlass3x_sm90_bf16_rr_128x256x64_2x1x1_coop"
    entry = {"precision": "bf16", "layout_a": "row", "layout_b": "row",
             "align": [before.a.align, before.b.align, before.out.align], "cc": 90, "sm_count": 132,
             "mnk": list(before.problem), "kernel": name, "decomposition": "data-parallel", "splits": 1,
             "raster": "along-n", "swizzle": 4}
    try:
        cutlass_ops._extension._C.tuning_insert(entry)
        after = plan(a, b)
        assert (after.kernel, after.raster, after.swizzle, after.tuned) == (name, "along-n", 4, True), after
        assert "tile order: along-n, swizzle 4" in str(after)
        saved = cutlass_ops.tuning.entries()[0]
        assert (saved["raster"], saved["swizzle"]) == ("along-n", 4)
        # Forcing a kernel gets the default order, whatever the table says.
        forced = plan(a, b, kernel=name)
        assert (forced.raster, forced.swizzle) == ("heuristic", 1)
    finally:
        cutlass_ops.tuning.clear()


@pytest.mark.parametrize("change,match", [
    ({"kernel": "no_such_kernel"}, "not in this build"),
    ({"decomposition": "diagonal"}, "unknown decomposition"),
    ({"precision": "f16"}, "does not compute this entry's precision"),
    ({"splits": 0}, "splits must be >= 1"),
    ({"decomposition": "split-k", "splits": 2}, "does not support split-k"),  # 16-bit D: stream-K only
    ({"raster": "diagonal"}, "unknown raster order"),
    ({"swizzle": 3}, "swizzle must be 1, 2, 4 or 8"),
    ({"raster": "along-m"}, "does not take a tile order"),
])
def test_tuning_entries_are_validated(change, match):
    entry = {"precision": "bf16", "layout_a": "row", "layout_b": "row", "align": [8, 8, 8], "cc": 90,
             "sm_count": 132, "mnk": [64, 64, 64], "kernel": "cutlass2x_sm80_bf16_rr_128x128x32_3s_a2",
             "decomposition": "stream-k", "splits": 1, **change}
    with pytest.raises(ValueError, match=match):
        cutlass_ops._extension._C.tuning_insert(entry)
    assert cutlass_ops.tuning.entries() == []


def test_corrupt_tuning_file_is_ignored_with_a_warning(tmp_path):
    path = tmp_path / "tuning.json"
    path.write_text('{"format": 1, "entries": [')
    with pytest.warns(cutlass_ops.tuning.TuningWarning, match="ignoring tuning file"):
        assert cutlass_ops.tuning.load(path) == 0
    path.write_text('[1, 2, 3]')
    with pytest.warns(cutlass_ops.tuning.TuningWarning, match="no 'entries' list"):
        assert cutlass_ops.tuning.load(path) == 0
    assert cutlass_ops.tuning.load(tmp_path / "missing.json") == 0
    assert cutlass_ops.tuning.entries() == []


@needs_sm90
@pytest.mark.parametrize("la,lb", [("r", "r"), ("r", "c"), ("c", "r"), ("c", "c")])
def test_transposed_operands_are_layouts_not_copies(la, lb):
    p = plan(meta(4096, 4096, layout=la), meta(4096, 4096, layout=lb))
    assert not (p.copy_input or p.copy_mat2)
    assert f"_{la}{lb}_" in p.kernel


@needs_sm90
def test_column_major_out_transposes_the_problem():
    out = torch.empty(1000, 3000, dtype=torch.bfloat16, device="meta").t()  # 3000 x 1000, column-major
    p = plan(meta(3000, 512), meta(512, 1000), out=out)
    assert p.transposed and not p.out_via_temp
    assert p.problem == (1000, 3000, 512)
    # out^T = mat2^T @ input^T: row-major operands become column-major ones, swapped.
    assert "_cc_" in p.kernel
    assert p.out.ld == 3000


@needs_sm90
@pytest.mark.parametrize("dtype,kernel", [
    (torch.bfloat16, "cutlass3x_sm90_bf16_rc_32x128x128_1x1x1_coop_streamk_swapab"),
    (torch.float16, "cutlass3x_sm90_f16_rc_32x128x128_1x1x1_coop_streamk_swapab"),
])
def test_matrix_vector_product_runs_transposed(dtype, kernel):
    """An M x 1 result is also a column: the planner takes 1 x M = mat2^T self^T, whose
    single row the swap-AB kernel runs at bandwidth, reading the operands in place."""
    p = plan(meta(65536, 4096, dtype), meta(4096, 1, dtype))
    assert p.transposed and p.problem == (1, 65536, 4096), p
    assert p.kernel == kernel, p
    assert (p.a.layout, p.a.ld, p.a.align) == ("row", 4096, 8), p  # mat2^T: a contiguous row
    assert (p.b.layout, p.b.ld) == ("col", 4096), p                # self^T
    assert not (p.copy_input or p.copy_mat2 or p.out_via_temp or p.staged), p
    # An M x 1 out whose rows are not adjacent (a column of a wider matrix) is no column
    # vector in memory: the problem stays as it is.
    out = torch.empty(65536, 2, dtype=dtype, device="meta")[:, :1]
    q = plan(meta(65536, 4096, dtype), meta(4096, 1, dtype), out=out)
    assert not q.transposed and q.problem == (65536, 1, 4096), q


@needs_sm90
def test_k_major_copy_keeps_the_copy_of_mat2_on_a_transposed_plan(tf32_matmul):
    """A column-major out transposes the problem, so the kernel's B is self^T and its A is
    mat2^T. When self^T is copied K-major for the SM90 TF32 kernel, mat2 (no BLAS layout here)
    must still be copied. Found in review: the K-major copy cleared mat2's copy instead.
    (Meta tensors: CUDA calls with such a mat2 write through a temporary, which hides it.)"""
    tf32_matmul(True)
    m = n = k = 4096
    a = torch.empty(k, m + 1, device="meta")[:, :m].t()  # column-major, ld m + 1: misaligned
    b = torch.empty(1, n, device="meta").expand(k, n)     # row stride 0: no BLAS layout
    out = torch.empty(n, m, device="meta").t()            # column-major
    p = plan(a, b, out=out)
    assert p.transposed and p.copy_b_kmajor and p.copy_mat2 and not p.copy_input, p
    assert p.kernel.startswith("cutlass3x_sm90_tf32_cc_"), p


@needs_sm90
def test_sliced_operand_keeps_its_leading_dimension():
    a = meta(4096, 8192)[:, :4000]  # row-major, ld 8192 > width 4000
    p = plan(a, meta(4000, 4096))
    assert not p.copy_input
    assert p.a.ld == 8192 and p.a.align == 8
    assert is_sm90_tma(p.kernel, "bf16_rr"), p


def test_expanded_operand_needs_a_copy():
    a = torch.empty(1, 512, dtype=torch.bfloat16, device="meta").expand(256, 512)  # row stride 0
    p = plan(a, meta(512, 256))
    assert p.copy_input and not p.copy_mat2
    assert p.action == "kernel"


def test_strided_out_goes_through_a_temporary():
    out = torch.empty(512, 1024, dtype=torch.bfloat16, device="meta")[:, ::2]  # column stride 2
    p = plan(meta(512, 64), meta(64, 512), out=out)
    assert p.out_via_temp and p.action == "kernel"


@pytest.mark.parametrize("dtype,k,align,config", [
    ("bf16", 4096, 8, "64x64x64_5s_a8"),  # 64 tiles of 128x128 on 108 SMs: the 16-byte 64x64 kernel
    ("bf16", 4092, 4, "128x128x32_3s_a4"),  # 8-byte copies
    ("bf16", 4094, 2, "128x128x32_3s_a2"),  # 4-byte copies
    ("bf16", 4093, 1, "128x128x32_2s_a1"),  # two-stage, register-staged: any alignment, on tensor cores
    ("tf32", 4096, 4, "128x128x32_3s_a4"),
    ("tf32", 4094, 2, "128x128x32_3s_a2"),
    ("tf32", 4093, 1, "128x128x32_3s_a1"),
])
def test_alignment_picks_the_widest_kernel_that_fits(dtype, k, align, config, tf32_matmul):
    torch_dtype = torch.bfloat16 if dtype == "bf16" else torch.float32
    tf32_matmul(True)
    p = plan(meta(1024, k, torch_dtype), meta(k, 1024, torch_dtype), device="a100")  # no staging before SM90
    assert p.a.align == align and not p.staged
    assert p.kernel == f"cutlass2x_sm80_{dtype}_rr_{config}", p


@needs_sm90
@pytest.mark.parametrize("m,n,k", [(4095, 4097, 4093), (777, 1234, 4321), (1024, 1024, 4094), (4096, 4096, 4095)])
def test_unaligned_16bit_problems_are_staged_for_sm90(m, n, k):
    p = plan(meta(m, k), meta(k, n))
    assert p.staged and is_sm90_tma(p.kernel, "bf16_rr"), p
    assert p.problem == (m, -(-n // 8) * 8, -(-k // 8) * 8)  # N and K rounded up to 16 bytes
    assert (p.a.align, p.b.align, p.out.align) == (8, 8, 8)
    assert "staged" in str(p)


@needs_sm90
@pytest.mark.parametrize("m,n,k", [(127, 8191, 1021), (300, 500, 2001), (33, 65, 3001)])
@pytest.mark.parametrize("layout_b", ["r", "c"])
def test_mid_size_odd_16bit_problems_run_in_place_on_tensor_cores(m, n, k, layout_b):
    """Staging these costs more than the GEMM it enables (127x8191x1021 staged: 54 us, the
    padded copy of B 22 us of it; cuBLAS 30 us): the two-stage register-staged tensor-op
    kernel takes the odd leading dims as they are."""
    p = plan(meta(m, k), meta(k, n, layout=layout_b))
    assert not p.staged and p.kernel == f"cutlass2x_sm80_bf16_r{layout_b}_128x128x32_2s_a1", p
    # Its K steps are load latency (two stages, element loads): stream-K keeps every SM busy.
    assert p.decomposition == "stream-k", p


@needs_sm90
def test_tiny_unaligned_problems_are_not_worth_staging():
    p = plan(meta(7, 9), meta(9, 13))
    assert not p.staged and p.kernel.startswith("cutlass2x_"), p


@needs_sm90
def test_unaligned_tf32_is_staged_row_major_for_the_swap_ab_kernel(tf32_matmul):
    """Staged B stays row-major (a padding copy, not a transposing one): the swap-AB TF32
    kernel reads it as it is."""
    tf32_matmul(True)
    p = plan(meta(2047, 2049, torch.float32), meta(2049, 2051, torch.float32))
    assert p.staged and p.kernel.startswith("cutlass3x_sm90_tf32_rr_") and p.kernel.endswith("_swapab"), p
    assert p.b.layout == "row" and not p.copy_b_kmajor, p


def test_storage_offset_breaks_alignment():
    p = plan(meta(1024, 1024, offset=1), meta(1024, 1024), device="a100")
    assert p.a.align == 1
    assert p.kernel.endswith("_a1"), p
    if has_sm90():
        h100 = plan(meta(1024, 1024, offset=1), meta(1024, 1024))
        assert h100.staged and h100.kernel.startswith(("cutlass3x_sm90", "handwritten_sm90"))
        rejected = dict(plan(meta(1024, 1024, offset=1), meta(1024, 1024), device="a100").candidates)
        assert "needs A aligned to 8 elements" in rejected["cutlass2x_sm80_bf16_rr_128x256x64_3s_a8"]


@pytest.mark.parametrize("m", range(1, 131))
def test_m_sweep_always_finds_a_kernel(m):
    p = plan(meta(m, 4096), meta(4096, 4096))
    assert p.action == "kernel" and p.kernel


def test_float32_follows_torch_tf32_flag(tf32_matmul):
    a, b = meta(2048, 2048, torch.float32), meta(2048, 2048, torch.float32)
    tf32_matmul(False)
    ieee = plan(a, b)
    assert ieee.dtype == "f32" and "_f32_" in ieee.kernel
    tf32_matmul(True)
    fast = plan(a, b)
    assert fast.dtype == "tf32" and "_tf32_" in fast.kernel
    if has_sm90():
        # Row-major x row-major TF32 runs swapped on Hopper (see csrc/generate_kernels.py).
        big = plan(meta(4096, 4096, torch.float32), meta(4096, 4096, torch.float32))
        assert not (big.copy_b_kmajor or big.staged) and big.kernel.startswith("cutlass3x_sm90_tf32_rr"), big
        rc = plan(a, meta(2048, 2048, torch.float32, layout="c"))
        assert rc.kernel.startswith("cutlass3x_sm90_tf32_rc") and not rc.staged and not rc.copy_b_kmajor


def test_float64_uses_dmma():
    p = plan(meta(512, 512, torch.float64), meta(512, 512, torch.float64), device="a100")
    assert p.kernel == "cutlass2x_sm80_f64_rr_128x128x16_3s_a1"


def test_a100_gets_sm80_kernels():
    p = plan(meta(8192, 8192), meta(8192, 8192), device="a100")
    assert p.kernel == "cutlass2x_sm80_bf16_rr_128x256x64_3s_a8"


def test_small_shared_memory_skips_the_big_sm80_tile():
    p = plan(meta(8192, 8192), meta(8192, 8192), device="l40s")
    assert p.kernel == "cutlass2x_sm80_bf16_rr_64x64x64_5s_a8"  # 80 KiB: fits SM89's 99
    assert "shared memory" in dict(p.candidates)["cutlass2x_sm80_bf16_rr_128x256x64_3s_a8"]


def test_pre_ampere_is_unsupported():
    p = plan(meta(64, 64), meta(64, 64), device="t4")
    assert p.action == "unsupported" and p.kernel is None
    assert "7.5" in p.reason


def test_complex_goes_to_torch_mm():
    p = plan(meta(8, 8, torch.complex64), meta(8, 8, torch.complex64))
    assert p.action == "torch.mm" and p.kernel is None


def test_integer_dtypes_are_unsupported_like_torch_mm():
    p = plan(meta(8, 8, torch.int32), meta(8, 8, torch.int32))
    assert p.action == "unsupported"


def test_dimension_over_int32_goes_to_torch_mm():
    p = plan(torch.empty(2**31, 1, dtype=torch.bfloat16, device="meta"), meta(1, 2))
    assert p.action == "torch.mm", p
    assert all("32 bits" in why for _, why in p.candidates if why)


@pytest.mark.parametrize("m,n,k,action", [(0, 8, 8, "empty"), (8, 0, 8, "empty"), (8, 8, 0, "zeros")])
def test_empty_dimensions(m, n, k, action):
    assert plan(meta(m, k), meta(k, n)).action == action


def test_forced_kernel_is_checked():
    a, b = meta(1024, 1024), meta(1024, 1024)
    name = "cutlass2x_sm80_bf16_rr_128x256x64_3s_a8"
    assert plan(a, b, kernel=name).kernel == name
    with pytest.raises(ValueError, match="takes A column-major and B row-major"):
        plan(a, b, kernel="cutlass2x_sm80_bf16_cr_128x256x64_3s_a8")
    with pytest.raises(ValueError, match="needs A aligned to 8 elements"):
        plan(meta(1024, 1023), meta(1023, 1024), kernel=name)
    with pytest.raises(ValueError, match="unknown kernel"):
        plan(a, b, kernel="cutlass9x_nothing")


def test_forcing_a_tf32_kernel_opts_float32_into_tf32(tf32_matmul):
    tf32_matmul(False)
    a, b = meta(256, 256, torch.float32), meta(256, 256, torch.float32)
    p = plan(a, b, kernel="cutlass2x_sm80_tf32_rr_128x128x32_3s_a4")
    assert p.dtype == "tf32" and p.kernel == "cutlass2x_sm80_tf32_rr_128x128x32_3s_a4"


def test_plan_errors_match_mm_errors():
    with pytest.raises(RuntimeError, match=r"mat1 and mat2 shapes cannot be multiplied \(3x4 and 5x6\)"):
        plan(meta(3, 4), meta(5, 6))
    with pytest.raises(ValueError, match="device="):
        cutlass_ops.explain(meta(3, 4), meta(4, 5))


def test_device_spec_presets_and_custom_specs():
    assert DEVICE_PRESETS["h100"].capability == (9, 0)
    custom = DeviceSpec("made-up sm80 part", (8, 0), 10, 64 * 1024)
    p = plan(meta(4096, 4096), meta(4096, 4096), device=custom)
    assert p.kernel == "cutlass2x_sm80_bf16_rr_128x128x32_3s_a4"  # 48 KiB: the only 16-bit tile that fits
    text = str(p)
    assert "made-up sm80 part" in text and "candidates:" in text


@needs_sm90
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_tiny_16bit_problems_take_the_sm80_64x64_kernel_on_hopper(dtype):
    # At most 16 tiles of 128x128 with K <= 512: the SM80 multistage 64x64 kernel, which
    # starts faster than a TMA kernel; past either threshold, an SM90 kernel.
    p = plan(meta(256, 256, dtype), meta(256, 256, dtype))
    assert p.kernel.endswith("_rr_64x64x64_5s_a8"), p
    assert "64x64" in p.reason
    assert plan(meta(512, 512, dtype), meta(512, 512, dtype)).kernel.endswith("_64x64x64_5s_a8")
    longer_k = plan(meta(512, 1024, dtype), meta(1024, 512, dtype))
    more_tiles = plan(meta(640, 512, dtype), meta(512, 640, dtype))  # 25 tiles
    for p in (longer_k, more_tiles):
        assert p.kernel.startswith("cutlass3x_sm90_") or p.kernel.startswith("handwritten_sm90_"), p


@pytest.mark.parametrize("device,m,expected", [
    ("a100", 512, "64x64x64_5s_a8"),     # under a wave of 128x128 tiles: 64x64
    ("a100", 8192, "128x256x64_3s_a8"),  # large: 128x256
    ("l40s", 8192, "64x64x64_5s_a8"),    # 128x256's 144 KiB does not fit SM89's 99 KiB
    ("l40s", 256, "64x64x64_5s_a8"),
])
def test_sm80_16bit_tile_sets(device, m, expected):
    p = plan(meta(m, m), meta(m, m), device=device)
    assert p.kernel == f"cutlass2x_sm80_bf16_rr_{expected}", p
    # Operands aligned to 4 bytes only: the 4-byte kernel on either device.
    odd = plan(meta(m, m - 2, ld=m - 2), meta(m - 2, m), device=device)
    assert odd.kernel == "cutlass2x_sm80_bf16_rr_128x128x32_3s_a2", odd


@needs_sm90
@pytest.mark.parametrize("m,n,k,slices", [
    (256, 256, 131072, 32),   # 2 tiles of 128x256: 32 slices (the cap)
    (256, 256, 131000, 25),   # K = 8 x 5^3 x 131: 25 slices
    (512, 512, 65536, 16),    # 8 tiles: 16 slices fill a wave
    (200, 264, 32768, 32),    # 4 tiles, K = 32768 (the threshold): 32 slices of 1024
])
def test_few_tiles_and_a_long_k_sum_their_slices_in_a_second_kernel(m, n, k, slices):
    """16-bit on Hopper, under a quarter of a 128x128 tile per SM, at most 16 tiles of 128x256
    and K >= 32768: K slices as a batch of GEMMs, summed by a second kernel, with the most
    slices (up to a wave of CTAs and 32) that divide K into equal multiples of 8 elements, each
    at least 1024 deep."""
    for lb in "rc":
        p = plan(meta(m, k), meta(k, n, layout=lb))
        assert p.kernel == f"cutlass3x_sm90_bf16_r{lb}_128x256x64_2x1x1_coop_splitk_sum", p
        assert (p.decomposition, p.splits) == ("split-k", slices), p


@needs_sm90
def test_where_slices_are_not_summed_cutlass_split_k_runs():
    # K = 8 x 4099 (prime): no 2-32 slices of equal multiples of 8 elements.
    p = plan(meta(256, 32792), meta(32792, 256))
    assert "splitk_sum" not in p.kernel and p.decomposition == "split-k", p
    # K below 32768.
    p = plan(meta(256, 16384), meta(16384, 256))
    assert "splitk_sum" not in p.kernel and p.decomposition == "split-k", p
    # Column-major A ("cr"): no slice-summing kernel is built for it.
    p = plan(meta(256, 131072, layout="c"), meta(131072, 256))
    assert "splitk_sum" not in p.kernel, p


def test_sixteen_bit_cutlass2x_kernels_never_meet_k_slices_in_16_bit():
    """Serial split-K adds each K slice's partial tile into the one the previous slice left in D;
    with a 16-bit D every boundary rounds a partial sum to 16 bits. The 16-bit CUTLASS 2.x
    kernels run CUTLASS's stream-K kernel instead (partials meet in float32)."""
    sixteen = [k for k in cutlass_ops.list_kernels() if k.family == "cutlass2x" and k.dtype in ("f16", "bf16")]
    assert sixteen
    for k in sixteen:
        assert set(k.decompositions) == {"data-parallel", "stream-k"}, k


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("device", ["a100", "h100"])
def test_sixteen_bit_cutlass2x_divides_k_by_stream_k_where_split_k_did(dtype, device):
    # Few tiles, a long K: stream-K where serial split-K used to split (heuristic.cpp).
    few = plan(meta(24, 16384, dtype), meta(16384, 40, dtype), device=device, kernel=None)
    if few.kernel.startswith("cutlass2x_"):
        assert few.decomposition == "stream-k", few
    # Unaligned on Hopper and tiny: the two-stage tensor-op kernel, K divided by stream-K.
    odd = plan(meta(7, 911, dtype), meta(911, 2, dtype, layout="c"), device=device)
    assert odd.kernel.startswith("cutlass2x_sm80_") and odd.kernel.endswith("_128x128x32_2s_a1"), odd
    assert odd.decomposition == "stream-k", odd
    # Many tiles: data-parallel, as before.
    many = plan(meta(4096, 4096, dtype), meta(4096, 4096, dtype), device="a100")
    assert many.kernel.startswith("cutlass2x_sm80_") and many.decomposition == "data-parallel", many


@needs_sm90
def test_slice_summing_kernel_needs_whole_16_byte_rows_of_float_partials():
    """Its float32 partial rows are stored by TMA: N must be a multiple of 4. With F.linear's
    layout (B column-major) N may be anything; the planner must not pick the kernel then, and a
    forced one is refused by name, not at launch."""
    f16 = torch.float16
    p = plan(meta(256, 65536, f16), meta(258, 65536, f16).t())
    assert "splitk_sum" not in p.kernel, p
    p = plan(meta(256, 65536, f16), meta(256, 65536, f16).t())
    assert "splitk_sum" in p.kernel, p
    name = "cutlass3x_sm90_f16_rc_128x256x64_2x1x1_coop_splitk_sum"
    with pytest.raises(ValueError, match="row length N a multiple of 4, the problem has N = 761"):
        plan(meta(3829, 8, f16), meta(761, 8, f16).t(), kernel=name)
    # The sum writes D element by element: an output view at any offset and leading dim takes
    # it in place (no temporary), as long as N is a multiple of 4.
    big = meta(256, 256 + 13, f16)
    p = plan(meta(256, 65536, f16), meta(256, 65536, f16).t(), out=big[:, 5:5 + 256])
    assert "splitk_sum" in p.kernel and not p.out_via_temp, p
    p = plan(meta(256, 65536, f16), meta(256, 65536, f16).t(), out=big[:, 5:5 + 256], kernel=name)
    assert not p.out_via_temp, p
    assert [k.n_multiple for k in cutlass_ops.list_kernels() if k.name == name] == [4]
