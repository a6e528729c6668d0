"""The submit page takes every kind of upload the API takes, as a multipart/form-data file, and refuses
what an attacker sends it: against the real ``arena league serve`` process (``--no-play``: the web
layer's answers alone) on a real SQLite file, the EAAI kit being the tests' stand-in
(tests/eaai_kit.py).

Each refusal is a 4xx with one line on the page; where the JSON API takes the same bytes, the page's
line is the API's line word for word, and nothing is stored.
"""

from __future__ import annotations

import base64
import hashlib
import html
import io
import json
import re
import select
import socket
import sqlite3
import time
from pathlib import Path
from urllib.parse import urlencode

import numpy as np
import pytest

from arena.botkit.policy import mlp_onnx
from arena.engine.actions import NUM_ACTIONS, OBS_SIZE
from arena.engine.mlp import random_mlp, save_mlp
from tests.eaai_kit import PLAYER, build_kit, zip_bytes
from tests.league.server import SIMPLE_COPY, Server, add_user, login, make_league
from tests.policy_files import AGENT

MAX_FILE = 60_000
MAX_ARCHIVE = 200_000
BOUNDARY = "----arena-test-7d1c"


@pytest.fixture(scope="module")
def kit(tmp_path_factory):
    return build_kit(tmp_path_factory.mktemp("webform"))


@pytest.fixture(scope="module")
def site(kit):
    folder = make_league(
        kit["root"] / "league",
        eaai_kit=str(kit["kit"]),
        max_file_bytes=MAX_FILE,
        max_archive_bytes=MAX_ARCHIVE,
        submissions_per_hour=200,
        active_bots_per_user=50,
        bytes_per_user=50_000_000,
    )
    tokens = {u: add_user(folder, u) for u in ("ann", "ben")}
    server = Server(folder, play=False)
    sessions = {u: login(server, t) for u, t in tokens.items()}
    yield server, tokens, sessions, folder
    server.stop()


def _npz() -> bytes:
    buf = io.BytesIO()
    save_mlp(buf, random_mlp(OBS_SIZE, NUM_ACTIONS, (16,), seed=5))
    return buf.getvalue()


def multipart(parts: list[tuple[str, str | None, bytes]], boundary: str = BOUNDARY) -> bytes:
    """A multipart/form-data body of (field name, file name or None for a text field, bytes)."""
    out = bytearray()
    for name, filename, data in parts:
        disposition = f'form-data; name="{name}"' + ("" if filename is None else f'; filename="{filename}"')
        out += f"--{boundary}\r\nContent-Disposition: {disposition}\r\n".encode()
        if filename is not None:
            out += b"Content-Type: application/octet-stream\r\n"
        out += b"\r\n" + data + b"\r\n"
    out += f"--{boundary}--\r\n".encode()
    return bytes(out)


def page_form(
    csrf: str, name: str, file: tuple[str, bytes] | None = None, cls: str = "", source: str = ""
) -> list[tuple[str, str | None, bytes]]:
    """The parts a browser sends for the submit form, in its order (an empty file input: no name, no bytes)."""
    filename, data = file if file is not None else ("", b"")
    return [
        ("csrf", None, csrf.encode()),
        ("name", None, name.encode()),
        ("file", filename, data),
        ("class", None, cls.encode()),
        ("source", None, source.encode()),
    ]


def post(server: Server, sid: str | None, body: bytes, ctype: str = f"multipart/form-data; boundary={BOUNDARY}"):
    headers = {"Content-Type": ctype}
    if sid is not None:
        headers["Cookie"] = f"league_session={sid}"
    return server.request("POST", "/league/submit", body, headers=headers)


def page_error(status: int, body: bytes) -> str:
    """The one line a refused post shows (the submit page's error, or the error page's)."""
    text = body.decode()
    assert 400 <= status < 500 and "Traceback" not in text, (status, text[:300])
    m = re.search(r"<p class=error[^>]*>(.*?)</p>", text) or re.fullmatch(r"([^\n<]+)", text)
    assert m, text[:300]
    return html.unescape(m.group(1))


def api_error(server: Server, token: str, payload: dict) -> str:
    status, answer = server.post_json("/api/submit", payload, token=token)
    assert 400 <= status < 500, answer
    return answer["error"]


