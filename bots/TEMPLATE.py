"""My bot: takes useful discards, drops the card that leaves the least deadwood, knocks at knock_at.

(The first line of this docstring is the bot's one-line description in
tables and reports: say what the bot does.)

Start here: copy this file anywhere, rename it, edit the five decision
functions, and play it against the reference bot::

    cp bots/TEMPLATE.py my_bot.py
    arena run configs/default.toml --bot my_bot.py

The contract (checked when the file is loaded, see arena/botkit/bot.py)
-----------------------------------------------------------------
* Five functions, each ``(view, params, memory, rng) -> int``:
  ``take_upcard`` (1 take / 0 pass), ``draw`` (1 discard pile / 0 stock),
  ``big_gin`` (1 declare / 0 play on), ``discard`` (a card 0..51 you hold),
  ``knock`` (1 knock / 0 play on).  An illegal answer forfeits the game.
* ``PARAMS``: name -> default number.  Their values reach the functions as
  the float64 array ``params``, in this order; a tournament config can
  override them by name.  ``validate_params(d)`` (optional) raises
  ValueError for values that make no sense.
* ``MEMORY``: how many float64 slots ``memory`` has.  They are zeroed at
  the start of every game and keep whatever you store across turns and
  hands.  Store cards as per-card slots or small masks (floats are exact
  only below 2**53).
* ``rng``: your own seeded generator; use ``arena.engine.rng.rand_below(rng, n)``
  and ``rand_float(rng)``, never ``random``/``np.random`` (games must replay
  from their seed).
* Fast path: the functions are compiled with numba (nopython): use ints,
  floats, numpy arrays, module-level constants and other ``@jit`` functions
  (decorate your helpers with ``arena.engine._jit.jit``).  Set ``PLAIN = True`` to
  run them as plain Python instead (slower, same results); if numba cannot
  compile them the loader falls back to plain and prints why.

What the view holds (int64 array; names from arena.engine.layout)
----------------------------------------------------------
Cards are ``suit * 13 + rank`` (rank 0 = Ace .. 12 = King; suits c d h s);
a hand or set of cards is an int64 bitmask (bit c = card c).

  V_HAND           my hand (10 cards, 11 after drawing)
  V_STOCK_N        cards left in the stock (the hand dies at 2)
  V_PILE_N, V_TOP  discard pile size and its top card (-1 if empty)
  V_PILE + i       the pile, bottom first (i < V_PILE_N): dead cards
  V_JUST_TAKEN     card I took from the pile this turn (may not discard it)
  V_OPP_TAKEN      cards the opponent took from the pile this hand (mask)
  V_OPP_DISCARDED  cards the opponent discarded this hand (mask)
  V_OPP_PASSED     upcards the opponent passed (mask)
  V_MY_TAKEN, V_MY_DISCARDED, V_MY_PASSED: the same for me
  V_MY_SCORE, V_OPP_SCORE  game scores before this hand
  V_KNOCK_LIMIT    most deadwood a knock may have this hand (0 = gin only)
  V_MULT           point multiplier of the hand (Oklahoma spade upcard: 2)
  V_IS_DEALER, V_TURN, V_HAND_NO, V_SEAT, V_DECISION (PH_* being asked),
  V_UPCARD         the hand's first upcard
  V_RULES + R_*    the rules in force (R_GIN_BONUS, R_UNDERCUT_BONUS, ...)

The view is yours to read.  Each seat has its own view, which the engine keeps
up to date; writing into it spoils only your own picture of the table, until
the hand ends.

Handy kernels (all callable from compiled code)
-----------------------------------------------
  arena.engine.melds:   deadwood(hand), best_discard(hand, exclude) -> (card, deadwood),
                 deadwood_after_discards(hand, out) (deadwood without each card),
                 in_any_meld(hand, card), best_arrangement(hand, seen)
  arena.botkit.lib:  discardable(view), discard_options(view, out) (least deadwood over
                 legal discards), least_deadwood_discard(hand, allowed, rng),
                 top_beats_stock(view, margin),
                 pile_cards(view), unseen_cards(view), opponent_known(view),
                 meld_completers(hand), mean_deadwood_after_draw(hand, cards),
                 nth_card(mask, n), random_card(mask, rng)
  arena.engine.cards:   popcount(mask), lsb(mask), mask_value(mask)
  arena.botkit.search:  sample_state_weighted(view, rng, st, ...) (guess the hidden cards),
                 then arena.engine.step.apply_action(st, rules, action) / play out the
                 hand: bots/monte_carlo.py is a complete search bot to copy
  bots.simple (and every built-in bot): its five decisions are @jit too, so
                 yours can call e.g. ``bots.simple.discard(view, params, memory, rng)``;
                 its repeat guard (note_hand, drawn_card, no_repeats, remember_pair)
                 is used by discard() below

Debugging: with ``PLAIN = True`` the decisions run as plain Python (same
results), so ``print`` and ``breakpoint()`` work inside them when you play games
in your own process: ``arena.engine.play.play_batch(load_bot("my_bot.py"), ...)``
(docs/how-to/debug-a-bot.md shows it).
"""

