"""Cards and their text form.

A card is written as rank + suit: ``AS``, ``2C``, ``10H``, ``JD``, ``QS``,
``KC``; the joker is ``JK``.  On input ``T`` is accepted for 10 and case is
ignored.  Cards are values: two ``7H`` from different decks are equal, which
is all the rules ever need.  Every distinct card exists once (interned), so
comparisons by identity are also valid.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from .errors import MalformedInput
from .record import field, record

SUITS: tuple[str, ...] = ("C", "D", "H", "S")
RANK_TEXT: dict[int, str] = {
    1: "A", 2: "2", 3: "3", 4: "4", 5: "5", 6: "6", 7: "7", 8: "8", 9: "9",
    10: "10", 11: "J", 12: "Q", 13: "K",
}
_RANK_PARSE: dict[str, int] = {text: rank for rank, text in RANK_TEXT.items()}
_RANK_PARSE["T"] = 10
_RANK_PARSE["1"] = 1  # never printed; harmless alias for the ace

JOKER_RANK = 0


_INTERNED: dict[tuple[int, str], Card] = {}


_PENALTY: dict[int, int] = {JOKER_RANK: 25, 1: 15, 2: 20, 10: 10, 11: 10, 12: 10, 13: 10}


@record
class Card:
    """One playing card. ``rank`` is 1 (ace) .. 13 (king), 0 for the joker.

    Every card value exists once: ``Card(7, "H")`` returns the same object
    each time (also through copy and pickle), so equality and hashing can be
    by identity, which keeps dict, Counter and ``list.remove`` at C speed.
    Identity hashing also means a set of cards iterates in an order that
    changes from run to run: sort before iterating where order matters.

    ``text``, ``index`` and the penalty are computed once per card: events,
    requests and players ask for them on every decision.
    """

    rank: int
    suit: str  # "" for the joker
    text: str = field(init=False, repr=False, compare=False)
    index: int = field(init=False, repr=False, compare=False)  # dense 0..52, joker 52
    points: int = field(init=False, repr=False, compare=False)  # penalty when left in hand

    def __new__(cls, rank: int, suit: str) -> Card:
        found = _INTERNED.get((rank, suit))
        return found if found is not None else object.__new__(cls)

    def __post_init__(self) -> None:
        # Runs again (same values) each time Card(rank, suit) is called: harmless.
        joker = self.rank == JOKER_RANK
        text = "JK" if joker else RANK_TEXT.get(self.rank, str(self.rank)) + self.suit
        index = 52 if joker else (SUITS.index(self.suit) * 13 + self.rank - 1 if self.suit in SUITS else -1)
        object.__setattr__(self, "text", text)
        object.__setattr__(self, "index", index)
        object.__setattr__(self, "points", _PENALTY.get(self.rank, 5))

    __eq__ = object.__eq__
    __hash__ = object.__hash__

    def __reduce__(self) -> tuple[object, tuple[int, str]]:
        return (Card, (self.rank, self.suit))

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"Card({self.text})"

    def penalty(self) -> int:
        """Points this card costs when left in hand at the end of a hand."""
        return self.points


JOKER = Card(JOKER_RANK, "")
ALL_CARDS: tuple[Card, ...] = tuple(
    Card(rank, suit) for suit in SUITS for rank in range(1, 14)
) + (JOKER,)
_INTERNED.update({(c.rank, c.suit): c for c in ALL_CARDS})
_BY_TEXT: dict[str, Card] = {c.text: c for c in ALL_CARDS}
_BY_KEY: dict[tuple[int, str], Card] = {(c.rank, c.suit): c for c in ALL_CARDS}


def card(rank: int, suit: str) -> Card:
    """The interned card of ``rank`` (1..13) and ``suit``."""
    return _BY_KEY[(rank, suit)]


def parse_card(text: object) -> Card:
    """Parse ``7H``, ``10S``/``TS``, ``AD``, ``JK``; raise MalformedInput otherwise."""
    if not isinstance(text, str):
        raise MalformedInput(f"a card must be a string like '7H', got {text!r}")
    raw = text.strip().upper()
    found = _BY_TEXT.get(raw)
    if found is not None:
        return found
    if raw in ("JOKER", "*"):
        return JOKER
    if len(raw) >= 2:
        rank = _RANK_PARSE.get(raw[:-1])
        suit = raw[-1]
        if rank is not None and suit in SUITS:
            return _BY_KEY[(rank, suit)]
    raise MalformedInput(
        f"{text!r} is not a card: write rank then suit, e.g. 7H, 10S, AD, QC, or JK for a joker"
    )


def parse_cards(text: str | Iterable[object]) -> list[Card]:
    """Parse a space- or comma-separated string, or a list of card strings."""
    if isinstance(text, str):
        items: Iterable[object] = text.replace(",", " ").split()
    elif isinstance(text, (list, tuple)):
        items = text
    else:  # e.g. a number or null in a deal file, where a list of cards belongs
        shown = repr(text)
        raise MalformedInput(f"expected a list of cards or a string of cards, got "
                             f"{shown if len(shown) <= 60 else shown[:57] + '...'}")
    return [parse_card(t) for t in items]


def cards_text(cards: Iterable[Card]) -> str:
    return " ".join(c.text for c in cards)


_ORDER: dict[Card, int] = {c: i for i, c in enumerate(ALL_CARDS)}


# Hand order: by suit (C D H S) then rank, jokers last.  A dict's own look-up,
# not a Python function: every view and play decision sorts a hand with it.
sort_key: Callable[[Card], int] = _ORDER.__getitem__


def make_shoe(decks: int) -> list[Card]:
    """``decks`` full 54-card decks in a fixed (unshuffled) order."""
    return list(ALL_CARDS + (JOKER,)) * decks
