"""cutlass_ops: a drop-in torch.mm built on NVIDIA CUTLASS.

    import torch, cutlass_ops
    C = cutlass_ops.mm(A, B)                 # like torch.mm(A, B)
    cutlass_ops.mm(A, B, out=C)              # like torch.mm(A, B, out=C)
    cutlass_ops.mm(A, B, kernel="<name>")    # force one kernel from list_kernels()
    print(cutlass_ops.explain(A, B))         # which kernel runs, and why
"""

from . import _extension  # noqa: F401  (loads the extension, registers the kernels)
from .info import info
from .ops import DEVICE_PRESETS, DeviceSpec, KernelInfo, OperandPlan, Plan, explain, list_kernels, mm

__version__ = "0.1.0"

__all__ = [
    "DEVICE_PRESETS",
    "DeviceSpec",
    "KernelInfo",
    "OperandPlan",
    "Plan",
    "explain",
    "info",
    "list_kernels",
    "mm",
]
