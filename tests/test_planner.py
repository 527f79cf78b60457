"""Dispatch through the planning API (explain() on meta tensors): no GPU needed.

Meta tensors carry sizes, strides and storage offsets, so every layout, copy and alignment
decision the CUDA path makes can be checked here for any device preset. Which kernel runs is
the cost model's choice (csrc/dispatch/cost_model.h, calibrated on the profiling sweep):
these tests check what it is offered and what it must never pick; tests/test_cost_model.py
judges the choices themselves against the sweep's measured times.
"""

import pytest
import torch

import cutlass_ops
from cutlass_ops import DEVICE_PRESETS, DeviceSpec
from cutlass_ops.precisions import torch_dtype
from mm_testing import FORCED_SHAPES, KERNEL_DTYPES


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


def test_tuning_table_entry_overrides_the_cost_model():
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
        # The key is exact: another device or shape keeps the model's choice.
        assert not plan(a, b, device="a100").tuned
        assert not plan(meta(256, 4096), meta(4096, 264)).tuned
        assert cutlass_ops.tuning.entries()[0]["kernel"] == name
    finally:
        cutlass_ops.tuning.clear()
    assert not plan(a, b).tuned


def test_pinned_holds_for_the_block_and_restores_the_table():
    """tuning.pinned: the candidate runs inside the block; after it (an exception too) the table
    holds what it held before, and not the pin."""
    a, b = meta(256, 4096), meta(4096, 256)
    other_a, other_b = meta(512, 4096), meta(4096, 512)
    name = "cutlass2x_sm80_bf16_rr_128x128x32_3s_a2"
    try:
        cutlass_ops.tuning.pin(other_a, other_b, name, "stream-k", device="h100")
        kept = cutlass_ops.tuning.entries()
        with cutlass_ops.tuning.pinned(a, b, name, "stream-k", device="h100") as entry:
            inside = plan(a, b)
            assert (inside.kernel, inside.decomposition, inside.tuned) == (name, "stream-k", True), inside
            assert entry["kernel"] == name and len(cutlass_ops.tuning.entries()) == 2
        assert not plan(a, b).tuned and cutlass_ops.tuning.entries() == kept
        with pytest.raises(RuntimeError, match="inside"):
            with cutlass_ops.tuning.pinned(a, b, name, "stream-k", device="h100"):
                raise RuntimeError("inside")
        assert cutlass_ops.tuning.entries() == kept and plan(other_a, other_b).tuned
    finally:
        cutlass_ops.tuning.clear()


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
    ({"kernel": "cutlass3x_sm90_bf16_rr_128x128x64_1x1x1_pingpong", "decomposition": "split-k", "splits": 2},
     "does not support split-k"),  # data-parallel only
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
    assert not (p.copy_input or p.copy_mat2 or p.staged)
    assert f"_{la}{lb}_" in p.kernel


@needs_sm90
def test_column_major_out_transposes_the_problem():
    out = torch.empty(1000, 3000, dtype=torch.bfloat16, device="meta").t()  # 3000 x 1000, column-major
    p = plan(meta(3000, 512), meta(512, 1000), out=out)
    assert p.transposed and not p.out_via_temp
    assert p.problem == (1000, 3000, 512)
    # out^T = mat2^T @ input^T: row-major operands become column-major ones, swapped.
    assert (p.a.layout, p.b.layout) == ("col", "col")
    assert "_cc_" in p.kernel
    assert p.out.ld == 3000


@needs_sm90
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_matrix_vector_product_runs_transposed(dtype):
    """An M x 1 result is also a column: the planner takes 1 x M = mat2^T self^T, one row of
    tiles that streams self once at bandwidth, reading the operands in place (untransposed it
    would be one column of tiles with an unaligned N)."""
    p = plan(meta(65536, 4096, dtype), meta(4096, 1, dtype))
    assert p.transposed and p.problem == (1, 65536, 4096), p
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
    p = plan(a, b, out=out, kernel=None)
    assert p.transposed and p.copy_mat2 and not p.copy_input, p
    # The plan takes the K-major copy of self^T (else this shape no longer tests the mend: pick
    # one where the model does), and mat2's copy stays (above).
    assert p.copy_b_kmajor and p.kernel.startswith("cutlass3x_sm90_tf32_cc_"), p


