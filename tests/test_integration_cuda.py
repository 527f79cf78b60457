"""cutlass_ops inside real PyTorch programs, on the GPU: autocast, autograd, torch.compile,
CUDA graphs, opcheck, patching and dispatcher mode, counters and logging."""

import logging
import os
import subprocess
import sys

import pytest
import torch
import torch.nn.functional as F

import cutlass_ops
from mm_testing import assert_close_to_reference, assert_matches_reference, matrix

pytestmark = pytest.mark.gpu


@pytest.fixture(autouse=True)
def clean_state():
    cutlass_ops.unpatch_torch()
    cutlass_ops.disable()
    cutlass_ops.set_logging(False)
    cutlass_ops.reset_stats()
    yield
    cutlass_ops.unpatch_torch()
    cutlass_ops.disable()
    cutlass_ops.set_logging(False)


# ---- autocast -------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype,name", [(torch.float16, "f16"), (torch.bfloat16, "bf16")])
def test_autocast_casts_float32_like_torch_mm(dtype, name):
    a, b = matrix(300, 200, torch.float32), matrix(200, 100, torch.float32)
    with torch.autocast("cuda", dtype=dtype):
        ours = cutlass_ops.mm(a, b)
        theirs = torch.mm(a, b)
    assert ours.dtype == theirs.dtype == dtype
    assert_matches_reference(ours, a.to(dtype), b.to(dtype), name, theirs=theirs)


def test_autocast_leaves_float64_and_out_alone():
    a, b = matrix(64, 32, torch.float64), matrix(32, 16, torch.float64)
    with torch.autocast("cuda", dtype=torch.bfloat16):
        assert cutlass_ops.mm(a, b).dtype == torch.float64
        a32, b32 = a.float(), b.float()
        out = torch.empty(64, 16, device="cuda")
        assert cutlass_ops.mm(a32, b32, out=out) is out  # out= calls are not autocast
        theirs = torch.mm(a32, b32, out=torch.empty(64, 16, device="cuda"))
    assert out.dtype == theirs.dtype == torch.float32
    assert_matches_reference(out, a32, b32, "f32", theirs=theirs)


# ---- autograd -------------------------------------------------------------------------------

def test_gradcheck_float64():
    a = torch.randn(7, 5, dtype=torch.float64, device="cuda", requires_grad=True)
    b = torch.randn(5, 3, dtype=torch.float64, device="cuda", requires_grad=True)
    assert torch.autograd.gradcheck(cutlass_ops.mm, (a, b))
    assert torch.autograd.gradgradcheck(cutlass_ops.mm, (a, b))


def test_backward_runs_on_cutlass_and_matches_torch():
    a = matrix(256, 128, torch.float32).requires_grad_()
    b = matrix(128, 64, torch.float32).requires_grad_()
    grad = torch.randn(256, 64, device="cuda")
    cutlass_ops.reset_stats()
    ga, gb = torch.autograd.grad(cutlass_ops.mm(a, b), (a, b), grad)
    assert cutlass_ops.stats()["cutlass"] == 3  # forward and both gradients
    ta, tb = torch.autograd.grad(torch.mm(a, b), (a, b), grad)
    assert_matches_reference(ga, grad, b.detach().t(), "f32", theirs=ta)
    assert_matches_reference(gb, a.detach().t(), grad, "f32", theirs=tb)


@pytest.mark.parametrize("a_col", [False, True])
@pytest.mark.parametrize("b_col", [False, True])
def test_backward_gives_each_input_its_layout_and_matches_torch(a_col, b_col):
    """A column-major input gets a column-major gradient, computed as the transposed product,
    as torch.mm's backward does; values as accurate as torch's."""
    m, n, k = 192, 80, 136

    a = matrix(m, k, torch.float32, "c" if a_col else "r").requires_grad_()
    b = matrix(k, n, torch.float32, "c" if b_col else "r").requires_grad_()
    grad = torch.randn(m, n, device="cuda")
    cutlass_ops.reset_stats()
    ga, gb = torch.autograd.grad(cutlass_ops.mm(a, b), (a, b), grad)
    assert cutlass_ops.stats()["cutlass"] == 3
    ta, tb = torch.autograd.grad(torch.mm(a, b), (a, b), grad)
    assert (ga.stride(), gb.stride()) == (ta.stride(), tb.stride())
    assert ga.stride() == ((1, m) if a_col else (k, 1)) and gb.stride() == ((1, k) if b_col else (n, 1))
    assert_matches_reference(ga, grad, b.detach().t(), "f32", theirs=ta)
    assert_matches_reference(gb, a.detach().t(), grad, "f32", theirs=tb)


