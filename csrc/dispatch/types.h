// The plain description of one GEMM that every layer shares.
//
// This header is the boundary between the torch-facing entry layer (csrc/ops) and the
// kernels (csrc/cutlass3x, csrc/cutlass2x, csrc/handwritten): it includes neither torch
// nor CUTLASS, so kernel translation units compile fast and could be used outside
// PyTorch, and the planner can be exercised on a machine without a GPU.
#pragma once

#include <cstddef>
#include <cstdint>

#include <cuda_runtime_api.h>

namespace cutlass_ops {

// What a kernel computes: the storage type of A, B and D, and how it multiplies.
enum class Precision : int8_t {
  kF16 = 0,   // float16 in and out, fp32 accumulate
  kBF16 = 1,  // bfloat16 in and out, fp32 accumulate
  kTF32 = 2,  // float32 in and out, TF32 tensor-core products, fp32 accumulate
  kF32 = 3,   // float32 in and out, IEEE fp32 fused multiply-add
  kF64 = 4,   // float64 in and out
  // float32 in and out, each operand split as big + small TF32 parts and multiplied as
  // big*big + big*small + small*big ("3xTF32"): close to fp32 accuracy on tensor cores.
  kTF32x3 = 5,
};
inline constexpr int kNumPrecisions = 6;

// Storage order of one matrix operand. Row-major: element (i, j) at i * ld + j.
enum class Layout : int8_t { kRowMajor = 0, kColMajor = 1 };

inline constexpr const char* precision_name(Precision p) {
  switch (p) {
    case Precision::kF16: return "f16";
    case Precision::kBF16: return "bf16";
    case Precision::kTF32: return "tf32";
    case Precision::kF32: return "f32";
    case Precision::kF64: return "f64";
    case Precision::kTF32x3: return "3xtf32";
  }
  return "?";
}

inline constexpr bool is_sixteen_bit(Precision p) { return p == Precision::kF16 || p == Precision::kBF16; }

inline constexpr int element_bytes(Precision p) {
  switch (p) {
    case Precision::kF16:
    case Precision::kBF16: return 2;
    case Precision::kTF32:
    case Precision::kF32:
    case Precision::kTF32x3: return 4;
    case Precision::kF64: return 8;
  }
  return 0;
}

// How a kernel divides the K loop of each output tile among CTAs.
enum class Decomposition : int8_t {
  kDataParallel = 0,  // one CTA per output tile, over the whole K
  kSplitK = 1,        // `splits` CTAs per tile, each a slice of K, summed in a fixed order
  kStreamK = 2,       // the tiles' K iterations spread evenly over the persistent CTAs
};
inline constexpr int decomposition_bit(Decomposition d) { return 1 << static_cast<int>(d); }

inline constexpr const char* decomposition_name(Decomposition d) {
  switch (d) {
    case Decomposition::kDataParallel: return "data-parallel";
    case Decomposition::kSplitK: return "split-k";
    case Decomposition::kStreamK: return "stream-k";
  }
  return "?";
}

// The order in which a persistent kernel walks its output tiles (CUTLASS 3.x SM90 kernels
// honour it: KernelInfo::orders_tiles; the others ignore it). Consecutive tiles run at once
// on neighbouring SMs, so the order decides which operand slabs they share in L2.
//   raster: kAlongM walks down a column of tiles first (the CTAs in flight share B's column
//     slabs), kAlongN along a row (they share A's); kHeuristic is CUTLASS's rule: along M
//     when the output has more tile columns than rows, else along N.
//   swizzle: the walk goes in bands 1, 2, 4 or 8 tiles wide, so a wave covers a squarer
//     patch of the output and reads less of both operands.
enum class Raster : int8_t { kHeuristic = 0, kAlongM = 1, kAlongN = 2 };

inline constexpr const char* raster_name(Raster r) {
  switch (r) {
    case Raster::kHeuristic: return "heuristic";
    case Raster::kAlongM: return "along-m";
    case Raster::kAlongN: return "along-n";
  }
  return "?";
}

struct TileOrder {
  Raster raster = Raster::kHeuristic;
  int swizzle = 1;  // 1, 2, 4 or 8

