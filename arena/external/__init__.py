"""Bots in their own processes: any language, with limits, and a sandbox for bot files.

* :mod:`arena.external.protocol`: the JSON-lines protocol (spec: ``docs/PROTOCOL.md``).
* :mod:`arena.external.limits`: what a bot's process may do (:class:`Limits`).
* :mod:`arena.external.process`: one running bot program, with timeouts.
* :mod:`arena.external.client`: an external program as a :class:`arena.botkit.bot.Bot`.
* :mod:`arena.external.host`: serves a Python bot file over the protocol (the sandbox).
* :mod:`arena.external.sandbox_cache`: a sandboxed file's compiled code, kept between its starts.

The runner rebuilds external bots in workers from plain values with
:func:`external_bot` and :func:`sandboxed_bot`, collects their stderr with
:func:`drain_log` (``""`` for in-process bots) and stops them with
:func:`close_bot`.

The names below are imported lazily: the sandbox host (``python -m
arena.external.host``) must adjust numba's cache before any kernel of the
arena is defined, so importing this package must not define any.
"""

from __future__ import annotations

from typing import Any

_LAZY = {
    "ExternalBot": "arena.external.client",
    "external_bot": "arena.external.client",
    "external_of": "arena.external.client",
    "drain_log": "arena.external.client",
    "close_bot": "arena.external.client",
    "sandboxed_bot": "arena.external.client",
    "Limits": "arena.external.limits",
    "ExternalBotError": "arena.external.process",
    "PROTOCOL_VERSION": "arena.external.protocol",
    "ProtocolError": "arena.external.protocol",
}

__all__ = sorted(_LAZY)


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'arena.external' has no attribute {name!r}")
