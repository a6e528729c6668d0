"""The rules of a hand and a game, as a step machine over one state array.

Everything that decides what is legal and what it scores lives here, once:

* :func:`deal_hand` shuffles (seeded) and deals, and sets Oklahoma's limit;
* :func:`apply_action` takes one decision of the seat to act, checks it and
  moves the hand on (upcard offer, draw, big gin, discard, knock, dead hand,
  turn cap, showdown and scoring);
* :func:`begin_game` / :func:`end_hand` run the game around the hands
  (scores, target, dealer rule, hand cap) and fill the records.

The drivers that ask the bots (:mod:`arena.engine.play`, compiled, and the plain
Python loop for Python bots) only call these functions, so both play by
exactly the same rules.  A bot only ever receives the array built by
:func:`build_view`, which copies what a player at the table sees.

Choices where RULES are silent (documented here, where they are implemented):

* Deal order: cards 0-9 of the shuffled deck go to the non-dealer, 10-19 to
  the dealer, card 20 is the upcard, the rest is the stock, top first.  The
  deal depends on the seats' roles, so replaying a seed with the seats
  swapped gives each bot the other's cards (duplicate deals).
* After both players pass the upcard, the non-dealer's first draw is from the
  stock without asking (RULES: "drawing from the stock").
* Taking the upcard is followed by a discard; big gin is offered only after a
  normal draw (RULES step 2 vs step 3).
* Oklahoma: the hand's knock limit is the upcard's value (Ace: 0, gin only),
  never above the ``knock_limit`` setting, so both settings keep a meaning.
* Turn cap: a "turn" is one discard; a hand reaching ``turn_cap`` discards
  ends as ``capped`` (no score, same dealer, like a dead hand).
* A knock where the defender ties the knocker with ``undercut_on_tie`` off
  scores 0 points but counts as the knocker's hand (it decides the dealer
  under the winner/loser rules).
"""

from __future__ import annotations

import numpy as np

from arena.engine._jit import helper, inline, kernel, stack_int64
from arena.engine.cards import CARD_VALUES, NUM_RANKS, SPADES, lsb, mask_value
from arena.engine.layout import (
    DECLARED_END,
    DECLARED_RUNS,
    DECLARED_SETS,
    ERR_BAD_CHOICE,
    ERR_NONE,
    ERR_NOT_IN_HAND,
    ERR_RETAKE,
    ERR_WRONG_PHASE,
    G_CAPPED,
    G_DEAD,
    G_DISCARDS,
    G_ERROR,
    G_ERROR_ACTION,
    G_ERROR_KIND,
    G_FIRST_DEALER,
    G_FORFEIT,
    G_HANDS,
    G_KNOCK_DEADWOOD,
    G_NONDEALER_WINS,
    G_PICKUPS,
    G_SCORE,
    G_TURNS,
    G_WINNER,
    G_WINS_BY,
    H_DEADWOOD,
    H_DEALER,
    H_GAME,
    H_HAND_NO,
    H_KNOCK_LIMIT,
    H_KNOCKER,
    H_LAID_OFF,
    H_LOG_LEN,
    H_LOG_START,
    H_MULT,
    H_OUTCOME,
    H_PICKUPS,
    H_POINTS,
    H_SCORE,
    H_STOCK_LEFT,
    H_TURNS,
    H_UPCARD,
    H_UPCARD_TAKER,
    LOG_KIND,
    LOG_SEAT,
    NEXT_DEALER_LOSER,
    NEXT_DEALER_WINNER,
    OUT_BIG_GIN,
    OUT_CAPPED,
    OUT_DEAD,
    OUT_FORFEIT,
    OUT_GIN,
    OUT_KNOCK,
    OUT_NONE,
    OUT_UNDERCUT,
    PH_BIG_GIN,
    PH_DISCARD,
    PH_DONE,
    PH_DRAW,
    PH_KNOCK,
    PH_UPCARD_DEALER,
    PH_UPCARD_NONDEALER,
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
    S_CUR,
    S_DEADWOOD,
    S_DEALER,
    S_DECK,
    S_DEF_RUNS,
    S_DEF_SETS,
    S_DISCARDED,
    S_ERROR,
    S_ERROR_ACTION,
    S_ERROR_KIND,
    S_ERROR_SEAT,
    S_HAND,
    S_HAND_NO,
    S_JUST_TAKEN,
    S_KNOCK_LIMIT,
    S_KNOCK_RUNS,
    S_KNOCK_SETS,
    S_KNOCKER,
    S_LAID_OFF,
    S_MULT,
    S_NDISCARDS,
    S_OUTCOME,
    S_PASSED,
    S_PHASE,
    S_PICKUPS,
    S_PILE,
    S_PILE_N,
    S_POINTS,
    S_SCORE,
    S_SHOWN,
    S_SHOWN_DEADWOOD,
    S_SHOWN_DEF_RUNS,
    S_SHOWN_DEF_SETS,
    S_SHOWN_HAND,
    S_SHOWN_KNOCK_RUNS,
    S_SHOWN_KNOCK_SETS,
    S_SHOWN_KNOCKER,
    S_SHOWN_LAID_OFF,
    S_SHOWN_OUTCOME,
    S_SHOWN_POINTS,
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
    V_SHOWN,
    V_SHOWN_DEF_RUNS,
    V_SHOWN_DEF_SETS,
    V_SHOWN_KNOCK_RUNS,
    V_SHOWN_KNOCK_SETS,
    V_SHOWN_KNOCKER,
    V_SHOWN_LAID_OFF,
    V_SHOWN_MY_DEADWOOD,
    V_SHOWN_MY_HAND,
    V_SHOWN_MY_POINTS,
    V_SHOWN_OPP_DEADWOOD,
    V_SHOWN_OPP_HAND,
    V_SHOWN_OPP_POINTS,
    V_SHOWN_OUTCOME,
    V_STOCK_N,
    V_TOP,
    V_TURN,
    V_UPCARD,
)
from arena.engine.melds import best_arrangement, deadwood_at_most, defender_deadwood
from arena.engine.rng import STREAM_FIRST_DEALER, STREAM_HAND, bot_seed, mix_seed, seed_rng, shuffle

