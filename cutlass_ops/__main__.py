"""Command line: python -m cutlass_ops {info,list,explain,bench,tune,sweep,fit,evaluate,results,report,demo,profile,fuzz}."""

from __future__ import annotations

import argparse
import re
import sys

import torch

from . import precisions

# explain's --dtype: every precision's name and alias but 3xTF32 (a float32 mode, --fp32-mode)
DTYPES = {name: precisions.torch_dtype(name) for name in (*precisions.TORCH_DTYPE, *precisions.ALIASES)
          if name != "3xtf32"}


def parse_shape(text: str) -> tuple[int, int, int]:
    match = re.fullmatch(r"(\d+)[x,](\d+)[x,](\d+)", text.strip())
    if not match:
        raise argparse.ArgumentTypeError(f"shape must look like MxNxK (e.g. 4096x4096x4096), got {text!r}")
    return tuple(int(g) for g in match.groups())


def meta_operands(m: int, n: int, k: int, dtype: torch.dtype, layout: str):
    """Meta tensors for A (m x k) and B (k x n); layout letters per operand: n/r = row-major
    (contiguous), t/c = column-major (the transpose of a contiguous tensor)."""
    def make(rows, cols, letter):
        if letter in "nr":
            return torch.empty(rows, cols, dtype=dtype, device="meta")
        return torch.empty(cols, rows, dtype=dtype, device="meta").t()
    return make(m, k, layout[0]), make(k, n, layout[1])


def cmd_info(args) -> int:
    import cutlass_ops
    print(cutlass_ops.info())
    return 0


def cmd_list(args) -> int:
    import cutlass_ops
    cap = tuple(int(x) for x in args.capability.split(".")) if args.capability else None
    for k in cutlass_ops.list_kernels(cap):
        print(f"{k.name:52s} {k.dtype:5s} {k.layouts} align {k.alignment} {k.arch:8s} "
              f"tile {'x'.join(map(str, k.tile))} smem {k.smem_bytes // 1024} KiB")
    return 0


def cmd_explain(args) -> int:
    import cutlass_ops
    m, n, k = args.shape
    from .bench.suites import parse_layout

    try:
        layout = parse_layout(args.layout)
    except ValueError as error:
        print(f"--layout: {error}", file=sys.stderr)
        return 2
    a, b = meta_operands(m, n, k, DTYPES[args.dtype], layout)
    tf32 = args.dtype == "tf32"
    previous = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = tf32 or (previous and DTYPES[args.dtype] == torch.float32)
    try:
        device = args.device if args.device != "auto" else (None if torch.cuda.is_available() else "h100")
        if device is None:
            a, b = a.to_empty(device="cuda"), b.to_empty(device="cuda")
        print(cutlass_ops.explain(a, b, kernel=args.kernel, device=device))
    finally:
        torch.backends.cuda.matmul.allow_tf32 = previous
    return 0


def _gpu_and_dtypes(command: str, dtype_list: str):
    """The --dtype list in the bench's names, or None (after saying why) with an unknown dtype
    or without a GPU. Any precision name or alias is taken (f16, float16 and fp16 alike)."""
    import torch

    from . import bench

    try:
        dtypes = [bench.bench_name(d) for d in dtype_list.split(",") if d.strip()]
    except ValueError as error:
        print(f"--dtype: {error}", file=sys.stderr)
        return None
    if not torch.cuda.is_available():
        print(f"{command} needs a CUDA device", file=sys.stderr)
        return None
    return dtypes


def plot_unavailable(args) -> bool:
    """--plot given without matplotlib: say so before any work is done (not after the run)."""
    if not getattr(args, "plot", None):
        return False
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        print("--plot needs matplotlib (pip install matplotlib); nothing was run", file=sys.stderr)
        return True
    return False


