"""Playing a sweep: every grid point (only what is missing) through the runner, then the analysis.

Each rules value gets a run folder ``<results_dir>/<name>/<rules label>/``;
each grid point is a gauntlet of its variant against the opponents played by
:func:`arena.run.run_tournament` into that folder, so a sweep resumes, runs in
parallel or on Dask, and plays the same games for a seed.
"""

from __future__ import annotations

import dataclasses
import shutil
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from arena.analysis.sweep.analysis import SweepResult, analyse_sweep
from arena.analysis.sweep.spec import SweepError, SweepSpec, load_sweep
from arena.run import run_tournament
from arena.run.runner import IncompatibleRunError
from arena.run.store import SWEEP_MARK, env_error, holds_run, make_folder

__all__ = ["run_sweep"]


def run_sweep(
    sweep: str | Path | Mapping[str, Any] | SweepSpec,
    *,
    client: Any = None,
    schedule: Any = None,
    progress: bool | Callable[[str], None] = True,
    fresh: bool = False,
    report: bool = True,
) -> SweepResult:
    """Play every grid point (only what is missing) and write sweep.csv, plots and the report.

    ``client``: a ``distributed.Client`` to play on (else the sweep's
    ``scheduler``, else ``workers`` local processes); ``schedule``: any
    object with ``results(tasks)``.  ``fresh``: delete the sweep's results first.
    """
    spec = sweep if isinstance(sweep, SweepSpec) else load_sweep(sweep)
    say: Callable[[str], None]
    if callable(progress):
        say = progress
    elif progress:
        say = lambda s: print(s, file=sys.stderr, flush=True)  # noqa: E731
    else:
        say = lambda s: None  # noqa: E731
    if spec.dir.exists():
        _refuse_foreign(spec, "--fresh would delete" if fresh else "cannot sweep into")
        if fresh:
            try:
                shutil.rmtree(spec.dir)
            except OSError as exc:
                raise env_error(exc, f"delete the sweep folder {spec.dir} (--fresh)") from None
    make_folder(spec.dir, "the sweep folder")  # a file in the way or no permission: one line, as a run's
    mark = spec.dir / SWEEP_MARK
    if not mark.exists():
        try:
            mark.write_text(
                f"This folder holds the Gin Arena sweep '{spec.name}': the run folders of its rules values, its\n"
                "tables and its report. `arena sweep --fresh` deletes it whole; no `arena run` may play into it.\n",
                encoding="utf-8",
            )
        except OSError as exc:
            raise env_error(exc, f"write {mark}") from None
    if spec.adaptive is not None:
        return _run_adaptive(spec, client=client, schedule=schedule, say=say, report=report)
    t0 = time.monotonic()
    status = "complete"
    points = spec.points()
    n = len(points) * len(spec.rules)
    # What was asked, before the first game: a grid of 300 x 300 is 90,000 tournaments, and its size shows here.
    say(
        f"sweep '{spec.name}': {len(points):,} point(s) x {len(spec.rules)} rules value(s) x "
        f"{len(spec.opponents)} opponent(s) x {spec.games:,} games = {n * len(spec.opponents) * spec.games:,} games"
    )
    i = 0
    for label, rules in spec.rules:
        for point in points:
            i += 1
            t = time.monotonic()
            res = _play(spec, spec.config(label, rules, point), client, schedule)
            if res.status != "complete":
                status = "incomplete"
            say(
                f"[{i}/{n}] {label} {spec.variant(point)}: {res.status} "
                f"({time.monotonic() - t:.1f} s, {time.monotonic() - t0:.0f} s in all)"
            )
    played = time.monotonic() - t0
    out = analyse_sweep(spec, report=report)
    out.status = status
    out.seconds = played
    return out


def _play(spec: SweepSpec, config: Any, client: Any, schedule: Any):
    """One grid point's tournament; a folder played otherwise is the sweep's error, with a sweep's way out
    (the runner's hint names ``--name``, which ``arena sweep`` does not have)."""
    try:
        return run_tournament(config, client=client, schedule=schedule, progress=False)
    except IncompatibleRunError as exc:
        raise SweepError(
            f"sweep '{spec.name}': {exc.fact}; set it back to resume, or start the sweep afresh with --fresh "
            "(or give it another name)"
        ) from None


