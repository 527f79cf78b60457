#include "ops/stats.h"

#include <array>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "dispatch/registry.h"

namespace cutlass_ops::stats {

namespace {

std::array<std::atomic<int64_t>, kMaxRegisteredKernels> kernel_calls{};
std::array<std::atomic<int64_t>, static_cast<int>(Outcome::kNumOutcomes)> outcome_calls{};
std::array<std::atomic<int64_t>, static_cast<int>(Op::kNumOps)> op_calls{};

bool env_logging() {
  const char* value = std::getenv("CUTLASS_OPS_LOG");
  return value != nullptr && std::strcmp(value, "") != 0 && std::strcmp(value, "0") != 0;
}
std::atomic<bool> log_enabled{env_logging()};

}  // namespace

void count(Outcome outcome) { outcome_calls[static_cast<int>(outcome)].fetch_add(1, std::memory_order_relaxed); }

void count_op(Op op) { op_calls[static_cast<int>(op)].fetch_add(1, std::memory_order_relaxed); }

void count_kernel(const KernelInfo& kernel) {
  const int index = Registry::instance().index_of(&kernel);
  if (index >= 0) kernel_calls[index].fetch_add(1, std::memory_order_relaxed);
}

Snapshot snapshot() {
  Snapshot s;
  const auto& kernels = Registry::instance().all();
  for (size_t i = 0; i < kernels.size(); ++i) {
    const int64_t calls = kernel_calls[i].load(std::memory_order_relaxed);
    if (calls > 0) s.kernels.emplace_back(kernels[i]->name, calls);
  }
  s.torch_complex = outcome_calls[static_cast<int>(Outcome::kTorchComplex)].load(std::memory_order_relaxed);
  s.torch_no_kernel = outcome_calls[static_cast<int>(Outcome::kTorchNoKernel)].load(std::memory_order_relaxed);
  s.no_work = outcome_calls[static_cast<int>(Outcome::kNoWork)].load(std::memory_order_relaxed);
  for (int i = 0; i < static_cast<int>(Op::kNumOps); ++i) {
    s.ops.emplace_back(op_name(static_cast<Op>(i)), op_calls[i].load(std::memory_order_relaxed));
  }
  return s;
}

void reset() {
  for (auto& c : kernel_calls) c.store(0, std::memory_order_relaxed);
  for (auto& c : outcome_calls) c.store(0, std::memory_order_relaxed);
  for (auto& c : op_calls) c.store(0, std::memory_order_relaxed);
}

bool logging() { return log_enabled.load(std::memory_order_relaxed); }
void set_logging(bool enabled) { log_enabled.store(enabled, std::memory_order_relaxed); }

namespace {

std::atomic<LogSink> log_sink{nullptr};

void emit(const char* line) {
  if (LogSink sink = log_sink.load(std::memory_order_acquire)) {
    sink(line);
  } else {
    // stdio, not iostreams: one line, written whole, safe from any thread.
    std::fprintf(stderr, "[cutlass_ops] %s\n", line);
  }
}

}  // namespace

void set_log_sink(LogSink sink) { log_sink.store(sink, std::memory_order_release); }

void log_call(const Plan& plan, c10::ScalarType dtype) {
  // How the kernel divides K, in explain()'s words ("split-k x8"); nothing for data-parallel.
  char how[48] = "";
  if (plan.kernel != nullptr && plan.decomposition != Decomposition::kDataParallel) {
    if (plan.decomposition == Decomposition::kSplitK) {
      std::snprintf(how, sizeof(how), ", %s x%d", decomposition_name(plan.decomposition), plan.splits);
    } else {
      std::snprintf(how, sizeof(how), ", %s", decomposition_name(plan.decomposition));
    }
  }
  char line[512];
  std::snprintf(line, sizeof(line), "mm %lldx%lldx%lld %s (%s) -> %s%s%s%s%s%s%s%s", static_cast<long long>(plan.m),
                static_cast<long long>(plan.n), static_cast<long long>(plan.k), c10::toString(dtype),
                precision_name(plan.precision), plan.kernel ? plan.kernel->name : "torch.mm", how,
                plan.staged ? ", staged" : "", plan.transposed ? ", transposed" : "",
                plan.copy_a ? ", copied self" : "", plan.copy_b ? ", copied mat2" : "",
                plan.copy_b_kmajor ? ", K-major copy of B" : "", plan.d_via_temp ? ", out via temporary" : "");
  emit(line);
}

void log_handoff(int64_t m, int64_t n, int64_t k, c10::ScalarType dtype, const char* why) {
  char line[512];
  std::snprintf(line, sizeof(line), "mm %lldx%lldx%lld %s -> torch.mm (%s)", static_cast<long long>(m),
                static_cast<long long>(n), static_cast<long long>(k), c10::toString(dtype), why);
  emit(line);
}

}  // namespace cutlass_ops::stats
