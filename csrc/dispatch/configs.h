// Kernel configurations as plain named structs: one source of truth for the kernel
// templates (csrc/cutlass3x, csrc/cutlass2x map these numbers onto CUTLASS types) and
// for the heuristic (dispatch/heuristic.cpp names them). No CUTLASS, no torch.
//
// Adding a config: add a struct here, add it to a family list in
// csrc/<family>/generate.py, run the generator. setup.py picks the new .cu files up.
#pragma once

namespace cutlass_ops::configs {

// ---- SM90, CUTLASS 3.x: TMA + WGMMA, warp-specialized, persistent ----------------------

enum class Sm90Schedule { kCooperative, kPingpong };

// Large M*N, 16-bit: two consumer warpgroups share one 128x256 tile. The 2x1 cluster
// multicasts B across the pair. Measured on H200 before this project: 0.95-0.99x
// torch.mm from 2048^3 to 8192^3 (bf16). Smem: 4 stages of (128 + 256) x 64 x 2 B.
struct Sm90_128x256x64_2x1x1_Coop {
  static constexpr const char* kName = "128x256x64_2x1x1_coop";
  static constexpr int kTileM = 128, kTileN = 256, kTileK = 64;
  static constexpr int kClusterM = 2, kClusterN = 1;
  static constexpr Sm90Schedule kSchedule = Sm90Schedule::kCooperative;
};

// Mid-size 16-bit problems (too few 128x256 tiles to fill the SMs): two consumer
// warpgroups alternate whole 128x128 tiles, so one's epilogue hides under the other's MMA.
struct Sm90_128x128x64_1x1x1_Pingpong {
  static constexpr const char* kName = "128x128x64_1x1x1_pingpong";
  static constexpr int kTileM = 128, kTileN = 128, kTileK = 64;
  static constexpr int kClusterM = 1, kClusterN = 1;
  static constexpr Sm90Schedule kSchedule = Sm90Schedule::kPingpong;
};

// float32 with TF32 products: K tile 32 keeps the 128-byte swizzle (32 x 4 B).
struct Sm90_128x128x32_1x1x1_Coop {
  static constexpr const char* kName = "128x128x32_1x1x1_coop";
  static constexpr int kTileM = 128, kTileN = 128, kTileK = 32;
  static constexpr int kClusterM = 1, kClusterN = 1;
  static constexpr Sm90Schedule kSchedule = Sm90Schedule::kCooperative;
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
};

// 16-bit operands aligned to 4 or 8 bytes, and TF32. Smem: 48 KiB (16-bit), 96 KiB (tf32).
struct Sm80_128x128x32_64x64x32_3s {
  static constexpr const char* kName = "128x128x32_3s";
  static constexpr int kTileM = 128, kTileN = 128, kTileK = 32;
  static constexpr int kWarpM = 64, kWarpN = 64, kWarpK = 32;
  static constexpr int kStages = 3;
  static constexpr bool kSimt = false;
};

// float64 on DMMA (8x8x4). CUTLASS's default SM80 fp64 shape; smem 96 KiB.
struct Sm80_128x128x16_32x64x16_3s {
  static constexpr const char* kName = "128x128x16_3s";
  static constexpr int kTileM = 128, kTileN = 128, kTileK = 16;
  static constexpr int kWarpM = 32, kWarpN = 64, kWarpK = 16;
  static constexpr int kStages = 3;
  static constexpr bool kSimt = false;
};

// IEEE float32 on CUDA cores, cp.async multistage (4-byte copies: any alignment).
struct Sm80Simt_128x128x8_32x64x8_4s {
  static constexpr const char* kName = "simt_128x128x8_4s";
  static constexpr int kTileM = 128, kTileN = 128, kTileK = 8;
  static constexpr int kWarpM = 32, kWarpN = 64, kWarpK = 8;
  static constexpr int kStages = 4;
  static constexpr bool kSimt = true;
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
};

}  // namespace cutlass_ops::configs
