"""Time write_report on a large synthetic run stored through the run store (default 1,000,000 games, with hands).

    python scripts/bench_report.py [--games 1000000] [--bots 10] [--chunk 4000]
                                   [--no-hands] [--keep DIR]

Builds a run folder through :class:`arena.run.store.RunStore` exactly as the
runner stores one: a round robin of ``--bots`` bots, chunks of ``--chunk``
games (whole duplicate pairs of one matchup), the full games and hands
schemas, values drawn to look like real play (known Elo per bot, the two
games of a pair negatively correlated, outcome counts per seat matching the
hand rows, scores, turns, pickups ...).  Chunks are generated and stored one
at a time, so building a 10,000,000-game run needs little memory too.

Then runs write_report in a fresh Python process and prints its wall time,
its CPU time (user + system: the fairer figure on a busy machine), the time
of the streaming pass alone, and its peak resident memory (VmHWM of that
process: the interpreter, pandas, matplotlib and the report itself).
Targets: 10,000,000 games with hands in at most 2 minutes and
1.5 GB.  With ``--keep DIR`` the run is built in DIR, or reused when DIR
already holds a run of the same size.
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
TARGET_S, TARGET_BYTES = 120.0, 1.5e9


def synthetic_chunk(
    rng: np.random.Generator,
    names: tuple[str, str],
    elo_gap: float,
    pair_lo: int,
    pair_hi: int,
    game_id0: int,
    with_hands: bool,
) -> tuple[pd.DataFrame, pd.DataFrame | None]:
    """Pairs ``pair_lo..pair_hi-1`` of one matchup, both games of each (swap 0 then 1), in the stored schemas."""
    a_name, b_name = names
    pairs = pair_hi - pair_lo
    N = 2 * pairs
    pair = np.repeat(np.arange(pair_lo, pair_hi, dtype=np.int64), 2)
    swap = np.tile(np.array([0, 1], dtype=np.int8), pairs)
    # bot_a's win chance: Elo gap plus a deal effect shared by the pair's two games (seat 0 favoured)
    deal = np.repeat(rng.normal(0.0, 0.8, pairs), 2)
    logit = elo_gap * np.log(10) / 400 + deal * np.where(swap == 0, 1.0, -1.0)
    a_wins = rng.random(N) < 1 / (1 + np.exp(-logit))
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
    kinds_p = [0.84, 0.07, 0.085, 0.005]
    cw = rng.multinomial(win_h, kinds_p)
    cl = rng.multinomial(decided - win_h, kinds_p)
    per_seat = {0: np.where((w == 0)[:, None], cw, cl), 1: np.where((w == 1)[:, None], cw, cl)}
    turns = hands * (6 + rng.poisson(9, N))
    score_w = 100 + rng.integers(0, 45, N)
    score_l = rng.integers(0, 100, N)
    seat_names = np.array([[a_name, b_name], [b_name, a_name]], dtype=object)[swap]  # (N, 2): bot in seat 0 / 1
    winner = np.where(winner_seat >= 0, seat_names[np.arange(N), np.maximum(winner_seat, 0)], "")
    cols: dict[str, object] = {
        "game_id": game_id0 + np.arange(N, dtype=np.int64),
        "matchup": f"{a_name} vs {b_name}",
        "bot_a": a_name,
        "bot_b": b_name,
        "pair": pair,
        "swap": swap,
        "seed": (1_000_003 * pair) % (2**61),
        "score0": np.where(w == 0, score_w, score_l).astype(np.int64),
        "score1": np.where(w == 1, score_w, score_l).astype(np.int64),
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
    for s in (0, 1):
        cols[f"pickups{s}"] = rng.binomial(disc[1 - s], 0.18).astype(np.int32)
        cols[f"discards{s}"] = disc[s].astype(np.int32)
        knocks = per_seat[s][:, 0] + per_seat[1 - s][:, 1]
        cols[f"knock_deadwood{s}"] = rng.poisson(5.5 * knocks).astype(np.int32)
    cols["dead"] = dead.astype(np.int32)
    cols["capped"] = capped.astype(np.int32)
    cols["nondealer_wins"] = rng.binomial(decided, 0.53).astype(np.int32)
    cols["bot0"] = seat_names[:, 0]
    cols["bot1"] = seat_names[:, 1]
    cols["error"] = np.where(
        forfeit, "bot 'x' (seat 0) made an illegal discard in discard() (answered 60), game seed 1", ""
    )
    cols["winner"] = winner
    games = pd.DataFrame(cols)
    if not with_hands:
        return games, None
    counts = np.concatenate([per_seat[0], per_seat[1], dead[:, None], capped[:, None]], axis=1)
    return games, synthetic_hands(rng, games["game_id"].to_numpy(), counts)


def synthetic_hands(rng: np.random.Generator, game_ids: np.ndarray, counts: np.ndarray) -> pd.DataFrame:
    """Hand rows matching each game's outcome counts (the stored hands schema)."""
    N = game_ids.size
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
    n = g.size
    base = np.select(
        [kind == 0, kind == 1, kind == 2, kind == 3],
        [rng.integers(1, 40, n), 25 + rng.integers(0, 30, n), 25 + rng.integers(0, 60, n), 31 + rng.integers(0, 60, n)],
        0,
    )
    return pd.DataFrame(
        {
            "game_id": game_ids[g],
            "hand": hand.astype(np.int32),
            "dealer": rng.integers(0, 2, n).astype(np.int8),
            "outcome": pd.Categorical.from_codes(kind, categories=OUTCOMES),
            "knocker": knocker.astype(np.int8),
            "deadwood0": rng.integers(0, 60, n).astype(np.int16),
            "deadwood1": rng.integers(0, 60, n).astype(np.int16),
            "points0": np.where(win_seat == 0, base, 0).astype(np.int32),
            "points1": np.where(win_seat == 1, base, 0).astype(np.int32),
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
        }
    )


