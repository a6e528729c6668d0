"""The built-in strategies: each plays legally, does what its docstring says, and wins.

Whole-game claims are measured on fixed seeds under the standard rules,
every match played twice with the seats swapped (the same deals, the bot
first in seat 0, then in seat 1), so the numbers are exact for these seeds
and the margins asserted are far wider than the seed-to-seed noise.
Decision-level claims are checked on hand-built views.
"""

from __future__ import annotations

import numpy as np
import pytest

from arena.botkit.bot import BotError, as_plain, load_bot_file
from arena.engine.cards import mask_of, parse_card, parse_cards
from arena.engine.layout import (
    G_DISCARDS,
    G_PICKUPS,
    G_WINNER,
    G_WINS_BY,
    H_DEADWOOD,
    H_KNOCKER,
    H_OUTCOME,
    H_TURNS,
    OUT_BIG_GIN,
    OUT_GIN,
    OUT_KNOCK,
    OUT_UNDERCUT,
    PH_DISCARD,
    PH_DRAW,
    PH_KNOCK,
    R_NO_RETAKE,
    V_HAND,
    V_JUST_TAKEN,
    V_KNOCK_LIMIT,
    V_MY_DISCARDED,
    V_OPP_DISCARDED,
    V_OPP_TAKEN,
    V_PILE,
    V_PILE_N,
    V_RULES,
    V_SIZE,
    V_STOCK_N,
    V_TOP,
)
from arena.engine.play import play_batch
from arena.engine.rng import new_rng
from arena.engine.rules_array import rules_array
from arena.loading.load import load_bot
from arena.settings.rules import Rules, load_rules

STRATEGIES = ("early_knock", "gin_chasing", "discard_tracking", "marjj_style")
STD = rules_array(Rules())
N_VS_SIMPLE = 4_000  # seeds per strategy vs simple (x2 seats = 8,000 games; every margin below is 7+ s.e.)
N_VS_RANDOM = 2_000  # seeds vs random (x2 seats)
N_PARAMS = 1_000  # seeds for parameter effects (x2 seats)
TEMPLATE = "bots/TEMPLATE.py"


@pytest.fixture(scope="module")
def bots():
    return {name: load_bot(name) for name in ("random", "simple") + STRATEGIES}


class Match:
    """A bot against an opponent on the same seeds, once from each seat."""

    def __init__(self, bot, opp, n_seeds: int, rules=STD, record_hands: bool = False, first_seed: int = 0):
        seeds = np.arange(first_seed, first_seed + n_seeds)
        # forfeit=False: any illegal decision raises, so every match is also a legality check.
        self.as0 = play_batch(bot, opp, rules, seeds, record_hands=record_hands, forfeit=False)
        self.as1 = play_batch(opp, bot, rules, seeds, record_hands=record_hands, forfeit=False)
        self.games = 2 * n_seeds

    def win_rate(self) -> float:
        wins = (self.as0.games[:, G_WINNER] == 0).sum() + (self.as1.games[:, G_WINNER] == 1).sum()
        return wins / self.games

    def opp_pickup_rate(self) -> float:
        """Opponent's pickups of the bot's discards per discard by the bot."""
        picked = self.as0.games[:, G_PICKUPS + 1].sum() + self.as1.games[:, G_PICKUPS].sum()
        thrown = self.as0.games[:, G_DISCARDS].sum() + self.as1.games[:, G_DISCARDS + 1].sum()
        return picked / thrown

    def bot_hands(self):
        """(hand rows, the bot's seat in each row) over both seatings."""
        h0, h1 = self.as0.hands, self.as1.hands
        return np.concatenate([h0, h1]), np.concatenate([np.zeros(len(h0), int), np.ones(len(h1), int)])

    def gin_rate(self) -> float:
        """Hands the bot won by gin or big gin, per hand played."""
        hands, seat = self.bot_hands()
        gin = np.isin(hands[:, H_OUTCOME], (OUT_GIN, OUT_BIG_GIN)) & (hands[:, H_KNOCKER] == seat)
        return gin.mean()

    def gin_wins_per_game(self) -> float:
        g0, g1 = self.as0.games, self.as1.games
        gins = (
            g0[:, G_WINS_BY + OUT_GIN].sum()
            + g0[:, G_WINS_BY + OUT_BIG_GIN].sum()
            + g1[:, G_WINS_BY + 4 + OUT_GIN].sum()
            + g1[:, G_WINS_BY + 4 + OUT_BIG_GIN].sum()
        )
        return gins / self.games

    def turns_per_hand(self) -> float:
        hands, _ = self.bot_hands()
        return hands[:, H_TURNS].mean()

    def knock_deadwood(self) -> np.ndarray:
        """The bot's deadwood in every hand it knocked (gin included)."""
        hands, seat = self.bot_hands()
        mine = (hands[:, H_KNOCKER] == seat) & np.isin(hands[:, H_OUTCOME], (OUT_KNOCK, OUT_UNDERCUT, OUT_GIN))
        return hands[mine, H_DEADWOOD + seat[mine]]


