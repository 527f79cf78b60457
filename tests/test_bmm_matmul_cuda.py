"""cutlass_ops.bmm, baddbmm and matmul on the GPU: results against torch and a float64
reference for every dtype, ragged, tiny and empty shapes, strided batches (transposed,
permuted, expanded, sliced), out=, baddbmm's broadcast input, every rank combination of
matmul, errors, autograd, autocast, compile, opcheck, CUDA graphs, and attention in dispatcher
mode and patched."""

import copy
import math

import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode

import cutlass_ops
from cutlass_ops.precisions import of_dtype
from mm_testing import PRECISIONS, assert_close_to_reference, assert_matches_reference, capture_error

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("clean_state")]

# Batches (more than one matrix) run on CUTLASS kernels, never on the hand-written ones.


def randn(*shape, dtype=torch.float32, device="cuda"):
    return torch.randn(shape, dtype=dtype, device=device)  # a tuple: () gives a 0-D tensor


LAYOUTS = ["r", "c", "permuted", "expanded", "sliced", "padded"]


def batch(b, rows, cols, dtype=torch.float32, layout="r"):
    """A fresh (b, rows, cols) batch of N(0, 1) values, laid out as:

    r: contiguous; c: each matrix column-major (the transpose(1, 2) of a contiguous batch);
    permuted: each matrix row-major, the batch between rows and columns in memory (the heads of
    a (tokens, heads, dim) tensor: leading dim b * cols, batch stride cols); expanded: one
    matrix repeated (batch stride 0); sliced: every other column of a wider batch (no BLAS
    layout); padded: rows padded to a leading dim of cols + 8.
    """
    if layout == "r":
        return randn(b, rows, cols, dtype=dtype)
    if layout == "c":
        return randn(b, cols, rows, dtype=dtype).transpose(1, 2)
    if layout == "permuted":
        return randn(rows, b, cols, dtype=dtype).transpose(0, 1)
    if layout == "expanded":
        return randn(1, rows, cols, dtype=dtype).expand(b, rows, cols)
    if layout == "sliced":
        return randn(b, rows, 2 * cols, dtype=dtype)[:, :, ::2]
    if layout == "padded":
        return randn(b, rows, cols + 8, dtype=dtype)[:, :, 3:cols + 3]
    raise ValueError(layout)


def assert_ran_on_cutlass(calls, batched=True, context=""):
    """stats(): `calls` kernel calls since the last reset, nothing handed to torch, and for
    batches only kernels that run a whole batch in one launch (KernelInfo.batched: CUTLASS's
    batched kernels and the hand-written streaming ones), not a launch per matrix."""
    s = cutlass_ops.stats()
    assert s["cutlass"] == calls, f"{context}: {s}"
    assert s["torch_mm"] == {"complex": 0, "no_kernel": 0}, f"{context}: {s}"
    if batched:
        one_launch = {k["name"] for k in cutlass_ops._extension._C.kernels() if k["batched"]}
        assert all(name in one_launch for name in s["kernels"]), f"{context}: {s['kernels']}"


# ---- bmm: dtypes, shapes, layouts ------------------------------------------------------------

BMM_SHAPES = [(4, 256, 512, 128), (3, 257, 1000, 77), (2, 1, 1, 1), (1, 129, 70, 96)]  # (batch, M, N, K)


@pytest.mark.parametrize("name,dtype,tf32", PRECISIONS, ids=[p[0] for p in PRECISIONS])
@pytest.mark.parametrize("shape", BMM_SHAPES, ids=str)
def test_bmm_matches_torch(name, dtype, tf32, shape, tf32_matmul):
    tf32_matmul(tf32)
    b, m, n, k = shape
    x, y = batch(b, m, k, dtype), batch(b, k, n, dtype)
    cutlass_ops.reset_stats()
    ours = cutlass_ops.bmm(x, y)
    assert_ran_on_cutlass(1, batched=b > 1, context=f"{name} {shape}")
    theirs = torch.bmm(x, y)
    assert ours.is_contiguous()
    assert_matches_reference(ours, x, y, name, theirs=theirs, context=f"{name} {shape}")


@pytest.mark.parametrize("name,dtype,tf32", PRECISIONS, ids=[p[0] for p in PRECISIONS])
def test_a_batch_past_a_grid_dimension_matches_torch(name, dtype, tf32, tf32_matmul):
    """65,539 matrices: more than the 65,535 blocks a grid's y or z dimension holds, where
    CUTLASS 2.x's kernels and the streaming ones put the batch. The planner runs it on a kernel
    that takes the batch (CUTLASS 3.x's persistent ones) or, where none does, hands it to torch,
    and no kernel refuses it at launch."""
    tf32_matmul(tf32)
    x, y = batch(65539, 5, 40, dtype), batch(65539, 40, 24, dtype)
    cutlass_ops.reset_stats()
    ours = cutlass_ops.bmm(x, y)
    s = cutlass_ops.stats()
    assert s["cutlass"] + s["torch_mm"]["no_kernel"] == 1, s
    one_launch = {k.name for k in cutlass_ops.list_kernels() if k.batched and (k.max_batch or math.inf) >= 65539}
    assert all(kernel in one_launch for kernel in s["kernels"]), s["kernels"]
    assert_matches_reference(ours, x, y, name, theirs=torch.bmm(x, y), context=f"{name} 65539 x 5x24x40")


@pytest.mark.parametrize("layout_a", LAYOUTS)
@pytest.mark.parametrize("layout_b", LAYOUTS)
def test_bmm_strided_batches(layout_a, layout_b):
    """Each operand transposed per matrix, permuted, expanded, sliced or padded, in pairs."""
    b, m, n, k = 5, 129, 70, 96
    for dtype in (torch.bfloat16, torch.float32):
        x, y = batch(b, m, k, dtype, layout_a), batch(b, k, n, dtype, layout_b)
        x_before, y_before = x.clone(), y.clone()
        cutlass_ops.reset_stats()
        ours = cutlass_ops.bmm(x, y)
        context = f"{of_dtype(dtype)} {layout_a} @ {layout_b}"
        assert_ran_on_cutlass(1, context=context)
        assert_matches_reference(ours, x, y, of_dtype(dtype), theirs=torch.bmm(x, y), context=context)
        assert torch.equal(x, x_before) and torch.equal(y, y_before), f"{context}: an input was written"


