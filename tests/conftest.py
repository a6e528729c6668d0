"""Fixtures shared by the test folders: the built-in bots, loaded once per session."""

from __future__ import annotations

import pytest

from arena.botkit.bot import Bot
from arena.botkit.load import load_bot


@pytest.fixture(scope="session")
def simple() -> Bot:
    """The Simple baseline (compiled once for the whole session)."""
    return load_bot("simple")
