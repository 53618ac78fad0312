"""The replay viewers of a report, written by several processes.

A replay replays its match through the engine (every decision's request is
encoded again, every table state drawn), so a report spends most of its
time on them: about four fifths of ``arena report`` on a 660-match
tournament.  They are independent of each other, so worker processes write
them, each with its own read-only connection to the results; the order of
the files written and of the warnings is the schedule's whatever the
workers' speed.  Processes, not threads: the work is Python code, which
threads would run one at a time.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

__all__ = ["usable_cpus", "write_replays"]

# Below this many replays per worker, starting the workers (each imports
# the engine) costs more than it saves.
MIN_PER_WORKER = 16
CHUNK = 4               # replays per task sent to a worker

_store: Any = None      # a worker's own connection, opened once


def usable_cpus() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def _open_store(db: str) -> None:
    global _store
    from ..tournament.store import ResultStore
    _store = ResultStore(Path(db), readonly=True)


def _attempt(store: Any, match_id: str, path: Path, back: str,
             cache: dict[str, dict[str, Any]] | None = None) -> str | None:
    """Write one replay; the warning if it cannot be made."""
    from .build import ReportError, write_replay_of_store

    try:
        write_replay_of_store(store, match_id, path, back=back, cache=cache)
    except ReportError as exc:
        return str(exc)
    return None


def _write_one(job: tuple[str, str, str]) -> str | None:
    """In a worker: one replay, with the worker's own connection."""
    match_id, path, back = job
    return _attempt(_store, match_id, Path(path), back)


def write_replays(store: Any, jobs: Sequence[tuple[str, Path]], *, back: str, workers: int,
                  cache: dict[str, dict[str, Any]],
                  progress: Callable[[str], None] | None) -> list[Path]:
    """Write each (match id, path) of ``jobs``; the paths written, in
    ``jobs``' order.  A replay that cannot be made is a warning to
    ``progress``, not an error: one bad record loses its replay, not the report.
    Those already in ``cache`` (made for the report's sections) are written
    here, the rest by up to ``workers`` processes."""
    warnings: dict[str, str | None] = {}
    rest: list[tuple[str, str, str]] = []
    for match_id, path in jobs:
        if match_id in cache:
            warnings[match_id] = _attempt(store, match_id, path, back, cache)
        else:
            rest.append((match_id, str(path), back))
    workers = min(workers, len(rest) // MIN_PER_WORKER)
    if workers > 1:
        # spawn: a fresh interpreter, not a fork of this one and of its open database.
        with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"),
                                 initializer=_open_store, initargs=(str(store.path),)) as pool:
            for job, warning in zip(rest, pool.map(_write_one, rest, chunksize=CHUNK)):
                warnings[job[0]] = warning
    else:
        for match_id, path_text, _ in rest:
            warnings[match_id] = _attempt(store, match_id, Path(path_text), back)
    written = []
    for match_id, path in jobs:
        warning = warnings[match_id]
        if warning is None:
            written.append(path)
        elif progress is not None:
            progress(f"warning: {warning}")
    return written
