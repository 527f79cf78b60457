// Call counters and the optional per-call log: how a user proves their model really ran on
// CUTLASS. Counting is a relaxed atomic add per call; logging is off unless CUTLASS_OPS_LOG=1
// or cutlass_ops.set_logging(True).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <c10/core/ScalarType.h>

#include "dispatch/planner.h"

namespace cutlass_ops::stats {

enum class Outcome : int {
  kTorchComplex = 0,   // complex dtype, handed to torch.mm's CUDA kernel
  kTorchNoKernel = 1,  // no kernel accepts the problem, handed to torch.mm's CUDA kernel
  kNoWork = 2,         // M, N or K is 0: no kernel runs
  kNumOutcomes = 3,
};

void count(Outcome outcome);
void count_kernel(const KernelInfo& kernel);

struct Snapshot {
  std::vector<std::pair<std::string, int64_t>> kernels;  // kernels that ran, with their call counts
  int64_t torch_complex = 0, torch_no_kernel = 0, no_work = 0;
};
Snapshot snapshot();
void reset();

bool logging();
void set_logging(bool enabled);
void log_call(const Plan& plan, c10::ScalarType dtype);
void log_handoff(int64_t m, int64_t n, int64_t k, c10::ScalarType dtype, const char* why);

}  // namespace cutlass_ops::stats
