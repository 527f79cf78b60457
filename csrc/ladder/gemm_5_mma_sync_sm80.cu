// Step 5 of the hand-written GEMM ladder: mma.sync + ldmatrix + a cp.async multistage
// pipeline over XOR-swizzled shared memory (fp16 and bf16 in, fp32 accumulate) -- the
// structure of CUTLASS's SM80 tensor-op kernels, written out by hand.
//
// The idea over step 4: stop staging operands through registers and let the copy engine
// run ahead. cp.async moves 16-byte vectors from global straight into shared memory
// without occupying registers or stalling the issuing thread, so the block keeps
// kStages - 1 K slices in flight while the tensor cores chew on the oldest one: the
// global latency (~1 us) hides behind several slices of math instead of one.
// Making that pay needs the pieces WMMA hid from us:
//
//  - mma.sync.m16n8k16 (PTX) instead of wmma: the fragment layout is documented (the
//    epilogue knows which output element each register holds), and the warp tile grows to 64 x 64 (4 x 8 mma tiles): 8 ldmatrix.x4 feed 32 mma per
//    16-deep step, the ratio that keeps shared-memory bandwidth under the tensor cores.
//  - ldmatrix.x4 loads four 8 x 8 fragments per instruction (.trans turns row-major B's
//    K-major rows into mma's "col" B operand on the fly).
//  - XOR swizzle instead of padding: ldmatrix reads 8 rows of 16 bytes at one column; the
//    16-byte chunk index is XORed with the row so those 8 land in 8 different bank groups,
//    while cp.async writes stay 16-byte aligned and the tile keeps no wasted padding.
//  - Fragment double buffering: the next 16-deep step's ldmatrix are issued before this
//    step's mma, and the pipeline barrier sits just before the step that crosses into the
//    next slice, CUTLASS's "multistage" schedule.
//  - The output tile goes out through shared memory (the operand stages are free by
//    then), so each warp writes whole 512-byte rows in 16-byte stores instead of 16 bytes
//    per row per instruction: measured on H100 at 4096^3 bf16, 485 against 452 TFLOP/s.
//
// Edges: cp.async with a source size of 0 zero-fills rows past M, columns past N and K
// past K, so the main loop never branches on the edge; the epilogue predicates per chunk.
// Alignment 8 (16-byte cp.async) for A and B. D needs only 2: the 16-byte stores fall
// back to 4-byte pairs when D's address or ldd is not 16-byte aligned.
//
// Where it stops: a 128 x 256 tile moves (128 + 256) x 2 bytes from L2 per 2 x 128 x 256
// flops, ~5.5 TB/s of L2 traffic at 480 TFLOP/s, and the 128 fp32 accumulators per thread
// leave no registers for a larger tile. mma.sync itself peaks at 650 TFLOP/s on H100
// (measured, registers only); cuBLAS's ~790 needs Hopper's wgmma, TMA and clusters.
//
// Measured (H100, 4096^3, standalone harness, 2026-11-22): f16 475.7 TFLOP/s (0.62x cuBLAS), bf16 485.2 (0.61x). Bench figures: benchmarks/RESULTS.md at 824ebc1.
#include "handwritten/handwritten.cuh"
#include "handwritten/ptx.cuh"

