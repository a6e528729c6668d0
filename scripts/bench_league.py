"""Benchmark the league: leaderboard latency under 200 concurrent clients while games run, and upload -> rated.

    python scripts/bench_league.py [--clients 200] [--requests 20] [--rounds 5] [--compare DIR] [--load-only]
                                   [--games 2000] [--workers 2]

1. Load (always): a league of two house bots whose one pairing (1,000,000 games) keeps a worker busy is
   served by ``arena league serve --workers 1`` (the load starts once the pairing has stored its first
   chunk: the worker is playing, not compiling); ``--clients`` keep-alive connections each send
   ``--requests`` ``GET /api/leaderboard`` back to back, one request in flight per connection (200 in
   flight at once), first plain (the full JSON), then revalidating with the ETag of the first answer (a
   polling browser's request).  The client is one thread on one epoll set over raw sockets, timing each
   request with ``perf_counter_ns``; its own CPU per request is printed beside the server's, since both
   share the machine's cores.  With ``--compare DIR``, a second league made and served by the code in DIR
   (``PYTHONPATH=DIR``, e.g. an older checkout) takes the same load, the two interleaved round by round
   (A B A B ...), both playing their games all along: the figures come from one run, side by side.
   Prints, per server and kind, the medians over ``--rounds`` rounds of each round's p50 and p95, each
   round's p95, the CPU per request of the server and of the client, and the games' CPU meanwhile.
2. Upload -> rated (unless ``--load-only``): a 6-bot field (five house bots and one sandboxed submission),
   then a candidate (a copy of bots/simple.py) uploaded with ``arena submit FILE --to http://...`` (the
   token in ``ARENA_TOKEN``) and timed to checked and to rated, with ``--games`` games against the field.

Prints one line per figure; the last line sums them up.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import select
import shutil
import socket
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
        # a first chunk stored: the kernels are compiled and the worker is playing, not compiling
        wait_for(
            lambda: any(r["games"] > 0 for r in self.progress()["running"]),
            600,
            f"the {label} server's games to start",
            step=0.5,
        )

    def _up(self) -> bool:
        try:
            self.progress()
            return True
        except OSError:
            return False

    def cpu(self) -> float:
        """CPU seconds the server process (the web side; the scheduler is a child of its own) has used."""
        return _cpu_of(self.proc.pid)

    def games_cpu(self) -> float:
        """CPU seconds the server's children (the scheduler, its workers and checks) have used, all told."""
        children: dict[int, list[int]] = {}
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                fields = stat.read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
        total, todo = 0.0, list(children.get(self.proc.pid, []))
        while todo:
            pid = todo.pop()
            total += _cpu_of(pid)
            todo += children.get(pid, [])
        return total

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


