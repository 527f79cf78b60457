// IEEE float32 on Hopper's FP64 tensor cores, widened in registers: the warp-level piece.
//
// CUTLASS 2.x's multistage kernel copies float operands into shared memory as they are (the
// TF32 kernels' layouts and ldmatrix iterators: 16-byte cp.async, no conversion). Each warp
// then loads its fragments as for TF32's mma.m16n8k8, whose register layout DMMA's
// m16n8k8.f64 shares (a0..a3 at rows g, g + 8 and columns t, t + 4; b0, b1 at rows t, t + 4),
// widens them to float64 (exact) in MmaTensorOp::transform(), once per fragment, and issues
// the float64 MMA. The sums stay in float64 and the epilogue rounds each result to float32
// once. The product of two floats is exact in float64 (24 + 24 significand bits < 53), so each
// result is at least as accurate as a float32 FMA chain gives; measured about 40x closer to
// the float64 product than torch's fp32 GEMM (2.5e-8 against 1.1e-6 at 4096^3). Inf and NaN
// propagate as in float32 arithmetic; a partial sum that would overflow float32 does not, so
// a finite result is returned where a float32 chain could overflow on the way (results beyond
// float32's range are infinite, as there). An earlier design widened the operands by a pass
// each into a float64 workspace (8 (M + N) K bytes) before a float64 GEMM; this one needs
// neither, and measured 5-15% faster (RESULTS.md at 824ebc1, 2026-11-23, "IEEE float32 widened in registers").
//
// This is the pattern of CUTLASS's own OpMultiplyAddFastBF16 (float operands, bfloat16
// instructions; warp/default_mma_tensor_op_sm80.h): a math-operator tag that the threadblock
// templates pass through to DefaultMmaTensorOp, specialised here for it.
#pragma once

#include "cutlass/arch/mma_sm90.h"
#include "cutlass/gemm/warp/default_mma_tensor_op.h"
#include "cutlass/gemm/warp/mma_tensor_op.h"

namespace cutlass_ops::sm80 {

// Math-operator tag: float operands, float64 DMMA (sm_90a), float64 accumulators.
struct OpMultiplyAddF32OnF64 {};

}  // namespace cutlass_ops::sm80

namespace cutlass::gemm::warp {

template <typename WarpShape, typename LayoutA, typename LayoutB, typename LayoutC, int PartitionsK,
          bool AccumulatorsInRowMajor>
struct DefaultMmaTensorOp<WarpShape, GemmShape<16, 8, 8>, float, LayoutA, float, LayoutB, double, LayoutC,
                          cutlass_ops::sm80::OpMultiplyAddF32OnF64, PartitionsK, AccumulatorsInRowMajor> {
  // Hopper's DMMA.16x8x8 (cutlass/arch/mma_sm90.h). MmaTensorOp converts the float fragments
  // to this instruction's element type, double, in transform().
  using Policy = MmaTensorOpPolicy<
      arch::Mma<GemmShape<16, 8, 8>, 32, double, layout::RowMajor, double, layout::ColumnMajor, double,
                layout::RowMajor, arch::OpMultiplyAdd>,
      MatrixShape<1, 1>>;
  using Type = MmaTensorOp<WarpShape, float, LayoutA, float, LayoutB, double, LayoutC, Policy, PartitionsK,
                           AccumulatorsInRowMajor>;
};

}  // namespace cutlass::gemm::warp
