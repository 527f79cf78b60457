// CUTLASS 3.x GEMM for SM90 (H100/H200): TMA loads (or, for operands TMA cannot read, cp.async
// loads), WGMMA, warp-specialized kernels, persistent but for the cp.async "ws" schedule,
// assembled with CUTLASS's CollectiveBuilder from a config in dispatch/configs.h.
//
// Instantiated by the generated translation units (csrc/generated/cutlass3x/gemm_*_sm90.cu,
// written by csrc/generate_kernels.py, a few configs to a file), compiled for sm_90a only: WGMMA and setmaxnreg exist on that target alone.
//
// The run sequence is CUTLASS's own (examples/48, 49; GemmUniversalAdapter): arguments,
// can_implement, workspace, initialize, run; but the shared-memory opt-in happens once per
// device instead of on every call, and the params go straight to the static
// GemmUniversalAdapter::run.
#pragma once

#include <type_traits>

#include "cute/tensor.hpp"
#include "cutlass/cutlass.h"
#include "cutlass/epilogue/collective/collective_builder.hpp"
#include "cutlass/gemm/collective/collective_builder.hpp"
#include "cutlass/gemm/collective/sm90_mma_tma_gmma_ss_warpspecialized_fp8.hpp"
#include "cutlass/gemm/device/gemm_universal_adapter.h"
#include "cutlass/gemm/dispatch_policy.hpp"
#include "cutlass/gemm/kernel/gemm_universal.hpp"
#include "cutlass/gemm/kernel/tile_scheduler.hpp"

#include "common/activation.cuh"
#include "common/launch.h"
#include "dispatch/configs.h"
#include "dispatch/kernel.h"

