// cutlass_ops::addmm and cutlass_ops::linear on CUDA: torch.addmm's and F.linear's arguments
// turned into a product with an epilogue (ops/mm.h EpilogueRequest), and torch's results,
// dtypes and errors for everything around it.
//
//   addmm:  out = beta * input + alpha * (mat1 @ mat2), input broadcast to M x N
//   linear: out = activation(input @ weight^T + bias), over input's leading dims
//
// A bias along the output's columns (input of shape (N,) or (1, N)) goes into the epilogue,
// which the fused kernels apply while storing the product; any other input is added after the
// product with torch's broadcasting add. With beta = 0 the input is not read (NaN and Inf in it
// do not propagate), as in torch.
#include "ops/addmm.h"

#include <ATen/ATen.h>
#include <ATen/ExpandUtils.h>
#include <ATen/MemoryOverlap.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/_addmm_activation_cuda_dispatch.h>
#include <ATen/ops/_addmm_activation_meta_dispatch.h>
#include <ATen/ops/addmm_cuda_dispatch.h>
#include <ATen/ops/addmm_meta_dispatch.h>
#include <ATen/ops/baddbmm_cuda_dispatch.h>
#include <ATen/ops/baddbmm_meta_dispatch.h>

#include "ops/epilogue.h"
#include "ops/mm.h"
#include "ops/stats.h"
#include "ops/torch_errors.h"

