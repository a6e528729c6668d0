"""An additive summary of a run's games (and hands): what every statistic is computed from.

Why a summary
-------------
A run may hold ten million games; its report must fit in a bounded amount of
memory however many there are.  Every statistic in :mod:`arena.analysis.stats`
is a function of *sums over duplicate pairs* (a pair is a cluster: both
seat-swapped games of one deal, of one matchup), and a chunk of a run holds
whole pairs of one matchup.  So each chunk is folded into a :class:`Summary`
of per-matchup sums, summaries of chunks are added (``a + b``, or ``+=`` in
place), and the tables are computed at the end from the sums alone.  Adding
is exact: the sums are of integers and half-integers, so a summary built
chunk by chunk is bit-identical to one built from the whole table.

What is kept, per matchup (``bot_a`` against ``bot_b``):

* counts per game: rows, games with a result, errors, wins, draws, forfeits,
  outcome counts per side, hands, turns, points, pickups, discards, knock deadwood;
* the moments a cluster-robust ratio needs, per ratio (:data:`MOMENTS`):
  the pairs (clusters, ``G``), ``sum n``, ``sum s``, ``sum s^2``,
  ``sum s*n``, ``sum n^2`` over pairs (the variance ``(Sss - 2 r Ssn + r^2
  Snn) / N^2 * G / (G - 1)`` needs nothing else): win rate, margin, points
  per hand, non-dealer shares.  Named for what is summed:
  ``win_score_x_games`` is the sum over pairs of bot_a's score times the
  games with a result;
* per deal, bucketed (:data:`DEAL_BUCKETS`, the pair number modulo it): the
  games with a result, bot_a's score, the hands and each side's points, and
  the first-mover counts (:data:`DEAL_ROWS`).  Every matchup of a run plays the same deals (pair k
  has the same seed in each), so a bot's results on one deal against two
  opponents are not independent: its per-bot intervals and the ratings'
  cluster on the deal, across matchups, from these sums;
* running win-rate moments at fixed positions of the pair sequence
  (:data:`LADDER`), for the convergence plot.  A position is the pair
  *number* + 1, so the positions kept do not depend on how the run was cut
  into chunks.

And per bot (self-play left out), integer histograms for the box plots:
final margins, hands per game, turns per hand (game averages, in 1/100
turn, when no hands were recorded), and with hands: points per hand won and
lost, turns per hand.  Quartiles and whiskers from a histogram equal
``numpy.percentile`` on the values.

Error messages are counted (without their game seed) for the report.
"""

from __future__ import annotations

import bisect
import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from arena.engine.layout import EXTERNAL_FAILURES
from arena.external.process import STREAK_FORFEIT

__all__ = [
    "Summary",
    "Hist",
    "LADDER",
    "GAME_COLUMNS",
    "HAND_COLUMNS",
    "FIELDS",
    "MOMENTS",
    "DEAL_BUCKETS",
    "DEAL_ROWS",
    "summarize_run",
    "merge",
]

WIN_KINDS = ("knock", "undercut", "gin", "big_gin")

#: Games columns a summary reads (ask the store for only these).
GAME_COLUMNS = (
    "game_id",
    "matchup",
    "bot_a",
    "bot_b",
    "pair",
    "swap",
    "score0",
    "score1",
    "winner_seat",
    "winner",
    "error",
    "hands",
    "turns",
    "first_dealer",
    "forfeit_seat",
    "dead",
    "capped",
    "nondealer_wins",
    *[f"{k}_wins{p}" for p in (0, 1) for k in WIN_KINDS],
    *[f"{k}{p}" for p in (0, 1) for k in ("pickups", "discards", "knock_deadwood")],
)
#: Hands columns a summary reads.
HAND_COLUMNS = ("game_id", "outcome", "knocker", "points0", "points1", "turns")

#: Positions (pair number + 1) at which running win-rate moments are kept:
#: every pair up to 52, then 100 per decade (1, 2, ..., 52, 54, 55, 56, 58, ...).
LADDER = np.unique(np.round(np.logspace(0, 13, 1301)).astype(np.int64))

TPH_SCALE = 100  # turns per hand (per-game averages) are kept in 1/100 turn

# A pair-clustered ratio sum(s) / sum(n) (a win rate, points per hand, a share) needs six sums over the
# pairs (clusters) with n > 0, where n and s are first summed within each pair (see stats.ratio_ci_moments):
# the pairs, sum n, sum s, sum s^2, sum s*n and sum n^2.  MOMENTS names them for each ratio.
#: Each ratio's six sums, in the order (pairs, n, s, s^2, s*n, n^2) that stats.ratio_ci_moments takes.
MOMENTS: dict[str, tuple[str, str, str, str, str, str]] = {
    # bot_a's win rate: n = games with a result in the pair, s = bot_a's score (1 a win, 0.5 no winner)
    "win": ("win_pairs", "win_games", "win_score", "win_score_sq", "win_score_x_games", "win_games_sq"),
    # the margin per game: s = bot_a's final score minus bot_b's, over the same games (n) as the win rate
    "margin": ("win_pairs", "win_games", "margin", "margin_sq", "margin_x_games", "win_games_sq"),
    # points per hand, each side: n = hands played in the pair, s = that side's game points
    "points_a": (
        "hand_pairs",
        "hand_count",
        "hand_points_a",
        "hand_points_a_sq",
        "hand_points_a_x_count",
        "hand_count_sq",
    ),
    "points_b": (
        "hand_pairs",
        "hand_count",
        "hand_points_b",
        "hand_points_b_sq",
        "hand_points_b_x_count",
        "hand_count_sq",
    ),
    # the non-dealer's share of decided hands: n = decided hands, s = hands the non-dealer won
    "nondealer": (
        "nondealer_pairs",
        "nondealer_decided",
        "nondealer_won",
        "nondealer_won_sq",
        "nondealer_won_x_decided",
        "nondealer_decided_sq",
    ),
    # the first non-dealer's share of games: n = games with a winner, s = games the first non-dealer won
    "first_nondealer": (
        "first_nondealer_pairs",
        "first_nondealer_games",
        "first_nondealer_won",
        "first_nondealer_won_sq",
        "first_nondealer_won_x_games",
        "first_nondealer_games_sq",
    ),
}

