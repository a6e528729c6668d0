"""The external-bot protocol without processes: views to JSON lines and back, and checking what bots send."""

from __future__ import annotations

import base64
import dataclasses
import json

import numpy as np
import pytest

from arena.engine.actions import NUM_ACTIONS, OBS_SIZE
from arena.engine.layout import (
    PH_BIG_GIN,
    PH_DISCARD,
    PH_DRAW,
    PH_KNOCK,
    PH_UPCARD_DEALER,
    PH_UPCARD_NONDEALER,
    V_DECISION,
    V_HAND,
    V_JUST_TAKEN,
    V_PILE,
    V_PILE_N,
    V_SIZE,
    V_TOP,
)
from arena.engine.play import play_batch
from arena.engine.rules_array import rules_array
from arena.external.protocol import (
    CARD_NAMES,
    PROTOCOL_VERSION,
    ProtocolError,
    act_reply_limit,
    decode_act,
    decode_decide,
    encode_act,
    encode_actions,
    encode_decide,
    parse_actions,
    parse_answer,
    parse_hello,
    parse_melds,
)
from arena.loading.load import load_bot
from arena.settings.rules import load_rules


def _views(bot0, bot1, rules, seeds, per_phase: int) -> list[np.ndarray]:
    """Copies of the views both bots were shown, at most ``per_phase`` of each decision kind."""
    seen: list[np.ndarray] = []
    counts: dict[int, int] = {}

    def spy(fn):
        def ask(view, params, memory, rng):
            ph = int(view[V_DECISION])
            if counts.get(ph, 0) < per_phase:
                counts[ph] = counts.get(ph, 0) + 1
                seen.append(view.copy())
            return int(fn(view, params, memory, rng))

        return ask

    spies = [dataclasses.replace(b, functions=tuple(spy(f) for f in b.functions), fast=False) for b in (bot0, bot1)]
    play_batch(spies[0], spies[1], rules_array(rules), seeds, forfeit=False)
    return seen


@pytest.fixture(scope="module")
def real_views() -> list[np.ndarray]:
    """Views from real play under three rule sets (Oklahoma changes knock limits and multipliers)."""
    simple, rnd = load_bot("simple"), load_bot("random")
    views = []
    for preset, seeds in (("standard", range(0, 30)), ("oklahoma", range(30, 50)), ("eaai", range(50, 60))):
        views += _views(simple, rnd, load_rules(preset), np.arange(seeds.start, seeds.stop), 400)
        views += _views(rnd, simple, load_rules(preset), np.arange(seeds.start, seeds.stop), 400)
    # Big gin is rare in play: add one, an 11-card hand that is all melds.
    v = next(x for x in views if x[V_DECISION] == PH_DISCARD).copy()
    v[V_HAND] = sum(1 << c for c in [0, 1, 2, 3, 17, 18, 19, 33, 34, 35, 36])
    v[V_JUST_TAKEN] = -1
    v[V_DECISION] = PH_BIG_GIN
    views.append(v)
    return views


def test_view_round_trips_through_a_decide_line_at_thousands_of_real_decisions(real_views):
    """Every slot of the view survives encode -> JSON -> decode (the sandbox host relies on it)."""
    phases = {int(v[V_DECISION]) for v in real_views}
    assert phases == {PH_UPCARD_NONDEALER, PH_UPCARD_DEALER, PH_DRAW, PH_BIG_GIN, PH_DISCARD, PH_KNOCK}
    assert len(real_views) > 5000
    for i, v in enumerate(real_views):
        line = encode_decide(v.tolist(), game=i + 1, seed=2**53 - 1 - i, new_game=(i % 7 == 0), params='{"margin":1.5}')
        assert line.endswith(b"\n") and line.count(b"\n") == 1
        msg = json.loads(line)
        back = decode_decide(msg)
        assert back.dtype == np.int64 and back.shape == (V_SIZE,)
        assert np.array_equal(back, v), f"view {i} changed in the round trip"
        assert msg["game"] == i + 1 and msg["seed"] == 2**53 - 1 - i
        assert ("params" in msg) == (i % 7 == 0)


def test_decide_fields_mean_what_the_spec_says(real_views):
    """Named fields are readable without the layout: sorted card lists, names, the pile bottom first."""
    for v in real_views[::50]:
        msg = json.loads(encode_decide(v.tolist(), 1, 5, True, None))
        hand = [c for c in range(52) if (int(v[V_HAND]) >> c) & 1]
        assert msg["hand"] == hand
        assert msg["hand_names"] == [CARD_NAMES[c] for c in hand]
        assert msg["pile"] == v[V_PILE : V_PILE + v[V_PILE_N]].tolist()
        assert msg["top"] == (msg["pile"][-1] if msg["pile"] else -1) == v[V_TOP]
        assert isinstance(msg["is_dealer"], bool) and isinstance(msg["rules"]["big_gin"], bool)
        assert msg["params"] == {}
    assert CARD_NAMES[0] == "Ac" and CARD_NAMES[12] == "Kc" and CARD_NAMES[13] == "Ad" and CARD_NAMES[51] == "Ks"


