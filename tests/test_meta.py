"""Meta kernels: shape inference and torch.mm's argument errors, without a GPU.

torch.mm on CPU runs the same structured checks (TORCH_META_FUNC(mm)) as on CUDA, so it is
the reference for the exception types and messages here.
"""

import warnings

import pytest
import torch

import cutlass_ops
from mm_testing import capture_error


def meta(*shape, dtype=torch.float32):
    return torch.empty(tuple(shape), dtype=dtype, device="meta")


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32, torch.float64])
@pytest.mark.parametrize("m,n,k", [(3, 5, 4), (1, 1, 1), (0, 5, 4), (3, 0, 4), (3, 5, 0), (4097, 33, 129)])
def test_meta_shape_and_dtype(dtype, m, n, k):
    out = cutlass_ops.mm(meta(m, k, dtype=dtype), meta(k, n, dtype=dtype))
    assert out.device.type == "meta"
    assert out.shape == (m, n) and out.dtype == dtype
    assert out.is_contiguous()


def test_meta_out_variant_returns_out():
    out = meta(3, 5)
    result = cutlass_ops.mm(meta(3, 4), meta(4, 5), out=out)
    assert result is out


BAD_ARGS = {
    "self 1-D": ((4,), (4, 5), torch.float32, torch.float32),
    "mat2 1-D": ((3, 4), (4,), torch.float32, torch.float32),
    "self 3-D": ((2, 3, 4), (4, 5), torch.float32, torch.float32),
    "mat2 0-D": ((3, 4), (), torch.float32, torch.float32),
    "shape mismatch": ((3, 4), (3, 5), torch.float32, torch.float32),
    "dtype mismatch": ((3, 4), (4, 5), torch.float32, torch.float64),
    "dtype mismatch half": ((3, 4), (4, 5), torch.float16, torch.bfloat16),
    "shape and dtype mismatch": ((3, 4), (5, 5), torch.float32, torch.float64),
}


@pytest.mark.parametrize("case", sorted(BAD_ARGS))
def test_meta_errors_match_torch_mm(case):
    a_shape, b_shape, a_dtype, b_dtype = BAD_ARGS[case]
    expected = capture_error(lambda: torch.mm(torch.ones(a_shape, dtype=a_dtype), torch.ones(b_shape, dtype=b_dtype)))
    got = capture_error(lambda: cutlass_ops.mm(meta(*a_shape, dtype=a_dtype), meta(*b_shape, dtype=b_dtype)))
    assert expected[0] is not None
    assert got == expected


def test_meta_out_wrong_dtype_matches_torch_mm():
    expected = capture_error(lambda: torch.mm(torch.ones(3, 4), torch.ones(4, 5), out=torch.empty(3, 5,
                                                                                                  dtype=torch.float64)))
    got = capture_error(lambda: cutlass_ops.mm(meta(3, 4), meta(4, 5), out=meta(3, 5, dtype=torch.float64)))
    assert expected[0] is RuntimeError
    assert got == expected


def test_meta_out_resize_warns_like_torch_mm():
    with warnings.catch_warnings(record=True) as theirs:
        warnings.simplefilter("always")
        torch.mm(torch.ones(3, 4), torch.ones(4, 5), out=torch.empty(2, 2))
    out = meta(2, 2)
    with warnings.catch_warnings(record=True) as ours:
        warnings.simplefilter("always")
        cutlass_ops.mm(meta(3, 4), meta(4, 5), out=out)
    assert out.shape == (3, 5)
    assert [(w.category, str(w.message)) for w in ours] == [(w.category, str(w.message)) for w in theirs]


