"""`python -m cutlass_ops fuzz`: random matmuls checked against float64 and torch.mm.

Every case draws M, N and K from 0 to ~4100 (biased to edges: 0, 1, primes, tile sizes +- 1,
non-multiples of 8), a dtype, a layout per operand (row- or column-major, padded leading
dims, storage offsets that break 16-byte alignment), an out= form (none, contiguous,
column-major, strided, wrong-shaped, overlapping an input) and either auto dispatch or a
registered kernel that accepts the problem. The output is poisoned with NaNs first, so an
element no kernel writes shows up. Cases are seeded: a failure prints the one line that
replays it (`python -m cutlass_ops fuzz --replay "<case>"`).

Of the single products, a fifth are `addmm` (an input of shape (N,), (1, N), (M, 1) or (M, N),
beta and alpha among 0, 1 and others; with beta = 0 the input holds NaN, which must not show)
and a seventh `linear` (the weight is B's transpose, an optional bias, each activation), checked
against the float64 result of the same op beside torch's own.

A quarter of the cases are batches (bmm: 2-5 matrices each in its layout, with padding between
the matrices or one matrix shared by the whole batch, batch stride 0), checked matrix by matrix.

`--curated` runs a fixed edge-case set (>= 200 cases, small shapes, batches, addmm and linear
among them) instead: the set `scripts/sanitize.sh` runs under compute-sanitizer.
"""

from __future__ import annotations

import json
import random
import sys
import time
import warnings
from dataclasses import asdict, dataclass, replace
from typing import Iterator, Optional

import torch
import torch.nn.functional as F

from . import ops, precisions
from .testing import PRECISIONS, matrix, poison_allocator, product_magnitude, reference_error

EDGE = [0, 1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129, 255, 256, 257, 511, 512, 513]
PRIMES = [p for p in range(2, 1100) if all(p % d for d in range(2, int(p**0.5) + 1))]
OUT_FORMS = ["none", "none", "contiguous", "column_major", "strided", "wrong_shape", "overlap"]
ACTIVATIONS = {"": lambda x: x, "relu": F.relu, "gelu": F.gelu, "gelu_tanh": lambda x: F.gelu(x, approximate="tanh"),
               "silu": F.silu}


@dataclass(frozen=True)
class Case:
    m: int
    n: int
    k: int
    precision: str  # f16, bf16, tf32, f32, f64
    layout_a: str  # r or c
    layout_b: str
    pad_a: int = 0  # extra leading-dim elements
    pad_b: int = 0
    offset_a: int = 0  # storage offset, elements
    offset_b: int = 0
    out: str = "none"  # see OUT_FORMS
    kernel: Optional[str] = None  # forced kernel, or None for auto (batches: always auto)
    seed: int = 0  # the values
    batch: int = 1  # > 1: a bmm of this many matrices
    shared: str = ""  # a batch's operand shared by every matrix (batch stride 0): "", "a" or "b"
    op: str = "mm"  # "mm", "addmm" or "linear" (single products only)
    input: str = ""  # addmm's input shape ("n", "1n", "m1", "mn"); linear: "n" for a bias, "" for none
    beta: float = 1.0  # addmm
    alpha: float = 1.0  # addmm
    activation: str = ""  # linear: "", "relu", "gelu", "gelu_tanh" or "silu"

    def line(self) -> str:
        return json.dumps(asdict(self), separators=(",", ":"))


def _dim(rng: random.Random) -> int:
    r = rng.random()
    if r < 0.40:
        return rng.choice(EDGE)
    if r < 0.65:
        return rng.choice(PRIMES)
    if r < 0.90:
        return rng.randint(1, 1100)
    return rng.randint(1, 4100)


