"""cutlass_ops.addmm and cutlass_ops.linear on the GPU: results against torch and a float64
reference, the fused-epilogue kernels, out=, errors, autograd, autocast, compile, and
dispatcher mode and patching for nn.Linear."""

import copy

import pytest
import torch
import torch.nn.functional as F

import cutlass_ops
from cutlass_ops.precisions import torch_dtype
from mm_testing import assert_close_to_reference, capture_error
from mm_testing import matrix as _matrix


def matrix(*shape, dtype=torch.float32):
    """N(0, 1) values: a row-major matrix, or for one size a vector."""
    if len(shape) == 2:
        return _matrix(*shape, dtype)
    return torch.randn(*shape, device="cuda", dtype=dtype)

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("clean_state")]

DTYPES = [torch.float16, torch.bfloat16, torch.float32, torch.float64]
ACTIVATIONS = {
    None: lambda z: z,
    "relu": torch.relu,
    "gelu": lambda z: F.gelu(z),
    "gelu_tanh": lambda z: F.gelu(z, approximate="tanh"),
    "silu": F.silu,
}


def input_of(shape_kind, m, n, dtype):
    shapes = {"row": (n,), "row2d": (1, n), "col": (m, 1), "full": (m, n), "scalar": ()}
    if shape_kind == "scalar":
        return torch.randn((), device="cuda", dtype=dtype)
    return matrix(*shapes[shape_kind], dtype=dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape", [(257, 512, 1024), (100, 33, 70), (64, 4096, 512)], ids=str)
@pytest.mark.parametrize("input_kind", ["row", "row2d", "col", "full", "scalar"])
@pytest.mark.parametrize("beta,alpha", [(1, 1), (0.5, 2.0), (0, 1)])
def test_addmm_matches_torch(dtype, shape, input_kind, beta, alpha):
    m, n, k = shape
    a, b = matrix(m, k, dtype=dtype), matrix(k, n, dtype=dtype)
    c = input_of(input_kind, m, n, dtype)
    ours = cutlass_ops.addmm(c, a, b, beta=beta, alpha=alpha)
    theirs = torch.addmm(c, a, b, beta=beta, alpha=alpha)
    reference = beta * c.double() + alpha * (a.double() @ b.double())
    assert_close_to_reference(ours, theirs, reference, f"{dtype} {shape} {input_kind} beta={beta} alpha={alpha}", k)


def test_addmm_with_beta_zero_does_not_read_the_input():
    a, b = matrix(130, 64, dtype=torch.bfloat16), matrix(64, 256, dtype=torch.bfloat16)
    for c in (torch.full((256,), float("nan"), device="cuda", dtype=torch.bfloat16),
              torch.full((130, 256), float("inf"), device="cuda", dtype=torch.bfloat16)):
        ours = cutlass_ops.addmm(c, a, b, beta=0)
        assert torch.isfinite(ours).all()
        assert_close_to_reference(ours, torch.addmm(c, a, b, beta=0), a.double() @ b.double())


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float32])
def test_addmm_out(dtype):
    a, b, bias = matrix(200, 96, dtype=dtype), matrix(96, 128, dtype=dtype), matrix(128, dtype=dtype)
    expected = torch.addmm(bias, a, b)
    out = torch.empty(200, 128, device="cuda", dtype=dtype)
    assert cutlass_ops.addmm(bias, a, b, out=out) is out
    assert_close_to_reference(out, expected, bias.double() + a.double() @ b.double())
    # An empty out is resized, as torch resizes it.
    out = torch.empty(0, device="cuda", dtype=dtype)
    cutlass_ops.addmm(bias, a, b, out=out)
    assert out.shape == (200, 128)
    # out that is the input (torch.addmm(c, a, b, out=c), which addmm_ does).
    c = matrix(200, 128, dtype=dtype)
    expected = torch.addmm(c, a, b, beta=0.5)
    reference = 0.5 * c.double() + a.double() @ b.double()
    cutlass_ops.addmm(c, a, b, beta=0.5, out=c)
    assert_close_to_reference(c, expected, reference)


