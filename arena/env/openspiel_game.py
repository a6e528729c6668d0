"""OpenSpiel: Gin Arena's rules as a Python game, ``pyspiel.load_game("python_gin_arena", {...})``.

Importing this module registers the game.  Its parameters are the rules
keys (:class:`~arena.settings.rules.Rules`), ``rules`` (a preset name or a
rules file to start from: ``standard``, ``eaai``, ``oklahoma``), ``episode``
(``"game"``, the default: hands until a player reaches the target; ``"hand"``:
one hand, from scores 0-0) and ``reward`` (``"win"``, the default: +1 to the
winner, -1 to the loser, 0 when nobody wins; ``"points"``: own minus the
opponent's points over the episode).  A rules
key overrides the preset when it differs from the standard value (OpenSpiel
hands every parameter over with its default filled in, so a key set to the
standard value cannot be told from a key not set: put such a rule in a rules
file).

The engine plays every rule (:mod:`arena.engine.step`); this module only
turns its decisions into OpenSpiel's player and chance nodes:

* **Chance nodes** follow OpenSpiel's ``gin_rummy``: one for the first
  dealer (two outcomes), then one per dealt card in deal order (ten to the
  non-dealer, ten to the dealer, the upcard; each outcome a card not yet
  dealt), and one per stock draw (each card still in the stock).  So
  OpenSpiel's samplers and its MCTS see the same chance structure as in
  ``gin_rummy``, and a test can force the deal it wants.
* **Actions** are the engine's ids (:mod:`arena.engine.actions`), legal ones
  from its query; an illegal id raises ``ValueError`` naming it and the
  legal ones.
* **Tensors**: ``observation_tensor`` and ``information_state_tensor`` are
  both the engine's observation of the seat (``OBS_SIZE`` floats, built from
  its view alone).  The strings differ: ``information_state_string`` is the
  seat's whole record of the episode (perfect recall: what it was dealt and
  drew, every public action in order, each showdown), and
  ``observation_string`` the table as the seat sees it now.
* **Hidden decisions stay hidden.**  The engine asks a player whether to
  knock after a discard that allows it; declining (``play_on``) and
  declining big gin are not shown to the opponent, which would otherwise
  learn that the decliner's deadwood is within the limit.
* :meth:`GinArenaState.resample_from_infostate` deals the unseen cards
  again from what the seat has seen alone, and replays the episode with
  them (see there).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pyspiel

from arena.engine import actions as ids
from arena.engine.cards import card_str
from arena.engine.layout import (
    G_SIZE,
    G_WINNER,
    OUT_BIG_GIN,
    OUT_GIN,
    OUT_KNOCK,
    OUT_UNDERCUT,
    OUTCOME_NAMES,
    PH_BIG_GIN,
    PH_DONE,
    PH_DRAW,
    PH_KNOCK,
    PH_UPCARD_DEALER,
    S_CUR,
    S_DEALER,
    S_DECK,
    S_HAND,
    S_KNOCK_LIMIT,
    S_OUTCOME,
    S_PHASE,
    S_PILE,
    S_PILE_N,
    S_POINTS,
    S_SCORE,
    S_STOCK_POS,
    V_SIZE,
)
from arena.engine.melds import deadwood
from arena.engine.rules_array import rules_array
from arena.engine.step import DECK_SIZE, HAND_SIZE, apply_action, deal_from_deck, end_hand, new_state, winner_of_hand
from arena.env.games import EPISODES, REWARDS
from arena.settings.rules import Rules, load_rules

GAME_NAME = "python_gin_arena"
NUM_PLAYERS = 2
#: Cards dealt before play: ten to each seat and the upcard.
DEALT = 2 * HAND_SIZE + 1
#: Most cards a hand can end with (big gin: eleven).
#: The most deadwood ten cards can hold (K K Q Q J J T T 9 9), as OpenSpiel's gin_rummy has it.
MAX_DEADWOOD = 98
#: Most player decisions in one turn: draw, big gin?, discard, knock?.
DECISIONS_PER_TURN = 4

_STANDARD = Rules().to_dict()
PARAMETERS: dict[str, Any] = {"rules": "standard", "episode": "game", "reward": "win", **_STANDARD}

GAME_TYPE = pyspiel.GameType(
    short_name=GAME_NAME,
    long_name="Gin Arena: Gin Rummy (whole games or single hands)",
    dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
    chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
    information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
    utility=pyspiel.GameType.Utility.ZERO_SUM,
    reward_model=pyspiel.GameType.RewardModel.TERMINAL,
    max_num_players=NUM_PLAYERS,
    min_num_players=NUM_PLAYERS,
    provides_information_state_string=True,
    provides_information_state_tensor=True,
    provides_observation_string=True,
    provides_observation_tensor=True,
    provides_factored_observation_string=False,
    parameter_specification=PARAMETERS,
)


def rules_of_params(params: dict[str, Any]) -> Rules:
    """The rules a parameter dict asks for: the ``rules`` preset or file, then the keys that differ from standard."""
    overrides = {k: params[k] for k in _STANDARD if k in params and params[k] != _STANDARD[k]}
    return load_rules(str(params.get("rules", "standard")), overrides)


def _hand_points_bound(rules: Rules) -> int:
    bonus = max(rules.gin_bonus, rules.big_gin_bonus if rules.big_gin else 0, rules.undercut_bonus)
    return (2 if rules.oklahoma else 1) * (MAX_DEADWOOD + bonus)


@dataclasses.dataclass(frozen=True)
class Setup:
    """A game's parameters resolved: the rules (and their engine array), the episode and the reward."""

    rules: Rules
    rules_array: np.ndarray
    episode: str
    reward: str

    def __deepcopy__(self, memo: dict) -> Setup:
        return self  # immutable, shared by every state of a game (OpenSpiel clones states by deepcopy)

    @classmethod
    def of(cls, params: dict[str, Any]) -> Setup:
        params = {**PARAMETERS, **params}
        rules = rules_of_params(params)
        episode, reward = str(params["episode"]), str(params["reward"])
        if episode not in EPISODES:
            raise ValueError(f"episode: {episode!r} is not one of {', '.join(EPISODES)}")
        if reward not in REWARDS:
            raise ValueError(f"reward: {reward!r} is not one of {', '.join(REWARDS)}")
        return cls(rules, rules_array(rules), episode, reward)


