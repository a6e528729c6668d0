"""Time write_report on a large synthetic run (default 1,000,000 games, no hands file).

    PYTHONPATH=. python scripts/bench_report.py [--games 1000000] [--bots 10]
                                                [--hands-games 100000] [--keep DIR]

Builds a games.parquet with the full games schema (values drawn to look like
real play: known Elo per bot, duplicate pairs whose two games are
negatively correlated, outcome counts per seat, scores, turns, pickups ...)
in a temporary folder, then runs write_report in a fresh Python process and
prints its wall time and peak resident memory (VmHWM of that process,
which includes the interpreter, pandas and matplotlib).  With
``--hands-games N`` a second, smaller run of N games *with* a hands.parquet
is timed too.  Targets: under 30 s and under 2 GiB for 1M games.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
OUTCOMES = ["knock", "undercut", "gin", "big_gin", "dead", "capped", "forfeit"]


def synthetic_games(n_games: int, n_bots: int, seed: int = 7) -> tuple[pd.DataFrame, np.ndarray]:
    """A round robin of ``n_bots`` with about ``n_games`` games in duplicate pairs."""
    rng = np.random.default_rng(seed)
    names = [f"bot{i:02d}" for i in range(n_bots)]
    elo = np.linspace(-300, 300, n_bots)
    ma, mb = np.triu_indices(n_bots, 1)
    n_m = ma.size
    pairs = max(1, n_games // (2 * n_m))
    N = 2 * pairs * n_m
    m = np.repeat(np.arange(n_m), 2 * pairs)
    pair = np.tile(np.repeat(np.arange(pairs), 2), n_m)
    swap = np.tile(np.array([0, 1], dtype=np.int8), pairs * n_m)
    a, b = ma[m], mb[m]
    # bot_a's win chance: Elo gap plus a deal effect shared by the pair's two games (seat 0 favoured)
    deal = np.repeat(rng.normal(0.0, 0.8, pairs * n_m), 2)
    logit = (elo[a] - elo[b]) * np.log(10) / 400 + deal * np.where(swap == 0, 1.0, -1.0)
    u = rng.random(N)
    pa = 1 / (1 + np.exp(-logit))
    a_wins = u < pa
    draw = rng.random(N) < 0.0005  # hand cap reached
    seat_a = swap.astype(np.int64)
    winner_seat = np.where(draw, -1, np.where(a_wins, seat_a, 1 - seat_a)).astype(np.int8)
    forfeit = rng.random(N) < 2e-5
    forfeit_seat = np.where(forfeit, 1 - np.maximum(winner_seat, 0), -1).astype(np.int8)
    winner_seat = np.where(forfeit, 1 - forfeit_seat, winner_seat).astype(np.int8)

    hands = 1 + rng.poisson(3.2, N)
    dead = rng.binomial(hands, 0.03)
    capped = rng.binomial(hands - dead, 0.001)
    decided = hands - dead - capped
    w = np.where(winner_seat >= 0, winner_seat, 0)
    win_h = np.maximum(np.minimum(decided, 1), rng.binomial(decided, 0.62))
    lose_h = decided - win_h
    kinds_p = [0.84, 0.07, 0.085, 0.005]
    cw = rng.multinomial(win_h, kinds_p)
    cl = rng.multinomial(lose_h, kinds_p)
    per_seat = {0: np.where((w == 0)[:, None], cw, cl), 1: np.where((w == 1)[:, None], cw, cl)}
    turns = hands * (6 + rng.poisson(9, N))
    score_w = 100 + rng.integers(0, 45, N)
    score_l = rng.integers(0, 100, N)
    score = {s: np.where(w == s, score_w, score_l) for s in (0, 1)}
    bot_names = np.asarray(names, dtype=object)
    bot0 = np.where(swap == 0, a, b)
    bot1 = np.where(swap == 0, b, a)
    seat_bot = np.stack([bot0, bot1], axis=1)
    winner = np.where(winner_seat >= 0, bot_names[seat_bot[np.arange(N), np.maximum(winner_seat, 0)]], "")
    matchups = np.asarray([f"{names[i]} vs {names[j]}" for i, j in zip(ma, mb)], dtype=object)
    cols: dict[str, object] = {
        "game_id": np.arange(N, dtype=np.int64),
        "matchup": matchups[m],
        "bot_a": bot_names[a],
        "bot_b": bot_names[b],
        "pair": pair.astype(np.int64),
        "swap": swap,
        "bot0": bot_names[bot0],
        "bot1": bot_names[bot1],
        "seed": (1_000_000 + m * pairs + pair).astype(np.int64),
        "winner": winner,
        "error": np.where(forfeit, "bot 'x' (seat 0) made an illegal discard in discard() (answered 60), game seed 1", ""),
        "score0": score[0].astype(np.int64),
        "score1": score[1].astype(np.int64),
        "winner_seat": winner_seat,
        "hands": hands.astype(np.int32),
        "turns": turns.astype(np.int32),
        "first_dealer": rng.integers(0, 2, N).astype(np.int8),
        "forfeit_seat": forfeit_seat,
    }
    disc = {0: turns // 2, 1: turns - turns // 2}
    for s in (0, 1):
        for k, name in enumerate(("knock", "undercut", "gin", "big_gin")):
            cols[f"{name}_wins{s}"] = per_seat[s][:, k].astype(np.int32)
        cols[f"pickups{s}"] = rng.binomial(disc[1 - s], 0.18).astype(np.int32)
        cols[f"discards{s}"] = disc[s].astype(np.int32)
        knocks = per_seat[s][:, 0] + per_seat[1 - s][:, 1]
        cols[f"knock_deadwood{s}"] = rng.poisson(5.5 * knocks).astype(np.int32)
    cols["dead"] = dead.astype(np.int32)
    cols["capped"] = capped.astype(np.int32)
    cols["nondealer_wins"] = rng.binomial(decided, 0.53).astype(np.int32)
    games = pd.DataFrame(cols)
    counts = np.concatenate([per_seat[0], per_seat[1], dead[:, None], capped[:, None]], axis=1)
    return games, counts


def synthetic_hands(games: pd.DataFrame, counts: np.ndarray, seed: int = 8) -> pd.DataFrame:
    """Hand rows matching each game's outcome counts (columns of hands_frame plus game_id)."""
    rng = np.random.default_rng(seed)
    N = len(games)
    # categories: 0-3 seat 0 wins by knock/undercut/gin/big gin, 4-7 seat 1, 8 dead, 9 capped
    flat = counts.ravel()
    cat = np.repeat(np.tile(np.arange(10), N), flat)
    g = np.repeat(np.repeat(np.arange(N), 10), flat)
    o = np.lexsort((rng.random(g.size), g))  # shuffle hands within each game
    cat, g = cat[o], g[o]
    start = np.r_[0, np.cumsum(np.bincount(g, minlength=N))[:-1]]
    hand = np.arange(g.size) - start[g]
    kind = np.where(cat < 8, cat % 4, np.where(cat == 8, 4, 5))
    win_seat = np.where(cat < 8, cat // 4, -1)
    knocker = np.where(kind == 1, 1 - win_seat, win_seat)
    base = np.select([kind == 0, kind == 1, kind == 2, kind == 3], [rng.integers(1, 40, g.size),
                     25 + rng.integers(0, 30, g.size), 25 + rng.integers(0, 60, g.size),
                     31 + rng.integers(0, 60, g.size)], 0)
    pts = {s: np.where(win_seat == s, base, 0) for s in (0, 1)}
    n = g.size
    return pd.DataFrame({
        "game_id": games["game_id"].to_numpy()[g],
        "hand": hand.astype(np.int32),
        "dealer": rng.integers(0, 2, n).astype(np.int8),
        "outcome": pd.Categorical.from_codes(kind, categories=OUTCOMES),
        "knocker": knocker.astype(np.int8),
        "deadwood0": rng.integers(0, 60, n).astype(np.int16),
        "deadwood1": rng.integers(0, 60, n).astype(np.int16),
        "points0": pts[0].astype(np.int32),
        "points1": pts[1].astype(np.int32),
        "turns": (4 + rng.poisson(11, n)).astype(np.int16),
        "stock_left": rng.integers(2, 31, n).astype(np.int8),
        "upcard": rng.integers(0, 52, n).astype(np.int8),
        "upcard_taker": rng.integers(-1, 2, n).astype(np.int8),
        "pickups0": rng.integers(0, 5, n).astype(np.int16),
        "pickups1": rng.integers(0, 5, n).astype(np.int16),
        "knock_limit": np.full(n, 10, dtype=np.int8),
        "mult": np.ones(n, dtype=np.int8),
        "score0": np.zeros(n, dtype=np.int32),
        "score1": np.zeros(n, dtype=np.int32),
        "laid_off": np.zeros(n, dtype=np.int64),
        "log_start": np.full(n, -1, dtype=np.int64),
        "log_len": np.zeros(n, dtype=np.int32),
    })


def make_run(folder: Path, n_games: int, n_bots: int, with_hands: bool) -> dict:
    folder.mkdir(parents=True, exist_ok=True)
    games, counts = synthetic_games(n_games, n_bots)
    games.to_parquet(folder / "games.parquet", index=False)
    info = {"games": len(games), "bots": n_bots, "hands_rows": 0}
    if with_hands:
        hands = synthetic_hands(games, counts)
        hands.to_parquet(folder / "hands.parquet", index=False)
        info["hands_rows"] = len(hands)
    (folder / "manifest.json").write_text(json.dumps({"run": folder.name, "synthetic": True, **info}))
    (folder / "rules.toml").write_text("# standard rules\ntarget = 100\n")
    return info


def child(folder: Path) -> None:
    """Run write_report here and print one JSON line: wall seconds and peak RSS."""
    sys.path.insert(0, str(ROOT))
    t0 = time.perf_counter()
    from arena.report import write_report  # import counted: a real user pays for it too

    files = write_report(folder)
    wall = time.perf_counter() - t0
    print(json.dumps({"wall_s": wall, "peak_bytes": peak_rss(), "files": len(files)}))


def peak_rss() -> int:
    """Peak resident memory of this process in bytes.

    /proc's VmHWM belongs to this program image only; ru_maxrss would also
    carry the parent's peak over fork + exec (Linux keeps it across execve).
    """
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux: KiB


def timed(folder: Path) -> dict:
    out = subprocess.run([sys.executable, __file__, "--child", str(folder)], check=True, capture_output=True,
                         text=True, cwd=ROOT)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=1_000_000)
    ap.add_argument("--bots", type=int, default=10)
    ap.add_argument("--hands-games", type=int, default=100_000, help="games of the run with hands (0: skip)")
    ap.add_argument("--keep", type=Path, default=None, help="build the runs here and keep them")
    ap.add_argument("--child", type=Path, default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child is not None:
        child(args.child)
        return
    with tempfile.TemporaryDirectory() as tmp:
        base = args.keep or Path(tmp)
        runs = [("big", args.games, False)]
        if args.hands_games:
            runs.append(("with-hands", args.hands_games, True))
        for name, n, hands in runs:
            t = time.perf_counter()
            info = make_run(base / name, n, args.bots, hands)
            made = time.perf_counter() - t
            r = timed(base / name)
            ok = "OK" if r["wall_s"] < 30 and r["peak_bytes"] < 2 * 2**30 else "OVER TARGET"
            print(f"{name}: {info['games']:,} games, {args.bots} bots, {info['hands_rows']:,} hand rows "
                  f"(built in {made:.1f} s)\n  write_report: {r['wall_s']:.2f} s wall, "
                  f"peak RSS {r['peak_bytes'] / 2**20:,.0f} MiB, {r['files']} files  [{ok}: < 30 s, < 2 GiB]")


if __name__ == "__main__":
    main()
