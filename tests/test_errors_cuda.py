"""Bad input on the GPU: the same exception type and message as torch.mm, and the next valid
call still works (no sticky CUDA error)."""

import pytest
import torch

import cutlass_ops
from mm_testing import assert_matches_reference, capture_error, matrix

pytestmark = pytest.mark.gpu


def cuda(*shape, dtype=torch.float32):
    return torch.randn(shape, device="cuda").to(dtype)


BAD_CALLS = {
    "self 1-D": lambda: (cuda(4), cuda(4, 5)),
    "mat2 1-D": lambda: (cuda(3, 4), cuda(4)),
    "self 3-D": lambda: (cuda(2, 3, 4), cuda(4, 5)),
    "mat2 0-D": lambda: (cuda(3, 4), cuda()),
    "shape mismatch": lambda: (cuda(3, 4), cuda(5, 6)),
    "dtype mismatch": lambda: (cuda(3, 4), cuda(4, 5, dtype=torch.float64)),
    "int32": lambda: (cuda(3, 4).int(), cuda(4, 5).int()),
    "int64": lambda: (cuda(3, 4).long(), cuda(4, 5).long()),
    "int8": lambda: (cuda(3, 4).to(torch.int8), cuda(4, 5).to(torch.int8)),
    "bool": lambda: (cuda(3, 4) > 0, cuda(4, 5) > 0),
}


@pytest.mark.parametrize("case", sorted(BAD_CALLS))
def test_bad_arguments_raise_like_torch_mm(case):
    a, b = BAD_CALLS[case]()
    theirs = capture_error(lambda: torch.mm(a, b))
    ours = capture_error(lambda: cutlass_ops.mm(a, b))
    assert theirs[0] is not None, "torch.mm accepted it"
    assert ours == theirs
    # The next valid call works.
    x, y = matrix(64, 64, torch.bfloat16), matrix(64, 64, torch.bfloat16)
    assert_matches_reference(cutlass_ops.mm(x, y), x, y, "bf16")


@pytest.mark.parametrize("which", ["self", "mat2", "both"])
def test_cpu_and_mixed_devices(which):
    a, b = cuda(3, 4), cuda(4, 5)
    if which in ("self", "both"):
        a = a.cpu()
    if which in ("mat2", "both"):
        b = b.cpu()
    theirs = capture_error(lambda: torch.mm(a, b))
    ours = capture_error(lambda: cutlass_ops.mm(a, b))
    if which == "both":
        # A deliberate difference: torch.mm computes on the CPU; cutlass_ops is a CUDA library.
        assert theirs == (None, None)
        assert ours[0] is RuntimeError and "runs on CUDA tensors" in ours[1]
    else:
        assert theirs[0] is RuntimeError
        assert ours == theirs


def test_non_tensor_arguments_raise_type_error_like_torch_mm():
    b = cuda(4, 5)
    for args in (("nope", b), (b.t(), [[1.0]])):
        theirs = capture_error(lambda: torch.mm(*args))
        ours = capture_error(lambda: cutlass_ops.mm(*args))
        assert ours == theirs and theirs[0] is TypeError


def test_unknown_and_unfit_forced_kernels():
    a, b = matrix(64, 64, torch.bfloat16), matrix(64, 64, torch.bfloat16)
    with pytest.raises(ValueError, match="unknown kernel"):
        cutlass_ops.mm(a, b, kernel="not_a_kernel")
    with pytest.raises(ValueError, match="computes f16, the call needs bf16"):
        cutlass_ops.mm(a, b, kernel="cutlass2x_sm80_f16_rr_128x256x64_3s_a8")
    with pytest.raises(TypeError, match="kernel must be"):
        cutlass_ops.mm(a, b, kernel=3)
    assert_matches_reference(cutlass_ops.mm(a, b), a, b, "bf16")