def versions(folder: Path) -> list[tuple]:
    c = sqlite3.connect(folder / "league.db")
    try:
        return c.execute("SELECT run_name, kind, spec, sha256, size FROM versions ORDER BY id").fetchall()
    finally:
        c.close()


def stored(folder: Path, run_name: str) -> tuple:
    return next(v for v in versions(folder) if v[0] == run_name)


def test_the_page_is_a_plain_multipart_form_naming_every_kind_and_its_limits(site):
    server, _, sessions, _ = site
    sid, csrf = sessions["ann"]
    page = server.request("GET", "/league/submit", headers={"Cookie": f"league_session={sid}"})[2].decode()
    form = re.search(r"<form method=post action='/league/submit'[^>]*>", page).group(0)
    assert "enctype='multipart/form-data'" in form
    assert "<input type=file name=file id=file accept='.py,.onnx,.npz,.jar,.zip'>" in page
    assert "name=class" in page and "<textarea name=source" in page and f"value='{csrf}'" in page
    assert f"at most {MAX_FILE} bytes" in page and f"at most {MAX_ARCHIVE} bytes" in page


def test_every_kind_the_api_takes_is_stored_from_the_page_byte_for_byte(site, kit):
    server, _, sessions, folder = site
    sid, csrf = sessions["ann"]
    mlp = random_mlp(OBS_SIZE, NUM_ACTIONS, (16,), seed=5)
    sent = {
        "pybot": (("pybot.py", SIMPLE_COPY.encode()), "", "file", "/bot.py"),
        "pypolicy": (("agent.py", AGENT.encode()), "", "policy", "/policy.py"),
        "npzpol": (("weights.NPZ", _npz()), "", "policy", "/policy.npz"),
        "onnxpol": (("model.onnx", mlp_onnx(mlp)), "", "policy", "/policy.onnx"),
        "kitjar": (("player.jar", kit["jar"]), PLAYER, "eaai", ":" + PLAYER),
        "kitzip": (("classes.zip", kit["zip"]), PLAYER, "eaai", ":" + PLAYER),
    }
    for name, (file, cls, kind, ends) in sent.items():
        status, headers, body = post(server, sid, multipart(page_form(csrf, name, file, cls)))
        assert status == 303 and headers["location"] == "/league/user/ann", (name, status, body[:300])
        _, got_kind, spec, sha, _ = stored(folder, f"{name}-v1")
        assert got_kind == kind and spec.endswith(ends) and sha == hashlib.sha256(file[1]).hexdigest(), name
    bot = server.get("/api/bots/kitjar")
    assert bot["owner"] == "ann" and bot["versions"][0]["status"] == "checking"
    # the API would have stored the same: the same bytes as a new version are the same upload
    status, answer = server.post_json(
        "/api/submit",
        {"name": "npzpol", "policy": base64.b64encode(_npz()).decode(), "format": "npz"},
        token=site[1]["ann"],
    )
    assert status == 202
    assert stored(folder, "npzpol-v2")[1:4] == stored(folder, "npzpol-v1")[1:4]


def test_pasted_source_goes_with_its_own_line_endings_and_the_old_urlencoded_form_still_works(site):
    server, _, sessions, folder = site
    sid, csrf = sessions["ann"]
    crlf = SIMPLE_COPY.replace("\n", "\r\n")  # what a browser sends for a textarea
    status, _, body = post(server, sid, multipart(page_form(csrf, "pasted", source=crlf)))
    assert status == 303, body[:300]
    assert stored(folder, "pasted-v1")[3] == hashlib.sha256(SIMPLE_COPY.encode()).hexdigest()
    form = urlencode({"csrf": csrf, "name": "pasted", "source": SIMPLE_COPY}).encode()
    status, _, body = post(server, sid, form, "application/x-www-form-urlencoded")
    assert status == 303 and stored(folder, "pasted-v2")[3] == stored(folder, "pasted-v1")[3]


