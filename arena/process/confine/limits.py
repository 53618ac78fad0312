"""Resource limits and the group memory watchdog (the processes it reads: ``procfs``).

How limits are applied
----------------------
``resource.prlimit(pid, ...)`` on the bot right after ``Popen`` returns.  No
``preexec_fn`` (it forces CPython's slow fork path and is unsafe with
threads), and no ``prlimit(1)`` wrapper (one more exec per spawn, and a
missing bot would then show up as a prlimit error instead of a clean
``BotStartupError``).  The cost is a window of a few microseconds after exec
in which the bot runs unlimited; lowering RLIMIT_DATA below what is already
allocated is allowed and makes the next allocation fail, and RLIMIT_CPU
counts CPU time from process start, so the window only matters for a bot
that forks within it.

Memory: measured on Linux 6.x, node 20, CPython 3.11 (``measure`` in the report):

* RLIMIT_AS breaks V8-style runtimes, which reserve large virtual ranges
  (``node -e 1`` aborts under 512 MB of address space).
* RLIMIT_DATA (since Linux 4.7 it counts brk plus private writable mappings,
  not PROT_NONE reservations nor code): ``node -e 1`` starts even at 128 MB,
  and a node / Python / C program allocating without end is stopped within
  ~0.1-0.5 s at the limit (node aborts with SIGABRT, Python raises
  MemoryError and exits 1, C gets malloc() == NULL).
* It is per process, so a bot that forks can use N x the limit.  A watchdog
  thread (one for all bots) therefore sums the resident memory of each bot's
  processes every 0.25 s and SIGKILLs them above ``memory_mb`` +
  ``GROUP_SLACK_MB``.  A sandboxed bot's processes are bubblewrap's
  descendants, read from /proc/PID/task/TID/children: a few files per bot,
  whatever else runs on the machine.  An unsandboxed bot's are its own
  tree, plus the orphans seen in it before (by pid and start time); a pass
  over every /proc/*/stat (50 ms a scan with 1,000 processes) is left only
  for a kernel without children lists.  Where the bot has a cgroup of its
  own (``cgroups``) the kernel keeps the memory and task limits instead,
  and the watchdog reads its CPU counter and its kills at the limit.  The
  slack keeps a single-process bot on the deterministic RLIMIT_DATA path (RSS
  also counts code and shared libraries, which RLIMIT_DATA does not).  Forked
  children share pages copy-on-write, so the cheap RSS sum is confirmed with
  PSS from /proc/PID/smaps_rollup before killing.

Outside the sandbox a bot can escape its process group (and this sum) with
setsid(); in the bubblewrap sandbox every process of the bot's PID namespace
is counted, whatever its group.
"""

from __future__ import annotations

import logging
import os
import resource
import signal
import threading
import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from .procfs import (
    CHILDREN_LISTS,
    SCHEDSTAT,
    ProcInfo,
    iter_processes,
    kill_group,
    pid_namespace,
    process_tree,
    pss_bytes,
    read_stat,
    thread_times,
)
from .spec import BotSpec, MiB
from .turns import TurnClock

if TYPE_CHECKING:
    from .cgroups import BotCgroup

LOG = logging.getLogger("arena.process.limits")     # its name before it moved to confine: log files keep it

GROUP_SLACK_MB = 64
WATCHDOG_INTERVAL = 0.25
_CLK_TCK = os.sysconf("SC_CLK_TCK")


def _lowered(pid: int, which: int, soft: int, hard: int) -> tuple[int, int]:
    """Never ask for more than the current hard limit (that would need privileges)."""
    _cur_soft, cur_hard = resource.prlimit(pid, which)
    if cur_hard != resource.RLIM_INFINITY:
        hard = min(hard, cur_hard)
        soft = min(soft, hard)
    return soft, hard


