"""The profiling sweep: every candidate the planner could run, timed on each problem of a large
set (``problems.py``), beside torch.mm. The cost model is fitted on its training split and
judged on its test split (``fit.py``, ``evaluate.py``).

    python -m cutlass_ops sweep --dtype bf16,f16 --out benchmarks/sweep --time-limit 300

One gzip-compressed JSON-lines file per precision and device (``<out>/<device>/<dtype>.jsonl.gz``):
a header line (format, device, build, versions), then one line per problem. A sweep resumes
where the file ends (device time comes in slices), and refuses to mix builds (a build is its
kernel set and sources: ``tuning.build_id``) or devices.

Each candidate is timed by the C++ timer the autotuner uses (``csrc/ops/timing.h``): after
25 ms of GPU work that raises the clocks from idle, a warm-up call, then ``reps`` timings of the
call alone, each after an L2 flush, median kept; one that is three times slower than the best so
far after two timings stops there. The candidates are timed in ``passes`` passes in alternating
order and each keeps its fastest pass. torch.mm is timed before and after the candidates, and
keeps the faster.
"""

from __future__ import annotations

import contextlib
import datetime
import fnmatch
import functools
import gzip
import hashlib
import json
import math
import re
import sys
import time
from pathlib import Path
from typing import Iterable, Iterator, Optional

import torch

from .. import _extension, precisions
from . import problems as problem_sets

_C = _extension._C

FORMAT = "cutlass_ops-sweep"
FORMAT_VERSION = 2
FLUSH_EVERY = 20  # problems per gzip member appended
DECOMPOSITIONS = ("data-parallel", "split-k", "stream-k")  # the K decompositions, as rows name them
# The variants (candidates.h, Variant), as rows name them: the kernel on the operands in place,
# on zero-padded aligned copies (B copied row-major or column-major), or with B copied K-major.
VARIANTS = ("in-place", "staged-row-b", "staged-col-b", "kmajor-b")

TORCH_DTYPES = precisions.TORCH_DTYPE


# A device that sweeps did not record (files written before the header said): an H100 SXM.
H100_DESC = (90, 132, 232448, 1980, 3352)


def device_of(head: dict) -> tuple[int, int, int, int, int]:
    """The device description (cost_model.h DeviceDesc) a sweep file's header records."""
    if "desc" in head:
        return tuple(head["desc"])
    if (head["capability"], head["sm_count"]) == ([9, 0], 132):
        return H100_DESC
    raise ValueError(f"sweep header for {head['device']} has no device description")


@functools.lru_cache(maxsize=None)
def kernel_traits() -> dict:
    """This build's kernels, by name (``_C.kernels()``'s dicts)."""
    return {k["name"]: k for k in _C.kernels()}


def built_candidates(row: dict) -> list:
    """A sweep row's timed candidates whose kernel this build has: the sweep may hold kernels the
    kernel table has since left out (docs/findings.md, "Groups the set cover leaves out"), and
    the fit, like the planner, knows only the built ones (their fastest is the row's best)."""
    return [c for c in row["c"] if c[4] is not None and c[1] in kernel_traits()]


def device_key(name: str, capability: tuple[int, int], sm_count: int) -> str:
    """Folder name for one device's data (calibrations load by compute capability, SM count and DRAM bandwidth)."""
    slug = re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")
    return f"sm{capability[0]}{capability[1]}_{sm_count}sm_{slug}"