def test_an_urlencoded_form_sending_a_field_twice_is_refused_as_a_multipart_one_is(site):
    """The urlencoded form kept a repeated field's first value (a second name, a second token) where the
    multipart form refused it; the docs promise the refusal for both."""
    server, _, sessions, folder = site
    sid, csrf = sessions["ann"]
    before = versions(folder)
    for field, pairs in [
        ("name", [("csrf", csrf), ("name", "dupname"), ("name", "other"), ("source", SIMPLE_COPY)]),
        ("csrf", [("csrf", "not-the-token"), ("csrf", csrf), ("name", "dupcsrf"), ("source", SIMPLE_COPY)]),
        ("source", [("csrf", csrf), ("name", "dupsrc"), ("source", SIMPLE_COPY), ("source", "x = 1\n")]),
    ]:
        status, _, out = post(server, sid, urlencode(pairs).encode(), "application/x-www-form-urlencoded")
        line = page_error(status, out)
        assert status == 400 and line == f"the form sends its field {field!r} twice", (field, status, line)
    status, _, out = server.request(  # the login form is read the same way
        "POST",
        "/league/login",
        urlencode([("token", "a"), ("token", "b"), ("csrf", "x")]).encode(),
        headers={"Content-Type": "application/x-www-form-urlencoded"},
    )
    assert page_error(status, out) == "the form sends its field 'token' twice"
    assert versions(folder) == before


def _bad_npz() -> bytes:
    buf = io.BytesIO()
    np.savez(buf, format=np.array("gin-arena-mlp-1"), w0=np.array([{"x": 1}], dtype=object))
    return buf.getvalue()


LIARS = {
    # case: ((file name, bytes; None: the kit's jar), class, the API's field for the same bytes (None: the
    # page's own refusal), the status, words of the line)
    "jar-not-zip": (("player.jar", b"not a zip at all"), PLAYER, "archive", 400, "not a jar or a zip"),
    "npz-pickle": (("weights.npz", _bad_npz()), "", "npz", 400, "pickle"),
    "npz-garbage": (("weights.npz", b"\x93NUMPY garbage"), "", "npz", 400, ""),
    "onnx-zip": (("model.onnx", zip_bytes({"a": b"b"})), "", "onnx", 400, "not an ONNX model"),
    "py-is-npz": (("bot.py", _npz()), "", "source", 400, "this is a policy file"),
    "py-not-utf8": (("bot.py", b"x = '\xff'\n"), "", "source", 400, "not UTF-8"),
    "jar-no-class": (("player.jar", b"PK\x03\x04"), "", "archive", 400, "needs its class name"),
    "jar-wrong-class": (("player.jar", None), "players.Nope", "archive", 400, "holds no players/Nope.class"),
    "jar-bad-class": (("player.jar", None), "a..b;rm", "archive", 400, "is not a Java class name"),
    "class-with-py": (("bot.py", SIMPLE_COPY.encode()), PLAYER, "source", 400, "a class name goes with"),
    "exe": (("bot.exe", b"MZ"), "", None, 415, "is not one of .py, .jar, .zip, .onnx, .npz"),
    "no-suffix": (("bot", SIMPLE_COPY.encode()), "", None, 415, "is not one of"),
}


@pytest.mark.parametrize("case", list(LIARS), ids=list(LIARS))
def test_a_file_whose_suffix_lies_or_lacks_its_class_is_refused_in_the_apis_one_line(site, kit, case):
    server, tokens, sessions, folder = site
    sid, csrf = sessions["ann"]
    (filename, data), cls, api_kind, status_want, words = LIARS[case]
    data = kit["jar"] if data is None else data
    before = versions(folder)
    bots_before = sorted(p.name for p in (folder / "bots").iterdir())
    status, _, body = post(server, sid, multipart(page_form(csrf, "liar", (filename, data), cls)))
    line = page_error(status, body)
    assert status == status_want and words in line and "\n" not in line, (status, line)
    if api_kind is not None:
        payload: dict = {"name": "liar"}
        if api_kind == "archive":
            payload.update(archive=base64.b64encode(data).decode(), **({"class": cls} if cls else {}))
        elif api_kind == "source":
            payload.update(source=data.decode("utf-8", "surrogateescape"), **({"class": cls} if cls else {}))
        else:
            payload.update(policy=base64.b64encode(data).decode(), format=api_kind)
        if case != "py-not-utf8":  # (JSON carries text only: the API cannot send those bytes)
            assert line == api_error(server, tokens["ann"], payload)
    assert versions(folder) == before
    assert sorted(p.name for p in (folder / "bots").iterdir()) == bots_before


