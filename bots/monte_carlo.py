"""Monte Carlo search: improves on marjj-style's choices by playing its options out on sampled deals.

Idea
----
At a decision worth thinking about, the bot guesses the hidden cards (the
opponent's hand and the stock order) up to ``samples`` times and, on every
guess, plays each of its options to the end of the hand with a fast rollout
policy for both seats.  Each option is played on the same guesses with the
same rollout random numbers (common random numbers), so what differs
between two options' results is their effect, not the luck of the deal.
The default option is the one marjj-style (``bots/marjj_style.py``) would
play (gin-chasing's, ``bots/gin_chasing.py``, with ``heuristic = 0``);
another replaces it only when its mean gain, deal by deal, is above
zero by ``confidence`` standard errors (``chase_confidence`` against an
opponent learned to chase gin, :func:`confidence_against`; for a knock
``knock_chase_confidence``, so against a chaser marjj-style's knock rule
stands, :func:`confidence_against`).  Without that rule a few hundred
noisy rollouts overrule a good heuristic about as often as they improve on
it.

The parts, in the order a decision uses them:

1. **Opponent model** (:func:`arena.botkit.search.sample_state_weighted`).  Cards
   the opponent took from the pile and still holds are in its hand.  The
   rest is dealt from the unseen cards, then ``built``: it replays the
   opponent's stock draws, each drawing one more unseen card and dropping
   the one that leaves the least deadwood, because a player who has seen
   more cards than it holds has kept the ones that meld.  Then the hand is
   kept with a probability that falls by ``refuse_weight`` for every card
   it refused (an upcard it passed, a discard of mine it let go) and by
   ``shed_weight`` for every card it discarded that would meld with the
   sampled hand (rejection sampling, up to ``tries`` deals per guess).
   ``scripts/bench_monte_carlo.py model`` measures how much closer this
   is to the true hands than uniform guessing.  ``quiet_weight`` (off)
   also discounts hands the opponent could have knocked with: true of
   Simple, but measured to lose games, so it stays at 1.  On a deal whose
   opponent knocks at once (part 4), ``sharp_weight`` adds two facts of a
   player that takes only melding cards and sheds its least deadwood: its
   latest discard was a least-deadwood discard of the sampled hand plus
   that card (exactly the hand it discarded from), and every pile card it
   took and still holds sits in a meld.  The guess of the opponent's hand
   is where the headroom is (given the true hand, the search beat simple in
   about 98% of games in a diagnostic run, ``docs/bench/strength-2026-12-03.md``);
   these two facts added about 2 points and 1 point against simple.  That
   headroom is not in the table: the exact posterior of a Simple opponent's
   hand (``scripts/bench_posterior.py``) holds 3.54 true hidden cards per
   guessed hand where this model holds 3.38 (uniform guesses 2.74), and it
   won +1.1 points [-0.8, +3.0] more games on 1,000 pairs.
2. **Rollouts** (:func:`bots.rollout.rollout` with
   :func:`bots.rollout.monte_carlo_policy`, the kernel the analyzer shares).
   Both seats discard the least deadwood, read straight off the state (own
   hand and the pile top only).  The opponent draws like the EAAI Simple
   player (takes a pile card that melds) and knocks at the first chance,
   unless the learned type (part 4) says otherwise.  This bot's own seat
   plays cheap versions of marjj-style's rules, the defaults its real
   choices start from: it takes a pile card only if it melds and lowers the
   deadwood (``rollout_take = 2``), and knocks in its first four turns, then
   by gin-chasing's schedule (``gin_at`` .. ``knock_at``: gin only while
   the stock is long; ``rollout = 2``).  On 500-game screens (seed 7)
   against simple / gin-chasing / marjj-style, that own-seat policy won
   81.0 / 68.6 / 59.4% where Simple's draws with the schedule alone
   (``rollout = 1, rollout_take = 0``, the former default) won 82.0 / 61.0
   / 57.2%.  A rollout costs about 1.5 microseconds.
3. **Value** (:func:`hand_value`).  A hand's points matter only through the
   game: 20 points are worth more when they reach the target.  A rollout's
   end score is turned into the chance of winning the game from there
   (:data:`arena.botkit.game_value.WIN_CHANCE`), so knocking weighs the undercut risk against what
   the points are worth at this score.  ``game_value = 0`` scores the plain
   point difference instead.

4. **What the showdowns teach** (:func:`observe_showdown`, ``learn``).  At
   the end of each hand the table shows the opponent's final hand, its hand
   after its last discard.  A hand within the knock limit that did not knock
   says "not a knock-at-once player"; a knock with more deadwood than the
   schedule allows says "not a gin chaser".  The odds between the two types
   are kept in memory for the rest of the game, and each sampled deal draws
   the opponent's type by them: a gin chaser knocks by the schedule in the
   rollouts and takes a pile card that lowers its deadwood; a knock-at-once
   player is dealt a hand it could not have knocked with (``quiet_learned``).
   Worth about 6 points against marjj-style (which knocks early, then chases
   gin), nothing measurable against simple or gin-chasing.

``heuristic = 1`` (the default) makes marjj-style's choices
(``bots/marjj_style.py``: take only a melding card that lowers deadwood, its
discard score with the danger term, knock only in the first turns) the
defaults the search must beat; ``heuristic = 0`` uses gin-chasing's.  On
2,000-game duplicate runs with the former rollouts and search settings
(Simple's draws, 400 samples), marjj-style's
defaults won 65.8% against gin-chasing and 58.0% against marjj-style (seed
3030), gin-chasing's 62.2% and 56.5% (seed 2026).  With the defaults above
(fresh seed 8080, ``docs/bench/strength-2026-12-03.md``): 80.4% [78.8, 82.0]
against simple, 70.0% [68.1, 71.9] against gin-chasing, 59.4% [57.4, 61.3]
against marjj-style, at a mean 0.5 ms per decision (slowest about 4 ms).

What is searched: the pile card against the stock when the pile card lowers
the deadwood (otherwise the stock); the ``candidates`` best discards by
the heuristic's score, within ``gap`` points of its best; knocking against
playing on (a gin always knocks; big gin is always declared).  A search
stops playing an option that is out of the running, and stops before
``samples`` when its choice is settled (:func:`_prune`).

Cost grows with ``samples``: the defaults (800 samples, 5 candidates within
6 points, ``confidence`` 0.5) spend about a millisecond per decision on
average (most decisions are settled early: the median is near 0.1 ms); on
500-game screens they won 2.4 points more against simple than 400 samples,
3 candidates within 4 points and ``confidence`` 1, and a few tenths more
against gin-chasing and marjj-style.  Every random number comes from the bot's own generator, so a
game replays from its seed on any machine.  That is why the budget is set
in work, not time: ``work`` (1,600) stops a search once the hands the
opponent model dealt (every try of its rejection sampler) and the rollouts
(all options together) add up to that many.  Both cost a microsecond or
two, and the sampler's tries are most of a guess's cost where the evidence
rejects nearly every hand, so bounding rollouts alone did not bound the
slowest decisions.  At 1,600 the slowest decision of 50 timed games took
3 to 4.5 ms on the project's two-core machine (10.5 ms without it).  What it
costs in strength depends on the deals: on 2,000-game runs, seed 6060 gave
83.0 / 68.3 / 59.8% against simple / gin-chasing / marjj-style with it and
82.8 / 67.4 / 60.2% without; seed 8080 gave 80.4 / 70.0 / 59.4% with it and
83.3 / 71.2 / 60.2% without.  ``work = 0`` lifts the bound.
``time_ms`` (off by default) stops a search after that much CPU time
instead, which makes the games depend on the machine's speed and load, so a
run with it no longer replays exactly.  ``rollout_quick`` (off) sets my
rollout knocks, as ``rollout`` does, for the sampled deals whose opponent
knocks at once; on one 500-pair screen against simple (seed 9100) ``1`` won
82.4% to the default's 81.4%, not measured against the others, so it stays
off.  ``scripts/bench_monte_carlo.py`` measures time per decision and
strength against compute.
"""

