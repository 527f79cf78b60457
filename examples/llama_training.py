"""A Llama-style decoder trained on cutlass_ops, unchanged, in dispatcher mode.

    python examples/llama_training.py [--layers 4] [--d-model 1024] [--seq 512] [--batch 4] [--steps 10]

The model is built from torch.nn (random weights, no downloads): token embedding, then per
layer RMSNorm, causal self-attention with rotary position embeddings written out as matmuls
(q @ k^T and att @ v, as transformers' "eager" attention does), RMSNorm and a SwiGLU MLP;
a final RMSNorm and the LM head. Linear layers have no bias, as in Llama.

It trains the same model from the same weights on the same batches twice under bf16 autocast,
a step of each in turn: on plain PyTorch, and inside `cutlass_ops.use_cutlass()`, where every matrix product the step
makes (the projections' mm, the attention's bmm, forward and backward) runs on cutlass_ops.
It prints both runs' losses, how many of the step's matrix products PyTorch makes and how
many ran on cutlass_ops (`cutlass_ops.stats()`), and the step time of each.
"""

from __future__ import annotations

import argparse
import copy
import math
import statistics
import sys
import time

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils._python_dispatch import TorchDispatchMode

import cutlass_ops


class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float = 1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = eps

    def forward(self, x):
        x32 = x.float()
        return (x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + self.eps)).to(x.dtype) * self.weight.to(x.dtype)


def rotary_tables(seq: int, head_dim: int, device, base: float = 10000.0):
    inv_freq = 1.0 / base ** (torch.arange(0, head_dim, 2, device=device, dtype=torch.float32) / head_dim)
    angles = torch.outer(torch.arange(seq, device=device, dtype=torch.float32), inv_freq)
    angles = torch.cat([angles, angles], dim=-1)
    return angles.cos(), angles.sin()


def rotate(x, cos, sin):
    half = x.shape[-1] // 2
    rotated = torch.cat([-x[..., half:], x[..., :half]], dim=-1)
    return x * cos.to(x.dtype) + rotated * sin.to(x.dtype)


class Attention(nn.Module):
    def __init__(self, d_model: int, heads: int):
        super().__init__()
        self.heads, self.head_dim = heads, d_model // heads
        self.q = nn.Linear(d_model, d_model, bias=False)
        self.k = nn.Linear(d_model, d_model, bias=False)
        self.v = nn.Linear(d_model, d_model, bias=False)
        self.o = nn.Linear(d_model, d_model, bias=False)

    def forward(self, x, cos, sin, mask):
        b, s, _ = x.shape
        split = lambda t: t.view(b, s, self.heads, self.head_dim).transpose(1, 2)  # noqa: E731
        q, k, v = split(self.q(x)), split(self.k(x)), split(self.v(x))
        q, k = rotate(q, cos, sin), rotate(k, cos, sin)
        scores = (q @ k.transpose(-1, -2)) / math.sqrt(self.head_dim) + mask
        att = torch.softmax(scores.float(), dim=-1).to(q.dtype)
        return self.o((att @ v).transpose(1, 2).reshape(b, s, -1))


class MLP(nn.Module):
    def __init__(self, d_model: int, d_ff: int):
        super().__init__()
        self.gate = nn.Linear(d_model, d_ff, bias=False)
        self.up = nn.Linear(d_model, d_ff, bias=False)
        self.down = nn.Linear(d_ff, d_model, bias=False)

    def forward(self, x):
        return self.down(F.silu(self.gate(x)) * self.up(x))


class Block(nn.Module):
    def __init__(self, d_model: int, heads: int, d_ff: int):
        super().__init__()
        self.norm1, self.attn = RMSNorm(d_model), Attention(d_model, heads)
        self.norm2, self.mlp = RMSNorm(d_model), MLP(d_model, d_ff)

    def forward(self, x, cos, sin, mask):
        x = x + self.attn(self.norm1(x), cos, sin, mask)
        return x + self.mlp(self.norm2(x))


