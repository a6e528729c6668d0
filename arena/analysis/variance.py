"""Fewer games for the same certainty: a control variate from the deal, on top of duplicate pairs.

The idea
--------
A game's result is skill plus the luck of the cards.  Duplicate pairs cancel
the luck of the deals both games share; this module removes part of what is
left.  Every deal is a function of the game seed (:func:`arena.engine.step.begin_hand`
shuffles with ``mix_seed(seed, STREAM_HAND + hand number)``), so the cards each
seat was dealt can be recomputed from the stored seed, hand number and dealer,
with the engine's own kernels; nothing new is stored.

For each hand and each seat we compute, from the seat's 10 dealt cards and the
upcard only (information fixed before anyone plays):

* ``dw``: the least deadwood of the 10 cards;
* ``dw_up``: the least deadwood after taking the upcard and discarding;
* ``outs``: how many of the other 41 cards would lower the deadwood if drawn;
* ``ready``: 1 when ``dw_up`` is within the hand's knock limit.

The covariate of a hand is the difference ``seat 0 - seat 1`` of each feature,
and the same difference signed by who is the non-dealer (+1 when seat 0 is):
:data:`COVARIATES`, 8 numbers.  A game's covariate ``z`` is the sum over its
hands, seen from ``bot_a``; a pair's is the mean over its games.

Why it is unbiased
------------------
Hand ``h``'s deal is a fresh shuffle, independent of everything before it,
and whether hand ``h`` is played (and who deals it) is decided before the
shuffle.  Both seats' (10 cards, upcard) have the same distribution, so each
hand's covariate has mean exactly 0 given the past, and so has the sum over
the hands of a game (a martingale stopped at the game's end).  The adjusted
value ``y - beta . z`` therefore has the mean of ``y`` for *any* fixed
``beta``.  ``beta`` is fitted by least squares on other games than the ones it
adjusts: by cross-fitting (the pairs are split into ``folds`` by pair number;
each fold is adjusted with the ``beta`` fitted on the others), or on an
earlier run (``beta=``).  The interval is the t interval of the adjusted
per-pair values, so it stays pair-clustered like every interval of
:mod:`arena.analysis.stats`.

Memory: one row per duplicate *pair* of the matchups asked for (value, score
and 8 covariates), never the games or hands themselves.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from numba import prange

from arena.analysis.quantiles import t_quantile
from arena.engine._jit import jit
from arena.engine.melds import best_discard, deadwood
from arena.engine.rng import STREAM_HAND, mix_seed, seed_rng, shuffle

__all__ = [
    "COVARIATES",
    "deal_covariates",
    "PairTable",
    "pair_table",
    "CVEstimate",
    "cv_estimate",
    "fit_beta",
    "CVSums",
    "cv_sums",
]

FEATURES = ("dw", "dw_up", "outs", "ready")
COVARIATES = tuple(f"d_{f}" for f in FEATURES) + tuple(f"d_{f}_nd" for f in FEATURES)
_K = len(FEATURES)


@jit
def _seat_features(h, up, limit, out) -> None:
    dw = deadwood(h)
    _, dwu = best_discard(h | (np.int64(1) << up), up)
    if dwu > dw:
        dwu = dw
    outs = 0
    for c in range(52):
        bit = np.int64(1) << c
        if (h & bit) != 0 or c == up:
            continue
        _, d = best_discard(h | bit, -1)
        if d < dw:
            outs += 1
    out[0] = dw
    out[1] = dwu
    out[2] = outs
    out[3] = 1.0 if dwu <= limit else 0.0


@jit(parallel=True)
def _deal_covariates(seeds, hand_nos, dealers, limits, out, upcards) -> None:
    # Hands are independent: spread them over the cores (prange), each with its own scratch
    # arrays; the results are the same as a serial loop, row for row.  Recomputing the outs
    # of every dealt hand is most of a big report's time.
    for i in prange(seeds.shape[0]):
        deck = np.empty(52, dtype=np.int64)
        rng = np.zeros(4, dtype=np.uint64)
        f0 = np.zeros(4)
        f1 = np.zeros(4)
        for c in range(52):
            deck[c] = c
        seed_rng(rng, mix_seed(seeds[i], STREAM_HAND + hand_nos[i]))
        shuffle(deck, rng)
        h_nd = np.int64(0)
        h_d = np.int64(0)
        for j in range(10):
            h_nd |= np.int64(1) << deck[j]
            h_d |= np.int64(1) << deck[10 + j]
        up = deck[20]
        upcards[i] = up
        nd0 = dealers[i] == 1  # seat 0 is the non-dealer
        _seat_features(h_nd if nd0 else h_d, up, limits[i], f0)
        _seat_features(h_d if nd0 else h_nd, up, limits[i], f1)
        s = 1.0 if nd0 else -1.0
        for k in range(4):
            d = f0[k] - f1[k]
            out[i, k] = d
            out[i, 4 + k] = d * s


def deal_covariates(seeds: Any, hand_nos: Any, dealers: Any, knock_limits: Any) -> tuple[np.ndarray, np.ndarray]:
    """Per hand: the covariates (n x 8, seat 0's view, :data:`COVARIATES`) and the recomputed upcard.

    ``seeds``: each hand's game seed; ``hand_nos``: the hand number (0 first);
    ``dealers``: the dealer's seat; ``knock_limits``: the hand's knock limit.
    The upcard is returned so callers can check the recomputed deal against
    the stored ``upcard`` column.
    """
    n = len(seeds)
    out = np.zeros((n, 2 * _K))
    ups = np.zeros(n, dtype=np.int64)
    if n:
        _deal_covariates(
            np.ascontiguousarray(seeds, dtype=np.int64),
            np.ascontiguousarray(hand_nos, dtype=np.int64),
            np.ascontiguousarray(dealers, dtype=np.int64),
            np.ascontiguousarray(knock_limits, dtype=np.int64),
            out,
            ups,
        )
    return out, ups


# --- per-pair values ------------------------------------------------------------------------

GAME_COLS = ["game_id", "matchup", "bot_a", "bot_b", "pair", "swap", "seed", "score0", "score1", "winner_seat", "error"]
GAME_COLS += ["hands", "gin_wins0", "gin_wins1", "undercut_wins0", "undercut_wins1"]
HAND_COLS = ["game_id", "hand", "dealer", "knock_limit", "upcard"]


@dataclass
class PairTable:
    """One row per duplicate pair of one matchup, seen from ``bot_a``.

    ``margin``: mean over the pair's games of bot_a's final score minus bot_b's;
    ``score``: mean game score (1 win, 0 loss, 0.5 no winner); ``z``: the mean
    per-game covariate (pairs x 8); ``games``: games with a result in the pair;
    ``counts``: the pair's sums of hands, bot_a's gins and the undercuts bot_a
    suffered (pairs x 3), for pair-clustered per-hand rates.
    """

    matchup: str
    bot_a: str
    bot_b: str
    pair: np.ndarray
    margin: np.ndarray
    score: np.ndarray
    z: np.ndarray
    games: np.ndarray
    counts: np.ndarray | None = None


@dataclass
class _Acc:
    bot_a: str
    bot_b: str
    parts: list[tuple[np.ndarray, ...]] = field(default_factory=list)


def _chunk_rows(g: pd.DataFrame, h: pd.DataFrame) -> tuple[np.ndarray, ...]:
    err = g["error"].fillna("").astype(str).to_numpy() != "" if "error" in g else np.zeros(len(g), bool)
    ws = g["winner_seat"].to_numpy().astype(np.int64)
    ok = ~(err & (ws < 0))
    a_seat = g["swap"].to_numpy().astype(np.int64)
    s0 = g["score0"].to_numpy().astype(np.float64)
    s1 = g["score1"].to_numpy().astype(np.float64)
    sign = np.where(a_seat == 0, 1.0, -1.0)
    margin = (s0 - s1) * sign
    score = np.where(ws < 0, 0.5, (ws == a_seat).astype(np.float64))
    gid = g["game_id"].to_numpy().astype(np.int64)
    order = np.argsort(gid)
    z = np.zeros((len(g), 2 * _K))
    if len(h):
        hg = h["game_id"].to_numpy().astype(np.int64)
        pos = order[np.searchsorted(gid[order], hg)]
        cov, ups = deal_covariates(
            g["seed"].to_numpy()[pos], h["hand"].to_numpy(), h["dealer"].to_numpy(), h["knock_limit"].to_numpy()
        )
        if "upcard" in h and not np.array_equal(ups, h["upcard"].to_numpy().astype(np.int64)):
            raise ValueError("recomputed deals do not match the stored upcards (engine changed since the run?)")
        np.add.at(z, pos, cov)
    z *= sign[:, None]
    pair = g["pair"].to_numpy().astype(np.int64)
    counts = np.zeros((len(g), 3))
    if {"hands", "gin_wins0", "undercut_wins0"} <= set(g.columns):
        a0 = a_seat == 0

        def own(base: str, mine: bool) -> np.ndarray:
            c0, c1 = g[f"{base}0"].to_numpy(), g[f"{base}1"].to_numpy()
            return np.where(a0 == mine, c0, c1).astype(np.float64)

        counts[:, 0] = g["hands"].to_numpy()
        counts[:, 1] = own("gin_wins", True)
        counts[:, 2] = own("undercut_wins", False)  # the opponent's undercuts: bot_a's knocks undercut
    return pair[ok], margin[ok], score[ok], z[ok], counts[ok]


def pair_table(chunks: Iterable[Any], matchups: Sequence[str] | None = None) -> dict[str, PairTable]:
    """Per-pair values of each matchup, from a store's chunks (streamed; see the module doc).

    ``chunks``: ``store.chunks(GAME_COLS, hands=HAND_COLS)`` of a run that
    recorded hands (:class:`arena.run.store.RunStore`).  ``matchups``: only these.
    """
    acc: dict[str, _Acc] = {}
    for ch in chunks:
        if matchups is not None and ch.matchup not in matchups:
            continue
        if ch.hands is None:
            raise ValueError("the control variate needs the hands table (record_hands = true)")
        a = acc.setdefault(ch.matchup, _Acc(ch.bot_a, ch.bot_b))
        a.parts.append(_chunk_rows(ch.games, ch.hands))
    out: dict[str, PairTable] = {}
    for m, a in acc.items():
        pair = np.concatenate([p[0] for p in a.parts])
        margin = np.concatenate([p[1] for p in a.parts])
        score = np.concatenate([p[2] for p in a.parts])
        z = np.concatenate([p[3] for p in a.parts])
        counts = np.concatenate([p[4] for p in a.parts])
        keys, inv, cnt = np.unique(pair, return_inverse=True, return_counts=True)

        def mean(v: np.ndarray, keys: np.ndarray = keys, inv: np.ndarray = inv, cnt: np.ndarray = cnt) -> np.ndarray:
            s = np.zeros((len(keys),) + v.shape[1:])
            np.add.at(s, inv, v)
            return s / cnt.reshape((-1,) + (1,) * (v.ndim - 1))

        sums = np.zeros((len(keys), 3))
        np.add.at(sums, inv, counts)
        out[m] = PairTable(m, a.bot_a, a.bot_b, keys, mean(margin), mean(score), mean(z), cnt, sums)
    return out


# --- the estimator --------------------------------------------------------------------------


#: Fewest pairs per covariate a slope is fitted on (one fold of the cross-fit); fewer: no adjustment.
MIN_PAIRS_PER_COVARIATE = 10


#: Fewest pairs of a matchup that the default two-fold cross-fit adjusts (each fold's slopes fitted on the other):
#: below it the adjusted estimate is the raw one.  A matchup is adjusted only when *every* fold's slopes can be
#: fitted (:func:`_can_cross_fit`), so with pairs numbered 0, 1, ... this is the threshold: 163 pairs split
#: 82 + 81, and the fold fitted on 81 could not be adjusted.
PAIRS_TO_ADJUST = 2 * (MIN_PAIRS_PER_COVARIATE * len(COVARIATES) + 2)


def _too_few(pairs: float, covariates: int) -> bool:
    """Too few pairs to fit ``covariates`` slopes (and an intercept): the adjustment is left out."""
    return pairs < MIN_PAIRS_PER_COVARIATE * covariates + 2


def _can_cross_fit(fold_sizes: np.ndarray, covariates: int) -> bool:
    """Whether every fold can be adjusted: the pairs outside each fold are enough to fit the slopes.

    All folds or none: with one fold adjusted and another not, the estimate was half adjusted, and was
    shown with a measured-looking VRF as "adjusted" below :data:`PAIRS_TO_ADJUST` pairs.
    """
    total = float(np.sum(fold_sizes))
    return bool(len(fold_sizes)) and all(not _too_few(total - float(f), covariates) for f in fold_sizes)


def fit_beta(y: np.ndarray, z: np.ndarray, ridge: float = 1e-6) -> np.ndarray:
    """Least-squares slope of ``y`` on ``z`` (with an intercept), a little ridge for stability.

    Zero (no adjustment) below :data:`MIN_PAIRS_PER_COVARIATE` pairs per covariate: eight slopes fitted
    on a few dozen pairs fit their noise, and the adjusted estimates of a small sweep came out below 0
    and above 1 with intervals three units wide (and picked the "best" value from them).
    """
    y = np.asarray(y, dtype=np.float64)
    z = np.asarray(z, dtype=np.float64)
    if _too_few(len(y), z.shape[1]):
        return np.zeros(z.shape[1])
    zc = z - z.mean(axis=0)
    yc = y - y.mean()
    a = zc.T @ zc
    a += ridge * np.trace(a) / max(1, a.shape[0]) * np.eye(a.shape[0]) + 1e-12 * np.eye(a.shape[0])
    return np.linalg.solve(a, zc.T @ yc)


@dataclass
class CVEstimate:
    """A mean with and without the control variate (``raw_*`` / ``adj_*``), at confidence ``conf``.

    ``vrf``: the variance reduction factor, raw variance / adjusted variance
    (1.5 means the adjusted estimate is as precise as the raw one on 1.5x the
    games); ``equivalent_games``: games x vrf; ``reduction``: 1 - 1/vrf.
    ``adjusted``: False when some fold had too few pairs outside it to fit
    ``beta`` (see :func:`fit_beta`; fewer than :data:`PAIRS_TO_ADJUST` pairs
    with two folds): then no fold is adjusted, ``adj`` is ``raw`` and ``vrf``
    1 by construction, not measured, and a table shows neither as if it were.
    """

    raw: float
    raw_lo: float
    raw_hi: float
    raw_se: float
    adj: float
    adj_lo: float
    adj_hi: float
    adj_se: float
    vrf: float
    pairs: int
    games: int
    adjusted: bool = True

    @property
    def equivalent_games(self) -> float:
        return self.games * self.vrf

    @property
    def reduction(self) -> float:
        return 1.0 - 1.0 / self.vrf if self.vrf > 0 else float("nan")

    def as_dict(self, prefix: str = "") -> dict[str, float]:
        d = {k: getattr(self, k) for k in ("raw", "raw_lo", "raw_hi", "raw_se", "adj", "adj_lo", "adj_hi", "adj_se")}
        d.update(vrf=self.vrf, equivalent_games=self.equivalent_games, reduction=self.reduction)
        return {prefix + k: float(v) for k, v in d.items()}


def adjusted_values(
    y: np.ndarray, z: np.ndarray, *, folds: int = 2, beta: np.ndarray | None = None, fold_of: np.ndarray | None = None
) -> np.ndarray:
    """``y - z . beta`` per pair, ``beta`` never fitted on the pair it adjusts.

    With ``beta`` given (e.g. fitted on an earlier run) it is used as is;
    otherwise cross-fitting over ``folds`` folds (``fold_of``: each pair's
    fold, by default its row number modulo ``folds``), and ``y`` unchanged
    unless every fold can be fitted (:func:`_can_cross_fit`).
    """
    y = np.asarray(y, dtype=np.float64)
    z = np.asarray(z, dtype=np.float64)
    if beta is not None:
        return y - z @ np.asarray(beta, dtype=np.float64)
    fold = np.arange(len(y)) % folds if fold_of is None else np.asarray(fold_of) % folds
    out = y.copy()
    if not _can_cross_fit(np.bincount(fold, minlength=folds), z.shape[1]):
        return out
    for f in range(folds):
        test = fold == f
        b = fit_beta(y[~test], z[~test])
        out[test] = y[test] - z[test] @ b
    return out


def _t_ci(v: np.ndarray, conf: float) -> tuple[float, float, float, float]:
    n = len(v)
    m = float(np.mean(v)) if n else float("nan")
    if n < 2:
        return m, float("nan"), float("nan"), float("nan")
    se = float(np.std(v, ddof=1) / np.sqrt(n))
    t = t_quantile(conf, n - 1)
    return m, m - t * se, m + t * se, se


def cv_estimate(
    y: np.ndarray,
    z: np.ndarray,
    *,
    games: int | None = None,
    conf: float = 0.95,
    folds: int = 2,
    beta: np.ndarray | None = None,
) -> CVEstimate:
    """The raw and control-variate estimates of the mean of the per-pair values ``y``.

    ``z``: the per-pair covariates (mean 0 by construction, see the module
    doc); ``games``: for the equivalent-games figure (default 2 per pair).
    """
    y = np.asarray(y, dtype=np.float64)
    adj = adjusted_values(y, z, folds=folds, beta=beta)
    r = _t_ci(y, conf)
    a = _t_ci(adj, conf)
    vrf = (r[3] / a[3]) ** 2 if a[3] and a[3] > 0 else float("nan")
    k = np.asarray(z).reshape(len(y), -1).shape[1]
    fitted = beta is not None or _can_cross_fit(np.bincount(np.arange(len(y)) % folds, minlength=folds), k)
    n_games = int(games if games is not None else 2 * len(y))
    return CVEstimate(*r, *a, vrf=vrf, pairs=len(y), games=n_games, adjusted=fitted)


# --- streaming: sums per matchup and fold (flat memory, for reports of any size) -------------------

_WHAT = ("margin", "score")


class CVSums:
    """Additive sums of one matchup's per-pair values, per cross-fitting fold (pair number mod ``folds``).

    For each value (``margin``, ``score``) and fold: pairs, sum y, sum y^2, sum z,
    sum z z', sum z y.  Both games of a pair are always in one chunk, so pairs
    can be formed chunk by chunk; memory does not grow with the run.
    """

    def __init__(self, folds: int = 2) -> None:
        k = 2 * _K
        self.folds = folds
        self.n = np.zeros(folds)
        self.games = 0
        self.sy = np.zeros((2, folds))
        self.syy = np.zeros((2, folds))
        self.sz = np.zeros((folds, k))
        self.szz = np.zeros((folds, k, k))
        self.szy = np.zeros((2, folds, k))

    def add(self, p: PairTable) -> None:
        fold = p.pair % self.folds
        self.games += int(p.games.sum())
        for f in range(self.folds):
            m = fold == f
            z = p.z[m]
            self.n[f] += m.sum()
            self.sz[f] += z.sum(axis=0)
            self.szz[f] += z.T @ z
            for i, y in enumerate((p.margin[m], p.score[m])):
                self.sy[i, f] += y.sum()
                self.syy[i, f] += y @ y
                self.szy[i, f] += z.T @ y

    def estimate(self, what: str = "margin", conf: float = 0.95, ridge: float = 1e-6) -> CVEstimate:
        """Raw and cross-fitted adjusted estimate of the mean per-pair ``what`` (margin or score)."""
        i = _WHAT.index(what)
        n_all = self.n.sum()
        adj_s = adj_ss = 0.0
        fitted = _can_cross_fit(self.n, self.sz.shape[1])  # every fold, or none (as adjusted_values)
        for f in range(self.folds):
            o = np.arange(self.folds) != f  # fit on the other folds
            n, sy, sz = self.n[o].sum(), self.sy[i, o].sum(), self.sz[o].sum(axis=0)
            if not fitted:
                b = np.zeros(sz.shape[0])
            else:
                a = self.szz[o].sum(axis=0) - np.outer(sz, sz) / n
                c = self.szy[i, o].sum(axis=0) - sz * sy / n
                a += ridge * np.trace(a) / a.shape[0] * np.eye(a.shape[0]) + 1e-12 * np.eye(a.shape[0])
                b = np.linalg.solve(a, c)
            adj_s += self.sy[i, f] - self.sz[f] @ b
            adj_ss += self.syy[i, f] - 2 * b @ self.szy[i, f] + b @ self.szz[f] @ b
        raw = _moments_ci(n_all, self.sy[i].sum(), self.syy[i].sum(), conf)
        adj = _moments_ci(n_all, adj_s, adj_ss, conf)
        vrf = (raw[3] / adj[3]) ** 2 if adj[3] > 0 else float("nan")
        return CVEstimate(*raw, *adj, vrf=vrf, pairs=int(n_all), games=self.games, adjusted=fitted)


def _moments_ci(n: float, s: float, ss: float, conf: float) -> tuple[float, float, float, float]:
    if n < 2:
        return (s / n if n else float("nan")), float("nan"), float("nan"), float("nan")
    m = s / n
    v = max(ss - n * m * m, 0.0) / (n - 1)
    se = float(np.sqrt(v / n))
    t = t_quantile(conf, n - 1)
    return m, m - t * se, m + t * se, se


def cv_sums(chunks: Iterable[Any], folds: int = 2) -> dict[str, CVSums]:
    """:class:`CVSums` of every matchup, one chunk at a time (``store.chunks(GAME_COLS, hands=HAND_COLS)``)."""
    out: dict[str, CVSums] = {}
    for ch in chunks:
        if ch.hands is None:
            continue
        (pt,) = pair_table([ch]).values()
        out.setdefault(ch.matchup, CVSums(folds)).add(pt)
    return out
