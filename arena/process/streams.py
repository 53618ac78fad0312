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
* stderr: one small daemon thread (``StderrReader``), blocked in ``poll()``
  on the pipe and on a wake-up pipe (so ``close()`` can always stop it
  without closing an fd another thread is using).  The first
  ``stderr_max_bytes`` go to the per-match log file, the rest is counted and
  dropped; the last few KiB are kept in memory for crash messages.  The log
  file is created by its first byte (``LazyLog``: a bot that writes nothing
  leaves no empty file), and ``StderrReader.mark()`` gives the log's offset at
  the start of a request, after taking in whatever the bot had written before,
  so each decision's stderr is a byte range.
"""

from __future__ import annotations

import logging
import math
import os
import select
import threading
import time
from collections import deque
from typing import IO, Any, BinaryIO, cast

from .errors import excerpt

LOG = logging.getLogger(__name__)

CHUNK = 64 * 1024
LOG_LINE_MAX = 4096      # longer lines are logged truncated (the bot still gets judged on all of it)
STDERR_TAIL = 4096

DRAIN_CHUNKS = 64        # reads in one go before others get a turn (a bot may write without end)
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

_POLL_READY = select.POLLIN | select.POLLHUP | select.POLLERR


def debug_cache(log: logging.Logger) -> dict[int, bool]:
    """The dict in which ``log`` keeps what ``isEnabledFor`` answered, level by
    level (a private attribute of ``logging.Logger``, cleared in place when
    levels change; an empty dict where there is none): ``cache.get(DEBUG)``
    is True or False once asked, None before.  Asking it costs a dict look-up
    instead of a Python call, on paths taken once a decision."""
    cache = getattr(log, "_cache", None)
    return cache if isinstance(cache, dict) else {}


_DEBUG_CACHE = debug_cache(LOG)


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
        self.discarded_bytes = 0

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
        # Polled by the thread that talks to the bot (``BotProcess.request_data`` too).
        self.poller = select.poll()
        self.poller.register(self.fd, _POLL_READY)
        # What ``poll`` gives when only a line (or more) waits in the pipe.
        self._just_stdout = [(self.fd, select.POLLIN)]
        # The last index of one whole line that ``get`` takes as it is: less
        # than a chunk (the pipe is empty then), within the line limit.
        self._whole_max = min(CHUNK - 2, max_line_bytes)
        if pidfd is not None:
            self.poller.register(pidfd, select.POLLIN)
        # stderr is watched too while we wait: what a bot writes there before
        # its reply is then taken in as the reply comes, so the next decision's
        # stderr mark needs no read of its own (see StderrReader.mark).
        self._stderr = stderr
        if stderr is not None:
            self.poller.register(stderr.fd, _POLL_READY)
        os.set_blocking(self.fd, False)

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
        if ready != self._just_stdout:      # not only the pipe, readable
            self.take(ready)
            return events.popleft() if events else None
        fd = self.fd
        # The usual case, once a decision: the pipe holds one whole line, the
        # reply.  ``_read``, ``LineSplitter.feed`` and ``_emit`` inline; any
        # other chunk goes through them.
        try:
            chunk = os.read(fd, CHUNK)
        except OSError as exc:
            failed = self._read_failed(exc)
            if failed is None:
                return None
            chunk = failed
        now = time.monotonic()
        end = len(chunk) - 1
        splitter = self.splitter
        if (0 <= end <= self._whole_max and chunk.find(b"\n") == end
                and not splitter._buf and not splitter._discarding):
            self.seen_empty = now           # less than a chunk: the pipe is empty now
            line = chunk[:end]
            if not line or line.isspace():
                return None                 # blank lines are ignored: not kept
            debug = _DEBUG_CACHE.get(logging.DEBUG)
            if debug or (debug is None and LOG.isEnabledFor(logging.DEBUG)):
                LOG.debug("%s << %s", self.bot, log_text(line))
            return (LINE, line, now)
        self._read(None, chunk, now)
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
            poller.register(self.fd, _POLL_READY)
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

    def _read(self, stamp: float | None, first: bytes | None = None, first_at: float = 0.0) -> None:
        """Read what the pipe holds (at most ``DRAIN_CHUNKS`` chunks), stamped
        ``stamp`` or when read.  Fewer after chunks of many lines
        (``EVENTS_MAX``): each costs the arena far more than its bytes.
        ``first``: a chunk already read, at ``first_at`` (``get``)."""
        split = 0
        for _ in range(DRAIN_CHUNKS):
            if first is not None:
                chunk, now, first = first, first_at, None
            else:
                try:
                    chunk = os.read(self.fd, CHUNK)
                except OSError as exc:
                    failed = self._read_failed(exc)
                    if failed is None:
                        return
                    chunk = failed
                now = time.monotonic()
            if not chunk:
                self._emit(self.splitter.finish(), now if stamp is None else stamp)
                if not self.ended:
                    LOG.debug("%s: stdout closed", self.bot)
                    self.ended = True
                    self.poller.unregister(self.fd)
                self.events.append((EOF, None, now))
                return
            items = self.splitter.feed(chunk)
            self._emit(items, now if stamp is None else stamp)
            if len(chunk) < CHUNK:      # the pipe held less than a chunk: empty now
                self.seen_empty = now
                return
            split += len(items)
            if split >= EVENTS_MAX or len(self.events) >= EVENTS_MAX:
                return                  # many lines: enough to go on with, the rest waits in the pipe

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

    def __del__(self) -> None:
        # An interrupt can cut __init__ short, before the pidfd was kept.
        if getattr(self, "pidfd", None) is not None:
            self.close()


class LazyLog:
    """An append-only log file that is only created when the first byte comes."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.name = os.fspath(path)
        self._file: BinaryIO | None = None
        # Bytes in the file so far (where the next byte will go); read once a decision.
        try:
            self.offset = os.path.getsize(self.name)   # appending to an existing log
        except OSError:
            self.offset = 0

    def write(self, data: bytes) -> None:
        if self._file is None:
            self._file = open(self.name, "ab")  # noqa: SIM115 - closed by close()
        self._file.write(data)
        self._file.flush()
        self.offset += len(data)

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