@needs_sm90
def test_sliced_operand_keeps_its_leading_dimension():
    a = meta(4096, 8192)[:, :4000]  # row-major, ld 8192 > width 4000
    p = plan(a, meta(4000, 4096))
    assert not p.copy_input
    assert p.a.ld == 8192 and p.a.align == 8
    assert not p.staged and is_sm90_tma(p.kernel, "bf16_rr"), p


def test_expanded_operand_needs_a_copy():
    a = torch.empty(1, 512, dtype=torch.bfloat16, device="meta").expand(256, 512)  # row stride 0
    p = plan(a, meta(512, 256))
    assert p.copy_input and not p.copy_mat2
    assert p.action == "kernel"


def test_strided_out_goes_through_a_temporary():
    out = torch.empty(512, 1024, dtype=torch.bfloat16, device="meta")[:, ::2]  # column stride 2
    p = plan(meta(512, 64), meta(64, 512), out=out)
    assert p.out_via_temp and p.action == "kernel"


@needs_sm90
@pytest.mark.parametrize("m,n,k", [(4095, 4097, 4093), (8205, 5921, 2949)])
def test_large_unaligned_16bit_problems_are_staged_for_sm90(m, n, k):
    """Staging large odd problems into aligned copies for the TMA kernels is measured 1.9-3x
    faster than any in-place kernel (the copies cost a few percent of the GEMM)."""
    p = plan(meta(m, k), meta(k, n))
    assert p.staged and p.kernel.startswith(("cutlass3x_sm90_bf16_", "handwritten_sm90_bf16_")), p
    assert p.problem == (m, -(-n // 8) * 8, -(-k // 8) * 8)  # N and K rounded up to 16 bytes
    assert (p.a.align, p.b.align, p.out.align) == (8, 8, 8)
    assert "staged" in str(p)


@needs_sm90
def test_staged_and_k_major_variants_are_offered_only_where_they_apply(tf32_matmul):
    aligned = plan(meta(4096, 4096), meta(4096, 4096))
    assert {c.variant for c in aligned.candidates} == {"in-place"}
    odd = plan(meta(1000, 1001), meta(1001, 1003))
    assert {c.variant for c in odd.candidates} == {"in-place", "staged-row-b", "staged-col-b"}
    assert all(c.copy_us > 0 for c in odd.candidates if c.variant != "in-place")
    assert all(c.copy_us == 0 for c in odd.candidates if c.variant == "in-place")
    # Staged copies are aligned for TMA: the TMA + WGMMA kernels read them, not the cp.async ones.
    staged = [c.kernel for c in odd.candidates if c.variant != "in-place"]
    assert staged and all(k.startswith(("cutlass3x_sm90_", "handwritten_sm90_")) and "_cpasync_" not in k
                          for k in staged), staged
    tf32_matmul(True)
    tf32 = plan(meta(2048, 2048, torch.float32), meta(2048, 2048, torch.float32))
    assert "kmajor-b" in {c.variant for c in tf32.candidates}
    # An aligned "cr" (column-major A, row-major B) with K no multiple of 4: no K-major copy of B
    # reaches the SM90 TF32 kernels (TMA wants K, its contiguous extent, a multiple of 4),
    # zero-padded K-major copies of A and B do; with K a multiple of 4 the copy of B alone does.
    cr = plan(meta(2048, 2047, torch.float32, "c"), meta(2047, 2048, torch.float32))
    assert {c.variant for c in cr.candidates} == {"in-place", "staged-col-b"}, cr
    assert all(c.kernel.startswith("cutlass3x_sm90_tf32_rc_") for c in cr.candidates if c.variant == "staged-col-b")
    even_k = plan(meta(2048, 2048, torch.float32, "c"), meta(2048, 2048, torch.float32))
    assert {c.variant for c in even_k.candidates} == {"in-place", "kmajor-b"}, even_k
    assert all(c.kernel.startswith("cutlass3x_sm90_tf32_cc_") for c in even_k.candidates if c.variant == "kmajor-b")
    bf16_col_a = plan(meta(2048, 2047, layout="c"), meta(2047, 2048))
    assert {c.variant for c in bf16_col_a.candidates} == {"in-place"}  # 16-bit WGMMA reads MN-major A
    assert plan(meta(1000, 1001), meta(1001, 1003), device="a100").candidates[0].variant == "in-place"


@needs_sm90
def test_operands_tma_cannot_read_reach_the_cp_async_kernels(tf32_matmul):
    """F.linear's layout with a K whose rows TMA cannot read. bf16 K = 998 (rows on 4 bytes)
    reaches the cp.async builds at alignment 2; K = 999 (2 bytes) none, each refused for A's
    alignment. Uncalibrated (the H100's sweep never timed them) they rank after every measured
    candidate; on the H200, whose sweep did, the 64x64 ping-pong build runs 777x640x998 (1.25x
    torch.mm in benchmarks/probes/cpasync_probe.py, where the CUTLASS 2.x kernel that ran before
    reached 1.01x) and TF32 3378x6x23 (the sweep's fastest candidate there)."""
    def cp_async(p):  # read in place (the staged copies are aligned: every kernel reads those)
        return [c for c in p.candidates if "_cpasync_" in c.kernel and c.variant == "in-place"]

    even = plan(meta(777, 998), meta(998, 640, layout="c"), device="h200")
    assert {c.kernel for c in cp_async(even)} >= {f"cutlass3x_sm90_bf16_rc_{t}_cpasync_a2" for t in
                                                  ("64x64x64_1x1x1_pingpong", "64x128x64_1x1x1_pingpong")}, even
    assert even.kernel == "cutlass3x_sm90_bf16_rc_64x64x64_1x1x1_pingpong_cpasync_a2", even
    odd = plan(meta(777, 999), meta(999, 640, layout="c"), device="h200")
    assert not cp_async(odd), odd
    refusals = [why for name, why in odd.refused if "_cpasync_" in name]
    assert len(refusals) == 2 and all("needs A aligned to 2 elements" in why for why in refusals), odd
    tf32_matmul(True)
    tf32 = plan(meta(3378, 23, torch.float32), meta(23, 6, torch.float32, "c"), device="h200")
    assert tf32.kernel == "cutlass3x_sm90_tf32_rc_64x64x32_1x1x1_pingpong_cpasync_a1", tf32
    # TF32 "rr" with K = 313: A's rows are where TMA cannot read them, and so are those of B's
    # K-major copy; the cp.async builds run on that copy (the H200 sweep's fastest candidate at
    # 1182x1640x313), never on a staged one.
    rr = plan(meta(1182, 313, torch.float32), meta(313, 1640, torch.float32), device="h200")
    assert {c.variant for c in rr.candidates if "_cpasync_" in c.kernel} == {"kmajor-b"}, rr
    h100 = plan(meta(777, 999, torch.float32), meta(999, 640, torch.float32, "c"), device="h100")
    assert cp_async(h100) and not any(c.calibrated for c in cp_async(h100)), h100
    assert "_cpasync_" not in h100.kernel


@needs_sm90
def test_tile_columns_past_grid_y_are_refused(tf32_matmul):
    """CUDA's gridDim.y holds 65,535 blocks. CUTLASS 2.x's data-parallel kernels put tile
    columns there in groups of eight (the identity swizzle), and the one-tile-per-CTA cp.async
    kernel one to a block: past that the planner refuses them with the limit, where CUTLASS's
    can_implement (2.x) or the launch (3.x) would fail the call."""
    tf32_matmul(True)
    kernels = {k.name: k for k in cutlass_ops.list_kernels()}
    ws = "cutlass3x_sm90_tf32_rc_128x128x32_1x1x1_ws_cpasync_a1"
    assert kernels[ws].max_n == 65535 * 128
    limited = {name: k.max_n for name, k in kernels.items() if k.family == "cutlass2x" and k.max_n is not None}
    assert limited and all(n == 65535 * 8 * kernels[name].tile[1] for name, n in limited.items()), limited
    n = 65535 * 128 + 8  # one tile column more than the cp.async kernel's grid holds
    p = plan(meta(16, 7, torch.float32), meta(7, n, torch.float32, "c"), device="h200")
    assert f"takes at most {65535 * 128} columns (N), the problem has N = {n}" in dict(p.refused)[ws], p
    assert p.kernel is not None and p.kernel != ws
    # A 2.x kernel of this precision and layout one past its own limit.
    name = min((k for k in limited if kernels[k].dtype == "tf32" and kernels[k].layouts == "rc"), key=limited.get)
    n = limited[name] + 1
    p = plan(meta(16, 8, torch.float32), meta(8, n, torch.float32, "c"), device="h200")
    assert f"takes at most {limited[name]} columns (N)" in dict(p.refused)[name], p


def test_storage_offset_breaks_alignment():
    p = plan(meta(1024, 1024, offset=1), meta(1024, 1024), device="a100")
    assert p.a.align == 1
    assert p.kernel.endswith("_a1"), p
    refused = dict(p.refused)
    assert "needs A aligned to 8 elements" in refused["cutlass2x_sm80_bf16_rr_128x256x64_3s_a8"]
    if has_sm90():
        h100 = plan(meta(1024, 1024, offset=1), meta(1024, 1024))
        assert "staged-row-b" in {c.variant for c in h100.candidates}


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
    assert all(c.kernel.split("_")[2] == "tf32" for c in fast.candidates), fast


def test_float64_uses_dmma():
    p = plan(meta(512, 512, torch.float64), meta(512, 512, torch.float64), device="a100")
    assert p.kernel.startswith("cutlass2x_sm80_f64_rr_"), p


def test_a100_gets_sm80_kernels():
    p = plan(meta(8192, 8192), meta(8192, 8192), device="a100")
    assert p.candidates and all(c.kernel.startswith(("cutlass2x_sm80_", "handwritten_sm80_")) for c in p.candidates)
    assert p.kernel == "cutlass2x_sm80_bf16_rr_128x256x64_3s_a8", p  # the largest SM80 tile, by the device's rates


def test_small_shared_memory_skips_the_big_sm80_tile():
    p = plan(meta(8192, 8192), meta(8192, 8192), device="l40s")
    assert "shared memory" in dict(p.refused)["cutlass2x_sm80_bf16_rr_128x256x64_3s_a8"]
    assert "cutlass2x_sm80_bf16_rr_128x256x64_3s_a8" not in {c.kernel for c in p.candidates}


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


@pytest.mark.parametrize("shapes", [((0, 8), (8, 8)), ((8, 0), (0, 8)), ((8, 8), (8, 0)), ((0, 4, 8), (0, 8, 3))],
                         ids=str)
def test_empty_integer_products_go_to_torch_mm_like_mm(shapes):
    """mm() hands empty integer products to torch's CUDA kernel, which computes them; explain says so,
    and refuses kernel= as mm() does."""
    a, b = (torch.empty(s, dtype=torch.int32, device="meta") for s in shapes)
    p = cutlass_ops.explain(a, b, device="h100")
    assert p.action == "torch.mm" and p.kernel is None and "empty" in p.reason, p
    with pytest.raises(ValueError, match="kernel= cannot be used"):
        cutlass_ops.explain(a, b, kernel=cutlass_ops.list_kernels()[0].name, device="h100")


def test_dimension_over_int32_goes_to_torch_mm():
    p = plan(torch.empty(2**31, 1, dtype=torch.bfloat16, device="meta"), meta(1, 2))
    assert p.action == "torch.mm", p
    assert not p.candidates
    assert all("32 bits" in why for _, why in p.refused if "teaching" not in why)


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
    # 64 KiB: the 16-bit tensor-op tiles of 128x128x32 and 64x64x32 fit (and the SIMT and streaming ones).
    assert {c.kernel for c in p.candidates} <= {"cutlass2x_sm80_bf16_rr_128x128x32_3s_a4",
                                                "cutlass2x_sm80_bf16_rr_128x128x32_3s_a2",
                                                "cutlass2x_sm80_bf16_rr_128x128x32_2s_a1",
                                                "cutlass2x_sm80_bf16_rr_64x64x32_4s_a4",
                                                "cutlass2x_sm80_bf16_rr_64x64x32_4s_a2",
                                                "cutlass2x_sm80_bf16_rr_64x64x32_2s_a1",
                                                "cutlass2x_sm80_bf16_rr_simt_128x128x8_2s_a1",
                                                "handwritten_sm80_bf16_rr_skinny_m"}, p
    assert p.kernel == "cutlass2x_sm80_bf16_rr_128x128x32_3s_a4", p
    text = str(p)
    assert "made-up sm80 part" in text and "candidates, cheapest predicted first" in text
    assert "device's peak rates" in text  # no calibration for this device


# ---- what the cost model is offered, and what it never picks --------------------------------


def candidate_key(c):
    return (c.variant, c.kernel, c.decomposition, c.splits)


@pytest.mark.parametrize("device", ["h100", "a100"])
@pytest.mark.parametrize("m,n,k,layout", [(8192, 8192, 8192, "rr"), (257, 8192, 28672, "rc"), (1, 4096, 4096, "rc"),
                                          (1000, 999, 1001, "cr"), (33, 65, 3001, "cc")])
def test_the_plan_is_the_cheapest_candidate(device, m, n, k, layout):
    p = plan(meta(m, k, layout=layout[0]), meta(k, n, layout=layout[1]), device=device)
    assert p.candidates, p
    # Under a calibration (the H100's) the candidates it measured come first, each group cheapest
    # first; without one (the A100) every candidate is ranked by its prediction alone.
    assert device == "h100" or not any(c.calibrated for c in p.candidates)
    flags = [c.calibrated for c in p.candidates]
    assert flags == sorted(flags, reverse=True), p
    for measured in (True, False):
        costs = [c.predicted_us for c in p.candidates if c.calibrated == measured]
        assert costs == sorted(costs), p
    assert p.candidates[0].calibrated or device == "a100", p
    first = p.candidates[0]
    assert (first.kernel, first.decomposition, first.splits, first.variant) == (
        p.kernel, p.decomposition, p.splits, p.variant), p
    assert p.predicted_us == first.predicted_us
    assert all(c.predicted_us > 0 and c.kernel_us > 0 for c in p.candidates)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float32, torch.float64])
