"""cutlass_ops.mm on the GPU: results as accurate as torch.mm's on every dtype, layout and
edge shape, judged against float64 on fresh random inputs."""

import math

import pytest
import torch

import cutlass_ops
from mm_testing import (planned, EDGE_SHAPES, LARGE_SHAPES, LAYOUT_PAIRS, PRECISIONS, assert_matches_reference, matrix,
                        poison_allocator)

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("name,dtype,tf32", PRECISIONS, ids=[p[0] for p in PRECISIONS])
@pytest.mark.parametrize("layouts", LAYOUT_PAIRS)
@pytest.mark.parametrize("m,n,k", EDGE_SHAPES + LARGE_SHAPES, ids=lambda v: str(v))
def test_matches_torch_mm(name, dtype, tf32, layouts, m, n, k, tf32_matmul):
    tf32_matmul(tf32)
    a = matrix(m, k, dtype, layouts[0])
    b = matrix(k, n, dtype, layouts[1])
    poison_allocator(m * n, dtype)
    ours = cutlass_ops.mm(a, b)
    plan = cutlass_ops.explain(a, b)
    assert_matches_reference(ours, a, b, name, context=f"{name} {layouts} {m}x{n}x{k} via {plan.kernel}")
    assert ours.is_contiguous()


@pytest.mark.parametrize("name,dtype,tf32", PRECISIONS, ids=[p[0] for p in PRECISIONS])
@pytest.mark.parametrize("layouts", LAYOUT_PAIRS)
@pytest.mark.parametrize("offset,ld_pad", [(1, 0), (3, 5), (0, 3), (8, 8)])
def test_offset_and_padded_views(name, dtype, tf32, layouts, offset, ld_pad, tf32_matmul):
    """Storage offsets and leading dims that break 16-byte alignment still compute right."""
    tf32_matmul(tf32)
    m, n, k = 257, 130, 199
    a = matrix(m, k, dtype, layouts[0], offset=offset, ld_pad=ld_pad)
    b = matrix(k, n, dtype, layouts[1], offset=offset + 1, ld_pad=ld_pad)
    ours = cutlass_ops.mm(a, b)
    plan = cutlass_ops.explain(a, b)
    assert not (plan.copy_input or plan.copy_mat2), plan
    assert_matches_reference(ours, a, b, name, context=f"{name} {layouts} offset {offset} pad {ld_pad}")


@pytest.mark.parametrize("m", list(range(1, 131, 3)) + [255, 256, 257])
def test_m_sweep_bf16(m):
    a = matrix(m, 1024, torch.bfloat16)
    b = matrix(1024, 768, torch.bfloat16)
    assert_matches_reference(cutlass_ops.mm(a, b), a, b, "bf16", context=f"M={m}")


@pytest.mark.parametrize("name,dtype,tf32", PRECISIONS, ids=[p[0] for p in PRECISIONS])
def test_strided_views_that_need_a_copy(name, dtype, tf32, tf32_matmul):
    tf32_matmul(tf32)
    a = matrix(300, 400, dtype)[:, ::2]  # column stride 2: no BLAS layout
    b = torch.randn(1, 77, dtype=dtype, device="cuda").expand(200, 77)  # row stride 0
    plan = cutlass_ops.explain(a, b)
    assert plan.copy_input and plan.copy_mat2
    assert_matches_reference(cutlass_ops.mm(a, b), a, b, name)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32, torch.float64])
@pytest.mark.parametrize("m,n,k", [(0, 5, 7), (5, 0, 7), (0, 0, 7), (5, 7, 0), (0, 0, 0)])
def test_empty_dimensions(dtype, m, n, k):
    a = torch.randn(m, k, dtype=dtype, device="cuda")
    b = torch.randn(k, n, dtype=dtype, device="cuda")
    poison_allocator(m * n, dtype)
    ours = cutlass_ops.mm(a, b)
    assert ours.shape == (m, n) and ours.dtype == dtype
    assert torch.equal(ours, torch.mm(a, b))  # K = 0: zeros, not garbage


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32, torch.float64])
def test_nan_and_inf_propagate_like_torch_mm(dtype):
    a = torch.randn(64, 48, dtype=dtype, device="cuda")
    b = torch.randn(48, 40, dtype=dtype, device="cuda")
    a[3, 5] = math.nan
    b[7, 9] = math.inf
    ours, theirs = cutlass_ops.mm(a, b), torch.mm(a, b)
    assert torch.equal(ours.isnan(), theirs.isnan())
    assert torch.equal(ours.isinf(), theirs.isinf())


