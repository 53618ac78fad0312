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
(``audit``).  Each table carries its own deal seed, and only a table the
copy holds a match of: those seeds are public anyway (each match stores its
own, and its record every card), while the league's seed is not, since every
deal to come follows from it (``plan.table_seed``).  So the copy's stored
description of the league loses its seed (the tournament row's and the
configuration's) and gains the one its standings' bootstrap uses
(``league_bootstrap_seed``, one-way as a table's), and the file is rebuilt
(VACUUM) so that no freed page keeps the old row.
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
from ..tournament.results.resume import canonical_json
from ..tournament.results.sqlitetx import one_line
from ..tournament.standings.leaderboard import league_bootstrap_seed
from .config import LeagueConfig, LeagueError
from .plan import table_seed
from .register import EXPORTED_TABLES_SCHEMA, Register

__all__ = ["GUESSABLE_BITS", "Exported", "export_league"]

# A league seed of at most these bits is within reach of trying every seed on
# a published table's deal seed (2^48 SHA-256: hours of one GPU, estimated), and with it
# every deal to come.  ``arena league init`` draws 63 (earlier, 48).
GUESSABLE_BITS = 48


@dataclass(frozen=True)
class Exported:
    """What an export holds: its database, its matches and the logs copied."""

    db: Path
    matches: int
    failed: int
    logs: int
    guessable: bool = False      # the league's seed is small enough to find from the export by trying seeds


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
        _conceal_seed(db, config, out)
        building.chmod(0o755)            # mkdtemp's 0700: the export is for publishing
        if out.exists():
            out.rmdir()                  # empty (checked above)
        os.rename(building, out)
    except BaseException:
        shutil.rmtree(building, ignore_errors=True)
        raise
    guessable = config.seed is not None and config.seed.bit_length() <= GUESSABLE_BITS    # a key never is
    return Exported(out / DEFAULT_DB_NAME, matches, failed, logs, guessable)


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
        played = {int(n) for (n,) in conn.execute("SELECT DISTINCT table_no FROM matches")}
        conn.execute(EXPORTED_TABLES_SCHEMA)
        conn.executemany("INSERT INTO league_tables (table_no, seats, block, seed) VALUES (?, ?, ?, ?)",
                         [(t.table_no, json.dumps(list(t.seats)), t.block,
                           table_seed(config.secret, t.table_no) if t.table_no in played else None)
                          for t in tables])
        conn.execute("COMMIT")
    except sqlite3.Error as exc:
        raise LeagueError(f"{out}: cannot write the export: {one_line(exc)}") from None
    finally:
        conn.close()


def _conceal_seed(db: Path, config: LeagueConfig, out: Path) -> None:
    """The league's seed out of ``db``: its description's seed replaced by its bootstrap's, then every page
    rewritten, so that the old row is in no free page either."""
    conn = sqlite3.connect(db, isolation_level=None)
    try:
        (stored,) = conn.execute("SELECT config FROM tournament WHERE id = 1").fetchone()
        described = {k: v for k, v in json.loads(stored).items() if k != "seed"}
        described["bootstrap_seed"] = league_bootstrap_seed(config.secret)
        conn.execute("BEGIN")
        conn.execute("UPDATE tournament SET seed = NULL, config = ? WHERE id = 1",
                     (canonical_json(described),))
        conn.execute("COMMIT")
        conn.execute("VACUUM")
    except (sqlite3.Error, ValueError, TypeError) as exc:
        raise LeagueError(f"{out}: cannot write the export: {one_line(exc)}") from None
    finally:
        conn.close()


def _inside(path: Path, folder: Path) -> Path | None:
    """``path`` relative to ``folder``, or None when it is not under it."""
    try:
        return path.resolve().relative_to(folder.resolve())
    except ValueError:
        return None
