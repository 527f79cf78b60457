// What every hand-written kernel of the GEMM ladder shares: its registry entry, the
// tile-to-block mapping, launch-status and shared-memory helpers, and element traits.
//
// The ladder (gemm_<step>_<idea>_sm80.cu) teaches by difference: each step adds one idea
// to the one before and is measured against torch.mm and the CUTLASS kernels. Anything
// that is not that idea lives here, so the files differ only where the ideas do.
//
// No CUTLASS here (common/launch.h includes it; common/smem_opt_in.h does not): these kernels are written from scratch,
// and keeping CUTLASS out keeps that honest and lets a standalone harness build them
// with nothing but nvcc.
#pragma once

#include <algorithm>
#include <array>
#include <climits>
#include <cstdint>
#include <mutex>
#include <type_traits>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include "common/smem_opt_in.h"
#include "dispatch/kernel.h"
#include "dispatch/types.h"

namespace cutlass_ops::handwritten {

__host__ __device__ constexpr int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// ---- element traits ------------------------------------------------------------------
// The storage type of each precision, the type it sums in (fp32; float64 for float64) and the
// conversions to and from fp32. Explicit intrinsics, not operators: torch's build flags
// (-D__CUDA_NO_HALF_OPERATORS__ and friends) hide the operators.
template <Precision P>
struct ElementTraits;

template <>
struct ElementTraits<Precision::kF32> {
  using Element = float;
  using Element2 = float2;
  using Accumulator = float;
  __device__ static float to_float(float x) { return x; }
  __device__ static float from_float(float x) { return x; }
  __device__ static float2 from_float2(float x, float y) { return make_float2(x, y); }
};

// TF32 stores float32 (only the products are TF32).
template <>
struct ElementTraits<Precision::kTF32> : ElementTraits<Precision::kF32> {};

template <>
struct ElementTraits<Precision::kF16> {
  using Element = __half;
  using Element2 = __half2;
  using Accumulator = float;
  __device__ static float to_float(__half x) { return __half2float(x); }
  __device__ static __half from_float(float x) { return __float2half_rn(x); }
  __device__ static __half2 from_float2(float x, float y) { return __floats2half2_rn(x, y); }
};

template <>
struct ElementTraits<Precision::kBF16> {
  using Element = __nv_bfloat16;
  using Element2 = __nv_bfloat162;
  using Accumulator = float;
  __device__ static float to_float(__nv_bfloat16 x) { return __bfloat162float(x); }
  __device__ static __nv_bfloat16 from_float(float x) { return __float2bfloat16_rn(x); }
  __device__ static __nv_bfloat162 from_float2(float x, float y) { return __floats2bfloat162_rn(x, y); }
};

// float64 sums in float64 (as torch.mm does): only the CUDA-core streaming kernel
// (gemm_skinny_m_sm80.cu) is built for it here; the tile kernels are CUTLASS's DMMA builds.
template <>
struct ElementTraits<Precision::kF64> {
  using Element = double;
  using Accumulator = double;
};

// Element -> accumulator and back, for code that sums in either (the streaming kernel and the
// split-K slabs' sum): fp32 through the conversions above, float64 unchanged.
template <Precision P>
using Accumulator = typename ElementTraits<P>::Accumulator;

template <Precision P>
__device__ __forceinline__ Accumulator<P> to_accumulator(typename ElementTraits<P>::Element x) {
  if constexpr (std::is_same_v<Accumulator<P>, typename ElementTraits<P>::Element>) {
    return x;
  } else {
    return ElementTraits<P>::to_float(x);
  }
}

template <Precision P>
__device__ __forceinline__ typename ElementTraits<P>::Element from_accumulator(Accumulator<P> x) {
  if constexpr (std::is_same_v<Accumulator<P>, typename ElementTraits<P>::Element>) {
    return x;
  } else {
    return ElementTraits<P>::from_float(x);
  }
}

// ---- the problem as the kernels see it -------------------------------------------------
// Row-major A (M x K), B (K x N) and D (M x N) with their leading dims. Sizes are 32-bit
// (the planner refuses larger ones); leading dims stay 64-bit so row * ld cannot overflow.
template <class T>
struct Problem {
  int m, n, k;
  const T* a;
  int64_t lda;
  const T* b;
  int64_t ldb;
  T* d;
  int64_t ldd;
};

template <class T>
Problem<T> make_problem(const GemmArgs& g) {
  return {static_cast<int>(g.m), static_cast<int>(g.n), static_cast<int>(g.k), static_cast<const T*>(g.a),
          g.lda, static_cast<const T*>(g.b), g.ldb, static_cast<T*>(g.d), g.ldd};
}

// ---- output tiles -> blocks ------------------------------------------------------------
// A one-dimensional grid over the (tile_m x tile_n) output tiles, N fastest, so that
// consecutive blocks share A's rows. gridDim.x holds 2^31 - 1 blocks while gridDim.y
// holds only 65535, so a tall M x 1 output (M up to 2^31 - 1 rows) still fits.
struct TileGrid {
  int tiles_m, tiles_n;
};

inline int64_t tile_count(const GemmArgs& g, int tile_m, int tile_n) {
  return ceil_div(g.m, tile_m) * ceil_div(g.n, tile_n);
}

inline TileGrid make_tile_grid(const GemmArgs& g, int tile_m, int tile_n) {
  return {static_cast<int>(ceil_div(g.m, tile_m)), static_cast<int>(ceil_div(g.n, tile_n))};
}

// First output row and column of this block's tile. With kGroupM > 1, blocks walk the
// tiles in groups of kGroupM tile rows, column by column inside a group, so the blocks
// resident at one time share fewer distinct rows of A and columns of B and the working set
// stays in L2 (the rasterization Triton's matmul tutorial calls "grouped ordering").
template <int kGroupM = 1>
__device__ inline int2 tile_origin(TileGrid grid, int tile_m, int tile_n) {
  const int tile = static_cast<int>(blockIdx.x);
  if constexpr (kGroupM == 1) {
    return make_int2(tile / grid.tiles_n * tile_m, tile % grid.tiles_n * tile_n);
  } else {
    const int per_group = kGroupM * grid.tiles_n;
    const int first_m = tile / per_group * kGroupM;
    const int rows = min(grid.tiles_m - first_m, kGroupM);  // the last group may be short
    const int in_group = tile % per_group;
    return make_int2((first_m + in_group % rows) * tile_m, in_group / rows * tile_n);
  }
}

// ---- guarded vector loads ------------------------------------------------------------------
// Global -> registers: kCount 16-byte vectors `step` elements apart, starting at `src`. Vector
// j is loaded when `in_range` holds and its index `first + j * stride` is below `limit`
// (rows below M, or K rows below K), else it is zero.
template <class Vec, int kCount, class T>
__device__ __forceinline__ void load_vectors(Vec (&dst)[kCount], const T* src, int64_t step, bool in_range, int first,
                                             int stride, int limit) {
#pragma unroll
  for (int j = 0; j < kCount; ++j) {
    const bool ok = in_range && first + j * stride < limit;
    dst[j] = ok ? *reinterpret_cast<const Vec*>(src + j * step) : Vec{};
  }
}

// ---- staging tile slices through registers (steps 3 and 4) -------------------------------
// A block of kThreads moves one kBK-deep K slice of its A (kBM x kBK) and B (kBK x kBN) tiles
// from global memory into registers, in 16-byte vectors (Vec) of kVec elements, zeros outside
// the matrices; each step then stores them into shared memory its own way. Vector j of A is
// row a_row + j * kRowStepA at k offset a_k; of B, k-row b_k + j * kRowStepB at column b_col,
// so a warp reads contiguous runs of one B row. One source pointer per operand plus a row
// stride: per-vector pointers would cost registers the register-blocked tile cannot spare.
// K and N are multiples of kVec (the kernels declare that alignment), so a vector is wholly
// inside a matrix or wholly outside it.
template <class T, class Vec, int kThreads, int kBM, int kBN, int kBK>
struct SliceLoader {
  static constexpr int kVec = static_cast<int>(sizeof(Vec) / sizeof(T));
  static constexpr int kChunksK = kBK / kVec, kChunksN = kBN / kVec;  // vectors per row of A, B
  static constexpr int kRowStepA = kThreads / kChunksK, kRowStepB = kThreads / kChunksN;
  static constexpr int kLoadsA = kBM * kBK / kVec / kThreads, kLoadsB = kBK * kBN / kVec / kThreads;
  static_assert(kLoadsA >= 1 && kLoadsB >= 1, "each thread loads whole vectors of each slice");

