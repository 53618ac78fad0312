"""Events: what happened, recorded in order, one frozen record per kind.

Each kind of event is its own record class (``Dealt``, ``Drew``, ``Bought``,
...), with its fields typed; ``Event`` is their union, so ``match`` and
``isinstance`` tell them apart and a type checker knows each one's fields.
Field values are JSON-ready (card texts, not Card objects), so writing a log
costs nothing extra, and ``to_json`` writes the keys in the order the
protocol, stored records and replays have always had them.

Some fields are the referee's secret (``secret``: a stock card drawn, a
shuffled order, the seed).  ``public()`` is the form a player may see: those
fields are None and ``withheld`` is True, and its JSON leaves them out.  Only
public forms ever reach a view or a bot.

>>> e = Drew(hand=1, seat=2, source=DrawSource.STOCK, card="7H")
>>> e.to_json()
{'type': 'draw', 'hand': 1, 'seat': 2, 'source': 'stock', 'card': '7H'}
>>> e.public_json()
{'type': 'draw', 'hand': 1, 'seat': 2, 'source': 'stock'}
>>> event_from_json(e.public_json()) == e.public()
True
"""

from __future__ import annotations

from .record import fields, record, replace
from .vocab import DrawSource, EventKind, HandEndReason, LayOffEnd, WireEnum

TYPE_CHECKING = False  # typing's flag without loading typing, which bots never need (tests/test_botstart.py)
if TYPE_CHECKING:
    from collections.abc import Mapping
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

# Each class writes its JSON by hand, with the "type" as a plain literal: a
# generic loop over the fields cost more per event, and msgspec encodes an
# enum member through its value, slower than a str.  ``hand`` is the 1-based
# hand number (0 before the first deal).  Kinds that never have a seat keep
# ``seat = None`` as a class value, so every event has one.


@record
class MatchStarted:
    hand: int
    players: int
    rules: dict[str, Any]
    seed: int | None  # secret: it would reveal every shuffle
    withheld: bool = False

    kind = MATCH_START
    seat = None
    secret = ("seed",)

    def to_json(self) -> dict[str, Any]:
        return self._json(self.withheld)

    def public_json(self) -> dict[str, Any]:
        return self._json(True)

    def public(self) -> MatchStarted:
        return self if self.withheld else replace(self, seed=None, withheld=True)

    def _json(self, hide: bool) -> dict[str, Any]:
        out = {"type": "match_start", "hand": self.hand, "players": self.players, "rules": self.rules}
        if not hide:
            out["seed"] = self.seed
        return out


@record
class Dealt:
    hand: int
    dealer: int
    contract: str
    deal_size: int
    upcard: str
    shoe: list[str] | None  # secret: the shuffled shoe, in dealing order
    withheld: bool = False

    kind = DEAL
    seat = None
    secret = ("shoe",)

    def to_json(self) -> dict[str, Any]:
        return self._json(self.withheld)

    def public_json(self) -> dict[str, Any]:
        return self._json(True)

    def public(self) -> Dealt:
        return self if self.withheld else replace(self, shoe=None, withheld=True)

    def _json(self, hide: bool) -> dict[str, Any]:
        out = {"type": "deal", "hand": self.hand, "dealer": self.dealer, "contract": self.contract,
               "deal_size": self.deal_size, "upcard": self.upcard}
        if not hide:
            out["shoe"] = self.shoe
        return out


@record
class Drew:
    """A draw; the card is secret when it came from the stock."""

    hand: int
    seat: int
    source: DrawSource
    card: str | None
    withheld: bool = False

    kind = DRAW

    @property
    def secret(self) -> tuple[str, ...]:
        return ("card",) if self.source == "stock" else ()

    def to_json(self) -> dict[str, Any]:
        if self.withheld:
            return {"type": "draw", "hand": self.hand, "seat": self.seat, "source": self.source}
        return {"type": "draw", "hand": self.hand, "seat": self.seat, "source": self.source, "card": self.card}

    def public_json(self) -> dict[str, Any]:
        if self.source == "stock":
            return {"type": "draw", "hand": self.hand, "seat": self.seat, "source": self.source}
        return self.to_json()

    def public(self) -> Drew:
        if self.withheld or self.source != "stock":
            return self
        return Drew(self.hand, self.seat, self.source, None, True)


