"""What a participant can send a real league server, as an attacker would send it: look-alike names, names and
path parts with a final newline, JSON and Python nested thousands deep, headers sent a byte at a time; and what
every answer carries (CSP, nosniff) and how the board answers (an ETag, 304).

One ``arena league serve --no-play`` process on a real SQLite file for the whole file.
"""

from __future__ import annotations

import json
import re
import select
import socket
import time

import pytest

from arena.web.server import allowed_hosts
from tests.league.server import SIMPLE_COPY, Server, add_user, make_league


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    folder = make_league(tmp_path_factory.mktemp("input") / "lg", submissions_per_hour=50, active_bots_per_user=20)
    tokens = {"olga": add_user(folder, "olga", organizer=True)}
    (folder / "runs" / "r000").mkdir()  # an (empty) run folder, so the viewer's game id pattern is reached
    server = Server(folder, play=False, play_page=True, extra=["--allowed-host", "*.example.org"])
    for name in ("alice", "bob"):  # through the API: one process fewer each
        status, body = server.post_json("/api/users", {"name": name}, token=tokens["olga"])
        assert status == 201
        tokens[name] = body["token"]
    yield server, tokens, folder
    server.stop()


def send(server: Server, token: str, name: str, source: str = SIMPLE_COPY) -> tuple[int, dict]:
    return server.post_json("/api/submit", {"name": name, "source": source}, token=token)


def test_a_name_with_a_final_newline_is_refused_everywhere(site):
    server, tokens, _ = site
    assert send(server, tokens["alice"], "alicebot")[0] == 202
    status, body = send(server, tokens["bob"], "alicebot\n")  # "$" matched before the newline: a second "alicebot"
    assert status == 400 and "bot name" in body["error"]
    status, body = server.post_json("/api/users", {"name": "alice\n"}, token=tokens["olga"])
    assert status == 400 and "user name" in body["error"]
    assert [e["bot"] for e in server.get("/api/users/bob")["versions"]] == []
    # Path parts: a name with %0A is not a name (400), not a lookup that happens to miss (404).
    for path in ("/api/bots/alicebot%0A", "/api/users/alice%0A", "/league/bot/alicebot%0A"):
        status, _, _ = server.request("GET", path)
        assert status == 400, path
    # The viewer's run and game patterns.
    status, _, body = server.request("GET", "/api/game?run=r000%0A&game=1")
    assert status == 400 and "not a league run name" in json.loads(body)["error"]
    status, _, body = server.request("GET", "/api/game?run=r000&game=1%0A")
    assert status == 400 and "not a game id" in json.loads(body)["error"]
    status, _, body = server.request("GET", "/api/game?run=r000&game=%D9%A3")  # an Arabic-Indic 3: not [0-9]
    assert status == 400
    with pytest.raises(ValueError, match="allowed-host"):
        allowed_hosts("127.0.0.1", ["league.example.org\n"])


def test_look_alike_names_are_refused_and_the_hyphen_is_allowed(site):
    server, tokens, _ = site
    for fake in ("AliceBot", "aIicebot", "a1icebot", "ALICEB0T", "alice_bot", "alice-bot"):
        status, body = send(server, tokens["bob"], fake)
        assert status == 409 and "looks like the existing bot 'alicebot'" in body["error"], fake
    status, body = send(server, tokens["bob"], "Sim_ple")  # a house bot's name, cased and cut
    assert status == 409 and "'simple'" in body["error"]
    status, body = send(server, tokens["bob"], "simpIe")  # the house bot simple, with a capital I
    assert status == 409 and "'simple'" in body["error"]
    status, body = send(server, tokens["bob"], "bob-bot")  # built-in bots and users follow one rule
    assert status == 202, body
    status, body = send(server, tokens["bob"], "bob-bot-v2")  # would shadow bob-bot's version 2 in the store
    assert status == 400 and "ends like a version" in body["error"]
    # ... in any case, with _ for -, or a letter that reads as a digit: names are read as the look-alike check
    # reads them (alicebot-V2 and alicebot_v3 were taken, under alice's alicebot)
    for fake in ("alicebot-V2", "alicebot_v3", "alicebot_V12", "alicebot-vl", "bob-bot-VO", "alicebot__v2"):
        status, body = send(server, tokens["bob"], fake)
        assert status == 400, (fake, body)
        assert body["error"] == f"bot name '{fake}' ends like a version (-v1, -v2...); choose another", body
    for name in ("bobv2", "bob-vector", "bob-v2x"):  # no separator before the v, or more after the digits
        status, body = send(server, tokens["bob"], name)
        assert status == 202, (name, body)
    status, body = server.post_json("/api/users", {"name": "AIice"}, token=tokens["olga"])
    assert status == 409 and "looks like the existing user 'alice'" in body["error"]
    status, body = server.post_json("/api/users", {"name": "carol-ann"}, token=tokens["olga"])
    assert status == 201
    assert server.get("/api/bots/bob-bot")["owner"] == "bob"
    from arena.league.core import name_key

    board = server.get("/api/leaderboard")
    assert len({name_key(e["bot"]) for e in board}) == len(board)


