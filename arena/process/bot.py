"""``BotProcess``: one running bot, spoken to with one JSON object per line.

Lifecycle::

    with BotProcess(spec, stderr_log=path, time_control=tc) as bot:   # start()
        hello, t = bot.handshake({"type": "hello", ...})               # startup time
        reply, t = bot.request({"id": 1, ...})                         # one decision
        bot.send({"type": "event", ...})                               # no reply expected
    # close(): send {"type": "quit"}, wait, SIGTERM then SIGKILL the process group

The bot runs in its own session / process group (``start_new_session``), and
the whole group is killed on ``close()``, when the bot dies, when the
``BotProcess`` is garbage collected and at interpreter exit, so processes a
bot forked die with it.  The group leader is reaped only *after* the group
has been signalled: while it is an unreaped zombie its pid, hence the pgid,
cannot be reused, so a group signal can never reach an unrelated process.

Where the spec's sandbox mode resolves to bwrap (the default on Linux), the
group leader is bwrap and the bot runs inside its namespaces (``sandbox``):
killing the group ends the whole sandbox, ``setsid()`` escapees included.

Not thread-safe: one owner thread drives a ``BotProcess`` and reads its
stdout while it waits for it (the stderr reader thread only writes the log).

The bot is started by ``spawn.ProcessStart``, the lines are moved by
``exchange.LineExchange`` and the end of the process is handled by
``exits.ProcessExits``: the parts ``BotProcess`` is built on.
"""

from __future__ import annotations

import logging
import os
import shutil
import signal
import subprocess
import threading
import time
import weakref
from collections.abc import Callable, Iterable, Mapping, Sequence
from types import TracebackType
from typing import Any

from ..jsonline import JSONObject
from . import cgroups, sandbox
from .errors import BotFailure, BotTimeout
from .exchange import Decode, LineExchange
from .limits import WATCHDOG
from .procfs import CHILDREN_LISTS
from .spawn import ProcessStart
from .spec import BotSpec, TimeControl
from .stats import DecisionStats
from .stderr import LazyLog, StderrReader, Wakeup
from .streams import StdoutReader
from .turns import Pauser, TurnClock

LOG = logging.getLogger(__name__)

QUIT_MESSAGE: Mapping[str, Any] = {"type": "quit"}
SEND_TIMEOUT = 5.0        # default limit for writing a message the bot does not answer
TERM_GRACE = 0.5          # after SIGTERM, before SIGKILL


