"""The league's background process: check submissions, play pairings, rate.

One loop plays the games; a thread beside it runs the checks
(:mod:`arena.league.checks`); every step is recorded in the database before
and after:

1. a version in ``checking`` gets its check in a process of its own, with a
   time limit, at most one per user at a time (so one user's bots cannot hold
   the checks beyond their share); a FAIL refuses it with the failing lines as
   the reason; a pass makes it the bot's current version (the old one is
   ``retired``, its games kept) and queues its pairings against the field;
2. the pairing in ``running`` (left by a crash) is resumed, else the queued
   one of highest priority (new bots 100, house field 50, extra games 0), and
   among equals the one whose owner had the fewest pairings played in the
   last hour (so two users' new bots take turns), is played by
   :func:`arena.run.run_tournament` into the run folder
   ``runs/rNNN`` of its round; the run store skips every chunk
   already stored, so a ``kill -9`` at any moment loses at most the chunks
   in flight and never counts a game twice (games are always counted from
   the store, never added up in the database);
3. when idle, the current versions with the widest rating interval get
   another round (a new meeting, the next run folder, another seed) against
   the opponent they have met least, up to ``extra_rounds``;
4. after every pairing the ratings (Bradley-Terry with 95% intervals) and
   each bot's page data are computed from every run folder, one chunk at a
   time, and written to the database, from where the web side reads them.

``python -m arena.league.scheduler DIR [--workers N | --scheduler tcp://...]``
runs the loop; ``arena league serve`` starts it as a child process that
dies with the server.  A database that cannot be read (damaged while serving)
is one logged line, and the loop waits for it to be restored; it never exits
in a loop of tracebacks.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import logging
import math
import os
import sqlite3
import sys
import threading
import time
from collections import defaultdict, deque
from pathlib import Path
from typing import Any

from arena.league.checks import Checker, enter_version, public_names, use_eaai_kit, version_spec
from arena.league.core import League, now_iso, public_text, queue_pairing, sweep_files, withdraw_revoked
from arena.league.db import busy, rows, set_state, transaction

log = logging.getLogger("arena.league")

RECENT_GAMES = 12


#: Seconds between two sweeps of unreferenced bot files.
SWEEP_EVERY = 600.0


class Scheduler:
    def __init__(self, league: League, workers: int = 0, scheduler: str = ""):
        self.league = league
        self.cfg = league.config
        self.workers = workers
        self.scheduler = scheduler
        self.db = league.reconnecting()
        self.conn = self.db.get()
        #: The machine failing the pairings (the Dask scheduler unreachable or lost, a full disk): the pairing
        #: waits for it, with one log line when it starts and one when it ends.
        self._machine_down = _Outage("league scheduler", back="the pairings play again")
        use_eaai_kit(league)  # the checks and the pairings' workers inherit it

    # --- the loop ---------------------------------------------------------------------
    def run_forever(self, idle_sleep: float = 1.0) -> None:
        parent = os.getppid()
        stop = threading.Event()
        checker = threading.Thread(target=self._check_loop, args=(stop, parent), name="league-checks", daemon=True)
        checker.start()
        down = _Outage("league scheduler")
        swept = 0.0
        try:
            while True:
                if os.getppid() != parent:  # the server died: stop (the next server resumes our work)
                    log.warning("league scheduler: the server is gone; stopping")
                    return
                try:
                    self.conn = self.db.get()
                    if down.since is not None or not swept:
                        self.refresh_ratings()
                    if time.monotonic() - swept > SWEEP_EVERY:
                        for rel in sweep_files(self.league.dir, self.conn):
                            log.info("removed %s: no version points to it", rel)
                        swept = time.monotonic()
                    worked = self.step(checks=False)
                    down.ok()
                except sqlite3.DatabaseError as exc:
                    self.db.drop()
                    down.failed(exc)
                    time.sleep(down.wait())
                    continue
                if not worked:
                    time.sleep(idle_sleep)
        finally:
            stop.set()
            checker.join(15)

    def _check_loop(self, stop: threading.Event, parent: int) -> None:
        """The checks, polled beside the games (their own thread and connection)."""
        checker = Checker(self.league)
        down = _Outage("league checks")
        try:
            while not stop.is_set() and os.getppid() == parent:
                try:
                    checker.poll()
                    down.ok()
                except sqlite3.DatabaseError as exc:
                    checker.db.drop()
                    down.failed(exc)
                    stop.wait(down.wait())
                    continue
                stop.wait(0.3)
        finally:
            checker.stop()

    def step(self, checks: bool = True) -> bool:
        """Do the most urgent piece of work; False when there was none (``checks``: run a check here too)."""
        return (checks and self.check_next()) or self.play_next() or self.queue_extra()

    # --- 1. checks --------------------------------------------------------------------
    def check_next(self) -> bool:
        """Run the waiting checks to their end in this call (the loop leaves them to its checker thread)."""
        checker = Checker(self.league)
        try:
            checker.poll()
            if not checker.busy():
                return False
            while checker.busy():
                time.sleep(0.1)
                checker.poll()
        finally:
            checker.stop()
        return True

    def _spec(self, v: dict[str, Any] | sqlite3.Row) -> str:
        return version_spec(self.league, v)

    def _variant(self, v: dict[str, Any]) -> dict[str, Any]:
        if v["kind"] == "cmd":
            import shlex

            return {"command": shlex.split(v["spec"])}
        return {"bot": self._spec(v)}

    def _enter(self, v: dict[str, Any]) -> None:
        """Make a checked version its bot's current one and queue it against the field (in a transaction)."""
        enter_version(self.conn, v, self.cfg.games_per_pairing)

    # --- 2. pairings ------------------------------------------------------------------
    def play_next(self) -> bool:
        c = self.conn
        withdraw_revoked(c)  # a revoked user's bots leave the league before anything is picked
        with transaction(c):
            # A queued pairing whose bot left the league is cancelled, not played.
            c.execute(
                "UPDATE pairings SET state = 'cancelled', result = 'a bot left the league' WHERE state = 'queued'"
                " AND (a IN (SELECT id FROM versions WHERE status IN ('withdrawn', 'retired', 'refused'))"
                " OR b IN (SELECT id FROM versions WHERE status IN ('withdrawn', 'retired', 'refused')))"
            )
            hour_ago = (dt.datetime.now(dt.UTC) - dt.timedelta(hours=1)).isoformat(timespec="seconds")
            found = rows(
                c,
                "SELECT p.* FROM pairings p JOIN versions va ON va.id = p.a WHERE p.state IN ('running', 'queued')"
                " ORDER BY p.state = 'running' DESC, p.priority DESC, (SELECT COUNT(*) FROM pairings q"
                " JOIN versions vq ON vq.id = q.a WHERE q.state = 'done' AND q.finished > ?"
                " AND vq.submitted_by IS va.submitted_by), p.id LIMIT 1",
                (hour_ago,),
            )
            if found:
                p = found[0]
                c.execute("UPDATE pairings SET state = 'running' WHERE id = ?", (p["id"],))
        if not found:
            self.settle()
            return False
        va = rows(c, "SELECT * FROM versions WHERE id = ?", (p["a"],))[0]
        vb = rows(c, "SELECT * FROM versions WHERE id = ?", (p["b"],))[0]
        log.info("playing %s vs %s (round %d)", va["run_name"], vb["run_name"], p["round"])
        result, state = self._play(p, va, vb)
        games = self.stored_games(p["round"], va["run_name"], vb["run_name"])
        with transaction(c):
            c.execute(
                "UPDATE pairings SET state = ?, games = ?, result = ?, finished = ? WHERE id = ?",
                (state, games, result, None if state == "running" else now_iso(), p["id"]),
            )
        if state != "running":
            self.refresh_ratings()  # before 'rated': a rated bot's entry already counts all its games
            self.settle()
        return True

    def settle(self) -> None:
        """'playing' versions with no first-round pairing left are 'rated' (also after a crash in between)."""
        with transaction(self.conn):
            self.conn.execute(
                "UPDATE versions SET status = 'rated' WHERE status = 'playing' AND NOT EXISTS (SELECT 1 FROM"
                " pairings p WHERE (p.a = versions.id OR p.b = versions.id) AND p.round = 0"
                " AND p.state IN ('queued', 'running'))"
            )

    def _play(self, p: dict[str, Any], va: dict[str, Any], vb: dict[str, Any]) -> tuple[str, str]:
        from arena.run.runner import RunEnvError, run_tournament
        from arena.run.store import StoreBusy, StoreEnvError

        cfg = self.cfg.run_config(
            [va["run_name"], vb["run_name"]],
            round_no=p["round"],
            results_dir=str(self.league.dir / "runs"),
            variants={va["run_name"]: self._variant(va), vb["run_name"]: self._variant(vb)},
            workers=self.workers,
            scheduler=self.scheduler,
        )
        last = [0.0]

        def progress(done: int, total: int) -> None:
            if time.monotonic() - last[0] < 0.5 and done < total:
                return
            last[0] = time.monotonic()
            with transaction(self.conn):
                self.conn.execute("UPDATE pairings SET games = ? WHERE id = ?", (done, p["id"]))

        try:
            from arena.analysis.sprt import SprtGate

            stop = SprtGate if self.cfg.sprt else None
            res = run_tournament(cfg, progress=progress, base_dir=self.league.dir, stop=stop)
        except StoreBusy as exc:  # another process still holds the run folder: the pairing waits, not lost
            log.warning("pairing %s vs %s waits: %s", va["run_name"], vb["run_name"], exc)
            time.sleep(5)
            return "", "running"
        except (RunEnvError, StoreEnvError) as exc:
            # The machine's fault, not the bots': cancelled, the pairing was lost and its bots rated without
            # those games (a Dask scheduler restarting lost every pairing tried meanwhile).  It waits instead,
            # its stored chunks kept, and resumes when the cluster (or the disk) is back.
            down = self._machine_down
            down.failed(exc, f"pairing {va['run_name']} vs {vb['run_name']} waits, and the pairings after it: {exc}")
            time.sleep(down.wait())
            return "", "running"
        except Exception as exc:  # a bot that no longer loads...: recorded, never fatal
            log.error("pairing %s vs %s: %s", va["run_name"], vb["run_name"], exc)
            return self._public(str(exc), va, vb), "cancelled"
        self._machine_down.ok()
        text = res.status
        if res.stopped_early:
            text = f"SPRT: {res.stopped_early}"
        elif res.failed_chunks:
            text = f"incomplete: {res.failed_chunks[0]}"
        return self._public(text, va, vb), "done"

    def _public(self, text: str, *versions: dict[str, Any]) -> str:
        return public_text(" ".join(text.split()), public_names(self.league, *versions))[:600]

    def stored_games(self, round_no: int, a: str, b: str) -> int:
        """Games of matchup a vs b stored in runs/rNNN (an SPRT stop counts only its chunks)."""
        from arena.run.store import RunStore, StoreError

        try:
            store = RunStore(self.league.dir / "runs" / f"r{round_no:03d}")
            index = store.index()
        except StoreError:
            return 0
        for m in index.matchups.values():
            if (m.bot_a, m.bot_b) == (a, b) and not m.superseded:
                return sum(
                    rec.games
                    for (mid, chunk), rec in index.chunks.items()
                    if mid == m.id and (m.limit is None or chunk < m.limit)
                )
        return 0

    # --- 3. extra games while idle ----------------------------------------------------
    def queue_extra(self) -> bool:
        if self.cfg.extra_rounds <= 0:
            return False
        c = self.conn
        current = rows(
            c,
            "SELECT v.id, v.run_name FROM bots b JOIN versions v ON v.id = b.current_version"
            " WHERE b.withdrawn = 0 AND v.status = 'rated'",
        )
        if len(current) < 2:
            return False
        ratings = League.ratings(c)

        def width(v: dict[str, Any]) -> float:
            r = ratings.get(v["run_name"], {})
            lo, hi = r.get("rating_low"), r.get("rating_high")
            return math.inf if lo is None or hi is None else float(hi) - float(lo)

        ids = [v["id"] for v in current]
        met: dict[tuple[int, int], tuple[int, int]] = {}  # unordered pair -> (games, last round)
        marks = ",".join("?" * len(ids))
        for r in rows(
            c,
            f"SELECT a, b, MAX(round) AS last, SUM(games) AS games FROM pairings WHERE a IN ({marks})"
            f" AND b IN ({marks}) AND state != 'cancelled' GROUP BY a, b",
            (*ids, *ids),
        ):
            key = (min(r["a"], r["b"]), max(r["a"], r["b"]))
            g, last = met.get(key, (0, -1))
            met[key] = (g + int(r["games"] or 0), max(last, int(r["last"])))
        for v in sorted(current, key=width, reverse=True):
            options = []
            for o in current:
                if o["id"] == v["id"]:
                    continue
                key = (min(v["id"], o["id"]), max(v["id"], o["id"]))
                games, last = met.get(key, (0, -1))
                if last + 1 <= self.cfg.extra_rounds:
                    options.append((games, o["id"], last + 1))
            if options:
                games, other, round_no = min(options)
                with transaction(c):
                    queue_pairing(c, v["id"], other, round_no, 0, self.cfg.games_per_pairing)
                return True
        return False

    # --- 4. ratings -------------------------------------------------------------------
    def refresh_ratings(self) -> None:
        """Ratings and bot pages from every run folder (one chunk at a time), into the database."""
        try:
            ratings, pages = compute_stats(self.league.dir / "runs")
        except Exception as exc:  # a statistics failure must not stop the games
            log.error("ratings: %s", exc)
            return
        with transaction(self.conn):
            set_state(self.conn, "ratings", json.dumps(ratings))
            for run_name, page in pages.items():
                set_state(self.conn, f"bot:{run_name}", json.dumps(page))
            set_state(self.conn, "ratings_updated", now_iso())


