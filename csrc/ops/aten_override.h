// cutlass_ops as the CUDA kernel of aten::mm, aten::addmm, aten::_addmm_activation, aten::bmm and
// aten::baddbmm (and their out= overloads), so that `@`, torch.matmul, F.linear, nn.Linear,
// attention's batched products and C++ callers reach CUTLASS too; autograd and autocast stay
// PyTorch's own (they sit above the CUDA key). Problems cutlass_ops does not take go to
// torch's own CUDA kernel (at::cuda::mm, at::cuda::bmm, ...), never back through the dispatcher.
#pragma once

namespace cutlass_ops {

void set_aten_override(bool enabled);
bool aten_override_enabled();

}  // namespace cutlass_ops
