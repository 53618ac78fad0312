"""Setting aside a bot's stored matches, so that a run re-plays them.

A student who hands in a fixed program wants it ranked without re-playing
the whole tournament: ``arena run FILE --rerun NAME`` moves every stored
match in which NAME has a seat (and every stored failure of one) out of the
tables that count into ``superseded_matches``, in one transaction, before
the run resumes; the run then finds those matches missing and plays them
with the current program.  Nothing is deleted: each archived row keeps the
match's rows of every table (JSON, columns by name) and its compressed
record, with when and why it was set aside.  Its key is an archive number of
its own, so the re-play, stored under the schedule's match id, never
collides with it, and a second ``--rerun`` of the same bot archives the
re-played matches beside the first ones.  The stderr logs of a set-aside
match (and its record file, if it has one) are copied to
``RESULTS/logs/superseded/ARCHIVE_ID/`` first, and its kept rows point
there, since the re-play writes its logs under the same names.

The archive table is created by the first set-aside (older arenas, which do
not know it, read the database as before); every reader (leaderboard,
report, matches, show, verify) reads the match tables only, hence the
current matches only.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .rows import StoreError
from .sqlitetx import connect, immediate, now, one_line, write_error

__all__ = ["ARCHIVE_TABLE", "SUPERSEDED_LOGS", "SetAside", "finish_set_aside", "set_aside", "superseded",
           "superseded_rows", "times_set_aside"]

LOG = logging.getLogger(__name__)

ARCHIVE_TABLE = "superseded_matches"
SUPERSEDED_LOGS = "superseded"    # RESULTS/logs/superseded/ARCHIVE_ID/: the logs of a set-aside match

_ARCHIVE = f"""
CREATE TABLE IF NOT EXISTS {ARCHIVE_TABLE} (
    archive_id      INTEGER PRIMARY KEY,    -- its own numbering: a re-play never collides with it
    match_id        TEXT NOT NULL,
    schedule_index  INTEGER NOT NULL,
    kind            TEXT NOT NULL CHECK (kind IN ('match', 'failure')),
    set_aside_at    TEXT NOT NULL,
    reason          TEXT NOT NULL,
    rows            TEXT NOT NULL,          -- JSON: table -> list of rows (column -> value), record left out
    record          BLOB                    -- the match's zlib-compressed record, as it was stored
)
"""

# The match tables, parents first; each row of a set-aside match is kept.
_CHILD_TABLES = ("seats", "hand_scores", "faults")


@dataclass(frozen=True)
class SetAside:
    bot: str
    matches: int
    failures: int

    def line(self, where: Path) -> str:
        failed = (f" and {self.failures} stored failure{'s' if self.failures != 1 else ''}"
                  if self.failures else "")
        plural = "match" if self.matches == 1 else "matches"
        return (f"set aside {self.matches} stored {plural}{failed} of {self.bot}; they are kept in {where} "
                f"as superseded (arena matches RESULTS --superseded lists them) and are played again now")


def _rows(c: sqlite3.Connection, sql: str, params: Sequence[Any]) -> list[dict[str, Any]]:
    cur = c.execute(sql, params)
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r)) for r in cur.fetchall()]


def _keep_files(kept: dict[str, Any], into: Path, copied: list[tuple[Path, Path]]) -> None:
    """Copy the stderr logs and record file of a set-aside match into ``into``
    (the re-play writes its own under the same names) and point its kept
    rows at the copies; a file gone already is left as named.  The originals
    are removed once the transaction is committed."""
    places = [(row, "stderr_log") for row in kept["seats"]] + [(row, "record_path") for row in kept["matches"]]
    for row, column in places:
        path = row.get(column)
        if not isinstance(path, str) or not os.path.isfile(path):
            continue
        into.mkdir(parents=True, exist_ok=True)
        copy = into / Path(path).name
        shutil.copy2(path, copy)
        copied.append((Path(path), copy))
        row[column] = str(copy)


def _archive_bot(c: sqlite3.Connection, bot: str, reason: str, stamp: str, logs: Path,
                 copied: list[tuple[Path, Path]]) -> SetAside:
    ids = [r[0] for r in c.execute(
        "SELECT m.match_id FROM matches m JOIN seats s ON s.match_id = m.match_id WHERE s.bot = ?"
        " ORDER BY m.schedule_index", (bot,))]
    for mid in ids:
        match = _rows(c, "SELECT * FROM matches WHERE match_id = ?", (mid,))[0]
        record = match.pop("record")
        kept: dict[str, Any] = {"matches": [match]}
        for table in _CHILD_TABLES:
            kept[table] = _rows(c, f"SELECT * FROM {table} WHERE match_id = ? ORDER BY rowid", (mid,))
        archive_id = c.execute(
            f"INSERT INTO {ARCHIVE_TABLE} (match_id, schedule_index, kind, set_aside_at, reason, rows, record)"
            " VALUES (?, ?, 'match', ?, ?, '{}', ?)", (mid, match["schedule_index"], stamp, reason, record)).lastrowid
        _keep_files(kept, logs / SUPERSEDED_LOGS / str(archive_id), copied)
        c.execute(f"UPDATE {ARCHIVE_TABLE} SET rows = ? WHERE archive_id = ?", (json.dumps(kept), archive_id))
        # Children first: the store's foreign keys would cascade, but a
        # database opened without them on must not keep orphans.
        for table in reversed(_CHILD_TABLES):
            c.execute(f"DELETE FROM {table} WHERE match_id = ?", (mid,))
        c.execute("DELETE FROM matches WHERE match_id = ?", (mid,))
    failed = [f for f in _rows(c, "SELECT * FROM failed_matches ORDER BY schedule_index", ())
              if bot in _seated(f["bots"])]
    for f in failed:
        c.execute(f"INSERT INTO {ARCHIVE_TABLE} (match_id, schedule_index, kind, set_aside_at, reason, rows)"
                  " VALUES (?, ?, 'failure', ?, ?, ?)",
                  (f["match_id"], f["schedule_index"], stamp, reason, json.dumps({"failed_matches": [f]})))
        c.execute("DELETE FROM failed_matches WHERE match_id = ?", (f["match_id"],))
    return SetAside(bot, len(ids), len(failed))


def _seated(bots_json: str) -> list[str]:
    try:
        bots = json.loads(bots_json)
    except ValueError:
        return []
    return [b for b in bots if isinstance(b, str)] if isinstance(bots, list) else []


def set_aside(db: Path, bots: Sequence[str], reason: str) -> list[SetAside]:
    """Move every stored match (and failure) of each of ``bots`` into the
    archive, all in one transaction.  StoreError, with nothing changed, when
    one of them has nothing stored (naming it) or the file cannot be written."""
    try:
        c = connect(str(db))
    except sqlite3.Error as exc:
        raise StoreError(f"{db}: cannot open results database: {one_line(exc)}") from None
    copied: list[tuple[Path, Path]] = []
    try:
        c.execute("PRAGMA foreign_keys = ON")
        with immediate(c):
            c.execute(_ARCHIVE)
            stamp = now()
            done = [_archive_bot(c, bot, reason, stamp, db.parent / "logs", copied) for bot in dict.fromkeys(bots)]
            empty = [d.bot for d in done if not d.matches and not d.failures]
            if empty:
                # Raised inside the transaction: the others' set-aside is rolled back too.
                raise StoreError(f"{db}: --rerun {empty[0]}: {empty[0]} has no stored match to set aside "
                                 f"(nothing was changed); a plain `arena run` plays its missing matches")
    except BaseException as exc:
        for _, copy in copied:      # rolled back: the copies would be kept for nothing
            copy.unlink(missing_ok=True)
        if isinstance(exc, sqlite3.Error):
            raise StoreError(f"{db}: cannot set matches aside: {write_error(exc)} (nothing was changed)") from None
        if isinstance(exc, OSError):
            raise StoreError(f"{db}: cannot set matches aside: cannot copy their logs: {one_line(exc)} "
                             f"(nothing was changed)") from None
        raise
    finally:
        c.close()
    # Committed: the originals go, or the re-play would append its lines to the old program's.
    for original, copy in copied:
        try:
            original.unlink(missing_ok=True)
        except OSError as exc:
            LOG.warning("%s: kept in %s, but cannot be removed: %s", original, copy.parent, one_line(exc))
    return done


def finish_set_aside(db: Path) -> int:
    """Remove the originals of set-aside logs that a killed ``set_aside`` left
    behind (it removes them after its commit): a log still holding exactly
    what its archived copy holds, of a match not stored again yet, would
    otherwise get the re-play's lines appended to the old program's.  Run
    before a run plays; returns how many it removed."""
    if not db.exists():
        return 0
    logs = db.parent / "logs"
    removed = 0
    try:
        kept = [r for r in superseded(db) if r["kind"] == "match"]
        if not kept:
            return 0
        current = _stored_ids(db)
    except (StoreError, sqlite3.Error):
        return 0                           # the run's own opening of the database says what is wrong
    for r in kept:
        if r["match_id"] in current:
            continue
        rows = r["rows"]
        for path in [s.get("stderr_log") for s in rows.get("seats", [])] + \
                    [m.get("record_path") for m in rows.get("matches", [])]:
            if not isinstance(path, str) or Path(path).parent != logs / SUPERSEDED_LOGS / str(r["archive_id"]):
                continue
            original = logs / Path(path).name
            try:
                if original.is_file() and Path(path).is_file() and _same_bytes(original, Path(path)):
                    original.unlink()
                    removed += 1
            except OSError as exc:
                LOG.warning("%s: kept in %s, but cannot be removed: %s", original, Path(path).parent, one_line(exc))
    return removed


def _stored_ids(db: Path) -> set[str]:
    c = connect(f"file:{db}?mode=ro", uri=True)
    try:
        return {r[0] for r in c.execute("SELECT match_id FROM matches")}
    finally:
        c.close()


def _same_bytes(a: Path, b: Path) -> bool:
    return a.stat().st_size == b.stat().st_size and a.read_bytes() == b.read_bytes()


def superseded(db: Path) -> list[dict[str, Any]]:
    """The archive, oldest first: archive_id, match_id, schedule_index, kind,
    set_aside_at, reason and the kept rows (parsed); empty if none."""
    c = connect(f"file:{db}?mode=ro", uri=True)
    try:
        if not c.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (ARCHIVE_TABLE,)).fetchone():
            return []
        out = _rows(c, f"SELECT archive_id, match_id, schedule_index, kind, set_aside_at, reason, rows"
                       f" FROM {ARCHIVE_TABLE} ORDER BY archive_id", ())
    except sqlite3.Error as exc:
        raise StoreError(f"{db}: cannot read the set-aside matches ({one_line(exc)})") from None
    finally:
        c.close()
    for r in out:
        r["rows"] = json.loads(r["rows"])
    return out


def times_set_aside(db: Path) -> dict[str, int]:
    """How many times each match id was set aside, as a match or as a failure
    (the schedule deals those matches new cards: ``schedule.redeal``)."""
    if not db.exists():
        return {}
    try:
        c = connect(f"file:{db}?mode=ro", uri=True)
    except sqlite3.Error as exc:
        raise StoreError(f"{db}: not a usable results database ({one_line(exc)})") from None
    try:
        if not c.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (ARCHIVE_TABLE,)).fetchone():
            return {}
        return dict(c.execute(f"SELECT match_id, count(*) FROM {ARCHIVE_TABLE} GROUP BY match_id").fetchall())
    except sqlite3.Error as exc:
        raise StoreError(f"{db}: not a usable results database ({one_line(exc)})") from None
    finally:
        c.close()


def superseded_rows(db: Path, bot: str | None = None) -> list[dict[str, Any]]:
    """The archive as ``arena matches --superseded`` lists it, oldest first:
    per set-aside match or failure, its schedule index, match id, archive
    id, when and why it was set aside, and its result then (its bots,
    totals and places; a failure's reason).  ``bot``: only those it sat in."""
    out: list[dict[str, Any]] = []
    for r in superseded(db):
        kept = r["rows"]
        if r["kind"] == "match":
            seats = sorted(kept.get("seats", []), key=lambda s: s["seat"])
            bots = [s["bot"] for s in seats]
            totals, places = [s["total"] for s in seats], [s["place"] for s in seats]
            lost = [bool(s.get("forfeited")) for s in seats]
            order = sorted(range(len(seats)), key=lambda i: places[i])
            # marked as `arena matches` marks a current match's: the place of a forfeit is not its play
            result = ", ".join(f"{places[i]}. {bots[i]} {totals[i]}" + (" (forfeit)" if lost[i] else "")
                               for i in order)
            failure, forfeited = None, lost
        else:
            failed = (kept.get("failed_matches") or [{}])[0]
            bots, totals, places, forfeited = _seated(failed.get("bots", "[]")), None, None, None
            failure = failed.get("reason")
            result = f"arena error: {failure} ({', '.join(bots)})"
        if bot is not None and bot not in bots:
            continue
        out.append({"index": r["schedule_index"], "match_id": r["match_id"], "archive": r["archive_id"],
                    "kind": r["kind"], "set_aside_at": r["set_aside_at"], "why": r["reason"], "result": result,
                    "bots": bots, "totals": totals, "places": places, "forfeited": forfeited,
                    "reason": failure})
    return out
