"""The league's register, ``DIR/league.sqlite``: every version and every table.

A version (``alice.v2``) goes through ``submitted`` (stored, not yet
checked), then ``refused`` (its check failed; the reasons are kept, and
nothing of it is ever played) or ``playing``; an author's newer version
that passes its check moves the older ones to ``retired``: they leave
matchmaking, and their matches and ratings stay.  Whether a playing
version is still in its placement is read from its matches
(``standings``), not stored.

A table is written here before its first match is played: its seats (in
rotation-0 order) and the seating block.  Its matches then follow from the
league's seed (``plan``), so a run stopped part-way through a table plays
the rotations it lacks when it starts again, on the same deal, and none
twice: the results database refuses a match id it holds.

WAL mode: ``arena league run`` writes, ``submit`` adds versions, and the
page reads, all at once.  Every write is one short transaction.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from ..tournament.results.sqlitetx import connect, immediate, now, one_line, write_error
from .config import LeagueError

__all__ = ["EXPORTED_TABLES_SCHEMA", "PLAYING", "REFUSED", "RETIRED", "SUBMITTED", "Register", "TableRow", "Version", "REGISTER"]

REGISTER = "league.sqlite"
SUBMITTED, REFUSED, PLAYING, RETIRED = "submitted", "refused", "playing", "retired"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS versions (
    name         TEXT PRIMARY KEY,          -- author.vN
    author       TEXT NOT NULL,
    number       INTEGER NOT NULL,
    digest       TEXT,                      -- its folder in the store; NULL for a house player
    builtin      TEXT,                      -- a house player's built-in
    command      TEXT,                      -- JSON argv, as submitted
    status       TEXT NOT NULL,
    reasons      TEXT NOT NULL DEFAULT '[]',   -- JSON: why the check refused it
    submitted_at TEXT NOT NULL,
    checked_at   TEXT,
    retired_at   TEXT,
    built        TEXT,                      -- the store's folder its build left, which is played
    UNIQUE (author, number)
);
CREATE TABLE IF NOT EXISTS tables (
    table_no   INTEGER PRIMARY KEY,
    seats      TEXT NOT NULL,               -- JSON: the versions in rotation-0 order
    block      INTEGER NOT NULL,            -- which seating block (pairing.seating)
    created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS uploads (        -- archives sent over HTTP: the hourly limit, kept across restarts
    author TEXT NOT NULL,
    at     REAL NOT NULL                    -- seconds since the epoch (wall clock: it outlives the process)
);
CREATE INDEX IF NOT EXISTS uploads_author ON uploads (author, at);
"""

# An export's copy of the tables (``export``), in its results database: what ``audit`` reads there.
# ``seed``: the table's deal seed (``plan.table_seed``), NULL for a table none
# of whose matches the export holds: an export carries no seed of a deal not played.
EXPORTED_TABLES_SCHEMA = ("CREATE TABLE league_tables (table_no INTEGER PRIMARY KEY, seats TEXT NOT NULL,"
                          " block INTEGER NOT NULL, seed INTEGER)")

# How a reason quoting a build's output starts: its author's page shows it,
# the public page does not (a compiler's errors quote the author's source).
BUILD_OUTPUT = "build output: "


@dataclass(frozen=True)
class Version:
    name: str
    author: str
    number: int
    digest: str | None
    builtin: str | None
    command: tuple[str, ...] | None
    status: str
    reasons: tuple[str, ...]
    submitted_at: str
    checked_at: str | None
    retired_at: str | None
    built: str | None = None       # what its build step left, in the store (None: played as handed in)

    @property
    def played(self) -> str | None:
        """Its folder in the store that is played."""
        return self.built or self.digest


@dataclass(frozen=True)
class TableRow:
    table_no: int
    seats: tuple[str, ...]
    block: int
    created_at: str


_VERSION_COLUMNS = ("name, author, number, digest, builtin, command, status, reasons, submitted_at, checked_at,"
                    " retired_at, built")


def _version(row: tuple) -> Version:
    return Version(row[0], row[1], row[2], row[3], row[4], None if row[5] is None else tuple(json.loads(row[5])),
                   row[6], tuple(json.loads(row[7])), row[8], row[9], row[10], row[11])


