"""Test configuration: GPU tests (marked `gpu`) skip cleanly where no CUDA device is visible."""

import os
import tempfile

import pytest
import torch

# The tests' autotuning must never read or write the user's tuning cache (its entries would
# override the cost model the tests check).
os.environ["CUTLASS_OPS_TUNING_CACHE"] = os.path.join(tempfile.mkdtemp(prefix="cutlass_ops_test_"), "tuning.json")
os.environ["CUTLASS_OPS_NO_TUNING_TABLE"] = "1"


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_auto_num_workers(config):
    """How many processes `-n auto` (pyproject.toml's addopts) starts: one per core, at most 16.
    Each process that runs GPU tests holds a CUDA context and its tests' tensors; 16 ran the
    whole suite on one H200 with 16 cores (`python -m pytest tests -q -n 16`, 0431254's tree with
    two kernel changes not kept, 2026-11-29: 144 s; in one process `scripts/gpu_check.sh` had
    reached 99% of it when stopped at 420 s). The 2-core CI machine gets two."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(1, min(cores, 16))


def pytest_collection_modifyitems(config, items):
    if torch.cuda.is_available():
        return
    skip = pytest.mark.skip(reason="needs a CUDA device")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture
def clean_state():
    """No patching, no dispatcher mode and zeroed counters before the test, and none left after.
    (cutlass_ops is imported here only when a test asks for it: the CPU-only tests do not.)"""
    import cutlass_ops

    cutlass_ops.unpatch_torch()
    cutlass_ops.disable()
    cutlass_ops.reset_stats()
    yield
    cutlass_ops.unpatch_torch()
    cutlass_ops.disable()


@pytest.fixture
def tf32_matmul():
    """Run a test with torch's TF32 matmul flag set to the given value, then restore it.

    Only the legacy flag is used: mixing it with torch.backends.cuda.matmul.fp32_precision
    makes torch raise on the next float32 matmul.
    """
    previous = torch.backends.cuda.matmul.allow_tf32

    def set_tf32(enabled: bool) -> None:
        torch.backends.cuda.matmul.allow_tf32 = enabled

    yield set_tf32
    torch.backends.cuda.matmul.allow_tf32 = previous


@pytest.fixture(scope="module")
def setup_py():
    """The repository's setup.py as a module (main() runs only as __main__): its build plan and
    checks, without compiling."""
    import importlib.util
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    if not (root / "setup.py").is_file():
        pytest.skip("no setup.py beside the tests (an installed copy)")
    spec = importlib.util.spec_from_file_location("cutlass_ops_setup_py", root / "setup.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
