"""Action ids, the legal-action query and the observation vector: the engine as an env sees it.

The step machine (:mod:`arena.engine.step`) asks each decision with its own
small answer (0/1, or a card).  Reinforcement-learning libraries want one
discrete action space and one fixed-length numeric observation; both are
views of the engine's state, so they are defined here, once, and every
adapter (``arena/env/``) and caller uses them.

Action ids (OpenSpiel's ``gin_rummy`` ids where they mean the same thing):

======  =====================  ==========================================
id      name                   answers
======  =====================  ==========================================
0-51    discard card *id*      the discard (``card = suit * 13 + rank``)
52      ``A_TAKE``             take the upcard / draw from the discard pile
53      ``A_DRAW_STOCK``       draw from the stock
54      ``A_PASS``             pass the upcard
55      ``A_KNOCK``            knock (asked after the discard that allows it)
56      ``A_BIG_GIN``          declare big gin (all 11 cards meld)
57      ``A_PLAY_ON``          do not knock / do not declare big gin
======  =====================  ==========================================

Cards are the arena's numbers (``suit * 13 + rank``, suits ``c d h s``), the
same as the observation's slots; OpenSpiel orders its suits ``s c d h``, so its
discard id ``k`` is id ``(k + 39) % 52`` here (:mod:`arena.engine.cards`).

The engine's knock is a yes/no question after a discard that leaves deadwood
within the limit (OpenSpiel knocks before the discard): so declining a knock
or a big gin is an action of its own, ``A_PLAY_ON``.

The legal actions are a mask of ids (bit ``a`` of an int64): :func:`legal_actions`
for a seat of a state, :func:`view_legal_actions` for a bot's view.  Both are
:func:`arena.engine.step.legal_answers` (the rules :func:`~arena.engine.step.apply_action`
checks) mapped to ids, so no second copy of legality exists.

Observation (``float32[OBS_SIZE]``, every entry in [0, 1]), built from the
seat's view (:func:`~arena.engine.step.build_view`) and nothing else:

===========================  =====  =====================================================
slots                        size   what
===========================  =====  =====================================================
``O_HAND``                   52     own hand (1 = held)
``O_TOP``                    52     the top card of the discard pile (one-hot)
``O_PILE``                   52     the pile in order: ``(i + 1) / 52`` for the card at
                                    depth ``i`` from the bottom, 0 when not in the pile
``O_OPP_TAKEN``              52     cards the opponent took from the pile this hand
``O_OPP_DISCARDED``          52     cards the opponent discarded this hand
``O_OPP_PASSED``             52     upcards the opponent passed
``O_JUST_TAKEN``             52     the card this seat just took from the pile (one-hot)
``O_STOCK``                  1      cards left in the stock / 31
``O_MY_SCORE``               1      own game score / target (at most 1)
``O_OPP_SCORE``              1      opponent's game score / target (at most 1)
``O_KNOCK_LIMIT``            1      this hand's knock limit / 10
``O_DOUBLED``                1      1 when this hand's points are doubled (Oklahoma spade)
``O_DEALER``                 1      1 when this seat dealt the hand
``O_TURN``                   1      discards so far / the rules' turn cap
``O_DECISION``               7      the decision asked of this seat (``PH_*``, one-hot;
                                    ``PH_DONE`` slot: the hand is over or it is not this
                                    seat's turn)
===========================  =====  =====================================================
"""

from __future__ import annotations

import numpy as np

from arena.engine._jit import inline, kernel
from arena.engine.cards import card_str
from arena.engine.layout import (
    PH_BIG_GIN,
    PH_DISCARD,
    PH_DONE,
    PH_DRAW,
    PH_KNOCK,
    PH_UPCARD_DEALER,
    PH_UPCARD_NONDEALER,
    R_TARGET,
    R_TURN_CAP,
    S_CUR,
    S_PHASE,
    V_DECISION,
    V_HAND,
    V_IS_DEALER,
    V_JUST_TAKEN,
    V_KNOCK_LIMIT,
    V_MULT,
    V_MY_SCORE,
    V_OPP_DISCARDED,
    V_OPP_PASSED,
    V_OPP_SCORE,
    V_OPP_TAKEN,
    V_PILE,
    V_PILE_N,
    V_RULES,
    V_STOCK_N,
    V_TOP,
    V_TURN,
)
from arena.engine.step import DECK_SIZE, build_view, legal_answers, view_legal_answers