@pytest.mark.parametrize("layout_a,layout_b", [("r", "r"), ("r", "c"), ("c", "r"), ("c", "c"), ("permuted", "c"),
                                               ("r", "expanded"), ("expanded", "permuted")])
def test_bmm_reads_blas_layouts_without_copies(layout_a, layout_b):
    """Where each matrix is row- or column-major, the batch runs on the operands in place: the
    call allocates less than one matrix of memory (a copied operand would be 4 MiB)."""
    b, m, n, k = 8, 512, 512, 512
    x, y = batch(b, m, k, torch.bfloat16, layout_a), batch(b, k, n, torch.bfloat16, layout_b)
    out = torch.empty(b, m, n, dtype=torch.bfloat16, device="cuda")
    cutlass_ops.bmm(x, y, out=out)  # first call: one-time setup outside the measurement
    torch.cuda.synchronize()
    before = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    cutlass_ops.bmm(x, y, out=out)
    torch.cuda.synchronize()
    extra = torch.cuda.max_memory_allocated() - before
    assert extra < m * k * 2, f"{layout_a} @ {layout_b}: {extra} bytes allocated during the call"
    assert_matches_reference(out, x, y, "bf16", theirs=torch.bmm(x, y))


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float32], ids=str)
@pytest.mark.parametrize("shape", [(0, 5, 6, 7), (3, 0, 6, 7), (3, 5, 0, 7), (3, 5, 6, 0)], ids=str)
def test_bmm_empty_and_k_zero(dtype, shape):
    """No elements: an empty result; K = 0: zeros, written over whatever out held. No kernel."""
    b, m, n, k = shape
    x, y = batch(b, m, k, dtype), batch(b, k, n, dtype)
    cutlass_ops.reset_stats()
    ours = cutlass_ops.bmm(x, y)
    out = torch.full((b, m, n), math.nan, dtype=dtype, device="cuda")
    assert cutlass_ops.bmm(x, y, out=out) is out
    assert cutlass_ops.stats()["cutlass"] == 0
    theirs = torch.bmm(x, y)
    assert ours.shape == theirs.shape == (b, m, n) and ours.dtype == dtype
    assert torch.equal(ours, theirs) and torch.equal(out, theirs)
    if k == 0 and ours.numel():
        assert (ours == 0).all()


@pytest.mark.parametrize("seq,head_dim", [(s, d) for s in (128, 256, 512, 1024) for d in (64, 128)], ids=str)
def test_attention_shaped_batches(seq, head_dim):
    """(B*H, S, D) @ (B*H, D, S) scores and (B*H, S, S) @ (B*H, S, D) values in bf16."""
    bh = 16
    q, k, v = (randn(bh, seq, head_dim, dtype=torch.bfloat16) for _ in range(3))
    cutlass_ops.reset_stats()
    scores = cutlass_ops.bmm(q, k.transpose(1, 2))
    p = torch.softmax(scores.float() / head_dim ** 0.5, dim=-1).bfloat16()
    values = cutlass_ops.bmm(p, v)
    assert_ran_on_cutlass(2)
    assert_matches_reference(scores, q, k.transpose(1, 2), "bf16", theirs=torch.bmm(q, k.transpose(1, 2)),
                             context="scores")
    assert_matches_reference(values, p, v, "bf16", theirs=torch.bmm(p, v), context="values")


# ---- baddbmm ---------------------------------------------------------------------------------

INPUT_SHAPES = {
    "full": lambda b, m, n: (b, m, n),
    "matrix": lambda b, m, n: (m, n),
    "row": lambda b, m, n: (n,),
    "row 3-D": lambda b, m, n: (1, 1, n),
    "batch rows": lambda b, m, n: (b, 1, n),
    "columns": lambda b, m, n: (b, m, 1),
    "scalar": lambda b, m, n: (),
    "one": lambda b, m, n: (1,),
}
SCALES = [(1, 1), (0.5, 2.0), (0, 1), (-1.5, 0.25)]  # (beta, alpha)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32, torch.float64], ids=str)
@pytest.mark.parametrize("input_kind", list(INPUT_SHAPES))
def test_baddbmm_matches_torch(dtype, input_kind):
    b, m, n, k = 3, 129, 200, 77
    x, y = batch(b, m, k, dtype), batch(b, k, n, dtype)
    c = randn(*INPUT_SHAPES[input_kind](b, m, n), dtype=dtype)
    for beta, alpha in SCALES:
        context = f"{of_dtype(dtype)} input {tuple(c.shape)} beta={beta} alpha={alpha}"
        cutlass_ops.reset_stats()
        ours = cutlass_ops.baddbmm(c, x, y, beta=beta, alpha=alpha)
        assert_ran_on_cutlass(1, context=context)
        theirs = torch.baddbmm(c, x, y, beta=beta, alpha=alpha)
        reference = beta * c.double() + alpha * (x.double() @ y.double())
        assert_close_to_reference(ours, theirs, reference, context, k)


def test_baddbmm_with_beta_zero_does_not_read_the_input():
    x, y = batch(4, 130, 64, torch.bfloat16), batch(4, 64, 256, torch.bfloat16)
    for c in (torch.full((4, 130, 256), math.nan, dtype=torch.bfloat16, device="cuda"),
              torch.full((256,), math.inf, dtype=torch.bfloat16, device="cuda")):
        ours = cutlass_ops.baddbmm(c, x, y, beta=0, alpha=0.5)
        assert torch.isfinite(ours).all()
        assert_close_to_reference(ours, torch.baddbmm(c, x, y, beta=0, alpha=0.5), 0.5 * (x.double() @ y.double()))


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float32], ids=str)
def test_baddbmm_with_k_zero_is_beta_times_the_input(dtype):
    x, y = batch(3, 5, 0, dtype), batch(3, 0, 6, dtype)
    for c in (randn(3, 5, 6, dtype=dtype), randn(6, dtype=dtype), randn(3, 5, 1, dtype=dtype)):
        ours = cutlass_ops.baddbmm(c, x, y, beta=0.5, alpha=2.0)
        theirs = torch.baddbmm(c, x, y, beta=0.5, alpha=2.0)
        assert ours.shape == theirs.shape == (3, 5, 6)
        torch.testing.assert_close(ours, theirs)
        torch.testing.assert_close(ours, (0.5 * c.double()).expand(3, 5, 6).to(dtype))
    nan = torch.full((3, 5, 6), math.nan, dtype=dtype, device="cuda")
    assert torch.equal(cutlass_ops.baddbmm(nan, x, y, beta=0), torch.zeros(3, 5, 6, dtype=dtype, device="cuda"))


