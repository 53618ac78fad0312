"""Writing JSON lines to a bot and waiting for its reply lines.

``LineExchange`` is the part of ``BotProcess`` that moves the lines: writing
them to the bot's non-blocking stdin within a deadline, throwing away lines
nobody asked for, waiting for the reply to a request (read on this thread by
``streams.StdoutReader``, timed from its stamps) and parsing it as one JSON
object, or with the decoder the caller gives (a protocol's typed codec:
``Decode``).
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Callable
from typing import Any, cast

from ..jsonline import NO_ID, JSONLineError, decode_object
from .errors import BotCrashed, BotFailure, BotMalformed, BotTimeout, excerpt
from .exits import ProcessExits
from .streams import EOF, EXIT, LINE, TOOLONG, StdoutReader, log_text
from .turns import Pauser

LOG = logging.getLogger(__name__)
IGNORED_KEPT = 5            # texts of ignored lines kept between two ``take_ignored``
QUOTED_LINES = 8            # stdout lines quoted in the failure of a bot that exited

# A reply decoder: line -> (value, the id it carries or NO_ID); raises
# JSONLineError for a line that is no acceptable reply at all.
Decode = Callable[[bytes], tuple[Any, Any]]


class LineExchange(ProcessExits):
    """The line-moving part of ``BotProcess``; the attributes below are set by
    ``BotProcess.__init__`` and ``start``.  A bot found dead on the way is
    turned into its failure by ``ProcessExits._died``."""

    stale_lines: int
    _stdout: StdoutReader | None
    ignored: list[str]          # the first few lines thrown away since the last ``take_ignored``
    ignored_since: int          # lines thrown away since the last ``take_ignored``
    _has_pidfd: bool
    _closed: bool
    _pauser: Pauser | None      # set once the bot was caught computing between its turns

    def _write(self, obj: Any, deadline: float, limit: float) -> float:
        return self._write_lines([obj], deadline, limit)

    def _write_lines(self, objs: list[Any], deadline: float, limit: float) -> float:
        """Write ``objs`` as lines in one system call if the pipe takes them;
        the ``time.monotonic()`` when all of it was written."""
        return self._write_data(self._encode_lines(objs), deadline, limit)

    @staticmethod
    def _encode_lines(objs: list[Any]) -> bytes:
        """``objs`` as JSON lines, each ending in its newline (``bytes`` are
        one JSON object already encoded, without the newline)."""
        lines = [obj if isinstance(obj, bytes)
                 else json.dumps(obj, separators=(",", ":"), allow_nan=False).encode()
                 for obj in objs]
        lines.append(b"")
        return b"\n".join(lines)

    def _write_data(self, data: bytes, deadline: float, limit: float) -> float:
        """Write ``data``, whole lines each ending in a newline (see ``_write_lines``)."""
        if LOG.isEnabledFor(logging.DEBUG):
            for line in data.split(b"\n")[:-1]:
                LOG.debug("%s >> %s", self.label, log_text(line))
        assert self._proc is not None and self._proc.stdin is not None
        if self._pauser is not None:
            self._pauser.resume()            # stopped since its last reply: its turn again
        fd = self._proc.stdin.fileno()      # not kept: raises once stdin is closed
        try:
            written = os.write(fd, data)      # the usual case: all of it at once
        except BlockingIOError:
            written = 0
        except BrokenPipeError:
            raise self._died("stdin") from None
        if written == len(data):
            return time.monotonic()
        return self._write_rest(fd, memoryview(data)[written:], len(data), deadline, limit)

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
            self._stdout.writable(fd, remaining)
        return time.monotonic()

    def _pause_for_exit(self, seconds: float) -> None:
        """Throw stdout away while waiting for the bot to exit: a bot blocked
        on a full stdout would never exit."""
        reader = self._stdout
        if reader is None or reader.ended:
            time.sleep(seconds)
        else:
            reader.discard(seconds)

    def _drain_pending(self) -> None:
        """Throw away lines nobody asked for; a pending death is raised now."""
        reader = self._stdout
        assert reader is not None
        if reader.ready_now():          # the usual case: nothing came since the last reply
            self._drain_events()

    def _drain_events(self) -> None:
        """``_drain_pending`` once the reader holds events."""
        # What is there now, once: a bot that writes without pause must not
        # hold the arena here (what it writes on is judged as its reply).
        assert self._stdout is not None
        events = self._stdout.events
        said: list[str] = []
        while events:
            kind, payload, _stamp = events.popleft()
            if kind == LINE:
                if payload.strip():
                    said.append(excerpt(payload))
                    self._ignore(f"unsolicited line: {said[-1]}")
            elif kind == TOOLONG:
                self._ignore("unsolicited over-long line")
            else:
                raise self._died(kind, " | ".join(said[-QUOTED_LINES:]))

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
            self._quote(reader.get(min(remaining, 0.05)), said)
        for _ in range(QUOTED_LINES * 4):     # what it wrote just before it exited
            if reader is None or not self._quote(reader.get(0.0), said):
                break
        return self._died(EXIT, " | ".join(said))

    @staticmethod
    def _quote(event: tuple[str, object, float] | None, said: list[str]) -> bool:
        """Keep the text of a line event (the first ``QUOTED_LINES``); False for no event."""
        if event is None:
            return False
        if event[0] == LINE and len(said) < QUOTED_LINES:
            said.append(excerpt(event[1]))  # type: ignore[arg-type]
        return True

    def _await(self, t0: float, limit: float, expect_id: Any, not_before: float | None = None,
               is_stale_id: Callable[[Any], bool] | None = None,
               decode: Decode | None = None) -> tuple[Any, float]:
        """Next reply line, timed from ``t0``.  Lines read before ``not_before``
        (when the request started to be written) cannot be its reply.  A reply
        may be stamped a hair before ``t0`` (the bot answered before the
        writing thread took its timestamp): that counts as 0 s.  Without
        ``not_before`` no drain came first: lines already waiting in the pipe
        came while nobody waited for them, and count as come at ``t0``
        (``StdoutReader.waiting``)."""
        reader = self._stdout
        assert reader is not None
        if not_before is None:
            reader.waiting(t0)
        deadline = t0 + limit
        wrong_ids = 0
        pidfd = self._has_pidfd
        while True:
            remaining = deadline - time.monotonic()
            # No pidfd: look at the process every 50 ms.  (``get`` waits not at all for <= 0.)
            event = reader.get(remaining if pidfd or remaining < 0.05 else 0.05)
            if event is None:
                if not pidfd and self._leader_exited():
                    raise self._died(EXIT) from None
                if remaining > 0:
                    continue
                raise self._no_reply(t0, limit, wrong_ids)
            kind, payload, stamp = event
            if kind == LINE:
                # Never blank: the reader keeps no blank line.
                assert isinstance(payload, bytes)
                if not_before is not None and stamp < not_before:
                    self._ignore(f"unsolicited line: {excerpt(payload)}")
                    continue
                if stamp > deadline:
                    self.stale_lines += 1
                    raise BotTimeout(f"reply came after {stamp - t0:.3f} s, limit {limit:.3f} s",
                                     bot=self.name, limit=limit, elapsed=stamp - t0)
                try:
                    value, value_id = (decode(payload) if decode is not None
                                       else self._parse_object(payload))
                except JSONLineError as exc:
                    raise BotMalformed(exc.reason, payload, bot=self.name) from None
                if (expect_id is not None and value_id is not NO_ID and value_id != expect_id
                        and (is_stale_id is None or is_stale_id(value_id))):
                    wrong_ids += 1
                    self._ignore(f"reply with id {value_id!r} while waiting for {expect_id!r}")
                    continue
                return value, (stamp - t0 if stamp > t0 else 0.0)
            if kind == TOOLONG:
                head, _size = cast("tuple[bytes, int]", payload)
                raise BotMalformed(f"line too long (more than {self.spec.max_line_bytes} bytes)",
                                   head, bot=self.name)
            raise self._died(kind)

    def _no_reply(self, t0: float, limit: float, wrong_ids: int) -> BotFailure:
        """The timeout, or the crash of a sandboxed bot that closed its stdout
        (no end of file comes from the sandbox: ``_stdout_abandoned``)."""
        if self._stdout_abandoned():
            return self._died(EOF)
        extra = f" (ignored {wrong_ids} replies with another id)" if wrong_ids else ""
        return BotTimeout(f"no reply within {limit:.3f} s{extra}", bot=self.name,
                          limit=limit, elapsed=time.monotonic() - t0)

    def _ignore(self, what: str) -> None:
        """A line thrown away: counted, kept for the match record (the first
        ``IGNORED_KEPT`` since the last ``take_ignored``), logged as information,
        not as a warning: the match reports it, and a bot that repeats every
        reply must not flood the console."""
        self.stale_lines += 1
        self.ignored_since += 1
        if len(self.ignored) < IGNORED_KEPT:
            self.ignored.append(what)
        LOG.info("%s: ignoring %s", self.label, what)

    def take_ignored(self) -> tuple[int, list[str]]:
        """How many lines were thrown away since the last call, and the first of them."""
        count, kept = self.ignored_since, self.ignored
        self.ignored_since, self.ignored = 0, []
        return count, kept

    @staticmethod
    def _parse_object(raw: bytes) -> tuple[Any, Any]:
        value = decode_object(raw)
        return value, value.get("id", NO_ID)
