"""How long a run of each weight row a streaming warp should read per stage: the tensor-core
streaming kernel's access pattern against longer runs, bytes in flight held equal. Needs a GPU
and nvcc.

    python benchmarks/probes/weight_runs_probe.py    # JSON to $OUT (default .)

The tensor-core streaming kernel (csrc/handwritten/gemm_skinny_m_mma_sm80.cu) gives a block 32
rows of an N x K weight (F.linear's layout, each row K-contiguous) and each of its 8 warps an
eighth of K; per stage a warp copies 64 bytes of each of its 32 rows with cp.async, 4 stages in
flight. At one K slice it streamed a bf16 weight faster than cuBLAS up to 128 blocks and slower
past the SM count (H200, 2026-11-29: 1x4608x3584 1.71 TB/s against 1.93, 1x14336x4096 2.57
against 2.85), where the CUDA-core kernel, whose warps read 512 contiguous bytes of a row per
load, kept up (docs/findings.md, "How many K slices a streaming kernel cuts"). Here only the
loads: the same blocks of 32 rows, 8 warps, 2 KB per warp and stage, 4 stages in flight, cut
as R rows x RUN bytes per stage (R x RUN = 2 KB): the warps of a block split its rows into
32 / R groups and K among the 8 / (32 / R) warps of a group. Each configuration is timed after
the benchmarks' dirty L2 flush, beside torch.mm on the same weight (x of one row), and its block
sums checked against the weight's.
"""

import json

import torch

from gemv_probe_common import compile_probe, save_rows, time_us

SOURCE = r"""
#include <torch/extension.h>
#include <cuda_bf16.h>
#include <ATen/cuda/CUDAContext.h>
#include <cstdint>

namespace {

constexpr int kWarps = 8, kStages = 4, kStageBytes = 2048, kBlockRows = 32;

__device__ __forceinline__ void cp_async16(void* smem, const void* gmem) {
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(s), "l"(gmem));
}
__device__ __forceinline__ void commit() { asm volatile("cp.async.commit_group;"); }
template <int N> __device__ __forceinline__ void wait() { asm volatile("cp.async.wait_group %0;" ::"n"(N)); }

// R rows x RUN bytes per warp and stage. Sums every element it streams (in fp32) into y[block].
template <int R>
__global__ void __launch_bounds__(kWarps * 32) stream(const __nv_bfloat16* __restrict__ w, int k, float* __restrict__ y) {
  constexpr int kRun = kStageBytes / R;          // bytes of each row per stage
  constexpr int kChunks = kStageBytes / 16 / 32;  // 16-byte copies per lane and stage
  constexpr int kGroups = kBlockRows / R, kSplit = kWarps / kGroups;  // row groups; warps per group (K split)
  static_assert(kRun % 16 == 0 && kSplit >= 1, "whole chunks, at least a warp per group");
  extern __shared__ __align__(16) unsigned char smem[];  // the warps' rings: 64 KiB
  auto ring = reinterpret_cast<unsigned char (*)[kStages][kStageBytes]>(smem);
  __shared__ float warp_sums[kWarps];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int group = warp / kSplit, part = warp % kSplit;
  const long row0 = long(blockIdx.x) * kBlockRows + group * R;
  const long row_bytes = long(k) * 2;
  const long span = (row_bytes + kSplit - 1) / kSplit / kRun * kRun + kRun;  // this warp's K bytes, whole runs
  const long begin = part * span, end = min(row_bytes, begin + span);
  const int steps = end > begin ? int((end - begin + kRun - 1) / kRun) : 0;
  const unsigned char* base = reinterpret_cast<const unsigned char*>(w) + row0 * row_bytes;
  auto issue = [&](int step) {
    for (int c = 0; c < kChunks; ++c) {
      const int chunk = c * 32 + lane, r = chunk / (kRun / 16), off = chunk % (kRun / 16) * 16;
      const long at = begin + long(step) * kRun + off;
      if (at + 16 <= end) cp_async16(&ring[warp][step % kStages][chunk * 16], base + r * row_bytes + at);
    }
    commit();
  };
  float sum = 0.0f;
  for (int s = 0; s < kStages - 1; ++s) if (s < steps) issue(s); else commit();
  for (int step = 0; step < steps; ++step) {
    if (step + kStages - 1 < steps) issue(step + kStages - 1); else commit();
    wait<kStages - 1>();
    __syncwarp();
    for (int c = 0; c < kChunks; ++c) {
      const int chunk = c * 32 + lane, off = chunk % (kRun / 16) * 16;
      const long at = begin + long(step) * kRun + off;
      if (at + 16 > end) continue;
      const uint4 v = *reinterpret_cast<const uint4*>(&ring[warp][step % kStages][chunk * 16]);
      const __nv_bfloat162* h = reinterpret_cast<const __nv_bfloat162*>(&v);
#pragma unroll
      for (int i = 0; i < 4; ++i) { const float2 f = __bfloat1622float2(h[i]); sum += f.x + f.y; }
    }
    __syncwarp();
  }
  for (int off = 16; off > 0; off /= 2) sum += __shfl_xor_sync(~0u, sum, off);
  if (lane == 0) warp_sums[warp] = sum;
  __syncthreads();
  if (threadIdx.x == 0) {
    float total = 0.0f;
    for (int i = 0; i < kWarps; ++i) total += warp_sums[i];
    y[blockIdx.x] = total;
  }
}

using Kernel = void (*)(const __nv_bfloat16*, int, float*);
constexpr Kernel kKernels[] = {stream<32>, stream<16>, stream<8>, stream<4>};

}  // namespace

void run(torch::Tensor w, torch::Tensor y, int64_t variant) {
  const int n = static_cast<int>(w.size(0)), k = static_cast<int>(w.size(1));
  constexpr int kSmem = kWarps * kStages * kStageBytes;
  static bool opted_in[4] = {};
  if (!opted_in[variant]) {
    cudaFuncSetAttribute(kKernels[variant], cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem);
    opted_in[variant] = true;
  }
  kKernels[variant]<<<n / kBlockRows, kWarps * 32, kSmem, at::cuda::getCurrentCUDAStream()>>>(
      reinterpret_cast<const __nv_bfloat16*>(w.data_ptr()), k, y.data_ptr<float>());
}
"""

