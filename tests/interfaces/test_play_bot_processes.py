"""The play server stops the processes of a bot that runs in its own (``cmd:``): none outlives its game.

Each game against such a bot holds its own processes (the bot keeps one
game's conversation).  Left to the garbage collector they lived as long as
the game was kept, finished or not: up to 256 games of three processes.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from arena.web.server import App, NewGame, Server
from tests.web_play import call, play_to_the_end

PLAYER = Path(__file__).resolve().parents[2] / "examples" / "external" / "simple_player.py"
SPEC = f"cmd:{sys.executable} {PLAYER}"


def descendants() -> int:
    """How many processes descend from this one."""
    kids: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue  # it ended meanwhile
            kids.setdefault(int(stat.rsplit(")", 1)[1].split()[1]), []).append(int(entry))
    todo, n = [os.getpid()], 0
    while todo:
        for k in kids.get(todo.pop(), []):
            n += 1
            todo.append(k)
    return n


def test_games_pushed_out_stop_their_bot_processes_and_only_so_many_are_kept():
    app = App(bot=SPEC, seed=3, process_games=2)
    base = descendants()
    first = app.new_game(NewGame(), client="10.0.0.1")
    per_game = descendants() - base
    assert per_game >= 1  # the bot's processes started with the game
    ids = [first["session"]] + [app.new_game(NewGame(), client=f"10.0.0.{i}")["session"] for i in (2, 3, 4)]
    assert descendants() - base == 2 * per_game  # was 4 games' worth: nothing stopped them
    assert [sid in app.sessions.games for sid in ids] == [False, False, True, True]
    app.sessions.get(ids[2])  # the kept games still play
    app.sessions.get(ids[3])
    for sid in ids[2:]:
        app.sessions.games[sid][0].close()
    assert descendants() == base


def test_a_finished_game_stops_its_bot_processes():
    srv = Server(App(bot=SPEC, seed=11), port=0).start()
    try:
        base = descendants()
        seen = []
        v, hands, _, _ = play_to_the_end(srv, {"target": 50}, each=lambda v: seen.append(descendants() - base))
        assert v["game_over"] and hands >= 1
        assert max(seen) >= 1  # the bot played from processes of its own
        assert descendants() == base  # and they ended with the game, not when it expires hours later
        assert call(srv, "POST", "/api/next", {})[0] == 409
    finally:
        srv.stop()


def _crasher(folder: Path) -> str:
    """A ``cmd:`` bot that plays like the Python example and exits at its first decision."""
    body = PLAYER.read_text().replace(
        '        elif kind == "decide":\n', '        elif kind == "decide":\n            sys.exit(3)\n', 1
    )
    assert "sys.exit(3)" in body
    (folder / "crasher.py").write_text(body)
    folder.chmod(0o755)
    return f"cmd:{sys.executable} {folder / 'crasher.py'}"


def test_a_bot_whose_program_crashes_forfeits_the_game_and_the_next_game_starts(tmp_path):
    """The crash came back as HTTP 500 ("ExternalBotError: ..."), and the game stayed stuck for ever: not the
    person's turn, nothing allowed, every action refused.  Now it ends as the bot's forfeit, as in a run."""
    srv = Server(App(bot=_crasher(tmp_path), seed=11), port=0).start()
    try:
        status, v = call(srv, "POST", "/api/new", {})
        for _ in range(4):  # the bot is asked at the deal, or after the person's first move
            assert status == 200, v
            if v["game_over"]:
                break
            move = next(a for a in ("pass", "draw_stock") if a in v["allowed"])
            status, v = call(srv, "POST", "/api/act", {"action": move})
        assert v["game_over"] and v["hand_over"] and v["winner_seat"] == 0 and v["allowed"] == []
        why = v["forfeit"]["reason"]
        assert v["forfeit"]["name"] == "simple-py" and why.startswith("crashed: exited with code 3 while asked ")
        assert "Error" not in why and v["log"][-1]["key"] == "forfeit"
        assert call(srv, "POST", "/api/act", {"action": "draw_stock"}) == (
            409,
            {"error": "the game is over: start a new game"},
        )
        assert call(srv, "POST", "/api/new", {})[0] == 200
    finally:
        srv.stop()


def test_a_bot_that_asks_is_told_each_hands_end_and_lays_down_the_melds_it_declares(tmp_path):
    """In a run a bot that asks gets a hand_over line after each hand and, when it knocks, is asked which
    melds it lays down; ``arena play`` did neither (PROTOCOL.md makes no exception for it)."""
    import json

    from arena.external.client import drain_log
    from tests.bots.test_eaai import PROGRAM

    said = '            print(json.dumps({"melds": fewest_points_shown(hand, msg["knock_limit"])}), flush=True)\n'
    assert PROGRAM.count(said) == 1
    told = said.replace("print(json.dumps(", 'print("MELDS", json.dumps(').replace(
        "flush=True)", "file=sys.stderr, flush=True)"
    )
    (tmp_path / "declarer.py").write_text(PROGRAM.replace(said, told + said))
    tmp_path.chmod(0o755)
    app = App(bot=f"cmd:{sys.executable} {tmp_path / 'declarer.py'} fewer", seed=1)  # the bot knocks in this game
    srv = Server(app, port=0).start()
    knocks: list[set[int]] = []

    def defended(v) -> None:
        if v["stage"] == "defend" and not v["arrange"]["laid"]:
            knocks.append({c for m in v["arrange"]["knocker_melds"] for c in m})

    try:
        _, hands, _, _ = play_to_the_end(srv, {"target": 50}, each=defended)
        log = drain_log(app.session.bot)
    finally:
        srv.stop()
    lines = [x.split(" ", 1)[1] for x in log.splitlines() if x.startswith(("HAND_OVER", "MELDS"))]
    assert sum(x.startswith("HAND_OVER") for x in log.splitlines()) == hands, log[-2000:]
    declared = [{c for m in json.loads(x)["melds"] for c in m} for x in lines if x.startswith('{"melds"')]
    assert knocks and declared == knocks[: len(declared)] and len(declared) == len(knocks)
