"""Analysis of stored runs: statistics, SPRT, plots and reports.

Everything here reads a run through :mod:`arena.run.store`, one chunk at a
time, and folds each chunk into an additive :class:`~arena.analysis.summary.Summary`,
so memory stays flat however many games a run holds.  The modules are
imported on demand (``from arena.analysis import stats``): plots pull in
matplotlib, which a runner or a notebook that only wants numbers should not pay for.
"""
