#include "dispatch/candidates.h"

#include <algorithm>
#include <iterator>

#include "dispatch/cost_model.h"
#include "dispatch/registry.h"

namespace cutlass_ops {

namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
int64_t round_up(int64_t a, int64_t b) { return ceil_div(a, b) * b; }

// Split counts offered to kernels that cut K: CUTLASS's serial split-K slows past 16 slices
// (each waits its turn at the tile); the kernels that sum the slices otherwise (KernelInfo::slice_sum)
// take more.
constexpr int kSplitCounts[] = {2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64};
static_assert(kSplitCounts[std::size(kSplitCounts) - 1] == kMaxRecordedSplits,
              "a calibration records every split count the planner offers (cost_model.h)");
constexpr int kMaxSerialSplits = 16;
constexpr int64_t kMaxStreamKPeers = 4;

// Whether a variant's copies serve `k`: staging's aligned, padded copies exist to reach the TMA +
// WGMMA kernels; the K-major copy of B any WGMMA kernel, the cp.async ones too (TF32 "rr" with
// a K no multiple of 4 leaves A where TMA cannot read it, and B's copy is then no better
// aligned). The cp.async kernels on staged copies, which TMA reads, were the fastest candidate
// on none of the H200 sweep's 11,829 such timings (2026-11-30).
bool variant_serves(Variant variant, const KernelInfo& k) {
  if (variant == Variant::kInPlace) return true;
  if (k.math != MathClass::kWgmma) return false;
  return variant == Variant::kKmajorB || k.mainloop == Mainloop::kTmaWarpSpecialized;
}

bool is_float32(Precision p) { return p == Precision::kTF32 || p == Precision::kF32 || p == Precision::kTF32x3; }

}  // namespace

Plan variant_plan(const Plan& p, Variant variant) {
  switch (variant) {
    case Variant::kInPlace: return p;
    case Variant::kStagedRowB: return stage(p, Layout::kRowMajor);
    case Variant::kStagedColB: return stage(p, Layout::kColMajor);
    case Variant::kKmajorB: return with_kmajor_b(p);
  }
  return p;
}

std::vector<Variant> variants_for(const Plan& p, const DeviceDesc& dev) {
  std::vector<Variant> out{Variant::kInPlace};
  // A batch runs on its operands as they are (copies of a batch are the entry layer's own).
  if (dev.cc != 90 || p.staged || p.copy_b_kmajor || p.batch > 1) return out;
  if (!is_sixteen_bit(p.precision) && p.precision != Precision::kTF32) return out;
  const int aligned = 16 / element_bytes(p.precision);  // TMA: 16-byte rows
  if (p.a.align < aligned || p.b.align < aligned || p.d.align < aligned) {
    out.push_back(Variant::kStagedRowB);
    out.push_back(Variant::kStagedColB);
  } else if (p.precision == Precision::kTF32 && p.a.layout == Layout::kColMajor && p.k % aligned != 0) {
    // A column-major A beside a row-major B (the weight gradient's "cr"; "cc" with such a K is
    // misaligned and staged above) reaches SM90's TF32 kernels in place (CUTLASS transposes A in
    // registers) only through a K-major copy of B, whose contiguous extent, K, TMA needs a
    // multiple of 4; a token count such as 8191 as K is not, and only the SM80 kernels took it
    // (the H100 sweep's 73 such problems: 0.81x torch.mm, 0.79x from 4096 rows, down to 0.66x).
    // Zero-padded K-major copies of both reach the "rc" kernels.
    out.push_back(Variant::kStagedColB);
  }
  if (p.precision == Precision::kTF32 && p.b.layout == Layout::kRowMajor) out.push_back(Variant::kKmajorB);
  return out;
}

namespace {
// Registers a thread takes beyond its accumulators (see ctas_per_sm).
constexpr int kRegistersBeyondAccumulatorsMma = 96;
constexpr int kRegistersBeyondAccumulatorsSimt = 64;
}  // namespace

