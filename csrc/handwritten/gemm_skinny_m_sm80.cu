// A hand-written kernel for skinny GEMMs: D (M x N) = A (M x K) * B (K x N) with the M of a
// decode step (1 to 16 rows). Not a step of the ladder: a kernel for the shapes it loses on.
//
// Such a product does 2 * M flops per element of B, so reading B is the whole cost: a 4096 x
// 4096 fp32 weight is 64 MiB, about 20 us at 3.35 TB/s. Tile kernels built for M in the
// hundreds leave most of that bandwidth unused. The idea: stream B exactly once, 16 bytes per
// load with several loads in flight per thread; and where N alone yields too few blocks, or
// blocks with too long a walk down K, split K across blocks too, when the estimate of
// streaming_slab (handwritten.cuh) says the shorter walks outweigh a split's cost. Each block
// then writes its slab's partial sums (fp32; float64 for float64) to a workspace, and a second
// small kernel adds the slabs in a fixed order: deterministic, no atomics. With a single slab,
// blocks write D directly.
//
// A is tiny: each block stages its rows, one K chunk at a time, in shared memory as fp32
// (float64 for float64), so every use of A is a shared-memory read, and A may be row- or
// column-major ("cr" and "cc"): only the staging reads it. A chunk of rows is 1, 2, 4 or 8
// rows (one kernel instance each, so M = 1 runs no multiply-adds on padding rows). Larger M
// takes several chunks. The grid orders them fastest, so the chunks that read the same piece of B run
// together and share it through L2.
//
// rr (B row-major, K x N): a lane owns 2 (float64), 4 (fp32) or 8 (16-bit) consecutive
// columns, so a warp reads 512 contiguous bytes of a row of B. The 4 warps of a block share one column block and
// take alternate rows of its K slab; shared memory adds their partial sums at the end.
// rc (B column-major: element (k, n) at b[n * ldb + k], the N x K weight of F.linear): a warp
// owns 4 columns, each a dot product of A's rows with a contiguous row of the weight. Its
// lanes take alternate 16-byte pieces of K, and a shuffle butterfly adds them at the end.
//
// Alignment: B, and for rr also D, are read and written 16 bytes at a time, hence 2 (float64),
// 4 (fp32) or 8 (16-bit) elements. The planner guarantees that the address, leading dim and contiguous
// extent are multiples of that, so a vector is wholly in or wholly out of the matrix. A is
// read element by element, and rc's D is written that way, so both take alignment 1.
//
// Two builds take B and D at any alignment (a row may start at any element, as with an odd
// leading dim or offset), up to kMaxRowsUnaligned rows: the sweep's unaligned problems of at
// most 16 rows are where the tile kernels, which stage such operands through copies or read
// them element by element, lost most (0.74-0.78x cuBLAS for the best kernel built without them).
//  - `_a1` (Loads::kRealigned) still reads B 16 bytes at a time, from the aligned 16 bytes
//    holding each piece: a piece that starts `mis` elements into one vector ends in the next,
//    which the neighbouring lane loaded (a shuffle brings it; the warp's last lane loads one
//    more), and realign() shifts the pair by `mis` elements. `mis` is the same for every lane
//    of a warp's load (one row of B in rr, one column in rc), so no lane diverges. Elements
//    past the matrix's edge are zeroed before the multiply, never read as A's zero padding
//    times whatever lies beyond.
//  - `_a1_elementwise` (Loads::kElement) reads one element per lane and load, with more loads
//    in flight: rr's column blocks are then 32 columns wide, not 256, and a lane does no
//    shifting. Measured on the sweep's problems (H100), it is the faster of the two on small
//    ones (B below 1 MB: by 10-60%) and `_a1` on large ones (B above 32 MB: by up to 25%); the
//    cost model picks.
// Both write D element by element.
//
// Measured (H100, python -m cutlass_ops bench --suite all, L2 flushed, 2026-11-22), against
// cuBLAS in the same run: fp32 1x128256x4096 in 708 us, B streamed at 2.97 TB/s (1.08x);
// 1x4096x65536 1.08x; 16x4096x4096 1.58x; 16x6144x4096 1.14x; but 1x4096x4096 0.79x (40 us
// for 64 MiB: too little work per SM to hide the latency) and 64 rows 0.46x (past its range).
// bf16 65536x1x4096 (run transposed as 1 x 65536) 1.09x. Where the autotuner found it fastest
// the shipped table names it; the heuristic uses it for fp32, TF32 and 3xTF32 up to 16 rows.
#include <algorithm>
#include <cstring>
#include <type_traits>

#include "dispatch/configs.h"
#include "handwritten/handwritten.cuh"
#include "handwritten/ptx.cuh"

