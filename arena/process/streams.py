"""Reading a bot's stdout and stderr.

* stdout is read on the thread that drives the bot (``StdoutReader``), only
  while it waits for the bot: ``poll()`` on the pipe and on a pidfd of the
  bot's main process, with the deadline as the poll timeout.  One wake-up per
  reply and no hand-over between threads: a reader thread cost a thread
  switch and a GIL hand-over on every decision, more than the rest of the
  arena's work for it.  What the thread gave is kept where it matters:

  - a bot never blocks on a full pipe *while we wait for it*: the arena
    reads whenever it waits for the bot (a reply, a write to its stdin that
    does not go through, its exit after ``quit``).  Between requests a bot
    that writes more than a pipe holds waits, which costs it no time;
  - every line is stamped with ``time.monotonic()`` when it is read, and it is
    read at once while the arena waits for it.  A line that was already
    waiting when the arena looked (it came while nobody waited for it) is
    stamped with the last moment the pipe was seen empty: the arena does not
    know when it came and never charges its own delay to the bot;
  - ``LineSplitter`` never holds more than ``max_line_bytes`` plus one read
    chunk; a longer line is reported once (with an excerpt) and the rest of
    it is read and thrown away;
  - the pidfd makes the death of the main process seen even when a forked
    child still holds stdout open.
* stderr: read by ``stderr.StderrReader``, on a thread of its own (see
  ``stderr``); ``StdoutReader`` takes in what it holds while it waits, so
  each decision's stderr is a byte range of the log.
"""

from __future__ import annotations

import logging
import math
import os
import select
import time
from collections import deque
from typing import IO, Any, cast

from .errors import excerpt

# The pipe reading shared with the stderr reader, and (for imports from
# before stderr's reading moved out of this module) the rest of it.
from .stderr import CHUNK, DRAIN_CHUNKS, POLL_READY, STDERR_TAIL, LazyLog, StderrReader, Wakeup

LOG = logging.getLogger(__name__)

LOG_LINE_MAX = 4096      # longer lines are logged truncated (the bot still gets judged on all of it)

# Lines read and not yet taken, at most (plus one chunk's): what a bot that
# writes without end costs the arena.  A line is an entry of a hundred bytes,
# from as little as two bytes read; blank lines are never kept.
EVENTS_MAX = 1024

# Event kinds of StdoutReader.
LINE = "line"            # payload: bytes (without newline)
TOOLONG = "toolong"      # payload: (first bytes of the line, bytes seen so far)
EOF = "eof"              # stdout closed
EXIT = "exit"            # the main process exited (not reaped yet)

Event = tuple[str, Any, float]      # (kind, payload, the monotonic time it was read)

__all__ = ["CHUNK", "DRAIN_CHUNKS", "POLL_READY", "EOF", "EXIT", "EVENTS_MAX", "LINE", "LOG_LINE_MAX", "STDERR_TAIL", "TOOLONG",
           "Event", "LazyLog", "LineSplitter", "StderrReader", "StdoutReader", "Wakeup", "log_text"]


def log_text(data: bytes) -> str:
    """A protocol line as logged (``-vv`` shows it on the console): escaped as
    ``excerpt`` does, so an escape sequence, a CR or U+202E a bot wrote (or
    that the arena quotes back to it) cannot rewrite what the terminal shows;
    a long line shortened, with its length."""
    if len(data) <= LOG_LINE_MAX:
        return excerpt(data, LOG_LINE_MAX)
    return f"{excerpt(data, LOG_LINE_MAX)} [{len(data)} bytes]"


