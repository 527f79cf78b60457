"""GEMV (M = 1, row-major B) variants after a dirty-L2 flush: a probe (RESULTS.md at 824ebc1, 2026-11-23, "B streamed evict-first").

CUDA-core GEMV kernels (compiled here with load_inline), each timed at its best K split
(4-64 slabs, atomics into the output): warps sharing 32 x 4 (fp32) / 32 x 8 (bf16) columns
and taking alternate rows, as csrc/handwritten/gemm_skinny_m_sm80.cu does, or each warp its own
columns ("wide"); 8, 16 or 32 loads in flight per lane; plain or ld.global.cs loads. What it
showed (H100, benchmarks/RESULTS.md at 824ebc1): the evict-first load saved ~3 us at 1x4096x4096 (fp32
37.7 -> 34.7 us, bf16 33.9 -> 30.3); neither more loads in flight nor wider column blocks
closed the rest of the gap to cuBLAS (30.3 fp32, 20.6 bf16). Needs a GPU and nvcc.

    python benchmarks/probes/gemv_load_variants_probe.py    # JSON to $OUT (default .)
"""

from gemv_probe_common import compile_probe, sweep_variants

src = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <ATen/cuda/CUDAContext.h>
template <int HINT> __device__ __forceinline__ uint4 ld16(const void* p) {
  if constexpr (HINT == 0) return *static_cast<const uint4*>(p);
  else return __ldcs(static_cast<const uint4*>(p));
}
template <typename T> __device__ __forceinline__ void unpack(uint4 r, float* x) {
  if constexpr (sizeof(T) == 4) { x[0]=__uint_as_float(r.x); x[1]=__uint_as_float(r.y); x[2]=__uint_as_float(r.z); x[3]=__uint_as_float(r.w); }
  else { const __nv_bfloat162* h = reinterpret_cast<const __nv_bfloat162*>(&r);
#pragma unroll
    for (int i = 0; i < 4; ++i) { float2 f = __bfloat1622float2(h[i]); x[2*i]=f.x; x[2*i+1]=f.y; } }
}
template <typename T> __device__ __forceinline__ float tof(T v) { if constexpr (sizeof(T)==4) return v; else return __bfloat162float(v); }
// WIDE: each warp its own 32*V columns, all rows of the slab; else: warps share 32*V columns, alternate rows.
template <typename T, int HINT, int UNROLL, int WARPS, bool WIDE>
__global__ void __launch_bounds__(WARPS * 32) gemv(const T* a, const T* b, float* y, int N, int K, int slab) {
  constexpr int V = 16 / sizeof(T);
  int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  int col = WIDE ? (blockIdx.x * WARPS + warp) * 32 * V + lane * V : blockIdx.x * 32 * V + lane * V;
  int k0 = blockIdx.y * slab, k1 = min(K, k0 + slab);
  int kstart = WIDE ? k0 : k0 + warp, kstep = WIDE ? 1 : WARPS;
  float acc[V] = {};
  for (int k = kstart; k < k1; k += kstep * UNROLL) {
    uint4 raw[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) raw[u] = ld16<HINT>(b + (size_t)min(k + kstep * u, k1 - 1) * N + col);  // clamped: no branches
    float avs[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) avs[u] = (k + kstep * u < k1) ? tof(a[min(k + kstep * u, k1 - 1)]) : 0.f;
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
      float x[V]; unpack<T>(raw[u], x);
      float av = avs[u];
#pragma unroll
      for (int j = 0; j < V; ++j) acc[j] = fmaf(av, x[j], acc[j]);
    }
  }
#pragma unroll
  for (int j = 0; j < V; ++j) atomicAdd(y + col + j, acc[j]);
}
template <typename T, int HINT, int UNROLL, int WARPS, bool WIDE>
void go(torch::Tensor a, torch::Tensor b, torch::Tensor y, int splits) {
  int K = b.size(0), N = b.size(1); constexpr int V = 16 / sizeof(T);
  int slab = (K + splits - 1) / splits; slab = (slab + 31) / 32 * 32;
  int cols = WIDE ? WARPS * 32 * V : 32 * V;
  dim3 grid(N / cols, (K + slab - 1) / slab);
  auto s = at::cuda::getCurrentCUDAStream();
  cudaMemsetAsync(y.data_ptr(), 0, N * 4, s);
  gemv<T, HINT, UNROLL, WARPS, WIDE><<<grid, WARPS * 32, 0, s>>>((const T*)a.data_ptr(), (const T*)b.data_ptr(), y.data_ptr<float>(), N, K, slab);
}
#define VARIANTS(T, X) X(T,0,8,4,false) X(T,1,8,4,false) X(T,1,16,4,false) X(T,1,8,8,true) X(T,1,16,8,true) X(T,1,8,4,true) X(T,1,16,4,true) X(T,1,32,4,true)
void run(torch::Tensor a, torch::Tensor b, torch::Tensor y, int64_t variant, int64_t splits) {
  int i = 0;
#define CALL(T,H,U,W,WI) if (variant == i++) return go<T,H,U,W,WI>(a, b, y, splits);
  if (a.scalar_type() == at::kFloat) { VARIANTS(float, CALL) } else { VARIANTS(__nv_bfloat16, CALL) }
  TORCH_CHECK(false, "no variant");
}
"""
NAMES = [
    "rows4_u8",
    "rows4_u8_cs",
    "rows4_u16_cs",
    "wide8_u8_cs",
    "wide8_u16_cs",
    "wide4_u8_cs",
    "wide4_u16_cs",
    "wide4_u32_cs",
]


def main() -> None:
    ext = compile_probe(
        "gemv_load_variants_probe",
        src,
        "void run(torch::Tensor a, torch::Tensor b, torch::Tensor y, int64_t variant, int64_t splits)",
    )
    sweep_variants(ext, NAMES, (4, 8, 16, 32, 64), "gemv_load_variants_probe.json")


if __name__ == "__main__":
    main()
