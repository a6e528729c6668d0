"""Benchmark the league: leaderboard latency under 200 concurrent clients while games run, and upload -> rated.

    python scripts/bench_league.py [--clients 200] [--requests 20] [--compare /work/main] [--load-only]
                                   [--games 2000] [--workers 2]

1. Load (always): a league of two house bots whose one pairing (1,000,000 games) keeps a worker busy is
   served by ``arena league serve --workers 1``; ``--clients`` keep-alive connections each send
   ``--requests`` ``GET /api/leaderboard`` back to back (an asyncio client, one connection per client, so
   the client costs little next to the server), first plain (the full JSON), then revalidating with the
   ETag of the first answer (a polling browser's request).  With ``--compare DIR``, a second league made
   and served by the code in DIR (``PYTHONPATH=DIR``, e.g. the main branch's checkout) takes the same load,
   the two interleaved round by round (A B A B ...), both playing their games all along: the figures come
   from one run, side by side.  Prints p50/p95 per server and kind.
2. Upload -> rated (unless ``--load-only``): a 6-bot field (five house bots and one sandboxed submission),
   then a candidate (a copy of bots/simple.py) uploaded with ``arena submit FILE --to http://...`` (the
   token in ``ARENA_TOKEN``) and timed to checked and to rated, with ``--games`` games against the field.

Prints one line per figure; the last line sums them up.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.league.server import Server, add_user, arena, free_port, wait_for  # noqa: E402

HOUSE = ["random", "simple", "discard-tracking", "early-knock", "gin-chasing"]
ROUNDS = 3


class Served:
    """``arena league serve`` from the code at ``code`` (PYTHONPATH), on a league it made itself."""

    def __init__(self, code: Path, folder: Path, label: str):
        self.label, self.folder = label, folder
        env = {**os.environ, "PYTHONPATH": str(code)}
        run = [sys.executable, "-c", "from arena.cli.main import app; app()"]
        cfg = folder.parent / f"{folder.name}.toml"
        cfg.write_text('games_per_pairing = 1000000\nchunk_size = 4000\nhouse_bots = ["random", "simple"]\n')
        # cwd=code: ``python -c`` puts the working folder first on sys.path
        subprocess.run([*run, "league", "init", str(folder), "--config", str(cfg)], env=env, check=True, cwd=code)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = open(folder.parent / f"{folder.name}.log", "w")  # noqa: SIM115
        self.proc = subprocess.Popen(
            [*run, "league", "serve", str(folder), "--port", str(self.port), "--workers", "1"],
            env=env,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            cwd=code,
        )
        wait_for(self._up, 180, f"the {label} server", step=0.3)
        wait_for(lambda: self.progress()["running"], 300, f"the {label} server's games to start", step=0.3)

    def _up(self) -> bool:
        try:
            self.progress()
            return True
        except OSError:
            return False

    def cpu(self) -> float:
        """CPU seconds the server process (the web side; the scheduler is a child of its own) has used."""
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def progress(self) -> dict:
        with urllib.request.urlopen(self.url + "/api/progress", timeout=10) as r:
            return json.loads(r.read())

    def stop(self) -> None:
        import signal

        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
        self.log.close()


async def _client(port: int, n: int, etag: str | None, out: list[float], bad: list[int]) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    extra = f"If-None-Match: {etag}\r\n" if etag else ""
    req = f"GET /api/leaderboard HTTP/1.1\r\nHost: 127.0.0.1\r\n{extra}\r\n".encode()
    try:
        for _ in range(n):
            t0 = time.perf_counter()
            writer.write(req)
            head = await reader.readuntil(b"\r\n\r\n")
            status = int(head.split(b" ", 2)[1])
            length = 0
            for line in head.split(b"\r\n"):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            if length:
                await reader.readexactly(length)
            out.append(time.perf_counter() - t0)
            if status not in (200, 304):
                bad.append(status)
    finally:
        writer.close()


def load(port: int, clients: int, requests: int, etag: str | None = None) -> list[float]:
    """Per-request seconds of ``clients`` connections x ``requests`` GET /api/leaderboard, all at once."""
    out: list[float] = []
    bad: list[int] = []

    async def main() -> None:
        await asyncio.gather(*(_client(port, requests, etag, out, bad) for _ in range(clients)))

    asyncio.run(main())
    assert not bad, f"{len(bad)} answers were not 200/304: {bad[:5]}"
    return out


def percentile(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def etag_of(url: str) -> str | None:
    with urllib.request.urlopen(url + "/api/leaderboard", timeout=10) as r:
        return r.headers.get("ETag")


def bench_load(args: argparse.Namespace, tmp: Path) -> dict[str, tuple[float, float]]:
    servers = [Served(ROOT, tmp / "this", "this tree")]
    if args.compare:
        servers.append(Served(args.compare.resolve(), tmp / "compare", str(args.compare)))
    try:
        times: dict[tuple[str, str], list[float]] = {}
        cpu: dict[tuple[str, str], float] = {}

        def measure(s: Served, kind: str, tag: str | None) -> None:
            c0 = s.cpu()
            times.setdefault((s.label, kind), []).extend(load(s.port, args.clients, args.requests, tag))
            cpu[(s.label, kind)] = cpu.get((s.label, kind), 0.0) + s.cpu() - c0

        for _ in range(ROUNDS):  # interleaved: A B A B ..., every server's games running throughout
            for s in servers:
                measure(s, "full", None)
                tag = etag_of(s.url)
                if tag:  # revalidation: what a polling page sends once it has the board
                    measure(s, "etag", tag)
        for s in servers:
            if not s.progress()["running"]:
                print(f"warning: the {s.label} server's pairing ended during the load (figures partly idle)")
    finally:
        for s in servers:
            s.stop()
    out = {}
    for (label, kind), xs in times.items():
        p50, p95 = statistics.median(xs), percentile(xs, 0.95)
        out[f"{label} {kind}"] = (p50, p95)
        print(
            f"load: {label}: GET /api/leaderboard ({'If-None-Match' if kind == 'etag' else 'full answer'}), "
            f"{args.clients} concurrent clients x {args.requests} x {ROUNDS} rounds while games run: "
            f"p50 {1000 * p50:.1f} ms, p95 {1000 * p95:.1f} ms ({len(xs)} requests); server CPU "
            f"{1e6 * cpu[(label, kind)] / len(xs):.0f} us per request"
        )
    return out


def bench_upload(args: argparse.Namespace, tmp: Path) -> None:
    per_pair = 2 * math.ceil(args.games / 6 / 2)
    chunk = 2 * math.ceil(per_pair / (2 * max(1, args.workers)))  # one chunk per worker and pairing
    folder = tmp / "league"
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
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    submit = [sys.executable, "-c", "from arena.cli.main import app; app()", "submit"]
    try:
        subprocess.run(
            [*submit, str(field6), "--to", server.url, "--name", "field6"],
            env={**env, "ARENA_TOKEN": organizer},
            check=True,
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
        print(f"field rated ({time.perf_counter() - t:.0f} s)")
        t0 = time.perf_counter()
        subprocess.run(
            [*submit, str(candidate), "--to", server.url, "--name", "candidate"],
            env={**env, "ARENA_TOKEN": alice},
            check=True,
        )

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
        print(
            f"summary: upload to a rated entry with {entry['games']} games against a 6-bot field on "
            f"{args.workers} workers: {rated:.0f} s (check {checked:.0f} s); rating {entry['rating']:.0f} "
            f"[{entry['rating_low']:.0f}, {entry['rating_high']:.0f}]"
        )
    finally:
        server.stop()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--clients", type=int, default=200, help="concurrent keep-alive clients of the load")
    ap.add_argument("--requests", type=int, default=20, help="requests per client and round")
    ap.add_argument("--compare", type=Path, default=None, help="also load a server run from this checkout")
    ap.add_argument("--load-only", action="store_true", help="measure the load only, not upload -> rated")
    ap.add_argument("--games", type=int, default=2000, help="games of the candidate against the field, in all")
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench-league-"))
    try:
        bench_load(args, tmp)
        if not args.load_only:
            bench_upload(args, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
