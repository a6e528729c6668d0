"""A bounded load test on 127.0.0.1: 50 clients x 20 requests while games run.

Pages and the JSON API read only the database (the scheduler writes the
ratings there after each pairing), so answers stay quick while a pairing of
compiled bots keeps the worker busy.  Every request must succeed; the
leaderboard's p50/p95 are printed (``-s``) and bounded generously (the CI
machine is shared).
"""

from __future__ import annotations

import statistics
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.league.server import Server, make_league, wait_for

CLIENTS, REQUESTS = 50, 20
PATHS = ("/api/leaderboard", "/league/", "/league/bot/simple", "/api/progress", "/api/bots/random")


def load(server: Server) -> dict[str, list[float]]:
    def client(i: int) -> list[tuple[str, int, float]]:
        out = []
        for j in range(REQUESTS):
            path = PATHS[(i + j) % len(PATHS)]
            t0 = time.perf_counter()
            status, _, _ = server.request("GET", path, timeout=30)
            out.append((path, status, time.perf_counter() - t0))
        return out

    with ThreadPoolExecutor(CLIENTS) as pool:
        results = [r for rs in pool.map(client, range(CLIENTS)) for r in rs]
    assert len(results) == CLIENTS * REQUESTS
    bad = [(p, s) for p, s, _ in results if s != 200]
    assert not bad, bad[:5]
    times: dict[str, list[float]] = {}
    for p, _, t in results:
        times.setdefault(p, []).append(t)
    return times


def percentile(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


@pytest.mark.slow
def test_fifty_clients_while_games_run(tmp_path):
    folder = make_league(tmp_path / "lg", games_per_pairing=200_000, chunk_size=2000, extra_rounds=0)
    server = Server(folder, play=True, workers=1)
    try:
        wait_for(lambda: server.get("/api/progress")["running"], 300, "a pairing to run", step=0.2)
        t0 = time.perf_counter()
        times = load(server)
        wall = time.perf_counter() - t0
        lb = times["/api/leaderboard"]
        p50, p95 = statistics.median(lb), percentile(lb, 0.95)
        print(
            f"\nleague load: {CLIENTS} clients x {REQUESTS} requests in {wall:.1f} s "
            f"({CLIENTS * REQUESTS / wall:.0f} req/s); /api/leaderboard "
            f"p50 {1000 * p50:.0f} ms, p95 {1000 * p95:.0f} ms"
        )
        assert server.get("/api/progress")["running"], "the games ran during the load"
        assert p95 < 5.0
    finally:
        server.stop()
