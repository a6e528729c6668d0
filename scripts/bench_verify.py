"""How much of `arena report` goes to checking chunk files, and what `--verify` adds.

    python scripts/bench_run.py --skip-dask            # makes /tmp/gin-arena-bench/local-10000000
    python scripts/bench_verify.py /tmp/gin-arena-bench/local-10000000

`arena report` checks the SHA-256 of every chunk file it reads before parsing
it; `arena report --verify` first runs the whole-folder check of `arena fsck`
(every indexed file hashed, stray and unindexed files looked for). This times
the report with the store's hash function wrapped by a timer, then the full
check on its own, and prints each as a share of the report.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import arena.run.store as store_module
from arena.analysis.report import write_report
from arena.run.store import chunks, files, repair

_hash = files.sha256
_spent = {"seconds": 0.0, "bytes": 0, "files": 0}


def _timed_hash(data: bytes) -> str:
    t = time.perf_counter()
    digest = _hash(data)
    _spent["seconds"] += time.perf_counter() - t
    _spent["bytes"] += len(data)
    _spent["files"] += 1
    return digest


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run", type=Path, help="a finished run folder")
    args = ap.parse_args()
    chunks.sha256 = repair.sha256 = _timed_hash  # every reader of the store hashes through these two

    t0 = time.perf_counter()
    write_report(args.run)
    report = time.perf_counter() - t0
    store = store_module.RunStore(args.run)
    games = store.n_games()
    print(f"{games:,} games in {store.n_chunks():,} chunks")
    print(
        f"arena report: {report:.1f} s; SHA-256 inside it {_spent['seconds']:.2f} s over "
        f"{_spent['bytes'] / 1e6:,.0f} MB in {_spent['files']:,} files = {100 * _spent['seconds'] / report:.2f}% of it"
    )
    _spent.update(seconds=0.0, bytes=0, files=0)
    t0 = time.perf_counter()
    findings = store_module.RunStore(args.run).check(repair=False)
    full = time.perf_counter() - t0
    print(
        f"--verify's whole-folder check: {full:.1f} s ({_spent['bytes'] / 1e6:,.0f} MB hashed in "
        f"{_spent['seconds']:.2f} s), {len(findings)} finding(s) = {100 * full / report:.1f}% of the report"
    )
    rate = _spent["bytes"] / 1e6 / max(_spent["seconds"], 1e-9)
    print(f"SHA-256 at {rate:,.0f} MB/s; {_spent['bytes'] / max(games, 1):.0f} bytes per game on disk")


if __name__ == "__main__":
    main()
