// The cost model: a predicted time for every candidate (dispatch/candidates.h), from the
// problem's arithmetic and the kernel's typed traits, with a few constants per kernel fitted on
// the profiling sweep's training split (cutlass_ops/calibration). The planner runs the
// cheapest candidate. No torch, no CUTLASS, no GPU.
//
//   time = c_launch + c_tile * tile_rounds + c_fixup * fixup_mb + c_pass * pass_mb + c_chain * chain
//          + c_reduce * reduction_reads
//          + smoothmax(c_iter * critical_iters,
//                      c_read * read_mb + c_l2 * l2_mb + c_write * write_mb + c_ragged * ragged_l2_mb)
//          + the variant's copies (staging, K-major B) at the device's copy rates
//
// critical_iters: main-loop iterations (one CTA tile, one K step) on the busiest SM, so the
//   tile's padding of M and N, the ragged last wave (clusters and CTAs per SM counted; a
//   persistent grid holds the clusters that fit whole GPCs, as CUTLASS's tile scheduler sizes
//   it: 112 CTAs in clusters of eight on 132 SMs), and the K slices of split-K and stream-K are
//   all in it;
// tile_rounds: output tiles the busiest SM finishes (each one a prologue and an epilogue);
// read_mb, write_mb: the operands read and D written once (apart: a kernel's epilogue stores
//   at another rate than its main loop loads); l2_mb: A re-read for every N tile column and B
//   for every M tile row (cluster multicast shares them), which the SMs pull through L2;
// fixup_mb: partial tiles of split-K and stream-K through the workspace, and the float32
//   slices of the slice-summing kernels and of the streaming kernels' K split;
// ragged_l2_mb: the part of l2_mb that the hand-written TMA + WGMMA kernel (ladder step 6)
//   loads from an operand whose rows do not start 128 bytes apart (16-bit: a leading dimension
//   no multiple of 64 elements: K in F.linear's layout, M for the weight gradient's column-major
//   A and N for its row-major B): each box row then
//   straddles two 128-byte lines (H100 sweep: 1.35x CUTLASS's 128x256 tile's time where K =
//   8 mod 16, 0.96x where K is a multiple of 64);
// pass_mb: operand passes inside the kernel (3xTF32's split of A and B into TF32 parts);
// chain: partial tiles one tile's result waits for, one after another (split-K's slices less
//   one; stream-K's CTAs sharing a tile less one: with few tiles and a long K, 132 SMs may share
//   one tile, and that reduction, not the multiply, is the time);
// reduction_reads: partial tiles one reduction CTA reads, one after another, where CUTLASS 2.x's
//   stream-K kernel sums them in separate reduction CTAs (its split-K, and stream-K blocks that
//   leave CTA slots free): s for s K slices. Its time grows with s once the slices fill the GPU
//   (1 x 4 x 10460 bf16 on the 64x64x32 a4 tile: 12.4 us at 24 slices, 13.9 at 48, 16.0 at 64;
//   H200 sweep), which the chain's single hand-off left out: the H200's two worst test-split
//   picks were 64 slices there. Its own constant, not a longer chain: counted as chain links,
//   the fit's cross-validation got worse (H100 1.0150 against 1.0148, H200 1.0142 against
//   1.0141); as its own term, better (1.0146, 1.0139).
//
// The K decomposition priced is the one the kernel runs: CUTLASS 2.x's stream-K kernel splits
// the tiles into data-parallel ones and stream-K blocks by its host code's heuristic, which the
// model ports (cost_model.cpp), over the SMs the launch balances it (one fewer than the device's
// where CUTLASS would remap its block indices: cutlass2x_balanced_split, and for a split factor
// cutlass2x_slices_reduced_apart); the streaming kernels cut
// K into as many slices as their workspace holds.
//
// Constants are per kernel and per K decomposition: a kernel's split-K and stream-K runs go
// through other code (workspace, barriers) than its data-parallel one.
//
// Compute and memory overlap in part, so they meet in a p-norm between a sum (p = 1) and a
// maximum (p large): p = 1.5, chosen by the training split's cross-validation (fit.py).
// Kernels with no fitted constants for the device (a GPU never calibrated, a kernel added
// since) take constants derived from the device's peak rates (property_coefficients). On a
// device whose calibration measured some of a problem's candidates, those it never measured
// (a kernel, a kernel's K decomposition or split-K slice count, added since the sweep) rank
// after all the measured ones, whatever their predictions: peak-rate constants are optimistic
// beside fitted ones, so a new kernel would otherwise take every problem it can run, untimed.
// It joins dispatch once the sweep has timed it (`python -m cutlass_ops sweep --add-kernels`,
// then `fit`); until then it runs when forced (explain() lists it, marked).
//
// What the eleven terms miss (a kernel's epilogue on very wide, shallow outputs; the few-row
// streaming kernels' K split; CUTLASS's stream-K heuristics) varies smoothly with the shape, and
// the sweep measured it: each candidate class (variant, config and alignment, K decomposition;
// all four operand layouts together) keeps its training problems' log residuals, log(measured /
// predicted), and a prediction is multiplied by exp(their Gaussian-weighted mean near the
// problem), in log2 M, N, K and slices, a point of another operand layout counted as farther
// by a fixed squared distance, shrunk toward 1 where few training problems are near
// (ResidualField: kernel regression). Bandwidth, shrinkage and the layout distance are chosen
// by cross-validation on the training split (fit.py).
#pragma once

