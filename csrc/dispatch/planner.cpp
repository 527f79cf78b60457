#include "dispatch/planner.h"

#include <algorithm>
#include <climits>
#include <cstring>

#include "dispatch/candidates.h"
#include "dispatch/cost_model.h"
#include "dispatch/plan_cache.h"
#include "dispatch/registry.h"
#include "dispatch/tuning.h"

namespace cutlass_ops {

namespace {

Layout flip(Layout l) { return l == Layout::kRowMajor ? Layout::kColMajor : Layout::kRowMajor; }

// Alignment of a kernel operand `rows x cols` stored in `layout` with leading dim `ld`; of a
// batch, of every matrix's start (batch_stride elements apart).
int operand_alignment(uint64_t address, Layout layout, int64_t ld, int64_t rows, int64_t cols,
                      int elem_bytes, int64_t batch_stride = 0) {
  const int64_t contiguous_extent = layout == Layout::kRowMajor ? cols : rows;
  int align = alignment_elements(address, ld, contiguous_extent, elem_bytes);
  while (align > 1 && batch_stride % align != 0) align /= 2;
  return align;
}

const char* layout_name(Layout l) { return l == Layout::kRowMajor ? "row-major" : "column-major"; }

// How an operand reaches the kernel: as it is, or, when no BLAS layout describes its strides
// (or the caller insists), as a contiguous copy from the caching allocator, whose address 0
// stands for "aligned to anything" and whose matrices lie one after another.
struct Staged {
  OperandLayout layout;
  uint64_t address;
  bool copied;
  int64_t batch_stride;
};

Staged stage(const MatrixDesc& m, bool must_copy = false) {
  const OperandLayout layout = classify(m);
  if (layout.blas_compatible && !must_copy) return {layout, m.address, false, m.stride_batch};
  return {contiguous_layout(m), 0, true, m.rows * m.cols};
}

}  // namespace

Plan normalize(const CallDesc& call) {
  Plan p;
  p.precision = call.precision;
  p.epilogue = call.epilogue;
  p.batch = call.batch;
  const int eb = element_bytes(call.precision);
  const int64_t M = call.a.rows, K = call.a.cols, N = call.b.cols;
  // Batch strides count only for a batch (a single matrix's is whatever torch says).
  const auto batch_stride = [&](const Staged& s) { return call.batch > 1 ? s.batch_stride : int64_t{0}; };

  // An output whose matrices share elements (a batch stride too small for them) is written
  // through a temporary, like one that shares memory with an input.
  const bool d_shared = !batch_disjoint(call.d, classify(call.d), call.batch);
  const Staged a = stage(call.a), b = stage(call.b), d = stage(call.d, call.d_overlaps_input || d_shared);
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
    p.a = {la.layout, la.ld, operand_alignment(addr_a, la.layout, la.ld, M, K, eb, batch_stride(a)),
           batch_stride(a)};
    p.b = {lb.layout, lb.ld, operand_alignment(addr_b, lb.layout, lb.ld, K, N, eb, batch_stride(b)),
           batch_stride(b)};
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
      p.a = {Layout::kRowMajor, ld_row,
             operand_alignment(addr_b, Layout::kRowMajor, ld_row, 1, K, eb, batch_stride(b)), batch_stride(b)};
    } else {
      p.a = {flip(lb.layout), lb.ld, operand_alignment(addr_b, flip(lb.layout), lb.ld, N, K, eb, batch_stride(b)),
             batch_stride(b)};
    }
    p.b = {flip(la.layout), la.ld, operand_alignment(addr_a, flip(la.layout), la.ld, K, M, eb, batch_stride(a)),
           batch_stride(a)};
  }
  p.d = {Layout::kRowMajor, ld.ld,
         operand_alignment(addr_d, Layout::kRowMajor, ld.ld, p.m, p.n, eb, batch_stride(d)), batch_stride(d)};
  return p;
}

Rejection check_device(const KernelInfo& k, const DeviceDesc& dev) {
  if (dev.cc < k.min_cc || dev.cc > k.max_cc) return Rejection::kArch;
  if (k.smem_bytes > dev.smem_optin_bytes) return Rejection::kSharedMemory;
  return Rejection::kNone;
}

Rejection check_kernel(const KernelInfo& k, const Plan& p, const DeviceDesc& dev) {
  if (k.precision != p.precision) return Rejection::kPrecision;
  if (k.layout_a != p.a.layout || k.layout_b != p.b.layout) return Rejection::kLayout;
  if (const Rejection why = check_device(k, dev); why != Rejection::kNone) return why;
  // CUTLASS problem shapes are 32-bit.
  if (p.m > INT_MAX || p.n > INT_MAX || p.k > INT_MAX) return Rejection::kTooLarge;
  if (p.m > k.max_m) return Rejection::kTooManyRows;
  if (p.n > k.max_n) return Rejection::kTooManyColumns;
  if (p.n % k.n_multiple != 0) return Rejection::kRowLength;
  // Alignments are powers of two, so "at least" means "a multiple of".
  if (p.a.align < k.align_a) return Rejection::kAlignA;
  if (p.b.align < k.align_b) return Rejection::kAlignB;
  if (p.d.align < k.align_d) return Rejection::kAlignD;
  // The fused bias runs along the kernel's N: D's columns only when D is not transposed, and
  // the staged plans' padded N would read past the bias.
  if (k.fuses_epilogue && (!p.epilogue || p.transposed || p.staged)) return Rejection::kEpilogue;
  if (p.batch > 1 && !k.batched) return Rejection::kBatch;
  if (p.batch > k.max_batch) return Rejection::kBatchTooLarge;
  return Rejection::kNone;
}

