"""A reference to a bot, parsed once from the string a user writes.

Users name bots in one string, on the command line and in configs:

==========================  ==========  =========================================
spec                        kind        meaning
==========================  ==========  =========================================
``simple``, ``early-knock``  builtin     a module of the ``bots`` package
``early-knock:knock_at=5``  builtin     .. with some of its parameters set
                                        (``NAME:key=value,key=value``)
``my_bot.py``, ``a/b``       file        a ``.py`` file (a ``.py`` suffix or a
                                        slash means a path), loaded in-process
``sandbox:my_bot.py``        sandbox     a bot file (or a ``.py`` or ``.onnx`` policy)
                                        run in its own walled process
``cmd:java -cp d Player``    command     any program speaking docs/PROTOCOL.md
``eaai:p.jar:pkg.Player``    eaai        a player of the EAAI Gin Rummy kit (a jar
                                        or a class folder, and its class), run
                                        through the arena's adapter, walled
``policy:agent.py``          policy      a trained policy: a module with a batched
``policy:model.onnx``                    ``act(obs, mask, rng)``, an ONNX model, or
``policy:weights.npz``                   MLP weights (docs/how-to/policy-bots.md)
==========================  ==========  =========================================

:meth:`BotRef.parse` is the one place these prefixes are read; everything
else (config, worker, ``check-bot``, the web) takes a :class:`BotRef`.  It is
plain data in the settings layer: loading the bot it names is the bots
layer's job (:func:`arena.loading.load.load`).
"""

from __future__ import annotations

import math
import os
import re
import shlex
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

BotKind = Literal["builtin", "file", "sandbox", "command", "eaai", "policy"]

CMD_PREFIX = "cmd:"
SANDBOX_PREFIX = "sandbox:"
EAAI_PREFIX = "eaai:"
POLICY_PREFIX = "policy:"
#: The file forms of a policy, by suffix.
POLICY_SUFFIXES = (".py", ".onnx", ".npz")
#: The policy forms that are bytes, not text (they travel to workers in base64).
BINARY_POLICY_SUFFIXES = (".onnx", ".npz")
#: Characters no bot spec holds (a tab is allowed: it separates a command's words).
_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")
#: A Java class name, checked with ``fullmatch`` (``$`` would also pass a name with a final newline).
_JAVA_CLASS = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*(\.[A-Za-z_$][A-Za-z0-9_$]*)*")


#: Letters of other scripts that read as Latin ones in a results table (after NFKC and case folding).
_HOMOGLYPHS = str.maketrans(
    {
        "а": "a", "в": "b", "е": "e", "к": "k", "м": "m", "н": "h", "о": "o", "р": "p", "с": "c", "т": "t",
        "у": "y", "х": "x", "і": "i", "ј": "j", "ѕ": "s", "ԁ": "d", "ԛ": "q", "ԝ": "w", "ɡ": "g",
        "α": "a", "β": "b", "ε": "e", "ι": "i", "κ": "k", "ν": "v", "ο": "o", "ρ": "p", "τ": "t", "υ": "u",
        "χ": "x",
    }
)  # fmt: skip


def shown_name(name: str) -> str:
    """A bot's name as an error line shows it: quoted, and escaped (``'sim\\xa0ple'``) where it holds a
    character that does not show or that reads as another, so that the line names the culprit."""
    plain = name.isascii() and name.isprintable() and name == name.strip()
    return f"'{name}'" if plain else ascii(name)


#: First characters of a cell that a spreadsheet reads as a formula (OWASP's CSV injection list).
FORMULA_STARTS = "=+-@"


def name_problem(name: str) -> str:
    """Why ``name`` can't name a bot in a table ("" if it can): characters that don't show (a control,
    zero-width or no-break character) or spaces at its ends make two rows that read alike; and a first
    character that makes a spreadsheet read the cell as a formula (``=HYPERLINK(..)`` in
    ``leaderboard.csv`` runs when the table is opened: a program names itself in its hello)."""
    if not name.strip():
        return "is empty"
    if name != name.strip():
        return "starts or ends with a space"
    if name[0] in FORMULA_STARTS:
        return f"starts with {name[0]!r} (a spreadsheet opening the tables would read it as a formula)"
    if any(not c.isprintable() or unicodedata.category(c) in ("Cf", "Zs") and c != " " for c in name):
        return "holds a character that does not show (a control, zero-width or no-break character)"
    return ""


def look_alike_key(name: str) -> str:
    """The form two bot names that read alike share: ``rbot``, ``Rbot``, ``RBOT`` and ``rbot`` with a
    Cyrillic o.  Compared after Unicode's compatibility folding (NFKC: full-width letters, ligatures), case
    folding, and the look-alike letters of :data:`_HOMOGLYPHS`; ``_`` and ``-`` stay apart (``gin-chasing``
    and ``gin_chasing`` are one built-in by rule, not by looks)."""
    return unicodedata.normalize("NFKC", name).casefold().translate(_HOMOGLYPHS)


