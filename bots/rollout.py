"""The rollout policy of the search bots: play a hand to its end, fast, for both seats.

One kernel, :func:`rollout`, serves monte-carlo (``bots/monte_carlo.py``),
the analyzer bot and ``arena analyze`` (``bots/analyzer.py``): what a
search believes an option is worth is decided here, so this is the one
place to change how rollouts play.  It reads only the state (own hand, the
pile, what each seat took from the pile), never the other seat's hidden
cards, and takes its settings as a small array laid out as :data:`POLICY`
(``policy[MY_KNOCK]`` ..), per seat where a setting can differ:

* **draws**: Simple's rule (take the pile's top card only if it melds) or,
  with ``*_take = 1``, take it whenever it lowers the deadwood, or with
  ``*_take = 2`` marjj-style's: only if it melds *and* lowers the deadwood;
* **discards**: the card leaving the least deadwood (ties at random, never
  the card just taken); with ``*_safe = 1`` no card next to one the other
  seat took from the pile and still holds (:func:`neighbours`), unless that
  costs more than ``safe_slack`` points of deadwood (:func:`safe_discard`);
* **knocks**: at the first chance or, with ``*_knock = 1``, by gin-chasing's
  schedule (``gin_at .. knock_at``, :func:`bots.gin_chasing.knock_schedule`),
  or with ``*_knock = 2`` in marjj-style's manner: within ``knock_at`` in the
  seat's first ``knock_turns`` turns of the hand, after that by the schedule
  (gin only while the stock is long).

``my_*`` is seat ``me`` (the seat searching), ``opp_*`` the other.
monte-carlo's rollout is :data:`POLICY` with ``my_knock`` and ``my_take``
its ``rollout`` and ``rollout_take`` parameters (:func:`monte_carlo_policy`;
by default both 2, so its rollouts play its own seat as marjj-style's rules
would, which its real choices start from), the opponent Simple-like unless
the learned opponent type changes it.  The ``*_take = 2`` and
``*_knock = 2`` rules cost about what Simple's do: a meld test, and a count
of the seat's discards.
"""

import numpy as np

from arena.botkit.lib import least_deadwood_discard
from arena.engine._jit import jit
from arena.engine.cards import lsb, popcount
from arena.engine.layout import (
    PH_BIG_GIN,
    PH_DISCARD,
    PH_DONE,
    PH_KNOCK,
    S_CUR,
    S_DISCARDED,
    S_HAND,
    S_JUST_TAKEN,
    S_PHASE,
    S_PILE,
    S_PILE_N,
    S_POINTS,
    S_STOCK_POS,
    S_TAKEN,
    S_TURN,
)
from arena.engine.melds import best_discard, deadwood, in_any_meld
from arena.engine.step import apply_action
from bots import gin_chasing

#: The settings of a rollout, in the order of a policy array (monte-carlo's rollout as given).
POLICY: dict[str, float] = {
    "my_knock": 2.0,  # my seat: 0 knocks at the first chance, 1 by gin-chasing's schedule, 2 early then so
    "opp_knock": 0.0,  # the opponent: the same choice
    "my_take": 2.0,  # my seat: take a pile card 0 if it melds (Simple), 1 if it lowers the deadwood, 2 if both
    "opp_take": 0.0,  # the opponent: the same choice
    "my_safe": 0.0,  # my seat: 1 sheds no card next to one the opponent took from the pile ..
    "opp_safe": 0.0,  # the opponent: the same, next to one I took
    "safe_slack": 5.0,  # .. unless that costs more than this many points of deadwood
    "gin_at": 0.0,  # gin-chasing's knock schedule, for a seat whose *_knock is 1 ..
    "relax_at": 8.0,
    "relax_step": 3.0,
    "knock_at": 10.0,
    "knock_turns": 4.0,  # *_knock = 2: voluntary knocks (within knock_at) in the seat's first this many turns
}
(MY_KNOCK, OPP_KNOCK, MY_TAKE, OPP_TAKE, MY_SAFE, OPP_SAFE, SAFE_SLACK, GIN_AT) = range(8)
KNOCK_AT = GIN_AT + 3
KNOCK_TURNS = GIN_AT + 4
#: Length of a policy array (compiled code can read an int, not the dict).
POLICY_SIZE = len(POLICY)
#: :data:`POLICY`'s values as an array, for compiled code.
_DEFAULT_POLICY = np.array(list(POLICY.values()), dtype=np.float64)
#: A rollout longer than this many turns is stopped and scored as a dead hand
#: (two Simple policies can trade the same cards back and forth).
ROLLOUT_TURNS = 80


