"""Patching torch.mm and dispatcher mode, as far as they go without a GPU: originals restored
exactly, CPU tensors handed to the original functions, where the patched matmul sends each
product (fake CUDA tensors), nesting, threads, registration."""

import os
import subprocess
import sys
import threading

import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode

import cutlass_ops
from cutlass_ops import patch


def current():
    """Each patch target as torch holds it now."""
    return {
        "torch.mm": torch.mm,
        "Tensor.mm": torch.Tensor.mm,
        "torch.matmul": torch.matmul,
        "Tensor.matmul": torch.Tensor.matmul,
        "Tensor.__matmul__": torch.Tensor.__matmul__,
        "torch.addmm": torch.addmm,
        "Tensor.addmm": torch.Tensor.addmm,
        "F.linear": torch.nn.functional.linear,
        "torch.bmm": torch.bmm,
        "Tensor.bmm": torch.Tensor.bmm,
        "torch.baddbmm": torch.baddbmm,
        "Tensor.baddbmm": torch.Tensor.baddbmm,
    }


ORIGINALS = current()  # at import, before any test patches
MATMUL = {"torch.mm", "Tensor.mm", "torch.matmul", "Tensor.matmul", "Tensor.__matmul__"}
LINEAR = {"torch.mm", "Tensor.mm", "torch.addmm", "Tensor.addmm", "F.linear"}
BMM = {"torch.mm", "Tensor.mm", "torch.bmm", "Tensor.bmm", "torch.baddbmm", "Tensor.baddbmm"}


@pytest.fixture(autouse=True)
def clean_state():
    cutlass_ops.unpatch_torch()
    cutlass_ops.disable()
    yield
    cutlass_ops.unpatch_torch()
    cutlass_ops.disable()
    assert current() == ORIGINALS


def test_patch_and_unpatch_restore_the_exact_originals():
    cutlass_ops.patch_torch()
    assert torch.mm is not ORIGINALS["torch.mm"] and torch.Tensor.mm is not ORIGINALS["Tensor.mm"]
    assert torch.matmul is ORIGINALS["torch.matmul"]  # only with matmul=True
    assert cutlass_ops.patched_targets() == {"torch.mm", "Tensor.mm"}
    cutlass_ops.patch_torch()  # idempotent: no double wrapping
    cutlass_ops.unpatch_torch()
    assert current() == ORIGINALS
    cutlass_ops.patch_torch(matmul=True)
    assert cutlass_ops.patched_targets() == MATMUL
    cutlass_ops.unpatch_torch()
    assert current() == ORIGINALS
    cutlass_ops.patch_torch(linear=True)
    assert cutlass_ops.patched_targets() == LINEAR
    assert torch.nn.functional.linear is not ORIGINALS["F.linear"] and torch.addmm is not ORIGINALS["torch.addmm"]
    cutlass_ops.patch_torch(matmul=True, linear=True)
    assert cutlass_ops.patched_targets() == MATMUL | LINEAR
    assert torch.bmm is ORIGINALS["torch.bmm"]  # only with bmm=True
    cutlass_ops.unpatch_torch()
    assert current() == ORIGINALS
    cutlass_ops.patch_torch(bmm=True)
    assert cutlass_ops.patched_targets() == BMM
    assert all(current()[name] is not ORIGINALS[name] for name in BMM)
    assert torch.matmul is ORIGINALS["torch.matmul"] and torch.addmm is ORIGINALS["torch.addmm"]
    patched_bmm = torch.bmm
    cutlass_ops.patch_torch(bmm=True)  # idempotent
    assert torch.bmm is patched_bmm
    cutlass_ops.patch_torch(matmul=True)  # adds to what is patched
    assert cutlass_ops.patched_targets() == BMM | MATMUL
    cutlass_ops.unpatch_torch()
    assert current() == ORIGINALS
    cutlass_ops.patch_torch(matmul=True, linear=True, bmm=True)
    assert cutlass_ops.patched_targets() == set(ORIGINALS)
    cutlass_ops.unpatch_torch()
    assert current() == ORIGINALS


