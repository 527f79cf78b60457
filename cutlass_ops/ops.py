"""The public matmul API: mm, addmm, linear, bmm, baddbmm, matmul, explain, list_kernels.

mm() and the other products are thin shims over the registered ops (torch.ops.cutlass_ops.mm
and friends): all checks, planning and launching happen in C++, so the per-call Python cost is
a couple of isinstance checks and one op call.
"""

from __future__ import annotations

import os
import warnings
from dataclasses import dataclass
from typing import ClassVar, Optional

import torch
from torch.overrides import handle_torch_function, has_torch_function_variadic

from . import _extension

_C = _extension._C
_is_compiling = torch.compiler.is_compiling

_mm = torch.ops.cutlass_ops.mm.default
_mm_out = torch.ops.cutlass_ops.mm.out
_mm_kernel = torch.ops.cutlass_ops.mm_with_kernel.default
_mm_kernel_out = torch.ops.cutlass_ops.mm_with_kernel.out


def _type_error(position: int, name: str, value) -> TypeError:
    # torch.mm's wording for a non-tensor argument.
    return TypeError(f"mm(): argument '{name}' (position {position}) must be Tensor, not {type(value).__name__}")


def mm(input: torch.Tensor, mat2: torch.Tensor, *, out: Optional[torch.Tensor] = None,
       kernel: Optional[str] = None) -> torch.Tensor:
    """Matrix product of ``input`` (M x K) and ``mat2`` (K x N), like :func:`torch.mm`.

    Same result dtype, shape, errors and ``out=`` rules as ``torch.mm`` on CUDA tensors
    (see docs/differences.md). ``kernel`` forces one registered kernel by
    name (see :func:`list_kernels`); a kernel that cannot run the problem raises
    ``ValueError`` saying why. Differentiable, autocast-aware, and usable under
    ``torch.compile`` and CUDA graphs.
    """
    if kernel is not None and not isinstance(kernel, str):
        raise TypeError(f"mm(): kernel must be a kernel name (str) or None, not {type(kernel).__name__}")
    if _is_compiling():
        # torch.compile traces the registered ops, not the pybind fast path below.
        if kernel is None:
            return _mm(input, mat2) if out is None else _mm_out(input, mat2, out=out)
        return _mm_kernel(input, mat2, kernel) if out is None else _mm_kernel_out(input, mat2, kernel, out=out)
    if has_torch_function_variadic(input, mat2):  # tensor subclasses, torch.fx proxies
        return handle_torch_function(mm, (input, mat2), input, mat2, out=out, kernel=kernel)
    if not isinstance(input, torch.Tensor):
        raise _type_error(1, "input", input)
    if not isinstance(mat2, torch.Tensor):
        raise _type_error(2, "mat2", mat2)
    return _C.mm(input, mat2, out, kernel)


_addmm = torch.ops.cutlass_ops.addmm.default
_addmm_out = torch.ops.cutlass_ops.addmm.out
_linear = torch.ops.cutlass_ops.linear.default

ACTIVATIONS = (None, "relu", "gelu", "gelu_tanh", "silu")


def addmm(input: torch.Tensor, mat1: torch.Tensor, mat2: torch.Tensor, *, beta=1, alpha=1,
          out: Optional[torch.Tensor] = None) -> torch.Tensor:
    """``beta * input + alpha * (mat1 @ mat2)``, like :func:`torch.addmm` on CUDA tensors.

    ``input`` broadcasts to the M x N product: (N,) or (1, N) (a bias along the columns, which
    the fused kernels add while storing the product), (M, 1), (M, N) or a scalar. With
    ``beta=0`` the input is not read, so NaN and Inf in it do not propagate. Same dtypes, errors
    and ``out=`` rules as torch.addmm; differentiable, autocast-aware, usable under
    ``torch.compile``.
    """
    if has_torch_function_variadic(input, mat1, mat2):
        return handle_torch_function(addmm, (input, mat1, mat2), input, mat1, mat2, beta=beta, alpha=alpha, out=out)
    for position, (name, value) in enumerate((("input", input), ("mat1", mat1), ("mat2", mat2)), 1):
        if not isinstance(value, torch.Tensor):
            raise TypeError(f"addmm(): argument '{name}' (position {position}) must be Tensor, not "
                            f"{type(value).__name__}")
    if out is None:
        return _addmm(input, mat1, mat2, beta=beta, alpha=alpha)
    if _is_compiling() or not isinstance(out, torch.Tensor):
        return _addmm_out(input, mat1, mat2, beta=beta, alpha=alpha, out=out)
    return _C.addmm_out(input, mat1, mat2, beta, alpha, out)  # torch's resize warning as a Python warning