namespace cutlass_ops::sm90 {

template <Precision P>
struct ElementFor;
template <>
struct ElementFor<Precision::kF16> {
  using type = cutlass::half_t;
};
template <>
struct ElementFor<Precision::kBF16> {
  using type = cutlass::bfloat16_t;
};
// float operands: the builder maps them to TF32 WGMMA, which reads the top 19 bits of
// each fp32 value, as cuBLAS does with TF32 enabled.
template <>
struct ElementFor<Precision::kTF32> {
  using type = float;
};

template <Layout L>
using LayoutTag = std::conditional_t<L == Layout::kRowMajor, cutlass::layout::RowMajor,
                                     cutlass::layout::ColumnMajor>;

constexpr Layout flip(Layout l) { return l == Layout::kRowMajor ? Layout::kColMajor : Layout::kRowMajor; }

// The CUTLASS problem a kernel runs for the torch problem D (M x N) = A (M x K) * B (K x N).
// Plain: the same. Swap-AB (Config::kSwapAB): D^T (N x M) = B^T (N x K) * A^T (K x M), with
// D^T column-major, which is D row-major, so no data moves. Transposing an operand flips
// its layout; CUTLASS's B is described as in torch (K x N), so A^T's layout is flip(LA).
template <class Config, Layout LA, Layout LB>
struct CutlassProblem {
  static constexpr bool kSwap = Config::kSwapAB;
  using LayoutA = LayoutTag<kSwap ? flip(LB) : LA>;
  using LayoutB = LayoutTag<kSwap ? flip(LA) : LB>;
  using LayoutD = std::conditional_t<kSwap, cutlass::layout::ColumnMajor, cutlass::layout::RowMajor>;
  // Configs give tiles and clusters in the torch problem's terms (kTileM rows of D).
  using TileShape = std::conditional_t<
      kSwap, cute::Shape<cute::Int<Config::kTileN>, cute::Int<Config::kTileM>, cute::Int<Config::kTileK>>,
      cute::Shape<cute::Int<Config::kTileM>, cute::Int<Config::kTileN>, cute::Int<Config::kTileK>>>;
  using ClusterShape =
      std::conditional_t<kSwap, cute::Shape<cute::Int<Config::kClusterN>, cute::Int<Config::kClusterM>, cute::_1>,
                         cute::Shape<cute::Int<Config::kClusterM>, cute::Int<Config::kClusterN>, cute::_1>>;
  // D's subtile per epilogue round: the config's (kernel_table.Sm90.epilogue_tile), or CUTLASS's
  // automatic one (64 x 32 ping-pong, 128 x 32 cooperative) where the config gives none.
  using EpilogueTile = std::conditional_t<
      Config::kEpilogueTileM == 0, cutlass::epilogue::collective::EpilogueTileAuto,
      cute::Shape<cute::Int<(Config::kEpilogueTileM > 0 ? Config::kEpilogueTileM : 1)>,
                  cute::Int<(Config::kEpilogueTileN > 0 ? Config::kEpilogueTileN : 1)>>>;
};

// The main loop's and the epilogue's schedule tags. TMA configs store D through shared memory
// with TMA; cp.async ones (Sm90Mainloop::kCpAsync, for operands TMA cannot read) store it from
// registers (NoSmemWarpSpecialized), at any alignment.
template <configs::Sm90Schedule S, configs::Sm90Mainloop M>
struct ScheduleTags;
template <>
struct ScheduleTags<configs::Sm90Schedule::kCooperative, configs::Sm90Mainloop::kTma> {
  using Mainloop = cutlass::gemm::KernelTmaWarpSpecializedCooperative;
  using Epilogue = cutlass::epilogue::TmaWarpSpecializedCooperative;
};
template <>
struct ScheduleTags<configs::Sm90Schedule::kPingpong, configs::Sm90Mainloop::kTma> {
  using Mainloop = cutlass::gemm::KernelTmaWarpSpecializedPingpong;
  using Epilogue = cutlass::epilogue::TmaWarpSpecialized;
};
template <>
struct ScheduleTags<configs::Sm90Schedule::kCooperative, configs::Sm90Mainloop::kCpAsync> {
  using Mainloop = cutlass::gemm::KernelCpAsyncWarpSpecializedCooperative;
  using Epilogue = cutlass::epilogue::NoSmemWarpSpecialized;
};
template <>
struct ScheduleTags<configs::Sm90Schedule::kPingpong, configs::Sm90Mainloop::kCpAsync> {
  using Mainloop = cutlass::gemm::KernelCpAsyncWarpSpecializedPingpong;
  using Epilogue = cutlass::epilogue::NoSmemWarpSpecialized;
};
template <>
struct ScheduleTags<configs::Sm90Schedule::kWarpSpecialized, configs::Sm90Mainloop::kCpAsync> {
  using Mainloop = cutlass::gemm::KernelCpAsyncWarpSpecialized;
  using Epilogue = cutlass::epilogue::NoSmemWarpSpecialized;
};

template <configs::Sm90Scheduler S>
struct SchedulerTag;
template <>
struct SchedulerTag<configs::Sm90Scheduler::kPersistent> {
  using type = cutlass::gemm::PersistentScheduler;
};
template <>
struct SchedulerTag<configs::Sm90Scheduler::kStreamK> {
  using type = cutlass::gemm::StreamKScheduler;
};

// Fills a CUTLASS 3.x stride (M/N mode, K mode, batch mode) for a 2-D operand: one of the
// first two modes is the static unit stride, the other takes the leading dimension.
template <class Stride>
Stride make_stride_2d(int64_t ld, int64_t batch_stride) {
  Stride stride{};
  if constexpr (cute::is_static<std::remove_reference_t<decltype(cute::get<0>(stride))>>::value) {
    cute::get<1>(stride) = ld;
  } else {
    cute::get<0>(stride) = ld;
  }
  cute::get<2>(stride) = batch_stride;
  return stride;
}

// Accumulator promotion (configs with kPromoteKTiles, the 3xTF32 presplit ones): every
// kPromoteKTiles K steps the mainloop adds WGMMA's accumulators into a second set of float32
// registers with ordinary FADDs and restarts them from zero. CUTLASS's FP8 mainloop
// (MainloopSm90TmaGmmaWarpSpecializedFP8, mma_promotion_interval) does exactly this; only its
// builder limits it to FP8 operands, so the builder's own shared-memory-sourced mainloop for
// the config is rebuilt around that dispatch policy, every other type kept.
template <class Config, class = void>
struct PromoteKTiles : std::integral_constant<int, 0> {};
template <class Config>
struct PromoteKTiles<Config, std::void_t<decltype(Config::kPromoteKTiles)>>
    : std::integral_constant<int, Config::kPromoteKTiles> {};

template <class Collective, bool kPromote>
struct WithPromotion {
  static_assert(!kPromote, "accumulator promotion needs the builder's shared-memory-sourced (SS) mainloop");
  using type = Collective;
};
template <int Stages, class Cluster, class Schedule, class... Rest>
struct WithPromotion<
    cutlass::gemm::collective::CollectiveMma<cutlass::gemm::MainloopSm90TmaGmmaWarpSpecialized<Stages, Cluster, Schedule>,
                                             Rest...>,
    true> {
  using type = cutlass::gemm::collective::CollectiveMma<
      cutlass::gemm::MainloopSm90TmaGmmaWarpSpecializedFP8<Stages, Cluster, Schedule>, Rest...>;
};

// The activation of a fused epilogue, chosen per call (EpilogueArgs::activation) rather than
// per kernel: one kernel serves all five. CUTLASS's Sm90Compute hands a functor that declares
// `Arguments` its arguments with every fragment; the switch is taken once per fragment. The
// formulas: common/activation.cuh. The epilogue is not hidden behind the main loop in
// cooperative kernels, so its instruction count shows in the GEMM's time.
template <class T>
struct RuntimeActivation {
  struct Arguments {
    int kind = static_cast<int>(Activation::kNone);
  };
};

template <int N>
struct RuntimeActivation<cutlass::Array<float, N>> {
  using Arguments = typename RuntimeActivation<float>::Arguments;
  using Fragment = cutlass::Array<float, N>;

