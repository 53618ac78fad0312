"""The replay viewers of a report, written by several processes.

A replay replays its match through the engine (every decision's request is
encoded again, every table state drawn), so a report spends most of its
time on them: about four fifths of ``arena report`` on a 660-match
tournament.  They are independent of each other, so worker processes write
them, each with its own read-only connection to the results; the order of
the files written and of the warnings is the schedule's whatever the
workers' speed.  Processes, not threads: the work is Python code, which
threads would run one at a time.  Each sends back what the report's
sections read of its matches (``data.Digest``: decision times, the
requests of faulty decisions), so the report reads no record twice.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from ..tournament.results.database import ResultStore, StoreError
from ..tournament.results.parallel import in_workers, usable_cpus
from .data import Digest, replay_and_digest
from .files import ReportError, write_file
from .html import replay_page
from .replay import ReplayError

__all__ = ["usable_cpus", "write_replay_and_digest", "write_replays"]

# Below this many replays per worker, starting the workers (each imports
# the engine) costs more than it saves.
MIN_PER_WORKER = 16
CHUNK = 4               # replays per task sent to a worker


def write_replay_and_digest(store: ResultStore, match_id: str, path: Path, back: str) -> Digest | None:
    """The replay of ``match_id`` written to ``path``; what the report's sections read of it."""
    try:
        data, digest = replay_and_digest(store, match_id, back)
    except StoreError as err:
        raise ReportError(str(err)) from None
    except ReplayError as err:
        raise ReportError(f"{store.path}: match {match_id!r}: {err}") from None
    write_file(path, replay_page(data))
    return digest


def _attempt(store: Any, match_id: str, path: Path, back: str) -> tuple[str | None, Any]:
    """Write one replay; the warning if it cannot be made, else its ``Digest``."""
    try:
        return None, write_replay_and_digest(store, match_id, path, back)
    except ReportError as exc:
        return str(exc), None


def _write_one(store: Any, job: tuple[str, str, str]) -> tuple[str | None, Any]:
    """One replay (in a worker: with the worker's own connection)."""
    match_id, path, back = job
    return _attempt(store, match_id, Path(path), back)


def write_replays(store: Any, jobs: Sequence[tuple[str, Path]], *, back: str, workers: int,
                  progress: Callable[[str], None] | None, digests: dict[str, Any] | None = None) -> list[Path]:
    """Write each (match id, path) of ``jobs``; the paths written, in
    ``jobs``' order.  A replay that cannot be made is a warning to
    ``progress``, not an error: one bad record loses its replay, not the report.
    Written by up to ``workers`` processes; what the report's sections read
    of each match written (``data.Digest``) goes into ``digests``."""
    rest = [(match_id, str(path), back) for match_id, path in jobs]
    results = in_workers(store, _write_one, rest, workers, pool=ProcessPoolExecutor,
                         min_per_worker=MIN_PER_WORKER, chunk=CHUNK)
    written = []
    # Taken as they come, in order: held all at once, the digests of 20,000 matches took 2.9 GB.
    for (match_id, path), (warning, digest) in zip(jobs, results):
        if warning is None:
            written.append(path)
        elif progress is not None:
            progress(f"warning: {warning}")
        if digests is not None:
            digests[match_id] = digest if warning is None else None
    return written
