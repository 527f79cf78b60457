// Step 4 of the hand-written GEMM ladder: tensor cores through WMMA (fp16 and bf16 in,
// fp32 accumulate, output in the input type).
//
// The idea over step 3: the inner product moves from per-thread FMAs to warp-wide
// tensor-core instructions. With nvcuda::wmma a warp loads 16 x 16 tiles of A and B from
// shared memory into opaque "fragments" and issues mma_sync, a 16x16x16 multiply-add --
// 4096 FMAs per instruction, spread over the warp by the hardware. The block structure
// is step 3's: a 128 x 128 tile of D per 256-thread block, K in slices held twice in
// shared memory, the next slice's global loads in registers while the current one is
// multiplied. What changes is the unit of work: each warp owns a 64 x 32 piece of the
// tile as 4 x 2 accumulator fragments, and the K slice is 32 (two 16-deep mma steps).
//
// Supporting pieces:
//  - 16-byte global loads (8 elements), so alignment 8: K and N, the leading dims and the
//    addresses are multiples of 8 elements and a vector is wholly in or out of a matrix.
//  - Shared rows padded by 8 elements: WMMA loads 8 rows of 16 bytes at a time, and with
//    rows 80 (A) or 272 (B) bytes apart those 8 land in 8 different bank groups.
//  - The accumulators are fp32 and their element order is unspecified, so the epilogue
//    stores each fragment to shared memory (store_matrix_sync), then converts it to the
//    16-bit output and writes 16-byte vectors, predicated on the tile edges.
//
// A compiler quirk worth knowing (nvcc 13.0): WMMA loads of f16 fragments from shared
// memory compile to ldmatrix (LDSM), but bf16 ones to generic 32-bit loads plus MOVM
// transposes -- the PTX keeps the generic state space -- so on H100 at 4096^3 the bf16
// kernel runs at 182 TFLOP/s against 284 for f16. Step 5's explicit ldmatrix has no such gap.
//
// What still limits it: the loads go through registers (global -> register -> shared),
// costing issue slots and registers, and there is a single slice in flight. Step 5 copies
// asynchronously (cp.async) several slices ahead and drops WMMA for mma.sync + ldmatrix.
//
// Measured (H100, 4096^3, standalone harness, 2026-11-22): f16 284.0 TFLOP/s (0.37x cuBLAS), bf16 181.7 (0.23x). Bench figures: benchmarks/RESULTS.md at 824ebc1.
// With the shared SliceLoader (handwritten.cuh) ptxas spills 24 bytes in the bf16 instance
// (none before, none in f16): bench 165.8 TFLOP/s (0.24x) against 176.5 (0.25x) before.
#include <mma.h>

#include "handwritten/handwritten.cuh"