  template <class Fn>
  CUTLASS_DEVICE static Fragment map(Fragment const& x, Fn fn) {
    Fragment y;
    CUTLASS_PRAGMA_UNROLL
    for (int i = 0; i < N; ++i) y[i] = fn(x[i]);
    return y;
  }

  CUTLASS_DEVICE Fragment operator()(Fragment const& x, Arguments const& args) const {
    return ActivationMath::with(static_cast<Activation>(args.kind), [&](auto fn) { return map(x, fn); });
  }
};

// The epilogue's fusion: plain (D = accumulator, the builder's default for a sourceless
// epilogue), or EpilogueArgs' D = activation(alpha * accumulator + bias) with the bias
// broadcast along D's columns. Swap-AB kernels compute D^T, whose rows are D's columns: there
// the bias is CUTLASS's per-row one.
enum class EpilogueFusion { kPlain, kBiasActivation };

template <EpilogueFusion F, bool kSwap, class ElementD>
struct FusionFor {
  using type = cutlass::epilogue::fusion::LinearCombination<ElementD, float, void, float>;
};
template <class ElementD>
struct FusionFor<EpilogueFusion::kBiasActivation, false, ElementD> {
  using type = cutlass::epilogue::fusion::LinCombPerColBiasEltAct<RuntimeActivation, ElementD, float, ElementD,
                                                                  ElementD, float>;
};
template <class ElementD>
struct FusionFor<EpilogueFusion::kBiasActivation, true, ElementD> {
  using type = cutlass::epilogue::fusion::LinCombPerRowBiasEltAct<RuntimeActivation, ElementD, float, ElementD,
                                                                  ElementD, float>;
};

// OutT: D's element type; void means the operands' (float: the float32 partial slices of
// sm90_splitk_sum.cuh). Fusion: what the epilogue computes besides storing D. CpAsyncAlignment:
// the operands' alignment in elements of a cp.async config (0 for TMA configs).
template <class Config, Precision P, Layout LA, Layout LB, class OutT = void,
          EpilogueFusion Fusion = EpilogueFusion::kPlain, int CpAsyncAlignment = 0>
struct Sm90Gemm {
  using ElementAB = typename ElementFor<P>::type;
  using ElementD = std::conditional_t<std::is_void_v<OutT>, ElementAB, OutT>;
  using ElementAccumulator = float;
  static constexpr bool kCpAsync = Config::kMainloop == configs::Sm90Mainloop::kCpAsync;
  static_assert(kCpAsync == (CpAsyncAlignment > 0), "cp.async configs, and only they, name an alignment");
  static_assert(!kCpAsync || (Fusion == EpilogueFusion::kPlain && std::is_void_v<OutT>),
                "cp.async configs are built plain");
  // TMA moves 16-byte aligned rows; cp.async copies CpAsyncAlignment elements at a time, and the
  // register epilogue stores D element by element.
  static constexpr int kAlignment = kCpAsync ? CpAsyncAlignment : 16 / static_cast<int>(sizeof(ElementAB));
  static constexpr int kAlignmentD = kCpAsync ? 1 : 16 / static_cast<int>(sizeof(ElementD));