def cmd_bench(args) -> int:
    from . import bench
    try:
        cases = bench.parse_shapes(args.shapes, args.layout) if args.shapes else None
    except ValueError as error:
        print(f"--shapes/--layout: {error}", file=sys.stderr)
        return 2
    dtypes = _gpu_and_dtypes("bench", args.dtype)
    if dtypes is None:
        return 2
    if not cases:
        cases = bench.QUICK if args.quick else bench.SUITES[args.suite]
    kernels = [k.strip() for k in args.kernels.split(",") if k.strip()]
    rounds = args.rounds or (2 if args.quick else 3)
    rows = bench.run(cases, dtypes=dtypes, kernels=kernels, rounds=rounds, rep_ms=args.rep_ms,
                     progress=not args.no_progress)
    latency = bench.latency(dtype_name=dtypes[0]) if (args.latency or args.quick) else []
    print(bench.table(rows))
    if latency:
        print()
        print("host path, per call (tiny problems):")
        print(bench.latency_table(latency))
    meta = {"command": " ".join(["python -m cutlass_ops"] + sys.argv[1:]), "rounds": rounds, "rep_ms": args.rep_ms,
            "note": args.note}
    if args.json:
        bench.write_json(args.json, rows, latency, meta)
    if args.csv:
        bench.write_csv(args.csv, rows)
    if args.plot:
        bench.plot(args.plot, rows)
    print()
    for line in bench.summary(rows):
        print(line)
    return 1 if any(not r.ok for r in rows) else 0


def cmd_tune(args) -> int:
    import torch

    from . import bench, ops, tuning
    from .bench.runner import make_operands

    try:
        custom = bench.parse_shapes(args.shapes, args.layout) if args.shapes else None
    except ValueError as error:
        print(f"--shapes/--layout: {error}", file=sys.stderr)
        return 2
    dtypes = _gpu_and_dtypes("tune", args.dtype)
    if dtypes is None:
        return 2
    cases = custom or bench.SUITES[args.suite]
    generator = torch.Generator(device="cuda").manual_seed(0)
    before = len(tuning.entries())
    previous_on = tuning.autotune_enabled()
    try:
        tuning.set_autotune(True)
        for dtype_name in dtypes:
            dtype = bench.DTYPES[dtype_name][0]
            with precisions.computing_in(dtype_name):
                for case in cases:
                    a, b = make_operands(case, dtype, generator)
                    plan = ops.explain(a, b)
                    ops.mm(a, b)
                    tuned = ops.explain(a, b)
                    print(f"{dtype_name:6} {case.label:28} {tuned.kernel} ({tuned.decomposition}"
                          + (f" x{tuned.splits}" if tuned.decomposition == "split-k" else "")
                          + ("" if (tuned.raster, tuned.swizzle) == ("heuristic", 1)
                             else f", {tuned.raster} swizzle {tuned.swizzle}") + ")"
                          + ("" if tuned.kernel == plan.kernel and tuned.decomposition == plan.decomposition
                             else f"   cost model: {plan.kernel} ({plan.decomposition})"))
                    del a, b
    finally:
        tuning.set_autotune(previous_on)
    path = tuning.save(args.out)
    print(f"{len(tuning.entries()) - before} new entries; table ({len(tuning.entries())} entries) saved to {path}")
    return 0


