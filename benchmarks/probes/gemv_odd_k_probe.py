"""Few-row products in F.linear's layout whose weight rows start off 16-byte boundaries (an odd
K, or one not a multiple of 8, as the weight's leading dimension): does a deeper pipeline of
realigned 16-byte loads close the gap to cuBLAS's GEMV? Needs a GPU and nvcc.

    python benchmarks/probes/gemv_odd_k_probe.py    # JSON to $OUT (default .)

x (1 x K) @ W^T with W a contiguous bf16 N x K weight, so row n starts n * K elements in. The
streaming kernels' two any-alignment builds (csrc/handwritten/gemm_skinny_m_sm80.cu) read such
a weight element by element (`_a1_elementwise`, four loads in flight per lane and column) or
as the aligned 16 bytes around each piece, shifted into place with the next lane's load
(`_a1`, one load in flight per lane and column); on the H200 sweep both took 1.6-1.8x cuBLAS's
time at 1 x 10984 x 14263 (docs/findings.md, "What cuBLAS runs on small unaligned 16-bit
problems"). The kernels here mirror them, warps of R weight rows (four, as those builds take,
unless named), lanes across K, with U steps of loads issued before any is used:

- `elem U`: one element per lane, row and step;
- `realign U`: the aligned 16 bytes holding each lane's piece and a shuffle (as `_a1`, U = 1);
- `aligned U` (K a multiple of 8 only): plain 16-byte loads, what an aligned weight allows;
- `realign U, R rows`: fewer weight rows per warp, so as many loads in flight per lane as
  `realign 4` (U x R) in fewer registers, each row's run of K per step U x 512 bytes: whether
  the longer runs or the loads in flight made `realign 4` faster (docs/findings.md, "Weights
  whose rows start off 16 bytes");
- `..., x staged`: `realign 1` and `realign 4, 1 row` with x staged as the `_a1` build stages A
  (fp32, element by element into shared memory per 1,024 K, between two block barriers): whether
  that staging is what keeps the build slower than `realign 1` here, and what made one row per
  warp slower in the build than in the probe (docs/findings.md, same section).

Each is timed at its best K split (1, 2 or 4 slabs, atomics into the fp32 output), after the
dirty L2 flush the benchmarks use, beside torch.mm on the same operands, checked against
float64 first.
"""

import json

import torch

from gemv_probe_common import best_split, compile_probe, save_rows, time_us

