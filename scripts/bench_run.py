"""Runs that outgrow memory: wall time and peak RSS of big runs, their report, and Dask.

    python scripts/bench_run.py                       # 1M and 10M games, report on 10M, Dask 1M
    python scripts/bench_run.py --big 2000000         # a smaller "big" run
    python scripts/bench_run.py --skip-dask --skip-big

Every measurement runs in a fresh process, so its peak RSS (``ru_maxrss``)
is its own: ``driver`` is the process that runs ``run_tournament`` (or the
report), ``largest worker`` the largest of its child processes.  Simple
plays Simple (as a variant, "simple-b"), hands recorded, 2 local worker
processes, chunks of 20,000 games.  Folders go to ``/tmp/gin-arena-bench``
unless ``--dir`` says otherwise; a rerun replays nothing that is stored
unless ``--fresh``.
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path


def _config(games: int, name: str, root: Path) -> dict:
    return {
        "name": name,
        "bots": ["simple", "simple-b"],
        "variants": {"simple-b": {"bot": "simple"}},
        "games_per_pair": games,
        "chunk_size": 20000,
        "seed": 11,
        "workers": 2,
        "record_hands": True,
        "results_dir": str(root),
    }


def _one(kind: str, games: int, root: Path) -> dict:
    """One measurement in this process; prints a JSON line."""
    if kind == "report":
        from arena.analysis.report import write_report

        t0 = time.perf_counter()
        write_report(root / f"local-{games}")
        wall = time.perf_counter() - t0
    else:
        from arena.run import run_tournament

        name = f"{kind}-{games}"
        shutil.rmtree(root / name, ignore_errors=True)
        client = cluster = None
        if kind == "dask":
            from distributed import Client, LocalCluster

            cluster = LocalCluster(
                n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None, host="127.0.0.1"
            )
            client = Client(cluster)
        t0 = time.perf_counter()
        res = run_tournament(_config(games, name, root), client=client, progress=False)
        wall = time.perf_counter() - t0
        assert res.status == "complete", res.status
        if client is not None:
            client.close()
            cluster.close()
    me = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return {"kind": kind, "games": games, "wall": wall, "driver_mib": me, "worker_mib": kids}


def _measure(kind: str, games: int, root: Path) -> dict:
    out = subprocess.run(
        [sys.executable, __file__, "--one", kind, "--games", str(games), "--dir", str(root)],
        capture_output=True,
        text=True,
    )
    if out.returncode != 0:
        raise SystemExit(f"{kind} {games}: failed\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def _folder_mib(path: Path) -> float:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) / 2**20


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--small", type=int, default=1_000_000)
    ap.add_argument("--big", type=int, default=10_000_000)
    ap.add_argument("--dir", type=Path, default=Path("/tmp/gin-arena-bench"))
    ap.add_argument("--skip-big", action="store_true")
    ap.add_argument("--skip-dask", action="store_true")
    ap.add_argument("--one", choices=["local", "dask", "report"], help=argparse.SUPPRESS)
    ap.add_argument("--games", type=int, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.one:
        print(json.dumps(_one(a.one, a.games, a.dir)))
        return
    a.dir.mkdir(parents=True, exist_ok=True)
    _measure("local", 2000, a.dir)  # warm the numba cache and the imports
    rows = [_measure("local", a.small, a.dir)]
    if not a.skip_dask:
        rows.append(_measure("dask", a.small, a.dir))
        rows.append(_measure("local", a.small, a.dir))  # again, interleaved: the machine is shared
    if not a.skip_big:
        rows.append(_measure("local", a.big, a.dir))
        rows.append(_measure("report", a.big, a.dir))
    print(f"{'what':<34} {'games':>11} {'wall s':>8} {'games/s':>9} {'driver MiB':>11} {'largest worker MiB':>19}")
    for r in rows:
        what = {
            "local": "run, 2 local workers, hands",
            "dask": "run, Dask LocalCluster 2x1, hands",
            "report": "arena report (write_report)",
        }[r["kind"]]
        rate = f"{r['games'] / r['wall']:>9,.0f}" if r["kind"] != "report" else f"{'':>9}"
        kids = f"{r['worker_mib']:>19,.0f}" if r["kind"] != "report" else f"{'-':>19}"
        print(f"{what:<34} {r['games']:>11,} {r['wall']:>8.1f} {rate} {r['driver_mib']:>11,.0f} {kids}")
    small = [r for r in rows if r["kind"] == "local" and r["games"] == a.small]
    med_small = (
        sorted(r["wall"] for r in small)[len(small) // 2]
        if len(small) % 2
        else sum(sorted(r["wall"] for r in small)) / len(small)
    )
    dask = [r for r in rows if r["kind"] == "dask"]
    if dask:
        print(
            f"Dask vs local processes, {a.small:,} games: {dask[0]['wall'] / med_small:.2f}x the wall time "
            f"(local: mean of {len(small)} interleaved runs)"
        )
    big = [r for r in rows if r["kind"] == "local" and r["games"] == a.big]
    if big:
        print(
            f"{a.big:,} games took {big[0]['wall'] / med_small:.1f}x the time of {a.small:,} "
            f"({a.big / a.small:.0f}x the games)"
        )
        print(f"run folder of {a.big:,} games: {_folder_mib(a.dir / f'local-{a.big}'):,.0f} MiB on disk")


if __name__ == "__main__":
    main()
