"""Gin chaser: keeps flexible middle cards and near-melds, knocks only near gin until the stock runs low.

Idea
----
Most players knock as soon as they can.  This bot does not: while the stock
is long it knocks only with ``gin_at`` deadwood or less (0 = gin only) and
keeps building, so it scores gin bonuses and, when the opponent knocks
first with a few points, often holds so little deadwood that it undercuts
(bonus 25).  Below ``relax_at`` cards in the stock the threshold rises by
``relax_step`` points per card drawn, up to ``knock_at``, because a hand
about to die scores nothing.

Discards look one draw ahead: for each discard within ``slack`` points of
the least deadwood, it averages over the cards it has not seen (not in its
hand, not in the pile, not known to be with the opponent) the deadwood it
would reach after drawing that card and discarding again
(:func:`arena.botkit.lib.mean_deadwood_after_draw`).  ``lookahead`` weighs that
against the deadwood right now, so near-melds with live outs are kept and
dead ones are shed.  Giving up a middle rank (which fits more runs than an
Ace or a King) costs up to ``middle`` extra points.

It takes the discard-pile card when keeping it leaves no more deadwood than
a stock draw would on average (minus ``draw_margin``).
"""

import numpy as np

from arena.botkit.lib import (
    discard_options,
    discardable,
    mean_deadwood_after_draw,
    top_beats_stock,
    unseen_cards,
)
from arena.engine._jit import jit
from arena.engine.cards import lsb
from arena.engine.layout import V_HAND, V_STOCK_N
from arena.engine.melds import deadwood

PARAMS: dict[str, float] = {
    "gin_at": 0.0,  # most deadwood it knocks with while the stock is long (0 = gin only)
    "relax_at": 8.0,  # stock size below which the threshold starts to rise
    "relax_step": 3.0,  # points the threshold rises per card drawn below relax_at
    "knock_at": 10.0,  # the threshold never rises above this
    "lookahead": 1.0,  # weight of the expected deadwood after one more draw (0 = plain deadwood)
    "middle": 0.5,  # extra cost (points) of discarding a middle rank (7) vs an Ace or King
    "slack": 3.0,  # discards considered: within this many points of the least deadwood
    "draw_margin": 0.0,  # take the pile card if it beats a stock draw's expectation by this much
}
MEMORY = 1

_GIN_AT, _RELAX_AT, _RELAX_STEP, _KNOCK_AT, _LOOKAHEAD, _MIDDLE, _SLACK, _DRAW_MARGIN = range(8)


def validate_schedule(d: dict) -> None:
    """Raise ValueError naming the first of the knock schedule's ``gin_at, relax_at, relax_step, knock_at``
    out of range (also for the bots that roll out with this schedule)."""
    for key in ("gin_at", "knock_at"):
        if not 0 <= d[key] <= 10:
            raise ValueError(f"{key} = {d[key]} must be between 0 and 10 (deadwood points)")
    if not 0 <= d["relax_at"] <= 31:
        raise ValueError(f"relax_at = {d['relax_at']} must be between 0 and 31 (cards in the stock)")
    if d["relax_step"] < 0:
        raise ValueError(f"relax_step = {d['relax_step']} must be >= 0")


def validate_params(d: dict) -> None:
    """Raise ValueError naming the first parameter out of range."""
    validate_schedule(d)
    if d["gin_at"] > d["knock_at"]:
        raise ValueError(f"gin_at = {d['gin_at']} must not exceed knock_at = {d['knock_at']}")
    for key in ("lookahead", "middle", "slack"):
        if d[key] < 0:
            raise ValueError(f"{key} = {d[key]} must be >= 0")
    if d["lookahead"] > 3:
        raise ValueError(f"lookahead = {d['lookahead']} must be at most 3")


@jit
def knock_schedule(stock, params, first):
    """Most deadwood to knock with when ``stock`` cards are left, by the schedule
    whose ``gin_at, relax_at, relax_step, knock_at`` are ``params[first:first + 4]``
    (``bots/monte_carlo.py`` keeps the same four at another offset)."""
    thr = params[first]
    if stock < params[first + 1]:
        thr += params[first + 2] * (params[first + 1] - stock)
    return min(thr, params[first + 3])


@jit
def knock_threshold(stock, params):
    """Most deadwood the bot knocks with when ``stock`` cards are left."""
    return knock_schedule(stock, params, _GIN_AT)


@jit
def take_upcard(view, params, memory, rng):
    return 1 if top_beats_stock(view, params[_DRAW_MARGIN]) else 0


@jit
def draw(view, params, memory, rng):
    return 1 if top_beats_stock(view, params[_DRAW_MARGIN]) else 0


@jit
def big_gin(view, params, memory, rng):
    return 1


@jit
def discard_score(hand, card, left, unseen, lookahead, middle):
    """The cost of discarding ``card`` from ``hand`` (lower is better; ``left`` is
    the deadwood it leaves): ``left``, corrected by ``lookahead`` times the
    change one more draw from ``unseen`` is expected to make, plus up to
    ``middle`` for giving up a middle rank.  ``bots/monte_carlo.py`` ranks
    its candidates with it."""
    rank = card % 13
    score = float(left)
    if lookahead > 0:
        after = mean_deadwood_after_draw(hand & ~(np.int64(1) << card), unseen)
        score += lookahead * (after - left)
    score += middle * (6 - abs(rank - 6)) / 6.0
    return score - 0.001 * rank  # ties: shed the higher card


@jit
def discard_scores(view, params, scores):
    """Fill ``scores[c]`` with the cost of discarding card ``c`` (:func:`discard_score`) for every
    card the bot considers, infinity for the rest; the bot discards the cheapest (the lowest card on a
    tie).  ``examples/rl/train_learned.py`` teaches a network from these costs."""
    hand = view[V_HAND]
    out = np.empty(52, dtype=np.int64)
    least = discard_options(view, out)
    unseen = unseen_cards(view)
    for c in range(52):
        scores[c] = np.inf
    m = discardable(view)
    while m:  # the cards this player may discard
        c = lsb(m)
        m &= m - 1
        if out[c] <= least + params[_SLACK]:
            scores[c] = discard_score(hand, c, out[c], unseen, params[_LOOKAHEAD], params[_MIDDLE])


@jit
def discard(view, params, memory, rng):
    scores = np.empty(52, dtype=np.float64)
    discard_scores(view, params, scores)
    best_card = -1
    best_score = 1e18
    for c in range(52):  # lowest first: a tie keeps the lower card
        if scores[c] < best_score:
            best_score = scores[c]
            best_card = c
    return best_card


@jit
def knock(view, params, memory, rng):
    return 1 if deadwood(view[V_HAND]) <= knock_threshold(view[V_STOCK_N], params) else 0
