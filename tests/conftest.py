"""Fixtures shared by the test folders: the built-in bots, loaded once per session; a browser per file.
Also the order files are handed to the two test processes: the slowest first (:data:`SLOW_FIRST`)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
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


#: The files that take longest (20 s to 100 s each on the 2-core machine, measured with --durations=0), slowest
#: first.  pytest-xdist's ``--dist loadfile`` hands a process a whole file at a time, in collection order
#: (``--no-loadscope-reorder`` in pyproject; by default it puts the files with the most tests first, which
#: sent these files, mostly of a few long tests, last).  With the long files first and the many short ones
#: after them, the two processes finish nearly together instead of one waiting a whole long file for the
#: other.  The order changes no result; a file missing here only runs in its usual place.
SLOW_FIRST = (
    "run/test_dask.py",
    "run/test_store_faults.py",
    "interfaces/test_packaging.py",
    "league/test_league_uploads.py",
    "run/test_run.py",
    "interfaces/test_cli.py",
    "bots/test_policy_wall.py",
    "bots/test_eaai.py",
    "analysis/test_decisions_run.py",
    "bots/test_train_example.py",
    "test_code_checks.py",
    "settings/test_bad_configs.py",
    "run/test_store_index.py",
    "bots/test_monte_carlo.py",
    "league/test_league_damage.py",
    "docs/test_tutorial.py",
    "bots/test_external_sandbox.py",
    "analysis/test_report.py",
    "league/test_league_browser.py",
    "engine/test_melds.py",
    "analysis/test_sweep.py",
)
TESTS = Path(__file__).resolve().parent


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    rank = {name: i for i, name in enumerate(SLOW_FIRST)}

    def place(item: pytest.Item) -> int:
        try:
            return rank.get(item.path.relative_to(TESTS).as_posix(), len(rank))
        except ValueError:  # a test outside tests/ (none today)
            return len(rank)

    items.sort(key=place)  # stable: within a file, and among the other files, the order is as collected
