"""The tournament runner: matchups split into chunks, played on an executor,
saved chunk by chunk, resumable, and the same for a seed on any number of workers.

Work is cut into chunks of duplicate pairs of one matchup.  A chunk is played
by :func:`play_chunk` (in a worker process) and written atomically to
``<run>/chunks/<matchup-id>/<chunk>.games.parquet`` (and ``.hands.parquet``);
a chunk whose file exists is done, so an interrupted run continues where it
stopped.  A matchup's id hashes everything its games depend on - both bots'
source hashes and parameters, the rules, the seed, the games and chunk size -
so a changed bot file gets its pairs replayed, never mixed with old games.

Deal seeds depend on the run seed and the pair number only, so every matchup
plays the same deals (as chess testers give every engine the same openings),
and nothing depends on which worker played which chunk or in what order
chunks finished.  The pool is any ``concurrent.futures.Executor``; by
default local processes, which are replaced if one dies (its chunks retried
once).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import json
import logging
import multiprocessing
import os
import platform
import shutil
import sys
from collections.abc import Callable, Mapping
from concurrent.futures import FIRST_COMPLETED, Executor, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from arena._jit import jit
from arena.bot import Bot, load_bot
from arena.config import ConfigError, TournamentConfig
from arena.play import play_batch
from arena.records import games_frame, hands_frame
from arena.rng import mix_seed
from arena.rules import Rules

log = logging.getLogger("arena.tournament")

STREAM_PAIRS = 7_000_000  # the run seed's stream for pair seeds (distinct from a game's own streams)
CHUNKS = "chunks"


class TournamentError(RuntimeError):
    """A run that cannot go on (folder from other rules, pool failure...); one line."""


# --- what a worker needs to rebuild a bot ------------------------------------------


@dataclass(frozen=True)
class BotRef:
    """A picklable recipe for a bot: where it comes from and its parameters."""

    name: str
    source: str  # "bots.simple" for a built-in, else a file path
    params: tuple[tuple[str, float], ...]
    source_hash: str

    @classmethod
    def of(cls, bot: Bot) -> "BotRef":
        return cls(bot.name, bot.source, tuple(zip(bot.param_names, bot.params.tolist())), bot.source_hash)

    def identity(self) -> list[Any]:
        return [self.name, self.source_hash, [list(p) for p in self.params]]


_WORKER_BOTS: dict[BotRef, Bot] = {}


def _bot_from_ref(ref: BotRef) -> Bot:
    bot = _WORKER_BOTS.get(ref)
    if bot is None:
        base = load_bot(ref.source[len("bots."):] if ref.source.startswith("bots.") else ref.source)
        bot = base.with_params(ref.name, dict(ref.params)) if ref.params else dataclasses.replace(base, name=ref.name)
        if bot.source_hash != ref.source_hash:
            raise TournamentError(f"bot '{ref.name}' changed on disk while the run was going ({ref.source})")
        _WORKER_BOTS[ref] = bot
    return bot


# --- chunks -------------------------------------------------------------------------


@dataclass(frozen=True)
class ChunkTask:
    """Pairs ``pair_lo..pair_hi`` of one matchup: everything a worker needs."""

    run_dir: str
    matchup_id: str
    matchup: int
    chunk: int
    bot_a: BotRef
    bot_b: BotRef
    rules: tuple[tuple[str, Any], ...]
    seed: int
    pair_lo: int
    pair_hi: int
    duplicate: bool
    record_hands: bool

    @property
    def games_path(self) -> Path:
        return Path(self.run_dir) / CHUNKS / self.matchup_id / f"{self.chunk:05d}.games.parquet"

    @property
    def hands_path(self) -> Path:
        return Path(self.run_dir) / CHUNKS / self.matchup_id / f"{self.chunk:05d}.hands.parquet"

    @property
    def n_games(self) -> int:
        n = self.pair_hi - self.pair_lo
        return 2 * n if self.duplicate else n


@jit
def _pair_seeds(seed, lo, hi):
    out = np.empty(hi - lo, dtype=np.int64)
    for i in range(lo, hi):
        out[i - lo] = np.int64(mix_seed(seed, STREAM_PAIRS + i) >> np.uint64(1))
    return out


def pair_seeds(seed: int, lo: int, hi: int) -> np.ndarray:
    """Deal seeds of pairs ``lo..hi-1`` of a run seeded ``seed`` (the same in every matchup)."""
    return _pair_seeds(seed, lo, hi)


def _atomic_parquet(df: pd.DataFrame, path: Path) -> None:
    tmp = path.with_name(path.name + f".tmp{os.getpid()}")
    df.to_parquet(tmp, index=False)
    os.replace(tmp, path)


def play_chunk(task: ChunkTask) -> tuple[pd.DataFrame, int, list[str]]:
    """Play one chunk and write its files; returns (its games, hand count, forfeit messages).

    The games come back too so the runner need not read the file it just
    had written (a chunk's games are a few MB; its hands stay on disk).

    With duplicate deals, pair ``i`` is played twice with seed ``s_i``: first
    bot_a in seat 0 (swap 0), then bot_b in seat 0 (swap 1).  Without, game
    ``i`` uses seed ``s_i`` and the seats alternate.
    """
    a, b = _bot_from_ref(task.bot_a), _bot_from_ref(task.bot_b)
    rules = Rules(**dict(task.rules)).to_array()
    seeds = pair_seeds(task.seed, task.pair_lo, task.pair_hi)
    pair_no = np.arange(task.pair_lo, task.pair_hi, dtype=np.int64)
    if task.duplicate:
        parts = [(0, seeds, pair_no), (1, seeds, pair_no)]
    else:
        parts = [(0, seeds[0::2], pair_no[0::2]), (1, seeds[1::2], pair_no[1::2])]
    frames, hand_frames, errors = [], [], []
    offset = 0
    for swap, s, pairs in parts:
        seat0, seat1 = (a, b) if swap == 0 else (b, a)
        rec = play_batch(seat0, seat1, rules, s, record_hands=task.record_hands)
        g = games_frame(rec.games, s)
        g.insert(0, "pair", pairs)
        g.insert(1, "swap", np.int8(swap))
        g["bot0"] = seat0.name
        g["bot1"] = seat1.name
        g["error"] = ""
        g.loc[g["forfeit_seat"] >= 0, "error"] = rec.errors  # one message per forfeit, in game order
        frames.append(g)
        errors.extend(rec.errors)
        if task.record_hands:
            h = hands_frame(rec.hands)
            h["game"] = h["game"] + offset
            hand_frames.append(h)
        offset += len(s)
    games = pd.concat(frames, ignore_index=True)
    # Order: by pair, then swap; hands follow their games through "row".
    order = np.lexsort((games["swap"].to_numpy(), games["pair"].to_numpy()))
    games = games.iloc[order].reset_index(drop=True)
    task.games_path.parent.mkdir(parents=True, exist_ok=True)
    n_hands = 0
    if task.record_hands:
        hands = pd.concat(hand_frames, ignore_index=True)
        rank = np.empty(len(order), dtype=np.int64)
        rank[order] = np.arange(len(order))
        hands["game"] = rank[hands["game"].to_numpy()]
        hands = hands.sort_values(["game", "hand"], kind="stable").reset_index(drop=True)
        n_hands = len(hands)
        _atomic_parquet(hands, task.hands_path)
    _atomic_parquet(games, task.games_path)  # last: its presence marks the chunk done
    if errors:  # logged from the worker; multiprocessing-logging brings it to the main process
        log.warning("%s: %d forfeit(s); first: %s", _task_name(task), len(errors), errors[0])
    return games, n_hands, errors


# --- the run --------------------------------------------------------------------------


@dataclass
class TournamentResult:
    run_dir: Path
    config: TournamentConfig
    games: pd.DataFrame
    hands: pd.DataFrame | None
    failed_chunks: list[str] = field(default_factory=list)
    stopped_early: str = ""

    def pair_summary(self) -> pd.DataFrame:
        """Per matchup, in play order: :func:`arena.stats.pair_stats` (wins, draws, win rate with CI...)."""
        from arena.stats import pair_stats

        order = pd.unique(self.games["matchup"])
        return pair_stats(self.games).set_index("matchup").reindex(order).reset_index()

    def bot_summary(self) -> pd.DataFrame:
        """Per bot, best first: :func:`arena.stats.bot_stats` (games, wins, forfeits, win rate...)."""
        from arena.stats import bot_stats

        return bot_stats(self.games).sort_values("win_rate", ascending=False).reset_index(drop=True)


def matchup_id(a: BotRef, b: BotRef, cfg: TournamentConfig, rules: Rules) -> str:
    blob = json.dumps([a.identity(), b.identity(), rules.to_dict(), cfg.seed, cfg.games_per_pair,
                       cfg.duplicate, cfg.chunk_size, cfg.record_hands], sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def plan(cfg: TournamentConfig, bots: Mapping[str, Bot], run_dir: Path) -> list[ChunkTask]:
    """Every chunk of the run, in a fixed order (matchup, then chunk)."""
    rules = cfg.resolved_rules()
    rules_items = tuple(rules.to_dict().items())
    n_pairs = cfg.games_per_pair // 2 if cfg.duplicate else cfg.games_per_pair
    per_chunk = cfg.chunk_size // 2 if cfg.duplicate else cfg.chunk_size
    tasks = []
    for m, (sa, sb) in enumerate(cfg.matchups()):
        ra, rb = BotRef.of(bots[sa]), BotRef.of(bots[sb])
        mid = matchup_id(ra, rb, cfg, rules)
        for c, lo in enumerate(range(0, n_pairs, per_chunk)):
            tasks.append(ChunkTask(str(run_dir), mid, m, c, ra, rb, rules_items, cfg.seed, lo,
                                   min(lo + per_chunk, n_pairs), cfg.duplicate, cfg.record_hands))
    return tasks


def _check_run_dir(run_dir: Path, cfg: TournamentConfig) -> None:
    """A folder played under other rules/seed/games can't be continued."""
    old_path = run_dir / "config.toml"
    if not old_path.exists():
        return
    from arena.config import load_config

    try:
        old = load_config(old_path)
    except ConfigError as exc:
        raise TournamentError(f"{run_dir}: its config.toml is unreadable ({exc}); use another --name") from None
    if old.resolved_rules() != cfg.resolved_rules():
        raise TournamentError(f"{run_dir} was played under different rules; use another --name "
                              "or the same rules to resume")
    for key in ("seed", "games_per_pair", "duplicate", "chunk_size", "record_hands", "format"):
        if getattr(old, key) != getattr(cfg, key):
            raise TournamentError(f"{run_dir} was played with {key} = {getattr(old, key)!r}, not "
                                  f"{getattr(cfg, key)!r}; use another --name or the same setting to resume")


def _manifest(cfg: TournamentConfig, bots: Mapping[str, Bot], started: str, status: str, **extra: Any) -> dict:
    import numba

    from arena import __version__

    return {
        "package": "gin-arena", "version": __version__, "status": status, "name": cfg.name, "seed": cfg.seed,
        "started": started, "ended": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "machine": {"node": platform.node(), "platform": platform.platform(), "cpus": os.cpu_count(),
                    "python": platform.python_version(), "numba": numba.__version__, "numpy": np.__version__},
        "bots": {b.name: {"source": b.source, "sha256": b.source_hash, "path": b.path,
                          "params": dict(zip(b.param_names, b.params.tolist()))} for b in bots.values()},
        **extra,
    }


def _write_json(path: Path, obj: Any) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(obj, indent=2, default=str))
    os.replace(tmp, path)


