"""A run from start to end: validate, lock, plan, play, store, account.

:func:`run_tournament` is the whole job behind ``arena run``: it loads and
checks the config and every bot *before* touching the run folder, takes the
folder's lock, plans the chunks this run still lacks, hands them to a
schedule (local processes, a Dask cluster, or inline), stores each chunk as
it arrives, and writes the manifest.  It holds no games beyond the chunks in
flight, so its memory does not grow with the run.

Exit status lives in :attr:`TournamentResult.status`: ``complete`` only when
every planned chunk is stored.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import logging
import os
import platform
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn, Protocol, TypedDict

import numpy as np
import pandas as pd

from arena.botkit.bot import Bot
from arena.external import close_bot, external_of
from arena.external.wall import hide, hide_from_others
from arena.loading.load import check_unplayed_variants, load_bots
from arena.run.plan import BotSpec, ChunkTask, matchup_id, own_deals_seed, plan_matchup, play_order
from arena.run.progress import progress_bar
from arena.run.schedule import (
    ChunkFailure,
    DaskCluster,
    DaskMissing,
    LocalProcesses,
    SchedulerAddressError,
    SchedulerLost,
    SchedulerUnreachable,
    connect_scheduler,
)
from arena.run.store import RunStore, StoredChunk, StoreError
from arena.settings.config import ConfigError, TournamentConfig, load_config
from arena.settings.rules import Rules

log = logging.getLogger("arena.run")
#: A run with a bot on the plain path and chunks larger than this is told that smaller ones save more often.
SLOW_CHUNK_HINT = 100


class TournamentError(RuntimeError):
    """A run that cannot go on (folder from other rules, no scheduler...); one line."""


class IncompatibleRunError(TournamentError):
    """The run folder holds games played otherwise (rules, seed, sizes): ``fact`` says how, without the
    hint, which is ``arena run``'s (a sweep, which has no ``--name``, gives its own)."""

    def __init__(self, fact: str, hint: str):
        super().__init__(f"{fact}; {hint}")
        self.fact = fact


class RunEnvError(TournamentError):
    """A run stopped by its environment, not its input: the Dask scheduler unreachable or lost; one line."""


class Interrupted(KeyboardInterrupt):
    """A run stopped by a signal (SIGINT, SIGTERM): finished chunks stay stored."""

    def __init__(self, signame: str = "SIGINT") -> None:
        super().__init__(signame)
        self.signame = signame


#: Signals that asked the run to stop and have not stopped it yet (:func:`request_stop`).
_stop_requests: list[str] = []


def request_stop(signame: str) -> NoReturn:
    """Stop the run: for a signal handler in the driver, which calls it instead of raising itself.

    The handler's exception is raised where the signal lands, and a signal
    that lands inside a C library's callback (llvmlite's, while numba loads
    or compiles code, a few seconds of a run's start) is printed as "Exception
    ignored" and dropped: the run played on to the end and exited 0.  So the
    request is also noted, and the run raises it again at its next step
    (:func:`_raise_if_stop_requested`) until it is handled.
    """
    _stop_requests.append(signame)
    raise Interrupted(signame)


def _raise_if_stop_requested(*, clear: bool = False) -> None:
    """Raise the pending stop request, if any (``clear``: outside the run's own handling, which clears it)."""
    if _stop_requests:
        signame = _stop_requests[-1]
        if clear:
            _stop_requests.clear()
        raise Interrupted(signame) from None


@dataclass
class TournamentResult:
    """What a run left in its folder, read back through the store on demand."""

    run_dir: Path
    config: TournamentConfig
    status: str
    failed_chunks: list[str] = field(default_factory=list)
    stopped_early: str = ""
    sprt: str = ""  # the SPRT's closing line, when the run had one
    kept: list[str] = field(default_factory=list)  # stored matchups this config does not play
    quarantined: list[str] = field(default_factory=list)
    findings: list[str] = field(default_factory=list)  # what the folder check found (and repaired) first
    changed: list[str] = field(default_factory=list)  # chunks that changed on disk during the run

    @property
    def store(self) -> RunStore:
        return RunStore(self.run_dir)

    @property
    def games(self) -> pd.DataFrame:
        """Every game of the run's current matchups (loads them all: for small runs and notebooks)."""
        return self.store.games()

    @property
    def hands(self) -> pd.DataFrame | None:
        return self.store.hands()


