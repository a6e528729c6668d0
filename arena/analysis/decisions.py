"""Why a bot loses: every decision graded by the equity of each legal option.

Backgammon players have GNU Backgammon's rollouts, chess players the
engines' blunder marks.  This module does the same for a finished run:

1. **The bot's own view.**  A game is replayed exactly from its stored
   action log (:func:`arena.engine.replay.log_from_actions`); before each
   decision of the analysed seat the engine builds the view that seat was
   given (:func:`arena.engine.step.build_view`), nothing more.
2. **Every legal option's equity.**  :func:`bots.analyzer.evaluate` draws
   ``samples`` deals of the hidden cards from that view with the search
   toolkit's opponent model (monte-carlo's), plays every option on the same
   deals with the same rollout random numbers (common random numbers), and
   scores each finished hand by the chance of winning the game from the
   score it leaves (monte-carlo's game-value table).  Then the options
   within ``refine_z`` standard errors of the best are played on
   ``refine`` times ``samples`` fresh deals more (:func:`bots.analyzer.refine`),
   so close calls are settled by more than noise.  Per option: the mean
   (the *equity*, a chance of winning the game) and its standard error.
3. **The loss** of the decision is best minus chosen equity: never negative,
   since the chosen option is one of those compared, and with the standard
   error of the paired difference.  Error rates are mean losses per
   decision in thousandths of a game (x1000, like backgammon's
   millipoints); a decision losing at least ``doubtful`` thousandths is
   *doubtful*, at least ``blunder`` a *blunder*.

The hidden cards are never used to choose what to evaluate, nor to value
it: the deals come from the view.  ``perfect = true`` is the one exception,
and is labelled *hindsight* wherever it shows: every option is rolled out
on the true deal (the opponent's real hand and the real stock order).

Determinism: decision ``pos`` of game ``g`` draws its random numbers from
``mix_seed(mix_seed(seed, g), pos)`` only, so an analysis gives the same
table for a seed on one worker, on many, or on Dask.  Work is split into
tasks of a few games (:class:`AnalysisTask`, pure: everything it needs
travels with it), run by the run layer's executors
(:mod:`arena.run.schedule`), and each task's rows are stored as the part
its number names, whatever order the tasks finish in.

A note on bias: the best option's mean is the largest of noisy means, so a
decision whose options are truly equal still shows a small positive loss,
of the order of its standard error (the second stage shrinks it where it
matters, among close options).  ``samples`` trades that floor against
time; ``scripts/bench_analyze.py convergence`` measures how the error rates
settle as samples grow.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from arena.analysis.quantiles import t_quantile
from arena.analysis.render import own_folder, text_width
from arena.engine._jit import jit
from arena.engine.cards import card_str
from arena.engine.layout import (
    PH_BIG_GIN,
    PH_DISCARD,
    PH_DRAW,
    PH_KNOCK,
    PH_UPCARD_DEALER,
    PH_UPCARD_NONDEALER,
    S_HAND_NO,
    S_SCORE,
    S_STOCK_POS,
    V_SIZE,
)
from arena.engine.replay import ReplayError, log_from_actions, replay_steps
from arena.engine.rng import RNG_WORDS, mix_seed, seed_rng
from arena.engine.rules_array import rules_array
from arena.engine.step import build_view
from arena.settings.analysis import TABLE, TABLE_PERFECT, AnalysisError, AnalysisSettings, load_settings
from arena.settings.config import MAX_WORKERS

__all__ = [
    "KINDS",
    "AnalysisError",
    "AnalysisSettings",
    "AnalysisTask",
    "TABLE",
    "TABLE_PERFECT",
    "GameJob",
    "analyse_game",
    "analyse_run",
    "error_rates",
    "game_decisions",
    "load_settings",
    "worst",
]

#: Decision kinds, in the order tables show them.
KINDS = ("upcard", "draw", "discard", "knock", "big_gin")
KIND_OF_PHASE = {
    PH_UPCARD_NONDEALER: "upcard",
    PH_UPCARD_DEALER: "upcard",
    PH_DRAW: "draw",
    PH_BIG_GIN: "big_gin",
    PH_DISCARD: "discard",
    PH_KNOCK: "knock",
}
#: Games per task: small enough to spread 200 games over workers, large enough to amortise a task.
GAMES_PER_TASK = 4


# --- one game -------------------------------------------------------------------------------


@dataclass(frozen=True)
class GameJob:
    """One stored game to analyse: its seed, its stored answers, its bots, the seats to grade."""

    game_id: int
    seed: int
    actions: bytes  # the stored answers, one byte each (the store's actions column)
    names: tuple[str, str]
    matchup: str
    seats: tuple[int, ...]


@dataclass(frozen=True)
class AnalysisTask:
    """A few games and everything needed to grade them (pure: any worker can run it)."""

    rules: tuple[int, ...]
    settings: AnalysisSettings
    games: tuple[GameJob, ...]
    part: int = 0  # its place in the analysis table: parts are stored by number, whatever order they finish in

    @property
    def label(self) -> str:
        return f"games {self.games[0].game_id}..{self.games[-1].game_id}" if self.games else "no games"

    @property
    def key(self) -> str:
        return f"analyse-{self.part:05d}"


def _option_text(kind: str, option: int) -> str:
    if kind == "discard":
        return card_str(int(option), False)
    if kind == "draw":
        return "pile" if option else "stock"
    if kind in ("upcard",):
        return "take" if option else "pass"
    if kind == "knock":
        return "knock" if option else "play on"
    return "declare" if option else "play on"


def decision_rng(seed: int, game_id: int, pos: int) -> np.ndarray:
    """The generator of decision ``pos`` of game ``game_id``: a function of the three alone."""
    rng = np.zeros(RNG_WORDS, dtype=np.uint64)
    _seed_decision(rng, seed, game_id, pos)
    return rng


@jit
def _seed_decision(rng, seed, game_id, pos):
    seed_rng(rng, mix_seed(mix_seed(seed, game_id), pos))


def analyse_game(
    job: GameJob, rules_array: np.ndarray, settings: AnalysisSettings, *, positions: Sequence[int] | None = None
) -> list[dict[str, Any]]:
    """One row per graded decision of ``job``'s seats (see :data:`COLUMNS`).

    ``positions``: grade only these places of the game's log (tests).
    Decisions with a single legal option are not graded.  Raises
    :class:`AnalysisError` when the stored answers do not replay.
    """
    from bots.analyzer import MAX_OPTIONS, evaluate

    rules_array = np.ascontiguousarray(rules_array, dtype=np.int64)
    answers = np.frombuffer(job.actions, dtype=np.uint8).astype(np.int64)
    view = np.zeros(V_SIZE, dtype=np.int64)
    options = np.zeros(MAX_OPTIONS, dtype=np.int64)
    mean = np.zeros(MAX_OPTIONS)
    se = np.zeros(MAX_OPTIONS)
    diff_se = np.zeros(MAX_OPTIONS)
    no_truth = np.empty(0, dtype=np.int64)
    wanted = None if positions is None else set(int(p) for p in positions)
    rows: list[dict[str, Any]] = []
    pos = -1  # the decision's place in the log
    deals = 0
    try:
        log = log_from_actions(job.seed, rules_array, answers)
        for step in replay_steps(job.seed, rules_array, log):
            if step.kind == "deal":
                deals += 1
            if step.kind != "decision":
                continue
            pos += 1
            seat, phase, action, before = step.seat, step.phase, step.action, step.before
            assert before is not None  # a decision step carries the state before it
            if seat not in job.seats or (wanted is not None and pos not in wanted):
                continue
            build_view(before, rules_array, seat, view)
            rng = decision_rng(settings.seed, job.game_id, pos)
            truth = before if settings.perfect else no_truth
            n, best = evaluate(view, settings.samples, rng, truth, options, mean, se, diff_se)
            if n < 2:
                continue  # a forced move: nothing to grade
            opts = options[:n].tolist()
            if action not in opts:
                raise AnalysisError(f"game {job.game_id}: logged answer {action} at {pos} is not a legal option")
            k = opts.index(action)
            kind = KIND_OF_PHASE[phase]
            rows.append(
                {
                    "game_id": job.game_id,
                    "matchup": job.matchup,
                    "bot": job.names[seat],
                    "opponent": job.names[1 - seat],
                    "seat": seat,
                    "hand": int(before[S_HAND_NO]) + 1,
                    "step": pos,
                    "view_step": pos + deals,
                    "kind": kind,
                    "stock": 52 - int(before[S_STOCK_POS]),
                    "score": int(before[S_SCORE + seat]),
                    "opp_score": int(before[S_SCORE + 1 - seat]),
                    "chosen": int(action),
                    "best": int(opts[best]),
                    "chosen_text": _option_text(kind, action),
                    "best_text": _option_text(kind, opts[best]),
                    "eq_chosen": float(mean[k]),
                    "eq_best": float(mean[best]),
                    "loss": float(mean[best] - mean[k]),
                    "loss_se": float(diff_se[k]),
                    "n_options": n,
                    "options": opts,
                    "equities": mean[:n].tolist(),
                    "ses": se[:n].tolist(),
                }
            )
    except ReplayError as exc:
        raise AnalysisError(f"game {job.game_id}: the stored action log does not replay: {exc}") from None
    return rows


#: The analysis table's columns and types (one row per graded decision).
SCHEMA = pa.schema(
    [
        ("game_id", pa.int64()),
        ("matchup", pa.string()),
        ("bot", pa.string()),
        ("opponent", pa.string()),
        ("seat", pa.int8()),
        ("hand", pa.int16()),
        ("step", pa.int32()),
        ("view_step", pa.int32()),
        ("kind", pa.string()),
        ("stock", pa.int8()),
        ("score", pa.int32()),
        ("opp_score", pa.int32()),
        ("chosen", pa.int16()),
        ("best", pa.int16()),
        ("chosen_text", pa.string()),
        ("best_text", pa.string()),
        ("eq_chosen", pa.float64()),
        ("eq_best", pa.float64()),
        ("loss", pa.float64()),
        ("loss_se", pa.float64()),
        ("n_options", pa.int8()),
        ("options", pa.list_(pa.int16())),
        ("equities", pa.list_(pa.float64())),
        ("ses", pa.list_(pa.float64())),
    ]
)
COLUMNS = tuple(SCHEMA.names)


def rows_table(rows: list[dict[str, Any]]) -> pa.Table:
    """Decision rows as an analysis table of :data:`SCHEMA`."""
    return pa.Table.from_pylist(rows, schema=SCHEMA)


def run_task(task: AnalysisTask) -> pa.Table:
    """Grade every game of a task (what a worker runs)."""
    rules = np.array(task.rules, dtype=np.int64)
    rows: list[dict[str, Any]] = []
    for job in task.games:
        rows += analyse_game(job, rules, task.settings)
    return rows_table(rows)


def graded_part(task: AnalysisTask) -> tuple[int, pa.Table]:
    """A task's part number and its table: what the run layer's executors run for ``arena analyze``."""
    return task.part, run_task(task)


def _results(tasks: Iterable[AnalysisTask], workers: int, client: Any) -> Iterator[tuple[int, pa.Table]]:
    """Each task's ``(part, table)``, as they finish, on the run layer's executors (:mod:`arena.run.schedule`).

    The executor's order never shows: parts are stored by their number, and
    read back in that order.  A task that fails (its worker died twice) is a
    one-line :class:`AnalysisError`.
    """
    from arena.run.schedule import ChunkFailure, executor_for

    for out in executor_for(graded_part, workers, client).results(tasks):
        if isinstance(out, ChunkFailure):
            raise AnalysisError(f"grading {out.task.label} failed: {out.reason}")
        yield out


# --- a run ----------------------------------------------------------------------------------


@dataclass
class AnalysisResult:
    """What :func:`analyse_run` did: the table written, its settings, decisions and games graded."""

    table: str
    settings: AnalysisSettings
    games: int
    decisions: int
    seconds: float
    bots: list[str] = field(default_factory=list)
    earlier: str = ""  # what became of the analysis this one took the place of ("" when there was none)
    resumed: int = 0  # games kept from an interrupted pass of the same analysis
    resumed_decisions: int = 0  # .. and their decisions


def run_rules(store: Any) -> np.ndarray:
    """The rules the run's games were played by, as the engine's array (the store reads them)."""
    return rules_array(store.rules())


def game_jobs(
    store: Any, bot: str | None, games: int | None, game: int | None, opponent: str | None = None
) -> Iterator[GameJob]:
    """The games to grade, in play order, streamed chunk by chunk."""
    if game is not None:
        rec = store.game_record(game)
        if rec.actions is None:
            raise AnalysisError(f"{store.dir}: game {game} has no stored action log (run with record_log = true)")
        g = rec.game
        names = (str(g["bot0"]), str(g["bot1"]))
        seats = _seats(names, bot, opponent)
        if not seats:
            played = f"{names[0]} vs {names[1]}"
            if bot is not None and bot not in names:
                raise AnalysisError(f"{store.dir}: bot '{bot}' did not play game {game} ({played})")
            who = f"'{bot}'" if bot is not None else "either bot"
            raise AnalysisError(f"{store.dir}: game {game} ({played}) is not {who} against '{opponent}'")
        yield GameJob(int(game), int(g["seed"]), rec.actions.astype(np.uint8).tobytes(), names, rec.matchup.name, seats)
        return
    left = games
    for chunk in store.chunks(["game_id", "seed", "bot0", "bot1", "forfeit_seat"], actions=True):
        if chunk.actions is None:
            raise AnalysisError(
                f"{store.dir}: {chunk.matchup} has no stored action logs (run with record_hands and record_log on)"
            )
        acts = dict(zip(chunk.actions["game_id"].tolist(), chunk.actions["actions"].tolist(), strict=True))
        for gid, seed, b0, b1 in zip(
            chunk.games["game_id"].tolist(),
            chunk.games["seed"].tolist(),
            chunk.games["bot0"].astype(str).tolist(),
            chunk.games["bot1"].astype(str).tolist(),
            strict=True,
        ):
            seats = _seats((b0, b1), bot, opponent)
            if not seats or gid not in acts:
                continue
            if left is not None and left <= 0:
                return
            yield GameJob(int(gid), int(seed), bytes(acts[gid]), (b0, b1), chunk.matchup, seats)
            if left is not None:
                left -= 1


def _seats(names: tuple[str, str], bot: str | None, opponent: str | None = None) -> tuple[int, ...]:
    """The seats to grade in a game of ``names``: ``bot``'s (every seat if None), facing ``opponent`` if given."""
    return tuple(
        s for s in (0, 1) if (bot is None or names[s] == bot) and (opponent is None or names[1 - s] == opponent)
    )


