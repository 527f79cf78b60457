"""The benchmark harness: suites, CLI parsing and result formatting run anywhere (fake
timings); a two-shape run on the GPU produces a well-formed table with a correctness column."""

import json
import math
from pathlib import Path

import pytest
import torch

from cutlass_ops import bench, precisions
from cutlass_ops.bench.runner import DATASHEET_PEAK
from cutlass_ops.__main__ import main
from cutlass_ops.bench.runner import Row, mark_ratios
from cutlass_ops.bench.suites import Case

ROOT = Path(__file__).resolve().parents[1]


def test_suites_cover_what_the_issue_lists():
    squares = {c.m for c in bench.SUITES["square"]}
    assert squares == {256, 512, 1024, 2048, 4096, 8192, 16384}
    llm_m = {c.m for c in bench.SUITES["llm"]}
    assert llm_m == {1, 16, 64, 128, 512, 2048, 8192}
    assert (128256, 4096) in {(c.n, c.k) for c in bench.SUITES["llm"]}
    assert any(c.offset for c in bench.SUITES["odd"])
    assert {c.layout for c in bench.SUITES["transposed"]} == {"tn", "nt", "tt"}
    assert (256, 256, 524288) in {(c.m, c.n, c.k) for c in bench.SUITES["skinny"]}
    everything = bench.SUITES["all"]
    for name in ("square", "llm", "skinny", "odd", "transposed", "kernelbench"):
        assert set(bench.SUITES[name]) <= set(everything)
    assert 5 <= len(bench.QUICK) <= 12
    assert all(c.layout in ("nn", "tn", "nt", "tt") for c in everything)


def test_parse_shapes():
    cases = bench.parse_shapes("4096x4096x4096, 16x14336x4096", layout="tn")
    assert [(c.m, c.n, c.k, c.layout) for c in cases] == [(4096, 4096, 4096, "tn"), (16, 14336, 4096, "tn")]
    with pytest.raises(ValueError, match="MxNxK"):
        bench.parse_shapes("4096x4096")


@pytest.mark.parametrize(("given", "case_layout"), [("rr", "nn"), ("rc", "nt"), ("cr", "tn"), ("CC", "tt"), ("nt", "nt")])
def test_layouts_take_r_and_c(given, case_layout):
    """r (row-major) and c (column-major), or BLAS's n and t, A's letter then B's."""
    (case,) = bench.parse_shapes("64x32x16", layout=given)
    assert case.layout == case_layout


@pytest.mark.parametrize("bad", ["rx", "r", "rcc", "ab", ""])
def test_an_unknown_layout_letter_is_an_error(bad):
    with pytest.raises(ValueError, match="r \\(row-major\\) or c \\(column-major"):
        bench.parse_shapes("64x32x16", layout=bad)


def test_cli_refuses_an_unknown_layout_before_running():
    import subprocess
    import sys
    result = subprocess.run([sys.executable, "-m", "cutlass_ops", "bench", "--shapes", "64x32x16", "--layout", "rx"],
                            capture_output=True, text=True)
    assert result.returncode == 2 and "--shapes/--layout" in result.stderr and "'rx'" in result.stderr
    result = subprocess.run([sys.executable, "-m", "cutlass_ops", "explain", "--shape", "64x32x16", "--layout", "zz"],
                            capture_output=True, text=True)
    assert result.returncode == 2 and "'zz'" in result.stderr


def test_cli_version():
    import subprocess
    import sys

    import cutlass_ops
    result = subprocess.run([sys.executable, "-m", "cutlass_ops", "--version"], capture_output=True, text=True)
    assert result.returncode == 0 and result.stdout.strip() == f"cutlass_ops {cutlass_ops.__version__}"


def test_case_labels_and_flops():
    assert Case(2, 3, 4).flops == 48
    assert Case(8, 8, 8, "tn", True).label == "8x8x8 tn +1"


def fake_rows():
    rows = []
    for shape, torch_ms, auto_ms in (("4096x4096x4096", 0.20, 0.18), ("16x4096x4096", 0.020, 0.030),
                                     ("1024x1024x1024", 0.010, 0.0101)):
        m, n, k = (int(x) for x in shape.split("x"))
        case_rows = [
            Row("square", shape, m, n, k, "nn", False, "bf16", "torch", "cuBLAS", median_ms=torch_ms, spread=0.02,
                tflops=2 * m * n * k / torch_ms / 1e9, rel_error=1e-3),
            Row("square", shape, m, n, k, "nn", False, "bf16", "auto", "cutlass3x_sm90_bf16_rr_x", median_ms=auto_ms,
                spread=0.02, tflops=2 * m * n * k / auto_ms / 1e9, rel_error=1e-3),
        ]
        mark_ratios(case_rows)
        rows += case_rows
    rows.append(Row("odd", "7x7x7", 7, 7, 7, "nn", False, "bf16", "cutlass2x_bad", "cutlass2x_bad", ok=False,
                    rel_error=0.5, note="WRONG: error 5.00e-01 > 8.00e-03"))
    return rows


def test_ratios_and_noise_marking():
    rows = fake_rows()
    auto = {r.shape: r for r in rows if r.impl == "auto"}
    assert auto["4096x4096x4096"].ratio_to_torch == pytest.approx(0.20 / 0.18)
    assert "within noise" in auto["1024x1024x1024"].note  # 1% apart with a 2% spread
    assert "within noise" not in auto["16x4096x4096"].note