SOURCE = r"""
#include <torch/extension.h>
#include <cuda_bf16.h>
#include <ATen/cuda/CUDAContext.h>
#include <cstdint>

namespace {

__device__ __forceinline__ uint4 ld16(const void* p) { return __ldcs(static_cast<const uint4*>(p)); }

__device__ __forceinline__ uint4 shfl_down(uint4 v) {
  return make_uint4(__shfl_down_sync(~0u, v.x, 1), __shfl_down_sync(~0u, v.y, 1),
                    __shfl_down_sync(~0u, v.z, 1), __shfl_down_sync(~0u, v.w, 1));
}

// The 16 bytes starting `bytes` (even, below 16) into lo, continuing into hi.
__device__ __forceinline__ uint4 realign(uint4 lo, uint4 hi, int bytes) {
  const uint32_t w[8] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
  const int word = bytes / 4;
  const unsigned shift = bytes % 4 * 8;
  uint32_t x[5];
#pragma unroll
  for (int i = 0; i < 5; ++i) x[i] = word == 0 ? w[i] : word == 1 ? w[i + 1] : word == 2 ? w[i + 2] : w[i + 3];
  return make_uint4(__funnelshift_r(x[0], x[1], shift), __funnelshift_r(x[1], x[2], shift),
                    __funnelshift_r(x[2], x[3], shift), __funnelshift_r(x[3], x[4], shift));
}

__device__ __forceinline__ void unpack(uint4 r, float (&f)[8]) {
  const __nv_bfloat162* h = reinterpret_cast<const __nv_bfloat162*>(&r);
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const float2 v = __bfloat1622float2(h[i]);
    f[2 * i] = v.x;
    f[2 * i + 1] = v.y;
  }
}

// The warp's kRows sums over its lanes (a butterfly), lane c writing row n0 + c (added in, with
// several K slabs).
template <int kRows>
__device__ __forceinline__ void store_rows(float (&acc)[kRows], int lane, long n0, int n_rows, float* y) {
#pragma unroll
  for (int off = 16; off > 0; off /= 2)
#pragma unroll
    for (int c = 0; c < kRows; ++c) acc[c] += __shfl_xor_sync(~0u, acc[c], off);
  if (lane < kRows && n0 + lane < n_rows) {
    float v = acc[0];
#pragma unroll
    for (int c = 1; c < kRows; ++c) v = lane == c ? acc[c] : v;
    if (gridDim.y == 1) y[n0 + lane] = v; else atomicAdd(y + n0 + lane, v);
  }
}

// MODE 0: element loads; 1: realigned 16-byte loads; 2: aligned 16-byte loads (K % 8 == 0).
// kRows weight rows per warp.
template <int MODE, int U, int kRows = 4>
__global__ void __launch_bounds__(256) gemv_rc(const __nv_bfloat16* __restrict__ x, const __nv_bfloat16* __restrict__ w,
                                               int n_rows, int k_total, int slab, float* __restrict__ y) {
  const int lane = threadIdx.x & 31;
  const long n0 = (long(blockIdx.x) * blockDim.x + threadIdx.x) / 32 * kRows;
  const int kb = blockIdx.y * slab;
  if (n0 >= n_rows || kb >= k_total) return;  // whole warps leave together
  const int len = min(slab, k_total - kb);
  const __nv_bfloat16* xs = x + kb;
  float acc[kRows] = {};
  if constexpr (MODE == 0) {
    for (int k0 = lane; k0 < len; k0 += 32 * U) {
      float wv[U][kRows], xv[U];
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const int k = k0 + 32 * u;
        xv[u] = k < len ? __bfloat162float(xs[k]) : 0.0f;
#pragma unroll
        for (int c = 0; c < kRows; ++c)
          wv[u][c] = k < len && n0 + c < n_rows ? __bfloat162float(__ldcs(w + (n0 + c) * k_total + kb + k)) : 0.0f;
      }
#pragma unroll
      for (int u = 0; u < U; ++u)
#pragma unroll
        for (int c = 0; c < kRows; ++c) acc[c] = fmaf(xv[u], wv[u][c], acc[c]);
    }
  } else {
    const __nv_bfloat16* aligned[kRows];
    int mis[kRows];
#pragma unroll
    for (int c = 0; c < kRows; ++c) {
      const __nv_bfloat16* p = w + (n0 + c) * k_total + kb;
      mis[c] = MODE == 1 ? static_cast<int>(reinterpret_cast<uintptr_t>(p) % 16 / 2) : 0;
      aligned[c] = p - mis[c];
    }
    const int steps = (len + 255) / 256;
    for (int s0 = 0; s0 < steps; s0 += U) {  // uniform over the warp: every lane shuffles
      uint4 raw[U][kRows], tail[U][kRows];
      float xv[U][8];
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const int k = (s0 + u) * 256 + lane * 8;
        if (k + 8 <= len) {
          unpack(*reinterpret_cast<const uint4*>(xs + k), xv[u]);
        } else {
#pragma unroll
          for (int j = 0; j < 8; ++j) xv[u][j] = k + j < len ? __bfloat162float(xs[k + j]) : 0.0f;
        }
#pragma unroll
        for (int c = 0; c < kRows; ++c) {
          const bool row = n0 + c < n_rows;
          raw[u][c] = row && k - mis[c] < len ? ld16(aligned[c] + k) : make_uint4(0, 0, 0, 0);
          tail[u][c] = MODE == 1 && row && lane == 31 && mis[c] > 0 && k + 8 - mis[c] < len
                           ? ld16(aligned[c] + k + 8) : make_uint4(0, 0, 0, 0);
        }
      }
#pragma unroll
      for (int u = 0; u < U; ++u) {
#pragma unroll
        for (int c = 0; c < kRows; ++c) {
          uint4 piece = raw[u][c];
          if constexpr (MODE == 1) {
            const uint4 next = shfl_down(raw[u][c]);
            piece = realign(raw[u][c], lane == 31 ? tail[u][c] : next, 2 * mis[c]);
          }
          float wv[8];
          unpack(piece, wv);
          const int k = (s0 + u) * 256 + lane * 8;
#pragma unroll
          for (int j = 0; j < 8; ++j) acc[c] = fmaf(xv[u][j], k + j < len ? wv[j] : 0.0f, acc[c]);  // not what lies past
        }
      }
    }
  }
  store_rows<kRows>(acc, lane, n0, n_rows, y);
}

// Realigned loads as MODE 1, but x staged as the `_a1` build stages A: per 1024 K of the slab,
// converted to fp32 element by element into shared memory (two float4 planes, as the build's
// layout) between two block barriers, then read from there.
template <int U, int kRows>
__global__ void __launch_bounds__(256) gemv_rc_staged(const __nv_bfloat16* __restrict__ x,
                                                      const __nv_bfloat16* __restrict__ w, int n_rows, int k_total,
                                                      int slab, float* __restrict__ y) {
  constexpr int kChunk = 1024, kPlane = kChunk / 2;
  __shared__ __align__(16) float xs[kChunk];
  const int lane = threadIdx.x & 31;
  const long n0 = (long(blockIdx.x) * blockDim.x + threadIdx.x) / 32 * kRows;
  const int kb = blockIdx.y * slab;
  if (kb >= k_total) return;  // the whole block
  const bool active = n0 < n_rows;  // every warp stays for the barriers
  const int len = min(slab, k_total - kb);
  const __nv_bfloat16* aligned[kRows];
  int mis[kRows];
#pragma unroll
  for (int c = 0; c < kRows; ++c) {
    const __nv_bfloat16* p = w + (active ? n0 + c : 0) * k_total + kb;
    mis[c] = static_cast<int>(reinterpret_cast<uintptr_t>(p) % 16 / 2);
    aligned[c] = p - mis[c];
  }
  float acc[kRows] = {};
  for (int c0 = 0; c0 < len; c0 += kChunk) {  // kChunk: a multiple of 8, so mis[] holds
    const int clen = min(kChunk, len - c0);
    __syncthreads();
    for (int i = threadIdx.x; i < kChunk; i += blockDim.x)
      xs[i % 8 / 4 * kPlane + i / 8 * 4 + i % 4] = i < clen ? __bfloat162float(x[kb + c0 + i]) : 0.0f;
    __syncthreads();
    if (!active) continue;
    const int steps = (clen + 255) / 256;
    for (int s0 = 0; s0 < steps; s0 += U) {
      uint4 raw[U][kRows], tail[U][kRows];
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const int k = (s0 + u) * 256 + lane * 8;
#pragma unroll
        for (int c = 0; c < kRows; ++c) {
          const bool row = n0 + c < n_rows;
          raw[u][c] = row && k - mis[c] < clen ? ld16(aligned[c] + c0 + k) : make_uint4(0, 0, 0, 0);
          tail[u][c] = row && lane == 31 && mis[c] > 0 && k + 8 - mis[c] < clen
                           ? ld16(aligned[c] + c0 + k + 8) : make_uint4(0, 0, 0, 0);
        }
      }
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const int k = (s0 + u) * 256 + lane * 8;
        const float4 lo = *reinterpret_cast<const float4*>(xs + k / 8 * 4);
        const float4 hi = *reinterpret_cast<const float4*>(xs + kPlane + k / 8 * 4);
        const float xv[8] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
#pragma unroll
        for (int c = 0; c < kRows; ++c) {
          const uint4 next = shfl_down(raw[u][c]);
          float wv[8];
          unpack(realign(raw[u][c], lane == 31 ? tail[u][c] : next, 2 * mis[c]), wv);
#pragma unroll
          for (int j = 0; j < 8; ++j) acc[c] = fmaf(xv[j], k + j < clen ? wv[j] : 0.0f, acc[c]);
        }
      }
    }
  }
  if (!active) return;
  store_rows<kRows>(acc, lane, n0, n_rows, y);
}

using Kernel = void (*)(const __nv_bfloat16*, const __nv_bfloat16*, int, int, int, float*);
constexpr Kernel kKernels[] = {gemv_rc<0, 4>,    gemv_rc<0, 16>,       gemv_rc<1, 1>,          gemv_rc<1, 2>,
                               gemv_rc<1, 4>,    gemv_rc<2, 2>,        gemv_rc<1, 2, 2>,       gemv_rc<1, 4, 1>,
                               gemv_rc_staged<1, 4>, gemv_rc_staged<4, 1>};
constexpr int kRowsOf[] = {4, 4, 4, 4, 4, 4, 2, 1, 4, 1};  // weight rows per warp of each variant

}  // namespace

bool run(torch::Tensor x, torch::Tensor w, torch::Tensor y, int64_t variant, int64_t splits) {
  const int n = static_cast<int>(w.size(0)), k = static_cast<int>(w.size(1));
  if (variant == 5 && k % 8 != 0) return false;
  const int slab = (k + splits - 1) / splits + 255 & ~255;
  if ((k + slab - 1) / slab != splits) return false;
  auto stream = at::cuda::getCurrentCUDAStream();
  if (splits > 1) y.zero_();
  const int rows_per_block = 8 * kRowsOf[variant];  // 8 warps
  const dim3 grid((n + rows_per_block - 1) / rows_per_block, static_cast<unsigned>(splits));
  kKernels[variant]<<<grid, 256, 0, stream>>>(reinterpret_cast<const __nv_bfloat16*>(x.data_ptr()),
                                              reinterpret_cast<const __nv_bfloat16*>(w.data_ptr()), n, k, slab,
                                              y.data_ptr<float>());
  return true;
}
"""

