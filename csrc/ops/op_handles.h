// Typed dispatcher handles for the cutlass_ops::mm family, resolved once. Calling through
// them walks every dispatch key (autograd, autocast, Python modes, CUDA or Meta), like a
// call from Python through torch.ops, without the boxed argument round trip.
#pragma once

#include <ATen/core/Tensor.h>
#include <ATen/core/dispatch/Dispatcher.h>

namespace cutlass_ops::op {

using MmSig = at::Tensor(const at::Tensor&, const at::Tensor&);
using MmOutSig = at::Tensor&(const at::Tensor&, const at::Tensor&, at::Tensor&);
using MmKernelSig = at::Tensor(const at::Tensor&, const at::Tensor&, c10::string_view);
using MmKernelOutSig = at::Tensor&(const at::Tensor&, const at::Tensor&, c10::string_view, at::Tensor&);
using AddmmSig = at::Tensor(const at::Tensor&, const at::Tensor&, const at::Tensor&, const at::Scalar&, const at::Scalar&);
using AddmmOutSig = at::Tensor&(const at::Tensor&, const at::Tensor&, const at::Tensor&, const at::Scalar&,
                                const at::Scalar&, at::Tensor&);
using LinearSig = at::Tensor(const at::Tensor&, const at::Tensor&, const std::optional<at::Tensor>&, c10::string_view);

template <class Sig>
const c10::TypedOperatorHandle<Sig>& handle(const char* name, const char* overload) {
  // One static per signature: each signature below names exactly one operator.
  static const auto op = c10::Dispatcher::singleton().findSchemaOrThrow(name, overload).typed<Sig>();
  return op;
}

inline const c10::TypedOperatorHandle<MmSig>& mm() { return handle<MmSig>("cutlass_ops::mm", ""); }
inline const c10::TypedOperatorHandle<MmOutSig>& mm_out() { return handle<MmOutSig>("cutlass_ops::mm", "out"); }
inline const c10::TypedOperatorHandle<MmKernelSig>& mm_with_kernel() {
  return handle<MmKernelSig>("cutlass_ops::mm_with_kernel", "");
}
inline const c10::TypedOperatorHandle<MmKernelOutSig>& mm_with_kernel_out() {
  return handle<MmKernelOutSig>("cutlass_ops::mm_with_kernel", "out");
}
inline const c10::TypedOperatorHandle<AddmmSig>& addmm() { return handle<AddmmSig>("cutlass_ops::addmm", ""); }
inline const c10::TypedOperatorHandle<AddmmOutSig>& addmm_out() {
  return handle<AddmmOutSig>("cutlass_ops::addmm", "out");
}
inline const c10::TypedOperatorHandle<LinearSig>& linear() { return handle<LinearSig>("cutlass_ops::linear", ""); }

}  // namespace cutlass_ops::op
