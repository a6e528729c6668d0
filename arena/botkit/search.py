"""Building blocks for search bots: sample a deal consistent with a view, play it out.

A Monte Carlo bot guesses the hidden cards (the opponent's unknown cards and
the stock order) many times and plays each guess forward with fast rollout
policies.  Both steps are compiled kernels a bot's own compiled decision
function can call::

    st = np.empty(S_SIZE, np.int64)
    sample_state(view, rng, st)              # a full state the bot can't tell from the real one
    apply_action(st, rules, candidate)       # try a move ...
    play_out(st, rules, (simple functions), ...)   # ... and see how the hand ends

Everything :func:`sample_state` uses comes from the view, so a sampled state
rebuilds exactly the same view for the bot (the tests check this); the
cards the opponent took from the pile and still holds are placed in its
hand, the rest is dealt at random from the unseen cards.
"""

from __future__ import annotations

import numpy as np

from arena.botkit.lib import (  # noqa: F401  (part of the search toolkit)
    discardable,
    least_deadwood_discard,
    meld_completers,
    opponent_known,
    pile_cards,
)
from arena.engine._jit import jit
from arena.engine.cards import lsb, popcount
from arena.engine.layout import (
    OUT_NONE,
    R_SIZE,
    S_CUR,
    S_DEALER,
    S_DECK,
    S_DISCARDED,
    S_ERROR,
    S_HAND,
    S_HAND_NO,
    S_JUST_TAKEN,
    S_KNOCK_LIMIT,
    S_KNOCKER,
    S_MULT,
    S_OUTCOME,
    S_PASSED,
    S_PHASE,
    S_PILE,
    S_PILE_N,
    S_SCORE,
    S_SIZE,
    S_STOCK_POS,
    S_TAKEN,
    S_TURN,
    S_UPCARD,
    S_UPCARD_TAKER,
    V_DECISION,
    V_HAND,
    V_HAND_NO,
    V_IS_DEALER,
    V_JUST_TAKEN,
    V_KNOCK_LIMIT,
    V_MULT,
    V_MY_DISCARDED,
    V_MY_PASSED,
    V_MY_SCORE,
    V_MY_TAKEN,
    V_OPP_DISCARDED,
    V_OPP_PASSED,
    V_OPP_SCORE,
    V_OPP_TAKEN,
    V_PILE,
    V_PILE_N,
    V_RULES,
    V_SEAT,
    V_STOCK_N,
    V_TURN,
    V_UPCARD,
)
from arena.engine.melds import deadwood, in_any_meld, least_discards
from arena.engine.play import C_SIZE, VIEWS_SIZE, play_hand
from arena.engine.rng import next_u64, rand_below, rand_float, shuffle
from arena.engine.step import view_legal_answers


@jit
def rules_of(view):
    """The rules array carried in a view."""
    r = np.empty(R_SIZE, dtype=np.int64)
    for i in range(R_SIZE):
        r[i] = view[V_RULES + i]
    return r


@jit
def opponent_evidence(view):
    """``(refused, shed)``: cards the opponent chose not to take, and cards it discarded.

    Refused are the upcards it passed and my discards it let go (each of
    mine was the top of the pile at its next draw); shed are its own
    discards.  A player keeps cards that meld, so both sets say what its
    hand probably does *not* look like (see :func:`hand_likelihood`).
    """
    refused = view[V_OPP_PASSED] | (view[V_MY_DISCARDED] & ~view[V_OPP_TAKEN])
    return refused, view[V_OPP_DISCARDED]


@jit
def hand_likelihood(opp, refused, shed, refuse_weight, shed_weight):
    """Relative chance that a player holding ``opp`` made the choices seen.

    Every refused or shed card that would sit in a meld with two cards of
    ``opp`` (:func:`arena.botkit.lib.meld_completers`) multiplies the chance by
    its weight (1 = ignore the evidence, 0 = impossible).  The weights are a
    deliberately rough model: the hand held when the choice was made is not
    ``opp`` exactly, so a weight of 0 would throw away deals that can happen.
    """
    fits = meld_completers(opp)
    w = 1.0
    for _ in range(popcount(refused & fits)):
        w *= refuse_weight
    for _ in range(popcount(shed & fits)):
        w *= shed_weight
    return w