std::string describe_rejection(Rejection why, const KernelInfo& k, const Plan& p,
                               const DeviceDesc& dev) {
  using std::to_string;
  const std::string operands = p.transposed ? " (of the transposed problem D^T = mat2^T self^T)" : "";
  switch (why) {
    case Rejection::kNone:
      return "";
    case Rejection::kEpilogue:
      if (!p.epilogue) return "fuses a bias and activation into its epilogue: it runs linear and addmm calls that have one";
      return p.transposed ? "fuses a bias along D's columns, and this call runs as the transposed problem"
                          : "fuses a bias along D's columns, and this call runs on padded (staged) copies";
    case Rejection::kBatch:
      return "runs one product per launch, the call is a batch of " + to_string(p.batch);
    case Rejection::kBatchTooLarge:
      return "runs batches of at most " + to_string(k.max_batch) + " matrices per launch, the call is a batch of " +
             to_string(p.batch);
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
    case Rejection::kTooManyColumns:
      return "takes at most " + to_string(k.max_n) + " columns (N), the problem has N = " + to_string(p.n) + operands;
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

namespace {

// The one tile-order rule left from measurement (cost-model candidates run in CUTLASS's
// default order): Hopper's 3xTF32 presplit GEMM on its 2x1 cluster walks its tiles along N
// from 4096 rows when N >= M, against CUTLASS's rule, which walks along M there. Measured on an
// H100 (autotuner, 2026-11-21): 8192x14336x4096 10.2 ms against 15.7, 8192x128256x4096 95.7
// against 167.5, 16384^3 136 against 144, 4096^3 and 8192^3 within 1%; with fewer rows along N
// lost (2048x128256x4096: 25.6 ms against 23.2).
constexpr int64_t kPresplitAlongNMinRows = 4096;

TileOrder default_tile_order(const Plan& p) {
  const KernelInfo& k = *p.kernel;
  if (k.pass == OperandPass::kPresplit && k.orders_tiles && k.cluster_m == 2 &&
      p.decomposition == Decomposition::kDataParallel && p.n >= p.m && p.m >= kPresplitAlongNMinRows) {
    return {Raster::kAlongN, 1};
  }
  return {};
}

constexpr const char* kModelReason = "cost model: the cheapest predicted candidate (explain() ranks them all)";
constexpr const char* kNoKernelReason = "no kernel in this build accepts the problem";

// An autotuned entry for the problem, if it still applies (its kernel accepts the plan).
bool apply_tuned(Plan& p, const DeviceDesc& dev) {
  TuningTable& table = TuningTable::instance();
  // Tuned entries time the plain product of one matrix; a call with an epilogue or a batch is
  // planned by the model.
  if (table.empty() || p.epilogue || p.batch > 1) return false;
  TuningEntry tuned;
  if (!table.find(tuning_key(p, dev), &tuned)) return false;
  Plan vp = variant_plan(p, tuned.variant);
  if (vp.precision == Precision::kTF32x3 && tuned.kernel->precision == Precision::kF32) vp.precision = Precision::kF32;
  if (check_kernel(*tuned.kernel, vp, dev) != Rejection::kNone || !tuned.kernel->supports(tuned.decomposition)) {
    return false;
  }
  p = candidate_plan(p, {tuned.variant, tuned.kernel, tuned.decomposition, tuned.splits});
  if (tuned.kernel->orders_tiles) p.tile_order = tuned.tile_order;
  p.tuned = true;
  p.reason = "tuning table: the fastest candidate measured for this problem (autotuned)";
  return true;
}

}  // namespace

void set_kernel(Plan& p, const KernelInfo& kernel, const DeviceDesc& dev, TileOrder order) {
  // The kernel's cheapest decomposition by the cost model.
  Candidate best{Variant::kInPlace, &kernel, Decomposition::kDataParallel, 1};
  double best_us = -1;
  const Calibration* cal = calibration_for(dev);
  for (const Candidate& c : kernel_candidates(p, kernel, dev, cal)) {
    const double us = predict(p, c, dev, cal).us;
    if (best_us < 0 || us < best_us) {
      best = c;
      best_us = us;
    }
  }
  p.kernel = &kernel;
  p.decomposition = best.decomposition;
  p.splits = best.splits;
  p.tile_order = kernel.orders_tiles ? order : TileOrder{};
}

void choose_kernel(Plan& p, const DeviceDesc& dev) {
  if (apply_tuned(p, dev)) return;
  const PlanKey key = plan_key(p, dev);
  CachedChoice choice;
  if (!PlanCache::instance().find(key, &choice)) {
    choice.generation = dispatch_generation();  // read first: a change while ranking leaves it stale
    const std::optional<Ranked> cheapest = cheapest_candidate(p, dev);
    if (!cheapest) {
      choice.candidate = Candidate{};
      choice.reason = kNoKernelReason;
    } else {
      choice.candidate = cheapest->candidate;
      choice.reason = kModelReason;
      const Plan chosen = candidate_plan(p, choice.candidate);
      choice.tile_order = default_tile_order(chosen);
    }
    PlanCache::instance().insert(key, choice);
  }
  if (choice.candidate.kernel == nullptr) {
    p.kernel = nullptr;
    p.reason = choice.reason;
    return;
  }
  p = candidate_plan(p, choice.candidate);
  p.tile_order = choice.tile_order;
  p.reason = choice.reason;
}

Plan make_plan(const CallDesc& call, const DeviceDesc& device) {
  Plan p = normalize(call);
  choose_kernel(p, device);
  return p;
}

}  // namespace cutlass_ops
