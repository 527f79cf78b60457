// One CUTLASS 3.x GEMM per build of this file whose main loop loads A and B with cp.async (any
// 4-byte alignment) into WGMMA's shared-memory operands, for operands TMA cannot read (a leading
// dim or address off 16 bytes), and whose epilogue stores D from registers (any alignment):
// CUTLASS's KernelCpAsyncWarpSpecialized{,Cooperative,Pingpong} schedules with the
// NoSmemWarpSpecialized epilogue (benchmarks/probes/cpasync_probe.py builds and times them).
// Its tile (M, N, K), schedule (PROBE_SCHED: 0 one consumer warpgroup, two loading; 1 cooperative;
// 2 ping-pong), precision (PROBE_TF32: float operands on TF32 WGMMA, float D; else bf16) and the
// operands' alignment in elements (PROBE_ALIGN) are the macros the probe compiles it with.
// D = A @ B, A row-major (M x K), B column-major (F.linear's weight: N x K), D row-major: the one
// layout TF32 WGMMA reads from shared memory without a transpose (both operands K-major).
#include <cuda_runtime.h>

#include "cute/tensor.hpp"
#include "cutlass/cutlass.h"
#include "cutlass/epilogue/collective/collective_builder.hpp"
#include "cutlass/gemm/collective/collective_builder.hpp"
#include "cutlass/gemm/device/gemm_universal_adapter.h"
#include "cutlass/gemm/kernel/gemm_universal.hpp"
#include "cutlass/util/packed_stride.hpp"
#include "probe_cutlass_run.h"

namespace {

using namespace cute;
#if PROBE_TF32
using Element = float;
#else
using Element = cutlass::bfloat16_t;
#endif
constexpr int kAlign = PROBE_ALIGN;
using TileShape = Shape<Int<PROBE_TILE_M>, Int<PROBE_TILE_N>, Int<PROBE_TILE_K>>;
using ClusterShape = Shape<_1, _1, _1>;  // cp.async loads are per CTA: no multicast
#if PROBE_SCHED == 1
using MainloopSchedule = cutlass::gemm::KernelCpAsyncWarpSpecializedCooperative;
using Scheduler = cutlass::gemm::PersistentScheduler;
#elif PROBE_SCHED == 2
using MainloopSchedule = cutlass::gemm::KernelCpAsyncWarpSpecializedPingpong;
using Scheduler = cutlass::gemm::PersistentScheduler;
#else
using MainloopSchedule = cutlass::gemm::KernelCpAsyncWarpSpecialized;
using Scheduler = void;
#endif

using CollectiveEpilogue = typename cutlass::epilogue::collective::CollectiveBuilder<
    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, TileShape, ClusterShape,
    cutlass::epilogue::collective::EpilogueTileAuto, float, float, void, cutlass::layout::RowMajor, 1, Element,
    cutlass::layout::RowMajor, 1, cutlass::epilogue::NoSmemWarpSpecialized>::CollectiveOp;

using CollectiveMainloop = typename cutlass::gemm::collective::CollectiveBuilder<
    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, Element, cutlass::layout::RowMajor, kAlign, Element,
    cutlass::layout::ColumnMajor, kAlign, float, TileShape, ClusterShape,
    cutlass::gemm::collective::StageCountAuto, MainloopSchedule>::CollectiveOp;

using GemmKernel = cutlass::gemm::kernel::GemmUniversal<Shape<int, int, int, int>, CollectiveMainloop,
                                                        CollectiveEpilogue, Scheduler>;
using Gemm = cutlass::gemm::device::GemmUniversalAdapter<GemmKernel>;

}  // namespace

// 0 on success; else probe_run_gemm's code (probe_cutlass_run.h). lda and ldb: the rows' pitches
// in elements (A's rows and the weight's rows, K apart or more); D packed.
extern "C" int PROBE_ENTRY(const void* a, const void* b, void* d, int m, int n, int k, int lda, int ldb,
                           int sm_count, cudaStream_t stream, int* stages) {
  using StrideA = typename GemmKernel::StrideA;
  using StrideB = typename GemmKernel::StrideB;
  using StrideD = typename GemmKernel::StrideD;
  *stages = CollectiveMainloop::DispatchPolicy::Stages;
  const cutlass::KernelHardwareInfo hw = probe_hw_info(sm_count);
  StrideA stride_a = cutlass::make_cute_packed_stride(StrideA{}, cute::make_shape(m, k, 1));
  StrideB stride_b = cutlass::make_cute_packed_stride(StrideB{}, cute::make_shape(n, k, 1));
  cute::get<0>(stride_a) = lda;
  cute::get<0>(stride_b) = ldb;
  typename Gemm::Arguments args{
      cutlass::gemm::GemmUniversalMode::kGemm,
      {m, n, k, 1},
      {static_cast<const Element*>(a), stride_a, static_cast<const Element*>(b), stride_b},
      {{1.0f, 0.0f}, nullptr, StrideD{}, static_cast<Element*>(d),
       cutlass::make_cute_packed_stride(StrideD{}, cute::make_shape(m, n, 1))},
      hw};
  return probe_run_gemm<Gemm>(args, stream);
}
