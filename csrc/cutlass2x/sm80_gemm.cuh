// CUTLASS 2.x GEMM for SM80 and everything after it that is not Hopper-specific:
// multistage cp.async + mma.sync tensor-op kernels, and SIMT kernels for IEEE float32 and
// for 16-bit operands too misaligned for cp.async.
//
// Instantiated by the generated translation units (csrc/generated/cutlass2x/gemm_*_sm80.cu,
// written by csrc/generate_kernels.py, a few configs to a file). setup.py builds this family as compute_80 PTX compiled to sm_80 and sm_90
// machine code (sm_80 code does not run on sm_90) plus the PTX itself, so the kernels run
// on A100, the SM86/89 parts, H100 and, through the driver's JIT, newer GPUs.
#pragma once

#include <algorithm>
#include <type_traits>

#include "cutlass/barrier.h"
#include "cutlass/cutlass.h"
#include "cutlass/epilogue/thread/linear_combination.h"
#include "cutlass/gemm/device/gemm_universal.h"
#include "cutlass/gemm/threadblock/threadblock_swizzle.h"

#include "common/launch.h"
#include "cutlass2x/f32_on_dmma_warp.h"
#include "cutlass2x/stream_k_flags.h"
#include "dispatch/configs.h"
#include "dispatch/kernel.h"

