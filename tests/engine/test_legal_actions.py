"""The engine's legal-action query, its action ids and its observation vector.

:func:`arena.engine.actions.legal_actions` is checked against a reference
written straight from the rules (``tests/reference.py``) at every decision
of random games under every preset, and against what
:func:`arena.engine.step.apply_action` accepts (every answer tried on a copy).
The observation is checked slot by slot against the documented layout, and
for leaks: re-dealing the cards a seat has not seen (the opponent's unknown
cards and the stock order) must change neither its observation nor its mask,
as ``tests/engine/test_seat_views.py`` does for views.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

from arena.engine import actions as A
from arena.engine.layout import (
    PH_DISCARD,
    PH_DONE,
    PH_KNOCK,
    R_NO_RETAKE,
    R_TARGET,
    R_TURN_CAP,
    S_CUR,
    S_DEALER,
    S_DECK,
    S_DISCARDED,
    S_HAND,
    S_JUST_TAKEN,
    S_KNOCK_LIMIT,
    S_MULT,
    S_PASSED,
    S_PHASE,
    S_PILE,
    S_PILE_N,
    S_SCORE,
    S_STOCK_POS,
    S_TAKEN,
    S_TURN,
    V_SIZE,
)
from arena.engine.melds import best_discard
from arena.engine.step import apply_action, begin_hand, build_view, end_hand, legal_answers
from arena.settings.rules import load_rules
from tests.reference import cards_in, legal_action_ids, observation_py
from tests.scripted import new_game

PRESETS = ("standard", "eaai", "oklahoma")
#: Random games per test (scripts/check_legal_actions.py runs the same tests on many more).
GAMES = {"reference": 16, "apply": 3, "fields": 4, "leak": 24}


def _rules(preset: str, **changes):
    rules = load_rules(preset)
    return rules.with_overrides(changes) if changes else rules


def positions(rules, games: int, seed: int) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Every decision of ``games`` random games: ``(state, rules array)``, the state a fresh copy.

    The players discard the least-deadwood card most of the time (so knocks,
    gins and big gins come up) and otherwise play at random; they knock
    three times in four when allowed.
    """
    rng = np.random.default_rng(seed)
    for g in range(games):
        st, r, row = new_game(rules, seed * 1000 + g)
        scratch = np.zeros(4, dtype=np.uint64)
        while True:
            begin_hand(st, r, seed * 1000 + g, scratch)
            while st[S_PHASE] != PH_DONE:
                yield st.copy(), r
                legal = A.legal_ids(A.legal_actions(st, r, int(st[S_CUR])))
                if st[S_PHASE] == PH_DISCARD and rng.random() < 0.8:
                    just = int(st[S_JUST_TAKEN]) if r[R_NO_RETAKE] else -1
                    action = int(best_discard(int(st[S_HAND + st[S_CUR]]), just)[0])
                elif st[S_PHASE] == PH_KNOCK:
                    action = A.A_KNOCK if rng.random() < 0.75 else A.A_PLAY_ON
                else:
                    action = int(rng.choice(legal))
                answer = A.answer_of_action(int(st[S_PHASE]), action)
                assert apply_action(st, r, answer) == 0
            yield st.copy(), r  # the finished hand: nobody may act
            if end_hand(st, r, row):
                break


def _reference(st: np.ndarray, r: np.ndarray, seat: int) -> set[int]:
    pile = [int(c) for c in st[S_PILE : S_PILE + st[S_PILE_N]]]
    return legal_action_ids(
        int(st[S_PHASE]),
        int(st[S_CUR]) == seat,
        int(st[S_HAND + seat]),
        pile,
        int(st[S_JUST_TAKEN]),
        bool(r[R_NO_RETAKE]),
    )


#: Rules variants of the reference test: every preset, and the card just taken may be thrown back.
VARIANTS = [("standard", {}), ("eaai", {}), ("oklahoma", {}), ("standard", {"no_retake": False, "knock_limit": 0})]


@pytest.mark.parametrize("preset, changes", VARIANTS)
def test_legal_actions_match_the_rules_reference_at_every_decision(preset, changes):
    rules = _rules(preset, **changes)
    view = np.zeros(V_SIZE, dtype=np.int64)
    seen_phases: set[int] = set()
    count = 0
    for st, r in positions(rules, GAMES["reference"], seed=len(preset) + len(changes)):
        for seat in (0, 1):
            ids = A.legal_actions(st, r, seat)
            assert set(A.legal_ids(ids)) == _reference(st, r, seat), (preset, seat, int(st[S_PHASE]))
        # The view's query (what bots use) agrees with the state's for the seat to act.
        seat = int(st[S_CUR])
        build_view(st, r, seat, view)
        if st[S_PHASE] != PH_DONE:
            assert A.view_legal_actions(view) == A.legal_actions(st, r, seat)
        seen_phases.add(int(st[S_PHASE]))
        count += 1
    assert count > 50 * GAMES["reference"]
    assert {0, 1, 2, 4, 5, 6} <= seen_phases


@pytest.mark.parametrize("preset", PRESETS)
def test_apply_action_accepts_exactly_the_legal_answers(preset):
    """Every answer 0..63 tried on a copy: accepted iff the query lists it, and a refusal changes nothing
    but the error slots."""
    rules = _rules(preset)
    for k, (st, r) in enumerate(positions(rules, GAMES["apply"], seed=3)):
        if k % 3:
            continue
        legal = legal_answers(st, r)
        for answer in range(-2, 64):
            trial = st.copy()
            err = apply_action(trial, r, answer)
            assert (err == 0) == (0 <= answer < 52 and bool((legal >> answer) & 1)), (preset, answer)
            if err:
                assert np.array_equal(trial[:34], st[:34]) and np.array_equal(trial[38:], st[38:])


