"""``league.toml``: what a league plays and what it allows.

Every key has a default, so ``arena league init DIR`` alone makes a working
league.  A bad key or value is one :class:`arena.league.db.LeagueError` line
naming it and what is allowed.
"""

from __future__ import annotations

import dataclasses
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arena.league.db import LeagueError
from arena.settings.config import did_you_mean
from arena.settings.rules import SETTINGS_ENCODING, TOML_ERRORS, toml_problem

CONFIG_NAME = "league.toml"

#: key -> (lowest, highest) for the integer settings.
_INTS = {
    "games_per_pairing": (2, 1_000_000),
    "chunk_size": (2, 100_000),
    "check_games": (0, 200),
    "extra_rounds": (0, 100),
    "max_file_bytes": (100, 5_000_000),
    "max_archive_bytes": (1000, 100_000_000),
    "submissions_per_hour": (1, 10_000),
    "active_bots_per_user": (1, 1000),
    "bytes_per_user": (1000, 10**10),
    "check_seconds": (5, 3600),
    "check_slots": (1, 64),
    "busy_seconds": (1, 600),
}


@dataclass(frozen=True)
class LeagueConfig:
    """A league's settings (the ``league.toml`` of its folder)."""

    name: str = "league"
    #: A rules preset or table, as in a tournament config.
    rules: str | Mapping[str, Any] = "standard"
    #: Games of a pairing's first meeting (with ``duplicate``: even, seat-swapped pairs).
    games_per_pairing: int = 200
    #: Games per chunk (the unit stored, shown as progress and resumed after a crash).
    chunk_size: int = 100
    #: Duplicate deals: each deal played twice, seats swapped (half the noise for the same games).  Off
    #: by default: a bot can pass a note from its process of the first seating to its process of the
    #: second through how fast a shared file's pages read (the page cache keeps them), and in the second
    #: seating its opponent holds the hand it held in the first.  The wall cannot close that channel, so a
    #: league of bots its organizer does not trust deals every game afresh (docs/explanation/wall.md).
    duplicate: bool = False
    #: "secret": each round draws its own seed, kept in its run folder only.  A number makes the rounds'
    #: deals reproducible from the config (seed + round number), and so guessable: a bot that knows the code
    #: and guesses the seed rebuilds every deal from its own random generator's state.
    seed: int | str = "secret"
    #: Built-in bots that seed the field (owned by the house).
    house_bots: tuple[str, ...] = ("random", "simple", "gin-chasing")
    #: Games against simple in the conformance check of each submission.
    check_games: int = 10
    #: While idle, how many more meetings (rounds) the least certain pairings may get.
    extra_rounds: int = 2
    #: Stop a pairing once this SPRT decides ({elo0, elo1, alpha, beta}); empty = play every game.
    sprt: Mapping[str, float] = field(default_factory=dict)
    #: Limits of the bots' processes: as a tournament config's [limits] (decision_seconds, memory_mb...).
    bot_limits: Mapping[str, float] = field(default_factory=dict)
    max_file_bytes: int = 200_000
    #: Largest upload that is not Python text: a jar or zip of an EAAI-kit player, an ONNX or .npz policy.
    max_archive_bytes: int = 2_000_000
    #: The EAAI kit's jar or class folder (relative: to the league folder), for uploaded EAAI-kit players;
    #: empty: the league takes none.  The kit is not part of Gin Arena: the organizer supplies it.
    eaai_kit: str = ""
    submissions_per_hour: int = 10
    active_bots_per_user: int = 3
    #: Bytes of bot files a user may keep on the server, all versions together (organizers: no quota).
    bytes_per_user: int = 2_000_000
    #: Wall-clock seconds a submission's check may take in all (its sandbox start included, which may take
    #: 120 s on a busy machine); past them it is refused and its processes killed.
    check_seconds: int = 300
    #: Checks run at once, beside the games; at most one per user, so one user's checks never fill them all.
    check_slots: int = 2
    #: How long a write waits for the database's lock while another write holds it (another request's, an
    #: organizer's ``sqlite3`` shell in a transaction, a backup) before its request is a 503 saying the league
    #: is busy.
    busy_seconds: int = 30

    def __post_init__(self) -> None:
        for key, (lo, hi) in _INTS.items():
            v = getattr(self, key)
            if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
                raise LeagueError(f"{CONFIG_NAME}: {key} = {v!r} is not allowed (allowed: integer {lo}..{hi})")
        seed = self.seed
        if seed != "secret" and (isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= 2**62):
            raise LeagueError(
                f'{CONFIG_NAME}: seed = {seed!r} is not allowed (allowed: "secret", or an integer 0..{2**62})'
            )
        if not isinstance(self.duplicate, bool):
            raise LeagueError(f"{CONFIG_NAME}: duplicate = {self.duplicate!r} is not allowed (allowed: true or false)")
        for key in ("games_per_pairing", "chunk_size") if self.duplicate else ():
            if getattr(self, key) % 2:
                raise LeagueError(f"{CONFIG_NAME}: {key} = {getattr(self, key)} must be even (duplicate deals)")
        if not isinstance(self.name, str) or not self.name.strip() or not self.name.isprintable():
            # a line break in the name split the pages' title and every line that names the league
            raise LeagueError(
                f"{CONFIG_NAME}: name = {self.name!r} is not allowed (allowed: non-empty text on one line)"
            )
        if not isinstance(self.eaai_kit, str) or "\n" in self.eaai_kit:
            raise LeagueError(f"{CONFIG_NAME}: eaai_kit = {self.eaai_kit!r} is not allowed (allowed: a path)")
        hb = self.house_bots
        if isinstance(hb, str) or not isinstance(hb, (list, tuple)) or not all(isinstance(b, str) and b for b in hb):
            raise LeagueError(f"{CONFIG_NAME}: house_bots = {hb!r} is not allowed (allowed: a list of built-in bots)")
        object.__setattr__(self, "house_bots", tuple(hb))
        if len(set(self.house_bots)) != len(self.house_bots):
            raise LeagueError(f"{CONFIG_NAME}: house_bots lists a bot twice")
        from arena.settings.config import ConfigError

        try:  # the rules, the SPRT and the bot limits, checked as a tournament config checks them
            self.run_config(["random", "simple"], round_no=0, results_dir=".")
        except ConfigError as exc:
            # The tournament config calls the bot limits "limits"; this file calls them bot_limits.
            text = re.sub(r"^config: limits\b", "config: bot_limits", str(exc))
            raise LeagueError(text.replace("config:", f"{CONFIG_NAME}:", 1)) from None

    def run_config(
        self, bots: list[str], *, round_no: int, results_dir: str, variants=None, workers: int = 0, scheduler: str = ""
    ):
        """The tournament config of one pairing (``bots``: two specs) in run folder ``runs/rNNN``."""
        from arena.settings.config import TournamentConfig

        return TournamentConfig(
            name=f"r{round_no:03d}",
            format="round-robin",
            bots=tuple(bots),
            variants=dict(variants or {}),
            games_per_pair=self.games_per_pairing,
            duplicate=self.duplicate,
            # Each pairing its own deals: a round's folder is shared by every pairing of that meeting, and
            # its games are on the viewer as they finish, so shared deals would show a bot entered later
            # its opponent's cards and the stock.
            shared_deals=False,
            seed="secret" if self.seed == "secret" else int(self.seed) + round_no,
            workers=workers,
            chunk_size=min(self.chunk_size, self.games_per_pairing),
            rules=self.rules,
            record_hands=True,
            record_log=True,
            results_dir=results_dir,
            sprt=dict(self.sprt),
            scheduler=scheduler,
            limits=dict(self.bot_limits),
        )

    def to_toml(self) -> str:
        import tomli_w

        d = dataclasses.asdict(self)
        d["house_bots"] = list(self.house_bots)
        d["sprt"] = dict(self.sprt)
        d["bot_limits"] = dict(self.bot_limits)
        if isinstance(self.rules, Mapping):
            d["rules"] = dict(self.rules)
        return tomli_w.dumps(d)