import time
import warnings

import numpy as np
from numba import objmode
from numba.core.errors import NumbaWarning

from arena.botkit.game_value import win_chance
from arena.botkit.lib import (
    discardable,
    float_bits,
    least_deadwood_discard,
    top_beats_stock,
    unseen_cards,
)
from arena.botkit.search import deal_around, rules_of, sample_state_counted
from arena.engine._jit import jit
from arena.engine.cards import lsb
from arena.engine.layout import (
    OUT_CAPPED,
    R_TARGET,
    S_POINTS,
    S_SIZE,
    V_HAND,
    V_JUST_TAKEN,
    V_KNOCK_LIMIT,
    V_MY_SCORE,
    V_OPP_SCORE,
    V_RULES,
    V_SEAT,
    V_SHOWN,
    V_SHOWN_KNOCKER,
    V_SHOWN_OPP_HAND,
    V_SHOWN_OUTCOME,
    V_STOCK_N,
    V_TOP,
)
from arena.engine.melds import best_discard, deadwood, deadwood_after_discards
from arena.engine.rng import next_u64, rand_below, rand_float, seed_rng
from arena.engine.step import apply_action
from bots import gin_chasing, marjj_style
from bots.rollout import OPP_KNOCK, OPP_TAKE, POLICY_SIZE, monte_carlo_policy, rollout
from bots.simple import REPEAT_SLOTS, drawn_card, no_repeats, note_hand, remember_pair

