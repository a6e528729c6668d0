"""What limits the luck adjustment's gain: richer values and rollouts, measured against the shipped table.

Every value below is fixed before the test games are read (fitted on a run
of its own seed, or a rollout whose seeds are a function of what is known
before the card: both hands, the scores, the turn and the *set* of stock
cards, never their order), so each luck term keeps mean zero.  None of
these values is shipped; this script measures what each would add.

``decisions``  For N deals, each duplicate pair is played twice with
               independent bot generators (the cards the same, hand after
               hand): how much of the pair-result variance comes from the
               bots' own random choices (0 for deterministic bots: then all of
               it is chance, and only the value function limits the gain).
``rollouts``   The luck of each stock draw valued by R rollouts of the rest of
               the hand for every card the stock could have given (common
               random numbers: one reshuffle of the rest of the stock per
               rollout, shared by all candidates), either with a fixed
               Simple-like policy for both seats (``--policy proxy``,
               ``bots/rollout.py``) or with the game's own two bots
               (``--policy own``, fresh memories).  The deal keeps the table's
               term.  Ratio, correlation with the pair result and speed.
``features``   Tables fitted on a run of their own (seed 999) of the same
               matchup, evaluated on the test run (seed 34): the shipped
               cells refitted, plus each seat's expected deadwood after one
               more stock draw (live outs), bot-aware cells (one table per
               drawer's bot), and the full luck of the deal (its value minus
               the mean over all deals, which duplicate pairs do not cancel
               once the value knows the bots).

Run: ``nice python scripts/bench_luck_limits.py decisions --a gin-chasing --b early-knock --deals 3000``
     ``nice python scripts/bench_luck_limits.py rollouts --policy own --rollouts 8 --games 400``
     ``nice python scripts/bench_luck_limits.py features --fit-games 40000 --games 4000``
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

import bench_luck  # noqa: E402
import fit_luck_value  # noqa: E402

from arena.analysis import luck  # noqa: E402
from arena.analysis.luck import dw_bin  # noqa: E402
from arena.botkit.lib import mean_deadwood_after_draw  # noqa: E402
from arena.engine._jit import jit  # noqa: E402
from arena.engine.layout import (  # noqa: E402
    G_SIZE,
    G_WINNER,
    PH_DONE,
    S_DECK,
    S_ERROR,
    S_HAND,
    S_HAND_NO,
    S_PHASE,
    S_POINTS,
    S_SCORE,
    S_SIZE,
    S_STOCK_POS,
    S_TURN,
)
from arena.engine.melds import best_discard, deadwood  # noqa: E402
from arena.engine.play import C_SIZE, VIEWS_SIZE, play_hand  # noqa: E402
from arena.engine.rng import RNG_WORDS, seed_rng, shuffle, splitmix64  # noqa: E402
from arena.engine.rules_array import rules_array  # noqa: E402
from arena.engine.step import apply_action, begin_game, begin_hand, end_hand  # noqa: E402
from arena.loading.load import load_bot  # noqa: E402
from arena.run.store import RunStore  # noqa: E402
from arena.settings.rules import Rules  # noqa: E402
from bots.rollout import POLICY, rollout  # noqa: E402

# --- decisions: the bots' own randomness ---------------------------------------------------------------


@jit
def _play_one(seed, bot_seed, rules, bot0, bot1, p0, p1, mem0, mem1):
    """One game on the cards of ``seed`` with both bots' generators seeded from ``bot_seed``: margin, winner."""
    st = np.zeros(S_SIZE, dtype=np.int64)
    row = np.zeros(G_SIZE, dtype=np.int64)
    rng0 = np.zeros(RNG_WORDS, dtype=np.uint64)
    rng1 = np.zeros(RNG_WORDS, dtype=np.uint64)
    scratch = np.zeros(RNG_WORDS, dtype=np.uint64)
    views = np.zeros(VIEWS_SIZE, dtype=np.int64)
    log = np.zeros(0, dtype=np.int64)
    counters = np.zeros(C_SIZE, dtype=np.int64)
    begin_game(st, rules, seed, rng0, rng1, mem0, mem1, row)
    seed_rng(rng0, splitmix64(np.uint64(bot_seed) * np.uint64(2)))
    seed_rng(rng1, splitmix64(np.uint64(bot_seed) * np.uint64(2) + np.uint64(1)))
    while True:
        begin_hand(st, rules, seed, scratch)
        play_hand(st, rules, bot0, bot1, p0, p1, mem0, mem1, rng0, rng1, views, log, 0, counters)
        if st[S_ERROR] != 0:
            return np.int64(0), np.int64(-2)
        if end_hand(st, rules, row):
            break
    return st[S_SCORE] - st[S_SCORE + 1], row[G_WINNER]