def test_large_k_accumulates_in_fp32_for_half_types():
    """With K = 65536 an fp16 accumulator would lose ~6 bits; fp32 accumulation keeps torch.mm's accuracy."""
    for name, dtype in (("f16", torch.float16), ("bf16", torch.bfloat16)):
        a = matrix(64, 65536, dtype)
        b = matrix(65536, 64, dtype) * 0.01
        assert_matches_reference(cutlass_ops.mm(a, b), a, b, name, context=f"{name} K=65536")


def test_ops_namespace_entry_points():
    a = matrix(33, 17, torch.float16)
    b = matrix(17, 9, torch.float16)
    out = torch.empty(33, 9, dtype=torch.float16, device="cuda")
    assert torch.equal(torch.ops.cutlass_ops.mm(a, b), cutlass_ops.mm(a, b))
    assert torch.ops.cutlass_ops.mm.out(a, b, out=out) is out
    assert torch.equal(out, cutlass_ops.mm(a, b))


def test_runs_on_the_current_stream():
    a = matrix(2048, 2048, torch.bfloat16)
    b = matrix(2048, 2048, torch.bfloat16)
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        out = cutlass_ops.mm(a, b)
    torch.cuda.current_stream().wait_stream(stream)
    assert_matches_reference(out, a, b, "bf16")


def test_complex_is_handed_to_torch_mm():
    a = torch.randn(20, 30, dtype=torch.complex64, device="cuda")
    b = torch.randn(30, 10, dtype=torch.complex64, device="cuda")
    assert torch.allclose(cutlass_ops.mm(a, b), torch.mm(a, b))
    assert cutlass_ops.explain(a, b).action == "torch.mm"


def test_negative_view_is_resolved():
    a = matrix(40, 30, torch.float32)
    b = matrix(30, 20, torch.float32)
    neg = torch._neg_view(a)
    assert neg.is_neg()
    assert torch.allclose(cutlass_ops.mm(neg, b), torch.mm(-a, b), atol=1e-4, rtol=1e-4)


@pytest.mark.parametrize("name,dtype,tf32", PRECISIONS[:3], ids=[p[0] for p in PRECISIONS[:3]])
@pytest.mark.parametrize("layouts", LAYOUT_PAIRS)
@pytest.mark.parametrize("out_form", ["none", "column_major", "offset"])
# (3702, 2030, 512): K needs no padding, so an operand is staged by a copy with nothing to pad.
@pytest.mark.parametrize("m,n,k", [(1537, 1029, 2051), (777, 1234, 4321), (3702, 2030, 512)])
def test_staged_unaligned_problems(name, dtype, tf32, layouts, out_form, m, n, k, tf32_matmul):
    """Odd shapes on Hopper go through zero-padded aligned copies to the SM90 kernels."""
    if torch.cuda.get_device_capability() != (9, 0):
        pytest.skip("staging targets the SM90 kernels")
    tf32_matmul(tf32)
    a = matrix(m, k, dtype, layouts[0], offset=1)
    b = matrix(k, n, dtype, layouts[1])
    out = None
    if out_form == "column_major":
        out = torch.full((n, m), math.nan, dtype=dtype, device="cuda").t()
    elif out_form == "offset":
        out = torch.full((m * n + 1,), math.nan, dtype=dtype, device="cuda")[1:].view(m, n)
    plan = cutlass_ops.explain(a, b, out=out)
    staged = [c for c in plan.candidates if c.variant.startswith("staged")]
    assert staged, plan
    # The cheapest candidate of each staged variant (B copied row-major, B copied column-major:
    # a straight copy of one operand and a transposing copy of the other in every layout pair),
    # whatever the model picks, then the model's own pick.
    variants = {}
    for candidate in staged:
        variants.setdefault(candidate.variant, candidate)
    for candidate in variants.values():
        with planned(a, b, candidate, out=out):
            pinned = cutlass_ops.explain(a, b, out=out)
            assert pinned.staged and pinned.kernel.startswith(("cutlass3x_sm90", "handwritten_sm90")), pinned
            result = cutlass_ops.mm(a, b, out=out)
            assert out is None or result is out
            assert_matches_reference(result, a, b, name, context=f"{name} {layouts} {out_form} via "
                                     f"{pinned.kernel} ({candidate.variant})")
        if out is not None:
            out.fill_(math.nan)
    result = cutlass_ops.mm(a, b, out=out)
    assert_matches_reference(result, a, b, name, context=f"{name} {layouts} {out_form} via {plan.kernel}")