class _Outage:
    """What the work needs failing (by default the league database): one log line when it starts and one
    when it ends, and a wait that grows from 1 s to 60 s between tries (no traceback, no restart loop).
    ``back`` is what the closing line says."""

    def __init__(self, who: str, back: str = "the league database reads again"):
        self.who = who
        self.back = back
        self.since: float | None = None
        self.tries = 0

    def failed(self, exc: BaseException, said: str | None = None) -> None:
        """One try failed; the first says ``said`` (by default, the database's words for ``exc``)."""
        if self.since is None:
            self.since = time.monotonic()
            if said is None:
                said = f"the league database cannot be used ({' '.join(str(exc).split())[:200]}); " + (
                    "waiting: another connection holds it locked"
                    if busy(exc)
                    else "waiting for it to be restored from a backup (arena league restore)"
                )
            log.error("%s: %s", self.who, said)
        self.tries += 1

    def wait(self) -> float:
        return float(min(60, 2 ** min(self.tries, 6) / 2))

    def ok(self) -> None:
        if self.since is not None:
            log.warning("%s: %s after %.0f s", self.who, self.back, time.monotonic() - self.since)
        self.since, self.tries = None, 0


def _num(x: Any) -> float | None:
    try:
        f = float(x)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(f) or math.isinf(f) else round(f, 4)


