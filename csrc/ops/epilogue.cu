// The elementwise epilogue pass (see epilogue.h). Memory-bound: one read and one write of D,
// the bias row from L1/L2. Each thread walks a grid-stride range of D's elements.
#include "ops/epilogue.h"

#include <algorithm>
#include <cstdint>
#include <string>

#include <ATen/ATen.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAStream.h>
#include <c10/util/BFloat16.h>
#include <c10/util/Half.h>

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

template <typename T>
__global__ void epilogue_kernel(T* __restrict__ d, int64_t rows, int64_t cols, int64_t stride_row,
                                int64_t stride_col, float alpha, const T* __restrict__ bias, Activation kind) {
  const int64_t total = rows * cols;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t row = i / cols, col = i - row * cols;
    T* p = d + row * stride_row + col * stride_col;
    float x = alpha * static_cast<float>(*p);
    if (bias != nullptr) x += static_cast<float>(bias[col]);
    *p = static_cast<T>(activate(x, kind));
  }
}

template <typename T>
void launch(const at::Tensor& d, float alpha, const at::Tensor& bias, Activation kind) {
  const int64_t total = d.numel();
  constexpr int kThreads = 256;
  constexpr int64_t kMaxBlocks = 4096;  // a few waves on any GPU; the grid-stride loop does the rest
  const int64_t blocks = std::min<int64_t>((total + kThreads - 1) / kThreads, kMaxBlocks);
  epilogue_kernel<T><<<static_cast<unsigned>(std::max<int64_t>(1, blocks)), kThreads, 0,
                       c10::cuda::getCurrentCUDAStream().stream()>>>(
      d.data_ptr<T>(), d.size(0), d.size(1), d.stride(0), d.stride(1), alpha,
      bias.defined() ? bias.const_data_ptr<T>() : nullptr, kind);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

}  // namespace

void epilogue_pass(const at::Tensor& d, double alpha, const at::Tensor& bias, Activation activation) {
  if (d.numel() == 0) return;
  TORCH_INTERNAL_ASSERT(d.dim() == 2 && (!bias.defined() || (bias.is_contiguous() && bias.numel() == d.size(1) &&
                                                              bias.scalar_type() == d.scalar_type())));
  switch (d.scalar_type()) {
    case at::kHalf: launch<c10::Half>(d, static_cast<float>(alpha), bias, activation); break;
    case at::kBFloat16: launch<c10::BFloat16>(d, static_cast<float>(alpha), bias, activation); break;
    case at::kFloat: launch<float>(d, static_cast<float>(alpha), bias, activation); break;
    case at::kDouble: {
      // float64 keeps its precision: torch's own ops, in double.
      if (alpha != 1.0) d.mul_(alpha);
      if (bias.defined()) d.add_(bias);
      switch (activation) {
        case Activation::kNone: break;
        case Activation::kReLU: d.relu_(); break;
        case Activation::kGELU: d.copy_(at::gelu(d)); break;
        case Activation::kGELUTanh: d.copy_(at::gelu(d, "tanh")); break;
        case Activation::kSiLU: d.copy_(at::silu(d)); break;
      }
      break;
    }
    default: TORCH_INTERNAL_ASSERT(false, "epilogue_pass: unexpected dtype ", d.scalar_type());
  }
}

Activation parse_activation(std::string_view name) {
  if (name.empty() || name == "none") return Activation::kNone;
  if (name == "relu") return Activation::kReLU;
  if (name == "gelu") return Activation::kGELU;
  if (name == "gelu_tanh") return Activation::kGELUTanh;
  if (name == "silu") return Activation::kSiLU;
  TORCH_CHECK_VALUE(false, "cutlass_ops: unknown activation '", std::string(name),
                    "'; choose one of None, 'relu', 'gelu', 'gelu_tanh', 'silu'");
}

}  // namespace cutlass_ops
