// Split-K for few output tiles and a long K, summed by a second kernel ("split-K sum").
//
// CUTLASS 3.x's split-K (the stream-K scheduler's SplitK mode, deterministic) has each slice
// wait for the one before it, add its partial tile into a workspace tile and pass the turn
// on: the slices of a tile are summed one after another. With a handful of output tiles and
// a long K that chain is the bottleneck: bf16 256x256x131072 on 128x128 tiles took 93 us at
// 12 slices and 127 us at 32 (H100, RESULTS.md at 824ebc1, 2026-11-22, "split-K summed by a second kernel"), so the SMs cannot all be put
// to work. Here:
//
//   1. K is cut into S equal slices, and the GEMM runs them as a batch (CUTLASS's L mode):
//      slice s reads A and B from K offset s * K / S and writes its own float32 partial,
//      W[s] = A[:, slice s] B[slice s, :]. No slice waits for another.
//   2. A second kernel sums W[0] + W[1] + ... + W[S-1] in that order for each element and
//      writes D in its own type: the result is the same on every run.
//
// Cost: S x M x N' floats of workspace (N' = N rounded up to 4), written once and read once
// (for 256x256 and S = 32, 8 MiB: it stays in the 50 MB L2), and one more launch. The slices
// must be equal and start on 16-byte boundaries: S divides K into multiples of 8 elements
// (16-bit types), which the planner's choice of S respects (candidates.cpp). A slice count
// that does not (a tuning entry's, say) runs as the largest count below it that does.
//
// Measured on an H100 (bf16, RESULTS.md at 824ebc1, 2026-11-22, "split-K summed by a second kernel"): the fastest K split on every
// long-K problem swept, 2-13% ahead of CUTLASS's split-K, but still behind cuBLAS on most
// (256x256x131072: 73 us against 63); both read A and B at about 2 TB/s there.
#pragma once

#include <algorithm>
#include <cstdint>

#include "common/slice_sum.cuh"
#include "cutlass3x/sm90_gemm.cuh"

namespace cutlass_ops::sm90 {

template <class Config, Precision P, Layout LA, Layout LB>
struct SplitKSum {
  using Partial = Sm90Gemm<Config, P, LA, LB, float>;  // the same GEMM, writing float32 slices
  using Element = typename Partial::ElementAB;
  static constexpr size_t kAlign = 256;  // the GEMM's own workspace starts on this boundary

  // The slice count that runs: the requested one, or the largest below it that divides K
  // into equal multiples of 16 bytes (1 always does: the planner guarantees K's alignment).
  static int slices(const GemmArgs& g) {
    int s = g.decomposition == Decomposition::kSplitK ? std::max(1, g.splits) : 1;
    while (s > 1 && (g.k % s != 0 || (g.k / s) % Partial::kAlignment != 0)) --s;
    return s;
  }
  static int64_t slice_ld(const GemmArgs& g) { return slice_sum::padded_ld<float>(g.n); }  // 16-byte rows for TMA
  static size_t partials_bytes(const GemmArgs& g) {
    const size_t bytes = static_cast<size_t>(slices(g)) * g.m * slice_ld(g) * sizeof(float);
    return (bytes + kAlign - 1) / kAlign * kAlign;
  }

  // The batched GEMM's arguments: D is the partials, one M x slice_ld(g) float matrix per slice.
  static GemmArgs partial_args(const GemmArgs& g) {
    GemmArgs p = g;
    p.d = g.workspace;
    p.ldd = slice_ld(g);
    p.workspace = g.workspace == nullptr ? nullptr : static_cast<char*>(g.workspace) + partials_bytes(g);
    p.decomposition = Decomposition::kDataParallel;
    p.splits = 1;
    return p;
  }

  static size_t workspace_bytes(const GemmArgs& g) {
    return partials_bytes(g) + Partial::workspace_bytes_sliced(partial_args(g), slices(g));
  }

  static KernelStatus can_implement(const GemmArgs& g) {
    return Partial::can_implement_sliced(partial_args(g), slices(g));
  }

  static KernelStatus run(const GemmArgs& g) {
    const int s = slices(g);
    const GemmArgs p = partial_args(g);
    const KernelStatus status = Partial::run_sliced(p, s);
    if (!status.ok()) return status;
    return from_cuda(slice_sum::launch(static_cast<const float*>(p.d), s, g.m, g.n, static_cast<Element*>(g.d), g.ldd,
                                       g.stream));
  }

  static KernelInfo info(const char* name) {
    // Config, tiles, shared memory, tile order and decompositions (data-parallel and split-K,
    // from the kernel table): the GEMM's.
    KernelInfo k = Partial::info(name);
    // D itself is written element by element by the sum, at any address and leading dim; but
    // the GEMM stores the float32 partials by TMA, and CUTLASS takes their rows only in whole
    // 16-byte units: N a multiple of 4.
    k.align_d = 1;
    k.n_multiple = 4;
    k.workspace_bytes = &workspace_bytes;
    k.can_implement = &can_implement;
    k.run = &run;
    k.slice_sum = SliceSum::kSecondKernel;
    k.equal_slices = true;
    k.batched = false;  // its batch mode holds the K slices
    return k;
  }
};

}  // namespace cutlass_ops::sm90