def test_weight_used_transposed_gets_a_contiguous_grad():
    """x @ w.t(), F.linear's pattern: w.grad comes out laid out like w, as with torch.mm."""
    w = torch.nn.Parameter(matrix(96, 64, torch.float32))
    x = matrix(128, 64, torch.float32)
    grad = torch.randn(128, 96, device="cuda")
    cutlass_ops.mm(x, w.t()).backward(grad)
    assert w.grad.is_contiguous()
    assert_matches_reference(w.grad, grad.t(), x, "f32", theirs=grad.t() @ x)


class CutlassLinear(torch.nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.randn(d_out, d_in) / d_in**0.5)

    def forward(self, x):
        return cutlass_ops.mm(x, self.weight.t())


def mlp(d=256):
    return torch.nn.Sequential(CutlassLinear(d, 4 * d), torch.nn.GELU(), CutlassLinear(4 * d, d)).cuda()


def test_grad_scaler_training_step():
    torch.manual_seed(0)
    model = mlp()
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-2)
    scaler = torch.amp.GradScaler("cuda")
    x, target = torch.randn(512, 256, device="cuda"), torch.randn(512, 256, device="cuda")
    losses = []
    for _ in range(5):
        optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16):
            loss = F.mse_loss(model(x).float(), target)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        losses.append(loss.item())
    assert all(torch.isfinite(p).all() for p in model.parameters())
    assert losses[-1] < losses[0]


# ---- torch.compile, opcheck, CUDA graphs -----------------------------------------------------

def test_compile_fullgraph_function_matches_eager():
    def f(a, b, c):
        return cutlass_ops.mm(torch.relu(cutlass_ops.mm(a, b)), c) * 2

    a, b, c = matrix(128, 64, torch.bfloat16), matrix(64, 96, torch.bfloat16), matrix(96, 32, torch.bfloat16)
    compiled = torch.compile(f, fullgraph=True)
    ours = compiled(a, b, c)
    assert torch.allclose(ours.float(), f(a, b, c).float(), rtol=1e-2, atol=1e-2)
    # And as accurate as torch's own chain, both judged against float64 (eager and compiled could
    # agree on a wrong result).
    theirs = torch.mm(torch.relu(torch.mm(a, b)), c) * 2
    reference = torch.relu(a.double() @ b.double()) @ c.double() * 2
    assert_close_to_reference(ours, theirs, reference, "compiled mm(relu(mm(a, b)), c) * 2")


def test_compile_fullgraph_mlp_forward_and_backward():
    torch.manual_seed(0)
    model = mlp()
    x = torch.randn(128, 256, device="cuda")
    compiled = torch.compile(model, fullgraph=True)
    eager_out = model(x)
    eager_out.sum().backward()
    eager_grads = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    out = compiled(x)
    out.sum().backward()
    assert torch.allclose(out, eager_out, rtol=1e-4, atol=1e-4)
    for p, g in zip(model.parameters(), eager_grads):
        assert torch.allclose(p.grad, g, rtol=1e-4, atol=1e-3)


def test_compile_fullgraph_with_out():
    def f(a, b, out):
        cutlass_ops.mm(a, b, out=out)
        return out + 1

    a, b = matrix(96, 64, torch.float16), matrix(64, 80, torch.float16)
    out_eager, out_compiled = torch.empty(96, 80, dtype=torch.float16, device="cuda"), torch.empty(
        96, 80, dtype=torch.float16, device="cuda")
    expected = f(a, b, out_eager)
    got = torch.compile(f, fullgraph=True)(a, b, out_compiled)
    assert torch.equal(got, expected) and torch.equal(out_compiled, out_eager)


