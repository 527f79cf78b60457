// Operator registration: schemas, and a kernel for every dispatch key a drop-in torch.mm
// must honour (CUDA, Meta, Autograd, AutocastCUDA), plus CPU kernels that say clearly
// that cutlass_ops runs on CUDA.
#include <ATen/FunctionalTensorWrapper.h>
#include <ATen/autocast_mode.h>
#include <torch/autograd.h>
#include <torch/library.h>

#include "ops/addmm.h"
#include "ops/epilogue.h"
#include "ops/matmul.h"
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

bool needs_graph(const at::Tensor& a, const at::Tensor& b, const std::optional<at::Tensor>& c) {
  return needs_graph(a, b) || (at::GradMode::is_enabled() && c && c->defined() && c->requires_grad());
}

// d(beta * input + alpha * A @ B) for addmm (matrices) and baddbmm (batches of them): input's
// gradient summed over the dims it was broadcast along (torch's maybe_multiply and sum_to), A's
// and B's as in mm (bmm), times alpha. `Product` names the op, its out= overload, the product
// its backward runs and the transpose of one matrix (of each matrix of a batch).
struct AddmmProduct {
  static constexpr const char* kName = "addmm";
  static const auto& op() { return op::addmm(); }
  static const auto& op_out() { return op::addmm_out(); }
  static at::Tensor product(const at::Tensor& a, const at::Tensor& b) { return op::mm().call(a, b); }
  static at::Tensor transpose(const at::Tensor& t) { return t.t(); }
};
struct BaddbmmProduct {
  static constexpr const char* kName = "baddbmm";
  static const auto& op() { return op::baddbmm(); }
  static const auto& op_out() { return op::baddbmm_out(); }
  static at::Tensor product(const at::Tensor& a, const at::Tensor& b) { return op::bmm().call(a, b); }
  static at::Tensor transpose(const at::Tensor& t) { return t.transpose(1, 2); }
};

template <class Product>
class AddProductFunction : public torch::autograd::Function<AddProductFunction<Product>> {
 public:
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& input, const at::Tensor& a,
                            const at::Tensor& b, const at::Scalar& beta, const at::Scalar& alpha) {
    at::AutoDispatchBelowADInplaceOrView below_autograd;
    ctx->save_for_backward({b.requires_grad() ? a : at::Tensor(), a.requires_grad() ? b : at::Tensor()});
    ctx->saved_data["input_sizes"] = input.sym_sizes().vec();
    ctx->saved_data["beta"] = beta;
    ctx->saved_data["alpha"] = alpha;
    return Product::op().call(input, a, b, beta, alpha);
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const at::Tensor& grad = grads[0];
    const at::Scalar beta = ctx->saved_data["beta"].toScalar();
    const at::Scalar alpha = ctx->saved_data["alpha"].toScalar();
    const auto scaled = [](const at::Tensor& t, const at::Scalar& s) { return s.equal(1) ? t : t * s; };
    at::Tensor grad_input, grad_a, grad_b;
    if (ctx->needs_input_grad(0)) {
      grad_input = at::sum_to(scaled(grad, beta), ctx->saved_data["input_sizes"].toSymIntVector());
    }
    if (ctx->needs_input_grad(1)) grad_a = scaled(Product::product(grad, Product::transpose(saved[1]).conj()), alpha);
    if (ctx->needs_input_grad(2)) grad_b = scaled(Product::product(Product::transpose(saved[0]).conj(), grad), alpha);
    return {grad_input, grad_a, grad_b, at::Tensor(), at::Tensor()};
  }
};

template <class Product>
at::Tensor add_product_autograd(const at::Tensor& input, const at::Tensor& a, const at::Tensor& b,
                                const at::Scalar& beta, const at::Scalar& alpha) {
  if (!needs_graph(a, b, input)) {
    at::AutoDispatchBelowADInplaceOrView below_autograd;
    return Product::op().call(input, a, b, beta, alpha);
  }
  return AddProductFunction<Product>::apply(input, a, b, beta, alpha);
}

template <class Product>
at::Tensor& add_product_out_autograd(const at::Tensor& input, const at::Tensor& a, const at::Tensor& b,
                                     const at::Scalar& beta, const at::Scalar& alpha, at::Tensor& out) {
  TORCH_CHECK(!needs_graph(a, b, input), Product::kName,
              "(): functions with out=... arguments don't support automatic differentiation, but one of the "
              "arguments requires grad.");
  {
    at::AutoDispatchBelowADInplaceOrView below_autograd;
    Product::op_out().call(input, a, b, beta, alpha, out);
  }
  torch::autograd::impl::bump_version(out);
  return out;
}

