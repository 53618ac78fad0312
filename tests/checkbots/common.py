"""The greedy bot (botkit + GreedyPlayer) with one bug of the kind students
write, for ``arena check`` to find (tests/test_check.py, and in-process
tests/test_check_fake.py).  Each bot in this directory overrides
``lines_for``: the lines it writes for one message; what it prints goes to
stdout as well.  Run as a script, a bot plays; imported, it does not."""

from __future__ import annotations

import json
import os
import sys
from typing import Any, TextIO

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))

from arena import botkit  # noqa: E402
from arena.players.greedy import GreedyPlayer  # noqa: E402


class Session(botkit.BotSession):
    def __init__(self, name: str, stderr: TextIO | None = None) -> None:
        super().__init__(make_player=lambda info: GreedyPlayer(info.rng(), name=name), name=name,
                         stderr=stderr)

    def lines_for(self, msg: dict[str, Any], reply: dict[str, Any] | None) -> list[dict[str, Any]]:
        return [reply] if reply is not None else []


def run(session: Session) -> None:
    for line in sys.stdin:
        if not line.strip():
            continue
        msg = json.loads(line)
        for out in session.lines_for(msg, session.handle(msg)):
            sys.stdout.write(json.dumps(out) + "\n")
            sys.stdout.flush()
        if session.done:
            return


def rank(card: str) -> str:
    return card[:-1]


def is_wild(card: str) -> bool:
    return card == "JK" or rank(card) == "2"