def cmd_sweep(args) -> int:
    from pathlib import Path

    if not torch.cuda.is_available():
        print("sweep needs a CUDA device", file=sys.stderr)
        return 2
    from .calibration import problems, sweep

    default = ",".join(problems.BATCHED_SIZES if args.batched else problems.SIZES)
    dtypes = [d.strip() for d in (args.dtype or default).split(",") if d.strip()]
    unknown = [d for d in dtypes if d not in (problems.BATCHED_SIZES if args.batched else problems.SIZES)]
    if unknown:
        known = problems.BATCHED_SIZES if args.batched else problems.SIZES
        print(f"--dtype: unknown {unknown}; choose from {list(known)}", file=sys.stderr)
        return 2
    if args.occupancy:
        folder = sweep.device_folder(args.out)
        occupancy = sweep.record_occupancy(folder)
        print(f"{len(occupancy)} kernels' CTAs per SM written to {folder / sweep.OCCUPANCY_FILE}")
        return 0
    if sum(bool(x) for x in (args.add_kernels, args.retime, args.retime_contradicted, args.retime_repriced)) > 1:
        print("--add-kernels, --retime, --retime-contradicted and --retime-repriced: one at a time", file=sys.stderr)
        return 2
    files = True if args.batched else None  # --batched: its files alone; else single and batched
    if args.retime_contradicted or args.retime_repriced:
        # Exactly the stored candidates named, timed again and replaced (sweep.extend's targets).
        folder = sweep.device_folder(args.out)
        try:
            if args.retime_contradicted:
                from .calibration import compare

                other = Path(args.retime_contradicted)
                targets = compare.retime_targets(compare.compare(folder, other))
                what, targets_are = (f"contradicted by {other} (over {compare.FACTOR:g}x either way)",
                                     "the candidates another device's sweep contradicts")
            else:
                before = sweep.read_prices(Path(args.retime_repriced))
                targets = sweep.repriced_targets(folder, before)
                what = f"priced otherwise than by build {before['build_id']}"
                targets_are = f"the candidates {what}"
            print(f"{sum(len(t) for t in targets.values())} timings in {len(targets)} rows of {folder} are {what}: "
                  "timing them again", file=sys.stderr)
            sweep.extend(folder, [], dtypes, time_limit=args.time_limit, reps=args.reps, passes=args.passes,
                         progress=not args.no_progress, targets=targets, batched=files, targets_are=targets_are)
        except (OSError, ValueError, KeyError) as error:
            flag = "--retime-contradicted" if args.retime_contradicted else "--retime-repriced"
            print(f"{flag}: {error}", file=sys.stderr)
            return 2
        return 0
    if args.add_kernels or args.retime:
        folder = sweep.device_folder(args.out)
        try:
            names = args.add_kernels or args.retime
            sweep.extend(folder, [k.strip() for k in names.split(",") if k.strip()], dtypes,
                         time_limit=args.time_limit, reps=args.reps, passes=args.passes, progress=not args.no_progress,
                         retime=bool(args.retime), decomposition=args.decomposition, batched=files,
                         variants=[v.strip() for v in args.variant.split(",") if v.strip()] if args.variant else None)
        except ValueError as error:
            print(f"--{'retime' if args.retime else 'add-kernels'}: {error}", file=sys.stderr)
            return 2
        return 0
    sweep.run(dtypes, Path(args.out), time_limit=args.time_limit, reps=args.reps, limit=args.limit,
              progress=not args.no_progress, passes=args.passes, batched=args.batched, append=args.append)
    return 0


def cmd_prices(args) -> int:
    from pathlib import Path

    from .calibration import sweep

    record = sweep.prices(args.sweep)
    sweep.write_prices(record, Path(args.out))
    print(f"{sum(len(r) for r in record['rows'].values())} candidates of {len(record['rows'])} rows priced by build "
          f"{record['build_id']}: {args.out}")
    return 0


