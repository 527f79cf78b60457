// The planner's memory: the candidate the cost model picked for each problem it has planned,
// keyed by everything the choice depends on (device, precision, layouts, alignments, M, N, K),
// so a repeated shape skips the model (a hit is one hash lookup under a shared lock).
// Entries carry the dispatch generation (cost_model.h) they were made under: a calibration
// or tuning-table change makes them stale. No torch, no CUDA.
#pragma once

#include <cstdint>
#include <shared_mutex>
#include <unordered_map>

#include "dispatch/candidates.h"
#include "dispatch/tuning.h"

namespace cutlass_ops {

// The tuning table's key (the exact problem and the device's compute capability and SM
// count), the device's other properties below, the epilogue, and the batch: its count and which
// operands the whole batch shares (batch stride 0, read once).
struct PlanKey {
  TuningKey problem;
  // The device's other properties a plan reads: which kernels fit (shared memory), which
  // calibration applies (DRAM bandwidth tells an H200 from an H100) and, without one, the peak
  // rates the constants come from.
  int smem_optin_bytes = 0, clock_mhz = 0, dram_gbps = 0;
  bool epilogue = false;
  int64_t batch = 1;
  bool shared_a = false, shared_b = false;

  bool operator==(const PlanKey& o) const {
    return problem == o.problem && smem_optin_bytes == o.smem_optin_bytes && clock_mhz == o.clock_mhz &&
           dram_gbps == o.dram_gbps && epilogue == o.epilogue && batch == o.batch && shared_a == o.shared_a &&
           shared_b == o.shared_b;
  }
};

struct PlanKeyHash {
  size_t operator()(const PlanKey& key) const;
};

PlanKey plan_key(const Plan& normalized, const DeviceDesc& device);

struct CachedChoice {
  Candidate candidate;
  TileOrder tile_order;
  const char* reason = "";
  uint64_t generation = 0;
};

class PlanCache {
 public:
  static PlanCache& instance();

  // The choice for `key` made under the current dispatch generation, if any.
  bool find(const PlanKey& key, CachedChoice* choice) const;
  void insert(const PlanKey& key, const CachedChoice& choice);
  void clear();
  size_t size() const;

  // Past this many entries the cache starts over (a program that plans endless new shapes
  // keeps a bounded table; the model re-plans a shape in microseconds).
  static constexpr size_t kMaxEntries = size_t{1} << 16;

 private:
  mutable std::shared_mutex mutex_;
  std::unordered_map<PlanKey, CachedChoice, PlanKeyHash> map_;
};

}  // namespace cutlass_ops
