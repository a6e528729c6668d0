"""Whether an upload is an acceptable bot, and how its bytes are stored: the checks of a submission.

Every rule that decides from the uploaded bytes alone (a bot file's text, a policy's format, an EAAI-kit
player's archive, an organizer's command) lives here and nowhere else, so "is this upload acceptable"
has one owner: :meth:`arena.league.core.League.submit` asks it, the submit page and ``arena submit``
only route bytes to it (:mod:`arena.league.file_kinds`), and the league's other jobs (users, the
leaderboard, the queue) never see a file.

The checks need neither the database nor the disk: a refused upload leaves no file behind and takes no
transaction.  What they accept comes back as an :class:`Upload`, whose ``stage`` does the slow part of
storing it before the submission's transaction (an archive's unpacking, with no database lock held) and
gives the quick write that puts it under the league folder inside the transaction, so a failed write
stores no version.
"""

from __future__ import annotations

import ast
import hashlib
import shlex
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from pathlib import Path

from arena.league.config import LeagueConfig
from arena.league.db import LeagueError, atomic_write, reuse_folder
from arena.league.eaai_upload import check_eaai_upload, staged_eaai_upload
from arena.settings.botref import CMD_PREFIX, is_policy_tree

#: The forms of an uploaded policy, named by their file suffix.
POLICY_FORMS = ("py", "onnx", "npz")
#: An .npz's arrays may unpack to at most this many times the upload's size (np.savez stores them as
#: they are; a zip bomb of zeros compresses thousands of times).
NPZ_UNPACKED_FACTOR = 20
#: Why a binary policy file sent as a bot file's source is refused.
POLICY_AS_SOURCE = (
    "this is a policy file (.npz or .onnx), not a bot file's text: send it as a policy "
    "(arena submit policy:FILE --to ...)"
)


#: How an upload is stored under the league folder: a context entered before the submission's
#: transaction (for the slow part: an archive unpacked into a private folder), whose value is the quick
#: write that puts it in place inside the transaction, and whose exit removes whatever was not put in place.
Stage = Callable[[Path], AbstractContextManager[Callable[[], object]]]


def written_inside(write: Callable[[Path], object]) -> Stage:
    """The stage of an upload stored by one quick write (a small file), all of it inside the transaction."""
    return lambda folder: nullcontext(lambda: write(folder))


@dataclass(frozen=True)
class Upload:
    """A checked submission: its kind, bytes, spec (as stored), the bytes it takes on the server, and how
    it is stored under the league folder (:data:`Stage`; a ``cmd:`` program stores nothing)."""

    kind: str
    data: bytes
    spec: str
    size: int = -1
    stage: Stage = written_inside(lambda folder: None)

    def __post_init__(self) -> None:
        if self.size < 0:
            object.__setattr__(self, "size", len(self.data))


def check_upload(
    config: LeagueConfig,
    league_dir: Path,
    *,
    organizer: bool,
    source: bytes | None,
    command: str | None,
    archive: bytes | None,
    class_name: str | None,
) -> Upload:
    """A bot file (``source``: a bot, or a policy module), a ``cmd:`` program (``command``, organizers
    only) or an EAAI-kit player (``archive`` and ``class_name``) checked against the league's
    ``config``; ``league_dir`` is the league folder, which holds the EAAI kit."""
    if command is not None:
        if not organizer:
            raise LeagueError("only an organizer may add a cmd: bot", 403)
        command = command.removeprefix(CMD_PREFIX).strip()
        try:
            argv = shlex.split(command)
        except ValueError as exc:
            raise LeagueError(f"cannot split the command: {exc}") from None
        if not argv or len(command) > 2000:
            raise LeagueError("the command is empty or longer than 2000 characters")
        if "\x00" in command or any("\ud800" <= c <= "\udfff" for c in command):
            raise LeagueError("the command is not text a program can be started with (a NUL or a lone surrogate)")
        return Upload("cmd", command.encode(), command)
    if archive is not None:
        if not config.eaai_kit:
            raise LeagueError(
                "this league takes no EAAI-kit players: its organizer has not set eaai_kit in league.toml"
            )
        if not (league_dir / config.eaai_kit).exists():
            raise LeagueError("the league's EAAI kit (eaai_kit) is missing on the server; ask an organizer", 503)
        checked = check_eaai_upload(archive, class_name or "", config.max_archive_bytes)
        return Upload(
            "eaai",
            archive,
            f"{checked.player}:{checked.class_name}",
            max(len(archive), checked.unpacked),
            stage=lambda folder: staged_eaai_upload(folder, archive, checked),
        )
    assert source is not None
    if source.startswith(b"PK\x03\x04") or (source[:1] == b"\x08" and b"\x00" in source[:4096]):
        raise LeagueError(POLICY_AS_SOURCE)  # before it is read as text
    tree = python_tree(source, config.max_file_bytes)
    if is_policy_tree(tree):  # a policy module (act, none of a bot's decisions)
        return check_policy(config, source, "py")
    spec = f"bots/{hashlib.sha256(source).hexdigest()[:32]}/bot.py"
    return Upload("file", source, spec, stage=written_inside(lambda folder: store_file(folder / spec, source)))


