// Step 6 of the hand-written GEMM ladder (issue #6): Hopper TMA + wgmma, warp-specialised
// and persistent, for bf16 and fp16 on sm_90a.
//
// The idea over step 5 (mma.sync fed by cp.async): on Hopper the tensor cores read both
// operands straight from shared memory (wgmma.mma_async, a 64 x 256 x 16 product per
// warpgroup instruction) and a copy engine (TMA) fills that shared memory from a tensor map,
// so no thread spends instructions on addresses or loads. That frees the kernel to specialise
// its warps: one producer warpgroup (one thread of it, in fact) issues TMA into a 4-stage ring
// guarded by full/empty mbarriers, and two consumer warpgroups each own 64 rows of the
// 128 x 256 tile and only issue wgmma. setmaxnreg moves registers from the producer (40) to
// the consumers (232), which hold 128 fp32 accumulators per thread. The grid is one CTA per SM;
// CTAs loop over output tiles in a grouped raster, so the producer already streams the next
// tile while the consumers store the previous one, through shared memory and TMA stores.
//
// Operands: A row-major (K-major) or column-major (K x M: "MN-major", transpose bit set, in two
// 64-row boxes, one per consumer warpgroup); B row-major (K x N: "MN-major" for wgmma, transpose bit
// set, loaded as four 64-column boxes) or column-major (N x K, K-major, one box). All tiles
// use 128-byte swizzle (64 x 16-bit per 128-byte row), which wgmma reads without bank
// conflicts. TMA zero-fills the parts of a box outside the matrix and clips stores at its
// edges, so M, N and K need not be multiples of the tile.
//
// Measured (H100, bf16): 4096^3 rr 781 TFLOP/s vs cuBLAS 785 (0.995x; fp16 and rc the same);
// 8192^3 rr 728 vs 799 (0.91x) right after cuBLAS, 695-760 vs 674-709 interleaved (clocks
// drop under sustained power; five runs gave 0.91-0.99x). .scratch/wgmma/harness.cu: median of
// 20 with L2 flushed, cublasGemmEx in the same process. Storing D straight from registers
// instead of through shared memory + TMA gave 701 TFLOP/s at 4096^3 (0.88x). A 2x1 cluster
// multicasting B measured the same as this within the noise, so clusters wait for a later step.
//
// Beyond the ladder, the same kernel is built on narrower tiles (Config<kN>: 128 x 128 to 240 in
// steps of 16; kernel names ending in _n<N>), so that the planner can fit a problem's columns and
// waves the way cuBLAS's tile set does; D then leaves in 64-column boxes and a narrower last one.
// The "rc" builds are also built with linear's epilogue fused (names ending in _bias_act): D =
// activation(alpha * A @ B + bias), applied to the accumulators in registers before they are
// stored. And swapped (names ending in _swapab_m<M>): the kernel computes D^T on tiles of 144-256
// rows of A by 128 columns of B. An MN-major operand is read in 64-element boxes, so a tile side
// along one is 128, 192 or 256 (the registrations at the end list each layout's widths). The
// 128x128, 128x256 and swapped 256-row builds also split K (LastSlice, below), for problems of
// fewer tiles than SMs.
#include <algorithm>
#include <array>
#include <climits>
#include <cstdint>
#include <mutex>
#include <type_traits>

#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>
#include <cudaTypedefs.h>  // PFN_cuTensorMapEncodeTiled: the driver call is found at run time

#include "common/activation.cuh"
#include "common/smem_opt_in.h"
#include "dispatch/configs.h"
#include "dispatch/kernel.h"
#include "handwritten/hopper_ptx.cuh"

