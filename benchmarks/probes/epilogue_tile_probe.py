"""Does a larger epilogue subtile speed up CUTLASS 3.x kernels on products that are bound by
writing D (a short K and a large output: attention's q @ k^T, shallow weight products)?

CUTLASS's EpilogueTileAuto stores a ping-pong tile in 64 x 32 subtiles and a cooperative one in
128 x 32 (cutlass/epilogue/collective/builders/sm90_builder.inl): each a round of register ->
shared memory -> TMA store, 64 bytes of a bf16 row at a time. This probe builds the same
kernels as cutlass_ops's (bf16, "rc": A row-major, B column-major, D row-major; persistent,
TMA + WGMMA) with the automatic subtile and with wider ones (epilogue_tile_probe.cu, one build
per variant, compiled in parallel), checks each against torch, and times them beside torch.mm /
torch.bmm: CUDA events around each call after a 256 MB write flushes the L2 and a GPU spin
covers the launch, implementations alternated in rounds, medians. Needs an SM90 GPU, nvcc and
the nvidia-cutlass package.

Other sets ask other questions of the same builds: `clusters`, does a 2x1 or 1x2 cluster (TMA
multicast of one operand) speed up the 128x128 tile where its loads through L2 bound it?
`swapped`, do swap-AB tiles whose row side fits the row count (80-160 rows) reach cuBLAS on
mid-size F.linear products? `large`, wide swapped tiles on large ones? `small_clusters` and
`row_clusters`, small tiles with clusters of up to eight CTAs at 65-512 rows? `tiny`, tiles
8-16 columns wide on products that take cuBLAS about 2 us? `tiny_stages`, fewer main-loop
stages there? `tiny_direct`, D stored from registers there?

    python benchmarks/probes/epilogue_tile_probe.py [--set NAME] [--shapes [Bx]MxNxK ...]

(NAME: adopted, others, streamk, tf32, clusters, swapped, large, small_clusters, row_clusters, tiny, tiny_stages, tiny_direct.)
"""

from __future__ import annotations

import argparse
import ctypes
import tempfile
from pathlib import Path

import torch

from probe_cutlass import alternated_medians, build_variants, checked_variants

SOURCE = Path(__file__).with_suffix(".cu")

# The ping-pong tiles of the "small_clusters" set (each as a VARIANT_SETS entry below: tile, cluster,
# ..., swap-AB), which "row_clusters" shares in part.
SMALL_CLUSTERS = {
    "pp64x64 1x1": (64, 64, 64, 1, 1, 0, 0, 0, 0, 0),
    "pp64x64 2x1": (64, 64, 64, 2, 1, 0, 0, 0, 0, 0),
    "pp64x64 4x1": (64, 64, 64, 4, 1, 0, 0, 0, 0, 0),
    "pp64x64 2x2": (64, 64, 64, 2, 2, 0, 0, 0, 0, 0),
    "pp64x64 2x4": (64, 64, 64, 2, 4, 0, 0, 0, 0, 0),
    "pp64x64 4x2": (64, 64, 64, 4, 2, 0, 0, 0, 0, 0),
    "pp64x128 1x1": (64, 128, 64, 1, 1, 0, 0, 0, 0, 0),
    "pp64x128 2x1": (64, 128, 64, 2, 1, 0, 0, 0, 0, 0),
    "pp64x128 4x1": (64, 128, 64, 4, 1, 0, 0, 0, 0, 0),
    "pp64x128 2x2": (64, 128, 64, 2, 2, 0, 0, 0, 0, 0),
    "sw48x64 2x4 pp": (64, 48, 64, 4, 2, 0, 0, 0, 0, 0, 1),
    "sw80x64 4x2 pp": (64, 80, 64, 2, 4, 0, 0, 0, 0, 0, 1),
    "sw144x64 2x4 pp": (64, 144, 64, 4, 2, 0, 0, 0, 0, 0, 1),
}

# The library's fastest built tile on products of a few microseconds, beside which the "tiny" sets
# put their variants.
PP64X32_1X2 = (64, 32, 64, 1, 2, 0, 0, 0, 0, 0)

