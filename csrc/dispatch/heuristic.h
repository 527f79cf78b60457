// The shape heuristic: which kernel configs suit a problem, best first.
#pragma once

#include <array>

#include "dispatch/planner.h"

namespace cutlass_ops {

struct Preference {
  std::array<const char*, 12> configs{};  // config names (configs.h kName), best first
  std::array<const char*, 12> reasons{};  // why each is preferred, for explain()
  std::array<TileOrder, 12> orders{};     // the tile order to launch each with (SM90 kernels)
  int count = 0;
  // Only the listed configs: when none takes the problem, the planner takes no kernel of this
  // precision (3xTF32 then runs as IEEE fp32) instead of any kernel that accepts it.
  bool only_these = false;

  void add(const char* config, const char* reason, TileOrder order = {}) {
    if (count < static_cast<int>(configs.size())) {
      configs[count] = config;
      orders[count] = order;
      reasons[count++] = reason;
    }
  }
};

// The planner takes the first config in this list that has a registered kernel accepting
// the problem (highest alignment variant first); if none does, any accepting kernel (unless
// only_these).
Preference preferred_configs(const Plan& plan, const DeviceDesc& device);

struct DecompositionChoice {
  Decomposition decomposition = Decomposition::kDataParallel;
  int splits = 1;
};

// K slices worth cutting for `tiles` output tiles of `k_tiles` K steps each (1: none).
int split_k_slices(int64_t tiles, int64_t k_tiles, const DeviceDesc& device);

// Slices for the kernels that sum them in a second pass (KernelInfo::sums_slices): the most,
// up to a wave of CTAs and 32, that divide K into equal multiples of `align` elements, each at
// least 1024 deep (1: none).
int sum_split_k_slices(int64_t tiles, int64_t k, int align, const DeviceDesc& device);

// CUDA-core float32 kernels (CUTLASS's SIMT tiles) and float64's small DMMA tiles (64x64,
// 32x64) split K by waves of CTAs: CTAs per SM that still add throughput (SIMT), and the K
// slices worth cutting for `tiles` output tiles of depth `k` (1: none).
bool is_simt_f32(const KernelInfo& kernel);
bool is_small_dmma_f64(const KernelInfo& kernel);
// TF32 tiles of 256x128 with split-K (the swapped stream-K one): as many K slices as fit one
// wave of CTAs, so that a few wide tiles fill the device.
bool is_wide_tf32_split_k(const KernelInfo& kernel);
// CUTLASS 2.x's stream-K kernels: stream-K without split-K. CUTLASS keeps whole waves of tiles
// data-parallel and deals out only a ragged last one, so they run stream-K on every problem.
bool is_stream_k_only(const KernelInfo& kernel);
int simt_ctas_per_sm(const KernelInfo& kernel);
int wave_split_k_slices(int64_t tiles, int64_t k, int ctas_per_sm, const DeviceDesc& device);

// How `kernel` should divide K on this problem: split or stream K when its tiles are too few
// to fill the device and K is long enough to share out; otherwise data-parallel.
DecompositionChoice choose_decomposition(const Plan& plan, const KernelInfo& kernel, const DeviceDesc& device);

// Whether running `staged` (zero-padded aligned copies, or a K-major copy of B, on
// `staged_kernel`) beats running the problem as it is on `kernel` (nullptr: nothing runs
// it), by a time estimate that counts the copies' bytes.
bool prefer_staging(const Plan& plan, const KernelInfo* kernel, const Plan& staged, const KernelInfo& staged_kernel,
                    const DeviceDesc& device);

}  // namespace cutlass_ops
