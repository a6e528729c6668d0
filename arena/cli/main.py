"""The ``arena`` command: run, submit, bots, rules, replay, report, plot, sweep.

Each command is a thin layer over the Python API (``arena.run_tournament``
and friends).  Every fault ends with one line ``error: ...`` on stderr and
one of these exit codes, leaving finished results untouched:

* 0 - done (``run``: every chunk stored and verified);
* 1 - chunks failed: a chunk could not be played, or a stored chunk changed
  during the run (it is quarantined; the same command plays it again);
  ``fsck``: problems found and not repaired; ``report``: chunks left out;
* 2 - bad input: a config key that does not exist, a bot file that does not
  load, a results folder from other rules or not a run folder;
* 3 - the environment: disk full, a read-only folder, no permission, the Dask
  scheduler unreachable or lost;
* 130 - interrupted by SIGINT (Ctrl-C) or SIGTERM: finished chunks are saved and
  the same command resumes.
"""

from __future__ import annotations

import contextlib
import logging
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated

import typer

from arena.cli import interrupts
from arena.cli.interrupts import EXIT_INTERRUPTED
from arena.cli.typer_app import port_problem, typer_app
from arena.settings.botref import BotRef
from arena.settings.config import LIMITS

app = typer_app(
    "Gin Arena: play Gin Rummy bots against each other, fast, and see which is better.", hoisted=("--eaai-kit",)
)


#: ``--weak-sandbox`` of ``run`` and ``check-bot``.
WeakSandbox = Annotated[
    bool,
    typer.Option(
        "--weak-sandbox",
        help="Run bots without the wall (no namespaces, no other user): only on machines that can't build it.",
    ),
]


def _print_version(value: bool) -> None:
    if value:
        import platform
        from importlib.metadata import PackageNotFoundError, version

        import arena

        try:
            numba = version("numba")
        except PackageNotFoundError:  # pragma: no cover - numba is a dependency
            numba = "missing"
        typer.echo(f"gin-arena {arena.__version__} (python {platform.python_version()}, numba {numba})")
        raise typer.Exit()


@app.callback()
def _arena(
    ctx: typer.Context,
    version: Annotated[
        bool, typer.Option("--version", callback=_print_version, is_eager=True, help="Print the version and exit.")
    ] = False,
    eaai_kit: Annotated[
        Path | None,
        typer.Option(
            "--eaai-kit",
            help=(
                "The EAAI Gin Rummy kit's jar or class folder, for eaai: players "
                "(wins over a config's eaai_kit; else GIN_ARENA_EAAI_KIT)."
            ),
        ),
    ] = None,
) -> None:
    ctx.obj = {"eaai_kit": None}
    _sigterm_as_interrupt(ctx)
    if eaai_kit is not None:
        from arena.botkit.bot import BotError
        from arena.external.eaai import use_kit

        try:
            use_kit(eaai_kit, "--eaai-kit")  # sets GIN_ARENA_EAAI_KIT: the run's worker processes inherit it
        except BotError as exc:
            _fail(str(exc))
        ctx.obj["eaai_kit"] = str(eaai_kit.resolve())  # wins over a config's eaai_kit (_kit_option)


def _sigterm_as_interrupt(ctx: typer.Context) -> None:
    """SIGTERM ends a command as the exit codes say (130 and one line) from its first moment.

    A run turns SIGTERM into a clean stop while it plays (:class:`_Signals`); before that, while the
    compiled code loads (a few seconds, with nothing written yet), and after it, SIGTERM killed the
    process with 143 and no word.  Forked workers end at once, silently, as under :class:`_Signals`;
    the handler before this one comes back when the command ends.
    """
    import os
    import signal

    me = os.getpid()

    def handler(signum: int, frame: object) -> None:
        if os.getpid() == me:
            os.write(2, f"error: interrupted ({signal.Signals(signum).name}){interrupts.kept()}\n".encode())
        os._exit(EXIT_INTERRUPTED if os.getpid() == me else 128 + signum)

    try:
        old = signal.signal(signal.SIGTERM, handler)
    except ValueError:  # not the main thread (an embedding host): leave signals to it
        return
    ctx.call_on_close(lambda: signal.signal(signal.SIGTERM, old))


def _kit_option(ctx: typer.Context) -> str | None:
    """The kit ``--eaai-kit`` named (before or after the command), as a config override: it wins over a
    config's ``eaai_kit``, as other options win over their keys."""
    return (ctx.obj or {}).get("eaai_kit")


def _check_plot_kind(kind: str) -> str:
    """--kind of ``arena plot``: one of the plot kinds, or one ``error:`` line."""
    from arena.analysis.plots import KINDS

    if kind not in KINDS:
        _fail(f"--kind {kind} is not a plot kind (kinds: {', '.join(KINDS)})")
    return kind


#: ``arena run`` alone: the shipped default round-robin (arena/configs/default.toml), from any folder.
DEFAULT_CONFIG = Path("default")


EXIT_FAILED = 1  # chunks failed (or changed during the run); fsck: problems left
EXIT_INPUT = 2  # bad input
EXIT_ENV = 3  # the environment: disk full, read-only, no permission, scheduler lost
# EXIT_INTERRUPTED = 130: SIGINT or SIGTERM (arena.cli.interrupts, which the script's entry point uses too)


def _fail(message: str, code: int = EXIT_INPUT) -> None:
    if interrupts.signalled():
        # An error that follows a Ctrl-C is the Ctrl-C (arena.cli.interrupts): a bot file's import catches
        # the KeyboardInterrupt as the file's fault ("not a bot: importing it failed: KeyboardInterrupt").
        interrupts.report_once()
        raise typer.Exit(code=EXIT_INTERRUPTED)
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code=code)


def _env_errors() -> tuple[type[Exception], ...]:
    """Faults of the machine, not the input (checked before :func:`_user_errors`, which they subclass)."""
    from arena.run.runner import RunEnvError
    from arena.run.store import StoreEnvError
    from arena.settings.rules import UnreadableError

    return (StoreEnvError, RunEnvError, UnreadableError)


def _os_error_line(exc: OSError, doing: str) -> str:
    from arena.run.store import env_error

    return str(env_error(exc, doing))


