"""Sequential probability ratio test (SPRT) for a two-bot match, as chess testers use it.

What it answers
---------------
"Is bot A at least ``elo1`` Elo stronger than bot B, or at most ``elo0``?"
while the match is running, stopping as soon as the evidence is strong
enough - like cutechess-cli / fastchess ``-sprt elo0=0 elo1=5 alpha=0.05
beta=0.05`` and fishtest.  H0: A's Elo advantage is ``elo0``; H1: it is
``elo1`` (``elo1 > elo0``).  ``alpha`` is the chance of accepting H1 when H0
is true (a false positive), ``beta`` the chance of accepting H0 when H1 is
true.  Elo here is logistic Elo: an advantage ``e`` means an expected score
per game of ``1 / (1 + 10 ** (-e / 400))`` (a draw scores half).

Unit of evidence: the duplicate pair (pentanomial model)
---------------------------------------------------------
The two games of a duplicate pair share a deal with the seats swapped, so
they are not independent; treating them as two trinomial games would get the
variance wrong.  As fishtest does for its game pairs, each *complete* pair is
one observation: A's points in the pair, 0, 0.5, 1, 1.5 or 2 (five outcomes,
"pentanomial").  Pairs with a game still missing or without a result are
not counted.

The log-likelihood ratio is the generalized SPRT of Michel Van den Bergh
(fishtest's ``LLR_logistic``): for each hypothesis the five outcome
probabilities are the maximum-likelihood distribution whose mean pair score
is the hypothesis' expected score, and ``LLR = N * sum_i f_i * log(p1_i / p0_i)``
over the observed frequencies ``f_i`` of ``N`` pairs.  No draw model (and no
draw Elo) is needed.  Counts of zero are replaced by 1e-3 as in fishtest, so
the LLR is defined from the first pair.

Models (the config's ``sequential`` and ``[sprt] elo``)
-------------------------------------------------------
``sequential = "pentanomial"`` (the default with duplicate pairs) counts
pairs as above; ``"trinomial"`` counts each game on its own (losses, draws,
wins: the only choice without duplicate pairs).  On duplicate pairs the
trinomial test is still valid only when the two games of a pair are
uncorrelated; they are negatively correlated here (the seat with the good
cards wins each game), so it takes more games for the same error rates.

``[sprt] elo = "logistic"`` (default) makes each hypothesis a logistic Elo,
that is an expected score.  ``"normalized"`` makes it a normalized Elo, as
fishtest's default: ``nElo = (score - 1/2) / sd * 800 / ln 10`` with ``sd``
the standard deviation of one game's score (for pairs, ``sqrt 2`` times the
pair score's), so a bound means the same effort whatever the draw rate or
the pairs' correlation.  The maximum-likelihood distribution under
``(mean - 1/2) / sd = t`` is found by :func:`_mle_t_log`.

Bounds (Wald): stop and accept H1 when ``LLR >= log((1 - beta) / alpha)``,
accept H0 when ``LLR <= log(beta / (1 - alpha))``, otherwise continue.  With
alpha = beta = 0.05 the bounds are +-2.94.  Checking between chunks of games
(rather than after every pair) overshoots the bound a little, which only
makes the test slightly more conservative.

For a runner, after each chunk in play order (a chunk holds whole pairs, so
the counts of chunks add up and no step needs the games played before)::

    test = Sprt(elo0=0, elo1=10)
    for chunk in chunks:
        if test.update(counts=pentanomial(chunk.games)) is not None:
            stop()                  # "H1 accepted" or "H0 accepted"
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

if TYPE_CHECKING:
    from arena.settings.config import TournamentConfig

PAIR_SCORES = np.array([0.0, 0.5, 1.0, 1.5, 2.0])  # bot A's points in a pair
_A = PAIR_SCORES / 2.0  # the same, as a per-game score in [0, 1]
_T = np.array([0.0, 0.5, 1.0])  # a single game: loss, draw, win
H0_ACCEPTED = "H0 accepted"
H1_ACCEPTED = "H1 accepted"
#: Normalized Elo per unit of t-value (``(mean score - 1/2) / sd per game``): ``800 / ln 10``.
NELO_PER_T = 800.0 / np.log(10.0)
MODELS = ("pentanomial", "trinomial")
ELO_MODELS = ("logistic", "normalized")

__all__ = [
    "PAIR_SCORES",
    "H0_ACCEPTED",
    "H1_ACCEPTED",
    "MODELS",
    "ELO_MODELS",
    "NELO_PER_T",
    "Sprt",
    "SprtGate",
    "sprt_bounds",
    "llr",
    "llr_pentanomial",
    "llr_trinomial",
    "llr_normal",
    "pentanomial",
    "trinomial",
    "sprt_status",
]


def _score(elo: float) -> float:
    return 1.0 / (1.0 + 10.0 ** (-elo / 400.0))


def sprt_bounds(alpha: float = 0.05, beta: float = 0.05) -> tuple[float, float]:
    """Wald's (lower, upper) LLR bounds: below accepts H0, above accepts H1."""
    if not (0 < alpha < 1 and 0 < beta < 1):
        raise ValueError("alpha and beta must be between 0 and 1")
    return float(np.log(beta / (1.0 - alpha))), float(np.log((1.0 - beta) / alpha))


