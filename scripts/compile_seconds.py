#!/usr/bin/env python3
"""Record how long each source file took to compile, from the ninja logs of a build, in
csrc/compile_seconds.json: setup.py starts each module's longest files first (start_order).

    python3 scripts/compile_seconds.py --measured "H200 machine, 16 jobs, 2026-12-01, <commit>" \\
        BUILD_TEMP/cutlass_ops._C/.ninja_log BUILD_TEMP/cutlass_ops._C_sm80/.ninja_log ...

The logs are in each module's build folder: build/temp.*/cutlass_ops.<module>/.ninja_log after
`python setup.py build_ext --inplace` (`pip install -e .` builds in a temporary folder that it
removes at the end). Only the order of the times matters to setup.py, so a build on any machine
serves; a file's time under many parallel jobs is not its time alone.
A source compiled in two modules (csrc/common/kernel_module.cpp) keeps its longer time.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TABLE = ROOT / "csrc" / "compile_seconds.json"
SOURCE_SUFFIXES = (".cu", ".cpp")


def log_entries(log: Path) -> dict[str, float]:
    """Seconds per object file in one ninja log (format v5 and later: start and end in ms, then
    mtime and the output's path); ninja appends, so the last entry of an output is its latest."""
    lines = log.read_text().splitlines()
    if not lines or not lines[0].startswith("# ninja log v"):
        raise SystemExit(f"{log}: not a ninja log (first line {lines[0] if lines else ''!r})")
    seconds = {}
    for line in lines[1:]:
        start_ms, end_ms, _mtime, output, *_ = line.split("\t")
        seconds[output] = (int(end_ms) - int(start_ms)) / 1000
    return seconds


def source_of(obj: str) -> str | None:
    """The repository source an object file was compiled from: torch's ninja build keeps the
    source's path under the build folder (<folder>/csrc/ops/plan.o for csrc/ops/plan.cpp)."""
    parts = Path(obj).with_suffix("").parts
    if "csrc" not in parts:
        return None
    stem = Path(*parts[len(parts) - 1 - parts[::-1].index("csrc"):])
    for suffix in SOURCE_SUFFIXES:
        if (ROOT / stem.with_suffix(suffix)).is_file():
            return stem.with_suffix(suffix).as_posix()
    return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("logs", nargs="+", type=Path, help="ninja logs, one per module")
    parser.add_argument("--measured", required=True, help="where and when: machine, jobs, date, commit")
    args = parser.parse_args()
    seconds: dict[str, float] = {}
    for log in args.logs:
        for obj, s in log_entries(log).items():
            source = source_of(obj)
            if source is not None:
                seconds[source] = max(s, seconds.get(source, 0.0))
    if not seconds:
        raise SystemExit("no source of this repository in those logs")
    table = {"measured": args.measured,
             "seconds": {k: round(v, 1) for k, v in sorted(seconds.items(), key=lambda kv: (-kv[1], kv[0]))}}
    TABLE.write_text(json.dumps(table, indent=1) + "\n")
    print(f"{TABLE}: {len(seconds)} files, {sum(seconds.values()):.0f} s in all, "
          f"longest {max(seconds.values()):.0f} s")


if __name__ == "__main__":
    main()