@pytest.fixture(scope="module")
def vs_simple(bots):
    """Each strategy, and simple itself, against simple: 8,000 games each."""
    matches = {name: Match(bots[name], bots["simple"], N_VS_SIMPLE, record_hands=True) for name in STRATEGIES}
    matches["simple"] = Match(bots["simple"], bots["simple"], N_VS_SIMPLE)
    return matches


# --- hand-built views ------------------------------------------------------------------


def make_view(
    hand: str,
    pile: str = "",
    stock: int = 20,
    opp_taken: str = "",
    opp_discarded: str = "",
    my_discarded: str = "",
    just_taken: str | None = None,
) -> np.ndarray:
    """A view with the given cards (standard rules); the pile's last card is the top."""
    v = np.zeros(V_SIZE, dtype=np.int64)
    v[V_RULES : V_RULES + len(STD)] = STD
    v[V_HAND] = mask_of(hand)
    pile_cards = parse_cards(pile)
    v[V_PILE_N] = len(pile_cards)
    for i, c in enumerate(pile_cards):
        v[V_PILE + i] = c
    v[V_TOP] = pile_cards[-1] if pile_cards else -1
    v[V_STOCK_N] = stock
    v[V_OPP_TAKEN] = mask_of(opp_taken)
    v[V_OPP_DISCARDED] = mask_of(opp_discarded)
    v[V_MY_DISCARDED] = mask_of(my_discarded)
    v[V_JUST_TAKEN] = parse_card(just_taken) if just_taken else -1
    v[V_KNOCK_LIMIT] = 10
    return v


def decide(bot, fn: str, view: np.ndarray) -> int:
    """Ask the bot's compiled decision function ``fn`` about ``view``."""
    phase = {"draw": PH_DRAW, "discard": PH_DISCARD, "knock": PH_KNOCK}[fn]
    return int(bot.functions[phase](view, bot.params, np.zeros(bot.memory_size), new_rng(1)))


# --- the whole-game claims ------------------------------------------------------------------


@pytest.mark.slow  # the vs_simple fixture plays 32,000 games
def test_a_strategy_beats_simple_in_55_percent(vs_simple):
    rates = {name: vs_simple[name].win_rate() for name in STRATEGIES}
    assert vs_simple["gin_chasing"].games >= 8_000
    # On these seeds: gin_chasing 0.753, early_knock 0.593, discard_tracking 0.589.
    assert rates["gin_chasing"] >= 0.70, rates
    assert max(rates.values()) >= 0.55
    assert min(rates.values()) > 0.55, rates


@pytest.mark.slow  # the vs_simple fixture plays 32,000 games
def test_gin_chasing_goes_gin_more_often_than_early_knock(vs_simple):
    gc, ek = vs_simple["gin_chasing"], vs_simple["early_knock"]
    # per hand: 0.086 against 0.017; per game: 0.68 against 0.17
    assert gc.gin_rate() > 2 * ek.gin_rate()
    assert gc.gin_wins_per_game() > 2 * ek.gin_wins_per_game()


@pytest.mark.slow  # the vs_simple fixture plays 32,000 games
def test_early_knock_ends_hands_in_fewer_turns_than_gin_chasing(vs_simple):
    gc, ek = vs_simple["gin_chasing"], vs_simple["early_knock"]
    assert ek.turns_per_hand() < gc.turns_per_hand() - 1  # 13.0 against 14.4


@pytest.mark.slow  # the vs_simple fixture plays 32,000 games
def test_discard_tracking_feeds_the_opponent_less_than_simple(vs_simple):
    dt, simple = vs_simple["discard_tracking"], vs_simple["simple"]
    # 0.1326 against 0.1380 (s.e. about 0.0005 each); the gin chaser,
    # whose hands last longer, feeds 0.195.
    assert dt.opp_pickup_rate() < simple.opp_pickup_rate()
    assert dt.opp_pickup_rate() < vs_simple["gin_chasing"].opp_pickup_rate()


