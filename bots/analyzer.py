"""Follows the decision analyzer: plays the legal option with the best rolled-out equity.

At every decision the bot does exactly what ``arena analyze`` does to grade
one: it lists every legal option (:func:`arena.botkit.search.legal_options`),
plays each on the same ``samples`` deals drawn from its view by the search
toolkit's opponent model, with the same rollout random numbers (common
random numbers), scores each finished hand by the chance of winning the game
from there, plays the options close to the best on ``refine`` times as many
fresh deals again (:func:`refine`), and plays the option with the highest
mean.  So it is the analyzer turned into a player: if the analyzer's "best"
were wrong, this bot would lose by it.  Its opponent model (:data:`MODEL`, from monte-carlo's
``PARAMS`` defaults) and game-value table (:func:`bots.monte_carlo.hand_value`)
are monte-carlo's; its rollout is the search bots' shared kernel
(:func:`bots.rollout.rollout`), whose settings follow ``samples`` in
:data:`PARAMS` and whose defaults are monte-carlo's rollout
(``tests/bots/test_analyzer.py``).  ``arena analyze`` grades with those
defaults (:data:`ROLLOUT_PARAMS`), whatever a variant of this bot sets.

Unlike monte-carlo it has no default heuristic to fall back on and no early
stop: it searches every option of every decision (11 discards, both answers
of a yes/no) with ``samples`` deals each, about ``samples * options``
rollouts a decision plus ``refine * samples`` for each close option, so it
is slow (see ``scripts/bench_analyze.py``).

Why the second stage: with ``samples = 128`` alone the bot won 41.3%
[39.3, 43.4] of 2,080 games against monte-carlo.  A test double
(monte-carlo handing one kind of decision to the analyzer) put the loss in
its draws and discards, not its knocks.  On the same 200 duplicate deals
(seed 11) the 128-sample bot won 36.7% (+-4.6), at 512 samples 48.6% of
the first 140 pairs (+-5.6), so the choice among close options was
decided by noise (the best of up to 11 noisy means).  A rollout opponent
that will not feed the cards the player took (``opp_safe = 1``) did not
help (35.0% of the first 50 pairs).  The second stage (``refine = 3``)
won 52.3% of the first 130 pairs (+-5.6) at about twice the cost of 128
samples, not four times, and 50.1% [48.0, 52.2] of 2,000 games (1,000
duplicate pairs, seed 2230): as strong as monte-carlo, within the error.

Every random number comes from the bot's own generator: games replay.
"""

import numpy as np

from arena.botkit.search import legal_options, option_deal, option_stats, paired_se, rules_of
from arena.engine._jit import jit
from arena.engine.layout import R_TARGET, S_SIZE, V_MY_SCORE, V_OPP_SCORE, V_RULES, V_SEAT
from arena.engine.rng import seed_rng
from arena.engine.step import apply_action
from bots import monte_carlo
from bots.rollout import POLICY, rollout, validate_policy

PARAMS: dict[str, float] = {
    "samples": 128.0,  # deals per decision; every legal option is played on each
    "refine": 3.0,  # then this many times ``samples`` fresh deals more for the options close to the best ..
    "refine_z": 2.0,  # .. those within this many standard errors of its paired difference (see refine())
    **POLICY,  # the rollout's settings (bots/rollout.py): monte-carlo's rollout unless a variant sets them
}
MEMORY = 1
_SAMPLES, _REFINE, _REFINE_Z = range(3)
#: Where the rollout's settings start in the params array (laid out as :data:`bots.rollout.POLICY`).
_POLICY = 3

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
    if not 0 <= d["refine"] <= 16:
        raise ValueError(f"refine = {d['refine']} must be between 0 (off) and 16 (times samples)")
    if not 0 <= d["refine_z"] <= 10:
        raise ValueError(f"refine_z = {d['refine_z']} must be between 0 and 10 (standard errors)")
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
    best = option_stats(values, n, mean, se, diff_se)
    extra = int(params[_REFINE] * samples)
    if extra > 0:
        best = refine(view, extra, params[_REFINE_Z], rng, params, truth, options, n, values, mean, se, diff_se, best)
    return n, best


@jit
def refine(view, extra, z, rng, params, truth, options, n, values, mean, se, diff_se, best):
    """Second stage: ``extra`` fresh deals for the options close to the best; return the best after it.

    Close: the best's mean exceeds the option's by at most ``z`` standard
    errors of their paired difference (the best itself included).  Those
    options are played on ``extra`` more deals (common random numbers again)
    and their mean, ``se`` and ``diff_se`` recomputed over all their deals;
    the others keep their first-stage figures, with ``diff_se`` taken
    against the new best on the first-stage deals.  The best is the option
    with the highest mean after that (so a loss is never negative).
    Clear choices cost nothing more; close ones, where the first stage's
    noise decides which looks best, get ``extra`` deals more each.
    """
    samples = values.shape[0]
    pos = np.full(n, -1, dtype=np.int64)  # an option's column in the second stage, -1 if not close
    sub = np.empty(n, dtype=np.int64)
    m = 0
    for k in range(n):
        if mean[best] - mean[k] <= z * diff_se[k]:
            pos[k] = m
            sub[m] = options[k]
            m += 1
    if m < 2:
        return best
    more = np.empty((samples + extra, m), dtype=np.float64)
    for k in range(n):
        if pos[k] >= 0:
            more[:samples, pos[k]] = values[:, k]
    option_values(view, sub, m, extra, rng, params, truth, more[samples:])
    sub_mean = np.empty(m)
    sub_se = np.empty(m)
    sub_diff = np.empty(m)
    option_stats(more, m, sub_mean, sub_se, sub_diff)
    best = 0
    for k in range(n):
        if pos[k] >= 0:
            mean[k] = sub_mean[pos[k]]
            se[k] = sub_se[pos[k]]
        if mean[k] > mean[best]:
            best = k
    for k in range(n):
        if pos[k] >= 0 and pos[best] >= 0:
            diff_se[k] = paired_se(more, pos[best], pos[k])
        else:
            diff_se[k] = paired_se(values, best, k)
    return best


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
