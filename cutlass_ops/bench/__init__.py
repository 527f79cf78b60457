"""Benchmarks: cutlass_ops kernels against torch.mm (cuBLAS) on your shapes.

    from cutlass_ops import bench
    rows = bench.run(bench.SUITES["llm"], dtypes=["bf16"], kernels=["auto", "cutlass2x_*"])
    print(bench.table(rows))

or `python -m cutlass_ops bench --help`.
"""

from .report import latency_table, markdown, plot, read_json, summary, table, write_csv, write_json
from .runner import DTYPES, Row, bench_name, latency, run
from .suites import QUICK, SUITES, Case, parse_shapes

__all__ = [
    "Case", "DTYPES", "QUICK", "Row", "SUITES", "bench_name", "latency", "latency_table", "markdown", "parse_shapes", "plot",
    "read_json", "run", "summary", "table", "write_csv", "write_json",
]
