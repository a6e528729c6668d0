"""Debian's Chromium under Playwright for Python: the one way the browser tests start a browser.

Needs ``/usr/bin/chromium`` (``apt-get install chromium``) and the Python
package ``playwright`` (in the ``[test]`` extra; never ``playwright install``).
Where ``CI=true`` a missing browser fails the test; elsewhere it skips and says
how to install it.  The ``browser`` fixture (tests/conftest.py) gives each test
file one browser (module scope: under ``--dist loadfile`` a file stays on one
worker, so no browser is shared between processes).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"]


def need_browser() -> None:
    """Skip the test (fail it where ``CI=true``) unless Chromium and Playwright are both here."""
    missing = []
    if not Path(CHROMIUM).exists():
        missing.append(f"{CHROMIUM} (apt-get update && apt-get install -y chromium)")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        missing.append("the playwright Python package (pip install -e '.[test]'; never `playwright install`)")
    if missing:
        msg = "browser tests need " + " and ".join(missing)
        if os.environ.get("CI") == "true":
            pytest.fail(msg + " (CI=true: the browser must be there)")
        pytest.skip(msg)


@contextmanager
def chromium() -> Iterator[Any]:
    """A headless Chromium (a Playwright ``Browser``), closed on the way out."""
    need_browser()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            yield browser
        finally:
            browser.close()
