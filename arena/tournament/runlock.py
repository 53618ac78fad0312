"""One ``arena run`` at a time per results directory.

Two runs of one tournament into one directory (a second terminal, a cron
job that started again) would play the same matches twice and the slower
one would stop on a match "already stored"; the second run is told at once
instead.  The lock is a POSIX record lock (``lockf``) on a file in the
directory: it goes with the process that holds it, however that process
ends.  Not ``flock``: a ``flock`` belongs to the open file, which forked
match workers share, so a SIGKILLed arena's workers held it on until they
noticed, and the resume that followed was refused.  A record lock is not
inherited by a fork.
"""

from __future__ import annotations

import errno
import fcntl
import os
import struct
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from .results.rows import StoreError

LOCK_NAME = ".arena-run.lock"


@contextmanager
def results_lock(output: Path) -> Iterator[None]:
    """Hold ``output``'s run lock for the block; ``StoreError`` if another run holds it."""
    path = output / LOCK_NAME
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    except OSError as error:
        raise StoreError(f"{path}: cannot create the run lock: {error.strerror}; arena run needs a results "
                         f"directory it can write (arena leaderboard, show and report only read one)") from None
    try:
        try:
            fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as error:
            if error.errno not in (errno.EACCES, errno.EAGAIN):
                raise StoreError(f"{path}: cannot lock: {error.strerror}") from None
            holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
            by = f" (pid {holder})" if holder.isdigit() else ""
            raise StoreError(f"{output}: another arena run{by} is playing into these results; wait for "
                             f"it to finish, or give this run another --out") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode("ascii"), 0)
        yield
    finally:
        os.close(fd)


def playing_now(results: Path) -> int | None:
    """The pid of an ``arena run`` playing into the results directory
    ``results`` now (0 if it cannot be told), or None.  Takes no lock: a
    reader must never make a starting run believe another one holds it."""
    try:
        fd = os.open(results / LOCK_NAME, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None             # never run here, or not a directory
    try:
        # struct flock: l_type, l_whence, l_start, l_len, l_pid (native layout);
        # F_GETLK asks who would stop a write lock of the whole file.
        query = struct.pack("hhqqi", fcntl.F_WRLCK, os.SEEK_SET, 0, 0, 0)
        answer = fcntl.fcntl(fd, fcntl.F_GETLK, query)
        kind, _, _, _, pid = struct.unpack("hhqqi", answer)
    except OSError:
        return None
    finally:
        os.close(fd)
    if kind == fcntl.F_UNLCK:
        return None
    return max(pid, 0)