namespace cutlass_ops {

namespace {

bool is_real_floating(at::ScalarType t) {
  return t == at::kHalf || t == at::kBFloat16 || t == at::kFloat || t == at::kDouble;
}

// torch.addmm's checks: matrices whose shapes fit, one dtype for all three tensors, one
// device, an input that broadcasts to M x N, out of that dtype.
bool addmm_args_ok(const at::Tensor& input, const at::Tensor& mat1, const at::Tensor& mat2, const at::Tensor* out) {
  if (mat1.dim() != 2 || mat2.dim() != 2 || mat1.sym_size(1) != mat2.sym_size(0)) return false;
  if (input.dtype() != mat1.dtype() || mat2.dtype() != mat1.dtype() || (out && out->dtype() != mat1.dtype())) {
    return false;
  }
  const at::Device device = mat1.device();
  if (mat2.device() != device || input.device() != device || (out && out->device() != device)) return false;
  if (input.dim() > 2) return false;
  const c10::SymInt m = mat1.sym_size(0), n = mat2.sym_size(1);
  const auto fits = [](const c10::SymInt& have, const c10::SymInt& want) { return have == 1 || have == want; };
  if (input.dim() == 2) return fits(input.sym_size(0), m) && fits(input.sym_size(1), n);
  if (input.dim() == 1) return fits(input.sym_size(0), n);
  return true;
}

// torch.addmm's and torch._addmm_activation's functions, for let_torch_raise (ops/torch_errors.h).
struct TorchAddmm {
  using T = at::Tensor;
  using S = at::Scalar;
  static void meta(const T& c, const T& a, const T& b, const S& beta, const S& alpha) { at::meta::addmm(c, a, b, beta, alpha); }
  static void cuda(const T& c, const T& a, const T& b, const S& beta, const S& alpha) { at::cuda::addmm(c, a, b, beta, alpha); }
  static void meta_out(T& o, const T& c, const T& a, const T& b, const S& beta, const S& alpha) {
    at::meta::addmm_out(o, c, a, b, beta, alpha);
  }
  static void cuda_out(T& o, const T& c, const T& a, const T& b, const S& beta, const S& alpha) {
    at::cuda::addmm_out(o, c, a, b, beta, alpha);
  }
};

struct TorchAddmmActivation {
  using T = at::Tensor;
  using S = at::Scalar;
  static void meta(const T& c, const T& a, const T& b, const S& beta, const S& alpha, bool gelu) {
    at::meta::_addmm_activation(c, a, b, beta, alpha, gelu);
  }
  static void cuda(const T& c, const T& a, const T& b, const S& beta, const S& alpha, bool gelu) {
    at::cuda::_addmm_activation(c, a, b, beta, alpha, gelu);
  }
  static void meta_out(T& o, const T& c, const T& a, const T& b, const S& beta, const S& alpha, bool gelu) {
    at::meta::_addmm_activation_out(o, c, a, b, beta, alpha, gelu);
  }
  static void cuda_out(T& o, const T& c, const T& a, const T& b, const S& beta, const S& alpha, bool gelu) {
    at::cuda::_addmm_activation_out(o, c, a, b, beta, alpha, gelu);
  }
};

// The errors torch.addmm (or, with an activation, torch._addmm_activation) raises, raised by
// torch itself, then our own wording.
[[noreturn]] void raise_like_torch_addmm(const at::Tensor& input, const at::Tensor& mat1, const at::Tensor& mat2,
                                         const at::Scalar& beta, const at::Scalar& alpha, const at::Tensor* out,
                                         Activation activation, const char* op) {
  if (activation == Activation::kNone) {
    let_torch_raise<TorchAddmm>({&input, &mat1, &mat2}, out, input, mat1, mat2, beta, alpha);
  } else {
    let_torch_raise<TorchAddmmActivation>({&input, &mat1, &mat2}, out, input, mat1, mat2, beta, alpha,
                                          activation == Activation::kGELUTanh);
  }
  const bool same_device = mat1.device() == mat2.device() && input.device() == mat1.device() &&
                           (!out || out->device() == mat1.device());
  TORCH_CHECK(same_device, "Expected all tensors to be on the same device, but got input on ", input.device(),
              ", mat1 on ", mat1.device(), " and mat2 on ", mat2.device(), " (when checking argument in method ", op,
              ")");
  TORCH_CHECK(input.dim() <= 2 && mat1.dim() == 2 && mat2.dim() == 2, op, ": expected 2-D matrices and an input of at most 2 dims, got ",
              input.dim(), "-D, ", mat1.dim(), "-D and ", mat2.dim(), "-D");
  TORCH_CHECK(mat1.sym_size(1) == mat2.sym_size(0), "mat1 and mat2 shapes cannot be multiplied (", mat1.sym_size(0), "x",
              mat1.sym_size(1), " and ", mat2.sym_size(0), "x", mat2.sym_size(1), ")");
  TORCH_CHECK(input.dtype() == mat1.dtype() && mat2.dtype() == mat1.dtype() && (!out || out->dtype() == mat1.dtype()),
              op, ": expected input, mat1, mat2", out ? " and out" : "", " of one dtype, got ", input.dtype(), ", ",
              mat1.dtype(), ", ", mat2.dtype(), out ? ", " : "", out ? c10::toString(out->scalar_type()) : "");
  TORCH_CHECK(false, op, ": input of shape ", input.sym_sizes(), " does not broadcast to the product's ", mat1.sym_size(0), "x",
              mat2.sym_size(1), " (mat1 ", mat1.sym_sizes(), ", mat2 ", mat2.sym_sizes(), ")");
}

// input as a bias along the columns: (N,) or (1, N), N > 1 or N = 1 (a scalar-like input of
// one element broadcasts to every column too).
bool is_row_bias(const at::Tensor& input, int64_t n) {
  if (input.dim() == 1) return input.size(0) == n || input.size(0) == 1;
  if (input.dim() == 2) return input.size(0) == 1 && (input.size(1) == n || input.size(1) == 1);
  return input.dim() == 0;
}

// The N-element bias the epilogue reads: contiguous, the product's dtype, scaled by beta.
at::Tensor bias_row(const at::Tensor& input, int64_t n, double beta) {
  at::Tensor row = input.reshape({-1}).expand({n});
  if (beta != 1.0) row = row * beta;
  return row.contiguous();
}

// The shared body of addmm, addmm.out and _addmm_activation.
at::Tensor addmm_impl(const at::Tensor& input, const at::Tensor& mat1, const at::Tensor& mat2,
                      const at::Scalar& beta_s, const at::Scalar& alpha_s, at::Tensor* out, Activation activation,
                      const char* op) {
  if (C10_UNLIKELY(!addmm_args_ok(input, mat1, mat2, out))) {
    raise_like_torch_addmm(input, mat1, mat2, beta_s, alpha_s, out, activation, op);
  }
  if (out) at::assert_no_internal_overlap(*out);
  const int64_t m = mat1.size(0), n = mat2.size(1);
  const double beta = beta_s.toDouble(), alpha = alpha_s.toDouble();

  EpilogueRequest epilogue;
  epilogue.alpha = alpha;
  epilogue.activation = activation;
  const bool reads_input = beta != 0.0;
  const bool input_in_epilogue = !reads_input || is_row_bias(input, n);
  if (reads_input && input_in_epilogue && n > 0) epilogue.bias = bias_row(input, n, beta);

  if (input_in_epilogue) return mm_epilogue_cuda(mat1, mat2, out, epilogue);

  // A full (M x N), column (M x 1) or other input: the scaled product, then the input added
  // with torch's broadcasting, then the activation. An out that shares memory with the input
  // gets the result through a temporary.
  const bool via_temp = out && may_overlap(*out, input);
  at::Tensor result;
  EpilogueRequest scaled;
  scaled.alpha = alpha;
  if (out && !via_temp) {
    result = mm_epilogue_cuda(mat1, mat2, out, scaled);
  } else {
    result = mm_epilogue_cuda(mat1, mat2, nullptr, scaled);
  }
  result.add_(input.expand({m, n}), beta);
  if (activation != Activation::kNone) epilogue_pass(result, 1.0, at::Tensor(), activation);
  if (via_temp) {
    at::native::resize_output(*out, {m, n});
    out->copy_(result);
    return *out;
  }
  return result;
}

bool takes(const at::Tensor& mat1) { return is_real_floating(mat1.scalar_type()); }

}  // namespace

at::Tensor addmm_cuda(const at::Tensor& input, const at::Tensor& mat1, const at::Tensor& mat2,
                      const at::Scalar& beta, const at::Scalar& alpha) {
  // Complex matrices (and integer ones, which torch refuses) are torch's.
  if (!takes(mat1)) return at::cuda::addmm(input, mat1, mat2, beta, alpha);
  stats::count_op(stats::Op::kAddmm);
  return addmm_impl(input, mat1, mat2, beta, alpha, nullptr, Activation::kNone, "cutlass_ops::addmm");
}

at::Tensor& addmm_out_cuda(const at::Tensor& input, const at::Tensor& mat1, const at::Tensor& mat2,
                           const at::Scalar& beta, const at::Scalar& alpha, at::Tensor& out) {
  if (!takes(mat1)) return at::cuda::addmm_out(out, input, mat1, mat2, beta, alpha);
  stats::count_op(stats::Op::kAddmm);
  addmm_impl(input, mat1, mat2, beta, alpha, &out, Activation::kNone, "cutlass_ops::addmm");
  return out;
}

// aten::_addmm_activation: relu, or with use_gelu torch's tanh-approximated GELU
// (aten/src/ATen/native/cuda/Blas.cpp: cuBLASLt's GELU epilogue, at::gelu_(result, "tanh")
// where it is not available).
at::Tensor addmm_activation_cuda(const at::Tensor& input, const at::Tensor& mat1, const at::Tensor& mat2,
                                 const at::Scalar& beta, const at::Scalar& alpha, bool use_gelu) {
  if (!takes(mat1)) return at::cuda::_addmm_activation(input, mat1, mat2, beta, alpha, use_gelu);
  stats::count_op(stats::Op::kAddmm);
  return addmm_impl(input, mat1, mat2, beta, alpha, nullptr, use_gelu ? Activation::kGELUTanh : Activation::kReLU,
                    "cutlass_ops::_addmm_activation");
}

at::Tensor& addmm_activation_out_cuda(const at::Tensor& input, const at::Tensor& mat1, const at::Tensor& mat2,
                                      const at::Scalar& beta, const at::Scalar& alpha, bool use_gelu, at::Tensor& out) {
  if (!takes(mat1)) return at::cuda::_addmm_activation_out(out, input, mat1, mat2, beta, alpha, use_gelu);
  stats::count_op(stats::Op::kAddmm);
  addmm_impl(input, mat1, mat2, beta, alpha, &out, use_gelu ? Activation::kGELUTanh : Activation::kReLU,
             "cutlass_ops::_addmm_activation");
  return out;
}

at::Tensor addmm_meta(const at::Tensor& input, const at::Tensor& mat1, const at::Tensor& mat2,
                      const at::Scalar& beta, const at::Scalar& alpha) {
  if (C10_UNLIKELY(!addmm_args_ok(input, mat1, mat2, nullptr))) {
    raise_like_torch_addmm(input, mat1, mat2, beta, alpha, nullptr, Activation::kNone, "cutlass_ops::addmm");
  }
  return at::empty_symint({mat1.sym_size(0), mat2.sym_size(1)}, mat1.options());
}

at::Tensor& addmm_out_meta(const at::Tensor& input, const at::Tensor& mat1, const at::Tensor& mat2,
                           const at::Scalar& beta, const at::Scalar& alpha, at::Tensor& out) {
  if (C10_UNLIKELY(!addmm_args_ok(input, mat1, mat2, &out))) {
    raise_like_torch_addmm(input, mat1, mat2, beta, alpha, &out, Activation::kNone, "cutlass_ops::addmm");
  }
  at::native::resize_output_symint(out, {mat1.sym_size(0), mat2.sym_size(1)});
  return out;
}

// ---- baddbmm ---------------------------------------------------------------------------------

namespace {

constexpr const char* kBaddbmmMethod = "cutlass_ops::baddbmm";

// torch.baddbmm's checks: batches of matrices that fit, one dtype and one device for all,
// an input that broadcasts to B x M x N, out of that dtype.
bool baddbmm_args_ok(const at::Tensor& input, const at::Tensor& batch1, const at::Tensor& batch2,
                     const at::Tensor* out) {
  if (batch1.dim() != 3 || batch2.dim() != 3 || batch1.sym_size(0) != batch2.sym_size(0) ||
      batch1.sym_size(2) != batch2.sym_size(1)) {
    return false;
  }
  if (input.dtype() != batch1.dtype() || batch2.dtype() != batch1.dtype() || (out && out->dtype() != batch1.dtype())) {
    return false;
  }
  const at::Device device = batch1.device();
  if (batch2.device() != device || input.device() != device || (out && out->device() != device)) return false;
  if (input.dim() > 3) return false;
  const c10::SymInt want[3] = {batch1.sym_size(0), batch1.sym_size(1), batch2.sym_size(2)};
  for (int64_t d = 0; d < input.dim(); ++d) {
    const c10::SymInt& have = input.sym_size(input.dim() - 1 - d);
    if (have != 1 && have != want[2 - d]) return false;
  }
  return true;
}

// torch.baddbmm's functions, for let_torch_raise (ops/torch_errors.h).
struct TorchBaddbmm {
  using T = at::Tensor;
  using S = at::Scalar;
  static void meta(const T& c, const T& a, const T& b, const S& beta, const S& alpha) { at::meta::baddbmm(c, a, b, beta, alpha); }
  static void cuda(const T& c, const T& a, const T& b, const S& beta, const S& alpha) { at::cuda::baddbmm(c, a, b, beta, alpha); }
  static void meta_out(T& o, const T& c, const T& a, const T& b, const S& beta, const S& alpha) {
    at::meta::baddbmm_out(o, c, a, b, beta, alpha);
  }
  static void cuda_out(T& o, const T& c, const T& a, const T& b, const S& beta, const S& alpha) {
    at::cuda::baddbmm_out(o, c, a, b, beta, alpha);
  }
};

// The errors torch.baddbmm raises, raised by torch itself, then our own wording.
[[noreturn]] void raise_like_torch_baddbmm(const at::Tensor& input, const at::Tensor& batch1,
                                           const at::Tensor& batch2, const at::Scalar& beta,
                                           const at::Scalar& alpha, const at::Tensor* out) {
  let_torch_raise<TorchBaddbmm>({&input, &batch1, &batch2}, out, input, batch1, batch2, beta, alpha);
  const bool same_device = batch1.device() == batch2.device() && input.device() == batch1.device() &&
                           (!out || out->device() == batch1.device());
  TORCH_CHECK(same_device, "Expected all tensors to be on the same device, but got input on ", input.device(),
              ", batch1 on ", batch1.device(), " and batch2 on ", batch2.device(),
              " (when checking argument in method ", kBaddbmmMethod, ")");
  TORCH_CHECK(batch1.dim() == 3 && batch2.dim() == 3, "batch1 and batch2 must be 3D tensors, got ", batch1.dim(),
              "-D and ", batch2.dim(), "-D");
  TORCH_CHECK(batch1.sym_size(0) == batch2.sym_size(0) && batch1.sym_size(2) == batch2.sym_size(1), kBaddbmmMethod,
              ": batch1 ", batch1.sym_sizes(), " and batch2 ", batch2.sym_sizes(), " cannot be multiplied");
  TORCH_CHECK(input.dtype() == batch1.dtype() && batch2.dtype() == batch1.dtype() &&
                  (!out || out->dtype() == batch1.dtype()),
              kBaddbmmMethod, ": expected input, batch1, batch2", out ? " and out" : "", " of one dtype, got ",
              input.dtype(), ", ", batch1.dtype(), ", ", batch2.dtype(), out ? ", " : "",
              out ? c10::toString(out->scalar_type()) : "");
  TORCH_CHECK(false, kBaddbmmMethod, ": input of shape ", input.sym_sizes(), " does not broadcast to the product's ",
              batch1.sym_size(0), "x", batch1.sym_size(1), "x", batch2.sym_size(2), " (batch1 ", batch1.sym_sizes(), ", batch2 ",
              batch2.sym_sizes(), ")");
}

// out = beta * input + alpha * (batch1 @ batch2): the batched product into out (or a fresh
// result), then alpha and the input applied elementwise (one pass when beta = 1, the common
// case: an attention bias). With beta = 0 the input is not read.
// An out that shares memory with the input gets the result through a temporary.
at::Tensor baddbmm_impl(const at::Tensor& input, const at::Tensor& batch1, const at::Tensor& batch2,
                        const at::Scalar& beta_s, const at::Scalar& alpha_s, at::Tensor* out) {
  if (C10_UNLIKELY(!baddbmm_args_ok(input, batch1, batch2, out))) {
    raise_like_torch_baddbmm(input, batch1, batch2, beta_s, alpha_s, out);
  }
  if (out) at::assert_no_internal_overlap(*out);
  const double beta = beta_s.toDouble(), alpha = alpha_s.toDouble();
  const bool reads_input = beta != 0.0;
  const bool via_temp = out && reads_input && may_overlap(*out, input);
  at::Tensor result = batched_product_cuda(batch1, batch2, out && !via_temp ? out : nullptr);
  if (reads_input && beta == 1.0) {
    // One pass: input + alpha * product.
    at::add_out(result, input.expand(result.sizes()), result, alpha_s);
  } else {
    if (alpha != 1.0) result.mul_(alpha_s);
    if (reads_input) result.add_(input.expand(result.sizes()), beta_s);
  }
  if (via_temp) {
    at::native::resize_output(*out, result.sizes());
    out->copy_(result);
    return *out;
  }
  return result;
}

}  // namespace

at::Tensor baddbmm_cuda(const at::Tensor& input, const at::Tensor& batch1, const at::Tensor& batch2,
                        const at::Scalar& beta, const at::Scalar& alpha) {
  // Complex batches (and integer ones, which torch refuses) are torch's.
  if (!takes(batch1)) return at::cuda::baddbmm(input, batch1, batch2, beta, alpha);
  stats::count_op(stats::Op::kBaddbmm);
  return baddbmm_impl(input, batch1, batch2, beta, alpha, nullptr);
}

at::Tensor& baddbmm_out_cuda(const at::Tensor& input, const at::Tensor& batch1, const at::Tensor& batch2,
                             const at::Scalar& beta, const at::Scalar& alpha, at::Tensor& out) {
  if (!takes(batch1)) return at::cuda::baddbmm_out(out, input, batch1, batch2, beta, alpha);
  stats::count_op(stats::Op::kBaddbmm);
  baddbmm_impl(input, batch1, batch2, beta, alpha, &out);
  return out;
}

at::Tensor baddbmm_meta(const at::Tensor& input, const at::Tensor& batch1, const at::Tensor& batch2,
                        const at::Scalar& beta, const at::Scalar& alpha) {
  check_baddbmm_call(input, batch1, batch2, beta, alpha, nullptr);
  return at::empty_symint({batch1.sym_size(0), batch1.sym_size(1), batch2.sym_size(2)}, batch1.options());
}

at::Tensor& baddbmm_out_meta(const at::Tensor& input, const at::Tensor& batch1, const at::Tensor& batch2,
                             const at::Scalar& beta, const at::Scalar& alpha, at::Tensor& out) {
  check_baddbmm_call(input, batch1, batch2, beta, alpha, &out);
  at::native::resize_output_symint(out, {batch1.sym_size(0), batch1.sym_size(1), batch2.sym_size(2)});
  return out;
}

void check_baddbmm_call(const at::Tensor& input, const at::Tensor& batch1, const at::Tensor& batch2,
                        const at::Scalar& beta, const at::Scalar& alpha, const at::Tensor* out) {
  if (C10_UNLIKELY(!baddbmm_args_ok(input, batch1, batch2, out))) {
    raise_like_torch_baddbmm(input, batch1, batch2, beta, alpha, out);
  }
}

// ---- linear ----------------------------------------------------------------------------------

namespace {

// F.linear's checks, with its messages: a weight matrix (or vector) whose row length is the
// input's last dim, one dtype, one device, a bias of the output's features.
void check_linear(const at::Tensor& input, const at::Tensor& weight, const std::optional<at::Tensor>& bias) {
  TORCH_CHECK(input.dim() >= 1, "cutlass_ops.linear: input must have at least one dim, got a 0-D tensor");
  TORCH_CHECK(weight.dim() == 2, "cutlass_ops.linear: weight must be a matrix (out_features x in_features), got ",
              weight.dim(), "-D weight of shape ", weight.sizes());
  TORCH_CHECK(input.sym_size(-1) == weight.sym_size(1), "mat1 and mat2 shapes cannot be multiplied (",
              input.numel() == 0 ? c10::SymInt(0) : input.sym_numel() / input.sym_size(-1), "x", input.sym_size(-1),
              " and ", weight.sym_size(1), "x", weight.sym_size(0), ")");
  TORCH_CHECK(input.dtype() == weight.dtype(), "expected m1 and m2 to have the same dtype, but got: ", input.dtype(),
              " != ", weight.dtype());
  TORCH_CHECK(input.device() == weight.device(), "Expected all tensors to be on the same device, but got weight on ",
              weight.device(), ", different from input on ", input.device());
  if (bias && bias->defined()) {
    TORCH_CHECK(bias->dtype() == input.dtype(), "cutlass_ops.linear: bias has dtype ", bias->dtype(),
                ", input and weight ", input.dtype());
    TORCH_CHECK(bias->device() == input.device(), "Expected all tensors to be on the same device, but got bias on ",
                bias->device(), ", different from input on ", input.device());
    TORCH_CHECK(bias->dim() <= 1 && (bias->sym_numel() == weight.sym_size(0) || bias->sym_numel() == 1),
                "cutlass_ops.linear: bias must have out_features (", weight.sym_size(0), ") elements or one, got shape ",
                bias->sym_sizes());
  }
}

std::vector<c10::SymInt> linear_output_shape(const at::Tensor& input, const at::Tensor& weight) {
  std::vector<c10::SymInt> shape(input.sym_sizes().begin(), input.sym_sizes().end() - 1);
  shape.push_back(weight.sym_size(0));
  return shape;
}

}  // namespace

at::Tensor linear_cuda(const at::Tensor& input, const at::Tensor& weight, const std::optional<at::Tensor>& bias,
                       c10::string_view activation_name) {
  check_linear(input, weight, bias);
  const Activation activation = parse_activation(std::string_view(activation_name.data(), activation_name.size()));
  const int64_t in_features = weight.size(1), out_features = weight.size(0);
  TORCH_CHECK(is_real_floating(input.scalar_type()), "cutlass_ops.linear: ", input.scalar_type(),
              " tensors are not supported (float16, bfloat16, float32, float64); use torch.nn.functional.linear");
  // The leading dims folded into rows, as F.linear folds them (a copy only if they cannot be).
  int64_t m = 1;
  for (int64_t d = 0; d + 1 < input.dim(); ++d) m *= input.size(d);
  stats::count_op(stats::Op::kLinear);
  const at::Tensor rows = input.reshape({m, in_features});
  EpilogueRequest epilogue;
  epilogue.activation = activation;
  if (bias && bias->defined() && out_features > 0) epilogue.bias = bias->reshape({-1}).expand({out_features}).contiguous();
  const at::Tensor out = mm_epilogue_cuda(rows, weight.t(), nullptr, epilogue);
  std::vector<int64_t> shape(input.sizes().begin(), input.sizes().end() - 1);
  shape.push_back(out_features);
  return out.view(shape);
}

at::Tensor linear_meta(const at::Tensor& input, const at::Tensor& weight, const std::optional<at::Tensor>& bias,
                       c10::string_view activation_name) {
  check_linear(input, weight, bias);
  parse_activation(std::string_view(activation_name.data(), activation_name.size()));
  return at::empty_symint(linear_output_shape(input, weight), input.options());
}

}  // namespace cutlass_ops
