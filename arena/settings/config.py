"""Tournament configuration: which bots, which format, how many games, where.

A config is a TOML file (``configs/default.toml`` is the README's main job)
read into the frozen :class:`TournamentConfig`, validated in one place, with
command-line overrides applied on top.  Example::

    name = "my-run"
    format = "round-robin"          # or "gauntlet" (candidate vs each of bots)
    bots = ["random", "simple", "early-knock", "knock5", "path/to/my_bot.py"]
    games_per_pair = 2000           # games per matchup, played as duplicate pairs
    seed = 1
    workers = 0                     # 0 = all cores
    rules = "standard"              # a preset, a .toml path, or a [rules] table

    [variants]
    knock5 = { bot = "early-knock", knock_at = 5 }

Every problem is a :class:`ConfigError` with one line naming the key and
what is allowed.
"""

from __future__ import annotations

import dataclasses
import difflib
import os
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from importlib.resources import files
from pathlib import Path
from typing import Any, TypedDict

from arena.settings.botref import BotRef, BotRefError
from arena.settings.rules import (
    PRESET_KEY,
    TOML_ERRORS,
    Rules,
    RulesError,
    load_rules,
    read_from,
    read_settings,
    toml_problem,
)

FORMATS = ("round-robin", "gauntlet")
#: The most worker processes any command starts (``workers``, ``--workers``): each is a process with its own
#: copy of the bots, and a typo of a few more digits would fork until the machine ran out.
MAX_WORKERS = 1024
#: The longest run name, in bytes: a folder name (the OS allows 255), with room for what is derived from it.
MAX_NAME_BYTES = 120
KEYS = (
    "name",
    "format",
    "bots",
    "candidate",
    "variants",
    "games_per_pair",
    "duplicate",
    "shared_deals",
    "seed",
    "workers",
    "chunk_size",
    "rules",
    "record_hands",
    "record_log",
    "results_dir",
    "sprt",
    "sequential",
    "scheduler",
    "limits",
    "sandbox",
    "weak_sandbox",
    "eaai_kit",
)
SPRT_KEYS = ("elo0", "elo1", "alpha", "beta", "elo")
#: How the SPRT counts its evidence: duplicate pairs as one outcome of five, or games as one of three.
SEQUENTIAL = ("pentanomial", "trinomial")
#: What the SPRT's bounds elo0 and elo1 are in: logistic Elo, or normalized Elo (fishtest's default).
SPRT_ELO = ("logistic", "normalized")
#: The largest |elo0| and |elo1| of each Elo model, where the SPRT's log-likelihood ratio is still a finite
#: number for every count of outcomes.  Measured, not assumed (arena.analysis.sprt.llr over lopsided and
#: random counts): a logistic bound past about 6380 makes the expected score 1.0 in floating point and the
#: root finder fails; a normalized one past about 230 (pentanomial; 340 trinomial) asks for a t-value the
#: maximum-likelihood iteration cannot meet.  Both crashed the run after its first chunk was stored, so the
#: bounds are refused at load, with a margin; no useful test comes near them (fishtest's are a few Elo).
SPRT_SPAN = {"logistic": 4000.0, "normalized": 200.0}
#: Time and memory limits, with their defaults and allowed ranges.  The
#: decision/game/memory limits apply to bots in their own processes
#: (external and sandboxed); decision_seconds also to in-process bots, in
#: CPU time of their worker process (a watchdog stops a worker whose bot
#: answers nothing for that long, numba compiling left out); the chunk
#: limit to every chunk (the watchdog stops a worker whose chunk runs
#: longer: max(chunk_min_seconds, games * chunk_seconds_per_game)).
#: Seconds a bot in its own process gets to start and answer the handshake, by
#: kind: a command as docs/PROTOCOL.md says, a sandboxed file longer, since its
#: host compiles the file with numba, cold.
START_SECONDS: dict[str, float] = {"command": 30.0, "sandbox": 120.0}

LIMITS: dict[str, tuple[float, float, float]] = {
    "decision_seconds": (2.0, 0.001, 3600.0),
    "game_seconds": (120.0, 0.01, 86400.0),
    "memory_mb": (2048.0, 16.0, 1 << 20),
    "chunk_seconds_per_game": (0.5, 0.0001, 3600.0),
    "chunk_min_seconds": (300.0, 1.0, 86400.0),
    # after this many games in a row lost to a bot's crash or timeout, it forfeits the rest of the chunk at once
    "max_crashes": (5.0, 1.0, 1000.0),
}


