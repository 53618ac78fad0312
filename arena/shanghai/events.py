"""Events: what happened, recorded in order, JSON-ready.

Each event is frozen.  ``data`` holds JSON-ready values (card texts, not Card
objects) so that writing a log costs nothing extra.  ``secret`` names the keys
that only the referee may see (a stock card drawn, a shuffled order); the
public form drops them, and only public forms ever reach a view.
"""

from __future__ import annotations

from .record import field, record
from .vocab import EventKind

TYPE_CHECKING = False  # typing's flag without loading typing, which bots never need (tests/test_botstart.py)
if TYPE_CHECKING:
    from typing import Any

# The names the engine and its callers have always used.
MATCH_START = EventKind.MATCH_START
DEAL = EventKind.DEAL
DRAW = EventKind.DRAW
DECLINE = EventKind.DECLINE
BUY = EventKind.BUY
GO_DOWN = EventKind.GO_DOWN
LAY_OFF = EventKind.LAY_OFF
SWAP = EventKind.SWAP
DISCARD = EventKind.DISCARD
GO_OUT = EventKind.GO_OUT
RESHUFFLE = EventKind.RESHUFFLE
HAND_END = EventKind.HAND_END
MATCH_END = EventKind.MATCH_END


@record
class Event:
    kind: str
    hand: int  # 1-based hand number; 0 before the first deal
    seat: int | None
    data: dict[str, Any] = field(default_factory=dict)
    secret: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return self._json(self.data)

    def public(self) -> Event:
        if not self.secret:
            return self
        return Event(
            self.kind, self.hand, self.seat,
            {k: v for k, v in self.data.items() if k not in self.secret},
        )

    def public_json(self) -> dict[str, Any]:
        """``public().to_json()``, without making the public event: every
        notice to a bot is one, so it is made once per event and cheaply."""
        data = self.data
        if self.secret:
            data = {k: v for k, v in data.items() if k not in self.secret}
        return self._json(data)

    def _json(self, data: dict[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.kind, "hand": self.hand}
        if self.seat is not None:
            out["seat"] = self.seat
        out.update(data)
        return out

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> Event:
        data = {k: v for k, v in obj.items() if k not in ("type", "hand", "seat")}
        return cls(obj["type"], obj["hand"], obj.get("seat"), data, secret_keys(obj["type"], data))


# Which keys of each kind are secret (and of a draw from the stock, DRAW_SECRET).
SECRETS: dict[str, tuple[str, ...]] = {
    MATCH_START: ("seed",),  # the seed would reveal every shuffle
    DEAL: ("shoe",),
    BUY: ("penalty_cards",),
    RESHUFFLE: ("order",),
}


DRAW_SECRET = ("card",)


def secret_keys(kind: str, data: dict[str, Any]) -> tuple[str, ...]:
    if kind == DRAW and data.get("source") == "stock":
        return DRAW_SECRET
    return SECRETS.get(kind, ())