class GinArenaGame(pyspiel.Game):
    """``python_gin_arena``: the arena's rules, to the target (``episode="game"``) or for one hand.

    Its settings are resolved from its parameters (:class:`Setup`) when it is
    made, and kept on the object for its states: they are the rules its
    ``GameInfo`` was computed from, even after a rules file it names has
    changed.  OpenSpiel copies games (``deepcopy``, pickle, deserializing)
    by making them again from their parameters, so a copy resolves its own.
    """

    def __init__(self, params: dict[str, Any] | None = None):
        params = {**PARAMETERS, **(params or {})}
        setup = Setup.of(params)
        self.setup = setup
        rules = setup.rules
        hands = 1 if setup.episode == "hand" else rules.hand_cap
        if setup.reward == "win":
            bound = 1.0
        elif setup.episode == "hand":
            bound = float(_hand_points_bound(rules))
        else:  # the final scores: the loser below the target, the winner at most one hand past it
            bound = float(rules.target - 1 + _hand_points_bound(rules))
        super().__init__(
            GAME_TYPE,
            pyspiel.GameInfo(
                num_distinct_actions=ids.NUM_ACTIONS,
                max_chance_outcomes=DECK_SIZE,
                num_players=NUM_PLAYERS,
                min_utility=-bound,
                max_utility=bound,
                utility_sum=0.0,
                max_game_length=hands * (2 + DECISIONS_PER_TURN * (rules.turn_cap + 1)),
            ),
            params,
        )

    def new_initial_state(self) -> GinArenaState:
        return GinArenaState(self)

    def make_py_observer(self, iig_obs_type=None, params=None) -> GinArenaObserver:
        if params:
            raise ValueError(f"{GAME_NAME}: observation parameters are not supported (got {params})")
        own = pyspiel.PrivateInfoType.SINGLE_PLAYER
        if iig_obs_type is not None and (iig_obs_type.private_info != own or not iig_obs_type.public_info):
            raise ValueError(
                f"{GAME_NAME}: observations hold the seat's own view (public and its private information), "
                f"not private_info={iig_obs_type.private_info.name}, public_info={iig_obs_type.public_info}"
            )
        perfect_recall = bool(iig_obs_type is not None and iig_obs_type.perfect_recall)
        return GinArenaObserver(perfect_recall)


