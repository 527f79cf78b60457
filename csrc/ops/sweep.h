// One problem of the profiling sweep (python -m cutlass_ops sweep): every candidate the
// planner could run (dispatch/candidates.h) timed on the call's real operands, beside
// torch.mm, with the autotuner's method (ops/timing.h). The cost model is fitted on these
// rows (cutlass_ops/calibration.py) and judged on a held-out part of them.
#pragma once

#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

#include "dispatch/candidates.h"

namespace cutlass_ops {

struct TimedCandidate {
  Candidate candidate;
  float median_us = -1;  // the smaller of its passes' medians; < 0: it refused the problem at launch
  int reps = 0;          // timings over all passes (fewer than asked: far behind the best, stopped early)
};

struct SweepRow {
  Plan normalized;                     // the problem as the planner sees it
  std::vector<TimedCandidate> timed;   // every candidate, in enumeration order
  int planner_index = -1;              // the row of `timed` the planner picks today
  float torch_us = 0;                  // torch.mm (cuBLAS) on the same operands, median
};

// After warming the GPU's clocks up, times torch.mm, then every candidate for self @ mat2 into
// `out` (a contiguous M x N tensor; for batches, 3-D operands, torch.bmm and a B x M x N out), then torch.mm again, in `passes` passes over the candidates
// in alternating order (forward, backward, ...): each candidate keeps the smaller of its
// passes' medians, so a slow moment (a clock change) in one pass does not decide. Takes the
// current fp32 settings (TF32 flag, fp32 mode) as mm() would. `reps` timings per candidate
// and pass; one over `give_up` x the best so far after two timings stops there. With `only`
// non-empty, just the candidates of those kernels (by name; "name@data-parallel" and the like
// for one decomposition, "name#staged-row-b" and the like for one variant, or both), in that
// list's order: a sweep extended with kernels added since, or candidates re-timed after a
// change (cutlass_ops/calibration/sweep.py, extend()).
SweepRow sweep_problem(const at::Tensor& self, const at::Tensor& mat2, const at::Tensor& out, int reps,
                       float give_up, int passes = 2, const std::vector<std::string>& only = {});

}  // namespace cutlass_ops
