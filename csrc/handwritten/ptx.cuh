// Thin wrappers over the SM80 PTX instructions the tensor-core steps of the ladder use:
// cp.async (global -> shared without registers), ldmatrix (shared -> mma fragments) and
// mma.sync m16n8k16. Each wrapper is one instruction, so the kernels read like the PTX
// ISA's description of the data movement; none of them exists before SM80.
//
// PTX ISA: https://docs.nvidia.com/cuda/parallel-thread-execution/ sections "cp.async",
// "ldmatrix" and "Matrix Fragments for mma.m16n8k16".
#pragma once

#include <cstdint>

#include "dispatch/types.h"

namespace cutlass_ops::handwritten::ptx {

// Shared-memory operands of these instructions are 32-bit addresses in the shared window.
__device__ inline uint32_t smem_address(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// Copy 16 bytes global -> shared asynchronously. With `valid` false no byte is read and the
// 16 destination bytes are zeroed (src-size 0): the tile edges are zero-filled without a
// branch around the copy. .cg: bypass L1, since each byte is used once per block.
__device__ inline void cp_async_16(uint32_t smem, const void* global, bool valid) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem), "l"(global),
               "r"(valid ? 16 : 0));
}

// An L2 cache policy for the loads of an operand read once: evict-first (its lines displace
// one another, not lines other kernels will read) or, with `evict_first` false, the default
// evict-normal. One register; see stream_b_evict_first (handwritten.cuh) for when.
__device__ inline uint64_t l2_stream_policy(bool evict_first) {
  uint64_t policy;
  if (evict_first) {
    asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;\n" : "=l"(policy));
  } else {
    asm volatile("createpolicy.fractional.L2::evict_normal.b64 %0, 1.0;\n" : "=l"(policy));
  }
  return policy;
}
// 16 bytes global -> registers under an L2 cache policy (l2_stream_policy).
__device__ inline uint4 ld_global_16(const void* global, uint64_t policy) {
  uint4 r;
  asm("ld.global.L2::cache_hint.v4.u32 {%0, %1, %2, %3}, [%4], %5;\n"
      : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w)
      : "l"(global), "l"(policy));
  return r;
}
// One 2-, 4- or 8-byte element global -> register under an L2 cache policy: the loads of the
// unaligned streaming kernels (gemm_skinny_m_sm80.cu), whose rows may start at any element.
__device__ inline uint16_t ld_global_2(const void* global, uint64_t policy) {
  uint16_t r;
  asm("ld.global.L2::cache_hint.b16 %0, [%1], %2;\n" : "=h"(r) : "l"(global), "l"(policy));
  return r;
}
__device__ inline uint32_t ld_global_4(const void* global, uint64_t policy) {
  uint32_t r;
  asm("ld.global.L2::cache_hint.b32 %0, [%1], %2;\n" : "=r"(r) : "l"(global), "l"(policy));
  return r;
}
__device__ inline uint64_t ld_global_8(const void* global, uint64_t policy) {
  uint64_t r;
  asm("ld.global.L2::cache_hint.b64 %0, [%1], %2;\n" : "=l"(r) : "l"(global), "l"(policy));
  return r;
}
// cp_async_16 under an L2 cache policy (l2_stream_policy).
__device__ inline void cp_async_16(uint32_t smem, const void* global, bool valid, uint64_t policy) {
  asm volatile("cp.async.cg.shared.global.L2::cache_hint [%0], [%1], 16, %2, %3;\n" ::"r"(smem), "l"(global),
               "r"(valid ? 16 : 0), "l"(policy));
}
// Close the group of copies issued since the last commit.
__device__ inline void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }

// Wait until at most `kPending` committed groups are still in flight.
template <int kPending>
__device__ inline void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending));
}

// Four 8x8 matrices of 16-bit elements, shared -> registers. Lanes 8q..8q+7 give the row
// addresses of matrix q; register q of every lane receives its two elements of matrix q
// (row lane / 4, columns 2 * (lane % 4) and + 1) -- the mma A-fragment order.
__device__ inline void ldmatrix_x4(uint32_t (&r)[4], uint32_t smem) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem));
}

// The same, each matrix transposed on the way: a lane receives two elements of one column
// (rows 2 * (lane % 4) and + 1, column lane / 4). This turns a K-major (row-major B) tile
// into mma's "col" B fragment without a transpose in memory.
__device__ inline void ldmatrix_x4_trans(uint32_t (&r)[4], uint32_t smem) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem));
}

// D += A * B for one warp: A 16x16 (row), B 16x8 (col), D 16x8 fp32. Fragments as the
// PTX ISA lays them out for m16n8k16 (a: 4 registers of 2 elements, b: 2, d: 4 floats).
template <Precision P>
__device__ inline void mma_m16n8k16(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]);

template <>
__device__ inline void mma_m16n8k16<Precision::kBF16>(float (&d)[4], const uint32_t (&a)[4],
                                                      const uint32_t (&b)[2]) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

template <>
__device__ inline void mma_m16n8k16<Precision::kF16>(float (&d)[4], const uint32_t (&a)[4],
                                                     const uint32_t (&b)[2]) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// TF32: a float rounded to TF32 (10 mantissa bits, to nearest, ties away from zero), still in
// a 32-bit register; mma reads only the TF32 bits, and would truncate the rest.
__device__ inline uint32_t to_tf32(uint32_t x) {
  uint32_t r;
  asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "r"(x));
  return r;
}
// D += A * B for one warp: A 16x8 (row), B 8x8 (col), D 16x8 fp32, TF32 products. Fragments
// (g = lane / 4, t = lane % 4): a0..a3 = A[g][t], A[g + 8][t], A[g][t + 4], A[g + 8][t + 4];
// b0, b1 = B[t][g], B[t + 4][g]; d as for m16n8k16.
__device__ inline void mma_m16n8k8_tf32(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

}  // namespace cutlass_ops::handwritten::ptx
