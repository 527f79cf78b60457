"""cutlass_ops.profile: a model's matrix products recorded and timed on PyTorch and cutlass_ops."""

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from torch import nn
from torch.utils._python_dispatch import TorchDispatchMode

import cutlass_ops

pytestmark = pytest.mark.gpu
ROOT = Path(__file__).resolve().parents[1]


class Block(nn.Module):
    """A linear with bias, an attention-shaped pair of batched products, a linear without bias."""

    def __init__(self, d=128, heads=4):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(d, 3 * d)
        self.out = nn.Linear(d, d, bias=False)

    def forward(self, x):
        b, s, d = x.shape
        q, k, v = self.qkv(x).view(b, s, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        att = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(d // self.heads), dim=-1)
        return self.out((att @ v).transpose(1, 2).reshape(b, s, d))


class Count(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.calls = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if func.overloadpacket.__name__ in ("mm", "addmm", "bmm", "baddbmm", "_addmm_activation"):
            self.calls += 1
        return func(*args, **(kwargs or {}))


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
@pytest.mark.parametrize("backward", [False, True])
def test_profile_records_every_product_and_runs_each_on_cutlass(backward):
    model = Block().cuda()
    x = torch.randn(2, 96, 128, device="cuda", requires_grad=backward)
    counter = Count()
    with counter, torch.autocast("cuda", dtype=torch.bfloat16):
        y = model(x)
        if backward:
            y.float().sum().backward()
    was_enabled = cutlass_ops.enabled()
    with torch.autocast("cuda", dtype=torch.bfloat16):
        report = cutlass_ops.profile(model, x, backward=backward, rounds=2, rep_ms=5)
    assert cutlass_ops.enabled() == was_enabled
    assert report.calls == counter.calls > 0
    ops = {g.op for g in report.gemms}
    assert {"addmm", "bmm", "mm"} <= ops, ops
    for g in report.gemms:
        assert g.dtype == "bfloat16" and g.torch_us > 0 and g.cutlass_us > 0, g
        assert g.ran_on.startswith(("cutlass3x_", "cutlass2x_", "handwritten_")), g
    expected = sum(g.calls * g.torch_us for g in report.gemms) / sum(g.calls * g.cutlass_us for g in report.gemms)
    assert report.speedup == pytest.approx(expected)
    text = str(report)
    assert f"{report.calls} matrix products" in text and "expected GEMM speed-up" in text
    data = report.to_json()
    assert len(data["gemms"]) == len(report.gemms) and data["speedup"] == pytest.approx(report.speedup)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_profile_refuses_backward_without_a_gradient():
    model = nn.Linear(64, 64).cuda().requires_grad_(False)
    with pytest.raises(ValueError, match="requires grad"):
        cutlass_ops.profile(model, torch.randn(8, 64, device="cuda"), backward=True)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_profile_command_line_on_the_llama_example(tmp_path):
    out = tmp_path / "profile.json"
    run = subprocess.run([sys.executable, "-m", "cutlass_ops", "profile", "examples/llama_training.py:profile_target",
                          "--rounds", "1", "--json", str(out)], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    assert "expected GEMM speed-up" in run.stdout
    data = json.loads(out.read_text())
    # Per layer: q, k, v, o, gate, up, down (folded mm) and two attention bmm; plus the head.
    assert sum(g["calls"] for g in data["gemms"]) == 4 * 9 + 1
    assert all(not g["ran_on"].startswith("torch") for g in data["gemms"]), data
