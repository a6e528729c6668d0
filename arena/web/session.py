"""A game between a person and a bot, kept on the server.

The person is seat 0 and the bot seat 1.  The state lives here; the page
gets only :meth:`PlaySession.view` (the person's own cards, the pile, the
stock count, the bot's card count), and sends actions.  Each action goes
through :func:`arena.engine.step.apply_action`, exactly as in a tournament, and
the bot answers through its five functions with the view
:func:`arena.engine.step.build_view` gives it.  An action that is not the
person's to take, or that the engine rejects, raises :class:`IllegalAction`
and leaves the state as it was.

Knocks go as in computer games of Gin.  The person knocks from the discard phase
(``knock`` with the card to discard; the engine says which discards allow it,
:func:`arena.engine.showdown.knock_discards`), then lays down melds of their
own choosing (``lay_down``).  When the bot knocks, the person defends: lays
off deadwood on the bot's melds one card at a time (``lay_off``, chains
allowed), then lays down their own melds (``lay_down``) or passes (``pass``).
A pass lays down the best melds of the cards not laid off, as the automatic
showdown would: the manual's "Pass" is for a hand with nothing to lay down,
and pressing it must never score melds the person holds as deadwood.
:mod:`arena.engine.showdown` checks and scores what the person chose; the bot's
side of the showdown is the automatic one, as in a tournament.
"""

from __future__ import annotations

import secrets
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from arena.botkit.bot import Bot
from arena.engine.cards import cards_of
from arena.engine.contract import PHASE_FUNCTION, table_hooks
from arena.engine.layout import (
    ERR_NOT_IN_HAND,
    ERR_RETAKE,
    ERROR_TEXT,
    G_FORFEIT,
    G_SIZE,
    G_WINNER,
    PH_BIG_GIN,
    PH_DISCARD,
    PH_DONE,
    PH_DRAW,
    PH_KNOCK,
    PH_UPCARD_DEALER,
    PH_UPCARD_NONDEALER,
    V_SIZE,
)
from arena.engine.melds import best_arrangement, defender_deadwood, melds_of
from arena.engine.play import AnswerTypeError, checked_answer
from arena.engine.rng import RNG_WORDS
from arena.engine.rules_array import rules_array
from arena.engine.showdown import REFUSALS as SHOWDOWN_REFUSALS
from arena.engine.showdown import (
    ArrangementError,
    attach,
    best_reachable,
    knock_discards,
    knocker_proposal,
    lay_down,
    layoff_mask,
    meld_masks,
    melds_within,
    table_shows,
    value,
)
from arena.engine.step import (
    apply_action,
    begin_game,
    begin_hand,
    build_view,
    end_hand,
    illegal_reason,
    legal_answers,
    log_entry,
    new_state,
)
from arena.engine.table import Table
from arena.external.client import close_bot, external_of
from arena.loading.load import load_bot
from arena.settings.rules import Rules, RulesError, load_rules
from arena.web.table import action_text, showdown, table_state

PERSON = 0
BOT = 1
TARGETS = (50, 100, 200)
#: The settings the page's advanced panel may change (within the ranges of arena/settings/rules.py).
ADVANCED = ("knock_limit", "gin_bonus", "big_gin", "big_gin_bonus", "undercut_bonus", "undercut_on_tie")

#: Actions the page may send in play, with the phases they answer and the engine's answer.
ACTIONS: dict[str, tuple[tuple[int, ...], int | None]] = {
    "take": ((PH_UPCARD_NONDEALER, PH_UPCARD_DEALER), 1),
    "pass": ((PH_UPCARD_NONDEALER, PH_UPCARD_DEALER), 0),
    "draw_stock": ((PH_DRAW,), 0),
    "draw_pile": ((PH_DRAW,), 1),
    "discard": ((PH_DISCARD,), None),  # the card is the answer
    "play_on": ((PH_DISCARD,), None),  # discard, and do not knock even if the engine would allow it
    "knock": ((PH_KNOCK, PH_DISCARD), 1),  # in the discard phase: with the card to discard
    "no_knock": ((PH_KNOCK,), 0),
    "big_gin": ((PH_BIG_GIN,), 1),
    "no_big_gin": ((PH_BIG_GIN,), 0),
}
#: Actions of the showdown stages: the person's knock ("lay_down") and the person's defence.
STAGE_ACTIONS = {"lay_down": ("lay_down",), "defend": ("lay_off", "take_back", "lay_down", "pass")}

