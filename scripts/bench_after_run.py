"""Time what ``arena run`` does after the last chunk is stored (tables, report), in two checkouts side by side.

    python scripts/bench_after_run.py [--config configs/default.toml] [--games 8000] [--workers 0]
                                      [--repeats 3] CHECKOUT [CHECKOUT ...]

After one small untimed run per checkout (its numba cache), runs ``arena run CONFIG --games N
--quiet`` in a fresh process per checkout (its folder first on
``PYTHONPATH``), the checkouts interleaved, ``--repeats`` times each.  Each process times
``run_tournament`` (the play, the stores and the end-of-run check: ``play``) and what follows until
the process exits (the printed tables and the report: ``after``), and counts how often a chunk file
(``games/``, ``hands/``) is opened for reading after the play (an audit hook).  It also takes the
driver's CPU time in each part (``time.process_time``; the workers' is not in it): on a busy machine
the fairer figure, and the one that shows work moved from after the run into it.  Prints one line per run
and the medians, and the ratio of the ``after`` medians to the first checkout's.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

_CHILD = r"""
import atexit, json, sys, time
out, argv = sys.argv[1], sys.argv[2:]
t0, c0 = time.perf_counter(), time.process_time()
mark = {}
reads = {"n": 0}

def hook(event, args):
    if event == "open" and "played" in mark and isinstance(args[0], str):
        mode = args[1] if len(args) > 1 and isinstance(args[1], str) else "r"
        if args[0].endswith(".parquet") and ("/games/" in args[0] or "/hands/" in args[0]) and "r" in mode:
            reads["n"] += 1

sys.addaudithook(hook)
import arena.run.runner as runner
play = runner.run_tournament

def timed(*a, **k):
    r = play(*a, **k)
    mark["played"], mark["cpu"] = time.perf_counter(), time.process_time()
    mark["chunks"] = r.store.n_chunks()
    return r

runner.run_tournament = timed

def done():
    t, c = time.perf_counter(), time.process_time()
    with open(out, "w") as f:
        json.dump({"play_s": mark["played"] - t0, "after_s": t - mark["played"], "chunks": mark["chunks"],
                   "play_cpu": mark["cpu"] - c0, "after_cpu": c - mark["cpu"], "reads": reads["n"]}, f)

atexit.register(done)
from arena.cli.main import app
sys.argv = ["arena", *argv]
app()
"""


def one(checkout: Path, args: argparse.Namespace, work: Path, tag: str, games: int | None = None) -> dict:
    out = work / f"{tag}.json"
    argv = ["run", str(ROOT / args.config), "--games", str(games or args.games), "--name", tag, "--quiet", "--fresh"]
    argv += ["--results-dir", str(work / "results")]
    if args.workers is not None:
        argv += ["--workers", str(args.workers)]
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    subprocess.run(
        [sys.executable, "-c", _CHILD, str(out), *argv],
        cwd=work,
        env=env,
        check=True,
        stdout=subprocess.DEVNULL,
    )
    return json.loads(out.read_text())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("checkouts", nargs="+", type=Path)
    ap.add_argument("--config", default="configs/default.toml")
    ap.add_argument("--games", type=int, default=8000)
    ap.add_argument("--workers", type=int, default=None)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    res: dict[Path, list[dict]] = {c: [] for c in args.checkouts}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for i, c in enumerate(args.checkouts):  # compile each checkout's kernels first (its numba cache), untimed
            one(c.resolve(), args, work, f"warm{i}", games=40)
        for r in range(args.repeats):
            order = args.checkouts if r % 2 == 0 else args.checkouts[::-1]
            for i, c in enumerate(order):
                x = one(c.resolve(), args, work, f"r{r}c{i}")
                res[c].append(x)
                print(
                    f"{c}: play {x['play_s']:.1f} s (driver CPU {x['play_cpu']:.1f} s), after {x['after_s']:.1f} s "
                    f"(CPU {x['after_cpu']:.1f} s), {x['reads']} chunk-file reads after ({x['chunks']} chunks)",
                    flush=True,
                )
    first = res[args.checkouts[0]]
    for c, xs in res.items():
        med = {k: statistics.median(x[k] for x in xs) for k in ("play_s", "after_s", "play_cpu", "after_cpu")}
        ratio = {k: med[k] / statistics.median(x[k] for x in first) for k in med}
        print(
            f"median {c}: play {med['play_s']:.1f} s, after {med['after_s']:.1f} s ({ratio['after_s']:.2f}x the "
            f"first); driver CPU: play {med['play_cpu']:.1f} s, after {med['after_cpu']:.1f} s "
            f"({ratio['after_cpu']:.2f}x), both {med['play_cpu'] + med['after_cpu']:.1f} s"
        )


if __name__ == "__main__":
    main()
