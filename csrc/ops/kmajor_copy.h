// The K-major copy of a row-major B: TF32 WGMMA reads K-major operands only, so a row-major
// (N-major) B is transposed into a fresh buffer for the SM90 kernels when the planner asks
// for it (Plan::copy_b_kmajor).
#pragma once

#include <ATen/core/Tensor.h>

namespace cutlass_ops {

// `b` (K x N) as a K x N column-major tensor (an N x K contiguous buffer, transposed view),
// on b's device and the current stream. A row-major `b` of 4-byte elements (TF32's float32,
// the only precision that needs the copy) goes through a tiled transpose kernel; any other `b`
// through torch's strided copy, which transposes at about 1 TB/s on an H100.
at::Tensor kmajor_copy(const at::Tensor& b);

}  // namespace cutlass_ops
