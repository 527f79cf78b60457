// The single list of kernels in this build.
//
// Filled once, at import, from each kernel module's KernelTable (see kernel.h); read by the
// planner on every call, and by list_kernels(), kernel=, the tests and the benchmarks.
#pragma once

#include <array>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "dispatch/kernel.h"

namespace cutlass_ops {

// Per-kernel counters (ops/stats.cpp) are a fixed array indexed by registration order.
inline constexpr int kMaxRegisteredKernels = 4096;

class Registry {
 public:
  static Registry& instance();

  // Adds every kernel of a module's table. Throws std::invalid_argument naming the module
  // on an ABI mismatch or a duplicate kernel name (nothing is added then).
  void add_table(const KernelTable& table);

  const std::vector<const KernelInfo*>& all() const { return all_; }
  const KernelInfo* find(std::string_view name) const;  // nullptr if unknown
  int index_of(const KernelInfo* kernel) const {        // registration order; -1 if unknown
    const auto it = index_.find(kernel);
    return it == index_.end() ? -1 : it->second;
  }
  std::vector<std::string> modules() const { return modules_; }

  // Kernels of one precision and operand-layout pair, in registration order: the
  // planner's candidate list, so a call never scans the whole registry.
  const std::vector<const KernelInfo*>& candidates(Precision p, Layout a, Layout b) const {
    return by_class_[class_index(p, a, b)];
  }

 private:
  static int class_index(Precision p, Layout a, Layout b) {
    return (static_cast<int>(p) * 2 + static_cast<int>(a)) * 2 + static_cast<int>(b);
  }

  std::vector<const KernelInfo*> all_;
  std::unordered_map<const KernelInfo*, int> index_;
  std::array<std::vector<const KernelInfo*>, kNumPrecisions * 4> by_class_;
  std::vector<std::string> modules_;
};

}  // namespace cutlass_ops