@pytest.mark.parametrize("requires_grad", [False, True])
def test_opcheck_on_cuda(requires_grad):
    a = matrix(64, 48, torch.float32).requires_grad_(requires_grad)
    b = matrix(48, 40, torch.float32).requires_grad_(requires_grad)
    torch.library.opcheck(torch.ops.cutlass_ops.mm.default, (a, b))
    name = "cutlass2x_sm80_f32_rr_simt_128x128x8_4s_a1"
    torch.library.opcheck(torch.ops.cutlass_ops.mm_with_kernel.default, (a, b, name))
    if not requires_grad:
        torch.library.opcheck(torch.ops.cutlass_ops.mm.out, (a, b), {"out": torch.empty(64, 40, device="cuda")})


def test_cuda_graph_capture_and_replay():
    a, b = matrix(512, 256, torch.bfloat16), matrix(256, 384, torch.bfloat16)
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for _ in range(3):  # warm up: one-time attribute setup happens outside the capture
            cutlass_ops.mm(a, b)
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = cutlass_ops.mm(a, b)
    for _ in range(3):
        a.copy_(torch.randn_like(a))
        b.copy_(torch.randn_like(b))
        graph.replay()
        torch.cuda.synchronize()
        assert_matches_reference(out, a, b, "bf16")


# ---- patching and dispatcher mode -------------------------------------------------------------

def test_patched_torch_mm_routes_cuda_to_cutlass():
    a, b = matrix(200, 100, torch.bfloat16), matrix(100, 50, torch.bfloat16)
    expected = torch.mm(a, b)
    with cutlass_ops.patched(matmul=True):
        cutlass_ops.reset_stats()
        results = [torch.mm(a, b), a.mm(b), torch.matmul(a, b), a @ b, a.matmul(b)]
        out = torch.empty(200, 50, dtype=torch.bfloat16, device="cuda")
        torch.mm(a, b, out=out)
        results.append(out)
        assert cutlass_ops.stats()["cutlass"] == 6
        w = torch.nn.Parameter(b.clone())  # parameters count as plain tensors
        results.append(a @ w)
        x, y = torch.randn(3, 8, 4, device="cuda"), torch.randn(3, 4, 5, device="cuda")
        batched = x @ y  # cutlass_ops.matmul: one bmm
        complex_ = torch.mm(a.to(torch.complex64), b.to(torch.complex64))
        s = cutlass_ops.stats()
    assert s["cutlass"] == 8 and s["patch_fallbacks"] == 1
    assert complex_.dtype == torch.complex64
    assert_matches_reference(batched, x, y, "f32", theirs=torch.bmm(x, y))
    for r in results:
        assert_matches_reference(r, a, b, "bf16", theirs=expected)