def _regularize(counts: np.ndarray) -> np.ndarray:
    c = np.asarray(counts, dtype=float).copy()
    c[c <= 0] = 1e-3
    return c


def _secular(freq: np.ndarray, d: np.ndarray) -> np.ndarray:
    """``log p_i`` of ``p_i = f_i / (1 + lam d_i)``, ``lam`` solving ``sum_i f_i d_i / (1 + lam d_i) = 0``.

    The maximum of ``sum_i f_i log p_i`` over distributions with ``sum_i p_i d_i = 0``
    (a Lagrange multiplier ``lam``; ``sum_i p_i = 1`` then holds by itself).
    ``d`` must take both signs.
    """
    lo, hi = -1.0 / d.max(), -1.0 / d.min()  # keep 1 + lam * d > 0
    eps = 1e-12 * (hi - lo)

    def f(lam):
        return np.sum(freq * d / (1.0 + lam * d))

    from scipy.optimize import brentq  # here, not at the top: see arena.analysis.quantiles

    lam = brentq(f, lo + eps, hi - eps, xtol=1e-14, maxiter=500)
    return np.log(freq) - np.log1p(lam * d)


def _mle_log(freq: np.ndarray, s: float, support: np.ndarray = _A) -> np.ndarray:
    """log p_i of the max-likelihood distribution over ``support`` with mean ``s``."""
    return _secular(freq, support - s)


def _mle_t_log(freq: np.ndarray, t: float, support: np.ndarray, ref: float = 0.5) -> np.ndarray:
    """log p_i of the max-likelihood distribution over ``support`` with ``(mean - ref) / sd = t``.

    The constraint ``mu - ref - t sigma = 0`` is not linear in ``p``; at the
    optimum its gradient in ``p_i`` is, up to a constant, ``u_i = (a_i - ref)
    - t ((a_i - mu)^2 + sigma^2) / (2 sigma)``, and ``sum_i p_i u_i`` equals the
    constraint itself.  So the optimum solves the linear problem of
    :func:`_secular` with ``d = u`` evaluated at its own ``mu, sigma``: iterate
    from the uniform distribution (as fishtest does) until ``p`` stops moving.
    Not from the observed one: when it is lopsided (every pair lost, say) its
    ``sigma`` is tiny, ``u`` takes one sign only and the secular equation has
    no root.
    """
    p = np.full(freq.shape, 1.0 / freq.size)
    for _ in range(200):
        mu = float(np.sum(p * support))
        sigma = float(np.sqrt(max(np.sum(p * (support - mu) ** 2), 1e-300)))
        u = (support - ref) - t * ((support - mu) ** 2 + sigma**2) / (2.0 * sigma)
        logp = _secular(freq, u)
        q = np.exp(logp)
        if np.max(np.abs(q - p)) < 1e-13:
            return logp
        p = q
    return logp


def _counts(counts: Iterable[float], n: int) -> np.ndarray:
    c = np.asarray(list(counts) if not isinstance(counts, np.ndarray) else counts, dtype=float)
    if c.shape != (n,):
        what = "5 entries (pairs scoring 0, 0.5, 1, 1.5, 2)" if n == 5 else "3 entries (losses, draws, wins)"
        raise ValueError(f"{'pentanomial' if n == 5 else 'trinomial'} counts need {what}")
    return c


