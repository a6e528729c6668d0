"""A sweep file, read and checked: :func:`load_sweep` gives a :class:`SweepSpec` or one :class:`SweepError` line.

The keys are those of the package doc (:mod:`arena.analysis.sweep`).  Every
gauntlet config a sweep will play is built and its bots loaded here, before
anything runs, so a typo in a parameter or an opponent fails at once.
"""

from __future__ import annotations

import dataclasses
import itertools
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arena.botkit.bot import BotError
from arena.loading.load import load, load_bots
from arena.settings.config import FOLDER_NAME, LIMITS, ConfigError, config_from_dict, did_you_mean, is_folder_name
from arena.settings.rules import SETTINGS_ENCODING, TOML_ERRORS, toml_problem

__all__ = ["KEYS", "SweepError", "SweepSpec", "load_sweep"]

KEYS = (
    "name",
    "bot",
    "opponents",
    "games",
    "seed",
    "workers",
    "chunk_size",
    "rules",
    "rules_grid",
    "grid",
    "params",
    "results_dir",
    "scheduler",
    "limits",
    "adaptive",
)


class SweepError(ValueError):
    """A sweep file that cannot be used; the message is one line."""


@dataclass(frozen=True)
class SweepSpec:
    """A validated sweep (see the module doc for the keys)."""

    name: str
    bot: str
    opponents: tuple[str, ...]
    grid: tuple[tuple[str, tuple[float, ...]], ...]
    rules: tuple[tuple[str, Any], ...]  # (label, preset name / path / table)
    games: int = 10000
    seed: int = 1
    workers: int = 0
    chunk_size: int = 2500
    params: Mapping[str, float] = field(default_factory=dict)
    results_dir: str = "results"
    scheduler: str = ""
    limits: Mapping[str, float] = field(default_factory=dict)
    #: Successive halving: (rounds, keep, growth); None = play every point once.
    adaptive: tuple[int, float, float] | None = None
    #: Only these grid points (a later round of an adaptive sweep); None = the whole grid.
    only: tuple[tuple[float, ...], ...] | None = None
    #: The opponents' names as the runs store them, in the order of ``opponents``: a file bot
    #: ``my_bot.py`` plays as its ``NAME`` or ``my_bot``, a ``policy:pol.npz`` as ``pol``
    #: (:func:`load_sweep` fills it from the loaded bots); empty = the names as written.
    names: tuple[str, ...] = ()

    @property
    def opponent_names(self) -> tuple[str, ...]:
        """The opponents as the stored games name them (what the tables are read by)."""
        return self.names or self.opponents

    @property
    def dir(self) -> Path:
        return Path(self.results_dir) / self.name

    @property
    def param_names(self) -> list[str]:
        return [p for p, _ in self.grid]

    def points(self) -> list[tuple[float, ...]]:
        """Every grid point, in order (the first parameter varies slowest)."""
        pts = list(itertools.product(*[vals for _, vals in self.grid]))
        return pts if self.only is None else [p for p in pts if p in self.only]

    def variant(self, point: Sequence[float]) -> str:
        """The variant name of a grid point, e.g. ``early-knock@knock_at=3``."""
        return self.bot + "@" + ",".join(f"{p}={v:g}" for p, v in zip(self.param_names, point))

    def config(self, label: str, rules: Any, point: Sequence[float]) -> dict[str, Any]:
        """The gauntlet config of one grid point under one rules value."""
        v = self.variant(point)
        cfg: dict[str, Any] = {
            "name": label,
            "format": "gauntlet",
            "candidate": v,
            "bots": list(self.opponents),
            "variants": {v: {"bot": self.bot, **dict(self.params), **dict(zip(self.param_names, point))}},
            "games_per_pair": self.games,
            "seed": self.seed,
            "workers": self.workers,
            "chunk_size": self.chunk_size,
            "rules": rules,
            "record_hands": True,
            "results_dir": str(self.dir),
        }
        if self.scheduler:
            cfg["scheduler"] = self.scheduler
        if self.limits:
            cfg["limits"] = dict(self.limits)
        return cfg


def _num_list(key: str, v: Any) -> tuple[float, ...]:
    if not isinstance(v, list) or not v or not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in v):
        raise SweepError(f"sweep: {key} must be a non-empty list of numbers (got {v!r})")
    # A point is named by its values as %g (SweepSpec.variant): two values that print alike would be one
    # variant, played and tabled once for the two points asked.
    shown = [f"{float(x):g}" for x in v]
    twice = next((s for i, s in enumerate(shown) if s in shown[:i]), None)
    if twice is not None:
        raise SweepError(f"sweep: {key} gives the value {twice} twice (values that print alike are one point)")
    return tuple(float(x) for x in v)


