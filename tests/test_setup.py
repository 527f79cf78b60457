"""setup.py's build plan, without compiling: when the modules build side by side, each in its
own build folder, and which of a module's files ninja starts first. Runs without a GPU."""

import hashlib
import importlib.util
import json
import os
import re
import threading
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(("max_jobs", "env", "side_by_side"), [
    ("16", None, True),
    ("8", None, True),
    ("7", None, False),
    ("2", None, False),
    ("16", "0", False),
    ("2", "1", True),
])
def test_modules_build_side_by_side_from_eight_jobs(setup_py, monkeypatch, max_jobs, env, side_by_side):
    monkeypatch.setenv("MAX_JOBS", max_jobs)
    if env is None:
        monkeypatch.delenv("CUTLASS_OPS_PARALLEL_MODULES", raising=False)
    else:
        monkeypatch.setenv("CUTLASS_OPS_PARALLEL_MODULES", env)
    assert setup_py.build_modules_in_parallel() is side_by_side


def test_unknown_parallel_modules_setting_names_the_value(setup_py, monkeypatch):
    monkeypatch.setenv("CUTLASS_OPS_PARALLEL_MODULES", "yes")
    with pytest.raises(SystemExit, match=r"CUTLASS_OPS_PARALLEL_MODULES='yes'.*use 1 .* or 0"):
        setup_py.build_modules_in_parallel()


class _Ext:
    def __init__(self, name, sources):
        self.name, self.sources = name, sources


def test_each_module_compiles_in_its_own_folder_longest_first_and_links_in_order(setup_py, monkeypatch, tmp_path):
    """Two modules built at once on threads, as distutils' parallel build_ext does: each
    ninja gets its own folder, starts the files that took longest to compile first (the
    measured table), and the objects come back in the order distutils gave the sources."""
    def module_sources(family):  # as setup.py's extensions() lists them
        return setup_py.rel(setup_py.CSRC.glob(f"**/*_{family}.cu"))

    sm90 = module_sources("sm90")
    assert any("/cutlass3x/" in s for s in sm90) and any("/cutlass3x/" not in s for s in sm90)
    modules = [_Ext("cutlass_ops._C_sm90", ["csrc/common/kernel_module.cpp", *sm90]),
               _Ext("cutlass_ops._C_sm80", ["csrc/common/kernel_module.cpp", *module_sources("sm80")])]
    calls = {}
    both_compiling = threading.Barrier(len(modules), timeout=10)

    def ninja_compile(sources, output_dir=None, **kwargs):  # stands in for torch's ninja compile
        both_compiling.wait()  # both threads are inside compile at once
        calls[output_dir] = list(sources)
        return [os.path.join(output_dir, s.replace("/", "_") + ".o") for s in sources]

    def build_ext_build_extension(self, ext):  # what distutils does: compile, then link
        ext.objects = self.compiler.compile(ext.sources, output_dir=str(tmp_path), macros=None)

    class Compiler:
        compile = staticmethod(ninja_compile)

    monkeypatch.setattr(setup_py.BuildExtension, "build_extension", build_ext_build_extension, raising=False)
    command = setup_py.BuildModules.__new__(setup_py.BuildModules)  # no Distribution: build_extension alone
    command.compiler = Compiler()
    threads = [threading.Thread(target=command.build_extension, args=(m,)) for m in modules]
    for t in threads:
        t.start()
    for t in threads:
        t.join()

    assert sorted(calls) == sorted(str(tmp_path / m.name) for m in modules)
    for m in modules:
        started = calls[str(tmp_path / m.name)]
        assert sorted(started) == sorted(m.sources)
        seconds = setup_py.compile_seconds()
        measured = [seconds[s] for s in started if s in seconds]
        assert len(measured) == len(started)  # the shipped table times every file
        assert measured == sorted(measured, reverse=True)
        assert started[0] != m.sources[0]  # not distutils' order: kernel_module.cpp is short
        assert m.objects == [os.path.join(tmp_path, m.name, s.replace("/", "_") + ".o") for s in m.sources]


def test_unmeasured_files_start_first_then_longest_first(setup_py):
    seconds = {"a.cu": 10.0, "b.cu": 90.0, "c.cu": 40.0}
    assert setup_py.start_order(["a.cu", "new2.cu", "b.cu", "c.cu", "new1.cu"], seconds) == \
        ["new2.cu", "new1.cu", "b.cu", "c.cu", "a.cu"]
    assert setup_py.start_order(["z.cu", "a.cu"], {}) == ["z.cu", "a.cu"]  # no table: as given


