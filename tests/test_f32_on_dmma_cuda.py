"""IEEE float32 on Hopper's FP64 tensor cores: the operands widened to float64 (exactly) in
registers (csrc/cutlass2x/f32_on_dmma_warp.h), DMMA summing in float64, each result rounded
to float32 once. Held to that claim against float64: within half a float32 ulp norm-wise
(torch's fp32 GEMM is some 20x further off), with infinities and NaNs where float32 puts them,
in every layout and alignment (16-byte copies where the operands allow, else 4-byte ones)."""

import math

import pytest
import torch

import cutlass_ops
from mm_testing import matrix, planned

pytestmark = pytest.mark.gpu

IN_REGISTERS = {"128sk": "dmma16x8x8_128x128x32_3s_streamk_a4",
                "64sk": "dmma16x8x8_64x64x32_4s_streamk_a4", "32sk": "dmma16x8x8_32x64x32_5s_streamk_a4"}
ROUNDING = 2.0**-24  # float32's unit roundoff: the most one rounding of each result can add, norm-wise


def f32_dmma_kernels():
    """The float32 kernels on DMMA ("dmma16x8x8": widened in registers)."""
    if not torch.cuda.is_available():
        return []
    names = [k.name for k in cutlass_ops.list_kernels(torch.cuda.get_device_capability()) if k.dtype == "f32"]
    return [n for n in names if "_dmma16x8x8_" in n]


needs_dmma = pytest.mark.skipif(not f32_dmma_kernels(), reason="no Hopper GPU, or built without the sm90a kernels")


def relative_error(out, a, b):
    ref = a.double() @ b.double()
    return ((out.double() - ref).norm() / ref.norm()).item()


@pytest.fixture
def ieee_fp32(tf32_matmul):
    tf32_matmul(False)
    cutlass_ops.set_fp32_mode("ieee")


@needs_dmma
@pytest.mark.parametrize("layouts", ["rr", "rc", "cr", "cc"])
@pytest.mark.parametrize("m,n,k,ld_pad,config", [
    (2048, 4096, 1000, 0, IN_REGISTERS["128sk"]),   # 16 x 32 = 512 tiles of 128x128: 3.9 waves of 132
    (2048, 2176, 1536, 0, IN_REGISTERS["128sk"]),   # 16 x 17 = 272 tiles: a last wave of 8
    (2048, 4096, 1000, 1, IN_REGISTERS["128sk"].replace("_a4", "_a1")),  # leading dims off 16 bytes: 4-byte copies
    (2048, 2176, 1536, 1, IN_REGISTERS["128sk"].replace("_a4", "_a1")),
])
def test_widened_kernels_round_each_result_once(layouts, m, n, k, ld_pad, config, ieee_fp32):
    """Multi-wave shapes and a ragged last wave, aligned and not: the DMMA kernels, forced, round
    each result once; whatever auto dispatch runs is IEEE fp32, no less accurate than torch."""
    a = matrix(m, k, torch.float32, layouts[0], ld_pad=ld_pad)
    b = matrix(k, n, torch.float32, layouts[1], ld_pad=ld_pad)
    kernel = f"cutlass2x_sm90_f32_{layouts}_{config}"
    plan = cutlass_ops.explain(a, b, kernel=kernel)
    assert plan.dtype == "f32" and not plan.staged, plan
    out = cutlass_ops.mm(a, b, kernel=kernel)
    e_ours, e_torch = relative_error(out, a, b), relative_error(torch.mm(a, b), a, b)
    assert e_ours <= ROUNDING, f"{plan.kernel}: relative error {e_ours:.3e}, more than one float32 rounding"
    assert e_ours <= e_torch / 4, f"{plan.kernel}: {e_ours:.3e} against torch fp32's {e_torch:.3e}"
    auto = cutlass_ops.explain(a, b)
    assert auto.dtype == "f32" and "_f32_" in auto.kernel, auto
    assert relative_error(cutlass_ops.mm(a, b), a, b) <= 1.5 * e_torch, auto


