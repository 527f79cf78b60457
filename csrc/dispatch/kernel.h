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

#include "dispatch/types.h"

namespace cutlass_ops {

inline constexpr int kKernelAbiVersion = 6;
inline constexpr const char* kKernelTableCapsuleName = "cutlass_ops.KernelTable";

struct KernelInfo {
  const char* name;    // stable, unique: family_arch_precision_layouts_config
  const char* family;  // "cutlass3x", "cutlass2x" or "handwritten"
  const char* config;  // the config struct's name, e.g. "128x256x64_2x1x1_coop"
  Precision precision;
  Layout layout_a;
  Layout layout_b;
  // Alignment, in elements, that the kernel needs of each operand's data pointer,
  // leading dimension and contiguous extent (see dispatch/layout.h).
  int align_a, align_b, align_d;
  int min_cc, max_cc;  // compute capability range it runs on, as 10 * major + minor
  int tile_m, tile_n, tile_k;
  int smem_bytes;  // dynamic shared memory per CTA; the planner checks it against the device
  int decompositions;  // decomposition_bit() of each Decomposition it supports

  size_t (*workspace_bytes)(const GemmArgs&);
  KernelStatus (*can_implement)(const GemmArgs&);
  KernelStatus (*run)(const GemmArgs&);
  bool orders_tiles = false;  // honours GemmArgs::tile_order (persistent tile schedulers)
  int64_t max_m = INT64_MAX;  // most rows (M) it takes: the few-row streaming kernels have a limit
  int n_multiple = 1;         // N (D's row length) must be a multiple of this, whatever D's alignment
  // Split-K as a batch of K slices that each write a float32 partial D, then a second kernel
  // sums them in slice order (cutlass3x/sm90_splitk_sum.cuh): any slice count that divides K
  // into 16-byte multiples, and no serial fix-up between slices.
  bool sums_slices = false;
  // Stream-K offered in split-K's place, by a kernel whose D is narrower than its accumulator
  // (CUTLASS 2.x, 16-bit): serial split-K would meet the K slices in D and round each partial
  // sum to D's type, stream-K meets them in its workspace in the accumulator's. The heuristic
  // asks for it where it would have split K (and always for 1-element-aligned operands), and
  // runs data-parallel elsewhere (heuristic.cpp, choose_decomposition).
  bool stream_k_replaces_split_k = false;
};

inline constexpr int kAnyNewerCC = INT_MAX;

struct KernelTable {
  int abi_version;
  int count;
  const KernelInfo* kernels;
  const char* module;  // e.g. "_C_sm90", for messages
};

// --- inside a kernel module ------------------------------------------------------------

// The module's own list. Defined once per kernel module (kernel_module.cpp) with hidden
// visibility, so two modules loaded into one process keep separate lists.
__attribute__((visibility("hidden"))) std::vector<KernelInfo>& module_kernel_list();

struct KernelRegistrar {
  explicit KernelRegistrar(const KernelInfo& info) { module_kernel_list().push_back(info); }
};

}  // namespace cutlass_ops