def test_linear_and_addmm_patches_hand_cpu_tensors_to_torch():
    x, w, b = torch.randn(3, 5, 7), torch.randn(4, 7), torch.randn(4)
    m1, m2 = torch.randn(3, 7), torch.randn(7, 4)
    expected_linear = torch.nn.functional.linear(x, w, b)
    expected_addmm = torch.addmm(b, m1, m2, beta=0.5, alpha=2.0)
    module = torch.nn.Linear(7, 4)
    expected_module = module(x)
    cutlass_ops.reset_stats()
    with cutlass_ops.patched(linear=True):
        assert torch.equal(torch.nn.functional.linear(x, w, b), expected_linear)
        assert torch.equal(module(x), expected_module)  # nn.Linear calls F.linear
        assert torch.equal(torch.addmm(b, m1, m2, beta=0.5, alpha=2.0), expected_addmm)
        assert torch.equal(b.expand(3, 4).clone().addmm(m1, m2, beta=0.5, alpha=2.0), expected_addmm)
    assert cutlass_ops.stats()["patch_fallbacks"] == 4


def test_cpu_tensors_go_to_the_original_functions():
    a, b = torch.randn(5, 7), torch.randn(7, 3)
    expected = a @ b
    cutlass_ops.reset_stats()
    with cutlass_ops.patched(matmul=True):
        results = [torch.mm(a, b), a.mm(b), torch.matmul(a, b), a.matmul(b), a @ b]
        out = torch.empty(5, 3)
        assert torch.mm(a, b, out=out) is out
        results.append(out)
        batched = torch.randn(2, 5, 7) @ torch.randn(2, 7, 3)  # batched: original matmul
        folded = torch.randn(2, 5, 7) @ b  # N-D by matrix, on the CPU: original
        vector = torch.randn(7) @ torch.randn(7)  # 1-D: original
    for r in results:
        assert torch.allclose(r, expected)
    assert batched.shape == (2, 5, 3) and folded.shape == (2, 5, 3) and vector.dim() == 0
    s = cutlass_ops.stats()
    assert s["cutlass"] == 0 and s["patch_fallbacks"] == 9


def test_bmm_patches_hand_cpu_tensors_to_torch():
    a, b, c = torch.randn(3, 5, 7), torch.randn(3, 7, 4), torch.randn(3, 5, 4)
    bias = torch.randn(4)
    expected_bmm = torch.bmm(a, b)
    expected_baddbmm = torch.baddbmm(c, a, b, beta=0.5, alpha=2.0)
    expected_bias = torch.baddbmm(bias, a, b)
    cutlass_ops.reset_stats()
    with cutlass_ops.patched(bmm=True):
        assert torch.equal(torch.bmm(a, b), expected_bmm)
        assert torch.equal(a.bmm(b), expected_bmm)
        out = torch.empty(3, 5, 4)
        assert torch.bmm(a, b, out=out) is out and torch.equal(out, expected_bmm)
        assert torch.equal(torch.baddbmm(c, a, b, beta=0.5, alpha=2.0), expected_baddbmm)
        assert torch.equal(c.baddbmm(a, b, beta=0.5, alpha=2.0), expected_baddbmm)
        assert torch.equal(torch.baddbmm(bias, a, b), expected_bias)
        out = torch.empty(0)
        assert torch.baddbmm(c, a, b, beta=0.5, alpha=2.0, out=out) is out and torch.equal(out, expected_baddbmm)
        with pytest.raises(RuntimeError, match="batch1 must be a 3D tensor"):  # torch's own error
            torch.bmm(torch.randn(5, 7), b)
        with pytest.raises(TypeError, match="must be Tensor"):
            torch.bmm(a, 3)
    s = cutlass_ops.stats()
    assert s["cutlass"] == 0 and s["patch_fallbacks"] == 9


def test_batched_matmul_on_cpu_goes_to_the_original():
    cutlass_ops.reset_stats()
    pairs = [(torch.randn(2, 5, 7), torch.randn(2, 7, 3)),  # batched by batched
             (torch.randn(2, 1, 5, 7), torch.randn(1, 3, 7, 4)),  # broadcast batches
             (torch.randn(5, 7), torch.randn(2, 7, 3)),  # matrix by batch
             (torch.randn(7), torch.randn(2, 7, 3))]  # vector by batch
    expected = [torch.matmul(a, b) for a, b in pairs]
    with cutlass_ops.patched(matmul=True, bmm=True):
        got = [a @ b for a, b in pairs]
    for g, e in zip(got, expected):
        assert torch.equal(g, e)
    assert cutlass_ops.stats()["patch_fallbacks"] == len(pairs)