def test_addmm_errors_match_torch_and_leave_out_untouched():
    a, b = matrix(8, 16, dtype=torch.float32), matrix(16, 4, dtype=torch.float32)
    cases = [
        (matrix(5, dtype=torch.float32), a, b),                   # input does not broadcast
        (matrix(4, dtype=torch.float32), a, matrix(15, 4, dtype=torch.float32)),  # shapes do not fit
        (matrix(4, dtype=torch.float16), a, b),                   # dtypes differ
        (matrix(4, dtype=torch.float32), a, b.to(torch.float64)),
    ]
    for c, m1, m2 in cases:
        theirs = capture_error(lambda: torch.addmm(c, m1, m2))
        assert theirs[0] is RuntimeError, theirs
        out = torch.full((8, 4), 7.0, device="cuda")
        # torch.addmm's exception: its type and message (docs/differences.md: argument errors are torch's)
        assert capture_error(lambda: cutlass_ops.addmm(c, m1, m2, out=out)) == capture_error(
            lambda: torch.addmm(c, m1, m2, out=torch.full((8, 4), 7.0, device="cuda")))
        assert (out == 7.0).all(), "out was written before the error"
        assert capture_error(lambda: cutlass_ops.addmm(c, m1, m2)) == theirs


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("activation", list(ACTIVATIONS))
@pytest.mark.parametrize("shape", [(2, 257, 1024, 4096), (3, 10, 70, 33), (1, 1, 512, 256)], ids=str)
@pytest.mark.parametrize("with_bias", [True, False])
def test_linear_matches_act_of_f_linear(dtype, activation, shape, with_bias):
    batch, tokens, in_features, out_features = shape
    x = matrix(batch * tokens, in_features, dtype=dtype).view(batch, tokens, in_features)
    w = matrix(out_features, in_features, dtype=dtype)
    bias = matrix(out_features, dtype=dtype) if with_bias else None
    act = ACTIVATIONS[activation]
    ours = cutlass_ops.linear(x, w, bias, activation=activation)
    theirs = act(F.linear(x, w, bias))
    z = x.double() @ w.double().t() + (bias.double() if with_bias else 0)
    assert_close_to_reference(ours, theirs, act(z), f"{dtype} {shape} {activation} bias={with_bias}", in_features)


def test_linear_one_dim_input_and_empty_rows():
    w, bias = matrix(64, 32, dtype=torch.bfloat16), matrix(64, dtype=torch.bfloat16)
    x = matrix(32, dtype=torch.bfloat16).view(32)
    ours = cutlass_ops.linear(x, w, bias, activation="relu")
    assert ours.shape == (64,)
    assert_close_to_reference(ours, torch.relu(F.linear(x, w, bias)), torch.relu(x.double() @ w.double().t() + bias.double()))
    empty = torch.empty(0, 5, 32, device="cuda", dtype=torch.bfloat16)
    assert cutlass_ops.linear(empty, w, bias).shape == (0, 5, 64)
    # K = 0: the output is the activation of the bias.
    w0 = torch.empty(64, 0, device="cuda", dtype=torch.bfloat16)
    x0 = torch.empty(3, 0, device="cuda", dtype=torch.bfloat16)
    assert torch.equal(cutlass_ops.linear(x0, w0, bias, activation="relu"), torch.relu(bias).expand(3, 64))


@pytest.mark.skipif(not torch.cuda.is_available() or torch.cuda.get_device_capability() != (9, 0),
                    reason="the fused-epilogue kernels are built for sm_90a")
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=str)
@pytest.mark.parametrize("activation", list(ACTIVATIONS))
def test_linear_runs_a_fused_kernel_on_hopper(dtype, activation):
    x, w, bias = matrix(1000, 4096, dtype=dtype), matrix(4096, 4096, dtype=dtype), matrix(4096, dtype=dtype)
    cutlass_ops.reset_stats()
    ours = cutlass_ops.linear(x, w, bias, activation=activation)
    kernels = cutlass_ops.stats()["kernels"]
    assert len(kernels) == 1 and next(iter(kernels)).endswith("_bias_act"), kernels
    act = ACTIVATIONS[activation]
    z = x.double() @ w.double().t() + bias.double()
    assert_close_to_reference(ours, act(F.linear(x, w, bias)), act(z), str(kernels))


