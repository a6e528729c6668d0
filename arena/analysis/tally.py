"""What a run's tables and report are computed from, gathered in one pass: its Summary and the control variate.

Everything the tables ``arena run`` prints and the report show is additive over chunks: the
:class:`~arena.analysis.summary.Summary`, and, when the run recorded hands, the
:class:`~arena.analysis.variance.CVSums` of the deal control variate.  A :class:`Tally` holds both,
filled in one of two ways:

* as the run plays: ``run_tournament(cfg, sink=tally)`` hands it each chunk as the driver stores it,
  so nothing is read back from the run folder afterwards (the end-of-run checksum pass aside);
* by one streamed pass over a run folder (:meth:`Tally.of_store`), for ``arena report``.

A tally fed by a run knows which chunks it holds, and :meth:`Tally.covers` compares them with the
chunks the store counts now.  They differ when a chunk failed the end-of-run check (it is quarantined
and no longer counts), when an SPRT stop cut the later chunks, and when an earlier run stored some
chunks (a resume); :func:`tally_of` then reads the folder once instead.  Either way the tally is the
same: adding chunk summaries is exact and order-free (see :mod:`arena.analysis.summary`), and so are
the control variate's sums, which add halves, quarters and eighths of integers.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from arena.analysis import variance as var
from arena.analysis.summary import GAME_COLUMNS, HAND_COLUMNS, Summary

__all__ = ["Tally", "tally_of", "current_chunks"]

_GAMES = list(dict.fromkeys([*GAME_COLUMNS, *var.GAME_COLS]))
_HANDS = list(dict.fromkeys([*HAND_COLUMNS, *var.HAND_COLS]))


class Tally:
    """A run's :class:`Summary` and control-variate sums per matchup, chunk by chunk.

    ``hands``: summarise the hands tables too (they are needed for the per-hand figures); ``cv``:
    gather the control variate's sums (needs the hands).  Feed it with :meth:`add`.
    """

    def __init__(self, *, hands: bool = True, cv: bool = True) -> None:
        self.hands = hands
        self.cv_wanted = cv
        self.with_cv = cv and hands
        self.summary = Summary()
        self.cv: dict[str, var.CVSums] = {}
        self.chunks: set[tuple[str, int]] = set()  # (matchup id, chunk number) of every chunk added

    def add(self, matchup_id: str, chunk: Any) -> None:
        """Fold in one chunk (a :class:`arena.run.store.StoredChunk`: tables and names) of matchup ``matchup_id``.

        A chunk added twice (a retried task the store kept once) counts once.
        """
        key = (matchup_id, int(chunk.chunk))
        if key in self.chunks:
            return
        hands = chunk.hands if self.hands else None
        self.summary.update(Summary.of_chunk(chunk.games, hands))
        if self.with_cv and chunk.hands is not None and len(chunk.hands):
            try:
                (pt,) = var.pair_table([chunk]).values()
            except ValueError:  # the deals do not recompute (a run from an older engine): no control variate
                self.with_cv, self.cv = False, {}
            else:
                self.cv.setdefault(chunk.matchup, var.CVSums()).add(pt)
        self.chunks.add(key)

    def covers(self, store: Any) -> bool:
        """Whether this tally holds exactly the chunks ``store`` counts now (see the module doc)."""
        return self.chunks == current_chunks(store)

    @classmethod
    def of_store(
        cls,
        store: Any,
        progress: Callable[[int, int], None] | None = None,
        *,
        hands: bool | None = None,
        cv: bool = True,
    ) -> Tally:
        """One streamed pass over a run's stored chunks (:class:`arena.run.store.RunStore`).

        ``hands``: default, when the run recorded them.  ``progress(chunks done, chunks in all)`` is
        called after each chunk.  Chunks that fail their checksum are left out (the store names them
        in ``store.problems``).
        """
        if hands is None:
            hands = store.has_hands()
        out = cls(hands=hands, cv=cv)
        ids = {m.name: m.id for m in store.matchups()}
        total = int(store.n_chunks()) if progress is not None else 0
        done = 0
        for ch in store.chunks(games_columns=_GAMES, hands=_HANDS if hands else False):
            out.add(ids[ch.matchup], ch)
            done += 1
            if progress is not None:
                progress(done, max(total, done))
        return out


def current_chunks(store: Any) -> set[tuple[str, int]]:
    """``(matchup id, chunk)`` of every chunk the store counts: current matchups, within an SPRT stop."""
    out: set[tuple[str, int]] = set()
    idx = store.index()
    for m in store.matchups():
        out.update((m.id, r.chunk) for r in idx.stored_of(m))
    return out


def tally_of(
    store: Any,
    tally: Tally | None = None,
    progress: Callable[[int, int], None] | None = None,
    *,
    cv: bool = True,
) -> tuple[Tally, bool]:
    """``(tally, read)``: ``tally`` when it covers the store's chunks and holds what is asked (the hands
    when the run recorded them, the control variate when ``cv``), else one pass over the store (``read``
    is then True)."""
    if (
        tally is not None
        and (tally.cv_wanted or not cv)
        and (tally.hands or not store.has_hands())
        and tally.covers(store)
    ):
        return tally, False
    return Tally.of_store(store, progress, cv=cv), True