def test_action_ids_and_engine_answers_map_both_ways():
    for phase in range(PH_DONE):
        answers = range(52) if phase == PH_DISCARD else (0, 1)
        ids = {A.action_of_answer(phase, a) for a in answers}
        assert len(ids) == len(answers) and min(ids) >= 0 and max(ids) < A.NUM_ACTIONS
        for a in answers:
            assert A.answer_of_action(phase, A.action_of_answer(phase, a)) == a
        others = set(range(-1, A.NUM_ACTIONS + 2)) - ids
        assert all(A.answer_of_action(phase, x) == -1 for x in others), phase
    assert A.action_of_answer(0, 1) == A.A_TAKE and A.action_of_answer(0, 0) == A.A_PASS
    assert A.action_of_answer(2, 0) == A.A_DRAW_STOCK and A.action_of_answer(2, 1) == A.A_TAKE
    assert A.action_of_answer(5, 1) == A.A_KNOCK and A.action_of_answer(3, 1) == A.A_BIG_GIN
    assert A.action_of_answer(5, 0) == A.action_of_answer(3, 0) == A.A_PLAY_ON
    assert A.answer_of_action(PH_DONE, 0) == -1


def _observation_reference(st: np.ndarray, r: np.ndarray, seat: int) -> np.ndarray:
    opp = 1 - seat
    to_act = int(st[S_CUR]) == seat and int(st[S_PHASE]) != PH_DONE
    return observation_py(
        hand=int(st[S_HAND + seat]),
        pile=[int(c) for c in st[S_PILE : S_PILE + st[S_PILE_N]]],
        opp_taken=int(st[S_TAKEN + opp]),
        opp_discarded=int(st[S_DISCARDED + opp]),
        opp_passed=int(st[S_PASSED + opp]),
        just_taken=int(st[S_JUST_TAKEN]) if int(st[S_CUR]) == seat else -1,
        stock=52 - int(st[S_STOCK_POS]),
        scores=(int(st[S_SCORE + seat]), int(st[S_SCORE + opp])),
        target=int(r[R_TARGET]),
        knock_limit=int(st[S_KNOCK_LIMIT]),
        doubled=int(st[S_MULT]) > 1,
        dealer=int(st[S_DEALER]) == seat,
        turn=int(st[S_TURN]),
        turn_cap=int(r[R_TURN_CAP]),
        decision=int(st[S_PHASE]) if to_act else PH_DONE,
    )


@pytest.mark.parametrize("preset", ["standard", "oklahoma"])
def test_observation_holds_the_documented_fields(preset):
    rules = _rules(preset)
    view = np.zeros(V_SIZE, dtype=np.int64)
    obs = np.zeros(A.OBS_SIZE, dtype=np.float32)
    for st, r in positions(rules, GAMES["fields"], seed=11):
        for seat in (0, 1):
            obs[:] = -1
            ids = A.observe(st, r, seat, view, obs)
            assert ids == A.legal_actions(st, r, seat)
            np.testing.assert_array_equal(obs, _observation_reference(st, r, seat))
            assert obs.min() >= 0.0 and obs.max() <= 1.0


def _redeal_hidden(st: np.ndarray, seat: int, rng: np.random.Generator) -> np.ndarray:
    """The same position with the cards ``seat`` has not seen dealt again.

    Hidden: the opponent's cards other than those it took from the pile, and
    the stock.  They are shuffled together and dealt back in the same
    numbers, so the position stays a legal one.
    """
    out = st.copy()
    opp = 1 - seat
    known = int(st[S_HAND + opp]) & int(st[S_TAKEN + opp])
    unknown_in_hand = int(st[S_HAND + opp]) & ~known
    pos = int(st[S_STOCK_POS])
    stock = [int(c) for c in st[S_DECK + pos : S_DECK + 52]]
    pool = np.array(cards_in(unknown_in_hand) + stock, dtype=np.int64)
    rng.shuffle(pool)
    k = len(cards_in(unknown_in_hand))
    out[S_HAND + opp] = known | sum(1 << int(c) for c in pool[:k])
    out[S_DECK + pos : S_DECK + 52] = pool[k:]
    return out


@pytest.mark.parametrize("preset", ["standard", "oklahoma"])
def test_observation_and_mask_do_not_change_when_hidden_cards_are_dealt_again(preset):
    rules = _rules(preset)
    rng = np.random.default_rng(5)
    view = np.zeros(V_SIZE, dtype=np.int64)
    a = np.zeros(A.OBS_SIZE, dtype=np.float32)
    b = np.zeros(A.OBS_SIZE, dtype=np.float32)
    changed = 0
    checked = 0
    for st, r in positions(rules, GAMES["leak"], seed=21):
        for seat in (0, 1):
            other = _redeal_hidden(st, seat, rng)
            changed += not np.array_equal(other, st)
            assert A.observe(st, r, seat, view, a) == A.observe(other, r, seat, view, b)
            assert np.array_equal(a, b), (preset, seat, int(st[S_PHASE]))
            checked += 1
    assert checked > 100 * GAMES["leak"]  # thousands of positions, both seats
    assert changed > 0.9 * checked  # the re-deal really moved hidden cards
