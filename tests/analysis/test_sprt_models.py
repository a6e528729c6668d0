"""The SPRT's models: pentanomial and trinomial counts, logistic and normalized Elo bounds.

Three kinds of check:

* published values: the fixed inputs and LLRs that fastchess pins its SPRT with
  (fastchess checks them against fishtest's calculator), to the two decimals
  published;
* an independent derivation: the same generalized LLR computed by a general
  constrained optimizer (scipy's SLSQP maximizing the multinomial likelihood
  under each hypothesis' constraint), with nothing shared with
  :mod:`arena.analysis.sprt` but the definitions;
* simulation: on synthetic matchups of known Elo whose pairs are correlated as
  duplicate pairs are, the test accepts H1 under H0 and H0 under H1 at no more
  than the nominal rates, and the pentanomial test needs fewer games than the
  trinomial one on the same games.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import minimize

from arena.analysis.sprt import (
    H0_ACCEPTED,
    H1_ACCEPTED,
    NELO_PER_T,
    Sprt,
    SprtGate,
    llr,
    llr_pentanomial,
    llr_trinomial,
)
from arena.settings.config import SPRT_SPAN, ConfigError, config_from_dict

PENTA = np.array([0.0, 0.25, 0.5, 0.75, 1.0])
TRI = np.array([0.0, 0.5, 1.0])


def reference_llr(counts, elo0, elo1, elo="logistic"):
    """The GSPRT's LLR by brute force: maximize sum n_i log p_i under each hypothesis with SLSQP."""
    c = np.asarray(counts, dtype=float)
    c = np.where(c <= 0, 1e-3, c)
    a = PENTA if c.size == 5 else TRI
    f = c / c.sum()

    def constraint(e):
        if elo == "logistic":
            s = 1.0 / (1.0 + 10.0 ** (-e / 400.0))
            return lambda p: np.sum(p * a) - s
        t = e / (800.0 / math.log(10.0)) * (math.sqrt(2.0) if c.size == 5 else 1.0)

        def g(p):
            mu = np.sum(p * a)
            return mu - 0.5 - t * math.sqrt(max(np.sum(p * (a - mu) ** 2), 1e-300))

        return g

    def best(e):
        res = minimize(
            lambda p: -np.sum(c * np.log(np.maximum(p, 1e-300))),
            f,
            method="SLSQP",
            bounds=[(1e-12, 1.0)] * c.size,
            constraints=[{"type": "eq", "fun": lambda p: np.sum(p) - 1.0}, {"type": "eq", "fun": constraint(e)}],
            options={"ftol": 1e-15, "maxiter": 1000},
        )
        assert res.success, res.message
        return -res.fun

    return best(elo1) - best(elo0)


# fastchess's pinned cases.  Pentanomial counts are [LL, LD, WL + DD, WD, WW] (bot A's points 0..2);
# trinomial counts are [losses, draws, wins].
PUBLISHED = [
    ([365, 16618, 36029 + 200, 16974, 390], 0, 2, "normalized", 2.25),
    ([127, 4883, 10311 + 401, 5150, 104], -1.75, 0.25, "normalized", 3.01),
    ([0, 0, 0, 0, 5550], 0, 5, "normalized", 111.82),
    ([223, 9863, 20279 + 1000, 10037, 246], 0.5, 2.5, "logistic", -3.07),
    ([871, 26175, 55003 + 980, 26678, 821], 0, 2, "logistic", -4.98),
    ([36027, 68692, 36433], 0, 2, "normalized", 0.92),
    ([10650, 20431, 10871], -1.75, 0.25, "normalized", 2.30),
    ([0, 0, 4250], 0, 10, "normalized", 120.56),
    ([21184, 40708, 21404], 0.5, 2.5, "logistic", -1.57),
    ([57030, 106593, 57433], 0, 2, "logistic", -2.59),
]


@pytest.mark.parametrize(("counts", "elo0", "elo1", "elo", "published"), PUBLISHED)
def test_llr_matches_the_published_values_of_fishtest_style_calculators(counts, elo0, elo1, elo, published):
    got = llr(counts, elo0, elo1, elo)
    if np.count_nonzero(counts) == 1:
        # a clean sweep: the value rests on how empty outcomes are regularized (a pseudo-count of 1e-3
        # here); the calculators differ in the third digit
        assert got == pytest.approx(published, rel=5e-4)
    else:
        assert got == pytest.approx(published, abs=0.006)  # published to two decimals


