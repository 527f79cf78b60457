"""Dispatch on a GPU: the M sweep, shapes around tile and wave boundaries, every K decomposition
of every kernel that has one, 3xTF32, the cost model's live predictions, and the autotuner and
tuning table's round trip."""

import json

import pytest
import torch

import cutlass_ops
from cutlass_ops import tuning
from cutlass_ops.testing import rel_error
from mm_testing import KERNEL_DTYPES, assert_matches_reference, capability, matrix

pytestmark = pytest.mark.gpu

_C = cutlass_ops._extension._C


def sm90():
    return torch.cuda.is_available() and torch.cuda.get_device_capability() == (9, 0)


@pytest.fixture(autouse=True)
def empty_tuning_table():
    """Each test starts and ends with no tuning entries (they would override the cost model)."""
    saved = tuning.entries()
    tuning.clear()
    yield
    tuning.clear()
    for entry in saved:
        _C.tuning_insert(entry)


@pytest.mark.parametrize("m", range(1, 131))
def test_m_sweep_bf16(m):
    # N, K as in an LLM projection: small M is the decode / small-batch case.
    a, b = matrix(m, 2048, torch.bfloat16), matrix(2048, 1536, torch.bfloat16)
    assert_matches_reference(cutlass_ops.mm(a, b), a, b, "bf16", context=f"M={m}")


@pytest.mark.parametrize("m,n,k", [
    (2048, 2048, 1024), (2048, 2304, 1024),  # 128x256 tiles: 128 | 144 against 132 SMs
    (1536, 1408, 1024), (1536, 1280, 1024),  # 128x128 tiles: 132 | 120
    (256, 448, 448), (256, 512, 512),        # stream-K: 7 | 8 K tiles of 64
    (16, 4096, 4096), (4096, 16, 4096), (256, 256, 65536),
])
@pytest.mark.parametrize("precision", ["bf16", "f16"])
def test_both_sides_of_the_16bit_thresholds(m, n, k, precision):
    dtype = torch.bfloat16 if precision == "bf16" else torch.float16
    a, b = matrix(m, k, dtype), matrix(k, n, dtype)
    assert_matches_reference(cutlass_ops.mm(a, b), a, b, precision, context=str(cutlass_ops.explain(a, b)))


@pytest.mark.parametrize("m,n,k", [(256, 256, 131072), (1024, 256, 2048), (256, 256, 120), (4096, 4096, 512)])
@pytest.mark.parametrize("dtype,precision", [(torch.float32, "f32"), (torch.float64, "f64")])
def test_split_k_thresholds(m, n, k, dtype, precision):
    a, b = matrix(m, k, dtype), matrix(k, n, dtype)
    assert_matches_reference(cutlass_ops.mm(a, b), a, b, precision, context=str(cutlass_ops.explain(a, b)))


def is_stream_k_only(kernel):
    """CUTLASS 2.x's stream-K kernels: stream-K without split-K."""
    return "stream-k" in kernel.decompositions and "split-k" not in kernel.decompositions


def decomposition_cases(cap=None):
    """(kernel, decomposition, splits) for every kernel that can divide K, on this GPU (or one of
    compute capability `cap`). CUTLASS 2.x's stream-K kernels (the stream-K configs, and the
    16-bit builds of the others, whose split-K runs on the stream-K kernel too) run stream-K by
    default, so their data-parallel mode is a case too."""
    cap = capability(cap)
    if cap is None:
        return []
    cases = []
    for k in cutlass_ops.list_kernels(cap):
        if k.fuses_epilogue:  # tuned entries serve the plain product only
            continue
        if "stream-k" in k.decompositions:
            cases.append((k, "stream-k", 1))
            if k.family == "cutlass2x":
                cases.append((k, "data-parallel", 1))
        if "split-k" in k.decompositions:
            cases += [(k, "split-k", s) for s in (2, 3, 7)]
    return cases


@pytest.mark.parametrize("kernel,decomposition,splits", decomposition_cases(),
                         ids=lambda x: getattr(x, "name", str(x)))
