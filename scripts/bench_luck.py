"""Luck-adjusted results at full size: the gain, unbiasedness, and the known answer.

``gain``     the variance ratio (plain / luck-adjusted, per duplicate pair) of
             points per game and of wins, for gin-chasing vs early-knock,
             Monte Carlo (100 samples) vs simple, and simple vs simple; and
             whether each adjusted mean lies in the plain mean's 95% interval
             (``--games 1000000`` for the unbiasedness check at full size).
``unbiased`` simple against simple in single games (no duplicate pairs, so
             all the luck is there; truth 0.5 and 0 by symmetry): the
             adjusted mean lies in the plain interval (``--games 1000000``).
             With ``--duplicate``: gin-chasing against early-knock in
             duplicate pairs (no symmetry, the truth unknown): the adjusted
             mean lies in the plain interval, and the mean luck per pair is
             zero within its own, much narrower, interval.
``known``    simple against a copy of itself that forfeits 20% of its games
             at its first decision (``tests/analysis/blunder_bot.py``): true
             win rate 0.6 and margin 0 exactly; the coverage of the 95%
             intervals over blocks of 25 to 200 pairs, plain and adjusted,
             with the binomial standard deviation of each coverage, the
             blocks' design effect (spread of the block means over what
             their intervals assume: 1 for independent pairs) and the
             coverage the same t interval has on blocks resampled
             independently from the run's own pairs (the interval method
             alone, without any dependence between pairs).

``--results DIR`` keeps the runs there, and a run already in ``DIR`` (with
its luck table) is read again instead of played.

Run: ``nice python scripts/bench_luck.py gain [--games 200000] [--mc-games 4000]``
     ``nice python scripts/bench_luck.py known [--games 200000]``
     ``nice python scripts/bench_luck.py unbiased --games 1000000 [--duplicate]``
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats as sps

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from arena.analysis import luck  # noqa: E402
from arena.engine._jit import jit  # noqa: E402
from arena.engine.layout import S_DECK, S_STOCK_POS  # noqa: E402
from arena.engine.rules_array import rules_array  # noqa: E402
from arena.run.runner import run_tournament  # noqa: E402
from arena.run.store import RunStore  # noqa: E402
from arena.settings.config import TournamentConfig  # noqa: E402

VARIANTS = {
    "mc-fast": {"bot": "monte-carlo", "samples": 100},
    "simple-b": {"bot": "simple"},
    "blunder": {"bot": str(ROOT / "tests" / "analysis" / "blunder_bot.py"), "forfeit": 0.2},
}


def play(results: Path, a: str, b: str, games: int, seed: int, workers: int, duplicate: bool = True) -> Path:
    """Play the matchup into ``results`` (or reuse the complete run of the same config found there)."""
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
    run = results / cfg.name
    if _complete(run, cfg):
        print(f"# {a} vs {b}: the run in {run} is reused", flush=True)
        return run
    t = time.time()
    run_tournament(cfg, progress=False)
    print(f"# played {a} vs {b}: {games:,} games in {time.time() - t:.0f} s", flush=True)
    return run


def _complete(run: Path, cfg: TournamentConfig) -> bool:
    if not (run / "config.toml").exists():
        return False
    store = RunStore(run)
    key = ("seed", "games_per_pair", "duplicate", "candidate", "bots", "variants", "rules")
    old = store.config()
    same = all(getattr(old, k) == getattr(cfg, k) for k in key)
    return same and sum(len(c.games) for c in store.chunks(["game_id"])) == cfg.games_per_pair


def measure(run: Path, workers: int) -> pd.DataFrame:
    store = RunStore(run)
    if luck.TABLE in store.analyses() and store.analysis_info(luck.TABLE).get("value_sha256") == (
        luck.shipped_value().sha256
    ):
        print(f"# the luck table of {run} is reused", flush=True)
    else:
        t = time.time()
        done = luck.analyse_luck(run, workers=workers)
        rate = done.games / (time.time() - t)
        print(f"# luck of {done.games:,} games in {time.time() - t:.0f} s ({rate:,.0f} games/s)", flush=True)
    return luck.luck_results(RunStore(run).analysis_parts(luck.TABLE))


def _base(args: argparse.Namespace, prefix: str) -> Path:
    return Path(args.results) if args.results else Path(tempfile.mkdtemp(prefix=prefix))


# --- for the other luck benches (bench_luck_limits.py, bench_luck_mlp.py): their runs' games replayed ---------


def stored_games(run: Path) -> Iterator[tuple[np.ndarray, Any, np.ndarray]]:
    """Each game of a run that was not forfeited: the rules array, the game's row and its stored answers."""
    store = RunStore(run)
    rules = np.ascontiguousarray(rules_array(store.rules()), dtype=np.int64)
    for task in luck._tasks(store, tuple(int(v) for v in rules)):
        for j, r in enumerate(task.games.itertuples()):
            if not r.error:
                yield rules, r, task.answers[task.offsets[j] : task.offsets[j + 1]]