namespace cutlass_ops::handwritten_sm90 {

__host__ __device__ constexpr int ceil_div(int64_t a, int64_t b) { return static_cast<int>((a + b - 1) / b); }

// Tile and pipeline shape, one source of truth for the kernel, the launcher and KernelInfo.
// kN: the tile's width. The ladder's step is 256, wgmma's largest N; the N-fitted builds take
// 128-240 (multiples of 16: whole 64-column boxes of D and a narrower last one), so that a
// problem's columns fill whole tiles and its tiles whole waves.
template <int kN = 256>
struct Config {
  static constexpr int kTileM = 128;    // two consumer warpgroups x 64 rows (wgmma's M)
  static constexpr int kTileN = kN;
  static constexpr int kTileK = 64;     // 64 x 16-bit = one 128-byte swizzle row
  static constexpr int kStages = 4;     // 4 x 48 KiB at N = 256; a fifth would exceed the 227 KiB opt-in limit
  static constexpr int kThreads = 384;  // producer warpgroup + 2 consumer warpgroups
  static constexpr int kAccumulators = kTileN / 2;  // per consumer thread: 64 x N over 128 threads
  static constexpr int kABytes = kTileM * kTileK * 2;
  static constexpr int kBBytes = kTileN * kTileK * 2;
  static constexpr int kStageBytes = kABytes + kBBytes;
  // D leaves in boxes of 64 rows: kFullBoxes of 64 columns, then one of kTailColumns.
  static constexpr int kFullBoxes = kTileN / 64;
  static constexpr int kTailColumns = kTileN % 64;
  // Epilogue staging for TMA stores: per consumer warpgroup, two 64 x 64 buffers (one being
  // filled while the previous one is stored), 128-byte swizzled like the operands.
  static constexpr int kDBoxBytes = 64 * 64 * 2;
  static constexpr int kDStagingBytes = 2 * 2 * kDBoxBytes;
  // A fused build's bias for the tile's columns, per consumer warpgroup, in D's 16-bit type.
  static constexpr int kBiasBytes = 2 * kTileN * 2;
  // Stages, staging, 2 mbarriers per stage, the bias, and 1024 bytes to align it all on the
  // swizzle atom: 231488 bytes at N = 256, just under the 232448-byte (227 KiB) opt-in limit.
  static constexpr int kSmemBytes = kStages * kStageBytes + kDStagingBytes + 2 * kStages * 8 + kBiasBytes + 1024;
  static_assert(kSmemBytes <= 232448, "the opt-in shared memory of one H100/H200 CTA (227 KiB)");
  static_assert(kTileN % 16 == 0 && kTileN >= 64 && kTileN <= 256, "wgmma N, and D's boxes of 16-byte rows");
  // Tile rows walked together before moving right: 132 CTAs then cover about 8 x 16 tiles,
  // so A and B panels are shared in L2. 4, 8, 16 and 32 measured the same within noise.
  static constexpr int kBandRows = 8;
  static constexpr int kProducerRegs = 40;
  static constexpr int kConsumerRegs = 232;  // 40 x 128 + 232 x 256 = 64512 <= 65536
};

struct TileCoord {
  int m, n;  // in tiles
};

// Grouped raster: tiles go down a band of `band` tile rows before moving to the next column,
// so CTAs running at the same time share A rows and B columns in L2.
__device__ __forceinline__ TileCoord tile_coord(int t, int rows, int cols, int band) {
  const int per_group = band * cols;
  const int group = t / per_group;
  const int first_row = group * band;
  const int group_rows = min(rows - first_row, band);
  const int in_group = t - group * per_group;
  return {first_row + in_group % group_rows, in_group / group_rows};
}

template <Precision P>
using OutputT = std::conditional_t<P == Precision::kBF16, __nv_bfloat16, __half>;

template <Precision P, bool kTransA, bool kTransB, int kN>
__device__ __forceinline__ void wgmma_tile_k16(float (&acc)[kN / 2], uint64_t desc_a, uint64_t desc_b) {
  wgmma_m64nk16<kN, kTransA ? 1 : 0, kTransB ? 1 : 0, P == Precision::kBF16>(acc, desc_a, desc_b);
}

// Two accumulators of n8 block j (columns j * 8 + (lane % 4) * 2 and the next one, row half h)
// converted to D's type and packed in 32 bits.
template <Precision P, int kAcc>
__device__ __forceinline__ uint32_t packed_pair(const float (&acc)[kAcc], int j, int h) {
  if constexpr (std::is_same_v<OutputT<P>, __nv_bfloat16>) {
    const __nv_bfloat162 v = __floats2bfloat162_rn(acc[4 * j + 2 * h], acc[4 * j + 2 * h + 1]);
    return *reinterpret_cast<const uint32_t*>(&v);
  } else {
    const __half2 v = __floats2half2_rn(acc[4 * j + 2 * h], acc[4 * j + 2 * h + 1]);
    return *reinterpret_cast<const uint32_t*>(&v);
  }
}

// One accumulator converted to D's type (round to nearest).
template <Precision P>
__device__ __forceinline__ OutputT<P> to_output(float x) {
  if constexpr (std::is_same_v<OutputT<P>, __nv_bfloat16>) {
    return __float2bfloat16_rn(x);
  } else {
    return __float2half_rn(x);
  }
}

__device__ __forceinline__ float to_float(__nv_bfloat16 x) { return __bfloat162float(x); }
__device__ __forceinline__ float to_float(__half x) { return __half2float(x); }

// Applied to the warpgroup's accumulators of one box of D (n8 blocks j0 to j0 + kBlocks) just
// before it is staged. A thread's accumulator 4j + 2h + c is column j * 8 + (lane % 4) * 2 + c
// of the tile (row half h, as in packed_pair); `bias` is the tile's slice of the bias in shared
// memory (StagedBias), or null: each element is read once per thread and serves both row
// halves. One switch on the activation, then a loop specialised to it.
template <Precision P, int kN, int kBlocks>
__device__ __forceinline__ void apply_epilogue(float (&acc)[kN / 2], int j0, const EpilogueArgs& e,
                                               const OutputT<P>* bias, int lane) {
  const float alpha = e.alpha;
  ActivationMath::with(e.activation, [&](auto fn) {
#pragma unroll
    for (int j = j0; j < j0 + kBlocks; ++j) {
#pragma unroll
      for (int c = 0; c < 2; ++c) {
        const float b = bias != nullptr ? to_float(bias[j * 8 + (lane % 4) * 2 + c]) : 0.0f;
#pragma unroll
        for (int h = 0; h < 2; ++h) acc[4 * j + 2 * h + c] = fn(fmaf(alpha, acc[4 * j + 2 * h + c], b));
      }
    }
    return 0;
  });
}

// One box of the epilogue: columns q * 64 to q * 64 + kColumns of the warpgroup's 64 x N
// accumulators, converted into a staging buffer and written by one TMA store, which clips at
// the M/N edges and runs on while the next box, or the next tile's main loop, proceeds. Two
// buffers, used in turn (`boxes` counts the boxes this warpgroup has staged). A 64-column box
// is 128-byte swizzled, which makes the fragment writes conflict-free (the 8 rows a warp
// writes at once land in 8 different 16-byte chunks); a narrower one is unswizzled.
template <Precision P, int kN, int kColumns>
__device__ __forceinline__ void store_box(const float (&acc)[kN / 2], int q, uint8_t* staging, uint32_t& boxes,
                                          const CUtensorMap* map, int row0, int n0, int warp, int lane, int consumer,
                                          bool leader) {
  constexpr bool kSwizzled = kColumns == 64;
  uint8_t* buf = staging + (boxes++ & 1) * Config<kN>::kDBoxBytes;
  // The store issued two boxes ago read this buffer; it must be done reading.
  if (leader) bulk_wait_read<1>();
  named_barrier_sync(1 + consumer, 128);
#pragma unroll
  for (int jj = 0; jj < kColumns / 8; ++jj) {
    const int j = q * 8 + jj;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int r = warp * 16 + lane / 4 + h * 8;
      const int row_chunk = kSwizzled ? r * 128 + ((jj ^ (r & 7)) << 4) : r * (kColumns * 2) + (jj << 4);
      *reinterpret_cast<uint32_t*>(buf + row_chunk + (lane % 4) * 4) = packed_pair<P>(acc, j, h);
    }
  }
  fence_proxy_async_shared();
  named_barrier_sync(1 + consumer, 128);
  if (leader) {
    tma_store_2d(map, buf, n0 + q * 64, row0);
    bulk_commit();
  }
}

// A fused build's bias for one tile's columns: each thread of the consumer warpgroup loads its
// share into registers when the tile starts (`load`), so that the loads land during the main loop,
// and writes it to the warpgroup's slice of shared memory when the main loop is done (`publish`),
// for apply_epilogue to read. Reading the bias from global memory in the epilogue instead left
// each box waiting on its loads: a biased linear cost 6-7% more than the plain product on the
// N-fitted tiles (H100, bf16, 1000 and 3000 x 4096 -> 14336).
template <Precision P, int kN>
struct StagedBias {
  static constexpr int kPerThread = (kN + 127) / 128;
  OutputT<P> values[kPerThread];

  // Columns n0.. of `bias` (n elements in all; zero past them: TMA clips those columns of D).
  __device__ __forceinline__ void load(const OutputT<P>* bias, int n0, int n, int thread) {
#pragma unroll
    for (int i = 0; i < kPerThread; ++i) {
      const int column = thread + i * 128;
      values[i] = column < kN && n0 + column < n ? bias[n0 + column] : OutputT<P>(0.0f);
    }
  }
  // The previous tile's epilogue has read the slice: every thread passed its last box's barrier.
  __device__ __forceinline__ void publish(OutputT<P>* slice, int thread, int consumer) const {
#pragma unroll
    for (int i = 0; i < kPerThread; ++i) {
      if (thread + i * 128 < kN) slice[thread + i * 128] = values[i];
    }
    named_barrier_sync(1 + consumer, 128);
  }
};

// The epilogue: the warpgroup's 64 x N accumulators go out as 64 x 64 boxes, and a narrower
// last one (map_d_tail) when N is not a multiple of 64; a fused build applies `epilogue` to each
// box's accumulators first (bias: the tile's slice in shared memory, or null).
template <Precision P, int kN, bool kFused>
__device__ __forceinline__ void store_tile_tma(float (&acc)[kN / 2], uint8_t* staging, const CUtensorMap* map_d,
                                               const CUtensorMap* map_d_tail, int row0, int n0, int warp, int lane,
                                               int consumer, bool leader, uint32_t& boxes,
                                               const EpilogueArgs& epilogue, const OutputT<P>* bias) {
  using C = Config<kN>;
#pragma unroll
  for (int q = 0; q < C::kFullBoxes; ++q) {
    if constexpr (kFused) apply_epilogue<P, kN, 8>(acc, q * 8, epilogue, bias, lane);
    store_box<P, kN, 64>(acc, q, staging, boxes, map_d, row0, n0, warp, lane, consumer, leader);
  }
  if constexpr (C::kTailColumns > 0) {
    if constexpr (kFused) apply_epilogue<P, kN, C::kTailColumns / 8>(acc, C::kFullBoxes * 8, epilogue, bias, lane);
    store_box<P, kN, C::kTailColumns>(acc, C::kFullBoxes, staging, boxes, map_d_tail, row0, n0, warp, lane, consumer,
                                      leader);
  }
}