# ---- out= ------------------------------------------------------------------------------------

def make_out(kind, b, m, n, dtype):
    """(out, the storage it views): right-shaped outs of several layouts, filled with NaN, or
    wrong-shaped ones that the call resizes."""
    if kind == "right shape":
        base = torch.full((b, m, n), math.nan, dtype=dtype, device="cuda")
        return base, base
    if kind == "wrong shape":
        base = torch.full((2, 3, 3), math.nan, dtype=dtype, device="cuda")
        return base, base
    if kind == "empty":
        base = torch.empty(0, dtype=dtype, device="cuda")
        return base, base
    if kind == "transposed":
        base = torch.full((b, n, m), math.nan, dtype=dtype, device="cuda")
        return base.transpose(1, 2), base
    if kind == "batch permuted":
        base = torch.full((m, b, n), math.nan, dtype=dtype, device="cuda")
        return base.transpose(0, 1), base
    if kind == "strided":
        base = torch.full((b, m, 2 * n), 7.0, dtype=dtype, device="cuda")
        return base[:, :, ::2], base
    if kind == "padded":
        base = torch.full((b, m, n + 13), 7.0, dtype=dtype, device="cuda")
        return base[:, :, 3:n + 3], base
    raise ValueError(kind)


OUT_KINDS = ["right shape", "wrong shape", "empty", "transposed", "batch permuted", "strided", "padded"]


def assert_wrote_only_out(out, base, before_base):
    written = torch.zeros(base.shape, dtype=torch.bool, device="cuda")
    written.as_strided(out.shape, out.stride(), out.storage_offset() - base.storage_offset()).fill_(True)
    assert torch.equal(base[~written], before_base[~written]), "wrote outside out's elements"


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float32], ids=str)
@pytest.mark.parametrize("kind", OUT_KINDS)
def test_bmm_out(dtype, kind):
    """The result is out; a right-shaped out keeps its strides (and the rest of its storage),
    a wrong-shaped one is resized to torch's shape and strides."""
    b, m, n, k = 3, 129, 70, 96
    x, y = batch(b, m, k, dtype), batch(b, k, n, dtype)
    theirs_out, _ = make_out(kind, b, m, n, dtype)
    torch.bmm(x, y, out=theirs_out)
    out, base = make_out(kind, b, m, n, dtype)
    before = base.clone()
    resized = out.shape != (b, m, n)
    assert cutlass_ops.bmm(x, y, out=out) is out
    assert out.shape == theirs_out.shape and out.stride() == theirs_out.stride()
    if not resized:
        assert_wrote_only_out(out, base, before)
    assert_matches_reference(out, x, y, of_dtype(dtype), theirs=theirs_out, context=kind)


@pytest.mark.parametrize("kind", ["right shape", "wrong shape", "transposed", "out is the input"])
def test_baddbmm_out(kind):
    b, m, n, k = 3, 129, 70, 96
    dtype = torch.bfloat16
    x, y = batch(b, m, k, dtype), batch(b, k, n, dtype)
    if kind == "out is the input":  # Tensor.baddbmm_'s pattern
        c = randn(b, m, n, dtype=dtype)
        reference = 0.5 * c.double() + 2.0 * (x.double() @ y.double())
        theirs = torch.baddbmm(c, x, y, beta=0.5, alpha=2.0)
        assert cutlass_ops.baddbmm(c, x, y, beta=0.5, alpha=2.0, out=c) is c
        assert_close_to_reference(c, theirs, reference, kind, k)
        return
    c = randn(n, dtype=dtype)
    reference = 0.5 * c.double() + 2.0 * (x.double() @ y.double())
    theirs_out, _ = make_out(kind, b, m, n, dtype)
    torch.baddbmm(c, x, y, beta=0.5, alpha=2.0, out=theirs_out)
    out, _ = make_out(kind, b, m, n, dtype)
    assert cutlass_ops.baddbmm(c, x, y, beta=0.5, alpha=2.0, out=out) is out
    assert out.shape == theirs_out.shape and out.stride() == theirs_out.stride()
    assert_close_to_reference(out, theirs_out, reference, kind, k)


OVERLAPS = ["out is mat1", "out is mat2", "out overlaps half of mat1"]


def overlapping(case, x_base, y):
    """(mat1, mat2, out) for an overlap case, built on x_base (4, 192, 96) and y (4, 96, 96)."""
    if case == "out is mat1":
        x = x_base[:, :96]
        return x, y, x
    if case == "out is mat2":
        return x_base[:, :96], y, y
    return x_base[:, :96], y, x_base[:, 48:144]


