// Flags for CUTLASS 2.x's stream-K kernel that need no zeroing before each launch.
//
// The CTAs that share an output tile synchronise through flags in the kernel's workspace, which
// CUTLASS's host code (GemmUniversalBase::initialize) zeroes with a cudaMemsetAsync before every
// launch: on few-row products about 1 us of GPU time and a launch gap after it, 2-3 us of a
// 10-16 us product (docs/findings.md, "Few-row IEEE fp32 products"). Every flag a launch raises
// is lowered again by the CTA that waits on it (cutlass/barrier.h, wait_eq_reset: the finishing
// CTA of a tile, or the reduction CTA of a fragment), so a launch that completes leaves its flags
// zero. This keeps one buffer of flags per device and stream, zeroed once when it is made, for
// every stream-K launch on that stream: launches on one stream run in order, so each finds the
// flags its predecessor left zero. A stream is known by its CUDA stream id (cudaStreamGetId),
// unique for the program's life, not by its handle: a destroyed stream's handle may come back
// for a new stream while the old one's launches still run, and cudaStreamPerThread names a
// different stream in each thread. The price: a buffer (4 KiB or more) per stream ever used.
//
// Under stream capture it hands out none (the caller zeroes flags in the call's workspace, as
// CUTLASS does): a captured graph may be replayed on another stream beside launches on this one.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <map>
#include <mutex>
#include <utility>

namespace cutlass_ops::sm80 {

// A buffer of at least `bytes` of zeroed flags for stream-K launches on `stream` (current
// device), or nullptr where there is none to give: under capture, or when it cannot be made.
inline void* stream_k_flags(cudaStream_t stream, size_t bytes) {
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(stream, &capture) != cudaSuccess) {
    cudaGetLastError();
    return nullptr;
  }
  int device = 0;
  unsigned long long id = 0;
  if (capture != cudaStreamCaptureStatusNone || cudaGetDevice(&device) != cudaSuccess) return nullptr;
  if (cudaStreamGetId(stream, &id) != cudaSuccess) {
    cudaGetLastError();
    return nullptr;
  }
  struct Buffer {
    void* ptr = nullptr;
    size_t bytes = 0;
  };
  static std::mutex mutex;
  static std::map<std::pair<int, unsigned long long>, Buffer> buffers;
  std::lock_guard<std::mutex> lock(mutex);
  Buffer& buffer = buffers[{device, id}];
  if (buffer.bytes < bytes) {
    // A larger buffer; the smaller one stays allocated (a launch in flight may still read it).
    // cudaMalloc in relaxed capture mode: another thread's capture in global mode would
    // otherwise refuse it, and end that capture.
    const size_t size = std::max({bytes, 2 * buffer.bytes, size_t{4096}});
    cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
    cudaThreadExchangeStreamCaptureMode(&mode);
    void* ptr = nullptr;
    const bool made = cudaMalloc(&ptr, size) == cudaSuccess;
    cudaThreadExchangeStreamCaptureMode(&mode);
    if (!made || cudaMemsetAsync(ptr, 0, size, stream) != cudaSuccess) {
      cudaGetLastError();  // out of memory, say: the caller zeroes its own
      return nullptr;
    }
    buffer = {ptr, size};
  }
  return buffer.ptr;
}

}  // namespace cutlass_ops::sm80