@pytest.mark.parametrize(
    ("counts", "elo0", "elo1", "elo"),
    [
        ([3, 40, 110, 45, 2], 0, 10, "normalized"),
        ([3, 40, 110, 45, 2], -20, 5, "logistic"),
        ([50, 10, 300, 5, 80], 0, 30, "normalized"),
        ([50, 10, 300, 5, 80], 0, 30, "logistic"),
        ([0, 7, 20, 9, 0], -5, 5, "normalized"),
        ([120, 3, 160], 0, 25, "normalized"),
        ([120, 3, 160], 0, 25, "logistic"),
    ],
)
def test_llr_equals_a_brute_force_constrained_likelihood_maximum(counts, elo0, elo1, elo):
    assert llr(counts, elo0, elo1, elo) == pytest.approx(reference_llr(counts, elo0, elo1, elo), abs=2e-6)


def test_the_pentanomial_and_trinomial_entry_points_refuse_the_other_shape():
    assert llr_pentanomial([1, 2, 3, 2, 1], 0, 5) == llr([1, 2, 3, 2, 1], 0, 5)
    assert llr_trinomial([4, 1, 6], 0, 5, "normalized") == llr([4, 1, 6], 0, 5, "normalized")
    with pytest.raises(ValueError, match="pentanomial counts need 5"):
        llr_pentanomial([4, 1, 6], 0, 5)
    with pytest.raises(ValueError, match="trinomial counts need 3"):
        llr_trinomial([1, 2, 3, 2, 1], 0, 5)
    with pytest.raises(ValueError, match="a trinomial SPRT takes counts"):
        Sprt(model="trinomial").update([1.0, 0.5])


# --- simulation ---------------------------------------------------------------------------------------

#: A duplicate-like pair distribution: most pairs split (each seat wins once), so the two games of a pair
#: are negatively correlated; draws are rare as in gin.  Tilted exponentially to a chosen mean score.
_BASE = np.array([0.18, 0.02, 0.60, 0.02, 0.18])


def _tilted(score: float) -> np.ndarray:
    """The pentanomial distribution ``base_i exp(theta a_i)`` whose mean per-game score is ``score``."""
    lo, hi = -50.0, 50.0
    for _ in range(200):
        th = (lo + hi) / 2
        w = _BASE * np.exp(th * PENTA)
        if np.sum(w * PENTA) / w.sum() < score:
            lo = th
        else:
            hi = th
    return w / w.sum()


def _nelo(p: np.ndarray) -> float:
    mu = np.sum(p * PENTA)
    return float((mu - 0.5) / math.sqrt(2.0 * np.sum(p * (PENTA - mu) ** 2)) * NELO_PER_T)


