// One registered kernel, and how kernel modules hand their kernels to the dispatcher.
//
// Kernels live in their own extension modules (cutlass_ops._C_sm90, cutlass_ops._C_sm80,
// ...), because each arch family needs its own nvcc -gencode flags. Each kernel
// translation unit adds a KernelInfo to its module's list with a static KernelRegistrar;
// the module exports the list as a KernelTable inside a PyCapsule; cutlass_ops/__init__.py
// passes that capsule to the entry module (_C), whose Registry is the single list that
// dispatch, list_kernels(), kernel=, the tests and the benchmarks all read.
//
// Everything that crosses the module boundary is plain data and function pointers, and
// carries kKernelAbiVersion so a stale module is refused instead of misread.
#pragma once

#include <climits>
#include <cstdint>
#include <cstddef>
#include <vector>

#include "dispatch/configs.h"
#include "dispatch/types.h"

namespace cutlass_ops {

inline constexpr int kKernelAbiVersion = 18;
inline constexpr const char* kKernelTableCapsuleName = "cutlass_ops.KernelTable";

// Where a kernel's code comes from.
enum class Origin : int8_t {
  kCutlass3x = 0,    // CUTLASS 3.x collective builder (SM90: TMA or cp.async + WGMMA, warp-specialized)
  kCutlass2x = 1,    // CUTLASS 2.x device-level GEMM (SM80-class multistage or pipelined)
  kHandwritten = 2,  // csrc/handwritten: written from scratch for this project
};

inline constexpr const char* origin_name(Origin o) {
  switch (o) {
    case Origin::kCutlass3x: return "cutlass3x";
    case Origin::kCutlass2x: return "cutlass2x";
    case Origin::kHandwritten: return "handwritten";
  }
  return "?";
}

// What automatic dispatch may do with a kernel. Teaching kernels (the steps of the
// hand-written ladder that no problem needs) run only when forced with kernel=.
enum class Role : int8_t { kProduct = 0, kTeaching = 1 };

// The instruction that does the multiply-adds.
enum class MathClass : int8_t {
  kWgmma = 0,  // SM90 warpgroup MMA (asynchronous, operands from shared memory)
  kMma = 1,    // mma.sync / wmma tensor-core MMA, DMMA for float64 (SM80 and newer)
  kSimt = 2,   // CUDA-core fused multiply-add
};

inline constexpr const char* math_class_name(MathClass m) {
  switch (m) {
    case MathClass::kWgmma: return "wgmma";
    case MathClass::kMma: return "mma";
    case MathClass::kSimt: return "simt";
  }
  return "?";
}

// How the main loop brings operand tiles into shared memory.
enum class Mainloop : int8_t {
  kTmaWarpSpecialized = 0,  // a TMA producer warp feeds consumer warpgroups through a stage ring
  kCpAsyncMultistage = 1,   // every thread issues cp.async copies into a ring of `stages` tiles
  kRegisterStaged = 2,      // two stages, each thread loading the next tile through registers
  kStreaming = 3,           // few-row kernels that stream B through once (hand-written)
  kBasic = 4,               // teaching steps: plain loads, no pipeline
  // SM90: producer warps copy the operands with cp.async (any alignment of the copy's width) into
  // a stage ring that WGMMA consumer warpgroups read; D stored from registers
  kCpAsyncWarpSpecialized = 5,
};

inline constexpr const char* mainloop_name(Mainloop m) {
  switch (m) {
    case Mainloop::kTmaWarpSpecialized: return "tma-warp-specialized";
    case Mainloop::kCpAsyncMultistage: return "cp-async-multistage";
    case Mainloop::kRegisterStaged: return "register-staged";
    case Mainloop::kStreaming: return "streaming";
    case Mainloop::kBasic: return "basic";
    case Mainloop::kCpAsyncWarpSpecialized: return "cp-async-warp-specialized";
  }
  return "?";
}

// Work a kernel does on the operands before its GEMM, inside its own launch sequence.
enum class OperandPass : int8_t {
  kNone = 0,
  kPresplit = 1,  // 3xTF32: each operand split into big and small TF32 parts (3 (M + N) K floats)
};

// How a kernel's split-K (Decomposition::kSplitK) sums the partial products of a tile's K slices.
enum class SliceSum : int8_t {
  // CUTLASS's serial split-K: the slices take turns to add theirs into D, so a slice waits its
  // turn at the tile, and past 16 slices that wait dominates (candidates.cpp, kMaxSerialSplits).
  kSerial = 0,
  // The K slices run at once, each writing its partial D to a workspace, then a second kernel
  // sums them in slice order (common/slice_sum.cuh): no serial fix-up between slices. CUTLASS
  // 3.x's runs the slices as a batch of equal ones (cutlass3x/sm90_splitk_sum.cuh,
  // KernelInfo::equal_slices), CUTLASS 2.x's in its parallel split-K mode, the last slice shorter
  // (cutlass2x/sm80_splitk_sum.cuh).
  kSecondKernel = 1,
  // CUTLASS 2.x's stream-K kernel with its split factor, for a kernel whose D is narrower than its
  // accumulator (16-bit): serial split-K would meet the K slices in D and round each partial sum
  // to D's type; here all slices run at once and one CTA per tile sums their partial tiles in its
  // workspace, in the accumulator's type. Such kernels offer stream-K too.
  kStreamKWorkspace = 2,
  // The slices at once where the grid holds them: every slice but the last writes its float32
  // partial tile to the workspace and counts itself in at the tile; the last K slice waits for
  // the count, adds the others' partials to its own in slice order (the same sum on every run)
  // and stores D. One wait per tile, no chain of turns (the hand-written TMA kernel,
  // handwritten/gemm_6_wgmma_tma_sm90.cu, LastSlice).
  kLastSlice = 3,
};

inline constexpr const char* slice_sum_name(SliceSum s) {
  switch (s) {
    case SliceSum::kSerial: return "serial";
    case SliceSum::kSecondKernel: return "second-kernel";
    case SliceSum::kStreamKWorkspace: return "stream-k-workspace";
    case SliceSum::kLastSlice: return "last-slice";
  }
  return "?";
}

// Whether split-K's slices meet in float32 (a workspace) rather than in D's type: any slice
// count then keeps the result's rounding to one.
inline constexpr bool slices_meet_in_float32(SliceSum s) {
  return s == SliceSum::kStreamKWorkspace || s == SliceSum::kLastSlice;
}

// SliceSum::kStreamKWorkspace where CUTLASS would remap its block indices, and where balancing
// over one SM fewer (which it never remaps) would bring the slices to as many waves as CTAs per
// SM, so that CUTLASS drops its reduction CTAs and sums each tile's slices in turn: from this
// many slices per tile the launch keeps the whole device, remapped, and its reduction CTAs
// (Sm80Gemm::initialize_balanced; cost_model.cpp, cutlass2x_slices_reduced_apart). H200, bf16
// and f16 on the 64x64x32 tiles, 33 such split-K launches timed both ways (2026-12-03): from 16
// slices the whole device ran 1.04-3.5x faster (664x8x3800 "rr" split 48: 61.0 us in turn,
// 17.6 with reduction CTAs), at 3-12 mostly slower, by up to 1.33x (384x648x66840 "cc" split 6:
// 601 us in turn, 772 with reduction CTAs, whose CTAs wait in slots beside the slices).
inline constexpr int kReductionCtasFromSlices = 16;

struct KernelInfo {
  // ---- identity (for people: names are never compared to decide anything) ----
  const char* name = nullptr;  // stable, unique: origin_arch_precision_layouts_config
  // Its row of the kernel table (csrc/kernel_table.py); configs::config_name() gives the
  // config's name, e.g. "128x256x64_2x1x1_coop". The registry refuses a kernel without one.
  configs::ConfigId config_id = configs::ConfigId::kNone;
  Origin origin = Origin::kCutlass2x;
  Role role = Role::kProduct;

