"""Benchmark the league: upload -> rated leaderboard entry, and leaderboard latency under load.

    python scripts/bench_league.py [--games 2000] [--workers 2] [--folder DIR]

1. Builds a league with a 6-bot field: five house bots (random, simple,
   discard-tracking, early-knock, gin-chasing) and one sandboxed submission
   (a copy of bots/early_knock.py), and serves it (``arena league serve``)
   with ``--workers``.
2. While the field's own pairings play, 50 clients x 20 requests hit the
   leaderboard, pages and API: prints /api/leaderboard p50/p95.
3. Once the field is rated, uploads a candidate (a copy of bots/simple.py)
   with ``arena submit FILE --to http://... --token ...`` and times it to
   checked and to rated, with ``--games`` games in all against the field
   (``games_per_pairing`` = games / 6, rounded up to even).

Prints one line per figure; the last line sums them up for the README.
"""

from __future__ import annotations

import argparse
import math
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.league.server import Server, add_user, arena, wait_for  # noqa: E402
from tests.league.test_league_load import CLIENTS, REQUESTS, load, percentile  # noqa: E402

HOUSE = ["random", "simple", "discard-tracking", "early-knock", "gin-chasing"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=2000, help="games of the candidate against the field, in all")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--folder", type=Path, default=None, help="league folder (default: a temporary one, removed)")
    args = ap.parse_args()
    per_pair = 2 * math.ceil(args.games / 6 / 2)
    chunk = 2 * math.ceil(per_pair / (2 * max(1, args.workers)))  # one chunk per worker and pairing
    tmp = Path(tempfile.mkdtemp(prefix="bench-league-"))
    folder = args.folder or tmp / "league"
    cfg = tmp / "league.toml"
    cfg.write_text(
        f"games_per_pairing = {per_pair}\nchunk_size = {chunk}\nhouse_bots = {HOUSE!r}\n".replace("'", '"')
        + "check_games = 10\nextra_rounds = 0\n"
    )
    arena("league", "init", str(folder), "--config", str(cfg))
    organizer = add_user(folder, "olga", organizer=True)
    alice = add_user(folder, "alice")
    field6 = tmp / "field6.py"
    field6.write_text((ROOT / "bots" / "early_knock.py").read_text())
    candidate = tmp / "candidate.py"
    candidate.write_text((ROOT / "bots" / "simple.py").read_text())
    print(f"league {folder}: field of 6, {per_pair} games per pairing, chunks of {chunk}, {args.workers} workers")
    server = Server(folder, play=True, workers=args.workers)
    try:
        arena("submit", str(field6), "--to", server.url, "--token", organizer, "--name", "field6")
        wait_for(lambda: server.get("/api/progress")["running"], 600, "the field's games to start", step=0.2)
        t0 = time.perf_counter()
        times = load(server)
        wall = time.perf_counter() - t0
        lb = times["/api/leaderboard"]
        p50, p95 = statistics.median(lb), percentile(lb, 0.95)
        print(
            f"load: {CLIENTS} clients x {REQUESTS} requests while games run: {CLIENTS * REQUESTS / wall:.0f} req/s; "
            f"/api/leaderboard p50 {1000 * p50:.0f} ms, p95 {1000 * p95:.0f} ms"
        )

        def field_rated():
            p = server.get("/api/progress")
            board = server.get("/api/leaderboard")
            return (
                not p["running"]
                and not p["queued"]
                and not p["checking"]
                and len(board) == 6
                and all(e["status"] == "rated" for e in board)
            )

        t = time.perf_counter()
        wait_for(field_rated, 3600, "the field to be rated", step=1)
        print(f"field rated ({time.perf_counter() - t:.0f} s more)")

        t0 = time.perf_counter()
        arena("submit", str(candidate), "--to", server.url, "--token", alice, "--name", "candidate")

        def status():
            v = server.get("/api/users/alice")["versions"]
            return v[0]["status"] if v else ""

        wait_for(lambda: status() != "checking", 1200, "the check", step=0.5)
        checked = time.perf_counter() - t0
        assert status() in ("playing", "rated"), status()
        wait_for(lambda: status() == "rated", 7200, "the rating", step=1)
        rated = time.perf_counter() - t0
        entry = next(e for e in server.get("/api/leaderboard") if e["bot"] == "candidate")
        assert entry["games"] == 6 * per_pair, f"a rated entry counts all its games ({entry['games']})"
        print(f"upload -> checked {checked:.0f} s; -> rated {rated:.0f} s; {entry['games']} games")
        print(
            f"summary: upload to a rated entry with {entry['games']} games against a 6-bot field on "
            f"{args.workers} workers: {rated:.0f} s (check {checked:.0f} s); rating {entry['rating']:.0f} "
            f"[{entry['rating_low']:.0f}, {entry['rating_high']:.0f}]; leaderboard under {CLIENTS}x{REQUESTS} "
            f"load: p50 {1000 * p50:.0f} ms, p95 {1000 * p95:.0f} ms"
        )
    finally:
        server.stop()
        if args.folder is None:
            shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
