// What the probes' CUTLASS 3.x builds share (epilogue_tile_probe.cu, cpasync_probe.cu): running a
// device-level GEMM on its arguments, a workspace kept between calls.
#pragma once

#include <cuda_runtime.h>

#include "cutlass/cutlass.h"
#include "cutlass/kernel_hardware_info.h"

// The probes run on device 0; the SM count comes from the caller (torch's device properties).
inline cutlass::KernelHardwareInfo probe_hw_info(int sm_count) {
  cutlass::KernelHardwareInfo hw;
  hw.device_id = 0;
  hw.sm_count = sm_count;
  return hw;
}

// 0 on success; else the CUTLASS status plus 1000 (can_implement), 2000 (initialize) or 3000
// (run), or 4000 when the workspace could not be allocated.
template <class Gemm>
int probe_run_gemm(const typename Gemm::Arguments& args, cudaStream_t stream) {
  Gemm gemm;
  cutlass::Status status = gemm.can_implement(args);
  if (status != cutlass::Status::kSuccess) return static_cast<int>(status) + 1000;
  static void* workspace = nullptr;
  static size_t workspace_size = 0;
  const size_t needed = Gemm::get_workspace_size(args);
  if (needed > workspace_size) {
    if (workspace != nullptr) cudaFree(workspace);
    if (cudaMalloc(&workspace, needed) != cudaSuccess) return 4000;
    workspace_size = needed;
  }
  status = gemm.initialize(args, workspace, stream);
  if (status != cutlass::Status::kSuccess) return static_cast<int>(status) + 2000;
  status = gemm.run(stream);
  return status == cutlass::Status::kSuccess ? 0 : static_cast<int>(status) + 3000;
}
