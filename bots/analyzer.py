"""Follows the decision analyzer: plays the legal option with the best rolled-out equity.

At every decision the bot does exactly what ``arena analyze`` does to grade
one: it lists every legal option (:func:`arena.botkit.search.legal_options`),
plays each on the same ``samples`` deals drawn from its view by the search
toolkit's opponent model, with the same rollout random numbers (common
random numbers), scores each finished hand by the chance of winning the game
from there, and plays the option with the highest mean.  So it is the
analyzer turned into a player: if the analyzer's "best" were wrong, this bot
would lose by it.  Its opponent model, rollout policy and game-value table
are monte-carlo's (``bots/monte_carlo.py``: :data:`MODEL` and
:data:`ROLLOUT_PARAMS` are taken from its ``PARAMS`` defaults, the rollout
and :func:`~bots.monte_carlo.hand_value` are its functions), never copies.

Unlike monte-carlo it has no default heuristic to fall back on and no early
stop: it searches every option of every decision (11 discards, both answers
of a yes/no) with ``samples`` deals each, about ``samples * options``
rollouts a decision, so it is slow (see ``scripts/bench_analyze.py``).
Every random number comes from the bot's own generator: games replay.
"""

import numpy as np

from arena.botkit.search import legal_options, option_stats, option_values
from arena.engine._jit import jit
from bots import monte_carlo

PARAMS: dict[str, float] = {
    "samples": 128.0,  # deals per decision; every legal option is played on each
}
MEMORY = 1

#: The opponent model (see :func:`arena.botkit.search.sample_state_weighted`): monte-carlo's defaults.
MODEL = np.array(
    [monte_carlo.PARAMS[k] for k in ("refuse_weight", "shed_weight", "tries", "built", "quiet_weight")],
    dtype=np.float64,
)
#: monte-carlo's parameters as its rollout reads them (its knock schedule for the seat to move).
ROLLOUT_PARAMS = np.array(list(monte_carlo.PARAMS.values()), dtype=np.float64)
#: A legal decision has at most 11 options (the discards of an 11-card hand).
MAX_OPTIONS = 11
_NO_TRUTH = np.empty(0, dtype=np.int64)


def validate_params(d: dict) -> None:
    """Raise ValueError naming the first parameter out of range."""
    if not 1 <= d["samples"] <= 4096:
        raise ValueError(f"samples = {d['samples']} must be between 1 and 4096")


@jit
def evaluate(view, samples, rng, truth, options, mean, se, diff_se):
    """Grade every legal option of the decision in ``view``: ``(n_options, best)``.

    Fills ``options[:n]`` (see :func:`~arena.botkit.search.legal_options`),
    and per option the mean chance of winning the game (``mean``), its
    standard error (``se``) and the standard error of its difference from
    the best option, deal by deal (``diff_se``).  ``truth``: an empty array
    (sample the hidden cards from the view) or the true state (hindsight).
    A decision with one option is not rolled out (its mean is set to nan).
    """
    n = legal_options(view, options)
    if n < 2:
        mean[0] = np.nan
        se[0] = 0.0
        diff_se[0] = 0.0
        return n, 0
    values = np.empty((samples, n), dtype=np.float64)
    option_values(
        view,
        options,
        n,
        samples,
        rng,
        MODEL,
        monte_carlo.rollout,
        ROLLOUT_PARAMS,
        monte_carlo.hand_value,
        truth,
        values,
    )
    return n, option_stats(values, n, mean, se, diff_se)


@jit
def choose(view, params, rng):
    """The option with the best equity at ``params[0]`` samples."""
    options = np.empty(MAX_OPTIONS, dtype=np.int64)
    mean = np.empty(MAX_OPTIONS)
    se = np.empty(MAX_OPTIONS)
    diff_se = np.empty(MAX_OPTIONS)
    _, best = evaluate(view, int(params[0]), rng, _NO_TRUTH, options, mean, se, diff_se)
    return options[best]


@jit
def take_upcard(view, params, memory, rng):
    return choose(view, params, rng)


@jit
def draw(view, params, memory, rng):
    return choose(view, params, rng)


@jit
def big_gin(view, params, memory, rng):
    return choose(view, params, rng)


@jit
def discard(view, params, memory, rng):
    return choose(view, params, rng)


@jit
def knock(view, params, memory, rng):
    return choose(view, params, rng)
