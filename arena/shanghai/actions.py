"""Actions a player can take, as frozen values, and their JSON form.

Three decisions exist: ``draw`` (stock or upcard), ``buy`` (yes or no, out of
turn) and ``play`` (the rest of a turn: go down, lay off, swap wilds, then a
discard, judged as one).  ``action_from_json`` turns a decoded JSON object
into an action or raises ``MalformedInput`` saying what is wrong.
"""

from __future__ import annotations

from collections.abc import Mapping

from .cards import Card, parse_card
from .errors import MalformedInput
from .record import record
from .ruleset import RUN, SET
from .vocab import DecisionKind, DrawSource, LayOffEnd, MeldKind

TYPE_CHECKING = False  # typing's flag without loading typing, which bots never need (tests/test_botstart.py)
if TYPE_CHECKING:
    from typing import Any

# The names the engine and its callers have always used.
DRAW = DecisionKind.DRAW
BUY = DecisionKind.BUY
PLAY = DecisionKind.PLAY
STOCK = DrawSource.STOCK
UPCARD = DrawSource.UPCARD
LOW = LayOffEnd.LOW
HIGH = LayOffEnd.HIGH


@record
class Draw:
    source: DrawSource

    def to_json(self) -> dict[str, Any]:
        return {"type": "draw", "source": self.source}


@record
class Buy:
    want: bool

    def to_json(self) -> dict[str, Any]:
        return {"type": "buy", "buy": self.want}


@record
class MeldCards:
    """A meld as the player lays it down; ``kind`` None lets the engine decide."""

    cards: tuple[Card, ...]
    kind: MeldKind | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"cards": [c.text for c in self.cards]}
        if self.kind is not None:
            out["kind"] = self.kind
        return out


@record
class GoDown:
    melds: tuple[MeldCards, ...]

    def to_json(self) -> dict[str, Any]:
        return {"go_down": [m.to_json() for m in self.melds]}


@record
class LayOff:
    meld: int
    card: Card
    end: LayOffEnd | None = None  # LOW / HIGH for runs; None: the engine infers

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"meld": self.meld, "card": self.card.text}
        if self.end is not None:
            out["end"] = self.end
        return {"lay_off": out}


@record
class Swap:
    meld: int
    card: Card  # the natural card put into the meld
    take: Card | None = None  # which wild to take from a set (default: the first)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"meld": self.meld, "card": self.card.text}
        if self.take is not None:
            out["take"] = self.take.text
        return {"swap": out}


Step = GoDown | LayOff | Swap


@record
class Play:
    """The rest of a turn: steps in order, then a discard (None when going out)."""

    steps: tuple[Step, ...]
    discard: Card | None

    def to_json(self) -> dict[str, Any]:
        return {
            "type": "play",
            "steps": [s.to_json() for s in self.steps],
            "discard": self.discard.text if self.discard is not None else None,
        }


Action = Draw | Buy | Play


def discard_only(c: Card) -> Play:
    return Play((), c)


# -- JSON ------------------------------------------------------------------


def _need(obj: Mapping[str, Any], key: str, where: str) -> Any:
    if key not in obj:
        raise MalformedInput(f"{where}: missing field '{key}'")
    return obj[key]


def _only(obj: Mapping[str, Any], allowed: tuple[str, ...], where: str) -> None:
    """Refuse fields nobody reads: a misspelt optional field (``"ende"``) must
    not be dropped silently."""
    unknown = sorted(repr(str(k)[:40]) for k in obj if k not in allowed)
    if unknown:
        raise MalformedInput(f"{where}: unknown field(s) {', '.join(unknown[:5])}; "
                             f"expected {', '.join(allowed)}")