  using Problem = CutlassProblem<Config, LA, LB>;
  using TileShape = typename Problem::TileShape;
  using ClusterShape = typename Problem::ClusterShape;
  using Schedule = ScheduleTags<Config::kSchedule, Config::kMainloop>;
  // The one-warpgroup cp.async kernel launches a CTA per tile; the others are persistent.
  static constexpr bool kPersistent = Config::kSchedule != configs::Sm90Schedule::kWarpSpecialized;

  static constexpr bool kFused = Fusion != EpilogueFusion::kPlain;
  static_assert(!kFused || std::is_void_v<OutT>, "a fused epilogue writes D in the operands' type");

  // ElementC = void: the epilogue reads no source matrix.
  using CollectiveEpilogue = typename cutlass::epilogue::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, TileShape, ClusterShape,
      typename Problem::EpilogueTile, ElementAccumulator, ElementAccumulator,
      void, typename Problem::LayoutD, kAlignmentD,
      ElementD, typename Problem::LayoutD, kAlignmentD,
      typename Schedule::Epilogue, typename FusionFor<Fusion, Problem::kSwap, ElementD>::type>::CollectiveOp;

  using BuiltMainloop = typename cutlass::gemm::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp,
      ElementAB, typename Problem::LayoutA, kAlignment,
      ElementAB, typename Problem::LayoutB, kAlignment,
      ElementAccumulator, TileShape, ClusterShape,
      cutlass::gemm::collective::StageCountAutoCarveout<
          static_cast<int>(sizeof(typename CollectiveEpilogue::SharedStorage))>,
      typename Schedule::Mainloop>::CollectiveOp;
  static constexpr int kPromoteKTiles = PromoteKTiles<Config>::value;
  using CollectiveMainloop = typename WithPromotion<BuiltMainloop, (kPromoteKTiles > 0)>::type;

  using ProblemShape = cute::Shape<int, int, int, int>;
  using GemmKernel = cutlass::gemm::kernel::GemmUniversal<
      ProblemShape, CollectiveMainloop, CollectiveEpilogue,
      typename SchedulerTag<Config::kScheduler>::type>;
  using Gemm = cutlass::gemm::device::GemmUniversalAdapter<GemmKernel>;
  using Arguments = typename Gemm::Arguments;