namespace cutlass_ops::handwritten {
namespace {

constexpr configs::ConfigId kConfig = configs::Handwritten_SkinnyM::kId;  // its row of the kernel table
constexpr int kMaxRows = 8;  // rows per chunk: 8 x 8 fp32 accumulators per lane for 16-bit rr
constexpr int kMaxRowsUnaligned = 16;  // the any-alignment builds: two chunks of 8 rows at most

// How a build reads B (and writes D): 16-byte vectors of 16-byte aligned rows; any alignment,
// through the aligned 16 bytes around each piece, realigned in registers (`_a1`); any
// alignment, one element per load (`_a1_elementwise`).
enum class Loads { kVector, kRealigned, kElement };

// Chunks of 8 rows split K until the grid holds 16 warps per SM. With 8 (rr) or 2 x 4 (rc) 16-byte
// loads in flight per lane, that is 64 KiB per SM, about 3x what full bandwidth needs in flight
// (an estimate: 3.35 TB/s x ~0.7 us of latency / 132 SMs = ~18 KiB). Loads of one element move 8
// or 16 times less each: those builds ask for 32 warps per SM.
constexpr int target_warps_per_sm(Loads loads) { return loads == Loads::kElement ? 32 : 16; }
// Fewer rows cut K into slices, each block taking one slab of K, where that is estimated to pay
// (streaming_slab, handwritten.cuh). At most 64: the sum kernel's chain of loads per output
// stays short (for N so small that more would be wanted, B is a few MiB at most).
constexpr int kMaxSplits = 64;

// rr: one column block of 32 lanes x kVec columns per block; its 4 warps take alternate K rows.
// `Acc` is the type the kernel sums in (float; double for float64).
template <class Acc>
struct RowMajorB {
  static constexpr int kWarps = 4;
  static constexpr int kMinBlocks = 4;  // per SM, the launch bounds' (128 registers a thread)
  static constexpr int kChunk = 256;  // K rows of A staged at a time
  // Rows of B in flight per warp, within the registers that `rows` rows of accumulators leave:
  // kRealigned holds each row's extra vector beside it; kElement holds one element per row.
  static constexpr int unroll(Loads loads, int rows) {
    return loads == Loads::kVector ? 8 : loads == Loads::kRealigned ? (rows == kMaxRows ? 2 : 4) : 32 / std::max(rows / 2, 1);
  }
  static constexpr int cols(int vec) { return 32 * vec; }
  static constexpr int slab_quantum(int, Loads loads, int rows) { return kWarps * unroll(loads, rows); }
  // Accumulators in shared memory: the A chunk, then the warps' partial sums.
  static constexpr int smem_elements(int rows, int vec) { return std::max(kChunk, kWarps * cols(vec)) * rows; }
};

// rc: 8 warps of 4 columns each; lanes take alternate 16-byte pieces of K.
template <class Acc>
struct ColMajorB {
  static constexpr int kWarps = 8, kCols = 4;
  static constexpr int kMinBlocks = 2;  // per SM, the launch bounds' (128 registers a thread)
  // K values of A staged at a time: 4 KiB a row (8 rows fit the 48 KiB of static shared memory).
  static constexpr int kChunk = 4096 / static_cast<int>(sizeof(Acc));
  // x kCols loads of B in flight per lane; kRealigned holds each column's extra vector too.
  // float64's 8 x 4 accumulators take 64 registers: with two vectors a column in flight its
  // 8-row vector instances spilled (ptxas, sm_90), so they keep one (3-4% faster on the H200
  // sweep's rows). Its element builds keep four: at two they ran 2-5% slower, though ptxas
  // reported less spilled.
  static constexpr int unroll(Loads loads, int = 0) {
    if constexpr (sizeof(Acc) == 8) {
      if (loads == Loads::kVector) return 1;
    }
    return loads == Loads::kVector ? 2 : loads == Loads::kRealigned ? 1 : 4;
  }
  static constexpr int cols(int) { return kWarps * kCols; }
  static constexpr int slab_quantum(int vec, Loads loads, int) { return 32 * vec * unroll(loads); }
  static constexpr int smem_elements(int rows, int) { return kChunk * rows; }
};

template <Precision P>
using Element = typename ElementTraits<P>::Element;

template <Precision P, Layout L>
using Shape = std::conditional_t<L == Layout::kRowMajor, RowMajorB<Accumulator<P>>, ColMajorB<Accumulator<P>>>;

template <Precision P>
constexpr int kVec = 16 / sizeof(Element<P>);  // elements per 16-byte access

// Elements of B a lane takes per load: a 16-byte vector's, or one.
template <Precision P, Loads kLoads>
constexpr int kPiece = kLoads == Loads::kElement ? 1 : kVec<P>;

// What a lane holds of one load of B: 16 bytes, or one element in a 32-bit (64-bit for
// float64) register.
template <Precision P, Loads kLoads>
using Raw = std::conditional_t<kLoads == Loads::kElement,
                               std::conditional_t<sizeof(Element<P>) == 8, uint64_t, uint32_t>, uint4>;

// How one launch divides the problem. A function of GemmArgs alone, so that workspace_bytes()
// and run() agree.
struct Split {
  int rows;  // rows per chunk: 1, 2, 4 or 8 (the kernel instance)
  int64_t row_chunks, col_blocks;
  int64_t splits, slab;  // K is cut into `splits` slabs of `slab` (the last may be shorter)
  bool evict_first;      // B streamed evict-first in L2 (handwritten.cuh)
  int64_t blocks() const { return row_chunks * col_blocks * splits; }
};

template <Precision P, Layout L, Loads kLoads>
Split plan_split(const GemmArgs& g) {
  using S = Shape<P, L>;
  Split s;
  s.rows = 1;
  while (s.rows < std::min<int64_t>(g.m, kMaxRows)) s.rows *= 2;
  s.row_chunks = ceil_div(g.m, s.rows);
  s.col_blocks = ceil_div(g.n, S::cols(kPiece<P, kLoads>));
  // Each slab stays long enough that its partial sums (written, then read back) cost at most an
  // eighth of its B traffic: 2 * rows * sizeof(accumulator) bytes per column against slab *
  // sizeof(element).
  const int quantum = S::slab_quantum(kPiece<P, kLoads>, kLoads, s.rows);
  const int64_t min_slab = std::max<int64_t>(
      quantum, 16 * s.rows * static_cast<int>(sizeof(Accumulator<P>)) / static_cast<int>(sizeof(Element<P>)));
  const int64_t max_splits = std::clamp<int64_t>(g.k / min_slab, 1, kMaxSplits);
  if (s.rows < kMaxRows) {
    // How many slices: the estimate of handwritten.cuh (streaming_slab); a step is one unrolled
    // iteration of the main loop, whose loads are all issued before the first is used.
    const StreamingGrid grid{s.row_chunks * s.col_blocks, int64_t{std::max(g.sm_count, 1)} * S::kMinBlocks, g.k,
                             quantum, /*in_flight=*/1,
                             static_cast<double>(g.n) * static_cast<double>(g.k) * sizeof(Element<P>),
                             static_cast<double>(sizeof(Accumulator<P>)) * static_cast<double>(g.m) *
                                 static_cast<double>(g.n),
                             g.sm_count, max_splits};
    s.slab = streaming_slab(grid);
  } else {
    // Chunks of 8 rows do 8 FMAs per element of B per row chunk and are bound by them more than
    // by their loads, which the estimate counts alone: under it they ran slower (H200 sweep,
    // 2026-11-29, problems of 5-16 rows: about 4% in 16-bit, 14% in 32-bit, up to 2x), so they
    // fill the GPU with warps as before: K is split until the grid holds about
    // target_warps_per_sm() warps per SM.
    const int64_t target = int64_t{std::max(g.sm_count, 1)} * target_warps_per_sm(kLoads) / S::kWarps;
    const int64_t splits = std::clamp<int64_t>(ceil_div(target, s.row_chunks * s.col_blocks), 1, max_splits);
    s.slab = ceil_div(ceil_div(g.k, splits), quantum) * quantum;
  }
  s.splits = ceil_div(g.k, s.slab);
  s.evict_first = stream_b_evict_first(g, sizeof(Element<P>));
  return s;
}

// ---- device helpers ------------------------------------------------------------------------

// The block's share of the work: a row chunk (fastest), a column block, a K slab.
struct Work {
  int64_t row0, col0, split, k_begin, k_end;
};

__device__ Work block_work(const Split& s, int rows, int cols, int k) {
  int64_t b = blockIdx.x;
  Work w;
  w.row0 = b % s.row_chunks * rows;
  b /= s.row_chunks;
  w.col0 = b % s.col_blocks * cols;
  w.split = b / s.col_blocks;
  w.k_begin = w.split * s.slab;
  w.k_end = min(int64_t{k}, w.k_begin + s.slab);
  return w;
}

// 16 bytes of B, under the L2 policy of l2_stream_policy(s.evict_first).
__device__ uint4 load16(const void* p, uint64_t policy) { return ptx::ld_global_16(p, policy); }
// The 16 bytes that start `mis_bytes` (a multiple of the element size, below 16) into `lo` and
// continue into `hi`, the next aligned 16 bytes: the `_a1` builds' pieces of B.
__device__ uint4 realign(uint4 lo, uint4 hi, int mis_bytes) {
  const uint32_t w[8] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
  const int word = mis_bytes / 4;
  const unsigned shift = mis_bytes % 4 * 8;
  uint32_t x[5];
#pragma unroll
  for (int i = 0; i < 5; ++i) x[i] = word == 0 ? w[i] : word == 1 ? w[i + 1] : word == 2 ? w[i + 2] : w[i + 3];
  return make_uint4(__funnelshift_r(x[0], x[1], shift), __funnelshift_r(x[1], x[2], shift),
                    __funnelshift_r(x[2], x[3], shift), __funnelshift_r(x[3], x[4], shift));
}

// The elements an aligned 16-byte load must step back to reach p: 0 for an aligned p.
template <class T>
__device__ int misalignment(const T* p) {
  return static_cast<int>(reinterpret_cast<uintptr_t>(p) % 16 / sizeof(T));
}

__device__ uint4 shuffle_down(uint4 v) {
  return make_uint4(__shfl_down_sync(0xffffffffu, v.x, 1), __shfl_down_sync(0xffffffffu, v.y, 1),
                    __shfl_down_sync(0xffffffffu, v.z, 1), __shfl_down_sync(0xffffffffu, v.w, 1));
}

// Spelled out because nvcc split a plain uint4 store of the fp32 sums into four scalar ones.
__device__ void store16(void* p, uint4 v) {
  asm volatile("st.global.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w) : "memory");
}

// c + a * b, rounded once, in the accumulator's type.
__device__ __forceinline__ float multiply_add(float a, float b, float c) { return fmaf(a, b, c); }
__device__ __forceinline__ double multiply_add(double a, double b, double c) { return fma(a, b, c); }

// 16 bytes of B as kVec accumulators, and kVec results as 16 bytes of D (rounded once, here).
template <Precision P>
__device__ void unpack(uint4 raw, Accumulator<P> (&x)[kVec<P>]) {
  Element<P> e[kVec<P>];
  memcpy(e, &raw, sizeof(raw));
#pragma unroll
  for (int i = 0; i < kVec<P>; ++i) x[i] = to_accumulator<P>(e[i]);
}

// The `_a1` builds' piece of B for this lane as kVec accumulators: its aligned 16 bytes `raw` and the
// next ones (the next lane's `raw`, or for lane 31 its own `tail` load), shifted by `mis`
// elements. Element j is element `first + j` of a row (rr) or piece (rc) that ends at `end`;
// those at or past it (past N; past the K piece: not zeros of A times B's neighbours) read as
// 0. Every lane of the warp calls it (a shuffle).
template <Precision P>
__device__ void unpack_realigned(uint4 raw, uint4 tail, int lane, int mis, int first, int end,
                                 Accumulator<P> (&x)[kVec<P>]) {
  const uint4 next = shuffle_down(raw);
  unpack<P>(realign(raw, lane == 31 ? tail : next, mis * static_cast<int>(sizeof(Element<P>))), x);
#pragma unroll
  for (int j = 0; j < kVec<P>; ++j) x[j] = first + j < end ? x[j] : Accumulator<P>{0};
}

// One element of B, loaded alone, as an accumulator.
template <Precision P>
__device__ void unpack(Raw<P, Loads::kElement> raw, Accumulator<P> (&x)[1]) {
  Element<P> e;
  if constexpr (sizeof(e) == 2) {
    const auto half = static_cast<uint16_t>(raw);
    memcpy(&e, &half, sizeof(e));
  } else {
    memcpy(&e, &raw, sizeof(e));
  }
  x[0] = to_accumulator<P>(e);
}

// One element of B, under the L2 policy.
template <Precision P>
__device__ Raw<P, Loads::kElement> load_element(const Element<P>* p, uint64_t policy) {
  if constexpr (sizeof(Element<P>) == 2) {
    return ptx::ld_global_2(p, policy);
  } else if constexpr (sizeof(Element<P>) == 4) {
    return ptx::ld_global_4(p, policy);
  } else {
    return ptx::ld_global_8(p, policy);
  }
}

template <Precision P>
__device__ uint4 pack(const Accumulator<P> (&x)[kVec<P>]) {
  Element<P> e[kVec<P>];
#pragma unroll
  for (int i = 0; i < kVec<P>; ++i) e[i] = from_accumulator<P>(x[i]);
  uint4 raw;
  memcpy(&raw, e, sizeof(raw));
  return raw;
}

// A's rows [row0, row0 + kRows) x K [c0, c0 + len) into shared memory as accumulators, element (r, kk)
// at smem[at(r, kk)]; zeros past M and past len, so padding rows and K steps add nothing.
// Consecutive threads read consecutive elements of A in memory: K along one row of a row-major
// A; the chunk's rows, then the next K, of a column-major one (element (r, k) at
// a[k * lda + r]: with lda = M, one contiguous run).
template <Precision P, Layout LA, int kRows, int kChunk, int kThreads, class At>
__device__ void stage_a(const Problem<Element<P>>& p, int64_t row0, int64_t c0, int len, Accumulator<P>* smem,
                        At at) {
  constexpr bool kColA = LA == Layout::kColMajor;
  for (int i = static_cast<int>(threadIdx.x); i < kRows * kChunk; i += kThreads) {
    const int r = kColA ? i % kRows : i / kChunk, kk = kColA ? i / kRows : i % kChunk;
    const bool in = row0 + r < p.m && kk < len;
    const int64_t at_a = kColA ? (c0 + kk) * p.lda + row0 + r : (row0 + r) * p.lda + c0 + kk;
    smem[at(r, kk)] = in ? to_accumulator<P>(p.a[at_a]) : Accumulator<P>{0};
  }
}

// ---- rr: B row-major -----------------------------------------------------------------------

template <Precision P, Layout LA, Loads kLoads, int kRows>
__global__ void __launch_bounds__(RowMajorB<Accumulator<P>>::kWarps * 32, RowMajorB<Accumulator<P>>::kMinBlocks)
    skinny_rr(Problem<Element<P>> p, Split s, Accumulator<P>* ws) {
  using S = RowMajorB<Accumulator<P>>;
  using Acc = Accumulator<P>;
  constexpr int V = kPiece<P, kLoads>, kCols = S::cols(V), kWarps = S::kWarps, kUnroll = S::unroll(kLoads, kRows);
  constexpr bool kRealign = kLoads == Loads::kRealigned;
  constexpr int kChunk = S::kChunk;
  constexpr int kThreads = kWarps * 32;
  static_assert(kChunk % (kWarps * kUnroll) == 0, "a warp's unrolled rows stay inside the staged chunk");
  // First the A chunk, transposed (kRows accumulators per K row: one broadcast read per row of
  // B), at the end the warps' partial sums.
  __shared__ __align__(16) Acc smem[S::smem_elements(kRows, V)];

  const Work w = block_work(s, kRows, kCols, p.k);
  const uint64_t policy = ptx::l2_stream_policy(s.evict_first);  // for B
  const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
  const int64_t col = w.col0 + lane * V;
  const bool col_in = col < p.n;  // aligned builds: N % V == 0, a lane's columns are all in or all out
  const int64_t row_step = kWarps * p.ldb;
  const int64_t cols_left = p.n - w.col0;  // columns of the block's rows inside the matrix

  Acc acc[kRows][V] = {};
  for (int64_t c0 = w.k_begin; c0 < w.k_end; c0 += kChunk) {
    const int len = static_cast<int>(min(int64_t{kChunk}, w.k_end - c0));
    __syncthreads();  // no warp still reads the previous chunk
    stage_a<P, LA, kRows, kChunk, kThreads>(p, w.row0, c0, len, smem, [](int r, int kk) { return kk * kRows + r; });
    __syncthreads();
    const Element<P>* b = p.b + (c0 + warp) * p.ldb + (kRealign ? w.col0 : col);
#pragma unroll 1
    for (int kk = warp; kk < len; kk += kWarps * kUnroll, b += kUnroll * row_step) {
      Raw<P, kLoads> raw[kUnroll];  // all issued before the first is used
      uint4 tail[kUnroll];  // `_a1`: the vector after the block's, for the last lane
      int mis[kUnroll];     // `_a1`: elements from each row's aligned 16 bytes to its start
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const bool row_in = kk + u * kWarps < len;
        if constexpr (kRealign) {
          // The aligned 16 bytes holding element `lane * V` of this row's piece; a load is made
          // only where it holds an element of the matrix.
          const Element<P>* row = b + u * row_step;
          mis[u] = misalignment(row);
          const Element<P>* aligned = row - mis[u];
          raw[u] = row_in && lane * V - mis[u] < cols_left ? load16(aligned + lane * V, policy) : uint4{};
          tail[u] = row_in && lane == 31 && mis[u] > 0 && 32 * V - mis[u] < cols_left
                        ? load16(aligned + 32 * V, policy)
                        : uint4{};
        } else if constexpr (kLoads == Loads::kElement) {
          raw[u] = col_in && row_in ? load_element<P>(b + u * row_step, policy) : Raw<P, kLoads>{0};
        } else {
          raw[u] = col_in && row_in ? load16(b + u * row_step, policy) : uint4{};
        }
      }
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        Acc bv[V], av[kRows];
        if constexpr (kRealign) {
          unpack_realigned<P>(raw[u], tail[u], lane, mis[u], lane * V, cols_left, bv);
        } else {
          unpack<P>(raw[u], bv);
        }
        const Acc* a = smem + (kk + u * kWarps) * kRows;
#pragma unroll
        for (int r = 0; r < kRows; ++r) av[r] = a[r];
#pragma unroll
        for (int r = 0; r < kRows; ++r) {
#pragma unroll
          for (int j = 0; j < V; ++j) acc[r][j] = multiply_add(av[r], bv[j], acc[r][j]);
        }
      }
    }
  }