class StopRule(Protocol):
    """Decides when a one-matchup run may stop: built by ``run_tournament(stop=...)`` from the config.

    The runner feeds it the games of every stored chunk (:meth:`add`: those
    an earlier run stored first, then each as it arrives, in any order) and
    asks :meth:`advance` after each; once that returns True the run stops.
    The SPRT of :class:`arena.analysis.sprt.SprtGate` is one.
    """

    @property
    def decision(self) -> str | None:
        """The verdict (e.g. ``H1 accepted``), or None while undecided."""

    @property
    def used(self) -> int:
        """Chunks 0..used-1 are what the verdict rests on; the run keeps and shows only those."""

    def add(self, chunk: int, games: pd.DataFrame) -> None:
        """The games of one stored chunk."""

    def advance(self) -> bool:
        """Take in what :meth:`add` gave; True once decided."""

    def summary(self) -> str:
        """One closing line for the manifest and the report."""


class ChunkSink(Protocol):
    """Takes in each chunk the run stores, as it arrives: ``run_tournament(sink=...)``.

    The tables then need no second reading from the run folder: a
    :class:`arena.analysis.tally.Tally` summarises the run this way for the
    tables printed after it and its report.  Chunks come in the order they
    finish; a chunk may come twice (a task retried); a chunk given here may
    later stop counting (it failed the end-of-run check, or an SPRT stop
    left it out), which the sink finds by asking the store.
    """

    def add(self, matchup_id: str, chunk: StoredChunk) -> None:
        """One stored chunk of matchup ``matchup_id``."""


# --- helpers ---------------------------------------------------------------------------------


def _config(
    config: TournamentConfig | str | Path | Mapping[str, Any], base_dir: Path | None
) -> tuple[TournamentConfig, Path | None]:
    if isinstance(config, (str, Path)):
        base_dir = base_dir or Path(config).parent
        config = load_config(config)
    elif not isinstance(config, TournamentConfig):
        from arena.settings.config import config_from_dict

        if not isinstance(config, Mapping):
            raise ConfigError(
                f"config must be a TournamentConfig, a path to a .toml file or a dict of its keys, not {config!r}"
            )
        config = config_from_dict(config)
    return config.with_absolute_paths(base_dir), base_dir


def _check_compatible(store: RunStore, cfg: TournamentConfig) -> None:
    """A folder played under other rules, seed or sizes can't be continued."""
    try:
        old = store.played_config()
    except StoreError as exc:
        raise IncompatibleRunError(
            str(exc), "restore it (the games are intact), or use --fresh or another --name"
        ) from None
    if old is None:
        return
    played, now = old.resolved_rules(), cfg.resolved_rules()
    if played != now:
        there, here = played.to_dict(), now.to_dict()
        key = next(k for k in here if there[k] != here[k])
        raise IncompatibleRunError(
            f"{store.dir} was played under different rules ({key} = {there[key]!r} there, {here[key]!r} now)",
            "use another --name or the same rules to resume",
        )
    for key in ("seed", "games_per_pair", "duplicate", "chunk_size", "record_hands"):
        if getattr(old, key) != getattr(cfg, key):
            raise IncompatibleRunError(
                f"{store.dir} was played with {key} = {getattr(old, key)!r}, not {getattr(cfg, key)!r}",
                "use another --name or the same setting to resume",
            )


def _oriented(
    stored: Mapping[str, Any], a: BotSpec, b: BotSpec, common: _MatchupSettings, shared_deals: bool
) -> tuple[BotSpec, BotSpec, _MatchupSettings, str]:
    """The matchup of ``a`` and ``b`` (its two bots, its settings and its id) the way round the folder
    already holds it, else as listed.  A matchup's games depend on which bot is its first (its id says
    so): a config listing the bots in another order, or a gauntlet after a submit (which lists the new
    bot last), played every stored matchup again with the seats swapped, and warned that its settings
    had changed, though nothing had.  A stored matchup still current is preferred to a superseded one."""
    ways = []
    for x, y in ((a, b), (b, a)):
        settings = common
        if not shared_deals:  # the matchup's own deals: what its games depend on, so in its id too
            seed = own_deals_seed(x, y, common["rules"], common["seed"], common["duplicate"])
            settings = {**common, "seed": seed}
        ways.append((x, y, settings, matchup_id(x, y, **settings)))

    def rank(way) -> int:  # stored and current, then stored, then not stored (ties: as listed)
        m = stored.get(way[3])
        return 2 if m is None else int(m.superseded)

    return min(ways, key=rank)


