#include "dispatch/tuning.h"

#include <functional>

namespace cutlass_ops {

size_t TuningKeyHash::operator()(const TuningKey& key) const {
  // Mix each field into the running hash (boost::hash_combine's constant).
  size_t h = 0;
  auto mix = [&h](uint64_t v) { h ^= std::hash<uint64_t>{}(v) + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); };
  mix(static_cast<uint64_t>(key.precision) | static_cast<uint64_t>(key.layout_a) << 8 |
      static_cast<uint64_t>(key.layout_b) << 16 | static_cast<uint64_t>(key.align_a) << 24 |
      static_cast<uint64_t>(key.align_b) << 32 | static_cast<uint64_t>(key.align_d) << 40);
  mix(static_cast<uint64_t>(key.cc) << 32 | static_cast<uint32_t>(key.sm_count));
  mix(static_cast<uint64_t>(key.m));
  mix(static_cast<uint64_t>(key.n));
  mix(static_cast<uint64_t>(key.k));
  return h;
}

TuningKey tuning_key(const Plan& p, const DeviceDesc& dev) {
  TuningKey key;
  key.precision = p.precision;
  key.layout_a = p.a.layout;
  key.layout_b = p.b.layout;
  key.align_a = static_cast<int8_t>(p.a.align);
  key.align_b = static_cast<int8_t>(p.b.align);
  key.align_d = static_cast<int8_t>(p.d.align);
  key.cc = dev.cc;
  key.sm_count = dev.sm_count;
  key.m = p.m;
  key.n = p.n;
  key.k = p.k;
  return key;
}

TuningTable& TuningTable::instance() {
  static TuningTable table;
  return table;
}

bool TuningTable::find(const TuningKey& key, TuningEntry* entry) const {
  std::shared_lock lock(mutex_);
  const auto it = map_.find(key);
  if (it == map_.end()) return false;
  *entry = it->second;
  return true;
}

void TuningTable::insert(const TuningKey& key, const TuningEntry& entry) {
  std::unique_lock lock(mutex_);
  map_.insert_or_assign(key, entry);
  count_.store(map_.size(), std::memory_order_relaxed);
}

void TuningTable::erase(const TuningKey& key) {
  std::unique_lock lock(mutex_);
  map_.erase(key);
  count_.store(map_.size(), std::memory_order_relaxed);
}

void TuningTable::clear() {
  std::unique_lock lock(mutex_);
  map_.clear();
  count_.store(0, std::memory_order_relaxed);
}

size_t TuningTable::size() const {
  std::shared_lock lock(mutex_);
  return map_.size();
}

std::vector<std::pair<TuningKey, TuningEntry>> TuningTable::entries() const {
  std::shared_lock lock(mutex_);
  return {map_.begin(), map_.end()};
}

}  // namespace cutlass_ops