  // Add the warps' partial sums, warp 0 first, and store groups of V columns of each row.
  __syncthreads();  // the A chunk is dead: smem becomes [warp][row][column]
#pragma unroll
  for (int r = 0; r < kRows; ++r) {
#pragma unroll
    for (int j = 0; j < V; ++j) smem[(warp * kRows + r) * kCols + lane * V + j] = acc[r][j];
  }
  __syncthreads();
  for (int group = static_cast<int>(threadIdx.x); group < kRows * 32; group += kThreads) {
    const int r = group / 32, c = group % 32 * V;
    const int64_t row = w.row0 + r, col0 = w.col0 + c;
    if (row >= p.m || col0 >= p.n) continue;
    Acc sum[V];
#pragma unroll
    for (int j = 0; j < V; ++j) sum[j] = smem[r * kCols + c + j];
#pragma unroll
    for (int v = 1; v < kWarps; ++v) {
#pragma unroll
      for (int j = 0; j < V; ++j) sum[j] += smem[(v * kRows + r) * kCols + c + j];
    }
    if constexpr (kLoads != Loads::kVector) {  // element by element, as far as N
#pragma unroll
      for (int j = 0; j < V; ++j) {
        if (col0 + j >= p.n) break;
        if (s.splits == 1) {
          p.d[row * p.ldd + col0 + j] = from_accumulator<P>(sum[j]);
        } else {
          ws[(w.split * p.m + row) * p.n + col0 + j] = sum[j];
        }
      }
    } else if (s.splits == 1) {
      store16(p.d + row * p.ldd + col0, pack<P>(sum));
    } else {
      Acc* out = ws + (w.split * p.m + row) * p.n + col0;  // N % V == 0: 16-byte aligned
      if constexpr (sizeof(Acc) == 4) {
#pragma unroll
        for (int j = 0; j < V; j += 4) {
          store16(out + j, make_uint4(__float_as_uint(sum[j]), __float_as_uint(sum[j + 1]),
                                      __float_as_uint(sum[j + 2]), __float_as_uint(sum[j + 3])));
        }
      } else {
#pragma unroll
        for (int j = 0; j < V; j += 2) {
          store16(out + j, make_uint4(__double2loint(sum[j]), __double2hiint(sum[j]), __double2loint(sum[j + 1]),
                                      __double2hiint(sum[j + 1])));
        }
      }
    }
  }
}

// ---- rc: B column-major --------------------------------------------------------------------

template <Precision P, Layout LA, Loads kLoads, int kRows>
__global__ void __launch_bounds__(ColMajorB<Accumulator<P>>::kWarps * 32, ColMajorB<Accumulator<P>>::kMinBlocks)
    skinny_rc(Problem<Element<P>> p, Split s, Accumulator<P>* ws) {
  using S = ColMajorB<Accumulator<P>>;
  using Acc = Accumulator<P>;
  constexpr int V = kPiece<P, kLoads>, kCols = S::kCols, kUnroll = S::unroll(kLoads), kChunk = S::kChunk;
  constexpr bool kRealign = kLoads == Loads::kRealigned;
  constexpr int kThreads = S::kWarps * 32;
  constexpr int kStep = 32 * V;     // K covered by one load of every lane
  // float4s of A per lane, row and load (none for single elements, nor for float64's pairs)
  constexpr int kQuads = sizeof(Acc) == 4 ? V / 4 : 0;
  static_assert(kChunk % (kStep * kUnroll) == 0, "a lane's unrolled loads stay inside the staged chunk");
  static_assert(kRows * kCols <= 32, "one lane stores each result");
  // The A chunk, row-major. For 16-bit B a lane needs 8 floats of a row; stored as two float4
  // planes kChunk / 2 apart, a warp's float4 reads are contiguous (no bank conflicts). For
  // single elements, and float64's pairs, the row is plain: consecutive lanes read consecutive
  // accumulators.
  __shared__ __align__(16) Acc as[S::smem_elements(kRows, V)];
  constexpr int kPlane = kQuads > 0 ? kChunk / kQuads : kChunk;

  const Work w = block_work(s, kRows, S::cols(V), p.k);
  const uint64_t policy = ptx::l2_stream_policy(s.evict_first);  // for B
  const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
  const int64_t n0 = w.col0 + warp * kCols;
  const Element<P>* b = p.b + n0 * p.ldb;  // column n0: a contiguous row of the N x K weight
  bool col_in[kCols];
#pragma unroll
  for (int c = 0; c < kCols; ++c) col_in[c] = n0 + c < p.n;

  Acc acc[kRows][kCols] = {};
  for (int64_t c0 = w.k_begin; c0 < w.k_end; c0 += kChunk) {
    const int len = static_cast<int>(min(int64_t{kChunk}, w.k_end - c0));  // a multiple of V
    __syncthreads();  // no warp still reads the previous chunk
    stage_a<P, LA, kRows, kChunk, kThreads>(p, w.row0, c0, len, as, [](int r, int kk) {
      if constexpr (kQuads == 0) return r * kChunk + kk;
      return r * kChunk + kk % V / 4 * kPlane + kk / V * 4 + kk % 4;
    });
    __syncthreads();
    // `_a1`: each column's piece from c0 on starts mis[c] elements into aligned 16 bytes.
    int mis[kCols];
    const Element<P>* aligned[kCols];
#pragma unroll
    for (int c = 0; c < kCols; ++c) {
      mis[c] = kRealign ? misalignment(b + c * p.ldb + c0) : 0;
      aligned[c] = b + c * p.ldb + c0 - mis[c];
    }
    // The loop runs while any lane has work (the `_a1` builds' shuffles need the whole warp);
    // past `len` a lane loads nothing and adds zeros.
#pragma unroll 1
    for (int k0 = 0; k0 < len; k0 += kStep * kUnroll) {
      const int kk = k0 + lane * V;
      Raw<P, kLoads> raw[kUnroll][kCols];  // all issued before the first is used
      uint4 tail[kUnroll][kCols];  // `_a1`: the vector after the warp's, for the last lane
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
#pragma unroll
        for (int c = 0; c < kCols; ++c) {
          const int k = kk + u * kStep;
          if constexpr (kRealign) {
            // Loads only of the aligned 16 bytes that hold an element of the piece [c0, c0 + len).
            raw[u][c] = col_in[c] && k - mis[c] < len ? load16(aligned[c] + k, policy) : uint4{};
            tail[u][c] = col_in[c] && lane == 31 && mis[c] > 0 && k + V - mis[c] < len
                             ? load16(aligned[c] + k + V, policy)
                             : uint4{};
          } else if constexpr (kLoads == Loads::kElement) {
            raw[u][c] = col_in[c] && k < len ? load_element<P>(b + c * p.ldb + c0 + k, policy) : Raw<P, kLoads>{0};
          } else {
            raw[u][c] = col_in[c] && k < len ? load16(b + c * p.ldb + c0 + k, policy) : uint4{};
          }
        }
      }
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const int k = kk + u * kStep;
        Acc bv[kCols][V];
#pragma unroll
        for (int c = 0; c < kCols; ++c) {
          if constexpr (kRealign) {
            unpack_realigned<P>(raw[u][c], tail[u][c], lane, mis[c], k, len, bv[c]);
          } else {
            unpack<P>(raw[u][c], bv[c]);
          }
        }
#pragma unroll
        for (int r = 0; r < kRows; ++r) {
          Acc av[V];
          if constexpr (kQuads == 0) {
#pragma unroll
            for (int j = 0; j < V; ++j) av[j] = as[r * kChunk + k + j];
          } else {
#pragma unroll
            for (int q = 0; q < kQuads; ++q) {
              const float4 a4 = *reinterpret_cast<const float4*>(as + r * kChunk + q * kPlane + k / V * 4);
              av[4 * q] = a4.x;
              av[4 * q + 1] = a4.y;
              av[4 * q + 2] = a4.z;
              av[4 * q + 3] = a4.w;
            }
          }
#pragma unroll
          for (int c = 0; c < kCols; ++c) {
#pragma unroll
            for (int j = 0; j < V; ++j) acc[r][c] = multiply_add(av[j], bv[c][j], acc[r][c]);
          }
        }
      }
    }
  }

  // Butterfly over the lanes: every lane ends with the same sums, added in a fixed order.
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) {
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
#pragma unroll
      for (int c = 0; c < kCols; ++c) acc[r][c] += __shfl_xor_sync(0xffffffffu, acc[r][c], offset);
    }
  }
