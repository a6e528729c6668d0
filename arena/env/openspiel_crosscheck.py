"""Cross-check ``python_gin_arena`` against OpenSpiel's own ``gin_rummy``, hand by hand.

Both games are dealt the same deck (the arena's deal for a seed, forced
through each game's chance nodes) and driven by the same random choices:
at every decision both must offer the same legal actions, both must hold
the same hands, and each hand must end with the same returns.

The rules are set to agree (:data:`AGREEING_RULES`): no big gin, a tie is
no undercut, the card just taken may be discarded again, and a turn cap
OpenSpiel's own loop guards always reach first.  Where the engines differ by
design, the step is translated and checked, or the hand is counted apart:

* **Knock order.** OpenSpiel knocks (55) before the discard, then discards
  one of the cards that keep the deadwood within the limit; the arena asks
  "knock?" after the discard that allows it.  So OpenSpiel's discard step
  must offer the arena's discards plus 55 exactly when some discard would
  bring the arena's knock question, and after 55 exactly those discards.
* **Layout and layoffs** (OpenSpiel's meld actions 56+ and its layoff
  phase): the arena lays out both hands itself, the least deadwood.  Its
  arrangement is played into OpenSpiel's actions (the knocker's melds, the
  defender's layoffs, the defender's melds, each checked legal there) and
  the returns compared.  OpenSpiel takes at most two layoffs on each end of
  a run; a longer chain is itself a run, so it is laid as a meld (same
  deadwood).
* **The wall.** With two stock cards left after a discard the arena's hand
  is dead; OpenSpiel first lets the next player knock by taking the
  discard.  The check plays OpenSpiel's pass (both return 0) and counts the
  hands where that knock was open (``wall_knock_open``).
* **OpenSpiel's loop guards** (in place of a turn cap): a hand ends drawn
  when both players in a row take the discard and throw it back
  (``os_repeat``) or at the 50th draw from the pile (``os_pile_cap``); the
  arena plays on.  Such hands are counted and not compared further.
* **Oklahoma** (``rules={"oklahoma": True}, os_params={"oklahoma": True}``):
  both take the knock limit from the upcard; a spade upcard doubles the
  arena's points only, so its returns are compared to twice OpenSpiel's.
* **Big gin**, which OpenSpiel lacks, is off; action ids 56+ mean different
  things in the two games (arena: big gin, play on; OpenSpiel: melds).

Cards: OpenSpiel orders suits s c d h, the arena c d h s, so arena card
``c`` is OpenSpiel's ``(c + 13) % 52``; OpenSpiel's player 0 (who acts
first) is the arena's non-dealer.
"""

from __future__ import annotations

import collections
import dataclasses

import numpy as np
import pyspiel

from arena.engine import actions as ids
from arena.engine.cards import NUM_RANKS
from arena.engine.layout import (
    OUTCOME_NAMES,
    PH_DISCARD,
    PH_KNOCK,
    S_CUR,
    S_DEALER,
    S_DECK,
    S_DEF_RUNS,
    S_DEF_SETS,
    S_HAND,
    S_KNOCK_RUNS,
    S_KNOCK_SETS,
    S_KNOCKER,
    S_LAID_OFF,
    S_MULT,
    S_OUTCOME,
    S_PHASE,
)
from arena.engine.melds import deadwood
from arena.engine.rng import RNG_WORDS, STREAM_FIRST_DEALER, mix_seed
from arena.engine.rules_array import rules_array
from arena.engine.step import DECK_SIZE, apply_action, begin_hand, new_state
from arena.env import openspiel_game  # noqa: F401  (registers python_gin_arena)
from arena.env.openspiel_game import DEALT, GAME_NAME, GinArenaState
from arena.settings.rules import Rules

#: Arena rules that agree with OpenSpiel's gin_rummy at its defaults (knock card 10, bonuses 25).
AGREEING_RULES = {
    "big_gin": False,
    "undercut_on_tie": False,
    "no_retake": False,
    "turn_cap": 10_000,
    "knock_limit": 10,
    "gin_bonus": 25,
    "undercut_bonus": 25,
    "oklahoma": False,
}
OS_DRAW_PILE, OS_DRAW_STOCK, OS_PASS, OS_KNOCK, OS_MELD = 52, 53, 54, 55, 56
#: How often the greedy driver discards to the least deadwood (else uniformly).
GREEDY_P = 0.8
#: How the hands of a check ended (keys of :attr:`Tally.kinds`) that are not compared to the end.
EXCLUDED = ("os_repeat", "os_pile_cap")