@pytest.mark.parametrize("op", ["bmm", "baddbmm"])
@pytest.mark.parametrize("case", OVERLAPS)
def test_out_overlapping_an_input_raises_like_torch_or_gets_the_right_answer(op, case):
    """torch checks no overlap here: torch.bmm may read an input it is writing, and
    torch.baddbmm copies its input into out first, overwriting a batch that out shares. Where
    torch raises, cutlass_ops must raise the same and leave out alone; where it does not,
    cutlass_ops must compute from the inputs as they were before the call."""
    x_base, y = randn(4, 192, 96), randn(4, 96, 96)
    c = randn(96)

    def call(fn, x, yy, out):
        return fn(x, yy, out=out) if op == "bmm" else fn(c, x, yy, beta=0.5, out=out)

    torch_x_base, torch_y = x_base.clone(), y.clone()
    theirs = capture_error(lambda: call(getattr(torch, op), *overlapping(case, torch_x_base, torch_y)))
    x, yy, out = overlapping(case, x_base, y)
    x_before, y_before, out_before = x.clone(), yy.clone(), out.clone()
    ours = capture_error(lambda: call(getattr(cutlass_ops, op), x, yy, out))
    if theirs[0] is not None:
        assert ours[0] is theirs[0], (ours, theirs)
        assert torch.equal(out, out_before)
        return
    assert ours == (None, None), ours
    product = torch.bmm(x_before, y_before)
    if op == "bmm":
        assert_matches_reference(out, x_before, y_before, "f32", theirs=product, context=case)
    else:
        reference = 0.5 * c.double() + x_before.double() @ y_before.double()
        assert_close_to_reference(out, torch.baddbmm(c, x_before, y_before, beta=0.5), reference, case, 96)


# ---- errors ----------------------------------------------------------------------------------

def _t(*shape, dtype=torch.float32, device="cuda"):
    return randn(*shape, dtype=dtype, device=device)


BMM_ERRORS = {
    # case: (mat1, mat2, out); out is a right-shaped float32 CUDA tensor unless given
    "mat1 2-D": lambda: (_t(5, 7), _t(3, 7, 4), None),
    "mat2 4-D": lambda: (_t(3, 5, 7), _t(1, 3, 7, 4), None),
    "batch sizes differ": lambda: (_t(3, 5, 7), _t(2, 7, 4), None),
    "inner sizes differ": lambda: (_t(3, 5, 7), _t(3, 6, 4), None),
    "dtypes differ": lambda: (_t(3, 5, 7), _t(3, 7, 4, dtype=torch.float64), None),
    "half and bfloat16": lambda: (_t(3, 5, 7, dtype=torch.float16), _t(3, 7, 4, dtype=torch.bfloat16), None),
    "mat1 on the CPU": lambda: (_t(3, 5, 7, device="cpu"), _t(3, 7, 4), None),
    "mat2 on the CPU": lambda: (_t(3, 5, 7), _t(3, 7, 4, device="cpu"), None),
    "out of another dtype": lambda: (_t(3, 5, 7), _t(3, 7, 4), _t(3, 5, 4, dtype=torch.float64)),
    "out on the CPU": lambda: (_t(3, 5, 7), _t(3, 7, 4), _t(3, 5, 4, device="cpu")),
}


def assert_raises_like(theirs_fn, ours_fn, out=None):
    """ours_fn raises the exception theirs_fn raises (which must raise), its type and message
    (docs/differences.md: argument errors are torch's own), before touching out."""
    theirs = capture_error(theirs_fn)
    assert theirs[0] is not None, "torch accepts this call"
    before = None if out is None else out.clone()
    ours = capture_error(ours_fn)
    assert ours == theirs, f"ours: {ours}, torch's: {theirs}"
    if out is not None:
        assert out.shape == before.shape and torch.equal(out.nan_to_num(), before.nan_to_num()), "out was written"


@pytest.mark.parametrize("case", list(BMM_ERRORS))
def test_bmm_errors_match_torch_and_leave_out_untouched(case):
    x, y, out = BMM_ERRORS[case]()
    out_given = out is not None
    if not out_given:
        out = torch.full((3, 5, 4), 7.0, device="cuda")
    torch_out = out.clone()
    assert_raises_like(lambda: torch.bmm(x, y, out=torch_out), lambda: cutlass_ops.bmm(x, y, out=out), out)
    if not out_given:
        assert_raises_like(lambda: torch.bmm(x, y), lambda: cutlass_ops.bmm(x, y))


BADDBMM_ERRORS = {
    # case: (input, batch1, batch2)
    "input does not broadcast": lambda: (_t(5), _t(3, 5, 7), _t(3, 7, 4)),
    "input 4-D": lambda: (_t(1, 3, 5, 4), _t(3, 5, 7), _t(3, 7, 4)),
    "input of another dtype": lambda: (_t(4, dtype=torch.float64), _t(3, 5, 7), _t(3, 7, 4)),
    "batches of other dtypes": lambda: (_t(4), _t(3, 5, 7), _t(3, 7, 4, dtype=torch.float16)),
    "inner sizes differ": lambda: (_t(4), _t(3, 5, 7), _t(3, 6, 4)),
    "batch2 on the CPU": lambda: (_t(4), _t(3, 5, 7), _t(3, 7, 4, device="cpu")),
}


@pytest.mark.parametrize("case", list(BADDBMM_ERRORS))
def test_baddbmm_errors_match_torch_and_leave_out_untouched(case):
    c, x, y = BADDBMM_ERRORS[case]()
    out = torch.full((3, 5, 4), 7.0, device="cuda")
    torch_out = out.clone()
    assert_raises_like(lambda: torch.baddbmm(c, x, y, beta=0.5, out=torch_out),
                       lambda: cutlass_ops.baddbmm(c, x, y, beta=0.5, out=out), out)
    assert_raises_like(lambda: torch.baddbmm(c, x, y), lambda: cutlass_ops.baddbmm(c, x, y))


def test_baddbmm_input_on_another_device_behaves_like_torch():
    """A CPU input with CUDA batches: whatever torch does (raise, or take it), cutlass_ops does."""
    x, y = _t(3, 5, 7), _t(3, 7, 4)
    for c in (_t(3, 5, 4, device="cpu"), _t(4, device="cpu"), torch.tensor(2.0)):
        theirs = capture_error(lambda: torch.baddbmm(c, x, y))
        if theirs[0] is not None:
            assert capture_error(lambda: cutlass_ops.baddbmm(c, x, y))[0] is theirs[0]
        else:
            reference = c.double().cuda() + x.double() @ y.double()
            assert_close_to_reference(cutlass_ops.baddbmm(c, x, y), torch.baddbmm(c, x, y), reference)


