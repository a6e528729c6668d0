"""The showdown a person lays out (arena.engine.showdown): checked, and scored like the automatic one.

The automatic showdown (``apply_action(st, rules, 1)`` at a knock) is the reference: when the
person chooses exactly what it chose, :func:`lay_down` must leave the same state, slot for
slot.  Scripted hands then check what only a person does: a worse arrangement scored as
chosen, chained layoffs, and every illegal choice refused with one line and no change.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from arena.engine.cards import mask_of, parse_card, parse_cards
from arena.engine.layout import (
    OUT_GIN,
    OUT_KNOCK,
    OUT_UNDERCUT,
    PH_BIG_GIN,
    PH_DISCARD,
    PH_DONE,
    PH_KNOCK,
    S_CUR,
    S_DEADWOOD,
    S_DEF_RUNS,
    S_DEF_SETS,
    S_HAND,
    S_JUST_TAKEN,
    S_KNOCK_RUNS,
    S_KNOCK_SETS,
    S_LAID_OFF,
    S_OUTCOME,
    S_PHASE,
    S_POINTS,
)
from arena.engine.melds import best_discard
from arena.engine.rng import RNG_WORDS
from arena.engine.showdown import (
    ArrangementError,
    attach,
    best_reachable,
    knock_discards,
    lay_down,
    layoff_mask,
    layoff_steps,
    meld_masks,
    melds_within,
)
from arena.engine.step import apply_action, begin_hand
from arena.settings.rules import Rules, load_rules
from tests.scripted import act, new_game, play_out, setup


def c(text: str) -> int:
    return parse_card(text)


def m(text: str) -> int:
    return mask_of(parse_cards(text))


def knock_positions(rules: Rules, games: int):
    """States at a knock or big-gin decision, from greedy play (draw, discard the least deadwood)."""
    for seed in range(games):
        yield from _knock_positions(rules, seed)


def _knock_positions(rules: Rules, seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Hand 1 of game ``seed`` for at most 80 actions: action number ``i`` of an upcard offer or a draw is
    ``(seed + i) % 2`` (pass/take and stock/pile, mixed), a discard leaves the least deadwood, every knock and
    big gin is declined (each one's state kept)."""
    st, r, _ = new_game(rules, seed)
    begin_hand(st, r, seed, np.zeros(RNG_WORDS, dtype=np.uint64))
    found = []
    actions = itertools.count()

    def mixed(s):
        return (seed + next(actions)) % 2

    def least_deadwood(s):
        next(actions)
        return best_discard(int(s[S_HAND + int(s[S_CUR])]), int(s[S_JUST_TAKEN]))[0]

    def decline(s):
        next(actions)
        found.append((s.copy(), r))
        return 0

    play_out(st, r, upcard=mixed, draw=mixed, discard=least_deadwood, knock=decline, big_gin=decline, limit=80)
    return found


@pytest.mark.parametrize("preset", ["standard", "oklahoma"])
def test_choosing_what_the_automatic_showdown_chose_gives_the_same_state(preset):
    outcomes = set()
    n = 0
    for st, r in knock_positions(load_rules(preset), 400):
        auto = st.copy()
        assert apply_action(auto, r, 1) == 0
        mine = st.copy()
        lay_down(
            mine,
            r,
            int(auto[S_KNOCK_SETS]),
            int(auto[S_KNOCK_RUNS]),
            int(auto[S_DEF_SETS]),
            int(auto[S_DEF_RUNS]),
            int(auto[S_LAID_OFF]),
        )
        assert np.array_equal(mine, auto), f"slots differ: {np.nonzero(mine != auto)[0]}"
        outcomes.add(int(auto[S_OUTCOME]))
        n += 1
    assert n >= 60
    assert {OUT_KNOCK, OUT_GIN, OUT_UNDERCUT} <= outcomes  # every scoring branch was compared


# The knocker (seat 1, non-dealer) ends with 7c 7d 7h | 2c 3c 4c | 8s 9s Ts | Ad: 1 deadwood.
# The defender (seat 0) holds 7s (the set's 4th), 5c 6c (a chain on 2-3-4c), Js Qs (a chain on 8-9-Ts).
KNOCKER = "7c 7d 7h 2c 3c 4c 8s 9s Ts Kh"
DEFENDER = "7s 5c 6c Js Qs 2h 3h Kd Qd 4d"
GIN_DEFENDER = "7s 5s 6h Js Jh 2h 3h Qc Qd 4d"  # no meld: 67 deadwood


