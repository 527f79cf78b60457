"""What `sweep --retime` reports of a changed launch (cutlass_ops/calibration/sweep.py,
retime_summary): each kernel's stored times before over after, on the candidates it held before.
CPU only."""

import math

import pytest

from cutlass_ops.calibration import sweep


def _candidate(kernel, us, slices=1, decomposition="data-parallel"):
    return ["in-place", kernel, decomposition, slices, us, 5]


def test_each_kernel_is_judged_on_the_candidates_it_held_before():
    rows = [{"id": f"r{i}", "c": [_candidate("k", 10.0), _candidate("other", 7.0)]} for i in range(10)]
    rows.append({"id": "r10", "c": [_candidate("k", 10.0, slices=2)]})  # timed before at 2 slices only
    # k twice as fast on r0, 1% slower on r1 (noise), 25% slower on r2, level elsewhere.
    new = {f"r{i}": [_candidate("k", us)] for i, us in enumerate([5.0, 10.1, 12.5] + [10.0] * 7)}
    new["r10"] = [_candidate("k", 3.0, slices=4)]  # a slice count the rows never held: no former time
    new["r9"].append(_candidate("k", None, decomposition="split-k"))  # untimed, and new
    summary = sweep.retime_summary(rows, new)
    assert list(summary) == ["k"]  # "other" was not timed again
    k = summary["k"]
    ratios = sorted([2.0, 10 / 10.1, 0.8] + [1.0] * 7)
    assert k["candidates"] == 10
    assert k["former_over_new"] == pytest.approx(math.exp(sum(map(math.log, ratios)) / 10), abs=1e-4)
    assert (k["p10"], k["p90"]) == (pytest.approx(0.8), pytest.approx(1.0))  # nearest rank: 1st and 9th of 10
    assert (k["faster"], k["slower"]) == (1, 1)  # 1% slower is inside the noise
    assert sweep.describe_retime("k", k) == (
        f"  k: 10 candidates, former / new time {k['former_over_new']:.3f} (p10 0.800, p90 1.000; faster 1, "
        "slower 1 beyond 3%)")