class LineSplitter:
    """Incremental newline splitter with a hard cap on the line length."""

    def __init__(self, max_line_bytes: int) -> None:
        self.max_line_bytes = max_line_bytes
        self._buf = bytearray()
        self._discarding = False      # inside a too-long line: drop until newline

    @property
    def clean(self) -> bool:
        """Between lines: the next byte fed starts a line."""
        return not self._buf and not self._discarding

    def feed(self, chunk: bytes) -> list[tuple[str, object]]:
        end = len(chunk) - 1
        if (not self._buf and not self._discarding and 0 <= end <= self.max_line_bytes
                and chunk.find(b"\n") == end):
            return [(LINE, chunk[:end])]      # the usual read: one whole line
        out: list[tuple[str, object]] = []
        start, end = 0, len(chunk)
        while start < end:
            nl = chunk.find(b"\n", start)
            if self._discarding:
                if nl < 0:
                    break
                self._discarding = False
                start = nl + 1
                continue
            if nl < 0:
                self._buf += chunk[start:]
                if len(self._buf) > self.max_line_bytes:
                    out.append((TOOLONG, (bytes(self._buf[:1024]), len(self._buf))))
                    self._buf.clear()
                    self._discarding = True
                break
            size = len(self._buf) + nl - start
            if size > self.max_line_bytes:
                head = bytes(self._buf[:1024]) or chunk[start:start + 1024]
                out.append((TOOLONG, (head, size)))
            elif self._buf:
                self._buf += chunk[start:nl]
                out.append((LINE, bytes(self._buf)))
            else:
                out.append((LINE, chunk[start:nl]))
            self._buf.clear()
            start = nl + 1
        return out

    def finish(self) -> list[tuple[str, object]]:
        """End of stream: an unterminated last line still counts as a line."""
        if self._buf and not self._discarding:
            line = bytes(self._buf)
            self._buf.clear()
            return [(LINE, line)]
        return []


