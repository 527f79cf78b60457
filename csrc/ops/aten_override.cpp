#include "ops/aten_override.h"

#include <memory>
#include <mutex>

#include <torch/library.h>

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
  } else if (!enabled && library) {
    library.reset();
  }
}

bool aten_override_enabled() {
  std::lock_guard<std::mutex> lock(mutex);
  return library != nullptr;
}

}  // namespace cutlass_ops