  // ---- what it computes, and on what ----
  Precision precision = Precision::kF32;
  Layout layout_a = Layout::kRowMajor;
  Layout layout_b = Layout::kRowMajor;
  // Alignment, in elements, that the kernel needs of each operand's data pointer,
  // leading dimension and contiguous extent (see dispatch/layout.h).
  int align_a = 1, align_b = 1, align_d = 1;
  int min_cc = 80, max_cc = INT_MAX;  // compute capability range it runs on, as 10 * major + minor
  int64_t max_m = INT64_MAX;  // most rows (M) it takes: the few-row streaming kernels have a limit
  int64_t max_n = INT64_MAX;  // most columns (N) it takes: the few-column streaming kernels have a limit
  int n_multiple = 1;         // N (D's row length) must be a multiple of this, whatever D's alignment

  // ---- how: the facts the cost model (dispatch/cost_model.h) reads ----
  MathClass math = MathClass::kMma;
  // Bytes of one accumulator: what a partial sum that K slices leave in a workspace takes
  // (float64 for float64, and for IEEE float32 widened to float64 on DMMA; float32 otherwise).
  int accumulator_bytes = 4;
  Mainloop mainloop = Mainloop::kCpAsyncMultistage;
  OperandPass pass = OperandPass::kNone;
  int tile_m = 0, tile_n = 0, tile_k = 0;  // CTA tile, in the problem's terms (swap-AB included)
  int cluster_m = 1, cluster_n = 1;        // CTAs per cluster along M and N (SM90)
  int stages = 0;                          // shared-memory pipeline depth
  int threads = 0;                         // threads per CTA
  int smem_bytes = 0;  // dynamic shared memory per CTA; the planner checks it against the device
  bool persistent = false;  // a grid of about one CTA per SM walks the output tiles
  bool pingpong = false;    // SM90: the consumer warpgroups alternate whole tiles
  bool swap_ab = false;     // computes D^T = B^T A^T, so M runs along the MMA's narrow N side
  int decompositions = 1;   // decomposition_bit() of each Decomposition it supports
  bool orders_tiles = false;  // honours GemmArgs::tile_order (persistent tile schedulers)
  // How its split-K meets the K slices of a tile (SliceSum; serial for every kernel not saying).
  SliceSum slice_sum = SliceSum::kSerial;
  // SliceSum::kSecondKernel: the slices must be equal and whole 16-byte units of K, so only the
  // counts that divide K so run (a batch of slices); false: any count (candidates.cpp).
  bool equal_slices = false;
  // CUTLASS 2.x's stream-K kernel: the reduction CTAs it launches per stream-K tile where it sums
  // partial tiles in CTAs of their own (one per accumulator fragment of its epilogue,
  // Epilogue::kAccumulatorFragments); 0 for every other kernel. The cost model needs the count
  // to know when CUTLASS would remap its block indices (cost_model.cpp, cutlass2x_remaps).
  int reduction_ctas_per_tile = 0;
  // Applies GemmArgs::epilogue (alpha, a bias along D's columns, an activation) while storing D.
  // Such kernels are the fused builds of a config (kernel name suffix "_bias_act") and run only
  // calls that have an epilogue; every other kernel gets the plain one, and the planner adds
  // an elementwise pass after it (ops/epilogue.h).
  bool fuses_epilogue = false;
  // Runs a batch of products in one launch (GemmArgs::batch, bmm): the batch is one more
  // dimension of its grid (CUTLASS 3.x's L mode, CUTLASS 2.x's kBatched). Data-parallel only.
  bool batched = false;
  // The most matrices one launch takes: where the batch is a grid dimension of its own
  // (gridDim.y or z, at most 65535 blocks: kMaxGridYZ), that; CUTLASS 3.x's persistent kernels
  // fold it into their tile count (a 32-bit L).
  int64_t max_batch = INT64_MAX;

