#include "dispatch/plan_cache.h"

#include <mutex>

#include "dispatch/cost_model.h"

namespace cutlass_ops {

size_t PlanKeyHash::operator()(const PlanKey& key) const {
  // FNV-1a over the fields: cheap, and M, N, K spread well.
  uint64_t h = 1469598103934665603ull;
  auto mix = [&h](uint64_t v) {
    h ^= v;
    h *= 1099511628211ull;
  };
  mix(static_cast<uint64_t>(key.cc) << 32 | static_cast<uint32_t>(key.sm_count));
  mix(static_cast<uint64_t>(key.smem_optin_bytes));
  mix(static_cast<uint64_t>(key.precision) << 24 | static_cast<uint64_t>(key.layout_a) << 16 |
      static_cast<uint64_t>(key.layout_b) << 8);
  mix(static_cast<uint64_t>(static_cast<uint8_t>(key.align_a)) << 16 |
      static_cast<uint64_t>(static_cast<uint8_t>(key.align_b)) << 8 | static_cast<uint8_t>(key.align_d));
  mix(static_cast<uint64_t>(key.m));
  mix(static_cast<uint64_t>(key.n));
  mix(static_cast<uint64_t>(key.k));
  return static_cast<size_t>(h);
}

PlanKey plan_key(const Plan& p, const DeviceDesc& device) {
  PlanKey key;
  key.cc = device.cc;
  key.sm_count = device.sm_count;
  key.smem_optin_bytes = device.smem_optin_bytes;
  key.precision = p.precision;
  key.layout_a = p.a.layout;
  key.layout_b = p.b.layout;
  key.align_a = static_cast<int8_t>(p.a.align);
  key.align_b = static_cast<int8_t>(p.b.align);
  key.align_d = static_cast<int8_t>(p.d.align);
  key.m = p.m;
  key.n = p.n;
  key.k = p.k;
  return key;
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
