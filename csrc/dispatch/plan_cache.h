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

namespace cutlass_ops {

struct PlanKey {
  int cc = 0, sm_count = 0, smem_optin_bytes = 0;
  Precision precision = Precision::kF32;
  Layout layout_a = Layout::kRowMajor, layout_b = Layout::kRowMajor;
  int8_t align_a = 0, align_b = 0, align_d = 0;
  int64_t m = 0, n = 0, k = 0;

  bool operator==(const PlanKey& o) const {
    return cc == o.cc && sm_count == o.sm_count && smem_optin_bytes == o.smem_optin_bytes &&
           precision == o.precision && layout_a == o.layout_a && layout_b == o.layout_b && align_a == o.align_a &&
           align_b == o.align_b && align_d == o.align_d && m == o.m && n == o.n && k == o.k;
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
