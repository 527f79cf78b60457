// Kernels of launch_cost_probe.py: each CTA loads 16 bytes a thread from A and stores them to D,
// as little work as a kernel can do, launched with the dynamic shared memory, threads, CTAs,
// parameter block and cluster of a GEMM kernel, so that what each of those costs a launch shows.
#include <cuda_runtime.h>

#include <cstdint>

struct BigParams {
  int4 words[64];  // 1 KiB, about what a CUTLASS 3.x TMA kernel's parameters take
};

__global__ void touch_kernel(const int4* __restrict__ a, int4* __restrict__ d, int n, int use_smem) {
  extern __shared__ int4 smem[];
  int i = (blockIdx.x * blockDim.x + threadIdx.x) % n;
  int4 v = a[i];
  if (use_smem) {
    smem[threadIdx.x] = v;
    __syncthreads();
    v = smem[(threadIdx.x + 1) % blockDim.x];
  }
  d[i] = v;
}

__global__ void touch_big_kernel(const __grid_constant__ BigParams p, const int4* __restrict__ a,
                                 int4* __restrict__ d, int n) {
  int i = (blockIdx.x * blockDim.x + threadIdx.x) % n;
  int4 v = a[i];
  int4 w = p.words[threadIdx.x % 64];
  v.x += w.x;
  d[i] = v;
}

extern "C" int probe_touch(const void* a, void* d, int n, int ctas, int threads, int smem_bytes,
                           int big, int cluster, int carveout, void* stream_ptr) {
  cudaStream_t stream = static_cast<cudaStream_t>(stream_ptr);
  const void* fn = big ? reinterpret_cast<const void*>(&touch_big_kernel) : reinterpret_cast<const void*>(&touch_kernel);
  cudaError_t e = cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_bytes);
  if (e != cudaSuccess) return 1000 + int(e);
  e = cudaFuncSetAttribute(fn, cudaFuncAttributePreferredSharedMemoryCarveout, carveout);
  if (e != cudaSuccess) return 2000 + int(e);
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(ctas);
  config.blockDim = dim3(threads);
  config.dynamicSmemBytes = smem_bytes;
  config.stream = stream;
  cudaLaunchAttribute attr[1];
  if (cluster > 0) {
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = cluster;
    attr[0].val.clusterDim.y = 1;
    attr[0].val.clusterDim.z = 1;
    config.attrs = attr;
    config.numAttrs = 1;
  }
  const int4* a4 = static_cast<const int4*>(a);
  int4* d4 = static_cast<int4*>(d);
  int use_smem = smem_bytes >= threads * 16 ? 1 : 0;
  if (big) {
    BigParams p = {};
    e = cudaLaunchKernelEx(&config, touch_big_kernel, p, a4, d4, n);
  } else {
    e = cudaLaunchKernelEx(&config, touch_kernel, a4, d4, n, use_smem);
  }
  return e == cudaSuccess ? 0 : 3000 + int(e);
}