def test_an_oversize_file_is_refused_by_the_leagues_limit_and_a_huge_body_before_it_is_read(site, kit):
    server, tokens, sessions, folder = site
    sid, csrf = sessions["ann"]
    before = versions(folder)
    big_jar = zip_bytes({"players/KitSimplePlayer.class": np.random.default_rng(1).bytes(MAX_ARCHIVE + 10)})
    status, _, body = post(server, sid, multipart(page_form(csrf, "big", ("big.jar", big_jar), PLAYER)))
    line = page_error(status, body)
    assert status == 413 and f"the limit is {MAX_ARCHIVE}" in line, line
    big_py = (SIMPLE_COPY + "#" * MAX_FILE).encode()
    status, _, body = post(server, sid, multipart(page_form(csrf, "big", ("big.py", big_py))))
    assert status == 413 and f"the limit is {MAX_FILE}" in page_error(status, body)
    status, _, body = post(server, sid, multipart(page_form(csrf, "big", ("big.npz", b"PK" + bytes(MAX_ARCHIVE)))))
    assert status == 413 and f"the limit is {MAX_ARCHIVE}" in page_error(status, body)
    # past the body's own cap: refused from its Content-Length, or counted as it comes (chunked)
    limit = max(3 * MAX_FILE, MAX_ARCHIVE + MAX_FILE) + 16_384
    huge = multipart(page_form(csrf, "big", ("huge.npz", bytes(limit))))
    status, _, body = post(server, sid, huge)
    assert status == 413 and f"limit {limit} bytes" in body.decode()
    peak = _peak_rss(server.proc.pid)
    total = 64 << 20
    sent, answer = _send_chunked(server, sid, total)
    assert answer.startswith(b"HTTP/1.1 413") and b"request body too large" in answer, answer[:200]
    assert sent < total  # answered (and dropped) long before the body's end
    assert _peak_rss(server.proc.pid) - peak < 24 << 20  # the server never held the 64 MiB
    assert versions(folder) == before


@pytest.mark.parametrize("filler", ["\u00e9", "\x01"], ids=["french-comments", "control-bytes"])
def test_a_bot_file_at_the_limit_is_taken_by_the_api_whatever_json_escapes_it_to(tmp_path, filler):
    """``arena submit`` sends a bot file as JSON text, ASCII-escaped: an é (2 bytes) is 6 bytes there, a control
    byte 6 too.  The API's body limit counted on JSON doubling a file at most, so where a league's max_file_bytes
    is large beside its max_archive_bytes, a file within the limit was refused as a body 'too large' (naming
    the body's limit, not the file's); one byte over the file's limit is the league's own refusal."""
    limit = 1_000_000
    folder = make_league(tmp_path / "big", max_file_bytes=limit)
    token = add_user(folder, "cat")
    server = Server(folder, play=False)
    try:
        for name, size in (("atlimit", limit), ("over", limit + 1)):
            head = SIMPLE_COPY.encode() + b"\n#"
            source = (head + filler.encode() * size)[:size]
            source = source if source.decode("utf-8", "ignore").encode() == source else source[:-1] + b"x"
            assert len(source) == size
            status, answer = server.post_json("/api/submit", {"name": name, "source": source.decode()}, token=token)
            if size == limit:
                assert status == 202, answer
            else:
                assert status == 413 and answer["error"] == f"the file is {size} bytes; the limit is {limit}", answer
        names = [v[0] for v in versions(folder)]
        assert "atlimit-v1" in names and "over-v1" not in names
    finally:
        server.stop()


def _send_chunked(server: Server, sid: str, total: int) -> tuple[int, bytes]:
    """Stream a chunked multipart body of ``total`` bytes, stopping when the server answers; (bytes sent, answer)."""
    s = socket.create_connection(("127.0.0.1", server.port), timeout=20)
    s.sendall(
        (
            f"POST /league/submit HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: league_session={sid}\r\n"
            f"Content-Type: multipart/form-data; boundary={BOUNDARY}\r\nTransfer-Encoding: chunked\r\n\r\n"
        ).encode()
    )
    chunk = b"%x\r\n" % 65536 + bytes(65536) + b"\r\n"
    sent = 0
    try:
        while sent < total and not select.select([s], [], [], 0)[0]:
            try:
                s.sendall(chunk)
            except OSError:  # the server answered and closed
                break
            sent += 65536
        return sent, _read_answer(s)
    finally:
        s.close()