def linear(input: torch.Tensor, weight: torch.Tensor, bias: Optional[torch.Tensor] = None, *,
           activation: Optional[str] = None) -> torch.Tensor:
    """``activation(input @ weight.T + bias)``: :func:`torch.nn.functional.linear` with the
    activation applied in the GEMM's epilogue.

    ``input`` is (*, in_features), ``weight`` (out_features, in_features), ``bias``
    (out_features,) or None; ``activation`` one of None, ``"relu"``, ``"gelu"`` (erf),
    ``"gelu_tanh"`` and ``"silu"``, with torch's formulas: the result matches
    ``act(F.linear(input, weight, bias))``. On Hopper the bias and activation are fused into
    the kernels built for it (names ending in ``_bias_act``); other kernels are followed by one
    elementwise pass. Differentiable (training saves the pre-activation and runs the
    activation as its own op), autocast-aware, usable under ``torch.compile``.
    """
    if activation not in ACTIVATIONS:
        raise ValueError(f"linear(): activation must be one of {ACTIVATIONS}, got {activation!r}")
    tensors = (input, weight) if bias is None else (input, weight, bias)
    if has_torch_function_variadic(*tensors):
        return handle_torch_function(linear, tensors, input, weight, bias, activation=activation)
    for name, value in (("input", input), ("weight", weight)):
        if not isinstance(value, torch.Tensor):
            raise TypeError(f"linear(): argument '{name}' must be Tensor, not {type(value).__name__}")
    if bias is not None and not isinstance(bias, torch.Tensor):
        raise TypeError(f"linear(): argument 'bias' must be Tensor or None, not {type(bias).__name__}")
    return _linear(input, weight, bias, activation or "none")


# ---- batched products -----------------------------------------------------------------------

_bmm = torch.ops.cutlass_ops.bmm.default
_bmm_out = torch.ops.cutlass_ops.bmm.out
_baddbmm = torch.ops.cutlass_ops.baddbmm.default
_baddbmm_out = torch.ops.cutlass_ops.baddbmm.out
_matmul = torch.ops.cutlass_ops.matmul.default


def _check_tensors(function: str, **arguments) -> None:
    """torch's TypeError for a non-tensor argument, e.g. "bmm(): argument 'mat2' (position 2)
    must be Tensor, not int". `arguments` come in their positions."""
    for position, (name, value) in enumerate(arguments.items(), 1):
        if not isinstance(value, torch.Tensor):
            raise TypeError(f"{function}(): argument '{name}' (position {position}) must be Tensor, not "
                            f"{type(value).__name__}")