@pytest.mark.parametrize("name", STRATEGIES)
def test_strategy_beats_random_in_99_percent(bots, name):
    m = Match(bots[name], bots["random"], N_VS_RANDOM)
    assert m.win_rate() >= 0.99


@pytest.mark.parametrize("rules", ["eaai", "oklahoma", "retake allowed"])
def test_strategies_play_legally_under_other_rules(bots, rules):
    r = rules_array(Rules(no_retake=False)) if rules == "retake allowed" else rules_array(load_rules(rules))
    for name in STRATEGIES:
        m = Match(bots[name], bots["simple"], 200, rules=r)  # raises on any illegal decision
        assert not m.as0.errors and not m.as1.errors


# --- parameters change behaviour -------------------------------------------------------------


def test_early_knock_knock_at_lowers_its_knocks(bots):
    default = Match(bots["early_knock"], bots["simple"], N_PARAMS, record_hands=True)
    low = Match(
        bots["early_knock"].with_params("ek2", {"knock_at": 2, "late_drop": 0}),
        bots["simple"],
        N_PARAMS,
        record_hands=True,
    )
    assert default.knock_deadwood().max() == 10
    assert low.knock_deadwood().max() <= 2
    assert low.knock_deadwood().mean() < default.knock_deadwood().mean() - 3


def test_early_knock_decisions(bots):
    ek = bots["early_knock"]
    nine = "Ac 2c 3c 4d 5d 6d 7h 8h 9h 9s"
    three = "Ac 2c 3c 4d 5d 6d 7h 8h 9h 3s"
    assert decide(ek, "knock", make_view(nine, stock=30)) == 1  # early: threshold ~9.8
    assert decide(ek, "knock", make_view(nine, stock=5)) == 0  # late: threshold ~4.6
    assert decide(ek, "knock", make_view(three, stock=5)) == 1
    assert decide(ek.with_params("steady", {"late_drop": 0}), "knock", make_view(nine, stock=5)) == 1
    assert decide(ek.with_params("ek2", {"knock_at": 2}), "knock", make_view(three, stock=30)) == 0
    # Draw: taking the top 3s and dropping Kc lowers deadwood 37 -> 30: a gain of 7.
    v = make_view("Ac 2c 3c 4d 5d 6d 8h 9s Tc Kc", pile="3s", stock=25)
    assert decide(ek, "draw", v) == 1
    assert decide(ek.with_params("picky", {"take_gain": 8}), "draw", v) == 0


def test_gin_chasing_knock_threshold_relaxes_late(bots):
    gc = bots["gin_chasing"]
    five = "Ac 2c 3c 4d 5d 6d 7h 8h 9h 5s"
    gin = "Ac 2c 3c 4d 5d 6d 7h 8h 9h Th"
    assert decide(gc, "knock", make_view(gin, stock=25)) == 1
    assert decide(gc, "knock", make_view(five, stock=25)) == 0  # long stock: gin only
    assert decide(gc, "knock", make_view(five, stock=6)) == 1  # 8 - 6 cards drawn: 0 + 3 * 2 >= 5
    eager = gc.with_params("eager", {"gin_at": 5})
    assert decide(eager, "knock", make_view(five, stock=25)) == 1
    patient = gc.with_params("patient", {"relax_at": 3})
    assert decide(patient, "knock", make_view(five, stock=6)) == 0


@pytest.mark.slow  # the vs_simple fixture plays 32,000 games
def test_gin_chasing_gin_at_trades_gins_for_short_hands(bots, vs_simple):
    eager = Match(bots["gin_chasing"].with_params("gc10", {"gin_at": 10}), bots["simple"], N_PARAMS, record_hands=True)
    default = vs_simple["gin_chasing"]
    assert eager.gin_rate() < default.gin_rate() / 2
    assert eager.turns_per_hand() < default.turns_per_hand() - 1.5


def test_discard_tracking_avoids_feeding_what_the_opponent_collects(bots):
    dt = bots["discard_tracking"]
    # Kd and Qc are both loose 10s; the opponent took my Jd from the pile: it
    # collects diamonds around the jack, so Kd (with Jd and Qd) is the dangerous one.
    v = make_view(
        "Ac 2c 3c 4h 5h 6h 9s 9d 9h Kd Qc", pile="8c 5d", opp_taken="Jd", my_discarded="8c Jd", opp_discarded="5d"
    )
    assert decide(dt, "discard", v) == parse_card("Qc")
    careless = dt.with_params("careless", {"danger": 0})
    assert decide(careless, "discard", v) == parse_card("Kd")  # ties shed the higher card