class StderrReader(threading.Thread):
    """Copies the bot's stderr to its log (bounded), counts what is dropped."""

    def __init__(self, name: str, stream: IO[bytes], wake: Wakeup, log_file: LazyLog | None,
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
        # while this thread writes, and takes marks (``BotProcess.stderr_mark``).
        self.lock = threading.Lock()
        self._finished = False
        os.set_blocking(self.fd, False)

    def switch_log(self, log_file: LazyLog | None) -> bool:
        """Close the current log (with its truncation note) and continue in
        ``log_file`` with a fresh byte budget.  False if the thread has already
        finished (the caller keeps ownership of ``log_file`` then).  What the
        pipe holds now goes to the current log first: the bot wrote it before
        the switch (after its last match's 'end', say), so it belongs there."""
        with self.lock:
            if self._finished:
                return False
            self._drain()
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
                # Read and stored under the lock: mark() must not slip in
                # between a read and its store, or bytes would land after it.
                with self.lock:
                    if not self._drain():
                        return
        finally:
            self._finish()

    def mark(self, drain: bool = False) -> int | None:
        """The log's offset where the next decision's stderr starts (None
        without a log).  A bot writes its stderr before its reply, and what was
        in the pipe when the reply came was taken in then (``StdoutReader``
        watches stderr while it waits): no read is needed here, only the lock,
        so a chunk this thread has read is stored before the offset is taken.
        ``drain`` takes in what the pipe holds first (the end of a match: the
        bot may write after its last reply)."""
        with self.lock:
            if drain:
                self._drain()
            return self.log_file.offset if self.log_file is not None else None

    def drain(self) -> bool:
        """Take in what the pipe holds now; False at its end."""
        with self.lock:
            return self._drain()

    def _drain(self) -> bool:
        """Read and store what the pipe holds (at most ``DRAIN_CHUNKS`` chunks:
        a bot may write without pause); False at end of stream.  Caller holds
        the lock."""
        for _ in range(DRAIN_CHUNKS):
            try:
                chunk = os.read(self.fd, CHUNK)
            except BlockingIOError:
                return True             # empty now (or taken in by the other thread)
            except OSError as exc:
                LOG.debug("%s: stderr read failed: %s", self.bot, exc)
                return False
            if not chunk:
                return False
            self._store(chunk)
        return True

    def _store(self, chunk: bytes) -> None:
        """Caller holds the lock."""
        room = self.max_bytes - self.kept
        keep = chunk[:room] if room > 0 else b""
        if keep and self.log_file is not None:
            try:
                # Flushed at once: the log is read (e.g. by ``arena check``)
                # while a pooled process keeps running.
                self.log_file.write(keep)
            except OSError as exc:
                LOG.warning("%s: cannot write stderr log: %s", self.bot, exc)
                self.log_file = None
        self.kept += len(keep)
        self.dropped += len(chunk) - len(keep)
        self.tail += chunk[-STDERR_TAIL:]
        if len(self.tail) > STDERR_TAIL:
            del self.tail[:-STDERR_TAIL]

    def _finish(self) -> None:
        with self.lock:
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