def compute_stats(runs_dir: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """(ratings by run name, page data by run name) from every run folder under ``runs_dir``."""
    from arena.analysis.stats import bot_stats, bradley_terry, outcome_mix, pair_stats
    from arena.analysis.summary import GAME_COLUMNS, HAND_COLUMNS, Summary
    from arena.run.store import RunStore, StoreError

    total = Summary()
    recent: dict[str, deque] = defaultdict(lambda: deque(maxlen=RECENT_GAMES))
    for folder in sorted(runs_dir.glob("r[0-9][0-9][0-9]")):
        try:
            store = RunStore(folder)
        except StoreError:
            continue
        hands = store.has_hands()
        cols = list(dict.fromkeys([*GAME_COLUMNS, "bot0"]))
        for ch in store.chunks(games_columns=cols, hands=list(HAND_COLUMNS) if hands else False):
            g = ch.games.copy()
            g["matchup"] = g["matchup"].astype(str) + f" #{folder.name}"  # each round's pairs are its own
            total.update(Summary.of_chunk(g, ch.hands))
            for row in g.tail(RECENT_GAMES).itertuples():
                for me, opp in ((row.bot_a, row.bot_b), (row.bot_b, row.bot_a)):
                    mine, theirs = (row.score0, row.score1) if row.bot0 == me else (row.score1, row.score0)
                    won = (
                        "draw"
                        if not isinstance(row.winner, str) or not row.winner
                        else ("won" if row.winner == me else "lost")
                    )
                    recent[me].append(
                        {
                            "run": folder.name,
                            "game": int(row.game_id),
                            "opponent": opp,
                            "result": won,
                            "score": f"{int(mine)}-{int(theirs)}",
                            "error": public_text(str(row.error or ""))[:200],
                        }
                    )
    if total.n_games == 0:
        return {}, {}
    bt = bradley_terry(total).set_index("bot")
    bs = bot_stats(total).set_index("bot")
    ratings: dict[str, Any] = {}
    for bot in bs.index:
        r = bt.loc[bot] if bot in bt.index else None
        ratings[bot] = {
            "rating": None if r is None else _num(r["elo"]),
            "rating_low": None if r is None else _num(r["elo_ci_low"]),
            "rating_high": None if r is None else _num(r["elo_ci_high"]),
            "games": int(bs.loc[bot, "games"]),
            "win_rate": _num(bs.loc[bot, "win_rate"]),
            "forfeits": int(bs.loc[bot, "forfeits"]),
        }
    ps = pair_stats(total)
    h2h: dict[str, dict[str, dict[str, float]]] = defaultdict(lambda: defaultdict(lambda: defaultdict(float)))
    for r in ps.itertuples():
        for me, opp, w, lost in ((r.bot_a, r.bot_b, r.wins_a, r.wins_b), (r.bot_b, r.bot_a, r.wins_b, r.wins_a)):
            d = h2h[me][opp]
            d["games"] += r.games
            d["wins"] += w
            d["losses"] += lost
            d["draws"] += r.draws
    mix = outcome_mix(total).set_index("bot") if total.has_hands else None
    pages: dict[str, Any] = {}
    for bot in bs.index:
        rows_h = []
        for opp, d in sorted(h2h[bot].items()):
            g = d["games"]
            rows_h.append(
                {
                    "opponent": opp,
                    "games": int(g),
                    "wins": int(d["wins"]),
                    "losses": int(d["losses"]),
                    "draws": int(d["draws"]),
                    "win_rate": _num((d["wins"] + 0.5 * d["draws"]) / g) if g else None,
                }
            )
        outcomes = {}
        if mix is not None and bot in mix.index:
            outcomes = {k: _num(v) for k, v in mix.loc[bot].items() if k != "hands"}
        scores: list[dict[str, Any]] = []
        try:
            hist = total.hist(bot, "margin")
            lo, counts = int(hist.lo), [int(x) for x in hist.counts]
            width = 25
            bins: dict[int, int] = defaultdict(int)
            for i, n in enumerate(counts):
                if n:
                    bins[math.floor((lo + i) / width) * width] += n
            scores = [{"from": k, "to": k + width - 1, "games": bins[k]} for k in sorted(bins)]
        except (KeyError, AttributeError):
            scores = []
        pages[bot] = {
            "rating": ratings[bot],
            "head_to_head": rows_h,
            "outcomes": outcomes,
            "margins": scores,
            "recent": list(recent[bot])[::-1],
        }
    return ratings, pages


#: How much lower the games' CPU priority is than the web server's (``nice`` steps).
GAMES_NICE = 10


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m arena.league.scheduler")
    ap.add_argument("folder")
    ap.add_argument("--workers", type=int, default=0)
    ap.add_argument("--scheduler", default="")
    ap.add_argument("--nice", type=int, default=GAMES_NICE, help="niceness of the games and checks (0: none)")
    args = ap.parse_args(argv)
    if args.nice > 0 and hasattr(os, "nice"):
        # The site answers people; the games can wait.  Every pairing's workers and every check
        # are children of this process and inherit its niceness, so a board request never queues
        # behind a core's worth of games (the server itself stays at its own priority).
        os.nice(args.nice)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)
    logging.getLogger("arena").setLevel(logging.INFO)
    from arena.league.db import LeagueError

    try:
        league = League(args.folder)
    except LeagueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    down, parent = _Outage("league scheduler"), os.getppid()
    while True:
        try:
            sched = Scheduler(league, workers=args.workers, scheduler=args.scheduler)
            break
        except sqlite3.DatabaseError as exc:  # damaged after serve checked it: wait for a restore, quietly
            down.failed(exc)
            time.sleep(down.wait())
            if os.getppid() != parent:
                return 1
    sched.run_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main())
