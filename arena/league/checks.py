"""The checks of submitted bots: beside the games, each in a process of its own, fairly shared among users.

A check (:func:`arena.loading.check.check_bot`: handshake, each decision,
``check_games`` games against simple, in the sandbox) runs in a child process
(``python -m arena.league.checks DIR SPEC``), never in the scheduler's loop:

* it has a wall-clock limit of its own, ``check_seconds``: past it, the
  child's process group is killed (the bot dies with it: ``PR_SET_PDEATHSIG``)
  and the version is refused with that reason;
* at most ``check_slots`` run at once, and at most one per user, so one
  user's bots can hold at most one slot for at most ``check_seconds`` at a
  time, whatever they do and however many they queue;
* the next check goes to the user who waited longest since their last one
  started (round-robin), then to the oldest submission;
* a version of a revoked user's bot is withdrawn, never checked, and one
  whose owner is revoked during its check does not enter the field.

:class:`Checker` is polled by a thread of the scheduler process
(:meth:`arena.league.scheduler.Scheduler.run_forever`), with its own database
connection, so checks start and finish while a pairing plays.  A passed check
makes the version its bot's current one and queues its pairings
(:func:`enter_version`); a failed one refuses it with the failing lines as the
reason, shown without any server path (:func:`arena.league.core.public_text`).
"""

from __future__ import annotations

import json
import logging
import os
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from arena.league.core import NEW_BOT_PRIORITY, League, owner_revoked, public_text, queue_pairing, withdraw_revoked
from arena.league.db import rows, transaction
from arena.settings.botref import BotRef

log = logging.getLogger("arena.league")

#: The last line a check child prints: ``RESULT {"fails": [...]}``.
RESULT = "RESULT "


def version_spec(league: League, v: dict[str, Any] | sqlite3.Row) -> str:
    """The bot spec a version plays under: its file in the sandbox, its command, its EAAI-kit player's class
    folder and class (walled, through the adapter), or the built-in's name."""
    if v["kind"] == "file":
        return BotRef("sandbox", str(league.dir / v["spec"])).spec()
    if v["kind"] == "cmd":
        return BotRef("command", v["spec"]).spec()
    if v["kind"] == "eaai":
        folder, _, cls = str(v["spec"]).rpartition(":")
        return BotRef("eaai", f"{league.dir / folder}:{cls}").spec()
    if v["kind"] == "policy":
        # MLP weights (data, read strictly) play compiled in the arena's process; code plays walled.
        walled = not str(v["spec"]).endswith(".npz")
        return BotRef("sandbox" if walled else "policy", str(league.dir / v["spec"])).spec()
    return str(v["spec"])


def public_names(league: League, *versions: dict[str, Any] | sqlite3.Row) -> dict[str, str]:
    """The server paths a version's messages may hold, and the names shown for them instead."""
    paths = {}
    for v in versions:
        if v["kind"] in ("file", "policy"):
            paths[str(league.dir / v["spec"])] = v["run_name"] + Path(v["spec"]).suffix
        elif v["kind"] == "eaai":
            paths[str(league.dir / str(v["spec"]).rpartition(":")[0])] = v["run_name"]
    paths[str(league.dir)] = "the league folder"
    return paths


def use_eaai_kit(league: League) -> None:
    """Name the league's EAAI kit (``eaai_kit``, relative to the league folder) to this process and the
    checks and games it starts, as ``--eaai-kit`` does for a run."""
    if league.config.eaai_kit:
        from arena.external.eaai import KIT_ENV

        os.environ[KIT_ENV] = str((league.dir / league.config.eaai_kit).resolve())


