"""The suite's own order: the slowest files are handed out first (tests/conftest.py, SLOW_FIRST)."""

from __future__ import annotations

from types import SimpleNamespace

from tests.conftest import SLOW_FIRST, TESTS, pytest_collection_modifyitems


def test_every_file_named_slow_first_exists():
    missing = [name for name in SLOW_FIRST if not (TESTS / name).is_file()]
    assert not missing, f"SLOW_FIRST names files that are gone: {missing}"


def test_the_hook_puts_the_slow_files_first_in_their_order_and_keeps_the_rest_as_collected():
    def item(name: str, test: str) -> SimpleNamespace:
        return SimpleNamespace(path=TESTS / name, test=test)

    collected = [
        item("engine/test_rng.py", "a"),
        item(SLOW_FIRST[1], "b1"),
        item("analysis/test_stats.py", "c"),
        item(SLOW_FIRST[0], "d1"),
        item(SLOW_FIRST[1], "b2"),
        item("engine/test_rng.py", "e"),
        item(SLOW_FIRST[0], "d2"),
    ]
    items = list(collected)
    pytest_collection_modifyitems(None, items)  # type: ignore[arg-type]
    assert [i.test for i in items] == ["d1", "d2", "b1", "b2", "a", "c", "e"]
