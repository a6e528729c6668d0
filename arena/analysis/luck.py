"""Luck at every chance event of a game, and results with the luck taken out.

A game's result is skill plus luck.  Duplicate pairs cancel the luck of the
deals both games share; what is left is the luck of the cards each game
draws once the two games diverge.  This module measures that luck, as GNU
Backgammon measures a roll's, and subtracts it.

Luck of a chance event
----------------------
The analysis replays each stored game exactly (seed and action log), so it
sees the full state: both hands and the stock.  At each chance event it
compares the value ``V`` of what came with the mean value of what could have
come:

* **a stock draw**: the next card is uniform over the cards still in the
  stock (the shuffle is uniform, and nothing played so far depends on the
  order of the cards not yet drawn), so the luck is
  ``V(hand + the card drawn) - mean over the stock's cards c of V(hand + c)``;
* **the deal**: the non-dealer's and the dealer's ten cards are exchangeable
  (swapping the two blocks of the shuffle is as likely as not), so the luck
  is ``(V(the deal) - V(the deal with the two hands swapped)) / 2``.

Each luck term has mean exactly zero given everything before it, whatever
``V`` is, because the mean is over the cards that truly could have come.  So
the sum of a game's luck terms (a martingale stopped at the game's end) has
mean zero, and ``result - luck`` is an unbiased estimate of the expected
result: the *luck-adjusted result*.  How much variance it removes depends on
how well ``V`` predicts results; whether it is unbiased does not.

The value function
------------------
``V`` is fixed before any game is read: a table shipped with the package
(``luck_value.npz``), fitted offline by ``scripts/fit_luck_value.py`` from
simulated games of the built-in bots under the standard rules.  After a
stock draw it is looked up by the drawer's least deadwood after discarding,
the opponent's deadwood and the stock left; at the deal, by both hands'
deadwood.  Each cell holds, for the seat concerned, the mean points margin
of the hand and the chance and mean size of a hand won and of a hand lost:

* the *points* value is the expected hand margin;
* the *win* value is the chance of winning the game, from those hand
  outcomes and the game-value table of the Monte Carlo bot (the chance of
  winning from a score).

The value is read-only and its fingerprint (the file's SHA-256) is written
into every luck table; results are only computed with the shipped value,
and a stored table made with another is refused.  If a value could be
chosen after seeing the games it could be fitted to the noise of those very
games, and the adjusted result would no longer be unbiased.

Determinism and scale: a task is one stored chunk (its games' seeds and
answers), pure, run on any number of local processes or a Dask cluster
(:func:`arena.run.schedule.map_in_order`); tables come back in task order.
Memory holds one chunk's per-game rows at a time.
"""

from __future__ import annotations

import functools
import hashlib
import io
import json
import math
from collections.abc import Callable, Collection, Iterable, Iterator
from dataclasses import dataclass, field
from importlib.resources import files
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from arena.analysis.quantiles import t_quantile
from arena.botkit.game_value import win_chance
from arena.engine._jit import jit
from arena.engine.layout import (
    PH_DONE,
    PH_DRAW,
    PH_UPCARD_DEALER,
    R_TARGET,
    S_CUR,
    S_DEALER,
    S_DECK,
    S_HAND,
    S_HAND_NO,
    S_PHASE,
    S_POINTS,
    S_SCORE,
    S_STOCK_POS,
)
from arena.engine.melds import best_discard, deadwood
from arena.engine.replay import replay_start
from arena.engine.rng import RNG_WORDS
from arena.engine.step import apply_action, begin_hand, end_hand, read_declared, score_declared
from arena.settings.config import MAX_WORKERS

__all__ = [
    "LuckError",
    "LuckValue",
    "shipped_value",
    "TABLE",
    "dw_bin",
    "game_luck",
    "analyse_luck",
    "luck_sums",
    "LuckSums",
    "luck_results",
    "luck_per_bot",
    "stored_luck_per_bot",
    "viewer_data",
]