def test_a_built_in_bots_name_is_refused_even_when_it_is_not_a_house_bot(site):
    """The league's house plays random, simple and gin-chasing; a user's 'marjj-style' would still read as
    the built-in on the leaderboard."""
    server, tokens, _ = site
    for fake in ("marjj-style", "MARJJ_style", "rnonte-carlo", "r-nonte-carlo", "analyzer", "Learned"):
        status, body = send(server, tokens["bob"], fake)
        assert status == 409 and "looks like) the built-in bot" in body["error"], (fake, body)
    assert not {e["bot"] for e in server.get("/api/users/bob")["versions"]} & {"marjj-style", "analyzer"}
    status, body = send(server, tokens["bob"], "marjj-styled")  # a name of its own
    assert status == 202, body


def test_the_house_owner_name_is_reserved_and_house_bots_are_known_by_owner(site):
    """A user called 'house' would read as the owner of the league's own bots (and, by name alone, lose the
    withdraw button of their own bots on its page)."""
    server, tokens, _ = site
    for fake in ("house", "House", "h0use", "hou_se"):
        status, body = server.post_json("/api/users", {"name": fake}, token=tokens["olga"])
        assert status == 409 and "is reserved: 'house' owns the league's own bots" in body["error"], fake
    assert server.get("/api/bots/simple")["house"] is True
    send(server, tokens["alice"], "alice-own")
    info = server.get("/api/bots/alice-own")
    assert info["house"] is False and info["owner"] == "alice"


def test_name_key_folds_case_and_the_look_alike_table():
    from arena.league.core import name_key

    same = ("alicebot", "AliceBot", "aIicebot", "a1icebot", "ALICEBOT", "alice_bot", "Alice-Bot", "al1ce_b0t")
    assert {name_key(n) for n in same} == {"allcebot"}
    assert name_key("rnonte-carlo") == name_key("monte-carlo") == name_key("MONTE_CARL0")
    assert name_key("wolf") == name_key("vvolf") and name_key("s1mple") == name_key("simple") == name_key("5imple")
    # A separator between the two letters of a pair is dropped before the pair is read as one letter.
    assert name_key("r-nonte-carlo") == name_key("r_nonte_carlo") == name_key("monte-carlo")
    assert name_key("tv-vinbot") == name_key("t-v_vinbot") == name_key("twinbot")
    assert name_key("alice") != name_key("alicia") and name_key("bob") != name_key("rob")
    # Every way of writing three v's, and of writing 'rnm' and 'mrn', is one key: folding the two letters into
    # one, from the left, gave 'vw' and 'wv' (and 'vvv') different keys, so the second took the board.
    assert name_key("vwbot") == name_key("wvbot") == name_key("vvvbot") == name_key("v-v-vbot")
    assert name_key("evwa") == name_key("ewva") and name_key("rnmbot") == name_key("mrnbot") == name_key("mmbot")
    assert name_key("vwbot") != name_key("vbot") and name_key("wbot") != name_key("vbot")


@pytest.mark.parametrize("depth", [1000, 5000])
def test_json_nested_thousands_deep_is_a_400(site, depth):
    server, tokens, _ = site
    body = ('{"name": "deep", "source": ' + "[" * depth + "]" * depth + "}").encode()
    status, _, out = server.request(
        "POST", "/api/submit", body, token=tokens["bob"], headers={"Content-Type": "application/json"}
    )
    assert status == 400 and "nested too deeply" in json.loads(out)["error"]
    assert "Traceback" not in server.log_text()


