"""Load the compiled extension and register every kernel module's kernels.

cutlass_ops._C holds the ops, the planner and the registry; each kernel module
(_C_sm90, _C_sm80, ...) exports a `kernel_table` capsule that _C merges into its registry.
The modules a build produced are listed in the generated _build_info module.
"""

from __future__ import annotations

import importlib
from pathlib import Path

import torch  # (loads libtorch before the extension that links it)

BUILD_COMMAND = ("pip install -r requirements.txt && pip install --no-deps nvidia-cutlass==4.2.0.0 && "
                 "pip install --no-build-isolation -e .")

try:
    from . import _C, _build_info
except ImportError as error:
    here = Path(__file__).resolve().parent
    if not any(here.glob("_C.*")) or not (here / "_build_info.py").is_file():
        raise ImportError(
            f"cutlass_ops is not built: {here} holds no compiled extension. From the repository's root: "
            f"{BUILD_COMMAND} (README.md, 'Install')") from None
    raise ImportError(
        f"cutlass_ops' compiled extension in {here} failed to load ({error}); it was probably built against "
        f"another torch than this one ({torch.__version__}). Rebuild it: {BUILD_COMMAND}") from error


def _register_kernel_modules() -> dict[str, str]:
    """Import each kernel module and register its table; returns {module: error} for failures."""
    failed = {}
    for name in _build_info.KERNEL_MODULES:
        if name in _C.registered_modules():
            continue
        try:
            module = importlib.import_module(f"{__package__}.{name}")
        except ImportError as error:
            failed[name] = str(error)
            continue
        try:
            _C.register_kernel_table(module.kernel_table)
        except ValueError as error:  # a module from another build (kernel ABI, kernel table)
            raise ImportError(f"cutlass_ops' compiled modules do not match each other ({error}): "
                              f"{BUILD_COMMAND}") from error
    return failed


FAILED_KERNEL_MODULES = _register_kernel_modules()