@jit
def sharp_likelihood(opp, known, last, weight):
    """Relative chance that a player that takes only melding cards and sheds its least deadwood
    holds ``opp``, having taken ``known`` from the pile and shed ``last`` (-1: nothing yet) last.

    ``weight`` for each pile card it took that sits in no meld of ``opp``,
    and once more if ``last`` was not a least-deadwood discard of ``opp``
    plus ``last`` (the hand it discarded from).  See
    :func:`sample_state_weighted`'s ``sharp_weight``.
    """
    w = 1.0
    m = known
    while m:
        k = lsb(m)
        m &= m - 1
        if not in_any_meld(opp & ~(np.int64(1) << k), k):
            w *= weight
    if last >= 0:
        before = opp | (np.int64(1) << last)
        _, ties = least_discards(before, before)
        if not (ties >> last) & 1:
            w *= weight
    return w


@jit
def last_shed(view):
    """The opponent's latest discard, -1 if it has discarded nothing this hand.

    It is the top pile card it discarded, or the card I took this turn if I
    took that one.  (At my decisions the opponent discarded last unless I
    have discarded since: then its card lies under mine.)
    """
    shed = view[V_OPP_DISCARDED]
    j = view[V_JUST_TAKEN]
    if j >= 0 and (shed >> j) & 1:
        return j
    for i in range(view[V_PILE_N] - 1, -1, -1):
        c = view[V_PILE + i]
        if (shed >> c) & 1:
            return c
    return -1


@jit
def sample_state(view, rng, st):
    """Fill ``st`` with a full game state consistent with ``view`` (random hidden cards)."""
    sample_state_weighted(view, rng, st, 1.0, 1.0, 1, False, 1.0, 1.0)


@jit
def sample_state_weighted(view, rng, st, refuse_weight, shed_weight, tries, built, quiet_weight, sharp_weight):
    """:func:`sample_state` with the opponent's hand drawn by a model of how it plays.

    ``built``: a player who has drawn ``d`` cards from the stock has seen
    ``d`` more cards than it holds and kept the ones that meld, so its hand
    is better than ``10`` random cards.  With ``built`` the sampler deals
    the hand, then replays that many stock draws: each draws one more unseen
    card and drops the one that leaves the least deadwood (never a card
    known to be held); the dropped cards stay unseen, in the stock.

    ``quiet_weight``: a hand the opponent could have knocked with after its
    last discard (deadwood within this hand's knock limit) is that much less
    likely, since it did not knock (1 = no such evidence, e.g. against a bot
    that chases gin).

    ``sharp_weight``: two facts of the hand of a player that takes only
    melding cards and sheds its least deadwood (Simple, early-knock), each
    making a hand that lacks it that much less likely (1 = no such
    evidence; :func:`sharp_likelihood`).  Its latest discard
    (:func:`last_shed`) was a least-deadwood discard of the sampled hand
    plus that card, which is exactly the hand it discarded from: a sharp
    test, where ``shed_weight`` is a loose one about all its discards.  And
    every pile card it took and still holds sits in a meld of the sampled
    hand (it took the card because it melded, and such a player keeps its
    melds); this one is applied per card.  (The first ignores the rule that
    the card just taken is not discarded: such a card melds, so it is seldom
    the least-deadwood discard anyway.)

    Rejection sampling: a hand dealt this way is kept with probability
    :func:`hand_likelihood` times that factor (at most ``tries`` deals; if none is kept, the
    likeliest is used).  With both weights 1 and ``built`` false this is
    uniform sampling.  Returns the likelihood of the hand used
    (:func:`sample_state_counted` also says how many deals it tried).
    """
    w, _ = sample_state_counted(view, rng, st, refuse_weight, shed_weight, tries, built, quiet_weight, sharp_weight)
    return w