def _meld_index(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise MalformedInput(f"{where}: 'meld' must be a meld id (a whole number >= 0), got {value!r}")
    return value


def _meld_cards(obj: Any, where: str) -> MeldCards:
    if isinstance(obj, Mapping):
        _only(obj, ("cards", "kind"), where)
        text = obj.get("kind")
        if text not in (None, SET, RUN):
            raise MalformedInput(f"{where}: 'kind' must be 'set' or 'run', got {text!r}")
        kind = None if text is None else SET if text == SET else RUN
        cards = _need(obj, "cards", where)
    else:
        kind, cards = None, obj
    if isinstance(cards, str):
        cards = cards.split()
    if not isinstance(cards, list) or not cards:
        raise MalformedInput(f"{where}: a meld is a non-empty list of cards")
    return MeldCards(tuple(parse_card(c) for c in cards), kind)


def _step_from_json(obj: Any, where: str) -> Step:
    if not isinstance(obj, Mapping) or len(obj) != 1:
        raise MalformedInput(f"{where}: a step is an object with one key: go_down, lay_off or swap")
    (key, body), = obj.items()
    if key not in ("go_down", "lay_off", "swap"):
        raise MalformedInput(f"{where}: unknown step {key!r}; expected go_down, lay_off or swap")
    if key == "go_down":
        if not isinstance(body, list) or not body:
            raise MalformedInput(f"{where}: 'go_down' must be a non-empty list of melds")
        return GoDown(tuple(_meld_cards(m, f"{where}.go_down[{i}]") for i, m in enumerate(body)))
    if not isinstance(body, Mapping):
        raise MalformedInput(f"{where}: '{key}' must be an object")
    if key == "lay_off":
        _only(body, ("meld", "card", "end"), where)
        end = body.get("end")
        if end not in (None, LOW, HIGH):
            raise MalformedInput(f"{where}: 'end' must be 'low' or 'high', got {end!r}")
        return LayOff(_meld_index(_need(body, "meld", where), where), parse_card(_need(body, "card", where)),
                      None if end is None else LOW if end == LOW else HIGH)
    if key == "swap":
        _only(body, ("meld", "card", "take"), where)
        take = body.get("take")
        return Swap(
            _meld_index(_need(body, "meld", where), where),
            parse_card(_need(body, "card", where)),
            parse_card(take) if take is not None else None,
        )
    raise MalformedInput(f"{where}: unknown step {key!r}; expected go_down, lay_off or swap")


def action_from_json(obj: Any) -> Action:
    """Decode an action; raises MalformedInput naming the faulty field.

    >>> action_from_json({"type": "draw", "source": "stock"})
    Draw(source='stock')
    >>> action_from_json({"type": "play", "discard": "7H"}).to_json()
    {'type': 'play', 'steps': [], 'discard': '7H'}
    >>> action_from_json({"type": "draw", "source": "pile"})
    Traceback (most recent call last):
    ...
    arena.shanghai.errors.MalformedInput: draw: 'source' must be 'stock' or 'upcard', got 'pile'
    """
    if not isinstance(obj, Mapping):
        raise MalformedInput(f"an action must be a JSON object, got {type(obj).__name__}")
    kind = _need(obj, "type", "action")
    if kind == DRAW:
        source = _need(obj, "source", "draw")
        if source not in (STOCK, UPCARD):
            raise MalformedInput(f"draw: 'source' must be 'stock' or 'upcard', got {source!r}")
        return Draw(STOCK if source == STOCK else UPCARD)
    if kind == BUY:
        want = _need(obj, "buy", "buy")
        if not isinstance(want, bool):
            raise MalformedInput(f"buy: 'buy' must be true or false, got {want!r}")
        return Buy(want)
    if kind == PLAY:
        steps: list[Step] = []
        if "steps" in obj:
            raw = obj["steps"]
            if not isinstance(raw, list):
                raise MalformedInput("play: 'steps' must be a list")
            steps = [_step_from_json(s, f"play.steps[{i}]") for i, s in enumerate(raw)]
        else:
            # The keyed form, applied in the only order that is ever needed:
            # swaps (to get wilds), then going down, then lay-offs.
            for i, s in enumerate(_list(obj, "swap")):
                steps.append(_step_from_json({"swap": s}, f"play.swap[{i}]"))
            go_down = obj.get("go_down")
            if go_down is not None and go_down != []:      # null or []: not going down
                steps.append(_step_from_json({"go_down": go_down}, "play"))
            for i, s in enumerate(_list(obj, "lay_off")):
                steps.append(_step_from_json({"lay_off": s}, f"play.lay_off[{i}]"))
        discard = obj.get("discard")
        return Play(tuple(steps), parse_card(discard) if discard is not None else None)
    raise MalformedInput(f"action: unknown type {kind!r}; expected draw, buy or play")


def _list(obj: Mapping[str, Any], key: str) -> list[Any]:
    value = obj.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise MalformedInput(f"play: '{key}' must be a list")
    return value