#pragma unroll
  for (int r = 0; r < kRows; ++r) {
#pragma unroll
    for (int c = 0; c < kCols; ++c) {
      const int64_t row = w.row0 + r, col = n0 + c;
      if (lane != r * kCols + c || row >= p.m || col >= p.n) continue;
      if (s.splits == 1) {
        p.d[row * p.ldd + col] = from_accumulator<P>(acc[r][c]);
      } else {
        ws[(w.split * p.m + row) * p.n + col] = acc[r][c];
      }
    }
  }
}

// ---- host side -----------------------------------------------------------------------------

template <Precision P, Layout LA, Layout L, Loads kLoads, int kRows>
void launch(const Problem<Element<P>>& p, const Split& s, Accumulator<P>* ws, cudaStream_t stream) {
  const auto grid = static_cast<unsigned>(s.blocks());
  if constexpr (L == Layout::kRowMajor) {
    skinny_rr<P, LA, kLoads, kRows><<<grid, Shape<P, L>::kWarps * 32, 0, stream>>>(p, s, ws);
  } else {
    skinny_rc<P, LA, kLoads, kRows><<<grid, Shape<P, L>::kWarps * 32, 0, stream>>>(p, s, ws);
  }
}

// The K one step of the main loop covers, for the instance (rows per chunk) that runs the
// problem: rr keeps more rows of B in flight the fewer its rows (RowMajorB::unroll), which the
// cost model counts as fewer steps down K (KernelInfo::k_step).
template <Precision P, Layout L, Loads kLoads>
int k_step(const GemmArgs& g) {
  return Shape<P, L>::slab_quantum(kPiece<P, kLoads>, kLoads, plan_split<P, L, kLoads>(g).rows);
}