DECK_SIZE = 52
HAND_SIZE = 10
#: The stock size at which a discard without a knock ends the hand (RULES step 4).
DEAD_STOCK = 2


@kernel
def stock_count(st) -> int:
    return DECK_SIZE - st[S_STOCK_POS]


@kernel
def pile_mask(st) -> int:
    """Cards in the discard pile, as a mask."""
    m = 0
    for i in range(st[S_PILE_N]):
        m |= np.int64(1) << st[S_PILE + i]
    return m


@kernel
def deal_hand(st, rules, hand_seed, rng) -> None:
    """Shuffle with ``hand_seed``, deal, turn the upcard; ``S_DEALER`` is set.

    ``rng`` is a scratch generator state (4 words).  Scores, the dealer and
    the hand number are kept; every per-hand slot is reset.
    """
    # Shuffled on the stack, then copied: the compiler then knows the deck
    # and the generator apart and keeps the generator's words in registers
    # (shuffling st's slots, it stored and reloaded them at every step).
    deck = stack_int64(DECK_SIZE)
    for i in range(DECK_SIZE):
        deck[i] = i
    seed_rng(rng, hand_seed)
    shuffle(deck, rng)
    for i in range(DECK_SIZE):
        st[S_DECK + i] = deck[i]
    deal_from_deck(st, rules)


@kernel
def deal_from_deck(st, rules) -> None:
    """Deal the deck already in ``S_DECK`` (scripted tests set it directly)."""
    deck = st[S_DECK : S_DECK + DECK_SIZE]
    dealer = st[S_DEALER]
    nondealer = 1 - dealer
    h_nd = np.int64(0)
    h_d = np.int64(0)
    for i in range(HAND_SIZE):
        h_nd |= np.int64(1) << deck[i]
        h_d |= np.int64(1) << deck[HAND_SIZE + i]
    st[S_HAND + nondealer] = h_nd
    st[S_HAND + dealer] = h_d
    up = deck[2 * HAND_SIZE]
    st[S_UPCARD] = up
    st[S_PILE] = up
    st[S_PILE_N] = 1
    st[S_STOCK_POS] = 2 * HAND_SIZE + 1
    st[S_TURN] = 0
    st[S_JUST_TAKEN] = -1
    # The per-hand slots in three runs of the layout (loops, not one line per
    # slot: numba types and lowers every line, a cold start pays for each).
    for i in range(S_TAKEN, S_PASSED + 2):  # taken, discarded, passed (both seats)
        st[i] = 0
    for i in range(S_UPCARD_TAKER, S_KNOCKER + 1):  # upcard taker, knocker: none yet
        st[i] = -1
    st[S_OUTCOME] = OUT_NONE
    for i in range(S_DEADWOOD, S_ERROR + 1):  # deadwood, points, pickups, layoffs, melds, error
        st[i] = 0
    for i in range(S_NDISCARDS, S_NDISCARDS + 2):
        st[i] = 0
    if rules[R_OKLAHOMA]:
        # Oklahoma: the upcard's value is the limit (an Ace means gin only),
        # and a spade upcard doubles every point of the hand.
        limit = 0 if up % NUM_RANKS == 0 else CARD_VALUES[up]
        st[S_KNOCK_LIMIT] = min(limit, rules[R_KNOCK_LIMIT])
        st[S_MULT] = 2 if up // NUM_RANKS == SPADES else 1
    else:
        st[S_KNOCK_LIMIT] = rules[R_KNOCK_LIMIT]
        st[S_MULT] = 1
    st[S_PHASE] = PH_UPCARD_NONDEALER
    st[S_CUR] = nondealer