def apply_limits(pid: int, spec: BotSpec) -> None:
    """Apply the spec's rlimits to a freshly spawned process (see module doc).

    Raises ``OSError`` (``ProcessLookupError`` if the process already exited).
    """
    resource.prlimit(pid, resource.RLIMIT_CORE, (0, 0))      # no core files in bot dirs
    if spec.memory_mb is not None:
        size = spec.memory_mb * MiB
        resource.prlimit(pid, resource.RLIMIT_DATA, _lowered(pid, resource.RLIMIT_DATA, size, size))
    if spec.cpu_seconds is not None:
        # soft: SIGXCPU (fatal by default); hard one second later: SIGKILL.
        soft = int(spec.cpu_seconds)
        resource.prlimit(pid, resource.RLIMIT_CPU,
                         _lowered(pid, resource.RLIMIT_CPU, soft, soft + 1))


def _private_bytes(root_pid: int, pidns: int | None, paths: Iterable[str]) -> int:
    """What a sandboxed bot keeps in its private file systems in memory
    (``paths``, as the sandbox's first process ``root_pid`` sees them): files
    written there are in no process's resident set.  0 once that process is
    gone (a pid of another namespace: never the host's own /tmp)."""
    if pidns is None or pid_namespace(root_pid) != pidns:
        return 0
    used = 0
    for path in paths:
        try:
            st = os.statvfs(f"/proc/{root_pid}/root{path}")
        except OSError:
            continue
        used += (st.f_blocks - st.f_bfree) * st.f_frsize
    return used


class _Watched:
    def __init__(self, name: str, limit: int | None, on_kill: Callable[[str], None],
                 pidns: int | None, max_processes: int | None,
                 clock: TurnClock | None = None,
                 on_caught: Callable[[], Callable[[], None] | None] | None = None,
                 private: tuple[int, tuple[str, ...]] | None = None,
                 cgroup: BotCgroup | None = None) -> None:
        self.name, self.limit, self.on_kill, self.pidns = name, limit, on_kill, pidns
        self.max_processes = max_processes
        self.clock = clock
        self.on_caught = on_caught        # a weak reference: what to call while it is caught
        self.private = private            # (sandbox's first pid, its file systems in memory)
        self.cgroup = cgroup              # the kernel keeps its limits (``cgroups``)
        self.oom_seen = 0                 # kills at the cgroup's memory limit already reported
        self.known: dict[int, int] = {}   # unsandboxed: pid -> start time of each process seen

    def private_bytes(self) -> int:
        if self.private is None:
            return 0
        root_pid, paths = self.private
        return _private_bytes(root_pid, self.pidns, paths)