@pytest.mark.parametrize("m,n,k", [(200, 264, 1000), (8, 136, 4104)])
def test_every_decomposition_through_the_tuning_table(kernel, decomposition, splits, m, n, k):
    """Put (kernel, decomposition) in the table for the problem, run it, check the result."""
    precision = kernel.dtype
    if precision == "3xtf32" and (m, n, k) == (200, 264, 1000):
        # On Hopper 3xTF32 runs as IEEE fp32 below 1024 rows or columns (the presplit kernels'
        # split passes do not pay there), and the table is keyed by the precision that runs.
        m, n, k = 1024, 1040, 2000
    dtype = KERNEL_DTYPES[precision]
    a, b = matrix(m, k, dtype, kernel.layouts[0]), matrix(k, n, dtype, kernel.layouts[1])
    previous_tf32, previous_mode = torch.backends.cuda.matmul.allow_tf32, cutlass_ops.fp32_mode()
    torch.backends.cuda.matmul.allow_tf32 = precision == "tf32"
    cutlass_ops.set_fp32_mode("3xtf32" if precision == "3xtf32" else "ieee")
    try:
        plan = cutlass_ops.explain(a, b)
        # The table is keyed by the call's operands as given (not those of a variant that copies B)
        # and the kernel's precision.
        key = {**plan.tuning_key, "precision": precision}
        if plan.transposed or key["layout_a"][0] + key["layout_b"][0] != kernel.layouts or min(
                key["align"]) < min(kernel.alignment):
            pytest.skip(f"{kernel.name} does not take this problem's precision, layout or alignment "
                        f"(call: {key['precision']}, {key['layout_a']} x {key['layout_b']}, align {key['align']})")
        _C.tuning_insert({**key, "variant": "in-place", "kernel": kernel.name, "decomposition": decomposition,
                          "splits": splits})
        tuned = cutlass_ops.explain(a, b)
        assert (tuned.kernel, tuned.decomposition, tuned.splits) == (kernel.name, decomposition, splits), tuned
        out = cutlass_ops.mm(a, b)
        out_again = cutlass_ops.mm(a, b)
        assert torch.equal(out, out_again), "split-k / stream-k must be deterministic"
        torch.backends.cuda.matmul.allow_tf32 = precision == "tf32"
        assert_matches_reference(out, a, b, "f32" if precision == "3xtf32" else precision,
                                 context=f"{kernel.name} {decomposition} x{splits}")
    finally:
        torch.backends.cuda.matmul.allow_tf32 = previous_tf32
        cutlass_ops.set_fp32_mode(previous_mode)


def stream_k_only_kernels(cap=None):
    """CUTLASS 2.x's stream-K kernels (stream-K without split-K) on this GPU that run stream-K
    by default: float32 and float64 on DMMA (the 16-bit ones run it only where K is split)."""
    cap = capability(cap)
    if cap is None:
        return []
    return [k for k in cutlass_ops.list_kernels(cap)
            if is_stream_k_only(k) and k.dtype not in ("f16", "bf16")]


def forced(kernel, a, b, decomposition="stream-k", splits=1):
    """a @ b on `kernel` in `decomposition` (through a tuning-table entry, which names it),
    twice, with the same bits."""
    plan = cutlass_ops.explain(a, b)
    _C.tuning_insert({"precision": kernel.dtype, "layout_a": plan.a.layout, "layout_b": plan.b.layout,
                      "align": [plan.a.align, plan.b.align, plan.out.align],
                      "cc": plan.device.capability[0] * 10 + plan.device.capability[1],
                      "sm_count": plan.device.sm_count, "mnk": list(plan.problem), "kernel": kernel.name,
                      "decomposition": decomposition, "splits": splits})
    tuned = cutlass_ops.explain(a, b)
    assert (tuned.kernel, tuned.decomposition, tuned.splits) == (kernel.name, decomposition, splits), tuned
    out = cutlass_ops.mm(a, b)
    assert torch.equal(out, cutlass_ops.mm(a, b)), f"{decomposition} must be deterministic"
    return out


def sixteen_bit_cutlass2x_kernels(cap=None):
    cap = capability(cap)
    if cap is None:
        return []
    return [k for k in cutlass_ops.list_kernels(cap)
            if k.family == "cutlass2x" and k.dtype in ("f16", "bf16")]


