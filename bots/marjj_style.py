"""MARJJ-style: takes only melding cards, discards by deadwood, draws ahead and danger, knocks early or goes for gin.

Idea
----
A player in the style of the EAAI 2021 winner (MARJJ, Penn State
Harrisburg), written from its published technique:

* **Draws.** It takes the pile's top card (the upcard too) only when the
  card joins a meld of its hand (:func:`arena.engine.melds.in_any_meld`)
  *and* its hand after the best discard then has less deadwood than now.
  Every other card it takes blind from the stock, so it tells the opponent
  as little as it can.
* **Discards.** Among the discards within ``slack`` points of the least
  deadwood, the one with the lowest score: the deadwood left, plus
  ``lookahead`` times the change one more draw from the unseen cards is
  expected to make (:func:`arena.botkit.lib.mean_deadwood_after_draw`: live
  near-melds are kept, dead ones shed), plus ``danger`` points times the
  chance that the opponent holds two cards melding with it.  That chance
  comes from what the opponent did this hand (the cards it took, passed
  and discarded, and my discards it let go), by the discard tracker's
  model (:func:`bots.discard_tracking.danger_of`, with its ``boost``,
  ``decline`` and ``low_tilt``).  The danger weighs more as the hand goes
  on (``danger_growth`` per turn of mine), because the opponent's hand
  is closer to done.
* **Knocks.** A voluntary knock (deadwood above 0 but within ``knock_at``
  and the rules' limit) only in its first ``knock_turns`` turns of a hand,
  when an early knock catches the opponent with a full hand of deadwood;
  after that it plays for gin (a gin is always knocked, big gin always
  declared).

Simple's repeat guard (``bots.simple``) keeps it from trading the same two
cards with an opponent until the turn cap.  ``scripts/bench_strength.py``
measures it against every built-in bot; the defaults were tuned there on
duplicate deals under the EAAI rules (see ``docs/bench/``).
"""

import numpy as np

from arena.botkit.lib import discardable, least_deadwood_discard
from arena.engine._jit import jit
from arena.engine.cards import popcount
from arena.engine.layout import V_HAND, V_MY_DISCARDED, V_TOP
from arena.engine.melds import best_discard, deadwood, in_any_meld
from bots.discard_tracking import score_discards, validate_model_params
from bots.simple import REPEAT_SLOTS, drawn_card, no_repeats, note_hand, remember_pair

PARAMS: dict[str, float] = {
    "knock_turns": 4.0,  # voluntary knocks only in my first this many turns of a hand (0 = gin only)
    "knock_at": 10.0,  # .. and with at most this much deadwood
    "lookahead": 1.0,  # weight of the expected deadwood after one more draw
    "danger": 0.25,  # points one unit of danger (the opponent surely melds the card) costs a discard
    "danger_growth": 0.1,  # .. times (1 + this x my turns so far this hand)
    "slack": 3.0,  # discards considered: within this many points of the least deadwood
    "boost": 2.0,  # opponent model: factor on holding neighbours of cards it took
    "decline": 0.5,  # opponent model: factor on holding neighbours of cards it let go
    "low_tilt": 1.0,  # opponent model: players keep low cards (x (1 + tilt) for an Ace, x 1 from a six)
}
MEMORY = REPEAT_SLOTS

(
    _KNOCK_TURNS,
    _KNOCK_AT,
    _LOOKAHEAD,
    _DANGER,
    _DANGER_GROWTH,
    _SLACK,
    _BOOST,
    _DECLINE,
    _LOW_TILT,
) = range(9)
#: The defaults as an array, for bots that use its rules (``bots/monte_carlo.py``).
DEFAULTS = np.array(list(PARAMS.values()), dtype=np.float64)


def validate_params(d: dict) -> None:
    """Raise ValueError naming the first parameter out of range."""
    if not 0 <= d["knock_turns"] <= 30:
        raise ValueError(f"knock_turns = {d['knock_turns']} must be between 0 and 30 (turns of a hand)")
    if not 0 <= d["knock_at"] <= 10:
        raise ValueError(f"knock_at = {d['knock_at']} must be between 0 and 10 (deadwood points)")
    for key in ("lookahead", "danger", "danger_growth", "slack"):
        if d[key] < 0:
            raise ValueError(f"{key} = {d[key]} must be >= 0")
    if d["lookahead"] > 3:
        raise ValueError(f"lookahead = {d['lookahead']} must be at most 3")
    validate_model_params(d)


@jit
def joins_and_lowers(hand, top):
    """True when ``top`` joins a meld with cards of ``hand`` and keeping it lowers the deadwood."""
    if top < 0 or not in_any_meld(hand, top):
        return False
    _, with_top = best_discard(hand | (np.int64(1) << top), top)
    return with_top < deadwood(hand)


@jit
def take_upcard(view, params, memory, rng):
    note_hand(view, memory, 0)
    return 1 if joins_and_lowers(view[V_HAND], view[V_TOP]) else 0


@jit
def draw(view, params, memory, rng):
    note_hand(view, memory, 0)
    return 1 if joins_and_lowers(view[V_HAND], view[V_TOP]) else 0


@jit
def big_gin(view, params, memory, rng):
    return 1


@jit
def my_turns(view):
    """My turns so far this hand, this one included once I have discarded (one discard per turn)."""
    return popcount(view[V_MY_DISCARDED])


@jit
def discard_scores(view, params, allowed, score):
    """Fill ``score[c]`` with the cost of discarding card ``c`` of ``allowed`` (lower is better; 1e18
    for cards more than ``slack`` points above the least deadwood) and return the best card, -1 if none.

    The cost: the deadwood left, plus ``lookahead`` times the change one more
    draw is expected to make, plus the danger term (see the module doc), as
    the discard tracker scores it (:func:`bots.discard_tracking.score_discards`)
    with a danger weight that grows with my turns.  ``bots/monte_carlo.py``
    ranks its candidate discards with it.
    """
    danger = params[_DANGER] * (1.0 + params[_DANGER_GROWTH] * my_turns(view))
    slack, lookahead = params[_SLACK], params[_LOOKAHEAD]
    boost, decline, tilt = params[_BOOST], params[_DECLINE], params[_LOW_TILT]
    return score_discards(view, allowed, slack, lookahead, danger, boost, decline, tilt, score)


@jit
def discard(view, params, memory, rng):
    drawn = drawn_card(view, memory, 0)
    allowed = no_repeats(memory, 0, drawn, discardable(view))
    best_card = discard_scores(view, params, allowed, np.empty(52))
    if best_card < 0:  # the repeat guard left only cards far above the least deadwood
        best_card, _ = least_deadwood_discard(view[V_HAND], allowed, rng)
    remember_pair(memory, 0, drawn, best_card)
    return best_card


@jit
def wants_knock(view, params):
    """Its knock rule: a gin always, otherwise only in its first ``knock_turns`` turns within ``knock_at``."""
    dw = deadwood(view[V_HAND])
    if dw == 0:
        return True
    return my_turns(view) <= params[_KNOCK_TURNS] and dw <= params[_KNOCK_AT]


@jit
def knock(view, params, memory, rng):
    return 1 if wants_knock(view, params) else 0
