"""Importing cutlass_ops initialises no CUDA context: a program may fork after the import and use
CUDA in its children; the user's tuning cache is loaded when CUDA is first initialised. Each
case runs in a fresh interpreter (this one has CUDA initialised long since)."""

import json
import os
import subprocess
import sys
import textwrap

import pytest
import torch

pytestmark = pytest.mark.gpu

needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")


def run(code: str, tmp_path, cache=None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("CUTLASS_OPS_NO_TUNING_TABLE", "CUTLASS_OPS_ENABLE")}
    env["CUTLASS_OPS_TUNING_CACHE"] = str(cache or tmp_path / "tuning.json")
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env, capture_output=True, text=True,
                          timeout=300, cwd=tmp_path)


@needs_cuda
def test_import_initialises_no_cuda_and_a_forked_child_runs_mm(tmp_path):
    result = run("""
        import os, sys, torch, cutlass_ops
        assert not torch.cuda.is_initialized(), "import cutlass_ops initialised CUDA"
        pid = os.fork()
        if pid == 0:
            a = torch.randn(96, 80, device="cuda", dtype=torch.bfloat16)
            b = torch.randn(80, 72, device="cuda", dtype=torch.bfloat16)
            ok = torch.allclose(cutlass_ops.mm(a, b).float(), a.float() @ b.float(), rtol=2e-2, atol=2e-1)
            os._exit(0 if ok else 3)
        _, status = os.waitpid(pid, 0)
        sys.exit(os.waitstatus_to_exitcode(status))
    """, tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr


@needs_cuda
def test_the_tuning_cache_loads_when_cuda_initialises(tmp_path):
    cache = tmp_path / "tuning.json"
    made = run("""
        import torch, cutlass_ops
        a = torch.randn(300, 200, device="cuda", dtype=torch.float16)
        b = torch.randn(200, 100, device="cuda", dtype=torch.float16)
        plan = cutlass_ops.explain(a, b)
        cutlass_ops.tuning.pin(a, b, plan.kernel, plan.decomposition, plan.splits, plan.variant)
        print(cutlass_ops.tuning.save())
    """, tmp_path, cache)
    assert made.returncode == 0, made.stdout + made.stderr
    assert len(json.loads(cache.read_text())["entries"]) == 1
    used = run("""
        import torch, cutlass_ops
        assert not torch.cuda.is_initialized()
        assert cutlass_ops.tuning.entries() == [], "loaded before CUDA was initialised"
        torch.zeros(1, device="cuda")
        entries = cutlass_ops.tuning.entries()
        assert len(entries) == 1, entries
    """, tmp_path, cache)
    assert used.returncode == 0, used.stdout + used.stderr


@needs_cuda
def test_no_cache_is_written_without_autotuning(tmp_path):
    result = run("""
        import torch, cutlass_ops
        a = torch.randn(64, 64, device="cuda")
        cutlass_ops.mm(a, a)
    """, tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert not (tmp_path / "tuning.json").exists()
