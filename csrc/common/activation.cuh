// The activations of the fused epilogues (EpilogueArgs::activation: D = activation(alpha * A @ B
// + bias)), in float on the device, shared by the CUTLASS 3.x builds (cutlass3x/sm90_gemm.cuh,
// through CUTLASS's epilogue visitor) and the hand-written TMA + WGMMA kernel
// (handwritten/gemm_6_wgmma_tma_sm90.cu, on its accumulators before they are stored).
//
// The formulas are torch's (aten/src/ATen/native/cuda/ActivationGeluKernel.cu,
// ActivationSiluKernel.cu), in float, with the hardware's approximate tanh and exp2 (MUFU,
// relative error about 2^-11 and 2^-22) and a fast reciprocal where torch calls tanhf, expf and
// divides: the fused kernels store 16-bit D, whose rounding (2^-9 for bf16, 2^-12 for f16) is as
// large or larger. The elementwise pass after kernels without a fused epilogue (ops/epilogue_kernels.cu)
// computes the same formulas with tanhf and expf.
#pragma once

#include "dispatch/types.h"

namespace cutlass_ops {

struct ActivationMath {
  __device__ __forceinline__ static float tanh_approx(float x) {
    float y;
    asm("tanh.approx.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
  }
  __device__ __forceinline__ static float identity(float x) { return x; }
  __device__ __forceinline__ static float relu(float x) { return x <= 0.0f ? 0.0f : x; }  // NaN stays NaN, as in torch.relu
  __device__ __forceinline__ static float gelu(float x) { return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f)); }
  __device__ __forceinline__ static float gelu_tanh(float x) {
    return 0.5f * x * (1.0f + tanh_approx(0.79788456080286535f * fmaf(0.044715f * x, x * x, x)));
  }
  __device__ __forceinline__ static float silu(float x) { return __fdividef(x, 1.0f + exp2f(-1.4426950408889634f * x)); }

  // visit(fn) with the activation's function: one switch, then code specialised to it (a
  // fragment or a tile of accumulators runs without a branch per element).
  template <class Visit>
  __device__ __forceinline__ static auto with(Activation kind, Visit visit) {
    switch (kind) {
      case Activation::kReLU: return visit(relu);
      case Activation::kGELU: return visit(gelu);
      case Activation::kGELUTanh: return visit(gelu_tanh);
      case Activation::kSiLU: return visit(silu);
      case Activation::kNone: break;
    }
    return visit(identity);
  }
};

}  // namespace cutlass_ops
