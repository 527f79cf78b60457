// One CUTLASS 3.x GEMM (TMA + WGMMA, warp-specialized, persistent) per build of this file, its
// tile (M, N, K), cluster (M, N), schedule, scheduler (PROBE_STREAMK: CUTLASS's stream-K one, run
// data-parallel), precision (PROBE_TF32: float operands on TF32 WGMMA, float D; else bf16) and
// epilogue subtile and main-loop stages (PROBE_STAGES; 0: as many as fit) set by the macros the probe compiles it with
// (benchmarks/probes/epilogue_tile_probe.py). D = A @ B, A row-major (M x K), B column-major
// (F.linear's weight: N x K), D row-major, L matrices apart (a batch). With PROBE_SWAP the kernel
// runs the transposed product, D^T = B^T A^T (the weight as CUTLASS's A, D^T column-major), so
// the tile's N side (PROBE_TILE_N) spans rows of D, as the library's swap-AB configs do.
//
// WGMMA N sizes beyond CuTe's base set (8, 16, 32, 64, 96, 128, 192, 256), as the library's
// generated files declare them where a tile needs them (csrc/kernel_table.py, BASE_WGMMA_N).
#define CUTE_SM90_EXTENDED_MMA_SHAPES_ENABLED
#include <cuda_runtime.h>

#include <utility>

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
constexpr int kAlign = 4;
#else
using Element = cutlass::bfloat16_t;
constexpr int kAlign = 8;
#endif
#if PROBE_STREAMK
using Scheduler = cutlass::gemm::StreamKScheduler;
#else
using Scheduler = cutlass::gemm::PersistentScheduler;
#endif
using TileShape = Shape<Int<PROBE_TILE_M>, Int<PROBE_TILE_N>, Int<PROBE_TILE_K>>;
using ClusterShape = Shape<Int<PROBE_CLUSTER_M>, Int<PROBE_CLUSTER_N>, _1>;
#if PROBE_COOP
using MainloopSchedule = cutlass::gemm::KernelTmaWarpSpecializedCooperative;
using EpilogueSchedule = cutlass::epilogue::TmaWarpSpecializedCooperative;
#else
using MainloopSchedule = cutlass::gemm::KernelTmaWarpSpecializedPingpong;
using EpilogueSchedule = cutlass::epilogue::TmaWarpSpecialized;
#endif
#if PROBE_EPI_DIRECT  // D stored from registers: no shared-memory staging, no TMA store to wait on
using EpilogueScheduleUsed = cutlass::epilogue::NoSmemWarpSpecialized;
#else
using EpilogueScheduleUsed = EpilogueSchedule;
#endif
#if PROBE_SWAP
using LayoutD = cutlass::layout::ColumnMajor;
#else
using LayoutD = cutlass::layout::RowMajor;
#endif
#if PROBE_EPI_M > 0
using EpilogueTile = Shape<Int<PROBE_EPI_M>, Int<PROBE_EPI_N>>;
#else
using EpilogueTile = cutlass::epilogue::collective::EpilogueTileAuto;
#endif

using CollectiveEpilogue = typename cutlass::epilogue::collective::CollectiveBuilder<
    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, TileShape, ClusterShape, EpilogueTile, float, float,
    void, LayoutD, kAlign, Element, LayoutD, kAlign, EpilogueScheduleUsed>::CollectiveOp;

#if PROBE_STAGES > 0
using MainloopStages = cutlass::gemm::collective::StageCount<PROBE_STAGES>;
#else  // as many as shared memory holds beside the epilogue's
using MainloopStages =
    cutlass::gemm::collective::StageCountAutoCarveout<static_cast<int>(sizeof(typename CollectiveEpilogue::SharedStorage))>;
#endif

using CollectiveMainloop = typename cutlass::gemm::collective::CollectiveBuilder<
    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, Element, cutlass::layout::RowMajor, kAlign, Element,
    cutlass::layout::ColumnMajor, kAlign, float, TileShape, ClusterShape,
    MainloopStages, MainloopSchedule>::CollectiveOp;

using GemmKernel = cutlass::gemm::kernel::GemmUniversal<Shape<int, int, int, int>, CollectiveMainloop,
                                                        CollectiveEpilogue, Scheduler>;
using Gemm = cutlass::gemm::device::GemmUniversalAdapter<GemmKernel>;

}  // namespace

// 0 on success; else probe_run_gemm's code (probe_cutlass_run.h).
extern "C" int PROBE_ENTRY(const void* a, const void* b, void* d, int m, int n, int k, int batch, int sm_count,
                           cudaStream_t stream, int* stages) {
  using StrideA = typename GemmKernel::StrideA;
  using StrideB = typename GemmKernel::StrideB;
  using StrideD = typename GemmKernel::StrideD;
  *stages = CollectiveMainloop::DispatchPolicy::Stages;
  const cutlass::KernelHardwareInfo hw = probe_hw_info(sm_count);
#if PROBE_SWAP
  std::swap(a, b);  // the weight is CUTLASS's A, the activations its (K-major) B
  std::swap(m, n);
#endif
  typename Gemm::Arguments args{
      cutlass::gemm::GemmUniversalMode::kGemm,
      {m, n, k, batch},
      {static_cast<const Element*>(a), cutlass::make_cute_packed_stride(StrideA{}, cute::make_shape(m, k, batch)),
       static_cast<const Element*>(b), cutlass::make_cute_packed_stride(StrideB{}, cute::make_shape(n, k, batch))},
      {{1.0f, 0.0f}, nullptr, StrideD{}, static_cast<Element*>(d),
       cutlass::make_cute_packed_stride(StrideD{}, cute::make_shape(m, n, batch))},
      hw};
#if PROBE_STREAMK
  args.scheduler.decomposition_mode = cutlass::gemm::kernel::detail::DecompositionMode::DataParallel;
#endif
  return probe_run_gemm<Gemm>(args, stream);
}