def test_table_and_summary_format():
    rows = fake_rows()
    text = bench.table(rows)
    header = text.splitlines()[0]
    for column in ("shape", "dtype", "impl", "kernel", "ms", "TFLOP/s", "xtorch", "spread", "%peak", "rel.err"):
        assert column in header
    assert "WRONG" in text
    summary = bench.summary(rows)
    auto_line = next(line for line in summary if line.startswith("bf16 auto"))
    expected = math.exp((math.log(0.2 / 0.18) + math.log(0.02 / 0.03) + math.log(0.010 / 0.0101)) / 3)
    assert f"geomean {expected:.3f}x" in auto_line
    assert "worst 0.667x at 16x4096x4096" in auto_line
    assert any("cutlass2x_bad: 1 wrong" in line for line in summary)


def test_json_and_csv_outputs(tmp_path):
    rows = fake_rows()
    bench.write_json(str(tmp_path / "r.json"), rows, [{"shape": "64x64x64", "dtype": "bf16", "cutlass_ops_us": 11.0,
                                                       "torch_us": 12.0, "ratio": 11 / 12}], {"command": "test"})
    payload = json.loads((tmp_path / "r.json").read_text())
    assert len(payload["rows"]) == len(rows) and payload["meta"]["command"] == "test"
    assert payload["environment"]["torch"] == torch.__version__
    bench.write_csv(str(tmp_path / "r.csv"), rows)
    lines = (tmp_path / "r.csv").read_text().splitlines()
    assert lines[0].startswith("suite,shape,m,n,k") and len(lines) == len(rows) + 1


def test_reading_a_file_names_precisions_as_the_package_does(tmp_path):
    rows = fake_rows()
    payload = {"environment": {}, "meta": {}, "latency": [], "summary": [],
               "rows": [{**r.as_dict(), "dtype": old} for r, old in zip(rows, ("fp16", "fp32", "bf16", "fp64"))]}
    (tmp_path / "old.json").write_text(json.dumps(payload))
    read, rest = bench.read_json(str(tmp_path / "old.json"))
    assert [r.dtype for r in read] == ["f16", "f32", "bf16", "f64"]
    assert rest["meta"] == {} and "rows" not in rest


def test_plot_writes_a_png(tmp_path):
    pytest.importorskip("matplotlib")
    path = tmp_path / "q.png"
    bench.plot(str(path), fake_rows())
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_cli_rejects_bad_arguments(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["bench", "--suite", "nope"])
    assert exit_.value.code == 2
    assert "invalid choice: 'nope'" in capsys.readouterr().err
    if not torch.cuda.is_available():
        assert main(["bench", "--quick"]) == 2
        assert "needs a CUDA device" in capsys.readouterr().err


@pytest.mark.gpu
def test_tiny_gpu_run_produces_a_checked_table(tmp_path):
    cases = bench.parse_shapes("256x512x128,97x83x71")
    rows = bench.run(cases, dtypes=["bf16", "fp32"], kernels=["auto", "torch"], rounds=2, rep_ms=5, progress=False)
    assert len(rows) == len(cases) * 2 * 2
    assert {r.dtype for r in rows} == {"bf16", "f32"}  # "fp32" asked for, named as everywhere else
    for r in rows:
        assert r.ok, r
        assert r.rel_error is not None and r.rel_error < 1e-2
        assert r.median_ms > 0 and r.tflops > 0
        assert r.kernel != "-"
    assert {r.kernel for r in rows if r.impl == "torch"} == {"cuBLAS"}
    text = bench.table(rows)
    assert "rel.err" in text and len(text.splitlines()) == len(rows) + 2
    latency = bench.latency(sizes=(64,), calls=200)
    assert latency[0]["cutlass_ops_us"] > 0 and latency[0]["torch_us"] > 0


@pytest.mark.gpu
def test_the_cutlass_vs_handwritten_example_runs_every_kernel_checked(capsys):
    import importlib.util

    spec = importlib.util.spec_from_file_location("example", ROOT / "examples" / "cutlass_vs_handwritten.py")
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    assert example.main(["--shapes", "256x512x128", "--rounds", "1", "--rep-ms", "5"]) == 0
    out = capsys.readouterr().out
    # the ladder's steps and the tensor-core streaming kernel beside auto and cuBLAS, all checked
    assert "cuBLAS" in out and "auto" in out and "handwritten_sm80_bf16_rr_5_mma_sync" in out
    assert "0 wrong" in out and "WRONG" not in out


@pytest.mark.parametrize("given,name", [("bf16", "bf16"), ("f16", "f16"), ("float16", "f16"), ("fp16", "f16"),
                                        ("f32", "f32"), ("fp32", "f32"), ("3xtf32", "3xtf32"), ("float64", "f64"),
                                        ("TF32", "tf32")])
def test_bench_takes_every_precision_name(given, name):
    assert bench.bench_name(given) == name and name in bench.DTYPES


def test_bench_names_its_rows_in_the_package_vocabulary():
    # One vocabulary: the bench's precisions are cutlass_ops.precisions' names, and each has
    # a datasheet peak under that name.
    assert list(bench.DTYPES) == list(precisions.TORCH_DTYPE)
    assert {name for peaks in DATASHEET_PEAK.values() for name in peaks} == set(bench.DTYPES)
    assert bench.DTYPES["3xtf32"] == bench.DTYPES["f32"] == (torch.float32, False)
    assert bench.DTYPES["tf32"] == (torch.float32, True)
    with pytest.raises(ValueError, match="unknown precision 'fp8'"):
        bench.bench_name("fp8")


def test_cli_refuses_an_unknown_dtype_before_anything_else():
    import subprocess
    import sys
    result = subprocess.run([sys.executable, "-m", "cutlass_ops", "bench", "--shapes", "64x32x16", "--dtype", "bf16,fp8"],
                            capture_output=True, text=True)
    assert result.returncode == 2 and "--dtype: unknown precision 'fp8'" in result.stderr, result.stderr
