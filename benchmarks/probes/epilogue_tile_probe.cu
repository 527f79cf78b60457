// One CUTLASS 3.x bf16 GEMM (TMA + WGMMA, warp-specialized, persistent) per build of this file,
// its tile (M, N, K), cluster (M, N), schedule and epilogue subtile set by the macros the probe compiles it with
// (benchmarks/probes/epilogue_tile_probe.py). D = A @ B, A row-major (M x K), B column-major
// (F.linear's weight: N x K), D row-major, L matrices apart (a batch).
#include <cuda_runtime.h>

#include "cute/tensor.hpp"
#include "cutlass/cutlass.h"
#include "cutlass/epilogue/collective/collective_builder.hpp"
#include "cutlass/gemm/collective/collective_builder.hpp"
#include "cutlass/gemm/device/gemm_universal_adapter.h"
#include "cutlass/gemm/kernel/gemm_universal.hpp"
#include "cutlass/util/packed_stride.hpp"

namespace {

using namespace cute;
using Element = cutlass::bfloat16_t;
using TileShape = Shape<Int<PROBE_TILE_M>, Int<PROBE_TILE_N>, Int<PROBE_TILE_K>>;
using ClusterShape = Shape<Int<PROBE_CLUSTER_M>, Int<PROBE_CLUSTER_N>, _1>;
#if PROBE_COOP
using MainloopSchedule = cutlass::gemm::KernelTmaWarpSpecializedCooperative;
using EpilogueSchedule = cutlass::epilogue::TmaWarpSpecializedCooperative;
#else
using MainloopSchedule = cutlass::gemm::KernelTmaWarpSpecializedPingpong;
using EpilogueSchedule = cutlass::epilogue::TmaWarpSpecialized;
#endif
#if PROBE_EPI_M > 0
using EpilogueTile = Shape<Int<PROBE_EPI_M>, Int<PROBE_EPI_N>>;
#else
using EpilogueTile = cutlass::epilogue::collective::EpilogueTileAuto;
#endif

using CollectiveEpilogue = typename cutlass::epilogue::collective::CollectiveBuilder<
    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, TileShape, ClusterShape, EpilogueTile, float, float,
    void, cutlass::layout::RowMajor, 8, Element, cutlass::layout::RowMajor, 8, EpilogueSchedule>::CollectiveOp;

using CollectiveMainloop = typename cutlass::gemm::collective::CollectiveBuilder<
    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, Element, cutlass::layout::RowMajor, 8, Element,
    cutlass::layout::ColumnMajor, 8, float, TileShape, ClusterShape,
    cutlass::gemm::collective::StageCountAutoCarveout<static_cast<int>(sizeof(typename CollectiveEpilogue::SharedStorage))>,
    MainloopSchedule>::CollectiveOp;

using GemmKernel = cutlass::gemm::kernel::GemmUniversal<Shape<int, int, int, int>, CollectiveMainloop,
                                                        CollectiveEpilogue, cutlass::gemm::PersistentScheduler>;
using Gemm = cutlass::gemm::device::GemmUniversalAdapter<GemmKernel>;

}  // namespace

// 0 on success; the CUTLASS status otherwise. The grid is persistent: no workspace.
extern "C" int PROBE_ENTRY(const void* a, const void* b, void* d, int m, int n, int k, int batch, int sm_count,
                           cudaStream_t stream, int* stages) {
  using StrideA = typename GemmKernel::StrideA;
  using StrideB = typename GemmKernel::StrideB;
  using StrideD = typename GemmKernel::StrideD;
  *stages = CollectiveMainloop::DispatchPolicy::Stages;
  cutlass::KernelHardwareInfo hw;
  hw.device_id = 0;
  hw.sm_count = sm_count;
  typename Gemm::Arguments args{
      cutlass::gemm::GemmUniversalMode::kGemm,
      {m, n, k, batch},
      {static_cast<const Element*>(a), cutlass::make_cute_packed_stride(StrideA{}, cute::make_shape(m, k, batch)),
       static_cast<const Element*>(b), cutlass::make_cute_packed_stride(StrideB{}, cute::make_shape(n, k, batch))},
      {{1.0f, 0.0f}, nullptr, StrideD{}, static_cast<Element*>(d),
       cutlass::make_cute_packed_stride(StrideD{}, cute::make_shape(m, n, batch))},
      hw};
  Gemm gemm;
  cutlass::Status status = gemm.can_implement(args);
  if (status != cutlass::Status::kSuccess) return static_cast<int>(status) + 1000;
  status = gemm.initialize(args, nullptr, stream);
  if (status != cutlass::Status::kSuccess) return static_cast<int>(status) + 2000;
  status = gemm.run(stream);
  return status == cutlass::Status::kSuccess ? 0 : static_cast<int>(status) + 3000;
}
