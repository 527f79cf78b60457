"""CUTLASS 2.x's stream-K launches: without a flag memset (csrc/cutlass2x/stream_k_flags.h), and
balanced over one SM fewer where CUTLASS would remap its block indices (Sm80Gemm::make_arguments).

Its CTAs that share a tile synchronise through flags that every completed launch leaves zero, so
one zeroed buffer per stream serves every stream-K launch on it; under stream capture the flags
are zeroed in the call's workspace as CUTLASS does. Checked against float64: launch after launch
of different flag counts on one stream, on two streams at once, in a captured graph replayed
between eager launches; and that an eager launch runs no memset. Where CUTLASS, balanced over the
whole device, would remap its block indices (several CTAs per SM, over two waves of blocks) and pad
its grid to four waves, the launch's grid is unpadded and its results right."""

import json
import tempfile

import pytest
import torch
from torch.profiler import ProfilerActivity, profile

import cutlass_ops
from mm_testing import assert_matches_reference, matrix, planned

pytestmark = pytest.mark.gpu

DTYPES = {"f32": torch.float32, "bf16": torch.bfloat16, "f64": torch.float64}
# Problems whose CUTLASS 2.x stream-K candidates split tiles between CTAs (ragged waves, long K).
PROBLEMS = [("f32", "rr", 5, 3072, 1024), ("f32", "rc", 87, 41, 10677), ("bf16", "rr", 1000, 1000, 4096),
            ("bf16", "cc", 300, 520, 9000), ("f64", "rc", 87, 41, 10677)]


def stream_k_candidate(a, b):
    """The first CUTLASS 2.x stream-K candidate explain() lists for mm(a, b), or None."""
    for c in cutlass_ops.explain(a, b).candidates:
        if c.kernel.startswith("cutlass2x_") and c.decomposition == "stream-k" and c.variant == "in-place":
            return c
    return None


def operands(dtype, layout, m, n, k):
    return matrix(m, k, DTYPES[dtype], layout[0]), matrix(k, n, DTYPES[dtype], layout[1])


def pinned_problems():
    """(dtype, a, b, candidate) for every problem of PROBLEMS with a stream-K candidate."""
    out = []
    for dtype, layout, m, n, k in PROBLEMS:
        a, b = operands(dtype, layout, m, n, k)
        c = stream_k_candidate(a, b)
        if c is not None:
            out.append((dtype, a, b, c))
    return out


@pytest.fixture(autouse=True)
def ieee_fp32(tf32_matmul):
    tf32_matmul(False)


def run_pinned(a, b, c, stream=None):
    with planned(a, b, c.kernel, "stream-k"):
        with torch.cuda.stream(stream or torch.cuda.current_stream()):
            return cutlass_ops.mm(a, b)


def test_launch_after_launch_on_one_stream():
    """Problems of different flag counts, one after another and round again: each launch finds
    the flags the one before it left zero."""
    cases = pinned_problems()
    assert cases, "no CUTLASS 2.x stream-K candidate for the test problems"
    for _ in range(3):
        for dtype, a, b, c in cases:
            out = run_pinned(a, b, c)
            assert_matches_reference(out, a, b, dtype, context=c.kernel)


def test_two_streams_at_once():
    """Launches on two side streams, queued back to back without waiting: each stream its own flags."""
    cases = pinned_problems()
    streams = [torch.cuda.Stream(), torch.cuda.Stream()]
    results = []
    torch.cuda.synchronize()
    for _ in range(4):
        for i, (dtype, a, b, c) in enumerate(cases):
            s = streams[i % 2]
            s.wait_stream(torch.cuda.current_stream())
            out = run_pinned(a, b, c, stream=s)
            out.record_stream(s)
            results.append((out, s, dtype, a, b, c))
    torch.cuda.synchronize()
    for out, _, dtype, a, b, c in results:
        assert_matches_reference(out, a, b, dtype, context=c.kernel)


def test_captured_graph_between_eager_launches():
    """Captured, a stream-K call zeroes its flags in its own workspace (a graph may replay on
    another stream); its replays and eager launches between them are all right."""
    dtype, a, b, c = pinned_problems()[0]
    with planned(a, b, c.kernel, "stream-k"):
        cutlass_ops.mm(a, b)  # warm up outside the capture
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph, stream=side):
            captured = cutlass_ops.mm(a, b)
        for _ in range(3):
            graph.replay()
            eager = cutlass_ops.mm(a, b)
            torch.cuda.synchronize()
            assert_matches_reference(captured, a, b, dtype, context=f"{c.kernel} (graph)")
            assert_matches_reference(eager, a, b, dtype, context=f"{c.kernel} (eager)")


