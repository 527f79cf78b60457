"""How cutlass_ops chooses a kernel, shown on four problems, without a GPU.

    python examples/explain_walkthrough.py [--device h100]

`cutlass_ops.explain` plans a call without running it. Given meta tensors (sizes, strides and
storage offsets, no data) and a device preset, it shows what `cutlass_ops.mm` would do on that
GPU: each operand's layout and alignment, every candidate (kernel x K decomposition x operand
copy) with the cost model's predicted time, cheapest first, and why the other kernels are not
candidates. The problems below show the decisions that matter most:

1. a large square product: the big Hopper tiles;
2. F.linear's layout (x @ W.t(), W stored out x in) with an awkward token count (257 rows);
3. a few rows (a decode step): the few-row kernels, split-K;
4. operands with an odd leading dimension: the kernels that take any alignment, or aligned
   copies where those pay.
"""

import argparse

import torch

import cutlass_ops


def meta(rows: int, cols: int, dtype=torch.bfloat16, transposed: bool = False, pad: int = 0) -> torch.Tensor:
    """A rows x cols meta tensor: row-major (leading dim cols + pad), or a transposed view."""
    if transposed:
        return torch.empty(cols, rows + pad, dtype=dtype, device="meta")[:, :rows].t()
    return torch.empty(rows, cols + pad, dtype=dtype, device="meta")[:, :cols]


def show(title: str, a: torch.Tensor, b: torch.Tensor, device: str, candidates: int = 5) -> None:
    plan = cutlass_ops.explain(a, b, device=device)
    m, n, k = plan.problem
    print(f"== {title}: {m}x{n}x{k} {plan.dtype} on {plan.device.name}")
    call = plan.tuning_key  # the operands as given (plan.a / plan.b: as the chosen kernel reads them)
    print(f"   A {call['layout_a']}-major, B {call['layout_b']}-major; aligned to (A, B, out) {tuple(call['align'])} "
          "elements")
    print(f"   runs: {plan.kernel} ({plan.decomposition}" +
          (f" x{plan.splits}" if plan.decomposition == "split-k" else "") +
          (f", {plan.variant}: {plan.a.layout}-major A and {plan.b.layout}-major B copies" if plan.variant != "in-place"
           else "") + ")")
    for c in plan.candidates[:candidates]:
        copy = f", {c.variant}" if c.variant != "in-place" else ""
        print(f"     {c.predicted_us:9.1f} us  {c.kernel} ({c.decomposition}{copy})")
    if len(plan.candidates) > candidates:
        print(f"     ... {len(plan.candidates) - candidates} more candidates")
    print(f"   {len(plan.refused)} kernels are not candidates, e.g. "
          + "; ".join(f"{name}: {why}" for name, why in plan.refused[:1]))
    print()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--device", default="h100", help="a preset (h100, h200, a100, l40s, ...)")
    args = parser.parse_args()

    show("a large square", meta(8192, 8192), meta(8192, 8192), args.device)
    # x @ W.t(): W is stored (out_features, in_features), so B is W's transposed view.
    show("F.linear, 257 tokens", meta(257, 4096), meta(14336, 4096).t(), args.device)
    show("a decode step, 8 rows", meta(8, 4096), meta(4096, 14336), args.device)
    # Leading dims of 4097 and 1001 elements: 2-byte alignment only.
    show("odd leading dims", meta(1000, 4096, pad=1), meta(4096, 1000, pad=1), args.device)
    print("On a GPU, cutlass_ops.explain(a, b) on CUDA tensors plans for that GPU; print(plan) gives the full report.")


if __name__ == "__main__":
    main()
