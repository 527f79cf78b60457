"""Split-K summed by a second kernel on CUTLASS 2.x (cutlass2x/sm80_splitk_sum.cuh): the TF32 and
float64 GEMMs in CUTLASS's parallel split-K mode, every K slice writing its partial D (D's own
type) at once, then the slices summed in order.

Checked against float64 (torch.mm's accuracy at the kernel's precision), run to run bitwise, in
every layout and alignment built, with slice counts that do not divide K (the last slice
shorter) and counts past serial split-K's 16, into a strided out=, and as dispatch runs a small
output over a long K."""

import pytest
import torch

import cutlass_ops
from mm_testing import aligned_shape, assert_matches_reference, capability, forced_operands, matrix, planned

pytestmark = pytest.mark.gpu


def sum_kernels(cap=None):
    cap = capability(cap)
    if cap is None:
        return []
    return [k for k in cutlass_ops.list_kernels(cap) if k.family == "cutlass2x" and k.slice_sum == "second-kernel"]


@pytest.mark.parametrize("kernel", sum_kernels(), ids=lambda k: k.name)
@pytest.mark.parametrize("m,n,k,slices", [
    (192, 40, 14920, 48),  # three 64x64 tiles (six of 32x64), 48 slices of 312 (TF32) / 320 (float64) and a short last
    (70, 130, 9999, 7),    # ragged tiles both ways, an odd K
    (64, 64, 4096, 64),    # one tile, the most slices offered
    (33, 17, 2000, 3),     # a few slices over a ragged single tile
])
def test_slices_sum_to_the_reference(kernel, m, n, k, slices, tf32_matmul):
    tf32_matmul(kernel.dtype == "tf32")
    m, n, k = aligned_shape(kernel, m, n, k)
    a, b = forced_operands(kernel, m, n, k)
    with planned(a, b, kernel.name, "split-k", slices):
        plan = cutlass_ops.explain(a, b)
        assert (plan.kernel, plan.decomposition, plan.splits) == (kernel.name, "split-k", slices), plan
        out = cutlass_ops.mm(a, b)
        assert_matches_reference(out, a, b, kernel.dtype, context=f"{kernel.name} x{slices}")
        # The slices are summed in a fixed order: the same bits on every run.
        assert torch.equal(out, cutlass_ops.mm(a, b))


@pytest.mark.parametrize("kernel", sum_kernels(), ids=lambda k: k.name)
def test_strided_out_is_written_only_where_it_should_be(kernel, tf32_matmul):
    tf32_matmul(kernel.dtype == "tf32")
    m, n, k = aligned_shape(kernel, 100, 60, 8192)
    a, b = forced_operands(kernel, m, n, k)
    ld = n + 4 * kernel.alignment[2]  # a wider row, D's alignment kept
    big = torch.full((m, ld), 7.0, dtype=a.dtype, device="cuda")
    start = kernel.alignment[2]
    out = big[:, start:start + n]
    with planned(a, b, kernel.name, "split-k", 24, out=out):
        cutlass_ops.mm(a, b, out=out)
    assert_matches_reference(out, a, b, kernel.dtype, context=kernel.name)
    assert (big[:, :start] == 7).all() and (big[:, start + n:] == 7).all()


@pytest.mark.parametrize("kernel", sum_kernels(), ids=lambda k: k.name)
def test_forced_without_a_split_runs_the_plain_build(kernel, tf32_matmul):
    """Forced where the planner offers it no split (tiles that fill the GPU), the kernel runs its
    plain build's data-parallel launch."""
    tf32_matmul(kernel.dtype == "tf32")
    m, n, k = aligned_shape(kernel, 2048, 2048, 64)
    a, b = forced_operands(kernel, m, n, k)
    plan = cutlass_ops.explain(a, b, kernel=kernel.name)
    assert plan.decomposition == "data-parallel", plan
    assert_matches_reference(cutlass_ops.mm(a, b, kernel=kernel.name), a, b, kernel.dtype, context=kernel.name)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_dispatched_small_output_over_a_long_k(dtype, tf32_matmul):
    """As dispatch runs it: a small output over a long K, in every layout, the result right."""
    tf32_matmul(True)
    if not sum_kernels():
        pytest.skip("built without the CUTLASS 2.x kernels")
    for la in "rc":
        for lb in "rc":
            a, b = matrix(185, 10894, dtype, la), matrix(10894, 64, dtype, lb)
            plan = cutlass_ops.explain(a, b)
            precision = "tf32" if dtype == torch.float32 else "f64"
            assert_matches_reference(cutlass_ops.mm(a, b), a, b, precision, context=str(plan))