@pytest.mark.parametrize(
    "source",
    ["x = " + "-" * 100_000 + "1\n", "x = a" + ".b" * 60_000 + "\n", "lambda:" * 5000 + "1\n", "not " * 5000 + "x\n"],
    ids=["unary-minus", "attributes", "lambdas", "nots"],
)
def test_python_nested_too_deep_for_the_parser_is_a_400(site, source):
    server, tokens, _ = site
    status, out = send(server, tokens["bob"], "deep", source)
    assert status == 400 and "nests an expression too deeply" in out["error"] and "\n" not in out["error"]
    assert "Traceback" not in server.log_text()


def _every_request(folder) -> list[tuple[str, str]]:
    """(method, path) for every route of the app ``arena league serve --play-page`` runs, each with every
    method (the others' 405s too), path parameters filled with a house bot's or a user's name; every file
    of the static mount; and paths no route has."""
    from starlette.routing import Mount, Route

    from arena.web.server import STATIC, App, create_app

    app = create_app(App(), league=folder, play=True)
    out = [("GET", "/no/such/page"), ("GET", "/league/nothing"), ("GET", "/api/nothing"), ("POST", "/nowhere")]
    for route in app.routes:
        if isinstance(route, Mount):
            out += [("GET", f"{route.path}/{f.relative_to(STATIC)}") for f in sorted(STATIC.rglob("*")) if f.is_file()]
        elif isinstance(route, Route):
            path = route.path.replace("{name}", "olga" if route.path.startswith("/api/users/") else "simple")
            out += [(m, path) for m in ("GET", "POST")]
    assert len(out) > 60 and ("GET", "/play") in out and ("GET", "/") in out
    return out


def test_every_answer_of_every_route_has_nosniff_and_a_policy_and_pages_allow_only_their_own_scripts(site):
    """Every route of the real server, every method, every static file: each answer carries nosniff and a
    Content-Security-Policy that forbids frames; an HTML page's policy allows scripts and styles from the
    site and its own inline blocks by hash, never 'unsafe-inline' scripts (POSTs send a JSON array: refused
    by every route before it does anything)."""
    import base64
    import hashlib
    import re

    server, _, folder = site
    pages = 0
    for method, path in _every_request(folder):
        body = b"[]" if method == "POST" else None
        status, headers, out = server.request(method, path, body, headers={"Content-Type": "application/json"})
        h = {k.lower(): v for k, v in headers.items()}
        assert h.get("x-content-type-options") == "nosniff", (method, path, status)
        csp = h.get("content-security-policy", "")
        assert "default-src 'none'" in csp and "frame-ancestors 'none'" in csp, (method, path, status, csp)
        if status == 200 and h.get("content-type", "").startswith("text/html") and "script-src" in csp:
            pages += 1  # (a page fetched as a static file gets default-src 'none' alone: it runs nothing)
            scripts = csp.split("script-src")[1].split(";")[0]
            assert "'self'" in scripts and "unsafe" not in scripts, (path, csp)
            for tag in ("script", "style"):
                for block in re.findall(rf"<{tag}>(.*?)</{tag}>", out.decode(), flags=re.S):
                    digest = base64.b64encode(hashlib.sha256(block.encode()).digest()).decode()
                    assert f"'sha256-{digest}'" in csp, (path, tag)
    assert pages >= 6  # the play page, the viewer, the league's pages
    _, headers, _ = server.request("GET", "/play")
    play = {k.lower(): v for k, v in headers.items()}["content-security-policy"]
    assert "unsafe-inline" not in play and "form-action 'none'" in play  # no inline handlers, no style attributes


def test_a_client_sending_headers_a_byte_at_a_time_is_cut_off(site):
    server, _, _ = site
    slow = socket.create_connection(("127.0.0.1", server.port))
    idle = socket.create_connection(("127.0.0.1", server.port))
    slow.settimeout(15)
    t0 = time.monotonic()
    slow.sendall(b"GET /api/leaderboard HTTP/1.1\r\nHost: 127.0.0.1\r\n")
    got = b""
    while time.monotonic() - t0 < 14:  # one header byte a second: slower than any honest client
        if select.select([slow], [], [], 1.0)[0]:
            got = slow.recv(4096)
            break
        slow.sendall(b"X")
    waited = time.monotonic() - t0
    assert got.startswith(b"HTTP/1.1 408") and waited < 10, (got[:80], waited)
    idle.settimeout(1)
    assert idle.recv(100) == b""  # a connection that sent nothing is closed too, and quietly
    slow.close()
    idle.close()