int ctas_per_sm(const KernelInfo& k, const DeviceDesc& dev, const Calibration* cal) {
  if (k.persistent) return 1;
  // The figure the device's occupancy calculator gave, where the sweep recorded one.
  if (cal != nullptr && !cal->ctas_per_sm.empty()) {
    const auto it = cal->ctas_per_sm.find(std::string_view(k.name));
    if (it != cal->ctas_per_sm.end() && it->second > 0) return it->second;
  }
  const int threads = std::max(32, k.threads);
  // Threads per SM: 2048 on SM80 and SM90, 1536 on SM86 and SM89.
  const int max_threads = (dev.cc == 86 || dev.cc == 89) ? 1536 : 2048;
  // Registers: each thread holds its share of the accumulator tile (float64 takes two
  // registers) and some more for addresses, fragments and the pipeline, at most 255: 96 more
  // for tensor-core kernels, 64 for CUDA-core ones. ptxas (nvcc 13.0, sm_90 machine code of the
  // CUTLASS 2.x kernels): 64x64x32 tensor-core tiles of 128 threads, 32 accumulators each, take
  // 90-102 registers at 4 stages and 124-128 at 2, 128x128x32 ones 226-255; the 128x128x8 SIMT
  // tile of 256 threads (64 accumulators) 112-130. So the 2-stage 64x64x32 kernels fit 4 CTAs to
  // an SM, not the 5 that 64 more registers gave, and CUTLASS's host code sums their split-K
  // slices serially from 4 waves of slice blocks (46x429x26136 "cc": 48 us at 48 slices, 100 us
  // at 64). The training split's cross-validation (H100 sweep, 2026-11-27), regret geomean
  // (p95), with 64 more for all: 1.0162 (1.095); 80, 96, 128 more for all: 1.0157 (1.094),
  // 1.0155 (1.091), 1.0160 (1.094); 96 for tensor-core kernels and 64 for SIMT (ptxas's
  // figures, kept: the SIMT tiles take their accumulators and 48-66 more): 1.0158 (1.092); 96
  // for the two-stage (register-staged) tensor-core kernels only and 64 for the rest, nearer
  // each kernel's ptxas figure still: 1.0158 (1.095).
  const int acc_words = (k.precision == Precision::kF64 ? 2 : 1) * k.tile_m * k.tile_n / threads;
  const int beyond = k.math == MathClass::kSimt ? kRegistersBeyondAccumulatorsSimt : kRegistersBeyondAccumulatorsMma;
  const int regs = std::min(255, acc_words + beyond);
  const int by_regs = 65536 / (threads * regs);
  // Shared memory: the device's opt-in per block plus the 1 KiB the driver reserves per block
  // is what one SM holds (A100 164 KiB, H100 228 KiB, SM86/89 100 KiB).
  const int smem_per_sm = dev.smem_optin_bytes + 1024;
  const int by_smem = k.smem_bytes > 0 ? smem_per_sm / (k.smem_bytes + 1024) : 32;
  return std::max(1, std::min({max_threads / threads, by_regs, by_smem, 32}));
}

int64_t tile_count(const KernelInfo& k, int64_t m, int64_t n) {
  if (k.tile_m <= 0 || k.tile_n <= 0) return 1;
  return round_up(ceil_div(m, k.tile_m), k.cluster_m) * round_up(ceil_div(n, k.tile_n), k.cluster_n);
}

