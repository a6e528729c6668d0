"""What the pages show, as JSON: cards, hands as melds, the showdown, the steps of a recorded game.

Everything here reads the engine's state by name (:class:`arena.engine.table.Table`,
never a slot) and builds plain dicts; the play server and the viewer both use it, so a hand
looks the same in a live game and in a replay.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from arena.engine.cards import RANKS, SUITS, card_value, cards_of
from arena.engine.layout import (
    PH_BIG_GIN,
    PH_DISCARD,
    PH_DONE,
    PH_DRAW,
    PH_KNOCK,
    PH_UPCARD_DEALER,
    PH_UPCARD_NONDEALER,
)
from arena.engine.melds import best_arrangement, melds_of
from arena.engine.replay import both_passed, replay_steps
from arena.engine.rules_array import rules_from_array
from arena.engine.showdown import attach
from arena.engine.table import Table

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
    return [card(c) for c in Table(st).pile]


def showdown(st: np.ndarray, rules: np.ndarray, names: tuple[str, str]) -> dict[str, Any]:
    """A finished hand: both hands as melds, layoffs, deadwood, the scoring line and points."""
    t = Table(st)
    k = t.knocker
    points, scores = t.points, t.scores
    res: dict[str, Any] = {
        "outcome": t.outcome,
        "knocker": k,
        "points": list(points),
        "scores_after": [scores[0] + points[0], scores[1] + points[1]],
        "mult": t.mult,
        "hands": [None, None],
        "line": "",
    }
    if k < 0:
        res["line"] = {
            "dead": "Dead hand: the stock ran down to two cards. No score; the same dealer deals again.",
            "capped": "The hand reached the turn cap. No score.",
        }.get(res["outcome"], "The hand ended without a showdown.")
        for p in (0, 1):
            res["hands"][p] = {**arrangement(t.hand(p)), "laid_off": []}
        return res
    d = 1 - k
    laid = t.laid_off
    for p, melds, melded in ((k, t.knocker_melds, t.knocker_melded), (d, t.defender_melds, t.defender_melded)):
        hand = t.hand(p)
        res["hands"][p] = {
            "melds": [[c["id"] for c in cards(m)] for m in melds],
            "laid_off": [c["id"] for c in cards(laid)] if p == d else [],
            "deadwood_cards": [c["id"] for c in cards(hand & ~melded & ~(laid if p == d else 0))],
            "deadwood": t.deadwood(p),
        }
    kdw, ddw = t.deadwood(k), t.deadwood(d)
    # The knocker's melds with the cards the defender laid off on each, for display.
    res["hands"][k]["with_layoffs"] = [[c["id"] for c in cards(m)] for m in attach(t.knocker_melds, laid)]
    mult = t.mult
    bonus = rules_from_array(rules)
    o = res["outcome"]

    def v(seat: int, verb: str) -> str:  # "You knock", "simple knocks"
        return _verb(names[seat], verb)

    def total(terms: str) -> str:
        """The points' sum, doubled as a whole when the upcard was a spade: "(8 - 4 deadwood) x 2", never
        "8 - 4 deadwood x 2", which reads as 8 - 8."""
        return f"({terms}) x {mult} (spade upcard)" if mult > 1 else terms

    if o == "gin":
        res["line"] = f"{names[k]} {v(k, 'go')} gin: " + total(f"{ddw} deadwood + {bonus.gin_bonus} gin bonus")
    elif o == "big_gin":
        res["line"] = f"{names[k]} {v(k, 'declare')} big gin: " + total(f"{ddw} deadwood + {bonus.big_gin_bonus} bonus")
    elif o == "undercut":
        res["line"] = f"{names[d]} {v(d, 'undercut')} {_object(names[k])}: " + total(
            f"{kdw} - {ddw} deadwood + {bonus.undercut_bonus} undercut bonus"
        )
    else:
        res["line"] = f"{names[k]} {v(k, 'knock')}: " + total(f"{ddw} - {kdw} deadwood")
    winner = d if o == "undercut" else k
    p = res["points"][winner]
    res["line"] += f" = {p} point{'' if p == 1 else 's'} to {_object(names[winner])}"
    return res


def _object(name: str) -> str:
    """The person's name inside a sentence ("undercuts you", "points to you"); a bot's as it is."""
    return "you" if name == "You" else name


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
        up = card_str(Table(st_before).upcard, True)
        return f"{name} {v('take') if action else v('pass')} the upcard {up}"
    if phase == PH_DRAW:
        if action:
            return f"{name} {v('take')} {card_str(Table(st_before).pile_top, True)} from the discard pile"
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
    t = Table(st)
    return {
        "hand_no": t.hand_no,
        "dealer": t.dealer,
        "turn": t.to_act,
        "phase": PHASE_NAMES[t.phase],
        "pile": pile(st),
        "stock": t.stock,
        "upcard": card(t.upcard),
        "knock_limit": t.knock_limit,
        "mult": t.mult,
        "scores": list(t.scores),
        "just_taken": t.just_taken,
        "hands": {str(p): {"cards": cards(t.hand(p)), **arrangement(t.hand(p))} for p in seats},
        "hand_sizes": [len(cards_of(t.hand(0))), len(cards_of(t.hand(1)))],
    }


def game_steps(seed: int, rules: np.ndarray, log: np.ndarray, names: tuple[str, str]) -> list[dict[str, Any]]:
    """Every position of a recorded game, one per decision (and one per deal), for the viewer."""
    steps: list[dict[str, Any]] = []
    for step in replay_steps(seed, rules, log):
        if step.kind == "deal":
            steps.append(
                {**table_state(step.state, (0, 1)), "text": f"hand {Table(step.state).hand_no} is dealt", "seat": -1}
            )
        elif step.kind == "decision":
            assert step.before is not None
            text = action_text(names[step.seat], step.phase, step.action, step.before)
            if both_passed(step.phase, step.action):
                text += f"; {names[1 - step.seat]} draws from the stock"
            entry = {**table_state(step.state, (0, 1)), "text": text, "seat": step.seat}
            if Table(step.state).phase == PH_DONE:
                entry["showdown"] = showdown(step.state, rules, names)
            steps.append(entry)
        elif step.kind == "forfeit":
            steps.append({**table_state(step.state, (0, 1)), "text": "the game ended by a forfeit", "seat": -1})
    return steps