@pytest.mark.skipif(not torch.cuda.is_available() or torch.cuda.get_device_capability() != (9, 0),
                    reason="the fused-epilogue kernels are built for sm_90a")
@pytest.mark.parametrize("activation", list(ACTIVATIONS))
def test_every_fused_kernel_runs_an_aligned_and_a_ragged_problem(activation):
    """Each fused build, named, on an aligned and a ragged problem, on 257 rows with a long K
    (few output tiles: the stream-K scheduler's builds split K there), and on more tiles than
    the GPU has SMs with ragged columns (the persistent builds run several tiles per CTA, each
    with its own slice of the bias), with a bias and without one, against float64."""
    from cutlass_ops import _extension

    fused = [k for k in cutlass_ops.list_kernels((9, 0)) if k.fuses_epilogue]
    assert len(fused) >= 16, [k.name for k in fused]
    act = ACTIVATIONS[activation]
    for k in fused:
        dtype = torch_dtype(k.dtype)
        for m, n, kk in ((512, 1024, 256), (333, 264, 136), (257, 256, 6144), (1500, 3000, 128)):
            a = matrix(m, kk, dtype=dtype)
            b = matrix(n, kk, dtype=dtype).t() if k.layouts == "rc" else matrix(kk, n, dtype=dtype)
            for bias in (matrix(n, dtype=dtype), None) if m == 1500 else (matrix(n, dtype=dtype),):
                cutlass_ops.reset_stats()
                got = _extension._C.mm_epilogue(a, b, bias, 0.5, activation or "none", k.name)
                assert cutlass_ops.stats()["kernels"] == {k.name: 1}, (k.name, cutlass_ops.stats()["kernels"])
                z = 0.5 * (a.double() @ b.double()) + (0 if bias is None else bias.double())
                theirs = act(0.5 * (a @ b) if bias is None else torch.addmm(bias, a, b, alpha=0.5))
                assert_close_to_reference(got, theirs, act(z),
                                          f"{k.name} {m}x{n}x{kk} {activation} {'no bias' if bias is None else 'bias'}")


@pytest.mark.skipif(not torch.cuda.is_available() or torch.cuda.get_device_capability() != (9, 0),
                    reason="the fused-epilogue kernels are built for sm_90a")
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=str)
def test_a_biased_linear_runs_the_fused_twin_of_the_plain_products_kernel(dtype):
    """Where the plain product's kernel has a fused build (the CUTLASS configs of FUSED_WHY, the
    hand-written TMA + WGMMA step and its N-fitted tiles), linear with a bias runs that build:
    priced alike, the fused twin saves the elementwise pass. Projections whose plain product
    runs an N-fitted tile on the H100's calibration among them (1000 and 3000 x 4096 -> 14336)."""
    names = {k.name for k in cutlass_ops.list_kernels((9, 0))}
    twins = 0
    for m, k, n in ((1000, 4096, 14336), (3000, 4096, 14336), (777, 1024, 3072), (4096, 4096, 4096), (333, 264, 136)):
        x, w, bias = matrix(m, k, dtype=dtype), matrix(n, k, dtype=dtype), matrix(n, dtype=dtype)
        cutlass_ops.reset_stats()
        cutlass_ops.mm(x, w.t())
        (plain,) = cutlass_ops.stats()["kernels"]
        if plain + "_bias_act" not in names:
            continue
        twins += 1
        cutlass_ops.reset_stats()
        ours = cutlass_ops.linear(x, w, bias, activation="gelu")
        assert cutlass_ops.stats()["kernels"] == {plain + "_bias_act": 1}, (m, k, n, plain, cutlass_ops.stats())
        z = x.double() @ w.double().t() + bias.double()
        assert_close_to_reference(ours, F.gelu(F.linear(x, w, bias)), F.gelu(z), f"{plain} {m}x{k}->{n}")
    assert twins >= 2, twins


# ---- autograd, autocast, compile ------------------------------------------------------------

@pytest.mark.parametrize("input_kind", ["row", "col", "full"])
def test_addmm_gradcheck_float64(input_kind):
    a = matrix(6, 5, dtype=torch.float64).requires_grad_()
    b = matrix(5, 4, dtype=torch.float64).requires_grad_()
    c = input_of(input_kind, 6, 4, torch.float64).requires_grad_()
    assert torch.autograd.gradcheck(lambda c, a, b: cutlass_ops.addmm(c, a, b, beta=0.7, alpha=1.3), (c, a, b))