@jit
def sample_state_counted(view, rng, st, refuse_weight, shed_weight, tries, built, quiet_weight, sharp_weight):
    """:func:`sample_state_weighted`, returning ``(likelihood, deals tried)``.

    The deals tried are most of a guess's cost when the evidence rejects
    nearly every hand (all ``tries`` are dealt and built), so a search that
    bounds its work per decision counts them with its rollouts.
    """
    pile = np.int64(0)
    for i in range(view[V_PILE_N]):
        pile |= np.int64(1) << view[V_PILE + i]
    mine = view[V_HAND]
    known = view[V_OPP_TAKEN] & ~pile & ~mine
    unseen = np.empty(52, dtype=np.int64)
    n = 0
    for c in range(52):
        if not ((mine | pile | known) >> c) & 1:
            unseen[n] = c
            n += 1
    need = 10 - popcount(known)
    refused, shed = opponent_evidence(view)
    # Its stock draws: one per discard, less the cards it took from the pile.
    draws = max(0, popcount(view[V_OPP_DISCARDED]) - popcount(view[V_OPP_TAKEN]))
    best_opp = np.int64(-1)
    best_w = -1.0
    last = last_shed(view) if sharp_weight < 1.0 else -1
    dealt = 0
    for _ in range(max(1, tries)):
        dealt += 1
        # Front Fisher-Yates: unseen[:need] becomes a uniform random hand.
        opp = known
        for i in range(need):
            j = i + rand_below(rng, n - i)
            t = unseen[i]
            unseen[i] = unseen[j]
            unseen[j] = t
            opp |= np.int64(1) << unseen[i]
        if built:
            for e in range(min(draws, n - need)):
                i = need + e
                j = i + rand_below(rng, n - i)
                t = unseen[i]
                unseen[i] = unseen[j]
                unseen[j] = t
                held = opp | (np.int64(1) << unseen[i])
                drop, _ = least_deadwood_discard(held, held & ~known, rng)
                opp = held & ~(np.int64(1) << drop)
        w = hand_likelihood(opp, refused, shed, refuse_weight, shed_weight)
        if quiet_weight < 1.0 and shed and deadwood(opp) <= view[V_KNOCK_LIMIT]:
            w *= quiet_weight
        if sharp_weight < 1.0:
            w *= sharp_likelihood(opp, known, last, sharp_weight)
        if w > best_w:
            best_w = w
            best_opp = opp
        if w >= 1.0 or rand_float(rng) < w:
            break
    # The stock: the unseen cards outside the hand (moved to the front, in
    # order), shuffled.
    m = 0
    for i in range(n):
        if not (best_opp >> unseen[i]) & 1:
            unseen[m] = unseen[i]
            m += 1
    shuffle(unseen[:m], rng)
    _fill_state(view, st, best_opp, unseen)
    return best_w, dealt


@jit
def deal_around(view, opp, rng, st):
    """Fill ``st`` with the state of ``view`` in which the opponent holds ``opp``
    and every other card I can't see is in the stock, shuffled.

    For a search handed its guesses of the opponent's hand from elsewhere (a
    driver's own filter: ``scripts/bench_posterior.py``) rather than from
    :func:`sample_state_weighted`.
    """
    seen = view[V_HAND] | opp | pile_cards(view)
    stock = np.empty(52, dtype=np.int64)
    m = 0
    for c in range(52):
        if not (seen >> c) & 1:
            stock[m] = c
            m += 1
    shuffle(stock[:m], rng)
    _fill_state(view, st, opp, stock)


@jit
def _fill_state(view, st, opp, stock):
    """The state of ``view`` with the opponent holding ``opp`` and ``stock`` to draw, in order."""
    st[:] = 0
    p = view[V_SEAT]
    o = 1 - p
    n_pile = view[V_PILE_N]
    for i in range(n_pile):
        st[S_PILE + i] = view[V_PILE + i]
    st[S_PILE_N] = n_pile
    stock_n = view[V_STOCK_N]
    pos = 52 - stock_n
    st[S_STOCK_POS] = pos
    for i in range(stock_n):
        st[S_DECK + pos + i] = stock[i]
    st[S_HAND + p] = view[V_HAND]
    st[S_HAND + o] = opp
    st[S_PHASE] = view[V_DECISION]
    st[S_CUR] = p
    st[S_DEALER] = p if view[V_IS_DEALER] else o
    st[S_TURN] = view[V_TURN]
    st[S_KNOCK_LIMIT] = view[V_KNOCK_LIMIT]
    st[S_MULT] = view[V_MULT]
    st[S_JUST_TAKEN] = view[V_JUST_TAKEN]
    st[S_TAKEN + p] = view[V_MY_TAKEN]
    st[S_TAKEN + o] = view[V_OPP_TAKEN]
    st[S_DISCARDED + p] = view[V_MY_DISCARDED]
    st[S_DISCARDED + o] = view[V_OPP_DISCARDED]
    st[S_PASSED + p] = view[V_MY_PASSED]
    st[S_PASSED + o] = view[V_OPP_PASSED]
    st[S_SCORE + p] = view[V_MY_SCORE]
    st[S_SCORE + o] = view[V_OPP_SCORE]
    st[S_HAND_NO] = view[V_HAND_NO]
    st[S_UPCARD] = view[V_UPCARD]
    st[S_UPCARD_TAKER] = -1
    st[S_KNOCKER] = -1
    st[S_OUTCOME] = OUT_NONE


