"""The plan of a run: matchups cut into chunks, each chunk a self-contained task.

A :class:`ChunkTask` carries everything a worker needs and nothing that
points back at the driver's machine: the resolved rules, the seeds, and each
bot as *content* (:class:`BotSpec`: its source text and hash, or the name of
a built-in module and its hash).  That is what lets the same task run in this
process, in a local worker process or on a Dask worker on another machine,
and what makes a retry harmless.

Deal seeds depend on the run seed and the pair number only, so every matchup
plays the same deals (as chess testers give every engine the same openings);
with ``shared_deals = false`` a matchup's seed is first drawn from the run
seed and its bots and rules (:func:`own_deals_seed`).  Nothing depends on which worker
played which chunk or in what order chunks finished.  A matchup's id hashes everything its games depend on -
both bots' identities, the rules, the seed, the games and chunk size - so a
changed bot file gets its games played again, never mixed with old ones.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from arena.botkit.bot import Bot
from arena.botkit.policy import policy_source
from arena.engine._jit import jit
from arena.engine.rng import mix_seed
from arena.settings.botref import BINARY_POLICY_SUFFIXES
from arena.settings.config import LIMITS
from arena.settings.rules import Rules

STREAM_PAIRS = 7_000_000  # the run seed's stream for pair seeds (distinct from a game's own streams)


@dataclass(frozen=True)
class BotSpec:
    """A bot as content: enough for any worker to rebuild it without our files.

    ``kind`` is ``builtin`` (``ref`` is the module key under ``bots``; the
    worker checks its copy has the same hash), ``file`` (``source`` is the
    file's text), ``command`` (``ref`` is the command line of an external
    bot, run in ``cwd``, the driver's folder unless the ref names one; the program and the files
    it names must exist there, alike, where the chunk runs) or
    ``sandbox`` (a bot file run in its own process; ``source`` is its text) or ``eaai``
    (an EAAI-kit player: ``ref`` is ``path:class``; the player and the kit must exist where
    the chunk runs; ``kit`` is the driver's kit, used where ``GIN_ARENA_EAAI_KIT`` names none),
    or ``policy`` (a policy file; ``source`` is its bytes in base64, from
    :func:`arena.botkit.policy.policy_source`).
    ``limits``: the time and memory limits of bots in their own processes.
    """

    name: str
    kind: str
    ref: str
    source: str
    source_hash: str
    params: tuple[tuple[str, float], ...]
    limits: tuple[tuple[str, Any], ...] = ()
    cwd: str = ""
    kit: str = ""
    #: A bot in its own process: the handshake it gave the driver (JSON), so that a worker need not
    #: start it to know its name and what it asks for (:func:`arena.external.client.known_hello`).
    hello: str = ""

    def identity(self) -> list[Any]:
        """What a matchup's games depend on (not where the file lived)."""
        return [self.name, self.kind, self.source_hash, [list(p) for p in self.params]]

    def own_paths(self) -> list[str]:
        """The files (or a kit player's class folder) that are this bot itself, for the wall to hide from
        every other bot of the run: a ``cmd:`` bot's wall shows the folder of its script, which may hold
        its opponents' files (``submissions/*.py``).  None for a built-in; for a command, the files it
        names outside the system and the interpreter, which every bot may read."""
        if self.kind in ("file", "sandbox", "policy"):
            return [os.path.realpath(self.ref)]
        if self.kind == "eaai":
            return [os.path.realpath(self.ref.rsplit(":", 1)[0])]
        if self.kind == "command":
            from arena.external.wall import private_files

            return private_files(shlex.split(self.ref), self.cwd or os.getcwd())
        return []

    @classmethod
    def of(cls, bot: Bot) -> BotSpec:
        """The spec of a loaded bot (its :class:`~arena.settings.botref.BotRef` says what kind)."""
        ref = bot.ref
        if ref is None:
            raise ValueError(f"bot '{bot.name}' was not loaded from a reference (use arena.loading.load.load)")
        params = tuple(bot.param_dict().items())
        if ref.kind in ("command", "sandbox", "eaai"):
            from arena.external import external_of

            ext = external_of(bot)
            limits = tuple(dataclasses.asdict(ext.limits).items()) if ext is not None else ()
            hello = json.dumps(ext.hello, sort_keys=True) if ext is not None and ext.hello else ""
            if ref.kind == "eaai":
                from arena.external.eaai import kit_path

                kit = str(kit_path())
                return cls(bot.name, "eaai", ref.ref, "", bot.source_hash, params, limits, kit=kit, hello=hello)
            if ref.kind == "command":  # run where the driver ran it (its relative paths are the driver's)
                cwd = os.path.abspath(ref.cwd or os.getcwd())
                return cls(bot.name, ref.kind, ref.ref, "", bot.source_hash, params, limits, cwd, hello=hello)
            if Path(ref.ref).suffix.lower() in BINARY_POLICY_SUFFIXES:  # a walled ONNX model: its bytes
                source = policy_source(ref.ref)
            else:
                source = _read(ref.ref)
            return cls(bot.name, "sandbox", ref.ref, source, bot.source_hash, params, limits, hello=hello)
        if ref.kind == "builtin":
            return cls(bot.name, "builtin", ref.ref, "", bot.source_hash, params)
        if ref.kind == "policy":
            return cls(bot.name, "policy", ref.ref, policy_source(ref.ref), bot.source_hash, params)
        path = getattr(bot.module, "__file__", None) or ref.ref
        return cls(bot.name, "file", ref.ref, _read(path), bot.source_hash, params)


def _read(path: str) -> str:
    with open(path, encoding="utf-8") as f:
        return f.read()


def code_identity() -> str:
    """This gin-arena: its version and a hash of its code (the package's Python and Java files), as they
    were when this module was imported (a file edited since is not the code this process runs).

    A chunk carries its driver's (:attr:`ChunkTask.code`) and a worker plays it only with the same:
    a Dask worker with another gin-arena installed played the chunks by its own engine and scoring,
    and its games were stored as the driver's in silence (the built-in bots' own hashes are checked
    apart, but not the engine that plays every bot).
    """
    return _CODE


def _code_identity() -> str:
    import arena

    root = Path(arena.__file__).resolve().parent
    digest = hashlib.sha256()
    for p in sorted(root.rglob("*")):
        if p.suffix in (".py", ".java") and "__pycache__" not in p.parts and p.is_file():
            digest.update(p.relative_to(root).as_posix().encode() + b"\0" + p.read_bytes() + b"\0")
    return f"{arena.__version__} (code {digest.hexdigest()[:16]})"


_CODE = _code_identity()


@dataclass(frozen=True)
class ChunkTask:
    """Pairs ``pair_lo..pair_hi`` of one matchup: everything a worker needs."""

    matchup_id: str
    matchup_no: int
    chunk: int
    bot_a: BotSpec
    bot_b: BotSpec
    rules: Rules  # resolved and validated once per run; the worker only packs it
    seed: int
    pair_lo: int
    pair_hi: int
    duplicate: bool
    record_hands: bool
    games_per_pair: int
    time_limit: float  # seconds the whole chunk may take before its worker is stopped
    record_log: bool = False  # also return each game's action log (with record_hands), for exact replays
    # CPU seconds one decision of an in-process bot may take before its worker is stopped (0: no limit)
    decision_limit: float = LIMITS["decision_seconds"][0]
    # A batched policy's call of n games may take n x decision_limit, at most max(decision_limit, game_limit)
    game_limit: float = LIMITS["game_seconds"][0]
    # Every bot's own files in the run (BotSpec.own_paths): the worker's walls hide them from the others
    private: tuple[str, ...] = ()
    # The gin-arena that planned the chunk (code_identity): a worker running another one refuses it
    code: str = field(default_factory=code_identity)

    @property
    def n_games(self) -> int:
        n = self.pair_hi - self.pair_lo
        return 2 * n if self.duplicate else n

    @property
    def matchup(self) -> str:
        return f"{self.bot_a.name} vs {self.bot_b.name}"

    @property
    def label(self) -> str:
        return f"{self.matchup} chunk {self.chunk} (pairs {self.pair_lo}..{self.pair_hi - 1})"

    @property
    def key(self) -> str:
        """A name for the task that is unique in the run (Dask keys, logs)."""
        return f"chunk-{self.matchup_id}-{self.chunk:05d}"


@jit
def _pair_seeds(seed, lo, hi):
    out = np.empty(hi - lo, dtype=np.int64)
    for i in range(lo, hi):
        out[i - lo] = np.int64(mix_seed(seed, STREAM_PAIRS + i) >> np.uint64(1))
    return out


def pair_seeds(seed: int, lo: int, hi: int) -> np.ndarray:
    """Deal seeds of pairs ``lo..hi-1`` of a run seeded ``seed`` (the same in every matchup)."""
    return _pair_seeds(seed, lo, hi)


def own_deals_seed(a: BotSpec, b: BotSpec, rules: Rules, seed: int, duplicate: bool) -> int:
    """The seed of a matchup's own deals (``shared_deals = false``): a one-way hash of the run seed and what
    the deals belong to (the two bots in their seats, the rules, duplicate or not), in a config's seed range.

    One-way, and keyed by the run seed itself: a matchup id is public (the index, the reports), and a
    game's seed is shown by the viewer, so neither may lead to another matchup's deals, nor to the run seed.
    Not keyed by how the games are cut up or kept (chunk size, ``record_hands``) nor by how many are
    played: as with shared deals, those change no deal (they did, through the matchup id, before
    December 2026), so a run with more games plays the same deals first.
    """
    key = json.dumps([a.identity(), b.identity(), rules.to_dict(), duplicate], sort_keys=True)
    digest = hashlib.sha256(f"gin-arena deals {seed} {key}".encode()).digest()
    return int.from_bytes(digest[:8], "little") >> 2


def matchup_id(
    a: BotSpec,
    b: BotSpec,
    rules: Rules,
    seed: int,
    games: int,
    duplicate: bool,
    chunk_size: int,
    record_hands: bool,
) -> str:
    blob = json.dumps(
        [a.identity(), b.identity(), rules.to_dict(), seed, games, duplicate, chunk_size, record_hands],
        sort_keys=True,
    )
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def play_order(tasks: Sequence[ChunkTask]) -> list[ChunkTask]:
    """The chunks to play, the matchups in turn: chunk 0 of every matchup, then chunk 1 of every one...

    Matchups differ in cost per game (a game against a weak bot ends in a few hands), so in
    this order each stretch of a run is a sample of all of them: the progress line's estimate of
    the time left holds from the first round on, and a run stopped early holds some games of
    every matchup.  Within a matchup the chunks keep their order (an SPRT reads them in it).
    """
    return sorted(tasks, key=lambda t: t.chunk)  # stable: the matchups keep their order within a round


def chunk_time_limit(n_games: int, per_game: float, floor: float) -> float:
    """How long a chunk may run: generous per game, never below ``floor`` seconds.

    Compiled bots play a game in well under a millisecond and plain ones in a
    few; the default per-game allowance is far above either, so only a bot
    that hangs (or crawls) reaches it.
    """
    return max(floor, n_games * per_game)


def plan_matchup(
    a: BotSpec,
    b: BotSpec,
    *,
    matchup_no: int,
    rules: Rules,
    seed: int,
    games: int,
    duplicate: bool,
    chunk_size: int,
    record_hands: bool,
    per_game_seconds: float,
    chunk_floor_seconds: float,
    record_log: bool = False,
    decision_seconds: float = LIMITS["decision_seconds"][0],
    game_seconds: float = LIMITS["game_seconds"][0],
) -> tuple[str, list[ChunkTask]]:
    """The id and the chunks of one matchup.

    ``record_log`` is not part of the matchup's id: it changes what is kept,
    not the games, so a folder may hold chunks with and without logs; nor
    are ``decision_seconds`` and ``game_seconds`` (the ``[limits]`` keys),
    which only say when a stuck bot is stopped.
    """
    mid = matchup_id(a, b, rules, seed, games, duplicate, chunk_size, record_hands)
    n_pairs = games // 2 if duplicate else games
    per_chunk = chunk_size // 2 if duplicate else chunk_size
    tasks = []
    for c, lo in enumerate(range(0, n_pairs, per_chunk)):
        hi = min(lo + per_chunk, n_pairs)
        n = (hi - lo) * (2 if duplicate else 1)
        tasks.append(
            ChunkTask(
                mid,
                matchup_no,
                c,
                a,
                b,
                rules,
                seed,
                lo,
                hi,
                duplicate,
                record_hands,
                games,
                chunk_time_limit(n, per_game_seconds, chunk_floor_seconds),
                record_log and record_hands,
                decision_seconds,
                game_seconds,
            )
        )
    return mid, tasks
