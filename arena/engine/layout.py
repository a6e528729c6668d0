"""Array layouts shared by the kernels: rules, game state, a player's view.

Kernels see only int64 arrays and scalars, so each record the engine passes
around is a flat array with named slots.  This module is the single place
where those slots are numbered; Python code and kernels import the names
instead of writing numbers.
"""

from __future__ import annotations

# --- rules array (packed by arena.engine.rules_array.rules_array) -----------------------
R_KNOCK_LIMIT = 0  # 0..10; 0 = gin only
R_GIN_BONUS = 1
R_BIG_GIN = 2  # 1 = big gin allowed
R_BIG_GIN_BONUS = 3
R_UNDERCUT_BONUS = 4
R_UNDERCUT_ON_TIE = 5  # 1 = equal deadwood is an undercut
R_TARGET = 6
R_NEXT_DEALER = 7  # one of NEXT_DEALER_*
R_NO_RETAKE = 8  # 1 = the card just taken from the pile may not be discarded
R_OKLAHOMA = 9
R_TURN_CAP = 10  # turns in one hand before it is ended as capped
R_HAND_CAP = 11  # hands in one game before it is ended without a winner
R_SIZE = 12

NEXT_DEALER_ALTERNATE = 0
NEXT_DEALER_WINNER = 1
NEXT_DEALER_LOSER = 2

# --- phases: what the engine waits for -------------------------------------
# The first six are also the decision kinds a bot is asked.
PH_UPCARD_NONDEALER = 0  # non-dealer: take the upcard? (bot.take_upcard)
PH_UPCARD_DEALER = 1  # dealer, after the non-dealer passed (bot.take_upcard)
PH_DRAW = 2  # stock (0) or discard pile (1)? (bot.draw)
PH_BIG_GIN = 3  # 11 cards all melded: declare big gin? (bot.big_gin)
PH_DISCARD = 4  # which card (bot.discard)
PH_KNOCK = 5  # deadwood <= limit after discarding: knock? (bot.knock)
PH_DONE = 6  # hand over; outcome and points are filled in
NUM_DECISIONS = 6

# --- hand outcomes ------------------------------------------------------------
OUT_NONE = -1
OUT_KNOCK = 0  # knocker had less deadwood
OUT_UNDERCUT = 1  # defender's deadwood <= knocker's (or < with the option off)
OUT_GIN = 2
OUT_BIG_GIN = 3
OUT_DEAD = 4  # stock down to 2 cards without a knock
OUT_CAPPED = 5  # turn cap reached (engine safety; see R_TURN_CAP)
OUT_FORFEIT = 6  # a bot made an illegal decision
OUTCOME_NAMES = ("knock", "undercut", "gin", "big_gin", "dead", "capped", "forfeit")
#: The outcomes a hand is won by, and their names (the ``<kind>_wins<seat>`` columns).
WIN_OUTCOMES = (OUT_KNOCK, OUT_UNDERCUT, OUT_GIN, OUT_BIG_GIN)
WIN_KINDS = tuple(OUTCOME_NAMES[o] for o in WIN_OUTCOMES)

