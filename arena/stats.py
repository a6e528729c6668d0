"""Statistics of a tournament run: win rates, ratings, play style, seat effects.

Every public function takes the run's ``games`` table (one row per game, the
schema of ``games.parquet``; see :mod:`arena.report`) and, where it helps,
the optional ``hands`` table, and returns a :class:`pandas.DataFrame` whose
columns are listed in the function's docstring.  ``games`` may also be a
:class:`Prepared` (from :func:`prepare`): the report prepares the table once
and every function then reuses the decoded arrays and caches its result.

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
  score in {0, .25, .5, .75, 1}).
* **Elo scale.**  ``elo = 400 * log10(p / (1 - p))`` for an expected score
  ``p`` (logistic Elo, as in chess testing).
* **Self-play.**  Games where ``bot_a == bot_b`` appear in :func:`pair_stats`
  but are left out of everything per bot (they say nothing about a bot
  against the field and would count its hands twice).
* Per-seat game columns end in 0/1 (the seat); ``swap`` says which seat
  ``bot_a`` had (0: seat 0).  Everything here maps seats to bots with it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from scipy import optimize
from scipy import stats as sps
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

ELO_K = 400.0 / np.log(10.0)  # Elo points per unit of the logistic scale (natural log odds)
WIN_KINDS = ("knock", "undercut", "gin", "big_gin")

__all__ = [
    "ELO_K",
    "Prepared",
    "prepare",
    "elo_from_score",
    "score_from_elo",
    "ratio_ci",
    "pair_stats",
    "bot_stats",
    "bradley_terry",
    "fit_bt",
    "leaderboard",
    "first_mover",
    "outcome_mix",
    "win_matrix",
    "convergence",
    "hand_results",
]


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
    out[ok] = sps.t.ppf(0.5 + conf / 2.0, df[ok])
    return out


def ratio_ci(num: np.ndarray, den: np.ndarray, group: np.ndarray, n_groups: int, conf: float = 0.95,
             clip: tuple[float, float] | None = None) -> dict[str, np.ndarray]:
    """Cluster-robust ratio estimate ``sum(num) / sum(den)`` per group, with a t interval.

    ``num``, ``den`` and ``group`` have one entry per *cluster* (e.g. the total
    score and the number of games of a duplicate pair, and the matchup the
    pair belongs to).  Returns arrays of length ``n_groups``: ``est``, ``se``,
    ``lo``, ``hi``, ``clusters`` and ``den`` (the summed denominators).
    Groups with fewer than two clusters get a nan interval.
    """
    num = np.asarray(num, dtype=float)
    den = np.asarray(den, dtype=float)
    G = np.bincount(group, minlength=n_groups).astype(float)
    N = np.bincount(group, weights=den, minlength=n_groups)
    S = np.bincount(group, weights=num, minlength=n_groups)
    with np.errstate(divide="ignore", invalid="ignore"):
        est = S / N
        r = num - est[group] * den
        var = np.bincount(group, weights=r * r, minlength=n_groups) / (N * N) * G / (G - 1.0)
        se = np.sqrt(var)
    se[G < 2] = np.nan
    half = _tq(conf, G - 1.0) * se
    lo, hi = est - half, est + half
    if clip is not None:
        lo, hi = np.clip(lo, *clip), np.clip(hi, *clip)
    return {"est": est, "se": se, "lo": lo, "hi": hi, "clusters": G, "den": N}


def _codes(col: pd.Series, names: list[str]) -> np.ndarray:
    """Integer codes of a string/categorical column in ``names`` (-1 for others, e.g. "")."""
    if isinstance(col.dtype, pd.CategoricalDtype):
        codes = col.cat.codes.to_numpy()
        uniq = col.cat.categories.astype(str)
    else:
        codes, uniq = pd.factorize(col, use_na_sentinel=True)
        uniq = pd.Index(uniq).astype(str)
    lut = np.append(pd.Index(names).get_indexer(uniq), -1).astype(np.int32)  # code -1 -> last entry (-1)
    return lut[codes]


def _nonempty(col: pd.Series) -> np.ndarray:
    """Per row: the text is not empty (and not missing); fast for categoricals."""
    if isinstance(col.dtype, pd.CategoricalDtype):
        lut = np.append(np.asarray(col.cat.categories.astype(str)) != "", False)
        return lut[col.cat.codes.to_numpy()]
    return (col.fillna("").astype(str) != "").to_numpy(dtype=bool)


def _uniques(col: pd.Series) -> list[str]:
    if isinstance(col.dtype, pd.CategoricalDtype):
        return [str(c) for c in col.cat.remove_unused_categories().cat.categories]
    return [str(x) for x in pd.unique(col.astype(object))]


# --- the prepared table -------------------------------------------------------------


@dataclass
class Prepared:
    """A games table decoded once into numpy arrays (seats mapped to bots).

    Build with :func:`prepare`.  ``games`` keeps the original frame (the
    columns per seat are read from it on demand by :meth:`side`).
    """

    games: pd.DataFrame
    bots: list[str]  # every bot, sorted
    matchups: list[str]  # every matchup, sorted
    m_a: np.ndarray  # per matchup: code of bot_a
    m_b: np.ndarray  # per matchup: code of bot_b
    mcode: np.ndarray  # per game: matchup code
    a: np.ndarray  # per game: bot_a code
    b: np.ndarray  # per game: bot_b code
    swap: np.ndarray  # per game: bool, bot_a sits in seat 1
    res_a: np.ndarray  # per game: bot_a's score 1 / 0.5 / 0 (nan for void games)
    valid: np.ndarray  # per game: has a result
    err: np.ndarray  # per game: error text not empty
    cluster: np.ndarray  # per game: dense cluster id of (matchup, pair)
    c_m: np.ndarray  # per cluster: matchup code
    c_first: np.ndarray  # per cluster: smallest game order key (to order pairs in time)
    order: np.ndarray  # per game: play order key (game_id if present)
    cache: dict = field(default_factory=dict, repr=False)
    _sides: dict = field(default_factory=dict, repr=False)

    @property
    def n_games(self) -> int:
        return int(self.mcode.shape[0])

    @property
    def n_clusters(self) -> int:
        return int(self.c_m.shape[0])

    @property
    def cross(self) -> np.ndarray:
        """Per game: the two bots differ (not self-play)."""
        return self.a != self.b

    def has(self, col: str) -> bool:
        return col in self.games.columns

    def col(self, name: str, dtype=np.float64) -> np.ndarray:
        """A shared (not per-seat) game column as an array (zeros if absent)."""
        if name not in self.games.columns:
            return np.zeros(self.n_games, dtype=dtype)
        return self.games[name].to_numpy(dtype=dtype, na_value=0)

    def side(self, base: str) -> tuple[np.ndarray, np.ndarray]:
        """``(value for bot_a, value for bot_b)`` of the per-seat column pair ``base0``/``base1``."""
        hit = self._sides.get(base)
        if hit is None:
            if f"{base}0" in self.games.columns:
                x0 = self.games[f"{base}0"].to_numpy(dtype=np.float64, na_value=0)
                x1 = self.games[f"{base}1"].to_numpy(dtype=np.float64, na_value=0)
            else:
                x0 = x1 = np.zeros(self.n_games)
            hit = (np.where(self.swap, x1, x0), np.where(self.swap, x0, x1))
            self._sides[base] = hit
        return hit


def prepare(games: pd.DataFrame | Prepared) -> Prepared:
    """Decode a games table once (bots, matchups, seats, results, pair clusters)."""
    if isinstance(games, Prepared):
        return games
    g = games
    if len(g) == 0:
        raise ValueError("the games table is empty")
    for col in ("bot_a", "bot_b"):
        if col not in g.columns:
            raise ValueError(f"the games table has no '{col}' column")
    bots = sorted(set(_uniques(g["bot_a"])) | set(_uniques(g["bot_b"])))
    a = _codes(g["bot_a"], bots)
    b = _codes(g["bot_b"], bots)
    if "matchup" in g.columns:
        matchups = sorted(_uniques(g["matchup"]))
        mcode = _codes(g["matchup"], matchups)
    else:
        key = a.astype(np.int64) * len(bots) + b
        uk, mcode = np.unique(key, return_inverse=True)
        matchups = [f"{bots[k // len(bots)]} vs {bots[k % len(bots)]}" for k in uk]
        mcode = mcode.astype(np.int32)
    n_m = len(matchups)
    first = np.full(n_m, -1, dtype=np.int64)
    idx = np.arange(len(g))[::-1]
    first[mcode[idx]] = idx  # smallest index of each matchup wins
    m_a, m_b = a[first], b[first]

    if "swap" in g.columns:
        swap = g["swap"].to_numpy(dtype=np.int8, na_value=0) != 0
    elif "bot0" in g.columns:
        swap = _codes(g["bot0"], bots) != a
    else:
        swap = np.zeros(len(g), dtype=bool)

    err = np.zeros(len(g), dtype=bool)
    if "error" in g.columns:
        err = _nonempty(g["error"])

    if "winner" in g.columns:
        w = _codes(g["winner"], bots)
        res_a = np.where(w == a, 1.0, np.where(w == b, 0.0, 0.5))
        none = w < 0
    else:
        ws = g["winner_seat"].to_numpy(dtype=np.int64)
        res_a = np.where(ws < 0, 0.5, np.where(ws == swap.astype(np.int64), 1.0, 0.0))
        none = ws < 0
    if "winner_seat" in g.columns:  # self-play: the name cannot tell the seats apart
        ws = g["winner_seat"].to_numpy(dtype=np.int64)
        selfp = a == b
        res_a = np.where(selfp, np.where(ws < 0, 0.5, np.where(ws == swap.astype(np.int64), 1.0, 0.0)), res_a)
    valid = ~(err & none)
    res_a = np.where(valid, res_a, np.nan)

    order = g["game_id"].to_numpy(dtype=np.int64) if "game_id" in g.columns else np.arange(len(g), dtype=np.int64)
    if "pair" in g.columns:
        pair = g["pair"].to_numpy(dtype=np.int64)
        key = mcode.astype(np.int64) * (int(pair.max()) + 1 - min(0, int(pair.min()))) + (pair - min(0, int(pair.min())))
        ukey, cluster = np.unique(key, return_inverse=True)
        cluster = cluster.astype(np.int64)
    else:  # no pairs recorded: every game is its own cluster
        cluster = np.arange(len(g), dtype=np.int64)
        ukey = cluster
    n_c = ukey.shape[0]
    c_m = np.zeros(n_c, dtype=np.int32)
    c_m[cluster] = mcode
    c_first = np.full(n_c, np.iinfo(np.int64).max, dtype=np.int64)
    _min_at(c_first, cluster, order)
    return Prepared(g, bots, matchups, m_a, m_b, mcode, a, b, swap, res_a, valid, err, cluster, c_m, c_first, order)


def _min_at(out: np.ndarray, idx: np.ndarray, val: np.ndarray) -> None:
    """``np.minimum.at`` for large inputs (sort once instead of unbuffered ufunc.at)."""
    o = np.lexsort((val, idx))
    i, v = idx[o], val[o]
    head = np.ones(i.shape[0], dtype=bool)
    head[1:] = i[1:] != i[:-1]
    out[i[head]] = np.minimum(out[i[head]], v[head])


def _cached(p: Prepared, key: tuple, build) -> pd.DataFrame:
    hit = p.cache.get(key)
    if hit is None:
        hit = build()
        p.cache[key] = hit
    return hit.copy()


# --- per pair (matchup) -------------------------------------------------------------


def pair_stats(games: pd.DataFrame | Prepared, conf: float = 0.95) -> pd.DataFrame:
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
    p = prepare(games)
    return _cached(p, ("pair_stats", conf), lambda: _pair_stats(p, conf))


def _pair_stats(p: Prepared, conf: float) -> pd.DataFrame:
    n_m, n_c = len(p.matchups), p.n_clusters
    v = p.valid
    vf = v.astype(float)
    res = np.where(v, p.res_a, 0.0)
    cl = p.cluster
    c_n = np.bincount(cl, weights=vf, minlength=n_c)
    c_s = np.bincount(cl, weights=res, minlength=n_c)
    has = c_n > 0
    wr = ratio_ci(c_s[has], c_n[has], p.c_m[has], n_m, conf, clip=(0.0, 1.0))

    sa, sb = p.side("score")
    margin = np.where(v, sa - sb, 0.0)
    c_mg = np.bincount(cl, weights=margin, minlength=n_c)
    mg = ratio_ci(c_mg[has], c_n[has], p.c_m[has], n_m, conf)
    msq = np.bincount(p.mcode, weights=margin * margin, minlength=n_m)
    games_m = np.bincount(p.mcode, weights=vf, minlength=n_m)
    with np.errstate(invalid="ignore", divide="ignore"):
        margin_sd = np.sqrt(np.maximum(msq / games_m - mg["est"] ** 2, 0.0) * games_m / (games_m - 1))

    wins_a = np.bincount(p.mcode, weights=(res == 1.0) & v, minlength=n_m)
    wins_b = np.bincount(p.mcode, weights=(res == 0.0) & v, minlength=n_m)
    draws = np.bincount(p.mcode, weights=(res == 0.5) & v, minlength=n_m)
    complete = c_n == 2
    sweep_a = complete & (c_s == 2.0)
    sweep_b = complete & (c_s == 0.0)
    sweeps_a = np.bincount(p.c_m, weights=sweep_a, minlength=n_m).astype(np.int64)
    sweeps_b = np.bincount(p.c_m, weights=sweep_b, minlength=n_m).astype(np.int64)
    n_complete = np.bincount(p.c_m, weights=complete, minlength=n_m).astype(np.int64)
    sign_p = np.array([sps.binomtest(int(x), int(x + y), 0.5).pvalue if x + y > 0 else np.nan
                       for x, y in zip(sweeps_a, sweeps_b)])
    fa = fb = np.zeros(n_m)
    if p.has("forfeit_seat"):
        fs = p.col("forfeit_seat", np.int64)
        seat_a = p.swap.astype(np.int64)
        fa = np.bincount(p.mcode, weights=(fs >= 0) & (fs == seat_a), minlength=n_m)
        fb = np.bincount(p.mcode, weights=(fs >= 0) & (fs != seat_a), minlength=n_m)
    out = pd.DataFrame({
        "matchup": p.matchups,
        "bot_a": [p.bots[i] for i in p.m_a],
        "bot_b": [p.bots[i] for i in p.m_b],
        "games": games_m.astype(np.int64),
        "pairs": wr["clusters"].astype(np.int64),
        "complete_pairs": n_complete,
        "errors": np.bincount(p.mcode, weights=p.err, minlength=n_m).astype(np.int64),
        "forfeits_a": fa.astype(np.int64),
        "forfeits_b": fb.astype(np.int64),
        "wins_a": wins_a.astype(np.int64),
        "wins_b": wins_b.astype(np.int64),
        "draws": draws.astype(np.int64),
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
    })
    return out


# --- per bot --------------------------------------------------------------------------


def _per_bot(p: Prepared, xa: np.ndarray, xb: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Sum of a per-game quantity over each bot's games (its own side's value)."""
    n = len(p.bots)
    return (np.bincount(p.a[mask], weights=xa[mask], minlength=n)
            + np.bincount(p.b[mask], weights=xb[mask], minlength=n))