@pytest.mark.parametrize("kernel", sixteen_bit_cutlass2x_kernels(), ids=lambda k: k.name)
def test_sixteen_bit_k_slices_meet_in_float32(kernel):
    """Few output tiles and a long K: the 16-bit CUTLASS 2.x kernels divide K by stream-K, or
    split-K on the stream-K kernel, whose partial tiles meet in float32, so the result is
    rounded to 16 bits once, as torch.mm's is. Serial split-K through a 16-bit D rounded every
    partial sum (16 slices: about 3x torch's error; `fuzz --seed 18` found 7x2x911 at 8x)."""
    dtype = KERNEL_DTYPES[kernel.dtype]
    m, n, k = 96, 136, 16384
    a, b = matrix(m, k, dtype, kernel.layouts[0]), matrix(k, n, dtype, kernel.layouts[1])
    ref = a.double() @ b.double()
    for decomposition, splits in (("stream-k", 1), ("split-k", 16), ("split-k", 64)):
        out = forced(kernel, a, b, decomposition, splits)
        # One rounding each: nearly every element rounds to the same 16-bit value as torch.mm's.
        context = f"{kernel.name} {decomposition} x{splits}"
        assert rel_error(out, ref) <= 1.25 * rel_error(torch.mm(a, b), ref), context
        assert_matches_reference(out, a, b, kernel.dtype, context=context)


def test_unaligned_tiny_sixteen_bit_is_as_accurate_as_torch():
    """The fuzz case (seed 18): f16 7x2x911, A and B with odd leading dims, on the SIMT kernel."""
    a = matrix(7, 911, torch.float16)
    b = matrix(2, 911, torch.float16).t()
    assert_matches_reference(cutlass_ops.mm(a, b), a, b, "f16", context=str(cutlass_ops.explain(a, b)))


@pytest.mark.parametrize("name", ["f16", "bf16"])
@pytest.mark.parametrize("layout_b", ["r", "c"])
@pytest.mark.parametrize("m,n,k", [(127, 8191, 1021), (300, 500, 2001), (33, 65, 3001)])
def test_mid_size_odd_sixteen_bit_runs_in_place_as_accurately_as_torch(m, n, k, layout_b, name):
    """Odd leading dims: whatever the cost model runs (staged copies, or the two-stage tensor-op
    kernel in place with its K slices meeting in float32) is as accurate as torch."""
    a = matrix(m, k, KERNEL_DTYPES[name])
    b = matrix(k, n, KERNEL_DTYPES[name], layout_b)
    plan = cutlass_ops.explain(a, b)
    assert_matches_reference(cutlass_ops.mm(a, b), a, b, name, context=str(plan))


def test_forced_kernel_that_cannot_take_the_output_is_refused_by_name():
    """The fuzz case (seed 16): the slice-summing kernel forced on an N its float32 partials'
    TMA rows cannot hold is a ValueError from the planner, not a refusal at launch."""
    name = "cutlass3x_sm90_f16_rc_128x256x64_2x1x1_coop_splitk_sum"
    if name not in {k.name for k in cutlass_ops.list_kernels(torch.cuda.get_device_capability())}:
        pytest.skip(f"{name} does not run on this GPU")
    a, b = matrix(3829, 8, torch.float16), matrix(761, 8, torch.float16).t()
    with pytest.raises(ValueError, match="row length N a multiple of 4, the problem has N = 761"):
        cutlass_ops.mm(a, b, kernel=name)


@pytest.mark.parametrize("kernel", stream_k_only_kernels(), ids=lambda k: k.name)
def test_stream_k_over_several_ragged_waves(kernel):
    """Past one wave of tiles CUTLASS 2.x's stream-K kernel runs whole waves data-parallel and
    shares out the K iterations of the rest: 520 x 14340 is 5 x 113 = 565 tiles of 128x128,
    4.3 waves of 132 SMs, with ragged edges in every dimension (each a multiple of 4, which
    the float32 DMMA kernels' 16-byte copies need)."""
    dtype = {"f64": torch.float64}.get(kernel.dtype, torch.float32)
    m, n, k = 520, 14340, 2052
    a, b = matrix(m, k, dtype, kernel.layouts[0]), matrix(k, n, dtype, kernel.layouts[1])
    out = forced(kernel, a, b)
    assert_matches_reference(out, a, b, kernel.dtype, context=kernel.name)


def tile_order_kernels(cap=None):
    cap = capability(cap)
    if cap is None:
        return []
    return [k for k in cutlass_ops.list_kernels(cap)
            if k.orders_tiles and not k.fuses_epilogue]