def _bots_of(store: Any) -> list[str]:
    out: list[str] = []
    for m in store.matchups():
        for b in (m.bot_a, m.bot_b):
            if b not in out:
                out.append(b)
    return out


def _tasks(jobs: Iterable[GameJob], rules: np.ndarray, settings: AnalysisSettings) -> Iterator[AnalysisTask]:
    rules_t = tuple(int(x) for x in rules)
    batch: list[GameJob] = []
    part = 0
    for j in jobs:
        batch.append(j)
        if len(batch) == GAMES_PER_TASK:
            yield AnalysisTask(rules_t, settings, tuple(batch), part)
            batch, part = [], part + 1
    if batch:
        yield AnalysisTask(rules_t, settings, tuple(batch), part)


def analyse_run(
    run_dir: str | Path,
    settings: AnalysisSettings | None = None,
    *,
    bot: str | None = None,
    opponent: str | None = None,
    games: int | None = None,
    game: int | None = None,
    workers: int = 1,
    client: Any = None,
    scheduler: str | None = None,
    store_result: bool = True,
    progress: Callable[[int, int], None] | None = None,
) -> tuple[AnalysisResult, pd.DataFrame | None]:
    """Grade the decisions of ``bot`` (default: every bot) in a run's games and store the table.

    ``opponent``: only in games against that bot.
    ``games``: the first N games (of that bot) in play order; ``game``: one
    game id.  ``workers`` local processes, or a Dask ``client`` (or its
    ``scheduler`` address).  The table goes to the run store as the
    analysis :data:`TABLE` (hindsight: :data:`TABLE_PERFECT`), replacing
    the previous one of that name, one part per task; one ``game`` goes to
    that name + :data:`ONE_GAME` and leaves the run's analysis as it is.  Returns the result
    and, for ``game``, that game's rows.  ``progress(games done, games
    planned or 0)``.
    """
    import time

    from arena.run.store import RunStore, StoreError, as_input_error

    settings = settings or AnalysisSettings()
    # One game is graded apart: looking at a game must not replace (or set aside) the run's analysis,
    # which the report reads; the viewer finds it there too (game_decisions).
    stored_as = settings.table if game is None else settings.table + ONE_GAME
    if games is not None and game is not None:
        raise AnalysisError("give --games or --game, not both")
    if games is not None and games < 1:
        raise AnalysisError(f"--games {games} must be at least 1")
    if not 0 <= workers <= MAX_WORKERS:
        raise AnalysisError(f"--workers {workers} is not allowed (0 for one per core, up to {MAX_WORKERS})")
    run = Path(run_dir)
    try:
        store = RunStore(run)
    except StoreError as exc:
        raise as_input_error(exc, AnalysisError) from None
    known = _bots_of(store)
    for who in (bot, opponent):
        if who is not None and who not in known:
            raise AnalysisError(f"{run}: no bot '{who}' in this run (bots: {', '.join(known) or 'none'})")
    if bot is not None and bot == opponent:
        raise AnalysisError(f"--bot and --opponent both name '{bot}': a bot never plays itself in a run")
    rules = run_rules(store)
    own_client = None
    if client is None and scheduler:
        from arena.run.schedule import DaskMissing, SchedulerAddressError, connect_scheduler

        try:
            client = own_client = connect_scheduler(scheduler)
        except DaskMissing:
            raise AnalysisError("--scheduler needs Dask: pip install 'gin-arena[dask]'") from None
        except SchedulerAddressError as exc:  # an unreachable scheduler passes through: the machine's fault
            raise AnalysisError(str(exc)) from None
    start = time.monotonic()
    earlier = ""
    planned = games or (1 if game is not None else 0)
    n_games = n_dec = resumed = kept_dec = 0
    shown: list[pa.Table] = []
    writer = None
    try:
        info = {**asdict(settings), "bot": bot, "opponent": opponent, "games": games, "game": game}
        if store_result:
            writer = RunStore.open_for_writing(run, what="arena analyze")
        # Staged: a failure anywhere (a --game that isn't there, a log that doesn't replay, a lost worker,
        # Ctrl-C) leaves the earlier analysis as it was, and no partial one in its place; the games graded
        # are kept for the next pass of the same analysis, which grades only the others (not for one --game).
        staged = writer.staged_analysis(stored_as, info, resume=game is None) if writer else contextlib.nullcontext()
        with staged as put:
            done: set[int] = set()
            for kept in put.kept(["game_id"]) if put is not None else ():
                n_dec += len(kept)
                done.update(int(x) for x in kept["game_id"])
            n_games = resumed = len(done)
            kept_dec = n_dec
            if progress is not None and resumed:
                progress(n_games, planned)
            jobs = (j for j in game_jobs(store, bot, games, game, opponent) if j.game_id not in done)
            for part, table in _results(_tasks(jobs, rules, settings), workers, client):
                n_dec += table.num_rows
                n_games += len(set(table.column("game_id").to_pylist())) if table.num_rows else 0
                if put is not None:
                    put(part, table)
                if game is not None:
                    shown.append(table)
                if progress is not None:
                    progress(n_games, planned)
            if n_dec == 0:
                raise AnalysisError(f"{run}: no decision to grade (no stored game with an action log{_for(bot)})")
            if progress is not None and planned > n_games:  # --games asked for more than there were: done
                progress(n_games, n_games)
            if writer is not None and game is None:  # complete: the earlier one makes way for it
                earlier = set_aside(writer, stored_as, info)
    except StoreError as exc:
        raise as_input_error(exc, AnalysisError) from None
    finally:
        if writer is not None:
            writer.close()
        if own_client is not None:
            own_client.close()
    res = AnalysisResult(
        stored_as,
        settings,
        n_games,
        n_dec,
        time.monotonic() - start,
        [bot] if bot else known,
        earlier,
        resumed,
        kept_dec,
    )
    frame = pa.concat_tables(shown).to_pandas(use_threads=False) if shown else None
    return res, frame