class BotRefError(ValueError):
    """A bot spec that cannot name a bot; the message is one line naming it."""


@dataclass(frozen=True)
class BotRef:
    """What a bot spec names: ``kind``, ``ref`` (a built-in key, a file path or
    a command line), the folder a command runs in, and parameter overrides."""

    kind: BotKind
    ref: str
    cwd: str | None = None
    params: tuple[tuple[str, float], ...] = ()

    @classmethod
    def parse(cls, spec: str, base_dir: Path | None = None, *, sandbox: bool = False) -> BotRef:
        """Parse ``spec``; relative file paths are taken from ``base_dir`` when
        the file exists there (a config's folder), and ``sandbox`` runs a plain
        file spec in the sandbox (a config's ``sandbox = true``)."""
        if not isinstance(spec, str) or not spec.strip():
            raise BotRefError(
                f"bot spec {spec!r} is empty (a built-in name, a .py path, sandbox:FILE, policy:FILE or cmd:PROGRAM)"
            )
        if _CONTROL.search(spec.strip()):
            # Every error below names the spec: a line break in it would split that one line (a
            # final one, as a spec read from a file has, is whitespace the branches below strip).
            raise BotRefError(f"bot spec {spec!r} holds a control character (a line break?)")
        if spec.startswith(CMD_PREFIX):
            command = split_command(spec[len(CMD_PREFIX) :], spec)
            return cls("command", shlex.join(command))
        if spec.startswith(EAAI_PREFIX):
            path, sep, name = spec[len(EAAI_PREFIX) :].strip().rpartition(":")
            if not sep or not path or not name:
                raise BotRefError(f"{spec}: write eaai:PLAYER.jar:CLASS or eaai:CLASS_FOLDER:CLASS")
            if not _JAVA_CLASS.fullmatch(name):
                raise BotRefError(f"{spec}: {name!r} is not a Java class name (e.g. com.example.MyPlayer)")
            return cls("eaai", f"{_resolve(path, base_dir)}:{name}")
        if spec.startswith(SANDBOX_PREFIX):
            path = spec[len(SANDBOX_PREFIX) :].strip()
            if not path:
                raise BotRefError(f"{spec}: no file after '{SANDBOX_PREFIX}'")
            return cls("sandbox", _resolve(path, base_dir))
        if spec.startswith(POLICY_PREFIX):
            path = spec[len(POLICY_PREFIX) :].strip()
            if not path:
                raise BotRefError(f"{spec}: no file after '{POLICY_PREFIX}' (a .py module, an .onnx model or an .npz)")
            if not path.lower().endswith(POLICY_SUFFIXES):
                raise BotRefError(
                    f"{spec}: a policy file ends in {', '.join(POLICY_SUFFIXES)} (a module with act(), "
                    "an ONNX model, MLP weights)"
                )
            return cls("policy", _resolve(path, base_dir))
        inline = _FILE_WITH_SETTINGS.fullmatch(spec.strip())
        if inline and not os.path.exists(spec.strip()):  # my_bot.py:knock_at=3 (a built-in's inline settings)
            name = inline.group("path")
            raise BotRefError(
                f"{spec}: inline settings (NAME:key=value) are for built-in bots; for a bot file, set them in "
                f'a config\'s [variants] table (mine = {{ bot = "{name.strip()}", key = value }}) or in its PARAMS'
            )
        if is_path(spec):
            return cls("sandbox" if sandbox else "file", _resolve(spec, base_dir))
        name, sep, settings = spec.partition(":")
        if not sep:
            return cls("builtin", spec.replace("-", "_"))
        return cls("builtin", name.strip().replace("-", "_"), params=_inline_params(spec, name, settings))

    @classmethod
    def command(cls, command: list[str], cwd: str | None = None) -> BotRef:
        """A ``command`` ref from a program and its arguments (a config's ``command = [...]``)."""
        return cls("command", shlex.join(command), cwd)

    @property
    def argv(self) -> list[str]:
        """The program and its arguments of a ``command`` ref."""
        return shlex.split(self.ref)

    @property
    def player(self) -> tuple[str, str]:
        """The jar or class folder and the class name of an ``eaai`` ref."""
        path, _, name = self.ref.rpartition(":")
        return path, name

    @property
    def in_process(self) -> bool:
        """Built-in, plain file and policy bots run in the arena's process; the others in their own."""
        return self.kind in ("builtin", "file", "policy")

    @property
    def display(self) -> str:
        """A bot's default name: a built-in's name (with its inline parameters), a file's stem,
        a command's first word."""
        if self.kind == "builtin":
            name = self.ref.replace("_", "-")
            if self.params:
                name += ":" + ",".join(f"{k}={_number(v)}" for k, v in self.params)
            return name
        if self.kind == "command":
            return Path(self.argv[0]).name
        if self.kind == "eaai":
            return self.player[1].rsplit(".", 1)[-1]
        return Path(self.ref).stem

    def spec(self) -> str:
        """The string form that parses back to this ref (without cwd and params)."""
        if self.kind == "command":
            return CMD_PREFIX + self.ref
        if self.kind == "sandbox":
            return SANDBOX_PREFIX + self.ref
        if self.kind == "eaai":
            return EAAI_PREFIX + self.ref
        if self.kind == "policy":
            return POLICY_PREFIX + self.ref
        return self.display if self.kind == "builtin" else self.ref

    def absolute(self) -> BotRef:
        """The same ref with a file path made absolute (a saved config loads from anywhere)."""
        if self.kind in ("file", "sandbox", "policy"):
            return BotRef(self.kind, str(Path(self.ref).resolve()), self.cwd, self.params)
        if self.kind == "eaai":
            path, name = self.player
            return BotRef(self.kind, f"{Path(path).resolve()}:{name}", self.cwd, self.params)
        return self