def _say_superseded(store: RunStore, mid: str, a: BotSpec, b: BotSpec) -> None:
    """Say so when this run's matchup of two bots replaces the stored one of the same names: a bot's file,
    parameters or settings changed, so its games are played again and the earlier ones leave the tables
    (kept on disk; :meth:`RunStore.register`).  It happened with no word but a games count."""
    now = {"bot_a": a.identity(), "bot_b": b.identity()}
    for old in store.matchups():
        if old.id == mid or {old.bot_a, old.bot_b} != {a.name, b.name}:
            continue
        was = {old.bot_a: old.identity.get("bot_a"), old.bot_b: old.identity.get("bot_b")}
        changed = [s.name for s, key in ((a, "bot_a"), (b, "bot_b")) if was.get(s.name) != now[key]]
        log.warning(
            "%s changed since the %d stored game(s) of %s: the matchup is played again, and its earlier games "
            "leave the tables (they stay in the folder)",
            " and ".join(f"bot '{n}'" for n in changed) if changed else "the matchup's settings",
            sum(r.games for r in store.index().stored_of(old)),
            old.name,
        )


def _say_left_out(store: RunStore, before: Mapping[str, Any], planned: list[str]) -> None:
    """Say which stored matchups this run does not play left the tables because one of their bots changed
    (:func:`arena.run.store.index._changed_bot`): a matchup an earlier ``arena submit`` played, of a bot
    whose file has changed since.  Such games stayed in the tables beside the new version's, under one name."""
    pairs = {frozenset((m.bot_a, m.bot_b)) for m in store.matchups() if m.id in planned}
    for m in store.matchups(current=False):
        was = before.get(m.id)
        if m.superseded and was is not None and not was.superseded and frozenset((m.bot_a, m.bot_b)) not in pairs:
            log.warning(
                "a bot of %s changed since its %d stored game(s), which this run does not play: they leave the "
                "tables (they stay in the folder); a run or a submit with both bots plays the matchup again",
                m.name,
                sum(r.games for r in store.index().stored_of(m)),
            )


def _manifest(cfg: TournamentConfig, bots: Mapping[str, Bot], started: str, status: str, **extra: Any) -> dict:
    import numba

    from arena import __version__

    return {
        "package": "gin-arena",
        "version": __version__,
        "status": status,
        "name": cfg.name,
        "seed": "secret" if cfg.seed == "secret" else cfg.seed,
        "started": started,
        "ended": _now(),
        "machine": {
            "node": platform.node(),
            "platform": platform.platform(),
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "numba": numba.__version__,
            "numpy": np.__version__,
        },
        "bots": {
            b.name: {
                "source": b.source,
                "sha256": b.source_hash,
                "path": b.path,
                "params": b.param_dict(),
                "sandbox": _sandbox_of(b),
            }
            for b in bots.values()
        },
        **extra,
    }


def _sandbox_of(bot: Bot) -> str:
    """How a bot ran: "in-process", or its own process behind the "wall" or the "weak" sandbox."""
    ext = external_of(bot)
    return "in-process" if ext is None else ext.limits.sandbox


class _MatchupSettings(TypedDict):
    """What a matchup's games depend on besides its two bots (the same for every matchup)."""

    rules: Rules
    seed: int
    games: int
    duplicate: bool
    chunk_size: int
    record_hands: bool


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


def _rules_toml(rules: Rules) -> str:
    import tomli_w

    return "# The resolved rules of this run.\n" + tomli_w.dumps(rules.to_dict())


