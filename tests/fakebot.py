"""A bot without a process: ``FakeTransport`` answers what ``BotProcess``
writes from a Python function, in-process (the model: python-chess's
``MockTransport`` in ``chess/engine.py``).

An answer function gets each message the arena writes (parsed: start,
events, requests, errors, end, quit) and returns what the bot does then, in
order, as a list of:

- ``Line(text)``: a line on stdout (a reply, or anything else: malformed,
  a wrong id), stamped ``delay`` seconds after the write (a reply later
  than its limit is not there when the wait ends: a timeout);
- ``Stderr(text)``: text on stderr (kept in its tail and its log);
- ``Exit(code)``: the bot's main process exits with ``code`` (a crash).

The bot is sequential, as a process is: a line comes no earlier than the
one it wrote before (a late reply holds up the replies after it).

Time is the transport's ``FakeClock``, the clock ``BotProcess`` times it
by (``Transport.now``): it passes only when the arena waits (for a silence,
at once by the whole wait; for a late line, to its stamp), so timeouts and
time banks are exact and nothing sleeps.

The lines both ways are logged as ``PipeTransport`` and its reader log
them (``>>`` on ``arena.process.exchange``, ``<<`` on
``arena.process.streams``), at the moment a process's would be: what
``arena check``'s transcript reads.  What only a process has (limits,
sandbox, signals, pipes, the turn guard) stays in the real process tests.
``fakes(...)`` makes a ``BotPool`` transport factory that finds a seat's
answer function by its command's program name; ``session_bot`` makes an
answer function of a ``botkit.BotSession`` (a whole bot, in-process).
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import os
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from arena.botkit import BotSession
from arena.match import MatchResult
from arena.process.confine.spec import BotSpec
from arena.process.errors import BotCrashed, BotFailure, describe_exit, excerpt
from arena.process.streams import EOF, EXIT, LINE, TOOLONG, Event, log_text
from arena.process.streams import LOG as READ_LOG
from arena.process.transport import QUOTED_LINES, WIRE, Transport, TransportFactory, TransportSetup


@dataclass(frozen=True)
class Line:
    text: str | bytes
    delay: float = 0.0


@dataclass(frozen=True)
class Stderr:
    text: str


@dataclass(frozen=True)
class Exit:
    code: int


Reply = Line | Stderr | Exit
Answer = Callable[[dict[str, Any]], list[Reply]]


class FakeClock:
    """A fake transport's time (its ``now``): it passes only when the arena
    waits on it (``sleep``), a line is read that was stamped later
    (``reach``), or a test says so (``advance``)."""

    def __init__(self, start: float = 1000.0) -> None:
        self.time = start

    def now(self) -> float:
        return self.time

    def advance(self, seconds: float) -> None:
        self.time += max(seconds, 0.0)

    def sleep(self, seconds: float) -> None:
        """The arena waits ``seconds`` for a bot that is silent meanwhile."""
        self.advance(seconds)

    def reach(self, stamp: float) -> None:
        """A line stamped ``stamp`` is read: the time it came."""
        self.time = max(self.time, stamp)


def minimal_reply(msg: dict[str, Any]) -> dict[str, Any]:
    """tests/gamebots/common.py's policy: stock, never buy, first option."""
    kind = msg["kind"]
    if kind == "draw":
        return {"id": msg["id"], "draw": "stock"}
    if kind == "buy":
        return {"id": msg["id"], "buy": False}
    return {"id": msg["id"], "discard": msg["options"][0]}


def game_bot(on_request: Callable[[dict[str, Any]], list[Reply]] | None = None,
             name: str = "minimal") -> Answer:
    """The protocol loop of tests/gamebots/common.py: ready (protocol 2) at
    start, ``on_request`` (the minimal reply by default) for each request,
    which sees the request's ``count`` in this process as the scripts do."""
    count = 0

    def answer(msg: dict[str, Any]) -> list[Reply]:
        nonlocal count
        kind = msg.get("type")
        if kind == "start":
            return [Line(json.dumps({"type": "ready", "name": name, "protocol": 2}))]
        if kind == "request":
            count += 1
            msg["count"] = count
            if on_request is None:
                return [Line(json.dumps(minimal_reply(msg)))]
            return on_request(msg)
        return []
    return answer