class StdoutReader:
    """Turns the bot's stdout into LINE / TOOLONG / EOF / EXIT events, read on
    the caller's thread (see the module docstring).  Owns the pidfd."""

    def __init__(self, name: str, stream: IO[bytes], pidfd: int | None,
                 max_line_bytes: int, stderr: StderrReader | None = None) -> None:
        self.bot = name
        self.stream = stream            # kept referenced: its fd must stay open while we read
        self.fd = stream.fileno()
        self.pidfd = pidfd
        self.splitter = LineSplitter(max_line_bytes)
        self.events: deque[Event] = deque()
        self.ended = False              # EOF read: the pipe has nothing more
        self.seen_empty = time.monotonic()    # the last moment the pipe was known empty
        # Polled by the thread that talks to the bot.
        self.poller = select.poll()
        self.poller.register(self.fd, POLL_READY)
        if pidfd is not None:
            self.poller.register(pidfd, select.POLLIN)
        # stderr is watched too while we wait: what a bot writes there before
        # its reply is then taken in as the reply comes, so the next decision's
        # stderr mark needs no read of its own (see StderrReader.mark).
        self._stderr = stderr
        if stderr is not None:
            self.poller.register(stderr.fd, POLL_READY)
        # What ``poller`` watches, stdout first (``_fastpipe.exchange`` polls the same).
        self.watched: tuple[int, ...] = ()
        self._watch()
        os.set_blocking(self.fd, False)

    def _watch(self) -> None:
        stderr = self._stderr.fd if self._stderr is not None else None
        self.watched = tuple(fd for fd in (None if self.ended else self.fd, self.pidfd, stderr)
                             if fd is not None)

    def get(self, timeout: float) -> Event | None:
        """The next event, waiting up to ``timeout`` seconds (0: only what is
        there now); None if there is none by then."""
        events = self.events
        if events:
            return events.popleft()
        # poll() rounds a fraction of a millisecond up (as math.ceil would).
        ready = self.poller.poll(timeout * 1000 if timeout > 0 else 0)
        if not ready:
            return None
        self.take(ready)
        return events.popleft() if events else None

    def ready_now(self) -> bool:
        """Whether anything is waiting now (output, an exit), taken in as events."""
        ready = self.poller.poll(0)
        if ready:
            self.take(ready)
        return bool(self.events)

    def waiting(self, floor: float) -> None:
        """Read what the pipe holds now, before a wait that no drain preceded:
        those lines came while nobody waited for them, at a moment we do not
        know; they are stamped with the last moment the pipe was seen empty,
        and not before ``floor``."""
        if not self.events and not self.ended:
            self._read(max(self.seen_empty, floor))

    def writable(self, fd: int, timeout: float) -> None:
        """Wait up to ``timeout`` seconds for ``fd`` (the bot's stdin) to take
        more, reading stdout meanwhile: a bot blocked on its full stdout while
        we wait to write to it would never read its stdin."""
        poller = select.poll()
        poller.register(fd, select.POLLOUT)
        if not self.ended and len(self.events) < EVENTS_MAX:    # else it waits, as a pipe would make it
            poller.register(self.fd, POLL_READY)
        for ready_fd, _mask in poller.poll(max(0, math.ceil(timeout * 1000))):
            if ready_fd == self.fd:
                self._read(None)

    def discard(self, timeout: float) -> None:
        """Wait up to ``timeout`` seconds for output and throw it away (the
        bot is on its way out: it must not block on a full pipe meanwhile)."""
        self.get(timeout)
        self.events.clear()

    def take(self, ready: list[tuple[int, int]]) -> None:
        """Take in what ``poller.poll()`` found ready, as events."""
        if len(ready) == 1 and ready[0][0] == self.fd:
            self._read(None)                # the usual case: a reply, nothing else
            return
        fds = [fd for fd, _mask in ready]
        stderr = self._stderr
        if stderr is not None and stderr.fd in fds:
            if not stderr.drain():          # its end: nothing more to watch
                self.poller.unregister(stderr.fd)
                self._stderr = None
                self._watch()
        if ready[0][0] == self.fd or len(ready) > 1:
            self._read(None)
        if self.pidfd is not None and self.pidfd in fds:
            # Main process gone.  Everything it wrote is already in the pipe:
            # read it (bounded, a child may keep writing) so the reply it sent
            # just before dying comes first.
            self._read(None)
            self.events.append((EXIT, None, time.monotonic()))
            self.poller.unregister(self.pidfd)
            self.close()
            self._watch()

    def took(self, chunk: bytes, stamp: float) -> None:
        """Take in ``chunk``, read at ``stamp`` by ``_fastpipe.exchange`` (b"":
        the end of the pipe), as ``_read`` takes in the first chunk it reads."""
        if not chunk:
            self._ended(stamp, stamp)
            return
        self._emit(self.splitter.feed(chunk), stamp)
        if len(chunk) < CHUNK:
            self.seen_empty = stamp

    def _read(self, stamp: float | None) -> None:
        """Read what the pipe holds (at most ``DRAIN_CHUNKS`` chunks), stamped
        ``stamp`` or when read.  Fewer after chunks of many lines
        (``EVENTS_MAX``): each costs the arena far more than its bytes."""
        split = 0
        for _ in range(DRAIN_CHUNKS):
            try:
                chunk = os.read(self.fd, CHUNK)
            except OSError as exc:
                failed = self._read_failed(exc)
                if failed is None:
                    return
                chunk = failed
            now = time.monotonic()
            if not chunk:
                self._ended(now if stamp is None else stamp, now)
                return
            items = self.splitter.feed(chunk)
            self._emit(items, now if stamp is None else stamp)
            if len(chunk) < CHUNK:      # the pipe held less than a chunk: empty now
                self.seen_empty = now
                return
            split += len(items)
            if split >= EVENTS_MAX or len(self.events) >= EVENTS_MAX:
                return                  # many lines: enough to go on with, the rest waits in the pipe

    def _ended(self, stamp: float, now: float) -> None:
        """The end of the pipe: its unterminated last line, if any, then EOF."""
        self._emit(self.splitter.finish(), stamp)
        if not self.ended:
            LOG.debug("%s: stdout closed", self.bot)
            self.ended = True
            self.poller.unregister(self.fd)
            self._watch()
        self.events.append((EOF, None, now))

    def _read_failed(self, exc: OSError) -> bytes | None:
        """A failed read: None if the pipe is empty now, else its end (b"")."""
        if isinstance(exc, BlockingIOError):
            self.seen_empty = time.monotonic()
            return None
        LOG.debug("%s: stdout read failed: %s", self.bot, exc)
        return b""

    def _emit(self, items: list[tuple[str, object]], stamp: float) -> None:
        debug = LOG.isEnabledFor(logging.DEBUG)
        for kind, payload in items:
            if kind == LINE and (not payload or payload.isspace()):  # type: ignore[attr-defined]
                continue                # blank lines are ignored (docs/PROTOCOL.md): not kept
            if debug and kind == LINE:
                LOG.debug("%s << %s", self.bot, log_text(payload))  # type: ignore[arg-type]
            elif debug:
                head, size = cast("tuple[bytes, int]", payload)
                LOG.debug("%s << [line too long, %d bytes so far] %s", self.bot, size,
                          excerpt(head))
            self.events.append((kind, payload, stamp))

    def close(self) -> None:
        """Close the pidfd (the pipe belongs to the process object)."""
        if self.pidfd is not None:
            os.close(self.pidfd)
            self.pidfd = None
            self.watched = ()           # nothing for the C path to poll any more

    def __del__(self) -> None:
        # An interrupt can cut __init__ short, before the pidfd was kept.
        if getattr(self, "pidfd", None) is not None:
            self.close()
