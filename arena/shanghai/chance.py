"""Chance: where shuffled orders come from.

The game never touches a global random generator.  It asks a ``Chance`` for
each hand's shoe order and for each reshuffle, and records the answers in its
log, so a match replays exactly from its log alone.

Orders are lists of cards *top first*.  A hand's shoe is dealt one card at a
time starting with the dealer's left, ``deal_size`` rounds; the next card is
the upcard; the rest is the stock, top first.

A deal plan (the documented deal-file format, see docs/DEALS.md) fixes some
hands.  For each planned hand either give the whole shoe
``{"order": ["7H", ...]}`` or the parts you care about
``{"hands": [[...], [...], ...], "upcard": "KS", "stock": ["2C", ...]}``;
any card not placed is shuffled (seeded) and goes below the given stock.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol

from .cards import Card, cards_text, parse_cards
from .draws import shuffle
from .errors import MalformedInput


class Chance(Protocol):
    def shoe(self, hand: int, cards: list[Card], players: int, dealer: int, deal_size: int) -> list[Card]: ...

    def reshuffle(self, hand: int, cards: list[Card]) -> list[Card]: ...


def _take(pool: Counter[Card], cards: Iterable[Card], where: str) -> None:
    for c in cards:
        if pool[c] <= 0:
            raise MalformedInput(f"{where}: {c} appears more often than the shoe holds it")
        pool[c] -= 1


def _cards(value: Any, where: str) -> list[Card]:
    """``parse_cards`` of a deal-plan value, its error saying where in the plan."""
    try:
        return parse_cards(value)
    except MalformedInput as err:
        raise MalformedInput(f"{where}: {err}") from None


def order_from_parts(
    spec: Mapping[str, Any], cards: Sequence[Card], players: int, dealer: int, deal_size: int,
    rng: random.Random, where: str,
) -> list[Card]:
    """Build a full top-first shoe order from a deal-plan entry."""
    pool: Counter[Card] = Counter(cards)
    if "order" in spec:
        given = _cards(spec["order"], f"{where} order")
        if Counter(given) != pool:
            missing = pool - Counter(given)
            extra = Counter(given) - pool
            raise MalformedInput(
                f"{where}: 'order' must hold exactly the shoe's {len(cards)} cards"
                f" (missing: {cards_text(missing.elements()) or 'none'};"
                f" extra: {cards_text(extra.elements()) or 'none'})"
            )
        return given
    unknown = set(spec) - {"hands", "upcard", "stock"}
    if unknown:
        raise MalformedInput(f"{where}: unknown keys {sorted(unknown)}; expected order, or hands/upcard/stock")
    raw_hands = spec.get("hands", [])
    if not isinstance(raw_hands, list) or len(raw_hands) > players:
        raise MalformedInput(f"{where}: 'hands' must be a list of at most {players} hands (one per seat)")
    hands = [_cards(h, f"{where} seat {seat}") for seat, h in enumerate(raw_hands)]
    for seat, h in enumerate(hands):
        if len(h) > deal_size:
            raise MalformedInput(f"{where}: seat {seat} is given {len(h)} cards but {deal_size} are dealt")
        _take(pool, h, f"{where} seat {seat}")
    upcard = _cards([spec["upcard"]], f"{where} upcard") if spec.get("upcard") else []
    _take(pool, upcard, f"{where} upcard")
    stock = _cards(spec.get("stock", []), f"{where} stock")
    _take(pool, stock, f"{where} stock")
    rest = list(pool.elements())
    shuffle(rng, rest)
    # Fill each seat's hand up to the deal size from the shuffled rest.
    full_hands = [list(h) for h in hands] + [[] for _ in range(players - len(hands))]
    for h in full_hands:
        while len(h) < deal_size:
            h.append(rest.pop())
    if not upcard:
        upcard = [rest.pop()]
    order: list[Card] = []
    for k in range(deal_size):
        for i in range(players):
            order.append(full_hands[(dealer + 1 + i) % players][k])
    return order + upcard + stock + rest


class SeededChance:
    """Shuffles drawn from the match seed; hands in ``plan`` are fixed.

    Every hand's shoe and every reshuffle has a random stream of its own,
    seeded from (seed, hand) and (seed, hand, reshuffle number): what happened
    in earlier hands (a reshuffle there, say) never changes a later hand's
    cards, so every rotation of a duplicate deal gets the same cards in every
    hand.
    """

    def __init__(self, seed: int | str, plan: Mapping[str, Any] | None = None) -> None:
        self.seed = seed
        self._reshuffles: Counter[int] = Counter()
        entries = (plan or {}).get("hands", [])
        if not isinstance(entries, list):
            raise MalformedInput("deal plan: 'hands' must be a list with one entry per hand")
        for i, e in enumerate(entries):
            if e is not None and not isinstance(e, Mapping):
                raise MalformedInput(f"deal plan: hands[{i}] must be an object or null")
        self.entries: list[Mapping[str, Any] | None] = list(entries)

    def _stream(self, *parts: object) -> random.Random:
        # Seeding with a string hashes it with SHA-512: stable across
        # processes and Python versions (not hash-randomised).
        return random.Random("/".join(map(str, (self.seed, *parts))))

    def shoe(self, hand: int, cards: list[Card], players: int, dealer: int, deal_size: int) -> list[Card]:
        rng = self._stream("shoe", hand)
        spec = self.entries[hand - 1] if hand - 1 < len(self.entries) else None
        if spec is not None:
            return order_from_parts(spec, cards, players, dealer, deal_size, rng, f"deal plan hand {hand}")
        order = list(cards)
        shuffle(rng, order)
        return order

    def reshuffle(self, hand: int, cards: list[Card]) -> list[Card]:
        self._reshuffles[hand] += 1
        order = list(cards)
        shuffle(self._stream("reshuffle", hand, self._reshuffles[hand]), order)
        return order


class RecordedChance:
    """Plays back the orders a log recorded, so a replay needs no seed."""

    def __init__(self, shoes: Sequence[Sequence[str]], reshuffles: Sequence[Sequence[str]]) -> None:
        self.shoes = [parse_cards(s) for s in shoes]
        self.reshuffles = [parse_cards(s) for s in reshuffles]
        self._next_reshuffle = 0

    def shoe(self, hand: int, cards: list[Card], players: int, dealer: int, deal_size: int) -> list[Card]:
        return list(self.shoes[hand - 1])

    def reshuffle(self, hand: int, cards: list[Card]) -> list[Card]:
        order = self.reshuffles[self._next_reshuffle]
        self._next_reshuffle += 1
        return list(order)