#: The suffix of the table ``--game N`` writes (``decisions-game``): one game's grades, replaced by the next.
ONE_GAME = "-game"

#: What makes two analyses the same one: a rerun of the same bot, opponent and settings replaces it.
SAME_ANALYSIS = ("bot", "opponent", "samples", "seed", "perfect", "doubtful", "blunder")


def kept_name(table: str, info: dict[str, Any]) -> str:
    """The name an analysis is kept under once a later one of other bots or settings takes ``table``."""
    who = re.sub(r"[^A-Za-z0-9_-]", "_", str(info.get("bot") or "all"))[:20]
    key = json.dumps([info.get(k) for k in SAME_ANALYSIS], sort_keys=True, default=str)
    return f"{table}-{who}-{hashlib.sha256(key.encode()).hexdigest()[:8]}"


def _described(info: dict[str, Any]) -> str:
    who = f"bot '{info['bot']}'" if info.get("bot") else "every bot"
    vs = f" against '{info['opponent']}'" if info.get("opponent") else ""
    return f"{who}{vs} at {info.get('samples')} samples, seed {info.get('seed')}"


def set_aside(store: Any, table: str, info: dict[str, Any]) -> str:
    """Make room for a new analysis ``table`` of ``info``; returns one line saying what became of the earlier one.

    Analyses accumulate per bot and settings: the latest is ``table`` (what
    the report and the viewer show), and an earlier one of other bots or
    settings is kept under :func:`kept_name`.  An earlier one of the same bot
    and settings is replaced, and the line says so.
    """
    from arena.run.store import StoreError

    store.drop_analysis(kept_name(table, info))  # an older copy of this very analysis, kept when others came
    if table not in store.analyses():
        return ""
    try:
        old = store.analysis_info(table)
    except StoreError:
        return f"replaces the unreadable analysis '{table}'"
    if kept_name(table, old) == kept_name(table, info):
        return f"replaces the earlier analysis '{table}' of {_described(old)} (the same bot and settings)"
    kept = kept_name(table, old)
    store.rename_analysis(table, kept)
    return f"the earlier analysis of {_described(old)} is kept as '{kept}'"


