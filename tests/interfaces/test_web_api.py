"""The play server's HTTP API, on a real uvicorn server on 127.0.0.1 (no browser needed)."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest

from arena.engine.cards import cards_of
from arena.engine.layout import S_DECK, S_HAND, S_STOCK_POS
from arena.web.server import App, Server
from tests.web_play import call, play_to_the_end

ARENA = [__import__("sys").executable, "-c", "from arena.cli import app; app(prog_name='arena')"]


@pytest.fixture
def server():
    srv = Server(App(bot="simple", seed=12345), port=0).start()
    yield srv
    srv.stop()


def secret_cards(srv):
    """The bot's hand and the stock: what the person must never receive."""
    st = srv.app.session.st
    bot = set(cards_of(int(st[S_HAND + 1])))
    stock = [int(c) for c in st[S_DECK + int(st[S_STOCK_POS]) : S_DECK + 52]]
    return bot, stock


def assert_private(srv, view):
    """The person's JSON holds their own cards, the pile and counts, and none of the bot's cards or the stock."""
    if view["hand_over"] and view["showdown"]["knocker"] >= 0:
        return  # the showdown lays the bot's hand out: it is public now
    bot, stock = secret_cards(srv)
    shown = set()

    def walk(x):
        if isinstance(x, dict):
            if "id" in x and "suit" in x:
                shown.add(x["id"])
            for v in x.values():
                walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)

    walk({k: v for k, v in view.items() if k != "upcard"})  # the hand's first upcard is public, taken or not
    for key in ("you",):  # card ids also appear as plain ints in the meld lists
        shown.update(view[key]["deadwood_cards"])
        for m in view[key]["melds"]:
            shown.update(m)
    assert not shown & bot, "the bot's cards leaked"
    assert not shown & set(stock), "the stock leaked"
    assert "stock" in view and isinstance(view["stock"], int)  # only the count
    assert view["bot_cards"] == len(bot)


def test_pages_and_options(server):
    status, body = call(server, "GET", "/")
    assert status == 200 and b"<title>Gin Arena: play</title>" in body
    status, body = call(server, "GET", "/view")
    assert status == 200 and b"game viewer" in body
    status, opt = call(server, "GET", "/api/options")
    assert status == 200 and {"standard", "oklahoma", "eaai"} <= set(opt["presets"])
    assert opt["targets"] == [50, 100, 200] and "simple" in opt["bots"]
    assert call(server, "GET", "/nope")[0] == 404
    assert call(server, "GET", "/api/game")[0] == 404  # a play server shows no recorded game
    assert call(server, "GET", "/api/state")[0] == 409  # no game yet


@pytest.mark.parametrize(
    "body, word",
    [
        ({"target": 75}, "target"),
        ({"preset": "poker"}, "preset"),
        ({"bot": "nobody"}, "bot"),
        # A request can't choose a bot's settings: the page's list holds names, not NAME:key=value.
        ({"bot": "monte-carlo:samples=4096,work=0"}, "unknown bot"),
        ({"bot": "../bots/simple.py"}, "unknown bot"),
        ({"bot": 3}, "string"),
    ],
)
def test_new_game_with_bad_settings_is_a_400(server, body, word):
    status, err = call(server, "POST", "/api/new", body)
    assert status == 400 and word in err["error"]
    assert server.app.session is None


def test_bad_requests_get_4xx_and_change_nothing(server):
    status, v = call(server, "POST", "/api/new", {"preset": "standard", "target": 50, "bot": "simple"})
    assert status == 200 and v["target"] == 50 and v["names"] == ["You", "simple"]
    st = server.app.session.st.copy()
    log = list(server.app.session.log)
    hand = [c["id"] for c in v["you"]["cards"]]
    not_mine = next(c for c in range(52) if c not in hand)
    bad = [
        ({"action": "fly"}, 400),
        ({"action": "discard", "card": "Ah"}, 400),
        ({"action": "discard", "card": 99}, 400),
        ({"action": "discard", "card": not_mine}, 409),
        ({"action": "knock"}, 409),
        ({"action": "big_gin"}, 409),
    ]
    if v["phase"] == "upcard":
        bad.append(({"action": "draw_stock"}, 409))
    for body, code in bad:
        status, err = call(server, "POST", "/api/act", body)
        assert status == code and err["error"], (body, status, err)
        assert (server.app.session.st == st).all() and server.app.session.log == log  # nothing changed
    assert call(server, "POST", "/api/act", raw=b"{not json")[0] == 400
    assert call(server, "POST", "/api/act", raw=b"[1, 2]")[0] == 400
    assert call(server, "POST", "/api/next", {})[0] == 409  # the hand is not over
    assert (server.app.session.st == st).all()
    assert_private(server, call(server, "GET", "/api/state")[1])