def test_meta_empty_out_resizes_silently():
    out = meta(0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cutlass_ops.mm(meta(3, 4), meta(4, 5), out=out)
    assert out.shape == (3, 5)


def test_meta_out_with_grad_refused_like_torch_mm():
    a = torch.ones(3, 4, requires_grad=True)
    expected = capture_error(lambda: torch.mm(a, torch.ones(4, 5), out=torch.empty(3, 5)))
    got = capture_error(lambda: cutlass_ops.mm(meta(3, 4).requires_grad_(), meta(4, 5), out=meta(3, 5)))
    assert expected[0] is RuntimeError
    assert got == expected


def test_meta_forced_kernel_name_is_validated():
    name = cutlass_ops.list_kernels()[0].name
    assert cutlass_ops.mm(meta(8, 8), meta(8, 8), kernel=name).shape == (8, 8)
    with pytest.raises(ValueError, match="unknown kernel 'no_such_kernel'"):
        cutlass_ops.mm(meta(8, 8), meta(8, 8), kernel="no_such_kernel")


def test_fake_cuda_tensors_get_shapes_from_the_meta_kernels():
    """torch.compile traces with fake tensors: fake CUDA tensors need no GPU."""
    from torch._subclasses.fake_tensor import FakeTensor, FakeTensorMode

    with FakeTensorMode():
        a = torch.empty(64, 32, dtype=torch.bfloat16, device="cuda")
        b = torch.empty(32, 16, dtype=torch.bfloat16, device="cuda")
        c = cutlass_ops.mm(a, b)
        out = torch.empty(0, dtype=torch.bfloat16, device="cuda")
        result = cutlass_ops.mm(a, b, out=out)
    assert isinstance(c, FakeTensor) and c.device.type == "cuda"
    assert c.shape == (64, 16) and c.dtype == torch.bfloat16
    assert result is out and out.shape == (64, 16)


@pytest.mark.parametrize("requires_grad", [False, True])
def test_opcheck_on_meta_tensors(requires_grad):
    """Schema, fake-tensor, autograd-registration and dynamic-shape AOT checks."""
    a = meta(64, 32).requires_grad_(requires_grad)
    b = meta(32, 16).requires_grad_(requires_grad)
    torch.library.opcheck(torch.ops.cutlass_ops.mm.default, (a, b))
    if not requires_grad:
        torch.library.opcheck(torch.ops.cutlass_ops.mm.out, (a, b), {"out": meta(64, 16)})
        name = cutlass_ops.list_kernels()[0].name
        torch.library.opcheck(torch.ops.cutlass_ops.mm_with_kernel.default, (a, b, name))


def test_mm_autograd_on_meta_builds_a_graph():
    a = meta(6, 4).requires_grad_()
    b = meta(4, 5).requires_grad_()
    c = cutlass_ops.mm(a, b)
    assert c.requires_grad and c.grad_fn is not None
    ga, gb = torch.autograd.grad(c, (a, b), meta(6, 5))
    assert ga.shape == a.shape and gb.shape == b.shape


def strided_leaf(rows, cols, column_major):
    strides = (1, rows) if column_major else (cols, 1)
    return torch.empty_strided((rows, cols), strides, device="meta", requires_grad=True)


@pytest.mark.parametrize("a_col", [False, True])
@pytest.mark.parametrize("b_col", [False, True])
def test_gradients_take_their_inputs_layout_like_torch_mm(a_col, b_col):
    """torch.mm's backward gives a column-major input a column-major gradient (so the weight of
    x @ w.t() gets a gradient laid out like w); cutlass_ops.mm's must do the same."""
    m, n, k = 6, 5, 4
    grad = meta(m, n)
    ours, theirs = [], []
    for fn, grads in ((cutlass_ops.mm, ours), (torch.mm, theirs)):
        a, b = strided_leaf(m, k, a_col), strided_leaf(k, n, b_col)
        grads.extend(torch.autograd.grad(fn(a, b), (a, b), grad))
    assert [g.shape for g in ours] == [(m, k), (k, n)]
    assert [g.stride() for g in ours] == [g.stride() for g in theirs]
    assert ours[0].stride() == ((1, m) if a_col else (k, 1))
    assert ours[1].stride() == ((1, k) if b_col else (n, 1))


@pytest.mark.parametrize("op", ["mm", "mm_with_kernel"])
def test_out_variants_functionalize_to_the_functional_op(op):
    """torch.compile functionalizes: out= must become the functional op plus a copy into out
    (torch 2.11's generic fallback refuses custom ops that return an alias of out)."""
    from torch.fx.experimental.proxy_tensor import make_fx

    name = cutlass_ops.list_kernels()[0].name

    def f(a, b, out):
        if op == "mm":
            torch.ops.cutlass_ops.mm.out(a, b, out=out)
        else:
            torch.ops.cutlass_ops.mm_with_kernel.out(a, b, name, out=out)
        return out * 2

    graph = make_fx(torch.func.functionalize(f))(meta(8, 4), meta(4, 6), meta(8, 6))
    targets = [str(node.target) for node in graph.graph.nodes if node.op == "call_function"]
    assert targets[0] == f"cutlass_ops.{op}.default"
    assert "aten.copy_.default" in targets
    assert not any(".out" in t for t in targets)
    with pytest.raises(RuntimeError, match="shapes cannot be multiplied"):
        make_fx(torch.func.functionalize(f))(meta(8, 4), meta(5, 6), meta(8, 6))


# ---- bmm, baddbmm, matmul ---------------------------------------------------------------------

BATCHED_SHAPES = [(3, 5, 6, 4), (1, 1, 1, 1), (0, 5, 6, 4), (3, 0, 6, 4), (3, 5, 0, 4), (3, 5, 6, 0)]


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32, torch.float64])
@pytest.mark.parametrize("b,m,n,k", BATCHED_SHAPES)
def test_meta_bmm_and_baddbmm_shapes(dtype, b, m, n, k):
    x, y = meta(b, m, k, dtype=dtype), meta(b, k, n, dtype=dtype)
    out = cutlass_ops.bmm(x, y)
    assert out.device.type == "meta" and out.shape == (b, m, n) and out.dtype == dtype and out.is_contiguous()
    for input_shape in [(b, m, n), (m, n), (n,), (1, 1, n), (b, 1, n), (b, m, 1), ()]:
        theirs = torch.baddbmm(meta(*input_shape, dtype=dtype), x, y, beta=0.5)
        ours = cutlass_ops.baddbmm(meta(*input_shape, dtype=dtype), x, y, beta=0.5)
        assert ours.shape == theirs.shape == (b, m, n) and ours.dtype == dtype, input_shape