@jit
def play_out(st, rules, bot0, bot1, params0, params1, mem0, mem1, rng0, rng1):
    """Play the hand in ``st`` to its end with two bots (tuples of 6 decision functions).

    Returns the error code of an illegal rollout decision (0 normally); the
    outcome and points are then in ``st``.
    """
    views = np.empty(VIEWS_SIZE, dtype=np.int64)
    log = np.empty(0, dtype=np.int64)
    counters = np.zeros(C_SIZE, dtype=np.int64)
    play_hand(st, rules, bot0, bot1, params0, params1, mem0, mem1, rng0, rng1, views, log, 0, counters)
    return st[S_ERROR]


# --- equity of every option: the analyzer's and the analyzer bot's kernel --------------------


@jit
def legal_options(view, options):
    """Fill ``options`` with every legal answer to the decision in ``view``; return how many.

    The engine's query (:func:`arena.engine.step.view_legal_answers`), lowest
    answer first: a discard's cards, 0 then 1 for the other decisions.
    ``options`` needs 11 slots.
    """
    m = view_legal_answers(view)
    n = 0
    while m:
        options[n] = lsb(m)
        m &= m - 1
        n += 1
    return n


@jit
def option_deal(view, rng, model, truth, out):
    """Draw one deal for grading every option of the decision in ``view``; return its rollout seed.

    Every option is then played on ``out`` (copied) with rollout random
    numbers seeded by the returned value (common random numbers), so the
    difference between two options' values on a deal is their effect, not
    the deal's luck.  The deal is drawn from the view by
    :func:`sample_state_weighted` with ``model`` = (refuse_weight,
    shed_weight, tries, built, quiet_weight); with a non-empty ``truth`` (a
    full state) the true hidden cards are used instead (hindsight: only the
    rollouts' random numbers differ between deals).  The loop over options
    lives with the rollout policy (:func:`bots.analyzer.option_values`):
    a cached kernel taking the rollout as an argument broke numba's cache
    when two processes wrote it at once.
    """
    if truth.shape[0] == S_SIZE:
        out[:] = truth
    else:
        sample_state_weighted(view, rng, out, model[0], model[1], int(model[2]), model[3] > 0, model[4], 1.0)
    return next_u64(rng)


@jit
def option_stats(values, n_options, mean, se, diff_se):
    """Per option: mean value, its standard error, and the standard error of
    its difference from the best option (paired, deal by deal).  Returns the
    index of the best option (the first of equal means)."""
    n = values.shape[0]
    best = 0
    for k in range(n_options):
        t = 0.0
        t2 = 0.0
        for s in range(n):
            t += values[s, k]
            t2 += values[s, k] * values[s, k]
        m = t / n
        mean[k] = m
        se[k] = np.sqrt(max(0.0, t2 / n - m * m) / max(1, n - 1))
        if m > mean[best]:
            best = k
    for k in range(n_options):
        diff_se[k] = paired_se(values, best, k)
    return best


@jit
def paired_se(values, a, b):
    """The standard error of the mean of ``values[:, a] - values[:, b]`` (paired, deal by deal)."""
    n = values.shape[0]
    t = 0.0
    t2 = 0.0
    for s in range(n):
        d = values[s, a] - values[s, b]
        t += d
        t2 += d * d
    m = t / n
    return np.sqrt(max(0.0, t2 / n - m * m) / max(1, n - 1))
