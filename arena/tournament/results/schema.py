"""The results database's schema, its migrations, and opening a file as one.

``ResultStore`` (store.py) reads and writes the rows; this module makes the
connection it uses: it refuses what is not a results database (a directory,
another SQLite file, a newer schema, a file the writer cannot write) with a
one-line :class:`StoreError` naming the path, creates the tables in a new
file, sets the write-ahead log for a writer, and brings an older schema up to
date (see store.py's doc for the versions), in the file for a writer and in a
copy in memory for a reader.
"""

from __future__ import annotations

import json
import os
import sqlite3
import zlib
from pathlib import Path
from urllib.parse import quote

from .rows import FAULT_KINDS, StoreError
from .sqlitetx import connect as _connect
from .sqlitetx import immediate as _immediate
from .sqlitetx import one_line as _one_line

SCHEMA_VERSION = 4


_SCHEMA = f"""
CREATE TABLE tournament (
    id          INTEGER PRIMARY KEY CHECK (id = 1),
    name        TEXT NOT NULL,
    config      TEXT NOT NULL,          -- canonical JSON (sorted keys)
    seed        INTEGER,
    created     TEXT NOT NULL
);
CREATE TABLE bots (
    name        TEXT PRIMARY KEY
);
CREATE TABLE matches (
    match_id        TEXT PRIMARY KEY,
    schedule_index  INTEGER NOT NULL UNIQUE CHECK (typeof(schedule_index) = 'integer'),
    table_no        INTEGER NOT NULL CHECK (typeof(table_no) = 'integer'),
    rotation        INTEGER NOT NULL CHECK (typeof(rotation) = 'integer'),
    deal            INTEGER NOT NULL CHECK (typeof(deal) = 'integer'),
    seed            INTEGER NOT NULL CHECK (typeof(seed) = 'integer'),
    players         INTEGER NOT NULL,   -- seats rows expected
    hands           INTEGER NOT NULL,   -- hands rows expected (x players)
    fault_count     INTEGER NOT NULL,   -- faults rows expected
    duration_seconds REAL NOT NULL,
    started_at      TEXT NOT NULL,
    stored_at       TEXT NOT NULL,
    record          BLOB,               -- zlib-compressed JSON event log
    record_path     TEXT
);
CREATE TABLE seats (
    match_id    TEXT NOT NULL REFERENCES matches(match_id) ON DELETE CASCADE,
    seat        INTEGER NOT NULL CHECK (typeof(seat) = 'integer' AND seat >= 0),
    bot         TEXT NOT NULL REFERENCES bots(name),
    total       INTEGER NOT NULL CHECK (typeof(total) = 'integer'),
    place       INTEGER NOT NULL CHECK (typeof(place) = 'integer' AND place >= 1),
    forfeited   INTEGER NOT NULL CHECK (forfeited IN (0, 1)),
    decisions   INTEGER NOT NULL CHECK (typeof(decisions) = 'integer'),
    mean_seconds REAL,
    p95_seconds REAL,
    max_seconds REAL,
    timeouts    INTEGER NOT NULL CHECK (typeof(timeouts) = 'integer'),
    stderr_log  TEXT,
    off_turn_cpu REAL,                  -- since version 4: CPU seconds used between turns, if caught at it
    PRIMARY KEY (match_id, seat),
    UNIQUE (match_id, bot)
);
CREATE INDEX seats_by_bot ON seats(bot);
CREATE TABLE hand_scores (
    match_id    TEXT NOT NULL,
    hand        INTEGER NOT NULL CHECK (hand >= 1),
    seat        INTEGER NOT NULL,
    score       INTEGER NOT NULL CHECK (typeof(score) = 'integer'),
    won         INTEGER NOT NULL CHECK (won IN (0, 1)),
    PRIMARY KEY (match_id, hand, seat),
    FOREIGN KEY (match_id, seat) REFERENCES seats(match_id, seat) ON DELETE CASCADE
);
CREATE TABLE faults (
    id          INTEGER PRIMARY KEY,
    match_id    TEXT NOT NULL,
    seat        INTEGER NOT NULL,
    kind        TEXT NOT NULL CHECK (kind IN ({", ".join(repr(k) for k in FAULT_KINDS)})),
    hand        INTEGER,
    decision    INTEGER,
    decision_kind TEXT,
    detail      TEXT,
    excerpt     TEXT,                   -- since version 3: the offending line, escaped and shortened
    request_id  INTEGER,                -- since version 3: the id of the request, as the bot saw it
    FOREIGN KEY (match_id, seat) REFERENCES seats(match_id, seat) ON DELETE CASCADE
);
CREATE INDEX faults_by_match ON faults(match_id);
"""

_FAILED_TABLE = """
CREATE TABLE failed_matches (           -- since version 2
    match_id        TEXT PRIMARY KEY,
    schedule_index  INTEGER NOT NULL CHECK (typeof(schedule_index) = 'integer'),
    bots            TEXT NOT NULL,      -- JSON list, seat order
    reason          TEXT NOT NULL,      -- one line
    log_path        TEXT,               -- where the traceback was written
    attempts        INTEGER NOT NULL CHECK (attempts >= 1),
    failed_at       TEXT NOT NULL       -- of the last attempt
)
"""

