"""The league's rules of who may do what, on the database (no HTTP, no games).

A :class:`League` is a folder: ``league.toml``, ``league.db``, ``bots/``
(each submitted file in a folder of its own, named by its hash) and
``runs/rNNN`` (the run folders, written only by the scheduler).

Tokens come from :mod:`secrets` (256 bits) and only their SHA-256 is
stored: a token that random needs no slow hash, and a stolen database gives
no token.  Every write is one transaction.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
import secrets
import shutil
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from arena.league.config import CONFIG_NAME, LeagueConfig, load_league_config
from arena.league.db import (
    DB_NAME,
    LeagueError,
    Reconnecting,
    atomic_write,
    connect,
    get_state,
    rows,
    transaction,
)
from arena.league.eaai_upload import STAGING, clean_staging
from arena.league.uploads import check_policy, check_upload
from arena.settings.botref import BotRef, look_alike_key

if TYPE_CHECKING:
    from arena.botkit.bot import Bot

#: A user or bot name: a letter, then letters, digits, _ or - (the built-in bots' own rule: gin-chasing);
#: checked with ``fullmatch``, never ``match`` with ``$`` (which also matches before a final newline).
NAME_RE = re.compile(r"[A-Za-z][A-Za-z0-9_-]{0,31}")
NAME_RULE = "a letter, then letters, digits, _ or -; at most 32"
#: A bot's versions are named NAME-vN in the run store, so a bot name must not end like one: searched (at the
#: end) in the name as :func:`ends_like_version` reads it.
VERSION_SUFFIX_RE = re.compile(r"[-_]v[0-9]+\Z")

#: Statuses of a version that hold (or will hold) a place on the leaderboard.
ACTIVE = ("checking", "playing", "rated")
SESSION_SECONDS = 7 * 24 * 3600
NEW_BOT_PRIORITY = 100
HOUSE_PRIORITY = 50
EXTRA_PRIORITY = 0


def now_iso() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "replace")).hexdigest()


#: The owner the pages show for the league's own bots (``owner_id`` NULL).  No user may take the name or a
#: look-alike of it: a user called ``house`` would read as the owner of ``random`` and ``simple``.
HOUSE = "house"


def check_name(name: Any, what: str) -> str:
    if not isinstance(name, str) or not NAME_RE.fullmatch(name):
        shown = repr(name)[:40]
        raise LeagueError(f"{what} {shown} is not allowed ({NAME_RULE})")
    return name


#: Look-alike folding, applied after lower-casing: digits and letters that read alike in the fonts of a
#: leaderboard (1, i and l; 0 and o; 5 and s); _ and - are dropped (alice_bot, alice-bot and alicebot are
#: one name to a reader, and the built-in bots answer to gin-chasing and gin_chasing alike).
#: Each group reads alike: its first character is the digit, its last the letter a name is folded to.
_ALIKE = ("1il", "0o", "5s")
_LOOKALIKE = str.maketrans({**{c: g[-1] for g in _ALIKE for c in g[:-1]}, "_": None, "-": None})


#: The letters :func:`name_key` folds with a digit, read as that digit: ``-vl`` reads as ``-v1``.
_AS_DIGITS = str.maketrans({c: g[0] for g in _ALIKE for c in g[1:]})


def name_key(name: str) -> str:
    """The form two names that look alike share: ``AliceBot``, ``aIicebot`` and ``a1icebot`` all give the
    key of ``alicebot``; a new name whose key is an existing name's is refused.

    A run's look-alike key (:func:`arena.settings.botref.look_alike_key`: case) folded further, as a
    league's names are ASCII by :data:`NAME_RE` and a leaderboard is read by people: Unicode's confusable
    skeleton (UTS #39) keeps case apart and does not fold 'rn' with 'm' in lower case as readers do; a
    table of five characters and two pairs is also one that a reader can check by eye.  It errs towards
    refusing: 'bil' and 'bll' share a key, and the one who asks second picks another name.

    The separators go first: 'r-nonte-carlo' reads as 'rnonte-carlo', so the pairs are folded after.  A pair
    is folded by spelling the one letter as two ('m' as 'rn', 'w' as 'vv'), never the other way: read left to
    right, 'vvv' would become 'wv' while 'vw', which reads the same, stayed 'vw'."""
    return look_alike_key(name).translate(_LOOKALIKE).replace("m", "rn").replace("w", "vv")


def ends_like_version(name: str) -> bool:
    """Whether ``name`` ends like a version's run name (``-v2``) as a reader of the leaderboard sees it, under the
    folding of :func:`name_key`: any case, ``_`` for ``-``, and the letters that read as digits (``alicebot-V2``,
    ``alicebot_v3`` and ``alicebot-vl`` all end like ``alicebot``'s version).  ``-`` or ``_`` must come before
    the ``v``: ``alicebotv2`` and ``kv8`` are names."""
    return VERSION_SUFFIX_RE.search(name.lower().translate(_AS_DIGITS)) is not None


def _builtin_lookalike(name: str) -> str | None:
    """The built-in bot ``name`` is or looks like, house bot of this league or not: a user's
    ``marjj-style`` (or ``MARJJ_style``) on the leaderboard would read as the built-in, whose results people
    know from the README."""
    from arena.botkit.bot import BUILTIN_BOTS

    key = name_key(name)
    return next((b.replace("_", "-") for b in BUILTIN_BOTS if name_key(b) == key), None)


def _lookalike(conn: sqlite3.Connection, table: str, name: str) -> str | None:
    """An existing name of ``table`` (users or bots) that looks like ``name`` but is not it."""
    key = name_key(name)
    for (other,) in conn.execute(f"SELECT name FROM {table}"):  # noqa: S608 - table is one of two constants
        if other != name and name_key(other) == key:
            return str(other)
    return None


#: An absolute path in a text (a traceback line, a command): shown by its last part alone.
_ABS_PATH_RE = re.compile(r"(?<![\w.~-])/(?:[\w.+~-]+/)+([\w.+~-]+)")


def public_text(text: str, names: dict[str, str] | None = None) -> str:
    """``text`` with no server path in it, for a page or an API answer anyone may read: each path in
    ``names`` becomes its name (a bot file: the bot's version name), any other absolute path its last part,
    as the viewer shows a store error by the run's name."""
    for path, name in sorted((names or {}).items(), key=lambda kv: -len(kv[0])):
        text = text.replace(path, name)
    return _ABS_PATH_RE.sub(r"\1", text)


#: The kinds of version whose bytes the league keeps (and counts against the uploader's quota).
UPLOADS = ("file", "eaai", "policy")


@dataclass(frozen=True)
class User:
    id: int
    name: str
    organizer: bool


class League:
    """One league folder; open a connection per thread (``league.db()``)."""

    def __init__(self, folder: str | Path):
        self.dir = Path(folder).resolve()
        if not (self.dir / CONFIG_NAME).is_file() or not (self.dir / DB_NAME).is_file():
            raise LeagueError(f"{folder} is not a league folder (run 'arena league init {folder}' first)")
        self.config: LeagueConfig = load_league_config(self.dir / CONFIG_NAME)

    # --- creation ---------------------------------------------------------------------
    @classmethod
    def init(cls, folder: str | Path, config: LeagueConfig) -> League:
        """Create a league folder with its database and house bots (refuses an existing league)."""

        d = Path(folder)
        if (d / DB_NAME).exists() or (d / CONFIG_NAME).exists():
            raise LeagueError(f"{d} already holds a league")
        from arena.loading.load import same_builtin_twice

        house = {b: _house_bot(b) for b in config.house_bots}
        if twice := same_builtin_twice(house):  # it would play as one bot against itself
            raise LeagueError(
                f"{CONFIG_NAME}: house bots '{twice[0]}' and '{twice[1]}' are the same built-in with the same "
                "settings; list it once"
            )
        try:
            (d / "bots").mkdir(parents=True, exist_ok=True)
            (d / "runs").mkdir(exist_ok=True)
            atomic_write(d / CONFIG_NAME, config.to_toml().encode())
        except OSError as exc:
            raise LeagueError(f"cannot create the league folder {d}: {exc.strerror or exc}") from None
        conn = connect(d / DB_NAME, create=True)
        try:
            with transaction(conn):
                ids: list[int] = []
                for b in config.house_bots:
                    cur = conn.execute("INSERT INTO bots(name, owner_id, created) VALUES (?, NULL, ?)", (b, now_iso()))
                    bot_id = cur.lastrowid
                    vid: int = conn.execute(
                        "INSERT INTO versions(bot_id, number, kind, spec, run_name, sha256, size, status, created,"
                        " created_ts) VALUES (?, 1, 'builtin', ?, ?, '', 0, 'playing', ?, ?)",
                        (bot_id, b, b, now_iso(), time.time()),
                    ).lastrowid  # type: ignore[assignment]
                    conn.execute("UPDATE bots SET current_version = ? WHERE id = ?", (vid, bot_id))
                    ids.append(vid)
                for i, va in enumerate(ids):
                    for vb in ids[i + 1 :]:
                        queue_pairing(conn, va, vb, 0, HOUSE_PRIORITY, config.games_per_pairing)
        finally:
            conn.close()
        return cls(d)

    def db(self) -> sqlite3.Connection:
        return connect(self.dir / DB_NAME, busy_seconds=self.config.busy_seconds)

    def reconnecting(self) -> Reconnecting:
        """A connection of a long-lived part of the server (the web app, the scheduler, the checks) that is
        reopened when the file changes under it, with the league's ``busy_seconds``."""
        return Reconnecting(self.dir / DB_NAME, self.config.busy_seconds)

    # --- users, tokens, sessions -------------------------------------------------------
    def add_user(self, conn: sqlite3.Connection, name: str, organizer: bool = False) -> str:
        """Create a user; returns the token (shown once; only its hash is kept)."""
        check_name(name, "user name")
        if name_key(name) == name_key(HOUSE):
            raise LeagueError(f"user name '{name}' is reserved: '{HOUSE}' owns the league's own bots", 409)
        token = secrets.token_urlsafe(32)
        with transaction(conn):
            if conn.execute("SELECT 1 FROM users WHERE name = ?", (name,)).fetchone():
                raise LeagueError(f"user '{name}' already exists", 409)
            other = _lookalike(conn, "users", name)
            if other is not None:
                raise LeagueError(f"user name '{name}' looks like the existing user '{other}'; choose another", 409)
            conn.execute(
                "INSERT INTO users(name, token_hash, organizer, created) VALUES (?, ?, ?, ?)",
                (name, token_hash(token), int(organizer), now_iso()),
            )
        return token

    @staticmethod
    def user_by_token(conn: sqlite3.Connection, token: str | None) -> User | None:
        if not token or len(token) > 200:
            return None
        r = conn.execute(
            "SELECT id, name, organizer FROM users WHERE token_hash = ? AND revoked IS NULL", (token_hash(token),)
        ).fetchone()
        return None if r is None else User(r["id"], r["name"], bool(r["organizer"]))

    @staticmethod
    def new_session(conn: sqlite3.Connection, user: User) -> tuple[str, str]:
        """(cookie value, CSRF token) of a new session."""
        sid, csrf = secrets.token_urlsafe(32), secrets.token_urlsafe(24)
        with transaction(conn):
            conn.execute("DELETE FROM sessions WHERE expires < ?", (time.time(),))
            conn.execute(
                "INSERT INTO sessions(id_hash, user_id, csrf, expires) VALUES (?, ?, ?, ?)",
                (token_hash(sid), user.id, csrf, time.time() + SESSION_SECONDS),
            )
        return sid, csrf

    @staticmethod
    def session(conn: sqlite3.Connection, sid: str | None) -> tuple[User, str] | None:
        """The user and CSRF token of a live session cookie."""
        if not sid or len(sid) > 200:
            return None
        r = conn.execute(
            "SELECT u.id, u.name, u.organizer, s.csrf FROM sessions s JOIN users u ON u.id = s.user_id"
            " WHERE s.id_hash = ? AND s.expires > ? AND u.revoked IS NULL",
            (token_hash(sid), time.time()),
        ).fetchone()
        return None if r is None else (User(r["id"], r["name"], bool(r["organizer"])), r["csrf"])

    @staticmethod
    def end_session(conn: sqlite3.Connection, sid: str | None) -> None:
        if sid:
            with transaction(conn):
                conn.execute("DELETE FROM sessions WHERE id_hash = ?", (token_hash(sid),))

    @staticmethod
    def _user_row(conn: sqlite3.Connection, name: Any) -> sqlite3.Row:
        if not isinstance(name, str) or not NAME_RE.fullmatch(name):
            raise LeagueError(f"user name {repr(name)[:40]} is not allowed ({NAME_RULE})")
        u = conn.execute("SELECT * FROM users WHERE name = ?", (name,)).fetchone()
        if u is None:
            raise LeagueError(f"no user named '{name}'", 404)
        return u

    def rotate_token(self, conn: sqlite3.Connection, name: str) -> str:
        """A new token for user ``name`` (returned once); the old one and every session of theirs end now."""
        token = secrets.token_urlsafe(32)
        with transaction(conn):
            u = self._user_row(conn, name)
            if u["revoked"] is not None:
                raise LeagueError(f"user '{name}' is revoked", 409)
            conn.execute("UPDATE users SET token_hash = ? WHERE id = ?", (token_hash(token), u["id"]))
            conn.execute("DELETE FROM sessions WHERE user_id = ?", (u["id"],))
        return token

    def revoke_user(self, conn: sqlite3.Connection, name: str) -> dict[str, Any]:
        """End user ``name``'s access now: token and sessions, and withdraw their bots (versions and games
        kept).  The row stays, so the name stays taken and their games keep their owner."""
        with transaction(conn):
            u = self._user_row(conn, name)
            if u["revoked"] is not None:
                raise LeagueError(f"user '{name}' is already revoked", 409)
            # an unguessable hash no token has (a token's is 64 hex digits): the old token matches nothing
            conn.execute(
                "UPDATE users SET revoked = ?, token_hash = ? WHERE id = ?",
                (now_iso(), f"revoked:{secrets.token_hex(16)}", u["id"]),
            )
            conn.execute("DELETE FROM sessions WHERE user_id = ?", (u["id"],))
            bots = conn.execute("SELECT id, name FROM bots WHERE owner_id = ? AND withdrawn = 0", (u["id"],)).fetchall()
            for b in bots:
                _withdraw_bot(conn, b["id"])
        return {"user": name, "revoked": True, "withdrawn": [b["name"] for b in bots]}

    # --- submissions ------------------------------------------------------------------
    def submit(
        self,
        conn: sqlite3.Connection,
        user: User,
        name: str,
        source: bytes | None = None,
        command: str | None = None,
        *,
        archive: bytes | None = None,
        class_name: str | None = None,
        policy: bytes | None = None,
        policy_format: str | None = None,
    ) -> dict[str, Any]:
        """Add a version of bot ``name``: status 'checking'.

        One of: ``source``, a Python bot file's bytes (or a policy module's: a top-level ``act`` and none
        of a bot's decisions); ``command``, a ``cmd:`` program (organizers only); ``archive`` and
        ``class_name``, an EAAI-kit player (a jar or a zip of its class folder, and the class that
        implements ``ginrummy.GinRummyPlayer``; the league's ``eaai_kit`` must be set); ``policy`` and
        ``policy_format`` (``py``, ``onnx`` or ``npz``), a trained policy.  Whether the bytes are an
        acceptable bot is :mod:`arena.league.uploads`'s to say, before any transaction; here are the rules
        of who may submit what and how much.
        """
        check_name(name, "bot name")
        cfg = self.config
        given = [x is not None for x in (source, command, archive, policy)]
        if sum(given) != 1:
            raise LeagueError(
                "send one of: a bot file (source), a command, a jar or zip (archive) and its class, or a policy"
            )
        if class_name is not None and archive is None:
            raise LeagueError("a class name goes with an EAAI-kit player's jar or zip (archive)")
        if policy_format is not None and policy is None:
            raise LeagueError("a policy format goes with a policy file (policy)")
        if policy is not None:
            upload = check_policy(cfg, policy, policy_format)
        else:
            upload = check_upload(
                cfg,
                self.dir,
                organizer=user.organizer,
                source=source,
                command=command,
                archive=archive,
                class_name=class_name,
            )
        kind, data, spec, size = upload.kind, upload.data, upload.spec, upload.size
        digest = hashlib.sha256(data).hexdigest()
        now = time.time()
        # a stage's slow part (an archive unpacked) is done only for what the limits let in (a read: no lock)
        self._admit(conn, user, name, kind, digest, size, now)
        # the archive unpacks before the transaction (no lock held); the transaction only moves it in place
        with upload.stage(self.dir) as write, transaction(conn):
            bot = self._admit(conn, user, name, kind, digest, size, now)
            if bot is None:
                bot_id = conn.execute(
                    "INSERT INTO bots(name, owner_id, created) VALUES (?, ?, ?)", (name, user.id, now_iso())
                ).lastrowid
                number = 1
            else:
                bot_id = bot["id"]
                number = conn.execute("SELECT MAX(number) FROM versions WHERE bot_id = ?", (bot_id,)).fetchone()[0] + 1
                conn.execute("UPDATE bots SET withdrawn = 0 WHERE id = ?", (bot_id,))
            run_name = f"{name}-v{number}"
            vid = conn.execute(
                "INSERT INTO versions(bot_id, number, kind, spec, run_name, sha256, size, status, submitted_by,"
                " created, created_ts) VALUES (?, ?, ?, ?, ?, ?, ?, 'checking', ?, ?, ?)",
                (bot_id, number, kind, spec, run_name, digest, size, user.id, now_iso(), now),
            ).lastrowid
            write()  # inside the transaction: a failed write stores no version (an archive's is one rename)
        return {"bot": name, "version": number, "id": vid, "status": "checking", "run_name": run_name}

    def _admit(
        self, conn: sqlite3.Connection, user: User, name: str, kind: str, digest: str, size: int, now: float
    ) -> sqlite3.Row | None:
        """Refuse a submission the league's rules do not let in (a revoked user, the hourly limit, a name taken
        or alike, another's bot, the active bots, the quota); the bot's row, None for a new bot.  In the
        submission's transaction; also before an archive is unpacked, so one refused costs no disk."""
        cfg = self.config
        _not_revoked(conn, user)
        recent = conn.execute(
            "SELECT COUNT(*) FROM versions WHERE submitted_by = ? AND created_ts > ?", (user.id, now - 3600)
        ).fetchone()[0]
        if recent >= cfg.submissions_per_hour and not user.organizer:
            raise LeagueError(f"limit reached: {cfg.submissions_per_hour} submissions per hour; try again later", 429)
        bot = conn.execute("SELECT * FROM bots WHERE name = ?", (name,)).fetchone()
        if bot is None:
            builtin = _builtin_lookalike(name)
            if builtin is not None:
                raise LeagueError(
                    f"bot name '{name}' is (or looks like) the built-in bot '{builtin}'; choose another", 409
                )
            other = _lookalike(conn, "bots", name)
            if other is not None:
                raise LeagueError(f"bot name '{name}' looks like the existing bot '{other}'; choose another", 409)
            if ends_like_version(name):
                raise LeagueError(f"bot name '{name}' ends like a version (-v1, -v2...); choose another")
        else:
            if bot["owner_id"] is None:
                raise LeagueError(f"bot '{name}' is a house bot", 403)
            if bot["owner_id"] != user.id and not user.organizer:
                raise LeagueError(f"bot '{name}' belongs to another user", 403)
            _owner_not_revoked(conn, bot)
        if not user.organizer:
            _within_active_limit(conn, cfg.active_bots_per_user, user, bot)
        if kind in UPLOADS and not user.organizer:
            held = conn.execute(
                "SELECT COALESCE(SUM(size), 0), COALESCE(MAX(sha256 = ?), 0) FROM (SELECT DISTINCT sha256, size"
                f" FROM versions WHERE submitted_by = ? AND kind IN {UPLOADS})",
                (digest, user.id),
            ).fetchone()
            used, known = int(held[0]), bool(held[1])
            if not known and used + size > cfg.bytes_per_user:
                raise LeagueError(
                    f"quota reached: your uploads take {used} bytes and this one {size}; the quota is "
                    f"{cfg.bytes_per_user} bytes per user (ask an organizer)",
                    413,
                )
        return bot

    def _owned_bot(self, conn: sqlite3.Connection, user: User, name: str) -> sqlite3.Row:
        bot = conn.execute("SELECT * FROM bots WHERE name = ?", (name,)).fetchone()
        if bot is None:
            raise LeagueError(f"no bot named '{name}'", 404)
        if bot["owner_id"] is None and not user.organizer:
            raise LeagueError(f"bot '{name}' is a house bot", 403)
        if bot["owner_id"] != user.id and not user.organizer:
            raise LeagueError(f"bot '{name}' belongs to another user", 403)
        return bot

    def withdraw(self, conn: sqlite3.Connection, user: User, name: str) -> dict[str, Any]:
        """Take a bot off the leaderboard; its versions and games are kept."""
        with transaction(conn):
            bot = self._owned_bot(conn, user, name)
            _withdraw_bot(conn, bot["id"])
        return {"bot": name, "withdrawn": True}

    def publish(self, conn: sqlite3.Connection, user: User, name: str, published: bool) -> dict[str, Any]:
        if not user.organizer:
            raise LeagueError("only an organizer may publish a bot's source", 403)
        with transaction(conn):
            bot = conn.execute("SELECT id FROM bots WHERE name = ?", (name,)).fetchone()
            if bot is None:
                raise LeagueError(f"no bot named '{name}'", 404)
            conn.execute("UPDATE bots SET published = ? WHERE id = ?", (int(published), bot["id"]))
        return {"bot": name, "published": published}

    def source(self, conn: sqlite3.Connection, user: User | None, name: str, number: int | None) -> str:
        """A version's source: for its owner, an organizer, or anyone once published."""
        bot = conn.execute("SELECT * FROM bots WHERE name = ?", (name,)).fetchone()
        if bot is None:
            raise LeagueError(f"no bot named '{name}'", 404)
        allowed = bool(bot["published"]) or (user is not None and (user.organizer or user.id == bot["owner_id"]))
        if not allowed:
            raise LeagueError(f"the source of '{name}' is private", 401 if user is None else 403)
        if number is None:
            r = conn.execute("SELECT * FROM versions WHERE bot_id = ? ORDER BY number DESC LIMIT 1", (bot["id"],))
        else:
            r = conn.execute("SELECT * FROM versions WHERE bot_id = ? AND number = ?", (bot["id"], number))
        v = r.fetchone()
        if v is None:
            raise LeagueError(f"bot '{name}' has no version {number}", 404)
        if v["kind"] == "builtin":
            return f"# built-in bot '{v['spec']}'\n"
        if v["kind"] == "cmd":
            return BotRef("command", v["spec"]).spec() + "\n"
        if v["kind"] == "eaai":
            return f"# EAAI-kit player {v['spec'].rpartition(':')[2]}: a jar or zip (sha256 {v['sha256']})\n"
        if v["kind"] == "policy" and not v["spec"].endswith(".py"):
            return f"# trained policy: {Path(v['spec']).suffix[1:]} file of {v['size']} bytes (sha256 {v['sha256']})\n"
        try:
            return (self.dir / v["spec"]).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            raise LeagueError(f"the file of '{name}' version {v['number']} is missing", 410) from None

    # --- reading ----------------------------------------------------------------------
    @staticmethod
    def ratings(conn: sqlite3.Connection) -> dict[str, dict[str, Any]]:
        """run name -> rating row, as the scheduler last computed them."""
        try:
            return json.loads(get_state(conn, "ratings", "{}") or "{}")
        except ValueError:
            return {}

    def leaderboard(self, conn: sqlite3.Connection) -> list[dict[str, Any]]:
        """The current version of every bot still in the league, best first."""
        ratings = self.ratings(conn)
        out = []
        for r in rows(
            conn,
            "SELECT b.name AS bot, COALESCE(u.name, ?) AS owner, v.number AS version, v.run_name, v.status"
            " FROM bots b JOIN versions v ON v.id = b.current_version LEFT JOIN users u ON u.id = b.owner_id"
            " WHERE b.withdrawn = 0 AND v.status IN ('playing', 'rated')",
            (HOUSE,),
        ):
            s = ratings.get(r["run_name"], {})
            out.append(
                {
                    "bot": r["bot"],
                    "owner": r["owner"],
                    "version": r["version"],
                    "status": r["status"],
                    "rating": s.get("rating"),
                    "rating_low": s.get("rating_low"),
                    "rating_high": s.get("rating_high"),
                    "games": int(s.get("games", 0)),
                    "win_rate": s.get("win_rate"),
                    "forfeits": int(s.get("forfeits", 0)),
                }
            )
        out.sort(key=lambda e: (e["rating"] is None, -(e["rating"] or 0.0), e["bot"]))
        return out

    def bot_info(self, conn: sqlite3.Connection, name: str) -> dict[str, Any]:
        bot = conn.execute(
            "SELECT b.*, COALESCE(u.name, ?) AS owner FROM bots b LEFT JOIN users u ON u.id = b.owner_id"
            " WHERE b.name = ?",
            (HOUSE, name),
        ).fetchone()
        if bot is None:
            raise LeagueError(f"no bot named '{name}'", 404)
        versions = rows(
            conn,
            "SELECT number, kind, status, reason, created, run_name, id FROM versions WHERE bot_id = ? ORDER BY number",
            (bot["id"],),
        )
        current = next((v for v in versions if v["id"] == bot["current_version"]), None)
        stats: dict[str, Any] = {}
        if current is not None:
            try:
                stats = json.loads(get_state(conn, f"bot:{current['run_name']}", "{}") or "{}")
            except ValueError:
                stats = {}
        ratings = self.ratings(conn)
        for v in versions:
            v["rating"] = ratings.get(v["run_name"], {}).get("rating")
            v["games"] = ratings.get(v["run_name"], {}).get("games", 0)
            del v["id"]
        return {
            "bot": bot["name"],
            "owner": bot["owner"],
            "house": bot["owner_id"] is None,  # one of the league's own bots (decided by owner, not by name)
            "published": bool(bot["published"]),
            "withdrawn": bool(bot["withdrawn"]),
            "current_version": None if current is None else current["number"],
            "versions": versions,
            "stats": stats,
        }

    def user_info(self, conn: sqlite3.Connection, name: str) -> dict[str, Any]:
        u = conn.execute("SELECT id, name, organizer, revoked FROM users WHERE name = ?", (name,)).fetchone()
        if u is None:
            raise LeagueError(f"no user named '{name}'", 404)
        versions = rows(
            conn,
            "SELECT b.name AS bot, v.number AS version, v.status, v.reason, v.created,"
            " (b.current_version = v.id) AS current FROM versions v JOIN bots b ON b.id = v.bot_id"
            " WHERE b.owner_id = ? ORDER BY v.created_ts DESC, v.id DESC",
            (u["id"],),
        )
        for v in versions:
            v["current"] = bool(v["current"])
        return {
            "user": u["name"],
            "organizer": bool(u["organizer"]),
            "revoked": u["revoked"] is not None,
            "versions": versions,
        }

    @staticmethod
    def progress(conn: sqlite3.Connection) -> dict[str, Any]:
        counts = {r["state"]: r["n"] for r in rows(conn, "SELECT state, COUNT(*) AS n FROM pairings GROUP BY state")}
        running = rows(
            conn,
            "SELECT p.id, va.run_name AS a, vb.run_name AS b, p.round, p.games, p.target FROM pairings p"
            " JOIN versions va ON va.id = p.a JOIN versions vb ON vb.id = p.b WHERE p.state = 'running'",
        )
        checking = [r["run_name"] for r in rows(conn, "SELECT run_name FROM versions WHERE status = 'checking'")]
        return {
            "queued": counts.get("queued", 0),
            "running": running,
            "done": counts.get("done", 0),
            "checking": checking,
            "games": sum(r["games"] for r in rows(conn, "SELECT games FROM pairings")),
            "updated": get_state(conn, "ratings_updated", ""),
        }


def _house_bot(spec: str) -> Bot:
    """A house bot: a built-in, perhaps with inline settings (``monte-carlo:samples=100``); one line if not."""
    from arena.botkit.bot import BUILTIN_BOTS, BotError
    from arena.loading.load import load
    from arena.settings.botref import BotRefError

    try:
        ref = BotRef.parse(spec)
    except BotRefError as exc:
        raise LeagueError(f"{CONFIG_NAME}: house bot {exc}") from None
    if ref.kind != "builtin" or ref.ref not in BUILTIN_BOTS:
        allowed = ", ".join(x.replace("_", "-") for x in BUILTIN_BOTS)
        raise LeagueError(
            f"{CONFIG_NAME}: house bot '{spec}' is not a built-in bot (built-in: {allowed}; "
            "settings go inline, e.g. monte-carlo:samples=100)"
        )
    try:
        return load(ref)  # an unknown parameter or a value out of range: a BotError
    except BotError as exc:
        raise LeagueError(f"{CONFIG_NAME}: house {exc}") from None


def _not_revoked(conn: sqlite3.Connection, user: User) -> None:
    """Refuse a user revoked since their token was checked (in the caller's transaction): the check and the
    submission are two database calls, and a revoke between them must not let the submission in."""
    r = conn.execute("SELECT revoked FROM users WHERE id = ?", (user.id,)).fetchone()
    if r is None or r["revoked"] is not None:
        raise LeagueError(f"user '{user.name}' is revoked; the token is not valid", 401)


def _owner_not_revoked(conn: sqlite3.Connection, bot: sqlite3.Row) -> None:
    """Refuse a new version of a revoked user's bot (an organizer's too): it would put the bot back on the
    board under an owner who may no longer take part."""
    r = conn.execute("SELECT name, revoked FROM users WHERE id = ?", (bot["owner_id"],)).fetchone()
    if r is not None and r["revoked"] is not None:
        raise LeagueError(f"bot '{bot['name']}' belongs to the revoked user '{r['name']}'", 403)


def _within_active_limit(conn: sqlite3.Connection, limit: int, user: User, bot: sqlite3.Row | None) -> None:
    """Refuse a submission that would make one bot too many of ``user``'s active: a new bot, and also a
    withdrawn bot (or one with no active version) brought back by a new version.  A new version of a bot
    already active takes no new place."""
    if bot is not None and not bot["withdrawn"] and _is_active(conn, bot["id"]):
        return
    active = conn.execute(
        "SELECT COUNT(DISTINCT b.id) FROM bots b JOIN versions v ON v.bot_id = b.id"
        f" WHERE b.owner_id = ? AND b.withdrawn = 0 AND v.status IN {ACTIVE}",
        (user.id,),
    ).fetchone()[0]
    if active >= limit:
        raise LeagueError(
            f"limit reached: {limit} active bots per user; withdraw one or submit a new version of an active one",
            409,
        )


def _is_active(conn: sqlite3.Connection, bot_id: int) -> bool:
    return (
        conn.execute(f"SELECT 1 FROM versions WHERE bot_id = ? AND status IN {ACTIVE}", (bot_id,)).fetchone()
        is not None
    )


def withdraw_revoked(conn: sqlite3.Connection) -> list[str]:
    """Withdraw every bot still in the league whose owner is revoked (a transaction, only if there is one);
    their names.

    A revoke withdraws the user's bots itself; this is the scheduler's backstop, run before it checks or
    plays anything, so nothing of a revoked user enters play even if it reached the database."""
    found = conn.execute(
        "SELECT b.id, b.name FROM bots b JOIN users u ON u.id = b.owner_id WHERE b.withdrawn = 0"
        " AND u.revoked IS NOT NULL"
    ).fetchall()
    if found:
        with transaction(conn):
            for b in found:
                _withdraw_bot(conn, b["id"])
    return [b["name"] for b in found]


def owner_revoked(conn: sqlite3.Connection, bot_id: int) -> bool:
    """Whether bot ``bot_id`` belongs to a revoked user (a house bot: no)."""
    r = conn.execute(
        "SELECT u.revoked FROM bots b JOIN users u ON u.id = b.owner_id WHERE b.id = ?", (bot_id,)
    ).fetchone()
    return r is not None and r["revoked"] is not None


def _withdraw_bot(conn: sqlite3.Connection, bot_id: int) -> None:
    """Take a bot off the board (in the caller's transaction): its versions withdrawn, its queued pairings
    cancelled; what it played stays."""
    conn.execute("UPDATE bots SET withdrawn = 1 WHERE id = ?", (bot_id,))
    conn.execute(f"UPDATE versions SET status = 'withdrawn' WHERE bot_id = ? AND status IN {ACTIVE}", (bot_id,))
    conn.execute(
        "UPDATE pairings SET state = 'cancelled' WHERE state = 'queued'"
        " AND (a IN (SELECT id FROM versions WHERE bot_id = ?) OR b IN (SELECT id FROM versions WHERE bot_id = ?))",
        (bot_id, bot_id),
    )


def upload_folder(spec: str) -> str:
    """The folder of an uploaded version under the league folder (``bots/<hash>``), from its spec."""
    return "/".join(spec.split("/")[:2])


def sweep_files(league_dir: Path, conn: sqlite3.Connection, min_age: float = 600.0) -> list[str]:
    """Remove the folders under ``bots/`` that no version points to (left by a write whose transaction failed,
    or by an older arena that wrote before it checked), older than ``min_age`` seconds so a submission whose
    transaction is still open keeps its files, and the archives a stopped server left half unpacked
    (:func:`arena.league.eaai_upload.clean_staging`; an upload under way keeps its own).  Returns the files
    and staging folders removed, relative to the league folder."""
    keep = {upload_folder(r[0]) for r in conn.execute(f"SELECT spec FROM versions WHERE kind IN {UPLOADS}")}
    keep.add(STAGING)
    removed: list[str] = clean_staging(league_dir)
    root = league_dir / "bots"
    now = time.time()
    for folder in sorted(root.glob("*")):
        if not folder.is_dir() or folder.is_symlink() or f"bots/{folder.name}" in keep:
            continue
        try:
            paths = [folder, *folder.rglob("*")]
            if any(now - p.lstat().st_mtime < min_age for p in paths):
                continue
            files = sorted(str(p.relative_to(league_dir)) for p in paths if not p.is_dir())
            shutil.rmtree(folder)
        except OSError:
            continue
        removed += files
    return removed


def queue_pairing(conn: sqlite3.Connection, a: int, b: int, round_no: int, priority: int, target: int) -> None:
    """Queue the pairing of bot versions ``a`` and ``b`` for ``target`` games, unless it is already queued.

    The one place a pairing row is written: the house pairings, a new bot's
    checks and the scheduler's rounds all queue through it.
    """
    conn.execute(
        "INSERT OR IGNORE INTO pairings(a, b, round, priority, state, target, created)"
        " VALUES (?, ?, ?, ?, 'queued', ?, ?)",
        (a, b, round_no, priority, target, now_iso()),
    )
