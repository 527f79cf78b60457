"""The set cover of the sweep by kernel groups (cutlass_ops/calibration/cover.py): no GPU."""

import gzip
import json
import math

from cutlass_ops.calibration import cover, results, sweep


def write_sweep(folder, rows, capability=None):
    folder.mkdir()
    head = {"format": "cutlass_ops-sweep", "dtype": "bf16"}
    if capability:
        head["capability"] = capability
    with gzip.open(folder / "bf16.jsonl.gz", "wt") as f:
        f.write(json.dumps(head) + "\n")
        for row in rows:
            f.write(json.dumps(row) + "\n")


def row(id_, split, times):
    # candidates: [variant, kernel, decomposition, splits, us, reps]
    return {"id": id_, "split": split, "precision": "bf16",
            "c": [["in-place", kernel, "data-parallel", 1, us, 5] for kernel, us in times.items()]}


def test_a_group_is_a_kernel_without_its_layouts():
    assert cover.group_of("cutlass3x_sm90_bf16_rc_128x256x64_2x1x1_coop") == "cutlass3x_sm90_bf16_128x256x64_2x1x1_coop"
    assert cover.group_of("cutlass2x_sm80_f16_cr_64x64x32_4s_a2") == "cutlass2x_sm80_f16_64x64x32_4s_a2"
    assert cover.group_of("handwritten_sm80_bf16_rr_skinny_m_a1") == "handwritten_sm80_bf16_skinny_m_a1"


def test_greedy_cover_on_a_small_sweep(tmp_path, monkeypatch):
    k = lambda cfg, lay="rr": f"cutlass3x_sm90_bf16_{lay}_{cfg}"  # noqa: E731
    rows = [
        # A is within 2% on three rows, B on two, C on the last alone; D is never close.
        row("1", "train", {k("A"): 10.0, k("B"): 10.1, k("D"): 20.0}),
        row("2", "train", {k("A"): 10.0, k("B", "rc"): 12.0, k("D"): 20.0}),
        row("3", "train", {k("A", "rc"): 10.1, k("B"): 10.0, k("D"): 20.0}),
        row("4", "train", {k("A"): 15.0, k("C"): 10.0, k("D"): 11.0}),
        # Held out: the fastest there is D, which the cover left out; A is 5% behind.
        row("5", "test", {k("A"): 10.5, k("D"): 10.0}),
    ]
    write_sweep(tmp_path / "sweep", rows)
    result = cover.cover(tmp_path / "sweep", 0.02)
    assert result.chosen == [("cutlass3x_sm90_bf16_A", 3), ("cutlass3x_sm90_bf16_C", 1)]
    assert result.unneeded == ["cutlass3x_sm90_bf16_B", "cutlass3x_sm90_bf16_D"]
    assert result.train_rows == 4
    assert result.test_loss == [1.05] and result.test_beyond_tolerance == 1
    assert "2 kernel groups cover the 4 training rows" in cover.report(result)


def test_older_builds_the_cover_leaves_out_are_marked(tmp_path):
    """An SM90 sweep does not speak for the SM80 builds that the GPUs before it run."""
    rows = [row("1", "train", {"cutlass3x_sm90_bf16_rr_A": 10.0, "cutlass2x_sm80_bf16_rr_B": 12.0,
                                "handwritten_sm90_bf16_rr_C": 13.0}),
            row("2", "test", {"cutlass3x_sm90_bf16_rr_A": 10.0, "cutlass2x_sm80_bf16_rr_B": 9.0})]
    write_sweep(tmp_path / "sweep", rows, capability=[9, 0])
    result = cover.cover(tmp_path / "sweep")
    assert result.arch == 90
    head, rows_read = sweep.read(tmp_path / "sweep" / "bf16.jsonl.gz", rows=False)  # the header alone
    assert head["capability"] == [9, 0] and rows_read == []
    assert result.unneeded == ["cutlass2x_sm80_bf16_B", "handwritten_sm90_bf16_C"]
    assert result.unneeded_older == ["cutlass2x_sm80_bf16_B"]
    text = cover.report(result)
    assert "2 groups the cover does not need on sm90 (1 of them, marked *" in text
    assert "  cutlass2x_sm80_bf16_B *" in text and "  handwritten_sm90_bf16_C\n" in text + "\n"
    # A sweep whose header names no GPU marks nothing.
    write_sweep(tmp_path / "bare", rows)
    assert cover.cover(tmp_path / "bare").unneeded_older == []


def test_the_stored_sweep_is_covered_by_the_chosen_groups():
    # Reproducible from the stored sweep: every training row has a chosen group within the
    # tolerance of its fastest, the chosen and the unneeded groups are all the groups timed,
    # and a second run chooses the same.
    folder = results.SWEEP
    result = cover.cover(folder)
    chosen = {group for group, _ in result.chosen}
    rows = cover.rows_of(folder)
    train = [r for r in rows if r.split == "train"]
    assert len(train) == result.train_rows > 5000
    for r in train:
        assert min(us for group, us in r.times.items() if group in chosen) <= (1 + cover.TOLERANCE) * r.best, r.id
    assert chosen.isdisjoint(result.unneeded)
    assert chosen | set(result.unneeded) == {group for r in rows for group in r.times}
    assert sum(gained for _, gained in result.chosen) == len(train)
    assert cover.cover(folder).chosen == result.chosen
    assert all(x >= 1.0 for x in result.test_loss) and not math.isinf(max(result.test_loss))