def test_throwing_back_the_card_just_taken_is_refused(server):
    call(server, "POST", "/api/new", {"target": 50})
    for _ in range(200):
        v = call(server, "GET", "/api/state")[1]
        if v["hand_over"]:
            call(server, "POST", "/api/next", {})
            continue
        if "draw_pile" in v["allowed"] or "take" in v["allowed"]:
            top = v["pile"][-1]["id"]
            v = call(server, "POST", "/api/act", {"action": "take" if "take" in v["allowed"] else "draw_pile"})[1]
            assert v["just_taken"] == top and v["phase"] == "discard"
            before = server.app.session.st.copy()
            status, err = call(server, "POST", "/api/act", {"action": "discard", "card": top})
            assert status == 409 and "just took" in err["error"]
            assert err["code"] == "discard_just_taken" and err["values"] == {"card": top}  # the page's own words
            assert (server.app.session.st == before).all()
            return
        act = next(a for a in ("pass", "draw_stock", "no_knock", "no_big_gin") if a in v["allowed"])
        if act == "draw_stock":
            call(server, "POST", "/api/act", {"action": act})
            v = call(server, "GET", "/api/state")[1]
            act = "discard"
        if act == "discard":
            call(server, "POST", "/api/act", {"action": "discard", "card": v["you"]["deadwood_cards"][-1]})
        else:
            call(server, "POST", "/api/act", {"action": act})
    pytest.fail("never had a chance to take from the pile")


def test_a_move_from_a_page_behind_the_game_is_refused_as_stale_and_changes_nothing(server):
    """Two tabs on one game: after one moved, the other's click on the pile, legal in the game as it had
    become, took the bot's newer discard, a card that page never showed.  A request says the view's
    ``moves`` it was made from; one made from an older view is refused (409, code ``stale``)."""
    v = call(server, "POST", "/api/new", {"target": 50})[1]
    old = v["moves"]
    first = "take" if "take" in v["allowed"] else v["allowed"][0]
    status, now = call(server, "POST", "/api/act", {"action": "pass" if "pass" in v["allowed"] else first, "seen": old})
    assert status == 200 and now["moves"] == old + 1
    before = server.app.session.st.copy()
    for action in now["allowed"] or ["draw_stock"]:
        status, err = call(server, "POST", "/api/act", {"action": action, "seen": old})
        assert status == 409 and err["code"] == "stale", err
        assert (server.app.session.st == before).all()
    status, err = call(server, "POST", "/api/next", {"seen": old})
    assert status == 409 and err["code"] == "stale"
    # a request from the view as it is goes through, and so does one that does not say (an API client)
    allowed = now["allowed"]
    move = {"action": allowed[0]} | ({"card": now["you"]["cards"][0]["id"]} if allowed[0] == "discard" else {})
    status, after = call(server, "POST", "/api/act", move | {"seen": now["moves"]})
    assert status == 200 and after["moves"] == now["moves"] + 1


@pytest.mark.parametrize("preset", ["standard", "oklahoma"])
def test_a_whole_game_through_the_api_against_simple(server, preset):
    v, hands, outcomes, knocks = play_to_the_end(
        server, {"preset": preset, "target": 50, "bot": "simple"}, each=lambda v: assert_private(server, v)
    )
    assert v["game_over"] and max(v["scores"]) >= 50 and v["winner"] in ("You", "simple")
    assert hands >= 1 and outcomes <= {"knock", "undercut", "gin", "big_gin", "dead"} and knocks >= 1, (
        outcomes,
        knocks,
    )
    for path, body in (("/api/act", {"action": "pass"}), ("/api/next", {})):  # the game is over, both say so
        status, err = call(server, "POST", path, body)
        assert status == 409 and err["error"] == "the game is over: start a new game", (path, err)