def bmm(input: torch.Tensor, mat2: torch.Tensor, *, out: Optional[torch.Tensor] = None) -> torch.Tensor:
    """Batched matrix product of ``input`` (B x M x K) and ``mat2`` (B x K x N), like
    :func:`torch.bmm` on CUDA tensors.

    Same result dtype and shape, errors and ``out=`` rules as ``torch.bmm`` (a wrong-shaped
    ``out`` is resized as torch resizes it; a right-shaped one keeps its strides). B, M, N or K
    may be 0 (K = 0 gives zeros). The batch runs as one CUTLASS launch over strided views
    without copies wherever each matrix is row- or column-major: transposed matrices
    (``x.transpose(1, 2)``), batches taken from a permuted tensor, and expanded batches (batch
    stride 0). An ``out`` overlapping an input gets the right answer. Complex tensors are
    handed to ``torch.bmm``.

    Differences from :func:`mm`: batches larger than one run data-parallel only (no split-K
    or stream-K), on CUTLASS's kernels and the hand-written streaming ones only (past 65,535
    matrices on CUTLASS 3.x's, else torch's), and there is no ``kernel=``
    (see docs/differences.md). Differentiable, autocast-aware, and usable under
    ``torch.compile`` and CUDA graphs (the op is ``torch.ops.cutlass_ops.bmm``).
    """
    if has_torch_function_variadic(input, mat2):
        return handle_torch_function(bmm, (input, mat2), input, mat2, out=out)
    _check_tensors("bmm", input=input, mat2=mat2)
    if out is None:
        return _bmm(input, mat2)
    if _is_compiling() or not isinstance(out, torch.Tensor):
        return _bmm_out(input, mat2, out=out)
    return _C.bmm_out(input, mat2, out)  # torch's resize warning as a Python warning


def baddbmm(input: torch.Tensor, batch1: torch.Tensor, batch2: torch.Tensor, *, beta=1, alpha=1,
            out: Optional[torch.Tensor] = None) -> torch.Tensor:
    """``beta * input + alpha * (batch1 @ batch2)`` for batches of matrices, like
    :func:`torch.baddbmm` on CUDA tensors.

    ``batch1`` is B x M x K, ``batch2`` B x K x N, and ``input`` broadcasts to B x M x N
    ((N,), (M, N), (B, 1, N), (B, M, 1), a scalar, ...). With ``beta=0`` the input is not
    read, so NaN and Inf in it do not propagate; with K = 0 the result is ``beta * input``.
    Same dtypes (all three tensors one dtype), errors and ``out=`` rules as torch.baddbmm (an
    ``out`` that is ``input`` works, as ``Tensor.baddbmm_`` needs).

    The product runs as :func:`bmm` does; a ``beta`` other than 0 adds the input in an
    elementwise pass after it (one pass for ``beta=1``, two otherwise; cuBLAS reads it in its
    epilogue). Differentiable,
    autocast-aware, usable under ``torch.compile`` (the op is
    ``torch.ops.cutlass_ops.baddbmm``).
    """
    if has_torch_function_variadic(input, batch1, batch2):
        return handle_torch_function(baddbmm, (input, batch1, batch2), input, batch1, batch2, beta=beta, alpha=alpha,
                                     out=out)
    _check_tensors("baddbmm", input=input, batch1=batch1, batch2=batch2)
    if out is None:
        return _baddbmm(input, batch1, batch2, beta=beta, alpha=alpha)
    if _is_compiling() or not isinstance(out, torch.Tensor):
        return _baddbmm_out(input, batch1, batch2, beta=beta, alpha=alpha, out=out)
    return _C.baddbmm_out(input, batch1, batch2, beta, alpha, out)  # torch's resize warning as a Python warning


def matmul(input: torch.Tensor, other: torch.Tensor) -> torch.Tensor:
    """:func:`torch.matmul` on cutlass_ops: the same result shape and dtype for every rank
    combination torch.matmul takes, computed by :func:`mm` and :func:`bmm`.

    torch.matmul's own algorithm: a 1-D operand becomes a matrix of one row or one column
    (the extra dimension is removed from the result), batch dimensions broadcast, and an N-D
    by 2-D product whose rows merge without a copy runs as one ``mm`` over all the rows.
    Unlike torch.matmul, which runs a dot product or a matrix-vector product (cuBLAS gemv)
    for the 1-D cases, cutlass_ops runs them as matrix products with one row or column. No
    ``out=``. Differentiable, autocast-aware, usable under ``torch.compile`` (the op is
    ``torch.ops.cutlass_ops.matmul``).
    """
    if has_torch_function_variadic(input, other):
        return handle_torch_function(matmul, (input, other), input, other)
    _check_tensors("matmul", input=input, other=other)
    return _matmul(input, other)


# ---- settings -------------------------------------------------------------------------------


