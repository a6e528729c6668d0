"""What kind of league upload a file is, told by its name's suffix: the one rule of ``arena submit`` and
the submit page.  The suffix only routes the bytes; the league's checks (:mod:`arena.league.uploads`,
through :meth:`League.submit`) then refuse bytes that are not what their suffix claims."""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import Literal

from arena.settings.botref import BINARY_POLICY_SUFFIXES

#: The file names of an EAAI-kit player's upload: a jar, or a zip of its class folder.
ARCHIVE_SUFFIXES = (".jar", ".zip")
#: Every suffix the submit page takes, in the order its page names them.
PAGE_SUFFIXES = (".py", *ARCHIVE_SUFFIXES, *BINARY_POLICY_SUFFIXES)

Kind = Literal["source", "archive", "policy"]


def file_kind(name: str) -> Kind | None:
    """``archive`` (.jar, .zip), ``policy`` (.onnx, .npz: its format is the suffix) or ``source`` (.py: a bot,
    or a policy module, which the league tells apart); None for another suffix."""
    suffix = PurePosixPath(name).suffix.lower()
    if suffix in ARCHIVE_SUFFIXES:
        return "archive"
    if suffix in BINARY_POLICY_SUFFIXES:
        return "policy"
    return "source" if suffix == ".py" else None


def policy_format(name: str) -> str:
    """The policy format of a policy file's name (``onnx``, ``npz``, ``py``)."""
    return PurePosixPath(name).suffix.lower().lstrip(".")