@record
class Declined:
    """The player to move took from the stock instead of the upcard."""

    hand: int
    seat: int
    card: str  # the upcard declined

    kind = DECLINE
    secret = ()

    def to_json(self) -> dict[str, Any]:
        return {"type": "decline", "hand": self.hand, "seat": self.seat, "card": self.card}

    public_json = to_json

    def public(self) -> Declined:
        return self


@record
class Bought:
    hand: int
    seat: int
    card: str
    penalty: int  # how many stock cards came with it
    penalty_cards: list[str] | None  # secret: which
    buys_left: int
    withheld: bool = False

    kind = BUY
    secret = ("penalty_cards",)

    def to_json(self) -> dict[str, Any]:
        return self._json(self.withheld)

    def public_json(self) -> dict[str, Any]:
        return self._json(True)

    def public(self) -> Bought:
        return self if self.withheld else replace(self, penalty_cards=None, withheld=True)

    def _json(self, hide: bool) -> dict[str, Any]:
        out = {"type": "buy", "hand": self.hand, "seat": self.seat, "card": self.card, "penalty": self.penalty}
        if not hide:
            out["penalty_cards"] = self.penalty_cards
        out["buys_left"] = self.buys_left
        return out


@record
class WentDown:
    hand: int
    seat: int
    melds: list[dict[str, Any]]  # each new table meld's JSON (TableMeld.to_json)

    kind = GO_DOWN
    secret = ()

    def to_json(self) -> dict[str, Any]:
        return {"type": "go_down", "hand": self.hand, "seat": self.seat, "melds": self.melds}

    public_json = to_json

    def public(self) -> WentDown:
        return self


@record
class LaidOff:
    hand: int
    seat: int
    meld: int
    card: str
    end: LayOffEnd | None  # on a run; None on a set
    result: list[str]  # the meld's cards after

    kind = LAY_OFF
    secret = ()

    def to_json(self) -> dict[str, Any]:
        return {"type": "lay_off", "hand": self.hand, "seat": self.seat, "meld": self.meld, "card": self.card,
                "end": self.end, "result": self.result}

    public_json = to_json

    def public(self) -> LaidOff:
        return self


@record
class Swapped:
    hand: int
    seat: int
    meld: int
    card: str  # the natural card put in
    took: str  # the wild card taken out

    kind = SWAP
    secret = ()

    def to_json(self) -> dict[str, Any]:
        return {"type": "swap", "hand": self.hand, "seat": self.seat, "meld": self.meld, "card": self.card,
                "took": self.took}

    public_json = to_json

    def public(self) -> Swapped:
        return self


@record
class Discarded:
    hand: int
    seat: int
    card: str

    kind = DISCARD
    secret = ()

    def to_json(self) -> dict[str, Any]:
        return {"type": "discard", "hand": self.hand, "seat": self.seat, "card": self.card}

    public_json = to_json

    def public(self) -> Discarded:
        return self


@record
class WentOut:
    hand: int
    seat: int

    kind = GO_OUT
    secret = ()

    def to_json(self) -> dict[str, Any]:
        return {"type": "go_out", "hand": self.hand, "seat": self.seat}

    public_json = to_json

    def public(self) -> WentOut:
        return self


@record
class Reshuffled:
    hand: int
    cards: int
    order: list[str] | None  # secret: the new stock, top first
    withheld: bool = False

    kind = RESHUFFLE
    seat = None
    secret = ("order",)

    def to_json(self) -> dict[str, Any]:
        return self._json(self.withheld)

    def public_json(self) -> dict[str, Any]:
        return self._json(True)

    def public(self) -> Reshuffled:
        return self if self.withheld else replace(self, order=None, withheld=True)

    def _json(self, hide: bool) -> dict[str, Any]:
        out = {"type": "reshuffle", "hand": self.hand, "cards": self.cards}
        if not hide:
            out["order"] = self.order
        return out