def test_patched_matmul_runs_nd_by_matrix_as_one_mm():
    """(batch, tokens, features) @ weight.t(), as transformer code writes it: torch.matmul folds
    it into one mm, and so does the patched matmul, on cutlass_ops."""
    x = torch.randn(4, 48, 64, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(96, 64, device="cuda", dtype=torch.bfloat16)
    expected = torch.matmul(x, w.t())
    with cutlass_ops.patched(matmul=True):
        results = [x @ w.t(), torch.matmul(x, w.t()), x.matmul(w.t()), x.unsqueeze(0) @ w.t()]
        s = cutlass_ops.stats()
    assert s["cutlass"] == 4 and s["patch_fallbacks"] == 0
    for r in results:
        assert r.shape[-3:] == (4, 48, 96) and r.dtype == torch.bfloat16
        assert_matches_reference(r.reshape(-1, 96), x.reshape(-1, 64), w.t(), "bf16",
                                 theirs=expected.reshape(-1, 96))


def test_patched_matmul_runs_unfoldable_products_batched_and_folds_for_grads():
    permuted = torch.randn(48, 4, 64, device="cuda").transpose(0, 1)  # (4, 48, 64), rows do not merge
    w = torch.randn(64, 96, device="cuda")
    with cutlass_ops.patched(matmul=True):
        batched = permuted @ w  # as torch.matmul: w expanded to a batch, one bmm
        assert cutlass_ops.stats()["cutlass"] == 1 and cutlass_ops.stats()["patch_fallbacks"] == 0
        cutlass_ops.reset_stats()
        w.requires_grad_()  # torch.matmul then folds with a copy, and so do we
        x = permuted.clone().requires_grad_()  # clone keeps the strides
        folded = x @ w
        assert cutlass_ops.stats()["cutlass"] == 1
        grad = torch.randn_like(folded)
        gx, gw = torch.autograd.grad(folded, (x, w), grad)
    assert cutlass_ops.stats()["cutlass"] == 3  # and the two gradients
    rows = permuted.reshape(-1, 64)
    for r in (batched, folded.detach()):
        assert r.shape == (4, 48, 96)
        assert_matches_reference(r.reshape(-1, 96), rows, w.detach(), "f32")
    tx, tw = torch.autograd.grad(torch.matmul(x, w), (x, w), grad)
    g2 = grad.reshape(-1, 96)
    assert_matches_reference(gx.reshape(-1, 64), g2, w.detach().t(), "f32", theirs=tx.reshape(-1, 64))
    assert_matches_reference(gw, rows.t(), g2, "f32", theirs=tw)


def test_dispatcher_mode_routes_matmul_and_linear():
    a, b = matrix(256, 128, torch.float16), matrix(128, 64, torch.float16)
    expected = torch.mm(a, b)
    with cutlass_ops.use_cutlass():
        cutlass_ops.reset_stats()
        results = [a @ b, torch.matmul(a, b), torch.mm(a, b), F.linear(a, b.t().contiguous())]
        out = torch.empty(256, 64, dtype=torch.float16, device="cuda")
        torch.mm(a, b, out=out)
        results.append(out)
        assert cutlass_ops.stats()["cutlass"] == 5
        # Not taken: complex and integer matrices still get torch.mm's behaviour, no recursion.
        c = torch.mm(a.to(torch.complex64), b.to(torch.complex64))
        with pytest.raises(NotImplementedError, match="addmm_cuda"):
            torch.mm(a.int(), b.int())
        with pytest.raises(RuntimeError, match="shapes cannot be multiplied"):
            torch.mm(a, a)
        # Autograd above the override: backward's matmuls run on cutlass too.
        x = a.float().requires_grad_()
        y = (x @ b.float()).sum()
        cutlass_ops.reset_stats()
        y.backward()
        assert cutlass_ops.stats()["cutlass"] == 1
    assert c.dtype == torch.complex64
    for r in results:
        assert_matches_reference(r, a, b, "f16", theirs=expected)
    cutlass_ops.reset_stats()
    _ = a @ b
    assert cutlass_ops.stats()["cutlass"] == 0  # disabled again


def test_logging_names_the_kernel(caplog):
    """Each call's line goes to the "cutlass_ops" logger of Python's logging, at INFO."""
    a, b = matrix(64, 64, torch.bfloat16), matrix(64, 64, torch.bfloat16)
    with caplog.at_level(logging.INFO, logger="cutlass_ops"):
        cutlass_ops.set_logging(True)
        cutlass_ops.mm(a, b)
        torch.cuda.synchronize()
        cutlass_ops.set_logging(False)
        cutlass_ops.mm(a, b)  # off again: no line
    lines = [r.getMessage() for r in caplog.records if r.name == "cutlass_ops"]
    assert len(lines) == 1 and lines[0].startswith("mm 64x64x64 BFloat16 (bf16) -> "), lines
    assert cutlass_ops.explain(a, b).kernel in lines[0]
    assert all(r.levelno == logging.INFO for r in caplog.records if r.name == "cutlass_ops")


def test_logging_names_the_k_decomposition(caplog):
    """A call whose plan divides K logs how, as explain() says it: "split-k x<slices>" or "stream-k"."""
    decomposed = 0
    for m, n, k in ((256, 256, 131072), (64, 64, 65536), (128, 4096, 4096)):
        a, b = matrix(m, k, torch.bfloat16), matrix(k, n, torch.bfloat16)
        plan = cutlass_ops.explain(a, b)
        with caplog.at_level(logging.INFO, logger="cutlass_ops"):
            caplog.clear()
            cutlass_ops.set_logging(True)
            cutlass_ops.mm(a, b)
            torch.cuda.synchronize()
            cutlass_ops.set_logging(False)
        lines = [r.getMessage() for r in caplog.records if r.name == "cutlass_ops"]
        assert len(lines) == 1 and plan.kernel in lines[0], (lines, plan.kernel)
        after = lines[0].split(plan.kernel, 1)[1]
        if plan.decomposition == "split-k":
            assert after.startswith(f", split-k x{plan.splits}"), (lines[0], plan.splits)
            decomposed += 1
        elif plan.decomposition == "stream-k":
            assert after.startswith(", stream-k"), lines[0]
            decomposed += 1
        else:
            assert "split-k" not in after and "stream-k" not in after, lines[0]
    assert decomposed >= 1, "no problem here was planned with K divided: pick longer reductions"


def test_logging_without_configuration_writes_stderr(tmp_path):
    """CUTLASS_OPS_LOG=1 in a program that configures no logging: one stderr line per call."""
    code = ("import torch, cutlass_ops\n"
            "a = torch.randn(64, 64, device='cuda', dtype=torch.bfloat16)\n"
            "cutlass_ops.mm(a, a); torch.cuda.synchronize()\n")
    env = {**os.environ, "CUTLASS_OPS_LOG": "1"}
    result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300,
                            cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.startswith("[cutlass_ops] mm ")]
    assert len(lines) == 1 and lines[0].startswith("[cutlass_ops] mm 64x64x64 BFloat16 (bf16) -> "), result.stderr


