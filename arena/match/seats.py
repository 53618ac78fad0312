"""Seats of a running match: an in-process player, or a bot process.

Each seat answers ``decide(game, decision)`` by applying exactly one legal
action to the game.  A bot seat turns every way a bot can fail into a
``Fault`` and plays the fallback action instead, so the match always goes on.

Every seat keeps a ``trace``: one ``[decision index, request id, milliseconds,
stderr offset]`` per decision it was asked for, so a report can show the
distribution of decision times and which stderr bytes a bot wrote while
deciding (the range from its offset to the next one).
"""

from __future__ import annotations

import json
import logging
import time
from typing import Any

from ..players.base import Player
from ..process import BotCrashed, BotFailure, BotMalformed, BotProcess, BotTimeout, DecisionStats
from ..process.errors import excerpt as short
from ..protocol import ProtocolError
from ..protocol.encoder import MatchEncoder, encode_end, encode_error
from ..protocol.messages import ReplyLine, decode_reply_line, parse_ready_message, reply_action
from ..shanghai.actions import BUY, DRAW, STOCK, Action, Buy, Draw, discard_only
from ..shanghai.errors import IllegalAction, MalformedInput
from ..shanghai.game import Decision, Game
from .pool import BotHandle
from .spec import CRASH, ILLEGAL, MALFORMED, START, TIMEOUT, Fault, FaultPolicy, IgnoredLines

LOG = logging.getLogger(__name__)

REASON_CHARS = 500       # a refused reply's reason, at most (it may quote the reply)
IGNORED_EXAMPLES = 3     # ignored lines quoted in a match record, per seat

# Why a bot misses its start-up time, most often.
START_TIMEOUT_HINT = ("; does the bot flush stdout after each line? (Python: print(..., flush=True) "
                      "or PYTHONUNBUFFERED=1; C: fflush(stdout); Perl: $| = 1; Java: System.out.flush()); "
                      "a program that starts slowly "
                      "(java Bot.java, a JIT) needs precompiling or more start-up time "
                      "(--startup, or time.startup in a tournament)")

# A bot process that answered 'start' but no request yet most often flushes
# its 'ready' line only.  (Not said to a process kept from an earlier match
# in which it answered: it flushes, it is only slow now.)
NO_REPLY_YET_HINT = ("; no request of this match answered yet: does the bot flush stdout after "
                     "each reply, not only after 'ready'? (C: fflush(stdout); Python: "
                     "print(..., flush=True); Perl: $| = 1;)")

# After a refused 'ready', how long the bot may take to exit: an exit is the
# fault then (a runtime printing its error on stdout as it fails to start).
STARTUP_EXIT_WAIT = 1.0

# What most often comes instead of 'ready': a banner, a debug line or a
# runtime's warning printed on stdout.
NOT_READY_HINT = "stdout is for protocol lines only; write logs to stderr"
NOT_JSON = "not valid JSON"             # the start of arena.jsonline's reason for such a line

# (fault kind, reason, excerpt of the offending line)
HandshakeFailure = tuple[str, str, str | None]

# [decision index, request id or None, milliseconds or None, stderr offset or None]
TraceEntry = list[Any]


def _ms(seconds: float) -> float:
    # Not round(x, 3): that formats the float in decimal, once a decision.
    return int(seconds * 1_000_000 + 0.5) / 1000


def fallback_action(d: Decision) -> Action:
    """The action played for a seat that did not give a legal one: draw from
    the stock, do not buy, discard the first card.  Always legal: a player
    holds at least two cards when asked to play (one kept plus one drawn)."""
    if d.kind == DRAW:
        return Draw(STOCK)
    if d.kind == BUY:
        return Buy(False)
    return discard_only(d.options[0])


class LocalSeat:
    """A built-in in-process player.  Its errors are arena bugs and propagate."""

    is_bot = False

    def __init__(self, seat: int, player: Player) -> None:
        self.seat = seat
        self.player = player
        self.stats = DecisionStats()
        self.forfeited = False
        self.faults: list[Fault] = []
        self.trace: list[TraceEntry] = []

    def decide(self, game: Game, d: Decision) -> None:
        index = len(game.actions)
        view = game.view(d.seat)
        t0 = time.perf_counter()
        if d.kind == DRAW:
            action: Action = self.player.draw(view)
        elif d.kind == BUY:
            action = self.player.buy(view)
        else:
            action = self.player.play(view)
        elapsed = time.perf_counter() - t0
        self.stats.record(elapsed)
        self.trace.append([index, None, _ms(elapsed), None])
        game.apply(action, d.seat)