def _for(bot: str | None) -> str:
    return f" for bot '{bot}'" if bot else ""


# --- reading an analysis back: error rates, worst decisions, one game -----------------------


def read_parts(run_dir: str | Path, table: str = TABLE, columns: Sequence[str] | None = None) -> Iterator[pd.DataFrame]:
    """The stored analysis ``table`` of a run, part by part (streamed)."""
    from arena.run.store import RunStore

    yield from RunStore(run_dir).analysis_parts(table, columns)


@dataclass
class _Sums:
    """Per (bot, kind): sums over games, kept per game for the cluster-robust interval."""

    n: dict[int, int] = field(default_factory=dict)
    loss: dict[int, float] = field(default_factory=dict)
    doubtful: int = 0
    blunders: int = 0


def error_rates(parts: Iterable[pd.DataFrame], doubtful: float, blunder: float, conf: float = 0.95) -> pd.DataFrame:
    """Per bot and decision kind (and ``all``): error rate x1000 with its interval, doubtful and blunder counts.

    The error rate is the mean loss per decision, in thousandths of a game.
    Decisions of one game are not independent, so the interval is the
    cluster-robust one of a ratio, clustered by game, with a Student t quantile on
    games - 1 degrees of freedom as every interval of :mod:`arena.analysis.stats`
    (a normal quantile is too narrow when a bot was graded in a few games).
    Streams: only per-game sums are kept.
    """
    sums: dict[tuple[str, str], _Sums] = {}
    for df in parts:
        if df.empty:
            continue
        loss = df["loss"].to_numpy() * 1000.0
        for kind_all in (False, True):
            keys = df["kind"].where(~pd.Series(kind_all, index=df.index), "all")
            g = pd.DataFrame(
                {"bot": df["bot"], "kind": keys, "game_id": df["game_id"], "loss": loss, "one": 1}
            ).groupby(["bot", "kind", "game_id"], sort=False)
            agg = g.agg(n=("one", "sum"), loss=("loss", "sum"))
            for (b, k, gid), row in agg.iterrows():
                s = sums.setdefault((b, k), _Sums())
                s.n[gid] = s.n.get(gid, 0) + int(row["n"])
                s.loss[gid] = s.loss.get(gid, 0.0) + float(row["loss"])
            for (b, k), sub in pd.DataFrame({"bot": df["bot"], "kind": keys, "loss": loss}).groupby(
                ["bot", "kind"], sort=False
            ):
                s = sums.setdefault((b, k), _Sums())
                s.doubtful += int(((sub["loss"] >= doubtful) & (sub["loss"] < blunder)).sum())
                s.blunders += int((sub["loss"] >= blunder).sum())
    rows = []
    for (b, k), s in sums.items():
        n = np.array(list(s.n.values()), dtype=float)
        lsum = np.array([s.loss[g] for g in s.n], dtype=float)
        total = n.sum()
        rate = lsum.sum() / total
        g = len(n)
        se = math.sqrt(g / (g - 1) * float(((lsum - rate * n) ** 2).sum())) / total if g > 1 else float("nan")
        z = t_quantile(conf, g - 1) if g > 1 else float("nan")
        rows.append(
            {
                "bot": b,
                "kind": k,
                "decisions": int(total),
                "games": g,
                "error_rate": rate,
                "ci_low": max(0.0, rate - z * se) if g > 1 else float("nan"),
                "ci_high": rate + z * se if g > 1 else float("nan"),
                "doubtful": s.doubtful,
                "blunders": s.blunders,
                "per_game_loss": lsum.sum() / g,
            }
        )
    out = pd.DataFrame(rows)
    if out.empty:
        return out
    order = {k: i for i, k in enumerate((*KINDS, "all"))}
    out["_k"] = out["kind"].map(order)
    return out.sort_values(["bot", "_k"]).drop(columns="_k").reset_index(drop=True)