class _Signals:
    """SIGTERM and SIGINT while a run goes on: an :class:`~arena.run.runner.Interrupted` in the driver,
    through :func:`~arena.run.runner.request_stop`, so that one that lands where its exception is dropped
    (a C library's callback) still stops the run at its next step.

    Forked worker processes inherit the handler; there it ends the process
    at once (as SIGTERM did before), so the driver sees a worker that died.
    SIGINT stays ignored where it is (a background job's, the workers' own).
    """

    def __enter__(self) -> None:
        import os
        import signal

        from arena.run.runner import request_stop

        driver = os.getpid()

        def handler(signum: int, frame: object) -> None:
            if os.getpid() != driver:
                os._exit(128 + signum)
            request_stop(signal.Signals(signum).name)

        self.old = signal.signal(signal.SIGTERM, handler)
        self.old_int = signal.getsignal(signal.SIGINT)
        if self.old_int not in (signal.SIG_IGN, None):  # None: a handler set outside Python, left alone
            signal.signal(signal.SIGINT, handler)

    def __exit__(self, *exc: object) -> None:
        import signal

        signal.signal(signal.SIGTERM, self.old)
        if self.old_int not in (signal.SIG_IGN, None):
            signal.signal(signal.SIGINT, self.old_int)


def _user_errors() -> tuple[type[Exception], ...]:
    from arena.analysis.report import ReportError
    from arena.botkit.bot import BotError
    from arena.run.runner import TournamentError
    from arena.run.store import StoreError
    from arena.settings.botref import BotRefError
    from arena.settings.config import ConfigError
    from arena.settings.rules import RulesError, UnreadableError

    # UnreadableError is the machine's (exit 3 where _env_errors is caught first), and one line wherever it is not.
    return (BotError, BotRefError, ConfigError, ReportError, RulesError, TournamentError, StoreError, UnreadableError)


class _BarSafeHandler(logging.Handler):
    """Writes log lines above the progress bar instead of through it."""

    def emit(self, record: logging.LogRecord) -> None:
        from tqdm import tqdm

        try:
            tqdm.write(self.format(record), file=sys.stderr)
        except Exception:  # pragma: no cover - logging must never raise
            self.handleError(record)


def _forwarder(name: str, plain: logging.Handler) -> logging.Handler:
    """multiprocessing-logging's handler, which forwards forked workers' records
    through the main process, made safe for a broken pipe.

    Its receiving thread ends, and closes its queue, when the pipe breaks (a
    worker killed mid-write); every later record would then print a "Logging
    error" traceback.  In the main process a record then goes straight to the
    plain handler instead.
    """
    import os

    from multiprocessing_logging import MultiProcessingHandler

    class Forwarder(MultiProcessingHandler):
        main_pid = os.getpid()

        def emit(self, record: logging.LogRecord) -> None:
            if os.getpid() == self.main_pid and not self._receive_thread.is_alive():
                self.sub_handler.emit(record)
            else:
                super().emit(record)

    return Forwarder(name, sub_handler=plain)


def _setup_logging(quiet: bool) -> None:
    """Log the arena's messages to stderr, from worker processes too.

    Only the ``arena`` logger is configured (not the root), and only once;
    multiprocessing-logging forwards worker records through the main process
    when workers are forked.
    """
    import multiprocessing

    logger = logging.getLogger("arena")
    logger.setLevel(logging.WARNING if quiet else logging.INFO)
    if getattr(logger, "_arena_configured", False):
        return
    handler = _BarSafeHandler()
    handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    logger.addHandler(handler)
    logger.propagate = False
    if "fork" in multiprocessing.get_all_start_methods() and multiprocessing.get_start_method(allow_none=True) in (
        None,
        "fork",
    ):
        multiprocessing.set_start_method("fork", force=True)
        for i, plain in enumerate(list(logger.handlers)):
            logger.removeHandler(plain)
            logger.addHandler(_forwarder(f"arena-log-{i}", plain))
    logger._arena_configured = True  # type: ignore[attr-defined]


#: How the results tables count win%, in the words of the report's Methods ("no winner 0.5").
WIN_PCT_NOTE = "win%: wins plus half the games with no winner ('none'), over the games with a result"


def _print_tables(result, summary) -> None:
    from arena.analysis.render import text_width
    from arena.analysis.stats import bot_summary, pair_summary

    pairs = pair_summary(result.store, summary)
    bots = bot_summary(result.store, summary)
    wm, wb = text_width(pairs["matchup"], 40), text_width(bots["bot"], 24)
    typer.echo("")
    typer.echo(f"{'matchup':<{wm}} {'games':>7} {'wins a':>7} {'wins b':>7} {'none':>5} {'a win%':>7}")
    for r in pairs.itertuples():
        typer.echo(
            f"{r.matchup:<{wm}} {r.games:>7} {r.wins_a:>7} {r.wins_b:>7} {r.draws:>5} {100 * r.win_rate_a:>6.1f}%"
        )
    typer.echo("")
    typer.echo(f"{'bot':<{wb}} {'games':>8} {'win%':>7} {'forfeits':>9}")
    for r in bots.itertuples():
        typer.echo(f"{r.bot:<{wb}} {r.games:>8} {100 * r.win_rate:>6.1f}% {r.forfeits:>9}")
    # said, not assumed: a bot that never won reads 50.0% when every game had no winner
    typer.echo(f"\n{WIN_PCT_NOTE}")
    if summary.errors:  # say why at once: a forfeit count alone sends the user hunting through the report
        total = sum(summary.errors.values())
        typer.echo(f"\n{total:,} game(s) ended in an error or a forfeit; the commonest:")
        for text, n in summary.errors.most_common(3):
            typer.echo(f"  {n:,} x {text}")
        if len(summary.errors) > 3:
            typer.echo(f"  ... {len(summary.errors) - 3} more kinds in the report's Errors section")


def _parse_sets(items: list[str] | None) -> dict:
    from arena.settings.rules import parse_overrides

    return parse_overrides(items or [])


