"""Policy modules the tests write to disk or upload (not a test file)."""

from __future__ import annotations

#: A stochastic policy: a legal action drawn with the row's own key, so the game's seed fixes it.
AGENT = '''"""Random legal moves from the row's key."""
import numpy as np


def act(obs, mask, rng):
    r = rng.random()
    out = np.empty(len(mask), dtype=np.int64)
    for i in range(len(mask)):
        legal = np.flatnonzero(mask[i])
        out[i] = legal[int(r[i] * len(legal))]
    return out
'''