_SCHEMA += ";" + _FAILED_TABLE

# The statements that bring a database of version ``key`` to ``key + 1``.
_MIGRATIONS: dict[int, list[str]] = {
    1: [_FAILED_TABLE],
    2: ["ALTER TABLE faults ADD COLUMN excerpt TEXT", "ALTER TABLE faults ADD COLUMN request_id INTEGER"],
    3: ["ALTER TABLE seats ADD COLUMN off_turn_cpu REAL"],
}

_TABLES = {"tournament", "bots", "matches", "seats", "hand_scores", "faults", "failed_matches"}

# What a tournament played in rounds decided before each round (``RoundDecision``),
# so that a resumed run does not assess the stored rounds again.  Made by the
# first decision stored, not by a schema version: an arena that does not know
# it opens, reads and resumes the database as before (and, lacking the
# decisions, decides again), and a database without it is simply one whose
# rounds are all decided anew.
DECISIONS_TABLE = "round_decisions"
DECISIONS_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS {DECISIONS_TABLE} (
    round_no        INTEGER PRIMARY KEY CHECK (typeof(round_no) = 'integer' AND round_no >= 0),
    start_index     INTEGER NOT NULL CHECK (typeof(start_index) = 'integer'),
    matches         INTEGER NOT NULL CHECK (typeof(matches) = 'integer'),    -- of the rounds before
    next_look       INTEGER NOT NULL CHECK (typeof(next_look) = 'integer'),  -- the stopping rule's, after
    stop            TEXT,                   -- 'settled': the run stopped before this round
    tables          TEXT NOT NULL,          -- JSON list of tables (bot names); [] for a round robin's
    assessment      TEXT,                   -- JSON: what was decided from; NULL if not assessed
    decided_at      TEXT NOT NULL
)
"""


def _read_only(path: Path) -> sqlite3.Connection:
    """``path`` opened read-only.  A WAL database needs its -wal and -shm
    files, which SQLite creates beside it if it can (empty; the next writer
    removes them); in a read-only directory without them no writer can be at
    work either, so the file is read as immutable."""
    uri = f"file:{quote(str(path.resolve()))}?mode=ro"
    conn = _connect(uri, uri=True)
    try:
        conn.execute("PRAGMA user_version").fetchone()
        return conn
    except sqlite3.OperationalError:
        conn.close()
        if os.access(path.parent, os.W_OK):
            raise
    return _connect(uri + "&immutable=1", uri=True)


def _copy_in_memory(conn: sqlite3.Connection) -> sqlite3.Connection:
    """A copy of ``conn``'s database in memory (which then closes): an older
    schema opened read-only is migrated there, never in the file."""
    copy = _connect(":memory:")
    conn.backup(copy)
    conn.close()
    copy.execute("PRAGMA foreign_keys = ON")
    return copy


def _caught_from_records(c: sqlite3.Connection) -> None:
    """Schema 3 kept a caught bot's off-turn CPU in the match record only
    (``trace[seat].off_turn_cpu``): copied into the new column.  Only
    records that mention it are parsed; a damaged one is passed over
    (``arena show`` names it when it is read)."""
    rows = c.execute("SELECT match_id, record FROM matches WHERE record IS NOT NULL").fetchall()
    for match_id, blob in rows:
        try:
            text = zlib.decompress(blob)
            if b'"off_turn_cpu"' not in text:
                continue
            trace = json.loads(text.decode("utf-8")).get("trace")
        except (zlib.error, ValueError, AttributeError):
            continue
        for seat, t in enumerate(trace if isinstance(trace, list) else []):
            cpu = t.get("off_turn_cpu") if isinstance(t, dict) else None
            if isinstance(cpu, (int, float)) and not isinstance(cpu, bool):
                c.execute("UPDATE seats SET off_turn_cpu = ? WHERE match_id = ? AND seat = ?",
                          (float(cpu), match_id, seat))


def _match_log_hint(path: Path) -> str:
    """What to do instead when ``path``, which is no database, is JSON: most
    likely the log of one match that ``arena play --log`` wrote."""
    try:
        with open(path, "rb") as f:
            start = f.read(64).lstrip()
    except OSError:
        return ""
    if not start.startswith(b"{"):
        return ""
    return f"; it is JSON, such as the log `arena play --log` writes: `arena show {path} --html` opens that"


def _unwritable(path: Path) -> str | None:
    """Why a writer cannot use the database at ``path``, when it is the file
    system's doing rather than the file's (which SQLite's "unable to open
    database file" does not tell apart); None if nothing stops it."""
    if path.exists() and not os.access(path, os.W_OK):
        return "the file is not writable"
    if not os.access(path.parent, os.W_OK):
        return (f"its directory {path.parent} is not writable "
                f"(SQLite keeps its write-ahead log beside the file)")
    return None


def open_database(path: Path, create: bool, readonly: bool) -> tuple[sqlite3.Connection, str]:
    """The connection to the results database at ``path``, ready for use,
    and what to select as a seat's off-turn CPU (the column, or NULL where a
    reader left an older schema as it was).  ``create``: a missing file
    becomes a new database; ``readonly``: opened read-only, never written."""
    create = create and not readonly
    if path.is_dir():
        raise StoreError(f"{path}: is a directory, not a results database")
    if not readonly and path.exists() and not os.access(path, os.W_OK):
        # Refused before SQLite opens it: it would open it read-only without
        # a word (and make its -wal and -shm files beside it), and the
        # first write would fail as "attempt to write a readonly database".
        raise StoreError(f"{path}: cannot write results database: the file is not writable (a published "
                         f"or read-only copy?); make it writable to resume the run there, or use another output "
                         f"directory (--out); arena leaderboard, matches, show and report read it as it is")
    if not path.exists():
        if not create:
            raise StoreError(f"{path}: no such results database")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"{path}: cannot create results database: {_one_line(exc)}") from None
    try:
        conn = _read_only(path) if readonly else _connect(str(path))
    except sqlite3.Error as exc:
        raise StoreError(f"{path}: cannot open results database: {_one_line(exc)}"
                         f"{_match_log_hint(path)}") from None
    try:
        return _setup(conn, path, create, readonly)
    except StoreError:
        conn.close()
        raise
    except sqlite3.Error as exc:
        conn.close()
        unwritable = None if readonly else _unwritable(path)
        if unwritable:
            raise StoreError(f"{path}: cannot open results database for writing: {unwritable}") from None
        raise StoreError(f"{path}: not a usable results database ({_one_line(exc)})"
                         f"{_match_log_hint(path)}") from None


