// A hand-written tensor-core kernel for 16-bit (and TF32, below) GEMMs with few rows: D (M x N)
// = A (M x K) * B (K x N) for M up to 64 in one block row (decode steps and small batches
// through an LLM's weights), and up to 256 in several.
// Not a step of the ladder: a kernel for the shapes the tile kernels lose on.
//
// With M <= 64 the product does at most 128 flops per element of B, so reading B is the
// cost: a 4096 x 4096 bf16 weight is 32 MiB, ~10 us at 3.35 TB/s. The skinny-M kernel
// (gemm_skinny_m_sm80.cu) streams B through CUDA-core FMAs, which at 16 rows is compute-bound
// (16 fp32 FMAs per element of B); CUTLASS's tiles put B on a tile side of 128-256 and so
// leave few blocks, each with little of B in flight. Here:
//
//  - A block owns 32 columns of D and all of K; its 8 warps each take one contiguous eighth
//    of K. So there are N / 32 blocks (128 at N = 4096), and each warp streams its own 32 x
//    kStageK pieces of B through a private cp.async ring of kStages stages: no block-wide
//    barrier in the main loop, and up to 3 stages of every warp in flight (96 KiB of B per
//    SM at 16 rows) whatever the others do. With a row-major A, a 16-bit column-major B's
//    stage is 32 of its K-contiguous rows, 128 bytes of each (kStageK, below: runs of 64
//    bytes were slower).
//  - The math is mma.sync m16n8k16 (fp32 accumulate), 16 rows of A per mma. A warp holds
//    the few rows of A next to its piece of B in the same stage (cp.async zero-fills the
//    rows past M), and ldmatrix feeds both into fragments: .trans for row-major B, plain
//    for column-major B (the N x K weight of F.linear), whose rows are already K-contiguous.
//  - A may be column-major too (16-bit; "cr" and "cc": the transposed operands of a weight
//    gradient x^T @ dy, or of any product of transposed views). Its stage is then 32 K rows of
//    the M rows' values, M-contiguous, and ldmatrix.trans turns them into A fragments, as it
//    does for row-major B.
//  - 65 to 256 rows (16-bit) take one block row of 64 rows per 64 rows of A, the block rows
//    of one column block next to each other in the grid, so that they read the same pieces of B
//    at about the same time and all but the first find them in L2 (B is then not marked
//    evict-first). Small problems of this size are latency-bound: the tile kernels' prologues
//    (TMA descriptors, barriers, the tile scheduler) cost more than the product.
//  - At the end the 8 warps' partial sums are added through shared memory in a fixed order,
//    so a block writes its 32 columns of D once. K is also split over blocks only where the
//    estimate of streaming_slab (handwritten.cuh) says the shorter walks down K outweigh a
//    split's cost (few column blocks and a long K): then each writes fp32 partial sums to a
//    workspace and sum_slabs (handwritten.cuh) adds them, slab 0 first (deterministic).
//
// Few columns (16-bit, up to 256): D^T = B^T A^T is a few-row problem, so the same kernel runs
// it with the operands' roles and layouts exchanged (B^T of a row-major B is column-major, and
// so on), and stores its result transposed, down D's rows (Split::transposed_d). These are the
// skinny-N kernels: tall outputs with few columns (a projection to a few outputs, x^T @ dy for a
// narrow layer), which the tile kernels cover with mostly empty 64- or 128-column tiles.
//
// Shared memory rows are a stage's K: 64 bytes (32 16-bit elements) or 128 (64 of them, or 32
// floats), XOR-swizzled (swizzle<4> or swizzle<8>, handwritten.cuh) so the 8 rows each ldmatrix
// phase reads fall into 8 distinct bank groups.
//
// TF32 (float32 operands, TF32 products) runs the same design on mma.sync m16n8k8: rows of 32
// floats are 128 bytes, so a stage holds twice the bytes and one block fits an SM; up to 16
// rows. A and column-major B still go through ldmatrix (each 32-bit element is a pair of
// 16-bit ones, and a fragment's element order matches), but row-major B needs its fragments
// transposed, which ldmatrix cannot do for 32-bit elements: each lane reads its two elements
// with plain shared-memory loads, from rows swizzled so the warp's 32 reads hit 32 banks.
// Fragments are rounded to TF32 (to nearest) before the mma, as CUTLASS's TF32 kernels do.
//
// Alignment: A, and B, are read 16 bytes at a time, so 8 elements (4 for TF32: address,
// leading dim and contiguous extent, which is M for a column-major A; the planner guarantees
// it); D is written as element pairs: 2.
//
// Any alignment (16-bit; the `_a1` builds): cp.async moves 4, 8 or 16 aligned bytes, so an
// operand whose rows start at odd elements (an odd leading dim, an offset view) cannot use it.
// There each lane loads element pairs, one element per load (consecutive lanes, consecutive
// pairs: a warp reads 128 contiguous bytes per pair of loads), into registers while the warp
// multiplies the stage before, and stores them into the next stage of its ring afterwards:
// the same shared-memory layout, fragments and mma. Elements past the matrix are zeros. D is
// written element by element. The sweep's small unaligned 16-bit problems are where this
// pays: there the best built kernel (CUTLASS 2.x's 64x64 alignment-1 tile, register-staged)
// took 6-10 us where torch.mm's f16 took 4.5-7 (H100, 2026-11-24).
//
// Batches (bmm): the batch is the grid's second dimension, each matrix at its batch stride
// from the one before (0: one matrix shared by the batch); the whole batch's blocks are the
// grid that the K split is estimated for.
#include <algorithm>
#include <type_traits>
#include <utility>

#include "dispatch/configs.h"
#include "handwritten/handwritten.cuh"
#include "handwritten/ptx.cuh"

