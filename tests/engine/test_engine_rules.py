"""Scripted hands pinning down every row of the scoring table and every option."""

from __future__ import annotations

import numpy as np
import pytest

from arena.engine.cards import mask_of, parse_card
from arena.engine.layout import (
    ERR_BAD_CHOICE,
    ERR_NOT_IN_HAND,
    ERR_RETAKE,
    ERR_WRONG_PHASE,
    G_WINNER,
    OUT_BIG_GIN,
    OUT_CAPPED,
    OUT_DEAD,
    OUT_GIN,
    OUT_KNOCK,
    OUT_UNDERCUT,
    PH_BIG_GIN,
    PH_DISCARD,
    PH_DRAW,
    PH_KNOCK,
    PH_UPCARD_DEALER,
    PH_UPCARD_NONDEALER,
    S_CUR,
    S_DEADWOOD,
    S_DEALER,
    S_ERROR,
    S_ERROR_ACTION,
    S_ERROR_KIND,
    S_ERROR_SEAT,
    S_HAND,
    S_HAND_NO,
    S_JUST_TAKEN,
    S_KNOCK_LIMIT,
    S_KNOCKER,
    S_LAID_OFF,
    S_MULT,
    S_OUTCOME,
    S_PHASE,
    S_POINTS,
    S_SCORE,
    S_TURN,
    S_UPCARD_TAKER,
)
from arena.engine.step import end_hand, stock_count
from arena.settings.rules import Rules
from tests.scripted import act, attempt, new_game, play_out, setup

STD = Rules()
# Seat 0 deals in these scripts, so seat 1 (the non-dealer) acts first.
KNOCKER_5 = "Ah 2h 3h 4c 5c 6c 9d 9s 9h 5d"  # deadwood 5 (5d)
DEFENDER_71 = "Kc Qc Jd Ts 8c 2d 3s 4d 6s 8s"  # no melds, no layoffs: 71


def test_knock_scores_the_deadwood_difference():
    st, r = setup(STD, KNOCKER_5, DEFENDER_71, upcard="Qs", stock="Kh")
    act(st, r, "pass", "pass")  # both pass; non-dealer draws Kh from the stock
    assert st[S_PHASE] == PH_DISCARD and st[S_CUR] == 1
    act(st, r, "Kh")
    assert st[S_PHASE] == PH_KNOCK
    act(st, r, "knock")
    assert st[S_OUTCOME] == OUT_KNOCK and st[S_KNOCKER] == 1
    assert (st[S_DEADWOOD + 1], st[S_DEADWOOD]) == (5, 71)
    assert (st[S_POINTS + 1], st[S_POINTS]) == (66, 0)


UNDERCUT_KNOCKER = "Ah 2h 3h 4c 5c 6c 9d 9s 9h Tc"  # deadwood 10


@pytest.mark.parametrize(
    "on_tie, outcome, knocker_pts, defender_pts",
    [
        (True, OUT_UNDERCUT, 0, 25),  # tie is an undercut: 0 difference + 25
        (False, OUT_KNOCK, 0, 0),  # tie goes to the knocker, worth 0
    ],
)
def test_equal_deadwood_after_chained_layoffs(on_tie, outcome, knocker_pts, defender_pts):
    # Defender lays off 7c then 8c on 4c5c6c (a chain) and keeps 5s 5h: 10 = 10.
    st, r = setup(
        Rules(undercut_on_tie=on_tie), UNDERCUT_KNOCKER, "7c 8c Js Qs Ks 2d 3d 4d 5s 5h", upcard="Qh", stock="Kh"
    )
    act(st, r, "pass", "pass", "Kh", "knock")
    assert st[S_OUTCOME] == outcome
    assert st[S_DEADWOOD] == 10 and st[S_DEADWOOD + 1] == 10
    assert st[S_LAID_OFF] == mask_of("7c 8c")
    assert (st[S_POINTS + 1], st[S_POINTS]) == (knocker_pts, defender_pts)


@pytest.mark.parametrize("bonus", [25, 20, 10])
def test_undercut_scores_difference_plus_bonus(bonus):
    st, r = setup(
        Rules(undercut_bonus=bonus), UNDERCUT_KNOCKER, "7c 8c Js Qs Ks 2d 3d 4d 5s As", upcard="Qh", stock="Kh"
    )
    act(st, r, "pass", "pass", "Kh", "knock")
    assert st[S_OUTCOME] == OUT_UNDERCUT
    assert st[S_DEADWOOD] == 6  # 5s + As after laying off 7c 8c
    assert st[S_POINTS] == 10 - 6 + bonus and st[S_POINTS + 1] == 0