@pytest.mark.parametrize("kernel", tile_order_kernels(), ids=lambda k: k.name)
def test_every_tile_order_through_the_tuning_table(kernel):
    """Each tile order a tuned entry can name walks every tile of a multi-wave problem with edges."""
    precision = kernel.dtype
    dtype = KERNEL_DTYPES[precision]
    # More tiles than SMs for every tile shape built (128x256: 17 x 9), ragged in M and N.
    # K >= 256: where 3xTF32 presplits; K x N over 2^20: a row-major TF32 B is not copied.
    m, n, k = 2056, 2104, 520
    a, b = matrix(m, k, dtype, kernel.layouts[0]), matrix(k, n, dtype, kernel.layouts[1])
    previous_tf32, previous_mode = torch.backends.cuda.matmul.allow_tf32, cutlass_ops.fp32_mode()
    torch.backends.cuda.matmul.allow_tf32 = precision == "tf32"
    cutlass_ops.set_fp32_mode("3xtf32" if precision == "3xtf32" else "ieee")
    try:
        plan = cutlass_ops.explain(a, b)
        # The call's key (the operands as given: the model's pick may be a variant that copies B,
        # whose operands' layouts are not the call's), with the forced kernel in place.
        key = {**plan.tuning_key, "variant": "in-place", "kernel": kernel.name, "decomposition": "data-parallel",
               "splits": 1}
        assert key["precision"] == precision and not plan.transposed, plan
        for raster, swizzle in (("along-m", 1), ("along-n", 2), ("along-m", 8), ("heuristic", 4)):
            _C.tuning_insert({**key, "raster": raster, "swizzle": swizzle})
            tuned = cutlass_ops.explain(a, b)
            assert (tuned.kernel, tuned.raster, tuned.swizzle) == (kernel.name, raster, swizzle), tuned
            out = torch.full((m, n), float("nan"), dtype=dtype, device="cuda")
            cutlass_ops.mm(a, b, out=out)
            assert_matches_reference(out, a, b, "f32" if precision == "3xtf32" else precision,
                                     context=f"{kernel.name} {raster} swizzle {swizzle}")
    finally:
        torch.backends.cuda.matmul.allow_tf32 = previous_tf32
        cutlass_ops.set_fp32_mode(previous_mode)
        tuning.clear()


@pytest.mark.parametrize("m,n,k,presplit", [(2048, 2048, 2048, True), (4096, 4096, 4096, True), (97, 83, 4099, False),
                                             (256, 256, 65536, False), (512, 512, 128, False)])
def test_3xtf32_is_as_accurate_as_fp32(m, n, k, presplit):
    """3xTF32 where it runs, and where it does not pay (few rows or columns; an odd K off
    Hopper's presplit; K under 256) IEEE fp32: either way no less accurate than torch's fp32.
    `presplit`: the path the shipped calibration plans (explain on meta tensors shows it)."""
    a, b = matrix(m, k, torch.float32), matrix(k, n, torch.float32)
    cutlass_ops.set_fp32_mode("3xtf32")
    try:
        ours = cutlass_ops.mm(a, b)
        plan = cutlass_ops.explain(a, b)
    finally:
        cutlass_ops.set_fp32_mode("ieee")
    assert torch.backends.cuda.matmul.allow_tf32 is False
    # Judged against float64 relative to torch.mm's IEEE fp32 error, with fp32's floor.
    assert_matches_reference(ours, a, b, "f32", context=str(plan))
    # The cost model runs 3xTF32 or IEEE fp32 (at least as accurate), whichever is cheaper; under
    # K = 256 only IEEE fp32 (planner.h, kTf32x3MinK).
    assert plan.dtype in ("3xtf32", "f32"), plan
    if k < 256:
        assert plan.dtype == "f32", plan
    # (If the model's choice moved, pick shapes where each path runs: this test is to cover both.)
    assert (plan.dtype == "3xtf32") == presplit, plan


