"""Engine speed: Simple vs Simple whole games on one core, kernels, start-up.

Prints hands/s and games/s (median of several runs), ns per 10-card
minimum-deadwood evaluation and per 11-card best-discard search, the time
from process start to the first game on an empty numba cache (cold) and on
a filled one (warm), each in a fresh process.  Run::

    python scripts/bench_engine.py [--games N] [--repeats R] [--json FILE]
    python scripts/bench_engine.py --compare ../other-checkout --json FILE

Targets: >= 200,000 hands/s Simple vs Simple, games only, on one core, and
<= 15 s from process start to the first game with an empty numba cache
(the first target was 100,000 hands/s); <= 50 ns and <= 100 ns
for the two kernels and <= 3 s from start to first game with a warm cache.

Every timed run is a fresh process (``python -c``), so ``--compare DIR``
times another checkout (say main in a git worktree) the same way,
interleaved with this one run by run: on a shared machine the load changes
from minute to minute, and only interleaved medians and their ratio mean
anything.  The load average is recorded before and after.  ``--json FILE``
writes the machine (CPU model, cores, Python, numba, numpy), every run and
the medians; ``docs/bench/`` keeps one such file per release and
``docs/bench/plot.py`` draws the history.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = 1

#: Process start to the first game (compile or cache load included).
FIRST_GAME = (
    "import time; t0 = time.perf_counter()\n"
    "import numpy as np\n"
    "try:\n"
    "    from arena.loading.load import load_bot\n"
    "except ImportError:  # a checkout from before arena/loading/\n"
    "    try:\n"
    "        from arena.botkit.load import load_bot\n"
    "    except ImportError:  # a checkout from before arena/botkit/load.py\n"
    "        from arena.botkit.bot import load_bot\n"
    "from arena.engine.play import play_batch\n"
    "from arena.engine.rules_array import rules_array\n"
    "from arena.settings.rules import load_rules\n"
    "s = load_bot('simple')\n"
    "play_batch(s, s, rules_array(load_rules('standard')), np.arange(1))\n"
    "print(time.perf_counter() - t0)\n"
)

#: One timed batch of Simple-vs-Simple games, after a warm-up batch; prints JSON.
GAMES = (
    "import json, sys, time\n"
    "import numpy as np\n"
    "try:\n"
    "    from arena.loading.load import load_bot\n"
    "except ImportError:  # a checkout from before arena/loading/\n"
    "    try:\n"
    "        from arena.botkit.load import load_bot\n"
    "    except ImportError:  # a checkout from before arena/botkit/load.py\n"
    "        from arena.botkit.bot import load_bot\n"
    "from arena.engine.play import play_batch\n"
    "from arena.engine.rules_array import rules_array\n"
    "from arena.settings.rules import load_rules\n"
    "n, record = int(sys.argv[1]), sys.argv[2] == '1'\n"
    "s = load_bot('simple')\n"
    "rules = rules_array(load_rules('standard'))\n"
    "play_batch(s, s, rules, np.arange(100))\n"
    "seeds = np.arange(n, dtype=np.int64)\n"
    "w, c = time.perf_counter(), time.process_time()\n"
    "rec = play_batch(s, s, rules, seeds, record_hands=record)\n"
    "w, c = time.perf_counter() - w, time.process_time() - c\n"
    "print(json.dumps({'seconds': w, 'cpu_seconds': c, 'hands': int(rec.games[:, 3].sum())}))\n"
)


def _child_env(root: Path, cache: str | None = None) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(root)}
    if cache is not None:
        env["NUMBA_CACHE_DIR"] = cache
    return env


def _run_child(code: str, args: list[str], root: Path, cache: str | None) -> tuple[str, float, float]:
    """(stdout, wall seconds, CPU seconds) of ``python -c code args`` run in ``root``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-c", code, *args], cwd=root, env=_child_env(root, cache), capture_output=True, text=True
    )
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if out.returncode != 0:
        tail = (out.stderr.strip().splitlines() or ["no output"])[-1]
        raise SystemExit(f"bench_engine: the benchmark process failed in {root}: {tail}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return out.stdout, wall, cpu


def first_game(root: Path, cache: str) -> dict[str, float]:
    """Process start to the first game with the numba cache in ``cache`` (empty: cold)."""
    out, wall, cpu = _run_child(FIRST_GAME, [], root, cache)
    return {"wall_s": wall, "in_process_s": float(out.strip().splitlines()[-1]), "cpu_s": cpu}


def games_run(root: Path, games: int, record: bool) -> dict[str, Any]:
    """One timed batch of ``games`` Simple-vs-Simple games in a fresh process (warm cache)."""
    out, _, _ = _run_child(GAMES, [str(games), "1" if record else "0"], root, None)
    run = json.loads(out.strip().splitlines()[-1])
    run.update(games=games, record_hands=record, hands_per_s=run["hands"] / run["seconds"])
    return run


def cpu_model() -> str:
    """The CPU's model name (Linux /proc/cpuinfo, else what platform says)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


def machine_info() -> dict[str, Any]:
    """What the figures were measured on (no host name: the files are published)."""
    import llvmlite  # type: ignore[import-untyped]
    import numba
    import numpy

    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        usable = os.cpu_count() or 0
    return {
        "cpu": cpu_model(),
        "logical_cores": os.cpu_count() or 0,
        "usable_cores": usable,
        "system": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(),
        "numba": numba.__version__,
        "llvmlite": llvmlite.__version__,
        "numpy": numpy.__version__,
    }


def checkout_info(root: Path) -> dict[str, str]:
    """The version and git commit of the checkout in ``root``."""
    version = "unknown"
    init = root / "arena" / "__init__.py"
    for line in init.read_text(encoding="utf-8").splitlines() if init.exists() else []:
        if line.startswith("__version__"):
            version = line.split("=", 1)[1].strip().strip("\"'")
    try:
        commit = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        commit = "unknown"
    return {"path": str(root), "version": version, "commit": commit}


def summarize(runs: list[dict[str, Any]], cold: list[dict[str, Any]]) -> dict[str, Any]:
    """Medians per checkout: hands/s games only and with hand records, cold start; ratios to ``this``."""
    out: dict[str, Any] = {}
    for name in sorted({r["checkout"] for r in runs} | {c["checkout"] for c in cold}):
        entry: dict[str, Any] = {}
        for record, key in ((False, "games_only"), (True, "with_hand_records")):
            mine = [r for r in runs if r["checkout"] == name and r["record_hands"] == record]
            if mine:
                entry[f"{key}_median_hands_per_s"] = statistics.median(r["hands_per_s"] for r in mine)
            if mine and all(r.get("cpu_seconds", 0) > 0 for r in mine):
                # Per CPU second: what a busy machine's wall clock hides (the process waits for a core).
                entry[f"{key}_median_hands_per_cpu_s"] = statistics.median(r["hands"] / r["cpu_seconds"] for r in mine)
        colds = [c for c in cold if c["checkout"] == name]
        if colds:
            entry["cold_start_median_s"] = statistics.median(c["wall_s"] for c in colds)
            entry["cold_start_median_cpu_s"] = statistics.median(c["cpu_s"] for c in colds)
        out[name] = entry
    if "this" in out and "compare" in out:
        this, other = out["this"], out["compare"]
        out["ratio_this_to_compare"] = {key: this[key] / other[key] for key in this if key in other and other[key] > 0}
    return out


def kernel_times() -> dict[str, float]:
    """ns per call of the meld kernels (this checkout, in this process)."""
    sys.path.insert(0, str(ROOT))
    sys.path.insert(0, str(ROOT / "scripts"))
    import bench_melds
    import numpy as np

    rng = np.random.default_rng(bench_melds.SEED)
    h10 = bench_melds.random_hands(1_000_000, 10, rng)
    h11 = bench_melds.random_hands(1_000_000, 11, rng)
    kernels = (
        ("deadwood_10", bench_melds._loop_deadwood, h10),
        ("best_discard_11", bench_melds._loop_best_discard, h11),
        ("deadwood_after_each_discard_11", bench_melds._loop_discards, h11),
    )
    for _, fn, h in kernels:
        fn(h[:10])  # compile before timing
    return {label: bench_melds.time_ns_per_call(fn, h) for label, fn, h in kernels}


def _label(checkout: str) -> str:
    return "this   " if checkout == "this" else "compare"


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--games", type=int, default=20_000, help="games per timed run (default 20,000)")
    ap.add_argument("--repeats", type=int, default=5, help="timed runs per measure and checkout (default 5)")
    ap.add_argument("--cold-repeats", type=int, default=1, help="cold starts per checkout (default 1)")
    ap.add_argument("--compare", type=Path, help="another checkout to time the same way, interleaved")
    ap.add_argument("--json", type=Path, help="write the machine, every run and the medians here")
    ap.add_argument("--no-records", action="store_true", help="skip the runs with hand records")
    ap.add_argument("--no-kernels", action="store_true", help="skip the meld kernel timings")
    args = ap.parse_args(argv)
    if args.games < 1 or args.repeats < 1 or args.cold_repeats < 0:
        ap.error("--games and --repeats must be >= 1, --cold-repeats >= 0")
    roots = {"this": ROOT}
    if args.compare is not None:
        other = args.compare.resolve()
        if not (other / "arena" / "engine" / "play.py").is_file():
            ap.error(f"--compare {args.compare}: not a Gin Arena checkout (no arena/engine/play.py)")
        roots["compare"] = other

    started = dt.datetime.now(dt.UTC)
    load_before = list(os.getloadavg())
    print(f"load average {load_before[0]:.2f} {load_before[1]:.2f} {load_before[2]:.2f}; {cpu_model()}")
    cold: list[dict[str, Any]] = []
    warm: list[dict[str, Any]] = []
    for _ in range(args.cold_repeats):
        for name, root in roots.items():
            with tempfile.TemporaryDirectory() as cache:
                c = {"checkout": name, **first_game(root, cache)}
                w = {"checkout": name, **first_game(root, cache)}
            cold.append(c)
            warm.append(w)
            print(
                f"{_label(name)} cold cache: {c['wall_s']:6.2f} s process start to first game "
                f"({c['cpu_s']:.2f} s CPU); warm cache: {w['wall_s']:.2f} s"
            )
    runs: list[dict[str, Any]] = []
    for record in (False, True) if not args.no_records else (False,):
        for _ in range(args.repeats):
            for name, root in roots.items():  # interleaved: this, compare, this, compare, ...
                run = {"checkout": name, **games_run(root, args.games, record)}
                runs.append(run)
                label = "with hand records" if record else "games only"
                print(
                    f"{_label(name)} simple vs simple, {label}: {run['hands']:,} hands in {run['seconds']:.3f} s "
                    f"-> {run['hands_per_s']:,.0f} hands/s ({run['hands'] / run['cpu_seconds']:,.0f} per CPU s)"
                )
    summary = summarize(runs, cold)
    for name in roots:
        s = summary[name]
        parts = [f"games only {s['games_only_median_hands_per_s']:,.0f} hands/s"]
        if "games_only_median_hands_per_cpu_s" in s:
            parts[0] += f" ({s['games_only_median_hands_per_cpu_s']:,.0f} per CPU s)"
        if "with_hand_records_median_hands_per_s" in s:
            parts.append(f"with hand records {s['with_hand_records_median_hands_per_s']:,.0f}")
        if "cold_start_median_s" in s:
            parts.append(f"cold start {s['cold_start_median_s']:.1f} s")
        print(f"{_label(name)} medians: " + ", ".join(parts))
    for key, ratio in summary.get("ratio_this_to_compare", {}).items():
        print(f"this / compare, {key}: {ratio:.3f}")
    kernels = {} if args.no_kernels else kernel_times()
    for label, ns in kernels.items():
        print(f"{label:<36}{ns:6.1f} ns")
    load_after = list(os.getloadavg())
    print(f"load average after {load_after[0]:.2f} {load_after[1]:.2f} {load_after[2]:.2f}")
    result = {
        "schema": SCHEMA,
        "date": started.isoformat(timespec="seconds"),
        "command": "python scripts/bench_engine.py " + " ".join(argv if argv is not None else sys.argv[1:]),
        "games": args.games,
        "repeats": args.repeats,
        "machine": machine_info(),
        "checkouts": {name: checkout_info(root) for name, root in roots.items()},
        "load_before": load_before,
        "load_after": load_after,
        "cold_start": cold,
        "warm_start": warm,
        "runs": runs,
        "summary": summary,
        "kernels_ns": kernels,
    }
    if args.json is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {args.json}")
    return result


if __name__ == "__main__":
    main()
