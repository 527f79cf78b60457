"""Run an existing model's training step on cutlass_ops without changing the model.

    python examples/mlp_training_step.py

Same as `python -m cutlass_ops demo`: a residual MLP (matmuls written with `@`) runs forward
and backward under bf16 autocast three ways (plain PyTorch, patched torch.mm/matmul, and
cutlass_ops as aten::mm's CUDA kernel) and prints the difference from plain PyTorch, the
matmuls each mode sent to CUTLASS, and the step time.
"""

import argparse
import sys

from cutlass_ops import demo

if __name__ == "__main__":
    args = argparse.Namespace(dtype="bf16", tokens=4096, d_model=2048, d_ff=8192, layers=4, steps=10)
    sys.exit(demo.main(args))
