"""Discard tracker: remembers every card seen and discards what the opponent is least likely to use.

Idea
----
Everything the opponent reveals is in the view for the whole hand, so this
bot rebuilds, before each discard, a probability ``q[c]`` that the opponent
holds each card c:

* 1 for cards it took from the pile and still holds (``V_OPP_TAKEN``), and
  0 for dead cards: my own hand and the whole discard pile (``V_PILE``..);
* for the other cards, the opponent's unknown hand size spread evenly over
  them, raised by up to ``low_tilt`` for low cards (players shed high cards
  first, so the hand an opponent keeps is rich in low ones), then
  multiplied by ``boost`` for the neighbours of the cards it took
  (same rank, same suit one or two ranks away: what it is collecting), and
  by ``decline`` for the neighbours of cards it discarded
  (``V_OPP_DISCARDED``), passed as upcard (``V_OPP_PASSED``) or let go when
  I discarded them (my discards it did not take): what it does not want.

The danger of a discard is the chance that the opponent holds two cards
that meld with it: the sum of ``q[a] * q[b]`` over the pairs that make a set
or a run with it (capped at 1).

A discard's score is its remaining deadwood, corrected by a one-draw
lookahead over the unseen cards (``lookahead``, as in the gin chaser), plus
``danger`` points times its danger; only discards within ``slack`` points
of the least deadwood are considered, so safety never costs much deadwood.
Because the lookahead only counts cards that are still live, a near-meld
whose completing cards are all dead adds nothing to a hand: its cards
count as plain deadwood and are shed first.

It takes the pile card when that leaves no more deadwood than a stock draw
would on average, and knocks at the first chance (``knock_at``).
"""

import numpy as np

from arena.botkit.lib import (
    discard_options,
    discardable,
    mean_deadwood_after_draw,
    opponent_known,
    top_beats_stock,
    unseen_cards,
)
from arena.engine._jit import jit
from arena.engine.cards import lsb, popcount
from arena.engine.layout import (
    V_HAND,
    V_MY_DISCARDED,
    V_OPP_DISCARDED,
    V_OPP_PASSED,
    V_OPP_TAKEN,
)
from arena.engine.melds import deadwood

PARAMS: dict[str, float] = {
    "danger": 12.0,  # points one unit of danger (sure pickup) costs a discard
    "slack": 2.0,  # discards considered: within this many points of the least deadwood
    "boost": 2.0,  # factor on the chance of holding neighbours of cards the opponent took
    "decline": 0.5,  # factor on the chance of holding neighbours of cards it let go
    "lookahead": 1.5,  # weight of the expected deadwood after one more draw
    "knock_at": 10.0,  # knock with this much deadwood or less
    "draw_margin": 0.0,  # take the pile card if it beats a stock draw's expectation by this much
    "low_tilt": 1.0,  # players keep low cards: chance x (1 + tilt) for an Ace, falling to x 1 at a six
}
MEMORY = 1

_DANGER, _SLACK, _BOOST, _DECLINE, _LOOKAHEAD, _KNOCK_AT, _DRAW_MARGIN, _LOW_TILT = range(8)
#: Cards in the opponent's hand between turns.
_OPP_HAND = 10
_RANK_SPREAD = np.int64(1 | (1 << 13) | (1 << 26) | (1 << 39))


def validate_params(d: dict) -> None:
    """Raise ValueError naming the first parameter out of range."""
    for key in ("danger", "slack", "lookahead"):
        if d[key] < 0:
            raise ValueError(f"{key} = {d[key]} must be >= 0")
    if not 0 <= d["knock_at"] <= 10:
        raise ValueError(f"knock_at = {d['knock_at']} must be between 0 and 10 (deadwood points)")
    if d["lookahead"] > 3:
        raise ValueError(f"lookahead = {d['lookahead']} must be at most 3")
    validate_model_params(d)


def validate_model_params(d: dict) -> None:
    """Raise ValueError naming the first of the opponent model's ``boost``, ``decline``, ``low_tilt`` out of range.

    Every bot that scores discards by :func:`danger_of` (``bots/marjj_style.py`` too) checks them here.
    """
    if not 1 <= d["boost"] <= 10:
        raise ValueError(f"boost = {d['boost']} must be between 1 and 10 (a factor on a probability)")
    if not 0 <= d["decline"] <= 1:
        raise ValueError(f"decline = {d['decline']} must be between 0 and 1 (a factor on a probability)")
    if not 0 <= d["low_tilt"] <= 4:
        raise ValueError(f"low_tilt = {d['low_tilt']} must be between 0 and 4")