MATMUL_ERRORS = {
    "0-D operand": lambda: (_t(), _t(5)),
    "vector lengths differ": lambda: (_t(5), _t(6)),
    "matrix and vector do not fit": lambda: (_t(5, 7), _t(6)),
    "batched matrix and vector do not fit": lambda: (_t(2, 5, 7), _t(6)),
    "inner sizes differ": lambda: (_t(2, 5, 7), _t(2, 6, 3)),
    "batches do not broadcast": lambda: (_t(2, 5, 7), _t(3, 7, 3)),
    "dtypes differ": lambda: (_t(2, 5, 7), _t(2, 7, 3, dtype=torch.float64)),
    "devices differ": lambda: (_t(2, 5, 7), _t(2, 7, 3, device="cpu")),
}


@pytest.mark.parametrize("case", list(MATMUL_ERRORS))
def test_matmul_errors_match_torch(case):
    x, y = MATMUL_ERRORS[case]()
    assert_raises_like(lambda: torch.matmul(x, y), lambda: cutlass_ops.matmul(x, y))


def test_out_with_inputs_requiring_grad_is_refused_like_torch():
    x, y, c = batch(3, 5, 7).requires_grad_(), batch(3, 7, 4), randn(4)
    out = torch.full((3, 5, 4), 5.0, device="cuda")
    assert_raises_like(lambda: torch.bmm(x, y, out=torch.empty(3, 5, 4, device="cuda")),
                       lambda: cutlass_ops.bmm(x, y, out=out), out)
    assert_raises_like(lambda: torch.baddbmm(c, x, y, out=torch.empty(3, 5, 4, device="cuda")),
                       lambda: cutlass_ops.baddbmm(c, x, y, out=out), out)
    with torch.no_grad():  # allowed without grad mode, as for torch.bmm
        cutlass_ops.bmm(x, y, out=out)
    assert_matches_reference(out, x.detach(), y, "f32", theirs=torch.bmm(x.detach(), y))


def test_complex_batches_are_handed_to_torch():
    x = batch(3, 33, 20).to(torch.complex64) * 1j + batch(3, 33, 20)
    y = batch(3, 20, 17).to(torch.complex64)
    cutlass_ops.reset_stats()
    ours = cutlass_ops.bmm(x, y)
    s = cutlass_ops.stats()
    assert s["cutlass"] == 0 and s["torch_mm"]["complex"] == 1, s
    torch.testing.assert_close(ours, torch.bmm(x, y))


def test_integer_batches_behave_like_torch():
    x, y = torch.randint(-4, 4, (3, 5, 7), device="cuda"), torch.randint(-4, 4, (3, 7, 4), device="cuda")
    theirs = capture_error(lambda: torch.bmm(x, y))
    out = torch.full((3, 5, 4), 9, device="cuda")
    if theirs[0] is not None:
        assert_raises_like(lambda: torch.bmm(x, y), lambda: cutlass_ops.bmm(x, y, out=out), out)
    else:
        assert torch.equal(cutlass_ops.bmm(x, y), torch.bmm(x, y))


EMPTY_INTEGER_PRODUCTS = [((0, 5), (5, 4)), ((3, 0), (0, 4)), ((3, 5), (5, 0)),
                          ((0, 3, 5), (0, 5, 4)), ((2, 3, 0), (2, 0, 4)), ((2, 0, 5), (2, 5, 4))]


@pytest.mark.parametrize("dtype", [torch.int32, torch.int64, torch.bool], ids=str)
@pytest.mark.parametrize("shapes", EMPTY_INTEGER_PRODUCTS, ids=str)
def test_empty_integer_products_behave_like_torch(dtype, shapes):
    """torch's CUDA kernel refuses integer products but computes empty ones (zeros where K is 0);
    so does cutlass_ops, plain, with out=, and in dispatcher mode."""
    x = torch.randint(-4, 4, shapes[0], device="cuda").to(dtype)
    y = torch.randint(-4, 4, shapes[1], device="cuda").to(dtype)
    torch_op, our_op = (torch.mm, cutlass_ops.mm) if x.dim() == 2 else (torch.bmm, cutlass_ops.bmm)
    expected = torch_op(x, y)
    ours = our_op(x, y)
    assert ours.dtype == expected.dtype and torch.equal(ours, expected)
    out = torch.empty(0, device="cuda", dtype=dtype)
    assert our_op(x, y, out=out) is out and torch.equal(out, expected)
    with cutlass_ops.use_cutlass():
        assert torch.equal(torch_op(x, y), expected)
    if x.dim() == 2:
        # A forced kernel cannot run an empty integer product (a non-empty one gets torch's error).
        with pytest.raises(ValueError, match="kernel= cannot be used"):
            cutlass_ops.mm(x, y, kernel=cutlass_ops.list_kernels()[0].name)


# ---- matmul: every rank combination -----------------------------------------------------------

