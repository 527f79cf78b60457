"""`python -m cutlass_ops demo`: a transformer-style MLP, forward and backward under autocast,
run three ways: plain PyTorch (cuBLAS), with torch's matmuls patched to cutlass_ops, and with
cutlass_ops as aten::mm's CUDA kernel. Reports the difference from plain PyTorch, how many
matmuls each mode sent to CUTLASS, and the step time."""

from __future__ import annotations

import statistics
from dataclasses import dataclass

import torch

from . import patch, precisions


class MLP(torch.nn.Module):
    """Pre-norm residual MLP blocks (x + W2 gelu(W1 norm(x))), matmuls written with `@`."""

    def __init__(self, d_model: int, d_ff: int, layers: int):
        super().__init__()
        self.norms = torch.nn.ModuleList(torch.nn.LayerNorm(d_model) for _ in range(layers))
        self.w1 = torch.nn.ParameterList(torch.nn.Parameter(torch.randn(d_ff, d_model) / d_model**0.5)
                                         for _ in range(layers))
        self.w2 = torch.nn.ParameterList(torch.nn.Parameter(torch.randn(d_model, d_ff) / d_ff**0.5)
                                         for _ in range(layers))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for norm, w1, w2 in zip(self.norms, self.w1, self.w2):
            x = x + torch.nn.functional.gelu(norm(x) @ w1.t()) @ w2.t()
        return x


@dataclass
class ModeResult:
    mode: str
    step_ms: float
    max_out_diff: float  # relative to plain PyTorch's output scale
    max_grad_diff: float
    cutlass_calls: int  # per step
    fallbacks: int


def _step(model, x, dtype):
    model.zero_grad(set_to_none=True)
    with torch.autocast("cuda", dtype=dtype):
        out = model(x)
    out.float().square().mean().backward()
    return out.detach().float(), [p.grad.detach().float().clone() for p in model.parameters()]


def run(tokens: int = 4096, d_model: int = 2048, d_ff: int = 8192, layers: int = 4, dtype=torch.bfloat16,
        steps: int = 10) -> list[ModeResult]:
    torch.manual_seed(0)
    model = MLP(d_model, d_ff, layers).cuda()
    x = torch.randn(tokens, d_model, device="cuda")

    modes = {
        "torch (cuBLAS)": None,
        "patched torch.mm/matmul": lambda: patch.patched(matmul=True),
        "dispatcher (aten::mm)": patch.use_cutlass,
    }
    results, reference = [], None
    for mode, context in modes.items():
        with (context() if context else _null()):
            patch.reset_stats()
            out, grads = _step(model, x, dtype)
            calls, fallbacks = patch.stats()["cutlass"], patch.stats()["patch_fallbacks"]
            times = []
            for _ in range(steps):
                start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                start.record()
                _step(model, x, dtype)
                end.record()
                torch.cuda.synchronize()
                times.append(start.elapsed_time(end))
        if reference is None:
            reference = (out, grads)
        ref_out, ref_grads = reference
        out_diff = ((out - ref_out).abs().max() / ref_out.abs().max()).item()
        grad_diff = max(((g - r).abs().max() / r.abs().max().clamp_min(1e-30)).item() for g, r in zip(grads, ref_grads))
        results.append(ModeResult(mode, statistics.median(times), out_diff, grad_diff, calls, fallbacks))
    return results


class _null:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def main(args) -> int:
    if not torch.cuda.is_available():
        import sys
        print("demo needs a CUDA device", file=sys.stderr)
        return 2
    dtype = precisions.torch_dtype(args.dtype)
    results = run(tokens=args.tokens, d_model=args.d_model, d_ff=args.d_ff, layers=args.layers, dtype=dtype,
                  steps=args.steps)
    print(f"MLP: {args.layers} blocks, d_model {args.d_model}, d_ff {args.d_ff}, {args.tokens} tokens, "
          f"autocast {args.dtype}, forward + backward")
    print(f"{'mode':<26} {'step ms':>9} {'max out diff':>13} {'max grad diff':>14} {'cutlass calls':>14} "
          f"{'fallbacks':>10}")
    for r in results:
        print(f"{r.mode:<26} {r.step_ms:>9.3f} {r.max_out_diff:>13.2e} {r.max_grad_diff:>14.2e} "
              f"{r.cutlass_calls:>14} {r.fallbacks:>10}")
    return 0
