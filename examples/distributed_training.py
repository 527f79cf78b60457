"""cutlass_ops inside torch.distributed: tensor parallelism (DTensor) and FSDP2, on every rank.

    torchrun --nproc-per-node 2 examples/distributed_training.py [--check tp,fsdp] [--bench] [--out DIR]

Dispatcher mode (`cutlass_ops.use_cutlass()`) makes cutlass_ops the CUDA kernel of aten::mm,
addmm, bmm and baddbmm in the process that calls it. Under torch.distributed every rank is its own
process: each enters the block, and the local matrix products that DTensor and FSDP2 issue on its
GPU (the shards' mm, the gathered weights' mm) run on cutlass_ops, with that rank's device,
stream, plan cache and calibration data. Nothing else changes in the training code.

What it runs, on the Llama-style blocks of examples/llama_training.py (bf16, random weights):

* ``tp``: one transformer block split over the ranks with `parallelize_module`: the attention's
  q, k, v and the MLP's gate and up projections column-parallel (`ColwiseParallel`), the
  attention's output and the MLP's down projection row-parallel (`RowwiseParallel`). Forward and
  backward in dispatcher mode, against the same block unsplit on PyTorch's kernels: the output,
  the input's gradient and every weight's gradient (gathered from its shards).
* ``fsdp``: a small decoder sharded with `fully_shard` (FSDP2; parameters gathered in bf16,
  gradients reduced in float32), trained for `--steps` AdamW steps in dispatcher mode and, from
  the same weights on the same batches, on PyTorch's kernels: both loss curves.
* ``--bench``: the tensor-parallel block's training step (forward and backward), tokens per
  second on cutlass_ops and on PyTorch, stepped in turn. Run it with ``--nproc-per-node 1``
  and ``2`` for the scaling from TP=1 to TP=2.

Every rank prints and (with ``--out``) writes ``rank<r>.json``: the figures, and
`cutlass_ops.stats()` of the dispatcher-mode parts, so that a rank whose products fell back to
PyTorch shows it. tests/test_distributed_cuda.py runs this file and checks those files.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import importlib.util
import json
import os
import statistics
import sys
import time
from pathlib import Path

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard
from torch.distributed.tensor import DTensor
from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel, parallelize_module

import cutlass_ops


def _llama_example():
    path = Path(__file__).resolve().with_name("llama_training.py")
    spec = importlib.util.spec_from_file_location("llama_training", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


llama = _llama_example()

TP_PLAN = {
    "attn.q": ColwiseParallel(),
    "attn.k": ColwiseParallel(),
    "attn.v": ColwiseParallel(),
    "attn.o": RowwiseParallel(),
    "mlp.gate": ColwiseParallel(),
    "mlp.up": ColwiseParallel(),
    "mlp.down": RowwiseParallel(),
}


def parse(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--check", default="tp,fsdp", help="comma-separated: tp, fsdp (or none)")
    p.add_argument("--bench", action="store_true", help="time the tensor-parallel block's training step")
    p.add_argument("--d-model", type=int, default=512)
    p.add_argument("--heads", type=int, default=8)
    p.add_argument("--seq", type=int, default=256)
    p.add_argument("--batch", type=int, default=2)
    p.add_argument("--layers", type=int, default=2, help="fsdp: decoder layers")
    p.add_argument("--vocab", type=int, default=2048, help="fsdp: vocabulary")
    p.add_argument("--steps", type=int, default=20, help="fsdp: training steps")
    p.add_argument("--bench-d-model", type=int, default=4096)
    p.add_argument("--bench-seq", type=int, default=2048)
    p.add_argument("--bench-steps", type=int, default=20)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default=None, help="folder for rank<r>.json")
    args = p.parse_args(argv)
    args.check = [c for c in args.check.split(",") if c and c != "none"]
    unknown = set(args.check) - {"tp", "fsdp"}
    if unknown:
        p.error(f"--check: unknown {sorted(unknown)}; choose from tp, fsdp")
    return args


def d_ff(d_model: int) -> int:
    return 4 * d_model * 2 // 3 // 64 * 64


def tensor_parallel_block(block, mesh):
    """Shards `block` (a llama_training.Block) over the mesh, in place; its attention then holds
    heads / world heads of the ranks' own."""
    world = mesh.size()
    if block.attn.heads % world or block.mlp.gate.out_features % world:
        raise ValueError(f"{block.attn.heads} heads and {block.mlp.gate.out_features} MLP features do not split "
                         f"over {world} ranks")
    parallelize_module(block, mesh, TP_PLAN)
    block.attn.heads //= world
    return block


