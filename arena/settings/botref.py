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


#: Unicode's confusables (UTS #39, confusables.txt, as packaged by confusable-homoglyphs 3.3.1) that read as
#: an ASCII letter, digit, ``-`` or ``_`` of a name: each ASCII character with the characters (not ASCII,
#: and left as they are by NFKC) whose confusable skeleton it is, case kept (``\u0397``, capital eta, reads
#: as ``H``; ``\u03b7``, small eta, as ``n``).  Generated, not picked by eye: the hand table above caught a
#: Cyrillic o but not ``g\u0131n-chasing`` (dotless i), ``r\u0251ndom`` (Latin alpha) or ``k5\u04bb``.
_CONFUSABLES: dict[str, str] = {
    "a": "\u0251\u03b1\u0430\u237a",
    "b": "\u0184\u042c\u13cf\u1472\u15af",
    "c": "\u0441\u1d04\u2ca5\uabaf\U0001043d",
    "d": "\u0501\u13e7\u146f\ua4d2",
    "e": "\u0435\u04bd\u212e\uab32",
    "f": "\u0584\u1e9d\ua799\uab35",
    "g": "\u018d\u0261\u0581\u1d83",
    "h": "\u04bb\u0570\u13c2",
    "i": "\u0131\u0269\u026a\u03b9\u0456\u04cf\u13a5\u2373\ua647\uab75\U000118c3",
    "j": "\u03f3\u0458",
    "l": (
        "\u0196\u01c0\u0399\u0406\u04c0\u05c0\u05d5\u05df\u0627\u0661\u06f1\u07ca\u16c1\u2223"
        "\u23fd\u2c92\u2d4f\ua4f2\U0001028a\U00010309\U00010320\U00016f28\U0001e8c7"
    ),
    "n": "\u0578\u057c",
    "o": (
        "\u03bf\u03c3\u043e\u0585\u05e1\u0647\u0665\u06be\u06c1\u06d5\u06f5\u0966\u0a66\u0ae6"
        "\u0be6\u0c02\u0c66\u0c82\u0ce6\u0d02\u0d20\u0d66\u0d82\u0e50\u0ed0\u101d\u1040\u10ff"
        "\u1d0f\u1d11\u2c9f\uab3d\U0001042c\U000104ea\U000118c8\U000118d7"
    ),
    "p": "\u03c1\u0440\u2374\u2ca3",
    "q": "\u051b\u0563\u0566",
    "r": "\u0433\u1d26\u2c85\uab47\uab48\uab81",
    "s": "\u01bd\u0455\ua731\uabaa\U00010448\U000118c1",
    "u": "\u028b\u03c5\u057d\u1d1c\ua79f\uab4e\uab52\U000104f6\U000118d8",
    "v": "\u03bd\u0475\u05d8\u1d20\u2228\u22c1\uaba9\U00011706\U000118c0",
    "w": "\u026f\u0461\u051d\u0561\u1d21\uab83\U0001170a\U0001170e\U0001170f",
    "x": "\u00d7\u0445\u1541\u157d\u166e\u292b\u292c\u2a2f",
    "y": "\u0263\u028f\u03b3\u0443\u04af\u10e7\u1d8c\u1eff\uab5a\U000118dc",
    "z": "\u1d22\uab93\U000118c4",
    "A": "\u0391\u0410\u13aa\u15c5\ua4ee\U000102a0\U00016f40",
    "B": "\u0392\u0412\u13f4\u15f7\ua4d0\ua7b4\U00010282\U000102a1\U00010301",
    "C": "\u0421\u13df\u2ca4\ua4da\U000102a2\U00010302\U00010415\U0001051c\U000118e9\U000118f2\U0001f74c",
    "D": "\u13a0\u15de\u15ea\ua4d3",
    "E": "\u0395\u0415\u13ac\u22ff\u2d39\ua4f0\U00010286\U000118a6\U000118ae",
    "F": "\u03dc\u15b4\ua4dd\ua798\U00010287\U000102a5\U00010525\U000118a2\U000118c2\U0001d213",
    "G": "\u050c\u13c0\u13f3\ua4d6",
    "H": "\u0397\u041d\u13bb\u157c\u2c8e\ua4e7\U000102cf",
    "J": "\u037f\u0408\u13ab\u148d\ua4d9\ua7b2",
    "K": "\u039a\u041a\u13e6\u16d5\u2c94\ua4d7\U00010518",
    "L": "\u13de\u14aa\u2cd0\ua4e1\U0001041b\U00010526\U000118a3\U000118b2\U00016f16\U0001d22a",
    "M": "\u039c\u03fa\u041c\u13b7\u15f0\u16d6\u2c98\ua4df\U000102b0\U00010311",
    "N": "\u039d\u2c9a\ua4e0\U00010513",
    "O": (
        "\u039f\u041e\u0555\u07c0\u09e6\u0b20\u0b66\u12d0\u2c9e\u2d54\u3007\ua4f3\U00010292\U000102ab"
        "\U00010404\U000104c2\U00010516\U000114d0\U000118b5\U000118e0"
    ),
    "P": "\u03a1\u0420\u13e2\u146d\u2ca2\ua4d1\U00010295",
    "Q": "\u2d55",
    "R": "\u01a6\u13a1\u13d2\u1587\ua4e3\U000104b4\U00016f35\U0001d216",
    "S": "\u0405\u054f\u13d5\u13da\ua4e2\U00010296\U00010420\U00016f3a",
    "T": "\u03a4\u0422\u13a2\u22a4\u27d9\u2ca6\ua4d4\U00010297\U000102b1\U00010315\U000118bc\U00016f0a\U0001f768",
    "U": "\u054d\u1200\u144c\u222a\u22c3\ua4f4\U000104ce\U000118b8\U00016f42",
    "V": "\u0474\u0667\u06f7\u13d9\u142f\u2d38\ua4e6\ua6df\U0001051d\U000118a0\U00016f08\U0001d20d",
    "W": "\u051c\u13b3\u13d4\ua4ea\U000118e6\U000118ef",
    "X": (
        "\u03a7\u0425\u166d\u16b7\u2573\u2cac\u2d5d\ua4eb\ua7b3\U00010290\U000102b4\U00010317\U00010322\U00010527"
        "\U000118ec"
    ),
    "Y": "\u03a5\u0423\u04ae\u13a9\u13bd\u2ca8\ua4ec\U000102b2\U000118a4\U00016f43",
    "Z": "\u0396\u13c3\ua4dc\U000102f5\U000118a9\U000118e5",
    "2": "\u01a7\u03e8\u14bf\ua644\ua6ef\ua75a",
    "3": "\u01b7\u021c\u0417\u04e0\u2ccc\ua76a\ua7ab\U000118ca\U00016f3b\U0001d206",
    "4": "\u13ce\U000118af",
    "5": "\u01bc\U000118bb",
    "6": "\u0431\u13ee\u2cd2\U000118d5",
    "7": "\U000104d2\U000118c6\U0001d212",
    "8": "\u0222\u0223\u09ea\u0a6a\u0b03\U0001031a\U0001e8cb",
    "9": "\u09ed\u0a67\u0b68\u0d6d\u2cca\ua76e\U000118ac\U000118cc\U000118d6",
    "-": "\u02d7\u06d4\u2010\u2012\u2013\u2043\u2212\u2796\u2cba",
    "_": "\u07fa",
}
_LATIN = str.maketrans({c: ascii_char for ascii_char, chars in _CONFUSABLES.items() for c in chars})
#: After case folding, the strokes that read alike in a table's font: ``simpIe`` (a capital I) is
#: ``simple``, and since case folding makes ``I`` and ``i`` one, ``i`` joins them; ``0`` and ``o`` too.
_STROKES = str.maketrans({"i": "l", "1": "l", "|": "l", "0": "o"})


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
    Cyrillic o; ``simple`` and ``simpIe``.  Compared after Unicode's compatibility folding (NFKC: full-width
    letters, ligatures), the confusables of :data:`_CONFUSABLES` (before case folding, which would make a
    capital eta a small one, read as another letter; and again after it), case folding, the look-alike
    letters of :data:`_HOMOGLYPHS` and the strokes of :data:`_STROKES`; ``_`` and ``-`` stay apart
    (``gin-chasing`` and ``gin_chasing`` are one built-in by rule, not by looks)."""
    folded = unicodedata.normalize("NFKC", name).translate(_LATIN).casefold()
    return folded.translate(_LATIN).casefold().translate(_HOMOGLYPHS).translate(_STROKES)


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