def _run(p: np.ndarray, rng: np.random.Generator, elo0, elo1, elo, step: int = 20, cap: int = 40000):
    """One sequential test on pairs drawn from ``p``, checked every ``step`` pairs, pentanomial and trinomial.

    Returns (pentanomial decision, its games, trinomial decision, its games) on the same stream of pairs;
    the trinomial test is run with logistic bounds only (normalized Elo of single games is another scale).
    """
    penta = Sprt(elo0, elo1, elo=elo)
    tri = Sprt(elo0, elo1, model="trinomial", elo=elo)
    if elo != "logistic":
        tri.decision = "not run"
    games = {"p": 0, "t": 0}
    for _ in range(cap // step):
        k = np.bincount(rng.choice(5, size=step, p=p), minlength=5)
        # each pair as two games: 0 = LL, 1 = LD, 2 = WL, 3 = WD, 4 = WW
        ldw = np.array([2 * k[0] + k[1] + k[2], k[1] + k[3], k[2] + k[3] + 2 * k[4]])
        if penta.decision is None:
            penta.update(counts=k)
            games["p"] += 2 * step
        if tri.decision is None:
            tri.update(counts=ldw)
            games["t"] += 2 * step
        if penta.decision and tri.decision:
            break
    return penta.decision, games["p"], tri.decision, games["t"]


@pytest.mark.parametrize("elo", ["logistic", "normalized"])
def test_error_rates_are_at_most_nominal_on_synthetic_matchups_of_known_elo(elo):
    """alpha = beta = 0.05; 150 (logistic) or 100 (normalized) tests under each hypothesis (seeded).  The
    bound 0.05 + 2.5 binomial sd (0.018, 0.022) is far below what a wrong variance gives: a wrong sqrt 2,
    or a variance that ignores how the pairs' games are correlated, moves the rates by much more."""
    rng = np.random.default_rng(7 if elo == "logistic" else 8)
    if elo == "logistic":
        elo0, elo1 = 0.0, 40.0
        p0, p1 = _tilted(0.5), _tilted(1.0 / (1.0 + 10.0 ** (-elo1 / 400.0)))
    else:
        elo0, elo1 = 0.0, 60.0
        p0 = _tilted(0.5)
        lo, hi = 0.5, 0.99
        for _ in range(60):  # the score whose tilted distribution has normalized Elo elo1
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if _nelo(_tilted(mid)) < elo1 else (lo, mid)
        p1 = _tilted(lo)
        assert _nelo(p0) == pytest.approx(0.0, abs=1e-9) and _nelo(p1) == pytest.approx(elo1, abs=1e-6)
    n = 150 if elo == "logistic" else 100
    sd = math.sqrt(0.05 * 0.95 / n)
    under0 = [_run(p0, rng, elo0, elo1, elo) for _ in range(n)]
    under1 = [_run(p1, rng, elo0, elo1, elo) for _ in range(n)]
    false_pos = np.mean([r[0] == H1_ACCEPTED for r in under0])
    false_neg = np.mean([r[0] == H0_ACCEPTED for r in under1])
    assert all(r[0] is not None for r in under0 + under1)
    assert false_pos <= 0.05 + 2.5 * sd and false_neg <= 0.05 + 2.5 * sd
    if elo != "logistic":
        return
    # on the same pairs, the trinomial test (games as independent) is valid here but slower: these
    # pairs vary less than two independent games would
    penta_games = np.mean([r[1] for r in under0 + under1])
    tri_games = np.mean([r[3] for r in under0 + under1])
    assert tri_games > 1.3 * penta_games


def test_config_sequential_picks_the_model_and_checks_it():
    assert config_from_dict({}).sprt_params()["model"] == "pentanomial"
    assert config_from_dict({"duplicate": False}).sprt_params()["model"] == "trinomial"
    c = config_from_dict({"sequential": "trinomial", "sprt": {"elo": "normalized", "elo1": 3}})
    assert c.sprt_params() == {
        "elo0": 0.0,
        "elo1": 3.0,
        "alpha": 0.05,
        "beta": 0.05,
        "elo": "normalized",
        "model": "trinomial",
    }
    test = Sprt(**c.sprt_params())
    assert test.model == "trinomial" and test.elo_model == "normalized" and "nElo" in test.summary()
    with pytest.raises(ConfigError, match="sequential = 'tri' is not allowed"):
        config_from_dict({"sequential": "tri"})
    with pytest.raises(ConfigError, match='sequential = "pentanomial" needs duplicate = true'):
        config_from_dict({"sequential": "pentanomial", "duplicate": False})
    with pytest.raises(ConfigError, match="sprt.elo = 'bayes' is not allowed"):
        config_from_dict({"sprt": {"elo": "bayes"}})


def _multistart_llr(counts, elo0, elo1, elo):
    """reference_llr's brute force from several starting points (the observed one fails on lopsided counts)."""
    c = np.where(np.asarray(counts, dtype=float) <= 0, 1e-3, np.asarray(counts, dtype=float))
    a = np.linspace(0.0, 1.0, c.size)
    rng = np.random.default_rng(0)

    def best(e):
        t = e / (800.0 / math.log(10.0)) * (math.sqrt(2.0) if c.size == 5 else 1.0)

        def g(p):
            mu = p @ a
            return mu - 0.5 - t * math.sqrt(max(p @ (a - mu) ** 2, 1e-300))

        vals = []
        for k in range(8):
            x0 = np.full(c.size, 1.0 / c.size) if k == 0 else rng.dirichlet(np.ones(c.size))
            r = minimize(
                lambda p: -np.sum(c * np.log(np.maximum(p, 1e-300))),
                x0,
                method="SLSQP",
                bounds=[(1e-12, 1.0)] * c.size,
                constraints=[{"type": "eq", "fun": lambda p: p.sum() - 1.0}, {"type": "eq", "fun": g}],
                options={"ftol": 1e-15, "maxiter": 2000},
            )
            if r.success and abs(g(r.x)) < 1e-8 and abs(r.x.sum() - 1.0) < 1e-8:
                vals.append(-r.fun)
        return max(vals)

    return best(elo1) - best(elo0)


@pytest.mark.parametrize(
    ("counts", "elo0", "elo1"),
    [
        ([5, 0, 0, 0, 0], 0, 5),
        ([1, 0, 0, 0, 0], 0, 50),
        ([0, 0, 9, 0, 0], 0, 50),
        ([40, 10, 1, 0, 0], 0, 50),
        ([4, 0, 0], 0, 50),
        ([0, 0, 7], -5, 5),
    ],
)
def test_normalized_llr_of_lopsided_counts_is_the_constrained_maximum_not_a_crash(counts, elo0, elo1):
    """A bot that loses every pair so far (the first chunk of a mismatch) must not stop a normalized-Elo SPRT
    with a root-finding error; its LLR is the brute-force constrained likelihood maximum's."""
    got = llr(counts, elo0, elo1, "normalized")
    assert got == pytest.approx(_multistart_llr(counts, elo0, elo1, "normalized"), abs=2e-6)
    test = Sprt(elo0, elo1, model="pentanomial" if len(counts) == 5 else "trinomial", elo="normalized")
    test.update(counts=counts)
    assert test.llr == pytest.approx(got)


@pytest.mark.parametrize(
    "counts", [[0.5, 0, 0, 0, 3], [1, 2, float("nan"), 0, 0], [1, 2, float("inf"), 0, 0], [-1, 0, 0, 0, 2]]
)
def test_counts_that_are_not_whole_numbers_are_refused_not_truncated(counts):
    """Half a pair was silently 0: the test went on as if it had never been given."""
    test = Sprt(elo0=0, elo1=5)
    with pytest.raises(ValueError, match="counts need 5 non-negative whole numbers"):
        test.update(counts=counts)
    assert test.counts.tolist() == [0, 0, 0, 0, 0]


LOPSIDED = [[9, 0, 0, 0, 0], [0, 0, 0, 0, 9], [0, 0, 9, 0, 0], [1000, 20, 3, 0, 0], [9, 0, 0], [0, 0, 9], [0, 9, 0]]


@pytest.mark.parametrize("elo", list(SPRT_SPAN))
@pytest.mark.parametrize("counts", LOPSIDED)
def test_the_llr_is_a_number_at_the_edges_of_the_bounds_a_config_allows(elo, counts):
    """SPRT_SPAN is the range a config may give elo0 and elo1: the LLR must be finite at both ends of it
    (past them a run's SPRT crashed after its first chunk: elo1 = 6500 logistic, 300 normalized)."""
    span = SPRT_SPAN[elo]
    for elo0, elo1 in ((0, span), (-span, 0), (span - 1, span), (-span, -span + 1)):
        assert math.isfinite(llr(counts, elo0, elo1, elo)), (elo0, elo1)


def test_an_sprt_that_fails_mid_run_stops_deciding_and_says_why(monkeypatch):
    """An error in the test after a chunk was stored ended the run in a traceback before its tables: the
    gate stops deciding instead (the run plays every game) and its line names the error."""
    import pandas as pd

    import arena.analysis.sprt as sprt

    def broken(*args, **kwargs):
        raise ValueError("The function value at x=nan is NaN")

    monkeypatch.setattr(sprt, "llr", broken)
    gate = SprtGate(config_from_dict({}))
    games = pd.DataFrame({"bot_a": ["a", "a"], "bot_b": ["b", "b"], "pair": [0, 0], "winner": ["a", "b"]})
    gate.add(0, games)
    gate.add(1, games)
    assert gate.advance() is False and gate.decision is None
    assert "failed after 1 observation(s) (ValueError: The function value at x=nan is NaN)" in gate.summary()
