"""A run's tables and figures for a notebook: DataFrames and matplotlib figures, from one streamed pass.

::

    import arena
    run = arena.run_tournament(arena.load_config("configs/quick.toml"))
    res = arena.results(run)          # or arena.results("results/quick")
    res.leaderboard()                 # a DataFrame, best first
    res.figure("heatmap")             # a matplotlib Figure

:func:`results` reads the run folder once, chunk by chunk, into a
:class:`~arena.analysis.summary.Summary` (memory does not grow with the
run); every table and figure is computed from it, so none reads the games
again.  The rows themselves are the run's: ``run.games`` (every game, for
small runs) or :meth:`arena.run.store.RunStore.chunks` (one chunk at a time).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from arena.analysis import plots
from arena.analysis import stats as st
from arena.analysis.summary import Summary, summarize_run
from arena.run.store import RunStore, StoreError

__all__ = ["Results", "results"]


@dataclass
class Results:
    """The tables and figures of one run folder, from its :class:`Summary` (``run_dir`` is where it lives)."""

    run_dir: Path
    summary: Summary

    def leaderboard(self, anchor: str | None = None, conf: float = 0.95) -> pd.DataFrame:
        """Ratings (Bradley-Terry Elo, with intervals) and per-bot statistics, best first."""
        return st.leaderboard(self.summary, anchor=anchor, conf=conf)

    def bots(self, conf: float = 0.95) -> pd.DataFrame:
        """One row per bot: results against the field and play style."""
        return st.bot_stats(self.summary, conf=conf)

    def pairs(self, conf: float = 0.95) -> pd.DataFrame:
        """One row per matchup: games, wins, win rate with its interval, margin."""
        return st.pair_stats(self.summary, conf=conf)

    def win_matrix(self, what: str = "win_rate") -> pd.DataFrame:
        """Bots by bots: row bot's ``what`` (``win_rate`` by default) against the column bot."""
        return st.win_matrix(self.summary, what)

    def outcomes(self) -> pd.DataFrame:
        """How each bot's hands ended (knock, gin, undercut, ...), as shares."""
        return st.outcome_mix(self.summary)

    def figure(self, kind: str, anchor: str | None = None) -> Any:
        """One figure (:data:`arena.analysis.plots.KINDS`) as a matplotlib ``Figure``."""
        return plots.figure(kind, self.summary, anchor=anchor)


def results(run: Any, *, hands: bool | None = None) -> Results:
    """The :class:`Results` of a run: a run folder's path, or what ``run_tournament`` returned.

    ``hands``: summarise the hands table too (default: when the run recorded
    it; the ``scores`` and ``lengths`` figures need it).  A folder that is not
    a run, or holds no games, is a one-line :class:`~arena.run.store.StoreError`.
    """
    run_dir = getattr(run, "run_dir", run)
    if not isinstance(run_dir, (str, Path)):
        raise StoreError(f"results() takes a run folder's path or what run_tournament returned, not {run!r}")
    run_dir = Path(run_dir)
    store = RunStore(run_dir)
    summary = summarize_run(store, hands=hands)
    if summary.n_games == 0:
        raise StoreError(f"{run_dir}: the run holds no games")
    return Results(run_dir, summary)