PARAMS: dict[str, float] = {
    "samples": 800.0,  # most deals sampled per searched decision; every option is played on each (measured: 400
    # samples, 3 candidates, gap 4, confidence 1 won 2.4 / 0.2 / 0.4 points less vs simple / gin-chasing / marjj)
    "candidates": 5.0,  # discards searched: the best by the heuristic's score (1 = no discard search)
    "gap": 6.0,  # .. and only those within this many points of its best score
    "refuse_weight": 0.25,  # opponent model: factor per refused card that melds with a sampled hand
    "shed_weight": 0.25,  # opponent model: factor per discarded card that melds with a sampled hand
    "tries": 8.0,  # opponent model: deals tried per sample (rejection sampling)
    "built": 1.0,  # opponent model: 1 replays its stock draws keeping what melds, 0 deals 10 random cards
    "quiet_weight": 1.0,  # opponent model: factor for a hand it could have knocked with (1 = off, see doc)
    "confidence": 0.5,  # another option replaces the default only if better by this many standard errors
    "game_value": 1.0,  # 1: value hands by the chance of winning the game; 0: by the point difference
    "rollout": 2.0,  # my rollout knocks: 2 marjj-style's (early, then by the schedule below), 1 by the schedule,
    # 0 at once (measured: 2 won 6.6 / 3.6 points more than 1 vs gin-chasing / marjj-style, 3.6 less vs simple)
    "time_ms": 0.0,  # also stop a search after this much CPU time (0 = off; breaks exact replays, see doc)
    "gin_at": 0.0,  # rollouts: I knock with at most this deadwood while the stock is long ..
    "relax_at": 8.0,  # .. until it has fewer cards than this ..
    "relax_step": 3.0,  # .. then the threshold rises this much per card drawn ..
    "knock_at": 10.0,  # .. up to this (gin-chasing's schedule)
    "learn": 1.0,  # 1: learn from each showdown whether the opponent knocks at once or chases gin (see doc)
    "chase_prior": 0.5,  # .. the chance it chases gin before any showdown
    "quiet_learned": 0.2,  # .. quiet_weight of a sampled deal whose opponent knocks at once
    "rollout_take": 2.0,  # my rollout draws: take a pile card 0 if it melds, 1 if it lowers the deadwood, 2 if both
    # (marjj-style's; measured with rollout 2: 2.6 points more vs simple than 0, about even vs the others)
    "heuristic": 1.0,  # the default choices the search must beat: 0 gin-chasing's, 1 marjj-style's
    "rollout_quick": -1.0,  # my rollout knocks (as rollout) against a sampled knock-at-once opponent (-1: rollout's)
    "work": 1600.0,  # also stop a search after this many hands dealt by the opponent model plus rollouts
    # (0 = off; see doc)
    "sharp_weight": 0.1,  # opponent model, on a sampled deal whose opponent knocks at once: factor per fact
    # of a Simple-like hand the sampled hand lacks (its latest discard was a least-deadwood one, and each pile
    # card it took and holds melds; 1 = off; see doc)
    "chase_confidence": 1.5,  # confidence against a gin chaser: the search plays confidence + (this -
    # confidence) x the learned chance that the opponent chases gin (= confidence: one threshold; see doc)
    "knock_chase_confidence": 10.0,  # the same for a knock decision (10: against a chaser, marjj-style's
    # knock rule stands; its searched knocks mid-hand were undercut 42-50% of the time; see doc)
}
# Simple's repeat guard keeps two bots from trading the same cards all hand;
# then the opponent model learned from showdowns (see observe_showdown).
MEMORY = REPEAT_SLOTS + 3
#: memory slots: the last hand shown (V_SHOWN) already learned from, the log-odds
#: that the opponent chases gin, and the stock size at my last decision.
M_SEEN, M_LOGODDS, M_STOCK = REPEAT_SLOTS, REPEAT_SLOTS + 1, REPEAT_SLOTS + 2
#: A driver may hand the search its own guesses of the opponent's hand in slots
#: past the bot's memory (the engine allocates exactly ``MEMORY``, so a game never
#: has them): ``memory[M_GUESSES]`` = their number ``k``, then ``k`` hands as the
#: int64's bits.  The search then draws each deal's hand from them instead of its
#: opponent model: ``scripts/bench_posterior.py strength`` measures what an exact
#: posterior would be worth.
M_GUESSES = MEMORY

