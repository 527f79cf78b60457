// The tuning table: for problems someone has timed, the kernel and K decomposition that ran
// fastest. The planner consults it before trusting the heuristic; the entry layer's autotuner
// (ops/autotune.cpp) fills it; cutlass_ops/tuning.py loads it from and saves it to disk
// (a shipped table per device and a user cache), versioned by device, build and CUTLASS.
//
// Keys are exact problems: precision, operand layouts and alignments as the kernel sees them
// (after transposition and staging), M, N, K, and the device's compute capability and SM
// count. No torch, no CUDA.
#pragma once

#include <cstdint>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "dispatch/planner.h"

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
  void clear();
  size_t size() const;
  std::vector<std::pair<TuningKey, TuningEntry>> entries() const;

 private:
  mutable std::shared_mutex mutex_;
  std::unordered_map<TuningKey, TuningEntry, TuningKeyHash> map_;
};

}  // namespace cutlass_ops
