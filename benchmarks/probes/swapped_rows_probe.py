"""Do the swapped builds of the hand-written TMA + WGMMA step (D^T = W @ x^T, tiles of 192-256
rows of x) beat its N-fitted builds (128 rows of x by 192-256 columns) on F.linear problems whose
row count is not a multiple of 128?

F.linear's layout ("rc", x @ W.t()), bf16: every plain step-6 build and every swapped build
forced, the best of each family against torch.mm, and the planner's pick, alternated over rounds
with the bench's timing (L2 flushed before every repetition). Each swapped result is also checked
against a float32 product.

    python benchmarks/probes/swapped_rows_probe.py

docs/findings.md, "Rows of x as the wide side of the tile", holds the figures.
"""

from __future__ import annotations

from step6_families import STEP6, compare

SHAPES = ((777, 8192, 8192), (1500, 4096, 4096), (2049, 8192, 8192), (500, 4096, 11008), (1000, 4096, 4096),
          (3000, 4096, 11008), (257, 8192, 28672), (1000, 14336, 4096), (777, 2048, 2048), (2049, 1024, 4096))
PLAIN = (STEP6, *(f"{STEP6}_n{n}" for n in (192, 208, 224, 240)))
SWAPPED = tuple(f"{STEP6}_swapab_m{m}" for m in (192, 208, 224, 240, 256))


def main() -> None:
    compare(SHAPES, SWAPPED, PLAIN, ("swapped", "plain"))


if __name__ == "__main__":
    main()