def _cpu_of(pid: int) -> float:
    """CPU seconds (user and system) process ``pid`` has used; 0 once it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


_LENGTH = re.compile(rb"\r\ncontent-length: *([0-9]+)", re.IGNORECASE)


def load(port: int, clients: int, requests: int, etag: str | None = None) -> tuple[list[float], float]:
    """(per-request seconds, client CPU seconds) of ``clients`` keep-alive connections x ``requests``
    ``GET /api/leaderboard`` each, all in flight at once: every connection sends its next request as soon as
    it has read the whole answer to the last (one request in flight per connection, no pipelining).

    One thread, one epoll set for all the connections, raw sockets, each answer parsed only as far as its
    status and Content-Length: the client's own CPU per request (returned, to print beside the server's)
    stays well below the server's, since both share the machine's cores."""
    extra = f"If-None-Match: {etag}\r\n" if etag else ""
    req = f"GET /api/leaderboard HTTP/1.1\r\nHost: 127.0.0.1\r\n{extra}\r\n".encode()
    socks: dict[int, socket.socket] = {}
    for _ in range(clients):  # all connected before the clock starts
        s = socket.create_connection(("127.0.0.1", port), timeout=30)
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        s.setblocking(False)
        socks[s.fileno()] = s
    bufs = {fd: b"" for fd in socks}
    need = dict.fromkeys(socks, -1)  # the answer's whole length once its head is in; -1 before
    left = dict.fromkeys(socks, requests)
    t0: dict[int, int] = {}
    out: list[int] = []
    bad: list[int] = []
    ep = select.epoll()
    clock = time.perf_counter_ns
    cpu0 = time.process_time()
    try:
        for fd, s in socks.items():
            ep.register(fd, select.EPOLLIN)
            t0[fd] = clock()
            s.send(req)
        active = len(socks)
        while active:
            events = ep.poll(60)
            if not events:
                raise TimeoutError(f"no answer for 60 s ({active} connections waiting)")
            for fd, _ in events:
                chunk = socks[fd].recv(1 << 20)
                if not chunk:
                    raise ConnectionError("the server closed a keep-alive connection")
                buf = bufs[fd] + chunk
                n = need[fd]
                if n < 0:
                    end = buf.find(b"\r\n\r\n")
                    if end < 0:
                        bufs[fd] = buf
                        continue
                    if buf[9:12] not in (b"200", b"304"):
                        bad.append(int(buf[9:12]))
                    m = _LENGTH.search(buf, 0, end)
                    n = need[fd] = end + 4 + (int(m[1]) if m else 0)
                if len(buf) < n:
                    bufs[fd] = buf
                    continue
                now = clock()
                out.append(now - t0[fd])
                bufs[fd], need[fd] = b"", -1
                left[fd] -= 1
                if left[fd]:
                    t0[fd] = now
                    socks[fd].send(req)
                else:
                    ep.unregister(fd)
                    active -= 1
        cpu = time.process_time() - cpu0
    finally:
        ep.close()
        for s in socks.values():
            s.close()
    assert not bad, f"{len(bad)} answers were not 200/304: {bad[:5]}"
    return [t / 1e9 for t in out], cpu


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
    # per (server, kind): each round's latencies, and the server's and the client's CPU seconds in all
    rounds: dict[tuple[str, str], list[list[float]]] = {}
    cpu: dict[tuple[str, str], list[float]] = {}
    try:

        def measure(s: Served, kind: str, tag: str | None) -> None:
            c0, g0, t0 = s.cpu(), s.games_cpu(), time.perf_counter()
            xs, client = load(s.port, args.clients, args.requests, tag)
            server, games, wall = s.cpu() - c0, s.games_cpu() - g0, time.perf_counter() - t0
            rounds.setdefault((s.label, kind), []).append(xs)
            acc = cpu.setdefault((s.label, kind), [0.0, 0.0, 0.0, 0.0])
            acc[0] += server
            acc[1] += client
            acc[2] += games
            acc[3] += wall

        for i in range(args.rounds):  # interleaved: A B A B ..., every server's games running throughout
            for s in servers:
                tag = etag_of(s.url)  # revalidation: what a polling page sends once it has the board
                kinds = [("full", None)] + ([("etag", tag)] if tag else [])
                for kind, sent in kinds if i % 2 == 0 else kinds[::-1]:  # neither kind always comes first
                    measure(s, kind, sent)
        for s in servers:
            if not s.progress()["running"]:
                print(f"warning: the {s.label} server's pairing ended during the load (figures partly idle)")
    finally:
        for s in servers:
            s.stop()
    out = {}
    for (label, kind), per_round in rounds.items():
        p50 = statistics.median(statistics.median(xs) for xs in per_round)
        p95s = [percentile(xs, 0.95) for xs in per_round]
        p95 = statistics.median(p95s)
        n = sum(len(xs) for xs in per_round)
        server, client, games, wall = cpu[(label, kind)]
        out[f"{label} {kind}"] = (p50, p95)
        print(
            f"load: {label}: GET /api/leaderboard ({'If-None-Match' if kind == 'etag' else 'full answer'}), "
            f"{args.clients} concurrent x {args.requests} requests, {len(per_round)} rounds, games running: "
            f"median over rounds p50 {1000 * p50:.1f} ms, p95 {1000 * p95:.1f} ms "
            f"(rounds' p95 {', '.join(f'{1000 * x:.1f}' for x in p95s)}); CPU per request: server "
            f"{1e6 * server / n:.0f} us, client {1e6 * client / n:.0f} us; the games meanwhile used "
            f"{100 * games / wall:.0f}% of a core"
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
    ap.add_argument("--rounds", type=int, default=5, help="rounds of the load per server and kind")
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