def test_demo_runs_and_routes_every_matmul():
    from cutlass_ops import demo

    results = demo.run(tokens=256, d_model=128, d_ff=512, layers=2, steps=2)
    by_mode = {r.mode: r for r in results}
    assert by_mode["torch (cuBLAS)"].cutlass_calls == 0
    # Two matmuls per block, two gradients each in backward. Patched, the forward matmuls are
    # cutlass_ops.mm calls, whose own backward runs cutlass_ops too; in dispatcher mode aten's
    # backward reaches aten::mm, which is cutlass_ops.
    assert by_mode["patched torch.mm/matmul"].cutlass_calls == 4 + 2 * 4
    assert by_mode["dispatcher (aten::mm)"].cutlass_calls == 4 + 2 * 4
    for r in results[1:]:
        assert r.fallbacks == 0
        # bf16 results of different kernels: agreement to bf16 rounding, not to the bit.
        assert r.max_out_diff < 5e-2 and r.max_grad_diff < 1e-1


BACKWARD_FIRST_IN_ITS_THREAD = """
import torch, cutlass_ops
x = torch.randn(1024, 1024, dtype=torch.bfloat16, device="cuda", requires_grad=True)
w = torch.randn(1024, 1024, dtype=torch.bfloat16, device="cuda", requires_grad=True)
y = cutlass_ops.mm(x, w)
g = torch.randn_like(y)
cutlass_ops.reset_stats()
gx, gw = torch.autograd.grad(y, (x, w), g)
torch.cuda.synchronize()
for ours, ref in ((gx, g.double() @ w.double().t()), (gw, x.double().t() @ g.double())):
    err = (ours.double() - ref).abs().max().item()
    assert err <= 0.05 * ref.abs().max().item(), err
print(" ".join(cutlass_ops.stats()["kernels"]))
"""


def test_tma_kernels_run_in_a_fresh_autograd_thread():
    """A fresh process whose autograd device thread makes no CUDA runtime call before the
    backward's products: the TMA kernels' descriptors need the device's context current in
    that thread (csrc/ops/mm.cpp, bind_device_context). Without it the driver refused them and
    the kernel died on an illegal instruction."""
    done = subprocess.run([sys.executable, "-c", BACKWARD_FIRST_IN_ITS_THREAD], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Failed to initialize the TMA descriptor" not in done.stdout + done.stderr
    kernels = done.stdout.split()
    assert any(k.startswith(("cutlass3x_", "handwritten_sm90_")) for k in kernels), kernels  # a TMA kernel ran