# --- game state -----------------------------------------------------------------
S_HAND = 0  # S_HAND + p: seat p's hand mask
S_PHASE = 2
S_CUR = 3  # seat to act
S_DEALER = 4
S_TURN = 5  # completed draws+discards this hand
S_KNOCK_LIMIT = 6  # this hand's limit (Oklahoma changes it)
S_MULT = 7  # 2 when an Oklahoma spade upcard doubles the hand
S_JUST_TAKEN = 8  # card taken from the pile this turn, -1 if none
S_STOCK_POS = 9  # index in S_DECK of the next stock card
S_PILE_N = 10
S_TAKEN = 11  # S_TAKEN + p: cards p took from the pile this hand
S_DISCARDED = 13  # S_DISCARDED + p: cards p discarded this hand
S_PASSED = 15  # S_PASSED + p: upcards p passed
S_SCORE = 17  # S_SCORE + p: game score before this hand
S_HAND_NO = 19
S_UPCARD_TAKER = 20  # -1 if both passed
S_KNOCKER = 21  # -1 if no knock
S_OUTCOME = 22
S_DEADWOOD = 23  # S_DEADWOOD + p: final deadwood (defender's after layoffs)
S_POINTS = 25  # S_POINTS + p: points scored this hand
S_PICKUPS = 27  # S_PICKUPS + p: opponent's discards taken from the pile (upcard not counted)
S_LAID_OFF = 29  # mask of cards the defender laid off
S_KNOCK_SETS = 30  # knocker's set cards (mask) at the showdown
S_KNOCK_RUNS = 31  # knocker's run cards (mask)
S_DEF_SETS = 32  # defender's own set cards
S_DEF_RUNS = 33  # defender's own run cards
S_ERROR = 34  # error code of the last rejected action (ERR_*)
S_ERROR_SEAT = 35
S_ERROR_KIND = 36
S_ERROR_ACTION = 37
S_UPCARD = 38
S_NDISCARDS = 39  # S_NDISCARDS + p: discards by seat p this hand
S_DECK = 44  # 52 cards in shuffled order: 10 each dealt, then the upcard, then stock
S_PILE = S_DECK + 52  # discard pile, bottom first
# What the table showed at the end of the last finished hand (kept through the next deal;
# end_hand writes it, build_view shows it): the hand number + 1 (0: no hand has ended yet), then
# copies of the showdown slots, by seat where a slot is per seat.
S_SHOWN = S_PILE + 52
S_SHOWN_OUTCOME = S_SHOWN + 1
S_SHOWN_KNOCKER = S_SHOWN + 2
S_SHOWN_HAND = S_SHOWN + 3  # + p: seat p's final hand
S_SHOWN_KNOCK_SETS = S_SHOWN + 5
S_SHOWN_KNOCK_RUNS = S_SHOWN + 6
S_SHOWN_LAID_OFF = S_SHOWN + 7
S_SHOWN_DEF_SETS = S_SHOWN + 8
S_SHOWN_DEF_RUNS = S_SHOWN + 9
S_SHOWN_POINTS = S_SHOWN + 10  # + p
S_SHOWN_DEADWOOD = S_SHOWN + 12  # + p
S_SIZE = S_SHOWN + 14

# --- errors -------------------------------------------------------------------
ERR_NONE = 0
ERR_BAD_CHOICE = 1  # yes/no decision not 0 or 1, or draw source not 0/1
ERR_NOT_IN_HAND = 2  # discard of a card not held
ERR_RETAKE = 3  # discard of the card just taken from the pile (no-retake rule)
ERR_WRONG_PHASE = 4  # action applied when the hand is over
ERROR_TEXT = (
    "ok",
    "answer must be 0 (no) or 1 (yes)",
    "discarded a card it does not hold",
    "discarded the card it just took from the discard pile",
    "acted after the hand was over",
)
#: What a bot in its own process did when its failure (an ``ExternalBotError``, by its reason) ended the
#: game, for the forfeit's line in place of "raised an exception": it raised nothing in the arena, and a
#: timeout read as "raised an exception in draw()".  An unknown reason "failed".
EXTERNAL_FAILURES = {
    "timeout": "timed out",
    "crashed": "crashed",
    "garbled answer": "answered badly",
    "ill-typed answer": "answered badly",
    "illegal melds": "declared illegal melds",
    "bot error": "resigned",
    "bad handshake": "failed to start",
    "no sandbox": "failed to start",
}

# --- a player's view (all a bot ever sees) ------------------------------------------
V_HAND = 0  # own hand mask
V_STOCK_N = 1  # cards left in the stock
V_PILE_N = 2  # cards in the discard pile
V_TOP = 3  # top card of the discard pile, -1 if empty
V_JUST_TAKEN = 4  # card I took from the pile this turn, -1 if none
V_OPP_TAKEN = 5  # cards the opponent took from the pile this hand
V_OPP_DISCARDED = 6  # cards the opponent discarded this hand
V_OPP_PASSED = 7  # upcards the opponent passed
V_MY_TAKEN = 8
V_MY_DISCARDED = 9
V_MY_PASSED = 10
V_MY_SCORE = 11
V_OPP_SCORE = 12
V_KNOCK_LIMIT = 13  # this hand's knock limit
V_MULT = 14  # point multiplier of this hand (Oklahoma spade upcard: 2)
V_IS_DEALER = 15
V_TURN = 16
V_HAND_NO = 17
V_SEAT = 18
V_DECISION = 19  # which PH_* decision is being asked
V_UPCARD = 20  # the hand's first upcard
V_RULES = 24  # R_SIZE slots: the rules in force
V_PILE = V_RULES + R_SIZE  # discard pile, bottom first (V_PILE_N entries)
# What the table showed at the end of the last finished hand of this game, as at a real table:
# both final hands, the knocker's melds, the defender's layoffs and melds, points and deadwood.
# Kept in the view through the whole next hand (so a bot sees it at its next decisions).
V_SHOWN = V_PILE + 52  # hand number + 1 of the hand shown (0: no hand of this game has ended yet)
V_SHOWN_OUTCOME = V_SHOWN + 1  # OUT_* of that hand
V_SHOWN_KNOCKER = V_SHOWN + 2  # seat that knocked or went gin, -1 if none (dead, capped)
V_SHOWN_MY_HAND = V_SHOWN + 3  # my final hand
V_SHOWN_OPP_HAND = V_SHOWN + 4  # the opponent's final hand
V_SHOWN_KNOCK_SETS = V_SHOWN + 5  # the knocker's set cards (mask)
V_SHOWN_KNOCK_RUNS = V_SHOWN + 6  # the knocker's run cards (mask)
V_SHOWN_LAID_OFF = V_SHOWN + 7  # cards the defender laid off
V_SHOWN_DEF_SETS = V_SHOWN + 8  # the defender's own set cards
V_SHOWN_DEF_RUNS = V_SHOWN + 9  # the defender's own run cards
V_SHOWN_MY_POINTS = V_SHOWN + 10
V_SHOWN_OPP_POINTS = V_SHOWN + 11
V_SHOWN_MY_DEADWOOD = V_SHOWN + 12  # final deadwood (the defender's after layoffs)
V_SHOWN_OPP_DEADWOOD = V_SHOWN + 13
V_SIZE = V_SHOWN + 14