  // ---- entry points ----
  size_t (*workspace_bytes)(const GemmArgs&) = nullptr;
  KernelStatus (*can_implement)(const GemmArgs&) = nullptr;
  KernelStatus (*run)(const GemmArgs&) = nullptr;
  // CTAs of this kernel that one SM of the current device holds at once, by CUDA's occupancy
  // calculator (the kernel's real registers and shared memory); null where the kernel does not
  // say. `sweep --occupancy` records it with the device's sweep, and the cost model reads the
  // recorded figure (Calibration::ctas_per_sm) in place of its estimate (ctas_per_sm()).
  int (*max_active_ctas)() = nullptr;
  // The K one main-loop step covers on this problem, where it depends on the problem and not on
  // the tile alone: the CUDA-core streaming kernel's instance for the problem's rows keeps more
  // loads in flight the fewer its rows (gemm_skinny_m_sm80.cu, RowMajorB::unroll). Null: tile_k.
  int (*k_step)(const GemmArgs&) = nullptr;

  bool supports(Decomposition d) const { return (decompositions & decomposition_bit(d)) != 0; }
  const char* config() const { return configs::config_name(config_id); }
};

inline constexpr int kAnyNewerCC = INT_MAX;
// CUDA's limit on gridDim.y and gridDim.z (gridDim.x holds 2^31 - 1): a kernel that puts
// tile columns or the batch there says so with max_n or max_batch.
inline constexpr int64_t kMaxGridYZ = 65535;

struct KernelTable {
  int abi_version;
  int count;
  const KernelInfo* kernels;
  const char* module;  // e.g. "_C_sm90", for messages
  uint64_t config_table_hash;  // configs::kConfigTableHash of the kernel table it was built from
};

// --- inside a kernel module ------------------------------------------------------------

// The module's own list. Defined once per kernel module (kernel_module.cpp) with hidden
// visibility, so two modules loaded into one process keep separate lists.
__attribute__((visibility("hidden"))) std::vector<KernelInfo>& module_kernel_list();

struct KernelRegistrar {
  explicit KernelRegistrar(const KernelInfo& info) { module_kernel_list().push_back(info); }
};

}  // namespace cutlass_ops
