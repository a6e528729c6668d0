"""The checks of a real league server (``arena league serve`` with its scheduler) against a user who submits
bots that hang: they cannot hold the checks beyond one slot and ``check_seconds``; another user's bots are
checked beside them, and a refused bot's public reason names its file by name, never by a server path.
The scheduler also removes bot files that no version points to.
"""

from __future__ import annotations

import os
import re
import time

import pytest

from tests.league.server import SIMPLE_COPY, Server, add_user, make_league, wait_for

#: A bot that hangs before its handshake (the sandbox would wait 120 s for it).
HANGS = "import time\ntime.sleep(3600)\n" + SIMPLE_COPY
#: A bot that fails at import: its check's FAIL line names the file.
BREAKS = "import numpy as np\nraise RuntimeError('boom at import')\n"
CHECK_SECONDS = 12  # the hanging checks are stopped after this; long enough for the broken bot to start beside them


def status_of(server: Server, user: str) -> dict[str, str]:
    return {f"{v['bot']}-v{v['version']}": v["status"] for v in server.get(f"/api/users/{user}")["versions"]}


@pytest.mark.slow
def test_hanging_checks_of_one_user_hold_one_slot_for_check_seconds_while_others_are_checked(tmp_path):
    folder = make_league(
        tmp_path / "lg",
        check_seconds=CHECK_SECONDS,
        check_slots=2,
        active_bots_per_user=3,
        extra_rounds=0,
    )
    mallory, alice = add_user(folder, "mallory"), add_user(folder, "alice")
    orphan = folder / "bots" / ("f" * 32)
    orphan.mkdir()
    (orphan / "bot.py").write_text(SIMPLE_COPY)
    for path in (orphan / "bot.py", orphan):  # left by a failed upload long ago: the folder is as old as its file
        os.utime(path, (time.time() - 7200, time.time() - 7200))
    server = Server(folder, play=True)
    try:
        for name in ("hang1", "hang2", "hang3"):  # first in the queue
            assert server.post_json("/api/submit", {"name": name, "source": HANGS}, token=mallory)[0] == 202
        assert server.post_json("/api/submit", {"name": "broken", "source": BREAKS}, token=alice)[0] == 202
        t0 = time.monotonic()
        decided = wait_for(
            lambda: (s := status_of(server, "alice")) and "checking" not in s.values() and s,
            90,
            "alice's bots to be checked beside mallory's hanging ones",
        )
        assert decided == {"broken-v1": "refused"}
        mal = wait_for(
            lambda: (s := status_of(server, "mallory"))["hang1-v1"] != "checking" and s, 60, "hang1's time limit"
        )
        assert mal["hang1-v1"] == "refused"
        elapsed = time.monotonic() - t0
        log = server.log_text()
        order = [m.group(0) for m in re.finditer(r"(checking|refused) (hang\d|broken)-v1", log)]
        # alice's first check started while mallory's first was still hanging ...
        assert order.index("checking broken-v1") < order.index("refused hang1-v1"), order
        # ... and mallory never had two checks at once: her next started only once her first was stopped.
        if "checking hang2-v1" in order:
            assert order.index("checking hang2-v1") > order.index("refused hang1-v1"), order
        reasons = {v["bot"]: v["reason"] for v in server.get("/api/users/mallory")["versions"]}
        assert f"longer than {CHECK_SECONDS} s" in reasons["hang1"]
        assert elapsed < 80
        # The public reason names the file by the bot's name; no server path anywhere in the answer.
        text = server.request("GET", "/api/users/alice")[2].decode()
        broken = next(v for v in server.get("/api/users/alice")["versions"] if v["bot"] == "broken")
        assert "broken-v1.py" in broken["reason"] and "boom at import" in broken["reason"], broken["reason"]
        for secret in (str(folder), str(folder.resolve()), "/bots/", str(tmp_path)):
            assert secret not in text, secret
        page = server.request("GET", "/league/user/alice")[2].decode()
        assert str(folder) not in page and "broken-v1.py" in page
        # The orphan file is gone; the files versions point to are kept.
        assert not orphan.exists()
        assert "no version points to it" in server.log_text()
        kept = [p for p in (folder / "bots").iterdir() if p.is_dir()]
        assert len(kept) == 2  # HANGS and BREAKS: one folder per distinct file
    finally:
        server.stop()