(
    _SAMPLES,
    _CANDIDATES,
    _GAP,
    _REFUSE_W,
    _SHED_W,
    _TRIES,
    _BUILT,
    _QUIET_W,
    _CONFIDENCE,
    _GAME_VALUE,
    _ROLLOUT,
    _TIME_MS,
    _GIN_AT,
    _RELAX_AT,
    _RELAX_STEP,
    _KNOCK_AT,
    _LEARN,
    _CHASE_PRIOR,
    _QUIET_LEARNED,
    _ROLLOUT_TAKE,
    _HEURISTIC,
    _ROLLOUT_QUICK,
    _WORK,
    _SHARP_W,
    _CHASE_CONFIDENCE,
    _KNOCK_CHASE_CONFIDENCE,
) = range(26)
#: Likelihood of a showdown under the type it contradicts (a knock-at-once player
#: declining a knock, a gin chaser knocking with more than its schedule allows).
_CONTRADICTS = 0.05
_MAX_LOGODDS = 8.0
_MAX_OPTIONS = 11
#: Early stop: every this many samples, drop the options out of the running and stop once the
#: choice is settled (see :func:`_prune`).
_CHECK_EVERY = 32
_STOP_Z = 2.0
_WIN_Z = 3.0
#: gin-chasing's discard score, used to pick the discards worth searching.
_GC_SLACK = gin_chasing.PARAMS["slack"]
_GC_LOOKAHEAD = gin_chasing.PARAMS["lookahead"]
_GC_MIDDLE = gin_chasing.PARAMS["middle"]


def validate_params(d: dict) -> None:
    """Raise ValueError naming the first parameter out of range."""
    if not 1 <= d["samples"] <= 4096:
        raise ValueError(f"samples = {d['samples']} must be between 1 and 4096")
    if not 1 <= d["candidates"] <= _MAX_OPTIONS:
        raise ValueError(f"candidates = {d['candidates']} must be between 1 and {_MAX_OPTIONS}")
    if d["gap"] < 0:
        raise ValueError(f"gap = {d['gap']} must be >= 0")
    for key in ("refuse_weight", "shed_weight", "quiet_weight", "sharp_weight"):
        if not 0 < d[key] <= 1:
            raise ValueError(f"{key} = {d[key]} must be above 0 and at most 1 (a likelihood factor)")
    if not 1 <= d["tries"] <= 64:
        raise ValueError(f"tries = {d['tries']} must be between 1 and 64")
    for key in ("confidence", "chase_confidence", "knock_chase_confidence"):
        if not 0 <= d[key] <= 10:
            raise ValueError(f"{key} = {d[key]} must be between 0 and 10 (standard errors)")
    if d["built"] not in (0.0, 1.0):
        raise ValueError(f"built = {d['built']} must be 0 or 1")
    if d["game_value"] not in (0.0, 1.0):
        raise ValueError(f"game_value = {d['game_value']} must be 0 (points) or 1 (game win chance)")
    if d["rollout"] not in (0.0, 1.0, 2.0):
        raise ValueError(
            f"rollout = {d['rollout']} must be 0 (knock at once), 1 (gin-chasing's knocks) or 2 (marjj-style's)"
        )
    if d["rollout_quick"] not in (-1.0, 0.0, 1.0, 2.0):
        raise ValueError(f"rollout_quick = {d['rollout_quick']} must be -1 (rollout's) or 0, 1, 2 (as for rollout)")
    if d["rollout_take"] not in (0.0, 1.0, 2.0):
        raise ValueError(f"rollout_take = {d['rollout_take']} must be 0, 1 or 2 (see bots/rollout.py)")
    if not 0 <= d["work"] <= 4096 * (64 + _MAX_OPTIONS):
        raise ValueError(f"work = {d['work']} must be between 0 (off) and {4096 * (64 + _MAX_OPTIONS)}")
    if not 0 <= d["time_ms"] <= 60_000:
        raise ValueError(f"time_ms = {d['time_ms']} must be between 0 (off) and 60000")
    gin_chasing.validate_schedule(d)
    for key in ("learn", "heuristic"):
        if d[key] not in (0.0, 1.0):
            raise ValueError(f"{key} = {d[key]} must be 0 or 1")
    if not 0 < d["chase_prior"] < 1:
        raise ValueError(f"chase_prior = {d['chase_prior']} must be above 0 and below 1 (a probability)")
    if not 0 < d["quiet_learned"] <= 1:
        raise ValueError(f"quiet_learned = {d['quiet_learned']} must be above 0 and at most 1 (a likelihood factor)")


