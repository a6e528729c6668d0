"""What the pages show, as JSON: cards, hands as melds, the showdown, the steps of a recorded game.

Everything here reads the engine's state through the ``S_*`` names and
builds plain dicts; the play server and the viewer both use it, so a hand
looks the same in a live game and in a replay.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from arena.engine.cards import RANKS, SUITS, card_value, cards_of
from arena.engine.layout import (
    OUTCOME_NAMES,
    PH_BIG_GIN,
    PH_DISCARD,
    PH_DONE,
    PH_DRAW,
    PH_KNOCK,
    PH_UPCARD_DEALER,
    PH_UPCARD_NONDEALER,
    R_BIG_GIN_BONUS,
    R_GIN_BONUS,
    R_UNDERCUT_BONUS,
    S_CUR,
    S_DEADWOOD,
    S_DEALER,
    S_DEF_RUNS,
    S_DEF_SETS,
    S_HAND,
    S_HAND_NO,
    S_JUST_TAKEN,
    S_KNOCK_LIMIT,
    S_KNOCK_RUNS,
    S_KNOCK_SETS,
    S_KNOCKER,
    S_LAID_OFF,
    S_MULT,
    S_OUTCOME,
    S_PHASE,
    S_PILE,
    S_PILE_N,
    S_POINTS,
    S_SCORE,
    S_UPCARD,
)
from arena.engine.melds import best_arrangement, melds_of
from arena.engine.replay import begin_replay, decode
from arena.engine.showdown import attach
from arena.engine.step import apply_action, begin_hand, end_hand, stock_count

PHASE_NAMES = {
    PH_UPCARD_NONDEALER: "upcard",
    PH_UPCARD_DEALER: "upcard",
    PH_DRAW: "draw",
    PH_BIG_GIN: "big_gin",
    PH_DISCARD: "discard",
    PH_KNOCK: "knock",
    PH_DONE: "done",
}


def card(c: int) -> dict[str, Any]:
    """A card for the page: its number, rank and suit letters, value."""
    c = int(c)
    return {"id": c, "rank": RANKS[c % 13], "suit": SUITS[c // 13], "value": int(card_value(c))}


def cards(mask: int) -> list[dict[str, Any]]:
    return [card(c) for c in cards_of(int(mask))]


def arrangement(hand: int) -> dict[str, Any]:
    """A hand's least-deadwood melds, its deadwood cards and value."""
    sets, runs, dw = best_arrangement(int(hand), 0)
    melds = [[c["id"] for c in cards(m)] for m in melds_of(int(sets), int(runs))]
    loose = int(hand) & ~(int(sets) | int(runs))
    return {"melds": melds, "deadwood_cards": [c["id"] for c in cards(loose)], "deadwood": int(dw)}


def pile(st: np.ndarray) -> list[dict[str, Any]]:
    return [card(int(st[S_PILE + i])) for i in range(int(st[S_PILE_N]))]


def showdown(st: np.ndarray, rules: np.ndarray, names: tuple[str, str]) -> dict[str, Any]:
    """A finished hand: both hands as melds, layoffs, deadwood, the scoring line and points."""
    out = int(st[S_OUTCOME])
    k = int(st[S_KNOCKER])
    res: dict[str, Any] = {
        "outcome": OUTCOME_NAMES[out] if out >= 0 else "unfinished",
        "knocker": k,
        "points": [int(st[S_POINTS]), int(st[S_POINTS + 1])],
        "scores_after": [int(st[S_SCORE]) + int(st[S_POINTS]), int(st[S_SCORE + 1]) + int(st[S_POINTS + 1])],
        "mult": int(st[S_MULT]),
        "hands": [None, None],
        "line": "",
    }
    if k < 0:
        res["line"] = {
            "dead": "Dead hand: the stock ran down to two cards. No score; the same dealer deals again.",
            "capped": "The hand reached the turn cap. No score.",
        }.get(res["outcome"], "The hand ended without a showdown.")
        for p in (0, 1):
            res["hands"][p] = {**arrangement(int(st[S_HAND + p])), "laid_off": []}
        return res
    d = 1 - k
    laid = int(st[S_LAID_OFF])
    for p, sets, runs in ((k, st[S_KNOCK_SETS], st[S_KNOCK_RUNS]), (d, st[S_DEF_SETS], st[S_DEF_RUNS])):
        hand = int(st[S_HAND + p])
        melded = int(sets) | int(runs)
        res["hands"][p] = {
            "melds": [[c["id"] for c in cards(m)] for m in melds_of(int(sets), int(runs))],
            "laid_off": [c["id"] for c in cards(laid)] if p == d else [],
            "deadwood_cards": [c["id"] for c in cards(hand & ~melded & ~(laid if p == d else 0))],
            "deadwood": int(st[S_DEADWOOD + p]),
        }
    kdw, ddw = int(st[S_DEADWOOD + k]), int(st[S_DEADWOOD + d])
    # The knocker's melds with the cards the defender laid off on each, for display.
    res["hands"][k]["with_layoffs"] = [
        [c["id"] for c in cards(m)] for m in attach(melds_of(int(st[S_KNOCK_SETS]), int(st[S_KNOCK_RUNS])), laid)
    ]
    mult = int(st[S_MULT])
    times = f" x {mult} (spade upcard)" if mult > 1 else ""
    o = res["outcome"]

    def v(seat: int, verb: str) -> str:  # "You knock", "simple knocks"
        return _verb(names[seat], verb)

    if o == "gin":
        res["line"] = f"{names[k]} {v(k, 'go')} gin: {ddw} deadwood + {int(rules[R_GIN_BONUS])} gin bonus{times}"
    elif o == "big_gin":
        res["line"] = (
            f"{names[k]} {v(k, 'declare')} big gin: {ddw} deadwood + {int(rules[R_BIG_GIN_BONUS])} bonus{times}"
        )
    elif o == "undercut":
        res["line"] = (
            f"{names[d]} {v(d, 'undercut')} {names[k]}: {kdw} - {ddw} deadwood + {int(rules[R_UNDERCUT_BONUS])} "
            f"undercut bonus{times}"
        )
    else:
        res["line"] = f"{names[k]} {v(k, 'knock')}: {ddw} - {kdw} deadwood{times}"
    winner = d if o == "undercut" else k
    res["line"] += f" = {res['points'][winner]} points to {names[winner]}"
    return res