def _fake_cuda(*shape, dtype=torch.bfloat16, strides=None):
    """A tensor that says it lives on the GPU, with no GPU: FakeTensorMode's."""
    if strides is None:
        return torch.empty(shape, dtype=dtype, device="cuda")
    return torch.empty_strided(shape, strides, dtype=dtype, device="cuda")


MATMUL_PATHS = {
    # case: (a builder of the operands, how the patched matmul runs the product)
    "matrix @ matrix": (lambda: (_fake_cuda(5, 7), _fake_cuda(7, 3)), "mm"),
    "3d @ matrix": (lambda: (_fake_cuda(2, 5, 7), _fake_cuda(7, 3)), "fold"),
    "4d @ matrix": (lambda: (_fake_cuda(2, 3, 5, 7), _fake_cuda(7, 3)), "fold"),
    "permuted 3d @ matrix": (lambda: (_fake_cuda(2, 5, 7, strides=(7, 14, 1)), _fake_cuda(7, 3)), "matmul"),
    "batched @ batched": (lambda: (_fake_cuda(2, 5, 7), _fake_cuda(2, 7, 3)), "matmul"),
    "attention scores": (lambda: (_fake_cuda(2, 4, 16, 8), _fake_cuda(2, 4, 16, 8).transpose(-1, -2)), "matmul"),
    "broadcast 4d": (lambda: (_fake_cuda(2, 1, 5, 7), _fake_cuda(1, 3, 7, 4)), "matmul"),
    "5d": (lambda: (_fake_cuda(2, 3, 1, 5, 7), _fake_cuda(2, 3, 4, 7, 6)), "matmul"),
    "matrix @ batched": (lambda: (_fake_cuda(5, 7), _fake_cuda(2, 7, 3)), "matmul"),
    "vector @ batched": (lambda: (_fake_cuda(7), _fake_cuda(2, 7, 3)), "matmul"),
    "batched @ vector": (lambda: (_fake_cuda(2, 5, 7), _fake_cuda(7)), "matmul"),
    "vector @ vector": (lambda: (_fake_cuda(7), _fake_cuda(7)), "original"),
    "matrix @ vector": (lambda: (_fake_cuda(5, 7), _fake_cuda(7)), "original"),
    "vector @ matrix": (lambda: (_fake_cuda(7), _fake_cuda(7, 3)), "original"),
    "integer batches": (lambda: (_fake_cuda(2, 5, 7, dtype=torch.int32), _fake_cuda(2, 7, 3, dtype=torch.int32)),
                        "original"),
    "complex batches": (lambda: (_fake_cuda(2, 5, 7, dtype=torch.complex64),
                                 _fake_cuda(2, 7, 3, dtype=torch.complex64)), "original"),
    "cuda @ cpu": (lambda: (_fake_cuda(2, 5, 7), torch.empty(2, 7, 3, dtype=torch.bfloat16)), "original"),
}


@pytest.mark.parametrize("case", list(MATMUL_PATHS))
def test_patched_matmul_path_for_each_kind_of_product(case):
    """Matrices go to cutlass_ops.mm, products torch.matmul folds into one mm to cutlass_ops.mm
    on the folded rows, any other product with a 3-D or larger operand to cutlass_ops.matmul;
    vectors and matrices alone and what cutlass_ops does not compute stay with torch.matmul."""
    from torch._subclasses.fake_tensor import FakeTensorMode

    build, expected = MATMUL_PATHS[case]
    with FakeTensorMode():
        a, b = build()
        assert patch._matmul_path(a, b) == expected
        if expected != "original":
            assert patch._matmul_path(a, b, out=_fake_cuda(1)) == ("mm" if expected == "mm" else "original")