@needs_dmma
@pytest.mark.parametrize("kernel", [n for n in f32_dmma_kernels() if n.endswith("_a1")])
@pytest.mark.parametrize("form", ["offset", "padded", "odd_k"])
def test_misaligned_operands_are_read_as_they_lie(kernel, form, ieee_fp32):
    """The 4-byte-copy kernels read single floats: a storage offset of one element, odd leading
    dims or an odd K reach the kernel unstaged, and so does an odd output."""
    m, n, k = (263, 137, 1001) if form == "odd_k" else (264, 136, 1000)
    la, lb = kernel.split("_")[3]
    a = matrix(m, k, torch.float32, la, offset=1 if form == "offset" else 0, ld_pad=3 if form == "padded" else 0)
    b = matrix(k, n, torch.float32, lb, offset=3 if form == "offset" else 0, ld_pad=5 if form == "padded" else 0)
    out = torch.full((m, n + 1), math.nan, device="cuda")[:, 1:] if form == "offset" else torch.full(
        (m, n), math.nan, device="cuda")
    plan = cutlass_ops.explain(a, b, out=out, kernel=kernel)
    assert min(plan.a.align, plan.b.align) == 1 and not plan.staged, plan
    cutlass_ops.mm(a, b, out=out, kernel=kernel)
    assert relative_error(out, a, b) <= ROUNDING, (kernel, form)


@needs_dmma
@pytest.mark.parametrize("kernel", f32_dmma_kernels())
@pytest.mark.parametrize("m,n,k", [(296, 264, 136), (64, 4096, 4096), (1024, 1024, 1024), (256, 256, 65536)])
def test_widened_in_registers_rounds_each_result_once(kernel, m, n, k, ieee_fp32):
    """Every float32 DMMA kernel, forced, in its layouts, on a tile-edge shape, few rows, a
    square and a long K (stream-K's partial tiles meet in float64): one rounding per result."""
    la, lb = kernel.split("_")[3]
    a, b = matrix(m, k, torch.float32, la), matrix(k, n, torch.float32, lb)
    plan = cutlass_ops.explain(a, b, kernel=kernel)
    assert not plan.staged, plan
    out = cutlass_ops.mm(a, b, kernel=kernel)
    e_ours, e_torch = relative_error(out, a, b), relative_error(torch.mm(a, b), a, b)
    assert e_ours <= ROUNDING, f"{kernel} {plan.decomposition}: relative error {e_ours:.3e}"
    assert e_ours <= e_torch, f"{kernel}: {e_ours:.3e} against torch fp32's {e_torch:.3e}"


@needs_dmma
@pytest.mark.parametrize("kernel", [n for n in f32_dmma_kernels() if n.endswith("_a4")])
def test_sixteen_byte_copy_kernels_refuse_misaligned_operands(kernel, ieee_fp32):
    """16-byte cp.async: an operand off 16 bytes is refused by name, and auto dispatch runs a
    kernel that reads it as it lies (IEEE fp32 is never staged)."""
    la, lb = kernel.split("_")[3]
    a = matrix(264, 1000, torch.float32, la, offset=1)
    b = matrix(1000, 136, torch.float32, lb)
    with pytest.raises(ValueError, match="aligned to"):
        cutlass_ops.explain(a, b, kernel=kernel)
    plan = cutlass_ops.explain(a, b)
    assert "_f32_" in plan.kernel and plan.a.align == 1 and not plan.staged, plan
    assert relative_error(cutlass_ops.mm(a, b), a, b) <= 1.5 * relative_error(torch.mm(a, b), a, b), plan