def _bot(name: str):
    if name == "mc-fast":
        return load_bot("monte-carlo").with_params("mc-fast", {"samples": 100.0})
    return load_bot(name)


def decisions(args: argparse.Namespace) -> None:
    a, b = _bot(args.a), _bot(args.b)
    rules = np.ascontiguousarray(rules_array(Rules()), dtype=np.int64)
    rs = np.random.default_rng(7)
    seeds = rs.integers(0, 2**62, size=args.deals)
    res = np.zeros((args.deals, args.generators, 2))
    t = time.time()
    for i, s in enumerate(seeds):
        for j in range(args.generators):
            g = np.int64(rs.integers(0, 2**62))  # one generator pair per pair: seat 0's in both games, as the arena
            m1, w1 = _play_one(np.int64(s), g, rules, a.functions, b.functions, a.params.copy(), b.params.copy(),
                               np.zeros(a.memory_size), np.zeros(b.memory_size))  # fmt: skip
            m2, w2 = _play_one(np.int64(s), g, rules, b.functions, a.functions, b.params.copy(), a.params.copy(),
                               np.zeros(b.memory_size), np.zeros(a.memory_size))  # fmt: skip
            res[i, j, 0] = (m1 - m2) / 2
            res[i, j, 1] = ((w1 == 0) + (w2 == 1) + 0.5 * (w1 == -1) + 0.5 * (w2 == -1)) / 2
    print(
        f"# {args.a} vs {args.b}: {args.deals:,} deals x {args.generators} generator pairs in {time.time() - t:.0f} s"
    )
    print("| value | variance per pair | from the bots' own random choices | share |")
    print("|---|---|---|---|")
    for q, name in ((0, "points"), (1, "win")):
        x = res[:, :, q]
        total = x.reshape(-1).var(ddof=1)
        within = x.var(axis=1, ddof=1).mean()
        print(f"| {name} | {total:.4f} | {within:.4f} | {within / total if total > 0 else 0:.3f} |")


# --- rollouts ----------------------------------------------------------------------------------------------


@jit
def _known_hash(st, stock):
    """A seed from what is known before the next card: both hands, turn, hand, scores and the stock's *set*."""
    h = splitmix64(np.uint64(0x6C75636B) ^ np.uint64(st[S_HAND]))
    h = splitmix64(h ^ np.uint64(st[S_HAND + 1]))
    h = splitmix64(h ^ np.uint64(st[S_TURN] * 1000 + st[S_HAND_NO]))
    h = splitmix64(h ^ np.uint64(st[S_SCORE] * 1000 + st[S_SCORE + 1]))
    return splitmix64(h ^ np.uint64(stock))


