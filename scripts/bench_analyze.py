"""Decision analysis (``arena analyze``): its speed, and how its error rates settle as samples grow.

Subcommands:

``speed``        Decisions graded per second at the default samples, on one
                 worker and on two, over the first ``--games`` games of a run
                 (CPU seconds per decision too: on a shared machine wall time
                 says more about the neighbours than about the code), and what
                 a 200-game analysis of one bot would take.
``convergence``  Error rate x1000 (all decisions, 95% game-clustered interval)
                 of every bot of a run's first ``--games`` games at 16 .. 512
                 samples per decision: a CSV and ``plots/decisions-convergence.png``
                 in the run folder.

``win-rate``     A bot's win rate over runs of seat-swapped duplicate pairs
                 (e.g. gauntlets of ``analyzer`` against ``monte-carlo``), with
                 a pair-clustered 95% interval: the analyzer-following bot's
                 check.

Run: ``python scripts/bench_analyze.py speed|convergence RUN_DIR [--games N]``,
``python scripts/bench_analyze.py win-rate RUN_DIR... [--bot NAME]``
(the run needs stored action logs: any run with ``record_log = true``, the default).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from arena.analysis import decisions as dec  # noqa: E402
from arena.analysis import plots  # noqa: E402
from arena.run.store import RunStore  # noqa: E402

SAMPLES = (16, 32, 64, 128, 256, 512)


def _warm(store: RunStore) -> None:
    """Compile the kernels before anything is timed."""
    rules = dec.run_rules(store)
    job = next(dec.game_jobs(store, None, 1, None))
    dec.analyse_game(job, rules, dec.AnalysisSettings(samples=4), positions=[2, 3])


def speed(run: Path, games: int) -> None:
    store = RunStore(run)
    _warm(store)
    settings = dec.AnalysisSettings()
    print(f"{run}: first {games} games, {settings.samples} samples per decision (the default)")
    for workers in (1, 2):
        cpu, wall = time.process_time(), time.perf_counter()
        res, _ = dec.analyse_run(run, settings, games=games, workers=workers, store_result=False)
        wall = time.perf_counter() - wall
        cpu = time.process_time() - cpu
        per_game = res.decisions / max(1, res.games) / 2  # decisions of one bot per game
        line = f"  {workers} worker(s): {res.decisions:,} decisions in {wall:.1f} s wall: {res.decisions / wall:,.0f}/s"
        if workers == 1:
            line += f"; {cpu:.1f} CPU s: {res.decisions / cpu:,.0f} decisions per CPU second"
            minutes = 200 * per_game / (res.decisions / cpu) / 60
            line += f"; one bot's 200 games ({200 * per_game:,.0f} decisions): {minutes:.1f} CPU min"
        print(line)


def convergence(run: Path, games: int) -> None:
    store = RunStore(run)
    _warm(store)
    rules = dec.run_rules(store)
    jobs = list(dec.game_jobs(store, None, games, None))
    rows = []
    for s in SAMPLES:
        t = time.perf_counter()
        settings = dec.AnalysisSettings(samples=s)
        table = pd.DataFrame([r for j in jobs for r in dec.analyse_game(j, rules, settings)])
        rates = dec.error_rates([table], settings.doubtful, settings.blunder)
        for r in rates[rates["kind"] == "all"].itertuples():
            rows.append(
                {
                    "samples": s,
                    "bot": r.bot,
                    "error_rate": r.error_rate,
                    "ci_low": r.ci_low,
                    "ci_high": r.ci_high,
                    "decisions": r.decisions,
                    "blunders": r.blunders,
                }
            )
            print(
                f"{s:>4} samples  {r.bot:<18} {r.error_rate:7.2f} [{r.ci_low:6.2f}, {r.ci_high:6.2f}]  "
                f"{r.decisions:,} decisions, {r.blunders} blunders  ({time.perf_counter() - t:.0f} s)",
                flush=True,
            )
    curve = pd.DataFrame(rows)
    out = run / "decisions-convergence.csv"
    curve.to_csv(out, index=False)
    png = plots.decision_convergence(curve, run / "plots" / "decisions-convergence.png")
    print(f"wrote {out} and {png}")


def win_rate(runs: list[Path], bot: str) -> None:
    """``bot``'s win rate over the games of ``runs`` (seat-swapped duplicate pairs), pair-clustered 95% interval."""
    import numpy as np

    scores = []
    for run in runs:
        g = RunStore(run).games(["pair", "winner"])
        winner = g["winner"].astype(str)
        g["w"] = (winner == bot).astype(float) + 0.5 * (winner == "")
        pairs = g.groupby("pair")["w"].agg(["mean", "count"])
        pairs = pairs[pairs["count"] == 2]  # a pair cut short by a stopped run is left out
        print(f"{run}: {len(g):,} games, {len(pairs):,} complete pairs, {bot} wins {pairs['mean'].mean():.1%}")
        scores.append(pairs["mean"].to_numpy())
    s = np.concatenate(scores)
    if len(s) < 2:
        raise SystemExit(f"bench_analyze: fewer than two complete pairs of '{bot}' in {', '.join(map(str, runs))}")
    m, se = s.mean(), s.std(ddof=1) / np.sqrt(len(s))
    print(
        f"{bot}: {2 * len(s):,} games ({len(s):,} duplicate pairs), win rate {m:.1%}, "
        f"95% CI [{m - 1.96 * se:.1%}, {m + 1.96 * se:.1%}] (pair-clustered)"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("what", choices=("speed", "convergence", "win-rate"))
    ap.add_argument("run", type=Path, nargs="+", help="a run folder with stored action logs (win-rate: one or more)")
    ap.add_argument("--games", type=int, default=8, help="games to analyse (default 8)")
    ap.add_argument("--bot", default="analyzer", help="win-rate: whose (default analyzer)")
    a = ap.parse_args()
    if a.what == "win-rate":
        win_rate(a.run, a.bot)
    elif len(a.run) != 1:
        raise SystemExit(f"bench_analyze: {a.what} takes one run folder, not {len(a.run)}")
    else:
        {"speed": speed, "convergence": convergence}[a.what](a.run[0], a.games)


if __name__ == "__main__":
    main()
