"""A game between a person and a bot, kept on the server.

The person is seat 0 and the bot seat 1.  The state lives here; the page
gets only :meth:`PlaySession.view` (the person's own cards, the pile, the
stock count, the bot's card count), and sends actions.  Each action goes
through :func:`arena.engine.step.apply_action`, exactly as in a tournament, and
the bot answers through its five functions with the view
:func:`arena.engine.step.build_view` gives it.  An action that is not the
person's to take, or that the engine rejects, raises :class:`IllegalAction`
and leaves the state as it was.
"""

from __future__ import annotations

import secrets
import threading
from typing import Any

import numpy as np

from arena.botkit.bot import Bot
from arena.botkit.load import load_bot
from arena.engine.cards import card_str, cards_of
from arena.engine.layout import (
    ERROR_TEXT,
    G_SIZE,
    G_WINNER,
    LOG_KIND,
    LOG_SEAT,
    PH_BIG_GIN,
    PH_DISCARD,
    PH_DONE,
    PH_DRAW,
    PH_KNOCK,
    PH_UPCARD_DEALER,
    PH_UPCARD_NONDEALER,
    S_CUR,
    S_DEALER,
    S_ERROR,
    S_HAND,
    S_HAND_NO,
    S_PHASE,
    V_SIZE,
)
from arena.engine.rng import RNG_WORDS
from arena.engine.rules_array import rules_array
from arena.engine.step import apply_action, begin_game, begin_hand, build_view, end_hand, new_state
from arena.settings.rules import Rules, load_rules
from arena.web.table import action_text, showdown, table_state

PERSON = 0
BOT = 1
TARGETS = (50, 100, 200)

#: Actions the page may send, with the phases they answer and the engine's answer.
ACTIONS: dict[str, tuple[tuple[int, ...], int | None]] = {
    "take": ((PH_UPCARD_NONDEALER, PH_UPCARD_DEALER), 1),
    "pass": ((PH_UPCARD_NONDEALER, PH_UPCARD_DEALER), 0),
    "draw_stock": ((PH_DRAW,), 0),
    "draw_pile": ((PH_DRAW,), 1),
    "discard": ((PH_DISCARD,), None),  # the card is the answer
    "knock": ((PH_KNOCK,), 1),
    "no_knock": ((PH_KNOCK,), 0),
    "big_gin": ((PH_BIG_GIN,), 1),
    "no_big_gin": ((PH_BIG_GIN,), 0),
}


#: What the person must do in each phase (the tail of an error message).
NEEDED = {
    PH_UPCARD_NONDEALER: "take or pass the upcard first",
    PH_UPCARD_DEALER: "take or pass the upcard first",
    PH_DRAW: "draw first, from the stock or the discard pile",
    PH_BIG_GIN: "declare big gin or discard",
    PH_DISCARD: "discard a card first",
    PH_KNOCK: "knock or play on",
    PH_DONE: "the hand is over",
}


class IllegalAction(ValueError):
    """A request the game cannot take now; ``status`` is the HTTP code to answer with."""

    def __init__(self, message: str, status: int = 409):
        super().__init__(message)
        self.status = status


