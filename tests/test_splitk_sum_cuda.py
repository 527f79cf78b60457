"""Split-K summed by a second kernel (cutlass3x/sm90_splitk_sum.cuh): K cut into equal
slices run as a batch of GEMMs writing float32 partials, then summed in slice order.

Checked against float64 (as accurate as torch.mm), run to run bitwise, in both layouts it is
built for, with slice counts that are not powers of two, and writing into a strided out=."""

import pytest
import torch

import cutlass_ops
from mm_testing import KERNEL_DTYPES, assert_matches_reference, capability, matrix, planned

pytestmark = pytest.mark.gpu


def sum_kernels(cap=None):
    cap = capability(cap)
    if cap is None:
        return []
    # (CUTLASS 2.x's parallel split-K builds, any slice count: tests/test_splitk_sum_2x_cuda.py.)
    return [k for k in cutlass_ops.list_kernels(cap) if "splitk_sum" in k.name and k.family == "cutlass3x"]


@pytest.mark.parametrize("kernel", sum_kernels(), ids=lambda k: k.name)
@pytest.mark.parametrize("m,n,k,slices", [
    (256, 256, 131072, 32),  # 2 tiles of 128x256: 32 slices (the cap) of 4096
    (200, 296, 65536, 32),   # ragged tiles (2 x 2): at most 33 slices; 32 divide K
    (256, 256, 131000, 25),  # K = 8 x 16375: 25 slices of 5240 (no power of two divides it)
    (136, 8, 24576, 24),     # 2 tiles, one of 8 columns: 32 slices would be 768 deep, 24 are 1024
])
def test_slices_sum_to_the_reference(kernel, m, n, k, slices):
    """Each slice count pinned (cutlass_ops.tuning.pin): equal 16-byte slices summed in order."""
    dtype = KERNEL_DTYPES[kernel.dtype]
    a = matrix(m, k, dtype, kernel.layouts[0])
    b = matrix(k, n, dtype, kernel.layouts[1])
    with planned(a, b, kernel.name, "split-k", slices):
        plan = cutlass_ops.explain(a, b)
        assert (plan.kernel, plan.decomposition, plan.splits) == (kernel.name, "split-k", slices), plan
        out = cutlass_ops.mm(a, b)
        assert_matches_reference(out, a, b, kernel.dtype, context=kernel.name)
        # The slices are summed in a fixed order: the same bits on every run.
        assert torch.equal(out, cutlass_ops.mm(a, b))


@pytest.mark.parametrize("kernel", sum_kernels(), ids=lambda k: k.name)
def test_strided_out_is_written_only_where_it_should_be(kernel):
    dtype = KERNEL_DTYPES[kernel.dtype]
    m, n, k = 192, 248, 32768
    a = matrix(m, k, dtype, kernel.layouts[0])
    b = matrix(k, n, dtype, kernel.layouts[1])
    big = torch.full((m, n + 13), 7.0, dtype=dtype, device="cuda")
    out = big[:, 5:5 + n]  # leading dim n + 13, unaligned start
    cutlass_ops.mm(a, b, out=out, kernel=kernel.name)
    assert_matches_reference(out, a, b, kernel.dtype, context=kernel.name)
    assert (big[:, :5] == 7).all() and (big[:, 5 + n:] == 7).all()


def test_offered_for_few_tiles_and_a_long_k():
    """Few tiles and a long K: the slice-summing kernel is a candidate with up to 64 slices;
    pinned at the most the model offers, and as auto dispatch runs it, the result is right."""
    if not sum_kernels():
        pytest.skip("built without the sm90a kernels")
    a, b = matrix(256, 131072, torch.bfloat16), matrix(131072, 256, torch.bfloat16)
    plan = cutlass_ops.explain(a, b)
    sliced = [c for c in plan.candidates if "splitk_sum" in c.kernel and c.splits >= 16]
    assert sliced, plan
    with planned(a, b, max(sliced, key=lambda c: c.splits)):
        assert_matches_reference(cutlass_ops.mm(a, b), a, b, "bf16", context=str(cutlass_ops.explain(a, b)))
    assert_matches_reference(cutlass_ops.mm(a, b), a, b, "bf16", context=str(plan))


@pytest.mark.parametrize("kernel", sum_kernels(), ids=lambda k: k.name)
def test_tuned_slice_count_that_divides_k(kernel):
    """A tuning entry's slice count (the tuner times 2-64) is used as given; one that does not
    divide K runs as the largest count below it that does."""
    dtype = KERNEL_DTYPES[kernel.dtype]
    m, n, k = 256, 256, 24576
    a = matrix(m, k, dtype, kernel.layouts[0])
    b = matrix(k, n, dtype, kernel.layouts[1])
    entry = {"precision": kernel.dtype, "layout_a": "row" if kernel.layouts[0] == "r" else "col",
             "layout_b": "row" if kernel.layouts[1] == "r" else "col",
             "align": [8, 8, 8], "cc": 90, "sm_count": torch.cuda.get_device_properties(0).multi_processor_count,
             "mnk": [m, n, k], "kernel": kernel.name, "decomposition": "split-k", "splits": 3}
    cutlass_ops._extension._C.tuning_insert(entry)
    try:
        plan = cutlass_ops.explain(a, b)
        assert plan.tuned and plan.kernel == kernel.name and plan.splits == 3, plan
        assert_matches_reference(cutlass_ops.mm(a, b), a, b, kernel.dtype, context=kernel.name)
        # 24576 = 3 x 8192 = 7 x 3510.86: 7 slices run as 6 (4096 each).
        cutlass_ops._extension._C.tuning_insert({**entry, "splits": 7})
        assert cutlass_ops.explain(a, b).splits == 7
        out = cutlass_ops.mm(a, b)
        assert_matches_reference(out, a, b, kernel.dtype, context=kernel.name)
        assert torch.equal(out, cutlass_ops.mm(a, b))
    finally:
        cutlass_ops.tuning.clear()
