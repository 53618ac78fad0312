"""Work on each of many stored matches, shared among worker processes.

``arena report`` writes a replay per match, and ``arena verify`` replays
every match again: Python work, independent from match to match, which
threads would run one at a time.  So worker processes do it, each with its
own read-only connection to the results, and the results come back in the
order of the items, whatever the workers' speed, so that the output is the
same on one core as on many.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Executor, ProcessPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

from .database import ResultStore

__all__ = ["MIN_PER_WORKER", "CHUNK", "Results", "in_workers", "usable_cpus"]

# Below this many items per worker, starting the workers (each imports what
# the work needs: the engine) costs more than it saves.
MIN_PER_WORKER = 16
CHUNK = 4               # items per task sent to a worker

Item = TypeVar("Item")
Result = TypeVar("Result")

_store: ResultStore | None = None      # a worker's own connection, opened once


def usable_cpus() -> int:
    """The CPUs this process may run on (its affinity mask), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def _open_store(db: str) -> None:
    global _store
    _store = ResultStore(Path(db), readonly=True)


def _call(job: tuple[Callable[[Any, Any], Any], Any]) -> Any:
    """In a worker: one item, with the worker's own connection."""
    work, item = job
    return work(_store, item)


class Results(Iterator[Result]):
    """The results of ``in_workers``, in the order of its items.  ``close``
    stops the workers: for a caller that stops reading them (an error of its
    own), so that no worker is left working for nobody."""

    def __init__(self, results: Iterator[Result], executor: Executor | None = None) -> None:
        self._results, self._executor = results, executor

    def __next__(self) -> Result:
        try:
            return next(self._results)
        except BaseException:        # the end (StopIteration) or a worker's error: the pool is done
            self.close()
            raise

    def close(self) -> None:
        if self._executor is not None:
            self._executor.shutdown(wait=True, cancel_futures=True)
            self._executor = None


def in_workers(store: ResultStore, work: Callable[[Any, Item], Result], items: Sequence[Item], workers: int, *,
               pool: Callable[..., Executor] | None = None, min_per_worker: int | None = None,
               chunk: int | None = None) -> Results[Result]:
    """``work(store, item)`` of each item, in the order of ``items``: by up to
    ``workers`` processes (each with a read-only store of its own; ``work``
    a module-level function, as it is sent to them by name), or here with
    ``store`` when the items are too few to share.  The workers start at
    once, so the caller can do other work meanwhile; here, each item is
    worked on as the results reach it.  ``pool``: the executor class; it and
    the sizes default to this module's, read at the call (so that tests can
    count the pools and start them for a few items)."""
    workers = min(workers, len(items) // (MIN_PER_WORKER if min_per_worker is None else min_per_worker))
    if workers <= 1:
        return Results(work(store, item) for item in items)
    # spawn: a fresh interpreter, not a fork of this one and of its open database.
    executor = (pool or ProcessPoolExecutor)(workers, mp_context=multiprocessing.get_context("spawn"),
                                             initializer=_open_store, initargs=(str(store.path),))
    try:
        return Results(executor.map(_call, [(work, item) for item in items], chunksize=chunk or CHUNK), executor)
    except BaseException:
        executor.shutdown(cancel_futures=True)
        raise
