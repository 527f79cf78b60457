"""The fuzzer's case generation (no GPU): seeded, reproducible, biased to edges, replayable;
and its accuracy rule (cutlass_ops.testing), which the tests share."""

import json

import torch

from cutlass_ops import fuzz
from cutlass_ops.testing import product_magnitude, reference_error


def test_generation_is_seeded_and_covers_the_space():
    cases = list(fuzz.generate(2000, seed=7, kernels=["k_a", "k_b"]))
    assert cases == list(fuzz.generate(2000, seed=7, kernels=["k_a", "k_b"]))
    assert cases != list(fuzz.generate(2000, seed=8, kernels=["k_a", "k_b"]))
    assert {c.precision for c in cases} == {"f16", "bf16", "tf32", "f32", "f64"}
    assert {c.out for c in cases} == set(fuzz.OUT_FORMS)
    assert {c.layout_a for c in cases} == {"r", "c"} and {c.layout_b for c in cases} == {"r", "c"}
    dims = [d for c in cases for d in (c.m, c.n, c.k)]
    assert 0 in dims and 1 in dims and max(dims) > 1100 and any(d % 8 for d in dims)
    assert any(c.offset_a % 8 for c in cases) and any(c.pad_b for c in cases)
    assert any(c.kernel for c in cases) and any(c.kernel is None for c in cases)
    assert all(c.m * c.n * c.k <= 4_000_000_000 for c in cases)
    # A quarter are batches, some with an operand shared by the whole batch; batches are never forced.
    batches = [c for c in cases if c.batch > 1]
    assert 0.2 <= len(batches) / len(cases) <= 0.3 and {c.shared for c in batches} == {"", "a", "b"}
    assert all(c.kernel is None and c.batch * c.m * c.n * c.k <= 4_000_000_000 for c in batches)


def test_generation_covers_addmm_and_linear():
    cases = list(fuzz.generate(2000, seed=5, kernels=["k_a"]))
    singles = [c for c in cases if c.batch == 1 and c.kernel is None]
    addmm = [c for c in singles if c.op == "addmm"]
    linear = [c for c in singles if c.op == "linear"]
    assert 0.15 <= len(addmm) / len(singles) <= 0.25 and 0.1 <= len(linear) / len(singles) <= 0.2
    assert {c.input for c in addmm} == {"n", "1n", "m1", "mn"}
    assert 0.0 in {c.beta for c in addmm} and {c.alpha for c in addmm} > {1.0}
    assert {c.activation for c in linear} == set(fuzz.ACTIVATIONS) and {c.input for c in linear} == {"n", ""}
    # addmm takes out= (never one overlapping an input); linear has none; forced kernels and
    # batches stay plain products.
    assert {c.out for c in addmm} > {"none"} and "overlap" not in {c.out for c in addmm}
    assert {c.out for c in linear} == {"none"}
    assert all(c.op == "mm" for c in cases if c.batch > 1 or c.kernel)
    line = json.loads(addmm[0].line())
    assert fuzz.Case(**line) == addmm[0] and line["op"] == "addmm"


def test_epilogue_reference_is_the_ops_result():
    # reference_error judges an addmm against its own float64 result when given one: the
    # product alone is no reference for beta * input + alpha * A @ B.
    g = torch.Generator().manual_seed(0)
    a, b = torch.randn(40, 30, generator=g), torch.randn(30, 20, generator=g)
    bias = torch.randn(20, generator=g)
    ref = 2.0 * (a.double() @ b.double()) + bias.double()
    good = torch.addmm(bias, a, b, alpha=2.0)
    magnitude = 2.0 * product_magnitude(a, b) + bias.double().abs()
    theirs = 2.0 * (a @ b) + bias  # torch's result computed another way
    assert reference_error(good, theirs, a, b, "f32", ref=ref, magnitude=magnitude) is None
    wrong = torch.addmm(bias, a, b)  # alpha dropped
    assert "relative error" in reference_error(wrong, theirs, a, b, "f32", ref=ref, magnitude=magnitude)
    assert "relative error" in reference_error(torch.zeros_like(good), theirs, a, b, "f32", ref=ref,
                                               magnitude=magnitude)


def test_cases_replay_from_their_line():
    case = next(fuzz.generate(1, seed=3))
    assert fuzz.Case(**json.loads(case.line())) == case


def test_curated_set_is_large_and_small():
    cases = fuzz.curated()
    assert len(cases) >= 200
    assert {c.precision for c in cases} == {"f16", "bf16", "tf32", "f32", "f64"}
    assert {c.out for c in cases} == set(fuzz.OUT_FORMS)
    assert all(c.m * c.n * c.k <= 300 * 300 * 1000 for c in cases)
    assert {(c.batch > 1, c.shared) for c in cases} >= {(True, ""), (True, "a"), (True, "b"), (False, "")}
    epilogues = [c for c in cases if c.op != "mm"]
    assert {c.precision for c in epilogues} == {"f16", "bf16", "tf32", "f32", "f64"}
    assert {c.input for c in epilogues if c.op == "addmm"} == {"n", "1n", "m1", "mn"}
    assert 0.0 in {c.beta for c in epilogues if c.op == "addmm"}
    assert {c.activation for c in epilogues if c.op == "linear"} == set(fuzz.ACTIVATIONS)
    assert {c.input for c in epilogues if c.op == "linear"} == {"n", ""}


def _tf32(x: torch.Tensor) -> torch.Tensor:
    """x with its float32 mantissas rounded to TF32's 10 bits (round to nearest even)."""
    bits = x.float().view(torch.int32)
    rounded = (bits + 0xFFF + ((bits >> 13) & 1)) & ~0x1FFF
    return rounded.view(torch.float32)


def test_rounding_error_on_cancelling_outputs_is_not_a_failure():
    """Two outputs of a long product whose sums land near zero: TF32 rounding of the inputs is
    all that separates the result from float64, and it must pass at the TF32 floor however
    small the sums came out. A result with a wrong element must still fail."""
    gen = torch.Generator().manual_seed(7)
    a = torch.randn(1, 4000, generator=gen)
    b = torch.randn(4000, 2, generator=gen)
    # Make both outputs cancel: move each column of B so that A @ B is about zero.
    b -= a.t() @ (a @ b) / (a @ a.t())
    exact = a.double() @ b.double()
    assert exact.abs().max() < 1e-4 * product_magnitude(a, b).max()  # the sums cancel
    rounded = (_tf32(a).double() @ _tf32(b).double()).float()
    error = (rounded.double() - exact).norm()
    assert error > 1e-4 * product_magnitude(a, b).norm()  # a real TF32 error, above the sums...
    assert reference_error(rounded, exact.float(), a, b, "tf32") is None  # ...within TF32's floor
    wrong = rounded.clone()
    wrong[0, 1] += 0.05 * product_magnitude(a, b)[0, 1]
    assert "error" in reference_error(wrong, exact.float(), a, b, "tf32")
