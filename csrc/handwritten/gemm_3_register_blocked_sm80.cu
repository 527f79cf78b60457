// Step 3 of the hand-written GEMM ladder: register blocking with vector loads (fp32 SIMT).
//
// The idea over step 2: each thread computes an 8 x 8 block of D instead of one element.
// Per K step it loads 8 values of A and 8 of B from shared memory into registers and does
// 64 fused multiply-adds with them: 16 shared loads per 64 FMAs instead of 2 per 1, which
// moves the bound from shared-memory bandwidth to the FMA pipes. A block of 256 threads
// then covers a 128 x 128 tile of D, so each global element is also reused 4x more than
// in step 2. Making that pay needs the supporting pieces of every fast SIMT GEMM:
//
//  - float4 (16-byte) global loads, shared loads and global stores: a quarter of the
//    instructions. Hence alignment 4: the planner guarantees K and N (the contiguous
//    extents of row-major A, B and D), the leading dims and the addresses are multiples
//    of 4 floats, so a float4 is either wholly inside a matrix or wholly outside.
//  - A stored transposed in shared memory (As[k][m]), so a thread's 4 consecutive rows of
//    A at one k are one float4 load, like B's 4 consecutive columns.
//  - The 8 x 8 thread tile split as 2 x 2 sub-tiles of 4 x 4, 64 rows/columns apart, so
//    the threads of a warp read 64- and 128-byte contiguous runs (no bank conflicts).
//  - Double buffering: while the block computes on one K slice in shared memory, each
//    thread already holds the next slice's global loads in registers and stores them into
//    the other buffer afterwards; one __syncthreads per K slice, and the global latency is
//    hidden behind 8 x 64 FMAs per thread.
//
// Edges: rows of A beyond M, columns of B beyond N and K beyond K are loaded as zeros;
// only the final store is predicated, per float4.
//
// Measured (H100, fp32 4096^3, standalone harness, 2026-11-22): 49.1 TFLOP/s, 0.95x cuBLAS fp32 (51.7). Bench figures: benchmarks/RESULTS.md at 824ebc1
// (48.2-49.0 TFLOP/s, 0.93-0.94x, before and after the slice loader moved to handwritten.cuh).
#include "dispatch/configs.h"
#include "handwritten/handwritten.cuh"

