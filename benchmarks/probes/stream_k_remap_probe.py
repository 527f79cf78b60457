"""CUTLASS 2.x's stream-K kernel where it remaps its block indices and where it does not: each
problem's stream-K and data-parallel runs of two tiles, forced through the tuning table, against
torch.mm (`cutlass_ops.bench.timing.median_ms`: L2 flushed, median).

With more than one CTA per SM and over two waves of blocks (reduction CTAs counted),
ThreadblockSwizzleStreamK gives hardware blocks 2i and 2i + 1 the logical blocks i and i + SMs,
expecting the pair on one SM; Hopper places consecutive blocks on different SMs, so one wave of
over SMs/2 stream-K blocks runs two to an SM (cost_model.cpp, cutlass2x_remaps). IEEE
fp32 on the DMMA 64x64 and 32x64 tiles (on the 64x64 tile 2320x24x768 to 64x3072x1024 remap,
5x1024x4096 does not; 13x2610x16303, 891x11x9246 and 1005x29x9452 print torch.mm alone, the
tiles' 4-element alignment refuses them) and bf16 on the 64x64x64 and 64x64x32 tiles (the last
two problems do not remap).
Sm80Gemm::make_arguments balances such launches over one SM fewer, which CUTLASS never remaps
(it does only over the whole device); to time the remapped launches, build with
`make_arguments_over(g, g.sm_count)` in its place and run this on both builds.

    python benchmarks/probes/stream_k_remap_probe.py
"""
import torch

import cutlass_ops
from cutlass_ops import _extension
from cutlass_ops.bench.timing import median_ms
_C = _extension._C
cutlass_ops.set_fp32_mode("ieee")
torch.backends.cuda.matmul.allow_tf32 = False
sms = torch.cuda.get_device_properties(0).multi_processor_count
F32 = ["cutlass2x_sm90_f32_rr_dmma16x8x8_64x64x32_4s_streamk_a4", "cutlass2x_sm90_f32_rr_dmma16x8x8_32x64x32_5s_streamk_a4"]
BF = ["cutlass2x_sm80_bf16_rr_64x64x64_5s_a8", "cutlass2x_sm80_bf16_rr_64x64x32_4s_a4"]
cases = [("f32", s, F32) for s in [(2320, 24, 768), (3144, 40, 6144), (100, 1600, 1600), (13, 2610, 16303), (64, 3072, 1024),
                                   (891, 11, 9246), (1005, 29, 9452), (5, 1024, 4096)]]
cases += [("bf16", s, BF) for s in [(448, 384, 4096), (512, 384, 8192), (384, 448, 2048), (320, 320, 8192), (256, 256, 16384)]]
for prec, (m, n, k), kernels in cases:
    dt = torch.float32 if prec == "f32" else torch.bfloat16
    a = torch.randn(m, k, device="cuda", dtype=dt); b = torch.randn(k, n, device="cuda", dtype=dt)
    ref = a.double() @ b.double()
    _C.tuning_clear()
    t_ms = median_ms(lambda: torch.mm(a, b), rep_ms=20)
    auto = cutlass_ops.explain(a, b)
    out = [f"{prec} {m}x{n}x{k}: torch {1e3*t_ms:.1f}"]
    for name in kernels:
        for dec in ("stream-k", "data-parallel"):
            entry = {"precision": prec, "layout_a": "row", "layout_b": "row", "align": [auto.a.align, auto.b.align, auto.out.align],
                     "cc": 90, "sm_count": sms, "mnk": list(auto.problem), "kernel": name, "decomposition": dec, "splits": 1}
            _C.tuning_clear()
            try:
                _C.tuning_insert(entry)
                plan = cutlass_ops.explain(a, b)
                if not plan.tuned or plan.kernel != name:
                    continue
                err = ((cutlass_ops.mm(a, b).double() - ref).norm() / ref.norm()).item()
                ms = median_ms(lambda: cutlass_ops.mm(a, b), rep_ms=20)
                out.append(f"{name.split('_')[-4] if 'dmma' in name else name.split('_')[-3]}:{dec[:2]} {1e3*ms:.1f}{'' if err < 1e-2 else ' WRONG'}")
            except Exception as e:
                out.append(f"{name[-20:]}:{dec[:2]} refused")
    _C.tuning_clear()
    print("  ".join(out), flush=True)