def llr(counts: Iterable[float], elo0: float, elo1: float, elo: str = "logistic") -> float:
    """Generalized log-likelihood ratio of H1 (``elo1``) over H0 (``elo0``) from outcome counts.

    ``counts``: 5 entries (pentanomial: pairs in which bot A scored 0, 0.5,
    1, 1.5, 2 points) or 3 (trinomial: A's losses, draws, wins).  ``elo``:
    ``"logistic"`` (each hypothesis fixes the expected score per game) or
    ``"normalized"`` (each fixes the t-value ``(score - 1/2) / sd per game``
    at ``nelo / NELO_PER_T``; a pair's sd is the per-game one over sqrt 2).
    For each hypothesis the outcome probabilities are the maximum-likelihood
    ones that meet it; ``LLR = N sum_i f_i log(p1_i / p0_i)``.
    """
    c = np.asarray(list(counts) if not isinstance(counts, np.ndarray) else counts, dtype=float)
    if c.shape not in ((5,), (3,)):
        raise ValueError("counts need 5 entries (pentanomial pairs) or 3 (losses, draws, wins)")
    if elo not in ELO_MODELS:
        raise ValueError(f"elo = {elo!r}: allowed {', '.join(ELO_MODELS)}")
    if c.sum() <= 0:
        return 0.0
    support = _A if c.shape == (5,) else _T
    c = _regularize(c)
    n = c.sum()
    freq = c / n
    if elo == "logistic":
        lp0, lp1 = (_mle_log(freq, _score(e), support) for e in (elo0, elo1))
    else:
        scale = np.sqrt(2.0) if c.shape == (5,) else 1.0  # t of the pair score = sqrt 2 x t per game
        lp0, lp1 = (_mle_t_log(freq, e / NELO_PER_T * scale, support) for e in (elo0, elo1))
    return float(n * np.sum(freq * (lp1 - lp0)))


def llr_pentanomial(counts: Iterable[float], elo0: float, elo1: float, elo: str = "logistic") -> float:
    """:func:`llr` of pentanomial pair counts (pairs in which bot A scored 0, 0.5, 1, 1.5, 2 points)."""
    return llr(_counts(counts, 5), elo0, elo1, elo)


def llr_trinomial(counts: Iterable[float], elo0: float, elo1: float, elo: str = "logistic") -> float:
    """:func:`llr` of trinomial game counts (bot A's losses, draws, wins), each game taken on its own."""
    return llr(_counts(counts, 3), elo0, elo1, elo)


def llr_normal(counts: Iterable[float], elo0: float, elo1: float) -> float:
    """The usual normal approximation of the same LLR (for checks; not used to decide).

    ``N * (s1 - s0) * (2 * mean - s0 - s1) / (2 * var)`` with the mean and
    variance of the per-pair score in [0, 1].
    """
    c = _regularize(np.asarray(list(counts) if not isinstance(counts, np.ndarray) else counts, dtype=float))
    n = c.sum()
    mean = np.sum(c * _A) / n
    var = np.sum(c * (_A - mean) ** 2) / n
    s0, s1 = _score(elo0), _score(elo1)
    return float(n * (s1 - s0) * (2.0 * mean - s0 - s1) / (2.0 * var))