@pytest.mark.parametrize(
    "line, value",
    [
        (b"0", 0),
        (b"1", 1),
        (b"37\r", 37),
        (b" 5 ", 5),
        (b"\t7\n", 7),
        (b'{"action": 12}', 12),
        (b"-1", -1),
        (b"-0", 0),
        (b"999", 999),
        (b"1000", 1000),
    ],
)
def test_integer_answers_are_accepted(line, value):
    """Legality is the engine's call: a wrong integer gets through here and forfeits there."""
    assert parse_answer(line, "discard") == value


@pytest.mark.parametrize(
    "line, reason, words",
    [
        (b"1.7", "ill-typed answer", "a float"),
        (b"1.0", "ill-typed answer", "without a decimal point"),
        (b'"1"', "ill-typed answer", "str"),
        (b"true", "ill-typed answer", "bool"),
        (b"null", "ill-typed answer", "NoneType"),
        (b"[1]", "ill-typed answer", "list"),
        (b'{"act": 1}', "ill-typed answer", 'without "action"'),
        (b'{"action": 1.5}', "ill-typed answer", "a float"),
        (b"12345678901234567890", "ill-typed answer", "out of range"),
        (b"take it", "garbled answer", "not JSON"),
        (b"", "garbled answer", "not JSON"),
        (b"\xff\xfe", "garbled answer", "not UTF-8"),
        (b'{"error": "lost my model"}', "bot error", "lost my model"),
    ],
)
def test_wrong_answers_raise_with_the_reason_first(line, reason, words):
    """The forfeit message starts with the reason, so results can be grouped by it."""
    with pytest.raises(ProtocolError) as info:
        parse_answer(line, "knock")
    assert info.value.reason == reason
    assert str(info.value).startswith(reason + ": ")
    assert words in str(info.value)


@pytest.mark.parametrize("line", [b"022", b"007", b"00", b"0022", b"+1", b"\x0c1\x0c", b"\x0b1", b"1\x0b", b"1 2"])
def test_an_answer_is_read_by_jsons_integer_grammar_and_jsons_whitespace_only(line):
    """Leading zeros, a plus sign, a vertical tab or form feed: not JSON, however short the answer."""
    with pytest.raises(ProtocolError) as info:
        parse_answer(line, "discard")
    assert info.value.reason == "garbled answer" and "is not JSON" in str(info.value)


@pytest.mark.parametrize("word", [b"NaN", b"Infinity", b"-Infinity", b'{"action": NaN}'])
def test_nan_and_infinity_are_not_json_so_they_are_garbled_answers(word):
    """Python reads them as floats; they are not JSON (the process, out of step, is started afresh)."""
    with pytest.raises(ProtocolError) as info:
        parse_answer(word, "draw")
    assert info.value.reason == "garbled answer" and "is not JSON" in str(info.value)
    with pytest.raises(ProtocolError, match="^garbled answer"):
        parse_actions(b"[1, " + word + b", 3]", 3)
    with pytest.raises(ProtocolError, match="^garbled answer"):
        parse_melds(b'{"melds": [[0, 1, ' + word + b"]]}")
    with pytest.raises(ProtocolError, match="^bad handshake"):
        parse_hello(b'{"name": "b", "protocol": 1, "params": {"k": ' + word + b"}}")


def test_an_integer_of_thousands_of_digits_is_json_an_integer_out_of_range():
    """Python refuses to read more than 4,300 digits; the answer is still JSON, an integer out of range."""
    huge = b"9" * 5000
    with pytest.raises(ProtocolError, match=r"^ill-typed answer: draw\(\) answered 9{40}\.\.\. \(5000 characters\)"):
        parse_answer(huge, "draw")
    with pytest.raises(ProtocolError, match=r"^ill-typed answer: draw\(\) answered -9{39}.*\(5001 characters\)"):
        parse_answer(b'{"action": -' + huge + b"}", "draw")
    with pytest.raises(ProtocolError, match=r"^ill-typed answer: act\(\) answered 9{40}.*out of range"):
        parse_actions(b"[1, " + huge + b", 3]", 3)
    with pytest.raises(ProtocolError, match="^ill-typed answer: melds"):
        parse_melds(b"[[0, 1, " + huge + b"]]")
    with pytest.raises(ProtocolError, match="^bad handshake: params must be"):
        parse_hello(b'{"name": "b", "protocol": 1, "params": {"k": ' + huge + b"}}")


