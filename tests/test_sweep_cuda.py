"""The profiling sweep on a GPU, on a few small problems (cutlass_ops/calibration/sweep.py): what a
row records, resuming, timing kernels again (`sweep --retime`), and timing again exactly the
candidates another device's sweep contradicts (`sweep --retime-contradicted`)."""

import gzip
import json
import shutil

import pytest
import torch

import cutlass_ops
from cutlass_ops.calibration import compare, problems, sweep

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
_C = cutlass_ops._extension._C

# Small problems in several layouts, alignments and groups, so that a sweep of them takes seconds.
SMALL = [problems.Problem("bf16-t-0", "bf16", 64, 96, 128, "rr", "random-aligned"),
         problems.Problem("bf16-t-1", "bf16", 37, 50, 211, "rc", "random-any", split="test"),
         problems.Problem("bf16-t-2", "bf16", 200, 8, 72, "cr", "random-aligned"),
         problems.Problem("bf16-t-3", "bf16", 5, 300, 40, "cc", "random-any")]


@pytest.fixture
def small_set(monkeypatch):
    monkeypatch.setattr(sweep.problem_sets, "problem_set", lambda dtype, seed=0: [p for p in SMALL if p.dtype == dtype])


def _write(path, head, rows):
    with gzip.open(path, "wt") as f:
        f.write(json.dumps(head) + "\n")
        for row in rows:
            f.write(json.dumps(row) + "\n")


def test_a_small_live_sweep_times_every_candidate_and_resumes(tmp_path, small_set):
    assert sweep.run(["bf16"], tmp_path, reps=2, passes=1, limit=2, progress=False) == {"bf16": 2}
    path = sweep.device_folder(tmp_path) / "bf16.jsonl.gz"
    head, rows = sweep.read(path)
    assert head["device"] == torch.cuda.get_device_name() and head["torch"] == torch.__version__
    assert head["build_id"] and head["cutlass"] and tuple(head["desc"]) == tuple(_C.device_desc(0))
    assert [r["id"] for r in rows] == ["bf16-t-0", "bf16-t-1"]
    for row in rows:
        assert row["torch_us"] > 0
        # Every candidate the planner lists is in the row, and each one the GPU ran has a time.
        listed = {tuple(c[0]) for c in _C.rank_problem(row["precision"], row["layouts"], row["problem"], row["align"],
                                                       tuple(head["desc"]), 1)}
        assert {tuple(c[:4]) for c in row["c"]} == listed
        timed = [c for c in row["c"] if c[4] is not None]
        assert timed and all(c[4] > 0 for c in timed)
        assert min(c[4] for c in timed) < 100 * row["torch_us"]
    # Resumed: the next two problems are added, the first two kept as they were.
    assert sweep.run(["bf16"], tmp_path, reps=2, passes=1, progress=False) == {"bf16": 4}
    _, again = sweep.read(path)
    assert again[:2] == rows and [r["id"] for r in again[2:]] == ["bf16-t-2", "bf16-t-3"]


