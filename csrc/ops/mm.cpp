// cutlass_ops::mm on CUDA, read top to bottom like aten's addmm_out_cuda_impl: device
// check, argument checks, out= checks and resize, early returns for empty dims, plan,
// copies, launch, copy-back.
#include "ops/mm.h"

#include <initializer_list>
#include <string>
#include <utility>

#include <ATen/ATen.h>
#include <ATen/Context.h>
#include <ATen/MemoryOverlap.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/bmm_cuda_dispatch.h>
#include <ATen/ops/bmm_meta_dispatch.h>
#include <ATen/ops/mm_cuda_dispatch.h>
#include <ATen/ops/mm_meta_dispatch.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include "dispatch/registry.h"
#include "ops/autotune.h"
#include "ops/device_info.h"
#include "ops/epilogue.h"
#include "ops/kmajor_copy.h"
#include "ops/pad_copy.h"
#include "ops/settings.h"
#include "ops/stats.h"
#include "ops/torch_errors.h"

namespace cutlass_ops {

namespace {

constexpr const char* kMethod = "cutlass_ops::mm";

// torch's check_and_update_common_device, with its message.
void check_same_device(std::initializer_list<std::pair<const at::Tensor*, const char*>> args) {
  std::optional<at::Device> common;
  for (const auto& [tensor, name] : args) {
    if (!common) {
      common = tensor->device();
      continue;
    }
    TORCH_CHECK(tensor->device() == *common, "Expected all tensors to be on the same device, but got ", name,
                " is on ", tensor->device(), ", different from other tensors on ", *common,
                " (when checking argument in method ", kMethod, ")");
  }
}

// The checks torch.mm makes, in its order: one device for every tensor, two matrices whose
// shapes fit, one dtype, and out= of that dtype. Cheap, and silent when they pass.
bool mm_args_ok(const at::Tensor& self, const at::Tensor& mat2, const at::Tensor* out) {
  const at::Device device = self.device();
  return mat2.device() == device && (!out || out->device() == device) && self.dim() == 2 && mat2.dim() == 2 &&
         self.sym_size(1) == mat2.sym_size(0) && self.dtype() == mat2.dtype() &&
         (!out || out->dtype() == self.dtype());
}

// Our own wording of those errors (torch 2.15's), for when torch does not raise its own.
[[noreturn]] void raise_mm_arg_error(const at::Tensor& self, const at::Tensor& mat2, const at::Tensor* out) {
  if (out) {
    check_same_device({{out, "out"}, {&self, "self"}, {&mat2, "mat2"}});
  } else {
    check_same_device({{&self, "self"}, {&mat2, "mat2"}});
  }
  TORCH_CHECK(self.dim() == 2, "mm: self must be a matrix, got ", self.dim(), "-D tensor");
  TORCH_CHECK(mat2.dim() == 2, "mm: mat2 must be a matrix, got ", mat2.dim(), "-D tensor");
  TORCH_CHECK(self.sym_size(1) == mat2.sym_size(0), "mm: mat1 and mat2 shapes cannot be multiplied (",
              self.sym_size(0), "x", self.sym_size(1), " and ", mat2.sym_size(0), "x", mat2.sym_size(1), ")");
  TORCH_CHECK(self.dtype() == mat2.dtype(), "expected m1 and m2 to have the same dtype, but got: ", self.dtype(),
              " != ", mat2.dtype());
  TORCH_CHECK(!out || out->dtype() == self.dtype(), "Expected out tensor to have dtype ", self.dtype(),
              ", but got ", out->dtype(), " instead");
  TORCH_CHECK(false, kMethod, ": invalid arguments");
}

// torch.mm's and torch.bmm's functions, for let_torch_raise (ops/torch_errors.h).
struct TorchMm {
  static void meta(const at::Tensor& a, const at::Tensor& b) { at::meta::mm(a, b); }
  static at::Tensor cuda(const at::Tensor& a, const at::Tensor& b) { return at::cuda::mm(a, b); }
  static void meta_out(at::Tensor& o, const at::Tensor& a, const at::Tensor& b) { at::meta::mm_out(o, a, b); }
  static at::Tensor& cuda_out(at::Tensor& o, const at::Tensor& a, const at::Tensor& b) { return at::cuda::mm_out(o, a, b); }
};

struct TorchBmm {
  static void meta(const at::Tensor& a, const at::Tensor& b) { at::meta::bmm(a, b); }
  static at::Tensor cuda(const at::Tensor& a, const at::Tensor& b) { return at::cuda::bmm(a, b); }
  static void meta_out(at::Tensor& o, const at::Tensor& a, const at::Tensor& b) { at::meta::bmm_out(o, a, b); }
  static at::Tensor& cuda_out(at::Tensor& o, const at::Tensor& a, const at::Tensor& b) { return at::cuda::bmm_out(o, a, b); }
};

[[noreturn]] void raise_like_torch_mm(const at::Tensor& self, const at::Tensor& mat2, const at::Tensor* out) {
  let_torch_raise<TorchMm>({&self, &mat2}, out, self, mat2);
  raise_mm_arg_error(self, mat2, out);
}

// An integer or bool product torch's CUDA kernel computes: M, N, K or the batch zero (nothing
// to multiply; zeros where K is zero). torch refuses the others.
bool empty_integer_product(const at::Tensor& self, const at::Tensor& mat2) {
  const bool empty = self.size(-2) == 0 || self.size(-1) == 0 || mat2.size(-1) == 0;
  return empty || (self.dim() == 3 && self.size(0) == 0);
}

// kernel= names one of our kernels, and none multiplies integers.
void refuse_forced_integer_kernel(at::ScalarType dtype, std::string_view forced) {
  TORCH_CHECK_VALUE(forced.empty(), "cutlass_ops: kernel= cannot be used with ", dtype,
                    " tensors: cutlass_ops has no integer kernels, and torch computes their empty products");
}

// Integer and bool matrices, which cutlass_ops has no kernels for, behave as in torch: torch's
// CUDA kernel computes empty products and refuses the others with its own error (torch.mm's
// names "addmm_cuda", torch.bmm's "baddbmm_cuda"), raised on an empty stand-in so out stays
// untouched. Our wording of that error follows only if torch's kernel were to accept the call.
template <class Torch>
at::Tensor integer_product(const at::Tensor& self, const at::Tensor& mat2, at::Tensor* out, std::string_view forced,
                           const char* torch_kernel) {
  if (!empty_integer_product(self, mat2)) {
    let_torch_raise<Torch>({&self, &mat2}, out, self, mat2);
    TORCH_CHECK_NOT_IMPLEMENTED(false, "\"", torch_kernel, "\" not implemented for '",
                                c10::toString(self.scalar_type()), "'");
  }
  refuse_forced_integer_kernel(self.scalar_type(), forced);
  stats::count(stats::Outcome::kNoWork);
  if (out) return Torch::cuda_out(*out, self, mat2);
  return Torch::cuda(self, mat2);
}

// Byte address of element (0, 0). Meta tensors have no memory: plan as if their storage
// started 256-byte aligned.
uint64_t address_of(const at::Tensor& t) {
  return t.is_meta() ? static_cast<uint64_t>(t.storage_offset()) * t.element_size()
                     : reinterpret_cast<uint64_t>(t.const_data_ptr());
}

// A matrix, or one matrix of a batch (a 3-D tensor) with the stride to the next.
MatrixDesc describe(const at::Tensor& t) {
  if (t.dim() == 3) return {t.size(1), t.size(2), t.stride(1), t.stride(2), address_of(t), t.stride(0)};
  return {t.size(0), t.size(1), t.stride(0), t.stride(1), address_of(t)};
}

// The output descriptor the call will write: `out` itself, or, when out= must first be
// resized, the contiguous M x N tensor resize_output will leave at the same address.
MatrixDesc describe_output(const at::Tensor& out, int64_t m, int64_t n) {
  if (out.dim() == 2 && out.size(0) == m && out.size(1) == n) return describe(out);
  return {m, n, n, 1, address_of(out)};
}

}  // namespace

bool may_overlap(const at::Tensor& out, const at::Tensor& input) {
  // Tensors on different storages never share memory. (torch's get_overlap_status answers
  // "too hard" for any tensor that is not dense, an expanded or sliced input say, even on
  // another storage; taking that as an overlap would send the output through a temporary.)
  if (out.has_storage() && input.has_storage() && !out.storage().is_alias_of(input.storage())) return false;
  return at::get_overlap_status(out, input) != at::MemOverlapStatus::No;
}

namespace {

bool overlaps(const at::Tensor& out, const at::Tensor& input) { return may_overlap(out, input); }

CallDesc describe_call(Precision precision, const at::Tensor& self, const at::Tensor& mat2,
                       const MatrixDesc& d, bool d_overlaps_input, bool epilogue = false) {
  CallDesc call;
  call.precision = precision;
  call.epilogue = epilogue;
  call.batch = self.dim() == 3 ? self.size(0) : 1;
  call.a = describe(self);
  call.b = describe(mat2);
  call.d = d;
  call.d_overlaps_input = d_overlaps_input;
  return call;
}

std::string compiled_archs() {
  std::string archs;
  int seen_min_cc[8] = {};
  int n_seen = 0;
  for (const KernelInfo* k : Registry::instance().all()) {
    bool seen = false;
    for (int i = 0; i < n_seen; ++i) seen = seen || seen_min_cc[i] == k->min_cc;
    if (seen || n_seen == 8) continue;
    seen_min_cc[n_seen++] = k->min_cc;
    if (!archs.empty()) archs += ", ";
    archs += "sm_" + std::to_string(k->min_cc) + (k->max_cc == kAnyNewerCC ? " and newer" : "a") + " (" +
             origin_name(k->origin) + ")";
  }
  return archs.empty() ? std::string("none") : archs;
}

bool has_kernels_for(int cc) {
  for (const KernelInfo* k : Registry::instance().all()) {
    if (cc >= k->min_cc && cc <= k->max_cc) return true;
  }
  return false;
}

const KernelInfo& find_kernel_or_throw(std::string_view name) {
  const KernelInfo* kernel = Registry::instance().find(name);
  TORCH_CHECK_VALUE(kernel != nullptr, "cutlass_ops.mm: unknown kernel '", name,
                    "'; cutlass_ops.list_kernels() lists the ", Registry::instance().all().size(),
                    " kernels in this build");
  return *kernel;
}

// Puts a forced kernel on a normalised plan, or says why it cannot run it. The kernel also
// decides float32's precision: forcing a TF32 kernel opts into TF32, and forcing the IEEE
// kernel opts out, whatever torch's global TF32 flag says.
bool is_float32(Precision p) { return p == Precision::kTF32 || p == Precision::kF32 || p == Precision::kTF32x3; }

Rejection force_kernel(Plan& plan, const KernelInfo& kernel, const DeviceDesc& device) {
  if (is_float32(plan.precision) && is_float32(kernel.precision)) plan.precision = kernel.precision;
  const Rejection why = check_kernel(kernel, plan, device);
  if (why == Rejection::kNone) {
    set_kernel(plan, kernel, device);
    plan.reason = "forced with kernel=";
  }
  return why;
}

// Plans `call`; with a forced kernel, throws ValueError if that kernel cannot run it.
Plan plan_call(const CallDesc& call, const DeviceDesc& device, std::string_view forced) {
  if (forced.empty()) return make_plan(call, device);
  const KernelInfo& kernel = find_kernel_or_throw(forced);
  Plan plan = normalize(call);
  const Rejection why = force_kernel(plan, kernel, device);
  TORCH_CHECK_VALUE(why == Rejection::kNone, "cutlass_ops.mm: kernel '", kernel.name, "' cannot run this problem (",
                    call.a.rows, "x", call.a.cols, " @ ", call.b.rows, "x", call.b.cols, ", ",
                    precision_name(plan.precision), "): it ", describe_rejection(why, kernel, plan, device));
  return plan;
}

// The kernel's operands for a staged plan: A and B as zero-padded contiguous copies (K and N
// rounded up; the padding multiplies zeros), D as a padded temporary.
struct StagedOperands {
  at::Tensor a, b, d;
};

StagedOperands stage_operands(const Plan& plan, const at::Tensor& self, const at::Tensor& mat2,
                              const at::Tensor& out) {
  // Kernel-facing views: for the transposed problem A is mat2^T and B is self^T.
  const at::Tensor ka = plan.transposed ? mat2.t() : self;
  const at::Tensor kb = plan.transposed ? self.t() : mat2;
  StagedOperands s;
  s.a = at::empty({ka.size(0), plan.k}, ka.options());  // M x K', row-major
  PaddedCopy copies[2] = {{ka, s.a}, {}};
  if (plan.b.layout == Layout::kRowMajor) {
    s.b = at::empty({plan.k, plan.n}, kb.options());  // K' x N', row-major
    copies[1] = {kb, s.b};
  } else {
    const at::Tensor b_t = at::empty({plan.n, plan.k}, kb.options());  // K' x N', column-major
    copies[1] = {kb.t(), b_t};
    s.b = b_t.t();
  }
  padded_copies(copies, 2);
  s.d = at::empty({plan.m, plan.n}, out.options());
  return s;
}

// The TMA kernels (CUTLASS 3.x, the hand-written step 6) build their descriptors with a driver
// call, cuTensorMapEncodeTiled, which needs the device's context current in the calling thread.
// The runtime makes it current on a thread's first runtime call, but a thread can reach a
// kernel launch without one: PyTorch's autograd device threads set their device only when
// cudaGetDevice names another (pytorch/pytorch#124565). There the driver answered
// CUDA_ERROR_INVALID_CONTEXT, CUTLASS printed "Failed to initialize the TMA descriptor 201"
// and launched anyway, and the kernel died on an illegal instruction (a bf16 bmm's backward
// whose first product ran on a CUTLASS 3.x kernel, H100, 2026-11-25). cudaSetDevice makes the
// device's primary context current; once per thread and device.
void bind_device_context(int device) {
  thread_local int bound = -1;
  if (bound == device) return;
  C10_CUDA_CHECK(cudaSetDevice(device));
  bound = device;
}

}  // namespace

Plan normalized_plan(Precision precision, const at::Tensor& self, const at::Tensor& mat2, const at::Tensor& out) {
  const bool d_overlaps = overlaps(out, self) || overlaps(out, mat2);
  return normalize(describe_call(precision, self, mat2, describe(out), d_overlaps));
}

void launch(const Plan& plan, const at::Tensor& self, const at::Tensor& mat2, const at::Tensor& out, int device,
            const DeviceDesc& desc, const EpilogueRequest* epilogue) {
  const KernelInfo& kernel = *plan.kernel;
  TORCH_INTERNAL_ASSERT(self.dim() == 2 || !(plan.staged || plan.copy_b_kmajor),
                        "a batch planned on staged or K-major copies");
  StagedOperands staged;
  if (plan.staged) staged = stage_operands(plan, self, mat2, out);
  const at::Tensor a = plan.copy_a ? self.contiguous() : self;
  const at::Tensor b = plan.copy_b ? mat2.contiguous() : mat2;
  // K-major copy of the kernel's B (K x N, column-major: its transpose made contiguous).
  at::Tensor kmajor_b;
  if (plan.copy_b_kmajor) kmajor_b = kmajor_copy(plan.transposed ? self.t() : mat2);
  const at::Tensor d = plan.staged ? staged.d : plan.d_via_temp ? at::empty(out.sizes(), out.options()) : out;

  GemmArgs args;
  args.m = plan.m;
  args.n = plan.n;
  args.k = plan.k;
  args.batch = plan.batch;
  args.batch_stride_a = plan.a.batch_stride;
  args.batch_stride_b = plan.b.batch_stride;
  args.batch_stride_d = plan.d.batch_stride;
  args.a = plan.staged ? staged.a.const_data_ptr() : (plan.transposed ? b : a).const_data_ptr();
  args.lda = plan.a.ld;
  args.layout_a = plan.a.layout;
  args.b = plan.staged          ? staged.b.const_data_ptr()
           : plan.copy_b_kmajor ? kmajor_b.const_data_ptr()
                                : (plan.transposed ? a : b).const_data_ptr();
  args.ldb = plan.b.ld;
  args.layout_b = plan.b.layout;
  args.d = d.data_ptr();
  args.ldd = plan.d.ld;
  args.device = device;
  args.sm_count = desc.sm_count;
  args.decomposition = plan.decomposition;
  args.splits = plan.splits;
  args.tile_order = plan.tile_order;
  args.stream = c10::cuda::getCurrentCUDAStream(device).stream();
  if (epilogue != nullptr && plan.fuses_epilogue()) {
    args.epilogue.alpha = static_cast<float>(epilogue->alpha);
    args.epilogue.bias = epilogue->bias.defined() ? epilogue->bias.const_data_ptr() : nullptr;
    args.epilogue.activation = epilogue->activation;
  }

  KernelStatus status = kernel.can_implement(args);
  TORCH_CHECK(status.ok(), "cutlass_ops.mm: internal error: the planner chose kernel ", kernel.name, " for the ",
              plan.m, "x", plan.n, "x", plan.k, " problem (lda ", plan.a.ld, ", ldb ", plan.b.ld, ", ldd ", plan.d.ld,
              ") but the kernel refuses it: ", status.message, ". Please report this with the output of "
              "cutlass_ops.explain() for these tensors.");

  // Workspace comes from the caching allocator on the current stream, so it is reused
  // safely and CUDA-graph capture sees no raw allocation.
  at::Tensor workspace;
  const size_t workspace_bytes = kernel.workspace_bytes(args);
  if (workspace_bytes > 0) {
    workspace = at::empty({static_cast<int64_t>(workspace_bytes)}, out.options().dtype(at::kByte));
    args.workspace = workspace.data_ptr();
  }
  bind_device_context(device);
  status = kernel.run(args);
  TORCH_CHECK(status.ok(), "cutlass_ops.mm: kernel ", kernel.name, " failed on the ", plan.m, "x", plan.n, "x",
              plan.k, " problem: ", status.message);
  if (plan.staged) {
    // The kernel computed the (transposed, if so planned) padded product: drop the padding.
    const PaddedCopy copy_out{d.narrow(1, 0, plan.transposed ? self.size(0) : mat2.size(1)),
                              plan.transposed ? out.t() : out};
    padded_copies(&copy_out, 1);
  } else if (plan.d_via_temp) {
    out.copy_(d);
  }
  if (epilogue != nullptr && plan.needs_epilogue_pass()) {
    epilogue_pass(out, epilogue->alpha, epilogue->bias, epilogue->activation);
  }
}

namespace {

// A product's torch fallback: torch's own CUDA kernel (at::cuda::mm_out or bmm_out, called
// directly: in dispatcher mode at::mm and at::bmm would land here again).
void torch_product_out(at::Tensor& result, const at::Tensor& self, const at::Tensor& mat2) {
  if (self.dim() == 3) {
    at::cuda::bmm_out(result, self, mat2);
  } else {
    at::cuda::mm_out(result, self, mat2);
  }
}

// A complex call, handed to torch after the checks: counted, and logged when logging is on.
void hand_complex_to_torch(const at::Tensor& self, const at::Tensor& mat2, int64_t m, int64_t n, int64_t k) {
  stats::count(stats::Outcome::kTorchComplex);
  if (C10_UNLIKELY(stats::logging())) stats::log_handoff(m, n, k, self.scalar_type(), "complex");
}

const DeviceDesc& checked_device(const at::Tensor& self, const char* method) {
  const int device = self.get_device();
  const DeviceDesc& desc = cuda_device_desc(device);
  TORCH_CHECK(has_kernels_for(desc.cc), method, ": ", self.device(), " has compute capability ", desc.cc / 10,
              ".", desc.cc % 10, ", and this build has no kernels for it. Compiled: ", compiled_archs(),
              ". cutlass_ops needs compute capability 8.0 or newer; rebuild with CUTLASS_OPS_ARCHS to add archs.");
  return desc;
}

// The product once it is planned: the empty cases, torch's kernel where no kernel of ours
// accepts the problem, else the launch. `self` and `mat2` are matrices, or batches of them
// (3-D) with a plan for the batch.
at::Tensor& run_planned(Plan& plan, const at::Tensor& self, const at::Tensor& mat2, at::Tensor& result,
                        Precision precision, const DeviceDesc& desc, std::string_view forced,
                        const EpilogueRequest* epilogue) {
  const int64_t m = self.size(-2), k = self.size(-1), n = mat2.size(-1);
  const int64_t batch = self.dim() == 3 ? self.size(0) : 1;
  const int device = self.get_device();
  const bool has_epilogue = epilogue != nullptr;
  if (batch == 0 || m == 0 || n == 0 || k == 0) {
    // Nothing to multiply; with K = 0 the product is all zeros (a no-op on an empty result),
    // which the epilogue still maps (the bias, the activation of it).
    stats::count(stats::Outcome::kNoWork);
    if (k == 0) result.zero_();
    if (has_epilogue) epilogue_pass(result, epilogue->alpha, epilogue->bias, epilogue->activation);
    return result;
  }
  if (plan.kernel == nullptr) {
    // No kernel accepts the problem (a dimension over 2^31 - 1, say): torch's CUDA kernel
    // computes it.
    stats::count(stats::Outcome::kTorchNoKernel);
    if (C10_UNLIKELY(stats::logging())) stats::log_handoff(m, n, k, self.scalar_type(), plan.reason);
    torch_product_out(result, self, mat2);
    if (has_epilogue) epilogue_pass(result, epilogue->alpha, epilogue->bias, epilogue->activation);
    return result;
  }
  if (C10_UNLIKELY(settings::autotune()) && forced.empty() && !plan.tuned && !has_epilogue && batch == 1) {
    // Times the model's cheapest candidates into result.
    autotune(plan, normalized_plan(precision, self, mat2, result), self, mat2, result, device, desc);
  }
  launch(plan, self, mat2, result, device, desc, epilogue);
  stats::count_kernel(*plan.kernel);
  if (C10_UNLIKELY(stats::logging())) stats::log_call(plan, self.scalar_type());
  return result;
}

// The shared body of the four CUDA entry points. `out` is defined for the out= variants;
// otherwise the result is allocated here, after every check has passed.
at::Tensor matmul_cuda(const at::Tensor& self_in, const at::Tensor& mat2_in, at::Tensor* out,
                       std::string_view forced, const EpilogueRequest* epilogue_in = nullptr) {
  // A plain epilogue is no epilogue: the plan and the kernels of torch.mm.
  const EpilogueRequest* epilogue = epilogue_in != nullptr && !epilogue_in->is_plain() ? epilogue_in : nullptr;
  if (C10_UNLIKELY(!mm_args_ok(self_in, mat2_in, out))) raise_like_torch_mm(self_in, mat2_in, out);
  TORCH_CHECK(self_in.is_cuda(), kMethod, " runs on CUDA tensors; got tensors on ", self_in.device());
  // torch's structured out= kernels refuse an out whose elements share memory.
  if (out) at::assert_no_internal_overlap(*out);

  const at::ScalarType dtype = self_in.scalar_type();
  const std::optional<Precision> precision = precision_for(dtype);
  if (!precision) {
    if (!at::isComplexType(dtype)) {
      TORCH_INTERNAL_ASSERT(epilogue == nullptr, "integer matrices reach the epilogue path");
      return integer_product<TorchMm>(self_in, mat2_in, out, forced, "addmm_cuda");
    }
    // Complex matrices: documented hand-off to torch.mm's CUDA kernel (cuBLAS).
    TORCH_CHECK_VALUE(forced.empty(), "cutlass_ops.mm: kernel= cannot be used with ", dtype,
                      " tensors: cutlass_ops has no complex kernels and hands them to torch.mm");
    TORCH_INTERNAL_ASSERT(epilogue == nullptr, "complex matrices reach the epilogue path");
    hand_complex_to_torch(self_in, mat2_in, self_in.size(0), mat2_in.size(1), self_in.size(1));
    if (out) return at::cuda::mm_out(*out, self_in, mat2_in);
    return at::cuda::mm(self_in, mat2_in);
  }

  c10::cuda::CUDAGuard guard(self_in.get_device());
  const DeviceDesc& desc = checked_device(self_in, kMethod);

  // The neg bit (a lazily negated view) is resolved the way torch.mm resolves it.
  const at::Tensor self = self_in.resolve_neg();
  const at::Tensor mat2 = mat2_in.resolve_neg();
  const int64_t m = self.size(0), n = mat2.size(1);

  // Plan before touching out, so a forced kernel that cannot run leaves out untouched.
  at::Tensor result = out ? *out : at::empty({m, n}, self.options());
  const bool d_overlaps = out && (overlaps(result, self) || overlaps(result, mat2));
  const bool has_epilogue = epilogue != nullptr;
  Plan plan = plan_call(
      describe_call(*precision, self, mat2, describe_output(result, m, n), d_overlaps, has_epilogue), desc, forced);
  if (out && at::native::resize_output(result, {m, n})) {
    // Resized: the storage may have moved, so plan again on the real output.
    plan = plan_call(describe_call(*precision, self, mat2, describe(result), d_overlaps, has_epilogue), desc, forced);
  }
  return run_planned(plan, self, mat2, result, *precision, desc, forced, epilogue);
}

// ---- bmm -------------------------------------------------------------------------------

constexpr const char* kBmmMethod = "cutlass_ops::bmm";

// torch.bmm's checks: one device, two batches of matrices whose batch sizes and inner dims
// match, one dtype, out= of that dtype.
bool bmm_args_ok(const at::Tensor& self, const at::Tensor& mat2, const at::Tensor* out) {
  const at::Device device = self.device();
  return mat2.device() == device && (!out || out->device() == device) && self.dim() == 3 && mat2.dim() == 3 &&
         self.sym_size(0) == mat2.sym_size(0) && self.sym_size(2) == mat2.sym_size(1) &&
         self.dtype() == mat2.dtype() && (!out || out->dtype() == self.dtype());
}

// torch.bmm raises its own errors, as for mm (ops/torch_errors.h): its CUDA kernel on an empty
// stand-in out, or its meta function for meta tensors. Our wording follows if torch accepts the call.
[[noreturn]] void raise_like_torch_bmm(const at::Tensor& self, const at::Tensor& mat2, const at::Tensor* out) {
  let_torch_raise<TorchBmm>({&self, &mat2}, out, self, mat2);
  if (out) {
    check_same_device({{out, "out"}, {&self, "self"}, {&mat2, "mat2"}});
  } else {
    check_same_device({{&self, "self"}, {&mat2, "mat2"}});
  }
  TORCH_CHECK(self.dim() == 3, "batch1 must be a 3D tensor, got ", self.dim(), "-D");
  TORCH_CHECK(mat2.dim() == 3, "batch2 must be a 3D tensor, got ", mat2.dim(), "-D");
  TORCH_CHECK(self.sym_size(0) == mat2.sym_size(0) && self.sym_size(2) == mat2.sym_size(1),
              "Expected size for first two dimensions of batch2 tensor to be: [", self.sym_size(0), ", ",
              self.sym_size(2), "] but got: [", mat2.sym_size(0), ", ", mat2.sym_size(1), "].");
  TORCH_CHECK(self.dtype() == mat2.dtype(), "expected mat1 and mat2 to have the same dtype, but got: ", self.dtype(),
              " != ", mat2.dtype());
  TORCH_CHECK(!out || out->dtype() == self.dtype(), "Expected out tensor to have dtype ", self.dtype(),
              ", but got ", out->dtype(), " instead");
  TORCH_CHECK(false, kBmmMethod, ": invalid arguments");
}

at::Tensor bmm_impl(const at::Tensor& self_in, const at::Tensor& mat2_in, at::Tensor* out,
                    std::string_view forced = {}) {
  if (C10_UNLIKELY(!bmm_args_ok(self_in, mat2_in, out))) raise_like_torch_bmm(self_in, mat2_in, out);
  TORCH_CHECK(self_in.is_cuda(), kBmmMethod, " runs on CUDA tensors; got tensors on ", self_in.device());
  if (out) at::assert_no_internal_overlap(*out);
  const int64_t batch = self_in.size(0), m = self_in.size(1), k = self_in.size(2), n = mat2_in.size(2);

  const at::ScalarType dtype = self_in.scalar_type();
  const std::optional<Precision> precision = precision_for(dtype);
  if (!precision) {
    if (!at::isComplexType(dtype)) return integer_product<TorchBmm>(self_in, mat2_in, out, forced, "baddbmm_cuda");
    hand_complex_to_torch(self_in, mat2_in, m, n, k);
    if (out) return at::cuda::bmm_out(*out, self_in, mat2_in);
    return at::cuda::bmm(self_in, mat2_in);
  }

  c10::cuda::CUDAGuard guard(self_in.get_device());
  const DeviceDesc& desc = checked_device(self_in, kBmmMethod);
  const at::Tensor self = self_in.resolve_neg();
  const at::Tensor mat2 = mat2_in.resolve_neg();

  // A forced kernel (the tests' hook) must take the batch as it is.
  const CallDesc probe = describe_call(*precision, self, mat2, MatrixDesc{m, n, n, 1, 0, m * n}, false);
  if (!forced.empty()) plan_call(probe, desc, forced);  // throws if the kernel cannot run it
  at::Tensor result = out ? *out : at::empty({batch, m, n}, self.options());
  const bool d_overlaps = out && (overlaps(result, self) || overlaps(result, mat2));
  if (out) at::native::resize_output(result, {batch, m, n});
  if (result.numel() == 0 || k == 0) {
    Plan nothing;  // run_planned's empty cases come before the plan
    run_planned(nothing, self, mat2, result, *precision, desc, {}, nullptr);
    return result;
  }
  if (batch == 1 && forced.empty()) {
    // One matrix: the plan of mm, with every variant and K decomposition it has. The views
    // write into result.
    at::Tensor d = result.select(0, 0);
    const at::Tensor a = self.select(0, 0), b = mat2.select(0, 0);
    Plan plan = make_plan(describe_call(*precision, a, b, describe(d), d_overlaps), desc);
    run_planned(plan, a, b, d, *precision, desc, {}, nullptr);
    return result;
  }
  Plan plan = plan_call(describe_call(*precision, self, mat2, describe(result), d_overlaps), desc, forced);
  run_planned(plan, self, mat2, result, *precision, desc, forced, nullptr);
  return result;
}

// Meta: the same checks, then the shape; no kernel is consulted except to validate a name.
at::Tensor& matmul_out_meta(const at::Tensor& self, const at::Tensor& mat2, at::Tensor& out) {
  if (C10_UNLIKELY(!mm_args_ok(self, mat2, &out))) raise_like_torch_mm(self, mat2, &out);
  at::native::resize_output_symint(out, {self.sym_size(0), mat2.sym_size(1)});
  return out;
}

}  // namespace

at::Tensor mm_epilogue_cuda(const at::Tensor& self, const at::Tensor& mat2, at::Tensor* out,
                            const EpilogueRequest& epilogue, std::string_view forced) {
  return matmul_cuda(self, mat2, out, forced, &epilogue);
}

void check_mm_call(const at::Tensor& self, const at::Tensor& mat2, const at::Tensor* out) {
  if (C10_UNLIKELY(!mm_args_ok(self, mat2, out))) raise_like_torch_mm(self, mat2, out);
}

std::optional<Precision> precision_for(at::ScalarType dtype) {
  switch (dtype) {
    case at::kHalf: return Precision::kF16;
    case at::kBFloat16: return Precision::kBF16;
    case at::kFloat:
      if (at::globalContext().allowTF32CuBLAS()) return Precision::kTF32;
      return settings::fp32_mode() == settings::Fp32Mode::kTF32x3 ? Precision::kTF32x3 : Precision::kF32;
    case at::kDouble: return Precision::kF64;
    default: return std::nullopt;
  }
}

at::Tensor mm_cuda(const at::Tensor& self, const at::Tensor& mat2) {
  stats::count_op(stats::Op::kMm);
  return matmul_cuda(self, mat2, nullptr, {});
}

at::Tensor& mm_out_cuda(const at::Tensor& self, const at::Tensor& mat2, at::Tensor& out) {
  stats::count_op(stats::Op::kMm);
  matmul_cuda(self, mat2, &out, {});
  return out;
}

at::Tensor mm_with_kernel_cuda(const at::Tensor& self, const at::Tensor& mat2, c10::string_view kernel) {
  TORCH_CHECK_VALUE(!kernel.empty(), "cutlass_ops.mm: kernel= must name a kernel; pass kernel=None for auto");
  stats::count_op(stats::Op::kMm);
  return matmul_cuda(self, mat2, nullptr, std::string_view(kernel.data(), kernel.size()));
}

at::Tensor& mm_with_kernel_out_cuda(const at::Tensor& self, const at::Tensor& mat2, c10::string_view kernel,
                                    at::Tensor& out) {
  TORCH_CHECK_VALUE(!kernel.empty(), "cutlass_ops.mm: kernel= must name a kernel; pass kernel=None for auto");
  stats::count_op(stats::Op::kMm);
  matmul_cuda(self, mat2, &out, std::string_view(kernel.data(), kernel.size()));
  return out;
}

at::Tensor mm_meta(const at::Tensor& self, const at::Tensor& mat2) {
  if (C10_UNLIKELY(!mm_args_ok(self, mat2, nullptr))) raise_like_torch_mm(self, mat2, nullptr);
  return at::empty_symint({self.sym_size(0), mat2.sym_size(1)}, self.options());
}

at::Tensor& mm_out_meta(const at::Tensor& self, const at::Tensor& mat2, at::Tensor& out) {
  return matmul_out_meta(self, mat2, out);
}

at::Tensor mm_with_kernel_meta(const at::Tensor& self, const at::Tensor& mat2, c10::string_view kernel) {
  find_kernel_or_throw(std::string_view(kernel.data(), kernel.size()));
  return mm_meta(self, mat2);
}

at::Tensor& mm_with_kernel_out_meta(const at::Tensor& self, const at::Tensor& mat2, c10::string_view kernel,
                                    at::Tensor& out) {
  find_kernel_or_throw(std::string_view(kernel.data(), kernel.size()));
  return matmul_out_meta(self, mat2, out);
}

at::Tensor bmm_cuda(const at::Tensor& self, const at::Tensor& mat2) {
  stats::count_op(stats::Op::kBmm);
  return bmm_impl(self, mat2, nullptr);
}

at::Tensor batched_product_cuda(const at::Tensor& self, const at::Tensor& mat2, at::Tensor* out) {
  return bmm_impl(self, mat2, out);
}

at::Tensor bmm_with_kernel_cuda(const at::Tensor& self, const at::Tensor& mat2, std::string_view kernel) {
  TORCH_CHECK_VALUE(!kernel.empty(), "cutlass_ops.bmm: kernel= must name a kernel");
  return bmm_impl(self, mat2, nullptr, kernel);
}

at::Tensor& bmm_out_cuda(const at::Tensor& self, const at::Tensor& mat2, at::Tensor& out) {
  stats::count_op(stats::Op::kBmm);
  bmm_impl(self, mat2, &out);
  return out;
}

void check_bmm_call(const at::Tensor& self, const at::Tensor& mat2, const at::Tensor* out) {
  if (C10_UNLIKELY(!bmm_args_ok(self, mat2, out))) raise_like_torch_bmm(self, mat2, out);
}

at::Tensor bmm_meta(const at::Tensor& self, const at::Tensor& mat2) {
  check_bmm_call(self, mat2, nullptr);
  return at::empty_symint({self.sym_size(0), self.sym_size(1), mat2.sym_size(2)}, self.options());
}

at::Tensor& bmm_out_meta(const at::Tensor& self, const at::Tensor& mat2, at::Tensor& out) {
  check_bmm_call(self, mat2, &out);
  at::native::resize_output_symint(out, {self.sym_size(0), self.sym_size(1), mat2.sym_size(2)});
  return out;
}

Explanation explain_call(const at::Tensor& self, const at::Tensor& mat2, const at::Tensor* out,
                         std::string_view forced, const DeviceDesc& device) {
  // explain() plans tensors of any device: only the shape and dtype checks apply. Two 3-D
  // tensors are a bmm call.
  const bool batched = self.dim() == 3 && mat2.dim() == 3;
  if (batched) {
    if (C10_UNLIKELY(!(self.size(0) == mat2.size(0) && self.size(2) == mat2.size(1) && self.dtype() == mat2.dtype()))) {
      raise_like_torch_bmm(self.to(at::kMeta), mat2.to(at::kMeta), nullptr);
    }
  } else if (C10_UNLIKELY(!(self.dim() == 2 && mat2.dim() == 2 && self.size(1) == mat2.size(0) &&
                            self.dtype() == mat2.dtype()))) {
    raise_like_torch_mm(self.to(at::kMeta), mat2.to(at::kMeta), nullptr);
  }
  Explanation e;
  const std::optional<Precision> precision = precision_for(self.scalar_type());
  if (!precision) {
    e.supported_dtype = false;
    if (!at::isComplexType(self.scalar_type()) && empty_integer_product(self, mat2)) {
      e.empty_integer_product = true;  // mm() hands it to torch's CUDA kernel
      refuse_forced_integer_kernel(self.scalar_type(), forced);
    }
    return e;
  }
  const int64_t m = self.size(-2), n = mat2.size(-1);
  const bool d_overlaps = out && !out->is_meta() && (overlaps(*out, self) || overlaps(*out, mat2));
  MatrixDesc d = out ? describe_output(*out, m, n) : MatrixDesc{m, n, n, 1, 0};
  if (batched) {
    const int64_t batch = self.size(0);
    const bool fits = out && out->dim() == 3 && out->size(0) == batch && out->size(1) == m && out->size(2) == n;
    d = fits ? describe(*out) : MatrixDesc{m, n, n, 1, out ? address_of(*out) : 0, m * n};
  }
  const CallDesc call = describe_call(*precision, self, mat2, d, d_overlaps);

  const Plan normalized = normalize(call);
  e.normalized = normalized;
  e.plan = normalized;
  if (forced.empty()) {
    choose_kernel(e.plan, device);
  } else {
    const KernelInfo& kernel = find_kernel_or_throw(forced);
    const Rejection why = force_kernel(e.plan, kernel, device);
    if (why != Rejection::kNone) e.forced_rejection = describe_rejection(why, kernel, e.plan, device);
  }
  e.ranked = rank_candidates(normalized, device);
  const Calibration* cal = calibration_for(device);
  e.calibration = cal == nullptr ? std::string() : cal->source;
  // The kernels of the call's precision and layouts that are no candidate, and why.
  for (const KernelInfo* k : Registry::instance().candidates(normalized.precision, normalized.a.layout,
                                                             normalized.b.layout)) {
    const Rejection why = check_kernel(*k, normalized, device);
    if (why != Rejection::kNone) {
      e.refused.emplace_back(k, describe_rejection(why, *k, normalized, device));
    } else if (k->role == Role::kTeaching) {
      e.refused.emplace_back(k, "a teaching kernel (a step of the hand-written ladder): runs only when forced with kernel=");
    } else if (!k->supports(Decomposition::kDataParallel) && kernel_candidates(normalized, *k, device, cal).empty()) {
      // CUTLASS 2.x's split-K-sum builds: their data-parallel launch is their plain build's.
      e.refused.emplace_back(k, "runs split-K alone, and no slice count is offered here: split-K is offered while the "
                                "output's tiles are fewer than the GPU holds at once (" +
                                std::to_string(tile_count(*k, normalized.m, normalized.n)) +
                                " here) and K gives every slice two K tiles or more");
    }
  }
  return e;
}

}  // namespace cutlass_ops