class PlaySession:
    """One game: a person (seat 0) against a bot (seat 1)."""

    def __init__(self, bot: Bot, rules: Rules, preset: str, name: str = "You", seed: int | None = None):
        self.bot = bot
        self.preset = preset
        self.rules_obj = rules
        self.rules = rules_array(rules)
        self.names = (name, bot.name)
        self.seed = secrets.randbits(62) if seed is None else int(seed)
        self.st = new_state()
        self.row = np.zeros(G_SIZE, dtype=np.int64)
        self.view_buf = np.zeros(V_SIZE, dtype=np.int64)
        self.scratch = np.zeros(RNG_WORDS, dtype=np.uint64)
        self.rng_person = np.zeros(RNG_WORDS, dtype=np.uint64)
        self.rng_bot = np.zeros(RNG_WORDS, dtype=np.uint64)
        self.mem_person = np.zeros(1)
        self.mem_bot = np.zeros(max(1, bot.memory_size), dtype=np.float64)
        self.params = bot.params.copy()
        self.lock = threading.Lock()
        self.events: list[str] = []  # what happened, in words, this hand
        self.last_hand: dict[str, Any] | None = None  # the showdown of the hand just finished
        self.hand_over = False
        self.game_over = False
        self.done_st = self.st
        self.log: list[int] = []
        begin_game(
            self.st, self.rules, self.seed, self.rng_person, self.rng_bot, self.mem_person, self.mem_bot, self.row
        )
        self._deal()

    @classmethod
    def start(cls, bot: str = "simple", preset: str = "standard", target: int = 100, **kw: Any) -> PlaySession:
        if target not in TARGETS:
            raise IllegalAction(f"target must be one of {', '.join(map(str, TARGETS))}, not {target!r}", 400)
        try:
            rules = load_rules(preset, {"target": target})
        except (ValueError, OSError) as exc:
            raise IllegalAction(str(exc), 400) from None
        try:
            b = load_bot(bot)
        except (ValueError, OSError) as exc:
            raise IllegalAction(str(exc), 400) from None
        return cls(b, rules, preset, **kw)

    # --- the game ---------------------------------------------------------------------
    def _deal(self) -> None:
        begin_hand(self.st, self.rules, self.seed, self.scratch)
        self.events = [f"Hand {int(self.st[S_HAND_NO]) + 1}: {self.names[int(self.st[S_DEALER])]} deals"]
        self.hand_over = False
        self.last_hand = None
        self._bot_moves()

    def _apply(self, action: int) -> None:
        seat = int(self.st[S_CUR])
        phase = int(self.st[S_PHASE])
        before = self.st.copy()
        if apply_action(self.st, self.rules, int(action)) != 0:
            code = int(self.st[S_ERROR])
            err = ERROR_TEXT[code] if 0 <= code < len(ERROR_TEXT) else "not allowed"
            self.st[:] = before
            raise IllegalAction(f"illegal move: {err}")
        self.log.append(seat * LOG_SEAT + phase * LOG_KIND + int(action))
        text = action_text(self.names[seat], phase, int(action), before)
        if seat == PERSON and phase == PH_DRAW and action == 0:
            new = [c for c in cards_of(int(self.st[S_HAND])) if not (int(before[S_HAND]) >> c) & 1]
            if new:
                text = f"{self.names[PERSON]} draw {card_str(new[0], True)} from the stock"
        if phase == PH_UPCARD_DEALER and action == 0:
            text += f"; {action_text(self.names[1 - seat], PH_DRAW, 0, before)}"
        self.events.append(text)
        if self.st[S_PHASE] == PH_DONE:
            self._finish_hand()

    def _finish_hand(self) -> None:
        self.last_hand = showdown(self.st, self.rules, self.names)
        if self.last_hand["knocker"] < 0:
            self.last_hand["hands"][BOT] = None  # no showdown: the bot's cards stay hidden
        self.hand_over = True
        self.done_st = self.st.copy()  # the table as the hand ended (end_hand moves the dealer and hand number on)
        self.game_over = bool(end_hand(self.st, self.rules, self.row))

    def _bot_moves(self) -> None:
        """Let the bot act until it is the person's turn or the hand is over."""
        while not self.hand_over and int(self.st[S_CUR]) == BOT and self.st[S_PHASE] != PH_DONE:
            phase = int(self.st[S_PHASE])
            build_view(self.st, self.rules, BOT, self.view_buf)
            answer = self.bot.functions[phase](self.view_buf, self.params, self.mem_bot, self.rng_bot)
            try:
                self._apply(int(answer))
            except IllegalAction:
                raise RuntimeError(f"bot '{self.bot.name}' made an illegal move ({phase}, {answer})") from None

    def act(self, action: str, card: Any = None) -> None:
        """The person's decision; raises :class:`IllegalAction` (and changes nothing) when it is not allowed."""
        with self.lock:
            if action not in ACTIONS:
                raise IllegalAction(f"unknown action {action!r} (actions: {', '.join(ACTIONS)})", 400)
            if ACTIONS[action][1] is None and (
                isinstance(card, bool) or not isinstance(card, int) or not 0 <= card < 52
            ):
                raise IllegalAction("discard needs a card number 0..51", 400)
            if self.hand_over:
                raise IllegalAction("the hand is over: start the next hand")
            if int(self.st[S_CUR]) != PERSON:
                raise IllegalAction("it is not your turn")
            phases, answer = ACTIONS[action]
            phase = int(self.st[S_PHASE])
            if phase not in phases:
                raise IllegalAction(f"you cannot {action.replace('_', ' ')} now: {NEEDED[phase]}")
            if answer is None:
                if not (int(self.st[S_HAND]) >> card) & 1:
                    raise IllegalAction("that card is not in your hand", 409)
                answer = card
            self._apply(answer)
            self._bot_moves()

    def next_hand(self) -> None:
        with self.lock:
            if not self.hand_over:
                raise IllegalAction("the hand is not over yet")
            if self.game_over:
                raise IllegalAction("the game is over: start a new game")
            self._deal()

    # --- what the person sees ------------------------------------------------------------
    def view(self) -> dict[str, Any]:
        """The person's view: never the bot's cards (until a showdown lays them out) or the stock."""
        t = table_state(self.done_st if self.hand_over else self.st, (PERSON,))
        me = t["hands"].pop(str(PERSON))
        del t["hands"]
        phase = int(self.st[S_PHASE])
        mine = int(self.st[S_CUR]) == PERSON and not self.hand_over
        allowed = [a for a, (phs, _) in ACTIONS.items() if mine and phase in phs]
        out: dict[str, Any] = {
            **t,
            "names": list(self.names),
            "preset": self.preset,
            "target": int(self.rules_obj.target),
            "you": me,
            "bot_cards": t["hand_sizes"][BOT],
            "your_turn": mine,
            "allowed": allowed,
            "events": self.events[-12:],
            "hand_over": self.hand_over,
            "game_over": self.game_over,
            "showdown": self.last_hand,
        }
        if self.hand_over:
            # end_hand already added the points and moved on; show the finished hand's scores
            out["scores"] = list(self.last_hand["scores_after"]) if self.last_hand else out["scores"]
        if self.game_over:
            w = int(self.row[G_WINNER])
            out["winner"] = self.names[w] if w >= 0 else ""
        return out
