"""What the probes that build their own CUTLASS kernels share (epilogue_tile_probe.py,
cpasync_probe.py): one nvcc build of the probe's .cu per variant, its macros set by the variant,
compiled in parallel; and the side-by-side timing of the implementations of one problem. Needs
nvcc and the nvidia-cutlass package to build, a GPU to time."""

from __future__ import annotations

import ctypes
import statistics
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Callable

import torch

from probe_timing import flushed_event_us


def cutlass_include() -> Path:
    import cutlass_library
    return Path(cutlass_library.__file__).parent / "source"


def build_variants(source: Path, workdir: Path, variants: dict[str, dict[str, int]], argtypes: list
                   ) -> dict[str, ctypes.CDLL]:
    """{name: the library} of every variant that built: `source` compiled for SM90a with each
    variant's macros (-DNAME=value) and PROBE_ENTRY=probe_run, whose argument types are
    `argtypes` (it returns an int). A build that fails is reported and left out."""
    inc = cutlass_include()

    def one(item):
        i, (name, macros) = item
        so = workdir / f"variant{i}.so"
        cmd = ["nvcc", "-std=c++17", "-O3", "-DNDEBUG", "--expt-relaxed-constexpr", "-shared", "-Xcompiler", "-fPIC",
               "-gencode=arch=compute_90a,code=sm_90a", f"-I{inc / 'include'}", f"-I{inc / 'tools/util/include'}",
               f"-I{source.parent}", *(f"-D{k}={v}" for k, v in macros.items()), "-DPROBE_ENTRY=probe_run",
               str(source), "-o", str(so)]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            print(f"{name}: build failed\n{r.stderr[-3000:]}", file=sys.stderr)
            return name, None
        lib = ctypes.CDLL(str(so))
        lib.probe_run.restype = ctypes.c_int
        lib.probe_run.argtypes = argtypes
        return name, lib

    with ThreadPoolExecutor(max_workers=len(variants)) as pool:
        return {n: lib for n, lib in pool.map(one, enumerate(variants.items())) if lib is not None}


def checked_variants(libs: dict[str, ctypes.CDLL], call: Callable[[ctypes.CDLL], Callable[[], int]],
                     d: torch.Tensor, ref: torch.Tensor, tolerance: float, stages: ctypes.c_int
                     ) -> tuple[dict[str, Callable[[], int]], dict[str, int]]:
    """Each variant run once into `d` and checked against `ref` (max error over the largest
    value of `ref`, in float64): the calls of those right, by name, and every variant's pipeline
    stages (what its probe_run wrote into `stages`). A failed status or a wrong result is
    reported and left out."""
    impls, info = {}, {}
    for name, lib in libs.items():
        d.zero_()
        rc = call(lib)()
        torch.cuda.synchronize()
        info[name] = stages.value
        if rc != 0:
            print(f"  {name}: status {rc}")
            continue
        err = ((d.double() - ref.double()).abs().max() / ref.double().abs().max()).item()
        if err > tolerance:
            print(f"  {name}: WRONG (max error {err:.3g} of the largest value)")
            continue
        impls[name] = call(lib)
    return impls, info


def alternated_medians(impls: dict[str, Callable[[], object]], flush: torch.Tensor, rounds: int = 3,
                       reps: int = 5) -> dict[str, float]:
    """The median microseconds of each implementation: `rounds` rounds, each a warm-up call and
    `reps` flushed timings of every implementation in turn (probe_timing.flushed_event_us, with a
    GPU spin that covers the launch)."""
    times = {name: [] for name in impls}
    for _ in range(rounds):
        for name, fn in impls.items():
            fn()
            times[name] += [flushed_event_us(fn, flush, spin_cycles=200_000) for _ in range(reps)]
    return {name: statistics.median(t) for name, t in times.items()}