@dataclasses.dataclass(frozen=True)
class Record:
    """One applied action, with what a replay and the players' records need.

    ``kind``: ``"dealer"`` (chance: the first dealer), ``"deal"`` (chance: a
    card dealt to ``seat``; -1 for the upcard), ``"draw"`` (chance: the card
    ``seat`` draws from the stock) or ``"act"`` (``seat``'s decision).
    ``card``: for an ``act``, the card it moved (taken from the pile or
    discarded), else -1.
    """

    kind: str
    seat: int
    action: int
    card: int = -1
    phase: int = -1


class Journal(list):
    """A list of immutable entries (records, log lines), which a deepcopy of its state copies shallowly.

    OpenSpiel clones a Python state with ``copy.deepcopy`` at every step of
    a search or a check; copying each entry again would make a whole game's
    clones quadratic in its length.
    """

    def __deepcopy__(self, memo: dict) -> Journal:
        return Journal(self)


class GinArenaState(pyspiel.State):
    """One episode: the engine's state array plus the chance bookkeeping around it."""

    def __init__(self, game: GinArenaGame, setup: Setup | None = None):
        super().__init__(game)
        self._g = setup or _setup_of(game)
        self._r = self._g.rules_array
        self._st = new_state()
        self._row = np.zeros(G_SIZE, dtype=np.int64)
        self._row[G_WINNER] = -1
        self._dealer_known = False
        self._dealt: list[int] = []  # this hand's deal so far, in deck order
        self._pending = -1  # engine answer waiting for the stock card it draws
        self._over = False
        self._returns = [0.0, 0.0]
        self._points = [0, 0]  # points over the episode
        self.records: list[Record] = Journal()
        #: Per hand: (start index in records, showdown?, final hands) once it is over.
        self.hands: list[tuple[int, bool, tuple[int, int]]] = Journal()
        #: What each seat has seen, in order: (who sees it: -1 both, else the seat, text).
        self._log: list[tuple[int, str]] = Journal()
        self._view = np.zeros(V_SIZE, dtype=np.int64)

    # --- whose turn ---------------------------------------------------------------
    def current_player(self) -> int:
        if self._over:
            return pyspiel.PlayerId.TERMINAL
        if not self._dealer_known or len(self._dealt) < DEALT or self._pending >= 0:
            return pyspiel.PlayerId.CHANCE
        return int(self._st[S_CUR])

    def is_terminal(self) -> bool:
        return self._over

    def returns(self) -> list[float]:
        return list(self._returns)

    def _legal_actions(self, player: int) -> list[int]:
        return ids.legal_ids(ids.legal_actions(self._st, self._r, player))

    def chance_outcomes(self) -> list[tuple[int, float]]:
        if self._over or not self.is_chance_node():
            return []
        if not self._dealer_known:
            return [(0, 0.5), (1, 0.5)]
        if len(self._dealt) < DEALT:
            left = sorted(set(range(DECK_SIZE)) - set(self._dealt))
        else:
            left = sorted(int(c) for c in self._st[S_DECK + self._st[S_STOCK_POS] : S_DECK + DECK_SIZE])
        p = 1.0 / len(left)
        return [(c, p) for c in left]

    # --- moves ---------------------------------------------------------------------
    def _apply_action(self, action: int) -> None:
        action = int(action)
        if self._over:
            raise ValueError(f"{GAME_NAME}: the game is over; no action can be applied (got {action})")
        if self.is_chance_node():
            outcomes = [c for c, _ in self.chance_outcomes()]
            if action not in outcomes:  # checked before anything changes: a forced deal must be a possible one
                what = _chance_what(self, outcomes)
                raise ValueError(f"{GAME_NAME}: chance action {action} is not possible now ({what})")
            self._apply_chance(action)
            return
        seat = int(self._st[S_CUR])
        legal = ids.legal_actions(self._st, self._r, seat)
        if not 0 <= action < ids.NUM_ACTIONS or not (int(legal) >> action) & 1:
            names = ", ".join(f"{a} ({ids.action_name(a)})" for a in ids.legal_ids(legal))
            raise ValueError(f"{GAME_NAME}: illegal action {ids.action_name(action)} for player {seat}; legal: {names}")
        phase = int(self._st[S_PHASE])
        answer = int(ids.answer_of_action(phase, action))
        top = int(self._st[S_PILE + self._st[S_PILE_N] - 1]) if self._st[S_PILE_N] > 0 else -1
        card = top if action == ids.A_TAKE else (action if action < DECK_SIZE else -1)
        self.records.append(Record("act", seat, action, card, phase))
        hidden = action == ids.A_PLAY_ON and phase in (PH_KNOCK, PH_BIG_GIN)
        self._log.append((seat if hidden else -1, f"P{seat} {ids.action_name(action)}"))
        draws_stock = answer == 0 and (phase == PH_DRAW or phase == PH_UPCARD_DEALER)
        if draws_stock:
            self._pending = answer  # a chance node deals the stock card first
            return
        self._engine_step(answer)

    def _apply_chance(self, card: int) -> None:
        if not self._dealer_known:
            self.records.append(Record("dealer", -1, card))
            self._st[S_DEALER] = card
            self._dealer_known = True
            self._log.append((-1, f"P{card} deals"))
            self._start_hand()
            return
        if len(self._dealt) < DEALT:
            n = len(self._dealt)
            dealer = int(self._st[S_DEALER])
            seat = 1 - dealer if n < HAND_SIZE else (dealer if n < 2 * HAND_SIZE else -1)
            self.records.append(Record("deal", seat, card))
            self._log.append((seat, f"P{seat} is dealt {card_str(card)}" if seat >= 0 else f"upcard {card_str(card)}"))
            self._dealt.append(card)
            if len(self._dealt) == DEALT:
                rest = sorted(set(range(DECK_SIZE)) - set(self._dealt))
                self._st[S_DECK : S_DECK + DECK_SIZE] = self._dealt + rest
                deal_from_deck(self._st, self._r)
            return
        # A stock draw: the chosen card goes on top of the stock, then the engine draws it.
        pos = int(self._st[S_STOCK_POS])
        deck = self._st[S_DECK : S_DECK + DECK_SIZE]
        at = pos + int(np.flatnonzero(deck[pos:] == card)[0])
        deck[pos], deck[at] = deck[at], deck[pos]
        drawer = int(self._st[S_CUR]) if self._st[S_PHASE] == PH_DRAW else 1 - int(self._st[S_CUR])
        self.records.append(Record("draw", drawer, card))
        self._log.append((drawer, f"P{drawer} draws {card_str(card)}"))
        answer, self._pending = self._pending, -1
        self._engine_step(answer)

    def _start_hand(self) -> None:
        self._dealt = []
        self.hands.append((len(self.records), False, (0, 0)))

    def _engine_step(self, answer: int) -> None:
        err = apply_action(self._st, self._r, answer)
        assert err == 0, f"engine rejected answer {answer} (error {err})"
        if self._st[S_PHASE] == PH_DONE:
            self._end_hand()

    def _end_hand(self) -> None:
        st = self._st
        out = int(st[S_OUTCOME])
        showdown = out in (OUT_KNOCK, OUT_UNDERCUT, OUT_GIN, OUT_BIG_GIN)
        final = (int(st[S_HAND]), int(st[S_HAND + 1]))
        start = self.hands[-1][0]
        self.hands[-1] = (start, showdown, final)
        pts = (int(st[S_POINTS]), int(st[S_POINTS + 1]))
        text = f"hand over: {OUTCOME_NAMES[out]}, points {pts[0]}-{pts[1]}"
        if showdown:
            text += f"; P0 shows {_cards(final[0])}; P1 shows {_cards(final[1])}"
        self._log.append((-1, text))
        for p in range(NUM_PLAYERS):
            self._points[p] += pts[p]
        if self._g.episode == "hand":
            self._finish(winner=winner_of_hand(st))  # a knock tied without undercut is the knocker's
            return
        over = end_hand(st, self._r, self._row)
        if over:
            self._finish(winner=int(self._row[G_WINNER]))
            return
        self._log.append((-1, f"scores {int(st[S_SCORE])}-{int(st[S_SCORE + 1])}; P{int(st[S_DEALER])} deals"))
        self._start_hand()

    def _finish(self, winner: int) -> None:
        self._over = True
        if self._g.reward == "win":
            self._returns = [0.0, 0.0] if winner < 0 else [1.0 if p == winner else -1.0 for p in range(NUM_PLAYERS)]
        else:
            d = self._points[0] - self._points[1]
            self._returns = [float(d), float(-d)]

    # --- what a seat knows ------------------------------------------------------------
    # (OpenSpiel's information_state_string/observation_string/..._tensor come
    # through GinArenaObserver, which reads these.)
    def record_text(self, player: int) -> str:
        """Everything ``player`` has seen this episode, in order (the information state string)."""
        return f"P{player}\n" + "\n".join(t for who, t in self._log if who < 0 or who == player)

    def write_observation(self, player: int, obs: np.ndarray) -> None:
        """The engine's observation of ``player`` into ``obs`` (zeros before the deal is complete)."""
        if len(self._dealt) < DEALT and not self._over:
            obs[:] = 0.0
            return
        ids.observe(self._st, self._r, player, self._view, obs)

    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.CHANCE:
            return f"first dealer P{action}" if not self._dealer_known else f"card {card_str(action)}"
        return ids.action_name(action)

    def __str__(self) -> str:
        st = self._st
        if len(self._dealt) < DEALT and not self._over:
            return f"dealing: {' '.join(card_str(c) for c in self._dealt)}"
        return (
            f"P0 {_cards(int(st[S_HAND]))} | P1 {_cards(int(st[S_HAND + 1]))} | pile "
            f"{' '.join(card_str(int(c)) for c in st[S_PILE : S_PILE + st[S_PILE_N]])} | scores "
            f"{int(st[S_SCORE])}-{int(st[S_SCORE + 1])} | phase {int(st[S_PHASE])} P{int(st[S_CUR])}"
        )

    # --- sampling the unseen ----------------------------------------------------------
    def resample_from_infostate(self, player_id: int, probability_sampler) -> GinArenaState:
        """A state ``player_id`` cannot tell from this one, drawn from what it has seen alone.

        Every card the seat has not seen is dealt again at random: the
        opponent's hidden cards and the stock, in the current hand and in
        earlier ones (a dead hand is never shown; even a shown hand does not
        say which of the opponent's cards were dealt and which were drawn).
        Hand by hand, the opponent's private cards (its deal and its stock
        draws) are slots: each card it discarded that did not come from the
        pile goes to a random slot it already held, the cards shown at a
        showdown fill the rest at random, and in a hand not shown, a random
        choice of the unseen cards does.  The episode is then replayed with
        these cards, the opponent's hidden knock and big-gin refusals asked
        again of its new cards.  The inputs are the seat's own records and
        the public ones, so two states the seat cannot tell apart give the
        same resample for the same sampler (``tests/env/test_openspiel.py``).
        While the opponent is being asked to knock (or to declare big gin), which the turn order shows, its
        cards in this hand are dealt again until they would be asked too (:data:`RESAMPLE_TRIES` at most).
        """
        rng = np.random.default_rng(int(probability_sampler() * 2**53))
        me, opp = player_id, 1 - player_id
        recs = list(self.records)
        for h, (start, showdown, final) in enumerate(self.hands):
            end = self.hands[h + 1][0] if h + 1 < len(self.hands) else len(recs)
            over = h + 1 < len(self.hands) or self._over
            _redeal_hand(recs, start, end, me, opp, showdown and over, final[opp], rng)
        most = self._asked_deadwood(opp)
        if most >= 0:  # the turn order shows the opponent asked "knock?" (or "big gin?"): its new cards must be
            start = self.hands[-1][0]
            for _ in range(RESAMPLE_TRIES):
                if deadwood(_hand_of(recs, start, opp)) <= most:
                    break
                _redeal_hand(recs, start, len(recs), me, opp, False, 0, rng)  # this hand's cards again
            else:
                asked = "big gin" if int(self._st[S_PHASE]) == PH_BIG_GIN else "knock"
                raise ValueError(
                    f"{GAME_NAME}: no deal of P{opp}'s unseen cards in {RESAMPLE_TRIES} tries keeps its pending "
                    f"{asked} question (deadwood at most {most}); resample P{me} at its own decisions"
                )
        return _replay(self.get_game(), self._g, recs, opp, self.current_player())

    def _asked_deadwood(self, seat: int) -> int:
        """When ``seat`` is being asked to knock (or to declare big gin), the most deadwood its hand can have
        (the question is only asked then); else -1."""
        if self._over or self.is_chance_node() or self.current_player() != seat:
            return -1
        phase = int(self._st[S_PHASE])
        return int(self._st[S_KNOCK_LIMIT]) if phase == PH_KNOCK else (0 if phase == PH_BIG_GIN else -1)