// The activation's derivative at its input z, times grad: torch's own backward kernels.
at::Tensor activation_backward(const at::Tensor& grad, const at::Tensor& z, Activation activation) {
  switch (activation) {
    case Activation::kNone: return grad;
    case Activation::kReLU: return at::threshold_backward(grad, z, 0);
    case Activation::kGELU: return at::gelu_backward(grad, z, "none");
    case Activation::kGELUTanh: return at::gelu_backward(grad, z, "tanh");
    case Activation::kSiLU: return at::silu_backward(grad, z);
  }
  return grad;
}

at::Tensor activation_forward(const at::Tensor& z, Activation activation) {
  switch (activation) {
    case Activation::kNone: return z;
    case Activation::kReLU: return at::relu(z);
    case Activation::kGELU: return at::gelu(z, "none");
    case Activation::kGELUTanh: return at::gelu(z, "tanh");
    case Activation::kSiLU: return at::silu(z);
  }
  return z;
}

// y = act(input @ weight^T + bias). Training keeps z = input @ weight^T + bias for the
// activation's derivative: the forward runs the product with the bias fused, then the
// activation as its own op (the fully fused kernel serves inference and no_grad).
class LinearFunction : public torch::autograd::Function<LinearFunction> {
 public:
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& input, const at::Tensor& weight,
                            const std::optional<at::Tensor>& bias, c10::string_view activation_name) {
    at::AutoDispatchBelowADInplaceOrView below_autograd;
    const Activation activation =
        parse_activation(std::string_view(activation_name.data(), activation_name.size()));
    const at::Tensor z = op::linear().call(input, weight, bias, "none");
    ctx->save_for_backward({weight.requires_grad() ? input : at::Tensor(), input.requires_grad() ? weight : at::Tensor(),
                            activation == Activation::kNone ? at::Tensor() : z});
    ctx->saved_data["activation"] = static_cast<int64_t>(activation);
    ctx->saved_data["bias_sizes"] = bias && bias->defined() ? bias->sym_sizes().vec() : std::vector<c10::SymInt>{};
    return activation_forward(z, activation);
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const at::Tensor &input = saved[0], &weight = saved[1], &z = saved[2];
    const auto activation = static_cast<Activation>(ctx->saved_data["activation"].toInt());
    const at::Tensor grad_z = activation_backward(grads[0], z, activation);
    const c10::SymInt out_features = grad_z.sym_size(-1);
    const at::Tensor grad_rows = grad_z.reshape_symint({-1, out_features});
    at::Tensor grad_input, grad_weight, grad_bias;
    if (ctx->needs_input_grad(0)) {
      grad_input = op::mm().call(grad_rows, weight.conj()).reshape_symint(input_sizes(grad_z, weight));
    }
    if (ctx->needs_input_grad(1)) {
      grad_weight = op::mm().call(grad_rows.t(), input.reshape_symint({-1, input.sym_size(-1)}).conj());
    }
    if (ctx->needs_input_grad(2)) grad_bias = at::sum_to(grad_rows, ctx->saved_data["bias_sizes"].toSymIntVector());
    return {grad_input, grad_weight, grad_bias, at::Tensor()};
  }

 private:
  // The input's shape: grad's leading dims and the weight's in_features.
  static std::vector<c10::SymInt> input_sizes(const at::Tensor& grad_z, const at::Tensor& weight) {
    std::vector<c10::SymInt> sizes = grad_z.sym_sizes().vec();
    sizes.back() = weight.sym_size(1);
    return sizes;
  }
};

at::Tensor linear_autograd(const at::Tensor& input, const at::Tensor& weight, const std::optional<at::Tensor>& bias,
                           c10::string_view activation) {
  if (!needs_graph(input, weight, bias)) {
    at::AutoDispatchBelowADInplaceOrView below_autograd;
    return op::linear().call(input, weight, bias, activation);
  }
  return LinearFunction::apply(input, weight, bias, activation);
}