namespace cutlass_ops::sm80 {

// Storage element, accumulator, tensor-core instruction shape and math operator of each
// precision (on SM80-class instructions, or `Arch` 90 for Hopper's own mma.sync shapes).
template <Precision P, int Arch = 80>
struct PrecisionTraits;
template <>
struct PrecisionTraits<Precision::kF16> {
  using Element = cutlass::half_t;
  using Accumulator = float;
  using Instruction = cutlass::gemm::GemmShape<16, 8, 16>;
  using MathOp = cutlass::arch::OpMultiplyAdd;
};
template <>
struct PrecisionTraits<Precision::kBF16> {
  using Element = cutlass::bfloat16_t;
  using Accumulator = float;
  using Instruction = cutlass::gemm::GemmShape<16, 8, 16>;
  using MathOp = cutlass::arch::OpMultiplyAdd;
};
// float operands with OpMultiplyAdd: CUTLASS converts each fp32 value to TF32 in registers
// and issues TF32 mma.sync (warp/default_mma_tensor_op_sm80.h).
template <>
struct PrecisionTraits<Precision::kTF32> {
  using Element = float;
  using Accumulator = float;
  using Instruction = cutlass::gemm::GemmShape<16, 8, 8>;
  using MathOp = cutlass::arch::OpMultiplyAdd;
};
// 3xTF32 (CUTLASS example 27): OpMultiplyAddFastF32 splits each fp32 value into a TF32 "big"
// part and a TF32 remainder and sums big*big + big*small + small*big, which recovers close to
// fp32 accuracy at a third of the TF32 tensor-core rate.
template <>
struct PrecisionTraits<Precision::kTF32x3> {
  using Element = float;
  using Accumulator = float;
  using Instruction = cutlass::gemm::GemmShape<16, 8, 8>;
  using MathOp = cutlass::arch::OpMultiplyAddFastF32;
};
template <>
struct PrecisionTraits<Precision::kF32> {
  using Element = float;
  using Accumulator = float;
  using Instruction = cutlass::gemm::GemmShape<1, 1, 1>;  // SIMT only
  using MathOp = cutlass::arch::OpMultiplyAdd;
};
template <>
struct PrecisionTraits<Precision::kF64> {
  using Element = double;
  using Accumulator = double;
  using Instruction = cutlass::gemm::GemmShape<8, 8, 4>;
  using MathOp = cutlass::arch::OpMultiplyAdd;
};
// Hopper's DMMA.16x8x4 (cutlass/arch/mma_sm90.h): twice the rows per instruction of SM80's 8x8x4.
template <>
struct PrecisionTraits<Precision::kF64, 90> {
  using Element = double;
  using Accumulator = double;
  using Instruction = cutlass::gemm::GemmShape<16, 8, 4>;
  using MathOp = cutlass::arch::OpMultiplyAdd;
};
// IEEE float32 on Hopper's DMMA.16x8x8: float operands in shared memory, widened to float64 in
// registers, float64 sums, each result rounded to float32 once (f32_on_dmma_warp.h).
template <>
struct PrecisionTraits<Precision::kF32, 90> {
  using Element = float;
  using Accumulator = double;
  using Instruction = cutlass::gemm::GemmShape<16, 8, 8>;
  using MathOp = OpMultiplyAddF32OnF64;
};

// Configs with `kStreamK = true` (the kernel table's stream_k), and kernels whose D is narrower than their accumulator
// (Sm80Gemm::kStreamK), run CUTLASS 2.x's stream-K kernel (GemmUniversalStreamk, the
// kernel GemmUniversal picks for ThreadblockSwizzleStreamK). Its block mapping keeps whole
// waves of output tiles data-parallel and deals the K iterations of the tiles that would make
// a ragged last wave (with those of the wave before it, from one full wave up) evenly over all
// the SMs, scheduled first; their partial tiles are summed through the workspace in a fixed
// order (deterministic for a given problem and SM count). Where its cost model sees no gain
// it runs data-parallel.
template <Layout L>
using LayoutTag = std::conditional_t<L == Layout::kRowMajor, cutlass::layout::RowMajor,
                                     cutlass::layout::ColumnMajor>;

// `Alignment` (elements) applies to A, B and D alike, but for two epilogues that store one
// element per access whatever the operands allow: SIMT's, and float64 accumulators' (staged
// through shared memory a double at a time, as CUTLASS's DGEMM does). D is stored as
// `ElementD`, by default the operands' type (float32 on float64 DMMA stores float).
template <class Config, Precision P, Layout LA, Layout LB, int Alignment,
          class ElementD = typename PrecisionTraits<P, Config::kArch>::Element>
struct Sm80Gemm {
  using Traits = PrecisionTraits<P, Config::kArch>;
  using ArchTag = std::conditional_t<Config::kArch == 90, cutlass::arch::Sm90, cutlass::arch::Sm80>;
  using Element = typename Traits::Element;
  using Accumulator = typename Traits::Accumulator;
  using ElementOut = ElementD;
  using OpClass = std::conditional_t<Config::kSimt, cutlass::arch::OpClassSimt, cutlass::arch::OpClassTensorOp>;
  using InstructionShape =
      std::conditional_t<Config::kSimt, cutlass::gemm::GemmShape<1, 1, 1>, typename Traits::Instruction>;
  static constexpr int kAlignD = Config::kSimt || std::is_same_v<Accumulator, double> ? 1 : Alignment;
  // Serial split-K meets the K slices in D: each later slice adds its partial tile into the one
  // its predecessor left there. Where D is narrower than the accumulator (16-bit D over float
  // sums, float32 D over float64 sums on DMMA) every slice boundary would round a partial sum
  // to D's type, and the error would grow with the slice count (16-bit, 7x2x911 in 14 slices:
  // 1.2e-3 against torch.mm's 1.6e-4; `fuzz --seed 18`). Those kernels run CUTLASS's stream-K
  // kernel instead, whose partial tiles meet in its workspace in the accumulator's type: as
  // stream-K, and as split-K through the kernel's split factor (each tile's K cut into that many
  // slices, all running at once, one CTA per tile summing their partial tiles).
  static constexpr bool kDHoldsAccumulator = sizeof(ElementD) >= sizeof(Accumulator);
  static constexpr bool kStreamK = Config::kStreamK || !kDHoldsAccumulator;
  static constexpr bool kSplitKInWorkspace = kStreamK && !Config::kStreamK;
  static constexpr int kDecompositions =
      kSplitKInWorkspace ? Config::kDecompositions | decomposition_bit(Decomposition::kStreamK) : Config::kDecompositions;
  static constexpr int kSwizzleWidth = 8;
  using Swizzle = std::conditional_t<kStreamK, cutlass::gemm::threadblock::ThreadblockSwizzleStreamK,
                                     cutlass::gemm::threadblock::GemmIdentityThreadblockSwizzle<kSwizzleWidth>>;
  // The grid's limits (CUTLASS's can_implement refuses a grid beyond them). The identity
  // swizzle puts groups of kSwizzleWidth tile columns along gridDim.y; the stream-K swizzle
  // lays every tile along gridDim.x. A batch is gridDim.z with either.
  static constexpr int64_t kMaxN = kStreamK ? INT64_MAX : kMaxGridYZ * kSwizzleWidth * Config::kTileN;

  // D = 1 * accumulator + 0 * C: with beta = 0 the source is never read. Serial split-K
  // needs the general form: each later K slice's epilogue runs with beta = 1 and adds the
  // partial sum its predecessor left in D (C and D are the same buffer).
  using EpilogueOp = cutlass::epilogue::thread::LinearCombination<ElementD, kAlignD, Accumulator, Accumulator>;

