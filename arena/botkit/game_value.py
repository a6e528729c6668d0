"""What points are worth at a score: the chance of winning the game from it.

A hand's points matter only through the game: 20 points are worth more when
they reach the target.  This is a model of an even game built from how many
points a decided hand scores, so it says how valuable points are at a given
score, not who is better.  monte-carlo values its rollouts with it
(:func:`bots.monte_carlo.hand_value`) and the luck analysis
(:mod:`arena.analysis.luck`) turns a hand's points into game equity with it;
it lives in the bots' toolkit so both, and any user's bot, read one table.
"""

import numpy as np

from arena.engine._jit import jit

#: Points the winner of a decided hand scores, in 5-point bins (0-4, 5-9, ..,
#: 95-99, 100+): 50,000 games of gin-chasing against simple under ``eaai``
#: (``python scripts/bench_monte_carlo.py points`` measures it again).  Only
#: the shape matters: it sets how far a typical hand moves a score.
HAND_POINTS = np.array(
    [0.1694, 0.1419, 0.0904, 0.0601, 0.0393, 0.2476, 0.1201, 0.0493, 0.0307, 0.019, 0.0127]
    + [0.0081, 0.0048, 0.0027, 0.0015, 0.0011, 0.0006, 0.0004, 0.0002, 0.0001, 0.0001]
)
#: Largest number of points still needed that the table covers (targets up to 200).
MAX_NEED = 200


@jit
def _win_chance_table(points, max_need):
    """``W[i, j]``: chance of winning a game needing ``i`` points against one needing ``j``.

    Each decided hand is won by either player with chance 1/2 and scores
    ``5 k + 2`` points with chance ``points[k]`` (the last bin 100): a model
    of an even game, so the table says only how valuable points are at a
    given score, not who is better.  Dead hands change nothing and drop out.
    """
    n = max_need + 1
    w = np.zeros((n, n))
    total = points.sum()
    for i in range(1, n):
        for j in range(1, n):
            v = 0.0
            for k in range(points.shape[0]):
                x = 5 * k + 2 if k < points.shape[0] - 1 else 100
                q = points[k] / total
                v += 0.5 * q * (1.0 if x >= i else w[i - x, j])
                v += 0.5 * q * (0.0 if x >= j else w[i, j - x])
            w[i, j] = v
    return w


WIN_CHANCE = _win_chance_table(HAND_POINTS, MAX_NEED)


@jit
def win_chance(need_me, need_opp):
    """Chance of winning the game when I still need ``need_me`` points and the opponent ``need_opp``."""
    if need_me <= 0:
        return 1.0
    if need_opp <= 0:
        return 0.0
    return WIN_CHANCE[min(need_me, MAX_NEED), min(need_opp, MAX_NEED)]