def _verb(name: str, verb: str) -> str:
    """The verb for ``name``: "You take", "simple takes", "simple does", "simple passes", "simple goes"."""
    if name == "You":
        return verb
    return {"do": "does", "go": "goes", "pass": "passes"}.get(verb, verb + "s")


def action_text(name: str, phase: int, action: int, st_before: np.ndarray) -> str:
    """One decision in words, for the person (``st_before`` is the state it was taken in)."""
    from arena.engine.cards import card_str

    def v(verb: str) -> str:  # "You take", "simple takes"
        return _verb(name, verb)

    if phase in (PH_UPCARD_NONDEALER, PH_UPCARD_DEALER):
        up = card_str(int(st_before[S_UPCARD]), True)
        return f"{name} {v('take') if action else v('pass')} the upcard {up}"
    if phase == PH_DRAW:
        if action:
            n = int(st_before[S_PILE_N])
            return f"{name} {v('take')} {card_str(int(st_before[S_PILE + n - 1]), True)} from the discard pile"
        return f"{name} {v('draw')} from the stock"
    if phase == PH_BIG_GIN:
        return f"{name} {v('declare')} BIG GIN" if action else f"{name} {v('do')} not declare big gin"
    if phase == PH_DISCARD:
        return f"{name} {v('discard')} {card_str(action, True)}"
    if phase == PH_KNOCK:
        return f"{name} {v('knock')}" if action else f"{name} {v('do')} not knock"
    return f"{name}: {phase} {action}"


def table_state(st: np.ndarray, seats: tuple[int, ...]) -> dict[str, Any]:
    """The table as the given seats see it: their hands, the pile, the stock count, whose turn."""
    return {
        "hand_no": int(st[S_HAND_NO]) + 1,
        "dealer": int(st[S_DEALER]),
        "turn": int(st[S_CUR]),
        "phase": PHASE_NAMES[int(st[S_PHASE])],
        "pile": pile(st),
        "stock": int(stock_count(st)),
        "upcard": card(int(st[S_UPCARD])),
        "knock_limit": int(st[S_KNOCK_LIMIT]),
        "mult": int(st[S_MULT]),
        "scores": [int(st[S_SCORE]), int(st[S_SCORE + 1])],
        "just_taken": int(st[S_JUST_TAKEN]),
        "hands": {str(p): {"cards": cards(int(st[S_HAND + p])), **arrangement(int(st[S_HAND + p]))} for p in seats},
        "hand_sizes": [len(cards_of(int(st[S_HAND]))), len(cards_of(int(st[S_HAND + 1])))],
    }


def game_steps(seed: int, rules: np.ndarray, log: np.ndarray, names: tuple[str, str]) -> list[dict[str, Any]]:
    """Every position of a recorded game, one per decision (and one per deal), for the viewer."""
    st, row, scratch = begin_replay(seed, rules)
    steps: list[dict[str, Any]] = []
    pos = 0
    log = np.asarray(log, dtype=np.int64)
    while True:
        begin_hand(st, rules, seed, scratch)
        steps.append({**table_state(st, (0, 1)), "text": f"hand {int(st[S_HAND_NO]) + 1} is dealt", "seat": -1})
        while st[S_PHASE] != PH_DONE and pos < len(log):
            seat, phase, action = decode(int(log[pos]))
            before = st.copy()
            if seat != st[S_CUR] or phase != st[S_PHASE] or apply_action(st, rules, action) != 0:
                raise ValueError(f"log entry {pos} does not fit the game")
            text = action_text(names[seat], phase, action, before)
            if phase == PH_UPCARD_DEALER and action == 0:
                text += f"; {names[1 - seat]} draws from the stock"
            step = {**table_state(st, (0, 1)), "text": text, "seat": seat}
            if st[S_PHASE] == PH_DONE:
                step["showdown"] = showdown(st, rules, names)
            steps.append(step)
            pos += 1
        if st[S_PHASE] != PH_DONE:  # the log ends inside a hand: a forfeit
            steps.append({**table_state(st, (0, 1)), "text": "the game ended by a forfeit", "seat": -1})
            return steps
        if end_hand(st, rules, row):
            return steps