  using Gemm = cutlass::gemm::device::GemmUniversal<
      Element, LayoutTag<LA>, Element, LayoutTag<LB>, ElementD, cutlass::layout::RowMajor, Accumulator,
      OpClass, ArchTag,
      cutlass::gemm::GemmShape<Config::kTileM, Config::kTileN, Config::kTileK>,
      cutlass::gemm::GemmShape<Config::kWarpM, Config::kWarpN, Config::kWarpK>, InstructionShape,
      EpilogueOp, Swizzle, Config::kStages,
      Alignment, Alignment, typename Traits::MathOp>;
  using Arguments = typename Gemm::Arguments;

  // A call's arguments. The stream-K kernel balances its blocks over the device's SMs, unless
  // CUTLASS would then remap its block indices (more than one CTA per SM, over two waves of
  // blocks): it gives hardware blocks 2i and 2i + 1 the logical blocks i and i + SMs, expecting
  // the pair on one SM, and Hopper places them on two, so one wave of over SMs/2 stream-K blocks
  // runs two to an SM on half the SMs. Balanced over one SM fewer, which CUTLASS never remaps
  // (it does only over the whole device): H200, the DMMA 64x64 tile's stream-K at 2320x24x768
  // 19.6 us against 24.2 remapped, 100x1600x1600 33.9 against 44.9; bf16 512x384x8192 on the
  // 64x64x32 tile 50.1 against 68.4 (docs/findings.md, "Two launches priced as they run"). The
  // cost model prices the same choice (cost_model.cpp, cutlass2x_balanced_split).
  static Arguments make_arguments(const GemmArgs& g) {
    Arguments args = make_arguments_over(g, g.sm_count);
    if (balances_stream_k(g)) {
      GemmWithoutWorkspace gemm;
      initialize_balanced(gemm, g, args);
    }
    return args;
  }

  // A stream-K launch of one matrix, balanced over the device's SMs (or one fewer).
  static bool balances_stream_k(const GemmArgs& g) {
    return kStreamK && g.batch == 1 && g.decomposition != Decomposition::kDataParallel && g.sm_count > 2;
  }

  // The arguments with the stream-K kernel balanced over `sms` SMs.
  static Arguments make_arguments_over(const GemmArgs& g, [[maybe_unused]] int sms_to_balance) {
    const cutlass::gemm::GemmCoord problem(static_cast<int>(g.m), static_cast<int>(g.n), static_cast<int>(g.k));
    const auto epilogue = typename EpilogueOp::Params(Accumulator(1), Accumulator(0));
    if (g.batch > 1) {
      // A batch (bmm): kBatched mode, the batch the grid's third dimension, data-parallel.
      const int batch = static_cast<int>(g.batch);
      if constexpr (kStreamK) {
        return Arguments(cutlass::gemm::GemmUniversalMode::kBatched, problem, batch, epilogue, g.a, g.b,
                         /*ptr_C=*/g.d, g.d, g.batch_stride_a, g.batch_stride_b, g.batch_stride_d,
                         g.batch_stride_d, g.lda, g.ldb, g.ldd, g.ldd, /*sms=*/1);
      } else {
        return Arguments(cutlass::gemm::GemmUniversalMode::kBatched, problem, batch, epilogue, g.a, g.b,
                         /*ptr_C=*/g.d, g.d, g.batch_stride_a, g.batch_stride_b, g.batch_stride_d,
                         g.batch_stride_d, g.lda, g.ldb, g.ldd, g.ldd);
      }
    }
    const int splits = g.decomposition == Decomposition::kSplitK ? g.splits : 1;
    if constexpr (kStreamK) {
      // The stream-K kernel's batch count in kGemm mode is its split factor (1: stream-K or
      // data-parallel; more: that many K slices per tile, CUTLASS's split-K emulation), its last
      // argument the SMs it balances over (1: plain data-parallel). With the device's SMs, a
      // split that leaves SMs idle gets separate reduction CTAs that sum the partial tiles.
      const int sms = g.decomposition == Decomposition::kDataParallel ? 1 : sms_to_balance;
      return Arguments(cutlass::gemm::GemmUniversalMode::kGemm, problem, /*batch_split=*/splits, epilogue, g.a, g.b,
                       /*ptr_C=*/g.d, g.d, /*batch strides=*/0, 0, 0, 0, g.lda, g.ldb, g.ldd, g.ldd, sms);
    } else {
      // kGemm with batch_count > 1 is CUTLASS 2.x's serial split-K: the slices of one tile take
      // turns (a semaphore in the workspace) to add into D, in K order.
      return Arguments(cutlass::gemm::GemmUniversalMode::kGemm, problem, /*batch_count=*/splits, epilogue, g.a, g.b,
                       /*ptr_C=*/g.d, g.d, /*batch strides=*/0, 0, 0, 0, g.lda, g.ldb, g.ldd, g.ldd);
    }
  }

