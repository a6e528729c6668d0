"""Parameter sweeps: one bot over a grid of its parameters, against a field, under one or more rules.

The package is the sweep in four steps, each its own module:

* :mod:`~arena.analysis.sweep.spec` - read and check the sweep file (:func:`load_sweep`);
* :mod:`~arena.analysis.sweep.run` - play every grid point through :func:`arena.run.run_tournament`
  (:func:`run_sweep`, with successive halving);
* :mod:`~arena.analysis.sweep.analysis` - the tables and intervals from the stored runs (:func:`analyse_sweep`);
* :mod:`~arena.analysis.sweep.report` - sweep.csv, the report (:mod:`arena.analysis.render`) and its
  figures (:func:`arena.analysis.plots.sweep_figures`).

A sweep file (TOML, or the same as a dict)::

    name = "sweep-knock"
    bot = "early-knock"                  # the bot whose parameters are swept
    opponents = ["simple", "gin-chasing"]
    games = 10000                        # per grid point and opponent (even: duplicate pairs)
    seed = 2026
    workers = 0                          # 0 = one per core
    chunk_size = 2500
    rules = ["standard", "eaai"]         # a preset or .toml path, a list of them,
                                         # or a table label = preset | {preset = ..., setting = value}
    [grid]                               # one or two parameters of the bot
    knock_at = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]
    [params]                             # optional: fixed parameters of the bot
    late_drop = 0
    [rules_grid]                         # optional, instead of rules: one setting over values
    preset = "standard"
    undercut_bonus = [10, 20, 25]
    [adaptive]                           # optional: successive halving (see sweep.run._run_adaptive)
    rounds = 3                           # round r plays the best `keep` of round r-1, on new deals,
    keep = 0.5                           # with games * growth**r games
    growth = 2

How it runs
-----------
Each rules value gets a run folder ``<results_dir>/<name>/<rules label>/``.
Each grid point is a variant of the bot (``early-knock@knock_at=3``) played
as a gauntlet against every opponent with :func:`arena.run.run_tournament`
into that folder, so a sweep is resumable (a rerun plays only what is
missing), parallel, deterministic and runs on Dask with ``client=`` or
``scheduler``.  Every grid point plays the same deals (the pair seeds depend
on the run seed and the pair number only), so grid points are compared on
paired data.

What it writes
--------------
Into ``<results_dir>/<name>/``: ``sweep.csv`` (one row per rules value x grid
point x opponent), ``plots/*.png`` (response curves, a heatmap for 2-D grids),
``report.md`` and ``report.html`` (self-contained).

Statistics are streamed from the stores: per matchup a
:class:`~arena.analysis.summary.Summary` (for :func:`~arena.analysis.stats.pair_stats`
and :func:`~arena.analysis.stats.bot_stats`) and per duplicate pair the
values the control variate and the paired comparisons need
(:mod:`arena.analysis.variance`); never a table of all games.

The best value and its equals
-----------------------------
For each rules value the objective is the win rate against the field (the
mean over opponents, each weighted alike).  The best grid point is the one
with the highest control-variate-adjusted field win rate.  Every other point
is compared with it on *paired* data: per duplicate pair ``p``, ``d_p =
field score of the best at p - field score of the point at p`` (both played
the same deals), adjusted by the control variate; a point "can't be told
apart" from the best when the 95% t interval of the mean of ``d_p`` contains
0.  There is no correction for multiple comparisons, and choosing the best on
the same data favours it slightly, so the set is a generous one.
"""

from arena.analysis.sweep.analysis import SweepResult, analyse_sweep
from arena.analysis.sweep.report import write_sweep_report
from arena.analysis.sweep.run import run_sweep
from arena.analysis.sweep.spec import SweepError, SweepSpec, load_sweep

__all__ = [
    "SweepError",
    "SweepSpec",
    "SweepResult",
    "load_sweep",
    "run_sweep",
    "analyse_sweep",
    "write_sweep_report",
]
