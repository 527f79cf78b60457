// The epilogue of linear and addmm as its own elementwise pass, for the kernels that do not
// fuse it (KernelInfo::fuses_epilogue): D = activation(alpha * D + bias), in place, in float.
// The fused kernels compute the same formula on the float accumulator before rounding D once;
// this pass rounds twice (the product, then the result), as torch does when its own addmm
// cannot use cuBLASLt's fused epilogue.
#pragma once

#include <optional>

#include <ATen/core/Tensor.h>

#include "dispatch/types.h"

namespace cutlass_ops {

// d: M x N, any strides, on the current device; bias: N contiguous elements of d's dtype, or
// undefined. Runs on the current stream.
void epilogue_pass(const at::Tensor& d, double alpha, const at::Tensor& bias, Activation activation);

// torch's name for an activation ("relu", "gelu", "gelu_tanh", "silu"; "none" or an empty
// string for none); ValueError naming the choices for anything else.
Activation parse_activation(std::string_view name);

}  // namespace cutlass_ops
