"""The seccomp filter of sandboxed bots: kernel calls that would let two bots
talk, or hold memory no limit sees, although they share no file they can
write, no network and no process.

* File locks (``flock``, and ``fcntl`` lock commands): every bot can open the
  same read-only files (the interpreter, say); a lock taken by one is seen by
  the others (``F_GETLK``), which is enough to pass a hand bit by bit.
* ``inotify`` / ``fanotify``: one bot opening a shared file is an event
  another can watch.
* The kernel keyring (``add_key``, ``keyctl``, ``request_key``): where the
  arena runs with a session keyring (SSH logins, services, containers), every
  bot would share it, and keys outlive the process that added them.
* ``memfd_create``: memory on no size-bounded file system and in no
  process's resident set, so neither the data limit nor the watchdog sees it.
* ``sched_setaffinity``: a match plays on a CPU of its own
  (``affinity.py``); a bot that moved to another CPU would take it from
  the match playing there, in the middle of another bot's timed decision.

Each is refused with EPERM (the program sees a failed call, not a kill).  The
filter is compiled by libseccomp (the ``pyseccomp`` binding) once per
process; where libseccomp cannot be loaded there is no filter, and
``available()`` says so.
"""

from __future__ import annotations

import errno
import functools
import os

DENIED_CALLS = ("flock", "inotify_init", "inotify_init1", "fanotify_init",
                "add_key", "keyctl", "request_key", "memfd_create", "sched_setaffinity")
# fcntl commands that take, test or drop a lock (F_GETLK, F_SETLK, F_SETLKW
# and their open-file-description forms); other fcntl calls stay allowed.
LOCK_COMMANDS = (5, 6, 7, 36, 37, 38)


@functools.cache
def program() -> bytes | None:
    """The compiled filter (BPF), or None where libseccomp is not available."""
    try:
        import pyseccomp as sc
    except (ImportError, RuntimeError, OSError):
        return None
    refuse = sc.ERRNO(errno.EPERM)
    flt = sc.SyscallFilter(defaction=sc.ALLOW)
    for call in DENIED_CALLS:
        flt.add_rule(refuse, call)
    for command in LOCK_COMMANDS:
        flt.add_rule(refuse, "fcntl", sc.Arg(1, sc.EQ, command))
    read_end, write_end = os.pipe()
    try:
        with os.fdopen(write_end, "wb") as out:
            flt.export_bpf(out)
        chunks = []
        while chunk := os.read(read_end, 65536):
            chunks.append(chunk)
    finally:
        os.close(read_end)
    return b"".join(chunks)


def available() -> bool:
    return program() is not None
