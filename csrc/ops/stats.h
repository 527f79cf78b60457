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

// The op a call came in through (each call counted once, at its CUDA kernel's entry; matmul
// counts as the mm or bmm it runs).
enum class Op : int { kMm = 0, kAddmm = 1, kLinear = 2, kBmm = 3, kBaddbmm = 4, kNumOps = 5 };
inline constexpr const char* op_name(Op op) {
  switch (op) {
    case Op::kMm: return "mm";
    case Op::kAddmm: return "addmm";
    case Op::kLinear: return "linear";
    case Op::kBmm: return "bmm";
    case Op::kBaddbmm: return "baddbmm";
    case Op::kNumOps: break;
  }
  return "?";
}

void count(Outcome outcome);
void count_op(Op op);
void count_kernel(const KernelInfo& kernel);

struct Snapshot {
  std::vector<std::pair<std::string, int64_t>> kernels;  // kernels that ran, with their call counts
  std::vector<std::pair<std::string, int64_t>> ops;      // calls per op (every op, zero or not)
  int64_t torch_complex = 0, torch_no_kernel = 0, no_work = 0;
};
Snapshot snapshot();
void reset();

bool logging();
void set_logging(bool enabled);
// Where a call's log line goes: a sink the Python module installs (the "cutlass_ops" logger of
// Python's logging), else stderr with a "[cutlass_ops] " prefix. A sink takes one line, without
// the prefix or a newline, and must be callable from any thread.
using LogSink = void (*)(const char* line);
void set_log_sink(LogSink sink);
void log_call(const Plan& plan, c10::ScalarType dtype);
void log_handoff(int64_t m, int64_t n, int64_t k, c10::ScalarType dtype, const char* why);

}  // namespace cutlass_ops::stats
