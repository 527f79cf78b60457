// Helpers every CUTLASS kernel family shares on its launch path.
#pragma once

#include <cuda_runtime_api.h>

#include "common/smem_opt_in.h"
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

}  // namespace cutlass_ops