def enter_version(conn: sqlite3.Connection, v: dict[str, Any], games_per_pairing: int) -> None:
    """Make a checked version its bot's current one and queue it against the field (in a transaction)."""
    bot = conn.execute("SELECT * FROM bots WHERE id = ?", (v["bot_id"],)).fetchone()
    old = bot["current_version"]
    if old is not None and old != v["id"]:
        conn.execute("UPDATE versions SET status = 'retired' WHERE id = ? AND status IN ('playing', 'rated')", (old,))
        conn.execute("UPDATE pairings SET state = 'cancelled' WHERE state = 'queued' AND (a = ? OR b = ?)", (old, old))
    conn.execute("UPDATE bots SET current_version = ? WHERE id = ?", (v["id"], bot["id"]))
    field = conn.execute(
        "SELECT v.id FROM bots b JOIN versions v ON v.id = b.current_version"
        " WHERE b.withdrawn = 0 AND v.status IN ('playing', 'rated') AND b.id != ?",
        (bot["id"],),
    ).fetchall()
    conn.execute("UPDATE versions SET status = ? WHERE id = ?", ("playing" if field else "rated", v["id"]))
    for r in field:
        queue_pairing(conn, v["id"], r["id"], 0, NEW_BOT_PRIORITY, games_per_pairing)


@dataclass
class _Running:
    version: dict[str, Any]
    proc: subprocess.Popen
    out: IO[bytes]
    started: float


class Checker:
    """The checks in flight; :meth:`poll` reaps, times out and starts them (call it from one thread)."""

    def __init__(self, league: League):
        self.league = league
        self.cfg = league.config
        self.db = league.reconnecting()
        self.running: dict[int, _Running] = {}
        #: user id (0: no submitter) -> when their last check started (monotonic): the round-robin's order.
        self.last_start: dict[int, float] = {}

    def poll(self) -> None:
        conn = self.db.get()
        for vid, r in list(self.running.items()):
            code = r.proc.poll()
            if code is None and time.monotonic() - r.started <= self.cfg.check_seconds:
                continue
            if code is None:
                _kill(r.proc)
                fails = [
                    f"the check took longer than {self.cfg.check_seconds} s (the league's limit for a check); "
                    "it was stopped"
                ]
            else:
                fails = _fails_of(r.out, code)
            r.out.close()
            del self.running[vid]
            self._finish(conn, r.version, fails)
        self._start(conn)

    def _start(self, conn: sqlite3.Connection) -> None:
        free = self.cfg.check_slots - len(self.running)
        if free <= 0:
            return
        busy = {int(r.version["submitted_by"] or 0) for r in self.running.values()}
        withdraw_revoked(conn)  # a revoked user's version is never checked, even one that reached the database
        waiting = [
            v
            for v in rows(conn, "SELECT * FROM versions WHERE status = 'checking' ORDER BY id")
            if v["id"] not in self.running
        ]
        # Round-robin over users: whoever started a check least recently goes first; one check per user.
        waiting.sort(key=lambda v: (self.last_start.get(int(v["submitted_by"] or 0), 0.0), v["id"]))
        for v in waiting:
            who = int(v["submitted_by"] or 0)
            if free <= 0:
                break
            if who in busy:
                continue
            self._launch(v)
            busy.add(who)
            self.last_start[who] = time.monotonic()
            free -= 1

    def _launch(self, v: dict[str, Any]) -> None:
        log.info("checking %s", v["run_name"])
        out = tempfile.TemporaryFile()
        proc = subprocess.Popen(
            [sys.executable, "-m", "arena.league.checks", str(self.league.dir), version_spec(self.league, v)],
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group: a timeout kills the check and all it started
            preexec_fn=_die_with_parent if sys.platform == "linux" else None,
        )
        self.running[v["id"]] = _Running(v, proc, out, time.monotonic())

    def _finish(self, conn: sqlite3.Connection, v: dict[str, Any], fails: list[str]) -> None:
        paths = public_names(self.league, v)
        reason = public_text(" | ".join(" ".join(f.split()) for f in fails), paths)[:600]
        with transaction(conn):
            cur = conn.execute("SELECT status FROM versions WHERE id = ?", (v["id"],)).fetchone()
            if cur is None or cur["status"] != "checking":  # withdrawn meanwhile
                return
            if owner_revoked(conn, v["bot_id"]):  # revoked meanwhile: it does not enter the field
                conn.execute("UPDATE versions SET status = 'withdrawn' WHERE id = ?", (v["id"],))
                return
            if reason:
                conn.execute("UPDATE versions SET status = 'refused', reason = ? WHERE id = ?", (reason, v["id"]))
                log.info("refused %s: %s", v["run_name"], reason)
                return
            enter_version(conn, v, self.cfg.games_per_pairing)
        log.info("%s passed its check", v["run_name"])

    def busy(self) -> bool:
        return bool(self.running)

    def stop(self) -> None:
        for r in self.running.values():
            _kill(r.proc)
            r.out.close()
        self.running.clear()
        self.db.drop()


