"""Fixtures shared by the test folders: the built-in bots, loaded once per session; a browser per file."""

from __future__ import annotations

import compileall
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from arena.botkit.bot import Bot
from arena.loading.load import load_bot
from tests.browser import chromium


def pytest_configure(config: pytest.Config) -> None:
    """Byte-compile arena/ and bots/ once, before the workers start.

    The suite starts hundreds of Python processes that import the arena (CLI
    commands, servers, schedulers, checks, sandbox hosts, Dask workers).
    Where ``PYTHONDONTWRITEBYTECODE`` is set (it is on the machine these tests are timed on), none of
    them writes the bytecode, so each compiled the arena's sources afresh:
    0.3 s of CPU per process.  compileall writes it whatever that variable
    says.
    """
    if hasattr(config, "workerinput"):  # an xdist worker: the controller did it
        return
    root = Path(__file__).resolve().parents[1]
    for package in ("arena", "bots"):
        compileall.compile_dir(root / package, quiet=1)


#: The files whose tests take longest in all (real clusters, servers, JVMs, first compiles), measured with
#: ``pytest --junitxml`` on 7 December 2026.  With ``--dist loadfile`` a worker takes whole files in
#: collection order, so a long file collected late ran alone at the end while the other workers sat idle;
#: collected first, the long files start at once and the short ones fill in around them (a simulated 714 s
#: became 683 s).  Only the order changes: every test still runs.
LONG_FILES = (
    "tests/run/test_dask.py",
    "tests/run/test_run.py",
    "tests/bots/test_monte_carlo.py",
    "tests/run/test_store_faults.py",
    "tests/bots/test_eaai.py",
    "tests/run/test_store_index.py",
    "tests/interfaces/test_web_browser.py",
    "tests/analysis/test_report.py",
    "tests/league/test_league_uploads.py",
    "tests/interfaces/test_cli.py",
    "tests/bots/test_external_examples.py",
    "tests/interfaces/test_packaging.py",
    "tests/docs/test_tutorial.py",
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The long files first (:data:`LONG_FILES`, in that order), the rest as collected: the same order in
    every xdist worker, as xdist requires."""
    root = Path(__file__).resolve().parents[1]
    rank = {name: i for i, name in enumerate(LONG_FILES)}

    def key(item: pytest.Item) -> int:
        try:
            rel = Path(str(item.path)).resolve().relative_to(root).as_posix()
        except ValueError:
            return len(LONG_FILES)
        return rank.get(rel, len(LONG_FILES))

    items.sort(key=key)  # stable: within a file, and among the rest, the collected order stays


@pytest.fixture(scope="session")
def simple() -> Bot:
    """The Simple baseline (compiled once for the whole session)."""
    return load_bot("simple")


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Debian's headless Chromium under Playwright, one per test file (tests/browser.py; skips without it)."""
    with chromium() as b:
        yield b
