"""``arena submit FILE --to http://HOST:PORT``: upload a bot (a Python file, a command, an EAAI-kit
player's jar or zip with ``--class``, or a trained policy ``policy:FILE``) to a league server."""

from __future__ import annotations

import base64
import json
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from arena.league.db import LeagueError
from arena.league.file_kinds import file_kind, policy_format
from arena.settings.botref import CMD_PREFIX, POLICY_PREFIX


def is_url(to: str) -> bool:
    return to.startswith(("http://", "https://"))


def league_base(url: str) -> str:
    """The league server's address (``http://HOST:PORT``) from what a user may give: the server prints its
    pages' address (``http://HOST:PORT/league/``), and a browser shows a page's; the API is under ``/api/``."""
    base = url.rstrip("/")
    for tail in ("/league", "/api/submit", "/api"):
        if base.endswith(tail):
            return base.removesuffix(tail)
    return base


def _read(file: str) -> bytes:
    try:
        return Path(file).read_bytes()
    except OSError as exc:
        raise LeagueError(f"cannot read {file}: {exc.strerror or exc}") from None


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    """Refuse every redirect: urllib's default follows a 301, 302 or 303 to any host, as a GET that still
    carries the ``Authorization`` header, so a server (or anything between) that answers with one would
    be handed the user's token, and its answer read as the league's."""

    def redirect_request(self, req: Any, fp: Any, code: int, msg: str, headers: Any, newurl: str) -> None:
        raise LeagueError(
            f"the league at {req.full_url} answered with a redirect ({code}) to {newurl}; the bot and your token "
            "were not sent there: give --to the address the league server prints"
        )


_OPENER = urllib.request.build_opener(_NoRedirects)


def submit_to_server(
    file: str,
    url: str,
    token: str,
    name: str | None = None,
    timeout: float = 60.0,
    class_name: str | None = None,
) -> dict[str, Any]:
    """Upload ``file`` (a Python bot file, ``cmd:...`` for organizers, or an EAAI-kit player's jar or zip
    with ``class_name``); the server's answer."""
    kind = None if file.startswith(CMD_PREFIX) else file_kind(file.removeprefix(POLICY_PREFIX))
    is_archive = kind == "archive"
    if class_name is not None and not is_archive:
        raise LeagueError(f"--class names the player class of a .jar or .zip; {file} is neither")
    if file.startswith(CMD_PREFIX):
        payload: dict[str, Any] = {"command": file.removeprefix(CMD_PREFIX)}
        default = None
    elif file.startswith(POLICY_PREFIX) or kind == "policy":
        path = file.removeprefix(POLICY_PREFIX)
        form = policy_format(path)
        if form not in ("py", "onnx", "npz"):
            raise LeagueError(f"{file}: a policy file ends in .py, .onnx or .npz")
        payload = {"policy": base64.b64encode(_read(path)).decode("ascii"), "format": form}
        default = Path(path).stem
    elif is_archive:
        if not class_name:
            raise LeagueError(f"{file}: an EAAI-kit player needs --class (its GinRummyPlayer, e.g. com.example.P)")
        payload = {"archive": base64.b64encode(_read(file)).decode("ascii"), "class": class_name}
        default = class_name.rsplit(".", 1)[-1]
    else:
        p = Path(file)
        data = _read(file)
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
        league_base(url) + "/api/submit",
        data=json.dumps(payload).encode(),
        method="POST",
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
    )
    try:
        with _OPENER.open(req, timeout=timeout) as resp:
            answer = json.loads(resp.read().decode())
    except LeagueError:
        raise
    except urllib.error.HTTPError as exc:
        try:
            msg = json.loads(exc.read().decode()).get("error", "")
        except (ValueError, AttributeError, UnicodeDecodeError):
            msg = ""
        hint = f"; is {url} a league server (http://HOST:PORT)?" if exc.code == 404 else ""
        raise LeagueError(f"the server refused the bot ({exc.code}): {msg or exc.reason}{hint}") from None
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise LeagueError(f"cannot reach the league at {url}: {reason}") from None
    except ValueError:
        answer = None
    if not isinstance(answer, dict) or not {"bot", "version", "status"} <= answer.keys():
        raise LeagueError(f"{url} did not answer like a league server")
    return answer
