// The second kernel of split-K summed by a second kernel: D = W[0] + W[1] + ... + W[S-1], the K
// slices' partial products added in slice order for every element, so the result is the same
// on every run. Used by CUTLASS 3.x's batch-of-slices split-K (cutlass3x/sm90_splitk_sum.cuh,
// float32 partials of 16-bit products) and CUTLASS 2.x's parallel split-K
// (cutlass2x/sm80_splitk_sum.cuh, partials in D's own type: float32 for TF32, float64).
#pragma once

#include <cstdint>

#include <cuda_runtime.h>

namespace cutlass_ops::slice_sum {

// The partials' rows are padded to whole 16-byte vectors: ldw is a multiple of this.
template <class Partial>
inline constexpr int kLanes = 16 / static_cast<int>(sizeof(Partial));

template <class Partial>
struct alignas(16) Vector {
  Partial v[kLanes<Partial>];
};

// D (M x N, row-major, ldd) = sum over s of W[s] (M x ldw each, M * ldw apart), in s order. One
// thread per 16 bytes of a partial row: vector loads of W, element stores into D (any alignment
// of D), each sum converted to D's type once.
template <class Partial, class T>
__global__ void sum_slices(const Partial* __restrict__ w, int slices, int64_t m, int64_t n, int64_t ldw,
                           T* __restrict__ d, int64_t ldd) {
  constexpr int kL = kLanes<Partial>;
  const int64_t vectors = ldw / kL;
  const int64_t idx = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t row = idx / vectors, col = (idx % vectors) * kL;
  if (row >= m || col >= n) return;
  const int64_t slice_stride = m * ldw;
  const Partial* p = w + row * ldw + col;
  Vector<Partial> acc = *reinterpret_cast<const Vector<Partial>*>(p);
  for (int s = 1; s < slices; ++s) {
    const Vector<Partial> v = *reinterpret_cast<const Vector<Partial>*>(p + s * slice_stride);
#pragma unroll
    for (int j = 0; j < kL; ++j) acc.v[j] += v.v[j];
  }
  T* out = d + row * ldd + col;
  const int cols = static_cast<int>(n - col < kL ? n - col : kL);
  for (int j = 0; j < cols; ++j) out[j] = T(acc.v[j]);
}

// N rounded up to whole 16-byte vectors of partials: the partials' leading dim.
template <class Partial>
inline int64_t padded_ld(int64_t n) {
  return (n + kLanes<Partial> - 1) / kLanes<Partial> * kLanes<Partial>;
}

// Launches sum_slices over `slices` partials of M x padded_ld(N) on `stream`.
template <class Partial, class T>
inline cudaError_t launch(const Partial* w, int slices, int64_t m, int64_t n, T* d, int64_t ldd, cudaStream_t stream) {
  const int64_t ldw = padded_ld<Partial>(n);
  const int64_t threads = m * (ldw / kLanes<Partial>);
  constexpr int kBlock = 256;
  sum_slices<Partial, T><<<static_cast<unsigned>((threads + kBlock - 1) / kBlock), kBlock, 0, stream>>>(
      w, slices, m, n, ldw, d, ldd);
  return cudaGetLastError();
}

}  // namespace cutlass_ops::slice_sum
