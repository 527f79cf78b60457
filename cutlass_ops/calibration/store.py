"""The cost model's shipped constants: one JSON file per calibrated device class in
``cutlass_ops/calibration/data/`` (written by ``python -m cutlass_ops fit``), keyed by compute
capability and SM count. All are handed to the planner at import, which needs no GPU: the
planner takes the one matching the device it plans for (an exact match, else one of the same
compute capability), and plans from the device's peak rates where none matches.
"""

from __future__ import annotations

import json
import os
import warnings
from pathlib import Path

from .. import _extension

_C = _extension._C

FORMAT = "cutlass_ops-calibration"
FORMAT_VERSION = 1
DATA_DIR = Path(__file__).resolve().parent / "data"


class CalibrationWarning(UserWarning):
    """A calibration file was ignored."""


def load(path: os.PathLike) -> dict:
    data = json.loads(Path(path).read_text())
    if not isinstance(data, dict) or data.get("format") != FORMAT or data.get("version") != FORMAT_VERSION:
        raise ValueError(f"{path}: not a cutlass_ops calibration file of version {FORMAT_VERSION}")
    return data


def install(data: dict, source: str = "") -> None:
    """Hand a calibration to the planner (for its compute capability and SM count). Constants of
    kernels this build lacks are kept: they are looked up by name and simply never asked for."""
    cc = data["capability"][0] * 10 + data["capability"][1]
    _C.add_calibration(cc, data["sm_count"], source or data.get("device", ""), data["copies"], data["kernels"])


def install_shipped() -> list[str]:
    """Load every calibration shipped with the package; a file that does not load is skipped
    with a CalibrationWarning (the planner then estimates from the device's properties)."""
    loaded = []
    for path in sorted(DATA_DIR.glob("*.json")):
        try:
            data = load(path)
            install(data, f"{path.name} ({data['device']}, fitted {data['fitted'][:10]})")
            loaded.append(path.name)
        except (OSError, ValueError, KeyError, TypeError) as error:
            warnings.warn(f"cutlass_ops: ignoring calibration file {path}: {error}", CalibrationWarning, stacklevel=2)
    return loaded