class Sprt:
    """A running SPRT of bot A against bot B on duplicate pairs.

    ``Sprt(elo0=0, elo1=5, alpha=0.05, beta=0.05)``; feed it pair results with
    :meth:`update` (A's points per complete pair: 0, 0.5, 1, 1.5 or 2) or
    whole pentanomial counts with ``update(counts=[...])``.

    * ``llr`` - log-likelihood ratio of H1 over H0 so far (see the module doc);
    * ``bounds`` - ``(lower, upper)``; ``llr <= lower`` accepts H0, ``llr >=
      upper`` accepts H1;
    * ``decision`` - ``None`` (keep playing), ``"H0 accepted"`` (A is not
      ``elo1`` better; at most ``elo0``) or ``"H1 accepted"`` (A is at least
      ``elo1`` better, wrong with probability about ``alpha`` if H0 held).
      The first decision reached sticks: later updates do not change it.
    """

    def __init__(
        self,
        elo0: float = 0.0,
        elo1: float = 5.0,
        alpha: float = 0.05,
        beta: float = 0.05,
        *,
        model: str = "pentanomial",
        elo: str = "logistic",
    ):
        if not elo1 > elo0:
            raise ValueError(f"SPRT needs elo1 > elo0 (got elo0={elo0}, elo1={elo1})")
        if model not in MODELS:
            raise ValueError(f"SPRT model = {model!r}: allowed {', '.join(MODELS)}")
        if elo not in ELO_MODELS:
            raise ValueError(f"SPRT elo = {elo!r}: allowed {', '.join(ELO_MODELS)}")
        self.elo0, self.elo1 = float(elo0), float(elo1)
        self.alpha, self.beta = float(alpha), float(beta)
        self.model, self.elo_model = model, elo
        self.bounds: tuple[float, float] = sprt_bounds(alpha, beta)
        self._support = _A if model == "pentanomial" else _T
        self.counts = np.zeros(self._support.size, dtype=np.int64)
        self.llr = 0.0
        self.decision: str | None = None

    def update(
        self, pair_points: Iterable[float] | float | None = None, *, counts: Iterable[int] | None = None
    ) -> str | None:
        """Add pairs (A's points per pair, in half points) and/or counts; return ``decision``.

        A trinomial test takes ``counts`` only (A's losses, draws, wins).
        """
        k_out = self._support.size
        add = np.zeros(k_out, dtype=np.int64)
        if pair_points is not None:
            if self.model != "pentanomial":
                raise ValueError("a trinomial SPRT takes counts of losses, draws and wins, not pair points")
            x = np.atleast_1d(np.asarray(pair_points, dtype=float))
            k = np.rint(x * 2.0).astype(np.int64)
            if x.size and (np.any(np.abs(k - x * 2.0) > 1e-9) or k.min() < 0 or k.max() > 4):
                raise ValueError("pair points must be 0, 0.5, 1, 1.5 or 2 (bot A's points in the pair)")
            add += np.bincount(k, minlength=5)
        if counts is not None:
            raw = np.asarray(list(counts), dtype=float)
            c = raw.astype(np.int64) if raw.size and np.all(np.isfinite(raw)) else np.zeros(0, dtype=np.int64)
            if c.shape != (k_out,) or c.min() < 0 or np.any(c != raw):  # 0.5 of a pair was silently 0
                what = "5 non-negative whole numbers (pairs scoring 0, 0.5, 1, 1.5, 2)"
                raise ValueError(f"counts need {what if k_out == 5 else '3 non-negative whole numbers (L, D, W)'}")
            add += c
        self.counts += add
        self.llr = llr(self.counts, self.elo0, self.elo1, self.elo_model)
        if self.decision is None:
            if self.llr >= self.bounds[1]:
                self.decision = H1_ACCEPTED
            elif self.llr <= self.bounds[0]:
                self.decision = H0_ACCEPTED
        return self.decision

    @property
    def pairs(self) -> int:
        """Observations so far: pairs (pentanomial) or games (trinomial)."""
        return int(self.counts.sum())

    @property
    def games(self) -> int:
        """Games the test has counted."""
        return self.pairs * (2 if self.model == "pentanomial" else 1)

    @property
    def score(self) -> float:
        """A's mean score per game so far (nan before the first pair)."""
        n = self.counts.sum()
        return float(np.sum(self.counts * self._support) / n) if n else float("nan")

    @property
    def elo(self) -> float:
        """Elo advantage of A implied by its score so far."""
        s = self.score
        if not 0.0 < s < 1.0:  # a clean sweep (or no pairs): the Elo estimate is unbounded
            return float("nan") if s != s else (float("inf") if s >= 1.0 else float("-inf"))
        return float(400.0 * np.log10(s / (1.0 - s)))

    def __repr__(self) -> str:
        lo, hi = self.bounds
        return (
            f"Sprt(elo0={self.elo0:g}, elo1={self.elo1:g}, alpha={self.alpha:g}, beta={self.beta:g}, "
            f"{self.model}, {self.elo_model}: "
            f"LLR {self.llr:.2f} ({lo:.2f}, {hi:.2f}), {self.counts.tolist()}, "
            f"{self.decision or 'continue'})"
        )

    def summary(self) -> str:
        """One line as chess testers print it."""
        lo, hi = self.bounds
        unit = "nElo" if self.elo_model == "normalized" else "Elo"
        seen = (
            f"pairs {self.pairs}, penta {self.counts.tolist()}"
            if self.model == "pentanomial"
            else f"games {self.pairs}, LDW {self.counts.tolist()}"
        )
        return (
            f"SPRT [{self.elo0:g}, {self.elo1:g}] {unit} LLR {self.llr:.2f} ({lo:.2f}, {hi:.2f}); "
            f"{seen}, Elo {self.elo:+.1f}: {self.decision or 'continue'}"
        )


