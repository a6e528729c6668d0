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


@pytest.fixture(scope="session")
def simple() -> Bot:
    """The Simple baseline (compiled once for the whole session)."""
    return load_bot("simple")


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Debian's headless Chromium under Playwright, one per test file (tests/browser.py; skips without it)."""
    with chromium() as b:
        yield b