def test_every_product_kernel_that_accepts_the_problem_is_a_candidate(dtype, tf32_matmul):
    tf32_matmul(dtype == torch.float32)
    p = plan(meta(1024, 1024, dtype), meta(1024, 1024, dtype))
    offered = {c.kernel for c in p.candidates if c.variant == "in-place"}
    refused = dict(p.refused)
    layouts = "rr"
    precision = {torch.bfloat16: "bf16", torch.float32: "tf32", torch.float64: "f64"}[dtype]
    for k in cutlass_ops.list_kernels((9, 0)):
        if k.dtype != precision or k.layouts != layouts:
            continue
        assert (k.name in offered) != (k.name in refused), k.name
        if k.role == "teaching":
            assert k.name in refused and "teaching" in refused[k.name]


def test_teaching_kernels_run_only_when_forced():
    teaching = [k for k in cutlass_ops.list_kernels() if k.role == "teaching"]
    assert teaching, "the ladder's teaching steps are registered"
    for k in teaching:
        dtype = torch_dtype(k.dtype)
        p = plan(meta(4096, 4096, dtype), meta(4096, 4096, dtype))
        assert k.name not in {c.kernel for c in p.candidates}
        forced = plan(meta(4096, 4096, dtype), meta(4096, 4096, dtype), kernel=k.name)
        assert forced.kernel == k.name and forced.reason == "forced with kernel="