namespace cutlass_ops::handwritten {
namespace {

// kBM x kBN x kBK block tile, kWarpsM x kWarpsN warps, kStages slices of A and B in shared
// memory, blocks ordered in groups of kGroupM tile rows (see tile_origin).
template <int kBM_, int kBN_, int kBK_, int kWarpsM_, int kWarpsN_, int kStages_, int kGroupM_ = 1,
          bool kStagedEpilogue_ = true>
struct MmaConfig {
  static constexpr int kBM = kBM_, kBN = kBN_, kBK = kBK_, kStages = kStages_, kGroupM = kGroupM_;
  static constexpr bool kStagedEpilogue = kStagedEpilogue_;
  static constexpr int kWarpsM = kWarpsM_, kWarpsN = kWarpsN_, kThreads = 32 * kWarpsM * kWarpsN;
  static constexpr int kWM = kBM / kWarpsM, kWN = kBN / kWarpsN;
  static constexpr int kMTiles = kWM / 16, kNTiles = kWN / 8;  // mma tiles per warp
  static constexpr int kKSteps = kBK / 16;                     // mma k-steps per slice
  static constexpr int kChunksA = kBK / 8, kChunksB = kBN / 8;  // 16-byte chunks per smem row
  static constexpr int kStageBytes = (kBM * kBK + kBK * kBN) * 2;
  static constexpr int kSmemBytes = kStages * kStageBytes;
  static constexpr int kLoadsA = kBM * kChunksA / kThreads;  // cp.async per thread per slice
  static constexpr int kLoadsB = kBK * kChunksB / kThreads;
  static_assert(kKSteps >= 2, "the schedule below issues copies on the first k-step, waits on the last");
  static_assert(kNTiles % 2 == 0, "ldmatrix.x4.trans loads B for two n8 tiles");
  static_assert(!kStagedEpilogue || kBM * kBN * 2 <= kSmemBytes, "the output tile fits in the operand stages");
  static_assert(kLoadsA * kThreads == kBM * kChunksA && kLoadsB * kThreads == kBK * kChunksB,
                "every thread issues the same number of copies");
};

// 128 x 256 x 32, 8 warps (2 x 4) of 64 x 64, 4 stages: 4 x 24 KiB = 96 KiB of shared
// memory, one block per SM (the 128 fp32 accumulators per thread take ~245 registers).
// Measured on H100 at 4096^3 bf16 (direct epilogue), against this config's 452 TFLOP/s:
// 128x256x64 3 stages 448-453, 128x128x64 (4 warps, 2 blocks/SM) 447, 128x128x32 4 stages
// 443, 256x128x32 422; grouped tile order (kGroupM = 8) cost 1-4%.
using Mma128x256x32_4s = MmaConfig<128, 256, 32, 2, 4, 4>;

template <class Cfg, Precision P>
__global__ void __launch_bounds__(Cfg::kThreads, 1) mma_sync_gemm(Problem<typename ElementTraits<P>::Element> p,
                                                                  TileGrid grid) {
  using T = typename ElementTraits<P>::Element;
  constexpr int kBM = Cfg::kBM, kBN = Cfg::kBN, kBK = Cfg::kBK, kStages = Cfg::kStages;
  extern __shared__ __align__(128) unsigned char smem[];
  // Stage s: A slice (kBM rows of kBK, swizzled) then B slice (kBK rows of kBN, swizzled).
  const uint32_t smem_base = ptx::smem_address(smem);
  constexpr uint32_t kBOffset = kBM * kBK * 2;

  const int2 origin = tile_origin<Cfg::kGroupM>(grid, kBM, kBN);
  const int tid = static_cast<int>(threadIdx.x);
  const int warp = tid / 32, lane = tid % 32;
  const int warp_m = warp / Cfg::kWarpsN, warp_n = warp % Cfg::kWarpsN;

  // ---- global -> shared copies ----
  // Copy j of A: row tid / kChunksA + j * (kThreads / kChunksA), chunk tid % kChunksA; of B:
  // k-row tid / kChunksB + j * (kThreads / kChunksB), chunk tid % kChunksB. A warp covers
  // whole rows, so global reads are contiguous. The rows of one thread's copies differ by
  // a multiple of 8, so they share the swizzle key: destinations are a base plus j * stride.
  constexpr int kRowStepA = Cfg::kThreads / Cfg::kChunksA, kRowStepB = Cfg::kThreads / Cfg::kChunksB;
  static_assert(kRowStepA % 8 == 0 && (Cfg::kLoadsB == 1 || kRowStepB % 8 == 0), "shared swizzle key per thread");
  const int a_row = tid / Cfg::kChunksA, a_chunk = tid % Cfg::kChunksA;
  const int b_row = tid / Cfg::kChunksB, b_chunk = tid % Cfg::kChunksB;
  const uint32_t a_dst = (a_row * Cfg::kChunksA + swizzle<Cfg::kChunksA>(a_row, a_chunk)) * 16;
  const uint32_t b_dst = kBOffset + (b_row * Cfg::kChunksB + swizzle<Cfg::kChunksB>(b_row, b_chunk)) * 16;
  const T* a_src = p.a + (origin.x + a_row) * p.lda + a_chunk * 8;  // advanced by kBK per slice
  const T* b_src = p.b + b_row * p.ldb + origin.y + b_chunk * 8;    // advanced by kBK rows per slice
  const bool b_col_ok = origin.y + b_chunk * 8 < p.n;  // N % 8 == 0: a chunk is wholly in or out
  const int64_t a_row_step = kRowStepA * p.lda, b_row_step = kRowStepB * p.ldb, b_slice_step = kBK * p.ldb;

  // Issue the copies of the slice starting at k0 into stage `slot`; out-of-range chunks
  // are zero-filled (their source address is never read, and points at the matrix start).
  auto load_slice = [&](int slot, int k0) {
    const uint32_t stage = smem_base + slot * Cfg::kStageBytes;
    const bool a_k_ok = k0 + a_chunk * 8 < p.k;
#pragma unroll
    for (int j = 0; j < Cfg::kLoadsA; ++j) {
      const bool ok = a_k_ok && origin.x + a_row + j * kRowStepA < p.m;
      ptx::cp_async_16(stage + a_dst + j * kRowStepA * kBK * 2, ok ? a_src + j * a_row_step : p.a, ok);
    }
#pragma unroll
    for (int j = 0; j < Cfg::kLoadsB; ++j) {
      const bool ok = b_col_ok && k0 + b_row + j * kRowStepB < p.k;
      ptx::cp_async_16(stage + b_dst + j * kRowStepB * kBN * 2, ok ? b_src + j * b_row_step : p.b, ok);
    }
    a_src += kBK;
    b_src += b_slice_step;
  };

  // ---- shared -> fragments ----
  // ldmatrix.x4 for A tile mi at k-step kk: lane l addresses row l % 16 of the 16-row tile,
  // chunk 2 * kk + l / 16 (matrices: rows 0-7/8-15 x k 0-7/8-15, the a0..a3 order).
  // ldmatrix.x4.trans for B tiles 2q, 2q + 1: lane l addresses k-row l % 8 + 8 * (l / 8 % 2),
  // chunk (its n / 8) + l / 16 (matrices: b0, b1 of tile 2q, then of tile 2q + 1).
  // Warp tiles start on multiples of 8 rows and chunks, so each lane's swizzle key is fixed;
  // only the chunk index varies, and it is known at compile time but for the lane part.
  const int a_frag_row = warp_m * Cfg::kWM + lane % 16;
  uint32_t a_frag[Cfg::kKSteps];  // byte offset in a stage of tile 0 at k-step kk
#pragma unroll
  for (int kk = 0; kk < Cfg::kKSteps; ++kk) {
    a_frag[kk] = (a_frag_row * Cfg::kChunksA + swizzle<Cfg::kChunksA>(a_frag_row, 2 * kk + lane / 16)) * 16;
  }
  const int b_frag_row = lane % 8 + 8 * (lane / 8 % 2);
  uint32_t b_frag[Cfg::kNTiles / 2];  // byte offset in a stage of tiles 2q, 2q + 1 at k-step 0
#pragma unroll
  for (int q = 0; q < Cfg::kNTiles / 2; ++q) {
    const int chunk = (warp_n * Cfg::kWN + q * 16) / 8 + lane / 16;
    b_frag[q] = kBOffset + (b_frag_row * Cfg::kChunksB + swizzle<Cfg::kChunksB>(b_frag_row, chunk)) * 16;
  }

  uint32_t a_regs[2][Cfg::kMTiles][4];
  uint32_t b_regs[2][Cfg::kNTiles][2];
  auto load_fragments = [&](int buf, int slot, int kk) {
    const uint32_t stage = smem_base + slot * Cfg::kStageBytes;
#pragma unroll
    for (int mi = 0; mi < Cfg::kMTiles; ++mi) {
      ptx::ldmatrix_x4(a_regs[buf][mi], stage + a_frag[kk] + mi * 16 * kBK * 2);
    }
#pragma unroll
    for (int q = 0; q < Cfg::kNTiles / 2; ++q) {
      uint32_t r[4];
      ptx::ldmatrix_x4_trans(r, stage + b_frag[q] + kk * 16 * kBN * 2);
      b_regs[buf][2 * q][0] = r[0];
      b_regs[buf][2 * q][1] = r[1];
      b_regs[buf][2 * q + 1][0] = r[2];
      b_regs[buf][2 * q + 1][1] = r[3];
    }
  };

  float acc[Cfg::kMTiles][Cfg::kNTiles][4] = {};
  const int slices = static_cast<int>(ceil_div(p.k, kBK));

  // Prologue: kStages - 1 slices in flight (empty groups past K keep the count uniform).
#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < slices) load_slice(s, s * kBK);
    ptx::cp_async_commit();
  }
  ptx::cp_async_wait<kStages - 2>();
  __syncthreads();

