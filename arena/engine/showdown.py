"""The showdown a person lays out: their own melds and layoffs, checked and scored by the rules.

Bots never come here: their knocks go through :func:`arena.engine.step.apply_action`, whose
showdown picks the knocker's least-deadwood arrangement and the defender's best layoffs and
melds.  A person (``arena play``) chooses instead, as computer games of Gin let them: the knocker
lays down melds of its choosing, and the defender lays down its own melds and lays
off deadwood on the knocker's melds, chains included, or passes.

Everything here checks what it is given against the hands in the state array and the rules,
raises :class:`ArrangementError` (one line naming the culprit) for anything illegal, and only
then writes the same ``S_*`` slots the automatic showdown writes.  When both sides choose what
the automatic showdown would, :func:`lay_down` leaves the state exactly as ``apply_action``
does (``tests/engine/test_showdown.py`` checks that on many hands), so the two cannot drift apart on
scoring.  The choice may be worse than the best: it is scored as chosen.

Not jitted: it runs once per human showdown.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from arena.engine.cards import CARD_VALUES, NUM_RANKS, card_str
from arena.engine.layout import (
    PH_BIG_GIN,
    PH_DISCARD,
    PH_KNOCK,
    S_CUR,
    S_HAND,
    S_KNOCK_LIMIT,
    S_PHASE,
)
from arena.engine.melds import best_arrangement, deadwood
from arena.engine.step import apply_action, pile_mask, score_showdown

#: The refusals a person meets at the play page's showdown, by code: the page says them in its own language.
REFUSALS = ("layoff_fits_none", "meld_empty", "meld_short", "not_a_meld", "knock_deadwood", "big_gin_deadwood")


class ArrangementError(ValueError):
    """An arrangement or layoff the rules do not allow (the message is one line).

    ``code`` (one of :data:`REFUSALS`) and ``values`` (card numbers and counts) name the refusal for the
    play page, whose language may not be English; None for refusals the page never causes."""

    def __init__(self, message: str, code: str | None = None, **values: Any):
        super().__init__(message)
        self.code, self.values = code, values


def _name(c: int) -> str:
    return card_str(int(c), True)


def _cards(mask: int) -> list[int]:
    return [c for c in range(52) if (mask >> c) & 1]


def value(mask: int) -> int:
    """The points of the cards in ``mask`` (Ace 1, faces 10)."""
    return int(sum(int(CARD_VALUES[c]) for c in _cards(int(mask))))


def is_meld(mask: int) -> bool:
    """Whether the cards of ``mask`` are one meld: a set (3 or 4 cards of one rank) or a run (3 or more
    consecutive ranks of one suit, Ace low).  The rule's one statement: :func:`meld_masks` checks each
    declared meld with it, and :func:`melds_within` lists a hand's melds by it."""
    ids = _cards(int(mask))
    if len(ids) < 3:
        return False
    ranks = sorted(c % NUM_RANKS for c in ids)
    if len(set(ranks)) == 1:
        return True
    return len({c // NUM_RANKS for c in ids}) == 1 and ranks == list(range(ranks[0], ranks[0] + len(ranks)))


def melds_within(hand: int) -> list[int]:
    """Every meld (a mask) that the cards of ``hand`` can form, overlapping ones included, by
    :func:`is_meld` over the hand's subsets: the browser game marks a group the person arranges
    as a meld by this list, rather than by a rule of its own (a hand of 11 cards has 1,981 subsets
    of 3 or more)."""
    ids = _cards(int(hand))
    out = []
    for k in range(3, len(ids) + 1):
        for combo in itertools.combinations(ids, k):
            mask = sum(1 << c for c in combo)
            if is_meld(mask):
                out.append(mask)
    return out


def meld_masks(hand: int, melds: Iterable[Sequence[int]]) -> tuple[int, int]:
    """``(sets_mask, runs_mask)`` of melds given as lists of card numbers, each checked.

    Each must be a meld (:func:`is_meld`); every card must be in ``hand`` and in one meld only.
    """
    sets = runs = used = 0
    for meld in melds:
        ids = list(meld)
        for c in ids:
            if isinstance(c, bool) or not isinstance(c, int | np.integer) or not 0 <= int(c) < 52:
                raise ArrangementError(f"a meld holds {c!r}: cards are numbers 0..51")
        ids = [int(c) for c in ids]
        shown = " ".join(_name(c) for c in ids)
        if len(set(ids)) != len(ids):
            raise ArrangementError(f"the meld {shown} names a card twice")
        mask = 0
        for c in ids:
            mask |= 1 << c
        if mask & ~int(hand):
            raise ArrangementError(f"{_name(next(c for c in ids if not (int(hand) >> c) & 1))} is not in the hand")
        if mask & used:
            raise ArrangementError(f"{_name(next(c for c in ids if (used >> c) & 1))} is in two melds")
        if not ids:
            raise ArrangementError("an empty meld: a meld needs at least 3 cards", "meld_empty")
        if len(ids) < 3:
            raise ArrangementError(
                f"a meld needs at least 3 cards, not {len(ids)}: {shown}", "meld_short", n=len(ids), cards=ids
            )
        if not is_meld(mask):
            raise ArrangementError(
                f"{shown} is neither a set (one rank) nor a run (one suit, consecutive ranks, Ace low)",
                "not_a_meld",
                cards=ids,
            )
        if len({c % NUM_RANKS for c in ids}) == 1:
            sets |= mask
        else:
            runs |= mask
        used |= mask
    return sets, runs


def _set_spots(sets_mask: int) -> int:
    """The missing 4th card of every 3-card set in ``sets_mask``."""
    spots = 0
    for r in range(NUM_RANKS):
        rank = sum(1 << (13 * s + r) for s in range(4))
        if bin(sets_mask & rank).count("1") == 3:
            spots |= rank & ~sets_mask
    return spots


def layoff_mask(defender: int, knock_sets: int, knock_runs: int, laid: Iterable[int]) -> int:
    """The mask of the defender's layoffs ``laid`` on the knocker's melds, each checked.

    A layoff is a set's 4th card, or a card next to a run's end, where the end may be a card
    laid off before (chains: 9, then 10, then J on 6-7-8).  The order given does not matter.
    """
    pending: list[int] = []
    for c in laid:
        if isinstance(c, bool) or not isinstance(c, int | np.integer) or not 0 <= int(c) < 52:
            raise ArrangementError(f"a layoff of {c!r}: cards are numbers 0..51")
        c = int(c)
        if not (int(defender) >> c) & 1:
            raise ArrangementError(f"{_name(c)} is not in the defender's hand")
        if c in pending:
            raise ArrangementError(f"{_name(c)} is laid off twice")
        pending.append(c)
    spots = _set_spots(int(knock_sets))
    run_cover = int(knock_runs)
    out = 0
    # The runs first, grown as far as the cards reach, and only then the sets: a set of three
    # misses one card only, so giving that card to a run takes no spot another card could fill,
    # while the longer run may take the next card of a chain.  The card must go to the run even
    # when it fits the set before the run reaches it: 2d 3d 4d on 5d 6d 7d beside 3c 3h 3s, the
    # 3d named before the 4d, would otherwise take the set and leave the 2d with nowhere to go.
    progress = True
    while pending and progress:
        progress = False
        for c in list(pending):
            r = c % NUM_RANKS
            below = r > 0 and (run_cover >> (c - 1)) & 1
            above = r < NUM_RANKS - 1 and (run_cover >> (c + 1)) & 1
            if below or above:
                run_cover |= 1 << c
                out |= 1 << c
                pending.remove(c)
                progress = True
    # A card on a set extends nothing, so one pass places the rest.
    for c in list(pending):
        if (spots >> c) & 1:
            spots &= ~(1 << c)
            out |= 1 << c
            pending.remove(c)
    if pending:
        raise ArrangementError(
            f"{_name(pending[0])} fits none of the knocker's melds", "layoff_fits_none", card=pending[0]
        )
    return out


def attach(melds: Sequence[int], laid: int) -> list[int]:
    """For display: each meld mask of ``melds`` with the laid-off cards it received.

    A card that fits both a set and a run's end is shown on the set, unless a chain then
    leaves a card with nowhere to go (3c 4c on 5c 6c 7c beside 4d 4h 4s): then on the run,
    as :func:`layoff_mask` places it.
    """
    shown, left = _attach(melds, laid, runs_first=False)
    if left:
        shown, _ = _attach(melds, laid, runs_first=True)
    return shown


def _attach(melds: Sequence[int], laid: int, runs_first: bool) -> tuple[list[int], list[int]]:
    """``(melds with their layoffs, cards left over)``.  ``runs_first``: every card a run's chain
    reaches goes on the run (grown as far as it goes first, as :func:`layoff_mask` does), the rest
    on their sets; else a card fitting a set goes there at once."""
    out = [int(m) for m in melds]
    left = _cards(int(laid))
    for kinds in (("runs",), ("runs", "sets")) if runs_first else (("sets", "runs"),):
        progress = True
        while left and progress:
            progress = False
            for c in list(left):
                r, s = c % NUM_RANKS, c // NUM_RANKS
                fit: dict[str, list[int]] = {"runs": [], "sets": []}
                for i, m in enumerate(out):
                    ranks = {x % NUM_RANKS for x in _cards(m)}
                    suits = {x // NUM_RANKS for x in _cards(m)}
                    if len(ranks) == 1:
                        if ranks == {r}:
                            fit["sets"].append(i)
                    elif suits == {s} and ((r > 0 and (m >> (c - 1)) & 1) or (r < 12 and (m >> (c + 1)) & 1)):
                        fit["runs"].append(i)
                fits = [i for kind in kinds for i in fit[kind]]
                if fits:
                    out[fits[0]] |= 1 << c
                    left.remove(c)
                    progress = True
    return out, left


def knocker_proposal(st: np.ndarray) -> tuple[int, int, int]:
    """``(sets, runs, deadwood)`` the automatic showdown would lay down for the seat to act."""
    hk = int(st[S_HAND + int(st[S_CUR])])
    s, r, dw = best_arrangement(hk, hk | int(pile_mask(st)))
    return int(s), int(r), int(dw)


def knock_discards(st: np.ndarray, rules: np.ndarray) -> list[int]:
    """The cards whose discard lets the seat to act knock now (empty outside the discard phase).

    Asks :func:`apply_action` on a copy for each card, so the rules decide (knock limit,
    Oklahoma's limit, the card just taken).
    """
    if int(st[S_PHASE]) != PH_DISCARD:
        return []
    hand = int(st[S_HAND + int(st[S_CUR])])
    out = []
    for c in _cards(hand):
        trial = st.copy()
        if apply_action(trial, rules, c) == 0 and int(trial[S_PHASE]) == PH_KNOCK:
            out.append(c)
    return out


def best_reachable(st: np.ndarray, rules: np.ndarray) -> int:
    """The least deadwood one legal discard leaves (-1 outside the discard phase)."""
    if int(st[S_PHASE]) != PH_DISCARD:
        return -1
    hand = int(st[S_HAND + int(st[S_CUR])])
    best = -1
    for c in _cards(hand):
        trial = st.copy()
        if apply_action(trial, rules, c) == 0:
            dw = int(deadwood(hand & ~(1 << c)))
            best = dw if best < 0 else min(best, dw)
    return best


def lay_down(
    st: np.ndarray,
    rules: np.ndarray,
    knock_sets: int,
    knock_runs: int,
    def_sets: int,
    def_runs: int,
    laid: int,
) -> None:
    """Finish the knock of the seat to act with the arrangements given; raise if any is illegal.

    ``st`` is at the knock decision (``PH_KNOCK``, or ``PH_BIG_GIN`` for big gin), as when
    :func:`apply_action` would be given 1.  The knocker's melds must leave deadwood within this
    hand's knock limit (none for big gin); a gin takes no layoffs.  On an error ``st`` is
    unchanged.  Scoring is the automatic showdown's, on the chosen deadwood.
    """
    phase = int(st[S_PHASE])
    if phase not in (PH_KNOCK, PH_BIG_GIN):
        raise ArrangementError("there is no knock to lay down now")
    big_gin = phase == PH_BIG_GIN
    k = int(st[S_CUR])
    d = 1 - k
    hk, hd = int(st[S_HAND + k]), int(st[S_HAND + d])
    knock_sets, knock_runs, def_sets, def_runs, laid = map(int, (knock_sets, knock_runs, def_sets, def_runs, laid))
    for name, hand, masks in (("knocker", hk, (knock_sets, knock_runs)), ("defender", hd, (def_sets, def_runs, laid))):
        union = 0
        for m in masks:
            if m & ~hand:
                raise ArrangementError(f"{_name(_cards(m & ~hand)[0])} is not in the {name}'s hand")
            if m & union:
                raise ArrangementError(f"{_name(_cards(m & union)[0])} is used twice by the {name}")
            union |= m
    # The masks must be melds: re-derive them from their cards (a set per rank, runs per block).
    meld_masks(hk, _split(knock_sets, knock_runs))
    meld_masks(hd, _split(def_sets, def_runs))
    kdw = value(hk & ~(knock_sets | knock_runs))
    limit = int(st[S_KNOCK_LIMIT])
    if big_gin and kdw:
        raise ArrangementError(
            f"big gin needs all 11 cards in melds; {kdw} deadwood is left", "big_gin_deadwood", n=kdw
        )
    if kdw > limit:
        raise ArrangementError(
            f"the knocker's deadwood {kdw} is above this hand's knock limit {limit}",
            "knock_deadwood",
            n=kdw,
            limit=limit,
        )
    if kdw == 0 and laid:
        raise ArrangementError("no layoffs on a gin")
    if laid:
        layoff_mask(hd, knock_sets, knock_runs, _cards(laid))
    ddw = value(hd & ~(def_sets | def_runs | laid))
    i64 = np.int64
    score_showdown(
        st,
        rules,
        big_gin,
        i64(knock_sets),
        i64(knock_runs),
        i64(kdw),
        i64(def_sets),
        i64(def_runs),
        i64(ddw),
        i64(laid),
    )


def _split(sets_mask: int, runs_mask: int) -> list[list[int]]:
    """Melds as card lists: one set per rank, one run per consecutive block (for checking)."""
    from arena.engine.melds import melds_of

    return [_cards(m) for m in melds_of(sets_mask, runs_mask)]


# --- a bot's own melds, and what the table shows at the end of a hand -------------------------


def check_declaration(hand: int, melds: Iterable[Sequence[int]], limit: int, big_gin: bool = False) -> tuple[int, int]:
    """``(sets, runs)`` of the melds a knocking bot declares for ``hand``, checked; raise if illegal.

    The melds must be real melds of cards in the hand (:func:`meld_masks`) and leave deadwood
    within ``limit`` (none for big gin).  The cards left out are deadwood even where they could
    meld: a knocker may show fewer melds than it holds, to offer fewer layoffs.
    """
    sets, runs = meld_masks(int(hand), melds)
    kdw = value(int(hand) & ~(sets | runs))
    if big_gin and kdw:
        raise ArrangementError(f"big gin needs all 11 cards in melds; the melds declared leave {kdw} deadwood")
    if kdw > int(limit):
        raise ArrangementError(f"the melds declared leave {kdw} deadwood, above this hand's knock limit {int(limit)}")
    return sets, runs


def declared_showdown(st: np.ndarray, rules: np.ndarray, knock_sets: int, knock_runs: int) -> tuple[int, int]:
    """Score again the knock that just ended the hand in ``st``, with the knocker's declared melds.

    ``st`` is as :func:`apply_action` left it after the knock (``PH_DONE``, ``S_CUR`` the
    knocker).  The defender lays off and melds at its best against the declared melds, exactly
    as against the automatic ones, and the one scoring function scores it
    (:func:`arena.engine.step.score_declared`); so declaring the automatic arrangement leaves
    ``st`` as it was (``tests/bots/test_eaai.py`` checks it).  Returns the ``(sets, runs)`` scored,
    which the game's log records.  Raises :class:`ArrangementError` (``st`` unchanged) if the melds
    are not a legal knock.
    """
    from arena.engine.layout import OUT_BIG_GIN, S_OUTCOME
    from arena.engine.step import score_declared

    k = int(st[S_CUR])
    big_gin = int(st[S_OUTCOME]) == OUT_BIG_GIN
    sets, runs = check_declaration(int(st[S_HAND + k]), _split(knock_sets, knock_runs), int(st[S_KNOCK_LIMIT]), big_gin)
    score_declared(st, rules, np.int64(sets), np.int64(runs))
    return sets, runs


def layoff_steps(knock_melds: Sequence[int], laid: int) -> list[tuple[int, int]]:
    """The defender's layoffs one by one: ``(card, meld mask before the card)``, chains in order.

    Each laid-off card goes on the meld :func:`attach` shows it on; a card whose run end is
    another laid-off card comes after that card.
    """
    final = attach(knock_melds, laid)
    steps: list[tuple[int, int]] = []
    for start, end in zip(knock_melds, final):
        meld, left = int(start), _cards(int(end) & ~int(start))
        while left:
            ranks = {x % NUM_RANKS for x in _cards(meld)}
            for c in left:
                fits = len(ranks) == 1 or ((c % NUM_RANKS > 0 and (meld >> (c - 1)) & 1) or (meld >> (c + 1)) & 1)
                if fits:
                    steps.append((c, meld))
                    meld |= 1 << c
                    left.remove(c)
                    break
            else:  # pragma: no cover - attach only attaches cards that fit
                raise AssertionError("a laid-off card fits no meld")
    return steps


def table_shows(st: np.ndarray) -> dict:
    """What the table shows at the end of the hand in ``st``, for both seats alike.

    ``outcome`` (an ``OUTCOME_NAMES`` name), ``knocker`` (-1 if none), the knocker's melds and
    the defender's (card lists), the layoffs in order (card, and the meld as it was before),
    both final hands, the deadwood and points of each seat and the scores after the hand.  As
    at the kit's table, both hands are shown at every hand's end, dead hands included.
    """
    from arena.engine.layout import (
        OUTCOME_NAMES,
        S_DEADWOOD,
        S_DEF_RUNS,
        S_DEF_SETS,
        S_HAND_NO,
        S_KNOCK_RUNS,
        S_KNOCK_SETS,
        S_KNOCKER,
        S_LAID_OFF,
        S_OUTCOME,
        S_POINTS,
        S_SCORE,
    )
    from arena.engine.melds import melds_of

    knocker = int(st[S_KNOCKER])
    knock_melds = melds_of(int(st[S_KNOCK_SETS]), int(st[S_KNOCK_RUNS])) if knocker >= 0 else []
    laid = int(st[S_LAID_OFF]) if knocker >= 0 else 0
    return {
        "hand_no": int(st[S_HAND_NO]),
        "outcome": OUTCOME_NAMES[int(st[S_OUTCOME])],
        "knocker": knocker,
        "knocker_melds": [_cards(m) for m in knock_melds],
        "defender_melds": [_cards(m) for m in melds_of(int(st[S_DEF_SETS]), int(st[S_DEF_RUNS]))]
        if knocker >= 0
        else [],
        "layoffs": [{"card": c, "meld": _cards(m)} for c, m in layoff_steps(knock_melds, laid)],
        "hands": [_cards(int(st[S_HAND + p])) for p in range(2)],
        "deadwood": [int(st[S_DEADWOOD + p]) for p in range(2)],
        "points": [int(st[S_POINTS + p]) for p in range(2)],
        "scores": [int(st[S_SCORE + p] + st[S_POINTS + p]) for p in range(2)],
    }