@pytest.mark.parametrize("m,n,k", [(64, 4096, 4096), (256, 256, 131072), (130, 70, 12001)])
def test_k_slices_are_offered_where_tiles_are_few(m, n, k):
    p = plan(meta(m, k), meta(k, n))
    decompositions = {c.decomposition for c in p.candidates}
    assert {"split-k", "stream-k"} & decompositions, p
    kernels = {k.name: k for k in cutlass_ops.list_kernels()}
    for c in p.candidates:
        if c.decomposition == "split-k":
            assert 2 <= c.splits <= 64
            # Past 16 slices only the slice-summing kernels (equal 16-byte slices) and those whose
            # slices meet in a workspace: serial split-K waits its turn at the tile.
            if c.splits > 16 and not kernels[c.kernel].split_k_in_workspace:
                # (a staged run's K is padded to a multiple of 8 16-bit elements)
                depth = p.problem[2] if c.variant == "in-place" else -(-p.problem[2] // 8) * 8
                assert kernels[c.kernel].slice_sum == "second-kernel" and depth % (8 * c.splits) == 0


def test_the_tma_wgmma_step_splits_k_past_sixteen_slices_where_its_tiles_are_few():
    """The hand-written TMA + WGMMA step's split-K (SliceSum::kLastSlice: the last K slice of a
    tile waits once and adds the others' float32 partials, no chain of turns) is offered past the
    16 slices of serial split-K, on its 128x128, 128x256 and swapped 256-row builds only, and only
    below a wave of tiles."""
    if not has_sm90():
        pytest.skip("built without the sm90a kernels")
    kernels = {k.name: k for k in cutlass_ops.list_kernels()}
    step6 = "handwritten_sm90_bf16_rc_6_wgmma_tma"
    for name in (step6, step6 + "_n128", step6 + "_swapab_m256"):
        assert "split-k" in kernels[name].decompositions and kernels[name].split_k_in_workspace, name
    assert kernels[step6 + "_n144"].decompositions == ("data-parallel",)
    assert not kernels[step6 + "_n144"].split_k_in_workspace
    p = plan(meta(200, 16000), meta(16000, 136, layout="c"))
    split = {c.splits for c in p.candidates if c.kernel == step6 + "_n128" and c.decomposition == "split-k"}
    assert 2 in split and max(split) > 16, p
    many_tiles = plan(meta(4096, 4096), meta(4096, 4096, layout="c"))
    assert not [c for c in many_tiles.candidates if c.kernel.startswith(step6) and c.decomposition == "split-k"]


def test_slice_summing_kernels_are_offered_every_count_that_cuts_k_evenly():
    """The slice-summing kernels run equal K slices of whole 16-byte units: at K = 44136
    (8 x 3 x 3 x 613) those are 3 and 9 slices and no others; the kernels that sum in turn keep
    their list of counts (2, 3, 4, 6, ...)."""
    if not has_sm90():
        pytest.skip("built without the sm90a kernels")
    p = plan(meta(328, 44136), meta(44136, 760))
    counts = {}
    for c in p.candidates:
        if c.decomposition == "split-k":
            counts.setdefault("splitk_sum" in c.kernel, set()).add(c.splits)
    assert counts[True] == {3, 9}, p
    assert 9 not in counts[False] and 4 in counts[False], p


def test_cutlass2x_slice_summing_kernels_are_offered_any_count(tf32_matmul):
    """CUTLASS 2.x's parallel split-K builds (TF32, float64) cut K into any count of slices, the
    last one shorter: a small output over a long K is offered them past serial split-K's 16, at
    counts that do not divide K (14927 is prime), and nothing else of theirs (their data-parallel
    launch is the plain build's)."""
    tf32_matmul(True)
    kernels = {k.name: k for k in cutlass_ops.list_kernels()}
    if not any(k.family == "cutlass2x" and k.slice_sum == "second-kernel" for k in kernels.values()):
        pytest.skip("built without the CUTLASS 2.x kernels")
    for dtype, precision in ((torch.float32, "tf32"), (torch.float64, "f64")):
        p = plan(meta(192, 14927, dtype, "c"), meta(14927, 40, dtype, "c"), device="h200")
        summing = [c for c in p.candidates if kernels[c.kernel].family == "cutlass2x"
                   and kernels[c.kernel].slice_sum == "second-kernel"]
        assert summing and all(c.decomposition == "split-k" for c in summing), p
        assert all(kernels[c.kernel].dtype == precision for c in summing), p
        counts = {c.splits for c in summing}
        assert max(counts) > 16 and {3, 24, 48} <= counts, counts
        serial = {c.splits for c in p.candidates if c.decomposition == "split-k"
                  and kernels[c.kernel].slice_sum == "serial"}
        assert serial and max(serial) <= 16, serial


def test_sixteen_bit_cutlass2x_kernels_never_meet_k_slices_in_16_bit():
    """Serial split-K would round every partial sum to D's 16-bit type (fuzz seed 18: 7x2x911 at
    8x torch's error); those kernels split K on CUTLASS's stream-K kernel instead, whose
    partials meet in a float32 workspace, and offer stream-K too."""
    kernels = {k.name: k for k in cutlass_ops.list_kernels()}
    sixteen_bit = [k for k in kernels.values() if k.family == "cutlass2x" and k.dtype in ("f16", "bf16")]
    assert sixteen_bit
    for k in sixteen_bit:
        assert k.split_k_in_workspace and {"split-k", "stream-k"} <= set(k.decompositions), k
    assert not any(k.split_k_in_workspace for k in kernels.values() if k.dtype not in ("f16", "bf16"))
    for device in ("h100", "a100"):
        p = plan(meta(7, 911), meta(911, 2), device=device)
        split = [c for c in p.candidates if c.decomposition == "split-k" and kernels[c.kernel].family == "cutlass2x"]
        assert split, p
        assert all(kernels[c.kernel].split_k_in_workspace for c in split if kernels[c.kernel].dtype == "bf16")


def test_3xtf32_runs_ieee_fp32_where_its_error_would_exceed_torchs():
    """Precision policy (planner.h, kTf32x3MinK): under K = 256, 3xTF32 is less accurate than
    torch's IEEE fp32, so only IEEE fp32 kernels are candidates."""
    previous = cutlass_ops.fp32_mode()
    try:
        cutlass_ops.set_fp32_mode("3xtf32")
        short = plan(meta(4096, 128, torch.float32), meta(128, 4096, torch.float32))
        assert short.candidates and all(c.kernel.split("_")[2] == "f32" for c in short.candidates), short
        assert short.dtype == "f32"
        long = plan(meta(4096, 4096, torch.float32), meta(4096, 4096, torch.float32))
        kinds = {c.kernel.split("_")[2] for c in long.candidates}
        assert "3xtf32" in kinds and "f32" in kinds, long
        assert long.dtype == long.kernel.split("_")[2]
    finally:
        cutlass_ops.set_fp32_mode(previous)


def test_uncalibrated_devices_are_planned_from_their_properties():
    """No sweep for an A100 ships: its constants come from its peak rates (explain says so), and
    the ranking still orders the tiles by their throughput."""
    p = plan(meta(8192, 8192), meta(8192, 8192), device="a100")
    assert p.calibration == "" and not any(c.calibrated for c in p.candidates)
    assert "peak rates" in str(p)
    big_first = [c.kernel for c in p.candidates if c.variant == "in-place"]
    assert big_first.index("cutlass2x_sm80_bf16_rr_128x256x64_3s_a8") < big_first.index(
        "cutlass2x_sm80_bf16_rr_simt_128x128x8_2s_a1")


def test_every_kernel_takes_one_of_the_forced_shapes():
    """tests/test_kernels_cuda.py forces every kernel of the GPU it runs on (the suite's H100) on
    FORCED_SHAPES in the kernel's own layouts and skips the shapes it refuses (alignment, a
    few-row or few-column kernel's limit): each kernel must take at least one, or the GPU suite
    would skip it everywhere."""
    device = "h100"
    kernels = [k for k in cutlass_ops.list_kernels((9, 0)) if not k.fuses_epilogue]
    assert kernels
    for kernel in kernels:
        dtype = KERNEL_DTYPES[kernel.dtype]
        taken = []
        for m, n, k in FORCED_SHAPES:
            a, b = meta(m, k, dtype, kernel.layouts[0]), meta(k, n, dtype, kernel.layouts[1])
            try:
                plan(a, b, device=device, kernel=kernel.name)
            except ValueError:
                continue
            taken.append((m, n, k))
        assert taken, f"{kernel.name} refuses every shape of FORCED_SHAPES"