#include <array>
#include <bitset>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "dispatch/candidates.h"

namespace cutlass_ops {

enum Feature : int {
  kFeatLaunch = 0,
  kFeatTileRounds = 1,
  kFeatFixupMB = 2,
  kFeatPassMB = 3,
  kFeatCriticalIters = 4,
  kFeatReadMB = 5,
  kFeatL2MB = 6,
  kFeatChain = 7,
  kFeatWriteMB = 8,
  kFeatRaggedPitchL2MB = 9,  // ragged_l2_mb above
  kFeatReductionReads = 10,  // reduction_reads above
  kNumFeatures = 11,
};
using Features = std::array<double, kNumFeatures>;
using Coefficients = std::array<double, kNumFeatures>;  // microseconds per unit of each feature

// The exponent of the smooth maximum of the compute and memory terms. Regret geomean (p95) of
// the held-out folds of the training split's cross-validation (H100 sweep, 2026-11-27): 1.0
// 1.0174 (1.106), 1.5 1.0166 (1.099), 2.0 1.0167 (1.101), 2.5 1.0169 (1.101), 3.0 1.0172
// (1.104), 4.0 1.0176 (1.105), 8.0 1.0192 (1.113).
inline constexpr double kSmoothMaxPower = 1.5;

// Costs of a variant's copies, the same for every kernel on the device.
struct CopyCosts {
  double us_per_mb = 0.4;            // zero-padded copy (read + write), per MB of the operands
  double transpose_us_per_mb = 1.0;  // the K-major copy of B (a transpose), per MB of B
  double launch_us = 3.0;            // per extra kernel launch
};

// The most K slices a calibration records a split-K count for: the most the planner offers
// (candidates.cpp, kSplitCounts).
constexpr int kMaxRecordedSplits = 64;

// One kernel's constants, per K decomposition (Decomposition's order); a decomposition the
// sweep never timed falls back on the data-parallel ones.
struct KernelConstants {
  std::array<Coefficients, 3> by_decomposition{};
  std::array<bool, 3> fitted{};
  // The slice counts its split-K runs were timed at on the training split (bit s), where the
  // calibration records them: a count offered since (the enumeration grew) is unmeasured, as a
  // decomposition without constants is, until `sweep --add-kernels` times it. Unrecorded: all.
  std::bitset<kMaxRecordedSplits + 1> split_counts;
  bool split_counts_recorded = false;