def test_patched_bmm_sends_fake_cuda_batches_to_cutlass_ops():
    """With fake CUDA tensors the cutlass_ops ops run their meta kernels: eligible calls reach
    them (no fallback counted) and give torch's shapes; CPU and integer batches do not."""
    from torch._subclasses.fake_tensor import FakeTensorMode

    cutlass_ops.reset_stats()
    with cutlass_ops.patched(matmul=True, bmm=True), FakeTensorMode():
        a, b = _fake_cuda(4, 5, 7), _fake_cuda(4, 7, 3)
        assert torch.bmm(a, b).shape == (4, 5, 3)
        assert a.bmm(b.transpose(1, 2).contiguous().transpose(1, 2)).shape == (4, 5, 3)
        assert torch.baddbmm(_fake_cuda(3), a, b, beta=0.5).shape == (4, 5, 3)
        assert _fake_cuda(4, 5, 3).baddbmm(a, b).shape == (4, 5, 3)
        assert (_fake_cuda(2, 1, 5, 7) @ _fake_cuda(1, 3, 7, 4)).shape == (2, 3, 5, 4)
        assert torch.matmul(_fake_cuda(7), _fake_cuda(2, 7, 3)).shape == (2, 3)
        assert cutlass_ops.stats()["patch_fallbacks"] == 0
        assert torch.bmm(a.int(), b.int()).shape == (4, 5, 3)
        assert cutlass_ops.stats()["patch_fallbacks"] == 1


class _AtenOps(TorchDispatchMode):
    """Records the aten ops a call runs."""

    def __init__(self):
        super().__init__()
        self.ops = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.ops.append(func.overloadpacket.__name__)
        return func(*args, **(kwargs or {}))


def _torch_folds(a, b) -> bool:
    """Whether torch.matmul ran the product as one mm (not bmm)."""
    with _AtenOps() as recorder:
        torch.matmul(a, b)
    return "mm" in recorder.ops and "bmm" not in recorder.ops


@pytest.mark.parametrize("case", ["3d", "4d", "strided columns", "transposed rows", "permuted batch",
                                  "permuted batch, grad", "empty", "matrix", "batched", "vector"])
def test_matmul_folds_where_torch_matmul_does(case):
    """The patched matmul runs as one mm exactly the N-D by matrix products that torch.matmul
    runs as one mm (ATen's should_fold), checked against torch.matmul's own choice."""
    w = torch.randn(7, 3)
    a, b = {
        "3d": (torch.randn(2, 5, 7), w),
        "4d": (torch.randn(2, 3, 5, 7), w),
        "strided columns": (torch.randn(2, 5, 14)[..., ::2], w),  # batch dims merge
        "transposed rows": (torch.randn(2, 7, 5).transpose(1, 2), w),  # batch and rows do not
        "permuted batch": (torch.randn(5, 2, 7).transpose(0, 1), w),
        "permuted batch, grad": (torch.randn(5, 2, 7).transpose(0, 1), w.clone().requires_grad_()),
        "empty": (torch.randn(0, 5, 7).transpose(0, 1), w),
        "matrix": (torch.randn(5, 7), w),  # a plain mm, not a fold
        "batched": (torch.randn(2, 5, 7), torch.randn(2, 7, 3)),
        "vector": (torch.randn(2, 5, 7), torch.randn(7)),
    }[case]
    expected = _torch_folds(a, b) if a.dim() >= 3 else False
    assert patch._folds_into_mm(a, b) == expected
    assert expected == (case not in ("transposed rows", "permuted batch", "matrix", "batched", "vector"))


def test_patched_functions_keep_torch_errors():
    with cutlass_ops.patched(matmul=True):
        with pytest.raises(RuntimeError, match="shapes cannot be multiplied"):
            torch.mm(torch.randn(2, 3), torch.randn(4, 5))
        assert torch.Tensor.__matmul__(torch.randn(2, 2), "x") is NotImplemented


def test_nested_patched_blocks_restore_the_outer_state():
    with cutlass_ops.patched():
        with cutlass_ops.patched(matmul=True):
            assert cutlass_ops.patched_targets() == MATMUL
        assert cutlass_ops.patched_targets() == {"torch.mm", "Tensor.mm"}
        with cutlass_ops.patched():
            pass
        assert cutlass_ops.patched_targets() == {"torch.mm", "Tensor.mm"}
    assert current() == ORIGINALS


def test_patching_is_thread_safe():
    a, b = torch.randn(16, 16), torch.randn(16, 16)
    expected = a @ b
    errors = []
    stop = threading.Event()

    def worker():
        try:
            while not stop.is_set():
                assert torch.allclose(torch.mm(a, b), expected)
                assert torch.allclose(a @ b, expected)
        except Exception as error:  # noqa: BLE001
            errors.append(error)

    def toggler():
        for i in range(200):
            with cutlass_ops.patched(matmul=i % 2 == 0):
                pass
            cutlass_ops.patch_torch()
            cutlass_ops.unpatch_torch()

    workers = [threading.Thread(target=worker) for _ in range(4)]
    togglers = [threading.Thread(target=toggler) for _ in range(2)]
    for t in workers + togglers:
        t.start()
    for t in togglers:
        t.join()
    stop.set()
    for t in workers:
        t.join()
    assert not errors
    assert current() == ORIGINALS


