"""What ``arena verify DIR`` adds for a league: every stored match is one its register's tables give.

``arena verify`` replays each stored result from its record whatever made
it; a tournament's schedule then says which matches must be stored, with
which seeds and seats.  A league has no schedule fixed in advance: its
register records each table before its first match is played, and a
table's matches follow from that row and the league's seed (``plan``).  So
each stored match must be a match of a registered table, dealt from the
seed ``plan`` derives and seated as ``plan`` seats it: a match copied in
from elsewhere, or edited to another seat or seed, is named.  A match of a
table that is not stored is no problem: a run stopped part-way (or playing
now) left it, and the next run plays it first; it is counted.

An export (``export``) carries its league's tables in its results database
(``league_tables``, copied after its snapshot), each played one with its deal
seed, and not the league's seed (which would give every deal to come):
``audit_export`` holds its matches to those tables and seeds as
``audit_folder`` does a league's to the seeds its league's seed derives.
What only the league's seed can tell, that a table's carried seed is the
one the league dealt, ``arena verify DIR`` checks on the league's folder.
An export made before exports carried seeds holds the league's seed, and is
held to it.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from ..tournament.config.model import ConfigError
from ..tournament.pairing.schedule import ScheduleEntry
from ..tournament.results.database import ResultStore
from .config import LeagueConfig, LeagueError, load_league
from .plan import dealt_entries, table_seed
from .register import REGISTER, Register, TableRow

__all__ = ["LeagueError", "TableAudit", "audit_export", "audit_folder", "audit_tables", "is_league"]


@dataclass(frozen=True)
class TableAudit:
    """The problems found (a line each, naming the match) and the registered matches not stored yet."""

    problems: tuple[str, ...]
    unplayed: int
    tables: int
    exported: bool = False
    without_tables: bool = False       # an export made before exports held their tables

    def summary(self) -> str:
        if self.without_tables:
            return ("its league's tables are not in this export (made before exports held them): each match is "
                    "replayed, not held to a table; export the league again to check that too")
        if self.exported:
            pending = (f"; {self.unplayed} match(es) of its tables were not stored at the export's instant"
                       if self.unplayed else "")
            return f"every stored match is one of the exported league's {self.tables} table(s){pending}"
        pending = (f"; {self.unplayed} match(es) of its tables not played yet (the next arena league run "
                   f"plays them first)" if self.unplayed else "")
        return f"every stored match is one of the league's {self.tables} registered table(s){pending}"


def audit_tables(config: LeagueConfig, store: ResultStore, register: Register) -> TableAudit:
    return _audit([(t, table_seed(config.secret, t.table_no)) for t in register.tables()], store)


def _audit(tables: list[tuple[TableRow, int | None]], store: ResultStore, exported: bool = False) -> TableAudit:
    """Each stored match held to its table and that table's deal seed (None: the export carries none)."""
    planned: dict[str, tuple[ScheduleEntry, bool]] = {
        e.match_id: (e, seed is not None) for t, seed in tables for e in dealt_entries(t, seed or 0)}
    problems = []
    done = {f.match_id for f in store.failures()}
    for m in store.matches():
        done.add(m.match_id)
        entry, dealt = planned.get(m.match_id, (None, False))
        if entry is None:
            problems.append(f"match {m.match_id}: not a match of any table in the league's register")
        elif not dealt:
            problems.append(f"match {m.match_id}: stored with seed {m.seed}; its table carries no seed")
        elif m.seed != entry.seed:
            problems.append(f"match {m.match_id}: stored with seed {m.seed}; its table deals seed {entry.seed}")
        elif tuple(m.bots) != entry.seats:
            problems.append(f"match {m.match_id}: stored with {', '.join(m.bots)} in its seats; its table "
                            f"seats {', '.join(entry.seats)}")
    return TableAudit(tuple(problems), sum(1 for mid in planned if mid not in done), len(tables), exported)


def audit_folder(folder: Path, store: ResultStore) -> TableAudit:
    """``audit_tables`` of the league in ``folder``, whose results ``store`` holds; LeagueError (one line)
    when its file or register cannot be read."""
    try:
        config = load_league(folder)
    except ConfigError as err:
        raise LeagueError(str(err)) from None
    if not (config.dir / REGISTER).is_file():
        raise LeagueError(f"{config.dir / REGISTER}: missing: the league's register of its tables")
    with Register(config.dir, readonly=True) as register:
        return audit_tables(config, store, register)


def is_league(described: object) -> bool:
    """Whether a results database's stored description is a league's (``LeagueConfig.stored``)."""
    return isinstance(described, dict) and described.get("format") == "league"


def audit_export(store: ResultStore) -> TableAudit | None:
    """``audit_tables`` of a league's export, from the tables and seeds it holds;
    None for results that are not a league's."""
    described = store.tournament()
    if described is None or not is_league(described["config"]):
        return None
    try:
        conn = sqlite3.connect(f"file:{store.path}?mode=ro", uri=True)
        try:
            columns = {row[1] for row in conn.execute("PRAGMA table_info(league_tables)")}
            if not columns:
                return TableAudit((), 0, 0, exported=True, without_tables=True)
            rows = conn.execute(f"SELECT table_no, seats, block, {'seed' if 'seed' in columns else 'NULL'}"
                                " FROM league_tables ORDER BY table_no").fetchall()
        finally:
            conn.close()
        tables = [TableRow(int(n), tuple(json.loads(seats)), int(block), "") for n, seats, block, _ in rows]
        seeds = [None if seed is None else int(seed) for *_, seed in rows]
    except (sqlite3.Error, ValueError, TypeError) as exc:
        raise LeagueError(f"{store.path}: cannot read the exported league's tables ({exc})") from None
    if "seed" not in columns:                   # an export of before: it holds the league's seed
        if not isinstance(described["seed"], int):
            return TableAudit((), 0, 0, exported=True, without_tables=True)
        seeds = [table_seed(described["seed"], t.table_no) for t in tables]
    return _audit(list(zip(tables, seeds)), store, exported=True)
