"""``arena league init|add-user|revoke-user|rotate-token|backup|restore|serve``: the league's commands (a typer
sub-app), and the token of ``arena submit FILE --to http://...`` (``ARENA_TOKEN``, ``--token-file``)."""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Annotated

import typer

from arena.cli.typer_app import port_problem, typer_app
from arena.league.db import LeagueError
from arena.settings.config import MAX_WORKERS

app = typer_app("Run a league: participants submit bots over the web, the arena plays them, a leaderboard ranks them.")

log = logging.getLogger("arena.league")


def _fail(message: str) -> None:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code=2)


@app.command()
def init(
    folder: Annotated[Path, typer.Argument(metavar="DIR", help="The league folder to create.")],
    config: Annotated[
        Path | None, typer.Option("--config", help="A league.toml (rules, games per pairing, house bots, limits).")
    ] = None,
) -> None:
    """Create a league folder: its settings, its database and the house bots that seed the field."""
    from arena.league.config import LeagueConfig, load_league_config
    from arena.league.core import League

    try:
        cfg = load_league_config(config) if config is not None else LeagueConfig()
        League.init(folder, cfg)
    except LeagueError as exc:
        _fail(str(exc))
    typer.echo(
        f"league '{cfg.name}' in {folder}: house bots {', '.join(cfg.house_bots)}; "
        f"{cfg.games_per_pairing} games per pairing"
    )


@app.command("add-user")
def add_user(
    folder: Annotated[Path, typer.Argument(metavar="DIR", help="The league folder.")],
    name: Annotated[
        str, typer.Argument(metavar="NAME", help="The user's name (a letter, then letters, digits, _ or -).")
    ],
    organizer: Annotated[bool, typer.Option("--organizer", help="May add users, cmd: bots, publish sources.")] = False,
) -> None:
    """Add a user and print their token, once (only its hash is kept)."""
    from arena.league.core import League

    try:
        league = League(folder)
        conn = league.db()
        try:
            token = league.add_user(conn, name, organizer)
        finally:
            conn.close()
    except LeagueError as exc:
        _fail(str(exc))
    typer.echo(f"user '{name}'{' (organizer)' if organizer else ''} added; the token (shown only now):", err=True)
    typer.echo(token)


def _with_league(folder: Path, what):  # noqa: ANN202 - returns what ``what`` returns
    """``what(league, conn)`` on the league of ``folder``; a LeagueError is the command's one error line."""
    from arena.league.core import League

    try:
        league = League(folder)
        conn = league.db()
        try:
            return what(league, conn)
        finally:
            conn.close()
    except LeagueError as exc:
        _fail(str(exc))


@app.command("revoke-user")
def revoke_user(
    folder: Annotated[Path, typer.Argument(metavar="DIR", help="The league folder.")],
    name: Annotated[str, typer.Argument(metavar="NAME", help="The user to revoke.")],
) -> None:
    """End a user's access at once (token and every session) and withdraw their bots; their games stay."""
    out = _with_league(folder, lambda lg, c: lg.revoke_user(c, name))
    bots = ", ".join(out["withdrawn"]) or "none"
    typer.echo(f"user '{name}' revoked: token and sessions ended; bots withdrawn: {bots}")


@app.command("rotate-token")
def rotate_token(
    folder: Annotated[Path, typer.Argument(metavar="DIR", help="The league folder.")],
    name: Annotated[str, typer.Argument(metavar="NAME", help="The user.")],
) -> None:
    """Give a user a new token and print it, once; the old token and their sessions end at once."""
    token = _with_league(folder, lambda lg, c: lg.rotate_token(c, name))
    typer.echo(f"user '{name}': a new token (shown only now); the old one no longer works:", err=True)
    typer.echo(token)


@app.command()
def backup(
    folder: Annotated[Path, typer.Argument(metavar="DIR", help="The league folder.")],
    out: Annotated[Path, typer.Argument(metavar="FILE", help="The backup file to write (must not exist).")],
) -> None:
    """Copy the league's database to FILE while the server runs (SQLite's online backup), checked."""
    from arena.league.db import DB_NAME
    from arena.league.db import backup as backup_db

    try:
        size = backup_db(folder / DB_NAME, out)
    except LeagueError as exc:
        _fail(str(exc))
    typer.echo(f"backed up {folder / DB_NAME} to {out} ({size} bytes; checked)")