def _run_adaptive(spec: SweepSpec, *, client: Any, schedule: Any, say: Callable[[str], None], report: bool):
    """Successive halving: each round plays the surviving points on fresh deals, with more games.

    Round 0 is the whole grid in the sweep folder; round r >= 1 goes to
    ``<sweep>/round-<r>/``, with seed ``seed + r`` and ``games * growth**r``
    games (rounded to an even number), and keeps the best ``keep`` fraction of
    the points (by adjusted field win rate, the union over rules values, at
    least 2).  Each round's estimates use only that round's games, so the last
    round's best value and its interval are not biased by the selection.
    """
    assert spec.adaptive is not None
    rounds, keep, growth = spec.adaptive
    survivors = spec.points()
    t0 = time.monotonic()
    lines = []
    res: SweepResult | None = None
    for r in range(rounds):
        games = max(2, int(round(spec.games * growth**r / 2)) * 2)
        sr = dataclasses.replace(
            spec,
            name=spec.name if r == 0 else f"{spec.name}/round-{r}",
            seed=spec.seed + r,
            games=games,
            chunk_size=min(spec.chunk_size * int(growth**r), games),
            only=tuple(survivors),
            adaptive=None,
        )
        say(f"round {r}: {len(survivors)} point(s) x {games:,} games")
        res = run_sweep(sr, client=client, schedule=schedule, progress=say, report=report)
        lines.append(
            f"- round {r} ({sr.dir}): {len(survivors)} point(s), {games:,} games each per opponent and rules value"
        )
        if r == rounds - 1 or len(survivors) <= 2:
            break
        b = res.best
        n_keep = max(2, int(np.ceil(keep * len(survivors))))
        chosen: set[tuple[float, ...]] = set()
        for _, g in b.groupby("rules", sort=False):
            top = g.sort_values("field_win_rate_adj", ascending=False).head(n_keep)
            chosen.update(tuple(float(row[p]) for p in spec.param_names) for _, row in top.iterrows())
        survivors = [p for p in spec.points() if p in chosen]
    assert res is not None
    res.seconds = time.monotonic() - t0
    if report:
        spec.dir.mkdir(parents=True, exist_ok=True)
        (spec.dir / "rounds.md").write_text(
            f"# Adaptive sweep {spec.name}\n\n" + "\n".join(lines) + f"\n\nFinal report: {res.dir / 'report.md'}\n",
            encoding="utf-8",
        )
        res.files["rounds"] = spec.dir / "rounds.md"
    return res


def _refuse_foreign(spec: SweepSpec, doing: str) -> None:
    """SweepError when the sweep's folder holds files but is not a sweep's: a sweep (or its ``--fresh``)
    may not take a run's folder, a folder of runs (``results/`` itself) or a folder of other files.

    A sweep's folder is marked (:data:`SWEEP_MARK`); one from before the mark holds its tables, or only
    the run folders of its own rules values.  Any subfolder that held a run counted before, so a sweep
    named like the results folder took it, and its ``--fresh`` deleted every run in it.
    """
    d = spec.dir
    held = sorted(d.iterdir())
    if not held or (d / SWEEP_MARK).exists():
        return
    if holds_run(d):
        raise SweepError(
            f"sweep: {doing} {d}, which is a run folder (arena run's), not a sweep's; give the sweep another name"
        )
    labels = {label for label, _ in spec.rules}
    legacy = any((d / f).exists() for f in ("sweep.csv", "best.csv", "rounds.md")) or all(
        p.is_dir() and p.name in labels and holds_run(p) for p in held
    )
    if not legacy:
        raise SweepError(
            f"sweep: {doing} {d}, which holds files but no sweep (e.g. {held[0].name}); "
            "give another name or results_dir, or empty it yourself"
        )
