"""The play session's showdown stages and words, on scripted hands (no server, no browser)."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from arena.engine.cards import card_value, mask_of, parse_card, parse_cards
from arena.engine.layout import (
    PH_BIG_GIN,
    PH_DONE,
    PH_KNOCK,
    S_CUR,
    S_DEADWOOD,
    S_DEF_RUNS,
    S_DEF_SETS,
    S_HAND,
    S_LAID_OFF,
    S_PHASE,
)
from arena.engine.showdown import knocker_proposal
from arena.engine.step import apply_action, log_entry
from arena.loading.load import load_bot
from arena.settings.rules import load_rules
from arena.web.session import BOT, PERSON, IllegalAction, PlaySession
from arena.web.table import action_text, showdown
from tests.scripted import act, encode, setup

KNOCKER = "7c 7d 7h 2c 3c 4c 8s 9s Ts Kh"
DEFENDER = "7s 5c 6c Js Qs 2h 3h Kd Qd 4d"
GIN_HAND = "2c 3c 4c 8s 9s Ts Kc Kd Kh 5c"
NO_MELDS = "7s 5s 6h Js Jh 2h 3h Qc Qd 4d"  # the bot's hand: 67 deadwood


def c(text):
    return parse_card(text)


def session(nondealer, dealer, dealer_seat, *actions, defend=False, stock="Ad", bot="simple", loader=load_bot):
    """A session whose hand is the scripted one, ``actions`` played through the session."""
    s = PlaySession.start(bot=bot, seed=1, loader=loader)
    st, _ = setup(s.rules_obj, nondealer, dealer, "5h", stock=stock, dealer_seat=dealer_seat)
    s.st[:] = st
    s.hand_over, s.stage, s.events, s.items = False, "play", [], []
    for a in actions:
        s._apply(encode(a))
    if defend:
        ks, kr, _ = knocker_proposal(s.st)
        s.stage, s.knock = "defend", {"sets": ks, "runs": kr, "laid": 0}
    return s


def test_the_person_is_you_with_proper_grammar_and_draws_are_named():
    s = session(KNOCKER, DEFENDER, 1, "pass", "pass")  # the person (non-dealer) passes, the bot too, then draws
    assert s.events[-3:] == ["You pass the upcard 5♥", "simple passes the upcard 5♥", "You draw A♦ from the stock"]
    assert s.items[-1] == {"key": "draw_stock", "seat": PERSON, "card": c("Ad")}
    before = s.st.copy()
    assert action_text("You", 5, 1, before) == "You knock" and action_text("simple", 5, 1, before) == "simple knocks"
    fresh = PlaySession.start(bot="simple", seed=2)
    assert fresh.events[0] in ("Hand 1: You deal", "Hand 1: simple deals")


def test_a_knock_from_the_discard_phase_is_checked_by_the_engine():
    s = session(KNOCKER, DEFENDER, 1, "pass", "pass")
    v = s.view()
    assert "knock" in v["allowed"] and set(v["knock_discards"]) == {c("Ad"), c("Kh")} and v["best_deadwood"] == 1
    before = s.st.copy()
    with pytest.raises(IllegalAction, match="cannot knock discarding 2♣: .* the knock limit is 10"):
        s.act("knock", c("2c"))
    with pytest.raises(IllegalAction, match="needs a card"):
        s.act("knock")
    assert np.array_equal(s.st, before) and s.stage == "play"
    s.act("knock", c("Kh"))
    assert s.stage == "lay_down" and s.view()["allowed"] == ["lay_down"]
    assert s.view()["arrange"]["deadwood"] == 1


def test_the_person_s_proposed_melds_and_the_bot_s_defence_are_the_automatic_showdown():
    s = session(KNOCKER, DEFENDER, 1, "pass", "pass", "Kh")  # the engine now asks the person to knock
    auto = s.st.copy()
    assert apply_action(auto, s.rules, 1) == 0
    s.act("knock")
    for bad in ([[c("7c"), c("7d")]], [[c("7c"), c("8s"), c("9s")]], [[c(x) for x in ("7c", "7d", "7h")]]):
        with pytest.raises(IllegalAction) as e:
            s.act("lay_down", melds=bad)
        assert e.value.status == 409 and s.stage == "lay_down" and s.st[S_PHASE] != PH_DONE
    s.act("lay_down", melds=s.view()["arrange"]["proposal"])
    assert s.hand_over and np.array_equal(s.done_st, auto)  # bots keep the automatic optimal showdown


def test_defending_lays_off_checks_each_card_and_takes_back():
    s = session(KNOCKER, DEFENDER, 0, "pass", "pass", "Kh", defend=True)
    assert s.st[S_CUR] == BOT and s.view()["your_turn"]
    with pytest.raises(IllegalAction, match="6♣ fits none") as e:
        s.act("lay_off", c("6c"))
    assert (e.value.code, e.value.values) == ("layoff_fits_none", {"card": c("6c")})  # for the page's own words
    assert s.knock["laid"] == 0
    s.act("lay_off", c("5c"))
    s.act("lay_off", c("6c"))
    assert s.knock["laid"] == mask_of(parse_cards("5c 6c"))
    assert s.view()["arrange"]["knocker_melds"][1] == [c(x) for x in ("2c", "3c", "4c", "5c", "6c")]
    s.act("take_back")
    assert s.knock["laid"] == 0
    assert s.events[-3:] == ["You lay off 5♣", "You lay off 6♣", "You take back your layoffs"]
    assert s.items[-1] == {"key": "take_back", "seat": PERSON}
    s.act("lay_off", c("7s"))
    with pytest.raises(IllegalAction, match="not in the hand"):  # a laid-off card cannot be in a meld too
        s.act("lay_down", melds=[[c("7s"), c("5c"), c("6c")]])
    s.act("pass")
    assert s.hand_over and int(s.done_st[S_LAID_OFF]) == mask_of(parse_cards("7s"))
    assert s.last_hand["hands"][BOT]["with_layoffs"][0] == [c(x) for x in ("7c", "7d", "7h", "7s")]


@pytest.mark.parametrize(
    "knocker, defender, layoffs, melded, deadwood",
    [
        (KNOCKER, "7s 5c 6c Js Qs 2h 3h 9d Td Jd", "7s", "9d Td Jd", 5 + 6 + 10 + 10 + 2 + 3),  # a knock
        (GIN_HAND, "7s 7d 7h Js Qs 2h 3h Qc Qd 4d", "", "7s 7d 7h Qs Qc Qd", 10 + 2 + 3 + 4),  # a gin
    ],
)
def test_a_pass_lays_down_the_best_melds_of_the_cards_not_laid_off(knocker, defender, layoffs, melded, deadwood):
    """The manual's Pass is for a hand with nothing to lay down; pressed with melds in hand, it keeps them."""
    s = session(knocker, defender, 0, "pass", "pass", "Kh" if knocker == KNOCKER else "Ad", defend=True)
    for card in layoffs.split():
        s.act("lay_off", c(card))
    assert s.view()["arrange"]["deadwood"] == deadwood
    s.act("pass")
    assert int(s.done_st[S_DEF_SETS] | s.done_st[S_DEF_RUNS]) == mask_of(parse_cards(melded))
    assert s.done_st[S_DEADWOOD + PERSON] == deadwood


