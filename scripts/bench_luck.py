"""Luck-adjusted results at full size: the gain, unbiasedness, and the known answer.

``gain``     the variance ratio (plain / luck-adjusted, per duplicate pair) of
             points per game and of wins, for gin-chasing vs early-knock,
             Monte Carlo (100 samples) vs simple, and simple vs simple; and
             whether each adjusted mean lies in the plain mean's 95% interval
             (``--games 1000000`` for the unbiasedness check at full size).
``unbiased`` simple against simple in single games (no duplicate pairs, so
             all the luck is there; truth 0.5 and 0 by symmetry): the
             adjusted mean lies in the plain interval (``--games 1000000``).
``known``    simple against a copy of itself that forfeits 20% of its games
             at its first decision (``tests/analysis/blunder_bot.py``): true
             win rate 0.6 and margin 0 exactly; the coverage of the 95%
             intervals over blocks of 100 pairs, plain and adjusted.

Run: ``nice python scripts/bench_luck.py gain [--games 200000] [--mc-games 4000]``
     ``nice python scripts/bench_luck.py known [--games 200000]``
     ``nice python scripts/bench_luck.py unbiased --games 1000000``
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats as sps

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from arena.analysis import luck  # noqa: E402
from arena.run.runner import run_tournament  # noqa: E402
from arena.run.store import RunStore  # noqa: E402
from arena.settings.config import TournamentConfig  # noqa: E402

VARIANTS = {
    "mc-fast": {"bot": "monte-carlo", "samples": 100},
    "simple-b": {"bot": "simple"},
    "blunder": {"bot": str(ROOT / "tests" / "analysis" / "blunder_bot.py"), "forfeit": 0.2},
}


def play(results: Path, a: str, b: str, games: int, seed: int, workers: int, duplicate: bool = True) -> Path:
    cfg = TournamentConfig(
        name=f"{a}-vs-{b}" + ("" if duplicate else "-single"),
        duplicate=duplicate,
        format="gauntlet",
        candidate=a,
        bots=(b,),
        variants=VARIANTS,
        games_per_pair=games,
        chunk_size=min(20000, games),
        seed=seed,
        workers=workers,
        record_hands=True,
        record_log=True,
        results_dir=str(results),
    )
    t = time.time()
    run_tournament(cfg, progress=False)
    print(f"# played {a} vs {b}: {games:,} games in {time.time() - t:.0f} s", flush=True)
    return results / cfg.name


def measure(run: Path, workers: int) -> pd.DataFrame:
    t = time.time()
    done = luck.analyse_luck(run, workers=workers)
    print(f"# luck of {done.games:,} games in {time.time() - t:.0f} s ({done.games / (time.time() - t):,.0f} games/s)")
    return luck.luck_results(RunStore(run).analysis_parts(luck.TABLE))


def gain(args: argparse.Namespace) -> None:
    base = Path(tempfile.mkdtemp(prefix="bench-luck-"))
    matchups = [
        ("gin-chasing", "early-knock", args.games),
        ("mc-fast", "simple", args.mc_games),
        ("simple", "simple-b", args.games),
    ]
    rows = []
    limits = []
    for a, b, n in matchups:
        run = play(base, a, b, n, 34, args.workers)
        res = measure(run, args.workers)
        rows.append(res[res["bot"] == a].iloc[0])
        limits.append((a, b, what_limits(run)))
    print(
        "\n| matchup | games | points/game plain (95% CI) | adjusted (95% CI) | ratio | "
        "win rate plain (95% CI) | adjusted (95% CI) | ratio | adjusted in plain CI |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:

        def ci(what: str, tag: str, r: pd.Series = r) -> str:
            return f"{r[f'{what}_{tag}']:+.3f} ({r[f'{what}_{tag}_lo']:+.3f}, {r[f'{what}_{tag}_hi']:+.3f})"

        inside = all(r[f"{w}_plain_lo"] <= r[f"{w}_adjusted"] <= r[f"{w}_plain_hi"] for w in ("points", "win"))
        print(
            f"| {r['bot']} vs {r['opponent']} | {r['games']:,} | {ci('points', 'plain')} | "
            f"{ci('points', 'adjusted')} | "
            f"{r['points_games_ratio']:.2f} | {ci('win', 'plain')} | {ci('win', 'adjusted')} | "
            f"{r['win_games_ratio']:.2f} | {'yes' if inside else 'NO'} |"
        )
    print("\n# what limits it: variance ratios per single game (no pairing), and what pairing alone does")
    for a, b, lim in limits:
        print(f"{a} vs {b}: " + ", ".join(f"{k} {v:.3f}" for k, v in lim.items()))


def what_limits(run: Path) -> dict[str, float]:
    """Where the variance is: single games vs pairs, plain vs adjusted, and how much the deals' luck is."""
    t = pd.concat(list(RunStore(run).analysis_parts(luck.TABLE)), ignore_index=True)
    pairs = t.groupby("pair")[["margin", "win", "luck_points", "luck_win", "deal_points"]].mean()
    out: dict[str, float] = {}
    for what, lk in (("margin", "luck_points"), ("win", "luck_win")):
        adj_g = t[what] - t[lk]
        adj_p = pairs[what] - pairs[lk]
        out[f"{what}_game_ratio"] = t[what].var() / adj_g.var()
        out[f"{what}_pairing_plain"] = t[what].var() / (2 * pairs[what].var()) if pairs[what].var() > 0 else math.inf
        out[f"{what}_pairing_adj"] = adj_g.var() / (2 * adj_p.var()) if adj_p.var() > 0 else math.inf
        out[f"{what}_corr_pair"] = float(np.corrcoef(pairs[what], pairs[lk])[0, 1]) if pairs[what].var() > 0 else 0
    out["deal_share_of_luck_var_per_game"] = t["deal_points"].var() / t["luck_points"].var()
    return out