def at_knock(rules: Rules | None = None):
    st, r = setup(rules or Rules(), KNOCKER, DEFENDER, "5h", stock="Ad")
    act(st, r, "pass", "pass", "Kh")  # both pass; the non-dealer draws Ad and discards Kh
    assert st[S_PHASE] == PH_KNOCK and st[S_CUR] == 1
    return st, r


def test_the_same_choice_on_a_scripted_hand_scores_like_the_automatic_showdown():
    st, r = at_knock()
    auto = st.copy()
    act(auto, r, "knock")
    assert int(auto[S_LAID_OFF]) == m("7s 5c 6c Js Qs")  # both chains and the set's 4th card
    assert auto[S_POINTS + 1] == 29 - 1
    ks, kr = meld_masks(int(st[S_HAND + 1]), [parse_cards(x) for x in ("7c 7d 7h", "2c 3c 4c", "8s 9s Ts")])
    ds, dr = meld_masks(int(st[S_HAND]) & ~m("7s 5c 6c Js Qs"), [])
    laid = layoff_mask(int(st[S_HAND]), ks, kr, parse_cards("Qs Js 6c 5c 7s"))  # any order: chains resolve
    lay_down(st, r, ks, kr, ds, dr, laid)
    assert np.array_equal(st, auto)


def test_a_worse_arrangement_is_scored_as_chosen():
    st, r = at_knock()
    hk = int(st[S_HAND + 1])
    ks, kr = meld_masks(hk, [parse_cards("7c 7d 7h"), parse_cards("8s 9s Ts")])  # 2c 3c 4c left as deadwood
    laid = layoff_mask(int(st[S_HAND]), ks, kr, parse_cards("7s Js Qs"))  # 5c 6c have no run to go on now
    with pytest.raises(ArrangementError, match="5♣ fits none of the knocker's melds"):
        layoff_mask(int(st[S_HAND]), ks, kr, parse_cards("5c"))
    lay_down(st, r, ks, kr, 0, 0, laid)
    assert st[S_PHASE] == PH_DONE and st[S_OUTCOME] == OUT_KNOCK
    assert st[S_DEADWOOD + 1] == 1 + 2 + 3 + 4
    defender_left = 5 + 6 + 2 + 3 + 10 + 10 + 4
    assert st[S_DEADWOOD] == defender_left and st[S_POINTS + 1] == defender_left - 10 and st[S_POINTS] == 0


def test_a_defender_who_lays_off_less_is_undercut_or_not_as_chosen():
    st, r = at_knock()
    ks, kr = meld_masks(int(st[S_HAND + 1]), [parse_cards(x) for x in ("7c 7d 7h", "2c 3c 4c", "8s 9s Ts")])
    laid = layoff_mask(int(st[S_HAND]), ks, kr, parse_cards("7s Js"))  # keeps 5c 6c Qs
    lay_down(st, r, ks, kr, 0, 0, laid)
    assert st[S_DEADWOOD] == 5 + 6 + 10 + 2 + 3 + 10 + 10 + 4 and st[S_POINTS + 1] == st[S_DEADWOOD] - 1


@pytest.mark.parametrize(
    "melds, message",
    [
        (["7c 7d 7h", "2c 3c"], "^a meld needs at least 3 cards, not 2: 2♣ 3♣$"),
        (["7c 7d 7h", "2c"], "^a meld needs at least 3 cards, not 1: 2♣$"),
        (["7c 7d 7h", ""], "^an empty meld: a meld needs at least 3 cards$"),
        (["7c 7d 7h", "2c 3c 4c", "8s 9s Kh"], "Kh"),  # not in the hand any more (discarded)
        (["7c 7d 7h", "2c 3c 4c", "8s 9s Ts", "7h 8s 9s"], "in two melds"),
        (["7c 8s 9s"], "neither a set"),
        (["2c 3c Ad"], "neither a set"),
        (["7c 7d 7h"], "above this hand's knock limit 10"),
    ],
)
def test_illegal_knocker_melds_are_refused_and_change_nothing(melds, message):
    st, r = at_knock()
    before = st.copy()
    hk = int(st[S_HAND + 1])
    with pytest.raises(ArrangementError, match=message.replace("Kh", "K♥")):
        ks, kr = meld_masks(hk, [parse_cards(x) for x in melds])
        lay_down(st, r, ks, kr, 0, 0, 0)
    assert np.array_equal(st, before)