@inline
def _draw_stock(st, p) -> None:
    c = st[S_DECK + st[S_STOCK_POS]]
    st[S_STOCK_POS] += 1
    st[S_HAND + p] |= np.int64(1) << c
    st[S_JUST_TAKEN] = -1


@inline
def _take_pile(st, p) -> None:
    n = st[S_PILE_N] - 1
    c = st[S_PILE + n]
    st[S_PILE_N] = n
    bit = np.int64(1) << c
    st[S_HAND + p] |= bit
    st[S_TAKEN + p] |= bit
    st[S_JUST_TAKEN] = c


@inline
def _after_draw(st, rules) -> None:
    """After a normal draw: offer big gin when all 11 cards meld, else discard."""
    if rules[R_BIG_GIN] and deadwood_at_most(st[S_HAND + st[S_CUR]], np.int64(0)):
        st[S_PHASE] = PH_BIG_GIN
    else:
        st[S_PHASE] = PH_DISCARD


@inline
def _end_turn(st, rules) -> None:
    """A discard without a knock: dead hand, turn cap, or the other seat draws."""
    if stock_count(st) <= DEAD_STOCK:
        st[S_OUTCOME] = OUT_DEAD
        st[S_PHASE] = PH_DONE
    elif st[S_TURN] >= rules[R_TURN_CAP]:
        st[S_OUTCOME] = OUT_CAPPED
        st[S_PHASE] = PH_DONE
    else:
        st[S_CUR] = 1 - st[S_CUR]
        st[S_JUST_TAKEN] = -1
        st[S_PHASE] = PH_DRAW


@helper
def _showdown(st, rules, big_gin) -> None:
    """Lay out, lay off and score a knock, a gin or a big gin by ``S_CUR``."""
    k = st[S_CUR]
    d = 1 - k
    hk = st[S_HAND + k]
    hd = st[S_HAND + d]
    # The knocker's tie-break among equal arrangements looks at the layoff
    # spots it cannot rule out: cards neither in its hand nor in the pile.
    ksets, kruns, kdw = best_arrangement(hk, hk | pile_mask(st))
    if kdw == 0:
        # Gin and big gin: no layoffs, no undercut.
        dsets, druns, ddw = best_arrangement(hd, np.int64(0))  # int64: one compiled copy
        laid = np.int64(0)
    else:
        ddw, laid, dsets, druns = defender_deadwood(hd, ksets, kruns)
    score_showdown(st, rules, big_gin, ksets, kruns, kdw, dsets, druns, ddw, laid)


@kernel
def score_showdown(st, rules, big_gin, ksets, kruns, kdw, dsets, druns, ddw, laid) -> None:
    """Score a showdown by ``S_CUR`` from its arrangements: the one place the
    scoring rules live, for the automatic showdown and a person's own
    (:mod:`arena.engine.showdown`).  ``kdw`` 0 is a gin (or big gin with
    ``big_gin``): no layoffs, no undercut; otherwise the defender's ``laid``
    cards are laid off and a defender at or under the knocker's deadwood
    (under, unless ties undercut) undercuts."""
    k = st[S_CUR]
    d = 1 - k
    st[S_KNOCKER] = k
    st[S_KNOCK_SETS] = ksets
    st[S_KNOCK_RUNS] = kruns
    mult = st[S_MULT]
    if kdw == 0:
        bonus = rules[R_BIG_GIN_BONUS] if big_gin else rules[R_GIN_BONUS]
        st[S_OUTCOME] = OUT_BIG_GIN if big_gin else OUT_GIN
        st[S_POINTS + k] = mult * (ddw + bonus)
    else:
        st[S_LAID_OFF] = laid
        if ddw < kdw or (ddw == kdw and rules[R_UNDERCUT_ON_TIE]):
            st[S_OUTCOME] = OUT_UNDERCUT
            st[S_POINTS + d] = mult * (kdw - ddw + rules[R_UNDERCUT_BONUS])
        else:
            st[S_OUTCOME] = OUT_KNOCK
            st[S_POINTS + k] = mult * (ddw - kdw)
    st[S_DEF_SETS] = dsets
    st[S_DEF_RUNS] = druns
    st[S_DEADWOOD + k] = kdw
    st[S_DEADWOOD + d] = ddw
    st[S_PHASE] = PH_DONE


# --- legality: the one place that says which answers a decision takes ------------------


