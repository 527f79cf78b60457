// Operator registration: schemas, and a kernel for every dispatch key a drop-in torch.mm
// must honour (CUDA, Meta, Autograd, AutocastCUDA), plus CPU kernels that say clearly
// that cutlass_ops runs on CUDA.
#include <ATen/FunctionalTensorWrapper.h>
#include <ATen/autocast_mode.h>
#include <torch/autograd.h>
#include <torch/library.h>

#include "ops/mm.h"
#include "ops/op_handles.h"

namespace cutlass_ops {

namespace {

// ---- Autograd ---------------------------------------------------------------------------
// d(self @ mat2) = grad @ mat2^H for self and self^H @ grad for mat2. The transposes are
// views: the planner turns them into layouts, not copies. Backward runs the same op, so a
// forced kernel name is not carried into backward (its layouts rarely fit the transposes).
//
// Like torch.mm's backward (mm_mat1_backward, mm_mat2_backward in PyTorch's
// FunctionsManual.cpp), an input that was column-major gets a column-major gradient,
// computed as the transposed product: (mat2 @ grad^H)^H rather than grad @ mat2^H. The
// common case is a weight used transposed, x @ w.t(): w.t() is column-major, so its
// gradient comes out column-major, w's gradient is contiguous like w, and autograd's
// accumulation into w.grad need not copy it to w's layout.
class MmFunction : public torch::autograd::Function<MmFunction> {
 public:
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& self, const at::Tensor& mat2,
                            const std::optional<std::string>& kernel) {
    at::AutoDispatchBelowADInplaceOrView below_autograd;
    // Save only what backward will read.
    ctx->save_for_backward({mat2.requires_grad() ? self : at::Tensor(), self.requires_grad() ? mat2 : at::Tensor()});
    ctx->saved_data["self_col_major"] = column_major(self);
    ctx->saved_data["mat2_col_major"] = column_major(mat2);
    return kernel ? op::mm_with_kernel().call(self, mat2, *kernel) : op::mm().call(self, mat2);
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const at::Tensor& self = saved[0];
    const at::Tensor& mat2 = saved[1];
    const at::Tensor& grad = grads[0];
    at::Tensor grad_self, grad_mat2;
    if (ctx->needs_input_grad(0)) {
      grad_self = ctx->saved_data["self_col_major"].toBool() ? op::mm().call(mat2.conj(), grad.t()).t()
                                                              : op::mm().call(grad, mat2.t().conj());
    }
    if (ctx->needs_input_grad(1)) {
      grad_mat2 = ctx->saved_data["mat2_col_major"].toBool() ? op::mm().call(grad.t(), self.conj()).t()
                                                              : op::mm().call(self.t().conj(), grad);
    }
    return {grad_self, grad_mat2, at::Tensor()};
  }