def test_play_on_discards_without_a_knock_even_when_one_is_allowed():
    s = session(KNOCKER, DEFENDER, 1, "pass", "pass")
    s.act("play_on", c("Kh"))
    i = s.events.index("You discard K♥")
    assert s.events[i + 1] == "You do not knock"  # the engine asked (1 deadwood); play_on answered no
    assert s.stage == "play" and "You knock" not in s.events
    assert not (int(s.st[S_HAND]) >> c("Kh")) & 1


def test_gin_is_a_knock_from_the_discard_phase_laid_down_by_the_person():
    s = session(GIN_HAND, NO_MELDS, 1, "pass", "pass")  # draws Ad, which melds with nothing
    v = s.view()
    assert "big_gin" not in v["allowed"] and v["best_deadwood"] == 0 and c("Ad") in v["knock_discards"]
    s.act("knock", c("Ad"))
    assert s.stage == "lay_down" and s.view()["arrange"]["deadwood"] == 0
    with pytest.raises(IllegalAction, match="above this hand's knock limit"):
        s.act("lay_down", melds=[[c(x) for x in ("Kc", "Kd", "Kh")]])
    s.act("lay_down", melds=s.view()["arrange"]["proposal"])
    assert s.last_hand["outcome"] == "gin" and s.last_hand["points"][PERSON] == 25 + 67


def test_big_gin_is_declared_and_must_meld_every_card():
    s = session(GIN_HAND, NO_MELDS, 1, "pass", "pass", stock="Ks")  # draws Ks: all 11 cards meld
    assert "big_gin" in s.view()["allowed"]
    with pytest.raises(IllegalAction) as e:  # the words say what is allowed instead
        s.act("discard", c("5c"))
    want = "first declare big gin (big_gin), or decline it (no_big_gin) and then discard"
    assert str(e.value) == f"you cannot discard now: {want}"
    s.act("big_gin")
    assert s.stage == "lay_down" and s.view()["arrange"]["big_gin"]
    with pytest.raises(IllegalAction, match="big gin needs all 11 cards"):
        s.act("lay_down", melds=[[c(x) for x in m.split()] for m in ("2c 3c 4c", "8s 9s Ts", "Kc Kd Kh Ks")])
    s.act("lay_down", melds=[[c(x) for x in m.split()] for m in ("2c 3c 4c 5c", "8s 9s Ts", "Kc Kd Kh Ks")])
    assert s.last_hand["outcome"] == "big_gin" and s.last_hand["points"][PERSON] == 31 + 67


def declining_bot(spec="gin-chasing"):
    """gin-chasing, which plays on with up to 10 deadwood while the stock is long, made to decline big gin too."""
    b = load_bot(spec)
    functions = list(b.functions)
    functions[PH_BIG_GIN] = lambda *_: 0
    return dataclasses.replace(b, functions=tuple(functions))


