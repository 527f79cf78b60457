"""Streaming B evict-first in L2, after a flush that leaves L2 dirty: a probe (RESULTS.md at 824ebc1, 2026-11-23, "B streamed evict-first").

The benchmarks flush L2 by writing 256 MB, which leaves it full of dirty lines; a kernel that
then streams B pays their write-back as it evicts them. This times, for a few 1- and 16-row
problems, torch.mm (IEEE and TF32) and a 64 MB read (`b.sum()`) after that flush ("dirty") and
after a read-only flush ("clean"), and a small fp32 GEMV kernel (compiled here with
load_inline) with four load forms: plain, ld.global.cs, and L2::cache_hint with an evict_first
policy (with and without .nc). What it showed (H100, benchmarks/RESULTS.md at 824ebc1): the hinted forms
took 34.5-34.7 us at 1x4096x4096 against 38.3 plain (cuBLAS 30.4); clean, all about 30-31.
This is why csrc/handwritten/ streams B evict-first. Needs a GPU and nvcc.

    python benchmarks/probes/gemv_l2_flush_probe.py    # JSON to $OUT (default .)
"""

import json

import torch

from gemv_probe_common import compile_probe, save_rows, time_us

src = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>
#include <ATen/cuda/CUDAContext.h>
template <int MODE>
__device__ __forceinline__ uint4 ld16(const float* p, uint64_t pol) {
  uint4 r;
  if constexpr (MODE == 0) {
    asm volatile("ld.global.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(r.x),"=r"(r.y),"=r"(r.z),"=r"(r.w) : "l"(p));
  } else if constexpr (MODE == 1) {
    asm volatile("ld.global.cs.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(r.x),"=r"(r.y),"=r"(r.z),"=r"(r.w) : "l"(p));
  } else if constexpr (MODE == 2) {
    asm volatile("ld.global.L1::no_allocate.L2::cache_hint.v4.u32 {%0,%1,%2,%3}, [%4], %5;" : "=r"(r.x),"=r"(r.y),"=r"(r.z),"=r"(r.w) : "l"(p), "l"(pol));
  } else {
    asm volatile("ld.global.nc.L1::no_allocate.L2::cache_hint.v4.u32 {%0,%1,%2,%3}, [%4], %5;" : "=r"(r.x),"=r"(r.y),"=r"(r.z),"=r"(r.w) : "l"(p), "l"(pol));
  }
  return r;
}
// y[n] += sum_k a[k] * B[k, n]; block: 128 columns, 4 warps alternate K rows; grid.y: K slabs.
template <int MODE>
__global__ void __launch_bounds__(128, 4) gemv(const float* a, const float* b, float* y, int N, int K, int slab) {
  uint64_t pol = 0;
  if constexpr (MODE >= 2) asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(pol));
  int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  int col = blockIdx.x * 128 + lane * 4;
  int k0 = blockIdx.y * slab, k1 = min(K, k0 + slab);
  float acc[4] = {0, 0, 0, 0};
  for (int k = k0 + warp; k < k1; k += 32) {
    uint4 raw[8];
#pragma unroll
    for (int u = 0; u < 8; ++u) raw[u] = (k + 4 * u < k1) ? ld16<MODE>(b + (size_t)(k + 4 * u) * N + col, pol) : make_uint4(0,0,0,0);
#pragma unroll
    for (int u = 0; u < 8; ++u) {
      float av = (k + 4 * u < k1) ? a[k + 4 * u] : 0.f;
      acc[0] += av * __uint_as_float(raw[u].x); acc[1] += av * __uint_as_float(raw[u].y);
      acc[2] += av * __uint_as_float(raw[u].z); acc[3] += av * __uint_as_float(raw[u].w);
    }
  }
#pragma unroll
  for (int j = 0; j < 4; ++j) atomicAdd(y + col + j, acc[j]);
}
void run(torch::Tensor a, torch::Tensor b, torch::Tensor y, int64_t mode, int64_t splits) {
  int K = b.size(0), N = b.size(1);
  int slab = ((K + splits - 1) / splits + 31) / 32 * 32;
  dim3 grid(N / 128, (K + slab - 1) / slab);
  auto s = at::cuda::getCurrentCUDAStream();
  cudaMemsetAsync(y.data_ptr(), 0, N * 4, s);
  switch (mode) {
    case 0: gemv<0><<<grid, 128, 0, s>>>(a.data_ptr<float>(), b.data_ptr<float>(), y.data_ptr<float>(), N, K, slab); break;
    case 1: gemv<1><<<grid, 128, 0, s>>>(a.data_ptr<float>(), b.data_ptr<float>(), y.data_ptr<float>(), N, K, slab); break;
    case 2: gemv<2><<<grid, 128, 0, s>>>(a.data_ptr<float>(), b.data_ptr<float>(), y.data_ptr<float>(), N, K, slab); break;
    default: gemv<3><<<grid, 128, 0, s>>>(a.data_ptr<float>(), b.data_ptr<float>(), y.data_ptr<float>(), N, K, slab); break;
  }
}
"""
MODES = ["plain", "cs", "evict_first_hint", "evict_first_hint_nc"]  # ld16<MODE> above


def main() -> None:
    ext = compile_probe(
        "gemv_l2_flush_probe",
        src,
        "void run(torch::Tensor a, torch::Tensor b, torch::Tensor y, int64_t mode, int64_t splits)",
    )
    rows = []
    for m, n, k in [(1, 4096, 4096), (1, 6144, 4096), (1, 4096, 14336), (16, 4096, 4096)]:
        for dtype in (torch.float32, torch.bfloat16):
            a, b = torch.randn(m, k, device="cuda", dtype=dtype), torch.randn(k, n, device="cuda", dtype=dtype)
            for flush in ("dirty", "clean"):
                torch.backends.cuda.matmul.allow_tf32 = False
                row = {
                    "shape": f"{m}x{n}x{k}",
                    "dtype": str(dtype)[6:],
                    "flush": flush,
                    "torch_ieee": time_us(lambda: torch.mm(a, b), flush, 60),
                }
                if dtype == torch.float32:
                    torch.backends.cuda.matmul.allow_tf32 = True
                    row["torch_tf32"] = time_us(lambda: torch.mm(a, b), flush, 60)
                    row["read_sum"] = time_us(lambda: b.sum(), flush, 60)
                    if m == 1:  # the GEMV, each load form (MODES), K in 16 slabs
                        y, ref = torch.empty(n, device="cuda"), (a.double() @ b.double()).float()[0]
                        for mode, name in enumerate(MODES):
                            ext.run(a[0], b, y, mode, 16)
                            assert torch.allclose(y, ref, rtol=1e-3, atol=1e-2), name
                            row[f"gemv_{name}"] = time_us(lambda: ext.run(a[0], b, y, mode, 16), flush, 60)
                rows.append(row)
                print(
                    json.dumps({key: round(v, 1) if isinstance(v, float) else v for key, v in row.items()}), flush=True
                )
    save_rows(rows, "gemv_l2_flush_probe.json")


if __name__ == "__main__":
    main()
