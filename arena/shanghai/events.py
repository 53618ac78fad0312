"""Events: what happened, recorded in order, JSON-ready.

Each event is frozen.  ``data`` holds JSON-ready values (card texts, not Card
objects) so that writing a log costs nothing extra.  ``secret`` names the keys
that only the referee may see (a stock card drawn, a shuffled order); the
public form drops them, and only public forms ever reach a view.
"""

from __future__ import annotations

from .record import field, record

TYPE_CHECKING = False  # typing's flag without loading typing, which bots never need (tests/test_botstart.py)
if TYPE_CHECKING:
    from typing import Any

# Event kinds.
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