def _post_headers_only(server: Server, path: str, extra: str = "") -> tuple[bytes, float]:
    """(the answer's head and body, seconds until both were in) of a POST that declares a large body and
    sends none."""
    ctype = "application/json" if path.startswith("/api/") else "multipart/form-data; boundary=xx"
    with socket.create_connection(("127.0.0.1", server.port)) as s:
        s.settimeout(15)
        t0 = time.monotonic()
        s.sendall(
            f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: {ctype}\r\n{extra}"
            "Content-Length: 80000\r\n\r\n".encode()
        )
        got = b""
        while b"\r\n\r\n" not in got or len(got.partition(b"\r\n\r\n")[2]) < _length(got):
            more = s.recv(4096)
            if not more:
                break
            got += more
        return got, time.monotonic() - t0


def _length(answer: bytes) -> int:
    """The Content-Length of an answer's head (0 until the head is in)."""
    head = answer.partition(b"\r\n\r\n")[0].lower()
    m = re.search(rb"\r\ncontent-length: *(\d+)", head)
    return int(m.group(1)) if m else 0


@pytest.mark.parametrize(
    ("path", "extra", "words"),
    [
        ("/api/submit", "", b"log in first"),
        ("/api/submit", "Authorization: Bearer not-a-token\r\n", b"the token is not valid"),
        ("/league/submit", "", b"log in first"),
        ("/league/submit", "Cookie: league_session=not-a-session\r\n", b"log in first"),
    ],
)
def test_an_upload_from_a_stranger_is_refused_from_its_headers_before_its_body_is_read(site, path, extra, words):
    """Nobody may make the server wait for (up to the 5 s body timeout) or hold an upload before it knows who
    sends it: a POST to an upload route with no valid token or session is a 401 at once, its body unread."""
    server, _, _ = site
    got, waited = _post_headers_only(server, path, extra)
    assert got.startswith(b"HTTP/1.1 401") and words in got, got[:300]
    assert waited < 2.0, waited


def test_a_stranger_who_sends_the_whole_body_before_reading_still_gets_the_401(site):
    """urllib (and ``arena submit``) send the whole body before they read: the server answers at once, then
    takes in and drops the body, so such a client reads the 401 rather than a reset connection."""
    server, _, _ = site
    body = json.dumps({"name": "big", "source": "#" * 1_500_000}).encode()
    for _ in range(3):
        status, _, answer = server.request(
            "POST", "/api/submit", body, token="not-a-token", headers={"Content-Type": "application/json"}
        )
        assert status == 401 and b"the token is not valid" in answer, answer[:200]


def test_a_valid_token_still_gets_its_upload_read(site):
    server, tokens, _ = site
    got, waited = _post_headers_only(server, "/api/submit", f"Authorization: Bearer {tokens['bob']}\r\n")
    assert got.startswith(b"HTTP/1.1 408") and waited >= 4.0, (got[:200], waited)  # waited for the body


@pytest.mark.parametrize("who", ["stranger", "user"])
def test_an_upload_trickled_a_byte_every_four_seconds_is_cut_off_in_seconds_whatever_it_declared(site, who):
    """The body's deadline was set once, from the length it declared: 2 MB declared got 5 + 122 s, so a
    client sending a byte every 4 s (never pausing for the 5 s limit) held its connection for two minutes,
    and thousands of them slowed the board tenfold.  A stranger's refused body was drained under the same
    deadline.  What has come must now keep up with the minimum rate, 5 s behind."""
    server, tokens, _ = site
    token = "not-a-token" if who == "stranger" else tokens["bob"]
    with socket.create_connection(("127.0.0.1", server.port)) as s:
        s.sendall(
            "POST /api/submit HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            f"Authorization: Bearer {token}\r\nContent-Length: 2000000\r\n\r\n".encode()
        )
        t0 = time.monotonic()
        got = b""
        try:
            while time.monotonic() - t0 < 30:
                if select.select([s], [], [], 3.0)[0]:
                    more = s.recv(65536)
                    if not more:
                        break  # closed: the connection is no longer held
                    got += more
                    continue
                s.sendall(b" ")
        except (ConnectionResetError, BrokenPipeError):
            pass
        held = time.monotonic() - t0
    assert held < 12, (held, got[:200])  # was 127 s
    first = b"HTTP/1.1 401" if who == "stranger" else b"HTTP/1.1 408"
    assert got.startswith(first), got[:200]
    if who == "user":
        assert b"slower than 16 KiB/s" in got, got