def test_joint_layoff_example_from_the_rules():
    # Knocker melds 4h 5h 6h; defender 7h 7s 7d 8h: melding 777 (8 left) beats laying off 7h 8h (14).
    knocker = "4h 5h 6h Ac 2c 3c Jd Qd Kd 2s"  # deadwood 2
    defender = "7h 7s 7d 8h Kc Qc Ts 9c 8d 6s"  # 8h + 10+10+10+9+8+6 = 61
    st, r = setup(STD, knocker, defender, upcard="Ks", stock="Kh")
    act(st, r, "pass", "pass", "Kh", "knock")
    assert st[S_DEADWOOD] == 61 and st[S_LAID_OFF] == 0
    assert st[S_POINTS + 1] == 61 - 2


GIN_HAND = "Ah 2h 3h 4h 4c 5c 6c 9d 9s Qd"


@pytest.mark.parametrize("bonus", [25, 20])
def test_gin_scores_bonus_and_allows_no_layoffs(bonus):
    # Defender holds 5h and 7c that would lay off on a knock, but not on gin.
    defender = "5h 7c Js Qs Ks 2d 3d 4d 8s Td"  # 5+7+8+10 = 30
    st, r = setup(Rules(gin_bonus=bonus), GIN_HAND, defender, upcard="9h")
    act(st, r, "take", "Qd")
    assert st[S_UPCARD_TAKER] == 1 and st[S_PHASE] == PH_KNOCK
    act(st, r, "knock")
    assert st[S_OUTCOME] == OUT_GIN
    assert st[S_LAID_OFF] == 0 and st[S_DEADWOOD] == 30
    assert st[S_POINTS + 1] == 30 + bonus


def test_gin_cannot_be_undercut_even_by_a_gin_defender():
    defender = "Jc Qc Kc 2d 3d 4d 8s 8c 8h Th"  # deadwood 10; 7 melded... plus Th
    st, r = setup(STD, GIN_HAND, defender.replace("Th", "Td"), upcard="9h")
    act(st, r, "take", "Qd", "knock")
    assert st[S_OUTCOME] == OUT_GIN and st[S_POINTS] == 0 and st[S_POINTS + 1] == 10 + 25


BIG_GIN_HAND = "Ah 2h 3h 4h 4c 5c 6c 9d 9s 9h"


@pytest.mark.parametrize("bonus", [31, 50])
def test_big_gin_on_eleven_melded_cards(bonus):
    st, r = setup(Rules(big_gin_bonus=bonus), BIG_GIN_HAND, DEFENDER_71, upcard="Qs", stock="7c")
    act(st, r, "pass", "pass")  # non-dealer draws 7c: 4c5c6c7c, all 11 melded
    assert st[S_PHASE] == PH_BIG_GIN
    act(st, r, "yes")
    assert st[S_OUTCOME] == OUT_BIG_GIN and st[S_POINTS + 1] == 71 + bonus


def test_big_gin_declined_continues_to_a_discard():
    st, r = setup(STD, BIG_GIN_HAND, DEFENDER_71, upcard="Qs", stock="7c")
    act(st, r, "pass", "pass", "no")
    assert st[S_PHASE] == PH_DISCARD


def test_big_gin_off_is_never_offered():
    st, r = setup(Rules(big_gin=False), BIG_GIN_HAND, DEFENDER_71, upcard="Qs", stock="7c")
    act(st, r, "pass", "pass")
    assert st[S_PHASE] == PH_DISCARD
    act(st, r, "4h", "knock")  # 10 melded cards left: an ordinary gin
    assert st[S_OUTCOME] == OUT_GIN


def test_no_big_gin_offer_after_taking_the_upcard():
    st, r = setup(STD, "Ah 2h 3h 4h 4c 5c 6c 9d 9s Kd", DEFENDER_71, upcard="9h")
    act(st, r, "take")
    assert st[S_PHASE] == PH_DISCARD


def test_non_dealer_takes_upcard_then_dealer_draws():
    st, r = setup(STD, KNOCKER_5, DEFENDER_71, upcard="5s")
    assert st[S_PHASE] == PH_UPCARD_NONDEALER and st[S_CUR] == 1
    act(st, r, "take")
    assert st[S_HAND + 1] & mask_of("5s") and st[S_JUST_TAKEN] == parse_card("5s")
    act(st, r, "5d")
    assert st[S_PHASE] == PH_KNOCK
    act(st, r, "no")
    assert st[S_PHASE] == PH_DRAW and st[S_CUR] == 0 and stock_count(st) == 31