  // CUTLASS 2.x's stream-K kernel, launched data-parallel (one matrix, no K slices), still asks
  // for a workspace and zeroes a barrier flag in it before every launch: with no stream-K blocks
  // the block mapping's region count and blocks per region keep FastDivmod's default divisor of
  // 1, so it counts one stream-K block (cutlass/gemm/kernel/gemm_universal_streamk.h, 4.2). That
  // is a cudaMemsetAsync before the GEMM, 0.8 us of GPU time plus a launch on the stream
  // (torch.profiler, H100, 15776x8x8 bf16 on the 64x64x32 a4 kernel, 2026-11-25). Data-parallel
  // blocks never touch the workspace, so those launches get none and skip the zeroing.
  static bool plain_data_parallel(const GemmArgs& g) {
    return kStreamK && g.batch == 1 && g.decomposition == Decomposition::kDataParallel;
  }

  // Initialises the kernel's parameters without the workspace step (plain_data_parallel), or
  // with the stream-K kernel's partial tiles in the call's workspace and its flags in a buffer
  // that is already zero (stream_k_flags.h), so that no memset precedes the launch.
  struct GemmWithoutWorkspace : Gemm {
    cutlass::Status initialize_parameters(const Arguments& args) { return this->init_params(args); }
    bool remaps_block_indices() const { return this->params_.block_mapping.remap_block_indices; }
    int reduction_blocks() const { return this->params_.block_mapping.reduction_blocks; }
    int stream_k_blocks() const {
      const auto& mapping = this->params_.block_mapping;
      return mapping.sk_regions() * mapping.sk_blocks_per_region();
    }
    // The stream-K kernel's workspace: its partial tiles, then its flags (cutlass::Barrier's int
    // each), every part rounded up to 128 bytes, as its Params lays them out (their size
    // functions are not public; flag_bytes() answers 0, and the caller zeroes as CUTLASS does,
    // unless the two add up to the public total).
    static size_t round_up(size_t bytes) { return (bytes + 127) / 128 * 128; }
    size_t partial_bytes() const {
      return round_up(Gemm::GemmKernel::kWorkspaceBytesPerBlock * static_cast<size_t>(stream_k_blocks()));
    }
    size_t flag_bytes() const {
      const int flags = std::max(stream_k_blocks(), reduction_blocks());
      const size_t bytes = round_up(sizeof(typename cutlass::Barrier::T) * static_cast<size_t>(flags));
      return partial_bytes() + bytes == this->params_.get_workspace_size() ? bytes : 0;
    }
    cutlass::Status use_workspace(void* workspace, void* flags) {
      auto& params = this->params_;
      const bool partials = partial_bytes() > 0;
      if (partials && workspace == nullptr) return cutlass::Status::kErrorWorkspaceNull;
      params.partials_workspace = partials ? workspace : nullptr;
      params.barrier_workspace = flags;
      return cutlass::Status::kSuccess;
    }
  };

  // Sets `args` to make_arguments(g) and initialises `gemm`'s parameters from them: one
  // init_params where CUTLASS keeps its block indices, a second over one SM fewer where it would
  // remap them. A split-K launch of kReductionCtasFromSlices slices or more keeps the whole
  // device, remapped, where one SM fewer would lose its reduction CTAs (its slices as many waves
  // as CTAs per SM, summed one after another) and its slices fill the two remapped waves, which
  // the remap then only reorders: bf16 1376x8x2464 "cc" split 24, 528 slices of a 5-CTA/SM tile,
  // 4 waves over 132 SMs, 5 over 131: 15.2 us against 35.6 (H200). The cost model prices the
  // same choice (cost_model.cpp, cutlass2x_slices_reduced_apart).
  static cutlass::Status initialize_balanced(GemmWithoutWorkspace& gemm, const GemmArgs& g, Arguments& args) {
    args = make_arguments_over(g, g.sm_count);
    cutlass::Status status = gemm.initialize_parameters(args);
    if constexpr (kStreamK) {
      if (status == cutlass::Status::kSuccess && balances_stream_k(g) && gemm.remaps_block_indices()) {
        const bool reduced_apart = gemm.reduction_blocks() > 0;
        const bool fills_remapped_waves = gemm.stream_k_blocks() >= 2 * g.sm_count;
        Arguments fewer = make_arguments_over(g, g.sm_count - 1);
        status = gemm.initialize_parameters(fewer);
        if (status == cutlass::Status::kSuccess && g.decomposition == Decomposition::kSplitK &&
            g.splits >= kReductionCtasFromSlices && reduced_apart && gemm.reduction_blocks() == 0 &&
            fills_remapped_waves) {
          status = gemm.initialize_parameters(args);  // the whole device's, as first
        } else {
          args = fewer;
        }
      }
    }
    return status;
  }