def test_one_user_sends_at_most_two_uploads_at_once_and_a_third_is_refused_before_its_body(site):
    """Each upload's body is held whole in the server's memory while it comes (up to the upload limit, a few
    copies while it is parsed): a participant who opened hundreds of uploads at once with their one token made
    the server hold hundreds of bodies (40 at once took 270 MB more).  A third upload of the same user while two
    are still coming is a 429 from its headers; another user's upload, and the same user's once one ends, are
    read as ever."""
    server, tokens, _ = site
    auth = f"Authorization: Bearer {tokens['alice']}\r\n"
    holders = [socket.create_connection(("127.0.0.1", server.port)) for _ in range(2)]
    try:
        for h in holders:  # two uploads that declare a body and send none yet: the server waits for them
            h.sendall(
                f"POST /api/submit HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n{auth}"
                "Content-Length: 80000\r\n\r\n".encode()
            )
        time.sleep(0.5)
        got, waited = _post_headers_only(server, "/api/submit", auth)
        assert got.startswith(b"HTTP/1.1 429") and b"already sending 2 uploads" in got, got[:300]
        assert waited < 2.0, waited
        status, answer = send(server, tokens["alice"], "atonce")
        assert status == 429 and "already sending 2 uploads" in answer["error"] and "\n" not in answer["error"]
        status, answer = send(server, tokens["bob"], "bobatonce")
        assert status == 202, answer
    finally:
        for h in holders:
            h.close()
    status, answer = wait_for_status(lambda: send(server, tokens["alice"], "atonce"), 202, 15)
    assert status == 202, answer


def wait_for_status(call, status: int, seconds: float) -> tuple[int, dict]:
    """``call()`` again until it answers ``status`` (or ``seconds`` pass); its last answer."""
    deadline = time.monotonic() + seconds
    while True:
        got = call()
        if got[0] == status or time.monotonic() > deadline:
            return got
        time.sleep(0.3)


def test_the_board_answers_with_an_etag_and_304_until_it_changes(site):
    server, tokens, _ = site
    status, headers, body = server.request("GET", "/api/leaderboard")
    etag = headers["etag"]
    assert status == 200 and etag.startswith('"') and headers["cache-control"] == "no-cache"
    status, headers2, body2 = server.request("GET", "/api/leaderboard", headers={"If-None-Match": etag})
    assert status == 304 and body2 == b"" and headers2["etag"] == etag
    board = json.loads(body)
    assert board and {e["bot"] for e in board} >= {"random", "simple"}
    # A change (an organizer withdraws a house bot) is on the board at the next request: a new ETag.
    status, _ = server.post_json("/api/bots/random/withdraw", {}, token=tokens["olga"])
    assert status == 200
    status, headers3, body3 = server.request("GET", "/api/leaderboard", headers={"If-None-Match": etag})
    assert status == 200 and headers3["etag"] != etag and "random" not in {e["bot"] for e in json.loads(body3)}
    status, headers4, _ = server.request("GET", "/api/progress")
    assert status == 200 and headers4["etag"]


def test_the_boards_fast_path_answers_as_the_apps_own_route_header_for_header(site):
    """A Host named exactly gets the board's polls from the fast path before the framework; a Host allowed
    only by the ``*.example.org`` pattern goes through the app's Host check and its route.  Both give the
    same status, body and headers (the date aside), for the full answer and for the 304."""
    server, _, _ = site

    def answer(path: str, host: str | None, etag: str | None = None) -> tuple[int, dict, bytes]:
        h = {} if host is None else {"Host": host}
        if etag:
            h["If-None-Match"] = etag
        status, headers, body = server.request("GET", path, headers=h)
        return status, {k.lower(): v for k, v in headers.items() if k.lower() != "date"}, body

    for path in ("/api/leaderboard", "/api/progress"):
        fast, routed = answer(path, None), answer(path, "board.example.org")
        assert fast[0] == routed[0] == 200 and fast == routed, (path, fast[1], routed[1])
        etag = fast[1]["etag"]
        fast, routed = answer(path, None, etag), answer(path, "board.example.org", etag)
        assert fast[0] == routed[0] == 304 and fast == routed, (path, fast[1], routed[1])
    status, _, body = server.request("GET", "/api/leaderboard", headers={"Host": "evil.test"})
    assert status == 400 and b"evil.test" in body  # the app's Host check still refuses a foreign Host


