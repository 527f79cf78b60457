"""`python -m cutlass_ops info`: what was built, against what, and what runs on this machine."""

from __future__ import annotations

import platform
from collections import Counter

import torch

from . import _build_info, _extension
from .ops import DeviceSpec, list_kernels


def info() -> str:
    lines = [
        f"cutlass_ops {__import__('cutlass_ops').__version__}",
        f"  python        {platform.python_version()}",
        f"  torch         {torch.__version__} (CUDA {torch.version.cuda}); built against {_build_info.TORCH_VERSION}",
        f"  nvcc          {_build_info.NVCC_VERSION}",
        f"  CUTLASS       {_build_info.CUTLASS_VERSION} from {_build_info.CUTLASS_SOURCE} ({_build_info.CUTLASS_ROOT})",
        f"  archs built   {';'.join(_build_info.ARCHS)}  modules {', '.join(_build_info.KERNEL_MODULES)}",
        f"  built at      {_build_info.BUILT_AT}",
    ]
    for name, error in _extension.FAILED_KERNEL_MODULES.items():
        lines.append(f"  FAILED to load {name}: {error}")
    kernels = list_kernels()
    by_family = Counter(k.family for k in kernels)
    lines.append(f"  kernels       {len(kernels)} ({', '.join(f'{n} {f}' for f, n in sorted(by_family.items()))})")
    if torch.cuda.is_available():
        for index in range(torch.cuda.device_count()):
            spec = DeviceSpec.from_cuda(index)
            usable = list_kernels(spec.capability)
            lines.append(
                f"  cuda:{index}        {spec.name}, compute capability {spec.capability[0]}.{spec.capability[1]}, "
                f"{spec.sm_count} SMs, {spec.smem_per_block // 1024} KiB smem/block: {len(usable)} kernels run on it"
            )
    else:
        lines.append("  device        no CUDA device visible: the ops cannot run here (planning with explain() works)")
    return "\n".join(lines)
