"""Reliability on the GPU: seeded fuzzing against float64 and torch.mm, concurrency across
threads and streams, no memory growth, more bad input, and a second GPU where there is one."""

import threading

import pytest
import torch

import cutlass_ops
from cutlass_ops import fuzz
from mm_testing import assert_matches_reference, capture_error, matrix

pytestmark = pytest.mark.gpu


def kernels_here():
    return [k.name for k in cutlass_ops.list_kernels(torch.cuda.get_device_capability())]


@pytest.mark.fuzz
@pytest.mark.parametrize("seed", range(3))
def test_fuzz(seed):
    failures = []
    for case in fuzz.generate(150, seed=1000 + seed, kernels=kernels_here()):
        why = fuzz.run_case(case)
        if why is not None:
            failures.append(f"{why}\n  replay: python -m cutlass_ops fuzz --replay '{case.line()}'")
    assert not failures, "\n".join(failures[:10])


def test_curated_edge_cases():
    failures = [(c, why) for c in fuzz.curated() if (why := fuzz.run_case(c)) is not None]
    assert not failures, "\n".join(f"{why}: {c.line()}" for c, why in failures[:10])


def test_threads_and_streams():
    """8 threads on 4 streams issue mixed shapes and dtypes at once; every result is checked."""
    streams = [torch.cuda.Stream() for _ in range(4)]
    errors = []
    shapes = [(257, 129, 64), (64, 512, 300), (1000, 17, 33), (128, 128, 128), (31, 777, 100)]
    dtypes = [("bf16", torch.bfloat16), ("f16", torch.float16), ("f32", torch.float32)]

    def worker(t):
        try:
            stream = streams[t % 4]
            with torch.cuda.stream(stream):
                for i in range(12):
                    m, n, k = shapes[(t + i) % len(shapes)]
                    name, dtype = dtypes[(t * 7 + i) % len(dtypes)]
                    a, b = matrix(m, k, dtype), matrix(k, n, dtype, "c" if i % 2 else "r")
                    ours = cutlass_ops.mm(a, b)
                    theirs = torch.mm(a, b)
                    stream.synchronize()
                    assert_matches_reference(ours, a, b, name, theirs=theirs, context=f"thread {t} call {i}")
        except Exception as error:  # noqa: BLE001
            errors.append(error)

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors, errors[:3]


def test_no_memory_growth_over_10000_calls():
    a, b = matrix(64, 48, torch.bfloat16), matrix(48, 80, torch.bfloat16)
    out = torch.empty(64, 80, dtype=torch.bfloat16, device="cuda")
    a_big, b_big = matrix(1024, 1024, torch.float16), matrix(1024, 1024, torch.float16)
    for _ in range(50):  # warm-up: the caching allocator's blocks for these sizes exist now
        cutlass_ops.mm(a, b)
        cutlass_ops.mm(a_big, b_big)
    torch.cuda.synchronize()
    before = torch.cuda.memory_allocated()
    for i in range(10_000):
        cutlass_ops.mm(a, b) if i % 2 else cutlass_ops.mm(a, b, out=out)
        if i % 100 == 0:
            cutlass_ops.mm(a_big, b_big)
    torch.cuda.synchronize()
    assert torch.cuda.memory_allocated() == before


def test_meta_and_cuda_mixed_like_torch_mm():
    a, b = matrix(8, 8, torch.float32), torch.empty(8, 8, device="meta")
    for args in ((a, b), (b, a)):
        theirs = capture_error(lambda: torch.mm(*args))
        ours = capture_error(lambda: cutlass_ops.mm(*args))
        assert ours[0] is theirs[0] or (theirs[0] is None and ours[0] is RuntimeError), (ours, theirs)
        if ours[0] is None and theirs[0] is None:  # both return: the same kind of result
            mine, torchs = cutlass_ops.mm(*args), torch.mm(*args)
            assert (mine.device, mine.shape, mine.dtype) == (torchs.device, torchs.shape, torchs.dtype)


two_gpus = pytest.mark.skipif(not torch.cuda.is_available() or torch.cuda.device_count() < 2, reason="needs two GPUs")


@two_gpus
def test_second_gpu_and_mixed_gpus():
    torch.cuda.set_device(0)
    a = matrix(300, 200, torch.bfloat16, device="cuda:1")
    b = matrix(200, 100, torch.bfloat16, device="cuda:1")
    ours = cutlass_ops.mm(a, b)
    assert ours.device == torch.device("cuda:1")
    assert torch.cuda.current_device() == 0  # the call left the current device as it was
    assert_matches_reference(ours, a, b, "bf16")
    # out= on the operands' GPU is written there; on the other GPU, torch's error and out untouched.
    out = torch.full((300, 100), float("nan"), dtype=torch.bfloat16, device="cuda:1")
    assert cutlass_ops.mm(a, b, out=out) is out
    assert_matches_reference(out, a, b, "bf16")
    elsewhere = torch.full((300, 100), 7.0, dtype=torch.bfloat16, device="cuda:0")
    assert capture_error(lambda: cutlass_ops.mm(a, b, out=elsewhere)) == capture_error(
        lambda: torch.mm(a, b, out=elsewhere.clone()))
    assert bool((elsewhere == 7.0).all())
    other = b.to("cuda:0")
    assert capture_error(lambda: cutlass_ops.mm(a, other)) == capture_error(lambda: torch.mm(a, other))
    assert capture_error(lambda: cutlass_ops.mm(other.t(), a.t())) == capture_error(lambda: torch.mm(other.t(), a.t()))


@two_gpus
def test_second_gpu_in_dispatcher_mode_graph_capture_and_plans():
    torch.cuda.set_device(0)
    a = matrix(257, 1024, torch.bfloat16, device="cuda:1")
    b = matrix(1024, 768, torch.bfloat16, device="cuda:1")
    # Dispatcher mode: torch.mm on the second GPU runs on cutlass_ops there.
    cutlass_ops.reset_stats()
    with cutlass_ops.use_cutlass():
        ours = torch.mm(a, b)
    assert ours.device == torch.device("cuda:1") and cutlass_ops.stats()["cutlass"] == 1
    assert_matches_reference(ours, a, b, "bf16")
    # CUDA-graph capture on the second GPU while the first is current elsewhere in the program.
    out = torch.empty(257, 768, dtype=torch.bfloat16, device="cuda:1")
    with torch.cuda.device(1):
        cutlass_ops.mm(a, b, out=out)  # warm-up outside capture (plan, workspace)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            cutlass_ops.mm(a, b, out=out)
    out.zero_()
    graph.replay()
    torch.cuda.synchronize(1)
    assert_matches_reference(out, a, b, "bf16")
    # The plan is the second GPU's own: explain() plans for the tensors' device, with that
    # device's calibration (a GPU of the same kind as the first one shares its calibration data).
    plan = cutlass_ops.explain(a, b)
    assert plan.device.name == torch.cuda.get_device_name(1), plan.device
    assert plan.kernel is not None