VARIANTS = ["elem 4", "elem 16", "realign 1", "realign 2", "realign 4", "aligned 2", "realign 2, 2 rows",
            "realign 4, 1 row", "realign 1, x staged", "realign 4, 1 row, x staged"]
SHAPES = [(10984, 14263), (6091, 11706), (4096, 4097), (14336, 4095), (4096, 14337), (10984, 14264), (4096, 4096)]


def main() -> None:
    ext = compile_probe("gemv_odd_k_probe", SOURCE,
                        "bool run(torch::Tensor x, torch::Tensor w, torch::Tensor y, int64_t variant, int64_t splits)")
    rows = []
    for n, k in SHAPES:
        x = torch.randn(1, k, device="cuda", dtype=torch.bfloat16)
        w = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)  # row n at n * k: off 16 bytes unless k % 8 == 0
        ref = (x.double() @ w.double().t()).float()[0]
        y = torch.empty(n, device="cuda")
        gb = 2 * n * k / 1e3  # weight bytes / 1e3: GB/s from microseconds
        row = {"shape": f"1x{n}x{k}", "torch": round(time_us(lambda: torch.mm(x, w.t())), 1)}
        for v, name in enumerate(VARIANTS):  # sums of up to 14k products of N(0, 1): atol 0.5
            row[name] = best_split(lambda s: ext.run(x, w, y, v, s), y, ref, (1, 2, 4), row, name, atol=5e-1)
        row["torch again"] = round(time_us(lambda: torch.mm(x, w.t())), 1)
        torch_us = min(row["torch"], row["torch again"])
        row["GB/s torch"] = round(gb / torch_us)
        row["torch / variant"] = {name: round(torch_us / row[name][0], 3) for name in VARIANTS if row.get(name)}
        rows.append(row)
        print(json.dumps(row), flush=True)
    save_rows(rows, "gemv_odd_k.json")


if __name__ == "__main__":
    main()
