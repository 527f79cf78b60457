// Process-wide settings that change how calls are planned, each with an environment
// variable read once at load and a Python setter (cutlass_ops.set_fp32_mode,
// cutlass_ops.set_autotune). Reads are relaxed atomic loads: cheap on every call.
#pragma once

#include <string>

namespace cutlass_ops::settings {

// What float32 matmuls compute when torch has TF32 off (torch.set_float32_matmul_precision
// ("highest"), the default). With TF32 on they run TF32 in every mode, as torch.mm does.
enum class Fp32Mode : int {
  kIeee = 0,    // IEEE fp32 on CUDA cores, as torch.mm (the default)
  kTF32x3 = 1,  // 3xTF32 on tensor cores: fp32-level accuracy, several times faster
};
Fp32Mode fp32_mode();
void set_fp32_mode(Fp32Mode mode);
// "ieee" or "3xtf32"; throws std::invalid_argument naming the choices for anything else.
Fp32Mode parse_fp32_mode(const std::string& name);
const char* fp32_mode_name(Fp32Mode mode);

// Autotuning: a problem with no tuning-table entry is timed on every eligible kernel and
// decomposition once, and the fastest is recorded (CUTLASS_OPS_AUTOTUNE=1).
bool autotune();
void set_autotune(bool enabled);

}  // namespace cutlass_ops::settings