def _rules_label(v: Any) -> str:
    return Path(v).stem if isinstance(v, str) else "rules"


def _adaptive(v: Any) -> tuple[int, float, float] | None:
    if v is None or v is False:
        return None
    if v is True:
        v = {}
    if not isinstance(v, Mapping) or set(v) - {"rounds", "keep", "growth"}:
        raise SweepError("sweep: adaptive must be true or a table with rounds, keep, growth")
    rounds, keep, growth = v.get("rounds", 3), v.get("keep", 0.5), v.get("growth", 2)
    if isinstance(rounds, bool) or not isinstance(rounds, int) or not 1 <= rounds <= 10:
        raise SweepError(f"sweep: adaptive.rounds must be a whole number 1..10 (got {rounds!r})")
    if not isinstance(keep, (int, float)) or not 0 < keep < 1:
        raise SweepError(f"sweep: adaptive.keep must be a fraction between 0 and 1 (got {keep!r})")
    if not isinstance(growth, (int, float)) or not 1 <= growth <= 16:
        raise SweepError(f"sweep: adaptive.growth must be a number 1..16 (got {growth!r})")
    return int(rounds), float(keep), float(growth)


def load_sweep(source: str | Path | Mapping[str, Any], overrides: Mapping[str, Any] | None = None) -> SweepSpec:
    """Read and check a sweep file (or dict); every problem is one :class:`SweepError` line.

    ``overrides``: keys that replace the file's (``arena sweep --games ...``); None values are left out.
    """
    if isinstance(source, (str, Path)):
        path = Path(source)
        try:
            d = tomllib.loads(path.read_text(encoding=SETTINGS_ENCODING))
        except OSError as exc:
            raise SweepError(f"sweep: cannot read {path}: {exc.strerror or exc}") from None
        except TOML_ERRORS as exc:
            raise SweepError(f"sweep: {path} is {toml_problem(exc)}") from None
        d.setdefault("name", path.stem)
    else:
        d = dict(source)
    d.update({k: v for k, v in (overrides or {}).items() if v is not None})
    unknown = sorted(set(d) - set(KEYS))
    if unknown:
        k = unknown[0]
        raise SweepError(f"sweep: unknown key '{k}' ({did_you_mean(k, KEYS)}keys: {', '.join(KEYS)})")
    for k in ("bot", "opponents", "grid"):
        if k not in d:
            raise SweepError(f"sweep: missing key '{k}'")
    if not isinstance(d["bot"], str) or not d["bot"]:
        raise SweepError("sweep: bot must be a bot name or a .py path")
    opp = d["opponents"]
    if isinstance(opp, str):
        opp = [opp]
    if not isinstance(opp, list) or not opp or not all(isinstance(x, str) and x for x in opp):
        raise SweepError("sweep: opponents must be a list of bot names")
    grid = d["grid"]
    if not isinstance(grid, Mapping) or not 1 <= len(grid) <= 2:
        raise SweepError("sweep: grid must be a table of one or two parameters, e.g. knock_at = [0, 5, 10]")
    grid_t = tuple((str(k), _num_list(f"grid.{k}", v)) for k, v in grid.items())
    params = d.get("params", {})
    if not isinstance(params, Mapping):
        raise SweepError("sweep: params must be a table of parameter = value")
    overlap = set(params) & set(grid)
    if overlap:
        raise SweepError(f"sweep: parameter '{sorted(overlap)[0]}' is both in grid and in params")
    if "rules" in d and "rules_grid" in d:
        raise SweepError("sweep: give rules or rules_grid, not both")
    rules: list[tuple[str, Any]]
    if "rules_grid" in d:
        rg = dict(d["rules_grid"]) if isinstance(d["rules_grid"], Mapping) else None
        if rg is None:
            raise SweepError("sweep: rules_grid must be a table: preset = ..., setting = [values]")
        preset = rg.pop("preset", "standard")
        lists = {k: v for k, v in rg.items() if isinstance(v, list)}
        if len(lists) != 1:
            raise SweepError("sweep: rules_grid must have exactly one setting with a list of values")
        ((key, values),) = lists.items()
        if not values:
            raise SweepError(f"sweep: rules_grid.{key} must be a non-empty list of values (got [])")
        fixed = {k: v for k, v in rg.items() if k not in lists}
        rules = [
            (f"{key}={v:g}" if isinstance(v, (int, float)) else f"{key}={v}", {"preset": preset, **fixed, key: v})
            for v in values
        ]
    else:
        r = d.get("rules", "standard")
        if isinstance(r, str):
            rules = [(_rules_label(r), r)]
        elif isinstance(r, list) and r and all(isinstance(x, str) for x in r):
            rules = [(_rules_label(x), x) for x in r]
        elif isinstance(r, Mapping) and r and all(isinstance(x, (str, Mapping)) for x in r.values()):
            rules = [(str(k), x if isinstance(x, str) else dict(x)) for k, x in r.items()]
        else:
            raise SweepError("sweep: rules must be a preset or path, a list of them, or a table label = rules")
    labels = [lab for lab, _ in rules]
    if len(set(labels)) != len(labels):
        raise SweepError(f"sweep: two rules values share the label {labels}; use a table label = rules")
    for lab in labels:  # a label names the rules value's run folder
        if not lab or lab in (".", "..") or "/" in lab or "\\" in lab or "\0" in lab:
            raise SweepError(f"sweep: rules label {lab!r} cannot name a folder (no /, \\, . or ..)")
    games = d.get("games", 10000)
    if isinstance(games, bool) or not isinstance(games, int) or games < 2 or games % 2:
        raise SweepError(f"sweep: games must be an even number >= 2 (got {games!r})")
    chunk = d.get("chunk_size", min(2500, games))
    if isinstance(chunk, bool) or not isinstance(chunk, int) or chunk < 2 or chunk % 2:
        raise SweepError(f"sweep: chunk_size must be an even number >= 2 (got {chunk!r})")
    name = d.get("name", "sweep")
    if not is_folder_name(name):  # the sweep's folder, which --fresh deletes: never "", ".." or a path
        raise SweepError(f"sweep: name = {name!r} is not allowed (allowed: {FOLDER_NAME})")
    seed = d.get("seed", 1)
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= 2**62:
        raise SweepError(f"sweep: seed must be an integer 0..{2**62}, the deals every grid point plays (got {seed!r})")
    workers = d.get("workers", 0)
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 0:
        raise SweepError(f"sweep: workers must be a whole number >= 0 (0 = one per core; got {workers!r})")
    for k, v in params.items():
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise SweepError(f"sweep: params.{k} must be a number (got {v!r})")
    results_dir = d.get("results_dir", "results")
    if not isinstance(results_dir, str) or not results_dir.strip():  # 5 became folder 5/, "" the working folder
        raise SweepError(f"sweep: results_dir = {results_dir!r} is not allowed (allowed: a folder's path, as text)")
    scheduler = d.get("scheduler", "")
    if not isinstance(scheduler, str):
        raise SweepError(f"sweep: scheduler = {scheduler!r} is not allowed (allowed: tcp://HOST:PORT, as text)")
    limits = d.get("limits", {})
    if not isinstance(limits, Mapping):  # dict("x") was a traceback; its keys are checked with each config
        raise SweepError(f"sweep: limits = {limits!r} is not allowed (allowed: a table with {', '.join(LIMITS)})")
    spec = SweepSpec(
        name=name,
        bot=d["bot"],
        opponents=tuple(opp),
        grid=grid_t,
        rules=tuple(rules),
        games=games,
        seed=seed,
        workers=workers,
        chunk_size=chunk,
        params={str(k): float(v) for k, v in params.items()},
        results_dir=results_dir,
        scheduler=scheduler,
        limits=dict(limits),
        adaptive=_adaptive(d.get("adaptive")),
    )
    names: tuple[str, ...] = ()
    for label, r in spec.rules:  # every config must load (rules, opponents, parameters) before anything runs
        try:
            cfg = config_from_dict(spec.config(label, r, spec.points()[0]))
            bots = load_bots(cfg)
        except (ConfigError, ValueError) as exc:
            raise SweepError(f"sweep: {exc}") from None
        names = tuple(bots[o].name for o in spec.opponents)
    _check_points(spec)
    return dataclasses.replace(spec, names=names)


def _check_points(spec: SweepSpec) -> None:
    """Load the swept bot at every grid point, so a value out of its range (``knock_at = 99``)
    stops the sweep before its first game, not after the points before it have played.

    The opponents and rules are the same at every point (checked above at the first); only
    the swept bot differs, and loading a built-in or a file bot with settings plays nothing."""
    label, r = spec.rules[0]
    for point in spec.points()[1:]:
        v = spec.variant(point)
        try:
            load(config_from_dict(spec.config(label, r, point)).bot_refs()[v], name=v)
        except (BotError, ConfigError, ValueError) as exc:
            why = str(exc) if str(exc).startswith(("bot ", v)) else f"bot '{v}': {exc}"
            raise SweepError(f"sweep: {why}") from None