MATMUL_SHAPES = [((7,), (7,)), ((5, 7), (7,)), ((7,), (7, 3)), ((7,), (2, 7, 3)), ((2, 5, 7), (7,)),
                 ((2, 5, 7), (7, 3)), ((5, 7), (2, 7, 3)), ((2, 5, 7), (2, 7, 3)), ((2, 1, 5, 7), (1, 3, 7, 4)),
                 ((2, 3, 1, 5, 7), (3, 4, 7, 6)), ((0, 5, 7), (7, 3)), ((2, 5, 0), (2, 0, 3))]


@pytest.mark.parametrize("a_shape,b_shape", MATMUL_SHAPES, ids=str)
def test_meta_matmul_shapes_match_torch(a_shape, b_shape):
    ours = cutlass_ops.matmul(meta(*a_shape), meta(*b_shape))
    theirs = torch.matmul(meta(*a_shape), meta(*b_shape))
    assert ours.device.type == "meta" and ours.shape == theirs.shape and ours.dtype == theirs.dtype


def test_meta_batched_out_variants_return_and_resize_out():
    x, y = meta(3, 5, 4), meta(3, 4, 6)
    out = meta(3, 5, 6)
    assert cutlass_ops.bmm(x, y, out=out) is out
    out = meta(0)
    assert cutlass_ops.baddbmm(meta(6), x, y, out=out) is out and out.shape == (3, 5, 6)
    transposed = meta(3, 6, 5).transpose(1, 2)
    cutlass_ops.bmm(x, y, out=transposed)
    assert transposed.stride() == (30, 1, 5)  # a right-shaped out keeps its strides


BATCHED_BAD_ARGS = {
    # case: (torch function, shapes, dtypes)
    "bmm: 2-D": ("bmm", [(3, 4), (2, 4, 5)], None),
    "bmm: 4-D": ("bmm", [(2, 3, 4), (1, 2, 4, 5)], None),
    "bmm: batch sizes differ": ("bmm", [(2, 3, 4), (3, 4, 5)], None),
    "bmm: inner sizes differ": ("bmm", [(2, 3, 4), (2, 5, 5)], None),
    "bmm: dtypes differ": ("bmm", [(2, 3, 4), (2, 4, 5)], [torch.float32, torch.float64]),
    "baddbmm: input does not broadcast": ("baddbmm", [(4,), (2, 3, 4), (2, 4, 5)], None),
    "baddbmm: input 4-D": ("baddbmm", [(1, 2, 3, 5), (2, 3, 4), (2, 4, 5)], None),
    "baddbmm: input dtype": ("baddbmm", [(5,), (2, 3, 4), (2, 4, 5)], [torch.float64, torch.float32, torch.float32]),
    "baddbmm: batch dtype": ("baddbmm", [(5,), (2, 3, 4), (2, 4, 5)], [torch.float32, torch.float32, torch.float16]),
    "matmul: 0-D": ("matmul", [(), (4,)], None),
    "matmul: vectors differ": ("matmul", [(4,), (5,)], None),
    "matmul: inner sizes differ": ("matmul", [(2, 3, 4), (2, 5, 6)], None),
    "matmul: batches do not broadcast": ("matmul", [(2, 3, 4), (3, 4, 6)], None),
}


@pytest.mark.parametrize("case", list(BATCHED_BAD_ARGS))
def test_meta_batched_errors_have_torch_types(case):
    """The exception type torch raises for the same arguments on the CPU (the messages of the
    meta kernels may be worded like torch's CUDA checks)."""
    name, shapes, dtypes = BATCHED_BAD_ARGS[case]
    dtypes = dtypes or [torch.float32] * len(shapes)
    expected = capture_error(lambda: getattr(torch, name)(*(torch.ones(s, dtype=d) for s, d in zip(shapes, dtypes))))
    got = capture_error(lambda: getattr(cutlass_ops, name)(*(meta(*s, dtype=d) for s, d in zip(shapes, dtypes))))
    assert expected[0] is not None
    assert got[0] is expected[0], (got, expected)


