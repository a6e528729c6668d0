"""marjj-style: each rule of its docstring on hand-built views, and its strength on fixed seeds.

The contract checks it shares with the other strategies (legal games under
every preset, beats random, the plain path, no retake, the module's
shape) are in ``tests/bots/test_strategies.py``.
"""

from __future__ import annotations

import numpy as np
import pytest

from arena.engine.cards import parse_card
from arena.engine.layout import G_WINNER
from arena.engine.play import play_batch
from arena.engine.rules_array import rules_array
from arena.loading.load import load_bot
from arena.settings.rules import load_rules
from tests.bots.test_strategies import decide, make_view

EAAI = rules_array(load_rules("eaai"))
#: Nine melded cards: three runs.
MELDED = "Ac 2c 3c 4d 5d 6d 7h 8h 9h"


@pytest.fixture(scope="module")
def marjj():
    return load_bot("marjj-style")


def test_takes_the_top_card_when_it_joins_a_meld_and_lowers_deadwood(marjj):
    v = make_view(MELDED + " Ks", pile="Th")  # Th extends 7h 8h 9h; Ks goes: deadwood 10 -> 0
    assert decide(marjj, "draw", v) == 1


def test_passes_a_card_that_joins_a_meld_without_lowering_deadwood(marjj):
    # Ad makes a set with Ac and As, but Ac is needed in its run: deadwood stays 1.
    v = make_view(MELDED + " As", pile="Ad")
    assert decide(marjj, "draw", v) == 0


def test_passes_a_card_that_lowers_deadwood_without_joining_a_meld(marjj):
    # Keeping 2s and dropping Ks lowers deadwood 10 -> 2, but 2s melds with nothing.
    v = make_view(MELDED + " Ks", pile="2s")
    assert decide(marjj, "draw", v) == 0
    assert decide(load_bot("gin-chasing"), "draw", v) == 1  # which a lower-deadwood rule would take


def test_takes_the_upcard_by_the_same_rule(marjj):
    take, keep = make_view(MELDED + " Ks", pile="Th"), make_view(MELDED + " Ks", pile="2s")
    upcard = marjj.functions[0]  # PH_UPCARD_NONDEALER
    assert upcard(take, marjj.params, np.zeros(marjj.memory_size), np.zeros(4, np.uint64)) == 1
    assert upcard(keep, marjj.params, np.zeros(marjj.memory_size), np.zeros(4, np.uint64)) == 0


def test_knocks_voluntarily_only_in_its_first_turns(marjj):
    five = MELDED + " 5s"  # deadwood 5
    n = int(marjj.param_dict()["knock_turns"])
    discards = ["Kc", "Qc", "Jc", "Tc", "9c", "8c", "7c", "Ks", "Qs", "Js"]
    early = make_view(five, my_discarded=" ".join(discards[:n]), stock=20)
    late = make_view(five, my_discarded=" ".join(discards[: n + 1]), stock=20)
    assert decide(marjj, "knock", early) == 1
    assert decide(marjj, "knock", late) == 0
    gin = make_view(MELDED + " Th", my_discarded=" ".join(discards), stock=3)
    assert decide(marjj, "knock", gin) == 1  # a gin always knocks
    first = make_view(five, my_discarded="Kc")  # at a knock, this turn's discard is made
    assert decide(marjj.with_params("gin-only", {"knock_turns": 0}), "knock", first) == 0
    tight = marjj.with_params("tight", {"knock_at": 4})
    assert decide(tight, "knock", early) == 0


def test_danger_keeps_it_from_feeding_what_the_opponent_collects(marjj):
    # Kd and Qc are loose 10s; the opponent took my Jd: Kd melds with Jd and Qd.
    v = make_view(
        "Ac 2c 3c 4h 5h 6h 9s 9d 9h Kd Qc", pile="8c 5d", opp_taken="Jd", my_discarded="8c Jd", opp_discarded="5d"
    )
    assert decide(marjj.with_params("careful", {"danger": 12}), "discard", v) == parse_card("Qc")
    assert decide(marjj.with_params("careless", {"danger": 0}), "discard", v) == parse_card("Kd")


def test_the_draw_lookahead_sheds_a_near_meld_whose_outs_are_dead(marjj):
    hand = "As 2s 3s Jc Qc Kc 8c 8d 9h 9s 4d"
    eights = {parse_card("8c"), parse_card("8d")}
    nines = {parse_card("9h"), parse_card("9s")}
    plain = marjj.with_params("plain", {"lookahead": 0, "danger": 0})
    assert decide(plain, "discard", make_view(hand, pile="8h 8s")) in nines  # least deadwood
    assert decide(marjj, "discard", make_view(hand, pile="8h 8s")) in eights  # the eights are dead
    assert decide(marjj, "discard", make_view(hand, pile="7d 5c")) in nines  # live: kept


def test_same_seed_same_games(marjj):
    simple = load_bot("simple")
    a = play_batch(marjj, simple, EAAI, np.arange(30))
    b = play_batch(marjj, simple, EAAI, np.arange(30))
    assert np.array_equal(a.games, b.games)
    assert a.games.shape[0] == 30 and not a.errors


def test_beats_simple_on_duplicate_deals(marjj):
    """600 games (300 duplicate pairs, EAAI rules): 74-76% on 1,000-pair runs of
    other seeds (pair-clustered half-width 2.4 points), so 65% is far below
    the noise of 300 pairs (about 3.5 points) yet above simple's 50%."""
    simple = load_bot("simple")
    seeds = np.arange(300)
    as0 = play_batch(marjj, simple, EAAI, seeds, forfeit=False).games[:, G_WINNER]
    as1 = play_batch(simple, marjj, EAAI, seeds, forfeit=False).games[:, G_WINNER]
    rate = ((as0 == 0).sum() + (as1 == 1).sum()) / 600
    assert rate > 0.65, rate
