#include "ops/autotune.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include <c10/cuda/CUDAGraphsC10Utils.h>

#include "dispatch/cost_model.h"
#include "dispatch/tuning.h"
#include "ops/mm.h"
#include "ops/timing.h"

namespace cutlass_ops {

namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// The model's cheapest candidates timed: the model is within a few percent on most problems
// (benchmarks/RESULTS.md), so the fastest is nearly always among its first few.
constexpr int kTopCandidates = 6;
constexpr int kReps = 5;         // timings per candidate per round, median kept
constexpr int kMinRounds = 2;    // rounds alternate the order of the candidates (clock drift)
constexpr int kMaxRounds = 5;
// Below this gap two timings are the same time: the H100's clocks drift under its power cap,
// and repeated medians of one kernel differ by 1-3%.
constexpr double kNoiseFloor = 0.03;

struct Trial {
  Candidate candidate;
  Plan plan;
  std::vector<float> medians;  // one per round
  bool refused = false;

  double median() const {
    std::vector<float> m = medians;
    std::sort(m.begin(), m.end());
    const size_t n = m.size();
    return n == 0 ? 0.0 : (n % 2 ? m[n / 2] : 0.5 * (m[n / 2 - 1] + m[n / 2]));
  }
  double spread() const {  // (max - min) / median over rounds
    if (medians.size() < 2) return 1.0;
    const auto [lo, hi] = std::minmax_element(medians.begin(), medians.end());
    return (*hi - *lo) / std::max(1e-9, median());
  }
};

}  // namespace

void autotune(Plan& plan, const Plan& normalized, const at::Tensor& self, const at::Tensor& mat2,
              const at::Tensor& out, int device, const DeviceDesc& desc) {
  if (c10::cuda::currentStreamCaptureStatusMayInitCtx() != c10::cuda::CaptureStatus::None) return;
  const std::vector<Ranked> ranked = rank_candidates(normalized, desc);
  if (ranked.empty()) return;
  std::vector<Trial> trials;
  for (const Ranked& r : ranked) {
    if (static_cast<int>(trials.size()) == kTopCandidates) break;
    trials.push_back({r.candidate, candidate_plan(normalized, r.candidate), {}, false});
  }

  // Rounds in alternating order until the fastest is ahead of the model's pick (trials[0]) by
  // more than the timings' spread, or the pick is ahead of all others, or kMaxRounds.
  KernelTimer timer(device);
  timer.warm_up(10);  // clocks up from idle before anything is timed (ops/timing.h)
  for (int round = 0; round < kMaxRounds && trials.size() > 1; ++round) {
    for (size_t j = 0; j < trials.size(); ++j) {
      Trial& t = trials[round % 2 == 0 ? j : trials.size() - 1 - j];
      if (t.refused) continue;
      try {
        t.medians.push_back(timer.time([&] { launch(t.plan, self, mat2, out, device, desc); }, kReps).median_ms);
      } catch (const c10::Error&) {
        t.refused = true;  // can_implement said no at launch: not a candidate after all
      }
    }
    if (round + 1 < kMinRounds) continue;
    const Trial& pick = trials[0];
    if (pick.refused) break;
    double noise = std::max(kNoiseFloor, pick.spread());
    bool settled = true;
    for (size_t j = 1; j < trials.size(); ++j) {
      const Trial& t = trials[j];
      if (t.refused) continue;
      noise = std::max(noise, t.spread());
      // Unsettled while some candidate is within the noise of the pick, either way.
      if (std::abs(t.median() - pick.median()) <= noise * pick.median()) settled = false;
    }
    if (settled) break;
  }

  // The fastest, but never one that is not faster than the model's pick beyond the noise.
  const Trial* best = &trials[0];
  if (best->refused) {
    best = nullptr;
    for (const Trial& t : trials) {
      if (!t.refused && (best == nullptr || t.median() < best->median())) best = &t;
    }
    if (best == nullptr) return;
  } else {
    for (const Trial& t : trials) {
      if (t.refused || &t == best) continue;
      const double noise = std::max({kNoiseFloor, t.spread(), trials[0].spread()});
      if (t.median() < (1.0 - noise) * trials[0].median() && t.median() < best->median()) best = &t;
    }
  }
  double best_ms = best->median();

  // Then the winner's tile order, where it has one and more tiles than SMs (with one wave or
  // less every tile runs at once, in any order). Another order must be faster by more than the
  // noise, twice.
  Plan tuned = best->plan;
  const KernelInfo& k = *tuned.kernel;
  const int64_t tiles = ceil_div(tuned.m, k.tile_m) * ceil_div(tuned.n, k.tile_n);
  if (k.orders_tiles && tuned.decomposition == Decomposition::kDataParallel && best_ms > 0 && tiles > desc.sm_count) {
    Plan trial = tuned;
    const double bar = (1.0 - kNoiseFloor) * best_ms;
    for (const Raster raster : {Raster::kAlongM, Raster::kAlongN}) {
      for (const int swizzle : {1, 2, 4, 8}) {
        trial.tile_order = {raster, swizzle};
        try {
          float ms = timer.time([&] { launch(trial, self, mat2, out, device, desc); }, kReps, best_ms).median_ms;
          if (ms < bar) ms = std::max(ms, timer.time([&] { launch(trial, self, mat2, out, device, desc); }, kReps).median_ms);
          if (ms < bar && ms < best_ms) {
            tuned.tile_order = trial.tile_order;
            best_ms = ms;
          }
        } catch (const c10::Error&) {
        }
      }
    }
  }

  TuningTable::instance().insert(tuning_key(normalized, desc),
                                 {best->candidate.variant, tuned.kernel, tuned.decomposition, tuned.splits,
                                  tuned.tile_order, 1000.0 * best_ms});
  plan = tuned;
  plan.tuned = true;
  plan.reason = best == &trials[0] ? "autotuned: the cost model's pick, measured fastest (or within noise)"
                                   : "autotuned: faster than the cost model's pick beyond the timings' noise";
}

}  // namespace cutlass_ops