class _Bar:
    """Progress in games: a bar on stderr (whole lines when it is not a terminal), a callback, or nothing."""

    def __init__(self, total: int, done: int, progress: bool | Callable[[int, int], None]):
        self.callback = progress if callable(progress) else None
        self.done, self.total = done, total
        self.playing = 0  # games finished inside chunks not stored yet (shown, not counted as done)
        self.bar = (
            progress_bar("games", "game", total, done, unit_scale=True, smoothing=0.1) if progress is True else None
        )

    def warm_up(self, workers: int) -> None:
        """The first chunk of each of ``workers`` workers carries their start (forks, compiling): the
        time left is estimated from the rate after them."""
        warm = getattr(self.bar, "warm_up", None)
        if warm is not None:
            warm(workers)

    def update(self, n: int) -> None:
        """A chunk of ``n`` games is stored."""
        self.done += n
        # Its games were among those shown as being played (at most n of them): what is shown
        # stays put, never back, until the schedule's next count says what is still being played.
        self.playing = max(0, self.playing - n)
        if self.bar is not None:
            self.bar.set(min(self.total, self.done + self.playing))
        if self.callback is not None:
            self.callback(self.done, self.total)

    def in_flight(self, games: int) -> None:
        """``games`` finished inside chunks still being played: a chunk of a slow bot (a kit player, a
        program) may take many minutes, and the line would stand still until it is stored."""
        if self.bar is not None and games != self.playing:
            self.playing = games
            self.bar.set(min(self.total, self.done + games))

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _schedule(cfg: TournamentConfig, client: Any, schedule: Any):
    """The schedule for this run, and a function that releases what it started."""
    if schedule is not None:
        return schedule, lambda: None
    if client is not None:
        return DaskCluster(client), lambda: None
    if cfg.scheduler:
        c = _connect(cfg.scheduler)
        return DaskCluster(c), c.close
    return LocalProcesses(cfg.workers or os.cpu_count() or 1), lambda: None


def _connect(address: str, timeout: str | None = None) -> Any:
    try:
        return connect_scheduler(address, timeout)
    except DaskMissing:
        raise TournamentError("scheduler = ... needs Dask: pip install 'gin-arena[dask]'") from None
    except SchedulerAddressError as exc:
        raise TournamentError(str(exc)) from None
    except SchedulerUnreachable as exc:
        raise RunEnvError(str(exc)) from None


def _lost_line(address: str, stored: int, total: int, run_dir: Path) -> str:
    return (
        f"lost the Dask scheduler at {address}; {stored} of {total} chunk(s) are stored in {run_dir}. "
        "Run the same command to resume: add --scheduler tcp://<host>:<port> for a new scheduler, "
        "--scheduler '' to play on this machine, or --retry-scheduler N to wait for it"
    )


# --- the run -------------------------------------------------------------------------------