  const int a_row, a_k, b_k, b_col;
  const T* const a_src;  // rows past M are never read
  const T* const b_src;  // nor columns past N
  const bool b_col_ok;
  const int64_t a_row_step, b_row_step;
  Vec a[kLoadsA], b[kLoadsB];  // the slice in flight

  __device__ SliceLoader(const Problem<T>& p, int2 origin, int tid)
      : a_row(tid / kChunksK),
        a_k(tid % kChunksK * kVec),
        b_k(tid / kChunksN),
        b_col(tid % kChunksN * kVec),
        a_src(p.a + (origin.x + a_row) * p.lda + a_k),
        b_src(p.b + b_k * p.ldb + origin.y + b_col),
        b_col_ok(origin.y + b_col < p.n),
        a_row_step(kRowStepA * p.lda),
        b_row_step(kRowStepB * p.ldb) {}

  // Global -> registers: the K slice starting at k0 of the tile whose first row is row0. The
  // sizes come from the kernel's parameters `p` (constant memory) and row0 from the caller,
  // not from copies held here: step 4 (bf16) spilled registers when they were.
  __device__ __forceinline__ void load(const Problem<T>& p, int row0, int k0) {
    load_vectors(a, a_src + k0, a_row_step, k0 + a_k < p.k, row0 + a_row, kRowStepA, p.m);
    load_vectors(b, b_src + k0 * p.ldb, b_row_step, b_col_ok, k0 + b_k, kRowStepB, p.k);
  }
};

// ---- split-K: the slabs' sum ------------------------------------------------------------
// Kernels that split K over blocks write each slab's partial sums (in the precision's
// accumulator: fp32, float64 for float64) to a workspace laid out [split][M][N] (for a batch,
// [matrix][split][M][N], the matrix along gridDim.y); this adds them into D, slab 0 first: the
// same order every run, so the result is deterministic (no atomics).
template <Precision P>
__global__ void __launch_bounds__(256) sum_slabs(Problem<typename ElementTraits<P>::Element> p,
                                                 const Accumulator<P>* ws, int64_t splits, int64_t batch_stride_d) {
  const int64_t mn = int64_t{p.m} * p.n, i = int64_t{blockIdx.x} * 256 + threadIdx.x;
  if (i >= mn) return;
  ws += int64_t{blockIdx.y} * splits * mn;
  p.d += int64_t{blockIdx.y} * batch_stride_d;
  Accumulator<P> sum = ws[i];
  // Unrolled so several loads are in flight; the adds still go slab 0, 1, 2, ...
#pragma unroll 8
  for (int64_t split = 1; split < splits; ++split) sum += ws[split * mn + i];
  p.d[i / p.n * p.ldd + i % p.n] = from_accumulator<P>(sum);
}

template <Precision P>
void launch_sum_slabs(const Problem<typename ElementTraits<P>::Element>& p, const Accumulator<P>* ws, int64_t splits,
                      cudaStream_t stream, int64_t batch = 1, int64_t batch_stride_d = 0) {
  const dim3 grid(static_cast<unsigned>(ceil_div(int64_t{p.m} * p.n, 256)), static_cast<unsigned>(batch));
  sum_slabs<P><<<grid, 256, 0, stream>>>(p, ws, splits, batch_stride_d);
}

// ---- streaming B: the L2 policy ----------------------------------------------------------
// The skinny-M kernels read each element of B once. Marked evict-first in L2, streaming B
// displaces its own lines rather than lines other kernels wrote and will read, and does not
// force their write-back on the way. Measured on an H100 (RESULTS.md at 824ebc1, 2026-11-23, "B streamed evict-first",
// benchmarks/RESULTS.md at 824ebc1; L2 left full of dirty lines by the benchmarks' flush, a 256 MB
// write): 1 x 4096 x 4096 10-13% faster (fp32 39.5 -> 34.4 us, bf16 20.7 -> 18.2), 1-7% up
// to a 235 MB B, but 2-4% slower on 1 GB streams (1 x 128256 x 4096, 1 x 4096 x 65536).
// So: evict-first up to 512 MiB of B.
constexpr int64_t kEvictFirstMaxBBytes = int64_t{512} << 20;
inline bool stream_b_evict_first(const GemmArgs& g, int element_bytes) {
  return g.k * g.n * element_bytes <= kEvictFirstMaxBBytes;
}

// ---- streaming B: how many K slices -------------------------------------------------------
// A streaming kernel's block walks its K slab in steps whose loads it issues together and then
// waits on: its time is about one DRAM round trip per `in_flight` steps, and the grid's time
// that of its slowest slot (blocks beyond one per slot wait for a slot: waves). Cutting K into
// s slices shortens every block's chain s-fold but adds blocks and a fixed cost, the float32
// slabs' round trip and the kernel that sums them. Measured on an H200 (2026-11-29, docs/findings.md,
// "How many K slices a streaming kernel cuts"), that cost was 2-3 us beyond what the shorter
// chains gained; filling the SMs with slices, as the kernels did, cost 5-25% against one slice
// wherever the columns alone gave a block to most SMs (bf16 1 x 1024 x 4096 "rc", tensor-core
// kernel: 12.1 us in 4 slices, 10.3 in one; 1 x 4608 x 3584, CUDA-core kernel: 21.2 us in two
// slices, 18.1 in one), and too few slices were as costly where K is long (1 x 256 x 16384: 20.9 us
// in one slice, 12.3 in 12). So the count is the one that minimises
//   max(waves(s) * round_trips(s) * kLoadRoundTripUs, B's bytes / DRAM)
//     + (s > 1) * (kSliceCostUs + the s slabs of partial sums written and read back / DRAM),
// the fewest slices on a tie. (Without the slabs' traffic, batches of attention's few-column
// products, 16 x 4096 x 96 x 4096 and the like, whose grids are many waves deep, were cut into
// slices that cost 2.6-3.3x their time; the same H200 re-time.)
constexpr double kLoadRoundTripUs = 1.5;      // a step's loads issued to their data used, under load
// A split's fixed cost as the estimate counts it: the slabs, the summing kernel and its launch
// (2-3 us measured beyond the shorter walks' gain) and what the round trips miss of each block's
// start; 3-6 us chose alike on the forced runs.
constexpr double kSliceCostUs = 5.0;
constexpr double kDramBytesPerUsPerSm = 25e3;  // H100 SXM: 3.35 TB/s over 132 SMs (the H200's is higher)

struct StreamingGrid {
  int64_t blocks;     // blocks of one K slice (the grid without a split)
  int64_t slots;      // blocks the GPU runs at once: SMs x blocks per SM at the launch bounds
  int64_t k;          // K
  int64_t quantum;    // K a block covers per step: slabs are multiples of it
  int in_flight;      // steps whose loads a block keeps in flight
  double b_bytes;     // bytes of B streamed
  double slab_bytes;  // one slab of partial sums: the accumulator's bytes x batch x M x N
  int sm_count;
  int64_t max_slices;

