"""Hopper's 3xTF32 by presplitting (csrc/cutlass3x/sm90_3xtf32_presplit.cuh): each operand is
split into big and small TF32 parts laid side by side along K, then one TF32 WGMMA GEMM runs
over 3K, promoting its accumulators into float32 every few K steps. Held to torch's IEEE
float32 accuracy against float64, in every layout and alignment the split pass reads, at
long K, with infinities and NaNs where float32 puts them."""

import math

import pytest
import torch

import cutlass_ops
from mm_testing import assert_matches_reference, matrix, planned

pytestmark = pytest.mark.gpu

PRESPLIT = ["128x128x32_2x1x1_coop_presplit", "128x128x32_1x1x1_coop_streamk_presplit"]


def presplit_kernels():
    if not torch.cuda.is_available():
        return []
    return [k.name for k in cutlass_ops.list_kernels(torch.cuda.get_device_capability())
            if k.name.endswith("_presplit")]


needs_presplit = pytest.mark.skipif(not presplit_kernels(), reason="no Hopper GPU, or built without the sm90a kernels")


@pytest.fixture
def fp32_3xtf32(tf32_matmul):
    tf32_matmul(False)
    cutlass_ops.set_fp32_mode("3xtf32")
    yield
    cutlass_ops.set_fp32_mode("ieee")


@needs_presplit
@pytest.mark.parametrize("layouts", ["rr", "rc", "cr", "cc"])
@pytest.mark.parametrize("m,n,k,config", [
    (2048, 4096, 1000, PRESPLIT[0]),   # 16 x 32 tiles of 128x128
    (1024, 1280, 4096, PRESPLIT[1]),   # 80 tiles: under a wave
    (1100, 1036, 2001, PRESPLIT[1]),   # ragged tiles, odd K (each part padded to 2004); D's rows
                                       # stay 16-byte aligned for its TMA store (1036 floats)
])
def test_presplit_and_auto_dispatch_are_as_accurate_as_fp32(layouts, m, n, k, config, fp32_3xtf32):
    """The presplit kernel, forced, and whatever the cost model runs in 3xTF32 mode (3xTF32 or
    IEEE fp32): both as accurate as torch's IEEE fp32."""
    a, b = matrix(m, k, torch.float32, layouts[0]), matrix(k, n, torch.float32, layouts[1])
    kernel = f"cutlass3x_sm90_3xtf32_{layouts}_{config}"
    assert_matches_reference(cutlass_ops.mm(a, b, kernel=kernel), a, b, "f32", context=kernel)
    plan = cutlass_ops.explain(a, b)
    assert plan.dtype in ("3xtf32", "f32"), plan
    assert_matches_reference(cutlass_ops.mm(a, b), a, b, "f32", context=str(plan))


@needs_presplit
@pytest.mark.parametrize("kernel", presplit_kernels())
@pytest.mark.parametrize("form", ["offset", "padded", "odd_k"])
def test_misaligned_operands_are_read_as_they_lie(kernel, form, fp32_3xtf32):
    """The split pass reads single floats: a storage offset of one element, odd leading dims
    or an odd K reach the kernel unstaged. The output, written by TMA, stays aligned."""
    # odd_k: an odd M too, so a column-major A (leading dim M) is misaligned as well.
    m, n, k = (263, 136, 1001) if form == "odd_k" else (264, 136, 1000)
    la, lb = kernel.split("_")[3]
    a = matrix(m, k, torch.float32, la, offset=1 if form == "offset" else 0, ld_pad=3 if form == "padded" else 0)
    b = matrix(k, n, torch.float32, lb, offset=3 if form == "offset" else 0, ld_pad=5 if form == "padded" else 0)
    out = torch.full((m, n), math.nan, device="cuda")
    plan = cutlass_ops.explain(a, b, out=out, kernel=kernel)
    assert min(plan.a.align, plan.b.align) == 1 and not plan.staged, plan
    cutlass_ops.mm(a, b, out=out, kernel=kernel)
    assert_matches_reference(out, a, b, "f32", context=f"{kernel} {form}")


