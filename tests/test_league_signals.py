"""A stop signal handled just after a write transaction's COMMIT returned
(``sqlitetx.immediate``, which the league's register and the results store
write through) stays that signal: the write is kept, and nothing tries to
roll back a transaction that is no longer open (whose error, "cannot
rollback - no transaction is active", replaced the signal's: a SIGTERM to
``arena league run`` ended it with status 1, tests/test_league_serve.py)."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from arena.tournament.results.sqlitetx import connect, immediate


class _SignalAfterCommit:
    """A connection whose COMMIT completes, then a KeyboardInterrupt is raised (as a signal's handler does)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    @property
    def in_transaction(self) -> bool:
        return self.conn.in_transaction

    def execute(self, sql: str, *args: Any) -> sqlite3.Cursor:
        cursor = self.conn.execute(sql, *args)
        if sql == "COMMIT":
            raise KeyboardInterrupt
        return cursor


def test_a_signal_just_after_commit_is_the_signal_and_the_write_is_kept(tmp_path: Path) -> None:
    conn = connect(str(tmp_path / "db.sqlite"))
    conn.execute("CREATE TABLE t (x INTEGER)")
    wrapped = _SignalAfterCommit(conn)
    with pytest.raises(KeyboardInterrupt):
        with immediate(wrapped):  # type: ignore[arg-type]
            conn.execute("INSERT INTO t VALUES (1)")
    assert not conn.in_transaction
    assert conn.execute("SELECT x FROM t").fetchall() == [(1,)]
    with pytest.raises(KeyError):              # a failure inside the block still rolls back
        with immediate(conn):
            conn.execute("INSERT INTO t VALUES (2)")
            raise KeyError("x")
    assert conn.execute("SELECT x FROM t").fetchall() == [(1,)]
    conn.close()