@pytest.mark.parametrize(
    "line, parse",
    [
        (b'{"name": "b", "protocol": 1.0}', parse_hello),
        (b"-1.0", parse_melds),
        (b'{"melds": -1.0}', parse_melds),
        (b'{"melds": [[0, 1, 2.0]]}', parse_melds),
        (b'{"action": 1.0}', lambda line: parse_answer(line, "draw")),
    ],
)
def test_a_float_is_never_taken_where_the_protocol_says_integer(line, parse):
    """``1.0 == 1`` in Python: a float protocol version, or ``-1.0`` for the arena's own melds, passed."""
    with pytest.raises(ProtocolError) as info:
        parse(line)
    assert info.value.reason in ("bad handshake", "ill-typed answer")


def test_handshake_is_checked():
    ok = parse_hello(b'{"name": "my-bot_2", "protocol": 1, "params": {"margin": 2}, "description": "x\\ny"}')
    assert ok == {
        "name": "my-bot_2",
        "protocol": 1,
        "description": "x",
        "params": {"margin": 2.0},
        "hand_over": False,
        "melds": False,
        "batch": False,
    }
    for line, words in [
        (b'{"name": "b", "protocol": 2}', "protocol 2"),
        (b'{"name": "b"}', "protocol None"),
        (b'{"name": "", "protocol": 1}', "name must be"),
        (b'{"name": "a b", "protocol": 1}', "name must be"),
        (b'{"name": "b\\n", "protocol": 1}', "name must be"),  # matched whole: no final newline
        (b'{"name": "' + b"x" * 65 + b'", "protocol": 1}', "name must be"),
        (b'{"name": "b", "protocol": 1, "params": {"k": "high"}}', "params must be"),
        (b'{"name": "b", "protocol": true}', "protocol True"),
        (b"[1]", "expected a JSON object"),
        (b'{"name": "b", "protocol": 1, "batch": 1}', "batch must be true or false"),
        (b'{"name": "b", "protocol": 1, "batch": true, "melds": true}', "batch excludes"),
        (b'{"name": "b", "protocol": 1, "batch": true, "hand_over": true}', "batch excludes"),
    ]:
        with pytest.raises(ProtocolError, match=words):
            parse_hello(line)
    assert parse_hello(b'{"name": "b", "protocol": 1, "batch": true}')["batch"] is True
    with pytest.raises(ProtocolError) as info:
        parse_hello(b'{"error": "my_bot.py: not a bot"}')
    assert info.value.reason == "bot error"
    assert PROTOCOL_VERSION == 1


# --- act lines: a batch of decisions ------------------------------------------------------------


def _batch(n: int, seed: int = 0):
    g = np.random.default_rng(seed)
    obs = g.random((n, OBS_SIZE), dtype=np.float32)
    mask = g.random((n, NUM_ACTIONS)) < 0.3
    keys = g.integers(0, 2**64, size=n, dtype=np.uint64)
    return obs, mask, keys


def _b64(values, dtype: str) -> str:
    return base64.b64encode(np.array(values, dtype=dtype).tobytes()).decode()


def _field(line: bytes, key: str) -> str:
    return json.loads(line)[key]


def test_an_act_line_carries_observations_masks_and_keys_exactly():
    obs, mask, keys = _batch(5)
    obs[1:3] = 0.0  # rows of zeros, and rows of none, cross as they are
    obs[0, :3] = [np.float32(1 / 3), np.float32(1e-38), np.float32(0.1)]  # bits, not decimals, cross the pipe
    keys[0] = np.uint64(2**64 - 1)
    line = encode_act(obs, mask, keys)
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    got = decode_act(json.loads(line), OBS_SIZE, NUM_ACTIONS)
    for sent, back, dtype in zip((obs, mask, keys), got, (np.float32, np.bool_, np.uint64)):
        assert back.dtype == dtype and np.array_equal(back, sent)


