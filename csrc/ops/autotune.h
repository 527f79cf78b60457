// The autotuner: times every eligible (kernel, K decomposition) on a call's real operands
// once, and records the fastest in the tuning table (dispatch/tuning.h) for every later call
// with the same problem. Enabled by CUTLASS_OPS_AUTOTUNE=1 or cutlass_ops.set_autotune(True).
#pragma once

#include <ATen/core/Tensor.h>

#include "dispatch/planner.h"

namespace cutlass_ops {

// Times the candidates for `plan` (writing each result into `out`, which the caller then
// overwrites with the chosen kernel's), inserts the winner into the tuning table and puts it
// on `plan`. Does nothing while the current stream is capturing a CUDA graph (timing needs a
// host sync), so capture keeps the heuristic's choice.
void autotune(Plan& plan, const at::Tensor& self, const at::Tensor& mat2, const at::Tensor& out, int device,
              const DeviceDesc& desc);

}  // namespace cutlass_ops