def device_folder(out_dir: Path) -> Path:
    """The current CUDA device's folder under `out_dir` (``device_key``)."""
    index = torch.cuda.current_device()
    cc, sm_count = _C.device_desc(index)[:2]
    return Path(out_dir) / device_key(torch.cuda.get_device_name(index), (cc // 10, cc % 10), sm_count)


def header(dtype: str, reps: int = 5, passes: int = 2) -> dict:
    from .. import tuning
    from .._build_info import CUTLASS_VERSION

    index = torch.cuda.current_device()
    desc = _C.device_desc(index)
    cc, sm_count = desc[:2]
    return {
        "format": FORMAT,
        "version": FORMAT_VERSION,
        "dtype": dtype,
        "device": torch.cuda.get_device_name(index),
        "capability": [cc // 10, cc % 10],
        "sm_count": sm_count,
        "desc": list(desc),  # (cc, SM count, smem opt-in, clock MHz, DRAM GB/s): what the cost model reads
        "build_id": tuning.build_id(),
        "cutlass": CUTLASS_VERSION,
        "torch": torch.__version__,
        "reps": reps,
        "passes": passes,
        "started": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
    }


def read(path: Path, rows: bool = True) -> tuple[dict, list[dict]]:
    """(header, rows) of a sweep file; with rows=False the header alone, the rest unread."""
    head, records = None, []
    with gzip.open(path, "rt") as f:
        for line in f:
            if not line.strip():
                continue
            record = json.loads(line)
            if head is None:
                if record.get("format") != FORMAT:
                    raise ValueError(f"{path}: not a cutlass_ops sweep file")
                head = record
                if not rows:
                    break
            elif "format" not in record:
                records.append(record)
    if head is None:
        raise ValueError(f"{path}: empty sweep file")
    return head, records


def make_operands(p: problem_sets.Problem, dtype: torch.dtype, generator: torch.Generator):
    """Random N(0, 1) operands in the problem's layout (c: the transpose of a contiguous tensor);
    for a batch, 3-D tensors whose matrices are in that layout, one after another."""
    lead = (p.batch,) if p.batch > 1 else ()

    def make(rows, cols, letter):
        if letter == "r":
            return torch.randn(*lead, rows, cols, dtype=dtype, device="cuda", generator=generator)
        return torch.randn(*lead, cols, rows, dtype=dtype, device="cuda", generator=generator).transpose(-1, -2)
    return make(p.m, p.k, p.layout[0]), make(p.k, p.n, p.layout[1])


@contextlib.contextmanager
def _settings(dtype: str) -> Iterator[None]:
    """fp32 settings for one precision, and the tuning table out of the way, restored after."""
    from .. import tuning
    entries = tuning.entries()
    try:
        with precisions.computing_in(dtype):
            tuning.clear()  # the planner's own choice, not a table's, is recorded as "planner"
            yield
    finally:
        tuning.clear()
        for entry in entries:
            _C.tuning_insert(entry)


def measure(p: problem_sets.Problem, reps: int = 5, generator: Optional[torch.Generator] = None,
            passes: int = 2, only: Iterable[str] = ()) -> dict:
    """One sweep row: torch.mm and every candidate (with `only`, every candidate of those
    kernels) on fresh random operands for `p`."""
    a, b = make_operands(p, TORCH_DTYPES[p.dtype], generator)
    out = torch.empty(*a.shape[:-1], p.n, dtype=a.dtype, device="cuda")
    r = _C.sweep_problem(a, b, out, reps, passes=passes, only=sorted(only))
    row = {
        "id": p.id, "group": p.group, "model": p.model, "split": p.split,
        "m": p.m, "n": p.n, "k": p.k, "layout": p.layout, "batch": p.batch,
        "precision": r["precision"], "problem": list(r["problem"]), "layouts": r["layouts"],
        "align": list(r["align"]), "transposed": r["transposed"],
        "torch_us": round(r["torch_us"], 3), "planner": r["planner"],
        "c": [[*cand, None if us is None else round(us, 3), reps_done] for cand, us, reps_done in r["candidates"]],
    }
    return row


def _progress(total: int, initial: int, desc: str, enabled: bool):
    if enabled:
        try:
            from tqdm import tqdm
            return tqdm(total=total, initial=initial, desc=desc, unit="problem", file=sys.stderr)
        except ImportError:
            pass
    return None


def run(dtypes: Iterable[str], out_dir: Path, time_limit: float = 0, reps: int = 5, limit: int = 0,
        progress: bool = True, seed: int = 0, passes: int = 2, batched: bool = False,
        append: bool = False) -> dict[str, int]:
    """Sweep each precision's problem set into out_dir/<device>/<dtype>.jsonl.gz (with
    `batched`, its batched set into <dtype>-batched.jsonl.gz), resuming files already there;
    stops starting new problems after `time_limit` seconds (0: none) or `limit` new problems per
    precision. A file recorded on another build (or with other reps) is resumed only with
    `append`: the problems it lacks (a problem set grown since) are measured on this build, each
    row whole, and the header lists every build that appended rows. Returns {dtype: problems
    recorded so far}."""
    problem_set = problem_sets.batched_problem_set if batched else problem_sets.problem_set
    start = time.monotonic()
    folder = device_folder(out_dir)
    folder.mkdir(parents=True, exist_ok=True)
    generator = torch.Generator(device="cuda").manual_seed(seed)
    done_counts = {}
    for dtype in dtypes:
        if dtype not in TORCH_DTYPES:
            raise ValueError(f"unknown precision {dtype!r}; choose from {list(TORCH_DTYPES)}")
        path = folder / (f"{dtype}-batched.jsonl.gz" if batched else f"{dtype}.jsonl.gz")
        head = header(dtype, reps, passes)
        done = set()
        appending = False
        if path.exists():
            old, rows = read(path)
            for key in ("version", "build_id", "capability", "sm_count", "dtype", "reps", "passes"):
                if old.get(key) != head[key]:
                    if append and key in ("build_id", "reps", "passes"):
                        appending = True
                        continue
                    raise SystemExit(f"{path} was recorded with {key} {old.get(key)!r}, this run has {head[key]!r}: "
                                     "move it away to start a new sweep"
                                     + ("" if key in ("version", "capability", "sm_count", "dtype")
                                        else ", or --append the problems it lacks"))
            done = {r["id"] for r in rows}
        else:
            with gzip.open(path, "wt") as f:
                f.write(json.dumps(head) + "\n")
        todo = [p for p in problem_set(dtype, seed) if p.id not in done]
        if limit:
            todo = todo[:limit]
        bar = _progress(len(done) + len(todo), len(done), f"sweep {dtype}", progress)
        pending: list[str] = []

        def flush() -> None:
            if pending:
                with open(path, "ab") as f:
                    f.write(gzip.compress("".join(pending).encode()))
                pending.clear()

        stopped = False
        with _settings(dtype):
            for i, p in enumerate(todo):
                if time_limit and time.monotonic() - start > time_limit:
                    stopped = True
                    break
                pending.append(json.dumps(measure(p, reps, generator, passes), separators=(",", ":")) + "\n")
                done.add(p.id)
                if len(pending) >= FLUSH_EVERY:
                    flush()
                if bar is not None:
                    bar.update(1)
                elif progress and (i + 1) % 100 == 0:
                    print(f"sweep {dtype}: {len(done)} problems", file=sys.stderr, flush=True)
                torch.cuda.empty_cache() if (i + 1) % 200 == 0 else None
        flush()
        if bar is not None:
            bar.close()
        added = len(done) - len(rows) if appending else 0
        if added:
            old, rows = read(path)
            old.setdefault("appended", []).append({
                "build_id": head["build_id"], "rows": added, "reps": reps, "passes": passes,
                "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")})
            with gzip.open(path, "wt") as f:
                f.write(json.dumps(old) + "\n")
                for row in rows:
                    f.write(json.dumps(row, separators=(",", ":")) + "\n")
        done_counts[dtype] = len(done)
        total = len(problem_set(dtype, seed))
        print(f"sweep {dtype}: {len(done)} of {total} problems in {path}", file=sys.stderr, flush=True)
        if stopped:
            break
    return done_counts


def drift_scale(reference_stored: Optional[float], reference_now: Optional[float],
                torch_stored: Optional[float], torch_now: Optional[float]) -> float:
    """The factor that brings a time measured now onto a row's stored times: the median of the
    reference candidate's stored time over its time now, torch.mm's likewise, and 1. Either
    drift alone can mislead: a reference whose time now is an outlier once scaled a row's new
    times by 0.045 (bf16 916x29x2068 "cc", its reference a staged candidate, H100,
    2026-11-25); the median of the three follows the two that agree."""
    def ratio(stored, now):
        return stored / now if stored and now and stored > 0 and now > 0 else 1.0
    return sorted((ratio(reference_stored, reference_now), ratio(torch_stored, torch_now), 1.0))[1]


# Two timings of one candidate differ by p10-p90 0.97-1.03 (benchmarks/RESULTS.md, "Where the
# model misses"): a re-timed candidate counts as faster or slower only beyond this.
RETIME_NOISE = 0.03


def retime_summary(rows: list[dict], new_by_row: dict[str, list]) -> dict[str, dict]:
    """How a re-time moved each kernel's stored times: for every candidate timed again that the
    rows held before (same variant, kernel, decomposition and slices), its former time over its
    new one (> 1: faster now). Per kernel: candidates, geomean, p10 and p90, and how many moved
    beyond RETIME_NOISE either way. The judgement of a changed launch on the sweep's problems,
    written into the file's header and printed by ``extend``."""
    ratios: dict[str, list[float]] = {}
    for row in rows:
        former = {tuple(c[:4]): c[4] for c in row["c"] if c[4]}
        for c in new_by_row.get(row["id"], ()):
            before = former.get(tuple(c[:4]))
            if before and c[4]:
                ratios.setdefault(c[1], []).append(before / c[4])
    summary = {}
    for kernel, values in sorted(ratios.items()):
        logs = sorted(math.log(v) for v in values)
        n = len(logs)
        summary[kernel] = {
            "candidates": n,
            "former_over_new": round(math.exp(sum(logs) / n), 4),  # the geomean
            "p10": round(math.exp(logs[max(0, math.ceil(0.1 * n) - 1)]), 4),  # nearest rank
            "p90": round(math.exp(logs[max(0, math.ceil(0.9 * n) - 1)]), 4),
            "faster": sum(v > 1 + RETIME_NOISE for v in values),
            "slower": sum(v < 1 - RETIME_NOISE for v in values),
        }
    return summary


def describe_retime(kernel: str, moves: dict) -> str:
    """One line of ``retime_summary``'s judgement of a kernel."""
    return (f"  {kernel}: {moves['candidates']} candidates, former / new time {moves['former_over_new']:.3f} "
            f"(p10 {moves['p10']:.3f}, p90 {moves['p90']:.3f}; faster {moves['faster']}, slower {moves['slower']} "
            f"beyond {RETIME_NOISE:.0%})")


def extend(folder: Path, kernels: Iterable[str], dtypes: Iterable[str], time_limit: float = 0, reps: int = 5,
           passes: int = 2, progress: bool = True, retime: bool = False,
           decomposition: Optional[str] = None, targets: Optional[dict] = None,
           batched: Optional[bool] = None, variants: Optional[Iterable[str]] = None,
           targets_are: str = "the candidates another device's sweep contradicts") -> dict[str, int]:
    """Time kernels added since a sweep (by name) on the problems of its files in `folder`, and
    merge them into the rows: a new config calibrated without sweeping every candidate again.
    Kernels the rows already hold are timed only on the candidates they lack (a decomposition or
    split count a kernel offers since the sweep).
    Each row's fastest stored candidate is timed beside them as a reference, torch.mm too, and
    the new times are scaled by their stored times over their times now (``drift_scale``), so
    that another machine or clock state than the sweep's favours neither side. Each row times
    the kernels the planner lists among its candidates (its own enumeration: dtype, layouts,
    alignment, rows; a 3xTF32 row lists IEEE fp32 kernels too); a row that lists none of them
    is recorded without touching the GPU.
    The single-product file and the batched one (``<dtype>-batched``) alike, or with ``batched``
    True (False) the batched (single-product) one alone. Resumable: rows done
    wait in ``<file>.extend.gz`` until every row of the file has been timed, then the file is
    rewritten with them merged and the extension recorded in its header. Returns {file: rows
    done}.

    ``kernels`` may hold shell patterns (``cutlass2x_sm80_bf16_*``). With ``retime``, the
    kernels' stored candidates (those of ``decomposition`` only, if given) are timed again and
    replaced: for a kernel whose launch changed since the sweep. The reference is then the
    fastest stored candidate of another kernel. ``variants`` (names in VARIANTS) narrows the
    candidates timed, with or without ``retime``, to those variants: ``retime=True`` with
    ``variants=("staged-row-b", "staged-col-b")`` and every kernel (``"*"``) times the staged
    candidates again after a change to the staging copies.

    With ``targets`` ({(dtype, row id): {(variant, kernel, decomposition, slices), ...}}, as
    ``compare.retime_targets`` reads them off two devices' sweeps), exactly those stored
    candidates are timed again and replaced, and only in those rows; ``kernels`` is then ignored,
    and ``targets_are`` says in the file's header which candidates they were."""
    start = time.monotonic()
    built = [k["name"] for k in _C.kernels()]
    if targets is not None:
        retime, decomposition = True, None
        kernels = sorted({candidate[1] for row_targets in targets.values() for candidate in row_targets})
    patterns = list(kernels)
    kernels = [k for k in built if any(fnmatch.fnmatchcase(k, pattern) for pattern in patterns)]
    unknown = sorted(p for p in patterns if not fnmatch.filter(built, p))
    if unknown:
        raise ValueError(f"extend: no such kernel in this build: {unknown}")
    if decomposition is not None and decomposition not in DECOMPOSITIONS:
        raise ValueError(f"extend: decomposition {decomposition!r}: choose one of {', '.join(DECOMPOSITIONS)}")
    variants = None if variants is None or targets is not None else sorted(set(variants))
    if variants is not None and (not variants or not set(variants) <= set(VARIANTS)):
        raise ValueError(f"extend: variants {variants}: choose from {', '.join(VARIANTS)}")
    chosen = set(kernels)
    # What this call times, written at the head of a pending file: a later call resumes only
    # the same extension (another's rows there would pass for its own).
    signature = {"kernels": sorted(chosen), "retime": retime, "decomposition": decomposition,
                 "targets": None if targets is None else
                 sorted([list(key), sorted(map(list, cands))] for key, cands in targets.items())}
    if variants is not None:
        signature["variants"] = variants

    def to_time(candidate, row_key) -> bool:  # a candidate this call times (and, with retime, replaces)
        if targets is not None:
            return tuple(candidate[:4]) in targets.get(row_key, ())
        return (candidate[1] in chosen and (decomposition is None or candidate[2] == decomposition) and
                (variants is None or candidate[0] in variants))
    generator = torch.Generator(device="cuda").manual_seed(1)
    done_counts = {}
    kinds = {None: ("", "-batched"), True: ("-batched",), False: ("",)}[batched]
    for dtype, name in [(d, d + kind) for d in dtypes for kind in kinds]:
        path = Path(folder) / f"{name}.jsonl.gz"  # the single products, then the batched set
        if not path.exists():
            continue
        head, rows = read(path)
        pending_path = Path(folder) / f"{name}.extend.gz"
        done = read_pending(pending_path, signature)
        todo = [r for r in rows if r["id"] not in done]
        desc = tuple(header(dtype)["desc"])
        bar = _progress(len(rows), len(done), f"extend {name}", progress)
        pending: list[str] = [] if pending_path.exists() else [json.dumps({"extend": signature}) + "\n"]

        def flush() -> None:
            if pending:
                with open(pending_path, "ab") as f:
                    f.write(gzip.compress("".join(pending).encode()))
                pending.clear()

        stopped = False
        with _settings(dtype):
            for i, row in enumerate(todo):
                if time_limit and time.monotonic() - start > time_limit:
                    stopped = True
                    break
                candidates = _C.rank_problem(row["precision"], row["layouts"], row["problem"], row["align"], desc,
                                             row.get("batch", 1))
                # Candidates the row holds (timed by the sweep or an earlier extension) are kept
                # as they are; a kernel is timed where it lists one the row lacks (a new kernel,
                # or a decomposition or split count it offers since).
                row_key = (head["dtype"], row["id"])
                stored = {tuple(c[:4]) for c in row["c"] if not (retime and to_time(c, row_key))}
                lacking = {tuple(c[0])[1] for c in candidates if tuple(c[0]) not in stored and to_time(c[0], row_key)}
                mine = [k for k in kernels if k in lacking]
                if not mine:
                    done[row["id"]] = {"id": row["id"], "scale": 1.0, "c": []}
                    pending.append(json.dumps(done[row["id"]], separators=(",", ":")) + "\n")
                    if bar is not None:
                        bar.update(1)
                    continue
                # The reference: the fastest stored candidate of a kernel this row does not time
                # again (with `variants`, of a variant it does not: the kernel itself is unchanged).
                row_chosen = chosen if targets is None else {c[1] for c in targets.get(row_key, ())}
                timed = [c for c in row["c"] if c[4] is not None and not (
                    retime and (to_time(c, row_key) if variants is not None else c[1] in row_chosen))]
                reference = min(timed, key=lambda c: c[4]) if timed else None
                p = problem_sets.Problem(row["id"], dtype, row["m"], row["n"], row["k"], row["layout"], row["group"],
                                         row["model"], row["split"], row.get("batch", 1))
                a, b = make_operands(p, TORCH_DTYPES[dtype], generator)
                out = torch.empty(*a.shape[:-1], p.n, dtype=a.dtype, device="cuda")
                suffix = f"@{decomposition}" if decomposition else ""
                suffixes = [suffix] if variants is None else [f"{suffix}#{v}" for v in variants]
                # The reference's kernel by name times all its candidates, those this call wants
                # among them; with `variants`, the reference's own candidate alone.
                reference_entry = ([] if not reference else [reference[1]] if variants is None else
                                   [f"{reference[1]}@{reference[2]}#{reference[0]}"])
                only = reference_entry + [k + s for k in mine for s in suffixes
                                          if variants is not None or not reference or k != reference[1]]
                added, scale = _time_row(a, b, out, reps, passes, only, reference, row.get("torch_us"),
                                         lambda cand: cand[1] in mine and tuple(cand) not in stored
                                         and to_time(cand, row_key))
                if retime:  # a time far off the stored one is taken once more (retime_suspects)
                    suspects = retime_suspects(row["c"], added)
                    if suspects:
                        again, _ = _time_row(a, b, out, reps, passes,
                                             reference_entry + [k + s for k in suspects for s in suffixes],
                                             reference, row.get("torch_us"),
                                             lambda cand: cand[1] in suspects and to_time(cand, row_key))
                        added = keep_faster(added, again)
                done[row["id"]] = {"id": row["id"], "scale": round(scale, 4), "c": added}
                pending.append(json.dumps(done[row["id"]], separators=(",", ":")) + "\n")
                if len(pending) >= FLUSH_EVERY:
                    flush()
                if bar is not None:
                    bar.update(1)
                if (i + 1) % 200 == 0:
                    torch.cuda.empty_cache()
        flush()
        if bar is not None:
            bar.close()
        done_counts[name] = len(done)
        if len(done) < len(rows):
            print(f"extend {name}: {len(done)} of {len(rows)} rows timed ({pending_path})", file=sys.stderr, flush=True)
        elif not any(record["c"] for record in done.values()):
            pending_path.unlink(missing_ok=True)  # no row lists these kernels: the file stays as it is
            print(f"extend {name}: no row lists these kernels; unchanged", file=sys.stderr, flush=True)
        else:
            moved = retime_summary(rows, {i: record["c"] for i, record in done.items()}) if retime else {}
            for row in rows:
                new = done[row["id"]]["c"]
                replaced = {tuple(c[:4]) for c in new}  # (with retime; new candidates otherwise)
                row["c"] = [c for c in row["c"] if tuple(c[:4]) not in replaced] + new
            timed = sorted({c[1] for record in done.values() for c in record["c"]})
            record = {
                "kernels": timed, "build_id": header(dtype)["build_id"],
                "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                "reps": reps, "passes": passes,
                "method": ("each new time scaled by the median of 1 and two drifts: the row's fastest stored "
                           "candidate's stored time over its time now, and torch.mm's")}
            if retime:
                record["retimed"] = (targets_are if targets is not None else
                                     " ".join(filter(None, [decomposition or "all decompositions",
                                                            variants and "variants " + ", ".join(variants)])))
                record["method"] = ("stored times replaced; each new time scaled by the median of 1 and two drifts: "
                                    "the row's fastest stored candidate of another kernel's stored time over its "
                                    "time now, and torch.mm's")
                record["former_over_new"] = moved
            head.setdefault("extended", []).append(record)
            with gzip.open(path, "wt") as f:
                f.write(json.dumps(head) + "\n")
                for row in rows:
                    f.write(json.dumps(row, separators=(",", ":")) + "\n")
            pending_path.unlink()
            print(f"extend {name}: {len(rows)} rows merged into {path}", file=sys.stderr, flush=True)
            for kernel, moves in moved.items():
                print(describe_retime(kernel, moves), file=sys.stderr, flush=True)
        if stopped:
            break
    return done_counts


def read_pending(path: Path, signature: dict) -> dict[str, dict]:
    """The rows an interrupted ``extend`` left in ``path`` ({row id: record}; none if there is no
    file). Raises ValueError when the file's head names another extension than ``signature``
    (other kernels, re-time or not, another decomposition or targets): resuming would take
    that extension's rows for this one's. A file without a head (written before heads were)
    is taken as it is."""
    done: dict[str, dict] = {}
    if not path.exists():
        return done
    with gzip.open(path, "rt") as f:
        for line in f:
            if not line.strip():
                continue
            record = json.loads(line)
            if "extend" in record:
                if record["extend"] != signature:
                    theirs, ours = record["extend"], signature
                    differ = [k for k in ours if theirs.get(k) != ours[k]]
                    raise ValueError(f"{path} holds rows of another extension ({', '.join(differ)} differ: "
                                     f"kernels {theirs.get('kernels')}, retime {theirs.get('retime')}): "
                                     f"finish it with its own command, or delete the file to drop them")
                continue
            done[record["id"]] = record
    return done


def _time_row(a, b, out, reps: int, passes: int, only: list[str], reference: Optional[list],
              torch_stored: Optional[float], wanted) -> tuple[list[list], float]:
    """One ``sweep_problem`` call over ``only``: the candidates ``wanted`` keeps, as rows store
    them ([variant, kernel, decomposition, slices, us, n]), scaled onto the row's stored times,
    and the scale (``drift_scale``)."""
    r = _C.sweep_problem(a, b, out, reps, passes=passes, only=only)
    times = {tuple(cand): us for cand, us, _ in r["candidates"]}
    now = times.get(tuple(reference[:4])) if reference else None
    scale = drift_scale(reference[4] if reference else None, now, torch_stored, r["torch_us"])
    return [[*cand, None if us is None else round(us * scale, 3), n]
            for cand, us, n in r["candidates"] if wanted(cand)], scale


# A re-timed candidate this many times slower than its stored time is timed once more before it
# replaces it: re-timing four configs whose epilogue alone changed read bf16 staged candidates of
# tiny problems at up to 11x their stored time (5x2x13 "rc": 191.5 us against 17.9; H200,
# 2026-11-29), where a change of epilogue subtile moves times by a few percent; timed again,
# they ran at their former times (docs/findings.md, "Where the two sweeps disagree").
RETIME_SUSPECT = 2.0


def retime_suspects(stored: list[list], new: list[list]) -> list[str]:
    """The kernels of ``new`` (re-timed candidates) with a time over RETIME_SUSPECT times the
    time ``stored`` (a row's candidates) holds for the same candidate."""
    former = {tuple(c[:4]): c[4] for c in stored if c[4]}
    return sorted({c[1] for c in new if c[4] and tuple(c[:4]) in former and c[4] > RETIME_SUSPECT * former[tuple(c[:4])]})


def keep_faster(first: list[list], second: list[list]) -> list[list]:
    """Two timings of the same candidates: each candidate's faster one (a time that is None,
    a launch refused, loses to any other)."""
    again = {tuple(c[:4]): c for c in second}
    def faster(c):
        o = again.get(tuple(c[:4]))
        return o if o is not None and o[4] is not None and (c[4] is None or o[4] < c[4]) else c
    return [faster(c) for c in first]


OCCUPANCY_FILE = "occupancy.json"


def record_occupancy(folder: Path) -> dict[str, int]:
    """Write ``<folder>/occupancy.json``: the CTAs per SM that the current device's occupancy
    calculator gives each kernel that reports it (CUTLASS 2.x's; the persistent kernels hold
    one), with the device and build. `fit` hands them to the cost model in place of its
    register estimate (cost_model.h, Calibration::ctas_per_sm). Returns them."""
    index = torch.cuda.current_device()
    occupancy = dict(sorted(_C.kernel_occupancy(index).items()))
    head = header("")
    record = {key: head[key] for key in ("format", "version", "device", "capability", "sm_count", "desc", "build_id",
                                          "cutlass", "torch")}
    record["recorded"] = head["started"]
    record["ctas_per_sm"] = occupancy
    Path(folder).mkdir(parents=True, exist_ok=True)
    (Path(folder) / OCCUPANCY_FILE).write_text(json.dumps(record, indent=1) + "\n")
    return occupancy


def read_occupancy(folder: Path, capability: Optional[Iterable[int]] = None,
                   sm_count: Optional[int] = None) -> dict[str, int]:
    """The CTAs per SM `record_occupancy` wrote into a sweep folder ({} if it holds none). With
    the sweep's compute capability and SM count, a file recorded on another device is refused."""
    path = Path(folder) / OCCUPANCY_FILE
    if not path.is_file():
        return {}
    data = json.loads(path.read_text())
    expected = {"capability": None if capability is None else list(capability), "sm_count": sm_count}
    for key, want in expected.items():
        have = data.get(key)
        if want is not None and have is not None and have != want:
            raise ValueError(f"{path}: recorded with {key} {have}, the sweep's is {want}: "
                             "run `python -m cutlass_ops sweep --occupancy` on this device")
    return {name: int(n) for name, n in data["ctas_per_sm"].items()}


PRICES_FORMAT = "cutlass_ops-prices"


def prices(folder: Path) -> dict:
    """What this build's cost model makes of every timed candidate of a device folder's rows (of
    its kernels): a digest of its features ({"dtype row id": {"variant kernel decomposition
    slices": digest}}), under a header naming the folder and the build. Written before a change
    to a launch (`python -m cutlass_ops prices`, no GPU needed), it tells a later build which
    candidates it prices differently: those whose launch changed, to time again (`sweep
    --retime-repriced`)."""
    from .. import tuning

    rows: dict[str, dict[str, str]] = {}
    for head, row in iter_rows(folder):
        cands = [c[:4] for c in built_candidates(row)]
        costs = _C.cost_rows(row["precision"], row["layouts"], row["problem"], row["align"], cands, device_of(head),
                             row.get("batch", 1))
        rows[f"{head['dtype']} {row['id']}"] = {
            " ".join(map(str, c)): hashlib.blake2b(repr(tuple(features)).encode(), digest_size=6).hexdigest()
            for c, (features, *_) in zip(cands, costs)}
    return {"format": PRICES_FORMAT, "folder": Path(folder).name, "build_id": tuning.build_id(), "rows": rows}


def write_prices(record: dict, path: Path) -> None:
    """``prices``' record to `path` (gzip JSON)."""
    with gzip.open(path, "wt") as f:
        json.dump(record, f, separators=(",", ":"))


def read_prices(path: Path) -> dict:
    """A record ``write_prices`` wrote."""
    with gzip.open(path, "rt") as f:
        return json.load(f)


def repriced_targets(folder: Path, before: dict) -> dict:
    """{(dtype, row id): {candidate, ...}}: the stored candidates this build prices otherwise than
    the build that recorded `before` (``prices``), as ``extend(targets=...)`` times them again.
    Candidates either build lacks are left out."""
    if before.get("format") != PRICES_FORMAT:
        raise ValueError(f"not a prices file (format {before.get('format')!r}, expected {PRICES_FORMAT!r})")
    if before["folder"] != Path(folder).name:
        raise ValueError(f"the prices were recorded on {before['folder']}'s rows, not {Path(folder).name}'s")
    now = prices(folder)["rows"]
    targets: dict = {}
    for key, candidates in now.items():
        then = before["rows"].get(key, {})
        changed = {c for c, digest in candidates.items() if then.get(c, digest) != digest}
        if changed:
            dtype, row_id = key.split(" ", 1)
            targets[(dtype, row_id)] = {(v, k, d, int(n)) for v, k, d, n in (c.split(" ") for c in changed)}
    return targets


def iter_rows(folder: Path) -> Iterator[tuple[dict, dict]]:
    """(header, row) for every row of the sweep files in one device folder."""
    for path in sorted(Path(folder).glob("*.jsonl.gz")):
        head, rows = read(path)
        for row in rows:
            yield head, row