  // Member by member: a defaulted comparison is C++20, and torch 2.11's extension build gives
  // nvcc -std=c++17 (later torch versions give C++20, so a build against them passes either way).
  bool operator==(const StreamingGrid& o) const {
    return blocks == o.blocks && slots == o.slots && k == o.k && quantum == o.quantum && in_flight == o.in_flight &&
           b_bytes == o.b_bytes && slab_bytes == o.slab_bytes && sm_count == o.sm_count && max_slices == o.max_slices;
  }
};

// The slab (a multiple of g.quantum) that cuts K into the estimated fastest number of slices.
// A call plans its launch twice (workspace_bytes, then run) and a program repeats its shapes,
// while the search takes up to ~0.5 us (64 counts): each thread keeps its last answer.
inline int64_t streaming_slab(const StreamingGrid& g) {
  thread_local StreamingGrid last{};
  thread_local int64_t last_slab = 0;
  if (last_slab > 0 && g == last) return last_slab;
  const double dram_bytes_per_us = kDramBytesPerUsPerSm * std::max(g.sm_count, 1);
  const double dram_us = g.b_bytes / dram_bytes_per_us;
  int64_t best_slab = ceil_div(g.k, g.quantum) * g.quantum;
  double best_us = 0;
  for (int64_t s = 1; s <= std::max<int64_t>(1, g.max_slices); ++s) {
    const int64_t slab = ceil_div(ceil_div(g.k, s), g.quantum) * g.quantum;
    const int64_t slices = ceil_div(g.k, slab);
    if (s > 1 && slices != s) continue;  // the same slab as a smaller count
    const int64_t waves = ceil_div(g.blocks * slices, std::max<int64_t>(g.slots, 1));
    const int64_t round_trips = ceil_div(slab / g.quantum, int64_t{std::max(g.in_flight, 1)});
    const double chain_us = static_cast<double>(waves * round_trips) * kLoadRoundTripUs;
    const double split_us = slices > 1 ? kSliceCostUs + 2.0 * static_cast<double>(slices) * g.slab_bytes / dram_bytes_per_us : 0.0;
    const double us = std::max(chain_us, dram_us) + split_us;
    if (s == 1 || us < best_us) {
      best_us = us;
      best_slab = slab;
    }
    if (chain_us <= dram_us) break;  // more slices only cost
  }
  last = g;
  last_slab = best_slab;
  return best_slab;
}

// ---- status ------------------------------------------------------------------------------

inline KernelStatus from_cuda(cudaError_t error) {
  if (error == cudaSuccess) return {};
  return {KernelStatus::kLaunchFailed, cudaGetErrorString(error)};
}

// A `<<<>>>` launch reports a bad configuration only through cudaGetLastError. Taking it
// also clears it, so a failure is reported once, by the call that caused it.
inline KernelStatus launch_status() { return from_cuda(cudaGetLastError()); }

// What every ladder kernel accepts: the planner has already matched precision, layouts
// ("rr"), alignment, shared memory and 32-bit sizes. What remains is the grid: one block
// per output tile must fit gridDim.x (reachable only with absurdly thin tiles of huge
// outputs, but a refusal here is an error message instead of a launch failure).
template <int kTileM, int kTileN>
KernelStatus can_implement_tiles(const GemmArgs& g) {
  if (g.layout_a != Layout::kRowMajor || g.layout_b != Layout::kRowMajor) {
    return {KernelStatus::kNotSupported, "hand-written kernels take row-major A and B only"};
  }
  if (g.m > INT_MAX || g.n > INT_MAX || g.k > INT_MAX) {
    return {KernelStatus::kNotSupported, "hand-written kernels take M, N and K below 2^31"};
  }
  if (tile_count(g, kTileM, kTileN) > INT_MAX) {
    return {KernelStatus::kNotSupported, "more output tiles than one grid dimension holds (2^31 - 1)"};
  }
  return {};
}

inline size_t no_workspace(const GemmArgs&) { return 0; }

// ---- shared memory -----------------------------------------------------------------------
// opt_in_shared_memory_once (common/smem_opt_in.h, CUTLASS-free) is the same once-per-device
// opt-in the CUTLASS kernels use; found here by the enclosing namespace.

// Swizzled position of 16-byte chunk `c` of shared-memory row `row`, for rows of
// kChunks chunks. The XOR key changes every 128 bytes of rows (every row when a row is
// >= 128 bytes, every other row at 64 bytes), so the 8 rows one ldmatrix phase reads at a
// fixed logical chunk fall into 8 distinct 16-byte bank groups.
template <int kChunks>
__device__ __forceinline__ int swizzle(int row, int c) {
  constexpr int kRowsPerLine = kChunks >= 8 ? 1 : 8 / kChunks;
  constexpr int kKeys = kChunks >= 8 ? 8 : kChunks;
  return c ^ ((row / kRowsPerLine) % kKeys);
}

// ---- registry entry ----------------------------------------------------------------------
// Every ladder kernel is "rr" (torch's contiguous layout), data-parallel, SM80 and newer,
// and needs no workspace. The name follows handwritten_sm80_<precision>_rr_<step>_<idea>.
struct LadderKernel {
  const char* name;
  configs::ConfigId config;  // its row of the kernel table: "<step>_<idea>[_<tile>_<stages>]"
  Precision precision;
  int align_a, align_b, align_d;  // elements; see dispatch/layout.h
  int tile_m, tile_n, tile_k;
  int smem_bytes;  // shared memory per block, static or dynamic; the planner checks the device has it
  KernelStatus (*can_implement)(const GemmArgs&);
  KernelStatus (*run)(const GemmArgs&);
  // What the cost model reads (dispatch/kernel.h), and whether dispatch may pick it: the ladder
  // steps are teaching kernels that only kernel= runs, unless a step is what a problem needs.
  MathClass math = MathClass::kSimt;
  Mainloop mainloop = Mainloop::kBasic;
  int threads = 0;
  int stages = 1;
  Role role = Role::kTeaching;
};

inline KernelInfo make_info(const LadderKernel& k) {
  KernelInfo info{};
  info.name = k.name;
  info.origin = Origin::kHandwritten;
  info.role = k.role;
  info.math = k.math;
  info.mainloop = k.mainloop;
  info.threads = k.threads;
  info.stages = k.stages;
  info.config_id = k.config;
  info.precision = k.precision;
  info.layout_a = Layout::kRowMajor;
  info.layout_b = Layout::kRowMajor;
  info.align_a = k.align_a;
  info.align_b = k.align_b;
  info.align_d = k.align_d;
  info.min_cc = 80;
  info.max_cc = kAnyNewerCC;
  info.tile_m = k.tile_m;
  info.tile_n = k.tile_n;
  info.tile_k = k.tile_k;
  info.smem_bytes = k.smem_bytes;
  info.decompositions = decomposition_bit(Decomposition::kDataParallel);
  info.workspace_bytes = &no_workspace;
  info.can_implement = k.can_implement;
  info.run = k.run;
  return info;
}

}  // namespace cutlass_ops::handwritten
