"""Reader threads for a bot's stdout and stderr.

Design: one small daemon thread per stream, blocked in ``poll()`` on the pipe
and on a wake-up pipe (so ``close()`` can always stop it without closing an
fd another thread is using).  Compared with a single selector loop driven by
the caller, the threads keep draining while the arena is busy elsewhere, so a
bot never blocks on a full pipe, and they stamp every line with
``time.monotonic()`` the moment it is read: the arena's own latency in picking
the line up is never charged to the bot.

* stdout: bytes are split into lines by ``LineSplitter``, which never holds
  more than ``max_line_bytes`` plus one read chunk; a longer line is reported
  once (with an excerpt) and the rest of it is read and thrown away.  Events go
  to a ``queue.SimpleQueue`` as ``(kind, payload, stamp)``.  The thread also
  polls a pidfd of the bot's main process so the death of the bot is noticed
  even when a forked child still holds stdout open.
* stderr: the first ``stderr_max_bytes`` go to the per-match log file, the
  rest is counted and dropped; the last few KiB are kept in memory for crash
  messages.
"""

from __future__ import annotations

import logging
import os
import queue
import select
import threading
import time
from typing import IO, BinaryIO, cast

from .errors import excerpt

LOG = logging.getLogger(__name__)

CHUNK = 64 * 1024
LOG_LINE_MAX = 4096      # longer lines are logged truncated (the bot still gets judged on all of it)
STDERR_TAIL = 4096

# Event kinds on the stdout queue.
LINE = "line"            # payload: bytes (without newline)
TOOLONG = "toolong"      # payload: (first bytes of the line, bytes seen so far)
EOF = "eof"              # stdout closed
EXIT = "exit"            # the main process exited (not reaped yet)

Event = tuple[str, object, float]

_POLL_READY = select.POLLIN | select.POLLHUP | select.POLLERR


def log_text(data: bytes) -> str:
    if len(data) <= LOG_LINE_MAX:
        return data.decode("utf-8", errors="replace")
    return f"{excerpt(data, LOG_LINE_MAX)} [{len(data)} bytes]"


class LineSplitter:
    """Incremental newline splitter with a hard cap on the line length."""

    def __init__(self, max_line_bytes: int) -> None:
        self.max_line_bytes = max_line_bytes
        self._buf = bytearray()
        self._discarding = False      # inside a too-long line: drop until newline
        self.discarded_bytes = 0

    def feed(self, chunk: bytes) -> list[tuple[str, object]]:
        out: list[tuple[str, object]] = []
        start, end = 0, len(chunk)
        while start < end:
            nl = chunk.find(b"\n", start)
            if self._discarding:
                stop = end if nl < 0 else nl
                self.discarded_bytes += stop - start
                if nl < 0:
                    break
                self._discarding = False
                start = nl + 1
                continue
            if nl < 0:
                self._buf += chunk[start:]
                if len(self._buf) > self.max_line_bytes:
                    out.append((TOOLONG, (bytes(self._buf[:1024]), len(self._buf))))
                    self.discarded_bytes += len(self._buf)
                    self._buf.clear()
                    self._discarding = True
                break
            size = len(self._buf) + nl - start
            if size > self.max_line_bytes:
                head = bytes(self._buf[:1024]) or chunk[start:start + 1024]
                out.append((TOOLONG, (head, size)))
                self.discarded_bytes += size
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


class Wakeup:
    """Self-pipe used to stop reader threads.  Closed when garbage collected,
    i.e. only after every thread holding it has finished."""

    def __init__(self) -> None:
        self.r, self.w = os.pipe()          # O_CLOEXEC: bots never inherit it
        os.set_blocking(self.w, False)

    def set(self) -> None:
        try:
            os.write(self.w, b"x")
        except (BlockingIOError, OSError):
            pass                           # already set, or closed

    def __del__(self) -> None:
        # An interrupt (a stopping worker's SIGTERM) can cut __init__ short.
        for fd in (getattr(self, "r", None), getattr(self, "w", None)):
            if fd is None:
                continue
            try:
                os.close(fd)
            except OSError:
                pass


