"""Packaging, op registration and the kernel registry: everything here runs without a GPU."""

import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import cutlass_ops
from cutlass_ops import _build_info

ROOT = Path(__file__).resolve().parents[1]


def test_schemas_match_torch_mm():
    ops = torch.ops.cutlass_ops
    assert str(ops.mm.default._schema) == "cutlass_ops::mm(Tensor self, Tensor mat2) -> Tensor"
    assert str(ops.mm.out._schema) == "cutlass_ops::mm.out(Tensor self, Tensor mat2, *, Tensor(a!) out) -> Tensor(a!)"
    assert str(ops.mm_with_kernel.default._schema) == (
        "cutlass_ops::mm_with_kernel(Tensor self, Tensor mat2, str kernel) -> Tensor")


def test_batched_schemas_match_torch():
    ops = torch.ops.cutlass_ops
    assert str(ops.bmm.default._schema) == "cutlass_ops::bmm(Tensor self, Tensor mat2) -> Tensor"
    assert str(ops.bmm.out._schema) == (
        "cutlass_ops::bmm.out(Tensor self, Tensor mat2, *, Tensor(a!) out) -> Tensor(a!)")
    assert str(ops.baddbmm.default._schema) == (
        "cutlass_ops::baddbmm(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1) -> Tensor")
    assert str(ops.baddbmm.out._schema) == (
        "cutlass_ops::baddbmm.out(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1, "
        "Tensor(a!) out) -> Tensor(a!)")
    assert str(ops.matmul.default._schema) == "cutlass_ops::matmul(Tensor self, Tensor other) -> Tensor"


@pytest.mark.parametrize("op", ["cutlass_ops::mm", "cutlass_ops::mm.out", "cutlass_ops::mm_with_kernel",
                                "cutlass_ops::mm_with_kernel.out", "cutlass_ops::bmm", "cutlass_ops::bmm.out",
                                "cutlass_ops::baddbmm", "cutlass_ops::baddbmm.out"])
@pytest.mark.parametrize("key", ["CUDA", "Meta", "CPU", "Autograd"])
def test_kernels_registered_for_dispatch_keys(op, key):
    assert torch._C._dispatch_has_kernel_for_dispatch_key(op, key)
    if key == "Autograd":  # the alias reaches the per-backend autograd keys
        assert torch._C._dispatch_has_computed_kernel_for_dispatch_key(op, "AutogradCUDA")


@pytest.mark.parametrize("op", ["cutlass_ops::mm", "cutlass_ops::mm_with_kernel", "cutlass_ops::bmm",
                                "cutlass_ops::baddbmm"])
def test_autocast_kernel_registered(op):
    assert torch._C._dispatch_has_kernel_for_dispatch_key(op, "AutocastCUDA")


def test_matmul_is_a_composite_of_the_other_ops():
    """cutlass_ops::matmul has one kernel, CompositeImplicitAutograd: autograd, autocast and meta
    come from cutlass_ops::mm and cutlass_ops::bmm, which it calls."""
    op = "cutlass_ops::matmul"
    assert torch._C._dispatch_has_kernel_for_dispatch_key(op, "CompositeImplicitAutograd")
    for key in ("CUDA", "Meta", "CPU", "Autograd", "AutocastCUDA"):
        assert not torch._C._dispatch_has_kernel_for_dispatch_key(op, key), key


@pytest.mark.parametrize("name", ["bmm", "baddbmm", "matmul"])
def test_batched_products_are_public(name):
    assert name in cutlass_ops.__all__ and callable(getattr(cutlass_ops, name))
    assert getattr(cutlass_ops, name).__doc__


def test_build_info_names_every_kernel_module():
    assert set(_build_info.ARCHS) <= {"80", "90a"}
    assert _build_info.KERNEL_MODULES, "no kernel module was built"
    assert not cutlass_ops._extension.FAILED_KERNEL_MODULES
    assert sorted(cutlass_ops._extension._C.registered_modules()) == sorted(_build_info.KERNEL_MODULES)
    # CUTLASS comes from the pinned package unless CUTLASS_DIR overrode it.
    if _build_info.CUTLASS_SOURCE == "nvidia-cutlass":
        assert _build_info.CUTLASS_VERSION == "4.2.0"


