"""The engine's packing of :class:`~arena.settings.rules.Rules` into the
int64 rules array its kernels read, and back.

The slot numbers (``R_*``) are the engine's own (:mod:`arena.engine.layout`),
so the packing lives here and the settings layer never sees a slot.
"""

from __future__ import annotations

import numpy as np

from arena.engine.layout import (
    NEXT_DEALER_ALTERNATE,
    NEXT_DEALER_LOSER,
    NEXT_DEALER_WINNER,
    R_BIG_GIN,
    R_BIG_GIN_BONUS,
    R_GIN_BONUS,
    R_HAND_CAP,
    R_KNOCK_LIMIT,
    R_NEXT_DEALER,
    R_NO_RETAKE,
    R_OKLAHOMA,
    R_SIZE,
    R_TARGET,
    R_TURN_CAP,
    R_UNDERCUT_BONUS,
    R_UNDERCUT_ON_TIE,
)
from arena.settings.rules import NEXT_DEALERS, Rules, RulesError

#: ``next_dealer`` values and their codes in the rules array.
NEXT_DEALER_CODES: dict[str, int] = {
    "alternate": NEXT_DEALER_ALTERNATE,
    "winner": NEXT_DEALER_WINNER,
    "loser": NEXT_DEALER_LOSER,
}
assert tuple(NEXT_DEALER_CODES) == NEXT_DEALERS, "every next_dealer choice needs a code"


def rules_array(rules: Rules) -> np.ndarray:
    """The int64 rules array the kernels read (slots: ``R_*`` in arena.engine.layout)."""
    a = np.zeros(R_SIZE, dtype=np.int64)
    a[R_KNOCK_LIMIT] = rules.knock_limit
    a[R_GIN_BONUS] = rules.gin_bonus
    a[R_BIG_GIN] = int(rules.big_gin)
    a[R_BIG_GIN_BONUS] = rules.big_gin_bonus
    a[R_UNDERCUT_BONUS] = rules.undercut_bonus
    a[R_UNDERCUT_ON_TIE] = int(rules.undercut_on_tie)
    a[R_TARGET] = rules.target
    a[R_NEXT_DEALER] = NEXT_DEALER_CODES[rules.next_dealer]
    a[R_NO_RETAKE] = int(rules.no_retake)
    a[R_OKLAHOMA] = int(rules.oklahoma)
    a[R_TURN_CAP] = rules.turn_cap
    a[R_HAND_CAP] = rules.hand_cap
    return a


def rules_from_array(a: np.ndarray) -> Rules:
    """The inverse of :func:`rules_array` (e.g. for the rules slots of a view)."""
    a = np.asarray(a)
    if a.shape != (R_SIZE,):
        raise RulesError(f"rules array has shape {a.shape} (allowed: ({R_SIZE},))")
    dealers = {code: name for name, code in NEXT_DEALER_CODES.items()}
    code = int(a[R_NEXT_DEALER])
    if code not in dealers:
        raise RulesError(f"next_dealer code {code} in the rules array is unknown", key="next_dealer")
    return Rules(
        knock_limit=int(a[R_KNOCK_LIMIT]),
        gin_bonus=int(a[R_GIN_BONUS]),
        big_gin=bool(a[R_BIG_GIN]),
        big_gin_bonus=int(a[R_BIG_GIN_BONUS]),
        undercut_bonus=int(a[R_UNDERCUT_BONUS]),
        undercut_on_tie=bool(a[R_UNDERCUT_ON_TIE]),
        target=int(a[R_TARGET]),
        next_dealer=dealers[code],
        no_retake=bool(a[R_NO_RETAKE]),
        oklahoma=bool(a[R_OKLAHOMA]),
        turn_cap=int(a[R_TURN_CAP]),
        hand_cap=int(a[R_HAND_CAP]),
    )