#: The luck table's name in the run store.
TABLE = "luck"
#: Deadwood bins: 0..10 one each (the knock limits), then two points wide to 24, wider above, 50+ the last.
DW_EDGES = np.array([11, 13, 15, 17, 19, 21, 23, 25, 28, 31, 35, 40, 50], dtype=np.int64)
NB = 11 + len(DW_EDGES)
#: Stock left after a draw, in bins of 4 cards.
NS = 8
#: Planes of a value cell: mean hand margin, P(hand won), mean points won, P(hand lost), mean points lost.
PLANES = ("margin", "p_won", "pts_won", "p_lost", "pts_lost")
#: Columns of an event row (see :func:`game_luck`).
EVENT_COLUMNS = ("hand", "kind", "seat", "step", "card", "a", "b", "s", "luck_points", "luck_win")
KIND_DEAL, KIND_DRAW = 0, 1
_FILE = "luck_value.npz"


class LuckError(ValueError):
    """A luck analysis that cannot be done as asked; the message is one line."""


@dataclass(frozen=True)
class LuckValue:
    """The fixed value function: read-only tables and the fingerprint of the file they came from."""

    draw: np.ndarray  # (5, NB, NB, NS): after a stock draw; [plane, drawer's bin, opponent's bin, stock bin]
    deal: np.ndarray  # (5, NB, NB): at the deal; [plane, non-dealer's bin, dealer's bin]
    sha256: str
    meta: dict[str, Any] = field(default_factory=dict, compare=False)


def _load_value() -> LuckValue:
    try:
        data = (files("arena.analysis") / _FILE).read_bytes()
    except OSError:
        raise LuckError(f"{_FILE} is missing from the package (python scripts/fit_luck_value.py makes it)") from None
    with np.load(io.BytesIO(data), allow_pickle=False) as z:
        draw = np.ascontiguousarray(z["draw"], dtype=np.float64)
        deal = np.ascontiguousarray(z["deal"], dtype=np.float64)
        meta = json.loads(str(z["meta"]))
    if draw.shape != (len(PLANES), NB, NB, NS) or deal.shape != (len(PLANES), NB, NB):
        raise LuckError(f"{_FILE}: tables of shape {draw.shape}, {deal.shape} do not fit this version")
    for a in (draw, deal):
        a.flags.writeable = False
    return LuckValue(draw, deal, hashlib.sha256(data).hexdigest(), meta)


@functools.cache
def shipped_value() -> LuckValue:
    """The value function shipped with the package (loaded once; its tables are read-only)."""
    return _load_value()


# --- the kernel: one game replayed, its luck at every chance event -------------------------------------


@jit
def dw_bin(d):
    """The deadwood bin of ``d`` points (see :data:`DW_EDGES`)."""
    if d <= 10:
        return d
    b = 11
    for i in range(1, DW_EDGES.shape[0]):
        if d >= DW_EDGES[i]:
            b = 11 + i
    return b


@jit
def _w(need_me, need_opp):
    """The game-value table at a fractional number of points still needed (linear between integers)."""
    lo = math.floor(need_me)
    f = need_me - lo
    a = win_chance(np.int64(lo), np.int64(need_opp))
    b = win_chance(np.int64(lo) + 1, np.int64(need_opp))
    return (1.0 - f) * a + f * b


@jit
def _win_value(p_won, pts_won, p_lost, pts_lost, need_me, need_opp):
    """Chance of winning the game for a seat whose hand is won/lost with these chances and mean points."""
    p_dead = max(0.0, 1.0 - p_won - p_lost)
    v = p_won * _w(need_me - pts_won, need_opp)
    v += p_lost * (1.0 - _w(need_opp - pts_lost, need_me))
    v += p_dead * _w(float(need_me), need_opp)
    return v


@jit
def _cell_win(deal_tab, i, j, need_me, need_opp):
    return _win_value(deal_tab[1, i, j], deal_tab[2, i, j], deal_tab[3, i, j], deal_tab[4, i, j], need_me, need_opp)


@jit
def stock_drawer(st, a):
    """The seat that answer ``a`` makes draw from the stock in state ``st``, -1 if none: a luck event."""
    ph = st[S_PHASE]
    if ph == PH_DRAW and a == 0:
        return st[S_CUR]
    if ph == PH_UPCARD_DEALER and a == 0:
        return 1 - st[S_CUR]  # both passed the upcard: the non-dealer draws from the stock
    return -1


