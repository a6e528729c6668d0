"""Building blocks for search bots: sample a deal consistent with a view, play it out.

A Monte Carlo bot guesses the hidden cards (the opponent's unknown cards and
the stock order) many times and plays each guess forward with fast rollout
policies.  Both steps are compiled kernels a bot's own compiled decision
function can call::

    st = np.empty(S_SIZE, np.int64)
    sample_state(view, rng, st)              # a full state the bot can't tell from the real one
    apply_action(st, rules, candidate)       # try a move ...
    play_out(st, rules, (simple functions), ...)   # ... and see how the hand ends

Everything :func:`sample_state` uses comes from the view, so a sampled state
rebuilds exactly the same view for the bot (the tests check this); the
cards the opponent took from the pile and still holds are placed in its
hand, the rest is dealt at random from the unseen cards.
"""

from __future__ import annotations

import numpy as np

from arena._jit import jit
from arena.botlib import opponent_known  # noqa: F401  (part of the search toolkit)
from arena.cards import popcount
from arena.layout import (
    OUT_NONE,
    R_SIZE,
    S_CUR,
    S_DEALER,
    S_DECK,
    S_DISCARDED,
    S_ERROR,
    S_HAND,
    S_HAND_NO,
    S_JUST_TAKEN,
    S_KNOCK_LIMIT,
    S_KNOCKER,
    S_MULT,
    S_OUTCOME,
    S_PASSED,
    S_PHASE,
    S_PILE,
    S_PILE_N,
    S_SCORE,
    S_STOCK_POS,
    S_TAKEN,
    S_TURN,
    S_UPCARD,
    S_UPCARD_TAKER,
    V_DECISION,
    V_HAND,
    V_HAND_NO,
    V_IS_DEALER,
    V_JUST_TAKEN,
    V_KNOCK_LIMIT,
    V_MULT,
    V_MY_DISCARDED,
    V_MY_PASSED,
    V_MY_SCORE,
    V_MY_TAKEN,
    V_OPP_DISCARDED,
    V_OPP_PASSED,
    V_OPP_SCORE,
    V_OPP_TAKEN,
    V_PILE,
    V_PILE_N,
    V_RULES,
    V_SEAT,
    V_SIZE,
    V_STOCK_N,
    V_TURN,
    V_UPCARD,
)
from arena.play import C_SIZE, play_hand
from arena.rng import rand_below


@jit
def rules_of(view):
    """The rules array carried in a view."""
    r = np.empty(R_SIZE, dtype=np.int64)
    for i in range(R_SIZE):
        r[i] = view[V_RULES + i]
    return r


@jit
def sample_state(view, rng, st):
    """Fill ``st`` with a full game state consistent with ``view`` (random hidden cards)."""
    st[:] = 0
    p = view[V_SEAT]
    o = 1 - p
    n_pile = view[V_PILE_N]
    pile = np.int64(0)
    for i in range(n_pile):
        c = view[V_PILE + i]
        st[S_PILE + i] = c
        pile |= np.int64(1) << c
    st[S_PILE_N] = n_pile
    mine = view[V_HAND]
    known = view[V_OPP_TAKEN] & ~pile & ~mine
    unseen = np.empty(52, dtype=np.int64)
    n = 0
    for c in range(52):
        if not ((mine | pile | known) >> c) & 1:
            unseen[n] = c
            n += 1
    # Partial Fisher-Yates: the first cards go to the opponent, the rest is the stock.
    for i in range(n - 1, 0, -1):
        j = rand_below(rng, i + 1)
        t = unseen[i]
        unseen[i] = unseen[j]
        unseen[j] = t
    need = 10 - popcount(known)
    opp = known
    for i in range(need):
        opp |= np.int64(1) << unseen[i]
    stock_n = view[V_STOCK_N]
    pos = 52 - stock_n
    st[S_STOCK_POS] = pos
    for i in range(stock_n):
        st[S_DECK + pos + i] = unseen[need + i]
    st[S_HAND + p] = mine
    st[S_HAND + o] = opp
    st[S_PHASE] = view[V_DECISION]
    st[S_CUR] = p
    st[S_DEALER] = p if view[V_IS_DEALER] else o
    st[S_TURN] = view[V_TURN]
    st[S_KNOCK_LIMIT] = view[V_KNOCK_LIMIT]
    st[S_MULT] = view[V_MULT]
    st[S_JUST_TAKEN] = view[V_JUST_TAKEN]
    st[S_TAKEN + p] = view[V_MY_TAKEN]
    st[S_TAKEN + o] = view[V_OPP_TAKEN]
    st[S_DISCARDED + p] = view[V_MY_DISCARDED]
    st[S_DISCARDED + o] = view[V_OPP_DISCARDED]
    st[S_PASSED + p] = view[V_MY_PASSED]
    st[S_PASSED + o] = view[V_OPP_PASSED]
    st[S_SCORE + p] = view[V_MY_SCORE]
    st[S_SCORE + o] = view[V_OPP_SCORE]
    st[S_HAND_NO] = view[V_HAND_NO]
    st[S_UPCARD] = view[V_UPCARD]
    st[S_UPCARD_TAKER] = -1
    st[S_KNOCKER] = -1
    st[S_OUTCOME] = OUT_NONE


@jit
def play_out(st, rules, bot0, bot1, params0, params1, mem0, mem1, rng0, rng1):
    """Play the hand in ``st`` to its end with two bots (tuples of 6 decision functions).

    Returns the error code of an illegal rollout decision (0 normally); the
    outcome and points are then in ``st``.
    """
    view = np.empty(V_SIZE, dtype=np.int64)
    log = np.empty(0, dtype=np.int64)
    counters = np.zeros(C_SIZE, dtype=np.int64)
    play_hand(st, rules, bot0, bot1, params0, params1, mem0, mem1, rng0, rng1, view, log, 0, counters)
    return st[S_ERROR]
