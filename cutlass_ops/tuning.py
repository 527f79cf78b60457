"""Autotuning and the tuning table: which candidate runs fastest on a problem, measured.

The planner (csrc/dispatch/planner.cpp) looks every call up in a table of exact problems
(dtype, layouts and alignments, M, N, K, compute capability, SM count) before asking the cost
model. The table is filled two ways:

* autotuning: with ``CUTLASS_OPS_AUTOTUNE=1`` or ``set_autotune(True)``, a problem with no
  entry is timed on the cost model's cheapest few candidates (variant, kernel, K
  decomposition) on the call's own operands, in alternating rounds until their order is beyond
  the timings' noise, and the fastest is recorded; a candidate is never recorded over the
  model's pick unless it is faster beyond that noise. When the winner is a persistent SM90
  kernel with more tiles than SMs, its tile orders (raster along M or N, swizzle 1-8) are
  timed too. ``tune()`` does that for a list of shapes up front;
* your cache file (``cache_path()``), loaded when the process first initialises CUDA (not at
  import: asking for the device's name would initialise CUDA, and a program that forks after
  importing cutlass_ops could not use CUDA in its children), written at exit when autotuning
  added entries. With several GPUs, the file of the device current at that moment.

A cache file is tied to its device and its CUTLASS version; a file that does not match, or does
not parse, is ignored with a :class:`TuningWarning`. Entries naming a kernel this build lacks
are dropped one by one, so a cache survives adding or removing kernels. No code is compiled at
run time: tuning only chooses among the kernels in the build.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import json
import os
import re
import warnings
from pathlib import Path
from typing import Iterable, Iterator, Optional, Sequence

import torch

from . import _extension

_C = _extension._C

FORMAT_VERSION = 1

__all__ = ["TuningWarning", "autotune_enabled", "build_id", "cache_path", "clear", "entries", "load", "pin", "save",
           "set_autotune", "tune"]


class TuningWarning(UserWarning):
    """A tuning file was ignored (corrupt, or made for another device or CUTLASS version)."""


def set_autotune(enabled: bool = True) -> None:
    """Time every new problem on each eligible kernel once and keep the fastest (CUTLASS_OPS_AUTOTUNE=1)."""
    _C.set_autotune(bool(enabled))


def autotune_enabled() -> bool:
    return _C.autotune_enabled()


def entries() -> list[dict]:
    """The tuning table: one dict per problem (precision, layouts, alignments, mnk, kernel, decomposition, splits, raster, swizzle, us)."""
    return sorted(_C.tuning_entries(), key=lambda e: (e["precision"], e["mnk"], e["layout_a"], e["layout_b"]))


def pin(input: torch.Tensor, mat2: torch.Tensor, kernel, decomposition: str = "data-parallel", splits: int = 1,
        variant: str = "in-place", *, out: Optional[torch.Tensor] = None, device=None) -> dict:
    """Make every call shaped like ``mm(input, mat2, out=out)`` run one candidate: ``kernel`` (a
    name, or a :class:`cutlass_ops.Candidate` from ``explain().candidates``, whose decomposition,
    splits and variant then apply) in ``variant`` (in-place, staged-row-b, staged-col-b,
    kmajor-b). Adds a tuning-table entry (saved with the cache at exit like autotuned ones);
    ``clear()`` removes it. Raises ValueError for a candidate that cannot run the call."""
    from .ops import explain

    if not isinstance(kernel, str):
        kernel, decomposition, splits, variant = kernel.kernel, kernel.decomposition, kernel.splits, kernel.variant
    plan = explain(input, mat2, out=out, device=device)
    if plan.tuning_key is None or plan.action != "kernel":
        raise ValueError(f"pin(): no kernel runs this call ({plan.action}: {plan.reason})")
    entry = {**plan.tuning_key, "align": list(plan.tuning_key["align"]), "mnk": list(plan.tuning_key["mnk"]),
             "kernel": kernel, "decomposition": decomposition, "splits": splits, "variant": variant}
    _C.tuning_insert(entry)
    pinned = explain(input, mat2, out=out, device=device)
    if (pinned.kernel, pinned.decomposition, pinned.variant) != (kernel, decomposition, variant):
        _C.tuning_remove(entry)
        raise ValueError(f"pin(): {kernel} ({decomposition}, {variant}) cannot run this call; "
                         f"explain() lists its candidates")
    return entry


@contextlib.contextmanager
def pinned(input: torch.Tensor, mat2: torch.Tensor, kernel, decomposition: str = "data-parallel", splits: int = 1,
           variant: str = "in-place", *, out: Optional[torch.Tensor] = None, device=None) -> Iterator[dict]:
    """``pin()`` for the block alone: within it, calls shaped like ``mm(input, mat2, out=out)`` run
    the candidate; after it, the tuning table is as it was (entries pinned, tuned or loaded since
    entering are dropped). Yields the pinned entry."""
    saved = entries()
    entry = pin(input, mat2, kernel, decomposition, splits, variant, out=out, device=device)
    try:
        yield entry
    finally:
        clear()
        for e in saved:
            _C.tuning_insert(e)


def clear() -> None:
    """Forget every entry (the cost model decides until something is loaded, tuned or pinned again)."""
    _C.tuning_clear()


def build_id() -> str:
    """Identifies this build: its CUTLASS version, kernel set and sources (setup.py's digest of
    csrc/, where the build recorded one). Recorded in tuning caches and sweep files."""
    from . import _build_info

    names = sorted(k["name"] for k in _C.kernels())
    parts = [_build_info.CUTLASS_VERSION, *names]
    sources = getattr(_build_info, "SOURCES_DIGEST", None)  # builds before it was recorded: none
    if sources:
        parts.append(f"sources {sources}")
    digest = hashlib.sha1("\n".join(parts).encode()).hexdigest()
    return digest[:16]


def _device_name(device: Optional[int] = None) -> str:
    return torch.cuda.get_device_name(torch.cuda.current_device() if device is None else device)


def _slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")


def cache_path(device: Optional[int] = None) -> Path:
    """Where this device's tuning cache lives: $CUTLASS_OPS_TUNING_CACHE, else ~/.cache/cutlass_ops/."""
    if os.environ.get("CUTLASS_OPS_TUNING_CACHE"):
        return Path(os.environ["CUTLASS_OPS_TUNING_CACHE"])
    root = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "cutlass_ops"
    return root / f"tuning-{_slug(_device_name(device))}.json"


