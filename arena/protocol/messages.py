"""The bot protocol's messages: typed values in, JSON objects out, and back.

Knows the game's values (views, events, actions) but nothing of processes.
One JSON object per line in each direction.  Arena -> bot:

- ``start``   a match begins; the bot answers ``{"type": "ready", "name": ...}``
- ``event``   a public event (notice, no reply)
- ``request`` a decision with an ``id``, its ``kind``, the legal ``options``
  where they are few, and the seat's ``view`` now; the bot replies with the
  same ``id`` and its choice.  Protocol 2 (the default) sends no history in
  the view: the bot has had every event as a notice, once.  Protocol 1, which
  a bot picks with ``"protocol": 1`` in ``ready`` (bots written before v2
  send no ``protocol`` and get it too), also sends the hand's whole history,
  ``hand_scores`` and ``decision`` in every view
- ``error``   the last reply was refused, with the reason and the fallback
  action the arena played instead (notice, no reply)
- ``end``     the match is over, with totals and places (notice); another
  ``start`` may follow on the same process
- ``quit``    exit now

Replies to requests, by kind::

    {"id": 7, "draw": "stock"}            # or "upcard"
    {"id": 8, "buy": true}
    {"id": 9, "go_down": [["7H", "7S", "JK"], {"kind": "run", "cards": [...]}],
     "lay_off": [{"meld": 0, "card": "8C", "end": "high"}],
     "swap": [{"meld": 1, "card": "6C", "take": "JK"}],
     "discard": "9H"}                     # discard null/absent when going out
    {"id": 9, "steps": [{"swap": {...}}, {"go_down": [...]}, {"lay_off": {...}}],
     "discard": "9H"}                     # the same plays in any order; not mixed with the keyed form

docs/PROTOCOL.md documents every message for bot authors; JSON Schemas of
them are in ``protocol/schemas/`` (see ``schemas``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from msgspec import UNSET

from ..jsonline import JSONLineError, decode_object
from ..shanghai.actions import BUY, DRAW, PLAY, STOCK, UPCARD, Action, Buy, Draw, Play, action_from_json
from ..shanghai.cards import parse_card
from ..shanghai.errors import MalformedInput
from ..shanghai.events import Event
from ..shanghai.game import Decision, View
from ..shanghai.ruleset import Ruleset
from .replies import DEFAULT_READY_PROTOCOL, PROTOCOL_VERSION, PROTOCOLS
from .wire import ReplyLine as ReplyLine  # found here by callers
from .wire import decode_reply_line as decode_reply_line
from .wire import reply_fields

# Only in protocol 1 views: the history (events sent as notices anyway), the
# scores of past hands (in the hand_end notices) and the decision (the same
# as the request's kind and options).
V1_ONLY_VIEW_FIELDS = ("hand_scores", "history", "decision")

# The fields each answer may have: anything else is malformed.
READY_FIELDS = ("type", "name", "protocol")
REPLY_FIELDS: dict[str, tuple[str, ...]] = {   # by decision kind, or any text a caller passes
    DRAW: ("draw",),
    BUY: ("buy",),
    PLAY: ("go_down", "lay_off", "swap", "steps", "discard"),
}


class ProtocolError(MalformedInput):
    """A reply that does not follow the protocol (wrong shape, wrong id)."""

    def __init__(self, message: str, fault: str = "malformed") -> None:
        super().__init__(message)
        self.fault = fault  # "malformed" or "wrong_id"


@dataclass(frozen=True, slots=True)
class TimeLimits:
    """The time control as bots are told it (seconds)."""

    startup: float
    decision: float
    bank: float | None = None

    def to_json(self) -> dict[str, Any]:
        return {"startup": self.startup, "decision": self.decision, "bank": self.bank}


def start_message(
    match: str, seat: int, names: list[str], rules: Ruleset, time: TimeLimits,
) -> dict[str, Any]:
    return {
        "type": "start",
        "protocol": PROTOCOL_VERSION,
        "match": match,
        "seat": seat,
        "players": len(names),
        "names": list(names),
        "rules": rules.to_mapping(),
        "time": time.to_json(),
    }


@dataclass(frozen=True, slots=True)
class Ready:
    """The bot's answer to ``start``: its name and the protocol it speaks."""

    name: str
    protocol: int


def parse_ready(obj: Any) -> str:
    """The bot's name from its answer to ``start``."""
    return parse_ready_message(obj).name