@inline
def answer_mask(phase, hand, just_taken, no_retake, pile_n) -> int:
    """The legal answers to decision ``phase`` as a mask (bit ``a`` set: ``a`` is legal).

    A discard takes a card of ``hand``, minus the card just taken from the
    pile under the no-retake rule; the draw takes 0 (stock) or 1 (pile, when
    it holds a card); the other decisions 0 (no) or 1 (yes); a finished hand
    takes nothing.  Scalars in, so the state (:func:`legal_answers`) and a
    seat's view (:func:`view_legal_answers`) ask the same rules.
    """
    if phase == PH_DONE:
        return 0
    if phase == PH_DISCARD:
        if no_retake and just_taken >= 0:
            return hand & ~(np.int64(1) << just_taken)
        return hand
    if phase == PH_DRAW and pile_n <= 0:
        return 1
    return 3


@kernel
def legal_answers(st, rules) -> int:
    """The answers :func:`apply_action` accepts now from the seat to act, as a mask."""
    p = st[S_CUR]
    return answer_mask(st[S_PHASE], st[S_HAND + p], st[S_JUST_TAKEN], rules[R_NO_RETAKE], st[S_PILE_N])


@kernel
def view_legal_answers(view) -> int:
    """:func:`legal_answers` from a seat's view (for the seat the view's decision asks)."""
    return answer_mask(view[V_DECISION], view[V_HAND], view[V_JUST_TAKEN], view[V_RULES + R_NO_RETAKE], view[V_PILE_N])


@inline
def answer_error(phase, hand, just_taken, no_retake, pile_n, answer) -> int:
    """``ERR_NONE`` when :func:`answer_mask` holds ``answer``, else the ``ERR_*`` saying why not."""
    if 0 <= answer < DECK_SIZE and (answer_mask(phase, hand, just_taken, no_retake, pile_n) >> answer) & 1:
        return ERR_NONE
    if phase == PH_DONE:
        return ERR_WRONG_PHASE
    if phase == PH_DISCARD:
        if 0 <= answer < DECK_SIZE and (hand >> answer) & 1:
            return ERR_RETAKE
        return ERR_NOT_IN_HAND
    return ERR_BAD_CHOICE


@kernel
def illegal_reason(st, rules, answer) -> int:
    """What :func:`apply_action` would say of ``answer`` now: ``ERR_NONE`` (legal) or an ``ERR_*``."""
    p = st[S_CUR]
    return answer_error(st[S_PHASE], st[S_HAND + p], st[S_JUST_TAKEN], rules[R_NO_RETAKE], st[S_PILE_N], answer)


@kernel
def view_illegal_reason(view, answer) -> int:
    """:func:`illegal_reason` from a seat's view (the decision its view asks)."""
    return answer_error(
        view[V_DECISION], view[V_HAND], view[V_JUST_TAKEN], view[V_RULES + R_NO_RETAKE], view[V_PILE_N], answer
    )


@inline
def _reject(st, err, action) -> int:
    st[S_ERROR] = err
    st[S_ERROR_SEAT] = st[S_CUR]
    st[S_ERROR_KIND] = st[S_PHASE]
    st[S_ERROR_ACTION] = action
    return err


@kernel
def apply_action(st, rules, action) -> int:
    """Apply the decision ``action`` of the seat to act; return an ``ERR_*``.

    Yes/no decisions (upcard, big gin, knock) and the draw (0 stock, 1 pile)
    take 0 or 1; a discard takes a card number (:func:`legal_answers` says
    which).  An illegal action changes
    nothing but the ``S_ERROR*`` slots, which name the seat, decision and
    answer.
    """
    phase = st[S_PHASE]
    p = st[S_CUR]
    # Check first, in one place: one call of _reject with a variable code and
    # one of _showdown below keep numba from compiling a copy per constant.
    # Legality is the query's (illegal_reason, legal_answers: one answer_mask), not a copy of it.
    err = illegal_reason(st, rules, action)
    if err != ERR_NONE:
        return _reject(st, err, action)
    # Each inline helper below is written once (numba copies its body into
    # every call site, and each copy is typed and compiled again): the
    # branches set what to do, and it is done once at the end.
    end_turn = False
    if phase == PH_DISCARD:
        bit = np.int64(1) << action
        st[S_HAND + p] ^= bit
        st[S_PILE + st[S_PILE_N]] = action
        st[S_PILE_N] += 1
        st[S_DISCARDED + p] |= bit
        st[S_NDISCARDS + p] += 1
        st[S_TURN] += 1
        if deadwood_at_most(st[S_HAND + p], st[S_KNOCK_LIMIT]):
            st[S_PHASE] = PH_KNOCK
        else:
            end_turn = True
    elif phase == PH_BIG_GIN or phase == PH_KNOCK:
        if action == 1:
            _showdown(st, rules, phase == PH_BIG_GIN)
        elif phase == PH_BIG_GIN:
            st[S_PHASE] = PH_DISCARD
        else:
            end_turn = True
    elif phase == PH_DRAW or phase == PH_UPCARD_NONDEALER or phase == PH_UPCARD_DEALER:
        # The upcard offers and the draw: a card moves to a hand (or the
        # non-dealer passes the upcard to the dealer and nothing moves).
        drawer = p
        if phase != PH_DRAW and action == 0:
            st[S_PASSED + p] |= np.int64(1) << st[S_UPCARD]
            st[S_CUR] = 1 - p
            if phase == PH_UPCARD_NONDEALER:
                st[S_PHASE] = PH_UPCARD_DEALER
                return ERR_NONE
            # Both passed: the non-dealer opens with a draw from the stock.
            drawer = 1 - p
        if action == 1:
            _take_pile(st, p)
        else:
            _draw_stock(st, drawer)
        if phase != PH_DRAW and action == 1:
            st[S_UPCARD_TAKER] = p
            st[S_PHASE] = PH_DISCARD
        else:
            if phase == PH_DRAW and action == 1:
                st[S_PICKUPS + p] += 1  # took the opponent's discard (the upcard is not counted)
            _after_draw(st, rules)
    if end_turn:
        _end_turn(st, rules)
    return ERR_NONE