def generate(count: int, seed: int = 0, kernels: Optional[list[str]] = None) -> Iterator[Case]:
    """`count` random cases; `kernels` are the names a case may force (those that run here)."""
    rng = random.Random(seed)
    for i in range(count):
        m, n, k = _dim(rng), _dim(rng), _dim(rng)
        # Keep the float64 reference and the SIMT paths quick: at most ~4e9 multiply-adds.
        while m * n * k > 4_000_000_000:
            m, n, k = max(1, m // 2), max(1, n // 2), k
        precision = rng.choice(list(PRECISIONS))
        aligned = rng.random() < 0.5  # half the cases keep every operand 16-byte friendly
        pad = (lambda: 0) if aligned else (lambda: rng.choice([0, 0, 1, 3, 8, 64]))
        offset = (lambda: 0) if aligned else (lambda: rng.choice([0, 0, 1, 2, 5, 8]))
        kernel = None
        batch, shared = 1, ""
        if rng.random() < 0.25:
            batch, shared = rng.choice([2, 3, 5]), rng.choice(["", "", "a", "b"])
            while batch * m * n * k > 4_000_000_000:
                m, n = max(1, m // 2), max(1, n // 2)
        elif kernels and rng.random() < 0.3:
            kernel = rng.choice(kernels)
        case = Case(m, n, k, precision, rng.choice("rc"), rng.choice("rc"), pad(), pad(), offset(), offset(),
                    rng.choice(OUT_FORMS), kernel, seed * 1_000_003 + i, batch, shared)
        if batch == 1 and kernel is None:
            r = rng.random()
            out = case.out if case.out != "overlap" else "none"
            if r < 0.20:
                case = replace(case, op="addmm", input=rng.choice(["n", "1n", "m1", "mn"]), out=out,
                               beta=rng.choice([1.0, 1.0, 0.0, 0.5, -2.0]), alpha=rng.choice([1.0, 1.0, 0.5, -1.5]))
            elif r < 0.35:
                case = replace(case, op="linear", input=rng.choice(["n", ""]), out="none",
                               activation=rng.choice(list(ACTIVATIONS)))
        yield case


def curated() -> list[Case]:
    """A fixed edge-case set: every precision and layout pair on small edge shapes, with each
    out= form and alignment-breaking offsets in turn. Small enough for compute-sanitizer."""
    shapes = [(1, 1, 1), (7, 9, 13), (127, 129, 65), (128, 256, 64), (257, 263, 129), (8, 8, 0), (0, 8, 8),
              (33, 1, 17), (1, 77, 333), (200, 17, 1000)]
    cases = []
    i = 0
    for precision in PRECISIONS:
        for la in "rc":
            for lb in "rc":
                for m, n, k in shapes:
                    out = OUT_FORMS[i % len(OUT_FORMS)]
                    offset = 1 if i % 3 == 0 else 0
                    cases.append(Case(m, n, k, precision, la, lb, pad_a=i % 2, pad_b=0, offset_a=offset,
                                      offset_b=0, out=out, seed=i))
                    i += 1
    # Batches: every precision and layout pair on a few edge shapes, shared operands and padded
    # batch strides in turn.
    for precision in PRECISIONS:
        for la in "rc":
            for lb in "rc":
                for m, n, k in [(1, 1, 1), (7, 9, 13), (127, 129, 65), (33, 8, 0)]:
                    cases.append(Case(m, n, k, precision, la, lb, pad_a=i % 2, offset_a=1 if i % 3 == 0 else 0,
                                      out=OUT_FORMS[i % len(OUT_FORMS)], seed=i, batch=3,
                                      shared=("", "a", "b")[i % 3]))
                    i += 1
    # addmm and linear: every precision, each addmm input shape, beta = 0 among the betas, each
    # activation, with and without a bias; 16-byte aligned shapes the fused-epilogue builds take
    # (257 rows: the swapped 144-row tiles) beside odd ones and K = 0.
    inputs, activations = ["n", "1n", "m1", "mn"], list(ACTIVATIONS)
    c = 0  # counts the pairs, so that each choice cycles through all its values
    for precision in PRECISIONS:
        for j, (m, n, k) in enumerate([(1, 1, 1), (7, 9, 13), (128, 256, 64), (257, 264, 136), (33, 8, 0),
                                       (200, 17, 1000)]):
            cases.append(Case(m, n, k, precision, "r", "rc"[j % 2], offset_a=1 if c % 3 == 0 else 0,
                              out=("none", "contiguous", "column_major", "strided", "wrong_shape")[c % 5], seed=i,
                              op="addmm", input=inputs[c % 4], beta=(1.0, 0.0, 0.5, -2.0)[(c // 2) % 4],
                              alpha=(1.0, 0.5, -1.5)[c % 3]))
            cases.append(Case(m, n, k, precision, "r", "cr"[j % 2], offset_b=1 if c % 3 == 1 else 0, seed=i + 1,
                              op="linear", input=("n", "")[c % 2], activation=activations[c % len(activations)]))
            i, c = i + 2, c + 1
    return cases


def _make_out(case: Case, dtype: torch.dtype) -> torch.Tensor:
    """The case's out tensor (a batch's: 3-D), filled with NaN so unwritten elements show."""
    m, n, nan = case.m, case.n, float("nan")
    lead = (case.batch,) if case.batch > 1 else ()
    if case.out == "contiguous":
        return torch.full((*lead, m, n), nan, dtype=dtype, device="cuda")
    if case.out == "column_major":
        return torch.full((*lead, n, m), nan, dtype=dtype, device="cuda").transpose(-1, -2)
    if case.out == "strided":
        return torch.full((*lead, m, 2 * n + 1), nan, dtype=dtype, device="cuda")[..., 1::2]
    assert case.out == "wrong_shape", case.out
    return torch.full((3, 5), nan, dtype=dtype, device="cuda")


def _batch(case: Case, rows: int, cols: int, dtype, layout: str, pad: int, offset: int, shared: bool, gen):
    """`case.batch` matrices, each `layout` with leading dim padded by `pad`, one after another
    (with `pad` more elements between them), or one matrix for all (batch stride 0)."""
    one = matrix(rows, cols, dtype, layout, ld_pad=pad, offset=offset, generator=gen)
    span = one.untyped_storage().nbytes() // one.element_size() - offset
    if shared:
        return one.unsqueeze(0).expand(case.batch, rows, cols)
    stride = span + pad
    base = torch.randn(offset + stride * case.batch, dtype=dtype, device="cuda", generator=gen)
    return base.as_strided((case.batch, rows, cols), (stride, *one.stride()), offset)


_KERNEL_DTYPES = {k.name: k.dtype for k in ops.list_kernels()}


def run_case(case: Case) -> Optional[str]:
    """None if cutlass_ops got the case right, else what went wrong."""
    dtype, tf32 = PRECISIONS[case.precision]
    previous_tf32 = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = tf32
    try:
        gen = torch.Generator(device="cuda").manual_seed(case.seed)
        if case.batch > 1:
            return _run_batch(case, dtype, gen)
        a = matrix(case.m, case.k, dtype, case.layout_a, ld_pad=case.pad_a, offset=case.offset_a, generator=gen)
        b = matrix(case.k, case.n, dtype, case.layout_b, ld_pad=case.pad_b, offset=case.offset_b, generator=gen)
        out = None
        if case.out == "overlap" and case.m * case.n > 0 and case.m * case.k > 0:
            # out is a view into a's own storage, half-way in: the result must not depend on
            # the order the kernel reads a and writes out.
            storage = torch.randn(case.m * case.k + case.m * case.n, dtype=dtype, device="cuda", generator=gen)
            a = storage[: case.m * case.k].view(case.m, case.k)
            out = storage[(case.m * case.k) // 2:(case.m * case.k) // 2 + case.m * case.n].view(case.m, case.n)
        elif case.out not in ("none", "overlap"):
            out = _make_out(case, dtype)
        if case.op != "mm":
            return _run_epilogue(case, a, b, out, dtype, gen)
        a_before, b_before = a.clone(), b.clone()
        kernel = case.kernel
        if kernel is not None:
            try:
                ops.explain(a, b, out=out, kernel=kernel)
            except ValueError:
                kernel = None  # the forced kernel cannot run this problem: auto dispatch instead
        if out is None:
            poison_allocator(case.m * case.n, dtype)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the resize warning of wrong-shaped outs
            result = ops.mm(a, b, out=out, kernel=kernel)
        if out is not None and result is not out:
            return "mm(out=) did not return out"
        precision = case.precision
        if kernel is not None:
            # A forced kernel computes at its own precision (a TF32, IEEE or 3xTF32 kernel sets
            # float32's itself); 3xTF32 is held to IEEE fp32's accuracy.
            precision = precisions.accuracy_of(_KERNEL_DTYPES[kernel])
            torch.backends.cuda.matmul.allow_tf32 = precision == "tf32"
        theirs = torch.mm(a_before, b_before)
        return reference_error(result, theirs, a_before, b_before, precision)
    except Exception as error:  # noqa: BLE001 - any exception on a valid case is a failure
        return f"{type(error).__name__}: {str(error).splitlines()[0]}"
    finally:
        torch.backends.cuda.matmul.allow_tf32 = previous_tf32


def _run_epilogue(case: Case, a, b, out, dtype, gen) -> Optional[str]:
    """An addmm or linear case: ours and torch's op on the same inputs, against float64."""
    m, n = case.m, case.n
    a64, b64 = a.double(), b.double()
    if case.op == "addmm":
        shape = {"n": (n,), "1n": (1, n), "m1": (m, 1), "mn": (m, n)}[case.input]
        inp = torch.randn(shape, dtype=dtype, device="cuda", generator=gen)
        if case.beta == 0:
            inp.fill_(float("nan"))  # beta = 0: the input is not read (torch.addmm's rule)
        inputs = [inp, a, b]
        before = [t.clone() for t in inputs]
        theirs = torch.addmm(inp, a, b, beta=case.beta, alpha=case.alpha)
        if out is None:
            poison_allocator(m * n, dtype)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the resize warning of wrong-shaped outs
            ours = ops.addmm(inp, a, b, beta=case.beta, alpha=case.alpha, out=out)
        if out is not None and ours is not out:
            return "addmm(out=) did not return out"
        ref = case.alpha * (a64 @ b64)
        magnitude = abs(case.alpha) * product_magnitude(a, b)
        if case.beta != 0:
            ref = ref + case.beta * inp.double()
            magnitude = magnitude + abs(case.beta) * inp.double().abs()
    else:
        weight = b.t()  # (N, K): B's layout decides how the weight is stored
        bias = torch.randn(n, dtype=dtype, device="cuda", generator=gen) if case.input == "n" else None
        act = ACTIVATIONS[case.activation]
        inputs = [a, b, *([bias] if bias is not None else [])]
        before = [t.clone() for t in inputs]
        theirs = act(F.linear(a, weight, bias))
        poison_allocator(m * n, dtype)
        ours = ops.linear(a, weight, bias, activation=case.activation or None)
        ref, magnitude = a64 @ b64, product_magnitude(a, b)
        if bias is not None:
            ref, magnitude = ref + bias.double(), magnitude + bias.double().abs()
        ref = act(ref)
    if not all(torch.allclose(x, y, rtol=0, atol=0, equal_nan=True) for x, y in zip(inputs, before)):
        return f"{case.op} changed an input"
    if tuple(ours.shape) != (m, n):
        return f"{case.op} gave shape {tuple(ours.shape)}"
    return reference_error(ours, theirs, a, b, case.precision, ref=ref, magnitude=magnitude)


def _run_batch(case: Case, dtype: torch.dtype, gen: torch.Generator) -> Optional[str]:
    """A bmm case: each matrix of the result against torch.mm's on the same matrices."""
    a = _batch(case, case.m, case.k, dtype, case.layout_a, case.pad_a, case.offset_a, case.shared == "a", gen)
    b = _batch(case, case.k, case.n, dtype, case.layout_b, case.pad_b, case.offset_b, case.shared == "b", gen)
    out = _make_out(case, dtype) if case.out not in ("none", "overlap") else None
    a_before, b_before = a.clone(), b.clone()
    if out is None:
        poison_allocator(case.batch * case.m * case.n, dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the resize warning of wrong-shaped outs
        result = ops.bmm(a, b, out=out)
    if out is not None and result is not out:
        return "bmm(out=) did not return out"
    if tuple(result.shape) != (case.batch, case.m, case.n):
        return f"bmm gave shape {tuple(result.shape)}"
    for i in range(case.batch):
        why = reference_error(result[i], torch.mm(a_before[i], b_before[i]), a_before[i], b_before[i],
                              case.precision)
        if why is not None:
            return f"matrix {i} of the batch: {why}"
    return None


def main(args) -> int:
    if not torch.cuda.is_available():
        print("fuzz needs a CUDA device", file=sys.stderr)
        return 2
    if args.replay:
        case = Case(**json.loads(args.replay))
        why = run_case(case)
        print("ok" if why is None else f"FAIL: {why}")
        return 0 if why is None else 1
    capability = torch.cuda.get_device_capability()
    names = [k.name for k in ops.list_kernels(capability)]
    cases = curated() if args.curated else list(generate(args.cases, args.seed, names))
    start = time.perf_counter()
    failures = []
    forced = 0
    for i, case in enumerate(cases, 1):
        why = run_case(case)
        forced += case.kernel is not None
        if why is not None:
            failures.append((case, why))
            print(f"FAIL {why}\n  replay: python -m cutlass_ops fuzz --replay '{case.line()}'", flush=True)
        if args.progress and i % 500 == 0:
            print(f"  {i}/{len(cases)} cases, {len(failures)} failures, {time.perf_counter() - start:.0f} s", flush=True)
    torch.cuda.synchronize()
    kind = "curated" if args.curated else f"seed {args.seed}"
    print(f"fuzz ({kind}): {len(cases)} cases, {len(failures)} failures, {forced} with a forced kernel, "
          f"{time.perf_counter() - start:.1f} s")
    return 1 if failures else 0
