"""The watched submissions folder: ``DIR/submissions/AUTHOR/`` handed in by dropping it there.

``arena league run`` looks at the folder before each new table and, idle,
every few seconds.  Each folder in it is an author's (named as in the league
file) and holds their program as they would hand it to ``arena league
submit``.  A folder is taken once it is **complete**: every file's path, size
and modification time unchanged between two looks at least
``SETTLE_SECONDS`` apart, so a copy still under way is not taken half done.
(A copy that stalls longer than that could be: copy into a folder whose
name starts with '.', which is never looked at, and rename it into place.)

It is then handed in as ``submit`` does, unless its content is one this
author handed in before (the store is content-addressed: the same files
have the same digest), so a restarted run, a folder copied again or one
merely touched registers nothing.  A folder refused (an author the file does
not know, a house player's name, a symbolic link inside) is said once, in
one line, until it changes.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .config import LeagueConfig, LeagueError
from .register import Register, Version
from .store import digest_of, files_of
from .versions import submit

__all__ = ["SETTLE_SECONDS", "SUBMISSIONS", "Watcher"]

LOG = logging.getLogger(__name__)
SUBMISSIONS = "submissions"
SETTLE_SECONDS = 2.0

Fingerprint = tuple[tuple[str, int, int], ...]


@dataclass(frozen=True)
class _Seen:
    fingerprint: Fingerprint
    since: float            # when the folder was first seen as it is
    handled: bool = False   # handed in, found handed in before, or refused: nothing more until it changes


def fingerprint(folder: Path) -> Fingerprint:
    """Every entry's path, size and modification time (nanoseconds)."""
    found = []
    for root, dirs, names in os.walk(folder):
        dirs.sort()
        for name in sorted(names + dirs):
            path = os.path.join(root, name)
            st = os.lstat(path)
            found.append((os.path.relpath(path, folder), st.st_size, st.st_mtime_ns))
    return tuple(found)


class Watcher:
    """What the last looks at ``DIR/submissions`` saw, per author."""

    def __init__(self, config: LeagueConfig, echo: Callable[[str], None] = LOG.info,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.config, self.echo, self.clock = config, echo, clock
        self.folder = config.dir / SUBMISSIONS
        self.seen: dict[str, _Seen] = {}

    def scan(self, register: Register) -> list[Version]:
        """Hand in every complete folder not handled yet; the versions registered."""
        if not self.folder.is_dir():
            return []
        added = []
        now = self.clock()
        for entry in sorted(self.folder.iterdir(), key=lambda p: p.name):
            if entry.name.startswith(".") or not entry.is_dir():
                continue
            try:
                print_ = fingerprint(entry)
            except OSError:         # changing under us: looked at again next time
                continue
            seen = self.seen.get(entry.name)
            if seen is None or seen.fingerprint != print_:
                self.seen[entry.name] = _Seen(print_, now)
                continue
            if seen.handled or now - seen.since < SETTLE_SECONDS:
                continue
            self.seen[entry.name] = _Seen(print_, seen.since, handled=True)
            version = self._hand_in(entry, register)
            if version is not None:
                added.append(version)
        return added

    def _hand_in(self, folder: Path, register: Register) -> Version | None:
        author = folder.name
        shown = f"{SUBMISSIONS}/{author}"
        try:
            entry = self.config.author(author)
            if entry.builtin is not None:
                raise LeagueError(f"{author} is the house player 'builtin: {entry.builtin}'; nothing of "
                                  f"theirs is handed in")
            digest = digest_of(files_of(folder))
            earlier = [v.name for v in register.versions() if v.author == author and v.digest == digest]
            if earlier:
                LOG.debug("%s: the content of %s, handed in before", shown, earlier[0])
                return None
            version = submit(self.config, author, folder)
        except OSError as exc:
            self.echo(f"{shown}: not handed in: cannot read it: {exc.strerror or exc}")
            return None
        except LeagueError as err:
            self.echo(f"{shown}: not handed in: {err}")
            return None
        self.echo(f"{shown}: handed in as {version.name} ({(version.digest or '')[:12]})")
        return version