// d(self @ mat2) per matrix of the batch: grad @ mat2^H for self, self^H @ grad for mat2 (the
// transposes are views the planner reads as layouts).
class BmmFunction : public torch::autograd::Function<BmmFunction> {
 public:
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& self, const at::Tensor& mat2) {
    at::AutoDispatchBelowADInplaceOrView below_autograd;
    ctx->save_for_backward({mat2.requires_grad() ? self : at::Tensor(), self.requires_grad() ? mat2 : at::Tensor()});
    return op::bmm().call(self, mat2);
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const at::Tensor& grad = grads[0];
    at::Tensor grad_self, grad_mat2;
    if (ctx->needs_input_grad(0)) grad_self = op::bmm().call(grad, saved[1].transpose(1, 2).conj());
    if (ctx->needs_input_grad(1)) grad_mat2 = op::bmm().call(saved[0].transpose(1, 2).conj(), grad);
    return {grad_self, grad_mat2};
  }
};

at::Tensor bmm_autograd(const at::Tensor& self, const at::Tensor& mat2) {
  if (!needs_graph(self, mat2)) {
    at::AutoDispatchBelowADInplaceOrView below_autograd;
    return op::bmm().call(self, mat2);
  }
  return BmmFunction::apply(self, mat2);
}

at::Tensor& bmm_out_autograd(const at::Tensor& self, const at::Tensor& mat2, at::Tensor& out) {
  TORCH_CHECK(!needs_graph(self, mat2),
              "bmm(): functions with out=... arguments don't support automatic differentiation, but one of the "
              "arguments requires grad.");
  {
    at::AutoDispatchBelowADInplaceOrView below_autograd;
    op::bmm_out().call(self, mat2, out);
  }
  torch::autograd::impl::bump_version(out);
  return out;
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

at::Tensor addmm_autocast(const at::Tensor& input, const at::Tensor& mat1, const at::Tensor& mat2,
                          const at::Scalar& beta, const at::Scalar& alpha) {
  c10::impl::ExcludeDispatchKeyGuard no_autocast(c10::DispatchKey::AutocastCUDA);
  const auto dtype = at::autocast::get_autocast_dtype(at::kCUDA);
  const auto cast = [&](const at::Tensor& t) { return at::autocast::cached_cast(dtype, t, c10::DeviceType::CUDA); };
  return op::addmm().call(cast(input), cast(mat1), cast(mat2), beta, alpha);
}

at::Tensor linear_autocast(const at::Tensor& input, const at::Tensor& weight, const std::optional<at::Tensor>& bias,
                           c10::string_view activation) {
  c10::impl::ExcludeDispatchKeyGuard no_autocast(c10::DispatchKey::AutocastCUDA);
  const auto dtype = at::autocast::get_autocast_dtype(at::kCUDA);
  const auto cast = [&](const at::Tensor& t) { return at::autocast::cached_cast(dtype, t, c10::DeviceType::CUDA); };
  std::optional<at::Tensor> cast_bias;
  if (bias && bias->defined()) cast_bias = cast(*bias);
  return op::linear().call(cast(input), cast(weight), cast_bias, activation);
}

at::Tensor bmm_autocast(const at::Tensor& self, const at::Tensor& mat2) {
  c10::impl::ExcludeDispatchKeyGuard no_autocast(c10::DispatchKey::AutocastCUDA);
  const auto dtype = at::autocast::get_autocast_dtype(at::kCUDA);
  return op::bmm().call(at::autocast::cached_cast(dtype, self, c10::DeviceType::CUDA),
                       at::autocast::cached_cast(dtype, mat2, c10::DeviceType::CUDA));
}

at::Tensor baddbmm_autocast(const at::Tensor& input, const at::Tensor& batch1, const at::Tensor& batch2,
                            const at::Scalar& beta, const at::Scalar& alpha) {
  c10::impl::ExcludeDispatchKeyGuard no_autocast(c10::DispatchKey::AutocastCUDA);
  const auto dtype = at::autocast::get_autocast_dtype(at::kCUDA);
  const auto cast = [&](const at::Tensor& t) { return at::autocast::cached_cast(dtype, t, c10::DeviceType::CUDA); };
  return op::baddbmm().call(cast(input), cast(batch1), cast(batch2), beta, alpha);
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
                              ComputeInPlace compute_in_place, bool check = true) {
  if (check) check_mm_call(self, mat2, &out);
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

at::Tensor& addmm_out_functionalize(const at::Tensor& input, const at::Tensor& mat1, const at::Tensor& mat2,
                                    const at::Scalar& beta, const at::Scalar& alpha, at::Tensor& out) {
  const at::Tensor input_ = unwrap_functional(input);
  return functionalize_out(
      mat1, mat2, out,
      [&](const at::Tensor& a, const at::Tensor& b) { return op::addmm().call(input_, a, b, beta, alpha); },
      [&](const at::Tensor& a, const at::Tensor& b, at::Tensor& o) { op::addmm_out().call(input_, a, b, beta, alpha, o); },
      /*check=*/false);
}

at::Tensor& bmm_out_functionalize(const at::Tensor& self, const at::Tensor& mat2, at::Tensor& out) {
  check_bmm_call(self, mat2, &out);
  return functionalize_out(
      self, mat2, out, [](const at::Tensor& a, const at::Tensor& b) { return op::bmm().call(a, b); },
      [](const at::Tensor& a, const at::Tensor& b, at::Tensor& o) { op::bmm_out().call(a, b, o); }, /*check=*/false);
}

at::Tensor& baddbmm_out_functionalize(const at::Tensor& input, const at::Tensor& batch1, const at::Tensor& batch2,
                                      const at::Scalar& beta, const at::Scalar& alpha, at::Tensor& out) {
  const at::Tensor input_ = unwrap_functional(input);
  return functionalize_out(
      batch1, batch2, out,
      [&](const at::Tensor& a, const at::Tensor& b) { return op::baddbmm().call(input_, a, b, beta, alpha); },
      [&](const at::Tensor& a, const at::Tensor& b, at::Tensor& o) {
        op::baddbmm_out().call(input_, a, b, beta, alpha, o);
      },
      /*check=*/false);
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
[[noreturn]] void throw_not_cuda(const char* op, const at::Tensor& a, const at::Tensor& b) {
  TORCH_CHECK(false, "cutlass_ops::", op, " runs on CUDA tensors; got tensors on ", a.device(), " and ", b.device(),
              ". Use torch.", op, " for CPU tensors.");
}
at::Tensor addmm_cpu(const at::Tensor&, const at::Tensor& mat1, const at::Tensor& mat2, const at::Scalar&,
                     const at::Scalar&) {
  throw_not_cuda("addmm", mat1, mat2);
}
at::Tensor& addmm_out_cpu(const at::Tensor&, const at::Tensor& mat1, const at::Tensor& mat2, const at::Scalar&,
                          const at::Scalar&, at::Tensor&) {
  throw_not_cuda("addmm", mat1, mat2);
}
at::Tensor bmm_cpu(const at::Tensor& self, const at::Tensor& mat2) { throw_not_cuda("bmm", self, mat2); }
at::Tensor& bmm_out_cpu(const at::Tensor& self, const at::Tensor& mat2, at::Tensor&) {
  throw_not_cuda("bmm", self, mat2);
}
at::Tensor baddbmm_cpu(const at::Tensor&, const at::Tensor& batch1, const at::Tensor& batch2, const at::Scalar&,
                       const at::Scalar&) {
  throw_not_cuda("baddbmm", batch1, batch2);
}
at::Tensor& baddbmm_out_cpu(const at::Tensor&, const at::Tensor& batch1, const at::Tensor& batch2, const at::Scalar&,
                            const at::Scalar&, at::Tensor&) {
  throw_not_cuda("baddbmm", batch1, batch2);
}
at::Tensor linear_cpu(const at::Tensor& input, const at::Tensor& weight, const std::optional<at::Tensor>&,
                      c10::string_view) {
  TORCH_CHECK(false, "cutlass_ops::linear runs on CUDA tensors; got input on ", input.device(), " and weight on ",
              weight.device(), ". Use torch.nn.functional.linear for CPU tensors.");
}

}  // namespace

TORCH_LIBRARY(cutlass_ops, m) {
  m.def("mm(Tensor self, Tensor mat2) -> Tensor");
  m.def("mm.out(Tensor self, Tensor mat2, *, Tensor(a!) out) -> Tensor(a!)");
  m.def("mm_with_kernel(Tensor self, Tensor mat2, str kernel) -> Tensor");
  m.def("mm_with_kernel.out(Tensor self, Tensor mat2, str kernel, *, Tensor(a!) out) -> Tensor(a!)");
  m.def("addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) -> Tensor");
  m.def("addmm.out(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)");
  m.def("linear(Tensor input, Tensor weight, Tensor? bias=None, str activation=\"none\") -> Tensor");
  m.def("bmm(Tensor self, Tensor mat2) -> Tensor");
  m.def("bmm.out(Tensor self, Tensor mat2, *, Tensor(a!) out) -> Tensor(a!)");
  m.def("baddbmm(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1) -> Tensor");
  m.def("baddbmm.out(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)");
  // torch.matmul's cases over mm and bmm: a composite, so their autograd, autocast and meta
  // kernels serve it.
  m.def("matmul(Tensor self, Tensor other) -> Tensor");
  m.impl("matmul", c10::DispatchKey::CompositeImplicitAutograd, TORCH_FN(matmul_composite));
}

TORCH_LIBRARY_IMPL(cutlass_ops, CUDA, m) {
  m.impl("mm", &mm_cuda);
  m.impl("mm.out", &mm_out_cuda);
  m.impl("mm_with_kernel", &mm_with_kernel_cuda);
  m.impl("mm_with_kernel.out", &mm_with_kernel_out_cuda);
  m.impl("addmm", &addmm_cuda);
  m.impl("addmm.out", &addmm_out_cuda);
  m.impl("linear", &linear_cuda);
  m.impl("bmm", &bmm_cuda);
  m.impl("bmm.out", &bmm_out_cuda);
  m.impl("baddbmm", &baddbmm_cuda);
  m.impl("baddbmm.out", &baddbmm_out_cuda);
}

TORCH_LIBRARY_IMPL(cutlass_ops, Meta, m) {
  m.impl("mm", &mm_meta);
  m.impl("mm.out", &mm_out_meta);
  m.impl("mm_with_kernel", &mm_with_kernel_meta);
  m.impl("mm_with_kernel.out", &mm_with_kernel_out_meta);
  m.impl("addmm", &addmm_meta);
  m.impl("addmm.out", &addmm_out_meta);
  m.impl("linear", &linear_meta);
  m.impl("bmm", &bmm_meta);
  m.impl("bmm.out", &bmm_out_meta);
  m.impl("baddbmm", &baddbmm_meta);
  m.impl("baddbmm.out", &baddbmm_out_meta);
}

TORCH_LIBRARY_IMPL(cutlass_ops, CPU, m) {
  m.impl("mm", &mm_cpu);
  m.impl("mm.out", &mm_out_cpu);
  m.impl("mm_with_kernel", &mm_with_kernel_cpu);
  m.impl("mm_with_kernel.out", &mm_with_kernel_out_cpu);
  m.impl("addmm", &addmm_cpu);
  m.impl("addmm.out", &addmm_out_cpu);
  m.impl("linear", &linear_cpu);
  m.impl("bmm", &bmm_cpu);
  m.impl("bmm.out", &bmm_out_cpu);
  m.impl("baddbmm", &baddbmm_cpu);
  m.impl("baddbmm.out", &baddbmm_out_cpu);
}

TORCH_LIBRARY_IMPL(cutlass_ops, Autograd, m) {
  m.impl("mm", &mm_autograd);
  m.impl("mm.out", &mm_out_autograd);
  m.impl("mm_with_kernel", &mm_with_kernel_autograd);
  m.impl("mm_with_kernel.out", &mm_with_kernel_out_autograd);
  m.impl("addmm", &add_product_autograd<AddmmProduct>);
  m.impl("addmm.out", &add_product_out_autograd<AddmmProduct>);
  m.impl("linear", &linear_autograd);
  m.impl("bmm", &bmm_autograd);
  m.impl("bmm.out", &bmm_out_autograd);
  m.impl("baddbmm", &add_product_autograd<BaddbmmProduct>);
  m.impl("baddbmm.out", &add_product_out_autograd<BaddbmmProduct>);
}

TORCH_LIBRARY_IMPL(cutlass_ops, Functionalize, m) {
  m.impl("mm.out", &mm_out_functionalize);
  m.impl("mm_with_kernel.out", &mm_with_kernel_out_functionalize);
  m.impl("addmm.out", &addmm_out_functionalize);
  m.impl("bmm.out", &bmm_out_functionalize);
  m.impl("baddbmm.out", &baddbmm_out_functionalize);
}

TORCH_LIBRARY_IMPL(cutlass_ops, AutocastCUDA, m) {
  m.impl("mm", &mm_autocast);
  m.impl("mm_with_kernel", &mm_with_kernel_autocast);
  m.impl("addmm", &addmm_autocast);
  m.impl("linear", &linear_autocast);
  m.impl("bmm", &bmm_autocast);
  m.impl("baddbmm", &baddbmm_autocast);
}

}  // namespace cutlass_ops