def test_keep_alive_polls_of_the_board_do_not_wait_for_a_delayed_ack(site):
    """uvicorn writes an answer's headers and its body separately.  With Nagle's algorithm on (asyncio leaves
    it on for the connections of a listening socket made with proto 0, as the server's is), the body waits
    for the client's delayed ACK of the headers: 40 ms or more per poll on a kept-alive connection.  Ten polls
    in a row on one connection take a millisecond or two each without it."""
    import statistics

    server, _, _ = site
    times = []
    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as s:
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        req = f"GET /api/leaderboard HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n\r\n".encode()
        for _ in range(11):
            t0 = time.perf_counter()
            s.sendall(req)
            data = b""
            while b"\r\n\r\n" not in data:
                data += s.recv(65536)
            head, _, body = data.partition(b"\r\n\r\n")
            length = int(next(h for h in head.split(b"\r\n") if h.lower().startswith(b"content-length:"))[15:])
            while len(body) < length:
                body += s.recv(65536)
            times.append(time.perf_counter() - t0)
            assert head.startswith(b"HTTP/1.1 200") and json.loads(body)
    assert statistics.median(times[1:]) < 0.035, [f"{1000 * t:.1f} ms" for t in times]


def test_pipelined_requests_are_answered_in_order_around_the_boards_fast_answers(site):
    """The HTTP protocol writes a fresh poll's answer as soon as its headers are in, but only when no earlier
    request of the connection is still being answered: three requests sent in one piece (a poll, a bot page's
    JSON that takes the framework's way, a poll revalidating) come back in order."""
    server, _, _ = site
    etag = server.request("GET", "/api/leaderboard")[1]["etag"]
    host = f"Host: 127.0.0.1:{server.port}\r\n"
    reqs = [
        f"GET /api/leaderboard HTTP/1.1\r\n{host}\r\n",
        f"GET /api/bots/simple HTTP/1.1\r\n{host}\r\n",
        f"GET /api/leaderboard HTTP/1.1\r\n{host}If-None-Match: {etag}\r\n\r\n",
    ]
    answers = []
    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as s:
        s.sendall("".join(reqs).encode())
        data = b""
        while len(answers) < 3:
            while b"\r\n\r\n" not in data:
                data += s.recv(65536)
            head, _, data = data.partition(b"\r\n\r\n")
            lengths = [int(h[15:]) for h in head.split(b"\r\n") if h.lower().startswith(b"content-length:")]
            while len(data) < (lengths[0] if lengths else 0):
                data += s.recv(65536)
            n = lengths[0] if lengths else 0
            answers.append((int(head[9:12]), data[:n]))
            data = data[n:]
    assert [a[0] for a in answers] == [200, 200, 304]
    assert isinstance(json.loads(answers[0][1]), list) and json.loads(answers[1][1])["bot"] == "simple"


def test_a_client_pipelining_polls_it_never_reads_is_held_back_not_buffered_for(site):
    """Each poll is 60 bytes in and an answer ten times that out, and each request uvicorn queues behind
    another takes more still.  A client that pipelines polls and reads nothing finds the server stops
    answering them once the answers back up, queues at most a few dozen behind, then stops reading (or cuts
    it off): the server's memory grows by a few megabytes, not by tens of times what the client sent."""
    from pathlib import Path

    server, _, _ = site

    def rss() -> int:
        status = Path(f"/proc/{server.proc.pid}/status").read_text()
        return int(next(line for line in status.splitlines() if line.startswith("VmRSS:")).split()[1]) * 1024

    poll = f"GET /api/leaderboard HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n\r\n".encode()
    chunk = poll * 2000  # 120 kB
    sent, before = 0, rss()
    s = socket.create_connection(("127.0.0.1", server.port), timeout=30)
    try:
        s.setblocking(False)
        deadline = time.monotonic() + 10
        while sent < 20_000_000 and time.monotonic() < deadline:
            if not select.select([], [s], [], 2.0)[1]:
                break  # the server stopped reading: held back
            try:
                sent += s.send(chunk)
            except BlockingIOError:
                continue
            except OSError:  # cut off
                break
        grown = rss() - before
    finally:
        s.close()
    assert sent > 2_000_000 and grown < 60_000_000, f"sent {sent / 1e6:.0f} MB, the server grew {grown / 1e6:.0f} MB"
    assert server.get("/api/leaderboard")  # and it serves on