# The per-matchup sums, in the order of a Summary's rows.  "_a"/"_b": bot_a's / bot_b's side.
FIELDS = (
    "rows",
    "valid",
    "errors",
    "wins_a",
    "wins_b",
    "draws",
    "forfeits_a",
    "forfeits_b",
    "forfeit_games",
    *MOMENTS["win"],
    "margin",
    "margin_sq",
    "margin_x_games",
    "margin_game_sq",  # per game (not per pair): the sum of squared final margins, for the margin's spread
    "complete",  # pairs with both games played to a result
    "sweeps_a",  # complete pairs bot_a won both games of
    "sweeps_b",
    # per game, every game (results or not)
    "hands",
    "turns",
    "score_a",
    "score_b",
    "dead",
    "capped",
    *[f"{k}_{s}" for s in "ab" for k in WIN_KINDS],
    "knock_deadwood_a",
    "knock_deadwood_b",
    "pickups_a",
    "pickups_b",
    "discards_a",
    "discards_b",
    "hand_pairs",
    "hand_count",
    "hand_points_a",
    "hand_points_b",
    "hand_points_a_sq",
    "hand_points_a_x_count",
    "hand_points_b_sq",
    "hand_points_b_x_count",
    "hand_count_sq",
    *MOMENTS["nondealer"],
    *MOMENTS["first_nondealer"],
)
F = {name: i for i, name in enumerate(FIELDS)}

#: Deals are clustered by pair number modulo this: exactly by deal up to this many pairs a
#: matchup, and beyond it by groups of deals, each group still holding every game of its deals
#: (coarser clusters stay valid; 256 of them are plenty for a variance).  It bounds the memory:
#: ``len(DEAL_ROWS) * DEAL_BUCKETS`` numbers a matchup, however many games.
DEAL_BUCKETS = 256
#: The per-deal sums each matchup keeps (rows of ``_Matchup.deals``), seen from bot_a.
DEAL_ROWS = (
    "games",
    "score_a",
    "hands",
    "points_a",
    "points_b",
    "decided",  # hands won by someone
    "nondealer_won",
    "first_games",  # games with a winner
    "first_nondealer_won",  # of those, games the first non-dealer won
)


# --- histograms --------------------------------------------------------------------------


_SEED_TAIL = re.compile(r"^(?P<head>.*?), game seed \d+(?:: (?P<tail>.*))?$", re.S)
#: The verb of a forfeit's line for a bot that raised or failed (arena.engine.play.forfeit_text).
_FAILED_IN = re.compile(
    " (?:raised an exception|" + "|".join(map(re.escape, sorted(set(EXTERNAL_FAILURES.values())))) + "|failed) in "
)
_STREAK = re.compile(re.escape(STREAK_FORFEIT) + r": (\d+) games in a row")


def error_key(text: str) -> str:
    """A forfeit's message as the report counts it: without its game seed, and with only the kind of what
    went wrong, so that a few keys cover a run (the full message stays in the games table).

    ``bot 'x' (seat 1) timed out in draw(), game seed 7: ExternalBotError: timeout: no answer ...``
    counts as ``bot 'x' (seat 1) failed in draw(): timeout`` (as does the line of older runs, "raised an
    exception in draw()"): an external bot's reason (timeout,
    crashed, garbled answer, ...) is what a reader needs, and it raised nothing; a Python exception
    counts by its class (``...: ValueError``), whose message may differ in every game.  The games a
    bot forfeited at once after failing too many in a row count apart from the failures themselves
    (``bot 'x' (seat 1) forfeited the rest of a chunk after 5 failures in a row``).
    """
    m = _SEED_TAIL.match(text)
    if m is None:
        return text
    head, tail = m.group("head"), m.group("tail") or ""
    cls, _, rest = tail.partition(": ")
    streak = _STREAK.search(rest) if cls == "ExternalBotError" else None
    if streak is not None:
        who = _FAILED_IN.split(head, maxsplit=1)[0]
        return f"{who} forfeited the rest of a chunk after {streak.group(1)} failures in a row"
    if cls == "ExternalBotError" and rest:
        return _FAILED_IN.sub(" failed in ", head, count=1) + ": " + rest.split(":", 1)[0]
    if cls.isidentifier():
        return f"{head}: {cls}"
    return head