def block_inputs(batch, seq, d_model, heads, device, seed):
    g = torch.Generator(device=device).manual_seed(seed)
    x = torch.randn(batch, seq, d_model, device=device, dtype=torch.bfloat16, generator=g)
    cos, sin = llama.rotary_tables(seq, d_model // heads, device)
    mask = torch.full((seq, seq), float("-inf"), device=device).triu(1)
    return x, cos, sin, mask


def full_grad(p: torch.nn.Parameter) -> torch.Tensor:
    g = p.grad
    return g.full_tensor() if isinstance(g, DTensor) else g


def relative_error(ours: torch.Tensor, theirs: torch.Tensor) -> float:
    ours, theirs = ours.detach().double(), theirs.detach().double()
    return float((ours - theirs).norm() / theirs.norm().clamp_min(1e-30))


def check_tp(args, mesh, device) -> dict:
    """The tensor-parallel block in dispatcher mode against the unsplit block on torch."""
    torch.manual_seed(args.seed)
    reference = llama.Block(args.d_model, args.heads, d_ff(args.d_model)).to(device, torch.bfloat16)
    ours = tensor_parallel_block(copy.deepcopy(reference), mesh)
    x, cos, sin, mask = block_inputs(args.batch, args.seq, args.d_model, args.heads, device, args.seed + 1)
    grad_out = torch.randn_like(x)

    x_ref = x.clone().requires_grad_()
    counter = llama.CountGemms()  # the matrix products of the unsplit block, forward and backward
    with counter:
        y_ref = reference(x_ref, cos, sin, mask)
        y_ref.backward(grad_out)

    x_ours = x.clone().requires_grad_()
    cutlass_ops.reset_stats()
    with cutlass_ops.use_cutlass():
        y_ours = ours(x_ours, cos, sin, mask)
        y_ours.backward(grad_out)
    torch.cuda.synchronize(device)
    stats = cutlass_ops.stats()

    weights = {name: relative_error(full_grad(p), dict(reference.named_parameters())[name].grad)
               for name, p in ours.named_parameters()}
    return {
        "output_error": relative_error(y_ours, y_ref),
        "input_grad_error": relative_error(x_ours.grad, x_ref.grad),
        "weight_grad_errors": weights,
        "local_weight_shapes": {name: list((p.to_local() if isinstance(p, DTensor) else p).shape)
                                for name, p in ours.named_parameters() if name.endswith("weight") and "norm" not in name},
        "gemms": counter.count,
        "stats": stats,
    }


def _train(model, batches, steps_ctx):
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    losses = []
    for tokens in batches:
        with steps_ctx():
            logits = model(tokens[:, :-1])
            loss = F.cross_entropy(logits.float().flatten(0, 1), tokens[:, 1:].flatten())
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
        total = loss.detach().clone()
        dist.all_reduce(total, op=dist.ReduceOp.AVG)
        losses.append(total.item())
    return losses


def check_fsdp(args, mesh, device) -> dict:
    """A decoder sharded with fully_shard, trained on cutlass_ops and on torch from the same weights."""
    torch.manual_seed(args.seed)
    base = llama.Llama(args.vocab, args.d_model, args.heads, d_ff(args.d_model), args.layers).to(device)
    rank = dist.get_rank()
    g = torch.Generator(device=device).manual_seed(args.seed + 100 + rank)  # each rank its own data
    batches = [torch.randint(0, args.vocab, (args.batch, args.seq + 1), device=device, generator=g)
               for _ in range(args.steps)]
    policy = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)

    def sharded():
        model = copy.deepcopy(base)
        for block in model.blocks:
            fully_shard(block, mesh=mesh, mp_policy=policy)
        fully_shard(model, mesh=mesh, mp_policy=policy)
        return model

    # The matrix products of one step of the same model unsharded (in bf16, as FSDP2 computes).
    probe, counter = copy.deepcopy(base).to(torch.bfloat16), llama.CountGemms()
    with counter:
        tokens = batches[0]
        F.cross_entropy(probe(tokens[:, :-1]).float().flatten(0, 1), tokens[:, 1:].flatten()).backward()
    del probe

    torch_losses = _train(sharded(), batches, contextlib.nullcontext)
    cutlass_ops.reset_stats()
    cutlass_losses = _train(sharded(), batches, cutlass_ops.use_cutlass)
    torch.cuda.synchronize(device)
    return {"torch_losses": torch_losses, "cutlass_losses": cutlass_losses, "gemms": counter.count * len(batches),
            "stats": cutlass_ops.stats()}


