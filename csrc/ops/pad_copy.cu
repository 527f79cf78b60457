// Zero-padded 2-D copies (see pad_copy.h). Two kernels, both memory-bound; each block fills a
// piece of its destination, margins included, so no destination element is written twice.
//
// - Row kernel: a destination whose rows are contiguous and 16-byte aligned, from a source of
//   the same layout (the staged operands' padded buffers). Each thread fills one 16-byte run of
//   a destination row, written as a uint4 (which nvcc 13.0 compiles to four 4-byte stores, its
//   PTX shows). A source with contiguous rows is read in aligned 16-byte
//   words whatever its own alignment (two words shifted into place where it is unaligned),
//   else element by element. The realigned loads took the staged copies in from 7.9 to 6.0 us
//   (361x1399x2249 bf16 "rc"), 9.7 to 7.6 (1537x1029x2051) and 14.3 to 11.3 (777x1234x4321)
//   against element loads (H200, 2026-11-30; benchmarks/probes/launch_activities_probe.py).
// - Tile kernel: anything else: a transposing copy, or a destination the row kernel's stores
//   cannot take (the padded result copied out into an unaligned or column-major D). A 32 x 32
//   tile goes through shared memory, read with consecutive threads on consecutive source
//   addresses and written with consecutive threads on consecutive destination addresses; the
//   tile's rows are 33 elements apart, so a column of 4-byte elements falls in 32 banks.
//   Element stores 16 bytes apart from one thread each, as a row kernel's would be, took 1.3-1.6x
//   the tile kernel's time copying D out (H200, 2026-11-30: 1537x1029 bf16, 10.2 us against 6.4;
//   python benchmarks/probes/launch_activities_probe.py 1537x1029x2051 --layout rc).
#include "ops/pad_copy.h"

#include <cstdint>

#include <ATen/ATen.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