// The swapped builds' epilogue (kTransposedD): the kernel computed D^T, so the warpgroup's 64 x N
// accumulators are 64 columns of D (rows of D^T) by N rows of D. Each 64-column slice of them
// becomes one box of D, kRows (64, or the tail) rows of 64 elements, 128-byte swizzled, written
// element by element (a thread's two adjacent accumulators belong to two rows of D) and sent by
// one TMA store. col0: the warpgroup's first column of D; row0: the tile's first row of D.
template <Precision P, int kN, int kRows>
__device__ __forceinline__ void store_box_transposed(const float (&acc)[kN / 2], int q, uint8_t* staging,
                                                    uint32_t& boxes, const CUtensorMap* map, int col0, int row0,
                                                    int warp, int lane, int consumer, bool leader) {
  uint8_t* buf = staging + (boxes++ & 1) * Config<kN>::kDBoxBytes;
  // The store issued two boxes ago read this buffer; it must be done reading.
  if (leader) bulk_wait_read<1>();
  named_barrier_sync(1 + consumer, 128);
#pragma unroll
  for (int jj = 0; jj < kRows / 8; ++jj) {
    const int j = q * 8 + jj;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int column = warp * 16 + lane / 4 + h * 8;  // of the box: D^T's row within the warpgroup's 64
#pragma unroll
      for (int c = 0; c < 2; ++c) {
        const int row = jj * 8 + (lane % 4) * 2 + c;  // of the box: D^T's column
        // 128-byte swizzle: the 16-byte chunk (8 columns) of a row moves by the row's index mod 8.
        const int offset = row * 128 + (((column >> 3) ^ (row & 7)) << 4) + (column & 7) * 2;
        *reinterpret_cast<OutputT<P>*>(buf + offset) = to_output<P>(acc[4 * j + 2 * h + c]);
      }
    }
  }
  fence_proxy_async_shared();
  named_barrier_sync(1 + consumer, 128);
  if (leader) {
    tma_store_2d(map, buf, col0, row0 + q * 64);
    bulk_commit();
  }
}

template <Precision P, int kN>
__device__ __forceinline__ void store_tile_transposed(const float (&acc)[kN / 2], uint8_t* staging,
                                                     const CUtensorMap* map_d, const CUtensorMap* map_d_tail,
                                                     int col0, int row0, int warp, int lane, int consumer, bool leader,
                                                     uint32_t& boxes) {
  using C = Config<kN>;
#pragma unroll
  for (int q = 0; q < C::kFullBoxes; ++q) {
    store_box_transposed<P, kN, 64>(acc, q, staging, boxes, map_d, col0, row0, warp, lane, consumer, leader);
  }
  if constexpr (C::kTailColumns > 0) {
    store_box_transposed<P, kN, C::kTailColumns>(acc, C::kFullBoxes, staging, boxes, map_d_tail, col0, row0, warp,
                                                 lane, consumer, leader);
  }
}

// Split-K (SliceSum::kLastSlice): a tile's K is cut into `splits` slices, each a work unit of its
// own, running at once where the grid holds them. Every slice but the last writes its warpgroup's
// 64 x N float32 partial to the workspace (in fragment order: each thread's accumulators, four at a
// time, 128 threads side by side, so every store of a warp is 512 contiguous bytes) and counts
// itself in at the warpgroup's half of the tile. The last slice, its own partial in registers,
// waits until the others have counted in, adds theirs in slice order and runs the epilogue as an
// unsplit tile would: the same sum (own + slice 0 + slice 1 + ...) on every run. Work unit u is
// tile u % tiles of slice u / tiles and a CTA takes its units in increasing u, so a unit waits only
// on units before it, which wait on nothing (slices before the last) or complete by the same
// argument: with every CTA of the grid resident (one per SM, at most the SM count) no order
// deadlocks. (The slice that arrived last summing, every slice writing its partial and none
// waiting, cost a partial written and read back per tile: 777 x 1024 x 4096 in 2 slices, H200.)
// `arrivals` (two counts per tile) is zeroed before each launch.
template <int kN>
struct LastSlice {
  static constexpr int kFloats = 64 * kN;  // one warpgroup's partial
  float* partials;                         // tiles x (splits - 1) x 2 warpgroups x kFloats
  int* arrivals;                           // tiles x 2
  int splits;

  __device__ __forceinline__ float4* slot(int tile, int slice, int consumer) const {
    return reinterpret_cast<float4*>(partials +
                                     ((static_cast<size_t>(tile) * (splits - 1) + slice) * 2 + consumer) * kFloats);
  }

  // True in every thread of the warpgroup when `acc` now holds the tile's sum (the last slice);
  // false when the last slice will store the tile.
  __device__ __forceinline__ bool sum(float (&acc)[kN / 2], int tile, int slice, int consumer, int thread,
                                      bool leader) const {
    int* count = &arrivals[tile * 2 + consumer];
    if (slice < splits - 1) {
      float4* mine = slot(tile, slice, consumer) + thread;
#pragma unroll
      for (int i = 0; i < kN / 8; ++i) {
        __stcg(mine + i * 128, make_float4(acc[4 * i], acc[4 * i + 1], acc[4 * i + 2], acc[4 * i + 3]));
      }
      // The warpgroup's stores are ordered before the leader's release by the barrier, and the
      // release before the last slice's acquire of the count: the partial is visible when counted.
      named_barrier_sync(1 + consumer, 128);
      if (leader) add_release(count, 1);
      return false;
    }
    if (leader) {
      while (load_acquire(count) < splits - 1) __nanosleep(64);
    }
    named_barrier_sync(1 + consumer, 128);
    // Slice by slice, so that each step's kN / 8 loads of a thread are in flight at once.
    for (int s = 0; s < splits - 1; ++s) {
      const float4* part = slot(tile, s, consumer) + thread;
#pragma unroll
      for (int i = 0; i < kN / 8; ++i) {
        const float4 v = __ldcg(part + i * 128);
        acc[4 * i] += v.x;
        acc[4 * i + 1] += v.y;
        acc[4 * i + 2] += v.z;
        acc[4 * i + 3] += v.w;
      }
    }
    return true;
  }
};

// The first K tile of slice `slice` of `splits` over k_iters K tiles (slice == splits: the end).
__device__ __forceinline__ int slice_begin(int slice, int splits, int k_iters) {
  return static_cast<int>(static_cast<int64_t>(slice) * k_iters / splits);
}

