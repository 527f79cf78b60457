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

The batched set (``batched_problem_set``, swept into its own file, ``<dtype>-batched.jsonl.gz``)
holds bmm problems: attention's four products in a training step (scores q @ k^T "rc", values
att @ v "rr", and their gradients) at head dims 64 to 128 and sequence lengths 128 to 4096 over
8 to 256 batched heads, and random batches (count log-uniform in 2..512, M, N and K log-uniform
in 1..4096, half of them multiples of 8). One in four of each is a test problem (by a hash of
its id), and every problem at head dim 96 is one too (a head dim the fit never sees).

Problems come in a seeded, shuffled order, so any prefix of a sweep is a fair sample of the set.
"""

from __future__ import annotations

import hashlib
import math
import random
from dataclasses import dataclass
from typing import Optional

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


# Long reductions, past the random problems' K: a weight gradient over many tokens (x^T @ grad,
# K the token count), few output tiles. M and N log-uniform in 16..2048, K in LONG_K_RANGE,
# half of them multiples of 8, every layout; count per precision.
LONG_K_RANGE = (16384, 262144)
LONG_K_MAX_DIM = 2048
LONG_K_MAX_FLOP = 2e11
LONG_K = {"bf16": 120, "f16": 40}


@dataclass(frozen=True)
class SetSize:
    random: int      # random problems
    models: float    # share of the model problems kept (1: all)
    max_flop: float  # cap on 2 M N K for random problems (four times it for model problems)
    # Share of the training models' problems kept, where it differs (the held-out models keep
    # `models`, so the test split stays as it was when a set grows for the fit).
    train_models: Optional[float] = None


# Every candidate is timed, including the slow ones, so the FLOP caps follow each
# precision's slowest eligible kernels.
SIZES = {
    "bf16": SetSize(2400, 1.0, 2e12),
    "f16": SetSize(800, 0.25, 2e12),
    # TF32: every training model's problem (its long reductions, the down projections at K up to
    # 28672, are otherwise few: the model problems of the test split then ran past the fit's K).
    "tf32": SetSize(500, 0.3, 1e12, train_models=1.0),
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
    group: str   # random-aligned, random-any, long-k-aligned, long-k-any, model
    model: str = ""
    split: str = "train"
    batch: int = 1  # products in a batch (bmm); 1: one matrix product


    @property
    def flop(self) -> float:
        return 2.0 * self.batch * self.m * self.n * self.k


def _hash(text: str) -> int:
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")


def _log_uniform(rng: random.Random, low: int = 1, high: int = MAX_DIM) -> int:
    return max(low, min(high, int(round(math.exp(rng.uniform(math.log(low), math.log(high)))))))


def _draw_shape(rng: random.Random, aligned: bool, max_flop: float, high: int = MAX_DIM,
                batches: tuple[int, int] = (1, 1),
                ranges: Optional[tuple[tuple[int, int], ...]] = None) -> tuple[int, int, int, int]:
    """(batch, m, n, k): the batch log-uniform in `batches` (when it is a range), then M, N and K
    log-uniform in 1..high, or in their own `ranges` (rounded up to multiples of 8 when
    `aligned`), redrawn until 2 batch M N K <= max_flop."""
    ranges = ranges or ((1, high),) * 3
    while True:
        batch = _log_uniform(rng, *batches) if batches[1] > batches[0] else batches[0]
        m, n, k = (_log_uniform(rng, low, top) for low, top in ranges)
        if aligned:
            m, n, k = (-(-x // 8) * 8 for x in (m, n, k))
        if 2.0 * batch * m * n * k <= max_flop:
            return batch, m, n, k


def _drawn_problems(rng: random.Random, dtype: str, kind: str, count: int, max_flop: float,
                    ranges: Optional[tuple[tuple[int, int], ...]] = None) -> list[Problem]:
    """`count` problems "<dtype>-<kind>-<i>", every other one aligned (group "<kind>-aligned",
    else "<kind>-any"), in a random layout; one in TEST_EVERY, by a hash of its id, held out."""
    out = []
    while len(out) < count:
        i = len(out)
        aligned = i % 2 == 0
        _, m, n, k = _draw_shape(rng, aligned, max_flop, ranges=ranges)
        layout = LAYOUTS[rng.randrange(4)]
        pid = f"{dtype}-{kind}-{i:05d}"
        split = "test" if _hash(pid) % TEST_EVERY == 0 else "train"
        out.append(Problem(pid, dtype, m, n, k, layout, f"{kind}-aligned" if aligned else f"{kind}-any", "", split))
    return out


def random_problems(dtype: str, count: int, max_flop: float, seed: int = 0) -> list[Problem]:
    return _drawn_problems(random.Random(f"cutlass_ops-sweep-{dtype}-{seed}"), dtype, "random", count, max_flop)


def long_k_problems(dtype: str, count: int, seed: int = 0) -> list[Problem]:
    dims = (16, LONG_K_MAX_DIM)
    return _drawn_problems(random.Random(f"cutlass_ops-sweep-long-k-{dtype}-{seed}"), dtype, "long-k", count,
                           LONG_K_MAX_FLOP, ranges=(dims, dims, LONG_K_RANGE))


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

    def kept(p: Problem) -> bool:
        share = size.models if p.split == "test" or size.train_models is None else size.train_models
        return share >= 1 or (_hash(p.id) % 1000) < share * 1000

    problems += [p for p in models if kept(p)]
    problems += long_k_problems(dtype, LONG_K.get(dtype, 0), seed)
    order = random.Random(f"cutlass_ops-sweep-order-{dtype}-{seed}")
    order.shuffle(problems)
    return problems


# ---- batched (bmm) problems ---------------------------------------------------------------------

BATCHED_HEADS = (8, 16, 32, 64, 128, 256)      # batch x heads of attention
BATCHED_SEQ = (128, 256, 512, 1024, 2048, 4096)
BATCHED_HEAD_DIMS = (64, 80, 96, 128)
TEST_HEAD_DIM = 96
BATCHED_MAX_DIM = 4096
BATCHED_SIZES = {"bf16": (240, 160, 4e12), "f16": (80, 60, 4e12)}  # attention, random problems, FLOP cap


def attention_problems(dtype: str, count: int, max_flop: float, seed: int = 0) -> list[Problem]:
    """`count` products of attention's training step, drawn from the grid of batched heads,
    sequence lengths and head dims: scores q @ k^T (S x D by D x S, "rc"), values att @ v (S x S
    by S x D, "rr"), the scores' gradient d_out @ v^T ("rc"), the values' gradient att^T @ d_out
    ("cr")."""
    rng = random.Random(f"cutlass_ops-sweep-batched-{dtype}-{seed}")
    kinds = (("scores", "rc"), ("values", "rr"), ("dscores", "rc"), ("dvalues", "cr"))
    seen, out = set(), []
    while len(out) < count:
        bh, s, d = rng.choice(BATCHED_HEADS), rng.choice(BATCHED_SEQ), rng.choice(BATCHED_HEAD_DIMS)
        kind, layout = kinds[rng.randrange(len(kinds))]
        m, n, k = {"scores": (s, s, d), "values": (s, d, s), "dscores": (s, s, d), "dvalues": (s, d, s)}[kind]
        pid = f"{dtype}-batched-attn-{kind}-{bh}x{s}x{d}"
        if pid in seen or 2.0 * bh * m * n * k > max_flop:
            continue
        seen.add(pid)
        split = "test" if d == TEST_HEAD_DIM or _hash(pid) % TEST_EVERY == 0 else "train"
        out.append(Problem(pid, dtype, m, n, k, layout, "batched-attention", "", split, bh))
    return out


def random_batched_problems(dtype: str, count: int, max_flop: float, seed: int = 0) -> list[Problem]:
    rng = random.Random(f"cutlass_ops-sweep-batched-random-{dtype}-{seed}")
    out = []
    while len(out) < count:
        i = len(out)
        aligned = i % 2 == 0
        batch, m, n, k = _draw_shape(rng, aligned, max_flop, high=BATCHED_MAX_DIM, batches=(2, 512))
        pid = f"{dtype}-batched-random-{i:05d}"
        split = "test" if _hash(pid) % TEST_EVERY == 0 else "train"
        out.append(Problem(pid, dtype, m, n, k, LAYOUTS[rng.randrange(4)],
                           "batched-random-aligned" if aligned else "batched-random-any", "", split, batch))
    return out


def batched_problem_set(dtype: str, seed: int = 0) -> list[Problem]:
    """The batched sweep's problems for one precision, in the order the sweep runs them."""
    if dtype not in BATCHED_SIZES:
        raise ValueError(f"no batched problem set for {dtype!r}; choose from {list(BATCHED_SIZES)}")
    attention, randoms, max_flop = BATCHED_SIZES[dtype]
    problems = attention_problems(dtype, attention, max_flop, seed) + random_batched_problems(dtype, randoms, max_flop,
                                                                                           seed)
    random.Random(f"cutlass_ops-sweep-batched-order-{dtype}-{seed}").shuffle(problems)
    return problems
