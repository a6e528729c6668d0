"""Quasi-variances: one uncertainty per bot that serves for comparing any two ratings.

Ratings are only defined up to a shift, so a rating's own standard error
depends on what it is measured against.  Against the mean of the field, every
bot's error carries a share of the worst-determined bot's: in a field with
``random`` (whose gap to everyone is bounded only by the prior), each of the
other bots read +-45 Elo on the default run though any two of them were known to within +-3.
Against one named bot, that bot reads +-0 and its uncertainty moves to all the
others.  Neither answers the question a reader brings to a ratings table:
*are these two bots different?*

Quasi-variances (Firth and de Menezes, Biometrika 91, 2004) do: numbers
``q_i`` such that the variance of every difference ``theta_i - theta_j`` is
about ``q_i + q_j``.  They exist exactly when the ratings' errors are
uncorrelated apart from the common shift (three bots always; a balanced
round-robin nearly), and are otherwise the closest such numbers; the largest
relative error of a difference's standard error is returned with them so that
a report can say how good the approximation is.
"""

from __future__ import annotations

import numpy as np


def contrast_variances(cov: np.ndarray) -> np.ndarray:
    """``V[i, j] = var(theta_i - theta_j)`` from any covariance of the ratings (its anchor cancels)."""
    d = np.diag(cov)
    return d[:, None] + d[None, :] - 2.0 * cov


def quasi_variances(cov: np.ndarray, groups: np.ndarray | None = None) -> tuple[np.ndarray, float]:
    """The quasi-variances of ratings with covariance ``cov``, and the approximation's largest relative error.

    ``groups`` labels bots whose ratings are comparable (a connected field of
    matchups); differences across groups are undefined and not fitted.  The fit
    minimises the squared log ratio of ``q_i + q_j`` to ``V[i, j]`` over the pairs
    of a group (``q = exp(u)``, so every quasi-variance is positive).  A group of
    two bots has one difference and two unknowns: each gets half its variance.
    The error returned is ``max |sqrt((q_i + q_j) / V[i, j]) - 1|`` over those
    pairs, a relative error of a difference's standard error.
    """
    n = cov.shape[0]
    groups = np.zeros(n, dtype=np.int64) if groups is None else np.asarray(groups)
    V = contrast_variances(cov)
    q = np.zeros(n)
    worst = 0.0
    for g in np.unique(groups):
        idx = np.flatnonzero(groups == g)
        if idx.size < 2:
            continue
        i, j = np.triu_indices(idx.size, 1)
        v = np.maximum(V[np.ix_(idx, idx)][i, j], 1e-300)
        qg = _fit(i, j, np.log(v), idx.size)
        q[idx] = qg
        worst = max(worst, float(np.max(np.abs(np.sqrt((qg[i] + qg[j]) / v) - 1.0))))
    return q, worst


def _fit(i: np.ndarray, j: np.ndarray, log_v: np.ndarray, m: int) -> np.ndarray:
    if m == 2:
        return np.full(2, np.exp(log_v[0]) / 2.0)
    if m == 3:  # three differences, three unknowns: exact when all three come out positive
        v = np.exp(log_v)  # pairs (0,1), (0,2), (1,2)
        exact = 0.5 * np.array([v[0] + v[1] - v[2], v[0] + v[2] - v[1], v[1] + v[2] - v[0]])
        if (exact > 0).all():
            return exact
    from scipy import optimize  # here, not at the top: see arena.analysis.quantiles

    def loss(u: np.ndarray) -> tuple[float, np.ndarray]:
        e = np.exp(u)
        s = e[i] + e[j]
        r = np.log(s) - log_v
        w = 2.0 * r / s
        grad = np.bincount(i, weights=w * e[i], minlength=m) + np.bincount(j, weights=w * e[j], minlength=m)
        return float(r @ r), grad

    # start from the diagonal a field of uncorrelated ratings would have: q_i = mean_j V_ij - mean V / 2
    v = np.exp(log_v)
    row = (np.bincount(i, weights=v, minlength=m) + np.bincount(j, weights=v, minlength=m)) / (m - 1)
    start = np.log(np.maximum(row - v.mean() / 2.0, v.min() / 4.0))
    res = optimize.minimize(loss, start, jac=True, method="L-BFGS-B", options={"gtol": 1e-12, "ftol": 1e-15})
    return np.exp(res.x)
