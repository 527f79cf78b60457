"""examples/llama_training.py: a Llama-style decoder's training steps in dispatcher mode run every
matrix product on cutlass_ops, with PyTorch's losses."""

import importlib.util
from pathlib import Path

import pytest
import torch

pytestmark = pytest.mark.gpu

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "llama_training.py"


def load_example():
    spec = importlib.util.spec_from_file_location("llama_training", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_llama_training_steps_run_every_gemm_on_cutlass_with_torchs_losses():
    example = load_example()
    args = example.parse(["--layers", "2", "--d-model", "256", "--heads", "4", "--vocab", "1024", "--seq", "128",
                          "--batch", "2", "--steps", "10", "--seed", "3"])
    r = example.compare(args)
    # Per step: 7 projections and 2 attention products per layer plus the head, forward, and
    # their input and weight gradients backward: far more than a handful.
    assert r["gemms_per_step"] >= 3 * (2 * 9 + 1), r
    assert r["cutlass_calls"] == r["gemms"], r
    assert r["torch_fallbacks"] == 0 and r["no_work"] == 0, r
    for step, (theirs, ours) in enumerate(zip(r["torch_losses"], r["cutlass_losses"])):
        assert abs(ours - theirs) <= 1e-2 * abs(theirs), f"step {step}: loss {ours} against PyTorch's {theirs}"
    # The steps changed the weights: the losses are not one value repeated.
    assert len({round(loss, 4) for loss in r["cutlass_losses"]}) > 1, r


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_llama_example_runs_as_a_script(capsys):
    example = load_example()
    assert example.main(["--layers", "1", "--d-model", "128", "--heads", "2", "--vocab", "512", "--seq", "64",
                         "--batch", "2", "--steps", "3"]) == 0
    printed = capsys.readouterr().out
    assert "ran on cutlass_ops, 0 handed to torch" in printed and "ratio" in printed, printed
