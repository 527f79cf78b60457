// torch.matmul's cases, each turned into one product of cutlass_ops (the rules of torch's
// at::matmul, aten/src/ATen/native/LinearAlgebra.cpp, reimplemented):
//
//   1-D @ 1-D   the dot product: a (1 x K) @ (K x 1) product, a 0-D result
//   2-D @ 1-D   a matrix-vector product: (M x K) @ (K x 1), the column dropped
//   1-D @ 2-D   (1 x K) @ (K x N), the row dropped
//   2-D @ 2-D   mm
//   N-D @ 2-D or 1-D (N >= 3)   the batch dims folded into rows: one mm of (B*M) x K by K x N,
//               when the rows fold without a copy (or the matrix needs a gradient, so that
//               backward makes one weight gradient rather than a batch of them); else bmm
//   otherwise   the batch dims broadcast against each other, each side expanded and flattened
//               into one batch dim, and one bmm (an operand broadcast along a single batch dim
//               keeps batch stride 0: no copy)
#include "ops/matmul.h"

#include <vector>

#include <ATen/ATen.h>
#include <ATen/ExpandUtils.h>

#include "ops/op_handles.h"

namespace cutlass_ops {

namespace {

// Whether an N-D (N >= 3) operand folds its batch dims into its rows without a copy: torch's
// test, for the one layout where it does not (3-D, matrices transposed, batches packed).
bool folds_without_copy(const at::Tensor& t) {
  if (t.dim() != 3) return true;  // reshape decides; torch folds these too
  return !(t.stride(2) != 1 && t.stride(0) == t.size(1) * t.size(2));
}

at::Tensor product(const at::Tensor& a, const at::Tensor& b) { return op::mm().call(a, b); }
at::Tensor batched_product(const at::Tensor& a, const at::Tensor& b) { return op::bmm().call(a, b); }

// torch.matmul multiplies a matrix by a vector with mv: its error, in its words.
void check_fits_vector(const at::Tensor& mat, const at::Tensor& vec) {
  TORCH_CHECK(mat.sym_size(1) == vec.sym_size(0), "size mismatch, got input (", mat.sym_size(0), "), mat (",
              mat.sym_size(0), "x", mat.sym_size(1), "), vec (", vec.sym_size(0), ")");
}

}  // namespace

at::Tensor matmul_composite(const at::Tensor& self, const at::Tensor& other) {
  const int64_t da = self.dim(), db = other.dim();
  TORCH_CHECK(da > 0 && db > 0, "both arguments to matmul need to be at least 1D, but they are ", da, "D and ", db,
              "D");
  if (da == 1 && db == 1) {
    TORCH_CHECK(self.sym_size(0) == other.sym_size(0), "inconsistent tensor size, expected tensor [",
                self.sym_size(0), "] and src [", other.sym_size(0),
                "] to have the same number of elements, but got ", self.sym_size(0), " and ", other.sym_size(0),
                " elements respectively");
    return product(self.unsqueeze(0), other.unsqueeze(1)).squeeze(1).squeeze(0);
  }
  if (da == 2 && db == 1) {
    check_fits_vector(self, other);
    return product(self, other.unsqueeze(1)).squeeze(1);
  }
  if (da == 1 && db == 2) return product(self.unsqueeze(0), other).squeeze(0);
  if (da == 2 && db == 2) return product(self, other);

  if (da >= 3 && db <= 2 && (folds_without_copy(self) || other.requires_grad())) {
    // Fold: (batch..., M, K) -> (batch * M, K), one mm, the batch dims restored.
    std::vector<c10::SymInt> out_shape(self.sym_sizes().begin(), self.sym_sizes().end() - 1);
    const at::Tensor rows = self.reshape_symint({-1, self.sym_size(-1)});
    if (db == 1) {
      check_fits_vector(rows, other);
      return product(rows, other.unsqueeze(1)).view_symint(out_shape);
    }
    out_shape.push_back(other.sym_size(1));
    return product(rows, other).view_symint(out_shape);
  }

  // Broadcast the batch dims; a 1-D operand is a single row (self) or column (other).
  const at::Tensor a = da == 1 ? self.unsqueeze(0) : self;
  const at::Tensor b = db == 1 ? other.unsqueeze(1) : other;
  const c10::SymInt m = a.sym_size(-2), k = a.sym_size(-1), k2 = b.sym_size(-2), n = b.sym_size(-1);
  const std::vector<c10::SymInt> batch_a(a.sym_sizes().begin(), a.sym_sizes().end() - 2);
  const std::vector<c10::SymInt> batch_b(b.sym_sizes().begin(), b.sym_sizes().end() - 2);
  const std::vector<c10::SymInt> batch = at::infer_size_symint(batch_a, batch_b);
  c10::SymInt count = 1;
  for (const c10::SymInt& d : batch) count = count * d;
  TORCH_CHECK(k == k2, "Expected size for first two dimensions of batch2 tensor to be: [", count, ", ", k,
              "] but got: [", count, ", ", k2, "].");

  std::vector<c10::SymInt> shape_a = batch, shape_b = batch;
  shape_a.insert(shape_a.end(), {m, k});
  shape_b.insert(shape_b.end(), {k2, n});
  const at::Tensor a3 = a.expand_symint(shape_a).reshape_symint({count, m, k});
  const at::Tensor b3 = b.expand_symint(shape_b).reshape_symint({count, k2, n});
  at::Tensor out = batched_product(a3, b3);

  std::vector<c10::SymInt> out_shape = batch;
  if (da > 1) out_shape.push_back(m);
  if (db > 1) out_shape.push_back(n);
  return out.view_symint(out_shape);
}

}  // namespace cutlass_ops
