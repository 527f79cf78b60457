#include "ops/settings.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

namespace cutlass_ops::settings {

namespace {

bool env_flag(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr && value[0] != '\0' && std::strcmp(value, "0") != 0;
}

Fp32Mode env_fp32_mode() {
  const char* value = std::getenv("CUTLASS_OPS_FP32");
  if (value == nullptr || value[0] == '\0') return Fp32Mode::kIeee;
  try {
    return parse_fp32_mode(value);
  } catch (const std::invalid_argument&) {
    return Fp32Mode::kIeee;  // cutlass_ops/__init__.py warns about the bad value
  }
}

std::atomic<int> g_fp32_mode{static_cast<int>(env_fp32_mode())};
std::atomic<bool> g_autotune{env_flag("CUTLASS_OPS_AUTOTUNE")};

}  // namespace

Fp32Mode fp32_mode() { return static_cast<Fp32Mode>(g_fp32_mode.load(std::memory_order_relaxed)); }
void set_fp32_mode(Fp32Mode mode) { g_fp32_mode.store(static_cast<int>(mode), std::memory_order_relaxed); }

Fp32Mode parse_fp32_mode(const std::string& name) {
  if (name == "ieee") return Fp32Mode::kIeee;
  if (name == "3xtf32") return Fp32Mode::kTF32x3;
  throw std::invalid_argument("fp32 mode must be 'ieee' or '3xtf32', got '" + name + "'");
}

const char* fp32_mode_name(Fp32Mode mode) { return mode == Fp32Mode::kTF32x3 ? "3xtf32" : "ieee"; }

bool autotune() { return g_autotune.load(std::memory_order_relaxed); }
void set_autotune(bool enabled) { g_autotune.store(enabled, std::memory_order_relaxed); }

}  // namespace cutlass_ops::settings
