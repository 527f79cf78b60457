"""`python -m cutlass_ops compare`: the timings of one device's sweep that another device's sweep
of the same problems contradicts (cutlass_ops/calibration/compare.py). CPU only: the stored
sweeps."""

from pathlib import Path

import pytest

from cutlass_ops.calibration import compare

ROOT = Path(__file__).resolve().parent.parent
H100 = ROOT / "benchmarks" / "sweep" / "sm90_132sm_nvidia_h100_80gb_hbm3"
H200 = ROOT / "benchmarks" / "sweep" / "sm90_132sm_nvidia_h200"


def _row(rid, timings, shape=(8, 16, 32, "rr"), split="train"):
    m, n, k, layout = shape
    return {"id": rid, "m": m, "n": n, "k": k, "layout": layout, "split": split, "precision": "bf16",
            "layouts": layout, "problem": [m, n, k], "align": [8, 8, 8],
            "c": [[variant, kernel, "data-parallel", 1, us, 5] for (variant, kernel), us in timings.items()]}


def test_timings_beyond_the_factor_either_way_are_contradicted(monkeypatch):
    first = {("bf16", "r1"): _row("r1", {("in-place", "a"): 10.0, ("in-place", "b"): 21.0, ("staged-col-b", "c"): 3.0,
                                         ("in-place", "d"): 5.0})}
    second = {("bf16", "r1"): _row("r1", {("in-place", "a"): 5.5, ("in-place", "b"): 10.0, ("staged-col-b", "c"): 7.0,
                                          ("in-place", "e"): 4.0})}
    monkeypatch.setattr(compare, "_rows", lambda folder: first if folder == Path("first") else second)
    result = compare.compare(Path("first"), Path("second"))
    assert (result.problems, result.timings) == (1, 3)  # d and e were timed on one device only
    assert [c.candidate[1] for c in result.slower] == ["b"]  # 2.1x; a's 1.82x is within the factor
    assert [c.candidate[1] for c in result.faster] == ["c"]  # 0.43x
    assert result.slower[0].ratio == pytest.approx(2.1)
    assert not result.slower[0].near_fastest and not result.faster[0].near_fastest  # e (4.0) is the fastest
    assert [c.candidate[1] for c in compare.compare(Path("first"), Path("second"), factor=1.5).slower] == ["a", "b"]


def test_the_contradicted_timings_are_the_ones_retime_targets(monkeypatch):
    """`sweep --retime-contradicted` times again exactly the first sweep's contradicted candidates,
    slower and faster ones, row by row (sweep.extend(targets=...))."""
    first = {("bf16", "r1"): _row("r1", {("in-place", "a"): 10.0, ("in-place", "b"): 21.0, ("staged-col-b", "c"): 3.0}),
             ("bf16", "r2"): _row("r2", {("in-place", "a"): 9.0}),
             ("f16", "r1"): _row("r1", {("in-place", "a"): 1.0})}
    second = {("bf16", "r1"): _row("r1", {("in-place", "a"): 5.5, ("in-place", "b"): 10.0, ("staged-col-b", "c"): 7.0}),
              ("bf16", "r2"): _row("r2", {("in-place", "a"): 1.0}),
              ("f16", "r1"): _row("r1", {("in-place", "a"): 1.1})}
    monkeypatch.setattr(compare, "_rows", lambda folder: first if folder == Path("first") else second)
    targets = compare.retime_targets(compare.compare(Path("first"), Path("second")))
    assert targets == {("bf16", "r1"): {("in-place", "b", "data-parallel", 1), ("staged-col-b", "c", "data-parallel", 1)},
                       ("bf16", "r2"): {("in-place", "a", "data-parallel", 1)}}


def test_rows_of_one_id_but_other_shapes_are_refused(monkeypatch):
    first = {("f16", "r7"): _row("r7", {("in-place", "a"): 1.0})}
    second = {("f16", "r7"): _row("r7", {("in-place", "a"): 1.0}, shape=(8, 16, 33, "rr"))}
    monkeypatch.setattr(compare, "_rows", lambda folder: first if folder == Path("first") else second)
    with pytest.raises(ValueError, match=r"r7: 8x16x32 rr in first, 8x16x33 rr in second"):
        compare.compare(Path("first"), Path("second"))


def test_the_h100_sweep_against_the_h200s_is_what_results_records():
    """docs/findings.md, "Where the two sweeps disagree"."""
    result = compare.compare(H100, H200)
    assert (result.problems, result.timings) == (7607, 431371)
    assert result.median_ratio == pytest.approx(1.0468, abs=5e-4)
    assert (len(result.slower), len(result.faster)) == (7712, 16)
    assert sum(c.candidate[0].startswith("staged") for c in result.slower) == 7619
    assert sum(c.near_fastest for c in result.slower) == 479
    assert len({c.row for c in result.faster}) == 6
    # The largest error of the H100's cross-validation folds (3.19, every residual setting's
    # regret_max in its calibration) leans on a stream-K timing the H200 (and a re-timing) contradicts.
    stream_k = {(c.shape, c.candidate[1], c.first_us, c.second_us) for c in result.slower
                if c.row == "bf16-random-00222" and c.candidate[2] == "stream-k"}
    assert ("440x128x9288 rr", "cutlass2x_sm80_bf16_rr_64x64x64_5s_a8", 48.64, 13.344) in stream_k


def test_the_command_prints_both_kinds_and_refuses_a_folder_without_sweeps(capsys, tmp_path):
    from cutlass_ops.__main__ import main
    assert main(["compare", str(H100), str(H200), "--most", "2"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("7607 problems, 431371 candidates timed in both")
    assert out[1].startswith("7712 timings over 2x slower") and out[4].startswith("16 timings over 2x faster")
    assert "819.1 us against 11.2" in out[2]  # the largest first
    assert main(["compare", str(tmp_path), str(H200)]) == 2
    assert f"compare: {tmp_path}: no sweep files" in capsys.readouterr().err
