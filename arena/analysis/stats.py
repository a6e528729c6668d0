"""Statistics of a tournament run: win rates, ratings, play style, seat effects.

Every public function takes either a :class:`~arena.analysis.summary.Summary`
(the additive sums of a run, built chunk by chunk; see
:func:`~arena.analysis.summary.summarize_run`) or a ``games`` table (one row
per game, the games schema of :mod:`arena.run.store`) with, where it helps,
the optional ``hands`` table; a table is summarised with the same code
(:meth:`Summary.of_chunk`).  Each returns a :class:`pandas.DataFrame` whose
columns are listed in the function's docstring.  Results computed from a
Summary are cached on it, so the report can ask for a table many times.

Conventions
-----------
* **Game score.**  A game won scores 1, lost 0; a game with no winner (the
  hand cap ended it) scores 0.5 to each bot.  A game with an ``error`` and no
  ``winner`` was not played to a result and is left out of every result
  column (it still counts in ``errors``).  A forfeit is a loss for the bot
  that forfeited (the engine names the other bot the winner).
* **Duplicate pairs.**  Both games of a pair share the deal with the seats
  swapped, so their results are not independent.  Every interval here is
  *pair-clustered*: the unit of sampling is the pair (``matchup``, ``pair``),
  never the game.  A proportion or a per-hand rate is a ratio estimator
  ``sum(y) / sum(n)`` over clusters, with the cluster-robust variance
  ``sum_c (y_c - est * n_c)^2 / (sum n)^2 * G / (G - 1)`` and a Student t
  interval on ``G - 1`` degrees of freedom (``G`` clusters).  When every pair
  is complete this is exactly the t interval on the pair means (per-pair
  score in {0, .25, .5, .75, 1}).  The sum of squares is expanded into
  ``Syy - 2 est Syn + est^2 Snn`` so that it needs only sums that add over
  chunks.
* **The same deals in every matchup.**  Pair k of every matchup of a run is
  dealt from the same seed, so a bot's results on one deal against two
  opponents are alike (the deal suits its style or not).  A per-bot figure
  over several matchups (:func:`bot_stats`' intervals, the ratings' sandwich)
  is therefore clustered on the *deal* - all of the bot's games on it, in
  every matchup - not on the matchup's pair: those intervals were 1.2 to 1.5
  times too narrow.  The summary keeps per-deal sums for this (bucketed, so
  memory stays bounded; see :data:`arena.analysis.summary.DEAL_BUCKETS`).
* **Proportions** (win rates, shares) get the modified Wilson interval of
  Brown, Cai and DasGupta on the effective sample size instead of
  ``est +- t se`` (see :func:`_proportion_interval`): it stays inside
  [0, 1], is never a point when every pair was swept, and near 0 or 1
  (a bot that wins one game in fifty) it takes the exact one-sided bound
  where Wilson's alone covers only about 84%.
* **Elo scale.**  ``elo = 400 * log10(p / (1 - p))`` for an expected score
  ``p`` (logistic Elo, as in chess testing).
* **Self-play.**  Games where ``bot_a == bot_b`` appear in :func:`pair_stats`
  but are left out of everything per bot (they say nothing about a bot
  against the field and would count its hands twice).
* Per-seat game columns end in 0/1 (the seat); ``swap`` says which seat
  ``bot_a`` had (0: seat 0).  Everything here maps seats to bots with it.
"""

from __future__ import annotations

from typing import Any, TypeAlias

import numpy as np
import pandas as pd

from arena.analysis.quantiles import beta_quantile, normal_quantile, sign_test_p, t_quantile
from arena.analysis.quasi import quasi_variances
from arena.analysis.summary import (
    DEAL_BUCKETS,
    DEAL_ROWS,
    FIELDS,
    MOMENTS,
    WIN_KINDS,
    Summary,
    decode,
    hand_winners,
    summarize_run,
)

_DEAL_ROW = {name: i for i, name in enumerate(DEAL_ROWS)}
ELO_K = 400.0 / np.log(10.0)  # Elo points per unit of the logistic scale (natural log odds)

__all__ = [
    "ELO_K",
    "Summary",
    "summarize",
    "elo_from_score",
    "score_from_elo",
    "ratio_ci",
    "ratio_ci_moments",
    "pair_stats",
    "bot_stats",
    "pair_summary",
    "bot_summary",
    "bradley_terry",
    "fit_bt",
    "leaderboard",
    "first_mover",
    "outcome_mix",
    "win_matrix",
    "convergence",
    "hand_results",
]

Games: TypeAlias = pd.DataFrame | Summary
_FIELD = {name: i for i, name in enumerate(FIELDS)}


# --- small helpers ------------------------------------------------------------------


def score_from_elo(elo: Any) -> Any:
    """Expected score of a bot ``elo`` points stronger (logistic Elo)."""
    return 1.0 / (1.0 + np.power(10.0, -np.asarray(elo, dtype=float) / 400.0))