#: How many deals of the unseen cards a resample tries to keep the opponent's pending question.
RESAMPLE_TRIES = 10_000


def _hand_of(recs: list[Record], start: int, seat: int) -> int:
    """``seat``'s cards (a mask) after ``recs[start:]``, the records of one hand from its deal."""
    hand = 0
    for r in recs[start:]:
        if r.seat != seat:
            continue
        if r.kind in ("deal", "draw") or (r.kind == "act" and r.action == ids.A_TAKE):
            hand |= 1 << (r.action if r.kind != "act" else r.card)
        elif r.kind == "act" and r.action < DECK_SIZE:
            hand &= ~(1 << r.action)
    return hand


def _redeal_hand(recs, start, end, me, opp, shown, final_opp, rng) -> None:
    """Give the opponent's private slots of one hand new cards (in place); see resample_from_infostate."""
    slots: list[int] = []
    assigned: dict[int, int] = {}
    seen: set[int] = set()
    known: set[int] = set()
    for i in range(start, end):
        r = recs[i]
        if r.kind in ("deal", "draw"):
            if r.seat == opp:
                slots.append(i)
            else:
                seen.add(r.action)
        elif r.kind == "act" and r.seat == opp:
            if r.action == ids.A_TAKE:
                known.add(r.card)
            elif r.action < DECK_SIZE:
                if r.card in known:
                    known.discard(r.card)
                else:
                    free = [s for s in slots if s not in assigned]
                    assigned[free[int(rng.integers(len(free)))]] = r.card
    free = [s for s in slots if s not in assigned]
    if shown:
        cards = sorted(c for c in range(DECK_SIZE) if (final_opp >> c) & 1 and c not in known)
    else:
        pool = sorted(set(range(DECK_SIZE)) - seen - known - set(assigned.values()))
        cards = [pool[i] for i in rng.permutation(len(pool))[: len(free)]]
    assert len(cards) == len(free), "the opponent's cards and slots disagree"
    for s, c in zip(free, (cards[i] for i in rng.permutation(len(cards)))):
        assigned[s] = c
    for s, c in assigned.items():
        recs[s] = dataclasses.replace(recs[s], action=int(c))


