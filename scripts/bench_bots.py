"""Bot speed: games per second on one core for each built-in bot against simple.

Each built-in bot (random, simple, early-knock, gin-chasing, discard-tracking)
plays ``--games`` games against simple in seat 1 through
:func:`arena.engine.play.play_batch` (the compiled kernel); one more row runs
simple on the plain Python path (``arena.botkit.bot.as_plain``) against simple,
on fewer games.  Every row is timed after a warm-up game batch, as the
median of ``--repeats`` runs, and compared with simple vs simple: the time
ratio is (seconds per game of the row) / (seconds per game of simple vs
simple), so 2.0 means the matchup takes twice as long per game.  Games of
stronger or more patient bots can be longer, and that is part of the cost.
Target: every numba strategy within 3x simple vs simple.

Run: ``python scripts/bench_bots.py [--games 20000] [--plain-games 300]``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from arena.botkit.bot import as_plain  # noqa: E402
from arena.engine.layout import G_TURNS  # noqa: E402
from arena.engine.play import play_batch  # noqa: E402
from arena.engine.rules_array import rules_array  # noqa: E402
from arena.loading.load import load_bot  # noqa: E402
from arena.settings.rules import load_rules  # noqa: E402

BOTS = ("random", "simple", "early-knock", "gin-chasing", "discard-tracking")
TARGET_RATIO = 3.0


def time_matchup(bot, opp, rules, n_games: int, repeats: int) -> tuple[float, float]:
    """(median seconds for n_games, mean turns per game) after a warm-up."""
    play_batch(bot, opp, rules, np.arange(min(200, n_games)))  # compile / warm caches
    seeds = np.arange(n_games, dtype=np.int64)
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        rec = play_batch(bot, opp, rules, seeds)
        times.append(time.perf_counter() - t0)
    return float(np.median(times)), float(rec.games[:, G_TURNS].mean())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=20_000, help="games per compiled matchup")
    ap.add_argument("--plain-games", type=int, default=300, help="games for the plain-path row")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()

    rules = rules_array(load_rules("standard"))
    simple = load_bot("simple")
    rows = []
    for name in BOTS:
        secs, turns = time_matchup(load_bot(name), simple, rules, args.games, args.repeats)
        rows.append((f"{name} vs simple", "fast", args.games, secs, turns))
    secs, turns = time_matchup(as_plain(simple), simple, rules, args.plain_games, args.repeats)
    rows.append(("simple (plain) vs simple", "plain", args.plain_games, secs, turns))

    base = next(r[3] / r[2] for r in rows if r[0] == "simple vs simple")
    print(f"one core, standard rules, median of {args.repeats} runs after a warm-up")
    print(f"{'matchup':<30} {'path':<6} {'games':>7} {'games/s':>9} {'turns/game':>11} {'time ratio':>11}")
    worst = 0.0
    for label, path, n, secs, turns in rows:
        ratio = (secs / n) / base
        if path == "fast" and not label.startswith(("simple ", "random ")):
            worst = max(worst, ratio)
        print(f"{label:<30} {path:<6} {n:>7,} {n / secs:>9,.0f} {turns:>11.1f} {ratio:>10.2f}x")
    verdict = "ok" if worst <= TARGET_RATIO else "over target"
    print(f"slowest strategy: {worst:.2f}x simple vs simple (target <= {TARGET_RATIO:.0f}x: {verdict})")


if __name__ == "__main__":
    main()