#: The limits counted in whole units (the others are seconds, fractions allowed).
WHOLE_LIMITS = ("memory_mb", "max_crashes")


class BotLimits(TypedDict):
    """The configured limits of a bot in its own process (fields of ``arena.external.Limits``)."""

    decision_s: float
    game_s: float
    memory_mb: int
    sandbox: str  # "wall" or "weak"
    max_crashes: int


class ConfigError(ValueError):
    """A tournament config that cannot be used; the message is one line."""


def _exact(x: float) -> str:
    """A limit's bound as written in the docs: a whole number in full, else as Python prints it."""
    return str(int(x)) if float(x).is_integer() else repr(float(x))


def did_you_mean(word: str, options) -> str:
    """``"did you mean 'x'? "``: an option that begins as ``word`` does (its first four letters: ``gamez`` is
    ``games_per_pair``, though ``name`` is closer letter for letter), else the closest, else ``""``."""
    options = list(options)
    stem = word[:4]
    m = [o for o in options if len(stem) == 4 and o.startswith(stem)] or difflib.get_close_matches(word, options, n=1)
    return f"did you mean '{m[0]}'? " if m else ""


#: What :func:`is_folder_name` allows, for error lines.
FOLDER_NAME = (
    f"a folder name of 1..{MAX_NAME_BYTES} bytes of UTF-8 text, without slashes or control characters, "
    "not starting with ."
)


def is_text(value: str) -> bool:
    """Whether ``value`` is Unicode text: not bytes that are no UTF-8 (a file name or argument such as
    ``bad\xff``, which Python carries as a lone surrogate and cannot write into the run's config.toml;
    the run failed half made)."""
    return not any("\ud800" <= c <= "\udfff" for c in value)


def is_folder_name(name: object) -> bool:
    """Whether ``name`` can name a run's folder inside the results folder, and nothing else.

    A name is joined to the results folder and a ``--fresh`` run deletes what it names, so
    ``..``, ``""`` or a path would reach outside it; a newline made ``results/a\\nb``; the
    OS's limit is 255 bytes.  Runs and sweeps both name their folders by this rule.
    """
    return (
        isinstance(name, str)
        and bool(name)
        and not any(c in name for c in "/\\")
        and not name.startswith(".")
        and not any(ord(c) < 32 or ord(c) == 127 for c in name)
        and is_text(name)
        and len(name.encode("utf-8")) <= MAX_NAME_BYTES
    )