class Register:
    """The register of the league in ``league_dir``; ``readonly`` for the page."""

    def __init__(self, league_dir: Path, readonly: bool = False) -> None:
        self.path = league_dir / REGISTER
        try:
            if readonly:
                self._conn = connect(f"file:{self.path}?mode=ro", uri=True)
            else:
                self._conn = connect(str(self.path))
                self._conn.execute("PRAGMA journal_mode=WAL")
                self._conn.executescript(_SCHEMA)
                if not self._has_built():          # a league begun before builds
                    self._conn.execute("ALTER TABLE versions ADD COLUMN built TEXT")
            # Read by the page before any writer added it: none was built then.
            self._columns = _VERSION_COLUMNS if self._has_built() else _VERSION_COLUMNS[:-len("built")] + "NULL"
        except sqlite3.Error as exc:
            raise LeagueError(f"{self.path}: cannot open the league's register ({one_line(exc)})") from None

    def _has_built(self) -> bool:
        columns = {r[1] for r in self._conn.execute("PRAGMA table_info(versions)")}
        return "built" in columns or not columns       # no table yet: made with it

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> Register:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def _writing(self, what: str) -> Iterator[sqlite3.Connection]:
        try:
            with immediate(self._conn):
                yield self._conn
        except sqlite3.Error as exc:
            raise LeagueError(f"{self.path}: cannot {what}: {write_error(exc)}") from None

    def _read(self, sql: str, params: Sequence[object] = ()) -> list[tuple]:
        try:
            return self._conn.execute(sql, params).fetchall()
        except sqlite3.Error as exc:
            raise LeagueError(f"{self.path}: cannot read the league's register ({one_line(exc)})") from None

    # -- versions ----------------------------------------------------------------
    def add_version(self, author: str, digest: str | None, command: Sequence[str] | None,
                    builtin: str | None = None, status: str = SUBMITTED) -> Version:
        """The author's next version (numbered from 1)."""
        with self._writing(f"add a version of {author}") as c:
            row = c.execute("SELECT max(number) FROM versions WHERE author = ?", (author,)).fetchone()
            number = (row[0] or 0) + 1
            c.execute(f"INSERT INTO versions ({_VERSION_COLUMNS})"
                      f" VALUES (?, ?, ?, ?, ?, ?, ?, '[]', ?, NULL, NULL, NULL)",
                      (f"{author}.v{number}", author, number, digest, builtin,
                       None if command is None else json.dumps(list(command)), status, now()))
        return self.version(f"{author}.v{number}")

    def versions(self, status: str | None = None) -> list[Version]:
        where, params = ("WHERE status = ?", (status,)) if status else ("", ())
        return [_version(r) for r in self._read(f"SELECT {self._columns} FROM versions {where}"
                                                f" ORDER BY author, number", params)]

    def version(self, name: str) -> Version:
        rows = self._read(f"SELECT {self._columns} FROM versions WHERE name = ?", (name,))
        if not rows:
            raise LeagueError(f"{self.path}: no version {name!r}")
        return _version(rows[0])

    def set_built(self, name: str, digest: str) -> None:
        """``name``'s build step left the store's folder ``digest``: that is played."""
        with self._writing(f"record the build of {name}") as c:
            c.execute("UPDATE versions SET built = ? WHERE name = ?", (digest, name))

    def refuse(self, name: str, reasons: Sequence[str]) -> None:
        with self._writing(f"refuse {name}") as c:
            c.execute("UPDATE versions SET status = ?, reasons = ?, checked_at = ? WHERE name = ?",
                      (REFUSED, json.dumps(list(reasons)), now(), name))

    def admit(self, name: str) -> list[str]:
        """``name`` passed its check: it plays, and its author's older playing
        versions retire (one transaction).  The names retired."""
        version = self.version(name)
        with self._writing(f"admit {name}") as c:
            older = [r[0] for r in c.execute("SELECT name FROM versions WHERE author = ? AND number < ? AND"
                                             " status = ?", (version.author, version.number, PLAYING))]
            newer = c.execute("SELECT 1 FROM versions WHERE author = ? AND number > ? AND status IN (?, ?)",
                              (version.author, version.number, PLAYING, RETIRED)).fetchone()
            stamp = now()
            # A newer version already playing (checked first): this one retires at once.
            c.execute("UPDATE versions SET status = ?, checked_at = ?, retired_at = ? WHERE name = ?",
                      (RETIRED if newer else PLAYING, stamp, stamp if newer else None, name))
            c.executemany("UPDATE versions SET status = ?, retired_at = ? WHERE name = ?",
                          [(RETIRED, stamp, n) for n in older])
        return older

    # -- uploads -----------------------------------------------------------------
    def take_upload(self, author: str, per_hour: int, at: float, window: float = 3600.0) -> float | None:
        """None, and counted, if ``author`` has sent fewer than ``per_hour``
        archives in the ``window`` seconds before ``at``; else the seconds until
        they may send one.  One transaction, so two servers (or a restarted one)
        share the count; a clock set back counts a stamp "from the future" as recent."""
        with self._writing(f"count {author}'s archives") as c:
            c.execute("DELETE FROM uploads WHERE at <= ?", (at - window,))
            times = [r[0] for r in c.execute("SELECT at FROM uploads WHERE author = ? ORDER BY at", (author,))]
            if len(times) >= per_hour:
                return min(window, max(0.0, times[-per_hour] + window - at))
            c.execute("INSERT INTO uploads (author, at) VALUES (?, ?)", (author, at))
        return None

    # -- tables ------------------------------------------------------------------
    def add_table(self, seats: Sequence[str], block: int) -> TableRow:
        with self._writing("record a table") as c:
            row = c.execute("SELECT coalesce(max(table_no), -1) + 1 FROM tables").fetchone()
            c.execute("INSERT INTO tables (table_no, seats, block, created_at) VALUES (?, ?, ?, ?)",
                      (row[0], json.dumps(list(seats)), block, now()))
        return TableRow(row[0], tuple(seats), block, now())

    def table_count(self) -> int:
        return int(self._read("SELECT count(*) FROM tables")[0][0])

    def tables(self, since: int = 0) -> list[TableRow]:
        return [TableRow(r[0], tuple(json.loads(r[1])), r[2], r[3])
                for r in self._read("SELECT table_no, seats, block, created_at FROM tables WHERE table_no >= ?"
                                    " ORDER BY table_no", (since,))]
