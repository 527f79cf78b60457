"""The one vocabulary of precisions, shared by the package, the command line, the tests and the
benchmarks.

A precision is what a kernel computes in, named as the kernel table names it: ``f16``, ``bf16``,
``tf32`` (float32 tensors on TF32 tensor cores), ``f32`` (IEEE float32), ``3xtf32`` (float32 from
three TF32 products) and ``f64``. The command line also takes torch's and common spellings
(``fp16``, ``float16``, ``half``, ``bfloat16``, ``fp32``, ``float32``, ``fp64``, ``float64``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import torch

# precision -> the torch dtype of its tensors
TORCH_DTYPE: dict[str, torch.dtype] = {
    "f16": torch.float16,
    "bf16": torch.bfloat16,
    "tf32": torch.float32,
    "f32": torch.float32,
    "3xtf32": torch.float32,
    "f64": torch.float64,
}

# other spellings -> precision
ALIASES: dict[str, str] = {
    "fp16": "f16", "float16": "f16", "half": "f16",
    "bfloat16": "bf16",
    "fp32": "f32", "float32": "f32",
    "fp64": "f64", "float64": "f64",
}

# dtype -> the precision of an IEEE product of it (float32: f32; TF32 is a choice on top)
_OF_DTYPE: dict[torch.dtype, str] = {torch.float16: "f16", torch.bfloat16: "bf16", torch.float32: "f32",
                                     torch.float64: "f64"}


def canonical(name: str) -> str:
    """The precision a name or alias means; ValueError naming the choices for anything else."""
    key = str(name).strip().lower()
    if key in TORCH_DTYPE:
        return key
    if key in ALIASES:
        return ALIASES[key]
    raise ValueError(f"unknown precision {name!r}; choose from {', '.join(TORCH_DTYPE)} "
                     f"(or {', '.join(ALIASES)})")


def torch_dtype(name: str) -> torch.dtype:
    """The dtype of a precision's tensors (a name or alias)."""
    return TORCH_DTYPE[canonical(name)]


def of_dtype(dtype: torch.dtype) -> str:
    """The precision of an IEEE product of `dtype` (``f32`` for float32)."""
    try:
        return _OF_DTYPE[dtype]
    except KeyError:
        raise ValueError(f"cutlass_ops computes in {', '.join(map(str, _OF_DTYPE))}, not {dtype}") from None


def accuracy_of(name: str) -> str:
    """The precision whose accuracy a result is held to: its own, but 3xTF32's is IEEE float32's."""
    name = canonical(name)
    return "f32" if name == "3xtf32" else name


@contextlib.contextmanager
def computing_in(name: str) -> Iterator[str]:
    """Within the block, float32 products compute in precision `name` (a name or alias) on both
    torch and cutlass_ops: TF32 allowed for ``tf32`` only, and cutlass_ops' float32 mode
    ``3xtf32`` for ``3xtf32``, ``ieee`` otherwise. Both settings are restored on leaving, also on
    error. Yields the canonical name. Other dtypes are unaffected by either setting."""
    from .ops import fp32_mode, set_fp32_mode

    name = canonical(name)
    previous_tf32, previous_mode = torch.backends.cuda.matmul.allow_tf32, fp32_mode()
    try:
        torch.backends.cuda.matmul.allow_tf32 = name == "tf32"
        set_fp32_mode("3xtf32" if name == "3xtf32" else "ieee")
        yield name
    finally:
        torch.backends.cuda.matmul.allow_tf32 = previous_tf32
        set_fp32_mode(previous_mode)