# --- what a hand is worth (the game-value model itself: arena.botkit.game_value) ------------


@jit
def hand_value(st, me, need_me, need_opp, game_value):
    """What the finished hand in ``st`` is worth to seat ``me``."""
    gain = st[S_POINTS + me]
    loss = st[S_POINTS + 1 - me]
    if game_value:
        return win_chance(need_me - gain, need_opp - loss)
    return float(gain - loss)


# --- the search ---------------------------------------------------------------------------


# The objmode block below makes numba warn that it won't release the GIL there;
# the block runs only when time_ms is set, and runs hold no threads anyway.
# numba colours the text, so the pattern matches past the colour codes.
warnings.filterwarnings("ignore", message=r".*Code running in object mode", category=NumbaWarning)


@jit
def cpu_seconds():
    """CPU time of this process (for ``time_ms`` only: numba has no clock, so Python is asked)."""
    with objmode(t="float64"):
        t = time.process_time()
    return t


@jit
def _mean_se(total, total2, n):
    """Mean and standard error of ``n`` values with sum ``total`` and sum of squares ``total2``."""
    mean = total / n
    return mean, np.sqrt(max(0.0, total2 / n - mean * mean) / max(1, n - 1))


@jit
def _prune(gain, gain2, count, alive, n_options):
    """Stop playing the options that are out of the running; True when the choice is settled.

    An alternative is out when its mean gain over the default is below
    zero by ``_STOP_Z`` standard errors, or below the lower bound of a
    leader (an alternative better than the default by ``_WIN_Z``).  Its
    tally stays as it is and it is no longer played, so a decision between
    five discards soon costs what a decision between two does: the samples
    go to the options still close (racing).  Settled: no alternative but
    the leader is still in.  Most decisions are not close, so stopping
    their search early leaves the sample budget for the ones that are.
    """
    lead = -1
    lead_low = 0.0
    for k in range(1, n_options):
        if alive[k]:
            mean, se = _mean_se(gain[k], gain2[k], count[k])
            if mean - _WIN_Z * se > lead_low:
                lead = k
                lead_low = mean - _WIN_Z * se
    settled = True
    for k in range(1, n_options):
        if k == lead or not alive[k]:
            continue
        mean, se = _mean_se(gain[k], gain2[k], count[k])
        if mean + _STOP_Z * se > lead_low:
            settled = False
        else:
            alive[k] = False
    return settled


# --- the opponent model learned from showdowns ----------------------------------------------