KEYS = tuple(f.name for f in dataclasses.fields(LeagueConfig))


def config_from_dict(d: Mapping[str, Any], source: str = CONFIG_NAME) -> LeagueConfig:
    for k in d:
        if k not in KEYS:
            raise LeagueError(f"{source}: unknown key '{k}' ({did_you_mean(k, KEYS)}keys: {', '.join(KEYS)})")
    for k in ("sprt", "bot_limits"):
        if k in d and not isinstance(d[k], Mapping):
            raise LeagueError(f"{source}: {k} must be a table")
    try:
        return LeagueConfig(**d)
    except TypeError as exc:
        raise LeagueError(f"{source}: {exc}") from None
    except LeagueError as exc:  # the checks name the folder's own file; this one may be another (init --config)
        text = str(exc)
        if source != CONFIG_NAME and text.startswith(f"{CONFIG_NAME}: "):
            text = f"{source}: " + text.removeprefix(f"{CONFIG_NAME}: ")
        raise LeagueError(text, exc.status) from None


def load_league_config(path: str | Path) -> LeagueConfig:
    p = Path(path)
    try:
        text = p.read_text(encoding=SETTINGS_ENCODING)
    except OSError as exc:
        raise LeagueError(f"cannot read {p}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise LeagueError(f"{p} is not UTF-8 text") from None
    try:
        d = tomllib.loads(text)
    except TOML_ERRORS as exc:  # a value nested thousands deep: a RecursionError, not a traceback
        raise LeagueError(f"{p} is {toml_problem(exc)}") from None
    return config_from_dict(d, str(p))
