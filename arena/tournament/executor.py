"""Executors: where ``run_match`` runs.

A match is a plain function, ``run_match(MatchSpec) -> MatchResult``.  An
executor takes specs and yields outcomes as matches finish (completion order;
callers that need schedule order sort by it).  ``SerialExecutor`` runs in
this process; ``ProcessExecutor`` runs ``jobs`` worker processes.  A
distributed executor would implement the same methods.

An outcome is a ``MatchResult``, or a ``MatchFailure`` when the match raised
an arena-side exception (bot faults never raise: ``run_match`` turns them into
faults).  A failure ends that match only; the executor goes on with the
others, like cutechess-cli's ``-recover``.  A worker process that dies in a
match fails that match too, and a new worker takes its place.

Each worker keeps a ``BotPool`` so a bot program plays its consecutive
matches without being restarted.  Workers are our own processes rather than
``concurrent.futures`` ones so that an interrupted run can stop them
deliberately: the worker turns SIGINT/SIGTERM into KeyboardInterrupt, which
``run_match`` handles by killing its bots, and the worker then closes its
pool before exiting.  No bot outlives its worker.  Every worker has a task
queue of its own and holds one match at a time, so the parent always knows
which match a worker was playing.

Callers must end every executor with ``close()`` (after a complete run) or
``abort()`` (after anything else, a KeyboardInterrupt or an exception of
their own): both stop and reap every worker.
"""

from __future__ import annotations

import ctypes
import multiprocessing as mp
import os
import pickle
import queue
import signal
import traceback
from dataclasses import dataclass
from multiprocessing.process import BaseProcess
from typing import Any, Iterable, Iterator, Protocol, Union

from ..match import BotPool, MatchResult, MatchSpec, run_match

PR_SET_PDEATHSIG = 1
POLL_SECONDS = 1.0        # how often the parent checks that busy workers are alive