// D (m x n, row-major, ldd) = A * B, the kernel's operands K-major or MN-major for wgmma
// (kAMNMajor: A stored K x M, a column-major A; kBMNMajor: B stored K x N, a row-major B; swapped,
// the problem's B and A, Gemm6::kKernelAMNMajor and kKernelBMNMajor);
// tiles of 128 x kN. map_d_tail: D in boxes of the last kTailColumns columns of a tile (when N
// is not a multiple of 64). kFused: `epilogue` applied before D is stored (else unused).
// kTransposedD: the product computed is D^T (the swapped builds: A = W, B = x), stored into D
// (n x m, row-major) by store_tile_transposed; map_d_tail then holds boxes of the last
// kTailColumns rows of D. split.splits > 1: split-K (LastSlice), the work units each tile's K
// slices; 1: one unit per tile (split's workspace unused).
template <Precision P, bool kBMNMajor, int kN, bool kFused, bool kTransposedD = false, bool kAMNMajor = false>
__global__ void __launch_bounds__(Config<kN>::kThreads, 1)
    gemm6_kernel(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
                 const __grid_constant__ CUtensorMap map_d, const __grid_constant__ CUtensorMap map_d_tail, int m,
                 int n, int k, int band_rows, EpilogueArgs epilogue, LastSlice<kN> split) {
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using C = Config<kN>;
  // An MN-major B (a row-major B; swapped, a column-major A) is loaded in 64-column boxes.
  static_assert(!kBMNMajor || C::kTailColumns == 0, "MN-major B: kN a multiple of 64");
  static_assert(!(kTransposedD && kFused), "the swapped builds: plain");
  static_assert(!(kAMNMajor && kFused), "MN-major A: the plain builds");
  extern __shared__ uint8_t smem_raw[];
  // 128-byte swizzle repeats every 1024 bytes; TMA and the wgmma descriptors (base offset 0)
  // both assume each tile starts on such a boundary.
  uint8_t* smem = smem_raw + ((1024 - (smem_addr(smem_raw) & 1023)) & 1023);
  uint8_t* d_staging = smem + C::kStages * C::kStageBytes;
  uint64_t* full = reinterpret_cast<uint64_t*>(d_staging + C::kDStagingBytes);
  uint64_t* empty = full + C::kStages;

  const int tid = static_cast<int>(threadIdx.x);
  const int tiles_m = ceil_div(m, C::kTileM);
  const int tiles_n = ceil_div(n, C::kTileN);
  const int num_tiles = tiles_m * tiles_n;
  const int k_iters = ceil_div(k, C::kTileK);
  // Work unit u: tile u % num_tiles, K slice u / num_tiles (slice 0 of every tile first, so the
  // CTAs running together share the operands' K range in L2, as unsplit tiles do).
  const int units = num_tiles * split.splits;

  if (tid == 0) {
    for (int s = 0; s < C::kStages; ++s) {
      mbar_init(&full[s], 1);   // the producer's arrive.expect_tx
      mbar_init(&empty[s], 2);  // one arrival per consumer warpgroup
    }
    fence_barrier_init();
  }
  __syncthreads();

  if (tid < 128) {
    // ---- producer warpgroup: one thread issues every TMA load ----------------------------------
    setmaxnreg_dec<C::kProducerRegs>();
    if (tid == 0) {
      tma_prefetch_descriptor(&map_a);
      tma_prefetch_descriptor(&map_b);
      int stage = 0;
      uint32_t phase = 0;
      for (int u = blockIdx.x; u < units; u += gridDim.x) {
        const int t = u % num_tiles, slice = u / num_tiles;
        const TileCoord tc = tile_coord(t, tiles_m, tiles_n, band_rows);
        const int m0 = tc.m * C::kTileM;
        const int n0 = tc.n * C::kTileN;
        const int kt_end = slice_begin(slice + 1, split.splits, k_iters);
        for (int kt = slice_begin(slice, split.splits, k_iters); kt < kt_end; ++kt) {
          mbar_wait(&empty[stage], phase ^ 1);
          uint8_t* a_dst = smem + stage * C::kStageBytes;
          uint8_t* b_dst = a_dst + C::kABytes;
          const int k0 = kt * C::kTileK;
          mbar_arrive_expect_tx(&full[stage], C::kStageBytes);
          if constexpr (kAMNMajor) {
            // Boxes of 64 m x 64 k (128 bytes of m per k-row), 8 KiB apart: one per consumer.
            tma_load_2d(a_dst, &map_a, &full[stage], m0, k0);
            tma_load_2d(a_dst + 8192, &map_a, &full[stage], m0 + 64, k0);
          } else {
            tma_load_2d(a_dst, &map_a, &full[stage], k0, m0);
          }
          if constexpr (kBMNMajor) {
            // Boxes of 64 n x 64 k (128 bytes of n per k-row), 8 KiB apart.
#pragma unroll
            for (int box = 0; box < C::kTileN / 64; ++box) {
              tma_load_2d(b_dst + box * 8192, &map_b, &full[stage], n0 + box * 64, k0);
            }
          } else {
            tma_load_2d(b_dst, &map_b, &full[stage], k0, n0);
          }
          if (++stage == C::kStages) {
            stage = 0;
            phase ^= 1;
          }
        }
      }
    }
  } else {
    // ---- consumer warpgroups: wgmma from shared memory, accumulators in registers --------------
    setmaxnreg_inc<C::kConsumerRegs>();
    const int consumer = tid / 128 - 1;  // which 64-row half of the tile
    const int warp = (tid / 32) & 3;
    const int lane = tid & 31;
    const bool leader = (tid & 127) == 0;  // releases stages and issues the warpgroup's TMA stores
    const uint32_t smem_base = smem_addr(smem);
    uint8_t* staging = d_staging + consumer * 2 * C::kDBoxBytes;
    // A fused build's bias (null: none) and this warpgroup's slice of shared memory for it.
    const OutputT<P>* bias = kFused ? static_cast<const OutputT<P>*>(epilogue.bias) : nullptr;
    OutputT<P>* bias_slice = reinterpret_cast<OutputT<P>*>(empty + C::kStages) + consumer * C::kTileN;
    StagedBias<P, kN> staged_bias;

    float acc[C::kAccumulators];
    int stage = 0;
    uint32_t phase = 0;
    uint32_t boxes = 0;  // D boxes this warpgroup has staged (store_tile_tma)
    for (int u = blockIdx.x; u < units; u += gridDim.x) {
      const int t = u % num_tiles, slice = u / num_tiles;
      const TileCoord tc = tile_coord(t, tiles_m, tiles_n, band_rows);
      const int m0 = tc.m * C::kTileM;
      const int n0 = tc.n * C::kTileN;
#pragma unroll
      for (int i = 0; i < C::kAccumulators; ++i) acc[i] = 0.0f;
      if (bias != nullptr) staged_bias.load(bias, n0, n, tid & 127);

      int previous = -1;
      const int kt_end = slice_begin(slice + 1, split.splits, k_iters);
      for (int kt = slice_begin(slice, split.splits, k_iters); kt < kt_end; ++kt) {
        mbar_wait(&full[stage], phase);
        const uint32_t a_addr = smem_base + stage * C::kStageBytes + consumer * 64 * 128;
        const uint32_t b_addr = smem_base + stage * C::kStageBytes + C::kABytes;
        fence_accumulators(acc);
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < C::kTileK / 16; ++kk) {
          // K-major: the next 16 k are the next 32 bytes of each swizzled row. MN-major A: the
          // next 16 rows of 128 bytes (this warpgroup's 64 m are one box).
          const uint64_t desc_a = kAMNMajor ? make_smem_desc(a_addr + kk * 2048, 8192, 1024)
                                             : make_smem_desc(a_addr + kk * 32, 16, 1024);
          // MN-major B: the next 16 k are the next 16 rows of 128 bytes; n blocks are 8 KiB apart.
          const uint64_t desc_b = kBMNMajor ? make_smem_desc(b_addr + kk * 2048, 8192, 1024)
                                             : make_smem_desc(b_addr + kk * 32, 16, 1024);
          wgmma_tile_k16<P, kAMNMajor, kBMNMajor, kN>(acc, desc_a, desc_b);
        }
        wgmma_commit();
        // Keep one group in flight: the tensor cores go on to this stage while the previous
        // one, now read, goes back to the producer. (Waiting for zero and releasing this stage
        // at once measured the same or 1-3% slower.)
        wgmma_wait<1>();
        if (previous >= 0 && leader) mbar_arrive(&empty[previous]);
        previous = stage;
        if (++stage == C::kStages) {
          stage = 0;
          phase ^= 1;
        }
      }
      wgmma_wait<0>();
      fence_accumulators(acc);
      if (previous >= 0 && leader) mbar_arrive(&empty[previous]);
      if (split.splits > 1 && !split.sum(acc, t, slice, consumer, tid & 127, leader)) continue;
      if (bias != nullptr) staged_bias.publish(bias_slice, tid & 127, consumer);
      if constexpr (kTransposedD) {
        store_tile_transposed<P, kN>(acc, staging, &map_d, &map_d_tail, m0 + consumer * 64, n0, warp, lane, consumer,
                                     leader, boxes);
      } else {
        store_tile_tma<P, kN, kFused>(acc, staging, &map_d, &map_d_tail, m0 + consumer * 64, n0, warp, lane, consumer,
                                      leader, boxes, epilogue, bias != nullptr ? bias_slice : nullptr);
      }
    }
    // The last TMA stores must be complete before the CTA, and its shared memory, goes away.
    if (leader) bulk_wait_all();
  }