namespace cutlass_ops::handwritten {
namespace {

constexpr configs::ConfigId kConfig = configs::Handwritten_SkinnyMMma::kId;
constexpr configs::ConfigId kColumnsConfig = configs::Handwritten_SkinnyNMma::kId;
constexpr int kWarps = 8, kThreads = 32 * kWarps;
constexpr int kBN = 32;  // columns of D per block (and per warp: 4 mma tiles of 8)

// What the element size sets.
template <Precision P>
struct Shape {
  static constexpr int kBytes = sizeof(typename ElementTraits<P>::Element);
  static constexpr int kVec = 16 / kBytes;       // elements per 16-byte chunk
  static constexpr int kMaxRows = kBytes == 2 ? 64 : 16;  // rows of A one block holds
  static constexpr int kMaxM = kBytes == 2 ? 4 * kMaxRows : kMaxRows;  // rows of A the kernel takes
  static constexpr bool kTF32 = P == Precision::kTF32;
};

// One instance per row count (16, 32 or 64 rows of A, padded with zeros): M = 1 costs no
// more mma than M = 16, and the stage sizes follow the rows.
// The any-alignment builds (kAny) hold the next stage in registers, an element pair per 4-byte
// register (24 at 16 rows, 32 at 32): so at most 32 rows to a block (more block rows beside each
// other instead) and two stages (the one multiplied, the one being stored). Two blocks per SM
// at 16 rows (128 registers per thread, at most 12 bytes spilled), one at 32 (~170 registers;
// held to 128, ptxas spilled 16-64 bytes). With 64 rows, ptxas spilled 1.2-1.5 KiB.
constexpr int kAnyMaxRows = 32;

// K per stage. 32: for 16-bit two mma k-steps of 16, shared-memory rows of 64 bytes; for TF32
// four of 8, rows of 128 bytes. The aligned 16-bit builds with a row-major A and a
// column-major B (F.linear's N x K weight, each of its rows K-contiguous) take 64, so that a
// warp copies 128 bytes of each of its 32 weight rows per stage, not 64: in the loads alone,
// runs of 64 bytes took 22-38% longer than runs of 512 at the same bytes in flight from 128
// column blocks on, runs of 128 within 0-6% of 512 (weight_runs_probe, H200, 2026-11-29). In
// the kernel, former over new time on the H200 sweep's candidates (`sweep --retime`): 1.044
// (bf16) and 1.048 (f16) for the few-row "rc" builds; with a column-major A (the "cc" builds,
// and the "rr" few-column builds, whose launched A is B^T) 0.960-0.974, so those keep 32
// (docs/findings.md, "How many K slices a streaming kernel cuts"). A row-major B's stage is K
// rows of kBN columns, 64 bytes each whatever the stage's K; the any-alignment builds hold a
// stage in registers (twice the registers at 64).
template <Precision P, Layout LA, Layout LB, bool kAny>
constexpr int kStageK = Shape<P>::kBytes == 2 && LA == Layout::kRowMajor && LB == Layout::kColMajor && !kAny ? 64 : 32;

template <Precision P, int kMTiles_, bool kAny, int kBK_>
struct Cfg {
  using S = Shape<P>;
  static constexpr int kMTiles = kMTiles_, kRows = 16 * kMTiles, kBK = kBK_;
  static_assert(!kAny || kRows <= kAnyMaxRows, "the any-alignment builds take 32 rows to a block");
  static constexpr int kChunks = kBK / S::kVec;     // chunks per shared-memory row of B (and of a row-major A)
  static constexpr int kSteps = kChunks / 2;        // mma k-steps per stage, two chunks each
  static constexpr int kRowsPerCopy = 32 / kChunks;  // rows one copy instruction of the warp covers
  // A stage: A's kRows x kBK, and B's kBK x kBN (kBN rows of kBK for a column-major B).
  static constexpr int kRowBytes = kBK * S::kBytes;
  static constexpr int kABytes = kRows * kRowBytes, kBBytes = kBN * kRowBytes;
  static constexpr int kStageBytes = kABytes + kBBytes;
  // 4 stages per warp at 16 rows, 3 above, 2 for the any-alignment builds; fewer where 8 warps'
  // stages would pass an SM's 227 KiB of shared memory. K of 32: 16-bit 8 x 4 x 3 KiB = 96 KiB
  // at 16 rows, two blocks per SM; 96 KiB (32 rows, two blocks) and 144 KiB (64 rows, one
  // block); TF32 at 16 rows 8 x 4 x 6 KiB = 192 KiB, one block; any alignment 48 KiB (16 rows),
  // 64 KiB (32 rows). K of 64 (16-bit, row-major A, column-major B): 192 KiB at every row
  // count, one block per SM (4 stages of 6 KiB, 3 of 8, 2 of 12), the same bytes of B in
  // flight per SM as at 32.
  static constexpr int kStages = std::min(kAny ? 2 : kMTiles == 1 ? 4 : 3, (227 << 10) / (kWarps * kStageBytes));
  static_assert(kStages >= 2, "a stage multiplied while the next one loads");
  static constexpr int kWarpBytes = kStages * kStageBytes;
  static constexpr int kSmemBytes = kWarps * kWarpBytes;
  // Blocks per SM that shared memory (228 KiB per SM, 1 KiB of it reserved per block) and
  // the registers (64 Ki per SM; ~80, ~110 and ~170 per thread for 16, 32 and 64 rows) allow.
  static constexpr int kMinBlocks =
      kAny ? 3 - kMTiles : std::min(kMTiles == 1 ? 3 : kMTiles == 2 ? 2 : 1, (228 << 10) / (kSmemBytes + 1024));
  static_assert(kMinBlocks >= 1, "a block's stages fit one SM's shared memory");
  // The epilogue's [warp][row][column] fp32 sums; rows padded by 8 floats so the float2
  // stores of a fragment's 8 rows do not collide in one bank.
  static constexpr int kSumStride = kBN + 8;
  static_assert(kWarps * kRows * kSumStride * 4 <= kSmemBytes, "the partial sums fit in the stages");
  static constexpr int kLoadsA = kRows * kChunks / 32, kLoadsB = kBN * kChunks / 32;  // cp.async per lane
};

// How one launch divides the problem; a function of GemmArgs alone, so that
// workspace_bytes() and run() agree.
struct Split {
  int m_tiles;         // 1, 2 or 4: the instance
  int row_blocks;      // blocks across M, each of 16 * m_tiles rows (more than one: m_tiles = 4, or 2 for kAny)
  int col_blocks;      // blocks across N
  int splits;          // blocks across K (1: no workspace)
  int warp_k;          // K per warp, a multiple of the stage's K; a block covers kWarps * warp_k
  bool evict_first;    // B streamed evict-first in L2 (handwritten.cuh)
  bool transposed_d = false;  // D is stored transposed: the problem is a skinny-N one's D^T = B^T A^T
  int64_t blocks() const { return int64_t{row_blocks} * col_blocks * splits; }  // per matrix of a batch
};

// Elements from one matrix of a batch to the next (0: the batch shares one matrix).
struct BatchStrides {
  int64_t a = 0, b = 0, d = 0;
};
constexpr int64_t kMaxBatch = kMaxGridYZ;  // gridDim.y

// The instance for `m_tiles` tiles of 16 rows (TF32 has only the one of 16 rows) and the
// launched kernel's layouts (a few-column build launches the problem's, flipped and exchanged).
template <Precision P, Layout LA, Layout LB, bool kAny, int kMTiles>
using CfgOf = Cfg<P, kMTiles, kAny, kStageK<P, LA, LB, kAny>>;

// Calls f with a null pointer to the instance that `m_tiles` names (the build's instances: TF32
// has only the one of 16 rows, the any-alignment builds those of 16 and 32), and returns what f
// returns. The one place a run's m_tiles becomes a type.
template <Precision P, Layout LA, Layout LB, bool kAny, class F>
decltype(auto) with_instance(int m_tiles, F&& f) {
  if constexpr (Shape<P>::kMaxRows == 16) {
    return f(static_cast<CfgOf<P, LA, LB, kAny, 1>*>(nullptr));
  } else if constexpr (kAny) {
    if (m_tiles == 1) return f(static_cast<CfgOf<P, LA, LB, true, 1>*>(nullptr));
    return f(static_cast<CfgOf<P, LA, LB, true, 2>*>(nullptr));
  } else {
    if (m_tiles == 1) return f(static_cast<CfgOf<P, LA, LB, false, 1>*>(nullptr));
    if (m_tiles == 2) return f(static_cast<CfgOf<P, LA, LB, false, 2>*>(nullptr));
    return f(static_cast<CfgOf<P, LA, LB, false, 4>*>(nullptr));
  }
}

template <Precision P, Layout LA, Layout LB, bool kAny>
Split plan_split(const GemmArgs& g) {
  constexpr int kBK = kStageK<P, LA, LB, kAny>;
  Split s;
  s.m_tiles = g.m <= 16 ? 1 : g.m <= 32 || kAny ? 2 : 4;
  s.row_blocks = static_cast<int>(std::max<int64_t>(1, ceil_div(g.m, 16 * s.m_tiles)));
  s.col_blocks = static_cast<int>(std::max<int64_t>(1, ceil_div(g.n, kBN)));
  const int64_t k_steps = ceil_div(g.k, kBK);
  // The any-alignment builds are one stage ahead of their warps, not three or four, so a warp
  // waits out a load's latency every stage: they split until every SM holds the blocks it can
  // run (two at 16 rows; bf16 5x2262x2544 "cc": 71 blocks of 10 stages per warp took 20.5 us,
  // three slabs 18.3; H100 sweep, 2026-11-25). The aligned builds cut the slices that the
  // estimate of streaming_slab (handwritten.cuh) says pay: a step is one stage of every warp,
  // `kStages` of them in flight. Never below two stages per warp, nor into more than 64 slabs.
  const int64_t blocks = int64_t{s.row_blocks} * s.col_blocks * std::max<int64_t>(1, g.batch);
  const int64_t max_splits = std::min<int64_t>(std::max<int64_t>(1, k_steps / (2 * kWarps)), 64);
  int64_t splits = 1;
  if constexpr (kAny) {
    const int per_sm =
        with_instance<P, LA, LB, true>(s.m_tiles, [](auto* c) { return std::remove_pointer_t<decltype(c)>::kMinBlocks; });
    const int64_t target = int64_t{g.sm_count} * per_sm;
    splits = std::clamp<int64_t>(target / blocks, 1, max_splits);
  } else {
    // The instance's stages in flight per warp, and blocks per SM.
    const auto [stages, per_sm] = with_instance<P, LA, LB, false>(s.m_tiles, [](auto* c) {
      using C = std::remove_pointer_t<decltype(c)>;
      return std::pair<int, int>{C::kStages, C::kMinBlocks};
    });
    const double batch = static_cast<double>(std::max<int64_t>(1, g.batch));
    const StreamingGrid grid{blocks, int64_t{std::max(g.sm_count, 1)} * per_sm, g.k, int64_t{kWarps} * kBK, stages,
                             batch * static_cast<double>(g.n) * static_cast<double>(g.k) * Shape<P>::kBytes,
                             4.0 * batch * static_cast<double>(g.m) * static_cast<double>(g.n), g.sm_count, max_splits};
    splits = ceil_div(g.k, streaming_slab(grid));
  }
  s.warp_k = static_cast<int>(ceil_div(k_steps, splits * kWarps) * kBK);
  s.splits = static_cast<int>(ceil_div(g.k, int64_t{kWarps} * s.warp_k));
  // B is read once, unless several block rows or the matrices of a batch share it.
  s.evict_first = s.row_blocks == 1 && !(g.batch > 1 && g.batch_stride_b == 0) && stream_b_evict_first(g, Shape<P>::kBytes);
  return s;
}

// Two neighbouring results, into D (its element type) or a float32 workspace slab: one paired
// store where the pair is aligned (the aligned builds), else one element at a time, the second
// only when it lies inside the matrix.
template <bool kAny, class Traits, class Out>
__device__ __forceinline__ void store_pair(Out* dst, float2 sum, bool second) {
  if constexpr (!kAny) {
    if constexpr (std::is_same_v<Out, float>) {
      *reinterpret_cast<float2*>(dst) = sum;
    } else {
      *reinterpret_cast<typename Traits::Element2*>(dst) = Traits::from_float2(sum.x, sum.y);
    }
  } else if constexpr (std::is_same_v<Out, float>) {
    dst[0] = sum.x;
    if (second) dst[1] = sum.y;
  } else {
    dst[0] = Traits::from_float(sum.x);
    if (second) dst[1] = Traits::from_float(sum.y);
  }
}

// The epilogue of a transposed D: element (row, col) of this problem is (col, row) of the stored
// D, so element pairs run down a column here (along a row of D: M here is D's N, even by D's
// alignment, and so is every block's row count; any alignment: the last pair may be one
// element). The workspace slabs are laid out as D is.
template <class C, bool kAny, class T, class Traits>
__device__ __forceinline__ void store_transposed(const Problem<T>& p, const Split& s, float* ws, const float* sums,
                                                 int split, int n0, int row0, int rows_here) {
  const int pairs = (rows_here + 1) / 2;
  for (int i = static_cast<int>(threadIdx.x); i < pairs * kBN; i += kThreads) {
    const int row = i % pairs * 2, c = i / pairs, col = n0 + c;
    if (col >= p.n) continue;
    float2 sum = make_float2(sums[row * C::kSumStride + c], sums[(row + 1) * C::kSumStride + c]);
#pragma unroll
    for (int w = 1; w < kWarps; ++w) {
      sum.x += sums[(w * C::kRows + row) * C::kSumStride + c];
      sum.y += sums[(w * C::kRows + row + 1) * C::kSumStride + c];
    }
    if (s.splits == 1) {
      store_pair<kAny, Traits>(p.d + col * p.ldd + row0 + row, sum, row + 1 < rows_here);
    } else {
      store_pair<kAny, Traits>(ws + (int64_t{split} * p.n + col) * p.m + row0 + row, sum, row + 1 < rows_here);
    }
  }
}

template <Precision P, Layout LA, Layout LB, class C, bool kAny>
__global__ void __launch_bounds__(kThreads, C::kMinBlocks)
    skinny_mma(Problem<typename ElementTraits<P>::Element> p, Split s, BatchStrides batch, float* ws) {
  using T = typename ElementTraits<P>::Element;
  using S = Shape<P>;
  constexpr int kBK = C::kBK, kChunks = C::kChunks;
  constexpr bool kColA = LA == Layout::kColMajor;
  static_assert(LB == Layout::kColMajor || kBK == kBN, "a row-major B's stage is kBK rows of kBN columns, kChunks chunks each");
  static_assert(!(kColA && S::kTF32), "ldmatrix.trans moves 16-bit elements: TF32 takes a row-major A only");
  static_assert(!(kAny && S::kTF32), "the any-alignment loads move 16-bit element pairs");
  // This block's matrix of a batch (blockIdx.y) and its workspace slabs.
  const int64_t matrix = blockIdx.y;
  p.a += matrix * batch.a;
  p.b += matrix * batch.b;
  p.d += matrix * batch.d;
  if (s.splits > 1) ws += matrix * s.splits * int64_t{p.m} * p.n;
  // Chunks per shared-memory row of A: kBK of K for a row-major A (a row per row of A); the
  // kRows values of M for a column-major A (a row per K index).
  constexpr int kAChunks = kColA ? C::kRows / S::kVec : kChunks;
  static_assert(C::kLoadsA * 32 == (kColA ? kBK : C::kRows) * kAChunks, "a stage of A is kLoadsA copies per lane");
  // Row-major B under TF32 is read element by element (below), not by ldmatrix.
  constexpr bool kScalarB = S::kTF32 && LB == Layout::kRowMajor;
  extern __shared__ __align__(128) unsigned char smem[];
  const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
  // Block order: row blocks fastest (they share B's pieces), then column blocks, then K slabs.
  const int row_block = static_cast<int>(blockIdx.x % s.row_blocks);
  const int col_block = static_cast<int>(blockIdx.x / s.row_blocks % s.col_blocks);
  const int split = static_cast<int>(blockIdx.x / s.row_blocks / s.col_blocks);
  const int n0 = col_block * kBN;
  const int row0 = row_block * C::kRows, rows_here = min(p.m - row0, C::kRows);  // this block's rows of A and D
  // This warp's K range: [k_begin, k_end), cut into kBK stages (the last zero-filled past k_end).
  const int64_t first = int64_t{split * kWarps + warp} * s.warp_k;  // 64-bit: K may be near 2^31
  const int k_begin = static_cast<int>(min(first, int64_t{p.k}));
  const int k_end = static_cast<int>(min(int64_t{p.k}, first + s.warp_k));
  const int iters = k_end > k_begin ? static_cast<int>(ceil_div(k_end - k_begin, kBK)) : 0;
  const uint32_t ring = ptx::smem_address(smem) + warp * C::kWarpBytes;

  // Shared-memory byte offset of 16-byte chunk c of row `row` of A, and of B. The swizzle
  // puts the 8 rows one ldmatrix phase reads into 8 distinct bank groups; TF32's row-major B
  // instead keys on row % 4, so that the 4 rows x 2 chunks a fragment load touches do.
  auto a_at = [](int row, int c) { return (row * kAChunks + swizzle<kAChunks>(row, c)) * 16; };
  auto b_at = [](int row, int c) {
    const int key = kScalarB ? c ^ (row % 4 * 2) : swizzle<kChunks>(row, c);
    return C::kABytes + (row * kChunks + key) * 16;
  };

  // ---- global -> shared, one stage ----
  // Copy j of a lane: row lane / kChunks + kRowsPerCopy j of the stage's A (K-contiguous
  // rows) or B, chunk lane % kChunks: a row's chunks are read by consecutive lanes. B's rows
  // are K rows for row-major B (32 columns each), columns for column-major B (32 K values).
  // A column-major A is copied the same way with its K rows of kAChunks chunks.
  constexpr int kRowsPerCopy = C::kRowsPerCopy, kVec = S::kVec;
  const int row_in = lane / kChunks, chunk = lane % kChunks;
  constexpr int kARowsPerCopy = 32 / kAChunks;
  const int a_row_in = lane / kAChunks, a_chunk = lane % kAChunks;
  const T* a_src = p.a + (kColA ? row0 : row0 * p.lda) + a_row_in * p.lda + a_chunk * kVec;
  const T* b_src = LB == Layout::kRowMajor ? p.b + row_in * p.ldb + n0 + chunk * kVec
                                           : p.b + (n0 + row_in) * p.ldb + chunk * kVec;
  const bool b_col_ok = n0 + chunk * kVec < p.n;  // row-major B: N % kVec == 0, a chunk is wholly in or out
  const uint64_t b_policy = ptx::l2_stream_policy(s.evict_first);  // B is read once (handwritten.cuh)
  auto load_stage = [&](int slot, int k0) {
    const uint32_t stage = ring + slot * C::kStageBytes;
#pragma unroll
    for (int j = 0; j < C::kLoadsA; ++j) {
      const int r = a_row_in + kARowsPerCopy * j;
      if constexpr (kColA) {  // row r: K index k0 + r; M % kVec == 0, so a chunk is wholly in or out
        const bool ok = a_chunk * kVec < rows_here && k0 + r < k_end;
        ptx::cp_async_16(stage + a_at(r, a_chunk), ok ? a_src + (k0 + kARowsPerCopy * j) * p.lda : p.a, ok);
      } else {  // row r: row r of A; K % kVec == 0 and k_end is K or a multiple of kBK
        const bool ok = k0 + a_chunk * kVec < k_end && r < rows_here;
        ptx::cp_async_16(stage + a_at(r, a_chunk), ok ? a_src + kARowsPerCopy * j * p.lda + k0 : p.a, ok);
      }
    }
#pragma unroll
    for (int j = 0; j < C::kLoadsB; ++j) {
      const int r = row_in + kRowsPerCopy * j;
      if constexpr (LB == Layout::kRowMajor) {
        const bool ok = b_col_ok && k0 + r < k_end;
        ptx::cp_async_16(stage + b_at(r, chunk), ok ? b_src + (k0 + kRowsPerCopy * j) * p.ldb : p.b, ok, b_policy);
      } else {
        const bool ok = n0 + r < p.n && k0 + chunk * kVec < k_end;
        ptx::cp_async_16(stage + b_at(r, chunk), ok ? b_src + kRowsPerCopy * j * p.ldb + k0 : p.b, ok, b_policy);
      }
    }
  };

  // ---- global -> registers -> shared, one stage, any alignment ----
  // Lane l holds element pairs 2 l + 64 j of the stage, j = 0, 1, ...: A's kRows x kBK
  // elements first (rows of kBK K values, or for a column-major A K rows of kRows M values),
  // then B's kBK x kBN. Pairs never straddle a row (rows are 16 or more elements), so a pair is
  // one 4-byte store into its 16-byte chunk of the stage. A lane's pairs share their column
  // (2 l mod the row's width) and step down the rows by 64 / width: one pointer walks them.
  constexpr int kPairsA = kAny ? C::kRows * kBK / 64 : 0, kPairsB = kAny ? kBK * kBN / 64 : 0;
  constexpr int kAWidth = kColA ? C::kRows : kBK;  // elements per row of A's stage
  constexpr int kAStep = 64 / kAWidth, kBStep = 64 / kBN;  // rows between a lane's pairs
  const int a_row = 2 * lane / kAWidth, a_col = 2 * lane % kAWidth, b_row = 2 * lane / kBN, b_col = 2 * lane % kBN;
  uint32_t staged[kAny ? kPairsA + kPairsB : 1];
  const uint64_t a_policy = ptx::l2_stream_policy(false);
  // kCount pairs from `src` on, `step` elements apart; pair j is read where row first + j *
  // row_step is below `limit` and each of its two elements where first_ok / second_ok say.
  auto fetch_pairs = [&](auto count, uint32_t* dst, const T* src, int64_t step, int first, int row_step, int limit,
                         bool first_ok, bool second_ok, uint64_t policy) {
#pragma unroll
    for (int j = 0; j < decltype(count)::value; ++j, src += step) {
      const bool in = first + j * row_step < limit;
      const uint32_t lo = in && first_ok ? ptx::ld_global_2(src, policy) : 0u;
      const uint32_t hi = in && second_ok ? ptx::ld_global_2(src + 1, policy) : 0u;
      dst[j] = lo | hi << 16;
    }
  };
  auto fetch_stage = [&](int k0) {
    using PairsA = std::integral_constant<int, kPairsA>;
    using PairsB = std::integral_constant<int, kPairsB>;
    if constexpr (kColA) {  // K rows k0 + a_row + kAStep j, rows a_col and + 1 of this block's A
      fetch_pairs(PairsA{}, staged, p.a + int64_t{k0 + a_row} * p.lda + row0 + a_col, kAStep * p.lda, k0 + a_row,
                  kAStep, k_end, a_col < rows_here, a_col + 1 < rows_here, a_policy);
    } else {  // rows a_row + kAStep j of this block's A, K k0 + a_col and + 1
      fetch_pairs(PairsA{}, staged, p.a + int64_t{row0 + a_row} * p.lda + k0 + a_col, kAStep * p.lda, a_row, kAStep,
                  rows_here, k0 + a_col < k_end, k0 + a_col + 1 < k_end, a_policy);
    }
    if constexpr (LB == Layout::kRowMajor) {  // K rows k0 + b_row + kBStep j, columns n0 + b_col and + 1
      fetch_pairs(PairsB{}, staged + kPairsA, p.b + int64_t{k0 + b_row} * p.ldb + n0 + b_col, kBStep * p.ldb,
                  k0 + b_row, kBStep, k_end, n0 + b_col < p.n, n0 + b_col + 1 < p.n, b_policy);
    } else {  // columns n0 + b_row + kBStep j, K k0 + b_col and + 1
      fetch_pairs(PairsB{}, staged + kPairsA, p.b + int64_t{n0 + b_row} * p.ldb + k0 + b_col, kBStep * p.ldb,
                  n0 + b_row, kBStep, p.n, k0 + b_col < k_end, k0 + b_col + 1 < k_end, b_policy);
    }
  };
  auto deposit_stage = [&](int slot) {
    unsigned char* stage = smem + warp * C::kWarpBytes + slot * C::kStageBytes;
#pragma unroll
    for (int j = 0; j < kPairsA; ++j) {
      const int r = a_row + kAStep * j;
      *reinterpret_cast<uint32_t*>(stage + a_at(r, a_col / kVec) + a_col % kVec * 2) = staged[j];
    }
#pragma unroll
    for (int j = 0; j < kPairsB; ++j) {
      const int r = b_row + kBStep * j;
      *reinterpret_cast<uint32_t*>(stage + b_at(r, b_col / kVec) + b_col % kVec * 2) = staged[kPairsA + j];
    }
  };

  // ---- shared -> fragments ----
  // A k-step spans two chunks (16 16-bit elements or 8 floats). A tile mi at k-step kk
  // (ldmatrix.x4): lane l addresses row mi * 16 + l % 16, chunk 2 kk + l / 16 (the a0..a3
  // order of mma's A fragment: rows 0-7 and 8-15 at K 0-7, then at K 8-15). Column-major
  // (ldmatrix.x4.trans, each 8x8 matrix read as K rows of 8 M values): K row 16 kk + l % 8 +
  // 8 (l / 16), chunk 2 mi + l / 8 % 2.
  // B tiles 2q, 2q + 1 at k-step kk: row-major 16-bit (ldmatrix.x4.trans) lane l addresses K
  // row 16 kk + l % 8 + 8 (l / 8 % 2), chunk 2q + l / 16; column-major (ldmatrix.x4) column
  // 16 q + l % 8 + 8 (l / 16), chunk 2 kk + l / 8 % 2. Either way registers 0, 1 are b0, b1
  // of tile 2q and registers 2, 3 those of tile 2q + 1.
  // Row-major TF32 B tile ni at k-step kk: lane (g, t) = (l / 4, l % 4) reads K rows 8 kk + t
  // and + 4 of column 8 ni + g (b0, b1).
  auto a_frag = [&](int mi, int kk) {
    return kColA ? a_at(16 * kk + lane % 8 + 8 * (lane / 16), 2 * mi + lane / 8 % 2)
                 : a_at(mi * 16 + lane % 16, 2 * kk + lane / 16);
  };
  auto b_frag = [&](int q, int kk) {
    const int row = LB == Layout::kRowMajor ? 16 * kk + lane % 8 + 8 * (lane / 8 % 2) : 16 * q + lane % 8 + 8 * (lane / 16);
    const int c = LB == Layout::kRowMajor ? 2 * q + lane / 16 : 2 * kk + lane / 8 % 2;
    return b_at(row, c);
  };
  auto b_scalar = [&](const unsigned char* stage, int ni, int kk, int half) {
    const int row = 8 * kk + lane % 4 + 4 * half, col = 8 * ni + lane / 4;
    return *reinterpret_cast<const uint32_t*>(stage + b_at(row, col / 4) + col % 4 * 4);
  };

  float acc[C::kMTiles][4][4] = {};
  if constexpr (kAny) {
    if (iters > 0) {
      fetch_stage(k_begin);
      deposit_stage(0);
    }
  } else {
#pragma unroll
    for (int st = 0; st < C::kStages - 1; ++st) {
      if (st < iters) load_stage(st, k_begin + st * kBK);
      ptx::cp_async_commit();  // empty groups past the end keep the count uniform
    }
  }
#pragma unroll 1
  for (int it = 0; it < iters; ++it) {
    if constexpr (kAny) {
      // Stage `it` is in shared memory (the warp barrier orders the lanes' stores before the
      // other lanes' reads); stage it + 1 is loaded into registers while this one is multiplied.
      __syncwarp();
      if (it + 1 < iters) fetch_stage(k_begin + (it + 1) * kBK);
    } else {
      // Stage `it` has landed for every lane (wait, then the warp barrier orders the lanes'
      // copies before the other lanes' reads); the stage read last iteration is free.
      ptx::cp_async_wait<C::kStages - 2>();
      __syncwarp();
      const int next = it + C::kStages - 1;
      if (next < iters) load_stage(next % C::kStages, k_begin + next * kBK);
      ptx::cp_async_commit();
    }
    const uint32_t stage = ring + (it % C::kStages) * C::kStageBytes;
    const unsigned char* stage_ptr = smem + warp * C::kWarpBytes + (it % C::kStages) * C::kStageBytes;
#pragma unroll
    for (int kk = 0; kk < C::kSteps; ++kk) {
      uint32_t a[C::kMTiles][4], b[4][2];
#pragma unroll
      for (int mi = 0; mi < C::kMTiles; ++mi) {
        if constexpr (kColA) {
          ptx::ldmatrix_x4_trans(a[mi], stage + a_frag(mi, kk));
        } else {
          ptx::ldmatrix_x4(a[mi], stage + a_frag(mi, kk));
        }
      }
      if constexpr (kScalarB) {
#pragma unroll
        for (int ni = 0; ni < 4; ++ni) {
          b[ni][0] = b_scalar(stage_ptr, ni, kk, 0);
          b[ni][1] = b_scalar(stage_ptr, ni, kk, 1);
        }
      } else {
#pragma unroll
        for (int q = 0; q < 2; ++q) {
          uint32_t r[4];
          if constexpr (LB == Layout::kRowMajor) {
            ptx::ldmatrix_x4_trans(r, stage + b_frag(q, kk));
          } else {
            ptx::ldmatrix_x4(r, stage + b_frag(q, kk));
          }
          b[2 * q][0] = r[0];
          b[2 * q][1] = r[1];
          b[2 * q + 1][0] = r[2];
          b[2 * q + 1][1] = r[3];
        }
      }
      if constexpr (S::kTF32) {
#pragma unroll
        for (int mi = 0; mi < C::kMTiles; ++mi) {
#pragma unroll
          for (int i = 0; i < 4; ++i) a[mi][i] = ptx::to_tf32(a[mi][i]);
        }
#pragma unroll
        for (int ni = 0; ni < 4; ++ni) {
          b[ni][0] = ptx::to_tf32(b[ni][0]);
          b[ni][1] = ptx::to_tf32(b[ni][1]);
        }
      }
#pragma unroll
      for (int mi = 0; mi < C::kMTiles; ++mi) {
#pragma unroll
        for (int ni = 0; ni < 4; ++ni) {
          if constexpr (S::kTF32) {
            ptx::mma_m16n8k8_tf32(acc[mi][ni], a[mi], b[ni]);
          } else {
            ptx::mma_m16n8k16<P>(acc[mi][ni], a[mi], b[ni]);
          }
        }
      }
    }
    // Into a slot no lane reads before the next iteration's barrier: stage it + 1's.
    if constexpr (kAny) {
      if (it + 1 < iters) deposit_stage((it + 1) % C::kStages);
    }
  }
  ptx::cp_async_wait<0>();  // only empty groups remain, but the stages are reused below

  // ---- the warps' sums, in a fixed order ----
  // Accumulators c0, c1 of mma tile (mi, ni): row mi * 16 + lane / 4, columns ni * 8 +
  // 2 (lane % 4) and + 1; c2, c3 the same 8 rows lower.
  __syncthreads();  // every warp is done with its ring
  float* sums = reinterpret_cast<float*>(smem);
#pragma unroll
  for (int mi = 0; mi < C::kMTiles; ++mi) {
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int row = mi * 16 + lane / 4 + 8 * half;
#pragma unroll
      for (int ni = 0; ni < 4; ++ni) {
        *reinterpret_cast<float2*>(sums + (warp * C::kRows + row) * C::kSumStride + ni * 8 + lane % 4 * 2) =
            make_float2(acc[mi][ni][2 * half], acc[mi][ni][2 * half + 1]);
      }
    }
  }
  __syncthreads();
  using Traits = ElementTraits<P>;
  if (s.transposed_d) {
    store_transposed<C, kAny, T, Traits>(p, s, ws, sums, split, n0, row0, rows_here);
    return;
  }
  for (int i = static_cast<int>(threadIdx.x); i < rows_here * (kBN / 2); i += kThreads) {
    const int row = i / (kBN / 2), c = i % (kBN / 2) * 2, col = n0 + c;
    if (col >= p.n) continue;  // aligned builds: N is even (D's alignment), a pair is wholly in or out
    float2 sum = *reinterpret_cast<const float2*>(sums + row * C::kSumStride + c);
#pragma unroll
    for (int w = 1; w < kWarps; ++w) {
      const float2 x = *reinterpret_cast<const float2*>(sums + (w * C::kRows + row) * C::kSumStride + c);
      sum.x += x.x;
      sum.y += x.y;
    }
    if (s.splits == 1) {
      store_pair<kAny, Traits>(p.d + (row0 + row) * p.ldd + col, sum, col + 1 < p.n);
    } else {
      store_pair<kAny, Traits>(ws + (int64_t{split} * p.m + row0 + row) * p.n + col, sum, col + 1 < p.n);
    }
  }
}

template <Precision P, Layout LA, Layout LB, class C, bool kAny>
struct KernelTag {};  // one shared-memory opt-in per instance

template <Precision P, Layout LA, Layout LB, class C, bool kAny>
KernelStatus launch(const GemmArgs& g, const Split& s, const BatchStrides& batch) {
  using T = typename ElementTraits<P>::Element;
  const auto kernel = &skinny_mma<P, LA, LB, C, kAny>;
  const cudaError_t opted = opt_in_shared_memory_once<KernelTag<P, LA, LB, C, kAny>>(
      reinterpret_cast<const void*>(kernel), C::kSmemBytes, g.device);
  if (opted != cudaSuccess) return from_cuda(opted);
  const Problem<T> p = make_problem<T>(g);
  float* ws = static_cast<float*>(g.workspace);
  const dim3 grid(static_cast<unsigned>(s.blocks()), static_cast<unsigned>(g.batch));
  kernel<<<grid, kThreads, C::kSmemBytes, g.stream>>>(p, s, batch, ws);
  if (s.splits > 1) {
    const KernelStatus status = launch_status();
    if (!status.ok()) return status;
    // The slabs are laid out as the stored D is: transposed, as D^T's transpose.
    Problem<T> stored = p;
    if (s.transposed_d) std::swap(stored.m, stored.n);
    launch_sum_slabs<P>(stored, ws, s.splits, g.stream, g.batch, batch.d);
  }
  return launch_status();
}

template <Precision P, Layout LA, Layout LB, bool kAny>
KernelStatus run_split(const GemmArgs& g, const Split& s) {
  const BatchStrides batch{g.batch_stride_a, g.batch_stride_b, g.batch_stride_d};
  return with_instance<P, LA, LB, kAny>(
      s.m_tiles, [&](auto* c) { return launch<P, LA, LB, std::remove_pointer_t<decltype(c)>, kAny>(g, s, batch); });
}

template <Precision P, Layout LA, Layout LB, bool kAny>
KernelStatus run(const GemmArgs& g) {
  return run_split<P, LA, LB, kAny>(g, plan_split<P, LA, LB, kAny>(g));
}

template <Precision P, Layout LA, Layout LB, bool kAny>
size_t workspace_bytes(const GemmArgs& g) {
  const Split s = plan_split<P, LA, LB, kAny>(g);
  return s.splits > 1 ? static_cast<size_t>(s.splits) * std::max<int64_t>(1, g.batch) * g.m * g.n * sizeof(float) : 0;
}

// ---- few columns: D^T = B^T A^T ------------------------------------------------------------
constexpr Layout flip(Layout l) { return l == Layout::kRowMajor ? Layout::kColMajor : Layout::kRowMajor; }

// The transposed problem: N x M = B^T (N x K) A^T (K x M). Transposing a view flips its layout
// and keeps its leading dim; D keeps its own, and the kernel stores into it transposed.
GemmArgs transposed(const GemmArgs& g) {
  GemmArgs t = g;
  t.m = g.n;
  t.n = g.m;
  t.a = g.b;
  t.lda = g.ldb;
  t.layout_a = flip(g.layout_b);
  t.batch_stride_a = g.batch_stride_b;
  t.b = g.a;
  t.ldb = g.lda;
  t.layout_b = flip(g.layout_a);
  t.batch_stride_b = g.batch_stride_a;
  return t;
}

template <Precision P, Layout LA, Layout LB, bool kAny>  // the problem's layouts (the few-row kernel runs the flipped ones)
KernelStatus run_columns(const GemmArgs& g) {
  const GemmArgs t = transposed(g);
  Split s = plan_split<P, flip(LB), flip(LA), kAny>(t);
  s.transposed_d = true;
  return run_split<P, flip(LB), flip(LA), kAny>(t, s);
}

template <Precision P, Layout LA, Layout LB, bool kAny>  // the problem's layouts (the few-row kernel runs the flipped ones)
size_t workspace_bytes_columns(const GemmArgs& g) {
  return workspace_bytes<P, flip(LB), flip(LA), kAny>(transposed(g));
}

// The skinny-M and skinny-N builds check their layouts with one message table.
template <Layout LA, Layout LB>
constexpr const char* kLayoutMessage =
    LA == Layout::kRowMajor
        ? (LB == Layout::kRowMajor ? "streaming mma kernel (rr) takes row-major A and B only"
                                   : "streaming mma kernel (rc) takes row-major A and column-major B only")
        : (LB == Layout::kRowMajor ? "streaming mma kernel (cr) takes column-major A and row-major B only"
                                   : "streaming mma kernel (cc) takes column-major A and B only");

// What the skinny-M and skinny-N builds both check: layouts, 32-bit sizes, the batch.
template <Layout LA, Layout LB>
KernelStatus can_implement_common(const GemmArgs& g) {
  if (g.layout_a != LA || g.layout_b != LB) return {KernelStatus::kNotSupported, kLayoutMessage<LA, LB>};
  if (g.m > INT_MAX || g.n > INT_MAX || g.k > INT_MAX) {
    return {KernelStatus::kNotSupported, "hand-written kernels take M, N and K below 2^31"};
  }
  if (g.batch > kMaxBatch) {
    return {KernelStatus::kNotSupported, "streaming mma kernel takes batches of at most 65535 matrices"};
  }
  return {};
}

template <Precision P, Layout LA, Layout LB>
KernelStatus can_implement(const GemmArgs& g) {
  const KernelStatus common = can_implement_common<LA, LB>(g);
  if (!common.ok()) return common;
  if (g.m > Shape<P>::kMaxM) {
    return {KernelStatus::kNotSupported, Shape<P>::kMaxM == 256 ? "skinny-M mma kernel takes M <= 256 only"
                                                                : "skinny-M mma kernel (TF32) takes M <= 16 only"};
  }
  return {};
}

template <Precision P, Layout LA, Layout LB>
KernelStatus can_implement_columns(const GemmArgs& g) {
  static_assert(Shape<P>::kMaxM == 256, "16-bit only");
  const KernelStatus common = can_implement_common<LA, LB>(g);
  if (!common.ok()) return common;
  if (g.n > Shape<P>::kMaxM) return {KernelStatus::kNotSupported, "skinny-N mma kernel takes N <= 256 only"};
  return {};
}

// Alignments (elements) of A, B and D: 16-byte chunks and element pairs, or any.
template <Precision P, bool kAny>
constexpr int kAlignAB = kAny ? 1 : Shape<P>::kVec;
template <bool kAny>
constexpr int kAlignD = kAny ? 1 : 2;

// What the skinny-M and skinny-N builds' KernelInfo share besides make_info's fields.
template <Layout LA, Layout LB>
KernelInfo streaming_mma_info(KernelInfo info, size_t (*workspace_bytes)(const GemmArgs&)) {
  info.layout_a = LA;
  info.layout_b = LB;
  info.workspace_bytes = workspace_bytes;
  info.role = Role::kProduct;
  info.math = MathClass::kMma;
  info.mainloop = Mainloop::kStreaming;
  info.threads = kThreads;
  info.batched = true;
  info.max_batch = kMaxBatch;
  return info;
}

template <Precision P, Layout LA, Layout LB, bool kAny = false>
KernelInfo skinny_mma_info(const char* name) {
  constexpr int kMaxRows = kAny ? kAnyMaxRows : Shape<P>::kMaxRows;
  KernelInfo info = streaming_mma_info<LA, LB>(
      make_info({name, kConfig, P, kAlignAB<P, kAny>, kAlignAB<P, kAny>, kAlignD<kAny>, kMaxRows, kBN,
                 kStageK<P, LA, LB, kAny>, CfgOf<P, LA, LB, kAny, kMaxRows / 16>::kSmemBytes, &can_implement<P, LA, LB>,
                 &run<P, LA, LB, kAny>}),
      &workspace_bytes<P, LA, LB, kAny>);
  info.max_m = Shape<P>::kMaxM;
  return info;
}

// The skinny-N kernels: a tile of 32 rows of D (a block's 32 columns of D^T) by up to 64
// columns, 64 columns to a block (one block row of D^T), at most 256.
template <Precision P, Layout LA, Layout LB, bool kAny = false>
KernelInfo skinny_n_info(const char* name) {
  constexpr int kMaxRows = kAny ? kAnyMaxRows : Shape<P>::kMaxRows;
  KernelInfo info = streaming_mma_info<LA, LB>(
      make_info({name, kColumnsConfig, P, kAlignAB<P, kAny>, kAlignAB<P, kAny>, kAlignD<kAny>, kBN, kMaxRows,
                 kStageK<P, flip(LB), flip(LA), kAny>, CfgOf<P, flip(LB), flip(LA), kAny, kMaxRows / 16>::kSmemBytes,
                 &can_implement_columns<P, LA, LB>, &run_columns<P, LA, LB, kAny>}),
      &workspace_bytes_columns<P, LA, LB, kAny>);
  info.max_n = Shape<P>::kMaxM;
  return info;
}

constexpr Precision kF16 = Precision::kF16, kBF16 = Precision::kBF16, kTF32 = Precision::kTF32;
constexpr Layout kRow = Layout::kRowMajor, kCol = Layout::kColMajor;
constexpr bool kAnyAlignment = true;

const KernelRegistrar registrars[] = {
    KernelRegistrar(skinny_mma_info<kBF16, kRow, kRow>("handwritten_sm80_bf16_rr_skinny_m_mma")),
    KernelRegistrar(skinny_mma_info<kBF16, kRow, kCol>("handwritten_sm80_bf16_rc_skinny_m_mma")),
    KernelRegistrar(skinny_mma_info<kBF16, kCol, kRow>("handwritten_sm80_bf16_cr_skinny_m_mma")),
    KernelRegistrar(skinny_mma_info<kBF16, kCol, kCol>("handwritten_sm80_bf16_cc_skinny_m_mma")),
    KernelRegistrar(skinny_mma_info<kF16, kRow, kRow>("handwritten_sm80_f16_rr_skinny_m_mma")),
    KernelRegistrar(skinny_mma_info<kF16, kRow, kCol>("handwritten_sm80_f16_rc_skinny_m_mma")),
    KernelRegistrar(skinny_mma_info<kF16, kCol, kRow>("handwritten_sm80_f16_cr_skinny_m_mma")),
    KernelRegistrar(skinny_mma_info<kF16, kCol, kCol>("handwritten_sm80_f16_cc_skinny_m_mma")),
    KernelRegistrar(skinny_mma_info<kTF32, kRow, kRow>("handwritten_sm80_tf32_rr_skinny_m_mma")),
    KernelRegistrar(skinny_mma_info<kTF32, kRow, kCol>("handwritten_sm80_tf32_rc_skinny_m_mma")),
    KernelRegistrar(skinny_n_info<kBF16, kRow, kRow>("handwritten_sm80_bf16_rr_skinny_n_mma")),
    KernelRegistrar(skinny_n_info<kBF16, kRow, kCol>("handwritten_sm80_bf16_rc_skinny_n_mma")),
    KernelRegistrar(skinny_n_info<kBF16, kCol, kRow>("handwritten_sm80_bf16_cr_skinny_n_mma")),
    KernelRegistrar(skinny_n_info<kBF16, kCol, kCol>("handwritten_sm80_bf16_cc_skinny_n_mma")),
    KernelRegistrar(skinny_n_info<kF16, kRow, kRow>("handwritten_sm80_f16_rr_skinny_n_mma")),
    KernelRegistrar(skinny_n_info<kF16, kRow, kCol>("handwritten_sm80_f16_rc_skinny_n_mma")),
    KernelRegistrar(skinny_n_info<kF16, kCol, kRow>("handwritten_sm80_f16_cr_skinny_n_mma")),
    KernelRegistrar(skinny_n_info<kF16, kCol, kCol>("handwritten_sm80_f16_cc_skinny_n_mma")),
    // Any alignment: element-pair loads through registers, element stores.
    KernelRegistrar(skinny_mma_info<kBF16, kRow, kRow, kAnyAlignment>("handwritten_sm80_bf16_rr_skinny_m_mma_a1")),
    KernelRegistrar(skinny_mma_info<kBF16, kRow, kCol, kAnyAlignment>("handwritten_sm80_bf16_rc_skinny_m_mma_a1")),
    KernelRegistrar(skinny_mma_info<kBF16, kCol, kRow, kAnyAlignment>("handwritten_sm80_bf16_cr_skinny_m_mma_a1")),
    KernelRegistrar(skinny_mma_info<kBF16, kCol, kCol, kAnyAlignment>("handwritten_sm80_bf16_cc_skinny_m_mma_a1")),
    KernelRegistrar(skinny_mma_info<kF16, kRow, kRow, kAnyAlignment>("handwritten_sm80_f16_rr_skinny_m_mma_a1")),
    KernelRegistrar(skinny_mma_info<kF16, kRow, kCol, kAnyAlignment>("handwritten_sm80_f16_rc_skinny_m_mma_a1")),
    KernelRegistrar(skinny_mma_info<kF16, kCol, kRow, kAnyAlignment>("handwritten_sm80_f16_cr_skinny_m_mma_a1")),
    KernelRegistrar(skinny_mma_info<kF16, kCol, kCol, kAnyAlignment>("handwritten_sm80_f16_cc_skinny_m_mma_a1")),
    KernelRegistrar(skinny_n_info<kBF16, kRow, kRow, kAnyAlignment>("handwritten_sm80_bf16_rr_skinny_n_mma_a1")),
    KernelRegistrar(skinny_n_info<kBF16, kRow, kCol, kAnyAlignment>("handwritten_sm80_bf16_rc_skinny_n_mma_a1")),
    KernelRegistrar(skinny_n_info<kBF16, kCol, kRow, kAnyAlignment>("handwritten_sm80_bf16_cr_skinny_n_mma_a1")),
    KernelRegistrar(skinny_n_info<kBF16, kCol, kCol, kAnyAlignment>("handwritten_sm80_bf16_cc_skinny_n_mma_a1")),
    KernelRegistrar(skinny_n_info<kF16, kRow, kRow, kAnyAlignment>("handwritten_sm80_f16_rr_skinny_n_mma_a1")),
    KernelRegistrar(skinny_n_info<kF16, kRow, kCol, kAnyAlignment>("handwritten_sm80_f16_rc_skinny_n_mma_a1")),
    KernelRegistrar(skinny_n_info<kF16, kCol, kRow, kAnyAlignment>("handwritten_sm80_f16_cr_skinny_n_mma_a1")),
    KernelRegistrar(skinny_n_info<kF16, kCol, kCol, kAnyAlignment>("handwritten_sm80_f16_cc_skinny_n_mma_a1")),
};

}  // namespace
}  // namespace cutlass_ops::handwritten