namespace cutlass_ops::handwritten {
namespace {

namespace wmma = nvcuda::wmma;

// 128 x 128 x 32 tile, 8 warps as 2 (M) x 4 (N), each 64 x 32 = 4 x 2 fragments of 16 x 16.
// Shared memory: 2 buffers x (128 x 40 + 32 x 136) x 2 bytes = 37 KiB, under the 48 KiB a
// kernel gets without opting in; two blocks per SM (__launch_bounds__: <= 128 registers).
struct WmmaConfig {
  static constexpr int kBM = 128, kBN = 128, kBK = 32;
  static constexpr int kWarpsM = 2, kWarpsN = 4, kThreads = 32 * kWarpsM * kWarpsN;
  static constexpr int kWM = kBM / kWarpsM, kWN = kBN / kWarpsN;  // 64 x 32 per warp
  static constexpr int kFragsM = kWM / 16, kFragsN = kWN / 16;    // 4 x 2 fragments
  static constexpr int kVec = 8;                                  // elements per 16-byte load
  static constexpr int kPad = 8;
  static constexpr int kLdA = kBK + kPad, kLdB = kBN + kPad;
  static constexpr int kStageElems = kBM * kLdA + kBK * kLdB;
  static constexpr int kSmemBytes = 2 * kStageElems * 2;
  // Epilogue scratch, one 16 x 16 fp32 fragment per warp, reusing the operand buffers.
  static constexpr int kLdC = 16 + 4;
  static_assert(kWarpsM * kWarpsN * 16 * kLdC * 4 <= kSmemBytes, "epilogue scratch fits");
};

template <Precision P>
__global__ void __launch_bounds__(WmmaConfig::kThreads, 2) wmma_gemm(Problem<typename ElementTraits<P>::Element> p,
                                                                  TileGrid grid) {
  using Cfg = WmmaConfig;
  using T = typename ElementTraits<P>::Element;
  constexpr int kBM = Cfg::kBM, kBN = Cfg::kBN, kBK = Cfg::kBK, kVec = Cfg::kVec;
  __shared__ __align__(128) unsigned char smem_bytes[Cfg::kSmemBytes];
  T* smem = reinterpret_cast<T*>(smem_bytes);
  auto a_tile = [&](int buf) { return smem + buf * Cfg::kStageElems; };               // [kBM][kLdA]
  auto b_tile = [&](int buf) { return smem + buf * Cfg::kStageElems + kBM * Cfg::kLdA; };  // [kBK][kLdB]

  const int2 origin = tile_origin(grid, kBM, kBN);
  const int tid = static_cast<int>(threadIdx.x);
  const int warp = tid / 32, lane = tid % 32;
  const int warp_m = warp / Cfg::kWarpsN, warp_n = warp % Cfg::kWarpsN;

  // Load layout as in step 3 (handwritten.cuh's SliceLoader), in 16-byte vectors of 8
  // elements; one source pointer per operand plus a row stride keeps the register count at
  // two blocks per SM.
  using Loader = SliceLoader<T, uint4, Cfg::kThreads, kBM, kBN, kBK>;
  static_assert(Loader::kVec == kVec, "16-byte vectors of 16-bit elements");
  Loader ld(p, origin, tid);
  auto store_slice = [&](int buf) {
#pragma unroll
    for (int j = 0; j < Loader::kLoadsA; ++j) {
      *reinterpret_cast<uint4*>(a_tile(buf) + (ld.a_row + j * Loader::kRowStepA) * Cfg::kLdA + ld.a_k) = ld.a[j];
    }
#pragma unroll
    for (int j = 0; j < Loader::kLoadsB; ++j) {
      *reinterpret_cast<uint4*>(b_tile(buf) + (ld.b_k + j * Loader::kRowStepB) * Cfg::kLdB + ld.b_col) = ld.b[j];
    }
  };

  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[Cfg::kFragsM][Cfg::kFragsN];
#pragma unroll
  for (int i = 0; i < Cfg::kFragsM; ++i) {
#pragma unroll
    for (int j = 0; j < Cfg::kFragsN; ++j) wmma::fill_fragment(acc[i][j], 0.0f);
  }

  ld.load(p, origin.x, 0);
  store_slice(0);
  __syncthreads();

  const int slices = static_cast<int>(ceil_div(p.k, kBK));
  for (int s = 0; s < slices; ++s) {
    const int buf = s & 1;
    const bool more = s + 1 < slices;
    if (more) ld.load(p, origin.x, (s + 1) * kBK);
    const T* as = a_tile(buf) + warp_m * Cfg::kWM * Cfg::kLdA;
    const T* bs = b_tile(buf) + warp_n * Cfg::kWN;
#pragma unroll
    for (int kk = 0; kk < kBK; kk += 16) {
      // Both B fragments, then one A fragment at a time: 4 fewer live fragments than
      // loading all of A first, which keeps the kernel within 128 registers.
      wmma::fragment<wmma::matrix_b, 16, 16, 16, T, wmma::row_major> b_frag[Cfg::kFragsN];
#pragma unroll
      for (int j = 0; j < Cfg::kFragsN; ++j) wmma::load_matrix_sync(b_frag[j], bs + kk * Cfg::kLdB + j * 16, Cfg::kLdB);
#pragma unroll
      for (int i = 0; i < Cfg::kFragsM; ++i) {
        wmma::fragment<wmma::matrix_a, 16, 16, 16, T, wmma::row_major> a_frag;
        wmma::load_matrix_sync(a_frag, as + i * 16 * Cfg::kLdA + kk, Cfg::kLdA);
#pragma unroll
        for (int j = 0; j < Cfg::kFragsN; ++j) wmma::mma_sync(acc[i][j], a_frag, b_frag[j], acc[i][j]);
      }
    }
    if (more) store_slice(buf ^ 1);  // the other buffer's readers all passed the barrier below
    __syncthreads();
  }

  // Epilogue, one fragment at a time through this warp's 16 x 16 fp32 scratch (the operand
  // buffers are free: the loop ended on a barrier). Lane l converts row l / 2, columns
  // 8 * (l % 2) .. + 7, and writes them as one 16-byte vector.
  float* scratch = reinterpret_cast<float*>(smem) + warp * 16 * Cfg::kLdC;
  const int r = lane / 2, c = lane % 2 * 8;
#pragma unroll
  for (int i = 0; i < Cfg::kFragsM; ++i) {
#pragma unroll
    for (int j = 0; j < Cfg::kFragsN; ++j) {
      wmma::store_matrix_sync(scratch, acc[i][j], Cfg::kLdC, wmma::mem_row_major);
      __syncwarp();
      const int row = origin.x + warp_m * Cfg::kWM + i * 16 + r;
      const int col = origin.y + warp_n * Cfg::kWN + j * 16 + c;
      if (row < p.m && col < p.n) {  // N is a multiple of 8: the vector is wholly in or out
        const float* v = scratch + r * Cfg::kLdC + c;
        __align__(16) typename ElementTraits<P>::Element2 out[4];
#pragma unroll
        for (int e = 0; e < 4; ++e) out[e] = ElementTraits<P>::from_float2(v[2 * e], v[2 * e + 1]);
        *reinterpret_cast<uint4*>(p.d + row * p.ldd + col) = *reinterpret_cast<const uint4*>(out);
      }
      __syncwarp();  // the next fragment overwrites the scratch
    }
  }
}

template <Precision P>
KernelStatus run(const GemmArgs& g) {
  using T = typename ElementTraits<P>::Element;
  const TileGrid grid = make_tile_grid(g, WmmaConfig::kBM, WmmaConfig::kBN);
  wmma_gemm<P><<<static_cast<unsigned>(grid.tiles_m) * grid.tiles_n, WmmaConfig::kThreads, 0, g.stream>>>(
      make_problem<T>(g), grid);
  return launch_status();
}

template <Precision P>
KernelInfo info(const char* name) {
  using Registered = configs::Handwritten_4_Wmma_128x128x32;
  static_assert(Registered::kTileM == WmmaConfig::kBM && Registered::kTileN == WmmaConfig::kBN &&
                    Registered::kTileK == WmmaConfig::kBK,
                "the kernel table describes this file's tile");
  return make_info({name, Registered::kId, P, /*align_a=*/8, /*align_b=*/8, /*align_d=*/8,
                    WmmaConfig::kBM, WmmaConfig::kBN, WmmaConfig::kBK, WmmaConfig::kSmemBytes,
                    &can_implement_tiles<WmmaConfig::kBM, WmmaConfig::kBN>, &run<P>, MathClass::kMma, Mainloop::kBasic, WmmaConfig::kThreads});
}

const KernelRegistrar f16_registrar(info<Precision::kF16>("handwritten_sm80_f16_rr_4_wmma"));
const KernelRegistrar bf16_registrar(info<Precision::kBF16>("handwritten_sm80_bf16_rr_4_wmma"));

}  // namespace
}  // namespace cutlass_ops::handwritten
