// The K-major copy of B (see kmajor_copy.h): the kernel, a tiled transpose, is in
// kmajor_copy_kernels.cu.
#include "ops/kmajor_copy.h"

#include <cstdint>

#include <ATen/ATen.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include "ops/kmajor_copy_kernels.h"

namespace cutlass_ops {

at::Tensor kmajor_copy(const at::Tensor& b) {
  const int64_t rows = b.size(0), cols = b.size(1);
  const bool row_major = b.stride(1) == 1 && (rows <= 1 || b.stride(0) >= cols);
  // One grid column per 32 columns of B: gridDim.x takes up to 2^31 - 1.
  if (!b.is_cuda() || !row_major || b.element_size() != 4 || rows == 0 || cols == 0 ||
      (cols + kTransposeTile - 1) / kTransposeTile > INT32_MAX) {
    return b.t().contiguous().t();
  }
  const c10::cuda::CUDAGuard guard(b.device());
  at::Tensor copy = at::empty({cols, rows}, b.options());  // B^T, contiguous
  C10_CUDA_CHECK(launch_transpose32(b.const_data_ptr(), b.stride(0), copy.data_ptr(), copy.stride(0), rows, cols,
                                    c10::cuda::getCurrentCUDAStream(b.get_device()).stream()));
  return copy.t();
}

}  // namespace cutlass_ops