class Hist:
    """Counts of integer values ``lo, lo + 1, ...``; added in place with :meth:`add`."""

    __slots__ = ("lo", "counts")

    def __init__(self, lo: int, counts: np.ndarray):
        self.lo = int(lo)
        self.counts = np.asarray(counts, dtype=np.int64)

    @classmethod
    def of(cls, values: Any) -> Hist:
        v = np.asarray(values, dtype=np.int64)
        if v.size == 0:
            return cls(0, np.zeros(0, dtype=np.int64))
        lo = int(v.min())
        return cls(lo, np.bincount(v - lo))

    def copy(self) -> Hist:
        return Hist(self.lo, self.counts.copy())

    def add(self, other: Hist) -> Hist:
        if other.counts.size == 0:
            return self
        if self.counts.size == 0:
            self.lo, self.counts = other.lo, other.counts.copy()
            return self
        lo = min(self.lo, other.lo)
        hi = max(self.lo + self.counts.size, other.lo + other.counts.size)
        if lo != self.lo or hi != self.lo + self.counts.size:
            grown = np.zeros(hi - lo, dtype=np.int64)
            grown[self.lo - lo : self.lo - lo + self.counts.size] = self.counts
            self.lo, self.counts = lo, grown
        self.counts[other.lo - self.lo : other.lo - self.lo + other.counts.size] += other.counts
        return self

    @property
    def n(self) -> int:
        return int(self.counts.sum())

    def mean(self) -> float:
        n = self.n
        if n == 0:
            return float("nan")
        return float((np.arange(self.lo, self.lo + self.counts.size, dtype=np.float64) * self.counts).sum() / n)

    def percentile(self, q: Any) -> np.ndarray:
        """``numpy.percentile(values, q)`` (linear interpolation) without the values."""
        q = np.asarray(q, dtype=np.float64)
        cum = np.cumsum(self.counts)
        n = int(cum[-1]) if cum.size else 0
        if n == 0:
            return np.full(q.shape, np.nan)
        h = (n - 1) * q / 100.0
        i = np.floor(h).astype(np.int64)
        frac = h - i
        j = np.minimum(i + 1, n - 1)
        xi = self.lo + np.searchsorted(cum, i, side="right")
        xj = self.lo + np.searchsorted(cum, j, side="right")
        return xi + frac * (xj - xi)

    def box(self, label: str, scale: float = 1.0) -> dict[str, Any]:
        """Box-plot statistics as matplotlib's ``bxp`` takes them: quartiles,
        whiskers at 1.5 IQR clipped to the data, mean; values divided by ``scale``."""
        if self.n == 0:
            return dict(
                label=label, whislo=np.nan, q1=np.nan, med=np.nan, q3=np.nan, whishi=np.nan, mean=np.nan, fliers=[]
            )
        q1, med, q3 = (float(x) / scale for x in self.percentile([25, 50, 75]))
        iqr = q3 - q1
        # Tukey's whiskers: the furthest values seen within 1.5 IQR of the box (not the fences themselves,
        # which on whole numbers drew values no game can have, such as 4.5 hands).
        seen = (self.lo + np.flatnonzero(self.counts)) / scale
        inside = seen[(seen >= q1 - 1.5 * iqr) & (seen <= q3 + 1.5 * iqr)]
        return dict(
            label=label,
            whislo=float(min(inside.min(), q1)),
            q1=q1,
            med=med,
            q3=q3,
            whishi=float(max(inside.max(), q3)),
            mean=self.mean() / scale,
            fliers=[],
        )

    def __repr__(self) -> str:
        return f"Hist(n={self.n}, lo={self.lo}, bins={self.counts.size})"


def _group_hists(groups: np.ndarray, values: np.ndarray, names: list[str]) -> dict[str, Hist]:
    """One histogram of ``values`` per group code (names[code]); groups without values are left out."""
    if values.size == 0:
        return {}
    v = values.astype(np.int64)
    lo = int(v.min())
    span = int(v.max()) - lo + 1
    ng = len(names)
    counts = np.bincount(groups.astype(np.int64) * span + (v - lo), minlength=ng * span).reshape(ng, span)
    out = {}
    for i in np.flatnonzero(counts.sum(axis=1)):
        nz = np.flatnonzero(counts[i])
        out[names[i]] = Hist(lo + nz[0], counts[i, nz[0] : nz[-1] + 1].copy())
    return out


# --- decoding a games table ----------------------------------------------------------------


def _factor(col: pd.Series) -> tuple[np.ndarray, list[str]]:
    """``(codes, labels)`` of a string or categorical column: code -1 for a missing value."""
    if isinstance(col.dtype, pd.CategoricalDtype):
        return col.cat.codes.to_numpy(), [str(c) for c in col.cat.categories]
    codes, uniq = pd.factorize(col, use_na_sentinel=True)
    return codes, [str(x) for x in uniq]


def _used(codes: np.ndarray, labels: list[str]) -> list[str]:
    """The labels that occur in ``codes``."""
    seen = np.bincount(codes[codes >= 0], minlength=len(labels)) if codes.size else np.zeros(len(labels))
    return [labels[i] for i in np.flatnonzero(seen)]


def _recode(codes: np.ndarray, labels: list[str], names: list[str]) -> np.ndarray:
    """Codes into ``labels`` as indices into ``names`` (-1 for labels not in names, and for missing)."""
    where = {n: i for i, n in enumerate(names)}
    lut = np.array([where.get(lab, -1) for lab in labels] + [-1], dtype=np.int32)  # code -1 -> last entry
    return lut[codes]