  const Coefficients* find(Decomposition d) const {
    const int i = static_cast<int>(d);
    if (fitted[i]) return &by_decomposition[i];
    return fitted[0] ? &by_decomposition[0] : nullptr;
  }
  // Whether the sweep measured this decomposition (and, for split-K, this slice count).
  bool measured(Decomposition d, int splits) const {
    if (!fitted[static_cast<int>(d)]) return false;
    if (d != Decomposition::kSplitK || !split_counts_recorded) return true;
    return splits >= 0 && splits <= kMaxRecordedSplits && split_counts[splits];
  }
};

// One candidate class's training residuals, bucketed on a grid in log2 (M, N, K) so that a
// correction reads only the cells within three bandwidths of the problem.
class ResidualField {
 public:
  struct Point {
    float x[4];      // log2 M, log2 N, log2 K, log2 slices
    float r;         // log(measured / predicted)
    int layouts;     // layout_index() of the training kernel's operands
  };
  ResidualField(std::vector<Point> points, double bandwidth);
  // sum(w r) / (sum(w) + shrink), w = exp(-(|x - x_i|^2 + layout_distance [other layouts]) /
  // (2 bandwidth^2)).
  double correction(const std::array<double, 4>& x, int layouts, double shrink, double layout_distance) const;
  // No correction() at x is below it: the least residual (or 0) of the cells it reads.
  double least_correction(const std::array<double, 4>& x) const;
  size_t size() const { return points_.size(); }

