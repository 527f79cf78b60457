"""cutlass_ops: a drop-in torch.mm built on NVIDIA CUTLASS.

    import torch, cutlass_ops
    C = cutlass_ops.mm(A, B)                 # like torch.mm(A, B)
    cutlass_ops.mm(A, B, out=C)              # like torch.mm(A, B, out=C)
    cutlass_ops.mm(A, B, kernel="<name>")    # force one kernel from list_kernels()
    cutlass_ops.mm_(A, W)                    # A <- A @ W in place (square W), no A-sized result
    cutlass_ops.bmm(Q, K.transpose(1, 2))    # like torch.bmm; also baddbmm and matmul
    print(cutlass_ops.explain(A, B))         # which kernel runs, and why
    with cutlass_ops.patched(): ...          # torch.mm and Tensor.mm run on cutlass_ops
    with cutlass_ops.use_cutlass(): ...      # aten::mm's and aten::bmm's CUDA kernels are cutlass_ops (@, linear)
    cutlass_ops.stats()                      # what ran where
    print(cutlass_ops.profile(model, x))     # each matrix product of a model on torch and on cutlass_ops
    cutlass_ops.set_fp32_mode("3xtf32")      # float32 without TF32: 3xTF32 tensor cores, fp32 accuracy
    cutlass_ops.tuning.set_autotune(True)    # time new problems on every eligible kernel, cache the winner
"""

import sys as _sys

__version__ = "0.1.0"


def _running_the_cli() -> bool:
    """Whether this import is `python -m cutlass_ops ...` starting up."""
    argv = getattr(_sys, "orig_argv", [])
    return any(a == "-m" and b == "cutlass_ops" for a, b in zip(argv, argv[1:]))


try:
    from . import _extension  # noqa: F401  (loads the extension, registers the kernels)
except ImportError as _error:
    if not _running_the_cli():
        raise
    # `python -m cutlass_ops --help` and `--version` work without the compiled extension; any
    # command that needs it prints this error (cutlass_ops/__main__.py).
    _LOAD_ERROR = _error
else:
    _LOAD_ERROR = None
    from .calibration import store as _calibration_store

    _calibration_store.install_shipped()  # the cost model's fitted constants (no GPU needed)
    from .info import info
    from . import tuning
    from .inplace import mm_
    from .ops import (ACTIVATIONS, DEVICE_PRESETS, Candidate, DeviceSpec, KernelInfo, OperandPlan, Plan, addmm, baddbmm,
                      bmm, explain, fp32_mode, linear, list_kernels, matmul, mm, set_fp32_mode)
    from .patch import (disable, enable, enabled, patch_torch, patched, patched_targets, reset_stats, set_logging, stats,
                        unpatch_torch, use_cutlass)
    from .profiler import ProfileReport, profile

__all__ = [
    "ACTIVATIONS",
    "addmm",
    "baddbmm",
    "bmm",
    "linear",
    "matmul",
    "Candidate",
    "DEVICE_PRESETS",
    "disable",
    "enable",
    "enabled",
    "patch_torch",
    "patched",
    "patched_targets",
    "reset_stats",
    "set_logging",
    "stats",
    "unpatch_torch",
    "use_cutlass",
    "DeviceSpec",
    "KernelInfo",
    "OperandPlan",
    "Plan",
    "ProfileReport",
    "explain",
    "profile",
    "fp32_mode",
    "info",
    "list_kernels",
    "mm",
    "mm_",
    "set_fp32_mode",
    "tuning",
]



if _LOAD_ERROR is None and __import__("os").environ.get("CUTLASS_OPS_ENABLE", "") not in ("", "0"):
    enable()  # dispatcher mode from the start: aten::mm's CUDA kernel is cutlass_ops
