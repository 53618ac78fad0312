"""Seats of a running match: an in-process player, or a bot process.

Each seat answers ``decide(game, decision)`` by applying exactly one legal
action to the game.  A bot seat turns every way a bot can fail into a
``Fault`` and plays the fallback action instead, so the match always goes on.
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import replace
from typing import Any

from ..players.base import Player
from ..process import BotCrashed, BotFailure, BotMalformed, BotProcess, BotTimeout, DecisionStats
from ..process.errors import excerpt as short
from ..protocol import (ProtocolError, end_message, error_message, event_message, parse_ready,
                        parse_reply, request_message)
from ..shanghai import events as ev
from ..shanghai.actions import BUY, DRAW, STOCK, Action, Buy, Draw, discard_only
from ..shanghai.errors import IllegalAction, MalformedInput
from ..shanghai.events import Event
from ..shanghai.game import Decision, Game
from .pool import BotHandle
from .spec import CRASH, ILLEGAL, MALFORMED, START, TIMEOUT, Fault, FaultPolicy

LOG = logging.getLogger(__name__)

# The bot already learns these from 'start' and 'end'; match_start also
# carries the seed, from which a bot could recompute every shuffle.
_NOT_NOTICED = frozenset({ev.MATCH_START, ev.MATCH_END})

REASON_CHARS = 500       # a refused reply's reason, at most (it may quote the reply)

# (fault kind, reason, excerpt of the offending line)
HandshakeFailure = tuple[str, str, str | None]


def fallback_action(d: Decision) -> Action:
    """The action played for a seat that did not give a legal one: draw from
    the stock, do not buy, discard the first card.  Always legal: a player
    holds at least two cards when asked to play (one kept plus one drawn)."""
    if d.kind == DRAW:
        return Draw(STOCK)
    if d.kind == BUY:
        return Buy(False)
    return discard_only(d.options[0])


def _dumps(obj: Any) -> str:
    return json.dumps(obj, separators=(",", ":"), allow_nan=False)


class Encoder:
    """Encodes one match's messages, each public event once.

    A request carries the seat's view, whose history holds every public event
    of the hand so far; encoded naively that is the same events again for
    every request of every seat.  Here each event's JSON text is made once
    and spliced in, and each notice line is shared by all seats.  The result
    is the same JSON object as ``request_message`` (checked by the tests).
    """

    def __init__(self, game: Game) -> None:
        self.game = game
        self._hand: list[Event] | None = None     # game.public of the cached hand
        self._history: list[str] = []
        self._notices: list[bytes | None] = []    # per game.log entry; None: not sent

    def notices(self, since: int) -> list[bytes]:
        log = self.game.log
        for e in log[len(self._notices):]:
            self._notices.append(None if e.kind in _NOT_NOTICED
                                 else _dumps(event_message(e)).encode())
        return [line for line in self._notices[since:len(log)] if line is not None]

    def request(self, req_id: int, d: Decision) -> bytes:
        game = self.game
        public = game.public
        if public is not self._hand:              # a new hand began
            self._hand = public
            self._history = []
        for e in public[len(self._history):]:
            self._history.append(_dumps(e.to_json()))
        view = replace(game.view(d.seat), history=())
        msg = request_message(req_id, d, view)
        view_json = msg.pop("view")
        del view_json["history"]
        view_text = f'{_dumps(view_json)[:-1]},"history":[{",".join(self._history)}]}}'
        return f'{_dumps(msg)[:-1]},"view":{view_text}}}'.encode()


class LocalSeat:
    """A built-in in-process player.  Its errors are arena bugs and propagate."""

    is_bot = False

    def __init__(self, seat: int, player: Player) -> None:
        self.seat = seat
        self.player = player
        self.stats = DecisionStats()
        self.forfeited = False
        self.faults: list[Fault] = []

    def decide(self, game: Game, d: Decision) -> None:
        view = game.view(d.seat)
        t0 = time.perf_counter()
        if d.kind == DRAW:
            action: Action = self.player.draw(view)
        elif d.kind == BUY:
            action = self.player.buy(view)
        else:
            action = self.player.play(view)
        self.stats.record(time.perf_counter() - t0)
        game.apply(action, d.seat)


class RemoteSeat:
    """A bot process behind the protocol, with strikes and a fallback."""

    is_bot = True

    def __init__(self, seat: int, handle: BotHandle, policy: FaultPolicy, reused: bool,
                 encoder: Encoder) -> None:
        self.seat = seat
        self.encoder = encoder
        self.handle = handle
        self.policy = policy
        self.reused = reused
        self.forfeited = False
        self.faults: list[Fault] = []
        self.bot_name: str | None = None
        self.pid = handle.proc.pid
        self._notified = 0         # game.log entries already sent as notices

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
    def handshake(self, msg: dict[str, Any]) -> HandshakeFailure | None:
        """Send ``start`` and read ``ready``: None, or why it failed."""
        proc = self.proc
        reply: Any = None
        try:
            reply, elapsed = proc.handshake(msg)
            limit = proc.time_control.startup_seconds
            t_sent = time.monotonic() - elapsed
            # A pooled process may still answer a request of its previous
            # match late; such a line is not the answer to 'start'.
            while "type" not in reply and self.handle.is_stale_id(reply.get("id")):
                remaining = limit - (time.monotonic() - t_sent)
                if remaining <= 0:
                    raise BotTimeout(f"no 'ready' within {limit:.3f} s", bot=proc.name,
                                     limit=limit, elapsed=limit)
                reply, _ = proc.recv(remaining, since=t_sent)
            self.bot_name = parse_ready(reply)
            return None
        except (BotFailure, MalformedInput) as exc:
            return _classify(exc, reply)

    def handshake_fault(self, game: Game, failure: HandshakeFailure) -> None:
        """A failed handshake forfeits the seat (the caller kills the process)."""
        kind, detail, line = failure
        self._record(game, None, START, kind, detail, line, force=True)

    # -------------------------------------------------------------- decisions
    def decide(self, game: Game, d: Decision) -> None:
        if self.forfeited:
            game.apply(fallback_action(d), d.seat)
            return
        index = len(game.actions)
        handle = self.handle
        req_id: int | None = None
        reply: Any = None
        try:
            notices = self._take_notices()
            req_id = handle.new_id()
            reply, _elapsed = self.proc.request(
                self.encoder.request(req_id, d), before=notices, reply_id=req_id,
                is_stale_id=handle.is_stale_id)
            action = parse_reply(reply, req_id, d.kind)
            game.apply(action, d.seat)      # IllegalAction leaves the game unchanged
            return
        except (BotFailure, MalformedInput, IllegalAction) as exc:
            kind, detail, line = _classify(exc, reply)
        fallback = fallback_action(d)
        self._record(game, index, d.kind, kind, detail, line)
        if self.proc.failure is None:
            self._notify_error(req_id, kind, detail, fallback)
        if self.forfeited:
            # The seat plays the fallback to the end; the process is of no
            # further use, and a runaway one must not eat the machine meanwhile.
            self.proc.kill()
        game.apply(fallback, d.seat)

    def _record(self, game: Game, index: int | None, decision_kind: str, kind: str,
                detail: str, line: str | None, *, force: bool = False) -> None:
        strikes = len(self.faults) + 1
        forfeit = (force or kind == CRASH or self.policy.strict
                   or strikes >= self.policy.max_strikes or self.proc.failure is not None)
        fault = Fault(self.seat, kind, game.hand_no, index, decision_kind, detail, line,
                      strikes, forfeit)
        self.faults.append(fault)
        LOG.info("seat %d (%s): %s", self.seat, self.proc.name, fault.describe())
        if forfeit:
            self.forfeited = True

    def _notify_error(self, req_id: int | None, kind: str, reason: str, fallback: Action) -> None:
        # Best effort: a bot that cannot take the notice fails its next request.
        try:
            self.proc.send(error_message(req_id, kind, reason, fallback),
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
            self.proc.send_many([*self._take_notices(), end_message(match_id, totals, places, forfeited)],
                                timeout=self.proc.time_control.per_decision_seconds)
        except BotFailure as exc:
            LOG.info("seat %d (%s): 'end' not delivered: %s", self.seat, self.proc.name, exc)


def _classify(exc: Exception, reply: Any) -> tuple[str, str, str | None]:
    """(fault kind, reason, excerpt of the offending line) of a failed request.
    The reason is bounded: the engine's may quote a whole field of the reply,
    and it goes into the bot's error notice, the store and the console."""
    if isinstance(exc, BotMalformed):
        return MALFORMED, exc.reason, exc.excerpt
    if isinstance(exc, BotTimeout):
        return TIMEOUT, exc.detail, None
    if isinstance(exc, BotCrashed):
        return CRASH, exc.detail, None
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
    try:
        return short(json.dumps(reply, separators=(",", ":")))
    except (TypeError, ValueError):
        return short(repr(reply))
