// The kernels of the zero-padded copies (pad_copy.h; pad_copy_kernels.cu describes them) behind
// a launcher that takes plain structs, so that their .cu file includes no torch header (see
// epilogue_kernels.h). pad_copy.cpp chooses the kernel of each copy.
#pragma once

#include <cstdint>

#include <cuda_runtime_api.h>

namespace cutlass_ops::pad_copy {

// A copy as the kernels see it (strides in elements).
struct Job {
  const void* src;
  void* dst;
  int64_t src_row_stride, src_col_stride;
  int64_t dst_row_stride, dst_col_stride;
  int64_t rows, cols;          // the source's extent
  int64_t dst_rows, dst_cols;  // the destination's (at least the source's)
  int64_t blocks;              // blocks of the launch that fill this destination
  uintptr_t src_begin, src_end;  // the source's storage: no load reaches outside it
  bool src_by_column;          // the tile kernel reads (writes) down columns: the side's
  bool dst_by_column;          // column stride is not 1 and its row stride is
};

// A launch's copies: the first takes blocks [0, job[0].blocks), the second the rest.
struct Jobs {
  Job job[2];
};

// How a copy runs: the row kernel with element or realigned 16-byte loads, or the tile kernel.
// Copies of one kind can share a launch.
enum class Kernel { kRows, kRowsRealigned, kTile };

constexpr int kRowThreads = 256;  // the row kernel's block: a 16-byte run of a destination row per thread
constexpr int kTile = 32;         // the tile kernel's tile side
constexpr int kTileRows = 8;      // its block is 32 x 8 threads; each moves 4 elements each way

// One launch of `kernel` over `blocks` blocks for elements of element_bytes (2, 4 or 8) bytes,
// on `stream`; returns the launch's error.
cudaError_t launch(Kernel kernel, int element_bytes, const Jobs& jobs, int64_t blocks, cudaStream_t stream);

}  // namespace cutlass_ops::pad_copy
