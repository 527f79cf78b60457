"""Do narrower N-fitted builds of the hand-written TMA + WGMMA step (tiles of 128 rows by 128,
144, 160 or 176 columns) beat the wider ones and the planner's pick on F.linear products of a
few hundred to a few thousand rows, where 128 x 192-256 tiles leave SMs idle (500 x 4608: 96 tiles
of 128x192 for 132 SMs, 128 of 128x144)?

F.linear's layout ("rc", x @ W.t()), bf16: every step-6 N-fitted build forced, the best of the
narrow ones (128-176) and of the wide ones (192-256) against torch.mm, and the planner's pick,
alternated over rounds with the bench's timing (L2 flushed before every repetition). Each narrow
result is checked against a float32 product.

    python benchmarks/probes/narrow_fitted_probe.py [--shapes 500x4608x3584,...]

docs/findings.md, "Narrow N-fitted tiles", holds the figures.
"""

from __future__ import annotations

import argparse

from step6_families import STEP6, compare

# Test-split F.linear products of the H200 sweep where the best built kernel was below torch.mm,
# and a few neighbours (rows x output features x input features).
SHAPES = ((500, 4608, 3584), (500, 4672, 4544), (500, 4544, 4544), (500, 3072, 1024), (500, 4096, 1024),
          (500, 3584, 3584), (777, 3072, 1024), (1000, 4096, 1024), (1000, 4608, 3584), (1500, 1024, 1024),
          (1500, 3072, 1024), (1500, 3584, 3584), (2049, 1024, 1024), (257, 4096, 1024), (4096, 4096, 4096))
NARROW = tuple(f"{STEP6}_n{n}" for n in (128, 144, 160, 176))
WIDE = (*(f"{STEP6}_n{n}" for n in (192, 208, 224, 240)), STEP6)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shapes", help="M x N x K list, comma-separated (default: the probe's fifteen)")
    args = parser.parse_args()
    shapes = SHAPES if not args.shapes else [tuple(int(v) for v in s.split("x")) for s in args.shapes.split(",")]
    compare(shapes, NARROW, WIDE, ("narrow", "wide"), every_build=True)


if __name__ == "__main__":
    main()
