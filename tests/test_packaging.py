"""Packaging without compiling: setup.py stops before compiling, with the fix, where a build
could not succeed or load; the source distribution carries every file a build needs. No GPU."""

import subprocess
import sys
import tarfile
from pathlib import Path
from types import SimpleNamespace

import pytest

ROOT = Path(__file__).resolve().parents[1]


def pinned_cutlass(setup_py):
    pin = setup_py._load_find_cutlass().CUTLASS_PIN
    return SimpleNamespace(source="nvidia-cutlass", version=pin.rsplit(".", 1)[0])


def test_preflight_refuses_a_cpu_only_torch(setup_py, monkeypatch):
    monkeypatch.setattr(setup_py.torch.version, "cuda", None)
    with pytest.raises(SystemExit, match="CPU-only build"):
        setup_py.preflight(pinned_cutlass(setup_py))


def test_preflight_refuses_nvcc_of_another_cuda_major(setup_py, monkeypatch):
    monkeypatch.setattr(setup_py.torch.version, "cuda", "13.0")
    monkeypatch.setattr(setup_py, "nvcc_version", lambda: "12.8")
    with pytest.raises(SystemExit, match=r"nvcc 12\.8 .* CUDA 13\.0 differ in major version"):
        setup_py.preflight(pinned_cutlass(setup_py))


def test_preflight_refuses_a_gpu_below_compute_capability_8(setup_py, monkeypatch):
    monkeypatch.setattr(setup_py.torch.version, "cuda", "13.0")
    monkeypatch.setattr(setup_py, "nvcc_version", lambda: "13.0")
    monkeypatch.setattr(setup_py, "visible_capability", lambda: (7, 5))
    monkeypatch.setattr(setup_py.torch.cuda, "get_device_name", lambda *a: "Tesla T4")
    with pytest.raises(SystemExit, match=r"Tesla T4 has compute capability 7\.5; cutlass_ops needs 8\.0"):
        setup_py.preflight(pinned_cutlass(setup_py))


def test_preflight_refuses_cutlass_headers_of_another_version(setup_py, monkeypatch):
    monkeypatch.setattr(setup_py.torch.version, "cuda", "13.0")
    monkeypatch.setattr(setup_py, "nvcc_version", lambda: "13.0")
    monkeypatch.setattr(setup_py, "visible_capability", lambda: None)
    with pytest.raises(SystemExit, match=r"CUTLASS 3\.9\.0.*nvidia-cutlass=="):
        setup_py.preflight(SimpleNamespace(source="nvidia-cutlass", version="3.9.0"))
    # A CUTLASS checkout named by CUTLASS_DIR is the user's choice: no pin.
    setup_py.preflight(SimpleNamespace(source="CUTLASS_DIR", version="3.9.0"))
    setup_py.preflight(pinned_cutlass(setup_py))


def test_default_jobs_fit_the_memory(setup_py, monkeypatch):
    """MAX_JOBS unset: the cores, but no more than available memory / 5.8 GB (the peak of a
    generated CUTLASS 3.x file's compile)."""
    import io

    def meminfo(gb):
        return lambda path, *a, **k: io.StringIO(f"MemTotal: 999 kB\nMemAvailable: {int(gb * 1e6)} kB\n")

    monkeypatch.setattr(setup_py.os, "cpu_count", lambda: 64)
    monkeypatch.setattr(setup_py, "open", meminfo(16), raising=False)
    assert setup_py.default_jobs() == 2
    monkeypatch.setattr(setup_py, "open", meminfo(512), raising=False)
    assert setup_py.default_jobs() == 64
    monkeypatch.setattr(setup_py, "open", meminfo(1), raising=False)
    assert setup_py.default_jobs() == 1


def test_sdist_carries_every_source_header_and_third_party_file(tmp_path):
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True)
    if tracked.returncode != 0:
        pytest.skip("not a git checkout")
    needed = {f for f in tracked.stdout.split()
              if (f.startswith(("csrc/", "third_party/")) or (f.startswith("cutlass_ops/") and not f.endswith(".so")))
              and (ROOT / f).exists()}  # a tracked file the working tree has deleted is not a source
    needed |= {"setup.py", "pyproject.toml", "README.md", "LICENSE", "requirements.txt"}
    result = subprocess.run([sys.executable, "setup.py", "-q", "sdist", "--dist-dir", str(tmp_path)], cwd=ROOT,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-2000:]
    (archive,) = tmp_path.glob("*.tar.gz")
    with tarfile.open(archive) as tar:
        names = {name.split("/", 1)[1] for name in tar.getnames() if "/" in name}
    missing = sorted(needed - names)
    assert not missing, f"the sdist lacks {missing[:10]}"
