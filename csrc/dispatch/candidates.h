// Every way cutlass_ops could run one normalised problem: which copy of the operands the
// kernel reads (the variant), which kernel, and how it divides K. The cost model
// (dispatch/cost_model.h) prices each candidate and the planner runs the cheapest; the
// profiling sweep (python -m cutlass_ops sweep) and the autotuner time the same list, so the
// model is fitted on exactly the choices it makes. No torch, no CUTLASS, no GPU.
#pragma once

#include <vector>

#include "dispatch/planner.h"

namespace cutlass_ops {

struct Calibration;  // cost_model.h: the device's fitted constants and recorded figures

// The operands a candidate's kernel reads.
enum class Variant : int8_t {
  kInPlace = 0,     // the caller's tensors, as normalize() described them
  kStagedRowB = 1,  // zero-padded 16-byte aligned copies of A (row-major) and B (row-major)
  kStagedColB = 2,  // the same with B column-major (K-major)
  kKmajorB = 3,     // A in place, B copied column-major (K-major): SM90 TF32 reads K-major B only
};
inline constexpr int kNumVariants = 4;

inline constexpr const char* variant_name(Variant v) {
  switch (v) {
    case Variant::kInPlace: return "in-place";
    case Variant::kStagedRowB: return "staged-row-b";
    case Variant::kStagedColB: return "staged-col-b";
    case Variant::kKmajorB: return "kmajor-b";
  }
  return "?";
}

struct Candidate {
  Variant variant = Variant::kInPlace;
  const KernelInfo* kernel = nullptr;
  Decomposition decomposition = Decomposition::kDataParallel;
  int splits = 1;

  bool operator==(const Candidate& o) const {
    return variant == o.variant && kernel == o.kernel && decomposition == o.decomposition && splits == o.splits;
  }
};

// `normalized` (a plan from normalize()) turned into `variant`: the operands the kernel reads
// and the problem it sees (staging pads K and N).
Plan variant_plan(const Plan& normalized, Variant variant);

// The variants worth pricing on `device`: in place always (only that for a batch); on Hopper, for 16-bit and TF32
// problems, staged copies when an operand breaks TMA's 16-byte rule, and for TF32 with a
// row-major B, a K-major copy of B.
std::vector<Variant> variants_for(const Plan& normalized, const DeviceDesc& device);

// CTAs of `kernel` that run at once on one SM (persistent kernels: one): the figure CUDA's
// occupancy calculator gave on the device's sweep where its calibration records one
// (Calibration::ctas_per_sm), else an estimate from the threads, the shared memory and the
// registers a CTA takes (its accumulators and 96 more per thread for tensor-core kernels, 64 for
// SIMT ones: ptxas figures in candidates.cpp). `calibration`: the device's (calibration_for), or
// none; the caller looks it up once for the whole plan.
int ctas_per_sm(const KernelInfo& kernel, const DeviceDesc& device, const Calibration* calibration);

// Output tiles of `kernel` on an m x n problem, whole clusters of them.
int64_t tile_count(const KernelInfo& kernel, int64_t m, int64_t n);

// Every candidate: each product kernel (KernelInfo::role) that accepts a variant's plan, with
// data-parallel and each other decomposition it supports that can pay on the problem: split-K
// (2 to 16 slices; up to 64 for kernels that sum their slices, where the count divides K)
// and stream-K while the tiles are under two waves of CTAs (stream-K also for a ragged last
// wave), each K slice at least two K tiles deep. A batch (bmm) runs data-parallel only.
std::vector<Candidate> enumerate_candidates(const Plan& normalized, const DeviceDesc& device,
                                            const Calibration* calibration);

// One kernel's candidates on the problem as it is (a kernel forced with kernel=, which may be a
// teaching kernel): each decomposition it supports that can pay. The kernel must accept `plan`.
std::vector<Candidate> kernel_candidates(const Plan& normalized, const KernelInfo& kernel, const DeviceDesc& device,
                                         const Calibration* calibration);

// The plan that runs `candidate`: its variant's plan with the kernel and decomposition on it.
Plan candidate_plan(const Plan& normalized, const Candidate& candidate);

// The candidate a finished plan runs (for the sweep and explain(): which row is the planner's).
Candidate candidate_of(const Plan& plan);

}  // namespace cutlass_ops