  int read_slot = 0, write_slot = kStages - 1;
  int next_k = (kStages - 1) * kBK;
  load_fragments(0, read_slot, 0);

  for (int s = 0; s < slices; ++s) {
#pragma unroll
    for (int kk = 0; kk < Cfg::kKSteps; ++kk) {
      if (kk == Cfg::kKSteps - 1) {
        // Slice s + 1 has landed (wait), and every warp is done reading slice s - 1's stage,
        // which the copies issued at kk == 0 of the next iteration overwrite (barrier).
        ptx::cp_async_wait<kStages - 2>();
        __syncthreads();
        read_slot = read_slot + 1 == kStages ? 0 : read_slot + 1;
      }
      // The next k-step's fragments (on the last step: the next slice's first).
      load_fragments((kk + 1) % 2, read_slot, (kk + 1) % Cfg::kKSteps);
      if (kk == 0) {
        if (next_k < p.k) load_slice(write_slot, next_k);
        ptx::cp_async_commit();
        write_slot = write_slot + 1 == kStages ? 0 : write_slot + 1;
        next_k += kBK;
      }
#pragma unroll
      for (int mi = 0; mi < Cfg::kMTiles; ++mi) {
#pragma unroll
        for (int ni = 0; ni < Cfg::kNTiles; ++ni) {
          ptx::mma_m16n8k16<P>(acc[mi][ni], a_regs[kk % 2][mi], b_regs[kk % 2][ni]);
        }
      }
    }
  }
  ptx::cp_async_wait<0>();  // only empty groups remain, but the stages are reused below

