"""The rules a game is played by: a frozen, validated settings record.

:class:`Rules` holds every option of the rules contract (docs: the options
table of the project's rules page) with the standard game as its defaults.
It is validated in one place (``Rules.__post_init__``); every problem raises
:class:`RulesError` with a one-line message naming the key, the bad value and
what is allowed.  Kernels never see this class: the engine packs
it into its int64 rules array (:func:`arena.engine.rules_array.rules_array`);
the settings layer knows nothing of slots.

Rules usually come from a TOML file.  :func:`load_rules` takes a preset name
(``standard``, ``eaai``, ``oklahoma``: the files in ``arena/presets/``, shipped
as package data so an installed arena finds them from any folder) or a
path to a ``.toml`` file, plus optional overrides (e.g. from the command line,
see :func:`parse_overrides`).  A file holds its keys at top level or under a
``[rules]`` table, and may start from another preset with ``preset = "..."``
and override some keys::

    # my_rules.toml
    preset = "eaai"
    knock_limit = 5
"""

from __future__ import annotations

import dataclasses
import difflib
import importlib.resources
import numbers
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

import arena

#: What reading a TOML file raises besides ``OSError``: bad syntax, bytes that are not UTF-8 (``UnicodeDecodeError``,
#: not a ``TOMLDecodeError``), a value nested too deeply for the recursive reader (``RecursionError``).
TOML_ERRORS = (tomllib.TOMLDecodeError, UnicodeDecodeError, RecursionError)


class UnreadableError(ValueError):
    """A settings file the machine will not let us read (no permission, an I/O error): the environment's
    fault, not the file's, so a command exits 3 for it, not 2.  The message is one line naming the file."""


def read_settings(path: Path) -> str:
    """The text of a settings file (a config, rules); :class:`UnreadableError` when the machine refuses it.

    A file that is missing or a folder is left to the caller, which names it as bad input; a read refused
    (PermissionError) or failing (EIO) was a traceback from ``arena rules`` and ``arena run``.  (A rules
    file a config names is read by :func:`load_rules`, whose RulesError every reader of rules expects.)
    """
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        raise
    except OSError as exc:
        raise UnreadableError(f"{path}: cannot read it: {exc.strerror or exc}") from None
    return settings_text(data)


#: A settings file's encoding: UTF-8, with or without the byte-order mark some editors (Windows Notepad)
#: write first, which TOML does not allow and which read as "Invalid statement (at line 1, column 1)".
SETTINGS_ENCODING = "utf-8-sig"


def settings_text(data: bytes) -> str:
    """A settings file's bytes as text (:data:`SETTINGS_ENCODING`); a UnicodeDecodeError is one of
    :data:`TOML_ERRORS`, said by :func:`toml_problem`."""
    return data.decode(SETTINGS_ENCODING)


def toml_problem(exc: BaseException) -> str:
    """Why a file did not read as TOML (one of :data:`TOML_ERRORS`), for a line ``<file> is <this>``."""
    if isinstance(exc, UnicodeDecodeError):
        return f"not UTF-8 text (byte 0x{exc.object[exc.start]:02x} at offset {exc.start}); save it as UTF-8"
    if isinstance(exc, RecursionError):
        return "not valid TOML: a value is nested too deeply"
    return f"not valid TOML: {exc}"


#: Where the preset files live: ``arena/presets/<name>.toml``, package data
#: (see ``[tool.setuptools.package-data]`` in pyproject.toml), so a wheel
#: install finds them as well as a checkout does.  A plain folder, not a zip:
#: numba's on-disk cache needs real files too.
PRESETS_DIR = Path(str(importlib.resources.files(arena) / "presets"))

#: The ``next_dealer`` choices (the engine gives each a code in its rules array).
NEXT_DEALERS: tuple[str, ...] = ("alternate", "winner", "loser")