def _read_answer(s: socket.socket) -> bytes:
    """The whole answer on ``s``: its head and as many body bytes as its Content-Length says.

    One ``recv`` may return the head alone (the body comes in its own segment), which read the
    413 without its line now and then.
    """
    answer = b""
    try:
        while b"\r\n\r\n" not in answer:
            part = s.recv(4096)
            if not part:
                return answer
            answer += part
        head, _, body = answer.partition(b"\r\n\r\n")
        fields = dict(ln.partition(b":")[::2] for ln in head.split(b"\r\n")[1:])
        length = int({k.lower(): v for k, v in fields.items()}.get(b"content-length", b"0"))
        while len(body) < length:
            part = s.recv(4096)
            if not part:
                break
            body += part
        return head + b"\r\n\r\n" + body
    except OSError:
        return answer


def _peak_rss(pid: int) -> int:
    """The process's peak resident memory in bytes (VmHWM)."""
    line = next(x for x in Path(f"/proc/{pid}/status").read_text().splitlines() if x.startswith("VmHWM:"))
    return int(line.split()[1]) * 1024


def test_a_slow_upload_is_cut_off_with_a_408(site):
    server, _, sessions, _ = site
    sid, _ = sessions["ann"]
    s = socket.create_connection(("127.0.0.1", server.port), timeout=20)
    t0 = time.monotonic()
    s.sendall(
        (
            f"POST /league/submit HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: league_session={sid}\r\n"
            f"Content-Type: multipart/form-data; boundary={BOUNDARY}\r\nContent-Length: 100000\r\n\r\n--"
        ).encode()
    )
    answer = s.recv(4096)
    s.close()
    assert answer.startswith(b"HTTP/1.1 408") and time.monotonic() - t0 < 15, answer[:100]