def parse_ready_message(obj: Any) -> Ready:
    """The bot's answer to ``start``, checked like every reply."""
    if not isinstance(obj, Mapping):
        raise ProtocolError(f"the answer to 'start' must be a JSON object, got {type(obj).__name__}")
    _no_unknown_fields(obj, READY_FIELDS, "the 'ready' answer")
    if obj.get("type") != "ready":
        raise ProtocolError(f"the answer to 'start' must have \"type\": \"ready\", got {_text(obj.get('type'))}")
    name = obj.get("name")
    if not isinstance(name, str) or not name.strip() or len(name) > 64:
        raise ProtocolError("the 'ready' answer needs a \"name\": a non-empty string of at most 64 characters")
    # Printable only (a space is): a control character breaks a name out of
    # its line, and an invisible one (U+202E, a zero-width space) reverses or
    # hides the text around it wherever the name is shown.
    if not name.isprintable():
        raise ProtocolError(f"the 'ready' answer's \"name\" holds control characters or invisible "
                            f"formatting (U+202E, zero-width): {_text(name)}")
    protocol = obj.get("protocol", DEFAULT_READY_PROTOCOL)
    if type(protocol) is not int or protocol not in PROTOCOLS:
        raise ProtocolError(f"the 'ready' answer's \"protocol\" must be one of "
                            f"{', '.join(map(str, PROTOCOLS))}, got {_text(protocol)}")
    return Ready(name.strip(), protocol)


def request_message(req_id: int, decision: Decision, view: View,
                    protocol: int = PROTOCOL_VERSION) -> dict[str, Any]:
    """A request as a JSON object (the codec's bytes decode to exactly this)."""
    view_json = view.to_json()
    if protocol >= 2:
        for key in V1_ONLY_VIEW_FIELDS:
            del view_json[key]
    return {
        "type": "request",
        "id": req_id,
        "kind": decision.kind,
        "options": [o.text if hasattr(o, "text") else o for o in decision.options],
        "view": view_json,
    }


def event_message(event: Event) -> dict[str, Any]:
    """A public event as a notice. Callers pass public forms only."""
    return {"type": "event", "event": event.public().to_json()}


def error_message(req_id: int | None, fault: str, reason: str, fallback: Action | None) -> dict[str, Any]:
    return {
        "type": "error",
        "id": req_id,
        "fault": fault,
        "reason": reason,
        "fallback": fallback.to_json() if fallback is not None else None,
    }


def end_message(match: str, totals: list[int], places: list[int], forfeited: list[bool]) -> dict[str, Any]:
    return {"type": "end", "match": match, "totals": totals, "places": places, "forfeited": forfeited}


def quit_message() -> dict[str, Any]:
    return {"type": "quit"}


def parse_reply(obj: Any, req_id: int, kind: str, after_notices: bool = False) -> Action:
    """Turn a bot's reply to request ``req_id`` of ``kind`` into an action.

    Every kind is checked the same way: the ``id`` must be a JSON integer
    (anything else, ``3.0``, ``"3"`` or ``true`` included, is malformed) equal
    to ``req_id`` (else "wrong_id"); ``type``, if present, a string; no field
    beyond those of the kind.  Raises ProtocolError (fault "wrong_id" or
    "malformed") or MalformedInput from the engine's action decoder; neither
    says anything about legality, which the game judges.  ``after_notices``:
    event notices came in the same write as the request, so a line with
    neither an id nor a choice is named as the answer to one of them.
    """
    if not isinstance(obj, Mapping):
        raise ProtocolError(f"a reply must be a JSON object, got {type(obj).__name__}")
    if "id" not in obj:
        raise ProtocolError(_no_id(obj, req_id, kind, after_notices))
    reply_id = obj["id"]
    if type(reply_id) is not int:          # bool is an int subclass; 3.0 == 3
        raise ProtocolError(f"the reply's \"id\" must be a whole number (the request's id {req_id}), "
                            f"got {_text(reply_id)}")
    if reply_id != req_id:
        raise ProtocolError(f"the reply's id is {reply_id} but the request's id is {req_id}", "wrong_id")
    if kind not in REPLY_FIELDS:
        raise ValueError(f"unknown decision kind {kind!r}")
    if not isinstance(obj.get("type", ""), str):
        raise ProtocolError(f"the reply's \"type\" is optional and ignored, but must be a string; "
                            f"got {_text(obj['type'])}")
    if kind == DRAW and "draw" not in obj:
        raise ProtocolError("a reply to a draw request needs \"draw\": \"stock\" or \"upcard\"")
    if kind == BUY and "buy" not in obj:
        raise ProtocolError("a reply to a buy request needs \"buy\": true or false")
    _no_unknown_fields(obj, ("id", "type", *REPLY_FIELDS[kind]), f"a {kind} reply")
    if kind == DRAW:
        if obj["draw"] not in (STOCK, UPCARD):     # named as the bot wrote it, not as the engine's 'source'
            raise ProtocolError(f"draw: 'draw' must be 'stock' or 'upcard', got {_text(obj['draw'])}")
        return action_from_json({"type": DRAW, "source": obj["draw"]})
    if kind == BUY:
        return action_from_json({"type": BUY, "buy": obj["buy"]})
    body = {k: v for k, v in obj.items() if k not in ("id", "type")}
    mixed = sorted(set(body) & {"go_down", "lay_off", "swap"})
    if "steps" in body and mixed:
        raise ProtocolError(
            f"a play reply has either \"steps\" or the keyed fields go_down/lay_off/swap, not both "
            f"(got steps and {', '.join(mixed)}); put every play into \"steps\""
        )
    return action_from_json({"type": PLAY, **body})


