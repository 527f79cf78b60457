#include "ops/aten_override.h"

#include <memory>
#include <mutex>

#include <torch/library.h>

#include "ops/addmm.h"
#include "ops/mm.h"

namespace cutlass_ops {

namespace {

std::mutex mutex;
// Destroying the Library removes our kernels and the dispatcher falls back to the previous
// CUDA registration: torch's own.
std::unique_ptr<torch::Library> library;

}  // namespace

void set_aten_override(bool enabled) {
  std::lock_guard<std::mutex> lock(mutex);
  if (enabled && !library) {
    library = std::make_unique<torch::Library>(torch::Library::IMPL, "aten", c10::DispatchKey::CUDA, __FILE__,
                                               __LINE__);
    library->impl("mm", &mm_cuda);
    library->impl("mm.out", &mm_out_cuda);
    // nn.Linear with a bias (F.linear folds its input's leading dims into rows and calls addmm)
    // and torch.addmm; _addmm_activation is what torch.compile's fused linear + relu/gelu calls.
    library->impl("addmm", &addmm_cuda);
    library->impl("addmm.out", &addmm_out_cuda);
    library->impl("_addmm_activation", &addmm_activation_cuda);
    library->impl("_addmm_activation.out", &addmm_activation_out_cuda);
    // Batched products: torch.bmm, torch.baddbmm, and torch.matmul of batches (attention's
    // q @ k^T and att @ v), which aten::matmul runs as bmm.
    library->impl("bmm", &bmm_cuda);
    library->impl("bmm.out", &bmm_out_cuda);
    library->impl("baddbmm", &baddbmm_cuda);
    library->impl("baddbmm.out", &baddbmm_out_cuda);
  } else if (!enabled && library) {
    library.reset();
  }
}

bool aten_override_enabled() {
  std::lock_guard<std::mutex> lock(mutex);
  return library != nullptr;
}

}  // namespace cutlass_ops
