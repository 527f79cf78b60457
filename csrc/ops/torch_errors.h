// Errors in torch's own words: when cutlass_ops refuses a call's arguments, torch itself is asked
// to raise the error it would raise for the same call, so the exception's type, text and the
// order of the checks are the installed torch's (its wording changes between releases).
//
// Torch names torch's functions for one op: meta(args...), cuda(args...), meta_out(out,
// args...), cuda_out(out, args...). Its CUDA kernel is called directly (at::cuda::...), not
// through the dispatcher: when cutlass_ops.enable() has made our code the op's CUDA kernel, the
// dispatcher would land here again. Meta tensors go to its meta function. An empty stand-in
// takes out's place, so nothing the caller passed is written even if torch accepts the call;
// the caller then raises its own wording.
#pragma once

#include <initializer_list>

#include <ATen/ATen.h>

namespace cutlass_ops {

inline bool has_symbolic_shape(const at::Tensor& t) { return t.unsafeGetTensorImpl()->has_symbolic_sizes_strides(); }

template <class Torch, class... Args>
void let_torch_raise(std::initializer_list<const at::Tensor*> tensors, const at::Tensor* out, const Args&... args) {
  bool meta = !out || out->is_meta(), cuda = out && out->is_cuda();
  for (const at::Tensor* t : tensors) {
    if (has_symbolic_shape(*t)) return;  // symbolic sizes: the caller's own checks decide
    meta = meta && t->is_meta();
    cuda = cuda || t->is_cuda();
  }
  if (!meta && !cuda) return;
  if (out) {
    at::Tensor stand_in = at::empty({0}, out->options());
    if (meta) {
      Torch::meta_out(stand_in, args...);
    } else {
      Torch::cuda_out(stand_in, args...);
    }
  } else if (meta) {
    Torch::meta(args...);
  } else {
    Torch::cuda(args...);
  }
}

}  // namespace cutlass_ops