class MemoryWatchdog:
    """One daemon thread for all bots with a memory limit or a process limit.

    ``unregister`` holds the lock the scan runs under, so once it returns the
    watchdog will never signal that group again: callers unregister *before*
    reaping the group leader, which keeps the pgid from being reused while it
    may still be signalled.

    What a scan reads is the bot's own: its cgroup's files (``cgroups``), or
    else its process tree (children lists), never every process of the host
    (only on a kernel without children lists and without cgroups).
    """

    def __init__(self, interval: float = WATCHDOG_INTERVAL) -> None:
        self.interval = interval
        self._lock = threading.Lock()
        self._groups: dict[int, _Watched] = {}
        self._thread: threading.Thread | None = None
        self._quit = threading.Event()      # the running thread's: set, it ends

    def register(self, pgid: int, name: str, memory_mb: int | None,
                 on_kill: Callable[[str], None], pidns: int | None = None,
                 max_processes: int | None = None, clock: TurnClock | None = None,
                 on_caught: Callable[[], Callable[[], None] | None] | None = None,
                 private: tuple[int, tuple[str, ...]] | None = None,
                 cgroup: BotCgroup | None = None) -> None:
        """Watch group ``pgid``; with ``pidns`` (a sandboxed bot), every process
        of that PID namespace counts too, ``setsid()`` children included, and
        with ``private`` (the sandbox's first pid, and its private file
        systems in memory: /tmp, /dev/shm, ...), what is written there.
        With ``cgroup`` the kernel keeps the memory and process limits: the
        watchdog reports a kill at the memory limit, and reads the CPU there.
        With ``clock``, the group's CPU time is held against the bot's turns
        (``turns``), and ``on_caught`` (a weak reference to a callable) is
        called after each scan that finds the bot caught."""
        limit = None if memory_mb is None else (memory_mb + GROUP_SLACK_MB) * MiB
        with self._lock:
            self._groups[pgid] = _Watched(name, limit, on_kill, pidns, max_processes, clock, on_caught,
                                          private, cgroup)
            if self._thread is None:
                self._quit = threading.Event()
                self._thread = threading.Thread(target=self._run, args=(self._quit,),
                                                name="bot-memory-watchdog", daemon=True)
                self._thread.start()

    def relabel(self, pgid: int, name: str) -> None:
        """What the warnings about group ``pgid`` call it from now on."""
        with self._lock:
            watched = self._groups.get(pgid)
            if watched is not None:
                watched.name = name

    def unregister(self, pgid: int) -> None:
        """Stop watching ``pgid``; the last one gone, the thread ends before
        this returns: a process that forks its match workers next must have
        no other thread (executors/forked.py), and a thread left to notice at
        its next scan was still there after the start-up probe."""
        with self._lock:
            self._groups.pop(pgid, None)
            thread = self._thread
            if self._groups or thread is None:
                return
            self._thread = None
            self._quit.set()
        if thread is not threading.current_thread():
            thread.join()

    def _run(self, quit_: threading.Event) -> None:
        while not quit_.wait(self.interval):
            with self._lock:
                if quit_.is_set():
                    return
                if not self._groups:        # its bots were killed in its last scan
                    self._thread = None
                    return
                self.check()

    def check(self) -> None:
        """One scan (the lock must be held)."""
        members: dict[int, list[ProcInfo]] = {}
        scanned: dict[int, _Watched] = {}
        reasons: dict[int, str] = {}
        for pgid, w in self._groups.items():
            if w.cgroup is not None:
                reason = _cgroup_check(w)
                if reason is not None:
                    reasons[pgid] = reason
            elif CHILDREN_LISTS:
                # Sandboxed, the group's leader is bubblewrap: its tree is the
                # namespace, plus itself.  Unsandboxed, the bot's own tree.
                tree = process_tree(pgid) if w.pidns is not None else _own_tree(pgid, w)
                _held_to_turns(w, tree)         # zombies too: their CPU is not yet their parent's
                members[pgid] = [p for p in tree if p.state not in "ZX"]
            else:
                scanned[pgid] = w
        if scanned:
            self._scan(scanned, members)
            for pgid, w in scanned.items():
                _held_to_turns(w, members.get(pgid, []))
        for pgid, procs in members.items():
            reason = _over_limit(self._groups[pgid], procs)
            if reason is not None:
                reasons[pgid] = reason
        for pgid, reason in reasons.items():
            watched = self._groups.pop(pgid)
            LOG.warning("%s: %s; killing the group", watched.name, reason)
            watched.on_kill(reason)
            kill_group(pgid, signal.SIGKILL)

    @staticmethod
    def _scan(groups: dict[int, _Watched], members: dict[int, list[ProcInfo]]) -> None:
        """The members of ``groups`` found by one pass over /proc: by process
        group, and by PID namespace for a sandboxed group.  Only on a kernel
        with neither children lists nor cgroups: its cost grows with the host."""
        by_namespace = {w.pidns: pgid for pgid, w in groups.items() if w.pidns is not None}
        for info in iter_processes():
            if info.state in "ZX":
                continue
            pgid: int | None = info.pgid
            if pgid not in groups:
                namespace = pid_namespace(info.pid) if by_namespace else None
                pgid = by_namespace.get(namespace) if namespace is not None else None
            if pgid is not None:
                members.setdefault(pgid, []).append(info)


def _own_tree(pgid: int, watched: _Watched) -> list[ProcInfo]:
    """An unsandboxed bot's processes: its tree from its first process, and
    each process seen in it before that is still alive in the group (an
    orphan is adopted by init and leaves the tree, not the group).  Only a
    process forked and orphaned within one scan is missed; ``setsid()``
    children stay in the tree while their parent lives."""
    tree = process_tree(pgid)
    seen = {p.pid for p in tree}
    for pid, started in list(watched.known.items()):
        if pid in seen:
            continue
        info = read_stat(str(pid))
        if info is None or info.started != started or info.state in "ZX":
            del watched.known[pid]
        else:
            tree.append(info)
    for info in tree:
        watched.known.setdefault(info.pid, info.started)
    return tree


