// cutlass_ops::addmm (torch.addmm), cutlass_ops::baddbmm (torch.baddbmm) and cutlass_ops::linear
// (F.linear with a fused activation):
// a product with an epilogue (ops/mm.h). Also aten::addmm's and aten::_addmm_activation's CUDA
// kernels in dispatcher mode (ops/aten_override.h).
#pragma once

#include <optional>

#include <ATen/core/Tensor.h>

namespace cutlass_ops {

at::Tensor addmm_cuda(const at::Tensor& input, const at::Tensor& mat1, const at::Tensor& mat2,
                      const at::Scalar& beta, const at::Scalar& alpha);
at::Tensor& addmm_out_cuda(const at::Tensor& input, const at::Tensor& mat1, const at::Tensor& mat2,
                           const at::Scalar& beta, const at::Scalar& alpha, at::Tensor& out);
at::Tensor addmm_meta(const at::Tensor& input, const at::Tensor& mat1, const at::Tensor& mat2,
                      const at::Scalar& beta, const at::Scalar& alpha);
at::Tensor& addmm_out_meta(const at::Tensor& input, const at::Tensor& mat1, const at::Tensor& mat2,
                           const at::Scalar& beta, const at::Scalar& alpha, at::Tensor& out);

// aten::_addmm_activation: act(beta * input + alpha * mat1 @ mat2), act = relu or, with
// use_gelu, tanh-approximated GELU.
at::Tensor addmm_activation_cuda(const at::Tensor& input, const at::Tensor& mat1, const at::Tensor& mat2,
                                 const at::Scalar& beta, const at::Scalar& alpha, bool use_gelu);
at::Tensor& addmm_activation_out_cuda(const at::Tensor& input, const at::Tensor& mat1, const at::Tensor& mat2,
                                      const at::Scalar& beta, const at::Scalar& alpha, bool use_gelu, at::Tensor& out);

// cutlass_ops::baddbmm (torch.baddbmm): beta * input + alpha * (batch1 @ batch2), input
// broadcast to B x M x N; the batched product on cutlass_ops::bmm's kernels.
at::Tensor baddbmm_cuda(const at::Tensor& input, const at::Tensor& batch1, const at::Tensor& batch2,
                        const at::Scalar& beta, const at::Scalar& alpha);
at::Tensor& baddbmm_out_cuda(const at::Tensor& input, const at::Tensor& batch1, const at::Tensor& batch2,
                             const at::Scalar& beta, const at::Scalar& alpha, at::Tensor& out);
at::Tensor baddbmm_meta(const at::Tensor& input, const at::Tensor& batch1, const at::Tensor& batch2,
                        const at::Scalar& beta, const at::Scalar& alpha);
at::Tensor& baddbmm_out_meta(const at::Tensor& input, const at::Tensor& batch1, const at::Tensor& batch2,
                             const at::Scalar& beta, const at::Scalar& alpha, at::Tensor& out);
// torch.baddbmm's argument checks, raising torch's own errors.
void check_baddbmm_call(const at::Tensor& input, const at::Tensor& batch1, const at::Tensor& batch2,
                        const at::Scalar& beta, const at::Scalar& alpha, const at::Tensor* out);

// activation: "none", "relu", "gelu", "gelu_tanh" or "silu".
at::Tensor linear_cuda(const at::Tensor& input, const at::Tensor& weight, const std::optional<at::Tensor>& bias,
                       c10::string_view activation);
at::Tensor linear_meta(const at::Tensor& input, const at::Tensor& weight, const std::optional<at::Tensor>& bias,
                       c10::string_view activation);

}  // namespace cutlass_ops
