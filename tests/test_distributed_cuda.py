"""cutlass_ops inside torch.distributed: examples/distributed_training.py under torchrun (NCCL).

On two GPUs: a tensor-parallel transformer block (DTensor, ColwiseParallel/RowwiseParallel) in
dispatcher mode matches the unsplit block on PyTorch's kernels, forward and backward, and every
rank's matrix products ran on cutlass_ops; FSDP2 (`fully_shard`) training in dispatcher mode has
PyTorch's loss curve. On one GPU the same file runs with a mesh of one rank (the DTensor and
FSDP2 code paths, without the collectives' second rank): NCCL refuses two ranks on one GPU.
"""

import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch

pytestmark = pytest.mark.gpu

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "distributed_training.py"
GPUS = torch.cuda.device_count() if torch.cuda.is_available() else 0


def torchrun(ranks: int, out: Path, *args: str) -> list[dict]:
    """Runs the example on `ranks` processes; each rank's JSON, by rank."""
    command = [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc-per-node={ranks}",
               str(EXAMPLE), "--out", str(out), *args]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"{' '.join(command)} failed ({done.returncode}):\n{done.stdout[-4000:]}\n{done.stderr[-8000:]}"
    results = [json.loads((out / f"rank{r}.json").read_text()) for r in range(ranks)]
    assert [r["rank"] for r in results] == list(range(ranks))
    return results


def check_tp(results: list[dict]) -> None:
    world = len(results)
    for r in results:
        tp = r["tp"]
        # bf16 products summed in another order (K split over the ranks, then all-reduced).
        assert tp["output_error"] < 2e-2, (r["rank"], tp["output_error"])
        assert tp["input_grad_error"] < 2e-2, (r["rank"], tp["input_grad_error"])
        for name, error in tp["weight_grad_errors"].items():
            assert error < 3e-2, (r["rank"], name, error)
        # Each rank holds its share of every projection: column-parallel ones by output features,
        # row-parallel ones by input features (d_model 256, d_ff 640 below).
        shapes = tp["local_weight_shapes"]
        assert shapes["attn.q.weight"] == [256 // world, 256], shapes
        assert shapes["attn.o.weight"] == [256, 256 // world], shapes
        assert shapes["mlp.down.weight"] == [256, 640 // world], shapes
        # Every matrix product the rank ran (the unsplit block's count: 7 projections and 2
        # attention products forward, twice as many backward) ran on cutlass_ops, none on torch.
        stats = tp["stats"]
        assert tp["gemms"] == 27, tp["gemms"]
        assert stats["cutlass"] == tp["gemms"], stats
        assert sum(stats["torch_mm"].values()) == 0 and stats["no_work"] == 0, stats
        assert stats["ops"].get("mm", 0) >= 21 and stats["ops"].get("bmm", 0) >= 6, stats


def check_fsdp(results: list[dict], steps: int) -> None:
    losses = results[0]["fsdp"]["torch_losses"]
    for r in results:
        f = r["fsdp"]
        assert len(f["torch_losses"]) == len(f["cutlass_losses"]) == steps
        # The reported losses are averaged over the ranks: every rank reports the same curve.
        assert f["torch_losses"] == pytest.approx(losses, rel=1e-6)
        for step, (theirs, ours) in enumerate(zip(f["torch_losses"], f["cutlass_losses"])):
            assert abs(ours - theirs) <= 1e-2 * abs(theirs), f"rank {r['rank']} step {step}: {ours} against {theirs}"
        assert f["cutlass_losses"][-1] < f["cutlass_losses"][0], f["cutlass_losses"]  # it trained
        stats = f["stats"]
        assert stats["cutlass"] == f["gemms"], stats
        assert sum(stats["torch_mm"].values()) == 0, stats


ARGS = ("--d-model", "256", "--heads", "4", "--seq", "128", "--batch", "2", "--layers", "2", "--vocab", "1024",
        "--steps", "20", "--seed", "5")


@pytest.mark.skipif(GPUS < 2, reason="needs two GPUs (NCCL takes one GPU per rank)")
def test_tensor_parallel_and_fsdp2_on_two_gpus(tmp_path):
    results = torchrun(2, tmp_path, *ARGS)
    assert {r["device"] for r in results} == {"cuda:0", "cuda:1"}
    check_tp(results)
    check_fsdp(results, 20)


@pytest.mark.skipif(GPUS < 1, reason="needs a CUDA GPU")
def test_tensor_parallel_and_fsdp2_code_paths_on_one_gpu(tmp_path):
    # A mesh of one rank: parallelize_module and fully_shard still turn the weights into DTensors
    # and run the products through DTensor's and FSDP2's code; the collectives have no peer.
    results = torchrun(1, tmp_path, *ARGS)
    check_tp(results)
    check_fsdp(results, 20)