def test_illegal_layoffs_are_refused_and_change_nothing():
    st, r = at_knock()
    before = st.copy()
    hd = int(st[S_HAND])
    ks, kr = meld_masks(int(st[S_HAND + 1]), [parse_cards(x) for x in ("7c 7d 7h", "2c 3c 4c", "8s 9s Ts")])
    for cards, message in (("6c", "6♣ fits none"), ("Qs", "Q♠ fits none"), ("2h", "2♥ fits none"), ("Ac", "not in")):
        with pytest.raises(ArrangementError, match=message):
            layoff_mask(hd, ks, kr, parse_cards(cards))
    with pytest.raises(ArrangementError, match="used twice"):  # a card both laid off and in a meld
        lay_down(st, r, ks, kr, m("5c 6c 7s"), 0, m("7s"))
    assert np.array_equal(st, before)


def test_gin_takes_no_layoffs_and_big_gin_needs_every_card_melded():
    # The knocker draws Ks to 2c 3c 4c 8s 9s Ts Kc Kd Kh 5d: 5d is gin, a king a knock on 5, 4c on 10.
    st, r = setup(Rules(), "2c 3c 4c 8s 9s Ts Kc Kd Kh 5d", GIN_DEFENDER, "5h", stock="Ks")
    act(st, r, "pass", "pass")  # 11 cards, 5d loose: no big gin
    assert st[S_PHASE] == PH_DISCARD
    assert set(knock_discards(st, r)) == {c(x) for x in ("5d", "4c", "Kc", "Kd", "Kh", "Ks")}  # 4c: 2+3+5
    assert best_reachable(st, r) == 0
    act(st, r, "5d")
    hk = int(st[S_HAND + 1])
    ks, kr = meld_masks(hk, [parse_cards(x) for x in ("2c 3c 4c", "8s 9s Ts", "Kc Kd Kh Ks")])
    with pytest.raises(ArrangementError, match="no layoffs on a gin"):
        lay_down(st, r, ks, kr, 0, 0, m("Js"))
    lay_down(st, r, ks, kr, 0, 0, 0)
    assert st[S_OUTCOME] == OUT_GIN and st[S_POINTS + 1] == 25 + 67

    st, r = setup(Rules(), "2c 3c 4c 8s 9s Ts Kc Kd Kh 5c", GIN_DEFENDER, "5h", stock="Ks")
    act(st, r, "pass", "pass")
    assert st[S_PHASE] == PH_BIG_GIN
    hk = int(st[S_HAND + 1])
    with pytest.raises(ArrangementError, match="big gin needs all 11 cards"):
        ks, kr = meld_masks(hk, [parse_cards(x) for x in ("2c 3c 4c", "8s 9s Ts", "Kc Kd Kh Ks")])
        lay_down(st, r, ks, kr, 0, 0, 0)
    ks, kr = meld_masks(hk, [parse_cards(x) for x in ("2c 3c 4c 5c", "8s 9s Ts", "Kc Kd Kh Ks")])
    lay_down(st, r, ks, kr, 0, 0, 0)
    assert st[S_POINTS + 1] == 31 + 67


def test_knock_discards_follow_the_rules_limit():
    st, r = setup(Rules(knock_limit=0), KNOCKER, DEFENDER, "5h", stock="Ad")
    act(st, r, "pass", "pass")
    assert knock_discards(st, r) == []  # 1 deadwood at best: gin only
    assert best_reachable(st, r) == 1
    st, r = setup(Rules(), KNOCKER, DEFENDER, "5h", stock="Ad")
    act(st, r, "pass", "pass")
    assert set(knock_discards(st, r)) == {c("Ad"), c("Kh")}  # Ad leaves 10, Kh leaves 1; anything else > 10


