"""Each seat's own view, kept up to date by the compiled decision loop.

:func:`arena.engine.play.play_hand` writes each seat's view whole when a
hand begins and then only the slots that changed.  These tests hold it to
the old contract - at every decision the view is exactly what
:func:`arena.engine.step.build_view` writes - by playing the same games in a
plain loop that rebuilds one view from scratch at every decision and
comparing every view each bot was shown (the bots below copy their view
into their memory), and they attack it: a bot that overwrites every slot of
its view after each decision must not change the engine's state, the
other seat's views or the game, and must see nothing in its own view but
what ``build_view`` shows it and what it wrote itself.
"""

from __future__ import annotations

import numpy as np
import pytest

from arena.botkit.bot import load_bot_source
from arena.engine import layout as lay
from arena.engine.layout import (
    G_SIZE,
    OUT_FORFEIT,
    PH_DONE,
    R_SIZE,
    S_CUR,
    S_DEALER,
    S_DISCARDED,
    S_ERROR,
    S_HAND,
    S_HAND_NO,
    S_JUST_TAKEN,
    S_KNOCK_LIMIT,
    S_MULT,
    S_OUTCOME,
    S_PASSED,
    S_PHASE,
    S_PILE,
    S_PILE_N,
    S_SCORE,
    S_STOCK_POS,
    S_TAKEN,
    S_TURN,
    S_UPCARD,
    V_DECISION,
    V_HAND,
    V_HAND_NO,
    V_IS_DEALER,
    V_JUST_TAKEN,
    V_KNOCK_LIMIT,
    V_MULT,
    V_MY_DISCARDED,
    V_MY_PASSED,
    V_MY_SCORE,
    V_MY_TAKEN,
    V_OPP_DISCARDED,
    V_OPP_PASSED,
    V_OPP_SCORE,
    V_OPP_TAKEN,
    V_PILE,
    V_PILE_N,
    V_RULES,
    V_SEAT,
    V_SIZE,
    V_STOCK_N,
    V_TOP,
    V_TURN,
    V_UPCARD,
)
from arena.engine.play import C_SIZE, kernel_work_space, play_games_kernel
from arena.engine.rng import RNG_WORDS
from arena.engine.rules_array import rules_array
from arena.engine.step import apply_action, begin_game, begin_hand, build_view, end_hand, forfeit_game, new_state
from arena.settings.rules import load_rules

#: Views a bot below records per game (more are counted, not kept).
RECORDS = 300

#: Simple's play, with every view it is shown copied into its memory after
#: Simple's own slots: memory[BASE] counts the decisions, then V_SIZE slots each.
RECORDER = f"""
import numpy as np
from arena.engine._jit import jit
from arena.engine.layout import V_SIZE
from bots import simple

BASE = simple.MEMORY
PARAMS = {{}}
MEMORY = BASE + 1 + {RECORDS} * V_SIZE


@jit
def record(view, memory):
    k = np.int64(memory[BASE])
    if k < {RECORDS}:
        for i in range(V_SIZE):
            memory[BASE + 1 + k * V_SIZE + i] = view[i]
    memory[BASE] = k + 1


@jit
def take_upcard(view, params, memory, rng):
    record(view, memory)
    return simple.take_upcard(view, params, memory, rng)


@jit
def draw(view, params, memory, rng):
    record(view, memory)
    return simple.draw(view, params, memory, rng)


@jit
def big_gin(view, params, memory, rng):
    record(view, memory)
    return simple.big_gin(view, params, memory, rng)


@jit
def discard(view, params, memory, rng):
    record(view, memory)
    return simple.discard(view, params, memory, rng)


@jit
def knock(view, params, memory, rng):
    record(view, memory)
    return simple.knock(view, params, memory, rng)
"""

