// Step 2 of the hand-written GEMM ladder: shared-memory tiling.
//
// The idea over step 1: a block of 32 x 32 threads computes a 32 x 32 tile of D, and walks
// K in 32-wide slices. For each slice the block first copies the 32 x 32 pieces of A and
// B it needs into shared memory (each thread one element of each, coalesced), then every
// thread reads its row of A and column of B from there. Each global element is now
// loaded once per block instead of once per thread: 32x less global traffic.
//
// What still limits it: every fused multiply-add needs two shared-memory loads, so the
// kernel is bound by shared-memory bandwidth -- step 3 keeps operands in registers.
//
// Two 1024-thread blocks per SM (__launch_bounds__ caps registers at 32, at the cost of a
// 4-byte spill) let one block compute while the other waits at a barrier: measured on
// H100 at 4096^3, 8.4 TFLOP/s against 6.0 with one block -- which is also what step 1 reaches, since H100's L1 and L2
// already catch much of the naive kernel's reuse.
//
// Edges: elements outside A or B are stored as zeros, so partial tiles (M, N or K not a
// multiple of 32, or smaller than 32) need no special inner loop; only the final store is
// predicated. Any alignment is fine: every access is a single float.
//
// Measured (H100, fp32 4096^3, standalone harness, 2026-11-22): 8.4 TFLOP/s, 0.16x cuBLAS fp32 (51.7). Bench figures: benchmarks/RESULTS.md at 824ebc1.
#include "handwritten/handwritten.cuh"

namespace cutlass_ops::handwritten {
namespace {

constexpr int kTile = 32;

__global__ void __launch_bounds__(kTile * kTile, 2) smem_tiled_gemm(Problem<float> p, TileGrid grid) {
  // No padding needed: a warp is one ty, so As[ty][k] is a broadcast and Bs[k][tx] and
  // both stores touch 32 consecutive banks.
  __shared__ float As[kTile][kTile];
  __shared__ float Bs[kTile][kTile];

  const int2 origin = tile_origin(grid, kTile, kTile);
  const int tx = static_cast<int>(threadIdx.x), ty = static_cast<int>(threadIdx.y);
  const int row = origin.x + ty, col = origin.y + tx;

  float acc = 0.0f;
  for (int k0 = 0; k0 < p.k; k0 += kTile) {
    // Thread (ty, tx) fetches A(row, k0 + tx) and B(k0 + ty, col): a warp reads 32
    // consecutive floats of one row of each.
    const int ka = k0 + tx, kb = k0 + ty;
    As[ty][tx] = (row < p.m && ka < p.k) ? p.a[row * p.lda + ka] : 0.0f;
    Bs[ty][tx] = (kb < p.k && col < p.n) ? p.b[kb * p.ldb + col] : 0.0f;
    __syncthreads();
#pragma unroll
    for (int k = 0; k < kTile; ++k) acc = fmaf(As[ty][k], Bs[k][tx], acc);
    __syncthreads();  // the next slice overwrites the tiles other threads may still read
  }
  if (row < p.m && col < p.n) p.d[row * p.ldd + col] = acc;
}

KernelStatus run(const GemmArgs& g) {
  const TileGrid grid = make_tile_grid(g, kTile, kTile);
  smem_tiled_gemm<<<static_cast<unsigned>(grid.tiles_m) * grid.tiles_n, dim3(kTile, kTile), 0, g.stream>>>(
      make_problem<float>(g), grid);
  return launch_status();
}

using Registered = configs::Handwritten_2_SmemTiled_32x32x32;
static_assert(Registered::kTileM == kTile && Registered::kTileN == kTile && Registered::kTileK == kTile,
              "the kernel table describes this file's tile");

const KernelRegistrar registrar(make_info({"handwritten_sm80_f32_rr_2_smem_tiled", Registered::kId,
                                           Precision::kF32, /*align_a=*/1, /*align_b=*/1, /*align_d=*/1, kTile,
                                           kTile, kTile, /*smem_bytes=*/2 * kTile * kTile * 4,
                                           &can_implement_tiles<kTile, kTile>, &run, MathClass::kSimt, Mainloop::kBasic,
                                           kTile * kTile}));

}  // namespace
}  // namespace cutlass_ops::handwritten
