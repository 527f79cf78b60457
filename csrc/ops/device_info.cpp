#include "ops/device_info.h"

#include <array>
#include <mutex>

#include <c10/cuda/CUDAException.h>
#include <c10/util/Exception.h>
#include <cuda_runtime_api.h>

namespace cutlass_ops {

const DeviceDesc& cuda_device_desc(int device) {
  constexpr int kMaxDevices = 64;
  TORCH_CHECK(device >= 0 && device < kMaxDevices, "cutlass_ops supports CUDA devices 0 to ", kMaxDevices - 1,
              ", got device ", device);
  static std::array<std::once_flag, kMaxDevices> once;
  static std::array<DeviceDesc, kMaxDevices> descs;
  std::call_once(once[device], [device] {
    int major = 0, minor = 0;
    DeviceDesc d;
    C10_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
    C10_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
    C10_CUDA_CHECK(cudaDeviceGetAttribute(&d.sm_count, cudaDevAttrMultiProcessorCount, device));
    C10_CUDA_CHECK(cudaDeviceGetAttribute(&d.smem_optin_bytes, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
    d.cc = 10 * major + minor;
    // Clock and memory rates are advisory (the cost model's estimates for uncalibrated
    // devices): a driver that does not report them leaves them 0.
    int clock_khz = 0, mem_khz = 0, bus_bits = 0;
    if (cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, device) == cudaSuccess) d.clock_mhz = clock_khz / 1000;
    if (cudaDeviceGetAttribute(&mem_khz, cudaDevAttrMemoryClockRate, device) == cudaSuccess &&
        cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, device) == cudaSuccess) {
      // Double data rate: two transfers per memory clock, bus_bits / 8 bytes each.
      d.dram_gbps = static_cast<int>(2.0 * mem_khz * 1e3 * (bus_bits / 8) / 1e9);
    }
    (void)cudaGetLastError();
    descs[device] = d;
  });
  return descs[device];
}

}  // namespace cutlass_ops
