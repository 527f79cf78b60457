// Split-K for small outputs over a long K on CUTLASS 2.x kernels, summed by a second kernel.
//
// A CUTLASS 2.x kernel whose D holds its accumulator (TF32 and float64: Sm80Gemm without the
// stream-K kernel) splits K serially: the slices of a tile take turns, through a semaphore, to
// add their partial tile into D. Each turn is a wait, so such launches stop paying at about a
// dozen slices, and a small output over a long K (TF32 192x40x14920: three 64x64 tiles) keeps
// most SMs idle: 37.8 us in 8 slices, where torch.mm took 14.3 (H200 sweep, 2026-12-03; the
// class in docs/findings.md, "Long reductions at alignment 1"). Here the same GEMM runs in
// CUTLASS's parallel split-K mode (GemmUniversalMode::kGemmSplitKParallel):
//
//   1. CUTLASS cuts K into slices of ceil(K / S) rounded up to whole 16-byte units (the last
//      slice shorter), and every slice runs at once, writing its partial D (D's own type, which
//      holds the accumulator) to its own M x N' matrix of the workspace, N' = N rounded up to
//      whole 16-byte vectors. No slice waits for another.
//   2. A second kernel sums the slices in order for every element and writes D
//      (common/slice_sum.cuh): the result is the same on every run.
//
// Cost: S x M x N' partials written once and read once, and one more launch. The GEMM is the
// data-parallel kernel's own instantiation (this struct only launches it in another mode), so
// it adds no compile time; a data-parallel call (a forced kernel the planner offers no split
// for) runs that kernel as it is.
#pragma once

#include <algorithm>
#include <cstdint>

#include "common/slice_sum.cuh"
#include "cutlass2x/sm80_gemm.cuh"

namespace cutlass_ops::sm80 {

template <class Base>  // an Sm80Gemm
struct Sm80SplitKSum {
  using Gemm = typename Base::Gemm;
  using Arguments = typename Base::Arguments;
  using Partial = typename Base::ElementOut;  // the partials are D's type, which holds the accumulator
  static_assert(Base::kDHoldsAccumulator && !Base::kStreamK,
                "parallel split-K runs on the plain GemmUniversal kernel, its partials in D's type");
  static constexpr size_t kAlign = 256;

  static bool split(const GemmArgs& g) { return g.decomposition == Decomposition::kSplitK && g.splits > 1; }

  // CUTLASS's parallel split-K arguments: `splits` slices, slice s writing partials + s * M * N'.
  static Arguments partial_arguments(const GemmArgs& g, void* partials) {
    const cutlass::gemm::GemmCoord problem(static_cast<int>(g.m), static_cast<int>(g.n), static_cast<int>(g.k));
    const auto epilogue = typename Base::EpilogueOp::Params(typename Base::Accumulator(1), typename Base::Accumulator(0));
    const int64_t ldw = slice_sum::padded_ld<Partial>(g.n);
    return Arguments(cutlass::gemm::GemmUniversalMode::kGemmSplitKParallel, problem, /*batch_count=*/g.splits,
                     epilogue, g.a, g.b, /*ptr_C=*/partials, partials, /*batch strides of A, B (unused)=*/0, 0,
                     /*of C, D: one slice's partials=*/g.m * ldw, g.m * ldw, g.lda, g.ldb, ldw, ldw);
  }

  // The slices CUTLASS cuts K into (the grid's third dimension): the requested count, or fewer
  // where whole 16-byte units of K run out first.
  static int slices(const GemmArgs& g) {
    return std::max(1, static_cast<int>(Gemm::get_grid_shape(partial_arguments(g, nullptr)).z));
  }

  static size_t partials_bytes(const GemmArgs& g) {
    const size_t bytes = static_cast<size_t>(slices(g)) * g.m * slice_sum::padded_ld<Partial>(g.n) * sizeof(Partial);
    return (bytes + kAlign - 1) / kAlign * kAlign;
  }

  static size_t workspace_bytes(const GemmArgs& g) { return split(g) ? partials_bytes(g) : Base::workspace_bytes(g); }

  static KernelStatus can_implement(const GemmArgs& g) {
    if (!split(g)) return Base::can_implement(g);
    if (Gemm::can_implement(partial_arguments(g, nullptr)) == cutlass::Status::kSuccess) return {};
    return {KernelStatus::kNotSupported, "CUTLASS can_implement() rejected the problem in parallel split-K mode"};
  }

  static KernelStatus run(const GemmArgs& g) {
    if (!split(g)) return Base::run(g);
    // In this mode CUTLASS's initialize() neither needs nor zeroes a workspace of its own: the
    // partials are the GEMM's D.
    Gemm gemm;
    cutlass::Status status = gemm.initialize(partial_arguments(g, g.workspace), nullptr, g.stream);
    if (status == cutlass::Status::kSuccess) status = gemm.run(g.stream);
    if (status != cutlass::Status::kSuccess) return from_cutlass(status);
    return from_cuda(slice_sum::launch(static_cast<const Partial*>(g.workspace), slices(g), g.m, g.n,
                                       static_cast<Partial*>(g.d), g.ldd, g.stream));
  }

  static KernelInfo info(const char* name) {
    // Alignments, tiles and shared memory: the GEMM's (D keeps its alignment, which a forced
    // data-parallel call needs).
    KernelInfo k = Base::info(name);
    k.decompositions = decomposition_bit(Decomposition::kSplitK);
    k.slice_sum = SliceSum::kSecondKernel;
    k.equal_slices = false;
    k.batched = false;
    k.workspace_bytes = &workspace_bytes;
    k.can_implement = &can_implement;
    k.run = &run;
    return k;
  }
};

}  // namespace cutlass_ops::sm80