# --- compact action log: one int64 per decision ------------------------------------
# entry = seat * 1024 + kind * 64 + action  (action: 0/1, or a card 0..51)
LOG_SEAT = 1024
LOG_KIND = 64
# A knocker's declared melds (a bot that answers melds(): arena.engine.contract.TableHooks), logged after
# the hand's last decision, kind PH_DONE, seat the knocker: DECLARED_SETS, the set cards, DECLARED_RUNS,
# the run cards, DECLARED_END (each an answer below LOG_KIND, as the store keeps them).  A hand scored
# with the automatic arrangement logs nothing, so its log is as it always was.
DECLARED_SETS = 60
DECLARED_RUNS = 61
DECLARED_END = 62

# --- one row per hand (int64) ------------------------------------------------------
H_GAME = 0  # index of the game in its batch
H_HAND_NO = 1
H_DEALER = 2
H_OUTCOME = 3  # OUT_*
H_KNOCKER = 4  # seat that knocked / went gin, -1 if none
H_DEADWOOD = 5  # H_DEADWOOD + p: final deadwood of seat p (defender after layoffs)
H_POINTS = 7  # H_POINTS + p: points seat p scored this hand
H_TURNS = 9
H_STOCK_LEFT = 10
H_UPCARD_TAKER = 11  # -1 if both passed
H_PICKUPS = 12  # H_PICKUPS + p: opponent's discards seat p took (upcard not counted)
H_KNOCK_LIMIT = 14
H_MULT = 15
H_SCORE = 16  # H_SCORE + p: game score after the hand
H_UPCARD = 18
H_LAID_OFF = 19  # mask of cards laid off by the defender
H_LOG_START = 20  # offset of this hand's actions in the log buffer (-1 if not logged)
H_LOG_LEN = 21
H_SIZE = 22

# --- one row per game (int64) --------------------------------------------------------
G_SCORE = 0  # G_SCORE + p: final score of seat p
G_WINNER = 2  # seat, -1 if the hand cap ended the game
G_HANDS = 3
G_FIRST_DEALER = 4
G_TURNS = 5
G_FORFEIT = 6  # seat that forfeited, -1 if none
G_ERROR = 7  # ERR_* of the forfeit
G_ERROR_KIND = 8  # PH_* decision that was illegal
G_ERROR_ACTION = 9  # the illegal answer
G_WINS_BY = 10  # G_WINS_BY + 4 * p + OUT_*: hands seat p won by knock, undercut, gin, big gin
G_DEAD = G_WINS_BY + 8  # dead hands
G_CAPPED = G_DEAD + 1  # hands ended by the turn cap
G_PICKUPS = G_CAPPED + 1  # G_PICKUPS + p: opponent's discards taken by seat p (not the upcard)
G_DISCARDS = G_PICKUPS + 2  # G_DISCARDS + p: discards by seat p
G_KNOCK_DEADWOOD = G_DISCARDS + 2  # G_KNOCK_DEADWOOD + p: total deadwood of seat p's knocks (gins count 0)
G_NONDEALER_WINS = G_KNOCK_DEADWOOD + 2  # scored hands won by the non-dealer
G_SIZE = G_NONDEALER_WINS + 1
