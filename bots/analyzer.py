"""Follows the decision analyzer: plays the legal option with the best rolled-out equity.

At every decision the bot does exactly what ``arena analyze`` does to grade
one: it lists every legal option (:func:`arena.botkit.search.legal_options`),
plays each on the same ``samples`` deals drawn from its view by the search
toolkit's opponent model, with the same rollout random numbers (common
random numbers), scores each finished hand by the chance of winning the game
from there, and plays the option with the highest mean.  So it is the
analyzer turned into a player: if the analyzer's "best" were wrong, this bot
would lose by it.  Its opponent model (:data:`MODEL`, from monte-carlo's
``PARAMS`` defaults) and game-value table (:func:`bots.monte_carlo.hand_value`)
are monte-carlo's; its rollout is the search bots' shared kernel
(:func:`bots.rollout.rollout`), whose settings follow ``samples`` in
:data:`PARAMS` and whose defaults are monte-carlo's rollout
(``tests/bots/test_analyzer.py``).  ``arena analyze`` grades with those
defaults (:data:`ROLLOUT_PARAMS`), whatever a variant of this bot sets.

Unlike monte-carlo it has no default heuristic to fall back on and no early
stop: it searches every option of every decision (11 discards, both answers
of a yes/no) with ``samples`` deals each, about ``samples * options``
rollouts a decision, so it is slow (see ``scripts/bench_analyze.py``).
Every random number comes from the bot's own generator: games replay.
"""

import numpy as np

from arena.botkit.search import legal_options, option_deal, option_stats, rules_of
from arena.engine._jit import jit
from arena.engine.layout import R_TARGET, S_SIZE, V_MY_SCORE, V_OPP_SCORE, V_RULES, V_SEAT
from arena.engine.rng import seed_rng
from arena.engine.step import apply_action
from bots import monte_carlo
from bots.rollout import POLICY, rollout, validate_policy

PARAMS: dict[str, float] = {
    "samples": 128.0,  # deals per decision; every legal option is played on each
    **POLICY,  # the rollout's settings (bots/rollout.py): monte-carlo's rollout unless a variant sets them
}
MEMORY = 1
_SAMPLES = 0
#: Where the rollout's settings start in the params array (laid out as :data:`bots.rollout.POLICY`).
_POLICY = 1

#: The opponent model (see :func:`arena.botkit.search.sample_state_weighted`): monte-carlo's defaults.
MODEL = np.array(
    [monte_carlo.PARAMS[k] for k in ("refuse_weight", "shed_weight", "tries", "built", "quiet_weight")],
    dtype=np.float64,
)
#: The analysis' rollout parameters: the defaults of :data:`PARAMS` (``arena analyze`` grades with these).
ROLLOUT_PARAMS = np.array(list(PARAMS.values()), dtype=np.float64)
#: A legal decision has at most 11 options (the discards of an 11-card hand).
MAX_OPTIONS = 11
_NO_TRUTH = np.empty(0, dtype=np.int64)


def validate_params(d: dict) -> None:
    """Raise ValueError naming the first parameter out of range."""
    if not 1 <= d["samples"] <= 4096:
        raise ValueError(f"samples = {d['samples']} must be between 1 and 4096")
    validate_policy(d)


@jit
def option_values(view, options, n_options, samples, rng, params, truth, values):
    """``values[s, k]``: the chance of winning the game option ``k`` leaves the seat of ``view`` on deal ``s``.

    Every option is played on the same ``samples`` deals
    (:func:`arena.botkit.search.option_deal`: drawn by :data:`MODEL`, or the
    true one when ``truth`` is a state) with the same rollout random
    numbers, then :func:`rollout` with ``params`` plays the hand out and
    :func:`bots.monte_carlo.hand_value` scores it.
    """
    rules = rules_of(view)
    me = view[V_SEAT]
    target = view[V_RULES + R_TARGET]
    need_me = target - view[V_MY_SCORE]
    need_opp = target - view[V_OPP_SCORE]
    sampled = np.empty(S_SIZE, dtype=np.int64)
    st = np.empty(S_SIZE, dtype=np.int64)
    roll_rng = np.empty(4, dtype=np.uint64)
    policy = params[_POLICY:]
    for s in range(samples):
        roll_seed = option_deal(view, rng, MODEL, truth, sampled)
        for k in range(n_options):
            st[:] = sampled
            if apply_action(st, rules, options[k]) != 0:
                values[s, k] = -1.0  # not a legal option: below any chance, never the best
                continue
            seed_rng(roll_rng, roll_seed)
            rollout(st, rules, roll_rng, me, policy)
            values[s, k] = monte_carlo.hand_value(st, me, need_me, need_opp, 1)


@jit
def evaluate_with(view, samples, rng, truth, params, options, mean, se, diff_se):
    """:func:`evaluate` with the rollout parameters ``params`` (laid out as :data:`PARAMS`)."""
    n = legal_options(view, options)
    if n < 2:
        mean[0] = np.nan
        se[0] = 0.0
        diff_se[0] = 0.0
        return n, 0
    values = np.empty((samples, n), dtype=np.float64)
    option_values(view, options, n, samples, rng, params, truth, values)
    return n, option_stats(values, n, mean, se, diff_se)


@jit
def evaluate(view, samples, rng, truth, options, mean, se, diff_se):
    """Grade every legal option of the decision in ``view``: ``(n_options, best)``.

    Fills ``options[:n]`` (see :func:`~arena.botkit.search.legal_options`),
    and per option the mean chance of winning the game (``mean``), its
    standard error (``se``) and the standard error of its difference from
    the best option, deal by deal (``diff_se``).  ``truth``: an empty array
    (sample the hidden cards from the view) or the true state (hindsight).
    A decision with one option is not rolled out (its mean is set to nan).
    The rollout is :func:`rollout` with :data:`ROLLOUT_PARAMS`.
    """
    return evaluate_with(view, samples, rng, truth, ROLLOUT_PARAMS, options, mean, se, diff_se)


@jit
def choose(view, params, rng):
    """The option with the best equity at ``samples``, by :func:`rollout` with ``params``."""
    options = np.empty(MAX_OPTIONS, dtype=np.int64)
    mean = np.empty(MAX_OPTIONS)
    se = np.empty(MAX_OPTIONS)
    diff_se = np.empty(MAX_OPTIONS)
    _, best = evaluate_with(view, int(params[_SAMPLES]), rng, _NO_TRUTH, params, options, mean, se, diff_se)
    return options[best]


@jit
def decide(view, params, memory, rng):
    """Every kind of decision alike: the option with the best equity (:func:`choose`)."""
    return choose(view, params, rng)


take_upcard = draw = big_gin = discard = knock = decide