class UnstartableSeat:
    """A bot whose program could not be started (``FaultPolicy.unstartable_forfeits``):
    forfeited from the start, a crash at start-up; the arena plays its stand-in moves."""

    is_bot = True

    def __init__(self, seat: int, game: Game, why: str) -> None:
        self.seat = seat
        self.stats = DecisionStats()
        self.forfeited = True
        self.faults = [Fault(seat, CRASH, game.hand_no, None, START, why, None, 1, True, None)]
        self.trace: list[TraceEntry] = []
        LOG.info("seat %d: %s", seat, self.faults[0].describe())

    def decide(self, game: Game, d: Decision) -> None:
        game.apply(fallback_action(d), d.seat)


class RemoteSeat:
    """A bot process behind the protocol, with strikes and a fallback."""

    is_bot = True

    def __init__(self, seat: int, handle: BotHandle, policy: FaultPolicy, reused: bool,
                 encoder: MatchEncoder) -> None:
        self.seat = seat
        self.encoder = encoder
        self.handle = handle
        self.policy = policy
        self.reused = reused
        self.forfeited = False
        self.faults: list[Fault] = []
        self.bot_name: str | None = None
        self.protocol = 2          # what the bot asked for in 'ready'
        self.pid = handle.proc.pid
        self._notified = 0         # game.log entries already sent as notices
        self.ignored: IgnoredLines | None = None
        handle.proc.take_ignored()  # a kept process's leftovers belong to its last match
        self._is_stale_id = handle.is_stale_id
        self.trace: list[TraceEntry] = []

    @property
    def proc(self) -> BotProcess:
        return self.handle.proc

    @property
    def stats(self) -> DecisionStats:
        return self.handle.proc.stats

    @property
    def usable(self) -> bool:
        return not self.forfeited and self.proc.failure is None

    # ------------------------------------------------------------- handshake
    def handshake(self, msg: bytes) -> HandshakeFailure | None:
        """Send ``start`` and read ``ready``: None, or why it failed."""
        proc = self.proc
        reply: Any = None
        try:
            reply, elapsed = proc.handshake(msg)
            limit = proc.time_control.startup_seconds
            t_sent = proc.now() - elapsed
            # A pooled process may still answer a request of its previous
            # match late; such a line is not the answer to 'start'.
            while "type" not in reply and self.handle.is_stale_id(reply.get("id")):
                remaining = limit - (proc.now() - t_sent)
                if remaining <= 0:
                    raise BotTimeout(f"no 'ready' within {limit:.3f} s", bot=proc.name,
                                     limit=limit, elapsed=limit)
                reply, _ = proc.recv(remaining, since=t_sent)
            ready = parse_ready_message(reply)
            self.bot_name, self.protocol = ready.name, ready.protocol
            return None
        except (BotFailure, MalformedInput) as exc:
            kind, detail, line = _classify(exc, reply)
            if kind == MALFORMED:
                crashed = proc.exit_failure(STARTUP_EXIT_WAIT, line)
                if crashed is not None:
                    return CRASH, crashed.detail, line
            if kind == TIMEOUT:
                detail += START_TIMEOUT_HINT
            elif isinstance(exc, BotMalformed):     # not even a JSON object
                detail = f'{detail} in the line it wrote instead of \'ready\': "{line}"; {NOT_READY_HINT}'
            return kind, detail, line
        finally:
            self.note_ignored(1, None)

    def handshake_fault(self, game: Game, failure: HandshakeFailure) -> None:
        """A failed handshake forfeits the seat (the caller kills the process)."""
        kind, detail, line = failure
        self._record(game, None, START, kind, detail, line, force=True)

    # -------------------------------------------------------------- decisions
    def decide(self, game: Game, d: Decision) -> None:
        if self.forfeited:       # not asked: no trace entry
            game.apply(fallback_action(d), d.seat)
            return
        index = len(game.actions)
        handle = self.handle
        proc = handle.proc
        req_id: int | None = None
        reply: ReplyLine | None = None
        entry: TraceEntry = [index, None, None, proc.transport.stderr_mark()]    # BotProcess.stderr_mark's
        self.trace.append(entry)
        try:
            req_id = entry[1] = handle.next_id
            handle.next_id = req_id + 1
            since = self._notified
            data, self._notified = self.encoder.request_data(since, req_id, d, self.protocol)
            reply, elapsed = proc.request_data(data, req_id, None, self._is_stale_id, decode_reply_line)
            if proc.lines.since:            # BotProcess.ignored_since, inline
                self.note_ignored(game.hand_no, index)
            entry[2] = int(elapsed * 1_000_000 + 0.5) / 1000      # _ms, inline
            # Notices in the same write: a line without an id answers one of them.
            action = reply_action(reply, req_id, d.kind, self._notified > since)
            game.apply(action, d.seat)      # IllegalAction leaves the game unchanged
            return
        except (BotFailure, MalformedInput, IllegalAction) as exc:
            self.note_ignored(game.hand_no, index)
            kind, detail, line = _classify(exc, reply)
            if isinstance(exc, BotMalformed) and detail.startswith(NOT_JSON):
                # Most likely a debug print: quote it, as for 'ready', so the
                # author sees which print it was without opening the match.
                detail = f'{detail} in the line it wrote instead of a reply: "{line}"; {NOT_READY_HINT}'
            elif isinstance(exc, BotTimeout) and not proc.stats.times and not handle.answered_before:
                detail += NO_REPLY_YET_HINT
        fallback = fallback_action(d)
        self._record(game, index, d.kind, kind, detail, line, request_id=req_id)
        if self.proc.failure is None:
            self._notify_error(req_id, kind, detail, fallback)
        if self.forfeited:
            # The seat plays the fallback to the end; the process is of no
            # further use, and a runaway one must not eat the machine meanwhile.
            self.proc.kill()
        game.apply(fallback, d.seat)

    def note_ignored(self, hand: int, index: int | None) -> None:
        """Add the lines the process threw away since the last look to this
        match's ``ignored`` (where the first was noticed, the first few texts)."""
        count, texts = self.proc.take_ignored()
        if not count:
            return
        old = self.ignored
        if old is None:
            self.ignored = IgnoredLines(self.seat, count, hand, index, tuple(texts[:IGNORED_EXAMPLES]))
        else:
            examples = (old.examples + tuple(texts))[:IGNORED_EXAMPLES]
            self.ignored = IgnoredLines(self.seat, old.count + count, old.hand, old.decision, examples)

    def _record(self, game: Game, index: int | None, decision_kind: str, kind: str,
                detail: str, line: str | None, *, force: bool = False,
                request_id: int | None = None) -> None:
        strikes = len(self.faults) + 1
        forfeit = (force or kind == CRASH or self.policy.strict
                   or strikes >= self.policy.max_strikes or self.proc.failure is not None)
        fault = Fault(self.seat, kind, game.hand_no, index, decision_kind, detail, line,
                      strikes, forfeit, request_id)
        self.faults.append(fault)
        LOG.info("seat %d (%s): %s", self.seat, self.proc.name, fault.describe())
        if forfeit:
            self.forfeited = True

    def _notify_error(self, req_id: int | None, kind: str, reason: str, fallback: Action) -> None:
        # Best effort: a bot that cannot take the notice fails its next request.
        try:
            self.proc.send(encode_error(req_id, kind, reason, fallback.to_json()),
                           timeout=self.proc.time_control.per_decision_seconds)
        except BotFailure as exc:
            LOG.debug("seat %d: error notice not delivered: %s", self.seat, exc)

    def _take_notices(self) -> list[bytes]:
        """Notice lines of the public events since this bot's last notice."""
        pending = self.encoder.notices(self._notified)
        self._notified = len(self.encoder.game.log)
        return pending

    # ------------------------------------------------------------------- end
    def finish(self, game: Game, match_id: str, totals: list[int], places: list[int],
               forfeited: list[bool]) -> None:
        """The last notices and ``end``; failures here are logged, not scored."""
        if not self.usable:
            return
        try:
            # own_time: what a bot does after 'end' (a summary, learning) is not
            # computing on another bot's turn.
            self.proc.send_many([*self._take_notices(), encode_end(match_id, totals, places, forfeited)],
                                timeout=self.proc.time_control.per_decision_seconds, own_time=True)
        except BotFailure as exc:
            LOG.info("seat %d (%s): 'end' not delivered: %s", self.seat, self.proc.name, exc)
        self.note_ignored(game.hand_no, len(game.actions))


def _classify(exc: Exception, reply: Any) -> tuple[str, str, str | None]:
    """(fault kind, reason, excerpt of the offending line) of a failed request.
    The reason is bounded: the engine's may quote a whole field of the reply,
    and it goes into the bot's error notice, the store and the console."""
    if isinstance(exc, BotMalformed):
        return MALFORMED, exc.reason, exc.excerpt
    if isinstance(exc, BotTimeout):
        return TIMEOUT, exc.detail, None
    if isinstance(exc, BotCrashed):
        return CRASH, exc.detail, exc.stdout_first
    if isinstance(exc, BotFailure):
        return exc.kind, exc.detail, None
    line = _line_of(reply)
    if isinstance(exc, ProtocolError):
        return exc.fault, short(str(exc), REASON_CHARS), line
    if isinstance(exc, IllegalAction):
        return ILLEGAL, short(exc.reason, REASON_CHARS), line
    return MALFORMED, short(str(exc), REASON_CHARS), line


def _line_of(reply: Any) -> str | None:
    if reply is None:
        return None
    if isinstance(reply, ReplyLine):
        return short(reply.raw)
    try:
        return short(json.dumps(reply, separators=(",", ":")))
    except (TypeError, ValueError):
        return short(repr(reply))