def _default_workers(cfg: TournamentConfig) -> int:
    return cfg.workers or os.cpu_count() or 1


def _local_pool(workers: int) -> ProcessPoolExecutor:
    # fork: workers inherit the compiled kernels and loaded bots, and
    # multiprocessing-logging (which needs fork) forwards their log records.
    methods = multiprocessing.get_all_start_methods()
    ctx = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
    return ProcessPoolExecutor(max_workers=workers, mp_context=ctx)


def run_tournament(
    config: TournamentConfig | str | Path | Mapping[str, Any],
    *,
    executor: Executor | None = None,
    progress: bool | Callable[[int, int], None] = True,
    base_dir: Path | None = None,
    stop: Callable[[pd.DataFrame], str] | None = None,
) -> TournamentResult:
    """Play (or continue) a tournament and return its games (and hands).

    ``executor``: any concurrent.futures executor (a cluster's, say); by
    default local processes, ``config.workers`` of them (0 = all cores), or
    none at all for one worker.  ``stop``: called with the games finished so
    far, in chunk order, after each chunk; a non-empty string ends the run
    early with that reason (used for SPRT).  Finished chunks are on disk as
    soon as they finish; Ctrl-C leaves them there for the next run.
    ``config`` may also be a path to a config TOML or a dict of its keys.
    """
    if isinstance(config, (str, Path)):
        from arena.config import load_config

        base_dir = base_dir or Path(config).parent
        config = load_config(config)
    elif not isinstance(config, TournamentConfig):
        from arena.config import config_from_dict

        config = config_from_dict(config)
    cfg = config.with_absolute_paths(base_dir)
    bots = cfg.load_bots(base_dir)
    for b in bots.values():
        if b.fast:
            log.info("bot '%s': %s, from %s", b.name, b.path, b.source)
        else:
            log.warning("bot '%s' runs on the plain Python path (slower): %s", b.name, b.plain_reason)
    run_dir = Path(cfg.results_dir) / cfg.name
    _check_run_dir(run_dir, cfg)
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "config.toml").write_text(cfg.to_toml())
    (run_dir / "rules.toml").write_text(_rules_toml(cfg.resolved_rules()))
    started = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
    tasks = plan(cfg, bots, run_dir)
    todo = [t for t in tasks if not t.games_path.exists()]
    total = sum(t.n_games for t in tasks)
    done_games = total - sum(t.n_games for t in todo)
    _write_json(run_dir / "manifest.json", _manifest(cfg, bots, started, "running", chunks=len(tasks)))
    bar = _progress(progress, total, done_games)
    failed: list[str] = []
    played: dict[ChunkTask, pd.DataFrame] = {}  # games of the chunks this call plays
    stopped = ""
    used = len(tasks)
    try:
        if stop is not None:
            stopped, used = _run_ordered(tasks, todo, executor, _default_workers(cfg), bar, failed, stop, played)
        else:
            _run_all(todo, executor, _default_workers(cfg), bar, failed, played)
    except KeyboardInterrupt:
        _write_json(run_dir / "manifest.json", _manifest(cfg, bots, started, "interrupted", chunks=len(tasks)))
        raise
    finally:
        bar.close()
    games, hands = collect(run_dir, tasks[:used], keep=tasks, played=played)
    status = "complete" if not failed and not stopped and len(games) == total else (
        "stopped early" if stopped else "incomplete")
    forfeits = games.loc[games["forfeit_seat"] >= 0]
    losers = np.where(forfeits["forfeit_seat"] == 0, forfeits["bot0"], forfeits["bot1"])
    _write_json(run_dir / "manifest.json", _manifest(
        cfg, bots, started, status, chunks=len(tasks), games=len(games), failed_chunks=failed,
        stopped_early=stopped, forfeits=pd.Series(losers).value_counts().to_dict()))
    return TournamentResult(run_dir, cfg, games, hands, failed, stopped)