@pytest.mark.parametrize("activation", list(ACTIVATIONS))
def test_linear_gradcheck_float64(activation):
    x = matrix(2 * 3, 5, dtype=torch.float64).view(2, 3, 5).requires_grad_()
    w = matrix(4, 5, dtype=torch.float64).requires_grad_()
    bias = matrix(4, dtype=torch.float64).requires_grad_()
    assert torch.autograd.gradcheck(lambda x, w, b: cutlass_ops.linear(x, w, b, activation=activation), (x, w, bias))


@pytest.mark.parametrize("activation", [None, "gelu", "silu"])
def test_linear_bf16_gradients_match_torch(activation):
    x = matrix(257, 512, dtype=torch.bfloat16).requires_grad_()
    w = matrix(1024, 512, dtype=torch.bfloat16).requires_grad_()
    bias = matrix(1024, dtype=torch.bfloat16).requires_grad_()
    grad = matrix(257, 1024, dtype=torch.bfloat16)
    act = ACTIVATIONS[activation]
    ours = torch.autograd.grad(cutlass_ops.linear(x, w, bias, activation=activation), (x, w, bias), grad)
    theirs = torch.autograd.grad(act(F.linear(x, w, bias)), (x, w, bias), grad)
    xd, wd, bd = (t.detach().double().requires_grad_() for t in (x, w, bias))
    reference = torch.autograd.grad(act(F.linear(xd, wd, bd)), (xd, wd, bd), grad.double())
    for o, t, r, name in zip(ours, theirs, reference, ("input", "weight", "bias")):
        assert_close_to_reference(o, t, r, f"grad of {name}")


def test_autocast_runs_linear_and_addmm_in_the_autocast_dtype():
    x, w, bias = matrix(64, 128), matrix(256, 128), matrix(256)
    with torch.autocast("cuda", dtype=torch.bfloat16):
        ours = cutlass_ops.linear(x, w, bias, activation="gelu")
        theirs = F.gelu(F.linear(x, w, bias))
        ours_addmm = cutlass_ops.addmm(bias, x, w.t())
        theirs_addmm = torch.addmm(bias, x, w.t())
    assert ours.dtype == theirs.dtype == torch.bfloat16 and ours_addmm.dtype == theirs_addmm.dtype == torch.bfloat16
    z = x.bfloat16().double() @ w.bfloat16().double().t() + bias.bfloat16().double()
    assert_close_to_reference(ours, theirs, F.gelu(z), "linear")
    assert_close_to_reference(ours_addmm, theirs_addmm, z, "addmm")


def test_opcheck_and_compile():
    x, w, bias = matrix(33, 64, dtype=torch.bfloat16), matrix(128, 64, dtype=torch.bfloat16), matrix(128, dtype=torch.bfloat16)
    torch.library.opcheck(torch.ops.cutlass_ops.linear.default, (x, w, bias, "gelu"))
    torch.library.opcheck(torch.ops.cutlass_ops.addmm.default, (bias, x, w.t()), {"beta": 0.5, "alpha": 2.0})
    compiled = torch.compile(lambda x, w, b: cutlass_ops.linear(x, w, b, activation="silu") * 2, fullgraph=True)
    expected = cutlass_ops.linear(x, w, bias, activation="silu") * 2
    torch.testing.assert_close(compiled(x, w, bias), expected)


def test_cuda_graph_capture_of_linear():
    x, w, bias = matrix(257, 512, dtype=torch.bfloat16), matrix(1024, 512, dtype=torch.bfloat16), matrix(1024, dtype=torch.bfloat16)
    expected = cutlass_ops.linear(x, w, bias, activation="relu")
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        captured = cutlass_ops.linear(x, w, bias, activation="relu")
    graph.replay()
    torch.cuda.synchronize()
    assert torch.equal(captured, expected)


# ---- dispatcher mode and patching -----------------------------------------------------------

def mlp(dtype):
    torch.manual_seed(0)
    layers = []
    for _ in range(4):
        layers += [torch.nn.Linear(512, 512, bias=True), torch.nn.GELU()]
    return torch.nn.Sequential(*layers).to("cuda", dtype)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float32])
