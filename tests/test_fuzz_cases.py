"""The fuzzer's case generation (no GPU): seeded, reproducible, biased to edges, replayable."""

import json

from cutlass_ops import fuzz


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


def test_cases_replay_from_their_line():
    case = next(fuzz.generate(1, seed=3))
    assert fuzz.Case(**json.loads(case.line())) == case


def test_curated_set_is_large_and_small():
    cases = fuzz.curated()
    assert len(cases) >= 200
    assert {c.precision for c in cases} == {"f16", "bf16", "tf32", "f32", "f64"}
    assert {c.out for c in cases} == set(fuzz.OUT_FORMS)
    assert all(c.m * c.n * c.k <= 300 * 300 * 1000 for c in cases)
