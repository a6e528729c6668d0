"""External-bot speed: Simple in its own process against compiled Simple, on one core.

Rows (each against the compiled ``simple`` in seat 1, median of ``--repeats``
timed runs after a warm-up batch, the arena and the bot pinned to one CPU):

* ``simple (compiled)``: the in-process reference;
* ``simple (plain Python, in-process)``: the engine's plain path, which
  external bots use too;
* ``examples/external/simple_player.py``: Simple as an external Python
  program (the goal: at least the EAAI Java kit's ~230 games/s);
* ``SimplePlayer.java``: the same in Java 17 (if ``javac`` is on PATH);
* ``sandbox:bots/simple.py``: the built-in file served by the sandbox host.

Each external row is played twice, one right after the other: inside the
wall (``[wall]``: bubblewrap namespaces, the bots' own user, the seccomp
allow-list) and under the weak sandbox alone (``[weak]``: rlimits and the
allow-list, the level before the wall), so that both see the same load; the
last lines give the wall's cost in games/s and in start-up time.

Per decision (of the external seat) it reports:

* ``round trip``: ``ExternalBot.decide`` on recorded real views against a bot
  that answers without reading the line: the protocol alone (encode, two
  pipe hops, parse), in wall-clock microseconds;
* ``overhead vs plain``: (seconds per game of the row - seconds per game of
  the plain in-process row) / decisions of the external seat per game;
  for the sandbox that is the whole cost of the sandbox per decision.

Run: ``python scripts/bench_external.py [--games 600] [--repeats 3] [--cpu N]``.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from arena.botkit.bot import as_plain  # noqa: E402
from arena.engine.layout import LOG_SEAT, V_DECISION, V_SEAT  # noqa: E402
from arena.engine.play import play_batch  # noqa: E402
from arena.engine.rules_array import rules_array  # noqa: E402
from arena.external import ExternalBot, Limits, external_bot, external_of, sandboxed_bot  # noqa: E402
from arena.external.wall import wall_problem  # noqa: E402
from arena.loading.load import load_bot  # noqa: E402
from arena.settings.rules import load_rules  # noqa: E402

GOAL = 230.0  # games/s: the EAAI Java kit's Simple on one core (about 2,400 hands/s)

NULL_BOT = r"""
import sys
r, w = sys.stdin.buffer, sys.stdout.buffer
r.readline()
w.write(b'{"name":"null","protocol":1}\n')
w.flush()
for line in r:
    w.write(b"1\n")
    w.flush()
