"""Executors: where ``run_match`` runs.

A match is a plain function, ``run_match(MatchSpec) -> MatchResult``.  An
executor takes specs and yields outcomes as matches finish (completion order;
callers that need schedule order sort by it).  ``SerialExecutor`` runs in
this process; ``ProcessExecutor`` runs ``jobs`` worker processes;
``executors.ray.RayExecutor`` runs them on a Ray cluster, each actor holding
a ``ProcessExecutor`` of one worker.

An outcome is a ``MatchResult``, or a ``MatchFailure`` when the match raised
an arena-side exception (bot faults never raise: ``run_match`` turns them into
faults).  A failure ends that match only; the executor goes on with the
others, like cutechess-cli's ``-recover``.  A worker process that dies in a
match fails that match too, and a new worker takes its place.

Each worker keeps a ``BotPool`` so a bot program plays its consecutive
matches without being restarted; an idle worker is given the match, of the
next few, that its pool can play with the fewest new processes (``assign``).  A worker is spoken to over a socket pair,
one per worker, that carries one match at a time: so the parent always knows
which match a worker is playing, and a worker that dies shows as the end of
its socket.  A worker is started one of two ways (``start``):

- ``fork`` (on Linux, in a process with one thread, as ``arena run`` is):
  a child of this process, after this process has imported what playing a
  match needs (``worker.preload``).  The workers then share this process's
  memory pages (the interpreter, the libraries, the engine) until they write
  to them: ``arena run --jobs 2`` takes about 50 MB of PSS in all, against
  58 with exec'd workers (``benchmarks/workers.py``).  The child never
  returns into this process's code: it serves matches and ends with
  ``os._exit``, so nothing inherited (the results database's connection,
  the progress line, buffered output) is used, flushed or closed there.
- ``exec`` (elsewhere, and in a process with threads, such as a Ray actor:
  a fork copies only the forking thread, and a lock another thread held
  stays locked in the child): a fresh interpreter started with
  ``subprocess`` that imports ``worker``, which imports what playing a
  match needs and nothing of the CLI.

An interrupted run stops the workers deliberately: SIGTERM (or the
terminal's SIGINT) becomes KeyboardInterrupt in the worker, which
``run_match`` handles by killing its bots, and the worker then closes its
pool before exiting.  No bot outlives its worker.

Callers must end every executor with ``close()`` (after a complete run) or
``abort()`` (after anything else, a KeyboardInterrupt or an exception of
their own): both stop and reap every worker.
"""

from __future__ import annotations

import gc
import logging
import os
import pickle
import select
import signal
import socket
import subprocess
import sys
import traceback
from collections.abc import Hashable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn, Protocol

# Which CPU a match plays on: nothing of bot processes.
from ...process.confine.affinity import pin as pin_cpu
from ...process.confine.affinity import plan as plan_cpus
from ...process.confine.affinity import unpin as unpin_cpu
from . import channel
from .assign import LOOKAHEAD, Assigner, PoolModel
from .forked import ForkedWorker, WorkerProcess, can_fork
from .outcome import STOP, MatchFailure, Outcome

if TYPE_CHECKING:
    from ...match.pool import BotPool
    from ...match.spec import MatchSpec

__all__ = ["Executor", "SerialExecutor", "ProcessExecutor", "MatchFailure", "Outcome", "WorkerError",
           "make_executor", "worker_command", "AUTO", "FORK", "EXEC", "WorkerProcess"]

AUTO, FORK, EXEC = "auto", "fork", "exec"     # how workers start: see the module's docstring
STOP_SIGNALS = {signal.SIGINT, signal.SIGTERM}

POLL_SECONDS = 1.0        # how often the parent checks that busy workers are alive
ENDING_THREADS_SECONDS = 2.0   # for ended threads to leave the kernel's count before the first worker is forked
# The directory holding this ``arena`` package: workers import the same code as their arena.
PACKAGE_ROOT = str(Path(__file__).resolve().parents[3])


class Executor(Protocol):
    def run(self, specs: Iterable[MatchSpec]) -> Iterator[Outcome]: ...

    def close(self) -> None: ...

    def abort(self) -> None: ...


