"""Build cutlass_ops: one entry module and one kernel module per arch family.

    pip install --no-build-isolation -e .

Modules:
  cutlass_ops._C        csrc/ops + csrc/dispatch: op registration, planner, registry (g++ only)
  cutlass_ops._C_sm90   every csrc/**/*_sm90.cu, compiled for sm_90a only (WGMMA, TMA)
  cutlass_ops._C_sm80   every csrc/**/*_sm80.cu, compiled from compute_80 PTX to sm_80 and
                        sm_90 machine code, plus the PTX for newer GPUs; when the build
                        detects the GPU it runs on, to that GPU's machine code only (plus the PTX)

torch.utils.cpp_extension applies one set of nvcc flags to all sources of an extension, so
each arch family is its own extension. A kernel file's suffix decides its module: adding a
kernel never touches this file.

Environment:
  CUTLASS_OPS_ARCHS  families to build, e.g. "80;90a" (default: what the visible GPU needs,
                     or "80;90a" without a GPU)
  CUTLASS_OPS_KERNEL_DIRS  kernel rooms to build, comma list of csrc/ subfolders (default
                     "cutlass3x,cutlass2x,handwritten,ladder"), e.g. without "ladder" for a build
                     without the hand-written teaching kernels (steps 1, 2, 4, 5)
  CUTLASS_DIR        a CUTLASS checkout to use instead of the nvidia-cutlass package
  MAX_JOBS           parallel compile jobs (ninja), per module
  CUTLASS_OPS_PARALLEL_MODULES  "1" builds the modules side by side, "0" one after another
                     (default: side by side when MAX_JOBS, or else the core count, is 8 or more)
  CUTLASS_OPS_ENTRY_ONLY  "1" rebuilds only cutlass_ops._C (ops, planner, cost model) and keeps
                     the kernel modules and _build_info.py already built beside it (the digest
                     of the sources updated): a change that touches no kernel builds in a
                     minute instead of minutes
"""

from __future__ import annotations

import datetime
import hashlib
import importlib.util
import json
import os
import re
import subprocess
import sys
import threading
from pathlib import Path

from setuptools import find_packages, setup


def _find_cuda_home() -> None:
    """Point CUDA_HOME at a toolkit with headers before torch.utils.cpp_extension reads it.

    torch derives CUDA_HOME from `which nvcc` without following wrapper scripts, so an
    /usr/local/bin/nvcc wrapper yields /usr/local, which has no CUDA headers. nvcc itself
    knows where it lives (TOP in its dry-run output).
    """
    def usable(path) -> bool:
        return bool(path) and (Path(path) / "include" / "cuda_runtime_api.h").is_file()

    for var in ("CUDA_HOME", "CUDA_PATH"):
        if usable(os.environ.get(var)):
            return
    candidates = []
    try:
        dry = subprocess.run(["nvcc", "--dryrun", "-x", "cu", "-c", os.devnull], capture_output=True, text=True)
        match = re.search(r"^#\$ TOP=(.+)$", dry.stdout + dry.stderr, re.MULTILINE)
        if match:
            candidates.append(str(Path(match.group(1).strip()).resolve()))  # TOP is <root>/bin/..
    except OSError:
        pass
    candidates.append("/usr/local/cuda")
    for path in candidates:
        if usable(path):
            os.environ["CUDA_HOME"] = path
            return


_find_cuda_home()

BUILD_HINT = ("cutlass_ops compiles against the torch you run. Install a CUDA build of torch and the CUTLASS "
              "headers first, then build without isolation:\n"
              "  pip install -r requirements.txt && pip install --no-deps nvidia-cutlass==4.2.0.0 && "
              "pip install --no-build-isolation -e .")
try:
    import torch  # noqa: E402
    from torch.utils.cpp_extension import CUDA_HOME, BuildExtension, CUDAExtension  # noqa: E402
except ImportError as error:  # an isolated build environment (pip install . without --no-build-isolation)
    raise SystemExit(f"cutlass_ops: cannot import torch ({error}).\n{BUILD_HINT}") from None

ROOT = Path(__file__).resolve().parent
CSRC = ROOT / "csrc"


