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

Run: ``python scripts/bench_analyze.py speed|convergence RUN_DIR [--games N]``
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("what", choices=("speed", "convergence"))
    ap.add_argument("run", type=Path, help="a run folder with stored action logs")
    ap.add_argument("--games", type=int, default=8, help="games to analyse (default 8)")
    a = ap.parse_args()
    {"speed": speed, "convergence": convergence}[a.what](a.run, a.games)


if __name__ == "__main__":
    main()