def test_the_viewer_endpoint_serves_every_step_of_a_stored_game(tmp_path):
    from arena.run import run_tournament
    from arena.run.schedule import Inline
    from arena.run.store import RunStore
    from arena.settings.config import TournamentConfig
    from arena.web.viewer import recorded_game

    cfg = TournamentConfig(
        name="v", bots=("simple", "random"), games_per_pair=4, chunk_size=4, seed=9, results_dir=str(tmp_path)
    )
    run_tournament(cfg, progress=False, schedule=Inline())
    rec = RunStore(tmp_path / "v").game_record(2)
    srv = Server(App(recorded=recorded_game(tmp_path / "v", 2)), port=0).start()
    try:
        status, g = call(srv, "GET", "/api/game")
        assert status == 200 and g["ok"] and g["check"].startswith("check: the replay reproduces")
        steps = g["steps"]
        assert len(steps) == len(rec.actions) + int(rec.game["hands"])  # one per decision, one per deal
        assert sum(1 for s in steps if "showdown" in s) == int(rec.game["hands"])
        last = [s for s in steps if "showdown" in s][-1]["showdown"]
        assert last["scores_after"] == [int(rec.game["score0"]), int(rec.game["score1"])]
        assert all(len(s["hands"]["0"]["cards"]) in (10, 11) for s in steps)  # both hands, every step
        assert call(srv, "GET", "/api/state")[0] == 409  # a viewer has no live game
    finally:
        srv.stop()


def test_arena_view_opens_any_game_of_its_run_by_query_and_refuses_others(tmp_path):
    """`arena view RUN --game ID` serves game ID at /view, and /view?game=G (arena report's links) game G."""
    from arena.run import run_tournament
    from arena.run.schedule import Inline
    from arena.settings.config import TournamentConfig
    from arena.web.viewer import Games, recorded_game

    cfg = TournamentConfig(
        name="v", bots=("simple", "random"), games_per_pair=4, chunk_size=4, seed=9, results_dir=str(tmp_path)
    )
    run_tournament(cfg, progress=False, schedule=Inline())
    run = tmp_path / "v"
    srv = Server(App(recorded=recorded_game(run, 2), games=Games(run_dir=run, default=2)), port=0).start()
    try:
        assert call(srv, "GET", "/api/game")[1]["game_id"] == 2  # the --game one without a query
        for gid in (0, 3):
            status, g = call(srv, "GET", f"/api/game?game={gid}")
            assert status == 200 and g["game_id"] == gid and g["run"] == "v" and g["ok"]
            assert g == recorded_game(run, gid)
        assert call(srv, "GET", "/api/game?run=v&game=1")[1]["game_id"] == 1  # its own run's name is fine
        status, g = call(srv, "GET", "/api/game?run=other&game=1")
        assert status == 404 and g["error"] == "this viewer shows run v only, not 'other'"
        status, g = call(srv, "GET", "/api/game?game=1%2F..")
        assert status == 400 and "is not a game id" in g["error"]
        status, g = call(srv, "GET", "/api/game?game=77")
        assert status == 404 and "no game 77" in g["error"] and str(tmp_path) not in g["error"]
        status, page = call(srv, "GET", "/view?game=3&step=5")
        assert status == 200 and b"location.search" in page
    finally:
        srv.stop()


def test_one_visitor_replays_two_games_at_a_time_and_the_viewer_stays_free_for_others(tmp_path, monkeypatch):
    """A loop over game ids had each request replay a game on one of the server's worker threads, with no
    bound: one visitor could hold them all, and a league's pages waited.  A visitor gets two replays at
    once; a third is a 429 that says why, and the game is served once one has finished."""
    import threading
    import time

    from arena.run import run_tournament
    from arena.run.schedule import Inline
    from arena.settings.config import TournamentConfig
    from arena.web import viewer

    cfg = TournamentConfig(
        name="v", bots=("simple", "random"), games_per_pair=4, chunk_size=4, seed=9, results_dir=str(tmp_path)
    )
    run_tournament(cfg, progress=False, schedule=Inline())
    run = tmp_path / "v"
    real, gate, started = viewer.recorded_game, threading.Event(), []

    def slow(folder, game_id):
        started.append(game_id)
        assert gate.wait(30)
        return real(folder, game_id)

    monkeypatch.setattr(viewer, "recorded_game", slow)
    games = viewer.Games(run_dir=run)
    srv = Server(App(games=games), port=0).start()
    try:
        answers: dict[int, tuple[int, dict]] = {}

        def fetch(g: int) -> None:
            answers[g] = call(srv, "GET", f"/api/game?game={g}")

        held = [threading.Thread(target=fetch, args=(g,)) for g in (0, 1)]
        for t in held:
            t.start()
        deadline = time.monotonic() + 30
        while len(started) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        status, body = call(srv, "GET", "/api/game?game=3")
        assert status == 429 and body["error"] == "already replaying 2 games for this address: wait for one to finish"
        assert sorted(started) == [0, 1]  # the third was never replayed
        gate.set()
        for t in held:
            t.join(30)
        assert [answers[g][0] for g in (0, 1)] == [200, 200] and answers[1][1]["game_id"] == 1
        status, body = call(srv, "GET", "/api/game?game=3")
        assert status == 200 and body["game_id"] == 3 and games.replaying == {}
    finally:
        gate.set()
        srv.stop()


