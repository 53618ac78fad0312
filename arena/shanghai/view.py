"""What a seat sees: decisions, melds on the table, and the view.

Kept apart from the game state so that what a player may know is defined in
one place: a ``View`` holds its own hand, the public table and counts, and the
public forms of this hand's events, and nothing else.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from .cards import Card
from .events import Event
from .melds import Meld
from .ruleset import Contract, Ruleset


@dataclass(frozen=True, slots=True)
class Decision:
    """Who must decide what. ``options`` lists the legal choices where they are few."""

    seat: int
    kind: str  # DRAW, BUY or PLAY
    options: tuple[Any, ...]


@dataclass(frozen=True, slots=True)
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


@dataclass(frozen=True, slots=True)
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
    history: tuple[Event, ...]
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
    """Competition ranking, lowest total first; equal totals share a place."""
    return [1 + sum(1 for u in totals if u < t) for t in totals]
