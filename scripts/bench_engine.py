"""Engine speed: Simple vs Simple whole games on one core, kernels, start-up.

Prints hands/s and games/s (median of several runs), ns per 10-card
minimum-deadwood evaluation and per 11-card best-discard search, compile
time on a cold cache and time to the first game with a warm cache (each in a
fresh process).  Run: ``python scripts/bench_engine.py [--games N]``.
Targets: >= 200,000 hands/s Simple vs Simple, games only, on one core, and
<= 15 s from process start to the first game with an empty numba cache
(issue 12; issue 2 asked 100,000 hands/s); <= 50 ns and <= 100 ns for the two
kernels and <= 3 s from start to first game with a warm cache (issue 2).
On a shared machine compare before/after runs interleaved in one session.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from arena.engine.rules_array import rules_array

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

FIRST_GAME = (
    "import time; t0 = time.perf_counter()\n"
    "import numpy as np\n"
    "from arena.botkit.load import load_bot\n"
    "from arena.engine.play import play_batch\n"
    "from arena.engine.rules_array import rules_array\n"
    "from arena.settings.rules import load_rules\n"
    "s = load_bot('simple')\n"
    "play_batch(s, s, rules_array(load_rules('standard')), np.arange(1))\n"
    "print(time.perf_counter() - t0)\n"
)


def first_game_seconds(cache: str) -> tuple[float, float]:
    """(wall time of the whole process, time inside it to the first game)."""
    env = {**os.environ, "NUMBA_CACHE_DIR": cache, "PYTHONPATH": str(ROOT)}
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", FIRST_GAME], env=env, capture_output=True, text=True, check=True)
    return time.perf_counter() - t0, float(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=20_000)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()

    with tempfile.TemporaryDirectory() as cache:
        cold_wall, cold_in = first_game_seconds(cache)
        warm_wall, warm_in = first_game_seconds(cache)
    print(f"cold cache: {cold_wall:6.2f} s process start to first game (compile included)")
    print(f"warm cache: {warm_wall:6.2f} s process start to first game ({warm_in:.2f} s after interpreter start)")

    from arena.botkit.load import load_bot
    from arena.engine.play import play_batch
    from arena.settings.rules import load_rules

    simple = load_bot("simple")
    rules = rules_array(load_rules("standard"))
    play_batch(simple, simple, rules, np.arange(100))  # warm-up
    seeds = np.arange(args.games, dtype=np.int64)
    for record in (False, True):
        times = []
        for _ in range(args.repeats):
            t0 = time.perf_counter()
            rec = play_batch(simple, simple, rules, seeds, record_hands=record)
            times.append(time.perf_counter() - t0)
        hands = int(rec.games[:, 3].sum())  # G_HANDS
        med = float(np.median(times))
        label = "with hand records" if record else "games only      "
        print(
            f"simple vs simple, {label}: {args.games:,} games, {hands:,} hands, median {med:.3f} s "
            f"-> {hands / med:,.0f} hands/s, {args.games / med:,.0f} games/s"
        )

    import bench_melds

    rng = np.random.default_rng(bench_melds.SEED)
    h10 = bench_melds.random_hands(1_000_000, 10, rng)
    h11 = bench_melds.random_hands(1_000_000, 11, rng)
    kernels = (
        ("deadwood, 10 cards:", bench_melds._loop_deadwood, h10),
        ("best discard, 11 cards:", bench_melds._loop_best_discard, h11),
        ("deadwood after each discard, 11:", bench_melds._loop_discards, h11),
    )
    for _, fn, h in kernels:
        fn(h[:10])  # compile before timing
    for label, fn, h in kernels:
        print(f"{label:<36}{bench_melds.time_ns_per_call(fn, h):6.1f} ns")


if __name__ == "__main__":
    main()