@needs_presplit
@pytest.mark.parametrize("layouts", ["rr", "cc"])
def test_infinities_and_nans_land_where_fp32_puts_them(layouts, fp32_3xtf32):
    """A lone infinity reaches D as +-inf (sign of B's element), not inf - inf or inf * 0 from
    the parts; a NaN spreads along its row or column; a value near the largest float stays
    finite through the split. Its products need partners near 1 / 3.4e38, whose small parts
    are subnormal and keep only TF32's subnormal resolution (docs/precision.md), so its row
    is held to TF32's accuracy and every other finite element to float32's."""
    m, n, k = 1024, 1024, 1088  # past 1024^3: presplit
    a, b = matrix(m, k, torch.float32, layouts[0]), matrix(k, n, torch.float32, layouts[1])
    a[3, 5] = math.inf
    a[7, 9] = -math.inf
    b[11, 2] = math.nan
    a[20, 30] = torch.finfo(torch.float32).max  # rounds past it as TF32: truncated instead
    b[30, :] = (1 + torch.rand(n, device="cuda")) * 1e-37  # row 20 of D: products of about 50
    ours = cutlass_ops.mm(a, b, kernel=f"cutlass3x_sm90_3xtf32_{layouts}_{PRESPLIT[0]}")
    theirs = torch.mm(a, b)
    for name, test in (("nan", torch.isnan), ("+inf", torch.isposinf), ("-inf", torch.isneginf)):
        assert torch.equal(test(ours), test(theirs)), f"{name} positions differ from torch.mm fp32"
    assert torch.isinf(ours[3]).sum() == n - 1 and torch.isnan(ours[:, 2]).all()
    ref = a.double() @ b.double()
    finite = torch.isfinite(theirs)
    big_row = torch.zeros_like(finite)
    big_row[20] = True

    def error(where):
        return ((ours - ref)[where].abs().max() / ref[where].abs().max()).item()

    assert error(finite & big_row) < 2.0**-10, error(finite & big_row)
    assert error(finite & ~big_row) < 1e-5, error(finite & ~big_row)


@needs_presplit
@pytest.mark.parametrize("m,n,k", [(2048, 2048, 8192), (1024, 1024, 65536)])
def test_no_less_accurate_than_torch_fp32_at_long_k(m, n, k, fp32_3xtf32):
    """The claim 3xTF32 makes: against float64, no worse than torch's own IEEE float32 GEMM,
    norm-wise, where K is long (the unpromoted GEMM's error grew with K past torch's:
    9.6e-6 against 1.1e-6 at K = 4096). Worst element within twice torch's."""
    a, b = matrix(m, k, torch.float32), matrix(k, n, torch.float32)
    plan = cutlass_ops.explain(a, b, kernel=f"cutlass3x_sm90_3xtf32_rr_{PRESPLIT[1]}")
    ref = a.double() @ b.double()
    ours, theirs = cutlass_ops.mm(a, b, kernel=plan.kernel).double(), torch.mm(a, b).double()
    e_ours = ((ours - ref).norm() / ref.norm()).item()
    e_torch = ((theirs - ref).norm() / ref.norm()).item()
    assert e_ours <= e_torch, f"{plan.kernel}: relative error {e_ours:.3e} vs torch fp32's {e_torch:.3e}"
    scale = ref.abs().max()
    w_ours, w_torch = ((ours - ref).abs().max() / scale).item(), ((theirs - ref).abs().max() / scale).item()
    assert w_ours <= 2 * w_torch, f"{plan.kernel}: worst element {w_ours:.3e} vs torch fp32's {w_torch:.3e}"


@needs_presplit
@pytest.mark.parametrize("m,n,k", [(4096, 4096, 32), (4096, 4096, 64)])
def test_short_k_runs_ieee_fp32_at_torch_accuracy(m, n, k, fp32_3xtf32):
    """Below K = 256 torch's fp32 error is under 3xTF32's floor (the presplit GEMM measured
    1.3-1.4x torch's error at K = 32 and 64): 3xTF32 mode runs IEEE fp32 there, whose error
    is torch's, within the rounding of a different summation order."""
    a, b = matrix(m, k, torch.float32), matrix(k, n, torch.float32)
    plan = cutlass_ops.explain(a, b)
    assert plan.dtype == "f32" and "presplit" not in plan.kernel, plan
    ref = a.double() @ b.double()
    ours, theirs = cutlass_ops.mm(a, b).double(), torch.mm(a, b).double()
    e_ours = ((ours - ref).norm() / ref.norm()).item()
    e_torch = ((theirs - ref).norm() / ref.norm()).item()
    assert e_ours <= 1.1 * e_torch, f"{plan.kernel}: relative error {e_ours:.3e} vs torch fp32's {e_torch:.3e}"


@needs_presplit
def test_split_k_is_deterministic(fp32_3xtf32):
    """The stream-K kernel's split-K, pinned (few tiles, a long 3K)."""
    kernel = f"cutlass3x_sm90_3xtf32_rr_{PRESPLIT[1]}"
    a, b = matrix(256, 8192, torch.float32), matrix(8192, 256, torch.float32)
    with planned(a, b, kernel, "split-k", 4):
        plan = cutlass_ops.explain(a, b)
        assert (plan.kernel, plan.decomposition, plan.splits) == (kernel, "split-k", 4), plan
        first = cutlass_ops.mm(a, b)
        assert torch.equal(first, cutlass_ops.mm(a, b))
    assert_matches_reference(first, a, b, "f32", context=str(plan))
