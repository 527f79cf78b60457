#include "dispatch/plan_cache.h"

#include <mutex>

#include "dispatch/cost_model.h"

namespace cutlass_ops {

size_t PlanKeyHash::operator()(const PlanKey& key) const {
  return TuningKeyHash{}(key.problem) ^ (static_cast<size_t>(key.smem_optin_bytes) * 0x9e3779b97f4a7c15ULL) ^
         (static_cast<size_t>(key.dram_gbps) * 0xff51afd7ed558ccdULL) ^ (static_cast<size_t>(key.clock_mhz) << 20) ^
         (static_cast<size_t>(key.batch) * 0xc2b2ae3d27d4eb4fULL) ^ static_cast<size_t>(key.epilogue) ^
         (static_cast<size_t>(key.shared_a) << 1) ^ (static_cast<size_t>(key.shared_b) << 2);
}

PlanKey plan_key(const Plan& p, const DeviceDesc& device) {
  const bool batched = p.batch > 1;
  return {tuning_key(p, device), device.smem_optin_bytes, device.clock_mhz, device.dram_gbps, p.epilogue, p.batch,
          batched && p.a.batch_stride == 0, batched && p.b.batch_stride == 0};
}

PlanCache& PlanCache::instance() {
  static PlanCache cache;
  return cache;
}

bool PlanCache::find(const PlanKey& key, CachedChoice* choice) const {
  std::shared_lock lock(mutex_);
  const auto it = map_.find(key);
  if (it == map_.end() || it->second.generation != dispatch_generation()) return false;
  *choice = it->second;
  return true;
}

void PlanCache::insert(const PlanKey& key, const CachedChoice& choice) {
  std::unique_lock lock(mutex_);
  if (map_.size() >= kMaxEntries) map_.clear();
  map_[key] = choice;
}

void PlanCache::clear() {
  std::unique_lock lock(mutex_);
  map_.clear();
}

size_t PlanCache::size() const {
  std::shared_lock lock(mutex_);
  return map_.size();
}

}  // namespace cutlass_ops