def check_policy(config: LeagueConfig, data: bytes, form: str | None) -> Upload:
    """A trained policy (``form``: ``py``, ``onnx`` or ``npz``) checked against the league's ``config``.

    A module or an ONNX model is code: it is parsed (the module) or sniffed (the model) here and
    runs only behind the wall, in the check and in its games.  MLP weights are data: they are read
    here as strictly as the format allows (:func:`arena.engine.mlp.check_npz`: names, dtypes,
    shapes, sizes, no pickle, finite) and play in the arena's process, compiled, like a built-in."""
    if form not in POLICY_FORMS:
        raise LeagueError(f"policy format {str(form)[:20]!r} is not one of {', '.join(POLICY_FORMS)}")
    limit = config.max_file_bytes if form == "py" else config.max_archive_bytes
    if len(data) > limit:
        raise LeagueError(f"the policy file is {len(data)} bytes; the limit is {limit}", 413)
    if form == "py":
        if not is_policy_tree(python_tree(data, limit)):
            raise LeagueError(
                "the module is not a policy: a policy defines act(obs, mask, rng) and none of a bot's decisions"
            )
    elif form == "onnx":
        if data[:1] != b"\x08":
            raise LeagueError("the file is not an ONNX model (a model begins with its IR version)")
    else:
        from arena.engine.mlp import MlpError, load_policy_mlp

        try:
            load_policy_mlp(data, "the .npz", max_bytes=NPZ_UNPACKED_FACTOR * len(data))
        except MlpError as exc:
            raise LeagueError(str(exc)) from None
    spec = f"bots/{hashlib.sha256(data).hexdigest()[:32]}/policy.{form}"
    return Upload("policy", data, spec, stage=written_inside(lambda folder: store_file(folder / spec, data)))


def python_tree(data: bytes, limit: int) -> ast.Module:
    """Python source bytes parsed, or a one-line :class:`LeagueError` (size, text, NUL, syntax)."""
    if len(data) > limit:
        raise LeagueError(f"the file is {len(data)} bytes; the limit is {limit}", 413)
    if not data.strip():
        raise LeagueError("the file is empty")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise LeagueError(f"the file is not UTF-8 text (byte {exc.start})") from None
    if "\x00" in text:
        raise LeagueError("the file holds a NUL byte; send Python source text")
    try:
        return ast.parse(text)
    except SyntaxError as exc:
        raise LeagueError(f"the file is not valid Python: {exc.msg} (line {exc.lineno})") from None
    except (RecursionError, MemoryError):  # the parser's own limits: an expression nested thousands deep
        raise LeagueError("the file nests an expression too deeply for Python's parser") from None


def store_file(path: Path, data: bytes) -> None:
    """A bot file in a folder of its own (a sandboxed bot's folder holds only it), once."""
    if path.exists():
        reuse_folder(path.parent)  # a leftover the sweep could take before the new version points to it
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, data)
    except OSError as exc:
        raise LeagueError(f"the server cannot store the file: {exc.strerror or exc}", 507) from None
