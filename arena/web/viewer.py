"""The recorded games the viewer shows: every step, replayed exactly and checked against the store.

:func:`recorded_game` turns one stored game into the viewer's JSON.  :class:`Games`
is where the web app finds a game per request (``/api/game?run=R&game=G``): the
one run folder of ``arena view RUN``, or a league's ``runs/rNNN`` folders.  A
request names a run only by a pattern-checked name, never by a path.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any

from arena.run.replay import check_lines, stored_game
from arena.run.store import StoreError
from arena.web.decisions import viewer_data
from arena.web.table import game_steps

#: A league's run folder names: ``r000``, ``r001``, ... (``r1000`` once a league has played a thousand rounds).
LEAGUE_RUN_RE = re.compile(r"r[0-9]{3,6}")  # fullmatch: "$" would also pass "r000\n"
GAME_RE = re.compile(r"[0-9]{1,12}")
#: Games kept replayed in memory (each a few hundred kB of JSON at most).
CACHE = 8
#: Games replayed at once for one visitor (:func:`arena.web.server.visitor`), and for all: a replay takes a
#: worker thread of the server for tens of milliseconds, and the threads are shared by every page.
REPLAYS_PER_VISITOR = 2
REPLAYS = 4


def recorded_game(run_dir: str | Path, game_id: int) -> dict[str, Any]:
    """A stored game as the viewer's JSON: names, steps, and whether the replay matches the stored rows."""
    from arena.analysis.luck import viewer_data as luck_viewer_data

    rec, rules, names, log, how = stored_game(Path(run_dir), game_id)
    ok, check = check_lines(rec, rules, log)
    g = rec.game
    return {
        "run": Path(run_dir).name,
        "game_id": int(game_id),
        "names": list(names),
        "seed": int(g["seed"]),
        "score": [int(g["score0"]), int(g["score1"])],
        "winner": str(g["winner"]),
        "error": str(g.get("error", "") or ""),
        "how": how,
        "ok": ok,
        "check": check,
        "steps": game_steps(int(g["seed"]), rules, log, names),
        # arena analyze's grades of this game, per step, and its equity curve (None: not analysed)
        "analysis": viewer_data(run_dir, game_id),
        # the luck of each stock draw, per step (arena luck's value function), marking very (un)lucky draws
        "luck": luck_viewer_data(run_dir, game_id),
    }


class GameNotFound(ValueError):
    """A request for a game the server cannot show; ``status`` is the HTTP code, the message one line."""

    def __init__(self, message: str, status: int = 404):
        super().__init__(message)
        self.status = status


class Games:
    """The games a viewer may show: one run folder (``run_dir``) or a league's runs (``runs_root``).

    ``default`` is the game shown when a request names none (``arena view RUN
    --game ID``).  Replayed games are kept in a small LRU cache, keyed by run
    and game id.
    """

    def __init__(
        self,
        *,
        run_dir: str | Path | None = None,
        runs_root: str | Path | None = None,
        default: int | None = None,
        cache: int = CACHE,
    ):
        if (run_dir is None) == (runs_root is None):
            raise ValueError("Games needs exactly one of run_dir and runs_root")
        self.run_dir = None if run_dir is None else Path(run_dir)
        self.runs_root = None if runs_root is None else Path(runs_root)
        self.default = default
        self.cache: OrderedDict[tuple[str, int], dict[str, Any]] = OrderedDict()
        self.size = cache
        self.lock = threading.Lock()
        self.replaying: dict[str, int] = {}  # visitor -> games being replayed for it now

    def folder(self, run: str | None) -> Path:
        """The run folder a request's ``run`` names (checked by pattern: no path from a request is used)."""
        if self.runs_root is not None:
            if run is None:
                raise GameNotFound("name the game: /view?run=rNNN&game=ID", 400)
            if not LEAGUE_RUN_RE.fullmatch(run):
                raise GameNotFound(f"run {run[:40]!r} is not a league run name (r000, r001, ...)", 400)
            path = self.runs_root / run
            if not path.is_dir():
                raise GameNotFound(f"no run {run} in this league")
            return path
        assert self.run_dir is not None
        if run is not None and run != self.run_dir.name:
            raise GameNotFound(f"this viewer shows run {self.run_dir.name} only, not {run[:40]!r}")
        return self.run_dir

    def get(self, run: str | None, game: str | None, visitor: str = "") -> dict[str, Any]:
        """The viewer's JSON of game ``game`` (digits) of run ``run``; :class:`GameNotFound` otherwise.

        A game not in the cache is replayed for at most :data:`REPLAYS_PER_VISITOR` requests of one
        ``visitor`` at once, and :data:`REPLAYS` in all; more is a 429 (a 503 for the server's limit).
        A page asks for one game at a time; a loop over game ids, unbounded, held every worker thread
        of a league's server and left its pages waiting.
        """
        folder = self.folder(run)
        if game is None:
            if self.default is None:
                raise GameNotFound("name the game: ?game=ID", 400)
            game_id = self.default
        elif GAME_RE.fullmatch(game):
            game_id = int(game)
        else:
            raise GameNotFound(f"game {game[:40]!r} is not a game id (a whole number)", 400)
        key = (folder.name, game_id)
        with self.lock:
            hit = self.cache.get(key)
            if hit is not None:
                self.cache.move_to_end(key)
                return hit
            mine = self.replaying.get(visitor, 0)
            if mine >= REPLAYS_PER_VISITOR:
                raise GameNotFound(f"already replaying {mine} games for this address: wait for one to finish", 429)
            if sum(self.replaying.values()) >= REPLAYS:
                raise GameNotFound("the server is replaying as many games as it can: try again in a moment", 503)
            self.replaying[visitor] = mine + 1
        try:
            data = recorded_game(folder, game_id)
        except StoreError as exc:
            # the store names folders by their full path: a web page shows the run's name only
            raise GameNotFound(" ".join(str(exc).replace(str(folder), folder.name).split())) from None
        else:
            if self.runs_root is not None:
                # A league's games are public: a forfeit's reason (a bot's traceback, its own words) may
                # name the server's paths; the bot pages show it cleaned, and so does the viewer.
                from arena.league.core import public_text

                data["error"] = public_text(data["error"])
        finally:
            with self.lock:
                left = self.replaying.pop(visitor) - 1
                if left:
                    self.replaying[visitor] = left
        with self.lock:
            self.cache[key] = data
            while len(self.cache) > self.size:
                self.cache.popitem(last=False)
        return data
