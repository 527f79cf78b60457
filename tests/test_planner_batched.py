"""Planning batches (bmm) through explain() on meta tensors: no GPU needed.

Two 3-D tensors are a bmm call: each matrix of the batch is classified as mm classifies a matrix,
the batch strides count toward alignment, an output whose matrices would overlap goes through a
temporary, and only kernels that run a batch in one launch, data-parallel and in place, are
candidates."""

import pytest
import torch

import cutlass_ops
from mm_testing import capture_error

H100 = "h100"


def batch_of(batch, rows, cols, layout="r", pad=0, dtype=torch.bfloat16, shared=False):
    """(batch, rows, cols) meta view: each matrix row- ('r') or column-major ('c'), the matrices
    `pad` elements further apart than packed (or all one matrix: batch stride 0)."""
    size = rows * cols
    stride = 0 if shared else size + pad
    strides = (stride, cols, 1) if layout == "r" else (stride, 1, rows)
    base = torch.empty(size + (batch - 1) * stride, dtype=dtype, device="meta")
    return base.as_strided((batch, rows, cols), strides)


def has_sm90():
    return any(k.family == "cutlass3x" for k in cutlass_ops.list_kernels())


needs_sm90 = pytest.mark.skipif(not has_sm90(), reason="built without the sm90a kernels")


@needs_sm90
@pytest.mark.parametrize("la,lb", [("r", "r"), ("r", "c"), ("c", "r"), ("c", "c")])
def test_a_batch_runs_in_place_in_one_launch(la, lb):
    p = cutlass_ops.explain(batch_of(16, 512, 64, la), batch_of(16, 64, 512, lb), device=H100)
    assert p.batch == 16 and p.problem == (512, 512, 64)
    assert not (p.copy_input or p.copy_mat2 or p.out_via_temp or p.staged or p.copy_b_kmajor), p
    assert p.a.batch_stride == 512 * 64 and p.b.batch_stride == 64 * 512 and p.out.batch_stride == 512 * 512
    assert "problem: a batch of 16, each 512x512x64" in str(p) and "batch stride 32768" in str(p)
    kernels = {k.name: k for k in cutlass_ops.list_kernels()}
    assert kernels[p.kernel].batched and p.decomposition == "data-parallel"
    # Every candidate takes the batch in place, data-parallel, on a batched kernel.
    assert p.candidates and all(c.variant == "in-place" and c.decomposition == "data-parallel"
                                and kernels[c.kernel].batched for c in p.candidates)


@needs_sm90
def test_one_matrix_kernels_are_refused_with_the_reason():
    p = cutlass_ops.explain(batch_of(4, 256, 256), batch_of(4, 256, 256), device=H100)
    reasons = dict(p.refused)
    one_matrix = [k.name for k in cutlass_ops.list_kernels() if not k.batched and not k.fuses_epilogue
                  and k.dtype == "bf16" and k.layouts == "rr" and k.name in reasons]
    assert one_matrix, p.refused
    for name in one_matrix:
        assert "runs one product per launch, the call is a batch of 4" in reasons[name] or "rows (M)" in reasons[name]


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float64])
def test_batches_past_a_grid_dimension_reach_only_kernels_that_take_them(dtype):
    """CUDA grids hold at most 65,535 blocks along y and z, where CUTLASS 2.x's kernels and the
    hand-written streaming ones put the batch (CUTLASS's own can_implement refuses more, which
    the launch would report as the planner's error). From 65,536 matrices the planner refuses
    them with the limit; CUTLASS 3.x's persistent kernels take the batch, and where no kernel
    does (float64: CUTLASS 2.x's DMMA kernels only) torch runs it."""
    kernels = {k.name: k for k in cutlass_ops.list_kernels()}
    limited = {name for name, k in kernels.items() if k.batched and k.max_batch == 65535}
    assert any(name.startswith("cutlass2x_") for name in limited), "CUTLASS 2.x's batch is gridDim.z"

    def refused_for_the_batch(p):
        return {name for name, why in p.refused if "at most 65535 matrices per launch" in why}

    within = cutlass_ops.explain(batch_of(65535, 8, 64, dtype=dtype), batch_of(65535, 64, 16, dtype=dtype), device=H100)
    assert not refused_for_the_batch(within), within
    past = cutlass_ops.explain(batch_of(65536, 8, 64, dtype=dtype), batch_of(65536, 64, 16, dtype=dtype), device=H100)
    assert past.batch == 65536
    assert refused_for_the_batch(past) == {c.kernel for c in within.candidates} & limited, past
    assert all(c.kernel not in limited for c in past.candidates), past
    if dtype == torch.float64:
        assert past.action == "torch.mm" and past.kernel is None and not past.candidates, past
    elif has_sm90():
        assert past.action == "kernel" and kernels[past.kernel].max_batch >= 65536, past