 private:
  // torch's test: strides (1, rows), a dense column-major matrix. Symbolic sizes (torch.compile
  // with dynamic shapes) are compared as torch compares them, with a guard.
  static bool column_major(const at::Tensor& t) {
    return t.sym_stride(0) == 1 && t.sym_stride(1) == t.sym_size(0);
  }
};

bool needs_graph(const at::Tensor& self, const at::Tensor& mat2) {
  return at::GradMode::is_enabled() && (self.requires_grad() || mat2.requires_grad());
}

// Calls that need no graph (inference, no_grad) skip the autograd Function entirely.
at::Tensor mm_autograd(const at::Tensor& self, const at::Tensor& mat2) {
  if (!needs_graph(self, mat2)) {
    at::AutoDispatchBelowADInplaceOrView below_autograd;
    return op::mm().call(self, mat2);
  }
  return MmFunction::apply(self, mat2, std::nullopt);
}

at::Tensor mm_with_kernel_autograd(const at::Tensor& self, const at::Tensor& mat2, c10::string_view kernel) {
  if (!needs_graph(self, mat2)) {
    at::AutoDispatchBelowADInplaceOrView below_autograd;
    return op::mm_with_kernel().call(self, mat2, kernel);
  }
  return MmFunction::apply(self, mat2, std::string(kernel));
}

// out= variants are not differentiable; refuse exactly as torch.mm does.
void check_out_not_differentiable(const at::Tensor& self, const at::Tensor& mat2) {
  TORCH_CHECK(!needs_graph(self, mat2),
              "mm(): functions with out=... arguments don't support automatic differentiation, but one of the "
              "arguments requires grad.");
}

at::Tensor& mm_out_autograd(const at::Tensor& self, const at::Tensor& mat2, at::Tensor& out) {
  check_out_not_differentiable(self, mat2);
  {
    at::AutoDispatchBelowADInplaceOrView below_autograd;
    op::mm_out().call(self, mat2, out);
  }
  torch::autograd::impl::bump_version(out);
  return out;
}

at::Tensor& mm_with_kernel_out_autograd(const at::Tensor& self, const at::Tensor& mat2, c10::string_view kernel,
                                        at::Tensor& out) {
  check_out_not_differentiable(self, mat2);
  {
    at::AutoDispatchBelowADInplaceOrView below_autograd;
    op::mm_with_kernel_out().call(self, mat2, kernel, out);
  }
  torch::autograd::impl::bump_version(out);
  return out;
}

// ---- AutocastCUDA ---------------------------------------------------------------------
// torch.mm's policy, lower_precision_fp: float32 (not float64) CUDA inputs are cast to the
// autocast dtype. out= variants fall through (autocast's default), as in PyTorch.
at::Tensor mm_autocast(const at::Tensor& self, const at::Tensor& mat2) {
  c10::impl::ExcludeDispatchKeyGuard no_autocast(c10::DispatchKey::AutocastCUDA);
  const auto dtype = at::autocast::get_autocast_dtype(at::kCUDA);
  return op::mm().call(at::autocast::cached_cast(dtype, self, c10::DeviceType::CUDA),
                      at::autocast::cached_cast(dtype, mat2, c10::DeviceType::CUDA));
}

at::Tensor mm_with_kernel_autocast(const at::Tensor& self, const at::Tensor& mat2, c10::string_view kernel) {
  c10::impl::ExcludeDispatchKeyGuard no_autocast(c10::DispatchKey::AutocastCUDA);
  const auto dtype = at::autocast::get_autocast_dtype(at::kCUDA);
  return op::mm_with_kernel().call(at::autocast::cached_cast(dtype, self, c10::DeviceType::CUDA),
                                  at::autocast::cached_cast(dtype, mat2, c10::DeviceType::CUDA), kernel);
}

// ---- Functionalize ---------------------------------------------------------------------
// torch.compile functionalizes programs before tracing them. The generic fallback refuses
// custom ops that return an alias of a mutated argument (torch 2.11: "Found a custom (non-ATen)
// operator whose output has alias annotations"), so the out= variants get the kernel that
// torchgen writes for aten's own out= ops: compute the functional result, then make out
// refer to it.
namespace functionalization = at::functionalization::impl;

at::Tensor unwrap_functional(const at::Tensor& t) {
  if (!functionalization::isFunctionalTensor(t)) return t;
  functionalization::sync(t);
  return functionalization::from_functional_tensor(t);
}

template <class Compute, class ComputeInPlace>
at::Tensor& functionalize_out(const at::Tensor& self, const at::Tensor& mat2, at::Tensor& out, Compute compute,
                              ComputeInPlace compute_in_place) {
  check_mm_call(self, mat2, &out);
  const at::Tensor self_ = unwrap_functional(self);
  const at::Tensor mat2_ = unwrap_functional(mat2);
  if (!functionalization::isFunctionalTensor(out)) {
    TORCH_CHECK(!functionalization::isFunctionalTensor(self) && !functionalization::isFunctionalTensor(mat2),
                "cutlass_ops::mm.out: mutating a non-functional tensor with a functional tensor is not allowed");
    at::AutoDispatchSkipFunctionalize skip;
    compute_in_place(self_, mat2_, out);
    return out;
  }
  at::Tensor result;
  {
    at::AutoDispatchSkipFunctionalize skip;
    result = compute(self_, mat2_);
  }
  functionalization::replace_(out, result);
  functionalization::commit_update(out);
  functionalization::sync(out);
  return out;
}

at::Tensor& mm_out_functionalize(const at::Tensor& self, const at::Tensor& mat2, at::Tensor& out) {
  return functionalize_out(
      self, mat2, out, [](const at::Tensor& a, const at::Tensor& b) { return op::mm().call(a, b); },
      [](const at::Tensor& a, const at::Tensor& b, at::Tensor& o) { op::mm_out().call(a, b, o); });
}

at::Tensor& mm_with_kernel_out_functionalize(const at::Tensor& self, const at::Tensor& mat2, c10::string_view kernel,
                                             at::Tensor& out) {
  return functionalize_out(
      self, mat2, out, [&](const at::Tensor& a, const at::Tensor& b) { return op::mm_with_kernel().call(a, b, kernel); },
      [&](const at::Tensor& a, const at::Tensor& b, at::Tensor& o) { op::mm_with_kernel_out().call(a, b, kernel, o); });
}

// ---- CPU: a deliberate difference from torch.mm -----------------------------------------
[[noreturn]] void throw_not_cuda(const at::Tensor& self, const at::Tensor& mat2) {
  TORCH_CHECK(false, "cutlass_ops::mm runs on CUDA tensors; got self on ", self.device(), " and mat2 on ",
              mat2.device(), ". Use torch.mm for CPU tensors.");
}
at::Tensor mm_cpu(const at::Tensor& self, const at::Tensor& mat2) { throw_not_cuda(self, mat2); }
at::Tensor& mm_out_cpu(const at::Tensor& self, const at::Tensor& mat2, at::Tensor&) { throw_not_cuda(self, mat2); }
at::Tensor mm_with_kernel_cpu(const at::Tensor& self, const at::Tensor& mat2, c10::string_view) {
  throw_not_cuda(self, mat2);
}
at::Tensor& mm_with_kernel_out_cpu(const at::Tensor& self, const at::Tensor& mat2, c10::string_view, at::Tensor&) {
  throw_not_cuda(self, mat2);
}

}  // namespace