def worst(parts: Iterable[pd.DataFrame], n: int = 20) -> pd.DataFrame:
    """The ``n`` decisions with the largest loss (streamed: keeps ``n`` rows at a time)."""
    keep: pd.DataFrame | None = None
    for df in parts:
        if df.empty:
            continue
        both = df if keep is None else pd.concat([keep, df], ignore_index=True)
        keep = both.nlargest(n, "loss")
    return keep.reset_index(drop=True) if keep is not None else pd.DataFrame(columns=list(COLUMNS))


def game_decisions(run_dir: str | Path, game_id: int) -> tuple[str, pd.DataFrame] | None:
    """``(table, rows)`` of one game's graded decisions from the stored analyses, or None.

    The run's analysis is preferred to a one-game one (``--game``), a sampled one to a hindsight one.
    """
    from arena.run.store import RunStore

    store = RunStore(run_dir)
    for table in (TABLE, TABLE_PERFECT, TABLE + ONE_GAME, TABLE_PERFECT + ONE_GAME):
        if table not in store.analyses():
            continue
        hits = [df[df["game_id"] == game_id] for df in store.analysis_parts(table)]
        hits = [h for h in hits if len(h)]
        if hits:
            return table, pd.concat(hits, ignore_index=True).sort_values(["step", "seat"]).reset_index(drop=True)
    return None