class BotProcess(ProcessStart, LineExchange):
    """A bot program running as a subprocess in its own process group."""

    def __init__(self, spec: BotSpec, *, name: str | None = None,
                 stderr_log: str | os.PathLike[str] | None = None,
                 time_control: TimeControl | None = None, label: str | None = None) -> None:
        self.spec = spec
        self.name = name or spec.display_name
        self.label = label or self.name
        self.stderr_log = stderr_log
        self.time_control = time_control or TimeControl()
        self.stats = DecisionStats()
        self.bank_remaining: float | None = self.time_control.bank_seconds
        self.spawn_seconds: float | None = None
        self.containment: sandbox.Containment | None = None   # set by start()
        self._sandbox_init: int | None = None    # pid of the sandbox's first process
        self._cgroup: cgroups.BotCgroup | None = None   # its own cgroup (``cgroups``), if any
        self._scratch_dir: str | None = None     # this process's scratch (no sandbox)
        self.stale_lines = 0                 # unsolicited / late / wrong-id lines thrown away
        self.ignored: list[str] = []         # the first of them since the last take_ignored()
        self.ignored_since = 0               # how many of them (a match looks at it after each request)
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
        return f"<BotProcess {self.name!r} pid={self.pid} {state}>"

    def relabel(self, label: str) -> None:
        """What the log lines of this process call it from now on (``label``:
        which seat it plays, when several seats run one program); its
        ``name``, which its errors give, is unchanged."""
        self.label = label
        for reader in (self._stdout, self._stderr):
            if reader is not None:
                reader.bot = label
        if self._pauser is not None:
            self._pauser.name = label
        if self._proc is not None:
            WATCHDOG.relabel(self._proc.pid, label)

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    @property
    def pgid(self) -> int | None:
        """The bot's process group id (== pid: it leads its own session)."""
        return self.pid

    @property
    def alive(self) -> bool:
        return self._proc is not None and not self._reaped and not self._leader_exited()

    @property
    def failure(self) -> BotFailure | None:
        """The crash (or write timeout) that made this bot unusable, if any."""
        return self._failure

    @property
    def off_turn_seconds(self) -> float | None:
        """CPU seconds the bot was seen using between its turns, if it was
        caught at it (it is stopped between its turns since: ``turns``)."""
        clock = self._turns
        return clock.off_turn if clock is not None and clock.caught else None

    @property
    def stderr_dropped(self) -> int:
        return self._stderr.dropped if self._stderr is not None else 0

    @property
    def stderr_tail(self) -> str:
        """The last few KiB the bot wrote on stderr."""
        return self._stderr.tail_text() if self._stderr is not None else ""

    # -------------------------------------------------------------- messages
    def send(self, obj: Any, *, timeout: float | None = None, own_time: bool = False) -> float:
        """Write one JSON line; returns the ``time.monotonic()`` at which it was
        fully written.  ``timeout`` (default ``SEND_TIMEOUT``) only matters if
        the bot stops reading and the pipe fills up.  ``own_time``: the bot
        may compute on what it got until its next request (the end of a
        match, ``quit``), which ``turns`` then counts as its turn."""
        self._check_usable()
        limit = SEND_TIMEOUT if timeout is None else timeout
        if own_time:
            self._own_time()
        return self._write(obj, time.monotonic() + limit, limit)

    def send_many(self, objs: Iterable[Any], *, timeout: float | None = None,
                  own_time: bool = False) -> float | None:
        """Write several JSON lines with as few system calls as the pipe allows
        (one write instead of one per line).  Each item is a JSON-able object
        or ``bytes`` (one JSON object already encoded, without the newline).
        Returns like ``send``, or None if there was nothing to send."""
        self._check_usable()
        items = list(objs)
        if not items:
            return None
        limit = SEND_TIMEOUT if timeout is None else timeout
        if own_time:
            self._own_time()
        return self._write_lines(items, time.monotonic() + limit, limit)

    def _own_time(self) -> None:
        if self._turns is not None:
            self._turns.own_time(time.monotonic())

    def park(self) -> None:
        """No request comes until ``unpark``: a pool keeps the process for a
        later match while others play on its CPU.  A bot caught computing
        between its turns is stopped until then, now or when the watchdog
        catches it (``turns``)."""
        with self._park_lock:
            self._parked = True
            if self._turns is not None and self._turns.caught:
                self._pause()

    def unpark(self) -> None:
        """The end of ``park``: requests may come again."""
        with self._park_lock:
            self._parked = False
            if self._pauser is not None:
                self._pauser.resume()

    def _stop_parked(self) -> None:
        """The watchdog thread's call while the bot is caught: stopped if parked."""
        with self._park_lock:
            if self._parked and not self._closed:
                self._pause()

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
        (None without a log): taken before each request, it ties stderr
        lines to decisions.  ``drain``: take in what the pipe holds first."""
        return self._stderr.mark(drain) if self._stderr is not None else None

    def recv(self, timeout: float, *, since: float | None = None) -> tuple[JSONObject, float]:
        """Wait for the next line (no request sent).  Elapsed time is counted
        from ``since`` (a value returned by ``send``) or from now."""
        self._check_usable()
        t0 = time.monotonic() if since is None else since
        return self._await(t0, timeout, None)

    def handshake(self, obj: Any, *, timeout: float | None = None) -> tuple[JSONObject, float]:
        """First request after start: limited by ``startup_seconds``, which
        includes the bot's own start-up; not counted as a decision."""
        self._check_usable()
        limit = self.time_control.startup_seconds if timeout is None else timeout
        self._drain_pending()
        t_start = time.monotonic()
        clock = self._turns
        if clock is not None:       # a new process's turn goes on from its spawn
            clock.open(t_start)
        try:
            t_sent = self._write(obj, t_start + limit, limit)
            value, elapsed = self._await(t_sent, limit, _request_id(obj), t_start)
        finally:
            if clock is not None:
                self._end_turn(clock, time.monotonic())
        return value, elapsed

    def request(self, obj: Any, timeout: float | None = None, *,
                is_stale_id: Callable[[Any], bool] | None = None,
                before: Sequence[Any] | bytes = (), reply_id: Any = None,
                decode: Decode | None = None) -> tuple[Any, float]:
        """Send one decision request and wait for its reply: ``(reply, seconds)``.

        ``before`` are notices written in the same system call, ahead of the
        request (one pipe write and one wake-up of the bot instead of two).
        Any message may be given as ``bytes``: one JSON object already
        encoded, without the newline; a request given so names the id its
        reply must carry in ``reply_id``.  ``before`` may also be one
        ``bytes`` of whole lines, each ending in its newline (the match's
        path: its notices joined once).

        The time runs from the moment the line is written and stops when the
        reply line is read (``streams.StdoutReader`` stamps it).  Without ``timeout``
        the time control applies: ``per_decision_seconds``, then the bank;
        with ``timeout`` that is the whole allowance and the bank is not used.

        If the request is an object with an ``"id"``, replies carrying another
        ``"id"`` (late answers to earlier requests) are thrown away, as are
        lines that arrived while no request was pending.  With ``is_stale_id``
        only the other ids it accepts are thrown away; a reply with any other
        id is returned for the caller to judge (an id that was never issued is
        the bot's mistake, not a late answer).

        ``decode`` reads the reply line instead of the strict JSON decoder:
        it returns ``(value, id)`` (see ``exchange.Decode``), and the value is
        what this returns.
        """
        if type(obj) is bytes and type(before) is bytes:
            data = b"".join((before, obj, b"\n"))
        else:
            self._check_usable()
            lines = ([before[:-1]] if before else []) if isinstance(before, bytes) else [*before]
            data = self._encode_lines([*lines, obj])
        return self.request_data(data, reply_id if reply_id is not None else _request_id(obj),
                                 timeout, is_stale_id, decode)

    def request_data(self, data: bytes, expect_id: Any, timeout: float | None = None,
                     is_stale_id: Callable[[Any], bool] | None = None,
                     decode: Decode | None = None) -> tuple[Any, float]:
        """``request`` with its lines made: ``data`` is whole lines, each
        ending in its newline, the request last; ``expect_id`` the id its
        reply must carry (None: any).  The match's path, once a decision:
        every argument may be given by position."""
        self._check_usable()
        if timeout is not None:
            allowance, bank = timeout, None
        else:
            allowance, bank = self.time_control.per_decision_seconds, self.bank_remaining
        limit = allowance + (bank or 0.0)
        self._drain_pending()
        t_start = time.monotonic()
        clock = self._turns
        if clock is not None:
            clock.open(t_start)
        try:
            t_sent = self._write_data(data, t_start + limit, limit)
            value, elapsed = self._await(t_sent, limit, expect_id, t_start, is_stale_id, decode)
        except BaseException as exc:
            if isinstance(exc, BotTimeout):
                self.stats.timeouts += 1
                if bank is not None:
                    self.bank_remaining = 0.0
            if clock is not None:
                self._end_turn(clock, time.monotonic())
            raise
        if clock is not None:
            self._end_turn(clock, t_sent + elapsed)     # its turn ends when its reply came
        if bank is not None and elapsed > allowance:
            self.bank_remaining = max(0.0, bank - (elapsed - allowance))
            LOG.debug("%s: %.3f s over the per-decision time, bank now %.3f s",
                      self.label, elapsed - allowance, self.bank_remaining)
        self.stats.record(elapsed)
        return value, elapsed

    def _end_turn(self, clock: TurnClock, at: float) -> None:
        """The bot has answered (or failed to) at ``at``: its turn is over, and
        a bot caught computing between turns is stopped until its next one."""
        clock.close(at)
        if clock.caught:
            self._pause()

    def _pause(self) -> None:
        if self._proc is None or self._reaped:
            return
        if self._pauser is None:
            init = self._sandbox_init if self._sandboxed and CHILDREN_LISTS else None
            self._pauser = Pauser(self.label, self._proc.pid, init)
        self._pauser.stop()

    def _check_usable(self) -> None:
        if self._proc is None:
            raise RuntimeError(f"bot {self.name!r} not started")
        if self._failure is not None:
            raise self._failure.with_traceback(None)
        if self._closed:
            raise RuntimeError(f"bot {self.name!r} is closed")

    # ---------------------------------------------------------------- close
    def close(self, quit_message: Any = QUIT_MESSAGE, grace: float = 1.0,
              term_grace: float = TERM_GRACE) -> int | None:
        """Stop the bot; returns its exit code (``-N`` = killed by signal N).

        Sends ``quit_message`` (``None``: nothing) and closes its stdin, waits
        up to ``grace`` seconds for it to exit, then SIGTERMs the process group
        and SIGKILLs it ``term_grace`` seconds later.  The group is always
        SIGKILLed at the end, so children the bot left behind die too.
        Idempotent.
        """
        if self._proc is None or self._closed:
            return self.returncode
        if self._parked:
            self.unpark()                    # the watchdog must not stop it again
        self._closed = True
        proc = self._proc
        if self._pauser is not None:
            self._pauser.resume()            # to quit, or to see a SIGTERM
        self._own_time()                     # its exit is its own business
        try:
            if not self._reaped:
                if not self._leader_exited():
                    if quit_message is not None and self._failure is None:
                        try:
                            self._write(quit_message, time.monotonic() + min(grace, 0.5),
                                        min(grace, 0.5))
                        except BotFailure as exc:
                            LOG.debug("%s: could not send quit: %s", self.label, exc)
                    self._close_stdin()
                    if not self._wait_leader(grace) and term_grace > 0:
                        LOG.debug("%s: still running after %.2f s, SIGTERM", self.label, grace)
                        self._signal_bot(signal.SIGTERM)
                        self._wait_leader(term_grace)
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
                            proc.pid)
            if self._scratch_dir is not None:
                shutil.rmtree(self._scratch_dir, ignore_errors=True)
        return self.returncode

    def kill(self) -> int | None:
        """SIGKILL the whole group at once (no quit message, no grace)."""
        return self.close(quit_message=None, grace=0.0, term_grace=0.0)

    def __enter__(self) -> BotProcess:
        if self._proc is None:
            self.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()


def _request_id(obj: Any) -> Any:
    return obj.get("id") if isinstance(obj, Mapping) else None
