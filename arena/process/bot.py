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

``BotProcess`` holds a transport (``transport.PipeTransport``: the process,
its pipes, its turn guard; a test may give a fake), its decision statistics
and its time bank (``request``); the replies are waited for by
``exchange``'s functions over the transport's events.
"""

from __future__ import annotations

import logging
import os
import weakref
from collections.abc import Callable, Iterable, Mapping, Sequence
from types import TracebackType
from typing import Any

from ..jsonline import NO_ID, JSONLineError, JSONObject
from .confine import sandbox
from .confine.spec import BotSpec, TimeControl
from .confine.turns import TurnClock
from .errors import BotCrashed, BotFailure, BotTimeout
from .exchange import Decode, IgnoredLines, Wait, await_reply, drain_pending, parse_object
from .request import Request, TimeBank
from .stats import DecisionStats
from .streams import LINE, Event
from .transport import PipeTransport, Transport, TransportFactory, TransportSetup, encode_lines

LOG = logging.getLogger(__name__)

QUIT_MESSAGE: Mapping[str, Any] = {"type": "quit"}
SEND_TIMEOUT = 5.0        # default limit for writing a message the bot does not answer
TERM_GRACE = 0.5          # after SIGTERM, before SIGKILL


class BotProcess:
    """A bot program running as a subprocess in its own process group (or
    whatever ``transport`` reaches)."""

    def __init__(self, spec: BotSpec, *, name: str | None = None,
                 stderr_log: str | os.PathLike[str] | None = None,
                 time_control: TimeControl | None = None, label: str | None = None,
                 transport: TransportFactory = PipeTransport) -> None:
        self.spec = spec
        self.name = name or spec.display_name
        self.time_control = time_control or TimeControl()
        self.stats = DecisionStats()
        self.bank = TimeBank(self.time_control.bank_seconds)
        self.lines = IgnoredLines()
        self.greeted = False          # a handshake done: what it writes unasked from then on is not a reply
        setup = TransportSetup(self.name, label or self.name, stderr_log,
                               self.time_control.startup_seconds,
                               _decisions_taken(weakref.ref(self)))
        self.transport: Transport = transport(spec, setup)

    # ------------------------------------------------------------------ state
    def __repr__(self) -> str:
        t = self.transport
        state = ("new" if not t.started else "closed" if t.closed
                 else "running" if t.alive else "dead")
        return f"<BotProcess {self.name!r} pid={self.pid} {state}>"

    @property
    def label(self) -> str:
        return self.transport.label

    def relabel(self, label: str) -> None:
        """What the log lines of this process call it from now on (``label``:
        which seat it plays, when several seats run one program); its
        ``name``, which its errors give, is unchanged."""
        self.transport.relabel(label)

    @property
    def pid(self) -> int | None:
        return self.transport.pid

    @property
    def pgid(self) -> int | None:
        """The bot's process group id (== pid: it leads its own session)."""
        return self.pid

    @property
    def alive(self) -> bool:
        return self.transport.alive

    @property
    def failure(self) -> BotFailure | None:
        """The crash (or write timeout) that made this bot unusable, if any."""
        return self.transport.failure

    @property
    def bank_remaining(self) -> float | None:
        return self.bank.remaining

    @bank_remaining.setter
    def bank_remaining(self, seconds: float | None) -> None:
        self.bank.remaining = seconds

    @property
    def stale_lines(self) -> int:
        """Unsolicited / late / wrong-id lines thrown away so far."""
        return self.lines.stale

    @property
    def off_turn_seconds(self) -> float | None:
        """CPU seconds the bot was seen using between its turns, if it was
        caught at it (it is stopped between its turns since: ``turns``)."""
        clock: TurnClock | None = getattr(self.transport, "turns", None)
        return clock.off_turn if clock is not None and clock.caught else None

    def now(self) -> float:
        """The time on the clock its replies are timed by (the transport's:
        ``time.monotonic`` for a process)."""
        return self.transport.now()

    @property
    def stderr_dropped(self) -> int:
        return self.transport.stderr_dropped

    @property
    def stderr_tail(self) -> str:
        """The last few KiB the bot wrote on stderr."""
        return self.transport.stderr_tail

    @property
    def ignored_since(self) -> int:
        """Lines thrown away since the last ``take_ignored`` (a match looks
        at it after each request)."""
        return self.lines.since

    def take_ignored(self) -> tuple[int, list[str]]:
        """How many lines were thrown away since the last call, and the first of them."""
        return self.lines.take()

    def exit_failure(self, timeout: float, line: str | None = None) -> BotCrashed | None:
        """The crash of a bot whose main process has exited, or exits within
        ``timeout`` seconds; None if it is still running then (see
        ``PipeTransport.exit_failure``)."""
        return self.transport.exit_failure(timeout, line)

    # -------------------------------------------------------------- messages
    def start(self) -> BotProcess:
        """Start the bot.  Raises ``BotStartupError`` if it cannot be started."""
        if self.transport.started:
            raise RuntimeError(f"bot {self.name!r} already started")
        self.transport.start()
        return self

    def send(self, obj: Any, *, timeout: float | None = None, own_time: bool = False) -> float:
        """Write one JSON line; returns the time (``now()``) at which it was
        fully written.  ``timeout`` (default ``SEND_TIMEOUT``) only matters if
        the bot stops reading and the pipe fills up.  ``own_time``: the bot
        may compute on what it got until its next request (the end of a
        match, ``quit``), which ``turns`` then counts as its turn."""
        return self._send([obj], timeout, own_time)

    def send_many(self, objs: Iterable[Any], *, timeout: float | None = None,
                  own_time: bool = False) -> float | None:
        """Write several JSON lines with as few system calls as the pipe allows
        (one write instead of one per line).  Each item is a JSON-able object
        or ``bytes`` (one JSON object already encoded, without the newline).
        Returns like ``send``, or None if there was nothing to send."""
        self._check_usable()
        items = list(objs)
        return self._send(items, timeout, own_time) if items else None

    def _send(self, objs: list[Any], timeout: float | None, own_time: bool) -> float:
        self._check_usable()
        limit = SEND_TIMEOUT if timeout is None else timeout
        if own_time:
            self.transport.own_time(self.transport.now())
        data = encode_lines(objs)
        return self.transport.write(data, self.transport.now() + limit, limit)

    def park(self) -> None:
        """No request comes until ``unpark``: a pool keeps the process for a
        later match while others play on its CPU.  A bot caught computing
        between its turns is stopped until then, now or when the watchdog
        catches it (``turns``)."""
        self.transport.park()

    def unpark(self) -> None:
        """The end of ``park``: requests may come again."""
        self.transport.unpark()

    def set_stderr_log(self, path: str | os.PathLike[str] | None) -> None:
        """Send the bot's stderr to another file from now on (a process kept
        alive for the next match gets that match's log).  The old file is
        closed; the per-file ``stderr_max_bytes`` budget starts afresh."""
        self.transport.set_stderr_log(path)

    def stderr_mark(self, drain: bool = False) -> int | None:
        """Offset in the stderr log where what the bot writes next begins
        (None without a log): taken before each request, it ties stderr
        lines to decisions.  ``drain``: take in what the pipe holds first."""
        return self.transport.stderr_mark(drain)

    def recv(self, timeout: float, *, since: float | None = None) -> tuple[JSONObject, float]:
        """Wait for the next line (no request sent).  Elapsed time is counted
        from ``since`` (a value returned by ``send``) or from now."""
        self._check_usable()
        t0 = self.transport.now() if since is None else since
        value: JSONObject
        value, elapsed = await_reply(self.transport, self.lines, Wait(t0, timeout, None))
        return value, elapsed

    def handshake(self, obj: Any, *, timeout: float | None = None) -> tuple[JSONObject, float]:
        """First request after start: limited by ``startup_seconds``, which
        includes the bot's own start-up; not counted as a decision.

        What a new process wrote before it is its answer (a banner, or a
        runtime's error before it exits), taken as the reply, whenever it
        came: thrown away as unasked, a quick bot's error was lost on a busy
        machine, and its crash said only "exited with code 3".  A process
        kept from an earlier match has what came since thrown away first."""
        self._check_usable()
        transport = self.transport
        limit = self.time_control.startup_seconds if timeout is None else timeout
        greeted, self.greeted = self.greeted, True
        if greeted:
            drain_pending(transport, self.lines)
        t_start = transport.now()
        transport.turn_start(t_start)     # a new process's turn goes on from its spawn
        try:
            t_sent = transport.write(encode_lines([obj]), t_start + limit, limit)
            value: JSONObject
            value, elapsed = await_reply(transport, self.lines,
                                         Wait(t_sent, limit, _request_id(obj), t_start if greeted else None))
        finally:
            transport.turn_end(transport.now())
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
            data = encode_lines([*lines, obj])
        return self.request_data(data, reply_id if reply_id is not None else _request_id(obj),
                                 timeout, is_stale_id, decode)

    def request_data(self, data: bytes, expect_id: Any, timeout: float | None = None,
                     is_stale_id: Callable[[Any], bool] | None = None,
                     decode: Decode | None = None) -> tuple[Any, float]:
        """``request`` with its lines made: ``data`` is whole lines, each
        ending in its newline, the request last; ``expect_id`` the id its
        reply must carry (None: any).  The match's path, once a decision:
        every argument may be given by position.  The usual case (the C
        part read one line, in time, with the right id) is done inline: each
        helper call and object made here is paid on every decision."""
        transport = self.transport
        if transport.failure is not None or transport.closed or not transport.started:
            self._check_usable()
        t_start = transport.now()
        # The allowance and the bank behind it (``TimeBank.request``, inline).
        if timeout is None:
            allowance, banked = self.time_control.per_decision_seconds, self.bank.remaining
        else:
            allowance, banked = timeout, None
        limit = allowance + (banked or 0.0)
        deadline = t_start + limit
        transport.turn_start(t_start)
        try:
            t_sent, first = transport.send_and_wait(data, deadline, limit)
            if t_sent is None:          # lines nobody asked for came first (or no C part)
                drain_pending(transport, self.lines)
                t_sent = transport.write(data, deadline, limit)
            found = _first_reply(first, t_sent, t_sent + limit, expect_id, is_stale_id, decode)
            if found is None:
                found = await_reply(transport, self.lines,
                                    Wait(t_sent, limit, expect_id, t_start, is_stale_id, decode), first)
            value, elapsed = found
        except BaseException as exc:
            if isinstance(exc, BotTimeout):
                self.stats.timeouts += 1
                self.bank.timed_out(Request(expect_id, t_start, allowance, banked))
            transport.turn_end(transport.now())
            raise
        transport.turn_end(t_sent + elapsed)     # its turn ended when its reply came
        if banked is not None and elapsed > allowance:
            over = self.bank.spend(Request(expect_id, t_start, allowance, banked), elapsed)
            LOG.debug("%s: %.3f s over the per-decision time, bank now %.3f s",
                      self.label, over, self.bank.remaining)
        self.stats.times.append(elapsed)        # ``DecisionStats.record``, inline
        return value, elapsed

    def _check_usable(self) -> None:
        transport = self.transport
        if not transport.started:
            raise RuntimeError(f"bot {self.name!r} not started")
        if transport.failure is not None:
            raise transport.failure.with_traceback(None)
        if transport.closed:
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
        data = None if quit_message is None else encode_lines([quit_message])
        return self.transport.close(data, grace, term_grace)

    def kill(self) -> int | None:
        """SIGKILL the whole group at once (no quit message, no grace)."""
        return self.close(quit_message=None, grace=0.0, term_grace=0.0)

    def __enter__(self) -> BotProcess:
        if not self.transport.started:
            self.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    # ------------------------------------------- what only a real process has
    @property
    def pipe(self) -> PipeTransport:
        """The transport as the process it is (not a fake): its pid's group,
        containment, exit status, resources used, cgroup and turn clock."""
        if not isinstance(self.transport, PipeTransport):
            raise TypeError(f"bot {self.name!r} is not a process: {self.transport!r}")
        return self.transport

    @property
    def returncode(self) -> int | None:
        return self.transport.returncode

    @property
    def exit_description(self) -> str | None:
        return self.transport.exit_description

    @property
    def containment(self) -> sandbox.Containment | None:
        return self.pipe.containment

    @property
    def spawn_seconds(self) -> float | None:
        return self.pipe.spawn_seconds

    @property
    def cpu_seconds_used(self) -> float | None:
        return self.pipe.cpu_seconds_used

    @property
    def peak_rss_mb(self) -> float | None:
        return self.pipe.peak_rss_mb


