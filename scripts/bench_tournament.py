"""Tournament runner speed: overhead against the bare engine, and scaling.

1. bare engine: Simple vs Simple through ``play_batch`` on one core;
2. the runner with 1 worker process on the same games (its overhead:
   scheduling, sending results back, checksums, writing parquet) and with 2
   workers (scaling).  No hand rows, as in the engine benchmark.

Big runs (1M and 10M games with hands, peak memory, Dask) are in
``scripts/bench_run.py``.

Run: ``python scripts/bench_tournament.py [--small 200000]``
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from arena.engine.play import play_batch  # noqa: E402
from arena.engine.rules_array import rules_array  # noqa: E402
from arena.loading.load import load_bot  # noqa: E402
from arena.run.plan import pair_seeds  # noqa: E402
from arena.run.runner import run_tournament  # noqa: E402
from arena.settings.config import TournamentConfig  # noqa: E402
from arena.settings.rules import Rules  # noqa: E402


def config(results: Path, name: str, games: int, workers: int, chunk: int) -> TournamentConfig:
    return TournamentConfig(
        name=name,
        bots=("simple", "simple-b"),
        variants={"simple-b": {"bot": "simple"}},
        games_per_pair=games,
        chunk_size=chunk,
        workers=workers,
        seed=1,
        record_hands=False,
        results_dir=str(results),
    )


def timed_run(cfg: TournamentConfig) -> float:
    t0 = time.perf_counter()
    res = run_tournament(cfg, progress=False)
    dt = time.perf_counter() - t0
    assert res.status == "complete" and res.store.n_games() == cfg.games_per_pair
    return dt


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--small", type=int, default=200_000, help="games for the overhead/scaling runs")
    ap.add_argument("--chunk", type=int, default=20_000)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench-tournament-"))
    try:
        simple = load_bot("simple")
        rules = rules_array(Rules())
        seeds = pair_seeds(1, 0, args.small // 2)
        play_batch(simple, simple, rules, seeds[:100])
        bare, one, two = [], [], []
        for i in range(args.repeats):
            t0 = time.perf_counter()
            play_batch(simple, simple, rules, seeds)
            play_batch(simple, simple, rules, seeds)
            bare.append(time.perf_counter() - t0)
            one.append(timed_run(config(tmp, f"one{i}", args.small, 1, args.chunk)))
            two.append(timed_run(config(tmp, f"two{i}", args.small, 2, args.chunk)))
        b, o, t = (float(np.median(x)) for x in (bare, one, two))
        print(f"{args.small:,} games, median of {args.repeats} (interleaved runs):")
        print(f"  bare engine, 1 core:   {b:6.2f} s  {args.small / b:9,.0f} games/s")
        print(
            f"  runner, 1 worker:      {o:6.2f} s  {args.small / o:9,.0f} games/s  overhead {100 * (o / b - 1):+.1f}%"
        )
        print(f"  runner, 2 workers:     {t:6.2f} s  {args.small / t:9,.0f} games/s  speed-up {o / t:.2f}x vs 1 worker")

    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