VARIANTS = ["32 rows x 64 B (the tensor-core kernel's)", "16 rows x 128 B", "8 rows x 256 B", "4 rows x 512 B"]
SHAPES = [(3072, 3072), (4096, 4096), (4608, 3584), (5120, 5120), (8192, 3072), (14336, 4096)]  # (N, K), N % 32 == 0


def main() -> None:
    ext = compile_probe("weight_runs_probe", SOURCE, "void run(torch::Tensor w, torch::Tensor y, int64_t variant)")
    rows = []
    for n, k in SHAPES:
        w = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
        x = torch.randn(1, k, device="cuda", dtype=torch.bfloat16)
        y = torch.empty(n // 32, device="cuda")
        expected = w.float().view(n // 32, 32 * k).sum(1)
        gb = 2 * n * k / 1e3  # weight bytes / 1e3: GB/s from microseconds
        row = {"shape": f"1x{n}x{k}", "blocks": n // 32, "torch us": round(time_us(lambda: torch.mm(x, w.t())), 1)}
        for v, name in enumerate(VARIANTS):
            ext.run(w, y, v)
            torch.cuda.synchronize()
            if not torch.allclose(y, expected, rtol=1e-3, atol=1.0):
                row[name] = "WRONG"
                continue
            row[name] = round(time_us(lambda: ext.run(w, y, v)), 1)
        row["torch us again"] = round(time_us(lambda: torch.mm(x, w.t())), 1)
        torch_us = min(row["torch us"], row["torch us again"])
        row["GB/s"] = {"torch": round(gb / torch_us), **{name: round(gb / row[name]) for name in VARIANTS
                                                          if isinstance(row[name], float)}}
        rows.append(row)
        print(json.dumps(row), flush=True)
    save_rows(rows, "weight_runs.json")


if __name__ == "__main__":
    main()
