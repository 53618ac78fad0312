"""The seccomp filter of sandboxed bots: kernel calls that would let two bots
talk, or hold memory no limit sees, although they share no file they can
write, no network and no process.

* File locks (``flock``, and ``fcntl`` lock commands): every bot can open the
  same read-only files (the interpreter, say); a lock taken by one is seen by
  the others (``F_GETLK``, or a ``flock`` that would block), which is enough
  to pass a hand bit by bit.  But programs take locks without being asked
  (the JVM on its perf-data file, SQLite on its database), and a refused one
  can make them print a warning on stdout, before 'ready'.  So the calls
  that take or drop a lock (``flock``, ``F_SETLK``, ``F_SETLKW`` and their
  open-file-description forms) succeed without doing anything: the filter
  answers "error 0", which the kernel returns as 0 without making the call.
  A bot's own processes cannot exclude each other with locks either; a
  program that needs that is rare among bots.  The calls that test for a
  lock (``F_GETLK``, ``F_OFD_GETLK``) are left to the kernel: no sandboxed
  process holds a lock any more, so they never see another bot's, and they
  answer truthfully "no conflicting lock" (faking their success would leave
  the caller's struct as it gave it, saying a lock of the very kind it asked
  about is held, and a refusal breaks SQLite's check for a hot journal).
  They do see locks of processes outside any sandbox (a bot run with
  ``sandbox: none``), a view of the host, not of the other sandboxed bots.
* ``inotify`` / ``fanotify``, and their ``fcntl`` forms: a directory
  notification (``F_NOTIFY``) and a lease (``F_SETLEASE``, on a file the bot
  owns, as every system file is when the arena runs as root): one bot
  opening or reading a shared file is an event another can watch (a lease
  also makes the other's open fail).
* The kernel keyring (``add_key``, ``keyctl``, ``request_key``): where the
  arena runs with a session keyring (SSH logins, services, containers), every
  bot would share it, and keys outlive the process that added them.
* ``memfd_create``: memory on no size-bounded file system and in no
  process's resident set, so neither the data limit nor the watchdog sees it.
* System V shared memory and message queues (``shmget``, ``shmat``,
  ``msgget``): the sandbox's IPC namespace is its own, but its ``shmmax``
  and ``shmall`` are effectively unlimited, and a segment is in no
  process's resident set (a bot limited to 256 MB held 1 GiB); queues hold
  kernel memory (up to 32,000 of 16 KiB).  Nothing the shipped runtimes
  need: Python's and node's shared memory is POSIX (``/dev/shm``, bounded),
  and the JVM asks for System V segments only with ``-XX:+UseLargePages``
  (then it warns and goes on without).  Semaphores hold no memory to speak
  of and are left alone.
* ``sched_setaffinity``: a match plays on a CPU of its own
  (``affinity.py``); a bot that moved to another CPU would take it from
  the match playing there, in the middle of another bot's timed decision.

The others are refused with EPERM (the program sees a failed call, not a
kill).  fcntl's command is compared in its low 32 bits, the only ones the
kernel reads: a bot setting the high ones must not get past.  The
filter is compiled by libseccomp (the ``pyseccomp`` binding) once per
process; where libseccomp cannot be loaded there is no filter, and
``available()`` says so.
"""

from __future__ import annotations

import errno
import functools
import os

DENIED_CALLS = ("inotify_init", "inotify_init1", "fanotify_init",
                "add_key", "keyctl", "request_key", "memfd_create", "sched_setaffinity",
                "shmget", "shmat", "msgget")
# Calls that succeed without doing anything: taking or dropping a file lock.
PRETENDED_CALLS = ("flock",)
# fcntl commands that take or drop a lock (F_SETLK, F_SETLKW, F_OFD_SETLK,
# F_OFD_SETLKW); other fcntl calls, F_GETLK and F_OFD_GETLK among them, are allowed.
LOCK_COMMANDS = (6, 7, 37, 38)
# fcntl commands refused: F_SETLEASE, F_NOTIFY.
REFUSED_COMMANDS = (1024, 1026)
_COMMAND_BITS = 0xFFFF_FFFF      # fcntl's cmd is an unsigned int: the kernel ignores the rest


@functools.cache
def program() -> bytes | None:
    """The compiled filter (BPF), or None where libseccomp is not available."""
    try:
        # lazy: every command loads this module; pyseccomp (ctypes, libseccomp) adds 50-90 ms (-X importtime)
        import pyseccomp as sc
    except (ImportError, RuntimeError, OSError):
        return None
    refuse, pretend = sc.ERRNO(errno.EPERM), sc.ERRNO(0)
    flt = sc.SyscallFilter(defaction=sc.ALLOW)
    for call in DENIED_CALLS:
        flt.add_rule(refuse, call)
    for call in PRETENDED_CALLS:
        flt.add_rule(pretend, call)
    for command in LOCK_COMMANDS:
        flt.add_rule(pretend, "fcntl", sc.Arg(1, sc.MASKED_EQ, _COMMAND_BITS, command))
    for command in REFUSED_COMMANDS:
        flt.add_rule(refuse, "fcntl", sc.Arg(1, sc.MASKED_EQ, _COMMAND_BITS, command))
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
