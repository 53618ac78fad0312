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

A tournament played in rounds also stores what it decided before each
round (``round_decisions``: the round's tables, whether the stopping rule
stopped, what it read), so that a resumed run need not assess its stored
rounds again.  That table is made by the first decision, not by a schema
version: an older arena opens such a database as before, and a database
without it resumes by deciding its rounds again.

The schema, its migrations and the opening of a file (what is refused, and
how) are in storeschema.py; this module reads and writes the rows.

The store is written by one process (the tournament runner's parent, as each
match finishes); readers (``arena leaderboard``, ``arena matches``) may open the
same file at the same time, which WAL mode allows.
"""

from __future__ import annotations

import gzip
import json
import sqlite3
import threading
import zlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..pairing.decision import RoundDecision
from .resume import (
    AUTO_SANDBOX,
    RESOLVED_MODES,
    RESOLVED_SANDBOX,
    canonical_json,
    config_changes,
    current_config,
    seating_differences,
    without_unstored,
)
from .rows import FAULT_KEYS, FAULT_KINDS, STAT_KEYS, FailedMatch, StoredMatch, StoreError
from .schema import DECISIONS_SCHEMA, DECISIONS_TABLE, SCHEMA_VERSION, open_database
from .setaside import ARCHIVE_TABLE
from .sqlitetx import immediate as _immediate
from .sqlitetx import now as _now
from .sqlitetx import one_line as _one_line
from .sqlitetx import write_error as _write_error

__all__ = [
    "DEFAULT_DB_NAME", "FAULT_KINDS", "SCHEMA_VERSION", "STAT_KEYS", "FAULT_KEYS",
    "FailedMatch", "ResultStore", "RoundDecision", "StoreError", "StoredMatch", "resolve_db_path",
]

DEFAULT_DB_NAME = "results.sqlite"
# What marks a league's folder (arena.league.config.FILE_NAME; this layer knows no league, only where its results are).
LEAGUE_FILE = "league.yaml"
MATCH_BATCH = 500       # matches read at once by iter_matches (tests lower it)


def resolve_db_path(path: str | Path) -> Path:
    """The database file for a RESULTS argument: a directory means its results.sqlite,
    and a league's folder (a ``league.yaml`` beside ``results/``) its results'."""
    p = Path(path)
    if not p.is_dir():
        return p
    if not (p / DEFAULT_DB_NAME).exists() and (p / LEAGUE_FILE).is_file() and (p / "results").is_dir():
        return p / "results" / DEFAULT_DB_NAME
    return p / DEFAULT_DB_NAME


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
        self._conn, self._off_turn_column = open_database(self.path, create, readonly)

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
                    if self._has_decisions():      # the other file's rounds were decided for it
                        c.execute(f"DELETE FROM {DECISIONS_TABLE}")
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
                if self._holds_results():
                    raise

    def _holds_results(self) -> bool:
        """Whether any match was stored, failed or set aside here."""
        tables = ["matches", "failed_matches"]
        if self._read("SELECT 1 FROM sqlite_master WHERE name = ?", (ARCHIVE_TABLE,)):
            tables.append(ARCHIVE_TABLE)
        return any(self._read(f"SELECT 1 FROM {t} LIMIT 1") for t in tables)

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
            way_out = "use another output directory, or remove this file to start over"
            changed = seating_differences(row[1], config)
            if what.startswith("configuration") and len(changed) == 1 and changed[0].startswith("seating:"):
                played = json.loads(row[1]).get("seating", "rotate")
                before = (", as results stored before the setting existed were" if played == "rotate" else "")
                way_out = (f"they were seated with 'seating: {played}'{before}: give that in the file to go on "
                           f"with them, or " + way_out)
            raise StoreError(
                f"{self.path}: holds results of tournament {row[0]!r} with a different {what}; "
                f"refusing to mix them ({way_out})")

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
            blob = zlib.compress(_record_json(m.record), 6)
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

    def add_decision(self, d: RoundDecision) -> None:
        """Store what was decided before round ``d.round_no`` (one transaction;
        the first one makes the table).  StoreError if that round has one."""
        row = (d.round_no, d.start_index, d.matches, d.next_look, d.stop,
               json.dumps([list(t) for t in d.tables]),
               None if d.assessment is None else json.dumps(d.assessment, sort_keys=True), _now())
        with self._lock:
            c = self._conn
            try:
                with _immediate(c):
                    c.execute(DECISIONS_SCHEMA)
                    c.execute(f"INSERT INTO {DECISIONS_TABLE} (round_no, start_index, matches, next_look, stop,"
                              f" tables, assessment, decided_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)", row)
            except sqlite3.IntegrityError:
                raise StoreError(f"{self.path}: round {d.round_no} was already decided") from None
            except sqlite3.Error as exc:
                raise StoreError(f"{self.path}: cannot store the decision of round {d.round_no}: "
                                 f"{_write_error(exc)}") from None

    def decisions(self) -> dict[int, RoundDecision]:
        """The stored decisions of a tournament played in rounds, by round;
        none in a database an older arena wrote (the rounds are decided again)."""
        if not self._has_decisions():
            return {}
        rows = self._read(f"SELECT round_no, start_index, matches, next_look, stop, tables, assessment"
                          f" FROM {DECISIONS_TABLE} ORDER BY round_no")
        try:
            return {r[0]: RoundDecision(r[0], r[1], r[2], r[3], r[4], tuple(tuple(t) for t in json.loads(r[5])),
                                        None if r[6] is None else json.loads(r[6])) for r in rows}
        except (ValueError, TypeError) as exc:
            raise StoreError(f"{self.path}: damaged round decisions ({_one_line(exc)})") from None

    def _has_decisions(self) -> bool:
        return bool(self._read("SELECT 1 FROM sqlite_master WHERE name = ?", (DECISIONS_TABLE,)))

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
        if bot is None:     # a batch of rows at a time: all of them at once doubled the peak
            return list(self.iter_matches())
        return self._load(bot=bot, match_id=None, with_record=False)

    def iter_matches(self) -> Iterator[StoredMatch]:
        """``matches()``, read ``MATCH_BATCH`` matches at a time: for a reader
        that needs each match once, so that a tournament of any size is never
        held whole (a match loaded is about 5 KB, and twice that while its rows are read)."""
        after = None
        while True:
            batch = self._load(bot=None, match_id=None, with_record=False, after=after, limit=MATCH_BATCH)
            yield from batch
            if len(batch) < MATCH_BATCH:
                return
            after = batch[-1].schedule_index

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
                raw = gzip.decompress(raw)
            return json.loads(raw.decode("utf-8"))
        except (OSError, ValueError, EOFError) as exc:
            raise StoreError(f"{p}: cannot read the record of match {match_id!r} ({_one_line(exc)})") from None

    def record_bytes(self, match_id: str) -> bytes | None:
        """The JSON text of a match's record kept in the database, decompressed;
        None when it is kept in a file, or cannot be decompressed (``record``
        says what is wrong).  For readers that decode only part of it."""
        rows = self._read("SELECT record FROM matches WHERE match_id = ?", (match_id,))
        if not rows or rows[0][0] is None:
            return None
        try:
            return zlib.decompress(rows[0][0])
        except zlib.error:
            return None

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

    def _load(self, bot: str | None, match_id: str | None, with_record: bool, after: int | None = None,
              limit: int | None = None) -> list[StoredMatch]:
        """The matches selected (one, ``bot``'s, or all), or with ``limit`` the
        first ``limit`` in schedule order after schedule index ``after``."""
        params: tuple[Any, ...]
        if match_id is not None:
            sel, params = "m.match_id = ?", (match_id,)
        elif bot is not None:
            sel, params = "m.match_id IN (SELECT match_id FROM seats WHERE bot = ?)", (bot,)
        elif limit is not None:
            sel = ("m.match_id IN (SELECT match_id FROM matches WHERE schedule_index > ?"
                   " ORDER BY schedule_index LIMIT ?)")
            params = (-(1 << 63) if after is None else after, limit)
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


def _record_json(record: Mapping[str, Any]) -> bytes:
    """A match record's JSON, as its readers decode it: the same values as
    ``json.dumps`` gives (UTF-8 rather than \\u escapes, 1e16 for 1e+16).
    msgspec takes 0.8 ms a four-seat match of built-in players against
    json.dumps's 10.5 (measured), a tenth of the match's own CPU."""
    import msgspec  # lazy: the commands that only read results never store one (test_lean_imports)

    return msgspec.json.encode(record)