def _per_bot_ci(p: Prepared, xa: np.ndarray, xb: np.ndarray, da: np.ndarray, db: np.ndarray,
                mask: np.ndarray, conf: float, clip=None) -> dict[str, np.ndarray]:
    """Pair-clustered ratio ``sum x / sum d`` per bot (x, d per game, for each side)."""
    n_c = p.n_clusters
    cl = p.cluster[mask]
    parts_num, parts_den, parts_grp = [], [], []
    for x, d, who in ((xa, da, p.m_a), (xb, db, p.m_b)):
        c_x = np.bincount(cl, weights=x[mask], minlength=n_c)
        c_d = np.bincount(cl, weights=d[mask], minlength=n_c)
        keep = c_d > 0
        parts_num.append(c_x[keep])
        parts_den.append(c_d[keep])
        parts_grp.append(who[p.c_m[keep]])
    return ratio_ci(np.concatenate(parts_num), np.concatenate(parts_den), np.concatenate(parts_grp),
                    len(p.bots), conf, clip)


def bot_stats(games: pd.DataFrame | Prepared, hands: pd.DataFrame | None = None, conf: float = 0.95) -> pd.DataFrame:
    """One row per bot: results against the field and play style (self-play left out).

    Columns (``_ci_low``/``_ci_high``: pair-clustered interval at ``conf``):
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
      With ``hands``: points_per_hand_won (mean points in hands it won),
      points_per_hand_lost (mean points conceded in hands it lost).
    """
    p = prepare(games)
    key = ("bot_stats", conf, None if hands is None else (id(hands), len(hands)))
    return _cached(p, key, lambda: _bot_stats(p, hands, conf))