def game_text(rows: pd.DataFrame, settings: dict[str, Any] | AnalysisSettings, only_losses: bool = True) -> str:
    """One game's graded decisions as terminal lines: step, bot, kind, chosen, best, equities, loss."""
    s = settings if isinstance(settings, dict) else asdict(settings)
    doubtful, blunder = float(s["doubtful"]), float(s["blunder"])
    hind = " (HINDSIGHT: rolled out on the true hidden cards)" if s.get("perfect") else ""
    lines = [
        f"{len(rows)} decisions graded at {s['samples']} samples{hind}; loss in thousandths of a game "
        f"(doubtful >= {doubtful:g}, blunder >= {blunder:g})",
        f"{'step':>4} {'hand':>4} {'bot':<16} {'kind':<8} {'chosen':<8} {'best':<8} "
        f"{'eq.chosen':>9} {'eq.best':>8} {'loss':>7} {'+-se':>6}  mark",
    ]
    shown = 0
    for r in rows.itertuples():
        loss = 1000 * r.loss
        mark = "BLUNDER" if loss >= blunder else "doubtful" if loss >= doubtful else ""
        if only_losses and loss < 0.5:
            continue
        shown += 1
        lines.append(
            f"{r.step:>4} {r.hand:>4} {str(r.bot)[:16]:<16} {r.kind:<8} {r.chosen_text:<8} {r.best_text:<8} "
            f"{r.eq_chosen:>9.3f} {r.eq_best:>8.3f} {loss:>7.1f} {1000 * r.loss_se:>6.1f}  {mark}"
        )
    if only_losses:
        lines.append(f"({len(rows) - shown} decisions with a loss under 0.5 thousandths not shown)")
    return "\n".join(lines)


