// Per-device facts the planner needs, read once per device and cached: reading device
// attributes on every call is measurable at 64^3.
#pragma once

#include "dispatch/planner.h"

namespace cutlass_ops {

// Throws c10::Error (RuntimeError) if the CUDA runtime cannot answer.
const DeviceDesc& cuda_device_desc(int device);

}  // namespace cutlass_ops
