"""``arena submit FILE --to http://HOST:PORT --token TOKEN``: upload a bot to a league server."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from arena.league.db import LeagueError
from arena.settings.botref import CMD_PREFIX


def is_url(to: str) -> bool:
    return to.startswith(("http://", "https://"))


def submit_to_server(file: str, url: str, token: str, name: str | None = None, timeout: float = 60.0) -> dict[str, Any]:
    """Upload ``file`` (a Python bot file, or ``cmd:...`` for organizers); the server's answer."""
    if file.startswith(CMD_PREFIX):
        payload: dict[str, Any] = {"command": file.removeprefix(CMD_PREFIX)}
        default = None
    else:
        p = Path(file)
        try:
            data = p.read_bytes()
        except OSError as exc:
            raise LeagueError(f"cannot read {file}: {exc.strerror or exc}") from None
        try:
            payload = {"source": data.decode("utf-8")}
        except UnicodeDecodeError:
            raise LeagueError(f"{file} is not UTF-8 text") from None
        default = p.stem
    bot = name or default
    if not bot:
        raise LeagueError("a cmd: bot needs --name")
    payload["name"] = bot
    req = urllib.request.Request(
        url.rstrip("/") + "/api/submit",
        data=json.dumps(payload).encode(),
        method="POST",
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            return json.loads(resp.read().decode())
    except urllib.error.HTTPError as exc:
        try:
            msg = json.loads(exc.read().decode()).get("error", "")
        except (ValueError, AttributeError, UnicodeDecodeError):
            msg = ""
        raise LeagueError(f"the server refused the bot ({exc.code}): {msg or exc.reason}") from None
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise LeagueError(f"cannot reach the league at {url}: {reason}") from None
    except ValueError:
        raise LeagueError(f"{url} did not answer like a league server") from None
