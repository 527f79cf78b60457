// The kernel of the elementwise epilogue pass (epilogue.h), behind a launcher that takes raw
// pointers, so that its .cu file includes no torch header: nvcc parses a .cu file three times
// (cudafe++, cicc and the host compiler), and ATen's headers cost each pass seconds.
#pragma once

#include <cstdint>

#include <cuda_runtime_api.h>

#include "dispatch/types.h"

namespace cutlass_ops {

// D = activation(alpha * D + bias), in float, in place: d is rows x cols of `element`'s storage
// type (kF16, kBF16 or kF32) with the given element strides; bias is cols contiguous elements
// of that type, or null. Launched on `stream`; returns the launch's error
// (cudaErrorInvalidValue for another precision).
cudaError_t launch_epilogue(Precision element, void* d, int64_t rows, int64_t cols, int64_t stride_row,
                            int64_t stride_col, float alpha, const void* bias, Activation kind, cudaStream_t stream);

}  // namespace cutlass_ops
