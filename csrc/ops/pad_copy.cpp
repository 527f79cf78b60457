// Zero-padded 2-D copies (see pad_copy.h): which kernel runs each copy, and which copies share
// a launch; the kernels, and what each does, are in pad_copy_kernels.cu.
#include "ops/pad_copy.h"

#include <cstdint>

#include <ATen/ATen.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include "ops/pad_copy_kernels.h"

namespace cutlass_ops {

namespace {

using pad_copy::Job;
using pad_copy::Jobs;
using pad_copy::Kernel;
using pad_copy::kRowThreads;
using pad_copy::kTile;

// Whether consecutive elements of `t` run down its columns (its row stride is 1, its column
// stride is not): the tile kernel then walks that side by columns.
bool by_column(const at::Tensor& t) {
  return t.size(0) > 1 && t.stride(0) == 1 && (t.size(1) == 1 || t.stride(1) != 1);
}

// Rows of `t` contiguous, starting on 16-byte boundaries.
bool rows_aligned(const at::Tensor& t) {
  const int64_t eb = t.element_size();
  return (t.size(1) == 1 || t.stride(1) == 1) && (t.size(0) == 1 || t.stride(0) * eb % 16 == 0) &&
         reinterpret_cast<uintptr_t>(t.const_data_ptr()) % 16 == 0;
}

Kernel kernel_for(const PaddedCopy& p) {
  const int64_t vec = 16 / p.dst.element_size();
  if (by_column(p.src) || !rows_aligned(p.dst) || p.dst.size(1) % vec != 0) return Kernel::kTile;
  return p.src.size(1) == 1 || p.src.stride(1) == 1 ? Kernel::kRowsRealigned : Kernel::kRows;
}

int64_t blocks_for(const PaddedCopy& p, Kernel kernel) {
  const int64_t rows = p.dst.size(0), cols = p.dst.size(1);
  if (kernel != Kernel::kTile) {
    const int64_t vec = 16 / p.dst.element_size();
    const int64_t runs = rows * (cols / vec);
    return (runs + kRowThreads - 1) / kRowThreads;
  }
  return ((rows + kTile - 1) / kTile) * ((cols + kTile - 1) / kTile);
}

Job job_for(const PaddedCopy& p, int64_t blocks) {
  Job j;
  j.src = p.src.const_data_ptr();
  j.dst = p.dst.data_ptr();
  j.src_row_stride = p.src.stride(0);
  j.src_col_stride = p.src.stride(1);
  j.dst_row_stride = p.dst.stride(0);
  j.dst_col_stride = p.dst.stride(1);
  j.rows = p.src.size(0);
  j.cols = p.src.size(1);
  j.dst_rows = p.dst.size(0);
  j.dst_cols = p.dst.size(1);
  j.blocks = blocks;
  j.src_begin = reinterpret_cast<uintptr_t>(p.src.storage().data());
  j.src_end = j.src_begin + p.src.storage().nbytes();
  j.src_by_column = by_column(p.src);
  j.dst_by_column = by_column(p.dst);
  return j;
}

// torch's way, for what the kernels do not take.
void torch_padded_copy(const PaddedCopy& p) {
  const int64_t rows = p.src.size(0), cols = p.src.size(1);
  const int64_t dst_rows = p.dst.size(0), dst_cols = p.dst.size(1);
  at::Tensor top = p.dst.narrow(0, 0, rows);
  top.narrow(1, 0, cols).copy_(p.src);
  if (dst_cols > cols) top.narrow(1, cols, dst_cols - cols).zero_();
  if (dst_rows > rows) p.dst.narrow(0, rows, dst_rows - rows).zero_();
}

bool kernels_take(const PaddedCopy& p) {
  const int64_t eb = p.dst.element_size();
  return p.src.dim() == 2 && p.dst.dim() == 2 && p.src.is_cuda() && p.src.device() == p.dst.device() &&
         p.src.scalar_type() == p.dst.scalar_type() && (eb == 2 || eb == 4 || eb == 8) && !p.src.is_conj() &&
         !p.src.is_neg() && p.src.size(0) <= p.dst.size(0) && p.src.size(1) <= p.dst.size(1);
}

}  // namespace

void padded_copies(const PaddedCopy* copies, int count) {
  TORCH_INTERNAL_ASSERT(count == 1 || count == 2, "padded_copies: one or two copies, not ", count);
  // Each group is one launch: copies that share a kernel and an element size (the cost model
  // counts these launches: dispatch/cost_model.cpp, copy_work).
  int64_t blocks[2] = {0, 0};
  Kernel kernels[2] = {Kernel::kTile, Kernel::kTile};
  bool ours[2] = {false, false};
  for (int i = 0; i < count; ++i) {
    const PaddedCopy& p = copies[i];
    if (p.dst.numel() == 0) continue;
    if (!kernels_take(p)) {
      torch_padded_copy(p);
      continue;
    }
    kernels[i] = kernel_for(p);
    blocks[i] = blocks_for(p, kernels[i]);
    ours[i] = true;
  }
  // Two copies can share a launch where their elements are of one size, on one device.
  const bool shareable = count == 2 && ours[0] && ours[1] &&
                         copies[0].dst.element_size() == copies[1].dst.element_size() &&
                         copies[0].dst.device() == copies[1].dst.device();
  // Two straight copies that could share one, one source with contiguous rows and one without:
  // element loads serve both, in one launch.
  if (shareable && kernels[0] != kernels[1] && kernels[0] != Kernel::kTile && kernels[1] != Kernel::kTile) {
    kernels[0] = kernels[1] = Kernel::kRows;
  }
  const bool together = shareable && kernels[0] == kernels[1];
  for (int i = 0; i < count; ++i) {
    if (!ours[i] || (together && i == 1)) continue;
    const PaddedCopy& p = copies[i];
    Jobs jobs{};
    jobs.job[0] = job_for(p, blocks[i]);
    int64_t total = blocks[i];
    if (together) {
      jobs.job[1] = job_for(copies[1], blocks[1]);
      total += blocks[1];
    }
    if (total > INT32_MAX) {  // gridDim.x's bound; no staged operand comes near it
      torch_padded_copy(p);
      if (together) torch_padded_copy(copies[1]);
      continue;
    }
    const c10::cuda::CUDAGuard guard(p.dst.device());
    const cudaStream_t stream = c10::cuda::getCurrentCUDAStream(p.dst.get_device()).stream();
    C10_CUDA_CHECK(pad_copy::launch(kernels[i], static_cast<int>(p.dst.element_size()), jobs, total, stream));
  }
}

}  // namespace cutlass_ops
