#include "dispatch/heuristic.h"

#include <algorithm>
#include <array>
#include <cstring>

#include "dispatch/configs.h"

namespace cutlass_ops {

namespace {
int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Rows up to which 32-bit problems stream B through the hand-written skinny-M kernel: a
// 128-row tile (SIMT or TF32 tensor-op) wastes 8x its work at 16 rows and reads B at a
// fraction of the bandwidth (fp32 1x4096x4096: 0.28x cuBLAS on CUTLASS SIMT).
constexpr int64_t kSkinnyRows = 16;

// Where Hopper's 3xTF32 presplits its operands. The two split passes write 3 (M + N) K floats,
// a cost that grows against the GEMM's M N K as 1/M + 1/N, so a small M or N leaves the passes
// most of the time; below these sizes IEEE fp32 runs instead, which on Hopper is float64 DMMA
// (more accurate than 3xTF32). Measured on an H100 (bench --suite all, fourteenth session),
// the presplit GEMM against float32 on DMMA: ahead from 1024x2048x4096 (237 us against 286)
// and at 2048^3 and up (0.64-0.76x the time; 16384^3 0.93x); level or behind at 512 rows
// (512x4096x4096 0.98x the time, 512x6144x4096 1.10x), at 1000^3 (65 against 45 us) and
// 1024^3, and far behind at 256x256 with a long K (K = 131072: 874 us against 362).
constexpr int64_t kPresplitMinSide = 1024;
constexpr double kPresplitMinMnk = 1024.0 * 1024 * 1024;  // exclusive
constexpr int64_t kPresplitAlongNMinRows = 4096;       // tile order: see the 3xTF32 case
// And from this K. 3xTF32's error has a floor (about 1.3e-7 to 3.5e-7 relative, against float64:
// the rounding of its parts and of the float32 output), where torch's IEEE fp32 error grows
// from below it like sqrt(K). Measured on an H100 (bench --dtype 3xtf32, eleventh session): at
// K = 32 and 64 (16384x16384x32, 32768x32768x64) the presplit GEMM's error was 1.3-1.4x
// torch's (1.3e-7 against 1.0e-7, 2.0e-7 against 1.45e-7), at K >= 1021 below it on every
// problem; IEEE fp32 there is torch's accuracy and 1.3x its speed (the output write bounds it).
constexpr int64_t kPresplitMinK = 256;

// IEEE float32 widened in registers (f32_on_dmma_warp.h): from this K, and on Hopper the
// streaming kernel up to this many rows (measured: preferred_configs, kF32).
constexpr int64_t kF32InRegistersMinK = 128;
constexpr int64_t kF32SkinnyRowsHopper = 4;

// Row-major x row-major TF32 over 128 rows with under half a wave of 256x128 tiles: the K
// from which that tile split along K beats the 128x128 one. Measured on an H100 (split_probe):
// ahead at K = 4096 and 14336 (256 and 512 rows x 4096 columns), behind at 1024 (1024^3).
constexpr int64_t kWideTf32SplitMinK = 4096;

// The fraction of the SMs busy over all waves of `tiles` whole tiles, one CTA per SM: 1 when
// the last wave is full.
double wave_fill(int64_t tiles, const DeviceDesc& dev) {
  const int64_t sms = std::max<int64_t>(1, dev.sm_count);
  return static_cast<double>(tiles) / static_cast<double>(ceil_div(tiles, sms) * sms);
}

// Whether `tiles` whole tiles fill at least three quarters of one wave, one CTA per SM: the
// bar at which the tile rules below take the larger of two tiles.
bool three_quarters_wave(int64_t tiles, const DeviceDesc& dev) { return 4 * tiles >= 3 * dev.sm_count; }

// Of three 64-row ping-pong configs (64, 128 and 256 columns wide), the one whose tiles fit
// one wave with the most of them, if that is at least a quarter of a wave or K is too short to
// split (split_k_slices, K steps of tile_k); else nullptr.
const char* sm90_64_row_tile(const Plan& p, const DeviceDesc& dev, int tile_k, const std::array<const char*, 3>& configs) {
  const int64_t widths[] = {64, 128, 256};
  for (int i = 0; i < 3; ++i) {
    const int64_t tiles = ceil_div(p.m, 64) * ceil_div(p.n, widths[i]);
    if (tiles > dev.sm_count) continue;
    const bool enough = 4 * tiles >= dev.sm_count || split_k_slices(tiles, ceil_div(p.k, tile_k), dev) < 2;
    return enough ? configs[i] : nullptr;
  }
  return nullptr;
}
}  // namespace

Preference preferred_configs(const Plan& p, const DeviceDesc& dev) {
  using namespace configs;
  Preference pref;
  // SM90 kernels are built for sm_90a, which runs on compute capability 9.0 only.
  const bool hopper = dev.cc == 90;
  // Each config carries the reason explain() shows when it is the one that takes the problem;
  // a config whose kernels refuse the problem (layout, alignment) passes to the next.
  switch (p.precision) {
    case Precision::kF16:
    case Precision::kBF16:
      if (hopper) {
        // Measured on an H100 (python -m cutlass_ops tune --suite all, 2026-11-22; the table
        // is cutlass_ops/tuning_tables/).
        // Up to 16 rows (32 while the blocks fit one per SM), a long K, and at least half a wave
        // of 32-column blocks: the hand-written tensor-core streaming kernel (K split over each
        // block's 8 warps). It reads B at the DRAM floor, as cuBLAS does, where the tile kernels
        // read it 10-20% slower (bench, L2 flushed, bf16: 16x4096x4096 21.2 us, cuBLAS 22.8,
        // swap-AB 26.1; 32x4096x4096 22.4, cuBLAS 21.4, swap-AB 26.1). Past two blocks per SM
        // (one at 32 rows, whose instance takes twice the shared memory) its waves of blocks
        // lose to the tile kernels (16x14336x4096: 56.2 us, SM80 64x64 53.9).
        const int64_t stream_blocks = ceil_div(p.n, 32);
        const int64_t stream_waves = p.m <= 16 ? 2 : 1;  // blocks per SM
        if (p.m <= 32 && p.k >= 1024 && 2 * stream_blocks >= dev.sm_count &&
            stream_blocks <= stream_waves * dev.sm_count) {
          pref.add(Handwritten_SkinnyMMma::kName,
                   "sm90 16-bit, M <= 32, long K, >= 1/2 wave of 32-column blocks: hand-written tensor-core "
                   "streaming kernel (B read once at bandwidth)");
        }
        const int64_t big_tiles = ceil_div(p.m, 128) * ceil_div(p.n, 256);
        const int64_t tiles = ceil_div(p.m, 128) * ceil_div(p.n, 128);
        const int64_t swap_tiles = ceil_div(p.m, 32) * ceil_div(p.n, 128);
        // 33-128 rows: a 64-row ping-pong tile, the width (64, 128, 256) with the most tiles
        // that fit one wave, from a quarter of a wave (or a K too short to split). Measured on
        // an H100 (bf16, L2 flushed; RESULTS.md, ninth session): 128x4096x4096 1.01x cuBLAS on
        // 64x64 against 0.89x on swap-AB; 128x6144x4096 1.02x on 64x128 (0.95x on 128x64);
        // 128x14336x4096 1.01x on 64x256 (0.98x on ping-pong 128x128); 64x4096x4096 0.99x.
        if (p.m > 32 && p.m <= 128) {
          const char* narrow = sm90_64_row_tile(p, dev, 64,
                                                {Sm90_64x64x64_1x1x1_Pingpong::kName, Sm90_64x128x64_1x1x1_Pingpong::kName,
                                                 Sm90_64x256x64_1x1x1_Pingpong::kName});
          if (narrow != nullptr) {
            pref.add(narrow, "sm90 16-bit, 33-128 rows: ping-pong 64-row tiles, the width with the most tiles in one wave");
          }
        }
        // Otherwise up to 32 rows (decode-size batches), or up to 128 while the 32-row tiles
        // fit one wave: swap-AB, so the few rows sit on WGMMA's narrow N side instead of
        // padding a 128-row tile (rr and rc only; other layouts go on down the list).
        if (p.m <= 32 || (p.m <= 128 && swap_tiles <= dev.sm_count)) {
          pref.add(Sm90_32x128x128_1x1x1_CoopStreamK_SwapAB::kName,
                   "sm90 16-bit, M <= 32 (or <= 128 in one wave): swap-AB 32x128 tiles (D^T = B^T A^T)");
        }
        if (tiles <= 16 && p.k <= 512) {
          // Tiny (output <= 512x512, K <= 512): the work is a few microseconds, and the SM80
          // multistage kernel starts faster than a TMA kernel (no descriptors, cluster or
          // scheduler set-up). Tuner, L2 flushed: it won 256^3 (6.0 us against 6.5 for the best
          // SM90 kernel) and bf16 512^3.
          pref.add(Sm80_64x64x64_32x32x64_5s::kName,
                   "sm90 16-bit, <= 16 tiles of 128x128 and K <= 512: SM80 multistage 64x64 (starts fastest)");
        }
        if (big_tiles >= dev.sm_count) {
          // One 128x256 tile per SM or more: the hand-written TMA + WGMMA kernel (ladder step
          // 6, rr and rc), measured 1-8% faster than CUTLASS's cooperative 128x256 (warm L2).
          pref.add(Handwritten_6_WgmmaTma_128x256x64::kName,
                   "sm90 16-bit, >= 1 tile of 128x256 per SM: hand-written TMA + WGMMA 128x256 (ladder step 6)");
          pref.add(Sm90_128x256x64_2x1x1_Coop::kName, "sm90 16-bit, >= 1 tile of 128x256 per SM: cooperative 128x256");
          pref.add(Sm90_128x128x64_1x1x1_Pingpong::kName, "sm90 16-bit: ping-pong 128x128");
        } else if (4 * tiles >= dev.sm_count || split_k_slices(tiles, ceil_div(p.k, 64), dev) < 2) {
          // Down to a quarter of a 128x128 tile per SM (512x4096, 1024^3, 777x1234), or a
          // short K: ping-pong 128x128, whose epilogue hides under the other warpgroup's MMAs.
          pref.add(Sm90_128x128x64_1x1x1_Pingpong::kName,
                   "sm90 16-bit, >= 1/4 tile of 128x128 per SM or a short K: ping-pong 128x128");
          pref.add(Sm90_128x256x64_2x1x1_Coop::kName, "sm90 16-bit: cooperative 128x256");
        } else {
          // Fewer tiles with a long K (decode-size M, 256x256x131072): split K over the SMs.
          // Up to 16 tiles of 128x256 and K >= 32768, as slices summed by a second kernel where
          // K divides into enough of them (sum_split_k_slices): CUTLASS's own split-K adds its
          // slices one after another. Measured on an H100 (RESULTS.md, eighth session), bf16,
          // against the best CUTLASS split-K: 256x256x32768 31.6 us (35.0), 256x256x131072 73.0
          // (78.9), 256x256x524288 212.6 (217.8), 512x512x65536 73.7 (80.8), 512x1024x32768
          // 65.2 (73.9). Shorter K and more tiles are unmeasured: CUTLASS's split-K there.
          const int64_t wide_tiles = ceil_div(p.m, 128) * ceil_div(p.n, 256);
          if (wide_tiles <= 16 && p.k >= 32768 && sum_split_k_slices(wide_tiles, p.k, 8, dev) >= 2) {
            pref.add(Sm90_128x256x64_2x1x1_Coop_SplitKSum::kName,
                     "sm90 16-bit, < 1/4 tile of 128x128 per SM and a long K: K slices as a batch of "
                     "128x256 GEMMs, summed by a second kernel");
          }
          // Otherwise the stream-K kernel in split-K mode (its stream-K mode lost to split-K on
          // every suite shape).
          pref.add(Sm90_128x128x64_1x1x1_CoopStreamK::kName,
                   "sm90 16-bit, < 1/4 tile of 128x128 per SM and a long K: split-K cooperative 128x128");
          pref.add(Sm90_128x64x128_1x1x1_CoopStreamK::kName, "sm90 16-bit, few tiles: split-K cooperative 128x64");
          pref.add(Sm90_128x128x64_1x1x1_Pingpong::kName, "sm90 16-bit: ping-pong 128x128");
        }
      }
      {
        // Not measured off Hopper (no such GPU here): less than a wave of 128x128 tiles takes
        // 64x64 tiles, four times the CTAs; 128x256 otherwise, and where its 144 KiB of shared
        // memory does not fit (SM86/89 offer 99 KiB), 64x64 again, before the 4-byte kernel.
        const bool under_a_wave = ceil_div(p.m, 128) * ceil_div(p.n, 128) < dev.sm_count;
        if (under_a_wave) {
          pref.add(Sm80_64x64x64_32x32x64_5s::kName,
                   "16-bit, < 1 tile of 128x128 per SM: multistage tensor-op 64x64, 16-byte aligned operands");
        }
        pref.add(Sm80_128x256x64_64x64x64_3s::kName, "16-bit: multistage tensor-op 128x256, 16-byte aligned operands");
        if (!under_a_wave) {
          pref.add(Sm80_64x64x64_32x32x64_5s::kName,
                   "16-bit, 16-byte aligned, 128x256 does not fit the shared memory: multistage tensor-op 64x64");
        }
      }
      pref.add(Sm80_128x128x32_64x64x32_3s::kName, "16-bit: multistage tensor-op 128x128, 4-byte aligned operands");
      pref.add(Sm80_128x128x32_64x64x32_2s::kName,
               "16-bit with odd addresses or leading dims: two-stage register-staged tensor-op 128x128");
      pref.add(Sm80Simt_128x128x8_32x64x8_2s::kName, "16-bit with odd addresses or leading dims: SIMT");
      break;

    case Precision::kTF32:
      if (p.m <= kSkinnyRows) {
        // Few rows: reading B is the whole cost. On Hopper, with a long K and half a wave to
        // four waves of 32-column blocks (one per SM), the tensor-core streaming kernel, which
        // keeps more of B in flight: measured (H100, twelfth session, RESULTS.md) 1.31x cuBLAS at
        // 16x4096x4096 (30.9 us against 49.8 on SM80's split-K kernel), 1.13x at 16x6144x4096,
        // 0.99x at 1x4096x4096 (the CUDA-core kernel 0.87x); at 16x128256x4096 (4008 blocks)
        // SM80's tile kernel won (730 us against 746). Otherwise the CUDA-core streaming kernel,
        // in full fp32 products (more accurate than TF32, which TF32 permits).
        const int64_t stream_blocks = ceil_div(p.n, 32);
        if (hopper && p.k >= 1024 && 2 * stream_blocks >= dev.sm_count && stream_blocks <= 4 * dev.sm_count) {
          pref.add(Handwritten_SkinnyMMma::kName,
                   "sm90 tf32, M <= 16, long K, 1/2 to 4 waves of 32-column blocks: hand-written tensor-core "
                   "streaming kernel (B read once at bandwidth)");
        }
        pref.add(Handwritten_SkinnyM::kName,
                 "tf32, M <= 16: hand-written streaming kernel (B read once, K split, fp32 products)");
      }
      if (hopper) {
        // Row-major x row-major (no TF32 WGMMA reads a row-major B from shared memory as it
        // is) runs swapped, D^T = B^T A^T, on the *_swapab configs; their kernels exist for
        // "rr" only, so other layouts pass on to the configs below. Measured (bench, H100, L2
        // flushed): the 256x128 tile from half a wave of its tiles (2048^3: 128 tiles, 0.95x
        // cuBLAS; 4096^3 0.97x; 2048x128256x4096 1.07x); the 128x128 stream-K tile below that
        // (1024^3 0.77x, 128x4096x4096 0.86x, where the SM80 kernel ran 0.69x and 0.82x) but
        // not above (2048^3: 0.55x). Over 128 rows with a long K, the same 256x128 tile split
        // along K to fill a wave: 512x4096x4096 0.93x (0.74x whole), 512x4096x14336 0.97x
        // (0.66x), 256x4096x4096 0.88x (0.77x on 128x128); at K = 1024 (1024^3) the slices are
        // too short and the 128x128 tile stays ahead (0.78x against 0.66x; RESULTS.md, eleventh
        // session). At 33-64 rows with a quarter to one wave of 64x64 tiles, a swapped 64x64
        // ping-pong tile (64x4096x4096 0.90x against 0.81x); wider 64-row tiles lost to the
        // stream-K tile from 128 rows (RESULTS.md, tenth session).
        const int64_t tiles_64 = ceil_div(p.n, 64);
        if (p.m > 32 && p.m <= 64 && 4 * tiles_64 >= dev.sm_count && tiles_64 <= dev.sm_count) {
          pref.add(Sm90_64x64x32_1x1x1_Pingpong_SwapAB::kName,
                   "sm90 tf32 row-major B, 33-64 rows, 1/4 to 1 wave of 64x64 tiles: swap-AB ping-pong 64x64x32");
        } else if (2 * ceil_div(p.m, 256) * ceil_div(p.n, 128) >= dev.sm_count) {
          pref.add(Sm90_256x128x32_1x2x1_Coop_SwapAB::kName,
                   "sm90 tf32 row-major B, >= 1/2 tile of 256x128 per SM: swap-AB cooperative 256x128x32");
        } else if (p.m > 128 && p.k >= kWideTf32SplitMinK) {
          pref.add(Sm90_256x128x32_1x1x1_CoopStreamK_SwapAB::kName,
                   "sm90 tf32 row-major B, > 128 rows, K >= 4096, < 1/2 tile of 256x128 per SM: swap-AB 256x128x32, "
                   "K split to fill a wave");
        } else {
          pref.add(Sm90_128x128x32_1x1x1_CoopStreamK_SwapAB::kName,
                   "sm90 tf32 row-major B, < 1/2 tile of 256x128 per SM: swap-AB 128x128x32, split-K");
        }
      }
      if (hopper && ceil_div(p.m, 128) * ceil_div(p.n, 256) >= dev.sm_count) {
        pref.add(Sm90_128x256x32_2x1x1_Coop::kName, "sm90 tf32, >= 1 tile of 128x256 per SM: cooperative 128x256x32");
        pref.add(Sm90_128x128x32_1x1x1_Coop::kName, "sm90 tf32: cooperative 128x128x32");
      } else if (hopper && ceil_div(p.m, 128) * ceil_div(p.n, 128) >= dev.sm_count) {
        pref.add(Sm90_128x128x32_1x1x1_Coop::kName, "sm90 tf32, >= 1 tile of 128x128 per SM: cooperative 128x128x32");
        pref.add(Sm90_128x128x32_1x1x1_CoopStreamK::kName, "sm90 tf32: cooperative 128x128x32 (stream-K scheduler)");
      } else if (hopper && p.m > 32) {
        // Below a wave of 128x128 tiles, F.linear's layout ("rc"; the kernels exist for it
        // only): over 128 rows with three quarters of a wave, cooperative 128x128; otherwise the
        // 64-row ping-pong tile of the 16-bit rule. Measured on an H100 (bench --layout nt,
        // RESULTS.md ninth session), against the SM80 kernel that took these before:
        // 64x4096x4096 1.01x cuBLAS on 64x64 (0.69x), 128x4096x4096 1.01x (0.86x on the table's
        // stream-K 128x128), 128x6144x4096 1.01x on 64x128 (0.75x), 128x14336x4096 1.01x on
        // 64x256 (0.82x), 256x4096x4096 1.04x on 64x128 (0.46x), 1024^3 1.16x (0.55x),
        // 512x4096x4096 1.04x on 128x128 (0.55x; 0.98x on 64x256).
        if (p.m > 128 && three_quarters_wave(ceil_div(p.m, 128) * ceil_div(p.n, 128), dev)) {
          pref.add(Sm90_128x128x32_1x1x1_Coop::kName,
                   "sm90 tf32, > 128 rows and >= 3/4 tile of 128x128 per SM: cooperative 128x128x32");
        } else if (const char* narrow =
                       sm90_64_row_tile(p, dev, 32,
                                        {Sm90_64x64x32_1x1x1_Pingpong::kName, Sm90_64x128x32_1x1x1_Pingpong::kName,
                                         Sm90_64x256x32_1x1x1_Pingpong::kName})) {
          pref.add(narrow, "sm90 tf32, < 1 tile of 128x128 per SM: ping-pong 64-row tiles, the width with the most "
                           "tiles in one wave");
        }
      }
      // Below that (and for layouts the SM90 kernels lack) the SM80 TF32 kernel with split-K,
      // which beat the 128-row SM90 TF32 tiles there on every suite shape (tune --suite all, H100).
      pref.add(Sm80_128x128x32_64x64x32_3s::kName,
               hopper ? "sm90 tf32, few tiles or a long K (or a layout the SM90 kernels lack): SM80 tensor-op"
                      : "tf32: multistage tensor-op");
      break;

    case Precision::kF32:
      if (p.m <= (hopper ? kF32SkinnyRowsHopper : kSkinnyRows)) {
        pref.add(Handwritten_SkinnyM::kName,
                 "float32 without TF32, few rows: hand-written streaming kernel (B read once, K split)");
      }
      if (hopper && p.k >= kF32InRegistersMinK) {
        // IEEE float32 on the FP64 tensor cores, operands widened in registers (f32_on_dmma_warp.h;
        // 16-byte copies where the operands allow, else 4-byte ones): float64 sums of exact
        // products, one rounding per result. cuBLAS's DGEMM outruns its SGEMM on an H100
        // (benchmarks/fp32_via_fp64_probe.py; RESULTS.md, thirteenth session).
        // Every tile on CUTLASS 2.x's stream-K kernel, whose K shares fill the SMs at any tile
        // count. Measured on an H100 (bench, forced, L2 flushed, fourteenth session; RESULTS.md),
        // against cuBLAS's SGEMM: 128x128 1.17-1.34x on every suite problem over 64 rows with
        // K >= 2048 (1.25x at 8192^3); below K = 2048 the smaller tiles' waves win (1024^3: 64x64
        // 1.42x, 128x128 1.23x; 512^3: 32x64 1.18x, 64x64 1.11x). 33-64 rows: 64x64 (1.05-3.1x,
        // ahead of 32x64 on all five); 5-32 rows: 32x64 (16 rows 1.17-2.08x). From 5 rows the
        // streaming kernel above loses to it (16x4096x4096: 49 us against 43; at one row 36
        // against 43). At K = 32-64 the epilogue's float-at-a-time store loses to the CUDA cores
        // (16384x16384x32: 0.83x against 1.30x).
        const bool wide = p.m > 64 && p.n > 64 &&
                          (p.k >= 2048 || three_quarters_wave(ceil_div(p.m, 128) * ceil_div(p.n, 128), dev));
        if (wide) {
          pref.add(Sm90DmmaF32_128x128x32_32x64x32_3s_StreamK::kName,
                   "sm90 float32 without TF32, > 64 rows and columns, K >= 2048 or >= 3/4 wave of 128x128 tiles: "
                   "widened to float64 in registers, DMMA 128x128, stream-K");
        } else if (p.m > 32 && (p.m <= 64 || p.n <= 64 || three_quarters_wave(ceil_div(p.m, 64) * ceil_div(p.n, 64), dev))) {
          pref.add(Sm90DmmaF32_64x64x32_32x32x32_4s_StreamK::kName,
                   "sm90 float32 without TF32, 33-64 rows, <= 64 columns or >= 3/4 wave of 64x64 tiles: widened to "
                   "float64 in registers, DMMA 64x64, stream-K");
        } else {
          pref.add(Sm90DmmaF32_32x64x32_16x32x32_5s_StreamK::kName,
                   "sm90 float32 without TF32, <= 32 rows or < 3/4 wave of 64x64 tiles: widened to float64 in "
                   "registers, DMMA 32x64, stream-K");
        }
      }
      // Few rows or few columns: a SIMT tile that fits them, split-K (wave_split_k_slices).
      // Measured on an H100 (RESULTS.md, eighth session), against the best the 128x128 SIMT
      // tile or ladder step 3 did: 32x4096x4096 0.79x cuBLAS on 32x128 (0.48x),
      // 32x32768x32768 1.07x (0.35x); 64x4096x4096 0.81x on 64x128 (0.55x), 64x14336x4096
      // 1.00x (0.52x), 64x128256x4096 0.93x (0.51x); 16384x16x16384 0.78x on 128x32 (0.36x),
      // 32768x32x32768 0.72x (0.35x). From 65 rows 128x128 and 64x128 were within 10% of
      // each other either way.
      if (p.n <= 64 && p.m > 64) {
        pref.add(Sm80Simt_128x32x8_64x32x8_5s::kName, "float32 without TF32, N <= 64: IEEE fp32 SIMT 128x32, split-K");
      } else if (p.m <= 32) {
        pref.add(Sm80Simt_32x128x8_32x64x8_5s::kName, "float32 without TF32, M <= 32: IEEE fp32 SIMT 32x128, split-K");
      } else if (p.m <= 64) {
        pref.add(Sm80Simt_64x128x8_32x64x8_5s::kName, "float32 without TF32, M <= 64: IEEE fp32 SIMT 64x128, split-K");
      } else if (ceil_div(p.m, 128) * ceil_div(p.n, 128) >= dev.sm_count) {
        // A wave of 128x128 tiles or more, row-major operands aligned to 4: the hand-written
        // register-blocked kernel (ladder step 3, data-parallel), measured faster than
        // CUTLASS's SIMT kernel there.
        pref.add(Handwritten_3_RegisterBlocked_128x128x16::kName,
                 "float32 without TF32, >= 1 tile of 128x128 per SM: hand-written register-blocked SIMT (ladder step 3)");
      }
      pref.add(Sm80Simt_128x128x8_32x64x8_4s::kName, "float32 without TF32: IEEE fp32 SIMT kernel");
      break;

    case Precision::kTF32x3:
      // fp32 products: at least 3xTF32's accuracy. On Hopper from 5 rows IEEE fp32 on DMMA runs
      // instead (the fallback below), faster and more accurate (16x14336x4096: 100 us against 148).
      if (p.m <= (hopper ? kF32SkinnyRowsHopper : kSkinnyRows)) {
        pref.add(Handwritten_SkinnyM::kName,
                 "float32 as 3xTF32, few rows: hand-written streaming kernel (B read once, fp32 products)");
      }
      if (hopper) {
        // Hopper: split the operands into TF32 parts first, then one TF32 WGMMA GEMM over 3K
        // that promotes its accumulators into float32 (1.5-1.9x torch's fp32 from 2048^3 up).
        // 128x128 tiles either way (two accumulator sets per thread): the 2x1 cluster from a
        // wave of them, else stream-K's split-K over the long K. Where the split passes do not
        // pay, or K is too short for 3xTF32 to beat torch's accuracy (kPresplitMinK), nothing:
        // the planner then runs IEEE fp32 (README: its accuracy), which on an H100
        // beat SM80's 3xTF32 kernel at every such size measured (128x4096x4096: 116 us
        // against 184; 512^3: 25 against 46; 256x14336x4096: 717 against 723).
        if (std::min(p.m, p.n) >= kPresplitMinSide && p.k >= kPresplitMinK &&
            static_cast<double>(p.m) * p.n * p.k > kPresplitMinMnk) {
          if (ceil_div(p.m, 128) * ceil_div(p.n, 128) >= dev.sm_count) {
            // From 4096 rows with N >= M, tiles walked along N (against CUTLASS's rule, which
            // walks along M there). Measured on an H100: 8192x14336x4096 10.2 ms against 15.7,
            // 8192x128256x4096 95.7 against 167.5, 16384^3 136 against 144, 4096^3 and 8192^3
            // within 1%. Fewer rows keep CUTLASS's rule: along N, 2048x128256x4096 took 25.6 ms
            // against 23.2 and 512-row LLM shapes 4-6% longer. (M > N: not measured.)
            const TileOrder order =
                p.n >= p.m && p.m >= kPresplitAlongNMinRows ? TileOrder{Raster::kAlongN, 1} : TileOrder{};
            pref.add(Sm90_128x128x32_2x1x1_Coop_Presplit::kName,
                     "sm90 float32 as 3xTF32, >= 1 tile of 128x128 per SM: operands split into TF32 parts, one "
                     "TF32 WGMMA GEMM over 3K with float32 promotion (2x1 cluster)",
                     order);
          }
          pref.add(Sm90_128x128x32_1x1x1_CoopStreamK_Presplit::kName,
                   "sm90 float32 as 3xTF32: operands split into TF32 parts, one TF32 WGMMA GEMM over 3K with "
                   "float32 promotion (stream-K, split-K for few tiles)");
        }
        pref.only_these = true;
        break;
      }
      pref.add(Sm80_128x128x32_64x64x32_3s::kName, "float32 as 3xTF32 (opted in): multistage tensor-op, fast-fp32 math");
      break;

    case Precision::kF64:
      if (hopper) {
        // The largest DMMA tile that still gives three quarters of a wave of tiles: 128x128,
        // 64x64, else 32x64; up to 32 rows 32x64, up to 64 rows at most 64x64. Measured on an
        // H100 (benchmarks/split_probe.py, RESULTS.md ninth session), against the 128x128 tile
        // that ran everything before: 16x4096x4096 1.01x cuBLAS (0.67x), 16x14336x4096 0.98x
        // (0.56x), 64x4096x4096 0.97x (0.69x), 256^3 0.93x (0.33x), 512^3 0.97x (0.39x),
        // 1024^3 0.94x (0.82x); 512x4096x4096 (128 tiles of 128x128) stays on 128x128 (0.94x).
        const int64_t tiles_128 = ceil_div(p.m, 128) * ceil_div(p.n, 128);
        const int64_t tiles_64 = ceil_div(p.m, 64) * ceil_div(p.n, 64);
        // From 65 rows and K of 2048, 128x128 on CUTLASS's stream-K kernel where whole tiles
        // would leave a ragged last wave: from 3/4 of a wave of 128x128 tiles whose last wave is
        // under 90% full (128x14336x4096 0.98x cuBLAS against 0.93x; 512x14336x4096 0.94x
        // against 0.90x; 512x6144x4096 0.92x against 0.91x), or from a quarter of a wave where
        // 64x64's last wave is ragged too (128x6144x4096 1.08x against 1.00x on 64x64 split-K).
        // Where the tiles fill their waves it lost (2048^3 0.99x against 1.02x data-parallel;
        // 1024^3 0.82x against 0.96x on 64x64). benchmarks/split_probe.py, H100, RESULTS.md
        // tenth session.
        const bool stream_k_128 =
            p.m > 64 && p.k >= 2048 &&
            (three_quarters_wave(tiles_128, dev) ? wave_fill(tiles_128, dev) < 0.9
                                         : 4 * tiles_128 >= dev.sm_count && wave_fill(tiles_64, dev) < 0.9);
        if (stream_k_128) {
          pref.add(Sm90Dmma_128x128x16_32x64x16_3s_StreamK::kName,
                   "float64 on sm90, > 64 rows, a ragged last wave of 128x128 (and 64x64) tiles: DMMA 16x8x4 "
                   "128x128, stream-K");
        }
        if (p.m <= 64 || !three_quarters_wave(tiles_128, dev)) {
          if (p.m > 32 && (p.m <= 64 || three_quarters_wave(tiles_64, dev))) {
            pref.add(Sm90Dmma_64x64x16_32x32x16_4s::kName,
                     "float64 on sm90, 33-64 rows or < 3/4 wave of 128x128 tiles: DMMA 16x8x4, 64x64 tiles");
          } else {
            pref.add(Sm90Dmma_32x64x16_16x32x16_5s::kName,
                     "float64 on sm90, <= 32 rows or < 3/4 wave of 64x64 tiles: DMMA 16x8x4, 32x64 tiles");
          }
        }
        pref.add(Sm90Dmma_128x128x16_32x64x16_3s::kName, "float64 on sm90: DMMA 16x8x4 tensor-op kernel");
      }
      pref.add(Sm80_128x128x16_32x64x16_3s::kName, "float64: DMMA 8x8x4 tensor-op kernel");
      break;
  }
  return pref;
}

int split_k_slices(int64_t tiles, int64_t k_tiles, const DeviceDesc& dev) {
  // About two thirds of a wave of CTAs (measured: 3 slices for 32 tiles on 132 SMs, 2 for 48,
  // 12-16 for 4), each slice at least 8 K tiles deep, at most 16 slices.
  const int64_t sms = dev.sm_count > 0 ? dev.sm_count : 1;
  if (tiles <= 0) return 1;
  const int64_t by_sms = (2 * sms + 3 * tiles / 2) / (3 * tiles);  // round(sms / tiles / 1.5)
  return static_cast<int>(std::max<int64_t>(1, std::min<int64_t>({by_sms, k_tiles / 8, 16})));
}

bool is_simt_f32(const KernelInfo& k) {
  return k.precision == Precision::kF32 && std::strstr(k.config, "simt") != nullptr;
}

bool is_small_dmma_f64(const KernelInfo& k) {
  return k.precision == Precision::kF64 && k.tile_m * k.tile_n <= 64 * 64;
}

bool is_wide_tf32_split_k(const KernelInfo& k) {
  return k.precision == Precision::kTF32 && k.tile_m * k.tile_n >= 256 * 128 &&
         (k.decompositions & decomposition_bit(Decomposition::kSplitK)) != 0;
}

bool is_stream_k_only(const KernelInfo& k) {
  return (k.decompositions & decomposition_bit(Decomposition::kStreamK)) != 0 &&
         (k.decompositions & decomposition_bit(Decomposition::kSplitK)) == 0;
}

int simt_ctas_per_sm(const KernelInfo& k) {
  // The 64-thread tiles (32x128, 128x32: two warps) need about four CTAs per SM to keep its
  // four schedulers and the shared-memory pipe busy; one CTA of 128 or 256 threads (64x128,
  // 128x128) nearly does. Read off the split sweeps in RESULTS.md (eighth session, H100).
  return k.tile_m * k.tile_n <= 32 * 128 ? 4 : 1;
}

int wave_split_k_slices(int64_t tiles, int64_t k, int ctas_per_sm, const DeviceDesc& dev) {
  // CUTLASS 2.x's serial split-K: each extra slice adds a pass through a workspace tile, and a
  // ragged last wave idles SMs. So, below two waves of tiles, the fewest slices (2, 4, 8, 16)
  // that minimise waves x K per slice, each slice at least 512 deep. Measured on an H100
  // (float32, eighth session): on 12 of the 15 problems swept with the tile the heuristic
  // picks, this is the fastest of the slice counts swept (1-8, 16); 128x14336x4096 is 2% off,
  // and 256^3 and 512^3 (0.42x and 0.33x cuBLAS, against 0.54x and 0.55x split) are left to
  // the tuning table. float64's small DMMA tiles count two CTAs per SM (a memory-bound few-row
  // problem gains from more loads in flight), and split only below one tile per SM (the
  // tuner split none from there, 16x14336x4096's 224 tiles included): on the ten few-row
  // problems the tuner timed (ninth session) this is its count on seven; on 1-64 rows x 4096 x
  // 4096 it is 4 where 2 measured 1-4% faster.
  const int64_t slots = std::max<int64_t>(1, dev.sm_count) * ctas_per_sm;
  if (tiles <= 0 || tiles >= 2 * slots) return 1;
  int best = 1;
  int64_t best_cost = ceil_div(tiles, slots) * k;
  for (int s = 2; s <= 16; s *= 2) {
    if (k / s < 512) break;
    const int64_t cost = ceil_div(tiles * s, slots) * ceil_div(k, s);
    if (cost < best_cost) {
      best = s;
      best_cost = cost;
    }
  }
  return best;
}

int sum_split_k_slices(int64_t tiles, int64_t k, int align, const DeviceDesc& dev) {
  // Slices summed by a second kernel (cutlass3x/sm90_splitk_sum.cuh) need no turn-taking, so
  // as many as one wave of CTAs holds, up to 32; equal ones, each a multiple of `align`
  // elements (16 bytes) and at least 1024 deep. Measured on an H100 (bf16, eighth session):
  // 32 slices were as fast as 64 or faster on two tiles (256x256, K = 32768-524288), and
  // slices of 512 lost to slices of 1024 (256x256x32768: 34.4 us against 31.6).
  if (tiles <= 0) return 1;
  const int64_t most = std::min<int64_t>(32, std::max<int64_t>(1, dev.sm_count) / tiles);
  for (int64_t s = most; s >= 2; --s) {
    if (k % (s * align) == 0 && k / s >= 1024) return static_cast<int>(s);
  }
  return 1;
}

DecompositionChoice choose_decomposition(const Plan& p, const KernelInfo& k, const DeviceDesc& dev) {
  DecompositionChoice choice;
  const int64_t tiles = ceil_div(p.m, k.tile_m) * ceil_div(p.n, k.tile_n);
  if (tiles == 0) return choice;
  if (is_stream_k_only(k)) {
    // CUTLASS 2.x's stream-K kernel, which decides alone (whole waves of tiles data-parallel,
    // the rest's K iterations dealt out). Where it stands in for split-K (16-bit D,
    // KernelInfo::stream_k_replaces_split_k): stream-K where split-K would have split (the
    // rule below), data-parallel elsewhere; but always for operands of 1-element alignment,
    // which go through registers two stages deep (SIMT, or the 2-stage tensor-op kernel), so
    // that a K step is load latency: an idle SM costs more than stream-K's fix-up. Measured
    // (H100, benchmarks/odd_leading_dim_probe.py, seventeenth session), the 2-stage kernel:
    // 127x8191x1021 (64 tiles) 39.9 us against 62.4 data-parallel, 300x500x2001 24.7 against
    // 97.2, 130x70x12001 47.4 against 508.
    if (!k.stream_k_replaces_split_k || k.align_a == 1 ||
        split_k_slices(tiles, ceil_div(p.k, k.tile_k), dev) >= 2) {
      choice.decomposition = Decomposition::kStreamK;
    }
    return choice;
  }
  if ((k.decompositions & decomposition_bit(Decomposition::kSplitK)) == 0) return choice;
  // Split-K, not stream-K, where both exist: on every suite shape the tuner timed, CUTLASS
  // 4.2's stream-K decomposition lost to split-K or to data-parallel (benchmarks/RESULTS.md).
  int splits = 1;
  if (k.sums_slices) {
    splits = sum_split_k_slices(tiles, p.k, k.align_a, dev);
  } else if (is_simt_f32(k)) {
    splits = wave_split_k_slices(tiles, p.k, simt_ctas_per_sm(k), dev);
  } else if (is_small_dmma_f64(k)) {
    splits = tiles < dev.sm_count ? wave_split_k_slices(tiles, p.k, 2, dev) : 1;
  } else if (is_wide_tf32_split_k(k)) {
    // As many slices as one wave of CTAs holds, each at least 1024 deep. Measured (split_probe,
    // H100, eleventh session): 64 tiles fastest in 2 slices (512x4096, K = 4096 and 14336: 3
    // or 4, past a wave, lost 5-20%), 32 tiles in 3-4 (256x4096x4096); split_k_slices' two
    // thirds of a wave would leave the 64 tiles whole, 0.74x cuBLAS against 0.93x.
    splits = static_cast<int>(std::clamp<int64_t>(std::min<int64_t>(dev.sm_count / tiles, p.k / 1024), 1, 16));
  } else {
    splits = split_k_slices(tiles, ceil_div(p.k, k.tile_k), dev);
  }
  if (splits >= 2) {
    choice.decomposition = Decomposition::kSplitK;
    choice.splits = splits;
  }
  return choice;
}

namespace {

// Sustained rates, TFLOP/s, read off benchmarks/RESULTS.md (H200 and H100, 2026-11-22) for
// large problems; deliberately round. They only have to order the choices.
double sustained_tflops(const KernelInfo& k) {
  const bool sixteen_bit = is_sixteen_bit(k.precision);
  // TMA + WGMMA (CUTLASS 3.x or hand-written). TF32 on tiles smaller than 128x256 runs slower:
  // the 128x128 "cc" kernel took about 94 us of 2048^3 (183 TFLOP/s; H100, 2026-11-22), which
  // made a K-major copy of B for it lose to SM80's TF32 kernel there (131 us against 101).
  if (k.min_cc == 90 && k.precision == Precision::kF32) return 60.0;  // float32 on DMMA, widened in registers
  if (k.min_cc == 90) return sixteen_bit ? 600.0 : (k.tile_m * k.tile_n >= 128 * 256 ? 330.0 : 200.0);
  if (std::strstr(k.config, "simt") != nullptr) return sixteen_bit ? 35.0 : 45.0;
  // Two-byte loads into registers (the 2-stage kernel for odd leading dims) issue 8x the
  // loads of 16-byte copies: measured 157 TFLOP/s at 4095x4097x4093, 52 at 127x8191x1021 on
  // stream-K (H100, benchmarks/odd_leading_dim_probe.py); 100 sits between.
  // Narrower cp.async copies (8, 4 bytes) on the 128x128x32 tile, measured at 4096x4096x4092
  // (bf16) and 4096x4096x4094 (TF32), forced (H100, eighteenth session): 16-bit 8-byte 305
  // TFLOP/s, 4-byte 204; TF32 8-byte 152, 4-byte 106.
  if (sixteen_bit) return k.align_a >= 8 ? 350.0 : k.align_a >= 4 ? 300.0 : k.align_a >= 2 ? 200.0 : 100.0;
  return k.align_a >= 4 ? 170.0 : k.align_a >= 2 ? 150.0 : 100.0;  // TF32 tensor-op
}

constexpr double kCopyBandwidth = 2.5e12;       // bytes/s a padding copy achieves (read + write)
// A transposing copy (row-major B to column-major) is slower: measured on an H100 at about
// 1 TB/s read + write (512x128256x4096 TF32: 5.7 ms with the copy against 2.7 ms without).
// With the rates above, the K-major copy pays from about M = 1400 rows of A.
constexpr double kTransposeBandwidth = 1.0e12;
constexpr double kLaunchSeconds = 4e-6;         // per extra kernel launch

}  // namespace

bool prefer_staging(const Plan& p, const KernelInfo* kernel, const Plan& s, const KernelInfo& staged_kernel,
                    const DeviceDesc& dev) {
  (void)dev;
  const double flops = 2.0 * static_cast<double>(p.m) * static_cast<double>(p.n) * static_cast<double>(p.k);
  if (kernel == nullptr) return true;
  const double unstaged = flops / (sustained_tflops(*kernel) * 1e12);
  const double eb = element_bytes(p.precision);
  double copy_seconds = 0;
  int launches = 0;
  if (s.staged) {
    // A and B are read and written once each, the padded result written and read once more.
    const double bytes =
        2.0 * eb * (static_cast<double>(s.m) * s.k + static_cast<double>(s.k) * s.n + static_cast<double>(s.m) * s.n);
    copy_seconds = bytes / kCopyBandwidth;
    launches = 3;
  } else if (s.copy_b_kmajor) {
    copy_seconds = 2.0 * eb * static_cast<double>(s.k) * s.n / kTransposeBandwidth;  // B read and written once
    launches = 1;
  }
  const double staged = 2.0 * static_cast<double>(s.m) * s.n * s.k / (sustained_tflops(staged_kernel) * 1e12) +
                        copy_seconds + launches * kLaunchSeconds;
  return staged < unstaged;
}

}  // namespace cutlass_ops