def cmd_fit(args) -> int:
    from pathlib import Path

    from .calibration import fit, store

    folder = Path(args.sweep)
    out = Path(args.out) if args.out else store.DATA_DIR / f"{folder.name}{store.SUFFIX}"
    calibration = fit.fit(folder, out)
    report = {k: v for k, v in calibration["fit"].items() if "rms_log" in v}
    worst = sorted(report.items(), key=lambda kv: -kv[1]["rms_log"])[:5]
    print(f"{len(calibration['kernels'])} kernels fitted on {sum(r['samples'] for r in report.values())} "
          f"training samples; copies {calibration['copies']}")
    for key, r in worst:
        print(f"  widest fit: {key}: rms log error {r['rms_log']:.3f} over {r['samples']} samples")
    cv = calibration["fit"]["residual cross-validation"]
    residual = calibration["residual"]
    points = sum(len(v) // 6 for slots in residual["fields"].values() for v in slots.values())
    print(f"residuals: {points} training points; cross-validation chose {cv['chosen']} "
          f"(regret geomean {cv[cv['chosen']]['regret_geomean']:.4f}, p95 {cv[cv['chosen']]['regret_p95']:.3f} "
          f"on held-out training folds)")
    for report in (cv, cv.get("batched", {})):
        kept = report.get("incumbent")
        if kept and kept["kept"]:
            print(f"  {kept['setting']}: kept from the calibration it replaces, level with the lowest "
                  f"({kept['lowest']}) within two standard errors")
    if "batched" in cv:
        b = cv["batched"]
        print(f"batched residuals: cross-validation chose {b['chosen']} (regret geomean "
              f"{b[b['chosen']]['regret_geomean']:.4f}, p95 {b[b['chosen']]['regret_p95']:.3f} on {b[b['chosen']]['rows']} "
              f"held-out batched rows)")
    unrecorded = fit.unrecorded_occupancy(calibration)
    if unrecorded:
        print(f"occupancy: {len(unrecorded)} CUTLASS 2.x kernels without recorded CTAs per SM (estimated), e.g. "
              f"{unrecorded[0]}: `python -m cutlass_ops sweep --occupancy` on the GPU records them")
    print(f"written to {out}")
    return 0


def cmd_evaluate(args) -> int:
    import json
    from pathlib import Path

    from .calibration import evaluate

    splits = ("train", "test") if args.split == "all" else (args.split,)
    judged, untimed = evaluate.judge(Path(args.sweep), splits, Path(args.unseen_by) if args.unseen_by else None)
    groups = {"all": evaluate.summary(judged), **evaluate.grouped(judged)}
    print(evaluate.table(groups, markdown=args.markdown))
    if untimed:
        print(f"\n{len(untimed)} problems whose pick was never timed (sweep again): {untimed[:5]}")
    if args.worst:
        print()
        for j in evaluate.worst(judged, args.worst):
            print(evaluate.describe(j))
    if args.json:
        Path(args.json).write_text(json.dumps({name: evaluate.nan_to_none(s) for name, s in groups.items()},
                                              indent=1) + "\n")
    if args.plot:
        evaluate.plot(args.plot, judged, f"{Path(args.sweep).name}, {args.split} split")
    return 1 if untimed else 0


def cmd_cover(args) -> int:
    from pathlib import Path

    from .calibration import cover

    folder = Path(args.sweep)
    if not any(folder.glob("*.jsonl.gz")):
        print(f"cover: {folder}: no sweep files (*.jsonl.gz)", file=sys.stderr)
        return 2
    print(cover.report(cover.cover(folder, args.tolerance)))
    return 0


def cmd_compare(args) -> int:
    from pathlib import Path

    from .calibration import compare

    try:
        result = compare.compare(Path(args.first), Path(args.second), args.factor or compare.FACTOR)
    except ValueError as error:
        print(f"compare: {error}", file=sys.stderr)
        return 2
    print(compare.report(result, Path(args.first).name, Path(args.second).name, args.most))
    return 0


def cmd_results(args) -> int:
    from .calibration import results

    return results.main(args)


def cmd_report(args) -> int:
    from . import bench

    rows, env = [], None
    for path in args.files:
        file_rows, rest = bench.read_json(path)
        rows += file_rows
        env = env or rest.get("environment")
    print(bench.markdown(rows) if args.markdown else bench.table(rows))
    print()
    for line in bench.summary(rows):
        print(line)
    if args.plot:
        bench.plot(args.plot, rows, env)
    return 0


def cmd_demo(args) -> int:
    from . import demo

    return demo.main(args)


def cmd_profile(args) -> int:
    """FILE.py:FUNCTION returns (model, inputs): profile() runs model(*inputs) and prints the report."""
    import importlib.util
    from pathlib import Path

    if not torch.cuda.is_available():
        print("profile needs a CUDA device", file=sys.stderr)
        return 2
    from .profiler import profile

    path, _, function = args.target.rpartition(":")
    if not path or not function or not Path(path).is_file():
        print(f"profile: expected FILE.py:FUNCTION (a function returning (model, inputs)), got {args.target!r}",
              file=sys.stderr)
        return 2
    spec = importlib.util.spec_from_file_location(Path(path).stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    model, inputs = getattr(module, function)()
    autocast_dtype = torch.bfloat16 if args.autocast == "none" else precisions.torch_dtype(args.autocast)
    with torch.autocast("cuda", dtype=autocast_dtype, enabled=args.autocast != "none"):
        report = profile(model, *inputs, backward=args.backward, rounds=args.rounds)
    print(report)
    if args.json:
        report.to_json(args.json)
    if args.plot:
        report.plot(args.plot)
    return 0


def cmd_fuzz(args) -> int:
    from . import fuzz

    return fuzz.main(args)


def main(argv=None) -> int:
    from . import __version__

    parser = argparse.ArgumentParser(prog="python -m cutlass_ops", description="cutlass_ops: CUTLASS-backed torch.mm")
    parser.add_argument("--version", action="version", version=f"cutlass_ops {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    sub.add_parser("info", help="versions, build, device and kernel counts").set_defaults(func=cmd_info)

    p = sub.add_parser("list", help="list the kernels in this build")
    p.add_argument("--capability", help="only kernels that run on this compute capability, e.g. 9.0")
    p.set_defaults(func=cmd_list)

    p = sub.add_parser("explain", help="which kernel a shape dispatches to, and why")
    p.add_argument("--shape", type=parse_shape, required=True, help="MxNxK")
    p.add_argument("--dtype", choices=sorted(DTYPES), default="bf16")
    p.add_argument("--layout", default="rr", help="A then B: r row-major, c column-major, e.g. rc for x @ w.t() "
                                                    "(n and t are taken for r and c; default rr)")
    p.add_argument("--device", default="auto",
                   help="a preset (h100, a100, l40s, ...) or 'auto' (the visible GPU, else h100)")
    p.add_argument("--kernel", default=None, help="check whether this kernel could run the problem")
    p.set_defaults(func=cmd_explain)

    p = sub.add_parser("bench", help="time cutlass_ops kernels against torch.mm")
    p.add_argument("--suite", default="square", choices=["square", "llm", "skinny", "odd", "transposed",
                                                          "kernelbench", "all"])
    p.add_argument("--dtype", default="bf16",
                   help="comma list of bf16, f16, tf32, f32, 3xtf32 (f32 in 3xTF32 mode), f64 (default bf16; "
                        "fp16, float16 and the other spellings are taken too)")
    p.add_argument("--kernels", default="auto,torch",
                   help="comma list: auto (dispatch), torch (cuBLAS), kernel names or globs (default auto,torch)")
    p.add_argument("--shapes", help="comma list of MxNxK, instead of a suite")
    p.add_argument("--layout", default="rr", help="layout for --shapes, A then B: r row-major, c column-major "
                                                    "(n and t are taken for r and c; default rr)")
    p.add_argument("--quick", action="store_true", help="a representative subset, under 2 minutes on an H100")
    p.add_argument("--rounds", type=int, default=0, help="alternating timing rounds (default 3, quick 2)")
    p.add_argument("--rep-ms", type=float, default=100.0, help="timed milliseconds per measurement")
    p.add_argument("--latency", action="store_true", help="also measure per-call host latency at 64^3 and 128^3")
    p.add_argument("--json", help="write rows and environment to this JSON file")
    p.add_argument("--note", default="", help="free text kept in the JSON's meta, e.g. the commit benchmarked")
    p.add_argument("--csv", help="write rows to this CSV file")
    p.add_argument("--plot", help="write a figure (PNG) to this file")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_bench)

    p = sub.add_parser("tune", help="autotune a suite's shapes and save the tuning table")
    p.add_argument("--suite", default="all", choices=["square", "llm", "skinny", "odd", "transposed",
                                                       "kernelbench", "all"])
    p.add_argument("--dtype", default="bf16", help="comma list of bf16, f16, tf32, f32, 3xtf32, f64 (or fp16, "
                                                   "float16 and the other spellings)")
    p.add_argument("--shapes", help="comma list of MxNxK, instead of a suite")
    p.add_argument("--layout", default="rr", help="layout for --shapes, A then B: r row-major, c column-major "
                                                    "(n and t are taken for r and c; default rr)")
    p.add_argument("--out", help="where to save the table (default: cutlass_ops.tuning.cache_path())")
    p.set_defaults(func=cmd_tune)

    p = sub.add_parser("sweep", help="time every candidate kernel on the calibration problem sets (resumable)")
    p.add_argument("--dtype", default=None,
                   help="comma list of bf16, f16, tf32, f32, f64, 3xtf32 (default: all, in that order; with "
                        "--batched, bf16 and f16)")
    p.add_argument("--out", default="benchmarks/sweep", help="folder for the sweep files (default benchmarks/sweep)")
    p.add_argument("--time-limit", type=float, default=0, help="start no new problem after this many seconds")
    p.add_argument("--limit", type=int, default=0, help="at most this many new problems per precision")
    p.add_argument("--reps", type=int, default=5, help="timings per candidate and pass (median kept)")
    p.add_argument("--passes", type=int, default=2, help="passes over the candidates, in alternating order")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--add-kernels", metavar="NAMES",
                   help="comma list of kernels added since the sweep: time just them on its problems and merge them "
                        "into its rows (resumable)")
    p.add_argument("--retime", metavar="NAMES",
                   help="comma list of kernels (shell patterns allowed) whose launch changed since the sweep: time "
                        "their stored candidates again and replace them (resumable)")
    p.add_argument("--retime-contradicted", metavar="SWEEP",
                   help="another device's sweep folder: time again exactly the candidates of this GPU's sweep that it "
                        "contradicts by over 2x either way (`compare`), and replace them (resumable)")
    p.add_argument("--retime-repriced", metavar="PRICES",
                   help="a file `python -m cutlass_ops prices` wrote before a launch changed: time again exactly the "
                        "candidates of this GPU's sweep that this build prices otherwise, and replace them (resumable)")
    p.add_argument("--decomposition", choices=["data-parallel", "split-k", "stream-k"],
                   help="with --retime or --add-kernels: only the candidates of this K decomposition")
    p.add_argument("--variant", metavar="NAMES",
                   help="with --retime or --add-kernels: only the candidates of these variants (comma list of "
                        "in-place, staged-row-b, staged-col-b, kmajor-b); e.g. --retime '*' --variant "
                        "staged-row-b,staged-col-b after a change to the staging copies")
    p.add_argument("--batched", action="store_true",
                   help="the batched (bmm) problem set, into <dtype>-batched.jsonl.gz (bf16, f16); with "
                        "--add-kernels, --retime or --retime-contradicted, its files alone (without it, both)")
    p.add_argument("--occupancy", action="store_true",
                   help="only record each kernel's CTAs per SM on this GPU (CUDA's occupancy calculator) into "
                        "<out>/<device>/occupancy.json, for fit")
    p.add_argument("--append", action="store_true",
                   help="resume a file recorded on another build: measure the problems it lacks (a problem set "
                        "grown since) on this one; its header lists the builds that appended rows")
    p.set_defaults(func=cmd_sweep)

    p = sub.add_parser("prices", help="what this build's cost model makes of a sweep's stored candidates, for "
                                      "`sweep --retime-repriced` after a launch changes (no GPU needed)")
    p.add_argument("sweep", help="one device's sweep folder")
    p.add_argument("--out", required=True, help="the file to write (gzip JSON)")
    p.set_defaults(func=cmd_prices)

    p = sub.add_parser("fit", help="fit the cost model's constants on a sweep's training split")
    p.add_argument("sweep", help="one device's sweep folder, e.g. benchmarks/sweep/sm90_132sm_nvidia_h100_80gb_hbm3")
    p.add_argument("--out", help="calibration file to write (default: cutlass_ops/calibration/data/<folder>.json)")
    p.set_defaults(func=cmd_fit)

    p = sub.add_parser("evaluate", help="judge the cost model on a sweep's test split, from stored timings")
    p.add_argument("sweep", help="one device's sweep folder")
    p.add_argument("--split", default="test", choices=["test", "train", "all"])
    p.add_argument("--unseen-by", metavar="SWEEP",
                   help="only problems this other sweep folder does not hold (a re-measurement on new shapes)")
    p.add_argument("--markdown", action="store_true", help="print a markdown table")
    p.add_argument("--worst", type=int, default=0, help="also list the N problems of highest regret")
    p.add_argument("--json", help="write the summary to this JSON file")
    p.add_argument("--plot", help="write the predicted-vs-measured and regret figure (PNG) to this file")
    p.set_defaults(func=cmd_evaluate)

    p = sub.add_parser("cover", help="which kernel groups the sweep says pay: a greedy set cover of its problems")
    p.add_argument("sweep", help="one device's sweep folder")
    p.add_argument("--tolerance", type=float, default=0.02,
                   help="a problem is covered by a group within this fraction of the fastest (default 0.02)")
    p.set_defaults(func=cmd_cover)

    p = sub.add_parser("compare", help="two devices' sweeps side by side: the timings one of them contradicts")
    p.add_argument("first", help="one device's sweep folder")
    p.add_argument("second", help="another device's sweep folder, of the same problems")
    p.add_argument("--factor", type=float,
                   help="a timing this many times slower or faster than the other's is contradicted (default 2)")
    p.add_argument("--most", type=int, default=8, help="list this many of each kind, the largest first")
    p.set_defaults(func=cmd_compare)

    p = sub.add_parser("results", help="regenerate README's and RESULTS.md's tables from the evaluation files")
    p.add_argument("--check", action="store_true", help="change nothing; exit 1 if a table is stale")
    p.set_defaults(func=cmd_results)

    p = sub.add_parser("report", help="tables, summary and figure from bench --json files")
    p.add_argument("files", nargs="+", help="JSON files written by bench --json")
    p.add_argument("--markdown", action="store_true", help="print a markdown table")
    p.add_argument("--plot", help="write a figure (PNG) to this file")
    p.set_defaults(func=cmd_report)

    p = sub.add_parser("demo", help="an MLP's training step on cuBLAS, patched torch.mm, and dispatcher mode")
    p.add_argument("--dtype", choices=["bf16", "f16"], default="bf16")
    p.add_argument("--tokens", type=int, default=4096)
    p.add_argument("--d-model", type=int, default=2048)
    p.add_argument("--d-ff", type=int, default=8192)
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--steps", type=int, default=10)
    p.set_defaults(func=cmd_demo)

    p = sub.add_parser("profile", help="a model's matrix products timed on PyTorch and on cutlass_ops, side by side")
    p.add_argument("target", help="FILE.py:FUNCTION, a function returning (model, inputs), e.g. "
                                  "examples/llama_training.py:profile_target")
    p.add_argument("--backward", action="store_true", help="also the backward pass of the first output's sum")
    p.add_argument("--autocast", choices=["bf16", "f16", "none"], default="bf16",
                   help="run the model under CUDA autocast to this dtype (default bf16)")
    p.add_argument("--rounds", type=int, default=3, help="alternating timing rounds per product")
    p.add_argument("--json", help="write the report to this JSON file")
    p.add_argument("--plot", help="write a plot of each product's ratio against its share of GEMM time")
    p.set_defaults(func=cmd_profile)

    p = sub.add_parser("fuzz", help="random matmuls checked against float64 and torch.mm")
    p.add_argument("--cases", type=int, default=1000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--curated", action="store_true", help="the fixed edge-case set instead of random cases")
    p.add_argument("--replay", help="run one case, given as the JSON line a failure printed")
    p.add_argument("--progress", action="store_true", help="print a line every 500 cases")
    p.set_defaults(func=cmd_fuzz)

    args = parser.parse_args(argv)
    from . import _LOAD_ERROR

    if plot_unavailable(args):
        return 2
    if _LOAD_ERROR is not None:  # the compiled extension is missing or stale: only --help got this far
        print(f"python -m cutlass_ops {args.command}: {_LOAD_ERROR}", file=sys.stderr)
        return 1
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