@dataclass(frozen=True)
class TournamentConfig:
    """A tournament as the runner plays it; defaults make a sensible small run."""

    name: str = "run"
    format: str = "round-robin"
    #: Bots: built-in names, variant names from ``variants``, or paths to .py files.
    bots: tuple[str, ...] = ("random", "simple")
    #: Gauntlet only: the bot played against every bot of ``bots``.
    candidate: str | None = None
    #: name -> {"bot": base bot, param: value, ...}
    variants: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    #: Games per matchup; with ``duplicate`` an even number (pairs of seat-swapped games).
    games_per_pair: int = 1000
    #: Play each deal twice with seats swapped, so luck of the deal cancels out.
    duplicate: bool = True
    #: Every matchup plays the same deals (pair i of each matchup is one deal), so the table compares
    #: bots on equal cards.  False: each matchup its own deals, drawn from the seed and the matchup's
    #: identity, so no game shows the cards of another matchup's game (a league, whose games anyone
    #: may watch as they finish, sets it).
    shared_deals: bool = True
    #: Fixes every deal and every bot's randomness; "secret" draws one, kept in the run folder only.
    seed: int | str = 1
    #: Worker processes; 0 means one per core.
    workers: int = 0
    #: Games per chunk (the unit of work, of progress saved, and of resuming).
    chunk_size: int = 2000
    #: A preset name, a path to a rules .toml, or a table of settings (may name a ``preset``).
    rules: str | Mapping[str, Any] = "standard"
    #: Keep one row per hand (hands.parquet); needed for per-hand statistics.
    record_hands: bool = True
    #: With record_hands, keep each game's action log (actions/ in the run folder) for exact replays.
    record_log: bool = True
    results_dir: str = "results"
    #: Early stop of a two-bot match: {elo0, elo1, alpha, beta}; empty = off.
    sprt: Mapping[str, float | str] = field(default_factory=dict)
    #: The SPRT's unit of evidence: "pentanomial" (a duplicate pair is one of five outcomes; the
    #: default with duplicate pairs) or "trinomial" (each game on its own; the only one without).
    sequential: str = ""
    #: A Dask scheduler address (``tcp://host:8786``) to play the chunks on; empty = local processes.
    scheduler: str = ""
    #: Overrides of :data:`LIMITS` (time per decision, game and chunk; memory).
    limits: Mapping[str, float] = field(default_factory=dict)
    #: Run every bot file in its own process through the external protocol.
    sandbox: bool = False
    #: Bots in their own processes without the wall (no namespaces, no other user): only for machines
    #: that can't build it; the manifest and the report say so.
    weak_sandbox: bool = False
    #: The EAAI kit's jar or class folder, for ``eaai:`` players (relative to the config's folder);
    #: empty = ``--eaai-kit`` or ``GIN_ARENA_EAAI_KIT`` (the option wins over this key, this key
    #: over the variable).
    eaai_kit: str = ""
    #: The validated rules, resolved once when the config is made (see :meth:`resolved_rules`);
    #: not a config key: :meth:`replace` hands it on when ``rules`` does not change.
    resolved: Rules | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        def bad(key: str, value: Any, allowed: str) -> ConfigError:
            shown = str(value).lower() if isinstance(value, bool) else repr(value)  # as TOML writes it: true
            return ConfigError(f"config: {key} = {shown} is not allowed (allowed: {allowed})")

        if not is_folder_name(self.name):
            raise bad(
                "name",
                self.name[:60] + "..." if isinstance(self.name, str) and len(self.name) > 60 else self.name,
                FOLDER_NAME,
            )
        if not isinstance(self.rules, (str, Mapping)):
            raise bad("rules", self.rules, "a preset name, a .toml path, or a [rules] table")
        if not isinstance(self.results_dir, (str, os.PathLike)) or not str(self.results_dir):
            raise bad("results_dir", self.results_dir, "a folder path, as text")
        if not is_text(str(self.results_dir)):
            raise bad("results_dir", str(self.results_dir), "a folder path of UTF-8 text")
        object.__setattr__(self, "results_dir", str(self.results_dir))
        if self.format not in FORMATS:
            raise ConfigError(
                f"config: format = {self.format!r} is not allowed "
                f"({did_you_mean(str(self.format), FORMATS)}allowed: {', '.join(FORMATS)})"
            )
        if isinstance(self.bots, str) or not all(isinstance(b, str) and b for b in self.bots):
            raise bad("bots", self.bots, "a list of bot names or paths")
        object.__setattr__(self, "bots", tuple(self.bots))
        if len(set(self.bots)) != len(self.bots):
            raise bad("bots", list(self.bots), "each bot listed once")
        if self.format == "round-robin" and len(self.bots) < 2:
            raise bad("bots", list(self.bots), "at least 2 bots for a round-robin")
        if self.format == "gauntlet":
            if not self.candidate:
                raise ConfigError("config: format = 'gauntlet' needs candidate = the bot to test")
            if self.candidate in self.bots:
                raise bad("candidate", self.candidate, "a bot not also in bots")
            if not self.bots:  # it "played" 0 matchups, exit 0, and left an empty run folder
                raise ConfigError(
                    f"config: a gauntlet plays its candidate {self.candidate!r} against each of bots, "
                    "and bots names no other bot; list at least one opponent"
                )
        if self.seed != "secret":
            if isinstance(self.seed, bool) or not isinstance(self.seed, int) or not 0 <= self.seed <= 2**62:
                raise bad("seed", self.seed, 'integer 0..4611686018427387904, or "secret" for a drawn seed')
        for key, lo, hi in (("games_per_pair", 1, 10**9), ("workers", 0, MAX_WORKERS), ("chunk_size", 2, 10**7)):
            v = getattr(self, key)
            if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
                raise bad(key, v, f"integer {lo}..{hi}")
        for key in ("duplicate", "shared_deals", "record_hands", "record_log", "sandbox", "weak_sandbox"):
            if not isinstance(getattr(self, key), bool):
                raise bad(key, getattr(self, key), "true or false")
        odd = [f"{k} = {getattr(self, k)}" for k in ("games_per_pair", "chunk_size") if getattr(self, k) % 2]
        if self.duplicate and odd:
            raise ConfigError(
                f"config: {' and '.join(odd)} must be even with duplicate = true (games come in seat-swapped pairs)"
            )
        if not isinstance(self.eaai_kit, str) or any(c in self.eaai_kit for c in "\n\0"):
            raise bad("eaai_kit", self.eaai_kit, "the path of the kit's jar or class folder, as text")
        if not isinstance(self.variants, Mapping):
            raise bad("variants", self.variants, "a table of name = { bot = ..., param = value }")
        for vname, spec in self.variants.items():
            if not isinstance(spec, Mapping) or ("bot" not in spec and "command" not in spec):
                raise ConfigError(
                    f"config: variant '{vname}' must be a table with bot = \"<base bot>\" and "
                    'parameters, or command = ["program", "arg", ...] for an external bot'
                )
            if "command" in spec:
                cmd = spec["command"]
                if isinstance(cmd, str) or not cmd or not all(isinstance(x, str) and x for x in cmd):
                    raise bad(f"variants.{vname}.command", cmd, "a non-empty list of strings (program and arguments)")
                extra = sorted(set(spec) - {"command", "cwd"})
                if extra:
                    raise ConfigError(
                        f"config: variant '{vname}' runs a command; it takes only command and cwd "
                        f"(not {', '.join(extra)}); to set an external bot's parameters, name it as "
                        f'{{ bot = "cmd:program arg ...", {extra[0]} = ... }}'
                    )
                if "cwd" in spec and (not isinstance(spec["cwd"], str) or not spec["cwd"]):  # was a TypeError
                    raise bad(f"variants.{vname}.cwd", spec["cwd"], "a folder path, as text")
            if "sandbox" in spec and not isinstance(spec["sandbox"], bool):  # bool("no") sandboxed it
                raise bad(f"variants.{vname}.sandbox", spec["sandbox"], "true or false")
            base = spec.get("bot")
            other = self.variants.get(base) if isinstance(base, str) and base != vname else None
            if isinstance(other, Mapping) and other.get("bot") != base:  # not a built-in's "itself" entry
                # Loading said "unknown bot 'b'" of a variant the same table defines.
                raise ConfigError(
                    f"config: variant '{vname}' is based on the variant '{base}': a variant's bot is a built-in "
                    f"bot or a file; give '{vname}' the bot and settings of '{base}' with its own"
                )
        if not isinstance(self.sprt, Mapping):
            raise bad("sprt", self.sprt, "a table with elo0, elo1, alpha, beta")
        if self.sprt:
            unknown = set(self.sprt) - set(SPRT_KEYS)
            if unknown:
                k = sorted(unknown)[0]
                raise ConfigError(
                    f"config: sprt has no key '{k}' ({did_you_mean(k, SPRT_KEYS)}keys: {', '.join(SPRT_KEYS)})"
                )
            for k, v in self.sprt.items():
                if k == "elo":
                    if v not in SPRT_ELO:
                        raise bad("sprt.elo", v, ", ".join(f'"{e}"' for e in SPRT_ELO))
                elif isinstance(v, bool) or not isinstance(v, (int, float)) or v != v:
                    raise bad(f"sprt.{k}", v, "a number")
            s = self.sprt_params()
            reach = SPRT_SPAN[s["elo"]]
            for k in ("elo0", "elo1"):
                if not -reach <= s[k] <= reach:  # inf too
                    raise bad(f"sprt.{k}", self.sprt[k], f"a number -{reach:g}..{reach:g} ({s['elo']} Elo)")
            if not s["elo0"] < s["elo1"]:
                raise ConfigError(f"config: sprt needs elo0 < elo1 (got elo0 = {s['elo0']:g}, elo1 = {s['elo1']:g})")
            for k in ("alpha", "beta"):
                if not 0.0 < s[k] < 0.5:
                    raise bad(f"sprt.{k}", s[k], "a number between 0 and 0.5, exclusive")
        if self.sequential not in ("", *SEQUENTIAL):
            raise bad("sequential", self.sequential, ", ".join(f'"{m}"' for m in SEQUENTIAL))
        if self.sequential == "pentanomial" and not self.duplicate:
            raise ConfigError(
                'config: sequential = "pentanomial" needs duplicate = true (it scores seat-swapped pairs); '
                'use "trinomial"'
            )
        if not isinstance(self.scheduler, str) or (
            self.scheduler and "://" not in self.scheduler and ":" not in self.scheduler
        ):
            raise bad("scheduler", self.scheduler, 'a Dask scheduler address such as "tcp://127.0.0.1:8786"')
        if not isinstance(self.limits, Mapping):
            raise bad("limits", self.limits, f"a table with {', '.join(LIMITS)}")
        for k, v in self.limits.items():
            if k not in LIMITS:
                raise ConfigError(
                    f"config: limits has no key '{k}' ({did_you_mean(k, LIMITS)}keys: {', '.join(LIMITS)})"
                )
            _, low, high = LIMITS[k]
            span = f"{_exact(low)}..{_exact(high)}"  # not :g, which printed 1048576 as 1.04858e+06
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not low <= v <= high:
                raise bad(f"limits.{k}", v, f"{'a whole number' if k in WHOLE_LIMITS else 'a number'} {span}")
            if k in WHOLE_LIMITS and v != int(v):  # 100.7 MiB was cut to 100 without a word
                raise bad(f"limits.{k}", v, f"a whole number {span}")
        if self.resolved is not None:
            return
        try:
            if isinstance(self.rules, str):
                rules = load_rules(self.rules)
            else:
                d = dict(self.rules)
                preset = d.pop(PRESET_KEY, "standard")
                if not isinstance(preset, str):  # was an AttributeError traceback (5.endswith)
                    raise bad("rules.preset", preset, "a preset name or a .toml path")
                rules = load_rules(preset, d)
        except RulesError as exc:
            raise ConfigError(f"config: {exc}") from None
        object.__setattr__(self, "resolved", rules)

    # --- derived ---------------------------------------------------------------
    def resolved_rules(self) -> Rules:
        """The rules of this config, validated once when it was made."""
        assert self.resolved is not None  # set by __post_init__
        return self.resolved

    def sprt_params(self) -> dict[str, Any]:
        """The SPRT settings with defaults filled in (elo0 0, elo1 5, alpha = beta = 0.05, logistic Elo).

        ``model`` is the unit of evidence (:attr:`sequential`, resolved:
        pentanomial with duplicate pairs, trinomial without).
        """
        out: dict[str, Any] = {"elo0": 0.0, "elo1": 5.0, "alpha": 0.05, "beta": 0.05, "elo": "logistic"}
        out.update({k: (v if k == "elo" else float(v)) for k, v in self.sprt.items()})
        out["model"] = self.sequential or ("pentanomial" if self.duplicate else "trinomial")
        return out

    def limit(self, key: str) -> float:
        """One of :data:`LIMITS`, as configured or by default."""
        return float(self.limits.get(key, LIMITS[key][0]))

    def all_bots(self) -> tuple[str, ...]:
        return ((self.candidate,) if self.format == "gauntlet" and self.candidate else ()) + self.bots

    def matchups(self) -> list[tuple[str, str]]:
        """(bot_a, bot_b) pairs in a fixed order."""
        if self.format == "gauntlet":
            return [(self.candidate, b) for b in self.bots]  # type: ignore[misc]
        return [(a, b) for i, a in enumerate(self.bots) for b in self.bots[i + 1 :]]

    def bot_refs(self, base_dir: Path | None = None, specs: Iterable[str] | None = None) -> dict[str, BotRef]:
        """Every bot (or those of ``specs``) as a :class:`BotRef`, keyed as listed in the config (variants resolved).

        Relative file paths and a command's ``cwd`` are taken from ``base_dir``
        (the config file's folder).  A spec that names no bot is a one-line
        ConfigError; loading the bots is the bots layer's job
        (:func:`arena.loading.load.load_bots`).
        """
        out: dict[str, BotRef] = {}
        for spec in self.all_bots() if specs is None else specs:
            try:
                if spec in self.variants:
                    params = dict(self.variants[spec])
                    if "command" in params:
                        cwd = params.get("cwd")
                        if cwd is not None and base_dir is not None and not os.path.isabs(cwd):
                            cwd = str((base_dir / cwd).resolve())
                        out[spec] = BotRef.command(list(params["command"]), cwd)
                        continue
                    sandbox = bool(params.pop("sandbox", self.sandbox))
                    base = BotRef.parse(str(params.pop("bot")), base_dir, sandbox=sandbox)
                    # A base with inline settings (bot = "early-knock:knock_at=5") keeps them; the table's win.
                    out[spec] = dataclasses.replace(base, params=tuple({**dict(base.params), **params}.items()))
                else:
                    out[spec] = BotRef.parse(spec, base_dir, sandbox=self.sandbox)
            except BotRefError as exc:
                raise ConfigError(f"bot '{spec}': {exc}") from None
        return out

    def bot_limits(self) -> BotLimits:
        """The limits of bots in their own processes, as ``arena.external.Limits`` fields."""
        return BotLimits(
            decision_s=self.limit("decision_seconds"),
            game_s=self.limit("game_seconds"),
            memory_mb=int(self.limit("memory_mb")),
            sandbox="weak" if self.weak_sandbox else "wall",
            max_crashes=int(self.limit("max_crashes")),
        )

    def with_absolute_paths(self, base_dir: Path | None = None) -> TournamentConfig:
        """The same config with bot file paths (and the kit's) made absolute, so a saved copy
        (``results/<run>/config.toml``) loads from any working directory."""

        def fix(spec: str) -> str:
            if spec in self.variants:
                return spec
            ref = BotRef.parse(spec, base_dir)
            return ref.absolute().spec() if ref.kind in ("file", "sandbox", "policy", "eaai") else spec

        variants = {k: ({**v, "bot": fix(str(v["bot"]))} if "bot" in v else dict(v)) for k, v in self.variants.items()}
        return self.replace(
            bots=tuple(fix(b) for b in self.bots),
            candidate=fix(self.candidate) if self.candidate else None,
            variants=variants,
            eaai_kit=str(self.kit_in(base_dir) or ""),
        )

    def kit_in(self, base_dir: Path | None = None) -> Path | None:
        """The ``eaai_kit`` this config names, absolute (read from ``base_dir``, the config's folder), or None."""
        return ((base_dir or Path()) / Path(self.eaai_kit).expanduser()).resolve() if self.eaai_kit else None

    def to_toml(self) -> str:
        import tomli_w

        d = {k: getattr(self, k) for k in KEYS}
        d = {k: v for k, v in d.items() if v is not None}
        d["bots"] = list(self.bots)
        d["variants"] = {k: dict(v) for k, v in self.variants.items()}
        if isinstance(self.rules, Mapping):
            d["rules"] = dict(self.rules)
        d["sprt"] = dict(self.sprt)
        d["limits"] = dict(self.limits)
        return tomli_w.dumps(d)

    def replace(self, **changes: Any) -> TournamentConfig:
        """A copy with some keys changed; the rules are resolved again only if they change."""
        if "rules" not in changes:
            changes["resolved"] = self.resolved
        return dataclasses.replace(self, **changes)


