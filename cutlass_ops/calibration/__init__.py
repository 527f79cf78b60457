"""Calibrating the dispatcher's cost model: the profiling sweep's problem sets (``problems``),
the sweep itself (``sweep``, on a GPU), the fit of the model's constants on the training split,
and its judgement on the test split."""