MATMUL_CASES = {
    "1-D @ 1-D": lambda dt: (randn(64, dtype=dt), randn(64, dtype=dt)),
    "2-D @ 1-D": lambda dt: (randn(33, 64, dtype=dt), randn(64, dtype=dt)),
    "1-D @ 2-D": lambda dt: (randn(64, dtype=dt), randn(64, 33, dtype=dt)),
    "1-D @ 3-D": lambda dt: (randn(64, dtype=dt), randn(3, 64, 33, dtype=dt)),
    "3-D @ 1-D": lambda dt: (randn(3, 33, 64, dtype=dt), randn(64, dtype=dt)),
    "3-D @ 2-D": lambda dt: (randn(3, 33, 64, dtype=dt), randn(64, 17, dtype=dt)),
    "permuted 3-D @ 2-D": lambda dt: (randn(33, 3, 64, dtype=dt).transpose(0, 1), randn(64, 17, dtype=dt)),
    "2-D @ 3-D": lambda dt: (randn(33, 64, dtype=dt), randn(3, 64, 17, dtype=dt)),
    "3-D @ 3-D": lambda dt: (randn(3, 33, 64, dtype=dt), randn(3, 64, 17, dtype=dt)),
    "4-D broadcast": lambda dt: (randn(2, 1, 33, 64, dtype=dt), randn(1, 3, 64, 33, dtype=dt)),
    "attention heads": lambda dt: (randn(2, 33, 4, 16, dtype=dt).transpose(1, 2),
                                   randn(2, 33, 4, 16, dtype=dt).transpose(1, 2).transpose(-1, -2)),
    "5-D": lambda dt: (randn(2, 3, 2, 17, 24, dtype=dt), randn(2, 3, 2, 24, 9, dtype=dt)),
    "batch of one broadcast": lambda dt: (randn(1, 17, 24, dtype=dt), randn(4, 24, 9, dtype=dt)),
    "empty batch": lambda dt: (randn(0, 17, 24, dtype=dt), randn(0, 24, 9, dtype=dt)),
    "K = 0": lambda dt: (randn(2, 17, 0, dtype=dt), randn(2, 0, 9, dtype=dt)),
}


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float32], ids=str)
@pytest.mark.parametrize("case", list(MATMUL_CASES))
def test_matmul_matches_torch_for_every_rank(dtype, case):
    """torch.matmul's shapes and values; one GEMM on cutlass_ops per call (the 1-D cases too)."""
    x, y = MATMUL_CASES[case](dtype)
    cutlass_ops.reset_stats()
    ours = cutlass_ops.matmul(x, y)
    theirs = torch.matmul(x, y)
    assert ours.shape == theirs.shape and ours.dtype == theirs.dtype, (case, ours.shape, theirs.shape)
    work = theirs.numel() > 0 and x.shape[-1] > 0
    assert_ran_on_cutlass(1 if work else 0, batched=False, context=case)
    assert_matches_reference(ours, x, y, of_dtype(dtype), theirs=theirs, context=case)


# ---- autograd --------------------------------------------------------------------------------

@pytest.mark.parametrize("layouts", [("r", "r"), ("c", "permuted"), ("expanded", "c")], ids=str)
def test_bmm_gradcheck_float64(layouts):
    layout_a, layout_b = layouts
    # gradcheck needs inputs without self-overlap: an expanded batch is expanded inside the function.
    x = batch(1 if layout_a == "expanded" else 3, 4, 5, torch.float64, "r" if layout_a == "expanded" else layout_a)
    y = batch(3, 5, 2, torch.float64, layout_b)
    x.requires_grad_()
    y.requires_grad_()
    assert torch.autograd.gradcheck(lambda x, y: cutlass_ops.bmm(x.expand(3, -1, -1), y), (x, y))


@pytest.mark.parametrize("input_kind", ["row", "full", "columns"])
def test_baddbmm_gradcheck_float64(input_kind):
    x, y = batch(3, 4, 5, torch.float64).requires_grad_(), batch(3, 5, 2, torch.float64).requires_grad_()
    c = randn(*INPUT_SHAPES[input_kind](3, 4, 2), dtype=torch.float64).requires_grad_()
    assert torch.autograd.gradcheck(lambda c, x, y: cutlass_ops.baddbmm(c, x, y, beta=0.7, alpha=1.3), (c, x, y))


@pytest.mark.parametrize("shapes", [((7,), (7,)), ((5, 7), (7,)), ((7,), (2, 7, 3)), ((2, 5, 7), (7, 3)),
                                    ((5, 7), (2, 7, 3)), ((2, 1, 3, 4), (1, 3, 4, 2))], ids=str)
def test_matmul_gradcheck_float64(shapes):
    x = randn(*shapes[0], dtype=torch.float64).requires_grad_()
    y = randn(*shapes[1], dtype=torch.float64).requires_grad_()
    assert torch.autograd.gradcheck(cutlass_ops.matmul, (x, y))


def _grads_against_torch(ours_fn, torch_fn, inputs, grad):
    ours = torch.autograd.grad(ours_fn(*inputs), inputs, grad)
    theirs = torch.autograd.grad(torch_fn(*inputs), inputs, grad)
    wide = [t.detach().double().requires_grad_() for t in inputs]
    reference = torch.autograd.grad(torch_fn(*wide), wide, grad.double())
    for i, (o, t, r) in enumerate(zip(ours, theirs, reference)):
        assert o.shape == t.shape and o.stride() == t.stride(), f"gradient {i}: {o.stride()} vs {t.stride()}"
        assert_close_to_reference(o, t, r, f"gradient of input {i}")


def test_bmm_bf16_gradients_match_torch():
    x = batch(8, 257, 128, torch.bfloat16).requires_grad_()
    y = batch(8, 128, 200, torch.bfloat16, "c").requires_grad_()
    grad = randn(8, 257, 200, dtype=torch.bfloat16)
    cutlass_ops.reset_stats()
    _grads_against_torch(cutlass_ops.bmm, torch.bmm, (x, y), grad)
    assert_ran_on_cutlass(3)  # the product and both gradients


def test_matmul_bf16_gradients_match_torch():
    q = randn(2, 128, 4, 64, dtype=torch.bfloat16).transpose(1, 2).requires_grad_()  # heads of (B, S, H, D)
    k = randn(2, 4, 64, 96, dtype=torch.bfloat16).requires_grad_()
    grad = randn(2, 4, 128, 96, dtype=torch.bfloat16)
    _grads_against_torch(cutlass_ops.matmul, torch.matmul, (q, k), grad)


# ---- autocast, compile, opcheck, CUDA graphs ---------------------------------------------------

@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=str)
def test_autocast_runs_in_the_autocast_dtype_like_torch(dtype):
    x, y, c = batch(4, 96, 64), batch(4, 64, 80), randn(80)
    with torch.autocast("cuda", dtype=dtype):
        results = {
            "bmm": (cutlass_ops.bmm(x, y), torch.bmm(x, y)),
            "baddbmm": (cutlass_ops.baddbmm(c, x, y, beta=0.5), torch.baddbmm(c, x, y, beta=0.5)),
            "matmul": (cutlass_ops.matmul(x, y), torch.matmul(x, y)),
        }
    xl, yl, cl = x.to(dtype), y.to(dtype), c.to(dtype)
    for name, (ours, theirs) in results.items():
        assert ours.dtype == theirs.dtype == dtype, (name, ours.dtype, theirs.dtype)
        if name == "baddbmm":
            reference = 0.5 * cl.double() + xl.double() @ yl.double()
            assert_close_to_reference(ours, theirs, reference, name, 64)
        else:
            assert_matches_reference(ours, xl, yl, of_dtype(dtype), theirs=theirs, context=name)


