"""Executors: where ``run_match`` runs.

A match is a plain function, ``run_match(MatchSpec) -> MatchResult``.  An
executor takes specs and yields results as matches finish (completion order;
callers that need schedule order sort by it).  ``SerialExecutor`` runs in
this process; ``ProcessExecutor`` runs ``jobs`` worker processes.  A
distributed executor would implement the same two methods.

Each worker keeps a ``BotPool`` so a bot program plays its consecutive
matches without being restarted.  Workers are our own processes rather than
``concurrent.futures`` ones so that an interrupted run can stop them
deliberately: the worker turns SIGINT/SIGTERM into KeyboardInterrupt, which
``run_match`` handles by killing its bots, and the worker then closes its
pool before exiting.  No bot outlives its worker.
"""

from __future__ import annotations

import ctypes
import multiprocessing as mp
import os
import queue
import signal
from typing import Any, Iterable, Iterator, Protocol

from ..match import BotPool, MatchResult, MatchSpec, run_match

PR_SET_PDEATHSIG = 1


class Executor(Protocol):
    def run(self, specs: Iterable[MatchSpec]) -> Iterator[MatchResult]: ...

    def close(self) -> None: ...


class SerialExecutor:
    """Runs matches one after another in this process, with one bot pool."""

    def __init__(self) -> None:
        self.pool = BotPool()

    def run(self, specs: Iterable[MatchSpec]) -> Iterator[MatchResult]:
        for spec in specs:
            yield run_match(spec, self.pool)

    def close(self) -> None:
        self.pool.close()


class WorkerError(RuntimeError):
    """A worker process failed outside a match (a bug, not a bot fault)."""


def _interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


def _die_with_parent() -> None:
    """Ask Linux to SIGTERM this worker when the arena dies, even by SIGKILL,
    so that the worker still kills its bots (set here, in the worker itself,
    because a preexec_fn would force the slow fork path)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    except (OSError, AttributeError):
        pass  # not Linux: the parent check in the task loop still applies


def _worker(tasks: "mp.Queue[Any]", results: "mp.Queue[Any]", parent: int) -> None:
    signal.signal(signal.SIGTERM, _interrupt)
    _die_with_parent()
    pool = BotPool()
    try:
        while True:
            try:
                spec = tasks.get(timeout=1.0)
            except queue.Empty:
                if os.getppid() != parent:
                    break  # the arena is gone
                continue
            if spec is None:
                break
            try:
                results.put(("ok", run_match(spec, pool)))
            except KeyboardInterrupt:
                raise
            except Exception as err:  # noqa: BLE001 - reported to the parent as one line
                results.put(("error", f"match {spec.match_id}: {type(err).__name__}: {err}"))
    except KeyboardInterrupt:
        pass
    finally:
        # A second Ctrl-C, or the parent's SIGTERM after it, must not cut the
        # clean-up short: closing the pool is what kills this worker's bots.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        pool.close()


class ProcessExecutor:
    """Runs matches in ``jobs`` worker processes."""

    def __init__(self, jobs: int) -> None:
        self.jobs = max(1, jobs)
        ctx = mp.get_context("spawn")  # no inherited threads or bot pipes
        self.tasks: mp.Queue[Any] = ctx.Queue()
        self.results: mp.Queue[Any] = ctx.Queue()
        self.workers = [
            ctx.Process(target=_worker, args=(self.tasks, self.results, os.getpid()), daemon=False)
            for _ in range(self.jobs)
        ]
        for w in self.workers:
            w.start()

    def run(self, specs: Iterable[MatchSpec]) -> Iterator[MatchResult]:
        pending = 0
        for spec in specs:
            self.tasks.put(spec)
            pending += 1
        while pending:
            try:
                status, payload = self.results.get(timeout=1.0)
            except queue.Empty:
                if not any(w.is_alive() for w in self.workers):
                    raise WorkerError("all worker processes died") from None
                continue
            pending -= 1
            if status == "error":
                raise WorkerError(payload)
            yield payload

    def close(self) -> None:
        for _ in self.workers:
            self.tasks.put(None)
        for w in self.workers:
            w.join(timeout=10)
        self._stop_workers()

    def abort(self) -> None:
        """Interrupt running matches (their bots are killed) and stop workers."""
        for w in self.workers:
            if w.is_alive() and w.pid is not None:
                try:
                    os.kill(w.pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
        for w in self.workers:
            w.join(timeout=10)
        self._stop_workers()

    def _stop_workers(self) -> None:
        for w in self.workers:
            if w.is_alive():
                w.kill()
                w.join(timeout=5)
        self.tasks.cancel_join_thread()
        self.results.cancel_join_thread()


def make_executor(jobs: int) -> SerialExecutor | ProcessExecutor:
    return SerialExecutor() if jobs <= 1 else ProcessExecutor(jobs)