TF32_ROW_MAJOR_B_CASES = [
    # (B, m, n, k, a swap-AB kernel that reads B in place: aligned B only)
    ("aligned", 128, 4096, 2048, "tf32_rr_128x128x32_1x1x1_coop_streamk_swapab"),
    ("aligned", 1024, 2048, 2048, "tf32_rr_256x128x32_1x1x1_coop_streamk_swapab"),
    ("aligned", 520, 2048, 4096, "tf32_rr_256x128x32_1x1x1_coop_streamk_swapab"),
    ("aligned", 8200, 264, 520, "tf32_rr_64x64x32_1x1x1_pingpong_swapab"),
    ("aligned", 520, 1024, 1000, "tf32_rr_128x128x32_1x1x1_coop_streamk_swapab"),
    ("aligned", 3072, 2080, 1040, "tf32_rr_256x128x32_1x2x1_coop_swapab"),
    ("misaligned", 2048, 2048, 2048, None),
    ("misaligned", 3072, 2080, 1040, None),
]


@pytest.mark.parametrize("out_form", ["none", "out", "column_major", "offset"])
@pytest.mark.parametrize("b_form,m,n,k,kernel", TF32_ROW_MAJOR_B_CASES)
def test_tf32_row_major_b_on_hopper(b_form, m, n, k, kernel, out_form, tf32_matmul):
    """Row-major x row-major TF32 on Hopper (TF32 WGMMA cannot read a row-major B from shared
    memory): the swap-AB kernels (D^T = B^T A^T) read an aligned B in place, or B is copied
    column-major (K-major) for the SM90 "rc" kernels; each path pinned, then the cost model's
    own pick. The inputs are left untouched."""
    if torch.cuda.get_device_capability() != (9, 0) or not any(
            kern.family == "cutlass3x" for kern in cutlass_ops.list_kernels()):
        pytest.skip("the swap-AB kernels and the K-major copy are the SM90 TF32 paths")
    tf32_matmul(True)
    a = matrix(m, k, torch.float32)
    b = matrix(k, n, torch.float32, ld_pad=0 if b_form == "aligned" else 1)
    a_before, b_before = a.clone(), b.clone()
    out = None
    if out_form == "out":
        out = torch.full((m, n), math.nan, device="cuda")
    elif out_form == "column_major":
        out = torch.full((n, m), math.nan, device="cuda").t()
    elif out_form == "offset":
        out = torch.full((m * n + 4,), math.nan, device="cuda")[4:].view(m, n)
    plan = cutlass_ops.explain(a, b, out=out)
    pins = []
    if out_form != "column_major":
        # (A column-major out transposes the problem: B's role goes to A^T, already K-major.)
        kmajor = [c for c in plan.candidates if c.variant == "kmajor-b"]
        assert kmajor, plan
        pins.append(kmajor[0])
        if kernel is not None:
            pins.append(next(c for c in plan.candidates if c.kernel == f"cutlass3x_sm90_{kernel}"))
        # out= is on its own storage: written in place, even beside a padded (non-dense) B,
        # whose overlap torch's check cannot judge.
        assert not plan.out_via_temp, plan
    for candidate in [*pins, None]:
        if out is not None:
            out.fill_(math.nan)
        if candidate is None:
            result, how = cutlass_ops.mm(a, b, out=out), plan
        else:
            with planned(a, b, candidate, out=out):
                how = cutlass_ops.explain(a, b, out=out)
                assert how.copy_b_kmajor == (candidate.variant == "kmajor-b"), how
                assert not (how.staged or how.copy_input or how.copy_mat2), how
                result = cutlass_ops.mm(a, b, out=out)
        assert out is None or result is out
        assert torch.equal(a, a_before) and torch.equal(b, b_before)
        assert_matches_reference(result, a, b, "tf32", context=f"{m}x{n}x{k} {b_form} B, {out_form} via {how.kernel}")


def test_tf32_kmajor_copy_of_a_transposed_plan(tf32_matmul):
    """A column-major out turns the problem around (D^T = B^T A^T): with column-major A and B
    the kernel's B is A^T, row-major, and from 8192 columns of D (the kernel's rows) it is
    copied K-major, through the transpose kernel, for the "rc" kernel."""
    if torch.cuda.get_device_capability() != (9, 0) or not any(
            kern.family == "cutlass3x" for kern in cutlass_ops.list_kernels()):
        pytest.skip("the K-major copy is an SM90 TF32 path")
    tf32_matmul(True)
    m, n, k = 264, 8200, 520
    a, b = matrix(m, k, torch.float32, "c"), matrix(k, n, torch.float32, "c")
    out = torch.full((n, m), math.nan, device="cuda").t()
    plan = cutlass_ops.explain(a, b, out=out)
    kmajor = next(c for c in plan.candidates if c.variant == "kmajor-b")
    with planned(a, b, kmajor, out=out):
        pinned = cutlass_ops.explain(a, b, out=out)
        assert pinned.transposed and pinned.copy_b_kmajor and pinned.kernel.startswith("cutlass3x_sm90_tf32_rc_"), pinned
        assert cutlass_ops.mm(a, b, out=out) is out
    assert_matches_reference(out, a, b, "tf32", context=f"{m}x{n}x{k} transposed, B copied K-major via {pinned.kernel}")