def test_compile_seconds_names_only_files_the_build_compiles(setup_py):
    """A renamed or removed source leaves the table stale: it would no longer order anything."""
    cutlass = setup_py._load_find_cutlass().find_cutlass()
    exts, _ = setup_py.extensions(["80", "90a"], cutlass)
    compiled = {s for e in exts for s in e.sources}
    table = json.loads(setup_py.COMPILE_SECONDS.read_text())
    assert table["measured"]
    assert set(table["seconds"]) <= compiled, set(table["seconds"]) - compiled


def test_compile_seconds_script_reads_ninja_logs(tmp_path, monkeypatch):
    spec = importlib.util.spec_from_file_location("compile_seconds", ROOT / "scripts" / "compile_seconds.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    folder = tmp_path / "tmpabc.build-temp"
    logs = []
    for module, entries in {"cutlass_ops._C_sm90": [("csrc/common/kernel_module", 0, 4000),
                                                     ("csrc/handwritten/gemm_6_wgmma_tma_sm90", 10, 70010),
                                                     ("csrc/handwritten/gemm_6_wgmma_tma_sm90", 0, 61500)],
                            "cutlass_ops._C_sm80": [("csrc/common/kernel_module", 5, 3005)]}.items():
        log = tmp_path / f"{module}.ninja_log"
        log.write_text("# ninja log v7\n" + "".join(
            f"{start}\t{end}\t0\t{folder}/{module}/{obj}.o\tdeadbeef\n" for obj, start, end in entries))
        logs.append(log)
    table = tmp_path / "compile_seconds.json"
    monkeypatch.setattr(script, "TABLE", table)
    monkeypatch.setattr("sys.argv", ["compile_seconds.py", "--measured", "test", *map(str, logs)])
    script.main()
    # the last entry of an output counts; a file of two modules keeps its longer time
    assert json.loads(table.read_text()) == {"measured": "test", "seconds": {
        "csrc/handwritten/gemm_6_wgmma_tma_sm90.cu": 61.5, "csrc/common/kernel_module.cpp": 4.0}}
    bad = tmp_path / "bad.log"
    bad.write_text("not a log\n")
    monkeypatch.setattr("sys.argv", ["compile_seconds.py", "--measured", "test", str(bad)])
    with pytest.raises(SystemExit, match="not a ninja log"):
        script.main()


def test_leaving_out_the_ladder_keeps_the_hand_written_kernels_dispatch_runs(setup_py, monkeypatch):
    """CUTLASS_OPS_KERNEL_DIRS without "ladder" drops the teaching steps only: the streaming
    kernels and ladder steps 3 and 6, which dispatch runs, stay."""
    cutlass = setup_py._load_find_cutlass().find_cutlass()
    monkeypatch.setenv("CUTLASS_OPS_KERNEL_DIRS", "cutlass3x,cutlass2x,handwritten")
    exts, _ = setup_py.extensions(["80", "90a"], cutlass)
    sources = {s for e in exts for s in e.sources}
    assert "csrc/handwritten/gemm_skinny_m_sm80.cu" in sources
    assert "csrc/handwritten/gemm_3_register_blocked_sm80.cu" in sources
    assert "csrc/handwritten/gemm_6_wgmma_tma_sm90.cu" in sources
    assert not any(s.startswith("csrc/ladder/") for s in sources)
    monkeypatch.delenv("CUTLASS_OPS_KERNEL_DIRS")
    exts, _ = setup_py.extensions(["80", "90a"], cutlass)
    assert "csrc/ladder/gemm_1_naive_sm80.cu" in {s for e in exts for s in e.sources}


# What C++17 lacks and C++20 has, as our sources would write it. torch 2.11 (the GPU machines')
# builds the extension as C++17 and later torch versions as C++20, so the CI machine's build
# accepts these and the GPU machine's stops on them (docs/build.md, "The C++ standard comes from
# torch"; a defaulted operator== did, 2026-11-29).
CXX20_ONLY = {
    r"\boperator\s*(?:==|!=|<=|>=|<|>)\s*\([^)]*\)\s*const\s*(?:noexcept\s*)?=\s*default\b": "a defaulted comparison",
    r"\boperator\s*<=>": "the three-way comparison",
    r"\b(?:consteval|constinit)\b": "consteval / constinit",
    r"^\s*(?:template\s*<[^>]*>\s*)?concept\s+\w+\s*=": "a concept",
    r"\brequires\s*(?:\(|std::|\w+\s*<)": "a requires clause",
    r"#\s*include\s*<(?:span|ranges|concepts|bit|numbers|source_location|format|compare)>": "a C++20 header",
    r"\bstd::(?:span|bit_cast|midpoint|lerp|ssize|to_array|erase_if)\b": "a C++20 library name",
    r"\[\s*=\s*,\s*this\s*\]": "a lambda capturing [=, this]",
}


def cxx20_constructs(text: str) -> list[str]:
    """The C++20-only constructs in `text`, its comments left out."""
    code = re.sub(r"/\*.*?\*/|//[^\n]*", "", text, flags=re.S)
    return [what for pattern, what in CXX20_ONLY.items() if re.search(pattern, code, re.M)]


def test_the_cxx20_check_catches_what_the_gpu_build_refused():
    assert cxx20_constructs("struct G { int a; bool operator==(const G&) const = default; };") == [
        "a defaulted comparison"]
    assert cxx20_constructs("auto operator<=>(const G&) const = default;") == ["the three-way comparison"]
    assert cxx20_constructs("#include <span>\nstd::span<int> s;") == ["a C++20 header", "a C++20 library name"]
    assert cxx20_constructs("template <class T> concept Small = sizeof(T) < 4;") == ["a concept"]
    assert cxx20_constructs("template <class T> requires std::is_integral_v<T> void f(T);") == ["a requires clause"]
    assert cxx20_constructs("G& operator=(const G&) = default;\nbool operator==(const G& o) const { return a == o.a; }") == []
    assert cxx20_constructs("// this requires (a GPU); see <span>\n/* concept X = 1; */ int x;") == []


def test_the_sources_stay_cxx17():
    sources = [p for ext in ("h", "cuh", "cu", "cpp") for p in (ROOT / "csrc").rglob(f"*.{ext}")]
    assert len(sources) > 40
    found = {str(p.relative_to(ROOT)): cxx20_constructs(p.read_text()) for p in sources}
    assert not {p: what for p, what in found.items() if what}, "C++20 in csrc (torch 2.11 builds C++17)"


def test_the_sources_digest_follows_the_sources_and_nothing_else(setup_py, tmp_path):
    """setup.py's digest of csrc/ (recorded in _build_info, folded into tuning.build_id()):
    another source's content or name changes it; a file the compiler never reads does not."""
    csrc = tmp_path / "csrc"
    (csrc / "dispatch").mkdir(parents=True)
    (csrc / "dispatch" / "cost_model.cpp").write_text("int a = 1;\n")
    (csrc / "kernel.cuh").write_text("// a kernel\n")
    first = setup_py.sources_digest(csrc)
    (csrc / "compile_seconds.json").write_text("{}")
    assert setup_py.sources_digest(csrc) == first
    (csrc / "dispatch" / "cost_model.cpp").write_text("int a = 2;\n")
    second = setup_py.sources_digest(csrc)
    assert second != first
    (csrc / "kernel.cuh").rename(csrc / "kernel2.cuh")
    assert setup_py.sources_digest(csrc) not in (first, second)


def test_an_entry_only_build_records_its_sources_digest(setup_py, tmp_path):
    """CUTLASS_OPS_ENTRY_ONLY=1 keeps the kernel modules' _build_info.py but writes the digest of
    the sources it compiles into _C: in place of the one there, or added to an older file."""
    info = tmp_path / "_build_info.py"
    info.write_text("ARCHS = ('80', '90a')\nSOURCES_DIGEST = 'stale'\nNVCC_VERSION = '13.0'\n")
    setup_py.update_sources_digest(info)
    text = info.read_text()
    assert f"SOURCES_DIGEST = {setup_py.sources_digest()!r}\n" in text and "stale" not in text
    assert text.startswith("ARCHS = ('80', '90a')\n") and "NVCC_VERSION = '13.0'\n" in text
    info.write_text("ARCHS = ('80', '90a')\n")
    setup_py.update_sources_digest(info)
    assert info.read_text() == f"ARCHS = ('80', '90a')\nSOURCES_DIGEST = {setup_py.sources_digest()!r}\n"


def test_the_build_id_names_the_sources_too(monkeypatch):
    """Two builds of one kernel set from different sources have different build ids (the sweep
    files and the prices records name them); a build that recorded no digest keeps its id."""
    import cutlass_ops
    from cutlass_ops import _build_info, tuning

    monkeypatch.setattr(_build_info, "SOURCES_DIGEST", "0123456789abcdef", raising=False)
    one = tuning.build_id()
    monkeypatch.setattr(_build_info, "SOURCES_DIGEST", "fedcba9876543210")
    assert tuning.build_id() != one
    monkeypatch.delattr(_build_info, "SOURCES_DIGEST")
    names = sorted(k["name"] for k in cutlass_ops._extension._C.kernels())
    legacy = hashlib.sha1("\n".join([_build_info.CUTLASS_VERSION, *names]).encode()).hexdigest()[:16]
    assert tuning.build_id() == legacy