# Indexes into a decoded reply's fields (wire.Reply: id, type, draw, buy,
# go_down, lay_off, swap, steps, discard), and what a draw, a buy and a plain
# discard leave UNSET.
_DRAW_AT, _BUY_AT, _DISCARD_AT = 2, 3, 8
_UNSET_BEYOND_DRAW = (UNSET,) * 6           # buy .. discard
_UNSET_BEYOND_BUY = (UNSET,) * 5            # go_down .. discard
_UNSET_BEFORE_DISCARD = (UNSET,) * 6        # draw .. steps


def _no_id(obj: Mapping[str, Any], req_id: int, kind: str, after_notices: bool) -> str:
    """Why a reply without an id is refused, the bug first where it is told."""
    if kind in REPLY_FIELDS and not any(field in obj for field in REPLY_FIELDS[kind]):
        # Neither an id nor a choice: most often a line the bot wrote for a
        # notice, read while this request waited.
        if after_notices:
            return (f"it replied to an event notice, which bots must never answer: the line read as "
                    f"the reply to request {req_id}, {_text(dict(obj))}, has neither an \"id\" nor a "
                    f"{kind} choice, and came after the notices sent with the request; only 'start' "
                    f"and 'request' are answered (docs/PROTOCOL.md, 'event')")
        return (f"the reply has no \"id\"; it must echo the request's id {req_id} (the line, "
                f"{_text(dict(obj))}, holds no {kind} choice either: only 'start' and 'request' are "
                f"answered, never an event, error or end notice)")
    return f"the reply has no \"id\"; it must echo the request's id {req_id}"


def reply_action(line: ReplyLine, req_id: int, kind: str, after_notices: bool = False) -> Action:
    """The action of a decoded reply line; the same outcome as ``parse_reply``
    on the strictly decoded object, which judges every reply the fast path
    does not accept whole (so the reasons and fault kinds are its own).
    ``after_notices``: as for ``parse_reply``."""
    typed = line.typed
    if typed is not None and typed.id == req_id:
        f = line.fields
        if kind == DRAW:                    # as action_from_json decodes them
            if f[_DRAW_AT] in _SOURCES and f[_BUY_AT:] == _UNSET_BEYOND_DRAW:
                return _SOURCES[f[_DRAW_AT]]
        elif kind == BUY:
            if (f[_BUY_AT] is not UNSET and f[_DRAW_AT] is UNSET
                    and f[_BUY_AT + 1:] == _UNSET_BEYOND_BUY):
                return _BUYS[f[_BUY_AT]]
        else:
            if type(f[_DISCARD_AT]) is str and f[_DRAW_AT:_DISCARD_AT] == _UNSET_BEFORE_DISCARD:
                play = _discard_play(f[_DISCARD_AT])     # most turns: just a discard
                if play is not None:
                    return play
            fields = reply_fields(typed)
            del fields["id"]
            fields.pop("type", None)
            if fields.keys() <= _ALLOWED[PLAY] and not ("steps" in fields and fields.keys() & _KEYED):
                try:
                    return action_from_json({"type": PLAY, **fields})
                except MalformedInput:
                    pass                # the reference path says why
    obj = line.obj
    if obj is None:
        try:
            obj = decode_object(line.raw)
        except JSONLineError as exc:     # accepted by the fast path: not expected
            raise ProtocolError(exc.reason) from None
    return parse_reply(obj, req_id, kind, after_notices)


_ALLOWED = {k: frozenset(v) for k, v in REPLY_FIELDS.items()}


# A plain discard of each card, by its text as the arena writes it: the same
# action action_from_json makes (frozen, so one is shared by every turn).
_DISCARDS: dict[str, Play] = {}


def _discard_play(text: str) -> Play | None:
    """``Play((), card)`` for a card's own text; None for any other spelling
    (the general decoder reads those, and says why if they are no card)."""
    play = _DISCARDS.get(text)
    if play is None:
        try:
            card = parse_card(text)
        except MalformedInput:
            return None
        if card.text != text:
            return None
        play = _DISCARDS[text] = Play((), card)
    return play
_SOURCES = {STOCK: Draw(STOCK), UPCARD: Draw(UPCARD)}
_BUYS = {True: Buy(True), False: Buy(False)}
_KEYED = frozenset({"go_down", "lay_off", "swap"})


def _no_unknown_fields(obj: Mapping[str, Any], allowed: tuple[str, ...], what: str) -> None:
    unknown = sorted(str(k) for k in obj if k not in allowed)
    if unknown:
        names = ", ".join(repr(_short(k)) for k in unknown[:5]) + (", ..." if len(unknown) > 5 else "")
        raise ProtocolError(f"unknown field(s) [{names}] in {what}; expected {', '.join(allowed)}")


def _short(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[:limit] + "..."


def _text(value: Any, limit: int = 40) -> str:
    """A decoded value as JSON text, shortened, for a one-line reason."""
    try:
        text = json.dumps(value)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