def run_tournament(
    config: TournamentConfig | str | Path | Mapping[str, Any],
    *,
    client: Any = None,
    schedule: Any = None,
    progress: bool | Callable[[int, int], None] = True,
    base_dir: Path | None = None,
    stop: Callable[[TournamentConfig], StopRule] | None = None,
    fresh: bool = False,
    retry_scheduler: int = 0,
    retry_wait: float = 60.0,
    sink: ChunkSink | None = None,
    then: Callable[[TournamentResult], None] | None = None,
    keep_stops: bool = False,
) -> TournamentResult:
    """Play (or continue) a tournament; every finished chunk is stored as it arrives.

    ``config``: a :class:`TournamentConfig`, a path to its TOML or a dict of
    its keys.  ``client``: a ``distributed.Client`` to play on (else the
    config's ``scheduler`` address, else ``workers`` local processes).
    ``schedule``: any object with ``results(tasks)`` (e.g. ``Inline()``).
    ``stop``: two bots only; builds the run's :class:`StopRule` from the
    config (``stop=SprtGate`` of :mod:`arena.analysis.sprt`: stop once the
    SPRT of the config's ``[sprt]`` table decides, in chunk order, so the stop
    falls in the same place on any number of workers).  ``fresh``: delete the folder's results first - only
    after the config and every bot have loaded and the lock is ours.
    Ctrl-C (KeyboardInterrupt) leaves every finished chunk stored.
    ``retry_scheduler``: when the Dask scheduler is lost, wait for it (up to
    ``retry_wait`` seconds) this many times before giving up.  ``sink``: a
    :class:`ChunkSink` given each chunk as it is stored.  ``keep_stops``: a match an earlier SPRT
    stopped keeps its stop (``arena submit``, which plays only the new bot's pairs); by default a run
    without ``stop`` plays every chunk.  ``then``: called with the result while the
    folder's lock is still held (``arena run`` writes its tables and report there), so no other writer
    (a ``--fresh`` run, a submit) can change or delete the folder under it; what it raises passes through.

    The run ends in one of these, recorded in the manifest's ``status``:
    ``complete``; ``failed`` (chunks failed, or a stored chunk changed on
    disk during the run: it is quarantined, and the next run plays it
    again); ``stopped early`` (SPRT); or, raising, ``interrupted``
    (KeyboardInterrupt, :class:`Interrupted`) or ``failed`` with the error
    (:class:`RunEnvError`, :class:`~arena.run.store.StoreEnvError`...).
    """
    cfg, base_dir = _config(config, base_dir)
    if stop is not None and len(cfg.all_bots()) != 2:
        raise TournamentError("stopping early (--sprt) needs exactly two bots (a head-to-head match)")
    try:
        check_unplayed_variants(cfg, base_dir)
        bots = load_bots(cfg, base_dir)  # every bot loads (and compiles) before the folder is touched
    except Exception:
        # A signal that landed in a bot file's top-level code came out as that file's import error, or one
        # whose exception a C callback dropped left numba to fail on its half-done work.
        _raise_if_stop_requested(clear=True)
        raise
    slow_chunks = False
    for b in bots.values():
        if b.fast:
            log.info("bot '%s': %s, from %s", b.name, b.path, b.source)
        elif b.batch_act is not None:
            log.info("bot '%s': a batched policy (lockstep batches against compiled bots), from %s", b.name, b.source)
        else:
            log.warning("bot '%s' runs on the plain Python path (slower): %s", b.name, b.plain_reason)
            slow_chunks = True
    if slow_chunks and cfg.chunk_size > SLOW_CHUNK_HINT:
        log.info(
            "a chunk is stored whole when it ends: with chunk_size = %d a slow bot's chunk may take many "
            "minutes, and a stop loses the one being played; a smaller chunk_size (say %d) saves more often",
            cfg.chunk_size,
            SLOW_CHUNK_HINT,
        )
    specs = {key: BotSpec.of(b) for key, b in bots.items()}
    for b in bots.values():
        # The chunks play the specs' own copies (worker.bot_from_spec): the processes the loading handshakes
        # started would idle here through the whole run (a Java VM each for a kit player, on a Dask client too).
        close_bot(b)
    run_dir = Path(cfg.results_dir) / cfg.name
    store = RunStore.open_for_writing(run_dir, fresh=fresh, what="arena run")
    hide(store.dir)  # no bot's wall shows the run folder, even inside a folder its command names,
    hide(cfg.results_dir)  # nor any other run under the results root (its games, configs, bots' logs, locks)
    release = lambda: None  # noqa: E731
    started = _now()
    tasks: list[ChunkTask] = []
    begun = False  # the manifest says "running": from here on, every end is recorded
    try:
        _check_compatible(store, cfg)
        seed = store.secret_seed() if cfg.seed == "secret" else int(cfg.seed)
        # The folder check (arena fsck --repair): a damaged index is rebuilt, bad files moved aside,
        # each finding named, before anything is planned: numbers and ids come from a whole index.
        findings = store.check(repair=True)
        quarantined = [f for f in findings if "quarantine" in f]
        store.write_text("config.toml", cfg.to_toml())
        rules = cfg.resolved_rules()
        store.write_rules(_rules_toml(rules))
        # What a matchup's games depend on (its id) besides its two bots; the same for every matchup.
        common = _MatchupSettings(
            rules=rules,
            seed=seed,
            games=cfg.games_per_pair,
            duplicate=cfg.duplicate,
            chunk_size=cfg.chunk_size,
            record_hands=cfg.record_hands,
        )
        n_chunks = -(-cfg.games_per_pair // cfg.chunk_size)
        planned: list[str] = []
        stored = dict(store.index().matchups)  # as found, before this run registers its own
        for sa, sb in cfg.matchups():
            spec_a, spec_b, settings, mid = _oriented(stored, specs[sa], specs[sb], common, cfg.shared_deals)
            _say_superseded(store, mid, spec_a, spec_b)
            m = store.register(
                mid,
                spec_a.name,
                spec_b.name,
                cfg.games_per_pair,
                n_chunks,
                {"bot_a": spec_a.identity(), "bot_b": spec_b.identity()},
            )
            _, ts = plan_matchup(
                spec_a,
                spec_b,
                matchup_no=m.no,
                per_game_seconds=cfg.limit("chunk_seconds_per_game"),
                chunk_floor_seconds=cfg.limit("chunk_min_seconds"),
                record_log=cfg.record_log,
                decision_seconds=cfg.limit("decision_seconds"),
                game_seconds=cfg.limit("game_seconds"),
                **settings,
            )
            tasks.extend(ts)
            planned.append(mid)
        private = tuple(sorted({p for spec in specs.values() for p in spec.own_paths()}))
        hide_from_others(private)  # here for the chunks this process plays, in each task for the workers'
        tasks = [dataclasses.replace(t, private=private) for t in tasks]
        if keep_stops:  # a submit: a match an SPRT stopped stays stopped where it was
            limits = {m.id: m.limit for m in store.matchups() if m.limit is not None}
            tasks = [t for t in tasks if t.chunk < limits.get(t.matchup_id, t.chunk + 1)]
        _say_left_out(store, stored, planned)
        kept = [m.name for m in store.matchups() if m.id not in planned]
        if kept:
            log.info("kept %d stored matchup(s) that this config does not play: %s", len(kept), ", ".join(kept))
        todo = play_order([t for t in tasks if store.stored(t.matchup_id, t.chunk) is None])
        total = sum(t.n_games for t in tasks)
        for mid in planned:  # an earlier SPRT stop counts no more: this run plays (and shows) every chunk
            if not keep_stops:
                store.set_limit(mid, None)
        store.write_manifest(
            _manifest(
                cfg, bots, started, "running", chunks=len(tasks), findings=findings, current=store.current_state()
            )
        )
        begun = True
        gate = stop(cfg) if stop is not None else None
        if gate is not None:
            todo_set = set(todo)
            for t in tasks:  # chunks stored by an earlier run feed the test first
                if t not in todo_set:
                    g = next(iter(_stored_games(store, t)), None)
                    if g is not None:
                        gate.add(t.chunk, g)
            gate.advance()
        bar = _Bar(total, total - sum(t.n_games for t in todo), progress)
        failed: list[str] = []
        try:
            if gate is None or gate.decision is None:
                sched, release = _schedule(cfg, client, schedule)
                _raise_if_stop_requested()
                bar.warm_up(int(getattr(sched, "workers", 1)))
                retries = max(0, retry_scheduler)
                while True:
                    if hasattr(sched, "on_progress"):  # local workers share their game counts, Dask's tell them
                        sched.on_progress = bar.in_flight if bar.bar is not None else None  # only a bar shows them
                    try:
                        _play(store, sched, todo, failed, bar, gate, sink)
                        break
                    except SchedulerLost as lost:
                        todo = play_order([t for t in tasks if store.stored(t.matchup_id, t.chunk) is None])
                        n_stored = len(tasks) - len(todo)
                        if retries <= 0:
                            raise RunEnvError(_lost_line(lost.address, n_stored, len(tasks), run_dir)) from None
                        retries -= 1
                        log.warning(
                            "lost the Dask scheduler at %s (%d of %d chunks stored); waiting for it to come back "
                            "(%d more tries after this one)",
                            lost.address,
                            n_stored,
                            len(tasks),
                            retries,
                        )
                        release()
                        sched, release = _reconnect(lost.address, retry_wait)
        finally:
            bar.close()
        stopped = ""
        sprt_line = ""
        if gate is not None:
            sprt_line = gate.summary()
            if gate.decision is not None and gate.used < len(tasks):
                stopped = f"{gate.decision}: {sprt_line}"
                store.set_limit(tasks[0].matchup_id, gate.used)
        # Before "complete": every stored chunk of this run's matchups must still be what was written.
        changed = store.verify(planned)
        missing = [t for t in tasks if store.stored(t.matchup_id, t.chunk) is None]
        if stopped and not changed:
            status = "stopped early"
        elif missing or failed or changed:
            status = "failed"
        else:
            status = "complete"
        store.checkpoint()
        store.write_manifest(
            _manifest(
                cfg,
                bots,
                started,
                status,
                chunks=len(tasks),
                games=store.n_games(),
                failed_chunks=failed,
                missing_chunks=len(missing) if not stopped else 0,
                changed_chunks=changed,
                stopped_early=stopped,
                sprt=sprt_line,
                kept_matchups=kept,
                quarantined=quarantined,
                findings=findings,
                current=store.current_state(),
            )
        )
        result = TournamentResult(
            run_dir, cfg, status, failed, stopped, sprt_line, kept, quarantined, findings, changed
        )
    except KeyboardInterrupt as exc:
        _stop_requests.clear()  # handled: this run stops here
        if begun:
            why = f"stopped by {getattr(exc, 'signame', 'SIGINT')}"
            _last_words(store, cfg, bots, started, "interrupted", tasks, why)
        raise
    except (StoreError, TournamentError) as exc:
        if begun:
            _last_words(store, cfg, bots, started, "failed", tasks, str(exc))
        raise
    except Exception:
        if not _stop_requests:
            raise
        # A signal whose exception a C callback dropped (llvmlite's), and the library it cut short then
        # failed on its half-done work (numba: "no compiled object yet"): the signal is what happened.
        signame = _stop_requests[-1]
        _stop_requests.clear()
        if begun:
            _last_words(store, cfg, bots, started, "interrupted", tasks, f"stopped by {signame}")
        raise Interrupted(signame) from None
    else:
        release()  # the workers are done; the folder stays ours until ``then`` has finished with it
        release = lambda: None  # noqa: E731
        if then is not None:
            then(result)
        return result
    finally:
        release()
        store.close()


def _play(
    store: RunStore,
    sched: Any,
    todo: list[ChunkTask],
    failed: list[str],
    bar: _Bar,
    gate: Any,
    sink: ChunkSink | None,
) -> None:
    """Play ``todo`` on ``sched``, storing each chunk as it arrives (SchedulerLost passes through)."""
    outcomes = sched.results(todo)
    try:
        for out in outcomes:
            if isinstance(out, ChunkFailure):
                failed.append(f"{out.task.label}: {out.reason}")
                log.error("chunk failed: %s: %s", out.task.label, out.reason)
                continue
            t = out.task
            store.put_chunk(t.matchup_id, t.chunk, out.games, out.hands, out.actions)
            for name, text in out.logs.items():
                store.append_log(name, text)
            if sink is not None:
                sink.add(
                    t.matchup_id, StoredChunk(t.matchup, t.bot_a.name, t.bot_b.name, t.chunk, out.games, out.hands)
                )
            if out.errors:
                log.warning("%s: %d forfeit(s); first: %s", t.label, len(out.errors), out.errors[0])
            bar.update(t.n_games)
            if gate is not None:
                gate.add(t.chunk, out.games)
                if gate.advance():
                    break
            _raise_if_stop_requested()  # a signal its handler's exception did not reach (request_stop)
    finally:
        outcomes.close()
    _raise_if_stop_requested()


def _reconnect(address: str, wait_s: float) -> tuple[Any, Callable[[], None]]:
    """A new client on ``address`` with at least one worker, waiting up to ``wait_s`` seconds."""
    import time

    deadline = time.monotonic() + wait_s
    while True:
        try:
            c = _connect(address, timeout=f"{max(1.0, deadline - time.monotonic()):.0f}s")
        except RunEnvError:
            if time.monotonic() >= deadline:
                raise RunEnvError(f"the Dask scheduler at {address} did not come back within {wait_s:.0f} s") from None
            time.sleep(1.0)
            continue
        try:
            c.wait_for_workers(1, timeout=max(1.0, deadline - time.monotonic()))
        except (OSError, TimeoutError):
            c.close()
            raise RunEnvError(
                f"the Dask scheduler at {address} came back with no worker within {wait_s:.0f} s"
            ) from None
        return DaskCluster(c), c.close


def _last_words(
    store: RunStore, cfg: TournamentConfig, bots: Mapping[str, Bot], started: str, status: str, tasks: list, why: str
) -> None:
    """The manifest and checkpoint of a run that ends early (best effort: the disk may be full)."""
    try:
        store.checkpoint()
    except StoreError:
        pass
    try:
        store.write_manifest(
            _manifest(
                cfg,
                bots,
                started,
                status,
                chunks=len(tasks),
                games=store.n_games(),
                error=why,
                current=store.current_state(),
            )
        )
    except StoreError as exc:
        log.warning("could not record the end of the run in manifest.json: %s", exc)


def _stored_games(store: RunStore, t: ChunkTask):
    """The stored games of one chunk (for an SPRT resumed over chunks an earlier run played)."""
    rec = store.stored(t.matchup_id, t.chunk)
    if rec is None:
        return
    m = store.index().matchups[t.matchup_id]
    g = store._table(m, rec, "games", ["pair", "winner", "error", "matchup", "bot_a", "bot_b"])
    if g is not None:
        yield g


__all__ = [
    "ChunkSink",
    "Interrupted",
    "RunEnvError",
    "StopRule",
    "TournamentError",
    "TournamentResult",
    "run_tournament",
    "StoreError",
]