#: Random legal play decided from the slots the engine rewrites before every
#: decision (hand, top card, card just taken) and its own generator, so it
#: plays the same whatever stale slots hold; after deciding it records its
#: view (memory[0] counts) and overwrites every slot with a poison value
#: (<= POISON, never a real view value).
POISON = -1_000_000
SCRIBBLER = f"""
import numpy as np
from arena.engine._jit import jit
from arena.engine.layout import V_HAND, V_JUST_TAKEN, V_SIZE, V_TOP
from arena.engine.rng import rand_below
from arena.botkit.lib import random_card

PARAMS = {{}}
MEMORY = 1 + {RECORDS} * V_SIZE


@jit
def record_and_scribble(view, memory):
    k = np.int64(memory[0])
    if k < {RECORDS}:
        for i in range(V_SIZE):
            memory[1 + k * V_SIZE + i] = view[i]
    memory[0] = k + 1
    for i in range(V_SIZE):
        view[i] = {POISON} - 1000 * k - i


@jit
def take_upcard(view, params, memory, rng):
    record_and_scribble(view, memory)
    return rand_below(rng, 2)


@jit
def draw(view, params, memory, rng):
    top = view[V_TOP]
    record_and_scribble(view, memory)
    return rand_below(rng, 2) if top >= 0 else 0


@jit
def big_gin(view, params, memory, rng):
    record_and_scribble(view, memory)
    return rand_below(rng, 2)


@jit
def discard(view, params, memory, rng):
    allowed = view[V_HAND]
    if view[V_JUST_TAKEN] >= 0:
        allowed &= ~(np.int64(1) << view[V_JUST_TAKEN])
    record_and_scribble(view, memory)
    return random_card(allowed, rng)


@jit
def knock(view, params, memory, rng):
    record_and_scribble(view, memory)
    return rand_below(rng, 2)
"""

#: The view slots rewritten before every decision (the others are fixed for a hand).
REFRESHED = (
    V_HAND,
    V_STOCK_N,
    V_PILE_N,
    V_TOP,
    V_JUST_TAKEN,
    V_OPP_TAKEN,
    V_OPP_DISCARDED,
    V_OPP_PASSED,
    V_MY_TAKEN,
    V_MY_DISCARDED,
    V_MY_PASSED,
    V_TURN,
    V_DECISION,
)


@pytest.fixture(scope="module")
def bots():
    return {
        "recorder": load_bot_source(RECORDER, name="recorder", source="test_seat_views recorder"),
        "scribbler": load_bot_source(SCRIBBLER, name="scribbler", source="test_seat_views scribbler"),
    }


def _kernel_game(seed, rules, bot0, bot1):
    """One game through the compiled batch kernel; returns (game row, final state, memories)."""
    mem = [np.zeros(b.memory_size) for b in (bot0, bot1)]
    games = np.zeros((1, G_SIZE), dtype=np.int64)
    counters = np.zeros(C_SIZE, dtype=np.int64)
    work = kernel_work_space(bot0.params, bot1.params)
    empty_hands = np.zeros((0, 22), dtype=np.int64)
    status = play_games_kernel(
        np.array([seed], dtype=np.int64),
        rules,
        bot0.functions,
        bot1.functions,
        bot0.params,
        bot1.params,
        mem[0],
        mem[1],
        games,
        empty_hands,
        np.zeros(0, dtype=np.int64),
        counters,
        *work,
    )
    assert status == 0
    return games[0], work[2], mem


def _reference_game(seed, rules, bot0, bot1):
    """The same game in a plain loop that rebuilds one shared view from scratch at every decision."""
    bots = (bot0, bot1)
    mem = [np.zeros(b.memory_size) for b in bots]
    rng = [np.zeros(RNG_WORDS, dtype=np.uint64) for _ in bots]
    params = [b.params.copy() for b in bots]
    scratch = np.zeros(RNG_WORDS, dtype=np.uint64)
    st = new_state()
    view = np.zeros(V_SIZE, dtype=np.int64)
    row = np.zeros(G_SIZE, dtype=np.int64)
    begin_game(st, rules, seed, rng[0], rng[1], mem[0], mem[1], row)
    while True:
        begin_hand(st, rules, seed, scratch)
        while st[S_PHASE] != PH_DONE:
            p = int(st[S_CUR])
            build_view(st, rules, p, view)
            answer = bots[p].functions[int(st[S_PHASE])](view, params[p], mem[p], rng[p])
            if apply_action(st, rules, answer) != 0:
                break
        if st[S_ERROR] != 0:
            forfeit_game(st, row)
        if st[S_OUTCOME] == OUT_FORFEIT or end_hand(st, rules, row):
            break
    return row, st, mem