#: Upper bounds of the point settings (see ``_int``): a bonus above 1,000 or a
#: target above 10,000 is no variant anyone plays, and with them a game's
#: scores stay far inside the int32 columns of the stored tables.
MAX_BONUS = 1000
MAX_TARGET = 10_000

#: The key a rules file uses to start from another preset.
PRESET_KEY = "preset"


class RulesError(ValueError):
    """A rules setting, file or preset that cannot be used.

    ``str(error)`` is one line: ``rules: <detail>``, or
    ``rules (<source>): <detail>`` when the source (a file, ``overrides``) is
    known.
    """

    def __init__(self, detail: str, *, key: str | None = None, source: str | None = None):
        self.detail = detail
        self.key = key
        self.source = source
        where = f" ({source})" if source else ""
        super().__init__(f"rules{where}: {detail}")

    def with_source(self, source: str | None) -> RulesError:
        """The same error attributed to ``source`` (the first one given wins)."""
        if self.source or not source:
            return self
        return RulesError(self.detail, key=self.key, source=source)


# --- field specifications ------------------------------------------------------
# Each field's metadata says what values it accepts; __post_init__ reads it.


def _int(lo: int, hi: int, note: str = "") -> dict[str, Any]:
    # Every integer setting has an upper bound too: the kernels keep scores
    # and counters in int64 (and the stored tables in int16/int32 columns), so
    # an unbounded bonus would overflow or wrap silently.  The bounds are far
    # past any real variant and keep every score well inside int32.
    return {"kind": "int", "lo": lo, "hi": hi, "allowed": f"integer {lo}..{hi}", "note": note}


def _bool() -> dict[str, Any]:
    return {"kind": "bool", "allowed": "true or false"}


def _choice(*choices: str) -> dict[str, Any]:
    listed = ", ".join(f'"{c}"' for c in choices)
    return {"kind": "choice", "choices": choices, "allowed": f"one of {listed}"}


