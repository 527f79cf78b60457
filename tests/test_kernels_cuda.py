"""Every registered kernel that runs on this GPU, forced with kernel= on a shape inside its
tiles' edges and on an odd shape, in the layouts it was built for. On an H100 this is what
proves the SM80 (CUTLASS 2.x) path alongside the SM90 one."""

import pytest
import torch

import cutlass_ops
from mm_testing import FORCED_SHAPES, KERNEL_DTYPES, assert_matches_reference, capability, check_forced, matrix

pytestmark = pytest.mark.gpu


def kernels_here(cap=None):
    """The kernels this GPU runs (or a GPU of compute capability `cap`: tests/test_kernel_lists.py)."""
    cap = capability(cap)
    if cap is None:
        return []
    # The fused-epilogue builds run linear and addmm calls: tests/test_addmm_linear_cuda.py.
    return [k for k in cutlass_ops.list_kernels(cap) if not k.fuses_epilogue]


@pytest.mark.parametrize("kernel", kernels_here(), ids=lambda k: k.name)
@pytest.mark.parametrize("m,n,k", FORCED_SHAPES)
def test_forced_kernel(kernel, m, n, k):
    dtype = KERNEL_DTYPES[kernel.dtype]
    a = matrix(m, k, dtype, kernel.layouts[0])
    b = matrix(k, n, dtype, kernel.layouts[1])
    try:
        cutlass_ops.explain(a, b, kernel=kernel.name)
    except ValueError as refusal:
        # On its own dtype and layouts, only alignment, more rows than a few-row kernel takes
        # (KernelInfo.max_m), more columns than a few-column one takes (KernelInfo.max_n) or a
        # row length it cannot store (KernelInfo.n_multiple) may stop a kernel.
        if kernel.max_m is not None and m > kernel.max_m:
            assert f"takes at most {kernel.max_m} rows (M)" in str(refusal), refusal
            pytest.skip(f"{kernel.name} takes at most {kernel.max_m} rows")
        if kernel.max_n is not None and n > kernel.max_n:
            assert f"takes at most {kernel.max_n} columns (N)" in str(refusal), refusal
            pytest.skip(f"{kernel.name} takes at most {kernel.max_n} columns")
        if n % kernel.n_multiple != 0:
            assert f"row length N a multiple of {kernel.n_multiple}, the problem has N = {n}" in str(refusal), refusal
            pytest.skip(f"{kernel.name} needs N a multiple of {kernel.n_multiple}")
        assert "aligned to" in str(refusal), refusal
        pytest.skip(f"{kernel.name} needs {kernel.alignment}-element alignment")
    out = cutlass_ops.mm(a, b, kernel=kernel.name)
    # The precision a forced kernel computes at is its own, so compare with torch.mm at that precision.
    previous = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = kernel.dtype == "tf32"
    try:
        # 3xTF32 is held to IEEE fp32's accuracy.
        precision = "f32" if kernel.dtype == "3xtf32" else kernel.dtype
        assert_matches_reference(out, a, b, precision, context=kernel.name)
    finally:
        torch.backends.cuda.matmul.allow_tf32 = previous


def cp_async_kernels():
    return [k for k in kernels_here() if k.mainloop == "cp-async-warp-specialized"]


# (M, N, K, elements before each operand in its storage): rows a multiple of 4 bytes but not of
# 16 (K, and N for "rr"; 16-bit: 2 mod 4 elements, TF32: 2 mod 4 too), an operand off 16 bytes,
# and for TF32 an odd K (2-byte rows, which the 16-bit builds refuse).
CP_ASYNC_SHAPES = [(97, 82, 70, 0), (300, 130, 998, 0), (129, 66, 258, 2), (5, 1030, 66, 0), (97, 83, 71, 1)]


@pytest.mark.parametrize("kernel", cp_async_kernels(), ids=lambda k: k.name)
@pytest.mark.parametrize("m,n,k,offset", CP_ASYNC_SHAPES)
def test_cp_async_kernels_read_rows_tma_cannot(kernel, m, n, k, offset, tf32_matmul):
    """The SM90 cp.async builds exist for operands TMA cannot read: forced on such rows over a
    NaN-poisoned output, against the float64 reference (torch.mm's own error at the kernel's
    precision)."""
    align = kernel.alignment[0]
    if k % align or offset % align or (kernel.layouts == "rr" and n % align):
        pytest.skip(f"{kernel.name} needs {align}-element alignment")
    tf32_matmul(kernel.dtype == "tf32")
    check_forced(kernel, m, n, k, offset=offset)