@jit
def _rollout_luck(seed, rules, answers, n_roll, own, policy, bot0, bot1, p0, p1, m0, m1):
    """Seat 0's luck in points over the draws of one game, each candidate valued by ``n_roll`` rollouts."""
    st, row = luck.replay_start(seed, rules)
    st2 = np.zeros(S_SIZE, dtype=np.int64)
    rng = np.zeros(RNG_WORDS, dtype=np.uint64)
    rng0 = np.zeros(RNG_WORDS, dtype=np.uint64)  # the own bots' generators, seeded per rollout
    rng1 = np.zeros(RNG_WORDS, dtype=np.uint64)
    scratch = np.zeros(RNG_WORDS, dtype=np.uint64)
    views = np.zeros(VIEWS_SIZE, dtype=np.int64)
    log = np.zeros(0, dtype=np.int64)
    counters = np.zeros(C_SIZE, dtype=np.int64)
    cand = np.zeros(52, dtype=np.int64)
    order = np.zeros(52, dtype=np.int64)
    total = 0.0
    pos = 0
    while pos < answers.shape[0]:
        begin_hand(st, rules, seed, scratch)
        while st[S_PHASE] != PH_DONE and pos < answers.shape[0]:
            a = answers[pos]
            drawer = luck.stock_drawer(st, a)
            if drawer >= 0:
                sp = st[S_STOCK_POS]
                m = 52 - sp
                stock = bench_luck.stock_set(st)
                k = 0
                for c in range(52):  # candidates in card order: nothing below sees the stock's order
                    if stock >> c & 1:
                        cand[k] = c
                        k += 1
                h = _known_hash(st, stock)
                top = st[S_DECK + sp]
                mean = 0.0
                got = 0.0
                for ci in range(m):
                    c = cand[ci]
                    v = 0.0
                    for r in range(n_roll):
                        seed_rng(rng, splitmix64(h + np.uint64(r)))
                        for i in range(m):
                            order[i] = cand[i]
                        shuffle(order[:m], rng)  # the same reshuffle for every candidate (common random numbers)
                        st2[:] = st[:]
                        st2[S_DECK + sp] = c
                        j = sp + 1
                        for i in range(m):
                            if order[i] != c:
                                st2[S_DECK + j] = order[i]
                                j += 1
                        apply_action(st2, rules, a)
                        if own:
                            seed_rng(rng0, splitmix64(h ^ np.uint64(77 + r)))
                            seed_rng(rng1, splitmix64(h ^ np.uint64(99 + r)))
                            m0[:] = 0.0
                            m1[:] = 0.0
                            play_hand(st2, rules, bot0, bot1, p0, p1, m0, m1, rng0, rng1, views, log, 0, counters)
                        else:
                            rollout(st2, rules, rng, drawer, policy)
                        v += st2[S_POINTS + drawer] - st2[S_POINTS + 1 - drawer]
                    v /= n_roll
                    mean += v / m
                    if c == top:
                        got = v
                total += (1.0 if drawer == 0 else -1.0) * (got - mean)
            if apply_action(st, rules, a) != 0:
                return total
            pos += 1
        if st[S_PHASE] != PH_DONE or end_hand(st, rules, row):
            break
    return total


def rollouts(args: argparse.Namespace) -> None:
    base = bench_luck._base(args, "bench-luck-limits-")
    run = bench_luck.play(base, args.a, args.b, args.games, 34, args.workers)
    bench_luck.measure(run, args.workers)
    a, b = _bot(args.a), _bot(args.b)
    store = RunStore(run)
    rules = np.ascontiguousarray(rules_array(store.rules()), dtype=np.int64)
    simple_like = {**POLICY, "my_knock": 0.0, "my_take": 0.0}  # Simple-like for both seats
    policy = np.array(list(simple_like.values()), dtype=np.float64)
    rows = []
    t = time.time()
    for task in luck._tasks(store, tuple(int(x) for x in rules)):
        g = task.games
        for j in range(len(g)):
            x, y = (a, b) if g["swap"].iloc[j] == 0 else (b, a)
            lp = _rollout_luck(
                np.int64(g["seed"].iloc[j]), rules, task.answers[task.offsets[j] : task.offsets[j + 1]],
                args.rollouts, args.policy == "own", policy, x.functions, y.functions, x.params.copy(),
                y.params.copy(), np.zeros(max(1, x.memory_size)), np.zeros(max(1, y.memory_size)),
            )  # fmt: skip
            rows.append((int(g["game_id"].iloc[j]), (1.0 if g["swap"].iloc[j] == 0 else -1.0) * lp))
    dt = time.time() - t
    roll = pd.DataFrame(rows, columns=["game_id", "roll"])
    tab = pd.concat(list(store.analysis_parts(luck.TABLE))).merge(roll, on="game_id")
    p = tab.groupby("pair")[["margin", "luck_points", "deal_points", "roll"]].mean()
    v = p["margin"].var()
    adj = p["margin"] - p["roll"] - p["deal_points"]  # rollout draws, the table's deals
    print(f"# {len(roll):,} games in {dt:.0f} s ({len(roll) / dt:.2f} games/s)")
    print(
        "| policy | rollouts | pairs | points ratio, shipped table | points ratio, rollouts | "
        "corr, table | corr, rollouts |"
    )
    print("|---|---|---|---|---|---|---|")
    print(
        f"| {args.policy} | {args.rollouts} | {len(p):,} | {v / (p['margin'] - p['luck_points']).var():.2f} | "
        f"{v / adj.var():.2f} | {np.corrcoef(p['margin'], p['luck_points'])[0, 1]:.2f} | "
        f"{np.corrcoef(p['margin'], p['roll'] + p['deal_points'])[0, 1]:.2f} |"
    )