def _bot_stats(p: Prepared, hands: pd.DataFrame | None, conf: float) -> pd.DataFrame:
    n = len(p.bots)
    cross = p.cross
    v = p.valid & cross
    res_a = np.where(v, p.res_a, 0.0)
    res_b = np.where(v, 1.0 - p.res_a, 0.0)
    one = v.astype(float)
    games = _per_bot(p, one, one, v)
    wins = _per_bot(p, (res_a == 1.0) * one, (res_b == 1.0) * one, v)
    losses = _per_bot(p, (res_a == 0.0) * one, (res_b == 0.0) * one, v)
    draws = games - wins - losses
    wr = _per_bot_ci(p, res_a, res_b, one, one, v, conf, clip=(0.0, 1.0))

    m = cross  # play style: every cross game played (forfeits included)
    hh = p.col("hands")
    turns = p.col("turns")
    sa, sb = p.side("score")
    pts = _per_bot_ci(p, sa, sb, hh, hh, m, conf)
    n_hands = _per_bot(p, hh, hh, m)
    won = {k: p.side(f"{k}_wins") for k in WIN_KINDS}
    own = {k: _per_bot(p, won[k][0], won[k][1], m) for k in WIN_KINDS}
    opp = {k: _per_bot(p, won[k][1], won[k][0], m) for k in WIN_KINDS}
    dead = _per_bot(p, p.col("dead"), p.col("dead"), m)
    capped = _per_bot(p, p.col("capped"), p.col("capped"), m)
    forfeits = np.zeros(n)
    if p.has("forfeit_seat"):
        fs = p.col("forfeit_seat", np.int64)
        seat_a = p.swap.astype(np.int64)
        forfeits = _per_bot(p, ((fs >= 0) & (fs == seat_a)).astype(float), ((fs >= 0) & (fs != seat_a)).astype(float), m)
    kd_a, kd_b = p.side("knock_deadwood")
    knock_dw = _per_bot(p, kd_a, kd_b, m)
    knocks = own["knock"] + opp["undercut"]
    pk_a, pk_b = p.side("pickups")
    ds_a, ds_b = p.side("discards")
    taken_from = _per_bot(p, pk_b, pk_a, m)  # opponent's pickups of this bot's discards
    own_disc = _per_bot(p, ds_a, ds_b, m)
    took = _per_bot(p, pk_a, pk_b, m)
    opp_disc = _per_bot(p, ds_b, ds_a, m)
    margin = _per_bot(p, np.where(v, sa - sb, 0.0), np.where(v, sb - sa, 0.0), v)
    opponents = np.zeros(n, dtype=np.int64)
    mg = np.unique(np.concatenate([p.a[cross].astype(np.int64) * n + p.b[cross], p.b[cross].astype(np.int64) * n + p.a[cross]]))
    np.add.at(opponents, mg // n, 1)

    with np.errstate(divide="ignore", invalid="ignore"):
        out = pd.DataFrame({
            "bot": p.bots,
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
            "conceded_per_hand": _per_bot(p, sb, sa, m) / n_hands,
            "hand_win_rate": sum(own.values()) / n_hands,
            "knock_rate": own["knock"] / n_hands,
            "undercut_won_rate": own["undercut"] / n_hands,
            "gin_rate": own["gin"] / n_hands,
            "big_gin_rate": own["big_gin"] / n_hands,
            "undercut_suffered_rate": opp["undercut"] / n_hands,
            "dead_rate": dead / n_hands,
            "capped_rate": capped / n_hands,
            "forfeit_rate": forfeits / n_hands,
            "knocks_per_hand": knocks / n_hands,
            "knock_deadwood": knock_dw / knocks,
            "turns_per_hand": _per_bot(p, turns, turns, m) / n_hands,
            "discard_take_rate": taken_from / own_disc,
            "pickup_rate": took / opp_disc,
        })
    if hands is not None and len(hands):
        hr = hand_results(p, hands)
        hr = hr[hr["bot"] != hr["opponent"]]
        wonh = hr[hr["result"] == "won"].groupby("bot", observed=True)["points"].mean()
        losth = hr[hr["result"] == "lost"].groupby("bot", observed=True)["points"].mean()
        out["points_per_hand_won"] = out["bot"].map(wonh).astype(float)
        out["points_per_hand_lost"] = out["bot"].map(losth).astype(float)
    return out[out["games"] > 0].reset_index(drop=True) if (out["games"] > 0).any() else out


def outcome_mix(games: pd.DataFrame | Prepared) -> pd.DataFrame:
    """How each bot's hands ended, as shares of the hands it played (rows sum to ~1).

    Columns: bot, hands, then won_knock, won_undercut, won_gin, won_big_gin,
    lost_knock, lost_undercut (its knock was undercut), lost_gin, lost_big_gin,
    dead, capped, forfeit (a hand ended by either bot's forfeit).
    Self-play is left out.
    """
    p = prepare(games)
    return _cached(p, ("outcome_mix",), lambda: _outcome_mix(p))


def _outcome_mix(p: Prepared) -> pd.DataFrame:
    m = p.cross
    hh = p.col("hands")
    n_hands = _per_bot(p, hh, hh, m)
    cols: dict[str, Any] = {"bot": p.bots, "hands": n_hands.astype(np.int64)}
    won = {k: p.side(f"{k}_wins") for k in WIN_KINDS}
    with np.errstate(divide="ignore", invalid="ignore"):
        for k in WIN_KINDS:
            cols[f"won_{k}"] = _per_bot(p, won[k][0], won[k][1], m) / n_hands
        for k in WIN_KINDS:
            cols[f"lost_{k}"] = _per_bot(p, won[k][1], won[k][0], m) / n_hands
        cols["dead"] = _per_bot(p, p.col("dead"), p.col("dead"), m) / n_hands
        cols["capped"] = _per_bot(p, p.col("capped"), p.col("capped"), m) / n_hands
        f = (p.col("forfeit_seat", np.int64) >= 0).astype(float) if p.has("forfeit_seat") else np.zeros(p.n_games)
        cols["forfeit"] = _per_bot(p, f, f, m) / n_hands
    out = pd.DataFrame(cols)
    return out[out["hands"] > 0].reset_index(drop=True)


def win_matrix(games: pd.DataFrame | Prepared, what: str = "win_rate") -> pd.DataFrame:
    """Bots x bots: ``what`` of the row bot against the column bot (nan if they never met).

    ``what`` is ``win_rate`` (score share, draws half), ``games``, or
    ``half_width`` (half the width of the pair-clustered 95% interval).
    Both orientations of a matchup are merged.  Self-play is left out.
    """
    p = prepare(games)
    return _cached(p, ("win_matrix", what), lambda: _win_matrix(p, what))


def _win_matrix(p: Prepared, what: str) -> pd.DataFrame:
    n = len(p.bots)
    v = p.valid & p.cross
    res = np.where(v, p.res_a, 0.0)
    n_c = p.n_clusters
    c_n = np.bincount(p.cluster, weights=v, minlength=n_c)
    c_s = np.bincount(p.cluster, weights=res, minlength=n_c)
    keep = c_n > 0
    ca, cb = p.m_a[p.c_m[keep]], p.m_b[p.c_m[keep]]
    # each cluster counts once for (a, b) with a's score and once for (b, a) with b's
    grp = np.concatenate([ca.astype(np.int64) * n + cb, cb.astype(np.int64) * n + ca])
    num = np.concatenate([c_s[keep], c_n[keep] - c_s[keep]])
    den = np.concatenate([c_n[keep], c_n[keep]])
    r = ratio_ci(num, den, grp, n * n, 0.95)
    if what == "win_rate":
        vals = r["est"]
    elif what == "games":
        vals = r["den"]
    elif what == "half_width":
        vals = (r["hi"] - r["lo"]) / 2.0
    else:
        raise ValueError(f"unknown matrix '{what}' (win_rate, games, half_width)")
    mat = np.asarray(vals, dtype=float).reshape(n, n)
    if what != "games":
        mat[r["den"].reshape(n, n) == 0] = np.nan
    return pd.DataFrame(mat, index=pd.Index(p.bots, name="bot"), columns=pd.Index(p.bots, name="opponent"))


# --- Bradley-Terry ratings ---------------------------------------------------------


def bradley_terry(games: pd.DataFrame | Prepared, anchor: str | None = None, conf: float = 0.95,
                  prior_draws: float = 1.0, method: str = "sandwich") -> pd.DataFrame:
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

    Interval: ``method="sandwich"`` (default) uses the cluster-robust
    (pair-clustered) covariance ``H^-1 M H^-1``, so the correlation of the two
    games of a duplicate pair is accounted for; ``method="fisher"`` uses the
    inverse Fisher information (games taken as independent).  Normal interval
    ``elo +- z * se``.  Both count the prior's virtual games as data.  A bot
    that won (or lost) every game of a matchup has a gap bounded only by the
    prior there: read it as "at least this far apart".

    Columns: bot, elo, elo_se, elo_ci_low, elo_ci_high, games (with a result,
    self-play left out), score (wins + draws / 2), expected (the fitted
    model's expected score over the same games).
    """
    p = prepare(games)
    key = ("bt", anchor, conf, prior_draws, method)
    return _cached(p, key, lambda: _bradley_terry(p, anchor, conf, prior_draws, method))


def _bt_aggregate(p: Prepared) -> dict[str, np.ndarray]:
    """Per matchup (cross only): games, bot_a's score and cluster sums for the sandwich."""
    n_m, n_c = len(p.matchups), p.n_clusters
    v = p.valid & p.cross
    res = np.where(v, p.res_a, 0.0)
    c_n = np.bincount(p.cluster, weights=v, minlength=n_c)
    c_s = np.bincount(p.cluster, weights=res, minlength=n_c)
    keep = c_n > 0
    cm = p.c_m[keep]
    c_n, c_s = c_n[keep], c_s[keep]
    return {
        "n": np.bincount(cm, weights=c_n, minlength=n_m),
        "s": np.bincount(cm, weights=c_s, minlength=n_m),
        "ss": np.bincount(cm, weights=c_s * c_s, minlength=n_m),
        "sn": np.bincount(cm, weights=c_s * c_n, minlength=n_m),
        "nn": np.bincount(cm, weights=c_n * c_n, minlength=n_m),
        "G": np.bincount(cm, minlength=n_m).astype(float),
    }


def fit_bt(ia: np.ndarray, ib: np.ndarray, n: np.ndarray, s: np.ndarray, n_bots: int,
           prior_draws: float = 1.0) -> np.ndarray:
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

    res = optimize.minimize(lambda x: get(x)[0], np.zeros(n_bots - 1), jac=lambda x: get(x)[1],
                            hess=lambda x: get(x)[2], method="trust-exact", options={"gtol": 1e-9})
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


def _bradley_terry(p: Prepared, anchor: str | None, conf: float, prior_draws: float, method: str) -> pd.DataFrame:
    if method not in ("sandwich", "fisher"):
        raise ValueError(f"unknown interval method '{method}' (sandwich, fisher)")
    n = len(p.bots)
    agg = _bt_aggregate(p)
    ia, ib = p.m_a.astype(np.int64), p.m_b.astype(np.int64)
    played = (agg["n"] > 0) & (ia != ib)
    th = fit_bt(ia, ib, agg["n"], agg["s"], n, prior_draws)

    ia, ib = ia[played], ib[played]
    nn = agg["n"][played] + prior_draws
    q = 1.0 / (1.0 + np.exp(-(th[ia] - th[ib])))
    H = _laplacian(ia, ib, nn * q * (1.0 - q), n)
    if method == "sandwich":
        # sum over clusters of (s_c - n_c q)^2, per matchup; small-sample factor G / (G - 1).
        # The prior's virtual draws count as one more cluster per matchup, so a
        # matchup one bot swept keeps an honest (wide) interval instead of ~0.
        rr = agg["ss"][played] - 2.0 * q * agg["sn"][played] + q * q * agg["nn"][played]
        rr = rr + prior_draws ** 2 * (0.5 - q) ** 2
        G = agg["G"][played].sum()
        M = _laplacian(ia, ib, rr * (G / max(G - 1.0, 1.0)), n)
    n_comp = connected_components(coo_matrix((np.ones(ia.size), (ia, ib)), shape=(n, n)), directed=False)[0] if n else 0

    k = p.bots.index(anchor) if anchor is not None and anchor in p.bots else 0
    if anchor is not None and anchor not in p.bots:
        raise ValueError(f"anchor bot '{anchor}' is not in this run (bots: {', '.join(p.bots)})")
    keep = np.arange(n) != k
    cov = np.zeros((n, n))
    if n > 1:
        Hk = H[np.ix_(keep, keep)] + 1e-12 * np.eye(n - 1)
        Hinv = np.linalg.pinv(Hk)
        cov[np.ix_(keep, keep)] = Hinv @ M[np.ix_(keep, keep)] @ Hinv if method == "sandwich" else Hinv
    if anchor is None:
        P = np.eye(n) - 1.0 / n
        cov = P @ cov @ P.T
        elo = th * ELO_K
    else:
        elo = (th - th[k]) * ELO_K
    se = np.sqrt(np.clip(np.diag(cov), 0.0, None)) * ELO_K
    if anchor is not None:
        se[k] = 0.0
    z = sps.norm.ppf(0.5 + conf / 2.0)
    v = p.valid & p.cross
    res = np.where(v, p.res_a, 0.0)
    one = v.astype(float)
    games = _per_bot(p, one, one, v)
    score = _per_bot(p, res, one - res, v)
    qa = 1.0 / (1.0 + np.exp(-(th[p.a] - th[p.b])))
    expected = _per_bot(p, qa * one, (1.0 - qa) * one, v)
    out = pd.DataFrame({
        "bot": p.bots,
        "elo": elo,
        "elo_se": se,
        "elo_ci_low": elo - z * se,
        "elo_ci_high": elo + z * se,
        "games": games.astype(np.int64),
        "score": score,
        "expected": expected,
    })
    out = out[out["games"] > 0].reset_index(drop=True) if (out["games"] > 0).any() else out
    out.attrs["anchor"] = anchor if anchor is not None else "mean"
    out.attrs["components"] = int(n_comp)
    out.attrs["method"] = method
    out.attrs["prior_draws"] = prior_draws
    return out


def leaderboard(games: pd.DataFrame | Prepared, hands: pd.DataFrame | None = None, anchor: str | None = None,
                conf: float = 0.95) -> pd.DataFrame:
    """Ratings and per-bot statistics in one table, best first.

    Columns: rank, then :func:`bradley_terry`'s (bot, elo, elo_se, elo_ci_low,
    elo_ci_high) followed by every column of :func:`bot_stats`.
    ``attrs['anchor']`` names the rating anchor.
    """
    p = prepare(games)
    bt = bradley_terry(p, anchor=anchor, conf=conf)
    bs = bot_stats(p, hands, conf)
    out = bt[["bot", "elo", "elo_se", "elo_ci_low", "elo_ci_high"]].merge(bs, on="bot", how="outer")
    out = out.sort_values(["elo", "win_rate"], ascending=False, na_position="last").reset_index(drop=True)
    out.insert(0, "rank", np.arange(1, len(out) + 1))
    out.attrs.update(bt.attrs)
    return out


# --- seat / first-mover effect ------------------------------------------------------


def first_mover(games: pd.DataFrame | Prepared, conf: float = 0.95) -> pd.DataFrame:
    """The non-dealer's edge: per matchup and over the run (last row, matchup "all").

    The non-dealer is offered the upcard first and so moves first.

    Columns: matchup, decided_hands (hands someone won), nondealer_wins,
    nondealer_share = nondealer_wins / decided_hands with a pair-clustered
    interval (ci_low, ci_high); games (with a winner), first_nondealer_wins
    (games won by the seat that did not deal the first hand),
    first_nondealer_share with game_ci_low, game_ci_high.
    """
    p = prepare(games)
    return _cached(p, ("first_mover", conf), lambda: _first_mover(p, conf))


def _first_mover(p: Prepared, conf: float) -> pd.DataFrame:
    n_m, n_c = len(p.matchups), p.n_clusters
    decided = np.zeros(p.n_games)
    for k in WIN_KINDS:
        xa, xb = p.side(f"{k}_wins")
        decided += xa + xb
    nd = p.col("nondealer_wins")
    ws = p.col("winner_seat", np.int64) if p.has("winner_seat") else np.full(p.n_games, -1)
    fd = p.col("first_dealer", np.int64)
    has_w = (ws >= 0).astype(float)
    fnd = ((ws >= 0) & (ws != fd)).astype(float)
    c_dec = np.bincount(p.cluster, weights=decided, minlength=n_c)
    c_nd = np.bincount(p.cluster, weights=nd, minlength=n_c)
    c_w = np.bincount(p.cluster, weights=has_w, minlength=n_c)
    c_f = np.bincount(p.cluster, weights=fnd, minlength=n_c)
    rows = []
    for grp, ng, names in ((p.c_m, n_m, p.matchups), (np.zeros(n_c, dtype=np.int64), 1, ["all"])):
        kd, kw = c_dec > 0, c_w > 0
        h = ratio_ci(c_nd[kd], c_dec[kd], grp[kd], ng, conf, clip=(0.0, 1.0))
        g = ratio_ci(c_f[kw], c_w[kw], grp[kw], ng, conf, clip=(0.0, 1.0))
        rows.append(pd.DataFrame({
            "matchup": names,
            "decided_hands": h["den"].astype(np.int64),
            "nondealer_wins": np.bincount(grp[kd], weights=c_nd[kd], minlength=ng).astype(np.int64),
            "nondealer_share": h["est"],
            "ci_low": h["lo"],
            "ci_high": h["hi"],
            "games": g["den"].astype(np.int64),
            "first_nondealer_wins": np.bincount(grp[kw], weights=c_f[kw], minlength=ng).astype(np.int64),
            "first_nondealer_share": g["est"],
            "game_ci_low": g["lo"],
            "game_ci_high": g["hi"],
        }))
    return pd.concat(rows, ignore_index=True)


# --- convergence ------------------------------------------------------------------------


def convergence(games: pd.DataFrame | Prepared, conf: float = 0.95, points: int = 200) -> pd.DataFrame:
    """Running win rate of ``bot_a`` per matchup as pairs are played, with its interval.

    Pairs are taken in play order (smallest ``game_id`` of the pair); each row
    is the state after ``pairs`` pairs.  At most ``points`` rows per matchup,
    spaced evenly on a log scale (the last pair always included).

    Columns: matchup, pairs, games, win_rate, ci_low, ci_high (pair-clustered t).
    """
    p = prepare(games)
    return _cached(p, ("convergence", conf, points), lambda: _convergence(p, conf, points))


def _convergence(p: Prepared, conf: float, points: int) -> pd.DataFrame:
    n_c = p.n_clusters
    v = p.valid
    c_n = np.bincount(p.cluster, weights=v, minlength=n_c)
    c_s = np.bincount(p.cluster, weights=np.where(v, p.res_a, 0.0), minlength=n_c)
    keep = np.flatnonzero(c_n > 0)
    o = keep[np.lexsort((p.c_first[keep], p.c_m[keep]))]
    m, s, nn = p.c_m[o], c_s[o], c_n[o]
    starts = np.flatnonzero(np.r_[True, m[1:] != m[:-1]])
    ends = np.r_[starts[1:], m.size]
    # running sums restarted at every matchup
    def run(x):
        c = np.cumsum(x)
        base = np.repeat(np.r_[0.0, c[ends[:-1] - 1]], ends - starts)
        return c - base
    G = run(np.ones(m.size))
    N, S = run(nn), run(s)
    SS, SN, NN = run(s * s), run(s * nn), run(nn * nn)
    with np.errstate(divide="ignore", invalid="ignore"):
        est = S / N
        var = (SS - 2 * est * SN + est * est * NN) / (N * N) * G / (G - 1.0)
        half = _tq(conf, G - 1.0) * np.sqrt(np.maximum(var, 0.0))
    pick = np.zeros(m.size, dtype=bool)
    for st, en in zip(starts, ends):
        k = en - st
        idx = np.unique(np.round(np.geomspace(1, k, min(points, k))).astype(np.int64)) - 1
        pick[st + idx] = True
    return pd.DataFrame({
        "matchup": np.asarray(p.matchups, dtype=object)[m[pick]],
        "pairs": G[pick].astype(np.int64),
        "games": N[pick].astype(np.int64),
        "win_rate": est[pick],
        "ci_low": np.clip(est - half, 0, 1)[pick],
        "ci_high": np.clip(est + half, 0, 1)[pick],
    })


# --- hands seen per bot ----------------------------------------------------------------


def hand_results(games: pd.DataFrame | Prepared, hands: pd.DataFrame) -> pd.DataFrame:
    """Every hand twice, once from each bot's side.

    Columns: game_id, hand, bot, opponent, result (won / lost / none: dead,
    capped or forfeit), outcome, points (points this bot scored if it won,
    points it conceded if it lost, 0 otherwise), turns.  Hands whose game is
    not in ``games`` are dropped.
    """
    p = prepare(games)
    return _cached(p, ("hand_results", id(hands), len(hands)), lambda: _hand_results(p, hands))


def _hand_results(p: Prepared, hands: pd.DataFrame) -> pd.DataFrame:
    key = "game_id" if "game_id" in hands.columns else "game"
    gid = p.games["game_id"].to_numpy() if p.has("game_id") else np.arange(p.n_games)
    pos = pd.Index(gid).get_indexer(hands[key].to_numpy())
    ok = pos >= 0
    pos = pos[ok]
    h = hands.loc[ok] if not ok.all() else hands
    out_cat = pd.Categorical(h["outcome"])
    oc = np.append(np.asarray(out_cat.categories.astype(str)), "")[out_cat.codes]
    knocker = h["knocker"].to_numpy(dtype=np.int64)
    win_seat = np.where(np.isin(oc, ["knock", "gin", "big_gin"]), knocker,
                        np.where(oc == "undercut", 1 - knocker, -1))
    p0 = h["points0"].to_numpy(dtype=np.int64)
    p1 = h["points1"].to_numpy(dtype=np.int64)
    wpts = np.where(win_seat == 0, p0, np.where(win_seat == 1, p1, 0))
    swap = p.swap[pos]
    seat_bot = (np.where(swap, p.b[pos], p.a[pos]), np.where(swap, p.a[pos], p.b[pos]))
    frames = []
    turns = h["turns"].to_numpy() if "turns" in h.columns else np.zeros(len(h))
    for seat in (0, 1):
        res = np.where(win_seat == seat, "won", np.where(win_seat == 1 - seat, "lost", "none"))
        frames.append(pd.DataFrame({
            "game_id": gid[pos],
            "hand": h["hand"].to_numpy() if "hand" in h.columns else 0,
            "bot": pd.Categorical.from_codes(seat_bot[seat], categories=p.bots),
            "opponent": pd.Categorical.from_codes(seat_bot[1 - seat], categories=p.bots),
            "result": pd.Categorical(res, categories=["won", "lost", "none"]),
            "outcome": out_cat,
            "points": wpts,
            "turns": turns,
        }))
    return pd.concat(frames, ignore_index=True)