class SerialExecutor:
    """Runs matches one after another in this process, with one bot pool."""

    def __init__(self, pin: bool = True) -> None:
        # Here, not at the top: a parent with worker processes plays no match
        # itself and must not load the runner, the engine or the codec.
        from ...match.pool import BotPool

        self.pool: BotPool = BotPool()
        self.cpu = plan_cpus(1)[0] if pin else None

    def run(self, specs: Iterable[MatchSpec]) -> Iterator[Outcome]:
        # lazy: the worker loads the match runner, which a parent of workers must not (tests/test_lean_imports.py PLAYING)
        from .worker import play

        # Pinned while a match plays (its bots inherit the CPU); between
        # matches this thread is the tournament's again.
        for spec in specs:
            before = pin_cpu(self.cpu)
            try:
                outcome = play(spec, self.pool)
            finally:
                unpin_cpu(before)
            yield outcome

    def close(self) -> None:
        self.pool.close()

    def abort(self) -> None:
        self.pool.close()


class WorkerError(RuntimeError):
    """Worker processes cannot be started (a bug or the system, not a bot fault)."""


def worker_command(fd: int, cpu: int | None = None) -> list[str]:
    """The command line of a worker serving the socket ``fd`` (on ``cpu``
    alone, with its bots, unless None): this interpreter, importing
    ``arena.tournament.executors.worker`` from this package's directory."""
    code = (f"import sys; sys.path.insert(0, {PACKAGE_ROOT!r}); "
            f"from arena.tournament.executors.worker import main; main({fd}, {cpu!r})")
    return [sys.executable, "-c", code]


@dataclass
class _Slot:
    """One worker process, the socket to it and the match it holds (None: idle)."""

    process: WorkerProcess
    conn: socket.socket
    match_id: str | None = None

    def readable(self) -> bool:
        """A message, or the end of the socket, is waiting."""
        return bool(_readable([self.conn.fileno()], 0))


def _exit_text(code: int | None) -> str:
    if code is not None and code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit code {code}"


