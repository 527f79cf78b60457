// cutlass_ops::matmul: torch.matmul over cutlass_ops::mm and cutlass_ops::bmm.
#pragma once

#include <ATen/core/Tensor.h>

namespace cutlass_ops {

// A composite (CompositeImplicitAutograd) kernel: it calls cutlass_ops::mm and cutlass_ops::bmm
// through the dispatcher, so their autograd, autocast and meta kernels serve it.
at::Tensor matmul_composite(const at::Tensor& self, const at::Tensor& other);

}  // namespace cutlass_ops
