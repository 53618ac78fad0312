"""What a seat sees: decisions, melds on the table, and the view.

Kept apart from the game state so that what a player may know is defined in
one place: a ``View`` holds its own hand, the public table and counts, and the
public forms of this hand's events, and nothing else.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from itertools import islice

from .cards import Card
from .events import Event
from .melds import Meld
from .record import record
from .ruleset import Contract, Ruleset
from .vocab import DecisionKind

TYPE_CHECKING = False  # typing's flag without loading typing, which bots never need (tests/test_botstart.py)
if TYPE_CHECKING:
    from typing import Any, overload


@record
class Decision:
    """Who must decide what. ``options`` lists the legal choices where they are few."""

    seat: int
    kind: DecisionKind
    options: tuple[Any, ...]


@record
class TableMeld:
    id: int
    owner: int
    meld: Meld

    def to_json(self) -> dict[str, Any]:
        m = self.meld
        return {
            "id": self.id, "owner": self.owner, "kind": m.kind,
            "cards": [c.text for c in m.cards], "stands_for": m.represents(),
        }


class History(Sequence[Event]):
    """The first ``n`` events of an append-only list, as an immutable sequence.

    A view's history is the hand's public events so far.  Copying them into a
    tuple for every view made each decision cost more as the hand went on;
    the game only ever appends to a hand's list (and starts a new list for the
    next hand), so a view can share the list and remember how far it reached.
    Compares equal to any sequence of the same events, a tuple included.
    """

    __slots__ = ("_events", "_n")

    def __init__(self, events: Sequence[Event] = (), n: int | None = None) -> None:
        self._events = events
        self._n = len(events) if n is None else n

    def __len__(self) -> int:
        return self._n

    if TYPE_CHECKING:  # the variants are for the type checker only
        @overload
        def __getitem__(self, i: int) -> Event: ...

        @overload
        def __getitem__(self, i: slice) -> tuple[Event, ...]: ...

    def __getitem__(self, i: int | slice) -> Event | tuple[Event, ...]:
        if isinstance(i, slice):
            return tuple(self._events[:self._n][i])
        if i < 0:
            i += self._n
        if not 0 <= i < self._n:
            raise IndexError("history index out of range")
        return self._events[i]

    def __iter__(self) -> Iterator[Event]:
        return islice(self._events, self._n)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (History, tuple, list)):
            return len(other) == self._n and all(a == b for a, b in zip(self, other))
        return NotImplemented

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __repr__(self) -> str:
        return f"History({list(self)!r})"


@record
class View:
    """Everything one seat may know, and nothing else."""

    seat: int
    players: int
    hand_no: int
    hands_total: int
    dealer: int
    contract: Contract
    hand: tuple[Card, ...]
    melds: tuple[TableMeld, ...]
    upcard: Card | None  # the card that may be taken now, if any
    pile_top: Card | None  # the visible top of the discard pile (may be dead)
    pile_size: int
    stock_size: int
    card_counts: tuple[int, ...]
    buys_left: tuple[int, ...]
    down: tuple[bool, ...]
    turn: int
    turns_taken: int
    hand_scores: tuple[tuple[int, ...], ...]
    totals: tuple[int, ...]
    history: Sequence[Event]  # a History (shared, not copied) or a tuple
    decision: Decision | None
    rules: Ruleset

    def to_json(self) -> dict[str, Any]:
        d = self.decision
        return {
            "seat": self.seat,
            "players": self.players,
            "hand": self.hand_no,
            "hands_total": self.hands_total,
            "dealer": self.dealer,
            "contract": self.contract.text,
            "cards": [c.text for c in self.hand],
            "melds": [m.to_json() for m in self.melds],
            "upcard": self.upcard.text if self.upcard else None,
            "pile_top": self.pile_top.text if self.pile_top else None,
            "pile_size": self.pile_size,
            "stock_size": self.stock_size,
            "card_counts": list(self.card_counts),
            "buys_left": list(self.buys_left),
            "down": list(self.down),
            "turn": self.turn,
            "turns_taken": self.turns_taken,
            "hand_scores": [list(s) for s in self.hand_scores],
            "totals": list(self.totals),
            "history": [e.to_json() for e in self.history],
            "decision": None if d is None else {"kind": d.kind, "options": _options_json(d)},
        }


def _options_json(d: Decision) -> list[Any]:
    return [o.text if isinstance(o, Card) else o for o in d.options]


def places_of(totals: Sequence[int]) -> list[int]:
    """Competition ranking, lowest total first; equal totals share a place.

    >>> places_of([30, 10, 30, 45])
    [2, 1, 2, 4]
    """
    return [1 + sum(1 for u in totals if u < t) for t in totals]