@record
class HandEnded:
    hand: int
    seat: int | None  # who went out; None if the stock ran out or the turns did
    reason: HandEndReason
    scores: list[int]
    totals: list[int]

    kind = HAND_END
    secret = ()

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": "hand_end", "hand": self.hand}
        if self.seat is not None:
            out["seat"] = self.seat
        out["reason"] = self.reason
        out["scores"] = self.scores
        out["totals"] = self.totals
        return out

    public_json = to_json

    def public(self) -> HandEnded:
        return self


@record
class MatchEnded:
    hand: int
    totals: list[int]
    places: list[int]

    kind = MATCH_END
    seat = None
    secret = ()

    def to_json(self) -> dict[str, Any]:
        return {"type": "match_end", "hand": self.hand, "totals": self.totals, "places": self.places}

    public_json = to_json

    def public(self) -> MatchEnded:
        return self


Event = (MatchStarted | Dealt | Drew | Declined | Bought | WentDown | LaidOff | Swapped | Discarded | WentOut
         | Reshuffled | HandEnded | MatchEnded)

# The record class of each kind, by its wire text.
EVENT_TYPES: dict[str, type[Event]] = {cls.kind.value: cls for cls in (
    MatchStarted, Dealt, Drew, Declined, Bought, WentDown, LaidOff, Swapped, Discarded, WentOut,
    Reshuffled, HandEnded, MatchEnded)}
# The fields whose texts are enum members, by class: the field's place among
# the arguments, its members by text, and whether it may be null.
_WIRE_FIELDS: dict[type, tuple[int, dict[str, WireEnum], bool]] = {
    cls: (i, {m.value: m for m in enum}, nullable)
    for cls, i, enum, nullable in ((Drew, 2, DrawSource, False), (LaidOff, 4, LayOffEnd, True),
                                   (HandEnded, 2, HandEndReason, False))}
# What a public form withholds, by class (a draw's card: only from the stock).
_SECRETS: dict[type, tuple[str, ...]] = {cls: cls.secret for cls in (MatchStarted, Dealt, Bought, Reshuffled)}
_DRAW_SECRET = ("card",)


def event_from_json(obj: Mapping[str, Any]) -> Event:
    """The event a JSON object (full or public form) describes; ValueError
    names what is wrong with one that describes none."""
    cls = EVENT_TYPES.get(obj.get("type"))  # type: ignore[arg-type]  # a miss is None, as for any key
    if cls is None:
        raise ValueError(f"unknown event type {obj.get('type')!r}")
    names = [f.name for f in fields(cls) if f.name != "withheld"]
    unknown = obj.keys() - {"type", *names}
    if unknown:
        raise ValueError(f"{cls.kind} event: unknown field(s) {', '.join(sorted(map(repr, unknown)))}")
    secret = _DRAW_SECRET if cls is Drew and obj.get("source") == "stock" else _SECRETS.get(cls, ())
    withheld = any(name not in obj for name in secret)
    args: list[Any] = []
    for name in names:
        if name in obj:
            args.append(obj[name])
        elif name in secret or name == "seat":
            args.append(None)
        else:
            raise ValueError(f"{cls.kind} event: missing field {name!r}")
    wire = _WIRE_FIELDS.get(cls)
    if wire is not None:
        i, members, nullable = wire
        if args[i] is not None or not nullable:
            args[i] = _member(members, args[i], f"{cls.kind} event: {names[i]!r}")
    if withheld:
        args.append(True)
    return cls(*args)


def _member(members: dict[str, WireEnum], value: Any, what: str) -> Any:
    """The member whose text ``value`` is; ValueError naming the texts if none."""
    member = members.get(value) if isinstance(value, str) else None
    if member is None:
        *most, last = map(repr, members)
        raise ValueError(f"{what} must be {', '.join(most)} or {last}, got {value!r}")
    return member
