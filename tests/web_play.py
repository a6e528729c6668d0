"""A person's side of the play server's HTTP API, for tests: one request, and a whole game played out."""

from __future__ import annotations

import json
import random
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import Any


def call(srv, method, path, body=None, raw=None):
    """``(status, answer)`` of one request to ``srv`` (JSON answers decoded)."""
    data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
    req = urllib.request.Request(srv.url.rstrip("/") + path, data=data, method=method)
    req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=180) as r:
            return r.status, json.loads(r.read()) if "json" in r.headers["Content-Type"] else r.read()
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def play_to_the_end(
    srv, body: dict[str, Any], seed: int = 7, each: Callable[[dict[str, Any]], None] | None = None
) -> tuple[dict[str, Any], int, set[str], int]:
    """Start a game with ``body`` and play the person's side to its end, by a plain rule (discard the
    highest deadwood, knock when allowed, lay down the proposed melds).  ``each`` sees every view.
    Returns the last view, the hands played, their outcomes and the knocks laid down."""
    rnd = random.Random(seed)
    status, v = call(srv, "POST", "/api/new", body)
    assert status == 200, v
    hands, outcomes, knocks = 0, set(), 0
    for _ in range(5000):
        if each is not None:
            each(v)
        if v["hand_over"]:
            hands += 1
            sd = v["showdown"]
            outcomes.add(sd["outcome"])
            assert sum(sd["points"]) >= 0 and v["scores"] == sd["scores_after"]
            if sd["knocker"] >= 0:
                assert sd["line"] and sd["hands"][1] is not None  # both hands laid out
            if v["game_over"]:
                break
            v = call(srv, "POST", "/api/next", {})[1]
            continue
        assert v["your_turn"] and v["allowed"], v  # the bot moved until it was our turn
        allowed = v["allowed"]
        if v["stage"] != "play":  # a knock: lay down the proposed melds (knocker) or own melds (defender)
            assert set(allowed) >= {"lay_down"}
            status, v = call(srv, "POST", "/api/act", {"action": "lay_down", "melds": v["arrange"]["proposal"]})
            assert status == 200 and v["hand_over"], v
            knocks += 1
            continue
        if "knock" in allowed and v["phase"] == "knock":
            act, card = "knock", None
        elif "knock" in allowed:  # knock from the discard phase, with the discard the engine allows
            act, card = "knock", v["knock_discards"][0]
        elif "discard" in allowed:
            act, card = "discard", max(v["you"]["deadwood_cards"] or [c["id"] for c in v["you"]["cards"]])
            if card == v["just_taken"]:
                card = next(c["id"] for c in v["you"]["cards"] if c["id"] != card)
        else:
            act, card = rnd.choice([a for a in allowed if a not in ("discard", "play_on")]), None
        status, v = call(srv, "POST", "/api/act", {"action": act} if card is None else {"action": act, "card": card})
        assert status == 200, v
    return v, hands, outcomes, knocks
