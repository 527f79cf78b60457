// 3xTF32 on Hopper: float32 accuracy from TF32 tensor cores, by splitting the operands first.
//
// Each float x is split into two TF32 values, big = tf32(x) and small = tf32(x - big), and
// D = A B is computed as A_small B_big + A_big B_small + A_big B_big; the small x small term
// lies below float32's rounding. CUTLASS 4.2 has no WGMMA mainloop that splits its operands
// on the fly (its 3xTF32 kernels are SM80 mma.sync ones, about 0.85x torch's float32 at
// 4096^3 on an H100), so here the split comes first. One pass over each operand writes its
// parts side by side along K,
//
//     A3 = [A_small | A_big | A_big]     M x 3K', row-major
//     B3 = [B_big ; B_small ; B_big]     3K' x N, column-major (K-major, as TF32 WGMMA reads it)
//
// (K' = K rounded up to 4 floats, the pad zero, so that rows of 3K' floats keep TMA's 16-byte
// alignment), and one TF32 GEMM over the 3K'-deep problem, D = A3 B3, adds the three products.
// The parts are exact TF32 values, so the tensor cores' truncation of their inputs to TF32
// loses nothing. The GEMM promotes its accumulators into float32 registers every few K steps
// (configs.h, kPromoteKTiles): left to WGMMA's accumulation alone, the error grew with K.
// Because the pass copies anyway, it also takes A and B in any layout and alignment.
//
// Cost: a workspace of 3 (M + N) K' floats (at most three times the operands and the output
// together), two memory-bound passes that read each operand once and write it three times,
// and a GEMM of three times the TF32 work.
#pragma once

#include <climits>
#include <cstdint>

#include "common/operand_pass.cuh"
#include "cutlass3x/sm90_gemm.cuh"

namespace cutlass_ops::sm90 {

namespace presplit {

// The nearest TF32 value (10 explicit mantissa bits), ties away from zero, as
// cvt.rna.tf32.f32 rounds. Inf and NaN pass through; a finite value that would round past
// the largest float is truncated instead, so a finite input never becomes infinite.
__device__ __forceinline__ float round_to_tf32(float x) {
  const uint32_t bits = __float_as_uint(x);
  if ((bits & 0x7f800000u) == 0x7f800000u) return x;
  const uint32_t rounded = (bits + 0x1000u) & 0xffffe000u;
  if ((rounded & 0x7f800000u) == 0x7f800000u) return __uint_as_float(bits & 0xffffe000u);
  return __uint_as_float(rounded);
}

// K rounded up to whole 16-byte groups of floats: each part's width in the parts' rows.
inline int64_t padded_k(int64_t k) { return (k + 3) / 4 * 4; }

// Row r of dst (rows x 3 kp, row-major) gets the three parts of row r of the operand side by
// side, each kp wide (columns k..kp-1 zero): part `small_part` (0 or 1) is the small one, the
// other two the big one.
// An infinite or NaN x goes into part 2 alone (parts 0 and 1 zero): part 2 of A meets only
// part 2 of B, both big, so x enters D once, times the other operand's big part, as through
// a float32 GEMM. Split normally it would also meet the other's small part (inf * 0 = NaN,
// or inf - inf where the parts' signs differ).
struct SplitWriter {
  float* dst;
  int64_t kp;
  int small_part;
  __device__ void operator()(int64_t r, int64_t c, float x) const {
    float* out = dst + r * 3 * kp + c;
    if (isfinite(x)) {
      const float big = round_to_tf32(x);
      const float small = round_to_tf32(x - big);  // x - big is exact
      out[0] = small_part == 0 ? small : big;
      out[kp] = small_part == 1 ? small : big;
      out[2 * kp] = big;
    } else {
      out[0] = out[kp] = 0.0f;
      out[2 * kp] = x;
    }
  }
};

// The pass of OperandPassGemm: A's small part goes first (part 0), B's second (part 1).
struct SplitPass {
  using Element = float;
  static int64_t depth(int64_t k) { return 3 * padded_k(k); }
  static cudaError_t write(const float* src, int64_t rows, int64_t k, int64_t stride_r, int64_t stride_k, float* dst,
                           int operand, cudaStream_t stream) {
    const int64_t kp = padded_k(k);
    return row_pass::run(src, rows, k, kp, stride_r, stride_k, SplitWriter{dst, kp, operand}, stream);
  }
};

}  // namespace presplit

// Registers a TF32 "rc" GEMM (Gemm: Sm90Gemm<Config, kTF32, row, col>, a config that promotes
// its accumulators) as a 3xTF32 kernel for operands of any layout: the split passes above,
// then Gemm on the parts (common/operand_pass.cuh). A config's kernel group registers all four
// layouts with one Gemm type (csrc/generate_kernels.py), so the GEMM is compiled once.
template <class Gemm>
struct Presplit3xTF32 : OperandPassGemm<Gemm, presplit::SplitPass> {
  static_assert(Gemm::kPromoteKTiles > 0, "3xTF32 on WGMMA needs a config that promotes its accumulators");
  using Base = OperandPassGemm<Gemm, presplit::SplitPass>;

  static KernelStatus can_implement(const GemmArgs& g) {
    if (presplit::SplitPass::depth(g.k) > INT_MAX) return {KernelStatus::kNotSupported, "3xTF32 presplit: 3K must fit in 32 bits"};
    return Base::can_implement(g);
  }

  static KernelInfo info(const char* name, Layout layout_a, Layout layout_b) {
    KernelInfo k = Base::info(name, Precision::kTF32x3, layout_a, layout_b);  // only D is written by TMA
    k.can_implement = &can_implement;
    k.pass = OperandPass::kPresplit;
    return k;
  }
};

}  // namespace cutlass_ops::sm90
