#include "dispatch/planner.h"

#include <algorithm>
#include <climits>
#include <cstring>

#include "dispatch/heuristic.h"
#include "dispatch/registry.h"
#include "dispatch/tuning.h"

namespace cutlass_ops {

namespace {

Layout flip(Layout l) { return l == Layout::kRowMajor ? Layout::kColMajor : Layout::kRowMajor; }

// Alignment of a kernel operand `rows x cols` stored in `layout` with leading dim `ld`.
int operand_alignment(uint64_t address, Layout layout, int64_t ld, int64_t rows, int64_t cols,
                      int elem_bytes) {
  const int64_t contiguous_extent = layout == Layout::kRowMajor ? cols : rows;
  return alignment_elements(address, ld, contiguous_extent, elem_bytes);
}

const char* layout_name(Layout l) { return l == Layout::kRowMajor ? "row-major" : "column-major"; }

// How an operand reaches the kernel: as it is, or, when no BLAS layout describes its strides
// (or the caller insists), as a contiguous copy from the caching allocator, whose address 0
// stands for "aligned to anything".
struct Staged {
  OperandLayout layout;
  uint64_t address;
  bool copied;
};

Staged stage(const MatrixDesc& m, bool must_copy = false) {
  const OperandLayout layout = classify(m);
  if (layout.blas_compatible && !must_copy) return {layout, m.address, false};
  return {contiguous_layout(m), 0, true};
}

}  // namespace

Plan normalize(const CallDesc& call) {
  Plan p;
  p.precision = call.precision;
  const int eb = element_bytes(call.precision);
  const int64_t M = call.a.rows, K = call.a.cols, N = call.b.cols;

  const Staged a = stage(call.a), b = stage(call.b), d = stage(call.d, call.d_overlaps_input);
  p.copy_a = a.copied;
  p.copy_b = b.copied;
  p.d_via_temp = d.copied;
  const OperandLayout &la = a.layout, &lb = b.layout;
  OperandLayout ld = d.layout;
  const uint64_t addr_a = a.address, addr_b = b.address, addr_d = d.address;
  // An M x 1 result with unit row stride is a column as much as a row: take the transposed
  // problem, 1 x M = mat2^T (1 x K) * self^T (K x M), a matrix-vector product that the
  // few-row kernels (swap-AB) run at bandwidth. Untransposed it would be one column of
  // tiles with an unaligned N.
  if (N == 1 && M > 1 && (d.copied || call.d.stride_row == 1)) ld = {true, Layout::kColMajor, M};

  p.k = K;
  if (ld.layout == Layout::kRowMajor) {
    p.m = M;
    p.n = N;
    p.a = {la.layout, la.ld, operand_alignment(addr_a, la.layout, la.ld, M, K, eb)};
    p.b = {lb.layout, lb.ld, operand_alignment(addr_b, lb.layout, lb.ld, K, N, eb)};
  } else {
    // D is column-major, so D^T (N x M) is row-major with the same leading dim:
    // D^T = mat2^T (N x K) * self^T (K x M). Transposing a view flips its layout and
    // keeps its leading dim; no data moves.
    p.transposed = true;
    p.m = N;
    p.n = M;
    if (N == 1 && (b.copied || call.b.stride_row == 1)) {
      // mat2 is a K x 1 column with unit stride, so mat2^T is a contiguous 1 x K row.
      const int64_t ld_row = std::max<int64_t>(1, K);
      p.a = {Layout::kRowMajor, ld_row, operand_alignment(addr_b, Layout::kRowMajor, ld_row, 1, K, eb)};
    } else {
      p.a = {flip(lb.layout), lb.ld, operand_alignment(addr_b, flip(lb.layout), lb.ld, N, K, eb)};
    }
    p.b = {flip(la.layout), la.ld, operand_alignment(addr_a, flip(la.layout), la.ld, K, M, eb)};
  }
  p.d = {Layout::kRowMajor, ld.ld,
         operand_alignment(addr_d, Layout::kRowMajor, ld.ld, p.m, p.n, eb)};
  return p;
}

Rejection check_kernel(const KernelInfo& k, const Plan& p, const DeviceDesc& dev) {
  if (k.precision != p.precision) return Rejection::kPrecision;
  if (k.layout_a != p.a.layout || k.layout_b != p.b.layout) return Rejection::kLayout;
  if (dev.cc < k.min_cc || dev.cc > k.max_cc) return Rejection::kArch;
  if (k.smem_bytes > dev.smem_optin_bytes) return Rejection::kSharedMemory;
  // CUTLASS problem shapes are 32-bit.
  if (p.m > INT_MAX || p.n > INT_MAX || p.k > INT_MAX) return Rejection::kTooLarge;
  if (p.m > k.max_m) return Rejection::kTooManyRows;
  if (p.n % k.n_multiple != 0) return Rejection::kRowLength;
  // Alignments are powers of two, so "at least" means "a multiple of".
  if (p.a.align < k.align_a) return Rejection::kAlignA;
  if (p.b.align < k.align_b) return Rejection::kAlignB;
  if (p.d.align < k.align_d) return Rejection::kAlignD;
  return Rejection::kNone;
}

std::string describe_rejection(Rejection why, const KernelInfo& k, const Plan& p,
                               const DeviceDesc& dev) {
  using std::to_string;
  const std::string operands = p.transposed ? " (of the transposed problem D^T = mat2^T self^T)" : "";
  switch (why) {
    case Rejection::kNone:
      return "";
    case Rejection::kPrecision:
      return std::string("computes ") + precision_name(k.precision) + ", the call needs " +
             precision_name(p.precision);
    case Rejection::kLayout:
      return std::string("takes A ") + layout_name(k.layout_a) + " and B " + layout_name(k.layout_b) +
             ", the problem has A " + layout_name(p.a.layout) + " and B " + layout_name(p.b.layout) +
             operands;
    case Rejection::kArch:
      return "runs on compute capability " + to_string(k.min_cc / 10) + "." + to_string(k.min_cc % 10) +
             (k.max_cc == kAnyNewerCC ? std::string(" and newer")
                                      : k.max_cc == k.min_cc
                                            ? std::string(" only")
                                            : " to " + to_string(k.max_cc / 10) + "." + to_string(k.max_cc % 10)) +
             ", the device is " + to_string(dev.cc / 10) + "." + to_string(dev.cc % 10);
    case Rejection::kSharedMemory:
      return "needs " + to_string(k.smem_bytes) + " bytes of shared memory per block, the device allows " +
             to_string(dev.smem_optin_bytes);
    case Rejection::kTooLarge:
      return "M, N and K must each fit in 32 bits; the problem is " + to_string(p.m) + "x" + to_string(p.n) +
             "x" + to_string(p.k);
    case Rejection::kTooManyRows:
      return "takes at most " + to_string(k.max_m) + " rows (M), the problem has M = " + to_string(p.m) + operands;
    case Rejection::kRowLength:
      return "needs the output's row length N a multiple of " + to_string(k.n_multiple) + ", the problem has N = " +
             to_string(p.n) + operands;
    case Rejection::kAlignA:
      return "needs A aligned to " + to_string(k.align_a) + " elements (address, leading dim " +
             to_string(p.a.ld) + " and contiguous extent), A is aligned to " + to_string(p.a.align) + operands;
    case Rejection::kAlignB:
      return "needs B aligned to " + to_string(k.align_b) + " elements (address, leading dim " +
             to_string(p.b.ld) + " and contiguous extent), B is aligned to " + to_string(p.b.align) + operands;
    case Rejection::kAlignD:
      return "needs the output aligned to " + to_string(k.align_d) + " elements (address, leading dim " +
             to_string(p.d.ld) + " and row length " + to_string(p.n) + "), it is aligned to " +
             to_string(p.d.align) + operands;
  }
  return "unknown";
}

namespace {

int64_t round_up(int64_t x, int64_t to) { return (x + to - 1) / to * to; }

// The heuristic's choice for a normalised (or staged) plan, or nullptr; `order` (if given)
// gets the tile order the heuristic names for it.
const KernelInfo* preferred_kernel(const Plan& p, const DeviceDesc& dev, const char** reason,
                                   TileOrder* order = nullptr) {
  if (order != nullptr) *order = {};
  const auto& candidates = Registry::instance().candidates(p.precision, p.a.layout, p.b.layout);
  const Preference pref = preferred_configs(p, dev);
  for (int i = 0; i < pref.count; ++i) {
    const KernelInfo* best = nullptr;
    for (const KernelInfo* k : candidates) {
      if (std::strcmp(k->config, pref.configs[i]) != 0) continue;
      if (check_kernel(*k, p, dev) != Rejection::kNone) continue;
      // Several alignment variants of one config: the widest accesses win.
      if (!best || k->align_a + k->align_b + k->align_d > best->align_a + best->align_b + best->align_d) {
        best = k;
      }
    }
    if (best) {
      *reason = pref.reasons[i];
      if (order != nullptr) *order = pref.orders[i];
      return best;
    }
  }
  if (pref.only_these) return nullptr;
  for (const KernelInfo* k : candidates) {
    // The hand-written kernels are for study and comparison: only kernel= runs them.
    if (k->origin == Origin::kHandwritten) continue;
    if (check_kernel(*k, p, dev) == Rejection::kNone) {
      *reason = "no preferred config accepts the problem: first registered kernel that does";
      return k;
    }
  }
  *reason = "no kernel in this build accepts the problem";
  return nullptr;
}

}  // namespace

Plan stage(const Plan& p, Layout b_layout) {
  Plan s = p;
  const int align = 16 / element_bytes(p.precision);
  s.staged = true;
  s.copy_a = s.copy_b = s.d_via_temp = false;
  // Only contiguous extents must be multiples of the alignment: K for a row-major A and a
  // column-major B, N for a row-major B and for D. M never is.
  s.k = round_up(p.k, align);
  s.n = round_up(p.n, align);
  s.a = {Layout::kRowMajor, s.k, align};
  s.b = b_layout == Layout::kRowMajor ? OperandPlan{Layout::kRowMajor, s.n, align}
                                      : OperandPlan{Layout::kColMajor, s.k, align};
  s.d = {Layout::kRowMajor, s.n, align};
  return s;
}

Plan with_kmajor_b(const Plan& p) {
  Plan c = p;
  c.copy_b_kmajor = true;
  // The K-major copy replaces any other copy of the kernel's B: mat2, or self for a
  // transposed plan (whose kernel B is self^T).
  (p.transposed ? c.copy_a : c.copy_b) = false;
  // A fresh allocation (address 0: aligned to anything), K x N column-major with ld = K.
  const int64_t ld = std::max<int64_t>(1, p.k);
  c.b = {Layout::kColMajor, ld, operand_alignment(0, Layout::kColMajor, ld, p.k, p.n, element_bytes(p.precision))};
  return c;
}

void set_kernel(Plan& p, const KernelInfo& kernel, const DeviceDesc& dev, TileOrder order) {
  p.kernel = &kernel;
  const DecompositionChoice d = choose_decomposition(p, kernel, dev);
  p.decomposition = d.decomposition;
  p.splits = d.splits;
  p.tile_order = kernel.orders_tiles ? order : TileOrder{};
}

namespace {

// A TMA + WGMMA kernel: CUTLASS 3.x, or the hand-written step 6 (both sm_90a only).
bool is_sm90_tensor_kernel(const KernelInfo* k) {
  return k != nullptr && k->min_cc == 90 && k->precision != Precision::kF64;
}

// Row-major B with TF32 on Hopper: when a K-major copy of B (the transposing kernel of
// ops/kmajor_copy.cu) for the "rc" kernels beats the swap-AB kernels, which transpose B^T
// from shared memory into registers every K step. The copy moves K x N, the GEMM works
// M x N x K. Measured on an H100 (benchmarks/RESULTS.md):
//  - From 8192 rows (eleventh session): the "rc" 128x256 kernel alone ran 1.06-1.37x the
//    swapped 256x128 one (16384^3: 23.0 ms against 31.4), where a copy at plain-copy speed
//    cost 3-7% of cuBLAS's time; at 4096^3 the copy (50 us of 345) outweighed the gain.
//  - Small problems, row-major A too (twelfth session): latency-bound, the swapped kernels
//    ran 0.76-0.80x cuBLAS while the "rc" ones alone ran 1.07-1.24x, and a B of at most 4 MiB
//    costs the copy a few microseconds: 512^3 "rc" 8.8 us + copy against 13.6 swapped, 1024^3
//    14.1 + copy against 22.9; 256^3 about even (so from 512 rows); 2048^3 (a 16 MiB B) and
//    1024x2048x4096 (32 MiB) lose.
constexpr int64_t kTf32KmajorCopyMinRows = 8192;
constexpr int64_t kTf32SmallCopyMinRows = 512;
constexpr int64_t kTf32SmallCopyMaxB = int64_t{1} << 20;  // elements of B (K x N): 4 MiB

bool tf32_copies_b_kmajor(const Plan& p, const DeviceDesc& dev) {
  if (dev.cc != 90 || p.precision != Precision::kTF32 || p.b.layout != Layout::kRowMajor || p.copy_b_kmajor) {
    return false;
  }
  return p.m >= kTf32KmajorCopyMinRows || (p.a.layout == Layout::kRowMajor && p.m >= kTf32SmallCopyMinRows &&
                                           p.k * p.n <= kTf32SmallCopyMaxB);
}

// The heuristic's kernel (and staging) for a normalised plan.
void choose_by_heuristic(Plan& p, const DeviceDesc& dev) {
  p.kernel = preferred_kernel(p, dev, &p.reason, &p.tile_order);
  if (tf32_copies_b_kmajor(p, dev)) {
    Plan c = with_kmajor_b(p);
    const char* reason = "";
    const KernelInfo* k = preferred_kernel(c, dev, &reason, &c.tile_order);
    if (is_sm90_tensor_kernel(k)) {
      p = c;
      p.kernel = k;
      p.reason = p.m >= kTf32KmajorCopyMinRows
                     ? "tf32 row-major B, >= 8192 rows: B copied K-major (column-major) for the SM90 \"rc\" kernel, "
                       "faster than the swap-AB kernels there"
                     : "tf32 row-major A and B, >= 512 rows, B of <= 4 MiB: B copied K-major (column-major) for the "
                       "SM90 \"rc\" kernel, faster than the swap-AB kernels there";
      return;
    }
  }
  // On Hopper, 16-bit and TF32 problems that break TMA's 16-byte rule (odd widths, storage
  // offsets) would fall to SM80-class kernels; zero-padded aligned copies let the SM90
  // kernels take them when the copies cost less than the slower kernel would.
  const bool stageable = dev.cc == 90 && (is_sixteen_bit(p.precision) || p.precision == Precision::kTF32);
  if (!stageable || is_sm90_tensor_kernel(p.kernel)) return;
  if (p.b.layout == Layout::kRowMajor) {
    // Only B's layout keeps the SM90 kernels out (TF32 WGMMA reads K-major operands only):
    // a K-major copy of B alone, when A and the output suit the SM90 kernel as they are.
    Plan c = with_kmajor_b(p);
    const char* reason = "";
    const KernelInfo* k = preferred_kernel(c, dev, &reason);
    if (is_sm90_tensor_kernel(k)) {
      if (prefer_staging(p, p.kernel, c, *k, dev)) {
        p = c;
        p.kernel = k;
        p.reason = "B copied K-major (column-major) for the SM90 kernel, which cannot read it as it is";
      }
      return;
    }
  }
  for (const Layout b_layout : {Layout::kRowMajor, Layout::kColMajor}) {
    const Plan s = stage(p, b_layout);
    const char* reason = "";
    const KernelInfo* k = preferred_kernel(s, dev, &reason);
    if (!is_sm90_tensor_kernel(k)) continue;
    if (prefer_staging(p, p.kernel, s, *k, dev)) {
      p = s;
      p.kernel = k;
      p.reason = "operands not 16-byte aligned: staged into zero-padded aligned copies for the SM90 kernel";
    }
    return;
  }
}

}  // namespace

void choose_kernel(Plan& p, const DeviceDesc& dev) {
  choose_by_heuristic(p, dev);
  if (p.kernel == nullptr && p.precision == Precision::kTF32x3) {
    // No 3xTF32 kernel takes it (unaligned operands, say): IEEE fp32, which is more accurate.
    p.precision = Precision::kF32;
    choose_by_heuristic(p, dev);
  }
  if (p.kernel == nullptr) return;
  set_kernel(p, *p.kernel, dev, p.tile_order);  // the heuristic's order, until a table entry names one
  TuningEntry tuned;
  if (TuningTable::instance().find(tuning_key(p, dev), &tuned)) {
    if (check_kernel(*tuned.kernel, p, dev) == Rejection::kNone &&
        (tuned.kernel->decompositions & decomposition_bit(tuned.decomposition)) != 0) {
      p.kernel = tuned.kernel;
      p.decomposition = tuned.decomposition;
      p.splits = tuned.splits;
      if (tuned.kernel->orders_tiles) p.tile_order = tuned.tile_order;
      p.tuned = true;
      p.reason = "tuning table: the fastest kernel measured for this problem";
    }
  }
}

Plan make_plan(const CallDesc& call, const DeviceDesc& device) {
  Plan p = normalize(call);
  choose_kernel(p, device);
  return p;
}

}  // namespace cutlass_ops
