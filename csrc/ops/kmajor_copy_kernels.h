// The tiled transpose behind the K-major copy (kmajor_copy.h), behind a launcher that takes raw
// pointers, so that its .cu file includes no torch header (see epilogue_kernels.h).
#pragma once

#include <cstdint>

#include <cuda_runtime_api.h>

namespace cutlass_ops {

constexpr int kTransposeTile = 32;  // tile side, elements: one warp's row; one grid column per tile column

// dst (cols x rows, row-major, leading dim ld_dst) = src (rows x cols, row-major, ld_src)
// transposed, for 4-byte elements moved as raw bits. Launched on `stream`; returns the
// launch's error. The grid takes cols / kTransposeTile up to 2^31 - 1 columns of tiles.
cudaError_t launch_transpose32(const void* src, int64_t ld_src, void* dst, int64_t ld_dst, int64_t rows, int64_t cols,
                               cudaStream_t stream);

}  // namespace cutlass_ops
