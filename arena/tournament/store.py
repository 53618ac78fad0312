"""Tournament results in an embedded SQLite database.

One file holds one tournament: its name and configuration, the bots, and one
row per completed match with its seats, per-hand scores, faults, decision-time
statistics, the paths of the bots' stderr logs and the match's event log
(zlib-compressed JSON, so ``arena show`` can render the hand-by-hand account).

A match that stopped on an arena-side error (a bug, not a bot fault) has no
result: it is kept apart, in ``failed_matches``, with its one-line reason, so
that rankings count finished matches only and the next run plays it again;
storing its result later deletes the failure in the same transaction.

Each match is written in a single transaction: after a crash, or a SIGKILL of
the writer at any moment, the database holds every match committed before and
nothing of the one being written. That is what makes resuming safe: the runner
asks :meth:`ResultStore.completed_ids` and plays only the rest (failed matches
included).

Schema versions: 1 had no ``failed_matches``; 2 had no ``faults.excerpt``
(the line a bot wrote that was refused) nor ``faults.request_id`` (the id of
the request it failed); 3 had no ``seats.off_turn_cpu`` (the CPU a bot caught
computing between its turns used then).  Opening an older database adds what
it lacks in one transaction (its old faults read with neither excerpt nor
request id); the one change to stored rows is that a seat's ``off_turn_cpu``
is filled in from its match record, where schema 3 kept it already.  A
reader (``readonly=True``: ``arena show``, ``leaderboard``, ``matches``,
``report``) never writes: it opens the file read-only, and an older database
is migrated in a copy in memory, the file left as it was (a published,
read-only copy, or one a run of an older arena still uses).

The store is written by one process (the tournament runner's parent, as each
match finishes); readers (``arena leaderboard``, ``arena matches``) may open the
same file at the same time, which WAL mode allows.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import zlib
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

from .setaside import ARCHIVE_TABLE
from .sqlitetx import connect as _connect
from .sqlitetx import immediate as _immediate
from .sqlitetx import now as _now
from .sqlitetx import one_line as _one_line
from .sqlitetx import write_error as _write_error
from .stored import FAULT_KEYS, FAULT_KINDS, STAT_KEYS, FailedMatch, StoredMatch, StoreError
from .storedconfig import (
    AUTO_SANDBOX,
    RESOLVED_MODES,
    RESOLVED_SANDBOX,
    canonical_json,
    config_changes,
    current_config,
    without_unstored,
)

__all__ = [
    "DEFAULT_DB_NAME", "FAULT_KINDS", "SCHEMA_VERSION", "STAT_KEYS", "FAULT_KEYS",
    "FailedMatch", "ResultStore", "StoreError", "StoredMatch", "resolve_db_path",
]

SCHEMA_VERSION = 4
DEFAULT_DB_NAME = "results.sqlite"


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


def resolve_db_path(path: str | Path) -> Path:
    """The database file for a RESULTS argument: a directory means its results.sqlite."""
    p = Path(path)
    return p / DEFAULT_DB_NAME if p.is_dir() else p


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


class ResultStore:
    """Open (or create) the results database at ``path``.

    ``create=False``: a missing file is then an error instead of a new empty
    database.  ``readonly=True`` is for readers: the file is opened
    read-only and never written, not even to migrate it (see the module's
    doc); the store's writing methods then fail.  All errors about the file
    itself are :class:`StoreError` with a one-line message naming the path.
    """

    def __init__(self, path: str | Path, create: bool = True, readonly: bool = False) -> None:
        self.path = Path(path)
        self._lock = threading.RLock()
        create = create and not readonly
        if self.path.is_dir():
            raise StoreError(f"{self.path}: is a directory, not a results database")
        if not readonly and self.path.exists() and not os.access(self.path, os.W_OK):
            # Refused before SQLite opens it: it would open it read-only without
            # a word (and make its -wal and -shm files beside it), and the
            # first write would fail as "attempt to write a readonly database".
            raise StoreError(f"{self.path}: cannot write results database: the file is not writable (a published "
                             f"or read-only copy?); make it writable to resume the run there, or use another output "
                             f"directory (--out); arena leaderboard, matches, show and report read it as it is")
        if not self.path.exists():
            if not create:
                raise StoreError(f"{self.path}: no such results database")
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise StoreError(f"{self.path}: cannot create results database: {_one_line(exc)}") from None
        try:
            self._conn = _read_only(self.path) if readonly else _connect(str(self.path))
        except sqlite3.Error as exc:
            raise StoreError(f"{self.path}: cannot open results database: {_one_line(exc)}"
                             f"{_match_log_hint(self.path)}") from None
        try:
            self._setup(create, readonly)
        except StoreError:
            self._conn.close()
            raise
        except sqlite3.Error as exc:
            self._conn.close()
            unwritable = None if readonly else _unwritable(self.path)
            if unwritable:
                raise StoreError(f"{self.path}: cannot open results database for writing: {unwritable}") from None
            raise StoreError(f"{self.path}: not a usable results database ({_one_line(exc)})"
                             f"{_match_log_hint(self.path)}") from None

    # -- opening -------------------------------------------------------------

    def _set_journal(self) -> None:
        c = self._conn
        # WAL: a writer appends committed transactions to the -wal file, readers
        # are not blocked, and a crash mid-write leaves only an uncommitted tail
        # that is ignored on the next open (the main file is never half-updated).
        mode = c.execute("PRAGMA journal_mode = WAL").fetchone()[0]
        if str(mode).lower() != "wal":
            raise StoreError(f"{self.path}: cannot use write-ahead logging (journal mode {mode})")
        # synchronous=NORMAL in WAL mode: a commit is written to the WAL (the
        # OS page cache) before COMMIT returns, but fsync happens only at
        # checkpoints. A killed *process* (SIGKILL, crash, Ctrl-C) therefore
        # loses nothing committed: the kernel still writes those pages. Only an
        # OS crash or power cut can roll back the last few commits, and even
        # then the database stays consistent (never corrupt), so the runner
        # just replays those matches on resume. FULL would fsync every match
        # for no gain against the failure we care about.
        c.execute("PRAGMA synchronous = NORMAL")

    def _setup(self, create: bool, readonly: bool = False) -> None:
        c = self._conn
        c.execute("PRAGMA foreign_keys = ON")
        c.execute("PRAGMA busy_timeout = 30000")
        version = c.execute("PRAGMA user_version").fetchone()[0]
        tables = {r[0] for r in c.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if version > SCHEMA_VERSION:
            raise StoreError(f"{self.path}: results database schema version {version} is newer than "
                             f"this arena supports ({SCHEMA_VERSION}); upgrade arena")
        if version == 0:
            if tables:
                raise StoreError(f"{self.path}: an SQLite database, but not an arena results database")
            if not create:
                raise StoreError(f"{self.path}: empty file, not an arena results database")
        if not readonly:
            self._set_journal()
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
                    self._conn = c = _copy_in_memory(c)
                tables |= self._migrate(version)
            missing = _TABLES - tables
            if missing:
                raise StoreError(f"{self.path}: damaged results database (missing tables: "
                                 f"{', '.join(sorted(missing))})")
        # A database read without migrating it (an older schema) has no such column.
        columns = {r[1] for r in c.execute("PRAGMA table_info(seats)")}
        self._off_turn_column = "s.off_turn_cpu" if "off_turn_cpu" in columns else "NULL"

    def _migrate(self, version: int) -> set[str]:
        """Bring an older database up to SCHEMA_VERSION in one transaction (only
        additions: every stored row stays as it is); the tables it created."""
        c = self._conn
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

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __enter__(self) -> ResultStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _read(self, sql: str, params: Sequence[Any] = ()) -> list[tuple]:
        with self._lock:
            try:
                return self._conn.execute(sql, params).fetchall()
            except sqlite3.DatabaseError as exc:
                raise StoreError(f"{self.path}: cannot read results database ({_one_line(exc)})") from None

    # -- tournament ------------------------------------------------------------

    def init_tournament(self, name: str, config_json: str | Mapping[str, Any],
                        seed: int | None = None, bots: Iterable[str] = ()) -> None:
        """Record which tournament this database holds, or check it is the same one.

        A new database takes the name, configuration (JSON text or a mapping;
        compared in canonical form, so key order and spacing do not matter) and
        seed. An existing one must hold exactly the same, otherwise resuming
        would mix two tournaments' results: StoreError. ``bots`` are registered
        so that a bot with no completed match still has a leaderboard row.
        """
        config = canonical_json(current_config(json.loads(config_json) if isinstance(config_json, (str, bytes))
                                                else config_json))
        with self._lock:
            try:
                self._init_tournament(name, config, seed, bots)
            except sqlite3.Error as exc:
                raise StoreError(f"{self.path}: cannot write results database ({_write_error(exc)})") from None

    def _init_tournament(self, name: str, config: str, seed: int | None, bots: Iterable[str]) -> None:
        c = self._conn
        with _immediate(c):
            row = c.execute("SELECT name, config, seed FROM tournament WHERE id = 1").fetchone()
            if row is not None:
                try:
                    self._refuse_another(row, name, config, seed)
                except StoreError:
                    if self._holds_results():
                        raise
                    # A run that stopped before it stored a match (a bot's
                    # script not found, Ctrl-C) mixes nothing with this one:
                    # the corrected file takes the database over.
                    c.execute("DELETE FROM tournament")
                    c.execute("DELETE FROM bots")
                    row = None
            if row is None:
                c.execute("INSERT INTO tournament (id, name, config, seed, created) VALUES (1, ?, ?, ?, ?)",
                          (name, config, seed, _now()))
            c.executemany("INSERT OR IGNORE INTO bots (name) VALUES (?)", [(b,) for b in bots])

    def check_tournament(self, name: str, config_json: str | Mapping[str, Any], seed: int | None) -> None:
        """What ``init_tournament`` would refuse, without writing: StoreError
        if this database holds another tournament (nothing if it holds none)."""
        config = canonical_json(current_config(json.loads(config_json) if isinstance(config_json, (str, bytes))
                                                else config_json))
        rows = self._read("SELECT name, config, seed FROM tournament WHERE id = 1")
        if rows:
            try:
                self._refuse_another(rows[0], name, config, seed)
            except StoreError:
                with self._lock:
                    try:
                        holds = self._holds_results()
                    except sqlite3.DatabaseError as exc:
                        raise StoreError(f"{self.path}: cannot read results database ({_one_line(exc)})") from None
                if holds:
                    raise

    def _holds_results(self) -> bool:
        """Whether any match was stored, failed or set aside here."""
        c = self._conn
        tables = ["matches", "failed_matches"]
        if c.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (ARCHIVE_TABLE,)).fetchone():
            tables.append(ARCHIVE_TABLE)
        return any(c.execute(f"SELECT 1 FROM {t} LIMIT 1").fetchone() for t in tables)

    def _refuse_another(self, row: tuple[Any, ...], name: str, config: str, seed: int | None) -> None:
        # Compared under today's names; the row stays as stored, so the
        # version that stored it can still resume it.
        stored = current_config(json.loads(row[1]))
        config = without_unstored(stored, config)
        if isinstance(stored, dict):
            stored = {k: v for k, v in stored.items() if k != RESOLVED_SANDBOX}
        row = (row[0], canonical_json(stored), row[2])
        if (row[0], row[1], row[2]) != (name, config, seed):
            # The configuration holds the seed too: name the seed first.
            what = ("name" if row[0] != name else "seed" if row[2] != seed else "configuration")
            if what == "configuration":
                what += config_changes(row[1], config)
            raise StoreError(
                f"{self.path}: holds results of tournament {row[0]!r} with a different {what}; "
                f"refusing to mix them (use another output directory, or remove this file to start over)")

    def settle_sandbox(self, mode: str, resolved: str, record: bool = True) -> None:
        """Refuse (StoreError, one line) to add matches played under the
        sandbox ``resolved`` (what the file's ``mode`` resolved to here) to
        matches stored under another: ``sandbox: auto`` is bubblewrap on one
        machine and nothing on another, and a resume there would mix
        sandboxed and unsandboxed matches in one table.  With ``record``,
        store ``resolved`` when no match holds the stored one to it (a new
        run, or results of a version that did not store it: from now on
        they are held to it).  Call after ``init_tournament`` (or
        ``check_tournament``)."""
        with self._lock:
            try:
                if record:
                    with _immediate(self._conn):
                        self._settle_sandbox(mode, resolved, record)
                else:
                    self._settle_sandbox(mode, resolved, record)
            except sqlite3.Error as exc:
                raise StoreError(f"{self.path}: cannot write results database ({_write_error(exc)})") from None

    def _settle_sandbox(self, mode: str, resolved: str, record: bool) -> None:
        row = self._conn.execute("SELECT name, config FROM tournament WHERE id = 1").fetchone()
        if row is None:
            return
        stored = json.loads(row[1])
        if not isinstance(stored, dict):
            return
        before = stored.get(RESOLVED_SANDBOX)
        if before == resolved:
            return
        played = self._conn.execute("SELECT count(*) FROM matches").fetchone()[0]
        # A value no arena stores (a hand-edited file) holds nothing to it.
        if before not in RESOLVED_MODES or not played:     # nothing stored was played under another
            if record:
                self._conn.execute("UPDATE tournament SET config = ? WHERE id = 1",
                                   (canonical_json({**stored, RESOLVED_SANDBOX: resolved}),))
            return
        file_mode = stored.get("sandbox")
        how = (f"sandbox: {file_mode} resolved to {before}" if file_mode == AUTO_SANDBOX and before != AUTO_SANDBOX
               else f"sandbox: {before}")
        under = f"in the bubblewrap sandbox ({how})" if before == "bwrap" else f"without a sandbox ({how})"
        here = f"sandbox: {mode} resolves to {resolved}"
        if before == "bwrap":
            way_out = ("resume where bubblewrap runs (set 'sandbox: bwrap' to make sure), or use another "
                       "output directory (--out) to start over")
        else:
            way_out = (f"set 'sandbox: {before}' in the file to go on as they were played, or use another "
                       f"output directory (--out) to start over with the sandbox")
        matches = "its stored match was" if played == 1 else f"its {played} stored matches were"
        raise StoreError(f"{self.path}: {matches} played {under}, "
                         f"but here {here}; refusing to mix matches with and without the sandbox: {way_out}")

    def tournament(self) -> dict[str, Any] | None:
        """The stored tournament: name, config (parsed), seed, created; None before init."""
        rows = self._read("SELECT name, config, seed, created FROM tournament WHERE id = 1")
        if not rows:
            return None
        name, config, seed, created = rows[0]
        return {"name": name, "config": current_config(json.loads(config)), "seed": seed, "created": created}

    def bots(self) -> list[str]:
        """Every bot known to the database (registered or seen in a match), sorted."""
        return [r[0] for r in self._read("SELECT name FROM bots ORDER BY name")]

    # -- writing ---------------------------------------------------------------

    def add_match(self, m: StoredMatch) -> None:
        """Store one completed match in one transaction: all of its rows or none."""
        m.validate()
        blob = None
        if m.record is not None:
            blob = zlib.compress(json.dumps(m.record, separators=(",", ":")).encode("utf-8"), 6)
        n = m.players
        with self._lock:
            c = self._conn
            try:
                c.execute("BEGIN IMMEDIATE")
                c.executemany("INSERT OR IGNORE INTO bots (name) VALUES (?)", [(b,) for b in m.bots])
                # A retried match that now finished: its result replaces the failure.
                c.execute("DELETE FROM failed_matches WHERE match_id = ?", (m.match_id,))
                c.execute(
                    "INSERT INTO matches (match_id, schedule_index, table_no, rotation, deal, seed, players,"
                    " hands, fault_count, duration_seconds, started_at, stored_at, record, record_path)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (m.match_id, m.schedule_index, m.table, m.rotation, m.deal, m.seed, n, m.hands,
                     len(m.faults), float(m.duration_seconds), m.started_at, _now(), blob, m.record_path))
                c.executemany(
                    "INSERT INTO seats (match_id, seat, bot, total, place, forfeited, decisions, mean_seconds,"
                    " p95_seconds, max_seconds, timeouts, stderr_log, off_turn_cpu)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    [(m.match_id, s, m.bots[s], m.totals[s], m.places[s], int(m.forfeited[s]),
                      st["count"], st["mean"], st["p95"], st["max"], st["timeouts"], m.stderr_logs[s],
                      m.off_turn_cpu[s])
                     for s, st in enumerate(m.decision_stats)])
                c.executemany(
                    "INSERT INTO hand_scores (match_id, hand, seat, score, won) VALUES (?, ?, ?, ?, ?)",
                    [(m.match_id, h, s, score, int(m.hand_winners[h - 1] == s))
                     for h, row in enumerate(m.hand_scores, start=1) for s, score in enumerate(row)])
                c.executemany(
                    "INSERT INTO faults (match_id, seat, kind, hand, decision, decision_kind, detail, excerpt,"
                    " request_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    [(m.match_id, f["seat"], f["kind"], f["hand"], f["decision"], f["decision_kind"],
                      f["detail"], f["excerpt"], f["request_id"]) for f in m.faults])
                c.execute("COMMIT")
            except BaseException as exc:
                if c.in_transaction:
                    c.execute("ROLLBACK")
                if isinstance(exc, sqlite3.IntegrityError) and "matches." in str(exc):
                    row = c.execute("SELECT match_id FROM matches WHERE match_id = ? OR schedule_index = ?",
                                    (m.match_id, m.schedule_index)).fetchone()
                    if row is not None and row[0] == m.match_id:
                        raise StoreError(f"{self.path}: match {m.match_id!r} is already stored") from None
                    if row is not None:
                        raise StoreError(f"{self.path}: cannot store match {m.match_id!r}: schedule index "
                                         f"{m.schedule_index} is already taken by match {row[0]!r}") from None
                if isinstance(exc, (sqlite3.Error, TypeError, ValueError, OverflowError)):
                    text = _write_error(exc) if isinstance(exc, sqlite3.Error) else _one_line(exc)
                    raise StoreError(f"{self.path}: cannot store match {m.match_id!r}: {text}") from exc
                raise

    def add_failure(self, f: FailedMatch) -> FailedMatch:
        """Record that a match stopped on an arena-side error (a later result replaces it).

        A match failing again counts one more attempt. Returns the row as stored.
        """
        if not f.match_id or not isinstance(f.schedule_index, int):
            raise StoreError(f"{self.path}: cannot store failure of match {f.match_id!r}: bad id or index")
        reason = " ".join(f.reason.split()) or "unknown error"
        with self._lock:
            c = self._conn
            try:
                c.execute("BEGIN IMMEDIATE")
                if c.execute("SELECT 1 FROM matches WHERE match_id = ?", (f.match_id,)).fetchone():
                    raise StoreError(f"{self.path}: match {f.match_id!r} is already stored; "
                                     f"refusing to mark it as failed")
                c.execute(
                    "INSERT INTO failed_matches (match_id, schedule_index, bots, reason, log_path, attempts,"
                    " failed_at) VALUES (?, ?, ?, ?, ?, 1, ?) ON CONFLICT (match_id) DO UPDATE SET"
                    " reason = excluded.reason, log_path = excluded.log_path,"
                    " attempts = attempts + 1, failed_at = excluded.failed_at",
                    (f.match_id, f.schedule_index, json.dumps(list(f.bots)), reason, f.log_path, _now()))
                c.execute("COMMIT")
            except BaseException as exc:
                if c.in_transaction:
                    c.execute("ROLLBACK")
                if isinstance(exc, sqlite3.Error):
                    raise StoreError(f"{self.path}: cannot store failure of match {f.match_id!r}: "
                                     f"{_write_error(exc)}") from exc
                raise
        return next(x for x in self.failures() if x.match_id == f.match_id)

    # -- reading ---------------------------------------------------------------

    def completed_ids(self) -> set[str]:
        """Ids of every stored (hence complete) match: the runner skips these on resume."""
        return {r[0] for r in self._read("SELECT match_id FROM matches")}

    def failures(self, bot: str | None = None) -> list[FailedMatch]:
        """Matches whose last attempt failed with an arena error, in schedule order
        (optionally only those ``bot`` was seated in)."""
        rows = self._read("SELECT match_id, schedule_index, bots, reason, log_path, attempts, failed_at"
                          " FROM failed_matches ORDER BY schedule_index, match_id")
        try:
            out = [FailedMatch(r[0], r[1], tuple(json.loads(r[2])), r[3], r[4], r[5], r[6]) for r in rows]
        except (ValueError, TypeError) as exc:
            raise StoreError(f"{self.path}: damaged list of failed matches ({_one_line(exc)})") from None
        return [f for f in out if bot is None or bot in f.bots]

    def __len__(self) -> int:
        return self._read("SELECT count(*) FROM matches")[0][0]

    def last_started(self) -> dict[str, tuple[str, int]]:
        """Per bot: when its latest stored match started (ISO text) and how many it has."""
        rows = self._read("SELECT s.bot, max(m.started_at), count(*) FROM seats s"
                          " JOIN matches m ON m.match_id = s.match_id GROUP BY s.bot")
        return {r[0]: (r[1], r[2]) for r in rows}

    def matches(self, bot: str | None = None) -> list[StoredMatch]:
        """Stored matches in schedule order, optionally only those ``bot`` played.

        Records are not loaded (``record`` is None): use :meth:`record`.
        """
        return self._load(bot=bot, match_id=None, with_record=False)

    def match(self, match_id: str) -> StoredMatch:
        """One stored match, with its record; StoreError if there is no such match."""
        found = self._load(bot=None, match_id=match_id, with_record=True)
        if not found:
            raise StoreError(f"{self.path}: no match {match_id!r}")
        return found[0]

    def faults(self, match_id: str | None = None) -> list[dict[str, Any]]:
        """Faults (of one match, or all in schedule order): match_id, seat, bot and the FAULT_KEYS."""
        where, params = ("WHERE f.match_id = ?", (match_id,)) if match_id is not None else ("", ())
        rows = self._read(
            "SELECT f.match_id, s.bot, f.seat, f.kind, f.hand, f.decision, f.decision_kind, f.detail,"
            " f.excerpt, f.request_id FROM faults f JOIN matches m ON m.match_id = f.match_id"
            " JOIN seats s ON s.match_id = f.match_id AND s.seat = f.seat"
            f" {where} ORDER BY m.schedule_index, f.id", params)
        return [dict(zip(("match_id", "bot", *FAULT_KEYS), r)) for r in rows]

    def record(self, match_id: str) -> dict[str, Any]:
        """The event log of a match (from the database, or from its record file)."""
        rows = self._read("SELECT record, record_path FROM matches WHERE match_id = ?", (match_id,))
        if not rows:
            raise StoreError(f"{self.path}: no match {match_id!r}")
        blob, record_path = rows[0]
        if blob is not None:
            try:
                return json.loads(zlib.decompress(blob).decode("utf-8"))
            except (zlib.error, ValueError) as exc:
                raise StoreError(f"{self.path}: the record of match {match_id!r} is damaged "
                                 f"({_one_line(exc)})") from None
        if record_path is None:
            raise StoreError(f"{self.path}: match {match_id!r} has no stored record")
        p = Path(record_path)
        try:
            raw = p.read_bytes()
            if p.suffix == ".gz":
                import gzip
                raw = gzip.decompress(raw)
            return json.loads(raw.decode("utf-8"))
        except (OSError, ValueError, EOFError) as exc:
            raise StoreError(f"{p}: cannot read the record of match {match_id!r} ({_one_line(exc)})") from None

    def verify(self) -> list[str]:
        """Problems found: SQLite integrity and foreign keys, and matches missing rows. Empty is good."""
        problems = [r[0] for r in self._read("PRAGMA integrity_check") if r[0] != "ok"]
        problems += [f"foreign key violation in {r[0]} row {r[1]}" for r in self._read("PRAGMA foreign_key_check")]
        rows = self._read(
            "SELECT m.match_id, m.players, m.hands, m.fault_count,"
            " (SELECT count(*) FROM seats s WHERE s.match_id = m.match_id),"
            " (SELECT count(*) FROM hand_scores h WHERE h.match_id = m.match_id),"
            " (SELECT count(*) FROM faults f WHERE f.match_id = m.match_id)"
            " FROM matches m ORDER BY m.schedule_index")
        problems += [f"match {r[0]!r} is stored both as finished and as failed" for r in self._read(
            "SELECT f.match_id FROM failed_matches f JOIN matches m ON m.match_id = f.match_id")]
        for mid, players, hands, nfaults, seats, scores, faults in rows:
            if (seats, scores, faults) != (players, players * hands, nfaults):
                problems.append(f"match {mid!r} is incomplete: {seats}/{players} seats, "
                                f"{scores}/{players * hands} hand scores, {faults}/{nfaults} faults")
        return problems

    def _load(self, bot: str | None, match_id: str | None, with_record: bool) -> list[StoredMatch]:
        params: tuple[str, ...]
        if match_id is not None:
            sel, params = "m.match_id = ?", (match_id,)
        elif bot is not None:
            sel, params = "m.match_id IN (SELECT match_id FROM seats WHERE bot = ?)", (bot,)
        else:
            sel, params = "1", ()
        record_col = "m.record" if with_record else "NULL"
        mrows = self._read(
            "SELECT m.match_id, m.schedule_index, m.table_no, m.rotation, m.deal, m.seed, m.players, m.hands,"
            f" m.duration_seconds, m.started_at, {record_col}, m.record_path"
            f" FROM matches m WHERE {sel} ORDER BY m.schedule_index", params)
        if not mrows:
            return []
        seats: dict[str, list[tuple]] = {}
        for r in self._read(
                "SELECT s.match_id, s.seat, s.bot, s.total, s.place, s.forfeited, s.decisions, s.mean_seconds,"
                f" s.p95_seconds, s.max_seconds, s.timeouts, s.stderr_log, {self._off_turn_column} FROM seats s"
                f" JOIN matches m ON m.match_id = s.match_id WHERE {sel} ORDER BY s.match_id, s.seat", params):
            seats.setdefault(r[0], []).append(r[1:])
        hands: dict[str, list[tuple]] = {}
        for r in self._read(
                "SELECT h.match_id, h.hand, h.seat, h.score, h.won FROM hand_scores h"
                f" JOIN matches m ON m.match_id = h.match_id WHERE {sel} ORDER BY h.match_id, h.hand, h.seat",
                params):
            hands.setdefault(r[0], []).append(r[1:])
        faults: dict[str, list[dict[str, Any]]] = {}
        for r in self._read(
                "SELECT f.match_id, f.seat, f.kind, f.hand, f.decision, f.decision_kind, f.detail, f.excerpt,"
                " f.request_id FROM faults f"
                f" JOIN matches m ON m.match_id = f.match_id WHERE {sel} ORDER BY f.match_id, f.id", params):
            faults.setdefault(r[0], []).append(dict(zip(FAULT_KEYS, r[1:])))

        return [self._stored_match(row, seats.get(row[0], []), hands.get(row[0], []), faults.get(row[0], []))
                for row in mrows]

    def _stored_match(self, row: tuple[Any, ...], srows: list[tuple[Any, ...]], hrows: list[tuple[Any, ...]],
                      faults: list[dict[str, Any]]) -> StoredMatch:
        """One match of ``_load`` from its rows: the match's, its seats', its hand scores'."""
        mid, sched, table, rotation, deal, seed, players, nhands, duration, started, blob, record_path = row
        hand_scores = [[0] * players for _ in range(nhands)]
        winners: list[int | None] = [None] * nhands
        for hand, seat, score, won in hrows:
            hand_scores[hand - 1][seat] = score
            if won:
                winners[hand - 1] = seat
        record = None
        if blob is not None:
            try:
                record = json.loads(zlib.decompress(blob).decode("utf-8"))
            except (zlib.error, ValueError) as exc:
                raise StoreError(f"{self.path}: the record of match {mid!r} is damaged "
                                 f"({_one_line(exc)})") from None
        return StoredMatch(
            match_id=mid, schedule_index=sched, table=table, rotation=rotation, deal=deal, seed=seed,
            bots=[r[1] for r in srows], totals=[r[2] for r in srows], places=[r[3] for r in srows],
            forfeited=[bool(r[4]) for r in srows], hand_scores=hand_scores, hand_winners=winners,
            faults=faults,
            decision_stats=[dict(zip(STAT_KEYS, (r[5], r[6], r[7], r[8], r[9]))) for r in srows],
            stderr_logs=[r[10] for r in srows], off_turn_cpu=[r[11] for r in srows],
            record=record, record_path=record_path,
            duration_seconds=duration, started_at=started)