#endif
}

// --- host side -----------------------------------------------------------------------------

inline KernelStatus from_cuda(cudaError_t error) {
  if (error == cudaSuccess) return {};
  return {KernelStatus::kLaunchFailed, cudaGetErrorString(error)};
}

// cuTensorMapEncodeTiled is a driver API call; asking the runtime for its address keeps the
// extension free of a link-time dependency on libcuda. Looked up once per process.
inline PFN_cuTensorMapEncodeTiled_v12000 encode_tiled() {
  static const PFN_cuTensorMapEncodeTiled_v12000 fn = [] {
    void* p = nullptr;
    cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
#if CUDART_VERSION >= 12050
    const cudaError_t error =
        cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault, &found);
#else
    const cudaError_t error = cudaGetDriverEntryPoint("cuTensorMapEncodeTiled", &p, cudaEnableDefault, &found);
#endif
    if (error != cudaSuccess || found != cudaDriverEntryPointSuccess) p = nullptr;
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(p);
  }();
  return fn;
}

// How much of L2 a box's load brings in with each line it reads. Rows on 128-byte boundaries: a
// box row is one 128-byte line and 256-byte promotion brings the next K step's line with it.
// Rows off 128-byte boundaries (K not a multiple of 64 in F.linear's layout): each box row
// straddles two lines, and 256-byte promotion then fetches lines no box needs soon; 128 bytes
// (CUTLASS's default) does not. Measured (H200, 2026-11-27, bf16 "rc", the n256 build against torch.mm,
// alternated): K = 920, 3032, 4328, 8664, 792, 4104: 0.72, 0.76, 0.72, 0.63, 0.71, 0.76x with
// 256-byte promotion, 0.82, 0.89, 0.81, 0.69, 0.82, 0.87x with 128-byte; with K = 4096, 256-byte
// promotion was 0.2-6% faster.
inline CUtensorMapL2promotion l2_promotion(const void* base, int64_t ld) {
  const bool lines = reinterpret_cast<uintptr_t>(base) % 128 == 0 && (ld * 2) % 128 == 0;
  return lines ? CU_TENSOR_MAP_L2_PROMOTION_L2_256B : CU_TENSOR_MAP_L2_PROMOTION_L2_128B;
}