#: Each action in words, for refusals ("you cannot decline to knock now"): never the action's name.
PHRASES = {
    "take": "take the upcard",
    "pass": "pass",
    "draw_stock": "draw from the stock",
    "draw_pile": "draw from the discard pile",
    "discard": "discard",
    "play_on": "discard and play on",
    "knock": "knock",
    "no_knock": "decline to knock",
    "big_gin": "go big gin",
    "no_big_gin": "decline big gin",
    "lay_down": "lay down",
    "lay_off": "lay off",
    "take_back": "take back your layoffs",
}

#: What the person must do in each phase (the tail of an error message).
NEEDED = {
    PH_UPCARD_NONDEALER: "take or pass the upcard first",
    PH_UPCARD_DEALER: "take or pass the upcard first",
    PH_DRAW: "draw first, from the stock or the discard pile",
    PH_BIG_GIN: "first declare big gin (big_gin), or decline it (no_big_gin) and then discard",
    PH_DISCARD: "discard a card first",
    PH_KNOCK: "knock or play on",
    PH_DONE: "the hand is over",
}


#: The refusals the play page says in its own language (``err.CODE`` in its catalogs); the rest are English.
REFUSALS = (*SHOWDOWN_REFUSALS, "knock_discard", "discard_just_taken", "stale")


class IllegalAction(ValueError):
    """A request the game cannot take now; ``status`` is the HTTP code to answer with.

    ``code`` (one of :data:`REFUSALS`) and ``values`` name the refusals a person meets in play, so that a
    page in another language can say them in its own words; the message stays the English line."""

    def __init__(self, message: str, status: int = 409, code: str | None = None, **values: Any):
        super().__init__(message)
        self.status, self.code, self.values = status, code, values


def rule_ranges() -> dict[str, dict[str, Any]]:
    """The advanced panel's settings: kind and range, read from the Rules fields."""
    import dataclasses

    out = {}
    for f in dataclasses.fields(Rules):
        if f.name in ADVANCED:
            spec = f.metadata
            out[f.name] = {"kind": spec["kind"], "lo": spec.get("lo"), "hi": spec.get("hi"), "default": f.default}
    return out


def _ids(mask: int) -> list[int]:
    return [int(c) for c in cards_of(int(mask))]