def _rules_toml(rules: Rules) -> str:
    import tomli_w

    return "# The resolved rules of this run.\n" + tomli_w.dumps(rules.to_dict())


class _Bar:
    def __init__(self, total: int, done: int, callback: Callable[[int, int], None] | None, show: bool):
        self.callback = callback
        self.done = done
        self.total = total
        self.tqdm = None
        if show:
            from tqdm import tqdm

            self.tqdm = tqdm(total=total, initial=done, unit="game", unit_scale=True, dynamic_ncols=True,
                             desc="games", file=sys.stderr, smoothing=0.1)

    def update(self, n: int) -> None:
        self.done += n
        if self.tqdm is not None:
            self.tqdm.update(n)
        if self.callback is not None:
            self.callback(self.done, self.total)

    def close(self) -> None:
        if self.tqdm is not None:
            self.tqdm.close()


def _progress(progress: bool | Callable[[int, int], None], total: int, done: int) -> _Bar:
    if callable(progress):
        return _Bar(total, done, progress, False)
    return _Bar(total, done, None, bool(progress))


def _task_name(t: ChunkTask) -> str:
    return f"{t.bot_a.name} vs {t.bot_b.name} chunk {t.chunk} (pairs {t.pair_lo}..{t.pair_hi - 1})"


def _run_all(todo: list[ChunkTask], executor: Executor | None, workers: int, bar: _Bar, failed: list[str],
             played: dict[ChunkTask, pd.DataFrame]) -> None:
    """Play chunks in any order.

    If a local worker process dies, the pool is gone with every chunk it
    held; those chunks are retried once, each in a one-process pool of its
    own (``workers`` at a time), so a chunk that kills its process again is
    pinned down and reported while the others finish.
    """
    if not todo:
        return
    if executor is None and workers == 1:
        for t in todo:
            played[t] = play_chunk(t)[0]
            bar.update(t.n_games)
        return
    own = executor is None
    pool = executor or _local_pool(workers)
    retry: list[ChunkTask] = []
    try:
        futures: dict[Future, ChunkTask] = {pool.submit(play_chunk, t): t for t in todo}
        for f in _as_completed(futures):
            t = futures[f]
            try:
                played[t] = f.result()[0]
                bar.update(t.n_games)
            except BrokenProcessPool:
                retry.append(t)
    except KeyboardInterrupt:
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    finally:
        if own:
            pool.shutdown(wait=True, cancel_futures=True)
    if not retry:
        return
    if not own:
        failed.extend(_task_name(t) for t in retry)
        raise TournamentError("the executor's workers died; the finished chunks are saved, rerun to retry")
    log.warning("a worker process died; retrying %d unfinished chunk(s) one process each", len(retry))
    _run_isolated(sorted(retry, key=lambda t: (t.matchup, t.chunk)), workers, bar, failed, played)


