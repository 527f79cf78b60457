"""out= semantics on the GPU, against torch.mm's rules: resize warnings, kept strides,
column-major and strided outputs, overlap with the inputs, and an untouched out on error."""

import math
import warnings

import pytest
import torch

import cutlass_ops
from mm_testing import PRECISIONS, assert_matches_reference, capture_error, matrix

pytestmark = pytest.mark.gpu

M, N, K = 129, 70, 96


def operands(dtype=torch.bfloat16):
    return matrix(M, K, dtype), matrix(K, N, dtype)


@pytest.mark.parametrize("name,dtype,tf32", PRECISIONS, ids=[p[0] for p in PRECISIONS])
def test_right_shaped_out_is_written_and_returned(name, dtype, tf32, tf32_matmul):
    tf32_matmul(tf32)
    a, b = operands(dtype)
    out = torch.full((M, N), math.nan, dtype=dtype, device="cuda")
    result = cutlass_ops.mm(a, b, out=out)
    assert result is out
    assert_matches_reference(out, a, b, name)


def test_wrong_shaped_out_is_resized_with_torch_warning():
    a, b = operands()
    theirs_out = torch.empty(3, 3, dtype=a.dtype, device="cuda")
    ours_out = torch.empty(3, 3, dtype=a.dtype, device="cuda")
    with warnings.catch_warnings(record=True) as theirs:
        warnings.simplefilter("always")
        torch.mm(a, b, out=theirs_out)
    with warnings.catch_warnings(record=True) as ours:
        warnings.simplefilter("always")
        cutlass_ops.mm(a, b, out=ours_out)
    assert [(w.category, str(w.message)) for w in ours] == [(w.category, str(w.message)) for w in theirs]
    assert ours_out.shape == (M, N) and ours_out.is_contiguous()
    assert_matches_reference(ours_out, a, b, "bf16")


def test_empty_out_is_resized_silently():
    a, b = operands()
    out = torch.empty(0, dtype=a.dtype, device="cuda")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cutlass_ops.mm(a, b, out=out)
    assert out.shape == (M, N)
    assert_matches_reference(out, a, b, "bf16")


@pytest.mark.parametrize("name,dtype,tf32", PRECISIONS, ids=[p[0] for p in PRECISIONS])
def test_column_major_out_keeps_its_strides(name, dtype, tf32, tf32_matmul):
    tf32_matmul(tf32)
    a, b = operands(dtype)
    out = torch.full((N, M), math.nan, dtype=dtype, device="cuda").t()
    strides = out.stride()
    cutlass_ops.mm(a, b, out=out)
    assert out.stride() == strides
    assert cutlass_ops.explain(a, b, out=out).transposed
    assert_matches_reference(out, a, b, name)


@pytest.mark.parametrize("kind", ["padded rows", "strided columns", "padded column-major"])
def test_non_contiguous_out_leaves_the_rest_of_its_storage_alone(kind):
    a, b = operands()
    if kind == "padded rows":
        base = torch.full((M, N + 13), 7.0, dtype=a.dtype, device="cuda")
        out = base[:, 3:N + 3]
    elif kind == "strided columns":
        base = torch.full((M, 2 * N), 7.0, dtype=a.dtype, device="cuda")
        out = base[:, ::2]
    else:
        base = torch.full((N, M + 9), 7.0, dtype=a.dtype, device="cuda")
        out = base[:, 2:M + 2].t()
    untouched = torch.ones_like(base, dtype=torch.bool)
    written = torch.zeros_like(base, dtype=torch.bool)
    written.as_strided(out.shape, out.stride(), out.storage_offset()).fill_(True)
    untouched &= ~written
    before = base.clone()
    strides = out.stride()
    cutlass_ops.mm(a, b, out=out)
    assert out.stride() == strides
    assert torch.equal(base[untouched], before[untouched]), "wrote outside out's elements"
    assert_matches_reference(out, a, b, "bf16")


def test_out_overlapping_an_input_gets_the_right_answer():
    """torch.mm gives garbage here (it reads A while writing it); cutlass_ops goes through a temporary."""
    a = matrix(200, 200, torch.float32)
    b = matrix(200, 200, torch.float32)
    a_before, b_before = a.clone(), b.clone()
    assert cutlass_ops.explain(a, b, out=a).out_via_temp
    result = cutlass_ops.mm(a, b, out=a)
    assert result is a
    assert_matches_reference(a, a_before, b_before, "f32")
    cutlass_ops.mm(a_before, b, out=b)
    assert_matches_reference(b, a_before, b_before, "f32")


def test_out_partially_overlapping_a_transposed_input():
    base = matrix(256, 256, torch.float16)
    a = base[:128]  # rows 0..127
    out = base[64:192]  # overlaps half of a
    b = matrix(256, 256, torch.float16)
    a_before, b_before = a.clone(), b.clone()
    assert cutlass_ops.explain(a, b, out=out).out_via_temp
    cutlass_ops.mm(a, b, out=out)
    assert_matches_reference(out, a_before, b_before, "f16")


def test_misaligned_out_still_correct():
    a, b = matrix(64, 64, torch.bfloat16), matrix(64, 64, torch.bfloat16)
    storage = torch.full((64 * 64 + 1,), math.nan, dtype=torch.bfloat16, device="cuda")
    out = storage[1:].view(64, 64)  # 2-byte offset: no 16-byte alignment
    cutlass_ops.mm(a, b, out=out)
    assert cutlass_ops.explain(a, b, out=out).out.align == 1
    assert_matches_reference(out, a, b, "bf16")


OUT_ERRORS = {
    "wrong dtype": lambda a: torch.full((M, N), 3.0, dtype=torch.float32, device="cuda"),
    "cpu out": lambda a: torch.full((M, N), 3.0, dtype=a.dtype),
    "internal overlap": lambda a: torch.full((1, N), 3.0, dtype=a.dtype, device="cuda").expand(M, N),
}


@pytest.mark.parametrize("case", sorted(OUT_ERRORS))
def test_bad_out_raises_like_torch_and_is_left_untouched(case):
    a, b = operands()
    theirs = capture_error(lambda: torch.mm(a, b, out=OUT_ERRORS[case](a)))
    out = OUT_ERRORS[case](a)
    before = out.clone()
    ours = capture_error(lambda: cutlass_ops.mm(a, b, out=out))
    assert theirs[0] is not None
    assert ours == theirs
    assert torch.equal(out, before)


def test_out_with_inputs_requiring_grad_is_refused_like_torch():
    a, b = operands(torch.float32)
    a.requires_grad_()
    out = torch.full((M, N), 5.0, device="cuda")
    theirs = capture_error(lambda: torch.mm(a, b, out=torch.empty(M, N, device="cuda")))
    ours = capture_error(lambda: cutlass_ops.mm(a, b, out=out))
    assert ours == theirs and theirs[0] is RuntimeError
    assert (out == 5.0).all()
    with torch.no_grad():
        cutlass_ops.mm(a, b, out=out)  # allowed without grad mode, as for torch.mm
    assert_matches_reference(out, a.detach(), b, "f32")


def test_forced_kernel_that_cannot_run_leaves_out_untouched():
    a, b = operands()
    out = torch.full((3, 3), 9.0, dtype=a.dtype, device="cuda")  # would be resized
    with pytest.raises(ValueError, match="cannot run this problem"):
        cutlass_ops.mm(a, b, out=out, kernel="cutlass2x_sm80_bf16_cc_128x256x64_3s_a8")
    assert out.shape == (3, 3) and (out == 9.0).all()
