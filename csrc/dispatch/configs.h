// Kernel configurations as plain named structs: one source of truth for the kernel
// templates (csrc/cutlass3x, csrc/cutlass2x map these numbers onto CUTLASS types) and
// for the heuristic (dispatch/heuristic.cpp names them). No CUTLASS, no torch.
//
// Adding a config: add a struct here, add it to a family list in
// csrc/generate_kernels.py, run it. setup.py picks the new .cu files up.
#pragma once

namespace cutlass_ops::configs {

// ---- SM90, CUTLASS 3.x: TMA + WGMMA, warp-specialized, persistent ----------------------

enum class Sm90Schedule { kCooperative, kPingpong };
// Persistent: a grid of one CTA per SM walks the output tiles, each over the whole K.
// StreamK: CUTLASS's stream-K scheduler, which can also split K (and run data-parallel);
// the launch picks the decomposition (GemmArgs::decomposition). Cooperative kernels only.
enum class Sm90Scheduler { kPersistent, kStreamK };

// Large M*N, 16-bit: two consumer warpgroups share one 128x256 tile. The 2x1 cluster
// multicasts B across the pair. Measured on H200 before this project: 0.95-0.99x
// torch.mm from 2048^3 to 8192^3 (bf16). Smem: 4 stages of (128 + 256) x 64 x 2 B.
struct Sm90_128x256x64_2x1x1_Coop {
  static constexpr const char* kName = "128x256x64_2x1x1_coop";
  static constexpr int kTileM = 128, kTileN = 256, kTileK = 64;
  static constexpr int kClusterM = 2, kClusterN = 1;
  static constexpr Sm90Schedule kSchedule = Sm90Schedule::kCooperative;
  static constexpr Sm90Scheduler kScheduler = Sm90Scheduler::kPersistent;
  static constexpr bool kSwapAB = false;
};

// Few output tiles and a long K (256x256x131072), 16-bit: CUTLASS's split-K sums partial
// tiles through a serial turnstile, one slice after another, so past ~12 slices it got
// slower (RESULTS.md, 2026-11-22, "split-K summed by a second kernel": 128x128 tiles at 32 slices took 127 us against 93 at
// 12). Here K is cut into up to 32 slices run as a batch of independent GEMMs, each writing
// a float32 partial D, and a second kernel sums the slices in order (deterministic):
// cutlass3x/sm90_splitk_sum.cuh. The 128x256 tile with its 2x1 cluster covers 256x256 with
// one cluster, which reads each slice of A and B from memory once.
struct Sm90_128x256x64_2x1x1_Coop_SplitKSum {
  static constexpr const char* kName = "128x256x64_2x1x1_coop_splitk_sum";
  static constexpr int kTileM = 128, kTileN = 256, kTileK = 64;
  static constexpr int kClusterM = 2, kClusterN = 1;
  static constexpr Sm90Schedule kSchedule = Sm90Schedule::kCooperative;
  static constexpr Sm90Scheduler kScheduler = Sm90Scheduler::kPersistent;
  static constexpr bool kSwapAB = false;
};

// Mid-size 16-bit problems (too few 128x256 tiles to fill the SMs): two consumer
// warpgroups alternate whole 128x128 tiles, so one's epilogue hides under the other's MMA.
struct Sm90_128x128x64_1x1x1_Pingpong {
  static constexpr const char* kName = "128x128x64_1x1x1_pingpong";
  static constexpr int kTileM = 128, kTileN = 128, kTileK = 64;
  static constexpr int kClusterM = 1, kClusterN = 1;
  static constexpr Sm90Schedule kSchedule = Sm90Schedule::kPingpong;
  static constexpr Sm90Scheduler kScheduler = Sm90Scheduler::kPersistent;
  static constexpr bool kSwapAB = false;
};

// Mid-size 16-bit outputs whose 128x256 tiles fall short of a wave and whose 128x128 tiles
// leave a ragged second one: 512x6144 is 96 tiles of 128x256 (73% of 132 SMs), 192 of 128x128
// (1.45 waves), but 128 of 128x192 (one wave, 97%). WGMMA takes N in steps of 8 up to 256;
// each consumer warpgroup runs 64x192. The 2x1 cluster multicasts B across the pair, as
// 128x256's does. Smem: stages of (128 + 192) x 64 x 2 B = 40 KiB.
struct Sm90_128x192x64_2x1x1_Coop {
  static constexpr const char* kName = "128x192x64_2x1x1_coop";
  static constexpr int kTileM = 128, kTileN = 192, kTileK = 64;
  static constexpr int kClusterM = 2, kClusterN = 1;
  static constexpr Sm90Schedule kSchedule = Sm90Schedule::kCooperative;
  static constexpr Sm90Scheduler kScheduler = Sm90Scheduler::kPersistent;
  static constexpr bool kSwapAB = false;
};

// 16-bit, M = 33-128 rows with N of a few thousand: a 64x32 tile (WGMMA 64x32 per consumer
// warpgroup) gives 64x4096 its 128 tiles, one per SM, where 128-row tiles leave half of each
// idle; the 1x2 cluster multicasts A to the two CTAs of a tile row. The tile and cluster
// cuBLAS's own kernel names for 64x4096x4096 on an H100 (torch.profiler:
// nvjet_sm90_tst_64x32_64x16_1x2). Persistent ping-pong: a CTA with two tiles overlaps one's
// epilogue with the other's MMAs.
struct Sm90_64x32x64_1x2x1_Pingpong {
  static constexpr const char* kName = "64x32x64_1x2x1_pingpong";
  static constexpr int kTileM = 64, kTileN = 32, kTileK = 64;
  static constexpr int kClusterM = 1, kClusterN = 2;
  static constexpr Sm90Schedule kSchedule = Sm90Schedule::kPingpong;
  static constexpr Sm90Scheduler kScheduler = Sm90Scheduler::kPersistent;
  static constexpr bool kSwapAB = false;
};

// 16-bit, 33-128 rows: 64-row ping-pong tiles (one consumer warpgroup per 64xN tile, the
// other warpgroup on the CTA's next tile), in three widths so that few rows still give close
// to a wave of tiles; the heuristic takes the width with the most tiles that fit one wave.
// 128x4096 is 128 tiles of 64x64, 128x6144 96 of 64x128, 128x14336 112 of 64x256, where
// 128-row tiles (or swap-AB's 32x128) left half of each tile idle or ran a ragged second wave.
// Measured on an H100 (benchmarks/split_probe.py, bf16, L2 flushed; RESULTS.md, 2026-11-22, "64-row ping-pong tiles"):
// 128x4096x4096 1.01x cuBLAS on 64x64 (0.89x on swap-AB), 128x6144x4096 1.02x on 64x128
// (0.95x on 128x64 1x2), 128x14336x4096 1.01x on 64x256 (0.98x on 128x128 ping-pong),
// 64x4096x4096 0.99x on 64x64 (0.95x on 64x32 1x2), 1024^3 0.91x on 64x128 (0.87x on 128x64).
// Smem per stage: (64 + N) x 64 x 2 B, as many stages as fit beside the epilogue.
struct Sm90_64x64x64_1x1x1_Pingpong {
  static constexpr const char* kName = "64x64x64_1x1x1_pingpong";
  static constexpr int kTileM = 64, kTileN = 64, kTileK = 64;
  static constexpr int kClusterM = 1, kClusterN = 1;
  static constexpr Sm90Schedule kSchedule = Sm90Schedule::kPingpong;
  static constexpr Sm90Scheduler kScheduler = Sm90Scheduler::kPersistent;
  static constexpr bool kSwapAB = false;
};
struct Sm90_64x128x64_1x1x1_Pingpong {
  static constexpr const char* kName = "64x128x64_1x1x1_pingpong";
  static constexpr int kTileM = 64, kTileN = 128, kTileK = 64;
  static constexpr int kClusterM = 1, kClusterN = 1;
  static constexpr Sm90Schedule kSchedule = Sm90Schedule::kPingpong;
  static constexpr Sm90Scheduler kScheduler = Sm90Scheduler::kPersistent;
  static constexpr bool kSwapAB = false;
};
struct Sm90_64x256x64_1x1x1_Pingpong {
  static constexpr const char* kName = "64x256x64_1x1x1_pingpong";
  static constexpr int kTileM = 64, kTileN = 256, kTileK = 64;
  static constexpr int kClusterM = 1, kClusterN = 1;
  static constexpr Sm90Schedule kSchedule = Sm90Schedule::kPingpong;
  static constexpr Sm90Scheduler kScheduler = Sm90Scheduler::kPersistent;
  static constexpr bool kSwapAB = false;
};

// Large M*N, 16-bit, the other way round: a 256x128 tile (each consumer warpgroup 128x128)
// with a 1x2 cluster, which multicasts A to the two CTAs of a tile row. For outputs far wider
// than tall (N = 14336-128256 in LLM projections) the pair shares A's 256-row slab where
// 128x256 2x1 shares B's. Smem: 4 stages of (256 + 128) x 64 x 2 B, as 128x256.
struct Sm90_256x128x64_1x2x1_Coop {
  static constexpr const char* kName = "256x128x64_1x2x1_coop";
  static constexpr int kTileM = 256, kTileN = 128, kTileK = 64;
  static constexpr int kClusterM = 1, kClusterN = 2;
  static constexpr Sm90Schedule kSchedule = Sm90Schedule::kCooperative;
  static constexpr Sm90Scheduler kScheduler = Sm90Scheduler::kPersistent;
  static constexpr bool kSwapAB = false;
};

// Mid-size 16-bit problems (512^3-1024^3, 1000^3): a 128x64 tile gives twice the tiles of
// 128x128 (1024^3: 128, one per SM), split between the two consumer warpgroups (64 rows each);
// the 1x2 cluster multicasts A to the pair of tiles beside each other. Persistent, no
// workspace. cuBLAS picks the same tile and cluster for 1024^3 on an H100 (its kernel name).
struct Sm90_128x64x64_1x2x1_Coop {
  static constexpr const char* kName = "128x64x64_1x2x1_coop";
  static constexpr int kTileM = 128, kTileN = 64, kTileK = 64;
  static constexpr int kClusterM = 1, kClusterN = 2;
  static constexpr Sm90Schedule kSchedule = Sm90Schedule::kCooperative;
  static constexpr Sm90Scheduler kScheduler = Sm90Scheduler::kPersistent;
  static constexpr bool kSwapAB = false;
};

// float32 with TF32 products: K tile 32 keeps the 128-byte swizzle (32 x 4 B).
struct Sm90_128x128x32_1x1x1_Coop {
  static constexpr const char* kName = "128x128x32_1x1x1_coop";
  static constexpr int kTileM = 128, kTileN = 128, kTileK = 32;
  static constexpr int kClusterM = 1, kClusterN = 1;
  static constexpr Sm90Schedule kSchedule = Sm90Schedule::kCooperative;
  static constexpr Sm90Scheduler kScheduler = Sm90Scheduler::kPersistent;
  static constexpr bool kSwapAB = false;
};

// TF32, F.linear's layout ("rc", both operands K-major), 33-128 rows: the 64-row ping-pong
// tiles of the 16-bit kernels with the 32-deep K step of 4-byte elements.
struct Sm90_64x64x32_1x1x1_Pingpong {
  static constexpr const char* kName = "64x64x32_1x1x1_pingpong";
  static constexpr int kTileM = 64, kTileN = 64, kTileK = 32;
  static constexpr int kClusterM = 1, kClusterN = 1;
  static constexpr Sm90Schedule kSchedule = Sm90Schedule::kPingpong;
  static constexpr Sm90Scheduler kScheduler = Sm90Scheduler::kPersistent;
  static constexpr bool kSwapAB = false;
};
struct Sm90_64x128x32_1x1x1_Pingpong {
  static constexpr const char* kName = "64x128x32_1x1x1_pingpong";
  static constexpr int kTileM = 64, kTileN = 128, kTileK = 32;
  static constexpr int kClusterM = 1, kClusterN = 1;
  static constexpr Sm90Schedule kSchedule = Sm90Schedule::kPingpong;
  static constexpr Sm90Scheduler kScheduler = Sm90Scheduler::kPersistent;
  static constexpr bool kSwapAB = false;
};
struct Sm90_64x256x32_1x1x1_Pingpong {
  static constexpr const char* kName = "64x256x32_1x1x1_pingpong";
  static constexpr int kTileM = 64, kTileN = 256, kTileK = 32;
  static constexpr int kClusterM = 1, kClusterN = 1;
  static constexpr Sm90Schedule kSchedule = Sm90Schedule::kPingpong;
  static constexpr Sm90Scheduler kScheduler = Sm90Scheduler::kPersistent;
  static constexpr bool kSwapAB = false;
};

// Few output tiles for the SMs (small M or N, large K, mid-size squares): stream-K spreads
// the K iterations of all tiles evenly over every SM, or split-K cuts each tile's K into
// slices; partial tiles are summed in a fixed order (deterministic). 16-bit.
struct Sm90_128x128x64_1x1x1_CoopStreamK {
  static constexpr const char* kName = "128x128x64_1x1x1_coop_streamk";
  static constexpr int kTileM = 128, kTileN = 128, kTileK = 64;
  static constexpr int kClusterM = 1, kClusterN = 1;
  static constexpr Sm90Schedule kSchedule = Sm90Schedule::kCooperative;
  static constexpr Sm90Scheduler kScheduler = Sm90Scheduler::kStreamK;
  static constexpr bool kSwapAB = false;
};

// Narrow, deep tiles for small M*N (decode-size M, thin outputs): twice the tiles of
// 128x128 to spread over the SMs, 128-deep K steps so each TMA load moves more of B per
// barrier round trip. Smem: 4 stages of (128 + 64) x 128 x 2 B = 192 KiB.
struct Sm90_128x64x128_1x1x1_CoopStreamK {
  static constexpr const char* kName = "128x64x128_1x1x1_coop_streamk";
  static constexpr int kTileM = 128, kTileN = 64, kTileK = 128;
  static constexpr int kClusterM = 1, kClusterN = 1;
  static constexpr Sm90Schedule kSchedule = Sm90Schedule::kCooperative;
  static constexpr Sm90Scheduler kScheduler = Sm90Scheduler::kStreamK;
  static constexpr bool kSwapAB = false;
};

// The same for TF32.
struct Sm90_128x128x32_1x1x1_CoopStreamK {
  static constexpr const char* kName = "128x128x32_1x1x1_coop_streamk";
  static constexpr int kTileM = 128, kTileN = 128, kTileK = 32;
  static constexpr int kClusterM = 1, kClusterN = 1;
  static constexpr Sm90Schedule kSchedule = Sm90Schedule::kCooperative;
  static constexpr Sm90Scheduler kScheduler = Sm90Scheduler::kStreamK;
  static constexpr bool kSwapAB = false;
};

// Large M*N, TF32: the 128x256 cooperative tile with a 2x1 cluster, as for 16-bit, with the
// 32-deep K step of 4-byte elements. Smem: (128 + 256) x 32 x 4 B = 48 KiB per stage, as many
// stages as fit beside the epilogue.
struct Sm90_128x256x32_2x1x1_Coop {
  static constexpr const char* kName = "128x256x32_2x1x1_coop";
  static constexpr int kTileM = 128, kTileN = 256, kTileK = 32;
  static constexpr int kClusterM = 2, kClusterN = 1;
  static constexpr Sm90Schedule kSchedule = Sm90Schedule::kCooperative;
  static constexpr Sm90Scheduler kScheduler = Sm90Scheduler::kPersistent;
  static constexpr bool kSwapAB = false;
};

// Swap-AB, for small M (decode-size batches): the kernel computes D^T = B^T A^T, so the
// problem's N runs along WGMMA's 128-wide M side and the few rows of A along its narrow N
// side (WGMMA's N goes down to 8; its M is 64 per warpgroup). D^T is column-major, which
// is D row-major: nothing is copied. Tiles below are in the problem's terms (kTileM rows
// of D), so kTileM = 32 means a CUTLASS tile of 128 (N) x 32 (M). Stream-K scheduler in
// split-K mode spreads the few tiles over the SMs.
// Smem: (128 + 32) x 128 x 2 B = 40 KiB per stage, as many stages as fit (five).
// Measured (H100, autotuner, bf16 row-major): 16x4096x4096 in 23.2 us against 33.1 for the
// best unswapped kernel; 1.1-1.55x faster on every LLM-suite shape with M <= 64, and at
// M = 128 while its tiles fit one wave. A 64-row variant never won and was dropped.
struct Sm90_32x128x128_1x1x1_CoopStreamK_SwapAB {
  static constexpr const char* kName = "32x128x128_1x1x1_coop_streamk_swapab";
  static constexpr int kTileM = 32, kTileN = 128, kTileK = 128;
  static constexpr int kClusterM = 1, kClusterN = 1;
  static constexpr Sm90Schedule kSchedule = Sm90Schedule::kCooperative;
  static constexpr Sm90Scheduler kScheduler = Sm90Scheduler::kStreamK;
  static constexpr bool kSwapAB = true;
};

// Row-major x row-major TF32 (x @ W on float32 tensors). TF32 WGMMA reads only K-major
// operands from shared memory, and a row-major B is N-major. Swapped, the problem is
// D^T = B^T A^T: CUTLASS's A is B^T (N-major), which the builder's register-sourced mainloop
// transposes on its way from shared memory into registers, and CUTLASS's B is A^T, K-major.
// B is read where it lies (before: a K-major copy of B, ~1 TB/s, then the "rc" kernel).
// Tiles and clusters in the problem's terms: CUTLASS runs 128 (N) x 256 (M) with a 2x1
// cluster, the instantiation of the "cc" TF32 kernel, which the tuner timed at 370 TFLOP/s
// on 4096^3 (H100), where the copy and the "rc" kernel took 289 together.
struct Sm90_256x128x32_1x2x1_Coop_SwapAB {
  static constexpr const char* kName = "256x128x32_1x2x1_coop_swapab";
  static constexpr int kTileM = 256, kTileN = 128, kTileK = 32;
  static constexpr int kClusterM = 1, kClusterN = 2;
  static constexpr Sm90Schedule kSchedule = Sm90Schedule::kCooperative;
  static constexpr Sm90Scheduler kScheduler = Sm90Scheduler::kPersistent;
  static constexpr bool kSwapAB = true;
};

// The same swap for TF32 problems of about a wave of 128x128 tiles or fewer (128-1024 rows):
// the stream-K scheduler's split-K spreads few tiles over the SMs.
struct Sm90_128x128x32_1x1x1_CoopStreamK_SwapAB {
  static constexpr const char* kName = "128x128x32_1x1x1_coop_streamk_swapab";
  static constexpr int kTileM = 128, kTileN = 128, kTileK = 32;
  static constexpr int kClusterM = 1, kClusterN = 1;
  static constexpr Sm90Schedule kSchedule = Sm90Schedule::kCooperative;
  static constexpr Sm90Scheduler kScheduler = Sm90Scheduler::kStreamK;
  static constexpr bool kSwapAB = true;
};

// The 256x128 swapped tile above on the stream-K scheduler (1x1 cluster), for row-major x
// row-major TF32 with under a wave of those tiles (256-1024 rows at N = 4096): split along K,
// the few wide tiles fill the SMs, and each consumer warpgroup still transposes its B^T slab
// for a 64 x 256 product per K step, where the 128x128 tile gets half that per transpose.
struct Sm90_256x128x32_1x1x1_CoopStreamK_SwapAB {
  static constexpr const char* kName = "256x128x32_1x1x1_coop_streamk_swapab";
  static constexpr int kTileM = 256, kTileN = 128, kTileK = 32;
  static constexpr int kClusterM = 1, kClusterN = 1;
  static constexpr Sm90Schedule kSchedule = Sm90Schedule::kCooperative;
  static constexpr Sm90Scheduler kScheduler = Sm90Scheduler::kStreamK;
  static constexpr bool kSwapAB = true;
};

// Row-major x row-major TF32, 33-64 rows: a 64-row ping-pong tile, swapped as the two configs
// above are (CUTLASS runs 64 (N) x 64 (M), one consumer warpgroup per tile, B^T
// register-sourced). 64x4096 is 64 whole-K tiles where the 128x128 stream-K tile had 32,
// each split three ways along K. Measured on an H100 (bench, RESULTS.md, 2026-11-22, "float64 on CUTLASS 2.x's stream-K kernel"):
// 64x4096x4096 0.90x cuBLAS against 0.81x. Wider swapped tiles (128 and 256 columns, ping-pong or cooperative) lost to
// the 128x128 stream-K tile from 128 rows: the register-sourced path transposes B^T on its
// way to the registers, which costs more on a narrow tile than the split-K fix-up does.
struct Sm90_64x64x32_1x1x1_Pingpong_SwapAB {
  static constexpr const char* kName = "64x64x32_1x1x1_pingpong_swapab";
  static constexpr int kTileM = 64, kTileN = 64, kTileK = 32;
  static constexpr int kClusterM = 1, kClusterN = 1;
  static constexpr Sm90Schedule kSchedule = Sm90Schedule::kPingpong;
  static constexpr Sm90Scheduler kScheduler = Sm90Scheduler::kPersistent;
  static constexpr bool kSwapAB = true;
};

// 3xTF32 on Hopper (float32 accuracy from TF32 WGMMA; fp32 mode "3xtf32"): each operand is
// split into big and small TF32 parts laid side by side along K, then one TF32 GEMM over 3K
// (cutlass3x/sm90_3xtf32_presplit.cuh). The GEMM adds WGMMA's accumulators into float32
// registers every kPromoteKTiles K steps and restarts them: WGMMA's own accumulation drops
// low bits of the addends as its sum grows, which without this made the error grow with K
// (9.6e-6 at K = 4096 against torch fp32's 1.1e-6; RESULTS.md). Two accumulators per
// thread, so 128x128 tiles (64 + 64 registers per consumer thread; 128x256 would spill).
// Registered for every operand layout and any alignment (the split pass reads the operands
// as they lie). Workspace: 3 (M + N) K floats (K rounded up to 4).
struct Sm90_128x128x32_2x1x1_Coop_Presplit {
  static constexpr const char* kName = "128x128x32_2x1x1_coop_presplit";
  static constexpr int kTileM = 128, kTileN = 128, kTileK = 32;
  static constexpr int kClusterM = 2, kClusterN = 1;
  static constexpr Sm90Schedule kSchedule = Sm90Schedule::kCooperative;
  static constexpr Sm90Scheduler kScheduler = Sm90Scheduler::kPersistent;
  static constexpr bool kSwapAB = false;
  static constexpr int kPromoteKTiles = 2;
};
// The same with the stream-K scheduler, for few tiles (split-K over the long 3K).
struct Sm90_128x128x32_1x1x1_CoopStreamK_Presplit {
  static constexpr const char* kName = "128x128x32_1x1x1_coop_streamk_presplit";
  static constexpr int kTileM = 128, kTileN = 128, kTileK = 32;
  static constexpr int kClusterM = 1, kClusterN = 1;
  static constexpr Sm90Schedule kSchedule = Sm90Schedule::kCooperative;
  static constexpr Sm90Scheduler kScheduler = Sm90Scheduler::kStreamK;
  static constexpr bool kSwapAB = false;
  static constexpr int kPromoteKTiles = 2;
};

// ---- SM80, CUTLASS 2.x: multistage cp.async + mma.sync (also runs on SM86/89/90) ------

// 16-bit, 16-byte aligned operands. Smem: 3 x (128x64 + 64x256) x 2 B = 144 KiB, so it
// needs an SM80/SM90-class shared memory (SM86/89 offer 99 KiB: the planner skips it).
struct Sm80_128x256x64_64x64x64_3s {
  static constexpr const char* kName = "128x256x64_3s";
  static constexpr int kTileM = 128, kTileN = 256, kTileK = 64;
  static constexpr int kWarpM = 64, kWarpN = 64, kWarpK = 64;
  static constexpr int kStages = 3;
  static constexpr bool kSimt = false;
  static constexpr int kArch = 80;
};

// 16-bit operands aligned to 4 or 8 bytes, TF32 and 3xTF32. Smem: 48 KiB (16-bit), 96 KiB (tf32).
struct Sm80_128x128x32_64x64x32_3s {
  static constexpr const char* kName = "128x128x32_3s";
  static constexpr int kTileM = 128, kTileN = 128, kTileK = 32;
  static constexpr int kWarpM = 64, kWarpN = 64, kWarpK = 32;
  static constexpr int kStages = 3;
  static constexpr bool kSimt = false;
  static constexpr int kArch = 80;
};

// 16-bit operands with odd addresses or leading dims, on tensor cores. cp.async copies 4, 8 or
// 16 bytes, so a 2-byte-aligned operand cannot use the multistage pipeline: two stages
// (CUTLASS's MmaPipelined), each thread loading its part of the next K tile into registers,
// one element at a time, while the warps multiply the current one out of shared memory, then
// storing it. cuBLAS runs the same structure on such operands (CUTLASS's
// tensorop_s1688gemm_128x128_32x2_align1). Smem: 2 x (128 + 128) x 32 x 2 B = 32 KiB.
struct Sm80_128x128x32_64x64x32_2s {
  static constexpr const char* kName = "128x128x32_2s";
  static constexpr int kTileM = 128, kTileN = 128, kTileK = 32;
  static constexpr int kWarpM = 64, kWarpN = 64, kWarpK = 32;
  static constexpr int kStages = 2;
  static constexpr bool kSimt = false;
  static constexpr int kArch = 80;
};

// Small problems and few rows, 16-bit, 16-byte aligned operands (also SM86/89's path: it fits
// their 99 KiB). Four warps of 32x32, five stages of (64 + 64) x 64 x 2 B = 80 KiB. A 64x64
// tile gives 256x256 16 CTAs and 1024^3 256, where 128x128 gives 4 and 64; its prologue is
// a plain cp.async pipeline (no TMA descriptors, clusters or tile-scheduler workspace), which
// is most of the time at 256^3-1024^3. With serial split-K it is also a few-row kernel.
struct Sm80_64x64x64_32x32x64_5s {
  static constexpr const char* kName = "64x64x64_5s";
  static constexpr int kTileM = 64, kTileN = 64, kTileK = 64;
  static constexpr int kWarpM = 32, kWarpN = 32, kWarpK = 64;
  static constexpr int kStages = 5;
  static constexpr bool kSimt = false;
  static constexpr int kArch = 80;
};

// float64 on DMMA (8x8x4). CUTLASS's default SM80 fp64 shape; smem 96 KiB.
struct Sm80_128x128x16_32x64x16_3s {
  static constexpr const char* kName = "128x128x16_3s";
  static constexpr int kTileM = 128, kTileN = 128, kTileK = 16;
  static constexpr int kWarpM = 32, kWarpN = 64, kWarpK = 16;
  static constexpr int kStages = 3;
  static constexpr bool kSimt = false;
  static constexpr int kArch = 80;
};

// float64 on Hopper's DMMA (16x8x4, twice the depth of SM80's 8x8x4): CUTLASS 2.x's
// multistage kernel with the SM90 instruction, built for sm_90a. Smem: 3 x (128 + 128) x 16 x 8 B = 96 KiB.
struct Sm90Dmma_128x128x16_32x64x16_3s {
  static constexpr const char* kName = "dmma16x8x4_128x128x16_3s";
  static constexpr int kTileM = 128, kTileN = 128, kTileK = 16;
  static constexpr int kWarpM = 32, kWarpN = 64, kWarpK = 16;
  static constexpr int kStages = 3;
  static constexpr bool kSimt = false;
  static constexpr int kArch = 90;
};

// float64 below a wave of 128x128 tiles, on Hopper's DMMA 16x8x4: 64x64 (four warps of
// 32x32) and, for up to 32 rows, 32x64 (four warps of 16x32), so that small and few-row
// problems get 4x (2x) the CTAs of 128x128; with split-K for a long K. Smem: 4 x (64 + 64) x
// 16 x 8 B = 64 KiB, 5 x (32 + 64) x 16 x 8 B = 60 KiB.
struct Sm90Dmma_64x64x16_32x32x16_4s {
  static constexpr const char* kName = "dmma16x8x4_64x64x16_4s";
  static constexpr int kTileM = 64, kTileN = 64, kTileK = 16;
  static constexpr int kWarpM = 32, kWarpN = 32, kWarpK = 16;
  static constexpr int kStages = 4;
  static constexpr bool kSimt = false;
  static constexpr int kArch = 90;
};

struct Sm90Dmma_32x64x16_16x32x16_5s {
  static constexpr const char* kName = "dmma16x8x4_32x64x16_5s";
  static constexpr int kTileM = 32, kTileN = 64, kTileK = 16;
  static constexpr int kWarpM = 16, kWarpN = 32, kWarpK = 16;
  static constexpr int kStages = 5;
  static constexpr bool kSimt = false;
  static constexpr int kArch = 90;
};

// The 128x128 DMMA tile on CUTLASS 2.x's stream-K kernel (sm80_gemm.cuh, IsStreamK), for
// float64 problems whose tiles leave a ragged last wave: 128x14336 is 112 tiles of 128x128,
// 0.85 of a wave of 132 SMs, and 448 of 64x64, 3.4 waves. Dealt out as K iterations, every
// SM gets the same share. Measured on an H100 (benchmarks/split_probe.py, RESULTS.md tenth
// session): 128x14336x4096 0.98x cuBLAS (0.93x data-parallel), 128x6144x4096 1.08x (1.00x on
// 64x64 split-K), 512x14336x4096 0.94x (0.90x). A 64x64 stream-K tile never won.
struct Sm90Dmma_128x128x16_32x64x16_3s_StreamK {
  static constexpr const char* kName = "dmma16x8x4_128x128x16_3s_streamk";
  static constexpr int kTileM = 128, kTileN = 128, kTileK = 16;
  static constexpr int kWarpM = 32, kWarpN = 64, kWarpK = 16;
  static constexpr int kStages = 3;
  static constexpr bool kSimt = false;
  static constexpr int kArch = 90;
  static constexpr bool kStreamK = true;
};

// IEEE float32 on Hopper's FP64 tensor cores, widened in registers (precision kF32 with kArch
// 90: cutlass2x/f32_on_dmma_warp.h): float operands copied into shared memory as they are
// (16-byte cp.async, the TF32 kernels' layouts), each warp's fragments widened to float64
// and multiplied on DMMA.16x8x8, one rounding per result. No workspace, no passes; 16-byte
// aligned operands, 4-byte ones for any others. A stage holds K = 32 floats in
// the bytes of the float64 kernels' K = 16. The float64 tiles, 128x128, 64x64 and 32x64, all
// on CUTLASS 2.x's stream-K kernel (it runs data-parallel when asked to; stream-K stands in
// for split-K, which these kernels do not offer). Measured on an H100 (RESULTS.md, 2026-11-23, "IEEE float32 widened in registers"):
// 128x128 on the stream-K kernel was ahead of or level with the plain kernel on all 53 suite
// problems it ran, so the plain one was dropped.
// Smem: 3 x (128 + 128) x 32 x 4 B = 96 KiB, 4 x (64 + 64) x 32 x 4 B = 64 KiB, 5 x (32 + 64)
// x 32 x 4 B = 60 KiB.
struct Sm90DmmaF32_128x128x32_32x64x32_3s_StreamK {
  static constexpr const char* kName = "dmma16x8x8_128x128x32_3s_streamk";
  static constexpr int kTileM = 128, kTileN = 128, kTileK = 32;
  static constexpr int kWarpM = 32, kWarpN = 64, kWarpK = 32;
  static constexpr int kStages = 3;
  static constexpr bool kSimt = false;
  static constexpr int kArch = 90;
  static constexpr bool kStreamK = true;
};
struct Sm90DmmaF32_64x64x32_32x32x32_4s_StreamK {
  static constexpr const char* kName = "dmma16x8x8_64x64x32_4s_streamk";
  static constexpr int kTileM = 64, kTileN = 64, kTileK = 32;
  static constexpr int kWarpM = 32, kWarpN = 32, kWarpK = 32;
  static constexpr int kStages = 4;
  static constexpr bool kSimt = false;
  static constexpr int kArch = 90;
  static constexpr bool kStreamK = true;
};
struct Sm90DmmaF32_32x64x32_16x32x32_5s_StreamK {
  static constexpr const char* kName = "dmma16x8x8_32x64x32_5s_streamk";
  static constexpr int kTileM = 32, kTileN = 64, kTileK = 32;
  static constexpr int kWarpM = 16, kWarpN = 32, kWarpK = 32;
  static constexpr int kStages = 5;
  static constexpr bool kSimt = false;
  static constexpr int kArch = 90;
  static constexpr bool kStreamK = true;
};

// IEEE float32 on CUDA cores, cp.async multistage (4-byte copies: any alignment).
struct Sm80Simt_128x128x8_32x64x8_4s {
  static constexpr const char* kName = "simt_128x128x8_4s";
  static constexpr int kTileM = 128, kTileN = 128, kTileK = 8;
  static constexpr int kWarpM = 32, kWarpN = 64, kWarpK = 8;
  static constexpr int kStages = 4;
  static constexpr bool kSimt = true;
  static constexpr int kArch = 80;
};

// IEEE float32 on CUDA cores with smaller tiles, for outputs that 128x128 tiles cover badly:
// 17-64 rows (64x128, 32x128: a 128-row tile would idle half or three quarters of its
// threads) and 16-64 columns (128x32). CUTLASS's own SM80 SIMT tile set; 5 stages. Smem:
// 5 x (64 + 128) x 8 x 4 B = 30 KiB (64x128), 20 KiB (32x128 and 128x32).
struct Sm80Simt_64x128x8_32x64x8_5s {
  static constexpr const char* kName = "simt_64x128x8_5s";
  static constexpr int kTileM = 64, kTileN = 128, kTileK = 8;
  static constexpr int kWarpM = 32, kWarpN = 64, kWarpK = 8;
  static constexpr int kStages = 5;
  static constexpr bool kSimt = true;
  static constexpr int kArch = 80;
};

struct Sm80Simt_32x128x8_32x64x8_5s {
  static constexpr const char* kName = "simt_32x128x8_5s";
  static constexpr int kTileM = 32, kTileN = 128, kTileK = 8;
  static constexpr int kWarpM = 32, kWarpN = 64, kWarpK = 8;
  static constexpr int kStages = 5;
  static constexpr bool kSimt = true;
  static constexpr int kArch = 80;
};

struct Sm80Simt_128x32x8_64x32x8_5s {
  static constexpr const char* kName = "simt_128x32x8_5s";
  static constexpr int kTileM = 128, kTileN = 32, kTileK = 8;
  static constexpr int kWarpM = 64, kWarpN = 32, kWarpK = 8;
  static constexpr int kStages = 5;
  static constexpr bool kSimt = true;
  static constexpr int kArch = 80;
};

// 16-bit operands with odd addresses or leading dims: cp.async cannot copy 2 bytes, so this
// is the two-stage register-staged SIMT pipeline with fp32 accumulation. The correctness
// floor for any 16-bit shape; the heuristic prefers anything faster.
struct Sm80Simt_128x128x8_32x64x8_2s {
  static constexpr const char* kName = "simt_128x128x8_2s";
  static constexpr int kTileM = 128, kTileN = 128, kTileK = 8;
  static constexpr int kWarpM = 32, kWarpN = 64, kWarpK = 8;
  static constexpr int kStages = 2;
  static constexpr bool kSimt = true;
  static constexpr int kArch = 80;
};

// ---- hand-written (csrc/handwritten), named here because the heuristic picks one ---------

// Ladder step 3: register-blocked fp32 SIMT, 128x128x16 CTA tile of 256 threads with 8x8
// outputs each, float4 loads, double-buffered shared memory; row-major A and B, 4-element
// alignment, data-parallel only. Measured on an H100 at 4096^3 and 8192^3: 0.94x cuBLAS
// fp32, where CUTLASS's SIMT 128x128x8 reached 0.87x (benchmarks/RESULTS.md).
struct Handwritten_3_RegisterBlocked_128x128x16 {
  static constexpr const char* kName = "3_register_blocked_128x128x16_8x8";
  static constexpr int kTileM = 128, kTileN = 128, kTileK = 16;
};

// Ladder step 6: TMA + WGMMA, warp-specialised, persistent 128x256x64 tiles, 4 stages,
// TMA-store epilogue; bf16/f16, A row-major, B row- or column-major, 8-element alignment.
// Measured (H100, autotuner): faster than the CUTLASS 128x256 cooperative kernel on 9 of
// the 10 LLM-suite shapes with M >= 2048 (by 1-8%), the reason the heuristic prefers it
// at a wave of 128x256 tiles or more.
struct Handwritten_6_WgmmaTma_128x256x64 {
  static constexpr const char* kName = "6_wgmma_tma_128x256x64_4s";
  static constexpr int kTileM = 128, kTileN = 256, kTileK = 64;
};

// Not a ladder step: the streaming kernel for few rows (csrc/handwritten/gemm_skinny_m_sm80.cu).
// B read once in 16-byte loads, K split over the SMs with a deterministic two-pass sum;
// rr and rc, fp32 (also registered for TF32: full fp32 products), bf16, f16.
struct Handwritten_SkinnyM {
  static constexpr const char* kName = "skinny_m_streaming";
};

// Not a ladder step: the tensor-core streaming kernel for 16-bit problems of up to 64 rows
// and TF32 ones of up to 16 (csrc/handwritten/gemm_skinny_m_mma_sm80.cu). 32 columns of D per
// block, K split over its 8 warps, each streaming B through its own cp.async ring into
// mma.sync; rr and rc.
struct Handwritten_SkinnyMMma {
  static constexpr const char* kName = "skinny_m_mma_streaming";
};

}  // namespace cutlass_ops::configs