def _set_journal(c: sqlite3.Connection, path: Path) -> None:
    # WAL: a writer appends committed transactions to the -wal file, readers
    # are not blocked, and a crash mid-write leaves only an uncommitted tail
    # that is ignored on the next open (the main file is never half-updated).
    mode = c.execute("PRAGMA journal_mode = WAL").fetchone()[0]
    if str(mode).lower() != "wal":
        raise StoreError(f"{path}: cannot use write-ahead logging (journal mode {mode})")
    # synchronous=NORMAL in WAL mode: a commit is written to the WAL (the
    # OS page cache) before COMMIT returns, but fsync happens only at
    # checkpoints. A killed *process* (SIGKILL, crash, Ctrl-C) therefore
    # loses nothing committed: the kernel still writes those pages. Only an
    # OS crash or power cut can roll back the last few commits, and even
    # then the database stays consistent (never corrupt), so the runner
    # just replays those matches on resume. FULL would fsync every match
    # for no gain against the failure we care about.
    c.execute("PRAGMA synchronous = NORMAL")


def _setup(c: sqlite3.Connection, path: Path, create: bool, readonly: bool) -> tuple[sqlite3.Connection, str]:
    c.execute("PRAGMA foreign_keys = ON")
    c.execute("PRAGMA busy_timeout = 30000")
    version = c.execute("PRAGMA user_version").fetchone()[0]
    tables = {r[0] for r in c.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if version > SCHEMA_VERSION:
        raise StoreError(f"{path}: results database schema version {version} is newer than "
                         f"this arena supports ({SCHEMA_VERSION}); upgrade arena")
    if version == 0:
        if tables:
            raise StoreError(f"{path}: an SQLite database, but not an arena results database")
        if not create:
            raise StoreError(f"{path}: empty file, not an arena results database")
    if not readonly:
        _set_journal(c, path)
    if version == 0:
        with _immediate(c):
            # statement by statement: executescript() would commit on its own
            for stmt in _SCHEMA.split(";"):
                if stmt.strip():
                    c.execute(stmt)
            c.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
    else:
        if version < SCHEMA_VERSION:
            if readonly:
                c = _copy_in_memory(c)
            tables |= _migrate(c)
        missing = _TABLES - tables
        if missing:
            raise StoreError(f"{path}: damaged results database (missing tables: "
                             f"{', '.join(sorted(missing))})")
    # A database read without migrating it (an older schema) has no such column.
    columns = {r[1] for r in c.execute("PRAGMA table_info(seats)")}
    return c, "s.off_turn_cpu" if "off_turn_cpu" in columns else "NULL"


def _migrate(c: sqlite3.Connection) -> set[str]:
    """Bring an older database up to SCHEMA_VERSION in one transaction (only
    additions: every stored row stays as it is); the tables it has then."""
    with _immediate(c):
        # Again inside the write lock: another process may have just migrated it.
        version = c.execute("PRAGMA user_version").fetchone()[0]
        for v in range(version, SCHEMA_VERSION):
            for stmt in _MIGRATIONS[v]:
                c.execute(stmt)
        if version < 4:
            _caught_from_records(c)
        c.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
    return {r[0] for r in c.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
