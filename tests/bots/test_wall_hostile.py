"""Hostile bots behind the real wall, on angles the other wall tests do not take: a handshake built
to break the arena's own parsing, and kernel memory held through file descriptors, past ``memory_mb``."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from arena.botkit.bot import BotError
from arena.external import Limits, external_bot
from arena.external.process import ExternalBotError, LogBuffer, start_and_handshake
from arena.external.protocol import ProtocolError, parse_hello
from arena.external.wall import wall_problem

PROBLEM = wall_problem()
if PROBLEM is not None and os.environ.get("CI") == "true":
    raise AssertionError(f"CI must build the bot sandbox: {PROBLEM}")
needs_wall = pytest.mark.skipif(PROBLEM is not None, reason=f"no wall here: {PROBLEM}")

#: A bot whose hello names a parameter with an integer of 400 digits: valid JSON, a number, finite.
HUGE_PARAM = r"""
import json, sys
for line in sys.stdin:
    if json.loads(line).get("type") == "hello":
        sys.stdout.write('{"name": "huge", "protocol": 1, "params": {"k": 1' + "0" * 400 + '}}\n')
        sys.stdout.flush()
"""


def _bot_processes(marker: str) -> list[str]:
    ps = subprocess.run(["ps", "-eo", "pid,stat,args"], capture_output=True, text=True).stdout
    return [line for line in ps.splitlines() if marker in line and " Z" not in line and "ps -eo" not in line]


@needs_wall
def test_a_hello_with_a_parameter_too_big_for_a_float_is_a_bad_handshake_and_leaves_no_process(tmp_path):
    """``math.isfinite`` of a 400-digit integer raises OverflowError: the load died with a traceback
    (the whole run with it) and the bot's process was never killed."""
    with pytest.raises(ProtocolError, match="^bad handshake: params"):
        parse_hello(b'{"name": "huge", "protocol": 1, "params": {"k": 1' + b"0" * 400 + b"}}")
    tmp_path.chmod(0o755)
    script = tmp_path / "huge_param_bot.py"
    script.write_text(HUGE_PARAM)
    with pytest.raises((ExternalBotError, BotError), match="bad handshake"):
        external_bot(None, [sys.executable, str(script)], str(tmp_path), Limits())
    assert _bot_processes(str(script)) == []
    log = LogBuffer(1 << 16)
    with pytest.raises(ExternalBotError, match="^bad handshake: params"):
        start_and_handshake([sys.executable, str(script)], str(tmp_path), Limits(), log)
    assert _bot_processes(str(script)) == []