def _check_keys(d: Mapping[str, Any], source: str) -> None:
    """A one-line error for the first key that is not a config key (a table of config keys, such as
    ``[tournament]``, is told that they go at the top level)."""
    unknown = [k for k in d if k not in KEYS]
    if unknown:
        k = unknown[0]
        if isinstance(d[k], Mapping) and any(key in KEYS for key in d[k]):
            raise ConfigError(f"{source}: unknown table [{k}]: a config's keys (bots = [...], ...) go at the top level")
        raise ConfigError(f"{source}: unknown key '{k}' ({did_you_mean(k, KEYS)}known keys: {', '.join(KEYS)})")


def config_from_dict(d: Mapping[str, Any], source: str = "config") -> TournamentConfig:
    _check_keys(d, source)
    try:
        return TournamentConfig(**d)
    except ConfigError as exc:
        msg = str(exc)
        raise ConfigError(msg.replace("config:", f"{source}:", 1) if source != "config" else msg) from None
    except TypeError as exc:
        raise ConfigError(f"{source}: {exc}") from None


def check_option(option: str, key: str, value: Any) -> None:
    """A command-line option's value (``--games 0``) checked on its own as its config key ``key``: a
    ConfigError naming the option, not the config file, which said ``ok.toml: games_per_pair = 0`` of a
    file that held no such thing.  Only the value's own range and type: a rule that joins keys (an even
    number of games with duplicate pairs) is the merged config's to say."""
    try:
        TournamentConfig(duplicate=False, **{key: value})
    except ConfigError as exc:
        text = str(value)
        shown = text if is_text(text) and text.isprintable() and " " not in text else ascii(value)
        raise ConfigError(str(exc).replace("config:", f"{option} {shown}:", 1)) from None
    except TypeError as exc:
        raise ConfigError(f"{option}: {exc}") from None


