"""The deal control variate (arena/analysis/variance.py): exact deal features, unbiased, honest intervals."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from arena.analysis import variance as var
from arena.engine.layout import S_DEALER, S_HAND, S_HAND_NO, S_UPCARD
from arena.engine.melds import deadwood
from arena.engine.rng import new_rng
from arena.engine.rules_array import rules_array
from arena.engine.step import begin_hand, new_state
from arena.settings.rules import load_rules


def test_deal_covariates_recompute_the_engines_deal():
    # The kernel's deal is the engine's: same upcard, same dealt deadwood for each seat.
    rng = new_rng(0)
    for seed, hand_no, dealer in [(1, 0, 0), (123456789, 3, 1), (2**40 + 7, 11, 0)]:
        st = new_state()
        st[S_DEALER] = dealer
        st[S_HAND_NO] = hand_no
        begin_hand(st, rules_array(load_rules("standard")), seed, rng)
        cov, ups = var.deal_covariates([seed], [hand_no], [dealer], [10])
        assert ups[0] == st[S_UPCARD]
        assert cov[0, 0] == deadwood(st[S_HAND + 0]) - deadwood(st[S_HAND + 1])


def test_covariates_flip_with_the_seats_and_have_mean_zero():
    # Swapping the dealer gives seat 0 the other hand: every seat difference flips sign, while
    # the difference signed by the non-dealer stays.  Over many deals each covariate averages 0
    # (it must: both seats' cards have the same distribution); margin 5 standard errors.
    n = 20000
    seeds = np.arange(n, dtype=np.int64) * 7919 + 11
    hands = np.arange(n) % 9
    a, _ = var.deal_covariates(seeds, hands, np.zeros(n), np.full(n, 10))
    b, _ = var.deal_covariates(seeds, hands, np.ones(n), np.full(n, 10))
    assert np.array_equal(a[:, :4], -b[:, :4])
    assert np.array_equal(a[:, 4:], b[:, 4:])
    se = a.std(axis=0) / np.sqrt(n)
    assert np.all(np.abs(a.mean(axis=0)) < 5 * se)
    assert a[:, 0].std() > 5  # deadwood differences are real spreads, not zeros


def test_cross_fitting_never_uses_a_pair_to_adjust_itself():
    # With cross-fitting, changing pair i's value moves its adjusted value by exactly the same
    # amount: the slope applied to pair i was fitted without it.
    r = np.random.default_rng(1)
    z = r.normal(size=(400, 3))
    y = z @ [1.0, -2.0, 0.5] + r.normal(size=400)
    a = var.adjusted_values(y, z, folds=2)
    y2 = y.copy()
    y2[10] += 100.0
    a2 = var.adjusted_values(y2, z, folds=2)
    assert a2[10] - a[10] == pytest.approx(100.0)
    # ... and a fixed beta (fitted on an earlier run) is applied as given
    b = np.array([1.0, -2.0, 0.5])
    assert np.allclose(var.adjusted_values(y, z, beta=b), y - z @ b)


def test_synthetic_truth_unbiased_with_honest_intervals():
    # Known truth mu = 0.3; z has mean 0 and explains R^2 = 0.5 of the variance, so the ideal
    # VRF is 2.  Over 600 replicates of 300 pairs: the adjusted estimates average mu (margin 4
    # standard errors of that mean), the 95% intervals cover mu 93-97% of the time (binomial sd
    # 0.9 points at 600 replicates), and the measured VRF is 2 within 15%.
    r = np.random.default_rng(2026)
    mu, reps, n = 0.3, 600, 300
    est, cover, raw_cover, vrf = [], 0, 0, []
    for _ in range(reps):
        z = r.normal(size=(n, 2))
        y = mu + z @ [0.6, 0.8] + r.normal(size=n)
        e = var.cv_estimate(y, z)
        est.append(e.adj)
        cover += e.adj_lo <= mu <= e.adj_hi
        raw_cover += e.raw_lo <= mu <= e.raw_hi
        vrf.append(e.vrf)
    est = np.array(est)
    assert abs(est.mean() - mu) < 4 * est.std() / np.sqrt(reps)
    assert 0.93 <= cover / reps <= 0.97
    assert 0.93 <= raw_cover / reps <= 0.97
    assert np.median(vrf) == pytest.approx(2.0, rel=0.15)
    # a useless covariate costs (almost) nothing: VRF near 1, never a big loss
    y = mu + r.normal(size=2000)
    e = var.cv_estimate(y, r.normal(size=(2000, 8)))
    assert 0.97 < e.vrf < 1.03


def test_estimate_fields():
    e = var.cv_estimate(np.array([1.0, 2.0, 3.0, 4.0] * 10), np.zeros((40, 2)))
    assert e.raw == pytest.approx(2.5) and e.adj == pytest.approx(2.5)
    assert e.vrf == pytest.approx(1.0) and e.games == 80 and e.equivalent_games == pytest.approx(80)
    assert e.raw_lo < 2.5 < e.raw_hi


@pytest.mark.slow
def test_real_matchups_raw_and_adjusted_agree_across_seeds(tmp_path):
    # early-knock vs simple, 24 independent runs (seeds) of 1,000 games.  On each seed the adjusted
    # margin lies inside the raw 95% interval (they estimate the same thing; the adjustment is a
    # small, mean-zero correction).  Taking the mean of all 24 raw estimates as the truth (a 24x
    # larger sample), the adjusted 95% intervals cover it on >= 20 of 24 seeds (expected 22.8;
    # P(<= 19) is under 1% for honest intervals), and the mean of adjusted - raw over seeds is
    # within 4 standard errors of 0 (no bias).
    from arena.run import run_tournament
    from arena.run.schedule import Inline
    from arena.run.store import RunStore

    raw, adj, lo, hi, rlo, rhi = [], [], [], [], [], []
    for seed in range(24):
        cfg = dict(
            name=f"s{seed}",
            results_dir=str(tmp_path),
            bots=["early-knock", "simple"],
            games_per_pair=1000,
            chunk_size=500,
            seed=1000 + seed,
        )
        r = run_tournament(cfg, schedule=Inline(), progress=False)
        (pt,) = var.pair_table(RunStore(r.run_dir).chunks(var.GAME_COLS, hands=var.HAND_COLS)).values()
        e = var.cv_estimate(pt.margin, pt.z)
        raw.append(e.raw)
        adj.append(e.adj)
        lo.append(e.adj_lo)
        hi.append(e.adj_hi)
        rlo.append(e.raw_lo)
        rhi.append(e.raw_hi)
    raw, adj = np.array(raw), np.array(adj)
    assert np.all((np.array(rlo) <= adj) & (adj <= np.array(rhi)))
    truth = raw.mean()
    assert np.sum((np.array(lo) <= truth) & (truth <= np.array(hi))) >= 20
    d = adj - raw
    assert abs(d.mean()) < 4 * d.std(ddof=1) / np.sqrt(len(d))


def test_streamed_sums_give_the_array_estimate():
    # CVSums (flat memory, for reports) and cv_estimate on the arrays agree to rounding.
    r = np.random.default_rng(5)
    n = 1000
    z = r.normal(size=(n, len(var.COVARIATES)))
    margin = 3.0 + z[:, 0] * 10 + r.normal(size=n) * 20
    score = 0.5 + z[:, 1] * 0.1 + r.normal(size=n) * 0.3
    pairs = np.arange(n)
    cs = var.CVSums()
    for lo in range(0, n, 250):  # four "chunks"
        s = slice(lo, lo + 250)
        cs.add(var.PairTable("m", "a", "b", pairs[s], margin[s], score[s], z[s], np.full(250, 2)))
    for what, y in (("margin", margin), ("score", score)):
        a = cs.estimate(what)
        b = var.cv_estimate(y, z)
        for f in ("raw", "raw_lo", "raw_hi", "adj", "adj_lo", "adj_hi", "vrf"):
            assert getattr(a, f) == pytest.approx(getattr(b, f), rel=1e-6), (what, f)
    assert cs.games == 2 * n


def test_run_report_shows_raw_and_adjusted(tmp_path):
    # A run with hands gets the control-variate section: raw and adjusted margins with intervals,
    # the VRF and the equivalent games, one row per matchup (200 pairs: enough to fit the slopes).
    from arena.analysis.report import write_report
    from arena.run import run_tournament
    from arena.run.schedule import Inline
    from arena.run.store import RunStore

    cfg = dict(name="r", results_dir=str(tmp_path), bots=["early-knock", "simple"], games_per_pair=400, chunk_size=200)
    run_tournament(cfg, schedule=Inline(), progress=False)
    files = write_report(tmp_path / "r")
    md = files["report_md"].read_text()
    assert "the deal control variate" in md and "equivalent games" in md
    section = md.split("the deal control variate")[1]
    line = next(x for x in section.splitlines() if x.startswith("| early-knock vs simple"))
    name, raw, raw_ci, adj, adj_ci, vrf, equivalent = (c.strip() for c in line.strip(" |").split(" | "))
    # The numbers are the streamed estimate's, computed here again from the stored chunks.
    e = var.cv_sums(RunStore(tmp_path / "r").chunks(var.GAME_COLS, hands=var.HAND_COLS))["early-knock vs simple"]
    e = e.estimate("margin")
    assert name == "early-knock vs simple" and e.games == 400 and e.pairs == 200 and e.adjusted
    assert (raw, raw_ci) == (f"{e.raw:+.2f}", f"[{e.raw_lo:+.2f}, {e.raw_hi:+.2f}]")
    assert (adj, adj_ci) == (f"{e.adj:+.2f}", f"[{e.adj_lo:+.2f}, {e.adj_hi:+.2f}]")
    assert (vrf, equivalent) == (f"{e.vrf:.3f}", f"{int(400 * e.vrf):,}")
    # Raw is the matchups table's margin and interval (every pair complete: the same t interval on pair means).
    pair = pd.read_csv(files["pairs"]).set_index("matchup").loc["early-knock vs simple"]
    assert (e.raw, e.raw_lo, e.raw_hi) == pytest.approx(
        (pair["margin"], pair["margin_ci_low"], pair["margin_ci_high"]), rel=1e-9
    )
    # VRF is what it says: the adjusted interval is the raw one narrowed by sqrt(VRF).
    assert (e.adj_hi - e.adj_lo) == pytest.approx((e.raw_hi - e.raw_lo) / np.sqrt(e.vrf), rel=1e-9)


def _fitted(n: int):
    """(scores, covariates, the in-memory estimate, the streamed one) of n synthetic pairs whose score
    follows the first covariate."""
    r = np.random.default_rng(n)
    z = r.normal(size=(n, len(var.COVARIATES)))
    score = np.clip(0.5 + z[:, 0] * 0.2 + r.normal(size=n) * 0.3, 0, 1)
    cs = var.CVSums()
    cs.add(var.PairTable("m", "a", "b", np.arange(n), score * 10, score, z, np.full(n, 2)))
    return score, z, var.cv_estimate(score, z), cs.estimate("score")


@pytest.mark.parametrize("n", [20, 60, 400])
def test_too_few_pairs_to_fit_the_slopes_leave_the_estimate_raw(n):
    """A 40-game sweep point (20 pairs, 10 per fold) fitted eight slopes on ten pairs: its "adjusted" win
    rate came out at -0.01 with an interval from -2.9 to 2.8.  Below ten pairs per covariate in the
    fitting fold there is no adjustment, in the arrays and in the streamed sums alike."""
    score, z, est, streamed = _fitted(n)
    if n // 2 < var.MIN_PAIRS_PER_COVARIATE * len(var.COVARIATES) + 2:
        assert est.adj == est.raw and est.adj_lo == est.raw_lo and est.vrf == pytest.approx(1.0)
        assert streamed.adj == pytest.approx(streamed.raw) and 0 <= est.adj_lo <= est.adj_hi <= 1
        assert not est.adjusted and not streamed.adjusted  # said, so no table shows the 1.0 as measured
        assert n < var.PAIRS_TO_ADJUST
    else:  # enough pairs: the slope on the real covariate is fitted and the interval narrows
        assert est.vrf > 1.1 and streamed.vrf > 1.1
        assert est.adjusted and streamed.adjusted and n >= var.PAIRS_TO_ADJUST


def test_a_matchup_too_small_to_adjust_says_not_adjusted_instead_of_a_vrf_of_1(tmp_path):
    """20 pairs are too few to fit the eight slopes: the report's row shows the raw margin and "not adjusted",
    not the raw margin again as "adjusted" with a VRF of 1.000 and equivalent games equal to the games."""
    from arena.analysis.report import write_report
    from arena.run import run_tournament
    from arena.run.schedule import Inline

    cfg = dict(name="r", results_dir=str(tmp_path), bots=["early-knock", "simple"], games_per_pair=40, chunk_size=40)
    run_tournament(cfg, schedule=Inline(), progress=False)
    md = write_report(tmp_path / "r")["report_md"].read_text()
    section = md.split("the deal control variate")[1]
    assert f"fewer than {var.PAIRS_TO_ADJUST} pairs" in section
    line = next(x for x in section.splitlines() if x.startswith("| early-knock vs simple"))
    cells = [c.strip() for c in line.strip(" |").split(" | ")]
    assert cells[3:] == ["not adjusted", "-", "-", "-"], line
    assert cells[1] != "-" and cells[2].startswith("[")  # the raw margin and its interval stay


def test_a_matchup_is_adjusted_in_every_fold_or_in_none_at_the_threshold():
    """163 pairs split 82 + 81: the half fitted on 81 pairs could not be adjusted, the other half was, and the
    half-adjusted estimate was called adjusted (with a VRF) where the docs say fewer than 164 pairs are not."""
    assert var.PAIRS_TO_ADJUST == 164
    for n in (163, 164):
        score, z, est, streamed = _fitted(n)
        if n < var.PAIRS_TO_ADJUST:
            assert not est.adjusted and not streamed.adjusted
            assert np.array_equal(var.adjusted_values(score, z), score)  # no fold adjusted, not one of two
            assert (est.adj, est.adj_lo, est.adj_hi) == (est.raw, est.raw_lo, est.raw_hi)
            assert streamed.adj == pytest.approx(streamed.raw) and streamed.vrf == pytest.approx(1.0)
        else:  # both folds fitted: the adjustment touches every pair, and both paths agree
            assert est.adjusted and streamed.adjusted
            assert np.all(var.adjusted_values(score, z) != score)
            assert est.vrf > 1.1 and streamed.vrf == pytest.approx(est.vrf, rel=1e-6)
