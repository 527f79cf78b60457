// PTX wrappers for the Hopper (sm_90a) hand-written GEMM, step 6 of the ladder: mbarriers,
// TMA loads and stores (cp.async.bulk.tensor), wgmma and its shared-memory descriptors, setmaxnreg.
//
// Written from the PTX ISA (sections "Asynchronous Warpgroup Level Matrix Multiply-Accumulate",
// "Tensor Copy" and "mbarrier"), without CUTLASS/CuTe, so each instruction the kernel issues
// is visible here. Everything is device-only and only meaningful when compiled for sm_90a;
// the kernel that uses it guards its body with __CUDA_ARCH_FEAT_SM90_ALL.
#pragma once

#include <cstdint>

#include <cuda.h>  // CUtensorMap (the type only: nothing here links against libcuda)

namespace cutlass_ops::handwritten_sm90 {

__device__ __forceinline__ uint32_t smem_addr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// --- mbarrier ----------------------------------------------------------------------------

__device__ __forceinline__ void mbar_init(uint64_t* bar, uint32_t arrivals) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_addr(bar)), "r"(arrivals) : "memory");
}

// Makes the initialised barriers visible to the async proxy (TMA) before it signals them
// (a CTA launched without a cluster is a cluster of one).
__device__ __forceinline__ void fence_barrier_init() {
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}

// The producer's arrival: one arrival plus the number of bytes TMA will deliver this phase.
__device__ __forceinline__ void mbar_arrive_expect_tx(uint64_t* bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_addr(bar)), "r"(bytes)
               : "memory");
}

__device__ __forceinline__ void mbar_arrive(uint64_t* bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(smem_addr(bar)) : "memory");
}

// Blocks until the phase with the given parity has completed. A freshly initialised barrier
// is in phase 0, so waiting for parity 1 returns at once: that is how the producer's first
// pass over the (initially empty) stages goes through.
__device__ __forceinline__ void mbar_wait(uint64_t* bar, uint32_t parity) {
  const uint32_t addr = smem_addr(bar);
  uint32_t done;
  do {
    asm volatile(
        "{\n"
        ".reg .pred p;\n"
        "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
        "selp.u32 %0, 1, 0, p;\n"
        "}\n"
        : "=r"(done)
        : "r"(addr), "r"(parity)
        : "memory");
  } while (!done);
}

// --- TMA -----------------------------------------------------------------------------------

__device__ __forceinline__ void tma_prefetch_descriptor(const CUtensorMap* map) {
  asm volatile("prefetch.tensormap [%0];" ::"l"(reinterpret_cast<uint64_t>(map)) : "memory");
}

// Loads the box at (c0 = innermost coordinate, c1) into shared memory; completion is counted
// in bytes on `bar`. Out-of-bounds parts of the box arrive as zeros (and still count).
__device__ __forceinline__ void tma_load_2d(void* dst, const CUtensorMap* map, uint64_t* bar, int32_t c0,
                                            int32_t c1) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];" ::"r"(
          smem_addr(dst)),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(smem_addr(bar))
      : "memory");
}

// --- register reallocation -----------------------------------------------------------------

template <int kRegs>
__device__ __forceinline__ void setmaxnreg_dec() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(kRegs));
}
template <int kRegs>
__device__ __forceinline__ void setmaxnreg_inc() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(kRegs));
}

// --- TMA store ------------------------------------------------------------------------------

// Makes this thread's ordinary shared-memory writes visible to the async proxy (a TMA store).
__device__ __forceinline__ void fence_proxy_async_shared() {
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

// Stores the box at (c0, c1) from shared memory; the parts outside the tensor are not written.
__device__ __forceinline__ void tma_store_2d(const CUtensorMap* map, const void* src, int32_t c0, int32_t c1) {
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];" ::"l"(
                   reinterpret_cast<uint64_t>(map)),
               "r"(c0), "r"(c1), "r"(smem_addr(src))
               : "memory");
}
__device__ __forceinline__ void bulk_commit() { asm volatile("cp.async.bulk.commit_group;" ::: "memory"); }
// Waits until at most kPending of this thread's store groups still read shared memory.
template <int kPending>
__device__ __forceinline__ void bulk_wait_read() {
  asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(kPending) : "memory");
}
// Waits until all of this thread's store groups have completed (written to global memory).
__device__ __forceinline__ void bulk_wait_all() { asm volatile("cp.async.bulk.wait_group 0;" ::: "memory"); }

// A 32-bit load from global memory with acquire semantics at GPU scope: the loads after it see
// what the writers released before the value read (split-K's arrival counts).
__device__ __forceinline__ int load_acquire(const int* p) {
  int v;
  asm volatile("ld.acquire.gpu.global.b32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}

// Adds `v` to a 32-bit global counter with release semantics at GPU scope: what this thread (and,
// through a barrier before it, the threads that synchronized with it) wrote before is visible to a
// thread whose load_acquire reads the sum. PTX's release pattern: a fence, then the write, in one
// thread.
__device__ __forceinline__ void add_release(int* p, int v) {
  asm volatile("red.release.gpu.global.add.s32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

// Barrier over `threads` threads (a multiple of 32) on hardware barrier `id` (0 is __syncthreads').
__device__ __forceinline__ void named_barrier_sync(int id, int threads) {
  asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(threads) : "memory");
}

// --- wgmma ---------------------------------------------------------------------------------

// Shared-memory matrix descriptor (PTX ISA "Matrix Descriptor Format"): start address,
// leading and stride byte offsets, all in 16-byte units in 14-bit fields, and the swizzle
// mode in bits 62-63 (1 = 128-byte). The base-offset field stays 0 because every tile
// starts on a 1024-byte boundary (one full 8-row swizzle pattern).
//
// For a 128B-swizzled operand of 16-bit elements:
//   K-major (A; B stored N x K): 8 rows of 64 elements form one 1024-byte swizzle atom;
//     SBO = 1024 steps between 8-row groups; LBO is unused (K never leaves the 128-byte row
//     within one k16 instruction) and is set to 1 by convention.
//   MN-major (B stored K x N): each 128-byte row holds 64 consecutive n for one k; 8 k-rows
//     form an atom; SBO = 1024 steps between 8-k groups, LBO steps between 64-wide n blocks.
__device__ __forceinline__ uint64_t make_smem_desc(uint32_t addr, uint32_t lbo_bytes, uint32_t sbo_bytes) {
  return static_cast<uint64_t>((addr & 0x3FFFF) >> 4) | (static_cast<uint64_t>((lbo_bytes & 0x3FFFF) >> 4) << 16) |
         (static_cast<uint64_t>((sbo_bytes & 0x3FFFF) >> 4) << 32) | (1ull << 62);
}

// Orders this thread's earlier register accesses before the next wgmma reads or writes them.
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }
template <int kPending>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(kPending) : "memory");
}

// Keeps the compiler from moving accumulator reads or writes across the asynchronous
// wgmma boundary (the registers are live inside the tensor core until wgmma_wait).
template <int kCount>
__device__ __forceinline__ void fence_accumulators(float (&d)[kCount]) {
#pragma unroll
  for (int i = 0; i < kCount; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

}  // namespace cutlass_ops::handwritten_sm90

// The wgmma instructions themselves, D(64 x N, fp32, registers) += A(64 x 16) * B(16 x N) with A
// and B read through shared-memory descriptors, one per tile width the step's builds use, and
// wgmma_m64nk16<N, ...> choosing among them: generated from the kernel table (each instruction
// names its N / 2 accumulator registers one by one).
#include "generated/handwritten/wgmma_m64nk16.cuh"
