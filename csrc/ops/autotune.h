// The autotuner: times the cost model's cheapest few candidates on a call's real operands, with
// the profiling sweep's method (ops/timing.h), in alternating rounds until their ranking is
// beyond the timings' noise, and records the fastest in the tuning table (dispatch/tuning.h)
// for every later call with the same problem; a candidate not faster than the model's pick
// beyond the noise is never recorded over it. Enabled by CUTLASS_OPS_AUTOTUNE=1 or
// cutlass_ops.tuning.set_autotune(True).
#pragma once

#include <ATen/core/Tensor.h>

#include "dispatch/planner.h"

namespace cutlass_ops {

// Times the candidates for `normalized` (writing each result into `out`, which the caller then
// overwrites with the chosen one's), inserts the winner into the tuning table and puts it on
// `plan`. Does nothing while the current stream is capturing a CUDA graph (timing needs a host
// sync), so capture keeps the model's choice.
void autotune(Plan& plan, const Plan& normalized, const at::Tensor& self, const at::Tensor& mat2,
              const at::Tensor& out, int device, const DeviceDesc& desc);

}  // namespace cutlass_ops