class ProcessExecutor:
    """Runs matches in ``jobs`` worker processes, started by ``start``: ``fork``,
    ``exec``, or ``auto`` (fork when ``can_fork()`` says so at that moment,
    else exec).  ``fork`` where forking is not possible is ``exec``."""

    def __init__(self, jobs: int, pin: bool = True, start: str = AUTO, lookahead: int = LOOKAHEAD) -> None:
        if start not in (AUTO, FORK, EXEC):
            raise ValueError(f"start must be {AUTO}, {FORK} or {EXEC}, not {start!r}")
        self.jobs = max(1, jobs)
        self.start = start
        # Of how many coming matches an idle worker chooses (``assign``); a league,
        # which decides each table from the results so far, draws few ahead.
        self.lookahead = lookahead
        # Worker i plays on cpus[i] (with its bots) for the whole run, even
        # after a replacement: a dead worker's successor takes its CPU.
        self.cpus = plan_cpus(self.jobs) if pin else [None] * self.jobs
        # The first start may wait for threads on their way out (the start-up
        # probe's watchdog, joined, still in the kernel's count for a moment):
        # an arena that found one there got exec'd workers, which import
        # everything again (tests/test_forked_sandbox.py).
        self._fork_wait = ENDING_THREADS_SECONDS
        self.slots: list[_Slot] = []
        self._pool_models: dict[Hashable, PoolModel] = {}     # each worker's, for ``assign``
        self._more = True
        try:
            for i in range(self.jobs):
                self.slots.append(self._start(self.cpus[i]))
        except BaseException:
            self.abort()
            raise

    @property
    def workers(self) -> list[WorkerProcess]:
        return [s.process for s in self.slots]

    def _start(self, cpu: int | None) -> _Slot:
        wait, self._fork_wait = self._fork_wait, 0.0
        forking = self.start == FORK and sys.platform == "linux" or self.start == AUTO and can_fork(wait)
        return self._fork(cpu) if forking else self._exec(cpu)

    def _fork(self, cpu: int | None) -> _Slot:
        """A worker forked from this process (see the module's docstring)."""
        # lazy: the worker loads the match runner (tests/test_lean_imports.py PLAYING): here only to fork
        from . import worker

        worker.preload()   # before the fork: every worker shares these pages
        ours, theirs = socket.socketpair()
        for handler in logging.getLogger().handlers + logging.getLogger("arena").handlers:
            handler.flush()   # the child's copy of a buffer must not be written twice
        sys.stdout.flush()
        sys.stderr.flush()
        # The objects of now are never collected from here on, here or in the
        # worker: a collection writes to every object it looks at, and so
        # would copy the pages the worker shares with this process (without
        # this, each worker costs about 1.5 MB more).
        gc.freeze()
        # Ctrl-C and SIGTERM wait until each side has its handlers: a
        # KeyboardInterrupt in the child before then would unwind into this
        # process's code (and, say, abort this executor's other workers).
        mask = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
        arena = os.getpid()
        try:
            pid = os.fork()
        except OSError as exc:
            signal.pthread_sigmask(signal.SIG_SETMASK, mask)
            ours.close()
            theirs.close()
            raise WorkerError(f"cannot start a worker process: {exc}") from None
        if pid == 0:
            self._serve(ours, theirs, arena, cpu)
        theirs.close()   # the worker's end lives in the worker only: its death closes the socket
        try:
            signal.pthread_sigmask(signal.SIG_SETMASK, mask)   # a Ctrl-C held since the fork is raised here
        except BaseException:
            # Not a slot yet, so nothing else would stop this worker.
            ForkedWorker(pid).kill()
            os.waitpid(pid, 0)
            ours.close()
            raise
        return _Slot(ForkedWorker(pid), ours)

    def _serve(self, ours: socket.socket, theirs: socket.socket, arena: int, cpu: int | None) -> NoReturn:
        """The forked child of ``arena``: serve matches on ``theirs``, then end
        this process without returning into the code that forked it."""
        code = 1
        try:
            # lazy: in the forked child; the parent of workers must not load it (tests/test_lean_imports.py PLAYING)
            from . import worker

            ours.close()
            for slot in self.slots:   # the other workers' sockets: theirs must end when the arena's do
                slot.conn.close()
            worker.main(theirs.fileno(), cpu, forked_from=arena)
            code = 0
        except Exception:  # noqa: BLE001 - an arena bug: shown, and this worker ends
            traceback.print_exc()
        except BaseException:  # noqa: BLE001 - Ctrl-C or a SIGTERM before the worker's handlers
            pass
        finally:
            os._exit(code)

    def _exec(self, cpu: int | None) -> _Slot:
        """A worker in a fresh interpreter (see the module's docstring)."""
        ours, theirs = socket.socketpair()
        fd = theirs.fileno()
        try:
            # Same process group as the arena: a terminal's Ctrl-C reaches the workers too.
            proc = subprocess.Popen(worker_command(fd, cpu), pass_fds=(fd,), stdin=subprocess.DEVNULL)
        except OSError as exc:
            ours.close()
            raise WorkerError(f"cannot start a worker process: {exc}") from None
        finally:
            theirs.close()  # the worker's end lives in the worker only: its death closes the socket
        return _Slot(proc, ours)

    def run(self, specs: Iterable[MatchSpec]) -> Iterator[Outcome]:
        todo = Assigner(iter(specs), len(self.slots), self.lookahead, pools=self._pool_models)
        self._more = True
        while True:
            yield from self._fill(todo)
            busy = [s for s in self.slots if s.match_id is not None]
            if not busy:
                if self._more:
                    continue  # every spec handed out so far failed to be sent
                return
            for fd in _readable([s.conn.fileno() for s in busy], POLL_SECONDS):
                index = next(i for i, s in enumerate(self.slots) if s.conn.fileno() == fd)
                yield self._receive(index)
            yield from self._reap_dead()

    def _fill(self, todo: Assigner) -> Iterator[Outcome]:
        """Give every idle worker its next match (``assign``); a spec that
        cannot be sent fails its match."""
        for i in range(len(self.slots)):
            if not self._more or self.slots[i].match_id is not None:
                continue
            spec = todo.next_for(i)
            if spec is None:
                self._more = False
                return
            try:
                task = pickle.dumps(spec)
            except Exception as exc:  # noqa: BLE001 - this match cannot be played
                yield MatchFailure.of(spec.match_id, exc)
                continue
            self._send(i, task)
            self.slots[i].match_id = spec.match_id

    def _send(self, index: int, task: bytes) -> None:
        """Send ``task`` to worker ``index``, replacing it first if it died while idle."""
        for attempt in (1, 2):
            slot = self.slots[index]
            if slot.process.poll() is None:
                try:
                    channel.send(slot.conn.fileno(), task)
                    return
                except OSError:
                    if attempt == 2:
                        raise WorkerError("a new worker process died before its first match") from None
            self._replace(index)

    def _receive(self, index: int) -> Outcome:
        """The outcome worker ``index`` sent for its match, or the failure of that
        match if the worker died (the end of its socket) before sending one."""
        slot = self.slots[index]
        match_id = slot.match_id
        assert match_id is not None
        try:
            packed = channel.receive(slot.conn.fileno())
        except (EOFError, OSError):
            return self._died(index)
        slot.match_id = None
        try:
            outcome = pickle.loads(packed)
        except Exception as exc:  # noqa: BLE001 - an outcome we cannot read fails its match
            return MatchFailure.of(match_id, exc)
        if isinstance(outcome, MatchFailure) and outcome.match_id != match_id:
            return MatchFailure(match_id, outcome.reason, outcome.traceback)  # the worker could not read the spec
        return outcome

    def _reap_dead(self) -> Iterator[Outcome]:
        """Fail the match of every busy worker that died without closing its
        socket (a leaked descendant holds it, say), and replace the worker."""
        for i, slot in enumerate(self.slots):
            if slot.match_id is not None and slot.process.poll() is not None:
                if slot.readable():  # what it sent before dying is its match's outcome
                    yield self._receive(i)
                else:
                    yield self._died(i)

    def _died(self, index: int) -> MatchFailure:
        slot = self.slots[index]
        assert slot.match_id is not None
        try:
            code = slot.process.wait(timeout=1)
        except subprocess.TimeoutExpired:  # its socket closed, yet it lives on: end it
            slot.process.kill()
            code = slot.process.wait()
        failure = MatchFailure(slot.match_id, f"worker process died ({_exit_text(code)})")
        self._replace(index)
        return failure

    def _replace(self, index: int) -> _Slot:
        old = self.slots[index]
        old.conn.close()  # an idle worker that lives on sees the end of its socket and stops
        _wait(old.process, 5)
        if old.process.poll() is None:
            old.process.kill()
            old.process.wait()
        self.slots[index] = self._start(self.cpus[index])
        self._pool_models.pop(index, None)     # the new worker's pool is empty
        return self.slots[index]

    def close(self) -> None:
        """Let idle workers finish (closing their bots), then stop them all."""
        try:
            for s in self.slots:
                if s.process.poll() is None:
                    try:
                        channel.send(s.conn.fileno(), STOP)
                    except OSError:
                        pass  # it is gone already
            for s in self.slots:
                _wait(s.process, 10)
        finally:
            self._stop_workers()

    def abort(self) -> None:
        """Interrupt running matches (their bots are killed) and stop workers."""
        try:
            for s in self.slots:
                if s.process.poll() is None:
                    try:
                        s.process.send_signal(signal.SIGTERM)
                    except ProcessLookupError:
                        pass
            for s in self.slots:
                _wait(s.process, 10)
        finally:
            self._stop_workers()

    def _stop_workers(self) -> None:
        for s in self.slots:
            if s.process.poll() is None:
                s.process.kill()
                _wait(s.process, 5)
            s.conn.close()


def _readable(fds: list[int], timeout: float) -> list[int]:
    """The fds among ``fds`` with a message or an end of file waiting (poll: no FD_SETSIZE limit)."""
    poller = select.poll()
    for fd in fds:
        poller.register(fd, select.POLLIN)
    return [fd for fd, _ in poller.poll(timeout * 1000)]


def _wait(proc: WorkerProcess, seconds: float) -> None:
    try:
        proc.wait(timeout=seconds)
    except subprocess.TimeoutExpired:
        pass  # the caller kills what is left


def make_executor(jobs: int, pin: bool = True, lookahead: int = LOOKAHEAD) -> SerialExecutor | ProcessExecutor:
    """``jobs`` matches at once; ``pin``: each on a CPU of its own (``process.confine.affinity``);
    ``lookahead``: of how many coming matches an idle worker chooses (``assign``)."""
    return SerialExecutor(pin) if jobs <= 1 else ProcessExecutor(jobs, pin, lookahead=lookahead)
