// The torch-facing matmul: argument checks, out= handling, layout normalisation, and the
// hand-off to a registered kernel. The only layer that sees at::Tensor; it never includes
// CUTLASS.
#pragma once

#include <optional>
#include <string_view>

#include <ATen/core/Tensor.h>

#include "dispatch/cost_model.h"
#include "dispatch/types.h"
#include "dispatch/planner.h"

namespace cutlass_ops {

// What linear and addmm add to the product: D = activation(alpha * (self @ mat2) + bias), with
// the bias along D's columns. Kernels that fuse it (KernelInfo::fuses_epilogue) apply it while
// storing D; after any other, one elementwise pass does (ops/epilogue.h).
struct EpilogueRequest {
  double alpha = 1.0;
  at::Tensor bias;  // N contiguous elements of the operands' dtype, or undefined
  Activation activation = Activation::kNone;

  bool is_plain() const { return alpha == 1.0 && !bias.defined() && activation == Activation::kNone; }
};

// The product with an epilogue, into `out` (resized as out= is) or a fresh result; forced:
// a kernel name, or empty for the planner's choice. The caller has checked the arguments
// (check_mm_call) and the bias.
at::Tensor mm_epilogue_cuda(const at::Tensor& self, const at::Tensor& mat2, at::Tensor* out,
                            const EpilogueRequest& epilogue, std::string_view forced = {});

// CUDA kernels of the cutlass_ops::mm family. `kernel` empty: the heuristic chooses.
at::Tensor mm_cuda(const at::Tensor& self, const at::Tensor& mat2);
at::Tensor& mm_out_cuda(const at::Tensor& self, const at::Tensor& mat2, at::Tensor& out);
at::Tensor mm_with_kernel_cuda(const at::Tensor& self, const at::Tensor& mat2, c10::string_view kernel);
at::Tensor& mm_with_kernel_out_cuda(const at::Tensor& self, const at::Tensor& mat2, c10::string_view kernel,
                                    at::Tensor& out);

// cutlass_ops::bmm: a batch of products (3-D self and mat2) in one launch of a batched kernel.
at::Tensor bmm_cuda(const at::Tensor& self, const at::Tensor& mat2);
at::Tensor& bmm_out_cuda(const at::Tensor& self, const at::Tensor& mat2, at::Tensor& out);
at::Tensor bmm_meta(const at::Tensor& self, const at::Tensor& mat2);
// The batched product for other ops (baddbmm): bmm_cuda's work, not counted as a bmm call.
at::Tensor batched_product_cuda(const at::Tensor& self, const at::Tensor& mat2, at::Tensor* out);
at::Tensor& bmm_out_meta(const at::Tensor& self, const at::Tensor& mat2, at::Tensor& out);
// bmm on a named kernel, which must take the whole batch (the tests' hook, _C.bmm_with_kernel).
at::Tensor bmm_with_kernel_cuda(const at::Tensor& self, const at::Tensor& mat2, std::string_view kernel);
// torch.bmm's argument checks, raising torch's own errors.
void check_bmm_call(const at::Tensor& self, const at::Tensor& mat2, const at::Tensor* out);

// Meta kernels: shape inference and the same argument errors, SymInt-aware (torch.compile).
at::Tensor mm_meta(const at::Tensor& self, const at::Tensor& mat2);
at::Tensor& mm_out_meta(const at::Tensor& self, const at::Tensor& mat2, at::Tensor& out);
at::Tensor mm_with_kernel_meta(const at::Tensor& self, const at::Tensor& mat2, c10::string_view kernel);
at::Tensor& mm_with_kernel_out_meta(const at::Tensor& self, const at::Tensor& mat2, c10::string_view kernel,
                                    at::Tensor& out);

// Whether writing `out` could change `input`: they share a storage and torch cannot rule out
// an overlap.
bool may_overlap(const at::Tensor& out, const at::Tensor& input);

// torch.mm's argument checks (devices, shapes, dtypes, out's dtype), raising torch's own
// errors. The kernels above run them first; other layers (functionalization) call it too.
void check_mm_call(const at::Tensor& self, const at::Tensor& mat2, const at::Tensor* out);

// The precision a call runs at: float32 follows torch's TF32 setting for cuBLAS
// (torch.backends.cuda.matmul.allow_tf32 / torch.set_float32_matmul_precision), and without
// TF32 cutlass_ops' fp32 mode (IEEE, or 3xTF32 when opted in).
// nullopt: no cutlass_ops kernel computes this dtype.
std::optional<Precision> precision_for(at::ScalarType dtype);

// The planner's normalised view of self @ mat2 into `out` (an M x N tensor) at `precision`:
// layouts, leading dims, alignments, transposition; no kernel chosen yet.
Plan normalized_plan(Precision precision, const at::Tensor& self, const at::Tensor& mat2, const at::Tensor& out);

// Runs a planned call: the copies the plan asks for, the kernel, the copy-back into `out`.
void launch(const Plan& plan, const at::Tensor& self, const at::Tensor& mat2, const at::Tensor& out, int device,
            const DeviceDesc& desc, const EpilogueRequest* epilogue = nullptr);

// What cutlass_ops would do with these tensors on `device`, without running anything:
// the planner's view of the call (layouts, copies, transposition), the chosen kernel (or the
// forced one, with `forced_rejection` saying why it cannot run), and, for explain(), every
// candidate with the reason it was or was not taken. Tensors may live on any device (meta
// tensors plan from their strides and storage offsets).
struct Explanation {
  bool supported_dtype = true;  // false: complex and other dtypes cutlass_ops hands to torch.mm
  bool empty_integer_product = false;  // an integer product torch's CUDA kernel computes (mm() hands it on)
  Plan plan;
  std::string forced_rejection;  // non-empty: the forced kernel cannot run the call
  std::vector<Ranked> ranked;    // every candidate with the cost model's prediction, cheapest first
  // Kernels of the call's precision and layouts that are no candidate in place, and why
  // (staged and K-major variants reach others; those appear in `ranked`).
  std::vector<std::pair<const KernelInfo*, std::string>> refused;
  std::string calibration;  // where the model's constants come from ("": the device's peak rates)
  Plan normalized;          // the problem before any variant: what the tuning table is keyed by
};
Explanation explain_call(const at::Tensor& self, const at::Tensor& mat2, const at::Tensor* out,
                         std::string_view forced_kernel, const DeviceDesc& device);

}  // namespace cutlass_ops
