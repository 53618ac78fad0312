"""The wire form of every message: msgspec Structs, encoded and decoded in C.

Arena -> bot messages are Structs tagged by ``type`` and encoded with one
shared ``msgspec.json.Encoder`` (no dicts on the hot path, no stdlib json).
Bot -> arena lines (``ready`` and replies) are decoded here too:

- **Replies, fast path**: one typed decode into ``Reply`` (every field of
  every kind, typed, unknown fields refused, strings and integers bounded),
  plus a count of the keys in the line, which catches duplicate keys (msgspec
  keeps the last one silently).  A line that passes is exactly a line the
  strict reader would accept (see ``tests/test_codec.py``).
- **Replies, reference path**: anything the fast path does not take (a bad
  line, a wrong type, a misspelt field) is read again by the strict line
  decoder (``arena.jsonline``) and ``messages.parse_reply``, which give the
  documented one-line reasons and fault kinds.  Only faulty replies pay for it.

Knows nothing of processes: bytes in, typed values out, and back.
"""

from __future__ import annotations

import re
from typing import Annotated, Any

import msgspec
from msgspec import UNSET, Meta, Raw, Struct, UnsetType
from msgspec.structs import astuple

# The reference decoder's limits (docs/PROTOCOL.md, "How replies are checked"):
# the typed fast path accepts nothing beyond them.
from ..jsonline import DEFAULT_LIMITS, NO_ID, decode_object

_STRING = Annotated[str, Meta(max_length=DEFAULT_LIMITS.max_string_chars)]
# msgspec would take integers of any size; bounds must fit in 64 bits, which
# is fewer digits than the reference decoder's limit (larger ones go there).
_BOUND = min(10 ** DEFAULT_LIMITS.max_int_digits - 1, 2 ** 63 - 1)
_INT = Annotated[int, Meta(ge=-_BOUND, le=_BOUND)]

ENCODER = msgspec.json.Encoder()
encode = ENCODER.encode
encode_into = ENCODER.encode_into


# -- arena -> bot ------------------------------------------------------------------

# Every Struct here is made from JSON values or by the encoder, a tree with
# no way back to itself: it can be in no reference cycle, so the garbage
# collector need not track it (``gc=False``: a few made per decision, each
# otherwise counted towards the next collection and walked by it).


class TimeJSON(Struct, gc=False):
    startup: float
    decision: float
    bank: float | None


class Start(Struct, gc=False, tag="start", tag_field="type"):
    protocol: int
    match: str
    seat: int
    players: int
    names: list[str]
    rules: dict[str, Any]
    time: TimeJSON


class EventNotice(Struct, gc=False, tag="event", tag_field="type"):
    event: dict[str, Any]


class ViewV2(Struct, gc=False):
    """A v2 request's view: the seat's state now, no history (see docs/PROTOCOL.md)."""

    seat: int
    players: int
    hand: int
    hands_total: int
    dealer: int
    contract: str
    cards: Raw               # the seat's card texts, cached while its hand is unchanged
    melds: list[Raw]          # each meld's JSON, cached while the meld is unchanged
    upcard: str | None
    pile_top: str | None
    pile_size: int
    stock_size: int
    card_counts: tuple[int, ...]   # the view's own tuples: encoded as arrays, not copied
    buys_left: tuple[int, ...]
    down: tuple[bool, ...]
    turn: int
    turns_taken: int
    totals: Raw               # the same bytes for the whole hand


class RequestV2(Struct, gc=False, tag="request", tag_field="type"):
    id: int
    kind: str
    options: Raw              # draw and buy options are cached as bytes
    view: ViewV2


class ErrorNotice(Struct, gc=False, tag="error", tag_field="type"):
    id: int | None
    fault: str
    reason: str
    fallback: dict[str, Any] | None


class End(Struct, gc=False, tag="end", tag_field="type"):
    match: str
    totals: list[int]
    places: list[int]
    forfeited: list[bool]


class Quit(Struct, gc=False, tag="quit", tag_field="type"):
    pass


# -- bot -> arena: replies -----------------------------------------------------------


class MeldObject(Struct, gc=False, forbid_unknown_fields=True):
    cards: list[_STRING] | _STRING
    kind: _STRING | None | UnsetType = UNSET


MeldForm = list[_STRING] | _STRING | MeldObject


class LayOffObject(Struct, gc=False, forbid_unknown_fields=True):
    meld: _INT
    card: _STRING
    end: _STRING | None | UnsetType = UNSET


class SwapObject(Struct, gc=False, forbid_unknown_fields=True):
    meld: _INT
    card: _STRING
    take: _STRING | None | UnsetType = UNSET


class StepObject(Struct, gc=False, forbid_unknown_fields=True):
    swap: SwapObject | UnsetType = UNSET
    go_down: list[MeldForm] | UnsetType = UNSET
    lay_off: LayOffObject | UnsetType = UNSET