def test_compile_fullgraph_matches_eager():
    def attention(q, k, v, bias, w):
        scores = cutlass_ops.bmm(q, k.transpose(1, 2)) * 0.125
        values = cutlass_ops.baddbmm(bias, torch.softmax(scores, dim=-1), v, beta=0.5)
        return cutlass_ops.matmul(values, w)

    q, k, v = batch(4, 64, 32), batch(4, 48, 32), batch(4, 48, 40)
    bias, w = randn(40), randn(40, 24)
    expected = attention(q, k, v, bias, w)
    got = torch.compile(attention, fullgraph=True)(q, k, v, bias, w)
    torch.testing.assert_close(got, expected, rtol=1e-4, atol=1e-4)
    # And as accurate as torch's own ops, both judged against float64 (eager and compiled could
    # agree on a wrong result).
    def reference_attention(q, k, v, bias, w):
        scores = torch.bmm(q, k.transpose(1, 2)) * 0.125
        return torch.matmul(torch.baddbmm(bias, torch.softmax(scores, dim=-1), v, beta=0.5), w)

    theirs = reference_attention(q, k, v, bias, w)
    reference = reference_attention(*(t.double() for t in (q, k, v, bias, w)))
    assert_close_to_reference(got, theirs, reference, "compiled attention")


def test_compile_fullgraph_with_out():
    def f(x, y, out):
        cutlass_ops.bmm(x, y, out=out)
        return out + 1

    x, y = batch(3, 96, 64, torch.float16), batch(3, 64, 80, torch.float16)
    out_eager = torch.empty(3, 96, 80, dtype=torch.float16, device="cuda")
    out_compiled = torch.empty_like(out_eager)
    expected = f(x, y, out_eager)
    got = torch.compile(f, fullgraph=True)(x, y, out_compiled)
    assert torch.equal(got, expected) and torch.equal(out_compiled, out_eager)


@pytest.mark.parametrize("requires_grad", [False, True])
def test_opcheck_on_cuda(requires_grad):
    x = batch(3, 33, 40).requires_grad_(requires_grad)
    y = batch(3, 40, 24, layout="c").requires_grad_(requires_grad)
    c = randn(24).requires_grad_(requires_grad)
    ops = torch.ops.cutlass_ops
    torch.library.opcheck(ops.bmm.default, (x, y))
    torch.library.opcheck(ops.baddbmm.default, (c, x, y), {"beta": 0.5, "alpha": 2.0})
    torch.library.opcheck(ops.matmul.default, (randn(2, 1, 5, 7).requires_grad_(requires_grad),
                                               randn(1, 3, 7, 4).requires_grad_(requires_grad)))
    if not requires_grad:
        torch.library.opcheck(ops.bmm.out, (x, y), {"out": torch.empty(3, 33, 24, device="cuda")})
        torch.library.opcheck(ops.baddbmm.out, (c, x, y), {"beta": 0.5, "alpha": 2.0,
                                                             "out": torch.empty(3, 33, 24, device="cuda")})


def test_cuda_graph_capture_and_replay():
    x, y, c = batch(6, 257, 128, torch.bfloat16), batch(6, 128, 200, torch.bfloat16), randn(200, dtype=torch.bfloat16)
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for _ in range(3):  # warm up: one-time setup happens outside the capture
            cutlass_ops.bmm(x, y)
            cutlass_ops.baddbmm(c, x, y, beta=0.5)
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        product = cutlass_ops.bmm(x, y)
        added = cutlass_ops.baddbmm(c, x, y, beta=0.5)
    for _ in range(3):
        x.copy_(torch.randn_like(x))
        y.copy_(torch.randn_like(y))
        graph.replay()
        torch.cuda.synchronize()
        assert_matches_reference(product, x, y, "bf16", theirs=torch.bmm(x, y))
        reference = 0.5 * c.double() + x.double() @ y.double()
        assert_close_to_reference(added, torch.baddbmm(c, x, y, beta=0.5), reference, "baddbmm", 128)


# ---- dispatcher mode and patching -------------------------------------------------------------

GEMMS = {"mm", "addmm", "_addmm_activation", "bmm", "baddbmm"}


class GemmCounter(TorchDispatchMode):
    """Counts the aten matrix products a block runs (forward and backward)."""

    def __init__(self):
        super().__init__()
        self.calls = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if func.namespace == "aten" and func.overloadpacket.__name__ in GEMMS:
            self.calls += 1
        return func(*args, **(kwargs or {}))


def batched_calls():
    """Inputs of the batched products models run, and torch's results for them."""
    x, y = batch(6, 129, 96, torch.bfloat16), batch(6, 96, 70, torch.bfloat16)
    c = randn(6, 129, 70, dtype=torch.bfloat16)
    q, k = randn(2, 128, 4, 64, dtype=torch.bfloat16).transpose(1, 2), randn(2, 4, 128, 64, dtype=torch.bfloat16)
    att = torch.softmax(torch.randn(2, 4, 128, 128, device="cuda"), dim=-1).bfloat16()
    v = randn(2, 4, 128, 64, dtype=torch.bfloat16)
    calls = {
        "torch.bmm": (lambda: torch.bmm(x, y), (x, y)),
        "Tensor.bmm": (lambda: x.bmm(y), (x, y)),
        "torch.bmm out=": (lambda: torch.bmm(x, y, out=torch.empty(6, 129, 70, dtype=torch.bfloat16, device="cuda")),
                           (x, y)),
        "torch.baddbmm": (lambda: torch.baddbmm(c, x, y, beta=0.5, alpha=2.0), None),
        "Tensor.baddbmm": (lambda: c.baddbmm(x, y, beta=0.5, alpha=2.0), None),
        "q @ k^T": (lambda: q @ k.transpose(-1, -2), (q, k.transpose(-1, -2))),
        "att @ v": (lambda: torch.matmul(att, v), (att, v)),
    }
    expected = {name: fn() for name, (fn, _) in calls.items()}
    reference = 0.5 * c.double() + 2.0 * (x.double() @ y.double())
    return calls, expected, reference