@app.command()
def run(
    ctx: typer.Context,
    config: Annotated[
        Path,
        typer.Argument(help="Tournament config (TOML), or a shipped example by name: default, quick, monte-carlo."),
    ] = DEFAULT_CONFIG,
    bot: Annotated[
        list[str] | None,
        typer.Option("--bot", "-b", metavar="BOT", help="Add a bot (built-in name or .py file); repeatable."),
    ] = None,
    games: Annotated[int | None, typer.Option(help="Games per matchup (even: duplicate pairs).")] = None,
    workers: Annotated[int | None, typer.Option(help="Worker processes (0 = all cores).")] = None,
    seed: Annotated[int | None, typer.Option(help="Run seed: fixes every deal and every bot's randomness.")] = None,
    name: Annotated[str | None, typer.Option(help="Run name: results go to results/<name>/.")] = None,
    rules: Annotated[str | None, typer.Option(help="Rules preset or .toml file (replaces the config's).")] = None,
    set_: Annotated[
        list[str] | None,
        typer.Option("--set", metavar="KEY=VALUE", help="Override a rule, e.g. --set knock_limit=5."),
    ] = None,
    chunk_size: Annotated[int | None, typer.Option(help="Games per chunk (unit of saving and resuming).")] = None,
    record_hands: Annotated[
        bool | None, typer.Option("--record-hands/--no-record-hands", help="Keep one row per hand.")
    ] = None,
    results_dir: Annotated[str | None, typer.Option(help="Folder for results (default: results).")] = None,
    gauntlet: Annotated[str | None, typer.Option(help="Play this bot against every bot of the config instead.")] = None,
    sprt: Annotated[bool, typer.Option("--sprt", help="Two bots only: stop once the match is decided (SPRT).")] = False,
    scheduler: Annotated[
        str | None, typer.Option(help="Play on a Dask cluster: its scheduler, e.g. tcp://host:8786.")
    ] = None,
    retry_scheduler: Annotated[
        int,
        typer.Option(
            "--retry-scheduler", metavar="N", help="When the Dask scheduler is lost, wait for it to come back N times."
        ),
    ] = 0,
    secret_seed: Annotated[
        bool,
        typer.Option(
            "--secret-seed", help="Draw a secret seed, kept in the run folder, so no bot can rebuild the deals."
        ),
    ] = False,
    weak_sandbox: WeakSandbox = False,
    fresh: Annotated[bool, typer.Option("--fresh", help="Delete an existing run of this name first.")] = False,
    resume: Annotated[
        bool, typer.Option("--resume", help="Continue an interrupted run (the default behaviour).")
    ] = False,
    report: Annotated[bool, typer.Option("--report/--no-report", help="Write the report at the end.")] = True,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar or info logs.")] = False,
) -> None:
    """Play a tournament from a config; rerunning the same command (or --resume) continues it."""
    from arena.settings.config import load_config

    _setup_logging(quiet)
    # Contradictory flags are refused, not settled silently: --fresh won over --resume (deleting the run
    # asked to be continued), and --secret-seed over --seed.
    if fresh and resume:
        _fail("--fresh deletes the run and --resume continues it; give one of them")
    if secret_seed and seed is not None:
        _fail(f"--secret-seed draws the seed and --seed {seed} gives one; give one of them")
    try:
        overrides = {
            "games_per_pair": games,
            "workers": workers,
            "seed": "secret" if secret_seed else seed,
            "name": name,
            "chunk_size": chunk_size,
            "record_hands": record_hands,
            "results_dir": results_dir,
            "scheduler": scheduler,
            "weak_sandbox": weak_sandbox or None,
            "eaai_kit": _kit_option(ctx),
        }
        if gauntlet:
            overrides.update(format="gauntlet", candidate=gauntlet)
        cfg = load_config(
            config,
            overrides,
            add_bots=tuple(bot or ()),
            rules=rules,
            rule_sets=_parse_sets(set_),
            options=_OPTIONS,
        )
        if retry_scheduler < 0:
            _fail(f"--retry-scheduler {retry_scheduler} is negative")
        _run(cfg, config.parent, fresh=fresh, sprt=sprt, report=report, quiet=quiet, retry_scheduler=retry_scheduler)
    except _env_errors() as exc:
        _fail(str(exc), EXIT_ENV)
    except _user_errors() as exc:
        _fail(str(exc))


#: The config keys ``arena run`` sets from its options, by option: their errors name the option.
_OPTIONS = {
    "games_per_pair": "--games",
    "workers": "--workers",
    "seed": "--seed",
    "name": "--name",
    "chunk_size": "--chunk-size",
    "results_dir": "--results-dir",
    "scheduler": "--scheduler",
}


