"""Waiting for a bot's reply lines, over a transport's events.

Plain functions over a ``transport.Transport``: throwing away lines nobody
asked for (kept in ``IgnoredLines`` for the match record), waiting for the
reply to a request (timed from the stamps of the events) and parsing it as
one JSON object, or with the decoder the caller gives (a protocol's typed
codec: ``Decode``).  A bot found dead on the way is turned into its failure
by the transport (``Transport.died``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NamedTuple, cast

from ..jsonline import NO_ID, JSONLineError, decode_object
from .errors import BotFailure, BotMalformed, BotTimeout, excerpt
from .streams import LINE, TOOLONG, Event
from .transport import QUOTED_LINES, Transport

LOG = logging.getLogger(__name__)
IGNORED_KEPT = 5            # texts of ignored lines kept between two ``take``

# A reply decoder: line -> (value, the id it carries or NO_ID); raises
# JSONLineError for a line that is no acceptable reply at all.
Decode = Callable[[bytes], tuple[Any, Any]]


@dataclass
class IgnoredLines:
    """Lines thrown away: unsolicited, late or with a wrong id."""

    stale: int = 0                   # all of them, since the start
    since: int = 0                   # since the last ``take``
    kept: list[str] = field(default_factory=list)   # the first few of those

    def note(self, label: str, what: str) -> None:
        """Counted, kept for the match record (the first ``IGNORED_KEPT``),
        logged as information, not as a warning: the match reports it, and a
        bot that repeats every reply must not flood the console."""
        self.stale += 1
        self.since += 1
        if len(self.kept) < IGNORED_KEPT:
            self.kept.append(what)
        LOG.info("%s: ignoring %s", label, what)

    def take(self) -> tuple[int, list[str]]:
        """How many lines were thrown away since the last call, and the first of them."""
        count, kept = self.since, self.kept
        self.since, self.kept = 0, []
        return count, kept


def parse_object(raw: bytes) -> tuple[Any, Any]:
    """The strict decoder: one JSON object, and its ``"id"`` (or NO_ID)."""
    value = decode_object(raw)
    return value, value.get("id", NO_ID)


def drain_pending(transport: Transport, ignored: IgnoredLines) -> None:
    """Throw away lines nobody asked for; a pending death is raised now."""
    # What is there now, once: a bot that writes without pause must not
    # hold the arena here (what it writes on is judged as its reply).
    said: list[str] = []
    for kind, payload, _stamp in transport.take_pending():
        if kind == LINE:
            if payload.strip():
                said.append(excerpt(payload))
                ignored.note(transport.label, f"unsolicited line: {said[-1]}")
        elif kind == TOOLONG:
            ignored.note(transport.label, "unsolicited over-long line")
        else:
            raise transport.died(kind, said[-QUOTED_LINES:])


class Wait(NamedTuple):
    """What a reply is waited for: from ``t0`` (its timing starts there) for
    ``limit`` seconds, carrying ``expect_id`` (None: any).  Lines read before
    ``not_before`` (when the request started to be written) cannot be its
    reply; without it no drain came first.  A named tuple, not a frozen
    dataclass: made once a decision, it cost a fifth as much."""

    t0: float
    limit: float
    expect_id: Any
    not_before: float | None = None
    is_stale_id: Callable[[Any], bool] | None = None
    decode: Decode | None = None


def await_reply(transport: Transport, ignored: IgnoredLines, wait: Wait,
                first: Event | None = None) -> tuple[Any, float]:
    """The next reply line and its seconds.  A reply may be stamped a hair
    before ``t0`` (the bot answered before the writing thread took its
    timestamp): that counts as 0 s.  Without ``not_before``, lines already
    waiting in the pipe came while nobody waited for them, and count as come
    at ``t0`` (``StdoutReader.waiting``).  ``first``: the first event, read
    already (``Transport.send_and_wait``)."""
    t0, limit, expect_id = wait.t0, wait.limit, wait.expect_id
    if wait.not_before is None:
        transport.waiting(t0)
    deadline = t0 + limit
    wrong_ids = 0
    while True:
        if first is not None:
            event: Event | None = first
            first = None
        else:
            remaining = deadline - transport.now()
            event = transport.next_event(remaining)
        if event is None:
            if remaining > 0:
                continue
            raise _no_reply(transport, t0, limit, wrong_ids)
        kind, payload, stamp = event
        if kind == TOOLONG:
            head, _size = cast("tuple[bytes, int]", payload)
            raise BotMalformed(f"line too long (more than {transport.spec.max_line_bytes} bytes)",
                               head, bot=transport.name)
        if kind != LINE:
            raise transport.died(kind)
        # Never blank: the reader keeps no blank line.
        if wait.not_before is not None and stamp < wait.not_before:
            ignored.note(transport.label, f"unsolicited line: {excerpt(payload)}")
            continue
        if stamp > deadline:
            ignored.stale += 1
            raise BotTimeout(f"reply came after {stamp - t0:.3f} s, limit {limit:.3f} s",
                             bot=transport.name, limit=limit, elapsed=stamp - t0)
        try:
            value, value_id = (wait.decode or parse_object)(payload)
        except JSONLineError as exc:
            raise BotMalformed(exc.reason, payload, bot=transport.name) from None
        if (expect_id is not None and value_id is not NO_ID and value_id != expect_id
                and (wait.is_stale_id is None or wait.is_stale_id(value_id))):
            wrong_ids += 1
            ignored.note(transport.label, f"reply with id {value_id!r} while waiting for {expect_id!r}")
            continue
        return value, (stamp - t0 if stamp > t0 else 0.0)


def _no_reply(transport: Transport, t0: float, limit: float, wrong_ids: int) -> BotFailure:
    """The timeout, or the crash of a sandboxed bot that closed its stdout."""
    crash = transport.no_reply_crash()
    if crash is not None:
        return crash
    extra = f" (ignored {wrong_ids} replies with another id)" if wrong_ids else ""
    return BotTimeout(f"no reply within {limit:.3f} s{extra}", bot=transport.name,
                      limit=limit, elapsed=transport.now() - t0)