def _replay(game: GinArenaGame, setup: Setup, recs: list[Record], opp: int, to_act: int) -> GinArenaState:
    """Play ``recs`` again from the start, the opponent's knock and big-gin refusals asked afresh."""
    state = GinArenaState(game, setup)

    def answer_questions(next_rec: Record | None) -> None:
        while not state.is_chance_node() and not state.is_terminal() and state.current_player() == opp:
            phase = int(state._st[S_PHASE])
            if phase not in (PH_KNOCK, PH_BIG_GIN):
                return
            yes = ids.A_KNOCK if phase == PH_KNOCK else ids.A_BIG_GIN
            if next_rec is not None and next_rec.kind == "act" and next_rec.seat == opp and next_rec.action == yes:
                return
            state.apply_action(ids.A_PLAY_ON)

    for r in recs:
        if r.kind == "act" and r.seat == opp and r.action == ids.A_PLAY_ON and r.phase in (PH_KNOCK, PH_BIG_GIN):
            continue
        answer_questions(r)
        state.apply_action(r.action)
    if to_act != opp:
        answer_questions(None)
    return state


def _setup_of(game: pyspiel.Game) -> Setup:
    """The game's :class:`Setup`: the one it was made with (a cache keyed by its parameters gave the states of a
    game loaded after its rules file was edited the rules of the first load, against the game's own GameInfo)."""
    setup = getattr(game, "setup", None)
    if not isinstance(setup, Setup):  # a game OpenSpiel copied without its Python attributes: resolved once again
        setup = Setup.of(dict(game.get_parameters()))
        game.setup = setup
    return setup