# --- features: richer tables fitted on a run of their own ----------------------------------------------


@jit
def _draw_features(seed, rules, answers, events, cands):
    """Per stock draw: hand, drawer, opponent's bin, stock bin (of 8 cards), first candidate row; per candidate
    card (the one drawn first): the drawer's bin after the best discard, its expected deadwood after one more
    draw (live outs, /3 in 8 bins) and the opponent's (the stock's cards or the discard), both without that card."""
    st, row = luck.replay_start(seed, rules)
    scratch = np.zeros(RNG_WORDS, dtype=np.uint64)
    n_ev = 0
    n_c = 0
    pos = 0
    while pos < answers.shape[0]:
        begin_hand(st, rules, seed, scratch)
        while st[S_PHASE] != PH_DONE and pos < answers.shape[0]:
            a = answers[pos]
            drawer = luck.stock_drawer(st, a)
            if drawer >= 0:
                sp = st[S_STOCK_POS]
                stock = bench_luck.stock_set(st)
                opp = st[S_HAND + 1 - drawer]
                events[n_ev, 0] = st[S_HAND_NO]
                events[n_ev, 1] = drawer
                events[n_ev, 2] = dw_bin(deadwood(opp))
                events[n_ev, 3] = min((52 - sp - 1) // 8, 3)
                events[n_ev, 4] = n_c
                for i in range(sp, 52):
                    c = st[S_DECK + i]
                    disc, left = best_discard(st[S_HAND + drawer] | (np.int64(1) << c), np.int64(-1))
                    rest = stock & ~(np.int64(1) << c)
                    mine = mean_deadwood_after_draw(
                        (st[S_HAND + drawer] | (np.int64(1) << c)) & ~(np.int64(1) << disc), rest
                    )
                    theirs = min(
                        mean_deadwood_after_draw(opp, rest), best_discard(opp | (np.int64(1) << disc), disc)[1]
                    )
                    cands[n_c, 0] = dw_bin(left)
                    cands[n_c, 1] = min(int(mine / 3), 7)
                    cands[n_c, 2] = min(int(theirs / 3), 7)
                    n_c += 1
                n_ev += 1
            if apply_action(st, rules, a) != 0:
                return n_ev, n_c
            pos += 1
        if st[S_PHASE] != PH_DONE or end_hand(st, rules, row):
            break
    return n_ev, n_c


def _games(run: Path):
    """Each game's row, its draws' features and each finished hand's points (from the luck kernel)."""
    zero_draw = np.zeros((len(luck.PLANES), luck.NB, luck.NB, luck.NS))
    zero_deal = np.zeros((len(luck.PLANES), luck.NB, luck.NB))
    for rules, r, ans in bench_luck.stored_games(run):
        events = np.zeros((ans.size + 2, 5), dtype=np.int64)
        cands = np.zeros((32 * ans.size + 2, 3), dtype=np.int64)
        n_ev, n_c = _draw_features(np.int64(r.seed), rules, ans, events, cands)
        ev = np.zeros((2 * ans.size + 2, len(luck.EVENT_COLUMNS)))
        hands = np.zeros((ans.size + 1, 2))
        n_lk, n_h, _ = luck._game_luck(np.int64(r.seed), rules, ans, zero_draw, zero_deal, ev, hands)
        yield r, events[:n_ev], cands[:n_c], hands[:n_h], ev[:n_lk]


def _shrunk_means(df: pd.DataFrame, levels: list[list[str]], shrink: float = fit_luck_value.SHRINK) -> dict:
    """Mean of ``y`` per cell of each level, shrunk toward the level above it (the first toward the mean)."""
    out: dict = {}
    prior = pd.Series(df["y"].mean(), index=df.index)
    for keys in levels:
        g = df.groupby(keys)["y"].agg(["sum", "count"])
        p = prior.groupby([df[k] for k in keys]).first()
        v = (g["sum"] + shrink * p) / (g["count"] + shrink)
        out[tuple(keys)] = v
        prior = v.reindex(pd.MultiIndex.from_frame(df[keys]) if len(keys) > 1 else df[keys[0]]).set_axis(df.index)
    return out


def features(args: argparse.Namespace) -> None:
    base = bench_luck._base(args, "bench-luck-limits-")
    fit_run = bench_luck.play(base / "fit", args.a, args.b, args.fit_games, 999, args.workers)
    test_run = bench_luck.play(base / "test", args.a, args.b, args.games, 34, args.workers)
    bench_luck.measure(test_run, args.workers)
    t = time.time()
    recs = []
    deals = []
    for r, events, cands, hands, ev in _games(fit_run):
        first = int(ev[0, 0])
        h = events[:, 0] - first
        keep = h < len(hands)
        e = events[keep]
        seat = e[:, 1]
        bot = np.where(seat == 0, r.swap, 1 - r.swap)  # 0: bot_a drew
        c = cands[e[:, 4]]  # the card drawn is each draw's first candidate
        y = hands[h[keep], seat] - hands[h[keep], 1 - seat]
        recs.append(np.column_stack([c[:, 0], c[:, 1], e[:, 2], c[:, 2], e[:, 3], bot, y]))
        d = ev[(ev[:, 1] == luck.KIND_DEAL) & (ev[:, 0] - first < len(hands))]
        ds = d[:, 2].astype(int)
        dh = (d[:, 0] - first).astype(int)
        deals.append(
            np.column_stack(
                [d[:, 5], d[:, 6], np.where(ds == 0, r.swap, 1 - r.swap), hands[dh, ds] - hands[dh, 1 - ds]]
            )
        )
    fit = pd.DataFrame(np.concatenate(recs), columns=["k", "e", "b", "f", "s", "bot", "y"])
    for col in ("k", "e", "b", "f", "s", "bot"):
        fit[col] = fit[col].astype(int)
    plain = _shrunk_means(fit, [["k", "b"], ["k", "b", "s"]])[("k", "b", "s")].to_dict()
    outs = _shrunk_means(fit, [["k", "b"], ["k", "b", "s"], ["k", "e", "b", "f", "s"]])[("k", "e", "b", "f", "s")]
    aware = _shrunk_means(fit, [["k", "b"], ["k", "b", "s"], ["bot", "k", "b", "s"]])[("bot", "k", "b", "s")]
    outs, aware = outs.to_dict(), aware.to_dict()
    dl = pd.DataFrame(np.concatenate(deals), columns=["a", "b", "bot", "y"]).astype({"a": int, "b": int, "bot": int})
    deal_v = _shrunk_means(dl, [["a", "b"], ["bot", "a", "b"]])[("bot", "a", "b")].to_dict()
    overall = float(fit["y"].mean())
    # the mean value of a uniform deal, per bot not dealing: over 100,000 random deals (a constant of the value)
    rng = np.random.default_rng(5)
    cells = np.zeros((luck.NB, luck.NB))
    for _ in range(100000):
        d = rng.permutation(52)
        h1 = sum(1 << int(x) for x in d[:10])
        h2 = sum(1 << int(x) for x in d[10:20])
        cells[dw_bin(deadwood(np.int64(h1))), dw_bin(deadwood(np.int64(h2)))] += 1
    cells /= cells.sum()

    def look(v: dict, keys: tuple, default: float) -> float:
        return float(v.get(tuple(int(x) for x in keys), default))

    deal_mean = [
        sum(cells[i, j] * look(deal_v, (w, i, j), 0.0) for i in range(luck.NB) for j in range(luck.NB) if cells[i, j])
        for w in (0, 1)
    ]
    print(f"# fitted on {len(fit):,} draws in {time.time() - t:.0f} s")
    rows = []
    for r, events, cands, _, ev in _games(test_run):
        sums = np.zeros(4)  # refitted, live outs, bot-aware draws, full deal luck
        for i, e in enumerate(events):
            stop = events[i + 1, 4] if i + 1 < len(events) else len(cands)
            c = cands[e[4] : stop]
            sign = 1.0 if e[1] == 0 else -1.0
            bot = r.swap if e[1] == 0 else 1 - r.swap
            d = overall
            v = [
                np.array([look(plain, (k, e[2], e[3]), d) for k, _, _ in c]),
                np.array([look(outs, (k, x, e[2], f, e[3]), look(plain, (k, e[2], e[3]), d)) for k, x, f in c]),
                np.array([look(aware, (bot, k, e[2], e[3]), look(plain, (k, e[2], e[3]), d)) for k, _, _ in c]),
            ]
            for q in range(3):
                sums[q] += sign * (v[q][0] - v[q].mean())
        for d in ev[ev[:, 1] == luck.KIND_DEAL]:
            bot = r.swap if d[2] == 0 else 1 - r.swap
            sums[3] += (1.0 if d[2] == 0 else -1.0) * (look(deal_v, (bot, int(d[5]), int(d[6])), 0.0) - deal_mean[bot])
        sg = 1.0 if r.swap == 0 else -1.0
        rows.append(
            {
                "game_id": r.game_id,
                "refit": sg * sums[0],
                "outs": sg * sums[1],
                "aware": sg * sums[2],
                "full_deal": sg * sums[3],
            }
        )
    tab = pd.concat(list(RunStore(test_run).analysis_parts(luck.TABLE))).merge(pd.DataFrame(rows), on="game_id")
    p = tab.groupby("pair")[["margin", "luck_points", "deal_points", "refit", "outs", "aware", "full_deal"]].mean()
    v = p["margin"].var()

    def ratio(lk: pd.Series) -> str:
        return f"{v / (p['margin'] - lk).var():.2f}"

    print(f"\n{args.a} vs {args.b}: fitted on {args.fit_games:,} games (seed 999), tested on {len(tab):,} (seed 34)")
    print("| value (draws; deals) | points ratio |")
    print("|---|---|")
    print(f"| shipped table; shipped | {ratio(p['luck_points'])} |")
    print(f"| refitted on this matchup; shipped | {ratio(p['refit'] + p['deal_points'])} |")
    print(f"| + live outs of both seats; shipped | {ratio(p['outs'] + p['deal_points'])} |")
    print(f"| bot-aware cells; shipped | {ratio(p['aware'] + p['deal_points'])} |")
    print(f"| bot-aware cells; bot-aware full deal luck | {ratio(p['aware'] + p['full_deal'])} |")
    corr = np.corrcoef(p["full_deal"], p["margin"])[0, 1]
    print(f"full deal luck: {p['full_deal'].var() / v:.3f} of the pair variance, corr {corr:.2f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("what", choices=("decisions", "rollouts", "features"))
    ap.add_argument("--a", default="gin-chasing")
    ap.add_argument("--b", default="early-knock")
    ap.add_argument("--deals", type=int, default=3000)
    ap.add_argument("--generators", type=int, default=2)
    ap.add_argument("--policy", choices=("proxy", "own"), default="own")
    ap.add_argument("--rollouts", type=int, default=8)
    ap.add_argument("--games", type=int, default=400)
    ap.add_argument("--fit-games", type=int, default=40000)
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--results", default="", help="keep the runs in this folder (and reuse those found there)")
    args = ap.parse_args()
    {"decisions": decisions, "rollouts": rollouts, "features": features}[args.what](args)


if __name__ == "__main__":
    main()