  // slices > 1: K cut into that many equal slices run as a batch (CUTLASS's L mode), batch
  // s reading K from s * K / slices, writing its own D (g.ldd * g.m elements apart). Otherwise
  // L is the call's batch (GemmArgs::batch, bmm), each operand's matrices its batch stride apart.
  static Arguments make_arguments(const GemmArgs& g, int slices = 1) {
    static_assert(!Problem::kSwap || std::is_void_v<OutT>, "K slices are not wired for swap-AB configs");
    const int m = static_cast<int>(g.m), n = static_cast<int>(g.n), k = static_cast<int>(g.k / slices);
    const int batch = slices > 1 ? slices : static_cast<int>(g.batch);
    // CUTLASS 3.x views B as N x K, so a row-major (K x N) torch B is "N-major". Each stride's
    // unit mode is static; make_stride_2d puts the leading dim in the other. Batch strides:
    // one K slice, or the call's (any value for a single matrix).
    const int64_t batch_a = slices > 1 ? (LA == Layout::kRowMajor ? k : k * g.lda) : g.batch_stride_a;
    const int64_t batch_b = slices > 1 ? (LB == Layout::kRowMajor ? k * g.ldb : k) : g.batch_stride_b;
    const int64_t batch_d = slices > 1 ? g.ldd * g.m : g.batch_stride_d;
    const auto stride_a = Problem::kSwap ? make_stride_2d<typename GemmKernel::StrideA>(g.ldb, batch_b)
                                         : make_stride_2d<typename GemmKernel::StrideA>(g.lda, batch_a);
    const auto stride_b = Problem::kSwap ? make_stride_2d<typename GemmKernel::StrideB>(g.lda, batch_a)
                                         : make_stride_2d<typename GemmKernel::StrideB>(g.ldb, batch_b);
    const auto stride_d = make_stride_2d<typename GemmKernel::StrideD>(g.ldd, batch_d);
    const void* a = Problem::kSwap ? g.b : g.a;
    const void* b = Problem::kSwap ? g.a : g.b;

    cutlass::KernelHardwareInfo hw_info;
    hw_info.device_id = g.device;
    hw_info.sm_count = g.sm_count;  // cached by the caller: no device query per call

    Arguments args{cutlass::gemm::GemmUniversalMode::kGemm,
                   Problem::kSwap ? ProblemShape{n, m, k, batch} : ProblemShape{m, n, k, batch},
                   {static_cast<const ElementAB*>(a), stride_a, static_cast<const ElementAB*>(b), stride_b},
                   {{}, nullptr, typename GemmKernel::StrideC{}, static_cast<ElementD*>(g.d), stride_d},
                   hw_info};
    args.epilogue.thread.alpha = 1.0f;
    args.epilogue.thread.beta = 0.0f;
    if constexpr (kFused) {
      args.epilogue.thread.alpha = g.epilogue.alpha;
      args.epilogue.thread.bias_ptr = static_cast<const ElementD*>(g.epilogue.bias);
      args.epilogue.thread.activation.kind = static_cast<int>(g.epilogue.activation);
    }
    if constexpr (kPromoteKTiles > 0) {
      // The interval counts MMA instructions: one K step issues TileK / (the MMA's K) of them.
      using TiledMma = typename CollectiveMainloop::TiledMma;
      constexpr int kMmasPerKTile = Config::kTileK / decltype(TiledMma{}.template tile_size_mnk<2>())::value;
      args.mainloop.mma_promotion_interval = kPromoteKTiles * kMmasPerKTile;
    }
    // Tile order: both schedulers walk the tiles in bands of max_swizzle_size, along M or N.
    using RasterOptions = cutlass::gemm::kernel::detail::RasterOrderOptions;
    switch (g.tile_order.raster) {
      case Raster::kHeuristic: args.scheduler.raster_order = RasterOptions::Heuristic; break;
      case Raster::kAlongM: args.scheduler.raster_order = RasterOptions::AlongM; break;
      case Raster::kAlongN: args.scheduler.raster_order = RasterOptions::AlongN; break;
    }
    args.scheduler.max_swizzle_size = g.tile_order.swizzle;
    if constexpr (Config::kScheduler == configs::Sm90Scheduler::kStreamK) {
      using Mode = cutlass::gemm::kernel::detail::DecompositionMode;
      // Deterministic: partial tiles are summed in K order (a turnstile), like a single CTA.
      args.scheduler.reduction_mode = cutlass::gemm::kernel::detail::ReductionMode::Deterministic;
      switch (g.decomposition) {
        case Decomposition::kDataParallel: args.scheduler.decomposition_mode = Mode::DataParallel; break;
        case Decomposition::kSplitK:
          args.scheduler.decomposition_mode = Mode::SplitK;
          args.scheduler.splits = g.splits;
          break;
        case Decomposition::kStreamK: args.scheduler.decomposition_mode = Mode::StreamK; break;
      }
    }
    return args;
  }

