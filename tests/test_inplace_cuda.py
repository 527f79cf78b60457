"""cutlass_ops.mm_: A <- A @ W (or A @ W.T) in place, for any row count and width, without an
A-sized result."""

import pytest
import torch

import cutlass_ops
from cutlass_ops.inplace import scratch_rows
from mm_testing import assert_matches_reference, matrix

DTYPES = [(torch.float32, "f32"), (torch.float16, "f16"), (torch.bfloat16, "bf16")]


@pytest.mark.gpu
@pytest.mark.parametrize("rows", [1, 7, 256, 257, 1000, 4099])
@pytest.mark.parametrize("n", [1, 8, 17, 64, 1000])
@pytest.mark.parametrize("dtype,precision", DTYPES)
@pytest.mark.parametrize("transpose", [False, True])
def test_matches_a_times_w(rows, n, dtype, precision, transpose):
    a = matrix(rows, n, dtype)
    w = matrix(n, n, dtype)
    a_before = a.clone()
    result = cutlass_ops.mm_(a, w, transpose=transpose)
    assert result is a
    assert_matches_reference(a, a_before, w.t() if transpose else w, precision, context=f"{rows}x{n}")


@pytest.mark.gpu
@pytest.mark.parametrize("layout", ["c", "strided"])
def test_non_contiguous_input(layout):
    if layout == "c":
        a = matrix(300, 96, torch.float32, "c")
    else:
        a = torch.randn(300, 200, device="cuda")[:, ::2]
    w = matrix(a.shape[1], a.shape[1], torch.float32)
    a_before = a.clone()
    cutlass_ops.mm_(a, w)
    assert_matches_reference(a, a_before, w, "f32")


@pytest.mark.gpu
def test_allocates_no_output_sized_buffer():
    rows, n = 65536, 1024  # A: 128 MiB of bf16
    a = matrix(rows, n, torch.bfloat16)
    w = matrix(n, n, torch.bfloat16)
    expected = a.float() @ w.float()
    a_bytes = a.numel() * a.element_size()
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    base = torch.cuda.memory_allocated()
    cutlass_ops.mm_(a, w)
    torch.cuda.synchronize()
    extra = torch.cuda.max_memory_allocated() - base
    # One scratch block (1/8 of A) plus the kernels' workspace; an out-of-place product adds all of A.
    assert extra <= a_bytes // 8 + (4 << 20), (extra, a_bytes)
    assert scratch_rows(rows, n, 2) == rows // 8
    assert (a.float() - expected).abs().max() <= 0.05 * expected.abs().max()


def test_scratch_rows():
    assert scratch_rows(100, 4096, 2) == 100          # small A: one block
    assert scratch_rows(2048, 4096, 2) == 256         # never below 256 rows
    assert scratch_rows(65536, 1024, 2) == 8192       # an eighth of A
    assert scratch_rows(1 << 20, 8192, 4) == 2048     # 64 MiB cap: 2048 rows of 32 KiB


@pytest.mark.parametrize("a_shape,w_shape,match", [
    ((4, 3), (3, 5), r"weight must be square with the width of input \(3x3\)"),
    ((4, 3), (4, 4), r"got input \(4, 3\) and weight \(4, 4\)"),
    ((4,), (4, 4), "must be matrices, got 1-D and 2-D"),
])
def test_shape_errors(a_shape, w_shape, match):
    with pytest.raises(RuntimeError, match=match):
        cutlass_ops.mm_(torch.randn(a_shape), torch.randn(w_shape))


def test_dtype_grad_and_overlap_errors():
    with pytest.raises(RuntimeError, match="same dtype, but got: torch.float32 != torch.float16"):
        cutlass_ops.mm_(torch.randn(4, 4), torch.randn(4, 4, dtype=torch.float16))
    with pytest.raises(RuntimeError, match="autograd would need"):
        cutlass_ops.mm_(torch.randn(4, 4), torch.randn(4, 4, requires_grad=True))
    storage = torch.randn(8, 4)
    with pytest.raises(RuntimeError, match="refer to a single memory location"):
        cutlass_ops.mm_(storage[:6], storage[4:8])
    with pytest.raises(TypeError, match="must be Tensors, not list"):
        cutlass_ops.mm_([[1.0]], torch.randn(1, 1))
    with torch.no_grad():  # requires_grad is fine without grad mode; CPU tensors then fail in mm
        with pytest.raises(RuntimeError):
            cutlass_ops.mm_(torch.randn(4, 4), torch.randn(4, 4, requires_grad=True))
