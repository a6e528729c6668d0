"""The analysis's distribution functions: Student's t, normal and beta quantiles, and the sign test.

Every interval and test the analysis prints takes its quantile from here, so
they agree.  They come from :mod:`scipy.special` (the functions behind
``scipy.stats.t.ppf``, ``norm.ppf``, ``beta.ppf`` and ``binom.cdf``), imported when first
called.  Importing ``scipy.stats`` (and ``scipy.optimize`` with it) costs
about a second of CPU, and every ``arena run`` prints its tables when it
ends, so a short run spent more time importing statistics than playing.
``scipy.special`` costs a third of that.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["beta_quantile", "normal_quantile", "sign_test_p", "t_quantile"]


def t_quantile(conf: float, df: Any) -> Any:
    """Student's t quantile for a two-sided interval of level ``conf`` on ``df`` degrees of freedom.

    Equal to ``scipy.stats.t.ppf(0.5 + conf / 2, df)``; a float for a scalar ``df``, an array for an array.
    """
    from scipy.special import stdtrit

    q = stdtrit(df, 0.5 + conf / 2.0)
    return float(q) if np.ndim(q) == 0 else q


def normal_quantile(conf: float) -> float:
    """The normal quantile for a two-sided interval of level ``conf`` (``scipy.stats.norm.ppf(0.5 + conf / 2)``)."""
    from scipy.special import ndtri

    return float(ndtri(0.5 + conf / 2.0))


def beta_quantile(q: float, a: Any, b: Any) -> Any:
    """The ``q`` quantile of the beta distribution ``Beta(a, b)``: ``scipy.stats.beta.ppf(q, a, b)``.

    For whole ``a = x`` and ``b = n - x + 1`` it is the exact (Clopper-Pearson) one-sided lower bound of a
    binomial proportion after ``x`` successes in ``n``: the ``p`` with ``P(Binomial(n, p) >= x) = q``.
    0 where ``a <= 0`` (no success bounds ``p`` away from 0); a float for scalars, an array for arrays.
    """
    from scipy.special import betaincinv

    a, b = np.broadcast_arrays(np.asarray(a, dtype=float), np.asarray(b, dtype=float))
    ok = (a > 0) & (b > 0)
    with np.errstate(invalid="ignore"):
        out = np.where(ok, betaincinv(np.where(ok, a, 1.0), np.where(ok, b, 1.0), q), 0.0)
    out = np.where(np.isnan(a) | np.isnan(b) | (b <= 0), np.nan, out)
    return float(out) if out.ndim == 0 else out


def sign_test_p(wins: int, losses: int) -> float:
    """Two-sided sign test of ``wins`` against ``losses`` (ties left out): the binomial test at p = 1/2.

    ``scipy.stats.binomtest(wins, wins + losses, 0.5).pvalue``: at p = 1/2 the
    distribution is symmetric, so the outcomes as unlikely as the one seen
    are the two tails beyond ``min(wins, losses)``, and the p-value is twice
    one tail, at most 1.  NaN when there is no decided unit.
    """
    from scipy.special import bdtr

    n = wins + losses
    if n <= 0:
        return float("nan")
    if wins == losses:
        return 1.0
    return float(min(1.0, 2.0 * bdtr(min(wins, losses), n, 0.5)))
