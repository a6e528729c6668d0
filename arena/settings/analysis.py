"""How ``arena analyze`` grades decisions: its settings, validated once, and where its tables go.

The ``[analysis]`` table of a TOML file (every key optional), or the
command's options, make one frozen :class:`AnalysisSettings`; a bad value is
a one-line :class:`AnalysisError` naming the key and what is allowed.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from arena.settings.config import did_you_mean
from arena.settings.rules import SETTINGS_ENCODING, TOML_ERRORS, toml_problem

#: The analysis table's name in the run store (a hindsight analysis is stored apart).
TABLE = "decisions"
TABLE_PERFECT = "decisions-perfect"


class AnalysisError(ValueError):
    """An analysis that cannot be done as asked; the message is one line."""


@dataclass(frozen=True)
class AnalysisSettings:
    """How decisions are graded (the ``[analysis]`` table of a TOML file; every key optional)."""

    #: Deals sampled per decision; every legal option is rolled out on each.
    samples: int = 128
    #: Seeds every decision's deals (with the game id and the decision's place in the game).
    seed: int = 1
    #: Hindsight: roll every option out on the true deal instead of deals drawn from the view.
    perfect: bool = False
    #: A decision losing at least this many thousandths of a game is doubtful ...
    doubtful: float = 20.0
    #: ... and at least this many, a blunder.
    blunder: float = 50.0

    def __post_init__(self) -> None:
        if isinstance(self.samples, bool) or not isinstance(self.samples, int) or not 2 <= self.samples <= 4096:
            raise AnalysisError(f"analysis: samples = {self.samples!r} is not allowed (allowed: integer 2..4096)")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or not 0 <= self.seed < 2**63:
            raise AnalysisError(f"analysis: seed = {self.seed!r} is not allowed (allowed: integer 0..2**63-1)")
        if not isinstance(self.perfect, bool):
            raise AnalysisError(f"analysis: perfect = {self.perfect!r} is not allowed (allowed: true or false)")
        for key in ("doubtful", "blunder"):
            v = getattr(self, key)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 < v <= 1000:
                raise AnalysisError(f"analysis: {key} = {v!r} is not allowed (allowed: thousandths, above 0, <= 1000)")
        if self.blunder < self.doubtful:
            raise AnalysisError(f"analysis: blunder = {self.blunder} is below doubtful = {self.doubtful}")

    @property
    def table(self) -> str:
        return TABLE_PERFECT if self.perfect else TABLE


def load_settings(path: str | Path | None = None, **overrides: Any) -> AnalysisSettings:
    """Settings from the ``[analysis]`` table of a TOML file (if given), then ``overrides`` (None = keep)."""
    values: dict[str, Any] = {}
    if path is not None:
        p = Path(path)
        try:
            doc = tomllib.loads(p.read_text(encoding=SETTINGS_ENCODING))
        except OSError as exc:
            raise AnalysisError(f"cannot read {p}: {exc.strerror or exc}") from None
        except TOML_ERRORS as exc:
            raise AnalysisError(f"{p} is {toml_problem(exc)}") from None
        known = [f.name for f in fields(AnalysisSettings)]
        # The file is for the analysis alone: a misspelt table ([analysys]) or a key outside it (samples = 8
        # at the top) was ignored, and the analysis ran with the defaults as if nothing were wrong.
        for k in doc:
            if k == "analysis":
                continue
            if k in known:
                raise AnalysisError(f"{p}: {k} is outside the [analysis] table; put it under [analysis]")
            raise AnalysisError(
                f"{p}: unknown table or key '{k}' ({did_you_mean(k, ['analysis'])}the file holds an [analysis] table)"
            )
        if "analysis" not in doc:
            raise AnalysisError(f"{p}: no [analysis] table (it sets {', '.join(known)})")
        table = doc["analysis"]
        if not isinstance(table, dict):
            raise AnalysisError(f"{p}: [analysis] must be a table")
        unknown = [k for k in table if k not in known]
        if unknown:
            k = unknown[0]
            raise AnalysisError(
                f"{p}: [analysis] has no key '{k}' ({did_you_mean(k, known)}keys: {', '.join(sorted(known))})"
            )
        values.update(table)
    values.update({k: v for k, v in overrides.items() if v is not None})
    return AnalysisSettings(**values)