@jit
def stock_set(st):
    """The cards still in the stock, as a mask (their set, not their order)."""
    out = np.int64(0)
    for i in range(st[S_STOCK_POS], 52):
        out |= np.int64(1) << st[S_DECK + i]
    return out


def gain(args: argparse.Namespace) -> None:
    base = _base(args, "bench-luck-")
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


def coverage(x: np.ndarray, truth: float, block: int, conf: float = 0.95) -> tuple[float, int]:
    """Share of the consecutive blocks of ``block`` pairs whose t interval covers ``truth``, and the blocks."""
    n = len(x) // block
    b = np.asarray(x[: n * block], dtype=float).reshape(n, block)
    h = sps.t.ppf(0.5 + conf / 2, block - 1) * b.std(axis=1, ddof=1) / math.sqrt(block)
    return float(np.mean(np.abs(b.mean(axis=1) - truth) <= h)), n


def design_effect(x: np.ndarray, block: int) -> tuple[float, float]:
    """Variance of the block means over the mean within-block variance / ``block``, and its chi-square p-value.

    1 when the pairs are independent (what every interval assumes); above 1 when pairs near each other
    are alike.  The p-value is the chance of a value at least this large from independent normal pairs.
    """
    n = len(x) // block
    b = np.asarray(x[: n * block], dtype=float).reshape(n, block)
    d = float(b.mean(axis=1).var(ddof=1) / (b.var(axis=1, ddof=1).mean() / block))
    return d, float(sps.chi2.sf(d * (n - 1), n - 1))


def resampled_coverage(x: np.ndarray, block: int, blocks: int, seed: int, conf: float = 0.95) -> float:
    """Coverage of the t interval on ``blocks`` blocks drawn independently from the pairs ``x`` (truth: x's mean).

    The interval method alone: no dependence between pairs, the very distribution of the pairs' values.
    """
    x = np.asarray(x, dtype=float)
    s = x[np.random.default_rng(seed).integers(0, len(x), size=(blocks, block))]
    h = sps.t.ppf(0.5 + conf / 2, block - 1) * s.std(axis=1, ddof=1) / math.sqrt(block)
    return float(np.mean(np.abs(s.mean(axis=1) - x.mean()) <= h))


def known(args: argparse.Namespace) -> None:
    base = _base(args, "bench-luck-known-")
    run = play(base, "simple", "blunder", args.games, args.seed or 38, args.workers)
    measure(run, args.workers)
    t = pd.concat(list(RunStore(run).analysis_parts(luck.TABLE)), ignore_index=True)
    pairs = t.groupby("pair")[["margin", "win", "luck_points", "luck_win"]].mean().sort_index()
    sizes = (25, 50, 100, 200)
    print(f"\n{len(pairs):,} pairs; truth: win rate 0.6, margin 0; 95% t intervals over blocks of consecutive pairs")
    print(
        "| value | estimate (95%) | z vs truth | "
        + " | ".join(f"coverage, {b} pairs (blocks)" for b in sizes)
        + " | design effect, 100 pairs (p) | coverage of resampled blocks of 100 |"
    )
    print("|---|---|---|" + "---|" * len(sizes) + "---|---|")
    for what, lk, true in (("win", "luck_win", 0.6), ("margin", "luck_points", 0.0)):
        for tag, x in (("plain", pairs[what]), ("adjusted", pairs[what] - pairs[lk])):
            v = x.to_numpy(float)
            se = v.std(ddof=1) / math.sqrt(len(v))
            cells = []
            for b in sizes:
                c, n = coverage(v, true, b)
                cells.append(f"{c:.3f} ({n:,}; sd {math.sqrt(0.95 * 0.05 / n):.3f})")
            d, p = design_effect(v, 100)
            boot = resampled_coverage(v, 100, 20000, 1)
            print(
                f"| {what} {tag} | {v.mean():.4f} +- {1.96 * se:.4f} | {(v.mean() - true) / se:+.2f} | "
                + " | ".join(cells)
                + f" | {d:.3f} ({p:.2f}) | {boot:.3f} |"
            )