# name: (tile M, N, K, cluster M, N, cooperative, epilogue subtile M, N (0: CUTLASS's automatic one),
#        stream-K scheduler (run data-parallel), TF32 (float operands and D; else bf16)[, swap-AB
#        [, main-loop stages (0: as many as shared memory holds)[, D stored from registers
#        (CUTLASS's NoSmemWarpSpecialized epilogue) in place of shared memory and a TMA store]]])
VARIANT_SETS = {
    # the three configs whose subtiles were widened (docs/findings.md, "Epilogue subtiles")
    "adopted": {
        "pp128x128 auto": (128, 128, 64, 1, 1, 0, 0, 0, 0, 0),
        "pp128x128 e64x64": (128, 128, 64, 1, 1, 0, 64, 64, 0, 0),
        "pp128x128 e64x128": (128, 128, 64, 1, 1, 0, 64, 128, 0, 0),
        "pp64x128 auto": (64, 128, 64, 1, 1, 0, 0, 0, 0, 0),
        "pp64x128 e64x64": (64, 128, 64, 1, 1, 0, 64, 64, 0, 0),
        "coop128x256 auto": (128, 256, 64, 2, 1, 1, 0, 0, 0, 0),
        "coop128x256 e128x64": (128, 256, 64, 2, 1, 1, 128, 64, 0, 0),
        "coop128x256 e128x128": (128, 256, 64, 2, 1, 1, 128, 128, 0, 0),
    },
    # the library's other persistent 16-bit configs with a tile of 64 columns or more
    "others": {
        "pp64x64 auto": (64, 64, 64, 1, 1, 0, 0, 0, 0, 0),
        "pp64x64 e64x64": (64, 64, 64, 1, 1, 0, 64, 64, 0, 0),
        "pp64x256 auto": (64, 256, 64, 1, 1, 0, 0, 0, 0, 0),
        "pp64x256 e64x64": (64, 256, 64, 1, 1, 0, 64, 64, 0, 0),
        "pp128x128k32 auto": (128, 128, 32, 1, 1, 0, 0, 0, 0, 0),
        "pp128x128k32 e64x64": (128, 128, 32, 1, 1, 0, 64, 64, 0, 0),
        "coop128x192 auto": (128, 192, 64, 2, 1, 1, 0, 0, 0, 0),
        "coop128x192 e128x64": (128, 192, 64, 2, 1, 1, 128, 64, 0, 0),
        "coop256x128 auto": (256, 128, 64, 1, 2, 1, 0, 0, 0, 0),
        "coop256x128 e128x64": (256, 128, 64, 1, 2, 1, 128, 64, 0, 0),
        "coop128x64 auto": (128, 64, 64, 1, 2, 1, 0, 0, 0, 0),
        "coop128x64 e128x64": (128, 64, 64, 1, 2, 1, 128, 64, 0, 0),
        "coop128x256k32 auto": (128, 256, 32, 2, 1, 1, 0, 0, 0, 0),
        "coop128x256k32 e128x64": (128, 256, 32, 2, 1, 1, 128, 64, 0, 0),
    },
    # the stream-K scheduler's cooperative 16-bit configs, run data-parallel
    "streamk": {
        "sk128x128 auto": (128, 128, 64, 1, 1, 1, 0, 0, 1, 0),
        "sk128x128 e128x64": (128, 128, 64, 1, 1, 1, 128, 64, 1, 0),
        "sk128x256 auto": (128, 256, 64, 2, 1, 1, 0, 0, 1, 0),
        "sk128x256 e128x64": (128, 256, 64, 2, 1, 1, 128, 64, 1, 0),
    },
    # the 128x128 tile with a cluster, whose multicast halves one operand's loads through L2,
    # against the library's 1x1 build and its 256x128 1x2 tile (run with --shapes)
    "clusters": {
        "pp128x128 1x1": (128, 128, 64, 1, 1, 0, 64, 64, 0, 0),
        "pp128x128 2x1": (128, 128, 64, 2, 1, 0, 64, 64, 0, 0),
        "pp128x128 1x2": (128, 128, 64, 1, 2, 0, 64, 64, 0, 0),
        "coop128x128 2x1": (128, 128, 64, 2, 1, 1, 128, 64, 0, 0),
        "coop256x128 1x2": (256, 128, 64, 1, 2, 1, 128, 64, 0, 0),
    },
    # swap-AB tiles whose row side fits mid-size row counts, as cuBLAS's do on F.linear products
    # (cublas_choices_probe.py, H200: 104x128 and 152x128 with a 2x1 cluster, 136x64 with 2x4;
    # CUTLASS builds swapped tiles in steps of 16 rows only); each given as CUTLASS runs the
    # transposed product (its N side spans rows of D; cluster (1, 2) pairs tiles along rows),
    # named in torch's terms (rows x columns); the library's swapped 144x128 beside them
    "swapped": {
        "sw80x128 2x1": (128, 80, 64, 1, 2, 1, 0, 0, 0, 0, 1),
        "sw80x128 1x1": (128, 80, 64, 1, 1, 1, 0, 0, 0, 0, 1),
        "sw96x128 1x1": (128, 96, 64, 1, 1, 1, 0, 0, 0, 0, 1),
        "sw96x128 2x1": (128, 96, 64, 1, 2, 1, 0, 0, 0, 0, 1),
        "sw112x128 1x1": (128, 112, 64, 1, 1, 1, 0, 0, 0, 0, 1),
        "sw112x128 2x1": (128, 112, 64, 1, 2, 1, 0, 0, 0, 0, 1),
        "sw160x128 2x1": (128, 160, 64, 1, 2, 1, 0, 0, 0, 0, 1),
        "sw144x64 2x4 pp": (64, 144, 64, 4, 2, 0, 0, 0, 0, 0, 1),
        "sw144x128 2x1": (128, 144, 64, 1, 2, 1, 0, 0, 0, 0, 1),
    },
    # small tiles with clusters of up to eight CTAs, as cuBLAS runs on F.linear products of 65-512
    # rows (cublas_choices_probe.py, H200: 56x64 2x4 at 100 rows, 136x64 2x4 and 72x64 4x2 at 257):
    # the clusters share one operand's tile by TMA multicast, so the few row tiles read each
    # weight tile from L2 about once; beside the library's 64x64 and 64x128 ping-pong tiles
    "small_clusters": SMALL_CLUSTERS,
    # the same question, more row counts: swapped ping-pong tiles of 48-128 rows with four tile
    # rows (or two) to a cluster, against the first set's leaders (run with --shapes)
    "row_clusters": {
        **{name: SMALL_CLUSTERS[name] for name in ("pp64x64 1x1", "pp64x128 1x1", "pp64x64 2x4", "sw48x64 2x4 pp")},
        "sw64x64 2x4 pp": (64, 64, 64, 4, 2, 0, 0, 0, 0, 0, 1),
        "sw64x64 4x2 pp": (64, 64, 64, 2, 4, 0, 0, 0, 0, 0, 1),
        "sw80x64 4x2 pp": SMALL_CLUSTERS["sw80x64 4x2 pp"],
        "sw80x64 4x1 pp": (64, 80, 64, 1, 4, 0, 0, 0, 0, 0, 1),
        "sw96x64 4x2 pp": (64, 96, 64, 2, 4, 0, 0, 0, 0, 0, 1),
        "sw128x64 4x2 pp": (64, 128, 64, 2, 4, 0, 0, 0, 0, 0, 1),
        "sw80x128 4x1 pp": (128, 80, 64, 1, 4, 0, 0, 0, 0, 0, 1),
        "sw80x128 4x1 coop": (128, 80, 64, 1, 4, 1, 0, 0, 0, 0, 1),
        "sw144x64 2x4 pp": SMALL_CLUSTERS["sw144x64 2x4 pp"],
    },
    # tiles 8-16 columns wide with clusters of eight, as cuBLAS runs on products that take it about
    # 2 us (128x128x64 "rc": nvjet_sm90_tst_64x8_64x16_2x4, H200), where the library's fastest
    # built tiles (64x32 1x2 and 64x64 2x4 ping-pong) take 2.4 us: less to load before each tile's
    # first WGMMA, and more CTAs in flight; beside those two (run with --shapes)
    "tiny": {
        **{name: SMALL_CLUSTERS[name] for name in ("pp64x64 2x4",)},
        "pp64x32 1x2": PP64X32_1X2,
        "pp64x16 1x1": (64, 16, 64, 1, 1, 0, 0, 0, 0, 0),
        "pp64x16 2x4": (64, 16, 64, 2, 4, 0, 0, 0, 0, 0),
        "sw16x64 2x4 pp": (64, 16, 64, 4, 2, 0, 0, 0, 0, 0, 1),
        "sw8x64 2x4 pp": (64, 8, 64, 4, 2, 0, 0, 0, 0, 0, 1),
    },
    # the same fixed cost, by stage count: the two tiles above with 2 and 4 main-loop stages in
    # place of the 13-18 that fill shared memory (less to allocate and to initialise per CTA)
    "tiny_stages": {
        "pp64x32 1x2": PP64X32_1X2,
        "pp64x32 1x2 s2": (64, 32, 64, 1, 2, 0, 0, 0, 0, 0, 0, 2),
        "pp64x32 1x2 s4": (64, 32, 64, 1, 2, 0, 0, 0, 0, 0, 0, 4),
        "pp64x64 2x4": SMALL_CLUSTERS["pp64x64 2x4"],
        "pp64x64 2x4 s2": (64, 64, 64, 2, 4, 0, 0, 0, 0, 0, 0, 2),
        "pp64x64 1x1 s4": (64, 64, 64, 1, 1, 0, 0, 0, 0, 0, 0, 4),
    },
    # the same fixed cost, by epilogue: D stored straight from registers, with no shared-memory
    # round trip and no TMA store to wait for at the end of each tile
    "tiny_direct": {
        "pp64x32 1x2": PP64X32_1X2,
        "pp64x32 1x2 direct": (64, 32, 64, 1, 2, 0, 0, 0, 0, 0, 0, 0, 1),
        "pp64x64 1x1": SMALL_CLUSTERS["pp64x64 1x1"],
        "pp64x64 1x1 direct": (64, 64, 64, 1, 1, 0, 0, 0, 0, 0, 0, 0, 1),
        "pp64x64 2x4 direct": (64, 64, 64, 2, 4, 0, 0, 0, 0, 0, 0, 0, 1),
        "pp64x128 1x1 direct": (64, 128, 64, 1, 1, 0, 0, 0, 0, 0, 0, 0, 1),
        "coop128x128 1x1 direct": (128, 128, 64, 1, 1, 1, 0, 0, 0, 0, 0, 0, 1),
    },
    # wide swap-AB tiles for large F.linear products, where cuBLAS runs 144-208 rows x 192-256
    # columns with two tile rows to a cluster (cublas_choices_probe.py --min-us 300, H200), beside
    # the library's 128x256 and 128x192 2x1 cooperative tiles (with their 128x64 subtile)
    "large": {
        "coop128x256 2x1": (128, 256, 64, 2, 1, 1, 128, 64, 0, 0),
        "coop128x192 2x1": (128, 192, 64, 2, 1, 1, 128, 64, 0, 0),
        "sw144x256 2x1": (256, 144, 64, 1, 2, 1, 0, 0, 0, 0, 1),
        "sw160x256 2x1": (256, 160, 64, 1, 2, 1, 0, 0, 0, 0, 1),
        "sw160x256 1x1": (256, 160, 64, 1, 1, 1, 0, 0, 0, 0, 1),
        "sw176x256 2x1": (256, 176, 64, 1, 2, 1, 0, 0, 0, 0, 1),
        "sw208x128 2x1": (128, 208, 64, 1, 2, 1, 0, 0, 0, 0, 1),
    },
    # TF32 (float32 D: 32 columns are 128 bytes a row already)
    "tf32": {
        "coop128x256k32 auto": (128, 256, 32, 2, 1, 1, 0, 0, 0, 1),
        "coop128x256k32 e128x64": (128, 256, 32, 2, 1, 1, 128, 64, 0, 1),
        "coop128x128k32 auto": (128, 128, 32, 1, 1, 1, 0, 0, 0, 1),
        "coop128x128k32 e128x64": (128, 128, 32, 1, 1, 1, 128, 64, 0, 1),
    },
}

