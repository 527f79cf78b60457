// Zero-padded 2-D copies for staged plans (Plan::staged): the operands into aligned, padded
// buffers before the kernel, and the padded result out of its buffer after it.
//
// torch's way (copy_ into a narrowed view, then zero_ on each margin) took up to five launches
// for A and B, and a staged call 68-78 us of host time; the GPU copies alone took 17 us at
// 361x1399x2249 bf16 (F.linear layout, H200, 2026-11-30: python
// benchmarks/probes/launch_activities_probe.py 361x1399x2249,360x1400x2249 --layout rc). Here
// every copy of a call fills its whole destination, margins included, and the operands' copies
// share one launch where they run on one kernel.
#pragma once

#include <ATen/core/Tensor.h>

namespace cutlass_ops {

// One copy: `dst` (R x C, any strides) gets `src` (r x c with r <= R, c <= C, any strides) in
// its top-left corner and zeros in the rest. `src` and `dst` have the same element size.
struct PaddedCopy {
  at::Tensor src;
  at::Tensor dst;
};

// Runs the copies (one or two) on the current stream of their device, one launch where their
// access patterns allow, else one each; a copy this file's kernels cannot take (an element size
// other than 2, 4 or 8 bytes, or a grid too large) goes through torch's copy_ and zero_.
void padded_copies(const PaddedCopy* copies, int count);

}  // namespace cutlass_ops
