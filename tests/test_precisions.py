"""The one vocabulary of precisions (cutlass_ops.precisions): every name the kernel table uses,
the command line's aliases, and errors that name the choices."""

import pytest
import torch

import cutlass_ops
from cutlass_ops import precisions


def test_every_kernels_precision_is_in_the_vocabulary():
    # The kernel table's precisions, as the registry reports them (no GPU needed).
    names = {k.dtype for k in cutlass_ops.list_kernels()}
    assert names and names <= set(precisions.TORCH_DTYPE), names - set(precisions.TORCH_DTYPE)


@pytest.mark.parametrize("name,dtype,canonical", [
    ("bf16", torch.bfloat16, "bf16"), ("bfloat16", torch.bfloat16, "bf16"), ("half", torch.float16, "f16"),
    ("FP16", torch.float16, "f16"), ("tf32", torch.float32, "tf32"), ("3xtf32", torch.float32, "3xtf32"),
    ("float64", torch.float64, "f64")])
def test_names_and_aliases(name, dtype, canonical):
    assert precisions.canonical(name) == canonical
    assert precisions.torch_dtype(name) is dtype


def test_unknown_names_and_dtypes_are_refused_with_the_choices():
    with pytest.raises(ValueError, match=r"unknown precision 'fp8'; choose from f16, bf16, tf32"):
        precisions.canonical("fp8")
    with pytest.raises(ValueError, match="not torch.int32"):
        precisions.of_dtype(torch.int32)


def test_accuracy_and_dtype_round_trip():
    assert precisions.accuracy_of("3xtf32") == "f32" and precisions.accuracy_of("tf32") == "tf32"
    for dtype in (torch.float16, torch.bfloat16, torch.float32, torch.float64):
        assert precisions.torch_dtype(precisions.of_dtype(dtype)) is dtype


@pytest.mark.parametrize("name, tf32, mode", [("tf32", True, "ieee"), ("3xtf32", False, "3xtf32"),
                                              ("fp32", False, "ieee"), ("bfloat16", False, "ieee")])
@pytest.mark.parametrize("before_tf32, before_mode", [(False, "ieee"), (True, "3xtf32")])
def test_computing_in_sets_both_settings_and_restores_them_even_on_error(name, tf32, mode, before_tf32, before_mode):
    torch.backends.cuda.matmul.allow_tf32 = before_tf32
    cutlass_ops.set_fp32_mode(before_mode)
    try:
        with pytest.raises(RuntimeError, match="inside"):
            with precisions.computing_in(name) as canonical:
                assert canonical == precisions.canonical(name)
                assert torch.backends.cuda.matmul.allow_tf32 is tf32
                assert cutlass_ops.fp32_mode() == mode
                raise RuntimeError("inside")
        assert torch.backends.cuda.matmul.allow_tf32 is before_tf32
        assert cutlass_ops.fp32_mode() == before_mode
    finally:
        torch.backends.cuda.matmul.allow_tf32 = False
        cutlass_ops.set_fp32_mode("ieee")
