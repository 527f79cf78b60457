"""Every kernel that runs a batch in one launch (KernelInfo.batched), forced on a batch: padded
batch strides, each operand in the kernel's layouts, an operand shared by the whole batch
(batch stride 0), the output poisoned with NaN so an unwritten element shows. The planner's
choices for batches are tests/test_bmm_matmul_cuda.py's."""

import math

import pytest
import torch

import cutlass_ops
from mm_testing import KERNEL_DTYPES, aligned_shape, assert_batch_matches_reference, batch_of, capability, capture_error

pytestmark = pytest.mark.gpu

_C = cutlass_ops._extension._C


def kernels_here(batched, cap=None):
    cap = capability(cap)
    if cap is None:
        return []
    return [k for k in _C.kernels() if k["batched"] == batched and not k["fuses_epilogue"]
            and k["role"] == "product" and any(info.name == k["name"] for info in cutlass_ops.list_kernels(cap))]


def by_name(name):
    return next(k for k in cutlass_ops.list_kernels() if k.name == name)


@pytest.mark.parametrize("kernel", kernels_here(True), ids=lambda k: k["name"])
@pytest.mark.parametrize("m,n,k", [(296, 264, 136), (97, 83, 71)])
@pytest.mark.parametrize("shared", ["none", "a", "b"])
def test_batched_kernel(kernel, m, n, k, shared):
    info = by_name(kernel["name"])
    m, n, k = aligned_shape(info, m, n, k)
    dtype = KERNEL_DTYPES[info.dtype]
    align = max(info.alignment)
    batch = 3
    a = batch_of(batch, m, k, dtype, info.layouts[0], pad=2 * align, shared=shared == "a")
    b = batch_of(batch, k, n, dtype, info.layouts[1], pad=5 * align, shared=shared == "b")
    # NaN where the output will be: an element the kernel forgets stays NaN.
    torch.cuda.empty_cache()
    torch.full((batch * m * n,), math.nan, dtype=dtype, device="cuda")
    try:
        out = _C.bmm_with_kernel(a, b, info.name)
    except (ValueError, RuntimeError) as refusal:
        # Only what stops the kernel on a single matrix may stop it on the batch.
        assert any(limit in str(refusal) for limit in ("aligned to", "rows (M)", "columns (N)", "row length")), refusal
        pytest.skip(f"{info.name}: {refusal}")
    assert out.shape == (batch, m, n)
    assert_batch_matches_reference(out, a, b, info, context=f"{info.name} {m}x{n}x{k} shared {shared}")


@pytest.mark.parametrize("kernel", kernels_here(True), ids=lambda k: k["name"])
def test_batched_kernel_past_a_grid_dimension(kernel):
    """65,536 matrices, one more than a grid's y or z dimension holds (65,535 blocks): a kernel
    whose batch is a grid dimension (KernelInfo.max_batch: CUTLASS 2.x's, the streaming ones) is
    refused with the limit before anything launches; the others (CUTLASS 3.x's persistent
    kernels) write every matrix, the last ones past the limit included."""
    info = by_name(kernel["name"])
    m, n, k = aligned_shape(info, 8, 24, 40)
    dtype = KERNEL_DTYPES[info.dtype]
    batch = 65536
    a = batch_of(batch, m, k, dtype, info.layouts[0], pad=0)
    b = batch_of(batch, k, n, dtype, info.layouts[1], pad=0)
    torch.cuda.empty_cache()
    torch.full((batch * m * n,), math.nan, dtype=dtype, device="cuda")
    try:
        out = _C.bmm_with_kernel(a, b, info.name)
    except (ValueError, RuntimeError) as refusal:
        if info.max_batch is not None and info.max_batch < batch:
            assert f"runs batches of at most {info.max_batch} matrices per launch" in str(refusal), refusal
            return
        assert any(limit in str(refusal) for limit in ("aligned to", "rows (M)", "columns (N)", "row length")), refusal
        pytest.skip(f"{info.name}: {refusal}")
    assert info.max_batch is None or info.max_batch >= batch, f"{info.name} ran a batch past its max_batch"
    assert out.shape == (batch, m, n) and bool(torch.isfinite(out).all()), f"{info.name}: unwritten matrices"
    assert_batch_matches_reference(out, a, b, info, context=f"{info.name} batch {batch} {m}x{n}x{k}",
                                   matrices=(0, 1, 65534, 65535))


def test_one_matrix_kernels_refuse_a_batch():
    """Every one-matrix kernel that takes one 8x64x64 product of its layouts (8 rows: within the
    few-row kernels' max_m) refuses a batch of two with the reason; those that refuse the single
    product (precision mode, alignment, columns) have other reasons first."""
    kernels = kernels_here(False)
    if not kernels:
        pytest.skip("no GPU")
    exercised = []
    for kernel in kernels:
        info = by_name(kernel["name"])
        dtype = KERNEL_DTYPES[info.dtype]
        a = batch_of(2, 8, 64, dtype, info.layouts[0], pad=0)
        b = batch_of(2, 64, 64, dtype, info.layouts[1], pad=0)
        if capture_error(lambda: _C.bmm_with_kernel(a[:1], b[:1], info.name))[0] is not None:
            continue
        with pytest.raises((ValueError, RuntimeError), match="runs one product per launch, the call is a batch of 2"):
            _C.bmm_with_kernel(a, b, info.name)
        exercised.append(info.name)
    assert len(exercised) >= 20, exercised


def test_every_sm90_and_sm80_product_kernel_family_runs_batches():
    """The CUTLASS kernels (3.x and 2.x) run batches, but for the ones whose batch mode holds
    something else (the slice-summing split-K kernels), that prepare one matrix per operand
    (3xTF32's split pass) or that were swept and tested on single products only (the SM90 cp.async
    builds: cutlass3x/sm90_gemm.cuh)."""
    if not torch.cuda.is_available():
        pytest.skip("no GPU")
    for k in _C.kernels():
        if k["family"] in ("cutlass3x", "cutlass2x") and not k["fuses_epilogue"]:
            cp_async = k["mainloop"] == "cp-async-warp-specialized"
            one_matrix = cp_async or "presplit" in k["name"] or "splitk_sum" in k["name"]
            assert k["batched"] != one_matrix, k["name"]