#: The view slots that are plain copies of a state slot: (view slot, state
#: slot for seat 0, state slot for seat 1), one loop in build_view instead of
#: a line each (each line costs compile time).  The first VIEW_MOVING rows
#: are the slots a hand's actions change (arena.engine.play refreshes just
#: those before each decision); the rest are fixed for the hand.
VIEW_COPIES = np.array(
    [
        (V_HAND, S_HAND, S_HAND + 1),
        (V_PILE_N, S_PILE_N, S_PILE_N),
        (V_OPP_TAKEN, S_TAKEN + 1, S_TAKEN),
        (V_OPP_DISCARDED, S_DISCARDED + 1, S_DISCARDED),
        (V_OPP_PASSED, S_PASSED + 1, S_PASSED),
        (V_MY_TAKEN, S_TAKEN, S_TAKEN + 1),
        (V_MY_DISCARDED, S_DISCARDED, S_DISCARDED + 1),
        (V_MY_PASSED, S_PASSED, S_PASSED + 1),
        (V_TURN, S_TURN, S_TURN),
        (V_DECISION, S_PHASE, S_PHASE),
        (V_MY_SCORE, S_SCORE, S_SCORE + 1),
        (V_OPP_SCORE, S_SCORE + 1, S_SCORE),
        (V_KNOCK_LIMIT, S_KNOCK_LIMIT, S_KNOCK_LIMIT),
        (V_MULT, S_MULT, S_MULT),
        (V_HAND_NO, S_HAND_NO, S_HAND_NO),
        (V_UPCARD, S_UPCARD, S_UPCARD),
        # What the table showed at the end of the last hand (kept_shown writes these state slots).
        (V_SHOWN, S_SHOWN, S_SHOWN),
        (V_SHOWN_OUTCOME, S_SHOWN_OUTCOME, S_SHOWN_OUTCOME),
        (V_SHOWN_KNOCKER, S_SHOWN_KNOCKER, S_SHOWN_KNOCKER),
        (V_SHOWN_MY_HAND, S_SHOWN_HAND, S_SHOWN_HAND + 1),
        (V_SHOWN_OPP_HAND, S_SHOWN_HAND + 1, S_SHOWN_HAND),
        (V_SHOWN_KNOCK_SETS, S_SHOWN_KNOCK_SETS, S_SHOWN_KNOCK_SETS),
        (V_SHOWN_KNOCK_RUNS, S_SHOWN_KNOCK_RUNS, S_SHOWN_KNOCK_RUNS),
        (V_SHOWN_LAID_OFF, S_SHOWN_LAID_OFF, S_SHOWN_LAID_OFF),
        (V_SHOWN_DEF_SETS, S_SHOWN_DEF_SETS, S_SHOWN_DEF_SETS),
        (V_SHOWN_DEF_RUNS, S_SHOWN_DEF_RUNS, S_SHOWN_DEF_RUNS),
        (V_SHOWN_MY_POINTS, S_SHOWN_POINTS, S_SHOWN_POINTS + 1),
        (V_SHOWN_OPP_POINTS, S_SHOWN_POINTS + 1, S_SHOWN_POINTS),
        (V_SHOWN_MY_DEADWOOD, S_SHOWN_DEADWOOD, S_SHOWN_DEADWOOD + 1),
        (V_SHOWN_OPP_DEADWOOD, S_SHOWN_DEADWOOD + 1, S_SHOWN_DEADWOOD),
    ],
    dtype=np.int64,
)
VIEW_MOVING = 10


