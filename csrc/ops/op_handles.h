// Typed dispatcher handles for the cutlass_ops ops, resolved once. Calling through
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
c10::TypedOperatorHandle<Sig> find(const char* name, const char* overload) {
  return c10::Dispatcher::singleton().findSchemaOrThrow(name, overload).typed<Sig>();
}

// Each accessor keeps its own static (mm and bmm share a signature, so the statics cannot be
// per signature).
inline const c10::TypedOperatorHandle<MmSig>& mm() {
  static const auto op = find<MmSig>("cutlass_ops::mm", "");
  return op;
}
inline const c10::TypedOperatorHandle<MmOutSig>& mm_out() {
  static const auto op = find<MmOutSig>("cutlass_ops::mm", "out");
  return op;
}
inline const c10::TypedOperatorHandle<MmKernelSig>& mm_with_kernel() {
  static const auto op = find<MmKernelSig>("cutlass_ops::mm_with_kernel", "");
  return op;
}
inline const c10::TypedOperatorHandle<MmKernelOutSig>& mm_with_kernel_out() {
  static const auto op = find<MmKernelOutSig>("cutlass_ops::mm_with_kernel", "out");
  return op;
}
inline const c10::TypedOperatorHandle<AddmmSig>& addmm() {
  static const auto op = find<AddmmSig>("cutlass_ops::addmm", "");
  return op;
}
inline const c10::TypedOperatorHandle<AddmmOutSig>& addmm_out() {
  static const auto op = find<AddmmOutSig>("cutlass_ops::addmm", "out");
  return op;
}
inline const c10::TypedOperatorHandle<LinearSig>& linear() {
  static const auto op = find<LinearSig>("cutlass_ops::linear", "");
  return op;
}
inline const c10::TypedOperatorHandle<MmSig>& bmm() {
  static const auto op = find<MmSig>("cutlass_ops::bmm", "");
  return op;
}
inline const c10::TypedOperatorHandle<MmOutSig>& bmm_out() {
  static const auto op = find<MmOutSig>("cutlass_ops::bmm", "out");
  return op;
}
// baddbmm has addmm's signature.
inline const c10::TypedOperatorHandle<AddmmSig>& baddbmm() {
  static const auto op = find<AddmmSig>("cutlass_ops::baddbmm", "");
  return op;
}
inline const c10::TypedOperatorHandle<AddmmOutSig>& baddbmm_out() {
  static const auto op = find<AddmmOutSig>("cutlass_ops::baddbmm", "out");
  return op;
}

}  // namespace cutlass_ops::op
