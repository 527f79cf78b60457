// The one-time opt-in to more than 48 KiB of dynamic shared memory, shared by every kernel
// family (CUTLASS and hand-written). CUDA runtime only: no CUTLASS, no torch.
#pragma once

#include <array>
#include <mutex>

#include <cuda_runtime_api.h>

namespace cutlass_ops {

// Kernels with more than 48 KiB of dynamic shared memory must opt in, once per device (the
// attribute is per device and per function). GemmUniversalAdapter::initialize() does this on
// every call; doing it once keeps cudaFuncSetAttribute off the per-call path (measured on
// H100: a lean launch path costs 13.3 us per 64^3 call against 15-18 us through the
// adapter). `Tag` gives each kernel its own once-flags.
template <class Tag>
cudaError_t opt_in_shared_memory_once(const void* kernel, int smem_bytes, int device) {
  if (smem_bytes < (48 << 10)) return cudaSuccess;
  constexpr int kMaxDevices = 64;
  if (device < 0 || device >= kMaxDevices) {
    return cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_bytes);
  }
  static std::array<std::once_flag, kMaxDevices> once;
  static std::array<cudaError_t, kMaxDevices> result;
  std::call_once(once[device], [&] {
    result[device] = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_bytes);
  });
  return result[device];
}

}  // namespace cutlass_ops
