"""Benchmark shape suites, shared by the bench CLI and the tests.

A case is (M, N, K) plus how the operands are laid out: `layout` gives A's and B's storage
as in torch code (n: the tensor itself, row-major; t: a transposed view, column-major), and
`offset` shifts both operands by one element in their storage, breaking 16-byte alignment.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Case:
    m: int
    n: int
    k: int
    layout: str = "nn"  # A, B: n = row-major tensor, t = transposed view (column-major)
    offset: bool = False  # operands start one element into their storage
    suite: str = ""

    @property
    def label(self) -> str:
        extra = "" if self.layout == "nn" else f" {self.layout}"
        extra += " +1" if self.offset else ""
        return f"{self.m}x{self.n}x{self.k}{extra}"

    @property
    def flops(self) -> int:
        return 2 * self.m * self.n * self.k


def _cases(suite: str, shapes, layout: str = "nn", offset: bool = False) -> list[Case]:
    return [Case(m, n, k, layout, offset, suite) for m, n, k in shapes]


SQUARE = _cases("square", [(s, s, s) for s in (256, 512, 1024, 2048, 4096, 8192, 16384)])

# Projections of common models, (N, K): Llama-3-8B q/o (4096x4096), gate/up (14336x4096),
# down (4096x14336), fused qkv with GQA (6144x4096), LM head (128256x4096); M is the
# number of tokens.
LLM_NK = [(4096, 4096), (14336, 4096), (4096, 14336), (6144, 4096), (128256, 4096)]
LLM_M = (1, 16, 64, 128, 512, 2048, 8192)
LLM = _cases("llm", [(m, n, k) for n, k in LLM_NK for m in LLM_M])

SKINNY = _cases("skinny", [
    (256, 256, 524288),  # huge K, tiny output: split-K territory
    (32768, 32768, 64),  # tiny K: bandwidth-bound output write
    (32768, 32, 32768),
    (32, 32768, 32768),
    (1, 4096, 65536),
    (65536, 1, 4096),
])

ODD = [
    *_cases("odd", [
        (4095, 4097, 4093),  # cuBLAS falls off a cliff here (measured: 157 vs 663 TFLOP/s at 4096^3)
        (8205, 5921, 2949),
        (777, 1234, 4321),
        (1000, 1000, 1000),
        (4099, 4099, 4099),
        (127, 8191, 1021),
    ]),
    *_cases("odd", [(4096, 4096, 4096), (2048, 2048, 2048)], offset=True),
]

TRANSPOSED = [c for layout in ("tn", "nt", "tt") for c in _cases("transposed", [(4096, 4096, 4096), (128, 4096, 4096)],
                                                                   layout=layout)]

# KernelBench (level 1) matmul problems: square, rectangular, tall-skinny, transposed.
KERNELBENCH = [
    *_cases("kernelbench", [(2048, 2048, 2048), (1024, 2048, 4096), (16384, 16, 16384), (256, 256, 131072),
                            (16384, 16384, 32)]),
    *_cases("kernelbench", [(1024, 2048, 4096)], layout="tn"),
    *_cases("kernelbench", [(1024, 2048, 4096)], layout="nt"),
]

SUITES = {
    "square": SQUARE,
    "llm": LLM,
    "skinny": SKINNY,
    "odd": ODD,
    "transposed": TRANSPOSED,
    "kernelbench": KERNELBENCH,
}
SUITES["all"] = [c for name in ("square", "llm", "skinny", "odd", "transposed", "kernelbench") for c in SUITES[name]]

# --quick: one or two of each kind, under two minutes on an H100 for one dtype with auto and torch.
QUICK = [
    Case(1024, 1024, 1024, suite="square"),
    Case(4096, 4096, 4096, suite="square"),
    Case(8192, 8192, 8192, suite="square"),
    Case(16, 4096, 4096, suite="llm"),
    Case(128, 14336, 4096, suite="llm"),
    Case(2048, 4096, 14336, suite="llm"),
    Case(4095, 4097, 4093, suite="odd"),
    Case(777, 1234, 4321, suite="odd"),
    Case(4096, 4096, 4096, "tn", suite="transposed"),
    Case(256, 256, 131072, suite="skinny"),
]


# Operand layout letters the command line takes, A's then B's: r (row-major, a contiguous
# tensor) or c (column-major, a transposed view); n and t, BLAS's words for the same, too.
LAYOUT_LETTERS = {"r": "n", "n": "n", "c": "t", "t": "t"}


def parse_layout(text: str) -> str:
    """'rr', 'rc', 'cr', 'cc' (or BLAS's n/t) -> the cases' 'nn', 'nt', 'tn', 'tt'; anything
    else is a ValueError naming the letters allowed."""
    letters = text.strip().lower()
    if len(letters) != 2 or any(c not in LAYOUT_LETTERS for c in letters):
        raise ValueError(f"layout takes two letters, A's then B's: r (row-major) or c (column-major; n and t "
                         f"are accepted for r and c), got {text!r}")
    return "".join(LAYOUT_LETTERS[c] for c in letters)


def parse_shapes(text: str, layout: str = "rr") -> list[Case]:
    """'MxNxK,MxNxK,...' -> cases (suite 'custom') in `layout` (parse_layout's letters)."""
    layout = parse_layout(layout)
    cases = []
    for item in text.split(","):
        item = item.strip()
        if not item:
            continue
        parts = item.lower().split("x")
        if len(parts) != 3 or not all(p.isdigit() for p in parts):
            raise ValueError(f"shape must look like MxNxK, got {item!r}")
        m, n, k = (int(p) for p in parts)
        cases.append(Case(m, n, k, layout, False, "custom"))
    return cases
