"""The external-bot protocol: JSON lines between the arena and a bot program.

The spec for bot authors is ``docs/PROTOCOL.md``; this module is its one
implementation on the arena side: a view array (``V_*`` of
:mod:`arena.engine.layout`) to a ``decide`` line and back, the handshake, and the
checks on what a bot answers.  Everything coming from a bot is untrusted:
each check raises :class:`ProtocolError` whose message starts with the
reason ("garbled answer: ...", "ill-typed answer: ...").

Speed matters (a game asks one bot about 140 times), so a ``decide`` line
is assembled from cached pieces instead of ``json.dumps`` of a dict: the
card lists come from per-suit tables, the rules object is cached per rules
array.  :func:`decode_decide` is the plain inverse and is tested against it.
"""

from __future__ import annotations

import binascii
import json
import math
import re
from functools import cache, lru_cache
from typing import Any

import numpy as np

from arena.engine.cards import RANKS, SUITS
from arena.engine.contract import PHASE_FUNCTION
from arena.engine.layout import (
    PH_BIG_GIN,
    PH_DISCARD,
    PH_DRAW,
    PH_KNOCK,
    PH_UPCARD_DEALER,
    PH_UPCARD_NONDEALER,
    R_SIZE,
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
    V_SIZE,
    V_STOCK_N,
    V_TOP,
    V_TURN,
    V_UPCARD,
)
from arena.engine.rules_array import rules_array, rules_from_array

PROTOCOL_VERSION = 1

#: The decision asked in each phase (PH_*): the bot contract's own table, so the
#: protocol names decisions exactly as in-process bots' functions are named.
DECISION_OF_PHASE = PHASE_FUNCTION

#: Longest line accepted from a bot (an answer is a few bytes; a hello a few hundred).
MAX_LINE = 64 * 1024
MAX_NAME = 64
#: A bot's name in its handshake, checked with ``fullmatch`` (``$`` would also pass a name with a final newline).
_NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+\-]*")

