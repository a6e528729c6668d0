"""Strength table: one bot against a field on duplicate deals, with pair-clustered intervals and its time per decision.

Every opponent plays ``--pairs`` duplicate pairs with the candidate: deal
``s_i`` (the seeds ``arena run`` gives pairs of a run seeded ``--seed``)
once with the candidate in seat 0, once in seat 1.  A pair scores its
wins (a draw counts one half) over its two games, and the interval of the
win rate is the pair-clustered interval of ``arena report``
(:func:`arena.analysis.stats.ratio_ci_moments`), so the luck the two games
of a pair share is accounted for.  Games are played by the compiled kernel
(:func:`arena.engine.play.play_batch`), split in chunks over ``--workers``
processes.

Time per decision: the candidate plays ``--time-pairs`` duplicate pairs
against ``simple`` in this process, one decision at a time, each of its
decisions timed alone (wall clock, so time it on a quiet machine; the load
average is printed).  The games replay from their seeds, so they are played
``--time-repeats`` times and a decision's time is its median over the
passes.  The line gives the median, the mean, the 99th percentile and the
slowest of those times, and the most decision time spent in one game (the
EAAI budget is 30 s a game).

A bot is any bot reference ``arena run`` takes (a built-in, a ``.py`` file,
``eaai:PLAYER.jar:CLASS``, ``cmd:PROGRAM``, ``sandbox:FILE``,
``policy:FILE``), and a built-in may carry parameters:
``monte-carlo:samples=1000,candidates=4``.  A game a bot forfeits (an
illegal move, a crash, a timeout) counts as a loss for it, and the table
says how many each side forfeited, with the first reason.

Run: ``python scripts/bench_strength.py --candidate marjj-style --pairs 1000``
(``--opponents`` defaults to every built-in bot and ``knock5``).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from arena.analysis.stats import ratio_ci_moments  # noqa: E402
from arena.botkit.bot import Bot, BotError  # noqa: E402
from arena.engine.layout import G_FORFEIT, G_SIZE, G_WINNER, PH_DONE, S_CUR, S_PHASE, V_SIZE  # noqa: E402
from arena.engine.play import play_batch  # noqa: E402
from arena.engine.rng import RNG_WORDS, new_rng  # noqa: E402
from arena.engine.rules_array import rules_array  # noqa: E402
from arena.engine.step import apply_action, begin_game, begin_hand, build_view, end_hand, new_state  # noqa: E402
from arena.external.client import close_bot  # noqa: E402
from arena.loading.load import load, load_bot  # noqa: E402
from arena.run.plan import pair_seeds  # noqa: E402
from arena.settings.botref import BotRef  # noqa: E402
from arena.settings.rules import load_rules  # noqa: E402

#: The field: every built-in bot, and the default round-robin's knock5 (early-knock at 5).
FIELD = (
    "random",
    "simple",
    "discard-tracking",
    "early-knock",
    "early-knock:knock_at=5",
    "gin-chasing",
    "marjj-style",
    "monte-carlo",
    "analyzer",
)
#: Pairs per chunk of work.
CHUNK = 50


def make_bot(spec: str) -> Bot:
    """A bot from any bot reference (read by :meth:`BotRef.parse`; a built-in's settings as ``name:key=value,...``)."""
    ref = BotRef.parse(spec)
    return load(ref, name=spec if ref.kind == "builtin" and ref.params else None)


def check_bots(specs: list[str]) -> None:
    """Load every bot once before any game, so a bad spec (an unknown bot, a parameter out of range,
    a kit player without the kit) is one line naming it rather than a worker's traceback."""
    for spec in specs:
        try:
            bot = make_bot(spec)
        except (BotError, ValueError) as exc:
            why = str(exc).removeprefix(f"{spec}: ")  # a bad reference's own message names it already
            raise SystemExit(f"bench_strength: {spec}: {why}") from None
        close_bot(bot)


def label(spec: str) -> str:
    return "knock5" if spec == "early-knock:knock_at=5" else spec


def play_pairs(job: tuple[str, str, str, np.ndarray]) -> tuple[np.ndarray, list[str], list[str]]:
    """Per pair: the candidate's score (wins + draws / 2) over its two games; and the
    messages of the games the candidate and the opponent forfeited."""
    cand_spec, opp_spec, rules_name, seeds = job
    cand, opp = make_bot(cand_spec), make_bot(opp_spec)
    try:
        rules = rules_array(load_rules(rules_name))
        a = play_batch(cand, opp, rules, seeds)
        b = play_batch(opp, cand, rules, seeds)
    finally:  # an external bot's processes end with the chunk
        close_bot(cand)
        close_bot(opp)
    score = np.zeros(len(seeds))
    forfeits: tuple[list[str], list[str]] = ([], [])
    for rec, seat in ((a, 0), (b, 1)):
        winners = rec.games[:, G_WINNER]
        # (numpy adds boolean arrays as "or": count in floats)
        score += (winners == seat).astype(float) + 0.5 * (winners == -1).astype(float)
        lost = np.flatnonzero(rec.games[:, G_FORFEIT] >= 0)
        for g, msg in zip(lost.tolist(), rec.errors, strict=True):
            forfeits[int(rec.games[g, G_FORFEIT] != seat)].append(msg)
    return score, forfeits[0], forfeits[1]


def match(cand: str, opp: str, rules: str, seed: int, pairs: int, workers: int) -> dict:
    seeds = pair_seeds(seed, 0, pairs)
    jobs = [(cand, opp, rules, seeds[i : i + CHUNK]) for i in range(0, pairs, CHUNK)]
    t0 = time.perf_counter()
    if workers > 1:
        with ProcessPoolExecutor(workers) as pool:
            parts = list(pool.map(play_pairs, jobs))
    else:
        parts = [play_pairs(j) for j in jobs]
    s = np.concatenate([p[0] for p in parts])
    n = np.full(s.shape, 2.0)
    r = ratio_ci_moments(len(s), n.sum(), s.sum(), (s * s).sum(), (s * n).sum(), (n * n).sum(), clip=(0.0, 1.0))
    return {
        "opponent": label(opp),
        "scores": s,
        "games": int(n.sum()),
        "win": float(r["est"]),
        "lo": float(r["lo"]),
        "hi": float(r["hi"]),
        "secs": time.perf_counter() - t0,
        "forfeits": ([m for p in parts for m in p[1]], [m for p in parts for m in p[2]]),
    }


def paired_difference(scores: np.ndarray, baseline: np.ndarray) -> dict:
    """The win-rate difference between two bots that played the same deal pairs, and its 95% interval.

    Each pair's two games were dealt alike for both bots, so the difference is
    taken pair by pair (a pair scores 0 to 2): the deal's luck, which both
    shared, cancels, and the interval is narrower than the two win rates'
    intervals would suggest.  A normal interval: there are hundreds of pairs.
    """
    d = (scores - baseline) / 2.0
    se = float(d.std(ddof=1) / np.sqrt(len(d))) if len(d) > 1 else float("nan")
    mean = float(d.mean())
    return {"diff": mean, "lo": mean - 1.96 * se, "hi": mean + 1.96 * se}


def decision_times(cand_spec: str, rules_name: str, pairs: int, seed: int, repeats: int = 1) -> dict:
    """Every decision of the candidate against simple, timed alone, and its decision time per game.

    The games replay exactly from their seeds, so with ``repeats`` > 1 they
    are played that many times and each decision's time is its median over
    the repeats: a decision the operating system happened to interrupt once
    no longer sets the slowest figure, which a single pass leaves to chance
    (the same decisions measured 4.2 and 11.2 ms slowest in two passes).
    """
    bot, simple = make_bot(cand_spec), load_bot("simple")
    rules = rules_array(load_rules(rules_name))
    try:
        play_batch(bot, simple, rules, np.arange(2))  # compile and warm up
        passes = [_timed_pass(bot, simple, rules, pairs, seed) for _ in range(repeats)]
    finally:
        close_bot(bot)
    if len({len(times) for times, _ in passes}) != 1:
        raise SystemExit(f"{cand_spec}: the timed games did not replay alike, so their times can't be paired")
    ms = 1000 * np.median(np.array([times for times, _ in passes]), axis=0)
    game_of = passes[0][1]
    per_game = np.bincount(game_of, weights=ms / 1000)
    return {
        "median_ms": float(np.median(ms)),
        "mean_ms": float(ms.mean()),
        "p99_ms": float(np.percentile(ms, 99)),
        "max_ms": float(ms.max()),
        "decisions": len(ms),
        "max_game_s": float(per_game.max()),
        "games": len(per_game),
        "repeats": repeats,
    }


def _timed_pass(bot: Bot, simple: Bot, rules: np.ndarray, pairs: int, seed: int) -> tuple[list[float], list[int]]:
    """One pass over the timed games: each of the candidate's decisions' seconds, and its game's index."""
    view = np.zeros(V_SIZE, dtype=np.int64)
    times: list[float] = []
    game_of: list[int] = []
    for g, game_seed in enumerate(pair_seeds(seed, 0, pairs).tolist()):
        for seat in (0, 1):
            bots = (bot, simple) if seat == 0 else (simple, bot)
            mems = [np.zeros(b.memory_size) for b in bots]
            rngs = [new_rng(2 * g + 1), new_rng(2 * g + 2)]
            st = new_state()
            row = np.zeros(G_SIZE, dtype=np.int64)
            begin_game(st, rules, game_seed, rngs[0], rngs[1], mems[0], mems[1], row)
            while True:
                begin_hand(st, rules, game_seed, np.zeros(RNG_WORDS, dtype=np.uint64))
                while st[S_PHASE] != PH_DONE:
                    p = int(st[S_CUR])
                    phase = int(st[S_PHASE])
                    build_view(st, rules, p, view)
                    b = bots[p]
                    t = time.perf_counter()
                    action = b.functions[phase](view, b.params, mems[p], rngs[p])
                    if p == seat:
                        times.append(time.perf_counter() - t)
                        game_of.append(2 * g + seat)
                    apply_action(st, rules, int(action))
                if end_hand(st, rules, row):
                    break
    return times, game_of


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--candidate", required=True, help="bot to measure (a bot reference, or name:key=value,..)")
    ap.add_argument("--opponents", default=",".join(FIELD), help="comma-separated bots (default: the field)")
    ap.add_argument("--pairs", type=int, default=1000, help="duplicate pairs per opponent (2 games each)")
    ap.add_argument("--seed", type=int, default=1, help="run seed of the deals")
    ap.add_argument("--rules", default="eaai")
    ap.add_argument("--workers", type=int, default=1, help="processes playing chunks of pairs")
    ap.add_argument(
        "--baseline",
        help="also play this bot on the same deals and give the candidate's difference from it, pair by pair",
    )
    ap.add_argument("--time-pairs", type=int, default=20, help="pairs against simple to time decisions (0: skip)")
    ap.add_argument(
        "--time-repeats", type=int, default=3, help="passes over the timed games; a decision's time is its median"
    )
    args = ap.parse_args()
    opponents = [o for o in args.opponents.split(",") if o and o != args.candidate]
    check_bots([args.candidate, *([args.baseline] if args.baseline else []), *opponents])
    load = os.getloadavg()
    print(f"{args.candidate} under '{args.rules}' rules, seed {args.seed}, {args.pairs} duplicate pairs per opponent")
    if not opponents:
        print("(no opponents: timing only)")
    print(f"load average at start {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} on {os.cpu_count()} cores")
    if opponents:
        print()
        extra = f" {args.baseline} | difference, paired (95% CI) |" if args.baseline else ""
        print("| opponent | games | win rate | 95% CI (pair-clustered) |" + extra)
        print("|---|---:|---:|---|" + ("---:|---|" if args.baseline else ""))
    for opp in opponents:
        r = match(args.candidate, opp, args.rules, args.seed, args.pairs, args.workers)
        extra = ""
        if args.baseline:
            b = match(args.baseline, opp, args.rules, args.seed, args.pairs, args.workers)
            d = paired_difference(r["scores"], b["scores"])
            extra = f" {b['win']:.1%} | {d['diff']:+.1%} [{d['lo']:+.1%}, {d['hi']:+.1%}] |"
        print(
            f"| {r['opponent']} | {r['games']:,} | {r['win']:.1%} | [{r['lo']:.1%}, {r['hi']:.1%}] |{extra}"
            f"  <!-- {r['secs']:.0f} s -->",
            flush=True,
        )
        for who, lost in zip((args.candidate, r["opponent"]), r["forfeits"], strict=True):
            if lost:
                print(f"  ({who} forfeited {len(lost)} of {r['games']:,} games; the first: {lost[0]})", flush=True)
    if args.time_pairs:
        t = decision_times(args.candidate, args.rules, args.time_pairs, args.seed + 1, args.time_repeats)
        load = os.getloadavg()
        print()
        print(
            f"time per decision against simple ({t['decisions']:,} decisions, {t['games']} games, one core, "
            f"median of {t['repeats']} passes, "
            f"load {load[0]:.2f}): median {t['median_ms']:.3f} ms, mean {t['mean_ms']:.3f} ms, "
            f"p99 {t['p99_ms']:.3f} ms, slowest {t['max_ms']:.1f} ms; most in one game {t['max_game_s']:.2f} s"
        )


if __name__ == "__main__":
    main()