class FakeTransport:
    """A ``Transport`` whose bot is ``answer`` (see the module docstring)."""

    def __init__(self, spec: BotSpec, setup: TransportSetup, answer: Answer,
                 clock: FakeClock | None = None) -> None:
        self.spec = spec
        self.name = setup.name
        self.label = setup.label
        self.stderr_log = setup.stderr_log
        self.answer = answer
        self.clock = clock or FakeClock()
        self.failure: BotFailure | None = None
        self.returncode: int | None = None
        self.exit_description: str | None = None
        self.written: list[bytes] = []          # every line the arena wrote, in order
        self.stderr = ""
        self._events: deque[Event] = deque()
        self._logged = 0                         # events at the head of _events logged as read
        self._last = float("-inf")               # the stamp of the last line it wrote
        self._started = self._closed = self._exited = False

    def __repr__(self) -> str:
        return f"<FakeTransport {self.name!r}>"

    started = property(lambda self: self._started)
    closed = property(lambda self: self._closed)
    alive = property(lambda self: self._started and not self._exited)
    pid = property(lambda self: None)
    stderr_tail = property(lambda self: self.stderr[-4096:])
    stderr_dropped = property(lambda self: 0)

    def now(self) -> float:
        return self.clock.now()

    def start(self) -> FakeTransport:
        self._started = True
        return self

    def send_and_wait(self, data: bytes, deadline: float, limit: float) -> tuple[float | None, Event | None]:
        return None, None           # as a process without the C part: drained, then written

    def write(self, data: bytes, deadline: float, limit: float) -> float:
        if self._exited:          # as a pipe: what it wrote before it went is quoted
            said = [excerpt(payload) for kind, payload, _stamp in self.take_pending() if kind == LINE]
            raise self.died("stdin", said[:QUOTED_LINES])
        self._log_read()                          # what came before this write
        lines = data.split(b"\n")[:-1]
        if WIRE.isEnabledFor(logging.DEBUG):
            for line in lines:
                WIRE.debug("%s >> %s", self.label, log_text(line))
        now = self.clock.now()
        for line in lines:
            self.written.append(line)
            for reply in self.answer(json.loads(line)):
                self._do(reply, now)
                if self._exited:
                    break
            if self._exited:
                break
        self._log_read()
        return now

    def _stamp(self, at: float) -> float:
        """Not before the line it wrote before: the bot is sequential."""
        self._last = max(at, self._last)
        return self._last

    def _do(self, reply: Reply, now: float) -> None:
        if isinstance(reply, Stderr):
            self.stderr += reply.text
            if self.stderr_log is not None:
                os.makedirs(os.path.dirname(os.path.abspath(self.stderr_log)), exist_ok=True)
                with open(self.stderr_log, "a", encoding="utf-8") as log:
                    log.write(reply.text)
        elif isinstance(reply, Exit):
            self._exited = True
            self.returncode = reply.code
            self.exit_description = describe_exit(reply.code)
            self._events.append((EXIT, None, self._stamp(now)))
        else:
            raw = reply.text.encode() if isinstance(reply.text, str) else reply.text
            for line in raw.split(b"\n"):
                if len(line) > self.spec.max_line_bytes:
                    self._events.append((TOOLONG, (line[:200], len(line)), self._stamp(now + reply.delay)))
                elif line.strip():               # blank lines are not kept, as by the reader
                    self._events.append((LINE, line, self._stamp(now + reply.delay)))

    def _log_read(self, upto: float | None = None) -> None:
        """Log the lines come by ``upto`` (now), as the reader thread does
        when it reads them, whether or not anyone waits for them."""
        upto = self.clock.now() if upto is None else upto
        events = self._events
        while self._logged < len(events) and events[self._logged][2] <= upto:
            self._log(events[self._logged])
            self._logged += 1

    def _log(self, event: Event) -> None:
        kind, payload, _stamp = event
        if not READ_LOG.isEnabledFor(logging.DEBUG):
            return
        if kind == LINE:
            READ_LOG.debug("%s << %s", self.label, log_text(payload))
        elif kind == TOOLONG:
            head, size = payload
            READ_LOG.debug("%s << [line too long, %d bytes so far] %s", self.label, size, log_text(head))

    def _pop(self) -> Event:
        event = self._events.popleft()
        if self._logged:
            self._logged -= 1
        else:
            self._log(event)
        return event

    def next_event(self, timeout: float) -> Event | None:
        now = self.clock.now()
        if self._events and self._events[0][2] <= now + max(timeout, 0.0):
            self.clock.reach(self._events[0][2])
            event = self._pop()
            self._log_read()
            return event
        if timeout > 0:
            self.clock.sleep(timeout)            # nothing comes in time: as a pipe, wait it out
            self._log_read()
        return None

    def take_pending(self) -> list[Event]:
        now = self.clock.now()
        taken = []
        while self._events and self._events[0][2] <= now:
            taken.append(self._pop())
        return taken

    def waiting(self, floor: float) -> None:
        """Stamps are given when written: nothing to do."""

    def died(self, cause: str, said: Sequence[str] = ()) -> BotCrashed:
        if self._exited:
            message = self.exit_description or "exited"
        else:
            message = f"closed its {'stdout' if cause == EOF else 'stdin'} (killed)"
            self.returncode = -9
        self._exited = True
        if said:
            message += f'; stdout: "{excerpt(" | ".join(said))}"'
        last = [line for line in self.stderr.splitlines() if line.strip()]
        if last:
            message += f"; stderr: {excerpt(last[-1])}"
        exc = BotCrashed(message, bot=self.name, returncode=self.returncode,
                         stderr_tail=self.stderr_tail, stdout_first=said[0] if said else None)
        self.failure = exc
        return exc

    def no_reply_crash(self) -> BotCrashed | None:
        return None

    def exit_failure(self, timeout: float, line: str | None = None) -> BotCrashed | None:
        if self._closed or not self._exited or isinstance(self.failure, BotCrashed):
            return self.failure if isinstance(self.failure, BotCrashed) else None
        return self.died(EXIT, [line] if line else [])

    def close(self, quit_data: bytes | None, grace: float, term_grace: float) -> int | None:
        if not self._started or self._closed:
            return self.returncode
        self._closed = True
        self._log_read(float("inf"))            # what it wrote before it was closed
        if not self._exited:
            if quit_data is not None and self.failure is None:
                self.written.append(quit_data.rstrip(b"\n"))
            self.returncode = 0 if quit_data is not None and grace > 0 else -9
            self._exited = True
        return self.returncode

    def relabel(self, label: str) -> None:
        self.label = label

    def stderr_mark(self, drain: bool = False) -> int | None:
        if self.stderr_log is None:
            return None
        return os.path.getsize(self.stderr_log) if os.path.exists(self.stderr_log) else 0

    def set_stderr_log(self, path: str | os.PathLike[str] | None) -> None:
        self.stderr_log = path

    def turn_start(self, at: float) -> None:
        """No turn guard: it has no CPU of its own."""

    def turn_end(self, at: float) -> None:
        """No turn guard."""

    def own_time(self, at: float) -> None:
        """No turn guard."""

    def park(self) -> None:
        """Nothing runs while it waits in a pool."""

    def unpark(self) -> None:
        """Nothing to resume."""