def _run(
    cfg,
    base_dir: Path | None,
    *,
    fresh: bool,
    sprt: bool,
    report: bool,
    quiet: bool,
    what: str = "run",
    retry_scheduler: int = 0,
) -> None:
    """Play, print the tables, write the report; exit 1 when chunks failed, 3 on the environment, 130 on a signal."""
    from arena.analysis.sprt import SprtGate
    from arena.analysis.tally import Tally, tally_of
    from arena.run.runner import TournamentResult, run_tournament

    run_dir = Path(cfg.results_dir) / cfg.name
    typer.echo(
        f"{what} '{cfg.name}': {len(cfg.matchups())} matchup(s) x {cfg.games_per_pair} games -> {run_dir}", err=True
    )
    if cfg.scheduler:
        # A lost scheduler is said in one line below; the client's own reconnect tracebacks say nothing more.
        try:
            import distributed  # noqa: F401 - configures its loggers on import: quiet them after that
        except ImportError:
            pass
        for name in ("distributed.client", "distributed.batched"):
            logging.getLogger(name).setLevel(logging.CRITICAL)
    tally = Tally(hands=cfg.record_hands, cv=report)  # the tables and the report, summarised as chunks arrive

    def tables_and_report(result: TournamentResult) -> None:
        """Print the tables and write the report, while the run still holds the folder's lock."""
        if result.kept:
            typer.echo(
                f"kept {len(result.kept)} matchup(s) from earlier runs of this folder that this config "
                f"does not play (they stay in the tables and the report): {', '.join(result.kept)}",
                err=True,
            )
        summed = tally
        if result.store.n_games():
            # One pass over the folder only when the run's own chunks are not all it counts (a resume...).
            summed, _ = tally_of(result.store, tally, _report_bar(quiet), cv=report)
            _print_tables(result, summed.summary)
        if result.sprt:
            typer.echo(f"\n{result.sprt}")
        if result.stopped_early:
            typer.echo(f"stopped early: {result.stopped_early.split(':')[0]}")
        if report and result.store.n_games():
            from arena.analysis.report import write_report

            try:
                paths = write_report(run_dir, progress=_report_bar(quiet), tally=summed)
            except OSError as exc:
                _fail(_os_error_line(exc, f"write the report in {run_dir}"), EXIT_ENV)
            typer.echo(f"\nreport: {paths.get('report_html', run_dir)}")

    try:
        with _Signals():
            result = run_tournament(
                cfg,
                progress=not quiet,
                base_dir=base_dir,
                stop=SprtGate if sprt else None,
                fresh=fresh,
                retry_scheduler=retry_scheduler,
                sink=tally,
                then=tables_and_report,
                keep_stops=what == "submit",
            )
    except KeyboardInterrupt as exc:
        how = getattr(exc, "signame", "SIGINT")
        interrupts.report(f"finished chunks are saved in {run_dir}; run the same command to resume", how)
        raise typer.Exit(code=EXIT_INTERRUPTED) from None
    if result.status == "failed":
        if result.changed:
            typer.echo(
                f"\nerror: {len(result.changed)} stored chunk(s) changed on disk during the run and were moved to "
                f"quarantine/; first: {result.changed[0].split('; moved')[0]}; run the same command to play them again",
                err=True,
            )
        elif result.failed_chunks:
            names = sorted({f.split(" chunk ")[0] for f in result.failed_chunks})
            typer.echo(
                f"\nerror: {len(result.failed_chunks)} chunk(s) failed, in {', '.join(names)}; "
                f"first: {result.failed_chunks[0]}",
                err=True,
            )
        else:
            typer.echo("\nerror: the run is incomplete; run the same command to continue", err=True)
        raise typer.Exit(code=EXIT_FAILED)


def _report_bar(quiet: bool):
    """Progress of the report's pass over the chunks (None when quiet): a bar, or lines in a log."""
    if quiet:
        return None
    from arena.run.progress import progress_bar

    state: dict = {}

    def update(done: int, total: int) -> None:
        bar = state.get("bar")
        if bar is None:
            bar = state["bar"] = progress_bar("report", "chunk", total, leave=False)
        bar.set(done, total)
        if done >= total:
            bar.close()

    return update


@app.command()
def submit(
    ctx: typer.Context,
    bot: Annotated[
        str,
        typer.Argument(
            help="The bot to add: a .py file, a built-in name, cmd:<program>, policy:<file>, or a .jar/.zip (--class)."
        ),
    ],
    dest: Annotated[str, typer.Option("--to", help="A run folder (results/default) or a league (http://HOST:PORT).")],
    sandbox: Annotated[
        bool, typer.Option("--sandbox", help="Run the bot file in its own process, with limits (for bots from others).")
    ] = False,
    workers: Annotated[int | None, typer.Option(help="Worker processes (0 = all cores).")] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar or info logs.")] = False,
    token: Annotated[
        str | None,
        typer.Option("--token", help="Your league token (visible to other local users: prefer ARENA_TOKEN)."),
    ] = None,
    token_file: Annotated[
        Path | None,
        typer.Option("--token-file", help="A file holding your league token (default: $ARENA_TOKEN)."),
    ] = None,
    name: Annotated[
        str | None, typer.Option("--name", help="The bot's name in the league (default: file name).")
    ] = None,
    class_name: Annotated[
        str | None,
        typer.Option("--class", help="An EAAI-kit player's class, for a .jar or .zip sent to a league."),
    ] = None,
) -> None:
    """Add a bot to a finished round-robin (plays only its new pairs), or upload it to a league server."""
    if dest.startswith(("http://", "https://")):
        from arena.cli.league import submit_remote

        submit_remote(bot, dest, token, name, token_file, class_name)
        return
    if class_name is not None:
        _fail("--class is for a .jar or .zip sent to a league; in a run folder name the player eaai:JAR:CLASS")
    _setup_logging(quiet)
    to = Path(dest)
    try:
        from arena.run.store import RunStore
        from arena.settings.config import check_option

        cfg = RunStore(to).config()  # a one-line error unless it is a run folder
        if kit := _kit_option(ctx):
            cfg = cfg.replace(eaai_kit=kit)  # over the run's saved kit too
        if workers is not None:
            check_option("--workers", "workers", workers)  # said "config: workers = -1"
            cfg = cfg.replace(workers=workers)
        if cfg.format != "round-robin":
            _fail(f"{to}: submit adds bots to a round-robin; this run is a {cfg.format}")
        ref = BotRef.parse(bot, sandbox=sandbox).absolute()
        if sandbox and ref.kind != "sandbox":
            _fail(f"--sandbox runs a bot file; '{bot}' is not a .py file")
        spec = ref.spec()
        bots = tuple(b for b in cfg.bots if b != spec) + (spec,)
        cfg = cfg.replace(bots=bots)
        _run(cfg, None, fresh=False, sprt=False, report=True, quiet=quiet, what="submit")
    except _env_errors() as exc:
        _fail(str(exc), EXIT_ENV)
    except _user_errors() as exc:
        _fail(str(exc))


@app.command("bots")
def list_bots(
    ctx: typer.Context,
    config: Annotated[Path | None, typer.Option(help="Also list the variants this config defines.")] = None,
) -> None:
    """List the built-in bots (and a config's variants, files and external bots) with their parameters."""
    from arena.botkit.bot import BUILTIN_BOTS, builtin_summary
    from arena.loading.load import listed_bots

    try:
        rows = [builtin_summary(key) for key in BUILTIN_BOTS]  # not compiled: a listing need not wait for numba
        if config is not None:
            from arena.settings.config import load_config

            # Every variant, also one the config defines but doesn't play (a --gauntlet choice).
            rows += listed_bots(load_config(config, {"eaai_kit": _kit_option(ctx)}), config.parent)
        for name, path, desc, params in rows:
            typer.echo(f"{name:<18} {desc}")
            shown = ", ".join(f"{k}={v:g}" for k, v in params.items()) or "(no parameters)"
            typer.echo(f"{'':<18} {path}; {shown}")
    except _env_errors() as exc:
        _fail(str(exc), EXIT_ENV)
    except _user_errors() as exc:
        _fail(str(exc))


