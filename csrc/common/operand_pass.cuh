// A GEMM on rewritten copies of its float32 operands: one memory-bound pass per operand writes
// it, read in any layout and alignment, into a workspace as a row-major A' (M x K') and a
// column-major B' (K' x N) of the pass's element type, then a GEMM runs that "rc" problem. Used
// by the 3xTF32 split (cutlass3x/sm90_3xtf32_presplit.cuh: TF32 parts, K' = 3K).
//
// The pass sees an operand as `rows` rows of `k` elements, element (r, c) at src[r * stride_r +
// c * stride_k]. A 32 x 32 tile passes through shared memory, so reads run along src's
// unit-stride dimension (whichever it is) and the writer's stores run along the destination's
// rows. The writer is called once for each (r, c) with c < kp; columns k..kp-1 (padding) reach
// it as zeros.
#pragma once

#include <cstdint>

#include <cuda_runtime_api.h>

#include "common/launch.h"
#include "dispatch/kernel.h"

namespace cutlass_ops {

namespace row_pass {

constexpr int kTile = 32;  // a 32 x 32 tile per block of 32 x 8 threads, a warp per row of it

// Writer: a trivially copyable struct with `__device__ void operator()(int64_t r, int64_t c,
// float x) const`.
template <class Writer>
__global__ void row_pass_kernel(const float* __restrict__ src, int64_t rows, int64_t k, int64_t kp, int64_t stride_r,
                                int64_t stride_k, Writer write) {
  __shared__ float tile[kTile][kTile + 1];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int64_t k0 = static_cast<int64_t>(blockIdx.x) * kTile;
  const bool k_unit = stride_k == 1;
  for (int64_t r0 = static_cast<int64_t>(blockIdx.y) * kTile; r0 < rows; r0 += static_cast<int64_t>(gridDim.y) * kTile) {
    for (int i = ty; i < kTile; i += blockDim.y) {
      // Lanes walk K when K has unit stride, rows otherwise.
      const int tr = k_unit ? i : tx, tk = k_unit ? tx : i;
      const int64_t r = r0 + tr, c = k0 + tk;
      if (r < rows && c < k) tile[tr][tk] = src[r * stride_r + c * stride_k];
    }
    __syncthreads();
    for (int i = ty; i < kTile; i += blockDim.y) {
      const int64_t r = r0 + i, c = k0 + tx;
      if (r < rows && c < kp) write(r, c, c < k ? tile[i][tx] : 0.0f);
    }
    __syncthreads();
  }
}

// Launches the pass on `stream` (columns 0..kp-1 of each row, kp >= k).
template <class Writer>
cudaError_t run(const float* src, int64_t rows, int64_t k, int64_t kp, int64_t stride_r, int64_t stride_k,
                const Writer& write, cudaStream_t stream) {
  const int64_t row_tiles = (rows + kTile - 1) / kTile;
  const dim3 grid(static_cast<unsigned>((kp + kTile - 1) / kTile),
                  static_cast<unsigned>(row_tiles < cutlass_ops::kMaxGridYZ ? row_tiles : cutlass_ops::kMaxGridYZ));
  row_pass_kernel<Writer><<<grid, dim3(kTile, 8), 0, stream>>>(src, rows, k, kp, stride_r, stride_k, write);
  return cudaGetLastError();
}

}  // namespace row_pass

// The GEMM on the copies, registered under the pass's precision. `Gemm`: a kernel type with
// static workspace_bytes, can_implement, run and info (Sm90Gemm, Sm80Gemm) for the "rc" problem
// on Pass::Element. `Pass`: a struct with
//   using Element;                                    // the copies' element type
//   static int64_t depth(int64_t k);                  // K', the copies' row length
//   static cudaError_t write(const float* src, int64_t rows, int64_t k, int64_t stride_r,
//                            int64_t stride_k, Element* dst, int operand, cudaStream_t stream);
//                                                     // operand: 0 for A, 1 for B^T
template <class Gemm, class Pass>
struct OperandPassGemm {
  using Element = typename Pass::Element;
  static constexpr size_t kAlign = 256;  // the GEMM's own workspace starts on this boundary

  static size_t copies_bytes(const GemmArgs& g) {
    const size_t bytes = static_cast<size_t>(g.m + g.n) * static_cast<size_t>(Pass::depth(g.k)) * sizeof(Element);
    return (bytes + kAlign - 1) / kAlign * kAlign;
  }

  // The problem on the copies: M x K' row-major A' times K' x N column-major B'.
  static GemmArgs gemm_args(const GemmArgs& g) {
    GemmArgs t = g;
    Element* a = static_cast<Element*>(g.workspace);
    t.k = Pass::depth(g.k);
    t.a = a;
    t.lda = t.k;
    t.layout_a = Layout::kRowMajor;
    t.b = a == nullptr ? nullptr : a + g.m * t.k;
    t.ldb = t.k;
    t.layout_b = Layout::kColMajor;
    t.workspace = a == nullptr ? nullptr : static_cast<char*>(g.workspace) + copies_bytes(g);
    return t;
  }

  static size_t workspace_bytes(const GemmArgs& g) { return copies_bytes(g) + Gemm::workspace_bytes(gemm_args(g)); }

  static KernelStatus can_implement(const GemmArgs& g) { return Gemm::can_implement(gemm_args(g)); }

  static KernelStatus run(const GemmArgs& g) {
    const GemmArgs t = gemm_args(g);
    // A (M x K): row r = row r of A. B^T (N x K): row n = column n of B.
    const bool a_rows = g.layout_a == Layout::kRowMajor, b_rows = g.layout_b == Layout::kRowMajor;
    cudaError_t err = Pass::write(static_cast<const float*>(g.a), g.m, g.k, a_rows ? g.lda : 1, a_rows ? 1 : g.lda,
                                  static_cast<Element*>(const_cast<void*>(t.a)), 0, g.stream);
    if (err == cudaSuccess) {
      err = Pass::write(static_cast<const float*>(g.b), g.n, g.k, b_rows ? 1 : g.ldb, b_rows ? g.ldb : 1,
                        static_cast<Element*>(const_cast<void*>(t.b)), 1, g.stream);
    }
    if (err != cudaSuccess) return from_cuda(err);
    return Gemm::run(t);
  }

  // The GEMM's KernelInfo (config, tiles, shared memory, decompositions, tile order) as a
  // `precision` kernel for operands in these layouts, at any alignment (the passes read single
  // floats).
  static KernelInfo info(const char* name, Precision precision, Layout layout_a, Layout layout_b) {
    KernelInfo k = Gemm::info(name);
    k.precision = precision;
    k.layout_a = layout_a;
    k.layout_b = layout_b;
    k.align_a = k.align_b = 1;
    k.batched = false;  // the passes copy one matrix per operand
    k.workspace_bytes = &workspace_bytes;
    k.can_implement = &can_implement;
    k.run = &run;
    return k;
  }
};

}  // namespace cutlass_ops
