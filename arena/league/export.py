"""``arena league export DIR OUT``: the league's results, frozen, as a tournament's results directory.

For publishing: ``OUT/results.sqlite`` is read by ``arena leaderboard``,
``matches``, ``show``, ``report`` and ``verify`` exactly as a tournament's,
and nothing written to the league afterwards changes it.

A consistent snapshot at any moment, ``league run`` writing or not: SQLite's
backup API copies the whole database in one step (``pages=-1``), under one
read transaction, and in WAL mode a reader's transaction sees the database
as it was when it began, whatever the writer commits meanwhile.  So the copy
holds every match stored up to one instant, each whole (a match is stored in
one transaction), and none after.  The copy then leaves WAL mode, so that
OUT is one file to hand around, and the bots' stderr logs of the matches it
holds are copied beside it (``OUT/logs``), their paths in the copy pointing
there.  OUT is written under a temporary name and renamed into place: an
export stopped part-way leaves no OUT that looks whole.

The register's tables go into the copy too (``league_tables``), read after
the snapshot so that every match it holds has its table: ``arena verify OUT``
then holds each match to its table as it does on the league's folder
(``audit``), its seed from the league's seed, which the results database
holds (the league's stored description, as a tournament's).
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ..tournament.results.database import DEFAULT_DB_NAME
from ..tournament.results.sqlitetx import one_line
from .config import LeagueConfig, LeagueError
from .register import EXPORTED_TABLES_SCHEMA, Register

__all__ = ["Exported", "export_league"]


@dataclass(frozen=True)
class Exported:
    """What an export holds: its database, its matches and the logs copied."""

    db: Path
    matches: int
    failed: int
    logs: int


def export_league(config: LeagueConfig, out: Path) -> Exported:
    """Write the league's results as they are now into ``out`` (which must not exist, or be empty)."""
    source = config.results / DEFAULT_DB_NAME
    if not source.is_file():
        raise LeagueError(f"{config.dir}: no match stored yet, nothing to export (arena league run {config.dir} plays)")
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise LeagueError(f"{out}: exists already; export into a new folder")
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        building = Path(tempfile.mkdtemp(prefix=f".{out.name}-", dir=out.parent))
    except OSError as exc:
        raise LeagueError(f"{out}: cannot write: {exc.strerror or exc}") from None
    try:
        db = building / DEFAULT_DB_NAME
        _snapshot(source, db)
        matches, failed, logs = _relocate_logs(db, config.results, building, out)
        _copy_tables(db, config, out)
        building.chmod(0o755)            # mkdtemp's 0700: the export is for publishing
        if out.exists():
            out.rmdir()                  # empty (checked above)
        os.rename(building, out)
    except BaseException:
        shutil.rmtree(building, ignore_errors=True)
        raise
    return Exported(out / DEFAULT_DB_NAME, matches, failed, logs)


def _snapshot(source: Path, target: Path) -> None:
    """``source`` as of one instant, into the new file ``target``, out of WAL mode."""
    try:
        reader = sqlite3.connect(f"file:{source}?mode=ro", uri=True, timeout=30.0)
        try:
            writer = sqlite3.connect(target)
            try:
                reader.backup(writer)        # pages=-1: the whole database in one step, one read transaction
                writer.execute("PRAGMA journal_mode=DELETE")
            finally:
                writer.close()
        finally:
            reader.close()
    except sqlite3.Error as exc:
        raise LeagueError(f"{source}: cannot export the results: {one_line(exc)}") from None


def _relocate_logs(db: Path, results: Path, building: Path, out: Path) -> tuple[int, int, int]:
    """Copy the stderr logs and tracebacks the snapshot names from the league's
    results folder into ``building``, naming them where they will be (``out``).
    The snapshot's matches, failed matches and the logs copied."""
    conn = sqlite3.connect(db, isolation_level=None)
    try:
        paths = [r[0] for r in conn.execute("SELECT stderr_log FROM seats WHERE stderr_log IS NOT NULL"
                                            " UNION SELECT log_path FROM failed_matches WHERE log_path IS NOT NULL")]
        moved: dict[str, str] = {}
        for path in paths:
            relative = _inside(Path(path), results)
            if relative is None or not Path(path).is_file():
                continue                     # elsewhere, or never written (a bot silent on stderr)
            copy = building / relative
            copy.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, copy)
            moved[path] = str(out.resolve() / relative)
        conn.execute("BEGIN")
        conn.executemany("UPDATE seats SET stderr_log = ? WHERE stderr_log = ?", [(n, o) for o, n in moved.items()])
        conn.executemany("UPDATE failed_matches SET log_path = ? WHERE log_path = ?",
                         [(n, o) for o, n in moved.items()])
        conn.execute("COMMIT")
        matches = conn.execute("SELECT count(*) FROM matches").fetchone()[0]
        failed = conn.execute("SELECT count(*) FROM failed_matches").fetchone()[0]
        return int(matches), int(failed), len(moved)
    except (sqlite3.Error, OSError) as exc:
        raise LeagueError(f"{out}: cannot write the export: {one_line(exc)}") from None
    finally:
        conn.close()


def _copy_tables(db: Path, config: LeagueConfig, out: Path) -> None:
    """The register's tables as they are now (after the snapshot: a superset of the snapshot's) into ``db``."""
    with Register(config.dir, readonly=True) as register:
        tables = register.tables()
    conn = sqlite3.connect(db, isolation_level=None)
    try:
        conn.execute("BEGIN")
        conn.execute(EXPORTED_TABLES_SCHEMA)
        conn.executemany("INSERT INTO league_tables (table_no, seats, block) VALUES (?, ?, ?)",
                         [(t.table_no, json.dumps(list(t.seats)), t.block) for t in tables])
        conn.execute("COMMIT")
    except sqlite3.Error as exc:
        raise LeagueError(f"{out}: cannot write the export: {one_line(exc)}") from None
    finally:
        conn.close()


def _inside(path: Path, folder: Path) -> Path | None:
    """``path`` relative to ``folder``, or None when it is not under it."""
    try:
        return path.resolve().relative_to(folder.resolve())
    except ValueError:
        return None