def _nonempty(col: pd.Series) -> np.ndarray:
    """Per row: the text is not empty (and not missing)."""
    if isinstance(col.dtype, pd.CategoricalDtype):
        lut = np.append(np.asarray([str(c) != "" for c in col.cat.categories], dtype=bool), False)
        return lut[col.cat.codes.to_numpy()]
    return (col.fillna("") != "").to_numpy(dtype=bool)


@dataclass
class Decoded:
    """A games table decoded into arrays: bots and matchups as codes, seats mapped to bots, results."""

    games: pd.DataFrame
    bots: list[str]  # sorted
    matchups: list[str]  # sorted
    a: np.ndarray  # per game: bot_a code
    b: np.ndarray  # per game: bot_b code
    mcode: np.ndarray  # per game: matchup code
    m_a: np.ndarray  # per matchup: bot_a code
    m_b: np.ndarray  # per matchup: bot_b code
    swap: np.ndarray  # per game: bot_a sits in seat 1
    res_a: np.ndarray  # per game: bot_a's score 1 / 0.5 / 0 (nan when void)
    valid: np.ndarray  # per game: has a result
    err: np.ndarray  # per game: the error text is not empty
    gid: np.ndarray  # per game: game_id (row number without one)

    @property
    def n(self) -> int:
        return int(self.a.shape[0])

    def col(self, name: str, dtype: Any = np.float64, missing: float = 0) -> np.ndarray:
        """A shared (not per-seat) column as an array (``missing`` where absent or missing)."""
        if name not in self.games.columns:
            return np.full(self.n, missing, dtype=dtype)
        x = self.games[name].to_numpy()
        if x.dtype.kind == "f":
            x = np.where(np.isnan(x), missing, x)
        elif x.dtype.kind not in "iub":  # nullable or object: let pandas fill the gaps
            x = self.games[name].to_numpy(dtype=dtype, na_value=missing)
        return x.astype(dtype, copy=False)

    def side(self, base: str) -> tuple[np.ndarray, np.ndarray]:
        """``(bot_a's value, bot_b's value)`` of the per-seat pair ``base0`` / ``base1`` (zeros if absent)."""
        if f"{base}0" not in self.games.columns:
            z = np.zeros(self.n)
            return z, z
        x0, x1 = self.col(f"{base}0"), self.col(f"{base}1")
        return np.where(self.swap, x1, x0), np.where(self.swap, x0, x1)


def decode(g: pd.DataFrame) -> Decoded:
    """Decode a games table (any number of matchups); ValueError if it is empty or lacks the bots."""
    if len(g) == 0:
        raise ValueError("the games table is empty")
    for col in ("bot_a", "bot_b"):
        if col not in g.columns:
            raise ValueError(f"the games table has no '{col}' column")
    ca, la = _factor(g["bot_a"])
    cb, lb = _factor(g["bot_b"])
    bots = sorted(set(_used(ca, la)) | set(_used(cb, lb)))
    a = _recode(ca, la, bots)
    b = _recode(cb, lb, bots)
    if "matchup" in g.columns:
        cm, lm = _factor(g["matchup"])
        matchups = sorted(_used(cm, lm))
        mcode = _recode(cm, lm, matchups)
    else:  # one matchup per ordered pair of bots
        nb = len(bots)
        uk, inv = np.unique(a.astype(np.int64) * nb + b, return_inverse=True)
        names = [f"{bots[k // nb]} vs {bots[k % nb]}" for k in uk]
        order = np.argsort(names, kind="stable")
        rank = np.empty(len(names), dtype=np.int32)
        rank[order] = np.arange(len(names))
        matchups = [names[i] for i in order]
        mcode = rank[inv.reshape(-1)]
    n_m = len(matchups)
    first = np.full(n_m, -1, dtype=np.int64)
    idx = np.arange(len(g))[::-1]
    first[mcode[idx]] = idx  # the smallest row of each matchup wins
    m_a, m_b = a[first], b[first]
    mixed = (a != m_a[mcode]) | (b != m_b[mcode])
    if mixed.any():
        name = matchups[int(mcode[np.flatnonzero(mixed)[0]])]
        raise ValueError(f"matchup '{name}' has games of more than one pair of bots")

    if "swap" in g.columns:
        swap = g["swap"].to_numpy(dtype=np.int8, na_value=0) != 0
    elif "bot0" in g.columns:
        swap = _recode(*_factor(g["bot0"]), bots) != a
    else:
        swap = np.zeros(len(g), dtype=bool)
    err = _nonempty(g["error"]) if "error" in g.columns else np.zeros(len(g), dtype=bool)
    seat_a = swap.astype(np.int64)
    if "winner" in g.columns:
        w = _recode(*_factor(g["winner"]), bots)
        res_a = np.where(w == a, 1.0, np.where(w == b, 0.0, 0.5))
        none = w < 0
    else:
        ws = g["winner_seat"].to_numpy(dtype=np.int64)
        res_a = np.where(ws < 0, 0.5, np.where(ws == seat_a, 1.0, 0.0))
        none = ws < 0
    if "winner_seat" in g.columns:  # self-play: the name cannot tell the seats apart
        ws = g["winner_seat"].to_numpy(dtype=np.int64)
        res_a = np.where(a == b, np.where(ws < 0, 0.5, np.where(ws == seat_a, 1.0, 0.0)), res_a)
    valid = ~(err & none)
    res_a = np.where(valid, res_a, np.nan)
    gid = g["game_id"].to_numpy(dtype=np.int64) if "game_id" in g.columns else np.arange(len(g), dtype=np.int64)
    return Decoded(g, bots, matchups, a, b, mcode, m_a, m_b, swap, res_a, valid, err, gid)