class PlaySession:
    """One game: a person (seat 0) against a bot (seat 1)."""

    @property
    def table(self) -> Table:
        """The live state, read by name."""
        return Table(self.st)

    def __init__(self, bot: Bot, rules: Rules, preset: str, name: str = "You", seed: int | None = None):
        self.id = secrets.token_urlsafe(12)
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
        self.moves = 0  # the person's requests the game has taken (a new hand dealt counts): a page's "seen"
        self.events: list[str] = []  # what happened, in English, this hand
        self.items: list[dict[str, Any]] = []  # the same, as data for the page's own words
        self.last_hand: dict[str, Any] | None = None  # the showdown of the hand just finished
        self.history: list[dict[str, Any]] = []  # every finished hand: number, outcome, points
        self.hand_over = False
        self.game_over = False
        self.done_st = self.st
        self.log: list[int] = []
        self.stage = "play"  # "lay_down": the person knocked; "defend": the bot knocked
        self.forfeit: dict[str, Any] | None = None  # the bot's forfeit that ended the game: its name, why
        self.knock: dict[str, int] = {}  # the bot's melds and the person's layoffs while defending
        begin_game(
            self.st, self.rules, self.seed, self.rng_person, self.rng_bot, self.mem_person, self.mem_bot, self.row
        )
        self._deal()

    @classmethod
    def start(
        cls,
        bot: str = "simple",
        preset: str = "standard",
        target: int = 100,
        rules: Rules | None = None,
        overrides: Mapping[str, Any] | None = None,
        targets: Sequence[int] = TARGETS,
        loader: Callable[[str], Bot] = load_bot,
        **kw: Any,
    ) -> PlaySession:
        """A new game; ``targets``: the targets the page offers (a ``--rules`` file's may be among them);
        ``loader``: what loads the bot by its spec (a server's loads each spec once,
        :meth:`arena.web.server.App.bot`)."""
        if target not in targets:
            raise IllegalAction(f"target must be one of {', '.join(map(str, targets))}, not {target!r}", 400)
        extra = dict(overrides or {})
        bad = sorted(set(extra) - set(ADVANCED))
        if bad:
            raise IllegalAction(f"rules: {bad[0][:40]!r} cannot be set here (settings: {', '.join(ADVANCED)})", 400)
        try:
            base = rules if rules is not None else load_rules(preset)
            r = base.with_overrides({**extra, "target": target}, source="the page's rules")
        except (RulesError, ValueError, OSError) as exc:
            raise IllegalAction(str(exc), 400) from None
        try:
            b = loader(bot)
        except (ValueError, OSError) as exc:
            raise IllegalAction(str(exc), 400) from None
        return cls(b, r, preset, **kw)

    # --- the game ---------------------------------------------------------------------
    def _note(self, text: str, item: dict[str, Any]) -> None:
        self.events.append(text)
        self.items.append(item)

    def _deal(self) -> None:
        begin_hand(self.st, self.rules, self.seed, self.scratch)
        dealer = self.table.dealer
        self.events, self.items = [], []
        verb = "deal" if dealer == PERSON else "deals"
        self._note(
            f"Hand {self.table.hand_no}: {self.names[dealer]} {verb}",
            {"key": "deal", "seat": dealer, "hand": self.table.hand_no},
        )
        self.hand_over = False
        self.last_hand = None
        self.stage = "play"
        self.knock = {}
        self._bot_moves()

    def _apply(self, action: int) -> None:
        seat = self.table.to_act
        phase = self.table.phase
        before = self.st.copy()
        if apply_action(self.st, self.rules, int(action)) != 0:
            code = self.table.error
            err = ERROR_TEXT[code] if 0 <= code < len(ERROR_TEXT) else "not allowed"
            self.st[:] = before
            raise IllegalAction(f"illegal move: {err}")
        self._logged(seat, phase, int(action), before)
        if self.table.phase == PH_DONE:
            self._finish_hand()

    def _logged(self, seat: int, phase: int, action: int, before: np.ndarray) -> None:
        """Record a decision taken: the log entry and its words.

        The bot's declined knock and declined big gin go in the log but not in the words: the engine asks
        a knock only when the discard leaves deadwood within the knock limit, and big gin only for a hand
        whose 11 cards all meld, so "simple plays on" would tell the person what the table hides."""
        self.log.append(int(log_entry(seat, phase, action)))
        if seat == BOT and phase in (PH_KNOCK, PH_BIG_GIN) and action == 0:
            return
        text = action_text(self.names[seat], phase, action, before)
        item: dict[str, Any] = {"key": _KEYS[phase][min(action, 1) if phase != PH_DISCARD else 0], "seat": seat}
        if phase in (PH_UPCARD_NONDEALER, PH_UPCARD_DEALER):
            item["card"] = Table(before).upcard
        elif phase == PH_DRAW and action == 1:
            item["card"] = Table(before).pile_top
        elif phase == PH_DISCARD:
            item["card"] = action
        new = [c for c in _ids(self.table.hand(seat)) if not (Table(before).hand(seat) >> c) & 1]
        if seat == PERSON and phase == PH_DRAW and action == 0 and new:
            text = f"{self.names[PERSON]} draw {_card(new[0])} from the stock"
            item["card"] = new[0]
        self._note(text, item)
        if phase == PH_UPCARD_DEALER and action == 0:  # both passed: the non-dealer draws from the stock
            other = 1 - seat
            drawn = [c for c in _ids(self.table.hand(other)) if not (Table(before).hand(other) >> c) & 1]
            auto: dict[str, Any] = {"key": "draw_stock", "seat": other}
            words = action_text(self.names[other], PH_DRAW, 0, before)
            if other == PERSON and drawn:
                auto["card"] = drawn[0]
                words = f"{self.names[PERSON]} draw {_card(drawn[0])} from the stock"
            self._note(words, auto)

    @property
    def own_processes(self) -> bool:
        """Whether the bot runs in processes of its own (``cmd:``, a sandboxed file, an EAAI player)."""
        return external_of(self.bot) is not None

    def close(self) -> None:
        """Stop the bot's processes, if it has any: the server dropped this game.  Waits for a request
        the game is answering (the game's lock), so no move is cut off half way."""
        with self.lock:
            close_bot(self.bot)

    def _finish_hand(self) -> None:
        self.last_hand = showdown(self.st, self.rules, self.names)
        if self.last_hand["knocker"] < 0:
            self.last_hand["hands"][BOT] = None  # no showdown: the bot's cards stay hidden
        self.hand_over = True
        self.stage = "play"
        self.knock = {}
        self.done_st = self.st.copy()  # the table as the hand ended (end_hand moves the dealer and hand number on)
        self.history.append(
            {
                "hand_no": self.table.hand_no,
                "outcome": self.last_hand["outcome"],
                "points": list(self.last_hand["points"]),
            }
        )
        self._tell_bot_hand_over()
        self.game_over = bool(end_hand(self.st, self.rules, self.row))
        if self.game_over:
            close_bot(self.bot)  # nothing more to ask: its processes need not wait for the game to expire

    def _tell_bot_hand_over(self) -> None:
        """Tell a bot that asks (its table hooks, as in a run) what the table shows at the hand's end: its
        final view and :func:`arena.engine.showdown.table_shows`, before the next deal moves on.  A bot
        whose program fails here forfeits at its next decision, as in a run."""
        hooks = table_hooks(self.bot)
        if hooks is None:
            return
        view = np.zeros(V_SIZE, dtype=np.int64)
        build_view(self.st, self.rules, BOT, view)
        hooks.hand_over(BOT, view, table_shows(self.st), self.mem_bot, self.rng_bot)

    def _bot_moves(self) -> None:
        """Let the bot act until it is the person's turn, the person must defend, or the hand is over."""
        while not self.hand_over and self.stage == "play" and self.table.to_act == BOT:
            phase = self.table.phase
            if phase == PH_DONE:
                break
            build_view(self.st, self.rules, BOT, self.view_buf)
            try:
                answer = checked_answer(
                    self.bot.functions[phase](self.view_buf, self.params, self.mem_bot, self.rng_bot)
                )
            except Exception as exc:  # noqa: BLE001 - whatever a bot does is its forfeit, as in a run
                self._bot_forfeits(_failure(exc))
                return
            if phase in (PH_KNOCK, PH_BIG_GIN) and answer == 1:
                # The bot knocks: its melds are those it declared (a bot that asks to, as in a run: the
                # engine checked them with its answer), else the automatic showdown's; the person defends.
                self._logged(BOT, phase, 1, self.st.copy())
                hooks = table_hooks(self.bot)
                declared = hooks.declared_melds(BOT) if hooks is not None else None
                ksets, kruns = declared if declared is not None else knocker_proposal(self.st)[:2]
                self.stage = "defend"
                self.knock = {"sets": ksets, "runs": kruns, "laid": 0}
                return
            try:
                self._apply(answer)
            except IllegalAction as exc:  # the engine refused the move (and changed nothing)
                self._bot_forfeits(f"{exc} in {PHASE_FUNCTION[phase]}() (answered {answer})")
                return

    def _bot_forfeits(self, why: str) -> None:
        """The bot failed (its program crashed, timed out or wrote garbage, it raised, or it made an illegal
        move): it loses the game by forfeit, as in a run, and the person may start the next game.  Left
        as it was, the game waited for ever on a move the bot would never make."""
        self.forfeit = {"seat": BOT, "name": self.bot.name, "reason": why}
        self.row[G_FORFEIT] = BOT
        self.row[G_WINNER] = PERSON
        self._note(f"{self.bot.name} forfeits the game: {why}", {"key": "forfeit", "seat": BOT, "reason": why})
        self.done_st = self.st.copy()
        self.last_hand = None
        self.hand_over = self.game_over = True
        self.stage = "play"
        self.knock = {}
        close_bot(self.bot)

    def _check_seen(self, seen: int | None) -> None:
        """Refuse a request made from a page that showed the game before its last change (``seen``, the
        view's ``moves``; None: not said).  Another tab's move left this page behind, and its click, legal
        in the game as it now is, did what the page never showed: took the bot's newer discard from the
        pile.  Refused, the page fetches the game as it is (one ``stale`` line)."""
        if seen is not None and seen != self.moves:
            raise IllegalAction(
                "the game moved on since this page showed it (another tab?): here it is now", code="stale"
            )

    def act(
        self, action: str, card: Any = None, melds: Sequence[Sequence[int]] | None = None, seen: int | None = None
    ) -> None:
        """The person's decision; raises :class:`IllegalAction` (and changes nothing) when it is not allowed.
        ``seen``: the view's ``moves`` the request was made from (:meth:`_check_seen`)."""
        with self.lock:
            self._check_seen(seen)
            self._act(action, card, melds)
            self.moves += 1

    def _act(self, action: str, card: Any, melds: Sequence[Sequence[int]] | None) -> None:
        if action not in ACTIONS and action not in ("lay_down", "lay_off", "take_back"):
            known = [*ACTIONS, "lay_down", "lay_off", "take_back"]
            raise IllegalAction(f"unknown action {action[:40]!r} (actions: {', '.join(known)})", 400)
        if self.game_over:  # not "start the next hand": there is none
            raise IllegalAction("the game is over: start a new game")
        if self.hand_over:
            raise IllegalAction("the hand is over: start the next hand")
        if self.stage != "play":
            self._showdown_act(action, card, melds)
            return
        if action in ("lay_down", "lay_off", "take_back"):
            raise IllegalAction(f"you cannot {PHRASES[action]} now: nobody has knocked")
        phases, answer = ACTIONS[action]
        phase = self.table.phase
        needs_card = answer is None or (action == "knock" and phase == PH_DISCARD)
        if needs_card and (isinstance(card, bool) or not isinstance(card, int) or not 0 <= card < 52):
            raise IllegalAction(f"{action.replace('_', ' ')} needs a card number 0..51", 400)
        if self.table.to_act != PERSON:
            raise IllegalAction("it is not your turn")
        if phase not in phases:
            raise IllegalAction(f"you cannot {PHRASES[action]} now: {NEEDED[phase]}")
        if needs_card and (err := int(illegal_reason(self.st, self.rules, card))) != 0:
            if err == ERR_RETAKE:
                raise IllegalAction(
                    f"you cannot discard {_card(card)}: you just took it from the discard pile",
                    code="discard_just_taken",
                    card=card,
                )
            why = "that card is not in your hand" if err == ERR_NOT_IN_HAND else f"illegal move: {ERROR_TEXT[err]}"
            raise IllegalAction(why, 409)
        if action == "knock" and phase == PH_DISCARD:
            self._knock_with(card)
        elif action in ("knock", "big_gin"):
            self._logged(PERSON, phase, 1, self.st.copy())
            self.stage = "lay_down"
        else:
            self._apply(card if answer is None else answer)
            if action == "play_on" and self.table.phase == PH_KNOCK and self.table.to_act == PERSON:
                self._apply(0)
        self._bot_moves()

    def _knock_with(self, card: int) -> None:
        """Discard ``card`` and knock; refused (nothing changes) when that discard does not allow a knock."""
        if card not in knock_discards(self.st, self.rules):
            left = int(best_arrangement(self.table.hand(0) & ~(1 << card), 0)[2])
            limit = int(self.table.knock_limit)
            raise IllegalAction(
                f"cannot knock discarding {_card(card)}: {left} deadwood is left, the knock limit is {limit}",
                code="knock_discard",
                card=card,
                n=left,
                limit=limit,
            )
        self._apply(card)  # the engine now asks whether to knock (PH_KNOCK)
        self._logged(PERSON, PH_KNOCK, 1, self.st.copy())
        self.stage = "lay_down"

    def _showdown_act(self, action: str, card: Any, melds: Sequence[Sequence[int]] | None) -> None:
        if action not in STAGE_ACTIONS[self.stage]:
            need = "lay down your melds" if self.stage == "lay_down" else "lay off, lay down or pass"
            raise IllegalAction(f"you cannot {PHRASES[action]} now: {need}")
        hand = self.table.hand(PERSON)
        bot_hand = self.table.hand(BOT)
        try:
            if self.stage == "lay_down":
                ksets, kruns = meld_masks(hand, melds or [])
                if value(hand & ~(ksets | kruns)) == 0:  # gin: the bot melds, no layoffs
                    dsets, druns, _ = best_arrangement(bot_hand, 0)
                    laid = 0
                else:
                    _, laid, dsets, druns = defender_deadwood(bot_hand, ksets, kruns)
                lay_down(self.st, self.rules, ksets, kruns, int(dsets), int(druns), int(laid))
            elif action == "lay_off":
                if isinstance(card, bool) or not isinstance(card, int) or not 0 <= card < 52:
                    raise IllegalAction("lay off needs a card number 0..51", 400)
                if value(bot_hand & ~(self.knock["sets"] | self.knock["runs"])) == 0:
                    raise ArrangementError("no layoffs on a gin")
                laid = self.knock["laid"]
                self.knock["laid"] = layoff_mask(hand, self.knock["sets"], self.knock["runs"], [*_ids(laid), card])
                self.items.append({"key": "lay_off", "seat": PERSON, "card": card})
                self.events.append(f"{self.names[PERSON]} lay off {_card(card)}")
                return
            elif action == "take_back":  # the log says so: its "You lay off" lines no longer hold
                if self.knock["laid"]:
                    self.knock["laid"] = 0
                    self._note(f"{self.names[PERSON]} take back your layoffs", {"key": "take_back", "seat": PERSON})
                return
            else:
                laid = self.knock["laid"]
                if action == "pass":  # the best melds of what is left, never fewer (see the module's doc)
                    dsets, druns, _ = best_arrangement(hand & ~laid, 0)
                else:
                    dsets, druns = meld_masks(hand & ~laid, melds or [])
                lay_down(self.st, self.rules, self.knock["sets"], self.knock["runs"], dsets, druns, laid)
        except ArrangementError as exc:
            raise IllegalAction(str(exc), code=exc.code, **exc.values) from None
        self._finish_hand()

    def next_hand(self, seen: int | None = None) -> None:
        with self.lock:
            self._check_seen(seen)
            if not self.hand_over:
                raise IllegalAction("the hand is not over yet")
            if self.game_over:
                raise IllegalAction("the game is over: start a new game")
            self._deal()
            self.moves += 1

    # --- what the person sees ------------------------------------------------------------
    def _allowed(self) -> list[str]:
        if self.hand_over:
            return []
        if self.stage != "play":
            return list(STAGE_ACTIONS[self.stage])
        if self.table.to_act != PERSON:
            return []
        phase = self.table.phase
        legal = int(legal_answers(self.st, self.rules))  # the engine's query: what apply_action takes now
        out = []
        for a, (phs, answer) in ACTIONS.items():
            if phase not in phs:
                continue
            if phase == PH_DISCARD:  # a card is the answer; a knock needs a discard that allows one
                offered = bool(knock_discards(self.st, self.rules)) if a == "knock" else legal != 0
            else:
                offered = answer is not None and bool((legal >> answer) & 1)
            if offered:
                out.append(a)
        return out

    def view(self) -> dict[str, Any]:
        """The person's view: never the bot's cards (until a knock lays them out) or the stock.

        Taken under the game's lock, as a move is: a view read while another request's move runs (two
        requests at once) mixed the table before the move with the state after it, and the engine's
        questions about "the seat to act" (which discards allow a knock, the least deadwood) answered for
        the bot's hand, its cards and deadwood in the person's JSON."""
        with self.lock:
            return self._view()

    def _view(self) -> dict[str, Any]:
        t = table_state(self.done_st if self.hand_over else self.st, (PERSON,))
        me = t["hands"].pop(str(PERSON))
        del t["hands"]
        phase = self.table.phase
        allowed = self._allowed()
        mine = bool(allowed)
        out: dict[str, Any] = {
            **t,
            "session": self.id,
            "names": list(self.names),
            "preset": self.preset,
            "rules": {k: getattr(self.rules_obj, k) for k in (*ADVANCED, "oklahoma", "target")},
            "target": int(self.rules_obj.target),
            "you": me,
            "bot_cards": t["hand_sizes"][BOT],
            "your_turn": mine,
            "allowed": allowed,
            "events": self.events[-12:],
            "log": self.items[-40:],
            "history": self.history,
            "hand_over": self.hand_over,
            "game_over": self.game_over,
            "showdown": self.last_hand,
            "stage": self.stage,
            "forfeit": self.forfeit,
            "moves": self.moves,
            "knock_discards": knock_discards(self.st, self.rules) if mine and phase == PH_DISCARD else [],
            "best_deadwood": best_reachable(self.st, self.rules) if mine and phase == PH_DISCARD else -1,
        }
        if self.stage == "lay_down":
            ksets, kruns, kdw = knocker_proposal(self.st)
            out["arrange"] = {
                "role": "knocker",
                "big_gin": phase == PH_BIG_GIN,
                "proposal": [_ids(m) for m in melds_of(ksets, kruns)],
                "deadwood": kdw,
                "melds": [_ids(m) for m in melds_within(self.table.hand(0))],
            }
        elif self.stage == "defend":
            ks, kr, laid = self.knock["sets"], self.knock["runs"], self.knock["laid"]
            bot_hand = self.table.hand(BOT)
            left = self.table.hand(0) & ~laid
            ds, dr, ddw = best_arrangement(left, 0)
            out["arrange"] = {
                "role": "defender",
                "gin": value(bot_hand & ~(ks | kr)) == 0,
                "knocker_melds": [_ids(m) for m in attach(melds_of(ks, kr), laid)],
                "knocker_deadwood_cards": _ids(bot_hand & ~(ks | kr)),
                "knocker_deadwood": value(bot_hand & ~(ks | kr)),
                "laid": _ids(laid),
                "proposal": [_ids(m) for m in melds_of(int(ds), int(dr))],
                "deadwood": int(ddw),
                "melds": [_ids(m) for m in melds_within(left)],
            }
        if self.hand_over:
            # end_hand already added the points and moved on; show the finished hand's scores
            out["scores"] = list(self.last_hand["scores_after"]) if self.last_hand else out["scores"]
        if self.game_over:
            w = int(self.row[G_WINNER])  # -1: the hand cap ended the game
            out["winner"] = self.names[w] if w >= 0 else ""
            out["winner_seat"] = w  # the page's words: "you win" is not "{name} wins"
        return out


def _failure(exc: Exception) -> str:
    """Why a bot failed, in one line: a program's own reason ("crashed: exited with code 3 while asked
    draw()"), or what a bot in this process raised."""
    from arena.external.process import ExternalBotError

    if isinstance(exc, ExternalBotError):
        return str(exc)
    if isinstance(exc, AnswerTypeError):
        return str(exc)
    return f"it raised {type(exc).__name__}: {exc}"


def _card(c: int) -> str:
    from arena.engine.cards import card_str

    return card_str(int(c), True)


#: The page's name for each decision: phase -> (answer 0, answer 1); a discard is always "discard".
_KEYS = {
    PH_UPCARD_NONDEALER: ("pass_upcard", "take_upcard"),
    PH_UPCARD_DEALER: ("pass_upcard", "take_upcard"),
    PH_DRAW: ("draw_stock", "draw_pile"),
    PH_BIG_GIN: ("no_big_gin", "big_gin"),
    PH_DISCARD: ("discard", "discard"),
    PH_KNOCK: ("no_knock", "knock"),
}
