#include "ops/sweep.h"

#include <ATen/ATen.h>
#include <ATen/ops/bmm_cuda_dispatch.h>
#include <ATen/ops/mm_cuda_dispatch.h>
#include <c10/cuda/CUDAGuard.h>

#include "dispatch/cost_model.h"
#include "dispatch/planner.h"
#include "ops/device_info.h"
#include "ops/mm.h"
#include "ops/timing.h"

namespace cutlass_ops {

SweepRow sweep_problem(const at::Tensor& self, const at::Tensor& mat2, const at::Tensor& out, int reps,
                       float give_up, int passes, const std::vector<std::string>& only) {
  // Two matrices (mm), or two batches of them (bmm: 3-D operands, a contiguous 3-D out).
  const bool batched = self.dim() == 3;
  if (batched) {
    check_bmm_call(self, mat2, &out);
  } else {
    check_mm_call(self, mat2, &out);
  }
  TORCH_CHECK_VALUE(self.is_cuda(), "sweep: the operands must be CUDA tensors, got ", self.device());
  const bool out_fits = out.dim() == self.dim() && out.size(-2) == self.size(-2) && out.size(-1) == mat2.size(-1) &&
                        (!batched || out.size(0) == self.size(0)) && out.is_contiguous();
  TORCH_CHECK_VALUE(out_fits, "sweep: out must be a contiguous tensor of the product's shape");
  const std::optional<Precision> precision = precision_for(self.scalar_type());
  TORCH_CHECK_VALUE(precision.has_value(), "sweep: no cutlass_ops kernel computes ", self.scalar_type());
  const int device = self.get_device();
  c10::cuda::CUDAGuard guard(device);
  const DeviceDesc& desc = cuda_device_desc(device);

  SweepRow row;
  row.normalized = normalized_plan(*precision, self, mat2, out);
  Plan chosen = row.normalized;
  choose_kernel(chosen, desc);

  std::vector<Candidate> candidates = enumerate_candidates(row.normalized, desc, calibration_for(desc));
  if (!only.empty()) {
    std::vector<Candidate> kept;
    for (const std::string& entry : only) {
      // "kernel" keeps all its candidates; "kernel@decomposition" (e.g. "@data-parallel") those
      // of one K decomposition, "kernel#variant" (e.g. "#staged-row-b") those of one variant,
      // "kernel@decomposition#variant" both.
      const size_t hash = entry.find('#');
      const std::string head = entry.substr(0, hash);
      const size_t at = head.find('@');
      const std::string name = head.substr(0, at);
      for (const Candidate& c : candidates) {
        if (name == c.kernel->name &&
            (at == std::string::npos || head.compare(at + 1, std::string::npos, decomposition_name(c.decomposition)) == 0) &&
            (hash == std::string::npos || entry.compare(hash + 1, std::string::npos, variant_name(c.variant)) == 0)) {
          kept.push_back(c);
        }
      }
    }
    candidates = std::move(kept);
  }
  if (chosen.kernel != nullptr && only.empty()) {
    const Candidate pick = candidate_of(chosen);
    for (size_t i = 0; i < candidates.size() && row.planner_index < 0; ++i) {
      if (candidates[i] == pick) row.planner_index = static_cast<int>(i);
    }
    if (row.planner_index < 0) {  // a choice outside the enumeration: time it too
      row.planner_index = static_cast<int>(candidates.size());
      candidates.push_back(pick);
    }
  }

  KernelTimer timer(device);
  constexpr float kWarmUpMs = 25;  // longer than an H100 takes to raise its clocks from idle
  timer.warm_up(kWarmUpMs);
  auto torch_mm = [&] {
    if (batched) {
      at::cuda::bmm_out(const_cast<at::Tensor&>(out), self, mat2);
    } else {
      at::cuda::mm_out(const_cast<at::Tensor&>(out), self, mat2);
    }
  };
  const float torch_before = timer.time(torch_mm, reps).median_ms;

  for (const Candidate& c : candidates) row.timed.push_back({c});
  std::vector<bool> refused(candidates.size(), false);
  float best_ms = 0;
  for (int pass = 0; pass < std::max(1, passes); ++pass) {
    for (size_t j = 0; j < candidates.size(); ++j) {
      const size_t i = pass % 2 == 0 ? j : candidates.size() - 1 - j;
      if (refused[i]) continue;
      TimedCandidate& t = row.timed[i];
      const Plan plan = candidate_plan(row.normalized, candidates[i]);
      try {
        const KernelTimer::Result r =
            timer.time([&] { launch(plan, self, mat2, out, device, desc); }, reps, best_ms, give_up);
        const float us = 1000.0f * r.median_ms;
        t.median_us = t.median_us < 0 ? us : std::min(t.median_us, us);
        t.reps += r.reps;
        if (best_ms <= 0 || r.median_ms < best_ms) best_ms = r.median_ms;
      } catch (const c10::Error&) {
        refused[i] = true;  // refused at launch (can_implement): not a candidate after all
        t.median_us = -1;
      }
    }
  }

  const float torch_after = timer.time(torch_mm, reps).median_ms;
  row.torch_us = 1000.0f * std::min(torch_before, torch_after);
  return row;
}

}  // namespace cutlass_ops