def test_dealer_takes_upcard_after_non_dealer_passes():
    st, r = setup(STD, KNOCKER_5, DEFENDER_71, upcard="7s")
    act(st, r, "pass")
    assert st[S_PHASE] == PH_UPCARD_DEALER and st[S_CUR] == 0
    act(st, r, "take")
    assert st[S_UPCARD_TAKER] == 0 and st[S_PHASE] == PH_DISCARD
    act(st, r, "Kc")
    assert st[S_PHASE] == PH_DRAW and st[S_CUR] == 1 and stock_count(st) == 31


def test_both_pass_non_dealer_draws_from_stock():
    st, r = setup(STD, KNOCKER_5, DEFENDER_71, upcard="7s", stock="Jh")
    act(st, r, "pass", "pass")
    assert st[S_CUR] == 1 and st[S_HAND + 1] & mask_of("Jh") and stock_count(st) == 30
    assert st[S_UPCARD_TAKER] == -1


@pytest.mark.parametrize("no_retake", [True, False])
def test_card_taken_from_pile_cannot_be_discarded_same_turn(no_retake):
    st, r = setup(Rules(no_retake=no_retake), KNOCKER_5, DEFENDER_71, upcard="Qs")
    act(st, r, "take")
    err = attempt(st, r, "Qs")
    assert err == (ERR_RETAKE if no_retake else 0)


def test_no_retake_applies_to_a_normal_pile_draw():
    st, r = setup(STD, KNOCKER_5, DEFENDER_71, upcard="Qs", stock="Kh")
    act(st, r, "pass", "pass", "Kh")
    act(st, r, "no")  # seat 1 declines to knock; seat 0 now draws Kh from the pile
    act(st, r, "pile")
    assert attempt(st, r, "Kh") == ERR_RETAKE
    act(st, r, "Qc")


def _unchanged_but_error(before, after):
    keep = np.ones(len(before), dtype=bool)
    keep[[S_ERROR, S_ERROR + 1, S_ERROR + 2, S_ERROR + 3]] = False  # S_ERROR, _SEAT, _KIND, _ACTION
    return np.array_equal(before[keep], after[keep])


def test_illegal_actions_are_rejected_without_changing_the_state():
    st, r = setup(STD, KNOCKER_5, DEFENDER_71, upcard="Qs", stock="Kh")
    for action, err in [(2, ERR_BAD_CHOICE), (-1, ERR_BAD_CHOICE)]:
        before = st.copy()
        assert attempt(st, r, action) == err
        assert _unchanged_but_error(before, st)
        assert st[S_ERROR_SEAT] == 1 and st[S_ERROR_KIND] == PH_UPCARD_NONDEALER and st[S_ERROR_ACTION] == action
    act(st, r, "pass", "pass")
    for action in ["Kc", 52, -1]:  # Kc is the defender's
        before = st.copy()
        assert attempt(st, r, action) == ERR_NOT_IN_HAND
        assert _unchanged_but_error(before, st)
    act(st, r, "Kh", "knock")
    assert attempt(st, r, 0) == ERR_WRONG_PHASE


def _play_out_without_knocking(st, r, knock_when_stock_is=-1):
    """Both pass the upcard, then draw from the stock and throw back what they drew.

    Nobody knocks, except when the stock holds ``knock_when_stock_is`` cards.
    """
    held = [0, 0]  # both hands before the last pass or draw

    def remember(action):
        def choose(s):
            held[:] = [int(s[S_HAND]), int(s[S_HAND + 1])]
            return action

        return choose

    def drawn(s):
        return ((int(s[S_HAND]) & ~held[0]) | (int(s[S_HAND + 1]) & ~held[1])).bit_length() - 1

    def knock(s):
        return "knock" if stock_count(s) == knock_when_stock_is else "no"

    over = play_out(
        st, r, upcard=remember("pass"), draw=remember("stock"), discard=drawn, knock=knock, big_gin=lambda s: "no"
    )
    assert over


def test_dead_hand_when_stock_reaches_two():
    st, r = setup(STD, KNOCKER_5, DEFENDER_71, upcard="Qs")
    _play_out_without_knocking(st, r)
    assert st[S_OUTCOME] == OUT_DEAD and stock_count(st) == 2
    assert st[S_TURN] == 29  # 31 stock cards, 29 draws
    assert st[S_POINTS] == 0 and st[S_POINTS + 1] == 0