template <Precision P, Layout L, Loads kLoads>
size_t workspace_bytes(const GemmArgs& g) {
  const Split s = plan_split<P, L, kLoads>(g);
  return s.splits > 1 ? static_cast<size_t>(s.splits * g.m * g.n) * sizeof(Accumulator<P>) : 0;
}

template <Precision P, Layout LA, Layout L, Loads kLoads>
KernelStatus can_implement(const GemmArgs& g) {
  if (g.layout_a != LA || g.layout_b != L) {
    constexpr bool kRowA = LA == Layout::kRowMajor, kRowB = L == Layout::kRowMajor;
    return {KernelStatus::kNotSupported, kRowA ? (kRowB ? "skinny-M kernel (rr) takes row-major A and B only"
                                                        : "skinny-M kernel (rc) takes row-major A and column-major B only")
                                               : (kRowB ? "skinny-M kernel (cr) takes column-major A and row-major B only"
                                                        : "skinny-M kernel (cc) takes column-major A and B only")};
  }
  if (g.m > INT_MAX || g.n > INT_MAX || g.k > INT_MAX) {
    return {KernelStatus::kNotSupported, "hand-written kernels take M, N and K below 2^31"};
  }
  if (plan_split<P, L, kLoads>(g).blocks() > INT_MAX) {
    return {KernelStatus::kNotSupported, "more blocks than one grid dimension holds (2^31 - 1)"};
  }
  return {};
}

