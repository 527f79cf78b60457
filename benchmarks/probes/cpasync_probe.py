"""Would SM90 kernels that load unaligned operands with cp.async beat the CUTLASS 2.x kernels that
run them now?

TMA reads only operands whose leading dims and addresses are 16-byte aligned, so an odd K
(TF32: a leading dim off 4 elements; 16-bit: off 8) sends a problem to CUTLASS 2.x's mma.sync
kernels, to a zero-padded copy feeding an SM90 kernel, or to the hand-written streaming kernels.
On the H200 sweep's training split the TF32 problems of 8-30 us with an unaligned operand and
neither side under 17 run 0.84x torch.mm on the best built kernel (geomean, 35 problems); of all
its unaligned TF32 problems below 0.9x, 45 of 73 run best on the CUTLASS 2.x 64x64x32
alignment-1 kernel. CUTLASS 3.x also builds WGMMA kernels whose
producer warps load A and B with cp.async (4, 8 or 16 bytes a copy, any alignment of that size)
and whose epilogue stores D from registers (KernelCpAsyncWarpSpecialized{,Cooperative,Pingpong}
with the NoSmemWarpSpecialized epilogue). This probe builds some (cpasync_probe.cu, one build per
variant, compiled in parallel), in F.linear's layout (A row-major, the weight N x K row-major:
TF32 WGMMA reads both K-major), checks each against torch, and times them beside torch.mm and
cutlass_ops.mm (whose kernel it names): CUDA events around each call after a 256 MB write
flushes the L2 and a GPU spin covers the launch, implementations alternated in rounds, medians.
Needs an SM90 GPU, nvcc and the nvidia-cutlass package.

    python benchmarks/probes/cpasync_probe.py [--set tf32|bf16] [--shapes MxNxK ...] [--pitch P]

--pitch: the operands' row pitch is K rounded up to P elements (default 1: K itself), so an
aligned pitch with an odd K asks about the K tail alone.
"""

from __future__ import annotations

import argparse
import ctypes
import tempfile
from pathlib import Path

import torch

import cutlass_ops
from probe_cutlass import alternated_medians, build_variants, checked_variants

SOURCE = Path(__file__).with_suffix(".cu")

# name: (tile M, N, K, schedule (0: one consumer warpgroup, 1: cooperative, 2: ping-pong),
#        TF32 (else bf16), operands' alignment in elements)
VARIANT_SETS = {
    "tf32": {
        "coop128x128k32 a1": (128, 128, 32, 1, 1, 1),
        "coop128x64k32 a1": (128, 64, 32, 1, 1, 1),
        "pp64x128k32 a1": (64, 128, 32, 2, 1, 1),
        "pp64x64k32 a1": (64, 64, 32, 2, 1, 1),
        "ws128x128k32 a1": (128, 128, 32, 0, 1, 1),
        "coop128x128k32 a2": (128, 128, 32, 1, 1, 2),
    },
    "bf16": {
        "coop128x128k64 a2": (128, 128, 64, 1, 0, 2),
        "pp64x128k64 a2": (64, 128, 64, 2, 0, 2),
        "pp64x64k64 a2": (64, 64, 64, 2, 0, 2),
    },
}

# (M, N, K): odd K (TF32 alignment 1; 16-bit: 2-element alignment needs K = 2 mod 4, see main),
# the sweep's losing size class first (8-30 us), then larger ones
SHAPES = [(300, 500, 1001), (777, 640, 999), (1000, 1000, 1001), (2000, 900, 511), (513, 2049, 1023),
          (1500, 1500, 1499), (3000, 2000, 2047), (4095, 4097, 4093)]


def macros(variant: tuple) -> dict[str, int]:
    """The build macros of a VARIANT_SETS entry (cpasync_probe.cu)."""
    tm, tn, tk, sched, tf32, align = variant
    return {"PROBE_TILE_M": tm, "PROBE_TILE_N": tn, "PROBE_TILE_K": tk, "PROBE_SCHED": sched, "PROBE_TF32": tf32,
            "PROBE_ALIGN": align}


# probe_run(a, b, d, m, n, k, lda, ldb, sm_count, stream, &stages)
ENTRY_ARGTYPES = [ctypes.c_void_p] * 3 + [ctypes.c_int] * 6 + [ctypes.c_void_p, ctypes.POINTER(ctypes.c_int)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--set", default="tf32", choices=sorted(VARIANT_SETS), help="which kernels to build")
    ap.add_argument("--shapes", nargs="+", metavar="MxNxK", help="the problems (default: SHAPES)")
    ap.add_argument("--pitch", type=int, default=1, help="round the operands' row pitch up to this many elements")
    args = ap.parse_args()
    shapes = [tuple(int(x) for x in s.split("x")) for s in args.shapes] if args.shapes else SHAPES
    variants = VARIANT_SETS[args.set]
    tf32 = args.set == "tf32"
    if not tf32 and not args.shapes:  # 16-bit at 2-element (4-byte) alignment: K = 2 mod 4
        shapes = [(m, n, k + 1 if k % 4 == 1 else k - 1) for m, n, k in shapes]
    libs = build_variants(SOURCE, Path(tempfile.mkdtemp(prefix="cpasync_probe_")),
                          {name: macros(v) for name, v in variants.items()}, ENTRY_ARGTYPES)
    dtype = torch.float32 if tf32 else torch.bfloat16
    torch.backends.cuda.matmul.allow_tf32 = tf32
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    flush = torch.empty(256 * 1024 * 1024 // 4, device="cuda")
    print(torch.cuda.get_device_name(), args.set, f"rc, pitch rounded to {args.pitch}; us (speed against torch)",
          flush=True)
    stages = ctypes.c_int(0)
    for m, n, k in shapes:
        pitch = -(-k // args.pitch) * args.pitch
        a = torch.randn(m, pitch, device="cuda", dtype=dtype)[:, :k]
        w = torch.randn(n, pitch, device="cuda", dtype=dtype)[:, :k]
        d = torch.empty(m, n, device="cuda", dtype=dtype)
        ref = torch.mm(a.double(), w.t().double())
        stream = torch.cuda.current_stream().cuda_stream

        def ours(lib):
            return lambda: lib.probe_run(a.data_ptr(), w.data_ptr(), d.data_ptr(), m, n, k, pitch, pitch, sms,
                                         ctypes.c_void_p(stream), ctypes.byref(stages))

        impls = {"torch": lambda: torch.mm(a, w.t(), out=d), "cutlass_ops": lambda: cutlass_ops.mm(a, w.t(), out=d)}
        picked = cutlass_ops.explain(a, w.t()).kernel
        checked, info = checked_variants(libs, ours, d, ref, 5e-3 if tf32 else 2e-2, stages)
        impls.update(checked)
        med = alternated_medians(impls, flush)
        theirs = med.pop("torch")
        cells = "  ".join(f"{name}{f' [{info[name]}st]' if name in info else ''} {t:.1f} ({theirs / t:.3f}x)"
                          for name, t in med.items())
        print(f"{m}x{n}x{k}: torch {theirs:.1f} | {cells} | cutlass_ops ran {picked}", flush=True)
        del a, w, d, ref
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