@kernel
def refresh_view(st, p, view) -> None:
    """Write the slots of seat ``p``'s view that a hand's actions change.

    Its hand, the pile and stock counts, what each player took, discarded
    and passed, the turn and the decision (the first ``VIEW_MOVING`` rows of
    ``VIEW_COPIES``), the top card and the card just taken.  The rest is
    fixed for the hand (:func:`build_view` writes it), except the pile,
    which the drivers mirror card by card (:func:`mirror_pile`).  Reads
    only ``st``, never the view.
    """
    for i in range(VIEW_MOVING):
        view[VIEW_COPIES[i, 0]] = st[VIEW_COPIES[i, 1 + p]]
    n = st[S_PILE_N]
    view[V_STOCK_N] = stock_count(st)
    view[V_TOP] = st[S_PILE + n - 1] if n > 0 else -1
    view[V_JUST_TAKEN] = st[S_JUST_TAKEN] if st[S_CUR] == p else -1


@kernel
def mirror_pile(st, n, view0, view1) -> int:
    """Copy into both seats' views the pile card the last action moved; return the pile's new length.

    ``n`` is the pile length both views show.  An action moves at most one
    pile card: a discard pushes one, a draw from the pile pops one, so the
    drivers that keep views between decisions (:func:`arena.engine.play.play_hand`,
    :func:`arena.engine.lockstep.lockstep_kernel`) need not rebuild them.
    """
    m = st[S_PILE_N]
    if m > n:
        card = st[S_PILE + n]
        view0[V_PILE + n] = card
        view1[V_PILE + n] = card
    elif m < n:
        view0[V_PILE + m] = -1
        view1[V_PILE + m] = -1
    return m


@kernel
def score_declared(st, rules, knock_sets, knock_runs) -> None:
    """Score the knock that ended the hand in ``st`` (``PH_DONE``, ``S_CUR`` the knocker) again, with the
    knocker's declared melds, which the caller has checked (:func:`arena.engine.showdown.declared_showdown`;
    a replay applies what was checked when the game was played).  The defender lays off and melds at its
    best against them, as against the automatic ones, and :func:`score_showdown` scores it."""
    k = st[S_CUR]
    hd = st[S_HAND + 1 - k]
    big_gin = st[S_OUTCOME] == OUT_BIG_GIN
    kdw = mask_value(st[S_HAND + k] & ~(knock_sets | knock_runs))
    if kdw == 0:
        dsets, druns, ddw = best_arrangement(hd, np.int64(0))
        laid = np.int64(0)
    else:
        ddw, laid, dsets, druns = defender_deadwood(hd, knock_sets, knock_runs)
    st[S_POINTS] = 0
    st[S_POINTS + 1] = 0
    st[S_LAID_OFF] = 0
    st[S_DEF_SETS] = 0
    st[S_DEF_RUNS] = 0
    score_showdown(st, rules, big_gin, knock_sets, knock_runs, kdw, dsets, druns, ddw, laid)


@kernel
def write_declared(log, n, seat, knock_sets, knock_runs) -> int:
    """Log a knocker's declared melds at ``log[n:]`` (the ``DECLARED_*`` entries); the next free place,
    or -1 when the log has no room for them."""
    if n + 15 > log.shape[0]:  # at most 11 cards and 3 markers
        return -1
    log[n] = log_entry(seat, PH_DONE, DECLARED_SETS)
    n += 1
    for part in range(2):
        left = knock_sets if part == 0 else knock_runs
        while left:
            log[n] = log_entry(seat, PH_DONE, lsb(left))
            n += 1
            left &= left - 1
        log[n] = log_entry(seat, PH_DONE, DECLARED_RUNS if part == 0 else DECLARED_END)
        n += 1
    return n


@kernel
def read_declared(log, pos):
    """``(sets, runs, next place)`` of declared melds logged at ``log[pos:]`` (log entries or the answers
    the store keeps: each is read modulo ``LOG_KIND``); next place -1 when none begins there or they are
    cut short."""
    if pos >= log.shape[0] or log[pos] % LOG_KIND != DECLARED_SETS:
        return np.int64(0), np.int64(0), np.int64(-1)
    sets = np.int64(0)
    runs = np.int64(0)
    part = 0
    i = pos + 1
    while i < log.shape[0] and i <= pos + 15:
        a = log[i] % LOG_KIND
        i += 1
        if a < 52 and part == 0:
            sets |= np.int64(1) << a
        elif a < 52:
            runs |= np.int64(1) << a
        elif a == DECLARED_RUNS and part == 0:
            part = 1
        elif a == DECLARED_END and part == 1:
            return sets, runs, np.int64(i)
        else:
            break
    return np.int64(0), np.int64(0), np.int64(-1)


