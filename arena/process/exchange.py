"""Writing JSON lines to a bot and waiting for its reply lines.

``LineExchange`` is the part of ``BotProcess`` that moves the lines: writing
them to the bot's non-blocking stdin within a deadline, throwing away lines
nobody asked for, waiting for the reply to a request (timed from the reader
thread's stamps) and parsing it as one JSON object, or with the decoder the
caller gives (a protocol's typed codec: ``Decode``).
"""

from __future__ import annotations

import json
import logging
import math
import os
import queue
import select
import time
from collections.abc import Callable
from typing import Any, cast

from .errors import BotMalformed, BotTimeout, excerpt
from .exits import ProcessExits
from .jsonline import NO_ID, JSONLineError, decode_object
from .streams import EXIT, LINE, TOOLONG, Event, log_text

LOG = logging.getLogger(__name__)

# A reply decoder: line -> (value, the id it carries or NO_ID); raises
# JSONLineError for a line that is no acceptable reply at all.
Decode = Callable[[bytes], tuple[Any, Any]]


class LineExchange(ProcessExits):
    """The line-moving part of ``BotProcess``; the attributes below are set by
    ``BotProcess.__init__`` and ``start``.  A bot found dead on the way is
    turned into its failure by ``ProcessExits._died``."""

    stale_lines: int
    _events: queue.SimpleQueue[Event]
    _has_pidfd: bool

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
               is_stale_id: Callable[[Any], bool] | None = None,
               decode: Decode | None = None) -> tuple[Any, float]:
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
                value, value_id = self._parse(payload, decode)
                if (expect_id is not None and value_id is not NO_ID and value_id != expect_id
                        and (is_stale_id is None or is_stale_id(value_id))):
                    wrong_ids += 1
                    self.stale_lines += 1
                    LOG.warning("%s: ignoring reply with id %r (waiting for %r)", self.name,
                                value_id, expect_id)
                    continue
                return value, max(0.0, stamp - t0)
            if kind == TOOLONG:
                head, _size = cast("tuple[bytes, int]", payload)
                raise BotMalformed(f"line too long (more than {self.spec.max_line_bytes} bytes)",
                                   head, bot=self.name)
            raise self._died(kind)

    def _parse(self, raw: bytes, decode: Decode | None) -> tuple[Any, Any]:
        try:
            if decode is not None:
                return decode(raw)
            value = decode_object(raw)
            return value, value.get("id", NO_ID)
        except JSONLineError as exc:
            raise BotMalformed(exc.reason, raw, bot=self.name) from None