@pytest.mark.parametrize("name,dtype,tf32", PRECISIONS, ids=[p[0] for p in PRECISIONS])
@pytest.mark.parametrize("out_form", ["none", "out", "strided_column", "offset"])
@pytest.mark.parametrize("m,k", [(65536, 4096), (4097, 33), (2, 8)])
def test_matrix_vector_products(name, dtype, tf32, out_form, m, k, tf32_matmul):
    """M x 1 results run transposed (1 x M = mat2^T self^T): out itself when it is a column in
    memory, else the temporary it is written through; correct either way."""
    tf32_matmul(tf32)
    a = matrix(m, k, dtype)
    b = matrix(k, 1, dtype)
    out = None
    if out_form == "out":
        out = torch.full((m, 1), math.nan, dtype=dtype, device="cuda")
    elif out_form == "strided_column":
        wide = torch.full((m, 3), math.nan, dtype=dtype, device="cuda")
        out = wide[:, 1:2]
    elif out_form == "offset":
        out = torch.full((m + 1,), math.nan, dtype=dtype, device="cuda")[1:].view(m, 1)
    plan = cutlass_ops.explain(a, b, out=out)
    if out_form == "strided_column":
        # Written in place, one element per row (ld 3): no temporary.
        assert not plan.out_via_temp and plan.out.ld == 3, plan
    else:
        assert plan.transposed and plan.problem == (1, m, k), plan
    result = cutlass_ops.mm(a, b, out=out)
    assert out is None or result is out
    if out_form == "strided_column":
        assert torch.isnan(wide[:, 0]).all() and torch.isnan(wide[:, 2]).all()  # its neighbours untouched
    assert_matches_reference(result, a, b, name, context=f"{name} {m}x1x{k} {out_form} via {plan.kernel}")


@pytest.mark.parametrize("m,n,k", [(264, 520, 1001), (1000, 776, 8191), (8, 8, 3)])
def test_tf32_column_major_a_through_k_major_copies(m, n, k, tf32_matmul):
    """SM90's TF32 kernels take a column-major A only beside a K-major B: in "cr" with a K no
    multiple of 4, which no K-major copy of B can align, zero-padded K-major copies of A and B
    (staged-col-b) reach the "rc" kernels. The staging buffers come from NaN-filled blocks, so
    padding left unzeroed shows in the result; out= keeps its identity and the inputs their
    values."""
    if torch.cuda.get_device_capability() != (9, 0) or not any(
            kern.family == "cutlass3x" for kern in cutlass_ops.list_kernels()):
        pytest.skip("the staged copies for TF32 WGMMA are an SM90 path")
    tf32_matmul(True)
    a, b = matrix(m, k, torch.float32, "c"), matrix(k, n, torch.float32, "r")
    a_before, b_before = a.clone(), b.clone()
    out = torch.full((m, n), math.nan, device="cuda")
    plan = cutlass_ops.explain(a, b, out=out)
    staged = [c for c in plan.candidates if c.variant == "staged-col-b"]
    assert staged and all(c.kernel.startswith("cutlass3x_sm90_tf32_rc_") for c in staged), plan
    k_padded, n_padded = -(-k // 4) * 4, -(-n // 4) * 4
    for candidate in (staged[0], staged[-1]):
        out.fill_(math.nan)
        nan_blocks = [torch.full((size,), math.nan, device="cuda") for size in (m * k_padded, k_padded * n_padded, m * n_padded)]
        del nan_blocks  # back to the caching allocator, NaN-filled, for the staging buffers
        with planned(a, b, candidate, out=out):
            pinned = cutlass_ops.explain(a, b, out=out)
            assert pinned.staged and pinned.kernel == candidate.kernel, pinned
            assert cutlass_ops.mm(a, b, out=out) is out
        assert torch.equal(a, a_before) and torch.equal(b, b_before)
        assert_matches_reference(out, a, b, "tf32", context=f"{m}x{n}x{k} cr via {candidate.kernel}")