def shipped_examples() -> dict[str, Path]:
    """The examples shipped with the package (``arena/configs/<name>.toml``), by name: tournament
    configs, and the sweep files (``sweep-*``) that ``arena sweep`` reads."""
    return {f.stem: f for f in sorted(Path(str(files("arena") / "configs")).glob("*.toml"))}


def load_config(
    path: str | Path,
    overrides: Mapping[str, Any] | None = None,
    *,
    add_bots: tuple[str, ...] = (),
    rules: str | None = None,
    rule_sets: Mapping[str, Any] | None = None,
    options: Mapping[str, str] | None = None,
) -> TournamentConfig:
    """Read a tournament TOML and apply overrides (keys as in the file).

    ``options`` names the command-line option of an override's key (``{"games_per_pair": "--games"}``):
    such a value is checked alone first (:func:`check_option`), so its error names the option.

    ``add_bots`` joins the file's bots (a ``candidate`` override leaves
    them).  ``rules`` (a preset or rules file) replaces the config's rules and
    ``rule_sets`` (``--set key=value``) changes some of them; the result is
    validated once, with the config.

    ``path`` is a file, or the bare name of an example shipped with the
    package (``default``, ``quick``: ``arena/configs/<name>.toml``), so an
    installed arena runs them from any folder.  A file must name its
    ``bots``: an empty file is refused rather than run with the defaults.
    """
    for key, option in (options or {}).items():
        if (overrides or {}).get(key) is not None:
            check_option(option, key, (overrides or {})[key])
    p = Path(path)
    examples = shipped_examples()
    if not p.is_file() and str(path) in examples:
        p = examples[str(path)]
    if p.is_dir():  # was "no such config file", of a folder that is there
        raise ConfigError(f"{path}: a folder, not a config file (give the .toml file)")
    if not p.is_file():
        shipped = ", ".join(name for name in examples if not name.startswith("sweep-"))
        raise ConfigError(f"{path}: no such config file, nor a shipped example (the examples: {shipped})")
    try:
        d = tomllib.loads(read_settings(p))
    except TOML_ERRORS as exc:
        raise ConfigError(f"{path}: {toml_problem(exc)}") from None
    if "bots" not in d:
        _check_keys(d, str(path))  # bots under a misnamed table: name the table, not "no bots"
        raise ConfigError(
            f"{path}: {'the file is empty' if not d else 'no bots'}: a config names at least "
            'bots = [...], e.g. bots = ["random", "simple"] (or try the shipped example: arena run quick)'
        )
    named = d.get("rules")  # a rules file beside the config is read from there, like its bot files
    if isinstance(named, str):
        d["rules"] = read_from(named, p.parent)
    elif isinstance(named, Mapping) and isinstance(named.get(PRESET_KEY), str):
        d["rules"] = {**named, PRESET_KEY: read_from(named[PRESET_KEY], p.parent)}
    d.update({k: v for k, v in (overrides or {}).items() if v is not None})
    if add_bots or (overrides or {}).get("candidate"):
        listed = list(d["bots"]) if isinstance(d["bots"], (list, tuple)) else [d["bots"]]
        bots = listed + [b for b in add_bots if b not in listed]
        d["bots"] = [b for b in bots if b != (overrides or {}).get("candidate")]
    if d.get("candidate") is not None and d.get("format", "round-robin") != "gauntlet":
        # Read from the file only: a round-robin leaves its candidate out without a word (a run folder's
        # saved config, read by config_from_dict, still loads).
        raise ConfigError(
            f'{path}: candidate = {d["candidate"]!r} is only played with format = "gauntlet" '
            "(add that, or list the bot in bots)"
        )
    if rules or rule_sets:
        base = rules or d.get("rules", "standard")
        table = {PRESET_KEY: base} if isinstance(base, str) else dict(base)
        table.update(rule_sets or {})
        d["rules"] = table
    return config_from_dict(d, source=str(path))