# (batch, M, N, K): D-write-bound first, then mid-size and compute-bound controls
SHAPES = [(64, 2048, 2048, 128), (32, 2048, 2048, 64), (128, 1024, 1024, 64), (64, 1024, 1024, 128),
          (256, 512, 512, 64), (1, 8192, 8192, 64), (1, 8192, 8192, 128), (1, 16384, 8192, 256),
          (1, 9576, 16072, 32), (1, 8192, 28672, 512), (1, 1000, 1024, 4096), (1, 1500, 768, 3072),
          (1, 4096, 4096, 4096), (1, 8192, 8192, 8192)]


def macros(variant: tuple) -> dict[str, int]:
    """The build macros of a VARIANT_SETS entry (epilogue_tile_probe.cu)."""
    tm, tn, tk, cm, cn, coop, em, en, streamk, tf32, *rest = variant
    swap, stages, direct = (list(rest) + [0, 0, 0])[:3]
    return {"PROBE_TILE_M": tm, "PROBE_TILE_N": tn, "PROBE_TILE_K": tk, "PROBE_CLUSTER_M": cm, "PROBE_CLUSTER_N": cn,
            "PROBE_COOP": coop, "PROBE_STREAMK": streamk, "PROBE_TF32": tf32, "PROBE_EPI_M": em, "PROBE_EPI_N": en,
            "PROBE_SWAP": swap, "PROBE_STAGES": stages, "PROBE_EPI_DIRECT": direct}