def _python_view(st, rules, p):
    """What build_view must write, slot by slot in plain Python (the contract of docs/PROTOCOL.md)."""
    o = 1 - p
    n = int(st[S_PILE_N])
    v = np.zeros(V_SIZE, dtype=np.int64)
    v[V_HAND] = st[S_HAND + p]
    v[V_STOCK_N] = 52 - st[S_STOCK_POS]
    v[V_PILE_N] = n
    v[V_TOP] = st[S_PILE + n - 1] if n > 0 else -1
    v[V_JUST_TAKEN] = st[S_JUST_TAKEN] if st[S_CUR] == p else -1
    v[V_OPP_TAKEN] = st[S_TAKEN + o]
    v[V_OPP_DISCARDED] = st[S_DISCARDED + o]
    v[V_OPP_PASSED] = st[S_PASSED + o]
    v[V_MY_TAKEN] = st[S_TAKEN + p]
    v[V_MY_DISCARDED] = st[S_DISCARDED + p]
    v[V_MY_PASSED] = st[S_PASSED + p]
    v[V_MY_SCORE] = st[S_SCORE + p]
    v[V_OPP_SCORE] = st[S_SCORE + o]
    v[V_KNOCK_LIMIT] = st[S_KNOCK_LIMIT]
    v[V_MULT] = st[S_MULT]
    v[V_IS_DEALER] = 1 if st[S_DEALER] == p else 0
    v[V_TURN] = st[S_TURN]
    v[V_HAND_NO] = st[S_HAND_NO]
    v[V_SEAT] = p
    v[V_DECISION] = st[S_PHASE]
    v[V_UPCARD] = st[S_UPCARD]
    v[V_RULES : V_RULES + R_SIZE] = rules
    v[V_PILE : V_PILE + 52] = -1
    v[V_PILE : V_PILE + n] = st[S_PILE : S_PILE + n]
    # What the table showed at the end of the last hand, kept in the state since that hand ended.
    v[lay.V_SHOWN] = st[lay.S_SHOWN]
    v[lay.V_SHOWN_OUTCOME] = st[lay.S_SHOWN_OUTCOME]
    v[lay.V_SHOWN_KNOCKER] = st[lay.S_SHOWN_KNOCKER]
    v[lay.V_SHOWN_MY_HAND] = st[lay.S_SHOWN_HAND + p]
    v[lay.V_SHOWN_OPP_HAND] = st[lay.S_SHOWN_HAND + o]
    for name in ("KNOCK_SETS", "KNOCK_RUNS", "LAID_OFF", "DEF_SETS", "DEF_RUNS"):
        v[getattr(lay, "V_SHOWN_" + name)] = st[getattr(lay, "S_SHOWN_" + name)]
    for name in ("POINTS", "DEADWOOD"):
        v[getattr(lay, f"V_SHOWN_MY_{name}")] = st[getattr(lay, f"S_SHOWN_{name}") + p]
        v[getattr(lay, f"V_SHOWN_OPP_{name}")] = st[getattr(lay, f"S_SHOWN_{name}") + o]
    return v


