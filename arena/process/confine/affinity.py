"""CPU affinity: each match's processes on a CPU of their own.

A match is a strict relay: the arena writes a request, the bot answers, the
arena applies it and writes the next one.  Nothing in it runs in parallel,
yet left to the scheduler the arena and its bots land on different CPUs,
and every decision then costs two cross-CPU wake-ups (an inter-processor
interrupt each, and caches that are cold on arrival).  Kept on one CPU, the
same match costs the arena about 30 % less CPU and its bots about 15 % less
on a quiet 2-core machine (``benchmarks/affinity.py``), and matches played in
parallel stop taking CPU from each other in the middle of a decision.

``plan(jobs)`` gives each of ``jobs`` matches played at once a CPU of the
ones this process may use, or None for all when there are fewer CPUs than
jobs (then the scheduler balances better than a fixed split could).  A
process pins itself with ``pin``; the bots it starts afterwards inherit the
CPU (through bubblewrap too).  Linux only; elsewhere nothing is pinned.
"""

from __future__ import annotations

import logging
import os

LOG = logging.getLogger("arena.process.affinity")     # its name before it moved to confine: log files keep it


def usable_cpus() -> tuple[int, ...]:
    """The CPUs this process may run on (its affinity mask, which a container
    or ``taskset`` may have narrowed); empty where that cannot be known."""
    try:
        return tuple(sorted(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return ()


def plan(jobs: int) -> list[int | None]:
    """The CPU for each of ``jobs`` parallel matches, or None each: not
    pinned when there are fewer usable CPUs than jobs, or just one."""
    cpus = usable_cpus()
    if jobs < 1 or len(cpus) < 2 or jobs > len(cpus):
        return [None] * max(jobs, 0)
    return list(cpus[:jobs])


def pin(cpu: int | None) -> frozenset[int] | None:
    """Run the calling thread, and the processes and threads it starts from
    now on, on ``cpu`` alone; returns the mask it had (for ``unpin``), or
    None if nothing was changed (``cpu`` None, or the system refused)."""
    if cpu is None:
        return None
    try:
        before = frozenset(os.sched_getaffinity(0))
        os.sched_setaffinity(0, {cpu})
    except (AttributeError, OSError) as exc:
        LOG.debug("cannot pin to CPU %s: %s", cpu, exc)
        return None
    return before


def unpin(before: frozenset[int] | None) -> None:
    """Restore the mask ``pin`` returned."""
    if before is None:
        return
    try:
        os.sched_setaffinity(0, before)
    except OSError as exc:
        LOG.debug("cannot restore the CPU mask: %s", exc)