def test_kernel_registry_is_consistent_with_the_sources():
    kernels = cutlass_ops.list_kernels()
    names = [k.name for k in kernels]
    assert len(names) == len(set(names)), "kernel names must be unique"
    sys.path.insert(0, str(ROOT / "csrc"))
    try:
        import generate_kernels
    finally:
        sys.path.pop(0)
    unit_of = {name: u.path for u in generate_kernels.all_units() for name in u.names}
    built = set()
    for k in kernels:
        match = re.fullmatch(r"(cutlass3x|cutlass2x|handwritten)_(sm\d+)_(f16|bf16|tf32|f32|3xtf32|f64)_([rc]{2})_(.+)",
                             k.name)
        assert match, k.name
        family, arch, dtype, layouts, config = match.groups()
        assert (family, dtype, layouts) == (k.family, k.dtype, k.layouts)
        assert f"_C_{arch}" in _build_info.KERNEL_MODULES, k.name
        assert all(a in (1, 2, 4, 8) for a in k.alignment)
        assert k.smem_bytes >= 0 and k.decompositions
        # Every kernel runs data-parallel, but for CUTLASS 2.x's split-K-sum registrations, whose
        # data-parallel launch is their plain build's.
        assert "data-parallel" in k.decompositions or (k.decompositions == ("split-k",) and
                                                      k.slice_sum == "second-kernel" and family == "cutlass2x"), k.name
        if family != "handwritten":
            # Generated: in a translation unit of its family, precision and arch, which exists.
            unit = unit_of.get(k.name)
            assert unit is not None, f"{k.name}: registered, but no generated file holds it"
            assert unit.is_file() and unit.parent.name == family and unit.name.startswith(f"gemm_{dtype}_"), unit
            assert unit.stem.endswith(f"_{arch}"), unit
            assert k.smem_bytes > 0
            built.add(k.name)
    # Every kernel of a generated file of a built arch registered (none compiled to nothing).
    expected = {name for u in generate_kernels.all_units() for name in u.names
                if f"_C_{u.path.stem.rsplit('_', 1)[1]}" in _build_info.KERNEL_MODULES
                and u.path.parent.name in _build_info.KERNEL_DIRS}
    assert built == expected


def test_every_precision_and_layout_has_an_alignment_one_kernel():
    """Any valid shape must have a kernel: each (dtype, layouts) pair needs a 1-element-aligned one."""
    kernels = cutlass_ops.list_kernels((8, 0))
    for dtype in ("f16", "bf16", "tf32", "f32", "f64"):  # 3xTF32 falls back to f32 when misaligned
        for layouts in ("rr", "rc", "cr", "cc"):
            assert any(k.dtype == dtype and k.layouts == layouts and k.alignment == (1, 1, 1) for k in kernels), (
                dtype, layouts)


