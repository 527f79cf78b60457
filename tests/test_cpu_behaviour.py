"""What cutlass_ops does with CPU tensors and non-tensors: no GPU needed."""

import pytest
import torch

import cutlass_ops
from mm_testing import capture_error


def test_cpu_tensors_raise_a_clear_runtime_error():
    a, b = torch.randn(3, 4), torch.randn(4, 5)
    with pytest.raises(RuntimeError, match="cutlass_ops::mm runs on CUDA tensors; got self on cpu and mat2 on cpu"):
        cutlass_ops.mm(a, b)
    out = torch.full((3, 5), 2.0)
    with pytest.raises(RuntimeError, match="runs on CUDA tensors"):
        cutlass_ops.mm(a, b, out=out)
    assert (out == 2.0).all()
    with pytest.raises(RuntimeError, match="runs on CUDA tensors"):
        torch.ops.cutlass_ops.mm(a, b)


@pytest.mark.parametrize("args", [("x", torch.ones(2, 2)), (torch.ones(2, 2), 3), (None, None)])
def test_non_tensor_arguments_raise_type_error_like_torch_mm(args):
    theirs = capture_error(lambda: torch.mm(*args))
    ours = capture_error(lambda: cutlass_ops.mm(*args))
    assert theirs[0] is TypeError
    assert ours == theirs


def test_kernel_argument_type_is_checked():
    with pytest.raises(TypeError, match="kernel must be a kernel name"):
        cutlass_ops.mm(torch.ones(2, 2), torch.ones(2, 2), kernel=1)


def test_explain_plans_cpu_tensors_for_a_named_device():
    a, b = torch.randn(300, 200), torch.randn(200, 100)
    p = cutlass_ops.explain(a, b, device="a100")
    assert p.action == "kernel" and p.kernel.startswith("cutlass2x_sm80_f")
    assert p.device.capability == (8, 0)


def test_explain_rejects_unknown_device_names():
    with pytest.raises(ValueError, match="preset"):
        cutlass_ops.explain(torch.randn(2, 2), torch.randn(2, 2), device="no-such-gpu")


@pytest.mark.parametrize("op", ["bmm", "baddbmm", "matmul"])
def test_batched_products_of_cpu_tensors_raise_a_clear_runtime_error(op):
    a, b, c = torch.randn(2, 3, 4), torch.randn(2, 4, 5), torch.randn(5)
    call = {
        "bmm": lambda **kw: cutlass_ops.bmm(a, b, **kw),
        "baddbmm": lambda **kw: cutlass_ops.baddbmm(c, a, b, **kw),
        "matmul": lambda **kw: cutlass_ops.matmul(a, b),
    }[op]
    # matmul runs as cutlass_ops::bmm (or mm), which names itself.
    name = "bmm" if op == "matmul" else op
    with pytest.raises(RuntimeError, match=f"cutlass_ops::{name} runs on CUDA tensors"):
        call()
    if op != "matmul":
        out = torch.full((2, 3, 5), 2.0)
        with pytest.raises(RuntimeError, match="runs on CUDA tensors"):
            call(out=out)
        assert (out == 2.0).all()
    with pytest.raises(RuntimeError, match="runs on CUDA tensors"):
        cutlass_ops.matmul(torch.randn(3, 4), torch.randn(4))  # a vector case: cutlass_ops::mm


NON_TENSOR_CALLS = {
    "bmm input": ("bmm", ("x", torch.ones(2, 2, 2))),
    "bmm mat2": ("bmm", (torch.ones(2, 2, 2), 3)),
    "baddbmm batch1": ("baddbmm", (torch.ones(2), "x", torch.ones(2, 2, 2))),
    "baddbmm batch2": ("baddbmm", (torch.ones(2), torch.ones(2, 2, 2), None)),
    "matmul input": ("matmul", (None, torch.ones(2, 2))),
    "matmul other": ("matmul", (torch.ones(2, 2), 1.5)),
}


@pytest.mark.parametrize("case", list(NON_TENSOR_CALLS))
def test_batched_non_tensor_arguments_raise_type_error_like_torch(case):
    name, args = NON_TENSOR_CALLS[case]
    theirs = capture_error(lambda: getattr(torch, name)(*args))
    ours = capture_error(lambda: getattr(cutlass_ops, name)(*args))
    assert theirs[0] is TypeError
    assert ours == theirs