@app.command("rules")
def show_rules(
    source: Annotated[str, typer.Argument(help="A preset name, a rules .toml, or a tournament config.")] = "standard",
    set_: Annotated[
        list[str] | None, typer.Option("--set", metavar="KEY=VALUE", help="Override a rule, e.g. --set target=50.")
    ] = None,
) -> None:
    """Print the resolved rules of a preset, rules file or tournament config."""
    from arena.settings.rules import load_rules

    try:
        p = Path(source)
        if p.is_file() and "bots" in _toml_keys(p):  # a tournament config
            from arena.settings.config import load_config

            r = load_config(p).resolved_rules().with_overrides(_parse_sets(set_))
        else:
            r = load_rules(source, _parse_sets(set_))
        typer.echo(r.describe())
    except _env_errors() as exc:
        _fail(str(exc), EXIT_ENV)
    except _user_errors() as exc:
        _fail(str(exc))


def _toml_keys(path: Path) -> set[str]:
    """The top-level keys of a TOML file; none when it does not read as TOML (the rules' reader says why).
    A file the machine will not let us read is an :class:`~arena.settings.rules.UnreadableError`."""
    import tomllib

    from arena.settings.rules import TOML_ERRORS, read_settings

    try:
        return set(tomllib.loads(read_settings(path)))
    except TOML_ERRORS:
        return set()


@app.command()
def replay(
    run_dir: Annotated[Path, typer.Argument(help="A run folder.")],
    game: Annotated[int, typer.Option("--game", "-g", help="game_id from games.parquet.")] = 0,
    symbols: Annotated[bool, typer.Option("--symbols/--letters", help="Suit symbols or letters.")] = True,
) -> None:
    """Replay one recorded game hand by hand, with melds and layoffs (exit 1 if it does not match the stored game)."""
    from arena.cli.show import replay_report
    from arena.run.store.format import StoreDamaged

    try:
        ok, text = replay_report(run_dir, game, symbols=symbols)
    except StoreDamaged as exc:  # the folder's problem, not the command's: exit 1, as fsck and report
        _fail(str(exc), EXIT_FAILED)
    except _user_errors() as exc:
        _fail(str(exc))
    typer.echo(text)
    if not ok:
        raise typer.Exit(code=1)


@app.command()
def play(
    bot: Annotated[str, typer.Option("--bot", help="The opponent: a built-in bot's name or a bot file.")] = "simple",
    rules: Annotated[
        str,
        typer.Option("--rules", help="The page's variant: a preset (standard, oklahoma, eaai) or a rules .toml file."),
    ] = "standard",
    target: Annotated[
        int | None,
        typer.Option("--target", help="Points to play to: 50, 100 or 200 (default: the --rules variant's target)."),
    ] = None,
    port: Annotated[int, typer.Option("--port", help="Port on 127.0.0.1 (0 = any free port).")] = 8765,
    open_page: Annotated[bool, typer.Option("--open/--no-open", help="Open the page in a browser.")] = True,
) -> None:
    """Play Gin Rummy against a bot in your browser (a local web server on 127.0.0.1)."""
    from arena.loading.load import load_bot
    from arena.settings.rules import load_rules
    from arena.web.server import App, serve
    from arena.web.session import TARGETS

    if target is not None and target not in TARGETS:
        _fail(f"--target {target} is not allowed (targets: {', '.join(map(str, TARGETS))})")
    if problem := port_problem(port):
        _fail(problem)
    try:
        load_rules(rules)
        load_bot(bot)
    except _user_errors() as exc:
        _fail(str(exc))
    try:
        serve(App(bot=bot, preset=rules, target=target), port, open_browser=open_page, echo=typer.echo)
    except OSError as exc:
        _fail(f"cannot serve on 127.0.0.1:{port}: {exc.strerror or exc}")


@app.command()
def view(
    run_dir: Annotated[Path, typer.Argument(help="A run folder.")],
    game: Annotated[int, typer.Option("--game", "-g", help="game_id from games.parquet.")] = 0,
    port: Annotated[int, typer.Option("--port", help="Port on 127.0.0.1 (0 = any free port).")] = 8766,
    open_page: Annotated[bool, typer.Option("--open/--no-open", help="Open the page in a browser.")] = True,
) -> None:
    """Step through a recorded game in your browser, action by action (arrow keys).

    The page opens game --game; /view?game=G opens any other game of the run (arena report's links: at a step)."""
    from arena.web.server import App, serve
    from arena.web.viewer import Games, recorded_game

    if problem := port_problem(port):
        _fail(problem)
    try:
        data = recorded_game(run_dir, game)
    except _user_errors() as exc:
        _fail(str(exc))
    typer.echo(data["check"])
    try:
        app_ = App(recorded=data, games=Games(run_dir=run_dir, default=game))
        serve(app_, port, path="view", open_browser=open_page, echo=typer.echo)
    except OSError as exc:
        _fail(f"cannot serve on 127.0.0.1:{port}: {exc.strerror or exc}")


@app.command()
def report(
    run_dir: Annotated[Path, typer.Argument(help="A run folder.")],
    verify: Annotated[
        bool,
        typer.Option("--verify", help="First check the whole folder as 'arena fsck' does (every file's checksum)."),
    ] = False,
    anchor: Annotated[
        str | None,
        typer.Option(
            "--anchor",
            metavar="BOT",
            help="Rate this bot 0 and give every other bot's interval as its difference from it "
            "(default: the mean of all bots is 0, with intervals for comparing any two bots).",
        ),
    ] = None,
) -> None:
    """Write report.md, report.html, leaderboard.csv and pairs.csv (exit 1 if the folder has problems)."""
    from arena.run.store import RunStore, said
    from arena.run.store.format import say_once

    _setup_logging(True)  # each problem: one warning line, once
    said(reset=True)
    lost: list[str] = []
    try:
        if verify:
            store = RunStore(run_dir)
            store.check(repair=False)
            lost = store.meta_problems()
            for line in lost:
                say_once(line)
        from arena.analysis.report import write_report

        try:
            files = write_report(run_dir, anchor=anchor)
        except OSError as exc:
            _fail(_os_error_line(exc, f"write the report in {run_dir}"), EXIT_ENV)
        for kind, path in files.items():
            typer.echo(f"{kind:<12} {path}")
    except _env_errors() as exc:
        _fail(str(exc), EXIT_ENV)
    except _user_errors() as exc:
        _fail(str(exc))
    _fail_on_problems(run_dir, "report", lost)