TORCH_LIBRARY(cutlass_ops, m) {
  m.def("mm(Tensor self, Tensor mat2) -> Tensor");
  m.def("mm.out(Tensor self, Tensor mat2, *, Tensor(a!) out) -> Tensor(a!)");
  m.def("mm_with_kernel(Tensor self, Tensor mat2, str kernel) -> Tensor");
  m.def("mm_with_kernel.out(Tensor self, Tensor mat2, str kernel, *, Tensor(a!) out) -> Tensor(a!)");
}

TORCH_LIBRARY_IMPL(cutlass_ops, CUDA, m) {
  m.impl("mm", &mm_cuda);
  m.impl("mm.out", &mm_out_cuda);
  m.impl("mm_with_kernel", &mm_with_kernel_cuda);
  m.impl("mm_with_kernel.out", &mm_with_kernel_out_cuda);
}

TORCH_LIBRARY_IMPL(cutlass_ops, Meta, m) {
  m.impl("mm", &mm_meta);
  m.impl("mm.out", &mm_out_meta);
  m.impl("mm_with_kernel", &mm_with_kernel_meta);
  m.impl("mm_with_kernel.out", &mm_with_kernel_out_meta);
}

TORCH_LIBRARY_IMPL(cutlass_ops, CPU, m) {
  m.impl("mm", &mm_cpu);
  m.impl("mm.out", &mm_out_cpu);
  m.impl("mm_with_kernel", &mm_with_kernel_cpu);
  m.impl("mm_with_kernel.out", &mm_with_kernel_out_cpu);
}

TORCH_LIBRARY_IMPL(cutlass_ops, Autograd, m) {
  m.impl("mm", &mm_autograd);
  m.impl("mm.out", &mm_out_autograd);
  m.impl("mm_with_kernel", &mm_with_kernel_autograd);
  m.impl("mm_with_kernel.out", &mm_with_kernel_out_autograd);
}

TORCH_LIBRARY_IMPL(cutlass_ops, Functionalize, m) {
  m.impl("mm.out", &mm_out_functionalize);
  m.impl("mm_with_kernel.out", &mm_with_kernel_out_functionalize);
}

TORCH_LIBRARY_IMPL(cutlass_ops, AutocastCUDA, m) {
  m.impl("mm", &mm_autocast);
  m.impl("mm_with_kernel", &mm_with_kernel_autocast);
}

}  // namespace cutlass_ops