@jit
def observe_showdown(view, params, memory):
    """Learn from the last hand's showdown, once, whether the opponent knocks at once or chases gin.

    Two types of opponent: one that knocks at its first chance (Simple,
    early-knock) and one that knocks only by gin-chasing's schedule (my own
    ``gin_at .. knock_at``).  The showdown shows the opponent's final hand,
    which is its hand after its last discard, when it was offered a knock
    if its deadwood was within the limit:

    * it knocked with more deadwood than the schedule allowed one card
      after my last decision's stock size (it drew before it knocked): a
      gin chaser would not have;
    * it did not knock (I knocked, or the hand died) though its final hand
      was within the knock limit: a knock-at-once player would have.

    Each such showdown moves the log-odds by ``log(_CONTRADICTS)`` (kept in
    ``memory[M_LOGODDS]``, relative to ``chase_prior``); a gin or an
    unremarkable hand says nothing.  Also notes the stock size for the
    next showdown.  Call at the start of every decision.
    """
    shown = view[V_SHOWN]
    if shown > 0 and memory[M_SEEN] != shown:
        memory[M_SEEN] = shown
        opp = 1 - view[V_SEAT]
        knocker = view[V_SHOWN_KNOCKER]
        dw = deadwood(view[V_SHOWN_OPP_HAND])
        # It drew after my last decision: the stock was one card shorter when it knocked.
        allowed = gin_chasing.knock_schedule(max(0.0, memory[M_STOCK] - 1), params, _GIN_AT)
        step = -np.log(_CONTRADICTS)
        if knocker == opp and 0 < dw and dw > allowed:
            memory[M_LOGODDS] = max(-_MAX_LOGODDS, memory[M_LOGODDS] - step)
        elif knocker != opp and view[V_SHOWN_OUTCOME] != OUT_CAPPED and dw <= view[V_KNOCK_LIMIT]:
            memory[M_LOGODDS] = min(_MAX_LOGODDS, memory[M_LOGODDS] + step)
    memory[M_STOCK] = view[V_STOCK_N]


@jit
def chase_chance(params, memory):
    """The chance that the opponent chases gin (rather than knocks at once), by what has been learned."""
    prior = params[_CHASE_PRIOR]
    x = np.log(prior / (1.0 - prior)) + memory[M_LOGODDS]
    return 1.0 / (1.0 + np.exp(-x))


@jit
def confidence_against(params, chase, knock=False):
    """How many standard errors an option must beat the default by, against an opponent that chases
    gin with chance ``chase``: ``confidence`` against one that knocks at once, ``chase_confidence``
    (``knock_chase_confidence`` for a ``knock`` decision) against a gin chaser, in between by the
    odds learned so far.

    Against a gin chaser marjj-style's choices are worth trusting more: on paired 2,000-game screens,
    ``confidence`` 1 instead of 0.5 won 3.0 and 2.8 points more against gin-chasing, and 1.8 less
    against simple, so the threshold follows the learned type.  Against marjj-style too (which
    declines knocks after its first turns, so it reads as a chaser): on one seed's deals,
    ``chase_confidence`` 1, 1.5 and 2.5 won 2.1, 5.0 and 4.0 points more than 0.5 (the old single
    threshold) against gin-chasing and 2.5, 4.3 and 3.1 more against marjj-style
    (``docs/bench/strength-2026-12-05.md``).

    Knocks most of all: in 1,000 games against gin-chasing (seed 4242), a quarter of the search's
    knocks were undercut, and those made with 9 to 20 cards in the stock 42-50% of the time, against
    8% in the first turns, where marjj-style's rule knocks.  The sampled hands of a chaser late in a
    hand are further from gin than its real ones.  At ``knock_chase_confidence`` 10 the rule stands
    against a chaser: paired with 1.5 on the same deals, +1.4, +3.4 and +3.6 points against
    gin-chasing on three seeds, and no change against simple or marjj-style.
    """
    z = params[_CONFIDENCE]
    return z + (params[_KNOCK_CHASE_CONFIDENCE if knock else _CHASE_CONFIDENCE] - z) * chase


@jit
def best_option(view, params, rng, options, n_options):
    """:func:`search` with no learned opponent (``chase`` = 0: the opponent knocks at once, like Simple)."""
    return search(view, params, rng, options, n_options, 0.0, np.zeros(0), confidence_against(params, 0.0))