def unbiased(args: argparse.Namespace) -> None:
    """The adjusted mean inside the plain interval, at full size.

    Single games of simple against simple (no duplicate pairs, so the luck is all there: truth 0.5, 0), or
    with ``--duplicate`` gin-chasing against early-knock in duplicate pairs (the truth unknown; the mean
    luck per pair must then be zero within its own interval, a sharper check than the plain interval).
    """
    base = _base(args, "bench-luck-unbiased-")
    if args.duplicate:
        a, b, seed, truth = "gin-chasing", "early-knock", args.seed or 37, {"points": None, "win": None}
    else:
        a, b, seed, truth = "simple", "simple-b", args.seed or 36, {"points": 0.0, "win": 0.5}
    run = play(base, a, b, args.games, seed, args.workers, duplicate=args.duplicate)
    res = measure(run, args.workers)
    r = res[res["bot"] == a].iloc[0]
    print(f"\n{a} vs {b}, {'duplicate pairs' if args.duplicate else 'single games'}, seed {seed}")
    print("| value | games | plain (95% CI) | adjusted (95% CI) | adjusted in plain CI | truth | ratio |")
    print("|---|---|---|---|---|---|---|")
    for what, true in truth.items():
        p, lo, hi = r[f"{what}_plain"], r[f"{what}_plain_lo"], r[f"{what}_plain_hi"]
        q, qlo, qhi = r[f"{what}_adjusted"], r[f"{what}_adjusted_lo"], r[f"{what}_adjusted_hi"]
        print(
            f"| {what} | {r['games']:,} | {p:+.4f} ({lo:+.4f}, {hi:+.4f}) | {q:+.4f} ({qlo:+.4f}, {qhi:+.4f}) | "
            f"{'yes' if lo <= q <= hi else 'NO'} | {'unknown' if true is None else true} | "
            f"{r[f'{what}_games_ratio']:.2f} |"
        )
    t = pd.concat(list(RunStore(run).analysis_parts(luck.TABLE, ["pair", "luck_points", "luck_win"])))
    pairs = t.groupby("pair")[["luck_points", "luck_win"]].mean()
    print("\n| mean luck per pair | pairs | mean (95% CI) | z |")
    print("|---|---|---|---|")
    for col in ("luck_points", "luck_win"):
        x = pairs[col].to_numpy(float)
        se = x.std(ddof=1) / math.sqrt(len(x))
        print(
            f"| {col} | {len(x):,} | {x.mean():+.5f} ({x.mean() - 1.96 * se:+.5f}, {x.mean() + 1.96 * se:+.5f}) | "
            f"{x.mean() / se:+.2f} |"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("what", choices=("gain", "known", "unbiased"))
    ap.add_argument("--games", type=int, default=200000)
    ap.add_argument("--mc-games", type=int, default=4000)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0, help="the run's seed (default: the command's own)")
    ap.add_argument("--duplicate", action="store_true", help="unbiased: gin-chasing vs early-knock in duplicate pairs")
    ap.add_argument("--results", default="", help="keep the runs in this folder (and reuse those found there)")
    args = ap.parse_args()
    {"gain": gain, "known": known, "unbiased": unbiased}[args.what](args)


if __name__ == "__main__":
    main()
