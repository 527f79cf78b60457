"""GEMV (M = 1, row-major B) streamed by 1-D bulk copies into a deep pipeline: a probe (RESULTS.md at 824ebc1, 2026-11-23, "B streamed evict-first").

One producer thread per block issues cp.async.bulk row copies of B (1-4 KiB each, optionally
under an L2 evict_first policy) into 3-12 shared-memory stages, mbarrier-signalled; 4 or 8
consumer warps do the multiply-adds (compiled here with load_inline). What it showed (H100,
benchmarks/RESULTS.md at 824ebc1): no better than the plain-load kernels (fp32 1x4096x4096 34.0 us after
a dirty flush, 29.3 clean, against cuBLAS's 30.2 / 26.4); keeping more of B in flight is not
what cuBLAS's few microseconds come from, so it was not built into the library. Needs a GPU
and nvcc.

    python benchmarks/probes/gemv_bulk_copy_probe.py    # JSON to $OUT (default .)
"""

from gemv_probe_common import compile_probe, sweep_variants

src = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>
#include <cstdint>
#include <cuda_bf16.h>
#include <ATen/cuda/CUDAContext.h>
__device__ __forceinline__ uint32_t sa(const void* p) { return static_cast<uint32_t>(__cvta_generic_to_shared(p)); }
__device__ __forceinline__ void mbar_wait(uint64_t* bar, uint32_t parity) {
  uint32_t done;
  do { asm volatile("{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}\n" : "=r"(done) : "r"(sa(bar)), "r"(parity) : "memory"); } while (!done);
}
template <typename T> __device__ __forceinline__ void unpack(uint4 r, float* x) {
  if constexpr (sizeof(T) == 4) { x[0]=__uint_as_float(r.x); x[1]=__uint_as_float(r.y); x[2]=__uint_as_float(r.z); x[3]=__uint_as_float(r.w); }
  else { const __nv_bfloat162* h = reinterpret_cast<const __nv_bfloat162*>(&r);
#pragma unroll
    for (int i = 0; i < 4; ++i) { float2 f = __bfloat1622float2(h[i]); x[2*i]=f.x; x[2*i+1]=f.y; } }
}
template <typename T> __device__ __forceinline__ float tof(T v) { if constexpr (sizeof(T)==4) return v; else return __bfloat162float(v); }

template <typename T, int W, int R, int S, bool HINT>
__global__ void __launch_bounds__((W + 1) * 32, 1) bgemv(const T* a, const T* b, float* y, int N, int K, int slab) {
  constexpr int CB = W * 512, V = 16 / sizeof(T);
  extern __shared__ __align__(128) uint8_t smem[];
  uint64_t* full = reinterpret_cast<uint64_t*>(smem + S * R * CB);
  uint64_t* empty = full + S;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (threadIdx.x == 0) {
    for (int s = 0; s < S; ++s) {
      asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"(sa(full + s)), "r"(1) : "memory");
      asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"(sa(empty + s)), "r"(W) : "memory");
    }
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  const int k0 = blockIdx.y * slab, steps = slab / R;
  const size_t col_byte = size_t(blockIdx.x) * CB, row_bytes = size_t(N) * sizeof(T);
  if (warp == W) {
    if (lane == 0) {
      uint64_t pol;
      asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(pol));
      for (int t = 0; t < steps; ++t) {
        const int s = t % S;
        if (t >= S) mbar_wait(empty + s, ((t / S) - 1) & 1);
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(sa(full + s)), "r"(R * CB) : "memory");
        for (int r = 0; r < R; ++r) {
          const char* src = reinterpret_cast<const char*>(b) + size_t(k0 + t * R + r) * row_bytes + col_byte;
          uint8_t* dst = smem + (s * R + r) * CB;
          if constexpr (HINT)
            asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint [%0], [%1], %2, [%3], %4;"
                         :: "r"(sa(dst)), "l"(src), "r"(CB), "r"(sa(full + s)), "l"(pol) : "memory");
          else
            asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                         :: "r"(sa(dst)), "l"(src), "r"(CB), "r"(sa(full + s)) : "memory");
        }
      }
    }
    return;
  }
  float acc[V] = {};
  for (int t = 0; t < steps; ++t) {
    const int s = t % S;
    mbar_wait(full + s, (t / S) & 1);
#pragma unroll
    for (int r = 0; r < R; ++r) {
      float x[V];
      unpack<T>(*reinterpret_cast<const uint4*>(smem + (s * R + r) * CB + threadIdx.x * 16), x);
      const float av = tof(a[k0 + t * R + r]);
#pragma unroll
      for (int j = 0; j < V; ++j) acc[j] = fmaf(av, x[j], acc[j]);
    }
    __syncwarp();
    if (lane == 0) asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" :: "r"(sa(empty + s)) : "memory");
  }
  const int col = (col_byte + threadIdx.x * 16) / sizeof(T);
#pragma unroll
  for (int j = 0; j < V; ++j) atomicAdd(y + col + j, acc[j]);
}
template <typename T, int W, int R, int S, bool HINT>
bool go(torch::Tensor a, torch::Tensor b, torch::Tensor y, int splits) {
  int K = b.size(0), N = b.size(1); constexpr int CB = W * 512;
  if (K % splits || (K / splits) % R || (N * sizeof(T)) % CB) return false;
  int slab = K / splits;
  dim3 grid(N * sizeof(T) / CB, splits);
  size_t smem = size_t(S) * R * CB + 2 * S * 8;
  auto kern = bgemv<T, W, R, S, HINT>;
  cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  auto s = at::cuda::getCurrentCUDAStream();
  cudaMemsetAsync(y.data_ptr(), 0, N * 4, s);
  kern<<<grid, (W + 1) * 32, smem, s>>>((const T*)a.data_ptr(), (const T*)b.data_ptr(), y.data_ptr<float>(), N, K, slab);
  return true;
}
#define VARIANTS(T, X) X(T,8,8,6,true) X(T,8,8,6,false) X(T,4,16,6,true) X(T,8,4,12,true) X(T,4,8,12,true) X(T,8,8,3,true)
bool run(torch::Tensor a, torch::Tensor b, torch::Tensor y, int64_t variant, int64_t splits) {
  int i = 0;
#define CALL(T,W,R,S,H) if (variant == i++) return go<T,W,R,S,H>(a, b, y, splits);
  if (a.scalar_type() == at::kFloat) { VARIANTS(float, CALL) } else { VARIANTS(__nv_bfloat16, CALL) }
  TORCH_CHECK(false, "no variant");
}
"""
NAMES = ["w8_r8_s6_hint", "w8_r8_s6", "w4_r16_s6_hint", "w8_r4_s12_hint", "w4_r8_s12_hint", "w8_r8_s3_hint"]


def main() -> None:
    ext = compile_probe(
        "gemv_bulk_copy_probe",
        src,
        "bool run(torch::Tensor a, torch::Tensor b, torch::Tensor y, int64_t variant, int64_t splits)",
    )
    sweep_variants(ext, NAMES, (8, 16, 32, 64, 128, 256), "gemv_bulk_copy_probe.json")


if __name__ == "__main__":
    main()