  // Epilogue. Accumulator c0, c1 of mma tile (mi, ni) is row lane / 4, columns
  // 2 * (lane % 4) and + 1; c2, c3 the same 8 rows lower. N is a multiple of 8, so an
  // element pair, and an 8-element chunk, is wholly in or out of D.
  using Traits = ElementTraits<P>;
  using T2 = typename Traits::Element2;
  if constexpr (Cfg::kStagedEpilogue) {
    // Through shared memory: direct stores of element pairs write 16 bytes per row per
    // instruction; staging the tile (swizzled like B, so the 8 rows a store instruction
    // covers hit 8 bank groups) lets each warp then write whole 512-byte rows, 16 bytes a
    // thread.
    __syncthreads();  // every warp is done reading the operand stages
    constexpr int kChunksD = kBN / 8;
#pragma unroll
    for (int mi = 0; mi < Cfg::kMTiles; ++mi) {
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const int row = warp_m * Cfg::kWM + mi * 16 + lane / 4 + half * 8;
#pragma unroll
        for (int ni = 0; ni < Cfg::kNTiles; ++ni) {
          const int chunk = (warp_n * Cfg::kWN + ni * 8) / 8;
          const int offset = (row * kChunksD + swizzle<kChunksD>(row, chunk)) * 16 + lane % 4 * 4;
          *reinterpret_cast<T2*>(smem + offset) = Traits::from_float2(acc[mi][ni][2 * half], acc[mi][ni][2 * half + 1]);
        }
      }
    }
    __syncthreads();
    // 16-byte stores need D's address and ldd 16-byte aligned, which the declared alignment
    // (2) does not promise; otherwise each chunk goes out as 4-byte pairs.
    const bool vector_ok = p.ldd % 8 == 0 && reinterpret_cast<uintptr_t>(p.d) % 16 == 0;
    for (int i = tid; i < kBM * kChunksD; i += Cfg::kThreads) {
      const int r = i / kChunksD, c = i % kChunksD;
      const int row = origin.x + r, col = origin.y + c * 8;
      if (row >= p.m || col >= p.n) continue;
      const uint4 v = *reinterpret_cast<const uint4*>(smem + (r * kChunksD + swizzle<kChunksD>(r, c)) * 16);
      T* d = p.d + row * p.ldd + col;
      if (vector_ok) {
        *reinterpret_cast<uint4*>(d) = v;
      } else {
        uint32_t* d32 = reinterpret_cast<uint32_t*>(d);
        d32[0] = v.x;
        d32[1] = v.y;
        d32[2] = v.z;
        d32[3] = v.w;
      }
    }
  } else {
#pragma unroll
    for (int mi = 0; mi < Cfg::kMTiles; ++mi) {
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const int row = origin.x + warp_m * Cfg::kWM + mi * 16 + lane / 4 + half * 8;
        if (row >= p.m) continue;
        T* d_row = p.d + row * p.ldd;
#pragma unroll
        for (int ni = 0; ni < Cfg::kNTiles; ++ni) {
          const int col = origin.y + warp_n * Cfg::kWN + ni * 8 + lane % 4 * 2;
          if (col < p.n) {
            *reinterpret_cast<T2*>(d_row + col) =
                Traits::from_float2(acc[mi][ni][2 * half], acc[mi][ni][2 * half + 1]);
          }
        }
      }
    }
  }
}

