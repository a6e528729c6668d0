"""Fixtures shared by the test folders: the built-in bots, loaded once per session; a browser per file."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from arena.botkit.bot import Bot
from arena.loading.load import load_bot
from tests.browser import chromium


@pytest.fixture(scope="session")
def simple() -> Bot:
    """The Simple baseline (compiled once for the whole session)."""
    return load_bot("simple")


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Debian's headless Chromium under Playwright, one per test file (tests/browser.py; skips without it)."""
    with chromium() as b:
        yield b