def test_a_shared_operand_keeps_batch_stride_zero():
    weight = batch_of(8, 64, 128, shared=True)
    p = cutlass_ops.explain(batch_of(8, 256, 64), weight, device=H100)
    assert p.b.batch_stride == 0 and not p.copy_mat2 and p.kernel is not None


def test_the_batch_stride_counts_toward_alignment():
    aligned = cutlass_ops.explain(batch_of(4, 64, 64), batch_of(4, 64, 64), device=H100)
    odd = cutlass_ops.explain(batch_of(4, 64, 64, pad=1), batch_of(4, 64, 64), device=H100)
    assert aligned.a.align == 8 and odd.a.align == 1
    assert odd.a.batch_stride == 64 * 64 + 1


def test_an_output_whose_matrices_overlap_goes_through_a_temporary():
    a, b = batch_of(4, 32, 16), batch_of(4, 16, 32)
    overlapping = torch.empty(32 * 32 + 3 * 16, dtype=torch.bfloat16, device="meta").as_strided((4, 32, 32),
                                                                                              (16, 32, 1))
    assert cutlass_ops.explain(a, b, out=overlapping, device=H100).out_via_temp
    padded = torch.empty(4 * (32 * 32 + 8), dtype=torch.bfloat16, device="meta").as_strided((4, 32, 32),
                                                                                          (32 * 32 + 8, 32, 1))
    p = cutlass_ops.explain(a, b, out=padded, device=H100)
    assert not p.out_via_temp and p.out.batch_stride == 32 * 32 + 8


def test_a_column_major_batch_output_transposes_each_product():
    out = torch.empty(4, 48, 32, dtype=torch.bfloat16, device="meta").transpose(1, 2)  # each 32 x 48 column-major
    p = cutlass_ops.explain(batch_of(4, 32, 16), batch_of(4, 16, 48), out=out, device=H100)
    assert p.transposed and p.problem == (48, 32, 16) and not p.out_via_temp
    # The transposed problem's A is mat2^T: its batch stride is mat2's.
    assert p.a.batch_stride == 16 * 48 and p.b.batch_stride == 32 * 16


def test_strides_no_blas_layout_describes_are_copied():
    # Every other column of each matrix: neither row- nor column-major.
    base = torch.empty(4 * 64 * 128, dtype=torch.bfloat16, device="meta")
    sliced = base.as_strided((4, 64, 64), (64 * 128, 128, 2))
    p = cutlass_ops.explain(sliced, batch_of(4, 64, 64), device=H100)
    assert p.copy_input and not p.copy_mat2
    assert p.a.batch_stride == 64 * 64  # the contiguous copy's


def test_mismatched_batches_raise_torchs_error():
    """Mismatched batch counts or inner sizes: torch.bmm's exception, its type and message."""
    for a, b in ((batch_of(4, 8, 8), batch_of(3, 8, 8)), (batch_of(4, 8, 8), batch_of(4, 9, 8))):
        theirs = capture_error(lambda: torch.bmm(a, b))
        assert theirs[0] is RuntimeError
        assert capture_error(lambda: cutlass_ops.explain(a, b, device=H100)) == theirs