@kernel
def log_entry(seat, phase, action) -> int:
    """One decision in the compact action log (``LOG_SEAT``, ``LOG_KIND``): the one writer of its
    format, :func:`arena.engine.replay.decode` the reader."""
    return seat * LOG_SEAT + phase * LOG_KIND + action


@kernel
def build_view(st, rules, p, view) -> None:
    """Fill ``view`` with what seat ``p`` sees at the table, and nothing else.

    Its own hand, the pile in order, the stock count, what each player took
    from the pile, discarded or passed, the scores, the rules and this hand's
    knock limit.  The opponent's hand and the stock order are never copied.
    """
    refresh_view(st, p, view)
    for i in range(VIEW_MOVING, VIEW_COPIES.shape[0]):
        view[VIEW_COPIES[i, 0]] = st[VIEW_COPIES[i, 1 + p]]
    n = st[S_PILE_N]
    view[V_IS_DEALER] = 1 if st[S_DEALER] == p else 0
    view[V_SEAT] = p
    for i in range(V_UPCARD + 1, V_RULES):  # spare slots: always 0
        view[i] = 0
    for i in range(R_SIZE):
        view[V_RULES + i] = rules[i]
    # No stale cards past the top: the view is exactly the table.  One
    # fixed-length loop without branches (the compiler vectorises it).
    for i in range(DECK_SIZE):
        view[V_PILE + i] = st[S_PILE + i] if i < n else -1


# --- the game around the hands ------------------------------------------------------


@kernel
def begin_game(st, rules, seed, rng0, rng1, mem0, mem1, game_row) -> None:
    """Reset for a new game: scores, a seeded first dealer, each bot's generator.

    Bots' memories are zeroed so that a game depends on its seed alone, not on
    the games a worker happened to play before it.
    """
    st[:] = 0
    # The stream and seat numbers as int64 values, not constants: numba would
    # compile a copy of mix_seed and bot_seed for each constant.
    st[S_DEALER] = np.int64(mix_seed(seed, np.int64(STREAM_FIRST_DEALER)) & np.uint64(1))
    seed_rng(rng0, bot_seed(seed, np.int64(0)))  # one-way: a bot's state can't be traced back to the deal
    seed_rng(rng1, bot_seed(seed, np.int64(1)))
    mem0[:] = 0.0
    mem1[:] = 0.0
    game_row[:] = 0
    game_row[G_FIRST_DEALER] = st[S_DEALER]
    game_row[G_WINNER] = -1
    game_row[G_FORFEIT] = -1


@kernel
def begin_hand(st, rules, seed, rng) -> None:
    """Deal hand number ``S_HAND_NO`` of the game seeded ``seed``."""
    deal_hand(st, rules, mix_seed(seed, STREAM_HAND + st[S_HAND_NO]), rng)


@inline
def hand_winner(st) -> int:
    """Seat that won the hand (-1 for dead, capped or unfinished hands)."""
    out = st[S_OUTCOME]
    if out == OUT_UNDERCUT:
        return 1 - st[S_KNOCKER]
    if out == OUT_KNOCK or out == OUT_GIN or out == OUT_BIG_GIN:
        return st[S_KNOCKER]
    return -1


@kernel
def winner_of_hand(st) -> int:
    """:func:`hand_winner` for Python callers (the env adapters): an inline helper has no Python entry,
    and calling one from Python crashes the interpreter."""
    return hand_winner(st)


#: Hand-row slots copied straight from the state: (row slot, state slot) pairs,
#: one loop in write_hand_row instead of a line each (each line costs compile time).
_ROW_COPIES = np.array(
    [
        (H_HAND_NO, S_HAND_NO),
        (H_DEALER, S_DEALER),
        (H_OUTCOME, S_OUTCOME),
        (H_KNOCKER, S_KNOCKER),
        (H_TURNS, S_TURN),
        (H_UPCARD_TAKER, S_UPCARD_TAKER),
        (H_KNOCK_LIMIT, S_KNOCK_LIMIT),
        (H_MULT, S_MULT),
        (H_UPCARD, S_UPCARD),
        (H_LAID_OFF, S_LAID_OFF),
        (H_DEADWOOD, S_DEADWOOD),
        (H_DEADWOOD + 1, S_DEADWOOD + 1),
        (H_POINTS, S_POINTS),
        (H_POINTS + 1, S_POINTS + 1),
        (H_PICKUPS, S_PICKUPS),
        (H_PICKUPS + 1, S_PICKUPS + 1),
    ],
    dtype=np.int64,
)