template <Precision P, Layout LA, Layout L, Loads kLoads>
KernelStatus run(const GemmArgs& g) {
  const Split s = plan_split<P, L, kLoads>(g);
  const Problem<Element<P>> p = make_problem<Element<P>>(g);
  auto* ws = static_cast<Accumulator<P>*>(g.workspace);
  switch (s.rows) {
    case 1: launch<P, LA, L, kLoads, 1>(p, s, ws, g.stream); break;
    case 2: launch<P, LA, L, kLoads, 2>(p, s, ws, g.stream); break;
    case 4: launch<P, LA, L, kLoads, 4>(p, s, ws, g.stream); break;
    default: launch<P, LA, L, kLoads, kMaxRows>(p, s, ws, g.stream); break;
  }
  if (s.splits > 1) {
    const KernelStatus status = launch_status();
    if (!status.ok()) return status;
    launch_sum_slabs<P>(p, ws, s.splits, g.stream);
  }
  return launch_status();
}

// `Registered` is the precision the kernel is listed under; `P` the storage type it computes
// in (TF32 and 3xTF32 are listed on the fp32 code: full fp32 products are at least as
// accurate as either). LA, L: A's and B's layouts. kLoads: how it reads B (Loads).
template <Precision Registered, Precision P, Layout LA, Layout L, Loads kLoads = Loads::kVector>
KernelInfo skinny_info(const char* name) {
  using S = Shape<P, L>;
  constexpr bool kAnyAlign = kLoads != Loads::kVector;
  const int vec = kPiece<P, kLoads>;
  const int align_b = kAnyAlign ? 1 : vec, align_d = kAnyAlign || L == Layout::kColMajor ? 1 : vec;
  // The tile's K: what one main-loop step covers with all its loads of B in flight (at the full
  // row chunk), not the chunk of A staged. A step waits on DRAM's latency once, so the cost
  // model's K steps count these: with the 256-row staging chunk as the step, 184 and 8 rows of
  // K were one step each, and IEEE fp32 40x216x184 "rr" was priced at 6.2 us against 12.0
  // measured (H200 sweep; six steps of 32 rows now).
  KernelInfo info = make_info({name, kConfig, Registered, /*align_a=*/1, align_b, align_d, kMaxRows, S::cols(vec),
                               S::slab_quantum(vec, kLoads, kMaxRows),
                               static_cast<int>(S::smem_elements(kMaxRows, vec) * sizeof(Accumulator<P>)),
                               &can_implement<P, LA, L, kLoads>, &run<P, LA, L, kLoads>});
  info.layout_a = LA;
  info.layout_b = L;
  if (kAnyAlign) info.max_m = kMaxRowsUnaligned;
  info.workspace_bytes = &workspace_bytes<P, L, kLoads>;
  info.k_step = &k_step<P, L, kLoads>;
  info.role = Role::kProduct;
  info.math = MathClass::kSimt;
  info.accumulator_bytes = static_cast<int>(sizeof(Accumulator<P>));
  info.mainloop = Mainloop::kStreaming;
  info.threads = S::kWarps * 32;
  return info;
}

