#include "dispatch/heuristic.h"

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

}  // namespace cutlass_ops