def _chance_what(state: GinArenaState, outcomes: list[int]) -> str:
    """What the chance node in ``state`` decides and its possible outcomes, for an error."""
    if not state._dealer_known:
        return "the first dealer: 0 or 1"
    if len(state._dealt) < DEALT:
        return f"a card not yet dealt: {_ids(outcomes)}"
    return f"a card still in the stock: {_ids(outcomes)}"


def _ids(values: list[int]) -> str:
    """Integers as ranges: ``0-3, 7, 9-10``."""
    out: list[str] = []
    for v in values:
        if out and int(out[-1].rsplit("-", 1)[-1]) == v - 1:
            out[-1] = f"{out[-1].split('-')[0]}-{v}"
        else:
            out.append(str(v))
    return ", ".join(out)


def _cards(mask: int) -> str:
    return " ".join(card_str(c) for c in range(DECK_SIZE) if (mask >> c) & 1)


def _table_text(state: GinArenaState, player: int) -> str:
    """The table as ``player`` sees it now (the observation string)."""
    st = state._st
    if len(state._dealt) < DEALT and not state._over:
        mine = [c for i, c in enumerate(state._dealt) if _deal_seat(state, i) == player]
        return f"P{player} dealing; holds {' '.join(card_str(c) for c in sorted(mine))}"
    pile = " ".join(card_str(int(c)) for c in st[S_PILE : S_PILE + st[S_PILE_N]])
    stock = DECK_SIZE - int(st[S_STOCK_POS])
    return (
        f"P{player} holds {_cards(int(st[S_HAND + player]))} | pile {pile} | stock {stock} | scores "
        f"{int(st[S_SCORE + player])}-{int(st[S_SCORE + 1 - player])} | to act P{state.current_player()}"
    )


def _deal_seat(state: GinArenaState, i: int) -> int:
    dealer = int(state._st[S_DEALER])
    return 1 - dealer if i < HAND_SIZE else (dealer if i < 2 * HAND_SIZE else -1)


class GinArenaObserver:
    """OpenSpiel's Python observer: the engine's observation as ``tensor``; the strings of the state."""

    def __init__(self, perfect_recall: bool):
        self.perfect_recall = perfect_recall
        self.tensor = np.zeros(ids.OBS_SIZE, dtype=np.float32)
        self.dict = {"observation": self.tensor}

    def set_from(self, state: GinArenaState, player: int) -> None:
        state.write_observation(player, self.tensor)

    def string_from(self, state: GinArenaState, player: int) -> str:
        if self.perfect_recall:
            return state.record_text(player)
        return _table_text(state, player)


pyspiel.register_game(GAME_TYPE, GinArenaGame)