@pytest.mark.parametrize(
    "change, words",
    [
        ({"n": 0}, "n must be"),
        ({"n": True}, "n must be"),
        ({"n": 4}, "mask holds"),
        ({"mask": "not base64!"}, "mask is not base64"),
        ({"keys": 7}, "keys must be a base64 string"),
        ({"obs_at": "AAAA"}, "obs_at holds 3 bytes, not whole <u4 items"),
        ({"obs_at": _b64([0, 1], "<u4")}, "obs_val holds"),
        ({"obs_at": _b64([0, 3 * OBS_SIZE], "<u4"), "obs_val": _b64([1, 1], "<f4")}, "below 1134"),
        ({"obs_at": _b64([5, 5], "<u4"), "obs_val": _b64([1, 1], "<f4")}, "increasing"),
        ({"mask": _field(encode_act(*_batch(3)), "mask").replace("A", "B")}, "0 or 1"),
    ],
)
def test_a_wrong_act_line_is_refused_naming_the_field(change, words):
    msg = {**json.loads(encode_act(*_batch(3))), **change}
    with pytest.raises(ValueError, match=words):
        decode_act(msg, OBS_SIZE, NUM_ACTIONS)


def test_the_answer_to_an_act_line_is_a_list_of_ids_and_fits_the_reply_limit():
    ids = np.array([0, 57, -1, 2**40, -(2**40)], dtype=np.int64)
    text = encode_actions(ids)
    assert text == f"[0,57,-1,{2**31 - 1},{-(2**31)}]"  # clipped to 32 bits: still not an action id
    assert parse_actions(text.encode(), 5).tolist() == [0, 57, -1, 2**31 - 1, -(2**31)]
    worst = encode_actions(np.full(1000, -(2**31), dtype=np.int64))
    assert len(worst) <= act_reply_limit(1000)


@pytest.mark.parametrize(
    "line, reason, words",
    [
        (b"[1, 2]", "ill-typed answer", "2 action ids for 3 observations"),
        (b"[1, 2, 3, 4]", "ill-typed answer", "4 action ids for 3 observations"),
        (b"[1, 2.0, 3]", "ill-typed answer", "a float"),
        (b"[1, true, 3]", "ill-typed answer", "bool"),
        (b'[1, "2", 3]', "ill-typed answer", "str"),
        (b"[1, [2], 3]", "ill-typed answer", "list"),
        (b"[1, 2, 99999999999]", "ill-typed answer", "out of range"),
        (b"3", "ill-typed answer", "a list of 3 action ids"),
        (b'{"actions": [1, 2, 3]}', "ill-typed answer", "a list of 3 action ids"),
        (b"[1, 2,", "garbled answer", "not JSON"),
        (b"\xff[1,2,3]", "garbled answer", "not UTF-8"),
        (b"[" * 5000 + b"]" * 5000, "garbled answer", "nested too deeply"),
        (b'{"error": "raised ValueError: no model"}', "bot error", "no model"),
    ],
)
def test_a_wrong_answer_to_an_act_line_raises_with_the_reason_first(line, reason, words):
    with pytest.raises(ProtocolError) as info:
        parse_actions(line, 3)
    assert info.value.reason == reason and str(info.value).startswith(reason + ": ")
    assert words in str(info.value)


def _documented_fields(section: str) -> set[str]:
    """The field names in the first column of the first table after ``section`` in docs/PROTOCOL.md."""
    import re
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "docs" / "PROTOCOL.md").read_text()
    rest = text[text.index(section) :]
    table = rest[rest.index("| field |") :].split("\n\n", 1)[0]
    names: set[str] = set()
    for row in table.splitlines()[2:]:
        names |= set(re.findall(r"`([a-z_*]+)`", row.split("|")[1]))
    return names


class _HandOvers:
    """Table hooks (:class:`arena.engine.contract.TableHooks`) keeping what the engine tells at each hand's end."""

    def __init__(self) -> None:
        self.seen: list[tuple[np.ndarray, dict]] = []

    def declared_melds(self, seat: int) -> None:
        return None

    def hand_over(self, seat, view, shown, memory, rng) -> None:
        self.seen.append((view.copy(), dict(shown)))


def test_every_field_of_a_hand_over_line_is_documented():
    """The line carried ``new_game``, ``seed`` and ``is_dealer``, which the protocol did not name."""
    from arena.external.protocol import encode_hand_over

    simple, spy = load_bot("simple"), _HandOvers()

    def first(view, params, memory, rng):
        return int(simple.functions[0](view, params, memory, rng))

    first.table_hooks = spy  # type: ignore[attr-defined]
    hooked = dataclasses.replace(simple, functions=(first, *simple.functions[1:]), fast=False)
    play_batch(hooked, simple, rules_array(load_rules("standard")), np.arange(3))
    view, shown = spy.seen[-1]
    sent = set(json.loads(encode_hand_over(view.tolist(), 1, shown, 5, True))) - {"type"}
    sent = {k[: k.index("_") + 1] + "*" if k.startswith(("opp_", "my_")) and "score" not in k else k for k in sent}
    documented = _documented_fields("## 3. The end of a hand")
    assert sent == documented, sent ^ documented