  bool is_default() const { return raster == Raster::kHeuristic && swizzle == 1; }
  bool operator==(const TileOrder& o) const { return raster == o.raster && swizzle == o.swizzle; }
};

inline constexpr char layout_letter(Layout l) { return l == Layout::kRowMajor ? 'r' : 'c'; }

// An activation applied to each element of D after the bias (torch's functions of one name).
enum class Activation : int8_t {
  kNone = 0,
  kReLU = 1,      // torch.relu: x <= 0 ? 0 : x (NaN stays NaN)
  kGELU = 2,      // F.gelu(approximate="none"): x * Phi(x), with erf
  kGELUTanh = 3,  // F.gelu(approximate="tanh")
  kSiLU = 4,      // F.silu: x * sigmoid(x)
};
inline constexpr int kNumActivations = 5;

inline constexpr const char* activation_name(Activation a) {
  switch (a) {
    case Activation::kNone: return "none";
    case Activation::kReLU: return "relu";
    case Activation::kGELU: return "gelu";
    case Activation::kGELUTanh: return "gelu_tanh";
    case Activation::kSiLU: return "silu";
  }
  return "?";
}

// What the epilogue does with each accumulator element of D (i, j):
//   D = activation(alpha * (A @ B) + bias[j])
// bias: one element of D's type per column (N of them, contiguous), or null. The default is
// the plain product. Kernels with KernelInfo::fuses_epilogue apply it while storing D; for the
// others the planner runs the product and then one elementwise pass (ops/epilogue.h).
struct EpilogueArgs {
  float alpha = 1.0f;
  const void* bias = nullptr;
  Activation activation = Activation::kNone;

  bool is_plain() const { return alpha == 1.0f && bias == nullptr && activation == Activation::kNone; }
};

// Everything a kernel launch needs: D (M x N, row-major, leading dim ldd) = A (M x K) * B (K x N),
// for each of `batch` matrices (bmm): matrix i of each operand starts batch_stride elements
// after matrix i - 1 (0: the same matrix for every i). The planner has already turned
// column-major outputs into the transposed problem, so kernels only ever write row-major D.
struct GemmArgs {
  int64_t m = 0, n = 0, k = 0;
  // Only kernels with KernelInfo::batched get batch > 1; the others run one matrix.
  int64_t batch = 1;
  int64_t batch_stride_a = 0, batch_stride_b = 0, batch_stride_d = 0;
  const void* a = nullptr;
  int64_t lda = 0;
  Layout layout_a = Layout::kRowMajor;
  const void* b = nullptr;
  int64_t ldb = 0;
  Layout layout_b = Layout::kRowMajor;
  void* d = nullptr;
  int64_t ldd = 0;

  int device = 0;    // CUDA ordinal; the caller has made it current
  int sm_count = 0;  // multiprocessors on `device` (persistent schedulers size their grid by it)
  // How to divide K (the kernel's KernelInfo::decompositions says which it supports).
  // Split-K and stream-K sum partial tiles in a fixed order: results are deterministic.
  Decomposition decomposition = Decomposition::kDataParallel;
  int splits = 1;  // K slices per tile for kSplitK; ignored otherwise
  TileOrder tile_order;  // for kernels with KernelInfo::orders_tiles; ignored otherwise
  EpilogueArgs epilogue;  // only kernels with KernelInfo::fuses_epilogue get one that is not plain

  void* workspace = nullptr;  // at least `workspace_bytes(args)` bytes, stream-ordered
  cudaStream_t stream = nullptr;
};

// Result of a kernel entry point. `message` is a static string (a CUTLASS status string
// or cudaGetErrorString) so it can cross shared-library boundaries without ownership.
struct KernelStatus {
  enum Code : int32_t {
    kOk = 0,
    kNotSupported = 1,  // the kernel cannot run this problem (can_implement said no)
    kLaunchFailed = 2,  // CUTLASS or CUDA reported an error while initialising or launching
  };
  Code code = kOk;
  const char* message = "success";

  bool ok() const { return code == kOk; }
};

}  // namespace cutlass_ops