def make_run(folder: Path, n_games: int, n_bots: int, chunk: int, with_hands: bool, seed: int = 7) -> dict:
    """Store a synthetic round robin of about ``n_games`` games, chunk by chunk; returns its size."""
    from arena.run.store import RunStore

    rng = np.random.default_rng(seed)
    names = [f"bot{i:02d}" for i in range(n_bots)]
    elo = np.linspace(-300, 300, n_bots)
    ma, mb = np.triu_indices(n_bots, 1)
    pairs = max(1, n_games // (2 * ma.size))
    per_chunk = max(1, chunk // 2)
    info = {"games": 0, "hands_rows": 0, "chunks": 0, "bots": n_bots}
    with RunStore.open_for_writing(folder, fresh=True, what="bench_report") as store:
        for no, (i, j) in enumerate(zip(ma, mb)):
            mid = f"synthetic{no:04d}"
            los = range(0, pairs, per_chunk)
            store.register(mid, names[i], names[j], 2 * pairs, len(los), {"synthetic": True})
            for c, lo in enumerate(los):
                hi = min(lo + per_chunk, pairs)
                g, h = synthetic_chunk(
                    rng, (names[i], names[j]), elo[i] - elo[j], lo, hi, no * 2 * pairs + 2 * lo, with_hands
                )
                store.put_chunk(mid, c, g, h)
                info["games"] += len(g)
                info["hands_rows"] += 0 if h is None else len(h)
                info["chunks"] += 1
        store.write_text("rules.toml", "# standard rules\ntarget = 100\n")
        store.write_manifest({"name": folder.name, "synthetic": True, "status": "complete", **info})
    return info


def child(folder: Path) -> None:
    """Run write_report here and print one JSON line: wall seconds, the streaming pass's, peak RSS."""
    sys.path.insert(0, str(ROOT))
    t0 = time.perf_counter()
    from arena.analysis import report  # import counted: a real user pays for it too

    marks = {}

    def progress(done: int, total: int) -> None:
        if done == total:
            marks["streamed"] = time.perf_counter() - t0

    files = report.write_report(folder, progress=progress)
    wall = time.perf_counter() - t0
    ru = resource.getrusage(resource.RUSAGE_SELF)
    print(
        json.dumps(
            {
                "wall_s": wall,
                "cpu_s": ru.ru_utime + ru.ru_stime,
                "stream_s": marks.get("streamed", float("nan")),
                "peak_bytes": peak_rss(),
                "files": len(files),
            }
        )
    )


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
    out = subprocess.run(
        [sys.executable, __file__, "--child", str(folder)], check=True, capture_output=True, text=True, cwd=ROOT
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=1_000_000)
    ap.add_argument("--bots", type=int, default=10)
    ap.add_argument("--chunk", type=int, default=4000, help="games per chunk (the default config's size)")
    ap.add_argument("--no-hands", action="store_true", help="store no hands (the hands-free report)")
    ap.add_argument("--keep", type=Path, default=None, help="build the run here and keep it (reused if present)")
    ap.add_argument("--child", type=Path, default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child is not None:
        child(args.child)
        return
    sys.path.insert(0, str(ROOT))
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.keep or Path(tmp) / "bench-report"
        info_file = folder.parent / f"{folder.name}.bench.json"  # beside the run: only the store writes in it
        want = {"games": args.games, "bots": args.bots, "chunk": args.chunk, "hands": not args.no_hands}
        if info_file.is_file() and json.loads(info_file.read_text()).get("asked") == want:
            info = json.loads(info_file.read_text())["info"]
            made = "reused"
        else:
            t = time.perf_counter()
            info = make_run(folder, args.games, args.bots, args.chunk, not args.no_hands)
            made = f"built in {time.perf_counter() - t:.0f} s"
            info_file.write_text(json.dumps({"asked": want, "info": info}))
        r = timed(folder)
        ok = "OK" if r["wall_s"] <= TARGET_S and r["peak_bytes"] <= TARGET_BYTES else "OVER TARGET"
        print(
            f"{info['games']:,} games, {args.bots} bots, {info['chunks']:,} chunks, {info['hands_rows']:,} hand rows "
            f"({made})\n  write_report: {r['wall_s']:.1f} s wall, {r['cpu_s']:.1f} s CPU "
            f"({r['stream_s']:.1f} s wall to stream the chunks), "
            f"peak RSS {r['peak_bytes'] / 2**20:,.0f} MiB, {r['files']} files  "
            f"[{ok}: <= {TARGET_S:.0f} s, <= {TARGET_BYTES / 1e9:.1f} GB]"
        )


if __name__ == "__main__":
    main()