def test_arena_play_serves_on_127_0_0_1_and_prints_the_url(tmp_path):
    import subprocess

    env = {**__import__("os").environ, "DISPLAY": ""}
    proc = subprocess.Popen(
        [
            *ARENA,
            "play",
            "--port",
            "0",
            "--no-open",
            "--target",
            "200",
            "--rules",
            "oklahoma",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        line = proc.stdout.readline()
        assert line.startswith("Gin Arena at http://127.0.0.1:"), line
        url = line.split()[3].rstrip("/")
        with urllib.request.urlopen(url + "/api/options", timeout=30) as r:
            opt = json.loads(r.read())
        assert opt["defaults"] == {"bot": "simple", "preset": "oklahoma", "target": 200}
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    bad = subprocess.run([*ARENA, "play", "--target", "75", "--no-open"], capture_output=True, text=True)
    assert bad.returncode == 2 and bad.stderr.strip() == "error: --target 75 is not allowed (targets: 50, 100, 200)"


def test_a_rules_file_is_the_page_s_default_variant_and_the_list_starts_gin_oklahoma(tmp_path):
    f = tmp_path / "seed003.toml"
    f.write_text('preset = "oklahoma"\nundercut_bonus = 20\nundercut_on_tie = false\ntarget = 50\n')
    srv = Server(App(preset=str(f), seed=5), port=0).start()
    try:
        opt = call(srv, "GET", "/api/options")[1]
        assert opt["presets"][:3] == ["seed003.toml", "standard", "oklahoma"] and "eaai" in opt["presets"][3:]
        assert opt["defaults"]["preset"] == "seed003.toml"
        assert opt["defaults"]["target"] == 50 and opt["targets"] == [50, 100, 200]  # the file's target
        assert opt["advanced"]["knock_limit"] == {"kind": "int", "lo": 0, "hi": 10, "default": 10}
        status, v = call(srv, "POST", "/api/new", {})
        assert status == 200 and v["preset"] == "seed003.toml" and v["target"] == 50
        assert v["rules"]["undercut_bonus"] == 20 and v["rules"]["oklahoma"] and not v["rules"]["undercut_on_tie"]
        status, v = call(srv, "POST", "/api/new", {"preset": "standard", "rules": {"undercut_bonus": 20}})
        assert status == 200 and v["rules"]["undercut_bonus"] == 20 and not v["rules"]["oklahoma"]
        for bad, word in (({"knock_limit": 11}, "knock_limit = 11 is out of range"), ({"turn_cap": 50}, "turn_cap")):
            status, err = call(srv, "POST", "/api/new", {"preset": "standard", "rules": bad})
            assert status == 400 and word in err["error"], err
    finally:
        srv.stop()


def test_a_game_is_resumed_by_its_session_id(server):
    first = call(server, "POST", "/api/new", {"target": 50})[1]
    second = call(server, "POST", "/api/new", {"target": 100})[1]
    assert first["session"] != second["session"]
    again = call(server, "GET", f"/api/state?session={first['session']}")[1]
    assert again["target"] == 50 and again["you"] == first["you"]
    assert call(server, "GET", "/api/state")[1]["target"] == 50  # without an id: the game used last
    status, err = call(server, "GET", "/api/state?session=nope")
    assert status == 404 and "no game" in err["error"]


def test_arena_play_rules_file_is_what_the_page_plays(tmp_path):
    import os
    import subprocess

    f = tmp_path / "house.toml"
    f.write_text('preset = "standard"\nundercut_bonus = 20\nknock_limit = 7\ntarget = 150\n')
    proc = subprocess.Popen(
        [*ARENA, "play", "--port", "0", "--no-open", "--rules", str(f)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "DISPLAY": ""},
    )
    try:
        url = proc.stdout.readline().split()[3].rstrip("/")
        with urllib.request.urlopen(url + "/api/options", timeout=180) as r:
            opt = json.loads(r.read())
        assert opt["defaults"]["preset"] == "house.toml" and opt["presets"][0] == "house.toml"
        assert opt["defaults"]["target"] == 150 and opt["targets"] == [50, 100, 150, 200]  # the file's, offered
        req = urllib.request.Request(url + "/api/new", data=b"{}", method="POST")
        req.add_header("Content-Type", "application/json")
        with urllib.request.urlopen(req, timeout=180) as r:
            v = json.loads(r.read())
        assert v["preset"] == "house.toml" and v["rules"]["undercut_bonus"] == 20 and v["knock_limit"] == 7
        assert v["target"] == 150
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_a_state_request_during_the_person_s_move_never_shows_the_bot_s_hand(server, monkeypatch):
    """Two requests at once on one game: the person asks for the state while their discard is being answered.
    The state's answer is the game before the move or after it, never a mix: read half way (the table before,
    the engine's questions after the bot drew) it gave the discards that let the *bot* knock and the bot's
    least deadwood.  The interleaving is pinned: the state request pauses inside its reading until the bot is
    thinking about its discard (or 1 s), and the bot thinks until the state is answered (or 1 s)."""
    import dataclasses
    import threading

    import arena.web.session as session_module
    from arena.engine.layout import PH_DISCARD
    from arena.engine.melds import best_arrangement

    v = call(server, "POST", "/api/new", {"target": 200})[1]
    for _ in range(200):  # to a discard of the person's
        if "discard" in v["allowed"]:
            break
        if v["hand_over"]:
            v = call(server, "POST", "/api/next", {})[1]
        elif v["stage"] != "play":
            v = call(server, "POST", "/api/act", {"action": "lay_down", "melds": v["arrange"]["proposal"]})[1]
        else:
            v = call(server, "POST", "/api/act", {"action": "pass" if "pass" in v["allowed"] else "draw_stock"})[1]
    assert "discard" in v["allowed"], v
    game = server.app.session
    in_view, bot_thinking, answered = threading.Event(), threading.Event(), threading.Event()
    real_legal = session_module.legal_answers

    def paused_legal(st, rules):
        if not in_view.is_set():  # the state request, half way through its reading
            in_view.set()
            bot_thinking.wait(1.0)
        return real_legal(st, rules)

    discard = game.bot.functions[PH_DISCARD]

    def slow_discard(*args):
        bot_thinking.set()
        answered.wait(1.0)
        return discard(*args)

    functions = tuple(slow_discard if k == PH_DISCARD else f for k, f in enumerate(game.bot.functions))
    monkeypatch.setattr(game, "bot", dataclasses.replace(game.bot, functions=functions))
    monkeypatch.setattr(session_module, "legal_answers", paused_legal)
    seen: list = []

    def poll():
        seen.append(call(server, "GET", "/api/state"))
        answered.set()

    poller = threading.Thread(target=poll)
    poller.start()
    assert in_view.wait(10)
    card = max(v["you"]["deadwood_cards"] or [c["id"] for c in v["you"]["cards"]])
    if card == v["just_taken"]:
        card = next(c["id"] for c in v["you"]["cards"] if c["id"] != card)
    status, after = call(server, "POST", "/api/act", {"action": "play_on", "card": card})
    poller.join(10)
    assert status == 200 and seen and seen[0][0] == 200
    got = seen[0][1]
    mine = [c["id"] for c in got["you"]["cards"]]
    hand = sum(1 << c for c in mine)
    least = min(int(best_arrangement(hand & ~(1 << c), 0)[2]) for c in mine if c != got["just_taken"])
    assert set(got["knock_discards"]) <= set(mine), "the bot's cards leaked"
    assert got["best_deadwood"] == least, "the bot's deadwood leaked"
    assert got in (v, after)


def test_a_refusal_names_a_long_value_by_its_start_not_whole(server):
    """A refusal names what it refuses in one short line: a 60 kB action, preset, bot, rule or game id was
    written back whole, the answer as large as the request."""
    sid = call(server, "POST", "/api/new", {})[1]["session"]
    long = "x" * 60_000
    for method, path, body in (
        ("POST", f"/api/act?session={sid}", {"action": long}),
        ("POST", "/api/new", {"preset": long}),
        ("POST", "/api/new", {"bot": long}),
        ("POST", "/api/new", {"rules": {long: 1}}),
        ("GET", "/api/state?session=" + "y" * 8000, None),
    ):
        status, err = call(server, method, path, body)
        assert (
            status in (400, 404)
            and len(err["error"]) < 400
            and ("'xxxxxxxx" in err["error"] or "'yyyy" in err["error"])
        )