def bench_tp(args, mesh, device) -> dict:
    """Training-step throughput of the tensor-parallel block, cutlass_ops and torch in turn."""
    torch.manual_seed(args.seed)
    d = args.bench_d_model
    heads = max(mesh.size(), d // 128)
    block = tensor_parallel_block(llama.Block(d, heads, d_ff(d)).to(device, torch.bfloat16), mesh)
    x, cos, sin, mask = block_inputs(args.batch, args.bench_seq, d, heads, device, args.seed + 1)
    x.requires_grad_()
    grad_out = torch.randn_like(x)

    def step():
        y = block(x, cos, sin, mask)
        y.backward(grad_out)
        block.zero_grad(set_to_none=True)
        x.grad = None

    times = {"torch": [], "cutlass": []}
    contexts = {"torch": contextlib.nullcontext, "cutlass": cutlass_ops.use_cutlass}
    for i in range(args.bench_steps + 3):
        for name in ("torch", "cutlass") if i % 2 == 0 else ("cutlass", "torch"):
            dist.barrier()
            torch.cuda.synchronize(device)
            start = time.perf_counter()
            with contexts[name]():
                step()
            torch.cuda.synchronize(device)
            if i >= 3:  # warm-up: kernels, plans, allocator, NCCL
                times[name].append(time.perf_counter() - start)
    tokens = args.batch * args.bench_seq
    ms = {name: statistics.median(t) * 1e3 for name, t in times.items()}
    return {"world": mesh.size(), "d_model": d, "seq": args.bench_seq, "batch": args.batch,
            "step_ms": ms, "tokens_per_s": {name: tokens / (v / 1e3) for name, v in ms.items()}}


def main(argv=None) -> int:
    args = parse(argv)
    if not torch.cuda.is_available():
        print("distributed_training.py needs CUDA GPUs", file=sys.stderr)
        return 2
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    device = torch.device("cuda", local_rank)
    torch.cuda.set_device(device)
    dist.init_process_group("nccl", device_id=device)
    try:
        mesh = init_device_mesh("cuda", (dist.get_world_size(),))
        result = {"rank": dist.get_rank(), "world": dist.get_world_size(), "device": str(device),
                  "gpu": torch.cuda.get_device_name(device)}
        if "tp" in args.check:
            result["tp"] = check_tp(args, mesh, device)
        if "fsdp" in args.check:
            result["fsdp"] = check_fsdp(args, mesh, device)
        if args.bench:
            result["bench"] = bench_tp(args, mesh, device)
        if args.out:
            Path(args.out).mkdir(parents=True, exist_ok=True)
            (Path(args.out) / f"rank{result['rank']}.json").write_text(json.dumps(result, indent=1))
        summary(result)
    finally:
        dist.destroy_process_group()
    return 0


def summary(r: dict) -> None:
    lines = [f"rank {r['rank']}/{r['world']} on {r['device']} ({r['gpu']})"]
    if "tp" in r:
        tp = r["tp"]
        lines.append(f"  tp: output error {tp['output_error']:.2e}, input grad {tp['input_grad_error']:.2e}, "
                     f"worst weight grad {max(tp['weight_grad_errors'].values()):.2e}; "
                     f"cutlass_ops calls {tp['stats']['cutlass']}, handed to torch "
                     f"{sum(tp['stats']['torch_mm'].values())}")
    if "fsdp" in r:
        f = r["fsdp"]
        lines.append(f"  fsdp: loss {f['torch_losses'][0]:.4f} -> {f['torch_losses'][-1]:.4f} on torch, "
                     f"{f['cutlass_losses'][0]:.4f} -> {f['cutlass_losses'][-1]:.4f} on cutlass_ops; "
                     f"cutlass_ops calls {f['stats']['cutlass']}")
    if "bench" in r:
        b = r["bench"]
        lines.append(f"  bench (TP={b['world']}, d_model {b['d_model']}, {b['batch']}x{b['seq']} tokens): step "
                     f"{b['step_ms']['torch']:.2f} ms on torch, {b['step_ms']['cutlass']:.2f} ms on cutlass_ops")
    print("\n".join(lines), flush=True)


if __name__ == "__main__":
    raise SystemExit(main())
