"""Locate the CUTLASS headers cutlass_ops compiles against.

Two sources, in this order:

1. ``CUTLASS_DIR``: the root of any CUTLASS checkout (the folder holding
   ``include/cutlass/cutlass.h``).
2. The PyPI package ``nvidia-cutlass`` (pinned in ``CUTLASS_PIN``), whose wheel
   carries the headers under ``cutlass_library/source``. We only *find* the
   package: importing it pulls in cuda-python, scipy and friends, which the
   build does not need.

Used by ``setup.py``; kept free of torch and setuptools so it can be run alone:
``python third_party/find_cutlass.py`` prints what it finds.
"""

from __future__ import annotations

import importlib.util
import os
import re
from dataclasses import dataclass
from pathlib import Path

CUTLASS_PIN = "4.2.0.0"


@dataclass(frozen=True)
class CutlassHeaders:
    root: Path  # folder that holds include/ and tools/util/include
    source: str  # "CUTLASS_DIR" or "nvidia-cutlass"
    version: str  # from include/cutlass/version.h

    @property
    def include_dirs(self) -> list[str]:
        return [str(self.root / "include"), str(self.root / "tools" / "util" / "include")]


def _version_from_header(root: Path) -> str:
    text = (root / "include" / "cutlass" / "version.h").read_text()
    parts = [re.search(rf"#define CUTLASS_{p}\s+(\d+)", text) for p in ("MAJOR", "MINOR", "PATCH")]
    if not all(parts):
        return "unknown"
    return ".".join(m.group(1) for m in parts)


def _check(root: Path, source: str) -> CutlassHeaders:
    if not (root / "include" / "cutlass" / "cutlass.h").is_file():
        raise FileNotFoundError(
            f"{source} points at {root}, which has no include/cutlass/cutlass.h; "
            "it must be the root of a CUTLASS checkout"
        )
    return CutlassHeaders(root=root, source=source, version=_version_from_header(root))


def find_cutlass() -> CutlassHeaders:
    env = os.environ.get("CUTLASS_DIR")
    if env:
        return _check(Path(env).expanduser().resolve(), "CUTLASS_DIR")

    spec = importlib.util.find_spec("cutlass_library")  # finds, does not import
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(
            "CUTLASS headers not found. Install them with "
            f"`pip install --no-deps nvidia-cutlass=={CUTLASS_PIN}` "
            "or set CUTLASS_DIR to a CUTLASS checkout."
        )
    root = Path(list(spec.submodule_search_locations)[0]) / "source"
    return _check(root, "nvidia-cutlass")


if __name__ == "__main__":
    found = find_cutlass()
    print(f"CUTLASS {found.version} from {found.source}: {found.root}")
