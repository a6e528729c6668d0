"""The exact-posterior benchmark's model of Simple, and its filter (scripts/bench_posterior.py)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from arena.engine.layout import (
    G_SIZE,
    PH_DISCARD,
    PH_DONE,
    PH_KNOCK,
    R_KNOCK_LIMIT,
    S_CUR,
    S_HAND,
    S_JUST_TAKEN,
    S_PHASE,
    V_SIZE,
    V_TOP,
)
from arena.engine.melds import in_any_meld
from arena.engine.rng import RNG_WORDS, new_rng
from arena.engine.step import apply_action, begin_game, begin_hand, build_view, end_hand, new_state
from arena.loading.load import load_bot
from tests.file_module import load_file

ROOT = Path(__file__).resolve().parents[2]

bench = load_file("bench_posterior_under_test", ROOT / "scripts" / "bench_posterior.py")


def test_every_choice_simple_really_makes_has_a_positive_chance_under_the_filters_model():
    """If the filter's rules for Simple were wrong, the true hand could be ruled out: it never is here."""
    rules = bench.RULES
    bots = (load_bot("gin-chasing"), load_bot("simple"))
    view = np.zeros(V_SIZE, dtype=np.int64)
    checked = {"pass": 0, "shed": 0}
    for g in range(40):
        mems = [np.zeros(b.memory_size) for b in bots]
        rngs = [new_rng(g), new_rng(g + 100)]
        st, row = new_state(), np.zeros(G_SIZE, dtype=np.int64)
        begin_game(st, rules, g, rngs[0], rngs[1], mems[0], mems[1], row)
        while True:
            begin_hand(st, rules, g, np.zeros(RNG_WORDS, dtype=np.uint64))
            while st[S_PHASE] != PH_DONE:
                p, ph = int(st[S_CUR]), int(st[S_PHASE])
                build_view(st, rules, p, view)
                a = int(bots[p].functions[ph](view, bots[p].params, mems[p], rngs[p]))
                held, taken = np.int64(st[S_HAND + p]), int(st[S_JUST_TAKEN])
                apply_action(st, rules, a)
                if p != 1:
                    continue
                if ph in bench.DRAWS and a == 0:
                    assert not in_any_meld(held, int(view[V_TOP]))
                    checked["pass"] += 1
                elif ph == PH_DISCARD:
                    asked = st[S_PHASE] == PH_KNOCK and st[S_CUR] == 1
                    allowed = held & ~(np.int64(1) << taken) if taken >= 0 else held
                    limit = -1 if asked else int(rules[R_KNOCK_LIMIT])
                    assert bench.shed_chance(held, allowed, a, limit) > 0, (g, a)
                    checked["shed"] += 1
            if end_hand(st, rules, row):
                break
    assert checked["pass"] > 500 and checked["shed"] > 500


def test_a_wrong_discard_or_a_knockable_hand_has_no_chance():
    hand = np.int64(0)
    for c in (0, 1, 2, 13 + 5, 26 + 5, 39 + 5, 12, 25, 9 + 13, 8 + 26, 7):  # A-2-3 of a suit, three 6s, kings...
        hand |= np.int64(1) << c
    # Shedding a card of the A-2-3 run leaves more deadwood than shedding the king of the first suit.
    assert bench.shed_chance(hand, hand, 0, -1) == 0.0
    assert bench.shed_chance(hand, hand, 12, -1) > 0.0
    # Not allowed (the card just taken) is never shed.
    assert bench.shed_chance(hand, hand & ~(np.int64(1) << 12), 12, -1) == 0.0
    # A hand that could knock after the discard, but did not, is not Simple's.
    assert bench.shed_chance(hand, hand, 12, 200) == 0.0


def test_the_exact_posterior_holds_more_of_the_true_cards_than_uniform_guesses():
    r = bench.compare(n_games=8, particles=40_000, k=30, seed=3)
    t = r["tallies"]
    assert len(t["uniform"].loglik) > 30
    exact, uniform = np.mean(t["exact posterior"].hits), np.mean(t["uniform"].hits)
    assert exact > 1.1 * uniform
    assert np.mean(t["exact posterior"].loglik) > np.mean(t["uniform"].loglik) + 0.5