// A 2-D tensor map over a matrix whose rows are `inner` contiguous 16-bit elements,
// `outer` rows `ld` elements apart, read in boxes of box_inner x box_outer with 128-byte swizzle
// (or none). Out-of-range elements of a box read as zero (FLOAT_OOB_FILL_NONE).
inline bool encode_map(CUtensorMap* map, Precision p, const void* base, int64_t inner, int64_t outer, int64_t ld,
                       int box_inner, int box_outer, CUtensorMapSwizzle swizzle = CU_TENSOR_MAP_SWIZZLE_128B) {
  const cuuint64_t dims[2] = {static_cast<cuuint64_t>(inner), static_cast<cuuint64_t>(outer)};
  const cuuint64_t strides[1] = {static_cast<cuuint64_t>(ld) * 2};
  const cuuint32_t box[2] = {static_cast<cuuint32_t>(box_inner), static_cast<cuuint32_t>(box_outer)};
  const cuuint32_t element_strides[2] = {1, 1};
  const CUresult r = encode_tiled()(
      map, p == Precision::kBF16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2,
      const_cast<void*>(base), dims, strides, box, element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
      swizzle, l2_promotion(base, ld), CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  return r == CUDA_SUCCESS;
}

// kSwap: the swapped build: the kernel computes D^T = B^T A^T, its A the problem's B (N x K:
// K-major for a column-major B, MN-major for a row-major one) and its B the problem's A (M x K:
// K-major for a row-major A, MN-major for a column-major one, whose kN must then be whole 64-row
// boxes), on tiles of 128 of N by kN of M, and stores D^T transposed into D.
// LA: A row-major (K-major) or column-major (MN-major for wgmma, the transpose bit set: the weight
// gradient's "cr", and "cc").
template <Precision P, Layout LB, int kN = 256, bool kFused = false, bool kSwap = false,
          Layout LA = Layout::kRowMajor>
struct Gemm6 {
  using C = Config<kN>;
  static constexpr bool kBRowMajor = LB == Layout::kRowMajor;
  static constexpr bool kAColMajor = LA == Layout::kColMajor;
  // The kernel's operands MN-major (the wgmma transpose bits): swapped, its A is the problem's B.
  static constexpr bool kKernelAMNMajor = kSwap ? kBRowMajor : kAColMajor;
  static constexpr bool kKernelBMNMajor = kSwap ? kAColMajor : kBRowMajor;
  static_assert(!kSwap || !kFused, "the swapped builds: plain");
  static_assert(!kAColMajor || !kFused, "column-major A: the plain builds");
  // TMA: global addresses and row strides must be 16-byte multiples.
  static constexpr int kAlignment = 8;
  // The problem's rows and columns in tiles (the kernel's are the other way round when swapped).
  static int64_t tiles_m(const GemmArgs& g) { return ceil_div(g.m, kSwap ? C::kTileN : C::kTileM); }
  static int64_t tiles_n(const GemmArgs& g) { return ceil_div(g.n, kSwap ? C::kTileM : C::kTileN); }
  static int64_t tiles(const GemmArgs& g) { return tiles_m(g) * tiles_n(g); }

  static constexpr auto kernel() { return &gemm6_kernel<P, kKernelBMNMajor, kN, kFused, kSwap, kKernelAMNMajor>; }

  // Split-K's K slices per tile (1: none).
  static int splits(const GemmArgs& g) { return g.decomposition == Decomposition::kSplitK ? g.splits : 1; }
  // Split-K's workspace: the float32 partials of every slice but the last (LastSlice), then the
  // arrival counts.
  static size_t partial_bytes(const GemmArgs& g) {
    return static_cast<size_t>(tiles(g)) * (splits(g) - 1) * 2 * LastSlice<kN>::kFloats *
           sizeof(float);
  }
  static size_t arrival_bytes(const GemmArgs& g) {
    return static_cast<size_t>(tiles(g)) * 2 * sizeof(int);
  }
  static size_t workspace_bytes(const GemmArgs& g) {
    return splits(g) > 1 && g.m > 0 && g.n > 0 && g.k > 0 ? partial_bytes(g) + arrival_bytes(g) : 0;
  }

  static KernelStatus can_implement(const GemmArgs& g) {
    if (g.layout_a != LA || g.layout_b != LB) {
      return {KernelStatus::kNotSupported, "handwritten wgmma kernel: operand layouts differ from the kernel's"};
    }
    // Tile indices and TMA box coordinates are 32-bit.
    constexpr int64_t kMaxExtent = INT_MAX - C::kTileN;
    if (g.m > kMaxExtent || g.n > kMaxExtent || g.k > kMaxExtent || g.m < 0 || g.n < 0 || g.k < 0) {
      return {KernelStatus::kNotSupported, "handwritten wgmma kernel: M, N and K must be below 2^31 - its tile width"};
    }
    if (tiles(g) > INT_MAX) {
      return {KernelStatus::kNotSupported, "handwritten wgmma kernel: more than 2^31 output tiles"};
    }
    auto aligned = [](const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; };
    if (!aligned(g.a) || !aligned(g.b) || !aligned(g.d) || g.lda % kAlignment || g.ldb % kAlignment ||
        g.ldd % kAlignment) {
      return {KernelStatus::kNotSupported,
              "handwritten wgmma kernel: TMA needs 16-byte aligned A, B, D and leading dimensions"};
    }
    // cuTensorMapEncodeTiled takes strides below 2^40 bytes.
    if (g.lda >= (int64_t{1} << 39) || g.ldb >= (int64_t{1} << 39) || g.ldd >= (int64_t{1} << 39)) {
      return {KernelStatus::kNotSupported, "handwritten wgmma kernel: leading dimension too large for TMA"};
    }
    if (g.decomposition == Decomposition::kStreamK) {
      return {KernelStatus::kNotSupported, "handwritten wgmma kernel: data-parallel or split-K, not stream-K"};
    }
    // Split-K: every slice at least one K tile, and the work units (tiles x slices) 32-bit.
    if (g.decomposition == Decomposition::kSplitK &&
        (g.splits < 1 || g.splits > std::max(1, ceil_div(g.k, C::kTileK)) ||
         tiles(g) * g.splits > INT_MAX)) {
      return {KernelStatus::kNotSupported, "handwritten wgmma kernel: split-K takes 1 to ceil(K / 64) slices"};
    }
    if (kFused && g.k == 0) {  // the epilogue runs after the main loop, and K = 0 launches none
      return {KernelStatus::kNotSupported, "handwritten wgmma kernel: a fused epilogue needs K > 0"};
    }
    return {};
  }

  static KernelStatus run(const GemmArgs& g) {
    if (g.m == 0 || g.n == 0) return {};
    if (g.k == 0) {  // D = 0; a tensor map cannot describe an empty K extent
      return from_cuda(cudaMemset2DAsync(g.d, g.ldd * 2, 0, g.n * 2, g.m, g.stream));
    }
    if (encode_tiled() == nullptr) {
      return {KernelStatus::kLaunchFailed,
              "handwritten wgmma kernel: the CUDA driver does not provide cuTensorMapEncodeTiled (needs 12.0+)"};
    }
    // Built per call (about a microsecond each) and passed by value as __grid_constant__.
    CUtensorMap map_a, map_b, map_d, map_d_tail;
    bool ok;
    if constexpr (kSwap) {
      // The kernel's A: the problem's B as N rows of K (column-major B), or as K rows of N read in
      // boxes of 64 n x 64 k (row-major B, MN-major); its B: the problem's A as M rows of K
      // (row-major A), or as K rows of M in boxes of 64 m x 64 k (column-major A, MN-major). D in
      // 64 x 64 boxes, and boxes of the tile's last kTailColumns rows of D (128-byte rows, swizzled).
      ok = (kBRowMajor ? encode_map(&map_a, P, g.b, g.n, g.k, g.ldb, 64, C::kTileK)
                       : encode_map(&map_a, P, g.b, g.k, g.n, g.ldb, C::kTileK, C::kTileM)) &&
           (kAColMajor ? encode_map(&map_b, P, g.a, g.m, g.k, g.lda, 64, C::kTileK)
                       : encode_map(&map_b, P, g.a, g.k, g.m, g.lda, C::kTileK, C::kTileN)) &&
           encode_map(&map_d, P, g.d, g.n, g.m, g.ldd, 64, 64) &&
           encode_map(&map_d_tail, P, g.d, g.n, g.m, g.ldd, 64, C::kTailColumns == 0 ? 64 : C::kTailColumns);
    } else {
      ok = (kAColMajor ? encode_map(&map_a, P, g.a, g.m, g.k, g.lda, 64, C::kTileK)
                       : encode_map(&map_a, P, g.a, g.k, g.m, g.lda, C::kTileK, C::kTileM)) &&
           (kBRowMajor ? encode_map(&map_b, P, g.b, g.n, g.k, g.ldb, 64, C::kTileK)
                       : encode_map(&map_b, P, g.b, g.k, g.n, g.ldb, C::kTileK, C::kTileN)) &&
           encode_map(&map_d, P, g.d, g.n, g.m, g.ldd, 64, 64) &&
           (C::kTailColumns == 0 ? encode_map(&map_d_tail, P, g.d, g.n, g.m, g.ldd, 64, 64)
                                 : encode_map(&map_d_tail, P, g.d, g.n, g.m, g.ldd, C::kTailColumns, 64,
                                              CU_TENSOR_MAP_SWIZZLE_NONE));
    }
    if (!ok) {
      return {KernelStatus::kLaunchFailed, "handwritten wgmma kernel: cuTensorMapEncodeTiled rejected an operand"};
    }
    // Above 48 KiB of dynamic shared memory: the once-per-device opt-in every kernel uses.
    const cudaError_t opt_in = opt_in_shared_memory_once<Gemm6>(reinterpret_cast<const void*>(kernel()),
                                                                C::kSmemBytes, g.device);
    if (opt_in != cudaSuccess) return from_cuda(opt_in);

    int sm_count = g.sm_count;
    if (sm_count <= 0) {
      const cudaError_t e = cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, g.device);
      if (e != cudaSuccess) return from_cuda(e);
    }
    LastSlice<kN> split{nullptr, nullptr, splits(g)};
    if (split.splits > 1) {
      split.partials = static_cast<float*>(g.workspace);
      split.arrivals = reinterpret_cast<int*>(static_cast<uint8_t*>(g.workspace) + partial_bytes(g));
      const cudaError_t e = cudaMemsetAsync(split.arrivals, 0, arrival_bytes(g), g.stream);
      if (e != cudaSuccess) return from_cuda(e);
    }
    const int units = static_cast<int>(tiles(g)) * split.splits;
    const int grid = std::max(1, std::min(units, sm_count));
    const EpilogueArgs epilogue = kFused ? g.epilogue : EpilogueArgs{};
    // The kernel's M and N: the problem's, or N and M when swapped.
    const int kernel_m = static_cast<int>(kSwap ? g.n : g.m), kernel_n = static_cast<int>(kSwap ? g.m : g.n);
    kernel()<<<grid, C::kThreads, C::kSmemBytes, g.stream>>>(map_a, map_b, map_d, map_d_tail, kernel_m, kernel_n,
                                                          static_cast<int>(g.k), C::kBandRows, epilogue, split);
    return from_cuda(cudaGetLastError());
  }

  // Row: the build's row of the kernel table (csrc/kernel_table.py, dispatch/configs.h), which
  // describes its tile in the problem's terms and lists its decompositions.
  template <class Row>
  static KernelInfo info(const char* name) {
    static_assert(Row::kTileM == (kSwap ? C::kTileN : C::kTileM) && Row::kTileN == (kSwap ? C::kTileM : C::kTileN) &&
                      Row::kTileK == C::kTileK,
                  "the kernel table describes this file's tile (in the problem's terms: M x N)");
    return KernelInfo{
        .name = name,
        .config_id = Row::kId,
        .origin = Origin::kHandwritten,
        .role = Role::kProduct,  // dispatch runs it where its tiles fill the SMs
        .precision = P,
        .layout_a = LA,
        .layout_b = LB,
        .align_a = kAlignment,
        .align_b = kAlignment,
        .align_d = kAlignment,
        .min_cc = 90,
        .max_cc = 90,
        .math = MathClass::kWgmma,
        .mainloop = Mainloop::kTmaWarpSpecialized,
        .tile_m = kSwap ? C::kTileN : C::kTileM,  // in the problem's terms
        .tile_n = kSwap ? C::kTileM : C::kTileN,
        .tile_k = C::kTileK,
        .stages = C::kStages,
        .threads = C::kThreads,
        .smem_bytes = C::kSmemBytes,
        .persistent = true,
        .swap_ab = kSwap,
        .decompositions = Row::kDecompositions,
        .slice_sum = (Row::kDecompositions & decomposition_bit(Decomposition::kSplitK)) != 0 ? SliceSum::kLastSlice
                                                                                          : SliceSum::kSerial,
        .fuses_epilogue = kFused,
        .workspace_bytes = &workspace_bytes,
        .can_implement = &can_implement,
        .run = &run,
    };
  }
};

}  // namespace cutlass_ops::handwritten_sm90

