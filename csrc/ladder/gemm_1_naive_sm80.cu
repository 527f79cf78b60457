// Step 1 of the hand-written GEMM ladder: the naive kernel.
//
// The idea: one thread per output element, each walking the whole K dimension straight
// from global memory with fp32 fused multiply-adds. It is the baseline the other steps
// are measured against. Every operand element is read from DRAM/L2 once per use: for a
// square problem that is 2K loads per 2K flops, so the kernel is bound by memory traffic,
// nowhere near the arithmetic units.
//
// The one courtesy over a textbook version: threadIdx.x runs along N, so a warp's 32
// threads read 32 consecutive elements of B's row (one coalesced access) and the same
// element of A (a broadcast), and write 32 consecutive elements of D. Mapping threadIdx.x
// to M instead makes every load a 32-way scattered access and is several times slower.
//
// Measured (H100, fp32 4096^3, standalone harness, 2026-11-22): 6.0 TFLOP/s, 0.12x cuBLAS fp32 (51.7). Bench figures: benchmarks/RESULTS.md at 824ebc1.
#include "handwritten/handwritten.cuh"

namespace cutlass_ops::handwritten {
namespace {

// A block computes a 8 x 32 patch of D: one warp per output row.
constexpr int kRows = 8, kCols = 32;

__global__ void __launch_bounds__(kRows * kCols) naive_gemm(Problem<float> p, TileGrid grid) {
  const int2 origin = tile_origin(grid, kRows, kCols);
  const int row = origin.x + static_cast<int>(threadIdx.y);
  const int col = origin.y + static_cast<int>(threadIdx.x);
  if (row >= p.m || col >= p.n) return;
  const float* a = p.a + row * p.lda;
  const float* b = p.b + col;
  float acc = 0.0f;
  for (int k = 0; k < p.k; ++k) acc = fmaf(a[k], b[k * p.ldb], acc);
  p.d[row * p.ldd + col] = acc;
}

KernelStatus run(const GemmArgs& g) {
  const TileGrid grid = make_tile_grid(g, kRows, kCols);
  naive_gemm<<<static_cast<unsigned>(grid.tiles_m) * grid.tiles_n, dim3(kCols, kRows), 0, g.stream>>>(
      make_problem<float>(g), grid);
  return launch_status();
}

using Registered = configs::Handwritten_1_Naive;
static_assert(Registered::kTileM == kRows && Registered::kTileN == kCols, "the kernel table describes this file's tile");

const KernelRegistrar registrar(make_info({"handwritten_sm80_f32_rr_1_naive", Registered::kId, Precision::kF32,
                                           /*align_a=*/1, /*align_b=*/1, /*align_d=*/1, kRows, kCols,
                                           /*tile_k=*/1, /*smem_bytes=*/0, &can_implement_tiles<kRows, kCols>,
                                           &run, MathClass::kSimt, Mainloop::kBasic, kRows * kCols}));

}  // namespace
}  // namespace cutlass_ops::handwritten