def _die_with_parent() -> None:  # pragma: no cover - runs in the child between fork and exec
    """Linux: the check gets SIGKILL when the thread that started it ends (the scheduler stopped or killed)."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def _kill(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        pass


def _fails_of(out: IO[bytes], code: int) -> list[str]:
    """The FAIL lines a check child reported, or why it reported none."""
    out.seek(0)
    text = out.read()[-65536:].decode("utf-8", "replace")
    for line in reversed(text.splitlines()):
        if line.startswith(RESULT):
            try:
                fails = json.loads(line[len(RESULT) :])["fails"]
            except (ValueError, KeyError, TypeError):
                break
            if isinstance(fails, list) and all(isinstance(f, str) for f in fails):
                return fails
            break
    last = next((ln for ln in reversed(text.splitlines()) if ln.strip()), "no output")
    return [f"the check failed (exit code {code}): {last.strip()[:300]}"]


def check_seed() -> int:
    """The first seed of a submission's check games: drawn, so that no bot can tell them from rated ones."""
    import secrets

    return secrets.randbits(48)


def check_in_process(spec: str, games: int, first_seed: int = 0) -> list[str]:
    """The check of a version that plays in the arena's process (MLP weights): it loads (every array
    checked again: stored bytes are not trusted) and plays ``games`` games against simple, each seat in
    turn, without a forfeit, on seeds from ``first_seed``.  The FAIL lines, as
    :func:`arena.loading.check.check_bot` gives them."""
    import numpy as np

    from arena.botkit.bot import BotError
    from arena.engine.play import play_batch
    from arena.engine.rules_array import rules_array
    from arena.loading.load import load_bot
    from arena.settings.rules import Rules

    try:
        bot = load_bot(spec)
    except BotError as exc:
        return [f"load: {exc}"]
    simple = load_bot("simple")
    seeds = np.arange(first_seed, first_seed + games // 2 + 1, dtype=np.int64)
    for pair in ((bot, simple), (simple, bot)):
        rec = play_batch(*pair, rules_array(Rules()), seeds)
        if rec.errors:  # one message per forfeited game
            return [f"games: {rec.errors[0]}"]
    return []


def main(argv: list[str] | None = None) -> int:
    """``python -m arena.league.checks DIR SPEC``: check one bot under the league's limits; the last line is
    ``RESULT {"fails": [...]}``."""
    folder, spec = (argv if argv is not None else sys.argv[1:])[:2]
    league = League(folder)
    cfg = league.config
    use_eaai_kit(league)
    from arena.external.limits import Limits
    from arena.loading.check import check_bot

    # The limits the bot will play under (the check sets the start time of its kind).
    limits = Limits(**cfg.run_config(["random", "simple"], round_no=0, results_dir=".").bot_limits())
    # Drawn seeds: on fixed ones a bot could know its check games (by its own random keys, as it could
    # guess a public seed) and behave there alone.
    first = check_seed()
    try:
        if BotRef.parse(spec).in_process:
            fails = check_in_process(spec, cfg.check_games, first)
        else:
            report = check_bot(spec, games=cfg.check_games, limits=limits, echo=None, first_seed=first)
            fails = [f"{what}: {detail}" for status, what, detail in report.lines if status == "FAIL"]
    except Exception as exc:  # a check that breaks refuses the bot
        fails = [f"the check failed: {type(exc).__name__}: {exc}"]
    print(RESULT + json.dumps({"fails": fails}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