@app.command()
def restore(
    folder: Annotated[Path, typer.Argument(metavar="DIR", help="The league folder.")],
    backup_file: Annotated[Path, typer.Argument(metavar="BACKUP", help="A file written by 'arena league backup'.")],
) -> None:
    """Put a backup in place of the league's database (checked first); refused while a server runs on the
    folder: stop it first."""
    from arena.league.db import DB_NAME
    from arena.league.db import restore as restore_db
    from arena.league.serving import FolderBusy, holding

    if not (folder / DB_NAME).exists() and not folder.is_dir():
        _fail(f"{folder} is not a league folder")
    try:
        with holding(folder, "arena league restore"):
            restore_db(folder / DB_NAME, backup_file)
    except FolderBusy as exc:
        _fail(f"{exc}: stop that server first, then restore (it would go on with the database it has open)")
    except LeagueError as exc:
        _fail(str(exc))
    typer.echo(f"restored {folder / DB_NAME} from {backup_file}")


def _pdeathsig() -> None:  # pragma: no cover - runs in the child between fork and exec
    """Linux: the scheduler gets SIGKILL when the server dies, even by kill -9."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


class _SchedulerProcess:
    """The scheduler child: started, watched and restarted from one long-lived thread."""

    def __init__(self, command: list[str]):
        self.command = command
        self.proc: subprocess.Popen | None = None
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._watch, name="league-scheduler", daemon=True)

    def start(self) -> None:
        self.thread.start()

    def _watch(self) -> None:
        failures = 0
        while not self.stopping.is_set():
            started = time.monotonic()
            self.proc = subprocess.Popen(self.command, preexec_fn=_pdeathsig if sys.platform == "linux" else None)
            code = self.proc.wait()
            if self.stopping.is_set():
                return
            failures = failures + 1 if time.monotonic() - started < 60 else 1
            wait = min(60, 2**failures)
            log.error("the league scheduler exited with code %s; restarting in %d s", code, wait)
            self.stopping.wait(wait)

    def stop(self) -> None:
        self.stopping.set()
        p = self.proc
        if p is not None and p.poll() is None:
            p.terminate()
            try:
                p.wait(20)
            except subprocess.TimeoutExpired:
                p.kill()


@app.command()
def serve(
    folder: Annotated[Path, typer.Argument(metavar="DIR", help="The league folder.")],
    host: Annotated[str, typer.Option("--host", help="Address to bind (put a TLS proxy in front to publish).")] = (
        "127.0.0.1"
    ),
    port: Annotated[int, typer.Option("--port", help="Port.")] = 8780,
    workers: Annotated[int | None, typer.Option("--workers", help="Worker processes for games (0 = all cores).")] = (
        None
    ),
    scheduler: Annotated[
        str | None, typer.Option("--scheduler", help="Play the games on a Dask cluster: tcp://host:8786.")
    ] = None,
    allowed_host: Annotated[
        list[str] | None,
        typer.Option(
            "--allowed-host",
            metavar="NAME",
            help="A Host name the site answers to besides the loopback names and --host (repeatable): the name "
            "clients or a reverse proxy use, e.g. league.example.org; '*.example.org'; '*' turns the check off.",
        ),
    ] = None,
    play: Annotated[
        bool, typer.Option("--play/--no-play", help="Run the scheduler that plays the checks and the games.")
    ] = True,
    play_page: Annotated[
        bool,
        typer.Option(
            "--play-page/--no-play-page",
            help="Also serve /play, the browser game against the built-in bots (off: anyone who reaches the "
            "site could start games on this server's cores).",
        ),
    ] = False,
) -> None:
    """Serve the league's site and API (in the one web app, with the viewer; the play page with
    --play-page), and play its games in a background scheduler."""
    from arena.league.core import League
    from arena.web.server import App, allowed_hosts
    from arena.web.server import serve as serve_app
    from arena.web.viewer import Games

    if workers is not None and scheduler:
        _fail("give --workers or --scheduler, not both")
    if workers is not None and not 0 <= workers <= MAX_WORKERS:
        _fail(f"--workers {workers} is not allowed (0..{MAX_WORKERS})")
    if scheduler and "://" not in scheduler:
        _fail(f"--scheduler {scheduler!r} is not a Dask address such as tcp://127.0.0.1:8786")
    if problem := port_problem(port):
        _fail(problem)
    try:
        hosts = allowed_hosts(host, allowed_host or ())
    except ValueError as exc:
        _fail(str(exc))
    from arena.league.db import DB_NAME, check_database

    try:
        league = League(folder)
        check_database(league.dir / DB_NAME, write=True)  # a damaged or read-only file is refused here
    except LeagueError as exc:
        _fail(str(exc))
    from arena.league.eaai_upload import clean_staging
    from arena.league.serving import FolderBusy, check_own_database, holding

    held = contextlib.ExitStack()  # the folder's lock, held while this server runs
    try:
        held.enter_context(holding(league.dir, "arena league serve"))
        check_own_database(league.dir)
        clean_staging(league.dir, 0)  # a stopped server's half-unpacked archives: no upload is under way yet
    except FolderBusy as exc:
        _fail(f"{exc}: one server per league folder")
    except LeagueError as exc:
        _fail(str(exc))
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)
    child = None
    if play:
        cmd = [sys.executable, "-m", "arena.league.scheduler", str(Path(folder).resolve())]
        if scheduler:
            cmd += ["--scheduler", scheduler]
        else:
            cmd += ["--workers", str(workers or 0)]
        child = _SchedulerProcess(cmd)
        child.start()
    answers = "any Host" if hosts == ["*"] else "Host " + ", ".join(hosts)
    typer.echo(f"league '{league.config.name}': answers to {answers} (--allowed-host NAME adds one)", err=True)
    typer.echo("the play page /play: " + ("on" if play_page else "off (--play-page serves it)"), err=True)
    try:
        serve_app(
            App(games=Games(runs_root=league.dir / "runs")),
            port,
            "league/",
            open_browser=False,
            echo=lambda line: typer.echo(line, err=True),
            host=host,
            league=league.dir,
            hosts=hosts,
            play=play_page,
        )
    except OSError as exc:
        _fail(f"cannot serve on {host}:{port}: {exc.strerror or exc}")
    except LeagueError as exc:
        _fail(str(exc))
    finally:
        if child is not None:
            child.stop()
        held.close()


#: The environment variable ``arena submit --to http://...`` reads the token from.
TOKEN_ENV = "ARENA_TOKEN"


def league_token(token: str | None, token_file: Path | None) -> str:
    """The token to send: ``--token`` (warned about), else ``--token-file``, else ``$ARENA_TOKEN``."""
    if token is not None and token_file is not None:
        _fail("give --token or --token-file, not both")
    if token is not None:
        typer.echo(
            "warning: --token puts your token in the process list (any local user can read it) and in your shell "
            f"history; set {TOKEN_ENV} or use --token-file FILE instead",
            err=True,
        )
        return token.strip()
    if token_file is not None:
        try:
            text = token_file.read_text(encoding="utf-8")
            mode = token_file.stat().st_mode
        except (OSError, UnicodeDecodeError) as exc:
            _fail(f"cannot read the token file {token_file}: {getattr(exc, 'strerror', None) or exc}")
        lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
        if len(lines) != 1:
            _fail(f"the token file {token_file} must hold the token alone, on one line")
        if mode & 0o077:
            typer.echo(f"warning: {token_file} can be read by other users; chmod 600 it", err=True)
        return lines[0]
    value = os.environ.get(TOKEN_ENV, "").strip()
    if not value:
        _fail(f"--to http://... needs your league token: set {TOKEN_ENV} or give --token-file FILE")
    return value


def submit_remote(
    file: str,
    url: str,
    token: str | None,
    name: str | None,
    token_file: Path | None = None,
    class_name: str | None = None,
) -> None:
    """``arena submit FILE --to http://HOST:PORT [--name NAME]``, the token from ``$ARENA_TOKEN`` or
    ``--token-file`` (or ``--token``, with a warning)."""
    from arena.league.client import league_base, submit_to_server

    secret = league_token(token, token_file)
    try:
        out = submit_to_server(file, url, secret, name, class_name=class_name)
    except LeagueError as exc:
        _fail(str(exc))
    typer.echo(
        f"submitted {out.get('bot')} version {out.get('version')}: {out.get('status')}; "
        f"follow it at {league_base(url)}{out.get('page', '/league/')}"
    )