def _first_reply(first: Event | None, t0: float, deadline: float, expect_id: Any,
                 is_stale_id: Callable[[Any], bool] | None,
                 decode: Decode | None) -> tuple[Any, float] | None:
    """The reply and its seconds if ``first``, the wait's first event (read
    after the request was written), settles it as ``await_reply`` would: a
    line in time that decodes, with the id expected or one the caller does
    not take for a late answer.  None for anything else: ``await_reply``
    then goes on from ``first`` (and reads that line again, to judge it)."""
    if first is None:
        return None
    kind, payload, stamp = first
    if kind != LINE or stamp > deadline:
        return None
    try:
        value, value_id = (decode or parse_object)(payload)
    except JSONLineError:
        return None
    if (expect_id is not None and value_id is not NO_ID and value_id != expect_id
            and (is_stale_id is None or is_stale_id(value_id))):
        return None
    return value, (stamp - t0 if stamp > t0 else 0.0)


def _request_id(obj: Any) -> Any:
    return obj.get("id") if isinstance(obj, Mapping) else None


def _decisions_taken(ref: Callable[[], BotProcess | None]) -> Callable[[], int]:
    """The decisions ``ref``'s bot has taken so far, for its ``TurnClock``:
    counted by the watchdog from the stats kept anyway, nothing per decision.
    Through a weak reference: the clock must not keep the bot alive."""
    def taken() -> int:
        bot = ref()
        if bot is None:
            return 0
        stats = bot.stats                 # a new one each match in a pool
        return len(stats.times) + stats.timeouts
    return taken