def test_an_eager_launch_runs_no_memset():
    """After a stream's first stream-K launch (which zeroes its flag buffer once), the launches
    run the GEMM kernel alone."""
    dtype, a, b, c = pinned_problems()[0]
    with planned(a, b, c.kernel, "stream-k"):
        cutlass_ops.mm(a, b)
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            for _ in range(5):
                cutlass_ops.mm(a, b)
            torch.cuda.synchronize()
    names = [e.name for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
    assert any("Kernel" in n or "cutlass" in n for n in names), names
    assert not any("memset" in n.lower() for n in names), names


# Balanced over all 132 SMs of an H100 or H200, CUTLASS would remap these launches' block indices
# and pad their grids to four waves (docs/findings.md, "Two launches priced as they run").
REMAPPED = [("f32", "cutlass2x_sm90_f32_rr_dmma16x8x8_64x64x32_4s_streamk_a4", (2320, 24, 768)),
            ("f32", "cutlass2x_sm90_f32_rr_dmma16x8x8_64x64x32_4s_streamk_a4", (3144, 40, 6144)),
            ("f32", "cutlass2x_sm90_f32_rr_dmma16x8x8_64x64x32_4s_streamk_a4", (100, 1600, 1600)),
            ("bf16", "cutlass2x_sm80_bf16_rr_64x64x32_4s_a4", (512, 384, 8192)),
            ("bf16", "cutlass2x_sm80_bf16_rr_64x64x32_4s_a4", (384, 448, 2048))]


def cutlass_grids(fn):
    """The grid (x, y, z) of every CUTLASS kernel `fn` launches, from torch.profiler's trace."""
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    with tempfile.NamedTemporaryFile(suffix=".json") as f:
        prof.export_chrome_trace(f.name)
        with open(f.name) as trace:
            events = json.load(trace)["traceEvents"]
    return [e["args"]["grid"] for e in events if e.get("cat") == "kernel" and "cutlass" in e["name"]]


def planned_launch(a, b, kernel, decomposition, splits=1):
    """mm(a, b) on `kernel` with `decomposition` and `splits`, after a first call (which makes the
    stream's flag buffer outside the profile): its result and the grids of its CUTLASS kernels."""
    with planned(a, b, kernel, decomposition, splits):
        cutlass_ops.mm(a, b)
        out = None

        def call():
            nonlocal out
            out = cutlass_ops.mm(a, b)

        grids = cutlass_grids(call)
    return out, grids


@pytest.mark.parametrize("dtype,kernel,shape", REMAPPED, ids=[f"{d}-{'x'.join(map(str, s))}" for d, _, s in REMAPPED])
def test_balanced_over_one_sm_fewer_where_cutlass_would_remap(dtype, kernel, shape):
    """The stream-K launch's grid holds its blocks alone (under four waves: a remapped launch
    pads to at least four), and its results match float64's."""
    if kernel not in {k.name for k in cutlass_ops.list_kernels(torch.cuda.get_device_capability())}:
        pytest.skip(f"{kernel} is not built for this GPU")
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    m, n, k = shape
    a, b = operands(dtype, "rr", m, n, k)
    out, grids = planned_launch(a, b, kernel, "stream-k")
    assert len(grids) == 1, grids
    assert grids[0][0] < 4 * sms, f"{kernel} at {shape}: grid {grids[0]} on {sms} SMs"
    assert_matches_reference(out, a, b, dtype, context=f"{kernel} {shape}")


def test_split_k_keeps_its_reduction_ctas_where_one_sm_fewer_would_drop_them():
    """bf16 1376x8x2464 "cc" split 24 on the 64x64x32 tile (5 CTAs per SM on an H100 or H200):
    528 slices, 4 waves over 132 SMs (CUTLASS adds reduction CTAs and would remap) and 5 over 131
    (it would sum the slices one after another instead: 15.2 us against 35.6 on the H200). The
    launch keeps the whole device: its grid holds reduction CTAs besides the slices, and its
    results match float64's (Sm80Gemm::initialize_balanced)."""
    kernel, splits, (m, n, k) = "cutlass2x_sm80_bf16_cc_64x64x32_4s_a2", 24, (1376, 8, 2464)
    if kernel not in {k.name for k in cutlass_ops.list_kernels(torch.cuda.get_device_capability())}:
        pytest.skip(f"{kernel} is not built for this GPU")
    from cutlass_ops import _C

    sms = torch.cuda.get_device_properties(0).multi_processor_count
    occupancy = _C.kernel_occupancy(torch.cuda.current_device())[kernel]
    slices = -(-m // 64) * -(-n // 64) * splits
    waves = lambda sms: -(-slices // sms)  # noqa: E731
    if not (waves(sms) < occupancy <= waves(sms - 1) and slices >= 2 * sms):
        pytest.skip(f"{slices} slices at {occupancy} CTAs per SM on {sms} SMs: one SM fewer drops no reduction CTAs")
    a, b = operands("bf16", "cc", m, n, k)
    out, grids = planned_launch(a, b, kernel, "split-k", splits)
    assert len(grids) == 1, grids
    blocks = grids[0][0] * grids[0][1] * grids[0][2]
    assert blocks > slices, f"{kernel} split {splits}: grid {grids[0]}, {slices} slices and no reduction CTAs"
    assert_matches_reference(out, a, b, "bf16", context=f"{kernel} split {splits}")
