// Helpers every CUTLASS kernel family shares on its launch path.
#pragma once

#include <array>
#include <mutex>

#include <cuda_runtime_api.h>

#include "cutlass/cutlass.h"
#include "dispatch/types.h"

namespace cutlass_ops {

inline KernelStatus from_cutlass(cutlass::Status status) {
  if (status == cutlass::Status::kSuccess) return {};
  return {KernelStatus::kLaunchFailed, cutlass::cutlassGetStatusString(status)};
}

inline KernelStatus from_cuda(cudaError_t error) {
  if (error == cudaSuccess) return {};
  return {KernelStatus::kLaunchFailed, cudaGetErrorString(error)};
}

// Kernels with more than 48 KiB of dynamic shared memory must opt in once per device.
// GemmUniversalAdapter::initialize() does this on every call; doing it once keeps
// cudaFuncSetAttribute off the per-call path (measured on H100: a lean launch path costs
// 13.3 us per 64^3 call against 15-18 us through the adapter). `Tag` gives each kernel its
// own once-flags.
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
