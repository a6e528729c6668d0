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
are monte-carlo's; its rollout (:func:`rollout`) has settings in
:data:`PARAMS`, whose defaults play monte-carlo's rollout move for move
(``tests/bots/test_analyzer.py``).  ``arena analyze`` grades with those
defaults (:data:`ROLLOUT_PARAMS`), whatever a variant of this bot sets.

Unlike monte-carlo it has no default heuristic to fall back on and no early
stop: it searches every option of every decision (11 discards, both answers
of a yes/no) with ``samples`` deals each, about ``samples * options``
rollouts a decision, so it is slow (see ``scripts/bench_analyze.py``).
Every random number comes from the bot's own generator: games replay.
"""

import numpy as np

from arena.botkit.lib import least_deadwood_discard
from arena.botkit.search import legal_options, option_deal, option_stats, rules_of
from arena.engine._jit import jit
from arena.engine.cards import lsb
from arena.engine.layout import (
    PH_BIG_GIN,
    PH_DISCARD,
    PH_DONE,
    PH_KNOCK,
    R_TARGET,
    S_CUR,
    S_HAND,
    S_JUST_TAKEN,
    S_PHASE,
    S_PILE,
    S_PILE_N,
    S_POINTS,
    S_SIZE,
    S_STOCK_POS,
    S_TAKEN,
    S_TURN,
    V_MY_SCORE,
    V_OPP_SCORE,
    V_RULES,
    V_SEAT,
)
from arena.engine.melds import best_discard, deadwood, in_any_meld
from arena.engine.rng import seed_rng
from arena.engine.step import apply_action
from bots import gin_chasing, monte_carlo

PARAMS: dict[str, float] = {
    "samples": 128.0,  # deals per decision; every legal option is played on each
    "my_knock": 1.0,  # rollouts, my seat: 0 knocks at the first chance, 1 by gin-chasing's schedule
    "opp_knock": 0.0,  # rollouts, the opponent: 0 knocks at the first chance, 1 by gin-chasing's schedule
    "take": 0.0,  # rollouts, both seats: 0 take a pile card only if it melds (Simple), 1 if it lowers deadwood
    "safe": 0.0,  # rollouts, both seats: shed no card next to one the other seat took from the pile (1)
    "safe_slack": 5.0,  # .. unless that costs more than this many points of deadwood
    "gin_at": 0.0,  # gin-chasing's knock schedule (for a seat set to 1 above) ..
    "relax_at": 8.0,
    "relax_step": 3.0,
    "knock_at": 10.0,
}
MEMORY = 1
(_SAMPLES, _MY_KNOCK, _OPP_KNOCK, _TAKE, _SAFE, _SAFE_SLACK, _GIN_AT) = range(7)
#: A rollout longer than this many turns is stopped and scored as a dead hand.
ROLLOUT_TURNS = 80

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
    for key in ("my_knock", "opp_knock", "take", "safe"):
        if d[key] not in (0.0, 1.0):
            raise ValueError(f"{key} = {d[key]} must be 0 or 1")
    for key in ("gin_at", "knock_at"):
        if not 0 <= d[key] <= 10:
            raise ValueError(f"{key} = {d[key]} must be between 0 and 10 (deadwood points)")
    if d["safe_slack"] < 0:
        raise ValueError(f"safe_slack = {d['safe_slack']} must be >= 0")
    if not 0 <= d["relax_at"] <= 31:
        raise ValueError(f"relax_at = {d['relax_at']} must be between 0 and 31 (cards in the stock)")
    if d["relax_step"] < 0:
        raise ValueError(f"relax_step = {d['relax_step']} must be >= 0")


@jit
def neighbours(cards):
    """The cards that share a rank with one of ``cards`` or are within two ranks of one in its suit."""
    out = np.int64(0)
    m = cards
    while m:
        c = lsb(m)
        m &= m - 1
        r = c % 13
        for k in range(4):
            out |= np.int64(1) << (k * 13 + r)
        for d in (-2, -1, 1, 2):
            if 0 <= r + d < 13:
                out |= np.int64(1) << (c + d)
    return out & ~cards


@jit
def rollout(st, rules, rng, me, params):
    """Play the hand in ``st`` to its end with fast policies for both seats.

    Both seats discard the card leaving the least deadwood (never the card
    just taken) and take the pile's top card when it lowers their deadwood
    (``take = 1``; ``take = 0``: only when it melds, as Simple).  Each seat
    knocks at its first chance, or by gin-chasing's schedule
    (``my_knock``/``opp_knock = 1``).  A hand that runs past
    :data:`ROLLOUT_TURNS` more turns is stopped as if dead (no points).

    The defaults are monte-carlo's rollout (:func:`bots.monte_carlo.rollout`,
    move for move and random number for random number): I wait for gin
    by gin-chasing's schedule, the opponent knocks at once and takes only
    pile cards that meld.  The other settings were tried against
    monte-carlo and played worse (the README's decision-analysis checks:
    both seats knocking at once and taking any pile card that lowers the
    deadwood won 33.8% of 240 games, the defaults 41.3% of 2,080).
    """
    stop = st[S_TURN] + ROLLOUT_TURNS
    while st[S_PHASE] != PH_DONE:
        if st[S_TURN] >= stop:
            st[S_POINTS] = 0
            st[S_POINTS + 1] = 0
            return
        seat = st[S_CUR]
        hand = st[S_HAND + seat]
        phase = st[S_PHASE]
        if phase == PH_DISCARD:
            allowed = hand
            taken = st[S_JUST_TAKEN]
            if taken >= 0:
                allowed &= ~(np.int64(1) << taken)
            action, left = least_deadwood_discard(hand, allowed, rng)
            if params[_SAFE] > 0:
                other = 1 - seat
                shown = st[S_TAKEN + other] & st[S_HAND + other]
                if shown:
                    safe = allowed & ~neighbours(shown)
                    if safe and safe != allowed:
                        card, safe_left = least_deadwood_discard(hand, safe, rng)
                        if safe_left <= left + params[_SAFE_SLACK]:
                            action = card
        elif phase == PH_KNOCK:
            action = 1
            if params[_MY_KNOCK if seat == me else _OPP_KNOCK] > 0:
                if deadwood(hand) > gin_chasing.knock_schedule(52 - st[S_STOCK_POS], params, _GIN_AT):
                    action = 0
        elif phase == PH_BIG_GIN:
            action = 1
        else:  # the upcard or a draw
            top = st[S_PILE + st[S_PILE_N] - 1]
            if params[_TAKE] > 0:
                _, with_top = best_discard(hand | (np.int64(1) << top), top)
                action = 1 if with_top < deadwood(hand) else 0
            else:
                action = 1 if in_any_meld(hand, top) else 0
        apply_action(st, rules, action)


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
    for s in range(samples):
        roll_seed = option_deal(view, rng, MODEL, truth, sampled)
        for k in range(n_options):
            st[:] = sampled
            if apply_action(st, rules, options[k]) != 0:
                values[s, k] = -1.0  # not a legal option: below any chance, never the best
                continue
            seed_rng(roll_rng, roll_seed)
            rollout(st, rules, roll_rng, me, params)
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