def known(args: argparse.Namespace) -> None:
    base = Path(tempfile.mkdtemp(prefix="bench-luck-known-"))
    run = play(base, "simple", "blunder", args.games, 35, args.workers)
    luck.analyse_luck(run, workers=args.workers)
    t = pd.concat(list(RunStore(run).analysis_parts(luck.TABLE)), ignore_index=True)
    pairs = t.groupby("pair")[["margin", "win", "luck_points", "luck_win"]].mean()
    block = np.arange(len(pairs)) // 100
    q = sps.t.ppf(0.975, 99)
    print(f"\n{len(pairs):,} pairs in {block.max() + 1} blocks of 100; truth: win rate 0.6, margin 0")
    print("| value | estimate | coverage of the 95% intervals | mean interval width |")
    print("|---|---|---|---|")
    for what, lk, true in (("win", "luck_win", 0.6), ("margin", "luck_points", 0.0)):
        for tag, x in (("plain", pairs[what]), ("adjusted", pairs[what] - pairs[lk])):
            g = x.groupby(block)
            h = q * g.std(ddof=1) / np.sqrt(g.size())
            cover = float(((g.mean() - true).abs() <= h).mean())
            se = x.std(ddof=1) / math.sqrt(len(x))
            print(f"| {what} {tag} | {x.mean():.4f} +- {1.96 * se:.4f} | {cover:.3f} | {2 * h.mean():.4f} |")


def unbiased(args: argparse.Namespace) -> None:
    """Simple against itself in single games (no duplicate pairs), so the luck is all there: truth 0.5, 0."""
    base = Path(tempfile.mkdtemp(prefix="bench-luck-unbiased-"))
    run = play(base, "simple", "simple-b", args.games, 36, args.workers, duplicate=False)
    res = measure(run, args.workers)
    r = res[res["bot"] == "simple"].iloc[0]
    print("\n| value | games | plain (95% CI) | adjusted (95% CI) | adjusted in plain CI | truth | ratio |")
    print("|---|---|---|---|---|---|---|")
    for what, true in (("points", 0.0), ("win", 0.5)):
        p, lo, hi = r[f"{what}_plain"], r[f"{what}_plain_lo"], r[f"{what}_plain_hi"]
        q, qlo, qhi = r[f"{what}_adjusted"], r[f"{what}_adjusted_lo"], r[f"{what}_adjusted_hi"]
        print(
            f"| {what} | {r['games']:,} | {p:+.4f} ({lo:+.4f}, {hi:+.4f}) | {q:+.4f} ({qlo:+.4f}, {qhi:+.4f}) | "
            f"{'yes' if lo <= q <= hi else 'NO'} | {true} | {r[f'{what}_games_ratio']:.2f} |"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("what", choices=("gain", "known", "unbiased"))
    ap.add_argument("--games", type=int, default=200000)
    ap.add_argument("--mc-games", type=int, default=4000)
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()
    {"gain": gain, "known": known, "unbiased": unbiased}[args.what](args)


if __name__ == "__main__":
    main()