def fakes(bots: Mapping[str, Callable[[], Answer]], clock: FakeClock | None = None) -> TransportFactory:
    """A transport factory for ``BotPool``: a seat whose command is
    ``[name, ...]`` gets a fresh ``bots[name]()`` per process started, all
    on ``clock`` (a new one by default: the time of whatever the pool plays)."""
    clock = clock or FakeClock()

    def factory(spec: BotSpec, setup: TransportSetup) -> Transport:
        return FakeTransport(spec, setup, bots[spec.argv[0]](), clock)
    return factory


def session_bot(make: Callable[[io.StringIO], BotSession]) -> Answer:
    """A ``botkit`` bot as the answer function, as tests/checkbots/common.py
    runs one: ``make(stderr)`` makes its session, which handles each
    message.  It writes the lines its ``lines_for(msg, reply)`` gives
    (``[reply]`` without one), after what it printed on stdout meanwhile;
    what it logs on ``stderr`` is its stderr."""
    err = io.StringIO()
    session = make(err)
    lines_for = getattr(session, "lines_for", None)

    def answer(msg: dict[str, Any]) -> list[Reply]:
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            reply = session.handle(msg)
            out = lines_for(msg, reply) if lines_for is not None else [] if reply is None else [reply]
        said: list[Reply] = [Stderr(err.getvalue())] if err.tell() else []
        err.seek(0)
        err.truncate()
        said += [Line(text) for text in printed.getvalue().splitlines()]
        return said + [Line(json.dumps(o)) for o in out]
    return answer


def check_faults_at_decisions(result: MatchResult, seat: int) -> None:
    """Each fault names the decision where the fallback was played for the seat."""
    actions = result.record["actions"]
    for f in result.faults_of(seat):
        if f.decision is None:
            continue
        entry = actions[f.decision]
        assert entry["seat"] == seat and entry["action"]["type"] == f.decision_kind, f