@needs_dmma
@pytest.mark.parametrize("kernel", f32_dmma_kernels())
def test_infinities_nans_and_the_float32_range(kernel, ieee_fp32):
    """Inf and NaN land where torch's float32 GEMM puts them. Sums are float64's: a row whose
    partial sums pass float32's largest value but whose result does not stays finite (and
    exact), and one whose result is past it is infinite, as in float32."""
    m, n, k = 512, 384, 640
    la, lb = kernel.split("_")[3]
    a, b = matrix(m, k, torch.float32, la), matrix(k, n, torch.float32, lb)
    a[3, 5] = math.inf
    a[7, 9] = -math.inf
    b[11, 2] = math.nan
    big = 3.0e38
    a[20, :] = 0
    a[20, :3] = torch.tensor([big, big, -big])  # row 20 of D: 3e38 * (b0 + b1 - b2), its sums past float32
    b[:3, :] = 1
    b[:3, 100] = torch.tensor([1.0, 0.25, 0.5])  # D[20, 100] = 0.75 * 3e38, exact
    a[21, :] = 0
    a[21, :2] = big  # row 21: 6e38, past float32
    ours = cutlass_ops.mm(a, b, kernel=kernel)
    theirs = torch.mm(a, b)
    # Rows 20 and 21 are where float64 sums differ from float32 ones; compare the rest.
    rows = torch.ones(m, dtype=torch.bool, device="cuda")
    rows[[20, 21]] = False
    for name, test in (("nan", torch.isnan), ("+inf", torch.isposinf), ("-inf", torch.isneginf)):
        assert torch.equal(test(ours)[rows], test(theirs)[rows]), f"{name} positions differ from torch.mm fp32"
    assert torch.isinf(ours[3]).sum() == n - 1 and torch.isinf(ours[7]).sum() == n - 1
    assert torch.isnan(ours[:, 2]).all()  # b[11, 2] meets every row, zeros included (0 * NaN)
    cols = torch.ones(n, dtype=torch.bool, device="cuda")
    cols[2] = False
    assert ours[20, 100].item() == pytest.approx(0.75 * big, rel=2**-23)
    assert torch.isfinite(ours[20, cols]).all() and torch.isposinf(ours[21, cols]).all()
    rows[[3, 7]] = False
    assert relative_error(ours[rows][:, cols], a[rows], b[:, cols]) <= ROUNDING


@needs_dmma
@pytest.mark.parametrize("kernel", f32_dmma_kernels())
def test_subnormal_results_are_rounded_once(kernel, ieee_fp32):
    """Products of about 1e-42 summed to results below float32's smallest normal: float64 holds
    them exactly, so each result is within half a subnormal step (2^-150) of the float64 sum."""
    m, n, k = 256, 256, 1000
    la, lb = kernel.split("_")[3]
    a = matrix(m, k, torch.float32, la) * 1e-21
    b = matrix(k, n, torch.float32, lb) * 1e-21
    ours = cutlass_ops.mm(a, b, kernel=kernel).double()
    ref = a.double() @ b.double()
    assert (ref.abs() < torch.finfo(torch.float32).tiny).float().mean() > 0.9  # mostly subnormal results
    assert (ours - ref).abs().max().item() <= 2.0**-150 * 1.001


@needs_dmma
@pytest.mark.parametrize("config", [IN_REGISTERS[c] for c in ("128sk", "64sk", "32sk")])
def test_stream_k_is_deterministic(config, ieee_fp32):
    """1000^2 is 64 tiles of 128x128: the stream-K kernels share their K iterations over the SMs,
    partial tiles meeting in float64 in a fixed order."""
    kernel = f"cutlass2x_sm90_f32_rr_{config}"
    a, b = matrix(1000, 8192, torch.float32), matrix(8192, 1000, torch.float32)
    with planned(a, b, kernel, "stream-k"):
        plan = cutlass_ops.explain(a, b)
        assert (plan.kernel, plan.decomposition) == (kernel, "stream-k"), plan
        first = cutlass_ops.mm(a, b)
        assert torch.equal(first, cutlass_ops.mm(a, b))
    assert relative_error(first, a, b) <= ROUNDING