def set_fp32_mode(mode: str) -> None:
    """What float32 matmuls compute while torch has TF32 off (``torch.set_float32_matmul_precision
    ("highest")``, torch's default): ``"ieee"`` (default; IEEE fp32 FMA like torch.mm, or on Hopper,
    from K = 128 and 5 rows, float64 sums of the operands widened (exactly) in registers on the
    FP64 tensor cores, rounded to float32 once: faster than torch's fp32 there, and more
    accurate) or ``"3xtf32"`` (each operand split into two TF32 parts, three tensor-core
    products; measured more accurate than torch's fp32, and on an H100 1.5-1.9x as fast from
    2048^3 up). Where no 3xTF32 kernel pays or takes the problem (on Hopper: under 1024 rows or
    columns, 1024^3 of work, or K = 256, below which torch's fp32 error is smaller), IEEE fp32
    runs; ``explain()`` shows which. With TF32 on, float32 runs TF32 in either mode. Also set by
    the environment variable ``CUTLASS_OPS_FP32``."""
    _C.set_fp32_mode(mode)


def fp32_mode() -> str:
    """The current float32 mode: ``"ieee"`` or ``"3xtf32"``."""
    return _C.fp32_mode()


if os.environ.get("CUTLASS_OPS_FP32", "") not in ("", "ieee", "3xtf32"):
    warnings.warn(f"cutlass_ops: CUTLASS_OPS_FP32={os.environ['CUTLASS_OPS_FP32']!r} is neither 'ieee' nor "
                  "'3xtf32'; float32 runs IEEE fp32", stacklevel=2)


# ---- kernels --------------------------------------------------------------------------------


@dataclass(frozen=True)
class KernelInfo:
    """One registered kernel. ``layouts`` gives A's and B's storage: r = row-major, c = column-major."""

    name: str
    family: str  # cutlass3x, cutlass2x or handwritten
    config: str
    dtype: str  # f16, bf16, tf32 (float32 data, TF32 math), f32 (IEEE float32), 3xtf32, f64
    layouts: str
    alignment: tuple[int, int, int]  # elements, for A, B and the output
    min_capability: tuple[int, int]
    max_capability: Optional[tuple[int, int]]  # None: any newer GPU
    tile: tuple[int, int, int]
    smem_bytes: int
    decompositions: tuple[str, ...] = ("data-parallel",)  # how it can divide K: also split-k, stream-k
    orders_tiles: bool = False  # takes a tile order (raster, swizzle) from the tuning table
    max_m: Optional[int] = None  # most rows (M) it takes; None: any
    max_n: Optional[int] = None  # most columns (N) it takes; None: any
    n_multiple: int = 1  # N (the output's row length) must be a multiple of this
    role: str = "product"  # "teaching": a step of the hand-written ladder, run only with kernel=
    math: str = "mma"  # wgmma, mma (mma.sync, wmma, DMMA) or simt
    # tma-warp-specialized, cp-async-warp-specialized, cp-async-multistage, register-staged, streaming or basic
    mainloop: str = ""
    cluster: tuple[int, int] = (1, 1)  # CTAs per cluster along M and N
    stages: int = 0
    threads: int = 0  # per CTA
    persistent: bool = False  # a grid of about one CTA per SM walks the tiles
    pingpong: bool = False
    swap_ab: bool = False  # computes D^T = B^T A^T (the few rows on the MMA's narrow side)
    fuses_epilogue: bool = False  # applies linear's bias and activation while storing D (name ends in _bias_act)
    batched: bool = False  # runs a batch of products (bmm) in one launch
    max_batch: Optional[int] = None  # most matrices one batched launch takes; None: no limit or not batched
    # How split-K's K slices are summed (KernelInfo::slice_sum, csrc/dispatch/kernel.h): "serial" (in
    # turn, in the output), "second-kernel" (partials summed by a second kernel: the slice-summing
    # builds, float32 for 16-bit, D's own type for TF32 and float64), "stream-k-workspace" (CUTLASS 2.x's stream-K kernel, 16-bit) or
    # "last-slice" (the last K slice adds the others' float32 partials: the hand-written TMA kernel)
    slice_sum: str = "serial"
    # Split-K's slices meet in a float32 workspace, not in the output (slices_meet_in_float32): any
    # slice count, and the result rounded to 16 bits once
    split_k_in_workspace: bool = False

    @property
    def arch(self) -> str:
        major, minor = self.min_capability
        if self.max_capability == self.min_capability:
            return f"sm_{major}{minor}a"
        return f"sm_{major}{minor}+"

    def runs_on(self, capability: tuple[int, int]) -> bool:
        return self.min_capability <= tuple(capability) and (
            self.max_capability is None or tuple(capability) <= self.max_capability
        )