@jit
def _game_luck(seed, rules, answers, draw_tab, deal_tab, ev, hands):
    """Replay one game; write its chance events into ``ev`` and each hand's points into ``hands``.

    Returns ``(events, hands, status)``; status 0, or ``-(pos + 1)`` when answer ``pos`` does not fit.
    Luck columns are seat 0's (seat 1's is the negative).  No bot is asked (:func:`replay_start`).
    """
    st, row = replay_start(seed, rules)
    scratch = np.zeros(RNG_WORDS, dtype=np.uint64)
    target = rules[R_TARGET]
    n = answers.shape[0]
    n_ev = 0
    n_h = 0
    pos = 0
    declared = 0  # answers that were declared melds, not decisions: an event's place counts decisions only
    vw_by_bin = np.zeros(NB)
    vp_by_bin = np.zeros(NB)
    while pos < n:
        begin_hand(st, rules, seed, scratch)
        d = st[S_DEALER]
        nd = 1 - d
        bn = dw_bin(deadwood(st[S_HAND + nd]))
        bd = dw_bin(deadwood(st[S_HAND + d]))
        need_nd = target - st[S_SCORE + nd]
        need_d = target - st[S_SCORE + d]
        lp = 0.5 * (deal_tab[0, bn, bd] - deal_tab[0, bd, bn])
        w1 = _win_value(
            deal_tab[1, bn, bd], deal_tab[2, bn, bd], deal_tab[3, bn, bd], deal_tab[4, bn, bd], need_nd, need_d
        )
        w2 = _win_value(
            deal_tab[1, bd, bn], deal_tab[2, bd, bn], deal_tab[3, bd, bn], deal_tab[4, bd, bn], need_nd, need_d
        )
        sign = 1.0 if nd == 0 else -1.0
        ev[n_ev, 0] = st[S_HAND_NO]
        ev[n_ev, 1] = KIND_DEAL
        ev[n_ev, 2] = nd
        ev[n_ev, 3] = pos - declared
        ev[n_ev, 4] = -1
        ev[n_ev, 5] = bn
        ev[n_ev, 6] = bd
        ev[n_ev, 7] = -1
        ev[n_ev, 8] = sign * lp
        ev[n_ev, 9] = sign * 0.5 * (w1 - w2)
        n_ev += 1
        while st[S_PHASE] != PH_DONE and pos < n:
            a = answers[pos]
            drawer = stock_drawer(st, a)
            if drawer >= 0:
                sp = st[S_STOCK_POS]
                hand = st[S_HAND + drawer]
                b = dw_bin(deadwood(st[S_HAND + 1 - drawer]))
                s = min((52 - sp - 1) // 4, NS - 1)
                need_me = target - st[S_SCORE + drawer]
                need_opp = target - st[S_SCORE + 1 - drawer]
                for k in range(NB):
                    vp_by_bin[k] = draw_tab[0, k, b, s]
                    vw_by_bin[k] = _win_value(
                        draw_tab[1, k, b, s], draw_tab[2, k, b, s], draw_tab[3, k, b, s], draw_tab[4, k, b, s],
                        need_me, need_opp,
                    )  # fmt: skip
                sum_p = 0.0
                sum_w = 0.0
                got = 0
                for i in range(sp, 52):
                    c = st[S_DECK + i]
                    _, dwa = best_discard(hand | (np.int64(1) << c), np.int64(-1))
                    k = dw_bin(dwa)
                    sum_p += vp_by_bin[k]
                    sum_w += vw_by_bin[k]
                    if i == sp:
                        got = k
                m = 52 - sp
                sign = 1.0 if drawer == 0 else -1.0
                ev[n_ev, 0] = st[S_HAND_NO]
                ev[n_ev, 1] = KIND_DRAW
                ev[n_ev, 2] = drawer
                ev[n_ev, 3] = pos - declared
                ev[n_ev, 4] = st[S_DECK + sp]
                ev[n_ev, 5] = got
                ev[n_ev, 6] = b
                ev[n_ev, 7] = s
                ev[n_ev, 8] = sign * (vp_by_bin[got] - sum_p / m)
                ev[n_ev, 9] = sign * (vw_by_bin[got] - sum_w / m)
                n_ev += 1
            if apply_action(st, rules, a) != 0:
                return n_ev, n_h, -(pos + 1)
            pos += 1
        if st[S_PHASE] != PH_DONE:
            break
        sets, runs, after = read_declared(answers, pos)
        if after >= 0:  # the knocker's declared melds: the hand as it was scored (checked when played)
            score_declared(st, rules, sets, runs)
            declared += after - pos
            pos = after
        hands[n_h, 0] = st[S_POINTS]
        hands[n_h, 1] = st[S_POINTS + 1]
        n_h += 1
        if end_hand(st, rules, row):
            break
    return n_ev, n_h, 0


def game_luck(seed: int, rules: np.ndarray, answers: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One game's chance events (rows of :data:`EVENT_COLUMNS`) and each finished hand's points (seat 0, 1).

    ``luck_points`` is in points of the hand margin, ``luck_win`` in chance
    of winning the game, both for seat 0.  Raises :class:`LuckError` when
    the answers do not replay.
    """
    ans = np.ascontiguousarray(answers, dtype=np.int64)
    ev = np.zeros((2 * ans.size + 2, len(EVENT_COLUMNS)))
    hands = np.zeros((ans.size + 1, 2))
    value = shipped_value()
    rules_a = np.ascontiguousarray(rules, dtype=np.int64)
    n_ev, n_h, status = _game_luck(np.int64(seed), rules_a, ans, value.draw, value.deal, ev, hands)
    if status < 0:
        raise LuckError(f"the stored answer at {-status - 1} does not fit the game seeded {seed}")
    return ev[:n_ev], hands[:n_h]


@jit
def _chunk_luck(seeds, offsets, answers, rules, draw_tab, deal_tab, out):
    """Per game of a chunk: luck sums (points, win; deals only: points, win), events, status."""
    ev = np.zeros((2 * 4096 + 2, 10))
    hands = np.zeros((4097, 2))
    for g in range(seeds.shape[0]):
        a = answers[offsets[g] : offsets[g + 1]]
        if a.shape[0] > 4096:
            ev = np.zeros((2 * a.shape[0] + 2, 10))
            hands = np.zeros((a.shape[0] + 1, 2))
        n_ev, _, status = _game_luck(seeds[g], rules, a, draw_tab, deal_tab, ev, hands)
        lp = 0.0
        lw = 0.0
        dp = 0.0
        dw = 0.0
        for i in range(n_ev):
            lp += ev[i, 8]
            lw += ev[i, 9]
            if ev[i, 1] == KIND_DEAL:
                dp += ev[i, 8]
                dw += ev[i, 9]
        out[g, 0] = lp
        out[g, 1] = lw
        out[g, 2] = dp
        out[g, 3] = dw
        out[g, 4] = n_ev
        out[g, 5] = status


# --- a run: one task per stored chunk ---------------------------------------------------------------------

#: The luck table: one row per game, from bot_a's side (seat sums in the seat's own sign).
SCHEMA = pa.schema(
    [
        ("game_id", pa.int64()),
        ("matchup", pa.string()),
        ("bot_a", pa.string()),
        ("bot_b", pa.string()),
        ("pair", pa.int64()),
        ("hands", pa.int32()),
        ("margin", pa.float64()),  # bot_a's final score minus bot_b's
        ("win", pa.float64()),  # 1 bot_a won, 0 lost, 0.5 no winner
        ("luck_points", pa.float64()),  # bot_a's luck in points over the game
        ("luck_win", pa.float64()),  # bot_a's luck in chance of winning the game
        ("deal_points", pa.float64()),  # the part of it from the deals
        ("deal_win", pa.float64()),
        ("events", pa.int32()),
    ]
)


@dataclass(frozen=True)
class LuckTask:
    """One stored chunk's games, and everything needed to measure their luck (pure)."""

    rules: tuple[int, ...]
    games: pd.DataFrame  # game_id, matchup, bot_a, bot_b, pair, swap, seed, score0, score1, winner, hands
    offsets: np.ndarray
    answers: np.ndarray


def run_task(task: LuckTask) -> pa.Table:
    """Measure every game of a task (what a worker runs)."""
    g = task.games
    value = shipped_value()
    out = np.zeros((len(g), 6))
    _chunk_luck(
        g["seed"].to_numpy(np.int64),
        task.offsets,
        task.answers,
        np.array(task.rules, dtype=np.int64),
        value.draw,
        value.deal,
        out,
    )
    # a forfeited game's log ends with the answer that forfeited it: its luck is that of the events before
    forfeited = g["error"].astype(object).fillna("").astype(str).to_numpy() != ""
    bad = np.flatnonzero((out[:, 5] < 0) & ~forfeited)
    if bad.size:
        i = int(bad[0])
        raise LuckError(f"game {int(g['game_id'].iloc[i])}: the stored action log does not replay")
    sign = np.where(g["swap"].to_numpy() == 0, 1.0, -1.0)  # bot_a in seat 0 unless swapped
    s0 = g["score0"].to_numpy(float)
    s1 = g["score1"].to_numpy(float)
    winner = g["winner"].astype(object).fillna("").astype(str).to_numpy()
    bot_a = g["bot_a"].astype(str).to_numpy()
    win = np.where(winner == bot_a, 1.0, np.where(winner == "", 0.5, 0.0))
    return pa.Table.from_pydict(
        {
            "game_id": g["game_id"].to_numpy(np.int64),
            "matchup": g["matchup"].astype(str).to_numpy(),
            "bot_a": bot_a,
            "bot_b": g["bot_b"].astype(str).to_numpy(),
            "pair": g["pair"].to_numpy(np.int64),
            "hands": g["hands"].to_numpy(np.int32),
            "margin": sign * (s0 - s1),
            "win": win,
            "luck_points": sign * out[:, 0],
            "luck_win": sign * out[:, 1],
            "deal_points": sign * out[:, 2],
            "deal_win": sign * out[:, 3],
            "events": out[:, 4].astype(np.int32),
        },
        schema=SCHEMA,
    )


_GAME_COLUMNS = [
    "game_id",
    "matchup",
    "bot_a",
    "bot_b",
    "pair",
    "swap",
    "seed",
    "score0",
    "score1",
    "winner",
    "hands",
    "error",
]


def _tasks(store: Any, rules: tuple[int, ...]) -> Iterator[LuckTask]:
    for chunk in store.chunks(_GAME_COLUMNS, actions=True):
        if chunk.actions is None:
            raise LuckError(
                f"{store.dir}: {chunk.matchup} has no stored action logs (run with record_hands and record_log on)"
            )
        g = chunk.games
        acts = dict(zip(chunk.actions["game_id"].tolist(), chunk.actions["actions"].tolist(), strict=True))
        g = g[g["game_id"].isin(acts)].reset_index(drop=True)
        if g.empty:
            continue
        logs = [np.frombuffer(acts[int(i)], dtype=np.uint8) for i in g["game_id"]]
        offsets = np.zeros(len(logs) + 1, dtype=np.int64)
        offsets[1:] = np.cumsum([len(x) for x in logs])
        answers = np.concatenate(logs).astype(np.int64) if logs else np.zeros(0, dtype=np.int64)
        yield LuckTask(rules, g, offsets, answers)


@dataclass
class LuckRun:
    """What :func:`analyse_luck` did."""

    table: str
    games: int
    seconds: float
    value: str
    resumed: int = 0  # games kept from an interrupted pass of the same measure


def analyse_luck(
    run_dir: str | Path,
    *,
    workers: int = 1,
    client: Any = None,
    scheduler: str | None = None,
    progress: Callable[[int], None] | None = None,
) -> LuckRun:
    """Measure the luck of every stored game of a run, with the shipped value, into the luck table.

    Streams chunk by chunk; ``workers`` local processes or a Dask ``client``
    (or its ``scheduler`` address).  The table's header records the value's
    fingerprint.  There is deliberately no way to pass another value function.
    """
    import time

    from arena.engine.rules_array import rules_array
    from arena.run.schedule import TaskFailed, map_in_order
    from arena.run.store import RunStore, StoreError, as_input_error

    if not 0 <= workers <= MAX_WORKERS:
        raise LuckError(f"--workers {workers} is not allowed (0 for one per core, up to {MAX_WORKERS})")
    run = Path(run_dir)
    try:
        store = RunStore(run)
        rules = tuple(int(x) for x in rules_array(store.rules()))
    except StoreError as exc:
        raise as_input_error(exc, LuckError) from None
    own = None
    if client is None and scheduler:
        from arena.run.schedule import DaskMissing, SchedulerAddressError, connect_scheduler

        try:
            client = own = connect_scheduler(scheduler)
        except DaskMissing:
            raise LuckError("--scheduler needs Dask: pip install 'gin-arena[dask]'") from None
        except SchedulerAddressError as exc:  # an unreachable scheduler passes through: the machine's fault
            raise LuckError(str(exc)) from None
    start = time.monotonic()
    n = resumed = 0
    writer = None
    try:
        writer = RunStore.open_for_writing(run, what="arena luck")
        value = shipped_value()
        info = {"value_sha256": value.sha256, "value": value.meta.get("source", "")}
        # A failure halfway (or Ctrl-C) leaves the earlier table, and the chunks measured for the next pass.
        with writer.staged_analysis(TABLE, info) as put:
            done: set[int] = set()
            for kept in put.kept(["game_id"]):
                done.update(int(x) for x in kept["game_id"])
            n = resumed = len(done)
            if progress is not None and n:
                progress(n)
            tasks = (t for t in _tasks(store, rules) if not done.issuperset(int(x) for x in t.games["game_id"]))
            for part, table in enumerate(map_in_order(run_task, tasks, workers=workers, client=client)):
                put(part, table)
                n += table.num_rows
                if progress is not None:
                    progress(n)
            if n == 0:
                raise LuckError(f"{run}: no stored game with an action log to measure")
    except (StoreError, TaskFailed) as exc:
        raise as_input_error(exc, LuckError) from None
    finally:
        if writer is not None:
            writer.close()
        if own is not None:
            own.close()
    return LuckRun(TABLE, n, time.monotonic() - start, value.sha256, resumed)


# --- reading it back: plain and luck-adjusted results -------------------------------------------------------


@dataclass
class LuckSums:
    """Additive per-pair sums of one matchup: plain and adjusted, points and wins (pairs are the units)."""

    matchup: str
    bot_a: str
    bot_b: str
    n: int = 0
    games: int = 0
    hands: int = 0
    sums: np.ndarray = field(default_factory=lambda: np.zeros((4, 2)))  # [margin, adj margin, win, adj win] x [s, ss]
    luck_abs: float = 0.0  # sum over games of |luck in points|

    def add(self, pairs: pd.DataFrame, games: int, hands: int, luck_abs: float) -> None:
        vals = [pairs["margin"], pairs["margin"] - pairs["luck_points"], pairs["win"], pairs["win"] - pairs["luck_win"]]
        for i, v in enumerate(vals):
            x = v.to_numpy(float)
            self.sums[i, 0] += x.sum()
            self.sums[i, 1] += (x * x).sum()
        self.n += len(pairs)
        self.games += games
        self.hands += hands
        self.luck_abs += luck_abs


def luck_sums(parts: Iterable[pd.DataFrame]) -> dict[str, LuckSums]:
    """Per matchup, the sums of the per-pair means of plain and adjusted results (streamed part by part).

    Each part is one stored chunk, and a chunk holds whole pairs (a single game is its own pair without
    duplicate pairs), so a pair's games are always in one part.
    """
    out: dict[str, LuckSums] = {}
    for df in parts:
        if df.empty:
            continue
        for m, sub in df.groupby("matchup", sort=False):
            s = out.setdefault(str(m), LuckSums(str(m), str(sub["bot_a"].iloc[0]), str(sub["bot_b"].iloc[0])))
            pairs = sub.groupby("pair")[["margin", "win", "luck_points", "luck_win"]].mean()
            s.add(pairs, len(sub), int(sub["hands"].sum()), float(sub["luck_points"].abs().sum()))
    return out


def _mean_ci(n: int, s: float, ss: float, conf: float) -> tuple[float, float, float, float]:
    mean = s / n
    var = max(ss - n * mean * mean, 0.0) / (n - 1) if n > 1 else float("nan")
    h = t_quantile(conf, n - 1) * math.sqrt(var / n) if n > 1 else float("nan")
    return mean, mean - h, mean + h, var


def luck_results(parts: Iterable[pd.DataFrame], conf: float = 0.95) -> pd.DataFrame:
    """Per matchup and side: points per game and win rate, plain and luck-adjusted, with intervals.

    Intervals are t intervals over duplicate pairs (a pair's mean is one
    observation; without duplicate pairs each game is its own pair, and
    ``pairs`` equals ``games``), but the plain win rate's, which is the
    matchups table's (modified Wilson, see :func:`arena.analysis.stats.share_ci`).
    ``games_ratio`` is plain variance over adjusted variance: how many times
    more games the plain result needs for the interval the adjusted one has;
    nan (undefined) when either variance is 0, as when every game had the
    same result.
    """
    from arena.analysis.stats import share_ci

    rows = []
    for s in luck_sums(parts).values():
        if s.n < 2:
            continue
        est = [_mean_ci(s.n, s.sums[i, 0], s.sums[i, 1], conf) for i in range(4)]
        est[2] = (*share_ci(s.n, s.sums[2, 0], s.sums[2, 1], conf), est[2][3])
        for side, bot, opp, flip in ((0, s.bot_a, s.bot_b, False), (1, s.bot_b, s.bot_a, True)):
            row: dict[str, Any] = {"matchup": s.matchup, "bot": bot, "opponent": opp, "pairs": s.n, "games": s.games}
            for name, (i, j) in (("points", (0, 1)), ("win", (2, 3))):
                for tag, k in (("plain", i), ("adjusted", j)):
                    mean, lo, hi, _ = est[k]
                    if flip:
                        mean, lo, hi = (-mean, -hi, -lo) if name == "points" else (1 - mean, 1 - hi, 1 - lo)
                    row[f"{name}_{tag}"] = mean
                    row[f"{name}_{tag}_lo"] = lo
                    row[f"{name}_{tag}_hi"] = hi
                # undefined (nan) when either varies not at all: every game the same result made it 0.00
                ok = est[i][3] > 0 and est[j][3] > 0
                row[f"{name}_games_ratio"] = est[i][3] / est[j][3] if ok else float("nan")
            row["luck_per_game"] = s.luck_abs / s.games
            rows.append(row)
            del side
    return pd.DataFrame(rows)


def luck_per_bot(parts: Iterable[pd.DataFrame]) -> pd.DataFrame:
    """Per bot: its mean luck per game and per hand, in points and in chance of winning (streamed).

    Positive: the cards favoured it.  Over many games this tends to zero for
    every bot (luck has mean zero); over a few it says how much of a result
    was the cards.
    """
    acc: dict[str, np.ndarray] = {}  # games, hands, luck points, luck win
    for df in parts:
        if df.empty:
            continue
        for side, sign in (("bot_a", 1.0), ("bot_b", -1.0)):
            g = df.groupby(side)[["hands", "luck_points", "luck_win"]].agg(["sum", "size"])
            for bot, r in g.iterrows():
                a = acc.setdefault(str(bot), np.zeros(4))
                a += [
                    r[("hands", "size")],
                    r[("hands", "sum")],
                    sign * r[("luck_points", "sum")],
                    sign * r[("luck_win", "sum")],
                ]
    rows = [
        {
            "bot": b,
            "games": int(a[0]),
            "hands": int(a[1]),
            "luck_points_per_game": a[2] / a[0],
            "luck_points_per_hand": a[2] / a[1],
            "luck_win_per_game": a[3] / a[0],
        }
        for b, a in sorted(acc.items())
    ]
    return pd.DataFrame(rows)


def stored_luck_per_bot(run_dir: str | Path, game_ids: Collection[int] | None = None) -> pd.DataFrame | None:
    """:func:`luck_per_bot` of a run's stored luck table (None when there is none or it is not the shipped value's).

    ``game_ids``: only those games (``arena analyze`` shows the luck of the games it graded, not of the
    whole run); the frame is empty when the table holds none of them.
    """
    from arena.run.store import RunStore, StoreError

    cols = ["bot_a", "bot_b", "hands", "luck_points", "luck_win"]
    try:
        store = RunStore(run_dir)
        if TABLE not in store.analyses() or store.analysis_info(TABLE).get("value_sha256") != shipped_value().sha256:
            return None
        if game_ids is None:
            return luck_per_bot(store.analysis_parts(TABLE, cols))
        ids = np.fromiter((int(i) for i in game_ids), dtype=np.int64)
        parts = store.analysis_parts(TABLE, ["game_id", *cols])
        return luck_per_bot(df[df["game_id"].isin(ids)] for df in parts)
    except StoreError:
        return None


def stored_results(run_dir: str | Path, conf: float = 0.95) -> pd.DataFrame | None:
    """The luck-adjusted results of a run's stored luck table (None when there is none).

    Refuses a table made with another value function than the shipped one.
    """
    from arena.run.store import RunStore, StoreError, as_input_error

    try:
        store = RunStore(run_dir)
        if TABLE not in store.analyses():
            return None
        info = store.analysis_info(TABLE)
        shipped = shipped_value().sha256
        if info.get("value_sha256") != shipped:
            raise LuckError(
                f"{run_dir}: the luck table was measured with another value function "
                f"({str(info.get('value_sha256'))[:12]}, this arena ships {shipped[:12]}): run arena luck again"
            )
        return luck_results(store.analysis_parts(TABLE), conf)
    except StoreError as exc:
        raise as_input_error(exc, LuckError) from None


#: A draw is marked very lucky (unlucky) in the viewer when it moved the drawer's chance of winning the game
#: by at least this much up (down) against the average card it could have drawn.
MARK_WIN = 0.05


def viewer_data(run_dir: str | Path, game_id: int) -> dict[str, Any] | None:
    """One game's chance events for ``arena view``: per viewer step, the luck of the draw shown there.

    Computed from the stored log with the shipped value (no luck table needed); None when the game has
    no action log.  Steps count as the viewer's: each hand's deal is a step, then one per answer, so the
    state after answer ``pos`` of the ``d``-th hand is step ``pos + d``.
    """
    from arena.engine.rules_array import rules_array
    from arena.run.store import RunStore, StoreError

    try:
        store = RunStore(run_dir)
        rec = store.game_record(int(game_id))
        rules = rules_array(store.rules())
    except StoreError:
        return None
    if rec.actions is None:
        return None
    names = (str(rec.game["bot0"]), str(rec.game["bot1"]))
    try:
        ev, _ = game_luck(int(rec.game["seed"]), rules, np.asarray(rec.actions, dtype=np.int64))
    except LuckError:
        return None
    steps: dict[str, Any] = {}
    deals = 0
    totals = [0.0, 0.0]
    for row in ev:
        seat = int(row[2])
        sign = 1.0 if seat == 0 else -1.0
        if row[1] == KIND_DEAL:
            deals += 1
        lp, lw = sign * float(row[8]), sign * float(row[9])
        totals[0] += float(row[8])
        totals[1] += float(row[9])
        if row[1] != KIND_DRAW:
            continue
        mark = "very lucky" if lw >= MARK_WIN else "very unlucky" if lw <= -MARK_WIN else ""
        steps[str(int(row[3]) + deals)] = {
            "bot": names[seat],
            "seat": seat,
            "luck_points": round(lp, 2),
            "luck_win": round(lw, 4),
            "mark": mark,
        }
    return {"steps": steps, "mark_win": MARK_WIN, "seat0_luck_points": round(totals[0], 2),
            "seat0_luck_win": round(totals[1], 4), "value": shipped_value().sha256[:12]}  # fmt: skip