# --- action ids ---------------------------------------------------------------------
A_TAKE = 52
A_DRAW_STOCK = 53
A_PASS = 54
A_KNOCK = 55
A_BIG_GIN = 56
A_PLAY_ON = 57
NUM_ACTIONS = 58
#: Names of the ids 52.. (``ACTION_NAMES[a - DECK_SIZE]``); ids 0-51 are discards.
ACTION_NAMES = ("take", "draw_stock", "pass", "knock", "big_gin", "play_on")

#: Per decision (PH_* row): the action id of engine answer 0 and of answer 1
#: (the discard has none: its answer is the card, which is its id).
_IDS_OF_ANSWERS = np.array(
    [
        (A_PASS, A_TAKE),  # PH_UPCARD_NONDEALER
        (A_PASS, A_TAKE),  # PH_UPCARD_DEALER
        (A_DRAW_STOCK, A_TAKE),  # PH_DRAW
        (A_PLAY_ON, A_BIG_GIN),  # PH_BIG_GIN
        (-1, -1),  # PH_DISCARD
        (A_PLAY_ON, A_KNOCK),  # PH_KNOCK
        (-1, -1),  # PH_DONE
    ],
    dtype=np.int64,
)
assert _IDS_OF_ANSWERS.shape[0] == PH_DONE + 1
assert (PH_UPCARD_NONDEALER, PH_UPCARD_DEALER, PH_DRAW, PH_BIG_GIN, PH_DISCARD, PH_KNOCK) == (0, 1, 2, 3, 4, 5)


@kernel
def action_of_answer(phase, answer) -> int:
    """The action id of the engine's ``answer`` to decision ``phase`` (-1 if it has none)."""
    if phase == PH_DISCARD:
        return answer if 0 <= answer < DECK_SIZE else -1
    if phase < 0 or phase >= PH_DONE or answer < 0 or answer > 1:
        return -1
    return _IDS_OF_ANSWERS[phase, answer]


@kernel
def answer_of_action(phase, action) -> int:
    """The engine's answer that action id ``action`` gives to decision ``phase`` (-1: not an answer to it)."""
    if phase == PH_DISCARD:
        return action if 0 <= action < DECK_SIZE else -1
    if phase < 0 or phase >= PH_DONE:
        return -1
    if action == _IDS_OF_ANSWERS[phase, 1]:
        return 1
    if action == _IDS_OF_ANSWERS[phase, 0]:
        return 0
    return -1


@inline
def _ids_of(phase, answers) -> int:
    """An answer mask (:func:`~arena.engine.step.legal_answers`) as a mask of action ids."""
    if phase == PH_DISCARD:
        return answers
    out = answers & 0  # an int64 zero, typed like the mask
    if phase >= 0 and phase < PH_DONE:
        for a in range(2):
            if (answers >> a) & 1:
                out |= np.int64(1) << _IDS_OF_ANSWERS[phase, a]
    return out


@kernel
def legal_actions(st, rules, seat) -> int:
    """The action ids seat ``seat`` may take now, as a mask (0 when it is not its turn)."""
    if st[S_CUR] != seat:
        return 0
    return _ids_of(st[S_PHASE], legal_answers(st, rules))


@kernel
def view_legal_actions(view) -> int:
    """:func:`legal_actions` of the seat a view is built for, from the view alone."""
    return _ids_of(view[V_DECISION], view_legal_answers(view))


@kernel
def fill_mask(ids, mask) -> None:
    """Write the id mask ``ids`` into ``mask`` (``NUM_ACTIONS`` entries, 1 = legal)."""
    for a in range(NUM_ACTIONS):
        mask[a] = (ids >> a) & 1