class Llama(nn.Module):
    def __init__(self, vocab: int, d_model: int, heads: int, d_ff: int, layers: int):
        super().__init__()
        self.embed = nn.Embedding(vocab, d_model)
        self.blocks = nn.ModuleList(Block(d_model, heads, d_ff) for _ in range(layers))
        self.norm = RMSNorm(d_model)
        self.head = nn.Linear(d_model, vocab, bias=False)
        self.heads = heads

    def forward(self, tokens):
        s = tokens.shape[1]
        cos, sin = rotary_tables(s, self.embed.embedding_dim // self.heads, tokens.device)
        mask = torch.full((s, s), float("-inf"), device=tokens.device).triu(1)
        x = self.embed(tokens)
        for block in self.blocks:
            x = block(x, cos, sin, mask)
        return self.head(self.norm(x))


GEMM_OPS = ("mm", "addmm", "bmm", "baddbmm", "_addmm_activation")


class CountGemms(TorchDispatchMode):
    """Counts the matrix products (aten mm, addmm, bmm, baddbmm, _addmm_activation) a region
    makes, forward and backward."""

    def __init__(self):
        super().__init__()
        self.count = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if func.overloadpacket.__name__ in GEMM_OPS:
            self.count += 1
        return func(*args, **(kwargs or {}))


def build(args, device="cuda"):
    torch.manual_seed(args.seed)
    model = Llama(args.vocab, args.d_model, args.heads, 4 * args.d_model * 2 // 3 // 64 * 64, args.layers).to(device)
    batches = [torch.randint(0, args.vocab, (args.batch, args.seq + 1), device=device) for _ in range(args.steps)]
    return model, batches


def step(model, opt, tokens):
    """One training step under bf16 autocast: its loss and time (ms)."""
    torch.cuda.synchronize()
    start = time.perf_counter()
    with torch.autocast("cuda", dtype=torch.bfloat16):
        logits = model(tokens[:, :-1])
        loss = F.cross_entropy(logits.float().flatten(0, 1), tokens[:, 1:].flatten())
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    torch.cuda.synchronize()
    return loss.item(), (time.perf_counter() - start) * 1e3


def gemms_per_step(model, tokens) -> int:
    """The matrix products one training step makes on plain PyTorch (on a copy of the model)."""
    probe = copy.deepcopy(model)
    counter = CountGemms()
    with counter, torch.autocast("cuda", dtype=torch.bfloat16):
        logits = probe(tokens[:, :-1])
        F.cross_entropy(logits.float().flatten(0, 1), tokens[:, 1:].flatten()).backward()
    return counter.count


def compare(args):
    """Trains on PyTorch and on cutlass_ops; returns a dict of what the example prints."""
    model, batches = build(args)
    gemms = gemms_per_step(model, batches[0])

    # Two copies from the same weights, stepped in turn (PyTorch, then cutlass_ops, per batch), so
    # both see the same GPU clocks.
    ours = copy.deepcopy(model)
    torch_opt, ours_opt = (torch.optim.AdamW(m.parameters(), lr=1e-3) for m in (model, ours))
    torch_losses, torch_times, ours_losses, ours_times = [], [], [], []
    cutlass_ops.reset_stats()
    for tokens in batches:
        loss, ms = step(model, torch_opt, tokens)
        torch_losses.append(loss)
        torch_times.append(ms)
        with cutlass_ops.use_cutlass():
            loss, ms = step(ours, ours_opt, tokens)
        ours_losses.append(loss)
        ours_times.append(ms)
    stats = cutlass_ops.stats()
    timed = slice(min(2, len(batches) - 1), None)  # the first steps warm up kernels and allocator
    return {
        "torch_losses": torch_losses,
        "cutlass_losses": ours_losses,
        "gemms_per_step": gemms,
        "gemms": gemms * len(batches),
        "cutlass_calls": stats["cutlass"],
        "torch_fallbacks": stats["torch_mm"]["complex"] + stats["torch_mm"]["no_kernel"],
        "no_work": stats["no_work"],
        "torch_step_ms": statistics.median(torch_times[timed]),
        "cutlass_step_ms": statistics.median(ours_times[timed]),
    }


def profile_target(argv=None):
    """(model, inputs) for `python -m cutlass_ops profile examples/llama_training.py:profile_target`."""
    args = parse(argv or [])
    model, batches = build(args)
    return model, (batches[0][:, :-1],)


def parse(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--d-model", type=int, default=1024)
    p.add_argument("--heads", type=int, default=16)
    p.add_argument("--vocab", type=int, default=8192)
    p.add_argument("--seq", type=int, default=512)
    p.add_argument("--batch", type=int, default=4)
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--seed", type=int, default=0)
    return p.parse_args(argv)


def main(argv=None) -> int:
    args = parse(argv)
    if not torch.cuda.is_available():
        print("needs a CUDA GPU", file=sys.stderr)
        return 1
    r = compare(args)
    print(f"Llama-style decoder: {args.layers} layers, d_model {args.d_model}, {args.heads} heads, "
          f"batch {args.batch} x {args.seq} tokens, bf16 autocast, AdamW")
    print("step  loss (PyTorch)  loss (cutlass_ops)")
    for i, (t, o) in enumerate(zip(r["torch_losses"], r["cutlass_losses"])):
        print(f"{i:4d}  {t:14.5f}  {o:18.5f}")
    print(f"matrix products: {r['gemms']} made by the steps, {r['cutlass_calls']} ran on cutlass_ops, "
          f"{r['torch_fallbacks']} handed to torch")
    print(f"step time (median): PyTorch {r['torch_step_ms']:.2f} ms, cutlass_ops {r['cutlass_step_ms']:.2f} ms, "
          f"ratio {r['torch_step_ms'] / r['cutlass_step_ms']:.3f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