  static size_t workspace_bytes(const GemmArgs& g) {
    return plain_data_parallel(g) ? 0 : Gemm::get_workspace_size(make_arguments(g));
  }

  static KernelStatus can_implement(const GemmArgs& g) {
    if (Gemm::can_implement(make_arguments(g)) == cutlass::Status::kSuccess) return {};
    return {KernelStatus::kNotSupported, "CUTLASS can_implement() rejected the problem"};
  }

  static KernelStatus run(const GemmArgs& g) {
    // GemmUniversalBase caches the device's SM count and the shared-memory opt-in in
    // thread-local statics per device, so initialize() is cheap after the first call.
    GemmWithoutWorkspace gemm;
    cutlass::Status status;
    if (plain_data_parallel(g)) {
      status = gemm.initialize_parameters(make_arguments(g));
    } else if constexpr (kStreamK) {
      // One matrix (kGemm: the mode whose workspace CUTLASS zeroes): flags already zero where
      // the stream has them, else CUTLASS's own zeroing.
      Arguments args;
      status = initialize_balanced(gemm, g, args);
      const size_t flag_bytes = status == cutlass::Status::kSuccess && g.batch == 1 ? gemm.flag_bytes() : 0;
      void* flags = flag_bytes > 0 ? stream_k_flags(g.stream, flag_bytes) : nullptr;
      if (status == cutlass::Status::kSuccess) {
        status = flags != nullptr ? gemm.use_workspace(g.workspace, flags) : gemm.initialize(args, g.workspace, g.stream);
      }
    } else {
      status = gemm.initialize(make_arguments(g), g.workspace, g.stream);
    }
    if (status != cutlass::Status::kSuccess) return from_cutlass(status);
    return from_cutlass(gemm.run(g.stream));
  }

  // What CUTLASS's own host code uses to split stream-K work and to choose between summing K
  // slices serially or in its workspace (GemmUniversalBase::init_device_props).
  static int max_active_ctas() { return Gemm::maximum_active_blocks(); }

  static KernelInfo info(const char* name) {
    // The two-stage kernel loads through registers (MmaPipelined); more stages use cp.async.
    constexpr Mainloop kMainloop = Config::kStages == 2 ? Mainloop::kRegisterStaged : Mainloop::kCpAsyncMultistage;
    return KernelInfo{
        .name = name,
        .config_id = Config::kId,
        .origin = Origin::kCutlass2x,
        .precision = P,
        .layout_a = LA,
        .layout_b = LB,
        .align_a = Alignment,
        .align_b = Alignment,
        .align_d = kAlignD,
        .min_cc = Config::kArch,
        .max_cc = Config::kArch == 90 ? 90 : kAnyNewerCC,
        .max_n = kMaxN,
        .math = Config::kSimt ? MathClass::kSimt : MathClass::kMma,
        .accumulator_bytes = static_cast<int>(sizeof(Accumulator)),
        .mainloop = kMainloop,
        .tile_m = Config::kTileM,
        .tile_n = Config::kTileN,
        .tile_k = Config::kTileK,
        .stages = Config::kStages,
        .threads = static_cast<int>(Gemm::GemmKernel::kThreadCount),
        .smem_bytes = static_cast<int>(sizeof(typename Gemm::GemmKernel::SharedStorage)),
        .decompositions = kDecompositions,
        .slice_sum = kSplitKInWorkspace ? SliceSum::kStreamKWorkspace : SliceSum::kSerial,
        .reduction_ctas_per_tile = kStreamK ? static_cast<int>(Gemm::GemmKernel::Epilogue::kAccumulatorFragments) : 0,
        .batched = true,
        .max_batch = kMaxGridYZ,
        .workspace_bytes = &workspace_bytes,
        .can_implement = &can_implement,
        .run = &run,
        .max_active_ctas = &max_active_ctas,
    };
  }
};

}  // namespace cutlass_ops::sm80