def os_card(card: int) -> int:
    """OpenSpiel's number of arena card ``card``."""
    return (card + NUM_RANKS) % DECK_SIZE


class Mismatch(AssertionError):
    """The two games disagreed; the message says at which step of which hand."""


@dataclasses.dataclass
class Tally:
    hands: int = 0
    steps: int = 0
    kinds: collections.Counter = dataclasses.field(default_factory=collections.Counter)
    wall_knock_open: int = 0

    @property
    def compared(self) -> int:
        return self.hands - sum(self.kinds[k] for k in EXCLUDED)


def arena_deal(seed: int) -> tuple[int, list[int]]:
    """The dealer and deck (arena card numbers, deal order) the arena deals for hand 0 of game ``seed``."""
    st = new_state()
    st[S_DEALER] = int(mix_seed(np.int64(seed), np.int64(STREAM_FIRST_DEALER)) & np.uint64(1))
    begin_hand(st, rules_array(Rules()), np.int64(seed), np.zeros(RNG_WORDS, dtype=np.uint64))
    return int(st[S_DEALER]), [int(c) for c in st[S_DECK : S_DECK + DECK_SIZE]]


class _Meldbook:
    """OpenSpiel's meld ids (its utils' table), for arena cards."""

    def __init__(self) -> None:
        utils = pyspiel.gin_rummy.GinRummyUtils(13, 4, 10)
        self.ids = {tuple(sorted(m)): i for i, m in utils.int_to_meld.items()}

    def actions(self, sets: int, runs: int) -> list[int]:
        """OpenSpiel's meld actions for the arena's set and run masks (runs longer than 5 split)."""
        out = []
        for rank in range(NUM_RANKS):
            cards = [s * NUM_RANKS + rank for s in range(4) if (sets >> (s * NUM_RANKS + rank)) & 1]
            if cards:
                out.append(self._id(cards))
        for suit in range(4):
            seg: list[int] = []
            for rank in range(NUM_RANKS + 1):
                c = suit * NUM_RANKS + rank
                if rank < NUM_RANKS and (runs >> c) & 1:
                    seg.append(c)
                    continue
                while len(seg) > 5:  # OpenSpiel's runs are 3 to 5 cards: split off threes
                    out.append(self._id(seg[:3]))
                    seg = seg[3:]
                if seg:
                    out.append(self._id(seg))
                seg = []
        return out

    def _id(self, cards: list[int]) -> int:
        key = tuple(sorted(os_card(c) for c in cards))
        if key not in self.ids:
            raise Mismatch(f"no OpenSpiel meld for {key}")
        return OS_MELD + self.ids[key]


