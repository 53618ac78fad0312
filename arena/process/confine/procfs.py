"""A bot's processes as /proc shows them, and signals to its process group.

Read by the memory watchdog (``limits``), which sums them, and by the turn
guard (``turns``), which stops them between turns: a module below both, so
neither imports the other for it.  Linux only.
"""

from __future__ import annotations

import logging
import os
import signal
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

LOG = logging.getLogger("arena.process.procfs")     # its name before it moved to confine: log files keep it

_PAGE = os.sysconf("SC_PAGE_SIZE")
# Children lists need CONFIG_PROC_CHILDREN (Debian, Ubuntu, Fedora... have it).
CHILDREN_LISTS = os.path.exists(f"/proc/self/task/{os.getpid()}/children")
# Per-thread CPU and run-queue wait in ns need CONFIG_SCHED_INFO (where it is
# off the files read "0 0 0": no wait, as without them).
SCHEDSTAT = os.path.exists(f"/proc/self/task/{os.getpid()}/schedstat")


@dataclass(frozen=True)
class ProcInfo:
    pid: int
    state: str
    pgid: int
    rss_bytes: int
    cpu_ticks: int      # user and system time, its own and its reaped children's
    threads: int = 1    # its tasks: each counts toward the ``processes`` limit
    started: int = 0    # start time in ticks since boot: with the pid, who it is
    reaped_ticks: int = 0   # the part of ``cpu_ticks`` its reaped children used


def read_stat(pid: str) -> ProcInfo | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            data = f.read()
    except OSError:            # vanished meanwhile, or not permitted
        return None
    # comm (field 2) may contain spaces and parentheses: split after the last ')'.
    fields = data[data.rfind(b")") + 2:].split()
    try:
        return ProcInfo(int(pid), fields[0].decode(), int(fields[2]), int(fields[21]) * _PAGE,
                        int(fields[11]) + int(fields[12]) + int(fields[13]) + int(fields[14]),
                        int(fields[17]), int(fields[19]), int(fields[13]) + int(fields[14]))
    except (IndexError, ValueError):
        return None


def iter_processes() -> Iterator[ProcInfo]:
    for name in os.listdir("/proc"):
        if name.isdigit():
            info = read_stat(name)
            if info is not None:
                yield info


def process_tree(root: int) -> list[ProcInfo]:
    """``root`` and its live descendants (needs ``CHILDREN_LISTS``).  In a PID
    namespace of its own that is every process of the namespace: an orphan
    is adopted by the namespace's init, so a ``setsid()`` child stays in the
    tree.  A process forked while the lists are read shows up next time."""
    found: list[ProcInfo] = []
    todo = [root]
    while todo:
        pid = todo.pop()
        info = read_stat(str(pid))
        if info is None:
            continue                # gone meanwhile
        found.append(info)
        try:
            tids = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for tid in tids:            # any thread may be a parent
            try:
                with open(f"/proc/{pid}/task/{tid}/children", "rb") as f:
                    todo.extend(map(int, f.read().split()))
            except OSError:
                continue
    return found


def thread_times(pids: Iterable[int]) -> dict[int, tuple[int, int, int]]:
    """Per thread of the processes ``pids``: the CPU it has had and the time
    it has waited on a run queue for a CPU, in ns, and how many times it got
    a CPU (/proc/PID/task/TID/schedstat).  A thread gone meanwhile is left out."""
    found: dict[int, tuple[int, int, int]] = {}
    for pid in pids:
        try:
            tids = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for tid in tids:
            try:
                with open(f"/proc/{pid}/task/{tid}/schedstat", "rb") as f:
                    fields = f.read().split()
                found[int(tid)] = (int(fields[0]), int(fields[1]), int(fields[2]))
            except (OSError, ValueError, IndexError):
                continue
    return found


def group_members(pgid: int, *, include_zombies: bool = False) -> list[int]:
    """PIDs in process group ``pgid``.  Zombies are dead (they only wait to be
    reaped, by init for orphans) and are left out unless asked for."""
    return sorted(p.pid for p in iter_processes()
                  if p.pgid == pgid and (include_zombies or p.state not in "ZX"))


def group_exists(pgid: int) -> bool:
    """Whether group ``pgid`` has any process, zombies included: a signal 0
    to it, where ``group_members`` reads every process of the host."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:       # someone else's group: it exists
        return True
    return True


def kill_group(pgid: int, sig: int = signal.SIGKILL) -> bool:
    """Signal a whole process group; False if it no longer exists."""
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        return False
    except PermissionError:       # pgid reused by someone else's group: leave it alone
        LOG.warning("not permitted to signal process group %d", pgid)
        return False
    return True


def signal_member(pid: int, pgid: int, sig: int) -> bool:
    """Signal process ``pid`` if it is (still) in group ``pgid``.  Through a
    pidfd, so a pid that was reused meanwhile is never signalled."""
    try:
        fd = os.pidfd_open(pid)
    except OSError:
        return False
    try:
        info = read_stat(str(pid))
        if info is None or info.pgid != pgid:
            return False
        signal.pidfd_send_signal(fd, sig)
        return True
    except OSError:
        return False
    finally:
        os.close(fd)


def pss_bytes(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/smaps_rollup", "rb") as f:
            for line in f:
                if line.startswith(b"Pss:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def pid_namespace(pid: int) -> int | None:
    """The inode naming the PID namespace of ``pid`` (None if gone)."""
    try:
        return os.stat(f"/proc/{pid}/ns/pid").st_ino
    except OSError:
        return None