def _ordinal(mcode: np.ndarray, order: np.ndarray) -> np.ndarray:
    """Rank of each game within its matchup by ``order`` (the pair number of a table without pairs)."""
    o = np.lexsort((order, mcode))
    m = mcode[o]
    starts = np.flatnonzero(np.r_[True, m[1:] != m[:-1]])
    rank = np.arange(o.size) - np.repeat(starts, np.diff(np.r_[starts, o.size]))
    out = np.empty(o.size, dtype=np.int64)
    out[o] = rank
    return out


def _on_ladder(pos: np.ndarray) -> np.ndarray:
    i = np.searchsorted(LADDER, pos)
    return (i < LADDER.size) & (LADDER[np.minimum(i, LADDER.size - 1)] == pos)


_OUTCOME_WINNER = {"knock": 1, "gin": 1, "big_gin": 1, "undercut": 2}  # 1: the knocker won, 2: the defender


def hand_winners(hands: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Per hand: the seat that won it (-1: dead, capped, forfeit) and the points it scored."""
    out = hands["outcome"]
    cat = out.cat if isinstance(out.dtype, pd.CategoricalDtype) else pd.Categorical(out.astype(str))
    lut = np.array([_OUTCOME_WINNER.get(str(c), 0) for c in cat.categories] + [0], dtype=np.int8)
    kind = lut[np.asarray(cat.codes)]  # code -1 (missing) -> the last entry (no winner)
    knocker = hands["knocker"].to_numpy(dtype=np.int64)
    win_seat = np.where(kind == 1, knocker, np.where(kind == 2, 1 - knocker, -1))
    p0 = hands["points0"].to_numpy(dtype=np.int64)
    p1 = hands["points1"].to_numpy(dtype=np.int64)
    return win_seat, np.where(win_seat == 0, p0, np.where(win_seat == 1, p1, 0))


# --- the summary ---------------------------------------------------------------------------


@dataclass(frozen=True)
class _Segment:
    """Running win-rate moments of one chunk of a matchup's pairs (pairs ``lo..end``).

    ``cum`` holds the win rate's six sums (pairs, n, s, s^2, s*n, n^2:
    ``MOMENTS["win"]``) after each pair in ``keys`` (the pairs on
    :data:`LADDER`), counted from the segment's start; ``total`` after its last pair.
    """

    lo: int
    end: int
    keys: np.ndarray
    cum: np.ndarray
    total: np.ndarray


@dataclass
class _Matchup:
    bot_a: str
    bot_b: str
    sums: np.ndarray
    deals: np.ndarray  # DEAL_ROWS x DEAL_BUCKETS
    segments: list[_Segment] = field(default_factory=list)  # sorted by lo, never overlapping

    def copy(self) -> _Matchup:
        return _Matchup(self.bot_a, self.bot_b, self.sums.copy(), self.deals.copy(), list(self.segments))


class Summary:
    """Additive sums of a run's games (and hands), per matchup and per bot.

    Build one per chunk with :meth:`of_chunk` (any games table works, with
    any number of matchups) and add them: ``total += Summary.of_chunk(...)``.
    Adding summaries that share a matchup's pair numbers raises ValueError
    (the same chunk counted twice).  Every function of
    :mod:`arena.analysis.stats` takes a Summary.
    """

    def __init__(self) -> None:
        self._m: dict[str, _Matchup] = {}
        self.hists: dict[str, dict[str, Hist]] = {}  # bot -> kind -> histogram (self-play left out)
        self.errors: Counter[str] = Counter()  # error text (without its game seed) -> games
        self.has_hands = False  # a hands table was summarised
        self.cache: dict[Any, Any] = {}  # tables computed from this summary (cleared when it changes)
        self._view: tuple | None = None

    # --- building -----------------------------------------------------------------------
    @classmethod
    def of_chunk(cls, games: pd.DataFrame, hands: pd.DataFrame | None = None) -> Summary:
        """The summary of a games table (and its hands table, if recorded).

        Hands whose ``game_id`` is not in ``games`` are left out.
        """
        out = cls()
        out.has_hands = hands is not None and len(hands) > 0
        if len(games) == 0:
            return out
        d = decode(games)
        out._add_games(d)
        if out.has_hands:
            out._add_hands(d, hands)
        return out

    def _add_games(self, d: Decoded) -> None:
        g = d.games
        n_m = len(d.matchups)
        mc = d.mcode
        v = d.valid
        vf = v.astype(np.float64)
        res = np.where(v, d.res_a, 0.0)
        sa, sb = d.side("score")
        hh = d.col("hands")
        turns = d.col("turns")

        # clusters: (matchup, pair), sorted by matchup then pair
        pair = g["pair"].to_numpy(dtype=np.int64) if "pair" in g.columns else _ordinal(mc, d.gid)
        if n_m == 1 and np.all(pair[1:] >= pair[:-1]):  # a stored chunk: one matchup, pairs in order
            head = np.r_[True, pair[1:] != pair[:-1]]
            cl = np.cumsum(head) - 1
            c_pair = pair[head]
            c_m = np.zeros(c_pair.size, dtype=np.int64)
            n_c = c_pair.size
        else:
            pmin = int(pair.min())
            span = int(pair.max()) - pmin + 1
            ukey, cl = np.unique(mc.astype(np.int64) * span + (pair - pmin), return_inverse=True)
            cl = cl.reshape(-1)
            n_c = ukey.size
            c_m = ukey // span
            c_pair = ukey % span + pmin

        def csum(w):
            return np.bincount(cl, weights=w, minlength=n_c)

        def msum(w):
            return np.bincount(mc, weights=w, minlength=n_m)

        def mc_sum(w, keep):
            return np.bincount(c_m[keep], weights=w[keep], minlength=n_m)

        def moments(ratio: str, keep: np.ndarray, n: np.ndarray, x: np.ndarray) -> None:
            """The six sums of MOMENTS[ratio] over the pairs ``keep``: n and x are per pair."""
            pairs, sn, sx, sxx, sxn, snn = MOMENTS[ratio]
            s[pairs] = np.bincount(c_m[keep], minlength=n_m).astype(np.float64)
            s[sn], s[sx] = mc_sum(n, keep), mc_sum(x, keep)
            s[sxx], s[sxn], s[snn] = mc_sum(x * x, keep), mc_sum(x * n, keep), mc_sum(n * n, keep)

        s: dict[str, np.ndarray] = {}
        s["rows"] = np.bincount(mc, minlength=n_m).astype(np.float64)
        s["valid"] = msum(vf)
        s["errors"] = msum(d.err.astype(np.float64))
        s["wins_a"] = msum((res == 1.0) & v)
        s["wins_b"] = msum((res == 0.0) & v)
        s["draws"] = msum((res == 0.5) & v)
        fs = d.col("forfeit_seat", np.int64, -1)
        seat_a = d.swap.astype(np.int64)
        s["forfeits_a"] = msum((fs >= 0) & (fs == seat_a))
        s["forfeits_b"] = msum((fs >= 0) & (fs != seat_a))
        s["forfeit_games"] = msum(fs >= 0)

        c_n, c_s = csum(vf), csum(res)
        margin = np.where(v, sa - sb, 0.0)
        c_mg = csum(margin)
        k = c_n > 0
        moments("win", k, c_n, c_s)
        s["margin"], s["margin_sq"], s["margin_x_games"] = (
            mc_sum(c_mg, k),
            mc_sum(c_mg * c_mg, k),
            mc_sum(c_mg * c_n, k),
        )
        s["margin_game_sq"] = msum(margin * margin)
        complete = c_n == 2
        s["complete"] = np.bincount(c_m, weights=complete, minlength=n_m)
        s["sweeps_a"] = np.bincount(c_m, weights=complete & (c_s == 2.0), minlength=n_m)
        s["sweeps_b"] = np.bincount(c_m, weights=complete & (c_s == 0.0), minlength=n_m)

        s["hands"], s["turns"] = msum(hh), msum(turns)
        s["score_a"], s["score_b"] = msum(sa), msum(sb)
        s["dead"], s["capped"] = msum(d.col("dead")), msum(d.col("capped"))
        decided = np.zeros(d.n)
        for kind in WIN_KINDS:
            xa, xb = d.side(f"{kind}_wins")
            s[f"{kind}_a"], s[f"{kind}_b"] = msum(xa), msum(xb)
            decided += xa + xb
        for base in ("knock_deadwood", "pickups", "discards"):
            xa, xb = d.side(base)
            s[f"{base}_a"], s[f"{base}_b"] = msum(xa), msum(xb)

        ws = d.col("winner_seat", np.int64, -1)
        fd = d.col("first_dealer", np.int64)
        # per pair: what the ratios below and the per-deal sums (DEAL_ROWS) are made of
        per_pair = {
            "games": c_n,
            "score_a": c_s,
            "hands": csum(hh),
            "points_a": csum(sa),
            "points_b": csum(sb),
            "decided": csum(decided),
            "nondealer_won": csum(d.col("nondealer_wins")),
            "first_games": csum((ws >= 0).astype(np.float64)),
            "first_nondealer_won": csum(((ws >= 0) & (ws != fd)).astype(np.float64)),
        }
        c_h = per_pair["hands"]
        moments("points_a", c_h > 0, c_h, per_pair["points_a"])
        moments("points_b", c_h > 0, c_h, per_pair["points_b"])
        for ratio, num, den in (
            ("nondealer", "nondealer_won", "decided"),
            ("first_nondealer", "first_nondealer_won", "first_games"),
        ):
            moments(ratio, per_pair[den] > 0, per_pair[den], per_pair[num])

        sums = np.column_stack([np.asarray(s[f], dtype=np.float64) for f in FIELDS])

        # per deal bucket, per matchup: matchups x DEAL_ROWS x DEAL_BUCKETS
        bucket = c_m * DEAL_BUCKETS + c_pair % DEAL_BUCKETS
        deals = np.stack(
            [
                np.bincount(bucket, weights=per_pair[row], minlength=n_m * DEAL_BUCKETS).reshape(n_m, DEAL_BUCKETS)
                for row in DEAL_ROWS
            ],
            axis=1,
        )

        # running win-rate moments per matchup, kept at the ladder's pairs
        segs: dict[int, _Segment] = {}
        keep = np.flatnonzero(c_n > 0)
        km = c_m[keep]
        starts = np.flatnonzero(np.r_[True, km[1:] != km[:-1]]) if keep.size else np.zeros(0, dtype=np.int64)
        for st, en in zip(starts, np.r_[starts[1:], keep.size].astype(np.int64)):
            sel = keep[st:en]
            p, x, nn = c_pair[sel], c_s[sel], c_n[sel]
            cum = np.cumsum(np.column_stack([np.ones(p.size), nn, x, x * x, x * nn, nn * nn]), axis=0)
            on = _on_ladder(p + 1)
            segs[int(km[st])] = _Segment(int(p[0]), int(p[-1]), p[on].copy(), cum[on].copy(), cum[-1].copy())

        for i, name in enumerate(d.matchups):
            seg = segs.get(i)
            self._m[name] = _Matchup(
                d.bots[d.m_a[i]], d.bots[d.m_b[i]], sums[i].copy(), deals[i].copy(), [seg] if seg is not None else []
            )

        # per-bot histograms of per-game values (self-play left out)
        cross = d.a != d.b
        if cross.any():
            grp = np.concatenate([d.a[cross], d.b[cross]])
            self._add_hists("margin", grp, np.concatenate([(sa - sb)[cross], (sb - sa)[cross]]), d.bots)
            self._add_hists("hands", grp, np.concatenate([hh[cross], hh[cross]]), d.bots)
            ok = cross & (hh > 0)
            with np.errstate(divide="ignore", invalid="ignore"):
                tph = np.rint(turns[ok] / hh[ok] * TPH_SCALE)
            self._add_hists("tph", np.concatenate([d.a[ok], d.b[ok]]), np.concatenate([tph, tph]), d.bots)

        if d.err.any():
            texts = pd.Series(g["error"].to_numpy()[d.err]).astype(str)
            for text, c in texts.value_counts().items():
                self.errors[error_key(str(text))] += int(c)

    def _add_hands(self, d: Decoded, hands: pd.DataFrame) -> None:
        key = "game_id" if "game_id" in hands.columns else "game"
        hid = hands[key].to_numpy().astype(np.int64, copy=False)
        gid = d.gid
        if gid.size and gid[-1] - gid[0] == gid.size - 1 and np.all(gid[1:] - gid[:-1] == 1):  # ids in a row
            pos = hid - gid[0]
            pos[(pos < 0) | (pos >= gid.size)] = -1
        else:
            pos = pd.Index(gid).get_indexer(hid)
        ok = pos >= 0
        win_seat, pts = hand_winners(hands)
        turns = hands["turns"].to_numpy(dtype=np.int64) if "turns" in hands.columns else np.zeros(len(hands), np.int64)
        pos, win_seat, pts, turns = pos[ok], win_seat[ok], pts[ok], turns[ok]
        ga, gb, sw = d.a[pos], d.b[pos], d.swap[pos]
        seat0, seat1 = np.where(sw, gb, ga), np.where(sw, ga, gb)
        xc = ga != gb
        won = xc & (win_seat >= 0)
        winner = np.where(win_seat == 0, seat0, seat1)
        loser = np.where(win_seat == 0, seat1, seat0)
        self._add_hists("won_points", winner[won], pts[won], d.bots)
        self._add_hists("lost_points", loser[won], pts[won], d.bots)
        self._add_hists(
            "hand_turns", np.concatenate([seat0[xc], seat1[xc]]), np.concatenate([turns[xc], turns[xc]]), d.bots
        )

    def _add_hists(self, kind: str, groups: np.ndarray, values: np.ndarray, names: list[str]) -> None:
        for bot, h in _group_hists(groups, values, names).items():
            mine = self.hists.setdefault(bot, {})
            if kind in mine:
                mine[kind].add(h)
            else:
                mine[kind] = h

    # --- adding -------------------------------------------------------------------------
    def update(self, other: Summary) -> Summary:
        """Add ``other`` into this summary (in place) and return it."""
        for name, mo in other._m.items():
            mine = self._m.get(name)
            if mine is not None:
                if (mine.bot_a, mine.bot_b) != (mo.bot_a, mo.bot_b):
                    raise ValueError(
                        f"matchup '{name}' is {mine.bot_a} vs {mine.bot_b} in one summary and "
                        f"{mo.bot_a} vs {mo.bot_b} in the other"
                    )
                for seg in mo.segments:
                    _check_free(mine.segments, seg, name)
        for name, mo in other._m.items():
            mine = self._m.get(name)
            if mine is None:
                self._m[name] = mo.copy()
                continue
            mine.sums += mo.sums
            mine.deals += mo.deals
            for seg in mo.segments:
                bisect.insort(mine.segments, seg, key=lambda x: x.lo)
        for bot, kinds in other.hists.items():
            mine_h = self.hists.setdefault(bot, {})
            for kind, h in kinds.items():
                if kind in mine_h:
                    mine_h[kind].add(h)
                else:
                    mine_h[kind] = h.copy()
        self.errors.update(other.errors)
        self.has_hands = self.has_hands or other.has_hands
        self.cache.clear()
        self._view = None
        return self

    def __iadd__(self, other: Summary) -> Summary:
        return self.update(other)

    def __add__(self, other: Summary) -> Summary:
        return self.copy().update(other)

    def copy(self) -> Summary:
        out = Summary()
        out._m = {k: m.copy() for k, m in self._m.items()}
        out.hists = {b: {k: h.copy() for k, h in kinds.items()} for b, kinds in self.hists.items()}
        out.errors = Counter(self.errors)
        out.has_hands = self.has_hands
        return out

    # --- reading --------------------------------------------------------------------------
    def deals(self) -> np.ndarray:
        """Per-deal sums, matchups x :data:`DEAL_ROWS` x :data:`DEAL_BUCKETS` (matchups in :attr:`matchups` order)."""
        names = self.matchups
        if not names:
            return np.zeros((0, len(DEAL_ROWS), DEAL_BUCKETS))
        return np.stack([self._m[n].deals for n in names])

    def view(self) -> tuple[list[str], list[str], np.ndarray, np.ndarray, np.ndarray]:
        """``(matchups sorted, bots sorted, bot_a code per matchup, bot_b code, sums matrix)``.

        The matrix has one row per matchup and one column per name in :data:`FIELDS`.
        """
        if self._view is None:
            names = sorted(self._m)
            bots = sorted({m.bot_a for m in self._m.values()} | {m.bot_b for m in self._m.values()})
            where = {b: i for i, b in enumerate(bots)}
            m_a = np.array([where[self._m[n].bot_a] for n in names], dtype=np.int64)
            m_b = np.array([where[self._m[n].bot_b] for n in names], dtype=np.int64)
            S = np.vstack([self._m[n].sums for n in names]) if names else np.zeros((0, len(FIELDS)))
            self._view = (names, bots, m_a, m_b, S)
        return self._view

    @property
    def matchups(self) -> list[str]:
        return self.view()[0]

    @property
    def bots(self) -> list[str]:
        return self.view()[1]

    def sums(self, name: str) -> np.ndarray:
        """One field of :data:`FIELDS` per matchup (in :attr:`matchups` order)."""
        return self.view()[4][:, F[name]]

    def total(self, name: str) -> float:
        return float(self.sums(name).sum())

    @property
    def n_games(self) -> int:
        return int(self.total("rows"))

    @property
    def n_hands(self) -> int:
        """Hands played (the games' ``hands`` column summed)."""
        return int(self.total("hands"))

    @property
    def n_selfplay(self) -> int:
        _, _, m_a, m_b, S = self.view()
        return int(S[m_a == m_b, F["rows"]].sum())

    def hist(self, bot: str, kind: str) -> Hist:
        """A bot's histogram of ``kind`` (margin, hands, tph, won_points, lost_points, hand_turns); empty if none."""
        h = self.hists.get(bot, {}).get(kind)
        return h if h is not None else Hist(0, np.zeros(0, dtype=np.int64))

    def running(self, matchup: str) -> np.ndarray:
        """Running win-rate moments of a matchup, one row per kept position: ``MOMENTS["win"]``.

        Rows are at the pairs on :data:`LADDER`, then after the last pair
        (always); the first column counts pairs with a result so far.
        """
        segs = self._m[matchup].segments
        rows, off = [], np.zeros(6)
        for seg in segs:
            if seg.cum.size:
                rows.append(seg.cum + off)
            off = off + seg.total
        if segs and not (segs[-1].keys.size and segs[-1].keys[-1] == segs[-1].end):
            rows.append(off[None, :])
        return np.vstack(rows) if rows else np.zeros((0, 6))

    def __repr__(self) -> str:
        return f"Summary({len(self._m)} matchups, {self.n_games:,} games{', hands' if self.has_hands else ''})"


def _check_free(segs: list[_Segment], seg: _Segment, name: str) -> None:
    i = bisect.bisect_left(segs, seg.lo, key=lambda x: x.lo)
    clash = (i < len(segs) and segs[i].lo <= seg.end) or (i > 0 and segs[i - 1].end >= seg.lo)
    if clash:
        raise ValueError(
            f"matchup '{name}': pairs {seg.lo}..{seg.end} are already in the summary (the same chunk added twice?)"
        )


def merge(summaries: Iterable[Summary]) -> Summary:
    """The sum of any number of summaries (a new Summary)."""
    out = Summary()
    for s in summaries:
        out.update(s)
    return out


def summarize_run(
    store: Any, progress: Callable[[int, int], None] | None = None, *, hands: bool | None = None
) -> Summary:
    """One pass over a run's stored chunks (:class:`arena.run.store.RunStore`) into a Summary.

    Reads only :data:`GAME_COLUMNS` (and :data:`HAND_COLUMNS` when ``hands``,
    by default when the run recorded hands), one chunk at a time, so memory
    does not grow with the run.  ``progress(chunks done, chunks in all)``
    is called after each chunk.
    """
    if hands is None:
        hands = store.has_hands()
    total = _n_chunks(store) if progress is not None else 0
    out = Summary()
    done = 0
    for ch in store.chunks(games_columns=list(GAME_COLUMNS), hands=list(HAND_COLUMNS) if hands else False):
        out.update(Summary.of_chunk(ch.games, ch.hands))
        done += 1
        if progress is not None:
            progress(done, max(total, done))
    return out


def _n_chunks(store: Any) -> int:
    """Chunks the store will yield (for progress)."""
    return int(store.n_chunks())
