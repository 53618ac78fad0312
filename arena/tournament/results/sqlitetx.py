"""What the results store and the archive of set-aside matches share about
SQLite: how a connection is opened, one write transaction, and how an
error of SQLite's is told in one line."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timezone

__all__ = ["connect", "immediate", "now", "one_line", "write_error"]


def connect(target: str, uri: bool = False) -> sqlite3.Connection:
    # Autocommit mode: the store opens and closes its transactions explicitly.
    return sqlite3.connect(target, isolation_level=None, timeout=30.0, check_same_thread=False, uri=uri)


@contextmanager
def immediate(c: sqlite3.Connection) -> Iterator[None]:
    """One write transaction, taken at once (BEGIN IMMEDIATE): committed at
    the end of the block, rolled back if it raises."""
    c.execute("BEGIN IMMEDIATE")
    try:
        yield
        c.execute("COMMIT")
    except BaseException:
        # A Ctrl-C or SIGTERM handled just after COMMIT returned raises here with
        # nothing left to roll back: ROLLBACK would fail, and its error would
        # replace the signal's (a league run stopped so ended 1, not 143).
        if c.in_transaction:
            c.execute("ROLLBACK")
        raise


def write_error(exc: sqlite3.Error) -> str:
    """sqlite3's reason in one line; for a lock held past the busy timeout,
    whose, since the organiser can release it."""
    text = one_line(exc)
    if "readonly" in text:
        text += ("; the file cannot be written (its mode, or a read-only file system): make it writable, then "
                 "run the same command again; every match stored before is kept")
    elif isinstance(exc, sqlite3.OperationalError) and ("locked" in text or "busy" in text):
        text += ("; another program holds a write lock on it (an sqlite3 shell in a transaction, say): "
                 "end that, then run the same command again")
    return text


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__
