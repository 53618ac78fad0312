"""Reading a bot's stderr (its stdout: ``streams``).

One small daemon thread per bot (``StderrReader``), blocked in ``poll()`` on
the pipe and on a wake-up pipe (``Wakeup``, so ``close()`` can always stop it
without closing an fd another thread is using).  The first
``stderr_max_bytes`` go to the per-match log file, the rest is counted and
dropped; the last few KiB are kept in memory for crash messages.  The log
file is created by its first byte (``LazyLog``: a bot that writes nothing
leaves no empty file), and ``StderrReader.mark()`` gives the log's offset at
the start of a request, after taking in whatever the bot had written before,
so each decision's stderr is a byte range.  ``streams.StdoutReader`` takes in
what the pipe holds while it waits for a reply (``StderrReader.drain``).
"""

from __future__ import annotations

import logging
import os
import select
import threading
from typing import IO, BinaryIO

# The name these lines had before they moved here from ``streams``: log
# files, filters and ``arena check``'s transcript keep the same logger name.
LOG = logging.getLogger("arena.process.streams")

__all__ = ["CHUNK", "DRAIN_CHUNKS", "POLL_READY", "STDERR_TAIL", "LazyLog", "StderrReader", "Wakeup"]

CHUNK = 64 * 1024        # one read, of stdout or stderr
DRAIN_CHUNKS = 64        # reads in one go before others get a turn (a bot may write without end)
STDERR_TAIL = 4096

POLL_READY = select.POLLIN | select.POLLHUP | select.POLLERR     # a pipe with data, or its end


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
        # while this thread writes, and takes marks (``PipeTransport.stderr_mark``).
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
        poller.register(self.fd, POLL_READY)
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
