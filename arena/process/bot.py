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

Not thread-safe: one owner thread drives a ``BotProcess`` (the reader threads
only feed it through a queue).
"""

from __future__ import annotations

import json
import logging
import math
import os
import queue
import select
import signal
import subprocess
import time
import weakref
from collections.abc import Callable, Iterable, Mapping, Sequence
from types import TracebackType
from typing import Any

from .errors import (BotCrashed, BotFailure, BotMalformed, BotStartupError, BotTimeout,
                     describe_exit, excerpt)
from .limits import WATCHDOG, apply_limits, group_members, kill_group
from .spec import BotSpec, TimeControl
from .stats import DecisionStats
from .streams import EOF, EXIT, LINE, TOOLONG, Event, StderrReader, StdoutReader, Wakeup, log_text

LOG = logging.getLogger(__name__)

QUIT_MESSAGE: Mapping[str, Any] = {"type": "quit"}
SEND_TIMEOUT = 5.0        # default limit for writing a message the bot does not answer
TERM_GRACE = 0.5          # after SIGTERM, before SIGKILL
EXIT_WAIT = 1.0           # stdout/stdin closed: how long to wait for the exit status

JSONObject = dict[str, Any]


def _json_type(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return type(value).__name__


def _emergency_kill(proc: subprocess.Popen[bytes], wake: Wakeup, name: str) -> None:
    """Finalizer (garbage collection / interpreter exit) of a BotProcess that was
    never closed.  Holds no reference to the BotProcess itself."""
    if proc.returncode is None:
        LOG.debug("%s: not closed, killing process group %d", name, proc.pid)
        WATCHDOG.unregister(proc.pid)
        kill_group(proc.pid, signal.SIGKILL)
        try:
            proc.wait(timeout=1.0)
        except subprocess.TimeoutExpired:
            LOG.warning("%s: pid %d did not die after SIGKILL", name, proc.pid)
    wake.set()


class BotProcess:
    """A bot program running as a subprocess in its own process group."""

    def __init__(self, spec: BotSpec, *, name: str | None = None,
                 stderr_log: str | os.PathLike[str] | None = None,
                 time_control: TimeControl | None = None) -> None:
        self.spec = spec
        self.name = name or spec.display_name
        self.stderr_log = stderr_log
        self.time_control = time_control or TimeControl()
        self.stats = DecisionStats()
        self.bank_remaining: float | None = self.time_control.bank_seconds
        self.startup_elapsed: float | None = None
        self.spawn_seconds: float | None = None
        self.stale_lines = 0                 # unsolicited / late / wrong-id lines thrown away
        # Filled in when the process has been reaped:
        self.returncode: int | None = None
        self.exit_description: str | None = None
        self.cpu_seconds_used: float | None = None
        self.peak_rss_mb: float | None = None

        self._proc: subprocess.Popen[bytes] | None = None
        self._events: queue.SimpleQueue[Event] = queue.SimpleQueue()
        self._wake = Wakeup()
        self._stdout: StdoutReader | None = None
        self._stderr: StderrReader | None = None
        self._finalizer: weakref.finalize | None = None
        self._has_pidfd = False
        self._reaped = False
        self._closed = False
        self._failure: BotFailure | None = None
        # Appended to by the memory watchdog (a list's bound method, so the
        # watchdog holds no reference to this object and GC still works).
        self._kill_reasons: list[str] = []

    # ------------------------------------------------------------------ state
    def __repr__(self) -> str:
        state = ("new" if self._proc is None else "closed" if self._closed
                 else "dead" if self._reaped else "running")
        return f"<BotProcess {self.name!r} pid={self.pid} {state}>"

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
    def stderr_dropped(self) -> int:
        return self._stderr.dropped if self._stderr is not None else 0

    @property
    def stderr_tail(self) -> str:
        """The last few KiB the bot wrote on stderr."""
        return self._stderr.tail_text() if self._stderr is not None else ""

    # ------------------------------------------------------------------ start
    def start(self) -> BotProcess:
        """Spawn the bot.  Raises ``BotStartupError`` if it cannot be started."""
        if self._proc is not None:
            raise RuntimeError(f"bot {self.name!r} already started")
        spec = self.spec
        if spec.cwd is not None and not os.path.isdir(spec.cwd):
            raise BotStartupError(f"cannot start {spec.argv[0]!r}: working directory "
                                  f"{os.fspath(spec.cwd)!r} does not exist",
                                  argv=spec.argv, bot=self.name)
        env = None if not spec.env else {**os.environ, **spec.env}
        log_file = None
        if self.stderr_log is not None:
            os.makedirs(os.path.dirname(os.path.abspath(self.stderr_log)), exist_ok=True)
            log_file = open(self.stderr_log, "ab")  # noqa: SIM115 - owned by the stderr thread
        t0 = time.monotonic()
        try:
            # start_new_session: own session and process group, and no terminal
            # signals (Ctrl-C goes to the arena, which then closes its bots).
            # No preexec_fn, so CPython can use vfork(); close_fds keeps a bot
            # from inheriting the pipes of other bots (which would hide EOFs).
            proc = subprocess.Popen(
                list(spec.argv), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=subprocess.PIPE, cwd=spec.cwd, env=env, bufsize=0,
                close_fds=True, start_new_session=True)
        except OSError as exc:
            if log_file is not None:
                log_file.close()
                if os.path.getsize(log_file.name) == 0:   # not started: leave no empty log behind
                    os.unlink(log_file.name)
            raise self._startup_error(exc) from exc
        self.spawn_seconds = time.monotonic() - t0
        self._proc = proc
        self._finalizer = weakref.finalize(self, _emergency_kill, proc, self._wake, self.name)
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        os.set_blocking(proc.stdin.fileno(), False)
        try:
            apply_limits(proc.pid, spec)
        except ProcessLookupError:
            pass            # already gone: reported as a crash on first use
        except OSError as exc:
            self._finalizer()
            if log_file is not None:
                log_file.close()
            raise BotStartupError(f"cannot apply resource limits to {spec.argv[0]!r}: {exc}",
                                  argv=spec.argv, bot=self.name) from exc
        try:
            pidfd: int | None = os.pidfd_open(proc.pid)
        except (AttributeError, OSError):      # no pidfd (old kernel): poll instead
            pidfd = None
        self._has_pidfd = pidfd is not None
        self._stdout = StdoutReader(self.name, proc.stdout, pidfd, self._wake,
                                    spec.max_line_bytes, self._events)
        self._stderr = StderrReader(self.name, proc.stderr, self._wake, log_file,
                                    spec.stderr_max_bytes)
        self._stdout.start()
        self._stderr.start()
        if spec.memory_mb is not None:
            WATCHDOG.register(proc.pid, self.name, spec.memory_mb, self._kill_reasons.append)
        LOG.debug("%s: started pid %d in %.1f ms: %s", self.name, proc.pid,
                  self.spawn_seconds * 1000, " ".join(spec.argv))
        return self

    def _startup_error(self, exc: OSError) -> BotStartupError:
        cmd = self.spec.argv[0]
        if isinstance(exc, FileNotFoundError):
            what = "no such file or command"
            if os.path.isfile(cmd):
                what = "its interpreter (#! line) was not found"
        elif isinstance(exc, PermissionError):
            what = "permission denied (is it executable?)"
        else:
            what = exc.strerror or str(exc)
            if exc.errno == 8:                           # ENOEXEC
                what += " (not a binary, and no #! line?)"
        return BotStartupError(f"cannot start {cmd!r}: {what}", argv=self.spec.argv,
                               bot=self.name)

    # -------------------------------------------------------------- messages
    def send(self, obj: Any, *, timeout: float | None = None) -> float:
        """Write one JSON line; returns the ``time.monotonic()`` at which it was
        fully written.  ``timeout`` (default ``SEND_TIMEOUT``) only matters if
        the bot stops reading and the pipe fills up."""
        self._check_usable()
        limit = SEND_TIMEOUT if timeout is None else timeout
        return self._write(obj, time.monotonic() + limit, limit)

    def send_many(self, objs: Iterable[Any], *, timeout: float | None = None) -> float | None:
        """Write several JSON lines with as few system calls as the pipe allows
        (one write instead of one per line).  Each item is a JSON-able object
        or ``bytes`` (one JSON object already encoded, without the newline).
        Returns like ``send``, or None if there was nothing to send."""
        self._check_usable()
        items = list(objs)
        if not items:
            return None
        limit = SEND_TIMEOUT if timeout is None else timeout
        return self._write_lines(items, time.monotonic() + limit, limit)

    def set_stderr_log(self, path: str | os.PathLike[str] | None) -> None:
        """Send the bot's stderr to another file from now on (a process kept
        alive for the next match gets that match's log).  The old file is
        closed; the per-file ``stderr_max_bytes`` budget starts afresh."""
        log_file = None
        if path is not None:
            os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
            log_file = open(path, "ab")  # noqa: SIM115 - owned by the stderr thread
        self.stderr_log = path
        if self._stderr is None or not self._stderr.switch_log(log_file):
            if log_file is not None:      # the reader has finished: nothing to copy any more
                log_file.close()

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
        t_sent = self._write(obj, t_start + limit, limit)
        value, elapsed = self._await(t_sent, limit, _request_id(obj), t_start)
        self.startup_elapsed = elapsed
        return value, elapsed

    def request(self, obj: Any, timeout: float | None = None, *,
                is_stale_id: Callable[[Any], bool] | None = None,
                before: Sequence[Any] = (), reply_id: Any = None) -> tuple[JSONObject, float]:
        """Send one decision request and wait for its reply: ``(reply, seconds)``.

        ``before`` are notices written in the same system call, ahead of the
        request (one pipe write and one wake-up of the bot instead of two).
        Any message may be given as ``bytes``: one JSON object already
        encoded, without the newline; a request given so names the id its
        reply must carry in ``reply_id``.

        The time runs from the moment the line is written and stops when the
        reply line is read (stamped by the reader thread).  Without ``timeout``
        the time control applies: ``per_decision_seconds``, then the bank;
        with ``timeout`` that is the whole allowance and the bank is not used.

        If the request is an object with an ``"id"``, replies carrying another
        ``"id"`` (late answers to earlier requests) are thrown away, as are
        lines that arrived while no request was pending.  With ``is_stale_id``
        only the other ids it accepts are thrown away; a reply with any other
        id is returned for the caller to judge (an id that was never issued is
        the bot's mistake, not a late answer).
        """
        self._check_usable()
        if timeout is not None:
            allowance, bank = timeout, None
        else:
            allowance, bank = self.time_control.per_decision_seconds, self.bank_remaining
        limit = allowance + (bank or 0.0)
        self._drain_pending()
        t_start = time.monotonic()
        try:
            t_sent = self._write_lines([*before, obj], t_start + limit, limit)
            expect = reply_id if reply_id is not None else _request_id(obj)
            value, elapsed = self._await(t_sent, limit, expect, t_start, is_stale_id)
        except BotTimeout:
            self.stats.timeouts += 1
            if bank is not None:
                self.bank_remaining = 0.0
            raise
        if bank is not None and elapsed > allowance:
            self.bank_remaining = max(0.0, bank - (elapsed - allowance))
            LOG.debug("%s: %.3f s over the per-decision time, bank now %.3f s",
                      self.name, elapsed - allowance, self.bank_remaining)
        self.stats.record(elapsed)
        return value, elapsed

    def _check_usable(self) -> None:
        if self._proc is None:
            raise RuntimeError(f"bot {self.name!r} not started")
        if self._failure is not None:
            raise self._failure.with_traceback(None)
        if self._closed:
            raise RuntimeError(f"bot {self.name!r} is closed")

    def _write(self, obj: Any, deadline: float, limit: float) -> float:
        return self._write_lines([obj], deadline, limit)

    def _write_lines(self, objs: list[Any], deadline: float, limit: float) -> float:
        lines = [obj if isinstance(obj, bytes)
                 else json.dumps(obj, separators=(",", ":"), allow_nan=False).encode()
                 for obj in objs]
        if LOG.isEnabledFor(logging.DEBUG):
            for data in lines:
                LOG.debug("%s >> %s", self.name, log_text(data))
        assert self._proc is not None and self._proc.stdin is not None
        fd = self._proc.stdin.fileno()
        lines.append(b"")
        view = memoryview(b"\n".join(lines))
        size = len(view)
        poller: select.poll | None = None
        while view:
            try:
                view = view[os.write(fd, view):]
            except BlockingIOError:
                pass
            except BrokenPipeError:
                raise self._died("stdin") from None
            if not view:
                break
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                exc = BotTimeout(f"did not read its input within {limit:.3f} s",
                                 bot=self.name, limit=limit, elapsed=limit, phase="write")
                if len(view) < size:
                    self._failure = exc     # half a line is in the pipe: unusable now
                raise exc
            if poller is None:
                poller = select.poll()
                poller.register(fd, select.POLLOUT)
            poller.poll(math.ceil(remaining * 1000))
        return time.monotonic()

    def _drain_pending(self) -> None:
        """Throw away lines nobody asked for; a pending death is raised now."""
        while True:
            try:
                kind, payload, _stamp = self._events.get_nowait()
            except queue.Empty:
                return
            if kind == LINE:
                if payload.strip():  # type: ignore[attr-defined]
                    self.stale_lines += 1
                    LOG.warning("%s: ignoring unsolicited line: %s", self.name,
                                excerpt(payload))  # type: ignore[arg-type]
            elif kind == TOOLONG:
                self.stale_lines += 1
                LOG.warning("%s: ignoring unsolicited over-long line", self.name)
            else:
                raise self._died(kind)

    def _await(self, t0: float, limit: float, expect_id: Any, not_before: float | None = None,
               is_stale_id: Callable[[Any], bool] | None = None) -> tuple[JSONObject, float]:
        """Next reply line, timed from ``t0``.  Lines read before ``not_before``
        (when the request started to be written) cannot be its reply.  A reply
        may be stamped a hair before ``t0`` (the bot answered before the
        writing thread took its timestamp): that counts as 0 s."""
        deadline = t0 + limit
        wrong_ids = 0
        while True:
            remaining = deadline - time.monotonic()
            try:
                if remaining > 0:
                    wait = remaining if self._has_pidfd else min(remaining, 0.05)
                    kind, payload, stamp = self._events.get(timeout=wait)
                else:
                    kind, payload, stamp = self._events.get_nowait()
            except queue.Empty:
                if not self._has_pidfd and self._leader_exited():
                    raise self._died(EXIT) from None
                if remaining > 0:
                    continue
                extra = f" (ignored {wrong_ids} replies with another id)" if wrong_ids else ""
                raise BotTimeout(f"no reply within {limit:.3f} s{extra}", bot=self.name,
                                 limit=limit, elapsed=time.monotonic() - t0) from None
            if kind == LINE:
                assert isinstance(payload, bytes)
                if not payload.strip():
                    continue
                if not_before is not None and stamp < not_before:
                    self.stale_lines += 1
                    LOG.warning("%s: ignoring unsolicited line: %s", self.name, excerpt(payload))
                    continue
                if stamp > deadline:
                    self.stale_lines += 1
                    raise BotTimeout(f"reply came after {stamp - t0:.3f} s, limit {limit:.3f} s",
                                     bot=self.name, limit=limit, elapsed=stamp - t0)
                value = self._parse(payload)
                if (expect_id is not None and "id" in value and value["id"] != expect_id
                        and (is_stale_id is None or is_stale_id(value["id"]))):
                    wrong_ids += 1
                    self.stale_lines += 1
                    LOG.warning("%s: ignoring reply with id %r (waiting for %r)", self.name,
                                value["id"], expect_id)
                    continue
                return value, max(0.0, stamp - t0)
            if kind == TOOLONG:
                head, _size = payload  # type: ignore[misc]
                raise BotMalformed(f"line too long (more than {self.spec.max_line_bytes} bytes)",
                                   head, bot=self.name)
            raise self._died(kind)

    def _parse(self, raw: bytes) -> JSONObject:
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise BotMalformed("not valid UTF-8", raw, bot=self.name) from None
        try:
            value = json.loads(text)
        except json.JSONDecodeError as exc:
            raise BotMalformed(f"not valid JSON ({exc.msg} at column {exc.colno})", text,
                               bot=self.name) from None
        except RecursionError:
            raise BotMalformed("JSON nested too deeply", text, bot=self.name) from None
        if not isinstance(value, dict):
            raise BotMalformed(f"expected a JSON object, got {_json_type(value)}", text,
                               bot=self.name)
        return value

    # ----------------------------------------------------------- processes
    def _leader_exited(self) -> bool:
        """Has the main process exited?  Does not reap it (WNOWAIT)."""
        if self._reaped:
            return True
        assert self._proc is not None
        try:
            info = os.waitid(os.P_PID, self._proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except ChildProcessError:
            return True
        return info is not None

    def _wait_leader(self, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        pause = 0.001
        while not self._leader_exited():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            time.sleep(min(pause, remaining))
            pause = min(pause * 2, 0.02)
        return True

    def _reap(self) -> None:
        """Collect the exit status.  Only call once the leader is dead or killed."""
        if self._reaped:
            return
        proc = self._proc
        assert proc is not None
        if self._finalizer is not None:
            self._finalizer.detach()
        WATCHDOG.unregister(proc.pid)
        try:
            _pid, status, usage = os.wait4(proc.pid, 0)
        except ChildProcessError:            # reaped behind our back: status lost
            returncode = proc.returncode
        else:
            returncode = os.waitstatus_to_exitcode(status)
            proc.returncode = returncode     # so Popen never waits for it again
            self.cpu_seconds_used = usage.ru_utime + usage.ru_stime
            self.peak_rss_mb = usage.ru_maxrss / 1024      # KiB on Linux
        self._reaped = True
        self.returncode = returncode
        self.exit_description = self._describe_exit()
        LOG.debug("%s: pid %d %s", self.name, proc.pid, self.exit_description)

    def _describe_exit(self) -> str:
        if self.returncode is None:
            return "exit status unknown"
        text = describe_exit(self.returncode)
        spec = self.spec
        if self._kill_reasons:
            return f"{text}: {self._kill_reasons[0]}"
        sig = -self.returncode
        cpu = self.cpu_seconds_used
        if spec.cpu_seconds is not None and (
                sig == signal.SIGXCPU
                or (sig == signal.SIGKILL and cpu is not None and cpu >= spec.cpu_seconds)):
            return f"{text}: CPU time limit of {spec.cpu_seconds} s exceeded"
        if (spec.memory_mb is not None and self.peak_rss_mb is not None
                and self.returncode != 0 and self.peak_rss_mb >= 0.8 * spec.memory_mb):
            return (f"{text} (peak memory {self.peak_rss_mb:.0f} MB, "
                    f"memory limit {spec.memory_mb} MB)")
        return text

    def _kill_and_reap(self) -> None:
        if not self._reaped:
            assert self._proc is not None
            kill_group(self._proc.pid, signal.SIGKILL)
            self._reap()

    def _died(self, cause: str) -> BotCrashed:
        """The bot closed stdout (EOF), its main process exited (EXIT) or it
        closed stdin ("stdin").  Kill what is left of its group, collect the
        exit status and return the failure (sticky)."""
        exited = self._wait_leader(0.0 if cause == EXIT else EXIT_WAIT)
        self._kill_and_reap()
        if self._stderr is not None:
            self._stderr.join(timeout=0.5)   # let it read the last words (traceback)
        tail = self.stderr_tail
        if exited:
            message = self.exit_description or "exited"
            returncode = self.returncode
        else:
            stream = "output" if cause == EOF else "input"
            message = f"closed its standard {stream} (killed)"
            returncode = None
        last = [line for line in tail.splitlines() if line.strip()]
        if last:
            message += f"; stderr: {excerpt(last[-1])}"
        exc = BotCrashed(message, bot=self.name, returncode=returncode, stderr_tail=tail)
        self._failure = exc
        LOG.debug("%s: crashed: %s", self.name, message)
        return exc

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
        self._closed = True
        proc = self._proc
        try:
            if not self._reaped:
                if not self._leader_exited():
                    if quit_message is not None and self._failure is None:
                        try:
                            self._write(quit_message, time.monotonic() + min(grace, 0.5),
                                        min(grace, 0.5))
                        except BotFailure as exc:
                            LOG.debug("%s: could not send quit: %s", self.name, exc)
                    self._close_stdin()
                    if not self._wait_leader(grace) and term_grace > 0:
                        LOG.debug("%s: still running after %.2f s, SIGTERM", self.name, grace)
                        kill_group(proc.pid, signal.SIGTERM)
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
                LOG.warning("%s: processes %s of group %d survived SIGKILL", self.name, left,
                            proc.pid)
        return self.returncode

    def _wait_group_gone(self, timeout: float) -> list[int]:
        """SIGKILLed processes take a moment to die: poll /proc for live members."""
        assert self._proc is not None
        deadline = time.monotonic() + timeout
        while (left := group_members(self._proc.pid)) and time.monotonic() < deadline:
            time.sleep(0.005)
        return left

    def kill(self) -> int | None:
        """SIGKILL the whole group at once (no quit message, no grace)."""
        return self.close(quit_message=None, grace=0.0, term_grace=0.0)

    def _close_stdin(self) -> None:
        assert self._proc is not None and self._proc.stdin is not None
        try:
            self._proc.stdin.close()
        except OSError as exc:
            LOG.debug("%s: closing stdin: %s", self.name, exc)

    def _stop_readers(self) -> None:
        readers = [t for t in (self._stdout, self._stderr) if t is not None]
        for t in readers:          # the group is dead: EOF comes at once, stderr gets drained
            t.join(timeout=1.0)
        self._wake.set()
        for t in readers:
            t.join(timeout=1.0)
        if any(t.is_alive() for t in readers):
            LOG.warning("%s: reader threads still blocked; a process outside its group "
                        "holds its pipes", self.name)
            return
        assert self._proc is not None
        for stream in (self._proc.stdout, self._proc.stderr):
            if stream is not None:
                stream.close()

    def __enter__(self) -> BotProcess:
        if self._proc is None:
            self.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()


def _request_id(obj: Any) -> Any:
    return obj.get("id") if isinstance(obj, Mapping) else None