namespace {
namespace hw = cutlass_ops::handwritten_sm90;
using cutlass_ops::Layout;
using cutlass_ops::Precision;
namespace configs = cutlass_ops::configs;

constexpr Precision kBF16 = Precision::kBF16, kF16 = Precision::kF16;
constexpr Layout kRow = Layout::kRowMajor, kCol = Layout::kColMajor;

// One build on tiles of 128 x kN (Row: its row of the kernel table), A's layout LA and B's LB,
// plain or with linear's bias and activation fused.
template <Precision P, int kN, bool kFused, class Row, Layout LB = kCol, Layout LA = kRow>
cutlass_ops::KernelInfo tile_build(const char* name) {
  return hw::Gemm6<P, LB, kN, kFused, false, LA>::template info<Row>(name);
}

// The ladder's step: 128 x 256 tiles, B row- or column-major; and A column-major (x^T @ grad, the
// weight gradient's "cr"; and "cc"): A MN-major for wgmma.
using Step = configs::Handwritten_6_WgmmaTma_128x256x64;
// One build of the step: precision P (p: its name) in layout l (A's layout LA, B's LB).
#define CUTLASS_OPS_STEP(P, p, l, LA, LB) \
  cutlass_ops::KernelRegistrar(tile_build<P, 256, false, Step, LB, LA>("handwritten_sm90_" #p "_" #l "_6_wgmma_tma"))
const cutlass_ops::KernelRegistrar step_builds[] = {
    CUTLASS_OPS_STEP(kBF16, bf16, rr, kRow, kRow), CUTLASS_OPS_STEP(kBF16, bf16, rc, kRow, kCol),
    CUTLASS_OPS_STEP(kF16, f16, rr, kRow, kRow),   CUTLASS_OPS_STEP(kF16, f16, rc, kRow, kCol),
    CUTLASS_OPS_STEP(kBF16, bf16, cr, kCol, kRow), CUTLASS_OPS_STEP(kBF16, bf16, cc, kCol, kCol),
    CUTLASS_OPS_STEP(kF16, f16, cr, kCol, kRow),   CUTLASS_OPS_STEP(kF16, f16, cc, kCol, kCol),
};
#undef CUTLASS_OPS_STEP

// The N-fitted builds: the same kernel on 128 x N tiles, in F.linear's layout (B column-major);
// and the builds of that layout with linear's bias and activation fused, so that a linear with a
// bias runs the tile its plain product would (the CUTLASS fused builds cover the other tiles:
// csrc/kernel_table.py FUSED_WHY). A fused build is priced by its plain build's constants. A
// row-major B (x @ W) is loaded in 64-column boxes, so of these widths 128 and 192 are built for it.
// The plain and the fused build of one precision (p: its name) and tile width N.
#define CUTLASS_OPS_FITTED(P, p, N)                                                                       \
  cutlass_ops::KernelRegistrar(tile_build<P, N, false, configs::Handwritten_6_WgmmaTma_128x##N##x64>(  \
      "handwritten_sm90_" #p "_rc_6_wgmma_tma_n" #N)),                                                    \
      cutlass_ops::KernelRegistrar(tile_build<P, N, true, configs::Handwritten_6_WgmmaTma_128x##N##x64>(\
          "handwritten_sm90_" #p "_rc_6_wgmma_tma_n" #N "_bias_act"))
// Not every width in both precisions: f16's 208-column builds (and f16's swapped 256-row ones
// below, and both precisions' swapped 176-row ones) came within 2% of the fastest kernel on no
// problem of the H200 sweep that the others did not also cover (`python -m cutlass_ops cover`;
// docs/findings.md, "Groups the set cover leaves out"), so the build leaves them out.
// One plain build of precision P (p: its name) in layout l (A's layout LA, B's LB), tile width N.
#define CUTLASS_OPS_FITTED_IN(P, p, l, LA, LB, N)                                                         \
  cutlass_ops::KernelRegistrar(tile_build<P, N, false, configs::Handwritten_6_WgmmaTma_128x##N##x64, LB, \
                                            LA>("handwritten_sm90_" #p "_" #l "_6_wgmma_tma_n" #N))
const cutlass_ops::KernelRegistrar fitted_builds[] = {
    CUTLASS_OPS_FITTED(kBF16, bf16, 128), CUTLASS_OPS_FITTED(kBF16, bf16, 144),
    CUTLASS_OPS_FITTED(kBF16, bf16, 160), CUTLASS_OPS_FITTED(kBF16, bf16, 176),
    CUTLASS_OPS_FITTED(kBF16, bf16, 192), CUTLASS_OPS_FITTED(kBF16, bf16, 208),
    CUTLASS_OPS_FITTED(kBF16, bf16, 224), CUTLASS_OPS_FITTED(kBF16, bf16, 240),
    CUTLASS_OPS_FITTED(kF16, f16, 128),   CUTLASS_OPS_FITTED(kF16, f16, 144),
    CUTLASS_OPS_FITTED(kF16, f16, 160),   CUTLASS_OPS_FITTED(kF16, f16, 176),
    CUTLASS_OPS_FITTED(kF16, f16, 192),   CUTLASS_OPS_FITTED(kF16, f16, 224),
    CUTLASS_OPS_FITTED(kF16, f16, 240),
    CUTLASS_OPS_FITTED_IN(kBF16, bf16, rr, kRow, kRow, 192), CUTLASS_OPS_FITTED_IN(kF16, f16, rr, kRow, kRow, 192),
    CUTLASS_OPS_FITTED_IN(kBF16, bf16, rr, kRow, kRow, 128), CUTLASS_OPS_FITTED_IN(kF16, f16, rr, kRow, kRow, 128),
    // The step's fused builds (its plain ones are registered above).
    cutlass_ops::KernelRegistrar(tile_build<kBF16, 256, true, Step>(
        "handwritten_sm90_bf16_rc_6_wgmma_tma_bias_act")),
    cutlass_ops::KernelRegistrar(tile_build<kF16, 256, true, Step>(
        "handwritten_sm90_f16_rc_6_wgmma_tma_bias_act")),
};
#undef CUTLASS_OPS_FITTED

// The swapped builds (D^T = W @ x^T in F.linear's layout, D^T = W^T @ x^T in x @ W's): tiles of M
// (rows of x) by 128 of N, M running along the WGMMA's N side. A row-major W (K x N) is the
// kernel's A MN-major, in two 64-column boxes, as the plain step reads a column-major A.
template <Precision P, Layout LB, int kM, class Row, Layout LA = Layout::kRowMajor>
cutlass_ops::KernelInfo swapped_build(const char* name) {
  return hw::Gemm6<P, LB, kM, false, true, LA>::template info<Row>(name);
}
// One build of precision P (p: its name) in layout l (A's layout LA, B's LB), M rows of x.
#define CUTLASS_OPS_SWAPPED(P, p, l, LA, LB, M)                                                           \
  cutlass_ops::KernelRegistrar(swapped_build<P, LB, M, configs::Handwritten_6_WgmmaTmaSwapAB_##M##x128x64, \
                                             LA>("handwritten_sm90_" #p "_" #l "_6_wgmma_tma_swapab_m" #M))
// A width's "rc" and "rr" builds.
#define CUTLASS_OPS_SWAPPED_RC_RR(P, p, M) \
  CUTLASS_OPS_SWAPPED(P, p, rc, kRow, kCol, M), CUTLASS_OPS_SWAPPED(P, p, rr, kRow, kRow, M)
const cutlass_ops::KernelRegistrar swapped_builds[] = {
    CUTLASS_OPS_SWAPPED_RC_RR(kBF16, bf16, 192), CUTLASS_OPS_SWAPPED_RC_RR(kBF16, bf16, 208),
    CUTLASS_OPS_SWAPPED_RC_RR(kBF16, bf16, 224), CUTLASS_OPS_SWAPPED_RC_RR(kBF16, bf16, 240),
    CUTLASS_OPS_SWAPPED_RC_RR(kBF16, bf16, 256), CUTLASS_OPS_SWAPPED_RC_RR(kF16, f16, 192),
    CUTLASS_OPS_SWAPPED_RC_RR(kF16, f16, 208),   CUTLASS_OPS_SWAPPED_RC_RR(kF16, f16, 224),
    CUTLASS_OPS_SWAPPED_RC_RR(kF16, f16, 240),
};
// In x @ W's layout also 144 and 160 rows of x: row counts like 1000 fill seven tiles of 144
// (98%) where tiles of 192-256 rows leave more of the last one empty.
const cutlass_ops::KernelRegistrar swapped_rr_builds[] = {
    CUTLASS_OPS_SWAPPED(kBF16, bf16, rr, kRow, kRow, 144), CUTLASS_OPS_SWAPPED(kBF16, bf16, rr, kRow, kRow, 160),
    CUTLASS_OPS_SWAPPED(kF16, f16, rr, kRow, kRow, 144),   CUTLASS_OPS_SWAPPED(kF16, f16, rr, kRow, kRow, 160),
};
#undef CUTLASS_OPS_SWAPPED_RC_RR

// Column-major A (the weight gradient's "cr", x^T @ grad; and "cc"): the fitted and swapped tiles
// whose MN-major operands are whole 64-element boxes. Of the fitted widths, "cr" (B row-major)
// takes 128 and 192 and "cc" (B column-major) 192-240; swapped, A is the kernel's B, MN-major, so
// 192 and 256 rows.
const cutlass_ops::KernelRegistrar col_a_fitted_builds[] = {
    CUTLASS_OPS_FITTED_IN(kBF16, bf16, cr, kCol, kRow, 128), CUTLASS_OPS_FITTED_IN(kF16, f16, cr, kCol, kRow, 128),
    CUTLASS_OPS_FITTED_IN(kBF16, bf16, cr, kCol, kRow, 192), CUTLASS_OPS_FITTED_IN(kF16, f16, cr, kCol, kRow, 192),
    CUTLASS_OPS_FITTED_IN(kBF16, bf16, cc, kCol, kCol, 192), CUTLASS_OPS_FITTED_IN(kF16, f16, cc, kCol, kCol, 192),
    CUTLASS_OPS_FITTED_IN(kBF16, bf16, cc, kCol, kCol, 208),
    CUTLASS_OPS_FITTED_IN(kBF16, bf16, cc, kCol, kCol, 224), CUTLASS_OPS_FITTED_IN(kF16, f16, cc, kCol, kCol, 224),
    CUTLASS_OPS_FITTED_IN(kBF16, bf16, cc, kCol, kCol, 240), CUTLASS_OPS_FITTED_IN(kF16, f16, cc, kCol, kCol, 240),
    CUTLASS_OPS_SWAPPED(kBF16, bf16, cr, kCol, kRow, 192), CUTLASS_OPS_SWAPPED(kF16, f16, cr, kCol, kRow, 192),
    CUTLASS_OPS_SWAPPED(kBF16, bf16, cr, kCol, kRow, 256),
    CUTLASS_OPS_SWAPPED(kBF16, bf16, cc, kCol, kCol, 192), CUTLASS_OPS_SWAPPED(kF16, f16, cc, kCol, kCol, 192),
    CUTLASS_OPS_SWAPPED(kBF16, bf16, cc, kCol, kCol, 256),
};
#undef CUTLASS_OPS_SWAPPED
#undef CUTLASS_OPS_FITTED_IN
}  // namespace
