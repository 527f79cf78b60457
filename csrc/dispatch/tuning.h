// The tuning table: for problems the autotuner has timed, the candidate (variant, kernel, K
// decomposition, tile order) that ran fastest. The planner consults it before the cost model;
// the entry layer's autotuner (ops/autotune.cpp) fills it; cutlass_ops/tuning.py loads it from
// and saves it to the user's cache file, versioned by device and CUTLASS; an entry whose kernel
// a build lacks is dropped alone, so the cache survives adding a kernel.
//
// Keys are exact problems as normalize() describes them: precision, operand layouts and
// alignments (after transposition), M, N, K, and the device's compute capability and SM count.
// No torch, no CUDA.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "dispatch/candidates.h"

namespace cutlass_ops {

struct TuningKey {
  Precision precision = Precision::kF32;
  Layout layout_a = Layout::kRowMajor, layout_b = Layout::kRowMajor;
  int8_t align_a = 0, align_b = 0, align_d = 0;
  int cc = 0, sm_count = 0;
  int64_t m = 0, n = 0, k = 0;

  bool operator==(const TuningKey& o) const {
    return precision == o.precision && layout_a == o.layout_a && layout_b == o.layout_b && align_a == o.align_a &&
           align_b == o.align_b && align_d == o.align_d && cc == o.cc && sm_count == o.sm_count && m == o.m &&
           n == o.n && k == o.k;
  }
};

struct TuningKeyHash {
  size_t operator()(const TuningKey& key) const;
};

struct TuningEntry {
  Variant variant = Variant::kInPlace;
  const KernelInfo* kernel = nullptr;
  Decomposition decomposition = Decomposition::kDataParallel;
  int splits = 1;
  TileOrder tile_order;
  double microseconds = 0;  // measured time, for the record (0: unknown)
};

TuningKey tuning_key(const Plan& plan, const DeviceDesc& device);

class TuningTable {
 public:
  static TuningTable& instance();

  // Copies the entry for `key` into *entry; false if the problem was never tuned.
  bool find(const TuningKey& key, TuningEntry* entry) const;
  void insert(const TuningKey& key, const TuningEntry& entry);
  void erase(const TuningKey& key);
  void clear();
  size_t size() const;
  bool empty() const { return count_.load(std::memory_order_relaxed) == 0; }  // lock-free, for every call
  std::vector<std::pair<TuningKey, TuningEntry>> entries() const;

 private:
  mutable std::shared_mutex mutex_;
  std::unordered_map<TuningKey, TuningEntry, TuningKeyHash> map_;
  std::atomic<size_t> count_{0};
};

}  // namespace cutlass_ops