def pentanomial(games: pd.DataFrame, bot: str | None = None) -> np.ndarray:
    """Counts of complete pairs in which ``bot`` scored 0, 0.5, 1, 1.5, 2 points.

    ``games`` (schema of games.parquet) must hold one matchup; ``bot``
    defaults to its ``bot_a``.  Pairs with a game missing, or a game that
    has an error and no winner, are left out.
    """
    if len(games) == 0:
        return np.zeros(5, dtype=np.int64)
    names = pd.unique(games["matchup"].astype(str)) if "matchup" in games.columns else []
    if len(names) > 1:
        raise ValueError(f"SPRT is for one matchup; got {len(names)}: {', '.join(map(str, names[:4]))}")
    a = str(games["bot_a"].iloc[0])
    b = str(games["bot_b"].iloc[0])
    if a == b:
        raise ValueError(f"SPRT needs two different bots (got self-play of '{a}')")
    bot = a if bot is None else bot
    if bot not in (a, b):
        raise ValueError(f"bot '{bot}' does not play in '{a} vs {b}'")
    winner = games["winner"].astype(object).fillna("").astype(str).to_numpy()
    pts = np.where(winner == bot, 2, np.where(winner == "", 1, 0))  # half points
    void = np.zeros(len(games), dtype=bool)
    if "error" in games.columns:
        void = (games["error"].astype(object).fillna("").astype(str).to_numpy() != "") & (winner == "")
    frame = pd.DataFrame({"pair": games["pair"].to_numpy(), "pts": pts, "void": void})
    agg = frame.groupby("pair").agg(n=("pts", "size"), pts=("pts", "sum"), void=("void", "any"))
    agg = agg[(agg["n"] == 2) & ~agg["void"]]
    return np.bincount(agg["pts"].to_numpy(dtype=np.int64), minlength=5)[:5].astype(np.int64)


def trinomial(games: pd.DataFrame, bot: str | None = None) -> np.ndarray:
    """Counts of ``bot``'s losses, draws and wins over the games of one matchup, each taken on its own.

    Games with an error and no winner are left out, as :func:`pentanomial` leaves their pairs out.
    """
    if len(games) == 0:
        return np.zeros(3, dtype=np.int64)
    a, b = str(games["bot_a"].iloc[0]), str(games["bot_b"].iloc[0])
    bot = a if bot is None else bot
    if bot not in (a, b):
        raise ValueError(f"bot '{bot}' does not play in '{a} vs {b}'")
    winner = games["winner"].astype(object).fillna("").astype(str).to_numpy()
    keep = np.ones(len(games), dtype=bool)
    if "error" in games.columns:
        keep = ~((games["error"].astype(object).fillna("").astype(str).to_numpy() != "") & (winner == ""))
    pts = np.where(winner == bot, 2, np.where(winner == "", 1, 0))[keep]
    return np.bincount(pts, minlength=3)[:3].astype(np.int64)


def sprt_status(
    games: pd.DataFrame,
    elo0: float = 0.0,
    elo1: float = 5.0,
    alpha: float = 0.05,
    beta: float = 0.05,
    bot: str | None = None,
) -> Sprt:
    """The SPRT over every complete pair in a one-matchup games table (a notebook check).

    ``bot`` is the bot whose advantage is tested (default ``bot_a``).  A
    runner adds :func:`pentanomial` counts chunk by chunk instead.
    """
    test = Sprt(elo0, elo1, alpha, beta)
    test.update(counts=pentanomial(games, bot))
    return test


_COUNTERS = {"pentanomial": pentanomial, "trinomial": trinomial}


class SprtGate:
    """The SPRT of a one-matchup run, as the runner's stop rule: ``run_tournament(cfg, stop=SprtGate)``.

    Built from the config's ``[sprt]`` table; fed chunk by chunk, but taken
    in chunk order whatever order chunks finish in, so the stop falls in the
    same place on any number of workers (:class:`arena.run.runner.StopRule`).
    """

    def __init__(self, cfg: TournamentConfig) -> None:
        self.test = Sprt(**cfg.sprt_params())
        self._count = _COUNTERS[self.test.model]
        self.pending: dict[int, np.ndarray] = {}
        self.next = 0
        self.used = 0
        #: Why the test stopped counting, if it failed: the run then plays every game.
        self.error = ""

    @property
    def decision(self) -> str | None:
        return self.test.decision

    def add(self, chunk: int, games: pd.DataFrame) -> None:
        self.pending[chunk] = self._count(games)

    def advance(self) -> bool:
        """Feed every chunk now contiguous; True once the test is decided."""
        while not self.error and self.test.decision is None and self.next in self.pending:
            try:
                self.test.update(counts=self.pending.pop(self.next))
            except (ValueError, ArithmeticError, RuntimeError) as exc:
                # Called after a chunk is stored and before the run's tables: an error that escaped here
                # ended the run in a traceback, its tables unprinted.  A test that cannot go on stops
                # deciding, so the run plays every game, and its line says why.
                self.error = f"{type(exc).__name__}: {exc}"
                break
            self.next += 1
            self.used = self.next
        return self.test.decision is not None

    def summary(self) -> str:
        if self.error:
            return (
                f"SPRT [{self.test.elo0:g}, {self.test.elo1:g}] failed after {self.test.pairs} observation(s) "
                f"({self.error}); every game was played"
            )
        return self.test.summary()
