"""The cost model's shipped constants: one gzip-compressed JSON file per calibrated device class
in ``cutlass_ops/calibration/data/`` (written by ``python -m cutlass_ops fit``; its training
residuals are most of it), keyed by compute
capability, SM count and DRAM bandwidth. All are handed to the planner at import, which needs
no GPU: the planner takes the one of the device's compute capability nearest in SM count, then
in bandwidth (calibration_for, csrc/dispatch/cost_model.h), and plans from the device's peak
rates where none has its compute capability.
"""

from __future__ import annotations

import gzip
import json
import os
import warnings
from pathlib import Path
from typing import Optional

from .. import _extension

_C = _extension._C

FORMAT = "cutlass_ops-calibration"
# 3: eleven constants per kernel and decomposition (the reduction reads, cost_model.h); 2: ten
# (the ragged-pitch L2 term); 1: nine.
FORMAT_VERSION = 3
DATA_DIR = Path(__file__).resolve().parent / "data"


class CalibrationWarning(UserWarning):
    """A calibration file was ignored."""


SUFFIX = ".json.gz"


def load(path: os.PathLike) -> dict:
    """A calibration file's contents; ValueError (without the path: the caller names it) if it is
    not one this build reads."""
    raw = Path(path).read_bytes()
    data = json.loads(gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw)
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ValueError("not a cutlass_ops calibration file")
    if data.get("version") != FORMAT_VERSION:
        raise ValueError(f"a calibration of format version {data.get('version')}, where this build reads "
                         f"version {FORMAT_VERSION} (its cost model has other terms); fit it again from its sweep: "
                         f"python -m cutlass_ops fit <sweep folder>")
    return data


def install(data: dict, source: str = "") -> None:
    """Hand a calibration to the planner (for its compute capability, SM count and, where its
    device description records it, DRAM bandwidth). Constants of kernels this build lacks are
    kept: they are looked up by name and simply never asked for."""
    cc = data["capability"][0] * 10 + data["capability"][1]
    dram_gbps = data["desc"][4] if "desc" in data else 0
    _C.add_calibration(cc, data["sm_count"], source or data.get("device", ""), data["copies"], data["kernels"],
                       residual_fields(data.get("residual")), data.get("ctas_per_sm"), dram_gbps,
                       data.get("split_counts"))


def save(data: dict, path: os.PathLike) -> None:
    """Write a calibration (gzip-compressed JSON, byte-for-byte reproducible: no timestamp in
    the gzip header)."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=9, mtime=0) as f:
        f.write((json.dumps(data, separators=(",", ":")) + "\n").encode())


LAYOUTS = ("rr", "rc", "cr", "cc")


def residual_fields(residual: Optional[dict]) -> Optional[dict]:
    """The residuals by kernel name. A field is stored once per class (origin_arch_precision_config,
    fit.residual_key: its four layouts together, and for 16-bit kernels both precisions) and is
    handed for every name of the class, as one list (one field in C++); names this build lacks
    are never asked for."""
    if residual is None:
        return None
    fields = {}
    for key, slots in residual["fields"].items():
        origin, arch, precision, rest = key.split("_", 3)
        for p in ("f16", "bf16") if precision == "16bit" else (precision,):
            for layouts in LAYOUTS:
                fields[f"{origin}_{arch}_{p}_{layouts}_{rest}"] = slots
    out = {"bandwidth": residual["bandwidth"], "shrink": residual["shrink"],
           "layout_distance": residual["layout_distance"], "fields": fields}
    for key in ("batched_bandwidth", "batched_shrink"):  # the single products' where absent
        if key in residual:
            out[key] = residual[key]
    return out


def install_shipped() -> list[str]:
    """Load every calibration shipped with the package, in place of any loaded before; a file that
    does not load is skipped with a CalibrationWarning (the planner then estimates from the
    device's properties)."""
    _C.clear_calibrations()
    loaded = []
    for path in sorted(DATA_DIR.glob(f"*{SUFFIX}")):
        try:
            data = load(path)
            install(data, f"{path.name} ({data['device']}, fitted {data['fitted'][:10]})")
            loaded.append(path.name)
        except (OSError, ValueError, KeyError, TypeError) as error:
            warnings.warn(f"cutlass_ops: ignoring calibration file {path}: {error}", CalibrationWarning, stacklevel=2)
    return loaded