def check_batched_results(results, calls, expected, baddbmm_reference):
    for name, result in results.items():
        operands = calls[name][1]
        if operands is None:
            assert_close_to_reference(result, expected[name], baddbmm_reference, name, 96)
        else:
            assert_matches_reference(result, *operands, "bf16", theirs=expected[name], context=name)


@pytest.mark.parametrize("mode", ["dispatcher", "patched"])
def test_batched_products_run_on_cutlass(mode):
    """torch.bmm, torch.baddbmm, their Tensor methods, out= and attention's 4-D products, in
    dispatcher mode (aten::bmm and aten::baddbmm) and patched (bmm=True, matmul=True)."""
    calls, expected, reference = batched_calls()
    context = cutlass_ops.use_cutlass() if mode == "dispatcher" else cutlass_ops.patched(matmul=True, bmm=True)
    with context:
        cutlass_ops.reset_stats()
        results = {name: fn() for name, (fn, _) in calls.items()}
        assert_ran_on_cutlass(len(calls), context=mode)
        assert cutlass_ops.stats()["patch_fallbacks"] == 0
    check_batched_results(results, calls, expected, reference)
    cutlass_ops.reset_stats()
    calls["torch.bmm"][0]()
    assert cutlass_ops.stats()["cutlass"] == 0  # off again


class Attention(torch.nn.Module):
    """Multi-head self-attention written out: projections, softmax(q k^T / sqrt(d)) v, output."""

    def __init__(self, d_model=256, heads=4):
        super().__init__()
        self.heads = heads
        self.q, self.k, self.v, self.o = (torch.nn.Linear(d_model, d_model) for _ in range(4))

    def forward(self, x):
        batch_size, tokens, d_model = x.shape
        d = d_model // self.heads

        def split(t):
            return t.view(batch_size, tokens, self.heads, d).transpose(1, 2)

        q, k, v = split(self.q(x)), split(self.k(x)), split(self.v(x))
        att = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(d), dim=-1)
        return self.o((att @ v).transpose(1, 2).reshape(batch_size, tokens, d_model))


@pytest.mark.parametrize("mode", ["dispatcher", "patched"])
def test_attention_block_runs_every_gemm_on_cutlass(mode):
    """Forward and backward of an attention block: every matrix product (18: six forward, two
    per projection and two per attention product backward) on cutlass_ops, none handed to
    torch, and results as accurate as torch's against a float64 copy of the block."""
    torch.manual_seed(0)
    model = Attention().to("cuda", torch.bfloat16)
    x = randn(2, 200, 256, dtype=torch.bfloat16)
    grad = randn(2, 200, 256, dtype=torch.bfloat16)

    def step(module, x, grad):
        x = x.clone().requires_grad_()
        module.zero_grad(set_to_none=True)
        y = module(x)
        y.backward(grad)
        return [y.detach(), x.grad] + [p.grad for p in module.parameters()]

    with GemmCounter() as counter:
        expected = step(model, x, grad)
    assert counter.calls == 18
    wide = copy.deepcopy(model).double()
    reference = step(wide, x.double(), grad.double())
    context = cutlass_ops.use_cutlass() if mode == "dispatcher" else cutlass_ops.patched(matmul=True, linear=True,
                                                                                         bmm=True)
    with context:
        cutlass_ops.reset_stats()
        ours = step(model, x, grad)
        assert_ran_on_cutlass(counter.calls, batched=False, context=mode)
        assert cutlass_ops.stats()["patch_fallbacks"] == 0
    names = ["output", "x.grad"] + [f"{n}.grad" for n, _ in model.named_parameters()]
    for name, o, t, r in zip(names, ours, expected, reference):
        assert_close_to_reference(o, t, r, name, 256)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_stats_count_each_op_once_per_call():
    """stats()["ops"]: one count per call of each op; matmul counts as the bmm (or mm) it runs,
    baddbmm's product is not a bmm call, and kernels count launches beside."""
    x = torch.randn(4, 64, 32, device="cuda", dtype=torch.bfloat16)
    y = torch.randn(4, 32, 48, device="cuda", dtype=torch.bfloat16)
    a, b = x[0], y[0]
    bias = torch.randn(48, device="cuda", dtype=torch.bfloat16)
    cutlass_ops.reset_stats()
    cutlass_ops.mm(a, b)
    cutlass_ops.addmm(bias, a, b)
    cutlass_ops.linear(a, b.t(), bias)
    cutlass_ops.bmm(x, y)
    cutlass_ops.baddbmm(torch.zeros(4, 64, 48, device="cuda", dtype=torch.bfloat16), x, y)
    cutlass_ops.matmul(x, y)
    cutlass_ops.matmul(x, b)  # folds into one mm
    s = cutlass_ops.stats()
    assert s["ops"] == {"mm": 2, "addmm": 1, "linear": 1, "bmm": 2, "baddbmm": 1}, s["ops"]
    assert s["cutlass"] == 7, s


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
@pytest.mark.parametrize("op", ["bmm", "baddbmm", "addmm"])
def test_a_resized_out_warns_as_torch_does(op):
    """A wrong-shaped out= is resized with torch's UserWarning, raised in Python as torch.bmm's."""
    x = torch.randn(2, 8, 4, device="cuda")
    y = torch.randn(2, 4, 6, device="cuda")
    args = {"bmm": (x, y), "baddbmm": (torch.zeros(2, 8, 6, device="cuda"), x, y),
            "addmm": (torch.zeros(8, 6, device="cuda"), x[0], y[0])}[op]
    for fn in (getattr(torch, op), getattr(cutlass_ops, op)):
        out = torch.empty(3, 5, device="cuda")
        with pytest.warns(UserWarning, match="was resized"):
            fn(*args, out=out)
        assert torch.allclose(out, getattr(torch, op)(*args), atol=1e-4)