"""


def time_games(bots: list, opp, rules, n_games: int, repeats: int) -> list[tuple[float, float]]:
    """(median seconds per game, decisions of seat 0 per game) of each bot.

    The bots' timed runs alternate (run 1 of each, then run 2 of each in the reverse order, ...),
    so that a machine whose load changes during the benchmark weighs on each the same.
    """
    for bot in bots:
        play_batch(bot, opp, rules, np.arange(10_000, 10_000 + min(50, n_games)))  # start, compile, warm up
    seeds = np.arange(n_games, dtype=np.int64)
    times: list[list[float]] = [[] for _ in bots]
    seat0 = [0] * len(bots)
    for rep in range(repeats):
        for i in range(len(bots)) if rep % 2 == 0 else reversed(range(len(bots))):
            bot = bots[i]
            t0 = time.perf_counter()
            rec = play_batch(bot, opp, rules, seeds, record_log=True)
            times[i].append(time.perf_counter() - t0)
            assert not rec.errors, rec.errors[:1]
            seat0[i] = int(np.count_nonzero(rec.log // LOG_SEAT == 0))
    return [(float(np.median(t)) / n_games, d / n_games) for t, d in zip(times, seat0)]


def recorded_views(simple, rules, n: int) -> list[np.ndarray]:
    views: list[np.ndarray] = []

    def spy(fn):
        def ask(view, params, memory, rng):
            if len(views) < n and view[V_SEAT] == 0:
                views.append(view.copy())
            return int(fn(view, params, memory, rng))

        return ask

    watcher = dataclasses.replace(simple, functions=tuple(spy(f) for f in simple.functions), fast=False)
    play_batch(watcher, simple, rules, np.arange(200))
    return views


def round_trip_us(views: list[np.ndarray], repeats: int) -> float:
    """Median wall-clock microseconds of ExternalBot.decide against a bot that does nothing."""
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "null_bot.py"
        path.write_text(NULL_BOT)
        ext = ExternalBot([sys.executable, str(path)])
        ext.start(0)
        memory = np.ones(1)
        rng = np.zeros(4, dtype=np.uint64)
        params = np.zeros(0)
        runs = []
        for _ in range(repeats + 1):
            t0 = time.perf_counter()
            for v in views:
                ext.decide(int(v[V_DECISION]), v, params, memory, rng)
            runs.append((time.perf_counter() - t0) / len(views))
        ext.close()
    return float(np.median(runs[1:])) * 1e6


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=600, help="games per timed run")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument(
        "--cpu",
        type=int,
        default=None,
        help="CPU to pin the arena and its bots to (default: the first allowed; -1: no pinning)",
    )
    args = ap.parse_args()

    cpu = args.cpu if args.cpu is not None else min(os.sched_getaffinity(0))
    if cpu >= 0:
        os.sched_setaffinity(0, {cpu})  # bots started from here inherit it: one core for both
    rules = rules_array(load_rules("standard"))
    simple = load_bot("simple")
    rows: list[tuple[str, object]] = [
        ("simple (compiled)", simple),
        ("simple (plain Python, in-process)", as_plain(simple)),
    ]
    java_dir = None
    java = None
    if shutil.which("javac") and shutil.which("java"):
        java_dir = tempfile.mkdtemp(prefix="bench_java_")
        os.chmod(java_dir, 0o755)  # inside the wall the bot runs as its own user
        subprocess.run(["javac", "-d", java_dir, str(ROOT / "examples/external/SimplePlayer.java")], check=True)
        java = ["java", "-Xmx64m", "-XX:+UseSerialGC", "-XX:CompressedClassSpaceSize=64m"]
        java += ["-XX:ReservedCodeCacheSize=64m", "-cp", java_dir, "SimplePlayer"]
    for level in ("wall", "weak"):
        if level == "wall" and wall_problem() is not None:
            print(f"[wall] rows left out: {wall_problem()}")
            continue
        limits = Limits(sandbox=level)
        rows.append(
            (
                f"examples/external/simple_player.py [{level}]",
                lambda lim=limits: external_bot(
                    None, [sys.executable, str(ROOT / "examples/external/simple_player.py")], limits=lim
                ),
            )
        )
        if java is not None:
            rows.append(
                (
                    f"examples/external/SimplePlayer.java [{level}]",
                    lambda lim=limits: external_bot(None, java, limits=lim),
                )
            )
        rows.append(
            (
                f"sandbox:bots/simple.py [{level}]",
                lambda lim=limits: sandboxed_bot(ROOT / "bots/simple.py", dataclasses.replace(lim, start_s=120.0)),
            )
        )
    # Each external row's wall and weak runs alternate (see time_games).
    ext_rows = rows[2:]
    half = len(ext_rows) // 2
    groups = [[r] for r in rows[:2]]
    if half and len(ext_rows) == 2 * half:
        groups += [list(pair) for pair in zip(ext_rows[:half], ext_rows[half:])]
    else:
        groups += [[r] for r in ext_rows]

    where = (
        f"one core (CPU {cpu}) for the arena and the bot"
        if cpu >= 0
        else f"not pinned ({len(os.sched_getaffinity(0))} CPUs: the bot's process may run beside the arena)"
    )
    print(f"{where}; {args.games} games per run, median of {args.repeats} runs; seat 0 against compiled simple")
    print(f"{'seat 0':<44} {'games/s':>9} {'ms/game':>8} {'decisions':>9} {'overhead vs plain':>18}")
    plain_per_game = None
    speed: dict[str, float] = {}
    start_ms: dict[str, float] = {}
    for group in groups:
        bots = []
        for label, make in group:
            t_start = time.perf_counter()
            bots.append(make() if callable(make) and not hasattr(make, "functions") else make)
            start_ms[label] = (time.perf_counter() - t_start) * 1e3
        n = args.games if group[0][0] != "simple (compiled)" else max(args.games, 5000)
        for (label, _), bot, (per_game, decisions) in zip(
            group, bots, time_games(bots, simple, rules, n, args.repeats)
        ):
            if label.startswith("simple (plain"):
                plain_per_game = per_game
            over = ""
            if plain_per_game is not None and not label.startswith("simple ("):
                over = f"{(per_game - plain_per_game) / decisions * 1e6:.1f} us/decision"
            goal = ""
            speed[label] = 1 / per_game
            if "simple_player.py" in label:
                goal = f"  (goal >= {GOAL:.0f}: {'met' if 1 / per_game >= GOAL else 'not met'})"
            print(f"{label:<44} {1 / per_game:>9.0f} {per_game * 1e3:>8.2f} {decisions:>9.0f} {over:>18}{goal}")
            ext = external_of(bot)
            if ext is not None:
                ext.close()
    if java_dir:
        shutil.rmtree(java_dir, ignore_errors=True)
    for label in [x for x in speed if x.endswith("[wall]")]:
        weak = label.replace("[wall]", "[weak]")
        if weak in speed:
            print(
                f"the wall's cost, {label[: -len(' [wall]')]}: {100 * (1 - speed[label] / speed[weak]):+.1f}% games/s "
                f"(goal: at most 20%); start and handshake {start_ms[label]:.0f} ms vs {start_ms[weak]:.0f} ms"
            )
    views = recorded_views(simple, rules, 5000)
    print(
        f"protocol round trip (a bot that answers at once): {round_trip_us(views, args.repeats):.1f} us/decision "
        f"(median over {len(views)} real views)"
    )


if __name__ == "__main__":
    main()