# probe_run(a, b, d, m, n, k, batch, sm_count, stream, &stages)
ENTRY_ARGTYPES = [ctypes.c_void_p] * 3 + [ctypes.c_int] * 5 + [ctypes.c_void_p, ctypes.POINTER(ctypes.c_int)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--set", default="adopted", choices=sorted(VARIANT_SETS), help="which kernels to build")
    ap.add_argument("--shapes", nargs="+", metavar="[Bx]MxNxK", help="the problems (default: the D-write-bound set)")
    args = ap.parse_args()
    shapes = SHAPES
    if args.shapes:
        shapes = [tuple(int(x) for x in ((["1"] if s.count("x") == 2 else []) + s.split("x"))) for s in args.shapes]
    workdir = Path(tempfile.mkdtemp(prefix="epi_probe_"))
    variants = VARIANT_SETS[args.set]
    libs = build_variants(SOURCE, workdir, {name: macros(v) for name, v in variants.items()}, ENTRY_ARGTYPES)
    tf32 = any(v[9] for v in variants.values())
    dtype = torch.float32 if tf32 else torch.bfloat16
    torch.backends.cuda.matmul.allow_tf32 = tf32
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    flush = torch.empty(256 * 1024 * 1024 // 4, device="cuda")
    print(torch.cuda.get_device_name(), "tf32" if tf32 else "bf16", "rc; us (speed against torch)", flush=True)
    stages = ctypes.c_int(0)
    for batch, m, n, k in shapes:
        a = torch.randn(batch, m, k, device="cuda", dtype=dtype)
        w = torch.randn(batch, n, k, device="cuda", dtype=dtype)
        d = torch.empty(batch, m, n, device="cuda", dtype=dtype)
        ref = torch.bmm(a, w.transpose(1, 2))
        stream = torch.cuda.current_stream().cuda_stream

        def ours(lib):
            return lambda: lib.probe_run(a.data_ptr(), w.data_ptr(), d.data_ptr(), m, n, k, batch, sms,
                                         ctypes.c_void_p(stream), ctypes.byref(stages))

        if batch == 1:
            impls = {"torch": lambda: torch.mm(a[0], w[0].t(), out=d[0])}
        else:
            impls = {"torch": lambda: torch.bmm(a, w.transpose(1, 2), out=d)}
        checked, info = checked_variants(libs, ours, d, ref, 1e-2, stages)
        impls.update(checked)
        med = alternated_medians(impls, flush)
        theirs = med.pop("torch")
        cells = "  ".join(f"{name} [{info[name]}st] {t:.1f} ({theirs / t:.3f}x)" for name, t in med.items())
        print(f"{batch}x{m}x{n}x{k}: torch {theirs:.1f} | {cells}", flush=True)
        del a, w, d, ref
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