def save(path: Optional[os.PathLike] = None, device: Optional[int] = None) -> Path:
    """Write the whole table to ``path`` (default: ``cache_path()``), atomically."""
    from ._build_info import CUTLASS_VERSION

    path = Path(path) if path is not None else cache_path(device)
    path.parent.mkdir(parents=True, exist_ok=True)
    document = {
        "format": FORMAT_VERSION,
        "device": _device_name(device),
        "build": build_id(),
        "cutlass": CUTLASS_VERSION,
        "entries": [{**e, "align": list(e["align"]), "mnk": list(e["mnk"])} for e in entries()],
    }
    tmp = path.with_name(path.name + f".tmp{os.getpid()}")
    tmp.write_text(json.dumps(document, indent=1))
    os.replace(tmp, path)
    return path


def load(path: Optional[os.PathLike] = None, device: Optional[int] = None) -> int:
    """Add a tuning file's entries to the table; returns how many were added.

    A missing file adds nothing, silently. A file that does not parse, or was made for another
    device or CUTLASS version, adds nothing and warns. Entries naming kernels this build lacks
    are skipped with one warning.
    """
    from ._build_info import CUTLASS_VERSION

    path = Path(path) if path is not None else cache_path(device)
    if not path.is_file():
        return 0
    try:
        document = json.loads(path.read_text())
        if not isinstance(document, dict) or not isinstance(document.get("entries"), list):
            raise ValueError("not a cutlass_ops tuning file (no 'entries' list)")
    except (OSError, ValueError) as error:
        warnings.warn(f"cutlass_ops: ignoring tuning file {path}: {error}", TuningWarning, stacklevel=2)
        return 0
    expected = {"format": FORMAT_VERSION, "device": _device_name(device), "cutlass": CUTLASS_VERSION}
    stale = [f"{key} {document.get(key)!r} (this process: {value!r})" for key, value in expected.items()
             if document.get(key) != value]
    if stale:
        warnings.warn(f"cutlass_ops: ignoring stale tuning file {path}: made for {', '.join(stale)}",
                      TuningWarning, stacklevel=2)
        return 0
    added, skipped = 0, []
    for entry in document["entries"]:
        try:
            _C.tuning_insert(entry)
            added += 1
        except (ValueError, KeyError, TypeError, RuntimeError) as error:
            skipped.append(str(error))
    if skipped:
        warnings.warn(f"cutlass_ops: {path}: skipped {len(skipped)} of {len(document['entries'])} entries "
                      f"(first: {skipped[0]})", TuningWarning, stacklevel=2)
    return added