# --- the observation ----------------------------------------------------------------
O_HAND = 0
O_TOP = O_HAND + DECK_SIZE
O_PILE = O_TOP + DECK_SIZE
O_OPP_TAKEN = O_PILE + DECK_SIZE
O_OPP_DISCARDED = O_OPP_TAKEN + DECK_SIZE
O_OPP_PASSED = O_OPP_DISCARDED + DECK_SIZE
O_JUST_TAKEN = O_OPP_PASSED + DECK_SIZE
O_STOCK = O_JUST_TAKEN + DECK_SIZE
O_MY_SCORE = O_STOCK + 1
O_OPP_SCORE = O_MY_SCORE + 1
O_KNOCK_LIMIT = O_OPP_SCORE + 1
O_DOUBLED = O_KNOCK_LIMIT + 1
O_DEALER = O_DOUBLED + 1
O_TURN = O_DEALER + 1
O_DECISION = O_TURN + 1
OBS_SIZE = O_DECISION + PH_DONE + 1
#: The most cards the stock holds (52 - 2 hands - the upcard).
MAX_STOCK = 31


@kernel
def observe_view(view, to_act, obs) -> None:
    """Write the observation of a seat's ``view`` into ``obs`` (``OBS_SIZE`` float32).

    ``to_act``: whether the decision in the view is this seat's (a view does
    not say; the state does).  Reads the view only, so the observation holds
    nothing the seat has not seen.
    """
    hand = view[V_HAND]
    taken = view[V_OPP_TAKEN]
    shed = view[V_OPP_DISCARDED]
    passed = view[V_OPP_PASSED]
    top = view[V_TOP]
    just = view[V_JUST_TAKEN]
    for c in range(DECK_SIZE):
        obs[O_HAND + c] = (hand >> c) & 1
        obs[O_TOP + c] = 1.0 if c == top else 0.0
        obs[O_PILE + c] = 0.0
        obs[O_OPP_TAKEN + c] = (taken >> c) & 1
        obs[O_OPP_DISCARDED + c] = (shed >> c) & 1
        obs[O_OPP_PASSED + c] = (passed >> c) & 1
        obs[O_JUST_TAKEN + c] = 1.0 if c == just else 0.0
    n = view[V_PILE_N]
    for i in range(n):
        obs[O_PILE + view[V_PILE + i]] = (i + 1) / DECK_SIZE
    target = max(view[V_RULES + R_TARGET], 1)
    obs[O_STOCK] = view[V_STOCK_N] / MAX_STOCK
    obs[O_MY_SCORE] = min(view[V_MY_SCORE], target) / target
    obs[O_OPP_SCORE] = min(view[V_OPP_SCORE], target) / target
    obs[O_KNOCK_LIMIT] = view[V_KNOCK_LIMIT] / 10.0
    obs[O_DOUBLED] = 1.0 if view[V_MULT] > 1 else 0.0
    obs[O_DEALER] = view[V_IS_DEALER]
    obs[O_TURN] = min(view[V_TURN], view[V_RULES + R_TURN_CAP]) / max(view[V_RULES + R_TURN_CAP], 1)
    decision = view[V_DECISION] if to_act else PH_DONE
    for k in range(PH_DONE + 1):
        obs[O_DECISION + k] = 1.0 if k == decision else 0.0


@kernel
def observe(st, rules, seat, view, obs) -> int:
    """Seat ``seat``'s observation of ``st`` into ``obs``; return its legal-action id mask.

    ``view`` (``V_SIZE`` int64) is work space: the seat's view is built
    there first (:func:`~arena.engine.step.build_view`) and the observation
    read from it alone.
    """
    build_view(st, rules, seat, view)
    ids = legal_actions(st, rules, seat)
    observe_view(view, ids != 0 or (st[S_CUR] == seat and st[S_PHASE] != PH_DONE), obs)
    return ids


def action_name(action: int) -> str:
    """An action id in words, for messages: ``discard 7c``, ``take``, ``knock``."""
    if 0 <= action < DECK_SIZE:
        return f"discard {card_str(action)}"
    if DECK_SIZE <= action < NUM_ACTIONS:
        return ACTION_NAMES[action - DECK_SIZE]
    return f"{action} (not an action id: 0..{NUM_ACTIONS - 1})"


def legal_ids(ids: int) -> list[int]:
    """The action ids of a mask, lowest first."""
    return [a for a in range(NUM_ACTIONS) if (int(ids) >> a) & 1]