def _fail_on_problems(run_dir: Path, what: str, lost: list[str]) -> None:
    """Exit 1 when reading the folder said problems (:func:`arena.run.store.said`): ``what`` (the report, a
    plot) was drawn from the folder as a repair would leave it.  ``lost``: the problems no repair mends."""
    from arena.run.store import said

    problems = said()
    if problems and len(problems) == len(lost):
        _fail(f"{len(problems)} problem(s) in {run_dir}, named above: restore the file(s) they name", EXIT_FAILED)
    if problems:
        _fail(
            f"{len(problems)} problem(s) in {run_dir}, named above; the {what} reads the folder as "
            f"'arena fsck {run_dir} --repair' would repair it: run that",
            EXIT_FAILED,
        )


@app.command()
def fsck(
    run_dir: Annotated[Path, typer.Argument(help="A run folder.")],
    repair: Annotated[
        bool, typer.Option("--repair", help="Rebuild the index and move what can't be trusted to quarantine/.")
    ] = False,
) -> None:
    """Check a run folder: index lines, chunk files, checksums; one line per finding (exit 1 if any is left)."""
    import logging

    from arena.run.store import RunStore

    busy: str | None = None
    quiet = logging.getLogger("arena.store")
    was = quiet.disabled
    quiet.disabled = True  # the findings are this command's output, printed once below
    try:
        store = RunStore(run_dir)  # one line unless a run folder (or one whose index can be rebuilt)
        if repair:
            with RunStore.open_for_writing(run_dir, what="arena fsck --repair") as writer:
                lines = writer.check(repair=True)
        else:
            busy = store.holder()
            lines = store.check(repair=False)
        store = RunStore(run_dir)
        lost = store.meta_problems()  # config, rules, manifest: named, but no repair rebuilds them
        summary = f"{len(store.matchups())} matchup(s), {store.n_chunks()} chunk(s), {store.n_games()} games"
    except _env_errors() as exc:
        _fail(str(exc), EXIT_ENV)
    except _user_errors() as exc:
        _fail(str(exc))
    finally:
        quiet.disabled = was
    if not repair and busy and lines:  # a live run's chunk in the making reads as an unindexed file or a temp file
        typer.echo(
            f"note: {run_dir} is in use by {busy}: the chunk it is writing can show as a problem below; "
            "check again when it has finished"
        )
    for line in lines:
        typer.echo(f"{'repaired' if repair else 'problem'}: {line}")
    for line in lost:
        typer.echo(f"problem: {line}")
    if not lines and not lost:
        typer.echo(f"ok: {run_dir}: {summary}, no problems")
    elif repair and lines:
        typer.echo(f"repaired {len(lines)} problem(s): {run_dir}: {summary}")
    if lost and (repair or not lines):
        _fail(
            f"{len(lost)} problem(s) in {run_dir} that no repair mends; restore what the line(s) above name",
            EXIT_FAILED,
        )
    if not lines or repair:
        return
    if busy:
        _fail(f"{len(lines)} problem(s) in {run_dir} while {busy} writes it; check again when it is done", EXIT_FAILED)
    elif lost:
        _fail(
            f"{len(lines) + len(lost)} problem(s) in {run_dir}; 'arena fsck {run_dir} --repair' repairs "
            f"{len(lines)} of them, and the file(s) no repair mends must be restored",
            EXIT_FAILED,
        )
    else:
        _fail(f"{len(lines)} problem(s) in {run_dir}; 'arena fsck {run_dir} --repair' repairs them", EXIT_FAILED)


@app.command()
def plot(
    run_dir: Annotated[Path, typer.Argument(help="A run folder.")],
    kind: Annotated[
        str, typer.Option(callback=_check_plot_kind, help="heatmap|ratings|outcomes|scores|lengths|convergence")
    ] = "heatmap",
) -> None:
    """Write one plot of a run as PNG (exit 1 if the folder has problems, as report)."""
    from arena.run.store import said

    _setup_logging(True)  # each problem: one warning line, once
    said(reset=True)
    try:
        from arena.analysis.report import plot_run

        typer.echo(str(plot_run(run_dir, kind)))
    except _env_errors() as exc:
        _fail(str(exc), EXIT_ENV)
    except _user_errors() as exc:
        _fail(str(exc))
    _fail_on_problems(run_dir, "plot", [])  # a plot drawn without a chunk it could not read is not the run's