def _fmt(value: Any) -> str:
    """A value as it would be written in TOML (true/false, "text", 12)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"'
    return repr(value)


def _check(key: str, value: Any, spec: Mapping[str, Any]) -> Any:
    """``value`` normalised (plain int/bool/str), or RulesError naming ``key``."""
    kind, allowed = spec["kind"], spec["allowed"]
    shown = f"{key} = {_fmt(value)}"
    if kind == "int":
        # bool is an int subclass in Python; here true/false is never a number.
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
            raise RulesError(f"{shown} has the wrong type (allowed: {allowed})", key=key)
        value = int(value)
        lo, hi = spec["lo"], spec["hi"]
        if not lo <= value <= hi:
            raise RulesError(f"{shown} is out of range (allowed: {allowed})", key=key)
        return value
    if kind == "bool":
        if not isinstance(value, (bool, np.bool_)):
            raise RulesError(f"{shown} has the wrong type (allowed: {allowed})", key=key)
        return bool(value)
    # choice
    if not isinstance(value, str):
        raise RulesError(f"{shown} has the wrong type (allowed: {allowed})", key=key)
    if value not in spec["choices"]:
        raise RulesError(f"{shown} is not allowed ({_did_you_mean(value, spec['choices'])}allowed: {allowed})", key=key)
    return value


def _did_you_mean(word: str, options: Iterable[str]) -> str:
    """``"did you mean 'x'? "`` for the closest option, or ``""``."""
    close = difflib.get_close_matches(word, list(options), n=1)
    return f"did you mean '{close[0]}'? " if close else ""


# --- the settings record ---------------------------------------------------------


@dataclass(frozen=True)
class Rules:
    """Every option of the rules; the defaults are the standard game.

    Seed numbers (000 Polish, 001 Turkish, 003 Slovenian, 004 Estonian) name
    the user's rule documents that each default or alternative comes from.
    Construct with keywords, ``Rules.from_dict`` or :func:`load_rules`; every
    construction path is validated by ``__post_init__``.
    """

    knock_limit: int = field(default=10, metadata=_int(0, 10, "0 = gin only"))
    """Most deadwood a player may knock with.  Standard 10; any 0..10 is a
    house variant, 0 meaning a player may only end the hand by going gin.
    With ``oklahoma`` on, the upcard sets each hand's limit, never above
    this setting (the choice documented in ``arena/engine/step.py``)."""

    gin_bonus: int = field(default=25, metadata=_int(0, MAX_BONUS))
    """Bonus for going gin (on top of the defender's deadwood).  25 standard;
    20 in some sources."""

    big_gin: bool = field(default=True, metadata=_bool())
    """Whether a player whose 11 cards all form melds may declare big gin
    instead of discarding.  On in the usual rules; off in the EAAI 2021 competition
    rules (the ``eaai`` preset)."""

    big_gin_bonus: int = field(default=31, metadata=_int(0, MAX_BONUS))
    """Bonus for big gin (on top of the defender's deadwood).  31, as in the usual rules.
    Unused when ``big_gin`` is off."""

    undercut_bonus: int = field(default=25, metadata=_int(0, MAX_BONUS))
    """Bonus the defender scores for an undercut.  25 in the usual rules;
    20 or 10 in some sources."""

    undercut_on_tie: bool = field(default=True, metadata=_bool())
    """Whether equal deadwood is an undercut (defender scores).  Yes in the
    usual rules; off means a tie goes to the knocker."""

    target: int = field(default=100, metadata=_int(1, MAX_TARGET))
    """Game score that wins the game.  100 standard; 50 and 200 are offered
    by some computer games; any number 1..10,000 is accepted."""

    next_dealer: str = field(default="alternate", metadata=_choice(*NEXT_DEALERS))
    """Who deals after a scored hand: ``"alternate"`` (the other player,
    the usual rule), ``"winner"`` (the hand's winner, as in Hoyle) or ``"loser"``.
    After a dead hand the same dealer deals again in every case."""

    no_retake: bool = field(default=True, metadata=_bool())
    """Whether the card just taken from the discard pile may not be discarded
    in the same turn.  On in the usual rules; off allows it."""

    oklahoma: bool = field(default=False, metadata=_bool())
    """Oklahoma gin (a common variant): each hand's knock limit is the first
    upcard's value (face cards 10, an Ace means gin only; never above
    ``knock_limit``), and a spade upcard doubles every point of that hand.
    Off by default."""

    turn_cap: int = field(default=200, metadata=_int(10, 10_000))
    """Engine safety, not in the seeds: a hand still running after this many
    turns (players trading discard-pile cards forever) is ended as "capped"
    with no score and counted separately in the results."""

    hand_cap: int = field(default=1000, metadata=_int(1, 100_000))
    """Engine safety, not in the seeds: a game reaching this many hands ends
    with no winner, so bots that never knock cannot hang a tournament."""

    def __post_init__(self) -> None:
        # The one place rules are validated; values are normalised to plain
        # Python types (e.g. numpy ints from an array become int).
        for f in dataclasses.fields(self):
            object.__setattr__(self, f.name, _check(f.name, getattr(self, f.name), f.metadata))

    # --- conversions ---------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """The settings as a plain dict, in field order (TOML-ready)."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], source: str | None = None) -> Rules:
        """Rules from a mapping of settings; missing keys keep their defaults.

        ``d`` may hold ``preset = <name or path>`` to start from that preset
        instead of the defaults.  ``source`` (a file name, ``"overrides"``)
        is named in error messages.
        """
        return _from_table(d, source=source, base_dir=None, seen=())

    def with_overrides(self, overrides: Mapping[str, Any], source: str | None = "overrides") -> Rules:
        """A copy with some settings changed, validated like any other rules."""
        if PRESET_KEY in overrides:
            raise RulesError(
                f"'{PRESET_KEY}' cannot be an override; load that preset instead", key=PRESET_KEY, source=source
            )
        _check_keys(overrides, source)
        try:
            return dataclasses.replace(self, **overrides)
        except RulesError as e:
            raise e.with_source(source) from None

    # --- display -------------------------------------------------------------

    def describe(self) -> str:
        """A readable table of the settings; ``*`` marks values off the default."""
        defaults = Rules()
        rows = [("setting", "value", "default", "allowed")]
        for f in dataclasses.fields(self):
            value, default = getattr(self, f.name), getattr(defaults, f.name)
            mark = "*" if value != default else " "
            allowed = f.metadata["allowed"] + (f" ({f.metadata['note']})" if f.metadata.get("note") else "")
            rows.append((f"{mark}{f.name}", _fmt(value), _fmt(default), allowed))
        widths = [max(len(r[i]) for r in rows) for i in range(3)]
        lines = []
        for i, (name, value, default, allowed) in enumerate(rows):
            if i == 0:
                name = " " + name
            lines.append(f"{name:<{widths[0]}}  {value:<{widths[1]}}  {default:<{widths[2]}}  {allowed}".rstrip())
        lines.append("(* = differs from the standard default)")
        return "\n".join(lines)


#: The setting names, in field order.
RULE_KEYS: tuple[str, ...] = tuple(f.name for f in dataclasses.fields(Rules))


# --- loading ---------------------------------------------------------------------


def available_presets() -> list[str]:
    """Names of the preset files in ``arena/presets``, sorted."""
    return sorted(p.stem for p in PRESETS_DIR.glob("*.toml"))


def load_rules(name_or_path: str | Path, overrides: Mapping[str, Any] | None = None) -> Rules:
    """Rules from a preset name or a ``.toml`` file, then ``overrides`` applied.

    A name without a ``.toml`` suffix or a path separator is a preset in
    ``arena/presets``; anything else is a file path.  The settings of the
    whole chain (preset, the files that inherit from it, the overrides) are
    merged first and validated once, each bad value named with the file
    that set it.
    """
    settings: dict[str, Any] = {}
    origin: dict[str, str | None] = {}
    _collect(name_or_path, None, (), settings, origin)
    if overrides:
        if PRESET_KEY in overrides:
            raise RulesError(
                f"'{PRESET_KEY}' cannot be an override; load that preset instead", key=PRESET_KEY, source="overrides"
            )
        _check_keys(overrides, "overrides")
        settings.update(overrides)
        origin.update(dict.fromkeys(overrides, "overrides"))
    return _build(settings, origin)


def parse_overrides(items: Iterable[str]) -> dict[str, Any]:
    """``["knock_limit=5", "big_gin=false", "next_dealer=winner"]`` as a dict.

    Values use TOML syntax (``5``, ``false``, ``"winner"``); a value that is
    not valid TOML is taken as a bare string.  Keys are checked here so a
    typo is reported with a suggestion.
    """
    out: dict[str, Any] = {}
    for item in items:
        key, sep, text = item.partition("=")
        key, text = key.strip(), text.strip()
        if not sep or not key:
            raise RulesError(f"override '{item}' is not of the form key=value", source="overrides")
        try:
            value = tomllib.loads(f"v = {text}")["v"]
        except tomllib.TOMLDecodeError:
            value = text
        if key in out:  # the last one silently won: say which of the two was meant
            raise RulesError(
                f"override '{key}' is given twice ({key}={out[key]!r} and {item!r}); give it once", source="overrides"
            )
        out[key] = value
    _check_keys(out, "overrides")
    return out


def _is_path(name_or_path: str | Path) -> bool:
    if isinstance(name_or_path, Path):
        return True
    return name_or_path.endswith(".toml") or "/" in name_or_path or "\\" in name_or_path


def read_from(name: str, folder: Path) -> str:
    """A rules name written in a file of ``folder`` (a tournament config), as :func:`load_rules` should read it.

    A rules file that sits in ``folder`` is that file, made absolute, so the config means the
    same from any working folder and its saved copy in a run folder does too; a preset's name,
    or a file not there, is left as written (read from the working folder, as on the command line).
    """
    if not _is_path(name):
        return name
    path = folder / Path(name).expanduser()
    return str(path.resolve()) if path.is_file() else name


def _collect(
    name_or_path: str | Path,
    base_dir: Path | None,
    seen: tuple[Path, ...],
    settings: dict[str, Any],
    origin: dict[str, str | None],
) -> None:
    """Merge the settings of a preset or file, after those of the preset it names."""
    if _is_path(name_or_path):
        path = Path(name_or_path)
        if base_dir is not None and not path.is_absolute():
            path = base_dir / path
        source = str(name_or_path)
    else:
        name = str(name_or_path)
        presets = available_presets()
        if name not in presets:
            raise RulesError(
                f"unknown preset '{name}' ({_did_you_mean(name, presets)}available presets: {', '.join(presets)})",
                key=PRESET_KEY,
            )
        path = PRESETS_DIR / f"{name}.toml"
        source = f"preset {name}"
    resolved = path.resolve()
    if resolved in seen:
        chain = " -> ".join(p.name for p in (*seen, resolved))
        raise RulesError(f"presets inherit in a cycle: {chain}", key=PRESET_KEY, source=source)
    _merge_table(_read_toml(path, source), source, path.parent, (*seen, resolved), settings, origin)


def _read_toml(path: Path, source: str) -> dict[str, Any]:
    try:
        with open(path, "rb") as fh:
            data = tomllib.loads(settings_text(fh.read()))
    except FileNotFoundError:
        raise RulesError(f"file {path} does not exist", source=source) from None
    except OSError as e:
        raise RulesError(f"cannot read {path}: {e.strerror or e}", source=source) from None
    except TOML_ERRORS as e:
        raise RulesError(f"{path} is {toml_problem(e)}", source=source) from None
    if "rules" in data and isinstance(data["rules"], dict):
        # A [rules] table: other tables belong to other readers (e.g. a
        # tournament section), but loose top-level keys would be ignored
        # silently, so they are an error.
        loose = [k for k, v in data.items() if k != "rules" and not isinstance(v, dict)]
        if loose:
            raise RulesError(
                f"key '{loose[0]}' is outside the [rules] table (put every setting under [rules])",
                key=loose[0],
                source=source,
            )
        return data["rules"]
    return data


def _check_keys(d: Mapping[str, Any], source: str | None) -> None:
    for key in d:
        if key not in RULE_KEYS:
            hint = _did_you_mean(str(key), RULE_KEYS)
            raise RulesError(
                f"unknown key '{key}' ({hint}known keys: {', '.join(RULE_KEYS)})", key=str(key), source=source
            )


def _merge_table(
    d: Mapping[str, Any],
    source: str | None,
    base_dir: Path | None,
    seen: tuple[Path, ...],
    settings: dict[str, Any],
    origin: dict[str, str | None],
) -> None:
    table = dict(d)
    if PRESET_KEY in table:
        preset = table.pop(PRESET_KEY)
        if not isinstance(preset, (str, Path)):
            raise RulesError(
                f"{PRESET_KEY} = {_fmt(preset)} has the wrong type (allowed: a preset name or a .toml path)",
                key=PRESET_KEY,
                source=source,
            )
        try:
            _collect(preset, base_dir, seen, settings, origin)
        except RulesError as e:
            raise e.with_source(source) from None
    _check_keys(table, source)
    settings.update(table)
    origin.update(dict.fromkeys(table, source))


def _build(settings: Mapping[str, Any], origin: Mapping[str, str | None]) -> Rules:
    """One validation of the merged settings; an error names the file that set the bad value."""
    try:
        return Rules(**settings)
    except RulesError as e:
        raise e.with_source(origin.get(e.key or "")) from None


def _from_table(d: Mapping[str, Any], source: str | None, base_dir: Path | None, seen: tuple[Path, ...]) -> Rules:
    settings: dict[str, Any] = {}
    origin: dict[str, str | None] = {}
    _merge_table(d, source, base_dir, seen, settings, origin)
    return _build(settings, origin)