def test_cli_info_runs():
    result = subprocess.run([sys.executable, "-m", "cutlass_ops", "info"], capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 0, result.stderr
    assert "CUTLASS       4.2.0" in result.stdout or _build_info.CUTLASS_SOURCE != "nvidia-cutlass"
    assert f"kernels       {len(cutlass_ops.list_kernels())}" in result.stdout


def test_cli_list_and_explain_run():
    listing = subprocess.run([sys.executable, "-m", "cutlass_ops", "list", "--capability", "9.0"],
                             capture_output=True, text=True, cwd=ROOT)
    assert listing.returncode == 0, listing.stderr
    assert "cutlass3x_sm90_bf16_rr_128x256x64_2x1x1_coop" in listing.stdout
    explained = subprocess.run(
        [sys.executable, "-m", "cutlass_ops", "explain", "--shape", "8192x8192x8192", "--dtype", "bf16",
         "--layout", "tn", "--device", "h100"], capture_output=True, text=True, cwd=ROOT)
    assert explained.returncode == 0, explained.stderr
    # The command line plans what the Python API plans (meta tensors, the same device preset), and
    # lists the column-major-A builds of both families among the candidates.
    picked = re.search(r"kernel (\S+)", explained.stdout).group(1)
    a = torch.empty(8192 * 8192, dtype=torch.bfloat16, device="meta").as_strided((8192, 8192), (1, 8192))
    b = torch.empty(8192, 8192, dtype=torch.bfloat16, device="meta")
    assert picked == cutlass_ops.explain(a, b, device="h100").kernel, explained.stdout
    listed = set(re.findall(r"^\s*\*?\s+[\d.]+ us.*?\s(\S+) \(", explained.stdout, re.M))
    assert {"handwritten_sm90_bf16_cr_6_wgmma_tma", "cutlass3x_sm90_bf16_cr_128x256x64_2x1x1_coop"} <= listed, listed
    bad = subprocess.run([sys.executable, "-m", "cutlass_ops", "explain", "--shape", "8x8"],
                         capture_output=True, text=True, cwd=ROOT)
    assert bad.returncode == 2 and "MxNxK" in bad.stderr


def test_third_party_finder_reports_the_headers():
    import importlib.util
    import os

    if importlib.util.find_spec("cutlass_library") is None and not os.environ.get("CUTLASS_DIR"):
        pytest.skip("no CUTLASS headers in this environment (the extension was built elsewhere)")
    result = subprocess.run([sys.executable, str(ROOT / "third_party" / "find_cutlass.py")], capture_output=True,
                            text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("CUTLASS ")


def test_cutlass_is_not_vendored():
    tracked = subprocess.run(["git", "ls-files"], capture_output=True, text=True, cwd=ROOT).stdout.split()
    if not tracked:
        pytest.skip("not a git checkout")
    assert not any(path.startswith(("include/cutlass", "third_party/cutlass/")) for path in tracked)


def test_extension_modules_use_the_shared_libstdcxx():
    """A private static copy of libstdc++'s iostreams inside an extension crashes the first
    error message that formats an integer (seen with a g++ wrapper that links libstdc++.a)."""
    import shutil

    import cutlass_ops._C as entry

    nm = shutil.which("nm")
    if nm is None:
        pytest.skip("nm (binutils) is not installed")
    modules = [Path(entry.__file__)] + [Path(entry.__file__).with_name(p.name) for p in
                                        Path(entry.__file__).parent.glob("_C_sm*.so")]
    for module in modules:
        listed = subprocess.run([nm, "-C", "--defined-only", str(module)], capture_output=True, text=True)
        if listed.returncode == 0 and not listed.stdout.strip():  # stripped: its dynamic symbols, then
            listed = subprocess.run([nm, "-C", "-D", "--defined-only", str(module)], capture_output=True, text=True)
        assert listed.returncode == 0 and listed.stdout.strip(), (module.name, listed.stderr)
        symbols = listed.stdout
        assert "std::ostream& std::ostream::_M_insert<long>(long)" not in symbols, module.name
        assert "std::basic_ostream<char, std::char_traits<char> >& std::basic_ostream<char, std::char_traits<char> >" \
               "::_M_insert<long>(long)" not in symbols, module.name


def test_calibrations_ship_with_the_package_and_load_at_import():
    """Each calibration file parses and loads without a GPU; setup.py ships them."""
    from cutlass_ops.calibration import store

    files = sorted(store.DATA_DIR.glob(f"*{store.SUFFIX}"))
    assert files, "no shipped calibration"
    for path in files:
        data = store.load(path)
        assert data["device"] and data["capability"] and data["sm_count"] > 0
    assert store.install_shipped() == [p.name for p in files]
    assert f"calibration/data/*{store.SUFFIX}" in (ROOT / "setup.py").read_text()

@pytest.mark.parametrize(("value", "on"), [("1", True), ("0", False), (None, False)])
def test_cutlass_ops_enable_turns_dispatcher_mode_on_at_import(value, on):
    import os
    env = {k: v for k, v in os.environ.items() if k != "CUTLASS_OPS_ENABLE"}
    if value is not None:
        env["CUTLASS_OPS_ENABLE"] = value
    result = subprocess.run([sys.executable, "-c", "import cutlass_ops; print(cutlass_ops.enabled())"],
                            capture_output=True, text=True, env=env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == str(on)