def _as_completed(futures):
    pending = set(futures)
    while pending:
        done, pending = wait(pending, return_when=FIRST_COMPLETED)
        yield from done


def _run_isolated(tasks: list[ChunkTask], workers: int, bar: _Bar, failed: list[str],
                  played: dict[ChunkTask, pd.DataFrame]) -> None:
    running: dict[Future, tuple[ChunkTask, ProcessPoolExecutor]] = {}
    queue = list(tasks)
    try:
        while queue or running:
            while queue and len(running) < workers:
                t = queue.pop(0)
                ex = _local_pool(1)
                running[ex.submit(play_chunk, t)] = (t, ex)
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            for f in done:
                t, ex = running.pop(f)
                ex.shutdown(wait=False)
                try:
                    played[t] = f.result()[0]
                    bar.update(t.n_games)
                except BrokenProcessPool:
                    failed.append(_task_name(t))
                    log.error("chunk failed again (its worker process died): %s", _task_name(t))
    finally:
        for _, ex in running.values():
            ex.shutdown(wait=False, cancel_futures=True)


def _run_ordered(tasks: list[ChunkTask], todo: list[ChunkTask], executor: Executor | None, workers: int,
                 bar: _Bar, failed: list[str], stop: Callable[[pd.DataFrame], str],
                 played: dict[ChunkTask, pd.DataFrame]) -> tuple[str, int]:
    """Play chunks, asking ``stop`` after each in chunk order (deterministic early stop).

    Returns the stop reason ("" if none) and how many chunks, in plan order,
    the result consists of; chunks played ahead of a stop stay on disk but
    are not part of the result, so it is the same on any number of workers.
    """
    todo_set = set(todo)
    own = executor is None and workers > 1
    pool = executor or (_local_pool(workers) if own else None)
    futures: dict[ChunkTask, Future] = {}
    window = max(2, 2 * workers)
    frames: list[pd.DataFrame] = []
    try:
        for i, t in enumerate(tasks):
            # keep a window of chunks ahead in flight
            for u in tasks[i:i + window]:
                if u in todo_set and u not in futures and pool is not None:
                    futures[u] = pool.submit(play_chunk, u)
            if t in todo_set:
                played[t] = play_chunk(t)[0] if pool is None else futures.pop(t).result()[0]
                bar.update(t.n_games)
            frames.append(_read_chunk(t, sum(len(f) for f in frames), played))
            reason = stop(pd.concat(frames, ignore_index=True))
            if reason:
                return reason, i + 1
        return "", len(tasks)
    finally:
        for f in futures.values():
            f.cancel()
        if own and pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)


