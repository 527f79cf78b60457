"""Load the compiled extension and register every kernel module's kernels.

cutlass_ops._C holds the ops, the planner and the registry; each kernel module
(_C_sm90, _C_sm80, ...) exports a `kernel_table` capsule that _C merges into its registry.
The modules a build produced are listed in the generated _build_info module.
"""

from __future__ import annotations

import importlib

import torch  # noqa: F401  (loads libtorch before the extension that links it)

try:
    from . import _C, _build_info
except ImportError as error:  # pragma: no cover - only without a build
    raise ImportError(
        "cutlass_ops' compiled extension is missing or failed to load "
        f"({error}). Build it with `pip install --no-build-isolation -e .` "
        "(see README.md); `python -m cutlass_ops info` then shows what was built."
    ) from error


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
        _C.register_kernel_table(module.kernel_table)
    return failed


FAILED_KERNEL_MODULES = _register_kernel_modules()