def _capability(cc: int) -> tuple[int, int]:
    return (cc // 10, cc % 10)


# KernelInfo fields that _C.kernels() gives under the same name and as they are.
_PLAIN_FIELDS = ("name", "family", "config", "smem_bytes", "orders_tiles", "max_m", "max_n", "n_multiple", "role", "math",
                 "mainloop", "stages", "threads", "persistent", "pingpong", "swap_ab", "fuses_epilogue", "batched",
                 "max_batch", "slice_sum", "split_k_in_workspace")


def list_kernels(capability: Optional[tuple[int, int]] = None) -> list[KernelInfo]:
    """Every kernel in this build; with ``capability``, only those that run on it."""
    kernels = []
    for k in _C.kernels():
        info = KernelInfo(
            dtype=k["precision"],
            layouts=k["layout_a"][0] + k["layout_b"][0],
            alignment=tuple(k["align"]),
            min_capability=_capability(k["min_cc"]),
            max_capability=None if k["max_cc"] is None else _capability(k["max_cc"]),
            tile=tuple(k["tile"]),
            decompositions=tuple(k["decompositions"]),
            cluster=tuple(k["cluster"]),
            **{field: k[field] for field in _PLAIN_FIELDS},
        )
        if capability is None or info.runs_on(capability):
            kernels.append(info)
    return kernels


# ---- devices ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class DeviceSpec:
    """The device facts the planner uses. Presets let you plan for a GPU you do not have."""

    name: str
    capability: tuple[int, int]
    sm_count: int
    smem_per_block: int  # opt-in dynamic shared memory per block, bytes
    clock_mhz: int = 0  # peak SM clock; 0: the compute capability's usual one (cost-model estimates only)
    dram_gbps: int = 0  # DRAM bandwidth; 0: likewise

    @classmethod
    def from_cuda(cls, device=None) -> "DeviceSpec":
        """The spec of a visible CUDA device (an index, "cuda:1", a torch.device, or None for the current one)."""
        device = torch.device("cuda", device) if isinstance(device, int) else torch.device(device or "cuda")
        if device.type != "cuda":
            raise ValueError(f"DeviceSpec.from_cuda: {device} is not a CUDA device")
        index = torch.cuda.current_device() if device.index is None else device.index
        cc, sm_count, smem, clock_mhz, dram_gbps = _C.device_desc(index)
        return cls(torch.cuda.get_device_name(index), _capability(cc), sm_count, smem, clock_mhz, dram_gbps)

    def desc(self) -> tuple[int, int, int, int, int]:
        """The planner's device tuple: (cc * 10, SM count, opt-in smem, clock MHz, DRAM GB/s)."""
        return (self.capability[0] * 10 + self.capability[1], self.sm_count, self.smem_per_block, self.clock_mhz,
                self.dram_gbps)


DEVICE_PRESETS = {
    # Clock and bandwidth: the vendors' datasheet figures (boost clock, HBM/GDDR bandwidth).
    "h100": DeviceSpec("NVIDIA H100 SXM", (9, 0), 132, 232448, 1980, 3350),
    "h100-pcie": DeviceSpec("NVIDIA H100 PCIe", (9, 0), 114, 232448, 1755, 2039),
    "h200": DeviceSpec("NVIDIA H200", (9, 0), 132, 232448, 1980, 4800),
    "a100": DeviceSpec("NVIDIA A100", (8, 0), 108, 166912, 1410, 2039),
    "l40s": DeviceSpec("NVIDIA L40S", (8, 9), 142, 101376, 2520, 864),
    "rtx4090": DeviceSpec("NVIDIA GeForce RTX 4090", (8, 9), 128, 101376, 2520, 1008),
    "a10": DeviceSpec("NVIDIA A10", (8, 6), 72, 101376, 1695, 600),
    "t4": DeviceSpec("Tesla T4", (7, 5), 40, 65536, 1590, 320),
}


def _resolve_device(device, tensor: torch.Tensor) -> DeviceSpec:
    if isinstance(device, DeviceSpec):
        return device
    if isinstance(device, str) and device.lower() in DEVICE_PRESETS:
        return DEVICE_PRESETS[device.lower()]
    if device is None and tensor.is_cuda:
        return DeviceSpec.from_cuda(tensor.device)
    if device is None:
        raise ValueError(
            f"explain(): the tensors are on {tensor.device}; say which GPU to plan for with "
            f"device=<DeviceSpec or one of {sorted(DEVICE_PRESETS)}>"
        )
    try:
        return DeviceSpec.from_cuda(device)
    except (RuntimeError, ValueError, TypeError, AssertionError) as error:
        raise ValueError(
            f"explain(): device={device!r} is neither a DeviceSpec, a preset {sorted(DEVICE_PRESETS)}, "
            "nor a usable CUDA device"
        ) from error


# ---- planning ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class OperandPlan:
    layout: str  # "row" or "col"
    ld: int
    align: int  # elements
    batch_stride: int = 0  # elements from one matrix of a batch to the next (bmm)


@dataclass(frozen=True)
class Candidate:
    """One way to run a call, with the cost model's predicted time (``explain().candidates``)."""

    kernel: str
    variant: str  # in-place, staged-row-b, staged-col-b (zero-padded aligned copies), kmajor-b (B copied K-major)
    decomposition: str  # data-parallel, split-k or stream-k
    splits: int
    predicted_us: float  # (kernel_us + copy_us) * residual
    kernel_us: float
    copy_us: float
    calibrated: bool  # its decomposition's constants were fitted on a sweep of this device class
    residual: float = 1.0  # the factor its measured errors on nearby training problems apply

    def label(self) -> str:
        how = self.decomposition + (f" x{self.splits}" if self.decomposition == "split-k" else "")
        return f"{self.kernel} ({how}" + ("" if self.variant == "in-place" else f", {self.variant}") + ")"


@dataclass(frozen=True)
class Plan:
    """What cutlass_ops does with a call. ``kernel`` is None when no kernel runs (see ``action``)."""

    kernel: Optional[str]
    action: str  # "kernel", "torch.mm" (handed to cuBLAS), "empty", "zeros" or "unsupported"
    reason: str
    dtype: str
    device: DeviceSpec
    problem: tuple[int, int, int] = (0, 0, 0)  # M, N, K as the kernel sees them
    batch: int = 1  # products in the batch (explain() of two 3-D tensors: a bmm call)
    transposed: bool = False  # computing out^T = mat2^T @ input^T (out is column-major)
    copy_input: bool = False
    copy_mat2: bool = False
    out_via_temp: bool = False
    staged: bool = False  # operands copied into zero-padded 16-byte aligned buffers for an SM90 kernel
    copy_b_kmajor: bool = False  # the kernel's B copied column-major (K-major) for the SM90 TF32 kernels
    decomposition: str = "data-parallel"  # how the kernel divides K: data-parallel, split-k or stream-k
    splits: int = 1  # K slices per tile (split-k)
    raster: str = "heuristic"  # tile order of persistent SM90 kernels: heuristic, along-m or along-n
    swizzle: int = 1  # tile-order band width: 1, 2, 4 or 8
    tuned: bool = False  # the kernel came from the tuning table (cutlass_ops.tuning)
    a: Optional[OperandPlan] = None
    b: Optional[OperandPlan] = None
    out: Optional[OperandPlan] = None
    candidates: tuple[Candidate, ...] = ()  # every way to run it, cheapest predicted first (unmeasured last)
    refused: tuple[tuple[str, str], ...] = ()  # (kernel, why it is no candidate in place)
    calibration: str = ""  # the cost model's constants: a calibration file, or "" (the device's peak rates)
    tuning_key: Optional[dict] = None  # the tuning table's key for the call (cutlass_ops.tuning.pin)

    SHOWN_CANDIDATES: ClassVar[int] = 12  # str() lists this many candidates, then counts the rest

    @property
    def predicted_us(self) -> Optional[float]:
        """The cost model's prediction for the plan's own candidate (None if not among them)."""
        for c in self.candidates:
            if (c.kernel, c.decomposition, c.splits) == (self.kernel, self.decomposition, self.splits) and \
                    c.variant == self.variant:
                return c.predicted_us
        return None

    @property
    def variant(self) -> str:
        if self.staged:
            return "staged-row-b" if self.b is not None and self.b.layout == "row" else "staged-col-b"
        return "kmajor-b" if self.copy_b_kmajor else "in-place"

    def __str__(self) -> str:
        lines = [f"cutlass_ops plan on {self.device.name} (sm_{self.device.capability[0]}{self.device.capability[1]}), "
                 f"{self.dtype}: {self.action}" + (f" {self.kernel}" if self.kernel else "")]
        lines.append(f"  why: {self.reason}")
        if self.a is not None:
            m, n, k = self.problem
            batch = f"a batch of {self.batch}, each " if self.batch > 1 else ""
            lines.append(f"  problem: {batch}{m}x{n}x{k}" +
                         (" (transposed: out^T = mat2^T @ input^T)" if self.transposed else ""))
            if self.action == "kernel":
                lines.append(f"  K: {self.decomposition}" + (f", {self.splits} slices" if self.decomposition == "split-k" else "")
                             + (" (tuning table)" if self.tuned else ""))
                if (self.raster, self.swizzle) != ("heuristic", 1):
                    lines.append(f"  tile order: {self.raster}, swizzle {self.swizzle}")
            for label, op in (("A", self.a), ("B", self.b), ("out", self.out)):
                lines.append(f"  {label}: {op.layout}-major, ld {op.ld}, aligned to {op.align} elements" +
                             (f", batch stride {op.batch_stride}" if self.batch > 1 else ""))
            copies = [n for n, c in (("input", self.copy_input), ("mat2", self.copy_mat2)) if c]
            if copies:
                lines.append(f"  copies: {', '.join(copies)} (strides no BLAS layout describes)")
            if self.out_via_temp:
                lines.append("  out: written to a contiguous temporary, then copied")
            if self.copy_b_kmajor:
                lines.append("  copies: B into a column-major (K-major) buffer: SM90 TF32 kernels read K-major "
                             "operands only")
            if self.staged:
                lines.append("  staged: A and B copied into zero-padded 16-byte aligned buffers (K and N rounded "
                             "up), the result into a padded temporary, then copied out")
        if self.candidates:
            source = self.calibration or "the device's peak rates (no calibration for this device)"
            lines.append(f"  candidates, cheapest predicted first (cost model: {source}):")
            shown = self.candidates[:self.SHOWN_CANDIDATES]
            for c in shown:
                mark = "*" if (c.kernel, c.variant, c.decomposition, c.splits) == (
                    self.kernel, self.variant, self.decomposition, self.splits) else " "
                copy = f" incl. {c.copy_us:.1f} copies" if c.copy_us else ""
                # The factor the sweep's errors on nearby training problems apply (cost_model.h).
                residual = f" (x{c.residual:.2f} measured nearby)" if abs(c.residual - 1) >= 0.005 else ""
                # Under a calibration, a candidate whose kernel, or only whose decomposition, it never
                # timed ranks after the timed ones (cost_model.h).
                unmeasured = " [unmeasured: ranked after the measured ones]" if self.calibration and \
                    not c.calibrated else ""
                lines.append(f"  {mark} {c.predicted_us:10.1f} us{copy}{residual}  {c.label()}{unmeasured}")
            if len(self.candidates) > len(shown):
                lines.append(f"    ... {len(self.candidates) - len(shown)} more")
        if self.refused:
            lines.append("  not candidates:")
            for name, why in self.refused:
                lines.append(f"    - {name}: {why}")
        return "\n".join(lines)


def explain(input: torch.Tensor, mat2: torch.Tensor, *, out: Optional[torch.Tensor] = None,
            kernel: Optional[str] = None, device=None) -> Plan:
    """Which kernel ``mm(input, mat2, out=out, kernel=kernel)`` would run, and why (for two 3-D
    tensors, ``bmm(input, mat2, out=out)``: the plan of the batch, ``Plan.batch`` > 1).

    Runs nothing. For CUDA tensors the plan is for their device. For meta (or CPU) tensors,
    pass ``device=`` (a :class:`DeviceSpec` or a preset name such as ``"h100"``): meta
    tensors plan from their sizes, strides and storage offsets, so dispatch can be
    examined on a machine without a GPU.
    """
    if not isinstance(input, torch.Tensor):
        raise _type_error(1, "input", input)
    if not isinstance(mat2, torch.Tensor):
        raise _type_error(2, "mat2", mat2)
    spec = _resolve_device(device, input)
    # Raises mm()'s own errors for bad shapes and dtype mismatches.
    d = _C.explain(input, mat2, out, kernel or "", spec.desc())
    if not d["supported_dtype"]:
        dtype = str(input.dtype).replace("torch.", "")
        if input.dtype.is_complex:
            return Plan(None, "torch.mm", "complex dtypes are handed to torch.mm (cuBLAS)", dtype, spec)
        if d["empty_integer_product"]:  # (kernel= on one was refused above, as mm() refuses it)
            return Plan(None, "torch.mm", f"an empty {dtype} product: torch.mm's CUDA kernel computes it (zeros "
                        "where K = 0)", dtype, spec)
        return Plan(None, "unsupported", f"torch.mm does not support {dtype} on CUDA either", dtype, spec)
    if kernel and d["forced_rejection"]:
        raise ValueError(f"cutlass_ops.mm: kernel '{kernel}' cannot run this problem: it {d['forced_rejection']}")

    m, k = input.shape[-2:]
    n = mat2.shape[-1]
    batch = input.shape[0] if input.dim() == 3 else 1
    action, reason = "kernel", d["reason"]
    if m == 0 or n == 0 or batch == 0:
        action, reason = "empty", "the result has no elements; no kernel runs"
    elif k == 0:
        action, reason = "zeros", "K = 0: the result is filled with zeros; no kernel runs"
    elif not any(kern.runs_on(spec.capability) for kern in list_kernels()):
        action, reason = "unsupported", (f"this build has no kernels for compute capability "
                                         f"{spec.capability[0]}.{spec.capability[1]}; mm() raises")
    elif d["kernel"] is None:
        action = "torch.mm"
    ops = {key: OperandPlan(**d[key]) for key in ("a", "b", "d")}
    return Plan(
        kernel=d["kernel"] if action == "kernel" else None,
        action=action,
        reason=reason,
        dtype=d["precision"],
        device=spec,
        problem=tuple(d["problem"]),
        batch=d["batch"],
        transposed=d["transposed"],
        copy_input=d["copy_a"],
        copy_mat2=d["copy_b"],
        out_via_temp=d["out_via_temp"],
        staged=d["staged"],
        copy_b_kmajor=d["copy_b_kmajor"],
        decomposition=d["decomposition"],
        splits=d["splits"],
        raster=d["raster"],
        swizzle=d["swizzle"],
        tuned=d["tuned"],
        a=ops["a"],
        b=ops["b"],
        out=ops["d"],
        candidates=tuple(Candidate(kern, variant, decomposition, splits, us, kernel_us, copy_us, calibrated, residual)
                         for (variant, kern, decomposition, splits), us, kernel_us, copy_us, calibrated, residual
                         in d["ranked"]),
        refused=tuple(tuple(r) for r in d["refused"]),
        calibration=d["calibration"],
        tuning_key=d.get("tuning_key"),
    )