 private:
  static constexpr int kCells = 8;  // per dimension
  int cell_of(double log2_extent) const;
  template <class Visit>
  void for_each_near_cell(const std::array<double, 4>& x, Visit visit) const;
  double bandwidth_, cell_size_;
  std::vector<Point> points_;       // sorted by cell
  std::vector<uint32_t> begin_;     // kCells^3 + 1 offsets into points_
  std::vector<float> least_;        // per cell: min(0, least residual in it)
};

// A kernel's operand layouts as 0-3: rr, rc, cr, cc (A then B; r = row-major).
inline int layout_index(const KernelInfo& k) {
  return (k.layout_a == Layout::kColMajor ? 2 : 0) + (k.layout_b == Layout::kColMajor ? 1 : 0);
}

// The residual fields of one kernel, by variant and K decomposition, and one more for batches
// (bmm: in place, data-parallel), fitted on the batched sweep and read by batched calls alone.
inline constexpr int kBatchedResidualSlot = kNumVariants * 3;
using KernelResiduals = std::array<std::shared_ptr<const ResidualField>, kNumVariants * 3 + 1>;
inline int residual_slot(Variant v, Decomposition d) { return static_cast<int>(v) * 3 + static_cast<int>(d); }

// The constants for one device: per kernel (by name), and for the copies.
struct Calibration {
  std::string source;  // where they came from, for explain()
  int cc = 0, sm_count = 0;
  int dram_gbps = 0;   // the calibrated device's DRAM bandwidth (GB/s); 0: not recorded
  CopyCosts copies;
  std::unordered_map<std::string, KernelConstants> kernels;
  double residual_bandwidth = 0.75;  // log2 units
  double residual_shrink = 0.1;      // in units of the weight of one coincident training problem
  double residual_layout_distance = 2.0;  // squared log2 units added for a point of other layouts
  // The batched field's own bandwidth and shrinkage (its training problems are fewer and
  // farther apart: cross-validated on the batched rows alone); the single products' when unset.
  double batched_bandwidth = 0.75;
  double batched_shrink = 0.1;
  std::unordered_map<std::string, KernelResiduals> residuals;
  // CTAs per SM by kernel name, as the device's occupancy calculator gave them when the sweep
  // ran (`sweep --occupancy`; KernelInfo::max_active_ctas): ctas_per_sm() reads them in place of
  // its estimate, so that the planner and the fit (on a machine without the GPU) agree. Looked
  // up by the kernel's name as it stands (std::less<>: no string built per lookup, and a plan
  // reads it for every candidate).
  std::map<std::string, int, std::less<>> ctas_per_sm;
};

// The device's calibration: one of its compute capability, the nearest in SM count (the
// per-kernel constants are per SM), then in DRAM bandwidth (an H100 and an H200 share compute
// capability and SM count; the H200's few-row products run faster with its bandwidth, and its
// SM90 kernels 5% faster, its SM80 ones not at all: docs/findings.md); else none.
const Calibration* calibration_for(const DeviceDesc& device);
// Replaces those of the same cc and SM count and the same DRAM bandwidth (any, where either
// records none).
void add_calibration(Calibration calibration);
void clear_calibrations();
// Bumped by every change to the calibrations or the tuning table: plan caches compare it.
uint64_t dispatch_generation();
void bump_dispatch_generation();

// The eleven terms of `kernel` on its candidate's plan (`calibration`: the device's, for the CTAs
// per SM it records; or none).
Features features(const Plan& candidate_plan, const KernelInfo& kernel, const DeviceDesc& device,
                  const Calibration* calibration);

// Constants from the device's peak rates alone (no sweep): what explain(device=...) shows for a
// GPU never calibrated, and what a kernel added since the last sweep gets.
Coefficients property_coefficients(const KernelInfo& kernel, const DeviceDesc& device, const Calibration* calibration);

double kernel_time_us(const Features& f, const Coefficients& c);

// What a variant's copies move, the same for every kernel.
struct CopyWork {
  double padded_mb = 0;     // staging copies that keep the layout (A and B into padded buffers, the padded result out)
  double transpose_mb = 0;  // copies that change the layout (staging a column-major A, B into the other
                            // layout, the K-major copy of B); read + write
  int launches = 0;         // extra kernel launches
};
CopyWork copy_work(const Plan& normalized, Variant variant);
double copy_time_us(const CopyWork& work, const CopyCosts& copies);

// The elementwise pass that applies a call's epilogue (ops/epilogue.h) after a kernel that
// does not fuse it.
double epilogue_pass_us(const Plan& normalized, const CopyCosts& copies);

// The name a kernel's calibration is stored under: its own, or for a fused-epilogue build the
// plain build's of the same config.
std::string calibration_name(const KernelInfo& kernel);

struct Prediction {
  double us = 0;
  double kernel_us = 0, copy_us = 0;  // the eleven-term model's parts, before the residual factor
  double residual = 1;                // the factor the training residuals near the problem apply
  bool calibrated = false;  // this decomposition's constants came from a sweep of this device class
};

// One candidate's eleven-term cost before the residual factor, with what it came from: the
// features (fit's regressors) and the copy work. Its prediction is predict's before the training
// residuals near the problem scale it.
struct PlainCost {
  Features features{};
  CopyWork copies{};
  Prediction prediction;
};
PlainCost plain_cost(const Plan& normalized, const Candidate& candidate, const DeviceDesc& device,
                     const Calibration* calibration);

Prediction predict(const Plan& normalized, const Candidate& candidate, const DeviceDesc& device);
// The same under a calibration the caller looked up once for its plan (calibration_for).
Prediction predict(const Plan& normalized, const Candidate& candidate, const DeviceDesc& device,
                   const Calibration* calibration);

struct Ranked {
  Candidate candidate;
  Prediction prediction;
};

// Every candidate with its prediction, cheapest first (ties keep enumeration order); where the
// calibration measured some, the unmeasured ones after them (see above).
std::vector<Ranked> rank_candidates(const Plan& normalized, const DeviceDesc& device);

// rank_candidates(...).front(), for the planner: the residual correction, the model's costliest
// part, is applied only to candidates that its bound (least_correction) leaves in the running.
// The same pick (ties too).
std::optional<Ranked> cheapest_candidate(const Plan& normalized, const DeviceDesc& device);

}  // namespace cutlass_ops
