// IEEE float32 on Hopper's FP64 tensor cores: widen the operands to float64, multiply on DMMA,
// round each result to float32 once.
//
// An H100's FP64 tensor-core peak (66.9 TFLOP/s) equals its FP32 CUDA-core peak, and a DMMA
// GEMM runs nearer its peak than any SIMT one: measured (benchmarks/fp32_via_fp64_probe.py,
// H100, thirteenth session) cuBLAS's DGEMM took 17.7 ms at 8192^3 where its SGEMM took 21.4.
// The product of two floats is exact in float64 (24 + 24 significand bits < 53), so
//
//     A64 = (double) A      M x K, row-major
//     B64 = (double) B      K x N, column-major (K-major, as A64)
//     D = (float) (A64 B64)
//
// sums exact products in float64 and rounds once: each result is at least as accurate as an
// float32 FMA chain gives, in practice about 40x closer to the float64 product (relative error
// 2.5e-8 against torch's 1.1e-6 at 4096^3). Inf and NaN propagate as in float32 arithmetic; a
// partial sum that would overflow float32 does not, so a finite result is returned where a
// float32 chain could overflow on the way (float32 results beyond its range are infinite,
// as there).
//
// Cost: a workspace of 8 (M + N) K bytes, one memory-bound pass per operand (read 4 bytes,
// write 8 per element; common/operand_pass.cuh, which takes A and B in any layout and alignment),
// and the float64 GEMM. The passes grow against the GEMM as 1/M + 1/N, so the route pays
// on large problems only (dispatch/heuristic.cpp).
#pragma once

#include <cstdint>

#include "common/operand_pass.cuh"
#include "cutlass2x/sm80_gemm.cuh"

namespace cutlass_ops::sm80 {

namespace widen {

// Row r of dst (rows x k, row-major) = row r of the operand in float64 (exact).
struct WidenWriter {
  double* dst;
  int64_t k;
  __device__ void operator()(int64_t r, int64_t c, float x) const { dst[r * k + c] = static_cast<double>(x); }
};

// The pass of OperandPassGemm.
struct WidenPass {
  using Element = double;
  static int64_t depth(int64_t k) { return k; }
  static cudaError_t write(const float* src, int64_t rows, int64_t k, int64_t stride_r, int64_t stride_k, double* dst,
                           int /*operand*/, cudaStream_t stream) {
    return row_pass::run(src, rows, k, k, stride_r, stride_k, WidenWriter{dst, k}, stream);
  }
};

}  // namespace widen

// Registers a float64 "rc" GEMM that stores float (Gemm: Sm80Gemm<Config, kF64, row, col, 1,
// float>) as an IEEE float32 kernel for operands of any layout: the widening passes above, then
// Gemm on the widened copies (common/operand_pass.cuh). One translation unit per config
// registers all four layouts (csrc/generate_kernels.py), so the GEMM is compiled once.
template <class Gemm>
struct WidenedF32 : OperandPassGemm<Gemm, widen::WidenPass> {
  static KernelInfo info(const char* name, Layout layout_a, Layout layout_b) {
    KernelInfo k = OperandPassGemm<Gemm, widen::WidenPass>::info(name, Precision::kF32, layout_a, layout_b);
    k.align_d = 1;  // the SIMT-like epilogue stores a float at a time
    // Data-parallel, and stream-K where the GEMM has it (partial tiles meet in float64 in its
    // workspace). Not CUTLASS 2.x's serial split-K: its slices would meet in D, in float32.
    k.decompositions = decomposition_bit(Decomposition::kDataParallel) |
                       (Gemm::kStreamK ? decomposition_bit(Decomposition::kStreamK) : 0);
    return k;
  }
};

}  // namespace cutlass_ops::sm80
