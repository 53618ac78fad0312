"""Bot programs changed since their matches were stored: a warning on resume.

A results directory is tied to its tournament file, not to the bots' files:
a student who hands in a fixed ``bot.py`` changes no key of the file, so the
same ``arena run`` resumes, finds every match stored, and would rank the old
program without a word.  What arena can see cheaply is the modification time
of the files a bot's command names (its script, or its program given by
path: the files the sandbox hides from the other bots); one modified after
the bot's last stored match began means that every stored match of it was
played by an earlier version.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from datetime import datetime, timezone

from ..process.confine.sandbox_policy import bot_places
from .config.model import TournamentConfig


def changed_programs(config: TournamentConfig, last_started: Mapping[str, tuple[str, int]]) -> list[str]:
    """One warning per bot whose named files changed after its last stored
    match started (``last_started``: bot -> (ISO time, matches stored))."""
    out = []
    for bot in config.bots:
        if bot.command is None or bot.name not in last_started:
            continue
        stamp, count = last_started[bot.name]
        try:
            last = datetime.fromisoformat(stamp)
        except ValueError:
            continue            # a hand-edited database: no time to compare with
        if last.tzinfo is None:
            last = last.replace(tzinfo=timezone.utc)
        cwd = str(bot.dir) if bot.dir is not None else None
        changed = []
        for path in bot_places(bot.command, cwd):
            try:
                mtime = os.stat(path).st_mtime
            except OSError:
                continue
            # The stamps are whole seconds: a file written in the match's own
            # second is not taken for a later one.
            if os.path.isfile(path) and mtime >= last.timestamp() + 1:
                changed.append(path)
        if changed:
            when = datetime.fromtimestamp(max(os.stat(p).st_mtime for p in changed), timezone.utc)
            matches = "match was" if count == 1 else "matches were"
            out.append(f"bots.{bot.name}: {', '.join(changed)} changed ({when:%Y-%m-%d %H:%M} UTC) after "
                       f"its last stored match started ({last:%Y-%m-%d %H:%M} UTC): its {count} stored "
                       f"{matches} played by the earlier program, and resuming plays none of them again; "
                       f"to rank the new program, re-play its matches with --rerun {bot.name} (the other bots' "
                       f"stored matches are kept)")
    return out