def rates_text(rates: pd.DataFrame) -> str:
    """The error-rate table as terminal lines."""
    w = text_width(rates["bot"], 18)
    lines = [
        f"{'bot':<{w}} {'kind':<8} {'decisions':>9} {'error x1000':>11} {'95% CI':>15} {'doubtful':>8} {'blunders':>8}"
    ]
    for r in rates.itertuples():
        ci = f"{r.ci_low:.1f}..{r.ci_high:.1f}" if np.isfinite(r.ci_low) else "-"
        lines.append(
            f"{str(r.bot):<{w}} {r.kind:<8} {r.decisions:>9,} {r.error_rate:>11.2f} {ci:>15} "
            f"{r.doubtful:>8,} {r.blunders:>8,}"
        )
    return "\n".join(lines)


def valid_table_name(name: str) -> bool:
    return bool(re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}", name))


# --- where people see it: the report's section and the viewer's data ----------------------


@dataclass
class ReportData:
    """What the report's section shows of a run's analysis."""

    table: str
    info: dict[str, Any]
    rates: pd.DataFrame
    worst: pd.DataFrame
    plot: Path
    games: int = 0  # games graded (every bot's; a game lies in one part of the table)


def report_data(run_dir: str | Path, n_worst: int = 20) -> ReportData | None:
    """The stored analysis of a run, summarised for the report (None when there is none).

    The sampled analysis is shown when there is one, else the hindsight one.
    Writes ``plots/decisions.png``.  Streams the table twice (rates, worst).
    """
    from arena.analysis import plots
    from arena.run.store import RunStore, StoreError

    run = Path(run_dir)
    try:
        store = RunStore(run)
        names = store.analyses()
        table = next((t for t in (TABLE, TABLE_PERFECT) if t in names), None)
        if table is None:
            return None
        info = store.analysis_info(table)
        cols = ["game_id", "bot", "kind", "loss"]
        per_part: list[int] = []  # games graded, counted in the rates' pass (a game lies in one part)

        def counted(parts: Iterable[pd.DataFrame]) -> Iterator[pd.DataFrame]:
            for part in parts:
                per_part.append(int(part["game_id"].nunique()))
                yield part

        rates = error_rates(counted(store.analysis_parts(table, cols)), float(info["doubtful"]), float(info["blunder"]))
        if rates.empty:
            return None
        bad = worst(store.analysis_parts(table), n_worst)
    except StoreError:
        return None
    label = " (HINDSIGHT: true hidden cards)" if info.get("perfect") else ""
    plot = plots.decision_errors(
        rates,
        own_folder(run / "plots") / "decisions.png",
        f"Error rate per decision kind at {info['samples']} samples{label}, 95% interval",
    )
    return ReportData(table, info, rates, bad, plot, sum(per_part))
