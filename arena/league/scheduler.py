"""The league's background process: check submissions, play pairings, rate.

One loop, one thing at a time, every step recorded in the database before
and after:

1. a version in ``checking`` gets :func:`arena.loading.check.check_bot`
   (handshake, each decision, ``check_games`` games against simple) in the
   sandbox; a FAIL refuses it with the failing lines as the reason; a pass
   makes it the bot's current version (the old one is ``retired``, its
   games kept) and queues its pairings against the field;
2. the pairing in ``running`` (left by a crash) is resumed, else the queued
   one of highest priority (new bots 100, house field 50, extra games 0) is
   played by :func:`arena.run.run_tournament` on duplicate deals into the
   run folder ``runs/rNNN`` of its round; the run store skips every chunk
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
dies with the server.
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import os
import sqlite3
import sys
import time
from collections import defaultdict, deque
from pathlib import Path
from typing import Any

from arena.league.core import NEW_BOT_PRIORITY, League, _queue, now_iso
from arena.league.db import rows, set_state, transaction
from arena.settings.botref import BotRef

log = logging.getLogger("arena.league")

RECENT_GAMES = 12


class Scheduler:
    def __init__(self, league: League, workers: int = 0, scheduler: str = ""):
        self.league = league
        self.cfg = league.config
        self.workers = workers
        self.scheduler = scheduler
        self.conn = league.db()

    # --- the loop ---------------------------------------------------------------------
    def run_forever(self, idle_sleep: float = 1.0) -> None:
        parent = os.getppid()
        self.refresh_ratings()
        while True:
            if os.getppid() != parent:  # the server died: stop (the next server resumes our work)
                log.warning("league scheduler: the server is gone; stopping")
                return
            if not self.step():
                time.sleep(idle_sleep)

    def step(self) -> bool:
        """Do the most urgent piece of work; False when there was none."""
        return self.check_next() or self.play_next() or self.queue_extra()

    # --- 1. checks --------------------------------------------------------------------
    def _spec(self, v: dict[str, Any] | sqlite3.Row) -> str:
        if v["kind"] == "file":
            return BotRef("sandbox", str(self.league.dir / v["spec"])).spec()
        if v["kind"] == "cmd":
            return BotRef("command", v["spec"]).spec()
        return v["spec"]

    def _variant(self, v: dict[str, Any]) -> dict[str, Any]:
        if v["kind"] == "cmd":
            import shlex

            return {"command": shlex.split(v["spec"])}
        return {"bot": self._spec(v)}

    def check_next(self) -> bool:
        found = rows(self.conn, "SELECT * FROM versions WHERE status = 'checking' ORDER BY id LIMIT 1")
        if not found:
            return False
        v = found[0]
        from arena.loading.check import check_bot

        log.info("checking %s", v["run_name"])
        from arena.external.limits import Limits

        # The limits the bot will play under (the check sets the start time of its kind).
        limits = Limits(**self.cfg.run_config(["random", "simple"], round_no=0, results_dir=".").bot_limits())
        try:
            report = check_bot(self._spec(v), games=self.cfg.check_games, limits=limits, echo=None)
            fails = [f"{what}: {detail}" for status, what, detail in report.lines if status == "FAIL"]
        except Exception as exc:  # a check that breaks refuses the bot; it must not stop the league
            fails = [f"the check failed: {type(exc).__name__}: {exc}"]
        reason = " | ".join(" ".join(f.split()) for f in fails)[:600]
        with transaction(self.conn):
            cur = self.conn.execute("SELECT status FROM versions WHERE id = ?", (v["id"],)).fetchone()
            if cur is None or cur["status"] != "checking":  # withdrawn meanwhile
                return True
            if reason:
                self.conn.execute("UPDATE versions SET status = 'refused', reason = ? WHERE id = ?", (reason, v["id"]))
                log.info("refused %s: %s", v["run_name"], reason)
                return True
            self._enter(v)
        log.info("%s passed its check", v["run_name"])
        return True

    def _enter(self, v: dict[str, Any]) -> None:
        """Make a checked version its bot's current one and queue it against the field (in a transaction)."""
        c = self.conn
        bot = c.execute("SELECT * FROM bots WHERE id = ?", (v["bot_id"],)).fetchone()
        old = bot["current_version"]
        if old is not None and old != v["id"]:
            c.execute("UPDATE versions SET status = 'retired' WHERE id = ? AND status IN ('playing', 'rated')", (old,))
            c.execute("UPDATE pairings SET state = 'cancelled' WHERE state = 'queued' AND (a = ? OR b = ?)", (old, old))
        c.execute("UPDATE bots SET current_version = ? WHERE id = ?", (v["id"], bot["id"]))
        field = c.execute(
            "SELECT v.id FROM bots b JOIN versions v ON v.id = b.current_version"
            " WHERE b.withdrawn = 0 AND v.status IN ('playing', 'rated') AND b.id != ?",
            (bot["id"],),
        ).fetchall()
        c.execute("UPDATE versions SET status = ? WHERE id = ?", ("playing" if field else "rated", v["id"]))
        for r in field:
            _queue(c, v["id"], r["id"], 0, NEW_BOT_PRIORITY, self.cfg.games_per_pairing)

    # --- 2. pairings ------------------------------------------------------------------
    def play_next(self) -> bool:
        c = self.conn
        with transaction(c):
            # A queued pairing whose bot left the league is cancelled, not played.
            c.execute(
                "UPDATE pairings SET state = 'cancelled', result = 'a bot left the league' WHERE state = 'queued'"
                " AND (a IN (SELECT id FROM versions WHERE status IN ('withdrawn', 'retired', 'refused'))"
                " OR b IN (SELECT id FROM versions WHERE status IN ('withdrawn', 'retired', 'refused')))"
            )
            found = rows(
                c,
                "SELECT * FROM pairings WHERE state IN ('running', 'queued')"
                " ORDER BY state = 'running' DESC, priority DESC, id LIMIT 1",
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
        from arena.run.runner import run_tournament
        from arena.run.store import StoreBusy

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
        except Exception as exc:  # a bot that no longer loads...: recorded, never fatal
            log.error("pairing %s vs %s: %s", va["run_name"], vb["run_name"], exc)
            return " ".join(str(exc).split())[:600], "cancelled"
        text = res.status
        if res.stopped_early:
            text = f"SPRT: {res.stopped_early}"
        elif res.failed_chunks:
            text = f"incomplete: {res.failed_chunks[0]}"
        return " ".join(text.split())[:600], "done"

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
                    _queue(c, v["id"], other, round_no, 0, self.cfg.games_per_pairing)
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
                            "error": str(row.error or "")[:200],
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


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m arena.league.scheduler")
    ap.add_argument("folder")
    ap.add_argument("--workers", type=int, default=0)
    ap.add_argument("--scheduler", default="")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)
    logging.getLogger("arena").setLevel(logging.INFO)
    from arena.league.db import LeagueError

    try:
        league = League(args.folder)
    except LeagueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    Scheduler(league, workers=args.workers, scheduler=args.scheduler).run_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main())