def _load_find_cutlass():
    spec = importlib.util.spec_from_file_location("_cutlass_ops_find_cutlass", ROOT / "third_party" / "find_cutlass.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look the module up while the class is built
    spec.loader.exec_module(module)
    return module


# Arch family -> the nvcc targets its kernels are compiled for.
FAMILIES = {
    # (The generated files whose tiles need CuTe's extended WGMMA shapes define
    # CUTE_SM90_EXTENDED_MMA_SHAPES_ENABLED themselves: csrc/kernel_table.py, BASE_WGMMA_N.)
    "90a": ("sm90", ["-gencode=arch=compute_90a,code=sm_90a"]),
    "80": (
        "sm80",
        [
            "-gencode=arch=compute_80,code=sm_80",
            "-gencode=arch=compute_80,code=sm_90",  # sm_80 machine code does not run on sm_90
            "-gencode=arch=compute_80,code=compute_80",  # PTX: the driver JIT-compiles it for newer GPUs
        ],
    ),
}


def visible_capability():
    """(major, minor) of the GPU this build runs beside, or None (no GPU, or CUTLASS_OPS_ARCHS set)."""
    if os.environ.get("CUTLASS_OPS_ARCHS") or not torch.cuda.is_available():
        return None
    return torch.cuda.get_device_capability()


def family_gencode(arch: str) -> list[str]:
    """nvcc targets for one family: all of FAMILIES' for a portable build; for a build beside
    a GPU (no CUTLASS_OPS_ARCHS), the SM80 family as that GPU's machine code and the PTX only,
    which saves a ptxas pass per kernel (the sm_80 code on a Hopper machine, sm_90 on an A100)."""
    cc = visible_capability()
    if arch == "80" and cc is not None and cc >= (8, 0):
        return [f"-gencode=arch=compute_80,code=sm_{cc[0]}{cc[1]}", "-gencode=arch=compute_80,code=compute_80"]
    return FAMILIES[arch][1]


def selected_archs() -> list[str]:
    env = os.environ.get("CUTLASS_OPS_ARCHS")
    if env:
        archs = [a.strip() for a in re.split(r"[;, ]+", env) if a.strip()]
        unknown = [a for a in archs if a not in FAMILIES]
        if unknown:
            raise SystemExit(
                f"CUTLASS_OPS_ARCHS={env!r}: unknown arch {unknown}; choose from {sorted(FAMILIES)} "
                "('80' covers every GPU of compute capability 8.0 and newer, '90a' adds the Hopper kernels)"
            )
        return archs
    cc = visible_capability()
    if cc is not None:
        # The SM80 family is always needed: on Hopper it runs IEEE float32, float64 and the
        # operands too misaligned for TMA.
        return ["80", "90a"] if cc == (9, 0) else ["80"]
    return ["80", "90a"]


# Memory one compile job can take: a generated CUTLASS 3.x file (two configs) peaks at 5.3-5.8
# GB (/usr/bin/time -v, nvcc 13; the largest process of a whole build on the H100 machine).
GB_PER_JOB = 5.8


def preflight(cutlass) -> None:
    """Stop before compiling, with the fix, where the build could not succeed or its result could
    not load: a CPU-only torch, nvcc of another CUDA major version than torch's, a GPU below
    compute capability 8.0 (unless CUTLASS_OPS_ARCHS asks for a build for other GPUs), CUTLASS
    headers of another version than the pin."""
    if torch.version.cuda is None:
        raise SystemExit(f"cutlass_ops: torch {torch.__version__} is a CPU-only build; cutlass_ops needs a CUDA build "
                         "of torch (https://pytorch.org/get-started/locally/).")
    nvcc = nvcc_version()
    if nvcc.split(".")[0] != torch.version.cuda.split(".")[0]:
        raise SystemExit(f"cutlass_ops: nvcc {nvcc} ({CUDA_HOME}) and torch {torch.__version__}'s CUDA "
                         f"{torch.version.cuda} differ in major version; the extension would not load. Point CUDA_HOME "
                         f"at a CUDA {torch.version.cuda.split('.')[0]}.x toolkit or install the torch built for CUDA "
                         f"{nvcc.split('.')[0]}.")
    cc = visible_capability()
    if cc is not None and cc < (8, 0):
        raise SystemExit(f"cutlass_ops: {torch.cuda.get_device_name()} has compute capability {cc[0]}.{cc[1]}; "
                         "cutlass_ops needs 8.0 or newer (set CUTLASS_OPS_ARCHS to build for another GPU).")
    pin = _load_find_cutlass().CUTLASS_PIN
    if cutlass.source == "nvidia-cutlass" and not pin.startswith(cutlass.version + "."):
        raise SystemExit(f"cutlass_ops: nvidia-cutlass provides CUTLASS {cutlass.version}; cutlass_ops is built and "
                         f"tested with {pin}: pip install --no-deps nvidia-cutlass=={pin} (or set CUTLASS_DIR).")


def default_jobs() -> int:
    """Parallel compile jobs when MAX_JOBS is unset: the cores, but no more than the available
    memory holds at GB_PER_JOB each."""
    cores = os.cpu_count() or 1
    try:
        with open("/proc/meminfo") as f:
            available_kb = next(int(line.split()[1]) for line in f if line.startswith("MemAvailable:"))
    except (OSError, StopIteration, ValueError):
        return cores
    return max(1, min(cores, int(available_kb / 1e6 / GB_PER_JOB)))


def nvcc_version() -> str:
    if CUDA_HOME is None:
        raise SystemExit("No CUDA toolkit found (CUDA_HOME unset and no nvcc on PATH): cutlass_ops needs nvcc to build.")
    out = subprocess.run([os.path.join(CUDA_HOME, "bin", "nvcc"), "--version"], capture_output=True, text=True).stdout
    match = re.search(r"release (\d+\.\d+)", out)
    return match.group(1) if match else "unknown"


COMMON_CXX = ["-O3", "-DNDEBUG", "-g0"]  # -g0: Python's CFLAGS ask for debug info; it makes _C 10x larger


def shared_libstdcxx() -> list[str]:
    """Link flags that bind libstdc++ to the shared libstdc++.so.6 torch itself uses.

    Some toolchains put a static libstdc++.a first on the linker's path (the g++ wrapper on
    our GPU machine passes -B to a GCC tree that has only the archive). The extension then
    carries a private copy of the iostreams whose locale is never initialised, and the first
    integer formatted into an error message (c10::str in TORCH_CHECK) segfaults. Naming the
    shared object itself, ahead of the driver's own -lstdc++, leaves the archive unused.
    """
    cxx = os.environ.get("CXX", "c++")
    try:
        found = subprocess.run([cxx, "-print-file-name=libstdc++.so.6"], capture_output=True, text=True).stdout.strip()
    except OSError:
        return []
    return ["-l:libstdc++.so.6"] if os.path.isabs(found) and os.path.exists(found) else []


COMMON_LINK = shared_libstdcxx()
COMMON_NVCC = [
    "-O3",
    "-DNDEBUG",
    "--expt-relaxed-constexpr",
    # torch's default flags hide the CUDA half/bfloat16 operators that CUTLASS relies on.
    "-U__CUDA_NO_HALF_OPERATORS__",
    "-U__CUDA_NO_HALF_CONVERSIONS__",
    "-U__CUDA_NO_HALF2_OPERATORS__",
    "-U__CUDA_NO_BFLOAT16_CONVERSIONS__",
]


KERNEL_DIRS = ("cutlass3x", "cutlass2x", "handwritten", "ladder")


def selected_kernel_dirs() -> list[str]:
    env = os.environ.get("CUTLASS_OPS_KERNEL_DIRS")
    if not env:
        return list(KERNEL_DIRS)
    dirs = [d.strip() for d in re.split(r"[;, ]+", env) if d.strip()]
    unknown = [d for d in dirs if d not in KERNEL_DIRS]
    if unknown:
        raise SystemExit(f"CUTLASS_OPS_KERNEL_DIRS={env!r}: unknown {unknown}; choose from {list(KERNEL_DIRS)}")
    return dirs


def rel(paths) -> list[str]:
    return sorted(str(p.relative_to(ROOT)) for p in paths)


def extensions(archs: list[str], cutlass) -> tuple[list, dict[str, int]]:
    exts = [
        CUDAExtension(
            name="cutlass_ops._C",
            sources=rel([*(CSRC / "ops").glob("*.cpp"), *(CSRC / "ops").glob("*.cu"), *(CSRC / "dispatch").glob("*.cpp")]),
            include_dirs=[str(CSRC)],
            # Its CUDA files (the K-major copy, csrc/ops/kmajor_copy_kernels.cu; the epilogue pass,
            # csrc/ops/epilogue_kernels.cu; the padded copies) run on every GPU the SM80 family does.
            extra_compile_args={"cxx": COMMON_CXX, "nvcc": COMMON_NVCC + family_gencode("80")},
            extra_link_args=COMMON_LINK,
        )
    ]
    counts = {}
    for arch in archs:
        family, gencode = FAMILIES[arch][0], family_gencode(arch)
        # Each family's hand-written TUs (csrc/<dir>) and the generated ones (csrc/generated/<dir>).
        kernels = rel(p for d in selected_kernel_dirs() for folder in (CSRC / d, CSRC / "generated" / d)
                      for p in folder.glob(f"**/*_{family}.cu"))
        if not kernels:
            continue
        counts[f"_C_{family}"] = len(kernels)
        exts.append(
            CUDAExtension(
                name=f"cutlass_ops._C_{family}",
                sources=[str((CSRC / "common" / "kernel_module.cpp").relative_to(ROOT)), *kernels],
                include_dirs=[str(CSRC), *cutlass.include_dirs],
                extra_compile_args={"cxx": COMMON_CXX, "nvcc": COMMON_NVCC + gencode},
                extra_link_args=COMMON_LINK,
            )
        )
    return exts, counts


SOURCE_SUFFIXES = (".cu", ".cuh", ".h", ".hpp", ".cpp", ".cc", ".inl")


def sources_digest(csrc: Path = CSRC) -> str:
    """A digest of the C++ and CUDA sources under csrc/ (their paths and contents): what a build
    compiles. tuning.build_id() folds it in, so that two builds of one kernel set from different
    sources (a changed launch, a changed cost model) have different ids, and a sweep refuses to
    resume across them (calibration/sweep.py)."""
    h = hashlib.sha1()
    for path in sorted(p for p in csrc.rglob("*") if p.suffix in SOURCE_SUFFIXES and p.is_file()):
        h.update(path.relative_to(csrc).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()[:16]


def update_sources_digest(info_path: Path) -> None:
    """An entry-only build (CUTLASS_OPS_ENTRY_ONLY=1, for changes that touch no kernel) keeps
    the kernel modules' build info but compiles the current sources into _C: their digest."""
    text = info_path.read_text()
    line = f"SOURCES_DIGEST = {sources_digest()!r}"
    text, found = re.subn(r"^SOURCES_DIGEST = .*$", line, text, flags=re.M)
    info_path.write_text(text if found else text.rstrip("\n") + "\n" + line + "\n")


def write_build_info(archs: list[str], counts: dict[str, int], cutlass) -> None:
    info = {
        "ARCHS": tuple(archs),
        "KERNEL_DIRS": tuple(selected_kernel_dirs()),
        "KERNEL_MODULES": tuple(counts),
        "KERNEL_SOURCES": counts,
        "CUTLASS_VERSION": cutlass.version,
        "CUTLASS_SOURCE": cutlass.source,
        "CUTLASS_ROOT": str(cutlass.root),
        "TORCH_VERSION": torch.__version__,
        "TORCH_CUDA_VERSION": torch.version.cuda,
        "NVCC_VERSION": nvcc_version(),
        "BUILT_AT": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "SOURCES_DIGEST": sources_digest(),
    }
    lines = ['"""What this build of cutlass_ops compiled. Generated by setup.py; not in git."""', ""]
    lines += [f"{key} = {value!r}" for key, value in info.items()]
    (ROOT / "cutlass_ops" / "_build_info.py").write_text("\n".join(lines) + "\n")


PARALLEL_MODULES_MIN_JOBS = 8


def build_modules_in_parallel() -> bool:
    env = os.environ.get("CUTLASS_OPS_PARALLEL_MODULES")
    if env in ("0", "1"):
        return env == "1"
    if env:
        raise SystemExit(f"CUTLASS_OPS_PARALLEL_MODULES={env!r}: use 1 (side by side) or 0 (one after another)")
    jobs = os.environ.get("MAX_JOBS", "")
    return (int(jobs) if jobs.isdigit() else os.cpu_count() or 1) >= PARALLEL_MODULES_MIN_JOBS


COMPILE_SECONDS = ROOT / "csrc" / "compile_seconds.json"


def compile_seconds() -> dict[str, float]:
    """Each source's measured compile time (scripts/compile_seconds.py writes the table from a
    build's ninja logs); empty without the table."""
    if not COMPILE_SECONDS.is_file():
        return {}
    return json.loads(COMPILE_SECONDS.read_text())["seconds"]


def start_order(sources: list[str], seconds: dict[str, float]) -> list[str]:
    """The order ninja starts a module's files in: longest first, by measured compile time;
    files with no measurement (new ones) before all others, in distutils' order.

    ninja starts files in the order of its build file. A module's build ends when its last file
    does, so a long file started late leaves the other cores idle while it runs: sorted by
    name, _C_sm90 began with its cheap CUTLASS 2.x files and ended waiting on CUTLASS 3.x ones
    (H100 machine, 16 jobs, 2026-11-25); started by a coarse grouping (files with CuTe's extended
    WGMMA shapes, then other CUTLASS 3.x files), the TF32 files, 135-147 s on a 2-core
    machine, still started last. Longest first is the classic rule for packing jobs on parallel
    machines (LPT). An unmeasured file goes first: a new CUTLASS file may be among the longest,
    and a short one started early costs nothing.
    """
    return sorted(sources, key=lambda source: (source in seconds, -seconds.get(source, 0.0)))


class BuildModules(BuildExtension):
    """torch's BuildExtension, with each module in its own build folder, side by side.

    ninja compiles one module's files in parallel, but setuptools builds the modules one
    after another, and each module ends on its few slowest files while the other cores
    wait: on the 16-core H100 machine _C kept 4 cores busy on average and _C_sm90 13.4
    (benchmarks/RESULTS.md at 824ebc1, 2026-11-23, "Build time"). Built side by side, the
    modules' files fill those cores. Each ninja takes MAX_JOBS jobs, so the machine runs up
    to three times MAX_JOBS compilers while the small modules build. The memory that adds
    is small: a CUTLASS 2.x file's compile peaks at 0.8 GB, a CUTLASS 3.x file's at 5.8 GB
    (/usr/bin/time -v, nvcc 13), and the 3.x files run at MAX_JOBS either way (a whole
    build on the 16-core H100 machine used at most 60 GB). It is on only
    from PARALLEL_MODULES_MIN_JOBS jobs, where the idle tails are worth filling.

    The folders: torch writes one build.ninja per build folder, and both kernel modules
    compile csrc/common/kernel_module.cpp, each under its own module name. Within a module
    the longest files start first (start_order).
    """

    _module = threading.local()  # the module the calling thread builds
    _wrap_lock = threading.Lock()

    def finalize_options(self) -> None:
        super().finalize_options()
        if self.parallel is None and build_modules_in_parallel():
            self.parallel = len(self.extensions)  # distutils' build_ext builds them on threads

    def build_extension(self, ext) -> None:
        # torch's build_extensions has just replaced self.compiler.compile with its ninja
        # compile; it takes its build folder as output_dir.
        with self._wrap_lock:
            if not getattr(self.compiler.compile, "per_module_folder", False):
                ninja_compile = self.compiler.compile

                def compile_in_module_folder(sources, output_dir=None, *args, **kwargs):
                    first = start_order(sources, compile_seconds())
                    objects = ninja_compile(first, os.path.join(output_dir, self._module.name), *args, **kwargs)
                    object_of = dict(zip(first, objects))
                    return [object_of[source] for source in sources]  # link in distutils' order

                compile_in_module_folder.per_module_folder = True
                self.compiler.compile = compile_in_module_folder
        self._module.name = ext.name
        super().build_extension(ext)


def entry_only() -> bool:
    env = os.environ.get("CUTLASS_OPS_ENTRY_ONLY", "")
    if env not in ("", "0", "1"):
        raise SystemExit(f"CUTLASS_OPS_ENTRY_ONLY={env!r}: use 1 (rebuild only cutlass_ops._C) or 0")
    if env == "1" and not (ROOT / "cutlass_ops" / "_build_info.py").is_file():
        raise SystemExit("CUTLASS_OPS_ENTRY_ONLY=1 needs a full build first (cutlass_ops/_build_info.py is missing)")
    return env == "1"


def main() -> None:
    cutlass = _load_find_cutlass().find_cutlass()
    if any(command in sys.argv for command in ("build_ext", "build", "bdist_wheel", "editable_wheel", "develop",
                                               "install")):
        preflight(cutlass)
        if not os.environ.get("MAX_JOBS"):
            os.environ["MAX_JOBS"] = str(default_jobs())
            print(f"cutlass_ops: MAX_JOBS={os.environ['MAX_JOBS']} ({GB_PER_JOB} GB of memory per compile job; "
                  "set MAX_JOBS to override)")
    archs = selected_archs()
    exts, counts = extensions(archs, cutlass)
    if entry_only():
        exts = exts[:1]  # _C; the kernel modules and their _build_info.py stay as built, but its sources' digest
        update_sources_digest(ROOT / "cutlass_ops" / "_build_info.py")
    else:
        write_build_info(archs, counts, cutlass)
    side_by_side = "side by side" if build_modules_in_parallel() else "one after another"
    print(f"cutlass_ops: CUTLASS {cutlass.version} ({cutlass.source}), archs {archs}, kernel sources {counts}, modules built {side_by_side}")
    setup(
        packages=find_packages(include=["cutlass_ops", "cutlass_ops.*"]),
        package_data={"cutlass_ops": ["calibration/data/*.json.gz", "py.typed"]},
        ext_modules=exts,
        cmdclass={"build_ext": BuildModules.with_options(use_ninja=True)},
    )


if __name__ == "__main__":  # setuptools runs this file as __main__; tests import it
    main()