constexpr Precision kF32 = Precision::kF32, kTF32 = Precision::kTF32, kTF32x3 = Precision::kTF32x3,
                    kF16 = Precision::kF16, kBF16 = Precision::kBF16, kF64 = Precision::kF64;
constexpr Layout kRow = Layout::kRowMajor, kCol = Layout::kColMajor;
constexpr Loads kRealigned = Loads::kRealigned, kElement = Loads::kElement;

const KernelRegistrar registrars[] = {
    KernelRegistrar(skinny_info<kF32, kF32, kRow, kRow>("handwritten_sm80_f32_rr_skinny_m")),
    KernelRegistrar(skinny_info<kF32, kF32, kRow, kCol>("handwritten_sm80_f32_rc_skinny_m")),
    KernelRegistrar(skinny_info<kTF32, kF32, kRow, kRow>("handwritten_sm80_tf32_rr_skinny_m")),
    KernelRegistrar(skinny_info<kTF32, kF32, kRow, kCol>("handwritten_sm80_tf32_rc_skinny_m")),
    KernelRegistrar(skinny_info<kTF32x3, kF32, kRow, kRow>("handwritten_sm80_3xtf32_rr_skinny_m")),
    KernelRegistrar(skinny_info<kTF32x3, kF32, kRow, kCol>("handwritten_sm80_3xtf32_rc_skinny_m")),
    KernelRegistrar(skinny_info<kBF16, kBF16, kRow, kRow>("handwritten_sm80_bf16_rr_skinny_m")),
    KernelRegistrar(skinny_info<kBF16, kBF16, kRow, kCol>("handwritten_sm80_bf16_rc_skinny_m")),
    KernelRegistrar(skinny_info<kF16, kF16, kRow, kRow>("handwritten_sm80_f16_rr_skinny_m")),
    KernelRegistrar(skinny_info<kF16, kF16, kRow, kCol>("handwritten_sm80_f16_rc_skinny_m")),
    // B and D at any alignment: aligned 16-byte loads realigned in registers, or single elements.
    KernelRegistrar(skinny_info<kF32, kF32, kRow, kRow, kRealigned>("handwritten_sm80_f32_rr_skinny_m_a1")),
    KernelRegistrar(skinny_info<kF32, kF32, kRow, kCol, kRealigned>("handwritten_sm80_f32_rc_skinny_m_a1")),
    KernelRegistrar(skinny_info<kTF32, kF32, kRow, kRow, kRealigned>("handwritten_sm80_tf32_rr_skinny_m_a1")),
    KernelRegistrar(skinny_info<kTF32, kF32, kRow, kCol, kRealigned>("handwritten_sm80_tf32_rc_skinny_m_a1")),
    KernelRegistrar(skinny_info<kTF32x3, kF32, kRow, kRow, kRealigned>("handwritten_sm80_3xtf32_rr_skinny_m_a1")),
    KernelRegistrar(skinny_info<kTF32x3, kF32, kRow, kCol, kRealigned>("handwritten_sm80_3xtf32_rc_skinny_m_a1")),
    KernelRegistrar(skinny_info<kBF16, kBF16, kRow, kRow, kRealigned>("handwritten_sm80_bf16_rr_skinny_m_a1")),
    KernelRegistrar(skinny_info<kBF16, kBF16, kRow, kCol, kRealigned>("handwritten_sm80_bf16_rc_skinny_m_a1")),
    KernelRegistrar(skinny_info<kF16, kF16, kRow, kRow, kRealigned>("handwritten_sm80_f16_rr_skinny_m_a1")),
    KernelRegistrar(skinny_info<kF16, kF16, kRow, kCol, kRealigned>("handwritten_sm80_f16_rc_skinny_m_a1")),
    KernelRegistrar(skinny_info<kF32, kF32, kRow, kRow, kElement>("handwritten_sm80_f32_rr_skinny_m_a1_elementwise")),
    KernelRegistrar(skinny_info<kF32, kF32, kRow, kCol, kElement>("handwritten_sm80_f32_rc_skinny_m_a1_elementwise")),
    KernelRegistrar(skinny_info<kTF32, kF32, kRow, kRow, kElement>("handwritten_sm80_tf32_rr_skinny_m_a1_elementwise")),
    KernelRegistrar(skinny_info<kTF32, kF32, kRow, kCol, kElement>("handwritten_sm80_tf32_rc_skinny_m_a1_elementwise")),
    KernelRegistrar(skinny_info<kTF32x3, kF32, kRow, kRow, kElement>("handwritten_sm80_3xtf32_rr_skinny_m_a1_elementwise")),
    KernelRegistrar(skinny_info<kTF32x3, kF32, kRow, kCol, kElement>("handwritten_sm80_3xtf32_rc_skinny_m_a1_elementwise")),
    KernelRegistrar(skinny_info<kBF16, kBF16, kRow, kRow, kElement>("handwritten_sm80_bf16_rr_skinny_m_a1_elementwise")),
    KernelRegistrar(skinny_info<kBF16, kBF16, kRow, kCol, kElement>("handwritten_sm80_bf16_rc_skinny_m_a1_elementwise")),
    KernelRegistrar(skinny_info<kF16, kF16, kRow, kRow, kElement>("handwritten_sm80_f16_rr_skinny_m_a1_elementwise")),
    KernelRegistrar(skinny_info<kF16, kF16, kRow, kCol, kElement>("handwritten_sm80_f16_rc_skinny_m_a1_elementwise")),
    // A column-major ("cr", "cc"), 32-bit: the 16-bit problems of these layouts have the
    // tensor-core streaming kernel (gemm_skinny_m_mma_sm80.cu), which takes a column-major A in
    // 16-bit only; TF32 and fp32 few-row products there ran on 64-row tiles (long reductions
    // 0.35-0.7x torch.mm on the H200 sweep, split-K CUTLASS 2.x tiles the best built).
    KernelRegistrar(skinny_info<kF32, kF32, kCol, kRow>("handwritten_sm80_f32_cr_skinny_m")),
    KernelRegistrar(skinny_info<kF32, kF32, kCol, kCol>("handwritten_sm80_f32_cc_skinny_m")),
    KernelRegistrar(skinny_info<kTF32, kF32, kCol, kRow>("handwritten_sm80_tf32_cr_skinny_m")),
    KernelRegistrar(skinny_info<kTF32, kF32, kCol, kCol>("handwritten_sm80_tf32_cc_skinny_m")),
    KernelRegistrar(skinny_info<kTF32x3, kF32, kCol, kRow>("handwritten_sm80_3xtf32_cr_skinny_m")),
    KernelRegistrar(skinny_info<kTF32x3, kF32, kCol, kCol>("handwritten_sm80_3xtf32_cc_skinny_m")),
    KernelRegistrar(skinny_info<kF32, kF32, kCol, kRow, kRealigned>("handwritten_sm80_f32_cr_skinny_m_a1")),
    KernelRegistrar(skinny_info<kF32, kF32, kCol, kCol, kRealigned>("handwritten_sm80_f32_cc_skinny_m_a1")),
    KernelRegistrar(skinny_info<kTF32, kF32, kCol, kRow, kRealigned>("handwritten_sm80_tf32_cr_skinny_m_a1")),
    KernelRegistrar(skinny_info<kTF32, kF32, kCol, kCol, kRealigned>("handwritten_sm80_tf32_cc_skinny_m_a1")),
    KernelRegistrar(skinny_info<kTF32x3, kF32, kCol, kRow, kRealigned>("handwritten_sm80_3xtf32_cr_skinny_m_a1")),
    KernelRegistrar(skinny_info<kTF32x3, kF32, kCol, kCol, kRealigned>("handwritten_sm80_3xtf32_cc_skinny_m_a1")),
    KernelRegistrar(skinny_info<kF32, kF32, kCol, kRow, kElement>("handwritten_sm80_f32_cr_skinny_m_a1_elementwise")),
    KernelRegistrar(skinny_info<kF32, kF32, kCol, kCol, kElement>("handwritten_sm80_f32_cc_skinny_m_a1_elementwise")),
    KernelRegistrar(skinny_info<kTF32, kF32, kCol, kRow, kElement>("handwritten_sm80_tf32_cr_skinny_m_a1_elementwise")),
    KernelRegistrar(skinny_info<kTF32, kF32, kCol, kCol, kElement>("handwritten_sm80_tf32_cc_skinny_m_a1_elementwise")),
    KernelRegistrar(skinny_info<kTF32x3, kF32, kCol, kRow, kElement>("handwritten_sm80_3xtf32_cr_skinny_m_a1_elementwise")),
    KernelRegistrar(skinny_info<kTF32x3, kF32, kCol, kCol, kElement>("handwritten_sm80_3xtf32_cc_skinny_m_a1_elementwise")),
    // float64 in every layout, summed in float64 (CUDA-core FMAs, as torch.mm's are exact
    // float64 products): the tile kernels for float64 are CUTLASS's DMMA builds, on which few-row
    // long reductions ran 0.3-0.7x torch.mm (H200 sweep: 94 problems of at most 16 rows, the
    // best built kernel 0.82x torch.mm geomean, against 1.10x for fp32 with this kernel).
    KernelRegistrar(skinny_info<kF64, kF64, kRow, kRow>("handwritten_sm80_f64_rr_skinny_m")),
    KernelRegistrar(skinny_info<kF64, kF64, kRow, kCol>("handwritten_sm80_f64_rc_skinny_m")),
    KernelRegistrar(skinny_info<kF64, kF64, kCol, kRow>("handwritten_sm80_f64_cr_skinny_m")),
    KernelRegistrar(skinny_info<kF64, kF64, kCol, kCol>("handwritten_sm80_f64_cc_skinny_m")),
    KernelRegistrar(skinny_info<kF64, kF64, kRow, kRow, kRealigned>("handwritten_sm80_f64_rr_skinny_m_a1")),
    KernelRegistrar(skinny_info<kF64, kF64, kRow, kCol, kRealigned>("handwritten_sm80_f64_rc_skinny_m_a1")),
    KernelRegistrar(skinny_info<kF64, kF64, kCol, kRow, kRealigned>("handwritten_sm80_f64_cr_skinny_m_a1")),
    KernelRegistrar(skinny_info<kF64, kF64, kCol, kCol, kRealigned>("handwritten_sm80_f64_cc_skinny_m_a1")),
    KernelRegistrar(skinny_info<kF64, kF64, kRow, kRow, kElement>("handwritten_sm80_f64_rr_skinny_m_a1_elementwise")),
    KernelRegistrar(skinny_info<kF64, kF64, kRow, kCol, kElement>("handwritten_sm80_f64_rc_skinny_m_a1_elementwise")),
    KernelRegistrar(skinny_info<kF64, kF64, kCol, kRow, kElement>("handwritten_sm80_f64_cr_skinny_m_a1_elementwise")),
    KernelRegistrar(skinny_info<kF64, kF64, kCol, kCol, kElement>("handwritten_sm80_f64_cc_skinny_m_a1_elementwise")),
};

}  // namespace
}  // namespace cutlass_ops::handwritten