def cuda_kernel_of(op):
    return [line for line in torch._C._dispatch_dump(op).splitlines() if line.startswith("CUDA:")][0]


OVERRIDDEN = ["aten::mm", "aten::mm.out", "aten::addmm", "aten::addmm.out", "aten::_addmm_activation",
              "aten::_addmm_activation.out", "aten::bmm", "aten::bmm.out", "aten::baddbmm", "aten::baddbmm.out"]


def cpu_kernel_of(op):
    return [line for line in torch._C._dispatch_dump(op).splitlines() if line.startswith("CPU:")][0]


def test_dispatcher_mode_registers_and_removes_the_aten_kernels():
    torch_kernels = {op: cuda_kernel_of(op) for op in OVERRIDDEN}
    cpu_kernels = {op: cpu_kernel_of(op) for op in OVERRIDDEN}
    a, b = torch.randn(4, 6), torch.randn(6, 2)
    x, y = torch.randn(3, 4, 6), torch.randn(3, 6, 2)
    cutlass_ops.enable()
    assert cutlass_ops.enabled()
    for op in OVERRIDDEN:
        assert "aten_override.cpp" in cuda_kernel_of(op), op
    cutlass_ops.enable()  # idempotent
    # CPU is not overridden: its kernels are torch's, and its products are right.
    assert {op: cpu_kernel_of(op) for op in OVERRIDDEN} == cpu_kernels
    torch.testing.assert_close(a @ b, (a.double() @ b.double()).float())
    torch.testing.assert_close(x @ y, (x.double() @ y.double()).float())
    cutlass_ops.disable()
    assert not cutlass_ops.enabled()
    assert {op: cuda_kernel_of(op) for op in OVERRIDDEN} == torch_kernels


def test_use_cutlass_nests_and_restores():
    with cutlass_ops.use_cutlass():
        with cutlass_ops.use_cutlass():
            assert cutlass_ops.enabled()
        assert cutlass_ops.enabled()
    assert not cutlass_ops.enabled()
    cutlass_ops.enable()
    with cutlass_ops.use_cutlass():
        pass
    assert cutlass_ops.enabled()  # it was on before the block


def test_stats_and_logging_switches():
    cutlass_ops.reset_stats()
    s = cutlass_ops.stats()
    assert s == {"cutlass": 0, "kernels": {}, "ops": {"mm": 0, "addmm": 0, "linear": 0, "bmm": 0, "baddbmm": 0},
                 "torch_mm": {"complex": 0, "no_kernel": 0}, "no_work": 0, "patch_fallbacks": 0}
    cutlass_ops.set_logging(True)
    assert patch._C.logging()
    cutlass_ops.set_logging(False)
    assert not patch._C.logging()


def test_logging_adds_a_stderr_handler_only_where_none_would_print():
    """set_logging(True) in a program that configured no logging adds one handler writing to
    stderr (once, however often it is called); where the program configured logging, none."""
    code = """
import logging, sys
configured = sys.argv[1] == "configured"
if configured:
    logging.basicConfig(level=logging.WARNING)
import cutlass_ops
log = logging.getLogger("cutlass_ops")
cutlass_ops.set_logging(True)
cutlass_ops.set_logging(True)
cutlass_ops.set_logging(False)
assert log.level == logging.INFO, log.level
assert len(log.handlers) == (0 if configured else 1), log.handlers
log.info("mm 1x2x3 probe")
"""
    for mode in ("bare", "configured"):
        env = {k: v for k, v in os.environ.items() if k != "CUTLASS_OPS_LOG"}
        result = subprocess.run([sys.executable, "-c", code, mode], env=env, capture_output=True, text=True,
                                timeout=120)
        assert result.returncode == 0, result.stderr
        assert ("[cutlass_ops] mm 1x2x3 probe" in result.stderr) == (mode == "bare"), (mode, result.stderr)
        assert ("INFO:cutlass_ops:mm 1x2x3 probe" in result.stderr) == (mode == "configured"), (mode, result.stderr)