def _read_chunk(t: ChunkTask, offset: int, played: Mapping[ChunkTask, pd.DataFrame] | None = None
                ) -> pd.DataFrame:
    """A finished chunk's games with the run-level columns (ids, matchup, winner's name).

    Taken from ``played`` when this run played the chunk, else read from disk.
    """
    cached = (played or {}).get(t)
    g = cached.copy(deep=False) if cached is not None else pd.read_parquet(t.games_path)
    g.insert(0, "game_id", np.arange(offset, offset + len(g), dtype=np.int64))
    g.insert(1, "matchup", f"{t.bot_a.name} vs {t.bot_b.name}")
    g.insert(2, "bot_a", t.bot_a.name)
    g.insert(3, "bot_b", t.bot_b.name)
    seat = g["winner_seat"].to_numpy()
    g["winner"] = np.where(seat == 0, g["bot0"], np.where(seat == 1, g["bot1"], ""))
    return g


def collect(run_dir: Path, tasks: list[ChunkTask], keep: list[ChunkTask] | None = None,
            played: Mapping[ChunkTask, pd.DataFrame] | None = None) -> tuple[pd.DataFrame, pd.DataFrame | None]:
    """Join the finished chunks into games.parquet (and hands.parquet), in plan order.

    ``game_id`` numbers the games in that order; hands carry the game_id.
    Chunk folders of matchups no longer in the plan (a bot changed) are removed.
    """
    game_parts, hand_parts = [], []
    offset = 0
    for t in tasks:
        if not t.games_path.exists():
            continue
        g = _read_chunk(t, offset, played)
        game_parts.append(g)
        if t.record_hands and t.hands_path.exists():
            h = pd.read_parquet(t.hands_path)
            h.insert(0, "game_id", h.pop("game") + offset)
            hand_parts.append(h)
        offset += len(g)
    if game_parts:
        games = pd.concat(game_parts, ignore_index=True)
    else:
        games = pd.DataFrame(columns=["game_id", "matchup", "bot_a", "bot_b", "winner"])
    hands = pd.concat(hand_parts, ignore_index=True) if hand_parts else None
    _atomic_parquet(games, run_dir / "games.parquet")
    if hands is not None:
        _atomic_parquet(hands, run_dir / "hands.parquet")
    chunks = run_dir / CHUNKS
    if chunks.exists():
        for d in chunks.iterdir():
            if d.is_dir() and d.name not in {t.matchup_id for t in (keep or tasks)}:
                shutil.rmtree(d, ignore_errors=True)
    return games, hands