@dataclass(frozen=True)
class MatchFailure:
    """A match that raised an arena-side exception: no result, a reason.

    ``reason`` is one line (``"ZeroDivisionError: division by zero"``);
    ``traceback`` is the full text, for a log file (empty when there is none,
    e.g. a worker process that died).
    """

    match_id: str
    reason: str
    traceback: str = ""

    @classmethod
    def of(cls, match_id: str, exc: BaseException) -> "MatchFailure":
        text = " ".join(str(exc).split())
        reason = f"{type(exc).__name__}: {text}" if text else type(exc).__name__
        return cls(match_id, reason, "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)))


Outcome = Union[MatchResult, MatchFailure]


class Executor(Protocol):
    def run(self, specs: Iterable[MatchSpec]) -> Iterator[Outcome]: ...

    def close(self) -> None: ...

    def abort(self) -> None: ...


def play(spec: MatchSpec, pool: BotPool) -> Outcome:
    """One match; an arena-side exception becomes a MatchFailure (Ctrl-C still propagates)."""
    try:
        return run_match(spec, pool)
    except Exception as exc:  # noqa: BLE001 - any arena bug fails this match only
        return MatchFailure.of(spec.match_id, exc)


class SerialExecutor:
    """Runs matches one after another in this process, with one bot pool."""

    def __init__(self) -> None:
        self.pool = BotPool()

    def run(self, specs: Iterable[MatchSpec]) -> Iterator[Outcome]:
        for spec in specs:
            yield play(spec, self.pool)

    def close(self) -> None:
        self.pool.close()

    def abort(self) -> None:
        self.pool.close()


class WorkerError(RuntimeError):
    """Worker processes cannot be started (a bug or the system, not a bot fault)."""


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


def _packed(spec: MatchSpec, pool: BotPool) -> bytes:
    """The outcome, pickled here so that a result that cannot be pickled is a
    failure of its match, not a message silently lost by the queue's thread."""
    outcome = play(spec, pool)
    try:
        return pickle.dumps(outcome)
    except Exception as exc:  # noqa: BLE001 - reported as this match's failure
        return pickle.dumps(MatchFailure.of(spec.match_id, exc))


def _worker(index: int, tasks: "mp.Queue[Any]", results: "mp.Queue[Any]", parent: int) -> None:
    signal.signal(signal.SIGTERM, _interrupt)
    _die_with_parent()
    pool = BotPool()
    try:
        while True:
            try:
                spec = tasks.get(timeout=1.0)
            except queue.Empty:
                if os.getppid() != parent:
                    results.cancel_join_thread()
                    break  # the arena is gone
                continue
            if spec is None:
                break
            results.put((index, spec.match_id, _packed(spec, pool)))
    except KeyboardInterrupt:
        # Stopped, or the arena died: nobody may ever read what is still
        # queued, and a full pipe would make the exit wait for it forever.
        results.cancel_join_thread()
    finally:
        # A second Ctrl-C, or the parent's SIGTERM after it, must not cut the
        # clean-up short: closing the pool is what kills this worker's bots.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        pool.close()


@dataclass
class _Slot:
    """One worker process, its own task queue and the match it holds (None: idle)."""

    process: BaseProcess
    tasks: "mp.Queue[Any]"
    match_id: str | None = None


def _exit_text(code: int | None) -> str:
    if code is not None and code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit code {code}"


class ProcessExecutor:
    """Runs matches in ``jobs`` worker processes."""

    def __init__(self, jobs: int) -> None:
        self.jobs = max(1, jobs)
        self._ctx = mp.get_context("spawn")  # no inherited threads or bot pipes
        self.results: mp.Queue[Any] = self._ctx.Queue()
        self.slots: list[_Slot] = []
        try:
            for i in range(self.jobs):
                self.slots.append(self._start(i))
        except BaseException:
            self.abort()
            raise

    @property
    def workers(self) -> list[BaseProcess]:
        return [s.process for s in self.slots]

    def _start(self, index: int) -> _Slot:
        tasks: mp.Queue[Any] = self._ctx.Queue()
        proc = self._ctx.Process(target=_worker, args=(index, tasks, self.results, os.getpid()), daemon=False)
        slot = _Slot(proc, tasks)
        try:
            proc.start()
        except OSError as exc:
            tasks.cancel_join_thread()
            raise WorkerError(f"cannot start a worker process: {exc}") from None
        return slot

    def run(self, specs: Iterable[MatchSpec]) -> Iterator[Outcome]:
        todo = iter(specs)
        more = True
        while True:
            for i, slot in enumerate(self.slots):
                if more and slot.match_id is None:
                    spec = next(todo, None)
                    if spec is None:
                        more = False
                        break
                    if not slot.process.is_alive():
                        slot = self._replace(i)
                    slot.tasks.put(spec)
                    slot.match_id = spec.match_id
            if not any(s.match_id is not None for s in self.slots):
                return
            try:
                message = self.results.get(timeout=POLL_SECONDS)
            except queue.Empty:
                message = None
            if message is not None and (outcome := self._outcome(message)) is not None:
                yield outcome
            yield from self._reap_dead()

    def _outcome(self, message: tuple[int, str, bytes]) -> Outcome | None:
        """The outcome a worker sent; None if its match was already failed
        (a late message from a worker that was replaced)."""
        index, match_id, packed = message
        slot = self.slots[index]
        if slot.match_id != match_id:
            return None
        slot.match_id = None
        try:
            return pickle.loads(packed)
        except Exception as exc:  # noqa: BLE001 - an outcome we cannot read fails its match
            return MatchFailure.of(match_id, exc)

    def _reap_dead(self) -> Iterator[Outcome]:
        """Fail the match of every busy worker that died, and replace the worker."""
        dead = [i for i, s in enumerate(self.slots) if s.match_id is not None and not s.process.is_alive()]
        if not dead:
            return
        # What a dead worker wrote (it flushes its queue before exiting) is
        # readable now: take it first, it may be the result of its match.
        while True:
            try:
                message = self.results.get_nowait()
            except queue.Empty:
                break
            if (outcome := self._outcome(message)) is not None:
                yield outcome
        for i in dead:
            slot = self.slots[i]
            if slot.match_id is None:
                continue
            slot.process.join(timeout=1)
            failure = MatchFailure(slot.match_id, f"worker process died ({_exit_text(slot.process.exitcode)})")
            self._replace(i)
            yield failure

    def _replace(self, index: int) -> _Slot:
        old = self.slots[index]
        old.tasks.cancel_join_thread()
        old.process.join(timeout=1)
        self.slots[index] = self._start(index)
        return self.slots[index]

    def close(self) -> None:
        """Let idle workers finish (closing their bots), then stop them all."""
        try:
            for s in self.slots:
                if s.process.is_alive():
                    s.tasks.put(None)
            for s in self.slots:
                s.process.join(timeout=10)
        finally:
            self._stop_workers()

    def abort(self) -> None:
        """Interrupt running matches (their bots are killed) and stop workers."""
        try:
            for s in self.slots:
                if s.process.is_alive() and s.process.pid is not None:
                    try:
                        os.kill(s.process.pid, signal.SIGTERM)
                    except ProcessLookupError:
                        pass
            for s in self.slots:
                s.process.join(timeout=10)
        finally:
            self._stop_workers()

    def _stop_workers(self) -> None:
        for s in self.slots:
            if s.process.is_alive():
                s.process.kill()
                s.process.join(timeout=5)
            s.tasks.cancel_join_thread()
        self.results.cancel_join_thread()


def make_executor(jobs: int) -> SerialExecutor | ProcessExecutor:
    return SerialExecutor() if jobs <= 1 else ProcessExecutor(jobs)
