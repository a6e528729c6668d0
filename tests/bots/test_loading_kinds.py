"""The loader (arena/loading/load.py) has one branch per kind of bot reference, and nothing else gets through."""

from __future__ import annotations

import dataclasses
import typing

import pytest

from arena.botkit.bot import BotError
from arena.loading.load import LOADERS, load
from arena.settings.botref import BotKind, BotRef


def test_every_kind_of_reference_has_exactly_one_loader():
    assert set(LOADERS) == set(typing.get_args(BotKind))


def test_a_reference_of_a_kind_without_a_loader_is_one_line():
    ref = dataclasses.replace(BotRef.parse("simple"), kind="eaai")  # type: ignore[arg-type]
    with pytest.raises(BotError, match=r"^bot 'simple': no loader for references of kind 'eaai'$"):
        load(ref)
