// Timing a GEMM the way the profiling sweep, the autotuner and the benchmarks agree on: CUDA
// events around the call only, an L2 flush before every repetition (each timing starts from a
// cold cache, as a model's next layer finds it), the GPU kept busy while the host prepares the
// launch (so host work does not count), a warm-up launch first, the median of the repetitions.
#pragma once

#include <functional>

#include <ATen/core/Tensor.h>
#include <cuda_runtime_api.h>

namespace cutlass_ops {

class KernelTimer {
 public:
  // Allocates the flush buffer (twice `device`'s L2) and two events.
  explicit KernelTimer(int device);
  ~KernelTimer();
  KernelTimer(const KernelTimer&) = delete;
  KernelTimer& operator=(const KernelTimer&) = delete;

  struct Result {
    float median_ms = 0;  // median of the repetitions timed
    float min_ms = 0;
    int reps = 0;         // repetitions timed
  };

  // Times `fn` `reps` times (after one warm-up call). When `bar_ms` > 0 and the faster of the
  // first two timings is over `give_up` x `bar_ms`, stops there: a candidate that far behind
  // the best so far needs no precise figure. Exceptions from `fn` propagate.
  Result time(const std::function<void()>& fn, int reps, float bar_ms = 0, float give_up = 3);

  // Keeps the GPU busy (L2 flushes back to back) for about `ms` milliseconds. An idle GPU
  // lowers its clocks (an H100 idles at 345 MHz against 1980 under load) and takes
  // milliseconds to raise them again: timings taken right after a pause read up to 10x slow
  // (measured in this project's first profiling sweep, where the first candidates of some
  // problems, and torch.mm before them, ran 5-12x their later times).
  void warm_up(float ms);

 private:
  int device_;
  cudaStream_t stream_;
  at::Tensor flush_;
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
};

}  // namespace cutlass_ops
