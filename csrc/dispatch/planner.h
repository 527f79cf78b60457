// From "these tensors, this device" to "this kernel, on this problem": layout
// normalisation, alignment, and the kernel choice. No torch, no CUTLASS, no GPU: the
// entry layer calls it on every matmul, and cutlass_ops.plan() calls it with made-up
// devices and strides so dispatch decisions can be tested anywhere.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "dispatch/kernel.h"
#include "dispatch/layout.h"

namespace cutlass_ops {

// Precision policy: float32 opted into 3xTF32 runs it only from this K. Its error has a floor
// (about 1.3e-7 to 3.5e-7 relative to float64: the rounding of its TF32 parts and of the
// float32 output), where torch's IEEE fp32 error grows from below it like sqrt(K). Measured on
// an H100 (bench --dtype 3xtf32): at K = 32 and 64 the 3xTF32 error was 1.3-1.4x torch's, at
// K >= 1021 below it on every problem. Below this K the call runs IEEE fp32, which is torch's
// own accuracy.
inline constexpr int64_t kTf32x3MinK = 256;

struct DeviceDesc {
  int cc = 0;                // 10 * major + minor
  int sm_count = 0;
  int smem_optin_bytes = 0;  // cudaDevAttrMaxSharedMemoryPerBlockOptin
  // Peak SM clock and DRAM bandwidth, for the cost model's estimates on devices without a
  // calibration (0: unknown, the compute capability's usual figure is taken).
  int clock_mhz = 0;
  int dram_gbps = 0;
};

// One call, as the caller's tensors describe it: self (M x K) times mat2 (K x N) into d, for
// each of `batch` matrices (bmm; MatrixDesc::stride_batch apart).
struct CallDesc {
  Precision precision = Precision::kF32;
  int64_t batch = 1;
  MatrixDesc a, b;
  MatrixDesc d;                  // the output view, M x N; a fresh result is contiguous
  bool d_overlaps_input = false; // out shares memory with self or mat2
  // The call's result goes through an epilogue (EpilogueArgs: alpha, a bias along N, an
  // activation): linear and addmm. Fused-epilogue kernels take it on plans that are neither
  // transposed nor staged; any other kernel is followed by one elementwise pass over D.
  bool epilogue = false;
};

struct OperandPlan {
  Layout layout = Layout::kRowMajor;
  int64_t ld = 0;
  // alignment_elements() of the operand as the kernel will see it (of a batch: of every matrix's
  // start, so the batch stride counts too)
  int align = 0;
  int64_t batch_stride = 0;  // elements from one matrix of a batch to the next
};

struct Plan {
  Precision precision = Precision::kF32;
  bool copy_a = false;      // self's strides fit no BLAS layout: the entry layer copies it
  bool copy_b = false;      // likewise mat2
  bool d_via_temp = false;  // the kernel writes a contiguous temporary, then out.copy_(temp)
  bool transposed = false;  // output is column-major: compute D^T = mat2^T * self^T
  // Staged: the kernel's operands are zero-padded, 16-byte aligned copies (K and N rounded up),
  // its output a padded temporary; m, n, k below are the padded sizes. Supersedes the copy
  // and temporary flags above.
  bool staged = false;
  // The kernel's B (mat2, or self^T for a transposed plan) is a contiguous column-major
  // (K-major) copy: TF32 WGMMA reads K-major operands only, and for row-major B a copy plus
  // the SM90 kernel beats the SM80 kernel that reads it in place (large problems). A and
  // the output are used in place.
  bool copy_b_kmajor = false;

  // The problem the kernel sees, after the copies and the transposition above: `batch`
  // products of m x n x k (bmm; 1 for mm).
  int64_t m = 0, n = 0, k = 0;
  int64_t batch = 1;
  OperandPlan a, b, d;

  const KernelInfo* kernel = nullptr;  // nullptr: no kernel in this build accepts it
  const char* reason = "";             // one line: why the heuristic picked this kernel
  // How the kernel divides K (always one the kernel supports).
  Decomposition decomposition = Decomposition::kDataParallel;
  int splits = 1;
  TileOrder tile_order;  // default unless the tuning table says otherwise (kernel->orders_tiles)
  bool tuned = false;  // kernel and decomposition came from the tuning table (dispatch/tuning.h)
  bool epilogue = false;  // CallDesc::epilogue

  // The kernel applies the epilogue itself; otherwise (with one) an elementwise pass follows it.
  bool fuses_epilogue() const { return epilogue && kernel != nullptr && kernel->fuses_epilogue; }
  bool needs_epilogue_pass() const { return epilogue && !fuses_epilogue(); }
};

// Everything except the kernel choice.
Plan normalize(const CallDesc& call);

// Why a kernel cannot run a normalised problem (kNone: it can).
enum class Rejection {
  kNone,
  kPrecision,
  kLayout,
  kArch,
  kSharedMemory,
  kAlignA,
  kAlignB,
  kAlignD,
  kTooLarge,
  kTooManyRows,
  kTooManyColumns,
  kRowLength,
  kEpilogue,  // a fused-epilogue kernel, and the call has no epilogue it can fuse
  kBatch,     // a batch of products, and the kernel runs one at a time
  kBatchTooLarge,  // a batch of more matrices than one launch of the kernel takes (max_batch)
};
Rejection check_kernel(const KernelInfo& kernel, const Plan& plan, const DeviceDesc& device);
// The device's part of check_kernel: its compute capability and shared memory (kArch,
// kSharedMemory), whatever the problem.
Rejection check_device(const KernelInfo& kernel, const DeviceDesc& device);
std::string describe_rejection(Rejection why, const KernelInfo& kernel, const Plan& plan,
                               const DeviceDesc& device);

// Fills plan.kernel, plan.reason and the decomposition with the tuning table's entry for the
// problem when it has one, else the heuristic's choice (kernel == nullptr when nothing in
// the registry accepts the problem); may turn the plan into a staged one.
void choose_kernel(Plan& plan, const DeviceDesc& device);

// `plan` with the kernel's B read from a K-major (column-major, ld = K) contiguous copy.
Plan with_kmajor_b(const Plan& plan);

// Puts `kernel` on the plan with the heuristic's decomposition for it (forced kernels, autotuning),
// launched in tile order `order` if the kernel orders its tiles.
void set_kernel(Plan& plan, const KernelInfo& kernel, const DeviceDesc& device, TileOrder order = {});

// `plan` run on zero-padded, 16-byte aligned copies: A row-major, B in `b_layout`, D a
// padded row-major temporary.
Plan stage(const Plan& plan, Layout b_layout);

// normalize + choose_kernel.
Plan make_plan(const CallDesc& call, const DeviceDesc& device);

}  // namespace cutlass_ops
