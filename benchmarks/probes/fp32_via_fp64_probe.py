"""Can IEEE float32 GEMMs run faster on Hopper's FP64 tensor cores (DMMA) than on its FP32 cores?

An H100's FP64 tensor-core peak (66.9 TFLOP/s) equals its FP32 CUDA-core peak, and cuBLAS's
DGEMM runs closer to its peak than its SGEMM does. A float32 product is exact in float64 (24 +
24 significand bits < 53), so widening A and B to float64, multiplying on DMMA and rounding the
float64 sum to float32 gives a result at least as accurate as an fp32 FMA chain. This probe
times, per problem (torch.mm with TF32 off as the baseline, L2 flushed before each repetition):

  fp32        torch.mm on the float32 operands (cuBLAS SGEMM)
  fp64 mm     torch.mm / cutlass_ops.mm on operands already in float64 (DMMA only)
  widen       A.double() and B.double() together
  pipeline    cutlass_ops.mm(A.double(), B.double()).float(): everything the route costs

and the error of fp32 and of the pipeline against a float64 reference on sampled rows.

    python benchmarks/probes/fp32_via_fp64_probe.py [--shapes MxNxK,...] [--json out.json]
"""

from __future__ import annotations

import argparse
import json

import torch

import cutlass_ops
from cutlass_ops.bench.timing import time_alternating

SHAPES = ["1024x1024x1024", "2048x2048x2048", "4096x4096x4096", "8192x8192x8192", "512x4096x4096",
          "2048x4096x4096", "8192x4096x4096", "128x14336x4096", "512x14336x4096", "2048x14336x4096",
          "8192x14336x4096", "2048x4096x14336", "8192x4096x14336", "2048x128256x4096", "4095x4097x4093"]


def rel_err(c: torch.Tensor, a: torch.Tensor, b: torch.Tensor, rows: torch.Tensor) -> float:
    ref = a[rows].double() @ b.double()
    return float((c[rows].double() - ref).norm() / ref.norm())


def probe(shape: str, rounds: int, rep_ms: float) -> dict:
    """Times and errors for one MxNxK problem (its tensors are freed on return)."""
    m, n, k = (int(x) for x in shape.split("x"))
    g = torch.Generator(device="cuda").manual_seed(0)
    a = torch.randn(m, k, device="cuda", generator=g)
    b = torch.randn(k, n, device="cuda", generator=g)
    a64, b64 = a.double(), b.double()
    fns = [lambda: torch.mm(a, b), lambda: torch.mm(a64, b64), lambda: cutlass_ops.mm(a64, b64),
           lambda: (a.double(), b.double()), lambda: cutlass_ops.mm(a.double(), b.double()).float()]
    t = [x.median_ms * 1e3 for x in time_alternating(fns, rounds=rounds, rep_ms=rep_ms)]
    rows = torch.randperm(m, device="cuda")[:256]
    return dict(problem=shape, fp32_us=t[0], torch64_us=t[1], ours64_us=t[2], widen_us=t[3], pipeline_us=t[4],
                err_fp32=rel_err(torch.mm(a, b), a, b, rows),
                err_pipeline=rel_err(cutlass_ops.mm(a64, b64).float(), a, b, rows))


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--shapes", default=",".join(SHAPES))
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--rep-ms", type=float, default=20.0)
    p.add_argument("--json", default=None)
    args = p.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.set_float32_matmul_precision("highest")
    rows_out = []
    print(f"{'problem':>18} {'fp32 us':>10} {'torch64':>10} {'ours64':>10} {'widen':>8} {'pipeline':>10} "
          f"{'x(pipe)':>8} {'x(ours64)':>9} {'err32':>9} {'err pipe':>9}")
    for shape in args.shapes.split(","):
        r = probe(shape, args.rounds, args.rep_ms)
        rows_out.append(r)
        print(f"{shape:>18} {r['fp32_us']:10.1f} {r['torch64_us']:10.1f} {r['ours64_us']:10.1f} {r['widen_us']:8.1f} "
              f"{r['pipeline_us']:10.1f} {r['fp32_us'] / r['pipeline_us']:8.3f} {r['fp32_us'] / r['ours64_us']:9.3f} "
              f"{r['err_fp32']:9.2e} {r['err_pipeline']:9.2e}", flush=True)
        torch.cuda.empty_cache()
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(device=torch.cuda.get_device_name(), rows=rows_out), f, indent=1)


if __name__ == "__main__":
    main()