def test_discard_tracking_sheds_a_near_meld_whose_outs_are_dead(bots):
    dt = bots["discard_tracking"]
    tracker = dt.with_params("no-danger", {"danger": 0})  # the lookahead alone
    plain = dt.with_params("plain", {"lookahead": 0, "danger": 0})  # least deadwood
    hand = "As 2s 3s Jc Qc Kc 8c 8d 9h 9s 4d"
    eights, nines = {parse_card("8c"), parse_card("8d")}, {parse_card("9h"), parse_card("9s")}
    # Pairs of eights and nines: dropping a nine leaves the least deadwood...
    dead = make_view(hand, pile="8h 8s")
    assert decide(plain, "discard", dead) in nines
    # ...but 8h and 8s are in the pile: the eights can never make a set, so shed one.
    assert decide(tracker, "discard", dead) in eights
    assert decide(dt, "discard", dead) in eights
    # With the other eights still live the lookahead keeps them.
    live = make_view(hand, pile="7d 5c")
    assert decide(tracker, "discard", live) in nines


def test_discard_tracking_danger_param_lowers_pickups(bots):
    careless = Match(bots["discard_tracking"].with_params("dt0", {"danger": 0}), bots["simple"], N_PARAMS)
    default = Match(bots["discard_tracking"], bots["simple"], N_PARAMS)
    assert default.opp_pickup_rate() < careless.opp_pickup_rate() - 0.01


@pytest.mark.parametrize(
    "name, overrides, words",
    [
        ("early_knock", {"knock_at": 11}, "knock_at"),
        ("early_knock", {"late_drop": -1}, "late_drop"),
        ("early_knock", {"take_gain": -2}, "take_gain"),
        ("gin_chasing", {"gin_at": -1}, "gin_at"),
        ("gin_chasing", {"gin_at": 6, "knock_at": 5}, "must not exceed"),
        ("gin_chasing", {"relax_at": 40}, "relax_at"),
        ("gin_chasing", {"lookahead": 7}, "lookahead"),
        ("discard_tracking", {"decline": 1.5}, "decline"),
        ("discard_tracking", {"boost": 0.5}, "boost"),
        ("discard_tracking", {"danger": -3}, "danger"),
        ("discard_tracking", {"knock_at": 12}, "knock_at"),
        ("marjj_style", {"knock_turns": -1}, "knock_turns"),
        ("marjj_style", {"knock_at": 11}, "knock_at"),
        ("marjj_style", {"danger_growth": -1}, "danger_growth"),
        ("marjj_style", {"lookahead": 4}, "lookahead"),
        ("marjj_style", {"decline": 2}, "decline"),
    ],
)
def test_validate_params_rejects_bad_values(bots, name, overrides, words):
    with pytest.raises(BotError, match=words):
        bots[name].with_params("bad", overrides)
    values = bots[name].param_dict() | overrides
    with pytest.raises(ValueError, match=words):
        bots[name].module.validate_params(values)


@pytest.mark.parametrize("name", STRATEGIES)
def test_strategy_modules_follow_the_contract(bots, name):
    bot = bots[name]
    assert bot.fast, bot.plain_reason
    assert bot.description and bot.description != "(no description)"
    assert len(bot.module.__doc__.splitlines()) > 10  # the idea is explained
    bot.module.validate_params(bot.param_dict())  # defaults are valid


# --- the template ---------------------------------------------------------------------------------


def test_template_loads_and_plays_legal_games(bots):
    template = load_bot_file(TEMPLATE)
    assert template.fast, template.plain_reason
    assert template.param_names == ("knock_at", "take_gain")
    m = Match(template, bots["simple"], 500)
    assert 0.4 < m.win_rate() < 0.6  # about as strong as simple
    plain = Match(as_plain(template), bots["random"], 20)
    assert plain.win_rate() > 0.9
    with pytest.raises(BotError, match="knock_at"):
        template.with_params("bad", {"knock_at": 20})


def test_strategies_give_the_same_games_on_the_plain_path(bots):
    for name in STRATEGIES:
        seeds = np.arange(5)
        fast = play_batch(bots[name], bots["simple"], STD, seeds, forfeit=False)
        plain = play_batch(as_plain(bots[name]), bots["simple"], STD, seeds, forfeit=False)
        assert np.array_equal(fast.games, plain.games)


def test_no_retake_is_respected(bots):
    for name in STRATEGIES:
        v = make_view("Ac 2c 3c 4h 5h 6h 9s 9d 9h Kd Qs", just_taken="Qs")
        assert v[V_RULES + R_NO_RETAKE] == 1
        assert decide(bots[name], "discard", v) != parse_card("Qs")