def test_knock_on_the_draw_that_leaves_two_is_allowed():
    st, r = setup(STD, KNOCKER_5, DEFENDER_71, upcard="Qs")
    _play_out_without_knocking(st, r, knock_when_stock_is=2)
    assert st[S_OUTCOME] == OUT_KNOCK and stock_count(st) == 2


def test_turn_cap_ends_the_hand_as_capped():
    st, r = setup(Rules(turn_cap=12), KNOCKER_5, DEFENDER_71, upcard="Qs")
    _play_out_without_knocking(st, r)
    assert st[S_OUTCOME] == OUT_CAPPED and st[S_TURN] == 12


@pytest.mark.parametrize("upcard, limit, mult", [("7c", 7, 1), ("Kd", 10, 1), ("Ac", 0, 1), ("4s", 4, 2), ("As", 0, 2)])
def test_oklahoma_limit_and_spade_doubling_from_the_upcard(upcard, limit, mult):
    st, r = setup(Rules(oklahoma=True), KNOCKER_5, DEFENDER_71, upcard=upcard)
    assert st[S_KNOCK_LIMIT] == limit and st[S_MULT] == mult


def test_oklahoma_deadwood_above_the_limit_cannot_knock_and_spades_double():
    # Upcard 4s: limit 4, doubled.  Keeping 5d (deadwood 5) -> no knock offer; keeping Ac -> knock.
    st, r = setup(Rules(oklahoma=True), KNOCKER_5, DEFENDER_71, upcard="4s", stock="Ac")
    act(st, r, "pass", "pass", "Ac")
    assert st[S_PHASE] == PH_DRAW  # deadwood 5 > 4: no knock decision
    st, r = setup(Rules(oklahoma=True), KNOCKER_5, DEFENDER_71, upcard="4s", stock="Ac")
    act(st, r, "pass", "pass", "5d", "knock")  # keeps Ac: deadwood 1
    assert st[S_OUTCOME] == OUT_KNOCK and st[S_POINTS + 1] == 2 * (71 - 1)


def test_knock_limit_setting_restricts_knocking():
    st, r = setup(Rules(knock_limit=4), KNOCKER_5, DEFENDER_71, upcard="Qs", stock="Kh")
    act(st, r, "pass", "pass", "Kh")
    assert st[S_PHASE] == PH_DRAW  # 5 > 4
    st, r = setup(Rules(knock_limit=0), GIN_HAND, DEFENDER_71, upcard="9h")
    act(st, r, "take", "Qd")
    assert st[S_PHASE] == PH_KNOCK  # gin is always allowed


def _book(st, r, row, outcome, winner, points):
    st[S_OUTCOME] = outcome
    st[S_KNOCKER] = winner if outcome != OUT_UNDERCUT else 1 - winner
    st[S_POINTS] = points if winner == 0 else 0
    st[S_POINTS + 1] = points if winner == 1 else 0
    return end_hand(st, r, row)


@pytest.mark.parametrize(
    "rule, expected", [("alternate", [1, 0, 0, 1]), ("winner", [0, 0, 0, 1]), ("loser", [1, 1, 1, 0])]
)
def test_next_dealer_after_scored_and_dead_hands(rule, expected):
    st, r, row = new_game(Rules(next_dealer=rule))
    st[S_DEALER] = 0
    dealers = []
    for outcome, winner in [(OUT_KNOCK, 0), (OUT_GIN, 0), (OUT_DEAD, -1), (OUT_UNDERCUT, 1)]:
        _book(st, r, row, outcome, winner, 10 if winner >= 0 else 0)
        dealers.append(int(st[S_DEALER]))
    assert dealers == expected
    assert st[S_HAND_NO] == 4


def test_game_ends_when_a_score_reaches_the_target():
    st, r, row = new_game(Rules(target=50))
    assert not _book(st, r, row, OUT_KNOCK, 1, 49)
    assert _book(st, r, row, OUT_KNOCK, 1, 1)
    assert row[G_WINNER] == 1 and st[S_SCORE + 1] == 50


def test_hand_cap_ends_a_game_without_a_winner():
    st, r, row = new_game(Rules(hand_cap=3))
    assert not _book(st, r, row, OUT_DEAD, -1, 0)
    assert not _book(st, r, row, OUT_DEAD, -1, 0)
    assert _book(st, r, row, OUT_DEAD, -1, 0)
    assert row[G_WINNER] == -1
