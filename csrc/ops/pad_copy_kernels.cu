// Zero-padded 2-D copies (see pad_copy.h, pad_copy_kernels.h): the kernels. Two kernels, both
// memory-bound; each block fills a piece of its destination, margins included, so no
// destination element is written twice.
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
#include "ops/pad_copy_kernels.h"

namespace cutlass_ops::pad_copy {

namespace {

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

template <typename T>
void launch_typed(Kernel kernel, const Jobs& jobs, int64_t blocks, cudaStream_t stream) {
  const unsigned grid = static_cast<unsigned>(blocks);
  switch (kernel) {
    case Kernel::kRows: rows_kernel<T, false><<<grid, kRowThreads, 0, stream>>>(jobs); break;
    case Kernel::kRowsRealigned: rows_kernel<T, true><<<grid, kRowThreads, 0, stream>>>(jobs); break;
    case Kernel::kTile: tile_kernel<T><<<grid, dim3(kTile, kTileRows), 0, stream>>>(jobs); break;
  }
}

}  // namespace

cudaError_t launch(Kernel kernel, int element_bytes, const Jobs& jobs, int64_t blocks, cudaStream_t stream) {
  switch (element_bytes) {
    case 2: launch_typed<uint16_t>(kernel, jobs, blocks, stream); break;
    case 4: launch_typed<uint32_t>(kernel, jobs, blocks, stream); break;
    case 8: launch_typed<uint64_t>(kernel, jobs, blocks, stream); break;
    default: return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

}  // namespace cutlass_ops::pad_copy