def tune(shapes: Iterable[Sequence[int]], dtypes: Sequence[str] = ("bf16",), layouts: Sequence[str] = ("rr",),
         device: Optional[int] = None) -> list[dict]:
    """Autotune each (M, N, K) x dtype x layout now; returns the table entries they produced.

    dtypes: precision names as everywhere in the package (bf16, f16, tf32, f32, f64, and 3xtf32:
    float32 with ``set_fp32_mode("3xtf32")``; aliases such as fp16 or float32 are taken).
    Layouts: two letters for A and B, r = row-major, c = column-major.
    """
    from . import precisions
    from .ops import mm
    from .testing import matrix

    dev = torch.device("cuda", torch.cuda.current_device() if device is None else device)
    before = {_entry_key(e) for e in entries()}
    was_on = autotune_enabled()
    try:
        set_autotune(True)
        for name in dtypes:
            try:
                name = precisions.canonical(name)
            except ValueError as error:
                raise ValueError(f"tune(): {error}") from None
            dtype = precisions.torch_dtype(name)
            with precisions.computing_in(name):
                for m, n, k in shapes:
                    for layout in layouts:
                        a = matrix(m, k, dtype, layout[0], device=dev)
                        b = matrix(k, n, dtype, layout[1], device=dev)
                        mm(a, b)
                torch.cuda.synchronize(dev)
    finally:
        set_autotune(was_on)
    return [e for e in entries() if _entry_key(e) not in before]


def _entry_key(e: dict) -> tuple:
    return (e["precision"], e["layout_a"], e["layout_b"], tuple(e["align"]), e["cc"], e["sm_count"], tuple(e["mnk"]))


# ---- at CUDA's initialisation and at exit ------------------------------------------------------

_loaded_count = 0


def _load_cache() -> None:
    """The user's cache of autotuned entries, for the current device."""
    global _loaded_count
    if not torch.cuda.is_available():
        return
    load()
    _loaded_count = len(_C.tuning_entries())


def _load_defaults() -> None:
    """Loads the cache when CUDA is initialised: at once if it already is, else through torch's
    queue of calls deferred to that moment (``torch.cuda._lazy_call``, as torch.cuda.manual_seed
    defers its work), so that importing cutlass_ops initialises nothing."""
    if os.environ.get("CUTLASS_OPS_NO_TUNING_TABLE"):
        return
    lazy_call = getattr(torch.cuda, "_lazy_call", None)
    if lazy_call is None:  # a torch without the queue: load now
        _load_cache()
    else:
        lazy_call(_load_cache)


def _save_at_exit() -> None:
    # Only autotuning adds entries after import; persist them for the next process.
    try:
        if torch.cuda.is_initialized() and len(_C.tuning_entries()) > _loaded_count:
            save()
    except Exception as error:  # noqa: BLE001 - never fail interpreter shutdown over a cache
        warnings.warn(f"cutlass_ops: could not save the tuning cache: {error}", TuningWarning, stacklevel=1)


_load_defaults()
atexit.register(_save_at_exit)