def test_meta_batched_out_with_grad_refused_like_torch():
    a = torch.ones(2, 3, 4, requires_grad=True)
    expected = capture_error(lambda: torch.bmm(a, torch.ones(2, 4, 5), out=torch.empty(2, 3, 5)))
    got = capture_error(lambda: cutlass_ops.bmm(meta(2, 3, 4).requires_grad_(), meta(2, 4, 5), out=meta(2, 3, 5)))
    assert expected[0] is RuntimeError
    assert got == expected
    expected = capture_error(lambda: torch.baddbmm(torch.ones(5), a, torch.ones(2, 4, 5), out=torch.empty(2, 3, 5)))
    got = capture_error(lambda: cutlass_ops.baddbmm(meta(5), meta(2, 3, 4).requires_grad_(), meta(2, 4, 5),
                                                    out=meta(2, 3, 5)))
    assert expected[0] is RuntimeError
    assert got == expected


def test_fake_cuda_batches_get_shapes_from_the_meta_kernels():
    from torch._subclasses.fake_tensor import FakeTensor, FakeTensorMode

    with FakeTensorMode():
        q = torch.empty(8, 128, 64, dtype=torch.bfloat16, device="cuda")
        k = torch.empty(8, 128, 64, dtype=torch.bfloat16, device="cuda")
        scores = cutlass_ops.bmm(q, k.transpose(1, 2))
        added = cutlass_ops.baddbmm(torch.empty(64, dtype=torch.bfloat16, device="cuda"), scores, k)
        heads = cutlass_ops.matmul(q.view(2, 4, 128, 64), k.view(2, 4, 128, 64).transpose(-1, -2))
    for t, shape in ((scores, (8, 128, 128)), (added, (8, 128, 64)), (heads, (2, 4, 128, 128))):
        assert isinstance(t, FakeTensor) and t.device.type == "cuda" and t.shape == shape
        assert t.dtype == torch.bfloat16


@pytest.mark.parametrize("requires_grad", [False, True])
def test_batched_opcheck_on_meta_tensors(requires_grad):
    a = meta(3, 16, 8).requires_grad_(requires_grad)
    b = meta(3, 8, 12).requires_grad_(requires_grad)
    c = meta(12).requires_grad_(requires_grad)
    ops = torch.ops.cutlass_ops
    torch.library.opcheck(ops.bmm.default, (a, b))
    torch.library.opcheck(ops.baddbmm.default, (c, a, b), {"beta": 0.5, "alpha": 2.0})
    torch.library.opcheck(ops.matmul.default, (meta(2, 1, 16, 8).requires_grad_(requires_grad),
                                               meta(1, 3, 8, 12).requires_grad_(requires_grad)))
    if not requires_grad:
        torch.library.opcheck(ops.bmm.out, (a, b), {"out": meta(3, 16, 12)})
        torch.library.opcheck(ops.baddbmm.out, (c, a, b), {"beta": 0.5, "out": meta(3, 16, 12)})


def test_bmm_autograd_on_meta_builds_a_graph():
    a, b, c = meta(3, 6, 4).requires_grad_(), meta(3, 4, 5).requires_grad_(), meta(5).requires_grad_()
    y = cutlass_ops.baddbmm(c, a, b, beta=0.5) + cutlass_ops.bmm(a, b)
    assert y.requires_grad and y.grad_fn is not None
    gc, ga, gb = torch.autograd.grad(y, (c, a, b), meta(3, 6, 5))
    assert gc.shape == c.shape and ga.shape == a.shape and gb.shape == b.shape


@pytest.mark.parametrize("op", ["bmm", "baddbmm"])
def test_batched_out_variants_functionalize_to_the_functional_op(op):
    from torch.fx.experimental.proxy_tensor import make_fx

    def f(c, a, b, out):
        if op == "bmm":
            torch.ops.cutlass_ops.bmm.out(a, b, out=out)
        else:
            torch.ops.cutlass_ops.baddbmm.out(c, a, b, beta=0.5, out=out)
        return out * 2

    graph = make_fx(torch.func.functionalize(f))(meta(6), meta(2, 8, 4), meta(2, 4, 6), meta(2, 8, 6))
    targets = [str(node.target) for node in graph.graph.nodes if node.op == "call_function"]
    assert targets[0] == f"cutlass_ops.{op}.default"
    assert "aten.copy_.default" in targets
    assert not any(".out" in t for t in targets)