def test_dispatcher_mode_runs_nn_linear_with_bias_on_cutlass(dtype):
    """Four nn.Linear layers with biases: all four products on cutlass_ops, as accurate as torch's
    against a float64 copy of the model."""
    model = mlp(dtype)
    x = matrix(2 * 300, 512, dtype=dtype).view(2, 300, 512)
    expected = model(x)
    reference = copy.deepcopy(model).double()(x.double())
    cutlass_ops.reset_stats()
    with cutlass_ops.use_cutlass():
        ours = model(x)
    stats = cutlass_ops.stats()
    assert stats["cutlass"] == 4, stats
    assert_close_to_reference(ours, expected, reference, "output")


@pytest.mark.parametrize("use_gelu", [False, True])
def test_dispatcher_mode_addmm_activation_matches_torch(use_gelu):
    c, a, b = matrix(512, dtype=torch.bfloat16), matrix(300, 256, dtype=torch.bfloat16), matrix(256, 512, dtype=torch.bfloat16)
    expected = torch._addmm_activation(c, a, b, use_gelu=use_gelu)
    cutlass_ops.reset_stats()
    with cutlass_ops.use_cutlass():
        ours = torch._addmm_activation(c, a, b, use_gelu=use_gelu)
    assert cutlass_ops.stats()["cutlass"] == 1
    z = c.double() + a.double() @ b.double()
    reference = F.gelu(z, approximate="tanh") if use_gelu else torch.relu(z)
    assert_close_to_reference(ours, expected, reference)


@pytest.mark.parametrize("use_gelu", [False, True])
def test_dispatcher_mode_addmm_activation_errors_match_torch(use_gelu):
    """aten::_addmm_activation, overridden in dispatcher mode, raises torch._addmm_activation's own
    errors (type and text) and leaves out untouched."""
    a, b = matrix(8, 16, dtype=torch.float32), matrix(16, 4, dtype=torch.float32)
    cases = [
        (matrix(5, dtype=torch.float32), a, b),                                   # input does not broadcast
        (matrix(4, dtype=torch.float32), a, matrix(15, 4, dtype=torch.float32)),  # shapes do not fit
        (matrix(4, dtype=torch.float16), a, b),                                   # dtypes differ
        (matrix(4, dtype=torch.float32), a, b.cpu()),                             # devices differ
    ]
    for c, m1, m2 in cases:
        theirs = capture_error(lambda: torch._addmm_activation(c, m1, m2, use_gelu=use_gelu))
        theirs_out = capture_error(lambda: torch._addmm_activation(
            c, m1, m2, use_gelu=use_gelu, out=torch.full((8, 4), 7.0, device="cuda")))
        assert theirs[0] is not None and theirs_out[0] is not None, "torch accepts the call"
        out = torch.full((8, 4), 7.0, device="cuda")
        with cutlass_ops.use_cutlass():
            ours = capture_error(lambda: torch._addmm_activation(c, m1, m2, use_gelu=use_gelu))
            ours_out = capture_error(lambda: torch._addmm_activation(c, m1, m2, use_gelu=use_gelu, out=out))
        assert ours == theirs and ours_out == theirs_out
        assert (out == 7.0).all(), "out was written before the error"


def test_patching_linear_runs_nn_linear_on_cutlass_with_gradients():
    model = mlp(torch.bfloat16)
    x = matrix(256, 512, dtype=torch.bfloat16)
    expected = model(x)
    expected.float().sum().backward()
    expected_grad = model[0].weight.grad.clone()
    model.zero_grad()
    cutlass_ops.reset_stats()
    with cutlass_ops.patched(linear=True):
        ours = model(x)
        ours.float().sum().backward()
    stats = cutlass_ops.stats()
    assert stats["cutlass"] >= 4 + 4 * 2 - 1, stats  # forward, and backward's products (no input grad for x)
    wide = copy.deepcopy(model).double()
    wide.zero_grad()
    reference = wide(x.double())
    reference.sum().backward()
    assert_close_to_reference(ours, expected, reference, "output")
    assert_close_to_reference(model[0].weight.grad, expected_grad, wide[0].weight.grad, "first weight's gradient", 256)