def _hidden_declines(s, sent):
    """What ``sent`` (a view, as JSON) tells of the bot's declined knock or big gin: log items and lines."""
    v, bot = json.loads(sent), s.names[BOT]
    told = [i for i in v["log"] if i["seat"] == BOT and i["key"] in ("no_knock", "no_big_gin")]
    return (
        told
        + [f"{bot} does not ..."] * sent.count(f"{bot} does not")
        + [f"{bot} plays on"] * sent.count(f"{bot} plays on")
    )


def _play_a_move(s):
    """The person's move: knock as soon as a discard allows it, else shed the highest deadwood card."""
    v = s.view()
    if s.stage == "lay_down":
        s.act("lay_down", melds=v["arrange"]["proposal"])
    elif s.stage == "defend":
        s.act("pass")
    elif "pass" in v["allowed"]:
        s.act("pass")
    elif "draw_stock" in v["allowed"]:
        s.act("draw_stock")
    elif "no_big_gin" in v["allowed"]:
        s.act("no_big_gin")
    elif v["knock_discards"]:
        s.act("knock", v["knock_discards"][0])
    else:
        loose = v["you"]["deadwood_cards"] or [c["id"] for c in v["you"]["cards"]]
        s.act("play_on", max(loose, key=lambda x: (card_value(x), x)))


def test_the_bot_s_declined_knock_is_never_shown_to_the_person_and_the_games_play_on():
    """The engine asks a knock only when the discard leaves deadwood within the knock limit: a "gin-chasing plays
    on" line told the person the bot was that close.  Whole games against a bot that declines many knocks."""
    bot = declining_bot()
    declines = 0
    for seed in (1, 2):
        s = PlaySession.start(bot="gin-chasing", seed=seed, loader=lambda _: bot)
        for _ in range(3000):
            sent = json.dumps(s.view())
            assert not _hidden_declines(s, sent), _hidden_declines(s, sent)
            if s.game_over:
                break
            if s.hand_over:
                s.next_hand()
            else:
                _play_a_move(s)
        assert s.game_over
        assert [sum(h["points"][p] for h in s.history) for p in (0, 1)] == s.view()["scores"]
        assert max(s.view()["scores"]) >= 100
        declines += s.log.count(int(log_entry(BOT, PH_KNOCK, 0)))
    assert declines >= 5  # the bot did decline knocks: the test saw what it checks


def test_the_bot_s_declined_big_gin_is_never_shown_to_the_person():
    s = session(GIN_HAND, NO_MELDS, 0, "pass", "pass", stock="Ks", bot="gin-chasing", loader=lambda _: declining_bot())
    assert s.st[S_CUR] == BOT and s.table.phase == PH_BIG_GIN  # the bot drew Ks: its 11 cards meld
    s._bot_moves()
    assert int(log_entry(BOT, PH_BIG_GIN, 0)) in s.log  # it declined, then discarded
    sent = json.dumps(s.view())
    assert "big gin" not in sent and not _hidden_declines(s, sent)
    assert any(e.startswith("gin-chasing discards") for e in s.events)


@pytest.mark.parametrize(
    "preset, upcard, knocker, defender, discard, line",
    [
        (
            "oklahoma",
            "5s",
            KNOCKER,
            DEFENDER,
            "Kh",
            "You knock: (29 - 1 deadwood) x 2 (spade upcard) = 56 points to you",
        ),
        (
            "oklahoma",
            "5s",
            GIN_HAND,
            "7s 5d 6h Js Jh 2h 3h Qc Qd 4d",
            "Ad",
            "You go gin: (67 deadwood + 25 gin bonus) x 2 (spade upcard) = 184 points to you",
        ),
        (
            "oklahoma",
            "5s",
            KNOCKER,
            "Ac 4d 5d 6d 9h 9d 9c Jd Qd Kd",  # lays Ac off on 2c 3c 4c: 0 deadwood against 1
            "Kh",
            "simple undercuts you: (1 - 0 deadwood + 25 undercut bonus) x 2 (spade upcard) = 52 points to simple",
        ),
        (
            "standard",
            "5h",
            KNOCKER,
            "2h 4d 5d 6d 9h 9d 9c Jd Qd Kd",
            "Kh",
            "You knock: 2 - 1 deadwood = 1 point to you",
        ),
    ],
)
def test_the_score_line_doubles_the_whole_sum_and_reads_as_a_sentence(preset, upcard, knocker, defender, discard, line):
    """A spade upcard doubles the points: "(29 - 1 deadwood) x 2", not "29 - 1 deadwood x 2" (which reads as
    27); the person is "you" inside the sentence, and one point is a point."""
    st, r = setup(load_rules(preset), knocker, defender, upcard, stock="Ad", dealer_seat=1)
    act(st, r, "pass", "pass", discard, "knock")
    assert showdown(st, r, ("You", "simple"))["line"] == line
