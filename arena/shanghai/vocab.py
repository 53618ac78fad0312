"""The engine's vocabulary: decision kinds, draw sources, event kinds, meld
kinds, lay-off ends and why a hand ended.

Each is a ``str``-valued enum whose members *are* their wire texts: a member
equals and hashes as its text, and ``json`` and ``msgspec`` write it as that
text, so the protocol, stored records and replays read exactly as when these
were plain strings.  ``str``, ``format`` and ``repr`` give the text too
(``enum.StrEnum`` would give ``DecisionKind.DRAW`` for ``repr`` and is
Python 3.11 only): a reason or log line that names a kind reads as before.

>>> DecisionKind.DRAW == "draw" and f"{DrawSource.STOCK}" == "stock"
True
>>> EventKind("go_down") is EventKind.GO_DOWN
True
>>> repr(DrawSource.UPCARD)
"'upcard'"
>>> MeldKind("run") is MeldKind.RUN and {LayOffEnd.LOW: 1}["low"]
1
>>> HandEndReason.TURN_CAP + " reached"
'turn_cap reached'
"""

from __future__ import annotations

from enum import Enum


class WireEnum(str, Enum):
    """A str enum that reads as its value everywhere (str, format, repr)."""

    __str__ = str.__str__
    __format__ = str.__format__  # type: ignore[assignment]  # Enum's takes the spec by keyword too
    __repr__ = str.__repr__


class DecisionKind(WireEnum):
    """What a seat is asked: draw (stock or upcard), buy the upcard out of
    turn, or play the rest of its turn."""

    DRAW = "draw"
    BUY = "buy"
    PLAY = "play"


class DrawSource(WireEnum):
    STOCK = "stock"
    UPCARD = "upcard"


class EventKind(WireEnum):
    """The ``type`` of an event, in the order a hand meets them."""

    MATCH_START = "match_start"
    DEAL = "deal"
    DRAW = "draw"
    DECLINE = "decline"
    BUY = "buy"
    GO_DOWN = "go_down"
    LAY_OFF = "lay_off"
    SWAP = "swap"
    DISCARD = "discard"
    GO_OUT = "go_out"
    RESHUFFLE = "reshuffle"
    HAND_END = "hand_end"
    MATCH_END = "match_end"


class MeldKind(WireEnum):
    """A meld is a set (cards of one rank) or a run (one suit, in sequence)."""

    SET = "set"
    RUN = "run"


class LayOffEnd(WireEnum):
    """The end of a run a card is laid off at (a set has no ends)."""

    LOW = "low"
    HIGH = "high"


class HandEndReason(WireEnum):
    """Why a hand ended: a seat went out, the stock ran out (no reshuffle
    left), or the turn cap was reached."""

    OUT = "out"
    STOCK = "stock"
    TURN_CAP = "turn_cap"
