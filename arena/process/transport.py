"""How ``BotProcess`` reaches its bot: a ``Transport`` moves bytes and
reports what comes back as events; ``PipeTransport`` is the real one.

``PipeTransport`` is a bot program in its own process group, spoken to over
pipes: started by its ``spawn.ProcessStart`` part, ended by its
``exits.ProcessExits`` part, its stdout read on the owner's thread by
``streams.StdoutReader`` and its stderr by ``stderr.StderrReader``.  It also
keeps the turn guard (``turns``): the watchdog holds a bot against its CPU
time between its turns, which only a real process has.

What a transport does not know: requests, ids, replies, time banks (the
owner's, ``bot`` and ``exchange``), and the game (``arena.protocol``).  A
test can hand ``BotProcess`` any object with ``Transport``'s methods
(``tests/fakebot.py``), so the layers above are tested without processes.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import signal
import subprocess
import threading
import time
import weakref
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from .confine import cgroups, sandbox
from .confine.limits import WATCHDOG
from .confine.procfs import CHILDREN_LISTS
from .confine.spec import BotSpec
from .confine.turns import Pauser, TurnClock
from .errors import BotCrashed, BotFailure, BotTimeout, excerpt
from .spawn import ProcessStart
from .stderr import LazyLog, StderrReader, Wakeup
from .streams import EOF, EXIT, LINE, Event, StdoutReader, log_text
from .streams import LOG as READ_LOG  # every line read, at DEBUG

# The optional C part (setup.py): a decision's round trip in one call.
# None: the same steps in Python.
_exchange: Callable[[int, bytes, tuple[int, ...], float, int, float],
                    tuple[int, float, int, bytes | None, float]] | None
try:
    from ._fastpipe import exchange as _exchange
except ImportError:                   # not built: no C compiler where it was installed
    _exchange = None
if os.environ.get("ARENA_PURE_PYTHON"):   # the Python path only (its tests; a suspected C bug)
    _exchange = None

# The loggers' names from before these lines moved here: log files (and
# filters on them) keep reading the same names.
LOG = logging.getLogger("arena.process.bot")
WIRE = logging.getLogger("arena.process.exchange")     # every line written, at DEBUG (-vv)
QUOTED_LINES = 8            # stdout lines quoted in the failure of a bot that exited

__all__ = ["QUOTED_LINES", "PipeTransport", "Transport", "TransportFactory",
           "TransportSetup", "encode_lines"]


@dataclass(frozen=True)
class TransportSetup:
    """What a transport is told by its owner before it starts."""

    name: str                                   # in its errors
    label: str                                  # in its log lines
    stderr_log: str | os.PathLike[str] | None   # where the bot's stderr is kept
    startup_seconds: float                      # how long it may take to start
    turns_taken: Callable[[], int]              # its decisions so far (the turn guard's count)


class Transport(Protocol):
    """The bytes to a bot and the events from it (see the module docstring).

    ``next_event`` gives ``(kind, payload, stamp)``: ``streams.LINE`` (a line,
    without its newline), ``TOOLONG``, ``EOF`` or ``EXIT``, stamped with the
    ``now()`` it was read.  A transport's failure is sticky: ``failure`` is
    set by ``died`` and by a write that left half a line.

    ``now`` is the clock of those stamps and of ``write``'s return: the
    owner reckons its deadlines and elapsed times on it, never on another
    (a process's is ``time.monotonic``; a fake's may be a test's own)."""

    name: str
    label: str
    failure: BotFailure | None
    spec: BotSpec
    returncode: int | None          # once it has ended
    exit_description: str | None

    @property
    def started(self) -> bool: ...
    @property
    def closed(self) -> bool: ...
    @property
    def alive(self) -> bool: ...
    @property
    def pid(self) -> int | None: ...
    @property
    def stderr_tail(self) -> str: ...
    @property
    def stderr_dropped(self) -> int: ...
    def now(self) -> float: ...
    def start(self) -> Any: ...
    def write(self, data: bytes, deadline: float, limit: float) -> float: ...
    def send_and_wait(self, data: bytes, deadline: float,
                      limit: float) -> tuple[float | None, Event | None]: ...
    def next_event(self, timeout: float) -> Event | None: ...
    def take_pending(self) -> list[Event]: ...
    def waiting(self, floor: float) -> None: ...
    def died(self, cause: str, said: Sequence[str] = ()) -> BotCrashed: ...
    def no_reply_crash(self) -> BotCrashed | None: ...
    def exit_failure(self, timeout: float, line: str | None = None) -> BotCrashed | None: ...
    def close(self, quit_data: bytes | None, grace: float, term_grace: float) -> int | None: ...
    def relabel(self, label: str) -> None: ...
    def stderr_mark(self, drain: bool = False) -> int | None: ...
    def set_stderr_log(self, path: str | os.PathLike[str] | None) -> None: ...
    def turn_start(self, at: float) -> None: ...
    def turn_end(self, at: float) -> None: ...
    def own_time(self, at: float) -> None: ...
    def park(self) -> None: ...
    def unpark(self) -> None: ...


TransportFactory = Callable[[BotSpec, TransportSetup], Transport]


def encode_lines(objs: Iterable[Any]) -> bytes:
    """``objs`` as JSON lines, each ending in its newline (``bytes`` are one
    JSON object already encoded, without the newline)."""
    lines = [obj if isinstance(obj, bytes)
             else json.dumps(obj, separators=(",", ":"), allow_nan=False).encode()
             for obj in objs]
    lines.append(b"")
    return b"\n".join(lines)


class PipeTransport(ProcessStart):
    """A bot program running as a subprocess in its own process group."""

    now = staticmethod(time.monotonic)       # its stamps' clock (the reader's)

    def __init__(self, spec: BotSpec, setup: TransportSetup) -> None:
        self.spec = spec
        self.name = setup.name
        self.label = setup.label
        self.stderr_log = setup.stderr_log
        self.startup_seconds = setup.startup_seconds
        self.turns_taken = setup.turns_taken
        self.spawn_seconds: float | None = None
        self.containment: sandbox.Containment | None = None   # set by start()
        self._sandbox_init: int | None = None    # pid of the sandbox's first process
        self._cgroup: cgroups.BotCgroup | None = None   # its own cgroup (``cgroups``), if any
        self._scratch_dir: str | None = None     # this process's scratch (no sandbox)
        # Filled in when the process has been reaped:
        self.returncode: int | None = None
        self.exit_description: str | None = None
        self.cpu_seconds_used: float | None = None
        self.peak_rss_mb: float | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._wake = Wakeup()
        self._stdout: StdoutReader | None = None
        self._stderr: StderrReader | None = None
        self._finalizer: weakref.finalize | None = None
        self._has_pidfd = False
        self._reaped = False
        self._closed = False
        self._failure: BotFailure | None = None
        self._turns: TurnClock | None = None     # held against its CPU time by the watchdog
        self._pauser: Pauser | None = None       # once it was caught computing between turns
        # Parked: kept idle by a pool for a later match (``park``).  The lock
        # makes parking and the watchdog's stopping of a parked bot one step.
        self._parked = False
        self._park_lock = threading.Lock()
        # Appended to by the memory watchdog (a list's bound method, so the
        # watchdog holds no reference to this object and GC still works).
        self._kill_reasons: list[str] = []

    # ------------------------------------------------------------------ state
    def __repr__(self) -> str:
        state = ("new" if self._proc is None else "closed" if self._closed
                 else "dead" if self._reaped else "running")
        return f"<PipeTransport {self.name!r} pid={self.pid} {state}>"

    @property
    def failure(self) -> BotFailure | None:
        return self._failure

    @failure.setter
    def failure(self, value: BotFailure | None) -> None:
        self._failure = value

    @property
    def started(self) -> bool:
        return self._proc is not None

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    @property
    def alive(self) -> bool:
        return self._proc is not None and not self._reaped and not self._leader_exited()

    @property
    def turns(self) -> TurnClock | None:
        return self._turns

    @property
    def stderr_dropped(self) -> int:
        return self._stderr.dropped if self._stderr is not None else 0

    @property
    def stderr_tail(self) -> str:
        """The last few KiB the bot wrote on stderr."""
        return self._stderr.tail_text() if self._stderr is not None else ""

    def relabel(self, label: str) -> None:
        self.label = label
        for reader in (self._stdout, self._stderr):
            if reader is not None:
                reader.bot = label
        if self._pauser is not None:
            self._pauser.name = label
        if self._proc is not None:
            WATCHDOG.relabel(self._proc.pid, label)

    # ----------------------------------------------------------------- bytes
    def write(self, data: bytes, deadline: float, limit: float) -> float:
        """Write ``data``, whole lines each ending in a newline, by ``deadline``;
        the ``time.monotonic()`` when all of it was written."""
        if WIRE.isEnabledFor(logging.DEBUG):
            for line in data.split(b"\n")[:-1]:
                WIRE.debug("%s >> %s", self.label, log_text(line))
        assert self._proc is not None and self._proc.stdin is not None
        if self._pauser is not None:
            self._pauser.resume()            # stopped since its last reply: its turn again
        fd = self._proc.stdin.fileno()      # not kept: raises once stdin is closed
        try:
            written = os.write(fd, data)      # the usual case: all of it at once
        except BlockingIOError:
            written = 0
        except BrokenPipeError:
            raise self._stdin_refused() from None
        if written == len(data):
            return time.monotonic()
        return self._write_rest(fd, memoryview(data)[written:], len(data), deadline, limit)

    def send_and_wait(self, data: bytes, deadline: float,
                      limit: float) -> tuple[float | None, Event | None]:
        """If nothing came since the last reply, ``write``, then the first
        event of the wait for the reply if the C part (``_fastpipe``) could
        take it whole, else None (then the caller waits as usual:
        ``next_event``, which gives whatever came).  ``(None, None)``: nothing
        written, as something came (the caller throws it away, then writes),
        or the C part is not there.

        One call for a decision's drain, write, wait and read: the usual case,
        a reply of one line, costs no Python of the reading layer."""
        reader = self._stdout
        fast = _exchange
        if (fast is None or reader is None or reader.ended or reader.events
                or not reader.splitter.clean or WIRE.isEnabledFor(logging.DEBUG)
                or READ_LOG.isEnabledFor(logging.DEBUG)):
            return None, None
        assert self._proc is not None and self._proc.stdin is not None
        if self._pauser is not None:
            self._pauser.resume()            # stopped since its last reply: its turn again
        fd = self._proc.stdin.fileno()      # not kept: raises once stdin is closed
        # Without a pidfd the process is looked at every 50 ms, as in ``next_event``.
        written, t_sent, kind, payload, stamp = fast(
            fd, data, reader.watched, deadline, reader.splitter.max_line_bytes,
            0.0 if self._has_pidfd else 0.05)
        if kind == 3:
            return None, None
        if written < 0:
            raise self._stdin_refused() from None
        if written < len(data):
            return self._write_rest(fd, memoryview(data)[written:], len(data), deadline, limit), None
        if kind == 1:
            reader.seen_empty = stamp       # less than a chunk read: the pipe is empty
            return t_sent, (LINE, payload, stamp)
        if payload is not None:           # bytes as read (kind 2)
            reader.took(payload, stamp)
        elif not self._has_pidfd and self._leader_exited():
            return t_sent, (EXIT, None, time.monotonic())
        return t_sent, None

    def _write_rest(self, fd: int, view: memoryview, size: int, deadline: float,
                    limit: float) -> float:
        """Write what the pipe did not take at once, reading stdout meanwhile."""
        assert self._stdout is not None
        while view:
            try:
                view = view[os.write(fd, view):]
            except BlockingIOError:
                pass
            except BrokenPipeError:
                raise self._stdin_refused() from None
            if not view:
                break
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                exc = BotTimeout(f"did not read its input within {limit:.3f} s",
                                 bot=self.name, limit=limit, elapsed=limit, phase="write")
                if len(view) < size:
                    self._failure = exc     # half a line is in the pipe: unusable now
                raise exc
            self._stdout.writable(fd, remaining)
        return time.monotonic()

    def next_event(self, timeout: float) -> Event | None:
        """The next event within ``timeout`` seconds (none at all for <= 0).
        Without a pidfd the process is looked at every 50 ms: its exit is an
        ``EXIT`` event then, and None may come before ``timeout``."""
        reader = self._stdout
        assert reader is not None
        if self._has_pidfd:
            return reader.get(timeout)
        event = reader.get(timeout if timeout < 0.05 else 0.05)
        if event is None and self._leader_exited():
            return (EXIT, None, time.monotonic())
        return event

    def take_pending(self) -> list[Event]:
        """What came since the last event taken (none, usually), taken out."""
        reader = self._stdout
        assert reader is not None
        if not reader.ready_now():
            return []
        events = list(reader.events)
        reader.events.clear()
        return events

    def waiting(self, floor: float) -> None:
        assert self._stdout is not None
        self._stdout.waiting(floor)

    def died(self, cause: str, said: Sequence[str] = ()) -> BotCrashed:
        return self._died(cause, said)

    def _stdin_refused(self) -> BotCrashed:
        """The bot's stdin took no more (it exited, or closed it).  What it
        wrote on stdout and nobody read yet is quoted: a runtime that cannot
        start prints its error there and exits, often before the arena's
        first write (on a busy machine, always)."""
        return self._died("stdin", self._unread_lines([]))

    def _unread_lines(self, said: list[str]) -> list[str]:
        """``said`` and the first of the lines waiting on stdout now (``QUOTED_LINES`` in all)."""
        reader = self._stdout
        for _ in range(QUOTED_LINES * 4):
            if reader is None or not _quote(reader.get(0.0), said):
                break
        return said

    def no_reply_crash(self) -> BotCrashed | None:
        """The crash of a sandboxed bot that closed its stdout, found when no
        reply came (no end of file comes from the sandbox: ``_stdout_abandoned``)."""
        return self._died(EOF) if self._stdout_abandoned() else None

    def _pause_for_exit(self, seconds: float) -> None:
        """Throw stdout away while waiting for the bot to exit: a bot blocked
        on a full stdout would never exit."""
        reader = self._stdout
        if reader is None or reader.ended:
            time.sleep(seconds)
        else:
            reader.discard(seconds)

    def exit_failure(self, timeout: float, line: str | None = None) -> BotCrashed | None:
        """The crash of a bot whose main process has exited, or exits within
        ``timeout`` seconds; None if it is still running then.

        A runtime that cannot start (a JVM refused its memory) prints its
        error on stdout and exits: the line refused as a reply came first, but
        the exit says what happened.  ``line`` (an excerpt of that line) and
        the first lines the bot writes meanwhile are quoted in the failure."""
        if self._proc is None or self._closed or self._failure is not None:
            return self._failure if isinstance(self._failure, BotCrashed) else None
        said = [line] if line else []
        reader = self._stdout
        if self._pauser is not None:
            self._pauser.resume()       # stopped after its reply (turns.py): it must be free to exit
        deadline = time.monotonic() + timeout
        while not self._leader_exited():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            if reader is None or reader.ended:
                time.sleep(min(remaining, 0.01))
                continue
            _quote(reader.get(min(remaining, 0.05)), said)
        return self._died(EXIT, self._unread_lines(said))     # and what it wrote just before it exited

    # ---------------------------------------------------------------- stderr
    def set_stderr_log(self, path: str | os.PathLike[str] | None) -> None:
        """Send the bot's stderr to another file from now on (a process kept
        alive for the next match gets that match's log).  The old file is
        closed; the per-file ``stderr_max_bytes`` budget starts afresh."""
        log_file = None
        if path is not None:
            os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
            log_file = LazyLog(path)             # owned by the stderr thread
        self.stderr_log = path
        if self._stderr is None or not self._stderr.switch_log(log_file):
            if log_file is not None:      # the reader has finished: nothing to copy any more
                log_file.close()

    def stderr_mark(self, drain: bool = False) -> int | None:
        """Offset in the stderr log where what the bot writes next begins
        (None without a log).  ``drain``: take in what the pipe holds first."""
        return self._stderr.mark(drain) if self._stderr is not None else None

    # ----------------------------------------------------------------- turns
    def turn_start(self, at: float) -> None:
        """Its turn starts at ``at`` (the turn guard's clock, if guarded)."""
        if self._turns is not None:
            self._turns.open(at)

    def turn_end(self, at: float) -> None:
        """It has answered (or failed to) at ``at``: its turn is over, and a
        bot caught computing between turns is stopped until its next one."""
        clock = self._turns
        if clock is not None:
            clock.close(at)
            if clock.caught:
                self._pause()

    def own_time(self, at: float) -> None:
        """From ``at`` it may compute on what it got (``turns.OWN_TIME``)."""
        if self._turns is not None:
            self._turns.own_time(at)

    def park(self) -> None:
        """No request comes until ``unpark``: a bot caught computing between
        its turns is stopped until then, now or when the watchdog catches it."""
        with self._park_lock:
            self._parked = True
            if self._turns is not None and self._turns.caught:
                self._pause()

    def unpark(self) -> None:
        with self._park_lock:
            self._parked = False
            if self._pauser is not None:
                self._pauser.resume()

    def _stop_parked(self) -> None:
        """The watchdog thread's call while the bot is caught: stopped if parked."""
        with self._park_lock:
            if self._parked and not self._closed:
                self._pause()

    def _pause(self) -> None:
        if self._proc is None or self._reaped:
            return
        if self._pauser is None:
            init = self._sandbox_init if self._sandboxed and CHILDREN_LISTS else None
            self._pauser = Pauser(self.label, self._proc.pid, init)
        self._pauser.stop()

    # ----------------------------------------------------------------- close
    def close(self, quit_data: bytes | None, grace: float, term_grace: float) -> int | None:
        """Stop the bot (see ``BotProcess.close``); its exit code.  Idempotent."""
        if self._proc is None or self._closed:
            return self.returncode
        if self._parked:
            self.unpark()                    # the watchdog must not stop it again
        self._closed = True
        if self._pauser is not None:
            self._pauser.resume()            # to quit, or to see a SIGTERM
        self.own_time(time.monotonic())      # its exit is its own business
        try:
            if not self._reaped:
                if not self._leader_exited():
                    self._quit(quit_data, grace, term_grace)
                self._kill_and_reap()
        finally:
            if not self._reaped:
                # Interrupted (e.g. Ctrl-C while waiting for the exit): kill anyway.
                self._kill_and_reap()
            self._close_stdin()
            self._stop_readers()
            left = self._wait_group_gone(1.0)
            if left:
                LOG.warning("%s: processes %s of group %d survived SIGKILL", self.label, left,
                            self._proc.pid)
            if self._scratch_dir is not None:
                shutil.rmtree(self._scratch_dir, ignore_errors=True)
        return self.returncode

    def _quit(self, quit_data: bytes | None, grace: float, term_grace: float) -> None:
        """``quit_data`` (if the bot can still take it), stdin closed, then
        ``grace`` seconds for it to exit and SIGTERM ``term_grace`` before the kill."""
        if quit_data is not None and self._failure is None:
            try:
                self.write(quit_data, time.monotonic() + min(grace, 0.5), min(grace, 0.5))
            except BotFailure as exc:
                LOG.debug("%s: could not send quit: %s", self.label, exc)
        self._close_stdin()
        if not self._wait_leader(grace) and term_grace > 0:
            LOG.debug("%s: still running after %.2f s, SIGTERM", self.label, grace)
            self._signal_bot(signal.SIGTERM)
            self._wait_leader(term_grace)


def _quote(event: Event | None, said: list[str]) -> bool:
    """Keep the text of a line event (the first ``QUOTED_LINES``); False for no event."""
    if event is None:
        return False
    if event[0] == LINE and len(said) < QUOTED_LINES:
        said.append(excerpt(event[1]))
    return True
