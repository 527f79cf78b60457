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