@kernel
def write_hand_row(st, game_index, row, log_start, log_len) -> None:
    for i in range(_ROW_COPIES.shape[0]):
        row[_ROW_COPIES[i, 0]] = st[_ROW_COPIES[i, 1]]
    row[H_GAME] = game_index
    row[H_STOCK_LEFT] = stock_count(st)
    row[H_LOG_START] = log_start
    row[H_LOG_LEN] = log_len
    for p in range(2):
        row[H_SCORE + p] = st[S_SCORE + p] + st[S_POINTS + p]


#: What the table shows at a hand's end: (kept slot, showdown slot) pairs that keep_shown copies.
_SHOWN_COPIES = np.array(
    [
        (S_SHOWN_OUTCOME, S_OUTCOME),
        (S_SHOWN_KNOCKER, S_KNOCKER),
        (S_SHOWN_HAND, S_HAND),
        (S_SHOWN_HAND + 1, S_HAND + 1),
        (S_SHOWN_KNOCK_SETS, S_KNOCK_SETS),
        (S_SHOWN_KNOCK_RUNS, S_KNOCK_RUNS),
        (S_SHOWN_LAID_OFF, S_LAID_OFF),
        (S_SHOWN_DEF_SETS, S_DEF_SETS),
        (S_SHOWN_DEF_RUNS, S_DEF_RUNS),
        (S_SHOWN_POINTS, S_POINTS),
        (S_SHOWN_POINTS + 1, S_POINTS + 1),
        (S_SHOWN_DEADWOOD, S_DEADWOOD),
        (S_SHOWN_DEADWOOD + 1, S_DEADWOOD + 1),
    ],
    dtype=np.int64,
)


@kernel
def keep_shown(st) -> None:
    """Keep what the table shows at the end of the hand in ``st`` for the bots' next views.

    Both final hands are shown at every hand's end, dead and capped hands included, as the
    EAAI kit shows them (``reportFinalHand``); the melds, layoffs, points and deadwood are
    those of the showdown (zero without one).  Nothing here is seen before the hand is over.
    """
    st[S_SHOWN] = st[S_HAND_NO] + 1
    for i in range(_SHOWN_COPIES.shape[0]):
        st[_SHOWN_COPIES[i, 0]] = st[_SHOWN_COPIES[i, 1]]


@kernel
def end_hand(st, rules, game_row) -> bool:
    """Book a finished hand into the game; return True when the game is over.

    Adds the points, counts the outcome, checks the target and the hand cap,
    and picks the next dealer: the same dealer after a dead or capped hand,
    otherwise by the ``next_dealer`` rule.
    """
    keep_shown(st)
    out = st[S_OUTCOME]
    game_row[G_TURNS] += st[S_TURN]
    game_row[G_HANDS] += 1
    for p in range(2):
        st[S_SCORE + p] += st[S_POINTS + p]
        game_row[G_SCORE + p] = st[S_SCORE + p]
        game_row[G_PICKUPS + p] += st[S_PICKUPS + p]
        game_row[G_DISCARDS + p] += st[S_NDISCARDS + p]
    winner = hand_winner(st)
    if out == OUT_DEAD:
        game_row[G_DEAD] += 1
    elif out == OUT_CAPPED:
        game_row[G_CAPPED] += 1
    elif winner >= 0:
        game_row[G_WINS_BY + 4 * winner + out] += 1
        game_row[G_KNOCK_DEADWOOD + st[S_KNOCKER]] += st[S_DEADWOOD + st[S_KNOCKER]]
        if winner != st[S_DEALER]:
            game_row[G_NONDEALER_WINS] += 1
        rule = rules[R_NEXT_DEALER]
        if rule == NEXT_DEALER_WINNER:
            st[S_DEALER] = winner
        elif rule == NEXT_DEALER_LOSER:
            st[S_DEALER] = 1 - winner
        else:
            st[S_DEALER] = 1 - st[S_DEALER]
    st[S_HAND_NO] += 1
    for p in range(2):
        if st[S_SCORE + p] >= rules[R_TARGET]:
            game_row[G_WINNER] = p
            return True
    return st[S_HAND_NO] >= rules[R_HAND_CAP]


@kernel
def forfeit_game(st, game_row) -> None:
    """End the game: the seat whose action was rejected loses by forfeit."""
    seat = st[S_ERROR_SEAT]
    st[S_OUTCOME] = OUT_FORFEIT
    st[S_PHASE] = PH_DONE
    game_row[G_FORFEIT] = seat
    game_row[G_WINNER] = 1 - seat
    game_row[G_ERROR] = st[S_ERROR]
    game_row[G_ERROR_KIND] = st[S_ERROR_KIND]
    game_row[G_ERROR_ACTION] = st[S_ERROR_ACTION]
    game_row[G_HANDS] += 1
    game_row[G_TURNS] += st[S_TURN]


def new_state() -> np.ndarray:
    return np.zeros(S_SIZE, dtype=np.int64)