@jit
def neighbours(card):
    """The cards that can share a meld pair with ``card``: its rank in the other
    suits, and its suit one or two ranks away."""
    r = card % 13
    s = card // 13
    m = (_RANK_SPREAD << r) & ~(np.int64(1) << card)
    for dr in (-2, -1, 1, 2):
        if 0 <= r + dr < 13:
            m |= np.int64(1) << (s * 13 + r + dr)
    return m


@jit
def holds_chance(card, known, unseen, let_go, base, boost, decline, tilt):
    """Estimated chance that the opponent holds ``card`` (see the module doc)."""
    bit = np.int64(1) << card
    if known & bit:
        return 1.0
    if not unseen & bit:
        return 0.0
    near = neighbours(card)
    r = card % 13
    value = r + 1 if r < 10 else 10
    q = base * (1.0 + tilt * max(0, 6 - value) / 5.0)
    for _ in range(popcount(known & near)):
        q *= boost
    q = min(0.95, q)
    for _ in range(popcount(let_go & near)):
        q *= decline
    return q


@jit
def danger_of(card, known, unseen, let_go, base, boost, decline, tilt):
    """Chance (capped at 1) that the opponent holds two cards melding with ``card``."""
    r = card % 13
    s = card // 13
    q0 = holds_chance(((s + 1) % 4) * 13 + r, known, unseen, let_go, base, boost, decline, tilt)
    q1 = holds_chance(((s + 2) % 4) * 13 + r, known, unseen, let_go, base, boost, decline, tilt)
    q2 = holds_chance(((s + 3) % 4) * 13 + r, known, unseen, let_go, base, boost, decline, tilt)
    p = q0 * q1 + q0 * q2 + q1 * q2
    # run partners at ranks r-2..r+2 (index 2 = the card itself)
    qs = (
        holds_chance(card - 2, known, unseen, let_go, base, boost, decline, tilt) if r >= 2 else 0.0,
        holds_chance(card - 1, known, unseen, let_go, base, boost, decline, tilt) if r >= 1 else 0.0,
        0.0,
        holds_chance(card + 1, known, unseen, let_go, base, boost, decline, tilt) if r <= 11 else 0.0,
        holds_chance(card + 2, known, unseen, let_go, base, boost, decline, tilt) if r <= 10 else 0.0,
    )
    p += qs[0] * qs[1] + qs[1] * qs[3] + qs[3] * qs[4]
    return min(p, 1.0)


@jit
def score_discards(view, allowed, slack, lookahead, danger, boost, decline, tilt, score):
    """Fill ``score[c]`` with the cost of discarding card ``c`` of ``allowed`` (lower is better; 1e18 for
    cards more than ``slack`` points above the least deadwood) and return the best card, -1 if none.

    The cost: the deadwood left, plus ``lookahead`` times the change one more
    draw from the unseen cards is expected to make, plus ``danger`` points
    times :func:`danger_of` (the model's ``boost``, ``decline`` and ``tilt``);
    ties shed the higher card.  ``bots/marjj_style.py`` scores its discards
    with it too.
    """
    hand = view[V_HAND]
    out = np.empty(52, dtype=np.int64)
    least = discard_options(view, out)
    known = opponent_known(view)
    unseen = unseen_cards(view)
    let_go = (view[V_MY_DISCARDED] & ~view[V_OPP_TAKEN]) | view[V_OPP_DISCARDED] | view[V_OPP_PASSED]
    n_unseen = popcount(unseen)
    n_known = popcount(known)
    base = (_OPP_HAND - n_known) / n_unseen if n_unseen > 0 and n_known < _OPP_HAND else 0.0
    score[:] = 1e18
    best_card = -1
    m = allowed
    while m:  # the cards this player may discard, lowest first
        c = lsb(m)
        m &= m - 1
        if out[c] > least + slack:
            continue
        s = float(out[c])
        if lookahead > 0:
            after = mean_deadwood_after_draw(hand & ~(np.int64(1) << c), unseen)
            s += lookahead * (after - out[c])
        if danger > 0:
            s += danger * danger_of(c, known, unseen, let_go, base, boost, decline, tilt)
        s -= 0.001 * (c % 13)  # ties: shed the higher card
        score[c] = s
        if best_card < 0 or s < score[best_card]:
            best_card = c
    return best_card


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
def discard(view, params, memory, rng):
    slack, lookahead, danger = params[_SLACK], params[_LOOKAHEAD], params[_DANGER]
    boost, decline, tilt = params[_BOOST], params[_DECLINE], params[_LOW_TILT]
    return score_discards(view, discardable(view), slack, lookahead, danger, boost, decline, tilt, np.empty(52))


@jit
def knock(view, params, memory, rng):
    return 1 if deadwood(view[V_HAND]) <= params[_KNOCK_AT] else 0
