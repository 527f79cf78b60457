"""The profiling sweep's problem sets, with their train/test split.

Every problem has a stable id, so a sweep can stop and resume, and a split decided by the id
alone, so that no fit, threshold or tuning ever sees a test problem:

* random problems, each of M, N and K log-uniform in 1..16384, half of them rounded up to a
  multiple of 8 ("random-aligned") and half left as drawn ("random-any"), in all four operand
  layouts, under a FLOP cap per precision (the sweep times every candidate kernel on each, the
  slow ones included); one in four is a test problem;
* model problems: the linear layers of public model configs (``cutlass_ops.bench.models``) at
  awkward token counts, in the layouts a training step runs them (forward "rc", the input's
  gradient "rr", the weight's gradient "cr"); whole models are held out for the test split.

Problems come in a seeded, shuffled order, so any prefix of a sweep is a fair sample of the set.
"""

from __future__ import annotations

import hashlib
import math
import random
from dataclasses import dataclass

from ..bench.models import MODELS

PRECISIONS = ("bf16", "f16", "tf32", "f32", "f64", "3xtf32")
LAYOUTS = ("rr", "rc", "cr", "cc")
MAX_DIM = 16384

# Models whose every problem is a test problem.
TEST_MODELS = ("qwen2.5-7b", "bert-large", "falcon-7b")
# One random problem in TEST_EVERY is a test problem (by a hash of its id).
TEST_EVERY = 4

# Token counts: decode batches and prefill or training batches that are not tile multiples.
FORWARD_ROWS = (1, 5, 17, 64, 100, 257, 500, 777, 1000, 1500, 2049, 3000, 4097, 6000, 8191)
TRAINING_ROWS = (257, 1000, 3000, 8191)


@dataclass(frozen=True)
class SetSize:
    random: int      # random problems
    models: float    # share of the model problems kept (1: all)
    max_flop: float  # cap on 2 M N K for random problems (four times it for model problems)


# Every candidate is timed, including the slow ones, so the FLOP caps follow each
# precision's slowest eligible kernels.
SIZES = {
    "bf16": SetSize(2400, 1.0, 2e12),
    "f16": SetSize(800, 0.25, 2e12),
    "tf32": SetSize(500, 0.3, 1e12),
    "f32": SetSize(300, 0.1, 2e11),
    "f64": SetSize(300, 0.1, 1e11),
    "3xtf32": SetSize(200, 0.1, 3e11),
}


@dataclass(frozen=True)
class Problem:
    id: str
    dtype: str
    m: int
    n: int
    k: int
    layout: str  # A then B: r = row-major, c = column-major (a transposed view)
    group: str   # random-aligned, random-any, model
    model: str = ""
    split: str = "train"

    @property
    def flop(self) -> float:
        return 2.0 * self.m * self.n * self.k


def _hash(text: str) -> int:
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")


def _log_uniform(rng: random.Random) -> int:
    return max(1, min(MAX_DIM, int(round(math.exp(rng.uniform(0.0, math.log(MAX_DIM)))))))


def random_problems(dtype: str, count: int, max_flop: float, seed: int = 0) -> list[Problem]:
    rng = random.Random(f"cutlass_ops-sweep-{dtype}-{seed}")
    out = []
    while len(out) < count:
        i = len(out)
        aligned = i % 2 == 0
        while True:
            m, n, k = (_log_uniform(rng) for _ in range(3))
            if aligned:
                m, n, k = (-(-x // 8) * 8 for x in (m, n, k))
            if 2.0 * m * n * k <= max_flop:
                break
        layout = LAYOUTS[rng.randrange(4)]
        pid = f"{dtype}-random-{i:05d}"
        split = "test" if _hash(pid) % TEST_EVERY == 0 else "train"
        out.append(Problem(pid, dtype, m, n, k, layout, "random-aligned" if aligned else "random-any", "", split))
    return out


def model_problems(dtype: str) -> list[Problem]:
    out = []
    for model in MODELS:
        split = "test" if model.name in TEST_MODELS else "train"
        for layer, n, k in model.projections():
            for t in FORWARD_ROWS:
                out.append(Problem(f"{dtype}-{model.name}-{layer}-fwd-{t}", dtype, t, n, k, "rc", "model", model.name,
                                   split))
            for t in TRAINING_ROWS:
                out.append(Problem(f"{dtype}-{model.name}-{layer}-dgrad-{t}", dtype, t, k, n, "rr", "model",
                                   model.name, split))
                out.append(Problem(f"{dtype}-{model.name}-{layer}-wgrad-{t}", dtype, n, k, t, "cr", "model",
                                   model.name, split))
    return out


def problem_set(dtype: str, seed: int = 0) -> list[Problem]:
    """The sweep's problems for one precision, in the order the sweep runs them."""
    if dtype not in SIZES:
        raise ValueError(f"unknown precision {dtype!r}; choose from {list(SIZES)}")
    size = SIZES[dtype]
    problems = random_problems(dtype, size.random, size.max_flop, seed)
    # Model problems keep their real sizes up to four times the random cap.
    models = [p for p in model_problems(dtype) if p.flop <= 4 * size.max_flop]
    if size.models < 1:
        models = [p for p in models if (_hash(p.id) % 1000) < size.models * 1000]
    problems += models
    order = random.Random(f"cutlass_ops-sweep-order-{dtype}-{seed}")
    order.shuffle(problems)
    return problems
