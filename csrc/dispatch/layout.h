// Sorting a strided 2-D view into a BLAS layout, and measuring its alignment.
//
// The same rules as PyTorch's prepare_matrix_for_cublas (aten/src/ATen/native/cuda/Blas.cpp),
// written for our planner: a view is row-major if its columns are contiguous and its
// rows do not overlap (leading dim >= max(1, cols)), column-major in the mirrored case,
// and otherwise needs a contiguous copy. Size-1 dimensions place no constraint on their
// stride, so a 1 x K row or a K x 1 column never needs a copy.
#pragma once

#include <algorithm>
#include <cstdint>

#include "dispatch/types.h"

namespace cutlass_ops {

// A strided matrix exactly as torch describes it.
struct MatrixDesc {
  int64_t rows = 0, cols = 0;
  int64_t stride_row = 0, stride_col = 0;  // elements, torch's stride(0) and stride(1)
  uint64_t address = 0;                    // byte address of element (0, 0)
  // One matrix of a batch (bmm): the next matrix starts this many elements further on (torch's
  // stride(0) of the 3-D tensor; 0 for an expanded batch). Unused for a single matrix.
  int64_t stride_batch = 0;
};

struct OperandLayout {
  bool blas_compatible = false;  // false: no BLAS layout describes these strides
  Layout layout = Layout::kRowMajor;
  int64_t ld = 0;
};

inline OperandLayout classify(const MatrixDesc& m) {
  const bool row_ok = (m.cols <= 1 || m.stride_col == 1) &&
                      (m.rows <= 1 || m.stride_row >= std::max<int64_t>(1, m.cols));
  if (row_ok) {
    // With a single row the row stride is never used: any ld >= cols describes it.
    return {true, Layout::kRowMajor, m.rows <= 1 ? std::max<int64_t>(1, m.cols) : m.stride_row};
  }
  const bool col_ok = (m.rows <= 1 || m.stride_row == 1) &&
                      (m.cols <= 1 || m.stride_col >= std::max<int64_t>(1, m.rows));
  if (col_ok) {
    return {true, Layout::kColMajor, m.cols <= 1 ? std::max<int64_t>(1, m.rows) : m.stride_col};
  }
  return {false, Layout::kRowMajor, std::max<int64_t>(1, m.cols)};
}

// The layout a contiguous copy of `m` would have.
inline OperandLayout contiguous_layout(const MatrixDesc& m) {
  return {true, Layout::kRowMajor, std::max<int64_t>(1, m.cols)};
}

// Whether the matrices of a batch of `batch` (each as `layout` describes it) share no element:
// what an output needs, since every matrix is written. Torch's strides are never negative.
inline bool batch_disjoint(const MatrixDesc& m, const OperandLayout& layout, int64_t batch) {
  if (batch <= 1 || m.rows == 0 || m.cols == 0) return true;
  const int64_t outer = layout.layout == Layout::kRowMajor ? m.rows : m.cols;
  const int64_t inner = layout.layout == Layout::kRowMajor ? m.cols : m.rows;
  // One matrix spans [0, (outer - 1) * ld + inner) elements from its start.
  return m.stride_batch >= (outer - 1) * layout.ld + inner;
}

// Widest vector access, in elements (a power of two, at most 16 bytes' worth), that is
// aligned at every row or column start of an operand: the address, the leading dimension
// and the contiguous extent must all be multiples of it. The extent matters because
// CUTLASS's can_implement checks it (vector loads along the contiguous dimension are not
// predicated element by element). TMA needs 16 bytes of all three. Returns 0 when the
// address is not even aligned to one element (a reinterpreted byte buffer, say).
inline int alignment_elements(uint64_t address, int64_t ld, int64_t contiguous_extent,
                              int elem_bytes) {
  if (address % static_cast<uint64_t>(elem_bytes) != 0) return 0;
  int align = 16 / elem_bytes;
  while (align > 1 && (address % static_cast<uint64_t>(align * elem_bytes) != 0 || ld % align != 0 ||
                       contiguous_extent % align != 0)) {
    align /= 2;
  }
  return align;
}

}  // namespace cutlass_ops