class StdoutReader(threading.Thread):
    """Turns the bot's stdout into LINE / TOOLONG / EOF / EXIT events."""

    def __init__(self, name: str, stream: IO[bytes], pidfd: int | None, wake: Wakeup,
                 max_line_bytes: int, events: queue.SimpleQueue[Event]) -> None:
        super().__init__(name=f"bot-{name}-stdout", daemon=True)
        self.bot = name
        self.stream = stream            # kept referenced: its fd must stay open while we run
        self.fd = stream.fileno()
        self.pidfd = pidfd
        self.wake = wake
        self.splitter = LineSplitter(max_line_bytes)
        self.events = events
        os.set_blocking(self.fd, False)

    def _emit(self, items: list[tuple[str, object]], stamp: float) -> None:
        debug = LOG.isEnabledFor(logging.DEBUG)
        for kind, payload in items:
            if debug and kind == LINE:
                LOG.debug("%s << %s", self.bot, log_text(payload))  # type: ignore[arg-type]
            elif debug:
                head, size = cast("tuple[bytes, int]", payload)
                LOG.debug("%s << [line too long, %d bytes so far] %s", self.bot, size,
                          excerpt(head))
            self.events.put((kind, payload, stamp))

    def _read(self) -> bool:
        """Read one chunk; False at end of stream."""
        try:
            chunk = os.read(self.fd, CHUNK)
        except BlockingIOError:
            return True
        except OSError as exc:
            LOG.debug("%s: stdout read failed: %s", self.bot, exc)
            chunk = b""
        stamp = time.monotonic()
        if not chunk:
            self._emit(self.splitter.finish(), stamp)
            LOG.debug("%s: stdout closed", self.bot)
            self.events.put((EOF, None, stamp))
            return False
        self._emit(self.splitter.feed(chunk), stamp)
        return True

    def run(self) -> None:
        poller = select.poll()
        poller.register(self.fd, _POLL_READY)
        poller.register(self.wake.r, select.POLLIN)
        if self.pidfd is not None:
            poller.register(self.pidfd, select.POLLIN)
        try:
            while True:
                ready = dict(poller.poll())
                if self.wake.r in ready:
                    return
                if self.fd in ready:
                    if not self._read():
                        return
                elif self.pidfd is not None and self.pidfd in ready:
                    # Main process gone.  Everything it wrote is already in the
                    # pipe: drain it (bounded, a child may keep writing) so the
                    # reply it sent just before dying is delivered first.
                    for _ in range(64):
                        if not self._pipe_ready():
                            break
                        if not self._read():
                            return
                    self.events.put((EXIT, None, time.monotonic()))
                    poller.unregister(self.pidfd)
                    os.close(self.pidfd)
                    self.pidfd = None
        finally:
            if self.pidfd is not None:
                os.close(self.pidfd)
                self.pidfd = None

    def _pipe_ready(self) -> bool:
        p = select.poll()
        p.register(self.fd, _POLL_READY)
        return bool(p.poll(0))


class StderrReader(threading.Thread):
    """Copies the bot's stderr to its log (bounded), counts what is dropped."""

    def __init__(self, name: str, stream: IO[bytes], wake: Wakeup, log_file: BinaryIO | None,
                 max_bytes: int) -> None:
        super().__init__(name=f"bot-{name}-stderr", daemon=True)
        self.bot = name
        self.stream = stream
        self.fd = stream.fileno()
        self.wake = wake
        self.log_file = log_file
        self.max_bytes = max_bytes
        self.kept = 0
        self.dropped = 0
        self.tail = bytearray()
        # Guards log_file/kept/dropped: the owner may switch files (next match)
        # while this thread writes.
        self._lock = threading.Lock()
        self._finished = False
        os.set_blocking(self.fd, False)

    def switch_log(self, log_file: BinaryIO | None) -> bool:
        """Close the current log (with its truncation note) and continue in
        ``log_file`` with a fresh byte budget.  False if the thread has already
        finished (the caller keeps ownership of ``log_file`` then)."""
        with self._lock:
            if self._finished:
                return False
            self._close_log()
            self.log_file = log_file
            self.kept = 0
            self.dropped = 0
            return True

    def run(self) -> None:
        poller = select.poll()
        poller.register(self.fd, _POLL_READY)
        poller.register(self.wake.r, select.POLLIN)
        try:
            while True:
                ready = dict(poller.poll())
                if self.wake.r in ready:
                    return
                try:
                    chunk = os.read(self.fd, CHUNK)
                except BlockingIOError:
                    continue
                except OSError as exc:
                    LOG.debug("%s: stderr read failed: %s", self.bot, exc)
                    return
                if not chunk:
                    return
                self._store(chunk)
        finally:
            self._finish()

    def _store(self, chunk: bytes) -> None:
        with self._lock:
            room = self.max_bytes - self.kept
            keep = chunk[:room] if room > 0 else b""
            if keep and self.log_file is not None:
                try:
                    self.log_file.write(keep)
                    # Flushed at once: the log is read (e.g. by ``arena check``)
                    # while a pooled process keeps running.
                    self.log_file.flush()
                except OSError as exc:
                    LOG.warning("%s: cannot write stderr log: %s", self.bot, exc)
                    self.log_file = None
            self.kept += len(keep)
            self.dropped += len(chunk) - len(keep)
        self.tail += chunk[-STDERR_TAIL:]
        if len(self.tail) > STDERR_TAIL:
            del self.tail[:-STDERR_TAIL]

    def _finish(self) -> None:
        with self._lock:
            self._finished = True
            self._close_log()

    def _close_log(self) -> None:
        """Close the current log, noting what was dropped.  Caller holds the lock."""
        if self.log_file is None:
            return
        try:
            if self.dropped:
                self.log_file.write(
                    f"\n[arena] stderr truncated: {self.dropped} more bytes dropped "
                    f"(limit {self.max_bytes} bytes)\n".encode())
            self.log_file.close()
        except OSError as exc:
            LOG.warning("%s: cannot write stderr log: %s", self.bot, exc)
        self.log_file = None

    def tail_text(self) -> str:
        return bytes(self.tail).decode("utf-8", errors="replace")