def test_garbled_or_padded_forms_are_refused_in_one_line(site):
    server, _, sessions, folder = site
    sid, csrf = sessions["ann"]
    before = versions(folder)
    good = page_form(csrf, "odd", ("bot.py", SIMPLE_COPY.encode()))
    body = multipart(good)
    cases = [
        (multipart([*good, ("evil", None, b"")]), 400, "the form has no field 'evil'"),
        (multipart([*good, *[(f"x{i}", None, b"") for i in range(1000)]]), 400, "the form has no field 'x0'"),
        (multipart([*good, *[("name", None, b"a")] * 1000]), 400, "sends its field 'name' twice"),
        (multipart([*good, ("name", None, b"other")]), 400, "sends its field 'name' twice"),
        (multipart([*good, ("file", "two.py", b"x = 1\n")]), 400, "sends its field 'file' twice"),
        (multipart([good[0], good[1], ("file", None, b"x = 1\n")]), 400, "'file' must be a file"),
        (multipart([("csrf", "csrf.txt", csrf.encode()), *good[1:]]), 400, "'csrf' must be text"),
        (multipart([*good[:4], ("source", None, b"\xff\xfe")]), 400, "'source' is not UTF-8"),
        (multipart([good[0], ("name", None, b"n" * 201), *good[2:]]), 413, "'name' is over its 200-byte limit"),
        (body[: len(body) // 2], 400, "ends before its closing boundary"),
        (
            body.replace(b'Content-Disposition: form-data; name="name"', b"Content-Disposition: attachment"),
            400,
            "no Content-Disposition: form-data",
        ),
        (body.replace(b"Content-Type: application/octet-stream", b"X-Pad: " + b"a" * 3000), 400, "header over"),
        (
            body.replace(b"Content-Type: application/octet-stream", b"A: 1\r\nB: 2\r\nC: 3\r\nD: 4"),
            400,
            "more than 4 headers",
        ),
        (b"garbage without a boundary", 400, "garbled"),
    ]
    for data, want, words in cases:
        status, _, out = post(server, sid, data)
        line = page_error(status, out)
        assert status == want and words in line, (words, status, line)
    for ctype, want, words in [
        ("multipart/form-data", 400, "no valid boundary"),
        ("multipart/form-data; boundary=", 400, "no valid boundary"),
        ("multipart/form-data; boundary=" + "b" * 71, 400, "no valid boundary"),
        ("text/plain", 415, "send the form as multipart/form-data"),
        ("application/json", 415, "send the form as multipart/form-data"),
    ]:
        status, _, out = post(server, sid, body, ctype)
        line = page_error(status, out)
        assert status == want and words in line, (ctype, status, line)
    assert versions(folder) == before


def test_a_post_without_a_session_or_its_csrf_token_is_refused_and_nothing_is_stored(site):
    server, tokens, sessions, folder = site
    sid, csrf = sessions["ann"]
    other_csrf = sessions["ben"][1]
    before = versions(folder)
    file = ("bot.py", SIMPLE_COPY.encode())
    for who, form, want, words in [
        (None, page_form(csrf, "nope", file), 401, "log in first"),
        ("not-a-session", page_form(csrf, "nope", file), 401, "log in first"),
        (sid, page_form("", "nope", file), 403, "CSRF token is wrong or missing"),
        (sid, page_form(csrf[:-2] + "xx", "nope", file), 403, "CSRF token is wrong or missing"),
        (sid, page_form(other_csrf, "nope", file), 403, "CSRF token is wrong or missing"),  # another user's
        (sid, page_form(csrf, "nope", file)[1:], 403, "CSRF token is wrong or missing"),  # no csrf field at all
    ]:
        status, _, out = post(server, who, multipart(form))
        assert status == want and words in page_error(status, out), (who, status, out[:200])
    assert versions(folder) == before


def test_a_file_name_with_path_tricks_is_only_a_name_and_never_a_path(site):
    server, _, sessions, folder = site
    sid, csrf = sessions["ann"]
    base = folder.parent
    for i, trick in enumerate(["../../trick.py", "..\\..\\trick.py", "/tmp/trick.py", "C:\\Windows\\trick.py"]):
        source = SIMPLE_COPY + f"\n# {i}\n"
        status, _, body = post(server, sid, multipart(page_form(csrf, f"trick{i}", (trick, source.encode()))))
        assert status == 303, (trick, body[:300])
        _, kind, spec, sha, _ = stored(folder, f"trick{i}-v1")
        assert kind == "file" and re.fullmatch(r"bots/[0-9a-f]{32}/bot\.py", spec)
        assert (folder / spec).read_bytes() == source.encode()
    assert not list(base.rglob("trick.py")) and not Path("/tmp/trick.py").exists()
    # a name that is markup is shown escaped, in one line
    status, _, body = post(server, sid, multipart(page_form(csrf, "x", ("<img src=x>.exe", b"MZ"))))
    assert status == 415 and b"<img src=x>" not in body and b"&lt;img src=x&gt;.exe" in body


def test_a_file_and_pasted_source_together_or_neither_is_refused(site):
    server, _, sessions, folder = site
    sid, csrf = sessions["ann"]
    before = versions(folder)
    both = page_form(csrf, "both", ("bot.py", SIMPLE_COPY.encode()), source=SIMPLE_COPY)
    status, _, body = post(server, sid, multipart(both))
    assert status == 400 and page_error(status, body) == "send a file or pasted source, not both"
    assert "name=name id=name" in body.decode() and "value='both'" in body.decode()  # the form again, filled in
    status, _, body = post(server, sid, multipart(page_form(csrf, "neither")))
    assert status == 400 and page_error(status, body) == "choose a file, or paste a Python bot's source"
    assert versions(folder) == before


def test_the_page_refuses_a_jar_where_the_league_has_no_kit_as_the_api_does(tmp_path):
    folder = make_league(tmp_path / "nokit")
    token = add_user(folder, "cat")
    server = Server(folder, play=False)
    try:
        sid, csrf = login(server, token)
        page = server.request("GET", "/league/submit", headers={"Cookie": f"league_session={sid}"})[2].decode()
        assert "accept='.py,.onnx,.npz'" in page and "name=class" not in page
        jar = zip_bytes({"players/KitSimplePlayer.class": b"\xca\xfe\xba\xbe"})
        status, _, body = post(server, sid, multipart(page_form(csrf, "j", ("p.jar", jar), PLAYER)))
        line = page_error(status, body)
        assert status == 400 and "has not set eaai_kit" in line
        payload = {"name": "j", "archive": base64.b64encode(jar).decode(), "class": PLAYER}
        assert line == api_error(server, token, payload)
        assert json.loads(server.request("GET", "/api/users/cat")[2])["versions"] == []
    finally:
        server.stop()