def _cgroup_check(watched: _Watched) -> str | None:
    """A bot with a cgroup: its CPU held against its turns, and why it must
    be killed (its memory limit was reached), or None."""
    group = watched.cgroup
    assert group is not None
    clock = watched.clock
    if clock is not None:
        threads = thread_times(group.members()) if SCHEDSTAT else None
        _observe(watched, clock, group.cpu_seconds(), threads)
    kills = group.oom_kills() if watched.limit is not None else 0
    if kills <= watched.oom_seen:
        return None
    watched.oom_seen = kills
    return cgroup_memory_reason(watched.limit)


def cgroup_memory_reason(limit: int | None) -> str:
    """What a kill at the cgroup's memory limit is called (by the watchdog, and at the bot's exit)."""
    size = f" of {limit // MiB} MB" if limit is not None else ""
    return f"memory limit exceeded: the kernel stopped the bot at its limit{size} (its cgroup)"


def _held_to_turns(watched: _Watched, procs: list[ProcInfo]) -> None:
    """Hold the bot's CPU time against its turns (``turns.TurnClock``)."""
    clock = watched.clock
    if clock is None or not procs:
        return
    threads = thread_times(p.pid for p in procs) if SCHEDSTAT else None
    _observe(watched, clock, sum(p.cpu_ticks for p in procs) / _CLK_TCK, threads)


def _observe(watched: _Watched, clock: TurnClock, cpu: float,
             threads: dict[int, tuple[int, int, int]] | None) -> None:
    first = not clock.caught
    excess = clock.observe(cpu, time.monotonic(), threads)
    if excess is not None and first:
        # Information, not a warning: no fault, and a JVM's background
        # compiler can do it without meaning to; the bot just loses the habit.
        LOG.info("%s: used %.2f s of CPU between its turns (measured); from now on it is "
                 "stopped between its turns", watched.name, excess)
    if clock.caught and watched.on_caught is not None:
        act = watched.on_caught()
        if act is not None:
            act()


def tree_cpu_seconds(root: int) -> float:
    """The CPU seconds of ``root``'s tree, to the ns for live threads
    (schedstat) plus what its processes reaped (in ticks): the turn guard's
    counter where the bot has no cgroup.  A thread that ended takes its CPU
    out of the sum (its process's ticks keep it, coarsely): the measure may
    fall short, never over."""
    procs = process_tree(root)
    total = sum(p.reaped_ticks for p in procs) / _CLK_TCK
    if SCHEDSTAT:
        total += sum(ran for ran, _w, _s in thread_times(p.pid for p in procs).values()) / 1e9
    else:
        total += sum(p.cpu_ticks - p.reaped_ticks for p in procs) / _CLK_TCK
    return total


def _over_limit(watched: _Watched, procs: list[ProcInfo]) -> str | None:
    """Why a bot's processes must be killed, or None (no cgroup: the watchdog keeps the limits)."""
    # A sandboxed bot's group also holds bwrap and the sandbox's init, one thread each.
    count = sum(p.threads for p in procs) - (2 if watched.pidns is not None else 0)
    if watched.max_processes is not None and count > watched.max_processes:
        return (f"process limit exceeded: {count} processes and threads, "
                f"limit {watched.max_processes}")
    if watched.limit is None:
        return None
    # Files in its /tmp, /dev/shm, ... are memory too: each is bounded, but
    # not their sum with its processes' (four times the limit, else).
    held = watched.private_bytes()
    rss = sum(p.rss_bytes for p in procs) + held
    if rss <= watched.limit:
        return None
    pss = sum(pss_bytes(p.pid) or p.rss_bytes for p in procs) + held
    if pss <= watched.limit:
        return None
    files = f" ({held // MiB} MB of it files in its /tmp, /dev/shm, ...)" if held >= MiB else ""
    return (f"memory limit exceeded: process group uses {pss // MiB} MB in "
            f"{len(procs)} process(es){files}, limit {watched.limit // MiB} MB")


WATCHDOG = MemoryWatchdog()
