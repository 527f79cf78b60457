// The elementwise epilogue pass's kernel (see epilogue.h, epilogue_kernels.h). Memory-bound: one
// read and one write of D, the bias row from L1/L2. Each thread walks a grid-stride range of
// D's elements.
#include "ops/epilogue_kernels.h"

#include <algorithm>

#include "handwritten/handwritten.cuh"

namespace cutlass_ops {

namespace {

// The formulas of cutlass3x/sm90_gemm.cuh's RuntimeActivation (torch's).
__device__ __forceinline__ float activate(float x, Activation kind) {
  switch (kind) {
    case Activation::kNone: return x;
    case Activation::kReLU: return x <= 0.0f ? 0.0f : x;
    case Activation::kGELU: return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f));
    case Activation::kGELUTanh: {
      const float inner = 0.79788456080286535f * (x + 0.044715f * x * x * x);
      return 0.5f * x * (1.0f + tanhf(inner));
    }
    case Activation::kSiLU: return x / (1.0f + expf(-x));
  }
  return x;
}

// T: the storage type of precision P; its conversions to and from float (round to nearest even,
// as torch's c10::Half and c10::BFloat16) are the hand-written kernels' element traits.
template <Precision P, typename T = typename handwritten::ElementTraits<P>::Element>
__global__ void epilogue_kernel(T* __restrict__ d, int64_t rows, int64_t cols, int64_t stride_row,
                                int64_t stride_col, float alpha, const T* __restrict__ bias, Activation kind) {
  using Traits = handwritten::ElementTraits<P>;
  const int64_t total = rows * cols;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t row = i / cols, col = i - row * cols;
    T* p = d + row * stride_row + col * stride_col;
    float x = alpha * Traits::to_float(*p);
    if (bias != nullptr) x += Traits::to_float(bias[col]);
    *p = Traits::from_float(activate(x, kind));
  }
}

template <Precision P>
cudaError_t launch(void* d, int64_t rows, int64_t cols, int64_t stride_row, int64_t stride_col, float alpha,
                   const void* bias, Activation kind, cudaStream_t stream) {
  const int64_t total = rows * cols;
  constexpr int kThreads = 256;
  constexpr int64_t kMaxBlocks = 4096;  // a few waves on any GPU; the grid-stride loop does the rest
  const int64_t blocks = std::min<int64_t>((total + kThreads - 1) / kThreads, kMaxBlocks);
  using T = typename handwritten::ElementTraits<P>::Element;
  epilogue_kernel<P><<<static_cast<unsigned>(std::max<int64_t>(1, blocks)), kThreads, 0, stream>>>(
      static_cast<T*>(d), rows, cols, stride_row, stride_col, alpha, static_cast<const T*>(bias), kind);
  return cudaGetLastError();
}

}  // namespace

cudaError_t launch_epilogue(Precision element, void* d, int64_t rows, int64_t cols, int64_t stride_row,
                            int64_t stride_col, float alpha, const void* bias, Activation kind, cudaStream_t stream) {
  switch (element) {
    case Precision::kF16:
      return launch<Precision::kF16>(d, rows, cols, stride_row, stride_col, alpha, bias, kind, stream);
    case Precision::kBF16:
      return launch<Precision::kBF16>(d, rows, cols, stride_row, stride_col, alpha, bias, kind, stream);
    case Precision::kF32:
      return launch<Precision::kF32>(d, rows, cols, stride_row, stride_col, alpha, bias, kind, stream);
    default: return cudaErrorInvalidValue;
  }
}

}  // namespace cutlass_ops
