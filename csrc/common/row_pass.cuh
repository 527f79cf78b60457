// One memory-bound pass that rewrites a float32 operand into a workspace, row by row, before a
// GEMM reads it: the 3xTF32 split (cutlass3x/sm90_3xtf32_presplit.cuh) and the float64 widening
// of float32 on DMMA (cutlass2x/sm90_f32_on_dmma.cuh).
//
// The operand is seen as `rows` rows of `k` elements, element (r, c) at src[r * stride_r +
// c * stride_k]: any layout, any alignment. A 32 x 32 tile passes through shared memory, so
// reads run along src's unit-stride dimension (whichever it is) and the writer's stores run
// along the destination's rows. The writer is called once for each (r, c) with c < kp; columns
// k..kp-1 (padding) reach it as zeros.
#pragma once

#include <cstdint>

#include <cuda_runtime_api.h>

namespace cutlass_ops::row_pass {

constexpr int kTile = 32;  // a 32 x 32 tile per block of 32 x 8 threads, a warp per row of it

// Writer: a trivially copyable struct with `__device__ void operator()(int64_t r, int64_t c,
// float x) const`.
template <class Writer>
__global__ void row_pass_kernel(const float* __restrict__ src, int64_t rows, int64_t k, int64_t kp, int64_t stride_r,
                                int64_t stride_k, Writer write) {
  __shared__ float tile[kTile][kTile + 1];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int64_t k0 = static_cast<int64_t>(blockIdx.x) * kTile;
  const bool k_unit = stride_k == 1;
  for (int64_t r0 = static_cast<int64_t>(blockIdx.y) * kTile; r0 < rows; r0 += static_cast<int64_t>(gridDim.y) * kTile) {
    for (int i = ty; i < kTile; i += blockDim.y) {
      // Lanes walk K when K has unit stride, rows otherwise.
      const int tr = k_unit ? i : tx, tk = k_unit ? tx : i;
      const int64_t r = r0 + tr, c = k0 + tk;
      if (r < rows && c < k) tile[tr][tk] = src[r * stride_r + c * stride_k];
    }
    __syncthreads();
    for (int i = ty; i < kTile; i += blockDim.y) {
      const int64_t r = r0 + i, c = k0 + tx;
      if (r < rows && c < kp) write(r, c, c < k ? tile[i][tx] : 0.0f);
    }
    __syncthreads();
  }
}

// Launches the pass on `stream` (columns 0..kp-1 of each row, kp >= k).
template <class Writer>
cudaError_t run(const float* src, int64_t rows, int64_t k, int64_t kp, int64_t stride_r, int64_t stride_k,
                const Writer& write, cudaStream_t stream) {
  const int64_t row_tiles = (rows + kTile - 1) / kTile;
  const dim3 grid(static_cast<unsigned>((kp + kTile - 1) / kTile),
                  static_cast<unsigned>(row_tiles < 65535 ? row_tiles : 65535));
  row_pass_kernel<Writer><<<grid, dim3(kTile, 8), 0, stream>>>(src, rows, k, kp, stride_r, stride_k, write);
  return cudaGetLastError();
}

}  // namespace cutlass_ops::row_pass