@jit
def search(view, params, rng, options, n_options, chase, memory, z):
    """Index of the option (actions for the decision in ``view``) to play.

    ``options[0]`` is the default (the heuristic's choice).  With ``learn``,
    each sampled deal first draws the opponent's type: with chance
    ``chase`` a gin chaser (in its rollouts it knocks by the schedule and
    takes a pile card that lowers its deadwood), otherwise a knock-at-once
    player (knocks at its first chance, takes only melding cards, and its
    sampled hand is one it could not have knocked with, by
    ``quiet_learned``).  Every option is
    played on the same sampled deals with the same rollout random numbers,
    and another option replaces the default only when its mean gain over
    the default, deal by deal, exceeds ``confidence`` standard errors: with
    few samples, a noisy estimate would otherwise overrule a good heuristic
    about as often as it improves on it (``z`` standard errors,
    :func:`confidence_against`).  Hands
    handed in past the bot's ``memory`` (:data:`M_GUESSES`) replace the
    opponent model's.
    """
    rules = rules_of(view)
    guesses = int(memory[M_GUESSES]) if memory.shape[0] > M_GUESSES + 1 else 0
    me = view[V_SEAT]
    target = view[V_RULES + R_TARGET]
    need_me = target - view[V_MY_SCORE]
    need_opp = target - view[V_OPP_SCORE]
    game_value = params[_GAME_VALUE] > 0
    sampled = np.empty(S_SIZE, dtype=np.int64)
    st = np.empty(S_SIZE, dtype=np.int64)
    roll_rng = np.empty(4, dtype=np.uint64)
    schedule = params[_GIN_AT : _GIN_AT + 4]
    # Against a sampled opponent that knocks at once, my knocks are rollout_quick's (-1: rollout's).
    quick_knock = params[_ROLLOUT_QUICK] if params[_ROLLOUT_QUICK] >= 0 else params[_ROLLOUT]
    policy = monte_carlo_policy(quick_knock, params[_ROLLOUT_TAKE], schedule, np.empty(POLICY_SIZE))
    chaser = monte_carlo_policy(params[_ROLLOUT], params[_ROLLOUT_TAKE], schedule, np.empty(POLICY_SIZE))
    chaser[OPP_KNOCK] = 1.0
    chaser[OPP_TAKE] = 1.0
    learn = params[_LEARN] > 0
    gain = np.zeros(n_options)  # sum over deals of (option's value - the default's)
    gain2 = np.zeros(n_options)  # sum of its squares
    count = np.zeros(n_options, dtype=np.int64)  # deals each option was played on
    alive = np.ones(n_options, dtype=np.bool_)  # options still in the running (see _prune)
    n_max = int(params[_SAMPLES])
    max_work = int(params[_WORK]) if params[_WORK] > 0 else n_max * (64 + n_options)
    work = 0  # hands dealt by the opponent model plus rollouts, so far
    budget = params[_TIME_MS] / 1000.0
    start = cpu_seconds() if budget > 0 else 0.0
    n = 0
    while n < n_max:
        n += 1
        chases = learn and rand_float(rng) < chase
        quiet = params[_QUIET_W] if not learn else (1.0 if chases else params[_QUIET_LEARNED])
        if guesses > 0:
            deal_around(view, float_bits(memory[M_GUESSES + 1 + rand_below(rng, guesses)]), rng, sampled)
            dealt = 1
        else:
            _, dealt = sample_state_counted(
                view,
                rng,
                sampled,
                params[_REFUSE_W],
                params[_SHED_W],
                int(params[_TRIES]),
                params[_BUILT] > 0,
                quiet,
                1.0 if chases else params[_SHARP_W],
            )
        work += dealt
        roll_seed = next_u64(rng)
        base = 0.0
        for k in range(n_options):
            if not alive[k]:
                continue
            st[:] = sampled
            apply_action(st, rules, options[k])
            seed_rng(roll_rng, roll_seed)
            rollout(st, rules, roll_rng, me, chaser if chases else policy)
            work += 1
            v = hand_value(st, me, need_me, need_opp, game_value)
            if k == 0:
                base = v
            else:
                gain[k] += v - base
                gain2[k] += (v - base) * (v - base)
                count[k] += 1
        if n % _CHECK_EVERY == 0 and n < n_max and _prune(gain, gain2, count, alive, n_options):
            break
        if work >= max_work:
            break
        if budget > 0 and n >= 2 and cpu_seconds() - start > budget:
            break
    best = 0
    best_margin = 0.0
    for k in range(1, n_options):
        mean, se = _mean_se(gain[k], gain2[k], count[k])
        margin = mean - z * se
        if mean > 0 and margin > best_margin:
            best = k
            best_margin = margin
    return best


@jit
def _choose(view, params, memory, rng, options, n_options, knock=False):
    """The index of the option to play, by :func:`search` with the learned opponent model (a ``knock``
    decision by its own threshold, :func:`confidence_against`)."""
    chase = chase_chance(params, memory) if params[_LEARN] > 0 else 0.0
    return search(view, params, rng, options, n_options, chase, memory, confidence_against(params, chase, knock))