#: The decisions a bot file defines (``bots/TEMPLATE.py``); a policy module defines ``act`` and none of them.
BOT_DECISIONS = frozenset({"take_upcard", "draw", "big_gin", "discard", "knock"})


def is_policy_source(text: str) -> bool:
    """True when Python source ``text`` is a policy module (a top-level ``act``, none of a bot's
    decisions) rather than a bot file; False for a bot file or text that does not parse."""
    import ast

    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return is_policy_tree(tree)


def is_policy_tree(tree) -> bool:
    """:func:`is_policy_source` on source already parsed (an ``ast.Module``)."""
    import ast

    defined = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    return "act" in defined and not defined & BOT_DECISIONS


#: A bot file followed by inline settings (``my_bot.py:knock_at=3``), which only built-in names take.
_FILE_WITH_SETTINGS = re.compile(r"(?P<path>[^:]+\.py):(?P<settings>[^/\\:]*=[^/\\:]*)")


def is_path(spec: str) -> bool:
    """A spec that names a file: a ``.py`` suffix or a slash (not a prefixed spec)."""
    prefixed = spec.startswith((CMD_PREFIX, SANDBOX_PREFIX, EAAI_PREFIX, POLICY_PREFIX))
    return not prefixed and (spec.endswith(".py") or "/" in spec or "\\" in spec)


def _number(v: float) -> str:
    """``v`` short (``5``, ``0.25``) where that is exact, else in full: a name must parse back to the value."""
    if v.is_integer() and abs(v) < 2**53:
        return str(int(v))
    short = f"{v:g}"
    return short if float(short) == v else repr(v)


#: A parameter's name in an inline setting (``early-knock:knock_at=5``).
_PARAM_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _inline_params(spec: str, name: str, settings: str) -> tuple[tuple[str, float], ...]:
    """The ``key=value,...`` after a built-in's name, as a ref's ``params``; a one-line error naming ``spec``.

    Whether the bot has those parameters, and whether the values are in
    range, is the bot's to say when it loads (``Bot.with_params``).
    """
    usage = (
        "a built-in takes its parameters as NAME:key=value,key=value; other prefixes are cmd:, sandbox:, eaai:, policy:"
    )
    if not name.strip() or not settings.strip():
        raise BotRefError(f"{spec}: {usage}")
    out: dict[str, float] = {}
    for item in settings.split(","):
        key, eq, value = (part.strip() for part in item.partition("="))
        if not eq or not _PARAM_NAME.fullmatch(key):
            raise BotRefError(f"{spec}: {item.strip()!r} is not key=value ({usage})")
        if key in out:
            raise BotRefError(f"{spec}: parameter '{key}' is set twice")
        try:
            number = float(value)
        except ValueError:
            number = math.nan
        if not math.isfinite(number):
            raise BotRefError(f"{spec}: parameter '{key}' = {value!r} is not a number")
        out[key] = number
    return tuple(out.items())


def split_command(text: str, spec: str) -> list[str]:
    """A command line split as a shell would, or a one-line error naming ``spec``."""
    try:
        command = shlex.split(text)
    except ValueError as exc:
        raise BotRefError(f"{spec}: cannot split the command: {exc}") from None
    if not command:
        raise BotRefError(f"{spec}: no command after '{CMD_PREFIX}'")
    return command


def _resolve(path: str, base_dir: Path | None) -> str:
    """Bot file paths in a config are relative to the config file's folder."""
    if base_dir is not None and not os.path.isabs(path):
        candidate = base_dir / path
        if candidate.exists():
            return str(candidate)
    return path