@pytest.mark.parametrize("preset", ["standard", "oklahoma"])
def test_build_view_writes_each_slot_from_the_table(bots, preset):
    """build_view (a loop over VIEW_COPIES and a few special slots) against the
    slot-by-slot definition, for both seats at every decision of many
    games between the random-playing scribbler and Simple, stale garbage in
    the view beforehand."""
    rules = rules_array(load_rules(preset))
    scr, rec = bots["scribbler"], bots["recorder"]
    view = np.zeros(V_SIZE, dtype=np.int64)
    checked = 0
    for seed in range(30):
        bots_ = (scr, rec) if seed % 2 else (rec, scr)
        mem = [np.zeros(b.memory_size) for b in bots_]
        rng = [np.zeros(RNG_WORDS, dtype=np.uint64) for _ in bots_]
        st = new_state()
        row = np.zeros(G_SIZE, dtype=np.int64)
        begin_game(st, rules, seed, rng[0], rng[1], mem[0], mem[1], row)
        for _ in range(3):
            begin_hand(st, rules, seed, np.zeros(RNG_WORDS, dtype=np.uint64))
            while st[S_PHASE] != PH_DONE:
                p = int(st[S_CUR])
                for seat in (1 - p, p):
                    view[:] = 7_777
                    build_view(st, rules, seat, view)
                    assert np.array_equal(view, _python_view(st, rules, seat)), (preset, seed, seat)
                    checked += 1
                assert (
                    apply_action(st, rules, bots_[p].functions[int(st[S_PHASE])](view, bots_[p].params, mem[p], rng[p]))
                    == 0
                )
            if end_hand(st, rules, row):
                break
    assert checked > 3_000


def _views(memory, start, count):
    kept = min(count, RECORDS)
    return memory[start : start + kept * V_SIZE].reshape(kept, V_SIZE)


@pytest.mark.parametrize("preset", ["standard", "oklahoma"])
def test_every_view_a_bot_is_shown_is_what_build_view_writes(bots, preset):
    """Simple against Simple and against a random player (which takes from the
    pile half the time): the compiled loop's views equal the rebuilt ones at
    every decision, and so do the games."""
    rules = rules_array(load_rules(preset))
    rec, scr = bots["recorder"], bots["scribbler"]
    base = int(rec.module.BASE)
    decisions = 0
    for seed in range(40):
        for pair in ((rec, rec), (rec, scr), (scr, rec)):
            row, st, mem = _kernel_game(seed, rules, *pair)
            ref_row, ref_st, ref_mem = _reference_game(seed, rules, *pair)
            assert np.array_equal(row, ref_row), (preset, seed)
            assert np.array_equal(st, ref_st), (preset, seed)
            for p, bot in enumerate(pair):
                if bot is rec:
                    assert np.array_equal(mem[p], ref_mem[p]), (preset, seed, p)
                    decisions += int(mem[p][base])
    assert decisions > 10_000


def test_a_bot_that_overwrites_its_view_changes_nothing_but_its_own_picture(bots):
    """The scribbler overwrites all of its view after every decision.  The
    games, the engine's final state and every view of the other seat are
    those of the rebuilt-view loop (where the scribbling is wiped before
    each decision); the scribbler's own views hold, slot by slot, either what
    build_view shows it or its own poison, and the slots rewritten before
    every decision are always exact."""
    rules = rules_array(load_rules("standard"))
    rec, scr = bots["recorder"], bots["scribbler"]
    base = int(rec.module.BASE)
    stale = 0
    checked = 0
    for seed in range(60):
        for seat in (0, 1):
            pair = (scr, rec) if seat == 0 else (rec, scr)
            row, st, mem = _kernel_game(seed, rules, *pair)
            ref_row, ref_st, ref_mem = _reference_game(seed, rules, *pair)
            assert np.array_equal(row, ref_row), seed
            assert np.array_equal(st, ref_st), seed
            other = 1 - seat
            assert int(mem[other][base]) > 0
            assert np.array_equal(mem[other], ref_mem[other]), seed  # every view of the other seat
            count = int(mem[seat][0])
            assert count == int(ref_mem[seat][0])
            mine = _views(mem[seat], 1, count)
            truth = _views(ref_mem[seat], 1, count)
            same = mine == truth
            assert (same | (mine <= POISON)).all(), seed  # nothing but the table and its own writes
            assert same[:, list(REFRESHED)].all(), seed
            stale += int((~same).sum())
            checked += mine.shape[0]
    assert checked > 2_000
    assert stale > checked  # the poison did stay in the slots fixed for a hand: the attack was real