def test_retiming_replaces_one_kernels_candidates_and_only_the_contradicted_ones(tmp_path, small_set):
    sweep.run(["bf16"], tmp_path, reps=2, passes=1, progress=False)
    folder = sweep.device_folder(tmp_path)
    path = folder / "bf16.jsonl.gz"
    head, rows = sweep.read(path)

    # --retime KERNEL: that kernel's stored candidates are timed again (a stored time made absurd
    # comes back a measurement); every other candidate stays as stored.
    row = rows[0]
    target = min((c for c in row["c"] if c[4] is not None and c[0] == "in-place"), key=lambda c: c[4])
    target[4] = 1e6
    _write(path, head, rows)
    # Restricted to the batched files, of which this folder has none: nothing is timed or written.
    assert sweep.extend(folder, [target[1]], ["bf16"], reps=2, passes=1, progress=False, retime=True,
                        batched=True) == {}
    assert sweep.read(path)[1] == rows and not (folder / "bf16.extend.gz").exists()
    # Another dtype's kernel, which no row lists: the rows are visited, nothing is timed, and the
    # file stays byte for byte as it was (no empty extension in its header).
    f16_kernel = next(k["name"] for k in _C.kernels() if "_f16_" in k["name"])
    before = path.read_bytes()
    assert sweep.extend(folder, [f16_kernel], ["bf16"], reps=2, passes=1, progress=False,
                        retime=True) == {"bf16": len(rows)}
    assert path.read_bytes() == before and not (folder / "bf16.extend.gz").exists()
    sweep.extend(folder, [target[1]], ["bf16"], reps=2, passes=1, progress=False, retime=True)
    head2, rows2 = sweep.read(path)
    assert head2["extended"][-1]["retimed"] == "all decompositions"
    new = {tuple(c[:4]): c[4] for c in rows2[0]["c"]}
    assert new[tuple(target[:4])] < 1e4
    for before, after in zip(rows, rows2):
        for c in before["c"]:
            if c[1] != target[1]:
                assert [x for x in after["c"] if x[:4] == c[:4]] == [c]

    # --retime-contradicted: a copy of the sweep stands for the other device; one stored time made
    # absurd in this one is the only timing taken again.
    other = tmp_path / "other"
    shutil.copytree(folder, other)
    head, rows = sweep.read(path)
    victim = next(c for c in rows[1]["c"] if c[4] is not None)
    victim[4] = victim[4] * 1000
    _write(path, head, rows)
    targets = compare.retime_targets(compare.compare(folder, other))
    assert targets == {("bf16", rows[1]["id"]): {tuple(victim[:4])}}
    sweep.extend(folder, [], ["bf16"], reps=2, passes=1, progress=False, targets=targets)
    head3, rows3 = sweep.read(path)
    assert head3["extended"][-1]["retimed"] == "the candidates another device's sweep contradicts"
    for before, after in zip(rows, rows3):
        for c in before["c"]:
            matching = [x for x in after["c"] if x[:4] == c[:4]]
            if c is victim:
                assert len(matching) == 1 and matching[0][4] < victim[4] / 10
            else:
                assert matching == [c]
    assert compare.compare(folder, other).slower == []

    # Interrupted (its time limit spent before the first row), an extension leaves a file naming
    # what it times: another extension refuses to resume from it; the same one finishes it.
    pending = folder / "bf16.extend.gz"
    assert sweep.extend(folder, [target[1]], ["bf16"], time_limit=1e-9, progress=False, retime=True) == {"bf16": 0}
    assert pending.exists()
    with pytest.raises(ValueError, match="holds rows of another extension"):
        sweep.extend(folder, [f16_kernel], ["bf16"], reps=2, passes=1, progress=False, retime=True)
    assert sweep.extend(folder, [target[1]], ["bf16"], reps=2, passes=1, progress=False,
                        retime=True) == {"bf16": len(rows)}
    assert not pending.exists()


def test_retiming_a_variant_replaces_its_candidates_of_every_kernel_and_no_others(tmp_path, small_set):
    """`sweep --retime '*' --variant staged-row-b`: after a change to the staging copies, every
    kernel's candidates of that variant are timed again; the in-place ones and the other staged
    variant stay as stored."""
    sweep.run(["bf16"], tmp_path, reps=2, passes=1, progress=False)
    folder = sweep.device_folder(tmp_path)
    path = folder / "bf16.jsonl.gz"
    head, rows = sweep.read(path)
    absurd = [c for row in rows for c in row["c"] if c[0] == "staged-row-b" and c[4] is not None]
    assert absurd and any(c[0] == "staged-col-b" for row in rows for c in row["c"])  # the unaligned rows
    for c in absurd:
        c[4] = 1e6
    _write(path, head, rows)
    with pytest.raises(ValueError, match="variants"):
        sweep.extend(folder, ["*"], ["bf16"], progress=False, retime=True, variants=["staged"])
    sweep.extend(folder, ["*"], ["bf16"], reps=2, passes=1, progress=False, retime=True, variants=["staged-row-b"])
    head2, rows2 = sweep.read(path)
    assert head2["extended"][-1]["retimed"] == "all decompositions variants staged-row-b"
    for before, after in zip(rows, rows2):
        for c in before["c"]:
            matching = [x for x in after["c"] if x[:4] == c[:4]]
            if c[0] == "staged-row-b":  # (a candidate refused at launch stays without a time)
                assert len(matching) == 1 and (c[4] is None or 0 < matching[0][4] < 1e4), (c, matching)
            else:
                assert matching == [c]