def test_autotune_round_trip(tmp_path):
    a, b = matrix(512, 4096, torch.bfloat16), matrix(4096, 384, torch.bfloat16)
    assert not cutlass_ops.explain(a, b).tuned
    tuning.set_autotune(True)
    try:
        out = cutlass_ops.mm(a, b)
    finally:
        tuning.set_autotune(False)
    assert_matches_reference(out, a, b, "bf16")
    tuned = cutlass_ops.explain(a, b)
    assert tuned.tuned, tuned
    (entry,) = tuning.entries()
    assert entry["kernel"] == tuned.kernel and entry["us"] > 0
    assert_matches_reference(cutlass_ops.mm(a, b), a, b, "bf16", context=str(tuned))

    path = tuning.save(tmp_path / "cache.json")
    tuning.clear()
    assert not cutlass_ops.explain(a, b).tuned
    assert tuning.load(path) == 1
    assert tuning.entries() == [entry]
    assert cutlass_ops.explain(a, b).kernel == tuned.kernel

    # Stale: another device's file, or another CUTLASS's, is ignored with a warning; another
    # build's loads (an entry survives kernels added since).
    document = json.loads(path.read_text())
    tuning.clear()
    path.write_text(json.dumps({**document, "build": "0123456789abcdef"}))
    assert tuning.load(path) == 1
    for key, value in (("device", "NVIDIA Imaginary 9000"), ("cutlass", "1.0")):
        tuning.clear()
        path.write_text(json.dumps({**document, key: value}))
        with pytest.warns(tuning.TuningWarning, match="stale"):
            assert tuning.load(path) == 0
        assert tuning.entries() == []
    # A file cut off mid-write is ignored with a warning.
    path.write_text(json.dumps(document)[:-20])
    with pytest.warns(tuning.TuningWarning, match="ignoring tuning file"):
        assert tuning.load(path) == 0
    # An entry naming a kernel this build lacks is skipped, the rest load.
    bad = {**document["entries"][0], "kernel": "no_such_kernel"}
    path.write_text(json.dumps({**document, "entries": [bad, *document["entries"]]}))
    with pytest.warns(tuning.TuningWarning, match="skipped 1 of 2"):
        assert tuning.load(path) == 1


def test_autotune_skips_cuda_graph_capture():
    a, b = matrix(512, 1024, torch.bfloat16), matrix(1024, 384, torch.bfloat16)
    out = torch.empty(512, 384, dtype=torch.bfloat16, device="cuda")
    cutlass_ops.mm(a, b, out=out)  # warm-up outside capture
    graph = torch.cuda.CUDAGraph()
    tuning.set_autotune(True)
    try:
        with torch.cuda.graph(graph):
            cutlass_ops.mm(a, b, out=out)
    finally:
        tuning.set_autotune(False)
    assert tuning.entries() == []
    out.zero_()
    graph.replay()
    assert_matches_reference(out, a, b, "bf16")


@pytest.mark.parametrize("m,n,k,layout", [(257, 4096, 4096, "rc"), (1000, 1024, 3000, "rr"), (8192, 8192, 8192, "rr"),
                                          (37, 769, 2011, "rr")])
def test_the_models_pick_is_near_the_fastest_candidate_live(m, n, k, layout):
    """On the GPU, outside the sweep: the model's pick against its next few candidates, timed
    with the sweep's own method. Generous bound (the test split's figures are in RESULTS.md):
    a pick more than 1.5x the fastest of the model's top five means the model or its
    calibration is broken for this device."""
    a, b = matrix(m, k, torch.bfloat16, layout[0]), matrix(k, n, torch.bfloat16, layout[1])
    out = torch.empty(m, n, dtype=torch.bfloat16, device="cuda")
    row = _C.sweep_problem(a, b, out, 5, 3.0, 1)
    plan = cutlass_ops.explain(a, b)
    timed = {tuple(c): us for c, us, _ in row["candidates"] if us is not None}
    pick = (plan.variant, plan.kernel, plan.decomposition, plan.splits)
    top = [(c.variant, c.kernel, c.decomposition, c.splits) for c in plan.candidates[:5]]
    assert pick in timed, plan
    assert timed[pick] <= 1.5 * min(timed[c] for c in top if c in timed), (plan, timed[pick])
    assert 0.5 <= plan.predicted_us / timed[pick] <= 2.0, (plan, timed[pick])


def test_tune_api_returns_new_entries():
    new = tuning.tune([(256, 256, 8192), (64, 1024, 1024)], dtypes=["bf16", "fp32"])
    assert len(new) == 4
    assert {e["precision"] for e in new} == {"bf16", "f32"}
    a, b = matrix(256, 8192, torch.bfloat16), matrix(8192, 256, torch.bfloat16)
    assert cutlass_ops.explain(a, b).tuned
