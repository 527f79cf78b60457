"""What `sweep --retime` reports of a changed launch (cutlass_ops/calibration/sweep.py,
retime_summary): each kernel's stored times before over after, on the candidates it held before;
and which candidates `sweep --retime-repriced` times again (repriced_targets). CPU only."""

import json
import math
from pathlib import Path

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


def test_a_re_time_far_above_the_stored_time_is_suspect_and_the_faster_reading_wins():
    stored = [_candidate("a", 10.0), _candidate("a", 12.0, slices=2), _candidate("b", 10.0), _candidate("c", 4.0)]
    new = [_candidate("a", 19.9), _candidate("a", 24.1, slices=2),  # 2.01x at 2 slices: suspect
           _candidate("b", 9.0), _candidate("c", None),              # faster; refused to launch
           _candidate("d", 50.0)]                                    # a candidate never stored
    assert sweep.RETIME_SUSPECT == 2.0
    assert sweep.retime_suspects(stored, new) == ["a"]
    assert sweep.retime_suspects(stored, [_candidate("a", 20.0)]) == []  # 2x exactly is not beyond it
    again = [_candidate("a", 21.0), _candidate("a", 12.5, slices=2)]
    kept = sweep.keep_faster(new, again)
    assert [c[4] for c in kept] == [19.9, 12.5, 9.0, None, 50.0]
    # A second reading that failed (None) never replaces a time; a first that failed takes any time.
    assert sweep.keep_faster([_candidate("a", 30.0)], [_candidate("a", None)])[0][4] == 30.0
    assert sweep.keep_faster([_candidate("a", None)], [_candidate("a", 30.0)])[0][4] == 30.0


def test_an_interrupted_extension_resumes_only_under_its_own_command(tmp_path):
    import gzip
    import json

    signature = {"kernels": ["k1", "k2"], "retime": True, "decomposition": None, "targets": None}
    rows = [{"id": "r1", "scale": 1.0, "c": [_candidate("k1", 3.0)]}, {"id": "r2", "scale": 0.98, "c": []}]
    path = tmp_path / "bf16.extend.gz"
    assert sweep.read_pending(path, signature) == {}  # no file: nothing done
    # Written as extend writes it: gzip members appended, the head first.
    lines = [json.dumps({"extend": signature})] + [json.dumps(r) for r in rows]
    with open(path, "wb") as f:
        f.write(gzip.compress((lines[0] + "\n" + lines[1] + "\n").encode()))
        f.write(gzip.compress((lines[2] + "\n").encode()))
    assert sweep.read_pending(path, json.loads(json.dumps(signature))) == {"r1": rows[0], "r2": rows[1]}
    other = {**signature, "kernels": ["k3"]}
    with pytest.raises(ValueError, match=r"another extension \(kernels differ: kernels \['k1', 'k2'\], retime True\)"):
        sweep.read_pending(path, other)
    with pytest.raises(ValueError, match=r"retime differ"):
        sweep.read_pending(path, {**signature, "retime": False})
    # A file from before heads: taken as it is.
    legacy = tmp_path / "f16.extend.gz"
    legacy.write_bytes(gzip.compress("".join(json.dumps(r) + "\n" for r in rows).encode()))
    assert set(sweep.read_pending(legacy, other)) == {"r1", "r2"}


def test_an_extension_names_only_variants_rows_hold(tmp_path):
    """`sweep --variant` takes the variants' names as rows store them; another name is refused
    before anything is read or timed."""
    assert set(sweep.VARIANTS) == {"in-place", "staged-row-b", "staged-col-b", "kmajor-b"}
    for wrong in (["staged"], ["in-place", "padded"], []):
        with pytest.raises(ValueError, match=r"variants .*: choose from in-place, staged-row-b"):
            sweep.extend(tmp_path, ["*"], ["bf16"], progress=False, retime=True, variants=wrong)


def _small_sweep(folder, ids):
    """A device folder holding the H200 sweep's bf16 rows `ids`, under that file's header."""
    import gzip

    source = Path(__file__).resolve().parent.parent / "benchmarks" / "sweep" / folder.name / "bf16.jsonl.gz"
    head, rows = sweep.read(source)
    chosen = [r for r in rows if r["id"] in ids]
    assert len(chosen) == len(ids)
    folder.mkdir()
    with gzip.open(folder / "bf16.jsonl.gz", "wt") as f:
        f.write("".join(json.dumps(record) + "\n" for record in [head, *chosen]))
    return chosen


def test_the_candidates_a_build_prices_otherwise_are_the_ones_timed_again(tmp_path):
    """`prices` keeps a digest of the cost model's features for every timed candidate of a sweep
    folder; `sweep --retime-repriced` times again exactly those whose digest a later build
    computes otherwise (sweep.repriced_targets), and a record of another folder or format is
    refused by name."""
    from cutlass_ops.calibration import fit

    folder = tmp_path / "sm90_132sm_nvidia_h200"
    rows = _small_sweep(folder, {"bf16-random-02260"})
    before = sweep.prices(folder)
    assert before["format"] == sweep.PRICES_FORMAT and before["folder"] == folder.name
    row = before["rows"]["bf16 bf16-random-02260"]
    assert set(row) == {" ".join(map(str, c[:4])) for c in sweep.built_candidates(rows[0])}
    assert sweep.prices(folder) == before  # the same build prices the same
    assert sweep.repriced_targets(folder, before) == {}
    split_24 = "in-place cutlass2x_sm80_bf16_cc_64x64x32_4s_a2 split-k 24"
    if split_24 not in row:
        pytest.skip("built without the CUTLASS 2.x 16-bit kernels")
    # What an earlier build made of two candidates; one the earlier build did not price at all.
    edited = json.loads(json.dumps(before))
    edited["rows"]["bf16 bf16-random-02260"][split_24] = "0" * 12
    edited["rows"]["bf16 bf16-random-02260"].pop("in-place cutlass2x_sm80_bf16_cc_64x64x32_4s_a4 split-k 24")
    assert sweep.repriced_targets(folder, edited) == {
        ("bf16", "bf16-random-02260"): {("in-place", "cutlass2x_sm80_bf16_cc_64x64x32_4s_a2", "split-k", 24)}}
    with pytest.raises(ValueError, match=r"recorded on sm90_132sm_other's rows, not sm90_132sm_nvidia_h200's"):
        sweep.repriced_targets(folder, {**before, "folder": "sm90_132sm_other"})
    with pytest.raises(ValueError, match=r"not a prices file \(format 'cutlass_ops-sweep'"):
        sweep.repriced_targets(folder, {**before, "format": "cutlass_ops-sweep"})
