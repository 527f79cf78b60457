"""Every kernel configuration cutlass_ops builds: the one place that says which exist.

Each row is a config (tile, cluster, schedule, stages, math, supported decompositions) and the
precisions, operand layouts and alignments it is built for, with the reason it exists. From
this table ``csrc/generate_kernels.py`` writes

- ``csrc/dispatch/configs.h``: one plain struct per config and the ``ConfigId`` enum, which the
  kernel templates (cutlass3x/sm90_gemm.cuh, cutlass2x/sm80_gemm.cuh) map onto CUTLASS types
  and every ``KernelInfo`` carries as ``config_id``;
- ``csrc/generated/``: the translation units, each holding a few kernel groups (one config's
  kernels for one precision and alignment, in every layout it is built for);
- ``docs/kernel_table.md``: the table for people.

Tests import this module (``tests/test_package.py``, ``tests/test_kernel_table.py``) to know
which kernels a full build registers. Adding a config is one row here; then run
``python csrc/generate_kernels.py``, build, and calibrate it (``python -m cutlass_ops sweep``).

Names (``Config.struct``, ``Config.name``) are derived from the fields, so they cannot drift
from what they describe; kernel names, which the tuning cache and calibration data key on, are
``<origin>_sm<arch>_<precision>_<layouts>_<config name>[_a<alignment>]``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

# A, B layouts: r = row-major, c = column-major (torch's view of each operand).
FUSED_SUFFIX = "bias_act"  # kernel names of the fused-epilogue builds end in it
LAYOUTS = ("rr", "rc", "cr", "cc")
PRECISIONS = ("f16", "bf16", "tf32", "f32", "f64", "3xtf32")
DECOMPOSITIONS = ("data_parallel", "split_k", "stream_k")


@dataclass(frozen=True)
class Config:
    """Fields every row has."""
    tile: tuple[int, int, int]  # CTA tile (M, N, K) in the problem's terms (swap-AB included)
    why: str                    # the reason it exists, with the measurement that justified it

    @property
    def id(self) -> str:
        """The ConfigId enumerator."""
        return "k" + self.struct

    def tile_text(self) -> str:
        return "x".join(map(str, self.tile))


# The WGMMA N sizes CuTe's instruction selector (ss_op_selector and rs_op_selector in
# cute/arch/mma_sm90.hpp, CUTLASS 4.2) offers by default. The other multiples of 8 up to 256 are
# "extended" shapes, declared only when CUTE_SM90_EXTENDED_MMA_SHAPES_ENABLED is defined; without
# them a tile of N = 144 runs as the largest default N that divides it (N = 16 or 8), many
# instructions per K step, each reading its A slice from shared memory again. The define makes a
# Hopper file's compile 30-40% longer (two sm90 files on 2 cores: 135 -> 176 s and 119 -> 167 s),
# so the generator defines it only in the files whose groups need it (Sm90.extended_mma).
BASE_WGMMA_N = (8, 16, 32, 64, 96, 128, 192, 256)


@dataclass(frozen=True)
class Sm90(Config):
    """CUTLASS 3.x on SM90: TMA (or cp.async) + WGMMA, warp-specialized, persistent but for the
    "ws" schedule (csrc/cutlass3x/sm90_gemm.cuh).

    ``mainloop``: "tma" (TMA loads of 16-byte aligned operands, D stored through shared memory
    by TMA) or "cpasync" (producer warps load A and B with cp.async, 4 bytes a copy at alignment
    1 (TF32) or 2 (16-bit), D stored from registers at any alignment: CUTLASS's
    KernelCpAsyncWarpSpecialized* with the NoSmemWarpSpecialized epilogue), for operands TMA cannot
    read. cp.async builds name their alignments (``alignments``: precision -> elements) and may
    use the "ws" schedule (one consumer warpgroup fed by two producer warpgroups, one CTA per tile).

    ``variant``: "gemm" (one CollectiveBuilder GEMM), "splitk_sum" (K slices as a batch of GEMMs
    writing float32 partials, summed in order by a second kernel: sm90_splitk_sum.cuh) or
    "presplit" (3xTF32: the operands split into TF32 parts by a pass, then one TF32 "rc" GEMM
    over 3K registered for every layout: sm90_3xtf32_presplit.cuh).
    """
    cluster: tuple[int, int] = (1, 1)
    # "coop": two consumer warpgroups share a tile; "pingpong": they alternate tiles; "ws" (cp.async
    # only): one consumer warpgroup per tile, a grid of one CTA per tile
    schedule: str = "coop"
    scheduler: str = "persistent"     # "persistent": whole-K tiles; "streamk": CUTLASS's stream-K scheduler
    swap_ab: bool = False             # computes D^T = B^T A^T (kTileM rows of D along WGMMA's narrow N side)
    variant: str = "gemm"
    promote_k_tiles: int = 0          # presplit: add WGMMA's accumulators into float32 every this many K steps
    # D's subtile per round of the epilogue (registers -> shared memory -> TMA store), rows x
    # columns; (0, 0): CUTLASS's EpilogueTileAuto (64 x 32 for ping-pong, 128 x 32 cooperative)
    epilogue_tile: tuple[int, int] = (0, 0)
    builds: dict[str, tuple[str, ...]] = field(default_factory=dict)  # precision -> layouts
    # precision -> layouts also built with the fused epilogue (D = activation(alpha * A @ B + bias),
    # cutlass3x/sm90_gemm.cuh EpilogueFusion::kBiasActivation): linear and addmm with a bias
    fused: dict[str, tuple[str, ...]] = field(default_factory=dict)
    mainloop: str = "tma"
    alignments: dict[str, tuple[int, ...]] = field(default_factory=dict)  # cp.async: precision -> alignments

    family = "cutlass3x"
    arch = 90

    def __post_init__(self) -> None:
        assert self.schedule in ("coop", "pingpong", "ws") and self.scheduler in ("persistent", "streamk")
        assert self.mainloop in ("tma", "cpasync")
        if self.mainloop == "cpasync":
            assert self.cluster == (1, 1), "cp.async loads are per CTA: no multicast"
            assert self.scheduler == "persistent" and self.variant == "gemm" and not self.fused
            assert not any(self.epilogue_tile), "the register epilogue has no shared-memory subtile"
            assert set(self.alignments) == set(self.builds), (self.alignments, self.builds)
            element_bytes = {"tf32": 4, "f16": 2, "bf16": 2}
            for p, aligns in self.alignments.items():
                assert aligns and all(a * element_bytes[p] >= 4 for a in aligns), "cp.async copies 4 bytes or more"
        else:
            assert self.schedule != "ws" and not self.alignments, "the ws schedule and alignments are cp.async's"
        assert self.variant in ("gemm", "splitk_sum", "presplit")
        assert (self.variant == "presplit") == (self.promote_k_tiles > 0)
        assert not (self.schedule == "pingpong" and self.scheduler == "streamk"), "stream-K runs cooperative kernels"
        if any(self.epilogue_tile):
            em, en = self.epilogue_tile
            assert not self.swap_ab and self.variant == "gemm", "wider subtiles are measured on row-major D only"
            assert self.tile[0] % em == 0 and self.tile[1] % en == 0, (self.tile, self.epilogue_tile)
        for p, layouts in self.builds.items():
            assert p in PRECISIONS and set(layouts) <= set(LAYOUTS), (p, layouts)
        for p, layouts in self.fused.items():
            assert set(layouts) <= set(self.builds.get(p, ())), ("fused builds are a subset of builds", p, layouts)
            assert self.variant == "gemm", "only one-GEMM configs fuse an epilogue"

    @property
    def struct(self) -> str:
        m, n, k = self.tile
        parts = [f"Sm90_{m}x{n}x{k}_{self.cluster[0]}x{self.cluster[1]}x1_"
                 + {"coop": "Coop", "pingpong": "Pingpong", "ws": "WarpSpecialized"}[self.schedule]
                 + ("StreamK" if self.scheduler == "streamk" else "")]
        parts += ["CpAsync"] * (self.mainloop == "cpasync")
        parts += ["SwapAB"] * self.swap_ab
        parts += {"gemm": [], "splitk_sum": ["SplitKSum"], "presplit": ["Presplit"]}[self.variant]
        return "_".join(parts)

    @property
    def name(self) -> str:
        parts = [f"{self.tile_text()}_{self.cluster[0]}x{self.cluster[1]}x1", self.schedule]
        parts += ["streamk"] * (self.scheduler == "streamk")
        parts += ["cpasync"] * (self.mainloop == "cpasync")
        parts += ["swapab"] * self.swap_ab
        parts += {"gemm": [], "splitk_sum": ["splitk_sum"], "presplit": ["presplit"]}[self.variant]
        return "_".join(parts)

    @property
    def wgmma_n(self) -> int:
        """N of the warpgroup MMA instruction CuTe picks: the tile's N, or its M for swap-AB
        (CUTLASS then runs the N x M tile)."""
        m, n, _ = self.tile
        return m if self.swap_ab else n

    @property
    def extended_mma(self) -> bool:
        """True when the tile needs one of CuTe's extended WGMMA shapes (N = 24, 40, ..., 248 other
        than BASE_WGMMA_N), which CuTe declares only under CUTE_SM90_EXTENDED_MMA_SHAPES_ENABLED."""
        return self.wgmma_n not in BASE_WGMMA_N

    @property
    def decompositions(self) -> tuple[str, ...]:
        if self.variant == "splitk_sum":
            return ("data_parallel", "split_k")
        return DECOMPOSITIONS if self.scheduler == "streamk" else ("data_parallel",)


@dataclass(frozen=True)
class Sm80(Config):
    """CUTLASS 2.x device-level GEMM (csrc/cutlass2x/sm80_gemm.cuh): cp.async multistage, or the
    two-stage register-staged pipeline. ``math``: "mma" (mma.sync tensor cores), "simt" (CUDA
    cores), "dmma16x8x4" (float64 on Hopper's DMMA) or "dmma16x8x8" (IEEE float32 widened to
    float64 in registers on Hopper's DMMA). DMMA configs use Hopper-only instructions and are
    built for sm_90a; the others for sm_80 (and run on newer GPUs)."""
    warp: tuple[int, int, int] = (0, 0, 0)
    stages: int = 0
    math: str = "mma"
    stream_k: bool = False            # CUTLASS 2.x's stream-K kernel (it also runs data-parallel)
    builds: dict[str, tuple[int, ...]] = field(default_factory=dict)  # precision -> alignments (elements)
    # Precisions whose builds are registered a second time as split-K kernels summed by a second
    # kernel (kernel names "<config>_splitk_sum_a<alignment>"): the same GEMM launched in CUTLASS's
    # parallel split-K mode, each K slice writing its partial D to a workspace, the slices then
    # summed in order (cutlass2x/sm80_splitk_sum.cuh). Only where D holds the accumulator (TF32,
    # float64), so that the partials are D's own type; no second GEMM is compiled.
    splitk_sum: tuple[str, ...] = ()

    family = "cutlass2x"

    def __post_init__(self) -> None:
        assert self.math in ("mma", "simt", "dmma16x8x4", "dmma16x8x8") and self.stages >= 2
        for p in self.builds:
            assert p in PRECISIONS, p
        for p in self.splitk_sum:
            assert p in self.builds and p in ("tf32", "f64") and not self.stream_k, (p, self.name)

    @property
    def arch(self) -> int:
        return 90 if self.math.startswith("dmma") else 80

    @property
    def struct(self) -> str:
        prefix = {"mma": "Sm80", "simt": "Sm80Simt", "dmma16x8x4": "Sm90Dmma", "dmma16x8x8": "Sm90DmmaF32"}[self.math]
        warp = "x".join(map(str, self.warp))
        return f"{prefix}_{self.tile_text()}_{warp}_{self.stages}s" + ("_StreamK" if self.stream_k else "")

    @property
    def name(self) -> str:
        prefix = {"mma": "", "simt": "simt_", "dmma16x8x4": "dmma16x8x4_", "dmma16x8x8": "dmma16x8x8_"}[self.math]
        return f"{prefix}{self.tile_text()}_{self.stages}s" + ("_streamk" if self.stream_k else "")

    @property
    def splitk_sum_name(self) -> str:
        """The config name of its split-K-sum builds (their kernel names add the alignment)."""
        return f"{self.name}_splitk_sum"

    @property
    def decompositions(self) -> tuple[str, ...]:
        # The 16-bit builds of the plain kernel run on CUTLASS's stream-K kernel and offer
        # stream-K besides, their split-K slices meeting in its workspace
        # (KernelInfo::slice_sum, SliceSum::kStreamKWorkspace): a precision rule, kept in sm80_gemm.cuh.
        return ("data_parallel", "stream_k") if self.stream_k else ("data_parallel", "split_k")


@dataclass(frozen=True)
class Handwritten(Config):
    """A kernel written from scratch (csrc/handwritten). Its translation unit is hand-written;
    the row gives it a config id and a name. ``role``: "teaching" kernels run only when forced
    with kernel=; "product" ones are dispatch candidates. ``split_k``: its builds offer split-K
    besides (the step-6 kernel's, SliceSum::kLastSlice)."""
    struct_name: str = ""
    config_name: str = ""
    role: str = "teaching"
    arch: int = 80
    split_k: bool = False

    family = "handwritten"

    @property
    def struct(self) -> str:
        return self.struct_name

    @property
    def name(self) -> str:
        return self.config_name

    @property
    def decompositions(self) -> tuple[str, ...]:
        return ("data_parallel", "split_k") if self.split_k else ("data_parallel",)


F16_BF16 = ("f16", "bf16")


def both16(layouts: tuple[str, ...]) -> dict[str, tuple[str, ...]]:
    return {p: layouts for p in F16_BF16}


# ---- SM90, CUTLASS 3.x -------------------------------------------------------------------
FUSED_WHY = """Also built with the bias and activation fused into the epilogue (kernel names end in
"_bias_act"), for linear and addmm in the layouts of F.linear (rc) and x @ W (rr). The configs are
the ones the sweep found fastest most often for 16-bit problems of 64 rows or more in those layouts
(benchmarks/sweep, bf16: 128x256 coop, 128x128 ping-pong, 64x128 ping-pong, 128x128 stream-K),
and the swapped tiles that run row counts just past a multiple of 128 (257 tokens: 144 rows) and
mid-size row counts (80 and 112 rows), whose bias is CUTLASS's per-row one (they compute D^T).
Without a fused build the planner adds the bias in a pass over D (ops/epilogue_kernels.cu): at 257x4096
-> 4096 that pass, or the fused 128x128 tile chosen instead, cost 1.29x the plain product (H100,
2026-11-25)."""


_SWAPPED_144 = """Row counts just past a multiple of 128 (257, 777, 2049 tokens through a model's
projections), 16-bit, x @ W and F.linear: the best kernel built before these reached 0.86x
torch.mm on the sweep's "rr"/"rc" problems with M = 128 j + 1 (0.61-0.74x at 257 rows and a
large B). There the product is as much a stream of B as a GEMM (257x28672x8192 reads 470 MB of
B, 140 us at HBM rate, against 172 us of tensor-core time), and 128-row tiles either idle a
third of each tile (three tile rows for 257) or read B once per tile row. cuBLAS runs a 128x136
tile with a 2x1 cluster (torch.profiler, nvjet_sm90_tst_128x136_..._2x1). Swapped (CUTLASS runs
N x M, so M goes along WGMMA's N side in steps of 8): 257 rows are two 144-row tiles (89% of the
rows used), and the 2x1 cluster along M puts both in one cluster, which multicasts each B tile
to the pair, so B is read from memory once. 144 rather than 136: the cooperative epilogue's
subtile is gcd(32, 144) = 16 columns wide, against 8. The 256-column tile halves the tiles for
wide N; the stream-K one spreads few tiles (257x4096: 64) over the SMs. They need the sm90
module's CUTE_SM90_EXTENDED_MMA_SHAPES_ENABLED (setup.py): without it CuTe's selector issues
eighteen N = 8 WGMMAs per K step instead of one N = 144, the kernel is bound by shared memory
(Nsight Compute: L1 96%, compute 36%) and ran at 0.40-0.64x torch.mm; with it, 0.88-1.06x at
257 rows (benchmarks/probes/row_tiles_probe.py, docs/findings.md)."""
_SWAPPED_WAVES = """Mid-size 16-bit products in the layouts of x @ W and F.linear whose row count leaves
128- and 256-row tiles a ragged last wave (777, 1500, 2049, 3000 tokens): there the best kernel
built before these reached 0.89x torch.mm (bf16 model problems of 777 and 2049 rows, H100 sweep,
2026-11-24). cuBLAS runs tiles whose sides fit the problem: 192x192 with a 2x1 cluster on
2049x4608x3584 "rc" (benchmarks/probes/cublas_choices_probe.py, docs/findings.md), where 128x256 tiles
make 306 = 2.3 waves. Swapped, as the 144-row tiles are, the row tile goes along WGMMA's N side:
192 rows x 128 columns (CUTLASS runs 128x192, a default WGMMA N) make that problem 11 x 36 = 396
tiles, three full waves; 176 rows x 256 columns (CUTLASS runs 256x176, 176 accumulators per
consumer thread, an extended WGMMA N) cover 1500-3000 rows with wide N in fewer, fuller waves.
Chosen by a what-if over the stored sweep (each problem's 144-row swapped time scaled by the
tiles' wave and padding arithmetic, ten row heights x two widths): these two gained most
(estimated bf16 model problems of the test split 0.946x -> 0.956x torch.mm for the best built
kernel; measured in docs/findings.md)."""
_SWAPPED_LARGE = """Large 16-bit F.linear products whose row count is just past a multiple of
128 or 256 (2049, 4097 tokens through 5120-18176 columns): cuBLAS runs 144-208-row tiles of 192-256
columns with two tile rows to a cluster there (152x256 and 160x256 on 4097x10240x8192,
2049x5120x13824, 4097x18176x4544; benchmarks/probes/cublas_choices_probe.py --min-us 300, H200,
2026-11-30), where the best built kernel reached 0.90-0.91x torch.mm on the H200 sweep. Swapped,
160 rows go along WGMMA's N side (CUTLASS runs 256x160, 160 accumulators per consumer thread).
Built in CUTLASS beside the library's 128x256 and 128x192 2x1 tiles
(benchmarks/probes/epilogue_tile_probe.py --set large, H200, 2026-11-30, "rc", speed against
torch.mm): 4097x10240x8192 0.981x with the 2x1 cluster against 0.890x, 4097x18176x4544 0.968x
against 0.904x, 2049x5120x13824 1.011x without a cluster against 0.841x (the 2x1 one 0.684x),
1000x14336x4096 0.928x without against 0.898x, 6000x5120x5120 0.957x against 0.941x; behind
them at 4096^3 (0.82x against 0.99x), 3000x4096x4096 and 8191x10240x8192. Both clusters, for the
planner to choose between."""
_SMALL_CLUSTERS = """F.linear products of 65-512 rows through
1000-3600 columns with a long K (257 tokens through 1280-1600 columns, 100 through 3584 x 14336):
the library's 64-row ping-pong tiles make 5 x 13-25 tiles for 132 SMs, each reading its own
copy of every weight tile through L2, and reached 0.75-0.85x torch.mm on the H200 sweep. cuBLAS
runs small tiles with clusters of up to eight CTAs there (72x64 with four tile rows to a
cluster and 136x64 with two at 257 rows, 56x64 2x4 at 100 rows;
benchmarks/probes/cublas_choices_probe.py, H200, 2026-11-30): the CTAs of a cluster share one
operand's tile by TMA multicast, so a cluster of four tile rows reads each weight tile once.
Built in CUTLASS beside the library's (benchmarks/probes/epilogue_tile_probe.py --set
small_clusters and --set row_clusters, H200, 2026-11-30, bf16 "rc", speed against torch.mm): the
80x64 tile swapped with four tile rows by two columns to a cluster (CUTLASS runs 64x80, 2x4; 320
rows a cluster) 257x1600x6400 0.913-0.919x where the best built kernel reached 0.746x,
257x1280x5120 0.909x against 0.800x, 257x1600x1600 0.916x against 0.852x; the 96-row one at
384x3072x3072 0.832x against the 64-row tiles' 0.729x; the 64x64 ping-pong tile with two tile
rows by four columns 100x3584x14336 1.004x against 0.853x, 257x1024x4096 0.937x against 0.852x
for the 64x64 tile alone. Behind the library's tiles on wider outputs (257x4800x1600,
257x5120x5120) and elsewhere at 100-500 rows, where they make more tiles than the SMs hold. Four
tile rows to a cluster pad a row count to whole clusters (320 or 384 rows), so each size serves
a narrow band of rows. Built in F.linear's layout ("rc")."""
_WIDE_EPILOGUE = """ The epilogue stores D in subtiles of {sub}, where CUTLASS's automatic {auto} writes 64
bytes of a bf16 row a round: on products bound by writing D, {figures}; compute-bound products do
not move (benchmarks/probes/epilogue_tile_probe.py, H200, bf16 "rc", 2026-11-29; docs/findings.md,
"Epilogue subtiles")."""


_PINGPONG_64_16BIT = """16-bit, 33-128 rows: 64-row ping-pong tiles (one consumer warpgroup per 64xN tile, the
other warpgroup on the CTA's next tile), in three widths so that few rows still give close to a
wave of tiles. 128x4096 is 128 tiles of 64x64, 128x6144 96 of 64x128, 128x14336 112 of 64x256,
where 128-row tiles (or swap-AB's 32x128) left half of each tile idle or ran a ragged second
wave. Measured on an H100 (benchmarks/probes/split_probe.py, bf16, L2 flushed; RESULTS.md at 824ebc1, 2026-11-22,
"64-row ping-pong tiles"): 128x4096x4096 1.01x cuBLAS on 64x64 (0.89x on swap-AB),
128x6144x4096 1.02x on 64x128 (0.95x on 128x64 1x2), 128x14336x4096 1.01x on 64x256 (0.98x on
128x128 ping-pong), 64x4096x4096 0.99x on 64x64 (0.95x on 64x32 1x2), 1024^3 0.91x on 64x128
(0.87x on 128x64). Smem per stage: (64 + N) x 64 x 2 B, as many stages as fit beside the
epilogue. Built in the layouts of x @ W and F.linear, and since in "cr" and "cc" (a weight
gradient x^T @ dy, products of transposed views): there the sweep's best 16-bit kernel reached
0.81x torch.mm on aligned problems under 0.1 GFLOP and 0.85x at 0.1-1 GFLOP (H100, 2026-11-24),
against 0.92-0.96x in "rr" and "rc", with only 128-row tiles built. WGMMA reads 16-bit operands
M- or N-major from shared memory as well as K-major."""

_PINGPONG_64_TF32 = """TF32, F.linear's layout ("rc", both operands K-major), 33-128 rows: the 64-row ping-pong
tiles of the 16-bit kernels with the 32-deep K step of 4-byte elements."""

_TF32_NOT_RR_CR = """TF32 WGMMA reads only K-major operands from shared memory. Not "rr": for 32-bit types
with a K-major A and an N-major B the CollectiveBuilder takes its register-sourced swap-AB path,
and with CUTLASS 4.2.0 that kernel left whole columns of D at zero on an H200
(tests/test_kernels_cuda.py, 2026-11-22); row-major x row-major TF32 runs on the swap-AB configs
instead, which give the builder the "cc" problem. Not "cr" either: with both operands MN-major
the builder transposes B in shared memory each K step (4096^3: 604 us in the tuner, against 371
for "cc"); the planner copies B K-major for the "cc" kernel instead (~134 us at 4096^3)."""

_PRESPLIT = """3xTF32 on Hopper (float32 accuracy from TF32 WGMMA; fp32 mode "3xtf32"): each operand is
split into big and small TF32 parts laid side by side along K, then one TF32 GEMM over 3K
(cutlass3x/sm90_3xtf32_presplit.cuh). The GEMM adds WGMMA's accumulators into float32 registers
every kPromoteKTiles K steps and restarts them: WGMMA's own accumulation drops low bits of the
addends as its sum grows, which without this made the error grow with K (9.6e-6 at K = 4096
against torch fp32's 1.1e-6; RESULTS.md at 824ebc1). Two accumulators per thread, so 128x128 tiles (64 + 64
registers per consumer thread; 128x256 would spill). Registered for every operand layout and any
alignment (the split pass reads the operands as they lie). Workspace: 3 (M + N) K floats (K
rounded up to 4). The stream-K build is for few tiles (split-K over the long 3K)."""

_SHORT_K_16BIT = """16-bit products with a short K that is no multiple of 64 and a large output, such as
attention's q @ k^T at head dims 80 and 96 (K = 80, 96): a K step of 64 pads such a K to 128, and
the cooperative kernels' MMAs do not overlap their epilogue, so the padded steps cost time
outright; a K step of 32 pads 80 to 96 and leaves 96 as it is. H200 sweep (2026-11-29): 32 x
2048x2048x96 "rc" 111.0 -> 99.2 us on the 128x256 tile (torch.bmm 91.9); weight gradients over
257 tokens ("cr", K = 257: nine steps of 32 against five of 64) 16.2 -> 13.7 us at 4800x1600x257
on the 128x128 ping-pong tile, whose consumer warpgroups alternate tiles, one's epilogue under
the other's MMAs. Built in the layouts where they were fastest: the 128x256 tile in "rc", the
ping-pong tile in "rc" and "cr" (docs/findings.md, "Short K steps")."""

_CPASYNC = """Operands TMA cannot read: TMA moves rows whose leading dim and address are 16-byte
aligned, so an odd K in F.linear's layout (a TF32 leading dim off 4 elements, a 16-bit one off
8) sent a problem to CUTLASS 2.x's mma.sync kernels, to a zero-padded copy feeding a TMA kernel,
or to the streaming kernels. These are WGMMA kernels whose producer warps load A and B with
cp.async (4-byte copies: any TF32 address, a 16-bit one even) and whose epilogue stores D from
registers at any alignment (CUTLASS's KernelCpAsyncWarpSpecialized{{,Pingpong,Cooperative}} with
the NoSmemWarpSpecialized epilogue; no cluster, since cp.async loads are per CTA). Built in
CUTLASS beside the library (benchmarks/probes/cpasync_probe.py, H200, 2026-11-30, a36ddb2,
"rc", odd K, against the kernel cutlass_ops ran): {figures}. Swept on the H200 (348e320, `sweep
--add-kernels`), they were the fastest candidate far less often than the probe suggests: on 32 of
the 4,717 rows that list them (TF32 14, bf16 13, f16 5; 3 in the test split), since the probe's
class, mid-size products with an odd K, is rare among the sweep's problems; the test split's
unaligned TF32 problems went from 0.922x to 0.925x torch.mm on the best built kernel
(docs/findings.md, "Operands TMA cannot read"). The set cover of that sweep (`python -m
cutlass_ops cover`, 2% of the fastest) needed the 64x64 ping-pong builds, TF32's one-warpgroup
128x128 and bf16's 64x128 ping-pong; TF32's and f16's 64x128 and both cooperative 128x128 builds
were left out (docs/findings.md, "Groups the set cover leaves out")."""
_CPASYNC_TF32 = _CPASYNC.format(figures="""TF32 400x700x999 1.42x torch.mm on the 64x64 ping-pong tile
against 1.02x (CUTLASS 2.x 64x64x32 at alignment 1), 777x640x999 1.24x against 0.97x,
1000x1000x1001 1.03x on 64x128 ping-pong against 0.85x, 600x3000x777 1.19x on the 128x128 tile
with one consumer warpgroup (the "ws" schedule) against 0.88x, 513x2049x1023 1.18x against 1.02x,
2000x900x511 1.06x against 0.96x; behind at 300x500x1001 (0.73x against 0.81x). The cooperative
128x128 and 128x64 tiles were slower than these three on all but one problem. Behind on large
products, where a TMA kernel reading a padded copy wins (4095x4097x4093: 1.06x torch.mm on the
one-warpgroup 128x128 tile, 1.88x on the copy)""")
_CPASYNC_16BIT = _CPASYNC.format(figures="""bf16 at alignment 2 (K = 2 mod 4): 777x640x998 1.25x torch.mm
on the 64x64 ping-pong tile against 1.01x (CUTLASS 2.x 64x64x32 at alignment 2), 1000x1000x1002
1.08x on 64x128 ping-pong against 0.97x, 513x2049x1022 1.28x on the cooperative 128x128 tile
against 1.06x; behind from 1500^2, where a TMA kernel reading a padded copy wins (0.96x against
1.31x). Also built for x @ W ("rr", B read N-major), which the probe did not time""")

SM90 = [
    Sm90((128, 256, 64), cluster=(2, 1), epilogue_tile=(128, 64), builds=both16(LAYOUTS), fused=both16(("rr", "rc")),
         why="""Large M*N, 16-bit: two
consumer warpgroups share one 128x256 tile. The 2x1 cluster multicasts B across the pair.
Measured on H200 before this project: 0.95-0.99x torch.mm from 2048^3 to 8192^3 (bf16). Smem: 4
stages of (128 + 256) x 64 x 2 B.""" + _WIDE_EPILOGUE.format(
        sub="128 x 64", auto="128 x 32", figures="9576x16072x32 165.4 -> 134.3 us (torch.mm 176.8), "
                "64 x 2048x2048x128 206.4 -> 194.7 (torch.bmm 169.8)")),
    Sm90((128, 256, 64), cluster=(2, 1), variant="splitk_sum", builds=both16(LAYOUTS), why="""Few
output tiles and a long K (256x256x131072), 16-bit: CUTLASS's split-K sums partial tiles through
a serial turnstile, one slice after another, so past ~12 slices it got slower (RESULTS.md at 824ebc1,
2026-11-22, "split-K summed by a second kernel": 128x128 tiles at 32 slices took 127 us against
93 at 12). Here K is cut into up to 64 slices run as a batch of independent GEMMs, each writing a
float32 partial D, and a second kernel sums the slices in order (deterministic):
cutlass3x/sm90_splitk_sum.cuh. The 128x256 tile with its 2x1 cluster covers 256x256 with one
cluster, which reads each slice of A and B from memory once. Built in every layout: the long
reductions of weight gradients ("cr", "cc") are where the best built kernel fell furthest behind
cuBLAS (H200 sweep: 152x328x159712 "cc" 0.59x torch.mm)."""),
    Sm90((64, 128, 64), schedule="pingpong", variant="splitk_sum", builds=both16(LAYOUTS), why="""Few
output tiles of under a few hundred rows and a long K, 16-bit: the slice-summing split-K above on
64x128 tiles, which pad such problems less than 128x256 does (152x328: 9 tiles of 64x128, 85% of
them used, against 4 of 128x256, 38%), so more slices of a smaller tile fill the SMs. A ping-pong
CTA with one tile runs one consumer warpgroup; at about a thousand rows that tile was the fastest
of ours on one tile per SM (docs/findings.md, "About a thousand rows by a thousand columns")."""),
    Sm90((128, 128, 64), schedule="pingpong", epilogue_tile=(64, 64), builds=both16(LAYOUTS),
         fused=both16(("rr", "rc")), why="""Mid-size 16-bit problems
(too few 128x256 tiles to fill the SMs): two consumer warpgroups alternate whole 128x128 tiles,
so one's epilogue hides under the other's MMA.""" + _WIDE_EPILOGUE.format(
        sub="64 x 64", auto="64 x 32", figures="8192x8192x64 47.6 -> 39.8 us (torch.mm 44.9), "
                "attention's q @ k^T 64 x 2048x2048x128 196.6 -> 175.1 (torch.bmm 169.8)")),
    Sm90((128, 192, 64), cluster=(2, 1), epilogue_tile=(128, 64), builds=both16(LAYOUTS), why="""Mid-size 16-bit outputs whose
128x256 tiles fall short of a wave and whose 128x128 tiles leave a ragged second one: 512x6144
is 96 tiles of 128x256 (73% of 132 SMs), 192 of 128x128 (1.45 waves), but 128 of 128x192 (one
wave, 97%). WGMMA takes N in steps of 8 up to 256; each consumer warpgroup runs 64x192. The 2x1
cluster multicasts B across the pair, as 128x256's does. Smem: stages of (128 + 192) x 64 x 2 B
= 40 KiB. Built first for "rr", where it was the fastest candidate on 34 of 216 aligned bf16
sweep problems over 1 GFLOP (H100, 2026-11-24); then in the other layouts for the same wave fit,
such as a Llama weight gradient 2688x1024x2048 "cr": 126 tiles of 128x192 (one wave), 84 of
128x256.""" + _WIDE_EPILOGUE.format(
        sub="128 x 64", auto="128 x 32", figures="9576x16072x32 199.1 -> 173.2 us (torch.mm 176.1), "
                "32 x 2048x2048x64 94.4 -> 85.4 (torch.bmm 85.2)")),
    Sm90((64, 32, 64), cluster=(1, 2), schedule="pingpong", builds=both16(("rr", "rc")), why="""16-bit, M
= 33-128 rows with N of a few thousand: a 64x32 tile (WGMMA 64x32 per consumer warpgroup) gives
64x4096 its 128 tiles, one per SM, where 128-row tiles leave half of each idle; the 1x2 cluster
multicasts A to the two CTAs of a tile row. cuBLAS makes the same 128 CTAs of 64x4096x4096 on
an H100 from the transposed tile (torch.profiler: nvjet_sm90_tst_64x32_64x16_1x2; cuBLAS's names
give the output's columns first, as it computes D^T: 32 rows x 64 columns, two tile rows to a
cluster, so B is multicast). Persistent ping-pong:
a CTA with two tiles overlaps one's epilogue with the other's MMAs. Built for x @ W and F.linear."""),
    Sm90((64, 64, 64), schedule="pingpong", builds=both16(LAYOUTS), why=_PINGPONG_64_16BIT),
    Sm90((64, 128, 64), schedule="pingpong", epilogue_tile=(64, 64), builds=both16(LAYOUTS),
         fused=both16(("rr", "rc")), why=_PINGPONG_64_16BIT + _WIDE_EPILOGUE.format(
             sub="64 x 64", auto="64 x 32", figures="9576x16072x32 152.8 -> 130.4 us (torch.mm 176.8), "
                     "1000x1024x4096 23.1 -> 21.3 (18.3)")),
    Sm90((64, 256, 64), schedule="pingpong", epilogue_tile=(64, 64), builds=both16(LAYOUTS),
         why=_PINGPONG_64_16BIT + _WIDE_EPILOGUE.format(
             sub="64 x 64", auto="64 x 32", figures="9576x16072x32 144.8 -> 123.6 us (torch.mm 176.1), "
                     "8192x8192x64 47.0 -> 40.8 (44.8)")),
    Sm90((256, 128, 64), cluster=(1, 2), epilogue_tile=(128, 64), builds=both16(LAYOUTS), why="""Large M*N, 16-bit, the other
way round: a 256x128 tile (each consumer warpgroup 128x128) with a 1x2 cluster, which multicasts
A to the two CTAs of a tile row. For outputs far wider than tall (N = 14336-128256 in LLM
projections) the pair shares A's 256-row slab where 128x256 2x1 shares B's. Smem: 4 stages of
(256 + 128) x 64 x 2 B, as 128x256. Built for "rr", where it won first, and in the other layouts
since the kernel groups share files (a layout adds a few seconds of compile).""" + _WIDE_EPILOGUE.format(
        sub="128 x 64", auto="128 x 32", figures="9576x16072x32 219.2 -> 181.4 us (torch.mm 176.1), "
                "64 x 2048x2048x128 203.7 -> 196.3 (torch.bmm 169.8)")),
    Sm90((128, 64, 64), cluster=(1, 2), builds=both16(LAYOUTS), why="""Mid-size 16-bit problems
(512^3-1024^3, 1000^3): a 128x64 tile gives twice the tiles of 128x128 (1024^3: 128, one per
SM), split between the two consumer warpgroups (64 rows each); the 1x2 cluster multicasts A to
the pair of tiles beside each other. Persistent, no workspace. cuBLAS's kernel for 1024^3 and
1000x1024x4096 on an H100 is named 128x64 with a 1x2 cluster, but its names give the output's
columns first (it computes D^T): 64 rows x 128 columns, two tile rows to a cluster, non-cooperative.
That arrangement, the 64x128 ping-pong tile with a 2x1 cluster, was built and swept (H100,
2026-11-28; branch wip/multicast, not in this table; docs/findings.md, "What cuBLAS runs on the model
problems"): 23.4 us at 1000x1024x4096 "rr" against this tile's 24.4 and torch.mm's 18.6 (the
sweep's times), no better on the test split. Built in the layouts of x @ W and F.linear, and
in "cr" and "cc" with the 64-row ping-pong tiles (below 0.85x torch.mm there with 128-row tiles
alone)."""),
    Sm90((128, 128, 32), schedule="pingpong", epilogue_tile=(64, 64), builds=both16(("rc", "cr")),
         why=_SHORT_K_16BIT + _WIDE_EPILOGUE.format(
             sub="64 x 64", auto="64 x 32", figures="9576x16072x32 236.3 -> 206.6 us (torch.mm 176.1), "
                     "8192x8192x64 49.7 -> 42.1 (44.8)")),
    Sm90((128, 128, 32), builds={"tf32": ("rc", "cc")}, why="""float32 with TF32 products: K tile 32
keeps the 128-byte swizzle (32 x 4 B). """ + _TF32_NOT_RR_CR),
    Sm90((64, 64, 32), schedule="pingpong", builds={"tf32": ("rc",)}, why=_PINGPONG_64_TF32),
    Sm90((64, 128, 32), schedule="pingpong", builds={"tf32": ("rc",)}, why=_PINGPONG_64_TF32),
    Sm90((64, 256, 32), schedule="pingpong", builds={"tf32": ("rc",)}, why=_PINGPONG_64_TF32),
    Sm90((128, 128, 64), scheduler="streamk", epilogue_tile=(128, 64), builds=both16(LAYOUTS),
         fused=both16(("rr", "rc")), why="""Few output tiles for the
SMs (small M or N, large K, mid-size squares): stream-K spreads the K iterations of all tiles
evenly over every SM, or split-K cuts each tile's K into slices; partial tiles are summed in a
fixed order (deterministic). 16-bit.""" + _WIDE_EPILOGUE.format(
        sub="128 x 64", auto="128 x 32", figures="9576x16072x32 231.3 -> 199.4 us (torch.mm 176.4), "
                "64 x 2048x2048x128 266.9 -> 246.7 (torch.bmm 169.6)")),
    Sm90((128, 256, 64), cluster=(2, 1), scheduler="streamk", epilogue_tile=(128, 64), builds=both16(LAYOUTS), why="""The
128x256 tile with its 2x1 cluster on the stream-K scheduler, for outputs of one to four waves of
128x256 tiles with a ragged last one, where the whole-tile kernels lose a wave's worth:
2049x4096x14336 "rc" is 288 tiles, 2.2 waves on 132 SMs, and measured 432 us on the persistent
128x256 tile and 385 on 128x192 against torch.mm's 300 (H100 sweep, 2026-11-24); stream-K
deals the last waves' K iterations evenly over the SMs. Also split-K below a wave. Built in all
four layouts ("cr" and "cc" are weight gradients).""" + _WIDE_EPILOGUE.format(
        sub="128 x 64", auto="128 x 32", figures="9576x16072x32 154.6 -> 125.8 us (torch.mm 176.4), "
                "32 x 2048x2048x64 102.5 -> 88.8 (torch.bmm 85.4)")),
    Sm90((128, 64, 128), scheduler="streamk", builds=both16(LAYOUTS), why="""Narrow, deep tiles for
small M*N (decode-size M, thin outputs): twice the tiles of 128x128 to spread over the SMs,
128-deep K steps so each TMA load moves more of B per barrier round trip. Smem: 4 stages of (128
+ 64) x 128 x 2 B = 192 KiB."""),
    Sm90((128, 128, 32), scheduler="streamk", builds={"tf32": ("rc", "cc")}, why="""Stream-K and
split-K for TF32, as the 16-bit 128x128x64 stream-K config; the layouts of the TF32 128x128
cooperative config."""),
    Sm90((128, 256, 32), cluster=(2, 1), builds={"tf32": ("rc", "cc"), **both16(("rc",))}, why="""Large M*N,
TF32: the 128x256 cooperative tile with a 2x1 cluster, as for 16-bit, with the 32-deep K step of
4-byte elements. Smem: (128 + 256) x 32 x 4 B = 48 KiB per stage, as many stages as fit beside the
epilogue. """ + _SHORT_K_16BIT),
    Sm90((32, 128, 128), scheduler="streamk", swap_ab=True, builds=both16(("rr", "rc", "cc")),
         why="""Swap-AB, for small M (decode-size batches): the kernel computes D^T = B^T A^T, so the
problem's N runs along WGMMA's 128-wide M side and the few rows of A along its narrow N side
(WGMMA's N goes down to 8; its M is 64 per warpgroup). D^T is column-major, which is D row-major:
nothing is copied. Tiles are in the problem's terms (kTileM rows of D), so kTileM = 32 means a
CUTLASS tile of 128 (N) x 32 (M). Stream-K scheduler in split-K mode spreads the few tiles over
the SMs. Smem: (128 + 32) x 128 x 2 B = 40 KiB per stage, as many stages as fit (five). Measured
(H100, autotuner, bf16 row-major): 16x4096x4096 in 23.2 us against 33.1 for the best unswapped
kernel; 1.1-1.55x faster on every LLM-suite shape with M <= 64, and at M = 128 while its tiles
fit one wave. A 64-row variant never won and was dropped. Built for x @ W, x @ W.T (F.linear)
and both operands transposed ("cc", where it won at 128x4096x4096); a "cr" build never won."""),
    Sm90((256, 128, 32), cluster=(1, 2), swap_ab=True, builds={"tf32": ("rr",)}, why="""Row-major x
row-major TF32 (x @ W on float32 tensors). TF32 WGMMA reads only K-major operands from shared
memory, and a row-major B is N-major. Swapped, the problem is D^T = B^T A^T: CUTLASS's A is B^T
(N-major), which the builder's register-sourced mainloop transposes on its way from shared
memory into registers, and CUTLASS's B is A^T, K-major. B is read where it lies (before: a
K-major copy of B, ~1 TB/s, then the "rc" kernel). Tiles and clusters in the problem's terms:
CUTLASS runs 128 (N) x 256 (M) with a 2x1 cluster, the instantiation of the "cc" TF32 kernel,
which the tuner timed at 370 TFLOP/s on 4096^3 (H100), where the copy and the "rc" kernel took
289 together."""),
    Sm90((128, 128, 32), scheduler="streamk", swap_ab=True, builds={"tf32": ("rr",)}, why="""The same
swap for TF32 problems of about a wave of 128x128 tiles or fewer (128-1024 rows): the stream-K
scheduler's split-K spreads few tiles over the SMs."""),
    Sm90((256, 128, 32), scheduler="streamk", swap_ab=True, builds={"tf32": ("rr",)}, why="""The
256x128 swapped tile on the stream-K scheduler (1x1 cluster), for row-major x row-major TF32 with
under a wave of those tiles (256-1024 rows at N = 4096): split along K, the few wide tiles fill
the SMs, and each consumer warpgroup still transposes its B^T slab for a 64 x 256 product per K
step, where the 128x128 tile gets half that per transpose."""),
    Sm90((64, 64, 32), schedule="pingpong", swap_ab=True, builds={"tf32": ("rr",)}, why="""Row-major
x row-major TF32, 33-64 rows: a 64-row ping-pong tile, swapped as the configs above are (CUTLASS
runs 64 (N) x 64 (M), one consumer warpgroup per tile, B^T register-sourced). 64x4096 is 64
whole-K tiles where the 128x128 stream-K tile had 32, each split three ways along K. Measured on
an H100 (bench, RESULTS.md at 824ebc1, 2026-11-22, "float64 on CUTLASS 2.x's stream-K kernel"):
64x4096x4096 0.90x cuBLAS against 0.81x. Wider swapped tiles (128 and 256 columns, ping-pong or
cooperative) lost to the 128x128 stream-K tile from 128 rows: the register-sourced path
transposes B^T on its way to the registers, which costs more on a narrow tile than the split-K
fix-up does."""),
    Sm90((144, 128, 64), cluster=(2, 1), swap_ab=True, builds=both16(("rr", "rc")), why=_SWAPPED_144),
    Sm90((144, 256, 64), cluster=(2, 1), swap_ab=True, builds=both16(("rr", "rc")), fused=both16(("rr", "rc")),
         why=_SWAPPED_144),
    Sm90((144, 128, 64), cluster=(2, 1), scheduler="streamk", swap_ab=True, builds=both16(("rr", "rc")),
         fused=both16(("rr", "rc")), why=_SWAPPED_144),
    Sm90((192, 128, 64), cluster=(2, 1), swap_ab=True, builds=both16(("rr", "rc")), why=_SWAPPED_WAVES),
    Sm90((176, 256, 64), cluster=(2, 1), swap_ab=True, builds=both16(("rr", "rc")), why=_SWAPPED_WAVES),
    Sm90((160, 256, 64), cluster=(2, 1), swap_ab=True, builds=both16(("rc",)), why=_SWAPPED_LARGE),
    Sm90((160, 256, 64), swap_ab=True, builds=both16(("rc",)), why=_SWAPPED_LARGE),
    Sm90((80, 128, 64), swap_ab=True, builds=both16(("rr", "rc")), fused=both16(("rr", "rc")),
         why="""Mid-size 16-bit products
of 768-1600 columns in the layouts of x @ W and F.linear (500-1500 tokens through small models'
projections), where 128-row tiles make too few tiles for the SMs and 64-row ones too many short
ones: cuBLAS runs tiles whose row side fits, with 2-CTA clusters (80x128 at 777x1600x1600 and
1000x1280x1280 "rr", 104x128 at 1000x1600x6400, 72x128 at 1500x768x768;
benchmarks/probes/cublas_choices_probe.py, H200, 2026-11-30). Swapped, the 80 rows go
along WGMMA's N side (CUTLASS runs 128x80, an extended WGMMA N; it takes rows in steps of 16):
1500x768 is 19 x 6 = 114 tiles for 132 SMs where 128x128 makes 72. Built in CUTLASS beside the
library's (benchmarks/probes/epilogue_tile_probe.py --set swapped, H200, 2026-11-30, bf16 "rc"):
1500x768x3072 at 0.990x torch.mm where the best built kernel reached 0.730x, 777x1600x1600 0.905x
against 0.778x, 1500x768x768 0.895x against 0.819x; behind it on wider and longer products. No
cluster: a 2x1 one along rows lost on these problems (docs/findings.md, "The 128x128 tile on
large products")."""),
    Sm90((112, 128, 64), swap_ab=True, builds=both16(("rr", "rc")), fused=both16(("rr", "rc")),
         why="""The 80x128 swapped tile's
neighbour for longer and wider mid-size products (500-1000 rows through 1600-3072 columns): 112
rows swapped (CUTLASS 128x112, extended WGMMA N) make 9 x 13 = 117 tiles at 1000x1600 where
128x128 makes 104 and the 80-row tile 169, a second wave. Built in CUTLASS beside the library's
(benchmarks/probes/epilogue_tile_probe.py --set swapped, H200, 2026-11-30, bf16 "rc"):
1000x1600x6400 0.944x torch.mm where the best built kernel reached 0.856x and the 80-row tile
0.562x, 500x3072x3072 0.883x against 0.820x, 1000x1280x1280 0.825x against 0.793x; behind on
1000x14336x4096 (0.910x against 0.971x). No cluster: 2x1 lost on all of them (0.46-0.83x)."""),
    Sm90((80, 64, 64), cluster=(4, 2), schedule="pingpong", swap_ab=True, builds=both16(("rc",)),
         why=_SMALL_CLUSTERS),
    Sm90((96, 64, 64), cluster=(4, 2), schedule="pingpong", swap_ab=True, builds=both16(("rc",)),
         why=_SMALL_CLUSTERS),
    Sm90((64, 64, 64), cluster=(2, 4), schedule="pingpong", builds=both16(("rc",)), why=_SMALL_CLUSTERS),
    Sm90((128, 128, 32), cluster=(2, 1), variant="presplit", promote_k_tiles=2, builds={"3xtf32": LAYOUTS},
         why=_PRESPLIT),
    Sm90((128, 128, 32), scheduler="streamk", variant="presplit", promote_k_tiles=2,
         builds={"3xtf32": LAYOUTS}, why=_PRESPLIT),
    Sm90((64, 64, 32), schedule="pingpong", mainloop="cpasync", builds={"tf32": ("rc",)},
         alignments={"tf32": (1,)}, why=_CPASYNC_TF32),
    Sm90((128, 128, 32), schedule="ws", mainloop="cpasync", builds={"tf32": ("rc",)},
         alignments={"tf32": (1,)}, why=_CPASYNC_TF32),
    Sm90((64, 64, 64), schedule="pingpong", mainloop="cpasync", builds=both16(("rr", "rc")),
         alignments={p: (2,) for p in F16_BF16}, why=_CPASYNC_16BIT),
    Sm90((64, 128, 64), schedule="pingpong", mainloop="cpasync", builds={"bf16": ("rr", "rc")},
         alignments={"bf16": (2,)}, why=_CPASYNC_16BIT),
]

# ---- CUTLASS 2.x (SM80-class; DMMA configs SM90) -----------------------------------------

_SPLITK_SUM_2X = """Also built as split-K summed by a second kernel (``splitk_sum``; kernel names
``..._splitk_sum_a<N>``, cutlass2x/sm80_splitk_sum.cuh): the same GEMM in CUTLASS's parallel split-K
mode, every K slice at once writing its partial D to a workspace, then a kernel adding the slices
in order. Serial split-K's slices take turns at each tile, so its launches stop paying at a dozen
slices; small outputs over a long K need dozens to bring the SMs in. Those were the largest class
below 0.8x torch.mm among 32- and 64-bit problems: on the H200 sweep, rows whose best built
candidate was a CUTLASS 2.x split-K launch ran 0.740x (TF32, 69 rows) and 0.774x (float64, 97)
torch.mm at best (TF32 192x40x14920 "cc": 37.8 us in 8 slices against 14.3). With their slices
summed apart, those rows' best built kernel reached 0.917x (TF32) and 0.986x (float64), and
192x40x14920 17.1 us in 32 slices (H200 sweep, 2026-12-04; docs/findings.md, "Small outputs over
a long K")."""

_DMMA_SMALL = """float64 below a wave of 128x128 tiles, on Hopper's DMMA 16x8x4: 64x64 (four warps of
32x32) and, for up to 32 rows, 32x64 (four warps of 16x32), so that small and few-row problems
get 4x (2x) the CTAs of 128x128; with split-K for a long K. Smem: 4 x (64 + 64) x 16 x 8 B = 64
KiB, 5 x (32 + 64) x 16 x 8 B = 60 KiB. """ + _SPLITK_SUM_2X

_DMMA_F32 = """IEEE float32 on Hopper's FP64 tensor cores, widened in registers
(cutlass2x/f32_on_dmma_warp.h): float operands copied into shared memory as they are (16-byte
cp.async, the TF32 kernels' layouts), each warp's fragments widened to float64 and multiplied on
DMMA.16x8x8, one rounding per result. No workspace, no passes; 16-byte aligned operands, 4-byte
ones for any others. A stage holds K = 32 floats in the bytes of the float64 kernels' K = 16.
The float64 tiles, 128x128, 64x64 and 32x64, all on CUTLASS 2.x's stream-K kernel (it runs
data-parallel when asked to; stream-K stands in for split-K, which these kernels do not offer).
Measured on an H100 (RESULTS.md at 824ebc1, 2026-11-23, "IEEE float32 widened in registers"): 128x128 on
the stream-K kernel was ahead of or level with the plain kernel on all 53 suite problems it ran,
so the plain one was dropped. Smem: 3 x (128 + 128) x 32 x 4 B = 96 KiB, 4 x (64 + 64) x 32 x 4
B = 64 KiB, 5 x (32 + 64) x 32 x 4 B = 60 KiB."""

_SIMT_SMALL = """IEEE float32 on CUDA cores with smaller tiles, for outputs that 128x128 tiles cover badly:
17-64 rows (64x128, 32x128: a 128-row tile would idle half or three quarters of its threads) and
16-64 columns (128x32). CUTLASS's own SM80 SIMT tile set; 5 stages. Smem: 5 x (64 + 128) x 8 x 4
B = 30 KiB (64x128), 20 KiB (32x128 and 128x32)."""

SM80 = [
    Sm80((128, 256, 64), warp=(64, 64, 64), stages=3, builds={"f16": (8,), "bf16": (8,)}, why="""16-bit,
16-byte aligned operands. Smem: 3 x (128x64 + 64x256) x 2 B = 144 KiB, so it needs an
SM80/SM90-class shared memory (SM86/89 offer 99 KiB: the planner skips it)."""),
    Sm80((128, 128, 32), warp=(64, 64, 32), stages=3,
         builds={"f16": (4, 2), "bf16": (4, 2), "tf32": (4, 2, 1), "3xtf32": (4,)}, why="""16-bit
operands aligned to 4 or 8 bytes (cp.async copies of 8 and 4 bytes), TF32 at 4, 2 and 1 elements,
and 3xTF32. Smem: 48 KiB (16-bit), 96 KiB (tf32)."""),
    Sm80((128, 128, 32), warp=(64, 64, 32), stages=2, builds={"f16": (1,), "bf16": (1,)}, why="""16-bit
operands with odd addresses or leading dims, on tensor cores. cp.async copies 4, 8 or 16 bytes,
so a 2-byte-aligned operand cannot use the multistage pipeline: two stages (CUTLASS's
MmaPipelined), each thread loading its part of the next K tile into registers, one element at a
time, while the warps multiply the current one out of shared memory, then storing it. cuBLAS
runs the same structure on such operands (CUTLASS's tensorop_s1688gemm_128x128_32x2_align1).
Smem: 2 x (128 + 128) x 32 x 2 B = 32 KiB."""),
    Sm80((64, 64, 32), warp=(32, 32, 32), stages=2, builds={"f16": (1,), "bf16": (1,)}, why="""Small
16-bit problems with odd addresses or leading dims: the register-staged two-stage pipeline of the
128x128 alignment-1 kernel on a 64x64 tile (four warps of 32x32), a quarter of the multiply-adds
and half the element loads per K step, and four times the CTAs. The sweep (H100, bf16 and f16,
2026-11-24): on the 1,162 problems under 0.1 GFLOP with an unaligned operand the best built
kernel reached 0.72x torch.mm (geomean; median 10.5 us against 8.2), most of them on the 128x128
alignment-1 kernel; cuBLAS runs CUTLASS 2.x alignment-1 kernels with 64x64 tiles there.
Stream-K stands in for split-K (16-bit D). Smem: 2 x (64 + 64) x 32 x 2 B = 16 KiB."""),
    Sm80((64, 64, 32), warp=(32, 32, 32), stages=4, builds={"f16": (4, 2), "bf16": (4, 2), "tf32": (4, 2, 1)},
         splitk_sum=("tf32",), why="""Small 16-bit problems with operands aligned to 4 or 8 bytes: the cp.async multistage
128x128 kernel's copies on a 64x64 tile (four warps of 32x32), four stages. On the sweep's 228
problems under 0.1 GFLOP aligned to 4 bytes the best built kernel, the 128x128 one, reached
median 8.8 us against torch.mm's 6.0. Smem: 4 x (64 + 64) x 32 x 2 B = 32 KiB. The same for
TF32 at alignments 4, 2 and 1 (cp.async copies of 16, 8 and 4 bytes), where cuBLAS runs
CUTLASS 2.x 64x64 tensor-op kernels split along K: on the sweep's TF32 problems under 0.1
GFLOP with an unaligned operand the best built kernel reached 0.71x torch.mm (geomean, H100,
2026-11-24), mostly on the 128x128 one. Smem: 64 KiB (TF32). """ + _SPLITK_SUM_2X),
    Sm80((64, 64, 64), warp=(32, 32, 64), stages=5, builds={"f16": (8,), "bf16": (8,)}, why="""Small
problems and few rows, 16-bit, 16-byte aligned operands (also SM86/89's path: it fits their 99
KiB). Four warps of 32x32, five stages of (64 + 64) x 64 x 2 B = 80 KiB. A 64x64 tile gives
256x256 16 CTAs and 1024^3 256, where 128x128 gives 4 and 64; its prologue is a plain cp.async
pipeline (no TMA descriptors, clusters or tile-scheduler workspace), which is most of the time
at 256^3-1024^3. With serial split-K it is also a few-row kernel."""),
    Sm80((128, 128, 16), warp=(32, 64, 16), stages=3, builds={"f64": (1,)}, why="""float64 on DMMA
(8x8x4). CUTLASS's default SM80 fp64 shape; smem 96 KiB."""),
    Sm80((128, 128, 16), warp=(32, 64, 16), stages=3, math="dmma16x8x4", builds={"f64": (1,)}, why="""float64
on Hopper's DMMA (16x8x4, twice the depth of SM80's 8x8x4): CUTLASS 2.x's multistage kernel with
the SM90 instruction, built for sm_90a. Smem: 3 x (128 + 128) x 16 x 8 B = 96 KiB."""),
    Sm80((64, 64, 16), warp=(32, 32, 16), stages=4, math="dmma16x8x4", builds={"f64": (1,)}, splitk_sum=("f64",),
         why=_DMMA_SMALL),
    Sm80((32, 64, 16), warp=(16, 32, 16), stages=5, math="dmma16x8x4", builds={"f64": (1,)}, splitk_sum=("f64",),
         why=_DMMA_SMALL),
    Sm80((128, 128, 16), warp=(32, 64, 16), stages=3, math="dmma16x8x4", stream_k=True, builds={"f64": (1,)},
         why="""The 128x128 DMMA tile on CUTLASS 2.x's stream-K kernel (sm80_gemm.cuh, kStreamK), for
float64 problems whose tiles leave a ragged last wave: 128x14336 is 112 tiles of 128x128, 0.85
of a wave of 132 SMs, and 448 of 64x64, 3.4 waves. Dealt out as K iterations, every SM gets the
same share. Measured on an H100 (benchmarks/probes/split_probe.py; RESULTS.md at 824ebc1, 2026-11-22):
128x14336x4096 0.98x cuBLAS (0.93x data-parallel), 128x6144x4096 1.08x (1.00x on 64x64
split-K), 512x14336x4096 0.94x (0.90x). A 64x64 stream-K tile never won."""),
    Sm80((128, 128, 32), warp=(32, 64, 32), stages=3, math="dmma16x8x8", stream_k=True,
         builds={"f32": (4, 1)}, why=_DMMA_F32),
    Sm80((64, 64, 32), warp=(32, 32, 32), stages=4, math="dmma16x8x8", stream_k=True,
         builds={"f32": (4, 1)}, why=_DMMA_F32),
    Sm80((32, 64, 32), warp=(16, 32, 32), stages=5, math="dmma16x8x8", stream_k=True,
         builds={"f32": (4, 1)}, why=_DMMA_F32),
    Sm80((128, 128, 8), warp=(32, 64, 8), stages=4, math="simt", builds={"f32": (1,)}, why="""IEEE
float32 on CUDA cores, cp.async multistage (4-byte copies: any alignment)."""),
    Sm80((64, 128, 8), warp=(32, 64, 8), stages=5, math="simt", builds={"f32": (1,)}, why=_SIMT_SMALL),
    Sm80((32, 128, 8), warp=(32, 64, 8), stages=5, math="simt", builds={"f32": (1,)}, why=_SIMT_SMALL),
    Sm80((128, 32, 8), warp=(64, 32, 8), stages=5, math="simt", builds={"f32": (1,)}, why=_SIMT_SMALL),
    Sm80((128, 128, 8), warp=(32, 64, 8), stages=2, math="simt", builds={"f16": (1,), "bf16": (1,)},
         why="""16-bit operands with odd addresses or leading dims: cp.async cannot copy 2 bytes, so
this is the two-stage register-staged SIMT pipeline with fp32 accumulation. The correctness floor
for any 16-bit shape; dispatch takes anything faster."""),
]

# ---- hand-written (csrc/handwritten; their translation units are written by hand) ---------

_FITTED_N = """The ladder's step-6 kernel on tiles of 128 rows by 128 to 240 columns in steps of 16,
bf16 and f16, F.linear's layout (B column-major; kernel names end in _n<N>): tiles whose width fits the problem,
as cuBLAS's do (128x200 at 777x8192x8192 "rc", 128x160 and 128x192 at 2049 rows: H100,
benchmarks/probes/cublas_choices_probe.py, docs/findings.md), so that N fills whole tiles and the
tiles whole waves of 132 SMs: at 777 x 8192, 224 tiles of 128x256 (1.7 waves: two, the second
70% full) or 259 of 128x224 (two, 96% full), an eighth less work per SM. D leaves in 64-column TMA boxes and a narrower unswizzled last
one (16, 32 or 48 columns). Chosen by a what-if over the stored sweep (each problem's time on the
128x256 build scaled by the tiles' wave and padding arithmetic, a smaller tile's lower rate
included): on the bf16 "rc" problems of a wave or more, the best built kernel from 0.953x to
about 0.97x torch.mm (test split), an estimate. Forced on seven bf16 F.linear shapes (H200,
2026-11-27, d9f8a5a, do_bench medians of three alternated rounds): ahead of the model's pick at
777x8192x8192 (128x224: 0.93x torch.mm, the pick 0.84x) and 1000x14336x4096 (0.98x against
0.91x), behind it at 1000x4096x4096, 2049x8192x8192, 3000x4096x11008, 257x8192x28672 and 4096^3.
Swept on the H100 (2026-11-27, `sweep --add-kernels` on every 16-bit "rc" row): the fastest
candidate on 198 bf16 and 52 f16 rows, up to 1.23x faster than the best kernel before them
(8191x1600x1600; 777x3072x1024 1.15x, test split); the best built kernel on the test split's
bf16 model problems from 0.952x to 0.959x torch.mm, f16 0.952x to 0.958x, its bf16 "rc" problems
0.996x to 1.003x: less than the what-if's estimate. Also built with linear's bias and activation
fused (names ending in _bias_act, applied to the accumulators before D is stored), as is the
128x256 step in "rc": at 1000 x 4096 -> 14336, 3000 and 4096 x 4096 -> 14336 the plain
product runs an N-fitted tile, and without a fused build a biased one ran the CUTLASS 128x256
tile (0.87-0.97x torch's F.linear, linear_epilogue_probe, H100, a3b68e5). Compiled like the step itself (no CuTe), so four widths cost the
build seconds, where CUTLASS tiles cost minutes. The 128x192 tile is also built for a row-major B (x @ W,
"rr"; names ending in _rr_6_wgmma_tma_n192): a row-major B is loaded in 64-column boxes, which of
these widths only 192 fills whole. Swept on the H200 (below, with the swapped "rr" builds). With a
column-major A (A MN-major, as the 128x256 step's "cr" and "cc" builds read it): 192 in "cr" (B
row-major), all four widths in "cc". Swept on the H200 with the swapped column-major-A builds
(below). **The narrow widths, 128-176** ("rc"; and 128 in "rr" and "cr", whose row-major B is
read in 64-column boxes): at a few hundred to a few thousand rows a 128x192 tile leaves SMs idle
(500 x 4608: 96 tiles for 132 SMs) where 128x144 makes 128. Forced on fifteen bf16 F.linear
products (benchmarks/probes/narrow_fitted_probe.py, H200, 2026-11-30): the best narrow build ahead
of the best wide one (192-256) on fourteen (one of them, 1000x4096x1024, by less than 1%),
500x4608x3584 0.924x torch.mm against 0.842x, 1500x3072x1024 1.017x against 0.835x. Swept on every 16-bit "rc" row of the H200 sweep and refitted: the fastest candidate
on 108 of 1,267 training rows and 25 of 421 test rows, 3.5-4.4% ahead of the best kernel before
them there (geomean; up to 13.5%); the bench, alternately timed under the new calibration and the
one before it on fourteen bf16 F.linear products: 0.928x and 0.924x torch.mm against 0.892x and
0.891x. "rr" n128 and "cr" n128: the fastest on 19 and 21 training rows (docs/findings.md, "Narrow
N-fitted tiles")."""

_FITTED_M = """The step-6 kernel on the transposed problem, D^T = W @ x^T, in F.linear's layout: tiles of
192-256 rows of x (144-256 in x @ W's layout; the WGMMA's N side) by 128 columns of W, D stored
transposed (each 64 x 64 box of D^T written into a staging box of D and sent by one TMA store). Rows of x then fill tiles of
the width that fits them, where the plain step pads them to a multiple of 128: 777 rows in four
tiles of 208 (93% filled) instead of seven of 128 (87%), 2049 in ten of 208 (98.5%) instead of
seventeen of 128 (94%). Forced on ten bf16 F.linear shapes (benchmarks/probes/swapped_rows_probe.py,
H100, 2026-11-27): ahead of the best N-fitted build at 777x8192x8192 (208 rows: 0.958x torch.mm
against 0.903x) and 2049x8192x8192 (0.944x against 0.916x), level at 1000-1500 rows, behind at
257 rows (0.58x against 0.73x: two tiles of 192 rows, most of the second empty) and where N is
wide and M small. Swept on every 16-bit "rc" row (`sweep --add-kernels`): the fastest candidate
on 20 of the test split's 180 bf16 model "rc" problems; there the best built kernel went from
0.961x to 0.965x torch.mm (2049 rows 0.932x -> 0.967x). Also built in x @ W's layout ("rr"; names
with _rr_): there the weight, K x N row-major, is the kernel's A MN-major, loaded in two 64-column
boxes as the plain step loads a column-major A. Swept with the "rr" 128x192 build on every 16-bit
"rr" row of the H200 sweep (`sweep --dtype bf16,f16 --add-kernels
'*_rr_6_wgmma_tma_swapab_m*,*_rr_6_wgmma_tma_n192'`, 2026-11-30, 127 s) and refitted: the fastest
candidate on 73 of 858 training rows and 34 of 308 test rows, 3.2% and 2.0% ahead of the best
kernel before them there (geomean; up to 12%); on the test split's 16-bit "rr" model problems the
best built kernel from 0.962x to 0.966x torch.mm and the dispatched one from 0.948x to 0.952x. With a column-major A ("cr", the weight
gradient's layout, and "cc"), A is the kernel's B MN-major, read in 64-row boxes: built at 192 and
256 rows. Swept with the column-major-A 128x192-240 builds on every 16-bit "cr" and "cc" row of
the H200 sweep (`sweep --dtype bf16,f16 --add-kernels
'*_cr_6_wgmma_tma_n192,*_cc_6_wgmma_tma_n*,*_cr_6_wgmma_tma_swapab_m*,*_cc_6_wgmma_tma_swapab_m*'`,
2026-11-30, 62 s) and refitted: the fastest candidate on 53 of 773 "cr" training rows and 23 of
265 test rows (3.6% and 4.4% ahead of the best kernel before them there, geomean; up to 16%), the
128x192 tile on most; in "cc" on 19 of 614 and 8 of 205 (4.9% and 2.2%). On the test split's
16-bit "cr" model problems the best built kernel from 0.986x to 0.998x torch.mm and the
dispatched one from 0.975x to 0.988x; "cc" (aligned random problems only) 0.970x -> 0.972x. In
"rr" also 144, 160 and 176 rows (1000 rows fill seven tiles of 144): swept with the "rr" 128x128
build on every 16-bit "rr" row of the H200 sweep and refitted, the four were the fastest candidate
on 36 of 779 training rows and 12 of 262 test rows (3.1-4.7% ahead of the best kernel before them
there); the bench, alternately timed under both calibrations on ten bf16 "rr" model products:
0.896x and 0.900x torch.mm against 0.875x and 0.877x (1000x4544x4544 0.90-0.92x on the swapped
144-row tile against 0.83x; docs/findings.md, "Narrow N-fitted tiles"). The set cover of the
H200 sweep (`python -m cutlass_ops cover`, 2% of the fastest) left out the 176-row builds and
f16's 256-row and 208-column ones (bf16's kept): within 2% of the fastest on no training problem
the kept builds did not also cover (docs/findings.md, "Groups the set cover leaves out")."""

_SPLIT_K = """ Split-K (the builds of this tile and of the ends of the width range beside it:
128x128, and 256 rows swapped, that one bf16 only): for problems of fewer tiles than SMs (777 x
1024 -> 56 tiles of 128x128 for 132 SMs), each tile's K is cut into slices that run at once; every slice but the last
writes its float32 partial tile to the workspace and counts itself in, and the last waits for the
count, adds the partials to its own in slice order (the same sum on every run) and stores D, fused
epilogue included (SliceSum::kLastSlice). Swept on the H200 (2026-12-01, d5b483d): the fastest
candidate on 66 of 3,492 16-bit training rows and 14 of 1,178 test rows, up to 20% ahead of the
best kernel before it there (docs/findings.md, "Split-K in the TMA + WGMMA step")."""

HANDWRITTEN = [
    Handwritten((8, 32, 1), struct_name="Handwritten_1_Naive", config_name="1_naive", why="""Ladder step
1: one thread per output element, reading A and B from global memory, in blocks of 8x32 threads
(csrc/ladder/gemm_1_naive_sm80.cu)."""),
    Handwritten((32, 32, 32), struct_name="Handwritten_2_SmemTiled_32x32x32", config_name="2_smem_tiled_32x32x32",
                why="""Ladder step 2: 32x32 tiles of A and B staged through shared memory
(csrc/ladder/gemm_2_smem_tiled_sm80.cu)."""),
    Handwritten((128, 128, 16), struct_name="Handwritten_3_RegisterBlocked_128x128x16",
                config_name="3_register_blocked_128x128x16_8x8", role="product", why="""Ladder step 3:
register-blocked fp32 SIMT, 128x128x16 CTA tile of 256 threads with 8x8 outputs each, float4
loads, double-buffered shared memory; row-major A and B, 4-element alignment, data-parallel
only. Measured on an H100 at 4096^3 and 8192^3: 0.94x cuBLAS fp32, where CUTLASS's SIMT
128x128x8 reached 0.87x (benchmarks/RESULTS.md at 824ebc1)."""),
    Handwritten((128, 128, 32), struct_name="Handwritten_4_Wmma_128x128x32", config_name="4_wmma_128x128x32_64x32",
                why="""Ladder step 4: tensor cores through WMMA fragments, 128x128x32 CTA tile, warps of
64x32 (csrc/ladder/gemm_4_wmma_sm80.cu)."""),
    Handwritten((128, 256, 32), struct_name="Handwritten_5_MmaSync_128x256x32", config_name="5_mma_sync_128x256x32_4s",
                why="""Ladder step 5: mma.sync with ldmatrix from swizzled shared memory fed by a
four-stage cp.async ring, 128x256x32 CTA tile (csrc/ladder/gemm_5_mma_sync_sm80.cu)."""),
    Handwritten((128, 256, 64), struct_name="Handwritten_6_WgmmaTma_128x256x64", config_name="6_wgmma_tma_128x256x64_4s",
                role="product", arch=90, why="""Ladder step 6: TMA + WGMMA, warp-specialised, persistent
128x256x64 tiles, 4 stages, TMA-store epilogue; bf16/f16, A row- or column-major (the weight
gradient's "cr" and "cc": A MN-major for wgmma), B row- or column-major, 8-element alignment. Measured (H100, autotuner): faster than the CUTLASS 128x256 cooperative
kernel on 9 of the 10 LLM-suite shapes with M >= 2048 (by 1-8%).""" + _SPLIT_K, split_k=True),
    *[Handwritten((128, n, 64), struct_name=f"Handwritten_6_WgmmaTma_128x{n}x64",
                  config_name=f"6_wgmma_tma_128x{n}x64_4s", role="product", arch=90,
                  why=_FITTED_N, split_k=n == 128)
      for n in (128, 144, 160, 176, 192, 208, 224, 240)],
    *[Handwritten((m, 128, 64), struct_name=f"Handwritten_6_WgmmaTmaSwapAB_{m}x128x64",
                  config_name=f"6_wgmma_tma_swapab_{m}x128x64_4s", role="product", arch=90,
                  why=_FITTED_M, split_k=m == 256)
      for m in (144, 160, 192, 208, 224, 240, 256)],
    Handwritten((0, 0, 0), struct_name="Handwritten_SkinnyM", config_name="skinny_m_streaming", role="product",
                why="""Not a ladder step: the streaming kernel for few rows (gemm_skinny_m_sm80.cu). B read
once in 16-byte loads, K split across blocks where an estimate of the launch says it pays
(streaming_slab, handwritten.cuh), with a deterministic two-pass sum; rr and rc, fp32
(also registered for TF32: full fp32 products), bf16, f16; cr and cc (a column-major A, staged
like a row-major one) for the 32-bit precisions, whose few-row products there had only 64-row
tiles (TF32 long reductions 0.35-0.7x torch.mm, H200 sweep); float64 in all four layouts, summed
in float64, whose few-row long reductions had only CUTLASS's DMMA tiles (0.3-0.7x torch.mm, H200
sweep). The `_a1` and `_a1_elementwise` builds
take B and D at any alignment (up to 16 rows): aligned 16-byte loads realigned in registers, or
one element per load."""),
    Handwritten((0, 0, 0), struct_name="Handwritten_SkinnyMMma", config_name="skinny_m_mma_streaming", role="product",
                why="""Not a ladder step: the tensor-core streaming kernel for 16-bit problems of up to 256
rows (64 to a block, several block rows beside each other sharing B through L2) and TF32 ones of
up to 16 (gemm_skinny_m_mma_sm80.cu). 32 columns of D per block, K split over its 8 warps, each
streaming B through its own cp.async ring into mma.sync; rr and rc, and
16-bit cr and cc (a column-major A through ldmatrix.trans): in those two layouts the sweep's best
built kernel reached 0.88-0.91x torch.mm on aligned 16-bit problems of up to 64 rows under 10
MFLOP, against 1.05x in rr and rc where this kernel was the fastest on 182 of 202 (bf16, H100,
2026-11-24). More than 64 rows: on aligned bf16 problems of 65-256 rows under 0.1 GFLOP the
best built kernel reached 0.86-0.91x torch.mm (same sweep), where the tile kernels' prologues
cost more than the product. The `_a1` builds (16-bit, every layout) take operands at any
alignment: element-pair loads staged through registers, 32 rows to a block row; on the sweep's
small unaligned 16-bit problems the best built kernel before them, CUTLASS 2.x's register-staged
64x64 alignment-1 tile, took 6-10 us where torch.mm's f16 took 4.5-7 (H100, 2026-11-24). Every
build also runs batches (bmm), the batch along the grid's second dimension: few-row batches were
the sweep's worst problems (an unaligned f16 batch of 9 products of 3x1442x1 at 0.20x torch.bmm)."""),
    Handwritten((0, 0, 0), struct_name="Handwritten_SkinnyNMma", config_name="skinny_n_mma_streaming", role="product",
                why="""Not a ladder step: the same tensor-core streaming kernel on the transposed problem
D^T = B^T A^T, for 16-bit outputs of up to 256 columns (gemm_skinny_m_mma_sm80.cu, skinny_n_info): the
operands exchange roles and flip layouts, and the result is stored transposed, down D's rows.
Every layout, at any alignment too (`_a1`), and batches. On aligned 16-bit problems of more than
64 rows with at most 64 columns the sweep's best built kernel reached 0.90-0.92x torch.mm (bf16
and f16, H100, 2026-11-25; the tile kernels cover them with mostly empty 64- or 128-column
tiles)."""),
]

CONFIGS: list[Config] = [*SM90, *SM80, *HANDWRITTEN]


def check() -> None:
    """Names and ids are unique (a derived name that collides means two rows describe one config)."""
    for attr in ("struct", "id"):
        seen = [getattr(c, attr) for c in CONFIGS]
        dupes = {s for s in seen if seen.count(s) > 1}
        assert not dupes, f"duplicate config {attr}: {sorted(dupes)}"
    names = [(c.family, c.name) for c in CONFIGS]
    assert len(set(names)) == len(names), "duplicate config names"


check()