class Reply(Struct, gc=False, forbid_unknown_fields=True):
    """Every field a reply of any kind may have; which ones a kind allows is
    checked after decoding (``messages.REPLY_FIELDS``)."""

    id: _INT
    type: _STRING | UnsetType = UNSET
    draw: _STRING | UnsetType = UNSET
    buy: bool | UnsetType = UNSET
    go_down: list[MeldForm] | None | UnsetType = UNSET
    lay_off: list[LayOffObject] | None | UnsetType = UNSET
    swap: list[SwapObject] | None | UnsetType = UNSET
    steps: list[StepObject] | UnsetType = UNSET
    discard: _STRING | None | UnsetType = UNSET


_REPLY = msgspec.json.Decoder(Reply)
# A key is a string followed by a colon.  Inside a string a quote is escaped,
# so this may over-count (a string value holding '\":'), never under-count.
_KEY_END = re.compile(rb'"[ \t\r\n]*:')
_DECODE_ERRORS = (msgspec.DecodeError, msgspec.ValidationError)


# A decoded reply's fields as a tuple (``astuple``, one C call): the nested
# ones (go_down, lay_off, swap, steps) are a slice of it, all UNSET in a
# draw, a buy or a plain discard, whose keys are then just the fields set.
_NAMES = Reply.__struct_fields__
NESTED = slice(_NAMES.index("go_down"), _NAMES.index("steps") + 1)
if _NAMES[NESTED] != ("go_down", "lay_off", "swap", "steps") or _NAMES[-1] != "discard":
    raise ImportError("wire.Reply's fields are out of the order its readers index them by")
_NO_NESTED = (UNSET,) * 4


def decode_reply_fast(raw: bytes) -> Reply | None:
    """The typed reply in ``raw``, or None if the reference path must judge it."""
    line, _id = decode_reply_line(raw, strict=False)
    return line.typed


class ReplyLine(Struct, gc=False):
    """One reply line, decoded as far as the line goes: the typed reply when
    the fast path took it (and its fields as a tuple), else the strictly
    decoded object.  (A Struct: one is made per decision, in C.)"""

    raw: bytes
    typed: Reply | None
    obj: dict[str, Any] | None
    fields: tuple[Any, ...] = ()

    @property
    def id(self) -> Any:
        """The reply's "id" (``NO_ID`` if it has none), for telling late answers apart."""
        if self.typed is not None:
            return self.typed.id
        assert self.obj is not None
        return self.obj.get("id", NO_ID)


def decode_reply_line(raw: bytes, strict: bool = True) -> tuple[ReplyLine, Any]:
    """``(line, its id)``; raises ``JSONLineError`` for a line that is not one
    acceptable JSON object (a ``malformed`` reply whatever it was meant for).
    Not ``strict``: a line the fast path does not take is not read again
    (``typed`` and ``obj`` are None)."""
    try:
        reply = _REPLY.decode(raw)
    except _DECODE_ERRORS:
        reply = None
    if reply is not None:
        fields = astuple(reply)
        if fields[NESTED] == _NO_NESTED:
            keys = len(fields) - fields.count(UNSET)
        else:
            keys = _keys_in(reply)
        # Every colon right after a quote (the usual line: no space before a
        # colon, none in a string) counts exactly as the pattern would.  Else
        # a duplicate key (or an escaped quote and colon in a string) is
        # left to the strict reader.
        if ((raw.count(b":") == keys and raw.count(b'":') == keys)
                or len(_KEY_END.findall(raw)) == keys):
            return ReplyLine(raw, reply, None, fields), fields[0]
    if not strict:
        return ReplyLine(raw, None, None), NO_ID
    obj = decode_object(raw)
    return ReplyLine(raw, None, obj), obj.get("id", NO_ID)


def _keys_in(reply: Reply) -> int:
    """How many keys the objects of a decoded reply had (the fields set)."""
    count = ((reply.type is not UNSET) + (reply.draw is not UNSET) + (reply.buy is not UNSET)
             + (reply.discard is not UNSET) + 1)     # "id" is required
    if (reply.go_down is UNSET and reply.lay_off is UNSET and reply.swap is UNSET
            and reply.steps is UNSET):
        return count                           # a draw, a buy or a plain discard
    for items in (reply.go_down, reply.lay_off, reply.swap, reply.steps):
        if items is not UNSET:
            count += 1 if not items else 1 + sum(map(_nested_keys, items))
    return count


def _nested_keys(value: Any) -> int:
    if isinstance(value, (str, list)):
        return 0                               # a meld as cards: no keys
    count = 0
    for name in value.__struct_fields__:
        sub = getattr(value, name)
        if sub is not UNSET:
            count += 1
            if isinstance(sub, list):
                count += sum(map(_nested_keys, sub))
            elif isinstance(sub, Struct):
                count += _nested_keys(sub)
    return count


def reply_fields(reply: Reply) -> dict[str, Any]:
    """The fields the reply set, as plain values (the engine's decoder takes these)."""
    fields: dict[str, Any] = msgspec.to_builtins(reply)   # UNSET fields are left out
    return fields
