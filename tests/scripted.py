"""Scripted hands: set the deck by hand, then apply named actions; or begin a seeded game and play it out.

Used by the rules tests to walk the engine through exact situations
(OpenSpiel's gin_rummy_test.cc does the same with fixed decks):
:func:`setup` deals a chosen deck, :func:`new_game` begins a game from a
seed, :func:`play_out` plays a hand to its end with one choice per phase.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from arena.engine import layout as lay
from arena.engine.cards import mask_of, parse_card, parse_cards
from arena.engine.layout import G_SIZE, S_DEALER, S_DECK, S_ERROR, S_HAND, S_PHASE, S_SCORE
from arena.engine.rng import RNG_WORDS
from arena.engine.rules_array import rules_array
from arena.engine.step import apply_action, begin_game, deal_from_deck, new_state
from arena.settings.rules import Rules

WORDS = {"take": 1, "pass": 0, "stock": 0, "pile": 1, "knock": 1, "gin": 1, "yes": 1, "no": 0}


def setup(
    rules: Rules,
    nondealer: str,
    dealer: str,
    upcard: str,
    stock: str = "",
    dealer_seat: int = 0,
    scores: tuple[int, int] = (0, 0),
) -> tuple[np.ndarray, np.ndarray]:
    """A state dealt from a chosen deck; the stock starts with ``stock`` (top first)."""
    nd, d, up, st_cards = parse_cards(nondealer), parse_cards(dealer), parse_card(upcard), parse_cards(stock)
    assert len(nd) == 10 and len(d) == 10
    chosen = nd + d + [up] + st_cards
    assert len(set(chosen)) == len(chosen), "a card is listed twice"
    rest = [c for c in range(52) if c not in chosen]
    st = new_state()
    st[S_DECK : S_DECK + 52] = chosen + rest
    st[S_DEALER] = dealer_seat
    st[S_SCORE], st[S_SCORE + 1] = scores
    r = rules_array(rules)
    deal_from_deck(st, r)
    assert st[S_HAND + 1 - dealer_seat] == mask_of(nd)
    return st, r


def encode(action: str | int) -> int:
    if isinstance(action, int):
        return action
    return WORDS[action] if action in WORDS else parse_card(action)


def act(st: np.ndarray, r: np.ndarray, *actions: str | int) -> None:
    """Apply actions that must all be legal."""
    for a in actions:
        err = apply_action(st, r, encode(a))
        assert err == 0, f"action {a!r} rejected with error {err} (S_ERROR={st[S_ERROR]})"


def attempt(st: np.ndarray, r: np.ndarray, action: str | int) -> int:
    """Apply one action and return its error code (0 = accepted)."""
    return int(apply_action(st, r, encode(action)))


def new_game(rules: Rules, seed: int = 7) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A state begun as game ``seed`` (bot generators and memories zeroed): the state, the rules array and
    the game's row, before its first deal."""
    st, r = new_state(), rules_array(rules)
    row = np.zeros(G_SIZE, dtype=np.int64)
    z = np.zeros(RNG_WORDS, dtype=np.uint64)
    begin_game(st, r, seed, z, z.copy(), np.zeros(1), np.zeros(1), row)
    return st, r, row


#: A choice in a scripted play-out: the state in, an action out (a word of :data:`WORDS`, a card, or a number).
Choice = Callable[[np.ndarray], "str | int"]


def play_out(
    st: np.ndarray,
    r: np.ndarray,
    *,
    upcard: Choice,
    draw: Choice,
    discard: Choice,
    knock: Choice,
    big_gin: Choice,
    limit: int = 1000,
) -> bool:
    """Play the dealt hand with one choice per phase (``upcard`` for both upcard offers); every action must
    be legal.  True once the hand is over; False if it is not after ``limit`` actions."""
    by_phase = {
        lay.PH_UPCARD_NONDEALER: upcard,
        lay.PH_UPCARD_DEALER: upcard,
        lay.PH_DRAW: draw,
        lay.PH_DISCARD: discard,
        lay.PH_KNOCK: knock,
        lay.PH_BIG_GIN: big_gin,
    }
    for _ in range(limit):
        if st[S_PHASE] == lay.PH_DONE:
            return True
        act(st, r, by_phase[int(st[S_PHASE])](st))
    return bool(st[S_PHASE] == lay.PH_DONE)
