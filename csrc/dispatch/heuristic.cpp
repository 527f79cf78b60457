#include "dispatch/heuristic.h"

#include <cstring>

#include "dispatch/configs.h"

namespace cutlass_ops {

namespace {
int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
}  // namespace

Preference preferred_configs(const Plan& p, const DeviceDesc& dev) {
  using namespace configs;
  Preference pref;
  // SM90 kernels are built for sm_90a, which runs on compute capability 9.0 only.
  const bool hopper = dev.cc == 90;

  switch (p.precision) {
    case Precision::kF16:
    case Precision::kBF16:
      if (hopper) {
        // One 128x256 tile per SM or more: the cooperative kernel keeps every SM busy with
        // the largest tile. Fewer: 128x128 tiles spread the work over more SMs.
        const int64_t big_tiles = ceil_div(p.m, 128) * ceil_div(p.n, 256);
        if (big_tiles >= dev.sm_count) {
          pref.add(Sm90_128x256x64_2x1x1_Coop::kName);
          pref.add(Sm90_128x128x64_1x1x1_Pingpong::kName);
          pref.reason = "sm90 16-bit, >= 1 tile of 128x256 per SM: cooperative 128x256";
        } else {
          pref.add(Sm90_128x128x64_1x1x1_Pingpong::kName);
          pref.add(Sm90_128x256x64_2x1x1_Coop::kName);
          pref.reason = "sm90 16-bit, < 1 tile of 128x256 per SM: ping-pong 128x128";
        }
      } else {
        pref.reason = "pre-sm90 16-bit: multistage tensor-op, widest alignment that fits";
      }
      pref.add(Sm80_128x256x64_64x64x64_3s::kName);
      pref.add(Sm80_128x128x32_64x64x32_3s::kName);
      pref.add(Sm80Simt_128x128x8_32x64x8_2s::kName);  // odd addresses or leading dims
      break;

    case Precision::kTF32:
      if (hopper) {
        pref.add(Sm90_128x128x32_1x1x1_Coop::kName);
        pref.reason = "sm90 tf32: cooperative 128x128x32";
      } else {
        pref.reason = "pre-sm90 tf32: multistage tensor-op";
      }
      pref.add(Sm80_128x128x32_64x64x32_3s::kName);
      break;

    case Precision::kF32:
      pref.add(Sm80Simt_128x128x8_32x64x8_4s::kName);
      pref.reason = "float32 without TF32: IEEE fp32 SIMT kernel";
      break;

    case Precision::kF64:
      pref.add(Sm80_128x128x16_32x64x16_3s::kName);
      pref.reason = "float64: DMMA tensor-op kernel";
      break;
  }
  return pref;
}

namespace {

// Sustained rates, TFLOP/s, read off benchmarks/RESULTS.md (H200, 2026-11-22) for large
// problems; deliberately round. They only have to order the choices.
double sustained_tflops(const KernelInfo& k) {
  const bool sixteen_bit = k.precision == Precision::kF16 || k.precision == Precision::kBF16;
  if (std::strcmp(k.family, "cutlass3x") == 0) return sixteen_bit ? 600.0 : 300.0;
  if (std::strstr(k.config, "simt") != nullptr) return sixteen_bit ? 35.0 : 45.0;
  if (sixteen_bit) return k.align_a >= 8 ? 350.0 : 200.0;
  return k.align_a >= 4 ? 150.0 : 100.0;  // TF32 tensor-op
}

constexpr double kCopyBandwidth = 2.5e12;  // bytes/s a padding copy achieves (read + write)
constexpr double kLaunchSeconds = 4e-6;    // per extra kernel launch

}  // namespace

bool prefer_staging(const Plan& p, const KernelInfo* kernel, const Plan& s, const KernelInfo& staged_kernel,
                    const DeviceDesc& dev) {
  (void)dev;
  const double flops = 2.0 * static_cast<double>(p.m) * static_cast<double>(p.n) * static_cast<double>(p.k);
  if (kernel == nullptr) return true;
  const double unstaged = flops / (sustained_tflops(*kernel) * 1e12);
  // A and B are read and written once each, the padded result written and read once more.
  const double eb = element_bytes(p.precision);
  const double bytes = 2.0 * eb *
                       (static_cast<double>(s.m) * s.k + static_cast<double>(s.k) * s.n + static_cast<double>(s.m) * s.n);
  const double staged = 2.0 * static_cast<double>(s.m) * s.n * s.k / (sustained_tflops(staged_kernel) * 1e12) +
                        bytes / kCopyBandwidth + 3 * kLaunchSeconds;
  return staged < unstaged;
}

}  // namespace cutlass_ops