def validate_policy(d: dict) -> None:
    """Raise ValueError naming the first rollout setting of ``d`` (keys of :data:`POLICY`) out of range."""
    for key in ("my_knock", "opp_knock", "my_take", "opp_take"):
        if d[key] not in (0.0, 1.0, 2.0):
            raise ValueError(f"{key} = {d[key]} must be 0, 1 or 2")
    for key in ("my_safe", "opp_safe"):
        if d[key] not in (0.0, 1.0):
            raise ValueError(f"{key} = {d[key]} must be 0 or 1")
    if not 0 <= d["knock_turns"] <= 30:
        raise ValueError(f"knock_turns = {d['knock_turns']} must be between 0 and 30 (turns of a hand)")
    if d["safe_slack"] < 0:
        raise ValueError(f"safe_slack = {d['safe_slack']} must be >= 0")
    gin_chasing.validate_schedule(d)


@jit
def monte_carlo_policy(knock, take, schedule, out):
    """Fill ``out`` (laid out as :data:`POLICY`) with monte-carlo's rollout: :data:`POLICY`'s
    defaults (the opponent Simple: knocks at once, takes only melding cards, no safe discards)
    with ``my_knock`` and ``my_take`` as given and gin-chasing's schedule ``schedule[0:4]``
    (gin_at, relax_at, relax_step, knock_at)."""
    for i in range(POLICY_SIZE):
        out[i] = _DEFAULT_POLICY[i]
    out[MY_KNOCK] = knock
    out[MY_TAKE] = take
    for i in range(4):
        out[GIN_AT + i] = schedule[i]
    return out


@jit
def neighbours(cards):
    """The cards that share a rank with one of ``cards`` or are within two ranks of one in its suit."""
    out = np.int64(0)
    m = cards
    while m:
        c = lsb(m)
        m &= m - 1
        r = c % 13
        for k in range(4):
            out |= np.int64(1) << (k * 13 + r)
        for d in (-2, -1, 1, 2):
            if 0 <= r + d < 13:
                out |= np.int64(1) << (c + d)
    return out & ~cards


@jit
def safe_discard(hand, allowed, shown, card, left, slack, rng):
    """The discard to play when the other seat has shown ``shown`` (cards it took and holds).

    ``card`` leaving ``left`` deadwood is the least-deadwood discard of
    ``allowed``; the least-deadwood card among those not next to a shown
    card replaces it if it leaves at most ``slack`` points more.  Draws a
    random number only when the safe cards are a non-empty proper subset.
    """
    if not shown:
        return card
    safe = allowed & ~neighbours(shown)
    if safe and safe != allowed:
        safe_card, safe_left = least_deadwood_discard(hand, safe, rng)
        if safe_left <= left + slack:
            return safe_card
    return card


@jit
def rollout(st, rules, rng, me, policy):
    """Play the hand in ``st`` to its end by ``policy`` (laid out as :data:`POLICY`), ``me`` the searching seat.

    A hand that runs past :data:`ROLLOUT_TURNS` more turns is stopped as if
    dead (no points).  With :func:`monte_carlo_policy` this is monte-carlo's
    rollout: both seats draw and discard like Simple, the opponent knocks at
    once, ``me`` by gin-chasing's schedule.
    """
    stop = st[S_TURN] + ROLLOUT_TURNS
    while st[S_PHASE] != PH_DONE:
        if st[S_TURN] >= stop:
            st[S_POINTS] = 0
            st[S_POINTS + 1] = 0
            return
        seat = st[S_CUR]
        mine = seat == me
        hand = st[S_HAND + seat]
        phase = st[S_PHASE]
        if phase == PH_DISCARD:
            allowed = hand
            taken = st[S_JUST_TAKEN]
            if taken >= 0:
                allowed &= ~(np.int64(1) << taken)
            action, left = least_deadwood_discard(hand, allowed, rng)
            if policy[MY_SAFE if mine else OPP_SAFE] > 0:
                shown = st[S_TAKEN + 1 - seat] & st[S_HAND + 1 - seat]
                action = safe_discard(hand, allowed, shown, action, left, policy[SAFE_SLACK], rng)
        elif phase == PH_KNOCK:
            action = 1
            how = policy[MY_KNOCK if mine else OPP_KNOCK]
            if how > 0:
                dw = deadwood(hand)
                early = how > 1 and dw <= policy[KNOCK_AT] and popcount(st[S_DISCARDED + seat]) <= policy[KNOCK_TURNS]
                if not early and dw > gin_chasing.knock_schedule(52 - st[S_STOCK_POS], policy, GIN_AT):
                    action = 0
        elif phase == PH_BIG_GIN:
            action = 1
        else:  # the upcard or a draw
            top = st[S_PILE + st[S_PILE_N] - 1]
            how = policy[MY_TAKE if mine else OPP_TAKE]
            action = 1 if how == 1 or in_any_meld(hand, top) else 0
            if action and how > 0:
                _, with_top = best_discard(hand | (np.int64(1) << top), top)
                action = 1 if with_top < deadwood(hand) else 0
        apply_action(st, rules, action)
