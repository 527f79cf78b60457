"""The accuracy judge every GPU test and the fuzzer use (cutlass_ops.testing.reference_error):
where it draws its lines. A looser judge would pass them all, so its limits are pinned here on
constructed errors of known size."""

import torch

from cutlass_ops.testing import ERROR_FLOOR, product_magnitude, reference_error


def problem(m=256, n=256, k=64, seed=0):
    """A float64 product, the norm its errors are measured against, and a random unit direction
    to put an error of a chosen relative size along."""
    g = torch.Generator().manual_seed(seed)
    a = torch.randn(m, k, generator=g, dtype=torch.float64)
    b = torch.randn(k, n, generator=g, dtype=torch.float64)
    ref = a @ b
    den = max(ref.norm().item(), product_magnitude(a, b).norm().item())
    direction = torch.randn(m, n, generator=g, dtype=torch.float64)
    return a, b, ref, den, direction / direction.norm()


def off_by(ref, den, direction, rel):
    """ref with a norm-wise relative error of exactly `rel`."""
    return ref + direction * rel * den


def test_the_floors_are_these():
    assert ERROR_FLOOR == {"f16": 1e-3, "bf16": 8e-3, "tf32": 2e-3, "f32": 1e-5, "f64": 1e-12}


def test_ours_may_be_at_most_twice_torchs_error_above_the_floor():
    a, b, ref, den, d = problem()
    theirs = off_by(ref, den, d, 1e-4)  # ten times float32's floor
    assert reference_error(off_by(ref, den, d, 1.9e-4), theirs, a, b, "f32") is None
    assert "relative error" in reference_error(off_by(ref, den, d, 3e-4), theirs, a, b, "f32")


def test_below_torchs_error_the_precisions_floor_decides():
    a, b, ref, den, d = problem()
    for precision, floor in ERROR_FLOOR.items():
        assert reference_error(off_by(ref, den, d, 0.5 * floor), ref, a, b, precision) is None, precision
        assert reference_error(off_by(ref, den, d, 2.0 * floor), ref, a, b, precision) is not None, precision


def test_one_wrong_element_cannot_hide_in_the_norm():
    a, b, ref, den, _ = problem()
    scale = max(ref.abs().max().item(), product_magnitude(a, b).max().item())
    wrong = ref.clone()
    wrong[17, 33] += 0.05 * scale
    assert (wrong - ref).norm().item() / den < ERROR_FLOOR["bf16"]  # norm-wise within bf16's floor
    assert "worst element" in reference_error(wrong, ref, a, b, "bf16")


def test_an_unwritten_or_zero_result_fails():
    a, b, ref, den, _ = problem(m=32, n=16, k=8)
    theirs = ref.float()
    assert "non-finite" in reference_error(torch.full_like(theirs, float("nan")), theirs, a.float(), b.float(), "f32")
    assert "relative error" in reference_error(torch.zeros_like(theirs), theirs, a.float(), b.float(), "f32")
    assert reference_error(theirs, theirs, a.float(), b.float(), "f32") is None
