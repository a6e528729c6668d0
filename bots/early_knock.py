"""Early knocker: sheds high unmatched cards, draws from the pile only for a clear gain, knocks at once.

Idea
----
The seeds' classic advice: get your deadwood down fast and knock before the
opponent has built anything, rather than wait for gin.

* Discard: among the cards whose discard leaves within ``slack`` points of
  the least deadwood, drop the one that costs least, where a card's cost is
  the deadwood left plus ``keep_outs`` points for each live out it takes
  away (an unseen card that would have made a meld with it).  So unmatched
  high cards go first, and only a near-meld that can still be completed is
  worth a few points of deadwood.  No lookahead over the unseen cards: the
  bot is cheap and decisive.
* Draw: take the discard-pile card only when keeping it lowers the
  deadwood by at least ``take_gain`` points (after the best discard).
* Knock as soon as the deadwood is at most ``knock_at`` (10 = the standard
  limit).  Late in the hand the opponent has had time to build melds and
  undercut, so the threshold falls by ``late_drop`` points, in proportion
  to the cards drawn from the stock, by the time the stock runs out.
"""

import numpy as np

from arena.botkit.lib import discard_options, discardable, meld_completers, unseen_cards
from arena.engine._jit import jit
from arena.engine.cards import lsb, popcount
from arena.engine.layout import V_HAND, V_STOCK_N, V_TOP
from arena.engine.melds import best_discard, deadwood

PARAMS: dict[str, float] = {
    "knock_at": 10.0,  # knock with this much deadwood or less (early in the hand)
    "late_drop": 6.0,  # the threshold falls by this much as the stock runs out
    "take_gain": 4.0,  # take the pile card only if it lowers deadwood by at least this
    "keep_outs": 0.5,  # points each live out of a near-meld is worth when discarding
    "slack": 3.0,  # discards considered: within this many points of the least deadwood
}
MEMORY = 1

_KNOCK_AT, _LATE_DROP, _TAKE_GAIN, _KEEP_OUTS, _SLACK = range(5)
#: Stock size after the deal (52 - 2 * 10 - upcard) and when a hand dies.
_FULL_STOCK = 31
_DEAD_STOCK = 2


def validate_params(d: dict) -> None:
    """Raise ValueError naming the first parameter out of range."""
    if not 0 <= d["knock_at"] <= 10:
        raise ValueError(f"knock_at = {d['knock_at']} must be between 0 and 10 (deadwood points)")
    if not 0 <= d["late_drop"] <= 10:
        raise ValueError(f"late_drop = {d['late_drop']} must be between 0 and 10 (deadwood points)")
    for key in ("take_gain", "keep_outs", "slack"):
        if d[key] < 0:
            raise ValueError(f"{key} = {d[key]} must be >= 0")


@jit
def knock_threshold(stock, params):
    """Most deadwood the bot knocks with when ``stock`` cards are left."""
    used = (_FULL_STOCK - stock) / (_FULL_STOCK - _DEAD_STOCK)
    return params[_KNOCK_AT] - params[_LATE_DROP] * min(1.0, max(0.0, used))


@jit
def _wants_pile(view, params):
    hand = view[V_HAND]
    top = view[V_TOP]
    if top < 0:
        return 0
    _, with_top = best_discard(hand | (np.int64(1) << top), top)
    return 1 if deadwood(hand) - with_top >= params[_TAKE_GAIN] else 0


@jit
def take_upcard(view, params, memory, rng):
    return _wants_pile(view, params)


@jit
def draw(view, params, memory, rng):
    return _wants_pile(view, params)


@jit
def big_gin(view, params, memory, rng):
    return 1


@jit
def discard(view, params, memory, rng):
    hand = view[V_HAND]
    allowed = discardable(view)
    out = np.empty(52, dtype=np.int64)
    least = discard_options(view, out)
    live_outs = meld_completers(hand) & unseen_cards(view)
    best_card = -1
    best_score = 1e18
    m = allowed
    while m:  # the cards this player may discard, lowest first
        c = lsb(m)
        m &= m - 1
        if out[c] <= least + params[_SLACK]:
            lost = popcount(live_outs & ~meld_completers(hand & ~(np.int64(1) << c)))
            score = out[c] + params[_KEEP_OUTS] * lost - 0.001 * (c % 13)
            if score < best_score:
                best_score = score
                best_card = c
    return best_card


@jit
def knock(view, params, memory, rng):
    return 1 if deadwood(view[V_HAND]) <= knock_threshold(view[V_STOCK_N], params) else 0
