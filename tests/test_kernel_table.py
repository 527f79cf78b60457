"""The kernel table (csrc/kernel_table.py) is the one source of config facts: the generated files
are current, and every kernel the build registered carries the tile, cluster, schedule, stages,
math and decompositions its row states. CPU only: the registry is read without a GPU."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

import cutlass_ops

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "csrc"))
try:
    import generate_kernels
    import kernel_table as kt
finally:
    sys.path.pop(0)

BY_NAME = {(c.family, c.name): c for c in kt.CONFIGS}


def test_generated_files_are_current():
    """configs.h, the translation units and docs/kernel_table.md are what the table generates now."""
    result = subprocess.run([sys.executable, str(ROOT / "csrc" / "generate_kernels.py"), "--check"],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_generator_reads_no_cpp():
    """The generator takes every fact from the table: it opens no C++ file to parse it."""
    source = (ROOT / "csrc" / "generate_kernels.py").read_text()
    assert "import re" not in source and "read_text" not in source.replace("f.path.read_text()", "")


def test_configs_header_lists_every_row_in_order():
    header = (ROOT / "csrc" / "dispatch" / "configs.h").read_text()
    enum = re.search(r"enum class ConfigId : int16_t \{(.*?)\};", header, re.S).group(1)
    ids = [e.strip().rstrip(",") for e in enum.split("\n") if e.strip()]
    assert ids == ["kNone = -1", *[c.id for c in kt.CONFIGS], "kCount"]
    structs = re.findall(r"^struct (\w+) \{", header, re.M)
    assert structs == [c.struct for c in kt.CONFIGS]
    names = re.search(r"kConfigNames\[\] = \{(.*?)\};", header, re.S).group(1)
    assert re.findall(r'"([^"]+)"', names) == [c.name for c in kt.CONFIGS]


def test_derived_names_parse_back_to_the_fields():
    for c in kt.SM90:
        m = re.fullmatch(r"(\d+)x(\d+)x(\d+)_(\d)x(\d)x1_(coop|pingpong|ws)(_streamk)?(_cpasync)?(_swapab)?"
                         r"(_splitk_sum|_presplit)?", c.name)
        assert m, c.name
        assert tuple(map(int, m.group(1, 2, 3))) == c.tile and tuple(map(int, m.group(4, 5))) == c.cluster
        assert m.group(6) == c.schedule and bool(m.group(7)) == (c.scheduler == "streamk")
        assert bool(m.group(8)) == (c.mainloop == "cpasync") and bool(m.group(9)) == c.swap_ab
    for c in kt.SM80:
        assert c.name.endswith(f"{c.tile_text()}_{c.stages}s" + ("_streamk" if c.stream_k else "")), c.name


def test_every_config_is_documented():
    doc = (ROOT / "docs" / "kernel_table.md").read_text()
    for c in kt.CONFIGS:
        assert f"| `{c.name}` | {c.family} |" in doc
        assert len(c.why.split()) >= 8, f"{c.name}: say why it exists"


def test_generated_units_cover_every_build():
    units = generate_kernels.all_units()
    names = [n for u in units for n in u.names]
    assert len(names) == len(set(names))
    expected = sum(len(layouts) for c in kt.SM90 for layouts in c.builds.values())
    expected += sum(len(layouts) for c in kt.SM90 for layouts in c.fused.values())
    expected += sum(len(kt.LAYOUTS) * len(aligns) for c in kt.SM80 for aligns in c.builds.values())
    expected += sum(len(kt.LAYOUTS) * len(c.builds[p]) for c in kt.SM80 for p in c.splitk_sum)
    assert len(names) == expected
    for u in units:
        assert u.path.parent.parent == ROOT / "csrc" / "generated"
        assert u.source.startswith(generate_kernels.BANNER)


def test_each_kernel_group_is_in_one_file_of_its_family_arch_and_precision():
    from cutlass_ops.calibration.cover import group_of

    groups = generate_kernels.kernel_groups()
    assert len({g.name for g in groups}) == len(groups)
    file_of = {}
    for u in generate_kernels.all_units():
        held = [g for g in groups if set(k[1] for k in g.kernels) <= set(u.names)]
        assert held, u.path
        assert sum(len(g.kernels) for g in held) == len(u.names), u.path
        assert len(held) == 1 or len(u.names) <= generate_kernels.KERNELS_PER_FILE[u.path.parent.name], u.path
        for g in held:
            assert g.name not in file_of, f"{g.name} in {file_of.get(g.name)} and {u.path}"
            file_of[g.name] = u.path
            assert u.path.parent.name == g.family and u.path.name.startswith(f"gemm_{g.precision}_")
            assert u.path.stem.endswith(f"_sm{g.arch}")
            assert f"namespace {g.name} {{" in u.source
            # The set cover's unit (a kernel name without its layouts) is the group.
            assert {group_of(k[1]) for k in g.kernels} == {g.name}
    assert set(file_of) == {g.name for g in groups}


def test_files_are_packed_to_their_kernel_limit():
    """Groups are packed first fit in table order up to KERNELS_PER_FILE kernels a file (every
    file pays a fixed compile cost): no group could have gone to an earlier file of its family,
    arch and precision."""
    def stem(path):  # gemm_<precision>[_ext]_<part>_sm<arch>.cu without the part
        head, _, arch = path.name.rsplit("_", 2)
        return path.parent, head, arch

    groups = generate_kernels.kernel_groups()
    units = generate_kernels.all_units()
    unit_of = {name: i for i, u in enumerate(units) for name in u.names}
    by_name = {g.name: g for g in groups}
    # A group that launches another's GEMMs shares its file (each GEMM compiles once) and is
    # packed with it as one unit.
    companions = {g.launches_gemms_of: g for g in groups if g.launches_gemms_of}
    assert companions
    for base, g in companions.items():
        assert groups.index(g) == groups.index(by_name[base]) + 1, g.name
        assert unit_of[g.kernels[0][1]] == unit_of[by_name[base].kernels[0][1]], g.name
        assert {k[0] for k in g.kernels} == {k[0] for k in by_name[base].kernels}, g.name
    for index, g in enumerate(groups):
        if g.launches_gemms_of:
            continue
        size = len(g.kernels) + (len(companions[g.name].kernels) if g.name in companions else 0)
        here = unit_of[g.kernels[0][1]]
        limit = generate_kernels.KERNELS_PER_FILE[g.family]
        for i, u in enumerate(units[:here]):
            if stem(u.path) != stem(units[here].path):
                continue
            # what file i held before g arrived (the groups of the table before g)
            before = [h for h in groups[:index] if unit_of[h.kernels[0][1]] == i]
            assert sum(len(h.kernels) for h in before) + size > limit, (g.name, u.path, units[here].path)
    assert generate_kernels.packed([], 8) == []


def test_extended_wgmma_shapes_are_defined_exactly_where_a_tile_needs_them():
    """A tile whose WGMMA N is not one of CuTe's default shapes (its N, or its M when swapped)
    is compiled with CUTE_SM90_EXTENDED_MMA_SHAPES_ENABLED defined before any include, or CuTe
    would run it as many narrow instructions; every other file goes without the define, which
    costs a third more compile time."""
    def tile(*shape, swap_ab=False):
        return kt.Sm90(shape, swap_ab=swap_ab, why="a test tile")

    assert tile(144, 128, 64, swap_ab=True).wgmma_n == 144 and tile(144, 128, 64, swap_ab=True).extended_mma
    assert not tile(128, 256, 64).extended_mma and not tile(64, 32, 64, swap_ab=True).extended_mma
    assert tile(128, 144, 64).extended_mma and tile(128, 24, 64).extended_mma
    define = f"#define {generate_kernels.EXTENDED_MMA_DEFINE}"
    groups = generate_kernels.kernel_groups()
    assert any(g.extended_mma for g in groups)
    for u in generate_kernels.all_units():
        held = [g for g in groups if set(k[1] for k in g.kernels) <= set(u.names)]
        needs = {g.extended_mma for g in held}
        assert len(needs) == 1, f"{u.path} mixes groups with and without extended WGMMA shapes"
        if needs == {True}:
            assert u.source.index(define) < u.source.index("#include"), u.path
        else:
            assert define not in u.source, u.path
    assert f"-D{generate_kernels.EXTENDED_MMA_DEFINE}" not in (ROOT / "setup.py").read_text()


def test_epilogue_subtiles_are_emitted_and_checked():
    """A row's epilogue subtile reaches its config struct (0 x 0: CUTLASS's automatic one), must
    divide the tile, and is refused where D is written column-major (swap-AB) or by a second
    kernel (K slices summed)."""
    header = (ROOT / "csrc" / "dispatch" / "configs.h").read_text()
    widened = [c for c in kt.SM90 if any(c.epilogue_tile)]
    assert widened
    for c in kt.SM90:
        body = re.search(rf"^struct {c.struct} \{{(.*?)^\}};", header, re.S | re.M).group(1)
        em, en = map(int, re.search(r"kEpilogueTileM = (\d+), kEpilogueTileN = (\d+);", body).group(1, 2))
        assert (em, en) == c.epilogue_tile, c.name
    assert "epilogue subtile 64x64" in generate_kernels.schedule_text(kt.Sm90((128, 128, 64), schedule="pingpong",
                                                                               epilogue_tile=(64, 64), why="a test tile"))
    with pytest.raises(AssertionError):
        kt.Sm90((128, 128, 64), epilogue_tile=(64, 48), why="48 does not divide 128")
    with pytest.raises(AssertionError):
        kt.Sm90((144, 128, 64), swap_ab=True, epilogue_tile=(48, 64), why="D^T is column-major")
    with pytest.raises(AssertionError):
        kt.Sm90((128, 256, 64), variant="splitk_sum", epilogue_tile=(128, 64), why="float32 partials")


def _registered():
    kernels = cutlass_ops.list_kernels()
    if not kernels:
        pytest.skip("no kernel module in this build")
    return kernels


def test_registered_kernels_carry_their_rows_facts():
    """What the C++ templates report (KernelInfo) matches the row they were built from."""
    checked = 0
    for k in _registered():
        row = BY_NAME.get((k.family, k.config))
        assert row is not None, f"{k.name}: config {k.config!r} is not a row of the kernel table"
        if any(row.tile):
            assert k.tile == row.tile, k.name
        assert set(k.decompositions) <= {d.replace("_", "-") for d in kt.DECOMPOSITIONS}
        if isinstance(row, kt.Sm90):
            assert k.cluster == row.cluster and k.swap_ab == row.swap_ab, k.name
            assert k.pingpong == (row.schedule == "pingpong") and k.math == "wgmma", k.name
            assert k.decompositions == tuple(d.replace("_", "-") for d in row.decompositions), k.name
            builds = row.fused if k.fuses_epilogue else row.builds
            assert k.dtype in builds and k.layouts in builds[k.dtype], k.name
            assert k.fuses_epilogue == k.name.endswith("_" + kt.FUSED_SUFFIX), k.name
            assert k.slice_sum == ("second-kernel" if row.variant == "splitk_sum" else "serial"), k.name
            assert not k.split_k_in_workspace, k.name
        elif isinstance(row, kt.Sm80):
            assert k.stages == row.stages and k.math == ("simt" if row.math == "simt" else "mma"), k.name
            assert k.alignment[0] in row.builds[k.dtype], k.name
            if f"_{row.splitk_sum_name}_a" in k.name:
                # The split-K-sum registration of a build: split-K alone, its slices summed apart.
                assert k.dtype in row.splitk_sum, k.name
                assert k.decompositions == ("split-k",) and k.slice_sum == "second-kernel", k.name
                assert not k.batched and not k.split_k_in_workspace, k.name
                checked += 1
                continue
            offered = {d.replace("_", "-") for d in row.decompositions}
            in_workspace = k.dtype in ("f16", "bf16") and not row.stream_k
            assert k.slice_sum == ("stream-k-workspace" if in_workspace else "serial"), k.name
            assert k.split_k_in_workspace == in_workspace, k.name
            if in_workspace:
                offered = offered | {"stream-k"}  # split-K on the stream-K kernel, which offers stream-K too
            assert set(k.decompositions) == offered, k.name
        else:
            assert k.role == row.role, k.name
            # A hand-written kernel's decompositions are its row's (step 6's split-K builds among them).
            assert k.decompositions == tuple(d.replace("_", "-") for d in row.decompositions), k.name
            assert k.slice_sum == ("last-slice" if "split_k" in row.decompositions else "serial"), k.name
            assert k.split_k_in_workspace == ("split_k" in row.decompositions), k.name
        checked += 1
    assert checked


def test_step6_gpu_tests_name_every_build_of_the_tma_wgmma_step():
    """tests/test_handwritten_wgmma_cuda.py forces the step-6 builds by name and skips a name that is
    not built: its lists must be exactly what the build registers, or a build goes untested (or a
    dropped one is skipped in silence)."""
    if not any(k.family == "handwritten" and k.arch == "sm_90a" for k in _registered()):
        pytest.skip("built without the sm90a kernels")
    import test_handwritten_wgmma_cuda as step6

    registered = {k.name: k for k in _registered() if "_6_wgmma_tma" in k.name and not k.fuses_epilogue}
    assert set(registered) == set(step6.NAMES + step6.COL_A)
    assert set(step6.SPLIT_K) == {name for name, k in registered.items() if "split-k" in k.decompositions}


def test_registry_refuses_a_module_built_from_another_table():
    """Config ids index the table a module was built from: a kernel module from another table
    (an entry-only rebuild after a table change) is refused, not mislabelled."""
    import ctypes

    abi = int(re.search(r"kKernelAbiVersion = (\d+);", (ROOT / "csrc" / "dispatch" / "kernel.h").read_text()).group(1))

    class KernelTable(ctypes.Structure):  # dispatch/kernel.h
        _fields_ = [("abi_version", ctypes.c_int), ("count", ctypes.c_int), ("kernels", ctypes.c_void_p),
                    ("module", ctypes.c_char_p), ("config_table_hash", ctypes.c_uint64)]

    new_capsule = ctypes.pythonapi.PyCapsule_New
    new_capsule.restype = ctypes.py_object
    new_capsule.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
    table = KernelTable(abi, 0, None, b"_C_stale", generate_kernels.table_hash() ^ 1)
    capsule = new_capsule(ctypes.addressof(table), b"cutlass_ops.KernelTable", None)
    with pytest.raises(ValueError, match="_C_stale was built from another kernel table"):
        cutlass_ops._extension._C.register_kernel_table(capsule)