@jit
def _draw_or_take(view, params, memory, rng):
    """Shared by the upcard and the draw: 1 takes the top card, 0 does not."""
    hand = view[V_HAND]
    top = view[V_TOP]
    if top < 0:
        return 0
    _, with_top = best_discard(hand | (np.int64(1) << top), top)
    if with_top >= deadwood(hand):
        return 0  # the card lowers nothing now: not worth a search
    options = np.empty(2, dtype=np.int64)
    if params[_HEURISTIC] > 0:
        options[0] = 1 if marjj_style.joins_and_lowers(hand, top) else 0
    else:
        options[0] = 1 if top_beats_stock(view, 0.0) else 0  # gin-chasing's choice first: it wins ties
    options[1] = 1 - options[0]
    return options[_choose(view, params, memory, rng, options, 2)]


@jit
def take_upcard(view, params, memory, rng):
    observe_showdown(view, params, memory)
    note_hand(view, memory, 0)
    return _draw_or_take(view, params, memory, rng)


@jit
def draw(view, params, memory, rng):
    observe_showdown(view, params, memory)
    note_hand(view, memory, 0)
    return _draw_or_take(view, params, memory, rng)


@jit
def big_gin(view, params, memory, rng):
    return 1


@jit
def discard_candidates(view, allowed, options, limit, gap, heuristic):
    """Fill ``options`` with up to ``limit`` discards of ``allowed``, best first by gin-chasing's score
    (``heuristic`` 1: by marjj-style's, :func:`bots.marjj_style.discard_scores`).

    The score (see :mod:`bots.gin_chasing`): deadwood left, corrected by the
    expected deadwood after one more draw, plus a small cost for giving up
    a middle rank; only discards within ``_GC_SLACK`` points of the least
    deadwood count, and only those scoring within ``gap`` of the best.
    Returns how many were filled.
    """
    hand = view[V_HAND]
    score = np.full(52, 1e18)
    if heuristic:
        marjj_style.discard_scores(view, marjj_style.DEFAULTS, allowed, score)
    else:
        out = np.empty(52, dtype=np.int64)
        deadwood_after_discards(hand, out)
        least = 1 << 30
        m = allowed
        while m:
            c = lsb(m)
            m &= m - 1
            least = min(least, out[c])
        unseen = unseen_cards(view)
        m = allowed
        while m:
            c = lsb(m)
            m &= m - 1
            if out[c] <= least + _GC_SLACK:
                score[c] = gin_chasing.discard_score(hand, c, out[c], unseen, _GC_LOOKAHEAD, _GC_MIDDLE)
    n = 0
    while n < limit:
        pick = -1
        m = allowed
        while m:
            c = lsb(m)
            m &= m - 1
            if score[c] < 1e17 and (pick < 0 or score[c] < score[pick]):
                pick = c
        if pick < 0 or (n > 0 and score[pick] > score[options[0]] + gap):
            break
        options[n] = pick
        allowed &= ~(np.int64(1) << pick)
        n += 1
    return n


@jit
def discard(view, params, memory, rng):
    observe_showdown(view, params, memory)
    allowed = discardable(view)
    taken = view[V_JUST_TAKEN]
    if taken >= 0:  # like Simple, never throw back the card just taken
        allowed &= ~(np.int64(1) << taken)
    drawn = drawn_card(view, memory, 0)
    allowed = no_repeats(memory, 0, drawn, allowed)
    options = np.empty(_MAX_OPTIONS, dtype=np.int64)
    limit = min(int(params[_CANDIDATES]), _MAX_OPTIONS)
    n = discard_candidates(view, allowed, options, limit, params[_GAP], params[_HEURISTIC] > 0)
    if n == 0:
        # marjj-style's score leaves out cards far above the least deadwood of every legal discard, and
        # the repeat guard may have taken all the others: shed the least deadwood of what is left, as
        # marjj-style does (reading options[0] here played an unset slot: a forfeit).
        card, _ = least_deadwood_discard(view[V_HAND], allowed, rng)
    elif n == 1:
        card = options[0]
    else:
        card = options[_choose(view, params, memory, rng, options, n)]
    remember_pair(memory, 0, drawn, card)
    return card


@jit
def knock(view, params, memory, rng):
    observe_showdown(view, params, memory)
    if deadwood(view[V_HAND]) == 0:
        return 1  # gin: nothing to wait for
    options = np.array([1, 0], dtype=np.int64)
    if params[_HEURISTIC] > 0 and not marjj_style.wants_knock(view, marjj_style.DEFAULTS):
        options[0], options[1] = 0, 1  # marjj-style plays on: knocking must win the search
    return options[_choose(view, params, memory, rng, options, 2, True)]
