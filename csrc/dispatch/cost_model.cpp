#include "dispatch/cost_model.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string_view>
#include <utility>

namespace cutlass_ops {

namespace {

double ceil_div(double a, double b) { return std::ceil(a / b); }
int64_t ceil_div_i(int64_t a, int64_t b) { return (a + b - 1) / b; }
int64_t round_up(int64_t a, int64_t b) { return ceil_div_i(a, b) * b; }

constexpr double kMB = 1e6;

// The CTAs a persistent CUTLASS 3.x kernel launches on `sm_count` SMs with clusters of
// `cluster` CTAs, as its tile scheduler sizes the grid when the launch names no
// max_active_clusters (cutlass/gemm/kernel/tile_scheduler_params.h, get_max_cta_occupancy): a
// cluster stays within one GPC, taken as 18 SMs (GH100's), so each whole GPC holds its 18 SMs
// rounded down to whole clusters, and the SMs left over beyond whole GPCs the same. On 132 SMs:
// 132 CTAs in clusters of one or two, 116 in clusters of four, 112 in clusters of eight.
int persistent_ctas(int sm_count, int cluster) {
  constexpr int kSmPerGpc = 18;
  if (cluster <= 1) return std::max(1, sm_count);
  const int gpcs = sm_count < kSmPerGpc ? 1 : sm_count / kSmPerGpc;
  const int residual = sm_count < kSmPerGpc ? 0 : sm_count % kSmPerGpc;
  const int ctas = gpcs * (kSmPerGpc - kSmPerGpc % cluster) + (residual - residual % cluster);
  return std::max(cluster, std::min(sm_count, ctas));
}

struct CalibrationStore {
  std::shared_mutex mutex;
  std::vector<std::shared_ptr<const Calibration>> all;
};

CalibrationStore& store() {
  static CalibrationStore s;
  return s;
}

std::atomic<uint64_t> generation{1};

// Peak clock and DRAM bandwidth by compute capability, for devices that report neither (the
// presets explain() plans for): A100, A10/RTX 30, L40S/RTX 40, H100 SXM.
int default_clock_mhz(int cc) {
  switch (cc) {
    case 80: return 1410;
    case 86: return 1695;
    case 89: return 2520;
    case 90: return 1755;
    default: return 1500;
  }
}

int default_dram_gbps(int cc) {
  switch (cc) {
    case 80: return 2039;
    case 86: return 600;
    case 89: return 864;
    case 90: return 3350;
    default: return 1000;
  }
}

// Dense multiply-add throughput of one SM, FLOP per clock, by instruction and precision.
double flop_per_clock_per_sm(const KernelInfo& k, int cc) {
  const bool sixteen = is_sixteen_bit(k.precision);
  const bool hopper = cc >= 90;
  switch (k.math) {
    case MathClass::kWgmma:
      return sixteen ? 4096 : 2048;  // TF32 (and 3xTF32's TF32 parts) at half the 16-bit rate
    case MathClass::kMma:
      if (k.precision == Precision::kF64 || k.precision == Precision::kF32) return hopper ? 256 : 128;  // DMMA
      return sixteen ? 2048 : 1024;
    case MathClass::kSimt:
      // FP32 FMA units (16-bit SIMT converts to float); float64's FMA units are half as many.
      if (k.precision == Precision::kF64) return hopper ? 128 : 64;
      return hopper ? 256 : 128;
  }
  return 128;
}

// The share of its instruction's peak a kernel's main loop sustains on large problems, from its
// pipeline and its operands' copy width. Read off the H100's sweep (bf16, forced kernels, large
// problems): 16-byte cp.async or TMA about 75%; 8-byte cp.async 305 TFLOP/s against 350 for
// 16-byte; 4-byte 204; the register-staged two-stage kernel (element loads) about 100.
double main_loop_efficiency(const KernelInfo& k) {
  constexpr double kPipelined = 0.75;
  switch (k.mainloop) {
    case Mainloop::kRegisterStaged: return kPipelined * 0.3;
    case Mainloop::kBasic: return kPipelined * 0.2;
    case Mainloop::kStreaming: return kPipelined * 0.5;  // few rows: bandwidth, not the MMA, bounds them
    default: break;
  }
  const int copy_bytes = std::min(16, k.align_a * element_bytes(k.precision));
  const double width = copy_bytes >= 16 ? 1.0 : copy_bytes >= 8 ? 0.87 : copy_bytes >= 4 ? 0.58 : 0.3;
  return kPipelined * width;
}

// Bytes of one partial sum, wherever K slices leave them (a streaming kernel's slabs, split-K's
// partial tiles and slices, stream-K's): the kernel's accumulator's.
double partial_bytes(const KernelInfo& k) { return std::max(4, k.accumulator_bytes); }

// K slices a streaming kernel (Mainloop::kStreaming) cuts a problem into: its workspace is one
// M x N slab of partial sums per slice (and matrix of a batch) when it cuts more than one
// (KernelInfo::workspace_bytes).
// The arguments a kernel's plan-time functions (workspace_bytes, k_step) read of a problem.
GemmArgs plan_args(const KernelInfo& k, const Plan& p, const DeviceDesc& dev) {
  GemmArgs g;
  g.m = p.m;
  g.n = p.n;
  g.k = p.k;
  g.batch = std::max<int64_t>(1, p.batch);  // a batch splits K less: its blocks fill more of the GPU
  g.layout_a = k.layout_a;
  g.layout_b = k.layout_b;
  g.sm_count = std::max(1, dev.sm_count);
  return g;
}

double streaming_slices(const KernelInfo& k, const Plan& p, const DeviceDesc& dev) {
  if (k.mainloop != Mainloop::kStreaming || k.workspace_bytes == nullptr || p.m <= 0 || p.n <= 0) return 1;
  const GemmArgs g = plan_args(k, p, dev);
  const double slab_bytes = partial_bytes(k) * static_cast<double>(g.batch) * static_cast<double>(p.m) *
                            static_cast<double>(p.n);
  return std::max(1.0, std::round(static_cast<double>(k.workspace_bytes(g)) / slab_bytes));
}

// The K of one main-loop step on this problem: KernelInfo::k_step where the kernel has one.
int k_step(const KernelInfo& k, const Plan& p, const DeviceDesc& dev) {
  if (k.k_step == nullptr || p.m <= 0 || p.n <= 0) return std::max(1, k.tile_k);
  return std::max(1, k.k_step(plan_args(k, p, dev)));
}

// What CUTLASS 2.x's stream-K kernel launches for a problem of `tiles` output tiles of
// `iters_per_tile` K steps (cutlass/gemm/threadblock/threadblock_swizzle_streamk.h,
// ThreadblockSwizzleStreamK with its split factor 1, balanced over `avail_sms` SMs): its host
// code splits the tiles into whole data-parallel tiles and stream-K blocks that share the rest,
// by its own estimate of the K steps each split saves. The model prices that split, not an
// ideal one: with 39 tiles of 1,791 K steps (bf16 136x808x114600 on 64x64 tiles, two CTAs per
// SM) CUTLASS runs about 132 stream-K blocks of ~560 steps each, not 264 of 265, and measured
// 321 us where an even split over every CTA slot predicted 183.
struct StreamKSplit {
  int64_t dp_tiles = 0;   // tiles computed whole, one CTA each
  int64_t sk_tiles = 0;   // tiles shared by stream-K blocks
  int64_t sk_blocks = 0;  // 0: the kernel runs data-parallel
  int64_t sk_waves = 0;   // waves of stream-K blocks, counted before CUTLASS caps the blocks at the K steps
  bool separate_reduction = false;  // reduction CTAs sum the partial tiles (else they are handed on in turn)
};

// get_sk_blocks: the stream-K block count that saves the most K steps over data-parallel waves
// of `sk_tiles`, and that saving (INT_MIN-like when none was tried).
void cutlass2x_sk_blocks(int64_t sk_tiles, int64_t iters_per_tile, int64_t avail_sms, int64_t max_sk_occupancy,
                         bool allow_partial_wave, int64_t* sk_blocks, int64_t* savings) {
  *savings = std::numeric_limits<int64_t>::min();
  *sk_blocks = 0;
  if (sk_tiles == 0) return;
  constexpr int64_t kMinItersPerSkBlock = 2;
  const int64_t sk_iters = sk_tiles * iters_per_tile;
  const int64_t dp_equiv_iters = iters_per_tile * ceil_div_i(sk_tiles, avail_sms);
  const int64_t min_blocks = allow_partial_wave ? std::min(avail_sms, sk_tiles + 1) : avail_sms;
  const int64_t max_blocks = std::min(avail_sms * max_sk_occupancy, sk_iters / kMinItersPerSkBlock);
  for (int64_t trial = min_blocks; trial <= max_blocks; ++trial) {
    const int64_t sk_waves = ceil_div_i(trial, avail_sms);
    const int64_t iter_equiv = ceil_div_i(sk_iters, trial) * sk_waves;
    int64_t peers = ceil_div_i(trial, sk_tiles) + 1;  // one more for alignment skew
    float iter_cost = 0.02f * static_cast<float>(peers) * static_cast<float>(iter_equiv);
    if (trial % sk_tiles == 0) {  // aligned
      peers = trial / sk_tiles;
      iter_cost = 0.0f;
    }
    const float peer_cost = 2.0f * static_cast<float>(peers);
    const float base_cost = 2.0f * static_cast<float>(sk_waves);
    const int64_t fixup_iter_equiv = static_cast<int64_t>(base_cost + iter_cost + peer_cost);
    const int64_t trial_savings = dp_equiv_iters - iter_equiv - fixup_iter_equiv;
    if (trial_savings >= *savings) {
      *savings = trial_savings;
      *sk_blocks = trial;
    }
  }
}

// ThreadblockSwizzleStreamK's constructor: separate reduction CTAs sum the partial tiles when
// the stream-K blocks leave CTA slots free (fewer waves of them than CTAs per SM) and more than
// two of them meet on a tile; else each block adds its partial into the workspace in turn (the
// kernel's deterministic "turnstile"). With a split factor s every tile is split s ways.
bool cutlass2x_separate_reduction(int64_t sk_waves, int64_t sk_blocks, int64_t sk_tiles, int64_t occupancy) {
  return sk_waves < occupancy && sk_blocks > 2 * sk_tiles;
}

// Whether CUTLASS 2.x's stream-K kernel would remap its block indices (ThreadblockSwizzleStreamK's
// constructor): stream-K blocks, more than one CTA per SM, over two waves of blocks (reduction
// CTAs counted), balanced over the whole device. It then gives hardware blocks 2i and 2i + 1 the
// logical blocks i and i + SMs of the first two waves, expecting each pair on one SM; Hopper
// places consecutive blocks on different SMs, so one wave of over SMs/2 stream-K blocks would run
// two to an SM on half the SMs (on the H200 the DMMA 64x64 tile's stream-K runs took 1.76-1.85x
// their prediction there). Sm80Gemm::make_arguments balances over one SM fewer in that case,
// which CUTLASS never remaps, and the model prices the same (cutlass2x_balanced_split).
bool cutlass2x_remaps(int64_t sk_waves, int64_t dp_blocks, int64_t reduction_blocks, int64_t sms, int64_t occupancy) {
  return sk_waves > 0 && occupancy > 1 && sk_waves * sms + dp_blocks + reduction_blocks > 2 * sms;
}

// ThreadblockSwizzleStreamK::get_blocks and the block counts its constructor derives from them.
StreamKSplit cutlass2x_stream_k_split(int64_t tiles, int64_t iters_per_tile, int64_t avail_sms, int64_t occupancy) {
  StreamKSplit split;
  split.dp_tiles = tiles;
  const int64_t full_waves = tiles / avail_sms, full_wave_tiles = full_waves * avail_sms;
  const int64_t partial_wave_tiles = tiles - full_wave_tiles;
  if (partial_wave_tiles == 0 || avail_sms <= 1) return split;  // whole waves: data-parallel
  int64_t sk_blocks = 0, savings = 0;
  if (full_waves < occupancy) {
    // Under one wave per CTA slot: the partial wave's tiles go to stream-K blocks that fill
    // the free slots.
    split.dp_tiles = full_wave_tiles;
    cutlass2x_sk_blocks(partial_wave_tiles, iters_per_tile, avail_sms, occupancy - full_waves, true, &sk_blocks,
                        &savings);
  } else {
    // The partial wave alone, in the slots the last full wave leaves, where that pays...
    const bool partial_alone = occupancy > 1 && full_waves % occupancy == occupancy - 1;
    if (partial_alone) {
      split.dp_tiles = full_wave_tiles;
      cutlass2x_sk_blocks(partial_wave_tiles, iters_per_tile, avail_sms, 1, true, &sk_blocks, &savings);
    }
    if (!partial_alone || savings < 0) {
      // ...else the last full wave and the partial one shared by a whole wave of blocks.
      split.dp_tiles = full_wave_tiles - avail_sms;
      cutlass2x_sk_blocks(partial_wave_tiles + avail_sms, iters_per_tile, avail_sms,
                          occupancy - ((full_waves - 1) % occupancy), false, &sk_blocks, &savings);
    }
  }
  if (savings < 0 || sk_blocks == 0) {  // not profitable
    split.dp_tiles = tiles;
    return split;
  }
  split.sk_tiles = tiles - split.dp_tiles;
  split.sk_waves = ceil_div_i(sk_blocks, avail_sms);
  split.sk_blocks = std::min(sk_blocks, split.sk_tiles * iters_per_tile);
  split.separate_reduction = cutlass2x_separate_reduction(split.sk_waves, split.sk_blocks, split.sk_tiles, occupancy);
  return split;
}

// The split CUTLASS 2.x's stream-K kernel runs as Sm80Gemm::make_arguments launches it: balanced
// over the device's SMs, or over one fewer where the whole device would make CUTLASS remap its
// block indices (cutlass2x_remaps).
StreamKSplit cutlass2x_balanced_split(int64_t tiles, int64_t iters_per_tile, int64_t device_sms, int64_t occupancy,
                                      int reduction_ctas_per_tile) {
  const StreamKSplit split = cutlass2x_stream_k_split(tiles, iters_per_tile, device_sms, occupancy);
  const int64_t reduction_blocks = split.separate_reduction ? split.sk_tiles * reduction_ctas_per_tile : 0;
  if (device_sms > 2 && cutlass2x_remaps(split.sk_waves, split.dp_tiles, reduction_blocks, device_sms, occupancy)) {
    return cutlass2x_stream_k_split(tiles, iters_per_tile, device_sms - 1, occupancy);
  }
  return split;
}

// CUTLASS 2.x's stream-K kernel with a split factor (every tile's K cut into `slice_blocks /
// tiles` slices): whether reduction CTAs sum the slices, over the SMs the launch balances it.
// That is one SM fewer where CUTLASS would remap its block indices (as in
// cutlass2x_balanced_split), except where one SM fewer would bring the slices to as many waves
// as CTAs per SM, trading the reduction CTAs for summing the slices one after another, the
// remap would only reorder blocks of equal work (two waves of slices or more) and the tiles are
// cut into kReductionCtasFromSlices slices or more: there the launch keeps the whole device
// (Sm80Gemm::initialize_balanced). bf16 1376x8x2464 "cc" split 24, 528 slices of a 5-CTA/SM
// tile, is 4 waves over 132 SMs and 5 over 131 (H200: 15.2 us against 35.6).
bool cutlass2x_slices_reduced_apart(int64_t slice_blocks, int64_t tiles, int64_t device_sms, int64_t occupancy,
                                    int reduction_ctas_per_tile) {
  auto separate = [&](int64_t sms) {
    return cutlass2x_separate_reduction(ceil_div_i(slice_blocks, sms), slice_blocks, tiles, occupancy);
  };
  const bool whole = separate(device_sms);
  const int64_t reduction_blocks = whole ? tiles * reduction_ctas_per_tile : 0;
  const bool remaps =
      device_sms > 2 && cutlass2x_remaps(ceil_div_i(slice_blocks, device_sms), 0, reduction_blocks, device_sms, occupancy);
  if (!remaps) return whole;
  const bool keeps_device =
      slice_blocks >= 2 * device_sms && slice_blocks >= kReductionCtasFromSlices * std::max<int64_t>(1, tiles);
  return separate(device_sms - 1) || (whole && keeps_device);
}

}  // namespace

namespace {

// How far a calibration's device is from `device`, nearest first: the SM counts' difference,
// then the DRAM bandwidths' ratio (as a log; 0 where either is not known).
std::pair<int, double> device_distance(const Calibration& c, const DeviceDesc& device) {
  const double bandwidth = c.dram_gbps > 0 && device.dram_gbps > 0
                               ? std::abs(std::log(static_cast<double>(c.dram_gbps) / device.dram_gbps))
                               : 0.0;
  return {std::abs(c.sm_count - device.sm_count), bandwidth};
}

}  // namespace

const Calibration* calibration_for(const DeviceDesc& device) {
  CalibrationStore& s = store();
  std::shared_lock lock(s.mutex);
  // At equal distance (a device that records no bandwidth, between two calibrations that do)
  // the one added last wins.
  const Calibration* nearest = nullptr;
  std::pair<int, double> nearest_distance;
  for (const auto& c : s.all) {
    if (c->cc != device.cc) continue;
    const std::pair<int, double> distance = device_distance(*c, device);
    if (nearest == nullptr || distance <= nearest_distance) {
      nearest = c.get();
      nearest_distance = distance;
    }
  }
  return nearest;
}

void add_calibration(Calibration calibration) {
  CalibrationStore& s = store();
  {
    std::unique_lock lock(s.mutex);
    // Calibrations are never freed while the process runs: plans in flight keep pointers into
    // one (explain, the plan cache). A replaced one stays allocated, unlisted.
    static std::vector<std::shared_ptr<const Calibration>> retired;
    for (auto it = s.all.begin(); it != s.all.end();) {
      // The same device class: one that records no bandwidth stands for every bandwidth.
      const bool same_bandwidth = (*it)->dram_gbps == calibration.dram_gbps || (*it)->dram_gbps == 0 ||
                                  calibration.dram_gbps == 0;
      if ((*it)->cc == calibration.cc && (*it)->sm_count == calibration.sm_count && same_bandwidth) {
        retired.push_back(*it);
        it = s.all.erase(it);
      } else {
        ++it;
      }
    }
    s.all.push_back(std::make_shared<const Calibration>(std::move(calibration)));
  }
  bump_dispatch_generation();
}

void clear_calibrations() {
  CalibrationStore& s = store();
  {
    std::unique_lock lock(s.mutex);
    static std::vector<std::shared_ptr<const Calibration>> retired;
    retired.insert(retired.end(), s.all.begin(), s.all.end());
    s.all.clear();
  }
  bump_dispatch_generation();
}

uint64_t dispatch_generation() { return generation.load(std::memory_order_acquire); }
void bump_dispatch_generation() { generation.fetch_add(1, std::memory_order_acq_rel); }

Features features(const Plan& p, const KernelInfo& k, const DeviceDesc& dev, const Calibration* cal) {
  Features f{};
  f[kFeatLaunch] = 1;  // the kernel's own launch
  const int64_t m = p.m, n = p.n;
  // 3xTF32's presplit GEMM runs over the three TF32 parts side by side: 3K, K rounded up to 4.
  const int64_t depth = k.pass == OperandPass::kPresplit ? 3 * round_up(p.k, 4) : p.k;
  const int tm = std::max(1, k.tile_m), tn = std::max(1, k.tile_n), tk = k_step(k, p, dev);
  const int cm = std::max(1, k.cluster_m), cn = std::max(1, k.cluster_n);
  // A batch's tiles are one grid (the batch is the grid's third dimension).
  const double batch = static_cast<double>(std::max<int64_t>(1, p.batch));
  const double tiles =
      batch * static_cast<double>(round_up(ceil_div_i(m, tm), cm) * round_up(ceil_div_i(n, tn), cn));
  const int cluster = cm * cn;
  const int ctas = ctas_per_sm(k, dev, cal);
  const double slots = k.persistent ? persistent_ctas(dev.sm_count, cluster)
                                    : static_cast<double>(std::max(1, dev.sm_count)) * ctas;
  const double k_tiles = ceil_div(static_cast<double>(depth), tk);
  const double tile_bytes = partial_bytes(k) * tm * tn;  // a partial tile
  switch (p.decomposition) {
    case Decomposition::kDataParallel: {
      // The streaming kernels split K themselves until their grid fills the GPU, and a second
      // kernel sums the slabs (gemm_skinny_m*.cu plan_split); their workspace holds one M x N
      // slab per slice, so the kernel's own workspace_bytes says how many it cuts.
      const double slices = streaming_slices(k, p, dev);
      const double rounds = ceil_div(tiles * slices, slots);
      f[kFeatTileRounds] = rounds;
      f[kFeatCriticalIters] = rounds * k_tiles / slices;
      if (slices > 1) {
        f[kFeatFixupMB] = 2.0 * partial_bytes(k) * slices * batch * static_cast<double>(m) * n / kMB;
        f[kFeatLaunch] = 2;  // the slab-summing kernel
      }
      break;
    }
    case Decomposition::kSplitK: {
      const double s = std::max(1, p.splits);
      const double rounds = ceil_div(tiles * s, slots);
      f[kFeatTileRounds] = rounds;
      f[kFeatCriticalIters] = rounds * ceil_div(k_tiles, s);
      if (k.slice_sum == SliceSum::kSecondKernel) {
        // Slice summing: every slice writes a partial D that a second kernel sums, all at once.
        f[kFeatFixupMB] = 2.0 * partial_bytes(k) * s * static_cast<double>(m) * n / kMB;
        break;
      }
      if (k.slice_sum == SliceSum::kLastSlice) {
        // Every slice but the last writes its partial tile and the last reads them back, through
        // its one SM, after its own main loop: s - 1 partial tiles. The arrival counts are zeroed
        // before the launch (a second launch on the stream).
        f[kFeatFixupMB] = 2.0 * (s - 1) * tiles * tile_bytes / kMB;
        f[kFeatChain] = 1;
        f[kFeatReductionReads] = s - 1;
        f[kFeatLaunch] = 2;
        break;
      }
      // Every partial tile but one per tile is written and read back. Serial split-K: the
      // slices take turns to add theirs, a chain of s - 1. CUTLASS 2.x's stream-K kernel with a
      // split factor runs the slices at once, summed as its stream-K blocks are: handed on in
      // turn, or by a separate reduction CTA per tile that reads the tile's s partials.
      bool separate_reduction = false;
      if (k.slice_sum == SliceSum::kStreamKWorkspace) {
        separate_reduction = cutlass2x_slices_reduced_apart(static_cast<int64_t>(tiles * s), static_cast<int64_t>(tiles),
                                                            std::max(1, dev.sm_count), ctas, k.reduction_ctas_per_tile);
      }
      f[kFeatFixupMB] = 2.0 * (s - 1) * tiles * tile_bytes / kMB;
      f[kFeatChain] = separate_reduction ? 1 : s - 1;
      f[kFeatReductionReads] = separate_reduction ? s : 0;
      break;
    }
    case Decomposition::kStreamK: {
      if (k.origin == Origin::kCutlass2x) {
        // CUTLASS 2.x: the split its host code chooses (cutlass2x_stream_k_split), over the SMs
        // the launch balances it (cutlass2x_balanced_split). The stream-K blocks are launched
        // first, the data-parallel tiles fill the CTA slots left and the rounds after.
        const StreamKSplit split =
            cutlass2x_balanced_split(static_cast<int64_t>(tiles), static_cast<int64_t>(k_tiles),
                                     std::max(1, dev.sm_count), ctas, k.reduction_ctas_per_tile);
        const double blocks = static_cast<double>(split.sk_blocks + split.dp_tiles);
        const double rounds = ceil_div(blocks, slots);
        const double sk_iters = ceil_div(static_cast<double>(split.sk_tiles) * k_tiles,
                                         static_cast<double>(std::max<int64_t>(1, split.sk_blocks)));
        const double first_round = std::max(split.sk_blocks > 0 ? sk_iters : 0.0, split.dp_tiles > 0 ? k_tiles : 0.0);
        f[kFeatCriticalIters] = first_round + (rounds - 1) * k_tiles;
        f[kFeatTileRounds] = rounds + (split.sk_blocks > 0 ? 1 : 0);
        f[kFeatFixupMB] = 2.0 * split.sk_blocks * tile_bytes / kMB;
        const double peers = split.sk_blocks == 0 ? 0
                             : ceil_div(static_cast<double>(split.sk_blocks), static_cast<double>(split.sk_tiles));
        f[kFeatChain] = split.separate_reduction ? 1 : std::max(0.0, peers - 1);  // 0 without stream-K blocks
        f[kFeatReductionReads] = split.separate_reduction ? peers : 0;
        break;
      }
      // CUTLASS 3.x's persistent stream-K scheduler: the tiles' K iterations dealt evenly over
      // the CTAs that take part (all of them, or one per K iteration when there are fewer);
      // each CTA finishes about one more tile than whole tiles would give it; the CTAs sharing
      // a tile hand their partial tiles on in turn.
      const double total = tiles * k_tiles;
      const double units = std::min(slots, total);
      f[kFeatTileRounds] = ceil_div(tiles, units) + 1;
      f[kFeatCriticalIters] = ceil_div(total, units);
      f[kFeatFixupMB] = 2.0 * units * tile_bytes / kMB;
      f[kFeatChain] = std::max(0.0, ceil_div(units, tiles) - 1);
      break;
    }
  }
  const double eb = element_bytes(p.precision);
  // An operand shared by the whole batch (batch stride 0) is read once.
  const double batch_a = p.a.batch_stride == 0 ? 1.0 : batch, batch_b = p.b.batch_stride == 0 ? 1.0 : batch;
  const double a = batch_a * m * p.k, b = batch_b * p.k * n, d = batch * m * n;
  f[kFeatReadMB] = eb * (a + b) / kMB;
  f[kFeatWriteMB] = eb * d / kMB;
  // Each CTA tile streams its A row slab and its B column slab over the whole (padded) K; a
  // cluster multicasts A across its CTAs along N and B across those along M.
  const double l2_a = tiles * k_tiles * tk * eb * static_cast<double>(tm) / cn / kMB;
  const double l2_b = tiles * k_tiles * tk * eb * static_cast<double>(tn) / cm / kMB;
  f[kFeatL2MB] = l2_a + l2_b;
  // The hand-written TMA kernel's loads from operands whose rows straddle 128-byte lines. Counted
  // for it alone: cross-validation 1.0152 -> 1.0148 (H100 sweep, 2026-11-27), the test split no
  // worse anywhere. For every TMA kernel, or CUTLASS's ping-pong ones too, the test split's TF32
  // problems or the batched rows lost (docs/findings.md, "A tenth term").
  if (k.math == MathClass::kWgmma && k.origin == Origin::kHandwritten) {
    const auto ragged = [&](const OperandPlan& o) { return std::fmod(static_cast<double>(o.ld) * eb, 128.0) != 0.0; };
    f[kFeatRaggedPitchL2MB] = (ragged(p.a) ? l2_a : 0.0) + (ragged(p.b) ? l2_b : 0.0);
  }
  if (k.pass == OperandPass::kPresplit) {
    f[kFeatPassMB] = (4.0 * (a + b) + 4.0 * 3.0 * (static_cast<double>(m) + n) * round_up(p.k, 4)) / kMB;
  }
  return f;
}

Coefficients property_coefficients(const KernelInfo& k, const DeviceDesc& dev, const Calibration* cal) {
  const double clock_hz = 1e6 * (dev.clock_mhz > 0 ? dev.clock_mhz : default_clock_mhz(dev.cc));
  const double dram_bps = 1e9 * (dev.dram_gbps > 0 ? dev.dram_gbps : default_dram_gbps(dev.cc));
  const double per_sm_flops = flop_per_clock_per_sm(k, dev.cc) * clock_hz * main_loop_efficiency(k);
  const double ctas = ctas_per_sm(k, dev, cal);
  Coefficients c{};
  c[kFeatLaunch] = 4.0;  // launch, and the prologue of a TMA kernel (descriptors, barriers)
  const double us_per_dram_mb = kMB / dram_bps * 1e6;
  // An epilogue writes its tile at the SM's share of the bandwidth, after a pipeline fill.
  c[kFeatTileRounds] = 0.5 + ctas * k.tile_m * k.tile_n * element_bytes(k.precision) / kMB * us_per_dram_mb *
                                 std::max(1, dev.sm_count);
  c[kFeatFixupMB] = us_per_dram_mb;
  c[kFeatPassMB] = us_per_dram_mb;
  c[kFeatCriticalIters] = 1e6 * ctas * 2.0 * k.tile_m * k.tile_n * k.tile_k / per_sm_flops;
  c[kFeatReadMB] = us_per_dram_mb;
  c[kFeatWriteMB] = us_per_dram_mb;
  c[kFeatL2MB] = us_per_dram_mb / 3.0;  // L2 serves about three times the DRAM bandwidth
  // A partial tile handed on: written and read at the SM's share of the bandwidth, plus a flag.
  c[kFeatChain] = 0.5 + 2.0 * 4.0 * k.tile_m * k.tile_n / kMB * us_per_dram_mb * std::max(1, dev.sm_count);
  // A partial tile a reduction CTA reads, at the SM's share of the bandwidth.
  c[kFeatReductionReads] = 4.0 * k.tile_m * k.tile_n / kMB * us_per_dram_mb * std::max(1, dev.sm_count);
  return c;
}

double kernel_time_us(const Features& f, const Coefficients& c) {
  const double compute = c[kFeatCriticalIters] * f[kFeatCriticalIters];
  const double memory = c[kFeatReadMB] * f[kFeatReadMB] + c[kFeatL2MB] * f[kFeatL2MB] +
                        c[kFeatWriteMB] * f[kFeatWriteMB] + c[kFeatRaggedPitchL2MB] * f[kFeatRaggedPitchL2MB];
  const double overlap = std::pow(std::pow(compute, kSmoothMaxPower) + std::pow(memory, kSmoothMaxPower),
                                  1.0 / kSmoothMaxPower);
  return c[kFeatLaunch] * f[kFeatLaunch] + c[kFeatTileRounds] * f[kFeatTileRounds] +
         c[kFeatFixupMB] * f[kFeatFixupMB] + c[kFeatPassMB] * f[kFeatPassMB] + c[kFeatChain] * f[kFeatChain] +
         c[kFeatReductionReads] * f[kFeatReductionReads] + overlap;
}

CopyWork copy_work(const Plan& normalized, Variant variant) {
  CopyWork w;
  if (variant == Variant::kInPlace) return w;
  const Plan s = variant_plan(normalized, variant);
  const double eb = element_bytes(normalized.precision);
  if (variant == Variant::kKmajorB) {
    w.transpose_mb = 2.0 * eb * static_cast<double>(s.k) * s.n / kMB;  // B read and written once
    w.launches = 1;
    return w;
  }
  // Staged: A and B read and written once into padded buffers (with their margins zeroed), the
  // padded result written by the kernel and copied out (ops/pad_copy.h). A copy into the other
  // layout (a column-major A into row-major, B into the layout the variant names) is a
  // transpose, at the transposing rate, and runs on another kernel than a straight copy: A's
  // and B's copies share a launch where both transpose or neither does, else take one each.
  // Counting two launches for every staged variant, the model took the transposing variant
  // where the straight one ran 1.2x faster (H200 test split, bf16 2192x125x1390 "rr", f16
  // 1166x270x949 "rr"); counted apart, cross-validation 1.0127 (p95 1.083) -> 1.0124 (1.081)
  // and test split 1.030x -> 1.031x torch.mm, p95 1.080 -> 1.078 (H200 sweep, 2026-11-30).
  const double a_mb = 2.0 * eb * static_cast<double>(s.m) * s.k / kMB;
  const double b_mb = 2.0 * eb * static_cast<double>(s.k) * s.n / kMB;
  const double d_mb = 2.0 * eb * static_cast<double>(s.m) * s.n / kMB;
  const bool a_transposed = normalized.a.layout != s.a.layout, b_transposed = normalized.b.layout != s.b.layout;
  (a_transposed ? w.transpose_mb : w.padded_mb) += a_mb;
  (b_transposed ? w.transpose_mb : w.padded_mb) += b_mb;
  w.padded_mb += d_mb;
  w.launches = a_transposed == b_transposed ? 2 : 3;
  return w;
}

double copy_time_us(const CopyWork& w, const CopyCosts& c) {
  return c.us_per_mb * w.padded_mb + c.transpose_us_per_mb * w.transpose_mb + c.launch_us * w.launches;
}

double epilogue_pass_us(const Plan& normalized, const CopyCosts& c) {
  // D read and written once (the bias is N elements): priced like a copy of D, plus its launch.
  const double d_mb = static_cast<double>(normalized.batch) * normalized.m * normalized.n *
                      element_bytes(normalized.precision) / 1e6;
  return c.us_per_mb * d_mb + c.launch_us;
}

std::string calibration_name(const KernelInfo& k) {
  // A fused-epilogue build (name "<plain name>_bias_act") runs its config's main loop: it is
  // priced by the plain build's constants and residuals.
  std::string name = k.name;
  static constexpr std::string_view kSuffix = "_bias_act";
  if (k.fuses_epilogue && name.size() > kSuffix.size() &&
      std::string_view(name).substr(name.size() - kSuffix.size()) == kSuffix) {
    name.resize(name.size() - kSuffix.size());
  }
  return name;
}

ResidualField::ResidualField(std::vector<Point> points, double bandwidth)
    : bandwidth_(bandwidth), cell_size_(std::max(3.0 * bandwidth, 18.0 / kCells)) {
  auto cell_index = [&](const Point& p) {
    return (cell_of(p.x[0]) * kCells + cell_of(p.x[1])) * kCells + cell_of(p.x[2]);
  };
  std::stable_sort(points.begin(), points.end(),
                   [&](const Point& a, const Point& b) { return cell_index(a) < cell_index(b); });
  begin_.assign(kCells * kCells * kCells + 1, 0);
  for (const Point& p : points) ++begin_[cell_index(p) + 1];
  for (size_t i = 1; i < begin_.size(); ++i) begin_[i] += begin_[i - 1];
  points_ = std::move(points);
  // A shrunk weighted mean of residuals is never below the least of them, nor below 0.
  least_.assign(kCells * kCells * kCells, 0.0f);
  for (int cell = 0; cell < kCells * kCells * kCells; ++cell) {
    for (uint32_t p = begin_[cell]; p < begin_[cell + 1]; ++p) least_[cell] = std::min(least_[cell], points_[p].r);
  }
}

template <class Visit>
void ResidualField::for_each_near_cell(const std::array<double, 4>& x, Visit visit) const {
  const int c0 = cell_of(x[0]), c1 = cell_of(x[1]), c2 = cell_of(x[2]);
  for (int i = std::max(0, c0 - 1); i <= std::min(kCells - 1, c0 + 1); ++i) {
    for (int j = std::max(0, c1 - 1); j <= std::min(kCells - 1, c1 + 1); ++j) {
      for (int l = std::max(0, c2 - 1); l <= std::min(kCells - 1, c2 + 1); ++l) visit((i * kCells + j) * kCells + l);
    }
  }
}

int ResidualField::cell_of(double log2_extent) const {
  return std::clamp(static_cast<int>(log2_extent / cell_size_), 0, kCells - 1);
}

double ResidualField::correction(const std::array<double, 4>& x, int layouts, double shrink,
                                 double layout_distance) const {
  const double inv = 1.0 / (2.0 * bandwidth_ * bandwidth_);
  const double reach = 9.0 * bandwidth_ * bandwidth_;  // three bandwidths, squared
  double sum_w = 0, sum_wr = 0;
  for_each_near_cell(x, [&](int cell) {
    for (uint32_t p = begin_[cell]; p < begin_[cell + 1]; ++p) {
      const Point& q = points_[p];
      double d2 = 0;
      for (int a = 0; a < 4; ++a) d2 += (q.x[a] - x[a]) * (q.x[a] - x[a]);
      if (q.layouts != layouts) d2 += layout_distance;
      if (d2 > reach) continue;
      const double w = std::exp(-d2 * inv);
      sum_w += w;
      sum_wr += w * q.r;
    }
  });
  // No point within reach and no shrinkage: no correction (not 0 / 0).
  return sum_w + shrink > 0 ? sum_wr / (sum_w + shrink) : 0.0;
}

double ResidualField::least_correction(const std::array<double, 4>& x) const {
  float least = 0;
  for_each_near_cell(x, [&](int cell) { least = std::min(least, least_[cell]); });
  return least;
}

namespace {

const ResidualField* residual_field(const Calibration* cal, const Plan& normalized, const Candidate& c) {
  if (cal == nullptr) return nullptr;
  const auto it = cal->residuals.find(calibration_name(*c.kernel));
  if (it == cal->residuals.end()) return nullptr;
  const int slot = normalized.batch > 1 ? kBatchedResidualSlot : residual_slot(c.variant, c.decomposition);
  return it->second[slot].get();
}

// (log2 M, N, K, log2 slices) of one matrix; a batch (data-parallel only, one slice, read from its
// own residual field) has log2 of its count in the fourth place.
std::array<double, 4> residual_coordinates(const Plan& normalized, const Candidate& c) {
  const int64_t fourth = normalized.batch > 1 ? normalized.batch : std::max(1, c.splits);
  return {std::log2(std::max<int64_t>(1, normalized.m)), std::log2(std::max<int64_t>(1, normalized.n)),
          std::log2(std::max<int64_t>(1, normalized.k)), std::log2(static_cast<double>(fourth))};
}

void apply_residual(const Plan& normalized, const Candidate& c, const Calibration* cal, const ResidualField* field,
                    Prediction& out) {
  if (field == nullptr) return;
  const std::array<double, 4> x = residual_coordinates(normalized, c);
  out.residual =
      std::exp(field->correction(x, layout_index(*c.kernel),
                                 normalized.batch > 1 ? cal->batched_shrink : cal->residual_shrink,
                                 cal->residual_layout_distance));
  out.us *= out.residual;
}

}  // namespace

PlainCost plain_cost(const Plan& normalized, const Candidate& c, const DeviceDesc& device, const Calibration* cal) {
  PlainCost cost;
  Prediction& out = cost.prediction;
  // The fitted constants where the calibration has them, else the device's peak rates'.
  const Coefficients* fitted = nullptr;
  bool own = false;
  if (cal != nullptr) {
    const auto it = cal->kernels.find(calibration_name(*c.kernel));
    if (it != cal->kernels.end()) {
      fitted = it->second.find(c.decomposition);
      own = it->second.measured(c.decomposition, c.splits);
    }
  }
  // A decomposition without constants of its own (one the sweep has not timed, such as one a
  // kernel gained after it, until `sweep --add-kernels`, or timed on too few training problems
  // for fit's min_samples) is priced with the data-parallel ones but counts as unmeasured: it
  // ranks after the measured candidates (cost_model.h). So does a split-K slice count the sweep
  // never timed: it is priced with the decomposition's constants.
  out.calibrated = own;
  cost.features = features(candidate_plan(normalized, c), *c.kernel, device, cal);
  out.kernel_us =
      kernel_time_us(cost.features, fitted != nullptr ? *fitted : property_coefficients(*c.kernel, device, cal));
  const CopyCosts& copies = cal != nullptr ? cal->copies : CopyCosts{};
  cost.copies = copy_work(normalized, c.variant);
  out.copy_us = copy_time_us(cost.copies, copies);
  if (normalized.epilogue && !c.kernel->fuses_epilogue) out.copy_us += epilogue_pass_us(normalized, copies);
  out.us = out.kernel_us + out.copy_us;
  return cost;
}

Prediction predict(const Plan& normalized, const Candidate& c, const DeviceDesc& device, const Calibration* cal) {
  Prediction out = plain_cost(normalized, c, device, cal).prediction;
  apply_residual(normalized, c, cal, residual_field(cal, normalized, c), out);
  return out;
}

Prediction predict(const Plan& normalized, const Candidate& c, const DeviceDesc& device) {
  return predict(normalized, c, device, calibration_for(device));
}

namespace {

// Where the device's calibration measured some of a problem's candidates, the ones it never
// measured follow them all (cost_model.h: a kernel joins dispatch once a sweep has timed it):
// a candidate is in the first group if it was measured, or if none was.
bool in_first_group(const Prediction& p, bool any_measured) { return p.calibrated || !any_measured; }

}  // namespace

std::vector<Ranked> rank_candidates(const Plan& normalized, const DeviceDesc& device) {
  const Calibration* cal = calibration_for(device);
  std::vector<Ranked> ranked;
  bool any_measured = false;
  for (const Candidate& c : enumerate_candidates(normalized, device, cal)) {
    ranked.push_back({c, predict(normalized, c, device, cal)});
    any_measured = any_measured || ranked.back().prediction.calibrated;
  }
  std::stable_sort(ranked.begin(), ranked.end(), [any_measured](const Ranked& x, const Ranked& y) {
    const bool x_first = in_first_group(x.prediction, any_measured), y_first = in_first_group(y.prediction, any_measured);
    if (x_first != y_first) return x_first;
    return x.prediction.us < y.prediction.us;
  });
  return ranked;
}

std::optional<Ranked> cheapest_candidate(const Plan& normalized, const DeviceDesc& device) {
  const Calibration* cal = calibration_for(device);
  struct Entry {
    size_t index;  // enumeration order, for ties
    Ranked ranked;
    const ResidualField* field;
    double bound;  // the least its prediction can become
  };
  std::vector<Entry> entries;
  const std::vector<Candidate> candidates = enumerate_candidates(normalized, device, cal);
  bool any_measured = false;
  for (size_t i = 0; i < candidates.size(); ++i) {
    entries.push_back({i, {candidates[i], plain_cost(normalized, candidates[i], device, cal).prediction}, nullptr, 0});
    any_measured = any_measured || entries.back().ranked.prediction.calibrated;
  }
  // Only the first group is in the running (rank_candidates puts it first); then each one's bound.
  entries.erase(std::remove_if(entries.begin(), entries.end(),
                               [any_measured](const Entry& e) { return !in_first_group(e.ranked.prediction, any_measured); }),
                entries.end());
  for (Entry& e : entries) {
    e.field = residual_field(cal, normalized, e.ranked.candidate);
    const double least =
        e.field == nullptr ? 0.0 : e.field->least_correction(residual_coordinates(normalized, e.ranked.candidate));
    e.bound = e.ranked.prediction.us * std::exp(least);
  }
  std::sort(entries.begin(), entries.end(), [](const Entry& x, const Entry& y) {
    return x.bound < y.bound || (x.bound == y.bound && x.index < y.index);
  });
  const Entry* best = nullptr;
  for (Entry& e : entries) {
    if (best != nullptr && e.bound > best->ranked.prediction.us) break;  // neither it nor any after can win
    apply_residual(normalized, e.ranked.candidate, cal, e.field, e.ranked.prediction);
    const double us = e.ranked.prediction.us;
    if (best == nullptr || us < best->ranked.prediction.us || (us == best->ranked.prediction.us && e.index < best->index)) {
      best = &e;
    }
  }
  if (best == nullptr) return std::nullopt;
  return best->ranked;
}

}  // namespace cutlass_ops
