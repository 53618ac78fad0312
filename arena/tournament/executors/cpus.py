"""How many matches run at once when the tournament says "auto": a question for the
machine (the CPUs this process may use), asked by the run's set-up, not by the
configuration, which is the file's values alone."""

from __future__ import annotations

import os

__all__ = ["job_count", "usable_cpus"]


def usable_cpus() -> int:
    """The CPUs this process may run on (its affinity mask), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def job_count(jobs: int | None) -> int:
    """Parallel matches: ``jobs`` (a file's ``jobs:`` or ``--jobs``), or the usable CPUs for "auto" (None)."""
    return jobs if jobs is not None else usable_cpus()