import numpy as np

from arena.botkit.lib import discardable, least_deadwood_discard
from arena.engine._jit import jit
from arena.engine.cards import lsb
from arena.engine.layout import V_HAND, V_HAND_NO, V_TOP
from arena.engine.melds import best_discard, deadwood, in_any_meld
from bots.simple import REPEAT_SLOTS, drawn_card, no_repeats, note_hand, remember_pair

PARAMS: dict[str, float] = {
    "knock_at": 10.0,  # knock when deadwood is at most this (the rules' limit still applies)
    "take_gain": 6.0,  # also take the pile card if it lowers deadwood by this much
}
# [0] hand number + 1 seen last, [1] my discards this hand (an example);
# from [GUARD] on: Simple's repeat guard (see discard).
GUARD = 2
MEMORY = GUARD + REPEAT_SLOTS

# params are an array: name their positions once.
KNOCK_AT = 0
TAKE_GAIN = 1


def validate_params(d: dict) -> None:
    """Called with {name: value} when a config overrides the parameters."""
    if not 0 <= d["knock_at"] <= 10:
        raise ValueError(f"knock_at = {d['knock_at']} must be between 0 and 10")
    if d["take_gain"] < 0:
        raise ValueError(f"take_gain = {d['take_gain']} must be >= 0")


@jit
def wants_top(view, params):
    """1 if the top card of the pile is worth taking (a helper: compiled with @jit)."""
    hand = view[V_HAND]
    top = view[V_TOP]
    if top < 0:
        return 0
    if in_any_meld(hand, top):  # it joins a set or a run: take it
        return 1
    _, after = best_discard(hand | (np.int64(1) << top), top)  # keep top, drop the best other card
    return 1 if deadwood(hand) - after >= params[TAKE_GAIN] else 0


def take_upcard(view, params, memory, rng):
    """Offered the first upcard (V_TOP): 1 take, 0 pass."""
    note_hand(view, memory, GUARD)  # for the repeat guard: the hand before the draw
    return wants_top(view, params)


def draw(view, params, memory, rng):
    """1 = take the top of the discard pile (V_TOP), 0 = draw from the stock."""
    note_hand(view, memory, GUARD)
    return wants_top(view, params)


def big_gin(view, params, memory, rng):
    """All 11 cards meld: 1 declares big gin (always worth it)."""
    return 1


def discard(view, params, memory, rng):
    """Return a card of V_HAND (never V_JUST_TAKEN under the no-retake rule)."""
    # Memory example: notice a new hand and count my discards in it.
    if memory[0] != view[V_HAND_NO] + 1:
        memory[0] = view[V_HAND_NO] + 1
        memory[1] = 0.0
    memory[1] += 1.0
    hand = view[V_HAND]
    allowed = discardable(view)  # the hand minus the card just taken, if not allowed
    extra = hand & ~allowed  # at most one card: the one just taken
    exclude = lsb(extra) if extra else -1
    card, _ = best_discard(hand, exclude)  # least deadwood left; ties: the higher card
    # Never draw and discard the same two cards twice in one hand (EAAI's
    # Simple has this rule): two bots that both want the same cards would
    # otherwise pass them back and forth until the turn cap.
    drawn = drawn_card(view, memory, GUARD)
    fresh = no_repeats(memory, GUARD, drawn, allowed)
    if not (fresh >> card) & 1:
        card, _ = least_deadwood_discard(hand, fresh, rng)
    remember_pair(memory, GUARD, drawn, card)
    return card


def knock(view, params, memory, rng):
    """Asked only when deadwood <= V_KNOCK_LIMIT: 1 knock, 0 play on."""
    return 1 if deadwood(view[V_HAND]) <= params[KNOCK_AT] else 0