namespace cutlass_ops::handwritten {
namespace {

// 128 x 128 x kBK tile, 256 threads of 8 x 8 outputs. Shared memory:
// 2 buffers x (kBK x 132 + kBK x 128) floats = 32.5 KiB at kBK = 16, little enough for
// two blocks per SM, which __launch_bounds__ asks for (<= 128 registers per thread).
// kBK = 16 halves the barriers of kBK = 8: measured on H100 at 4096^3, 48.6 against
// 44.9 TFLOP/s (cuBLAS fp32: 51.7), although ptxas then spills 8 bytes (sm_90) to stay
// within 128 registers.
template <int kBK_>
struct RegisterBlockedConfig {
  static constexpr int kBM = 128, kBN = 128, kBK = kBK_;
  static constexpr int kThreads = 256;
  static constexpr int kHalf = kBM / 2;  // distance between a thread's two 4-row (4-column) sub-tiles
  // +4 floats per As row: the transposing stores (As[k][m]) of a warp then spread over
  // more banks (all 32 at kBK = 8, 2-way conflicts at 16); 4 keeps rows 16-byte aligned for
  // the float4 reads.
  static constexpr int kPadA = 4;
  static constexpr int kSmemBytes = 2 * kBK * (kBM + kPadA + kBN) * 4;
};

template <class Cfg>
__global__ void __launch_bounds__(Cfg::kThreads, 2) register_blocked_gemm(Problem<float> p, TileGrid grid) {
  constexpr int kBM = Cfg::kBM, kBN = Cfg::kBN, kBK = Cfg::kBK, kHalf = Cfg::kHalf;
  __shared__ __align__(16) float As[2][kBK][kBM + Cfg::kPadA];
  __shared__ __align__(16) float Bs[2][kBK][kBN];

  const int2 origin = tile_origin(grid, kBM, kBN);
  const int tid = static_cast<int>(threadIdx.x);

  // Compute layout: a warp is 4 x 8 threads (thread rows x thread columns), the 8 warps
  // 4 x 2, so a warp's A reads span 4 float4s and its B reads 8 -- one wavefront each.
  const int warp = tid / 32, lane = tid % 32;
  const int ty = (warp / 2) * 4 + lane / 8;  // 0..15: rows ty*4.. and kHalf + ty*4..
  const int tx = (warp % 2) * 8 + lane % 8;  // 0..15: columns tx*4.. and kHalf + tx*4..

  // Load layout (handwritten.cuh): float4 j of A is row ld.a_row + j * kRowStepA at k
  // offset ld.a_k; of B, k-row ld.b_k + j * kRowStepB at column ld.b_col (a warp reads 512
  // contiguous bytes of one B row).
  using Loader = SliceLoader<float, float4, Cfg::kThreads, kBM, kBN, kBK>;
  Loader ld(p, origin, tid);
  // Registers -> shared buffer `buf`, A transposed.
  auto store_slice = [&](int buf) {
#pragma unroll
    for (int j = 0; j < Loader::kLoadsA; ++j) {
      const int m = ld.a_row + j * Loader::kRowStepA;
      As[buf][ld.a_k + 0][m] = ld.a[j].x;
      As[buf][ld.a_k + 1][m] = ld.a[j].y;
      As[buf][ld.a_k + 2][m] = ld.a[j].z;
      As[buf][ld.a_k + 3][m] = ld.a[j].w;
    }
#pragma unroll
    for (int j = 0; j < Loader::kLoadsB; ++j) {
      *reinterpret_cast<float4*>(&Bs[buf][ld.b_k + j * Loader::kRowStepB][ld.b_col]) = ld.b[j];
    }
  };

  float acc[8][8] = {};  // 8 x 8 outputs per thread, as 2 x 2 sub-tiles of 4 x 4
  ld.load(p, origin.x, 0);
  store_slice(0);
  __syncthreads();

  const int slices = static_cast<int>(ceil_div(p.k, kBK));
  for (int s = 0; s < slices; ++s) {
    const int buf = s & 1;
    const bool more = s + 1 < slices;
    if (more) ld.load(p, origin.x, (s + 1) * kBK);  // in flight during the FMAs below
#pragma unroll
    for (int k = 0; k < kBK; ++k) {
      const float4 a0 = *reinterpret_cast<const float4*>(&As[buf][k][ty * 4]);
      const float4 a1 = *reinterpret_cast<const float4*>(&As[buf][k][kHalf + ty * 4]);
      const float4 b0 = *reinterpret_cast<const float4*>(&Bs[buf][k][tx * 4]);
      const float4 b1 = *reinterpret_cast<const float4*>(&Bs[buf][k][kHalf + tx * 4]);
      const float a[8] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
      const float b[8] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
#pragma unroll
      for (int i = 0; i < 8; ++i) {
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
      }
    }
    // The other buffer was last read in iteration s - 1, which every thread has left
    // (the barrier below), so it can be overwritten now; one barrier per slice.
    if (more) store_slice(buf ^ 1);
    __syncthreads();
  }

  // acc[i][j]: row (i / 4) * kHalf + ty * 4 + i % 4, column (j / 4) * kHalf + tx * 4 + j % 4.
  const int col0 = origin.y + tx * 4;
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    const int row = origin.x + (i / 4) * kHalf + ty * 4 + i % 4;
    if (row >= p.m) break;  // rows increase with i
    float* d = p.d + row * p.ldd + col0;
    // N is a multiple of 4: each float4 is wholly inside D or wholly outside.
    if (col0 < p.n) *reinterpret_cast<float4*>(d) = make_float4(acc[i][0], acc[i][1], acc[i][2], acc[i][3]);
    if (col0 + kHalf < p.n) {
      *reinterpret_cast<float4*>(d + kHalf) = make_float4(acc[i][4], acc[i][5], acc[i][6], acc[i][7]);
    }
  }
}

// The registered configuration: its row of the kernel table (csrc/kernel_table.py).
using Registered = configs::Handwritten_3_RegisterBlocked_128x128x16;
using Sgemm128x128x16 = RegisterBlockedConfig<Registered::kTileK>;
static_assert(Sgemm128x128x16::kBM == Registered::kTileM && Sgemm128x128x16::kBN == Registered::kTileN,
              "the kernel table describes this file's tile");

template <class Cfg>
KernelStatus run_config(const GemmArgs& g) {
  const TileGrid grid = make_tile_grid(g, Cfg::kBM, Cfg::kBN);
  register_blocked_gemm<Cfg><<<static_cast<unsigned>(grid.tiles_m) * grid.tiles_n, Cfg::kThreads, 0, g.stream>>>(
      make_problem<float>(g), grid);
  return launch_status();
}

const KernelRegistrar registrar(make_info({"handwritten_sm80_f32_rr_3_register_blocked",
                                           Registered::kId, Precision::kF32, /*align_a=*/4,
                                           /*align_b=*/4, /*align_d=*/4, Sgemm128x128x16::kBM, Sgemm128x128x16::kBN, Sgemm128x128x16::kBK,
                                           Sgemm128x128x16::kSmemBytes, &can_implement_tiles<Sgemm128x128x16::kBM, Sgemm128x128x16::kBN>,
                                           &run_config<Sgemm128x128x16>, MathClass::kSimt,
                                           Mainloop::kRegisterStaged, Sgemm128x128x16::kThreads, /*stages=*/2,
                                           Role::kProduct}));

}  // namespace
}  // namespace cutlass_ops::handwritten