namespace cutlass_ops {

namespace {

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

__device__ __forceinline__ Job job_of_block(const Jobs& jobs, int64_t& block) {
  block = blockIdx.x;
  if (block < jobs.job[0].blocks) return jobs.job[0];
  block -= jobs.job[0].blocks;
  return jobs.job[1];
}

// Element (r, c) of the padded source: the source's inside its extent, zero outside.
// T: an unsigned integer of the element's size (elements move as raw bits).
template <typename T>
__device__ __forceinline__ T padded_element(const Job& j, int64_t r, int64_t c) {
  return r < j.rows && c < j.cols ? static_cast<const T*>(j.src)[r * j.src_row_stride + c * j.src_col_stride] : T(0);
}

constexpr int kRowThreads = 256;

// 16 bytes of a row-contiguous source from `addr` on, whatever its alignment: the two aligned
// 16-byte words that hold them, shifted into place (little-endian: byte o of the pair is bits
// 8 * o and up). False where a word would reach outside the source's storage.
__device__ __forceinline__ bool realigned_load(uintptr_t addr, uintptr_t begin, uintptr_t end, uint4& out) {
  const unsigned o = static_cast<unsigned>(addr % 16);
  const uint4* word = reinterpret_cast<const uint4*>(addr - o);
  if (addr - o < begin || addr - o + (o == 0 ? 16 : 32) > end) return false;
  if (o == 0) {
    out = word[0];
    return true;
  }
  const uint4 lo = word[0], hi = word[1];
  const uint32_t x[8] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
  const unsigned shift = 8 * (o % 4);
  const auto f = [&](int i) { return __funnelshift_r(x[i], x[i + 1], shift); };
  switch (o / 4) {  // constant indices: x stays in registers
    case 0: out = make_uint4(f(0), f(1), f(2), f(3)); break;
    case 1: out = make_uint4(f(1), f(2), f(3), f(4)); break;
    case 2: out = make_uint4(f(2), f(3), f(4), f(5)); break;
    default: out = make_uint4(f(3), f(4), f(5), f(6)); break;
  }
  return true;
}

// Each thread fills one 16-byte run of a destination row (kVec elements).
// kRealigned: the source's rows are contiguous; a run is read as two aligned 16-byte words
// (realigned_load), else element loads at the source's strides.
template <typename T, bool kRealigned>
__global__ void __launch_bounds__(kRowThreads) rows_kernel(const Jobs jobs) {
  constexpr int kVec = 16 / sizeof(T);
  int64_t block;
  const Job j = job_of_block(jobs, block);
  const int64_t runs_per_row = j.dst_cols / kVec;
  const int64_t run = block * kRowThreads + threadIdx.x;
  if (run >= j.dst_rows * runs_per_row) return;
  const int64_t r = run / runs_per_row, c0 = (run - r * runs_per_row) * kVec;
  union {
    uint4 v;
    T e[kVec];
  } u;
  bool loaded = false;
  if constexpr (kRealigned) {
    if (r < j.rows && c0 < j.cols) {
      const T* first = static_cast<const T*>(j.src) + r * j.src_row_stride + c0;
      loaded = realigned_load(reinterpret_cast<uintptr_t>(first), j.src_begin, j.src_end, u.v);
      if (loaded) {
#pragma unroll
        for (int i = 0; i < kVec; ++i) {
          if (c0 + i >= j.cols) u.e[i] = T(0);
        }
      }
    }
  }
  if (!loaded) {
#pragma unroll
    for (int i = 0; i < kVec; ++i) u.e[i] = padded_element<T>(j, r, c0 + i);
  }
  *reinterpret_cast<uint4*>(static_cast<T*>(j.dst) + r * j.dst_row_stride + c0) = u.v;
}

constexpr int kTile = 32;
constexpr int kTileRows = 8;  // a block is 32 x 8 threads; each moves 4 elements each way

template <typename T>
__global__ void __launch_bounds__(kTile * kTileRows) tile_kernel(const Jobs jobs) {
  __shared__ T tile[kTile][kTile + 1];
  int64_t block;
  const Job j = job_of_block(jobs, block);
  const int64_t tiles_per_row = (j.dst_cols + kTile - 1) / kTile;
  const int64_t tile_row = block / tiles_per_row;
  const int64_t r0 = tile_row * kTile, c0 = (block - tile_row * tiles_per_row) * kTile;
  const int tx = static_cast<int>(threadIdx.x), ty = static_cast<int>(threadIdx.y);
#pragma unroll
  for (int i = 0; i < kTile; i += kTileRows) {
    const int r = j.src_by_column ? tx : ty + i, c = j.src_by_column ? ty + i : tx;
    tile[r][c] = padded_element<T>(j, r0 + r, c0 + c);
  }
  __syncthreads();
#pragma unroll
  for (int i = 0; i < kTile; i += kTileRows) {
    const int r = j.dst_by_column ? tx : ty + i, c = j.dst_by_column ? ty + i : tx;
    if (r0 + r < j.dst_rows && c0 + c < j.dst_cols) {
      static_cast<T*>(j.dst)[(r0 + r) * j.dst_row_stride + (c0 + c) * j.dst_col_stride] = tile[r][c];
    }
  }
}

// How a copy runs: the row kernel with element or realigned 16-byte loads, or the tile kernel.
// Copies of one kind can share a launch.
enum class Kernel { kRows, kRowsRealigned, kTile };

// Whether consecutive elements of `t` run down its columns (its row stride is 1, its column
// stride is not): the tile kernel then walks that side by columns.
bool by_column(const at::Tensor& t) {
  return t.size(0) > 1 && t.stride(0) == 1 && (t.size(1) == 1 || t.stride(1) != 1);
}

// Rows of `t` contiguous, starting on 16-byte boundaries.
bool rows_aligned(const at::Tensor& t) {
  const int64_t eb = t.element_size();
  return (t.size(1) == 1 || t.stride(1) == 1) && (t.size(0) == 1 || t.stride(0) * eb % 16 == 0) &&
         reinterpret_cast<uintptr_t>(t.const_data_ptr()) % 16 == 0;
}

Kernel kernel_for(const PaddedCopy& p) {
  const int64_t vec = 16 / p.dst.element_size();
  if (by_column(p.src) || !rows_aligned(p.dst) || p.dst.size(1) % vec != 0) return Kernel::kTile;
  return p.src.size(1) == 1 || p.src.stride(1) == 1 ? Kernel::kRowsRealigned : Kernel::kRows;
}

int64_t blocks_for(const PaddedCopy& p, Kernel kernel) {
  const int64_t rows = p.dst.size(0), cols = p.dst.size(1);
  if (kernel != Kernel::kTile) {
    const int64_t vec = 16 / p.dst.element_size();
    const int64_t runs = rows * (cols / vec);
    return (runs + kRowThreads - 1) / kRowThreads;
  }
  return ((rows + kTile - 1) / kTile) * ((cols + kTile - 1) / kTile);
}

Job job_for(const PaddedCopy& p, int64_t blocks) {
  Job j;
  j.src = p.src.const_data_ptr();
  j.dst = p.dst.data_ptr();
  j.src_row_stride = p.src.stride(0);
  j.src_col_stride = p.src.stride(1);
  j.dst_row_stride = p.dst.stride(0);
  j.dst_col_stride = p.dst.stride(1);
  j.rows = p.src.size(0);
  j.cols = p.src.size(1);
  j.dst_rows = p.dst.size(0);
  j.dst_cols = p.dst.size(1);
  j.blocks = blocks;
  j.src_begin = reinterpret_cast<uintptr_t>(p.src.storage().data());
  j.src_end = j.src_begin + p.src.storage().nbytes();
  j.src_by_column = by_column(p.src);
  j.dst_by_column = by_column(p.dst);
  return j;
}

template <typename T>
void launch(Kernel kernel, const Jobs& jobs, int64_t blocks, cudaStream_t stream) {
  const unsigned grid = static_cast<unsigned>(blocks);
  switch (kernel) {
    case Kernel::kRows: rows_kernel<T, false><<<grid, kRowThreads, 0, stream>>>(jobs); break;
    case Kernel::kRowsRealigned: rows_kernel<T, true><<<grid, kRowThreads, 0, stream>>>(jobs); break;
    case Kernel::kTile: tile_kernel<T><<<grid, dim3(kTile, kTileRows), 0, stream>>>(jobs); break;
  }
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

// torch's way, for what the kernels do not take.
void torch_padded_copy(const PaddedCopy& p) {
  const int64_t rows = p.src.size(0), cols = p.src.size(1);
  const int64_t dst_rows = p.dst.size(0), dst_cols = p.dst.size(1);
  at::Tensor top = p.dst.narrow(0, 0, rows);
  top.narrow(1, 0, cols).copy_(p.src);
  if (dst_cols > cols) top.narrow(1, cols, dst_cols - cols).zero_();
  if (dst_rows > rows) p.dst.narrow(0, rows, dst_rows - rows).zero_();
}

bool kernels_take(const PaddedCopy& p) {
  const int64_t eb = p.dst.element_size();
  return p.src.dim() == 2 && p.dst.dim() == 2 && p.src.is_cuda() && p.src.device() == p.dst.device() &&
         p.src.scalar_type() == p.dst.scalar_type() && (eb == 2 || eb == 4 || eb == 8) && !p.src.is_conj() &&
         !p.src.is_neg() && p.src.size(0) <= p.dst.size(0) && p.src.size(1) <= p.dst.size(1);
}

}  // namespace

void padded_copies(const PaddedCopy* copies, int count) {
  TORCH_INTERNAL_ASSERT(count == 1 || count == 2, "padded_copies: one or two copies, not ", count);
  // Each group is one launch: copies that share a kernel and an element size (the cost model
  // counts these launches: dispatch/cost_model.cpp, copy_work).
  int64_t blocks[2] = {0, 0};
  Kernel kernels[2] = {Kernel::kTile, Kernel::kTile};
  bool ours[2] = {false, false};
  for (int i = 0; i < count; ++i) {
    const PaddedCopy& p = copies[i];
    if (p.dst.numel() == 0) continue;
    if (!kernels_take(p)) {
      torch_padded_copy(p);
      continue;
    }
    kernels[i] = kernel_for(p);
    blocks[i] = blocks_for(p, kernels[i]);
    ours[i] = true;
  }
  // Two copies can share a launch where their elements are of one size, on one device.
  const bool shareable = count == 2 && ours[0] && ours[1] &&
                         copies[0].dst.element_size() == copies[1].dst.element_size() &&
                         copies[0].dst.device() == copies[1].dst.device();
  // Two straight copies that could share one, one source with contiguous rows and one without:
  // element loads serve both, in one launch.
  if (shareable && kernels[0] != kernels[1] && kernels[0] != Kernel::kTile && kernels[1] != Kernel::kTile) {
    kernels[0] = kernels[1] = Kernel::kRows;
  }
  const bool together = shareable && kernels[0] == kernels[1];
  for (int i = 0; i < count; ++i) {
    if (!ours[i] || (together && i == 1)) continue;
    const PaddedCopy& p = copies[i];
    Jobs jobs{};
    jobs.job[0] = job_for(p, blocks[i]);
    int64_t total = blocks[i];
    if (together) {
      jobs.job[1] = job_for(copies[1], blocks[1]);
      total += blocks[1];
    }
    if (total > INT32_MAX) {  // gridDim.x's bound; no staged operand comes near it
      torch_padded_copy(p);
      if (together) torch_padded_copy(copies[1]);
      continue;
    }
    const c10::cuda::CUDAGuard guard(p.dst.device());
    const cudaStream_t stream = c10::cuda::getCurrentCUDAStream(p.dst.get_device()).stream();
    switch (p.dst.element_size()) {
      case 2: launch<uint16_t>(kernels[i], jobs, total, stream); break;
      case 4: launch<uint32_t>(kernels[i], jobs, total, stream); break;
      default: launch<uint64_t>(kernels[i], jobs, total, stream); break;
    }
  }
}

}  // namespace cutlass_ops