CARD_NAMES = tuple(RANKS[c % 13] + SUITS[c // 13] for c in range(52))

# View fields that are card sets (masks in the view, sorted card lists on the wire).
_CARD_SETS = (
    ("opp_taken", V_OPP_TAKEN),
    ("opp_discarded", V_OPP_DISCARDED),
    ("opp_passed", V_OPP_PASSED),
    ("my_taken", V_MY_TAKEN),
    ("my_discarded", V_MY_DISCARDED),
    ("my_passed", V_MY_PASSED),
)
# View fields that are plain integers on the wire.
_NUMBERS = (
    ("stock", V_STOCK_N),
    ("top", V_TOP),
    ("just_taken", V_JUST_TAKEN),
    ("upcard", V_UPCARD),
    ("my_score", V_MY_SCORE),
    ("opp_score", V_OPP_SCORE),
    ("knock_limit", V_KNOCK_LIMIT),
    ("multiplier", V_MULT),
    ("seat", V_SEAT),
    ("turn", V_TURN),
    ("hand_no", V_HAND_NO),
)


class ProtocolError(Exception):
    """A bot broke the protocol; the message starts with the reason."""

    def __init__(self, reason: str, detail: str):
        super().__init__(f"{reason}: {detail}")
        self.reason = reason
        self.detail = detail


# --- encoding a view ------------------------------------------------------------------


@cache
def _suit_tables() -> tuple[tuple[tuple[str, ...], ...], tuple[tuple[str, ...], ...]]:
    """Per suit, for each 13-bit mask: its card numbers and its quoted names, comma-joined."""
    nums, names = [], []
    for s in range(4):
        n_row, q_row = [], []
        for m in range(1 << 13):
            cards = [13 * s + r for r in range(13) if (m >> r) & 1]
            n_row.append(",".join(map(str, cards)))
            q_row.append(",".join(f'"{CARD_NAMES[c]}"' for c in cards))
        nums.append(tuple(n_row))
        names.append(tuple(q_row))
    return tuple(nums), tuple(names)


def _join4(table, mask: int) -> str:
    parts = [
        p
        for p in (
            table[0][mask & 0x1FFF],
            table[1][(mask >> 13) & 0x1FFF],
            table[2][(mask >> 26) & 0x1FFF],
            table[3][(mask >> 39) & 0x1FFF],
        )
        if p
    ]
    return "[" + ",".join(parts) + "]"


# Card sets seen recently, as JSON text (most sets repeat from one decision to the next).
_NUMS_CACHE: dict[int, str] = {}
_NAMES_CACHE: dict[int, str] = {}
_CACHE_LIMIT = 1 << 16


def cards_json(mask: int) -> str:
    """``[3,14,40]``: the cards of a mask, in increasing order."""
    text = _NUMS_CACHE.get(mask)
    if text is None:
        if len(_NUMS_CACHE) >= _CACHE_LIMIT:
            _NUMS_CACHE.clear()
        text = _NUMS_CACHE[mask] = _join4(_suit_tables()[0], mask)
    return text


def names_json(mask: int) -> str:
    """``["4c","2d","2s"]``: the names of the cards of a mask, in the same order."""
    text = _NAMES_CACHE.get(mask)
    if text is None:
        if len(_NAMES_CACHE) >= _CACHE_LIMIT:
            _NAMES_CACHE.clear()
        text = _NAMES_CACHE[mask] = _join4(_suit_tables()[1], mask)
    return text


@lru_cache(maxsize=64)
def rules_json(rules: tuple[int, ...]) -> str:
    """The ``rules`` object of a decide line for a rules array (as a tuple)."""

    return json.dumps(rules_from_array(np.array(rules, dtype=np.int64)).to_dict(), separators=(",", ":"))


_STR = {i: str(i) for i in range(-1, 53)}
# The fields that stay the same for a whole hand (scores, seat, rules ...), as JSON text.
_HAND_FIELDS: dict[tuple, str] = {}


def _hand_fields(v: list[int]) -> str:
    key = (
        v[V_MY_SCORE],
        v[V_OPP_SCORE],
        v[V_KNOCK_LIMIT],
        v[V_MULT],
        v[V_SEAT],
        v[V_HAND_NO],
        v[V_IS_DEALER],
        v[V_UPCARD],
        *v[V_RULES : V_RULES + R_SIZE],
        *v[V_SHOWN:V_SIZE],
    )
    text = _HAND_FIELDS.get(key)
    if text is None:
        if len(_HAND_FIELDS) >= _CACHE_LIMIT:
            _HAND_FIELDS.clear()
        text = _HAND_FIELDS[key] = (
            f'"upcard":{v[V_UPCARD]},"my_score":{v[V_MY_SCORE]},"opp_score":{v[V_OPP_SCORE]},'
            f'"knock_limit":{v[V_KNOCK_LIMIT]},"multiplier":{v[V_MULT]},"seat":{v[V_SEAT]},'
            f'"hand_no":{v[V_HAND_NO]},"is_dealer":{"true" if v[V_IS_DEALER] else "false"},'
            f"{_shown_json(v)}"
            f'"rules":{rules_json(tuple(v[V_RULES : V_RULES + R_SIZE]))}}}\n'
        )
    return text


#: The ``shown`` object of a decide line: the ``V_SHOWN*`` slots (the last hand's end), by name.
_SHOWN_NUMBERS = (
    ("hand_no", V_SHOWN),
    ("outcome", V_SHOWN_OUTCOME),
    ("knocker", V_SHOWN_KNOCKER),
    ("my_points", V_SHOWN_MY_POINTS),
    ("opp_points", V_SHOWN_OPP_POINTS),
    ("my_deadwood", V_SHOWN_MY_DEADWOOD),
    ("opp_deadwood", V_SHOWN_OPP_DEADWOOD),
)
_SHOWN_CARDS = (
    ("my_hand", V_SHOWN_MY_HAND),
    ("opp_hand", V_SHOWN_OPP_HAND),
    ("knock_sets", V_SHOWN_KNOCK_SETS),
    ("knock_runs", V_SHOWN_KNOCK_RUNS),
    ("laid_off", V_SHOWN_LAID_OFF),
    ("def_sets", V_SHOWN_DEF_SETS),
    ("def_runs", V_SHOWN_DEF_RUNS),
)


def _shown_json(v: list[int]) -> str:
    """``"shown":{...},`` once a hand of the game has ended (the view's V_SHOWN slots), else nothing.

    ``hand_no`` is the number of the hand shown (the slot holds it + 1).
    """
    if not v[V_SHOWN]:
        return ""
    parts = [f'"{k}":{v[i] - (1 if i == V_SHOWN else 0)}' for k, i in _SHOWN_NUMBERS]
    parts += [f'"{k}":{cards_json(v[i])}' for k, i in _SHOWN_CARDS]
    return '"shown":{' + ",".join(parts) + "},"


def encode_decide(v: list[int], game: int, seed: int, new_game: bool, params: str | None = None) -> bytes:
    """The ``decide`` line (with its newline) for view ``v`` (``view.tolist()``).

    ``params`` is the JSON object of the bot's parameters; it is sent with
    the first decision of each game only.
    """
    hand = v[V_HAND]
    c = cards_json
    st = _STR
    return (
        f'{{"type":"decide","decision":"{DECISION_OF_PHASE[v[V_DECISION]]}","game":{game},'
        f'"new_game":{"true" if new_game else "false"},"seed":{seed},'
        f"{_params_field(new_game, params)}"
        f'"hand":{c(hand)},"hand_names":{names_json(hand)},'
        f'"pile":[{",".join([st[x] for x in v[V_PILE : V_PILE + v[V_PILE_N]]])}],'
        f'"stock":{v[V_STOCK_N]},"top":{v[V_TOP]},"just_taken":{v[V_JUST_TAKEN]},"turn":{v[V_TURN]},'
        f'"opp_taken":{c(v[V_OPP_TAKEN])},"opp_discarded":{c(v[V_OPP_DISCARDED])},'
        f'"opp_passed":{c(v[V_OPP_PASSED])},"my_taken":{c(v[V_MY_TAKEN])},'
        f'"my_discarded":{c(v[V_MY_DISCARDED])},"my_passed":{c(v[V_MY_PASSED])},'
        f"{_hand_fields(v)}"
    ).encode()


def _params_field(new_game: bool, params: str | None) -> str:
    return f'"params":{params or "{}"},' if new_game else ""


# --- decoding (the sandbox host, and tests) ---------------------------------------------------


def _mask(cards: list[int]) -> int:
    m = 0
    for c in cards:
        m |= 1 << c
    return m


_RULES_LISTS: dict[tuple, list[int]] = {}
_PHASE_OF = {"draw": PH_DRAW, "big_gin": PH_BIG_GIN, "discard": PH_DISCARD, "knock": PH_KNOCK}


_LAST_RULES: list = [None, None]


def _rules_list(rules: dict[str, Any]) -> list[int]:
    if rules == _LAST_RULES[0]:  # the same rules as last time: the usual case
        return _LAST_RULES[1]
    key = tuple(rules.items())
    out = _RULES_LISTS.get(key)
    if out is None:
        from arena.settings.rules import Rules

        out = _RULES_LISTS[key] = rules_array(Rules(**rules)).tolist()
    _LAST_RULES[:] = [rules, out]
    return out


def decode_decide(msg: dict[str, Any]) -> np.ndarray:
    """The view array a ``decide`` message describes (the inverse of :func:`encode_decide`)."""
    v = [0] * V_SIZE
    v[V_HAND] = _mask(msg["hand"])
    for k, i in _CARD_SETS:
        v[i] = _mask(msg[k])
    for k, i in _NUMBERS:
        v[i] = msg[k]
    dealer = msg["is_dealer"]
    v[V_IS_DEALER] = 1 if dealer else 0
    decision = msg["decision"]
    if decision == "take_upcard":
        v[V_DECISION] = PH_UPCARD_DEALER if dealer else PH_UPCARD_NONDEALER
    else:
        v[V_DECISION] = _PHASE_OF[decision]
    pile = msg["pile"]
    v[V_PILE_N] = len(pile)
    v[V_PILE : V_PILE + 52] = pile + [-1] * (52 - len(pile))
    v[V_RULES : V_RULES + R_SIZE] = _rules_list(msg["rules"])
    shown = msg.get("shown")
    if shown:
        for k, i in _SHOWN_NUMBERS:
            v[i] = shown[k] + (1 if i == V_SHOWN else 0)
        for k, i in _SHOWN_CARDS:
            v[i] = _mask(shown[k])
    return np.array(v, dtype=np.int64)


# --- what a bot sends -------------------------------------------------------------------------


def _not_json(word: str) -> Any:
    """Python reads ``NaN``, ``Infinity`` and ``-Infinity`` as floats; JSON has no such words."""
    raise ValueError(f"{word} is not JSON")


class _LongInt(int):
    """An integer of more digits than Python reads at once (valid JSON, but out of every range of the
    protocol): its first digits stand for it, which keep it out of range, and ``chars`` is its length."""

    chars = 0


def _long_int(text: str) -> int:
    if len(text) <= _LONG_DIGITS:
        return int(text)
    n = _LongInt(text[:_LONG_DIGITS])
    n.chars = len(text)
    return n


#: Digits of an integer read as they are: far past 2^64, and within Python's own limit (4,300).
_LONG_DIGITS = 40
_DECODER = json.JSONDecoder(parse_constant=_not_json)
_LONG_DECODER = json.JSONDecoder(parse_constant=_not_json, parse_int=_long_int)


def _loads(line: bytes, what: str) -> Any:
    """The JSON value of a line; a line that isn't one is a ``bad handshake`` in the handshake, else a
    ``garbled answer`` (the reasons PROTOCOL.md lists).

    Only JSON passes: not ``NaN`` or ``Infinity``, which Python reads as floats (an answer would be an
    ill-typed float, and the process, out of step, would play on).  An integer too long for Python to
    read (past 4,300 digits) is still JSON: it is read again as a :class:`_LongInt`, out of range
    wherever it stands, so it is refused as ill-typed like any other integer out of range.
    """
    reason = "bad handshake" if what == "the handshake" else "garbled answer"
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError:
        raise ProtocolError(reason, f"{what} is not UTF-8: {_show(line)}") from None
    try:
        try:
            return _DECODER.decode(text)
        except ValueError as exc:
            if "digits" not in str(exc):
                raise
            return _LONG_DECODER.decode(text)
    except ValueError:
        raise ProtocolError(reason, f"{what} is not JSON: {_show(line)}") from None
    except RecursionError:  # "[[[[...]]]]" nested past Python's limit
        raise ProtocolError(reason, f"{what} is JSON nested too deeply: {_show(line)}") from None


def _int_text(value: int) -> str:
    """An integer a bot sent, for a message: at most 40 digits, and its length past that."""
    chars = value.chars if isinstance(value, _LongInt) else len(str(value))
    return str(value) if chars <= 40 else str(value)[:40] + f"... ({chars} characters)"


def _show(line: bytes, limit: int = 80) -> str:
    text = line.decode("utf-8", "replace")
    return repr(text if len(text) <= limit else text[:limit] + "...")


def printable(text: str) -> str:
    """A bot's text made safe to print: every character that is not printable (a control character: ESC
    of a terminal escape, a carriage return or newline that would forge a line of the arena's, a bidi
    override) is written as its escape, as :func:`repr` writes it."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def _bot_error(value: Any, limit: int) -> str:
    """The text of a bot's ``{"error": ...}``: at most ``limit`` characters of it, made printable."""
    return printable(str(value)[:limit])


#: The usual answers as a bot writes them, read by one look-up: the integers 0..999 exactly as JSON
#: writes them (no sign, no leading zero, no space).  Any other line is left to the JSON reader.
_PLAIN_ANSWERS = {str(i).encode(): i for i in range(1000)}


def parse_answer(line: bytes, decision: str) -> int:
    """The action in a bot's answer line (without its newline).

    An answer is a JSON integer (``1``, ``23``), or an object ``{"action": 23}``.
    ``{"error": "why"}`` resigns the game.  Anything else raises
    :class:`ProtocolError`: "garbled answer" (not JSON), "ill-typed answer"
    (JSON but not an integer: ``1.7``, ``"1"``, ``true``), "bot error"
    (the bot resigned).  Whether the integer is a legal move is the engine's
    call.
    """
    fast = _PLAIN_ANSWERS.get(line)  # the common case: 0, 1 or a card, as JSON writes them
    if fast is not None:
        return fast
    value = _loads(line, f"the answer to {decision}()")
    if isinstance(value, dict):
        if "error" in value:
            raise ProtocolError("bot error", f"{decision}(): {_bot_error(value['error'], 200)}")
        if "action" not in value:
            raise ProtocolError("ill-typed answer", f'{decision}() answered an object without "action": {_show(line)}')
        value = value["action"]
    if isinstance(value, bool) or not isinstance(value, int):
        kind = "a float" if isinstance(value, float) else type(value).__name__
        if isinstance(value, float) and math.isfinite(value) and value.is_integer():
            kind = "a float (write it without a decimal point)"
        raise ProtocolError("ill-typed answer", f"{decision}() must answer an integer, got {kind}: {_show(line)}")
    if not -(2**31) <= value < 2**31:
        raise ProtocolError("ill-typed answer", f"{decision}() answered {_int_text(value)}, out of range")
    return value


def hello_line(limits: dict[str, Any]) -> bytes:
    from arena import __version__

    return (
        json.dumps(
            {"type": "hello", "protocol": PROTOCOL_VERSION, "arena": f"gin-arena {__version__}", "limits": limits},
            separators=(",", ":"),
        )
        + "\n"
    ).encode()


def _float_value(v: Any) -> bool:
    """``v`` is a JSON number that is a finite float: an integer past a float's range (``1e400`` written
    out as 401 digits, valid JSON) is not, and must not raise OverflowError from the check itself."""
    if isinstance(v, (bool, _LongInt)) or not isinstance(v, (int, float)):
        return False
    try:
        return math.isfinite(float(v))
    except OverflowError:
        return False


def parse_hello(line: bytes) -> dict[str, Any]:
    """Check a bot's handshake answer; returns {name, protocol, description, params}.

    Raises :class:`ProtocolError` ("bad handshake", or "bot error" when the
    bot answered ``{"error": ...}``, e.g. a sandboxed file that is not a bot).
    """
    value = _loads(line, "the handshake")
    if not isinstance(value, dict):
        raise ProtocolError("bad handshake", f'expected a JSON object with "name" and "protocol", got {_show(line)}')
    if "error" in value:
        raise ProtocolError("bot error", _bot_error(value["error"], 500))
    version = value.get("protocol")
    if type(version) is not int or version != PROTOCOL_VERSION:  # an integer: not 1.0, nor true
        raise ProtocolError(
            "bad handshake", f"the bot speaks protocol {version!r}; this arena speaks {PROTOCOL_VERSION}"
        )
    name = value.get("name")
    if not isinstance(name, str) or not name or len(name) > MAX_NAME or not _NAME_RE.fullmatch(name):
        raise ProtocolError(
            "bad handshake",
            f"name must be 1-{MAX_NAME} letters, digits or _ . + - (starting with a letter or digit), got {name!r}",
        )
    description = value.get("description", "")
    if not isinstance(description, str):
        raise ProtocolError("bad handshake", "description must be a string")
    wants = {}
    for key in WANTS:
        flag = value.get(key, False)
        if not isinstance(flag, bool):
            raise ProtocolError("bad handshake", f"{key} must be true or false, got {flag!r}")
        wants[key] = flag
    if wants["batch"] and (wants["hand_over"] or wants["melds"]):
        raise ProtocolError("bad handshake", "batch excludes hand_over and melds: a batched bot gets act lines only")
    params = value.get("params", {})
    if not isinstance(params, dict) or not all(isinstance(k, str) and _float_value(v) for k, v in params.items()):
        raise ProtocolError("bad handshake", "params must be an object of name: number (a finite float)")
    odd = next((k for k in params if not k.isprintable()), None)
    if odd is not None:  # a name is shown as it is (check-bot, the report): no terminal escapes in it
        raise ProtocolError("bad handshake", f"a parameter's name holds a control character: {odd[:40]!r}")
    return {
        "name": name,
        "protocol": version,
        "description": printable(description.strip().splitlines()[0][:200]) if description.strip() else "",
        "params": {k: float(v) for k, v in params.items()},
        **wants,
    }


# --- the end of a hand, and a knocker's own melds ------------------------------------------------

#: What a bot may ask for in its hello: ``hand_over`` lines after each hand, the ``melds`` decision,
#: ``act`` lines (a batch of decisions as observations: a trained policy, see below).
WANTS = ("hand_over", "melds", "batch")


def encode_hand_over(v: list[int], game: int, shown: dict[str, Any], seed: int = 0, new_game: bool = False) -> bytes:
    """The ``hand_over`` line for seat view ``v`` (at the hand's end) and what the table shows.

    The seat's final picture (its hand, the pile, the stock, what each player took, discarded
    and passed) as in a ``decide`` line, then :func:`arena.engine.showdown.table_shows`.
    ``new_game``: no question of this game came before (the hand ended before the seat's turn).
    """
    msg: dict[str, Any] = {"type": "hand_over", "game": game, "new_game": new_game, "seed": seed, "seat": v[V_SEAT]}
    msg["is_dealer"] = bool(v[V_IS_DEALER])
    msg["hand"] = _cards_of(v[V_HAND])
    msg["pile"] = v[V_PILE : V_PILE + v[V_PILE_N]]
    for k, i in _CARD_SETS:
        msg[k] = _cards_of(v[i])
    for k, i in _NUMBERS:
        if k != "seat":
            msg[k] = v[i]
    msg.update(shown)
    return (json.dumps(msg, separators=(",", ":")) + "\n").encode()


def _cards_of(mask: int) -> list[int]:
    return [c for c in range(52) if (mask >> c) & 1]


def parse_melds(line: bytes) -> list[list[int]] | None:
    """The melds in an answer to the ``melds`` decision, or None for the automatic arrangement.

    An answer is ``{"melds": [[0, 1, 2], [13, 26, 39]]}`` (card lists), or ``null``, ``-1`` or
    ``{"melds": null}`` for the arena's own arrangement.  Whether the melds are legal is the
    engine's call (:func:`arena.engine.showdown.check_declaration`).
    """
    value = _loads(line, "the answer to melds()")
    if isinstance(value, dict):
        if "error" in value:
            raise ProtocolError("bot error", f"melds(): {_bot_error(value['error'], 200)}")
        if "melds" not in value:
            raise ProtocolError("ill-typed answer", f'melds() answered an object without "melds": {_show(line)}')
        value = value["melds"]
    if value is None or (type(value) is int and value == -1):  # an integer: not -1.0
        return None
    if (
        not isinstance(value, list)
        or len(value) > 11
        or not all(
            isinstance(m, list) and len(m) <= 11 and all(type(c) is int and -(2**31) <= c < 2**31 for c in m)
            for m in value
        )
    ):
        raise ProtocolError("ill-typed answer", f"melds() must answer a list of card lists: {_show(line)}")
    return value


# --- a batch of decisions: the ``act`` line of a batched policy ----------------------------------

#: Longest answer to an ``act`` line of ``n`` rows: :func:`act_reply_limit`.
ACT_REPLY_BASE = 1024
ACT_REPLY_PER_ROW = 12  # "-2147483648," at most per id


def act_reply_limit(n: int) -> int:
    """The longest answer accepted to an ``act`` line of ``n`` rows (the reply is bounded before it is parsed)."""
    return ACT_REPLY_BASE + ACT_REPLY_PER_ROW * n


def _b64(a: np.ndarray, dtype: str) -> bytes:
    return binascii.b2a_base64(np.ascontiguousarray(a, dtype=dtype).data, newline=False)


def encode_act(obs: np.ndarray, mask: np.ndarray, keys: np.ndarray) -> bytes:
    """The ``act`` line (with its newline) for a batch of ``n`` rows, each array base64 of its little-endian bytes.

    The observations (``float32[n, OBS_SIZE]``, most entries 0) go sparse: ``obs_at`` the flat
    indices (uint32, increasing) of the entries that are not 0, ``obs_val`` their values (float32);
    ``mask`` one byte per action (0 or 1), ``keys`` the rows' random keys (uint64).
    """
    flat = np.ascontiguousarray(obs, dtype=np.float32).reshape(-1)
    at = np.flatnonzero(flat)
    return b"".join(
        (
            b'{"type":"act","n":%d,"obs_at":"' % obs.shape[0],
            _b64(at, "<u4"),
            b'","obs_val":"',
            _b64(flat[at], "<f4"),
            b'","mask":"',
            _b64(mask, "u1"),
            b'","keys":"',
            _b64(keys, "<u8"),
            b'"}\n',
        )
    )


def _unb64(msg: dict[str, Any], key: str, dtype: str, count: int | None) -> np.ndarray:
    """Field ``key`` of an ``act`` message: base64 of ``count`` items of ``dtype`` (any whole number if None)."""
    text = msg.get(key)
    if not isinstance(text, str):
        raise ValueError(f"{key} must be a base64 string")
    try:
        data = binascii.a2b_base64(text, strict_mode=True)
    except (binascii.Error, ValueError):
        raise ValueError(f"{key} is not base64") from None
    size = np.dtype(dtype).itemsize
    if (count is None and len(data) % size) or (count is not None and len(data) != size * count):
        raise ValueError(f"{key} holds {len(data)} bytes, not {'whole' if count is None else count} {dtype} items")
    return np.frombuffer(data, dtype=dtype)


def decode_act(msg: dict[str, Any], obs_size: int, num_actions: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(obs ``float32[n, obs_size]``, mask ``bool[n, num_actions]``, keys ``uint64[n]``) of an ``act`` message
    (the inverse of :func:`encode_act`); raises ValueError naming the field that does not fit."""
    n = msg.get("n")
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"n must be an integer >= 1, got {n!r}")
    at = _unb64(msg, "obs_at", "<u4", None)
    val = _unb64(msg, "obs_val", "<f4", len(at))
    mask = _unb64(msg, "mask", "u1", n * num_actions)
    keys = _unb64(msg, "keys", "<u8", n)
    if at.size and (int(at[-1]) >= n * obs_size or (np.diff(at.astype(np.int64)) <= 0).any()):
        raise ValueError(f"obs_at must be increasing indices below {n * obs_size}")
    if mask.max(initial=0) > 1:
        raise ValueError("mask entries must be 0 or 1")
    obs = np.zeros(n * obs_size, dtype=np.float32)
    obs[at] = val
    # Native-order copies the policy may write into (frombuffer's arrays are read-only views).
    return obs.reshape(n, obs_size), mask.reshape(n, num_actions).astype(np.bool_), keys.astype(np.uint64)


def encode_actions(ids: np.ndarray) -> str:
    """The answer to an ``act`` line: the action ids as a JSON list (ints out of 32 bits clipped to its range)."""
    clipped = np.clip(np.asarray(ids, dtype=np.int64), -(2**31), 2**31 - 1)
    return "[" + ",".join(map(str, clipped.tolist())) + "]"


def parse_actions(line: bytes, n: int) -> np.ndarray:
    """The ``n`` action ids of an answer to an ``act`` line (a JSON list of integers), as int64.

    The caller has bounded the line (:func:`act_reply_limit`).  ``{"error": "why"}`` resigns the games
    of the batch ("bot error"); not JSON is a "garbled answer"; JSON that is not a list of ``n``
    integers is an "ill-typed answer".  Whether an id is legal is the engine's call.
    """
    value = _loads(line, "the answer to act()")
    if isinstance(value, dict) and "error" in value:
        raise ProtocolError("bot error", f"act(): {_bot_error(value['error'], 200)}")
    if not isinstance(value, list):
        raise ProtocolError("ill-typed answer", f"act() must answer a list of {n} action ids, got {_show(line)}")
    if len(value) != n:
        raise ProtocolError("ill-typed answer", f"act() answered {len(value)} action ids for {n} observations")
    for a in value:
        if type(a) is not int and not isinstance(a, _LongInt):  # bool and float are not action ids
            kind = "a float" if isinstance(a, float) else type(a).__name__
            raise ProtocolError("ill-typed answer", f"act() must answer integer action ids, got {kind}: {_show(line)}")
        if not -(2**31) <= a < 2**31:
            raise ProtocolError("ill-typed answer", f"act() answered {_int_text(a)}, out of range")
    return np.array(value, dtype=np.int64)