def test_attach_puts_each_layoff_on_its_meld_for_display():
    melds = [m("7c 7d 7h"), m("2c 3c 4c"), m("8s 9s Ts")]
    shown = attach(melds, m("7s 5c 6c Js Qs"))
    assert shown == [m("7c 7d 7h 7s"), m("2c 3c 4c 5c 6c"), m("8s 9s Ts Js Qs")]


def test_a_chain_whose_first_card_also_completes_a_set_goes_on_the_run():
    """3c 4c on the knocker's 5c 6c 7c while its 4d 4h 4s wants the 4c: the 4c must go to the run.

    Given to the set, the 4c would leave the 3c with nowhere to go, and a person defending on the
    web page would be refused the layoffs the automatic showdown itself makes.
    """
    st, r = setup(Rules(), "4d 4h 4s 5c 6c 7c Ad As Ah Kd", "3c 4c Qc Qd Qh Qs 2d 2h 2s 8d", "Jh", stock="9h")
    act(st, r, "pass", "pass", "Kd")  # the knocker: 4d 4h 4s | 5c 6c 7c | Ad As Ah, 9h
    auto = st.copy()
    act(auto, r, "knock")
    assert int(auto[S_LAID_OFF]) == m("3c 4c")
    knocker = int(st[S_CUR])
    hk, hd = int(st[S_HAND + knocker]), int(st[S_HAND + 1 - knocker])
    ks, kr = meld_masks(hk, [parse_cards(x) for x in ("4d 4h 4s", "5c 6c 7c", "Ad As Ah")])
    ds, dr = meld_masks(hd & ~m("3c 4c"), [parse_cards(x) for x in ("Qc Qd Qh Qs", "2d 2h 2s")])
    for order in ("4c 3c", "3c 4c"):
        assert layoff_mask(hd, ks, kr, parse_cards(order)) == m("3c 4c")
    lay_down(st, r, ks, kr, ds, dr, m("3c 4c"))
    assert np.array_equal(st, auto)
    shown = attach([m("4d 4h 4s"), m("5c 6c 7c"), m("Ad As Ah")], m("3c 4c"))
    assert shown == [m("4d 4h 4s"), m("3c 4c 5c 6c 7c"), m("Ad As Ah")]


def test_a_layoff_chain_through_a_sets_missing_card_is_accepted_in_any_order():
    """2d 3d 4d on the knocker's 5d 6d 7d while its 3c 3h 3s misses the 3d: a legal chain (RULES.md:
    "a card laid off can itself be extended"), in whatever order the cards are named.

    The 3d fits the set before the 4d reaches it, but given to the set it would leave the 2d
    with nowhere to go; the web page names a person's layoffs lowest card first, so it refused
    the 2d whatever the person did.  The table's display must show all three on the run too.
    """
    sets, runs = m("3c 3h 3s"), m("5d 6d 7d")
    defender = m("2d 3d 4d Kc Qh")
    for order in itertools.permutations(parse_cards("2d 3d 4d")):
        assert layoff_mask(defender, sets, runs, list(order)) == m("2d 3d 4d")
    assert attach([sets, runs], m("2d 3d 4d")) == [sets, m("2d 3d 4d 5d 6d 7d")]
    steps = layoff_steps([sets, runs], m("2d 3d 4d"))
    assert [c for c, _ in steps] == parse_cards("4d 3d 2d")


def test_melds_within_a_hand_are_exactly_the_reference_melds_its_cards_hold():
    """The browser game marks an arranged group as a meld by this list, so it must be every meld the
    hand holds and nothing else: checked against the reference's 329 melds on seeded 10- and 11-card
    hands, and on a hand of a four-card set and a long run (overlapping melds)."""
    from tests.reference import MELDS

    rng = np.random.default_rng(33)
    hands = [sum(1 << int(c) for c in rng.choice(52, size=n, replace=False)) for n in (10, 11) * 100]
    hands.append(mask_of(parse_cards("7c 7d 7h 7s 2c 3c 4c 5c 6c")))
    for hand in hands:
        assert sorted(melds_within(hand)) == sorted(m for m in MELDS if m & ~hand == 0)