def test_a_csrf_token_with_non_ascii_characters_is_a_403_not_a_500(site):
    """hmac.compare_digest refuses str with non-ASCII characters (TypeError): a CSRF token of 'é' in the login
    form, a page's form or the X-CSRF-Token header was a 500 and a traceback in the log."""
    from urllib.parse import urlencode

    from tests.league.server import login, set_cookie

    server, tokens, _ = site
    form = {"Content-Type": "application/x-www-form-urlencoded"}
    _, headers, _ = server.request("GET", "/league/login")
    nonce, _ = set_cookie(headers, "league_login_csrf")
    body = urlencode({"token": tokens["bob"], "csrf": "\u00e9"}).encode()
    status, _, answer = server.request(
        "POST", "/league/login", body, headers={**form, "Cookie": f"league_login_csrf={nonce}"}
    )
    assert status == 403 and b"CSRF" in answer, (status, answer[:200])
    sid, _ = login(server, tokens["bob"])
    cookie = {"Cookie": f"league_session={sid}"}
    for path in ("/league/logout", "/league/bot/simple/withdraw"):
        status, _, answer = server.request("POST", path, b"csrf=%C3%A9", headers={**form, **cookie})
        assert status == 403 and b"CSRF" in answer, (path, status, answer[:200])
    # the header as a client sends it: one byte 0xE9 (latin-1), which the server reads as 'é'
    s = socket.create_connection(("127.0.0.1", server.port), timeout=30)
    s.sendall(
        b"POST /api/users/bob/token HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Length: 0\r\n"
        + f"Cookie: league_session={sid}\r\n".encode()
        + b"X-CSRF-Token: \xe9\r\n\r\n"
    )
    answer = b""
    while chunk := s.recv(65536):
        answer += chunk
    s.close()
    assert answer.startswith(b"HTTP/1.1 403") and b"X-CSRF-Token" in answer, answer[:300]
    assert server.get("/api/me", token=tokens["bob"])["user"] == "bob"  # the token was not rotated
    assert "Traceback" not in server.log_text()


@pytest.mark.parametrize("command", ["\ud800", "python3 bot.py \udcff", "python3\x00 bot.py"])
def test_a_command_that_is_not_text_is_a_400_not_a_500(site, command):
    """An organizer's cmd: bot whose command (a JSON string) holds a lone surrogate could not be encoded: a 500
    and a traceback in the log; a NUL byte was stored, and no program can be started with it."""
    server, tokens, _ = site
    name = f"cmdbot{len(command)}{ord(command[-1]) % 97}"
    body = json.dumps({"name": name, "command": command}).encode()  # ensure_ascii: "\ud800" stays an escape
    status, _, answer = server.request(
        "POST",
        "/api/submit",
        body,
        headers={"Content-Type": "application/json", "Authorization": f"Bearer {tokens['olga']}"},
    )
    assert status == 400 and "command" in json.loads(answer)["error"], (status, answer[:300])
    assert server.request("GET", f"/api/bots/{name}")[0] == 404  # nothing stored
    assert "Traceback" not in server.log_text()


def test_a_client_cut_off_for_pipelining_leaves_no_traceback_in_the_log(site):
    """A client that pipelines requests and reads no answers is cut off (the server closes its connection).
    uvicorn marks only the newest request of a connection as disconnected, so the request still being
    answered (waiting for the client to read) wrote its answer to the closed connection: each such client
    left 'Exception in ASGI application' and a 20-line traceback in the server's log."""
    from pathlib import Path

    server, _, _ = site
    log = Path(server.log.name)
    server.log.flush()
    before = log.read_text().count("Exception in ASGI application")
    ask = f"GET /api/bots/simple HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n\r\n".encode()
    for _ in range(3):
        s = socket.create_connection(("127.0.0.1", server.port), timeout=30)
        s.setblocking(False)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            if not select.select([], [s], [], 1.0)[1]:
                break  # the server stopped reading
            try:
                s.send(ask * 500)
            except BlockingIOError:
                continue
            except OSError:  # cut off
                break
        s.close()
    time.sleep(2)
    assert server.get("/api/bots/simple")["bot"] == "simple"
    server.log.flush()
    text = log.read_text()
    assert text.count("Exception in ASGI application") == before, text[-1500:]