  static size_t workspace_bytes(const GemmArgs& g) { return workspace_bytes_sliced(g, 1); }
  static KernelStatus can_implement(const GemmArgs& g) { return can_implement_sliced(g, 1); }
  static KernelStatus run(const GemmArgs& g) { return run_sliced(g, 1); }

  static size_t workspace_bytes_sliced(const GemmArgs& g, int slices) {
    return Gemm::get_workspace_size(make_arguments(g, slices));
  }

  static KernelStatus can_implement_sliced(const GemmArgs& g, int slices) {
    if (Gemm::can_implement(make_arguments(g, slices)) == cutlass::Status::kSuccess) return {};
    return {KernelStatus::kNotSupported, "CUTLASS can_implement() rejected the problem"};
  }

  static KernelStatus run_sliced(const GemmArgs& g, int slices) {
    Arguments args = make_arguments(g, slices);
    cutlass::Status status = GemmKernel::initialize_workspace(args, g.workspace, g.stream);
    if (status != cutlass::Status::kSuccess) return from_cutlass(status);
    auto params = GemmKernel::to_underlying_arguments(args, g.workspace);
    const cudaError_t opt_in = opt_in_shared_memory_once<GemmKernel>(
        reinterpret_cast<const void*>(&cutlass::device_kernel<GemmKernel>), GemmKernel::SharedStorageSize,
        g.device);
    if (opt_in != cudaSuccess) return from_cuda(opt_in);
    return from_cutlass(Gemm::run(params, g.stream));
  }

  static KernelInfo info(const char* name) {
    return KernelInfo{
        .name = name,
        .config_id = Config::kId,
        .origin = Origin::kCutlass3x,
        .precision = P,
        .layout_a = LA,
        .layout_b = LB,
        .align_a = kAlignment,
        .align_b = kAlignment,
        .align_d = kCpAsync ? kAlignmentD : kAlignment,
        .min_cc = 90,
        .max_cc = 90,
        // The one-tile-per-CTA grid is (tiles along M, tiles along N, L): N's tiles on gridDim.y.
        .max_n = kPersistent ? INT64_MAX : kMaxGridYZ * Config::kTileN,
        .math = MathClass::kWgmma,
        .mainloop = kCpAsync ? Mainloop::kCpAsyncWarpSpecialized : Mainloop::kTmaWarpSpecialized,
        .tile_m = Config::kTileM,
        .tile_n = Config::kTileN,
        .tile_k = Config::kTileK,
        .cluster_m = Config::kClusterM,
        .cluster_n = Config::kClusterN,
        .stages = CollectiveMainloop::DispatchPolicy::Stages,
        .threads = static_cast<int>(GemmKernel::MaxThreadsPerBlock),
        .smem_bytes = static_cast<int>(GemmKernel::SharedStorageSize),
        .persistent = kPersistent,
        .pingpong = Config::kSchedule == configs::Sm90Schedule::kPingpong,
        .swap_ab = Config::kSwapAB,
        .decompositions = Config::kDecompositions,  // the kernel table's, from its scheduler
        .orders_tiles = kPersistent,
        .fuses_epilogue = kFused,
        // The fused bias is one row for the whole batch; bmm has no epilogue to fuse. The
        // cp.async builds are swept and tested on single products only.
        .batched = !kFused && !kCpAsync,
        .max_batch = INT_MAX,  // L, a 32-bit extent of the problem shape
        .workspace_bytes = &workspace_bytes,
        .can_implement = &can_implement,
        .run = &run,
    };
  }
};

}  // namespace cutlass_ops::sm90
