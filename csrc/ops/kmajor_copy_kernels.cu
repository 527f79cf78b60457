// A tiled transpose for the K-major copy of B (see kmajor_copy.h, kmajor_copy_kernels.h).
//
// Each 32 x 32 tile of B goes through shared memory: a warp reads 32 consecutive elements of
// one row of B (coalesced), then writes 32 consecutive elements of one row of the copy, that
// is one column of the tile, read from shared memory down a column. The tile's rows are 33
// elements apart, so the 32 elements of a column fall in 32 different banks.
//
// Measured on an H100 (fp32, 16384 x 16384, L2 flushed): torch's strided copy
// (b.t().contiguous()) 2.28 ms, a plain copy (b.clone()) 0.72 ms, this kernel 0.87 ms; 2.37-2.51
// TB/s read + write on B of 4096 x 4096 to 4096 x 128256. On an H200 (2026-11-30) 2.7-3.2 TB/s,
// torch's strided copy 2.4-2.9x its time; pad_copy_kernels.cu's tile kernel, which pads, groups copies
// and takes any strides, ran the same copies at 2.0-2.4 TB/s, so this one stays
// (python benchmarks/probes/kmajor_copy_bandwidth.py).
#include "ops/kmajor_copy_kernels.h"

#include <algorithm>

#include "dispatch/kernel.h"

namespace cutlass_ops {

namespace {

constexpr int kTile = kTransposeTile;
constexpr int kRowsPerPass = 8;   // a block is 32 x 8 threads; each moves 4 elements each way

// dst (cols x rows, row-major, ld_dst) = src (rows x cols, row-major, ld_src) transposed.
// Elements are moved as raw bits (T: 32-bit unsigned).
template <typename T>
__global__ void __launch_bounds__(kTile * kRowsPerPass)
    transpose_kernel(const T* __restrict__ src, int64_t ld_src, T* __restrict__ dst, int64_t ld_dst, int64_t rows,
                     int64_t cols) {
  __shared__ T tile[kTile][kTile + 1];
  const int tx = static_cast<int>(threadIdx.x);
  const int ty = static_cast<int>(threadIdx.y);
  const int64_t col0 = static_cast<int64_t>(blockIdx.x) * kTile;
  // gridDim.y is capped at kMaxGridYZ: tiles further down are taken in later passes.
  for (int64_t row0 = static_cast<int64_t>(blockIdx.y) * kTile; row0 < rows;
       row0 += static_cast<int64_t>(gridDim.y) * kTile) {
#pragma unroll
    for (int i = 0; i < kTile / kRowsPerPass; ++i) {
      const int r = ty + i * kRowsPerPass;
      const int64_t row = row0 + r, col = col0 + tx;
      if (row < rows && col < cols) tile[r][tx] = src[row * ld_src + col];
    }
    __syncthreads();
#pragma unroll
    for (int i = 0; i < kTile / kRowsPerPass; ++i) {
      const int c = ty + i * kRowsPerPass;
      const int64_t col = col0 + c, row = row0 + tx;
      if (col < cols && row < rows) dst[col * ld_dst + row] = tile[tx][c];
    }
    __syncthreads();  // the next pass overwrites the tile
  }
}

}  // namespace

cudaError_t launch_transpose32(const void* src, int64_t ld_src, void* dst, int64_t ld_dst, int64_t rows, int64_t cols,
                               cudaStream_t stream) {
  const dim3 block(kTile, kRowsPerPass);
  const dim3 grid(static_cast<unsigned>((cols + kTile - 1) / kTile),
                  static_cast<unsigned>(std::min<int64_t>((rows + kTile - 1) / kTile, kMaxGridYZ)));
  transpose_kernel<uint32_t><<<grid, block, 0, stream>>>(static_cast<const uint32_t*>(src), ld_src,
                                                         static_cast<uint32_t*>(dst), ld_dst, rows, cols);
  return cudaGetLastError();
}

}  // namespace cutlass_ops