class CrossCheck:
    """The two games under agreeing rules; :meth:`hand` checks one deal."""

    def __init__(
        self, rules: dict | None = None, os_params: dict | None = None, knock_p: float = 0.5, greedy: bool = False
    ):
        self.knock_p = knock_p
        self.greedy = greedy
        params = {**AGREEING_RULES, **(rules or {}), "episode": "hand", "reward": "points"}
        self.ga_game = pyspiel.load_game(GAME_NAME, params)
        self.os_game = pyspiel.load_game("gin_rummy", os_params or {})
        self.melds = _Meldbook()
        self.tally = Tally()

    def hand(self, dealer: int, deck: list[int], rng: np.random.Generator) -> str:
        """Play one deal in both games with random choices; return how it ended (raises Mismatch)."""
        ga: GinArenaState = self.ga_game.new_initial_state()
        os_ = self.os_game.new_initial_state()
        ga.apply_action(dealer)
        for c in deck[:DEALT]:
            ga.apply_action(c)
            os_.apply_action(os_card(c))
        os_of = {1 - dealer: 0, dealer: 1}
        nxt = DEALT
        kind = self._play(ga, os_, os_of, deck, nxt, rng)
        self.tally.hands += 1
        self.tally.kinds[kind] += 1
        return kind

    def _same_hands(self, ga, os_, os_of, where: str) -> None:
        hands = os_.hands()
        for seat in (0, 1):
            mine = sorted(os_card(c) for c in range(DECK_SIZE) if (int(ga._st[S_HAND + seat]) >> c) & 1)
            if sorted(hands[os_of[seat]]) != mine:
                raise Mismatch(f"{where}: seat {seat} holds {mine} here, {sorted(hands[os_of[seat]])} in OpenSpiel")

    def _play(self, ga, os_, os_of, deck, nxt, rng) -> str:
        step = 0
        while True:
            step += 1
            self.tally.steps += 1
            where = f"step {step}"
            if ga.is_terminal():
                return self._finish_dead(ga, os_, os_of, where)
            if ga.is_chance_node():
                if not os_.is_chance_node():  # both passed the upcard: OpenSpiel asks for the stock draw
                    if os_.legal_actions() != [OS_DRAW_STOCK]:
                        raise Mismatch(f"{where}: stock draw pending here, OpenSpiel offers {os_.legal_actions()}")
                    os_.apply_action(OS_DRAW_STOCK)
                card = deck[nxt]
                nxt += 1
                ga.apply_action(card)
                os_.apply_action(os_card(card))
                self._same_hands(ga, os_, os_of, where)
                continue
            seat = ga.current_player()
            if os_.is_terminal():
                raise Mismatch(f"{where}: OpenSpiel's hand is over, the arena's is not")
            if os_.current_player() != os_of[seat]:
                raise Mismatch(f"{where}: seat {seat} to act here, OpenSpiel player {os_.current_player()}")
            legal = ga.legal_actions()
            os_legal = sorted(os_.legal_actions())
            if int(ga._st[S_PHASE]) != PH_DISCARD:
                if os_legal != sorted(legal):
                    raise Mismatch(f"{where}: legal {legal} here, {os_legal} in OpenSpiel")
                a = int(rng.choice(legal))
                ga.apply_action(a)
                os_.apply_action(a)
                if os_.is_terminal() and not ga.is_terminal():
                    return "os_pile_cap"
                continue
            knockable = [d for d in legal if self._knock_after(ga, d)]
            want = sorted([os_card(d) for d in legal] + ([OS_KNOCK] if knockable else []))
            if os_legal != want:
                raise Mismatch(f"{where}: discard step offers {want} here (as OpenSpiel ids), {os_legal} there")
            # Random play, except that an open knock is taken with probability knock_p
            # (uniform choices knock in about 1% of hands and would leave the showdown unchecked).
            if knockable and rng.random() < self.knock_p:
                choice = OS_KNOCK
            elif self.greedy and rng.random() < GREEDY_P:
                hand = int(ga._st[S_HAND + seat])
                just = ga.records[-1].card if ga.records[-1].action == ids.A_TAKE else -1
                keep = [d for d in legal if d != just]  # throwing the card back would end OpenSpiel's hand
                left = [int(deadwood(hand & ~(1 << d))) for d in keep]
                best = [d for d, w in zip(keep, left) if w == min(left)]
                choice = os_card(int(rng.choice(best)))
            else:
                choice = int(rng.choice(os_legal))
            if choice == OS_KNOCK:
                os_.apply_action(OS_KNOCK)
                after = sorted(os_.legal_actions())
                if after != sorted(os_card(d) for d in knockable):
                    raise Mismatch(f"{where}: knock discards {sorted(map(os_card, knockable))} here, {after} there")
                d = int(rng.choice(knockable))
                ga.apply_action(d)
                ga.apply_action(ids.A_KNOCK)
                os_.apply_action(os_card(d))
                return self._showdown(ga, os_, os_of, where)
            d = next(c for c in legal if os_card(c) == choice)
            ga.apply_action(d)
            if not ga.is_terminal() and not ga.is_chance_node() and int(ga._st[S_PHASE]) == PH_KNOCK:
                ga.apply_action(ids.A_PLAY_ON)
            os_.apply_action(choice)
            if os_.is_terminal() and not ga.is_terminal():
                return "os_repeat"

    def _knock_after(self, ga, card: int) -> bool:
        st = ga._st.copy()
        apply_action(st, ga._r, card)
        return bool(int(st[S_PHASE]) == PH_KNOCK and int(st[S_CUR]) == int(ga._st[S_CUR]))

    def _finish_dead(self, ga, os_, os_of, where) -> str:
        out = OUTCOME_NAMES[int(ga._st[S_OUTCOME])]
        if out != "dead":
            raise Mismatch(f"{where}: the arena's hand ended {out} with no knock")
        if not os_.is_terminal():
            if os_.current_phase() != pyspiel.gin_rummy.Phase.WALL:
                raise Mismatch(f"{where}: dead hand here, OpenSpiel in phase {os_.current_phase()}")
            if OS_KNOCK in os_.legal_actions():
                self.tally.wall_knock_open += 1
            os_.apply_action(OS_PASS)
        self._same_returns(ga, os_, os_of, where)
        return "dead"

    def _showdown(self, ga, os_, os_of, where) -> str:
        st = ga._st
        knocker = int(st[S_KNOCKER])
        for a in self.melds.actions(int(st[S_KNOCK_SETS]), int(st[S_KNOCK_RUNS])):
            self._os_apply(os_, a, f"{where}: knocker's meld")
        self._os_apply(os_, OS_PASS, f"{where}: knocker's melds done")
        if os_.current_player() != os_of[1 - knocker]:
            raise Mismatch(f"{where}: the defender is not to act in OpenSpiel")
        laid = [c for c in range(DECK_SIZE) if (int(st[S_LAID_OFF]) >> c) & 1]
        chained = 0
        if not os_.finished_layoffs():
            while laid:
                legal = set(os_.legal_actions())
                fit = [c for c in laid if os_card(c) in legal]
                if not fit:
                    break
                os_.apply_action(os_card(fit[0]))
                laid.remove(fit[0])
            for c in laid:  # a chain past OpenSpiel's two layoffs per end: a run of its own
                chained |= 1 << c
            self._os_apply(os_, OS_PASS, f"{where}: layoffs done")
        for a in self.melds.actions(int(st[S_DEF_SETS]), int(st[S_DEF_RUNS]) | chained):
            self._os_apply(os_, a, f"{where}: defender's meld")
        self._os_apply(os_, OS_PASS, f"{where}: defender's melds done")
        if not os_.is_terminal():
            raise Mismatch(f"{where}: OpenSpiel's hand is not over after the showdown")
        self._same_returns(ga, os_, os_of, where)
        return OUTCOME_NAMES[int(st[S_OUTCOME])]

    @staticmethod
    def _os_apply(os_, action: int, where: str) -> None:
        if action not in os_.legal_actions():
            raise Mismatch(f"{where}: {action} is not legal in OpenSpiel ({os_.legal_actions()})")
        os_.apply_action(action)

    @staticmethod
    def _same_returns(ga, os_, os_of, where) -> None:
        mine = ga.returns()
        # Oklahoma: a spade upcard doubles the arena's points, not OpenSpiel's.
        theirs = [int(ga._st[S_MULT]) * x for x in os_.returns()]
        for seat in (0, 1):
            if mine[seat] != theirs[os_of[seat]]:
                raise Mismatch(f"{where}: returns {mine} here (by seat), {theirs} in OpenSpiel (by player)")


def run(
    hands: int,
    seed: int = 0,
    rules: dict | None = None,
    os_params: dict | None = None,
    knock_p: float = 0.5,
    greedy: bool = False,
) -> Tally:
    """Cross-check ``hands`` deals (the arena's for seeds ``seed``, ``seed + 1``, ...).

    ``greedy``: discard the card leaving the least deadwood with probability
    ``GREEDY_P`` (else at random), so that hands reach gins, undercuts and
    layoffs, which uniform play rarely does."""
    check = CrossCheck(rules, os_params, knock_p, greedy)
    rng = np.random.default_rng(seed)
    for i in range(hands):
        dealer, deck = arena_deal(seed + i)
        try:
            check.hand(dealer, deck, rng)
        except Mismatch as e:
            raise Mismatch(f"seed {seed + i}: {e}") from None
    return check.tally