namespace {

// `kernel` on `plan` (which it accepts): data-parallel, and each other decomposition it
// supports that can pay.
void add_decompositions(std::vector<Candidate>& out, Variant variant, const Plan& plan, const KernelInfo& k,
                        const DeviceDesc& dev, const Calibration* cal) {
  // (CUTLASS 2.x's split-K-sum builds offer split-K alone: their data-parallel launch is the
  // plain kernel's.)
  if (k.supports(Decomposition::kDataParallel)) out.push_back({variant, &k, Decomposition::kDataParallel, 1});
  // A batch's tiles already fill the GPU more often than not; split-K and stream-K of batches
  // are not wired (the slice-summing kernels' batch mode holds the K slices).
  if (plan.batch > 1) return;
  const int64_t tiles = tile_count(k, plan.m, plan.n);
  const int64_t slots = int64_t{std::max(1, dev.sm_count)} * ctas_per_sm(k, dev, cal);
  const int64_t k_tiles = ceil_div(plan.k, std::max(1, k.tile_k));
  if (k.supports(Decomposition::kStreamK)) {
    // CUTLASS 2.x's stream-K kernel balances only a ragged last wave, so it is worth pricing
    // on any problem. CUTLASS 3.x's: under four waves with a ragged last, and at
    // most kMaxStreamKPeers CTAs to a tile: more hand their partial tiles on one after another
    // (measured on an H100, TF32 56x160x15648, two tiles shared by 132 CTAs: 128 us where split-K
    // in 8 slices took 45), and split-K with its explicit slice count covers few tiles.
    const bool ragged = tiles % slots != 0;
    const bool cutlass2x_stream_k = k.origin == Origin::kCutlass2x;
    const int64_t peers = ceil_div(std::min(slots, tiles * k_tiles), tiles);
    if (k_tiles >= 2 && ragged &&
        (cutlass2x_stream_k || (tiles < 4 * slots && peers <= kMaxStreamKPeers))) {
      out.push_back({variant, &k, Decomposition::kStreamK, 1});
    }
  }
  if (!k.supports(Decomposition::kSplitK) || tiles >= slots) return;
  // s slices pay while they fill at most two rounds of the SMs and each keeps two k-tiles.
  const auto fits = [&](int s) { return s * tiles <= 2 * slots && k_tiles >= 2 * s; };
  if (k.slice_sum == SliceSum::kSecondKernel && k.equal_slices) {
    // The slice-summing kernels that cut K into equal 16-byte multiples only are offered every
    // count that does (44136 = 9 x 4904: 3 and 9 slices, where the list below has 3).
    for (int s = 2; s <= kMaxRecordedSplits && fits(s); ++s) {
      if (plan.k % (int64_t{s} * k.align_a) == 0) out.push_back({variant, &k, Decomposition::kSplitK, s});
    }
    return;
  }
  for (const int s : kSplitCounts) {
    if (!fits(s) || (s > kMaxSerialSplits && k.slice_sum == SliceSum::kSerial)) break;
    out.push_back({variant, &k, Decomposition::kSplitK, s});
  }
}

}  // namespace

std::vector<Candidate> enumerate_candidates(const Plan& p, const DeviceDesc& dev, const Calibration* cal) {
  std::vector<Candidate> out;
  if (p.m <= 0 || p.n <= 0 || p.k <= 0) return out;
  // Precisions a call may run at: float32 opted into 3xTF32 may also run IEEE fp32, which is
  // more accurate; 3xTF32 itself only where its error beats torch's (kTf32x3MinK).
  Precision precisions[2] = {p.precision, p.precision};
  int n_precisions = 1;
  if (p.precision == Precision::kTF32x3) precisions[n_precisions++] = Precision::kF32;
  for (const Variant variant : variants_for(p, dev)) {
    const Plan vp = variant_plan(p, variant);
    for (int pi = 0; pi < n_precisions; ++pi) {
      const Precision precision = precisions[pi];
      if (precision == Precision::kTF32x3 && vp.k < kTf32x3MinK) continue;
      Plan pp = vp;
      pp.precision = precision;
      for (const KernelInfo* k : Registry::instance().candidates(precision, vp.a.layout, vp.b.layout)) {
        if (k->role != Role::kProduct) continue;
        if (!variant_serves(variant, *k)) continue;
        if (check_kernel(*k, pp, dev) != Rejection::kNone) continue;
        add_decompositions(out, variant, pp, *k, dev, cal);
      }
    }
  }
  return out;
}

std::vector<Candidate> kernel_candidates(const Plan& p, const KernelInfo& kernel, const DeviceDesc& dev,
                                         const Calibration* cal) {
  std::vector<Candidate> out;
  if (p.m > 0 && p.n > 0 && p.k > 0) add_decompositions(out, Variant::kInPlace, p, kernel, dev, cal);
  return out;
}

Plan candidate_plan(const Plan& p, const Candidate& c) {
  Plan out = variant_plan(p, c.variant);
  // A 3xTF32 call may run on an IEEE fp32 kernel (enumerate_candidates).
  if (is_float32(out.precision) && is_float32(c.kernel->precision)) out.precision = c.kernel->precision;
  out.kernel = c.kernel;
  out.decomposition = c.decomposition;
  out.splits = c.decomposition == Decomposition::kSplitK ? c.splits : 1;
  out.tile_order = {};
  out.tuned = false;
  return out;
}

Candidate candidate_of(const Plan& plan) {
  Candidate c;
  if (plan.staged) {
    c.variant = plan.b.layout == Layout::kRowMajor ? Variant::kStagedRowB : Variant::kStagedColB;
  } else if (plan.copy_b_kmajor) {
    c.variant = Variant::kKmajorB;
  }
  c.kernel = plan.kernel;
  c.decomposition = plan.decomposition;
  c.splits = plan.decomposition == Decomposition::kSplitK ? plan.splits : 1;
  return c;
}

}  // namespace cutlass_ops