@app.command()
def sweep(
    sweep_file: Annotated[
        Path,
        typer.Argument(
            metavar="SWEEP", help="Sweep file (TOML), or a shipped example by name: sweep-knock, sweep-mc-samples."
        ),
    ],
    workers: Annotated[int | None, typer.Option(help="Worker processes (0 = all cores).")] = None,
    games: Annotated[int | None, typer.Option(help="Games per grid point and opponent (even).")] = None,
    results_dir: Annotated[str | None, typer.Option(help="Folder for results (default: results).")] = None,
    scheduler: Annotated[
        str | None, typer.Option(help="Play on a Dask cluster: its scheduler, e.g. tcp://host:8786.")
    ] = None,
    fresh: Annotated[bool, typer.Option("--fresh", help="Delete this sweep's results first.")] = False,
    report_only: Annotated[bool, typer.Option("--report-only", help="Only rebuild the tables and report.")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress lines.")] = False,
) -> None:
    """Sweep a bot's parameters against a field (and rules): sweep.csv, response curves, report."""
    import time

    from arena.analysis.sweep import SweepError, analyse_sweep, load_sweep, run_sweep
    from arena.settings.config import shipped_examples

    _setup_logging(True)
    interrupts.keeps("finished chunks are saved; run the same command to resume")
    errors: tuple[type[Exception], ...] = (SweepError, *_user_errors())
    path = sweep_file
    if not path.exists() and path.suffix == "" and path.parent == Path("."):
        examples = shipped_examples()
        if str(path) not in examples:
            names = ", ".join(name for name in examples if name.startswith("sweep-"))
            _fail(f"{sweep_file}: no such sweep file, nor a shipped example (the examples: {names})")
        path = examples[str(path)]
    if report_only and fresh:
        _fail("--report-only rebuilds the report of the stored games and --fresh deletes them; give one of them")
    try:
        overrides = {"workers": workers, "games": games, "results_dir": results_dir, "scheduler": scheduler or None}
        spec = load_sweep(path, overrides)
        t0 = time.monotonic()
        if report_only:
            res = analyse_sweep(spec)
            if not len(res.table):  # it said "complete", exit 0, and wrote nothing
                _fail(f"sweep '{spec.name}': no games stored in {spec.dir} yet; run it without --report-only")
        else:
            res = run_sweep(spec, progress=not quiet, fresh=fresh)
        typer.echo(f"sweep '{res.spec.name}': {res.status}, {time.monotonic() - t0:.1f} s -> {res.dir}", err=True)
        if len(res.best):
            ps = res.spec.param_names
            cols = ["rules", *ps, "field_win_rate_adj", "field_win_rate_adj_ci_low", "field_win_rate_adj_ci_high"]
            cols += ["behind_best", "tied_with_best", "best"]
            shown = res.best[cols].astype({name: str for name in ps})
            for name in ps:
                shown[name] = [f"{v:g}" for v in res.best[name]]
            typer.echo(shown.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
        for kind, written in res.files.items():
            typer.echo(f"{kind:<12} {written}")
    except _env_errors() as exc:  # no permission, a full disk: exit 3, as a run's
        _fail(str(exc), EXIT_ENV)
    except errors as exc:
        _fail(str(exc))
    except KeyboardInterrupt:
        interrupts.report("finished chunks are saved; run the same command to resume")
        raise typer.Exit(code=EXIT_INTERRUPTED) from None
    if res.status != "complete":
        raise typer.Exit(code=1)


@app.command("check-bot")
def check_bot(
    spec: Annotated[
        str,
        typer.Argument(
            metavar="BOT",
            help="A bot that plays in its own process: 'cmd:<program and arguments>', 'sandbox:my_bot.py' "
            "(a .py file is checked so) or 'eaai:<jar or class folder>:<class>'.",
        ),
    ],
    games: Annotated[int, typer.Option(help="Full games to play against simple (both seats).")] = 20,
    decision_s: Annotated[float, typer.Option("--decision-s", help="Time limit per decision, seconds.")] = LIMITS[
        "decision_seconds"
    ][0],
    memory_mb: Annotated[int, typer.Option("--memory-mb", help="Address-space limit, MiB (0 = none).")] = int(
        LIMITS["memory_mb"][0]
    ),
    weak_sandbox: WeakSandbox = False,
) -> None:
    """Check an external bot: handshake, each kind of decision, full games, timing (exit 1 on FAIL)."""
    from arena.external.limits import Limits
    from arena.loading.check import check_bot as run_check
    from arena.loading.check import spec_problem

    if games < 0:
        _fail(f"--games {games} is negative (0 checks the decisions without full games)")
    # The ranges of a config's [limits] (arena.settings.config.LIMITS): --decision-s inf was taken.
    _, low, high = LIMITS["decision_seconds"]
    if not low <= decision_s <= high:
        _fail(f"--decision-s {decision_s:g} is not allowed (allowed: {low:g}..{high:g} seconds)")
    _, low, high = LIMITS["memory_mb"]
    if memory_mb != 0 and not low <= memory_mb <= high:
        _fail(f"--memory-mb {memory_mb} is not allowed (allowed: 0 for none, or {low:.0f}..{high:.0f})")
    try:
        # check_bot sets the start time by kind
        limits = Limits(decision_s=decision_s, memory_mb=memory_mb, sandbox="weak" if weak_sandbox else "wall")
    except ValueError as exc:
        _fail(str(exc))
    if why := spec_problem(spec, limits):  # bad input, exit 2; a bot that starts and fails its checks is exit 1
        _fail(why)
    report = run_check(spec, games=games, limits=limits, echo=typer.echo)
    raise typer.Exit(code=0 if report.passed else 1)


@app.command()
def analyze(
    run_dir: Annotated[Path, typer.Argument(help="A run folder (its games need stored action logs).")],
    bot: Annotated[str | None, typer.Option("--bot", help="Grade this bot's decisions (default: every bot's).")] = None,
    opponent: Annotated[
        str | None, typer.Option("--opponent", help="Only games against this bot (e.g. one matchup).")
    ] = None,
    games: Annotated[
        int | None, typer.Option("--games", help="Only the first N games (of --bot), in play order.")
    ] = None,
    game: Annotated[
        int | None, typer.Option("--game", "-g", help="One game: print its decisions and their losses.")
    ] = None,
    samples: Annotated[int | None, typer.Option("--samples", help="Deals per decision (default 128).")] = None,
    seed: Annotated[int | None, typer.Option("--seed", help="Seed of the analysis' deals (default 1).")] = None,
    perfect: Annotated[
        bool, typer.Option("--perfect", help="HINDSIGHT: roll out on the true hidden cards (not a fair grade).")
    ] = False,
    workers: Annotated[int, typer.Option("--workers", help="Worker processes (0 = one per core).")] = 1,
    scheduler: Annotated[
        str | None, typer.Option(help="Analyse on a Dask cluster: its scheduler, e.g. tcp://host:8786.")
    ] = None,
    config: Annotated[
        Path | None, typer.Option("--config", help="A TOML file whose [analysis] table sets samples, thresholds...")
    ] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress line.")] = False,
) -> None:
    """Grade every decision of a bot by rolling out each legal option: error rates, doubtful moves, blunders."""
    from arena.analysis import decisions as dec
    from arena.run.progress import Progress, progress_bar

    with _analysis_failures(run_dir, dec.AnalysisError):
        settings = dec.load_settings(config, samples=samples, seed=seed, perfect=perfect or None)

        bars: list[Progress] = []  # made at the first game graded: nothing shows before a bad option's error

        def show(done: int, planned: int) -> None:
            if quiet:
                return
            if not bars:
                bars.append(progress_bar("graded", "game", planned or None))
            bars[0].set(done, planned or None)

        res, rows = dec.analyse_run(
            run_dir,
            settings,
            bot=bot,
            opponent=opponent,
            games=games,
            game=game,
            workers=workers,
            scheduler=scheduler,
            progress=show,
        )
        for b in bars:
            b.close()
        if rows is not None:
            typer.echo(dec.game_text(rows, settings))
        rates = dec.error_rates(dec.read_parts(run_dir, res.table), settings.doubtful, settings.blunder)
    hind = "  [HINDSIGHT: --perfect rolls out on the true hidden cards]" if settings.perfect else ""
    typer.echo(
        f"{res.decisions:,} decisions in {res.games:,} games graded in {res.seconds:.1f} s "
        f"({(res.decisions - res.resumed_decisions) / max(res.seconds, 1e-9):.0f}/s) at {settings.samples} samples"
        + (f" ({res.resumed:,} of the games by an interrupted pass, kept)" if res.resumed else "")
        + f"; stored as analysis '{res.table}' in {run_dir}{hind}"
    )
    if res.earlier:
        typer.echo(f"analysis '{res.table}': {res.earlier}")
    typer.echo(dec.rates_text(rates))
    typer.echo(
        f"error x1000: mean loss per decision in thousandths of a game; doubtful >= {settings.doubtful:g}, "
        f"blunder >= {settings.blunder:g}. The report (arena report) shows the section."
    )
    from arena.analysis.luck import stored_luck_per_bot
    from arena.analysis.luck_report import per_bot_text

    # The luck of the games graded, not of the whole run: read next to error rates of 60 games against one
    # opponent, the run's luck over thousands of games said nothing about them (and is near 0 by design).
    graded = {int(i) for part in dec.read_parts(run_dir, res.table, ["game_id"]) for i in part["game_id"]}
    per_bot = stored_luck_per_bot(run_dir, graded)
    if per_bot is not None and not per_bot.empty:
        measured = int(per_bot["games"].sum()) // 2  # every game counts once for each of its two bots
        cover = f"{measured:,} of the {len(graded):,} games graded" if measured < len(graded) else "the games graded"
        typer.echo(f"Luck of the cards in {cover} (arena luck), next to the errors above: + favoured the bot")
        typer.echo(per_bot_text(per_bot))
        if measured < len(graded):
            typer.echo("(run arena luck again to measure the games played since its last pass)")
    _left_out(run_dir)


@app.command()
def luck(
    run_dir: Annotated[Path, typer.Argument(help="A run folder (its games need stored action logs).")],
    workers: Annotated[int, typer.Option("--workers", help="Worker processes (0 = one per core).")] = 1,
    scheduler: Annotated[
        str | None, typer.Option(help="Measure on a Dask cluster: its scheduler, e.g. tcp://host:8786.")
    ] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress line.")] = False,
) -> None:
    """Measure the luck of every draw and deal, and show results with the luck taken out (luck-adjusted)."""
    from arena.analysis import luck as lk
    from arena.analysis.luck_report import per_bot_text, results_text, what_it_does
    from arena.run.progress import Progress, progress_bar

    bars: list[Progress] = []

    def show(done: int) -> None:
        if not quiet:
            if not bars:
                bars.append(progress_bar("measured", "game", None))
            bars[0].set(done, None)

    try:
        with _analysis_failures(run_dir, lk.LuckError):
            done = lk.analyse_luck(run_dir, workers=workers, scheduler=scheduler, progress=show)
            res = lk.stored_results(run_dir)
    finally:
        for b in bars:
            b.close()
    typer.echo(
        f"luck of {done.games:,} games measured in {done.seconds:.1f} s"
        + (f" ({done.resumed:,} of them by an interrupted pass, kept)" if done.resumed else "")
        + f"; stored as analysis '{done.table}' in {run_dir} (value {done.value[:12]})"
    )
    if res is not None and not res.empty:
        typer.echo(results_text(res))
    typer.echo(what_it_does(res))
    per_bot = lk.stored_luck_per_bot(run_dir)
    if per_bot is not None and not per_bot.empty:
        typer.echo(per_bot_text(per_bot))
    _left_out(run_dir)


@contextlib.contextmanager
def _analysis_failures(run_dir: Path, own: type[Exception]) -> Iterator[None]:
    """One error line for what stops ``analyze`` or ``luck`` (``own``: its error): exit 3 for a scheduler that
    doesn't answer or a folder it cannot write (read-only, full), 2 for the input, 130 for Ctrl-C.  Starts the
    list of problems :func:`_left_out` reads."""
    from arena.run.schedule import SchedulerUnreachable
    from arena.run.store import said

    said(reset=True)
    try:
        yield
    except SchedulerUnreachable as exc:
        _fail(str(exc), EXIT_ENV)
    except _env_errors() as exc:  # the folder cannot be written (read-only, full): exit 3, as every command's
        _fail(str(exc), EXIT_ENV)
    except (own, *_user_errors()) as exc:
        _fail(str(exc))
    except KeyboardInterrupt:
        interrupts.report(
            f"the finished analyses in {run_dir} are as they were; the games graded so far are kept, and the "
            "same command goes on from them"
        )
        raise typer.Exit(code=EXIT_INTERRUPTED) from None


def _left_out(run_dir: Path) -> None:
    """Exit 1 after an analysis that had to leave out chunks it could not read (each named above)."""
    from arena.run.store import said

    problems = said()
    if problems:
        _fail(
            f"{len(problems)} problem(s) in {run_dir}, named above: the stored analysis leaves out what could "
            f"not be read; run 'arena fsck {run_dir} --repair', then this command again",
            EXIT_FAILED,
        )


from arena.cli.league import app as _league_app  # noqa: E402 - the league's commands: arena league ...

app.add_typer(_league_app, name="league")


def main() -> None:  # pragma: no cover
    app()


if __name__ == "__main__":  # pragma: no cover
    main()
