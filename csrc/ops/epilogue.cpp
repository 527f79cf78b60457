// The elementwise epilogue pass (see epilogue.h): checks and dtype dispatch here, the kernel in
// epilogue_kernels.cu.
#include "ops/epilogue.h"

#include <string>

#include <ATen/ATen.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAStream.h>

#include "ops/epilogue_kernels.h"

namespace cutlass_ops {

void epilogue_pass(const at::Tensor& d, double alpha, const at::Tensor& bias, Activation activation) {
  if (d.numel() == 0) return;
  TORCH_INTERNAL_ASSERT(d.dim() == 2 && (!bias.defined() || (bias.is_contiguous() && bias.numel() == d.size(1) &&
                                                              bias.scalar_type() == d.scalar_type())));
  const auto launch = [&](Precision element) {
    C10_CUDA_CHECK(launch_epilogue(element, d.data_ptr(), d.size(0), d.size(1), d.stride(0), d.stride(1),
                                   static_cast<float>(alpha), bias.defined() ? bias.const_data_ptr() : nullptr,
                                   activation, c10::cuda::getCurrentCUDAStream().stream()));
  };
  switch (d.scalar_type()) {
    case at::kHalf: launch(Precision::kF16); break;
    case at::kBFloat16: launch(Precision::kBF16); break;
    case at::kFloat: launch(Precision::kF32); break;
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