def elo_from_score(p: Any) -> Any:
    """Elo difference that gives expected score ``p`` (+-inf at 1 and 0)."""
    p = np.asarray(p, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return 400.0 * np.log10(p / (1.0 - p))


def _tq(conf: float, df: Any) -> np.ndarray:
    """Two-sided Student t quantile for ``conf`` with ``df`` degrees (nan if df < 1)."""
    df = np.asarray(df, dtype=float)
    out = np.full(df.shape, np.nan)
    ok = df >= 1
    out[ok] = t_quantile(conf, df[ok])
    return out


def ratio_ci_moments(
    G: Any,
    N: Any,
    S: Any,
    SS: Any,
    SN: Any,
    NN: Any,
    conf: float = 0.95,
    clip: tuple[float, float] | None = None,
    units: Any = None,
) -> dict[str, np.ndarray]:
    """Cluster-robust ratio ``S / N`` per group with a t interval, from per-group sums over clusters.

    ``G`` clusters, ``N = sum n_c``, ``S = sum s_c``, ``SS = sum s_c^2``,
    ``SN = sum s_c n_c``, ``NN = sum n_c^2``: sums add over chunks, so this
    is what a streamed summary can give.  Returns ``est``, ``se``, ``lo``,
    ``hi``, ``clusters`` (G) and ``den`` (N); groups with fewer than two
    clusters get a nan interval.  ``clip=(0, 1)`` marks a proportion (see
    :func:`_proportion_interval`); ``units``, the independent samples a
    proportion counts when its clusters show no variance (``G`` by default:
    the number of deals when clusters are buckets of deals).
    """
    G, N, S, SS, SN, NN = (np.asarray(x, dtype=float) for x in (G, N, S, SS, SN, NN))
    with np.errstate(divide="ignore", invalid="ignore"):
        est = S / N
        var = (SS - 2.0 * est * SN + est * est * NN) / (N * N) * G / (G - 1.0)
        se = np.sqrt(np.maximum(var, 0.0))
    se = np.where(G < 2, np.nan, se)
    tq = _tq(conf, G - 1.0)
    if clip == (0.0, 1.0):
        lo, hi = _proportion_interval(est, se, G if units is None else np.asarray(units, dtype=float), tq, conf)
    else:
        lo, hi = est - tq * se, est + tq * se
        if clip is not None:
            lo, hi = np.clip(lo, *clip), np.clip(hi, *clip)
    return {"est": est, "se": se, "lo": lo, "hi": hi, "clusters": G, "den": N}


def share_ci(n: float, s: float, ss: float, conf: float = 0.95) -> tuple[float, float, float]:
    """Mean of ``n`` per-pair shares in [0, 1] (sum ``s``, sum of squares ``ss``) with the interval a win
    rate gets in the matchups tables: modified Wilson on the effective sample size (:func:`ratio_ci_moments`, each
    pair one unit), inside [0, 1] and never a point, where a t interval on the pairs was "0.0..0.0%" after
    a clean sweep.  Returns ``(est, lo, hi)``."""
    r = ratio_ci_moments(n, n, s, ss, s, n, conf, clip=(0.0, 1.0))
    return float(r["est"]), float(r["lo"]), float(r["hi"])


def _proportion_interval(
    p: np.ndarray, se: np.ndarray, units: np.ndarray, tq: np.ndarray, conf: float = 0.95
) -> tuple[np.ndarray, np.ndarray]:
    """A clustered proportion's interval: modified Wilson, on the effective sample size ``p (1 - p) / se^2``.

    The symmetric ``p +- t se`` collapses to a point when every pair is a
    sweep (0 of 200 games is not "exactly 0%"), and near 0 or 1 it covers far
    less often than it says.  Wilson's score interval on the number of games
    the clustered variance is worth (Korn and Graubard's effective sample
    size ``n``) matches ``p +- t se`` in the middle, stays inside [0, 1] and is
    never a point.  When the pairs show no variance at all (all swept, or all
    split), nothing measures how alike a pair's games are, so each deal
    counts as one observation (``units`` of them), the cautious end.

    Wilson's interval alone covers only about 84% (at any ``n``) when the
    true rate sits just below its lower bound for one success: there a
    single win, the likeliest result, already excludes it (Brown, Cai and
    DasGupta 2001, "Interval estimation for a binomial proportion", 4.1.1).
    Their modified Wilson interval takes, for ``x = 1, 2`` (``3`` from 51
    games) successes, the one-sided Poisson bound ``chi2_{2x, alpha} /
    (2 n)`` (``alpha = 1 - conf``) as the lower bound, and the same for
    ``n - x`` failures at the upper one.  Here ``x = p n`` and ``n`` are
    effective counts, not whole numbers, so the rule is applied in a
    continuous form: the lower bound is the smaller of Wilson's and the
    exact one-sided bound at level ``1 - alpha``, the ``alpha`` quantile of
    ``Beta(x, n - x + 1)`` (Clopper-Pearson's, whose limit for a few
    successes in many games is that Poisson bound); the upper bound is the
    larger of Wilson's and the mirror image for the ``n - x`` failures.
    The exact bound is the smaller one for a few successes and Wilson's
    once there are more, so the bounds move continuously with ``x`` where a
    cut at ``x = 3`` would jump.  By exact binomial enumeration (n from 10
    to 1000, every p) the coverage never falls below 0.92, where Wilson's
    alone dips to 0.84, and the interval is on average about 1% wider.
    """
    alpha = 1.0 - conf
    with np.errstate(divide="ignore", invalid="ignore"):
        pq = p * (1.0 - p)
        n = np.where((se > 0) & (pq > 0), pq / (se * se), units)
        z2n = tq * tq / n
        centre = (p + z2n / 2.0) / (1.0 + z2n)
        half = tq / (1.0 + z2n) * np.sqrt(pq / n + z2n / (4.0 * n))
        x, f = p * n, (1.0 - p) * n  # effective successes and failures
        lo = np.minimum(centre - half, beta_quantile(alpha, x, f + 1.0))
        hi = np.maximum(centre + half, 1.0 - beta_quantile(alpha, f, x + 1.0))
    lo, hi = np.clip(lo, 0.0, 1.0), np.clip(hi, 0.0, 1.0)
    bad = ~np.isfinite(se)
    return np.where(bad, np.nan, lo), np.where(bad, np.nan, hi)


def ratio_ci(
    num: np.ndarray,
    den: np.ndarray,
    group: np.ndarray,
    n_groups: int,
    conf: float = 0.95,
    clip: tuple[float, float] | None = None,
) -> dict[str, np.ndarray]:
    """Cluster-robust ratio estimate ``sum(num) / sum(den)`` per group, with a t interval.

    ``num``, ``den`` and ``group`` have one entry per *cluster* (e.g. the total
    score and the number of games of a duplicate pair, and the matchup the
    pair belongs to).  Returns arrays of length ``n_groups`` as
    :func:`ratio_ci_moments` does.
    """
    num = np.asarray(num, dtype=float)
    den = np.asarray(den, dtype=float)
    group = np.asarray(group, dtype=np.int64)

    def gsum(w):
        return np.bincount(group, weights=w, minlength=n_groups)

    return ratio_ci_moments(
        np.bincount(group, minlength=n_groups).astype(float),
        gsum(den),
        gsum(num),
        gsum(num * num),
        gsum(num * den),
        gsum(den * den),
        conf,
        clip,
    )


def summarize(games: Games, hands: pd.DataFrame | None = None) -> Summary:
    """``games`` as a Summary: a Summary as it is, a table through :meth:`Summary.of_chunk`."""
    if isinstance(games, Summary):
        if hands is not None:
            raise ValueError("pass the hands table when the Summary is built (Summary.of_chunk(games, hands))")
        if games.n_games == 0:
            raise ValueError("the summary holds no games")
        return games
    s = Summary.of_chunk(games, hands)
    if s.n_games == 0:
        raise ValueError("the games table is empty")
    return s


def _cached(s: Summary, key: tuple, build) -> pd.DataFrame:
    hit = s.cache.get(key)
    if hit is None:
        hit = build()
        s.cache[key] = hit
    return hit.copy()


class _M:
    """Per-matchup arrays of a Summary (``x.win_score`` is the field win_score per matchup)."""

    def __init__(self, s: Summary):
        self.matchups, self.bots, self.m_a, self.m_b, self._S = s.view()
        self.cross = self.m_a != self.m_b
        self.n_bots = len(self.bots)
        self.n_m = len(self.matchups)
        self.deals = s.deals()  # matchups x DEAL_ROWS x DEAL_BUCKETS
        self.deal_pairs = self.moments("win")[0]  # per matchup: its deals, pair k of each being the same

    def deal(self, row: str) -> np.ndarray:
        """One of :data:`DEAL_ROWS`, matchups x deal buckets."""
        return self.deals[:, _DEAL_ROW[row]]

    def __getattr__(self, name: str) -> np.ndarray:
        if name in _FIELD:
            return self._S[:, _FIELD[name]]
        raise AttributeError(name)

    def moments(self, ratio: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """A ratio's six sums per matchup (:data:`arena.analysis.summary.MOMENTS`), as ratio_ci_moments takes them."""
        pairs, n, s, ss, sn, nn = (self._S[:, _FIELD[name]] for name in MOMENTS[ratio])
        return pairs, n, s, ss, sn, nn

    def per_bot(self, xa: np.ndarray, xb: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
        """Sum over each bot's matchups of its own side's value (``mask``: cross matchups by default)."""
        m = self.cross if mask is None else mask
        return np.bincount(self.m_a[m], weights=np.asarray(xa, dtype=float)[m], minlength=self.n_bots) + np.bincount(
            self.m_b[m], weights=np.asarray(xb, dtype=float)[m], minlength=self.n_bots
        )

    def per_bot_deals(self, row_a: np.ndarray, row_b: np.ndarray) -> np.ndarray:
        """Bots x deal buckets: the sum over each bot's cross matchups of its own side's per-deal value.

        ``row_a``, ``row_b``: matchups x buckets, bot_a's and bot_b's side.
        """
        out = np.zeros((self.n_bots, DEAL_BUCKETS))
        m = self.cross
        np.add.at(out, self.m_a[m], row_a[m])
        np.add.at(out, self.m_b[m], row_b[m])
        return out

    def per_bot_deal_ci(self, num: np.ndarray, den: np.ndarray, conf: float, clip=None) -> dict[str, np.ndarray]:
        """A per-bot ratio ``sum num / sum den`` clustered on the deal (bots x buckets, as :meth:`per_bot_deals`).

        The deals a bot played are its longest matchup's pairs (every matchup deals pair k alike).
        """
        deals = np.zeros(self.n_bots)
        m = self.cross
        np.maximum.at(deals, self.m_a[m], self.deal_pairs[m])
        np.maximum.at(deals, self.m_b[m], self.deal_pairs[m])
        return _deal_ci(num, den, deals, conf, clip)


def _deal_ci(num: np.ndarray, den: np.ndarray, deals: Any, conf: float, clip=None) -> dict[str, np.ndarray]:
    """A ratio ``sum num / sum den`` per row, clustered on the deal bucket (the last axis).

    ``deals``: the deals each row played, what a proportion whose buckets
    show no variance counts as its samples (not the buckets they fall in).
    """
    G = (den > 0).sum(axis=-1).astype(float)
    sums = (den.sum(-1), num.sum(-1), (num * num).sum(-1), (num * den).sum(-1), (den * den).sum(-1))
    return ratio_ci_moments(G, *sums, conf=conf, clip=clip, units=np.maximum(deals, G))


# --- per pair (matchup) -------------------------------------------------------------


def pair_stats(games: Games, conf: float = 0.95) -> pd.DataFrame:
    """One row per matchup: results of ``bot_a`` against ``bot_b``.

    Columns:
      matchup, bot_a, bot_b;
      games (with a result), pairs (clusters with a result), complete_pairs (both games),
      errors (games with an error text), forfeits_a, forfeits_b (games each bot forfeited);
      wins_a, wins_b, draws (games without a winner);
      win_rate_a = (wins_a + draws / 2) / games, its pair-clustered interval
      win_rate_ci_low / win_rate_ci_high and standard error win_rate_se;
      elo_diff (Elo of bot_a over bot_b from win_rate_a), elo_ci_low, elo_ci_high
      (the interval's ends on the Elo scale; +-inf when the end is 1 or 0);
      sweeps_a, sweeps_b (complete pairs one bot won both games of), splits
      (the other complete pairs), sign_p (exact two-sided binomial test of
      sweeps_a against sweeps_b with p = 1/2; nan without sweeps);
      margin (mean of bot_a's final score minus bot_b's, per game), margin_ci_low,
      margin_ci_high (pair-clustered t interval), margin_sd (per game).
    """
    s = summarize(games)
    return _cached(s, ("pair_stats", conf), lambda: _pair_stats(_M(s), conf))


def _pair_stats(x: _M, conf: float) -> pd.DataFrame:
    wr = ratio_ci_moments(*x.moments("win"), conf, clip=(0.0, 1.0))
    mg = ratio_ci_moments(*x.moments("margin"), conf)
    games_m = x.valid
    with np.errstate(invalid="ignore", divide="ignore"):
        margin_sd = np.sqrt(np.maximum(x.margin_game_sq / games_m - mg["est"] ** 2, 0.0) * games_m / (games_m - 1))
    sweeps_a, sweeps_b = x.sweeps_a.astype(np.int64), x.sweeps_b.astype(np.int64)
    n_complete = x.complete.astype(np.int64)
    sign_p = np.array([sign_test_p(int(a), int(b)) for a, b in zip(sweeps_a, sweeps_b)])
    return pd.DataFrame(
        {
            "matchup": x.matchups,
            "bot_a": [x.bots[i] for i in x.m_a],
            "bot_b": [x.bots[i] for i in x.m_b],
            "games": games_m.astype(np.int64),
            "pairs": wr["clusters"].astype(np.int64),
            "complete_pairs": n_complete,
            "errors": x.errors.astype(np.int64),
            "forfeits_a": x.forfeits_a.astype(np.int64),
            "forfeits_b": x.forfeits_b.astype(np.int64),
            "wins_a": x.wins_a.astype(np.int64),
            "wins_b": x.wins_b.astype(np.int64),
            "draws": x.draws.astype(np.int64),
            "win_rate_a": wr["est"],
            "win_rate_ci_low": wr["lo"],
            "win_rate_ci_high": wr["hi"],
            "win_rate_se": wr["se"],
            "elo_diff": elo_from_score(wr["est"]),
            "elo_ci_low": elo_from_score(wr["lo"]),
            "elo_ci_high": elo_from_score(wr["hi"]),
            "sweeps_a": sweeps_a,
            "sweeps_b": sweeps_b,
            "splits": n_complete - sweeps_a - sweeps_b,
            "sign_p": sign_p,
            "margin": mg["est"],
            "margin_ci_low": mg["lo"],
            "margin_ci_high": mg["hi"],
            "margin_sd": margin_sd,
        }
    )


# --- per bot --------------------------------------------------------------------------


def pair_summary(store: Any, summary: Summary | None = None) -> pd.DataFrame:
    """A run's :func:`pair_stats`, one row per matchup in play order.

    ``store``: the run's :class:`arena.run.store.RunStore` (e.g.
    ``result.store``); its games are read in one streamed pass unless the
    run's ``summary`` is given.
    """
    order = [m.name for m in store.matchups()]
    ps = pair_stats(summary if summary is not None else summarize_run(store)).set_index("matchup")
    return ps.reindex([o for o in order if o in ps.index]).reset_index()


def bot_summary(store: Any, summary: Summary | None = None) -> pd.DataFrame:
    """A run's :func:`bot_stats`, best win rate first (``summary``: as for :func:`pair_summary`)."""
    s = summary if summary is not None else summarize_run(store)
    return bot_stats(s).sort_values("win_rate", ascending=False).reset_index(drop=True)


def _win_sides(x: _M) -> tuple[tuple, tuple]:
    """Win-rate moments for bot_a's side and for bot_b's (whose score per pair is n - s)."""
    pairs, n, s, ss, sn, nn = x.moments("win")
    return (pairs, n, s, ss, sn, nn), (pairs, n, n - s, nn - 2.0 * sn + ss, nn - sn, nn)


def bot_stats(games: Games, hands: pd.DataFrame | None = None, conf: float = 0.95) -> pd.DataFrame:
    """One row per bot: results against the field and play style (self-play left out).

    Columns (``_ci_low``/``_ci_high``: interval at ``conf``, clustered on the deal across the bot's matchups):
      bot, opponents (distinct), games, wins, losses, draws, forfeits (games it forfeited),
      win_rate = (wins + draws / 2) / games (+ ci), margin (mean final score minus the
      opponent's, per game);
      hands (hands played), points_per_hand (own game points / hands, + ci),
      conceded_per_hand (the opponents' points / hands);
      per hand played: hand_win_rate (hands won), knock_rate (won by a knock),
      undercut_won_rate (won by undercutting the opponent), gin_rate, big_gin_rate,
      undercut_suffered_rate (its knock was undercut), dead_rate, capped_rate,
      forfeit_rate (hands it forfeited);
      knocks_per_hand (non-gin knocks, won or undercut), knock_deadwood (mean
      deadwood over those knocks), turns_per_hand (discards by both seats per hand),
      discard_take_rate (discards of this bot the opponent took from the pile /
      its discards), pickup_rate (the opponent's discards it took / their discards).
      With hands (a ``hands`` table, or a Summary built with one):
      points_per_hand_won (mean points in hands it won), points_per_hand_lost
      (mean points conceded in hands it lost).
    """
    s = summarize(games, hands)
    return _cached(s, ("bot_stats", conf), lambda: _bot_stats(s, _M(s), conf))


def _bot_stats(s: Summary, x: _M, conf: float) -> pd.DataFrame:
    pb = x.per_bot
    games = pb(x.valid, x.valid)
    wins = pb(x.wins_a, x.wins_b)
    losses = pb(x.wins_b, x.wins_a)
    draws = games - wins - losses
    played_d, score_d, hands_d = x.deal("games"), x.deal("score_a"), x.deal("hands")
    wr = x.per_bot_deal_ci(
        x.per_bot_deals(score_d, played_d - score_d), x.per_bot_deals(played_d, played_d), conf, clip=(0.0, 1.0)
    )
    pts = x.per_bot_deal_ci(
        x.per_bot_deals(x.deal("points_a"), x.deal("points_b")), x.per_bot_deals(hands_d, hands_d), conf
    )
    n_hands = pb(x.hands, x.hands)
    own = {k: pb(getattr(x, f"{k}_a"), getattr(x, f"{k}_b")) for k in WIN_KINDS}
    opp = {k: pb(getattr(x, f"{k}_b"), getattr(x, f"{k}_a")) for k in WIN_KINDS}
    forfeits = pb(x.forfeits_a, x.forfeits_b)
    knocks = own["knock"] + opp["undercut"]
    margin = pb(x.margin, -x.margin)
    opponents = np.zeros(x.n_bots, dtype=np.int64)
    seen = np.unique(
        np.concatenate([x.m_a[x.cross] * x.n_bots + x.m_b[x.cross], x.m_b[x.cross] * x.n_bots + x.m_a[x.cross]])
    )
    np.add.at(opponents, seen // x.n_bots, 1)

    with np.errstate(divide="ignore", invalid="ignore"):
        out = pd.DataFrame(
            {
                "bot": x.bots,
                "opponents": opponents,
                "games": games.astype(np.int64),
                "wins": wins.astype(np.int64),
                "losses": losses.astype(np.int64),
                "draws": draws.astype(np.int64),
                "forfeits": forfeits.astype(np.int64),
                "win_rate": wr["est"],
                "win_rate_ci_low": wr["lo"],
                "win_rate_ci_high": wr["hi"],
                "margin": margin / games,
                "hands": n_hands.astype(np.int64),
                "points_per_hand": pts["est"],
                "points_per_hand_ci_low": pts["lo"],
                "points_per_hand_ci_high": pts["hi"],
                "conceded_per_hand": pb(x.score_b, x.score_a) / n_hands,
                "hand_win_rate": sum(own.values()) / n_hands,
                "knock_rate": own["knock"] / n_hands,
                "undercut_won_rate": own["undercut"] / n_hands,
                "gin_rate": own["gin"] / n_hands,
                "big_gin_rate": own["big_gin"] / n_hands,
                "undercut_suffered_rate": opp["undercut"] / n_hands,
                "dead_rate": pb(x.dead, x.dead) / n_hands,
                "capped_rate": pb(x.capped, x.capped) / n_hands,
                "forfeit_rate": forfeits / n_hands,
                "knocks_per_hand": knocks / n_hands,
                "knock_deadwood": pb(x.knock_deadwood_a, x.knock_deadwood_b) / knocks,
                "turns_per_hand": pb(x.turns, x.turns) / n_hands,
                "discard_take_rate": pb(x.pickups_b, x.pickups_a) / pb(x.discards_a, x.discards_b),
                "pickup_rate": pb(x.pickups_a, x.pickups_b) / pb(x.discards_b, x.discards_a),
            }
        )
    if s.has_hands:
        out["points_per_hand_won"] = [s.hist(b, "won_points").mean() for b in x.bots]
        out["points_per_hand_lost"] = [s.hist(b, "lost_points").mean() for b in x.bots]
    return out[out["games"] > 0].reset_index(drop=True) if (out["games"] > 0).any() else out


def outcome_mix(games: Games) -> pd.DataFrame:
    """How each bot's hands ended, as shares of the hands it played (rows sum to ~1).

    Columns: bot, hands, then won_knock, won_undercut, won_gin, won_big_gin,
    lost_knock, lost_undercut (its knock was undercut), lost_gin, lost_big_gin,
    dead, capped, forfeit (a hand ended by either bot's forfeit).
    Self-play is left out.
    """
    s = summarize(games)
    return _cached(s, ("outcome_mix",), lambda: _outcome_mix(_M(s)))


def _outcome_mix(x: _M) -> pd.DataFrame:
    pb = x.per_bot
    n_hands = pb(x.hands, x.hands)
    cols: dict[str, Any] = {"bot": x.bots, "hands": n_hands.astype(np.int64)}
    with np.errstate(divide="ignore", invalid="ignore"):
        for k in WIN_KINDS:
            cols[f"won_{k}"] = pb(getattr(x, f"{k}_a"), getattr(x, f"{k}_b")) / n_hands
        for k in WIN_KINDS:
            cols[f"lost_{k}"] = pb(getattr(x, f"{k}_b"), getattr(x, f"{k}_a")) / n_hands
        cols["dead"] = pb(x.dead, x.dead) / n_hands
        cols["capped"] = pb(x.capped, x.capped) / n_hands
        cols["forfeit"] = pb(x.forfeit_games, x.forfeit_games) / n_hands
    out = pd.DataFrame(cols)
    return out[out["hands"] > 0].reset_index(drop=True)


WIN_MATRICES = ("win_rate", "games", "ci_low", "ci_high", "half_width")


def win_matrix(games: Games, what: str = "win_rate") -> pd.DataFrame:
    """Bots x bots: ``what`` of the row bot against the column bot (nan if they never met).

    ``what`` is ``win_rate`` (score share, draws half), ``games``,
    ``ci_low`` / ``ci_high`` (the ends of the pair-clustered 95% interval,
    modified Wilson as every win rate's here), or ``half_width`` (half its width).
    Both orientations of a matchup are merged.  Self-play is left out.
    """
    if what not in WIN_MATRICES:
        raise ValueError(f"unknown matrix '{what}' ({', '.join(WIN_MATRICES)})")
    s = summarize(games)
    return _cached(s, ("win_matrix", what), lambda: _win_matrix(_M(s), what))


def _win_matrix(x: _M, what: str) -> pd.DataFrame:
    n = x.n_bots
    c = x.cross
    ia, ib = x.m_a[c], x.m_b[c]
    # each matchup counts once for (a, b) with a's score and once for (b, a) with b's
    grp = np.concatenate([ia * n + ib, ib * n + ia])
    side_a, side_b = _win_sides(x)
    G, N, S, SS, SN, NN = (
        np.bincount(grp, weights=np.concatenate([ma[c], mb[c]]), minlength=n * n) for ma, mb in zip(side_a, side_b)
    )
    r = ratio_ci_moments(G, N, S, SS, SN, NN, conf=0.95, clip=(0.0, 1.0))
    if what == "win_rate":
        vals = r["est"]
    elif what == "games":
        vals = r["den"]
    elif what in ("ci_low", "ci_high"):
        vals = r["lo" if what == "ci_low" else "hi"]
    else:
        vals = (r["hi"] - r["lo"]) / 2.0
    mat = np.asarray(vals, dtype=float).reshape(n, n)
    if what != "games":
        mat[r["den"].reshape(n, n) == 0] = np.nan
    return pd.DataFrame(mat, index=pd.Index(x.bots, name="bot"), columns=pd.Index(x.bots, name="opponent"))


# --- Bradley-Terry ratings ---------------------------------------------------------


def bradley_terry(
    games: Games, anchor: str | None = None, conf: float = 0.95, prior_draws: float = 1.0, method: str = "sandwich"
) -> pd.DataFrame:
    """Bradley-Terry (logistic Elo) ratings of every bot, fitted by maximum likelihood.

    Model: bot i scores against bot j with expected score
    ``1 / (1 + 10 ** (-(elo_i - elo_j) / 400))``; a drawn game counts half a
    win each.  The log-likelihood over all matchups is maximised with
    ``scipy.optimize.minimize`` (trust-exact, analytic gradient and Hessian).
    ``prior_draws`` virtual drawn games are added to every matchup played
    (as BayesElo's prior does), which keeps the fit finite when one bot won
    every game of a matchup and otherwise changes almost nothing.

    Scale and anchor: ratings are Elo points; with ``anchor=None`` they are
    shifted so their mean is 0, else the named bot is 0 (its interval is then
    empty and the others' intervals are relative to it).  The frame's
    ``attrs['anchor']`` says which.

    With the mean anchor, ``elo_se`` is a bot's *quasi* standard error
    (:mod:`arena.analysis.quasi`): the standard error of the difference of two
    ratings is about ``sqrt(se_i**2 + se_j**2)``, within the relative error
    ``attrs['quasi_error']``, so two bots whose intervals do not overlap differ.
    The error of each rating against the mean carried a share of the
    worst-determined bot's: with ``random`` in the field, every bot read
    +-45 Elo on the default run where any two of the others were known to within +-3.

    Interval: ``method="sandwich"`` (default) uses the cluster-robust
    covariance ``H^-1 M H^-1`` clustered on the deal, so the correlation of
    the two games of a duplicate pair, and of a bot's games on one deal
    against different opponents, is accounted for; ``method="fisher"`` uses the
    inverse Fisher information (games taken as independent).  Normal interval
    ``elo +- z * se``.  Both count the prior's virtual games as data.  A bot
    that won (or lost) every game of a matchup has a gap bounded only by the
    prior there: read it as "at least this far apart".

    Columns: bot, elo, elo_se, elo_ci_low, elo_ci_high, games (with a result,
    self-play left out), score (wins + draws / 2), expected (the fitted
    model's expected score over the same games).
    """
    s = summarize(games)
    key = ("bt", anchor, conf, prior_draws, method)
    return _cached(s, key, lambda: _bradley_terry(_M(s), anchor, conf, prior_draws, method))


def fit_bt(
    ia: np.ndarray, ib: np.ndarray, n: np.ndarray, s: np.ndarray, n_bots: int, prior_draws: float = 1.0
) -> np.ndarray:
    """MLE of logistic strengths (natural log-odds units, mean 0) from aggregated results.

    ``ia``, ``ib``: bot indices of each row; ``n`` games and ``s`` score of
    ``ia`` in that row.  Rows with no games are ignored.
    """
    keep = (n > 0) & (ia != ib)
    ia, ib = ia[keep], ib[keep]
    n = n[keep] + prior_draws
    s = s[keep] + prior_draws / 2.0
    if n_bots == 1 or ia.size == 0:
        return np.zeros(n_bots)
    ridge = 1e-6  # keeps a disconnected field's offsets defined (at 0)

    def full(x):
        return np.concatenate([[0.0], x])

    def fun(x):
        th = full(x)
        d = th[ia] - th[ib]
        # -(s log sig(d) + (n - s) log sig(-d))
        f = np.sum(s * np.logaddexp(0.0, -d) + (n - s) * np.logaddexp(0.0, d)) + 0.5 * ridge * np.sum(th * th)
        q = 1.0 / (1.0 + np.exp(-d))
        r = n * q - s
        g = np.bincount(ia, weights=r, minlength=n_bots) - np.bincount(ib, weights=r, minlength=n_bots) + ridge * th
        w = n * q * (1.0 - q)
        H = _laplacian(ia, ib, w, n_bots) + ridge * np.eye(n_bots)
        return f, g[1:], H[1:, 1:]

    cache: dict[str, Any] = {}

    def get(x):
        k = x.tobytes()
        if cache.get("k") != k:
            cache["k"], cache["v"] = k, fun(x)
        return cache["v"]

    from scipy import optimize  # here, not at the top: see arena.analysis.quantiles

    res = optimize.minimize(
        lambda x: get(x)[0],
        np.zeros(n_bots - 1),
        jac=lambda x: get(x)[1],
        hess=lambda x: get(x)[2],
        method="trust-exact",
        options={"gtol": 1e-9},
    )
    th = full(res.x)
    return th - th.mean()


def _laplacian(ia: np.ndarray, ib: np.ndarray, w: np.ndarray, n_bots: int) -> np.ndarray:
    """``sum_k w_k (e_a - e_b)(e_a - e_b)^T``."""
    H = np.zeros((n_bots, n_bots))
    np.add.at(H, (ia, ia), w)
    np.add.at(H, (ib, ib), w)
    np.add.at(H, (ia, ib), -w)
    np.add.at(H, (ib, ia), -w)
    return H


def _bradley_terry(x: _M, anchor: str | None, conf: float, prior_draws: float, method: str) -> pd.DataFrame:
    if method not in ("sandwich", "fisher"):
        raise ValueError(f"unknown interval method '{method}' (sandwich, fisher)")
    c = x.cross
    agg = {k: np.where(c, v, 0.0) for k, v in zip(("G", "n", "s", "ss", "sn", "nn"), x.moments("win"))}
    ia, ib = x.m_a.astype(np.int64), x.m_b.astype(np.int64)
    played = (agg["n"] > 0) & (ia != ib)
    # Only bots with a result against another bot are rated: one seen only in self-play or void games has no
    # likelihood term, and kept in the fit it made the Hessian singular (every interval a point, or ~1e7 Elo
    # wide, when it was the reference removed below) and shifted the mean anchor.
    active = np.zeros(x.n_bots, dtype=bool)
    active[ia[played]] = True
    active[ib[played]] = True
    pos = np.cumsum(active) - 1  # a rated bot's index among the rated
    n = int(active.sum())
    ja, jb = pos[ia[played]], pos[ib[played]]
    th = fit_bt(ja, jb, agg["n"][played], agg["s"][played], n, prior_draws)

    nn = agg["n"][played] + prior_draws
    q = 1.0 / (1.0 + np.exp(-(th[ja] - th[jb])))
    H = _laplacian(ja, jb, nn * q * (1.0 - q), n)
    if method == "sandwich":
        # Clustered on the deal: g_c = sum over the matchups of (s_mc - n_mc q_m)(e_a - e_b), one c per
        # deal (bucket), since every matchup plays the same deals; M = sum_c g_c g_c^T, small-sample
        # factor G / (G - 1).  The prior's virtual draws count as one more cluster per matchup, so a
        # matchup one bot swept keeps an honest (wide) interval instead of ~0.
        nd, sd = x.deal("games")[played], x.deal("score_a")[played]
        resid = sd - nd * q[:, None]  # played matchups x deal buckets
        inc = np.zeros((ja.size, n))
        inc[np.arange(ja.size), ja] = 1.0
        inc[np.arange(ja.size), jb] = -1.0
        g = inc.T @ resid  # bots x deal buckets
        G = float((nd.sum(axis=0) > 0).sum())
        # A matchup whose pairs all scored alike (every pair split, or every game drawn) has residuals of 0:
        # nothing measures how alike a pair's games are, so, as the win rate's interval does, each pair
        # counts as one observation (its score n_c q, variance n_c^2 q (1 - q)), not as nothing.
        s_m, n_m = agg["s"][played], agg["n"][played]
        r_m = s_m / n_m
        within = agg["ss"][played] - 2.0 * r_m * agg["sn"][played] + r_m * r_m * agg["nn"][played]
        flat = within <= 1e-9 * agg["nn"][played]
        floor = np.where(flat, agg["nn"][played] * q * (1.0 - q), 0.0)
        M = (g @ g.T + _laplacian(ja, jb, prior_draws**2 * (0.5 - q) ** 2 + floor, n)) * (G / max(G - 1.0, 1.0))
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    n_comp, group = (
        connected_components(coo_matrix((np.ones(ja.size), (ja, jb)), shape=(n, n)), directed=False)
        if n
        else (0, np.zeros(0, dtype=np.int64))
    )

    if anchor is not None and anchor not in x.bots:
        raise ValueError(f"anchor bot '{anchor}' is not in this run (bots: {', '.join(x.bots)})")
    if anchor is not None and not active[x.bots.index(anchor)]:
        raise ValueError(f"anchor bot '{anchor}' has no result against another bot: it cannot anchor the ratings")
    k = int(pos[x.bots.index(anchor)]) if anchor is not None else 0
    keep = np.arange(n) != k
    cov = np.zeros((n, n))
    if n > 1:
        Hk = H[np.ix_(keep, keep)] + 1e-12 * np.eye(n - 1)
        Hinv = np.linalg.pinv(Hk)
        cov[np.ix_(keep, keep)] = Hinv @ M[np.ix_(keep, keep)] @ Hinv if method == "sandwich" else Hinv
    quasi_error = 0.0
    if anchor is None:  # no bot is the reference: each bot's share of every difference's uncertainty
        elo = th * ELO_K
        qv, quasi_error = quasi_variances(cov, group)
        se = np.sqrt(qv) * ELO_K
    else:
        elo = (th - th[k]) * ELO_K
        se = np.sqrt(np.clip(np.diag(cov), 0.0, None)) * ELO_K
        se[k] = 0.0
    z = normal_quantile(conf)
    th_all = np.zeros(x.n_bots)
    th_all[active] = th
    elo_all, se_all = np.full(x.n_bots, np.nan), np.full(x.n_bots, np.nan)
    elo_all[active], se_all[active] = elo, se
    qa = 1.0 / (1.0 + np.exp(-(th_all[ia] - th_all[ib])))
    out = pd.DataFrame(
        {
            "bot": x.bots,
            "elo": elo_all,
            "elo_se": se_all,
            "elo_ci_low": elo_all - z * se_all,
            "elo_ci_high": elo_all + z * se_all,
            "games": x.per_bot(agg["n"], agg["n"]).astype(np.int64),
            "score": x.per_bot(agg["s"], agg["n"] - agg["s"]),
            "expected": x.per_bot(agg["n"] * qa, agg["n"] * (1.0 - qa)),
        }
    )
    out = out[out["games"] > 0].reset_index(drop=True) if (out["games"] > 0).any() else out
    out.attrs["anchor"] = anchor if anchor is not None else "mean"
    out.attrs["components"] = int(n_comp)
    out.attrs["method"] = method
    out.attrs["prior_draws"] = prior_draws
    out.attrs["quasi_error"] = quasi_error
    return out


def leaderboard(
    games: Games, hands: pd.DataFrame | None = None, anchor: str | None = None, conf: float = 0.95
) -> pd.DataFrame:
    """Ratings and per-bot statistics in one table, best first.

    Columns: rank, then :func:`bradley_terry`'s (bot, elo, elo_se, elo_ci_low,
    elo_ci_high) followed by every column of :func:`bot_stats`.
    ``attrs['anchor']`` names the rating anchor.
    """
    s = summarize(games, hands)
    bt = bradley_terry(s, anchor=anchor, conf=conf)
    bs = bot_stats(s, conf=conf)
    out = bt[["bot", "elo", "elo_se", "elo_ci_low", "elo_ci_high"]].merge(bs, on="bot", how="outer")
    out = out.sort_values(["elo", "win_rate"], ascending=False, na_position="last").reset_index(drop=True)
    out.insert(0, "rank", np.arange(1, len(out) + 1))
    out.attrs.update(bt.attrs)
    return out


# --- seat / first-mover effect ------------------------------------------------------


def first_mover(games: Games, conf: float = 0.95) -> pd.DataFrame:
    """The non-dealer's edge: per matchup and over the run (last row, matchup "all", clustered on the deal).

    The non-dealer is offered the upcard first and so moves first.

    Columns: matchup, decided_hands (hands someone won), nondealer_wins,
    nondealer_share = nondealer_wins / decided_hands with a pair-clustered
    interval (ci_low, ci_high); games (with a winner), first_nondealer_wins
    (games won by the seat that did not deal the first hand),
    first_nondealer_share with game_ci_low, game_ci_high.
    """
    s = summarize(games)
    return _cached(s, ("first_mover", conf), lambda: _first_mover(_M(s), conf))


def _run_share(x: _M, num: str, den: str, conf: float) -> dict[str, np.ndarray]:
    """A share over the whole run (one row), clustered on the deal: every matchup plays the same deals."""
    deals = x.deal_pairs.max() if x.n_m else 0.0
    return _deal_ci(x.deal(num).sum(axis=0)[None], x.deal(den).sum(axis=0)[None], deals, conf, clip=(0.0, 1.0))


def _first_mover(x: _M, conf: float) -> pd.DataFrame:
    rows = []
    per_matchup = (
        ratio_ci_moments(*x.moments("nondealer"), conf=conf, clip=(0.0, 1.0)),
        ratio_ci_moments(*x.moments("first_nondealer"), conf=conf, clip=(0.0, 1.0)),
    )
    run = (_run_share(x, "nondealer_won", "decided", conf), _run_share(x, "first_nondealer_won", "first_games", conf))
    for names, agg, (h, g) in (
        (x.matchups, lambda v: v, per_matchup),
        (["all"], lambda v: np.array([v.sum()]), run),
    ):
        rows.append(
            pd.DataFrame(
                {
                    "matchup": names,
                    "decided_hands": h["den"].astype(np.int64),
                    "nondealer_wins": agg(x.nondealer_won).astype(np.int64),
                    "nondealer_share": h["est"],
                    "ci_low": h["lo"],
                    "ci_high": h["hi"],
                    "games": g["den"].astype(np.int64),
                    "first_nondealer_wins": agg(x.first_nondealer_won).astype(np.int64),
                    "first_nondealer_share": g["est"],
                    "game_ci_low": g["lo"],
                    "game_ci_high": g["hi"],
                }
            )
        )
    return pd.concat(rows, ignore_index=True)


# --- convergence ------------------------------------------------------------------------


def convergence(games: Games, conf: float = 0.95, points: int = 200) -> pd.DataFrame:
    """Running win rate of ``bot_a`` per matchup as pairs are played, with its interval.

    Pairs are taken in pair-number order (the order they are played in);
    each row is the state after ``pairs`` pairs with a result.  The summary
    keeps the state at fixed pair numbers (:data:`arena.analysis.summary.LADDER`:
    every pair up to 52, then 100 per decade) and after the last pair; of
    those, at most ``points`` rows per matchup are shown, spread evenly on a
    log scale (the last pair always included).  The rows do not depend on
    how the run was cut into chunks.

    Columns: matchup, pairs, games, win_rate, ci_low, ci_high (pair-clustered t).
    """
    s = summarize(games)
    return _cached(s, ("convergence", conf, points), lambda: _convergence(s, conf, points))


def _pick_log_spaced(G: np.ndarray, points: int) -> np.ndarray:
    """Indices of at most ``points`` of the increasing positions ``G``, evenly spread in log, last included."""
    if G.size <= points:
        return np.arange(G.size)
    lg = np.log(G)
    t = np.linspace(lg[0], lg[-1], points)
    i = np.clip(np.searchsorted(lg, t), 1, G.size - 1)
    i = np.where(np.abs(lg[i - 1] - t) <= np.abs(lg[i] - t), i - 1, i)
    return np.unique(np.r_[i, G.size - 1])


def _convergence(s: Summary, conf: float, points: int) -> pd.DataFrame:
    parts = []
    for name in s.matchups:
        R = s.running(name)
        if not R.size:
            continue
        R = R[_pick_log_spaced(R[:, 0], points)]
        G, N, S, SS, SN, NN = R.T
        r = ratio_ci_moments(G, N, S, SS, SN, NN, conf, clip=(0.0, 1.0))
        parts.append(
            pd.DataFrame(
                {
                    "matchup": name,
                    "pairs": G.astype(np.int64),
                    "games": N.astype(np.int64),
                    "win_rate": r["est"],
                    "ci_low": r["lo"],
                    "ci_high": r["hi"],
                }
            )
        )
    if not parts:
        return pd.DataFrame({"matchup": [], "pairs": [], "games": [], "win_rate": [], "ci_low": [], "ci_high": []})
    return pd.concat(parts, ignore_index=True)


# --- hands seen per bot ----------------------------------------------------------------


def hand_results(games: pd.DataFrame, hands: pd.DataFrame) -> pd.DataFrame:
    """Every hand twice, once from each bot's side (tables only: a Summary keeps no hands).

    For a notebook look at one chunk or a small run; the report uses the
    Summary's per-bot histograms instead.

    Columns: game_id, hand, bot, opponent, result (won / lost / none: dead,
    capped or forfeit), outcome, points (points this bot scored if it won,
    points it conceded if it lost, 0 otherwise), turns.  Hands whose game is
    not in ``games`` are dropped.
    """
    if isinstance(games, Summary):
        raise TypeError("hand_results needs the games and hands tables, not a Summary")
    d = decode(games)
    key = "game_id" if "game_id" in hands.columns else "game"
    pos = pd.Index(d.gid).get_indexer(hands[key].to_numpy())
    ok = pos >= 0
    pos = pos[ok]
    h = hands.loc[ok] if not ok.all() else hands
    win_seat, wpts = hand_winners(h)
    swap = d.swap[pos]
    seat_bot = (np.where(swap, d.b[pos], d.a[pos]), np.where(swap, d.a[pos], d.b[pos]))
    turns = h["turns"].to_numpy() if "turns" in h.columns else np.zeros(len(h))
    frames = []
    for seat in (0, 1):
        res = np.where(win_seat == seat, "won", np.where(win_seat == 1 - seat, "lost", "none"))
        frames.append(
            pd.DataFrame(
                {
                    "game_id": d.gid[pos],
                    "hand": h["hand"].to_numpy() if "hand" in h.columns else 0,
                    "bot": pd.Categorical.from_codes(seat_bot[seat], categories=d.bots),
                    "opponent": pd.Categorical.from_codes(seat_bot[1 - seat], categories=d.bots),
                    "result": pd.Categorical(res, categories=["won", "lost", "none"]),
                    "outcome": pd.Categorical(h["outcome"]),
                    "points": wpts,
                    "turns": turns,
                }
            )
        )
    return pd.concat(frames, ignore_index=True)