template <class Cfg, Precision P>
struct KernelTag {};  // one shared-memory opt-in per kernel instantiation

template <class Cfg, Precision P>
KernelStatus run(const GemmArgs& g) {
  using T = typename ElementTraits<P>::Element;
  const auto kernel = &mma_sync_gemm<Cfg, P>;
  const cudaError_t opted = opt_in_shared_memory_once<KernelTag<Cfg, P>>(reinterpret_cast<const void*>(kernel),
                                                           Cfg::kSmemBytes, g.device);
  if (opted != cudaSuccess) return from_cuda(opted);
  const TileGrid grid = make_tile_grid(g, Cfg::kBM, Cfg::kBN);
  kernel<<<static_cast<unsigned>(grid.tiles_m) * grid.tiles_n, Cfg::kThreads, Cfg::kSmemBytes, g.stream>>>(
      make_problem<T>(g), grid);
  return launch_status();
}

template <Precision P>
KernelInfo info(const char* name) {
  using Registered = configs::Handwritten_5_MmaSync_128x256x32;
  static_assert(Registered::kTileM == Mma128x256x32_4s::kBM && Registered::kTileN == Mma128x256x32_4s::kBN &&
                    Registered::kTileK == Mma128x256x32_4s::kBK,
                "the kernel table describes this file's tile");
  return make_info({name, Registered::kId, P, /*align_a=*/8, /*align_b=*/8, /*align_d=*/2,
                    Mma128x256x32_4s::kBM, Mma128x256x32_4s::kBN, Mma128x256x32_4s::kBK, Mma128x256x32_4s::kSmemBytes,
                    &can_implement_tiles<Mma128x256x32_4s::kBM, Mma128x256x32_4s::kBN>, &run<Mma128x256x32_4s, P>, MathClass::kMma, Mainloop::kCpAsyncMultistage,
                    Mma128x256x32_4s::kThreads, /*stages=*/4});
}

const KernelRegistrar f16_registrar(info<Precision::kF16>("handwritten_sm80_f16_rr_5_mma_sync"));
const KernelRegistrar bf16_registrar(info<Precision::kBF16>("handwritten_sm80_bf16_rr_5_mma_sync"));

}  // namespace
}  // namespace cutlass_ops::handwritten
